#!/usr/bin/env bash
# floe against POGEMA on the same settings, in one run: 16x16 and 32x32 grids, obstacle density
# 0.2 and 0.3, 4 and 64 agents, random actions, soft collisions (floe with holes as walls, as in
# POGEMA), observation radius 2, episodes of 64 steps. Prints a table with the ratio per setting.
#
# PER_CORE=1: the per-core comparison instead. 16x16, density 0.3, 64 agents, radius 5 and 2:
# floe on one thread (RAYON_NUM_THREADS=1, pinned to one core when taskset is there) in each
# observation format (bytes, bits, none) with batches of PER_CORE_ENVS (default "64 2048")
# environments, POGEMA in one process; both counted per CPU-second of their process; plus the
# one-thread memory bandwidth (`floe bench --memory`), all in this one run.
#
# Environment: SECONDS_PER (default 3) seconds per measurement; AGENTS_PER_BATCH (default 131072)
# agents in a floe batch, so 32,768 environments of 4 agents and 2,048 of 64; ENVS, if set, one
# batch size for every setting instead; BACKENDS (default cpu) floe backends; VENV (default
# .venv/pogema) the virtual environment.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-.venv/pogema}
SECONDS_PER=${SECONDS_PER:-3}
if ! [ -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" 2>/dev/null || {
        sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$VENV"
    }
fi
"$VENV/bin/python" -c "import pogema" 2>/dev/null || "$VENV/bin/pip" install -q pogema
cargo build --release -p floe-cli --no-default-features >&2
out=$(mktemp -d)
if [ "${PER_CORE:-0}" = 1 ]; then
    pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)
    one=(env RAYON_NUM_THREADS=1 "${pin[@]}" target/release/floe bench --seconds "$SECONDS_PER" --plans 0)
    memory=--memory   # measured once, with the first setting
    for r in 5 2; do
        for obs in bytes bits none; do
            for envs in ${PER_CORE_ENVS:-64 2048}; do
                "${one[@]}" $memory --sizes 16 --densities 0.3 --agents 64 --envs "$envs" --holes block \
                    --radius "$r" --obs "$obs" --episode-limit 64 >>"$out/floe.jsonl"
                memory=
            done
        done
        "${pin[@]}" "$VENV/bin/python" scripts/bench/pogema_bench.py --seconds "$SECONDS_PER" --sizes 16 \
            --densities 0.3 --agents 64 --radius "$r" --episode-limit 64 >>"$out/pogema.jsonl"
    done
    python3 scripts/bench/compare_per_core.py "$out/floe.jsonl" "$out/pogema.jsonl"
    cp "$out/floe.jsonl" "$out/pogema.jsonl" "${PER_CORE_OUT:-$out}/" 2>/dev/null || true
    exit 0
fi
for k in 4 64; do
    envs=${ENVS:-$(( ${AGENTS_PER_BATCH:-131072} / k ))}
    target/release/floe bench --seconds "$SECONDS_PER" --plans 0 --sizes 16,32 --densities 0.2,0.3 --agents "$k" \
        --envs "$envs" --holes block --radius 2 --episode-limit 64 --backends "${BACKENDS:-cpu}" >>"$out/floe.jsonl"
done
"$VENV/bin/python" scripts/bench/pogema_bench.py --seconds "$SECONDS_PER" --radius 2 --episode-limit 64 >"$out/pogema.jsonl"
python3 scripts/bench/compare.py "$out/floe.jsonl" "$out/pogema.jsonl"
