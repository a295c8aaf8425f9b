/*
 * swap_probe — a test plugin for handler replacements (engine/ffi/swap.c, the scenario's
 * "replace"). With "game": true (the default) it registers one handler of every kind a
 * scenario can replace, and exports a replacement of the right signature for each (plus a
 * few of the wrong one); with "game": false it registers nothing and only exports, e.g.
 * `keep_half`, a reward split for the Contract game over the social plugin's groups.
 *
 * The game: agents count their `step` actions; observation `count` (i32[1]) shows the
 * count; reward `base` gives every agent 1; transform `double` doubles the rewards; the END
 * hook terminates agent 0 at tick 5; the action family `fam` (3 members) is legal for all;
 * policy `stepper` always chooses `step`.
 */
#include <stdint.h>
#include <string.h>

#include "polis/plugin.h"
#include "polis/social.h"

typedef struct params {
    bool game;
} params;

typedef struct probe {
    const polis_host *h;
    polis_ctx *ctx;
    int32_t n;
    int32_t *count; /* [n], step actions so far */
    int32_t step_id;
    const polis_social_api *social;
    int32_t division;
} probe;

static probe *self(polis_ctx *ctx) { return polis_ctx_state(ctx); }

/* ---- the game's own handlers ------------------------------------------------------------ */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    (void)ctx;
    memset(p->count, 0, sizeof *p->count * (size_t)p->n);
    return POLIS_OK;
}

static polis_status step_action(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    probe *p = ud;
    (void)ctx, (void)arg;
    p->count[agent] += 1;
    return POLIS_OK;
}

static bool step_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx, (void)ud, (void)agent, (void)arg;
    return true;
}

static polis_status fam_action(polis_ctx *ctx, void *ud, int32_t agent, int32_t index)
{
    (void)ctx, (void)ud, (void)agent, (void)index;
    return POLIS_OK;
}

static void write_count(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    (void)ctx;
    int32_t v = p->count[agent];
    memcpy(dst, &v, sizeof v);
}

static polis_status base_reward(polis_ctx *ctx, void *ud, float *out)
{
    probe *p = ud;
    (void)ctx;
    for (int32_t a = 0; a < p->n; a++) out[a] = 1.0f;
    return POLIS_OK;
}

static polis_status double_rewards(polis_ctx *ctx, void *ud, float *r)
{
    probe *p = ud;
    (void)ctx;
    for (int32_t a = 0; a < p->n; a++) r[a] *= 2.0f;
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    if (p->h->tick(ctx) == 5) p->h->io(ctx)->terminations[0] = 1;
    return POLIS_OK;
}

static polis_status stepper(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    probe *p = ud;
    (void)ctx, (void)agent;
    *out = p->step_id;
    return POLIS_OK;
}

/* ---- exports: replacements ---------------------------------------------------------------- */

static int32_t x_act_thrice(polis_ctx *ctx, int32_t agent, int32_t arg)
{
    (void)arg;
    self(ctx)->count[agent] += 3;
    return POLIS_OK;
}

static int32_t x_act_refuse(polis_ctx *ctx, int32_t agent, int32_t arg)
{
    (void)agent, (void)arg;
    self(ctx)->h->error(ctx, "refuses agent %d", (int)agent);
    return POLIS_ERR_INVALID;
}

static int32_t x_act_bad_status(polis_ctx *ctx, int32_t agent, int32_t arg)
{
    (void)ctx, (void)agent, (void)arg;
    return 42;
}

static bool x_legal_odd(polis_ctx *ctx, int32_t agent, int32_t arg)
{
    (void)ctx, (void)arg;
    return agent % 2 == 1;
}

static void x_write_neg(polis_ctx *ctx, int32_t agent, int32_t *dst)
{
    dst[0] = -100 - self(ctx)->count[agent];
}

static void x_reward_agent(polis_ctx *ctx, float *out)
{
    for (int32_t a = 0; a < self(ctx)->n; a++) out[a] = (float)a;
}

static int32_t x_halve(polis_ctx *ctx, float *r)
{
    for (int32_t a = 0; a < self(ctx)->n; a++) r[a] *= 0.5f;
    return POLIS_OK;
}

static void x_end_at_2(polis_ctx *ctx)
{
    const polis_host *h = polis_ctx_host(ctx);
    if (h->tick(ctx) == 2)
        for (int32_t a = 0; a < h->n_agents(ctx); a++) h->io(ctx)->terminations[a] = 1;
}

static int32_t x_pick_noop(polis_ctx *ctx, int32_t agent)
{
    (void)ctx, (void)agent;
    return 0;
}

/* Contract's split, differently: each agent keeps half of its reward, and the other half is
 * shared equally by the members of its group (an agent in no group keeps everything). */
static int32_t x_keep_half(polis_ctx *ctx, float *r)
{
    probe *p = self(ctx);
    const polis_social_api *s = p->social;
    if (!s) {
        p->h->error(ctx, "keep_half needs the social plugin");
        return POLIS_ERR_STATE;
    }
    int32_t n = p->n, groups = s->max_groups(s->self);
    float shared[256];
    if (n > 256) {
        p->h->error(ctx, "keep_half handles at most 256 agents");
        return POLIS_ERR_LIMIT;
    }
    for (int32_t a = 0; a < n; a++) shared[a] = r[a];
    for (int32_t a = 0; a < n; a++) {
        int32_t g = -1;
        double w;
        for (int32_t k = 0; k < groups && g < 0; k++)
            if (s->get(s->self, n + k, a, p->division, &w)) g = k;
        if (g < 0) continue;
        int32_t members = 0;
        for (int32_t b = 0; b < n; b++) members += s->get(s->self, n + g, b, p->division, &w);
        r[a] -= 0.5f * shared[a];
        for (int32_t b = 0; b < n; b++)
            if (s->get(s->self, n + g, b, p->division, &w))
                r[b] += 0.5f * shared[a] / (float)members;
    }
    return POLIS_OK;
}

/* Wrong shapes, for the refusals. */
static float x_wrong(polis_ctx *ctx, int32_t agent)
{
    (void)ctx, (void)agent;
    return 0.0f;
}

static void x_write_f32(polis_ctx *ctx, int32_t agent, float *dst)
{
    (void)ctx, (void)agent;
    dst[0] = 0.0f;
}

static const polis_export exports[] = {
    {"act_thrice", "i32(ctx,i32,i32)", (void (*)(void))x_act_thrice, "count 3 per step"},
    {"act_refuse", "i32(ctx,i32,i32)", (void (*)(void))x_act_refuse, "fails"},
    {"act_bad_status", "i32(ctx,i32,i32)", (void (*)(void))x_act_bad_status, "returns 42"},
    {"legal_odd", "bool(ctx,i32,i32)", (void (*)(void))x_legal_odd, "odd agents only"},
    {"write_neg", "void(ctx,i32,i32*)", (void (*)(void))x_write_neg, "-100 - count"},
    {"reward_agent", "void(ctx,f32*)", (void (*)(void))x_reward_agent, "agent id as reward"},
    {"halve", "i32(ctx, f32 *)", (void (*)(void))x_halve, "halves the rewards"},
    {"end_at_2", "void(ctx)", (void (*)(void))x_end_at_2, "everyone ends at tick 2"},
    {"pick_noop", "i32(ctx,i32)", (void (*)(void))x_pick_noop, "always noop"},
    {"keep_half", "i32(ctx,f32*)", (void (*)(void))x_keep_half, "Contract: keep half"},
    {"wrong", "f32(ctx,i32)", (void (*)(void))x_wrong, "fits no kind"},
    {"write_f32", "void(ctx,i32,f32*)", (void (*)(void))x_write_f32, "an f32 writer"},
    /* malformed pointer signatures (never called) */
    {"ptr_i64", "void(ctx,i64*)", (void (*)(void))x_write_f32, "no such pointer"},
    {"ptr_ret", "f32*(ctx)", (void (*)(void))x_write_f32, "a pointer return"},
};

/* ---- lifecycle ------------------------------------------------------------------------------ */

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params_v, void **state)
{
    const params *pa = params_v;
    probe *p = h->alloc(ctx, sizeof *p);
    if (!p) return POLIS_ERR_NOMEM;
    *state = p;
    p->h = h;
    p->ctx = ctx;
    p->n = h->n_agents(ctx);
    if (!(p->count = h->alloc(ctx, sizeof *p->count * (size_t)p->n))) return POLIS_ERR_NOMEM;
    if (!pa->game) return POLIS_OK;
    polis_status st;
    polis_action_def step = {
        .name = "step", .doc = "count one", .handler = step_action, .legal = step_legal, .ud = p};
    polis_action_family_def fam = {.prefix = "fam", .count = 3, .handler = fam_action, .ud = p};
    polis_obs_def count = {.name = "count",
                           .dtype = POLIS_DTYPE_I32,
                           .ndim = 1,
                           .shape = {1},
                           .write = write_count,
                           .ud = p};
    if ((st = h->action(ctx, &step, &p->step_id)) || (st = h->action_family(ctx, &fam, NULL)) ||
        (st = h->observation(ctx, &count, NULL)) || (st = h->reward(ctx, "base", base_reward, p)) ||
        (st = h->reward_transform(ctx, "double", 0, double_rewards, p)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, p)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, p)) ||
        (st = h->policy(ctx, "stepper", stepper, p)))
        return st;
    return POLIS_OK;
}

static polis_status start(polis_ctx *ctx, void *state)
{
    probe *p = state;
    p->social = p->h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (p->social) p->division = p->social->attr_id(p->social->self, "division_weight");
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    probe *p = state;
    if (!p) return;
    p->h->free(ctx, p->count, sizeof *p->count * (size_t)p->n);
    p->h->free(ctx, p, sizeof *p);
}

static const polis_param_def param_defs[] = {
    {.key = "game",
     .type = POLIS_PARAM_BOOL,
     .offset = offsetof(params, game),
     .def_num = 1,
     .doc = "register the probe game (false: exports only)"},
};

static const polis_plugin_desc desc = {
    .abi_major = POLIS_ABI_MAJOR,
    .struct_size = sizeof(polis_plugin_desc),
    .name = "swap_probe",
    .abi_minor = POLIS_ABI_MINOR,
    .version = "1",
    .doc = "handler replacements: one handler of every kind and replacements for each",
    .params = param_defs,
    .n_params = 1,
    .params_size = sizeof(params),
    .init = init,
    .start = start,
    .destroy = destroy,
    .exports = exports,
    .n_exports = (int32_t)(sizeof exports / sizeof exports[0]),
};

POLIS_PLUGIN(desc)
