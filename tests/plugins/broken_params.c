/* A parameter table whose field lies outside params_size. */
#include <stdint.h>

#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_param_def params[] = {
    {"speed", POLIS_PARAM_INT, 16, 0, 10, 1, NULL, "speed", false},
};

static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "broken_params",
                                       .params = params,
                                       .n_params = 1,
                                       .params_size = 8,
                                       .init = init};
POLIS_PLUGIN(desc)
