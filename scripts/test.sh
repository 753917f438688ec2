#!/usr/bin/env bash
# Every check: formatting, lints, and all tests (unit, property, integration, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 scripts/check-links.py   # every relative link of the README, ARCHITECTURE, BENCHMARKS and docs/ resolves
python3 scripts/check-modules.py # no two modules of a crate (nor two files of a folder) use each other
# floe-train and the CLI's `train` feature link the libtorch that setup.sh installed.
export LIBTORCH="$PWD/third_party/libtorch"
# Tests run side by side: libtorch's OpenMP threads must not spin while they wait.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
# Mesa's Vulkan driver wants a private runtime folder; CI and containers often have none.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ] || [ ! -w "$XDG_RUNTIME_DIR" ]; then
    XDG_RUNTIME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/floe-runtime.XXXXXX")
    export XDG_RUNTIME_DIR
    trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets --release --features floe-cli/train,floe-ffi/train -- -D warnings
# floe-core's documentation: every intra-doc link resolves and none points at a private item.
RUSTDOCFLAGS="-D warnings" cargo doc -p floe-core --no-deps --features gpu
# The CLI without libtorch: `floe train` and `floe eval` say how to get them. First, so that the
# build below leaves target/release/floe with every command.
cargo test --release -p floe-cli --test cli
# setup.sh installed lavapipe, so the GPU golden tests must find an adapter here.
FLOE_REQUIRE_GPU=1 cargo test --workspace --release --features floe-cli/train,floe-ffi/train
# configs/two-agents.json's pinned validation figures, digit for digit (libtorch's AVX2 kernels).
bash scripts/pinned.sh
# The C API as C and C++ programs meet it: installed, under valgrind and sanitizers, from CMake
# and pkg-config consumers.
FLOE_REQUIRE_GPU=1 bash scripts/c-api.sh
# The Python package: its wheel in a clean virtual environment, the pytest suite (Gymnasium's
# and PettingZoo's checkers, the rewards), and the package against the binary built above.
FLOE_REQUIRE_GPU=1 FLOE_CLI="${CARGO_TARGET_DIR:-$PWD/target}/release/floe" bash scripts/python.sh
# The criterion benches, once each on small batches (figures come from `cargo bench` and
# `floe bench`, never from tests).
FLOE_BENCH_SMALL=1 cargo bench -p floe-core --features testing --bench engine -- --test
FLOE_BENCH_SMALL=1 cargo bench -p floe-plugin-registry --bench step_reward -- --test
# A C++ policy trained with libtorch through the C API must beat random actions on held-out
# boards (about 2 minutes on 2 cores; prints its JSON line). A fixed number of updates and no
# time cap keep the check deterministic on a slow machine.
FLOE_POLICY_UPDATES=400 FLOE_POLICY_SECONDS=100000 bash scripts/policy-cpp.sh
