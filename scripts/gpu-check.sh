#!/usr/bin/env bash
# The GPU verification in one command (docs/gpu.md). Where there is a GPU:
#
#  1. builds weft with and without the `cuda` feature (release);
#  2. runs every GPU test: scripts/nvrtc-check.sh --gpu (the CUDA unit tests,
#     the NVRTC compile of the kernels, crates/tensor/tests/tensor_gpu.rs,
#     which must not skip), then the weft-tensor suite with the feature;
#  3. correctness: examples/train_digits.weft on the GPU must follow the CPU
#     run's loss curve to 1e-4 per epoch (--devices 1);
#  4. the pipeline on the GPU (train_digits.weft, times on): its overlap
#     and wall time, and the GPU's busy share meanwhile (utilization.gpu
#     sampled by nvidia-smi every 100 ms; goal at least 90%);
#  5. the sequential version (train_digits_seq.weft) on the GPU, against
#     the pipeline, and PyTorch's loop of the same model on the GPU
#     (crates/weft/benches/pytorch/train_digits_torch.py --device cuda);
#  6. upload bandwidth from pinned staging buffers against a plain
#     (pageable) copy, and the engine's own upload (crates/tensor/examples/
#     upload_bandwidth.rs);
#  7. the collectives on the GPUs: train_digits.weft with two trainers (on
#     two GPUs, or both on the one GPU), whose allreduce_sum takes device
#     tensors, against the CPU run with two trainers, to 1e-4 per epoch;
#  8. the pipeline with two trainers on the CPU (the CPU binary,
#     train_digits.weft --devices 2, times on, three runs): its overlap on
#     this machine's cores (goal at most 1.15; the development machines
#     have two cores, too few for the three busy stages);
#
# then writes the figures into docs/gpu.md (between its gpu-check markers)
# and prints a summary. Exits 1 when a correctness check fails (a test, a
# loss curve, a run that did not land on the GPU), after writing the
# report; a performance goal missed is reported, not an error.
#
# Where there is no GPU (no nvidia-smi, no GPU listed, or the driver
# library libcuda.so.1 cannot be loaded) it says so in one line and exits
# 0, leaving docs/gpu.md as it is.
#
# Usage: scripts/gpu-check.sh [--dry-run]
#   --dry-run  without a GPU: runs what can run on the CPU through the same
#              code (the CPU binary stands in for the GPU one, GPU-only
#              steps report "skipped") and writes the report to a
#              temporary file instead of docs/gpu.md, to test this script.
# Env: EPOCHS (default 40); WEFT_CPU / WEFT_GPU (use these binaries
#      instead of building); WEFT_NVRTC_DIR (see scripts/nvrtc-check.sh);
#      WEFT_GPU_BUNDLE (a directory made by scripts/gpu-bundle.sh: its
#      prebuilt binaries and test executables stand in for every cargo
#      command, for a GPU machine without a Rust toolchain).
set -euo pipefail
# The bundle's path, made absolute before the cd below.
bundle=${WEFT_GPU_BUNDLE:+$(realpath "$WEFT_GPU_BUNDLE")}
cd "$(dirname "$0")/.."

dry=0
case "${1:-}" in
	--dry-run) dry=1 ;;
	"") ;;
	*)
		echo "usage: $0 [--dry-run]" >&2
		exit 2
		;;
esac
epochs=${EPOCHS:-40}
doc=docs/gpu.md
# The tolerance on each epoch's loss (printed to 4 decimals).
tol=0.0001
# Goal for the GPU's busy share during the pipeline, percent.
busy_goal=90

# --- Is there a GPU? ---------------------------------------------------------

# no_gpu_reason: empty when an NVIDIA GPU and its driver library are usable,
# else why not.
no_gpu_reason() {
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		echo "nvidia-smi not found"
		return
	fi
	local list
	list=$(nvidia-smi -L 2>/dev/null || true)
	if ! grep -q '^GPU ' <<<"$list"; then
		echo "nvidia-smi lists no GPU"
		return
	fi
	if command -v python3 >/dev/null 2>&1; then
		if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' >/dev/null 2>&1; then
			echo "the driver library libcuda.so.1 cannot be loaded"
		fi
	elif ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
		echo "the driver library libcuda.so.1 is not in the loader's cache"
	fi
}

reason=$(no_gpu_reason)
if [[ -n $reason && $dry == 0 ]]; then
	echo "gpu-check: no NVIDIA GPU here ($reason); nothing measured, $doc left unchanged"
	exit 0
fi
if [[ $dry == 1 ]]; then
	echo "gpu-check: dry run${reason:+ (no GPU: $reason)}: the CPU stands in for the GPU, the report goes to a temporary file"
fi
# CUDA numbers the GPUs as nvidia-smi does (cuda:0 is nvidia-smi's GPU 0).
export CUDA_DEVICE_ORDER=PCI_BUS_ID

tmp=$(mktemp -d)
smi_pid=""
cleanup() {
	if [[ -n $smi_pid ]]; then
		kill "$smi_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

failures=0
# Summary rows: "check|result|verdict".
rows=()
row() { rows+=("$1|$2|$3"); }
fail() {
	echo "gpu-check: FAIL: $*" >&2
	failures=$((failures + 1))
}

# field FILE PREFIX N: word N (1-based) of the first line starting with PREFIX.
field() { awk -v p="$2" -v n="$3" 'index($0, p) == 1 { print $n; exit }' "$1"; }

# --- 1. Builds -----------------------------------------------------------------

weft_cpu=${WEFT_CPU:-}
weft_gpu=${WEFT_GPU:-}
build() {
	if [[ -n $bundle ]]; then
		local want
		want=$(git rev-parse HEAD 2>/dev/null || echo "not a git checkout")
		if [[ ! -x $bundle/weft-gpu || ! -d $bundle/tests ]]; then
			echo "gpu-check: $bundle is not a bundle of scripts/gpu-bundle.sh" >&2
			exit 2
		fi
		if [[ $(cat "$bundle/commit" 2>/dev/null) != "$want" ]]; then
			echo "gpu-check: warning: $bundle was built from $(cat "$bundle/commit" 2>/dev/null || echo "an unknown commit"), this checkout is $want" >&2
		fi
		echo "gpu-check: the prebuilt binaries of $bundle"
		weft_cpu=${weft_cpu:-$bundle/weft-cpu}
		weft_gpu=${weft_gpu:-$bundle/weft-gpu}
		if [[ $dry == 1 ]]; then
			weft_gpu=$weft_cpu
		fi
		return
	fi
	if [[ -z $weft_cpu ]]; then
		echo "gpu-check: building weft (release, CPU only)"
		cargo build --release --quiet -p weft
		cp target/release/weft "$tmp/weft-cpu"
		weft_cpu=$tmp/weft-cpu
	fi
	if [[ -z $weft_gpu ]]; then
		if [[ $dry == 1 ]]; then
			weft_gpu=$weft_cpu
		else
			echo "gpu-check: building weft (release, --features cuda)"
			cargo build --release --quiet -p weft --features cuda
			cp target/release/weft "$tmp/weft-gpu"
			weft_gpu=$tmp/weft-gpu
		fi
	fi
}

# --- 2. The GPU tests ----------------------------------------------------------

# Adds the directories of the CUDA 13 libraries the backend loads besides
# the driver (cuBLAS, NVRTC) to LD_LIBRARY_PATH, when scripts/nvrtc-check.sh
# installed them from their wheels (it does not export them to us).
# Also looks in the CUDA toolkit (/usr/local/cuda*) and in Python's
# site-packages (the nvidia-cublas and nvidia-cuda-nvrtc wheels that
# PyTorch brings), so that a machine with either needs no download.
cuda_lib_path() {
	local dirs=("${WEFT_NVRTC_DIR:-$HOME/.cache/weft-nvrtc}") lib so d
	if command -v python3 >/dev/null 2>&1; then
		while read -r d; do
			dirs+=("$d/nvidia")
		done < <(python3 -c 'import site, sys; print(*site.getsitepackages(), sep="\n")' 2>/dev/null || true)
	fi
	dirs+=(/usr/local/cuda*/)
	for so in libnvrtc.so.13 libcublas.so.13; do
		for d in "${dirs[@]}"; do
			lib=$(find -L "$d" -name "$so" -print -quit 2>/dev/null || true)
			if [[ -n $lib ]]; then
				LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
				break
			fi
		done
	done
	export LD_LIBRARY_PATH
}

# Whether the CUDA 13 cuBLAS and NVRTC libraries load from the loader's path.
cuda_libs_load() {
	command -v python3 >/dev/null 2>&1 &&
		python3 -c 'import ctypes; [ctypes.CDLL(n) for n in ("libcublas.so.13", "libnvrtc.so.13")]' >/dev/null 2>&1
}

# The GPU tests as scripts/nvrtc-check.sh --gpu runs them, without its
# installing: the CUDA unit tests, the NVRTC compile, then tensor_gpu; a
# test that printed that it skipped fails here.
gpu_test_commands() {
	if [[ -n $bundle ]]; then
		(cd crates/tensor && "$bundle/tests/lib" device::cuda &&
			"$bundle/tests/cuda_kernels_compile" --nocapture &&
			"$bundle/tests/tensor_gpu" --nocapture --test-threads 1)
		return
	fi
	cargo test -p weft-tensor --features cuda --lib device::cuda &&
		cargo test -p weft-tensor --features cuda --test cuda_kernels_compile -- --nocapture &&
		cargo test -p weft-tensor --features cuda --test tensor_gpu -- --nocapture --test-threads 1
}

# The whole weft-tensor suite with the feature (release), one test at a time.
tensor_suite() {
	if [[ -n $bundle ]]; then
		local t
		for t in "$bundle"/tests/*; do
			echo "gpu-check: $t"
			(cd crates/tensor && "$t" --test-threads 1) || return 1
		done
		return
	fi
	cargo test --release -p weft-tensor --features cuda -- --test-threads 1
}

gpu_tests() {
	if [[ $dry == 1 ]]; then
		row "GPU tests" "not run (dry run)" "skipped"
		return
	fi
	local how ok=1
	if ! cuda_libs_load; then
		cuda_lib_path
	fi
	if cuda_libs_load || [[ -n $bundle ]]; then
		how="tensor_gpu, cuda_kernels_compile, device::cuda"
		echo "gpu-check: the GPU tests ($how)"
		gpu_test_commands >"$tmp/gpu-tests.log" 2>&1 || ok=0
		# Every skip is an error here but the check that only applies
		# without a GPU (cuda_kernels_compile.rs).
		if grep 'skipping' "$tmp/gpu-tests.log" | grep -v '^skipping without_a_gpu' >"$tmp/skips"; then
			head -n 3 "$tmp/skips" >&2
			ok=0
		fi
	else
		# nvrtc-check.sh installs cuBLAS and NVRTC from their wheels first.
		how="scripts/nvrtc-check.sh --gpu"
		echo "gpu-check: the GPU tests ($how)"
		scripts/nvrtc-check.sh --gpu >"$tmp/gpu-tests.log" 2>&1 || ok=0
		cuda_lib_path
	fi
	if [[ $ok == 1 ]]; then
		local n
		n=$(grep -c '^test .* ok$' "$tmp/gpu-tests.log" || true)
		row "GPU tests ($how)" "$n passed, none skipped" "ok"
	else
		tail -n 40 "$tmp/gpu-tests.log" >&2
		fail "the GPU tests ($how; log above)"
		row "GPU tests ($how)" "failed or skipped" "FAIL"
	fi
	echo "gpu-check: the weft-tensor tests with --features cuda"
	if tensor_suite >"$tmp/tensor.log" 2>&1; then
		local p
		p=$(awk '/^test result: ok/ { s += $4 } END { print s + 0 }' "$tmp/tensor.log")
		row "weft-tensor tests, --features cuda" "$p passed" "ok"
	else
		grep -E '^(test .*FAILED|failures:|---- )' "$tmp/tensor.log" >&2 || tail -n 40 "$tmp/tensor.log" >&2
		fail "cargo test -p weft-tensor --features cuda"
		row "weft-tensor tests, --features cuda" "failed" "FAIL"
	fi
}

# --- 3. Correctness: the loss curve on the GPU against the CPU's -----------------

# losses FILE: "EPOCH LOSS" per `epoch N loss X` line.
losses() { awk '$1 == "epoch" && $3 == "loss" { print $2, $4 }' "$1"; }

# compare_losses NAME CPU_OUT GPU_OUT: every epoch's loss within $tol.
# Prints the largest difference; fails when an epoch is missing or off.
compare_losses() {
	local name=$1 cpu=$2 gpu=$3 worst
	losses "$cpu" >"$tmp/l.cpu"
	losses "$gpu" >"$tmp/l.gpu"
	if [[ ! -s $tmp/l.cpu ]]; then
		fail "$name: the CPU run printed no epoch losses"
		row "$name" "no CPU losses" "FAIL"
		return
	fi
	# The GPU's epochs must be the CPU's, each loss within $tol.
	if ! worst=$(awk -v tol="$tol" '
		NR == FNR { cpu[$1] = $2; want++; next }
		($1 in cpu) && !($1 in seen) { seen[$1] = 1; n++
		  d = cpu[$1] - $2; if (d < 0) d = -d; if (d > w) w = d
		  if (d > tol + 1e-9) bad = bad sprintf(" epoch %s: cpu %s gpu %s;", $1, cpu[$1], $2) }
		END { if (n != want) { printf "%d of the %d epochs in the GPU run", n, want; exit 1 }
		      if (bad != "") { printf "off by more than %s:%s", tol, bad; exit 1 }
		      printf "%.4g", w }' "$tmp/l.cpu" "$tmp/l.gpu"); then
		paste "$tmp/l.cpu" "$tmp/l.gpu" >&2
		fail "$name: $worst"
		row "$name" "$worst" "FAIL"
		return
	fi
	row "$name" "$(wc -l <"$tmp/l.cpu") epochs, largest difference $worst (tolerance $tol)" "ok"
}

# on_gpu FILE: whether the run's `devices [...]` line names a GPU.
on_gpu() { grep -q '^devices \[.*cuda:' "$1"; }

# run_digits BIN OUT PROGRAM ARGS...: runs a digits example, seed 1.
run_digits() {
	local bin=$1 out=$2 prog=$3
	shift 3
	"$bin" run "$prog" --seed 1 -- --epochs "$epochs" "$@" >"$out"
}

loss_curve() {
	echo "gpu-check: train_digits.weft, CPU against GPU, $epochs epochs"
	if ! run_digits "$weft_cpu" "$tmp/cpu1" examples/train_digits.weft --devices 1 --no-times; then
		fail "train_digits.weft on the CPU failed"
		row "loss curve, GPU vs CPU" "the CPU run failed" "FAIL"
		return
	fi
	if ! run_digits "$weft_gpu" "$tmp/gpu1" examples/train_digits.weft --devices 1 --no-times; then
		fail "train_digits.weft on the GPU failed"
		row "loss curve, GPU vs CPU" "the GPU run failed" "FAIL"
		return
	fi
	if [[ $dry == 0 ]] && ! on_gpu "$tmp/gpu1"; then
		fail "train_digits.weft did not run on a GPU: $(head -n 1 "$tmp/gpu1")"
		row "loss curve, GPU vs CPU" "not on a GPU" "FAIL"
		return
	fi
	compare_losses "loss curve, GPU vs CPU (1 trainer)" "$tmp/cpu1" "$tmp/gpu1"
	acc_cpu=$(field "$tmp/cpu1" accuracy 2)
	acc_gpu=$(field "$tmp/gpu1" accuracy 2)
	row "test accuracy, CPU / GPU" "$acc_cpu / $acc_gpu" "-"
}

# --- 4. The pipeline on the GPU, and the GPU's busy share ------------------------

# Starts sampling GPU 0's utilization every 100 ms into FILE.
sample_start() {
	nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 100 >"$1" 2>/dev/null &
	smi_pid=$!
}
sample_stop() {
	if [[ -n $smi_pid ]]; then
		kill "$smi_pid" 2>/dev/null || true
		wait "$smi_pid" 2>/dev/null || true
		smi_pid=""
	fi
}

# busy_share FILE: the mean utilization (percent) over the samples from the
# first nonzero one to the last (the window in which the GPU worked:
# before it the program compiles and loads the data), and the count.
busy_share() {
	awk '$1 ~ /^[0-9]+$/ { v[++n] = $1 }
		END { f = 0; l = 0
		      for (i = 1; i <= n; i++) if (v[i] > 0) { if (!f) f = i; l = i }
		      if (!f) { print "0 0"; exit }
		      for (i = f; i <= l; i++) s += v[i]
		      printf "%.1f %d\n", s / (l - f + 1), l - f + 1 }' "$1"
}

pipe_wall="" seq_wall=""
pipeline() {
	echo "gpu-check: the pipeline on the GPU (train_digits.weft, $epochs epochs)"
	if [[ $dry == 0 ]]; then
		sample_start "$tmp/util"
	fi
	local ok=1
	run_digits "$weft_gpu" "$tmp/pipe" examples/train_digits.weft --devices 1 || ok=0
	sample_stop
	if [[ $ok == 0 ]]; then
		fail "the pipeline on the GPU failed"
		row "pipeline on the GPU" "failed" "FAIL"
		return
	fi
	if [[ $dry == 0 ]] && ! on_gpu "$tmp/pipe"; then
		fail "the pipeline did not run on a GPU: $(head -n 1 "$tmp/pipe")"
		row "pipeline on the GPU" "not on a GPU" "FAIL"
		return
	fi
	pipe_wall=$(field "$tmp/pipe" "wall ms" 3)
	local overlap per_epoch
	overlap=$(field "$tmp/pipe" overlap 2)
	per_epoch=$(field "$tmp/pipe" "wall ms" 7)
	row "pipeline: wall ms, per epoch ms" "$pipe_wall, $per_epoch" "-"
	row "pipeline: overlap (wall / busiest stage)" "$overlap" "-"
	grep '^busy' "$tmp/pipe" | sed 's/^/    /' >"$tmp/pipe.busy" || true
	if [[ $dry == 1 ]]; then
		row "GPU busy share during the pipeline" "not measured (dry run)" "skipped"
		return
	fi
	local busy nsamples
	read -r busy nsamples < <(busy_share "$tmp/util")
	if [[ $nsamples == 0 ]]; then
		row "GPU busy share during the pipeline" "no busy sample (nvidia-smi gave $(wc -l <"$tmp/util") lines)" "not measured"
		return
	fi
	local verdict="goal met"
	if awk -v b="$busy" -v g="$busy_goal" 'BEGIN { exit !(b < g) }'; then
		verdict="below the goal"
	fi
	row "GPU busy share during the pipeline" "$busy% ($nsamples samples; goal >= $busy_goal%)" "$verdict"
}

# --- 5. The sequential version on the GPU ------------------------------------------

sequential() {
	echo "gpu-check: the sequential version on the GPU (train_digits_seq.weft)"
	if ! run_digits "$weft_gpu" "$tmp/seq" examples/train_digits_seq.weft --devices 1; then
		fail "train_digits_seq.weft on the GPU failed"
		row "sequential on the GPU" "failed" "FAIL"
		return
	fi
	if [[ $dry == 0 ]] && ! on_gpu "$tmp/seq"; then
		fail "the sequential version did not run on a GPU: $(head -n 1 "$tmp/seq")"
		row "sequential on the GPU" "not on a GPU" "FAIL"
		return
	fi
	seq_wall=$(field "$tmp/seq" "wall ms" 3)
	local busiest
	busiest=$(awk '/^busy read/ { m = $4; if ($7 > m) m = $7; if ($10 > m) m = $10; print m; exit }' "$tmp/seq")
	row "sequential: wall ms (read + copy + train ms)" "$seq_wall ($(field "$tmp/seq" "busy read" 4) + $(field "$tmp/seq" "busy read" 7) + $(field "$tmp/seq" "busy read" 10))" "-"
	if [[ -n $pipe_wall && -n $seq_wall ]]; then
		row "pipeline speed-up over sequential" "$(awk -v s="$seq_wall" -v p="$pipe_wall" 'BEGIN { printf "%.2fx", s / p }')" "-"
	fi
	if [[ -n $busiest ]]; then
		row "sequential: wall / busiest stage" "$(awk -v w="$seq_wall" -v m="$busiest" 'BEGIN { printf "%.4f", w / m }')" "-"
	fi
}

# --- 5b. PyTorch on the GPU, the same model -------------------------------------------

# The peer a user would pick instead: crates/weft/benches/pytorch/
# train_digits_torch.py --device cuda (same data, model, batch and epochs).
pytorch() {
	if [[ $dry == 1 ]] || ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
		row "PyTorch on the GPU, same model: ms per epoch" "not run (no PyTorch with CUDA here)" "skipped"
		return
	fi
	echo "gpu-check: PyTorch on the GPU, the same model"
	if ! python3 crates/weft/benches/pytorch/train_digits_torch.py --epochs "$epochs" --device cuda >"$tmp/torch" 2>&1; then
		tail -n 5 "$tmp/torch" >&2
		row "PyTorch on the GPU, same model: ms per epoch" "failed (log above)" "-"
		return
	fi
	local mean
	mean=$(field "$tmp/torch" "pytorch per epoch ms" 5)
	local vs=""
	if [[ -n $pipe_wall ]]; then
		vs="; Weft's pipeline / PyTorch: $(awk -v w="$pipe_wall" -v e="$epochs" -v t="$mean" 'BEGIN { printf "%.2fx", w / e / t }')"
	fi
	row "PyTorch on the GPU, same model: ms per epoch" "$mean (min $(field "$tmp/torch" "pytorch per epoch ms" 7 | tr -d ')'))$vs" "-"
}

# --- 6. Upload bandwidth -------------------------------------------------------------

bandwidth() {
	echo "gpu-check: upload bandwidth (crates/tensor/examples/upload_bandwidth.rs)"
	# The dry run builds the example without the feature, in debug: it
	# only checks that the example runs and says it skips.
	local build=(--release --features cuda)
	if [[ $dry == 1 ]]; then
		build=()
	fi
	local cmd=(cargo run --quiet "${build[@]}" -p weft-tensor --example upload_bandwidth --)
	if [[ -n $bundle ]]; then
		cmd=("$bundle/upload_bandwidth")
	fi
	if ! "${cmd[@]}" 64 20 >"$tmp/bw" 2>&1; then
		cat "$tmp/bw" >&2
		fail "the upload bandwidth example failed"
		row "upload bandwidth" "failed" "FAIL"
		return
	fi
	if grep -q '^skipping' "$tmp/bw"; then
		if [[ $dry == 0 ]]; then
			fail "upload_bandwidth skipped on a GPU machine: $(cat "$tmp/bw")"
			row "upload bandwidth" "skipped" "FAIL"
		else
			row "upload bandwidth" "$(head -n 1 "$tmp/bw")" "skipped"
		fi
		return
	fi
	local pinned pageable engine
	pinned=$(field "$tmp/bw" pinned 2)
	pageable=$(field "$tmp/bw" pageable 2)
	engine=$(field "$tmp/bw" engine 2)
	row "upload GB/s: pinned / pageable" "$pinned / $pageable ($(awk -v a="$pinned" -v b="$pageable" 'BEGIN { printf "%.2fx", a / b }'))" "-"
	row "upload GB/s: engine's to(t, \"cuda:0\")" "$engine" "-"
}

# --- 7. The collectives on the GPUs ----------------------------------------------------

collectives() {
	local n=2 where="both on the one GPU"
	if ((ngpu >= 2)); then
		n=$ngpu
		where="one per GPU"
	fi
	echo "gpu-check: the collectives: train_digits.weft with $n trainers ($where)"
	if ! run_digits "$weft_cpu" "$tmp/cpuN" examples/train_digits.weft --devices "$n" --no-times; then
		fail "train_digits.weft --devices $n on the CPU failed"
		row "collectives ($n trainers)" "the CPU run failed" "FAIL"
		return
	fi
	if ! run_digits "$weft_gpu" "$tmp/gpuN" examples/train_digits.weft --devices "$n" --no-times; then
		fail "train_digits.weft --devices $n on the GPU failed"
		row "collectives ($n trainers)" "failed" "FAIL"
		return
	fi
	if [[ $dry == 0 ]] && ! on_gpu "$tmp/gpuN"; then
		fail "train_digits.weft --devices $n did not run on a GPU: $(head -n 1 "$tmp/gpuN")"
		row "collectives ($n trainers)" "not on a GPU" "FAIL"
		return
	fi
	compare_losses "collectives: allreduce_sum of device tensors, $n trainers ($where), vs CPU" "$tmp/cpuN" "$tmp/gpuN"
	collectives_note="train_digits.weft --devices $n: $where."
	if ((ngpu < 2)); then
		collectives_note+=" Not run: device tensors on two GPUs (one GPU here)."
	fi
	collectives_note+=" Not run: world() across processes (needs the mpi feature and mpirun, docs/distributed.md)."
}

# --- 8. Two trainers on the CPU: the pipeline's overlap on this machine's cores ------------

two_trainers() {
	echo "gpu-check: the pipeline with two trainers on the CPU ($(nproc) CPUs)"
	local i o=()
	for i in 1 2 3; do
		if ! run_digits "$weft_cpu" "$tmp/two$i" examples/train_digits.weft --devices 2; then
			fail "train_digits.weft --devices 2 on the CPU failed"
			row "pipeline on the CPU, two trainers" "failed" "FAIL"
			return
		fi
		o+=("$(field "$tmp/two$i" overlap 2)")
	done
	local med verdict="goal met"
	med=$(printf '%s\n' "${o[@]}" | sort -g | sed -n 2p)
	if awk -v o="$med" 'BEGIN { exit !(o > 1.15) }'; then
		verdict="goal missed"
	fi
	row "pipeline on the CPU, two trainers: overlap, median of 3 ($(nproc) CPUs; goal at most 1.15)" "$med (runs: ${o[*]})" "$verdict"
}

# --- Report ------------------------------------------------------------------------------

gpu_info() {
	if [[ $dry == 1 ]]; then
		ngpu=1
		gpu_name="(dry run, no GPU)"
		driver="-"
		cuda="-"
		return
	fi
	local all
	gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || echo unknown)
	driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null || echo unknown)
	all=$(nvidia-smi 2>/dev/null || true)
	cuda=$(awk 'match($0, /CUDA Version: *[0-9.]+/) { s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); print s; exit }' <<<"$all")
	cuda=${cuda:-unknown}
	ngpu=$(grep -c '^GPU ' <<<"$(nvidia-smi -L 2>/dev/null || true)" || true)
}

summary() {
	printf '%-62s | %-50s | %s\n' check result verdict
	printf '%s\n' "$(printf '%.0s-' {1..130})"
	local r
	for r in "${rows[@]}"; do
		IFS='|' read -r c v s <<<"$r"
		printf '%-62s | %-50s | %s\n' "$c" "$v" "$s"
	done
}

# The figures section of docs/gpu.md, in markdown.
figures() {
	local commit
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
		commit+=" (with uncommitted changes)"
	fi
	echo "## Figures"
	echo
	if [[ -n $bundle && -f $bundle/commit ]]; then
		commit+="; binaries built from $(cut -c1-7 "$bundle/commit") by scripts/gpu-bundle.sh"
	fi
	echo "Measured by \`scripts/gpu-check.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit:"
	echo "$gpu_name (GPU 0 of $ngpu), driver $driver, CUDA $cuda (as nvidia-smi reports it); $(nproc) CPUs."
	echo "$epochs epochs, seed 1, $([[ $dry == 1 ]] && echo "a dry run on the CPU" || echo "release builds"). Result: $([[ $failures == 0 ]] && echo "every check passed" || echo "**$failures check(s) failed**")."
	echo
	echo "| check | result | verdict |"
	echo "|---|---|---|"
	local r
	for r in "${rows[@]}"; do
		IFS='|' read -r c v s <<<"$r"
		echo "| $c | $v | $s |"
	done
	echo
	if [[ -s $tmp/pipe.busy ]]; then
		echo "The pipeline's stages (busy ms, from the program):"
		echo
		echo '```'
		sed 's/^    //' "$tmp/pipe.busy"
		echo '```'
		echo
	fi
	echo "Collectives: ${collectives_note:-not run}"
	echo
	echo "The commands (what the script ran):"
	echo
	if [[ -n $bundle ]]; then
		echo "The binaries and test executables were built beforehand by \`scripts/gpu-bundle.sh\` (the same cargo commands, release) and run from \`WEFT_GPU_BUNDLE\`."
		echo
	fi
	echo '```'
	echo "cargo build --release -p weft                   # the CPU binary"
	echo "cargo build --release -p weft --features cuda   # the GPU binary"
	echo "scripts/nvrtc-check.sh --gpu   # or, where cuBLAS and NVRTC 13 load already, its three cargo test commands"
	echo "cargo test --release -p weft-tensor --features cuda -- --test-threads 1"
	echo "weft run examples/train_digits.weft --seed 1 -- --epochs $epochs --devices 1 --no-times   # CPU and GPU binaries"
	echo "weft run examples/train_digits.weft --seed 1 -- --epochs $epochs --devices 1              # GPU, with nvidia-smi sampling"
	echo "nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 100"
	echo "weft run examples/train_digits_seq.weft --seed 1 -- --epochs $epochs --devices 1"
	echo "python3 crates/weft/benches/pytorch/train_digits_torch.py --epochs $epochs --device cuda"
	echo "cargo run --release -p weft-tensor --features cuda --example upload_bandwidth -- 64 20"
	echo "weft run examples/train_digits.weft --seed 1 -- --epochs $epochs --devices N --no-times   # N = 2, or the GPUs; CPU and GPU binaries"
	echo "weft run examples/train_digits.weft --seed 1 -- --epochs $epochs --devices 2              # CPU binary, three runs"
	echo '```'
}

# Replaces what lies between the gpu-check markers of $doc with FILE.
splice() {
	local new=$1 out=$2
	if ! grep -q '^<!-- gpu-check:begin' "$doc" || ! grep -q '^<!-- gpu-check:end' "$doc"; then
		echo "gpu-check: $doc has no gpu-check markers; the figures are in $new" >&2
		return 1
	fi
	awk -v new="$new" '
		/^<!-- gpu-check:begin/ { print; while ((getline l < new) > 0) print l; skip = 1; next }
		/^<!-- gpu-check:end/ { skip = 0 }
		!skip { print }' "$doc" >"$out"
}

build
gpu_info
gpu_tests
loss_curve
pipeline
sequential
pytorch
bandwidth
collectives
two_trainers

echo
summary
figures >"$tmp/figures.md"
if [[ $dry == 1 ]]; then
	out=$(mktemp --suffix=-gpu.md)
	splice "$tmp/figures.md" "$out"
	echo "gpu-check: dry run: the report is in $out ($doc left unchanged)"
else
	splice "$tmp/figures.md" "$tmp/gpu.md"
	cp "$tmp/gpu.md" "$doc"
	echo "gpu-check: wrote $doc"
fi
if ((failures > 0)); then
	echo "gpu-check: $failures check(s) FAILED" >&2
	exit 1
fi
echo "gpu-check: every check passed"
