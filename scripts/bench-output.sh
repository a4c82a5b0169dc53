#!/usr/bin/env bash
# Output and formatting, Weft vs Go (docs/performance.md, "Output and
# sprintf"): crates/weft/benches/programs/printlines.{weft,go} printing
# 1,000,000 lines to a file (each line one write(2) on both sides: Weft's
# print and Go's fmt.Println on os.Stdout are unbuffered), and
# sprintf.{weft,go} formatting 1,000,000 strings. Whole processes are
# timed (Weft's includes compiling the source); prints the median
# wall-clock and mean CPU milliseconds of RUNS runs after one warm-up.
#
#   scripts/bench-output.sh            # 5 runs each
#   RUNS=9 N=2000000 scripts/bench-output.sh
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
N=${N:-1000000}
OUT=target/bench-go
mkdir -p "$OUT"
cargo build --release --quiet --bin weft
WEFT=target/release/weft
P=crates/weft/benches/programs
for p in printlines sprintf; do
    go build -o "$OUT/$p" "$P/$p.go"
done

# measure FILE CMD...: "WALL CPU" in ms (median wall, mean user+system),
# stdout of CMD to FILE.
measure() {
    local file=$1
    shift
    "$@" >"$file"
    local log
    log=$(mktemp)
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -a -o "$log" -f '%e %U %S' "$@" >"$file"
    done
    sort -n "$log" | awk '{w[NR]=$1; c+=$2+$3}
        END {m=(NR%2)?w[(NR+1)/2]:(w[NR/2]+w[NR/2+1])/2; print m*1000, c/NR*1000}'
    rm -f "$log"
}

echo "| program | N | Go wall (ms) | Weft wall (ms) | wall Weft/Go | Go CPU (ms) | Weft CPU (ms) | CPU Weft/Go |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for p in printlines sprintf; do
    go=$(measure "$OUT/$p.go.out" "$OUT/$p" "$N")
    weft=$(measure "$OUT/$p.weft.out" "$WEFT" run "$P/$p.weft" -- "$N")
    if ! cmp -s "$OUT/$p.go.out" "$OUT/$p.weft.out"; then
        echo "$p: outputs differ ($OUT/$p.go.out, $OUT/$p.weft.out)" >&2
        exit 1
    fi
    echo "$go $weft" | awk -v p="$p" -v n="$N" '{
        printf "| %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n",
            p, n, $1, $3, $3 / $1, $2, $4, $4 / $2 }'
done
