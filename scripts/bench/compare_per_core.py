"""Per-core comparison: joins `floe bench` lines (one thread) and POGEMA lines on (size, density,
agents, radius) and prints agent-steps per CPU-second side by side, per observation format and
batch size, with the ratio, the bytes a step moves per agent-step and the bandwidth that implies
against the one-thread memory bandwidth `floe bench --memory` measured in the same run."""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    floe, pogema = load(sys.argv[1]), load(sys.argv[2])
    memory = next((r for r in floe if r.get("bench") == "memory"), None)
    base = {(r["size"], r["density"], r["agents"], r["radius"]): r for r in pogema}
    print("| radius | obs | envs | floe agent-steps per CPU-s (1 thread) | POGEMA agent-steps per CPU-s "
          "| ratio | bytes per agent-step | implied GB/s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in floe:
        if r.get("bench") != "step":
            continue
        p = base.get((r["size"], r["density"], r["agents"], r["radius"]))
        if p is None:
            continue
        rate = r["agent_steps_per_cpu_sec"]
        ratio = rate / p["agent_steps_per_cpu_sec"]
        gbs = rate * r["bytes_per_agent_step"] / 1e9
        print(f"| {r['radius']} | {r['obs']} | {r['envs']:,} | {rate:,.0f} | {p['agent_steps_per_cpu_sec']:,.0f} "
              f"| {ratio:,.0f}x | {r['bytes_per_agent_step']:.1f} | {gbs:.2f} |")
    if memory is not None:
        print(f"\none-thread memory bandwidth in this run: write {memory['write_gb_per_sec']:.2f} GB/s, "
              f"copy {memory['copy_gb_per_sec']:.2f} GB/s (read + write)")
    r0 = next((r for r in floe if r.get("bench") == "step"), {})
    print(f"\nsetting: {r0.get('size')}x{r0.get('size')}, density {r0.get('density')}, {r0.get('agents')} agents, "
          f"soft collisions with holes as walls, episodes of 64 steps, random actions")


if __name__ == "__main__":
    main()
