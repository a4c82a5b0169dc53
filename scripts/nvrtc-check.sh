#!/usr/bin/env bash
# Checks the CUDA backend without a GPU: compiles every kernel's CUDA C with
# NVRTC (crates/tensor/tests/cuda_kernels_compile.rs) and checks the cuBLAS arguments
# against a reference SGEMM (the unit tests of crates/tensor/src/device/cuda.rs). NVRTC
# needs no driver and no device, only libnvrtc.so.13, which this script
# installs from PyPI's `nvidia-cuda-nvrtc` wheel (CUDA 13) when missing:
#
#   python3 -m pip install --target "$WEFT_NVRTC_DIR/nvidia-cuda-nvrtc" 'nvidia-cuda-nvrtc>=13,<14'
#
# cudarc (feature dynamic-loading) dlopens libnvrtc by name (libnvrtc.so,
# libnvrtc.so.13, ...), so the wheel's lib directory goes on LD_LIBRARY_PATH.
# It has to be set before the test starts: the dynamic loader reads it once.
# By hand, the same check is:
#
#   LD_LIBRARY_PATH=$WEFT_NVRTC_DIR/nvidia-cuda-nvrtc/nvidia/cu13/lib \
#     cargo test -p weft-tensor --features cuda --test cuda_kernels_compile -- --nocapture
#
# With --gpu (on a machine with an NVIDIA driver), it also installs cuBLAS
# from the `nvidia-cublas` wheel into the same directory, which the backend
# needs besides the driver, and runs the GPU-vs-CPU tests
# (crates/tensor/tests/tensor_gpu.rs), which then must not skip.
#
# Environment:
#   WEFT_NVRTC_DIR  where the wheels are installed (default ~/.cache/weft-nvrtc)
#
# Fails when a wheel cannot be installed, when libnvrtc still does not
# load (the test would only have skipped), or when a test fails.
set -euo pipefail

cd "$(dirname "$0")/.."
dir=${WEFT_NVRTC_DIR:-$HOME/.cache/weft-nvrtc}
gpu=0
case "${1:-}" in
    --gpu) gpu=1 ;;
    "") ;;
    *) echo "usage: $0 [--gpu]" >&2; exit 2 ;;
esac

# lib_dir SONAME WHEEL: the directory holding SONAME under $dir, after
# installing WHEEL (CUDA 13 builds) into $dir/WHEEL if it is missing (one
# directory per wheel: pip --target does not merge into an existing tree).
lib_dir() {
    local lib
    lib=$(find "$dir" -name "$1" -print -quit 2>/dev/null || true)
    if [ -z "$lib" ]; then
        echo "nvrtc-check: installing $2 (CUDA 13) into $dir/$2" >&2
        mkdir -p "$dir/$2"
        python3 -m pip install --quiet --disable-pip-version-check --target "$dir/$2" \
            "$2>=13,<14" >&2
        lib=$(find "$dir" -name "$1" -print -quit 2>/dev/null || true)
    fi
    if [ -z "$lib" ]; then
        echo "nvrtc-check: $1 not found under $dir after installing $2" >&2
        exit 1
    fi
    dirname "$lib"
}

libdir=$(lib_dir libnvrtc.so.13 nvidia-cuda-nvrtc)
echo "nvrtc-check: libnvrtc from $libdir"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "$gpu" = 1 ]; then
    blasdir=$(lib_dir libcublas.so.13 nvidia-cublas)
    echo "nvrtc-check: libcublas from $blasdir"
    export LD_LIBRARY_PATH="$blasdir:$LD_LIBRARY_PATH"
fi

cargo test -p weft-tensor --features cuda --lib device::cuda

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Runs `cargo test ARGS...` with its output shown; stops the script if the
# tests fail, or if one printed that it skipped (MESSAGE says why that is
# an error here).
run_unskipped() {
    local message=$1 status
    shift
    set +e
    cargo test "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        exit "$status"
    fi
    # A skip is an error, but for the check that only applies without a
    # GPU (without_a_gpu_a_cuda_build_reports_why_once, which skips on one).
    if awk '/skipping/ && !/^skipping without_a_gpu/ { s = 1 } END { exit !s }' "$log"; then
        echo "nvrtc-check: $message" >&2
        exit 1
    fi
}

run_unskipped "the test skipped although libnvrtc is in $libdir" \
    -p weft-tensor --features cuda --test cuda_kernels_compile -- --nocapture
echo "nvrtc-check: the kernels compile with NVRTC"

if [ "$gpu" = 1 ]; then
    run_unskipped "the GPU tests skipped (no usable GPU; see the reason above)" \
        -p weft-tensor --features cuda --test tensor_gpu -- --nocapture --test-threads 1
    echo "nvrtc-check: the GPU kernels match the CPU kernels"
fi
