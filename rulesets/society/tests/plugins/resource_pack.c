/* resource_pack — a tiny .so that adds content to society through its service, as a
 * third-party "pack" would: a silk resource seen only with wood in hand, cloth, and a weaving
 * recipe. `mode` exercises the refusals: "bad_spec" defines a recipe with a malformed spec,
 * "late" defines in start(), after society has frozen its tables (this plugin starts after
 * society because it requires it). */
#include <string.h>

#include "polis/kit.h"
#include "polis/society.h"

typedef struct pack_params {
    const char *mode;
} pack_params;

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(pack_params, "mode", mode, "ok", "ok, bad_spec or late"),
};

typedef struct pack {
    const polis_society_api *soc;
    pack_params p;
} pack;

static polis_status define(polis_ctx *ctx, pack *k)
{
    polis_status st;
    if ((st = k->soc->define_resource(k->soc->self, ctx, "silk", 7, "wood:1"))) return st;
    if ((st = k->soc->define_resource(k->soc->self, ctx, "cloth", 30, ""))) return st;
    const char *in = strcmp(k->p.mode, "bad_spec") == 0 ? "silk:two" : "silk:2";
    return k->soc->define_recipe(k->soc->self, ctx, "weaving", in, "cloth:1", "");
}

static polis_status pack_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    pack *k = h->alloc(ctx, sizeof *k);
    if (!k) return POLIS_ERR_NOMEM;
    *state = k;
    memcpy(&k->p, params, sizeof k->p);
    k->soc = h->service(ctx, POLIS_SOCIETY_SERVICE);
    if (!k->soc || k->soc->struct_size < sizeof(polis_society_api)) {
        h->error(ctx, "needs the society service");
        return POLIS_ERR_PLUGIN;
    }
    if (strcmp(k->p.mode, "late") == 0) return POLIS_OK;
    return define(ctx, k);
}

static polis_status pack_start(polis_ctx *ctx, void *state)
{
    pack *k = state;
    return strcmp(k->p.mode, "late") == 0 ? define(ctx, k) : POLIS_OK;
}

static void pack_destroy(polis_ctx *ctx, void *state)
{
    if (state) polis_ctx_host(ctx)->free(ctx, state, sizeof(pack));
}

static const char *const REQUIRES[] = {"society", NULL};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("resource_pack", 7),
    .version = "1",
    .doc = "adds silk, cloth and weaving to society",
    .requires = REQUIRES,
    POLIS_DESC_PARAMS(PARAMS, pack_params),
    .init = pack_init,
    .start = pack_start,
    .destroy = pack_destroy,
};

POLIS_PLUGIN(DESC)
