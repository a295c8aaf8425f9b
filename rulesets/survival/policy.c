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

#include "survival.h"

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

/* The first move toward the nearest tile from which a tile matching `want` (a block, or
 * -kind-1 for a mob kind) is orthogonally adjacent; 0 when the player is already there (then
 * *face is the direction to face), -1 when none is reachable. */
int32_t sv_path_to(survival *s, int32_t agent, int32_t want, int32_t *face)
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
        for (int32_t d = 1; d <= 4; d++) {
            int32_t nr = r + DR[d], nc = c + DC[d];
            if (!sv_in_map(nr, nc)) continue;
            bool hit = want >= 0 ? w->map[nr][nc] == want
                                 : w->mob_map[nr][nc] && ((w->mob_map[nr][nc] - 1) >> 8) == -want - 1;
            if (hit) {
                *face = d;
                return k == start ? 0 : sr->from[k];
            }
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

static int32_t decide(survival *s, int32_t agent, uint32_t legal)
{
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    const int32_t *inv = pl->inv;
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
    /* vitals */
    if (pl->drink < 5 && (a = sv_fetch(s, agent, SV_WATER)) >= 0) return a;
    if (pl->food < 5) {
        if ((a = sv_fetch(s, agent, SV_RIPE_PLANT)) >= 0) return a;
        if ((a = sv_fetch(s, agent, -SV_COW - 1)) >= 0) return a;
    }
    /* sleep when tired, by day (few zombies spawn), healthy and with no zombie near; a
     * stone in front first when there is one to place */
    bool zombie_near = false;
    for (int32_t q = 0; q < w->p.max_mobs[SV_ZOMBIE]; q++) {
        const sv_mob *z = &w->mobs[SV_ZOMBIE][q];
        zombie_near |= z->active && abs(z->r - pl->r) + abs(z->c - pl->c) <= 8;
    }
    bool tired = pl->energy < 2 || (pl->energy < 6 && w->light > 0.6f && pl->health >= 6);
    if (tired && !zombie_near && (legal >> SV_SLEEP & 1u)) {
        if (legal >> SV_PLACE_STONE & 1u) return SV_PLACE_STONE;
        return SV_SLEEP;
    }
    /* crafting whatever is missing and possible here */
    static const int32_t TOOLS[6][2] = {
        {SV_MAKE_WOOD_PICKAXE, SV_INV_WOOD_PICKAXE},   {SV_MAKE_WOOD_SWORD, SV_INV_WOOD_SWORD},
        {SV_MAKE_STONE_PICKAXE, SV_INV_STONE_PICKAXE}, {SV_MAKE_STONE_SWORD, SV_INV_STONE_SWORD},
        {SV_MAKE_IRON_PICKAXE, SV_INV_IRON_PICKAXE},   {SV_MAKE_IRON_SWORD, SV_INV_IRON_SWORD}};
    for (int32_t k = 0; k < 6; k++)
        if (inv[TOOLS[k][1]] == 0 && (legal >> TOOLS[k][0] & 1u)) return TOOLS[k][0];
    bool table = sv_near_block(w, pl, SV_TABLE);
    bool wood_tools = inv[SV_INV_WOOD_PICKAXE] && inv[SV_INV_WOOD_SWORD];
    bool stone_tools = inv[SV_INV_STONE_PICKAXE] && inv[SV_INV_STONE_SWORD];
    bool iron_tools = inv[SV_INV_IRON_PICKAXE] && inv[SV_INV_IRON_SWORD];
    /* wood first: enough for a table and the wood tools */
    int32_t want_wood = !wood_tools ? (table ? 1 : 3) : !stone_tools ? 2 : !iron_tools ? 2 : 0;
    if (inv[SV_INV_WOOD] < want_wood) {
        if ((a = sv_fetch(s, agent, SV_TREE)) >= 0) return a;
    }
    if (!table && inv[SV_INV_WOOD] >= 2 && (!wood_tools || !stone_tools || !iron_tools) &&
        (a = place(s, agent, SV_PLACE_TABLE, legal)) >= 0)
        return a;
    if (!wood_tools) return -1;
    /* stone: for the stone tools, a furnace, one placed stone and the iron tools */
    int32_t want_stone = !stone_tools ? 2 : 2;
    if (inv[SV_INV_STONE] < want_stone && (a = sv_fetch(s, agent, SV_STONE)) >= 0) return a;
    if (!stone_tools && !table && (a = sv_fetch(s, agent, SV_TABLE)) >= 0) return a;
    if (!stone_tools) return -1;
    if (!(pl->ach & 1u << SV_ACH_PLACE_STONE) && inv[SV_INV_STONE] > 0 &&
        (a = place(s, agent, SV_PLACE_STONE, legal)) >= 0)
        return a;
    if (!iron_tools) {
        if (inv[SV_INV_COAL] < 1 && (a = sv_fetch(s, agent, SV_COAL)) >= 0) return a;
        if (inv[SV_INV_IRON] < 1 && (a = sv_fetch(s, agent, SV_IRON)) >= 0) return a;
        if (inv[SV_INV_COAL] >= 1 && inv[SV_INV_IRON] >= 1) {
            if (!table && (a = sv_fetch(s, agent, SV_TABLE)) >= 0) return a;
            if (table && !sv_near_block(w, pl, SV_FURNACE) &&
                (a = place(s, agent, SV_PLACE_FURNACE, legal)) >= 0)
                return a;
        }
    }
    if (!(pl->ach & 1u << SV_ACH_PLACE_FURNACE) && inv[SV_INV_STONE] > 0 && table &&
        (a = place(s, agent, SV_PLACE_FURNACE, legal)) >= 0)
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
    *out = s->action_id[a];
    return POLIS_OK;
}

polis_status sv_register_policies(survival *s)
{
    const polis_host *h = s->h;
    if (h->struct_size < offsetof(polis_host, policy_rng) + sizeof h->policy_rng || !h->policy)
        return POLIS_OK;
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
