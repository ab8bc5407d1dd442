#!/usr/bin/env python3
"""Write the committed seed corpora (fuzz/corpus/<target>/seed-*) from the golden vectors.

Run from anywhere: python3 fuzz/make_seeds.py. Deterministic; seeds are small valid inputs
that start the fuzzer inside the deep decoder paths.
"""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "tests", "golden")
FORMATS = ["BF16", "FP32", "I32", "Q4G64_F16S", "Q5G64_F16S", "Q6G64_F16S", "W8G32_F16S",
           "NVFP4", "FP8_E4M3FN_ROW_BF16S"]
LAYOUTS = ["contiguous-le-v1", "row-split-k128-v1", "blockscale-k16-m128x4-v1", "row-scale-v1"]


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


for i, n in enumerate(FORMATS + LAYOUTS + ["FP16", "Q4G32_F16S", "q4g64_f16s", " BF16", "BF16_CTRL"]):
    write("names", "%02d" % i, n.encode())

def golden_cases():
    """(case, meta, shape, format id, layout id) of every golden case, in name order."""
    for case in sorted(os.listdir(GOLDEN)):
        meta_path = os.path.join(GOLDEN, case, "case.txt")
        if not os.path.exists(meta_path):
            continue
        meta = dict(l.split("=", 1) for l in open(meta_path).read().splitlines() if "=" in l)
        shape = [int(x) for x in meta["shape"].split(",") if x]
        yield case, meta, shape, FORMATS.index(meta["format"]) + 1, LAYOUTS.index(meta["layout"]) + 1


for case, meta, shape, fid, lid in golden_cases():
    # descriptor: format id, layout id, rank, then u64 dims (small values keep the top bit clear).
    write("descriptor", case, bytes([fid, lid, len(shape)]) + b"".join(struct.pack("<Q", d) for d in shape))
    if len(shape) != 2:
        continue
    n, k = shape
    payload = open(os.path.join(GOLDEN, case, "payload.bin"), "rb").read()
    if n > 140 or n < 1:
        continue
    if meta["format"] == "NVFP4":
        if k > 320:
            continue
        head = bytes([fid - 1, n - 1, k // 16 - 1, 0, 0])
    else:
        if k > 400:
            continue
        # The target takes 1 + head[1] % 24 rows outside NVFP4: mode 1 stretches the payload to
        # the exact length of that shape.
        head = bytes([fid - 1, n - 1, (k - 1) & 0xFF, (k - 1) >> 8, 0 if n <= 24 else 1])
    write("layout_payload", case, head + payload)

# c_abi_codecs: format, layout, rows - 1, (k - 1) as u16, sel 0 (exact lengths), op, spare; then
# the payload bytes (the source of every buffer the target builds). One seed per operation.
for case, meta, shape, fid, lid in golden_cases():
    if len(shape) != 2 or not (1 <= shape[0] <= 40 and 1 <= shape[1] <= 600):
        continue
    n, k = shape
    payload = open(os.path.join(GOLDEN, case, "payload.bin"), "rb").read()
    for op in range(8):
        head = bytes([fid - 1, lid - 1, n - 1, (k - 1) & 0xFF, (k - 1) >> 8, 0, op | (2 << 3), 1])
        write("c_abi_codecs", "%s-op%d" % (case, op), head + payload)
