#!/usr/bin/env bash
# Training step times of two floe binaries side by side, on one configuration: the shape of
# configs/two-agents.json (the default model, 2-agent boards of 3x3..10x10), a warm start of
# 60 supervised steps (batches of 64), then one GRPO round of 128 prompts (8 steps of 16
# prompts x 8 answers, lr 2e-4), the same seed. Each binary runs with 1 and with 2 libtorch
# threads, alternating, REPS times (default 1); the table gives per binary and thread count
# the median warm-start step and the median GRPO step (sampling with verification and reward,
# and the update), read from each run's steps.jsonl.
#   usage: scripts/bench/train-steps.sh BASELINE_FLOE [FLOE]
# BASELINE_FLOE is a `floe` built with `--features train` from the commit to compare with; FLOE
# defaults to target/release/floe. Output folder: ${OUT:-out/bench-train}.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: scripts/bench/train-steps.sh BASELINE_FLOE [FLOE]}
new=${2:-target/release/floe}
OUT=${OUT:-out/bench-train}
mkdir -p "$OUT"
python3 - "$OUT" <<'PY'
import json, os, sys
r0 = {"sizes": [{"size": s, "data_ratio": 0.125, "hole_ratio": 0.2, "wait_ratio": 0.5} for s in range(3, 11)],
      "agents": [2], "replay_fraction": 0.0}
cfg = {"seed": 0, "warm_start": {"samples": 3840, "steps": 60, "data": r0}, "grpo": {"lr": 2e-4},
       "rounds": {"rounds": 1, "epochs": 1, "samples": 128, "round0": r0,
                  "curriculum": {"name": "fixed", "params": {"config": r0}}},
       "validation": {"sizes": [3, 10], "agents": [2], "per_cell": 4}}
for t in (1, 2):
    json.dump(dict(cfg, threads=t), open(os.path.join(sys.argv[1], f"config-t{t}.json"), "w"))
PY
for rep in $(seq "${REPS:-1}"); do
    for threads in 1 2; do
        for which in base new; do
            bin=$base
            [ "$which" = new ] && bin=$new
            dir="$OUT/$which-t$threads-r$rep"
            rm -rf "$dir"
            "$bin" train --config "$OUT/config-t$threads.json" --out "$dir" --quiet >/dev/null
            echo "train-steps: $which, $threads thread(s), rep $rep done" >&2
        done
    done
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for d in sorted(glob.glob(os.path.join(out, "*-t*-r*"))):
    which, t, _ = os.path.basename(d).split("-")
    steps = [json.loads(l) for l in open(os.path.join(d, "steps.jsonl"))]
    warm = [s for s in steps if s.get("phase") == "warm_start"]
    grpo = [s for s in steps if s.get("phase") != "warm_start"]
    # Warm-start step: the train_s increments (skip the first 5 steps).
    ws = [b["train_s"] - a["train_s"] for a, b in zip(warm[4:], warm[5:])]
    gs = [b["train_s"] - a["train_s"] for a, b in zip(grpo, grpo[1:])]
    r = rows.setdefault((t, which), {"warm": [], "grpo": [], "sample": [], "update": []})
    r["warm"] += ws
    r["grpo"] += gs
    r["sample"] += [s["sample_s"] for s in grpo[1:]]
    r["update"] += [s["update_s"] for s in grpo[1:]]
med = statistics.median
print("| threads | binary | warm-start step s | GRPO step s | sampling s | update s |")
print("|---|---|---|---|---|---|")
for (t, which), r in sorted(rows.items()):
    print(f"| {t[1:]} | {which} | {med(r['warm']):.3f} | {med(r['grpo']):.3f} | {med(r['sample']):.3f} | {med(r['update']):.3f} |")
for t in sorted({t for t, _ in rows}):
    b, n = rows.get((t, "base")), rows.get((t, "new"))
    if b and n:
        print(f"{t[1:]} thread(s): warm-start step {med(b['warm']) / med(n['warm']):.2f}x faster, "
              f"GRPO step {med(b['grpo']) / med(n['grpo']):.2f}x faster")
PY
