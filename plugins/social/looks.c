/*
 * looks.c — the social graph in the scene (plugin ABI 1.5): live groups as nodes
 * ("group_3", kind "group"), and every attribute of every edge as a scene edge from its
 * source to its target, kind = the attribute's name, weight = its value, in the order a
 * recording keeps them (sg_order). Agents are the scene's implicit nodes, named by their agent
 * names.
 *
 * The edges are a kept list ("scene" host API, version 2) when the slots fit (max_edges x
 * max_edge_attrs <= 2^24): slot e * K + i holds attribute slot i of graph edge e, and a scene
 * writes again only the edges the graph marked changed since the last one (sg_scene_touch),
 * so a recording looks at those only. Otherwise every scene appends every edge, in order.
 * With the "scene" host API version 3 an edge is put as the scene holds it (edge_put_padded):
 * the nodes' ids padded once, the attributes' names as the graph keeps them (NUL-padded).
 */
#include <string.h>

#include "internal.h"

/* Scene edges at most (an edge per attribute per graph edge); beyond it the scene fails with
 * POLIS_ERR_LIMIT. */
#define SG_SCENE_EDGES_MAX (1 << 20)
/* Slots (max_edges x max_edge_attrs) at most for the edges to be a kept list. */
#define SG_KEPT_SLOTS_MAX (1 << 24)

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

/* The scene's edges in the order a recording keeps them — by source name, target name, then
 * attribute name, as strcmp orders them — so the recorder finds them sorted and does not sort
 * them every tick (it did, with three strcmp per comparison): the nodes and the attributes
 * ranked by name once (the attributes again when new ones appeared), the live edges sorted by
 * their target's rank, then stably by their source's, two counting passes. Allocated at the
 * first scene (an env that is never recorded or viewed pays nothing). */
typedef struct sg_order {
    int32_t *node_rank;           /* [N] */
    int32_t *attr_rank;           /* [max_attrs] */
    int32_t *sort_ids, *sort_tmp; /* [max(N, max_attrs)]: what the merge sort sorts */
    int32_t *count;               /* [N + 1] */
    int32_t *ord, *tmp;           /* [max_edges] */
    int32_t *attrs;               /* [K]: an edge's attributes in name order */
    int32_t n_ranked_attrs;       /* attributes ranked so far (names are never removed) */
} sg_order;

typedef int (*sg_cmp_fn)(const social *s, int32_t a, int32_t b);

/* Sorts ids[0..n) with cmp, stably (a bottom-up merge through tmp[n]). */
static void merge_sort(const social *s, int32_t *ids, int32_t *tmp, int32_t n, sg_cmp_fn cmp)
{
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = cmp(s, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
            while (i < mid) tmp[k++] = ids[i++];
            while (j < hi) tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, (size_t)n * sizeof *ids);
    }
}

static int cmp_node_name(const social *s, int32_t a, int32_t b)
{
    char x[32], y[32];
    return strcmp(node_id(s, a, x), node_id(s, b, y));
}

static int cmp_attr_name(const social *s, int32_t a, int32_t b)
{
    return strcmp(s->attr_names[a], s->attr_names[b]);
}

static size_t order_tmp_n(const social *s)
{
    return (size_t)(s->N > s->max_attrs ? s->N : s->max_attrs);
}

void sg_free_looks(social *s)
{
    sg_free(s, s->scene_mark, (size_t)s->max_edges, sizeof *s->scene_mark);
    sg_free(s, s->scene_dirty, (size_t)s->max_edges, sizeof *s->scene_dirty);
    sg_free(s, s->scene_shown, (size_t)s->max_edges, sizeof *s->scene_shown);
    sg_free(s, s->scene_ids, (size_t)s->N, sizeof *s->scene_ids);
    s->scene_ids = NULL;
    s->scene_mark = NULL;
    s->scene_dirty = s->scene_shown = NULL;
    sg_order *o = s->order;
    if (!o) return;
    sg_free(s, o->node_rank, (size_t)s->N, sizeof(int32_t));
    sg_free(s, o->attr_rank, (size_t)s->max_attrs, sizeof(int32_t));
    sg_free(s, o->sort_ids, order_tmp_n(s), sizeof(int32_t));
    sg_free(s, o->sort_tmp, order_tmp_n(s), sizeof(int32_t));
    sg_free(s, o->count, (size_t)s->N + 1, sizeof(int32_t));
    sg_free(s, o->ord, (size_t)s->max_edges, sizeof(int32_t));
    sg_free(s, o->tmp, (size_t)s->max_edges, sizeof(int32_t));
    sg_free(s, o->attrs, (size_t)s->K, sizeof(int32_t));
    sg_free(s, o, 1, sizeof *o);
    s->order = NULL;
}

/* The order's buffers and the nodes' ranks (agent and group names do not change). */
static polis_status order_alloc(social *s)
{
    sg_order *o = s->order = sg_alloc(s, 1, sizeof *o);
    if (!o) return POLIS_ERR_NOMEM;
    o->node_rank = sg_alloc(s, (size_t)s->N, sizeof(int32_t));
    o->attr_rank = sg_alloc(s, (size_t)s->max_attrs, sizeof(int32_t));
    o->sort_ids = sg_alloc(s, order_tmp_n(s), sizeof(int32_t));
    o->sort_tmp = sg_alloc(s, order_tmp_n(s), sizeof(int32_t));
    o->count = sg_alloc(s, (size_t)s->N + 1, sizeof(int32_t));
    o->ord = sg_alloc(s, (size_t)s->max_edges, sizeof(int32_t));
    o->tmp = sg_alloc(s, (size_t)s->max_edges, sizeof(int32_t));
    o->attrs = sg_alloc(s, (size_t)s->K, sizeof(int32_t));
    if (!o->node_rank || !o->attr_rank || !o->sort_ids || !o->sort_tmp || !o->count || !o->ord ||
        !o->tmp || !o->attrs) {
        sg_free_looks(s);
        return POLIS_ERR_NOMEM;
    }
    for (int32_t n = 0; n < s->N; n++) o->sort_ids[n] = n;
    merge_sort(s, o->sort_ids, o->sort_tmp, s->N, cmp_node_name);
    for (int32_t r = 0; r < s->N; r++) o->node_rank[o->sort_ids[r]] = r;
    return POLIS_OK;
}

/* The live edges into o->ord[0..m) in (source rank, target rank) order; returns m. */
static int32_t order_edges(const social *s, sg_order *o)
{
    int32_t m = 0, N = s->N;
    for (int32_t n = 0; n < N; n++)
        for (int32_t e = s->out_head[n]; e >= 0; e = s->e_out_next[e]) o->tmp[m++] = e;
    const int32_t *rank = o->node_rank;
    int32_t *count = o->count;
    /* by target, then stably by source: two counting passes */
    for (int pass = 0; pass < 2; pass++) {
        const int32_t *end = pass ? s->e_from : s->e_to;
        int32_t *src = pass ? o->ord : o->tmp, *dst = pass ? o->tmp : o->ord;
        memset(count, 0, ((size_t)N + 1) * sizeof *count);
        for (int32_t i = 0; i < m; i++) count[rank[end[src[i]]] + 1]++;
        for (int32_t r = 0; r < N; r++) count[r + 1] += count[r];
        for (int32_t i = 0; i < m; i++) dst[count[rank[end[src[i]]]]++] = src[i];
    }
    return m; /* in o->tmp after the second pass */
}

/* The attribute's name, NUL-terminated, in kind[SG_NAME_MAX] (no printf: a recording reads
 * every tick). */
static const char *attr_name(const social *s, int32_t attr, char *kind)
{
    size_t len = s->attr_len[attr] < SG_NAME_MAX ? s->attr_len[attr] : SG_NAME_MAX - 1;
    memcpy(kind, s->attr_names[attr], len);
    kind[len] = '\0';
    return kind;
}

/* Graph edge e's slots in the kept list: its attributes put, the slots it showed beyond them
 * cleared. */
static polis_status put_edge(polis_ctx *ctx, social *s, polis_scene *sc, int32_t e)
{
    _Static_assert(SG_NAME_MAX == POLIS_SCENE_KIND_MAX, "an attribute's name is a scene kind");
    const polis_scene_api *api = s->scene_api;
    char a[32], b[32], kind[SG_NAME_MAX];
    int32_t na = s->e_nattr[e], K = s->K;
    size_t base = (size_t)e * (size_t)K;
    polis_status st;
    const char *pf = s->scene_ids ? s->scene_ids[s->e_from[e]] : "";
    const char *pt = s->scene_ids ? s->scene_ids[s->e_to[e]] : "";
    bool padded = na && *pf && *pt;
    if (padded) { /* the names zeroed at allocation, written once: NUL-padded */
        polis_scene_edge el;
        memcpy(el.from, pf, sizeof el.from);
        memcpy(el.to, pt, sizeof el.to);
        for (int32_t i = 0; i < na; i++) {
            memcpy(el.kind, s->attr_names[s->e_attr[base + (size_t)i]], sizeof el.kind);
            el.weight = (float)s->e_val[base + (size_t)i];
            if ((st = api->edge_put_padded(ctx, sc, e * K + i, &el))) return st;
        }
    }
    const char *from = na && !padded ? node_id(s, s->e_from[e], a) : NULL;
    const char *to = na && !padded ? node_id(s, s->e_to[e], b) : NULL;
    for (int32_t i = padded ? na : 0; i < na; i++)
        if ((st = api->edge_put(ctx, sc, e * K + i, from, to,
                                attr_name(s, s->e_attr[base + (size_t)i], kind),
                                (float)s->e_val[base + (size_t)i])))
            return st;
    for (int32_t i = na; i < s->scene_shown[e]; i++)
        if ((st = api->slot_clear(ctx, sc, POLIS_SCENE_EDGES, e * K + i))) return st;
    s->scene_shown[e] = na;
    return POLIS_OK;
}

/* The kept edges: every live edge in a fresh scene (the kernel emptied the slots), else the
 * edges marked changed since the last scene. */
static polis_status kept_edges(polis_ctx *ctx, social *s, polis_scene *sc)
{
    polis_status st = POLIS_OK;
    if (!s->scene_mark) {
        s->scene_mark = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_mark);
        s->scene_dirty = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_dirty);
        s->scene_shown = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_shown);
        if (!s->scene_mark || !s->scene_dirty || !s->scene_shown) {
            sg_free_looks(s);
            return POLIS_ERR_NOMEM;
        }
        if (s->scene_api->version >= 3) { /* the nodes' ids padded (names do not change) */
            if (!(s->scene_ids = sg_alloc(s, (size_t)s->N, sizeof *s->scene_ids))) {
                sg_free_looks(s);
                return POLIS_ERR_NOMEM;
            }
            for (int32_t n = 0; n < s->N; n++) {
                char buf[32];
                const char *id = node_id(s, n, buf);
                size_t len = id ? strlen(id) : 0;
                if (id && len < sizeof *s->scene_ids) memcpy(s->scene_ids[n], id, len);
            }
        }
    }
    if (s->h->scene_fresh(ctx, sc)) {
        memset(s->scene_shown, 0, (size_t)s->max_edges * sizeof *s->scene_shown);
        for (int32_t n = 0; n < s->N && !st; n++)
            for (int32_t e = s->out_head[n]; e >= 0 && !st; e = s->e_out_next[e])
                st = put_edge(ctx, s, sc, e);
    } else {
        for (int32_t k = 0; k < s->n_scene_dirty && !st; k++)
            st = put_edge(ctx, s, sc, s->scene_dirty[k]);
    }
    for (int32_t k = 0; k < s->n_scene_dirty; k++) s->scene_mark[s->scene_dirty[k]] = 0;
    s->n_scene_dirty = 0;
    return st;
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
    if (s->scene_kept) return kept_edges(ctx, s, sc);
    if (!s->order && (st = order_alloc(s))) return st;
    sg_order *o = s->order;
    if (o->n_ranked_attrs != s->n_attrs) { /* new attribute names: rank them all again */
        for (int32_t i = 0; i < s->n_attrs; i++) o->sort_ids[i] = i;
        merge_sort(s, o->sort_ids, o->sort_tmp, s->n_attrs, cmp_attr_name);
        for (int32_t r = 0; r < s->n_attrs; r++) o->attr_rank[o->sort_ids[r]] = r;
        o->n_ranked_attrs = s->n_attrs;
    }
    int32_t m = order_edges(s, o);
    for (int32_t k = 0; k < m; k++) {
        int32_t e = o->tmp[k];
        const char *from = node_id(s, s->e_from[e], a);
        const char *to = node_id(s, s->e_to[e], b);
        /* the edge's attributes by name (an insertion sort: an edge has a few) */
        const int32_t *ea = s->e_attr + (size_t)e * (size_t)s->K;
        int32_t na = s->e_nattr[e];
        for (int32_t i = 0; i < na; i++) {
            int32_t j = i;
            for (; j > 0 && o->attr_rank[ea[o->attrs[j - 1]]] > o->attr_rank[ea[i]]; j--)
                o->attrs[j] = o->attrs[j - 1];
            o->attrs[j] = i;
        }
        for (int32_t i = 0; i < na; i++) {
            int32_t slot = o->attrs[i];
            double v = s->e_val[(size_t)e * (size_t)s->K + (size_t)slot];
            if ((st = h->scene_edge(ctx, sc, from, to, attr_name(s, ea[slot], kind), (float)v)))
                return st;
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
    polis_status st = h->look_scene(s->ctx, &def);
    if (st || edges < 1 || edges > SG_KEPT_SLOTS_MAX) return st;
    if (!(s->scene_api = h->host_api(s->ctx, POLIS_SCENE_API, 2))) return POLIS_ERR_PLUGIN;
    if ((st = s->scene_api->list_keep(s->ctx, POLIS_SCENE_EDGES, (int32_t)edges))) return st;
    s->scene_kept = true;
    return POLIS_OK;
}
