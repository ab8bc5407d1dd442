// gpu_tests.cu - CUDA kernels against the CPU oracle (the Rust library through ninfer.h), and a
// GEMV bandwidth benchmark. Built and run by ffi/cuda/run-gpu-tests.sh on a machine with an
// NVIDIA GPU.
//
// Tests (every format the launchers accept):
// - dequantize to f32 and BF16, whole tensor and an interior row range: bit-exact against
//   ninfer_decode_rows_f32 / ninfer_decode_rows_bf16 (a NaN matches any NaN; the payloads here
//   are valid, so none occurs);
// - GEMV for batch 1..8 with f32 and BF16 activations, with the payload and activations aligned
//   (the vectorised kernels), the activations one element off (their scalar activation loads)
//   and the payload one byte off (the per-element kernels): per output
//   |y - y_ref| <= NINFER_CUDA_GEMV_C * K * 2^-24 * sum_k |w_k x_k|, y_ref the f64 sum over the
//   exactly decoded weights (ninfer_decode_f32) times the exact activations;
// - launcher error paths (NULL, payload length, batch, activation type, unsupported format).
// Benchmark: GEMV (batch 1 and 8, f32 activations) on [8192, 8192] weights per format, GB/s of
// weight bytes, and its ratio to two bandwidths measured in the same run: the device's read
// bandwidth (a read-only kernel summing a 1 GiB buffer with 16-byte loads) and the
// device-to-device copy bandwidth (bytes read + bytes written per second by cudaMemcpyAsync of
// a 1 GiB buffer). The GEMV rotates over enough copies of the weights (at least 4x the L2
// size together) that each call reads them from device memory, not from L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ninfer.h"
#include "ninfer_cuda.h"

static int g_fail = 0;
static int g_pass = 0;

#define CUDA_OK(call)                                                                             \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(3);                                                                         \
        }                                                                                         \
    } while (0)

#define NI_OK(call)                                                                               \
    do {                                                                                          \
        ninfer_status s_ = (call);                                                                \
        if (s_ != NINFER_STATUS_OK) {                                                             \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ninfer_status_str(s_)); \
            std::exit(3);                                                                         \
        }                                                                                         \
    } while (0)

static void report(bool ok, const char *what, const char *fmt_name, uint64_t n, uint64_t k, const char *detail) {
    std::printf("%s  %-12s %-22s [%" PRIu64 " x %" PRIu64 "] %s\n", ok ? "PASS" : "FAIL", what, fmt_name, n, k,
                detail);
    if (ok) {
        g_pass++;
    } else {
        g_fail++;
    }
}

static uint32_t g_rng = 0x2545f491u;
static uint32_t rnd() {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

static uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

static float f32_of(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

static bool is_nan_bits(uint32_t b) {
    return (b & 0x7fffffffu) > 0x7f800000u;
}

struct Tensor {
    ninfer_desc d{};
    std::vector<uint8_t> payload;
    const char *name = "";
};

// A valid payload of `format` [n, k] with random words (encoded from random f32 for grouped).
static Tensor make_tensor(uint32_t format, uint64_t n, uint64_t k, bool encode) {
    Tensor t;
    ninfer_format_props p{};
    NI_OK(ninfer_format_properties(format, &p));
    const uint64_t shape[2] = {n, k};
    NI_OK(ninfer_desc_new(format, p.layout, shape, 2, &t.d, nullptr));
    size_t len = 0;
    NI_OK(ninfer_format_name(format, &t.name, &len));
    t.payload.assign(t.d.payload_len, 0);
    const size_t nk = (size_t)(n * k);
    switch (p.category) {
    case NINFER_CATEGORY_GROUPED_SIGNED_INT:
        if (encode) {
            std::vector<float> src(nk);
            for (auto &v : src) {
                v = (float)((int32_t)(rnd() % 20001) - 10000) * 1e-3f;
            }
            NI_OK(ninfer_encode_f32(&t.d, src.data(), nk, t.payload.data(), t.payload.size(), nullptr));
        } else {
            std::vector<int8_t> codes(nk);
            std::vector<uint16_t> scales((size_t)(n * t.d.groups));
            for (auto &c : codes) {
                c = (int8_t)(p.qmin + (int32_t)(rnd() % (uint32_t)(p.qmax - p.qmin + 1)));
            }
            for (auto &s : scales) {
                s = (uint16_t)(0x2000 + rnd() % 0x1000);
            }
            NI_OK(ninfer_pack_grouped(&t.d, codes.data(), nk, scales.data(), scales.size(), t.payload.data(),
                                      t.payload.size(), nullptr));
        }
        break;
    case NINFER_CATEGORY_BLOCK_SCALED_FLOAT: {
        std::vector<uint8_t> codes(nk), scales(nk / 16);
        for (auto &c : codes) {
            c = (uint8_t)(rnd() & 15);
        }
        for (auto &s : scales) {
            s = (uint8_t)(0x20 + rnd() % 0x40);
        }
        NI_OK(ninfer_pack_nvfp4(&t.d, codes.data(), nk, scales.data(), scales.size(), bits_of(3.0f),
                                t.payload.data(), t.payload.size(), nullptr));
        break;
    }
    case NINFER_CATEGORY_ROW_SCALED_FLOAT: {
        std::vector<uint8_t> codes(nk);
        std::vector<uint16_t> scales((size_t)n);
        for (auto &c : codes) {
            c = (uint8_t)(rnd() & 0xff);
            if ((c & 0x7f) == 0x7f) {
                c = 0x7e;
            }
        }
        for (auto &s : scales) {
            s = (uint16_t)(0x3a00 + rnd() % 0x800);
        }
        NI_OK(ninfer_pack_fp8_row(&t.d, codes.data(), nk, scales.data(), n, t.payload.data(), t.payload.size(),
                                  nullptr));
        break;
    }
    default: {
        std::vector<uint16_t> w(nk);
        for (auto &v : w) {
            v = (uint16_t)((rnd() & 0x80ff) | 0x3c00);  // finite, moderate magnitude
        }
        NI_OK(ninfer_pack_words16(&t.d, w.data(), nk, t.payload.data(), t.payload.size(), nullptr));
        break;
    }
    }
    return t;
}

static void test_dequantize(const Tensor &t, uint8_t *d_payload) {
    const uint64_t n = t.d.rows, k = t.d.row_len;
    const uint64_t ranges[2][2] = {{0, n}, {1, n > 2 ? n - 2 : 1}};
    for (const auto &r : ranges) {
        const size_t cnt = (size_t)(r[1] * k);
        std::vector<float> ref(cnt), got(cnt);
        std::vector<uint16_t> refb(cnt), gotb(cnt);
        NI_OK(ninfer_decode_rows_f32(&t.d, t.payload.data(), t.payload.size(), r[0], r[1], ref.data(), cnt, nullptr));
        NI_OK(ninfer_decode_rows_bf16(&t.d, t.payload.data(), t.payload.size(), r[0], r[1], refb.data(), cnt,
                                      nullptr));
        float *d_out = nullptr;
        uint16_t *d_outb = nullptr;
        CUDA_OK(cudaMalloc(&d_out, cnt * 4 + 4));
        CUDA_OK(cudaMalloc(&d_outb, cnt * 2 + 2));
        NI_OK(ninfer_cuda_dequantize_f32(&t.d, d_payload, t.payload.size(), r[0], r[1], d_out, cnt, 0));
        NI_OK(ninfer_cuda_dequantize_bf16(&t.d, d_payload, t.payload.size(), r[0], r[1], d_outb, cnt, 0));
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(got.data(), d_out, cnt * 4, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(gotb.data(), d_outb, cnt * 2, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(d_out));
        CUDA_OK(cudaFree(d_outb));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < cnt; i++) {
            uint32_t a = bits_of(got[i]), b = bits_of(ref[i]);
            bool same = a == b || (is_nan_bits(a) && is_nan_bits(b));
            bool sameb = gotb[i] == refb[i] ||
                         (is_nan_bits((uint32_t)gotb[i] << 16) && is_nan_bits((uint32_t)refb[i] << 16));
            if (!same || !sameb) {
                if (bad++ == 0) {
                    first = i;
                }
            }
        }
        char detail[160];
        std::snprintf(detail, sizeof detail, "rows %" PRIu64 "..+%" PRIu64 " f32+bf16 bit-exact: %zu mismatches%s",
                      r[0], r[1], bad, bad ? "" : "");
        if (bad) {
            std::fprintf(stderr, "  first mismatch at %zu: gpu %08x/%04x cpu %08x/%04x\n", first, bits_of(got[first]),
                         gotb[first], bits_of(ref[first]), refb[first]);
        }
        report(bad == 0, "dequantize", t.name, n, k, detail);
    }
}

// `x_shift` (elements) misaligns the activations for vector loads; `d_payload` at an odd
// address sends the launcher to the per-element kernels (ninfer_kernels.cu, fast_ok).
static void test_gemv(const Tensor &t, uint8_t *d_payload, uint32_t x_shift, const char *variant) {
    const uint64_t n = t.d.rows, k = t.d.row_len;
    std::vector<float> w((size_t)(n * k));
    NI_OK(ninfer_decode_f32(&t.d, t.payload.data(), t.payload.size(), w.data(), w.size(), nullptr));
    for (uint32_t act = NINFER_CUDA_ACT_F32; act <= NINFER_CUDA_ACT_BF16; act++) {
        for (uint32_t batch = 1; batch <= NINFER_CUDA_MAX_BATCH; batch++) {
            const size_t xl = (size_t)(batch * k), yl = (size_t)(batch * n);
            std::vector<float> x(xl), y(yl);
            std::vector<uint16_t> xb(xl);
            for (size_t i = 0; i < xl; i++) {
                xb[i] = ninfer_f32_to_bf16_rne(bits_of((float)((int32_t)(rnd() % 2001) - 1000) * 1e-3f));
                x[i] = f32_of(ninfer_bf16_to_f32_bits(xb[i]));  // the same values for both types
                if (act == NINFER_CUDA_ACT_F32 && (i % 3) == 0) {
                    x[i] = (float)((int32_t)(rnd() % 2001) - 1000) * 1.2345e-3f;  // not BF16-exact
                }
            }
            void *d_x = nullptr;
            float *d_y = nullptr;
            const size_t esize = act == NINFER_CUDA_ACT_F32 ? 4 : 2;
            const size_t xbytes = xl * esize, shift = x_shift * esize;
            CUDA_OK(cudaMalloc(&d_x, xbytes + shift));
            CUDA_OK(cudaMalloc(&d_y, yl * 4));
            void *d_xs = (char *)d_x + shift;
            CUDA_OK(cudaMemcpy(d_xs, act == NINFER_CUDA_ACT_F32 ? (const void *)x.data() : (const void *)xb.data(),
                               xbytes, cudaMemcpyHostToDevice));
            NI_OK(ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), d_xs, act, batch, xl, d_y, yl, 0));
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaMemcpy(y.data(), d_y, yl * 4, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaFree(d_x));
            CUDA_OK(cudaFree(d_y));
            size_t bad = 0;
            double worst = 0.0;
            for (uint32_t b = 0; b < batch; b++) {
                for (uint64_t r = 0; r < n; r++) {
                    double ref = 0.0, mag = 0.0;
                    for (uint64_t kk = 0; kk < k; kk++) {
                        double p = (double)w[r * k + kk] * (double)x[b * k + kk];
                        ref += p;
                        mag += std::fabs(p);
                    }
                    const double bound = NINFER_CUDA_GEMV_C * (double)k * std::ldexp(1.0, -24) * mag;
                    const double err = std::fabs((double)y[b * n + r] - ref);
                    if (!(err <= bound)) {
                        if (bad++ == 0) {
                            std::fprintf(stderr, "  batch %u row %" PRIu64 ": gpu %.9g ref %.9g err %.3g bound %.3g\n",
                                         b, r, (double)y[b * n + r], ref, err, bound);
                        }
                    }
                    if (bound > 0 && err / bound > worst) {
                        worst = err / bound;
                    }
                }
            }
            char detail[160];
            std::snprintf(detail, sizeof detail, "gemv %s batch %u %s: %zu outside C=%d bound, worst err/bound %.3f",
                          act == NINFER_CUDA_ACT_F32 ? "f32" : "bf16", batch, variant, bad, NINFER_CUDA_GEMV_C,
                          worst);
            report(bad == 0, "gemv", t.name, n, k, detail);
        }
    }
}

static void test_errors(const Tensor &t, uint8_t *d_payload) {
    float *d_y = nullptr, *d_x = nullptr;
    const uint64_t n = t.d.rows, k = t.d.row_len;
    CUDA_OK(cudaMalloc(&d_y, n * 4));
    CUDA_OK(cudaMalloc(&d_x, k * 4));
    bool ok = true;
    ok &= ninfer_cuda_gemv(nullptr, d_payload, t.payload.size(), d_x, 1, 1, k, d_y, n, 0) == NINFER_STATUS_NULL_POINTER;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size() - 1, d_x, 1, 1, k, d_y, n, 0) ==
          NINFER_STATUS_PAYLOAD_LENGTH;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), d_x, 1, 0, 0, d_y, 0, 0) == NINFER_STATUS_INVALID_ARGUMENT;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), d_x, 1, 9, 9 * k, d_y, 9 * n, 0) ==
          NINFER_STATUS_INVALID_ARGUMENT;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), d_x, 3, 1, k, d_y, n, 0) == NINFER_STATUS_INVALID_ARGUMENT;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), d_x, 1, 1, k - 1, d_y, n, 0) ==
          NINFER_STATUS_BUFFER_LENGTH;
    ok &= ninfer_cuda_gemv(&t.d, d_payload, t.payload.size(), nullptr, 1, 1, k, d_y, n, 0) == NINFER_STATUS_NULL_POINTER;
    ok &= ninfer_cuda_dequantize_f32(&t.d, d_payload, t.payload.size(), n, 1, d_y, k, 0) ==
          NINFER_STATUS_ROW_OUT_OF_RANGE;
    ok &= ninfer_cuda_dequantize_f32(&t.d, d_payload, t.payload.size(), 0, 1, (float *)((char *)d_y + 1), k, 0) ==
          NINFER_STATUS_MISALIGNED;
    ninfer_desc bad = t.d;
    bad.payload_len++;
    ok &= ninfer_cuda_dequantize_f32(&bad, d_payload, t.payload.size(), 0, 1, d_y, k, 0) ==
          NINFER_STATUS_INVALID_DESCRIPTOR;
    ninfer_desc fp32{};
    const uint64_t shape[2] = {2, 2};
    NI_OK(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 2, &fp32, nullptr));
    ok &= ninfer_cuda_dequantize_f32(&fp32, d_payload, 16, 0, 1, d_y, 2, 0) == NINFER_STATUS_NOT_DEFINED_FOR_FORMAT;
    CUDA_OK(cudaFree(d_y));
    CUDA_OK(cudaFree(d_x));
    report(ok, "errors", t.name, n, k, "launcher error paths return their statuses");
}

struct BenchRow {
    const char *name;
    uint32_t batch;
    double gbs;
};

// Read bandwidth probe: every thread sums 16-byte words grid-stride; one word per thread is
// written so the loads cannot be dropped.
__global__ void read_kernel(const uint4 *__restrict__ a, size_t words, uint32_t *__restrict__ sink) {
    uint32_t acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        const uint4 v = a[i];
        acc ^= v.x + v.y + v.z + v.w;
    }
    sink[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

static double time_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

int main() {
    int dev = 0;
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    std::printf("device: %s (sm_%d%d), %.1f GiB\n", prop.name, prop.major, prop.minor,
                (double)prop.totalGlobalMem / (1u << 30));

    const uint32_t fmts[7] = {NINFER_FORMAT_Q4G64_F16S, NINFER_FORMAT_Q5G64_F16S, NINFER_FORMAT_Q6G64_F16S,
                              NINFER_FORMAT_W8G32_F16S, NINFER_FORMAT_NVFP4, NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S,
                              NINFER_FORMAT_BF16};
    // Per format two shapes: K with a partial chunk / block / piece (the vectorised kernels' tails;
    // FP8 and BF16 rows the per-element kernel, K % 16 / K % 8 != 0) and K without one.
    const uint64_t shapes[2][7][2] = {
        {{257, 1000}, {130, 300}, {67, 777}, {129, 1000}, {300, 272}, {129, 333}, {65, 777}},
        {{129, 4096}, {65, 1152}, {33, 2048}, {70, 1280}, {130, 1024}, {129, 1040}, {65, 1032}}};
    for (int si = 0; si < 2; si++) {
        for (int i = 0; i < 7; i++) {
            Tensor t = make_tensor(fmts[i], shapes[si][i][0], shapes[si][i][1], true);
            const size_t len = t.payload.size();
            uint8_t *d_payload = nullptr, *d_odd = nullptr;
            CUDA_OK(cudaMalloc(&d_payload, len));
            CUDA_OK(cudaMalloc(&d_odd, len + 1));
            CUDA_OK(cudaMemcpy(d_payload, t.payload.data(), len, cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy(d_odd + 1, t.payload.data(), len, cudaMemcpyHostToDevice));
            test_dequantize(t, d_payload);
            test_gemv(t, d_payload, 0, "(aligned)");
            test_gemv(t, d_payload, 1, "(x +1 elem)");
            test_gemv(t, d_odd + 1, 0, "(payload +1 B)");
            test_errors(t, d_payload);
            CUDA_OK(cudaFree(d_payload));
            CUDA_OK(cudaFree(d_odd));
        }
    }

    // Device-to-device copy bandwidth (read + write bytes per second).
    const size_t copy_bytes = (size_t)1 << 30;
    void *a = nullptr, *b = nullptr;
    CUDA_OK(cudaMalloc(&a, copy_bytes));
    CUDA_OK(cudaMalloc(&b, copy_bytes));
    CUDA_OK(cudaMemset(a, 1, copy_bytes));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; i++) {
        CUDA_OK(cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice, 0));
    }
    const int copy_iters = 10;
    CUDA_OK(cudaEventRecord(e0, 0));
    for (int i = 0; i < copy_iters; i++) {
        CUDA_OK(cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice, 0));
    }
    CUDA_OK(cudaEventRecord(e1, 0));
    CUDA_OK(cudaEventSynchronize(e1));
    const double copy_gbs = 2.0 * copy_bytes * copy_iters / (time_ms(e0, e1) * 1e-3) / 1e9;
    // Read-only bandwidth: the best of 3 timed sets of 10 passes over the 1 GiB buffer.
    const unsigned read_threads = 256, read_blocks = (unsigned)prop.multiProcessorCount * 8u;
    uint32_t *sink = nullptr;
    CUDA_OK(cudaMalloc(&sink, (size_t)read_threads * read_blocks * 4));
    double read_gbs = 0.0;
    for (int rep = 0; rep < 4; rep++) {
        CUDA_OK(cudaEventRecord(e0, 0));
        for (int i = 0; i < copy_iters; i++) {
            read_kernel<<<read_blocks, read_threads>>>((const uint4 *)a, copy_bytes / 16, sink);
        }
        CUDA_OK(cudaEventRecord(e1, 0));
        CUDA_OK(cudaEventSynchronize(e1));
        CUDA_OK(cudaGetLastError());
        const double gbs = (double)copy_bytes * copy_iters / (time_ms(e0, e1) * 1e-3) / 1e9;
        if (rep > 0 && gbs > read_gbs) {
            read_gbs = gbs;  // rep 0 is a warm-up
        }
    }
    CUDA_OK(cudaFree(sink));
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));

    // GEMV benchmark on [8192, 8192] weights, f32 activations.
    std::vector<BenchRow> bench;
    const uint64_t bn = 8192, bk = 8192;
    float *d_x = nullptr, *d_y = nullptr;
    CUDA_OK(cudaMalloc(&d_x, NINFER_CUDA_MAX_BATCH * bk * 4));
    CUDA_OK(cudaMalloc(&d_y, NINFER_CUDA_MAX_BATCH * bn * 4));
    CUDA_OK(cudaMemset(d_x, 0, NINFER_CUDA_MAX_BATCH * bk * 4));
    for (int i = 0; i < 7; i++) {
        if (fmts[i] == NINFER_FORMAT_Q5G64_F16S) {
            continue;  // Q4/Q6 bracket it; keeps the run short
        }
        Tensor t = make_tensor(fmts[i], bn, bk, false);
        const size_t len = t.payload.size();
        // Copies that together hold at least 4x L2, so every call reads its weights from memory.
        const size_t l2 = prop.l2CacheSize > 0 ? (size_t)prop.l2CacheSize : (size_t)64 << 20;
        const size_t copies = std::max<size_t>(2, (4 * l2 + len - 1) / len);
        std::vector<uint8_t *> d_payloads(copies, nullptr);
        for (auto &d : d_payloads) {
            CUDA_OK(cudaMalloc(&d, len));
            CUDA_OK(cudaMemcpy(d, t.payload.data(), len, cudaMemcpyHostToDevice));
        }
        const uint32_t batches[2] = {1, 8};
        for (uint32_t batch : batches) {
            for (size_t w = 0; w < copies; w++) {
                NI_OK(ninfer_cuda_gemv(&t.d, d_payloads[w], len, d_x, NINFER_CUDA_ACT_F32, batch, batch * bk, d_y,
                                       batch * bn, 0));
            }
            const int iters = (int)std::max<size_t>(20, 2 * copies);
            CUDA_OK(cudaEventRecord(e0, 0));
            for (int it = 0; it < iters; it++) {
                NI_OK(ninfer_cuda_gemv(&t.d, d_payloads[(size_t)it % copies], len, d_x, NINFER_CUDA_ACT_F32, batch,
                                       batch * bk, d_y, batch * bn, 0));
            }
            CUDA_OK(cudaEventRecord(e1, 0));
            CUDA_OK(cudaEventSynchronize(e1));
            const double s = time_ms(e0, e1) * 1e-3 / iters;
            bench.push_back(BenchRow{t.name, batch, (double)len / s / 1e9});
        }
        for (auto d : d_payloads) {
            CUDA_OK(cudaFree(d));
        }
    }
    CUDA_OK(cudaFree(d_x));
    CUDA_OK(cudaFree(d_y));

    std::printf("\n==== summary ====\n");
    std::printf("tests: %d passed, %d failed\n", g_pass, g_fail);
    std::printf("device read bandwidth: %.1f GB/s (read-only kernel, 1 GiB, best of 3 x 10 passes)\n", read_gbs);
    std::printf("device-to-device copy: %.1f GB/s (bytes read + written, 1 GiB cudaMemcpyAsync)\n", copy_gbs);
    std::printf("GEMV [%" PRIu64 " x %" PRIu64 "], f32 activations, weights from device memory, GB/s of weight (payload) "
                "bytes:\n",
                bn, bk);
    std::printf("  %-22s %5s %10s %8s %8s\n", "format", "batch", "GB/s", "vs read", "vs copy");
    for (const auto &r : bench) {
        std::printf("  %-22s %5u %10.1f %7.1f%% %7.1f%%\n", r.name, r.batch, r.gbs, 100.0 * r.gbs / read_gbs,
                    100.0 * r.gbs / copy_gbs);
    }
    return g_fail == 0 ? 0 : 1;
}
