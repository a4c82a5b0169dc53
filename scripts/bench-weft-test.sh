#!/usr/bin/env bash
# How many schedules `weft test` needs to find each GoBench bug ported to
# Weft (crates/weft/tests/gobench/*.weft), per strategy, over 20 seeds; and
# how often plain reruns of the original Go kernel hit the bug.
# Prints the Markdown table of docs/testing-programs.md, "Finding real
# bugs".
#
#   scripts/bench-weft-test.sh [GOBENCH_DIR]
#
# GOBENCH_DIR: a checkout of https://github.com/timmyyuan/gobench (the Go
# column needs it and `go` with the race detector; without them the column
# reads "n/a"). Environment: SEEDS (20), SCHEDULES (1000, the budget per
# seed), GO_RUNS (100, reruns of each Go kernel).
set -euo pipefail
cd "$(dirname "$0")/.."

GOBENCH=${1:-${GOBENCH:-}}
SEEDS=${SEEDS:-20}
SCHEDULES=${SCHEDULES:-1000}
GO_RUNS=${GO_RUNS:-100}
STRATEGIES=(random pct1 pct2 pct3 select)

cargo build --release -q -p weft
WEFT=target/release/weft
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The schedule (from 1) at which `weft test` reports the failure, or "-".
first_failure() {
    local out
    out=$("$WEFT" test "$@" 2>/dev/null || true)
    sed -n 's/^--- FAIL: [^ ]* (\(schedule\|interleaving\) \([0-9]*\).*/\2/p' <<<"$out" | head -1
}

# "found/seeds, median (max)" of the schedules that found the bug.
summary() {
    local found=$# n
    if [ "$found" -eq 0 ]; then
        echo "0/$SEEDS"
        return
    fi
    n=$(printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { m = a[int((NR + 1) / 2)]; printf "%d (max %d)", m, a[NR] }')
    echo "$found/$SEEDS: $n"
}

# Hits of the Go kernel in GO_RUNS reruns (built with -race), or "n/a".
go_hits() {
    local project=$1 id=$2 kind=$3
    [ -n "$GOBENCH" ] && command -v go >/dev/null || { echo "n/a"; return; }
    local dir="$GOBENCH/gobench/goker/$kind/$project/$id"
    local src
    src=$(ls "$dir"/*_test.go 2>/dev/null | head -1)
    [ -n "$src" ] || { echo "n/a"; return; }
    local d="$work/$project$id"
    mkdir -p "$d"
    cp "$src" "$d/"
    local pkg
    pkg=$(sed -n 's/^package \([A-Za-z0-9_]*\).*/\1/p' "$src" | head -1)
    # A leak check after the tests, as GoBench's goleak-style harness: a
    # goroutine still there 100 ms after the test returned is a leak.
    cat >"$d/leakcheck_test.go" <<EOF
package $pkg

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code != 0 {
		os.Exit(code)
	}
	for i := 0; i < 100 && runtime.NumGoroutine() > base; i++ {
		time.Sleep(time.Millisecond)
	}
	if runtime.NumGoroutine() > base {
		println("goroutine leak")
		os.Exit(3)
	}
	os.Exit(0)
}
EOF
    printf 'module kernel\n\ngo 1.19\n' >"$d/go.mod"
    if ! (cd "$d" && go test -c -race -o kernel.test >/dev/null 2>&1); then
        echo "n/a"
        return
    fi
    local hits=0
    for _ in $(seq "$GO_RUNS"); do
        if ! "$d/kernel.test" -test.count=1 -test.timeout=2s >/dev/null 2>&1; then
            hits=$((hits + 1))
        fi
    done
    echo "$hits/$GO_RUNS"
}

echo "| bug | kind | random walk | PCT d=1 | PCT d=2 | PCT d=3 | select enforcement | exhaustive (P=2) | Go reruns (\`-race\`) |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in crates/weft/tests/gobench/*.weft; do
    header=$(head -1 "$f")
    project=$(sed -n 's/.*goker \([a-z]*\)#\([0-9]*\) .*/\1/p' <<<"$header")
    id=$(sed -n 's/.*goker \([a-z]*\)#\([0-9]*\) .*/\2/p' <<<"$header")
    case "$header" in
    *"(non-blocking"*) kind=nonblocking ;;
    *) kind=blocking ;;
    esac
    row="| $project#$id | $kind"
    for s in "${STRATEGIES[@]}"; do
        found=()
        for seed in $(seq 0 $((SEEDS - 1))); do
            k=$(first_failure "$f" --strategy "$s" --seed "$seed" --schedules "$SCHEDULES")
            [ -n "$k" ] && found+=("$k")
        done
        row="$row | $(summary "${found[@]+"${found[@]}"}")"
    done
    k=$(first_failure "$f" --exhaustive --max-preemptions 2 --schedules "$SCHEDULES")
    row="$row | ${k:-not found}"
    row="$row | $(go_hits "$project" "$id" "$kind") |"
    echo "$row"
done
