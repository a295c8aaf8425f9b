/* Test plugin: shared observation fields (the "shared_observations" host API). A shared field
 * "board" (i32 [2][2]: the tick, the writer's calls this episode, the agent argument it got,
 * `value`) and a per-agent field "me" (i32 [1]: the agent), with params.mode choosing what is
 * registered:
 *   "ok"          board and me
 *   "dup_agent"   a shared field named "me" after the per-agent one
 *   "dup_shared"  a per-agent field named "board" after the shared one
 *   "twice"       board registered twice
 *   "badshape"    shape {2, 0}
 *   "ndim"        ndim 5
 *   "nowrite"     no write function
 *   "null"        a NULL definition
 *   "late"        board registered in a RESET hook (registration is closed)
 *   "future"      asks for a version of the API this engine does not have */
#include <stddef.h>
#include <string.h>

#include "polis/kit.h"

typedef struct sparams {
    const char *mode;
    int64_t value;
} sparams;

typedef struct sstate {
    const polis_host *h;
    const polis_shared_obs_api *api;
    int32_t calls;
    int64_t episode;
    int32_t value;
} sstate;

static void write_board(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    sstate *s = ud;
    int32_t *o = dst;
    if (s->h->episode(ctx) != s->episode) {
        s->episode = s->h->episode(ctx);
        s->calls = 0;
    }
    o[0] = (int32_t)s->h->tick(ctx);
    o[1] = ++s->calls;
    o[2] = agent;
    o[3] = s->value;
}

static void write_me(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)ctx, (void)ud;
    *(int32_t *)dst = agent;
}

static const polis_obs_def BOARD = {.name = "board",
                                    .doc = "tick, calls, agent argument, value",
                                    .dtype = POLIS_DTYPE_I32,
                                    .ndim = 2,
                                    .shape = {2, 2},
                                    .write = write_board};

static polis_status late(polis_ctx *ctx, void *ud)
{
    sstate *s = ud;
    polis_obs_def d = BOARD;
    d.ud = s;
    return s->api->field(ctx, &d, NULL);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const sparams *p = params;
    sstate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->value = (int32_t)p->value;
    const char *m = p->mode;
    uint32_t version =
        strcmp(m, "future") == 0 ? POLIS_SHARED_OBS_API_VERSION + 1 : POLIS_SHARED_OBS_API_VERSION;
    s->api = h->host_api(ctx, POLIS_SHARED_OBS_API, version);
    if (!s->api) return POLIS_ERR_PLUGIN;
    polis_obs_def board = BOARD, me = {.name = "me",
                                       .doc = "the agent",
                                       .dtype = POLIS_DTYPE_I32,
                                       .ndim = 1,
                                       .shape = {1},
                                       .write = write_me};
    board.ud = me.ud = s;
    polis_status st;
    int32_t id = -1;
    if (strcmp(m, "ok") == 0) {
        if ((st = h->observation(ctx, &me, NULL)) || (st = s->api->field(ctx, &board, &id)))
            return st;
        if (id != 0) {
            h->error(ctx, "board got id %d", id);
            return POLIS_ERR_PLUGIN;
        }
        return POLIS_OK;
    }
    if (strcmp(m, "dup_agent") == 0) {
        if ((st = h->observation(ctx, &me, NULL))) return st;
        board.name = "me";
        return s->api->field(ctx, &board, NULL);
    }
    if (strcmp(m, "dup_shared") == 0) {
        if ((st = s->api->field(ctx, &board, NULL))) return st;
        me.name = "board";
        return h->observation(ctx, &me, NULL);
    }
    if (strcmp(m, "twice") == 0) {
        if ((st = s->api->field(ctx, &board, NULL))) return st;
        return s->api->field(ctx, &board, NULL);
    }
    if (strcmp(m, "badshape") == 0) board.shape[1] = 0;
    if (strcmp(m, "ndim") == 0) board.ndim = 5;
    if (strcmp(m, "nowrite") == 0) board.write = NULL;
    if (strcmp(m, "null") == 0) return s->api->field(ctx, NULL, NULL);
    if (strcmp(m, "late") == 0) return h->hook(ctx, POLIS_PHASE_RESET, 0, late, s);
    return s->api->field(ctx, &board, NULL);
}

static void destroy(polis_ctx *ctx, void *state)
{
    sstate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(sparams, "mode", mode, "ok", "what to register"),
    POLIS_P_INT(sparams, "value", value, -1000, 1000, 0, "the board's last element"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("shared_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: shared observation fields",
    POLIS_DESC_PARAMS(PARAMS, sparams),
    .init = init,
    .destroy = destroy,
};
POLIS_PLUGIN(DESC)
