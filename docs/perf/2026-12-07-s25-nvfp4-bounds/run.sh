#!/usr/bin/env bash
# Times the bare copy of the AVX2 NVFP4 `F32` chunk loop (session 24's listing,
# ../2026-12-07-s24-nvfp4-loop/nvfp4-loop-after.s, without its scalar bookkeeping and prefetches)
# and variants of it in which one class of vector instructions is replaced, to see which class
# bounds the loop (see README.md). A variant is not a correct kernel. Needs gcc and python3 on an
# x86-64 CPU with AVX2, FMA and F16C; prints cycles per 128 weights (the best of 30 runs of 10^6
# iterations, three times; CLOCK_GHZ, default 3.66, converts seconds to cycles). Uses the
# generator and the driver of ../2026-12-07-s23-loop-floor/.
set -euo pipefail
cd "$(dirname "$0")"
f=../2026-12-07-s23-loop-floor
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 "$f/gen.py" ../2026-12-07-s24-nvfp4-loop/nvfp4-loop-after.s "$t/n.S" noscalar 2>/dev/null
run() {
  sed -E "$2" "$t/n.S" > "$t/v.S"
  gcc -O2 -DGHZ="${CLOCK_GHZ:-3.66}" "$f/drv.c" "$t/v.S" -o "$t/d" 2>/dev/null
  echo "$1: $("$t/d") $("$t/d") $("$t/d")"
}
y='%ymm[0-9]+'
run "as compiled" ''
run "conversions as register moves" "s/vcvtdq2ps ($y),($y)/vmovaps \1,\2/"
run "conversions as ANDs" "s/vcvtdq2ps ($y),($y)/vpand \1,\1,\2/"
run "byte shuffles as ANDs" "s/vpshufb ($y),($y),($y)/vpand \1,\2,\3/"
run "the byte-0 moves as byte shuffles (vpslld as vpshufb)" \
  "s/vpslld \\\$0x18,($y),($y)/vpshufb %ymm11,\1,\2/"
run "FMAs and multiplications as ANDs" \
  "s/vfmadd2(31|13)ps ([^,]+),($y),($y)/vpand \2,\3,\4/; s/vmulps ([^,]+),($y),($y)/vpand \1,\2,\3/"
run "the product chains cut (every FMA a multiplication)" \
  "s/vfmadd2(31|13)ps ([^,]+),($y),($y)/vmulps \2,\3,\4/"
run "FMA memory operands as a register" "s/(vfmadd231ps|vmulps) 0x[0-9a-f]+\(%r13\),/\1 %ymm6,/"
