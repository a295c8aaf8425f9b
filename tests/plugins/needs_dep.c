/* A plugin requiring another one; the tests load it with and without its dependency. */
#include "polis/plugin.h"

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *p, void **s)
{
    /* The dependency must already be initialised: its event type is visible. */
    if (h->event_find(ctx, "probe.a") < 0) {
        h->error(ctx, "probe was not initialised first");
        return POLIS_ERR_PLUGIN;
    }
    h->log(ctx, "needs_dep sees probe");
    return POLIS_OK;
}

static const char *const requires[] = {"probe", NULL};
static const polis_plugin_desc desc = {.abi_major = POLIS_ABI_MAJOR,
                                       .struct_size = sizeof(polis_plugin_desc),
                                       .name = "needs_dep",
                                       .requires = requires,
                                       .init = init};
POLIS_PLUGIN(desc)
