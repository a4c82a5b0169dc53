#!/usr/bin/env bash
# How the end of a run grows with the tasks blocked on one channel (issue
# 26): N tasks block receiving from one unbuffered channel, then main ends
# the run by returning, by `exit(3)`, by `panic`, or by blocking too (the
# deadlock report lists all N + 1 tasks); the `select` row blocks each task
# in a two-case select over two shared channels instead, and `spread` on one
# channel per task (nothing shared, the baseline). Prints the wall time of
# `weft run` per N and per task: linear growth shows as a flat per-task
# column. Before the fix, each dropped receive scanned the channel's whole
# queue and the time per task grew with N (200,000 tasks took 100 s).
#
#   scripts/bench-exit.sh                      # target/release/weft, N = 25k..200k
#   WEFT=/tmp/old/weft scripts/bench-exit.sh   # another binary
#   NS="10000 20000" VARIANTS="exit deadlock" REPS=3 scripts/bench-exit.sh
#
# Each cell is the best of REPS runs (default 1); a run longer than LIMIT
# seconds (default 300) is stopped and shown as `>LIMIT`. The exit code of
# every run is checked against the outcome the variant must have.
set -euo pipefail
cd "$(dirname "$0")/.."
WEFT=${WEFT:-target/release/weft}
NS=${NS:-25000 50000 100000 200000}
VARIANTS=${VARIANTS:-return exit panic deadlock select spread}
REPS=${REPS:-1}
LIMIT=${LIMIT:-300}
[ -x "$WEFT" ] || { echo "no $WEFT (cargo build --release -p weft)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# program VARIANT N: the program text.
program() {
    local v=$1 n=$2 body='<-c' end=''
    case $v in
        return) ;;
        exit) end='exit(3)' ;;
        panic) end='panic("stop")' ;;
        deadlock) end='<-c' ;;
        select) body='select {
            case <-c:
            case <-d:
            }' ;;
        spread) body='e := make(chan int)
            <-e' ;;
    esac
    cat <<EOF
func main() {
    c := make(chan int)
    d := make(chan int)
    for i := 0; i < $n; i++ {
        go {
            $body
        }
    }
    print("spawned")
    $end
}
EOF
}

# The exit code each variant must end with.
want_rc() {
    case $1 in
        exit) echo 3 ;;
        panic | deadlock) echo 2 ;;
        *) echo 0 ;;
    esac
}

printf '| variant | N | ms | µs per task |\n|---|---:|---:|---:|\n'
for v in $VARIANTS; do
    for n in $NS; do
        f="$dir/$v-$n.weft"
        program "$v" "$n" >"$f"
        best=
        for _ in $(seq 1 "$REPS"); do
            t0=$(date +%s%N)
            set +e
            timeout "$LIMIT" "$WEFT" run "$f" >/dev/null 2>"$dir/err"
            rc=$?
            set -e
            t1=$(date +%s%N)
            if [ "$rc" = 124 ]; then
                best=">$((LIMIT * 1000))"
                break
            fi
            if [ "$rc" != "$(want_rc "$v")" ]; then
                echo "$v N=$n: exit code $rc, want $(want_rc "$v")" >&2
                head -5 "$dir/err" >&2
                exit 1
            fi
            ms=$(((t1 - t0) / 1000000))
            if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
        done
        if [[ $best == '>'* ]]; then
            printf '| %s | %d | %s | - |\n' "$v" "$n" "$best"
            break # larger N would only take longer
        fi
        printf '| %s | %d | %d | %.2f |\n' "$v" "$n" "$best" "$(echo "$best * 1000 / $n" | bc -l)"
    done
done
