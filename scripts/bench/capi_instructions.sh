#!/usr/bin/env bash
# The C API's cost per step, in instructions: callgrind counts every instruction of the C
# program (libfloe.so) and of its Rust twin, each run with 0 and with STEPS steps on one thread;
# the difference is what the steps cost, free of the timing noise of a shared machine.
#   STEPS=20 bash scripts/bench/capi_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
STEPS=${STEPS:-20}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/floe-capi-instr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
make -s -C ffi install PREFIX="$WORK/prefix" TARGET_DIR="$TARGET_DIR"
cargo build --release -q -p floe-ffi --example step_random
export PKG_CONFIG_PATH=$WORK/prefix/lib/pkgconfig RAYON_NUM_THREADS=1
cc -std=c11 -O2 $(pkg-config --cflags floe) -o "$WORK/step_random" ffi/examples/c/step_random.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$WORK/prefix/lib"
count() { # program, steps, setting...
    local prog=$1 steps=$2
    shift 2
    FLOE_STEPS=$steps valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$prog" "$@" >/dev/null 2>"$WORK/cg.err"
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/cg.err"
}
printf '| size | density | agents | envs | C API instructions per step | Rust API instructions per step | C / Rust |\n|---|---|---|---|---|---|---|\n'
for setting in "16 0.2 4 512" "16 0.2 64 32" "32 0.3 64 32"; do
    set -- $setting
    c=$(( ($(count "$WORK/step_random" "$STEPS" "$1" "$2" "$3" "$4" 0 cpu) - $(count "$WORK/step_random" 0 "$1" "$2" "$3" "$4" 0 cpu)) / STEPS ))
    r=$(( ($(count "$TARGET_DIR/release/examples/step_random" "$STEPS" "$1" "$2" "$3" "$4" 0) - $(count "$TARGET_DIR/release/examples/step_random" 0 "$1" "$2" "$3" "$4" 0)) / STEPS ))
    printf '| %sx%s | %s | %s | %s | %s | %s | %s |\n' "$1" "$1" "$2" "$3" "$4" "$c" "$r" \
        "$(awk -v c="$c" -v r="$r" 'BEGIN { printf "%.4f", c / r }')"
done
