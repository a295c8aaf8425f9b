/* internal.h — the survival plugin's state, shared by survival.c (lifecycle, parameters,
 * hooks), render.c (text and JSON views, the action parser) and policy.c (the scripted
 * baseline). The game itself is the core in core.h. */
#ifndef SURVIVAL_INTERNAL_H
#define SURVIVAL_INTERNAL_H

#include "polis/plugin.h"
#include "core.h"

/* A world's terrain made ahead for a reset (the "reset_ahead" host API, survival.c): written
 * by prepare on a thread of a vec's pool, read by the RESET hook, never both at once. */
typedef struct sv_ahead {
    uint8_t map[SV_MAP * SV_MAP];
    polis_rng key;   /* the generator the terrain was drawn from, as the reset starts it */
    polis_rng after; /* ... and after the draws */
    bool ready;      /* map, key and after hold a terrain not taken yet */
    bool off;        /* prepare does nothing: its terrains kept missing */
    int32_t misses;  /* resets in a row that found a terrain of another key */
} sv_ahead;

typedef struct survival {
    const polis_host *h;
    polis_ctx *ctx;
    int32_t n;
    sv_world *w;
    size_t w_bytes;
    uint32_t *legal; /* [n] mask bits, computed in OBSERVE */
    bool legal_mask; /* false: the kernel sees every action as legal (legal_mask parameter) */
    int32_t action_id[SV_N_ACTIONS];
    int32_t ev_achievement, ev_crafted, ev_killed, ev_death, ev_attack, ev_placed;
    int64_t deaths[SV_N_CAUSES];     /* deaths by cause since create */
    struct sv_search *search;        /* the scripted policy's path search scratch */
    struct sv_looks *looks;          /* looks.c: kind ids, the scene layer and stats (ABI 1.5) */
    const polis_visibility_api *vis; /* who sees whom (docs/visibility.md) */
    uint8_t *seen;                   /* [n] sv_seen's row */
    sv_ahead *ahead;                 /* the terrain of a reset made ahead */
} survival;

/* survival.c: NULL while nothing is hidden from anyone, else the players `agent` may see now
 * ([n] flags, valid until the next call): every view of another player asks it. */
const uint8_t *sv_seen(survival *s, int32_t agent);

/* render.c: renderers and the action parser; then policy.c's policies */
polis_status sv_register_views(survival *s);
/* policy.c: "scripted" (the kernel provides "random" and "uniform") */
polis_status sv_register_policies(survival *s);
void sv_free_policies(survival *s);
/* policy.c's path search, shared with plan.c: the first move toward the nearest tile next to
 * a `want` block (or -kind-1 for a mob kind), 0 when already there (*face = the way to it), -1
 * when unreachable; sv_fetch turns that into this step's action for walking there and DOing. */
int32_t sv_path_to(survival *s, int32_t agent, int32_t want, int32_t *face);
int32_t sv_fetch(survival *s, int32_t agent, int32_t want);
bool sv_near_block(const sv_world *w, const sv_player *pl, int32_t block);
/* looks.c: kinds, the terrain layer, stats and the scene */
polis_status sv_register_looks(survival *s);
void sv_free_looks(survival *s);
/* plan.c: the macros (plans for LLM agents) */
polis_status sv_register_macros(survival *s);

#endif
