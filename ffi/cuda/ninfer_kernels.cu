// ninfer_kernels.cu - dequantize and GEMV kernels of the NInfer formats, read straight from the
// registered layout bytes (layouts.md), with the per-element decode of ninfer_decode.cuh (the
// generated tables in __constant__ memory). The launchers' contract is in ninfer_cuda.h.
//
// Design: the kernels are simple and written to be correct by construction; every weight is
// decoded with the same __host__ __device__ functions that tests/c/cuda_decode_host.cpp checks
// against the Rust oracle for every word.
// - dequantize: one thread per output element (grid-stride, 64-bit indices).
// - GEMV, per-element (`gemv_kernel`, any payload alignment): one warp per output row n; lane l
//   takes k = l, l + 32, ... so 32 consecutive positions are read per step; B accumulators per
//   lane (B = batch, 1..8), a warp-shuffle reduction at the end, lane 0 writes the B outputs.
// - GEMV, vectorised (`gemv_rowsplit_fast`, `gemv_nvfp4_fast`, `gemv_words_fast`; a 16-byte
//   aligned payload): the same warp per row, each lane reading 16-byte pieces and summing per
//   group / block before the scale (see the section below). On an H200, [8192, 8192] batch 1:
//   docs/perf/2026-12-04-h200-cuda-run*.txt and the README.
#include <cuda_runtime.h>

#include "ninfer_cuda.h"
#include "ninfer_decode.cuh"

namespace {

enum Kind : int { KIND_ROWSPLIT = 1, KIND_NVFP4 = 2, KIND_FP8 = 3, KIND_BF16 = 4 };

// Everything a kernel needs, copied from the (checked) host descriptor.
struct Geom {
    int kind;
    uint32_t bits;          // row-split code width
    uint32_t group;         // row-split group size G
    uint64_t rows;          // N (first dimension)
    uint64_t k;             // row_len
    uint64_t row_bytes;     // code bytes per row
    uint64_t scale_offset;  // scale plane offset
    uint64_t phys_groups;   // row-split Gp
    uint64_t k_tiles;       // NVFP4 nKT
    uint64_t divisor_offset;
};

__device__ __forceinline__ uint32_t load_u16(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

__device__ __forceinline__ uint32_t load_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

// The exact reconstructed weight of (n, k): the spec's oracle, bit for bit.
__device__ __forceinline__ float weight_exact(const Geom &g, const uint8_t *p, uint64_t n, uint64_t k) {
    switch (g.kind) {
    case KIND_ROWSPLIT: {
        const uint8_t *chunk = p + n * g.row_bytes + (k >> 7) * ninfer_rs_chunk_bytes(g.bits);
        int32_t q = ninfer_rs_code(ninfer_rs_word(chunk, g.bits, (uint32_t)(k & 127)), g.bits);
        uint16_t s = (uint16_t)load_u16(p + g.scale_offset + 2 * (n * g.phys_groups + k / g.group));
        return ninfer_grouped_value(s, q);
    }
    case KIND_NVFP4: {
        uint32_t c = ninfer_nvfp4_code(p + n * g.row_bytes, k);
        uint32_t s = p[g.scale_offset + ninfer_nvfp4_scale_offset(n, k >> 4, g.k_tiles)];
        float d = ninfer_f32_from_bits(load_u32(p + g.divisor_offset));
        return ninfer_nvfp4_value(c, s, d);
    }
    case KIND_FP8: {
        uint32_t c = p[n * g.k + k];
        uint16_t s = (uint16_t)load_u16(p + g.scale_offset + 2 * n);
        return ninfer_fp8_row_value(c, s);
    }
    default:  // KIND_BF16
        return ninfer_f32_from_bits(ninfer_bf16_bits((uint16_t)load_u16(p + 2 * (n * g.k + k))));
    }
}

template <typename OutT>
__device__ __forceinline__ OutT to_out(float v);

template <>
__device__ __forceinline__ float to_out<float>(float v) {
    return v;
}

template <>
__device__ __forceinline__ uint16_t to_out<uint16_t>(float v) {
    return ninfer_f32_bits_to_bf16_rne(ninfer_f32_to_bits(v));
}

template <typename OutT>
__global__ void dequantize_kernel(Geom g, const uint8_t *__restrict__ p, uint64_t row0, uint64_t count,
                                  OutT *__restrict__ out) {
    const uint64_t total = count * g.k;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        uint64_t n = row0 + i / g.k, k = i % g.k;
        out[i] = to_out<OutT>(weight_exact(g, p, n, k));
    }
}

template <typename XT>
__device__ __forceinline__ float load_x(const XT *x, uint64_t i);

template <>
__device__ __forceinline__ float load_x<float>(const float *x, uint64_t i) {
    return x[i];
}

template <>
__device__ __forceinline__ float load_x<uint16_t>(const uint16_t *x, uint64_t i) {
    return ninfer_f32_from_bits(ninfer_bf16_bits(x[i]));
}

// The factor-free part of the weight a GEMV accumulates: the exact weight for row-split and
// BF16, e2m1 * e4m3fn (exact) for NVFP4, e4m3fn for FP8 (the row-level factor is applied once
// after the sum, see row_factor).
template <int KIND>
__device__ __forceinline__ float weight_partial(const Geom &g, const uint8_t *p, uint64_t n, uint64_t k) {
    if (KIND == KIND_ROWSPLIT) {
        return weight_exact(g, p, n, k);
    } else if (KIND == KIND_NVFP4) {
        uint32_t c = ninfer_nvfp4_code(p + n * g.row_bytes, k);
        uint32_t s = p[g.scale_offset + ninfer_nvfp4_scale_offset(n, k >> 4, g.k_tiles)];
        return ninfer_f32_from_bits(ninfer_e2m1_bits(c)) * ninfer_f32_from_bits(ninfer_e4m3fn_bits(s));
    } else if (KIND == KIND_FP8) {
        return ninfer_f32_from_bits(ninfer_e4m3fn_bits(p[n * g.k + k]));
    } else {
        return ninfer_f32_from_bits(ninfer_bf16_bits((uint16_t)load_u16(p + 2 * (n * g.k + k))));
    }
}

template <int KIND>
__device__ __forceinline__ float finish(const Geom &g, const uint8_t *p, uint64_t n, float acc) {
    if (KIND == KIND_NVFP4) {
        return ninfer_div_rn(acc, ninfer_f32_from_bits(load_u32(p + g.divisor_offset)));
    } else if (KIND == KIND_FP8) {
        return ninfer_mul_rn(acc, ninfer_f32_from_bits(ninfer_bf16_bits((uint16_t)load_u16(p + g.scale_offset + 2 * n))));
    } else {
        return acc;
    }
}

constexpr int kWarpsPerBlock = 4;

template <int B>
__device__ __forceinline__ void warp_sum(float acc[B]) {
#pragma unroll
    for (int b = 0; b < B; b++) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            acc[b] += __shfl_xor_sync(0xffffffffu, acc[b], off);
        }
    }
}

// Positions k0 + lane, k0 + lane + 32, ... < K of row n by the per-element decode
// (weight_partial: for row-split the exact weight) into acc: the whole row of gemv_kernel, the
// tails of the vectorised kernels.
template <int KIND, int B, typename XT>
__device__ __forceinline__ void accumulate_elements(const Geom &g, const uint8_t *p, uint64_t n, uint64_t k0,
                                                uint32_t lane, const XT *x, float acc[B]) {
    for (uint64_t k = k0 + lane; k < g.k; k += 32) {
        const float w = weight_partial<KIND>(g, p, n, k);
#pragma unroll
        for (int b = 0; b < B; b++) {
            acc[b] = fmaf(w, load_x<XT>(x, (uint64_t)b * g.k + k), acc[b]);
        }
    }
}

// The warp's sum of acc, with the row-level factor (finish), written by lane 0.
template <int KIND, int B>
__device__ __forceinline__ void reduce_store(const Geom &g, const uint8_t *p, uint64_t n, uint32_t lane, float acc[B],
                                             float *y) {
    warp_sum<B>(acc);
    if (lane == 0) {
#pragma unroll
        for (int b = 0; b < B; b++) {
            y[(uint64_t)b * g.rows + n] = finish<KIND>(g, p, n, acc[b]);
        }
    }
}

template <int KIND, int B, typename XT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_kernel(Geom g, const uint8_t *__restrict__ p, const XT *__restrict__ x, float *__restrict__ y) {
    const uint64_t n = (uint64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (n >= g.rows) {
        return;  // whole warps exit together: n is uniform within a warp
    }
    float acc[B] = {};
    accumulate_elements<KIND, B>(g, p, n, 0, lane, x, acc);
    reduce_store<KIND, B>(g, p, n, lane, acc, y);
}


// ---- the vectorised GEMV kernels ------------------------------------------------------------
//
// Used when the payload is 16-byte aligned (cudaMalloc gives 256) and the format's condition on K
// holds (see `fast_ok`); `gemv_kernel` above stays the path for every other case and the kernels
// below use its per-element decode for their tails. One warp per output row as there, but each
// lane reads 16 (W8: 32) payload bytes with one or two 16-byte loads, decodes them with integer
// operations (row-split, BF16) or the generated E2M1/E4M3FN tables staged from __constant__ into
// shared memory (NVFP4, FP8), forms per-group / per-block sums of code x activation, and applies
// the group / block scale once per sum. The same criterion as gemv_kernel: every product of a
// code and an activation is the exact weight's product up to a power-of-two-free scale factor
// applied after one rounded sum of at most 32 terms, well inside C K 2^-24 sum|w x| for C = 4.

__device__ __forceinline__ uint4 ld16(const uint8_t *p) {
    return *reinterpret_cast<const uint4 *>(p);
}

// Byte t (0..15) of a 16-byte vector (t is a compile-time constant after unrolling).
__device__ __forceinline__ uint32_t byte_of(const uint4 &v, int t) {
    const uint32_t w = t < 4 ? v.x : t < 8 ? v.y : t < 12 ? v.z : v.w;
    return (w >> (8 * (t & 3))) & 0xffu;
}

// Exact binary16 -> f32 (subnormals included) by the hardware conversion.
__device__ __forceinline__ float f16_value(uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// Four activations x[i..i+4) as f32 (i a multiple of 4); `vec`: x + i is 16-byte (f32) or 8-byte
// (BF16) aligned, so one vector load reads them.
__device__ __forceinline__ void load_x4(const float *x, uint64_t i, bool vec, float out[4]) {
    if (vec) {
        const float4 v = *reinterpret_cast<const float4 *>(x + i);
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
        out[3] = v.w;
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            out[j] = x[i + j];
        }
    }
}

__device__ __forceinline__ void load_x4(const uint16_t *x, uint64_t i, bool vec, float out[4]) {
    if (vec) {
        const uint2 v = *reinterpret_cast<const uint2 *>(x + i);
        out[0] = __uint_as_float(v.x << 16);
        out[1] = __uint_as_float(v.x & 0xffff0000u);
        out[2] = __uint_as_float(v.y << 16);
        out[3] = __uint_as_float(v.y & 0xffff0000u);
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            out[j] = __uint_as_float((uint32_t)x[i + j] << 16);
        }
    }
}

// sum_t w[t] x[i + t] for t < N (a multiple of 4), in four chains.
template <int N, typename XT>
__device__ __forceinline__ float dot(const float w[N], const XT *x, uint64_t i, bool vec) {
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int q = 0; q < N / 4; q++) {
        float xv[4];
        load_x4(x, i + 4 * q, vec, xv);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            t[j] = fmaf(w[4 * q + j], xv[j], t[j]);
        }
    }
    return (t[0] + t[1]) + (t[2] + t[3]);
}

// Row-split (Q4/Q5/Q6: BITS 4/5/6, G = 64; W8: BITS 8, G = 32). Lane l takes quarter j = l % 4
// of chunks c = l / 4, l / 4 + 8, ...: for nibble formats the 16 code bytes 16j..16j+15 (positions
// 16j + t of group 2c from the low nibbles and 64 + 16j + t of group 2c + 1 from the high ones)
// with the matching high-plane bits (layouts.md: Q5 byte 64 + (i & 15) bit i >> 4, Q6 byte
// 64 + (i & 31) bits 2 (i >> 5)); for W8 the 32 code bytes 32j.. (group 4c + j).
template <int BITS, int B, typename XT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_rowsplit_fast(Geom g, const uint8_t *__restrict__ p, const XT *__restrict__ x, float *__restrict__ y,
                       bool vec) {
    const uint64_t n = (uint64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (n >= g.rows) {
        return;
    }
    float acc[B] = {};
    const uint64_t full = g.k / 128;
    const uint8_t *row = p + n * g.row_bytes;
    const uint8_t *sc = p + g.scale_offset + 2 * n * g.phys_groups;
    const uint32_t j = lane & 3u;
    for (uint64_t c = lane >> 2; c < full; c += 8) {
        const uint8_t *ch = row + c * (16 * BITS);
        float w0[16], w1[16];
        uint64_t p0, p1;
        float s0, s1;
        if (BITS == 8) {
            const uint4 a = ld16(ch + 32 * j), b = ld16(ch + 32 * j + 16);
            const uint32_t lo[4] = {a.x, a.y, a.z, a.w}, hi[4] = {b.x, b.y, b.z, b.w};
            ninfer_rs_quarter_codes<BITS>(lo, hi, j, w0, w1);
            p0 = 128 * c + 32 * j;
            p1 = p0 + 16;
            s0 = f16_value(*reinterpret_cast<const uint16_t *>(sc + 2 * (4 * c + j)));
            s1 = s0;
        } else {
            const uint4 a = ld16(ch + 16 * j);
            uint4 b = make_uint4(0, 0, 0, 0);
            if (BITS == 5) {
                b = ld16(ch + 64);
            } else if (BITS == 6) {
                b = ld16(ch + 64 + 16 * (j & 1u));
            }
            const uint32_t lo[4] = {a.x, a.y, a.z, a.w}, hi[4] = {b.x, b.y, b.z, b.w};
            ninfer_rs_quarter_codes<BITS>(lo, hi, j, w0, w1);
            p0 = 128 * c + 16 * j;
            p1 = p0 + 64;
            const uint32_t ss = *reinterpret_cast<const uint32_t *>(sc + 4 * c);  // groups 2c, 2c + 1
            s0 = f16_value((uint16_t)(ss & 0xffffu));
            s1 = f16_value((uint16_t)(ss >> 16));
        }
#pragma unroll
        for (int b = 0; b < B; b++) {
            const XT *xb = x + (uint64_t)b * g.k;
            acc[b] = fmaf(s0, dot<16>(w0, xb, p0, vec), acc[b]);
            acc[b] = fmaf(s1, dot<16>(w1, xb, p1, vec), acc[b]);
        }
    }
    accumulate_elements<KIND_ROWSPLIT, B>(g, p, n, 128 * full, lane, x, acc);  // the last, partial chunk
    reduce_store<KIND_ROWSPLIT, B>(g, p, n, lane, acc, y);
}

// The generated tables, staged into shared memory by the block (divergent __constant__ reads
// would serialise). Called by every thread before any returns.
__device__ __forceinline__ void stage_tables(float *e2m1, float *e4m3, bool want_e2m1) {
    for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
        e4m3[i] = ninfer_f32_from_bits(ninfer_e4m3fn_bits(i));
        if (want_e2m1 && i < 16) {
            e2m1[i] = ninfer_f32_from_bits(ninfer_e2m1_bits(i));
        }
    }
    __syncthreads();
}

// NVFP4: lane l takes the 16-byte pieces m = l, l + 32, ... of its row's codes: positions
// 32m .. 32m + 31, blocks 2m (bytes 0..7) and 2m + 1 (bytes 8..15); byte t holds position 2t in
// its low nibble and 2t + 1 in its high one. Sum per block of e2m1 x, times the block's e4m3fn
// scale; 1/d_w after the sum (finish).
template <int B, typename XT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_nvfp4_fast(Geom g, const uint8_t *__restrict__ p, const XT *__restrict__ x, float *__restrict__ y,
                    bool vec) {
    __shared__ float e2m1[16], e4m3[256];
    stage_tables(e2m1, e4m3, true);
    const uint64_t n = (uint64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (n >= g.rows) {
        return;
    }
    float acc[B] = {};
    const uint64_t pieces = g.k / 32;
    const uint8_t *row = p + n * g.row_bytes;
    // Blocks 2m and 2m + 1 of the row: two adjacent scale bytes, one u16 load.
    const uint8_t *srow = p + g.scale_offset + ninfer_nvfp4_scale_offset(n, 0, g.k_tiles);
    for (uint64_t m = lane; m < pieces; m += 32) {
        const uint4 v = ld16(row + 16 * m);
        const uint32_t ss = *reinterpret_cast<const uint16_t *>(srow + ninfer_nvfp4_pair_offset(m));
        const float s0 = e4m3[ss & 0xffu];
        const float s1 = e4m3[ss >> 8];
        float w0[16], w1[16];
#pragma unroll
        for (int t = 0; t < 8; t++) {
            const uint32_t b0 = byte_of(v, t), b1 = byte_of(v, t + 8);
            w0[2 * t] = e2m1[b0 & 15u];
            w0[2 * t + 1] = e2m1[b0 >> 4];
            w1[2 * t] = e2m1[b1 & 15u];
            w1[2 * t + 1] = e2m1[b1 >> 4];
        }
#pragma unroll
        for (int b = 0; b < B; b++) {
            const XT *xb = x + (uint64_t)b * g.k;
            acc[b] = fmaf(s0, dot<16>(w0, xb, 32 * m, vec), acc[b]);
            acc[b] = fmaf(s1, dot<16>(w1, xb, 32 * m + 16, vec), acc[b]);
        }
    }
    accumulate_elements<KIND_NVFP4, B>(g, p, n, 32 * pieces, lane, x, acc);
    reduce_store<KIND_NVFP4, B>(g, p, n, lane, acc, y);
}

// FP8 row and BF16 (K a multiple of 16 / 8): lane l takes the 16-byte pieces m = l, l + 32, ...
// of its row (16 E4M3FN words or 8 BF16 words); the FP8 row scale after the sum (finish).
template <int KIND, int B, typename XT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_words_fast(Geom g, const uint8_t *__restrict__ p, const XT *__restrict__ x, float *__restrict__ y,
                    bool vec) {
    __shared__ float e4m3[KIND == KIND_FP8 ? 256 : 1];
    if (KIND == KIND_FP8) {
        stage_tables(nullptr, e4m3, false);
    }
    const uint64_t n = (uint64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (n >= g.rows) {
        return;
    }
    float acc[B] = {};
    constexpr int per = KIND == KIND_FP8 ? 16 : 8;  // positions per piece
    const uint64_t pieces = g.k / per;
    const uint8_t *row = p + n * g.k * (KIND == KIND_FP8 ? 1 : 2);
    for (uint64_t m = lane; m < pieces; m += 32) {
        const uint4 v = ld16(row + 16 * m);
        float w[16];
        if (KIND == KIND_FP8) {
#pragma unroll
            for (int t = 0; t < 16; t++) {
                w[t] = e4m3[byte_of(v, t)];
            }
        } else {
            const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int t = 0; t < 4; t++) {
                w[2 * t] = __uint_as_float(u[t] << 16);
                w[2 * t + 1] = __uint_as_float(u[t] & 0xffff0000u);
            }
        }
#pragma unroll
        for (int b = 0; b < B; b++) {
            const XT *xb = x + (uint64_t)b * g.k;
            acc[b] += dot<per>(w, xb, per * m, vec);
        }
    }
    accumulate_elements<KIND, B>(g, p, n, per * pieces, lane, x, acc);
    reduce_store<KIND, B>(g, p, n, lane, acc, y);
}

template <int KIND, typename XT>
cudaError_t launch_gemv_b(uint32_t batch, const Geom &g, const uint8_t *p, const XT *x, float *y,
                          cudaStream_t stream) {
    const dim3 block(32 * kWarpsPerBlock);
    const dim3 grid((unsigned)((g.rows + kWarpsPerBlock - 1) / kWarpsPerBlock));
    switch (batch) {
    case 1: gemv_kernel<KIND, 1, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 2: gemv_kernel<KIND, 2, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 3: gemv_kernel<KIND, 3, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 4: gemv_kernel<KIND, 4, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 5: gemv_kernel<KIND, 5, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 6: gemv_kernel<KIND, 6, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    case 7: gemv_kernel<KIND, 7, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    default: gemv_kernel<KIND, 8, XT><<<grid, block, 0, stream>>>(g, p, x, y); break;
    }
    return cudaGetLastError();
}

bool aligned(const void *p, size_t a) {
    return ((uintptr_t)p % a) == 0;
}

// Which vectorised kernel applies: the payload 16-byte aligned (every row and plane offset of the
// four layouts is then 16-byte aligned), FP8 rows of K % 16 == 0 bytes, BF16 rows of K % 8 == 0.
bool fast_ok(const Geom &g, const uint8_t *p) {
    if (!aligned(p, 16)) {
        return false;
    }
    switch (g.kind) {
    case KIND_FP8: return g.k % 16 == 0;
    case KIND_BF16: return g.k % 8 == 0;
    default: return true;
    }
}

template <typename XT, template <int, typename> class K>
cudaError_t launch_fast_b(uint32_t batch, const Geom &g, const uint8_t *p, const XT *x, float *y, cudaStream_t s) {
    const dim3 block(32 * kWarpsPerBlock);
    const dim3 grid((unsigned)((g.rows + kWarpsPerBlock - 1) / kWarpsPerBlock));
    // Activations by vector loads where every batch row's start is aligned for them.
    const bool vec = aligned(x, sizeof(XT) * 4) && g.k % 4 == 0;
    switch (batch) {
    case 1: K<1, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 2: K<2, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 3: K<3, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 4: K<4, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 5: K<5, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 6: K<6, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    case 7: K<7, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    default: K<8, XT>::launch(grid, block, s, g, p, x, y, vec); break;
    }
    return cudaGetLastError();
}

template <int BITS>
struct RowSplitFast {
    template <int B, typename XT>
    struct K {
        static void launch(dim3 grid, dim3 block, cudaStream_t s, const Geom &g, const uint8_t *p, const XT *x,
                           float *y, bool vec) {
            gemv_rowsplit_fast<BITS, B, XT><<<grid, block, 0, s>>>(g, p, x, y, vec);
        }
    };
};

template <int B, typename XT>
struct Nvfp4Fast {
    static void launch(dim3 grid, dim3 block, cudaStream_t s, const Geom &g, const uint8_t *p, const XT *x, float *y,
                       bool vec) {
        gemv_nvfp4_fast<B, XT><<<grid, block, 0, s>>>(g, p, x, y, vec);
    }
};

template <int KIND>
struct WordsFast {
    template <int B, typename XT>
    struct K {
        static void launch(dim3 grid, dim3 block, cudaStream_t s, const Geom &g, const uint8_t *p, const XT *x,
                           float *y, bool vec) {
            gemv_words_fast<KIND, B, XT><<<grid, block, 0, s>>>(g, p, x, y, vec);
        }
    };
};

template <typename XT>
cudaError_t launch_gemv(uint32_t batch, const Geom &g, const uint8_t *p, const XT *x, float *y, cudaStream_t s) {
    if (fast_ok(g, p)) {
        switch (g.kind) {
        case KIND_ROWSPLIT:
            switch (g.bits) {
            case 4: return launch_fast_b<XT, RowSplitFast<4>::template K>(batch, g, p, x, y, s);
            case 5: return launch_fast_b<XT, RowSplitFast<5>::template K>(batch, g, p, x, y, s);
            case 6: return launch_fast_b<XT, RowSplitFast<6>::template K>(batch, g, p, x, y, s);
            default: return launch_fast_b<XT, RowSplitFast<8>::template K>(batch, g, p, x, y, s);
            }
        case KIND_NVFP4: return launch_fast_b<XT, Nvfp4Fast>(batch, g, p, x, y, s);
        case KIND_FP8: return launch_fast_b<XT, WordsFast<KIND_FP8>::template K>(batch, g, p, x, y, s);
        default: return launch_fast_b<XT, WordsFast<KIND_BF16>::template K>(batch, g, p, x, y, s);
        }
    }
    switch (g.kind) {
    case KIND_ROWSPLIT: return launch_gemv_b<KIND_ROWSPLIT, XT>(batch, g, p, x, y, s);
    case KIND_NVFP4: return launch_gemv_b<KIND_NVFP4, XT>(batch, g, p, x, y, s);
    case KIND_FP8: return launch_gemv_b<KIND_FP8, XT>(batch, g, p, x, y, s);
    default: return launch_gemv_b<KIND_BF16, XT>(batch, g, p, x, y, s);
    }
}

bool overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a_bytes && b_bytes && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

// Check the descriptor and payload and build the kernel geometry.
ninfer_status prepare(const ninfer_desc *desc, const uint8_t *payload, size_t payload_len, bool gemv, Geom *g) {
    if (desc == nullptr) {
        return NINFER_STATUS_NULL_POINTER;
    }
    ninfer_status st = ninfer_desc_check(desc);
    if (st != NINFER_STATUS_OK) {
        return st;
    }
    Geom r{};
    switch (desc->format) {
    case NINFER_FORMAT_Q4G64_F16S:
    case NINFER_FORMAT_Q5G64_F16S:
    case NINFER_FORMAT_Q6G64_F16S:
    case NINFER_FORMAT_W8G32_F16S: {
        ninfer_format_props props{};
        st = ninfer_format_properties(desc->format, &props);
        if (st != NINFER_STATUS_OK) {
            return st;
        }
        r.kind = KIND_ROWSPLIT;
        r.bits = props.code_bits;
        r.group = props.group_size;
        break;
    }
    case NINFER_FORMAT_NVFP4: r.kind = KIND_NVFP4; break;
    case NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S: r.kind = KIND_FP8; break;
    case NINFER_FORMAT_BF16:
        if (desc->rank == 0 || (gemv && desc->rank != 2)) {
            return NINFER_STATUS_BAD_RANK;
        }
        r.kind = KIND_BF16;
        break;
    default: return NINFER_STATUS_NOT_DEFINED_FOR_FORMAT;
    }
    if (payload == nullptr && payload_len != 0) {
        return NINFER_STATUS_NULL_POINTER;
    }
    if (payload_len != desc->payload_len) {
        return NINFER_STATUS_PAYLOAD_LENGTH;
    }
    r.rows = desc->rows;
    r.k = desc->row_len;
    r.row_bytes = desc->row_code_bytes;
    r.scale_offset = desc->plane_count > 1 ? desc->planes[1].offset : 0;
    r.phys_groups = desc->physical_groups;
    r.k_tiles = desc->k_tiles;
    r.divisor_offset = desc->plane_count > 2 ? desc->planes[2].offset : 0;
    *g = r;
    return NINFER_STATUS_OK;
}

template <typename OutT>
ninfer_status dequantize(const ninfer_desc *desc, const uint8_t *payload, size_t payload_len, uint64_t row0,
                         uint64_t row_count, OutT *out, size_t out_len, cudaStream_t stream) {
    Geom g{};
    ninfer_status st = prepare(desc, payload, payload_len, false, &g);
    if (st != NINFER_STATUS_OK) {
        return st;
    }
    if (row0 > g.rows || row_count > g.rows - row0) {
        return NINFER_STATUS_ROW_OUT_OF_RANGE;
    }
    if (g.k != 0 && row_count > SIZE_MAX / g.k) {
        return NINFER_STATUS_SIZE_OVERFLOW;
    }
    const uint64_t total = row_count * g.k;
    if (out == nullptr && out_len != 0) {
        return NINFER_STATUS_NULL_POINTER;
    }
    if (!aligned(out, sizeof(OutT))) {
        return NINFER_STATUS_MISALIGNED;
    }
    if (out_len != total) {
        return NINFER_STATUS_BUFFER_LENGTH;
    }
    if (overlap(out, out_len * sizeof(OutT), payload, payload_len)) {
        return NINFER_STATUS_OVERLAPPING_BUFFERS;
    }
    if (total == 0) {
        return NINFER_STATUS_OK;
    }
    const unsigned threads = 256;
    const uint64_t want = (total + threads - 1) / threads;
    const unsigned blocks = (unsigned)(want < 65535u * 16u ? want : 65535u * 16u);
    dequantize_kernel<OutT><<<blocks, threads, 0, stream>>>(g, payload, row0, row_count, out);
    return cudaGetLastError() == cudaSuccess ? NINFER_STATUS_OK : NINFER_STATUS_CUDA_ERROR;
}

}  // namespace

extern "C" ninfer_status ninfer_cuda_dequantize_f32(const ninfer_desc *desc, const uint8_t *d_payload,
                                                    size_t payload_len, uint64_t row0, uint64_t row_count,
                                                    float *d_out, size_t out_len, cudaStream_t stream) {
    return dequantize<float>(desc, d_payload, payload_len, row0, row_count, d_out, out_len, stream);
}

extern "C" ninfer_status ninfer_cuda_dequantize_bf16(const ninfer_desc *desc, const uint8_t *d_payload,
                                                     size_t payload_len, uint64_t row0, uint64_t row_count,
                                                     uint16_t *d_out, size_t out_len, cudaStream_t stream) {
    return dequantize<uint16_t>(desc, d_payload, payload_len, row0, row_count, d_out, out_len, stream);
}

extern "C" ninfer_status ninfer_cuda_gemv(const ninfer_desc *desc, const uint8_t *d_payload, size_t payload_len,
                                          const void *d_x, uint32_t act, uint32_t batch, size_t x_len, float *d_y,
                                          size_t y_len, cudaStream_t stream) {
    Geom g{};
    ninfer_status st = prepare(desc, d_payload, payload_len, true, &g);
    if (st != NINFER_STATUS_OK) {
        return st;
    }
    if (batch < 1 || batch > NINFER_CUDA_MAX_BATCH || (act != NINFER_CUDA_ACT_F32 && act != NINFER_CUDA_ACT_BF16)) {
        return NINFER_STATUS_INVALID_ARGUMENT;
    }
    const size_t xsize = act == NINFER_CUDA_ACT_F32 ? sizeof(float) : sizeof(uint16_t);
    if (d_x == nullptr || d_y == nullptr) {
        return NINFER_STATUS_NULL_POINTER;
    }
    if (!aligned(d_x, xsize) || !aligned(d_y, sizeof(float))) {
        return NINFER_STATUS_MISALIGNED;
    }
    if (x_len != (uint64_t)batch * g.k || y_len != (uint64_t)batch * g.rows) {
        return NINFER_STATUS_BUFFER_LENGTH;
    }
    if (overlap(d_y, y_len * sizeof(float), d_x, x_len * xsize) ||
        overlap(d_y, y_len * sizeof(float), d_payload, payload_len)) {
        return NINFER_STATUS_OVERLAPPING_BUFFERS;
    }
    cudaError_t e = act == NINFER_CUDA_ACT_F32
                        ? launch_gemv<float>(batch, g, d_payload, static_cast<const float *>(d_x), d_y, stream)
                        : launch_gemv<uint16_t>(batch, g, d_payload, static_cast<const uint16_t *>(d_x), d_y, stream);
    return e == cudaSuccess ? NINFER_STATUS_OK : NINFER_STATUS_CUDA_ERROR;
}
