#!/usr/bin/env bash
# Every check: formatting, lints, and all tests (unit, property, integration, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
# setup.sh installed lavapipe, so the GPU golden tests must find an adapter here.
FLOE_REQUIRE_GPU=1 cargo test --workspace --release
# The criterion benches, once each on small batches (figures come from `cargo bench` and
# `floe bench`, never from tests).
FLOE_BENCH_SMALL=1 cargo bench -p floe-core --bench engine -- --test
