/*
 * render.c — an agent's view of the social graph for LLM agents and tools.
 *
 * "json" is the Social part of AdaSociety's raw observation (spec 13) except "sharings",
 * which needs the map and inventory views of the physical ruleset (the society ruleset adds
 * it, using the `sharers` service function):
 *   {"global": {"nodes": [...], "edges": [...]}, "communications": [...]}
 * Attributes appear under their flattened names ({"sharing.Map": 1}).
 * "text" is the same for one agent in short prose: attributes by what they mean ("shares
 * map", a label's own name) rather than their internal names, and the relations that carry
 * the same attributes written once with all their endpoints. Both are deterministic: nodes
 * in id order, edges by source then insertion, in-edges by source.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Appends a string literal. */
#define PUT(s, t, lit) (s)->h->text_append((t), (lit), sizeof(lit) - 1)

void sg_fmt_double(char *buf, size_t size, double v)
{
    if (v == 0.0) {
        snprintf(buf, size, "0");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static void put_number(const social *s, polis_text *t, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        PUT(s, t, "null");
        return;
    }
    sg_fmt_double(buf, sizeof buf, v);
    s->h->text_append(t, buf, strlen(buf));
}

static void put_node(const social *s, polis_text *t, int32_t node)
{
    if (node < s->P)
        s->h->text_printf(t, "{\"type\": \"player\", \"id\": %d}", node);
    else
        s->h->text_printf(t, "{\"type\": \"group\", \"id\": %d}", node - s->P);
}

/* {"name": value, ...} of edge e; names are plain printable ASCII without quotes. */
static void put_attrs_json(const social *s, polis_text *t, int32_t e)
{
    size_t base = (size_t)e * (size_t)s->K;
    PUT(s, t, "{");
    for (int32_t i = 0; i < s->e_nattr[e]; i++) {
        const char *name = s->attr_names[s->e_attr[base + (size_t)i]];
        s->h->text_printf(t, "%s\"%s\": ", i ? ", " : "", name);
        put_number(s, t, s->e_val[base + (size_t)i]);
    }
    PUT(s, t, "}");
}

static bool has_words(const social *s, int32_t e) { return sg_edge_has_family(s, e, s->a_comm); }

static void put_words(const social *s, polis_text *t, int32_t e)
{
    PUT(s, t, "[");
    for (int32_t i = 0; i < s->L; i++) {
        double v = 0.0;
        sg_edge_get(s, e, s->a_words[i], &v);
        if (i) PUT(s, t, ", ");
        put_number(s, t, v);
    }
    PUT(s, t, "]");
}

polis_status sg_render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    social *s = ud;
    const polis_host *h = s->h;
    (void)ctx;
    PUT(s, t, "{\"global\": {\"nodes\": [");
    bool first = true;
    for (int32_t n = 0; n < s->N; n++) {
        if (!sg_node_valid(s, n)) continue;
        if (n < s->P)
            h->text_printf(t, "%s{\"type\": \"player\", \"player\": {\"id\": %d}}",
                           first ? "" : ", ", n);
        else
            h->text_printf(t, "%s{\"type\": \"group\", \"group\": {\"id\": %d}}", first ? "" : ", ",
                           n - s->P);
        first = false;
    }
    PUT(s, t, "], \"edges\": [");
    first = true;
    for (int32_t n = 0; n < s->N; n++) {
        if (!sg_node_valid(s, n)) continue;
        for (int32_t e = s->out_head[n]; e >= 0; e = s->e_out_next[e]) {
            if (first)
                PUT(s, t, "{\"from\": ");
            else
                PUT(s, t, ", {\"from\": ");
            put_node(s, t, n);
            PUT(s, t, ", \"to\": ");
            put_node(s, t, s->e_to[e]);
            PUT(s, t, ", \"attributes\": ");
            put_attrs_json(s, t, e);
            PUT(s, t, "}");
            first = false;
        }
    }
    PUT(s, t, "]}, \"communications\": [");
    first = true;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        if (!has_words(s, e)) continue;
        h->text_printf(t, "%s{\"from\": %d, \"to\": %d, \"words\": ", first ? "" : ", ",
                       s->e_from[e], agent);
        put_words(s, t, e);
        PUT(s, t, "}");
        first = false;
    }
    PUT(s, t, "]}");
    return POLIS_OK;
}

/* ---- text ------------------------------------------------------------------------------------ */

/* An attribute as prose: the sharing flags as what they share ("shares map"), a label
 * ("name.share_obs") as its name, a flag's value only when it is not 1, others as
 * "<name> <value>". Writes into buf (NUL-terminated, cut at size). */
static void attr_text(const social *s, int32_t e, int32_t i, char *buf, size_t size)
{
    size_t base = (size_t)e * (size_t)s->K;
    int32_t a = s->e_attr[base + (size_t)i];
    double val = s->e_val[base + (size_t)i];
    char v[40];
    sg_fmt_double(v, sizeof v, val);
    const char *name = s->attr_names[a];
    const char *label = a == s->a_map ? "shares map" : a == s->a_player ? "shares inventory" : NULL;
    if (!label && strncmp(name, "name.", 5) == 0) label = name + 5;
    if (label)
        snprintf(buf, size, val == 1.0 ? "%s" : "%s %s", label, v);
    else
        snprintf(buf, size, "%s %s", name, v);
}

static void put_attrs_text(const social *s, polis_text *t, int32_t e)
{
    for (int32_t i = 0; i < s->e_nattr[e]; i++) {
        char a[160];
        attr_text(s, e, i, a, sizeof a);
        s->h->text_printf(t, "%s%s", i ? ", " : "", a);
    }
}

/* Whether edges e and f carry the same attributes with the same values. */
static bool same_attrs(const social *s, int32_t e, int32_t f)
{
    if (s->e_nattr[e] != s->e_nattr[f]) return false;
    size_t be = (size_t)e * (size_t)s->K, bf = (size_t)f * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e]; i++)
        if (s->e_attr[be + (size_t)i] != s->e_attr[bf + (size_t)i] ||
            s->e_val[be + (size_t)i] != s->e_val[bf + (size_t)i])
            return false;
    return true;
}

static const char *name_of(const social *s, int32_t agent)
{
    return s->h->agent_name(s->ctx, agent);
}

static void text_groups(const social *s, polis_text *t, int32_t agent)
{
    const polis_host *h = s->h;
    bool any = false;
    /* in-list: agents first, then groups in ascending id */
    for (int32_t e = s->in_head[agent]; e >= 0; e = s->e_in_next[e]) {
        if (s->e_from[e] < s->P) continue;
        int32_t gnode = s->e_from[e];
        h->text_printf(t, "%s group %d (", any ? ";" : "", gnode - s->P);
        put_attrs_text(s, t, e);
        PUT(s, t, ")");
        bool others = false;
        for (int32_t m = s->out_head[gnode]; m >= 0; m = s->e_out_next[m]) {
            if (s->e_to[m] == agent || s->e_to[m] >= s->P) continue;
            h->text_printf(t, "%s%s (", others ? ", " : " with ", name_of(s, s->e_to[m]));
            put_attrs_text(s, t, m);
            PUT(s, t, ")");
            others = true;
        }
        if (!others) PUT(s, t, " alone");
        any = true;
    }
    if (!any) PUT(s, t, " none");
    PUT(s, t, "\n");
}

static void put_endpoint(const social *s, polis_text *t, int32_t node, int32_t agent)
{
    if (node == agent)
        PUT(s, t, "yourself");
    else if (node < s->P)
        s->h->text_printf(t, "%s", name_of(s, node));
    else
        s->h->text_printf(t, "group %d", node - s->P);
}

/* The agent's out-edges (to players and groups) or in-edges from other players, edges with
 * the same attributes written once: " to bo, cy (trust 0.5); to group 1 (member 1)". */
static void text_relations(const social *s, polis_text *t, int32_t agent, bool out)
{
    bool any = false;
#define REL_FIRST(a) (out ? s->out_head[a] : s->in_head[a])
#define REL_NEXT(e) (out ? s->e_out_next[e] : s->e_in_next[e])
#define REL_SKIP(e) (!out && (s->e_from[e] >= s->P || s->e_from[e] == agent))
#define REL_END(e) (e < 0 || (!out && s->e_from[e] >= s->P))
    for (int32_t e = REL_FIRST(agent); !REL_END(e); e = REL_NEXT(e)) {
        if (REL_SKIP(e)) continue;
        bool earlier = false; /* written with an earlier edge of the same attributes */
        for (int32_t f = REL_FIRST(agent); f != e && !earlier; f = REL_NEXT(f))
            earlier = !REL_SKIP(f) && same_attrs(s, e, f);
        if (earlier) continue;
        s->h->text_printf(t, "%s%s ", any ? ";" : "", out ? " to" : " from");
        put_endpoint(s, t, out ? s->e_to[e] : s->e_from[e], agent);
        for (int32_t f = REL_NEXT(e); !REL_END(f); f = REL_NEXT(f))
            if (!REL_SKIP(f) && same_attrs(s, e, f)) {
                PUT(s, t, ", ");
                put_endpoint(s, t, out ? s->e_to[f] : s->e_from[f], agent);
            }
        PUT(s, t, " (");
        put_attrs_text(s, t, e);
        PUT(s, t, ")");
        any = true;
    }
#undef REL_FIRST
#undef REL_NEXT
#undef REL_SKIP
#undef REL_END
    if (!any) PUT(s, t, " none");
}

polis_status sg_render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    social *s = ud;
    const polis_host *h = s->h;
    (void)ctx;
    h->text_printf(t, "Social: you are %s (agent %d).\n", name_of(s, agent), agent);
    PUT(s, t, "Your groups:");
    text_groups(s, t, agent);
    PUT(s, t, "Your relations:");
    text_relations(s, t, agent, true);
    PUT(s, t, "\nRelations to you:");
    text_relations(s, t, agent, false);
    PUT(s, t, "\n");
    bool any = false;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        if (!has_words(s, e)) continue;
        h->text_printf(t, "%s %s says ", any ? ";" : "Messages:", name_of(s, s->e_from[e]));
        put_words(s, t, e);
        any = true;
    }
    if (any) PUT(s, t, "\n");
    return POLIS_OK;
}
