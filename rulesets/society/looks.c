/*
 * looks.c — how the society world looks (plugin ABI 1.5): the ground (floor and blocks), a
 * layer of recipe stations, resource piles as things labelled with their amounts, and each
 * agent's position and inventory. An agent's view is its field of view: the largest fov among
 * the players' jobs (h, v), the window the "window" observation has and the part of the "map"
 * observation the agent sees itself (shared views aside). Recordings, replays, the viewer and
 * the RGB renderer draw from it.
 *
 * The piles are a kept list ("scene" host API, version 2), a slot per resource per cell (the
 * pile's thing id): a fresh scene compares the piles with those it shows, a block of cells at
 * a time, a later one only the cells soc_pile_add marked since, and either puts or clears only
 * the slots whose amount changed.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Piles in a scene at most (a thing per resource per cell); beyond it the scene fails with
 * POLIS_ERR_LIMIT rather than dropping piles. */
#define SOC_SCENE_PILES_MAX (1 << 18)
/* Piles (cells x resources) at most for them to be a kept list (its slots' limit). */
#define SOC_KEPT_PILES_MAX (1 << 24)

/* A colour per index from a fixed table of distinct hues (light for resources, dark for
 * stations); more than twelve repeat. */
static void palette(int32_t i, bool dark, char out[8])
{
    static const char *const light[12] = {"#e6b333", "#3cb44b", "#4363d8", "#f58231",
                                          "#911eb4", "#42d4f4", "#f032e6", "#bfef45",
                                          "#fabed4", "#469990", "#dcbeff", "#9a6324"};
    static const char *const deep[12] = {"#7a5c0a", "#1d5e26", "#1f3273", "#8a4210",
                                         "#4b0f5e", "#177a8c", "#7a1474", "#5f7a14",
                                         "#8c4a5e", "#1f4a45", "#5e4a8c", "#4a2f05"};
    snprintf(out, 8, "%s", (dark ? deep : light)[i % 12]);
}

/* Slots compared with one memcmp before any is looked at (most of a tick's piles are as
 * shown). */
#define SOC_PILE_BLOCK 1024

/* A pile's label: its amount n > 0, without printf, in label[16]; returns its start. */
static const char *amount(char label[16], int32_t n)
{
    char *e = label + 15;
    *e = '\0';
    for (int32_t v = n; v; v /= 10) *--e = (char)('0' + v % 10);
    return e;
}

/* The kept pile slots k0 .. k1 - 1 whose amount differs from what they show put or cleared. */
static polis_status put_piles(polis_ctx *ctx, soc *s, polis_scene *sc, int32_t k0, int32_t k1)
{
    const int32_t R = s->R, W = s->W, *piles = s->piles;
    int32_t *shown = s->shown_piles;
    for (int32_t k = k0; k < k1; k++) {
        int32_t n = piles[k];
        if (n == shown[k]) continue;
        polis_status st = POLIS_OK;
        if (n > 0) {
            char label[16];
            int32_t c = k / R;
            st = s->scene_api->thing_put(ctx, sc, k, k, s->kind_res0 + k % R, c % W, c / W,
                                         amount(label, n));
        } else if (shown[k] > 0) {
            st = s->scene_api->slot_clear(ctx, sc, POLIS_SCENE_THINGS, k);
        }
        if (st) return st;
        shown[k] = n;
    }
    return POLIS_OK;
}

static polis_status soc_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    soc *s = ud;
    const polis_host *h = s->h;
    size_t plane = (size_t)sc->width * (size_t)sc->height;
    int32_t *restrict ground = sc->tiles + (size_t)s->look_ground * plane;
    int32_t *restrict stations = sc->tiles + (size_t)s->look_stations * plane;
    /* both layers are kept: rewritten (in loops without a branch) only when the blocks or
     * recipes differ from those they show, else said to be the same, so that the recorder does
     * not compare them either (a recording reads the scene every tick) */
    const int32_t *restrict blocks = soc_layer(s, s->L_blocks, 0);
    const int32_t *restrict recipes = soc_layer(s, s->L_recipes, 0);
    const int32_t kind_block = s->kind_block, kind_floor = s->kind_floor,
                  station0 = s->kind_station0 - 1, cells = s->cells;
    const uint16_t *kinds = s->kinds;
    size_t bytes = (size_t)cells * sizeof *blocks;
    bool fresh = h->scene_fresh(ctx, sc);
    polis_status st;
    if (fresh || memcmp(s->shown_blocks, blocks, bytes) != 0) {
        for (int32_t c = 0; c < cells; c++) ground[c] = blocks[c] ? kind_block : kind_floor;
        memcpy(s->shown_blocks, blocks, bytes);
    } else if ((st = s->scene_api->layer_same(ctx, sc, s->look_ground))) {
        return st;
    }
    if (fresh || memcmp(s->shown_recipes, recipes, bytes) != 0) {
        for (int32_t c = 0; c < cells; c++)
            stations[c] = recipes[c] > 0 ? station0 + recipes[c] : -1;
        memcpy(s->shown_recipes, recipes, bytes);
    } else if ((st = s->scene_api->layer_same(ctx, sc, s->look_stations))) {
        return st;
    }
    const int32_t R = s->R, W = s->W, kind_res0 = s->kind_res0;
    const int32_t *piles = s->piles;
    if (s->shown_piles) { /* kept */
        int32_t *shown = s->shown_piles, n_slots = cells * R;
        if (fresh) { /* every slot emptied: all compared, a block at a time */
            memset(shown, 0, (size_t)n_slots * sizeof *shown);
            for (int32_t k0 = 0; k0 < n_slots; k0 += SOC_PILE_BLOCK) {
                int32_t k1 = k0 + SOC_PILE_BLOCK < n_slots ? k0 + SOC_PILE_BLOCK : n_slots;
                if (memcmp(piles + k0, shown + k0, (size_t)(k1 - k0) * sizeof *piles) == 0)
                    continue;
                if ((st = put_piles(ctx, s, sc, k0, k1))) return st;
            }
        } else { /* only the cells soc_pile_add marked */
            for (int32_t i = 0; i < s->scene_np; i++) {
                int32_t k0 = s->scene_plist[i] * R;
                if ((st = put_piles(ctx, s, sc, k0, k0 + R))) return st;
            }
        }
        for (int32_t i = 0; i < s->scene_np; i++) s->scene_pmark[s->scene_plist[i]] = 0;
        s->scene_np = 0;
        goto agents;
    }
    for (int32_t c = 0; c < cells; c++) {
        if (!kinds[c]) continue;
        const int32_t *pile = piles + (size_t)c * (size_t)R;
        for (int32_t r = 0; r < R; r++) {
            int32_t n = pile[r];
            if (n <= 0) continue;
            char label[16];
            if ((st = h->scene_thing(ctx, sc, c * R + r, kind_res0 + r, c % W, c / W,
                                     amount(label, n))))
                return st;
        }
    }
agents:
    for (int32_t a = 0; a < s->n_agents; a++) {
        sc->agents[a].x = s->ax[a];
        sc->agents[a].y = s->ay[a];
        int32_t *row = sc->stats + (size_t)a * (size_t)sc->n_stats + (size_t)s->stat_res0;
        for (int32_t r = 0; r < s->R; r++) row[r] = s->inv[(size_t)a * (size_t)s->R + (size_t)r];
    }
    return POLIS_OK;
}

polis_status soc_register_looks(soc *s)
{
    const polis_host *h = s->h;
    polis_ctx *ctx = s->ctx;
    polis_status st;
    polis_kind_def floor = {"floor", ".", "#d9cfb8", POLIS_SHAPE_SQUARE};
    polis_kind_def block = {"block", "#", "#4a4a4a", POLIS_SHAPE_SQUARE};
    if ((st = h->look_kind(ctx, &floor, &s->kind_floor)) ||
        (st = h->look_kind(ctx, &block, &s->kind_block)))
        return st;
    char name[160], glyph[2] = {0, 0}, color[8];
    for (int32_t r = 0; r < s->R; r++) {
        snprintf(name, sizeof name, "res_%s", s->res[r].name);
        glyph[0] = s->res[r].name[0];
        palette(r, false, color);
        polis_kind_def k = {name, glyph, color, POLIS_SHAPE_CIRCLE};
        int32_t id;
        if ((st = h->look_kind(ctx, &k, &id))) return st;
        if (r == 0) s->kind_res0 = id;
    }
    for (int32_t k = 0; k < s->K; k++) {
        snprintf(name, sizeof name, "station_%s", s->rec[k].name);
        char c = s->rec[k].name[0];
        glyph[0] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
        palette(k, true, color);
        polis_kind_def d = {name, glyph, color, POLIS_SHAPE_DIAMOND};
        int32_t id;
        if ((st = h->look_kind(ctx, &d, &id))) return st;
        if (k == 0) s->kind_station0 = id;
    }
    if ((st = h->look_layer(ctx, "ground", &s->look_ground)) ||
        (st = h->look_layer(ctx, "stations", &s->look_stations)) ||
        (st = h->look_view(ctx, s->hmax, s->vmax)) ||
        (st = h->look_keep_layer(ctx, s->look_ground)) ||
        (st = h->look_keep_layer(ctx, s->look_stations)))
        return st;
    if (!(s->scene_api = h->host_api(ctx, POLIS_SCENE_API, 2))) return POLIS_ERR_PLUGIN;
    s->shown_blocks = soc_alloc(s, (size_t)s->cells * sizeof *s->shown_blocks);
    s->shown_recipes = soc_alloc(s, (size_t)s->cells * sizeof *s->shown_recipes);
    if (!s->shown_blocks || !s->shown_recipes) return POLIS_ERR_NOMEM;
    for (int32_t r = 0; r < s->R; r++) {
        int32_t max = 0;
        for (int32_t j = 0; j < s->J; j++) {
            int32_t c = s->cap[(size_t)j * (size_t)s->R + (size_t)r];
            if (c == SOC_UNLIMITED) {
                max = 0;
                break;
            }
            if (c > max) max = c;
        }
        int32_t id;
        if ((st = h->look_stat(ctx, s->res[r].name, "inventory", max, &id))) return st;
        if (r == 0) s->stat_res0 = id;
    }
    int64_t piles = (int64_t)s->cells * s->R;
    polis_scene_def def = {
        .fn = soc_scene,
        .ud = s,
        .max_things = (int32_t)(piles < SOC_SCENE_PILES_MAX ? piles : SOC_SCENE_PILES_MAX)};
    if ((st = h->look_scene(ctx, &def))) return st;
    if (piles < 1 || piles > SOC_KEPT_PILES_MAX) return POLIS_OK; /* appended at every scene */
    if ((st = s->scene_api->list_keep(ctx, POLIS_SCENE_THINGS, (int32_t)piles))) return st;
    s->shown_piles = soc_alloc(s, (size_t)piles * sizeof *s->shown_piles);
    s->scene_pmark = soc_alloc(s, (size_t)s->cells * sizeof *s->scene_pmark);
    s->scene_plist = soc_alloc(s, (size_t)s->cells * sizeof *s->scene_plist);
    return s->shown_piles && s->scene_pmark && s->scene_plist ? POLIS_OK : POLIS_ERR_NOMEM;
}
