#!/usr/bin/env bash
# A C++ program that trains a per-step policy with libtorch's C++ API on floe's batched engine
# through the C API, and checks that it beats random actions on held-out boards
# (ffi/examples/cpp/policy/train_policy.cpp; its header explains the method and the setting):
#   1. `make -C ffi install` into a scratch prefix;
#   2. builds train_policy against that prefix (pkg-config floe) and libtorch;
#   3. trains for a small budget, evaluates, prints one JSON line, and fails (exit 1) when the
#      greedy policy's held-out success is not at least 0.15 above random's and 2x random's.
#
#   scripts/policy-cpp.sh [train_policy options...]   e.g. --updates 1000 --max-seconds 600 --features local+bfs
#
# libtorch: $ROOT/third_party/libtorch (scripts/setup.sh installs it), else $LIBTORCH.
# FLOE_POLICY_UPDATES / FLOE_POLICY_SECONDS set the training budget (default 400 updates or
# 100 s, whichever comes first), FLOE_POLICY_THREADS libtorch's threads (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/floe-policy.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
step() { echo "== policy-cpp: $*" >&2; }

if [ -f "$ROOT/third_party/libtorch/include/torch/csrc/api/include/torch/torch.h" ]; then
    LIBTORCH_DIR=$ROOT/third_party/libtorch
elif [ -n "${LIBTORCH:-}" ] && [ -f "$LIBTORCH/include/torch/csrc/api/include/torch/torch.h" ]; then
    LIBTORCH_DIR=$LIBTORCH
else
    echo "policy-cpp: no libtorch in third_party/libtorch (scripts/setup.sh) or \$LIBTORCH" >&2
    exit 2
fi

step "install libfloe into $PREFIX"
make -s -C ffi install PREFIX="$PREFIX" TARGET_DIR="$TARGET_DIR" >&2
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig

# The C++ ABI of the libtorch build: std::__cxx11 strings in its symbols mean the new ABI.
# (grep -c reads all of nm's output: grep -q would end the pipe early, and pipefail would fail it.)
if [ "$(nm -DC "$LIBTORCH_DIR/lib/libc10.so" | grep -c 'std::__cxx11::basic_string')" -gt 0 ]; then ABI=1; else ABI=0; fi
step "build train_policy against $LIBTORCH_DIR (_GLIBCXX_USE_CXX11_ABI=$ABI)"
# libtorch 2.x's headers need C++20 features; only the CPU library is linked (libtorch.so of the
# wheel pulls in CUDA's). -isystem keeps libtorch's own warnings out of ours.
c++ -std=c++20 -O2 -Wall -Wextra -Werror -D_GLIBCXX_USE_CXX11_ABI=$ABI \
    -isystem "$LIBTORCH_DIR/include" -isystem "$LIBTORCH_DIR/include/torch/csrc/api/include" \
    $(pkg-config --cflags floe) -o "$WORK/train_policy" ffi/examples/cpp/policy/train_policy.cpp \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib" \
    -L"$LIBTORCH_DIR/lib" -Wl,--no-as-needed -ltorch_cpu -lc10 -Wl,--as-needed -Wl,-rpath,"$LIBTORCH_DIR/lib"

step "train and evaluate"
export OMP_WAIT_POLICY=PASSIVE
THREADS=${FLOE_POLICY_THREADS:-1}
export OMP_NUM_THREADS=$THREADS
"$WORK/train_policy" --updates "${FLOE_POLICY_UPDATES:-400}" --max-seconds "${FLOE_POLICY_SECONDS:-100}" \
    --threads "$THREADS" "$@"
