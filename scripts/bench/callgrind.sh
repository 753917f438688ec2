#!/usr/bin/env bash
# Instructions per agent-step of the CPU step (valgrind's callgrind, one rayon thread) in the
# per-core POGEMA setting (core/examples/workload.rs `pogema`: 64 environments of 64 agents on
# 16x16, density 0.3, soft collisions with holes as walls), for each observation format at
# radius 2 and 5. Each count is (instructions of REPS x 100 steps - instructions of 0 steps)
# / (REPS x 100 x 4,096 agent-steps), so the setup is left out. Needs valgrind.
# Environment: REPS (default 2), RADII (default "2 5"), FORMATS (default "bytes bits none"),
# AGENTS (default 64: 4,096 / AGENTS environments of AGENTS agents instead).
# callgrind counts a `rep stos` string store once per element, so the bulk clears that glibc's
# memset does that way (buffers of 2 KiB and more: the soft step's cell words at radius 5)
# count several times what they cost in time.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-2}
AGENTS=${AGENTS:-64}
cargo build --release -q -p floe-core --features testing --example workload
bin=${CARGO_TARGET_DIR:-target}/release/examples/workload
count() {
    local f
    f=$(mktemp)
    RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" pogema "$@" "$AGENTS" >/dev/null 2>&1
    callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    rm -f "$f"
}
echo "| radius | obs | instructions per agent-step |"
echo "|---|---|---|"
for r in ${RADII:-2 5}; do
    for obs in ${FORMATS:-bytes bits none}; do
        base=$(count "$r" "$obs" 0)
        full=$(count "$r" "$obs" "$REPS")
        awk -v a="$full" -v b="$base" -v n="$REPS" -v r="$r" -v o="$obs" \
            -v k="$AGENTS" 'BEGIN { printf "| %s | %s | %.1f |\n", r, o, (a - b) / (n * 100 * int(4096 / k) * k) }'
    done
done
