/* Must not compile: an INT parameter whose field is an int32_t (the engine writes an int64_t
 * there). tests/kit/CMakeLists.txt expects the kit's message. */
#include "polis/kit.h"

typedef struct bad_params {
    int32_t n;
} bad_params;

static const polis_param_def PARAMS[] = {
    POLIS_P_INT(bad_params, "n", n, 0, 10, 1, "too narrow a field"),
};

const polis_param_def *bad_table(void);
const polis_param_def *bad_table(void) { return PARAMS; }
