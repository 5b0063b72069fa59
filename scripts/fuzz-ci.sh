#!/usr/bin/env bash
# Builds every fuzz target (fuzz/, a cargo-fuzz workspace of its own) and
# runs each briefly on its committed seeds, its regressions and the local
# corpus; fails on any crash, timeout or out-of-memory. Stable toolchain
# only. See fuzz/README.md.
#
#   scripts/fuzz-ci.sh                  every target, FUZZ_SECONDS each
#   scripts/fuzz-ci.sh json_parse diff  some targets
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 20)
#   FUZZ_SANITIZER  address (default: AddressSanitizer through
#                   RUSTC_BOOTSTRAP=1 on stable) or none
#
# One fuzzer at a time. Logs: fuzz/target/<target>.log. New corpus inputs
# go to fuzz/corpus/<target>/ (ignored by git); a crash leaves its input in
# fuzz/artifacts/<target>/ and this script prints it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

CARGO_FUZZ_VERSION=0.13.2
seconds="${FUZZ_SECONDS:-20}"
sanitizer="${FUZZ_SANITIZER:-address}"
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(json_parse verify_archive canon_roundtrip verify_mutated push_parts diff fast_path restore)
fi

if ! cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"; then
    echo "installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
cargo fuzz --version

case "$sanitizer" in
address)
    # Sanitizer flags are -Z flags; RUSTC_BOOTSTRAP=1 lets stable accept
    # them. A probe cached by an earlier attempt without it would say
    # "nightly only": drop the cache.
    export RUSTC_BOOTSTRAP=1
    rm -f fuzz/target/.rustc_info.json
    flags=()
    # LeakSanitizer off: the verifier's thread pools free memory after a
    # run ends, which makes libFuzzer's per-run leak check fire on every
    # input (30x slower) without finding anything.
    export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    ;;
none) flags=(--sanitizer none) ;;
*)
    echo "FUZZ_SANITIZER must be address or none, not $sanitizer" >&2
    exit 2
    ;;
esac
# (cargo-fuzz's default of one codegen unit builds faster on 2 cores than
# 16 units: 130 s against 175 s of CPU for all targets.)

start=$SECONDS
cargo fuzz build "${flags[@]}"
echo "built the fuzz targets (sanitizer $sanitizer) in $((SECONDS - start))s"

failed=()
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/regressions/$t"
    dict=()
    case "$t" in
    json_parse | verify_archive) dict=("-dict=$root/fuzz/dicts/json.dict") ;;
    esac
    echo
    echo "--- $t: ${seconds}s"
    log="fuzz/target/$t.log"
    start=$SECONDS
    # The first corpus directory receives new inputs; seeds and regressions
    # are only read (every file is run first, so a regression fails here).
    if cargo fuzz run "${flags[@]}" "$t" \
        "fuzz/corpus/$t" "fuzz/seeds/$t" "fuzz/regressions/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "${dict[@]}" >"$log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|Done)' "$log" || true
        echo "--- $t: ok ($((SECONDS - start))s)"
    else
        tail -n 60 "$log"
        for a in fuzz/artifacts/"$t"/*; do
            [ -f "$a" ] || continue
            echo "reproducer $a ($(wc -c <"$a") bytes):"
            od -An -tx1 -v "$a" | head -n 20
        done
        echo "--- $t: FAILED ($((SECONDS - start))s); reproduce with"
        echo "    cargo fuzz run ${flags[*]} $t fuzz/artifacts/$t/<file>"
        failed+=("$t")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz targets failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a finding"
