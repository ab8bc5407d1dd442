/*
 * ninfer_decode.cuh - per-element decode functions of the NInfer numeric formats for CUDA and
 * host C++: word expansions (BF16, binary16, E2M1, E4M3FN), the reconstruction oracles of
 * numeric-formats sections 3.3, 3.4 and 6.2, BF16 rounding, and the layout accessors of
 * layouts.md (row-split code words, NVFP4 nibbles and scale swizzle).
 *
 * Every function is __host__ __device__. Under nvcc the E2M1/E4M3FN tables come from the
 * __constant__ copies of ninfer_cuda_tables.cuh in device code and from the host copies of
 * ninfer_tables.h in host code; both are generated from ninfer_core::tables (one source).
 * Outside nvcc, __host__ and __device__ are defined empty so a plain C++ compiler
 * (g++ -x c++) builds the same code; tests/c/cuda_decode_host.cpp checks it against the Rust
 * oracle through the C ABI for every word and code value.
 *
 * Exactness: every reconstruction is one correctly rounded binary32 operation (or exact), as
 * the spec states. Device code uses the explicit round-to-nearest intrinsics (__fmul_rn,
 * __fdiv_rn), so the result does not depend on -use_fast_math, -prec-div or FMA contraction;
 * the kernels must still not be built with -ftz=true (subnormal results are part of the oracle).
 */
#ifndef NINFER_DECODE_CUH
#define NINFER_DECODE_CUH

#include <stdint.h>
#include <string.h>

#include "ninfer_cuda_tables.cuh"

#if !defined(__CUDACC__)
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

#define NINFER_HD __host__ __device__ inline

/* ---- bit casts ------------------------------------------------------------------------- */

NINFER_HD float ninfer_f32_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
#endif
}

NINFER_HD uint32_t ninfer_f32_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
#endif
}

/* One correctly rounded binary32 multiply / divide, never contracted into an FMA. */
NINFER_HD float ninfer_mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

NINFER_HD float ninfer_div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

/* ---- words (numeric-formats 3.1, 3.3, 6.1) --------------------------------------------- */

/* BF16: the word in the high 16 bits of a binary32 (exact, NaN payloads kept). */
NINFER_HD uint32_t ninfer_bf16_bits(uint16_t w) {
    return (uint32_t)w << 16;
}

/* IEEE binary16 to binary32 bits, exact (subnormals normalized, NaN payloads kept). */
NINFER_HD uint32_t ninfer_f16_bits(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    if (e == 0x1fu) {
        return sign | 0x7f800000u | (m << 13);
    }
    if (e == 0) {
        if (m == 0) {
            return sign;
        }
        /* m * 2^-24 with the leading one of m at bit p: exponent p - 24, field p + 103. */
        uint32_t p = 0;
        while ((m >> (p + 1)) != 0) {
            p++;
        }
        return sign | ((p + 103u) << 23) | ((m << (23 - p)) & 0x7fffffu);
    }
    return sign | ((e + 112u) << 23) | (m << 13);
}

/* E2M1 word (low 4 bits) to binary32 bits, through the generated table. */
NINFER_HD uint32_t ninfer_e2m1_bits(uint32_t w) {
#if defined(__CUDA_ARCH__)
    return ninfer_c_e2m1_to_f32_bits[w & 15u];
#else
    return NINFER_E2M1_TO_F32_BITS[w & 15u];
#endif
}

/* E4M3FN word to binary32 bits, through the generated table (0x7f/0xff: quiet NaN). */
NINFER_HD uint32_t ninfer_e4m3fn_bits(uint32_t w) {
#if defined(__CUDA_ARCH__)
    return ninfer_c_e4m3fn_to_f32_bits[w & 255u];
#else
    return NINFER_E4M3FN_TO_F32_BITS[w & 255u];
#endif
}

/* binary32 bits to BF16, round to nearest even; NaN keeps sign and top payload, made quiet. */
NINFER_HD uint16_t ninfer_f32_bits_to_bf16_rne(uint32_t bits) {
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((bits >> 16) | 0x0040u);
    }
    uint32_t lsb = (bits >> 16) & 1u;
    return (uint16_t)((bits + 0x7fffu + lsb) >> 16);
}

/* ---- reconstruction oracles ------------------------------------------------------------ */

/* Grouped (section 6.2): binary32(f16(scale) * code); exact. */
NINFER_HD float ninfer_grouped_value(uint16_t scale, int32_t code) {
    return ninfer_mul_rn(ninfer_f32_from_bits(ninfer_f16_bits(scale)), (float)code);
}

/* NVFP4 (section 3.3): e2m1(c) * e4m3fn(s) / d_w; the product is exact, the division rounds. */
NINFER_HD float ninfer_nvfp4_value(uint32_t code, uint32_t scale, float divisor) {
    float prod = ninfer_mul_rn(ninfer_f32_from_bits(ninfer_e2m1_bits(code)),
                               ninfer_f32_from_bits(ninfer_e4m3fn_bits(scale)));
    return ninfer_div_rn(prod, divisor);
}

/* FP8 row-scaled (section 3.4): binary32(e4m3fn(c) * bf16(s)); one rounding. */
NINFER_HD float ninfer_fp8_row_value(uint32_t code, uint16_t scale) {
    return ninfer_mul_rn(ninfer_f32_from_bits(ninfer_e4m3fn_bits(code)),
                         ninfer_f32_from_bits(ninfer_bf16_bits(scale)));
}

/* ---- layout accessors (layouts.md) ----------------------------------------------------- */

/* row-split-k128-v1: the b-bit unsigned word of position i (0..127) of a chunk. */
NINFER_HD uint32_t ninfer_rs_word(const uint8_t *chunk, uint32_t bits, uint32_t i) {
    if (bits == 8) {
        return chunk[i];
    }
    uint32_t lo = ((uint32_t)chunk[i & 63u] >> (4u * (i >> 6))) & 15u;
    uint32_t hi = 0;
    if (bits == 5) {
        hi = ((uint32_t)chunk[64u + (i & 15u)] >> (i >> 4)) & 1u;
    } else if (bits == 6) {
        hi = ((uint32_t)chunk[64u + (i & 31u)] >> (2u * (i >> 5))) & 3u;
    }
    return lo | (hi << 4);
}

/* Two's-complement sign extension of a b-bit word (section 5). */
NINFER_HD int32_t ninfer_rs_code(uint32_t word, uint32_t bits) {
    uint32_t half = 1u << (bits - 1);
    return (int32_t)((word ^ half) & ((half << 1) - 1u)) - (int32_t)half;
}

/* Bytes of one 128-position chunk: 16 * b. */
NINFER_HD uint32_t ninfer_rs_chunk_bytes(uint32_t bits) {
    return 16u * bits;
}

/* blockscale-k16-m128x4-v1: E2M1 word of position k from its row's code bytes. */
NINFER_HD uint32_t ninfer_nvfp4_code(const uint8_t *row_codes, uint64_t k) {
    return ((uint32_t)row_codes[k >> 1] >> (4u * (uint32_t)(k & 1u))) & 15u;
}

/* Index of the scale of (n, kb) in the 128x4-tiled scale plane with k_tiles = Sb / 4. */
NINFER_HD uint64_t ninfer_nvfp4_scale_offset(uint64_t n, uint64_t kb, uint64_t k_tiles) {
    return (n / 128u) * k_tiles * 512u + (kb / 4u) * 512u + (n % 32u) * 16u + ((n % 128u) / 32u) * 4u +
           (kb % 4u);
}

/* ---- the vectorised GEMV's lane decode (ninfer_kernels.cu) ------------------------------ */

/* Unrolled in device code; empty for host compilers (which warn on an unknown pragma). */
#if defined(__CUDA_ARCH__)
#define NINFER_UNROLL _Pragma("unroll")
#else
#define NINFER_UNROLL
#endif

/* 2^23: a 23-bit unsigned integer u under the exponent bits of 2^23 (0x4B000000 | u) is the
 * float 2^23 + u, exactly. */
#define NINFER_MAGIC_F32 8388608.0f

/* The float 2^23 + byte k (0..3) of w (on the GPU one byte permute: bytes k, 0, 0, 0x4B of
 * {w, 0x4B000000}). */
NINFER_HD float ninfer_biased_byte(uint32_t w, int k) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7440u | (uint32_t)k));
#else
    return ninfer_f32_from_bits(0x4b000000u | ((w >> (8 * k)) & 0xffu));
#endif
}

/*
 * row-split-k128-v1, one GPU lane's quarter j (0..3) of a chunk, as the exact codes in f32
 * (little-endian words of the chunk bytes named):
 * - BITS 4, 5, 6: lo = chunk bytes 16j .. 16j + 15 (low nibble: position 16j + t, group 2c of
 *   chunk c; high nibble: position 64 + 16j + t, group 2c + 1); hi = the high-plane bytes of the
 *   same positions (Q5: chunk bytes 64 .. 79, position i's bit at byte i & 15, bit i >> 4; Q6:
 *   chunk bytes 64 + 16 (j & 1) .. + 15, position i's two bits at byte i & 31, bits 2 (i >> 5);
 *   Q4: unused). w0[t] = code of position 16j + t, w1[t] = code of 64 + 16j + t.
 * - BITS 8: lo = chunk bytes 32j .. 32j + 15, hi = 32j + 16 .. 32j + 31; w0[t] = position
 *   32j + t, w1[t] = 32j + 16 + t (both group 4c + j).
 * The b-bit two's-complement word (section 5) with its sign bit flipped is the offset code
 * q + 2^(b-1); under the exponent of 2^23 it is the float 2^23 + q + 2^(b-1), and subtracting
 * 2^23 + 2^(b-1) leaves q exactly (no I2F conversion). tests/c/cuda_decode_host.cpp checks this
 * against ninfer_rs_word / ninfer_rs_code for every quarter of random and extreme chunks.
 */
template <int BITS>
NINFER_HD void ninfer_rs_quarter_codes(const uint32_t lo[4], const uint32_t hi[4], uint32_t j, float w0[16],
                                       float w1[16]) {
    if (BITS == 8) {
        NINFER_UNROLL
        for (int t = 0; t < 16; t++) {
            /* Sign bits flipped: each byte is the offset code q + 128. */
            w0[t] = ninfer_biased_byte(lo[t >> 2] ^ 0x80808080u, t & 3) - (NINFER_MAGIC_F32 + 128.0f);
            w1[t] = ninfer_biased_byte(hi[t >> 2] ^ 0x80808080u, t & 3) - (NINFER_MAGIC_F32 + 128.0f);
        }
    } else {
        /* High-plane bit positions: Q5 bit j / 4 + j, Q6 bits 2 (j / 2) / 4 + 2 (j / 2). */
        const uint32_t sh0 = BITS == 5 ? j : 2 * (j >> 1);
        const uint32_t sh1 = 4 + sh0;
        const uint32_t hmask = BITS == 6 ? 3u : 1u;
        const uint32_t half = 1u << (BITS - 1);
        const float bias = NINFER_MAGIC_F32 + (float)half;
        NINFER_UNROLL
        for (int t = 0; t < 16; t++) {
            const uint32_t cw = lo[t >> 2] >> (8 * (t & 3));
            uint32_t u0 = cw & 15u, u1 = (cw >> 4) & 15u;
            if (BITS > 4) {
                const uint32_t hb = hi[t >> 2] >> (8 * (t & 3));
                u0 |= ((hb >> sh0) & hmask) << 4;
                u1 |= ((hb >> sh1) & hmask) << 4;
            }
            w0[t] = ninfer_f32_from_bits(0x4b000000u | (u0 ^ half)) - bias;
            w1[t] = ninfer_f32_from_bits(0x4b000000u | (u1 ^ half)) - bias;
        }
    }
}

/* blockscale-k16-m128x4-v1: the offset of the scales of blocks 2m and 2m + 1 (two adjacent
 * bytes) from the scale of block 0 of the same row: ninfer_nvfp4_scale_offset(n, 2m, k_tiles) =
 * ninfer_nvfp4_scale_offset(n, 0, k_tiles) + this, and the next byte is block 2m + 1. */
NINFER_HD uint64_t ninfer_nvfp4_pair_offset(uint64_t m) {
    return (m >> 1) * 512u + 2u * (m & 1u);
}

#endif /* NINFER_DECODE_CUH */
