#!/usr/bin/env bash
# One short, prepared run of floe.rounds for a machine with one GPU (sized for an H200, under
# 8 minutes): SmolLM2-135M-Instruct, 3 rounds of GRPO with TRL, the trainee as its own engineer
# (`self`) against the same rounds on round 0's configuration (`fixed`). For each round it prints
# GRPO steps/s, generated tokens/s and the validation table (2 and 3 agents, 3x3-6x6, 25
# instances a cell); the settings are configs/rounds/smollm2-h200.json, the run folders
# ${OUT:-out/gpu-llm-rounds}/self and .../fixed.
# Needs the Python test environment of scripts/python.sh (PYTHON, default
# .venv/python-test/bin/python) with a CUDA torch, and the model folder (made here from the GGUF
# file if missing). Each arm is cut off after ARM_SECONDS (default 220) seconds: on one H200 a
# round took 80 to 110 s, so an arm finishes about two of its three rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/python-test/bin/python}
OUT=${OUT:-out/gpu-llm-rounds}
MODEL=third_party/models/SmolLM2-135M-Instruct
[ -d "$MODEL" ] || "$PY" scripts/hf-model.py
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.cuda.get_device_name(0))' >&2
mkdir -p "$OUT"
cp configs/rounds/smollm2-h200.json "$OUT/run.json"
for arm in self fixed; do
    rm -rf "${OUT:?}/$arm"
    # An arm cut off at ARM_SECONDS (status 124) keeps the rounds it finished; the next arm runs.
    status=0
    timeout "${ARM_SECONDS:-220}" "$PY" -m floe.rounds --model "$MODEL" --out "$OUT/$arm" \
        --config "$OUT/run.json" --engineer "$arm" 2>&1 | tee "$OUT/$arm.log" >&2 || status=$?
    if [ "$status" -ne 0 ] && [ "$status" -ne 124 ]; then
        exit "$status"
    fi
done
# The figures per round, from the run folders.
"$PY" - "$OUT" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
for arm in ("self", "fixed"):
    path = os.path.join(out, arm, "rounds.jsonl")
    if not os.path.exists(path):
        print(f"{arm}: no rounds finished")
        continue
    for line in map(json.loads, open(path)):
        if "round" not in line:
            print(f"## {arm}, {line['stage']}: valid {100 * line['valid_rate']:.1f}%, optimal {100 * line['optimal_rate']:.1f}%")
            continue
        r = line["round"]
        print(f"## {arm}, round {r} (configuration: {line['design']['source']})")
        print(f"GRPO: {line['grpo_steps']} steps in {line['round_train_s']:.1f} s = {line['steps_per_s']:.3f} steps/s, "
              f"{line['generated_tokens']} tokens generated = {line['tokens_per_s']:.0f} tokens/s; "
              f"validation in {line['validation_s']:.1f} s")
        print(open(os.path.join(out, arm, "validation", f"round-{r}.md")).read())
PYEOF
