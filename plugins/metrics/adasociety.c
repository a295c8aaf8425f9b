/*
 * adasociety.c — AdaSociety's evaluation metrics (seeds/000 Appendix A.5, specs/adasociety.md
 * §16; README.md has every definition and decision), read through the public services of
 * the society ruleset (polis/society.h) and the social plugin (polis/social.h) when the
 * scenario loads them:
 *
 *   oracle              the MILP of seeds/002 eq. 5 (core.h; oracle.c solves it with GLPK),
 *                       solved at start from society's content; off in a build without GLPK
 *   normalised rewards  the returns' total and mean over the oracle
 *   completion rate     per recipe: executions (society's recipe.produced events) ÷ the
 *                       recipe's executions in the oracle's solution
 *   degrees             mean and max in- and out-degree of agent nodes and of group nodes,
 *                       from the social plugin's graph
 *   split ratio         Σ numerator-job weights ÷ Σ denominator-job weights (Carpenter/Miner
 *                       after Negotiation)
 *
 * The step loop only counts recipe.produced events: nothing is allocated after create.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "internal.h"
#include "polis/social.h"
#include "polis/society.h"

struct metrics_ada {
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
};

/* ---- the numbers ---------------------------------------------------------------------- */

typedef struct graph_summary {
    bool deg_ok[2];   /* agent, group: at least one node */
    double deg[2][4]; /* in_mean, in_max, out_mean, out_max */
    bool split_ok;
    double split;
} graph_summary;

static const char *const DEG[4] = {"in_mean", "in_max", "out_mean", "out_max"};

/* Degrees and the split ratio of the social graph as it is now (social loaded). */
static void summarise_graph(const metrics *m, graph_summary *s)
{
    memset(s, 0, sizeof *s);
    const metrics_ada *x = m->ada;
    const polis_social_api *g = x->social;
    int32_t n = m->n;
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
    int32_t ng = g->groups(g->self, x->groups, x->max_groups);
    if (ng > x->max_groups) ng = x->max_groups;
    for (int32_t i = 0; i < ng; i++) {
        int32_t node = n + x->groups[i];
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
    if (x->split_attr < 0) return;
    double num = 0, den = 0;
    int32_t n_num = 0, n_den = 0;
    for (int32_t a = 0; a < n; a++) {
        const char *job = x->soc ? x->soc->agent_job(x->soc->self, a) : NULL;
        if (!job) job = m->h->agent_name(m->ctx, a);
        bool is_num = strncmp(job, x->num_prefix, strlen(x->num_prefix)) == 0;
        bool is_den = strncmp(job, x->den_prefix, strlen(x->den_prefix)) == 0;
        if (!is_num && !is_den) continue;
        int32_t k = g->groups_of(g->self, a, x->split_attr, x->groups, x->max_groups);
        if (k > x->max_groups) k = x->max_groups;
        double w = k > 0 ? 0 : 1;
        for (int32_t i = 0; i < k; i++) {
            double v;
            if (g->get(g->self, n + x->groups[i], a, x->split_attr, &v)) w += v;
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
static bool completion(const metrics_ada *x, int32_t k, double *out)
{
    if (!x->has_oracle || x->oracle_x[k] <= 0) return false;
    *out = (double)x->exec[k] / (double)x->oracle_x[k];
    return true;
}

bool metrics_ada_value(const metrics *m, const char *key, double mean, double total, double *out)
{
    const metrics_ada *x = m->ada;
    if (strcmp(key, "oracle") == 0) return x->has_oracle && (*out = x->oracle, true);
    /* The paper's normalised reward (Tables 2, 3, 8): the sum of all agents' returns over the
     * oracle; the per-agent mean over the oracle is N times smaller. */
    if (strcmp(key, "total_reward_normalised") == 0 || strcmp(key, "total_normalised") == 0)
        return x->has_oracle && x->oracle != 0 && (*out = total / x->oracle, true);
    if (strcmp(key, "mean_reward_normalised") == 0 || strcmp(key, "reward_normalised") == 0)
        return x->has_oracle && x->oracle != 0 && (*out = mean / x->oracle, true);
    if (strncmp(key, "completion.", 11) == 0 && x->soc) {
        int32_t k = x->soc->recipe_find(x->soc->self, key + 11);
        return k >= 0 && k < x->K && completion(x, k, out);
    }
    if (strncmp(key, "executions.", 11) == 0 && x->soc) {
        int32_t k = x->soc->recipe_find(x->soc->self, key + 11);
        return k >= 0 && k < x->K && (*out = (double)x->exec[k], true);
    }
    if (!x->social) return false;
    graph_summary s;
    summarise_graph(m, &s);
    if (strcmp(key, "split_ratio") == 0) return s.split_ok && (*out = s.split, true);
    for (int t = 0; t < 2; t++) {
        const char *pre = t ? "degree.group." : "degree.agent.";
        if (strncmp(key, pre, 13) != 0) continue;
        for (int i = 0; i < 4; i++)
            if (strcmp(key + 13, DEG[i]) == 0) return s.deg_ok[t] && (*out = s.deg[t][i], true);
    }
    return false;
}

bool metrics_ada_oracle(const metrics *m, int32_t k, double *value, int64_t *executions)
{
    const metrics_ada *x = m->ada;
    if (!x->has_oracle || k < 0 || k >= x->K) return false;
    if (value) *value = x->oracle;
    if (executions) *executions = x->oracle_x[k];
    return true;
}

/* ---- the rendering ------------------------------------------------------------------------ */

void metrics_ada_render(const metrics *m, polis_text *t, double mean, double total)
{
    const polis_host *h = m->h;
    const metrics_ada *x = m->ada;
    h->text_printf(t, ", \"oracle\": ");
    metrics_num(m, t, x->has_oracle, x->oracle);
    h->text_printf(t, ", \"total_reward_normalised\": ");
    metrics_num(m, t, x->has_oracle && x->oracle != 0, x->oracle ? total / x->oracle : 0);
    h->text_printf(t, ", \"mean_reward_normalised\": ");
    metrics_num(m, t, x->has_oracle && x->oracle != 0, x->oracle ? mean / x->oracle : 0);
    if (x->soc) {
        h->text_printf(t, ", \"completion\": {");
        for (int32_t k = 0; k < x->K; k++) {
            double c = 0;
            bool ok = completion(x, k, &c);
            h->text_printf(t, "%s", k ? ", " : "");
            metrics_str(m, t, x->soc->recipe_name(x->soc->self, k));
            h->text_printf(t, ": ");
            metrics_num(m, t, ok, c);
        }
        h->text_printf(t, "}, \"recipes\": [");
        for (int32_t k = 0; k < x->K; k++) {
            double c = 0;
            bool ok = completion(x, k, &c);
            h->text_printf(t, "%s{\"name\": ", k ? ", " : "");
            metrics_str(m, t, x->soc->recipe_name(x->soc->self, k));
            h->text_printf(t, ", \"executions\": %lld, \"oracle\": ", (long long)x->exec[k]);
            metrics_num(m, t, x->has_oracle, x->has_oracle ? (double)x->oracle_x[k] : 0);
            h->text_printf(t, ", \"completion\": ");
            metrics_num(m, t, ok, c);
            h->text_append(t, "}", 1);
        }
        h->text_append(t, "]", 1);
        if (!x->has_oracle && x->oracle_detail[0]) {
            h->text_printf(t, ", \"oracle_status\": ");
            metrics_str(m, t, x->oracle_detail);
        }
    }
    if (x->social) {
        graph_summary s;
        summarise_graph(m, &s);
        h->text_printf(t, ", \"degree\": {");
        for (int k = 0; k < 2; k++) {
            h->text_printf(t, "%s\"%s\": {", k ? ", " : "", k ? "group" : "agent");
            for (int i = 0; i < 4; i++) {
                h->text_printf(t, "%s\"%s\": ", i ? ", " : "", DEG[i]);
                metrics_num(m, t, s.deg_ok[k], s.deg[k][i]);
            }
            h->text_append(t, "}", 1);
        }
        h->text_printf(t, "}, \"split_ratio\": ");
        metrics_num(m, t, s.split_ok, s.split);
    }
}

/* ---- the step loop ------------------------------------------------------------------------ */

void metrics_ada_reset(metrics *m)
{
    metrics_ada *x = m->ada;
    if (x->K) memset(x->exec, 0, sizeof *x->exec * (size_t)x->K);
}

/* society's recipe.produced {agent, recipe, x, y}, all i32 (rulesets/society/README.md). */
static polis_status on_produced(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    metrics_ada *x = ud;
    int32_t k;
    (void)ctx;
    memcpy(&k, (const char *)ev->data + sizeof(int32_t), sizeof k);
    if (k >= 0 && k < x->K) x->exec[k]++;
    return POLIS_OK;
}

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
    metrics_ada *x = m->ada;
    const polis_society_api *soc = x->soc;
    int32_t R = soc->n_resources(soc->self), K = x->K, n = m->n;
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
        oracle_solve(&p, &al, &x->oracle, x->oracle_x, x->oracle_detail, sizeof x->oracle_detail);
    m->h->free(m->ctx, buf, bytes);
    if (st == ORACLE_NOMEM) return POLIS_ERR_NOMEM;
    x->has_oracle = st == ORACLE_OPTIMAL;
    if (x->has_oracle) {
        x->oracle_detail[0] = '\0';
        m->h->log(m->ctx, "oracle: %.10g", x->oracle);
    } else if (st == ORACLE_UNAVAILABLE) {
        m->h->log(m->ctx, "oracle: %s", x->oracle_detail);
    } else {
        m->h->log(m->ctx, "oracle: no value (%s)", x->oracle_detail);
    }
    return POLIS_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

polis_status metrics_ada_init(metrics *m)
{
    const polis_host *h = m->h;
    metrics_ada *x = h->alloc(m->ctx, sizeof *x);
    if (!x) return POLIS_ERR_NOMEM;
    m->ada = x;
    x->split_attr = -1;
    const char *split_jobs = m->p.split_jobs;
    const char *comma = strchr(split_jobs, ',');
    size_t a = comma ? (size_t)(comma - split_jobs) : 0;
    if (!comma || a == 0 || a >= sizeof x->num_prefix || strlen(comma + 1) == 0 ||
        strlen(comma + 1) >= sizeof x->den_prefix || strchr(comma + 1, ',')) {
        h->error(m->ctx,
                 "params.split_jobs: expected two job-name prefixes \"numerator,"
                 "denominator\" of 1 to 63 characters, got \"%s\"",
                 split_jobs);
        return POLIS_ERR_CONFIG;
    }
    memcpy(x->num_prefix, split_jobs, a);
    snprintf(x->den_prefix, sizeof x->den_prefix, "%s", comma + 1);
    return POLIS_OK;
}

polis_status metrics_ada_start(metrics *m)
{
    const polis_host *h = m->h;
    polis_ctx *ctx = m->ctx;
    metrics_ada *x = m->ada;
    polis_status st;
    const polis_society_api *soc = h->service(ctx, POLIS_SOCIETY_SERVICE);
    if (soc && soc->struct_size >= offsetof(polis_society_api, agent_job) + sizeof soc->agent_job) {
        if (!soc->agent_job(soc->self, 0)) {
            h->error(ctx, "list \"metrics\" after \"society\" in the scenario's plugins: the "
                          "oracle is computed from society's content when metrics starts");
            return POLIS_ERR_CONFIG;
        }
        x->soc = soc;
        x->K = soc->n_recipes(soc->self);
        if (x->K > 0 && (!(x->exec = h->alloc(ctx, sizeof *x->exec * (size_t)x->K)) ||
                         !(x->oracle_x = h->alloc(ctx, sizeof *x->oracle_x * (size_t)x->K))))
            return POLIS_ERR_NOMEM;
        if (h->event_find(ctx, "recipe.produced") >= 0 &&
            (st = h->subscribe(ctx, "recipe.produced", 0, on_produced, x)))
            return st;
        if (m->p.oracle && (st = solve_oracle(m))) return st;
    }
    const polis_social_api *g = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (g && g->struct_size >= offsetof(polis_social_api, degree) + sizeof g->degree) {
        x->social = g;
        x->max_groups = g->max_groups(g->self);
        if (!(x->groups = h->alloc(ctx, sizeof *x->groups * (size_t)(x->max_groups + 1))))
            return POLIS_ERR_NOMEM;
        x->split_attr = g->attr_id(g->self, m->p.split_attribute);
        if (x->split_attr < 0) {
            h->error(ctx, "params.split_attribute: \"%s\" is not a valid attribute name",
                     m->p.split_attribute);
            return POLIS_ERR_CONFIG;
        }
    }
    return POLIS_OK;
}

void metrics_ada_destroy(metrics *m)
{
    metrics_ada *x = m->ada;
    if (!x) return;
    const polis_host *h = m->h;
    if (x->exec) h->free(m->ctx, x->exec, sizeof *x->exec * (size_t)x->K);
    if (x->oracle_x) h->free(m->ctx, x->oracle_x, sizeof *x->oracle_x * (size_t)x->K);
    if (x->groups) h->free(m->ctx, x->groups, sizeof *x->groups * (size_t)(x->max_groups + 1));
    h->free(m->ctx, x, sizeof *x);
    m->ada = NULL;
}
