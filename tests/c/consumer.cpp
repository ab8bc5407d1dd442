// C++17 consumer of ninfer.h: the same body as the C consumer (consumer_body.h), compiled as C++,
// plus C++-only checks of the header (extern "C" linkage, standard-layout trivially copyable
// structs, usable with std::vector).
#include "consumer_body.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

static_assert(std::is_standard_layout<ninfer_desc>::value && std::is_trivially_copyable<ninfer_desc>::value,
              "descriptor is a plain C struct");
static_assert(std::is_standard_layout<ninfer_error_location>::value, "location is a plain C struct");
static_assert(sizeof(ninfer_desc) == 16 + 8 * NINFER_MAX_RANK + 10 * 8 + 3 * 24, "descriptor layout");
static_assert(std::is_same<decltype(&ninfer_status_str), const char *(*)(uint32_t)>::value, "signature");

static int cpp_checks() {
    int failures = 0;
    // RAII buffers: encode a W8 [2, 40] matrix and decode it back within one scale step.
    const uint64_t shape[2] = {2, 40};
    ninfer_desc d{};
    if (ninfer_desc_new(NINFER_FORMAT_W8G32_F16S, NINFER_LAYOUT_ROW_SPLIT_K128_V1, shape, 2, &d, nullptr) !=
        NINFER_STATUS_OK) {
        return 1;
    }
    std::vector<float> src(80);
    for (size_t i = 0; i < src.size(); i++) {
        src[i] = static_cast<float>(i) * 0.125f - 3.0f;
    }
    std::vector<uint8_t> payload(static_cast<size_t>(d.payload_len));
    std::vector<float> back(80);
    if (ninfer_encode_f32(&d, src.data(), src.size(), payload.data(), payload.size(), nullptr) != NINFER_STATUS_OK ||
        ninfer_decode_f32(&d, payload.data(), payload.size(), back.data(), back.size(), nullptr) !=
            NINFER_STATUS_OK) {
        return 1;
    }
    for (size_t i = 0; i < src.size(); i++) {
        // Group 0 of row 0 has amax 3 -> scale ~3/127; the code error is at most half a step.
        if (std::fabs(back[i] - src[i]) > 0.5f * (7.0f / 127.0f) + 1e-6f) {
            std::fprintf(stderr, "C++: encode/decode error too large at %zu: %g vs %g\n", i, back[i], src[i]);
            failures++;
        }
    }
    return failures;
}

int main() {
    int rc = run_all("C++17 consumer");
    int extra = cpp_checks();
    std::printf("C++17 consumer: extra checks %s\n", extra == 0 ? "passed" : "FAILED");
    return rc != 0 || extra != 0 ? 1 : 0;
}
