#!/usr/bin/env bash
# The validation figures pinned for `floe train --config configs/two-agents.json` (warm start and
# three GRPO rounds, seed 0; docs/training-results.md, "Transfer"), checked digit for digit.
#
# They are the figures of libtorch's AVX2 kernels: ATen's vectorised operators and oneDNN's JIT
# kernels round differently with AVX-512, and the GRPO rounds sample other answers from there on
# (the warm start and round 0 agree either way). A CPU with AVX-512 runs the AVX2 kernels when
# told to (ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2), which this script does; on a CPU
# with AVX2 only they are what runs anyway. Takes about 70 s on 2 cores.
#
# FLOE_CLI names the `floe` binary (built with the `train` feature) [target/release/floe].
set -euo pipefail
cd "$(dirname "$0")/.."
floe=${FLOE_CLI:-${CARGO_TARGET_DIR:-$PWD/target}/release/floe}
out=$(mktemp -d "${TMPDIR:-/tmp}/floe-pinned.XXXXXX")
trap 'rm -rf "$out"' EXIT
ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 \
    "$floe" train --config configs/two-agents.json --out "$out/run" >"$out/log" 2>&1 || {
    cat "$out/log" >&2
    exit 1
}
python3 - "$out/log" <<'EOF'
import re
import sys

pinned = [
    ("warm start", "59.25", "46.75"),
    ("round 0", "69.75", "50.25"),
    ("round 1", "78.75", "62.75"),
    ("round 2", "77.00", "66.25"),
]
text = open(sys.argv[1], encoding="utf-8").read()
rows = re.findall(r"^\| (warm start|round \d+) \| ([\d.]+) \| ([\d.]+) \|", text, re.M)
for stage, valid, optimal in rows:
    print(f"pinned: {stage}: valid {valid} %, optimal {optimal} %")
if rows != pinned:
    sys.exit(f"pinned: floe train --config configs/two-agents.json gave {rows}, not the pinned {pinned}")
print("pinned: configs/two-agents.json's validation figures, digit for digit")
EOF
