#!/usr/bin/env bash
# Installs what floe needs on a Debian machine that has Rust (rustup or Debian's cargo).
# Idempotent: each step checks first and does nothing when it is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    say "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A C toolchain for linking, for crates that build C code, and for the plugin tests (which
# compile the C example plugins, and the plugin header as C++).
if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    apt_install build-essential
fi

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

say "ok ($(cargo --version))"
