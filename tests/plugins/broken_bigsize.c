/* A descriptor claiming to be larger than any descriptor of its ABI version can be: the
 * loader must refuse it rather than trust fields that are not there. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .abi_minor = POLIS_ABI_MINOR,
                                       .struct_size = 1u << 20,
                                       .name = "broken_bigsize",
                                       .init = init};
POLIS_PLUGIN(desc)
