/*
 * crasher — a test plugin that crashes on purpose, for `polis serve --isolate`
 * (tests/cli/serve_limits.py): one client's plugin crash must end that client's session
 * only.
 *
 * Each agent has a counter: "count" adds one to it (observation "count"). "crash" kills the
 * process with SIGSEGV, as a plugin with a wild pointer would. It restores the default
 * action first so the death is the same in every build: the sanitizers install a SIGSEGV
 * handler that would otherwise turn it into a report and exit status 1.
 */
#include <signal.h>
#include <string.h>

#include "polis/kit.h"

#define MAX_AGENTS 64

typedef struct cstate {
    const polis_host *h;
    int32_t counts[MAX_AGENTS];
} cstate;

static polis_status count(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx;
    (void)arg;
    cstate *s = ud;
    s->counts[agent]++;
    return POLIS_OK;
}

static polis_status crash(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx;
    (void)ud;
    (void)agent;
    (void)arg;
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    return POLIS_ERR_PLUGIN; /* not reached */
}

static void write_count(polis_ctx *ctx, void *ud, int32_t agent, void *out)
{
    (void)ctx;
    cstate *s = ud;
    memcpy(out, &s->counts[agent], sizeof(int32_t));
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    cstate *s = ud;
    memset(s->counts, 0, sizeof s->counts);
    return POLIS_OK;
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    (void)params;
    if (h->n_agents(ctx) > MAX_AGENTS) {
        h->error(ctx, "at most %d agents", MAX_AGENTS);
        return POLIS_ERR_CONFIG;
    }
    cstate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    *state = s;
    s->h = h;
    polis_action_def c = {
        .name = "count", .doc = "adds one to the counter", .handler = count, .ud = s};
    polis_action_def x = {
        .name = "crash", .doc = "kills the process (SIGSEGV)", .handler = crash, .ud = s};
    polis_obs_def o = {.name = "count",
                       .dtype = POLIS_DTYPE_I32,
                       .ndim = 1,
                       .shape = {1},
                       .write = write_count,
                       .ud = s};
    polis_status st;
    if ((st = h->action(ctx, &c, NULL)) || (st = h->action(ctx, &x, NULL)) ||
        (st = h->observation(ctx, &o, NULL)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, s)))
        return st;
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    cstate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("crasher", 7),
    .version = "1.0.0",
    .doc = "test plugin: an action that crashes the process",
    .init = init,
    .destroy = destroy,
};

POLIS_PLUGIN(DESC)
