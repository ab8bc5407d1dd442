// ninfer_kernels.cu - dequantize and GEMV kernels of the NInfer formats, read straight from the
// registered layout bytes (layouts.md), with the per-element decode of ninfer_decode.cuh (the
// generated tables in __constant__ memory). The launchers' contract is in ninfer_cuda.h.
//
// Design: the kernels are simple and written to be correct by construction; every weight is
// decoded with the same __host__ __device__ functions that tests/c/cuda_decode_host.cpp checks
// against the Rust oracle for every word.
// - dequantize: one thread per output element (grid-stride, 64-bit indices).
// - GEMV: one warp per output row n; lane l takes k = l, l + 32, ... so 32 consecutive positions
//   are read per step (one group of 32/64 for row-split, two NVFP4 blocks); B accumulators per
//   lane (B = batch, 1..8), a warp-shuffle reduction at the end, lane 0 writes the B outputs.
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

template <int KIND, int B, typename XT>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_kernel(Geom g, const uint8_t *__restrict__ p, const XT *__restrict__ x, float *__restrict__ y) {
    const uint64_t n = (uint64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (n >= g.rows) {
        return;  // whole warps exit together: n is uniform within a warp
    }
    float acc[B];
#pragma unroll
    for (int b = 0; b < B; b++) {
        acc[b] = 0.0f;
    }
    for (uint64_t k = lane; k < g.k; k += 32) {
        const float w = weight_partial<KIND>(g, p, n, k);
#pragma unroll
        for (int b = 0; b < B; b++) {
            acc[b] = fmaf(w, load_x<XT>(x, (uint64_t)b * g.k + k), acc[b]);
        }
    }
#pragma unroll
    for (int b = 0; b < B; b++) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            acc[b] += __shfl_xor_sync(0xffffffffu, acc[b], off);
        }
    }
    if (lane == 0) {
#pragma unroll
        for (int b = 0; b < B; b++) {
            y[(uint64_t)b * g.rows + n] = finish<KIND>(g, p, n, acc[b]);
        }
    }
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

template <typename XT>
cudaError_t launch_gemv(uint32_t batch, const Geom &g, const uint8_t *p, const XT *x, float *y, cudaStream_t s) {
    switch (g.kind) {
    case KIND_ROWSPLIT: return launch_gemv_b<KIND_ROWSPLIT, XT>(batch, g, p, x, y, s);
    case KIND_NVFP4: return launch_gemv_b<KIND_NVFP4, XT>(batch, g, p, x, y, s);
    case KIND_FP8: return launch_gemv_b<KIND_FP8, XT>(batch, g, p, x, y, s);
    default: return launch_gemv_b<KIND_BF16, XT>(batch, g, p, x, y, s);
    }
}

bool aligned(const void *p, size_t a) {
    return ((uintptr_t)p % a) == 0;
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
