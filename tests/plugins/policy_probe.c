/*
 * policy_probe — a test plugin for scripted policies (tests/unit/test_policy.c).
 *
 * Actions: "left" (always legal) and "right" (legal for even agents only). The reward
 * function draws every agent's reward from the env generator, so an episode's rewards
 * reveal any draw a policy might steal from the env stream.
 *
 * The "mode" parameter picks the policies it registers (in start()):
 *   ok        "last_legal" (the highest legal id of the agent's mask), "dice" (a uniform
 *             id in [0, n_actions) from the policy generator, mask ignored), "bad" (id 999
 *             for agent 1), "fail" (an error for agent 1), "silent" (an error without a
 *             message), "thief" (draws from the env generator: what a policy must not do,
 *             to show the test can see it)
 *   dup, builtin, builtin_uniform, bad_name, null_fn, late
 *             a refused registration ("builtin": the kernel's "random", "builtin_uniform":
 *             the kernel's "uniform"; "late": in a reset hook, after creation)
 */
#include <string.h>

#include "polis/kit.h"

typedef struct pparams {
    const char *mode;
} pparams;

typedef struct pstate {
    const polis_host *h;
    char mode[32];
    int32_t left, right;
    polis_status late_status;
} pstate;

static polis_status act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg) { return POLIS_OK; }

static bool right_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return agent % 2 == 0;
}

static polis_status reward(polis_ctx *ctx, void *ud, float *out)
{
    pstate *p = ud;
    int32_t n = p->h->n_agents(ctx);
    for (int32_t a = 0; a < n; a++) out[a] = (float)polis_rng_below(p->h->rng(ctx), 100);
    return POLIS_OK;
}

static polis_status last_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    pstate *p = ud;
    const polis_io *io = p->h->io(ctx);
    const uint8_t *row = io->masks + (size_t)agent * (size_t)io->n_actions;
    *out = 0;
    for (int32_t k = 0; k < io->n_actions; k++)
        if (row[k]) *out = k;
    return POLIS_OK;
}

static polis_status dice(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    pstate *p = ud;
    *out = (int32_t)polis_rng_below(p->h->policy_rng(ctx), (uint32_t)p->h->io(ctx)->n_actions);
    return POLIS_OK;
}

static polis_status thief(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    pstate *p = ud;
    *out = (int32_t)polis_rng_below(p->h->rng(ctx), (uint32_t)p->h->io(ctx)->n_actions);
    return POLIS_OK;
}

static polis_status bad(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    *out = agent == 1 ? 999 : 0;
    return POLIS_OK;
}

static polis_status fail(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    pstate *p = ud;
    if (agent == 1) {
        p->h->error(ctx, "refuses agent %d", agent);
        return POLIS_ERR_INVALID;
    }
    *out = 0;
    return POLIS_OK;
}

static polis_status silent(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    return POLIS_ERR_LIMIT;
}

static polis_status late_hook(polis_ctx *ctx, void *ud)
{
    pstate *p = ud;
    p->late_status = p->h->policy(ctx, "late", dice, p);
    if (p->late_status != POLIS_OK) return p->late_status;
    return POLIS_OK;
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const pparams *pp = params;
    pstate *p = h->alloc(ctx, sizeof *p);
    if (!p) return POLIS_ERR_NOMEM;
    *state = p;
    p->h = h;
    strncpy(p->mode, pp->mode, sizeof p->mode - 1);
    polis_action_def l = {.name = "left", .handler = act, .ud = p};
    polis_action_def r = {.name = "right", .handler = act, .legal = right_legal, .ud = p};
    polis_status st;
    if ((st = h->action(ctx, &l, &p->left)) || (st = h->action(ctx, &r, &p->right))) return st;
    if ((st = h->reward(ctx, "draw", reward, p))) return st;
    if (strcmp(p->mode, "late") == 0) return h->hook(ctx, POLIS_PHASE_RESET, 0, late_hook, p);
    return POLIS_OK;
}

static polis_status start(polis_ctx *ctx, void *state)
{
    pstate *p = state;
    const polis_host *h = p->h;
    const char *m = p->mode;
    polis_status st;
    if (strcmp(m, "ok") == 0) {
        if ((st = h->policy(ctx, "last_legal", last_legal, p)) ||
            (st = h->policy(ctx, "dice", dice, p)) || (st = h->policy(ctx, "bad", bad, p)) ||
            (st = h->policy(ctx, "fail", fail, p)) || (st = h->policy(ctx, "silent", silent, p)) ||
            (st = h->policy(ctx, "thief", thief, p)))
            return st;
        return POLIS_OK;
    }
    if (strcmp(m, "dup") == 0) {
        if ((st = h->policy(ctx, "dice", dice, p))) return st;
        return h->policy(ctx, "dice", dice, p);
    }
    if (strcmp(m, "builtin") == 0) return h->policy(ctx, "random", dice, p);
    if (strcmp(m, "builtin_uniform") == 0) return h->policy(ctx, "uniform", dice, p);
    if (strcmp(m, "bad_name") == 0) return h->policy(ctx, "Dice!", dice, p);
    if (strcmp(m, "null_fn") == 0) return h->policy(ctx, "dice", NULL, p);
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    pstate *p = state;
    if (p) p->h->free(ctx, p, sizeof *p);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(pparams, "mode", mode, "ok", "what to register"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("policy_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: scripted policies",
    POLIS_DESC_PARAMS(PARAMS, pparams),
    .init = init,
    .start = start,
    .destroy = destroy,
};

POLIS_PLUGIN(DESC)
