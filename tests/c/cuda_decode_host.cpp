// Host check of the CUDA per-element decode functions (ffi/cuda/ninfer_decode.cuh), compiled with
// the plain C++ compiler (g++ -x c++; __host__/__device__ defined empty), against the Rust oracle
// through the C ABI, for every word and code value:
//
// - all 65536 BF16 and binary16 words (exact expansion);
// - all 256 E4M3FN and all 16 E2M1 words;
// - BF16 RNE rounding of every high half with low halves at the tie and rounding boundaries;
// - every grouped code of Q4/Q5/Q6/W8 times every binary16 scale word;
// - every FP8 code times every BF16 scale word;
// - every NVFP4 code times every scale times sample divisors;
// - the layout accessors against payloads packed by the library (row-split words, NVFP4
//   nibbles and the scale swizzle);
// - the vectorised GEMV's lane decode (ninfer_rs_quarter_codes: every quarter of random, all-zero
//   and all-one chunks of every width) against the per-element accessors, and its NVFP4 scale
//   pair offset (ninfer_nvfp4_pair_offset) against the swizzle.
//
// Word expansions and layout accessors are compared bit for bit. Arithmetic results
// (reconstructions) are compared bit for bit too, except that a NaN matches any NaN: results are
// NaN only for invalid words (NaN scales, FP8 NaN codes), and which operand's payload an
// arithmetic NaN carries is not part of the contract (numeric-formats 3.1: "A compute operation
// is not required to preserve a NaN payload"; GPUs return a canonical NaN).
#include "ninfer.h"
#include "ninfer_decode.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static long g_fail = 0;
static long g_checks = 0;

static void expect_bits(const char *what, uint32_t a, uint32_t ours, uint32_t oracle) {
    g_checks++;
    if (ours != oracle) {
        if (g_fail < 20) {
            std::fprintf(stderr, "%s(%#x): header %08x, oracle %08x\n", what, a, ours, oracle);
        }
        g_fail++;
    }
}

static bool is_nan_bits(uint32_t b) {
    return (b & 0x7fffffffu) > 0x7f800000u;
}

static void expect_value(const char *what, uint32_t a, uint32_t ours, uint32_t oracle) {
    if (is_nan_bits(ours) && is_nan_bits(oracle)) {
        ours = oracle;
    }
    expect_bits(what, a, ours, oracle);
}

int main() {
    for (uint32_t w = 0; w <= 0xffff; w++) {
        expect_bits("bf16", w, ninfer_bf16_bits((uint16_t)w), ninfer_bf16_to_f32_bits((uint16_t)w));
        expect_bits("f16", w, ninfer_f16_bits((uint16_t)w), ninfer_f16_to_f32_bits((uint16_t)w));
    }
    for (uint32_t w = 0; w < 256; w++) {
        expect_bits("e4m3fn", w, ninfer_e4m3fn_bits(w), ninfer_e4m3fn_to_f32_bits((uint8_t)w));
    }
    for (uint32_t w = 0; w < 16; w++) {
        expect_bits("e2m1", w, ninfer_e2m1_bits(w), ninfer_e2m1_to_f32_bits((uint8_t)w));
    }
    static const uint32_t lows[] = {0x0000, 0x0001, 0x3fff, 0x7fff, 0x8000, 0x8001, 0xbfff, 0xffff};
    for (uint32_t hi = 0; hi <= 0xffff; hi++) {
        for (uint32_t lo : lows) {
            uint32_t b = (hi << 16) | lo;
            expect_bits("bf16_rne", b, ninfer_f32_bits_to_bf16_rne(b), ninfer_f32_to_bf16_rne(b));
        }
    }
    // Grouped: every scale word x every code of every width (the W8 range -128..127 covers the
    // narrower ones).
    for (uint32_t s = 0; s <= 0xffff; s++) {
        for (int32_t q = -128; q <= 127; q++) {
            expect_value("grouped", (s << 8) | (uint32_t)(q & 0xff),
                        ninfer_f32_to_bits(ninfer_grouped_value((uint16_t)s, q)),
                        ninfer_grouped_reconstruct_bits((uint16_t)s, (int8_t)q));
        }
    }
    // Sign extension of every word of every width.
    static const uint32_t widths[4] = {4, 5, 6, 8};
    for (uint32_t b : widths) {
        for (uint32_t u = 0; u < (1u << b); u++) {
            int32_t want = u < (1u << (b - 1)) ? (int32_t)u : (int32_t)u - (int32_t)(1u << b);
            expect_bits("rs_code", (b << 8) | u, (uint32_t)ninfer_rs_code(u, b), (uint32_t)want);
        }
    }
    // FP8 row: every code x every BF16 scale.
    for (uint32_t s = 0; s <= 0xffff; s++) {
        for (uint32_t c = 0; c < 256; c++) {
            expect_value("fp8_row", (s << 8) | c, ninfer_f32_to_bits(ninfer_fp8_row_value(c, (uint16_t)s)),
                        ninfer_fp8_row_reconstruct_bits((uint8_t)c, (uint16_t)s));
        }
    }
    // NVFP4: every code x every scale x sample divisors (normal, subnormal, odd, huge).
    static const uint32_t divisors[] = {0x3f800000u, 0x40400000u, 0x3dcccccdu, 0x00000001u,
                                        0x007fffffu, 0x7f7fffffu, 0x4b800001u, 0x3eaaaaabu};
    for (uint32_t d : divisors) {
        for (uint32_t s = 0; s < 256; s++) {
            for (uint32_t c = 0; c < 16; c++) {
                expect_value("nvfp4", (d & 0xff) << 16 | s << 8 | c,
                            ninfer_f32_to_bits(ninfer_nvfp4_value(c, s, ninfer_f32_from_bits(d))),
                            ninfer_nvfp4_reconstruct_bits((uint8_t)c, (uint8_t)s, d));
            }
        }
    }
    // Layout accessors against library-packed payloads.
    uint32_t rng = 0x9e3779b9u;
    auto rnd = [&rng]() {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        return rng;
    };
    for (uint32_t f = NINFER_FORMAT_Q4G64_F16S; f <= NINFER_FORMAT_W8G32_F16S; f++) {
        ninfer_format_props p{};
        ninfer_desc d{};
        const uint64_t shape[2] = {3, 300};
        if (ninfer_format_properties(f, &p) != NINFER_STATUS_OK ||
            ninfer_desc_new(f, p.layout, shape, 2, &d, nullptr) != NINFER_STATUS_OK) {
            std::fprintf(stderr, "descriptor failed\n");
            return 1;
        }
        std::vector<int8_t> codes(900);
        std::vector<uint16_t> scales(3 * d.groups, 0x3c00);
        for (auto &c : codes) {
            c = (int8_t)(p.qmin + (int32_t)(rnd() % (uint32_t)(p.qmax - p.qmin + 1)));
        }
        std::vector<uint8_t> payload(d.payload_len);
        if (ninfer_pack_grouped(&d, codes.data(), codes.size(), scales.data(), scales.size(), payload.data(),
                                payload.size(), nullptr) != NINFER_STATUS_OK) {
            std::fprintf(stderr, "pack failed\n");
            return 1;
        }
        for (uint64_t n = 0; n < 3; n++) {
            for (uint64_t k = 0; k < 300; k++) {
                const uint8_t *chunk = payload.data() + n * d.row_code_bytes + (k / 128) * ninfer_rs_chunk_bytes(p.code_bits);
                int32_t q = ninfer_rs_code(ninfer_rs_word(chunk, p.code_bits, (uint32_t)(k % 128)), p.code_bits);
                expect_bits("rs_word", (uint32_t)(f << 16 | n << 12 | k), (uint32_t)q, (uint32_t)codes[n * 300 + k]);
            }
        }
    }
    {
        const uint64_t shape[2] = {200, 272};
        ninfer_desc d{};
        if (ninfer_desc_new(NINFER_FORMAT_NVFP4, NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1, shape, 2, &d, nullptr) !=
            NINFER_STATUS_OK) {
            return 1;
        }
        std::vector<uint8_t> codes(200 * 272), scales(200 * 17), payload(d.payload_len);
        for (auto &c : codes) {
            c = (uint8_t)(rnd() & 15);
        }
        for (auto &s : scales) {
            s = (uint8_t)(rnd() & 0x7f);
        }
        if (ninfer_pack_nvfp4(&d, codes.data(), codes.size(), scales.data(), scales.size(), 0x3f800000u,
                              payload.data(), payload.size(), nullptr) != NINFER_STATUS_OK) {
            return 1;
        }
        for (uint64_t n = 0; n < 200; n++) {
            for (uint64_t k = 0; k < 272; k++) {
                expect_bits("nvfp4_code", (uint32_t)(n << 16 | k),
                            ninfer_nvfp4_code(payload.data() + n * d.row_code_bytes, k), codes[n * 272 + k]);
            }
            for (uint64_t kb = 0; kb < 17; kb++) {
                uint64_t off = ninfer_nvfp4_scale_offset(n, kb, d.k_tiles);
                expect_bits("nvfp4_swizzle", (uint32_t)(n << 16 | kb), (uint32_t)off,
                            (uint32_t)ninfer_nvfp4_scale_index(n, kb, d.k_tiles));
                expect_bits("nvfp4_scale", (uint32_t)(n << 16 | kb), payload[d.planes[1].offset + off],
                            scales[n * 17 + kb]);
            }
            const uint64_t base = ninfer_nvfp4_scale_offset(n, 0, d.k_tiles);
            for (uint64_t m = 0; 2 * m + 1 < d.physical_groups; m++) {
                const uint64_t pair = base + ninfer_nvfp4_pair_offset(m);
                expect_bits("nvfp4_pair", (uint32_t)(n << 16 | m), (uint32_t)pair,
                            (uint32_t)ninfer_nvfp4_scale_offset(n, 2 * m, d.k_tiles));
                expect_bits("nvfp4_pair", (uint32_t)(n << 16 | m), (uint32_t)(pair + 1),
                            (uint32_t)ninfer_nvfp4_scale_offset(n, 2 * m + 1, d.k_tiles));
            }
        }
    }
    // The vectorised GEMV's lane decode: quarter j of a chunk, loaded as the kernel loads it
    // (little-endian words), against ninfer_rs_word / ninfer_rs_code position by position.
    for (uint32_t b : widths) {
        std::vector<uint8_t> chunk(ninfer_rs_chunk_bytes(b));
        for (int rep = 0; rep < 2002; rep++) {
            for (auto &c : chunk) {
                c = rep == 0 ? 0x00 : rep == 1 ? 0xff : (uint8_t)rnd();
            }
            for (uint32_t j = 0; j < 4; j++) {
                uint32_t lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
                const uint32_t lo_at = b == 8 ? 32 * j : 16 * j;
                std::memcpy(lo, chunk.data() + lo_at, 16);
                if (b != 4) {
                    const uint32_t hi_at = b == 8 ? 32 * j + 16 : b == 5 ? 64 : 64 + 16 * (j & 1);
                    std::memcpy(hi, chunk.data() + hi_at, 16);
                }
                float w0[16], w1[16];
                switch (b) {
                case 4: ninfer_rs_quarter_codes<4>(lo, hi, j, w0, w1); break;
                case 5: ninfer_rs_quarter_codes<5>(lo, hi, j, w0, w1); break;
                case 6: ninfer_rs_quarter_codes<6>(lo, hi, j, w0, w1); break;
                default: ninfer_rs_quarter_codes<8>(lo, hi, j, w0, w1); break;
                }
                for (uint32_t t = 0; t < 16; t++) {
                    const uint32_t pos0 = b == 8 ? 32 * j + t : 16 * j + t;
                    const uint32_t pos1 = b == 8 ? 32 * j + 16 + t : 64 + 16 * j + t;
                    const float q0 = (float)ninfer_rs_code(ninfer_rs_word(chunk.data(), b, pos0), b);
                    const float q1 = (float)ninfer_rs_code(ninfer_rs_word(chunk.data(), b, pos1), b);
                    expect_bits("rs_quarter", b << 16 | pos0, ninfer_f32_to_bits(w0[t]), ninfer_f32_to_bits(q0));
                    expect_bits("rs_quarter", b << 16 | pos1, ninfer_f32_to_bits(w1[t]), ninfer_f32_to_bits(q1));
                }
            }
        }
    }
    std::printf("CUDA decode header (host build): %ld checks against the Rust oracle, %ld failures\n", g_checks,
                g_fail);
    return g_fail == 0 ? 0 : 1;
}
