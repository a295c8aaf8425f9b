/*
 * metrics — the paper's evaluation metrics (seeds/000 Appendix A.5, specs/adasociety.md
 * §16) for any ruleset, per episode (README.md has every definition and decision):
 *
 *   individual reward   each agent's episode return (after reward sharing), read from the
 *                       env's rewards in an END hook that runs after every other one
 *   fairness            1 − Gini (eq. 2) over the returns; undefined (null) when they sum to 0
 *   oracle              the MILP of seeds/002 eq. 5 (oracle.c, GLPK), solved at create from
 *                       society's content when the scenario loads society
 *   completion rate     per recipe: executions (society's recipe.produced events) ÷ the
 *                       recipe's executions in the oracle's solution
 *   degrees             mean and max in- and out-degree of agent nodes and of group nodes,
 *                       from the social plugin's graph
 *   split ratio         Σ numerator-job weights ÷ Σ denominator-job weights (Carpenter/Miner
 *                       after Negotiation)
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

#include "metrics.h"
#include "oracle.h"
#include "polis/kit.h"
#include "polis/social.h"
#include "society.h"

typedef struct mparams {
    bool oracle;
    int64_t oracle_time_limit;
    const char *split_attribute;
    const char *split_jobs;
} mparams;

typedef struct metrics {
    const polis_host *h;
    polis_ctx *ctx;
    mparams p;
    int32_t n;
    double *ret; /* [n] episode returns */
    int64_t steps;

    const polis_society_api *soc; /* NULL without society */
    int32_t K;
    int64_t *exec; /* [K] executions this episode */
    bool has_oracle;
    double oracle;
    int64_t *oracle_x; /* [K] */
    char oracle_detail[160];

    const polis_social_api *social; /* NULL without social (version 2) */
    int32_t split_attr;
    int32_t max_groups;
    int32_t *groups; /* [max_groups] scratch */
    char num_prefix[64], den_prefix[64];

    polis_metrics_api api;
} metrics;

/* ---- the numbers ---------------------------------------------------------------------- */

typedef struct summary {
    double mean, total, min, max;
    bool fair_ok;
    double fairness;
    bool social;      /* degrees and the split ratio exist */
    bool deg_ok[2];   /* agent, group: at least one node */
    double deg[2][4]; /* in_mean, in_max, out_mean, out_max */
    bool split_ok;
    double split;
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
    if (!m->social) return;
    s->social = true;
    const polis_social_api *g = m->social;
    /* Agents: every agent node. Groups: live groups with at least one edge (an empty group
     * is a slot, not a member of the structure; the paper's Table 9 averages over formed
     * groups). */
    int32_t counts[2] = {0, 0};
    double sums[2][2] = {{0, 0}, {0, 0}}, maxes[2][2] = {{0, 0}, {0, 0}};
    for (int32_t a = 0; a < n; a++) {
        int32_t in = g->degree(g->self, a, true), out = g->degree(g->self, a, false);
        counts[0]++;
        sums[0][0] += in, sums[0][1] += out;
        if (in > maxes[0][0]) maxes[0][0] = in;
        if (out > maxes[0][1]) maxes[0][1] = out;
    }
    int32_t ng = g->groups(g->self, m->groups, m->max_groups);
    if (ng > m->max_groups) ng = m->max_groups;
    for (int32_t i = 0; i < ng; i++) {
        int32_t node = n + m->groups[i];
        int32_t in = g->degree(g->self, node, true), out = g->degree(g->self, node, false);
        if (in <= 0 && out <= 0) continue;
        counts[1]++;
        sums[1][0] += in, sums[1][1] += out;
        if (in > maxes[1][0]) maxes[1][0] = in;
        if (out > maxes[1][1]) maxes[1][1] = out;
    }
    for (int t = 0; t < 2; t++) {
        s->deg_ok[t] = counts[t] > 0;
        if (!counts[t]) continue;
        s->deg[t][0] = sums[t][0] / counts[t];
        s->deg[t][1] = maxes[t][0];
        s->deg[t][2] = sums[t][1] / counts[t];
        s->deg[t][3] = maxes[t][1];
    }
    /* Split ratio: an agent's weight is the sum of its split_attribute weights over its
     * groups, 1 when it is in none (AdaSociety's final_split default). */
    if (m->split_attr < 0) return;
    double num = 0, den = 0;
    int32_t n_num = 0, n_den = 0;
    for (int32_t a = 0; a < n; a++) {
        const char *job = m->soc ? m->soc->agent_job(m->soc->self, a) : NULL;
        if (!job) job = m->h->agent_name(m->ctx, a);
        bool is_num = strncmp(job, m->num_prefix, strlen(m->num_prefix)) == 0;
        bool is_den = strncmp(job, m->den_prefix, strlen(m->den_prefix)) == 0;
        if (!is_num && !is_den) continue;
        int32_t k = g->groups_of(g->self, a, m->split_attr, m->groups, m->max_groups);
        if (k > m->max_groups) k = m->max_groups;
        double w = k > 0 ? 0 : 1;
        for (int32_t i = 0; i < k; i++) {
            double v;
            if (g->get(g->self, n + m->groups[i], a, m->split_attr, &v)) w += v;
        }
        if (is_num) num += w, n_num++;
        if (is_den) den += w, n_den++;
    }
    if (n_num > 0 && n_den > 0 && den != 0) {
        s->split_ok = true;
        s->split = num / den;
    }
}

/* The completion rate of recipe k: false when undefined (no oracle, or the oracle never
 * runs k). */
static bool completion(const metrics *m, int32_t k, double *out)
{
    if (!m->has_oracle || m->oracle_x[k] <= 0) return false;
    *out = (double)m->exec[k] / (double)m->oracle_x[k];
    return true;
}

static bool value_of(const metrics *m, const char *key, double *out)
{
    summary s;
    summarise(m, &s);
    static const char *const DEG[4] = {"in_mean", "in_max", "out_mean", "out_max"};
    if (strcmp(key, "reward.mean") == 0) return *out = s.mean, true;
    if (strcmp(key, "reward.total") == 0) return *out = s.total, true;
    if (strcmp(key, "reward.min") == 0) return *out = s.min, true;
    if (strcmp(key, "reward.max") == 0) return *out = s.max, true;
    if (strcmp(key, "steps") == 0) return *out = (double)m->steps, true;
    if (strcmp(key, "fairness") == 0) return s.fair_ok && (*out = s.fairness, true);
    if (strcmp(key, "oracle") == 0) return m->has_oracle && (*out = m->oracle, true);
    /* The paper's normalised reward (Tables 2, 3, 8): the sum of all agents' returns over the
     * oracle; the per-agent mean over the oracle is N times smaller. */
    if (strcmp(key, "total_reward_normalised") == 0 || strcmp(key, "total_normalised") == 0)
        return m->has_oracle && m->oracle != 0 && (*out = s.total / m->oracle, true);
    if (strcmp(key, "mean_reward_normalised") == 0 || strcmp(key, "reward_normalised") == 0)
        return m->has_oracle && m->oracle != 0 && (*out = s.mean / m->oracle, true);
    if (strcmp(key, "split_ratio") == 0) return s.split_ok && (*out = s.split, true);
    if (strncmp(key, "completion.", 11) == 0 && m->soc) {
        int32_t k = m->soc->recipe_find(m->soc->self, key + 11);
        return k >= 0 && k < m->K && completion(m, k, out);
    }
    if (strncmp(key, "executions.", 11) == 0 && m->soc) {
        int32_t k = m->soc->recipe_find(m->soc->self, key + 11);
        return k >= 0 && k < m->K && (*out = (double)m->exec[k], true);
    }
    for (int t = 0; t < 2 && s.social; t++) {
        const char *pre = t ? "degree.group." : "degree.agent.";
        if (strncmp(key, pre, 13) != 0) continue;
        for (int i = 0; i < 4; i++)
            if (strcmp(key + 13, DEG[i]) == 0) return s.deg_ok[t] && (*out = s.deg[t][i], true);
    }
    return false;
}

/* ---- the "metrics" rendering ---------------------------------------------------------- */

/* JSON numbers: integers exactly, others with 10 significant digits, non-finite as null. */
static void num(const metrics *m, polis_text *t, bool ok, double v)
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
static void str(const metrics *m, polis_text *t, const char *s)
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
    num(m, t, true, s.mean);
    h->text_printf(t, ", \"total\": ");
    num(m, t, true, s.total);
    h->text_printf(t, ", \"min\": ");
    num(m, t, true, s.min);
    h->text_printf(t, ", \"max\": ");
    num(m, t, true, s.max);
    h->text_printf(t, "}, \"per_agent\": [");
    for (int32_t a = 0; a < m->n; a++) {
        h->text_printf(t, "%s{\"agent\": ", a ? ", " : "");
        str(m, t, h->agent_name(ctx, a));
        h->text_printf(t, ", \"reward\": ");
        num(m, t, true, m->ret[a]);
        h->text_append(t, "}", 1);
    }
    h->text_printf(t, "], \"fairness\": ");
    num(m, t, s.fair_ok, s.fairness);
    h->text_printf(t, ", \"oracle\": ");
    num(m, t, m->has_oracle, m->oracle);
    h->text_printf(t, ", \"total_reward_normalised\": ");
    num(m, t, m->has_oracle && m->oracle != 0, m->oracle ? s.total / m->oracle : 0);
    h->text_printf(t, ", \"mean_reward_normalised\": ");
    num(m, t, m->has_oracle && m->oracle != 0, m->oracle ? s.mean / m->oracle : 0);
    if (m->soc) {
        h->text_printf(t, ", \"completion\": {");
        for (int32_t k = 0; k < m->K; k++) {
            double c = 0;
            bool ok = completion(m, k, &c);
            h->text_printf(t, "%s", k ? ", " : "");
            str(m, t, m->soc->recipe_name(m->soc->self, k));
            h->text_printf(t, ": ");
            num(m, t, ok, c);
        }
        h->text_printf(t, "}, \"recipes\": [");
        for (int32_t k = 0; k < m->K; k++) {
            double c = 0;
            bool ok = completion(m, k, &c);
            h->text_printf(t, "%s{\"name\": ", k ? ", " : "");
            str(m, t, m->soc->recipe_name(m->soc->self, k));
            h->text_printf(t, ", \"executions\": %lld, \"oracle\": ", (long long)m->exec[k]);
            num(m, t, m->has_oracle, m->has_oracle ? (double)m->oracle_x[k] : 0);
            h->text_printf(t, ", \"completion\": ");
            num(m, t, ok, c);
            h->text_append(t, "}", 1);
        }
        h->text_append(t, "]", 1);
        if (!m->has_oracle && m->oracle_detail[0]) {
            h->text_printf(t, ", \"oracle_status\": ");
            str(m, t, m->oracle_detail);
        }
    }
    if (s.social) {
        static const char *const DEG[4] = {"in_mean", "in_max", "out_mean", "out_max"};
        h->text_printf(t, ", \"degree\": {");
        for (int k = 0; k < 2; k++) {
            h->text_printf(t, "%s\"%s\": {", k ? ", " : "", k ? "group" : "agent");
            for (int i = 0; i < 4; i++) {
                h->text_printf(t, "%s\"%s\": ", i ? ", " : "", DEG[i]);
                num(m, t, s.deg_ok[k], s.deg[k][i]);
            }
            h->text_append(t, "}", 1);
        }
        h->text_printf(t, "}, \"split_ratio\": ");
        num(m, t, s.split_ok, s.split);
    }
    h->text_append(t, "}", 1);
    return POLIS_OK;
}

/* ---- the step loop ------------------------------------------------------------------------ */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    metrics *m = ud;
    memset(m->ret, 0, sizeof *m->ret * (size_t)m->n);
    if (m->K) memset(m->exec, 0, sizeof *m->exec * (size_t)m->K);
    m->steps = 0;
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

/* society's recipe.produced {agent, recipe, x, y}, all i32 (rulesets/society/README.md). */
static polis_status on_produced(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    metrics *m = ud;
    int32_t k;
    memcpy(&k, (const char *)ev->data + sizeof(int32_t), sizeof k);
    if (k >= 0 && k < m->K) m->exec[k]++;
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
    metrics *m = self;
    if (!m->has_oracle || k < 0 || k >= m->K) return false;
    if (value) *value = m->oracle;
    if (executions) *executions = m->oracle_x[k];
    return true;
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

/* ---- the oracle --------------------------------------------------------------------------- */

static void *oalloc(void *ud, size_t size)
{
    metrics *m = ud;
    return m->h->alloc(m->ctx, size);
}
static void ofree(void *ud, void *p, size_t size)
{
    metrics *m = ud;
    m->h->free(m->ctx, p, size);
}

static polis_status solve_oracle(metrics *m)
{
    const polis_society_api *soc = m->soc;
    int32_t R = soc->n_resources(soc->self), K = m->K, n = m->n;
    /* The longest amounts list sizes the scratch lists. */
    int32_t L = 1;
    for (int32_t r = 0; r < R; r++) {
        int32_t c = soc->amounts(soc->self, POLIS_SOCIETY_SEE, r, NULL, NULL, 0);
        if (c > L) L = c;
    }
    for (int32_t k = 0; k < K; k++)
        for (int w = POLIS_SOCIETY_IN; w <= POLIS_SOCIETY_REQ; w++) {
            int32_t c = soc->amounts(soc->self, w, k, NULL, NULL, 0);
            if (c > L) L = c;
        }
    size_t rr = (size_t)R, kr = (size_t)K * rr;
    size_t bytes = sizeof(double) * rr * 2 + sizeof(int32_t) * (kr * 3 + rr * rr) +
                   sizeof(int32_t) * 2 * (size_t)L + (size_t)K + rr;
    char *buf = m->h->alloc(m->ctx, bytes);
    if (!buf) return POLIS_ERR_NOMEM;
    double *initial = (double *)(void *)buf, *value = initial + rr;
    int32_t *in = (int32_t *)(void *)(value + rr), *out = in + kr, *req = out + kr, *see = req + kr,
            *res = see + rr * rr, *units = res + L;
    uint8_t *usable = (uint8_t *)(units + L), *reachable = usable + K;
    for (int32_t r = 0; r < R; r++) {
        initial[r] = (double)soc->initial_amount(soc->self, r);
        /* v_k: the most any player's job values a unit (the oracle is one agent with every
         * skill). */
        double best = 0;
        for (int32_t a = 0; a < n; a++) {
            double v = soc->unit_value(soc->self, a, r);
            if (a == 0 || v > best) best = v;
        }
        value[r] = best;
        reachable[r] = 1;
        int32_t c = soc->amounts(soc->self, POLIS_SOCIETY_SEE, r, res, units, L);
        for (int32_t i = 0; i < c && i < L; i++) {
            if (res[i] < 0)
                reachable[r] = 0;
            else
                see[(size_t)r * rr + (size_t)res[i]] += units[i];
        }
    }
    static const int WHICH[3] = {POLIS_SOCIETY_IN, POLIS_SOCIETY_OUT, POLIS_SOCIETY_REQ};
    for (int32_t k = 0; k < K; k++) {
        usable[k] = soc->recipe_stations(soc->self, k) > 0;
        for (int w = 0; w < 3; w++) {
            int32_t *dst = (w == 0 ? in : w == 1 ? out : req) + (size_t)k * rr;
            int32_t c = soc->amounts(soc->self, WHICH[w], k, res, units, L);
            for (int32_t i = 0; i < c && i < L; i++) {
                if (res[i] < 0)
                    usable[k] = 0;
                else
                    dst[res[i]] += units[i];
            }
        }
    }
    oracle_problem p = {.R = R,
                        .K = K,
                        .initial = initial,
                        .value = value,
                        .in = in,
                        .out = out,
                        .req = req,
                        .see = see,
                        .usable = usable,
                        .reachable = reachable,
                        .time_limit_ms = (int32_t)(m->p.oracle_time_limit * 1000)};
    oracle_alloc al = {oalloc, ofree, m};
    oracle_status st =
        oracle_solve(&p, &al, &m->oracle, m->oracle_x, m->oracle_detail, sizeof m->oracle_detail);
    m->h->free(m->ctx, buf, bytes);
    if (st == ORACLE_NOMEM) return POLIS_ERR_NOMEM;
    m->has_oracle = st == ORACLE_OPTIMAL;
    if (m->has_oracle) {
        m->oracle_detail[0] = '\0';
        m->h->log(m->ctx, "oracle: %.10g", m->oracle);
    } else {
        m->h->log(m->ctx, "oracle: no value (%s)", m->oracle_detail);
    }
    return POLIS_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

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
    m->split_attr = -1;
    const char *comma = strchr(m->p.split_jobs, ',');
    size_t a = comma ? (size_t)(comma - m->p.split_jobs) : 0;
    if (!comma || a == 0 || a >= sizeof m->num_prefix || strlen(comma + 1) == 0 ||
        strlen(comma + 1) >= sizeof m->den_prefix || strchr(comma + 1, ',')) {
        h->error(ctx,
                 "params.split_jobs: expected two job-name prefixes \"numerator,"
                 "denominator\" of 1 to 63 characters, got \"%s\"",
                 m->p.split_jobs);
        return POLIS_ERR_CONFIG;
    }
    memcpy(m->num_prefix, m->p.split_jobs, a);
    snprintf(m->den_prefix, sizeof m->den_prefix, "%s", comma + 1);
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
    const polis_host *h = m->h;
    polis_status st;
    const polis_society_api *soc = h->service(ctx, POLIS_SOCIETY_SERVICE);
    if (soc && soc->struct_size >= offsetof(polis_society_api, agent_job) + sizeof soc->agent_job) {
        if (!soc->agent_job(soc->self, 0)) {
            h->error(ctx, "list \"metrics\" after \"society\" in the scenario's plugins: the "
                          "oracle is computed from society's content when metrics starts");
            return POLIS_ERR_CONFIG;
        }
        m->soc = soc;
        m->K = soc->n_recipes(soc->self);
        if (m->K > 0 && (!(m->exec = h->alloc(ctx, sizeof *m->exec * (size_t)m->K)) ||
                         !(m->oracle_x = h->alloc(ctx, sizeof *m->oracle_x * (size_t)m->K))))
            return POLIS_ERR_NOMEM;
        if (h->event_find(ctx, "recipe.produced") >= 0 &&
            (st = h->subscribe(ctx, "recipe.produced", 0, on_produced, m)))
            return st;
        if (m->p.oracle && (st = solve_oracle(m))) return st;
    }
    const polis_social_api *g = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (g && g->struct_size >= offsetof(polis_social_api, degree) + sizeof g->degree) {
        m->social = g;
        m->max_groups = g->max_groups(g->self);
        if (!(m->groups = h->alloc(ctx, sizeof *m->groups * (size_t)(m->max_groups + 1))))
            return POLIS_ERR_NOMEM;
        m->split_attr = g->attr_id(g->self, m->p.split_attribute);
        if (m->split_attr < 0) {
            h->error(ctx, "params.split_attribute: \"%s\" is not a valid attribute name",
                     m->p.split_attribute);
            return POLIS_ERR_CONFIG;
        }
    }
    return POLIS_OK;
}

static void metrics_destroy(polis_ctx *ctx, void *state)
{
    metrics *m = state;
    if (!m) return;
    const polis_host *h = m->h;
    h->free(ctx, m->ret, sizeof *m->ret * (size_t)(m->n ? m->n : 1));
    if (m->exec) h->free(ctx, m->exec, sizeof *m->exec * (size_t)m->K);
    if (m->oracle_x) h->free(ctx, m->oracle_x, sizeof *m->oracle_x * (size_t)m->K);
    if (m->groups) h->free(ctx, m->groups, sizeof *m->groups * (size_t)(m->max_groups + 1));
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
