/*
 * render.c — an agent's view of the social graph for LLM agents and tools.
 *
 * "json" is the Social part of AdaSociety's raw observation (spec 13) except "sharings",
 * which needs the map and inventory views of the physical ruleset (the society ruleset adds
 * it, using the `sharers` service function):
 *   {"global": {"nodes": [...], "edges": [...]}, "communications": [...]}
 * Attributes appear under their flattened names ({"sharing.Map": 1}).
 * "text" is the same for one agent in short prose. Both are deterministic: nodes in id
 * order, edges by source then insertion, in-edges by source.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "social_internal.h"

/* Appends a string literal. */
#define PUT(s, t, lit) (s)->h->text_append((t), (lit), sizeof(lit) - 1)

void soc_fmt_double(char *buf, size_t size, double v)
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
    soc_fmt_double(buf, sizeof buf, v);
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

static bool has_words(const social *s, int32_t e)
{
    return soc_edge_has_family(s, e, s->a_comm);
}

static void put_words(const social *s, polis_text *t, int32_t e)
{
    PUT(s, t, "[");
    for (int32_t i = 0; i < s->L; i++) {
        double v = 0.0;
        soc_edge_get(s, e, s->a_words[i], &v);
        if (i) PUT(s, t, ", ");
        put_number(s, t, v);
    }
    PUT(s, t, "]");
}

polis_status soc_render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    social *s = ud;
    const polis_host *h = s->h;
    (void)ctx;
    PUT(s, t, "{\"global\": {\"nodes\": [");
    bool first = true;
    for (int32_t n = 0; n < s->N; n++) {
        if (!soc_node_valid(s, n)) continue;
        if (n < s->P)
            h->text_printf(t, "%s{\"type\": \"player\", \"player\": {\"id\": %d}}",
                           first ? "" : ", ", n);
        else
            h->text_printf(t, "%s{\"type\": \"group\", \"group\": {\"id\": %d}}",
                           first ? "" : ", ", n - s->P);
        first = false;
    }
    PUT(s, t, "], \"edges\": [");
    first = true;
    for (int32_t n = 0; n < s->N; n++) {
        if (!soc_node_valid(s, n)) continue;
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

static void put_attrs_text(const social *s, polis_text *t, int32_t e)
{
    size_t base = (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e]; i++) {
        char v[40];
        soc_fmt_double(v, sizeof v, s->e_val[base + (size_t)i]);
        s->h->text_printf(t, "%s%s %s", i ? ", " : "", s->attr_names[s->e_attr[base + (size_t)i]],
                          v);
    }
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

static void text_sharing(const social *s, polis_text *t, int32_t agent)
{
    const polis_host *h = s->h;
    bool any = false;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        double map = 0.0, player = 0.0;
        if (s->e_from[e] == agent) continue;
        soc_edge_get(s, e, s->a_map, &map);
        soc_edge_get(s, e, s->a_player, &player);
        if (map == 0.0 && player == 0.0) continue;
        h->text_printf(t, "%s %s (%s%s%s)", any ? "," : "", name_of(s, s->e_from[e]),
                       map != 0.0 ? "map" : "", map != 0.0 && player != 0.0 ? ", " : "",
                       player != 0.0 ? "inventory" : "");
        any = true;
    }
    if (!any) PUT(s, t, " nobody");
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

polis_status soc_render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    social *s = ud;
    const polis_host *h = s->h;
    (void)ctx;
    h->text_printf(t, "Social: you are %s (agent %d).\n", name_of(s, agent), agent);
    PUT(s, t, "Your groups:");
    text_groups(s, t, agent);
    PUT(s, t, "Sharing with you:");
    text_sharing(s, t, agent);
    PUT(s, t, "Your relations:");
    bool any = false;
    for (int32_t e = s->out_head[agent]; e >= 0; e = s->e_out_next[e]) {
        if (any)
            PUT(s, t, "; to ");
        else
            PUT(s, t, " to ");
        put_endpoint(s, t, s->e_to[e], agent);
        PUT(s, t, " (");
        put_attrs_text(s, t, e);
        PUT(s, t, ")");
        any = true;
    }
    if (!any) PUT(s, t, " none");
    PUT(s, t, "\nRelations to you:");
    any = false;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        if (s->e_from[e] == agent) continue;
        if (any)
            PUT(s, t, "; from ");
        else
            PUT(s, t, " from ");
        put_endpoint(s, t, s->e_from[e], agent);
        PUT(s, t, " (");
        put_attrs_text(s, t, e);
        PUT(s, t, ")");
        any = true;
    }
    if (!any) PUT(s, t, " none");
    PUT(s, t, "\n");
    any = false;
    for (int32_t e = s->in_head[agent]; e >= 0 && s->e_from[e] < s->P; e = s->e_in_next[e]) {
        if (!has_words(s, e)) continue;
        h->text_printf(t, "%s %s says ", any ? ";" : "Messages:", name_of(s, s->e_from[e]));
        put_words(s, t, e);
        any = true;
    }
    if (any) PUT(s, t, "\n");
    return POLIS_OK;
}
