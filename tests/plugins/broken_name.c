/* A plugin whose name breaks the [a-z0-9_] rule. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "Bad Name",
                                       .init = init};
POLIS_PLUGIN(desc)
