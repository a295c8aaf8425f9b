/*
 * gather — the kernel's demo game: agents walk a grid and collect coins.
 *
 * Rules (README.md has the full text):
 *   - Actions: noop, move_north (y-1), move_south (y+1), move_west (x-1), move_east (x+1).
 *     A move off a bounded grid is illegal (masked). Agents act one after another in id
 *     order; a move into a cell another agent occupies at that moment is blocked (a no-op,
 *     not illegal).
 *   - RESOLVE: an agent standing on a coin collects it (+coin_value reward) and, with
 *     respawn on, a new coin appears on a random cell with no coin and no agent.
 *   - Without respawn the episode terminates once every coin is collected.
 *   - Observation: "view", an egocentric (2v+1)x(2v+1) window with two channels
 *     (0: agents — 2 for self, 1 for others, -1 outside a bounded grid; 1: coins), and
 *     "position" (x, y).
 *
 * It exercises every kernel service a real game uses: parameters, a grid with two layers,
 * a component, actions with legality, an observation layout, a reward function, hooks in
 * RESET/BEGIN/RESOLVE/END, event types published on the bus, and a foreign-callable export.
 */
#include <stddef.h>
#include <string.h>

#include "polis/plugin.h"

typedef struct gather_params {
    int64_t coins;
    double coin_value;
    int64_t view;
    bool respawn;
} gather_params;

typedef struct pos {
    int32_t x, y;
} pos;

typedef struct moved_ev {
    int32_t agent, from_x, from_y, x, y;
} moved_ev;

typedef struct coin_ev {
    int32_t agent, x, y;
} coin_ev;

typedef struct gather {
    const polis_host *h;
    polis_ctx *ctx;
    gather_params p;
    int32_t n_agents;
    int32_t layer_agents, layer_coins;
    int32_t comp_pos;
    int32_t ev_moved, ev_coin;
    int32_t coins_left;
    int32_t *step_coins;  /* [n_agents] collected this step */
    int32_t *total_coins; /* [n_agents] collected this episode */
    int32_t *window;      /* (2v+1)^2 scratch for grid_window */
} gather;

static const int32_t DX[4] = {0, 0, -1, 1};
static const int32_t DY[4] = {-1, 1, 0, 0};

static pos *agent_pos(gather *g, int32_t agent)
{
    pos *all = g->h->component_data(g->ctx, g->comp_pos);
    return &all[POLIS_ENTITY_INDEX(g->h->agent_entity(g->ctx, agent))];
}

/* Target of a move, or false when it leaves a bounded grid. */
static bool target(const polis_grid *grid, pos p, int32_t dir, pos *out)
{
    int32_t x = p.x + DX[dir], y = p.y + DY[dir];
    if (grid->wrap) {
        x = (x + grid->width) % grid->width;
        y = (y + grid->height) % grid->height;
    } else if (x < 0 || y < 0 || x >= grid->width || y >= grid->height) {
        return false;
    }
    out->x = x;
    out->y = y;
    return true;
}

static bool move_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    pos t;
    return target(g->h->grid(ctx), *agent_pos(g, agent), dir, &t);
}

static polis_status move(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    pos *p = agent_pos(g, agent), t;
    if (!target(grid, *p, dir, &t)) return POLIS_ERR_ACTION;
    int32_t *dst = polis_grid_cell(grid, g->layer_agents, t.x, t.y);
    if (*dst != 0) return POLIS_OK; /* blocked by another agent */
    *polis_grid_cell(grid, g->layer_agents, p->x, p->y) = 0;
    *dst = agent + 1;
    moved_ev ev = {agent, p->x, p->y, t.x, t.y};
    *p = t;
    return g->h->publish(ctx, g->ev_moved, &ev, sizeof ev);
}

/* A uniformly random cell with neither coin nor agent; false if there is none. Rejection
 * sampling first (cheap on sparse maps), then a scan from a random start. */
static bool free_cell(gather *g, pos *out)
{
    const polis_grid *grid = g->h->grid(g->ctx);
    polis_rng *rng = g->h->rng(g->ctx);
    int32_t w = grid->width, hgt = grid->height;
    for (int tries = 0; tries < 64; tries++) {
        int32_t x = (int32_t)polis_rng_below(rng, (uint32_t)w);
        int32_t y = (int32_t)polis_rng_below(rng, (uint32_t)hgt);
        if (!*polis_grid_cell(grid, g->layer_agents, x, y) &&
            !*polis_grid_cell(grid, g->layer_coins, x, y)) {
            *out = (pos){x, y};
            return true;
        }
    }
    int64_t cells = (int64_t)w * hgt;
    int64_t start = polis_rng_below(rng, (uint32_t)cells);
    for (int64_t k = 0; k < cells; k++) {
        int64_t c = (start + k) % cells;
        int32_t x = (int32_t)(c % w), y = (int32_t)(c / w);
        if (!*polis_grid_cell(grid, g->layer_agents, x, y) &&
            !*polis_grid_cell(grid, g->layer_coins, x, y)) {
            *out = (pos){x, y};
            return true;
        }
    }
    return false;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    memset(g->total_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    for (int32_t a = 0; a < g->n_agents; a++) {
        pos p;
        if (!free_cell(g, &p)) {
            g->h->error(ctx, "no free cell for agent %d", a);
            return POLIS_ERR_LIMIT;
        }
        *agent_pos(g, a) = p;
        *polis_grid_cell(grid, g->layer_agents, p.x, p.y) = a + 1;
    }
    g->coins_left = 0;
    for (int64_t c = 0; c < g->p.coins; c++) {
        pos p;
        if (!free_cell(g, &p)) break; /* start() guaranteed room; defensive only */
        *polis_grid_cell(grid, g->layer_coins, p.x, p.y) = 1;
        g->coins_left++;
    }
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    return POLIS_OK;
}

static polis_status on_resolve(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    for (int32_t a = 0; a < g->n_agents; a++) {
        pos p = *agent_pos(g, a);
        int32_t *coin = polis_grid_cell(grid, g->layer_coins, p.x, p.y);
        if (!*coin) continue;
        *coin = 0;
        g->coins_left--;
        g->step_coins[a]++;
        g->total_coins[a]++;
        coin_ev ev = {a, p.x, p.y};
        polis_status st = g->h->publish(ctx, g->ev_coin, &ev, sizeof ev);
        if (st) return st;
        pos np;
        if (g->p.respawn && free_cell(g, &np)) {
            *polis_grid_cell(grid, g->layer_coins, np.x, np.y) = 1;
            g->coins_left++;
        }
    }
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    if (g->coins_left > 0 || g->p.respawn) return POLIS_OK;
    const polis_io *io = g->h->io(ctx);
    for (int32_t a = 0; a < g->n_agents; a++) io->terminations[a] = 1;
    return POLIS_OK;
}

static polis_status reward_coins(polis_ctx *ctx, void *ud, float *out)
{
    gather *g = ud;
    for (int32_t a = 0; a < g->n_agents; a++)
        out[a] = (float)(g->step_coins[a] * g->p.coin_value);
    return POLIS_OK;
}

static void write_view(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    int8_t *out = dst;
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1, cells = side * side;
    pos p = *agent_pos(g, agent);
    g->h->grid_window(ctx, g->layer_agents, p.x, p.y, v, v, -1, g->window);
    for (int32_t i = 0; i < cells; i++)
        out[i] = (int8_t)(g->window[i] == agent + 1 ? 2 : g->window[i] > 0 ? 1 : g->window[i]);
    g->h->grid_window(ctx, g->layer_coins, p.x, p.y, v, v, 0, g->window);
    for (int32_t i = 0; i < cells; i++) out[cells + i] = (int8_t)g->window[i];
}

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    pos p = *agent_pos(g, agent);
    int32_t xy[2] = {p.x, p.y};
    memcpy(dst, xy, sizeof xy);
}

static polis_status gather_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                void **state)
{
    gather *g = h->alloc(ctx, sizeof *g);
    if (!g) return POLIS_ERR_NOMEM;
    *state = g;
    g->h = h;
    g->ctx = ctx;
    memcpy(&g->p, params, sizeof g->p);
    g->n_agents = h->n_agents(ctx);
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1;
    g->step_coins = h->alloc(ctx, sizeof(int32_t) * (size_t)g->n_agents);
    g->total_coins = h->alloc(ctx, sizeof(int32_t) * (size_t)g->n_agents);
    g->window = h->alloc(ctx, sizeof(int32_t) * (size_t)side * (size_t)side);
    if (!g->step_coins || !g->total_coins || !g->window) return POLIS_ERR_NOMEM;

    polis_status st;
    if ((st = h->grid_layer(ctx, "agents", &g->layer_agents))) return st;
    if ((st = h->grid_layer(ctx, "coins", &g->layer_coins))) return st;
    if ((st = h->component(ctx, "gather.position", sizeof(pos), &g->comp_pos))) return st;

    static const char *names[4] = {"move_north", "move_south", "move_west", "move_east"};
    static const char *docs[4] = {"move to y-1", "move to y+1", "move to x-1", "move to x+1"};
    for (int32_t d = 0; d < 4; d++) {
        polis_action_def a = {.name = names[d], .doc = docs[d], .handler = move,
                              .legal = move_legal, .arg = d, .ud = g};
        if ((st = h->action(ctx, &a, NULL))) return st;
    }
    polis_obs_def view = {.name = "view",
                          .doc = "egocentric window: [0] agents (2 self, 1 other, -1 outside), "
                                 "[1] coins",
                          .dtype = POLIS_DTYPE_I8, .ndim = 3, .shape = {2, side, side},
                          .write = write_view, .ud = g};
    polis_obs_def position = {.name = "position", .doc = "own (x, y)", .dtype = POLIS_DTYPE_I32,
                              .ndim = 1, .shape = {2}, .write = write_position, .ud = g};
    if ((st = h->observation(ctx, &view, NULL))) return st;
    if ((st = h->observation(ctx, &position, NULL))) return st;
    if ((st = h->reward(ctx, "coins", reward_coins, g))) return st;

    static const polis_field_def moved_fields[5] = {{"agent", POLIS_FIELD_I32},
                                                    {"from_x", POLIS_FIELD_I32},
                                                    {"from_y", POLIS_FIELD_I32},
                                                    {"x", POLIS_FIELD_I32},
                                                    {"y", POLIS_FIELD_I32}};
    static const polis_field_def coin_fields[3] = {
        {"agent", POLIS_FIELD_I32}, {"x", POLIS_FIELD_I32}, {"y", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "agent.moved", moved_fields, 5, &g->ev_moved))) return st;
    if ((st = h->event_type(ctx, "coin.collected", coin_fields, 3, &g->ev_coin))) return st;

    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_RESOLVE, 0, on_resolve, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, g))) return st;
    return POLIS_OK;
}

/* Runs after every plugin's init, when the grid size is final. */
static polis_status gather_start(polis_ctx *ctx, void *state)
{
    gather *g = state;
    const polis_grid *grid = g->h->grid(ctx);
    if (!grid) {
        g->h->error(ctx, "needs a grid: add \"grid\": {\"width\": W, \"height\": H} to the "
                         "scenario");
        return POLIS_ERR_CONFIG;
    }
    int64_t cells = (int64_t)grid->width * grid->height;
    if (g->n_agents + g->p.coins > cells) {
        g->h->error(ctx, "%d agents and %lld coins do not fit on a %dx%d grid", g->n_agents,
                    (long long)g->p.coins, grid->width, grid->height);
        return POLIS_ERR_CONFIG;
    }
    return POLIS_OK;
}

static void gather_destroy(polis_ctx *ctx, void *state)
{
    gather *g = state;
    if (!g) return;
    int32_t side = 2 * (int32_t)g->p.view + 1;
    g->h->free(ctx, g->step_coins, sizeof(int32_t) * (size_t)g->n_agents);
    g->h->free(ctx, g->total_coins, sizeof(int32_t) * (size_t)g->n_agents);
    g->h->free(ctx, g->window, sizeof(int32_t) * (size_t)side * (size_t)side);
    g->h->free(ctx, g, sizeof *g);
}

/* Exports for scenarios and Lua (polis.call("gather.coins_left")). */
static int32_t gather_coins_left(polis_ctx *ctx)
{
    gather *g = polis_ctx_state(ctx);
    return g->coins_left;
}

static int32_t gather_total(polis_ctx *ctx, int32_t agent)
{
    gather *g = polis_ctx_state(ctx);
    return agent >= 0 && agent < g->n_agents ? g->total_coins[agent] : -1;
}

static const polis_export gather_exports[] = {
    {"coins_left", "i32(ctx)", (void (*)(void))gather_coins_left, "coins on the map now"},
    {"total", "i32(ctx,i32)", (void (*)(void))gather_total,
     "coins agent collected this episode (-1 for a bad id)"},
};

static const polis_param_def gather_params_table[] = {
    {"coins", POLIS_PARAM_INT, offsetof(gather_params, coins), 0, 1000000, 8, NULL,
     "coins on the map at reset", false},
    {"coin_value", POLIS_PARAM_DOUBLE, offsetof(gather_params, coin_value), -1e6, 1e6, 1.0,
     NULL, "reward per coin collected", false},
    {"view", POLIS_PARAM_INT, offsetof(gather_params, view), 0, 32, 2, NULL,
     "view radius of the observation window", false},
    {"respawn", POLIS_PARAM_BOOL, offsetof(gather_params, respawn), 0, 1, 1, NULL,
     "a collected coin reappears elsewhere", false},
};

static const polis_plugin_desc gather_desc = {
    .abi_major = POLIS_ABI_MAJOR,
    .struct_size = sizeof(polis_plugin_desc),
    .name = "gather",
    .abi_minor = POLIS_ABI_MINOR,
    .version = "1.0.0",
    .doc = "demo game: agents walk a grid and collect coins",
    .params = gather_params_table,
    .n_params = 4,
    .params_size = sizeof(gather_params),
    .init = gather_init,
    .start = gather_start,
    .destroy = gather_destroy,
    .exports = gather_exports,
    .n_exports = 2,
};

POLIS_PLUGIN(gather_desc)
