#!/usr/bin/env bash
# Two weft binaries (A before a change, B after) on the digits pipeline,
# alternated: each round runs examples/train_digits.weft (40 epochs, seed 1)
# with A and then with B, so the machine's drift falls on both. Prints each
# binary's wall times, its busiest trainer's busy times (as the program
# measures them) and overlaps, sorted, with their medians.
#
# Usage: scripts/bench-pipeline-ab.sh A_WEFT B_WEFT [RUNS] [DEVICES]
#        (RUNS default 9, DEVICES default 1)
set -euo pipefail

cd "$(dirname "$0")/.."
a=$1
b=$2
runs=${3:-9}
devices=${4:-1}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

for _ in $(seq "$runs"); do
	for w in "$a" "$b"; do
		"$w" run examples/train_digits.weft --seed 1 -- --devices "$devices" 2>&1 |
			awk -v bin="$w" '/busy train/ { if ($5 > m) m = $5 }
				/^wall ms/ { wall = $3 }
				/^overlap/ { o = $2 }
				END { printf "%s %.1f %.1f %.3f\n", bin, wall, m, o }' >>"$tmp"
	done
done

for w in "$a" "$b"; do
	echo "$w (--devices $devices, $runs runs):"
	for col in 2 3 4; do
		name=$(case $col in 2) echo "wall ms" ;; 3) echo "busiest trainer ms" ;; 4) echo "overlap" ;; esac)
		awk -v bin="$w" -v c="$col" '$1 == bin { print $c }' "$tmp" | sort -n |
			awk -v name="$name" '{ v[NR] = $1; s = s " " $1 }
				END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
					printf "  %-20s median %s  (%s )\n", name, m, s }'
	done
done
