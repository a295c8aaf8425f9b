/* A plugin built for a future ABI major version: the loader must refuse it. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc desc = {
    .abi_major = 2, .struct_size = sizeof(polis_plugin_desc), .name = "broken_abi", .init = init};
POLIS_PLUGIN(desc)
