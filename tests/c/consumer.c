/* C11 consumer of ninfer.h: links libninfer_ffi.a and calls every function (consumer_body.h). */
#include "consumer_body.h"

/* C-specific: the header is plain C11 (no C++ constructs leak through cpp_compat). */
_Static_assert(sizeof(ninfer_error_location) == 72, "location layout");
_Static_assert(sizeof(ninfer_plane) == 24, "plane layout");
_Static_assert(sizeof(ninfer_desc) == 16 + 8 * NINFER_MAX_RANK + 10 * 8 + 3 * 24, "descriptor layout");
_Static_assert(sizeof(enum ninfer_status) == sizeof(int), "status is a C int");

int main(void) {
    return run_all("C11 consumer");
}
