/*
 * looks.c — the social graph in the scene (plugin ABI 1.5): live groups as nodes
 * ("group_3", kind "group"), and every attribute of every edge as a scene edge from its
 * source to its target, kind = the attribute's name, weight = its value. Agents are the
 * scene's implicit nodes, named by their agent names.
 */
#include <string.h>

#include "internal.h"

/* Scene edges at most (an edge per attribute per graph edge); beyond it the scene fails with
 * POLIS_ERR_LIMIT. */
#define SG_SCENE_EDGES_MAX (1 << 20)

/* prefix then the decimal digits of n >= 0, NUL-terminated, in buf (room for the prefix and
 * 11 bytes): what snprintf "%s%d" writes, without printf (a recording reads every tick) */
static const char *numbered(char *buf, const char *prefix, size_t plen, int32_t n)
{
    char digits[12];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    memcpy(buf, prefix, plen);
    for (int i = 0; i < k; i++) buf[plen + (size_t)i] = digits[k - 1 - i];
    buf[plen + (size_t)k] = '\0';
    return buf;
}

static const char *node_id(const social *s, int32_t node, char *buf)
{
    if (node < s->P) return s->h->agent_name(s->ctx, node);
    return numbered(buf, "group_", 6, node - s->P);
}

static polis_status social_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    social *s = ud;
    const polis_host *h = s->h;
    polis_status st;
    char id[32], label[32], a[32], b[32], kind[SG_NAME_MAX];
    for (int32_t g = 0; g < s->G; g++) {
        if (!s->group_live[g]) continue;
        if ((st = h->scene_node(ctx, sc, numbered(id, "group_", 6, g), "group",
                                numbered(label, "Group ", 6, g))))
            return st;
    }
    for (int32_t n = 0; n < s->N; n++)
        for (int32_t e = s->out_head[n]; e >= 0; e = s->e_out_next[e]) {
            const char *from = node_id(s, s->e_from[e], a);
            const char *to = node_id(s, s->e_to[e], b);
            for (int32_t i = 0; i < s->e_nattr[e]; i++) {
                int32_t attr = s->e_attr[(size_t)e * (size_t)s->K + (size_t)i];
                size_t len = s->attr_len[attr] < sizeof kind ? s->attr_len[attr] : sizeof kind - 1;
                memcpy(kind, s->attr_names[attr],
                       len); /* no printf: a recording reads every tick */
                kind[len] = '\0';
                double v = s->e_val[(size_t)e * (size_t)s->K + (size_t)i];
                if ((st = h->scene_edge(ctx, sc, from, to, kind, (float)v))) return st;
            }
        }
    return POLIS_OK;
}

polis_status sg_register_looks(social *s)
{
    const polis_host *h = s->h;
    int64_t edges = (int64_t)s->max_edges * s->K;
    polis_scene_def def = {.fn = social_scene,
                           .ud = s,
                           .max_nodes = s->G,
                           .max_edges =
                               (int32_t)(edges < SG_SCENE_EDGES_MAX ? edges : SG_SCENE_EDGES_MAX)};
    return h->look_scene(s->ctx, &def);
}
