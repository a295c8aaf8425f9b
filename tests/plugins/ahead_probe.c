/* Test plugin: resets made ahead (the "reset_ahead" host API). Its RESET hook makes a "world"
 * of `draws` draws from the env's generator, or takes the one its prepare function made for
 * exactly that generator state (and the state after the draws); one more draw then follows.
 * The per-agent field "world" (i32 [3]): the world's value, that next draw, the tick. Modes
 * (params.mode):
 *   "ok"          registers the prepare function
 *   "draw_first"  ... and a RESET hook before the world's that draws once (a prepared world
 *                 never fits: the reset draws its own)
 *   "null"        registers a NULL function
 *   "twice"       registers twice
 *   "late"        registers in a RESET hook (registration is closed)
 *   "future"      asks for a version of the API this engine does not have
 * prepare_calls() and taken() count, over the process, prepares run and worlds taken. */
#include <stdatomic.h>
#include <string.h>

#include "polis/kit.h"

typedef struct aparams {
    const char *mode;
    int64_t draws;
} aparams;

typedef struct astate {
    const polis_host *h;
    const polis_reset_ahead_api *api;
    int32_t draws;
    /* the prepared world: prepare writes it, the RESET hook reads it */
    bool ready;
    polis_rng key, after;
    uint32_t prepared;
    /* the episode's */
    uint32_t world, next;
} astate;

static atomic_long prepares, takes;

POLIS_EXPORT long ahead_probe_prepares(void);
POLIS_EXPORT long ahead_probe_taken(void);
POLIS_EXPORT long ahead_probe_prepares(void) { return atomic_load(&prepares); }
POLIS_EXPORT long ahead_probe_taken(void) { return atomic_load(&takes); }

static uint32_t make_world(polis_rng *rng, int32_t draws)
{
    uint32_t w = 0;
    for (int32_t i = 0; i < draws; i++) w = w * 31u + polis_rng_next(rng);
    return w;
}

static void prepare(void *ud, const polis_rng *rng)
{
    astate *s = ud;
    polis_rng r = *rng;
    s->prepared = make_world(&r, s->draws);
    s->key = *rng;
    s->after = r;
    s->ready = true;
    atomic_fetch_add(&prepares, 1);
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    astate *s = ud;
    polis_rng *rng = s->h->rng(ctx);
    if (s->ready && s->key.state == rng->state && s->key.inc == rng->inc) {
        s->world = s->prepared;
        *rng = s->after;
        atomic_fetch_add(&takes, 1);
    } else {
        s->world = make_world(rng, s->draws);
    }
    s->ready = false;
    s->next = polis_rng_next(rng);
    return POLIS_OK;
}

static polis_status draw_first(polis_ctx *ctx, void *ud)
{
    astate *s = ud;
    polis_rng_next(s->h->rng(ctx));
    return POLIS_OK;
}

static polis_status late(polis_ctx *ctx, void *ud)
{
    astate *s = ud;
    return s->api->prepare(ctx, prepare, s);
}

static void write_world(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)agent;
    astate *s = ud;
    int32_t *o = dst;
    o[0] = (int32_t)(s->world & 0x7fffffffu);
    o[1] = (int32_t)(s->next & 0x7fffffffu);
    o[2] = (int32_t)s->h->tick(ctx);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const aparams *p = params;
    astate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->draws = (int32_t)p->draws;
    const char *m = p->mode;
    uint32_t version = strcmp(m, "future") == 0 ? POLIS_RESET_AHEAD_API_VERSION + 1
                                                : POLIS_RESET_AHEAD_API_VERSION;
    if (!(s->api = h->host_api(ctx, POLIS_RESET_AHEAD_API, version))) return POLIS_ERR_PLUGIN;
    polis_obs_def world = {.name = "world",
                           .doc = "the world, the draw after it, the tick",
                           .dtype = POLIS_DTYPE_I32,
                           .ndim = 1,
                           .shape = {3},
                           .write = write_world,
                           .ud = s};
    polis_status st;
    if ((st = h->observation(ctx, &world, NULL)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, s)))
        return st;
    if (strcmp(m, "draw_first") == 0 && (st = h->hook(ctx, POLIS_PHASE_RESET, -1, draw_first, s)))
        return st;
    if (strcmp(m, "late") == 0) return h->hook(ctx, POLIS_PHASE_RESET, 1, late, s);
    if (strcmp(m, "null") == 0) return s->api->prepare(ctx, NULL, s);
    if (strcmp(m, "twice") == 0 && (st = s->api->prepare(ctx, prepare, s))) return st;
    return s->api->prepare(ctx, prepare, s);
}

static void destroy(polis_ctx *ctx, void *state)
{
    astate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(aparams, "mode", mode, "ok", "what to register"),
    POLIS_P_INT(aparams, "draws", draws, 1, 1000000, 2000, "draws a world takes"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("ahead_probe", 7),  .version = "1.0.0", .doc = "test plugin: resets made ahead",
    POLIS_DESC_PARAMS(PARAMS, aparams), .init = init,       .destroy = destroy,
};
POLIS_PLUGIN(DESC)
