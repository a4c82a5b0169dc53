#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs into one directory, for a GPU
# machine that has no Rust toolchain (docs/gpu.md, "A GPU machine without
# Rust"): build here, copy the directory there, and run
#
#   WEFT_GPU_BUNDLE=DIR scripts/gpu-check.sh
#
# in a checkout of the same commit. DIR then holds:
#
#   weft-cpu, weft-gpu   target/release/weft without and with --features cuda
#   upload_bandwidth     the weft-tensor example, release, --features cuda
#   tests/NAME           every weft-tensor test executable, release,
#                        --features cuda (NAME is the test's target name;
#                        the crate's unit tests are tests/lib)
#   commit               the commit they were built from
#
# The binaries are stripped (strip --strip-all). The CUDA libraries are
# not in it: the backend loads the driver, cuBLAS and NVRTC at run time
# (docs/tensors.md, "The CUDA backend").
#
# Usage: scripts/gpu-bundle.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# != 1 ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
rm -rf "$dir"
mkdir -p "$dir/tests"

echo "gpu-bundle: weft (release, CPU only)"
cargo build --release --quiet -p weft
cp target/release/weft "$dir/weft-cpu"
echo "gpu-bundle: weft (release, --features cuda)"
cargo build --release --quiet -p weft --features cuda
cp target/release/weft "$dir/weft-gpu"

echo "gpu-bundle: the weft-tensor tests and upload_bandwidth (release, --features cuda)"
# One JSON line per artifact; the executables are the test binaries.
cargo test --release --quiet -p weft-tensor --features cuda --no-run --message-format=json |
	jq -r 'select(.executable != null) | "\(.target.kind[0]) \(.target.name) \(.executable)"' |
	while read -r kind name exe; do
		case $kind in
			lib) name=lib ;;
			test) ;;
			*) continue ;; # the example comes below
		esac
		cp "$exe" "$dir/tests/$name"
	done
cargo build --release --quiet -p weft-tensor --features cuda --example upload_bandwidth
cp target/release/examples/upload_bandwidth "$dir/upload_bandwidth"

strip --strip-all "$dir"/weft-* "$dir/upload_bandwidth" "$dir"/tests/*
git rev-parse HEAD >"$dir/commit"
echo "gpu-bundle: $dir ($(du -sh "$dir" | cut -f1)): $(ls "$dir/tests" | tr '\n' ' ')"
