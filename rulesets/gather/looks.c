/*
 * looks.c — what a recording, the replay and the viewer draw of gather (docs/kernel.md,
 * "Looks and scenes"): a floor, a layer of coins, each agent's position and the coins it
 * collected this episode. Optional: the game plays the same without it.
 */
#include <string.h>

#include "internal.h"

static polis_status write_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    gather *g = ud;
    gather_core *c = &g->core;
    size_t plane = (size_t)sc->width * (size_t)sc->height;
    int32_t *ground = sc->tiles + (size_t)g->look_ground * plane;
    int32_t *coins = sc->tiles + (size_t)g->look_coins * plane;
    /* both layers are kept (a recording reads the scene every tick): the floor is drawn once
     * per episode and then said the same, the coin layer redraws only the rows whose coins
     * changed since the previous scene (the core notes them in coin_rows) and names them */
    bool fresh = g->h->scene_fresh(ctx, sc);
    const int32_t kind_coin = g->kind_coin, kind_floor = g->kind_floor;
    /* the scene's map is the game's grid (look_map is not called), so the layers and the coin
     * map are the same row-major plane; checked once an episode (the grid changes only with a
     * reset, whose first scene is fresh) */
    if (fresh && (sc->width != c->width || sc->height != c->height)) {
        g->h->error(ctx, "scene: the map is %dx%d, the grid %dx%d", (int)sc->width, (int)sc->height,
                    (int)c->width, (int)c->height);
        return POLIS_ERR_STATE;
    }
    const int32_t *restrict map = c->coins;
    int32_t *restrict coin = coins;
    size_t cells = (size_t)c->width * (size_t)c->height, w = (size_t)c->width;
    int32_t n_words = (c->height + 63) / 64;
    polis_status st;
    if (fresh) {
        for (size_t i = 0; i < cells; i++) ground[i] = kind_floor;
        for (size_t i = 0; i < cells; i++) coin[i] = map[i] ? kind_coin : -1;
    } else {
        bool any = false;
        for (int32_t k = 0; k < n_words; k++) any |= c->coin_rows[k] != 0;
        if ((st = g->scene->layer_same(ctx, sc, g->look_ground)) ||
            (st = any ? g->scene->layer_rows(ctx, sc, g->look_coins, c->coin_rows, n_words)
                      : g->scene->layer_same(ctx, sc, g->look_coins)))
            return st;
        for (int32_t k = 0; k < n_words; k++)
            for (uint64_t rows = c->coin_rows[k]; rows; rows &= rows - 1) {
                size_t y = (size_t)k * 64 + (size_t)__builtin_ctzll(rows);
                if (y >= (size_t)c->height) break;
                for (size_t i = y * w; i < (y + 1) * w; i++) coin[i] = map[i] ? kind_coin : -1;
            }
    }
    if (n_words == 1) /* grids up to 64 rows: one store, not a call */
        c->coin_rows[0] = 0;
    else
        memset(c->coin_rows, 0, sizeof(uint64_t) * (size_t)n_words);
    /* every agent whole, as the kernel would have cleared it (scene_whole): no facing, alive
     * until terminated */
    const uint8_t *term = g->h->io(ctx)->terminations;
    for (int32_t a = 0; a < c->n_agents; a++) {
        sc->agents[a] = (polis_scene_agent){c->pos[a].x, c->pos[a].y, POLIS_FACING_NONE, !term[a]};
        sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)g->stat_coins] = c->total_coins[a];
    }
    return POLIS_OK;
}

polis_status gather_register_looks(gather *g)
{
    const polis_host *h = g->h;
    static const polis_kind_def floor = {"floor", ".", "#2b2f36", POLIS_SHAPE_SQUARE};
    static const polis_kind_def coin = {"coin", "o", "#f2c94c", POLIS_SHAPE_CIRCLE};
    polis_scene_def scene = {.fn = write_scene, .ud = g};
    int32_t view = (int32_t)g->core.p.view;
    polis_status st;
    if ((st = h->look_kind(g->ctx, &floor, &g->kind_floor)) ||
        (st = h->look_kind(g->ctx, &coin, &g->kind_coin)) ||
        (st = h->look_layer(g->ctx, "ground", &g->look_ground)) ||
        (st = h->look_layer(g->ctx, "coins", &g->look_coins)) ||
        (st = h->look_keep_layer(g->ctx, g->look_ground)) ||
        (st = h->look_keep_layer(g->ctx, g->look_coins)) ||
        (st = h->look_stat(g->ctx, "coins", "inventory", 0, &g->stat_coins)) ||
        (st = h->look_view(g->ctx, view, view)) || (st = h->look_scene(g->ctx, &scene)))
        return st;
    /* the rows of coins the scene redraws (layer_same, layer_rows: the "scene" API 3) */
    if (!(g->scene = h->host_api(g->ctx, POLIS_SCENE_API, 3))) return POLIS_ERR_PLUGIN;
    g->core.coin_rows = h->alloc(g->ctx, sizeof(uint64_t) * (size_t)((g->core.height + 63) / 64));
    if (!g->core.coin_rows) return POLIS_ERR_NOMEM;
    /* write_scene writes every agent, its coins and, when fresh, every cell of both layers:
     * the kernel need not clear them first (API 4) */
    if (g->scene->version >= 4 &&
        (st = g->scene->scene_whole(g->ctx, POLIS_SCENE_WHOLE_AGENTS | POLIS_SCENE_WHOLE_STATS |
                                                POLIS_SCENE_WHOLE_FRESH_LAYERS)))
        return st;
    return POLIS_OK;
}
