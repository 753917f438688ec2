#!/usr/bin/env bash
# The main job: generate a small benchmark suite, solve and verify every instance, print a table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -p floe-cli
FLOE=target/release/floe
OUT=${OUT:-out/demo}
rm -rf "$OUT"
"$FLOE" suite --out "$OUT/suite" --per-cell "${PER_CELL:-10}"
"$FLOE" check --suite "$OUT/suite"
