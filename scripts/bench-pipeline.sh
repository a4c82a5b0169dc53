#!/usr/bin/env bash
# Measures the digits training pipeline (docs/pipeline.md), release build:
#
#  1. examples/train_digits.weft on one device and with `--devices 2`, and
#     examples/train_digits_seq.weft, RUNS times each (40 epochs, seed 1);
#     every run must reach 95% test accuracy (the full-length check that the
#     debug-mode tests also make).
#  2. Overlap = wall time / busiest stage's busy time (1.0 is perfect), as
#     the program measures it with now(), and again from a `--trace` run
#     (busy = the union of a task's "run" and op spans).
#  3. Milliseconds per epoch, reading included, next to numpy by hand and
#     PyTorch's plain loop (crates/weft/benches/pytorch/) when python3 has them.
#  4. With --svg: docs/timeline.svg from a short traced run, cropped to a
#     few training steps, tracks named after their stage.
#
# Usage: scripts/bench-pipeline.sh [--svg] [RUNS]     (RUNS default 5)
# Env: EPOCHS (default 40), PYTHON (default python3), WORKERS (default: all),
# WEFT (a weft binary to measure instead of building this checkout's).
# Reports medians and minimums: on a shared machine the minimum is the
# better estimate of the cost, the median of what a user sees.
set -euo pipefail
cd "$(dirname "$0")/.."

svg=0
if [[ "${1:-}" == "--svg" ]]; then
	svg=1
	shift
fi
runs=${1:-5}
epochs=${EPOCHS:-40}
py=${PYTHON:-python3}
workers=()
if [[ -n "${WORKERS:-}" ]]; then
	workers=(--workers "$WORKERS")
fi

if [[ -z "${WEFT:-}" ]]; then
	cargo build --release --quiet
fi
weft=${WEFT:-target/release/weft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field FILE PREFIX N: word N (1-based) of the first line starting with PREFIX.
field() { awk -v p="$2" -v n="$3" 'index($0, p) == 1 { print $n; exit }' "$1"; }
# stats: median and minimum of the numbers on stdin, as "median min".
stats() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f\n", m, v[1] }'; }

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $runs x $epochs epochs, seed 1"
printf '%-28s %9s %9s %9s %9s %9s\n' config "epoch-med" "epoch-min" "wall/ep" overlap accuracy

bench() { # NAME FILE ARGS...
	local name=$1 file=$2
	shift 2
	: >"$tmp/wall" && : >"$tmp/epoch" && : >"$tmp/overlap"
	local acc=""
	for i in $(seq "$runs"); do
		local out="$tmp/$name.$i"
		"$weft" run "$file" "${workers[@]}" --seed 1 -- --epochs "$epochs" "$@" >"$out"
		acc=$(field "$out" accuracy 2)
		if awk -v a="$acc" 'BEGIN { exit !(a < 0.95) }'; then
			echo "FAIL: $name reached test accuracy $acc (< 0.95)" >&2
			exit 1
		fi
		field "$out" "wall ms" 7 >>"$tmp/wall"
		awk '/^epoch / { print $6 }' "$out" >>"$tmp/epoch"
		if grep -q '^overlap' "$out"; then
			field "$out" overlap 2 >>"$tmp/overlap"
		else # sequential: wall over the busiest of read, copy, train
			awk '/^busy read/ { m = $4; if ($7 > m) m = $7; if ($10 > m) m = $10 }
			     /^wall ms/ { w = $3 } END { printf "%.4f\n", w / m }' "$out" >>"$tmp/overlap"
		fi
	done
	read -r emed emin < <(stats <"$tmp/epoch")
	read -r wmed _ < <(stats <"$tmp/wall")
	read -r omed _ < <(stats <"$tmp/overlap")
	printf '%-28s %9s %9s %9s %9s %9s\n' "$name" "$emed" "$emin" "$wmed" "$omed" "$acc"
	grep '^busy' "$tmp/$name.$runs" | sed 's/^/    last run: /'
}

bench "pipelined, 1 device" examples/train_digits.weft
bench "pipelined, --devices 2" examples/train_digits.weft --devices 2
bench "sequential" examples/train_digits_seq.weft

# Overlap from the runtime's trace. Tasks are numbered in creation order:
# 1 main, 2 reader, then a transfer and a trainer task per device.
"$weft" run examples/train_digits.weft "${workers[@]}" --seed 1 --trace "$tmp/trace.json" \
	-- --epochs "$epochs" >"$tmp/traced"
if command -v "$py" >/dev/null; then
	"$py" - "$tmp/trace.json" "$tmp/timeline.json" <<'EOF'
import json, sys

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
names = {1: "main", 2: "reader", 3: "transfer 0", 4: "train 0"}
# Task tracks only (pid 1): the runtime also writes a track per worker (pid 2).
spans = [e for e in events if e.get("ph") == "X" and e.get("pid", 1) == 1]

def union(iv):
    total, cur = 0.0, None
    for s, e in sorted(iv):
        if cur is None or s > cur[1]:
            total += 0 if cur is None else cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return total + (0 if cur is None else cur[1] - cur[0])

# The pipeline's window: from the reader's first span to the trainer's last.
start = min(e["ts"] for e in spans if e["tid"] == 2)
end = max(e["ts"] + e["dur"] for e in spans if e["tid"] == 4)
busy = {}
for tid in (2, 3, 4):
    iv = [(e["ts"], e["ts"] + e["dur"]) for e in spans
          if e["tid"] == tid and e["cat"] in ("run", "op")]
    busy[names[tid]] = union(iv) / 1000
wall = (end - start) / 1000
print("trace: wall %.1f ms; busy %s; overlap %.3f" % (
    wall, ", ".join("%s %.1f ms" % kv for kv in busy.items()), wall / max(busy.values())))

# The picture: a window of about six training steps from the second epoch,
# tracks named after their stage, tensor ops grouped by stage (runnable spans
# left out), and the runtime's row per worker thread showing which task it
# was polling.
steps = sorted(e["ts"] for e in spans if e["tid"] == 4 and e["name"] == "softmax")
if len(steps) > 60:
    lo, hi = steps[50] - 200, steps[56]
    stage_op = {2: "read (gather, scale)", 3: "copy (to, onehot)", 4: "train (fwd, bwd, update)", 1: "main"}
    keep = []
    for e in events:
        pid = e.get("pid", 1)
        if e.get("ph") == "M":
            if pid == 1 and e.get("name") == "thread_name" and e.get("tid") in names:
                e["args"]["name"] = "%s #%d" % (names[e["tid"]], e["tid"])
            keep.append(e)
        elif e.get("ph") != "X" or e["ts"] >= hi or e["ts"] + e["dur"] <= lo:
            continue
        elif pid == 2:
            # The runtime's track per worker thread: which task each poll ran.
            s, t = max(e["ts"], lo), min(e["ts"] + e["dur"], hi)
            name = e["name"]
            stage = names.get(e.get("args", {}).get("task"))
            if stage:
                name = "worker polls " + stage.split()[0]
            keep.append(dict(e, ts=s, dur=t - s, name=name))
        elif e["tid"] in (2, 3, 4) and e.get("cat") != "runnable":
            s, t = max(e["ts"], lo), min(e["ts"] + e["dur"], hi)
            e = dict(e, ts=s, dur=t - s)
            if e["cat"] == "op":
                e["name"] = stage_op[e["tid"]]
            elif e["cat"] == "run":
                e["name"] = "running (interpreter)"
            keep.append(e)
    json.dump({"traceEvents": keep, "displayTimeUnit": "ms"}, open(sys.argv[2], "w"))
EOF
else
	echo "trace: $py not found, skipping the trace analysis"
fi
if [[ $svg == 1 && -f "$tmp/timeline.json" ]]; then
	# Run from $tmp so that the picture's title names the file, not the path.
	cp "$tmp/timeline.json" "$tmp/train_digits-6-steps.json"
	root=$PWD
	(cd "$tmp" && "$root/$weft" trace train_digits-6-steps.json -o "$root/docs/timeline.svg")
	echo "wrote docs/timeline.svg"
fi

# Baselines: the same model, batch, learning rate and epochs.
for impl in numpy torch; do
	script=crates/weft/benches/pytorch/train_digits_$impl.py
	if "$py" -c "import $impl" 2>/dev/null; then
		for i in $(seq "$runs"); do "$py" "$script" --epochs "$epochs" >"$tmp/$impl.$i"; done
		label="numpy by hand"
		[[ $impl == torch ]] && label="PyTorch plain loop"
		awk '/^epoch / { print $6 }' "$tmp"/"$impl".* | stats |
			awk -v n="$label" -v a="$(field "$tmp/$impl.1" accuracy 2)" \
				'{ printf "%-28s %9s %9s %9s %9s %9s\n", n, $1, $2, "", "", a }'
	else
		echo "$impl: not installed for $py (docs/performance.md quotes numpy 3.6 ms, PyTorch 13 ms an epoch)"
	fi
done
