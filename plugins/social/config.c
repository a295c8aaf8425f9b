/*
 * config.c — the JSON parameters of the social plugin, read through the host's json
 * accessors so every error names its full JSON path.
 *
 * AdaSociety's attribute values are dicts, lists, strings, booleans and numbers; polis
 * attributes are named doubles. A value is flattened under its key:
 *   number             key = number
 *   true / false       key = 1 / 0
 *   "text"             key.text = 1
 *   {"Map": true}      key.Map = 1           (recursively)
 *   [a, b]             key.0 = a, key.1 = b  (recursively)
 *   {} or []           key = 0               (the key exists, as in Python)
 *   null               refused
 * An edge created with no attribute at all gets "edge" = 1, since an edge exists only while
 * it has an attribute.
 *
 * Structures (the initial graph and each schedule snapshot) are compiled into op lists and
 * dry-run on the real (still empty) graph at create, so a structure that does not fit the
 * capacities is refused at create with the path of the entry that overflows.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define NAME_BUF (SG_NAME_MAX * 4)

/* The host's json_get / json_at never fail: when a wrapper cannot be allocated they return
 * a stand-in of kind -2 (the env error is already "out of memory"). Every lookup goes
 * through these two, so an allocation failure is reported as one instead of as a missing
 * key, or worse, as a default. */
static void oom_check(social *s, const polis_json *r)
{
    if (s->h->json_kind(r) == -2) s->json_oom = true;
}

static const polis_json *jget(social *s, const polis_json *j, const char *key)
{
    const polis_json *r = s->h->json_get(s->ctx, j, key);
    oom_check(s, r);
    return r;
}

static const polis_json *jat(social *s, const polis_json *j, int32_t i)
{
    const polis_json *r = s->h->json_at(s->ctx, j, i);
    oom_check(s, r);
    return r;
}

static polis_status oom(social *s)
{
    s->h->error(s->ctx, "out of memory");
    return POLIS_ERR_NOMEM;
}

static polis_status jfail(social *s, const polis_json *j, const char *fmt, ...) POLIS_PRINTF(3, 4);
static polis_status jfail(social *s, const polis_json *j, const char *fmt, ...)
{
    if (s->json_oom) return oom(s);
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->h->error(s->ctx, "%s: %s", s->h->json_path(j), msg);
    return POLIS_ERR_CONFIG;
}

static const char *kind_name(int kind)
{
    static const char *names[] = {"null",     "a boolean", "a number",
                                  "a string", "an array",  "an object"};
    return kind >= 0 && kind <= 5 ? names[kind] : "missing";
}

static polis_status want_kind(social *s, const polis_json *j, int kind)
{
    int k = s->h->json_kind(j);
    if (k == kind) return POLIS_OK;
    return jfail(s, j, "expected %s, got %s", kind_name(kind), kind_name(k));
}

/* The optimal-string-alignment distance of two short keys (edits and adjacent swaps), capped
 * at 3; longer keys count as far apart. For "did you mean" hints only. */
static int key_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 31 || m > 31) return 3;
    int d[32][32];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t k = 0; k <= m; k++) d[0][k] = (int)k;
    for (size_t i = 1; i <= n; i++)
        for (size_t k = 1; k <= m; k++) {
            int best = d[i - 1][k - 1] + (a[i - 1] != b[k - 1]);
            if (d[i - 1][k] + 1 < best) best = d[i - 1][k] + 1;
            if (d[i][k - 1] + 1 < best) best = d[i][k - 1] + 1;
            if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] &&
                d[i - 2][k - 2] + 1 < best)
                best = d[i - 2][k - 2] + 1;
            d[i][k] = best;
        }
    return d[n][m] < 3 ? d[n][m] : 3;
}

/* Every member key of object j is in keys (NULL-terminated). */
static polis_status check_keys(social *s, const polis_json *j, const char *const *keys)
{
    int32_t n = s->h->json_len(j);
    for (int32_t i = 0; i < n; i++) {
        const char *k = s->h->json_key(j, i);
        bool ok = false;
        for (const char *const *p = keys; *p && !ok; p++) ok = k && strcmp(k, *p) == 0;
        if (ok) continue;
        char list[256] = "";
        size_t len = 0;
        for (const char *const *p = keys; *p; p++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", p == keys ? "" : ", ", *p);
            if (w < 0 || (size_t)w >= sizeof list - len) break;
            len += (size_t)w;
        }
        const char *near = NULL;
        for (const char *const *p = keys; k && *p && !near; p++)
            if (key_distance(k, *p) == 1) near = *p;
        if (near)
            return jfail(s, jat(s, j, i), "unknown key (did you mean \"%s\"? expected one of %s)",
                         near, list);
        return jfail(s, jat(s, j, i), "unknown key (expected one of %s)", list);
    }
    return POLIS_OK;
}

static polis_status intern(social *s, const polis_json *where, const char *name, size_t len,
                           int32_t *out)
{
    const char *why = sg_attr_invalid(name, len);
    if (why)
        return jfail(s, where, "attribute name \"%.*s\" %s", (int)(len > 80 ? 80 : len), name, why);
    if ((*out = sg_attr_intern(s, name, len)) < 0)
        return jfail(s, where, "more than max_attrs (%d) attribute names (raise \"max_attrs\")",
                     s->max_attrs);
    return POLIS_OK;
}

/* Reads a string naming an attribute and interns it. */
static polis_status attr_string(social *s, const polis_json *j, int32_t *out)
{
    const char *str;
    polis_status st = want_kind(s, j, 3);
    if (st || (st = s->h->json_string(s->ctx, j, &str))) return st;
    return intern(s, j, str, strlen(str), out);
}

/* ---- flattening AdaSociety values ------------------------------------------------------------ */

typedef polis_status (*kv_sink)(social *s, void *ud, const polis_json *where, int32_t attr,
                                double value);

static polis_status flatten(social *s, const polis_json *v, char *name, size_t len, kv_sink sink,
                            void *ud)
{
    polis_status st;
    int kind = s->h->json_kind(v);
    int32_t attr = -1;
    switch (kind) {
    case 1: {
        bool b;
        if ((st = s->h->json_bool(s->ctx, v, &b))) return st;
        if ((st = intern(s, v, name, len, &attr))) return st;
        return sink(s, ud, v, attr, b ? 1.0 : 0.0);
    }
    case 2: {
        double d;
        if ((st = s->h->json_double(s->ctx, v, -HUGE_VAL, HUGE_VAL, &d))) return st;
        if ((st = intern(s, v, name, len, &attr))) return st;
        return sink(s, ud, v, attr, d);
    }
    case 3: {
        const char *str;
        if ((st = s->h->json_string(s->ctx, v, &str))) return st;
        size_t n = strlen(str);
        if (len + 1 + n >= NAME_BUF) return jfail(s, v, "attribute name is too long");
        name[len] = '.';
        memcpy(name + len + 1, str, n);
        name[len + 1 + n] = '\0';
        if ((st = intern(s, v, name, len + 1 + n, &attr))) return st;
        name[len] = '\0';
        return sink(s, ud, v, attr, 1.0);
    }
    case 4:
    case 5: {
        int32_t n = s->h->json_len(v);
        if (n == 0) {
            if ((st = intern(s, v, name, len, &attr))) return st;
            return sink(s, ud, v, attr, 0.0);
        }
        for (int32_t i = 0; i < n; i++) {
            char part[32];
            const char *key = part;
            if (kind == 5)
                key = s->h->json_key(v, i);
            else
                snprintf(part, sizeof part, "%d", i);
            size_t kn = strlen(key);
            const polis_json *child = jat(s, v, i);
            if (len + 1 + kn >= NAME_BUF) return jfail(s, child, "attribute name is too long");
            name[len] = '.';
            memcpy(name + len + 1, key, kn + 1);
            if ((st = flatten(s, child, name, len + 1 + kn, sink, ud))) return st;
            name[len] = '\0';
        }
        return POLIS_OK;
    }
    case 0: return jfail(s, v, "null is not an attribute value");
    default: return jfail(s, v, "missing attribute value");
    }
}

/* Flattens the value v under the attribute name key. */
static polis_status flatten_value(social *s, const polis_json *v, const char *key, kv_sink sink,
                                  void *ud)
{
    char name[NAME_BUF];
    size_t n = strlen(key);
    if (n >= NAME_BUF) return jfail(s, v, "attribute name is too long");
    memcpy(name, key, n + 1);
    return flatten(s, v, name, n, sink, ud);
}

/* Flattens every member of the object obj. */
static polis_status flatten_dict(social *s, const polis_json *obj, kv_sink sink, void *ud)
{
    polis_status st = want_kind(s, obj, 5);
    for (int32_t i = 0, n = s->h->json_len(obj); st == POLIS_OK && i < n; i++)
        st = flatten_value(s, jat(s, obj, i), s->h->json_key(obj, i), sink, ud);
    return st;
}

typedef struct kv_list {
    sg_kv *kv;
    int32_t n, cap;
} kv_list;

static polis_status kv_push(social *s, void *ud, const polis_json *where, int32_t attr,
                            double value)
{
    (void)where;
    kv_list *l = ud;
    polis_status st = sg_grow(s, (void **)&l->kv, &l->cap, l->n + 1, sizeof(sg_kv));
    if (st) return st;
    /* A later value for the same name overwrites, as dict.update does. */
    for (int32_t i = 0; i < l->n; i++) {
        if (l->kv[i].attr == attr) {
            l->kv[i].value = value;
            return POLIS_OK;
        }
    }
    l->kv[l->n++] = (sg_kv){attr, value};
    return POLIS_OK;
}

static void kv_free(social *s, kv_list *l)
{
    sg_free(s, l->kv, (size_t)l->cap, sizeof(sg_kv));
    memset(l, 0, sizeof *l);
}

/* Copies a kv_list into an exactly sized array owned by the plugin. */
static polis_status kv_keep(social *s, const kv_list *l, sg_kv **out, int32_t *n)
{
    *out = sg_alloc(s, (size_t)l->n, sizeof(sg_kv));
    if (!*out) {
        s->h->error(s->ctx, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    if (l->n) memcpy(*out, l->kv, sizeof(sg_kv) * (size_t)l->n);
    *n = l->n;
    return POLIS_OK;
}

/* ---- sizing (before the graph exists) -------------------------------------------------------- */

static int64_t structure_groups(social *s, const polis_json *j)
{
    return s->h->json_len(jget(s, j, "groups"));
}

static int64_t structure_edges(social *s, const polis_json *j)
{
    const polis_host *h = s->h;
    int64_t n = 0;
    const polis_json *rels = jget(s, j, "relations");
    for (int32_t i = 0; i < h->json_len(rels); i++)
        n += h->json_len(jget(s, jat(s, rels, i), "players"));
    const polis_json *groups = jget(s, j, "groups");
    for (int32_t i = 0; i < h->json_len(groups); i++) {
        const polis_json *pl = jget(s, jat(s, groups, i), "players");
        n += h->json_len(jget(s, pl, "ids"));
    }
    return n;
}

/* Names a rule list element's function without reporting errors (sizing only). */
static const char *rule_name_quiet(social *s, const polis_json *r)
{
    const polis_host *h = s->h;
    const polis_json *f = r;
    if (h->json_kind(r) == 5) f = jget(s, r, "function");
    if (h->json_kind(r) == 4) f = jat(s, r, 0);
    const char *name = NULL;
    if (h->json_kind(f) == 3 && h->json_string(s->ctx, f, &name) != POLIS_OK) name = NULL;
    return name;
}

static bool has_merge_rule(social *s)
{
    const polis_json *lists[2] = {s->p.pre_updates, s->p.post_updates};
    for (int l = 0; l < 2; l++) {
        for (int32_t i = 0; i < s->h->json_len(lists[l]); i++) {
            const char *n = rule_name_quiet(s, jat(s, lists[l], i));
            if (n && strcmp(n, "merge_relation_to_group") == 0) return true;
        }
    }
    return false;
}

/* The social_state parameter: absent or false (off), true (a field in every agent's record),
 * "shared" (one field per env). */
static polis_status state_mode(social *s)
{
    const polis_json *j = s->p.social_state;
    const int kind = s->h->json_kind(j);
    bool on = false;
    const char *str = NULL;
    polis_status st;
    s->state_mode = SG_STATE_OFF;
    if (kind == -1) return POLIS_OK;
    if (kind == -2) return oom(s);
    if (kind == 1) {
        if ((st = s->h->json_bool(s->ctx, j, &on))) return st;
        s->state_mode = on ? SG_STATE_AGENT : SG_STATE_OFF;
        return POLIS_OK;
    }
    if (kind == 3) {
        if ((st = s->h->json_string(s->ctx, j, &str))) return st;
        if (strcmp(str, "shared") == 0) {
            s->state_mode = SG_STATE_SHARED;
            return POLIS_OK;
        }
        return jfail(s, j, "expected true, false or \"shared\", got \"%.64s\"", str);
    }
    return jfail(s, j, "expected true, false or \"shared\", got %s", kind_name(kind));
}

polis_status sg_config_size(social *s)
{
    const polis_host *h = s->h;
    s->P = h->n_agents(s->ctx);
    s->L = (int32_t)s->p.communication_length;
    int64_t groups = structure_groups(s, s->p.social);
    int64_t edges = structure_edges(s, s->p.social);
    const polis_json *sched = s->p.social_schedule;
    for (int32_t i = 0; i < h->json_len(sched); i++) {
        const polis_json *snap = jat(s, sched, i);
        int64_t g = structure_groups(s, snap), e = structure_edges(s, snap);
        if (g > groups) groups = g;
        if (e > edges) edges = e;
    }
    if (s->p.max_groups >= 0) {
        s->G = (int32_t)s->p.max_groups;
    } else {
        if (has_merge_rule(s) && groups < s->P) groups = s->P;
        if (groups > 65536) groups = 65536;
        s->G = (int32_t)groups;
    }
    s->N = s->P + s->G;
    polis_status st = state_mode(s);
    if (st) return st;
    if (s->state_mode != SG_STATE_OFF && (int64_t)s->N * s->N > (1 << 28)) {
        s->h->error(s->ctx, "social_state: a %d x %d matrix %s is more than 2^28 bytes", s->N, s->N,
                    s->state_mode == SG_STATE_SHARED ? "per env" : "per agent");
        return POLIS_ERR_CONFIG;
    }
    if (s->p.max_edges > 0) {
        s->max_edges = (int32_t)s->p.max_edges;
    } else {
        int64_t all = (int64_t)s->P * (int64_t)s->N;
        int64_t want = edges > 262144 ? edges : 262144;
        s->max_edges = (int32_t)(all < want ? all : want);
        if (s->max_edges < 1) s->max_edges = 1;
    }
    s->K = s->p.max_edge_attrs > 0 ? (int32_t)s->p.max_edge_attrs : 8 + s->L;
    s->max_attrs = (int32_t)s->p.max_attrs;
    return s->json_oom ? oom(s) : POLIS_OK;
}

/* ---- structures ------------------------------------------------------------------------------ */

typedef struct build {
    sg_structure *out;
    int32_t from, to; /* nodes of the edge being set */
} build;

static polis_status push_op(social *s, sg_structure *out, sg_op op)
{
    polis_status st = sg_grow(s, (void **)&out->ops, &out->cap_ops, out->n_ops + 1, sizeof(sg_op));
    if (st) return st;
    out->ops[out->n_ops++] = op;
    return POLIS_OK;
}

/* Records one attribute of the current edge and applies it to the dry-run graph, refusing
 * it here, with its path, when it would not fit. */
static polis_status build_attr(social *s, void *ud, const polis_json *where, int32_t attr,
                               double value)
{
    build *b = ud;
    char x[32], y[32];
    int32_t e = sg_edge_find(s, b->from, b->to);
    if (e < 0 && s->free_edge < 0)
        return jfail(s, where,
                     "the structure needs more than max_edges (%d) edges (raise "
                     "\"max_edges\")",
                     s->max_edges);
    if (!sg_edge_get(s, e, attr, NULL) && e >= 0 && s->e_nattr[e] >= s->K)
        return jfail(s, where,
                     "the edge %s -> %s needs more than max_edge_attrs (%d) "
                     "attributes (raise \"max_edge_attrs\")",
                     sg_node_str(s, b->from, x, sizeof x), sg_node_str(s, b->to, y, sizeof y),
                     s->K);
    sg_op op = {b->from >= s->P ? SG_OP_JOIN : SG_OP_REL,
                b->from >= s->P ? b->from - s->P : b->from, b->to, attr, value};
    polis_status st = push_op(s, b->out, op);
    if (st) return st;
    return sg_set(s, s->ctx, b->from, b->to, attr, value);
}

static polis_status agent_id(social *s, const polis_json *j, int32_t *out)
{
    int64_t v;
    polis_status st = s->h->json_int(s->ctx, j, 0, s->P - 1, &v);
    *out = (int32_t)v;
    return st;
}

static polis_status parse_relation(social *s, const polis_json *rel, sg_structure *out, kv_list *kv)
{
    const polis_host *h = s->h;
    static const char *const keys[] = {"name", "attributes", "players", "requests", "offers", NULL};
    polis_status st;
    if ((st = want_kind(s, rel, 5)) || (st = check_keys(s, rel, keys))) return st;
    kv->n = 0;
    const polis_json *name = jget(s, rel, "name");
    if (h->json_kind(name) >= 0 && (st = flatten_value(s, name, "name", kv_push, kv))) return st;
    const polis_json *attrs = jget(s, rel, "attributes");
    if (h->json_kind(attrs) >= 0 && (st = flatten_dict(s, attrs, kv_push, kv))) return st;
    if (kv->n == 0 && (st = kv_push(s, kv, rel, s->a_edge, 1.0))) return st;
    const polis_json *players = jget(s, rel, "players");
    if ((st = want_kind(s, players, 4))) return st;
    for (int32_t i = 0; i < h->json_len(players); i++) {
        const polis_json *pair = jat(s, players, i);
        static const char *const pkeys[] = {"from", "to", NULL};
        build b = {out, 0, 0};
        if ((st = want_kind(s, pair, 5)) || (st = check_keys(s, pair, pkeys)) ||
            (st = agent_id(s, jget(s, pair, "from"), &b.from)) ||
            (st = agent_id(s, jget(s, pair, "to"), &b.to)))
            return st;
        for (int32_t k = 0; k < kv->n; k++)
            if ((st = build_attr(s, &b, pair, kv->kv[k].attr, kv->kv[k].value))) return st;
    }
    return POLIS_OK;
}

static polis_status parse_group(social *s, const polis_json *grp, sg_structure *out)
{
    const polis_host *h = s->h;
    static const char *const keys[] = {"name", "players", NULL};
    static const char *const pkeys[] = {"ids", "attributes", NULL};
    polis_status st;
    if ((st = want_kind(s, grp, 5)) || (st = check_keys(s, grp, keys))) return st;
    const polis_json *name = jget(s, grp, "name");
    if (h->json_kind(name) >= 0 && (st = want_kind(s, name, 3))) return st;
    if (s->next_group >= s->G)
        return jfail(s, grp, "group %d does not fit in max_groups (%d) (raise \"max_groups\")",
                     s->next_group, s->G);
    int32_t g;
    if ((st = push_op(s, out, (sg_op){SG_OP_GROUP, s->next_group, 0, 0, 0})) ||
        (st = sg_group_create(s, s->ctx, &g)))
        return st;
    const polis_json *pl = jget(s, grp, "players");
    if (h->json_kind(pl) < 0) return POLIS_OK;
    if ((st = want_kind(s, pl, 5)) || (st = check_keys(s, pl, pkeys))) return st;
    const polis_json *ids = jget(s, pl, "ids");
    const polis_json *attrs = jget(s, pl, "attributes");
    int32_t n = 0;
    if (h->json_kind(ids) >= 0) {
        if ((st = want_kind(s, ids, 4))) return st;
        n = h->json_len(ids);
    }
    int32_t n_attrs = 0;
    if (h->json_kind(attrs) >= 0) {
        if ((st = want_kind(s, attrs, 5))) return st;
        n_attrs = h->json_len(attrs);
        for (int32_t k = 0; k < n_attrs; k++) {
            const polis_json *vals = jat(s, attrs, k);
            if ((st = want_kind(s, vals, 4))) return st;
            if (h->json_len(vals) != n)
                return jfail(s, vals, "expected %d values (one per id in players.ids), got %d", n,
                             h->json_len(vals));
        }
    }
    for (int32_t i = 0; i < n; i++) {
        const polis_json *idj = jat(s, ids, i);
        build b = {out, s->P + g, 0};
        if ((st = agent_id(s, idj, &b.to))) return st;
        for (int32_t k = 0; k < n_attrs; k++) {
            const polis_json *v = jat(s, jat(s, attrs, k), i);
            if ((st = flatten_value(s, v, h->json_key(attrs, k), build_attr, &b))) return st;
        }
        if (n_attrs == 0 && (st = build_attr(s, &b, idj, s->a_edge, 1.0))) return st;
    }
    return POLIS_OK;
}

/* Parses one structure ({"relations": [...], "groups": [...]}; absent = empty) into `out`,
 * building it on the emptied graph to check that it fits. */
static polis_status parse_structure(social *s, const polis_json *j, sg_structure *out, kv_list *kv)
{
    const polis_host *h = s->h;
    static const char *const keys[] = {"relations", "groups", NULL};
    polis_status st;
    sg_graph_wipe(s);
    if (h->json_kind(j) < 0) return POLIS_OK;
    if ((st = want_kind(s, j, 5)) || (st = check_keys(s, j, keys))) return st;
    const polis_json *rels = jget(s, j, "relations");
    const polis_json *groups = jget(s, j, "groups");
    if (h->json_kind(rels) >= 0 && (st = want_kind(s, rels, 4))) return st;
    if (h->json_kind(groups) >= 0 && (st = want_kind(s, groups, 4))) return st;
    for (int32_t i = 0; i < h->json_len(rels); i++)
        if ((st = parse_relation(s, jat(s, rels, i), out, kv))) return st;
    for (int32_t i = 0; i < h->json_len(groups); i++)
        if ((st = parse_group(s, jat(s, groups, i), out))) return st;
    return POLIS_OK;
}

static polis_status parse_schedule(social *s, kv_list *kv)
{
    const polis_host *h = s->h;
    const polis_json *j = s->p.social_schedule;
    polis_status st;
    if (h->json_kind(j) < 0) return POLIS_OK;
    if ((st = want_kind(s, j, 5))) return st;
    int32_t n = h->json_len(j);
    s->sched = sg_alloc(s, (size_t)n, sizeof(sg_structure));
    if (!s->sched) {
        s->h->error(s->ctx, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    s->cap_sched = n;
    for (int32_t i = 0; i < n; i++) {
        const char *key = h->json_key(j, i);
        const polis_json *snap = jat(s, j, i);
        size_t len = strlen(key);
        int64_t step = 0;
        bool ok = len > 0 && len <= 10;
        for (size_t c = 0; ok && c < len; c++) {
            ok = key[c] >= '0' && key[c] <= '9';
            step = step * 10 + (key[c] - '0');
        }
        if (!ok || step > 1000000000)
            return jfail(s, snap,
                         "schedule key \"%s\" is not a step number (an integer in "
                         "[0, 1000000000])",
                         key);
        for (int32_t k = 0; k < s->n_sched; k++)
            if (s->sched[k].step == step)
                return jfail(s, snap, "step %lld is scheduled twice", (long long)step);
        sg_structure *str = &s->sched[s->n_sched++];
        memset(str, 0, sizeof *str);
        str->step = step;
        if ((st = parse_structure(s, snap, str, kv))) return st;
        if (step >= h->max_steps(s->ctx))
            h->log(s->ctx,
                   "%s: step %lld is not before max_steps (%lld); this snapshot never "
                   "applies",
                   h->json_path(snap), (long long)step, (long long)h->max_steps(s->ctx));
    }
    /* ascending steps: the END hook walks them in order */
    for (int32_t i = 1; i < s->n_sched; i++) {
        sg_structure t = s->sched[i];
        int32_t k = i - 1;
        while (k >= 0 && s->sched[k].step > t.step) {
            s->sched[k + 1] = s->sched[k];
            k--;
        }
        s->sched[k + 1] = t;
    }
    return POLIS_OK;
}

/* ---- rule lists ------------------------------------------------------------------------------ */

typedef struct rule_def {
    const char *name;
    sg_rule_kind kind;
    const char *kwargs[4];
} rule_def;

static const rule_def RULES[] = {
    {"clear_temporary_relation", SG_RULE_CLEAR, {"attr", NULL}},
    {"split_score_to_group", SG_RULE_SPLIT, {"attribute", NULL}},
    {"matching_edge", SG_RULE_MATCH, {"condition_attr", "result_attr1", "result_attr2", NULL}},
    {"merge_relation_to_group", SG_RULE_MERGE, {"condition_attr", "result_attr", NULL}},
    {"normalization", SG_RULE_NORMALIZE, {"attr", NULL}},
    {"symmetrize_relation", SG_RULE_SYMMETRIZE, {"attr", NULL}},
};
#define N_RULES ((int)(sizeof RULES / sizeof RULES[0]))

static polis_status parse_rule(social *s, const polis_json *r, bool pre, sg_rule *out, kv_list *kv)
{
    const polis_host *h = s->h;
    polis_status st;
    const polis_json *fn = r, *kwargs = NULL;
    int kind = h->json_kind(r);
    if (kind == 5) {
        static const char *const keys[] = {"function", "kwargs", NULL};
        if ((st = check_keys(s, r, keys))) return st;
        fn = jget(s, r, "function");
        kwargs = jget(s, r, "kwargs");
    } else if (kind == 4) {
        if (h->json_len(r) != 2)
            return jfail(s, r, "expected [function, kwargs], got %d elements", h->json_len(r));
        fn = jat(s, r, 0);
        kwargs = jat(s, r, 1);
    } else if (kind != 3) {
        return jfail(s, r,
                     "expected a function name, {\"function\", \"kwargs\"} or "
                     "[function, kwargs], got %s",
                     kind_name(kind));
    }
    const char *name;
    if ((st = want_kind(s, fn, 3)) || (st = h->json_string(s->ctx, fn, &name))) return st;
    const rule_def *def = NULL;
    for (int i = 0; i < N_RULES && !def; i++)
        if (strcmp(RULES[i].name, name) == 0) def = &RULES[i];
    if (!def) {
        if (strcmp(name, "relation_switch") == 0 || strcmp(name, "merge_group") == 0 ||
            strcmp(name, "relation_to_group") == 0)
            return jfail(s, fn,
                         "\"%s\" is broken in AdaSociety (it crashes or never fires) and "
                         "is not provided",
                         name);
        return jfail(s, fn,
                     "unknown rule function \"%s\" (expected one of "
                     "clear_temporary_relation, split_score_to_group, matching_edge, "
                     "merge_relation_to_group, normalization, symmetrize_relation)",
                     name);
    }
    if (pre && def->kind == SG_RULE_SPLIT)
        return jfail(s, fn,
                     "split_score_to_group shares the step's reward, which exists only "
                     "after the actions: put it in post_updates");
    if (kwargs && h->json_kind(kwargs) >= 0) {
        if ((st = want_kind(s, kwargs, 5)) || (st = check_keys(s, kwargs, def->kwargs))) return st;
    }
    out->kind = def->kind;
    for (int k = 0; def->kwargs[k]; k++) {
        const polis_json *v = jget(s, kwargs, def->kwargs[k]);
        if (h->json_kind(v) < 0)
            return jfail(s, kwargs ? kwargs : r, "%s needs the argument \"%s\"", name,
                         def->kwargs[k]);
    }
    const polis_json *a0 = jget(s, kwargs, def->kwargs[0]);
    if ((st = attr_string(s, a0, &out->attr))) return st;
    if (def->kind == SG_RULE_MERGE)
        return attr_string(s, jget(s, kwargs, "result_attr"), &out->attr2);
    if (def->kind == SG_RULE_MATCH) {
        kv->n = 0;
        if ((st = flatten_dict(s, jget(s, kwargs, "result_attr1"), kv_push, kv)) ||
            (st = kv_keep(s, kv, &out->res1, &out->n_res1)))
            return st;
        kv->n = 0;
        if ((st = flatten_dict(s, jget(s, kwargs, "result_attr2"), kv_push, kv)) ||
            (st = kv_keep(s, kv, &out->res2, &out->n_res2)))
            return st;
    }
    return POLIS_OK;
}

static polis_status parse_rules(social *s, const polis_json *j, bool pre, sg_rule **out, int32_t *n,
                                int32_t *cap, kv_list *kv)
{
    const polis_host *h = s->h;
    polis_status st;
    if (h->json_kind(j) < 0) return POLIS_OK;
    if ((st = want_kind(s, j, 4))) return st;
    int32_t len = h->json_len(j);
    if ((st = sg_grow(s, (void **)out, cap, len, sizeof(sg_rule)))) return st;
    for (int32_t i = 0; i < len; i++) {
        /* counted before parsing, so what a failed parse allocated is freed with the rest */
        (*n)++;
        if ((st = parse_rule(s, jat(s, j, i), pre, &(*out)[*n - 1], kv))) return st;
    }
    return POLIS_OK;
}

/* ---- action families ------------------------------------------------------------------------- */

static const char *const FAMILY_NAMES[SG_FAM_COUNT] = {
    "communicate",  "share_map",       "share_player", "switch_group", "choose_group",
    "add_relation", "remove_relation", "join_group",   "quit_group"};

static bool family_over_groups(sg_family_kind k)
{
    return k == SG_FAM_SWITCH_GROUP || k == SG_FAM_CHOOSE_GROUP || k == SG_FAM_JOIN_GROUP ||
           k == SG_FAM_QUIT_GROUP;
}

static polis_status opt_bool(social *s, const polis_json *obj, const char *key, bool *out)
{
    const polis_json *v = jget(s, obj, key);
    return s->h->json_kind(v) < 0 ? POLIS_OK : s->h->json_bool(s->ctx, v, out);
}

static polis_status parse_family(social *s, const polis_json *j, sg_family *f, kv_list *kv)
{
    const polis_host *h = s->h;
    polis_status st;
    if ((st = want_kind(s, j, 5))) return st;
    const polis_json *fj = jget(s, j, "family");
    const char *fam;
    if ((st = want_kind(s, fj, 3)) || (st = h->json_string(s->ctx, fj, &fam))) return st;
    int kind = -1;
    for (int k = 0; k < SG_FAM_COUNT && kind < 0; k++)
        if (strcmp(FAMILY_NAMES[k], fam) == 0) kind = k;
    if (kind < 0)
        return jfail(s, fj,
                     "unknown family \"%s\" (expected one of communicate, share_map, "
                     "share_player, switch_group, choose_group, add_relation, "
                     "remove_relation, join_group, quit_group)",
                     fam);
    f->kind = (sg_family_kind)kind;
    f->enabled = true;
    f->self = true;
    static const char *const k_comm[] = {"family", "name", "enabled", "self", "word", NULL};
    static const char *const k_share[] = {"family", "name", "enabled", "self", NULL};
    static const char *const k_switch[] = {"family", "name", "enabled", "attribute", "value", NULL};
    static const char *const k_add[] = {"family", "name", "enabled", "self", "attributes", NULL};
    static const char *const k_remove[] = {"family", "name", "enabled", "self", "attribute", NULL};
    static const char *const k_join[] = {"family", "name", "enabled", "attributes", NULL};
    static const char *const k_quit[] = {"family", "name", "enabled", "attribute", NULL};
    const char *const *keys[SG_FAM_COUNT] = {k_comm, k_share,  k_share, k_switch, k_switch,
                                             k_add,  k_remove, k_join,  k_quit};
    if ((st = check_keys(s, j, keys[kind]))) return st;

    const polis_json *nj = jget(s, j, "name");
    const char *name = fam;
    if (h->json_kind(nj) >= 0 &&
        ((st = want_kind(s, nj, 3)) || (st = h->json_string(s->ctx, nj, &name))))
        return st;
    size_t nlen = strlen(name);
    bool ok = nlen > 0 && nlen <= 40;
    for (size_t i = 0; ok && i < nlen; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    }
    if (!ok)
        return jfail(s, h->json_kind(nj) >= 0 ? nj : fj,
                     "family name \"%s\" must be 1 to 40 characters from letters, digits, _ . -",
                     name);
    for (int32_t i = 0; i < f->index; i++)
        if (strcmp(s->fams[i].name, name) == 0)
            return jfail(s, h->json_kind(nj) >= 0 ? nj : fj,
                         "family name \"%s\" is already used by actions[%d] (give this one a "
                         "different \"name\")",
                         name, i);
    memcpy(f->name, name, nlen + 1);
    if ((st = opt_bool(s, j, "enabled", &f->enabled)) || (st = opt_bool(s, j, "self", &f->self)))
        return st;

    const polis_json *attr = jget(s, j, "attribute");
    const polis_json *value = jget(s, j, "value");
    const polis_json *attrs = jget(s, j, "attributes");
    switch (f->kind) {
    case SG_FAM_COMMUNICATE: {
        if (s->L < 1)
            return jfail(s, fj,
                         "communicate needs communication_length >= 1 (the words of a "
                         "message)");
        f->value = 1.0;
        const polis_json *w = jget(s, j, "word");
        if (h->json_kind(w) >= 0 && (st = h->json_double(s->ctx, w, -1e9, 1e9, &f->value)))
            return st;
        f->attr = s->a_comm;
        break;
    }
    case SG_FAM_SHARE_MAP: f->attr = s->a_map; break;
    case SG_FAM_SHARE_PLAYER: f->attr = s->a_player; break;
    case SG_FAM_SWITCH_GROUP:
    case SG_FAM_CHOOSE_GROUP:
        f->value = 1.0;
        if (h->json_kind(attr) >= 0) {
            if ((st = attr_string(s, attr, &f->attr))) return st;
        } else if ((st = intern(s, j, "division_weight", 15, &f->attr))) {
            return st;
        }
        if (h->json_kind(value) >= 0 &&
            (st = h->json_double(s->ctx, value, -HUGE_VAL, HUGE_VAL, &f->value)))
            return st;
        break;
    case SG_FAM_ADD_RELATION:
    case SG_FAM_JOIN_GROUP:
        kv->n = 0;
        if (h->json_kind(attrs) >= 0) {
            if ((st = flatten_dict(s, attrs, kv_push, kv))) return st;
        } else if (f->kind == SG_FAM_ADD_RELATION) {
            return jfail(s, j, "add_relation needs \"attributes\" (the attributes it sets)");
        }
        if (kv->n == 0 && (st = kv_push(s, kv, j, s->a_edge, 1.0))) return st;
        if (kv->n > s->K)
            return jfail(s, attrs, "%d attributes do not fit in max_edge_attrs (%d)", kv->n, s->K);
        if ((st = kv_keep(s, kv, &f->kv, &f->n_kv))) return st;
        break;
    case SG_FAM_REMOVE_RELATION:
    case SG_FAM_QUIT_GROUP:
        if (h->json_kind(attr) < 0)
            return jfail(s, j, "%s needs \"attribute\" (the attribute it removes)", fam);
        if ((st = attr_string(s, attr, &f->attr))) return st;
        break;
    default: break;
    }
    f->n_actions = family_over_groups(f->kind) ? s->G : s->P;
    if (f->n_actions == 0) return jfail(s, fj, "%s acts on groups, but max_groups is 0", fam);
    return POLIS_OK;
}

static polis_status parse_families(social *s, kv_list *kv)
{
    const polis_host *h = s->h;
    const polis_json *j = s->p.actions;
    polis_status st;
    if (h->json_kind(j) < 0) return POLIS_OK;
    if ((st = want_kind(s, j, 4))) return st;
    int32_t n = h->json_len(j);
    if (n > SG_MAX_FAMILIES) return jfail(s, j, "at most %d families, got %d", SG_MAX_FAMILIES, n);
    s->fams = sg_alloc(s, (size_t)n, sizeof(sg_family));
    if (!s->fams) {
        s->h->error(s->ctx, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    s->cap_fams = n;
    for (int32_t i = 0; i < n; i++) {
        sg_family *f = &s->fams[i];
        f->s = s;
        f->index = i;
        s->n_fams = i + 1;
        if ((st = parse_family(s, jat(s, j, i), f, kv))) return st;
        if (f->enabled) s->gate_reset |= (uint64_t)1 << i;
    }
    return POLIS_OK;
}

/* ---- load / free ----------------------------------------------------------------------------- */

static polis_status intern_fixed(social *s, const char *name, int32_t *out)
{
    if ((*out = sg_attr_intern(s, name, strlen(name))) >= 0) return POLIS_OK;
    s->h->error(s->ctx, "max_attrs (%d) is too small for the plugin's own attribute names",
                s->max_attrs);
    return POLIS_ERR_CONFIG;
}

polis_status sg_config_load(social *s)
{
    polis_status st;
    if ((st = intern_fixed(s, "edge", &s->a_edge)) ||
        (st = intern_fixed(s, "sharing.Map", &s->a_map)) ||
        (st = intern_fixed(s, "sharing.Player", &s->a_player)) ||
        (st = intern_fixed(s, "communication", &s->a_comm)) ||
        (st = intern_fixed(s, "matching_request_step", &s->a_match)) ||
        (st = intern_fixed(s, "proposal", &s->a_proposal)) ||
        (st = intern_fixed(s, "parity", &s->a_parity)) ||
        (st = intern_fixed(s, "accept", &s->a_accept)) ||
        (st = intern_fixed(s, "score", &s->a_score)))
        return st;
    for (int32_t i = 0; i < s->L; i++) {
        char name[32];
        snprintf(name, sizeof name, "communication.%d", i);
        if ((st = intern_fixed(s, name, &s->a_words[i]))) return st;
    }
    kv_list kv = {0};
    s->quiet = true;
    st = parse_structure(s, s->p.social, &s->initial, &kv);
    if (st == POLIS_OK) st = parse_schedule(s, &kv);
    sg_graph_wipe(s);
    s->quiet = false;
    if (st == POLIS_OK)
        st = parse_rules(s, s->p.pre_updates, true, &s->pre, &s->n_pre, &s->cap_pre, &kv);
    if (st == POLIS_OK)
        st = parse_rules(s, s->p.post_updates, false, &s->post, &s->n_post, &s->cap_post, &kv);
    if (st == POLIS_OK) st = parse_families(s, &kv);
    kv_free(s, &kv);
    if (s->json_oom) return oom(s);
    if (st) return st;
    sg_watch_setup(s);
    s->post_split_at = s->n_post;
    for (int32_t i = 0; i < s->n_post; i++) {
        if (s->post[i].kind == SG_RULE_SPLIT) {
            s->post_split_at = i;
            break;
        }
    }
    return POLIS_OK;
}

static void free_rules(social *s, sg_rule *r, int32_t n, int32_t cap)
{
    for (int32_t i = 0; i < n; i++) {
        if (r[i].res1) sg_free(s, r[i].res1, (size_t)r[i].n_res1, sizeof(sg_kv));
        if (r[i].res2) sg_free(s, r[i].res2, (size_t)r[i].n_res2, sizeof(sg_kv));
    }
    sg_free(s, r, (size_t)cap, sizeof(sg_rule));
}

void sg_config_free(social *s)
{
    sg_free(s, s->initial.ops, (size_t)s->initial.cap_ops, sizeof(sg_op));
    for (int32_t i = 0; i < s->n_sched; i++)
        sg_free(s, s->sched[i].ops, (size_t)s->sched[i].cap_ops, sizeof(sg_op));
    sg_free(s, s->sched, (size_t)s->cap_sched, sizeof(sg_structure));
    free_rules(s, s->pre, s->n_pre, s->cap_pre);
    free_rules(s, s->post, s->n_post, s->cap_post);
    for (int32_t i = 0; i < s->n_fams; i++)
        if (s->fams[i].kv) sg_free(s, s->fams[i].kv, (size_t)s->fams[i].n_kv, sizeof(sg_kv));
    sg_free(s, s->fams, (size_t)s->cap_fams, sizeof(sg_family));
}
