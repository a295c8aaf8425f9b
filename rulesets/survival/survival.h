/* survival.h — the survival plugin's state, shared by survival.c (lifecycle, parameters,
 * hooks), render.c (text and JSON views, the action parser) and policy.c (the scripted
 * baseline). The game itself is the core in sv.h. */
#ifndef SURVIVAL_H
#define SURVIVAL_H

#include "polis/plugin.h"
#include "sv.h"

typedef struct survival {
    const polis_host *h;
    polis_ctx *ctx;
    int32_t n;
    sv_world *w;
    size_t w_bytes;
    uint32_t *legal; /* [n] mask bits, computed in OBSERVE */
    int32_t action_id[SV_N_ACTIONS];
    int32_t ev_achievement, ev_crafted, ev_killed, ev_death, ev_attack, ev_placed;
    int64_t deaths[SV_N_CAUSES]; /* deaths by cause since create */
    struct sv_search *search;    /* the scripted policy's path search scratch */
} survival;

/* render.c: renderers and the action parser; then policy.c's policies */
polis_status sv_register_views(survival *s);
/* policy.c: "scripted" and "uniform" */
polis_status sv_register_policies(survival *s);
void sv_free_policies(survival *s);

#endif
