#!/usr/bin/env python3
"""Where each design of a `floe experiment` put its data: per contender, the mean data ratio of
each map size over the designed rounds (round 1 on) and the seeds, beside the trainee's
validation valid rate per size after round 0 (the rates the designs read first, mean over the
seeds of `fixed`), as Markdown.

    python3 scripts/design-data.py out/experiment

Reads the run folders' `state.json` (and `best-of-n`'s `choices.json`) as `floe experiment`
leaves them; prints nothing it did not find.
"""

import json
import sys
from pathlib import Path


def rounds_of(state: Path) -> list:
    return json.loads(state.read_text())["history"]["rounds"]


def ratios(config: dict) -> dict:
    return {s["size"]: s["data_ratio"] for s in config["sizes"]}


def designs(run: Path) -> list:
    """The configurations of the designed rounds (1 on) of one contender's run with one seed."""
    if (run / "choices.json").exists():
        return [c["config"] for c in json.loads((run / "choices.json").read_text())]
    if (run / "state.json").exists():
        return [r["config"] for r in rounds_of(run / "state.json") if r["round"] > 0]
    return []


def main(out: Path) -> int:
    x = json.loads((out / "experiment.json").read_text())
    names = [c["name"] for c in x["contenders"]]
    sizes = sorted({s["size"] for s in x["base"]["rounds"]["round0"]["sizes"]})
    rows = []
    for name in names:
        configs = [c for seed in sorted((out / name).glob("seed-*")) for c in designs(seed)]
        if not configs:
            continue
        mean = {z: sum(ratios(c).get(z, 0.0) for c in configs) / len(configs) for z in sizes}
        rows.append((name, len(configs), mean))
    valid = {z: [] for z in sizes}
    for seed in sorted((out / "fixed").glob("seed-*")):
        if (seed / "state.json").exists():
            for r in rounds_of(seed / "state.json"):
                if r["round"] == 0:
                    for res in r["results"]:
                        valid.setdefault(res["size"], []).append(res["valid_rate"])
    head = "| | designs | " + " | ".join(f"{z}x{z}" for z in sizes) + " |"
    print(head)
    print("|---" * (len(sizes) + 2) + "|")
    if all(valid[z] for z in sizes):
        cells = " | ".join(f"{100 * sum(valid[z]) / len(valid[z]):.1f}%" for z in sizes)
        print(f"| valid after round 0 (`fixed`) | {len(valid[sizes[0]])} seeds | {cells} |")
    for name, n, mean in rows:
        print(f"| {name} | {n} | " + " | ".join(f"{mean[z]:.3f}" for z in sizes) + " |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
