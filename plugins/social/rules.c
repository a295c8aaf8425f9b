/*
 * rules.c — AdaSociety's social rule functions (spec 9.3), group reward sharing (11.2) and
 * the negotiation helpers (9.2), on the graph of graph.c.
 *
 * Every rule walks lists, never an agents x agents matrix: clear_temporary_relation,
 * matching_edge and symmetrize_relation are O(edges), normalization O(memberships),
 * merge_relation_to_group O(degree) per accepted pair, the reward split O(agents +
 * memberships). Scratch arrays come from create.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define OUT_EDGES(s, u, e, next)                                                                   \
    for (int32_t e = (s)->out_head[u], next = e >= 0 ? (s)->e_out_next[e] : -1; e >= 0;            \
         e = next, next = e >= 0 ? (s)->e_out_next[e] : -1)

static bool in_list(const int32_t *list, int32_t n, int32_t v)
{
    for (int32_t i = 0; i < n; i++)
        if (list[i] == v) return true;
    return false;
}

static double value_or(const social *s, int32_t from, int32_t to, int32_t attr, double dflt)
{
    double v;
    return sg_edge_get(s, sg_edge_find(s, from, to), attr, &v) ? v : dflt;
}

/* ---- clear_temporary_relation(attr) ---------------------------------------------------------- */

/* Removes the attribute (and everything below it: AdaSociety deletes the whole value) from
 * every agent -> agent edge, in the order of a walk of the agents' out-lists. With a watch
 * bit (graph.c) only the edges carrying the family are visited, sorted into that order
 * (their sources, then creation order, which is each out-list's order): the walk of every
 * edge was O(P^2) with random map sharing. */
static int cmp_clear(const void *a, const void *b)
{
    const sg_clear_ent *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static polis_status rule_clear(social *s, const sg_rule *r)
{
    const int32_t root = r->attr;
    polis_status st;
    if (r->watch) {
        int32_t n = 0;
        for (int32_t i = 0; i < s->n_wl; i++) {
            const int32_t e = s->wl[i];
            if ((s->e_watch[e] & r->watch) && s->e_from[e] < s->P && s->e_to[e] < s->P)
                s->clr[n++] = (sg_clear_ent){s->e_seq[e], s->e_from[e], e};
        }
        /* Usually in order already: wl lists the edges as the step's actions gave them their
         * words, agents in turn, and the last clear emptied it. (from, seq) is unique, so
         * the order is the same whether sorted or found sorted. */
        bool sorted = true;
        for (int32_t i = 1; i < n && sorted; i++)
            sorted = cmp_clear(&s->clr[i - 1], &s->clr[i]) < 0;
        if (!sorted) qsort(s->clr, (size_t)n, sizeof *s->clr, cmp_clear);
        /* unsetting one edge's family changes no other edge */
        for (int32_t i = 0; i < n; i++)
            if ((st = sg_unset_watched(s, s->clr[i].e, r->watch))) return st;
        return POLIS_OK;
    }
    for (int32_t u = 0; u < s->P; u++) {
        OUT_EDGES(s, u, e, next)
        {
            int32_t v = s->e_to[e];
            if (v < s->P && sg_edge_has_family(s, e, root) &&
                (st = sg_unset_family(s, s->ctx, u, v, root)))
                return st;
        }
    }
    return POLIS_OK;
}

/* ---- matching_edge(condition_attr, result_attr1, result_attr2) ------------------------------- */

static bool kv_has(const sg_kv *kv, int32_t n, int32_t attr)
{
    for (int32_t i = 0; i < n; i++)
        if (kv[i].attr == attr) return true;
    return false;
}

/* Pairs u -> v, v -> u whose condition values are equal: the lower node gets result_attr1
 * (nodes are walked in id order), the other result_attr2, and both lose the condition. A
 * self-loop is never a pair (AdaSociety crashes on one). */
static polis_status rule_match(social *s, const sg_rule *r)
{
    polis_status st;
    for (int32_t u = 0; u < s->N; u++) {
        if (!sg_node_valid(s, u)) continue;
        OUT_EDGES(s, u, e, next)
        {
            int32_t v = s->e_to[e];
            double cu, cv;
            if (v == u || !sg_edge_get(s, e, r->attr, &cu)) continue;
            if (!sg_edge_get(s, sg_edge_find(s, v, u), r->attr, &cv) || cu != cv) continue;
            for (int32_t i = 0; i < r->n_res1; i++)
                if ((st = sg_set(s, s->ctx, u, v, r->res1[i].attr, r->res1[i].value))) return st;
            for (int32_t i = 0; i < r->n_res2; i++)
                if ((st = sg_set(s, s->ctx, v, u, r->res2[i].attr, r->res2[i].value))) return st;
            if (!kv_has(r->res1, r->n_res1, r->attr) && (st = sg_unset(s, s->ctx, u, v, r->attr)))
                return st;
            if (!kv_has(r->res2, r->n_res2, r->attr) && (st = sg_unset(s, s->ctx, v, u, r->attr)))
                return st;
        }
    }
    return POLIS_OK;
}

/* ---- merge_relation_to_group(condition_attr, result_attr) ------------------------------------ */

/* Case (iv): every member of every group of `other` that `node` is not in moves, with its
 * attributes, into each of node's groups it is not yet in; those groups are deleted. */
static polis_status merge_groups(social *s, const int32_t *ng, int32_t n_ng, const int32_t *og,
                                 int32_t n_og)
{
    polis_status st;
    for (int32_t i = 0; i < n_og; i++) {
        int32_t go = og[i];
        if (in_list(ng, n_ng, go) || !s->group_live[go]) continue;
        int32_t gnode = s->P + go, n_m = 0;
        for (int32_t e = s->out_head[gnode]; e >= 0; e = s->e_out_next[e])
            if (s->e_to[e] < s->P) s->scr_c[n_m++] = s->e_to[e];
        for (int32_t k = 0; k < n_m; k++) {
            int32_t m = s->scr_c[k];
            int32_t e = sg_edge_find(s, gnode, m);
            int32_t n_kv = s->e_nattr[e];
            for (int32_t a = 0; a < n_kv; a++) {
                size_t slot = (size_t)e * (size_t)s->K + (size_t)a;
                s->scr_kv[a] = (sg_kv){s->e_attr[slot], s->e_val[slot]};
            }
            for (int32_t j = 0; j < n_ng; j++) {
                if (sg_edge_find(s, s->P + ng[j], m) >= 0) continue;
                for (int32_t a = 0; a < n_kv; a++)
                    if ((st = sg_set(s, s->ctx, s->P + ng[j], m, s->scr_kv[a].attr,
                                     s->scr_kv[a].value)))
                        return st;
            }
            if ((st = sg_remove_edge(s, s->ctx, gnode, m))) return st;
        }
        if ((st = sg_group_delete(s, s->ctx, go))) return st;
    }
    return POLIS_OK;
}

static polis_status merge_pair(social *s, const sg_rule *r, int32_t node, int32_t other,
                               double a_node, double a_other)
{
    polis_status st;
    if ((st = sg_unset(s, s->ctx, node, other, r->attr)) ||
        (st = sg_unset(s, s->ctx, other, node, r->attr)))
        return st;
    int32_t *ng = s->scr_a, *og = s->scr_b;
    int32_t n_ng = sg_groups_of(s, node, -1, ng, s->G);
    int32_t n_og = sg_groups_of(s, other, -1, og, s->G);
    if (n_ng == 0 && n_og == 0) {
        int32_t g;
        if ((st = sg_group_create(s, s->ctx, &g)) ||
            (st = sg_set(s, s->ctx, s->P + g, node, r->attr2, a_node)) ||
            (st = sg_set(s, s->ctx, s->P + g, other, r->attr2, a_other)))
            return st;
    } else if (n_ng == 0) {
        for (int32_t i = 0; i < n_og; i++)
            if (value_or(s, s->P + og[i], other, r->attr2, 0.0) != 0.0 &&
                (st = sg_set(s, s->ctx, s->P + og[i], node, r->attr2, a_node)))
                return st;
    } else if (n_og == 0) {
        for (int32_t i = 0; i < n_ng; i++)
            if (value_or(s, s->P + ng[i], node, r->attr2, 0.0) != 0.0 &&
                (st = sg_set(s, s->ctx, s->P + ng[i], other, r->attr2, a_other)))
                return st;
    } else {
        return merge_groups(s, ng, n_ng, og, n_og);
    }
    return POLIS_OK;
}

/* Agents in id order; an out-edge to an agent whose condition value is non-zero and whose
 * reverse edge has a non-zero condition value too is an accepted pair. */
static polis_status rule_merge(social *s, const sg_rule *r)
{
    polis_status st;
    for (int32_t node = 0; node < s->P; node++) {
        for (int32_t e = s->out_head[node]; e >= 0;) {
            int32_t other = s->e_to[e];
            double a_node, a_other;
            if (other >= s->P || other == node || !sg_edge_get(s, e, r->attr, &a_node) ||
                a_node == 0.0 || !sg_edge_get(s, sg_edge_find(s, other, node), r->attr, &a_other) ||
                a_other == 0.0) {
                e = s->e_out_next[e];
                continue;
            }
            if ((st = merge_pair(s, r, node, other, a_node, a_other))) return st;
            /* The pair changed node's list; walk it again from the start (the condition is
             * gone from this pair, so it is not found twice). */
            e = s->out_head[node];
        }
    }
    return POLIS_OK;
}

/* ---- normalization(attr) --------------------------------------------------------------------- */

static polis_status rule_normalize(social *s, int32_t attr)
{
    polis_status st;
    for (int32_t g = 0; g < s->next_group; g++) {
        if (!s->group_live[g]) continue;
        int32_t gnode = s->P + g;
        double sum = 0.0, v;
        for (int32_t e = s->out_head[gnode]; e >= 0; e = s->e_out_next[e])
            if (s->e_to[e] < s->P && sg_edge_get(s, e, attr, &v)) sum += v;
        if (!(sum > 0.0)) continue;
        OUT_EDGES(s, gnode, e, next)
        {
            if (s->e_to[e] < s->P && sg_edge_get(s, e, attr, &v) &&
                (st = sg_set(s, s->ctx, gnode, s->e_to[e], attr, v / sum)))
                return st;
        }
    }
    return POLIS_OK;
}

/* ---- symmetrize_relation(attr) --------------------------------------------------------------- */

/* For each edge u -> v carrying attr (or something below it: a dict value), v -> u gets the
 * same values when it carries nothing of attr. */
static polis_status rule_symmetrize(social *s, int32_t attr)
{
    polis_status st;
    for (int32_t u = 0; u < s->N; u++) {
        if (!sg_node_valid(s, u)) continue;
        OUT_EDGES(s, u, e, next)
        {
            int32_t v = s->e_to[e];
            if (!sg_edge_has_family(s, e, attr)) continue;
            if (sg_edge_has_family(s, sg_edge_find(s, v, u), attr)) continue;
            int32_t n = 0;
            for (int32_t i = 0; i < s->e_nattr[e]; i++) {
                size_t slot = (size_t)e * (size_t)s->K + (size_t)i;
                if (sg_attr_in_family(s, s->e_attr[slot], attr))
                    s->scr_kv[n++] = (sg_kv){s->e_attr[slot], s->e_val[slot]};
            }
            for (int32_t i = 0; i < n; i++)
                if ((st = sg_set(s, s->ctx, v, u, s->scr_kv[i].attr, s->scr_kv[i].value)))
                    return st;
        }
    }
    return POLIS_OK;
}

/* ---- split_score_to_group(attribute) --------------------------------------------------------- */

/* Each agent in K > 0 groups (membership edges carrying the attribute) gives its reward to
 * them, r / K each; each group pays its pot to all its members in proportion to their
 * weights (0 without the attribute). A group whose weights sum to 0 has no rule to pay
 * by: its pot goes back to the contributors (AdaSociety divides by zero there). */
static polis_status rule_split(social *s, int32_t attr, float *rewards)
{
    int32_t *list = s->scr_c, n_list = 0;
    bool refund = false;
    for (int32_t j = 0; j < s->P; j++) {
        double r = rewards[j];
        s->acc[j] = 0.0;
        int32_t k = 0;
        for (int32_t e = s->in_tail[j]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e])
            k += sg_edge_get(s, e, attr, NULL);
        if (k == 0) {
            s->acc[j] = r;
            continue;
        }
        if (r == 0.0) continue;
        double share = r / k;
        for (int32_t e = s->in_tail[j]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e]) {
            if (!sg_edge_get(s, e, attr, NULL)) continue;
            int32_t g = s->e_from[e] - s->P;
            if (!s->touched[g]) list[n_list++] = g;
            s->touched[g] = 1;
            s->pot[g] += share;
        }
    }
    for (int32_t i = 0; i < n_list; i++) {
        int32_t g = list[i], gnode = s->P + g;
        double wsum = 0.0, w;
        for (int32_t e = s->out_head[gnode]; e >= 0; e = s->e_out_next[e])
            if (s->e_to[e] < s->P && sg_edge_get(s, e, attr, &w)) wsum += w;
        if (wsum == 0.0 || !isfinite(wsum)) {
            s->touched[g] = 2;
            refund = true;
            continue;
        }
        for (int32_t e = s->out_head[gnode]; e >= 0; e = s->e_out_next[e])
            if (s->e_to[e] < s->P && sg_edge_get(s, e, attr, &w))
                s->acc[s->e_to[e]] += s->pot[g] * w / wsum;
    }
    if (refund) {
        for (int32_t j = 0; j < s->P; j++) {
            double r = rewards[j];
            int32_t k = 0;
            if (r == 0.0) continue;
            for (int32_t e = s->in_tail[j]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e])
                k += sg_edge_get(s, e, attr, NULL);
            for (int32_t e = s->in_tail[j]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e])
                if (s->touched[s->e_from[e] - s->P] == 2 && sg_edge_get(s, e, attr, NULL))
                    s->acc[j] += r / k;
        }
    }
    for (int32_t i = 0; i < n_list; i++) {
        s->touched[list[i]] = 0;
        s->pot[list[i]] = 0.0;
    }
    for (int32_t j = 0; j < s->P; j++) rewards[j] = (float)s->acc[j];
    return POLIS_OK;
}

polis_status sg_rule_run(social *s, const sg_rule *r, float *rewards)
{
    switch (r->kind) {
    case SG_RULE_CLEAR: return rule_clear(s, r);
    case SG_RULE_SPLIT: return rewards ? rule_split(s, r->attr, rewards) : POLIS_OK;
    case SG_RULE_MATCH: return rule_match(s, r);
    case SG_RULE_MERGE: return rule_merge(s, r);
    case SG_RULE_NORMALIZE: return rule_normalize(s, r->attr);
    case SG_RULE_SYMMETRIZE: return rule_symmetrize(s, r->attr);
    }
    return POLIS_OK;
}

/* ---- negotiation helpers --------------------------------------------------------------------- */

static polis_status two_agents(social *s, polis_ctx *who, const char *fn, int32_t a, int32_t b)
{
    if (a >= 0 && a < s->P && b >= 0 && b < s->P) return POLIS_OK;
    s->h->error(who, "%s: agents %d and %d: expected agent ids in [0, %d]", fn, a, b, s->P - 1);
    return POLIS_ERR_INVALID;
}

polis_status sg_request_matching(social *s, polis_ctx *who, int32_t from, int32_t to)
{
    polis_status st = two_agents(s, who, "request_matching", from, to);
    if (st) return st;
    return sg_set(s, who, from, to, s->a_match, (double)s->h->tick(s->ctx));
}

polis_status sg_propose(social *s, polis_ctx *who, int32_t from, int32_t to, double share)
{
    polis_status st = two_agents(s, who, "propose", from, to);
    if (st) return st;
    return sg_set(s, who, from, to, s->a_proposal, share);
}

polis_status sg_end_bargaining(social *s, polis_ctx *who, int32_t a, int32_t b)
{
    polis_status st = two_agents(s, who, "end_bargaining", a, b);
    if (st || (st = sg_unset(s, who, a, b, s->a_proposal)) ||
        (st = sg_unset(s, who, b, a, s->a_proposal)) ||
        (st = sg_unset(s, who, a, b, s->a_parity)) || (st = sg_unset(s, who, b, a, s->a_parity)))
        return st;
    return POLIS_OK;
}

/* Multiplies every "score" weight of group g by f; returns the new weight of agent a (or
 * dflt when a has none there). */
static polis_status scale_group(social *s, polis_ctx *who, int32_t g, double f, int32_t a,
                                double dflt, double *out)
{
    polis_status st;
    int32_t gnode = s->P + g;
    double v;
    *out = dflt;
    OUT_EDGES(s, gnode, e, next)
    {
        if (!sg_edge_get(s, e, s->a_score, &v)) continue;
        if ((st = sg_set(s, who, gnode, s->e_to[e], s->a_score, v * f))) return st;
        if (s->e_to[e] == a) *out = v * f;
    }
    return POLIS_OK;
}

polis_status sg_accept(social *s, polis_ctx *who, int32_t agent, int32_t opponent)
{
    polis_status st = two_agents(s, who, "accept_proposal", agent, opponent);
    if (st) return st;
    double proposal;
    if (agent == opponent ||
        !sg_edge_get(s, sg_edge_find(s, opponent, agent), s->a_proposal, &proposal)) {
        s->h->error(who, "accept_proposal: agent %d has no proposal from agent %d to accept", agent,
                    opponent);
        return POLIS_ERR_ACTION;
    }
    double scale = 1.0 - proposal, a1 = scale, a2 = 1.0 - scale;
    /* "some group containing" each side: the lowest id (AdaSociety takes the first group
     * predecessor in its graph order). */
    int32_t ga, gb;
    bool has_a = sg_groups_of(s, agent, -1, &ga, 1) > 0;
    bool has_b = sg_groups_of(s, opponent, -1, &gb, 1) > 0;
    if (has_a && (st = scale_group(s, who, ga, scale, agent, scale, &a1))) return st;
    if (has_b && (st = scale_group(s, who, gb, 1.0 - scale, opponent, 1.0 - scale, &a2))) return st;
    if ((st = sg_set(s, who, agent, opponent, s->a_accept, a1)) ||
        (st = sg_set(s, who, opponent, agent, s->a_accept, a2)))
        return st;
    return sg_end_bargaining(s, who, agent, opponent);
}
