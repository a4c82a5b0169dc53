#!/usr/bin/env bash
# The pipeline bubble of examples/pipeline_parallel.weft (docs/pipeline.md,
# "Model parallelism"), release build:
#
#  1. for M = 1, 2, 4, 8 micro-batches, RUNS runs of 40 epochs (seed 1)
#     with WORKERS workers and RUNS with one: the median bubble of each
#     stage as the program measures it with now() (1 - busy / steps' span,
#     from the WORKERS runs), the median bubble the GPipe schedule alone
#     gives with the stages' times of the one-worker runs (where the stages
#     do not compete for CPUs; free hand-offs), and the formula
#     (p-1)/(m+p-1); every run must reach 95% test accuracy;
#  2. one traced run with M = 4: the bubble from the trace
#     (scripts/bubble.py), and with --svg the picture of one step,
#     docs/pipeline_step.svg (a step of typical length: see below).
#
# Usage: scripts/bench-bubble.sh [--svg] [RUNS]     (RUNS default 5)
# Env: WORKERS (default 2: one per stage; main only feeds them), BATCH (default 32),
# EPOCHS (default 40), DEVICES (default: the program's choice).
set -euo pipefail
cd "$(dirname "$0")/.."

svg=0
if [[ "${1:-}" == "--svg" ]]; then
	svg=1
	shift
fi
runs=${1:-5}
workers=${WORKERS:-2}
batch=${BATCH:-32}
epochs=${EPOCHS:-40}
devices=()
if [[ -n "${DEVICES:-}" ]]; then
	# shellcheck disable=SC2206
	devices=(--devices $DEVICES)
fi

cargo build --release --quiet
weft=target/release/weft
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m }'; }

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $runs x $epochs epochs, batch $batch, seed 1; medians"
echo "measured: --workers $workers, each stage's bubble = 1 - its busy time / the steps' span"
echo "schedule: the bubble GPipe alone gives with the stage times of --workers 1 runs (no contention between the stages)"
printf '%3s %18s %18s %9s %14s %14s\n' M "measured 0 / 1" "schedule 0 / 1" formula "step ms (w=$workers)" "step ms (w=1)"
for m in 1 2 4 8; do
	for f in b0 b1 s0 s1 step step1; do : >"$tmp/$f"; done
	formula=""
	for _ in $(seq "$runs"); do
		for w in "$workers" 1; do
			"$weft" run examples/pipeline_parallel.weft --seed 1 --workers "$w" -- \
				--micro "$m" --batch "$batch" --epochs "$epochs" "${devices[@]}" >"$tmp/out"
			acc=$(awk '/^accuracy/ { print $2 }' "$tmp/out")
			if [[ "$batch" == 32 && "$epochs" == 40 ]] && awk -v a="$acc" 'BEGIN { exit !(a < 0.95) }'; then
				echo "FAIL: test accuracy $acc (< 0.95)" >&2
				exit 1
			fi
			# bubble stage 0 B0 stage 1 B1 | schedule with these stage times S0 S1 | formula (p-1)/(m+p-1) F
			if [[ $w == 1 ]]; then
				awk '/^bubble/ { print $14 >>"'"$tmp"'/s0"; print $15 >>"'"$tmp"'/s1" }
					/^wall/ { print $NF >>"'"$tmp"'/step1" }' "$tmp/out"
			else
				awk '/^bubble/ { print $4 >>"'"$tmp"'/b0"; print $7 >>"'"$tmp"'/b1" }
					/^wall/ { print $NF >>"'"$tmp"'/step" }' "$tmp/out"
			fi
			formula=$(awk '/^bubble/ { print $NF }' "$tmp/out")
		done
	done
	printf '%3s %18s %18s %9s %14s %14s\n' "$m" "$(median <"$tmp/b0") / $(median <"$tmp/b1")" \
		"$(median <"$tmp/s0") / $(median <"$tmp/s1")" "$formula" "$(median <"$tmp/step")" "$(median <"$tmp/step1")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "traced run, M = 4:"
"$weft" run examples/pipeline_parallel.weft --seed 1 --workers "$workers" --trace "$tmp/t.json" -- \
	--micro 4 --batch "$batch" --epochs "$epochs" "${devices[@]}" --show-step 0 >"$tmp/out"
python3 scripts/bubble.py "$tmp/t.json" --micro 4
if [[ $svg == 1 ]]; then
	# The step to draw: of five steps in the middle of a run, each from its
	# own traced run, the one whose span is nearest the run's mean step.
	steps=$(awk '/^wall/ { print $5 }' "$tmp/out")
	best=""
	for j in 0 1 2 3 4; do
		k=$((steps / 2 + j * 37))
		"$weft" run examples/pipeline_parallel.weft --seed 1 --workers "$workers" --trace "$tmp/t$j.json" -- \
			--micro 4 --batch "$batch" --epochs "$epochs" "${devices[@]}" --show-step "$k" >"$tmp/out$j"
		# distance from the mean step, then the window
		awk -v j="$j" -v k="$k" '/^wall/ { mean = $NF } /^step/ { d = ($8 - $5) - mean; if (d < 0) d = -d; print d, j, k, $5, $8 }' "$tmp/out$j" >>"$tmp/cands"
	done
	read -r _ j k from to < <(sort -g "$tmp/cands" | head -1)
	python3 scripts/bubble.py "$tmp/t$j.json" --micro 4 --window "$from" "$to" --crop "$tmp/one_step.json"
	# From the temporary folder, so the picture's title is the file's name.
	(cd "$tmp" && "$OLDPWD/$weft" trace one_step.json -o "$OLDPWD/docs/pipeline_step.svg")
	echo "wrote docs/pipeline_step.svg (step $k, $from to $to ms)"
fi
