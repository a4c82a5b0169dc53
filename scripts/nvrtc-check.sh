#!/usr/bin/env bash
# Checks the CUDA backend without a GPU: compiles every kernel's CUDA C with
# NVRTC (tests/cuda_kernels_compile.rs) and checks the cuBLAS arguments
# against a reference SGEMM (the unit tests of src/device/cuda.rs). NVRTC
# needs no driver and no device, only libnvrtc.so.13, which this script
# installs from PyPI's `nvidia-cuda-nvrtc` wheel (CUDA 13) when missing:
#
#   python3 -m pip install --target "$WEFT_NVRTC_DIR" 'nvidia-cuda-nvrtc>=13,<14'
#
# cudarc (feature dynamic-loading) dlopens libnvrtc by name (libnvrtc.so,
# libnvrtc.so.13, ...), so the wheel's lib directory goes on LD_LIBRARY_PATH.
# It has to be set before the test starts: the dynamic loader reads it once.
# By hand, the same check is:
#
#   LD_LIBRARY_PATH=$WEFT_NVRTC_DIR/nvidia/cu13/lib \
#     cargo test --features cuda --test cuda_kernels_compile -- --nocapture
#
# Environment:
#   WEFT_NVRTC_DIR  where the wheel is installed (default ~/.cache/weft-nvrtc)
#
# Fails when the wheel cannot be installed, when libnvrtc still does not
# load (the test would only have skipped), or when a test fails.
set -euo pipefail

cd "$(dirname "$0")/.."
dir=${WEFT_NVRTC_DIR:-$HOME/.cache/weft-nvrtc}

find_lib() {
    find "$dir" -name 'libnvrtc.so.13' -print -quit 2>/dev/null || true
}

lib=$(find_lib)
if [ -z "$lib" ]; then
    echo "nvrtc-check: installing nvidia-cuda-nvrtc (CUDA 13) into $dir"
    mkdir -p "$dir"
    python3 -m pip install --quiet --disable-pip-version-check --target "$dir" \
        'nvidia-cuda-nvrtc>=13,<14'
    lib=$(find_lib)
fi
if [ -z "$lib" ]; then
    echo "nvrtc-check: libnvrtc.so.13 not found under $dir after installing the wheel" >&2
    exit 1
fi
libdir=$(dirname "$lib")
echo "nvrtc-check: libnvrtc from $libdir"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cargo test --features cuda --lib device::cuda

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --features cuda --test cuda_kernels_compile -- --nocapture 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
    exit "$status"
fi
if grep -q '^skipping' "$log"; then
    echo "nvrtc-check: the test skipped although libnvrtc is in $libdir" >&2
    exit 1
fi
echo "nvrtc-check: the kernels compile with NVRTC"
