#!/usr/bin/env bash
# Stepping through the C API against the Rust API, side by side in one run, on the settings of
# BENCHMARKS.md (soft collisions, holes as walls, radius 2, 64-step episodes, random actions
# from the same pre-drawn ring on both sides): ffi/examples/c/step_random.c linked with the
# installed libfloe.so, and its Rust twin ffi/examples/step_random.rs. Each setting runs
# C, Rust, C, Rust (ROUNDS pairs, SECONDS_PER each) and reports the best of each side and the
# ratio C / Rust.
#   SECONDS_PER=3 ROUNDS=2 bash scripts/bench/capi.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
SECONDS_PER=${SECONDS_PER:-3}
ROUNDS=${ROUNDS:-2}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/floe-capi-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

make -s -C ffi install PREFIX="$WORK/prefix" TARGET_DIR="$TARGET_DIR"
cargo build --release -q -p floe-ffi --example step_random
export PKG_CONFIG_PATH=$WORK/prefix/lib/pkgconfig
cc -std=c11 -O2 $(pkg-config --cflags floe) -o "$WORK/step_random" ffi/examples/c/step_random.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$WORK/prefix/lib"
RUST=$TARGET_DIR/release/examples/step_random

rate() { sed -n 's/.*"agent_steps_per_sec": \([0-9]*\).*/\1/p'; }
printf '| size | density | agents | envs | C API agent-steps/s | Rust API agent-steps/s | C / Rust |\n'
printf '|---|---|---|---|---|---|---|\n'
for setting in "16 0.2 4 32768" "16 0.3 4 32768" "32 0.2 4 32768" "32 0.3 4 32768" \
               "16 0.2 64 2048" "16 0.3 64 2048" "32 0.2 64 2048" "32 0.3 64 2048"; do
    set -- $setting
    best_c=0 best_r=0
    for _ in $(seq "$ROUNDS"); do
        c=$("$WORK/step_random" "$1" "$2" "$3" "$4" "$SECONDS_PER" cpu | rate)
        r=$("$RUST" "$1" "$2" "$3" "$4" "$SECONDS_PER" | rate)
        [ "$c" -gt "$best_c" ] && best_c=$c
        [ "$r" -gt "$best_r" ] && best_r=$r
    done
    ratio=$(awk -v c="$best_c" -v r="$best_r" 'BEGIN { printf "%.3f", c / r }')
    printf '| %sx%s | %s | %s | %s | %s | %s | %s |\n' "$1" "$1" "$2" "$3" "$4" "$best_c" "$best_r" "$ratio"
done
