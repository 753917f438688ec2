"""Joins `floe bench` and POGEMA JSON lines on (size, density, agents) and prints the ratios."""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    floe, pogema = load(sys.argv[1]), load(sys.argv[2])
    base = {(r["size"], r["density"], r["agents"]): r for r in pogema}
    print("| size | density | agents | backend | floe agent-steps/s | POGEMA agent-steps/s | ratio |")
    print("|---|---|---|---|---|---|---|")
    worst = None
    for r in floe:
        p = base.get((r["size"], r["density"], r["agents"]))
        if p is None:
            continue
        ratio = r["agent_steps_per_sec"] / p["agent_steps_per_sec"]
        worst = ratio if worst is None else min(worst, ratio)
        print(f"| {r['size']}x{r['size']} | {r['density']} | {r['agents']} | {r['backend']} ({r['threads']} threads, "
              f"{r['envs']} envs) | {r['agent_steps_per_sec']:,.0f} | {p['agent_steps_per_sec']:,.0f} | {ratio:,.0f}x |")
    if worst is not None:
        print(f"\nsmallest ratio: {worst:,.0f}x")


if __name__ == "__main__":
    main()
