/*
 * ninfer_cuda.h - C-linkage launchers of the NInfer CUDA kernels (ffi/cuda/ninfer_kernels.cu).
 *
 * Conventions are those of ninfer.h (docs/c-api.md): every launcher returns a ninfer_status,
 * validates everything on the host before it enqueues any work, and writes its outputs only on
 * success. `desc` is a HOST pointer to a descriptor from ninfer_desc_new (checked with
 * ninfer_desc_check, so link libninfer_ffi too); every other buffer pointer is a DEVICE pointer.
 * Work is enqueued on `stream` and the launcher returns without synchronizing; a launch failure
 * reported by cudaGetLastError is NINFER_STATUS_CUDA_ERROR (the CUDA error is left for
 * cudaGetLastError/cudaPeekAtLastError to inspect). Launchers are thread-safe (no global state).
 *
 * Alignment: the payload needs none, but a 16-byte-aligned payload (cudaMalloc gives 256) takes
 * the vectorised GEMV kernels (16-byte loads; FP8 also needs K % 16 == 0, BF16 K % 8 == 0) and
 * any other the per-element ones, which are many times slower; activations 16-byte (f32) or
 * 8-byte (BF16) aligned with K % 4 == 0 are read with vector loads. Float buffers must be 4-byte
 * aligned and uint16_t buffers 2-byte aligned (NINFER_STATUS_MISALIGNED otherwise).
 *
 * Formats: Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S (row-split-k128-v1), NVFP4
 * (blockscale-k16-m128x4-v1), FP8_E4M3FN_ROW_BF16S (row-scale-v1) and BF16 (contiguous-le-v1;
 * rank >= 1 for dequantize, rank 2 for GEMV). Anything else is NINFER_STATUS_NOT_DEFINED_FOR_FORMAT:
 * there is no fallback.
 *
 * Numerics (run-gpu-tests.sh checks both against the CPU oracle):
 * - dequantize: bit-exact with ninfer_decode_rows_f32 / ninfer_decode_rows_bf16 (BF16 output is
 *   the round-to-nearest-even word of the exact f32 value). A NaN result (only from invalid
 *   words) is some NaN; its payload is not specified. Do not build with -ftz=true.
 * - GEMV: y[b][n] = sum_k W[n][k] * x[b][k], activations f32 or BF16 (expanded exactly), f32
 *   products and f32 accumulation; per output
 *   |y - y_ref| <= NINFER_CUDA_GEMV_C * K * 2^-24 * sum_k |W[n][k] * x[b][k]|,
 *   y_ref being the f64 sum over the exactly decoded weights. NVFP4 folds 1/d_w and FP8 its row
 *   scale in after the sum (the bound holds with the same constant).
 */
#ifndef NINFER_CUDA_H
#define NINFER_CUDA_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "ninfer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest GEMV batch. */
#define NINFER_CUDA_MAX_BATCH 8
/* The GEMV criterion constant (same form and value as the CPU F32 profile). */
#define NINFER_CUDA_GEMV_C 4

/* Activation element type of ninfer_cuda_gemv. */
#define NINFER_CUDA_ACT_F32 1u
#define NINFER_CUDA_ACT_BF16 2u

/*
 * Decode rows row0 .. row0 + row_count of the tensor to f32: d_out receives row_count * row_len
 * values (out_len must equal that). Errors: NULL_POINTER, MISALIGNED, INVALID_DESCRIPTOR,
 * NOT_DEFINED_FOR_FORMAT, PAYLOAD_LENGTH, ROW_OUT_OF_RANGE, BUFFER_LENGTH, CUDA_ERROR.
 */
enum ninfer_status ninfer_cuda_dequantize_f32(const ninfer_desc *desc, const uint8_t *d_payload,
                                              size_t payload_len, uint64_t row0, uint64_t row_count,
                                              float *d_out, size_t out_len, cudaStream_t stream);

/* As ninfer_cuda_dequantize_f32, writing BF16 words (RNE of the exact f32 value). */
enum ninfer_status ninfer_cuda_dequantize_bf16(const ninfer_desc *desc, const uint8_t *d_payload,
                                               size_t payload_len, uint64_t row0, uint64_t row_count,
                                               uint16_t *d_out, size_t out_len, cudaStream_t stream);

/*
 * GEMV over a rank-2 weight [N, K]: d_x holds `batch` activation rows of K (row-major, element
 * type `act`, x_len = batch * K elements), d_y receives `batch` rows of N f32 (y_len = batch * N).
 * 1 <= batch <= NINFER_CUDA_MAX_BATCH. Errors: as dequantize, plus INVALID_ARGUMENT (batch or
 * act out of range) and OVERLAPPING_BUFFERS (d_y overlapping d_x or the payload).
 */
enum ninfer_status ninfer_cuda_gemv(const ninfer_desc *desc, const uint8_t *d_payload, size_t payload_len,
                                    const void *d_x, uint32_t act, uint32_t batch, size_t x_len, float *d_y,
                                    size_t y_len, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* NINFER_CUDA_H */
