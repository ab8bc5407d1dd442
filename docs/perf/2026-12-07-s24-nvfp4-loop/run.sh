#!/usr/bin/env bash
# Times bare copies of the AVX2 NVFP4 `F32` chunk loop before and after session 24's change, and
# of the binary16 ring loop tried and dropped (see README.md). Needs gcc and python3 on an x86-64
# CPU with AVX2, FMA and F16C; prints cycles per 128 weights (the best of 30 runs of 10^6
# iterations; CLOCK_GHZ, default 3.66, converts seconds to cycles). Uses the generator and the
# driver of ../2026-12-07-s23-loop-floor/.
set -euo pipefail
cd "$(dirname "$0")"
f=../2026-12-07-s23-loop-floor
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
best() { gcc -O2 -DGHZ="${CLOCK_GHZ:-3.66}" "$f/drv.c" "$1" -o "$t/d" 2>/dev/null; echo "$("$t/d") $("$t/d") $("$t/d")"; }
for l in nvfp4-loop-before nvfp4-loop-after ring-compiled-loop; do
  python3 "$f/gen.py" "$l.s" "$t/a.S" 2>/dev/null
  # The scalar stand-ins independent of each other (gen.py chains them through one register).
  sed -i 's/add \$1, %r10/lea 1(%r12), %r10/' "$t/a.S"
  python3 "$f/gen.py" "$l.s" "$t/n.S" noscalar 2>/dev/null
  echo "$l, as compiled: $(best "$t/a.S")"
  echo "$l, without scalar bookkeeping and prefetches: $(best "$t/n.S")"
done
for d in 1 2 3; do
  python3 ring.py "$d" "$t/r.S"
  echo "ring, $d chunks ahead (per 4 chunks): $(best "$t/r.S")"
done
