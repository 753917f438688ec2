#!/usr/bin/env bash
# Fuzzes floe's parsers: runs every target in fuzz/fuzz_targets (or the ones named) for SECONDS
# each (default 600), one after another, and prints each target's executions, executions per
# second and corpus size. Needs nightly Rust; installs cargo-fuzz if it is missing.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# New corpus entries go to fuzz/target/corpus/<target>/ (not committed); the committed seeds in
# fuzz/corpus/<target>/ and the inputs in fuzz/regressions/<target>/ are read, never written. A
# crash, timeout or out-of-memory input is saved under fuzz/artifacts/<target>/: fix the bug,
# then keep the input as fuzz/regressions/<target>/<what-it-was> so that `cargo test` replays it.
# FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-jobs=2).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-600}
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
if [ "$#" -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi
# Safe Rust throughout (the crates forbid unsafe code), so no sanitizer; overflow checks and
# debug assertions on, so that an arithmetic overflow is a crash.
build=(--sanitizer none --debug-assertions)
cargo +nightly fuzz build "${build[@]}"
summary=()
status=0
for t in "${targets[@]}"; do
    mkdir -p "target/corpus/$t" "artifacts/$t"
    dirs=("target/corpus/$t" "corpus/$t")
    [ -d "regressions/$t" ] && dirs+=("regressions/$t")
    log="target/fuzz-$t.log"
    echo "== $t: ${seconds} s"
    rc=0
    # shellcheck disable=SC2086
    cargo +nightly fuzz run "${build[@]}" "$t" "${dirs[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | sed 's/corp: //')
    line="$t: ${execs:-?} executions, ${rate:-?} exec/s, corpus ${corpus:-?} (inputs/bytes)"
    if [ "$rc" -ne 0 ]; then
        line="$line, FAILED (exit $rc): see $log and artifacts/$t/"
        status=1
    fi
    echo "$line"
    summary+=("$line")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
