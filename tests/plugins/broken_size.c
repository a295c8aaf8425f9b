/* A descriptor claiming to be smaller than ABI 1.0's: the loader must refuse it. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc desc = {
    .abi_major = POLIS_ABI_MAJOR, .struct_size = 16, .name = "broken_size", .init = init};
POLIS_PLUGIN(desc)
