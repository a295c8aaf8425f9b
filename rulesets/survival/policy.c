/*
 * policy.c — "scripted", an achievement-seeking baseline (README "Baselines"): it keeps its
 * vitals up (drinks, eats cows and ripe plants, sleeps when tired), fights what stands next
 * to it, and otherwise climbs the technology tree in a fixed order: wood, table, wood
 * pickaxe and sword, stone, stone tools, furnace, placed stone, coal, iron, iron tools,
 * diamond, with saplings and plants on the way. Paths come from a breadth-first search over
 * the whole map in scratch arrays allocated at create, so acting allocates nothing; ties and
 * wandering draw from host->policy_rng only.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const int32_t DR[5] = {0, 0, 0, -1, 1}, DC[5] = {0, -1, 1, 0, 0};

typedef struct sv_search {
    int16_t from[SV_MAP * SV_MAP]; /* first move (1..4) that reaches the tile; 0 unseen */
    uint16_t queue[SV_MAP * SV_MAP];
} sv_search;

static bool walk_ok(const sv_world *w, int32_t r, int32_t c)
{
    if (!sv_in_map(r, c)) return false;
    int32_t b = w->map[r][c];
    return !sv_solid(b) && b != SV_LAVA && !w->mob_map[r][c];
}

/* Go to the nearest `want` and DO on it: the action for this step, or -1 if unreachable. */
int32_t sv_fetch(survival *s, int32_t agent, int32_t want)
{
    const sv_player *pl = &s->w->players[agent];
    int32_t face, step = sv_path_to(s, agent, want, &face);
    if (step < 0) return -1;
    if (step > 0) return step;
    if (pl->dir != face) return face; /* the target blocks the move, so this only turns */
    return SV_DO;
}

bool sv_near_block(const sv_world *w, const sv_player *pl, int32_t block)
{
    for (int32_t dr = -1; dr <= 1; dr++)
        for (int32_t dc = -1; dc <= 1; dc++)
            if ((dr || dc) && sv_in_map(pl->r + dr, pl->c + dc) &&
                w->map[pl->r + dr][pl->c + dc] == block)
                return true;
    return false;
}

/* A placement: now if the facing tile takes it, else turn by stepping somewhere. */
static int32_t place(survival *s, int32_t agent, int32_t action, uint32_t legal)
{
    (void)agent;
    if (legal >> action & 1u) return action;
    polis_rng *rng = s->h->policy_rng(s->ctx);
    int32_t d = 1 + (int32_t)polis_rng_below(rng, 4);
    return legal >> d & 1u ? d : -1;
}

/* ---- shelter: a two-tile pocket sealed with one stone, to sleep where no zombie reaches -- */

static inline int32_t opposite(int32_t d) { return ((d - 1) ^ 1) + 1; }

/* A tile no mob can enter (out of the map counts). */
static bool wall(const sv_world *w, int32_t r, int32_t c)
{
    if (!sv_in_map(r, c)) return true;
    int32_t b = w->map[r][c];
    return sv_solid(b) || b == SV_LAVA;
}

/* A tile the player can stand on now, or stone it can mine first. */
static bool inner(const sv_world *w, const sv_player *pl, int32_t r, int32_t c)
{
    if (!sv_in_map(r, c) || w->mob_map[r][c]) return false;
    int32_t b = w->map[r][c];
    return b == SV_GRASS || b == SV_SAND || b == SV_PATH ||
           (b == SV_STONE && pl->inv[SV_INV_WOOD_PICKAXE] > 0);
}

/* Whether (er, ec) is the mouth of a pocket in direction d: Y = E + d and X = E + 2d can be
 * stood on (or mined), every other neighbour of X and Y is a wall, and E takes a stone. The
 * player walks in to X, steps back to Y (now facing E) and places the stone: X and Y are then
 * closed off. */
static bool pocket(const sv_world *w, const sv_player *pl, int32_t er, int32_t ec, int32_t d)
{
    int32_t yr = er + DR[d], yc = ec + DC[d], xr = yr + DR[d], xc = yc + DC[d];
    int32_t p = d <= 2 ? 3 : 1; /* a perpendicular direction; p + 1 is the other */
    if (!sv_in_map(er, ec) || sv_solid(w->map[er][ec]) || w->map[er][ec] == SV_LAVA) return false;
    if (!inner(w, pl, yr, yc) || !inner(w, pl, xr, xc) || !wall(w, xr + DR[d], xc + DC[d]))
        return false;
    for (int32_t q = p; q <= p + 1; q++)
        if (!wall(w, yr + DR[q], yc + DC[q]) || !wall(w, xr + DR[q], xc + DC[q])) return false;
    return pl->inv[SV_INV_STONE] + (w->map[yr][yc] == SV_STONE) + (w->map[xr][xc] == SV_STONE) >= 1;
}

/* Whether at most `limit` tiles mobs could walk on are connected to the player's tile. */
static bool enclosed(survival *s, const sv_player *pl, int32_t limit)
{
    const sv_world *w = s->w;
    uint16_t *q = s->search->queue;
    int32_t n = 0, head = 0;
    q[n++] = (uint16_t)(pl->r * SV_MAP + pl->c);
    while (head < n) {
        int32_t k = q[head++], r = k / SV_MAP, c = k % SV_MAP;
        for (int32_t d = 1; d <= 4; d++) {
            int32_t nr = r + DR[d], nc = c + DC[d], nk = nr * SV_MAP + nc;
            if (wall(w, nr, nc)) continue;
            bool seen = false;
            for (int32_t i = 0; i < n && !seen; i++) seen = q[i] == nk;
            if (seen) continue;
            if (n == limit) return false;
            q[n++] = (uint16_t)nk;
        }
    }
    return true;
}

/* What a search looks for from a tile, in a direction: a tile holding `want`, or a pocket
 * mouth. */
typedef enum sv_goal { SV_GOAL_ADJACENT, SV_GOAL_POCKET } sv_goal;

/* The tile in direction d holds `want`: a block, or -kind-1 for a mob kind. */
static bool adjacent_to(const sv_world *w, int32_t r, int32_t c, int32_t d, int32_t want)
{
    int32_t nr = r + DR[d], nc = c + DC[d];
    if (!sv_in_map(nr, nc)) return false;
    return want >= 0 ? w->map[nr][nc] == want
                     : w->mob_map[nr][nc] && ((w->mob_map[nr][nc] - 1) >> 8) == -want - 1;
}

/* Breadth-first over walkable tiles from the player's to the nearest tile where some
 * direction d meets the goal (directions tried in order 1..4): the first move toward that
 * tile, 0 when it is the player's own; *face is d. -1 when no such tile is reachable. */
static int32_t search(survival *s, int32_t agent, sv_goal goal, int32_t want, int32_t *face)
{
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    sv_search *sr = s->search;
    memset(sr->from, 0, sizeof sr->from);
    int32_t head = 0, tail = 0, start = pl->r * SV_MAP + pl->c;
    sr->queue[tail++] = (uint16_t)start;
    sr->from[start] = 5;
    while (head < tail) {
        int32_t k = sr->queue[head++], r = k / SV_MAP, c = k % SV_MAP;
        for (int32_t d = 1; d <= 4; d++)
            if (goal == SV_GOAL_POCKET ? pocket(w, pl, r, c, d) : adjacent_to(w, r, c, d, want)) {
                *face = d;
                return k == start ? 0 : sr->from[k];
            }
        for (int32_t d = 1; d <= 4; d++) {
            int32_t nr = r + DR[d], nc = c + DC[d], nk = nr * SV_MAP + nc;
            if (!walk_ok(w, nr, nc) || sr->from[nk]) continue;
            sr->from[nk] = (int16_t)(k == start ? d : sr->from[k]);
            sr->queue[tail++] = (uint16_t)nk;
        }
    }
    return -1;
}

/* The first move toward the nearest tile from which a tile matching `want` (a block, or
 * -kind-1 for a mob kind) is orthogonally adjacent; 0 when the player is already there (then
 * *face is the direction to face), -1 when none is reachable. */
int32_t sv_path_to(survival *s, int32_t agent, int32_t want, int32_t *face)
{
    return search(s, agent, SV_GOAL_ADJACENT, want, face);
}

/* The first move toward the nearest pocket mouth (breadth-first over walkable tiles), or the
 * pocket's direction when the player stands on one; -1 when none is reachable. */
static int32_t find_pocket(survival *s, int32_t agent)
{
    int32_t face, step = search(s, agent, SV_GOAL_POCKET, 0, &face);
    return step == 0 ? face : step;
}

/* This step's action toward sleeping sealed in: -1 when no shelter can be had. */
static int32_t shelter(survival *s, int32_t agent, uint32_t legal)
{
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    int32_t r = pl->r, c = pl->c, d = pl->dir, fr = r + DR[d], fc = c + DC[d];
    if (enclosed(s, pl, 3)) return legal >> SV_SLEEP & 1u ? SV_SLEEP : SV_NOOP;
    /* at Y facing the mouth, X behind: seal it */
    if (pocket(w, pl, fr, fc, opposite(d)) && w->map[r][c] != SV_STONE) {
        if (legal >> SV_PLACE_STONE & 1u) return SV_PLACE_STONE;
        if (w->mob_map[fr][fc]) return SV_DO;
    }
    /* at X: step back to Y, which turns the player toward the mouth */
    for (int32_t e = 1; e <= 4; e++)
        if (pocket(w, pl, r + 2 * DR[e], c + 2 * DC[e], opposite(e))) return e;
    /* on the way in: at Y facing X, or at the mouth facing Y: mine, else step */
    if (pocket(w, pl, r - DR[d], c - DC[d], d) || pocket(w, pl, r, c, d))
        return w->map[fr][fc] == SV_STONE ? SV_DO : d;
    return find_pocket(s, agent);
}

/* Out of a shelter: mine the stone in front, else turn to one. */
static int32_t leave(const sv_world *w, const sv_player *pl, uint32_t legal)
{
    int32_t fr = pl->r + DR[pl->dir], fc = pl->c + DC[pl->dir];
    if (sv_in_map(fr, fc) && (w->map[fr][fc] == SV_STONE || w->map[fr][fc] == SV_TREE) &&
        (legal >> SV_DO & 1u))
        return SV_DO;
    for (int32_t d = 1; d <= 4; d++) {
        int32_t r = pl->r + DR[d], c = pl->c + DC[d];
        if (d != pl->dir && sv_in_map(r, c) &&
            (w->map[r][c] == SV_TREE ||
             (w->map[r][c] == SV_STONE && pl->inv[SV_INV_WOOD_PICKAXE] > 0)))
            return d;
    }
    for (int32_t d = 1; d <= 4; d++)
        if (legal >> d & 1u) return d;
    return SV_NOOP;
}

/* ---- the ladder ------------------------------------------------------------------------- */

static int32_t decide(survival *s, int32_t agent, uint32_t legal)
{
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    const int32_t *inv = pl->inv;
    uint32_t ach = pl->ach;
    int32_t a;
    /* fight what is next to us */
    int32_t fr = pl->r + DR[pl->dir], fc = pl->c + DC[pl->dir];
    if (sv_in_map(fr, fc) && w->mob_map[fr][fc] && ((w->mob_map[fr][fc] - 1) >> 8) != SV_COW)
        return SV_DO;
    for (int32_t d = 1; d <= 4; d++) {
        int32_t r = pl->r + DR[d], c = pl->c + DC[d];
        if (sv_in_map(r, c) && w->mob_map[r][c] && ((w->mob_map[r][c] - 1) >> 8) == SV_ZOMBIE)
            return d;
    }
    bool night = w->light < 0.35f, safe = enclosed(s, pl, 3);
    /* vitals (a shelter is left for them only when they run low) */
    int32_t low = safe ? 3 : 5;
    if (pl->drink < low && (a = sv_fetch(s, agent, SV_WATER)) >= 0) return a;
    if (pl->food < low) {
        if ((a = sv_fetch(s, agent, SV_RIPE_PLANT)) >= 0) return a;
        if ((a = sv_fetch(s, agent, -SV_COW - 1)) >= 0) return a;
    }
    /* sleep sealed in a pocket when tired or by night; sleep where we are only when
     * exhausted and no pocket can be had */
    bool tired = pl->energy <= 3 || (night && pl->energy < 8);
    if (tired || (safe && night && pl->drink >= 3 && pl->food >= 3)) {
        if (safe) return legal >> SV_SLEEP & 1u ? SV_SLEEP : SV_NOOP;
        if (inv[SV_INV_WOOD_PICKAXE] > 0 || inv[SV_INV_STONE] > 0) {
            if ((a = shelter(s, agent, legal)) >= 0) return a;
        }
        if (pl->energy < 2 && (legal >> SV_SLEEP & 1u)) {
            if (legal >> SV_PLACE_STONE & 1u) return SV_PLACE_STONE;
            return SV_SLEEP;
        }
    }
    if (safe) return leave(w, pl, legal);
    /* achievements on the way: a ripe plant, a cow */
    if (!(ach & 1u << SV_ACH_EAT_PLANT) && (a = sv_fetch(s, agent, SV_RIPE_PLANT)) >= 0) return a;
    if (!(ach & 1u << SV_ACH_EAT_COW) && (a = sv_fetch(s, agent, -SV_COW - 1)) >= 0) return a;
    /* crafting whatever is missing and possible here */
    static const int32_t TOOLS[6][2] = {
        {SV_MAKE_WOOD_PICKAXE, SV_INV_WOOD_PICKAXE},   {SV_MAKE_WOOD_SWORD, SV_INV_WOOD_SWORD},
        {SV_MAKE_STONE_PICKAXE, SV_INV_STONE_PICKAXE}, {SV_MAKE_STONE_SWORD, SV_INV_STONE_SWORD},
        {SV_MAKE_IRON_PICKAXE, SV_INV_IRON_PICKAXE},   {SV_MAKE_IRON_SWORD, SV_INV_IRON_SWORD}};
    for (int32_t k = 0; k < 6; k++)
        if (inv[TOOLS[k][1]] == 0 && (legal >> TOOLS[k][0] & 1u)) return TOOLS[k][0];
    bool table = sv_near_block(w, pl, SV_TABLE);
    int32_t wood_missing = !inv[SV_INV_WOOD_PICKAXE] + !inv[SV_INV_WOOD_SWORD];
    int32_t stone_missing = !inv[SV_INV_STONE_PICKAXE] + !inv[SV_INV_STONE_SWORD];
    int32_t iron_missing = !inv[SV_INV_IRON_PICKAXE] + !inv[SV_INV_IRON_SWORD];
    /* 1: wood for a table and the wood tools */
    if (wood_missing) {
        if (inv[SV_INV_WOOD] < wood_missing + (table ? 0 : 2) &&
            (a = sv_fetch(s, agent, SV_TREE)) >= 0)
            return a;
        if (!table && inv[SV_INV_WOOD] >= 2 && (a = place(s, agent, SV_PLACE_TABLE, legal)) >= 0)
            return a;
        return -1;
    }
    /* 2: a sapling, planted */
    if (!(ach & 1u << SV_ACH_COLLECT_SAPLING) && (a = sv_fetch(s, agent, SV_GRASS)) >= 0) return a;
    if (inv[SV_INV_SAPLING] > 0 && !(ach & 1u << SV_ACH_PLACE_PLANT) &&
        (a = place(s, agent, SV_PLACE_PLANT, legal)) >= 0)
        return a;
    /* 3: stone for the stone tools, a placed stone, a furnace, a shelter and the iron tools;
     * wood for the stone and iron tools and a second table */
    int32_t want_stone = stone_missing + iron_missing + 3;
    int32_t want_wood = stone_missing + iron_missing + 2;
    if (inv[SV_INV_WOOD] < want_wood && inv[SV_INV_STONE] >= 1 &&
        (a = sv_fetch(s, agent, SV_TREE)) >= 0)
        return a;
    if (inv[SV_INV_STONE] < want_stone && (a = sv_fetch(s, agent, SV_STONE)) >= 0) return a;
    if (inv[SV_INV_WOOD] < want_wood && (a = sv_fetch(s, agent, SV_TREE)) >= 0) return a;
    if (!(ach & 1u << SV_ACH_PLACE_STONE) && inv[SV_INV_STONE] > 0 &&
        (a = place(s, agent, SV_PLACE_STONE, legal)) >= 0)
        return a;
    if (stone_missing) {
        if (table) return -1;
        if (inv[SV_INV_WOOD] >= stone_missing + 2 &&
            (a = place(s, agent, SV_PLACE_TABLE, legal)) >= 0)
            return a;
        if ((a = sv_fetch(s, agent, SV_TABLE)) >= 0) return a;
        return -1;
    }
    /* 4: the furnace, coal and iron, the iron tools at a table with a furnace beside it */
    if (!(ach & 1u << SV_ACH_PLACE_FURNACE) && inv[SV_INV_STONE] > 0 &&
        (a = place(s, agent, SV_PLACE_FURNACE, legal)) >= 0)
        return a;
    if (iron_missing) {
        if (inv[SV_INV_COAL] < iron_missing && (a = sv_fetch(s, agent, SV_COAL)) >= 0) return a;
        if (inv[SV_INV_IRON] < iron_missing && (a = sv_fetch(s, agent, SV_IRON)) >= 0) return a;
        if (inv[SV_INV_COAL] >= 1 && inv[SV_INV_IRON] >= 1 && inv[SV_INV_STONE] >= 1 &&
            inv[SV_INV_WOOD] >= 1) {
            bool furnace = sv_near_block(w, pl, SV_FURNACE);
            if (!table && inv[SV_INV_WOOD] >= 3 &&
                (a = place(s, agent, SV_PLACE_TABLE, legal)) >= 0)
                return a;
            if (!table && (a = sv_fetch(s, agent, SV_TABLE)) >= 0) return a;
            if (table && !furnace && inv[SV_INV_STONE] >= 2 &&
                (a = place(s, agent, SV_PLACE_FURNACE, legal)) >= 0)
                return a;
        }
    }
    /* 5: a skeleton, then diamonds */
    if (!(ach & 1u << SV_ACH_DEFEAT_SKELETON) && inv[SV_INV_STONE_SWORD] && pl->health >= 6 &&
        (a = sv_fetch(s, agent, -SV_SKELETON - 1)) >= 0)
        return a;
    if (inv[SV_INV_IRON_PICKAXE] && (a = sv_fetch(s, agent, SV_DIAMOND)) >= 0) return a;
    return -1;
}

static polis_status scripted(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    (void)ctx;
    survival *s = ud;
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    uint32_t legal = s->legal[agent];
    *out = 0;
    if (!pl->alive || pl->sleeping || legal == 1u) return POLIS_OK;
    int32_t a = decide(s, agent, legal);
    if (a < 0) {
        /* saplings on the way, then wander */
        int32_t fr = pl->r + DR[pl->dir], fc = pl->c + DC[pl->dir];
        polis_rng *rng = s->h->policy_rng(s->ctx);
        if (pl->inv[SV_INV_SAPLING] > 0 && (legal >> SV_PLACE_PLANT & 1u))
            a = SV_PLACE_PLANT;
        else if (sv_in_map(fr, fc) && w->map[fr][fc] == SV_GRASS && polis_rng_below(rng, 2) == 0)
            a = SV_DO;
        else
            a = 1 + (int32_t)polis_rng_below(rng, 4);
    }
    if (!(legal >> a & 1u)) a = 0;
    /* never a step into lava (wandering and turning pick directions at random) */
    if (a >= 1 && a <= 4 && sv_in_map(pl->r + DR[a], pl->c + DC[a]) &&
        w->map[pl->r + DR[a]][pl->c + DC[a]] == SV_LAVA)
        a = 0;
    *out = s->action_id[a];
    return POLIS_OK;
}

polis_status sv_register_policies(survival *s)
{
    const polis_host *h = s->h;
    s->search = h->alloc(s->ctx, sizeof(sv_search));
    if (!s->search) return POLIS_ERR_NOMEM;
    polis_status st = h->policy(s->ctx, "scripted", scripted, s);
    if (!st) st = sv_register_macros(s);
    return st;
}

void sv_free_policies(survival *s)
{
    if (s->search) s->h->free(s->ctx, s->search, sizeof(sv_search));
}
