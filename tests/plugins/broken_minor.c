/* A plugin built for a newer ABI minor version than the engine's: the loader must refuse it
 * (it may call host functions this engine does not have). */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .abi_minor = POLIS_ABI_MINOR + 1,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "broken_minor",
                                       .init = init};
POLIS_PLUGIN(desc)
