/*
 * looks.c — what a recording, the replay and the viewer draw of gather (docs/kernel.md,
 * "Looks and scenes"): a floor, a layer of coins, each agent's position and the coins it
 * collected this episode. Optional: the game plays the same without it.
 *
 * Both layers are kept (a recording reads the scene every tick): the floor is drawn once per
 * episode and then said the same, the coin layer redraws only the rows whose coins changed
 * since the previous scene and names them. The scene can also be drawn from copies ("scene"
 * host API version 5): take_coins, on the env's thread after each reset and step, copies the
 * coin rows that changed since the last take and every agent; draw_coins, on the reader's
 * thread, makes write_scene's calls from it, reading of the gather only what registration set.
 * The rules mark only core.coin_rows; whichever of write_scene and take_coins reads them clears
 * them and leaves them for the other in its own words (scene_rows, take_rows; read_rows), so
 * the step pays nothing for the second reader. Both paths share the layers (show_layers) and an
 * agent (show_agent).
 */
#include <string.h>

#include "internal.h"

/* The coin rows since `mine` (scene_rows or take_rows) was last read: the rules' marks and
 * what the other reader left, into mine; the rules' cleared and left for the other too. */
static inline void read_rows(uint64_t *rules, uint64_t *mine, uint64_t *other, int32_t n_words)
{
    if (n_words == 1) { /* grids up to 64 rows: no loop */
        uint64_t m = rules[0];
        other[0] |= m;
        rules[0] = 0;
        mine[0] |= m;
        return;
    }
    for (int32_t k = 0; k < n_words; k++) {
        uint64_t m = rules[k];
        other[k] |= m;
        rules[k] = 0;
        mine[k] |= m;
    }
}

static inline void clear_rows(uint64_t *rows, int32_t n_words)
{
    if (n_words == 1) /* grids up to 64 rows: one store, not a call */
        rows[0] = 0;
    else
        memset(rows, 0, sizeof(uint64_t) * (size_t)n_words);
}

/* The ground and coin layers of a scene. Fresh: the floor everywhere and every coin row; else
 * the floor said the same and the coin rows in rows[0 .. n_words) named (layer_same when none)
 * and redrawn. The coins come from src, an int32 a cell (non-zero: a coin): the game's coin map
 * (row y at y * w) or, `packed`, a take's rows (one after another in row order). */
static inline __attribute__((always_inline)) polis_status
show_layers(polis_ctx *ctx, polis_scene *sc, const gather *g, bool fresh, const uint64_t *rows,
            const void *src, bool packed)
{
    size_t w = (size_t)g->look_w, h = (size_t)g->look_h, plane = w * h;
    int32_t n_words = (g->look_h + 63) / 64;
    int32_t *ground = sc->tiles + (size_t)g->look_ground * plane;
    int32_t *coin = sc->tiles + (size_t)g->look_coins * plane;
    const int32_t kind_coin = g->kind_coin, kind_floor = g->kind_floor;
    polis_status st;
    if (fresh) {
        for (size_t i = 0; i < plane; i++) ground[i] = kind_floor;
    } else {
        bool any = false;
        for (int32_t k = 0; k < n_words; k++) any |= rows[k] != 0;
        if ((st = g->scene->layer_same(ctx, sc, g->look_ground)) ||
            (st = any ? g->scene->layer_rows(ctx, sc, g->look_coins, rows, n_words)
                      : g->scene->layer_same(ctx, sc, g->look_coins)))
            return st;
    }
    const int32_t *map = src, *taken = src;
    for (int32_t k = 0; k < n_words; k++)
        for (uint64_t r = fresh ? ~UINT64_C(0) : rows[k]; r; r &= r - 1) {
            size_t y = (size_t)k * 64 + (size_t)__builtin_ctzll(r);
            if (y >= h) break;
            int32_t *restrict out = coin + y * w;
            const int32_t *restrict m = packed ? taken : map + y * w;
            for (size_t i = 0; i < w; i++) out[i] = m[i] ? kind_coin : -1;
            taken += w;
        }
    return POLIS_OK;
}

/* Agent a whole, as the kernel would have cleared it (scene_whole): its place, no facing, alive
 * until terminated, and its coins. */
static inline void show_agent(polis_scene *sc, const gather *g, int32_t a, int32_t x, int32_t y,
                              int32_t alive, int32_t coins)
{
    sc->agents[a] = (polis_scene_agent){x, y, POLIS_FACING_NONE, alive};
    sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)g->stat_coins] = coins;
}

static polis_status write_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    gather *g = ud;
    gather_core *c = &g->core;
    bool fresh = g->h->scene_fresh(ctx, sc);
    /* the scene's map is the game's grid (look_map is not called), so the layers and the coin
     * map are the same row-major plane; checked once an episode (the grid changes only with a
     * reset, whose first scene is fresh) */
    if (fresh && (sc->width != c->width || sc->height != c->height)) {
        g->h->error(ctx, "scene: the map is %dx%d, the grid %dx%d", (int)sc->width, (int)sc->height,
                    (int)c->width, (int)c->height);
        return POLIS_ERR_STATE;
    }
    int32_t n_words = (c->height + 63) / 64;
    read_rows(c->coin_rows, g->scene_rows, g->take_rows, n_words);
    polis_status st = show_layers(ctx, sc, g, fresh, g->scene_rows, c->coins, false);
    /* cleared even on failure: a scene that fails is followed by a fresh one */
    clear_rows(g->scene_rows, n_words);
    if (st) return st;
    const uint8_t *term = g->h->io(ctx)->terminations;
    for (int32_t a = 0; a < c->n_agents; a++)
        show_agent(sc, g, a, c->pos[a].x, c->pos[a].y, !term[a], c->total_coins[a]);
    return POLIS_OK;
}

/* ---- the scene drawn from copies ("scene" host API version 5) ------------------------------
 *
 * A take: the coin rows taken ((height + 63) / 64 words; every row when fresh), a uint32 1 when
 * fresh, every agent's x, y, alive and coins (int32 each), then each taken row of the coin map
 * (int32 cells, copied whole: cheaper than narrowing them), in row order. */
#define TAKE_AGENT 16

static size_t take_head(const gather *g)
{
    return sizeof(uint64_t) * (size_t)((g->look_h + 63) / 64) + sizeof(uint32_t) +
           TAKE_AGENT * (size_t)g->look_n;
}

/* On the env's thread: what changed since the last take. */
static polis_status take_coins(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len)
{
    gather *g = ud;
    const gather_core *c = &g->core;
    int32_t n_words = (c->height + 63) / 64;
    size_t w = (size_t)c->width, row_bytes = sizeof(int32_t) * w;
    uint8_t *const b = buf, *p = b + sizeof(uint64_t) * (size_t)n_words;
    uint8_t *cells = b + take_head(g);
    read_rows(c->coin_rows, g->take_rows, g->scene_rows, n_words);
    /* stored field by field (a struct built on the stack and copied stalls on its loads) */
    const uint32_t fr = fresh;
    memcpy(p, &fr, sizeof fr);
    p += sizeof fr;
    const uint8_t *term = g->h->io(ctx)->terminations;
    for (int32_t a = 0; a < c->n_agents; a++, p += TAKE_AGENT) {
        const int32_t alive = !term[a];
        memcpy(p, &c->pos[a].x, sizeof(int32_t));
        memcpy(p + 4, &c->pos[a].y, sizeof(int32_t));
        memcpy(p + 8, &alive, sizeof(int32_t));
        memcpy(p + 12, &c->total_coins[a], sizeof(int32_t));
    }
    for (int32_t k = 0; k < n_words; k++) {
        uint64_t rows = g->take_rows[k];
        if (fresh) /* every row of the grid */
            rows =
                c->height - k * 64 >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << (c->height - k * 64)) - 1;
        memcpy(b + sizeof rows * (size_t)k, &rows, sizeof rows);
        for (; rows; rows &= rows - 1, cells += row_bytes)
            memcpy(cells, c->coins + ((size_t)k * 64 + (size_t)__builtin_ctzll(rows)) * w,
                   row_bytes);
    }
    clear_rows(g->take_rows, n_words);
    *len = (size_t)(cells - b);
    return POLIS_OK;
}

/* On the reader's thread: write_scene's calls and writes from a take. state: the take's row
 * words, copied (8-byte aligned for layer_rows). */
static polis_status draw_coins(polis_ctx *ctx, void *ud, void *state, const void *take,
                               size_t take_len, polis_scene *sc)
{
    const gather *g = ud;
    int32_t n_words = (g->look_h + 63) / 64;
    size_t head = take_head(g), taken = 0;
    uint64_t *rows = state;
    const uint8_t *p = take;
    /* no message: the host's error writes the env's, which the env's thread owns meanwhile */
    if (take_len < head) return POLIS_ERR_INVALID;
    memcpy(rows, p, sizeof(uint64_t) * (size_t)n_words);
    for (int32_t k = 0; k < n_words; k++) taken += (size_t)__builtin_popcountll(rows[k]);
    uint32_t fr;
    memcpy(&fr, p + sizeof(uint64_t) * (size_t)n_words, sizeof fr);
    int32_t tail = g->look_h - (n_words - 1) * 64; /* rows in the last word */
    if ((tail < 64 && rows[n_words - 1] >> tail) || fr > 1 || (fr && taken != (size_t)g->look_h) ||
        take_len != head + taken * sizeof(int32_t) * (size_t)g->look_w)
        return POLIS_ERR_INVALID;
    bool fresh = fr != 0;
    if (fresh != g->h->scene_fresh(ctx, sc) ||
        (fresh && (sc->width != g->look_w || sc->height != g->look_h)))
        return POLIS_ERR_STATE;
    polis_status st = show_layers(ctx, sc, g, fresh, rows, p + head, true);
    if (st) return st;
    p += sizeof(uint64_t) * (size_t)n_words + sizeof fr;
    for (int32_t a = 0; a < g->look_n; a++, p += TAKE_AGENT) {
        int32_t f[4];
        memcpy(f, p, sizeof f);
        show_agent(sc, g, a, f[0], f[1], f[2], f[3]);
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
    g->look_w = g->core.width;
    g->look_h = g->core.height;
    g->look_n = g->core.n_agents;
    /* the rows of coins the scene redraws (layer_same, layer_rows: the "scene" API 3) */
    if (!(g->scene = h->host_api(g->ctx, POLIS_SCENE_API, 3))) return POLIS_ERR_PLUGIN;
    size_t n_words = (size_t)((g->core.height + 63) / 64);
    g->core.coin_rows = h->alloc(g->ctx, sizeof(uint64_t) * GATHER_ROW_WORDS(g->core.height));
    if (!g->core.coin_rows) return POLIS_ERR_NOMEM;
    memset(g->core.coin_rows, 0, sizeof(uint64_t) * GATHER_ROW_WORDS(g->core.height));
    g->scene_rows = g->core.coin_rows + n_words;
    g->take_rows = g->scene_rows + n_words;
    /* write_scene writes every agent, its coins and, when fresh, every cell of both layers:
     * the kernel need not clear them first (API 4) */
    if (g->scene->version >= 4 &&
        (st = g->scene->scene_whole(g->ctx, POLIS_SCENE_WHOLE_AGENTS | POLIS_SCENE_WHOLE_STATS |
                                                POLIS_SCENE_WHOLE_FRESH_LAYERS)))
        return st;
    /* the recorder may draw the scene from copies, off the stepping thread (API 5) */
    if (g->scene->version >= 5) {
        size_t cells = (size_t)g->look_w * (size_t)g->look_h;
        polis_scene_copy_def copy = {.take = take_coins,
                                     .draw = draw_coins,
                                     .ud = g,
                                     .max_take = take_head(g) + sizeof(int32_t) * cells,
                                     .state_bytes = sizeof(uint64_t) * n_words};
        if ((st = g->scene->scene_copy(g->ctx, &copy))) return st;
    }
    return POLIS_OK;
}
