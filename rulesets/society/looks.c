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
 *
 * With kept piles the scene can also be drawn from copies ("scene" host API version 5,
 * scene_copy): soc_take, on the env's thread after each reset and step, copies every agent,
 * the blocks and recipes when they differ from those it sent last (its own copies, take_blocks
 * and take_recipes) and the piles of the cells marked since the last take (all when fresh);
 * soc_draw, on the reader's thread, makes soc_scene's calls from it against its own shown
 * piles (draw's state), reading of the soc only what registration set. The rules mark only
 * pile_marks; whichever of soc_scene and soc_take reads them clears them and leaves them for
 * the other in its own list (scene_own, take_own; read_marks), so neither takes the other's
 * changes and the step pays nothing for the second reader. Both paths share the layers
 * (show_layers), the piles (put_piles, put_all_piles) and an agent (show_agent).
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

/* The kept pile slots k0 .. k1 - 1 whose amount (n[k - k0]) differs from what they show
 * (shown[k - k0]) put or cleared, and shown updated. n: the game's piles (soc_scene) or a take's
 * (soc_draw); shown: soc_scene's or soc_draw's. Reads of s only what registration set. */
static polis_status put_piles(polis_ctx *ctx, const soc *s, polis_scene *sc, const int32_t *n,
                              int32_t *shown, int32_t k0, int32_t k1)
{
    const int32_t R = s->R, W = s->W;
    for (int32_t k = k0; k < k1; k++, n++, shown++) {
        if (*n == *shown) continue;
        polis_status st = POLIS_OK;
        if (*n > 0) {
            char label[16];
            int32_t c = k / R;
            st = s->scene_api->thing_put(ctx, sc, k, k, s->kind_res0 + k % R, c % W, c / W,
                                         amount(label, *n));
        } else if (*shown > 0) {
            st = s->scene_api->slot_clear(ctx, sc, POLIS_SCENE_THINGS, k);
        }
        if (st) return st;
        *shown = *n;
    }
    return POLIS_OK;
}

/* Every pile slot (a fresh scene: the kernel emptied them, shown all 0) compared with
 * piles[0 .. cells * R), a block at a time, and put where it differs. */
static polis_status put_all_piles(polis_ctx *ctx, const soc *s, polis_scene *sc,
                                  const int32_t *piles, int32_t *shown)
{
    int32_t n_slots = s->cells * s->R;
    polis_status st;
    for (int32_t k0 = 0; k0 < n_slots; k0 += SOC_PILE_BLOCK) {
        int32_t k1 = k0 + SOC_PILE_BLOCK < n_slots ? k0 + SOC_PILE_BLOCK : n_slots;
        if (memcmp(piles + k0, shown + k0, (size_t)(k1 - k0) * sizeof *piles) == 0) continue;
        if ((st = put_piles(ctx, s, sc, piles + k0, shown + k0, k0, k1))) return st;
    }
    return POLIS_OK;
}

/* The cells whose piles changed since the reader `mine` last read them: the rules' marks added
 * to mine's list (what the other reader left there) and to other's, deduplicated by their mark
 * arrays, and cleared. The caller reads mine's list and then clears it (clear_marks). */
static inline void read_marks(soc_marks *rules, soc_marks *mine, soc_marks *other)
{
    for (int32_t i = 0; i < rules->n; i++) {
        int32_t c = rules->list[i];
        rules->mark[c] = 0;
        if (!mine->mark[c]) {
            mine->mark[c] = 1;
            mine->list[mine->n++] = c;
        }
        if (!other->mark[c]) {
            other->mark[c] = 1;
            other->list[other->n++] = c;
        }
    }
    rules->n = 0;
}

static inline void clear_marks(soc_marks *m)
{
    for (int32_t i = 0; i < m->n; i++) m->mark[m->list[i]] = 0;
    m->n = 0;
}

/* The ground and station layers of a scene: each rewritten from blocks / recipes ([cells]; a
 * fresh scene's, or one whose blocks or recipes changed), or said the same (NULL). */
static inline __attribute__((always_inline)) polis_status
show_layers(polis_ctx *ctx, const soc *s, polis_scene *sc, const int32_t *restrict blocks,
            const int32_t *restrict recipes)
{
    size_t plane = (size_t)sc->width * (size_t)sc->height;
    int32_t *restrict ground = sc->tiles + (size_t)s->look_ground * plane;
    int32_t *restrict stations = sc->tiles + (size_t)s->look_stations * plane;
    const int32_t kind_block = s->kind_block, kind_floor = s->kind_floor,
                  station0 = s->kind_station0 - 1, cells = s->cells;
    polis_status st;
    /* in loops without a branch */
    if (blocks)
        for (int32_t c = 0; c < cells; c++) ground[c] = blocks[c] ? kind_block : kind_floor;
    else if ((st = s->scene_api->layer_same(ctx, sc, s->look_ground)))
        return st;
    if (recipes)
        for (int32_t c = 0; c < cells; c++)
            stations[c] = recipes[c] > 0 ? station0 + recipes[c] : -1;
    else if ((st = s->scene_api->layer_same(ctx, sc, s->look_stations)))
        return st;
    return POLIS_OK;
}

/* Layer l ([cells]) when it differs from *shown (or fresh), which then holds it; else NULL. */
static const int32_t *changed(const soc *s, const int32_t *l, int32_t *shown, bool fresh)
{
    size_t bytes = (size_t)s->cells * sizeof *l;
    if (!fresh && memcmp(shown, l, bytes) == 0) return NULL;
    memcpy(shown, l, bytes);
    return l;
}

/* Agent a's place and inventory (inv[0 .. R)) in the scene. */
static inline void show_agent(polis_scene *sc, const soc *s, int32_t a, int32_t x, int32_t y,
                              const int32_t *inv)
{
    sc->agents[a].x = x;
    sc->agents[a].y = y;
    int32_t *row = sc->stats + (size_t)a * (size_t)sc->n_stats + (size_t)s->stat_res0;
    memcpy(row, inv, (size_t)s->R * sizeof *row);
}

static polis_status soc_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    soc *s = ud;
    const polis_host *h = s->h;
    /* both layers are kept: rewritten only when the blocks or recipes differ from those they
     * show, else said to be the same, so that the recorder does not compare them either (a
     * recording reads the scene every tick) */
    bool fresh = h->scene_fresh(ctx, sc);
    polis_status st =
        show_layers(ctx, s, sc, changed(s, soc_layer(s, s->L_blocks, 0), s->shown_blocks, fresh),
                    changed(s, soc_layer(s, s->L_recipes, 0), s->shown_recipes, fresh));
    if (st) return st;
    const int32_t R = s->R, W = s->W, kind_res0 = s->kind_res0, cells = s->cells;
    const int32_t *piles = s->piles;
    if (s->shown_piles) { /* kept */
        int32_t *shown = s->shown_piles;
        /* the cells marked since the last scene, the marks cleared even on failure: a scene
         * that fails is followed by a fresh one */
        read_marks(&s->pile_marks, &s->scene_own, &s->take_own);
        if (fresh) { /* every slot emptied: all compared */
            memset(shown, 0, (size_t)cells * (size_t)R * sizeof *shown);
            st = put_all_piles(ctx, s, sc, piles, shown);
        } else {
            for (int32_t i = 0; i < s->scene_own.n && !st; i++) {
                int32_t k0 = s->scene_own.list[i] * R;
                st = put_piles(ctx, s, sc, piles + k0, shown + k0, k0, k0 + R);
            }
        }
        clear_marks(&s->scene_own);
        if (st) return st;
        goto agents;
    }
    const uint16_t *kinds = s->kinds;
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
    for (int32_t a = 0; a < s->n_agents; a++)
        show_agent(sc, s, a, s->ax[a], s->ay[a], s->inv + (size_t)a * (size_t)R);
    return POLIS_OK;
}

/* ---- the scene drawn from copies ("scene" host API version 5) ------------------------------
 *
 * A take (int32 words): a head (flags, pile records), every agent's x, y and R inventory
 * amounts, the blocks [cells] when SOC_TAKE_BLOCKS, the recipes [cells] when SOC_TAKE_RECIPES,
 * then the piles: fresh, every cell's R amounts (records == cells); else per record a marked
 * cell's index and its R amounts. */
enum { SOC_TAKE_FRESH = 1, SOC_TAKE_BLOCKS = 2, SOC_TAKE_RECIPES = 4, SOC_TAKE_FLAGS = 7 };

typedef struct soc_take_head {
    uint32_t flags;
    int32_t records;
} soc_take_head;

static size_t take_max(const soc *s)
{
    size_t cells = (size_t)s->cells, R = (size_t)s->R;
    return sizeof(soc_take_head) +
           sizeof(int32_t) * ((size_t)s->n_agents * (2 + R) + 2 * cells + cells * (1 + R));
}

/* On the env's thread: the piles the rules marked since the last take (and those soc_scene
 * left it), the blocks and recipes when they changed, every agent. */
static polis_status soc_take(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len)
{
    (void)ctx;
    soc *s = ud;
    const int32_t R = s->R, cells = s->cells;
    int32_t *const head = buf, *p = head + sizeof(soc_take_head) / sizeof(int32_t);
    for (int32_t a = 0; a < s->n_agents; a++, p += 2 + R) {
        p[0] = s->ax[a];
        p[1] = s->ay[a];
        memcpy(p + 2, s->inv + (size_t)a * (size_t)R, (size_t)R * sizeof *p);
    }
    uint32_t flags = fresh ? SOC_TAKE_FRESH : 0;
    size_t bytes = (size_t)cells * sizeof *p;
    if (changed(s, soc_layer(s, s->L_blocks, 0), s->take_blocks, fresh)) {
        memcpy(p, s->take_blocks, bytes);
        p += cells;
        flags |= SOC_TAKE_BLOCKS;
    }
    if (changed(s, soc_layer(s, s->L_recipes, 0), s->take_recipes, fresh)) {
        memcpy(p, s->take_recipes, bytes);
        p += cells;
        flags |= SOC_TAKE_RECIPES;
    }
    read_marks(&s->pile_marks, &s->take_own, &s->scene_own);
    int32_t records = fresh ? cells : s->take_own.n;
    if (fresh) {
        memcpy(p, s->piles, bytes * (size_t)R);
        p += (size_t)cells * (size_t)R;
    } else {
        for (int32_t i = 0; i < records; i++, p += 1 + R) {
            int32_t c = s->take_own.list[i];
            p[0] = c;
            memcpy(p + 1, s->piles + (size_t)c * (size_t)R, (size_t)R * sizeof *p);
        }
    }
    clear_marks(&s->take_own);
    memcpy(head, &flags, sizeof flags);
    head[1] = records;
    *len = (size_t)((uint8_t *)p - (uint8_t *)buf);
    return POLIS_OK;
}

/* On the reader's thread: soc_scene's calls and writes from a take, against its own shown
 * piles (state, [cells][R]). */
static polis_status soc_draw(polis_ctx *ctx, void *ud, void *state, const void *take,
                             size_t take_len, polis_scene *sc)
{
    const soc *s = ud;
    const polis_host *h = s->h;
    const int32_t R = s->R, cells = s->cells;
    soc_take_head hd;
    if (take_len < sizeof hd) {
        h->error(ctx, "scene copy: a take of %zu bytes, shorter than its head", take_len);
        return POLIS_ERR_INVALID;
    }
    memcpy(&hd, take, sizeof hd);
    bool fresh = hd.flags & SOC_TAKE_FRESH;
    if (hd.flags > SOC_TAKE_FLAGS ||
        (fresh && (hd.flags != SOC_TAKE_FLAGS || hd.records != cells))) {
        h->error(ctx, "scene copy: a take's flags %#x and %d pile records do not agree",
                 (unsigned)hd.flags, (int)hd.records);
        return POLIS_ERR_INVALID;
    }
    if (hd.records < 0 || hd.records > cells) {
        h->error(ctx, "scene copy: a take of %d pile records, the map has %d cells",
                 (int)hd.records, (int)cells);
        return POLIS_ERR_INVALID;
    }
    size_t words =
        (size_t)s->n_agents * (size_t)(2 + R) +
        (size_t)cells * (size_t)(!!(hd.flags & SOC_TAKE_BLOCKS) + !!(hd.flags & SOC_TAKE_RECIPES)) +
        (size_t)hd.records * (size_t)(R + !fresh);
    if (take_len != sizeof hd + words * sizeof(int32_t)) {
        h->error(ctx, "scene copy: a take of %zu bytes, its head says %zu", take_len,
                 sizeof hd + words * sizeof(int32_t));
        return POLIS_ERR_INVALID;
    }
    const int32_t *agents = (const int32_t *)take + sizeof hd / sizeof(int32_t);
    const int32_t *p = agents + (size_t)s->n_agents * (size_t)(2 + R);
    const int32_t *blocks = NULL, *recipes = NULL;
    if (hd.flags & SOC_TAKE_BLOCKS) blocks = p, p += cells;
    if (hd.flags & SOC_TAKE_RECIPES) recipes = p, p += cells;
    if (!fresh)
        for (int32_t i = 0; i < hd.records; i++)
            if ((uint32_t)p[(size_t)i * (size_t)(1 + R)] >= (uint32_t)cells) {
                h->error(ctx, "scene copy: a take's pile record %d names cell %d of %d", (int)i,
                         (int)p[(size_t)i * (size_t)(1 + R)], (int)cells);
                return POLIS_ERR_INVALID;
            }
    if (fresh != h->scene_fresh(ctx, sc)) {
        h->error(ctx, "scene copy: a %s take for a scene that is %s", fresh ? "fresh" : "later",
                 fresh ? "not fresh" : "fresh");
        return POLIS_ERR_STATE;
    }
    polis_status st = show_layers(ctx, s, sc, blocks, recipes);
    if (st) return st;
    int32_t *shown = state; /* zeroed by the kernel before a fresh take's draw */
    if (fresh) {
        if ((st = put_all_piles(ctx, s, sc, p, shown))) return st;
    } else {
        for (int32_t i = 0; i < hd.records; i++, p += 1 + R) {
            int32_t k0 = p[0] * R;
            if ((st = put_piles(ctx, s, sc, p + 1, shown + k0, k0, k0 + R))) return st;
        }
    }
    for (int32_t a = 0; a < s->n_agents; a++, agents += 2 + R)
        show_agent(sc, s, a, agents[0], agents[1], agents + 2);
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
    if (!s->shown_piles) return POLIS_ERR_NOMEM;
    soc_marks *m[3] = {&s->pile_marks, &s->scene_own, &s->take_own};
    for (int32_t i = 0; i < 3; i++) {
        m[i]->mark = soc_alloc(s, (size_t)s->cells * sizeof *m[i]->mark);
        m[i]->list = soc_alloc(s, (size_t)s->cells * sizeof *m[i]->list);
        if (!m[i]->mark || !m[i]->list) return POLIS_ERR_NOMEM; /* zeroed */
    }
    /* the recorder may draw the scene from copies, off the stepping thread (API 5) */
    if (s->scene_api->version < 5 || take_max(s) > ((size_t)1 << 30)) return POLIS_OK;
    s->take_blocks = soc_alloc(s, (size_t)s->cells * sizeof *s->take_blocks);
    s->take_recipes = soc_alloc(s, (size_t)s->cells * sizeof *s->take_recipes);
    if (!s->take_blocks || !s->take_recipes) return POLIS_ERR_NOMEM;
    polis_scene_copy_def copy = {.take = soc_take,
                                 .draw = soc_draw,
                                 .ud = s,
                                 .max_take = take_max(s),
                                 .state_bytes = (size_t)piles * sizeof(int32_t)};
    return s->scene_api->scene_copy(ctx, &copy);
}
