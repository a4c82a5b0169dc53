#!/usr/bin/env bash
# Weft vs Go on the same programs (crates/weft/benches/programs/NAME.weft beside NAME.go).
#
# Builds `weft` in release mode and each Go program with `go build`, then
# times every program several times, once with the default number of
# workers (Weft's --workers and Go's GOMAXPROCS both left at their default,
# one per CPU) and once with both at 1. Prints a markdown table of median
# wall-clock times, mean CPU times (user + system) and the ratios Weft/Go.
# On a machine shared with other work the wall-clock time mostly measures
# the wait for a CPU; the CPU time is then the steadier figure. Whole
# processes are timed, so start-up (for Weft: compiling the source) is
# included on both sides.
#
#   scripts/bench-vs-go.sh                    # every program, 5 runs each
#   RUNS=10 scripts/bench-vs-go.sh sieve arith
#   WORKERS="2 1" scripts/bench-vs-go.sh      # explicit worker counts
#   WEFT=/tmp/weft-old scripts/bench-vs-go.sh # another weft binary, not built
#
# Uses hyperfine when it is installed (apt-get install -y hyperfine),
# otherwise a loop over `date +%s%N`. Both programs of a pair must print the
# same output; the script stops if they do not.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
WORKERS=${WORKERS:-"default 1"}
OUT=target/bench-go
unset GOMAXPROCS
mkdir -p "$OUT"

if [ $# -gt 0 ]; then
    PROGRAMS="$*"
else
    PROGRAMS=$(cd crates/weft/benches/programs && ls ./*.weft | sed 's|^\./||; s|\.weft$||')
fi

# WEFT=path/to/weft times that binary instead (e.g. a copy of an earlier
# build, for a before/after under the same load); nothing is built then.
if [ -z "${WEFT:-}" ]; then
    cargo build --release --quiet --bin weft
    WEFT=target/release/weft
fi
for p in $PROGRAMS; do
    go build -o "$OUT/$p" "crates/weft/benches/programs/$p.go"
done

# measure CMD...: prints "WALL CPU": the median wall-clock milliseconds of
# RUNS runs of CMD after one warm-up run, and the mean CPU milliseconds
# (user + system, all threads) per run.
measure() {
    if command -v hyperfine >/dev/null; then
        local json
        json=$(mktemp)
        hyperfine --style none --warmup 1 --runs "$RUNS" -N \
            --export-json "$json" -- "$*" >/dev/null 2>&1
        jq -r '.results[0] | "\(.median * 1000) \((.user + .system) * 1000)"' "$json"
        rm -f "$json"
    else
        "$@" >/dev/null
        local log
        log=$(mktemp)
        for _ in $(seq "$RUNS"); do
            /usr/bin/time -a -o "$log" -f '%e %U %S' "$@" >/dev/null
        done
        sort -n "$log" | awk '{w[NR]=$1; c+=$2+$3}
            END {m=(NR%2)?w[(NR+1)/2]:(w[NR/2]+w[NR/2+1])/2; print m*1000, c/NR*1000}'
        rm -f "$log"
    fi
}

echo "| program | workers | Go wall (ms) | Weft wall (ms) | wall Weft/Go | Go CPU (ms) | Weft CPU (ms) | CPU Weft/Go |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for p in $PROGRAMS; do
    want=$("$OUT/$p")
    got=$("$WEFT" run "crates/weft/benches/programs/$p.weft")
    if [ "$want" != "$got" ]; then
        echo "$p: outputs differ: Go printed '$want', Weft printed '$got'" >&2
        exit 1
    fi
    for w in $WORKERS; do
        if [ "$w" = default ]; then
            label="default ($(nproc))"
            go=$(measure "$OUT/$p")
            weft=$(measure "$WEFT" run "crates/weft/benches/programs/$p.weft")
        else
            label=$w
            export GOMAXPROCS=$w
            go=$(measure "$OUT/$p")
            unset GOMAXPROCS
            weft=$(measure "$WEFT" run --workers "$w" "crates/weft/benches/programs/$p.weft")
        fi
        echo "$go $weft" | awk -v p="$p" -v l="$label" '{
            printf "| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n",
                p, l, $1, $3, $3 / $1, $2, $4, $4 / $2 }'
    done
done
