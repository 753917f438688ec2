#!/usr/bin/env bash
# The main job: the closed training loop on the default configuration, then the paper's tables.
#   1. a benchmark suite in the paper's layout (3, 4 and 5 agents; wait ratios .25/.5/.75), on
#      maps up to 6x6, generated, solved and checked by CBS (`floe check` prints a table);
#   2. `floe train`: the untrained policy's validation, the supervised warm start, 3 GRPO rounds
#      on configurations the difficulty-scaling curriculum redesigns (about 15 minutes on 2 cores);
#   3. `floe eval` of the trained checkpoint on the suite: valid / optimal % per agent count x
#      map size, and the failures by kind.
# OUT (default out/demo), PER_CELL (instances per suite cell, default 10) and TRAIN_CONFIG (a
# JSON file of changes to the default configuration) adjust it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export LIBTORCH="$PWD/third_party/libtorch"
# On a machine shared with other busy processes, OMP_WAIT_POLICY=PASSIVE keeps libtorch's OpenMP
# threads from spinning (see docs/training-results.md); on an idle machine the default is faster.
cargo build --release -p floe-cli --features train
FLOE=target/release/floe
OUT=${OUT:-out/demo}
rm -rf "$OUT"
"$FLOE" suite --out "$OUT/suite" --max-size 6 --per-cell "${PER_CELL:-10}"
"$FLOE" check --suite "$OUT/suite"
"$FLOE" train --out "$OUT/train" ${TRAIN_CONFIG:+--config "$TRAIN_CONFIG"}
echo
echo "Evaluation of the trained policy on the suite ($OUT/suite):"
"$FLOE" eval --checkpoint "$OUT/train/checkpoint.safetensors" --suite "$OUT/suite" --json "$OUT/eval.json"
