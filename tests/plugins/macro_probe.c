/*
 * macro_probe — a test plugin for plans (macro actions): tests/unit/test_plan.c and the
 * agent protocol tests (tests/cli/serve_plan.sh).
 *
 * Each agent walks on a line: "fwd" adds one to its position, "back" subtracts one (legal
 * only above 0). The observation "pos" is the position; an agent terminates when it reaches
 * the "finish_at" parameter (0 = never). The reward "zero" is always 0.
 *
 * Macros, registered in start() when "mode" is "ok":
 *   WALK <n>      n "fwd" steps (1..100); DONE when walked
 *   BACK <n>      n "back" steps; IMPOSSIBLE at position 0 ("hit the wall at 0")
 *   WANDER <n>    n ticks of "fwd" or "noop" drawn from the policy generator; DONE after n
 *   BAD <how>     a broken macro: "illegal" (back at 0), "range" (action 99), "fail" (an
 *                 error), "state" (plan state 7), "refuse" (refuses without a message)
 * Other modes make one refused registration: dup, lower, digit_first, null_start, null_next,
 * big, null_def, late (in a reset hook, after creation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/kit.h"

#define MAX_AGENTS 64

typedef struct mparams {
    const char *mode;
    int64_t finish_at;
} mparams;

typedef struct mstate {
    const polis_host *h;
    char mode[32];
    int32_t finish_at;
    int32_t fwd, back;
    int32_t pos[MAX_AGENTS];
} mstate;

typedef struct walk_plan {
    int32_t left;  /* steps still to take */
    int32_t total; /* as asked */
} walk_plan;

typedef struct bad_plan {
    char how[16];
} bad_plan;

static polis_status move(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    mstate *s = ud;
    s->pos[agent] += arg;
    return POLIS_OK;
}

static bool back_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    mstate *s = ud;
    return s->pos[agent] > 0;
}

static void write_pos(polis_ctx *ctx, void *ud, int32_t agent, void *out)
{
    mstate *s = ud;
    memcpy(out, &s->pos[agent], sizeof(int32_t));
}

/* Always 0: the rewards stay out of the way of the plan tests, but the env has a reward
 * component like any game's. */
static polis_status zero_reward(polis_ctx *ctx, void *ud, float *out)
{
    mstate *s = ud;
    memset(out, 0, sizeof(float) * (size_t)s->h->n_agents(ctx));
    return POLIS_OK;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    mstate *s = ud;
    memset(s->pos, 0, sizeof s->pos);
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    mstate *s = ud;
    polis_io *io = (polis_io *)s->h->io(ctx);
    for (int32_t a = 0; a < io->n_agents; a++)
        if (s->finish_at > 0 && s->pos[a] >= s->finish_at) io->terminations[a] = 1;
    return POLIS_OK;
}

/* A count argument 1..100, or a refusal naming the macro. */
static polis_status parse_count(mstate *s, polis_ctx *ctx, const char *macro, const char *args,
                                int32_t *out)
{
    char *end;
    long n = strtol(args, &end, 10);
    if (!*args || *end || n < 1 || n > 100) {
        s->h->error(ctx, "%s: the step count must be 1 to 100, got \"%s\"", macro, args);
        return POLIS_ERR_ACTION;
    }
    *out = (int32_t)n;
    return POLIS_OK;
}

static polis_status walk_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                               void *plan)
{
    walk_plan *w = plan;
    if (w->left != 0 || w->total != 0) {
        ((mstate *)ud)->h->error(ctx, "plan memory was not zeroed");
        return POLIS_ERR_PLUGIN;
    }
    polis_status st = parse_count(ud, ctx, "WALK", args, &w->total);
    w->left = w->total;
    return st;
}

static polis_status walk_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                              polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    mstate *s = ud;
    walk_plan *w = plan;
    if (w->left == 0) {
        *state = POLIS_PLAN_DONE;
        snprintf(why, cap, "walked %d steps, now at %d", w->total, s->pos[agent]);
        return POLIS_OK;
    }
    w->left--;
    *state = POLIS_PLAN_RUNNING;
    *out = s->fwd;
    return POLIS_OK;
}

static polis_status back_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                               void *plan)
{
    walk_plan *w = plan;
    polis_status st = parse_count(ud, ctx, "BACK", args, &w->total);
    w->left = w->total;
    return st;
}

static polis_status back_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                              polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    mstate *s = ud;
    walk_plan *w = plan;
    if (w->left == 0) {
        *state = POLIS_PLAN_DONE;
        snprintf(why, cap, "went back %d steps", w->total);
        return POLIS_OK;
    }
    if (s->pos[agent] == 0) {
        *state = POLIS_PLAN_IMPOSSIBLE;
        snprintf(why, cap, "hit the wall at 0 with %d steps to go", w->left);
        return POLIS_OK;
    }
    w->left--;
    *state = POLIS_PLAN_RUNNING;
    *out = s->back;
    return POLIS_OK;
}

static polis_status wander_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                 void *plan)
{
    walk_plan *w = plan;
    polis_status st = parse_count(ud, ctx, "WANDER", args, &w->total);
    w->left = w->total;
    return st;
}

static polis_status wander_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                                polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    mstate *s = ud;
    walk_plan *w = plan;
    if (w->left == 0) {
        *state = POLIS_PLAN_DONE;
        return POLIS_OK; /* no reason: the kernel supplies one */
    }
    w->left--;
    *state = POLIS_PLAN_RUNNING;
    *out = polis_rng_below(s->h->policy_rng(ctx), 2) ? s->fwd : 0;
    return POLIS_OK;
}

static polis_status bad_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args, void *plan)
{
    bad_plan *b = plan;
    if (strcmp(args, "refuse") == 0) return POLIS_ERR_ACTION;
    if (strcmp(args, "crash") == 0) {
        ((mstate *)ud)->h->error(ctx, "cannot start");
        return POLIS_ERR_PLUGIN;
    }
    snprintf(b->how, sizeof b->how, "%s", args);
    return POLIS_OK;
}

static polis_status bad_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                             polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    mstate *s = ud;
    bad_plan *b = plan;
    *state = POLIS_PLAN_RUNNING;
    if (strcmp(b->how, "illegal") == 0)
        *out = s->back;
    else if (strcmp(b->how, "range") == 0)
        *out = 99;
    else if (strcmp(b->how, "state") == 0)
        *state = (polis_plan_state)7;
    else if (strcmp(b->how, "fail") == 0) {
        s->h->error(ctx, "bad plan failed for agent %d", agent);
        return POLIS_ERR_INVALID;
    } else
        *out = 0;
    return POLIS_OK;
}

static polis_status late_hook(polis_ctx *ctx, void *ud)
{
    mstate *s = ud;
    polis_macro_def d = {.name = "LATE", .start = walk_start, .next = walk_next, .ud = s};
    return s->h->macro(ctx, &d);
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const mparams *pp = params;
    if (h->n_agents(ctx) > MAX_AGENTS) {
        h->error(ctx, "at most %d agents", MAX_AGENTS);
        return POLIS_ERR_CONFIG;
    }
    mstate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    snprintf(s->mode, sizeof s->mode, "%s", pp->mode);
    s->finish_at = (int32_t)pp->finish_at;
    polis_action_def f = {
        .name = "fwd", .doc = "one step forward", .handler = move, .arg = 1, .ud = s};
    polis_action_def b = {.name = "back",
                          .doc = "one step back",
                          .handler = move,
                          .arg = -1,
                          .legal = back_legal,
                          .ud = s};
    polis_obs_def o = {.name = "pos",
                       .dtype = POLIS_DTYPE_I32,
                       .ndim = 1,
                       .shape = {1},
                       .write = write_pos,
                       .ud = s};
    polis_status st;
    if ((st = h->action(ctx, &f, &s->fwd)) || (st = h->action(ctx, &b, &s->back)) ||
        (st = h->observation(ctx, &o, NULL)) || (st = h->reward(ctx, "zero", zero_reward, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, s)))
        return st;
    if (strcmp(s->mode, "late") == 0) return h->hook(ctx, POLIS_PHASE_RESET, 1, late_hook, s);
    return POLIS_OK;
}

static polis_status start(polis_ctx *ctx, void *state)
{
    mstate *s = state;
    const polis_host *h = s->h;
    polis_macro_def walk = {.name = "WALK",
                            .usage = "WALK <n>",
                            .doc = "Steps forward n times (1..100); done when walked.",
                            .plan_size = sizeof(walk_plan),
                            .start = walk_start,
                            .next = walk_next,
                            .ud = s};
    polis_macro_def back = {.name = "BACK",
                            .usage = "BACK <n>",
                            .doc = "Steps back n times; impossible at the wall (0).",
                            .plan_size = sizeof(walk_plan),
                            .start = back_start,
                            .next = back_next,
                            .ud = s};
    polis_macro_def wander = {.name = "WANDER",
                              .usage = "WANDER <n>",
                              .doc = "n ticks of random steps forward or pauses.",
                              .plan_size = sizeof(walk_plan),
                              .start = wander_start,
                              .next = wander_next,
                              .ud = s};
    polis_macro_def bad = {.name = "BAD",
                           .usage = "BAD <how>",
                           .doc = "A broken macro.",
                           .plan_size = sizeof(bad_plan),
                           .start = bad_start,
                           .next = bad_next,
                           .ud = s};
    const char *m = s->mode;
    polis_status st;
    if (strcmp(m, "ok") == 0 || strcmp(m, "late") == 0) {
        if ((st = h->macro(ctx, &walk)) || (st = h->macro(ctx, &back)) ||
            (st = h->macro(ctx, &wander)) || (st = h->macro(ctx, &bad)))
            return st;
        return POLIS_OK;
    }
    if (strcmp(m, "dup") == 0) {
        if ((st = h->macro(ctx, &walk))) return st;
        walk.name = "walk"; /* a different spelling of the same command word */
        if (h->macro(ctx, &walk) != POLIS_ERR_INVALID) {
            h->error(ctx, "a lower-case name was accepted");
            return POLIS_ERR_PLUGIN;
        }
        walk.name = "WALK";
        return h->macro(ctx, &walk);
    }
    if (strcmp(m, "lower") == 0)
        walk.name = "Walk";
    else if (strcmp(m, "digit_first") == 0)
        walk.name = "2WALK";
    else if (strcmp(m, "null_start") == 0)
        walk.start = NULL;
    else if (strcmp(m, "null_next") == 0)
        walk.next = NULL;
    else if (strcmp(m, "big") == 0)
        walk.plan_size = 4097;
    else if (strcmp(m, "null_def") == 0)
        return h->macro(ctx, NULL);
    else if (strcmp(m, "max") == 0)
        walk.plan_size = 4096;
    return h->macro(ctx, &walk);
}

static void destroy(polis_ctx *ctx, void *state)
{
    mstate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(mparams, "mode", mode, "ok", "what to register"),
    POLIS_P_INT(mparams, "finish_at", finish_at, 0, 1000, 0,
                "position at which an agent terminates (0 = never)"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("macro_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: plans (macro actions)",
    POLIS_DESC_PARAMS(PARAMS, mparams),
    .init = init,
    .start = start,
    .destroy = destroy,
};

POLIS_PLUGIN(DESC)
