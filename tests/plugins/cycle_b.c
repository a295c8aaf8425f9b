/* The other half of the cycle_a requirement cycle. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const char *const requires[] = {"cycle_a", NULL};
static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "cycle_b",
                                       .requires = requires,
                                       .init = init};
POLIS_PLUGIN(desc)
