#!/usr/bin/env bash
# floe from Python against floe in Rust and POGEMA, in one run (python/bench/bench.py):
# floe.VectorEnv's agent-steps per second against `floe bench` and POGEMA at 64 agents x 1,024
# environments, and floe.trl_reward on 10,000 completions against the Rust batched verifier
# (the C API's floe_verify_answers and `floe bench`'s). Then floe.ray with 1 and 2 workers
# against a single process (python/bench/ray_workers.py).
#
# Environment: SECONDS_PER (default 3) seconds per measurement; REPEAT (default 3) runs of each,
# the best kept. Uses the test environment of scripts/python.sh (.venv/python-test; run that
# first) and a POGEMA environment of its own (.venv/pogema, as scripts/bench/pogema.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
test_env=.venv/python-test
[ -x "$test_env/bin/python" ] || { echo "run scripts/python.sh first (it makes $test_env)" >&2; exit 1; }
VENV=${VENV:-.venv/pogema}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import pogema" 2>/dev/null || "$VENV/bin/pip" install -q pogema==1.4.0
target="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release -p floe-cli -p floe-ffi >&2
"$test_env/bin/python" python/bench/bench.py --floe "$target/release/floe" --libfloe "$target/release/libfloe.so" \
    --pogema-python "$VENV/bin/python" --seconds "${SECONDS_PER:-3}" --repeat "${REPEAT:-3}"
"$test_env/bin/python" python/bench/ray_workers.py --workers 1,2
