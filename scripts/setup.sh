#!/usr/bin/env bash
# Installs what floe needs on a Debian machine that has Rust (rustup or Debian's cargo):
#   - Debian packages, with apt-get (through sudo when not root), only those missing:
#     build-essential (a C toolchain), mesa-vulkan-drivers and libvulkan1 (Mesa's software
#     Vulkan driver for the GPU backend's tests; installing it can upgrade the Mesa packages
#     already there), cmake, pkg-config and valgrind (the C API's checks), unzip and
#     python3-pip (to unpack libtorch);
#   - libtorch 2.13.0 for `floe train`: about 540 MB of PyPI wheels, 490 MB kept in
#     third_party/libtorch.
# Idempotent: each step checks first and does nothing when it is already done.
#   FLOE_SKIP_APT=1       never run apt-get: fail, naming them, if packages are missing
#   FLOE_SKIP_LIBTORCH=1  no libtorch (then the `train` feature cannot be built)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "${FLOE_SKIP_APT:-0}" = 1 ]; then
        say "missing Debian packages: ${missing[*]} (FLOE_SKIP_APT=1: install them yourself)"
        exit 1
    fi
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    say "installing Debian packages with apt-get: ${missing[*]} (this may upgrade Mesa; FLOE_SKIP_APT=1 skips apt)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A C toolchain for linking, for crates that build C code, and for the plugin tests (which
# compile the C example plugins, and the plugin header as C++).
if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    apt_install build-essential
fi

# The C API's checks (scripts/c-api.sh): a CMake and a pkg-config consumer of the installed
# library, and the C test suite under valgrind.
apt_install cmake pkg-config valgrind

# Mesa's software Vulkan driver (lavapipe) and the Vulkan loader: the GPU backend's tests run on
# it where no GPU exists; found headless, with no environment variable.
apt_install mesa-vulkan-drivers libvulkan1

if ! command -v cargo >/dev/null 2>&1; then
    say "cargo not found: install Rust first (https://rustup.rs or 'apt-get install cargo')"
    exit 1
fi

# rustfmt and clippy are part of the test command.
if command -v rustup >/dev/null 2>&1; then
    for c in rustfmt clippy; do
        rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
    done
fi

# libtorch for floe-train (tch 0.26 wants PyTorch 2.13.0), taken from PyPI's wheels because
# PyPI is reachable where PyTorch's own download site may not be. Kept: the C++ headers and the
# libraries the CPU build links and loads (the CPU library needs the CUDA runtime and CUPTI
# libraries even with no GPU). Cached in third_party/libtorch; `LIBTORCH=$PWD/third_party/libtorch`
# is all tch's build needs, and floe-train's build script puts that folder's lib/ on the rpath.
# Skip with FLOE_SKIP_LIBTORCH=1 (then the `train` feature cannot be built).
LIBTORCH_VERSION=2.13.0
LIBTORCH_DIR=third_party/libtorch
LIBTORCH_LIBS=(libc10.so libtorch.so libtorch_cpu.so libgomp.so.1 libcudart.so.13 libcupti.so.13)

libtorch_ready() {
    [ -f "$LIBTORCH_DIR/build-version" ] || return 1
    [ "$(cat "$LIBTORCH_DIR/build-version")" = "$LIBTORCH_VERSION" ] || return 1
    [ -f "$LIBTORCH_DIR/include/torch/csrc/api/include/torch/torch.h" ] || return 1
    local lib
    for lib in "${LIBTORCH_LIBS[@]}"; do
        [ -f "$LIBTORCH_DIR/lib/$lib" ] || return 1
    done
}

install_libtorch() {
    libtorch_ready && return 0
    command -v unzip >/dev/null 2>&1 || apt_install unzip
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    say "downloading libtorch $LIBTORCH_VERSION into $LIBTORCH_DIR (about 540 MB of PyPI wheels, 490 MB kept; FLOE_SKIP_LIBTORCH=1 skips it)"
    mkdir -p third_party
    local dl=third_party/libtorch.download
    local stage
    stage=$(mktemp -d third_party/libtorch.stage.XXXXXX)
    chmod 755 "$stage"
    # The wheels are kept in $dl, so an interrupted install does not download them again.
    if ! ls "$dl"/wheels/torch-"$LIBTORCH_VERSION"-*.whl >/dev/null 2>&1; then
        python3 -m pip download --quiet --no-deps --dest "$dl/wheels" \
            "torch==$LIBTORCH_VERSION" nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
    fi
    local torch_whl
    torch_whl=$(ls "$dl"/wheels/torch-"$LIBTORCH_VERSION"-*.whl | head -n 1)
    mkdir -p "$stage/x" "$stage/lib"
    unzip -q -o "$torch_whl" 'torch/include/*' 'torch/lib/libc10.so' 'torch/lib/libtorch.so' \
        'torch/lib/libtorch_cpu.so' 'torch/lib/libgomp.so.1' -d "$stage/x"
    unzip -q -o "$dl"/wheels/nvidia_cuda_runtime-*.whl 'nvidia/cu13/lib/libcudart.so.13' -d "$stage/x"
    unzip -q -o "$dl"/wheels/nvidia_cuda_cupti-*.whl 'nvidia/cu13/lib/libcupti.so.13' -d "$stage/x"
    mv "$stage/x/torch/include" "$stage/include"
    mv "$stage"/x/torch/lib/* "$stage"/x/nvidia/cu13/lib/* "$stage/lib/"
    rm -rf "$stage/x"
    echo "$LIBTORCH_VERSION" >"$stage/build-version"
    rm -rf "$LIBTORCH_DIR"
    mv "$stage" "$LIBTORCH_DIR"
    libtorch_ready || { say "libtorch install in $LIBTORCH_DIR is incomplete"; exit 1; }
    rm -rf "$dl"
}

if [ "${FLOE_SKIP_LIBTORCH:-0}" != 1 ]; then
    install_libtorch
fi

say "ok ($(cargo --version))"
