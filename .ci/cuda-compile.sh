#!/usr/bin/env bash
# Compile-check every CUDA source under ffi/cuda for sm_90 (Hopper) and sm_100a (Blackwell) with
# nvcc from the CUDA 13 pip wheels (the -cu12 wheels ship no nvcc), host compiler g++-12. `-c`
# only: no GPU is needed. Running the kernels is ffi/cuda/run-gpu-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned to the versions the kernels were last checked with.
python3 -m pip install --quiet --disable-pip-version-check \
  nvidia-cuda-nvcc==13.5.37 nvidia-cuda-runtime==13.5.37 nvidia-cuda-crt==13.5.37 nvidia-cuda-cccl==13.3.5.0.6
NV_ROOT="$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])')"
NVCC="$(ls "$NV_ROOT"/cu*/bin/nvcc | sort -V | tail -n 1)"
if ! command -v g++-12 >/dev/null; then
  apt-get update -qq && apt-get install -y -qq g++-12
fi
"$NVCC" --version | tail -n 2
g++-12 --version | head -n 1

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
status=0
while IFS= read -r cu; do
  obj="$OUT/$(basename "$cu" .cu).o"
  if "$NVCC" -ccbin g++-12 -std=c++17 -Iinclude -Iffi/cuda \
      -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100a,code=sm_100a \
      -Xcompiler -Wall,-Wextra -Werror all-warnings -c "$cu" -o "$obj"; then
    echo "ok   $cu (sm_90, sm_100a)"
  else
    echo "FAIL $cu"
    status=1
  fi
done < <(find ffi/cuda -name '*.cu' | sort)
exit $status
