#!/usr/bin/env python3
"""A run's validation stage by stage, with standard errors, from its run folder's
`validation/<stage>.jsonl` (every answer with its verdict, written by floe-rounds):

    python3 scripts/stages.py out/cpu-learn [--plans 3]

prints a Markdown table of valid % and optimal % per stage (± the standard error over the
validation instances, sqrt(p(1 − p)/n)), per map size, and each stage's paired difference from
the stage before it and from the warm start (± the standard error of the per-instance
differences, the same instances answered twice); with `--plans N`, the first N answers of the
warm start and of the last stage, with their verdicts. With `--blind` (and floe importable: run
it with the Python the run used), how many of each stage's valid answers a planner that cannot
see the map would also get: the instances where each agent's straight path to its goal, its
rows first or its columns first, with no wait, make a valid plan. Standard library only
otherwise.
"""

import argparse
import json
import math
import os
import sys


def load(folder):
    """[(stage name, [answer lines])] in the order the run validated them (rounds.jsonl)."""
    stages = []
    with open(os.path.join(folder, "rounds.jsonl"), encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            if "answers" not in entry:
                sys.exit(f"{folder}: stage {entry['stage']!r} kept no answers (a run folder written before they were kept?)")
            name = os.path.basename(entry["answers"]).removesuffix(".jsonl")
            path = os.path.join(folder, entry["answers"])
            if not os.path.exists(path):
                sys.exit(f"{path}: missing (a run folder written before answers were kept?)")
            with open(path, encoding="utf-8") as g:
                stages.append((name, [json.loads(l) for l in g]))
    if not stages:
        sys.exit(f"{folder}: no stage validated yet")
    return stages


def rate(xs):
    """Mean (%) and its standard error (points) of 0/1 outcomes."""
    n = len(xs)
    p = sum(xs) / n
    return 100 * p, 100 * math.sqrt(p * (1 - p) / n)


def paired(a, b):
    """Mean (points) and standard error of b − a over the same instances."""
    d = [int(y) - int(x) for x, y in zip(a, b)]
    n = len(d)
    m = sum(d) / n
    var = sum((x - m) ** 2 for x in d) / (n - 1) if n > 1 else 0.0
    return 100 * m, 100 * math.sqrt(var / n)


def cell(xs):
    v, s = rate(xs)
    return f"{v:.1f} ± {s:.1f}"


def map_blind(folder):
    """Per validation instance of a floe.rounds run folder, whether a plan that ignores the map
    is valid: each agent walks its rows first or its columns first, straight to its goal, no
    wait (any of the combinations)."""
    import itertools

    import floe

    settings = json.load(open(os.path.join(folder, "config.json"), encoding="utf-8"))["settings"]
    instances = floe.validation_set(**settings["validation"])
    step = {(1, 0): "DOWN", (-1, 0): "UP", (0, 1): "RIGHT", (0, -1): "LEFT"}

    def walk(start, goal, rows_first):
        (r, c), (gr, gc) = start, goal
        vertical = [step[(1 if gr > r else -1, 0)]] * abs(gr - r)
        horizontal = [step[(0, 1 if gc > c else -1)]] * abs(gc - c)
        return (vertical + horizontal if rows_first else horizontal + vertical) or ["WAIT"]

    owners, plans = [], []
    for i, inst in enumerate(instances):
        agents = json.loads(inst.to_json())["agents"]
        for order in itertools.product((True, False), repeat=len(agents)):
            owners.append(i)
            plans.append("\n".join(f"Agent {a}: " + " ".join(walk(x["start"], x["goal"], o)) for a, (x, o) in enumerate(zip(agents, order))))
    # Every plan of every instance in one verification.
    valid = floe.verify_batch([instances[i] for i in owners], plans)["valid"]
    out = [False] * len(instances)
    for i, v in zip(owners, valid):
        out[i] = out[i] or bool(v)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run")
    p.add_argument("--plans", type=int, default=0)
    p.add_argument("--blind", action="store_true", help="compare with a planner that cannot see the map (needs floe)")
    a = p.parse_args()
    stages = load(a.run)
    n = {len(lines) for _, lines in stages}
    if len(n) != 1:
        sys.exit(f"stages answered different numbers of instances: {sorted(n)}")
    sizes = sorted({l["size"] for l in stages[0][1]})
    print(f"{n.pop()} validation instances; valid % / optimal %, ± standard error\n")
    print("| stage | valid | optimal | " + " | ".join(f"{s}×{s} valid" for s in sizes) + " |")
    print("|---|---|---|" + "---|" * len(sizes))
    for name, lines in stages:
        by = [cell([l["valid"] for l in lines if l["size"] == s]) for s in sizes]
        print(f"| {name} | {cell([l['valid'] for l in lines])} | {cell([l['optimal'] for l in lines])} | " + " | ".join(by) + " |")
    names = [s for s, _ in stages]
    outcome = {s: lines for s, lines in stages}
    print("\nPaired differences (points ± standard error over the instances; valid / optimal):\n")
    print("| stage | from the stage before | from the warm start |")
    print("|---|---|---|")
    for i, name in enumerate(names[1:], 1):
        row = []
        for ref in (names[i - 1], "warm-start"):
            if ref not in outcome or ref == name:
                row.append("")
                continue
            dv, sv = paired([l["valid"] for l in outcome[ref]], [l["valid"] for l in outcome[name]])
            do, so = paired([l["optimal"] for l in outcome[ref]], [l["optimal"] for l in outcome[name]])
            row.append(f"{dv:+.1f} ± {sv:.1f} / {do:+.1f} ± {so:.1f} (vs {ref})")
        print(f"| {name} | " + " | ".join(row) + " |")
    if a.blind:
        blind = map_blind(a.run)
        if len(blind) != len(stages[0][1]):
            sys.exit("the validation set of config.json is not the one the stages answered")
        solvable = sum(blind)
        print(f"\nA plan that ignores the map (each agent straight to its goal, rows or columns first) is valid on "
              f"{solvable} of {len(blind)} instances ({100 * solvable / len(blind):.1f}%; "
              + ", ".join(f"{s}×{s} {cell([b for b, l in zip(blind, stages[0][1]) if l['size'] == s])}" for s in sizes)
              + ").\n")
        print("| stage | valid answers | where a map-blind plan is valid too | elsewhere |")
        print("|---|---|---|---|")
        for name, lines in stages:
            on = sum(1 for b, l in zip(blind, lines) if l["valid"] and b)
            off = sum(1 for b, l in zip(blind, lines) if l["valid"] and not b)
            print(f"| {name} | {on + off} | {on} of {solvable} | {off} of {len(blind) - solvable} |")
    for name in [s for s in dict.fromkeys(("warm-start", names[-1])) if s in outcome and a.plans]:
        print(f"\nThe first {a.plans} answers after {name}:\n")
        for l in outcome[name][: a.plans]:
            verdict = "valid" + (", optimal" if l["optimal"] else "") if l["valid"] else l["failure"]
            soc = f"sum of costs {l['soc']}, " if l["valid"] else ""
            print(f"- {l['size']}×{l['size']}, {l['agents']} agents: {verdict} ({soc}optimum {l['optimal_soc']})")
            print("  ```text\n  " + str(l["answer"]).replace("\n", "\n  ") + "\n  ```")


if __name__ == "__main__":
    main()
