#!/usr/bin/env bash
# Smoke run of every cargo-fuzz target in fuzz/: builds them once on the
# nightly toolchain (installing cargo-fuzz with `cargo install cargo-fuzz
# --locked` when it is missing), then fuzzes each for FUZZ_SECONDS seconds,
# starting from the committed seeds in fuzz/corpus/TARGET/. The seeds are
# never modified: new corpus entries go to a scratch directory.
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 60)
#   FUZZ_TARGETS    space-separated targets (default: every target of `cargo fuzz list`)
#   FUZZ_TOOLCHAIN  rustup toolchain (default nightly)
#   FUZZ_TIMEOUT    libFuzzer -timeout: seconds one input may run (default 30)
#   FUZZ_KEEP       directory to keep the grown corpora and logs in (default: a temp dir, removed)
#   FUZZ_DETECT_LEAKS  1 to turn on LeakSanitizer (default 0: the runtime's
#                   scoped worker threads finish their thread-local
#                   destructors after the join returns, which LSan reports
#                   as leaks of std's thread handles and names)
#
# A crash leaves its input in fuzz/artifacts/TARGET/; the script prints the
# reproduce command. Exit status: 0 when every target ran clean, 1 otherwise.
# The last line reads "fuzz-smoke: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
tc=${FUZZ_TOOLCHAIN:-nightly}
timeout=${FUZZ_TIMEOUT:-30}
leaks=${FUZZ_DETECT_LEAKS:-0}

if ! cargo "+$tc" --version >/dev/null 2>&1; then
    echo "fuzz-smoke: the $tc toolchain is not installed (rustup toolchain list)" >&2
    echo "fuzz-smoke: 0 passed, 1 failed"
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz"
    cargo install cargo-fuzz --locked || {
        echo "fuzz-smoke: cargo install cargo-fuzz failed" >&2
        echo "fuzz-smoke: 0 passed, 1 failed"
        exit 1
    }
fi

echo "fuzz-smoke: building targets ($(cargo "+$tc" --version))"
if ! cargo "+$tc" fuzz build; then
    echo "fuzz-smoke: build failed" >&2
    echo "fuzz-smoke: 0 passed, 1 failed"
    exit 1
fi

targets=${FUZZ_TARGETS:-$(cargo "+$tc" fuzz list)}
if [ -n "${FUZZ_KEEP:-}" ]; then
    work=$FUZZ_KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

passed=0
failed=0
failures=()
for t in $targets; do
    mkdir -p "$work/$t" "fuzz/corpus/$t"
    log="$work/$t.log"
    echo "fuzz-smoke: $t for ${secs}s"
    start=$(date +%s)
    # The first corpus directory receives new inputs; the seeds stay read-only.
    cargo "+$tc" fuzz run "$t" "$work/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=4096 \
        -detect_leaks="$leaks" -print_final_stats=1 >"$log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
    echo "fuzz-smoke: $t: exit $rc, ${runs:-?} runs, ${cov:-cov: ?}, $(( $(date +%s) - start ))s"
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$t")
        echo "---- last lines of the $t log:"
        tail -n 60 "$log"
        for a in $(grep -oE 'Test unit written to [^ ]+' "$log" | awk '{print $5}' | sort -u); do
            echo "---- reproduce: cargo +$tc fuzz run $t $a"
            if [ -f "$a" ] && [ "$(stat -c %s "$a")" -le 4096 ]; then
                echo "---- input (base64):"
                base64 -w 76 "$a"
            fi
        done
    fi
done

if [ "$failed" -gt 0 ]; then
    echo "fuzz-smoke: failing targets: ${failures[*]}" >&2
fi
echo "fuzz-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
