#!/usr/bin/env bash
# One short, prepared run for a machine with a real GPU: the wgpu backend against the CPU
# backend, side by side in one run, printed as the table of BENCHMARKS.md ("GPU backend").
#   - stepping: 16x16 maps, density 0.2, 64 agents per environment, soft collisions with holes
#     as walls, observation radius 2 and 5 in each observation format (bytes, bits, none), ENVS
#     environments (default 1,024 / 8,192 / 32,768;
#     an adapter that cannot bind a batch's buffers refuses it with an error); the GPU records
#     STEPS_PER_SUBMIT (default 64) steps per submission, the CPU uses every core;
#   - verification: 1,000,000 3-agent 8x8 plans on both backends.
# Builds the CLI without the embedded engineer (no llama.cpp to build), or takes the `floe`
# binary FLOE_BIN names (one built elsewhere, for a machine without a Rust toolchain), then runs
# for about 3 minutes (SECONDS_PER, default 2, seconds per measurement, after a warm-up of a
# tenth of that).
# It needs a Vulkan (or Metal / DX12) adapter; with none, wgpu falls back to nothing and the
# GPU rows fail, so run `vulkaninfo --summary` first if in doubt. Output: the JSON lines in
# ${OUT:-out/bench-gpu}/bench.jsonl and the table on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/bench-gpu}
mkdir -p "$OUT"
if [ -n "${FLOE_BIN:-}" ]; then
    FLOE=$FLOE_BIN
else
    cargo build --release --locked -p floe-cli --no-default-features >&2
    FLOE="${CARGO_TARGET_DIR:-$PWD/target}/release/floe"
fi
secs=${SECONDS_PER:-2}
: >"$OUT/bench.jsonl"
for radius in 2 5; do
    for obs in bytes bits none; do
        "$FLOE" bench --backends cpu,gpu --sizes 16 --densities 0.2 --agents 64 --envs "${ENVS:-1024,8192,32768}" \
            --radius "$radius" --obs "$obs" --seconds "$secs" --plans 0 \
            --steps-per-submit "${STEPS_PER_SUBMIT:-64}" | tee -a "$OUT/bench.jsonl" >&2
    done
done
"$FLOE" bench --backends cpu,gpu --sizes 16 --agents 4 --envs 1 --seconds "$secs" --plans 1000000 \
    | grep '"verify"' | tee -a "$OUT/bench.jsonl" >&2
python3 - "$OUT/bench.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
steps = [r for r in rows if r.get("bench") == "step"]
print("| radius | obs | environments | CPU agent-steps/s | GPU agent-steps/s | GPU / CPU |")
print("|---|---|---|---|---|---|")
for radius in sorted({r.get("radius") for r in steps}):
    for obs in ("bytes", "bits", "none"):
        for envs in sorted({r["envs"] for r in steps}):
            by = {r["backend"]: r["agent_steps_per_sec"] for r in steps
                  if r.get("radius") == radius and r.get("obs") == obs and r["envs"] == envs}
            if "cpu" in by and "gpu" in by:
                print(f"| {radius} | {obs} | {envs:,} | {by['cpu']:,.0f} | {by['gpu']:,.0f} | {by['gpu'] / by['cpu']:.2f}x |")
ver = {r["backend"]: r["plans_per_sec"] for r in rows if r.get("bench") == "verify"}
if "cpu" in ver and "gpu" in ver:
    print()
    print("| verification, 1,000,000 3-agent 8x8 plans | CPU plans/s | GPU plans/s | GPU / CPU |")
    print("|---|---|---|---|")
    print(f"| | {ver['cpu']:,.0f} | {ver['gpu']:,.0f} | {ver['gpu'] / ver['cpu']:.2f}x |")
PY
