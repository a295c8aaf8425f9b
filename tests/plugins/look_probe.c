/*
 * look_probe — a test plugin for looks and scenes (ABI 1.5; kept layers, 1.6). Its "mode"
 * parameter picks what it registers and how its scene callback misbehaves, so
 * tests/unit/test_scene.c asserts the kernel's exact scene and messages:
 *   ok          kinds "sand" and "rock", a layer "ground" (rock on the diagonal, sand
 *               elsewhere), a stat "tick" (the env tick), a 6x4 map, a 1x2 view, and per
 *               tick one thing per agent (id 100 + agent, at (agent, 0), label = tick), a node
 *               "club" and an edge agent_0 -> club
 *   over        the ok registrations with max_things 1: two agents' things exceed it
 *   bad_kind, bad_pos, long_label, late
 *               the scene appends a thing of kind 99, outside the map, with a 60-byte label,
 *               or registers a kind while the scene is written
 *   dup_kind, bad_color, bad_glyph, bad_shape, two_scenes, map_twice, bad_keep
 *               a refused registration
 *   keep        (ABI 1.6) the ok looks with "ground" a kept layer: the callback writes the
 *               whole layer only when the scene is fresh, and otherwise just turns cell
 *               (tick % 6, 3) to rock; the things come in descending id order (the recorder
 *               sorts them) with empty labels, agent 0's at (tick % 6, 0), agent 1's gone at
 *               odd ticks, when the club is "The clubhouse" and the edge weighs 0.75
 *   same        the keep looks, but the callback turns cell (tick % 6, 3) to rock only at even
 *               ticks and says "ground" is the same at odd ones (the "scene" host API)
 *   same_bad, same_outside
 *               layer_same for a layer that is not kept (in the scene), or from init
 *   kept        the keep looks, with its things and edges kept lists ("scene" host API 2):
 *               agent a's thing in thing slot 3 - a, put at every tick (also unchanged),
 *               agent 1's slot cleared at odd ticks, the edge in edge slot 1 — a recording
 *               the same as keep's
 *   kept_padded the kept looks, its edge put as the scene holds it (edge_put_padded, "scene"
 *               host API 3) — a recording the same as kept's
 *   kept_padded_empty, kept_padded_long, kept_padded_nan
 *               edge_put_padded with an empty end, a kind without a NUL in its array, a NaN
 *               weight
 *   kept_nodes, kept_slot, kept_append, kept_outside
 *               list_keep of the nodes (refused), a thing put into slot 4 of 4, a thing
 *               appended to the kept list, thing_put from init
 *   mix, kept_mix
 *               the keep (kept) looks, with MIX_SLOTS things instead of the agents' (mix_thing):
 *               one moving, one whose kind and one whose label change, one id swapping
 *               between two slots, a slot whose id changes every tick, one there at even
 *               ticks only, and the rest moving together at every fifth tick (more changed
 *               slots than the recorder diffs inline); mix appends them, kept_mix puts only
 *               the slots that change (all of them when the scene is fresh)
 *   mix_paired, kept_mix_paired
 *               mix and kept_mix without the id swapping slots or the slot whose id changes
 *               (slots 2 to 4 stay empty): each changed slot keeps its id or is only new or
 *               only gone
 *   kept_move   ("scene" host API 3) the kept mode, but agent 0's thing moved with thing_move
 *               once put, and the one row of "ground" written named with layer_rows — a
 *               recording the same as keep's
 *   walk, kept_walk
 *               the keep looks with nine more stats ("s1" to "s8": s_k = tick / k, "s9" the
 *               tick's parity) and both
 *               agents' things walking, agent a's at ((tick + a) % 6, a), agent 1's a sand
 *               instead of a rock at ticks 4 and 5: walk appends them, kept_walk moves them
 *               with thing_move (puts them when fresh or when the kind changes) — the same
 *               recording, every changed slot holding the thing it held
 *   kept_walk_whole
 *               ("scene" host API 4) kept_walk, which writes every agent's place, facing and
 *               life (alive set too), its ten stats and, when fresh, the whole layer, saying so
 *               with scene_whole — the same recording as walk's
 *   kept_walk_copy
 *               ("scene" host API 5) kept_walk, with its scene also drawn from copies
 *               (scene_copy), "ground" said the same at odd ticks and its row 3 named with
 *               layer_rows at even ones: the take holds the tick and agent 0's name, the draw
 *               makes the scene callback's calls from them, and counts its draws in its state
 * (failing with POLIS_ERR_STATE unless the state is zero exactly when the scene is fresh)
 *   kept_walk_copy_draw_fail, kept_walk_copy_move_empty, kept_walk_copy_take_fail,
 *   kept_walk_copy_take_over, kept_walk_copy_draw_error
 *               kept_walk_copy whose draw fails at tick 3 (draw_error: with a message through
 *               the host's error()), whose draw moves empty slot 3 at
 *               tick 2, whose take fails at tick 2, or whose take writes a byte more than
 *               its max_take
 *   copy_def, copy_null, copy_max, copy_state, copy_early, copy_twice, copy_late
 *               scene_copy refused: a NULL definition, a NULL draw, max_take 0, state_bytes
 *               2^30 + 1, before look_scene, twice, or from the scene callback
 *   whole_bits, whole_early
 *               scene_whole with an unknown bit, or before look_scene
 *   move_empty, rows_bad, rows_outside
 *               thing_move of an empty slot, layer_rows with 2 words for the 4 rows, or
 *               layer_rows from init
 *   edges, kept_edges, kept_edges_padded
 *               the keep (edges) or kept looks with EDGE_SLOTS edges instead of the one
 *               (edge_of): ends that share their first 15, 16 or 17 bytes or go on past them,
 *               long kinds, a slot whose ends change every tick, a weight that changes, an edge
 *               moving between two slots with its weight and one with another weight, a slot
 *               there at even ticks only, and fourteen slots with new names at odd ticks (more
 *               than a recorder's ranks of a list of EDGE_SLOTS hold) and a new weight at every
 *               tick; edges appends them in another order at every tick, kept_edges puts
 *               every slot (edge_put; slot_clear when empty), kept_edges_padded the same with
 *               edge_put_padded ("scene" host API 3)
 *   edges_many, kept_edges_many
 *               the edges modes with EDGE_MANY edges from one end ("hub") to ends named in the
 *               other order than their slots', three of them with a new weight at each tick
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"

typedef struct lparams {
    const char *mode;
} lparams;

typedef struct lstate {
    const polis_host *h;
    char mode[32];
    int32_t sand, rock, layer, stat, stat_s1;
    const polis_scene_api *scene_api;
} lstate;

static bool is(const lstate *l, const char *m) { return strcmp(l->mode, m) == 0; }

#define MIX_SLOTS 40

/* What slot s of the mix modes shows at tick t: false when nothing; whether it changed since
 * tick t - 1 in *changed. */
static bool mix_thing(const lstate *l, int32_t s, int64_t t, int32_t *id, int32_t *kind, int32_t *x,
                      int32_t *y, const char **label, bool *changed)
{
    *id = 300 + s, *kind = l->rock, *x = s % 6, *y = s % 4, *label = "";
    *changed = s < 7 || t % 5 == 0 || t % 5 == 1;
    if (strstr(l->mode, "paired") && s >= 2 && s <= 4) return false;
    switch (s) {
    case 0: *id = 10, *x = (int32_t)(t % 6); return true;
    case 1: *id = 11, *kind = t % 2 ? l->sand : l->rock; return true;
    case 2: *id = 12, *x = 1; return t % 2 == 0;
    case 3: *id = 12, *x = 2; return t % 2 == 1;
    case 4: *id = 200 + (int32_t)t; return true;
    case 5: *id = 5; return t % 2 == 0;
    case 6: *id = 13, *label = t % 2 ? "b" : "a"; return true;
    default: *x = (int32_t)((s + (t % 5 == 0 ? t : 0)) % 6); return true;
    }
}

static polis_status mix_scene(polis_ctx *ctx, lstate *l, polis_scene *sc, int64_t t)
{
    const polis_host *h = l->h;
    bool kept = is(l, "kept_mix") || is(l, "kept_mix_paired"), all = h->scene_fresh(ctx, sc);
    for (int32_t s = 0; s < MIX_SLOTS; s++) {
        int32_t id, kind, x, y;
        const char *label;
        bool changed;
        bool on = mix_thing(l, s, t, &id, &kind, &x, &y, &label, &changed);
        polis_status st = POLIS_OK;
        if (!kept)
            st = on ? h->scene_thing(ctx, sc, id, kind, x, y, label) : POLIS_OK;
        else if (all || changed)
            st = on ? l->scene_api->thing_put(ctx, sc, s, id, kind, x, y, label)
                    : l->scene_api->slot_clear(ctx, sc, POLIS_SCENE_THINGS, s);
        if (st) return st;
    }
    return POLIS_OK;
}

/* The walk modes' things and their stats s1 to s9. */
static polis_status walk_scene(polis_ctx *ctx, lstate *l, polis_scene *sc, int64_t t)
{
    const polis_host *h = l->h;
    bool kept = strncmp(l->mode, "kept_walk", 9) == 0, fresh = h->scene_fresh(ctx, sc);
    for (int32_t a = 0; a < sc->n_agents; a++) {
        int32_t x = (int32_t)((t + a) % 6), kind = a == 1 && t / 2 == 2 ? l->sand : l->rock;
        bool put = fresh || (a == 1 && (t == 4 || t == 6));
        polis_status st = !kept ? h->scene_thing(ctx, sc, 100 + a, kind, x, a, "")
                          : put ? l->scene_api->thing_put(ctx, sc, a, 100 + a, kind, x, a, "")
                                : l->scene_api->thing_move(ctx, sc, a, x, a);
        if (st) return st;
        for (int32_t k = 1; k <= 9; k++)
            sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)(l->stat_s1 + k - 1)] =
                (int32_t)(k == 9 ? t % 2 : t / k);
    }
    return POLIS_OK;
}

#define EDGE_SLOTS 28

/* What edge slot s of the edge modes shows at tick t: false when nothing. */
static bool edge_of(int32_t s, int64_t t, polis_scene_edge *e)
{
    static const char *const ends[6] = {"abcdefghijklmnop",
                                        "abcdefghijklmnopq",
                                        "abcdefghijklmnopb",
                                        "abcdefghijklmno",
                                        "abcdefghijklmnopqrstuvwxyz_1",
                                        "abcdefghijklmnopqrstuvwxyz_2"};
    const char *from = ends[s % 6], *to = "x", *kind = "k";
    char a[32], b[32];
    bool on = true;
    e->weight = 1;
    switch (s) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5: break; /* the same at every tick */
    case 6: from = ends[t % 6], to = ends[(t + 1) % 6]; break;
    case 7: from = "agent_a", to = ends[0], kind = "j", e->weight = (float)(t % 3); break;
    case 8:
    case 9: from = ends[(s + t) % 2], to = "y"; break;
    case 10:
    case 11: from = ends[(s + t) % 2], to = "z", e->weight = (float)(s - 9); break;
    case 12: from = "agent_b", kind = "kind_with_a_name_past_16_bytes_0", on = t % 2 == 0; break;
    case 13:
        from = "agent_b",
        kind = t % 2 ? "kind_with_a_name_past_16_bytes_1" : "kind_with_a_name_past_16_bytes_2";
        break;
    default: /* new names at odd ticks, a new weight at every tick */
        snprintf(a, sizeof a, "n_%d", (int)((t + 1) / 2 * 20 + s));
        snprintf(b, sizeof b, "m_%d", (int)((t + 1) / 2 * 7 + s));
        from = a, to = b, e->weight = (float)t;
    }
    memset(e->from, 0, sizeof e->from);
    memset(e->to, 0, sizeof e->to);
    memset(e->kind, 0, sizeof e->kind);
    snprintf(e->from, sizeof e->from, "%s", from);
    snprintf(e->to, sizeof e->to, "%s", to);
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    return on;
}

#define EDGE_MANY 300

/* What edge slot s of the edges_many modes shows at tick t. */
static bool many_edge_of(int32_t s, int64_t t, polis_scene_edge *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->from, sizeof e->from, "hub");
    snprintf(e->to, sizeof e->to, "t_%d", 999 - s);
    snprintf(e->kind, sizeof e->kind, "k");
    e->weight = s % 100 == t % 100 ? (float)t : 1;
    return true;
}

static polis_status edges_scene(polis_ctx *ctx, lstate *l, polis_scene *sc)
{
    const polis_host *h = l->h;
    int64_t t = h->tick(ctx);
    bool many = strstr(l->mode, "many") != NULL, append = strncmp(l->mode, "edges", 5) == 0;
    int32_t n = many ? EDGE_MANY : EDGE_SLOTS;
    for (int32_t i = 0; i < n; i++) {
        int32_t s = append ? (int32_t)((i * 11 + t) % n) : i;
        polis_scene_edge e;
        bool on = many ? many_edge_of(s, t, &e) : edge_of(s, t, &e);
        polis_status st = POLIS_OK;
        if (append)
            st = on ? h->scene_edge(ctx, sc, e.from, e.to, e.kind, e.weight) : POLIS_OK;
        else if (!on)
            st = l->scene_api->slot_clear(ctx, sc, POLIS_SCENE_EDGES, s);
        else if (is(l, "kept_edges_padded"))
            st = l->scene_api->edge_put_padded(ctx, sc, s, &e);
        else
            st = l->scene_api->edge_put(ctx, sc, s, e.from, e.to, e.kind, e.weight);
        if (st) return st;
    }
    return POLIS_OK;
}

static polis_status take(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len);
static polis_status draw(polis_ctx *ctx, void *ud, void *state, const void *tk, size_t len,
                         polis_scene *sc);

/* The scene at tick `tick` (agent 0 named agent0): the scene callback's, and the copy modes'
 * draw's from its take. */
static polis_status scene_at(polis_ctx *ctx, lstate *l, polis_scene *sc, int64_t tick,
                             const char *agent0)
{
    const polis_host *h = l->h;
    polis_status st;
    int32_t *t = sc->tiles + (size_t)l->layer * (size_t)sc->width * (size_t)sc->height;
    bool copy = strncmp(l->mode, "kept_walk_copy", 14) == 0;
    bool same = is(l, "same") || copy, kept = strncmp(l->mode, "kept", 4) == 0,
         mix = strstr(l->mode, "mix") != NULL, walk = strstr(l->mode, "walk") != NULL,
         keep = is(l, "keep") || same || kept || mix || walk || is(l, "rows_bad") ||
                strncmp(l->mode, "edges", 5) == 0;
    bool move = is(l, "kept_move"), fresh = h->scene_fresh(ctx, sc);
    if (!keep || fresh) {
        for (int32_t y = 0; y < sc->height; y++)
            for (int32_t x = 0; x < sc->width; x++)
                t[y * sc->width + x] = x == y ? l->rock : l->sand;
    } else if (same && tick % 2) {
        if ((st = l->scene_api->layer_same(ctx, sc, l->layer))) return st;
    } else {
        t[3 * sc->width + (int32_t)(tick % 6)] = l->rock;
        uint64_t row3 = UINT64_C(1) << 3, two[2] = {row3, 0};
        if ((move || copy) && (st = l->scene_api->layer_rows(ctx, sc, l->layer, &row3, 1)))
            return st;
        if (is(l, "rows_bad") && (st = l->scene_api->layer_rows(ctx, sc, l->layer, two, 2)))
            return st;
    }
    if (is(l, "same_bad") && (st = l->scene_api->layer_same(ctx, sc, l->layer))) return st;
    if (is(l, "move_empty") && (st = l->scene_api->thing_move(ctx, sc, 0, 1, 1))) return st;
    char label[64];
    snprintf(label, sizeof label, "%lld", (long long)tick);
    if (is(l, "long_label")) memset(label, 'x', 60), label[60] = '\0';
    if (mix && (st = mix_scene(ctx, l, sc, tick))) return st;
    if (walk && (st = walk_scene(ctx, l, sc, tick))) return st;
    for (int32_t i = 0; i < sc->n_agents; i++) {
        int32_t a = keep ? sc->n_agents - 1 - i : i;
        int32_t kind = is(l, "bad_kind") ? 99 : l->rock;
        int32_t x = is(l, "bad_pos") ? 6 : keep && a == 0 ? (int32_t)(tick % 6) : a;
        bool gone = keep && a == 1 && tick % 2;
        if (mix || walk)
            st = POLIS_OK;
        else if (move && a == 0 && !fresh)
            st = l->scene_api->thing_move(ctx, sc, 3, x, 0);
        else if (kept && !is(l, "kept_append"))
            st = gone ? l->scene_api->slot_clear(ctx, sc, POLIS_SCENE_THINGS, 3 - a)
                      : l->scene_api->thing_put(ctx, sc, is(l, "kept_slot") ? 4 : 3 - a, 100 + a,
                                                kind, x, 0, "");
        else if (!gone)
            st = h->scene_thing(ctx, sc, 100 + a, kind, x, 0, keep ? "" : label);
        if (st) return st;
        sc->agents[a].x = a;
        sc->agents[a].y = 1;
        sc->agents[a].facing = POLIS_FACING_RIGHT;
        if (strstr(l->mode, "whole")) sc->agents[a].alive = 1; /* no agent terminates */
        sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)l->stat] = (int32_t)tick;
    }
    if (is(l, "copy_late")) {
        polis_scene_copy_def def = {.take = take, .draw = draw, .ud = l, .max_take = 8};
        return l->scene_api->scene_copy(ctx, &def);
    }
    if (is(l, "late")) {
        polis_kind_def k = {"late", "l", "#000000", POLIS_SHAPE_DOT};
        return h->look_kind(ctx, &k, NULL);
    }
    bool odd = keep && tick % 2;
    if ((st = h->scene_node(ctx, sc, "club", "group", odd ? "The clubhouse" : "The club")))
        return st;
    if (strstr(l->mode, "edges")) return edges_scene(ctx, l, sc);
    if (strncmp(l->mode, "kept_padded", 11) == 0) {
        polis_scene_edge e = {.weight = is(l, "kept_padded_nan") ? __builtin_nanf("")
                                        : odd                    ? 0.75f
                                                                 : 0.5f};
        snprintf(e.from, sizeof e.from, "%s", agent0);
        snprintf(e.to, sizeof e.to, "%s", is(l, "kept_padded_empty") ? "" : "club");
        snprintf(e.kind, sizeof e.kind, "member");
        if (is(l, "kept_padded_long")) memset(e.kind, 'k', sizeof e.kind);
        return l->scene_api->edge_put_padded(ctx, sc, 1, &e);
    }
    if (kept)
        return l->scene_api->edge_put(ctx, sc, 1, agent0, "club", "member", odd ? 0.75f : 0.5f);
    return h->scene_edge(ctx, sc, agent0, "club", "member", odd ? 0.75f : 0.5f);
}

static polis_status scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    lstate *l = ud;
    return scene_at(ctx, l, sc, l->h->tick(ctx), l->h->agent_name(ctx, 0));
}

/* The copy modes' take: the tick and agent 0's name (the scene is a function of them); draw's
 * state counts the draws since a fresh one. */
typedef struct ltake {
    int64_t tick;
    char agent0[32];
} ltake;

static polis_status take(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len)
{
    lstate *l = ud;
    (void)fresh;
    int64_t t = l->h->tick(ctx);
    if (is(l, "kept_walk_copy_take_fail") && t == 2) return POLIS_ERR_PLUGIN;
    ltake k = {.tick = t};
    snprintf(k.agent0, sizeof k.agent0, "%s", l->h->agent_name(ctx, 0));
    memcpy(buf, &k, sizeof k);
    *len = is(l, "kept_walk_copy_take_over") ? sizeof k + 1 : sizeof k;
    return POLIS_OK;
}

static polis_status draw(polis_ctx *ctx, void *ud, void *state, const void *tk, size_t len,
                         polis_scene *sc)
{
    lstate *l = ud;
    const ltake *k = tk;
    int64_t *draws = state;
    if (len != sizeof *k || ((uintptr_t)tk % 8)) return POLIS_ERR_INVALID;
    if (l->h->scene_fresh(ctx, sc) ? *draws != 0 : *draws == 0) return POLIS_ERR_STATE;
    ++*draws;
    if (is(l, "kept_walk_copy_draw_fail") && k->tick == 3) return POLIS_ERR_PLUGIN;
    if (is(l, "kept_walk_copy_draw_error") && k->tick == 3) { /* the reader's message */
        l->h->error(ctx, "no draw at tick %d", (int)k->tick);
        return POLIS_ERR_PLUGIN;
    }
    polis_status st;
    if (is(l, "kept_walk_copy_move_empty") && k->tick == 2 &&
        (st = l->scene_api->thing_move(ctx, sc, 3, 1, 1)))
        return st;
    return scene_at(ctx, l, sc, k->tick, k->agent0);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    lstate *l = h->alloc(ctx, sizeof *l);
    if (!l) return POLIS_ERR_NOMEM;
    *state = l;
    l->h = h;
    const lparams *p = params;
    snprintf(l->mode, sizeof l->mode, "%s", p->mode);
    polis_status st;
    polis_kind_def sand = {"sand", ".", "#E8D9A0", POLIS_SHAPE_SQUARE};
    polis_kind_def rock = {"rock", "\xe2\x96\xb2", "#555555", POLIS_SHAPE_TRIANGLE};
    if (is(l, "bad_color")) sand.color = "e8d9a0";
    if (is(l, "bad_glyph")) sand.glyph = "ab";
    if (is(l, "bad_shape")) sand.shape = (polis_shape)42;
    if (is(l, "dup_kind")) rock.name = "sand";
    if ((st = h->look_kind(ctx, &sand, &l->sand)) || (st = h->look_kind(ctx, &rock, &l->rock)) ||
        (st = h->look_layer(ctx, "ground", &l->layer)) ||
        (st = h->look_stat(ctx, "tick", "clock", 0, &l->stat)) || (st = h->look_map(ctx, 6, 4)) ||
        (st = h->look_view(ctx, 1, 2)))
        return st;
    if (is(l, "map_twice") && (st = h->look_map(ctx, 7, 4))) return st;
    for (int32_t k = 1; strstr(l->mode, "walk") && k <= 9; k++) {
        char name[4];
        snprintf(name, sizeof name, "s%d", (int)k);
        if ((st = h->look_stat(ctx, name, "walk", 0, k == 1 ? &l->stat_s1 : NULL))) return st;
    }
    bool v5 = strstr(l->mode, "copy") != NULL;
    bool v4 = strstr(l->mode, "whole") != NULL || v5;
    bool v3 = is(l, "kept_move") || strncmp(l->mode, "kept_walk", 9) == 0 || is(l, "move_empty") ||
              strncmp(l->mode, "rows", 4) == 0 || strncmp(l->mode, "kept_padded", 11) == 0 ||
              is(l, "kept_edges_padded");
    bool kept = strncmp(l->mode, "kept", 4) == 0 || is(l, "move_empty");
    if ((is(l, "keep") || is(l, "same") || is(l, "bad_keep") || kept || is(l, "mix") ||
         is(l, "mix_paired") || is(l, "rows_bad") || is(l, "walk") ||
         strncmp(l->mode, "edges", 5) == 0) &&
        (st = h->look_keep_layer(ctx, is(l, "bad_keep") ? 5 : l->layer)))
        return st;
    if ((is(l, "same") || is(l, "same_bad") || is(l, "same_outside") || kept || v3 || v4) &&
        !(l->scene_api = h->host_api(ctx, POLIS_SCENE_API,
                                     v5     ? 5
                                     : v4   ? 4
                                     : v3   ? 3
                                     : kept ? 2
                                            : 1)))
        return POLIS_ERR_PLUGIN;
    uint64_t all_rows = 15;
    if (is(l, "rows_outside") && (st = l->scene_api->layer_rows(ctx, NULL, l->layer, &all_rows, 1)))
        return st;
    if (is(l, "kept_outside") && (st = l->scene_api->thing_put(ctx, NULL, 0, 1, l->rock, 0, 0, "")))
        return st;
    if (is(l, "same_outside") && (st = l->scene_api->layer_same(ctx, NULL, l->layer))) return st;
    if (is(l, "whole_early") && (st = l->scene_api->scene_whole(ctx, POLIS_SCENE_WHOLE_AGENTS)))
        return st;
    polis_scene_copy_def copy = {
        .take = take, .draw = draw, .ud = l, .max_take = sizeof(ltake), .state_bytes = 8};
    if (is(l, "copy_early") && (st = l->scene_api->scene_copy(ctx, &copy))) return st;
    polis_scene_def def = {.fn = scene,
                           .ud = l,
                           .max_things = is(l, "over")                    ? 1
                                         : strstr(l->mode, "mix") != NULL ? MIX_SLOTS
                                                                          : 8,
                           .max_nodes = 1,
                           .max_edges = strstr(l->mode, "many")    ? EDGE_MANY
                                        : strstr(l->mode, "edges") ? EDGE_SLOTS
                                                                   : 1};
    if ((st = h->look_scene(ctx, &def))) return st;
    if (is(l, "two_scenes")) return h->look_scene(ctx, &def);
    if (v5 && !is(l, "copy_late")) {
        if (is(l, "copy_null")) copy.draw = NULL;
        if (is(l, "copy_max")) copy.max_take = 0;
        if (is(l, "copy_state")) copy.state_bytes = ((size_t)1 << 30) + 1;
        if ((st = l->scene_api->scene_copy(ctx, is(l, "copy_def") ? NULL : &copy)) ||
            (is(l, "copy_twice") && (st = l->scene_api->scene_copy(ctx, &copy))))
            return st;
    }
    if (strstr(l->mode, "whole") &&
        (st = l->scene_api->scene_whole(
             ctx, is(l, "whole_bits") ? 8u
                                      : POLIS_SCENE_WHOLE_AGENTS | POLIS_SCENE_WHOLE_STATS |
                                            POLIS_SCENE_WHOLE_FRESH_LAYERS)))
        return st;
    if (kept && ((st = l->scene_api->list_keep(
                      ctx, is(l, "kept_nodes") ? POLIS_SCENE_NODES : POLIS_SCENE_THINGS,
                      strstr(l->mode, "mix") ? MIX_SLOTS : 4)) ||
                 (st = l->scene_api->list_keep(ctx, POLIS_SCENE_EDGES,
                                               strstr(l->mode, "many")    ? EDGE_MANY
                                               : strstr(l->mode, "edges") ? EDGE_SLOTS
                                                                          : 2))))
        return st;
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    lstate *l = state;
    if (l) l->h->free(ctx, l, sizeof *l);
}

static const polis_param_def params_table[] = {
    POLIS_P_STRING(lparams, "mode", mode, "ok", "what to do"),
};

static const polis_plugin_desc desc = {
    POLIS_DESC_HEAD("look_probe", 7),
    .version = "0.1.0",
    .doc = "looks and scenes test plugin",
    POLIS_DESC_PARAMS(params_table, lparams),
    .init = init,
    .destroy = destroy,
};

POLIS_PLUGIN(desc)
