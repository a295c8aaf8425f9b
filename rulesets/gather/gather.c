/*
 * gather.c — the plugin glue around gather's rules (core.h): parameters, the grid layers the
 * core's maps live in, actions with legality, observations, the reward, hooks, events and
 * exports. The views (views.c: text, JSON, action parsing) and the looks (looks.c: what a
 * recording and the viewer draw) are optional: without them the game plays the same.
 *
 * Rules in brief (README.md has them in full): agents walk a grid and collect coins; a move
 * off a bounded grid is illegal, a move into another agent is blocked; a coin collected
 * pays coin_value and, with respawn on, reappears on a random free cell; without respawn
 * the episode ends when the coins run out.
 *
 * This is the game to copy when writing one in C (docs/c-games.md; examples/c_game is the
 * same shape, smaller, building out of tree).
 */
#include <string.h>

#include "internal.h"

/* The events gather publishes, as their payloads. */
typedef struct moved_ev {
    int32_t agent, from_x, from_y, x, y;
} moved_ev;

typedef struct coin_ev {
    int32_t agent, x, y;
} coin_ev;

/* Keeps the "gather.position" component, other plugins' view of the positions, in step. */
static void publish_pos(gather *g, int32_t agent)
{
    gather_pos *all = g->h->component_data(g->ctx, g->comp_pos);
    all[POLIS_ENTITY_INDEX(g->h->agent_entity(g->ctx, agent))] = g->core.pos[agent];
}

/* ---- actions ------------------------------------------------------------------------------ */

static bool move_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    gather_pos t;
    return gather_target(&g->core, g->core.pos[agent], dir, &t);
}

static polis_status move(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    gather_pos from;
    int r = gather_move(&g->core, agent, dir, &from);
    if (r < 0) return POLIS_ERR_ACTION;
    if (r == 0) return POLIS_OK; /* blocked by another agent */
    publish_pos(g, agent);
    gather_pos to = g->core.pos[agent];
    moved_ev ev = {agent, from.x, from.y, to.x, to.y};
    return g->h->publish(ctx, g->ev_moved, &ev, sizeof ev);
}

/* ---- hooks --------------------------------------------------------------------------------- */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    polis_kit_stored_ask(ctx, &g->position);
    const polis_grid *grid = g->h->grid(ctx);
    g->core.agents = polis_grid_cell(grid, g->layer_agents, 0, 0);
    g->core.coins = polis_grid_cell(grid, g->layer_coins, 0, 0);
    int32_t bad = -1;
    bool ok = gather_reset(&g->core, g->h->rng(ctx), &bad);
    for (int32_t a = 0; a < g->core.n_agents && (ok || a < bad); a++) publish_pos(g, a);
    if (!ok) {
        g->h->error(ctx, "no free cell for agent %d", bad);
        return POLIS_ERR_LIMIT;
    }
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    gather_begin(&((gather *)ud)->core);
    return POLIS_OK;
}

static polis_status on_resolve(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    for (int32_t a = 0; a < g->core.n_agents; a++) {
        if (!gather_collect(&g->core, a)) continue;
        coin_ev ev = {a, g->core.pos[a].x, g->core.pos[a].y};
        polis_status st = g->h->publish(ctx, g->ev_coin, &ev, sizeof ev);
        if (st) return st;
        gather_respawn(&g->core, g->h->rng(ctx));
    }
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    if (!gather_over(&g->core)) return POLIS_OK;
    const polis_io *io = g->h->io(ctx);
    for (int32_t a = 0; a < g->core.n_agents; a++) io->terminations[a] = 1;
    return POLIS_OK;
}

static polis_status reward_coins(polis_ctx *ctx, void *ud, float *out)
{
    gather *g = ud;
    for (int32_t a = 0; a < g->core.n_agents; a++) out[a] = gather_reward(&g->core, a);
    return POLIS_OK;
}

/* ---- observations -------------------------------------------------------------------------- */

static void write_view(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    gather_observe(&g->core, agent, dst, g->window);
}

/* Own (x, y) in the dtype the env stores (u8 with compact observations on grids up to 256
 * cells a side: the position lies on the grid, inside gather_start's ranges). */
static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    const int32_t xy[2] = {g->core.pos[agent].x, g->core.pos[agent].y};
    polis_kit_put_stored(&g->position, dst, xy, 2);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static polis_status gather_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                void **state)
{
    gather *g = h->alloc(ctx, sizeof *g);
    if (!g) return POLIS_ERR_NOMEM;
    *state = g;
    g->h = h;
    g->ctx = ctx;
    gather_core *c = &g->core;
    memcpy(&c->p, params, sizeof c->p);
    c->n_agents = h->n_agents(ctx);
    size_t n = (size_t)c->n_agents, side = 2 * (size_t)c->p.view + 1;
    c->pos = h->alloc(ctx, sizeof *c->pos * n);
    c->step_coins = h->alloc(ctx, sizeof(int32_t) * n);
    c->total_coins = h->alloc(ctx, sizeof(int32_t) * n);
    g->window = h->alloc(ctx, sizeof(int32_t) * side * side);
    if (!c->pos || !c->step_coins || !c->total_coins || !g->window) return POLIS_ERR_NOMEM;

    polis_status st;
    if ((st = h->grid_layer(ctx, "agents", &g->layer_agents)) ||
        (st = h->grid_layer(ctx, "coins", &g->layer_coins)) ||
        (st = h->component(ctx, "gather.position", sizeof(gather_pos), &g->comp_pos)))
        return st;

    static const char *const names[GATHER_DIRS] = {"move_north", "move_south", "move_west",
                                                   "move_east"};
    static const char *const docs[GATHER_DIRS] = {"move to y-1", "move to y+1", "move to x-1",
                                                  "move to x+1"};
    for (int32_t d = 0; d < GATHER_DIRS; d++) {
        polis_action_def a = {.name = names[d],
                              .doc = docs[d],
                              .handler = move,
                              .legal = move_legal,
                              .arg = d,
                              .ud = g};
        if ((st = h->action(ctx, &a, &g->act[d]))) return st;
    }
    int32_t s = (int32_t)side;
    polis_obs_def view = {.name = "view",
                          .doc = "egocentric window: [0] agents (2 self, 1 other, -1 outside), "
                                 "[1] coins",
                          .dtype = POLIS_DTYPE_I8,
                          .ndim = 3,
                          .shape = {2, s, s},
                          .write = write_view,
                          .ud = g};
    polis_obs_def position = {.name = "position",
                              .doc = "own (x, y)",
                              .dtype = POLIS_DTYPE_I32,
                              .ndim = 1,
                              .shape = {2},
                              .write = write_position,
                              .ud = g};
    if ((st = h->observation(ctx, &view, &g->obs_view)) ||
        (st = h->observation(ctx, &position, &g->obs_position)) ||
        (st = h->reward(ctx, "coins", reward_coins, g)))
        return st;

    static const polis_field_def moved_fields[] = {{"agent", POLIS_FIELD_I32},
                                                   {"from_x", POLIS_FIELD_I32},
                                                   {"from_y", POLIS_FIELD_I32},
                                                   {"x", POLIS_FIELD_I32},
                                                   {"y", POLIS_FIELD_I32}};
    static const polis_field_def coin_fields[] = {
        {"agent", POLIS_FIELD_I32}, {"x", POLIS_FIELD_I32}, {"y", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "agent.moved", moved_fields, POLIS_COUNT(moved_fields),
                            &g->ev_moved)) ||
        (st = h->event_type(ctx, "coin.collected", coin_fields, POLIS_COUNT(coin_fields),
                            &g->ev_coin)) ||
        (st = gather_register_views(g)))
        return st;

    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, g)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, g)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESOLVE, 0, on_resolve, g)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, g)))
        return st;
    return POLIS_OK;
}

/* Runs after every plugin's init, when the grid size is final. */
static polis_status gather_start(polis_ctx *ctx, void *state)
{
    gather *g = state;
    const polis_host *h = g->h;
    const polis_grid *grid = polis_kit_need_grid(h, ctx);
    if (!grid) return POLIS_ERR_CONFIG;
    gather_core *c = &g->core;
    int64_t cells = (int64_t)grid->width * grid->height;
    if (c->n_agents + c->p.coins > cells) {
        h->error(ctx, "%d agents and %lld coins do not fit on a %dx%d grid", c->n_agents,
                 (long long)c->p.coins, grid->width, grid->height);
        return POLIS_ERR_CONFIG;
    }
    c->width = grid->width;
    c->height = grid->height;
    c->wrap = grid->wrap;
    const double vlo[2] = {-1, 0}, vhi[2] = {2, 1}; /* agents (2 self, 1 other), coins */
    const double plo[2] = {0, 0}, phi[2] = {grid->width - 1, grid->height - 1};
    polis_status st;
    if ((st = h->obs_range(ctx, g->obs_view, 0, 2, vlo, vhi)) ||
        (st = h->obs_range(ctx, g->obs_position, 0, 2, plo, phi)) ||
        (st = polis_kit_writes_stored(h, ctx, g->obs_position, &g->position)))
        return st;
    return gather_register_looks(g);
}

static void gather_destroy(polis_ctx *ctx, void *state)
{
    gather *g = state;
    if (!g) return;
    const polis_host *h = g->h;
    size_t n = (size_t)g->core.n_agents, side = 2 * (size_t)g->core.p.view + 1;
    h->free(ctx, g->core.pos, sizeof *g->core.pos * n);
    h->free(ctx, g->core.step_coins, sizeof(int32_t) * n);
    h->free(ctx, g->core.total_coins, sizeof(int32_t) * n);
    h->free(ctx, g->window, sizeof(int32_t) * side * side);
    if (g->core.coin_rows)
        h->free(ctx, g->core.coin_rows, sizeof(uint64_t) * GATHER_ROW_WORDS(g->core.height));
    h->free(ctx, g, sizeof *g);
}

/* ---- exports, parameters, the descriptor --------------------------------------------------- */

/* Exports for scenarios and Lua (polis.call("gather.coins_left")). */
static int32_t gather_coins_left(polis_ctx *ctx)
{
    gather *g = polis_ctx_state(ctx);
    return g->core.coins_left;
}

static int32_t gather_total(polis_ctx *ctx, int32_t agent)
{
    gather *g = polis_ctx_state(ctx);
    return agent >= 0 && agent < g->core.n_agents ? g->core.total_coins[agent] : -1;
}

static const polis_export EXPORTS[] = {
    POLIS_EXPORT_FN("coins_left", "i32(ctx)", gather_coins_left, "coins on the map now"),
    POLIS_EXPORT_FN("total", "i32(ctx,i32)", gather_total,
                    "coins agent collected this episode (-1 for a bad id)"),
};

static const polis_param_def PARAMS[] = {
    POLIS_P_INT(gather_params, "coins", coins, 0, 1000000, 8, "coins on the map at reset"),
    POLIS_P_DOUBLE(gather_params, "coin_value", coin_value, -1e6, 1e6, 1.0,
                   "reward per coin collected"),
    POLIS_P_INT(gather_params, "view", view, 0, 32, 2, "view radius of the observation window"),
    POLIS_P_BOOL(gather_params, "respawn", respawn, true, "a collected coin reappears elsewhere"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("gather", 7), /* 1.7: the "json" host API (JSON actions) */
    .version = "1.0.0",
    .doc = "demo game: agents walk a grid and collect coins",
    POLIS_DESC_PARAMS(PARAMS, gather_params),
    .init = gather_init,
    .start = gather_start,
    .destroy = gather_destroy,
    POLIS_DESC_EXPORTS(EXPORTS),
};

POLIS_PLUGIN(DESC)
