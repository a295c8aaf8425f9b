/*
 * social — AdaSociety's social component as a plugin any ruleset can load: a multi-layer
 * directed graph of agents and groups with named numeric edge attributes, social actions
 * with masks, AdaSociety's rule functions, reward sharing within groups, scheduled
 * structure changes, and the observations, views, bus events and service other plugins
 * use. README.md beside this file is the reference; social_internal.h maps the files.
 *
 * Tick placement (spec 6 and 9.4):
 *   RESET    the graph is emptied, then the initial structure ("social") is built
 *   BEGIN    pre_updates
 *   actions  social actions take effect at once, in the acting order
 *   POST     post_updates up to the first split_score_to_group
 *   rewards  a reward transform runs post_updates from the first split on, so the step's
 *            reward is shared with the graph the step produced
 *   END      schedule snapshots replace the graph (after the sharing, before observing)
 *   OBSERVE  the dense social_state matrix is rebuilt when the graph changed
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"
#include "internal.h"

/* ---- hooks ----------------------------------------------------------------------------------- */

static polis_status run_rules(social *s, const sg_rule *rules, int32_t from, int32_t to,
                              float *rewards)
{
    polis_status st;
    for (int32_t i = from; i < to; i++)
        if ((st = sg_rule_run(s, &rules[i], rewards))) return st;
    return POLIS_OK;
}

static polis_status apply_snapshot(social *s, int32_t k)
{
    polis_status st;
    if ((st = sg_graph_clear(s, s->ctx)) || (st = sg_structure_apply(s, &s->sched[k]))) return st;
    return sg_publish_schedule(s, s->sched[k].step, k);
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    social *s = ud;
    (void)ctx;
    sg_graph_wipe(s);
    for (int32_t a = 0; a < s->P; a++) s->gate[a] = s->gate_reset;
    s->dense_valid = false;
    polis_status st = sg_structure_apply(s, &s->initial);
    if (st) return st;
    for (s->sched_next = 0; s->sched_next < s->n_sched && s->sched[s->sched_next].step == 0;
         s->sched_next++)
        if ((st = apply_snapshot(s, s->sched_next))) return st;
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    social *s = ud;
    (void)ctx;
    return run_rules(s, s->pre, 0, s->n_pre, NULL);
}

static polis_status on_post(polis_ctx *ctx, void *ud)
{
    social *s = ud;
    (void)ctx;
    return run_rules(s, s->post, 0, s->post_split_at, NULL);
}

static polis_status on_rewards(polis_ctx *ctx, void *ud, float *rewards)
{
    social *s = ud;
    (void)ctx;
    return run_rules(s, s->post, s->post_split_at, s->n_post, rewards);
}

/* The step's counter after this step is tick + 1 (AdaSociety's `steps`). */
static polis_status on_end(polis_ctx *ctx, void *ud)
{
    social *s = ud;
    int64_t step = s->h->tick(ctx) + 1;
    polis_status st;
    while (s->sched_next < s->n_sched && s->sched[s->sched_next].step <= step) {
        if (s->sched[s->sched_next].step == step && (st = apply_snapshot(s, s->sched_next)))
            return st;
        s->sched_next++;
    }
    return POLIS_OK;
}

/* Brings dense up to date and lists the entries that changed. The entries of the edges
 * created or dropped since the last rebuild are in the log (graph.c) with whether the edge
 * was there after each change, so the last entry of a position is its value now: the log is
 * read backwards, a position's first visit decides it and marks it (bit 1 of dense, cleared
 * by a second pass), no edge is looked up. After a reset, or when the log overflowed, dense
 * is rebuilt from every edge and the changes are not known (a record one rebuild behind is
 * then copied whole). The change list is what a record holding the previous rebuild needs
 * (write_social_state): a few entries per step instead of the (P+G)^2 matrix. */
static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    social *s = ud;
    (void)ctx;
    const uint32_t N = (uint32_t)s->N;
    int8_t *d = s->dense;
    if (!s->dense_valid || s->dense_lost) {
        memset(d, 0, (size_t)N * N);
        for (int32_t u = 0; u < s->N; u++)
            for (int32_t e = s->out_head[u]; e >= 0; e = s->e_out_next[e])
                d[(uint32_t)s->e_to[e] * N + (uint32_t)u] = 1;
        s->n_dense_chg = -1;
        s->n_dense_log = 0;
        s->dense_lost = false;
        s->dense_valid = true;
        s->dense_gen++;
        return POLIS_OK;
    }
    const uint32_t *log = s->dense_log;
    const int8_t *logv = s->dense_logv;
    uint32_t *chg = s->dense_chg;
    const int32_t n_log = s->n_dense_log;
    int32_t ones = 0, zeros = 2 * s->max_edges; /* ones fill the front, zeros the back */
    for (int32_t i = n_log - 1; i >= 0; i--) {
        const uint32_t p = log[i];
        const int8_t was = d[p], now = logv[i];
        if (was & 2) continue; /* a later change of this position decided it */
        d[p] = (int8_t)(now | 2);
        if (was == now) continue;
        if (now)
            chg[ones++] = p;
        else
            chg[--zeros] = p;
    }
    for (int32_t i = 0; i < n_log; i++) d[log[i]] &= 1;
    s->n_dense_log = 0;
    const int32_t n_chg = ones + (2 * s->max_edges - zeros);
    if (n_chg == 0) return POLIS_OK;
    s->n_dense_chg = n_chg;
    s->n_dense_ones = ones;
    s->dense_gen++;
    return POLIS_OK;
}

/* ---- observations ---------------------------------------------------------------------------- */

/* Stores v at out[pos[i]] for i < n (locals, four at a time: through s every byte store
 * could alias the count and the list's pointer, which were then reloaded per entry). */
/* Asks for the lines of out[pos[0..n)] ahead of the stores: with 100 agents the records
 * (about 140 entries each, one line in two of the matrix) leave the L2 cache between passes,
 * and each store that missed held up the ones behind it; asked for together, the misses
 * overlap (docs/performance-log.md). */
static void prefetch_at(int8_t *out, const uint32_t *pos, int32_t n)
{
#if defined(__GNUC__)
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __builtin_prefetch(out + pos[i], 1, 3);
        __builtin_prefetch(out + pos[i + 1], 1, 3);
        __builtin_prefetch(out + pos[i + 2], 1, 3);
        __builtin_prefetch(out + pos[i + 3], 1, 3);
    }
    for (; i < n; i++) __builtin_prefetch(out + pos[i], 1, 3);
#else
    (void)out, (void)pos, (void)n;
#endif
}

static void store_at(int8_t *out, const uint32_t *pos, int32_t n, int8_t v)
{
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32_t p0 = pos[i], p1 = pos[i + 1], p2 = pos[i + 2], p3 = pos[i + 3];
        out[p0] = v;
        out[p1] = v;
        out[p2] = v;
        out[p3] = v;
    }
    for (; i < n; i++) out[pos[i]] = v;
}

/* The same matrix for every agent. A record that holds this rebuild is left alone, one that
 * holds the previous rebuild gets its changes, any other the whole copy: copying O((P+G)^2)
 * bytes per agent-step was most of the 1000-agent Exploration step (docs/performance-log.md).
 * With social_state "shared" the one record is the env's shared field (agent -1, slot 0):
 * the same stores, once per step instead of once per agent. */
static void write_social_state(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    social *s = ud;
    (void)ctx;
    size_t NN = (size_t)s->N * (size_t)s->N;
    if (agent < 0) agent = 0;
    if (s->dense_dst[agent] == dst) {
        if (s->dense_gen_of[agent] == s->dense_gen) return;
        /* one rebuild behind: apply its changes, unless copying is cheaper */
        if (s->dense_gen_of[agent] + 1 == s->dense_gen && s->n_dense_chg >= 0 &&
            (size_t)s->n_dense_chg * 16 < NN) {
            const int32_t ones = s->n_dense_ones, zeros = s->n_dense_chg - ones;
            const uint32_t *zero_at = s->dense_chg + 2 * s->max_edges - zeros;
            prefetch_at(dst, s->dense_chg, ones);
            prefetch_at(dst, zero_at, zeros);
            store_at(dst, s->dense_chg, ones, 1);
            store_at(dst, zero_at, zeros, 0);
            s->dense_gen_of[agent] = s->dense_gen;
            return;
        }
    }
    memcpy(dst, s->dense, NN);
    s->dense_dst[agent] = dst;
    s->dense_gen_of[agent] = s->dense_gen;
}

/* Constant per agent: written once into each record. */
static void write_player_id(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    social *s = ud;
    (void)ctx;
    if (s->pid_dst[agent] == dst) return;
    int8_t *out = dst;
    memset(out, 0, (size_t)s->N);
    out[agent] = 1;
    s->pid_dst[agent] = dst;
}

/* lround(v) saturated to int8 (NaN: 0), without the library call: t = (int)v truncates, and
 * v - t is exact (a multiple of v's ulp below 1). */
static int8_t word_i8(double v)
{
    if (!(v > -128.5)) return v != v ? 0 : -128;
    if (v >= 127.5) return 127;
    int32_t t = (int32_t)v;
    const double f = v - (double)t;
    if (f >= 0.5)
        t++;
    else if (f <= -0.5)
        t--;
    return (int8_t)t;
}

/* The agent -> agent edges with words (watch bit 0), grouped by target, once per graph
 * revision: each agent's messages without a walk of its in-edges (about half the agents
 * once map sharing is random). */
static void com_index(social *s)
{
    int32_t *start = s->com_start;
    memset(start, 0, sizeof *start * ((size_t)s->P + 1));
    for (int32_t i = 0; i < s->n_wl; i++) {
        const int32_t e = s->wl[i];
        if ((s->e_watch[e] & 1u) && s->e_from[e] < s->P && s->e_to[e] < s->P)
            start[s->e_to[e] + 1]++;
    }
    for (int32_t a = 0; a < s->P; a++) start[a + 1] += start[a];
    for (int32_t i = 0; i < s->n_wl; i++) {
        const int32_t e = s->wl[i];
        if ((s->e_watch[e] & 1u) && s->e_from[e] < s->P && s->e_to[e] < s->P)
            s->com_el[start[s->e_to[e]]++] = e;
    }
    for (int32_t a = s->P; a > 0; a--) start[a] = start[a - 1];
    start[0] = 0;
    s->com_rev = s->revision;
    s->com_valid = true;
}

/* Row q = the words of the message q -> agent (AdaSociety: in-edges with "communication").
 * The record still holds what was written there last time (the kernel never clears one): the
 * rows written then are cleared, unless they were not remembered (more than SG_COM_ROWS, or
 * the record is another one), when the whole record is. */
static void write_communication(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    social *s = ud;
    (void)ctx;
    int8_t *out = dst;
    const size_t L = (size_t)s->L;
    if (!s->com_valid || s->com_rev != s->revision) com_index(s);
    int32_t *rows = s->com_rows + (size_t)agent * SG_COM_ROWS;
    if (s->com_dst[agent] != dst || s->com_n[agent] < 0) {
        memset(out, 0, (size_t)s->P * L);
        s->com_dst[agent] = dst;
    } else {
        for (int32_t i = 0; i < s->com_n[agent]; i++) memset(out + (size_t)rows[i] * L, 0, L);
    }
    const int32_t lo = s->com_start[agent], hi = s->com_start[agent + 1];
    s->com_n[agent] = hi - lo <= SG_COM_ROWS ? hi - lo : -1;
    /* the row is zero: each word the edge carries is written (one pass over its slots) */
    for (int32_t k = lo; k < hi; k++) {
        const int32_t e = s->com_el[k], q = s->e_from[e];
        int8_t *row = out + (size_t)q * L;
        if (k - lo < SG_COM_ROWS) rows[k - lo] = q;
        const size_t base = (size_t)e * (size_t)s->K;
        for (int32_t j = 0; j < s->e_nattr[e]; j++) {
            const int32_t w = s->attr_word[s->e_attr[base + (size_t)j]];
            if (w >= 0) row[w] = word_i8(s->e_val[base + (size_t)j]);
        }
    }
}

/* ---- social actions -------------------------------------------------------------------------- */

static bool gate_open(const social *s, int32_t agent, int32_t family)
{
    return (s->gate[agent] >> family) & 1u;
}

static bool family_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    sg_family *f = ud;
    social *s = f->s;
    (void)ctx;
    if (!gate_open(s, agent, f->index)) return false;
    switch (f->kind) {
    case SG_FAM_COMMUNICATE:
    case SG_FAM_SHARE_MAP:
    case SG_FAM_SHARE_PLAYER:
    case SG_FAM_ADD_RELATION: return f->self || arg != agent;
    case SG_FAM_REMOVE_RELATION:
        return (f->self || arg != agent) &&
               sg_edge_has_family(s, sg_edge_find(s, agent, arg), f->attr);
    case SG_FAM_SWITCH_GROUP:
    case SG_FAM_CHOOSE_GROUP:
    case SG_FAM_JOIN_GROUP: return s->group_live[arg] != 0;
    case SG_FAM_QUIT_GROUP:
        return s->group_live[arg] &&
               sg_edge_has_family(s, sg_edge_find(s, s->P + arg, agent), f->attr);
    default: return false;
    }
}

/* The whole family's mask row for `agent` at once (host->action_family): the same answer
 * as family_legal for every target, from one pass over the targets or the agent's edges
 * instead of one call (and one edge lookup) per target. */
static void family_legal_row(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    sg_family *f = ud;
    const social *s = f->s;
    int32_t n = f->n_actions;
    (void)ctx;
    if (!gate_open(s, agent, f->index)) {
        memset(row, 0, (size_t)n);
        return;
    }
    switch (f->kind) {
    case SG_FAM_COMMUNICATE:
    case SG_FAM_SHARE_MAP:
    case SG_FAM_SHARE_PLAYER:
    case SG_FAM_ADD_RELATION:
        memset(row, 1, (size_t)n);
        if (!f->self && agent < n) row[agent] = 0;
        return;
    case SG_FAM_REMOVE_RELATION:
        /* edges are unique per (from, to): each out-edge decides one target */
        memset(row, 0, (size_t)n);
        for (int32_t e = s->out_head[agent]; e >= 0; e = s->e_out_next[e]) {
            int32_t t = s->e_to[e];
            if (t < n && (f->self || t != agent) && sg_edge_has_family(s, e, f->attr)) row[t] = 1;
        }
        return;
    case SG_FAM_SWITCH_GROUP:
    case SG_FAM_CHOOSE_GROUP:
    case SG_FAM_JOIN_GROUP:
        for (int32_t g = 0; g < n; g++) row[g] = s->group_live[g] != 0;
        return;
    case SG_FAM_QUIT_GROUP:
        memset(row, 0, (size_t)n);
        for (int32_t e = s->in_head[agent]; e >= 0; e = s->e_in_next[e]) {
            int32_t g = s->e_from[e] - s->P;
            if (g >= 0 && g < n && s->group_live[g] && sg_edge_has_family(s, e, f->attr))
                row[g] = 1;
        }
        return;
    default: memset(row, 0, (size_t)n); return;
    }
}

static polis_status family_act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    sg_family *f = ud;
    social *s = f->s;
    polis_status st;
    /* The mask was right when it was written; an earlier action of this step (another
     * plugin's, a group deleted) may have changed that. */
    if (!family_legal(ctx, ud, agent, arg)) return POLIS_ERR_ACTION;
    switch (f->kind) {
    case SG_FAM_COMMUNICATE: return sg_set_all(s, agent, arg, s->a_words, s->L, f->value);
    case SG_FAM_SHARE_MAP:
    case SG_FAM_SHARE_PLAYER: {
        double v;
        if (sg_edge_get(s, sg_edge_find(s, agent, arg), f->attr, &v) && v != 0.0)
            return sg_unset(s, s->ctx, agent, arg, f->attr);
        return sg_set(s, s->ctx, agent, arg, f->attr, 1.0);
    }
    case SG_FAM_SWITCH_GROUP:
    case SG_FAM_CHOOSE_GROUP: {
        int32_t n = sg_groups_of(s, agent, f->attr, s->scr_a, s->G);
        for (int32_t i = 0; i < n; i++)
            if (s->scr_a[i] != arg &&
                (st = sg_unset(s, s->ctx, s->P + s->scr_a[i], agent, f->attr)))
                return st;
        return sg_set(s, s->ctx, s->P + arg, agent, f->attr, f->value);
    }
    case SG_FAM_ADD_RELATION:
        for (int32_t i = 0; i < f->n_kv; i++)
            if ((st = sg_set(s, s->ctx, agent, arg, f->kv[i].attr, f->kv[i].value))) return st;
        return POLIS_OK;
    case SG_FAM_REMOVE_RELATION: return sg_unset_family(s, s->ctx, agent, arg, f->attr);
    case SG_FAM_JOIN_GROUP:
        for (int32_t i = 0; i < f->n_kv; i++)
            if ((st = sg_set(s, s->ctx, s->P + arg, agent, f->kv[i].attr, f->kv[i].value)))
                return st;
        return POLIS_OK;
    case SG_FAM_QUIT_GROUP: return sg_unset_family(s, s->ctx, s->P + arg, agent, f->attr);
    default: return POLIS_ERR_ACTION;
    }
}

/* The doc of one action of a family, for `polis describe` and LLM prompts. */
static void family_doc(const social *s, const sg_family *f, int32_t t, char *buf, size_t size)
{
    const char *attr = f->attr >= 0 && f->attr < s->n_attrs ? s->attr_names[f->attr] : "?";
    switch (f->kind) {
    case SG_FAM_COMMUNICATE:
        snprintf(buf, size, "send agent %d a message (its %d words = %g)", t, s->L, f->value);
        break;
    case SG_FAM_SHARE_MAP:
        snprintf(buf, size, "toggle sharing.Map on self -> agent %d (let it see my map view)", t);
        break;
    case SG_FAM_SHARE_PLAYER:
        snprintf(buf, size,
                 "toggle sharing.Player on self -> agent %d (let it see my "
                 "inventory)",
                 t);
        break;
    case SG_FAM_SWITCH_GROUP:
    case SG_FAM_CHOOSE_GROUP:
        snprintf(buf, size,
                 "%s group %d: leave the other groups joined with %s, join it with "
                 "%s = %g",
                 f->kind == SG_FAM_SWITCH_GROUP ? "switch to" : "choose", t, attr, attr, f->value);
        break;
    case SG_FAM_ADD_RELATION:
        snprintf(buf, size, "add_relation: set %d attribute%s (%s%s) on self -> agent %d", f->n_kv,
                 f->n_kv == 1 ? "" : "s", s->attr_names[f->kv[0].attr], f->n_kv > 1 ? ", ..." : "",
                 t);
        break;
    case SG_FAM_REMOVE_RELATION:
        snprintf(buf, size, "remove_relation: remove %s from self -> agent %d (legal when set)",
                 attr, t);
        break;
    case SG_FAM_JOIN_GROUP:
        snprintf(buf, size, "join_group: set %d attribute%s (%s%s) on group %d -> self", f->n_kv,
                 f->n_kv == 1 ? "" : "s", s->attr_names[f->kv[0].attr], f->n_kv > 1 ? ", ..." : "",
                 t);
        break;
    default:
        snprintf(buf, size, "quit_group: remove %s from group %d -> self (legal when set)", attr,
                 t);
        break;
    }
}

static void family_doc_cb(polis_ctx *ctx, void *ud, int32_t index, char *buf, size_t size)
{
    sg_family *f = ud;
    (void)ctx;
    family_doc(f->s, f, index, buf, size);
}

/* One action family per configured family ("<name>_<target>"), so the kernel builds each
 * agent's mask with one family_legal_row call per family instead of one call per target. */
static polis_status register_families(social *s)
{
    polis_status st;
    for (int32_t i = 0; i < s->n_fams; i++) {
        sg_family *f = &s->fams[i];
        polis_action_family_def def = {.prefix = f->name,
                                       .count = f->n_actions,
                                       .doc = family_doc_cb,
                                       .handler = family_act,
                                       .legal_row = family_legal_row,
                                       .ud = f};
        if ((st = s->h->action_family(s->ctx, &def, &f->first_action))) return st;
    }
    return POLIS_OK;
}

/* ---- the service ----------------------------------------------------------------------------- */

static int32_t svc_attr_id(void *self, const char *name)
{
    social *s = self;
    return name ? sg_attr_intern(s, name, strlen(name)) : -1;
}

static int32_t svc_max_groups(void *self) { return ((social *)self)->G; }

static int32_t svc_sharers(void *self, int32_t agent, polis_social_share what, int32_t *out,
                           int32_t cap)
{
    social *s = self;
    if (agent < 0 || agent >= s->P) return 0;
    int32_t attr = what == POLIS_SOCIAL_SHARE_PLAYER ? s->a_player : s->a_map, n = 0;
    double v;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        if (s->e_from[e] == agent || !sg_edge_get(s, e, attr, &v) || v == 0.0) continue;
        if (n < cap && out) out[n] = s->e_from[e];
        n++;
    }
    return n;
}

static bool svc_get(void *self, int32_t from, int32_t to, int32_t attr, double *value)
{
    social *s = self;
    if (attr < 0 || attr >= s->n_attrs) return false;
    return sg_edge_get(s, sg_edge_find(s, from, to), attr, value);
}

static polis_status svc_set(void *self, polis_ctx *caller, int32_t from, int32_t to, int32_t attr,
                            double value)
{
    return sg_set(self, caller, from, to, attr, value);
}

static polis_status svc_unset(void *self, polis_ctx *caller, int32_t from, int32_t to, int32_t attr)
{
    return sg_unset(self, caller, from, to, attr);
}

static int32_t svc_groups_of(void *self, int32_t agent, int32_t attr, int32_t *out, int32_t cap)
{
    social *s = self;
    if (attr >= s->n_attrs) return 0;
    return sg_groups_of(s, agent, attr < 0 ? -1 : attr, out, out ? cap : 0);
}

/* Members in ascending order without scratch memory (a caller may be a subscriber running
 * in the middle of a rule that uses the scratch): a bounded insertion sort into out. */
static int32_t svc_members(void *self, int32_t group, int32_t *out, int32_t cap)
{
    social *s = self;
    if (group < 0 || group >= s->G || !s->group_live[group]) return 0;
    int32_t n = 0, kept = 0;
    if (!out) cap = 0;
    for (int32_t e = s->out_head[s->P + group]; e >= 0; e = s->e_out_next[e]) {
        int32_t m = s->e_to[e];
        if (m >= s->P) continue;
        n++;
        int32_t i = kept < cap ? kept++ : cap;
        while (i > 0 && out[i - 1] > m) {
            if (i < cap) out[i] = out[i - 1];
            i--;
        }
        if (i < cap) out[i] = m;
    }
    return n;
}

static uint64_t svc_revision(void *self) { return ((social *)self)->revision; }

static const char *svc_attr_name(void *self, int32_t attr)
{
    social *s = self;
    return attr >= 0 && attr < s->n_attrs ? s->attr_names[attr] : NULL;
}

static bool svc_group_alive(void *self, int32_t g)
{
    social *s = self;
    return g >= 0 && g < s->G && s->group_live[g];
}

static int32_t svc_groups(void *self, int32_t *out, int32_t cap)
{
    social *s = self;
    int32_t n = 0;
    for (int32_t g = 0; g < s->next_group; g++) {
        if (!s->group_live[g]) continue;
        if (out && n < cap) out[n] = g;
        n++;
    }
    return n;
}

static polis_status svc_group_create(void *self, polis_ctx *caller, int32_t *out)
{
    return sg_group_create(self, caller, out);
}

static polis_status svc_group_delete(void *self, polis_ctx *caller, int32_t g)
{
    return sg_group_delete(self, caller, g);
}

static polis_status svc_unset_family(void *self, polis_ctx *caller, int32_t from, int32_t to,
                                     int32_t attr)
{
    return sg_unset_family(self, caller, from, to, attr);
}

static polis_status svc_remove_edge(void *self, polis_ctx *caller, int32_t from, int32_t to)
{
    return sg_remove_edge(self, caller, from, to);
}

static int32_t svc_degree(void *self, int32_t node, bool in)
{
    social *s = self;
    if (!sg_node_valid(s, node)) return -1;
    return in ? s->in_deg[node] : s->out_deg[node];
}

static int32_t svc_family_find(void *self, const char *name)
{
    social *s = self;
    for (int32_t i = 0; name && i < s->n_fams; i++)
        if (strcmp(s->fams[i].name, name) == 0) return i;
    return -1;
}

static polis_status svc_allow(void *self, polis_ctx *caller, int32_t agent, int32_t family, bool on)
{
    social *s = self;
    if (!caller) caller = s->ctx;
    if (agent < -1 || agent >= s->P || family < -1 || family >= s->n_fams) {
        s->h->error(caller,
                    "allow: agent %d / family %d out of range (agents -1..%d, "
                    "families -1..%d)",
                    agent, family, s->P - 1, s->n_fams - 1);
        return POLIS_ERR_INVALID;
    }
    uint64_t bits = family < 0 ? ~(uint64_t)0 : (uint64_t)1 << family;
    for (int32_t a = agent < 0 ? 0 : agent; a < (agent < 0 ? s->P : agent + 1); a++)
        s->gate[a] = on ? s->gate[a] | bits : s->gate[a] & ~bits;
    return POLIS_OK;
}

static bool svc_allowed(void *self, int32_t agent, int32_t family)
{
    social *s = self;
    if (agent < 0 || agent >= s->P || family < 0 || family >= s->n_fams) return false;
    return gate_open(s, agent, family);
}

static polis_status svc_communicate(void *self, polis_ctx *caller, int32_t from, int32_t to,
                                    const double *words, int32_t n)
{
    social *s = self;
    if (!caller) caller = s->ctx;
    if (s->L == 0 || n < 0 || n > s->L || (n > 0 && !words) || from < 0 || from >= s->P || to < 0 ||
        to >= s->P) {
        s->h->error(caller,
                    "communicate: agents %d -> %d with %d words (communication_length "
                    "is %d)",
                    from, to, n, s->L);
        return POLIS_ERR_INVALID;
    }
    polis_status st;
    for (int32_t i = 0; i < s->L; i++)
        if ((st = sg_set(s, caller, from, to, s->a_words[i], i < n ? words[i] : 0.0))) return st;
    return POLIS_OK;
}

static polis_status svc_request_matching(void *self, polis_ctx *caller, int32_t from, int32_t to)
{
    return sg_request_matching(self, caller ? caller : ((social *)self)->ctx, from, to);
}

static polis_status svc_propose(void *self, polis_ctx *caller, int32_t from, int32_t to,
                                double share)
{
    return sg_propose(self, caller ? caller : ((social *)self)->ctx, from, to, share);
}

static polis_status svc_accept(void *self, polis_ctx *caller, int32_t agent, int32_t opponent)
{
    return sg_accept(self, caller ? caller : ((social *)self)->ctx, agent, opponent);
}

static polis_status svc_end(void *self, polis_ctx *caller, int32_t a, int32_t b)
{
    return sg_end_bargaining(self, caller ? caller : ((social *)self)->ctx, a, b);
}

static uint64_t svc_share_seq(void *self) { return ((social *)self)->jr_seq; }

static bool svc_share_change(void *self, uint64_t seq, polis_social_share *what, int32_t *from,
                             int32_t *to, bool *on)
{
    sg_share_rec r;
    if (!sg_share_change(self, seq, &r)) return false;
    if (what) *what = (polis_social_share)r.what;
    if (from) *from = r.from;
    if (to) *to = r.to;
    if (on) *on = r.on != 0;
    return true;
}

static void fill_api(social *s)
{
    polis_social_api *a = &s->api;
    a->version = POLIS_SOCIAL_VERSION;
    a->struct_size = sizeof *a;
    a->self = s;
    a->attr_id = svc_attr_id;
    a->max_groups = svc_max_groups;
    a->sharers = svc_sharers;
    a->get = svc_get;
    a->set = svc_set;
    a->unset = svc_unset;
    a->groups_of = svc_groups_of;
    a->members = svc_members;
    a->revision = svc_revision;
    a->attr_name = svc_attr_name;
    a->group_alive = svc_group_alive;
    a->groups = svc_groups;
    a->group_create = svc_group_create;
    a->group_delete = svc_group_delete;
    a->unset_family = svc_unset_family;
    a->remove_edge = svc_remove_edge;
    a->degree = svc_degree;
    a->family_find = svc_family_find;
    a->allow = svc_allow;
    a->allowed = svc_allowed;
    a->communicate = svc_communicate;
    a->request_matching = svc_request_matching;
    a->propose = svc_propose;
    a->accept_proposal = svc_accept;
    a->end_bargaining = svc_end;
    a->share_seq = svc_share_seq;
    a->share_change = svc_share_change;
}

/* ---- exports (Lua's polis.call, scenario bindings) ------------------------------------------- */

static int32_t ex_allow(polis_ctx *ctx, int32_t agent, int32_t family, bool on)
{
    social *s = polis_ctx_state(ctx);
    return (int32_t)svc_allow(s, ctx, agent, family, on);
}

static int32_t ex_family(polis_ctx *ctx, const char *name)
{
    return svc_family_find(polis_ctx_state(ctx), name);
}

static int32_t ex_attr(polis_ctx *ctx, const char *name)
{
    return svc_attr_id(polis_ctx_state(ctx), name);
}

static double ex_get(polis_ctx *ctx, int32_t from, int32_t to, const char *name)
{
    social *s = polis_ctx_state(ctx);
    double v;
    int32_t attr = sg_attr_find(s, name, strlen(name));
    return attr >= 0 && svc_get(s, from, to, attr, &v) ? v : NAN;
}

static int32_t ex_set(polis_ctx *ctx, int32_t from, int32_t to, const char *name, double value)
{
    social *s = polis_ctx_state(ctx);
    int32_t attr = sg_attr_intern(s, name, strlen(name));
    if (attr < 0) {
        const char *why = sg_attr_invalid(name, strlen(name));
        s->h->error(ctx, "set: attribute name \"%.80s\" %s", name,
                    why ? why : "does not fit: the max_attrs table is full");
        return why ? POLIS_ERR_INVALID : POLIS_ERR_LIMIT;
    }
    return (int32_t)sg_set(s, ctx, from, to, attr, value);
}

static int32_t ex_remove(polis_ctx *ctx, int32_t from, int32_t to, const char *name)
{
    social *s = polis_ctx_state(ctx);
    int32_t attr = sg_attr_find(s, name, strlen(name));
    if (attr < 0) return POLIS_OK; /* a name never interned is on no edge */
    return (int32_t)sg_unset_family(s, ctx, from, to, attr);
}

static int64_t ex_revision(polis_ctx *ctx)
{
    return (int64_t)((social *)polis_ctx_state(ctx))->revision;
}

static const polis_export social_exports[] = {
    POLIS_EXPORT_FN("allow", "i32(ctx,i32,i32,bool)", ex_allow,
                    "gate family f (-1 all) for agent a (-1 all): allow(a, f, on) -> status"),
    POLIS_EXPORT_FN("family", "i32(ctx,str)", ex_family, "a family's index by name, -1 if none"),
    POLIS_EXPORT_FN("attr", "i32(ctx,str)", ex_attr,
                    "interns an attribute name, -1 if invalid or the table is full"),
    POLIS_EXPORT_FN(
        "get", "f64(ctx,i32,i32,str)", ex_get,
        "get(from, to, attr): the value, NaN when absent (nodes: agents, then P + group)"),
    POLIS_EXPORT_FN("set", "i32(ctx,i32,i32,str,f64)", ex_set,
                    "set(from, to, attr, value) -> status"),
    POLIS_EXPORT_FN("remove", "i32(ctx,i32,i32,str)", ex_remove,
                    "remove(from, to, attr): attr and everything below it -> status"),
    POLIS_EXPORT_FN("revision", "i64(ctx)", ex_revision, "graph revision (changes count)"),
};

/* ---- lifecycle ------------------------------------------------------------------------------- */

static polis_status register_events(social *s)
{
    static const polis_field_def rel[4] = {{"from", POLIS_FIELD_I32},
                                           {"to", POLIS_FIELD_I32},
                                           {"attr", POLIS_FIELD_I32},
                                           {"value", POLIS_FIELD_F64}};
    static const polis_field_def grp[1] = {{"group", POLIS_FIELD_I32}};
    static const polis_field_def mem[2] = {{"group", POLIS_FIELD_I32}, {"agent", POLIS_FIELD_I32}};
    static const polis_field_def sch[2] = {{"step", POLIS_FIELD_I32},
                                           {"snapshot", POLIS_FIELD_I32}};
    const polis_host *h = s->h;
    polis_status st;
    if ((st = h->event_type(s->ctx, "social.relation_set", rel, 4, &s->ev_set)) ||
        (st = h->event_type(s->ctx, "social.relation_unset", rel, 4, &s->ev_unset)) ||
        (st = h->event_type(s->ctx, "social.group_created", grp, 1, &s->ev_created)) ||
        (st = h->event_type(s->ctx, "social.group_deleted", grp, 1, &s->ev_deleted)) ||
        (st = h->event_type(s->ctx, "social.joined", mem, 2, &s->ev_joined)) ||
        (st = h->event_type(s->ctx, "social.quit", mem, 2, &s->ev_quit)) ||
        (st = h->event_type(s->ctx, "social.schedule_applied", sch, 2, &s->ev_schedule)))
        return st;
    return POLIS_OK;
}

/* Declares field id's range [lo, hi] (plugin ABI 1.4). */
static polis_status obs_range(social *s, int32_t id, double lo, double hi)
{
    return s->h->obs_range(s->ctx, id, -1, 1, &lo, &hi);
}

static polis_status register_observations(social *s)
{
    const polis_host *h = s->h;
    polis_status st;
    int32_t id;
    if (s->state_mode != SG_STATE_OFF) {
        polis_obs_def d = {.name = "social_state",
                           .doc = "[to][from] = 1 for every edge from -> to (transposed "
                                  "adjacency); nodes: agents, then groups",
                           .dtype = POLIS_DTYPE_I8,
                           .ndim = 2,
                           .shape = {s->N, s->N},
                           .write = write_social_state,
                           .ud = s};
        if (s->state_mode == SG_STATE_SHARED) {
            /* one matrix per env: the same for every agent (docs/kernel.md, "Shared
             * observation fields") */
            const polis_shared_obs_api *api =
                h->host_api(s->ctx, POLIS_SHARED_OBS_API, POLIS_SHARED_OBS_API_VERSION);
            if (!api) return POLIS_ERR_PLUGIN;
            if ((st = api->field(s->ctx, &d, NULL))) return st;
        } else if ((st = h->observation(s->ctx, &d, &id)) || (st = obs_range(s, id, 0, 1))) {
            return st;
        }
    }
    if (s->p.player_id) {
        polis_obs_def d = {.name = "player_id",
                           .doc = "one-hot of the agent's node",
                           .dtype = POLIS_DTYPE_I8,
                           .ndim = 1,
                           .shape = {s->N},
                           .write = write_player_id,
                           .ud = s};
        if ((st = h->observation(s->ctx, &d, &id)) || (st = obs_range(s, id, 0, 1))) return st;
    }
    if (s->L > 0) {
        polis_obs_def d = {.name = "communication",
                           .doc = "row q: the words of the message agent q sent this agent",
                           .dtype = POLIS_DTYPE_I8,
                           .ndim = 2,
                           .shape = {s->P, s->L},
                           .write = write_communication,
                           .ud = s};
        /* words are rounded and saturated to i8 (word_i8): scripts may send any value */
        if ((st = h->observation(s->ctx, &d, &id)) || (st = obs_range(s, id, -128, 127))) return st;
    }
    return POLIS_OK;
}

static polis_status social_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                void **state)
{
    social *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->ctx = ctx;
    memcpy(&s->p, params, sizeof s->p);
    polis_status st;
    if ((st = sg_config_size(s)) || (st = sg_graph_alloc(s)) || (st = sg_config_load(s)) ||
        (st = register_events(s)) || (st = register_families(s)) || (st = register_observations(s)))
        return st;
    int32_t pr = (int32_t)s->p.priority;
    if ((st = h->hook(ctx, POLIS_PHASE_RESET, pr, on_reset, s))) return st;
    if (s->n_pre && (st = h->hook(ctx, POLIS_PHASE_BEGIN, pr, on_begin, s))) return st;
    if (s->post_split_at > 0 && (st = h->hook(ctx, POLIS_PHASE_POST, pr, on_post, s))) return st;
    if (s->post_split_at < s->n_post &&
        (st = h->reward_transform(ctx, "social.split", pr, on_rewards, s)))
        return st;
    if (s->n_sched && (st = h->hook(ctx, POLIS_PHASE_END, pr, on_end, s))) return st;
    if (s->state_mode != SG_STATE_OFF &&
        (st = h->hook(ctx, POLIS_PHASE_OBSERVE, pr, on_observe, s)))
        return st;
    fill_api(s);
    if ((st = h->service_provide(ctx, POLIS_SOCIAL_SERVICE, &s->api))) return st;
    if ((st = sg_register_looks(s))) return st;
    if ((st = h->renderer(ctx, "json", sg_render_json, s)) ||
        (st = h->renderer(ctx, "text", sg_render_text, s)))
        return st;
    return POLIS_OK;
}

static void social_destroy(polis_ctx *ctx, void *state)
{
    social *s = state;
    (void)ctx;
    if (!s) return;
    sg_free_looks(s);
    sg_config_free(s);
    sg_graph_free(s);
    s->h->free(s->ctx, s, sizeof *s);
}

static const polis_param_def social_params[] = {
    POLIS_P_INT(
        sg_params, "max_groups", max_groups, -1, 65536, -1,
        "group ids per graph (group nodes in the observations); -1: the most groups a structure "
        "creates (at least the agent count with merge_relation_to_group)"),
    POLIS_P_INT(sg_params, "max_edges", max_edges, 0, 16777216, 0,
                "edge capacity; 0: min(P x (P + max_groups), max(262144, the largest structure))"),
    POLIS_P_INT(sg_params, "max_attrs", max_attrs, 16, 65536, 256, "distinct attribute names"),
    POLIS_P_INT(sg_params, "max_edge_attrs", max_edge_attrs, 0, 64, 0,
                "attributes per edge; 0: 8 + communication_length"),
    POLIS_P_INT(sg_params, "communication_length", communication_length, 0, 1024, 0,
                "words per message (AdaSociety's static.communication_length)"),
    POLIS_P_JSON(sg_params, "social_state", social_state,
                 "the dense int8 [P+G, P+G] social_state observation: false (default, none), "
                 "true (in every agent's record, O((P+G)^2) per agent) or \"shared\" (one "
                 "shared field per env)"),
    POLIS_P_BOOL(sg_params, "player_id", player_id, true,
                 "add the int8 [P+G] player_id one-hot observation"),
    POLIS_P_INT(sg_params, "priority", priority, -1000000, 1000000, 0,
                "priority of the plugin's hooks and of its reward transform"),
    POLIS_P_JSON(sg_params, "social", social,
                 "initial graph {relations, groups}: AdaSociety's static.social"),
    POLIS_P_JSON(sg_params, "social_schedule", social_schedule,
                 "{\"<step>\": {relations, groups}}: snapshots that replace the graph"),
    POLIS_P_JSON(sg_params, "pre_updates", pre_updates, "rule functions run before the actions"),
    POLIS_P_JSON(sg_params, "post_updates", post_updates,
                 "rule functions run after the actions (split_score_to_group shares rewards)"),
    POLIS_P_JSON(sg_params, "actions", actions, "social action families: [{\"family\": ..., ...}]"),
};

static const polis_plugin_desc social_desc = {
    POLIS_DESC_HEAD("social", 7),
    .version = "1.0.0",
    .doc = "AdaSociety's social graph: relations, groups, social actions, reward sharing",
    POLIS_DESC_PARAMS(social_params, sg_params),
    .init = social_init,
    .destroy = social_destroy,
    POLIS_DESC_EXPORTS(social_exports),
};

POLIS_PLUGIN(social_desc)
