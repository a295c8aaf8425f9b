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
 * the nodes' ids padded once, at registration, the attributes' names as the graph keeps them
 * (NUL-padded).
 *
 * The scene can also be drawn from copies ("scene" host API version 5, scene_copy) when the
 * edges are kept and every node's id fits a padded one: sg_take, on the env's thread after each
 * reset and step, copies the live groups and each edge changed since the last take (every live
 * edge when fresh): its ends and its attributes' ids and weights; sg_draw, on the reader's
 * thread, makes social_scene's calls from it against what each edge's slots show of its own
 * (draw's state), reading of the plugin only what registration set (sg_copy: the padded ids,
 * the sizes) and the names of the attributes its take holds. The graph marks only the rules'
 * list (scene_mark, scene_dirty: the edges changed since either reader read); whichever of
 * social_scene and sg_take reads it clears it and leaves its edges to the other in that one's
 * own list (read_marks; while the other has never read, it takes the rules' list as it is), so
 * the step pays nothing for the second reader. The graph marks nothing before the first scene or
 * take (scene_mark NULL): an env never read pays nothing in its steps. Both paths put an edge
 * with put_padded and clear_beyond, and a group with show_group.
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

/* a reader's edges left to it by the other reader (the env's scene or the copy's take), once
 * each */
typedef struct sg_left {
    uint8_t *mark; /* [max_edges] */
    int32_t *list; /* [max_edges] */
    int32_t n;
    bool on; /* it read once: the other leaves it what it reads of the rules' list */
} sg_left;

/* The scene drawn from copies (registered with the copy, freed with the plugin). */
typedef struct sg_copy {
    /* set at registration, never changed: what sg_draw reads on the reader's thread */
    const polis_host *h;
    const polis_scene_api *api;
    const char (*ids)[POLIS_SCENE_ID_MAX]; /* s->scene_ids: every node's fits */
    /* s->attr_names. An attribute's name is written once, when sg_attr_intern makes its id,
     * and never changed (names are never removed), and a take holds only ids made before it:
     * the take is handed to the reader after those writes, so a draw reads the names of the
     * ids its take holds while the env's thread goes on interning others */
    const char (*names)[SG_NAME_MAX];
    int32_t P, G, N, K, max_edges, max_attrs;
    /* the env's thread's (sg_take, social_scene) */
    social *s;
    uint8_t *rules_mark; /* s->scene_mark and s->scene_dirty once a reader read (marks_on) */
    int32_t *rules_list;
    sg_left scene, take; /* left to the env's scene by the take, to the take by the scene */
} sg_copy;

static void left_free(social *s, sg_left *l)
{
    sg_free(s, l->mark, (size_t)s->max_edges, sizeof *l->mark);
    sg_free(s, l->list, (size_t)s->max_edges, sizeof *l->list);
    l->mark = NULL;
    l->list = NULL;
}

/* The rules' marks and the scene's shown counts (the first scene of an env with no copy). */
static void marks_free(social *s)
{
    sg_free(s, s->scene_mark, (size_t)s->max_edges, sizeof *s->scene_mark);
    sg_free(s, s->scene_dirty, (size_t)s->max_edges, sizeof *s->scene_dirty);
    sg_free(s, s->scene_shown, (size_t)s->max_edges, sizeof *s->scene_shown);
    s->scene_mark = NULL;
    s->scene_dirty = s->scene_shown = NULL;
}

void sg_free_looks(social *s)
{
    sg_copy *c = s->copy;
    if (c) { /* the rules' marks are the copy's */
        sg_free(s, c->rules_mark, (size_t)s->max_edges, sizeof *c->rules_mark);
        sg_free(s, c->rules_list, (size_t)s->max_edges, sizeof *c->rules_list);
        left_free(s, &c->scene);
        left_free(s, &c->take);
        sg_free(s, c, 1, sizeof *c);
        s->copy = NULL;
        s->scene_mark = NULL;
        s->scene_dirty = NULL;
    }
    marks_free(s);
    sg_free(s, s->scene_ids, (size_t)s->N, sizeof *s->scene_ids);
    s->scene_ids = NULL;
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

/* Attribute slots 0 .. na - 1 of graph edge e (na >= 1), from -> to, into its kept slots
 * e * K + i as the scene holds them (edge_put_padded): the ends' padded ids (ids), the
 * attributes' names as the graph keeps them (names, NUL-padded), the attributes' ids and
 * values from the graph (ea, ev) or, `packed`, from a take's (id, float weight) pairs. */
static inline __attribute__((always_inline)) polis_status
put_padded(polis_ctx *ctx, polis_scene *sc, const polis_scene_api *api,
           const char (*ids)[POLIS_SCENE_ID_MAX], const char (*names)[SG_NAME_MAX], int32_t K,
           int32_t e, int32_t from, int32_t to, int32_t na, const int32_t *ea, const double *ev,
           const uint8_t *pairs, bool packed)
{
    _Static_assert(SG_NAME_MAX == POLIS_SCENE_KIND_MAX, "an attribute's name is a scene kind");
    polis_scene_edge el;
    polis_status st;
    memcpy(el.from, ids[from], sizeof el.from);
    memcpy(el.to, ids[to], sizeof el.to);
    for (int32_t i = 0; i < na; i++) {
        int32_t attr;
        if (packed) {
            memcpy(&attr, pairs + 8 * (size_t)i, sizeof attr);
            memcpy(&el.weight, pairs + 8 * (size_t)i + 4, sizeof el.weight);
        } else {
            attr = ea[i];
            el.weight = (float)ev[i];
        }
        memcpy(el.kind, names[attr], sizeof el.kind);
        if ((st = api->edge_put_padded(ctx, sc, e * K + i, &el))) return st;
    }
    return POLIS_OK;
}

/* The slots of graph edge e that showed attributes na .. *shown - 1 cleared; *shown = na. */
static inline polis_status clear_beyond(polis_ctx *ctx, polis_scene *sc, const polis_scene_api *api,
                                        int32_t K, int32_t e, int32_t na, int32_t *shown)
{
    polis_status st;
    for (int32_t i = na; i < *shown; i++)
        if ((st = api->slot_clear(ctx, sc, POLIS_SCENE_EDGES, e * K + i))) return st;
    *shown = na;
    return POLIS_OK;
}

/* Graph edge e's slots in the kept list: its attributes put, the slots it showed beyond them
 * cleared. */
static polis_status put_edge(polis_ctx *ctx, social *s, polis_scene *sc, int32_t e)
{
    const polis_scene_api *api = s->scene_api;
    int32_t na = s->e_nattr[e], K = s->K, from = s->e_from[e], to = s->e_to[e];
    size_t base = (size_t)e * (size_t)K;
    polis_status st = POLIS_OK;
    if (na && s->scene_ids && s->scene_ids[from][0] && s->scene_ids[to][0]) {
        st = put_padded(ctx, sc, api, (const char(*)[POLIS_SCENE_ID_MAX])s->scene_ids,
                        (const char(*)[SG_NAME_MAX])s->attr_names, K, e, from, to, na,
                        s->e_attr + base, s->e_val + base, NULL, false);
    } else if (na) { /* an id that does not fit (edge_put says so), or "scene" version 2 */
        char a[32], b[32], kind[SG_NAME_MAX];
        const char *f = node_id(s, from, a), *t = node_id(s, to, b);
        for (int32_t i = 0; i < na && !st; i++)
            st = api->edge_put(ctx, sc, e * K + i, f, t,
                               attr_name(s, s->e_attr[base + (size_t)i], kind),
                               (float)s->e_val[base + (size_t)i]);
    }
    if (st) return st;
    return clear_beyond(ctx, sc, api, K, e, na, &s->scene_shown[e]);
}

/* The rules' marks from now on (sg_scene_touch marks nothing before the first scene or take):
 * the copy's, allocated at registration (a take allocates nothing), or, with no copy,
 * allocated now with the scene's shown counts. */
static polis_status marks_on(social *s)
{
    sg_copy *c = s->copy;
    if (c) {
        s->scene_mark = c->rules_mark;
        s->scene_dirty = c->rules_list;
        return POLIS_OK;
    }
    s->scene_mark = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_mark);
    s->scene_dirty = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_dirty);
    s->scene_shown = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_shown);
    if (!s->scene_mark || !s->scene_dirty || !s->scene_shown) {
        marks_free(s);
        return POLIS_ERR_NOMEM;
    }
    return POLIS_OK;
}

static inline void left_add(sg_left *l, int32_t e)
{
    if (!l->mark[e]) {
        l->mark[e] = 1;
        l->list[l->n++] = e;
    }
}

/* The edges changed since reader `mine` last read, into *list (returns their count): what the
 * other left it first, then the rules' list, each edge once, the rules' list cleared and its
 * edges left to `other`; or, while the other has never read (then it left nothing, and its
 * first read is fresh: the kernel's first), the rules' list itself. done_marks clears them. */
static int32_t read_marks(social *s, sg_left *mine, sg_left *other, const int32_t **list)
{
    if (!other->on) {
        *list = s->scene_dirty;
        return s->n_scene_dirty;
    }
    for (int32_t k = 0; k < s->n_scene_dirty; k++) {
        int32_t e = s->scene_dirty[k];
        s->scene_mark[e] = 0;
        left_add(mine, e);
        left_add(other, e);
    }
    s->n_scene_dirty = 0;
    *list = mine->list;
    return mine->n;
}

/* After a read: the reader's list and the rules' (when it read them itself) cleared. */
static void done_marks(social *s, sg_left *mine)
{
    for (int32_t k = 0; k < mine->n; k++) mine->mark[mine->list[k]] = 0;
    mine->n = 0;
    for (int32_t k = 0; k < s->n_scene_dirty; k++) s->scene_mark[s->scene_dirty[k]] = 0;
    s->n_scene_dirty = 0;
}

/* The kept edges: every live edge in a fresh scene (the kernel emptied the slots), else the
 * edges marked changed since the last scene. */
static polis_status kept_edges(polis_ctx *ctx, social *s, polis_scene *sc)
{
    polis_status st = POLIS_OK;
    if (!s->scene_mark && (st = marks_on(s))) return st;
    sg_copy *c = s->copy;
    const int32_t *list = s->scene_dirty;
    int32_t n = s->n_scene_dirty;
    if (c) { /* the rules' list and what the takes left */
        c->scene.on = true;
        n = read_marks(s, &c->scene, &c->take, &list);
    }
    if (s->h->scene_fresh(ctx, sc)) {
        memset(s->scene_shown, 0, (size_t)s->max_edges * sizeof *s->scene_shown);
        for (int32_t v = 0; v < s->N && !st; v++)
            for (int32_t e = s->out_head[v]; e >= 0 && !st; e = s->e_out_next[e])
                st = put_edge(ctx, s, sc, e);
    } else {
        for (int32_t k = 0; k < n && !st; k++) st = put_edge(ctx, s, sc, list[k]);
    }
    /* cleared even on failure: a scene that fails is followed by a fresh one */
    if (c) {
        done_marks(s, &c->scene);
    } else {
        for (int32_t k = 0; k < s->n_scene_dirty; k++) s->scene_mark[s->scene_dirty[k]] = 0;
        s->n_scene_dirty = 0;
    }
    return st;
}

/* Group g's node: its id ("group_<g>") and label. */
static inline polis_status show_group(polis_ctx *ctx, const polis_host *h, polis_scene *sc,
                                      int32_t g, const char *id)
{
    char label[32];
    return h->scene_node(ctx, sc, id, "group", numbered(label, "Group ", 6, g));
}

static polis_status social_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    social *s = ud;
    const polis_host *h = s->h;
    polis_status st;
    char id[32], a[32], b[32], kind[SG_NAME_MAX];
    for (int32_t g = 0; g < s->G; g++) {
        if (!s->group_live[g]) continue;
        if ((st = show_group(ctx, h, sc, g,
                             s->scene_ids ? s->scene_ids[s->P + g] : numbered(id, "group_", 6, g))))
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

/* ---- the scene drawn from copies ("scene" host API version 5) ------------------------------
 *
 * A take: a head (uint32 1 when fresh, int32 the edges sent), each group's byte of group_live
 * (G of them, padded to 4), then per edge sent its record: int32 e, from, to and its count of
 * attributes na, then na pairs of (int32 attribute id, float weight). Sent: every live edge when
 * fresh, else every edge changed since the last take (one with no attributes is gone). */
#define TAKE_HEAD 8
#define TAKE_EDGE 16

static size_t take_groups(int32_t G) { return ((size_t)G + 3) & ~(size_t)3; }

/* Graph edge e's record at p; the end of it. */
static inline uint8_t *take_edge(const social *s, int32_t e, uint8_t *p)
{
    const int32_t na = s->e_nattr[e];
    memcpy(p, &e, sizeof e);
    memcpy(p + 4, &s->e_from[e], sizeof(int32_t));
    memcpy(p + 8, &s->e_to[e], sizeof(int32_t));
    memcpy(p + 12, &na, sizeof na);
    p += TAKE_EDGE;
    const size_t base = (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < na; i++, p += 8) {
        const float w = (float)s->e_val[base + (size_t)i];
        memcpy(p, &s->e_attr[base + (size_t)i], sizeof(int32_t));
        memcpy(p + 4, &w, sizeof w);
    }
    return p;
}

/* On the env's thread: what changed since the last take (read_marks). */
static polis_status sg_take(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len)
{
    (void)ctx;
    sg_copy *c = ud;
    social *s = c->s;
    if (!s->scene_mark) marks_on(s); /* the copy's: nothing to allocate */
    c->take.on = true;
    const int32_t *list;
    const int32_t changed = read_marks(s, &c->take, &c->scene, &list);
    uint8_t *const b = buf, *p = b + TAKE_HEAD + take_groups(c->G);
    if (c->G) memcpy(b + TAKE_HEAD, s->group_live, (size_t)c->G);
    memset(b + TAKE_HEAD + c->G, 0, take_groups(c->G) - (size_t)c->G); /* the padding */
    int32_t n = 0;
    if (fresh) {
        for (int32_t v = 0; v < s->N; v++)
            for (int32_t e = s->out_head[v]; e >= 0; e = s->e_out_next[e], n++)
                p = take_edge(s, e, p);
    } else {
        for (; n < changed; n++) p = take_edge(s, list[n], p);
    }
    done_marks(s, &c->take);
    const uint32_t fr = fresh;
    memcpy(b, &fr, sizeof fr);
    memcpy(b + 4, &n, sizeof n);
    *len = (size_t)(p - b);
    return POLIS_OK;
}

/* On the reader's thread: social_scene's calls from a take, against what each edge's slots show
 * (state: an int32 a graph edge). Every number read is checked before it is used. */
static polis_status sg_draw(polis_ctx *ctx, void *ud, void *state, const void *take,
                            size_t take_len, polis_scene *sc)
{
    const sg_copy *c = ud;
    const polis_host *h = c->h;
    int32_t *shown = state;
    const uint8_t *p = take, *const end = p + take_len;
    const size_t head = TAKE_HEAD + take_groups(c->G);
    if (take_len < head) {
        h->error(ctx, "scene copy: a take of %zu bytes, shorter than its head (%zu)", take_len,
                 head);
        return POLIS_ERR_INVALID;
    }
    uint32_t fr;
    int32_t n;
    memcpy(&fr, p, sizeof fr);
    memcpy(&n, p + 4, sizeof n);
    if (fr > 1 || n < 0) {
        h->error(ctx, "scene copy: a take's head says fresh %u, %d edges", (unsigned)fr, (int)n);
        return POLIS_ERR_INVALID;
    }
    bool fresh = h->scene_fresh(ctx, sc);
    if ((fr != 0) != fresh) {
        h->error(ctx, "scene copy: a %s take for a %s scene", fr ? "fresh" : "partial",
                 fresh ? "fresh" : "kept");
        return POLIS_ERR_STATE;
    }
    polis_status st;
    for (int32_t g = 0; g < c->G; g++) {
        uint8_t live = p[TAKE_HEAD + (size_t)g];
        if (live > 1) {
            h->error(ctx, "scene copy: group %d's byte is %u", (int)g, (unsigned)live);
            return POLIS_ERR_INVALID;
        }
        if (live && (st = show_group(ctx, h, sc, g, c->ids[c->P + g]))) return st;
    }
    p += head;
    for (int32_t k = 0; k < n; k++) {
        int32_t r[4];
        if ((size_t)(end - p) < sizeof r) {
            h->error(ctx, "scene copy: the take ends inside edge record %d of %d", (int)k, (int)n);
            return POLIS_ERR_INVALID;
        }
        memcpy(r, p, sizeof r);
        p += sizeof r;
        const int32_t e = r[0], from = r[1], to = r[2], na = r[3];
        if ((uint32_t)e >= (uint32_t)c->max_edges || (uint32_t)na > (uint32_t)c->K ||
            (na && ((uint32_t)from >= (uint32_t)c->N || (uint32_t)to >= (uint32_t)c->N)) ||
            (size_t)(end - p) < 8 * (size_t)na) {
            h->error(ctx,
                     "scene copy: edge record %d of %d (edge %d, %d -> %d, %d attributes) is "
                     "outside max_edges %d, %d nodes, max_edge_attrs %d or the take's %zu bytes",
                     (int)k, (int)n, (int)e, (int)from, (int)to, (int)na, (int)c->max_edges,
                     (int)c->N, (int)c->K, take_len);
            return POLIS_ERR_INVALID;
        }
        for (int32_t i = 0; i < na; i++) {
            int32_t attr;
            memcpy(&attr, p + 8 * (size_t)i, sizeof attr);
            if ((uint32_t)attr >= (uint32_t)c->max_attrs) {
                h->error(ctx, "scene copy: edge %d's attribute %d is outside max_attrs %d", (int)e,
                         (int)attr, (int)c->max_attrs);
                return POLIS_ERR_INVALID;
            }
        }
        if ((na && (st = put_padded(ctx, sc, c->api, c->ids, c->names, c->K, e, from, to, na, NULL,
                                    NULL, p, true))) ||
            (st = clear_beyond(ctx, sc, c->api, c->K, e, na, &shown[e])))
            return st;
        p += 8 * (size_t)na;
    }
    if (p != end) {
        h->error(ctx, "scene copy: %zu bytes after the take's %d edges", (size_t)(end - p), (int)n);
        return POLIS_ERR_INVALID;
    }
    return POLIS_OK;
}

/* Every node's id padded (agent names and group ids do not change); false when one does not
 * fit (its edges then take edge_put, which says so). */
static polis_status ids_make(social *s, bool *all_fit)
{
    if (!(s->scene_ids = sg_alloc(s, (size_t)s->N, sizeof *s->scene_ids))) return POLIS_ERR_NOMEM;
    *all_fit = true;
    for (int32_t v = 0; v < s->N; v++) {
        char buf[32];
        const char *id = node_id(s, v, buf);
        size_t len = id ? strlen(id) : 0;
        if (id && len > 0 && len < sizeof *s->scene_ids)
            memcpy(s->scene_ids[v], id, len);
        else
            *all_fit = false;
    }
    return POLIS_OK;
}

static polis_status left_alloc(social *s, sg_left *l)
{
    l->mark = sg_alloc(s, (size_t)s->max_edges, sizeof *l->mark);
    l->list = sg_alloc(s, (size_t)s->max_edges, sizeof *l->list);
    return l->mark && l->list ? POLIS_OK : POLIS_ERR_NOMEM;
}

/* The copy registered (the edges are kept, every id fits): its marks, lists and the scene's
 * shown counts allocated now, none when the largest take would exceed 2^30 bytes. */
static polis_status copy_register(social *s)
{
    uint64_t max_take = TAKE_HEAD + (uint64_t)take_groups(s->G) +
                        (uint64_t)s->max_edges * (TAKE_EDGE + 8 * (uint64_t)s->K);
    if (max_take > ((uint64_t)1 << 30)) return POLIS_OK;
    sg_copy *c = s->copy = sg_alloc(s, 1, sizeof *c);
    if (!c) return POLIS_ERR_NOMEM;
    *c = (sg_copy){.h = s->h,
                   .api = s->scene_api,
                   .ids = (const char(*)[POLIS_SCENE_ID_MAX])s->scene_ids,
                   .names = (const char(*)[SG_NAME_MAX])s->attr_names,
                   .P = s->P,
                   .G = s->G,
                   .N = s->N,
                   .K = s->K,
                   .max_edges = s->max_edges,
                   .max_attrs = s->max_attrs,
                   .s = s};
    c->rules_mark = sg_alloc(s, (size_t)s->max_edges, sizeof *c->rules_mark);
    c->rules_list = sg_alloc(s, (size_t)s->max_edges, sizeof *c->rules_list);
    s->scene_shown = sg_alloc(s, (size_t)s->max_edges, sizeof *s->scene_shown);
    if (!c->rules_mark || !c->rules_list || !s->scene_shown || left_alloc(s, &c->scene) ||
        left_alloc(s, &c->take))
        return POLIS_ERR_NOMEM;
    polis_scene_copy_def def = {.take = sg_take,
                                .draw = sg_draw,
                                .ud = c,
                                .max_take = (size_t)max_take,
                                .state_bytes = sizeof(int32_t) * (size_t)s->max_edges};
    return s->scene_api->scene_copy(s->ctx, &def);
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
    if (s->scene_api->version < 3) return POLIS_OK;
    bool all_fit;
    if ((st = ids_make(s, &all_fit))) return st;
    /* the recorder may draw the scene from copies, off the stepping thread (API 5) */
    return all_fit && s->scene_api->version >= 5 ? copy_register(s) : POLIS_OK;
}
