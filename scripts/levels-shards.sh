#!/usr/bin/env bash
# `floe levels` spread over the cores of a bigger machine, and put together into one table.
#
# The PPO of `floe levels` is a network of 105 K parameters over 256 environments: its updates are
# too small to gain from a GPU, and a run is bound by the CPU's cores. The runs are independent,
# so this script starts one process per contender (JOBS at a time, THREADS libtorch threads each),
# each in its own folder under OUT, then puts their run folders (`<contender>/seed-<s>/`, each
# with its outcome) together in OUT/all, where `floe levels` finds every run done and writes the
# table, runs.jsonl and the pictures. A shard that is
# stopped goes on from its finished runs when started again. BUDGET (default medium) and SEEDS
# (default 5) are `floe levels`' --budget and --seeds.
#
# Needs the `floe` binary with the `train` feature (FLOE, default target/release/floe), built after
# `bash scripts/setup.sh` by `cargo build --release -p floe-cli --features train`, and libtorch's
# libraries (LIBTORCH, default third_party/libtorch).
set -euo pipefail
cd "$(dirname "$0")/.."
FLOE=${FLOE:-target/release/floe}
BUDGET=${BUDGET:-medium}
OUT=${OUT:-out/levels-$BUDGET}
JOBS=${JOBS:-6}
THREADS=${THREADS:-2}
SEEDS=${SEEDS:-5}
LIBTORCH=${LIBTORCH:-$PWD/third_party/libtorch}
export LD_LIBRARY_PATH="$LIBTORCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_WAIT_POLICY=PASSIVE
[ -x "$FLOE" ] || { echo "levels-shards: no $FLOE (cargo build --release -p floe-cli --features train)" >&2; exit 2; }
contenders=(uniform fixed plr accel learnability frontier engineer target)
mkdir -p "$OUT"
printf '%s\n' "${contenders[@]}" | xargs -P "$JOBS" -I{} sh -c \
    '"$0" levels --budget "$4" --seeds "$1" --threads "$2" --contenders {} --out "$3/{}" > "$3/{}.log" 2>&1 \
     || { echo "levels-shards: {} failed, see $3/{}.log" >&2; exit 1; }' "$FLOE" "$SEEDS" "$THREADS" "$OUT" "$BUDGET"
mkdir -p "$OUT/all"
for c in "${contenders[@]}"; do
    rm -rf "${OUT:?}/all/$c"
    cp -r "$OUT/$c/$c" "$OUT/all/$c"
    cp "$OUT/$c/experiment.json" "$OUT/all/experiment.json"
done
"$FLOE" levels --budget "$BUDGET" --seeds "$SEEDS" --threads "$THREADS" --out "$OUT/all"
echo "levels-shards: $OUT/all/table.md, curves.png, placement.png" >&2
