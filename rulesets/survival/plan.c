/*
 * plan.c — plans (macro actions) so an LLM agent can play survival at the level of
 * intentions (docs/kernel.md, "Plans"):
 *
 *   COLLECT [<n>] <wood|stone|coal|iron|diamond|sapling>   walk to the nearest source, mine
 *   DRINK                                                  drink until drink is 9
 *   EAT                                                    eat a ripe plant or a cow, once
 *   SLEEP                                                  sleep until awake again
 *   PLACE <table|furnace|stone|plant>                      place it in front
 *   MAKE <wood_pickaxe|...|iron_sword>                     walk to a table and craft it
 *
 * Paths are policy.c's breadth-first search; the plan state is a few integers. A plan never
 * returns an action its agent's mask forbids (it waits with noop instead).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct sv_plan {
    int32_t kind;   /* PLAN_* */
    int32_t target; /* item, block or action */
    int32_t goal;   /* inventory count (COLLECT) */
    int32_t before; /* the value watched at the start (food, achievements) */
    int32_t ticks;  /* ticks run */
    int32_t slept;  /* SLEEP: asleep once */
} sv_plan;

enum { PLAN_COLLECT, PLAN_DRINK, PLAN_EAT, PLAN_SLEEP, PLAN_PLACE, PLAN_MAKE };

#define PLAN_TICKS 2000 /* a plan running this long gives up */

static int32_t word_index(const char *w, const char *const *names, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (strcmp(w, names[i]) == 0) return i;
    return -1;
}

/* One lower-case word of args into buf; returns the rest or NULL when there is none. */
static const char *next_word(const char *p, char *buf, size_t size)
{
    while (*p == ' ') p++;
    if (!*p) return NULL;
    size_t n = 0;
    while (*p && *p != ' ') {
        char c = *p++;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c == '-' || c == ' ') c = '_';
        if (n + 1 < size) buf[n++] = c;
    }
    buf[n] = '\0';
    return p;
}

static polis_status collect_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                  void *plan)
{
    (void)ctx;
    survival *s = ud;
    sv_plan *p = plan;
    char w[32], w2[32];
    const char *rest = next_word(args, w, sizeof w);
    int32_t n = 1;
    if (rest && w[0] >= '0' && w[0] <= '9') {
        if (sscanf(w, "%d", &n) != 1 || n < 1 || n > 9) {
            s->h->error(s->ctx, "COLLECT: the count must be 1 to 9, got \"%s\"", w);
            return POLIS_ERR_ACTION;
        }
        rest = next_word(rest, w, sizeof w);
    }
    static const char *const ITEMS[6] = {"wood", "stone", "coal", "iron", "diamond", "sapling"};
    int32_t item = rest ? word_index(w, ITEMS, 6) : -1;
    if (item < 0 || next_word(rest, w2, sizeof w2)) {
        s->h->error(s->ctx, "COLLECT [<n>] <item>: the item is wood, stone, coal, iron, "
                            "diamond or sapling");
        return POLIS_ERR_ACTION;
    }
    const int32_t *inv = s->w->players[agent].inv;
    p->kind = PLAN_COLLECT;
    p->target = item;
    p->goal = inv[item] + n > 9 ? 9 : inv[item] + n;
    return POLIS_OK;
}

static polis_status simple_start(survival *s, const char *args, void *plan, int32_t kind,
                                 const char *name)
{
    char w[8];
    if (next_word(args, w, sizeof w)) {
        s->h->error(s->ctx, "%s takes no arguments", name);
        return POLIS_ERR_ACTION;
    }
    ((sv_plan *)plan)->kind = kind;
    return POLIS_OK;
}

static polis_status drink_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                void *plan)
{
    (void)ctx;
    (void)agent;
    return simple_start(ud, args, plan, PLAN_DRINK, "DRINK");
}

static polis_status eat_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args, void *plan)
{
    (void)ctx;
    survival *s = ud;
    polis_status st = simple_start(s, args, plan, PLAN_EAT, "EAT");
    ((sv_plan *)plan)->before = s->w->players[agent].food;
    return st;
}

static polis_status sleep_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                void *plan)
{
    (void)ctx;
    (void)agent;
    return simple_start(ud, args, plan, PLAN_SLEEP, "SLEEP");
}

static polis_status place_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                void *plan)
{
    (void)ctx;
    survival *s = ud;
    sv_plan *p = plan;
    char w[32], w2[8];
    static const char *const WHAT[4] = {"stone", "table", "furnace", "plant"};
    const char *rest = next_word(args, w, sizeof w);
    int32_t k = rest ? word_index(w, WHAT, 4) : -1;
    if (k < 0 || next_word(rest, w2, sizeof w2)) {
        s->h->error(s->ctx, "PLACE <what>: what is table, furnace, stone or plant");
        return POLIS_ERR_ACTION;
    }
    static const int32_t COST_ITEM[4] = {SV_INV_STONE, SV_INV_WOOD, SV_INV_STONE, SV_INV_SAPLING};
    p->kind = PLAN_PLACE;
    p->target = SV_PLACE_STONE + k;
    p->before = s->w->players[agent].inv[COST_ITEM[k]];
    return POLIS_OK;
}

static polis_status make_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                               void *plan)
{
    (void)ctx;
    (void)agent;
    survival *s = ud;
    sv_plan *p = plan;
    char w[32], w2[8];
    const char *rest = next_word(args, w, sizeof w);
    int32_t k = -1;
    if (rest)
        for (int32_t a = SV_MAKE_WOOD_PICKAXE; a < SV_N_ACTIONS; a++)
            if (strcmp(w, sv_action_names[a] + 5) == 0) k = a;
    if (k < 0 || next_word(rest, w2, sizeof w2)) {
        s->h->error(s->ctx, "MAKE <tool>: the tool is wood_pickaxe, stone_pickaxe, "
                            "iron_pickaxe, wood_sword, stone_sword or iron_sword");
        return POLIS_ERR_ACTION;
    }
    p->kind = PLAN_MAKE;
    p->target = k;
    p->before = s->w->players[agent].crafts;
    return POLIS_OK;
}

static int32_t stop(polis_plan_state *state, int32_t st, char *why, size_t cap, const char *msg)
{
    *state = (polis_plan_state)st;
    snprintf(why, cap, "%s", msg);
    return 0;
}

/* The step's action for plan p, or -1 with *state and why set when it ends. */
static int32_t plan_action(survival *s, int32_t agent, sv_plan *p, polis_plan_state *state,
                           char *why, size_t cap)
{
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    const int32_t *inv = pl->inv;
    char msg[128];
    int32_t a;
    if (!pl->alive) return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "dead") - 1;
    if (p->ticks++ >= PLAN_TICKS)
        return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "gave up after 2000 steps") - 1;
    if (pl->sleeping && p->kind != PLAN_SLEEP) return SV_NOOP;
    switch (p->kind) {
    case PLAN_COLLECT: {
        if (inv[p->target] >= p->goal) {
            snprintf(msg, sizeof msg, "holding %d %s", inv[p->target], sv_item_names[p->target]);
            return stop(state, POLIS_PLAN_DONE, why, cap, msg) - 1;
        }
        static const int32_t SOURCE[6] = {SV_TREE, SV_STONE,   SV_COAL,
                                          SV_IRON, SV_DIAMOND, SV_GRASS};
        static const int32_t TOOL[6] = {
            -1, SV_INV_WOOD_PICKAXE, SV_INV_WOOD_PICKAXE, SV_INV_STONE_PICKAXE, SV_INV_IRON_PICKAXE,
            -1};
        if (TOOL[p->target] >= 0 && inv[TOOL[p->target]] < 1) {
            snprintf(msg, sizeof msg, "mining %s needs a %s", sv_item_names[p->target],
                     sv_item_names[TOOL[p->target]]);
            return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, msg) - 1;
        }
        if (p->target == SV_INV_SAPLING) {
            /* DO on grass: face grass (any grass neighbour) and keep trying */
            int32_t face;
            a = sv_path_to(s, agent, SV_GRASS, &face);
            if (a == 0) return pl->dir == face ? SV_DO : face;
        } else {
            a = sv_fetch(s, agent, SOURCE[p->target]);
        }
        if (a < 0) {
            snprintf(msg, sizeof msg, "no reachable %s", sv_block_names[SOURCE[p->target]]);
            return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, msg) - 1;
        }
        return a;
    }
    case PLAN_DRINK:
        if (pl->drink >= 9) return stop(state, POLIS_PLAN_DONE, why, cap, "drink is 9") - 1;
        a = sv_fetch(s, agent, SV_WATER);
        if (a < 0) return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "no reachable water") - 1;
        return a;
    case PLAN_EAT:
        if (pl->food > p->before || pl->food >= 9) {
            snprintf(msg, sizeof msg, "food is %d", pl->food);
            return stop(state, POLIS_PLAN_DONE, why, cap, msg) - 1;
        }
        if ((a = sv_fetch(s, agent, SV_RIPE_PLANT)) >= 0) return a;
        if ((a = sv_fetch(s, agent, -SV_COW - 1)) >= 0) return a;
        return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "no reachable cow or ripe plant") - 1;
    case PLAN_SLEEP:
        if (pl->sleeping) {
            p->slept = 1;
            return SV_NOOP;
        }
        if (p->slept) {
            snprintf(msg, sizeof msg, "awake, energy %d", pl->energy);
            return stop(state, POLIS_PLAN_DONE, why, cap, msg) - 1;
        }
        if (pl->energy >= 9)
            return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "energy is full (9)") - 1;
        return SV_SLEEP;
    case PLAN_PLACE: {
        static const int32_t COST_ITEM[4] = {SV_INV_STONE, SV_INV_WOOD, SV_INV_STONE,
                                             SV_INV_SAPLING};
        static const int32_t COST[4] = {1, 2, 1, 1};
        int32_t k = p->target - SV_PLACE_STONE;
        if (inv[COST_ITEM[k]] < p->before) {
            snprintf(msg, sizeof msg, "placed a %s",
                     sv_block_names[k == 0   ? SV_STONE
                                    : k == 1 ? SV_TABLE
                                    : k == 2 ? SV_FURNACE
                                             : SV_PLANT]);
            return stop(state, POLIS_PLAN_DONE, why, cap, msg) - 1;
        }
        if (inv[COST_ITEM[k]] < COST[k]) {
            snprintf(msg, sizeof msg, "needs %d %s", COST[k], sv_item_names[COST_ITEM[k]]);
            return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, msg) - 1;
        }
        if (s->legal[agent] >> p->target & 1u) return p->target;
        /* turn: step toward a random legal direction */
        polis_rng *rng = s->h->policy_rng(s->ctx);
        return 1 + (int32_t)polis_rng_below(rng, 4);
    }
    case PLAN_MAKE: {
        if (pl->crafts > p->before) {
            snprintf(msg, sizeof msg, "made a %s", sv_action_names[p->target] + 5);
            return stop(state, POLIS_PLAN_DONE, why, cap, msg) - 1;
        }
        bool iron = p->target == SV_MAKE_IRON_PICKAXE || p->target == SV_MAKE_IRON_SWORD;
        bool stone = iron || p->target == SV_MAKE_STONE_PICKAXE || p->target == SV_MAKE_STONE_SWORD;
        if (inv[SV_INV_WOOD] < 1 || (stone && inv[SV_INV_STONE] < 1) ||
            (iron && (inv[SV_INV_IRON] < 1 || inv[SV_INV_COAL] < 1)))
            return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                        iron    ? "needs 1 wood, 1 stone, 1 iron and 1 coal"
                        : stone ? "needs 1 wood and 1 stone"
                                : "needs 1 wood") -
                   1;
        if (s->legal[agent] >> p->target & 1u) return p->target;
        if (sv_near_block(w, pl, SV_TABLE)) {
            if (iron && !sv_near_block(w, pl, SV_FURNACE))
                return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                            "iron tools need a furnace next to the table too") -
                       1;
            return SV_NOOP;
        }
        int32_t face;
        a = sv_path_to(s, agent, SV_TABLE, &face);
        if (a < 0) return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "no reachable table") - 1;
        return a == 0 ? face : a;
    }
    default: return stop(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "unknown plan") - 1;
    }
}

static polis_status plan_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                              polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    (void)ctx;
    survival *s = ud;
    *state = POLIS_PLAN_RUNNING;
    int32_t a = plan_action(s, agent, plan, state, why, cap);
    if (*state != POLIS_PLAN_RUNNING) return POLIS_OK;
    if (a < 0 || !(s->legal[agent] >> a & 1u)) a = SV_NOOP;
    *out = s->action_id[a];
    return POLIS_OK;
}

polis_status sv_register_macros(survival *s)
{
    const polis_host *h = s->h;
    const polis_macro_def defs[] = {
        {"COLLECT", "COLLECT [<n>] <wood|stone|coal|iron|diamond|sapling>",
         "Walk to the nearest reachable source and collect until n more (default 1) are held; "
         "impossible without the pickaxe it needs.",
         sizeof(sv_plan), collect_start, plan_next, s},
        {"DRINK", "DRINK", "Walk to the nearest water and drink until drink is 9.", sizeof(sv_plan),
         drink_start, plan_next, s},
        {"EAT", "EAT", "Walk to the nearest ripe plant (else cow) and eat once.", sizeof(sv_plan),
         eat_start, plan_next, s},
        {"SLEEP", "SLEEP", "Sleep until awake again (energy back at 9, or woken by harm).",
         sizeof(sv_plan), sleep_start, plan_next, s},
        {"PLACE", "PLACE <table|furnace|stone|plant>",
         "Place it on the facing tile, turning until a tile takes it.", sizeof(sv_plan),
         place_start, plan_next, s},
        {"MAKE", "MAKE <wood_pickaxe|stone_pickaxe|iron_pickaxe|wood_sword|stone_sword|iron_sword>",
         "Walk next to the nearest table (iron tools: with a furnace beside it) and craft it.",
         sizeof(sv_plan), make_start, plan_next, s},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        polis_status st = h->macro(s->ctx, &defs[i]);
        if (st) return st;
    }
    return POLIS_OK;
}
