#!/usr/bin/env bash
# The Python package (python/): builds the abi3 wheel with maturin, installs it into a clean
# virtual environment under .venv/, installs the pinned test dependencies from PyPI
# (python/requirements-test.txt, with Ray; then python/requirements-trl.txt without their
# dependencies: TRL and a CPU-usable torch, 2.2 GB of wheels, gguf and xgrammar), makes
# SmolLM2-135M-Instruct's Hugging Face folder from its GGUF file (scripts/hf-model.py) and runs
# the pytest suite (python/tests). FLOE_SKIP_TRL=1 leaves TRL and torch out (the TRL example's
# and floe.rounds' tests then skip). With FLOE_CLI set to a `floe` binary (scripts/test.sh passes
# the one it built), the CLI-parity tests run too; with FLOE_REQUIRE_GPU=1 a missing GPU adapter
# fails the GPU-against-CPU test instead of skipping it. python/tests/test_verl.py runs a second
# time in .venv/python-verl, where verl 0.9.1 is installed (python/requirements-verl.txt: verl
# pins transformers below 5.11, TRL's environment 5.23); that environment is kept between runs
# while the requirement files are unchanged (only floe's wheel is installed again), and
# FLOE_SKIP_TRL=1 leaves it out with TRL.
set -euo pipefail
cd "$(dirname "$0")/.."
build=.venv/python-build
test_env=.venv/python-test
wheels="${CARGO_TARGET_DIR:-$PWD/target}/python-wheels"
if [ ! -x "$build/bin/maturin" ]; then
    python3 -m venv "$build"
    "$build/bin/pip" install -q -r python/requirements-build.txt
fi
rm -rf "$wheels"
"$build/bin/maturin" build --release --quiet -m python/Cargo.toml --out "$wheels"
rm -rf "$test_env"
python3 -m venv "$test_env"
"$test_env/bin/pip" install -q -r python/requirements-test.txt
if [ "${FLOE_SKIP_TRL:-0}" != 1 ]; then
    "$test_env/bin/pip" install -q --no-deps -r python/requirements-trl.txt
fi
"$test_env/bin/pip" install -q --no-deps "$wheels"/floe-*.whl
# SmolLM2-135M-Instruct as a Hugging Face folder (safetensors) for floe.rounds, made once from
# the GGUF file setup.sh downloads (skipped when that file is absent; idempotent).
if [ "${FLOE_SKIP_TRL:-0}" != 1 ] && [ -s third_party/models/SmolLM2-135M-Instruct.Q4_1.gguf ]; then
    "$test_env/bin/python" scripts/hf-model.py
fi
# verl's environment: built again only when its requirement files change.
verl_env=.venv/python-verl
if [ "${FLOE_SKIP_TRL:-0}" != 1 ]; then
    stamp=$(cat python/requirements-test.txt python/requirements-verl.txt | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$verl_env/.requirements" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$verl_env"
        python3 -m venv "$verl_env"
        "$verl_env/bin/pip" install -q -r python/requirements-test.txt
        "$verl_env/bin/pip" install -q --no-deps -r python/requirements-verl.txt
        echo "$stamp" >"$verl_env/.requirements"
    fi
    "$verl_env/bin/pip" install -q --no-deps --force-reinstall "$wheels"/floe-*.whl
fi
# From outside the source tree, so that `import floe` is the installed wheel.
cd python/tests
"../../$test_env/bin/python" -m pytest -q -p no:cacheprovider .
if [ "${FLOE_SKIP_TRL:-0}" != 1 ]; then
    "../../$verl_env/bin/python" -m pytest -q -p no:cacheprovider test_verl.py
fi
