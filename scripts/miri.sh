#!/usr/bin/env bash
# Miri over the channel and run-queue code: crates/chan/tests/chan_basic.rs (channels and
# select through real threads), the runtime's unit tests (the task state
# machine) and a tiny crates/rt/tests/stress_channels.rs run (the scheduler's queues,
# stealing and parking with channels on top). Weft's own `unsafe` is
# small (the runtime's task body, owned by the worker that set it RUNNING,
# and the interpreter's scalar frame copy); Miri checks it and the `unsafe`
# of the crates under it (crossbeam-deque, parking_lot, std) as we use them,
# and reports data races. See
# docs/testing.md.
#
# Environment:
#   MIRI_TOOLCHAIN  rustup toolchain (default nightly)
#   MIRI_TESTS      space-separated integration tests (default "chan_basic stress_channels")
#   MIRIFLAGS       passed through (default: -Zmiri-disable-isolation, for
#                   the clock and the environment variables the tests read,
#                   and -Zmiri-tree-borrows: crossbeam-epoch, under the
#                   run queue's crossbeam-deque, breaks Stacked Borrows'
#                   rules in its intrusive list but not Tree Borrows'; the
#                   crossbeam project runs Miri the same way; and
#                   -Zmiri-ignore-leaks: crossbeam-epoch's global collector
#                   keeps each thread's registration and its last garbage
#                   bags until process exit, by design)
#
# Exit status: 0 when every run passed, 1 otherwise; the last line reads
# "miri: N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/.."
tc=${MIRI_TOOLCHAIN:-nightly}
tests=${MIRI_TESTS:-chan_basic stress_channels}
export MIRIFLAGS=${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-tree-borrows -Zmiri-ignore-leaks}

if ! cargo "+$tc" miri --version >/dev/null 2>&1; then
    echo "miri: adding the miri and rust-src components to $tc (best effort)"
    rustup component add --toolchain "$tc" miri rust-src || true
fi
if ! cargo "+$tc" miri --version >/dev/null 2>&1; then
    echo "miri: miri is not available for the $tc toolchain" >&2
    echo "miri: 0 passed, 1 failed"
    exit 1
fi
cargo "+$tc" miri setup || {
    echo "miri: cargo miri setup failed" >&2
    echo "miri: 0 passed, 1 failed"
    exit 1
}

passed=0
failed=0
run() {
    echo "miri: $*"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "miri: FAILED: $*" >&2
    fi
}

# Small sizes: Miri runs code thousands of times slower than a debug build.
export WEFT_STRESS_TASKS=${WEFT_STRESS_TASKS:-8}
export WEFT_STRESS_MESSAGES=${WEFT_STRESS_MESSAGES:-200}
export WEFT_STRESS_TIMEOUT_SECS=${WEFT_STRESS_TIMEOUT_SECS:-3600}

run cargo "+$tc" miri test -p weft-rt --lib
for t in $tests; do
    case $t in
        chan_*) pkg=weft-chan ;;
        *) pkg=weft-rt ;;
    esac
    run cargo "+$tc" miri test -p "$pkg" --test "$t"
done

echo "miri: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
