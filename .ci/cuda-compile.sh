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
# One nvcc per source and architecture, two at a time (the CI machine has two cores; the
# kernels' many template instances take over a minute per architecture).
compile() {  # compile SOURCE ARCH
  local cu="$1" arch="$2"
  local obj="$OUT/$(basename "$cu" .cu).$arch.o"
  if "$NVCC" -ccbin g++-12 -std=c++17 -Iinclude -Iffi/cuda \
      -gencode "arch=compute_${arch#sm_},code=$arch" \
      -Xcompiler -Wall,-Wextra -Werror all-warnings -c "$cu" -o "$obj"; then
    echo "ok   $cu ($arch)"
  else
    echo "FAIL $cu ($arch)"
    return 1
  fi
}
export -f compile
export NVCC OUT
status=0
find ffi/cuda -name '*.cu' | sort | while IFS= read -r cu; do
  printf '%s sm_90\n%s sm_100a\n' "$cu" "$cu"
done | xargs -P 2 -n 2 bash -c 'compile "$0" "$1"' || status=1
exit $status
