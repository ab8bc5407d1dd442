#!/usr/bin/env bash
# Build and run the CUDA kernel tests against the CPU oracle, and the GEMV benchmark, on a machine
# with an NVIDIA GPU. Finishes in well under 5 minutes (compile ~1-2 min for the one native
# architecture, tests + benchmark < 1 min) and prints a summary:
#   - dequantize f32/BF16 per format: bit-exact vs ninfer_decode_rows_* (the Rust oracle);
#   - GEMV per format, batch 1..8, f32/BF16 activations: |y - y_ref| <= 4 K 2^-24 sum|w x|;
#   - launcher error paths;
#   - GEMV GB/s of weight bytes on [8192, 8192] (batch 1 and 8, weights rotated over copies
#     larger than L2) and the ratios to the device's read bandwidth and to its device-to-device
#     copy bandwidth (read + write bytes/s), both measured in the same run.
# nvcc: $NVCC, else nvcc on PATH or in /usr/local/cuda, else the CUDA 13 pip wheel (installed if
# missing). The Rust library: $NINFER_FFI_LIB if set (a libninfer_ffi.a built elsewhere, for a GPU
# machine without cargo), else `cargo build --release -p ninfer-ffi`. Exit status: 0 all passed,
# 1 a test failed, 2 no GPU, 3 a CUDA/setup error.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run-gpu-tests: no NVIDIA GPU visible (nvidia-smi); nothing was run" >&2
  exit 2
fi
nvidia-smi -L

NVCC="${NVCC:-}"
CUDA_LIB=()
if [ -z "$NVCC" ]; then
  if command -v nvcc >/dev/null; then
    NVCC="$(command -v nvcc)"
  elif [ -x /usr/local/cuda/bin/nvcc ]; then
    NVCC=/usr/local/cuda/bin/nvcc
  else
    python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl
    NV_ROOT="$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])')"
    NVCC="$(ls "$NV_ROOT"/cu*/bin/nvcc | sort -V | tail -n 1)"
    CUDA_LIB=(-L"$(dirname "$(dirname "$NVCC")")/lib")
  fi
fi
CCBIN=()
if command -v g++-12 >/dev/null; then CCBIN=(-ccbin g++-12); fi
"$NVCC" --version | tail -n 1

if [ -n "${NINFER_FFI_LIB:-}" ]; then
  LIB="$NINFER_FFI_LIB"  # a prebuilt libninfer_ffi.a (a GPU machine without Rust)
else
  TARGET_DIR="${CARGO_TARGET_DIR:-target}"
  cargo build --release -p ninfer-ffi
  LIB="$TARGET_DIR/release/libninfer_ffi.a"
fi

OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
echo "building ffi/cuda (native architecture) into $OUT"
"$NVCC" "${CCBIN[@]}" -O3 -std=c++17 -arch=native -Iinclude -Iffi/cuda \
  ffi/cuda/ninfer_kernels.cu ffi/cuda/tests/gpu_tests.cu "$LIB" "${CUDA_LIB[@]}" -lpthread -ldl -lm \
  -o "$OUT/gpu_tests"
timeout 240 "$OUT/gpu_tests" | tee "$OUT/gpu_tests.log"
