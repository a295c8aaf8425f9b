/* cycle_a and cycle_b require each other: the loader must refuse the cycle. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    return POLIS_OK;
}

static const char *const requires[] = {"cycle_b", NULL};
static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "cycle_a",
                                       .requires = requires,
                                       .init = init};
POLIS_PLUGIN(desc)
