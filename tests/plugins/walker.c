/*
 * walker — the kernel tests' own game (tests/unit), so that no kernel test depends on a
 * shipped game. Agents walk a grid and pick up items; it uses the host table the way games
 * do, including what the games no longer need from it (host->grid_window, a component):
 *
 *   - grid layers "agents" (agent id + 1) and "items" (1), sized by the scenario's "grid";
 *     component "walker.position" (x, y) per agent entity
 *   - actions move_north (y-1), move_south, move_west, move_east: off a bounded grid illegal
 *     (masked), into another agent blocked (a no-op); agents act in id order
 *   - RESOLVE: an agent on an item picks it up (event "item.picked", reward "items":
 *     item_value each); with respawn a new item lands on a random free cell; without
 *     respawn everyone terminates when the items run out
 *   - observations "view" i8 [2, 2v+1, 2v+1] (agents: 2 self, 1 other, -1 outside; items)
 *     and "position" i32 [2], with ranges
 *   - events "agent.moved" {agent, x, y} and "item.picked" {agent, x, y}
 *   - views "text" ("<name> at (x, y), carrying n. Tick t of m.", then whether its episode
 *     is over) and "json" ({"at":[x,y],"carrying":n}),
 *     an action parser for "n", "s", "w", "e" and "rest"
 *   - looks: kinds "ground" and "item", layers "ground" and "items", stat "carrying", scene
 *   - exports "walker.items_left" i32(ctx) and "walker.carrying" i32(ctx,i32)
 */
#include <string.h>

#include "polis/kit.h"

typedef struct walker_params {
    int64_t items;
    double item_value;
    int64_t view;
    bool respawn;
} walker_params;

typedef struct xy {
    int32_t x, y;
} xy;

typedef struct walker {
    const polis_host *h;
    polis_ctx *ctx;
    walker_params p;
    int32_t agents, l_agents, l_items, comp, f_view, f_pos, ev_moved, ev_picked;
    int32_t items_left;
    int32_t *picked;   /* [agents] this step */
    int32_t *carrying; /* [agents] this episode */
    int32_t *win;      /* window scratch */
    int32_t moves[4];
    int32_t k_ground, k_item, s_carrying, t_ground, t_items;
} walker;

static xy *where(walker *w, int32_t agent)
{
    xy *all = w->h->component_data(w->ctx, w->comp);
    return all + POLIS_ENTITY_INDEX(w->h->agent_entity(w->ctx, agent));
}

static int32_t *at(walker *w, int32_t layer, xy p)
{
    return polis_grid_cell(w->h->grid(w->ctx), layer, p.x, p.y);
}

/* The cell one step from p in direction d (0 north, 1 south, 2 west, 3 east); false off a
 * bounded grid. */
static bool step_from(const polis_grid *g, xy p, int32_t d, xy *out)
{
    static const int8_t dx[4] = {0, 0, -1, 1}, dy[4] = {-1, 1, 0, 0};
    xy q = {p.x + dx[d], p.y + dy[d]};
    if (g->wrap) {
        q.x = (q.x + g->width) % g->width;
        q.y = (q.y + g->height) % g->height;
    }
    if (q.x < 0 || q.y < 0 || q.x >= g->width || q.y >= g->height) return false;
    *out = q;
    return true;
}

/* A random empty cell: scans all cells from a random start. */
static bool empty_cell(walker *w, xy *out)
{
    const polis_grid *g = w->h->grid(w->ctx);
    uint32_t n = (uint32_t)g->width * (uint32_t)g->height;
    uint32_t start = polis_rng_below(w->h->rng(w->ctx), n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t c = (start + k) % n;
        xy p = {(int32_t)(c % (uint32_t)g->width), (int32_t)(c / (uint32_t)g->width)};
        if (!*at(w, w->l_agents, p) && !*at(w, w->l_items, p)) {
            *out = p;
            return true;
        }
    }
    return false;
}

static bool can_move(polis_ctx *ctx, void *ud, int32_t agent, int32_t d)
{
    walker *w = ud;
    xy q;
    return step_from(w->h->grid(ctx), *where(w, agent), d, &q);
}

static polis_status do_move(polis_ctx *ctx, void *ud, int32_t agent, int32_t d)
{
    walker *w = ud;
    xy *p = where(w, agent), q;
    if (!step_from(w->h->grid(ctx), *p, d, &q)) return POLIS_ERR_ACTION;
    if (*at(w, w->l_agents, q)) return POLIS_OK;
    *at(w, w->l_agents, *p) = 0;
    *at(w, w->l_agents, q) = agent + 1;
    *p = q;
    int32_t ev[3] = {agent, q.x, q.y};
    return w->h->publish(ctx, w->ev_moved, ev, sizeof ev);
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    walker *w = ud;
    memset(w->carrying, 0, sizeof(int32_t) * (size_t)w->agents);
    for (int32_t a = 0; a < w->agents; a++) {
        xy p;
        if (!empty_cell(w, &p)) {
            w->h->error(ctx, "no room for agent %d", a);
            return POLIS_ERR_LIMIT;
        }
        *where(w, a) = p;
        *at(w, w->l_agents, p) = a + 1;
    }
    w->items_left = 0;
    xy p;
    for (int64_t i = 0; i < w->p.items && empty_cell(w, &p); i++, w->items_left++)
        *at(w, w->l_items, p) = 1;
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    walker *w = ud;
    memset(w->picked, 0, sizeof(int32_t) * (size_t)w->agents);
    return POLIS_OK;
}

static polis_status on_resolve(polis_ctx *ctx, void *ud)
{
    walker *w = ud;
    for (int32_t a = 0; a < w->agents; a++) {
        xy p = *where(w, a), q;
        if (!*at(w, w->l_items, p)) continue;
        *at(w, w->l_items, p) = 0;
        w->items_left--;
        w->picked[a]++;
        w->carrying[a]++;
        int32_t ev[3] = {a, p.x, p.y};
        polis_status st = w->h->publish(ctx, w->ev_picked, ev, sizeof ev);
        if (st) return st;
        if (w->p.respawn && empty_cell(w, &q)) {
            *at(w, w->l_items, q) = 1;
            w->items_left++;
        }
    }
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    walker *w = ud;
    if (w->p.respawn || w->items_left > 0) return POLIS_OK;
    memset(w->h->io(ctx)->terminations, 1, (size_t)w->agents);
    return POLIS_OK;
}

static polis_status reward(polis_ctx *ctx, void *ud, float *out)
{
    walker *w = ud;
    for (int32_t a = 0; a < w->agents; a++) out[a] = (float)(w->picked[a] * w->p.item_value);
    return POLIS_OK;
}

static void write_view(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    walker *w = ud;
    int8_t *out = dst;
    int32_t v = (int32_t)w->p.view, n = (2 * v + 1) * (2 * v + 1);
    xy p = *where(w, agent);
    w->h->grid_window(ctx, w->l_agents, p.x, p.y, v, v, -1, w->win);
    for (int32_t i = 0; i < n; i++)
        out[i] = (int8_t)(w->win[i] > 0 ? 1 + (w->win[i] == agent + 1) : w->win[i]);
    w->h->grid_window(ctx, w->l_items, p.x, p.y, v, v, 0, w->win);
    for (int32_t i = 0; i < n; i++) out[n + i] = (int8_t)w->win[i];
}

static void write_pos(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    xy p = *where(ud, agent);
    memcpy(dst, &p, sizeof p);
}

static polis_status text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    walker *w = ud;
    xy p = *where(w, agent);
    const polis_io *io = w->h->io(ctx);
    w->h->text_printf(t, "%s at (%d, %d), carrying %d. Tick %lld of %lld.\n",
                      w->h->agent_name(ctx, agent), p.x, p.y, w->carrying[agent],
                      (long long)w->h->tick(ctx), (long long)w->h->max_steps(ctx));
    if (io->terminations[agent] || io->truncations[agent])
        w->h->text_printf(t, "Your episode is over (%s).\n",
                          io->terminations[agent] ? "terminated" : "truncated");
    return POLIS_OK;
}

static polis_status json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    walker *w = ud;
    xy p = *where(w, agent);
    w->h->text_printf(t, "{\"at\":[%d,%d],\"carrying\":%d}", p.x, p.y, w->carrying[agent]);
    return POLIS_OK;
}

static polis_status parse(polis_ctx *ctx, void *ud, int32_t agent, const char *in, int32_t *out)
{
    walker *w = ud;
    static const char *const words[5] = {"n", "s", "w", "e", "rest"};
    for (int32_t i = 0; i < 5; i++)
        if (!strcmp(in, words[i])) {
            *out = i < 4 ? w->moves[i] : 0;
            return POLIS_OK;
        }
    return POLIS_ERR_ACTION;
}

static polis_status scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    walker *w = ud;
    const polis_grid *g = w->h->grid(ctx);
    size_t plane = (size_t)sc->width * (size_t)sc->height;
    for (int32_t y = 0; y < g->height; y++)
        for (int32_t x = 0; x < g->width; x++) {
            size_t i = (size_t)y * (size_t)sc->width + (size_t)x;
            sc->tiles[(size_t)w->t_ground * plane + i] = w->k_ground;
            if (*polis_grid_cell(g, w->l_items, x, y))
                sc->tiles[(size_t)w->t_items * plane + i] = w->k_item;
        }
    for (int32_t a = 0; a < w->agents; a++) {
        xy p = *where(w, a);
        sc->agents[a].x = p.x;
        sc->agents[a].y = p.y;
        sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)w->s_carrying] = w->carrying[a];
    }
    return POLIS_OK;
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    walker *w = h->alloc(ctx, sizeof *w);
    if (!w) return POLIS_ERR_NOMEM;
    *state = w;
    w->h = h;
    w->ctx = ctx;
    memcpy(&w->p, params, sizeof w->p);
    w->agents = h->n_agents(ctx);
    int32_t side = 2 * (int32_t)w->p.view + 1;
    if (!(w->picked = h->alloc(ctx, sizeof(int32_t) * (size_t)w->agents)) ||
        !(w->carrying = h->alloc(ctx, sizeof(int32_t) * (size_t)w->agents)) ||
        !(w->win = h->alloc(ctx, sizeof(int32_t) * (size_t)(side * side))))
        return POLIS_ERR_NOMEM;
    polis_status st;
    static const char *const names[4] = {"move_north", "move_south", "move_west", "move_east"};
    for (int32_t d = 0; d < 4; d++) {
        polis_action_def a = {.name = names[d],
                              .doc = "one cell",
                              .handler = do_move,
                              .legal = can_move,
                              .arg = d,
                              .ud = w};
        if ((st = h->action(ctx, &a, &w->moves[d]))) return st;
    }
    polis_obs_def view = {.name = "view",
                          .doc = "[agents, items] window",
                          .dtype = POLIS_DTYPE_I8,
                          .ndim = 3,
                          .shape = {2, side, side},
                          .write = write_view,
                          .ud = w};
    polis_obs_def pos = {.name = "position",
                         .doc = "own (x, y)",
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {2},
                         .write = write_pos,
                         .ud = w};
    static const polis_field_def fields[3] = {
        {"agent", POLIS_FIELD_I32}, {"x", POLIS_FIELD_I32}, {"y", POLIS_FIELD_I32}};
    if ((st = h->grid_layer(ctx, "agents", &w->l_agents)) ||
        (st = h->grid_layer(ctx, "items", &w->l_items)) ||
        (st = h->component(ctx, "walker.position", sizeof(xy), &w->comp)) ||
        (st = h->observation(ctx, &view, &w->f_view)) ||
        (st = h->observation(ctx, &pos, &w->f_pos)) || (st = h->reward(ctx, "items", reward, w)) ||
        (st = h->event_type(ctx, "agent.moved", fields, 3, &w->ev_moved)) ||
        (st = h->event_type(ctx, "item.picked", fields, 3, &w->ev_picked)) ||
        (st = h->renderer(ctx, "text", text, w)) || (st = h->renderer(ctx, "json", json, w)) ||
        (st = h->action_parser(ctx, parse, w)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, w)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, w)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESOLVE, 0, on_resolve, w)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, w)))
        return st;
    return POLIS_OK;
}

static polis_status start(polis_ctx *ctx, void *state)
{
    walker *w = state;
    const polis_host *h = w->h;
    const polis_grid *g = h->grid(ctx);
    if (!g) {
        h->error(ctx, "the scenario has no \"grid\"");
        return POLIS_ERR_CONFIG;
    }
    if (w->agents + w->p.items > (int64_t)g->width * g->height) {
        h->error(ctx, "%d agents and %lld items do not fit on %dx%d cells", w->agents,
                 (long long)w->p.items, g->width, g->height);
        return POLIS_ERR_CONFIG;
    }
    const double vlo[2] = {-1, 0}, vhi[2] = {2, 1}, plo[2] = {0, 0},
                 phi[2] = {g->width - 1, g->height - 1};
    static const polis_kind_def ground = {"ground", ".", "#303030", POLIS_SHAPE_SQUARE};
    static const polis_kind_def item = {"item", "*", "#e0e040", POLIS_SHAPE_DIAMOND};
    polis_scene_def sd = {.fn = scene, .ud = w};
    polis_status st;
    if ((st = h->obs_range(ctx, w->f_view, 0, 2, vlo, vhi)) ||
        (st = h->obs_range(ctx, w->f_pos, 0, 2, plo, phi)) ||
        (st = h->look_kind(ctx, &ground, &w->k_ground)) ||
        (st = h->look_kind(ctx, &item, &w->k_item)) ||
        (st = h->look_layer(ctx, "ground", &w->t_ground)) ||
        (st = h->look_layer(ctx, "items", &w->t_items)) ||
        (st = h->look_stat(ctx, "carrying", "inventory", 0, &w->s_carrying)) ||
        (st = h->look_view(ctx, (int32_t)w->p.view, (int32_t)w->p.view)) ||
        (st = h->look_scene(ctx, &sd)))
        return st;
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    walker *w = state;
    if (!w) return;
    int32_t side = 2 * (int32_t)w->p.view + 1;
    w->h->free(ctx, w->picked, sizeof(int32_t) * (size_t)w->agents);
    w->h->free(ctx, w->carrying, sizeof(int32_t) * (size_t)w->agents);
    w->h->free(ctx, w->win, sizeof(int32_t) * (size_t)(side * side));
    w->h->free(ctx, w, sizeof *w);
}

static int32_t items_left(polis_ctx *ctx) { return ((walker *)polis_ctx_state(ctx))->items_left; }

static int32_t carrying(polis_ctx *ctx, int32_t agent)
{
    walker *w = polis_ctx_state(ctx);
    return agent >= 0 && agent < w->agents ? w->carrying[agent] : -1;
}

static const polis_export EXPORTS[] = {
    POLIS_EXPORT_FN("items_left", "i32(ctx)", items_left, "items on the grid"),
    POLIS_EXPORT_FN("carrying", "i32(ctx,i32)", carrying,
                    "items an agent picked up (-1: no agent)"),
};

static const polis_param_def PARAMS[] = {
    POLIS_P_INT(walker_params, "items", items, 0, 1000000, 8, "items on the grid at reset"),
    POLIS_P_DOUBLE(walker_params, "item_value", item_value, -1e6, 1e6, 1.0, "reward per item"),
    POLIS_P_INT(walker_params, "view", view, 0, 32, 2, "view radius"),
    POLIS_P_BOOL(walker_params, "respawn", respawn, true, "a picked item lands elsewhere"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("walker", 5),
    .version = "1.0.0",
    .doc = "test plugin: the kernel tests' game (agents walk and pick up items)",
    POLIS_DESC_PARAMS(PARAMS, walker_params),
    .init = init,
    .start = start,
    .destroy = destroy,
    POLIS_DESC_EXPORTS(EXPORTS),
};

POLIS_PLUGIN(DESC)
