#!/usr/bin/env python3
"""Independent generator of golden byte vectors for the four registered storage layouts.

Written from ../shared/spec/layouts.md (bytes) and numeric-formats.txt (numbers) only;
it shares no code with the Rust workspace. Every case is built twice over: a vectorised
numpy packer writes `payload.bin`, and a scalar per-element reader that follows the spec's
sentences re-reads it and must recover the logical words. Sizes are asserted against the
layout formulas, padding against the zero rule, and NVFP4 scale offsets against the spec's
worked values.

Usage:
    python3 tests/golden/gen_golden.py           # (re)write tests/golden/<case>/...
    python3 tests/golden/gen_golden.py --check   # verify the committed files, write nothing

Deterministic: random choices come from a fixed-seed splitmix64 written here (not numpy's
generators, whose streams numpy does not promise to keep across releases).
"""

import os
import shutil
import sys
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PLANE_ALIGN = 128

LAYOUT_CONTIGUOUS = "contiguous-le-v1"
LAYOUT_ROW_SPLIT = "row-split-k128-v1"
LAYOUT_BLOCKSCALE = "blockscale-k16-m128x4-v1"
LAYOUT_ROW_SCALE = "row-scale-v1"

# numeric-formats.txt Section 1 / Section 5: code width b, group size G, legal interval.
GROUPED = {
    "Q4G64_F16S": dict(b=4, G=64, qmin=-8, qmax=7),
    "Q5G64_F16S": dict(b=5, G=64, qmin=-16, qmax=15),
    "Q6G64_F16S": dict(b=6, G=64, qmin=-32, qmax=31),
    "W8G32_F16S": dict(b=8, G=32, qmin=-127, qmax=127),
}
DIRECT_WIDTH = {"BF16": 2, "FP32": 4, "I32": 4}


def align(x, a):
    return (x + a - 1) // a * a


# ---------------------------------------------------------------------------------------------
# Deterministic randomness
# ---------------------------------------------------------------------------------------------


class SplitMix64:
    """splitmix64 (Steele, Lea, Flood 2014); fixed seed per case, identical on every host."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = seed & self.MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def randint(self, lo, hi):
        """Uniform-enough integer in [lo, hi] (modulo bias is irrelevant for test data)."""
        return lo + self.next_u64() % (hi - lo + 1)

    def choice(self, seq):
        return seq[self.randint(0, len(seq) - 1)]


# ---------------------------------------------------------------------------------------------
# Word decoders, written from the spec's formulas (exact, as Fractions)
# ---------------------------------------------------------------------------------------------


def binary16_exact(bits):
    """IEEE binary16 -> (sign, exact Fraction magnitude); finite words only."""
    sign = (bits >> 15) & 1
    e = (bits >> 10) & 0x1F
    m = bits & 0x3FF
    assert e != 31, "non-finite binary16 has no exact value"
    if e == 0:
        mag = Fraction(m, 1 << 24)  # m * 2^-24
    else:
        mag = Fraction(1024 + m, 1024) * Fraction(2) ** (e - 15)
    return sign, mag


def bf16_exact(bits):
    """BF16 (numeric-formats 3.1) -> (sign, exact magnitude); finite words only."""
    sign = (bits >> 15) & 1
    e = (bits >> 7) & 0xFF
    f = bits & 0x7F
    assert e != 255
    if e == 0:
        mag = Fraction(f) * Fraction(2) ** -133
    else:
        mag = Fraction(128 + f, 128) * Fraction(2) ** (e - 127)
    return sign, mag


def e4m3fn_exact(word):
    """E4M3FN (numeric-formats 3.3) -> (sign, exact magnitude); None for the NaN words."""
    sign = (word >> 7) & 1
    e = (word >> 3) & 0xF
    m = word & 0x7
    if e == 0:
        mag = Fraction(m) * Fraction(2) ** -9  # m == 0 gives the signed zero
    elif e <= 14:
        mag = (1 + Fraction(m, 8)) * Fraction(2) ** (e - 7)
    elif m < 7:
        mag = (1 + Fraction(m, 8)) * Fraction(2) ** 8
    else:
        return None  # e == 15, m == 7: NaN
    return sign, mag


def e2m1_exact(word):
    """E2M1 (numeric-formats 3.3): sign bit 3, exponent bits 2:1 (bias 1), mantissa bit 0."""
    sign = (word >> 3) & 1
    e = (word >> 1) & 0x3
    m = word & 0x1
    if e == 0:
        mag = Fraction(m, 2)  # subnormal: m * 2^-1
    else:
        mag = (1 + Fraction(m, 2)) * Fraction(2) ** (e - 1)
    return sign, mag


def fp32_exact(bits):
    sign = (bits >> 31) & 1
    e = (bits >> 23) & 0xFF
    f = bits & 0x7FFFFF
    assert e != 255
    if e == 0:
        mag = Fraction(f) * Fraction(2) ** -149
    else:
        mag = Fraction((1 << 23) + f, 1 << 23) * Fraction(2) ** (e - 127)
    return sign, mag


def round_f32_rne_bits(sign, mag):
    """Exact (sign, magnitude) -> binary32 bits, round to nearest, ties to even."""
    if mag == 0:
        return sign << 31
    # e with 2^e <= mag < 2^(e+1)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    quantum = Fraction(2) ** (max(e, -126) - 23)
    scaled = mag / quantum
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * r
    if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
        q += 1
    if e < -126:
        bits = q  # subnormal; q == 2^23 lands exactly on the minimum normal encoding
    else:
        bits = ((e + 127) << 23) + (q - (1 << 23))  # a carry to 2^24 bumps the exponent
    if bits >= 0x7F800000:
        bits = 0x7F800000
    return (sign << 31) | bits


# Self-checks of the decoders against the numbers printed in the spec.
assert [float(e2m1_exact(w)[1]) for w in range(8)] == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
assert all(e2m1_exact(w + 8) == (1, e2m1_exact(w)[1]) for w in range(8))
assert e4m3fn_exact(0x7F) is None and e4m3fn_exact(0xFF) is None
assert e4m3fn_exact(0x7E) == (0, Fraction(448)) and e4m3fn_exact(0x01) == (0, Fraction(1, 512))
assert binary16_exact(0x0001) == (0, Fraction(1, 1 << 24)) and binary16_exact(0x3C00)[1] == 1
assert bf16_exact(0x3F80)[1] == 1 and bf16_exact(0x0001)[1] == Fraction(2) ** -133


# numpy twins of the decoders, used to compute decoded.bin in float32 as the brief describes.
def f16_words_to_f32(words_u16):
    return np.asarray(words_u16, dtype="<u2").view("<f2").astype(np.float32)


def bf16_words_to_f32(words_u16):
    return (np.asarray(words_u16, dtype=np.uint32) << 16).astype("<u4").view("<f4")


def fp32_bits_to_f32(bits):
    return np.array([bits], dtype="<u4").view("<f4")[0]


E2M1_F32 = np.array(
    [(-1.0 if s else 1.0) * float(m) for s, m in (e2m1_exact(w) for w in range(16))], dtype=np.float32
)
E4M3FN_F32 = np.array(
    [
        np.nan if e4m3fn_exact(w) is None else (-1.0 if e4m3fn_exact(w)[0] else 1.0) * float(e4m3fn_exact(w)[1])
        for w in range(256)
    ],
    dtype=np.float32,
)
# Cross-check the numpy binary16 path against the formula for every finite positive word.
_all_f16 = np.arange(0x7C00, dtype=np.uint16)
assert all(
    Fraction(float(v)) == binary16_exact(int(w))[1] for w, v in zip(_all_f16, f16_words_to_f32(_all_f16))
)
del _all_f16


# ---------------------------------------------------------------------------------------------
# Validity (numeric-formats 3.3, 3.4, 5, 6)
# ---------------------------------------------------------------------------------------------


def f16_scale_valid(bits):
    """+0 or finite positive binary16."""
    return bits == 0x0000 or (bits >> 15 == 0 and (bits >> 10) & 0x1F != 31)


def validate_grouped(fmt, codes, scales):
    p = GROUPED[fmt]
    N, K = codes.shape
    G = p["G"]
    assert scales.shape == (N, -(-K // G))
    assert codes.min() >= p["qmin"] and codes.max() <= p["qmax"], fmt
    for n in range(N):
        for g in range(scales.shape[1]):
            s = int(scales[n, g])
            assert f16_scale_valid(s), (n, g, hex(s))
            if s == 0:
                assert not codes[n, g * G : (g + 1) * G].any(), ("zero scale with nonzero code", n, g)


def validate_nvfp4(codes, scales, divisor_bits):
    assert codes.min() >= 0 and codes.max() <= 15
    for s in scales.ravel().tolist():
        assert s >> 7 == 0 and s != 0x7F, hex(s)  # sign-zero finite (0x7f is NaN)
    sign, e = divisor_bits >> 31, (divisor_bits >> 23) & 0xFF
    assert sign == 0 and e != 255 and divisor_bits != 0, hex(divisor_bits)


def validate_fp8_row(codes, scales):
    assert not np.isin(codes, [0x7F, 0xFF]).any()
    for n, s in enumerate(scales.tolist()):
        assert s >> 15 == 0 and (s >> 7) & 0xFF != 255, hex(s)
        if s == 0:
            assert np.isin(codes[n], [0x00, 0x80]).all(), ("zero row with non-zero code", n)


# ---------------------------------------------------------------------------------------------
# Layout: contiguous-le-v1
# ---------------------------------------------------------------------------------------------


def pack_contiguous(fmt, words):
    dt = {"BF16": "<u2", "FP32": "<u4", "I32": "<u4"}[fmt]
    payload = np.asarray(words, dtype=np.uint64).astype(dt).tobytes()
    numel = int(np.prod(words.shape)) if words.ndim else 1
    assert len(payload) == numel * DIRECT_WIDTH[fmt]
    return payload


# ---------------------------------------------------------------------------------------------
# Layout: row-split-k128-v1
# ---------------------------------------------------------------------------------------------


def rowsplit_geometry(fmt, N, K):
    b, G = GROUPED[fmt]["b"], GROUPED[fmt]["G"]
    Kp = align(K, 128)
    C = Kp // 128
    row_code_bytes = C * 16 * b
    Gp = Kp // G
    scale_offset = align(N * row_code_bytes, PLANE_ALIGN)
    size = scale_offset + 2 * N * Gp
    return dict(b=b, G=G, Kp=Kp, C=C, row_code_bytes=row_code_bytes, Gp=Gp, scale_offset=scale_offset, size=size)


def pack_rowsplit(fmt, codes, scales):
    """Vectorised packer. codes: int [N, K]; scales: u16 [N, ceil(K/G)]."""
    N, K = codes.shape
    g = rowsplit_geometry(fmt, N, K)
    b = g["b"]
    u = np.zeros((N, g["Kp"]), dtype=np.uint16)
    u[:, :K] = codes.astype(np.int64) & ((1 << b) - 1)
    chunks = []
    for c in range(g["C"]):
        U = u[:, 128 * c : 128 * c + 128]
        if b == 8:
            chunk = U.astype(np.uint8)
        else:
            nib = (U[:, :64] & 0xF) | ((U[:, 64:] & 0xF) << 4)
            parts = [nib]
            if b == 5:
                hi = np.zeros((N, 16), dtype=np.uint16)
                for t in range(8):
                    hi |= ((U[:, 16 * t : 16 * t + 16] >> 4) & 1) << t
                parts.append(hi)
            elif b == 6:
                hi = np.zeros((N, 32), dtype=np.uint16)
                for p in range(4):
                    hi |= ((U[:, 32 * p : 32 * p + 32] >> 4) & 3) << (2 * p)
                parts.append(hi)
            chunk = np.concatenate(parts, axis=1).astype(np.uint8)
        assert chunk.shape == (N, 16 * b)
        chunks.append(chunk)
    code_plane = np.concatenate(chunks, axis=1)
    assert code_plane.shape == (N, g["row_code_bytes"])
    scale_plane = np.zeros((N, g["Gp"]), dtype="<u2")
    scale_plane[:, : scales.shape[1]] = scales
    payload = bytearray(g["size"])
    payload[: N * g["row_code_bytes"]] = code_plane.tobytes()
    payload[g["scale_offset"] :] = scale_plane.tobytes()
    return bytes(payload)


def read_rowsplit_scalar(fmt, N, K, payload):
    """Per-element reader written from the spec's sentences; also checks every padding rule."""
    g = rowsplit_geometry(fmt, N, K)
    b, G, rcb = g["b"], g["G"], g["row_code_bytes"]
    assert len(payload) == g["size"]
    assert not any(payload[N * rcb : g["scale_offset"]]), "gap between planes must be zero"
    codes = np.zeros((N, K), dtype=np.int64)
    for n in range(N):
        for k in range(g["Kp"]):
            c, i = divmod(k, 128)
            base = n * rcb + c * 16 * b
            if b == 8:
                u = payload[base + i]
            else:
                j, shift = (i, 0) if i < 64 else (i - 64, 4)
                u = (payload[base + j] >> shift) & 0xF
                if b == 5:
                    t, j = divmod(i, 16)
                    u |= ((payload[base + 64 + j] >> t) & 1) << 4
                elif b == 6:
                    p, j = divmod(i, 32)
                    u |= ((payload[base + 64 + j] >> (2 * p)) & 3) << 4
            q = u - (1 << b) if u >= 1 << (b - 1) else u
            if k < K:
                codes[n, k] = q
            else:
                assert u == 0, ("padding code", n, k)
    ng = -(-K // G)
    scales = np.zeros((N, ng), dtype=np.uint16)
    for n in range(N):
        for gi in range(g["Gp"]):
            off = g["scale_offset"] + 2 * (n * g["Gp"] + gi)
            s = payload[off] | (payload[off + 1] << 8)
            if gi < ng:
                scales[n, gi] = s
            else:
                assert s == 0, ("padding scale", n, gi)
    return codes, scales


def decode_grouped(fmt, codes, scales):
    """decoded = float32(float32(f16 scale) * float32(q)); cross-checked with exact rounding."""
    G = GROUPED[fmt]["G"]
    N, K = codes.shape
    s_per_k = np.repeat(scales, G, axis=1)[:, :K]
    s32 = f16_words_to_f32(s_per_k)
    q32 = codes.astype(np.float32)
    out = (s32 * q32).astype(np.float32)
    bits = out.view("<u4")
    for n in range(N):
        for k in range(K):
            ss, sm = binary16_exact(int(s_per_k[n, k]))
            q = int(codes[n, k])
            want = round_f32_rne_bits(ss ^ (q < 0), sm * abs(q))
            # q == 0 with a positive scale gives +0 both ways
            assert int(bits[n, k]) == want, (n, k)
    return out


# ---------------------------------------------------------------------------------------------
# Layout: blockscale-k16-m128x4-v1
# ---------------------------------------------------------------------------------------------


def blockscale_geometry(N, K):
    assert K >= 16 and K % 16 == 0 and N >= 1
    Kp = align(K, 64)
    Sb = Kp // 16
    Np = align(N, 128)
    nKT = Sb // 4
    scale_offset = align(N * Kp // 2, PLANE_ALIGN)
    divisor_offset = align(scale_offset + Np * Sb, PLANE_ALIGN)
    return dict(Kp=Kp, Sb=Sb, Np=Np, nKT=nKT, scale_offset=scale_offset, divisor_offset=divisor_offset,
                size=divisor_offset + 4)


def swizzle_offset(n, kb, nKT):
    return (n // 128) * nKT * 512 + (kb // 4) * 512 + (n % 32) * 16 + ((n % 128) // 32) * 4 + (kb % 4)


WORKED_SWIZZLE = [  # layouts.md, N = 200, K = 4096 (nKT = 64)
    ((0, 0), 0), ((0, 1), 1), ((0, 4), 512), ((1, 0), 16), ((31, 0), 496), ((32, 0), 4),
    ((33, 2), 22), ((64, 0), 8), ((96, 1), 13), ((127, 3), 511), ((128, 0), 32768),
    ((130, 5), 33313), ((199, 255), 65147),
]
assert blockscale_geometry(200, 4096)["nKT"] == 64
for (_n, _kb), _off in WORKED_SWIZZLE:
    assert swizzle_offset(_n, _kb, 64) == _off, (_n, _kb, swizzle_offset(_n, _kb, 64), _off)


def _check_swizzle_bijective():
    # Over a 2x2 grid of tiles every (n, kb) maps to a distinct offset inside the plane.
    Np, Sb = 256, 8
    offs = {swizzle_offset(n, kb, Sb // 4) for n in range(Np) for kb in range(Sb)}
    assert offs == set(range(Np * Sb))


_check_swizzle_bijective()


def pack_blockscale(codes, scales, divisor_bits):
    """codes: u8 [N, K] E2M1 words; scales: u8 [N, K/16] E4M3FN words; divisor: FP32 bits."""
    N, K = codes.shape
    g = blockscale_geometry(N, K)
    Kp = g["Kp"]
    c = np.zeros((N, Kp), dtype=np.uint8)
    c[:, :K] = codes
    code_plane = c[:, 0::2] | (c[:, 1::2] << 4)
    plane = np.zeros(g["Np"] * g["Sb"], dtype=np.uint8)
    n_idx, kb_idx = np.meshgrid(np.arange(N), np.arange(K // 16), indexing="ij")
    offs = ((n_idx // 128) * g["nKT"] * 512 + (kb_idx // 4) * 512 + (n_idx % 32) * 16
            + ((n_idx % 128) // 32) * 4 + (kb_idx % 4))
    plane[offs.ravel()] = scales.ravel()
    payload = bytearray(g["size"])
    payload[: N * Kp // 2] = code_plane.tobytes()
    payload[g["scale_offset"] : g["scale_offset"] + plane.size] = plane.tobytes()
    payload[g["divisor_offset"] :] = int(divisor_bits).to_bytes(4, "little")
    return bytes(payload)


def read_blockscale_scalar(N, K, payload):
    g = blockscale_geometry(N, K)
    Kp, Sb = g["Kp"], g["Sb"]
    assert len(payload) == g["size"]
    assert not any(payload[N * Kp // 2 : g["scale_offset"]])
    assert not any(payload[g["scale_offset"] + g["Np"] * Sb : g["divisor_offset"]])
    row = Kp // 2
    cp = np.frombuffer(payload, dtype=np.uint8, count=N * row).reshape(N, row)
    codes = np.empty((N, Kp), dtype=np.uint8)
    codes[:, 0::2] = cp & 0xF  # k even: bits 0..3
    codes[:, 1::2] = cp >> 4  # k odd: bits 4..7
    assert not codes[:, K:].any(), "code padding"
    scales = np.zeros((N, K // 16), dtype=np.uint8)
    seen = set()
    for n in range(g["Np"]):
        for kb in range(Sb):
            off = swizzle_offset(n, kb, g["nKT"])
            seen.add(off)
            v = payload[g["scale_offset"] + off]
            if n < N and kb < K // 16:
                scales[n, kb] = v
            else:
                assert v == 0, ("scale padding", n, kb)
    assert seen == set(range(g["Np"] * Sb))
    divisor = int.from_bytes(payload[g["divisor_offset"] : g["divisor_offset"] + 4], "little")
    return codes[:, :K].copy(), scales, divisor


def decode_nvfp4(codes, scales, divisor_bits):
    """float32(float32(e2m1 * e4m3fn) / float32(d_w)); cross-checked with exact rounding."""
    N, K = codes.shape
    s_per_k = np.repeat(scales, 16, axis=1)
    prod = (E2M1_F32[codes] * E4M3FN_F32[s_per_k]).astype(np.float32)
    out = (prod / fp32_bits_to_f32(divisor_bits)).astype(np.float32)
    bits = out.view("<u4")
    _, dmag = fp32_exact(divisor_bits)
    for n in range(N):
        for k in range(K):
            cs, cm = e2m1_exact(int(codes[n, k]))
            ss, sm = e4m3fn_exact(int(s_per_k[n, k]))
            assert round_f32_rne_bits(cs ^ ss, cm * sm) == int(prod.view("<u4")[n, k])  # product exact
            assert int(bits[n, k]) == round_f32_rne_bits(cs ^ ss, cm * sm / dmag), (n, k)
    return out


# ---------------------------------------------------------------------------------------------
# Layout: row-scale-v1
# ---------------------------------------------------------------------------------------------


def rowscale_geometry(N, K):
    scale_offset = align(N * K, PLANE_ALIGN)
    return dict(scale_offset=scale_offset, size=scale_offset + 2 * N)


def pack_rowscale(codes, scales):
    N, K = codes.shape
    g = rowscale_geometry(N, K)
    payload = bytearray(g["size"])
    payload[: N * K] = codes.astype(np.uint8).tobytes()
    payload[g["scale_offset"] :] = np.asarray(scales, dtype="<u2").tobytes()
    return bytes(payload)


def read_rowscale_scalar(N, K, payload):
    g = rowscale_geometry(N, K)
    assert len(payload) == g["size"]
    assert not any(payload[N * K : g["scale_offset"]])
    codes = np.array([[payload[n * K + k] for k in range(K)] for n in range(N)], dtype=np.uint8)
    scales = np.array(
        [payload[g["scale_offset"] + 2 * n] | payload[g["scale_offset"] + 2 * n + 1] << 8 for n in range(N)],
        dtype=np.uint16,
    )
    return codes, scales


def decode_fp8_row(codes, scales):
    """float32(e4m3fn_f32 * bf16_as_f32); cross-checked with exact rounding."""
    N, K = codes.shape
    with np.errstate(over="raise"):
        out = (E4M3FN_F32[codes] * bf16_words_to_f32(scales)[:, None]).astype(np.float32)
    bits = out.view("<u4")
    for n in range(N):
        ss, sm = bf16_exact(int(scales[n]))
        for k in range(K):
            cs, cm = e4m3fn_exact(int(codes[n, k]))
            assert int(bits[n, k]) == round_f32_rne_bits(cs ^ ss, cm * sm), (n, k)
    return out


# ---------------------------------------------------------------------------------------------
# Case construction
# ---------------------------------------------------------------------------------------------


def u16le(a):
    return np.asarray(a, dtype="<u2").tobytes()


def f32le(a):
    return np.asarray(a, dtype=np.float32).astype("<f4").tobytes()


def case_contiguous(name, fmt, shape, words, note):
    words = np.array(words, dtype=np.uint64).reshape(shape)
    payload = pack_contiguous(fmt, words)
    # Direct words are stored untouched: words.bin is the payload by definition, but build it
    # from the logical list independently and compare.
    w = DIRECT_WIDTH[fmt]
    words_bin = b"".join(int(x).to_bytes(w, "little") for x in words.ravel().tolist())
    assert words_bin == payload
    return name, [("format", fmt), ("layout", LAYOUT_CONTIGUOUS), ("shape", ",".join(map(str, shape))),
                  ("note", note)], {"payload.bin": payload, "words.bin": words_bin}


def i32_bits(v):
    return v & 0xFFFFFFFF


def contiguous_cases():
    bf16 = [
        0x0000, 0x8000,  # +0, -0
        0x0001, 0x807F,  # min positive subnormal, max-magnitude negative subnormal
        0x3F80, 0xC049,  # 1.0, about -3.14
        0x0080, 0x7F7F,  # min normal, max finite
        0x7F80, 0xFF80,  # +inf, -inf
        0x7FC0, 0xFFC1,  # quiet NaN (canonical), negative quiet NaN with payload 1
        0x7FD5,          # quiet NaN with payload 0x15
        0x7F81, 0xFF8A,  # signalling NaN payload 1, negative signalling NaN payload 0xa
    ]
    fp32 = [
        0x80000000,  # -0
        0x00000001,  # min positive subnormal 2^-149
        0x807FFFFF,  # max-magnitude negative subnormal
        0x7F800000,  # +inf
        0xFF800000,  # -inf
        0x7FC12345,  # quiet NaN with payload
        0xFF800ABC,  # negative signalling NaN with payload (quiet bit 22 clear)
    ]
    i32 = [-(2**31), 2**31 - 1, -1, 0, 1, -2, 0x12345678, -0x12345678]
    return [
        case_contiguous("bf16_specials_3x5", "BF16", (3, 5), bf16,
                        "BF16 signed zeros, subnormals, min normal, max finite, infinities, quiet and signalling NaNs with payloads"),
        case_contiguous("fp32_specials_7", "FP32", (7,), fp32,
                        "FP32 -0, subnormals, infinities, quiet NaN with payload, negative signalling NaN with payload"),
        case_contiguous("i32_extrema_2x2x2", "I32", (2, 2, 2), [i32_bits(v) for v in i32],
                        "I32 extrema -2^31 and 2^31-1, -1, 0 and a byte-order probe 0x12345678 in a rank-3 tensor"),
        case_contiguous("fp32_rank0_scalar", "FP32", (), [0x40490FDB],
                        "rank-0 FP32 scalar (numel 1) holding pi 0x40490fdb; payload is 4 bytes"),
        case_contiguous("bf16_empty_0x4", "BF16", (0, 4), [],
                        "empty BF16 tensor of shape [0,4]; payload and words.bin are empty"),
    ]


def grouped_case(name, fmt, codes, scales, note, with_decoded=True):
    codes = np.asarray(codes, dtype=np.int64)
    scales = np.asarray(scales, dtype=np.uint16)
    validate_grouped(fmt, codes, scales)
    N, K = codes.shape
    payload = pack_rowsplit(fmt, codes, scales)
    g = rowsplit_geometry(fmt, N, K)
    assert len(payload) == g["size"]
    rc, rs = read_rowsplit_scalar(fmt, N, K, payload)
    assert (rc == codes).all() and (rs == scales).all(), name
    files = {"payload.bin": payload, "codes.bin": codes.astype(np.int8).tobytes(), "scales.bin": u16le(scales)}
    if with_decoded:
        files["decoded.bin"] = f32le(decode_grouped(fmt, codes, scales))
    return name, [("format", fmt), ("layout", LAYOUT_ROW_SPLIT), ("shape", f"{N},{K}"), ("note", note)], files


def random_partial_grouped(name, fmt, N, K, seed):
    """Random valid codes with endpoints, zero-scale groups, subnormal and extreme scales."""
    p = GROUPED[fmt]
    G, qmin, qmax = p["G"], p["qmin"], p["qmax"]
    rng = SplitMix64(seed)
    ng = -(-K // G)
    codes = np.array([[rng.randint(qmin, qmax) for _ in range(K)] for _ in range(N)], dtype=np.int64)
    scales = np.array([[rng.randint(0x0400, 0x7BFF) for _ in range(ng)] for _ in range(N)], dtype=np.uint16)
    # Special scales: 0x0001 (minimum subnormal), 0x03ff (maximum subnormal), 0x7bff (maximum
    # finite), 0x3c00 (1.0) on the first (row, group) cells; +0 on the last cell.
    flat = [(n, gi) for n in range(N) for gi in range(ng)]
    assert len(flat) >= 2
    for (n, gi), s in zip(flat[:-1], [0x0001, 0x03FF, 0x7BFF, 0x3C00]):
        scales[n, gi] = s
    scales[flat[-1]] = 0x0000
    if len(flat) > 5:
        # A positive scale whose group codes are all zero (legal: the zero rule has no converse).
        codes[flat[-2][0], flat[-2][1] * G : (flat[-2][1] + 1) * G] = 0
    for n, gi in flat:
        if scales[n, gi] == 0:
            codes[n, gi * G : (gi + 1) * G] = 0
    # Endpoints in positive-scale groups: row 0 group 0, and row 0's last (partial) group.
    codes[0, 0] = qmin
    if K > 1:
        codes[0, 1] = qmax
    else:
        assert scales[1, 0] != 0
        codes[1, 0] = qmax
    last = ng - 1
    if last > 0 and scales[0, last] != 0:
        codes[0, K - 1] = qmax
        if last * G != K - 1:
            codes[0, last * G] = qmin
    assert (codes == qmin).any() and (codes == qmax).any()
    zero_groups = int((scales == 0).sum())
    note = (f"{fmt} N={N} K={K}: seeded random codes, endpoints {qmin} and {qmax}, {zero_groups} zero-scale "
            f"group(s) with zero codes, scales 0x0001/0x03ff/0x7bff, partial last group, padding zero")
    return grouped_case(name, fmt, codes, scales, note)


def row_split_cases():
    out = []
    seed = 1000
    for fmt, short in [("Q4G64_F16S", "q4"), ("Q5G64_F16S", "q5"), ("Q6G64_F16S", "q6"), ("W8G32_F16S", "w8")]:
        for N, K in [(3, 65), (3, 300)]:
            seed += 1
            out.append(random_partial_grouped(f"{short}_partial_k{K}", fmt, N, K, seed))
    out.append(random_partial_grouped("q6_partial_k1", "Q6G64_F16S", 3, 1, 2001))

    # Q4 nibble walk: row r has one nonzero code at position r whose word u = 1 << (r % 4),
    # so every nibble bit of both halves of the nibble plane is hit at every position.
    N = K = 128
    codes = np.zeros((N, K), dtype=np.int64)
    scales = np.zeros((N, 2), dtype=np.uint16)
    for r in range(N):
        u = 1 << (r % 4)
        codes[r, r] = u - 16 if u >= 8 else u
        scales[r, r // 64] = 0x3C00
    name, meta, files = grouped_case("q4_nibble_walk_k128", "Q4G64_F16S", codes, scales,
                                     "Q4 N=128 K=128: row r has one nonzero code at k=r with word 1<<(r%4) (1,2,4,-8); scale 0x3c00 on its group, 0 elsewhere")
    pl = files["payload.bin"]
    for r in range(N):
        want = bytearray(64)
        want[r % 64] = (1 << (r % 4)) << (0 if r < 64 else 4)  # byte j: u(j) low, u(j+64) high
        assert pl[r * 64 : (r + 1) * 64] == bytes(want), r
    out.append((name, meta, files))

    # Q5 high-plane walk: row r has code -16 (u = 0x10: only bit 4 set) at k = r.
    codes = np.zeros((N, K), dtype=np.int64)
    scales = np.zeros((N, 2), dtype=np.uint16)
    for r in range(N):
        codes[r, r] = -16
        scales[r, r // 64] = 0x3C00
    name, meta, files = grouped_case("q5_high_plane_walk", "Q5G64_F16S", codes, scales,
                                     "Q5 N=128 K=128: row r has code -16 (u=0x10, only the high bit) at k=r; scale 0x3c00 on its group, 0 elsewhere")
    g = rowsplit_geometry("Q5G64_F16S", N, K)
    pl = files["payload.bin"]
    for r in range(N):
        row = pl[r * g["row_code_bytes"] : (r + 1) * g["row_code_bytes"]]
        want = bytearray(80)
        want[64 + r % 16] = 1 << (r // 16)  # bit t of byte 64+j is position 16t+j
        assert row == bytes(want), r
    out.append((name, meta, files))

    # Q6 high-plane walk: rows 0..127 code 16 (u = 0x10, bit 4) at k = r; rows 128..255 code -32
    # (u = 0x20, bit 5) at k = r - 128.
    N = 256
    codes = np.zeros((N, K), dtype=np.int64)
    scales = np.zeros((N, 2), dtype=np.uint16)
    for r in range(N):
        i = r % 128
        codes[r, i] = 16 if r < 128 else -32
        scales[r, i // 64] = 0x3C00
    name, meta, files = grouped_case("q6_high_plane_walk", "Q6G64_F16S", codes, scales,
                                     "Q6 N=256 K=128: rows 0..127 code 16 (bit 4 only) at k=r, rows 128..255 code -32 (bit 5 only) at k=r-128; scale 0x3c00 on its group, 0 elsewhere")
    g = rowsplit_geometry("Q6G64_F16S", N, K)
    pl = files["payload.bin"]
    for r in range(N):
        i = r % 128
        row = pl[r * g["row_code_bytes"] : (r + 1) * g["row_code_bytes"]]
        want = bytearray(96)
        want[64 + i % 32] = 1 << (2 * (i // 32) + (0 if r < 128 else 1))
        assert row == bytes(want), r
    out.append((name, meta, files))

    # W8 endpoints.
    N, K = 2, 64
    codes = np.zeros((N, K), dtype=np.int64)
    codes[0] = [127 if k % 2 == 0 else -127 for k in range(K)]
    codes[1, :32] = -127
    codes[1, 32:] = [127, -127, 1, -1] * 8
    scales = np.array([[0x3C00, 0x0001], [0x7BFF, 0x3800]], dtype=np.uint16)
    name, meta, files = grouped_case("w8_endpoints", "W8G32_F16S", codes, scales,
                                     "W8 N=2 K=64: only the endpoints -127 (0x81) and 127 (0x7f) plus +-1; scales 0x3c00, 0x0001, 0x7bff, 0x3800")
    assert files["payload.bin"][:2] == b"\x7f\x81"
    out.append((name, meta, files))
    return out


def nvfp4_case(name, codes, scales, divisor_bits, note, omit_codes=False):
    codes = np.asarray(codes, dtype=np.uint8)
    scales = np.asarray(scales, dtype=np.uint8)
    validate_nvfp4(codes, scales, divisor_bits)
    N, K = codes.shape
    payload = pack_blockscale(codes, scales, divisor_bits)
    g = blockscale_geometry(N, K)
    assert len(payload) == g["size"]
    rc, rs, rd = read_blockscale_scalar(N, K, payload)
    assert (rc == codes).all() and (rs == scales).all() and rd == divisor_bits, name
    meta = [("format", "NVFP4"), ("layout", LAYOUT_BLOCKSCALE), ("shape", f"{N},{K}"),
            ("divisor", f"0x{divisor_bits:08x}")]
    files = {"payload.bin": payload, "scales.bin": scales.tobytes()}
    if omit_codes:
        assert not codes.any()
        meta.append(("codes", "zero"))
    else:
        files["codes.bin"] = codes.tobytes()
        files["decoded.bin"] = f32le(decode_nvfp4(codes, scales, divisor_bits))
    meta.append(("note", note))
    return name, meta, files


VALID_E4M3_SCALES = [w for w in range(0x7F)]  # sign zero, 0x7f (NaN) excluded


def nvfp4_cases():
    out = []
    # Worked-offset geometry: distinct scale words 0x30.. at the 13 worked positions, zero codes.
    N, K = 200, 4096
    scales = np.zeros((N, K // 16), dtype=np.uint8)
    for idx, ((n, kb), _) in enumerate(WORKED_SWIZZLE):
        scales[n, kb] = 0x30 + idx
    name, meta, files = nvfp4_case(
        "nvfp4_swizzle_n200_k4096", np.zeros((N, K), dtype=np.uint8), scales, 0x3F800000,
        "NVFP4 N=200 K=4096 (nKT=64, Np=256): all codes zero; scale word 0x30+i at the i-th worked (n,kb) of layouts.md, 0 elsewhere",
        omit_codes=True)
    g = blockscale_geometry(N, K)
    for idx, ((n, kb), off) in enumerate(WORKED_SWIZZLE):
        assert files["payload.bin"][g["scale_offset"] + off] == 0x30 + idx
    assert sum(1 for x in files["payload.bin"][g["scale_offset"] : g["scale_offset"] + g["Np"] * g["Sb"]] if x) == 13
    out.append((name, meta, files))

    # Small: K=48 (Kp=64: k in 48..63 padding, scale column 3 padding), rows 3..127 padding.
    rng = SplitMix64(3001)
    N, K = 3, 48
    codes = np.array([[rng.randint(0, 15) for _ in range(K)] for _ in range(N)], dtype=np.uint8)
    codes[0, :16] = np.arange(16)  # all 16 E2M1 words
    codes[1, 0:4] = 0x8  # negative zero
    codes[2, 47] = 0x8
    scales = np.array([[rng.randint(0x01, 0x7E) for _ in range(K // 16)] for _ in range(N)], dtype=np.uint8)
    scales[0, 0] = 0x7E  # max finite 448
    scales[1, 1] = 0x01  # min subnormal 2^-9
    scales[2, 2] = 0x00  # +0 scale (valid; codes need not be zero)
    name, meta, files = nvfp4_case("nvfp4_partial_kp_n3_k48", codes, scales, 0x3FC00000,
                                   "NVFP4 N=3 K=48 (Kp=64): all 16 E2M1 words, -0 codes 0x8, code padding k=48..63, scale padding kb=3 and rows 3..127; d_w=1.5")
    pl = files["payload.bin"]
    assert pl[:8] == bytes([0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE])  # even k low nibble
    assert pl[32:34] == b"\x88\x88" and pl[24:32] == bytes(8)  # row 1 -0 codes; row 0 padding k>=48
    assert pl[128 : 128 + 4] == bytes([0x7E, scales[0, 1], scales[0, 2], 0])  # row 0, kb 0..3
    assert pl[128 + 16 + 1] == 0x01 and pl[128 + 32 + 2] == 0x00  # (1,1) at 17, (2,2) at 34
    out.append((name, meta, files))

    # Crosses a 128-row tile: N=129, K=16 (nKT=1, Np=256). Every valid scale word appears.
    rng = SplitMix64(3002)
    N, K = 129, 16
    codes = np.array([[rng.randint(0, 15) for _ in range(K)] for _ in range(N)], dtype=np.uint8)
    scales = np.array([[VALID_E4M3_SCALES[n % len(VALID_E4M3_SCALES)]] for n in range(N)], dtype=np.uint8)
    scales[128, 0] = 0x55
    out.append(nvfp4_case("nvfp4_tile_cross_n129_k16", codes, scales, 0x40400000,
                          "NVFP4 N=129 K=16 (Kp=64, nKT=1, Np=256): row 128 starts the second scale tile; scales 0x00..0x7e all appear; d_w=3.0"))

    # Several K tiles with a scale-column tail: N=130, K=272 (Kp=320, Sb=20, nKT=5, kb 17..19 padding).
    rng = SplitMix64(3003)
    N, K = 130, 272
    codes = np.array([[rng.randint(0, 15) for _ in range(K)] for _ in range(N)], dtype=np.uint8)
    scales = np.array([[rng.randint(0x00, 0x7E) for _ in range(K // 16)] for _ in range(N)], dtype=np.uint8)
    out.append(nvfp4_case("nvfp4_multi_tile_n130_k272", codes, scales, 0x3DCCCCCD,
                          "NVFP4 N=130 K=272 (Kp=320, Sb=20, nKT=5, Np=256): random codes and scales, code padding k=272..319, scale padding kb=17..19 and rows 130..255; d_w=0.1f"))
    return out


def fp8_case(name, codes, scales, note):
    codes = np.asarray(codes, dtype=np.uint8)
    scales = np.asarray(scales, dtype=np.uint16)
    validate_fp8_row(codes, scales)
    N, K = codes.shape
    payload = pack_rowscale(codes, scales)
    assert len(payload) == rowscale_geometry(N, K)["size"]
    rc, rs = read_rowscale_scalar(N, K, payload)
    assert (rc == codes).all() and (rs == scales).all()
    files = {"payload.bin": payload, "codes.bin": codes.tobytes(), "scales.bin": u16le(scales),
             "decoded.bin": f32le(decode_fp8_row(codes, scales))}
    return name, [("format", "FP8_E4M3FN_ROW_BF16S"), ("layout", LAYOUT_ROW_SCALE), ("shape", f"{N},{K}"),
                  ("note", note)], files


def fp8_cases():
    finite = [w for w in range(256) if w not in (0x7F, 0xFF)]
    rng = SplitMix64(4001)
    N, K = 3, 65
    codes = np.zeros((N, K), dtype=np.uint8)
    codes[0] = [rng.choice([0x00, 0x80]) for _ in range(K)]
    codes[1] = [rng.choice(finite) for _ in range(K)]
    codes[2] = [rng.choice(finite) for _ in range(K)]
    codes[1, :4] = [0x7E, 0xFE, 0x80, 0x01]
    codes[2, -4:] = [0x7E, 0xFE, 0x80, 0x81]
    scales = [0x0000, 0x0041, 0x3B80]
    out = [fp8_case("fp8_row_scale_n3_k65", codes, scales,
                    "FP8 N=3 K=65 (scale plane at 256): row 0 zero scale with 0x00/0x80 codes, row 1 subnormal BF16 scale 0x0041, row 2 scale 0x3b80; codes include 0x7e 0xfe 0x80")]
    # Every finite code word in both rows.
    N, K = 2, 254
    codes = np.array([finite, finite[::-1]], dtype=np.uint8)
    out.append(fp8_case("fp8_all_finite_codes_n2_k254", codes, [0x3F80, 0x7B12],
                        "FP8 N=2 K=254: all 254 finite E4M3FN words per row (row 1 reversed); scales 1.0 (decoded = code value) and 0x7b12, the largest BF16 scale keeping 448*s finite"))
    return out


def all_cases():
    cases = contiguous_cases() + row_split_cases() + nvfp4_cases() + fp8_cases()
    names = [c[0] for c in cases]
    assert len(names) == len(set(names))
    return cases


def render(case):
    name, meta, files = case
    text = "".join(f"{k}={v}\n" for k, v in meta)
    assert all("\n" not in v for _, v in meta)
    out = {"case.txt": text.encode("ascii")}
    out.update(files)
    return name, out


def main(argv):
    check = "--check" in argv[1:]
    rendered = [render(c) for c in all_cases()]
    total = 0
    bad = []
    for name, files in rendered:
        d = os.path.join(HERE, name)
        if check:
            present = sorted(os.listdir(d)) if os.path.isdir(d) else []
            if present != sorted(files):
                bad.append(f"{name}: files {present} != {sorted(files)}")
        else:
            if os.path.isdir(d):
                shutil.rmtree(d)
            os.makedirs(d)
        for fname, data in files.items():
            path = os.path.join(d, fname)
            total += len(data)
            if check:
                try:
                    with open(path, "rb") as f:
                        if f.read() != data:
                            bad.append(f"{name}/{fname}: differs")
                except FileNotFoundError:
                    bad.append(f"{name}/{fname}: missing")
            else:
                with open(path, "wb") as f:
                    f.write(data)
        print(f"{name:32s} payload {len(files['payload.bin']):7d} B, all files "
              f"{sum(len(v) for v in files.values()):7d} B")
    # Stale case directories (a case.txt without a generator entry).
    known = {n for n, _ in rendered}
    for entry in sorted(os.listdir(HERE)):
        if entry not in known and os.path.isfile(os.path.join(HERE, entry, "case.txt")):
            if check:
                bad.append(f"{entry}: not produced by the generator")
            else:
                shutil.rmtree(os.path.join(HERE, entry))
    print(f"{len(rendered)} cases, {total} bytes")
    if bad:
        print("golden vectors are stale:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
