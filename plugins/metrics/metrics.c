/*
 * metrics — evaluation metrics per episode (README.md has every definition and decision), in
 * two parts that share internal.h:
 *
 *   metrics.c      the plugin, and what any game can use: each agent's return (read from the
 *                  env's rewards in an END hook that runs after every other one), their mean,
 *                  total, minimum and maximum, fairness (1 − Gini, the paper's eq. 2; null
 *                  when the returns sum to 0), the steps, and how often each event type
 *                  named in count_events was published
 *   adasociety.c   AdaSociety's (seeds/000 Appendix A.5): the oracle and the normalised
 *                  rewards, completion rates, degrees, the split ratio — read through the
 *                  public services of society and social when the scenario loads them
 *
 * Reading them: the "metrics" renderer (one JSON object; polis_env_render(env, 0, "metrics")
 * — the agent argument is ignored), the "metrics" service (polis/metrics.h) and the export
 * metrics.value(key). The step loop only adds rewards and counts events: nothing is
 * allocated after create.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "polis/kit.h"

/* ---- the numbers ---------------------------------------------------------------------- */

typedef struct summary {
    double mean, total, min, max;
    bool fair_ok;
    double fairness;
} summary;

static void summarise(const metrics *m, summary *s)
{
    memset(s, 0, sizeof *s);
    int32_t n = m->n;
    s->min = s->max = n ? m->ret[0] : 0;
    for (int32_t a = 0; a < n; a++) {
        s->total += m->ret[a];
        if (m->ret[a] < s->min) s->min = m->ret[a];
        if (m->ret[a] > s->max) s->max = m->ret[a];
    }
    s->mean = n ? s->total / n : 0;
    /* Eq. 2: F = 1 − Σ_i Σ_j |R_i − R_j| / (2 N Σ_i R_i), undefined for Σ R = 0. Rewards are
     * float32 and group shares (1/3, 0.85) do not cancel exactly, so a sum within 1e-6 of
     * Σ |R_i| counts as 0, and so does a sum below 1e-6 outright (every return rounding
     * noise, e.g. a pick and a dump shared at unequal weights): dividing by noise would give
     * fairness of -10^7 or 1.97. */
    double abs_sum = 0;
    for (int32_t a = 0; a < n; a++) abs_sum += fabs(m->ret[a]);
    if (n > 0 && fabs(s->total) > 1e-6 && fabs(s->total) > 1e-6 * abs_sum) {
        double diff = 0;
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++) diff += fabs(m->ret[i] - m->ret[j]);
        s->fair_ok = true;
        s->fairness = 1.0 - diff / (2.0 * n * s->total);
    }
}

static bool value_of(const metrics *m, const char *key, double *out)
{
    summary s;
    summarise(m, &s);
    if (strcmp(key, "reward.mean") == 0) return *out = s.mean, true;
    if (strcmp(key, "reward.total") == 0) return *out = s.total, true;
    if (strcmp(key, "reward.min") == 0) return *out = s.min, true;
    if (strcmp(key, "reward.max") == 0) return *out = s.max, true;
    if (strcmp(key, "steps") == 0) return *out = (double)m->steps, true;
    if (strcmp(key, "fairness") == 0) return s.fair_ok && (*out = s.fairness, true);
    if (strncmp(key, "events.", 7) == 0)
        for (int32_t i = 0; i < m->n_counts; i++)
            if (strcmp(key + 7, m->counts[i].name) == 0) return *out = (double)m->counts[i].n, true;
    return metrics_ada_value(m, key, s.mean, s.total, out);
}

/* ---- the "metrics" rendering ---------------------------------------------------------- */

void metrics_num(const metrics *m, polis_text *t, bool ok, double v)
{
    const polis_host *h = m->h;
    if (!ok || !isfinite(v))
        h->text_append(t, "null", 4);
    else if (v == floor(v) && fabs(v) < 1e15)
        h->text_printf(t, "%.0f", v);
    else
        h->text_printf(t, "%.10g", v);
}

/* Names here are [a-z0-9_] (society, the kernel's agent names are checked too), except
 * agent names, which are quoted with the JSON escapes they may need. */
void metrics_str(const metrics *m, polis_text *t, const char *s)
{
    const polis_host *h = m->h;
    h->text_append(t, "\"", 1);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            h->text_printf(t, "\\%c", c);
        else if (c < 0x20)
            h->text_printf(t, "\\u%04x", c);
        else
            h->text_append(t, p, 1);
    }
    h->text_append(t, "\"", 1);
}

static polis_status render(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    metrics *m = ud;
    const polis_host *h = m->h;
    summary s;
    summarise(m, &s);
    h->text_printf(t, "{\"episode\": %lld, \"steps\": %lld, \"reward\": {\"mean\": ",
                   (long long)h->episode(ctx), (long long)m->steps);
    metrics_num(m, t, true, s.mean);
    h->text_printf(t, ", \"total\": ");
    metrics_num(m, t, true, s.total);
    h->text_printf(t, ", \"min\": ");
    metrics_num(m, t, true, s.min);
    h->text_printf(t, ", \"max\": ");
    metrics_num(m, t, true, s.max);
    h->text_printf(t, "}, \"per_agent\": [");
    for (int32_t a = 0; a < m->n; a++) {
        h->text_printf(t, "%s{\"agent\": ", a ? ", " : "");
        metrics_str(m, t, h->agent_name(ctx, a));
        h->text_printf(t, ", \"reward\": ");
        metrics_num(m, t, true, m->ret[a]);
        h->text_append(t, "}", 1);
    }
    h->text_printf(t, "], \"fairness\": ");
    metrics_num(m, t, s.fair_ok, s.fairness);
    metrics_ada_render(m, t, s.mean, s.total);
    if (m->n_counts) {
        h->text_printf(t, ", \"events\": {");
        for (int32_t i = 0; i < m->n_counts; i++) {
            h->text_printf(t, "%s", i ? ", " : "");
            metrics_str(m, t, m->counts[i].name);
            h->text_printf(t, ": %lld", (long long)m->counts[i].n);
        }
        h->text_append(t, "}", 1);
    }
    h->text_append(t, "}", 1);
    return POLIS_OK;
}

/* ---- the step loop ------------------------------------------------------------------------ */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    metrics *m = ud;
    memset(m->ret, 0, sizeof *m->ret * (size_t)m->n);
    m->steps = 0;
    for (int32_t i = 0; i < m->n_counts; i++) m->counts[i].n = 0;
    metrics_ada_reset(m);
    return POLIS_OK;
}

/* Runs after every other END hook: the rewards are final (shared, transformed). */
static polis_status on_end(polis_ctx *ctx, void *ud)
{
    metrics *m = ud;
    const polis_io *io = m->h->io(ctx);
    for (int32_t a = 0; a < m->n; a++) m->ret[a] += io->rewards[a];
    m->steps = m->h->tick(ctx) + 1;
    return POLIS_OK;
}

static polis_status on_counted(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    metrics_count *c = ud;
    (void)ctx, (void)ev;
    c->n++;
    return POLIS_OK;
}

/* ---- service and export --------------------------------------------------------------------- */

static bool api_value(void *self, const char *key, double *out)
{
    double v;
    if (!key || !value_of(self, key, &v)) return false;
    if (out) *out = v;
    return true;
}

static bool api_oracle(void *self, int32_t k, double *value, int64_t *executions)
{
    return metrics_ada_oracle(self, k, value, executions);
}

static double x_value(polis_ctx *ctx, const char *key)
{
    double v;
    return key && value_of(polis_ctx_state(ctx), key, &v) ? v : NAN;
}

static const polis_export EXPORTS[] = {
    POLIS_EXPORT_FN("value", "f64(ctx,str)", x_value,
                    "value(key): a metric of the episode so far (\"fairness\", \"reward.mean\", "
                    "\"completion.hammer_craft\", ...); NaN when unknown or undefined"),
};

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* count_events: event type names separated by commas (blanks around them ignored). */
static polis_status parse_counts(metrics *m)
{
    const polis_host *h = m->h;
    const char *p = m->p.count_events;
    while (*p == ' ') p++;
    if (!*p) return POLIS_OK;
    int32_t n = 1;
    for (const char *q = p; *q; q++) n += *q == ',';
    if (n > METRICS_MAX_EVENTS) {
        h->error(m->ctx, "params.count_events: %d names, at most %d", n, METRICS_MAX_EVENTS);
        return POLIS_ERR_CONFIG;
    }
    if (!(m->counts = h->alloc(m->ctx, sizeof *m->counts * (size_t)n))) return POLIS_ERR_NOMEM;
    m->n_counts = n;
    for (int32_t i = 0; i < n; i++) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, ",");
        const char *next = p + len + (p[len] == ',');
        while (len > 0 && p[len - 1] == ' ') len--;
        if (len == 0 || len >= METRICS_EVENT_NAME) {
            h->error(m->ctx,
                     "params.count_events: name %d of \"%s\" is %s (event type names have 1 "
                     "to %d characters)",
                     i + 1, m->p.count_events, len ? "too long" : "empty", METRICS_EVENT_NAME - 1);
            return POLIS_ERR_CONFIG;
        }
        metrics_count *c = &m->counts[i];
        memcpy(c->name, p, len);
        for (int32_t j = 0; j < i; j++)
            if (strcmp(m->counts[j].name, c->name) == 0) {
                h->error(m->ctx, "params.count_events: \"%s\" is named twice", c->name);
                return POLIS_ERR_CONFIG;
            }
        p = next;
    }
    return POLIS_OK;
}

/* The counted event types exist once every plugin has registered its own. */
static polis_status subscribe_counts(metrics *m)
{
    const polis_host *h = m->h;
    polis_status st;
    for (int32_t i = 0; i < m->n_counts; i++) {
        if (h->event_find(m->ctx, m->counts[i].name) < 0) {
            h->error(m->ctx,
                     "params.count_events: no event type \"%s\" in this scenario (`polis "
                     "describe` lists them)",
                     m->counts[i].name);
            return POLIS_ERR_CONFIG;
        }
        if ((st = h->subscribe(m->ctx, m->counts[i].name, 0, on_counted, &m->counts[i]))) return st;
    }
    return POLIS_OK;
}

static polis_status metrics_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                 void **state)
{
    metrics *m = h->alloc(ctx, sizeof *m);
    if (!m) return POLIS_ERR_NOMEM;
    *state = m;
    m->h = h;
    m->ctx = ctx;
    memcpy(&m->p, params, sizeof m->p);
    m->n = h->n_agents(ctx);
    polis_status ada = metrics_ada_init(m);
    if (ada == POLIS_OK) ada = parse_counts(m);
    if (ada != POLIS_OK) return ada;
    if (!(m->ret = h->alloc(ctx, sizeof *m->ret * (size_t)(m->n ? m->n : 1))))
        return POLIS_ERR_NOMEM;
    m->api = (polis_metrics_api){.version = POLIS_METRICS_VERSION,
                                 .struct_size = sizeof(polis_metrics_api),
                                 .self = m,
                                 .value = api_value,
                                 .oracle = api_oracle};
    polis_status st;
    if ((st = h->service_provide(ctx, POLIS_METRICS_SERVICE, &m->api)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, m)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, INT32_MAX, on_end, m)) ||
        (st = h->renderer(ctx, "metrics", render, m)))
        return st;
    return POLIS_OK;
}

static polis_status metrics_start(polis_ctx *ctx, void *state)
{
    metrics *m = state;
    polis_status st = subscribe_counts(m);
    (void)ctx;
    return st ? st : metrics_ada_start(m);
}

static void metrics_destroy(polis_ctx *ctx, void *state)
{
    metrics *m = state;
    if (!m) return;
    const polis_host *h = m->h;
    metrics_ada_destroy(m);
    if (m->counts) h->free(ctx, m->counts, sizeof *m->counts * (size_t)m->n_counts);
    if (m->ret) h->free(ctx, m->ret, sizeof *m->ret * (size_t)(m->n ? m->n : 1));
    h->free(ctx, m, sizeof *m);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_BOOL(
        mparams, "oracle", oracle, true,
        "solve the oracle MILP at create when the scenario loads society (completion rates and "
        "normalised rewards need it)"),
    POLIS_P_INT(mparams, "oracle_time_limit", oracle_time_limit, 1, 3600, 60,
                "seconds GLPK may spend on the oracle; past it the oracle is undefined (null)"),
    POLIS_P_STRING(
        mparams, "split_attribute", split_attribute, "score",
        "the membership attribute whose weights give the split ratio (Negotiation's \"score\")"),
    POLIS_P_STRING(
        mparams, "split_jobs", split_jobs, "carpenter,miner",
        "\"numerator,denominator\": job-name prefixes (agent-name prefixes without society) of "
        "the split ratio"),
    POLIS_P_STRING(mparams, "count_events", count_events, "",
                   "event types whose publications each episode counts (\"events.<name>\"), "
                   "separated by commas"),
};

static const polis_plugin_desc METRICS = {
    POLIS_DESC_HEAD("metrics", 1),
    .version = "1.0.0",
    .doc = "the paper's evaluation metrics per episode: individual reward, fairness, the "
           "oracle and completion rates, degrees, split ratio (plugins/metrics/README.md)",
    .requires = NULL,
    POLIS_DESC_PARAMS(PARAMS, mparams),
    .init = metrics_init,
    .start = metrics_start,
    .destroy = metrics_destroy,
    POLIS_DESC_EXPORTS(EXPORTS),
};

POLIS_PLUGIN(METRICS)
