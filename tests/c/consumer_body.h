/*
 * The body of the C11 and C++17 consumers (consumer.c, consumer.cpp): it is written in the
 * common subset of both languages and calls every function of ninfer.h, including every error
 * path (NULL pointers, short buffers, unknown and lookalike names, unsupported pairs, invalid
 * values, out-of-range rows, overlapping buffers, misaligned pointers, stale descriptors).
 *
 * Each check prints file:line and the values involved when it fails; main() returns non-zero
 * when any check failed.
 */
#ifndef NINFER_CONSUMER_BODY_H
#define NINFER_CONSUMER_BODY_H

#include "ninfer.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        g_checks++;                                                                      \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
            g_failures++;                                                                \
        }                                                                                \
    } while (0)

#define EXPECT(call, want)                                                               \
    do {                                                                                 \
        enum ninfer_status got_ = (call);                                                \
        g_checks++;                                                                      \
        if (got_ != (want)) {                                                            \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__,  \
                    __LINE__, #call, (int)got_, ninfer_status_str((uint32_t)got_),        \
                    (int)(want), ninfer_status_str((uint32_t)(want)));                   \
            g_failures++;                                                                \
        }                                                                                \
    } while (0)

#define OK(call) EXPECT(call, NINFER_STATUS_OK)

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static float f32_from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* A deterministic xorshift generator, so failures are reproducible. */
static uint32_t g_rng = 0x12345678u;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

static int all_bytes(const uint8_t *p, size_t n, uint8_t v) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

/* The descriptor of an [n, k] matrix of `format` in its one registered layout. */
static ninfer_desc mat_desc(uint32_t format, uint64_t n, uint64_t k) {
    ninfer_desc d;
    ninfer_format_props p;
    uint64_t shape[2];
    shape[0] = n;
    shape[1] = k;
    memset(&d, 0, sizeof d);
    OK(ninfer_format_properties(format, &p));
    OK(ninfer_desc_new(format, p.layout, shape, 2, &d, NULL));
    return d;
}

/* binary16 word of a float that is a normal binary16 value or zero (exactness checked by the
   caller through ninfer_f16_to_f32_bits). */
static uint16_t f16_from_exact(float x) {
    uint32_t b = f32_bits(x);
    uint32_t sign = (b >> 16) & 0x8000u;
    int32_t e = (int32_t)((b >> 23) & 0xff);
    if ((b & 0x7fffffffu) == 0) {
        return (uint16_t)sign;
    }
    return (uint16_t)(sign | ((uint32_t)(e - 127 + 15) << 10) | ((b & 0x7fffffu) >> 13));
}

/* ------------------------------------------------------------------------------------------ */

static void test_version_and_status(void) {
    uint32_t v;
    const char *ok;
    CHECK(ninfer_version_number() == NINFER_VERSION_NUMBER);
    CHECK(strcmp(ninfer_version_string(), NINFER_VERSION_STRING) == 0);
    CHECK(NINFER_VERSION_NUMBER ==
          NINFER_VERSION_MAJOR * 10000 + NINFER_VERSION_MINOR * 100 + NINFER_VERSION_PATCH);
    ok = ninfer_status_str(NINFER_STATUS_OK);
    CHECK(strcmp(ok, "ok") == 0);
    CHECK(strcmp(ninfer_status_str(999999u), "unknown status") == 0);
    for (v = 0; v < 1000; v++) {
        const char *m = ninfer_status_str(v);
        CHECK(m != NULL && m[0] != '\0');
    }
    /* Fixed numeric values (docs/c-api.md). */
    CHECK(NINFER_STATUS_OK == 0);
    CHECK(NINFER_STATUS_NULL_POINTER == 1);
    CHECK(NINFER_STATUS_UNKNOWN_FORMAT_NAME == 100);
    CHECK(NINFER_STATUS_BAD_RANK == 200);
    CHECK(NINFER_STATUS_SCALE_NEGATIVE_ZERO == 300);
    CHECK(NINFER_STATUS_NON_FINITE_SOURCE == 400);
    CHECK(NINFER_STATUS_CUDA_ERROR == 500);
    CHECK(NINFER_STATUS_PANIC == 900);
    CHECK(strcmp(ninfer_status_str(NINFER_STATUS_PANIC), "ok") != 0);
}

static void test_registry(void) {
    static const char *const formats[9] = {"BF16",       "FP32",       "I32",
                                           "Q4G64_F16S", "Q5G64_F16S", "Q6G64_F16S",
                                           "W8G32_F16S", "NVFP4",      "FP8_E4M3FN_ROW_BF16S"};
    static const char *const layouts[4] = {"contiguous-le-v1", "row-split-k128-v1",
                                           "blockscale-k16-m128x4-v1", "row-scale-v1"};
    static const char *const lookalikes[] = {
        "FP16",       "INT32",      "I64",        "Q4G32_F16S",  "Q6G128_F16S", "W8G64_F16S",
        "q4g64_f16s", " BF16",      "BF16 ",      "BF16_CTRL",   "FP32_CTRL",   "I32_CTRL",
        "FP8_E4M3FN", "Q4",         "W8G32",      "W8G32_F16",   "Q4G64-F16S",  "NF4",
        "nvfp4",      "FP8_E5M2_ROW_BF16S",       "bf16",        "FP64",        "U32"};
    static const char *const bad_layouts[] = {"contiguous-le", "Contiguous-le-v1", "row-split-k128-v2",
                                              "row-split-k64-v1", "blockscale-k16-m128x4",
                                              " row-scale-v1", "ROW-SCALE-V1"};
    uint32_t id, l, f, legal = 0;
    uint32_t ids[4];
    size_t count = 99, len = 0;
    const char *name = NULL;
    ninfer_format_props p;
    ninfer_error_location loc;
    size_t i;

    CHECK(NINFER_FORMAT_COUNT == 9 && NINFER_LAYOUT_COUNT == 4);
    for (i = 0; i < 9; i++) {
        id = 0;
        OK(ninfer_format_from_name(formats[i], strlen(formats[i]), &id));
        CHECK(id == (uint32_t)(i + 1));
        OK(ninfer_format_name(id, &name, &len));
        CHECK(len == strlen(formats[i]) && strcmp(name, formats[i]) == 0);
    }
    CHECK(NINFER_FORMAT_Q4G64_F16S == 4 && NINFER_FORMAT_NVFP4 == 8);
    for (i = 0; i < 4; i++) {
        id = 0;
        OK(ninfer_layout_from_name(layouts[i], strlen(layouts[i]), &id));
        CHECK(id == (uint32_t)(i + 1));
        OK(ninfer_layout_name(id, &name, &len));
        CHECK(len == strlen(layouts[i]) && strcmp(name, layouts[i]) == 0);
    }
    for (i = 0; i < sizeof lookalikes / sizeof lookalikes[0]; i++) {
        id = 77;
        EXPECT(ninfer_format_from_name(lookalikes[i], strlen(lookalikes[i]), &id),
               NINFER_STATUS_UNKNOWN_FORMAT_NAME);
        CHECK(id == 77); /* outputs only on success */
        EXPECT(ninfer_layout_from_name(lookalikes[i], strlen(lookalikes[i]), &id),
               NINFER_STATUS_UNKNOWN_LAYOUT_NAME);
    }
    for (i = 0; i < sizeof bad_layouts / sizeof bad_layouts[0]; i++) {
        EXPECT(ninfer_layout_from_name(bad_layouts[i], strlen(bad_layouts[i]), &id),
               NINFER_STATUS_UNKNOWN_LAYOUT_NAME);
        EXPECT(ninfer_format_from_name(bad_layouts[i], strlen(bad_layouts[i]), &id),
               NINFER_STATUS_UNKNOWN_FORMAT_NAME);
    }
    /* The length counts: a prefix, an embedded NUL, a trailing NUL are all different names. */
    EXPECT(ninfer_format_from_name("BF16", 3, &id), NINFER_STATUS_UNKNOWN_FORMAT_NAME);
    EXPECT(ninfer_format_from_name("BF16", 5, &id), NINFER_STATUS_UNKNOWN_FORMAT_NAME);
    EXPECT(ninfer_format_from_name("BF16XYZ", 4, &id), NINFER_STATUS_OK);
    CHECK(id == NINFER_FORMAT_BF16);
    EXPECT(ninfer_format_from_name("\xff\xfe", 2, &id), NINFER_STATUS_UNKNOWN_FORMAT_NAME);
    EXPECT(ninfer_format_from_name(NULL, 0, &id), NINFER_STATUS_UNKNOWN_FORMAT_NAME);
    EXPECT(ninfer_layout_from_name(NULL, 0, &id), NINFER_STATUS_UNKNOWN_LAYOUT_NAME);
    EXPECT(ninfer_format_from_name(NULL, 4, &id), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_layout_from_name(NULL, 4, &id), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_format_from_name("BF16", 4, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_layout_from_name("row-scale-v1", 12, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_format_name(0, &name, &len), NINFER_STATUS_UNKNOWN_FORMAT_ID);
    EXPECT(ninfer_format_name(10, &name, &len), NINFER_STATUS_UNKNOWN_FORMAT_ID);
    EXPECT(ninfer_format_name(1, NULL, &len), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_format_name(1, &name, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_layout_name(0, &name, &len), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
    EXPECT(ninfer_layout_name(5, &name, &len), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
    EXPECT(ninfer_layout_name(1, NULL, NULL), NINFER_STATUS_NULL_POINTER);

    /* Properties (numeric-formats sections 1, 5, 6.3). */
    OK(ninfer_format_properties(NINFER_FORMAT_Q4G64_F16S, &p));
    CHECK(p.id == 4 && p.category == NINFER_CATEGORY_GROUPED_SIGNED_INT && p.code_bits == 4 &&
          p.group_size == 64 && p.scale_word == NINFER_SCALE_F16 && p.layout == 2);
    CHECK(p.has_code_interval == 1 && p.qmin == -8 && p.qmax == 7 && p.reference_qmax == 7);
    CHECK(p.has_bits_per_weight == 1 && p.bits_per_weight_num == 17 && p.bits_per_weight_den == 4);
    OK(ninfer_format_properties(NINFER_FORMAT_W8G32_F16S, &p));
    CHECK(p.qmin == -127 && p.qmax == 127 && p.group_size == 32 && p.bits_per_weight_num == 17 &&
          p.bits_per_weight_den == 2);
    OK(ninfer_format_properties(NINFER_FORMAT_Q5G64_F16S, &p));
    CHECK(p.qmin == -16 && p.qmax == 15 && p.bits_per_weight_num == 21 && p.bits_per_weight_den == 4);
    OK(ninfer_format_properties(NINFER_FORMAT_Q6G64_F16S, &p));
    CHECK(p.qmin == -32 && p.qmax == 31 && p.bits_per_weight_num == 25 && p.bits_per_weight_den == 4);
    OK(ninfer_format_properties(NINFER_FORMAT_NVFP4, &p));
    CHECK(p.category == NINFER_CATEGORY_BLOCK_SCALED_FLOAT && p.group_size == 16 &&
          p.scale_word == NINFER_SCALE_E4M3FN && p.has_code_interval == 0 && p.bits_per_weight_num == 9 &&
          p.bits_per_weight_den == 2 && p.layout == NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1);
    OK(ninfer_format_properties(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, &p));
    CHECK(p.category == NINFER_CATEGORY_ROW_SCALED_FLOAT && p.has_bits_per_weight == 0 &&
          p.scale_word == NINFER_SCALE_BF16 && p.group_size == 0 && p.code_bits == 8);
    OK(ninfer_format_properties(NINFER_FORMAT_I32, &p));
    CHECK(p.category == NINFER_CATEGORY_DIRECT_INT && p.code_bits == 32 && p.scale_word == NINFER_SCALE_NONE &&
          p.bits_per_weight_num == 32 && p.bits_per_weight_den == 1);
    OK(ninfer_format_properties(NINFER_FORMAT_BF16, &p));
    CHECK(p.category == NINFER_CATEGORY_DIRECT_FLOAT && p.code_bits == 16);
    memset(&p, 0x5a, sizeof p);
    EXPECT(ninfer_format_properties(0, &p), NINFER_STATUS_UNKNOWN_FORMAT_ID);
    CHECK(all_bytes((const uint8_t *)&p, sizeof p, 0x5a));
    EXPECT(ninfer_format_properties(1, NULL), NINFER_STATUS_NULL_POINTER);

    /* The support matrix: exactly nine legal pairs, no fallback. */
    for (f = 1; f <= NINFER_FORMAT_COUNT; f++) {
        for (l = 1; l <= NINFER_LAYOUT_COUNT; l++) {
            enum ninfer_status s = ninfer_check_pair(f, l);
            OK(ninfer_format_properties(f, &p));
            if (p.layout == l) {
                CHECK(s == NINFER_STATUS_OK);
                legal++;
            } else {
                CHECK(s == NINFER_STATUS_UNSUPPORTED_PAIR);
            }
        }
    }
    CHECK(legal == 9);
    EXPECT(ninfer_check_pair(0, 1), NINFER_STATUS_UNKNOWN_FORMAT_ID);
    EXPECT(ninfer_check_pair(1, 0), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
    EXPECT(ninfer_check_pair(10, 5), NINFER_STATUS_UNKNOWN_FORMAT_ID);

    OK(ninfer_layout_formats(NINFER_LAYOUT_ROW_SPLIT_K128_V1, ids, 4, &count, &loc));
    CHECK(count == 4 && ids[0] == 4 && ids[1] == 5 && ids[2] == 6 && ids[3] == 7 && loc.fields == 0);
    OK(ninfer_layout_formats(NINFER_LAYOUT_ROW_SCALE_V1, ids, NINFER_LAYOUT_MAX_FORMATS, &count, NULL));
    CHECK(count == 1 && ids[0] == NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S);
    OK(ninfer_layout_formats(NINFER_LAYOUT_CONTIGUOUS_LE_V1, ids, 3, &count, NULL));
    CHECK(count == 3 && ids[0] == 1 && ids[1] == 2 && ids[2] == 3);
    count = 99;
    EXPECT(ninfer_layout_formats(NINFER_LAYOUT_ROW_SPLIT_K128_V1, ids, 3, &count, &loc),
           NINFER_STATUS_BUFFER_LENGTH);
    CHECK(count == 99 && loc.fields == NINFER_LOC_LENGTHS && loc.expected == 4 && loc.actual == 3);
    EXPECT(ninfer_layout_formats(NINFER_LAYOUT_ROW_SPLIT_K128_V1, NULL, 4, &count, NULL),
           NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_layout_formats(NINFER_LAYOUT_ROW_SPLIT_K128_V1, ids, 4, NULL, NULL),
           NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_layout_formats(9, ids, 4, &count, NULL), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
}

static void test_descriptors(void) {
    ninfer_desc d, d2, bad;
    ninfer_error_location loc;
    uint64_t shape[9] = {3, 300, 1, 1, 1, 1, 1, 1, 1};
    uint64_t big[2] = {UINT64_MAX / 2, UINT64_MAX / 2};

    /* layouts.md worked example: Q4 [3, 300]. */
    OK(ninfer_desc_new(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, shape, 2, &d, &loc));
    CHECK(loc.fields == 0);
    CHECK(d.format == 4 && d.layout == 2 && d.rank == 2 && d.dims[0] == 3 && d.dims[1] == 300 &&
          d.dims[2] == 0);
    CHECK(d.payload_len == 676 && d.numel == 900 && d.rows == 3 && d.row_len == 300);
    CHECK(d.k_physical == 384 && d.row_code_bytes == 192 && d.groups == 5 && d.physical_groups == 6);
    CHECK(d.plane_count == 2 && d.planes[0].kind == NINFER_PLANE_CODES && d.planes[0].offset == 0 &&
          d.planes[0].len == 576 && d.planes[1].kind == NINFER_PLANE_SCALES && d.planes[1].offset == 640 &&
          d.planes[1].len == 36 && d.planes[2].kind == NINFER_PLANE_NONE);
    OK(ninfer_desc_check(&d));

    /* NVFP4 [200, 4096]. */
    d2 = mat_desc(NINFER_FORMAT_NVFP4, 200, 4096);
    CHECK(d2.payload_len == 475140 && d2.k_physical == 4096 && d2.physical_groups == 256 &&
          d2.scale_rows == 256 && d2.k_tiles == 64 && d2.plane_count == 3);
    CHECK(d2.planes[1].offset == 409600 && d2.planes[1].len == 65536 && d2.planes[2].offset == 475136 &&
          d2.planes[2].len == 4 && d2.planes[2].kind == NINFER_PLANE_DIVISOR);
    /* FP8 [3, 65]. */
    d2 = mat_desc(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, 3, 65);
    CHECK(d2.payload_len == 262 && d2.planes[1].offset == 256 && d2.groups == 1);
    /* Rank 0 BF16, NULL shape allowed with rank 0. */
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 0, &d2, NULL));
    CHECK(d2.payload_len == 2 && d2.numel == 1 && d2.rank == 0 && d2.planes[0].kind == NINFER_PLANE_WORDS);
    /* Rank 8 with an empty dimension. */
    shape[0] = 2;
    shape[1] = 0;
    OK(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 8, &d2, NULL));
    CHECK(d2.payload_len == 0 && d2.numel == 0);

    memset(&bad, 0x33, sizeof bad);
    shape[0] = 3;
    shape[1] = 300;
    EXPECT(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 9, &bad, NULL),
           NINFER_STATUS_BAD_RANK);
    CHECK(all_bytes((const uint8_t *)&bad, sizeof bad, 0x33));
    EXPECT(ninfer_desc_new(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, shape, 3, &bad, NULL),
           NINFER_STATUS_BAD_RANK);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, shape, 1, &bad, NULL),
           NINFER_STATUS_BAD_RANK);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 2, &bad, NULL),
           NINFER_STATUS_UNSUPPORTED_PAIR);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_ROW_SCALE_V1, shape, 2, &bad, NULL),
           NINFER_STATUS_UNSUPPORTED_PAIR);
    EXPECT(ninfer_desc_new(0, NINFER_LAYOUT_ROW_SCALE_V1, shape, 2, &bad, NULL),
           NINFER_STATUS_UNKNOWN_FORMAT_ID);
    EXPECT(ninfer_desc_new(1, 7, shape, 2, &bad, NULL), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
    shape[1] = 24;
    EXPECT(ninfer_desc_new(NINFER_FORMAT_NVFP4, NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1, shape, 2, &bad, NULL),
           NINFER_STATUS_K_NOT_BLOCK_MULTIPLE);
    shape[1] = 0;
    EXPECT(ninfer_desc_new(NINFER_FORMAT_W8G32_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, shape, 2, &bad, NULL),
           NINFER_STATUS_ZERO_DIM);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_Q6G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, big, 2, &bad, NULL),
           NINFER_STATUS_SIZE_OVERFLOW);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, big, 2, &bad, NULL),
           NINFER_STATUS_SIZE_OVERFLOW);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 2, &bad, NULL),
           NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 2, NULL, NULL),
           NINFER_STATUS_NULL_POINTER);
    CHECK(all_bytes((const uint8_t *)&bad, sizeof bad, 0x33));

    /* A modified descriptor is refused everywhere. */
    d2 = d;
    d2.payload_len += 1;
    EXPECT(ninfer_desc_check(&d2), NINFER_STATUS_INVALID_DESCRIPTOR);
    d2 = d;
    d2.dims[1] = 301; /* identity changed but derived members not */
    EXPECT(ninfer_desc_check(&d2), NINFER_STATUS_INVALID_DESCRIPTOR);
    d2 = d;
    d2.rank = 99;
    EXPECT(ninfer_desc_check(&d2), NINFER_STATUS_INVALID_DESCRIPTOR);
    d2 = d;
    d2.format = 1;
    EXPECT(ninfer_desc_check(&d2), NINFER_STATUS_INVALID_DESCRIPTOR);
    EXPECT(ninfer_desc_check(NULL), NINFER_STATUS_NULL_POINTER);
    memset(&d2, 0, sizeof d2);
    EXPECT(ninfer_desc_check(&d2), NINFER_STATUS_INVALID_DESCRIPTOR);

    /* with_rows: the descriptor of a gather. */
    OK(ninfer_desc_with_rows(&d, 7, &d2, NULL));
    CHECK(d2.rows == 7 && d2.row_len == 300 && d2.format == d.format);
    EXPECT(ninfer_desc_with_rows(&d, 0, &d2, &loc), NINFER_STATUS_ZERO_DIM);
    EXPECT(ninfer_desc_with_rows(&d, 7, NULL, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_desc_with_rows(NULL, 7, &d2, NULL), NINFER_STATUS_NULL_POINTER);
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 0, &d2, NULL));
    EXPECT(ninfer_desc_with_rows(&d2, 1, &bad, NULL), NINFER_STATUS_BAD_RANK);
}

/* Check the f32 and BF16 decodes of a whole payload, its row ranges and a gather against
   `expect` (n x k binary32 bit patterns). */
static void check_decodes(const ninfer_desc *d, const uint8_t *payload, const uint32_t *expect) {
    size_t n = (size_t)d->rows, k = (size_t)d->row_len, i;
    float *f = (float *)xmalloc(n * k * sizeof(float));
    uint16_t *b = (uint16_t *)xmalloc(n * k * sizeof(uint16_t));
    uint64_t rows[3];
    ninfer_error_location loc;
    OK(ninfer_decode_f32(d, payload, (size_t)d->payload_len, f, n * k, &loc));
    for (i = 0; i < n * k; i++) {
        if (f32_bits(f[i]) != expect[i]) {
            fprintf(stderr, "decode mismatch at %zu: %08x vs %08x\n", i, f32_bits(f[i]), expect[i]);
            g_failures++;
            break;
        }
    }
    OK(ninfer_decode_bf16(d, payload, (size_t)d->payload_len, b, n * k, NULL));
    for (i = 0; i < n * k; i++) {
        if (b[i] != ninfer_f32_to_bf16_rne(expect[i])) {
            fprintf(stderr, "bf16 decode mismatch at %zu\n", i);
            g_failures++;
            break;
        }
    }
    /* The last row alone, as a range. */
    OK(ninfer_decode_rows_f32(d, payload, (size_t)d->payload_len, n - 1, 1, f, k, NULL));
    CHECK(memcmp(f, expect + (n - 1) * k, k * sizeof(float)) == 0);
    OK(ninfer_decode_rows_bf16(d, payload, (size_t)d->payload_len, n - 1, 1, b, k, NULL));
    CHECK(b[0] == ninfer_f32_to_bf16_rne(expect[(n - 1) * k]));
    /* A gather with repeats. */
    rows[0] = n - 1;
    rows[1] = 0;
    rows[2] = n - 1;
    if (n >= 3) {
        OK(ninfer_gather_rows_f32(d, payload, (size_t)d->payload_len, rows, 3, f, 3 * k, NULL));
        CHECK(memcmp(f, expect + (n - 1) * k, k * sizeof(float)) == 0);
        CHECK(memcmp(f + k, expect, k * sizeof(float)) == 0);
        CHECK(memcmp(f + 2 * k, expect + (n - 1) * k, k * sizeof(float)) == 0);
        OK(ninfer_gather_rows_bf16(d, payload, (size_t)d->payload_len, rows, 3, b, 3 * k, NULL));
        CHECK(b[k] == ninfer_f32_to_bf16_rne(expect[0]));
    }
    /* Out-of-range rows: untouched output, location names the position and the row. */
    memset(f, 0x7b, k * sizeof(float));
    rows[0] = 0;
    rows[1] = n;
    EXPECT(ninfer_gather_rows_f32(d, payload, (size_t)d->payload_len, rows, 2, f, 2 * k, &loc),
           NINFER_STATUS_ROW_OUT_OF_RANGE);
    CHECK(loc.fields == (NINFER_LOC_ROW | NINFER_LOC_INDEX) && loc.index == 1 && loc.row == n);
    CHECK(all_bytes((const uint8_t *)f, k * sizeof(float), 0x7b));
    EXPECT(ninfer_gather_rows_bf16(d, payload, (size_t)d->payload_len, rows, 2, b, 2 * k, NULL),
           NINFER_STATUS_ROW_OUT_OF_RANGE);
    EXPECT(ninfer_decode_rows_f32(d, payload, (size_t)d->payload_len, n - 1, 2, f, 2 * k, &loc),
           NINFER_STATUS_ROW_OUT_OF_RANGE);
    CHECK(loc.row == n && loc.index == 1);
    EXPECT(ninfer_decode_rows_f32(d, payload, (size_t)d->payload_len, UINT64_MAX, 2, f, 2 * k, NULL),
           NINFER_STATUS_ROW_OUT_OF_RANGE);
    EXPECT(ninfer_decode_rows_bf16(d, payload, (size_t)d->payload_len, n, 1, b, k, NULL),
           NINFER_STATUS_ROW_OUT_OF_RANGE);
    /* Short buffers, wrong payload length, NULL, overlap. */
    EXPECT(ninfer_decode_f32(d, payload, (size_t)d->payload_len, f, n * k - 1, &loc), NINFER_STATUS_BUFFER_LENGTH);
    CHECK(loc.fields == NINFER_LOC_LENGTHS && loc.expected == n * k && loc.actual == n * k - 1);
    EXPECT(ninfer_decode_f32(d, payload, (size_t)d->payload_len - 1, f, n * k, &loc), NINFER_STATUS_PAYLOAD_LENGTH);
    CHECK(loc.expected == d->payload_len && loc.actual == d->payload_len - 1);
    EXPECT(ninfer_decode_f32(d, NULL, (size_t)d->payload_len, f, n * k, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_decode_f32(d, payload, (size_t)d->payload_len, NULL, n * k, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_decode_f32(NULL, payload, (size_t)d->payload_len, f, n * k, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_decode_bf16(d, payload, (size_t)d->payload_len, b, 1, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_gather_rows_f32(d, payload, (size_t)d->payload_len, NULL, 1, f, k, NULL),
           NINFER_STATUS_NULL_POINTER);
    OK(ninfer_gather_rows_f32(d, payload, (size_t)d->payload_len, NULL, 0, NULL, 0, NULL));
    OK(ninfer_decode_rows_f32(d, payload, (size_t)d->payload_len, 0, 0, NULL, 0, NULL));
    EXPECT(ninfer_decode_f32(d, payload, (size_t)d->payload_len, (float *)(void *)(uintptr_t)payload, n * k,
                             NULL),
           NINFER_STATUS_OVERLAPPING_BUFFERS);
    free(f);
    free(b);
}

static void test_grouped(uint32_t format, uint64_t n, uint64_t k) {
    ninfer_desc d = mat_desc(format, n, k), g;
    ninfer_format_props p;
    size_t nk = (size_t)(n * k), ns = (size_t)(n * d.groups), len = (size_t)d.payload_len, i;
    int8_t *codes = (int8_t *)xmalloc(nk), *codes2 = (int8_t *)xmalloc(nk);
    uint16_t *scales = (uint16_t *)xmalloc(ns * 2), *scales2 = (uint16_t *)xmalloc(ns * 2);
    uint8_t *payload = (uint8_t *)xmalloc(len), *sentinel = (uint8_t *)xmalloc(len);
    uint32_t *expect = (uint32_t *)xmalloc(nk * 4);
    float *src = (float *)xmalloc(nk * sizeof(float));
    uint16_t *src16 = (uint16_t *)xmalloc(nk * 2);
    uint8_t *payload2 = (uint8_t *)xmalloc(len);
    ninfer_error_location loc;
    uint64_t rows[2];

    OK(ninfer_format_properties(format, &p));
    /* Legal codes covering both interval endpoints, valid positive scales. */
    for (i = 0; i < nk; i++) {
        codes[i] = (int8_t)(p.qmin + (int32_t)(rnd() % (uint32_t)(p.qmax - p.qmin + 1)));
    }
    codes[0] = (int8_t)p.qmin;
    codes[1] = (int8_t)p.qmax;
    for (i = 0; i < ns; i++) {
        scales[i] = (uint16_t)(0x0001 + rnd() % 0x7bff); /* finite positive binary16 */
    }
    memset(payload, 0xee, len);
    OK(ninfer_pack_grouped(&d, codes, nk, scales, ns, payload, len, &loc));
    OK(ninfer_validate(&d, payload, len, &loc));
    CHECK(loc.fields == 0);
    OK(ninfer_unpack_grouped(&d, payload, len, codes2, nk, scales2, ns, NULL));
    CHECK(memcmp(codes, codes2, nk) == 0 && memcmp(scales, scales2, ns * 2) == 0);
    for (i = 0; i < nk; i++) {
        size_t row = i / (size_t)k, kk = i % (size_t)k;
        expect[i] = ninfer_grouped_reconstruct_bits(scales[row * (size_t)d.groups + kk / p.group_size], codes[i]);
    }
    check_decodes(&d, payload, expect);

    /* Pack errors: a code that does not fit, lengths, wrong format, overlap. Output untouched. */
    memset(sentinel, 0xcd, len);
    if (p.code_bits < 8) {
        codes[nk - 1] = (int8_t)(p.qmax + 1);
        EXPECT(ninfer_pack_grouped(&d, codes, nk, scales, ns, sentinel, len, &loc), NINFER_STATUS_WORD_DOES_NOT_FIT);
        CHECK(loc.index == nk - 1 && loc.row == n - 1 && loc.element == k - 1 &&
              loc.fields == (NINFER_LOC_INDEX | NINFER_LOC_ROW | NINFER_LOC_ELEMENT));
        CHECK(all_bytes(sentinel, len, 0xcd));
        codes[nk - 1] = 0;
    }
    EXPECT(ninfer_pack_grouped(&d, codes, nk - 1, scales, ns, sentinel, len, &loc), NINFER_STATUS_BUFFER_LENGTH);
    CHECK(loc.expected == nk && loc.actual == nk - 1);
    EXPECT(ninfer_pack_grouped(&d, codes, nk, scales, ns + 1, sentinel, len, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_pack_grouped(&d, codes, nk, scales, ns, sentinel, len - 1, &loc), NINFER_STATUS_PAYLOAD_LENGTH);
    EXPECT(ninfer_pack_grouped(&d, NULL, nk, scales, ns, sentinel, len, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_pack_grouped(&d, codes, nk, scales, ns, NULL, len, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_pack_grouped(&d, (const int8_t *)sentinel, nk, scales, ns, sentinel, len, NULL),
           NINFER_STATUS_OVERLAPPING_BUFFERS);
    EXPECT(ninfer_pack_grouped(&d, codes, nk, (const uint16_t *)(const void *)(sentinel + 1), ns, payload2, len,
                               NULL),
           NINFER_STATUS_MISALIGNED);
    CHECK(all_bytes(sentinel, len, 0xcd));
    EXPECT(ninfer_unpack_grouped(&d, payload, len, codes2, nk + 1, scales2, ns, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_unpack_grouped(&d, payload, len - 1, codes2, nk, scales2, ns, NULL), NINFER_STATUS_PAYLOAD_LENGTH);
    EXPECT(ninfer_unpack_grouped(&d, payload, len, NULL, nk, scales2, ns, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_unpack_grouped(&d, payload, len, (int8_t *)(void *)scales2, 2, scales2, ns, NULL),
           NINFER_STATUS_OVERLAPPING_BUFFERS);

    /* Padding: the byte after the code plane is an inter-plane gap byte when it exists. */
    memcpy(payload2, payload, len);
    if (d.planes[1].offset > d.planes[0].len) {
        payload2[d.planes[0].len] = 1;
        EXPECT(ninfer_validate_layout(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_PADDING);
        CHECK(loc.fields == NINFER_LOC_BYTE_OFFSET && loc.byte_offset == d.planes[0].len);
        EXPECT(ninfer_validate(&d, payload2, len, NULL), NINFER_STATUS_NON_ZERO_PADDING);
        OK(ninfer_validate_values(&d, payload2, len, NULL));
    }
    /* The last physical scale word is padding when Kp / G > ceil(K / G). */
    if (d.physical_groups > d.groups) {
        memcpy(payload2, payload, len);
        payload2[len - 1] = 0x3c;
        EXPECT(ninfer_validate_layout(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_PADDING);
        CHECK(loc.byte_offset == len - 2 || loc.byte_offset == len - 1);
    }

    /* Value rules, with their locations: row 1, group 0. */
    memcpy(scales2, scales, ns * 2);
    scales2[d.groups] = 0x8000;
    OK(ninfer_pack_grouped(&d, codes, nk, scales2, ns, payload2, len, NULL));
    OK(ninfer_validate_layout(&d, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_SCALE_NEGATIVE_ZERO);
    CHECK(loc.fields == (NINFER_LOC_ROW | NINFER_LOC_GROUP | NINFER_LOC_ELEMENT) && loc.row == 1 &&
          loc.group == 0 && loc.element == 0);
    scales2[d.groups] = 0xbc00;
    OK(ninfer_pack_grouped(&d, codes, nk, scales2, ns, payload2, len, NULL));
    EXPECT(ninfer_validate(&d, payload2, len, NULL), NINFER_STATUS_SCALE_NEGATIVE);
    scales2[d.groups] = 0x7c00;
    OK(ninfer_pack_grouped(&d, codes, nk, scales2, ns, payload2, len, NULL));
    EXPECT(ninfer_validate(&d, payload2, len, NULL), NINFER_STATUS_SCALE_INFINITE);
    scales2[d.groups] = 0x7e01;
    OK(ninfer_pack_grouped(&d, codes, nk, scales2, ns, payload2, len, NULL));
    EXPECT(ninfer_validate(&d, payload2, len, NULL), NINFER_STATUS_SCALE_NAN);
    scales2[d.groups] = 0x0000;
    for (i = 0; i < (size_t)k && i < p.group_size; i++) {
        codes[(size_t)k + i] = 0;
    }
    codes[(size_t)k + 3] = 1;
    OK(ninfer_pack_grouped(&d, codes, nk, scales2, ns, payload2, len, NULL));
    EXPECT(ninfer_validate(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_CODE_WITH_ZERO_SCALE);
    CHECK(loc.row == 1 && loc.group == 0 && loc.element == 3);
    if (p.code_bits == 8) {
        codes[(size_t)k + 5] = -128; /* W8: 0x80 is outside the language but fits the byte */
        OK(ninfer_pack_grouped(&d, codes, nk, scales, ns, payload2, len, NULL));
        EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_CODE_OUT_OF_RANGE);
        CHECK(loc.row == 1 && loc.element == 5 && loc.group == 0);
        codes[(size_t)k + 5] = 0;
    }

    /* gather_pack: rows [n-1, 0] re-packed decode like a gather of the same rows. */
    rows[0] = n - 1;
    rows[1] = 0;
    OK(ninfer_desc_with_rows(&d, 2, &g, NULL));
    {
        uint8_t *gp = (uint8_t *)xmalloc((size_t)g.payload_len);
        float *a = (float *)xmalloc(2 * (size_t)k * sizeof(float));
        float *b2 = (float *)xmalloc(2 * (size_t)k * sizeof(float));
        OK(ninfer_gather_pack(&d, payload, len, rows, 2, gp, (size_t)g.payload_len, NULL));
        OK(ninfer_validate(&g, gp, (size_t)g.payload_len, NULL));
        OK(ninfer_decode_f32(&g, gp, (size_t)g.payload_len, a, 2 * (size_t)k, NULL));
        OK(ninfer_gather_rows_f32(&d, payload, len, rows, 2, b2, 2 * (size_t)k, NULL));
        CHECK(memcmp(a, b2, 2 * (size_t)k * sizeof(float)) == 0);
        memset(gp, 0x11, (size_t)g.payload_len);
        EXPECT(ninfer_gather_pack(&d, payload, len, rows, 2, gp, (size_t)g.payload_len - 1, NULL),
               NINFER_STATUS_PAYLOAD_LENGTH);
        rows[1] = n + 5;
        EXPECT(ninfer_gather_pack(&d, payload, len, rows, 2, gp, (size_t)g.payload_len, &loc),
               NINFER_STATUS_ROW_OUT_OF_RANGE);
        CHECK(loc.index == 1 && loc.row == n + 5);
        CHECK(all_bytes(gp, (size_t)g.payload_len, 0x11));
        EXPECT(ninfer_gather_pack(&d, payload, len, NULL, 0, gp, 0, NULL), NINFER_STATUS_ZERO_DIM);
        free(gp);
        free(a);
        free(b2);
    }

    /* The canonical encoder from f32, BF16 and binary16 sources. */
    for (i = 0; i < nk; i++) {
        /* Small integers times powers of two: exact in BF16 and binary16. */
        int v = (int)(rnd() % 61) - 30;
        src[i] = (float)v * (i % 3 == 0 ? 0.25f : 1.0f);
    }
    OK(ninfer_encode_f32(&d, src, nk, payload, len, &loc));
    OK(ninfer_validate(&d, payload, len, NULL));
    for (i = 0; i < nk; i++) {
        src16[i] = ninfer_f32_to_bf16_rne(f32_bits(src[i]));
    }
    OK(ninfer_encode_bf16(&d, src16, nk, payload2, len, NULL));
    CHECK(memcmp(payload, payload2, len) == 0);
    for (i = 0; i < nk; i++) {
        src16[i] = f16_from_exact(src[i]);
        CHECK(ninfer_f16_to_f32_bits(src16[i]) == f32_bits(src[i]));
    }
    OK(ninfer_encode_f16(&d, src16, nk, payload2, len, NULL));
    CHECK(memcmp(payload, payload2, len) == 0);

    /* Encoder failures: NaN at (row n-1, k 70 or last), scale overflow; output untouched. */
    memset(sentinel, 0xcd, len);
    {
        size_t kk = k > 70 ? 70 : (size_t)k - 1;
        size_t at = (size_t)(n - 1) * (size_t)k + kk;
        float keep = src[at];
        src[at] = f32_from_bits(0x7fc00001u);
        EXPECT(ninfer_encode_f32(&d, src, nk, sentinel, len, &loc), NINFER_STATUS_NON_FINITE_SOURCE);
        CHECK(loc.row == n - 1 && loc.element == kk && loc.group == kk / p.group_size);
        CHECK(all_bytes(sentinel, len, 0xcd));
        src[at] = f32_from_bits(0xff800000u);
        EXPECT(ninfer_encode_f32(&d, src, nk, sentinel, len, NULL), NINFER_STATUS_NON_FINITE_SOURCE);
        src[at] = 1.0e9f;
        EXPECT(ninfer_encode_f32(&d, src, nk, sentinel, len, &loc), NINFER_STATUS_SCALE_OVERFLOW);
        CHECK(loc.row == n - 1 && loc.group == kk / p.group_size && loc.element == (kk / p.group_size) * p.group_size);
        CHECK(all_bytes(sentinel, len, 0xcd));
        src[at] = keep;
        for (i = 0; i < nk; i++) {
            src16[i] = ninfer_f32_to_bf16_rne(f32_bits(src[i]));
        }
        src16[at] = 0x7f80; /* BF16 +inf */
        EXPECT(ninfer_encode_bf16(&d, src16, nk, sentinel, len, NULL), NINFER_STATUS_NON_FINITE_SOURCE);
        src16[at] = 0x7c00; /* binary16 +inf */
        EXPECT(ninfer_encode_f16(&d, src16, nk, sentinel, len, NULL), NINFER_STATUS_NON_FINITE_SOURCE);
        CHECK(all_bytes(sentinel, len, 0xcd));
    }
    EXPECT(ninfer_encode_f32(&d, src, nk - 1, sentinel, len, &loc), NINFER_STATUS_BUFFER_LENGTH);
    CHECK(loc.expected == nk && loc.actual == nk - 1);
    EXPECT(ninfer_encode_f32(&d, src, nk, sentinel, len + 1, &loc), NINFER_STATUS_PAYLOAD_LENGTH);
    EXPECT(ninfer_encode_f32(&d, NULL, nk, sentinel, len, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_encode_f32(&d, src, nk, NULL, len, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_encode_f32(NULL, src, nk, sentinel, len, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_encode_bf16(&d, (const uint16_t *)(const void *)(sentinel + 1), nk, payload2, len, NULL),
           NINFER_STATUS_MISALIGNED);
    EXPECT(ninfer_encode_f32(&d, (const float *)(const void *)sentinel, nk, sentinel + 4, len, NULL),
           NINFER_STATUS_OVERLAPPING_BUFFERS);
    CHECK(all_bytes(sentinel, len, 0xcd));

    free(codes);
    free(codes2);
    free(scales);
    free(scales2);
    free(payload);
    free(payload2);
    free(sentinel);
    free(expect);
    free(src);
    free(src16);
}

static void test_encoder_rejects_other_formats(void) {
    ninfer_desc d = mat_desc(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, 2, 16);
    float src[32] = {0};
    uint8_t out[1024];
    EXPECT(ninfer_encode_f32(&d, src, 32, out, (size_t)d.payload_len, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    d = mat_desc(NINFER_FORMAT_NVFP4, 2, 16);
    EXPECT(ninfer_encode_f16(&d, (const uint16_t *)(const void *)src, 32, out, (size_t)d.payload_len, NULL),
           NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    d = mat_desc(NINFER_FORMAT_BF16, 2, 16);
    EXPECT(ninfer_encode_bf16(&d, (const uint16_t *)(const void *)src, 32, out, (size_t)d.payload_len, NULL),
           NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
}

static void test_nvfp4(void) {
    const uint64_t n = 130, k = 272;
    ninfer_desc d = mat_desc(NINFER_FORMAT_NVFP4, n, k), g;
    size_t nk = (size_t)(n * k), ns = (size_t)(n * k / 16), len = (size_t)d.payload_len, i;
    uint8_t *codes = (uint8_t *)xmalloc(nk), *codes2 = (uint8_t *)xmalloc(nk);
    uint8_t *scales = (uint8_t *)xmalloc(ns), *scales2 = (uint8_t *)xmalloc(ns);
    uint8_t *payload = (uint8_t *)xmalloc(len), *payload2 = (uint8_t *)xmalloc(len);
    uint32_t *expect = (uint32_t *)xmalloc(nk * 4);
    uint32_t divisor = f32_bits(3.0f), div2 = 0;
    ninfer_error_location loc;
    uint64_t rows[3] = {129, 0, 128};

    for (i = 0; i < nk; i++) {
        codes[i] = (uint8_t)(rnd() & 15);
    }
    for (i = 0; i < ns; i++) {
        scales[i] = (uint8_t)(rnd() % 0x7f); /* sign-zero finite: 0x00..0x7e */
    }
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, divisor, payload, len, &loc));
    OK(ninfer_validate(&d, payload, len, NULL));
    OK(ninfer_unpack_nvfp4(&d, payload, len, codes2, nk, scales2, ns, &div2, NULL));
    CHECK(memcmp(codes, codes2, nk) == 0 && memcmp(scales, scales2, ns) == 0 && div2 == divisor);
    /* Swizzle: the scale of (n, kb) sits at scale_offset + ninfer_nvfp4_scale_index(n, kb, nKT). */
    CHECK(payload[d.planes[1].offset + ninfer_nvfp4_scale_index(129, 3, d.k_tiles)] == scales[129 * 17 + 3]);
    CHECK(payload[d.planes[1].offset + ninfer_nvfp4_scale_index(33, 16, d.k_tiles)] == scales[33 * 17 + 16]);
    for (i = 0; i < nk; i++) {
        expect[i] = ninfer_nvfp4_reconstruct_bits(codes[i], scales[(i / (size_t)k) * 17 + (i % (size_t)k) / 16], divisor);
    }
    check_decodes(&d, payload, expect);
    /* Re-packing rows re-swizzles for the new row count. */
    OK(ninfer_desc_with_rows(&d, 3, &g, NULL));
    {
        uint8_t *gp = (uint8_t *)xmalloc((size_t)g.payload_len);
        float *a = (float *)xmalloc(3 * (size_t)k * sizeof(float)), *b = (float *)xmalloc(3 * (size_t)k * sizeof(float));
        OK(ninfer_gather_pack(&d, payload, len, rows, 3, gp, (size_t)g.payload_len, NULL));
        OK(ninfer_validate(&g, gp, (size_t)g.payload_len, NULL));
        OK(ninfer_decode_f32(&g, gp, (size_t)g.payload_len, a, 3 * (size_t)k, NULL));
        OK(ninfer_gather_rows_f32(&d, payload, len, rows, 3, b, 3 * (size_t)k, NULL));
        CHECK(memcmp(a, b, 3 * (size_t)k * sizeof(float)) == 0);
        free(gp);
        free(a);
        free(b);
    }
    /* Errors. */
    codes[77] = 0x10;
    memset(payload2, 0xcd, len);
    EXPECT(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, divisor, payload2, len, &loc), NINFER_STATUS_WORD_DOES_NOT_FIT);
    CHECK(loc.index == 77 && loc.row == 0 && loc.element == 77);
    CHECK(all_bytes(payload2, len, 0xcd));
    codes[77] = 0;
    EXPECT(ninfer_pack_nvfp4(&d, codes, nk, scales, ns - 1, divisor, payload2, len, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_unpack_nvfp4(&d, payload, len, codes2, nk, scales2, ns, NULL, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_unpack_nvfp4(&d, payload, len, codes2, nk, scales2, ns - 1, &div2, NULL), NINFER_STATUS_BUFFER_LENGTH);
    /* Padding scale entry (row n >= N) and padding nibble (k >= K, Kp = 320). */
    memcpy(payload2, payload, len);
    payload2[d.planes[1].offset + ninfer_nvfp4_scale_index(131, 0, d.k_tiles)] = 0x38;
    EXPECT(ninfer_validate_layout(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_PADDING);
    CHECK(loc.byte_offset == d.planes[1].offset + ninfer_nvfp4_scale_index(131, 0, d.k_tiles));
    memcpy(payload2, payload, len);
    payload2[k / 2] = 0x01; /* row 0, k = 272: the first padding nibble */
    EXPECT(ninfer_validate_layout(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_PADDING);
    CHECK(loc.byte_offset == k / 2);
    /* Value rules: divisor, block scales. */
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, 0u, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_DIVISOR_NOT_POSITIVE);
    CHECK(loc.fields == 0);
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, 0xbf800000u, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, NULL), NINFER_STATUS_DIVISOR_NOT_POSITIVE);
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, 0x7f800000u, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, NULL), NINFER_STATUS_DIVISOR_NOT_FINITE);
    scales[17 * 2 + 5] = 0x80;
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, divisor, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_SCALE_NEGATIVE_ZERO);
    CHECK(loc.row == 2 && loc.group == 5 && loc.element == 80);
    scales[17 * 2 + 5] = 0x7f;
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, divisor, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, NULL), NINFER_STATUS_SCALE_NAN);
    scales[17 * 2 + 5] = 0xb8;
    OK(ninfer_pack_nvfp4(&d, codes, nk, scales, ns, divisor, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, NULL), NINFER_STATUS_SCALE_NEGATIVE);
    free(codes);
    free(codes2);
    free(scales);
    free(scales2);
    free(payload);
    free(payload2);
    free(expect);
}

static void test_fp8_row(void) {
    const uint64_t n = 3, k = 65;
    ninfer_desc d = mat_desc(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, n, k);
    size_t nk = (size_t)(n * k), len = (size_t)d.payload_len, i;
    uint8_t codes[195], codes2[195], payload[262], payload2[262];
    uint16_t scales[3] = {0x3f80, 0x0001, 0x4780}, scales2[3];
    uint32_t expect[195];
    ninfer_error_location loc;

    for (i = 0; i < nk; i++) {
        codes[i] = (uint8_t)(rnd() & 0xff);
        if ((codes[i] & 0x7f) == 0x7f) {
            codes[i] = 0x7e;
        }
    }
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload, len, NULL));
    OK(ninfer_validate(&d, payload, len, NULL));
    OK(ninfer_unpack_fp8_row(&d, payload, len, codes2, nk, scales2, 3, NULL));
    CHECK(memcmp(codes, codes2, nk) == 0 && memcmp(scales, scales2, 6) == 0);
    for (i = 0; i < nk; i++) {
        expect[i] = ninfer_fp8_row_reconstruct_bits(codes[i], scales[i / (size_t)k]);
    }
    check_decodes(&d, payload, expect);
    /* Errors and value rules. */
    EXPECT(ninfer_pack_fp8_row(&d, codes, nk, scales, 2, payload2, len, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_unpack_fp8_row(&d, payload, len, codes2, nk, NULL, 3, NULL), NINFER_STATUS_NULL_POINTER);
    memcpy(payload2, payload, len);
    payload2[200] = 9;
    EXPECT(ninfer_validate_layout(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_PADDING);
    CHECK(loc.byte_offset == 200);
    codes[k + 7] = 0xff;
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_CODE_NAN);
    CHECK(loc.row == 1 && loc.element == 7 && loc.group == 0);
    codes[k + 7] = 0x80;
    scales[2] = 0x0000;
    for (i = 2 * (size_t)k; i < nk; i++) {
        codes[i] = 0x00;
    }
    codes[2 * (size_t)k + 9] = 0x80; /* -0 is allowed in a zero row */
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload2, len, NULL));
    OK(ninfer_validate_values(&d, payload2, len, NULL));
    codes[2 * (size_t)k + 10] = 0x01;
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_NON_ZERO_CODE_WITH_ZERO_SCALE);
    CHECK(loc.row == 2 && loc.element == 10);
    scales[0] = 0xbf80;
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_SCALE_NEGATIVE);
    scales[0] = 0x7f80;
    OK(ninfer_pack_fp8_row(&d, codes, nk, scales, 3, payload2, len, NULL));
    EXPECT(ninfer_validate_values(&d, payload2, len, &loc), NINFER_STATUS_SCALE_INFINITE);
    CHECK(loc.row == 0 && loc.group == 0 && loc.element == 0);
}

static void test_direct(void) {
    uint64_t shape[3] = {3, 5, 2};
    ninfer_desc d;
    uint16_t w16[30], r16[30];
    uint32_t w32[30], r32[30], expect[30];
    uint8_t payload[120], sentinel[120];
    float f[30];
    size_t i;
    ninfer_error_location loc;

    /* BF16 words survive bit for bit, NaN payloads and signed zeros included. */
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 3, &d, NULL));
    CHECK(d.rows == 3 && d.row_len == 10 && d.payload_len == 60);
    for (i = 0; i < 30; i++) {
        w16[i] = (uint16_t)rnd();
    }
    w16[0] = 0x8000;
    w16[1] = 0x7f81; /* signalling NaN with payload */
    w16[2] = 0xffc1;
    w16[3] = 0x0001;
    OK(ninfer_pack_words16(&d, w16, 30, payload, 60, NULL));
    CHECK(payload[0] == 0x00 && payload[1] == 0x80 && payload[2] == 0x81 && payload[3] == 0x7f); /* LE */
    OK(ninfer_validate(&d, payload, 60, NULL));
    OK(ninfer_unpack_words16(&d, payload, 60, r16, 30, NULL));
    CHECK(memcmp(w16, r16, sizeof w16) == 0);
    for (i = 0; i < 30; i++) {
        expect[i] = ninfer_bf16_to_f32_bits(w16[i]);
    }
    {
        /* check_decodes treats the tensor as rows x row_len. */
        check_decodes(&d, payload, expect);
    }
    EXPECT(ninfer_pack_words32(&d, w32, 30, payload, 60, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    EXPECT(ninfer_unpack_words32(&d, payload, 60, r32, 30, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    EXPECT(ninfer_pack_words16(&d, w16, 29, payload, 60, &loc), NINFER_STATUS_BUFFER_LENGTH);
    CHECK(loc.expected == 30 && loc.actual == 29);
    EXPECT(ninfer_unpack_words16(&d, payload, 60, r16, 31, NULL), NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_pack_words16(&d, w16, 30, payload, 59, NULL), NINFER_STATUS_PAYLOAD_LENGTH);

    /* FP32 and I32. */
    OK(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 3, &d, NULL));
    for (i = 0; i < 30; i++) {
        w32[i] = rnd();
    }
    w32[0] = 0x7f800001u;
    w32[1] = 0x80000000u;
    OK(ninfer_pack_words32(&d, w32, 30, payload, 120, NULL));
    OK(ninfer_unpack_words32(&d, payload, 120, r32, 30, NULL));
    CHECK(memcmp(w32, r32, sizeof w32) == 0);
    check_decodes(&d, payload, w32);
    EXPECT(ninfer_pack_words16(&d, w16, 30, payload, 120, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    OK(ninfer_desc_new(NINFER_FORMAT_I32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 3, &d, NULL));
    w32[2] = 0x80000000u;
    w32[3] = 0x7fffffffu;
    OK(ninfer_pack_words32(&d, w32, 30, payload, 120, NULL));
    OK(ninfer_validate(&d, payload, 120, NULL));
    OK(ninfer_unpack_words32(&d, payload, 120, r32, 30, NULL));
    CHECK(memcmp(w32, r32, sizeof w32) == 0);
    memset(f, 0x44, sizeof f);
    EXPECT(ninfer_decode_f32(&d, payload, 120, f, 30, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    EXPECT(ninfer_decode_rows_bf16(&d, payload, 120, 0, 1, r16, 10, NULL), NINFER_STATUS_NOT_DEFINED_FOR_FORMAT);
    CHECK(all_bytes((const uint8_t *)f, sizeof f, 0x44));
    /* I32 rows still gather-pack (a copy). */
    {
        uint64_t rows[2] = {2, 2};
        ninfer_desc g;
        OK(ninfer_desc_with_rows(&d, 2, &g, NULL));
        OK(ninfer_gather_pack(&d, payload, 120, rows, 2, sentinel, (size_t)g.payload_len, NULL));
        CHECK(memcmp(sentinel, payload + 80, 40) == 0 && memcmp(sentinel + 40, payload + 80, 40) == 0);
    }
    /* Rank 0: decode works, rows do not exist. */
    OK(ninfer_desc_new(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 0, &d, NULL));
    w32[0] = f32_bits(-2.5f);
    OK(ninfer_pack_words32(&d, w32, 1, payload, 4, NULL));
    OK(ninfer_decode_f32(&d, payload, 4, f, 1, NULL));
    CHECK(f[0] == -2.5f);
    OK(ninfer_decode_bf16(&d, payload, 4, r16, 1, NULL));
    CHECK(r16[0] == 0xc020);
    EXPECT(ninfer_decode_rows_f32(&d, payload, 4, 0, 1, f, 1, NULL), NINFER_STATUS_BAD_RANK);
    EXPECT(ninfer_gather_pack(&d, payload, 4, NULL, 0, sentinel, 0, NULL), NINFER_STATUS_BAD_RANK);
    /* Empty tensor: NULL buffers with length 0 are fine. */
    shape[0] = 0;
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, shape, 2, &d, NULL));
    OK(ninfer_pack_words16(&d, NULL, 0, NULL, 0, NULL));
    OK(ninfer_validate(&d, NULL, 0, NULL));
    OK(ninfer_decode_f32(&d, NULL, 0, NULL, 0, NULL));
    EXPECT(ninfer_decode_f32(&d, NULL, 1, NULL, 0, NULL), NINFER_STATUS_NULL_POINTER);
}

static void test_word_oracles(void) {
    static const uint64_t worked[13][3] = {{0, 0, 0},       {0, 1, 1},       {0, 4, 512},     {1, 0, 16},
                                           {31, 0, 496},    {32, 0, 4},      {33, 2, 22},     {64, 0, 8},
                                           {96, 1, 13},     {127, 3, 511},   {128, 0, 32768}, {130, 5, 33313},
                                           {199, 255, 65147}};
    size_t i;
    CHECK(ninfer_e2m1_to_f32_bits(7) == f32_bits(6.0f));
    CHECK(ninfer_e2m1_to_f32_bits(8) == 0x80000000u);
    CHECK(ninfer_e2m1_to_f32_bits(0x1f) == f32_bits(-6.0f)); /* high bits ignored */
    CHECK(ninfer_e4m3fn_to_f32_bits(0x7e) == f32_bits(448.0f));
    CHECK(ninfer_e4m3fn_to_f32_bits(0x01) == f32_bits(1.0f / 512.0f));
    CHECK(ninfer_e4m3fn_to_f32_bits(0xff) == 0xffc00000u);
    CHECK(ninfer_bf16_to_f32_bits(0x3f80) == f32_bits(1.0f));
    CHECK(ninfer_f16_to_f32_bits(0x0001) == f32_bits(1.0f / 16777216.0f));
    CHECK(ninfer_f16_to_f32_bits(0x3c00) == f32_bits(1.0f));
    CHECK(ninfer_f32_to_bf16_rne(0x3f808000u) == 0x3f80); /* tie to even */
    CHECK(ninfer_f32_to_bf16_rne(0x3f818000u) == 0x3f82);
    CHECK(ninfer_grouped_reconstruct_bits(0x3800, -3) == f32_bits(-1.5f));
    CHECK(ninfer_nvfp4_reconstruct_bits(7, 0x38, f32_bits(2.0f)) == f32_bits(3.0f));
    CHECK(ninfer_fp8_row_reconstruct_bits(0x38, 0x4000) == f32_bits(2.0f));
    for (i = 0; i < 13; i++) {
        CHECK(ninfer_nvfp4_scale_index(worked[i][0], worked[i][1], 64) == worked[i][2]);
    }
    CHECK(ninfer_nvfp4_scale_index(UINT64_MAX, 0, UINT64_MAX) == UINT64_MAX);
    CHECK(NINFER_E2M1_TO_F32_BITS[5] == f32_bits(3.0f));
    CHECK(NINFER_E4M3FN_TO_F32_BITS[0x7e] == f32_bits(448.0f));
    for (i = 0; i < 256; i++) {
        CHECK(NINFER_E4M3FN_TO_F32_BITS[i] == ninfer_e4m3fn_to_f32_bits((uint8_t)i));
    }
    for (i = 0; i < 16; i++) {
        CHECK(NINFER_E2M1_TO_F32_BITS[i] == ninfer_e2m1_to_f32_bits((uint8_t)i));
    }
}

static void test_location_is_cleared_on_success(void) {
    ninfer_error_location loc;
    ninfer_desc d;
    memset(&loc, 0xff, sizeof loc);
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 0, &d, &loc));
    CHECK(loc.fields == 0 && loc.row == 0 && loc.expected == 0 && loc.detail == 0);
    memset(&loc, 0xff, sizeof loc);
    EXPECT(ninfer_desc_new(NINFER_FORMAT_BF16, 2, NULL, 0, &d, &loc), NINFER_STATUS_UNSUPPORTED_PAIR);
    CHECK(loc.fields == 0 && loc.row == 0);
    {
        /* A misaligned location pointer is refused before anything is written. */
        uint64_t store[12];
        ninfer_desc d2;
        memset(&d2, 0x21, sizeof d2);
        EXPECT(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NULL, 0, &d2,
                               (ninfer_error_location *)(void *)((uint8_t *)store + 4)),
               NINFER_STATUS_MISALIGNED);
        CHECK(all_bytes((const uint8_t *)&d2, sizeof d2, 0x21));
    }
}

static void test_kernels(void) {
    bool listed = false;
    uint32_t plat = ninfer_cpu_platform();
    ninfer_desc d = mat_desc(NINFER_FORMAT_W8G32_F16S, 5, 100), d8, di;
    float src[500], x[300], y[15], y4[15], w[500];
    uint8_t payload[1024];
    ninfer_error_location loc;
    size_t i, b, r, kk;
    uint32_t prof;

    CHECK(plat >= NINFER_PLATFORM_SCALAR && plat <= NINFER_PLATFORM_NEON);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, NINFER_OP_GEMV,
                               NINFER_PROFILE_F32, plat, &listed));
    CHECK(listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_NVFP4, NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1, NINFER_OP_GEMV_BATCH,
                               NINFER_PROFILE_I8, NINFER_PLATFORM_SCALAR, &listed));
    CHECK(listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_I32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NINFER_OP_GEMV, NINFER_PROFILE_F32,
                               plat, &listed));
    CHECK(!listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, NINFER_LAYOUT_ROW_SCALE_V1, NINFER_OP_GEMV,
                               NINFER_PROFILE_I8, plat, &listed));
    CHECK(!listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SCALE_V1, NINFER_OP_GEMV, NINFER_PROFILE_F32,
                               plat, &listed));
    CHECK(!listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_Q4G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, NINFER_OP_GEMV,
                               NINFER_PROFILE_EXACT, plat, &listed));
    CHECK(!listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NINFER_OP_DEQUANTIZE_BF16,
                               NINFER_PROFILE_EXACT, NINFER_PLATFORM_CUDA, &listed));
    CHECK(listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_NVFP4, NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1, NINFER_OP_GEMV_BATCH,
                               NINFER_PROFILE_F32, NINFER_PLATFORM_CUDA, &listed));
    CHECK(listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_FP32, NINFER_LAYOUT_CONTIGUOUS_LE_V1, NINFER_OP_GEMV, NINFER_PROFILE_F32,
                               NINFER_PLATFORM_CUDA, &listed));
    CHECK(!listed);
    OK(ninfer_kernel_is_listed(NINFER_FORMAT_Q6G64_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, NINFER_OP_GATHER_F32,
                               NINFER_PROFILE_EXACT, NINFER_PLATFORM_CUDA, &listed));
    CHECK(!listed);
    EXPECT(ninfer_kernel_is_listed(0, 1, 1, 1, 1, &listed), NINFER_STATUS_UNKNOWN_FORMAT_ID);
    EXPECT(ninfer_kernel_is_listed(1, 9, 1, 1, 1, &listed), NINFER_STATUS_UNKNOWN_LAYOUT_ID);
    EXPECT(ninfer_kernel_is_listed(1, 1, 0, 1, 1, &listed), NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_kernel_is_listed(1, 1, 1, 4, 1, &listed), NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_kernel_is_listed(1, 1, 1, 1, 6, &listed), NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_kernel_is_listed(1, 1, 1, 1, 1, NULL), NINFER_STATUS_NULL_POINTER);

    /* GEMV: W8 [5, 100], batch 3, both profiles, against the f64 sum over the decoded weights. */
    for (i = 0; i < 500; i++) {
        src[i] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;
    }
    for (i = 0; i < 300; i++) {
        x[i] = (float)((int)(rnd() % 2001) - 1000) * 1.7e-3f;
    }
    OK(ninfer_encode_f32(&d, src, 500, payload, (size_t)d.payload_len, NULL));
    OK(ninfer_decode_f32(&d, payload, (size_t)d.payload_len, w, 500, NULL));
    for (prof = NINFER_PROFILE_F32; prof <= NINFER_PROFILE_I8; prof++) {
        OK(ninfer_gemv(&d, payload, (size_t)d.payload_len, prof, x, 300, 3, 1, y, 15, &loc));
        OK(ninfer_gemv(&d, payload, (size_t)d.payload_len, prof, x, 300, 3, 4, y4, 15, NULL));
        CHECK(memcmp(y, y4, sizeof y) == 0); /* deterministic, thread-count independent */
        for (b = 0; b < 3; b++) {
            for (r = 0; r < 5; r++) {
                double ref = 0, mag = 0, wabs = 0, xabs = 0, amax = 0, bound;
                for (kk = 0; kk < 100; kk++) {
                    double p = (double)w[r * 100 + kk] * (double)x[b * 100 + kk];
                    ref += p;
                    mag += fabs(p);
                    wabs += fabs((double)w[r * 100 + kk]);
                    xabs += fabs((double)w[r * 100 + kk]) * fabs((double)x[b * 100 + kk]);
                    if (fabs((double)x[b * 100 + kk]) > amax) {
                        amax = fabs((double)x[b * 100 + kk]);
                    }
                }
                if (prof == NINFER_PROFILE_F32) {
                    bound = NINFER_GEMV_C_F32 * 100.0 * ldexp(1.0, -24) * mag;
                } else {
                    /* The I8 bound with the row's amax in place of each block's (an upper bound). */
                    bound = (1.0 + 1.0 / 8192.0) * wabs * amax / 254.0 +
                            NINFER_GEMV_C_I8 * 100.0 * ldexp(1.0, -24) * (xabs + wabs * amax / 254.0);
                }
                if (!(fabs((double)y[b * 5 + r] - ref) <= bound)) {
                    fprintf(stderr, "gemv profile %u b %zu r %zu: %.9g vs %.9g (bound %.3g)\n", prof, b, r,
                            (double)y[b * 5 + r], ref, bound);
                    g_failures++;
                }
            }
        }
    }
    memset(y, 0x5c, sizeof y);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, x, 300, 0, 1, y, 0, NULL),
           NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, x, 300, 9, 1, y, 15, NULL),
           NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_EXACT, x, 300, 3, 1, y, 15, NULL),
           NINFER_STATUS_INVALID_ARGUMENT);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, x, 299, 3, 1, y, 15, &loc),
           NINFER_STATUS_BUFFER_LENGTH);
    CHECK(loc.expected == 300 && loc.actual == 299);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, x, 300, 3, 1, y, 14, NULL),
           NINFER_STATUS_BUFFER_LENGTH);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len - 1, NINFER_PROFILE_F32, x, 300, 3, 1, y, 15, NULL),
           NINFER_STATUS_PAYLOAD_LENGTH);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, NULL, 300, 3, 1, y, 15, NULL),
           NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_F32, x, 300, 3, 1, x + 10, 15, NULL),
           NINFER_STATUS_OVERLAPPING_BUFFERS);
    x[107] = f32_from_bits(0x7fc00000u);
    EXPECT(ninfer_gemv(&d, payload, (size_t)d.payload_len, NINFER_PROFILE_I8, x, 300, 3, 1, y, 15, &loc),
           NINFER_STATUS_NON_FINITE_ACTIVATION);
    CHECK(loc.index == 1 && loc.element == 7 && loc.fields == (NINFER_LOC_INDEX | NINFER_LOC_ELEMENT));
    CHECK(all_bytes((const uint8_t *)y, sizeof y, 0x5c));
    x[107] = 0.5f;
    d8 = mat_desc(NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, 5, 100);
    memset(payload, 0, sizeof payload);
    EXPECT(ninfer_gemv(&d8, payload, (size_t)d8.payload_len, NINFER_PROFILE_I8, x, 100, 1, 1, y, 5, NULL),
           NINFER_STATUS_KERNEL_NOT_LISTED);
    OK(ninfer_gemv(&d8, payload, (size_t)d8.payload_len, NINFER_PROFILE_F32, x, 100, 1, 1, y, 5, NULL));
    CHECK(y[0] == 0.0f && y[4] == 0.0f);
    di = mat_desc(NINFER_FORMAT_I32, 5, 100);
    EXPECT(ninfer_gemv(&di, payload, (size_t)di.payload_len, NINFER_PROFILE_F32, x, 100, 1, 1, y, 5, NULL),
           NINFER_STATUS_KERNEL_NOT_LISTED);
    CHECK(all_bytes((const uint8_t *)(y + 5), 10 * sizeof(float), 0x5c));
}

/* ---- a minimal .ninfer writer (docs/container.md), to feed the container reader ----------- */

typedef struct {
    uint8_t *p;
    size_t len;
} bytes_t;

static void put(bytes_t *b, const void *src, size_t n) {
    b->p = (uint8_t *)realloc(b->p, b->len + n + 1);
    if (!b->p) {
        exit(2);
    }
    if (n) {
        memcpy(b->p + b->len, src, n);
    }
    b->len += n;
}

static void put_le(bytes_t *b, uint64_t v, size_t width) {
    uint8_t t[8];
    size_t i;
    for (i = 0; i < width; i++) {
        t[i] = (uint8_t)(v >> (8 * i));
    }
    put(b, t, width);
}

static void put_str(bytes_t *b, const char *s) {
    put_le(b, strlen(s), 2);
    put(b, s, strlen(s));
}

static void pad_to(bytes_t *b, size_t align) {
    while (b->len % align) {
        put_le(b, 0, 1);
    }
}

static void patch_le(bytes_t *b, size_t at, uint64_t v, size_t width) {
    size_t i;
    for (i = 0; i < width; i++) {
        b->p[at + i] = (uint8_t)(v >> (8 * i));
    }
}

static uint32_t crc_of(const uint8_t *p, size_t n) {
    uint32_t c = 0;
    OK(ninfer_crc32c(p, n, &c));
    return c;
}

/* Two tensors: "a.weight" Q4G64_F16S [3, 300] (payload `pa`) and "b.norm" BF16 [5]. */
static bytes_t build_container(const uint8_t *pa, size_t pa_len, const uint8_t *pb, size_t pb_len) {
    bytes_t f = {NULL, 0};
    size_t dir, e0, off_a, off_b;
    uint8_t zero[128] = {0};
    put(&f, zero, 128);
    off_a = f.len;
    put(&f, pa, pa_len);
    pad_to(&f, 128);
    off_b = f.len;
    put(&f, pb, pb_len);
    pad_to(&f, 128);
    dir = f.len;
    put_str(&f, "test-checkpoint");
    put_str(&f, "test-recipe");
    put_str(&f, "consumer_body.h");
    /* entry a.weight */
    e0 = f.len;
    put_le(&f, 0, 4);
    put_str(&f, "a.weight");
    put_str(&f, "Q4G64_F16S");
    put_str(&f, "row-split-k128-v1");
    put_le(&f, 2, 1);
    put_le(&f, 1, 1);
    put_le(&f, 0, 2);
    put_le(&f, 3, 8);
    put_le(&f, 300, 8);
    put_le(&f, off_a, 8);
    put_le(&f, pa_len, 8);
    put_le(&f, crc_of(pa, pa_len), 4);
    put_str(&f, "identity");
    put_str(&f, "MAXABS_F16_RECIP_RNE_V1");
    put_str(&f, "model.a.weight");
    put_str(&f, "F32");
    patch_le(&f, e0, f.len - e0, 4);
    /* entry b.norm */
    e0 = f.len;
    put_le(&f, 0, 4);
    put_str(&f, "b.norm");
    put_str(&f, "BF16");
    put_str(&f, "contiguous-le-v1");
    put_le(&f, 1, 1);
    put_le(&f, 1, 1);
    put_le(&f, 0, 2);
    put_le(&f, 5, 8);
    put_le(&f, off_b, 8);
    put_le(&f, pb_len, 8);
    put_le(&f, crc_of(pb, pb_len), 4);
    put_str(&f, "identity");
    put_str(&f, "copied from source");
    put_str(&f, "model.b.norm");
    put_str(&f, "BF16");
    patch_le(&f, e0, f.len - e0, 4);
    /* header */
    memcpy(f.p, "\x89NINFER\n", 8);
    patch_le(&f, 8, 1, 4);
    patch_le(&f, 12, 64, 4);
    patch_le(&f, 16, 0, 4);
    patch_le(&f, 20, 2, 4);
    patch_le(&f, 24, dir, 8);
    patch_le(&f, 32, f.len - dir, 8);
    patch_le(&f, 40, f.len, 8);
    patch_le(&f, 48, crc_of(f.p + dir, f.len - dir), 4);
    patch_le(&f, 60, crc_of(f.p, 60), 4);
    return f;
}

static int str_is(ninfer_str s, const char *want) {
    return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void test_container(void) {
    ninfer_desc da = mat_desc(NINFER_FORMAT_Q4G64_F16S, 3, 300), db;
    uint64_t five = 5;
    float src[900];
    uint8_t pa[676], pb[10], bad_pa[676];
    uint16_t words[5] = {0x3f80, 0x8000, 0x7fc1, 0x0001, 0xc000}, back[5];
    int8_t codes[900];
    uint16_t scales[15];
    bytes_t f, g;
    ninfer_container *c = NULL, *c2 = NULL;
    ninfer_tensor_entry e;
    ninfer_file_meta m;
    ninfer_error_location loc;
    uint32_t count = 0, crc = 0;
    size_t i;
    float dec[900];

    OK(ninfer_crc32c((const uint8_t *)"123456789", 9, &crc));
    CHECK(crc == 0xE3069283u);
    OK(ninfer_crc32c(NULL, 0, &crc));
    CHECK(crc == 0);
    EXPECT(ninfer_crc32c(NULL, 1, &crc), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_crc32c(pa, 1, NULL), NINFER_STATUS_NULL_POINTER);

    for (i = 0; i < 900; i++) {
        src[i] = (float)((int)(rnd() % 201) - 100) * 0.01f;
    }
    OK(ninfer_encode_f32(&da, src, 900, pa, sizeof pa, NULL));
    OK(ninfer_desc_new(NINFER_FORMAT_BF16, NINFER_LAYOUT_CONTIGUOUS_LE_V1, &five, 1, &db, NULL));
    OK(ninfer_pack_words16(&db, words, 5, pb, sizeof pb, NULL));
    f = build_container(pa, sizeof pa, pb, sizeof pb);

    OK(ninfer_container_open(f.p, f.len, NINFER_CONTAINER_VERIFY_PAYLOADS, &c, &loc));
    CHECK(loc.fields == 0);
    OK(ninfer_container_count(c, &count));
    CHECK(count == 2);
    OK(ninfer_container_meta(c, &m));
    CHECK(str_is(m.source_checkpoint, "test-checkpoint") && str_is(m.recipe, "test-recipe") &&
          str_is(m.tool, "consumer_body.h"));
    OK(ninfer_container_entry(c, 0, &e));
    CHECK(e.index == 0 && str_is(e.name, "a.weight") && e.payload == f.p + 128 && e.payload_len == sizeof pa &&
          e.payload_offset == 128 && memcmp(&e.desc, &da, sizeof da) == 0);
    CHECK(str_is(e.conversion, "identity") && str_is(e.encoder_profile, "MAXABS_F16_RECIP_RNE_V1") &&
          e.source_count == 1 && str_is(e.source_names[0], "model.a.weight") && str_is(e.source_dtypes[0], "F32") &&
          e.source_names[1].len == 0);
    OK(ninfer_decode_f32(&e.desc, e.payload, e.payload_len, dec, 900, NULL));
    OK(ninfer_container_find(c, "b.norm", 6, &e));
    CHECK(e.index == 1 && e.desc.rank == 1 && e.desc.dims[0] == 5);
    OK(ninfer_unpack_words16(&e.desc, e.payload, e.payload_len, back, 5, NULL));
    CHECK(memcmp(back, words, sizeof words) == 0);
    OK(ninfer_container_verify_entry(c, 0, &loc));
    OK(ninfer_container_verify_entry(c, 1, NULL));
    memset(&e, 0x6a, sizeof e);
    EXPECT(ninfer_container_find(c, "b.nor", 5, &e), NINFER_STATUS_NOT_FOUND);
    EXPECT(ninfer_container_find(c, "b.norm ", 7, &e), NINFER_STATUS_NOT_FOUND);
    EXPECT(ninfer_container_find(c, NULL, 3, &e), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_entry(c, 2, &e), NINFER_STATUS_NOT_FOUND);
    CHECK(all_bytes((const uint8_t *)&e, sizeof e, 0x6a));
    EXPECT(ninfer_container_entry(NULL, 0, &e), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_entry(c, 0, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_count(NULL, &count), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_meta(c, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_verify_entry(c, 7, NULL), NINFER_STATUS_NOT_FOUND);

    /* A flipped payload bit: caught at open with payload verification, or lazily. */
    g.len = f.len;
    g.p = (uint8_t *)xmalloc(f.len);
    memcpy(g.p, f.p, f.len);
    g.p[128 + 5] ^= 0x10;
    EXPECT(ninfer_container_open(g.p, g.len, NINFER_CONTAINER_VERIFY_PAYLOADS, &c2, &loc),
           NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == 32 && (loc.fields & NINFER_LOC_TENSOR) && loc.tensor == 0);
    CHECK(strstr(ninfer_container_rule_str(loc.detail), "checksum") != NULL);
    CHECK(c2 == NULL);
    OK(ninfer_container_open(g.p, g.len, 0, &c2, NULL));
    EXPECT(ninfer_container_verify_entry(c2, 0, &loc), NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == 32 && loc.tensor == 0);
    ninfer_container_free(c2);
    c2 = NULL;
    /* Bad magic, truncation, too short: file-level rules without a tensor. */
    memcpy(g.p, f.p, f.len);
    g.p[1] = 'X';
    EXPECT(ninfer_container_open(g.p, g.len, 0, &c2, &loc), NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == 2 && (loc.fields & NINFER_LOC_TENSOR) == 0);
    EXPECT(ninfer_container_open(f.p, f.len - 1, 0, &c2, &loc), NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == 8 && loc.expected == f.len && loc.actual == f.len - 1);
    EXPECT(ninfer_container_open(f.p, 10, 0, &c2, &loc), NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == NINFER_CONTAINER_RULE_TOO_SHORT);
    /* A non-zero padding byte between payloads (the directory CRC does not cover it). */
    memcpy(g.p, f.p, f.len);
    g.p[128 + sizeof pa + 3] = 1;
    EXPECT(ninfer_container_open(g.p, g.len, 0, &c2, &loc), NINFER_STATUS_CONTAINER_INVALID);
    CHECK(loc.detail == 33 && loc.byte_offset == 128 + sizeof pa + 3);
    free(g.p);
    EXPECT(ninfer_container_open(NULL, 5, 0, &c2, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_open(f.p, f.len, 0, NULL, NULL), NINFER_STATUS_NULL_POINTER);
    EXPECT(ninfer_container_open(f.p, f.len, 2, &c2, NULL), NINFER_STATUS_INVALID_ARGUMENT);
    CHECK(c2 == NULL);
    CHECK(strcmp(ninfer_container_rule_str(0), "unknown rule") == 0);
    CHECK(strcmp(ninfer_container_rule_str(34), "unknown rule") == 0);
    ninfer_container_free(c);
    ninfer_container_free(NULL);
    free(f.p);

    /* A structurally valid container whose payload breaks a value rule: the reader does not
       scan values (numeric-formats §9); verify_entry does, with the tensor index. */
    OK(ninfer_unpack_grouped(&da, pa, sizeof pa, codes, 900, scales, 15, NULL));
    scales[6] = 0x8000; /* row 1, group 1 */
    OK(ninfer_pack_grouped(&da, codes, 900, scales, 15, bad_pa, sizeof bad_pa, NULL));
    f = build_container(bad_pa, sizeof bad_pa, pb, sizeof pb);
    OK(ninfer_container_open(f.p, f.len, NINFER_CONTAINER_VERIFY_PAYLOADS, &c, NULL));
    EXPECT(ninfer_container_verify_entry(c, 0, &loc), NINFER_STATUS_SCALE_NEGATIVE_ZERO);
    CHECK(loc.row == 1 && loc.group == 1 && loc.element == 64 && (loc.fields & NINFER_LOC_TENSOR) && loc.tensor == 0);
    ninfer_container_free(c);
    free(f.p);
}

static int run_all(const char *who) {
    uint32_t f;
    test_version_and_status();
    test_registry();
    test_descriptors();
    for (f = NINFER_FORMAT_Q4G64_F16S; f <= NINFER_FORMAT_W8G32_F16S; f++) {
        test_grouped(f, 3, 300);
        test_grouped(f, 4, 128);
        test_grouped(f, 3, 7);
    }
    test_encoder_rejects_other_formats();
    test_nvfp4();
    test_fp8_row();
    test_direct();
    test_word_oracles();
    test_kernels();
    test_container();
    test_location_is_cleared_on_success();
    printf("%s: %d checks, %d failures\n", who, g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}

#endif /* NINFER_CONSUMER_BODY_H */
