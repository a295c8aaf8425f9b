/*
 * looks.c — how Survival looks (plugin ABI 1.5): the terrain (every block but "invalid" and
 * "out_of_bounds") as one tile layer, zombies, cows, skeletons and arrows as things, and per
 * player its position, facing, whether it lives, its vitals (health, food, drink, energy),
 * whether it sleeps, the daylight it sees (0..100) and its inventory. An agent's view is the
 * game's 9x7 window.
 *
 * The terrain layer is kept between scenes (ABI 1.6): a scene translates only the map rows
 * the rules wrote since the previous one (sv_set_block notes them in w->map_rows), instead of
 * all 4096 cells every time; a scene that drew no row says so (the "scene" host API's
 * layer_same), so the recorder does not compare the layer either, and a scene that drew rows
 * names them (layer_rows, host API version 3): the recorder compares only those. The mobs are
 * a kept list (host API version 2): a slot per mob slot, put only when the mob there appeared
 * or was replaced, moved (thing_move) when it moved, cleared when it is gone, against a copy of
 * what each slot shows; a scene looks only at the mob slots the rules marked since the last one
 * (sv_mark_mob, w->mob_marks), all of them when fresh. The scene writes every player's place,
 * facing, life and stats, and every terrain cell when fresh, and says so (scene_whole, host API
 * version 4): the kernel does not clear them first.
 *
 * The scene can also be drawn from copies (host API version 5, scene_copy): sv_take, on the
 * env's thread after each reset and step, copies the map rows and mob slots the rules marked
 * since the last take, every player's shown fields and the daylight. The rules mark only
 * map_rows and mob_marks; whichever of sv_scene and sv_take reads them clears them and leaves
 * them for the other in its own words (w->scene_rows, w->take_rows, ...; read_marks), so the
 * env's own scenes and the copies never take each other's changes and the step pays nothing
 * for the second reader. sv_draw, on the reader's thread, makes sv_scene's calls from a take
 * against a copy of the map and of what each slot shows of its own (sv_drawn, draw's state),
 * reading of sv_looks only what registration set. Both paths share the rows (show_rows), a mob
 * slot (show_mob) and a player's row (show_player).
 *
 * A mob's thing id is its uid: numbered from 1 in the order mobs appear in the episode (every
 * kind, arrows too), kept while the mob lives and never reused, so a new zombie in a dead
 * one's slot is a new thing (an add and a del in a recording, not a move).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

extern const char *const sv_block_names[SV_N_BLOCKS];
extern const char *const sv_item_names[SV_N_ITEMS];

static const struct {
    const char *glyph, *color;
    polis_shape shape;
} BLOCK_LOOK[SV_N_BLOCKS] = {
    [SV_GRASS] = {".", "#5a9e3a", POLIS_SHAPE_SQUARE},
    [SV_WATER] = {"~", "#3a6ec8", POLIS_SHAPE_SQUARE},
    [SV_STONE] = {"s", "#8a8a8a", POLIS_SHAPE_SQUARE},
    [SV_TREE] = {"T", "#1f5a1f", POLIS_SHAPE_TRIANGLE},
    [SV_WOOD] = {"w", "#8b5a2b", POLIS_SHAPE_SQUARE},
    [SV_PATH] = {"_", "#c8b48c", POLIS_SHAPE_SQUARE},
    [SV_COAL] = {"c", "#2a2a2a", POLIS_SHAPE_DIAMOND},
    [SV_IRON] = {"i", "#b7805a", POLIS_SHAPE_DIAMOND},
    [SV_DIAMOND] = {"d", "#6fe3e6", POLIS_SHAPE_DIAMOND},
    [SV_TABLE] = {"t", "#a0703a", POLIS_SHAPE_SQUARE},
    [SV_FURNACE] = {"f", "#5a3a3a", POLIS_SHAPE_SQUARE},
    [SV_SAND] = {":", "#e8d9a0", POLIS_SHAPE_SQUARE},
    [SV_LAVA] = {"^", "#e0501e", POLIS_SHAPE_SQUARE},
    [SV_PLANT] = {"p", "#7ac74f", POLIS_SHAPE_DOT},
    [SV_RIPE_PLANT] = {"P", "#d94f70", POLIS_SHAPE_CIRCLE},
};

static const struct {
    const char *name, *glyph, *color;
    polis_shape shape;
} MOB_LOOK[SV_N_MOB_KINDS] = {
    [SV_ZOMBIE] = {"zombie", "Z", "#2e8b57", POLIS_SHAPE_CIRCLE},
    [SV_COW] = {"cow", "C", "#f5f5f5", POLIS_SHAPE_CIRCLE},
    [SV_SKELETON] = {"skeleton", "K", "#d8d8c0", POLIS_SHAPE_CIRCLE},
    [SV_ARROW] = {"arrow", "*", "#ffffff", POLIS_SHAPE_CROSS},
};

enum { ST_HEALTH = 0, ST_FOOD, ST_DRINK, ST_ENERGY, ST_SLEEPING, ST_DAYLIGHT, ST_ITEMS };

/* what a mob slot shows: its mob's uid (0: nothing) and place */
typedef struct sv_shown {
    int32_t uid, r, c;
} sv_shown;

/* kind ids of blocks and mobs, the terrain layer and the first stat; the mob slots' first
 * scene slot per kind and what each shows */
typedef struct sv_looks {
    int32_t block_kind[SV_N_BLOCKS];
    int32_t mob_kind[SV_N_MOB_KINDS];
    int32_t layer, stat0;
    /* block_kind[b] == b + kind_off for every block from SV_GRASS on (-1 below), as the kinds
     * are registered; INT32_MIN when not (then the table is read) */
    int32_t kind_off;
    int32_t slot0[SV_N_MOB_KINDS], slots;
    uint64_t all_slots[SV_N_MOB_KINDS]; /* a bit per mob slot of each kind (mob_marks) */
    const polis_scene_api *api; /* layer_same, layer_rows, the kept things ("scene" API 3) */
    const polis_host *h;        /* scene_fresh, for sv_draw */
    int32_t n;                  /* players */
    sv_world *w;                /* the game: sv_take's, never sv_draw's */
    sv_shown shown[SV_N_MOB_KINDS * SV_MAX_MOBS]; /* sv_scene's (sv_draw's are in sv_drawn) */
    /* draw_rows or, where the CPU has it, its AVX2 build (a fresh scene's 4096 cells) */
    void (*draw)(int32_t *t, const uint8_t (*map)[SV_MAP], uint64_t rows, int32_t off,
                 const int32_t *block_kind);
} sv_looks;

/* The map rows in `rows` translated into the terrain layer t: block b is kind b + off when
 * every block of the row has a kind that way (off != INT32_MIN), else block_kind[b]. */
static inline __attribute__((always_inline)) void draw_rows_body(int32_t *t,
                                                                 const uint8_t (*map)[SV_MAP],
                                                                 uint64_t rows, int32_t off,
                                                                 const int32_t *block_kind)
{
    for (; rows; rows &= rows - 1) {
        int32_t r = __builtin_ctzll(rows);
        int32_t *row = t + r * SV_MAP;
        const uint8_t *m = map[r];
        uint8_t low = UINT8_MAX; /* vectorised, as the sum: an episode start's 4096 cells */
        for (int32_t c = 0; c < SV_MAP; c++) low = m[c] < low ? m[c] : low;
        if (off != INT32_MIN && low >= SV_GRASS)
            for (int32_t c = 0; c < SV_MAP; c++) row[c] = m[c] + off;
        else
            for (int32_t c = 0; c < SV_MAP; c++) row[c] = block_kind[m[c]];
    }
}

static void draw_rows(int32_t *t, const uint8_t (*map)[SV_MAP], uint64_t rows, int32_t off,
                      const int32_t *block_kind)
{
    draw_rows_body(t, map, rows, off, block_kind);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* the same, eight cells a vector (integers: the same kinds) */
__attribute__((target("avx2"))) static void draw_rows_avx2(int32_t *t, const uint8_t (*map)[SV_MAP],
                                                           uint64_t rows, int32_t off,
                                                           const int32_t *block_kind)
{
    draw_rows_body(t, map, rows, off, block_kind);
}
#define SV_DRAW_AVX2 1
#endif

/* The marks of one word (map rows, a kind's mob slots) since `mine` (the scene's or the take's)
 * last read them: the rules' (*rules) and what the other reader left in *mine, both cleared;
 * the rules' are left for the other one in *other. The rules mark only *rules: the step pays
 * nothing for the second reader. */
static inline uint64_t read_marks(uint64_t *rules, uint64_t *mine, uint64_t *other)
{
    uint64_t m = *rules;
    *other |= m;
    *rules = 0;
    m |= *mine;
    *mine = 0;
    return m;
}

/* The terrain layer of a scene: the same when no row changed, else the rows changed (all when
 * fresh) translated from map (sv_scene: the game's; sv_draw: its copy) and named. */
static inline __attribute__((always_inline)) polis_status show_rows(polis_ctx *ctx, polis_scene *sc,
                                                                    const sv_looks *lk, bool all,
                                                                    uint64_t rows,
                                                                    const uint8_t (*map)[SV_MAP])
{
    int32_t *t = sc->tiles + (size_t)lk->layer * (size_t)sc->width * (size_t)sc->height;
    polis_status st;
    /* then the recorder need not compare the layer with its copy either, or only those rows */
    if (!rows && (st = lk->api->layer_same(ctx, sc, lk->layer))) return st;
    if (rows && !all && (st = lk->api->layer_rows(ctx, sc, lk->layer, &rows, 1))) return st;
    if (rows) lk->draw(t, map, rows, lk->kind_off, lk->block_kind);
    return POLIS_OK;
}

/* A mob slot the rules marked (its mob moved, appeared, was replaced or is gone, or left the
 * map) into the scene's slot when it shows something else, and what the slot shows now. The
 * slot's mob is `on` (active and in the map) with uid at (r, c), or not. */
static inline polis_status show_mob(polis_ctx *ctx, polis_scene *sc, const sv_looks *lk,
                                    sv_shown *sh, int32_t kind, int32_t slot, bool on, int32_t uid,
                                    int32_t r, int32_t c)
{
    if (on ? uid == sh->uid && r == sh->r && c == sh->c : !sh->uid) return POLIS_OK;
    polis_status st;
    if (on && uid == sh->uid) /* the mob there moved (most marks) */
        st = lk->api->thing_move(ctx, sc, slot, c, r);
    else if (on)
        st = lk->api->thing_put(ctx, sc, slot, uid, lk->mob_kind[kind], c, r, "");
    else
        st = lk->api->slot_clear(ctx, sc, POLIS_SCENE_THINGS, slot);
    if (st) return st;
    *sh = on ? (sv_shown){uid, r, c} : (sv_shown){0, 0, 0};
    return POLIS_OK;
}

/* The daylight a player sees, 0..100. */
static inline int32_t daylight(float light)
{
    int32_t l = (int32_t)(light * 100.0f + 0.5f);
    return l < 0 ? 0 : l;
}

/* Player a's scene agent (place, facing, life) and stats (vitals, sleeping, daylight, items). */
static inline void show_player(polis_scene *sc, const sv_looks *lk, int32_t a, const sv_player *pl,
                               int32_t light)
{
    static const int32_t FACING[5] = {POLIS_FACING_NONE, POLIS_FACING_LEFT, POLIS_FACING_RIGHT,
                                      POLIS_FACING_UP, POLIS_FACING_DOWN};
    sc->agents[a].x = pl->c;
    sc->agents[a].y = pl->r;
    sc->agents[a].facing = pl->dir >= 1 && pl->dir <= 4 ? FACING[pl->dir] : 0;
    sc->agents[a].alive = pl->alive ? 1 : 0;
    int32_t *row = sc->stats + (size_t)a * (size_t)sc->n_stats + (size_t)lk->stat0;
    row[ST_HEALTH] = pl->health;
    row[ST_FOOD] = pl->food;
    row[ST_DRINK] = pl->drink;
    row[ST_ENERGY] = pl->energy;
    row[ST_SLEEPING] = pl->sleeping ? 1 : 0;
    row[ST_DAYLIGHT] = light;
    _Static_assert(sizeof pl->inv == SV_N_ITEMS * sizeof *row, "the items are int32 stats");
    memcpy(row + ST_ITEMS, pl->inv, sizeof pl->inv); /* registered in the order of inv */
}

static polis_status sv_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    survival *s = ud;
    sv_looks *lk = s->looks;
    sv_world *w = s->w;
    bool all = s->h->scene_fresh(ctx, sc);
    /* the rows written since the last scene (the kernel cleared the layer when fresh) */
    uint64_t rows = read_marks(&w->map_rows, &w->scene_rows, &w->take_rows);
    rows = all ? ~UINT64_C(0) : rows;
    polis_status st = show_rows(ctx, sc, lk, all, rows, (const uint8_t(*)[SV_MAP])w->map);
    if (st) return st;
    if (all) /* the kernel emptied the slots */
        memset(lk->shown, 0, sizeof lk->shown);
    /* only the mob slots the rules marked since the last scene (every slot when fresh), the
     * marks cleared here: a scene that fails half-way is followed by a fresh one */
    uint64_t kind_marks[SV_N_MOB_KINDS];
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) /* vectorised: no branch */
        kind_marks[k] = read_marks(&w->mob_marks[k], &w->scene_mob_marks[k], &w->take_mob_marks[k]);
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        uint64_t marks = kind_marks[k];
        if (!marks && !all) continue; /* most kinds at most ticks */
        marks = all ? lk->all_slots[k] : marks & lk->all_slots[k];
        const sv_mob *m = w->mobs[k];
        sv_shown *sh = &lk->shown[lk->slot0[k]];
        for (; marks; marks &= marks - 1) {
            int32_t i = __builtin_ctzll(marks);
            const sv_mob *mi = &m[i];
            if ((st = show_mob(ctx, sc, lk, &sh[i], k, lk->slot0[k] + i,
                               mi->active && sv_in_map(mi->r, mi->c), mi->uid, mi->r, mi->c)))
                return st;
        }
    }
    int32_t light = daylight(w->light);
    for (int32_t a = 0; a < s->n; a++) show_player(sc, lk, a, &w->players[a], light);
    return POLIS_OK;
}

/* ---- the scene drawn from copies ("scene" host API version 5) ------------------------------
 *
 * A take: a head, then every player's fields from r to inv (as in sv_player), the rows of the
 * map in head.rows (SV_MAP bytes each, in row order), and a sv_shown for each mob slot in
 * head.marks (kind by kind, in slot order): uid, row (-1 when the slot's mob is not active)
 * and column. sv_draw keeps its own copy of the map and of what each slot shows (sv_drawn). */
typedef struct sv_take_head {
    uint64_t rows;                  /* the map rows taken (all when fresh) */
    uint64_t marks[SV_N_MOB_KINDS]; /* the mob slots taken (all when fresh) */
    float light;                    /* w->light */
    uint32_t fresh;
} sv_take_head;

/* the part of a sv_player the scene shows (show_player): from r to the end of inv */
#define SV_PL_FIRST offsetof(sv_player, r)
#define SV_PL_BYTES (offsetof(sv_player, inv) + sizeof(int32_t) * SV_N_ITEMS - SV_PL_FIRST)
#define SV_PL_IN(f) (offsetof(sv_player, f) >= SV_PL_FIRST && offsetof(sv_player, f) < SV_PL_BYTES)
_Static_assert(SV_PL_IN(c) && SV_PL_IN(dir) && SV_PL_IN(sleeping) && SV_PL_IN(alive) &&
                   SV_PL_IN(health) && SV_PL_IN(food) && SV_PL_IN(drink) && SV_PL_IN(energy) &&
                   sizeof(((sv_player *)0)->inv) == sizeof(int32_t) * SV_N_ITEMS &&
                   SV_PL_BYTES % 4 == 0,
               "show_player reads only the fields from r to the end of inv");

/* sv_draw's state: its copy of the map and what each mob slot shows */
typedef struct sv_drawn {
    uint8_t map[SV_MAP][SV_MAP];
    sv_shown shown[];
} sv_drawn;

/* On the env's thread: what changed since the last take (the rules' marks and what sv_scene
 * left for it, read_marks). */
static polis_status sv_take(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len)
{
    (void)ctx;
    const sv_looks *lk = ud;
    sv_world *w = lk->w;
    uint8_t *const b = buf, *p = b + sizeof(sv_take_head);
    /* the head's fields stored where they go (a head built on the stack and copied would
     * stall on the load of its mixed-size stores) */
    uint64_t rows = read_marks(&w->map_rows, &w->take_rows, &w->scene_rows);
    rows = fresh ? ~UINT64_C(0) : rows;
    const uint32_t fr = fresh;
    memcpy(b + offsetof(sv_take_head, rows), &rows, sizeof rows);
    memcpy(b + offsetof(sv_take_head, light), &w->light, sizeof w->light);
    memcpy(b + offsetof(sv_take_head, fresh), &fr, sizeof fr);
    for (int32_t a = 0; a < lk->n; a++, p += SV_PL_BYTES)
        memcpy(p, (const uint8_t *)&w->players[a] + SV_PL_FIRST, SV_PL_BYTES);
    for (; rows; rows &= rows - 1, p += SV_MAP) memcpy(p, w->map[__builtin_ctzll(rows)], SV_MAP);
    uint64_t marks[SV_N_MOB_KINDS];
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) /* vectorised: no branch */
        marks[k] = read_marks(&w->mob_marks[k], &w->take_mob_marks[k], &w->scene_mob_marks[k]);
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        uint64_t mk = (fresh ? ~UINT64_C(0) : marks[k]) & lk->all_slots[k];
        memcpy(b + offsetof(sv_take_head, marks) + (size_t)k * sizeof mk, &mk, sizeof mk);
        const sv_mob *m = w->mobs[k];
        for (; mk; mk &= mk - 1, p += sizeof(sv_shown)) {
            const sv_mob *mi = &m[__builtin_ctzll(mk)];
            /* the row -1 when the mob is not active (without a branch) */
            int32_t r = mi->r | -(int32_t)!mi->active;
            memcpy(p + offsetof(sv_shown, uid), &mi->uid, sizeof(int32_t));
            memcpy(p + offsetof(sv_shown, r), &r, sizeof(int32_t));
            memcpy(p + offsetof(sv_shown, c), &mi->c, sizeof(int32_t));
        }
    }
    *len = (size_t)(p - b);
    return POLIS_OK;
}

/* On the reader's thread: sv_scene's calls and writes, from a take, against its own state. */
static polis_status sv_draw(polis_ctx *ctx, void *ud, void *state, const void *take,
                            size_t take_len, polis_scene *sc)
{
    const sv_looks *lk = ud;
    sv_drawn *dr = state;
    const uint8_t *p = take;
    sv_take_head hd = {0};
    bool ok = take_len >= sizeof hd;
    if (ok) { /* the bytes its head says, and only mob slots there are */
        memcpy(&hd, p, sizeof hd);
        size_t want =
            sizeof hd + (size_t)lk->n * SV_PL_BYTES + (size_t)sv_popcount(hd.rows) * SV_MAP;
        for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
            ok = ok && !(hd.marks[k] & ~lk->all_slots[k]);
            want += (size_t)sv_popcount(hd.marks[k]) * sizeof(sv_shown);
        }
        ok = ok && take_len == want;
    }
    /* no message: the host's error writes the env's, which the env's thread owns meanwhile */
    if (!ok) return POLIS_ERR_INVALID;
    bool all = hd.fresh != 0;
    if (all != lk->h->scene_fresh(ctx, sc)) return POLIS_ERR_STATE;
    const uint8_t *pl = p + sizeof hd, *row = pl + (size_t)lk->n * SV_PL_BYTES;
    const uint8_t *mob = row + (size_t)sv_popcount(hd.rows) * SV_MAP;
    for (uint64_t rows = hd.rows; rows; rows &= rows - 1, row += SV_MAP)
        memcpy(dr->map[__builtin_ctzll(rows)], row, SV_MAP);
    polis_status st = show_rows(ctx, sc, lk, all, hd.rows, (const uint8_t(*)[SV_MAP])dr->map);
    if (st) return st;
    if (all) memset(dr->shown, 0, sizeof(sv_shown) * (size_t)lk->slots);
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        for (uint64_t marks = hd.marks[k]; marks; marks &= marks - 1, mob += sizeof(sv_shown)) {
            int32_t i = __builtin_ctzll(marks), slot = lk->slot0[k] + i;
            sv_shown m;
            memcpy(&m, mob, sizeof m);
            if ((st = show_mob(ctx, sc, lk, &dr->shown[slot], k, slot, sv_in_map(m.r, m.c), m.uid,
                               m.r, m.c)))
                return st;
        }
    }
    int32_t light = daylight(hd.light);
    for (int32_t a = 0; a < lk->n; a++, pl += SV_PL_BYTES) {
        sv_player player;
        memcpy((uint8_t *)&player + SV_PL_FIRST, pl, SV_PL_BYTES);
        show_player(sc, lk, a, &player, light);
    }
    return POLIS_OK;
}

polis_status sv_register_looks(survival *s)
{
    const polis_host *h = s->h;
    polis_ctx *ctx = s->ctx;
    sv_looks *lk = h->alloc(ctx, sizeof *lk);
    if (!lk) return POLIS_ERR_NOMEM;
    s->looks = lk;
    lk->h = h;
    lk->n = s->n;
    lk->w = s->w;
    polis_status st;
    for (int32_t b = 0; b < SV_N_BLOCKS; b++) {
        lk->block_kind[b] = -1;
        if (!BLOCK_LOOK[b].glyph) continue;
        polis_kind_def d = {sv_block_names[b], BLOCK_LOOK[b].glyph, BLOCK_LOOK[b].color,
                            BLOCK_LOOK[b].shape};
        if ((st = h->look_kind(ctx, &d, &lk->block_kind[b]))) return st;
    }
    lk->draw = draw_rows;
#ifdef SV_DRAW_AVX2
    if (__builtin_cpu_supports("avx2")) lk->draw = draw_rows_avx2;
#endif
    lk->kind_off = lk->block_kind[SV_GRASS] - SV_GRASS;
    for (int32_t b = 0; b < SV_N_BLOCKS; b++)
        if (lk->block_kind[b] != (b >= SV_GRASS ? b + lk->kind_off : -1)) lk->kind_off = INT32_MIN;
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        polis_kind_def d = {MOB_LOOK[k].name, MOB_LOOK[k].glyph, MOB_LOOK[k].color,
                            MOB_LOOK[k].shape};
        if ((st = h->look_kind(ctx, &d, &lk->mob_kind[k]))) return st;
    }
    if ((st = h->look_map(ctx, SV_MAP, SV_MAP)) ||
        (st = h->look_layer(ctx, "terrain", &lk->layer)) ||
        (st = h->look_view(ctx, SV_VIEW_COLS / 2, SV_VIEW_ROWS / 2)) ||
        (st = h->look_stat(ctx, "health", "vitals", 9, &lk->stat0)) ||
        (st = h->look_stat(ctx, "food", "vitals", 9, NULL)) ||
        (st = h->look_stat(ctx, "drink", "vitals", 9, NULL)) ||
        (st = h->look_stat(ctx, "energy", "vitals", 9, NULL)) ||
        (st = h->look_stat(ctx, "sleeping", "state", 1, NULL)) ||
        (st = h->look_stat(ctx, "daylight", "world", 100, NULL)))
        return st;
    for (int32_t i = 0; i < SV_N_ITEMS; i++)
        if ((st = h->look_stat(ctx, sv_item_names[i], "inventory", 9, NULL))) return st;
    int32_t things = 0;
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        lk->slot0[k] = things;
        things += s->w->p.max_mobs[k];
        int32_t n = s->w->p.max_mobs[k];
        lk->all_slots[k] = n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
    }
    lk->slots = things;
    polis_scene_def def = {.fn = sv_scene, .ud = s, .max_things = things};
    if ((st = h->look_scene(ctx, &def))) return st;
    if ((st = h->look_keep_layer(ctx, lk->layer))) return st;
    if (!(lk->api = h->host_api(ctx, POLIS_SCENE_API, 3))) return POLIS_ERR_PLUGIN;
    /* a slot per mob slot (none to keep without mobs) */
    if (things > 0 && (st = lk->api->list_keep(ctx, POLIS_SCENE_THINGS, things))) return st;
    /* sv_scene writes every player's place, facing, life and stats in every scene, and every
     * terrain cell in a fresh one: the kernel need not clear them first (API 4) */
    if (lk->api->version >= 4 &&
        (st = lk->api->scene_whole(ctx, POLIS_SCENE_WHOLE_AGENTS | POLIS_SCENE_WHOLE_STATS |
                                            POLIS_SCENE_WHOLE_FRESH_LAYERS)))
        return st;
    /* the recorder may draw the scene from copies, off the stepping thread (API 5) */
    if (lk->api->version >= 5) {
        polis_scene_copy_def copy = {
            .take = sv_take,
            .draw = sv_draw,
            .ud = lk,
            .max_take = sizeof(sv_take_head) + (size_t)s->n * SV_PL_BYTES + SV_MAP * SV_MAP +
                        (size_t)things * sizeof(sv_shown),
            .state_bytes = sizeof(sv_drawn) + (size_t)things * sizeof(sv_shown)};
        if ((st = lk->api->scene_copy(ctx, &copy))) return st;
    }
    return POLIS_OK;
}

void sv_free_looks(survival *s)
{
    if (s->looks) s->h->free(s->ctx, s->looks, sizeof(sv_looks));
    s->looks = NULL;
}
