#!/usr/bin/env bash
# The main job: the closed training loop, then the paper's tables.
#   1. a benchmark suite of the paper's shape (3 agents on 3x3..10x10, 4 on 4x4..10x10, 5 on
#      5x5..10x10; wait ratios .25/.5/.75), generated, solved and checked by CBS (`floe check`
#      prints a table);
#   2. `floe train --config configs/demo.json`, on 2-agent boards only (3x3..10x10), as in the
#      paper: the untrained policy's validation, a short supervised warm start (the "base
#      model"), then GRPO rounds: round 0 on a fixed configuration, round 1 designed by the
#      embedded environment engineer (SmolLM2-135M in process), which reads the round's
#      failures (`floe engineer --run out/demo/train` shows what it was given and answered);
#      the budget is cut so that the whole demo, build included, aims at about 15 minutes on an
#      idle 2-core machine;
#   3. `floe eval` of the trained checkpoint on the suite: valid / optimal % per agent count x
#      map size (3, 4 and 5 agents, none of which the policy trained on), and the failures by
#      kind; then the engineer's design and rationale.
# OUT (default out/demo), PER_CELL (instances per suite cell, default 10), TRAIN_CONFIG (the
# training configuration, default configs/demo.json; any file of changes to the defaults) and
# SEED (the training seed, default the configuration's) adjust it.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
bash scripts/setup.sh
export LIBTORCH="$PWD/third_party/libtorch"
# The same binary as the README's `cargo install --path cli --features train`.
cargo build --release --locked -p floe-cli --features train
FLOE=target/release/floe
OUT=${OUT:-out/demo}
rm -rf "$OUT"
echo "demo: built in $((SECONDS - started)) s; the binary is $FLOE"
"$FLOE" suite --out "$OUT/suite" --per-cell "${PER_CELL:-10}"
"$FLOE" check --suite "$OUT/suite"
# floe train and floe eval set OMP_WAIT_POLICY=PASSIVE and their thread counts themselves.
"$FLOE" train --out "$OUT/train" --config "${TRAIN_CONFIG:-configs/demo.json}" ${SEED:+--seed "$SEED"}
echo
echo "Evaluation of the trained policy on the suite ($OUT/suite):"
"$FLOE" eval --checkpoint "$OUT/train/checkpoint.safetensors" --suite "$OUT/suite" --json "$OUT/eval.json"
echo
# The engineer's design of round 1 (its configuration, clamped into the design limits) and its
# rationale, as `floe engineer --run` shows them.
"$FLOE" engineer --run "$OUT/train" | awk '/^## /{show = ($2 == "config.json" || $2 == "rationale.txt")} show' || true
echo "demo: done in $((SECONDS - started)) s"
