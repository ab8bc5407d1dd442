#!/usr/bin/env bash
# The C11 and C++17 consumers of include/ninfer.h and the host build of the CUDA decode header,
# built against libninfer_ffi.a and run again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the two consumers under valgrind (memcheck, definite leaks are errors). `cargo test -p
# ninfer-ffi` already builds and runs them without instrumentation (ffi/tests/c_consumers.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build -p ninfer-ffi
LIB="$TARGET_DIR/debug/libninfer_ffi.a"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
CC="${CC:-cc}"
CXX="${CXX:-c++}"
WARN=(-Wall -Wextra -Werror -pedantic)
INC=(-Iinclude -Iffi/cuda -Itests/c)
LINK=(-lpthread -ldl -lm)
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1)

echo "--- AddressSanitizer + UBSan"
"$CC" -std=c11 "${WARN[@]}" "${SAN[@]}" "${INC[@]}" tests/c/consumer.c "$LIB" "${LINK[@]}" -o "$OUT/consumer_c_asan"
"$CXX" -std=c++17 "${WARN[@]}" "${SAN[@]}" "${INC[@]}" tests/c/consumer.cpp "$LIB" "${LINK[@]}" -o "$OUT/consumer_cpp_asan"
"$CXX" -std=c++17 "${WARN[@]}" "${SAN[@]}" "${INC[@]}" -x c++ tests/c/cuda_decode_host.cpp -x none "$LIB" "${LINK[@]}" \
  -o "$OUT/cuda_decode_host_asan"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
"$OUT/consumer_c_asan"
"$OUT/consumer_cpp_asan"
"$OUT/cuda_decode_host_asan"

if command -v valgrind >/dev/null; then
  echo "--- valgrind memcheck"
  "$CC" -std=c11 "${WARN[@]}" -g -O1 "${INC[@]}" tests/c/consumer.c "$LIB" "${LINK[@]}" -o "$OUT/consumer_c"
  "$CXX" -std=c++17 "${WARN[@]}" -g -O1 "${INC[@]}" tests/c/consumer.cpp "$LIB" "${LINK[@]}" -o "$OUT/consumer_cpp"
  for exe in consumer_c consumer_cpp; do
    valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite "$OUT/$exe"
  done
else
  echo "--- valgrind not installed: memcheck stage not run (ASan/UBSan stage above did run)"
fi
echo "c-consumers: ok"
