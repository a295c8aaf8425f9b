/* Test plugin: observation ranges (host->obs_range, ABI 1.4) as a C plugin declares them.
 * One field "r" (i16 [2][3], each element = the tick + `value`) with a range chosen by
 * params.mode:
 *   "ok"       [0, 40] per row: {0, 0} .. {40, 40} (dim 0)
 *   "twice"    the same range declared twice
 *   "foreign"  a range for field 0, which another plugin registered
 *   "late"     a range declared in a RESET hook (registration is closed)
 *   "badn"     dim 1 with n 2 (shape[1] is 3)
 *   "baddim"   dim 2 (the field has 2 dimensions)
 *   "nulls"    NULL bounds
 *   "badid"    field 99 */
#include <stddef.h>
#include <string.h>

#include "polis/kit.h"

typedef struct rparams {
    const char *mode;
    int64_t value;
} rparams;

typedef struct rstate {
    const polis_host *h;
    int32_t field;
    int64_t value;
} rstate;

static void write_r(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    rstate *s = ud;
    int16_t *o = dst;
    for (int i = 0; i < 6; i++) o[i] = (int16_t)(s->h->tick(ctx) + s->value);
}

static polis_status late(polis_ctx *ctx, void *ud)
{
    rstate *s = ud;
    double lo = 0, hi = 1;
    return s->h->obs_range(ctx, s->field, -1, 1, &lo, &hi);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const rparams *p = params;
    rstate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->value = p->value;
    polis_obs_def def = {.name = "r",
                         .doc = "tick + value",
                         .dtype = POLIS_DTYPE_I16,
                         .ndim = 2,
                         .shape = {2, 3},
                         .write = write_r,
                         .ud = s};
    polis_status st = h->observation(ctx, &def, &s->field);
    if (st) return st;
    const double lo[3] = {0, 0, 0}, hi[3] = {40, 40, 40};
    const char *m = p->mode;
    if (strcmp(m, "ok") == 0) return h->obs_range(ctx, s->field, 0, 2, lo, hi);
    if (strcmp(m, "twice") == 0) {
        if ((st = h->obs_range(ctx, s->field, 0, 2, lo, hi))) return st;
        return h->obs_range(ctx, s->field, 0, 2, lo, hi);
    }
    if (strcmp(m, "foreign") == 0) return h->obs_range(ctx, 0, -1, 1, lo, hi);
    if (strcmp(m, "late") == 0) return h->hook(ctx, POLIS_PHASE_RESET, 0, late, s);
    if (strcmp(m, "badn") == 0) return h->obs_range(ctx, s->field, 1, 2, lo, hi);
    if (strcmp(m, "baddim") == 0) return h->obs_range(ctx, s->field, 2, 1, lo, hi);
    if (strcmp(m, "nulls") == 0) return h->obs_range(ctx, s->field, -1, 1, NULL, NULL);
    if (strcmp(m, "badid") == 0) return h->obs_range(ctx, 99, -1, 1, lo, hi);
    h->error(ctx, "unknown mode %s", m);
    return POLIS_ERR_CONFIG;
}

static void destroy(polis_ctx *ctx, void *state)
{
    rstate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(rparams, "mode", mode, "ok", "what to declare"),
    POLIS_P_INT(rparams, "value", value, -1000, 1000, 0, "added to the tick in every element"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("range_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: observation ranges",
    POLIS_DESC_PARAMS(PARAMS, rparams),
    .init = init,
    .destroy = destroy,
};
POLIS_PLUGIN(DESC)
