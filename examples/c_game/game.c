/*
 * game.c — orchard's plugin glue: parameters, actions with their mask, observations, the
 * reward, hooks, an event and the descriptor. The rules are in core.c; the views and looks
 * (views.c, looks.c) are optional.
 *
 * A template (docs/c-games.md): copy the folder, rename, change core.c first.
 */
#include <string.h>

#include "internal.h"

static bool legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t action)
{
    return orchard_legal(&((orchard *)ud)->core, agent, action);
}

static polis_status act(polis_ctx *ctx, void *ud, int32_t agent, int32_t action)
{
    orchard *o = ud;
    if (!orchard_act(&o->core, agent, action)) return POLIS_ERR_ACTION; /* flagged, a no-op */
    if (action != ORCHARD_PICK) return POLIS_OK;
    int32_t ev[3] = {agent, o->core.x[agent], o->core.y[agent]};
    return o->h->publish(ctx, o->ev_picked, ev, sizeof ev);
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    orchard *o = ud;
    if (!orchard_reset(&o->core, o->h->rng(ctx))) {
        o->h->error(ctx, "%d agents and %lld trees do not fit on the grid", o->core.n_agents,
                    (long long)o->core.p.trees);
        return POLIS_ERR_CONFIG;
    }
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    orchard *o = ud;
    memset(o->core.reward, 0, sizeof(float) * (size_t)o->core.n_agents);
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    orchard_grow(&((orchard *)ud)->core);
    return POLIS_OK;
}

static polis_status reward(polis_ctx *ctx, void *ud, float *out)
{
    orchard *o = ud;
    memcpy(out, o->core.reward, sizeof(float) * (size_t)o->core.n_agents);
    return POLIS_OK;
}

static void write_around(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    orchard_observe(&((orchard *)ud)->core, agent, dst);
}

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    orchard *o = ud;
    int32_t xy[2] = {o->core.x[agent], o->core.y[agent]};
    memcpy(dst, xy, sizeof xy);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    orchard *o = h->alloc(ctx, sizeof *o);
    if (!o) return POLIS_ERR_NOMEM;
    *state = o;
    o->h = h;
    o->ctx = ctx;
    memcpy(&o->core.p, params, sizeof o->core.p);
    o->core.n_agents = h->n_agents(ctx);
    size_t n = (size_t)o->core.n_agents;
    if (!(o->core.x = h->alloc(ctx, sizeof(int32_t) * n)) ||
        !(o->core.y = h->alloc(ctx, sizeof(int32_t) * n)) ||
        !(o->core.reward = h->alloc(ctx, sizeof(float) * n)) ||
        !(o->core.picked = h->alloc(ctx, sizeof(int32_t) * n)))
        return POLIS_ERR_NOMEM;

    static const char *const names[ORCHARD_ACTIONS] = {"move_north", "move_south", "move_west",
                                                       "move_east", "pick"};
    static const char *const docs[ORCHARD_ACTIONS] = {"move to y-1", "move to y+1", "move to x-1",
                                                      "move to x+1", "pick the ripe fruit here"};
    polis_status st;
    for (int32_t a = 0; a < ORCHARD_ACTIONS; a++) {
        polis_action_def def = {
            .name = names[a], .doc = docs[a], .handler = act, .legal = legal, .arg = a, .ud = o};
        if ((st = h->action(ctx, &def, &o->act[a]))) return st;
    }
    polis_obs_def around = {.name = "around",
                            .doc = "the 3x3 cells around: 0 nothing, 1 tree, 2 ripe tree, 3 agent",
                            .dtype = POLIS_DTYPE_I8,
                            .ndim = 2,
                            .shape = {3, 3},
                            .write = write_around,
                            .ud = o};
    polis_obs_def position = {.name = "position",
                              .doc = "own (x, y)",
                              .dtype = POLIS_DTYPE_I32,
                              .ndim = 1,
                              .shape = {2},
                              .write = write_position,
                              .ud = o};
    static const polis_field_def picked[] = {
        {"agent", POLIS_FIELD_I32}, {"x", POLIS_FIELD_I32}, {"y", POLIS_FIELD_I32}};
    if ((st = h->observation(ctx, &around, &o->obs_around)) ||
        (st = h->observation(ctx, &position, &o->obs_position)) ||
        (st = h->reward(ctx, "fruit", reward, o)) ||
        (st = h->event_type(ctx, "fruit.picked", picked, POLIS_COUNT(picked), &o->ev_picked)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, o)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, o)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, o)) || (st = orchard_register_views(o)))
        return st;
    return POLIS_OK;
}

/* After every plugin's init: the grid's size is known. */
static polis_status start(polis_ctx *ctx, void *state)
{
    orchard *o = state;
    const polis_host *h = o->h;
    const polis_grid *grid = polis_kit_need_grid(h, ctx);
    if (!grid) return POLIS_ERR_CONFIG;
    o->core.width = grid->width;
    o->core.height = grid->height;
    size_t cells = (size_t)grid->width * (size_t)grid->height;
    if (!(o->core.tree = h->alloc(ctx, sizeof(int32_t) * cells)) ||
        !(o->core.agent = h->alloc(ctx, sizeof(int32_t) * cells)))
        return POLIS_ERR_NOMEM;
    const double lo = 0, hi = 3, plo[2] = {0, 0}, phi[2] = {grid->width - 1, grid->height - 1};
    polis_status st;
    if ((st = h->obs_range(ctx, o->obs_around, -1, 1, &lo, &hi)) ||
        (st = h->obs_range(ctx, o->obs_position, 0, 2, plo, phi)))
        return st;
    return orchard_register_looks(o);
}

static void destroy(polis_ctx *ctx, void *state)
{
    orchard *o = state;
    if (!o) return;
    const polis_host *h = o->h;
    size_t n = (size_t)o->core.n_agents, cells = (size_t)o->core.width * (size_t)o->core.height;
    h->free(ctx, o->core.x, sizeof(int32_t) * n);
    h->free(ctx, o->core.y, sizeof(int32_t) * n);
    h->free(ctx, o->core.reward, sizeof(float) * n);
    h->free(ctx, o->core.picked, sizeof(int32_t) * n);
    h->free(ctx, o->core.tree, sizeof(int32_t) * cells);
    h->free(ctx, o->core.agent, sizeof(int32_t) * cells);
    h->free(ctx, o, sizeof *o);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_INT(orchard_params, "trees", trees, 0, 1000000, 6, "trees planted at reset"),
    POLIS_P_INT(orchard_params, "ripen", ripen, 1, 1000000, 10,
                "steps a picked tree needs to bear fruit again"),
    POLIS_P_DOUBLE(orchard_params, "value", value, -100, 100, 1.0, "reward per fruit"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("orchard", 7), /* ABI 1.7: the json host API (views.c) */
    .version = "0.1.0",
    .doc = "template game: agents pick fruit that ripens again after a while",
    POLIS_DESC_PARAMS(PARAMS, orchard_params),
    .init = init,
    .start = start,
    .destroy = destroy,
};

POLIS_PLUGIN(DESC)
