#!/usr/bin/env bash
# Times the bare copies of the AVX2 Q5 and Q4 `F32` chunk loops and the pipe probe (see README.md).
# Needs gcc and python3 on an x86-64 CPU with AVX2 and FMA; prints cycles per loop iteration
# (the best of 30 runs of 10^6 iterations; CLOCK_GHZ, default 3.66, converts seconds to cycles).
set -euo pipefail
cd "$(dirname "$0")"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
run() { gcc -O2 -DGHZ="${CLOCK_GHZ:-3.66}" drv.c "$1" -o "$t/d" 2>/dev/null; echo "$2: $("$t/d") $("$t/d") $("$t/d")"; }
for l in q5-loop q4-pair-loop; do
  python3 gen.py "$l.s" "$t/$l.S"
  python3 gen.py "$l.s" "$t/$l-noscalar.S" noscalar
  run "$t/$l.S" "$l as compiled"
  run "$t/$l-noscalar.S" "$l without scalar bookkeeping and prefetches"
  sed -E 's/vcvtdq2ps (%ymm[0-9]+),(%ymm[0-9]+)/vmovaps \1,\2/' "$t/$l-noscalar.S" > "$t/a.S"
  run "$t/a.S" "$l, conversions as moves"
  sed -E 's/vcvtdq2ps (%ymm[0-9]+),(%ymm[0-9]+)/vpand \1,\1,\2/; s/vpshufb (%ymm[0-9]+),(%ymm[0-9]+),(%ymm[0-9]+)/vpand \1,\2,\3/; s/vpsllvd ([^,]+),(%ymm[0-9]+),(%ymm[0-9]+)/vpand \1,\2,\3/; s/vps[rl]l[wd] \$0x[0-9a-f]+,(%ymm[0-9]+),(%ymm[0-9]+)/vpand \1,\1,\2/' "$t/$l-noscalar.S" > "$t/b.S"
  run "$t/b.S" "$l, shuffles, shifts and conversions as ANDs"
  sed -E 's/vfmadd(231|213|132)ps ([^,]+),(%ymm[0-9]+),(%ymm[0-9]+)/vpand \2,\3,\4/; s/vmulps ([^,]+),(%ymm[0-9]+),(%ymm[0-9]+)/vpand \1,\2,\3/' "$t/$l-noscalar.S" > "$t/c.S"
  run "$t/c.S" "$l, FMAs and multiplications as ANDs"
done
gcc -O2 -mavx2 -mfma pipes.c -o "$t/p" && "$t/p"
