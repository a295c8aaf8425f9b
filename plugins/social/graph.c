/*
 * graph.c — the social graph: interned attribute names, a preallocated edge pool with
 * per-node intrusive lists and a (from, to) hash, group nodes, and the bus events every
 * change publishes.
 *
 * Costs: finding an edge is O(1) expected (hash), setting an attribute O(K) for K
 * attributes per edge plus O(in-degree) when an edge is created (the in-list is kept
 * sorted by source), removing one O(K). Nothing here allocates after create.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- memory (create only) ------------------------------------------------------------------ */

void *sg_alloc(social *s, size_t n, size_t size)
{
    if (n == 0) n = 1; /* a zero-size request must not look like a failure */
    if (size && n > SIZE_MAX / size) return NULL;
    return s->h->alloc(s->ctx, n * size);
}

void sg_free(social *s, void *p, size_t n, size_t size)
{
    if (p) s->h->free(s->ctx, p, (n ? n : 1) * size);
}

polis_status sg_grow(social *s, void **arr, int32_t *cap, int32_t need, size_t size)
{
    if (need <= *cap) return POLIS_OK;
    int32_t ncap = *cap < 8 ? 8 : *cap;
    while (ncap < need) ncap = ncap > INT32_MAX / 2 ? need : ncap * 2;
    void *p = sg_alloc(s, (size_t)ncap, size);
    if (!p) {
        s->h->error(s->ctx, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    if (*arr) {
        memcpy(p, *arr, (size_t)*cap * size);
        sg_free(s, *arr, (size_t)*cap, size);
    }
    *arr = p;
    *cap = ncap;
    return POLIS_OK;
}

static uint32_t pow2_at_least(uint64_t n)
{
    uint32_t p = 16;
    while (p < n && p < (1u << 30)) p <<= 1;
    return p;
}

polis_status sg_graph_alloc(social *s)
{
    size_t N = (size_t)s->N, E = (size_t)s->max_edges, K = (size_t)s->K;
    s->attr_names = sg_alloc(s, (size_t)s->max_attrs, SG_NAME_MAX);
    s->attr_len = sg_alloc(s, (size_t)s->max_attrs, 1);
    s->attr_hash_mask = pow2_at_least(2 * (uint64_t)s->max_attrs) - 1;
    s->attr_hash = sg_alloc(s, (size_t)s->attr_hash_mask + 1, sizeof(int32_t));
    s->out_head = sg_alloc(s, N, sizeof(int32_t));
    s->out_tail = sg_alloc(s, N, sizeof(int32_t));
    s->in_head = sg_alloc(s, N, sizeof(int32_t));
    s->in_tail = sg_alloc(s, N, sizeof(int32_t));
    s->out_deg = sg_alloc(s, N, sizeof(int32_t));
    s->in_deg = sg_alloc(s, N, sizeof(int32_t));
    s->group_live = sg_alloc(s, (size_t)s->G, 1);
    s->e_from = sg_alloc(s, E, sizeof(int32_t));
    s->e_to = sg_alloc(s, E, sizeof(int32_t));
    s->e_out_prev = sg_alloc(s, E, sizeof(int32_t));
    s->e_out_next = sg_alloc(s, E, sizeof(int32_t));
    s->e_in_prev = sg_alloc(s, E, sizeof(int32_t));
    s->e_in_next = sg_alloc(s, E, sizeof(int32_t));
    s->e_next = sg_alloc(s, E, sizeof(int32_t));
    s->e_nattr = sg_alloc(s, E, sizeof(int32_t));
    s->e_attr = sg_alloc(s, E * K, sizeof(int32_t));
    s->e_val = sg_alloc(s, E * K, sizeof(double));
    s->bucket_mask = pow2_at_least(E) - 1;
    s->bucket = sg_alloc(s, (size_t)s->bucket_mask + 1, sizeof(int32_t));
    s->e_key = sg_alloc(s, E, sizeof(uint64_t));
    s->in_words = (s->N + 63) / 64;
    if (s->N <= SG_IN_SRC_MAX) s->in_src = sg_alloc(s, N * (size_t)s->in_words, sizeof(uint64_t));
    s->pot = sg_alloc(s, (size_t)s->G, sizeof(double));
    s->acc = sg_alloc(s, (size_t)s->P, sizeof(double));
    s->touched = sg_alloc(s, (size_t)s->G, 1);
    s->scr_a = sg_alloc(s, N, sizeof(int32_t));
    s->scr_b = sg_alloc(s, N, sizeof(int32_t));
    s->scr_c = sg_alloc(s, N, sizeof(int32_t));
    s->scr_kv = sg_alloc(s, K, sizeof(sg_kv));
    s->a_words = sg_alloc(s, (size_t)s->L, sizeof(int32_t));
    s->gate = sg_alloc(s, (size_t)s->P, sizeof(uint64_t));
    if (s->state_mode != SG_STATE_OFF) {
        const size_t records = s->state_mode == SG_STATE_SHARED ? 1 : (size_t)s->P;
        s->dense = sg_alloc(s, N * N, 1);
        s->dense_dst = sg_alloc(s, records, sizeof(void *));
        s->dense_gen_of = sg_alloc(s, records, sizeof(uint64_t));
        s->dense_log = sg_alloc(s, 2 * E, sizeof(uint32_t));
        s->dense_chg = sg_alloc(s, 2 * E, sizeof(uint32_t));
        s->dense_logv = sg_alloc(s, 2 * E, 1);
    }
    s->attr_watch = sg_alloc(s, (size_t)s->max_attrs, sizeof(uint32_t));
    s->attr_word = sg_alloc(s, (size_t)s->max_attrs, sizeof(int32_t));
    s->e_watch = sg_alloc(s, E, sizeof(uint32_t));
    s->e_wpos = sg_alloc(s, E, sizeof(int32_t));
    s->e_seq = sg_alloc(s, E, sizeof(uint64_t));
    s->wl = sg_alloc(s, E, sizeof(int32_t));
    s->clr = sg_alloc(s, E, sizeof(sg_clear_ent));
    if (s->L > 0) {
        s->com_start = sg_alloc(s, (size_t)s->P + 1, sizeof(int32_t));
        s->com_el = sg_alloc(s, E, sizeof(int32_t));
        s->com_dst = sg_alloc(s, (size_t)s->P, sizeof(void *));
        s->com_n = sg_alloc(s, (size_t)s->P, sizeof(int32_t));
        s->com_rows = sg_alloc(s, (size_t)s->P * SG_COM_ROWS, sizeof(int32_t));
    }
    s->pid_dst = sg_alloc(s, (size_t)s->P, sizeof(void *));
    s->jr_mask = pow2_at_least(4 * (uint64_t)(s->P > 1024 ? s->P : 1024)) - 1;
    s->jr = sg_alloc(s, (size_t)s->jr_mask + 1, sizeof *s->jr);
    if (!s->attr_names || !s->attr_len || !s->attr_hash || !s->out_head || !s->out_tail ||
        !s->in_head || !s->in_tail || !s->out_deg || !s->in_deg || !s->group_live || !s->e_from ||
        !s->e_to || !s->e_out_prev || !s->e_out_next || !s->e_in_prev || !s->e_in_next ||
        !s->e_next || !s->e_nattr || !s->e_attr || !s->e_val || !s->bucket || !s->e_key ||
        (s->N <= SG_IN_SRC_MAX && !s->in_src) || !s->pot || !s->acc || !s->touched || !s->scr_a ||
        !s->scr_b || !s->scr_c || !s->scr_kv || !s->a_words || !s->gate || !s->pid_dst || !s->jr ||
        !s->attr_watch || !s->attr_word || !s->e_watch || !s->e_wpos || !s->e_seq || !s->wl ||
        !s->clr ||
        (s->L > 0 && (!s->com_start || !s->com_el || !s->com_dst || !s->com_n || !s->com_rows)) ||
        (s->state_mode != SG_STATE_OFF && (!s->dense || !s->dense_dst || !s->dense_gen_of ||
                                           !s->dense_log || !s->dense_chg || !s->dense_logv))) {
        s->h->error(s->ctx, "out of memory for a graph of %d nodes and %d edges", s->N,
                    s->max_edges);
        return POLIS_ERR_NOMEM;
    }
    for (uint32_t i = 0; i <= s->attr_hash_mask; i++) s->attr_hash[i] = -1;
    for (uint32_t i = 0; i <= s->bucket_mask; i++) s->bucket[i] = -1;
    for (int32_t n = 0; n < s->N; n++)
        s->out_head[n] = s->out_tail[n] = s->in_head[n] = s->in_tail[n] = -1;
    for (int32_t e = 0; e < s->max_edges; e++) s->e_out_next[e] = e + 1 < s->max_edges ? e + 1 : -1;
    s->free_edge = s->max_edges > 0 ? 0 : -1;
    return POLIS_OK;
}

void sg_graph_free(social *s)
{
    size_t N = (size_t)s->N, E = (size_t)s->max_edges, K = (size_t)s->K;
    sg_free(s, s->attr_names, (size_t)s->max_attrs, SG_NAME_MAX);
    sg_free(s, s->attr_len, (size_t)s->max_attrs, 1);
    sg_free(s, s->attr_hash, (size_t)s->attr_hash_mask + 1, sizeof(int32_t));
    sg_free(s, s->out_head, N, sizeof(int32_t));
    sg_free(s, s->out_tail, N, sizeof(int32_t));
    sg_free(s, s->in_head, N, sizeof(int32_t));
    sg_free(s, s->in_tail, N, sizeof(int32_t));
    sg_free(s, s->out_deg, N, sizeof(int32_t));
    sg_free(s, s->in_deg, N, sizeof(int32_t));
    sg_free(s, s->group_live, (size_t)s->G, 1);
    sg_free(s, s->e_from, E, sizeof(int32_t));
    sg_free(s, s->e_to, E, sizeof(int32_t));
    sg_free(s, s->e_out_prev, E, sizeof(int32_t));
    sg_free(s, s->e_out_next, E, sizeof(int32_t));
    sg_free(s, s->e_in_prev, E, sizeof(int32_t));
    sg_free(s, s->e_in_next, E, sizeof(int32_t));
    sg_free(s, s->e_next, E, sizeof(int32_t));
    sg_free(s, s->e_nattr, E, sizeof(int32_t));
    sg_free(s, s->e_attr, E * K, sizeof(int32_t));
    sg_free(s, s->e_val, E * K, sizeof(double));
    sg_free(s, s->bucket, (size_t)s->bucket_mask + 1, sizeof(int32_t));
    sg_free(s, s->e_key, E, sizeof(uint64_t));
    sg_free(s, s->in_src, N * (size_t)s->in_words, sizeof(uint64_t));
    sg_free(s, s->pot, (size_t)s->G, sizeof(double));
    sg_free(s, s->acc, (size_t)s->P, sizeof(double));
    sg_free(s, s->touched, (size_t)s->G, 1);
    sg_free(s, s->scr_a, N, sizeof(int32_t));
    sg_free(s, s->scr_b, N, sizeof(int32_t));
    sg_free(s, s->scr_c, N, sizeof(int32_t));
    sg_free(s, s->scr_kv, K, sizeof(sg_kv));
    sg_free(s, s->a_words, (size_t)s->L, sizeof(int32_t));
    sg_free(s, s->gate, (size_t)s->P, sizeof(uint64_t));
    sg_free(s, s->dense, N * N, 1);
    const size_t records = s->state_mode == SG_STATE_SHARED ? 1 : (size_t)s->P;
    sg_free(s, s->dense_dst, records, sizeof(void *));
    sg_free(s, s->dense_gen_of, records, sizeof(uint64_t));
    sg_free(s, s->dense_log, 2 * E, sizeof(uint32_t));
    sg_free(s, s->dense_chg, 2 * E, sizeof(uint32_t));
    sg_free(s, s->dense_logv, 2 * E, 1);
    sg_free(s, s->attr_watch, (size_t)s->max_attrs, sizeof(uint32_t));
    sg_free(s, s->attr_word, (size_t)s->max_attrs, sizeof(int32_t));
    sg_free(s, s->e_watch, E, sizeof(uint32_t));
    sg_free(s, s->e_wpos, E, sizeof(int32_t));
    sg_free(s, s->e_seq, E, sizeof(uint64_t));
    sg_free(s, s->wl, E, sizeof(int32_t));
    sg_free(s, s->clr, E, sizeof(sg_clear_ent));
    sg_free(s, s->com_start, (size_t)s->P + 1, sizeof(int32_t));
    sg_free(s, s->com_el, E, sizeof(int32_t));
    sg_free(s, s->com_dst, (size_t)s->P, sizeof(void *));
    sg_free(s, s->com_n, (size_t)s->P, sizeof(int32_t));
    sg_free(s, s->com_rows, (size_t)s->P * SG_COM_ROWS, sizeof(int32_t));
    sg_free(s, s->pid_dst, (size_t)s->P, sizeof(void *));
    sg_free(s, s->jr, (size_t)s->jr_mask + 1, sizeof *s->jr);
}

/* ---- attribute names ------------------------------------------------------------------------ */

const char *sg_attr_invalid(const char *name, size_t len)
{
    if (len == 0) return "is empty";
    if (len >= SG_NAME_MAX) return "is longer than 63 characters";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 127 || c == '"' || c == '\\')
            return "has a space, a quote, a backslash or a non-ASCII character";
    }
    return NULL;
}

static uint32_t name_hash(const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 16777619u;
    return h;
}

int32_t sg_attr_find(const social *s, const char *name, size_t len)
{
    if (!name || len == 0 || len >= SG_NAME_MAX) return -1;
    for (uint32_t i = name_hash(name, len) & s->attr_hash_mask;; i = (i + 1) & s->attr_hash_mask) {
        int32_t a = s->attr_hash[i];
        if (a < 0) return -1;
        if (s->attr_len[a] == len && memcmp(s->attr_names[a], name, len) == 0) return a;
    }
}

/* ---- watches ---------------------------------------------------------------------------------
 *
 * A watch bit per attribute (bit 0: a communication word, bit k >= 1: in the family of the
 * k-th clear_temporary_relation root); an edge's bits are its attributes' OR, and the edges
 * with any bit are listed on wl (order: none; e_seq gives each out-list's order back). */

static uint32_t watch_bits(const social *s, int32_t a)
{
    uint32_t b = 0;
    for (int32_t i = 0; i < s->L; i++)
        if (s->a_words[i] == a) b |= 1u;
    for (int32_t k = 0; k < s->n_watch_roots; k++)
        if (sg_attr_in_family(s, a, s->watch_root[k])) b |= 2u << k;
    return b;
}

static void watch_rule(social *s, sg_rule *r)
{
    if (r->kind != SG_RULE_CLEAR) return;
    int32_t k = 0;
    while (k < s->n_watch_roots && s->watch_root[k] != r->attr) k++;
    if (k == s->n_watch_roots) {
        if (k == SG_WATCH_ROOTS) return; /* r->watch stays 0: the rule walks every edge */
        s->watch_root[s->n_watch_roots++] = r->attr;
    }
    r->watch = 2u << k;
}

/* Edge e gained an attribute with bits w. */
static inline void watch_add(social *s, int32_t e, uint32_t w)
{
    if (!(w & ~s->e_watch[e])) return;
    if (!s->e_watch[e]) {
        s->e_wpos[e] = s->n_wl;
        s->wl[s->n_wl++] = e;
    }
    s->e_watch[e] |= w;
}

/* Recomputes edge e's bits after its attributes changed; lists or unlists it. */
static void watch_edge(social *s, int32_t e)
{
    const int32_t *ids = s->e_attr + (size_t)e * (size_t)s->K;
    uint32_t b = 0;
    for (int32_t i = 0; i < s->e_nattr[e]; i++) b |= s->attr_watch[ids[i]];
    if (b && !s->e_watch[e]) {
        s->e_wpos[e] = s->n_wl;
        s->wl[s->n_wl++] = e;
    } else if (!b && s->e_watch[e]) {
        const int32_t last = s->wl[--s->n_wl];
        s->wl[s->e_wpos[e]] = last;
        s->e_wpos[last] = s->e_wpos[e];
    }
    s->e_watch[e] = b;
}

void sg_watch_setup(social *s)
{
    s->n_watch_roots = 0;
    for (int32_t i = 0; i < s->n_pre; i++) watch_rule(s, &s->pre[i]);
    for (int32_t i = 0; i < s->n_post; i++) watch_rule(s, &s->post[i]);
    for (int32_t a = 0; a < s->n_attrs; a++) {
        s->attr_watch[a] = watch_bits(s, a);
        s->attr_word[a] = -1;
    }
    for (int32_t i = 0; i < s->L; i++) s->attr_word[s->a_words[i]] = i;
    s->watching = true;
    for (int32_t u = 0; u < s->N; u++)
        for (int32_t e = s->out_head[u]; e >= 0; e = s->e_out_next[e]) watch_edge(s, e);
}

/* social_state's change log: the edge from -> to was created (there) or dropped. */
static void dense_note(social *s, int32_t from, int32_t to, bool there)
{
    if (!s->dense || !s->dense_valid || s->dense_lost) return;
    if (s->n_dense_log == 2 * s->max_edges) {
        s->dense_lost = true;
        return;
    }
    s->dense_logv[s->n_dense_log] = there;
    s->dense_log[s->n_dense_log++] = (uint32_t)to * (uint32_t)s->N + (uint32_t)from;
}

int32_t sg_attr_intern(social *s, const char *name, size_t len)
{
    if (!name || sg_attr_invalid(name, len)) return -1;
    uint32_t i = name_hash(name, len) & s->attr_hash_mask;
    for (;; i = (i + 1) & s->attr_hash_mask) {
        int32_t a = s->attr_hash[i];
        if (a < 0) break;
        if (s->attr_len[a] == len && memcmp(s->attr_names[a], name, len) == 0) return a;
    }
    if (s->n_attrs >= s->max_attrs) return -1;
    int32_t a = s->n_attrs++;
    memcpy(s->attr_names[a], name, len);
    s->attr_names[a][len] = '\0';
    s->attr_len[a] = (uint8_t)len;
    s->attr_hash[i] = a;
    s->attr_watch[a] = s->watching ? watch_bits(s, a) : 0;
    s->attr_word[a] = -1; /* the words are interned before sg_watch_setup */
    return a;
}

bool sg_attr_in_family(const social *s, int32_t attr, int32_t root)
{
    if (attr == root) return true;
    size_t n = s->attr_len[root];
    return s->attr_len[attr] > n && s->attr_names[attr][n] == '.' &&
           memcmp(s->attr_names[attr], s->attr_names[root], n) == 0;
}

/* ---- nodes and edges ------------------------------------------------------------------------ */

bool sg_node_valid(const social *s, int32_t node)
{
    if (node < 0 || node >= s->N) return false;
    return node < s->P || s->group_live[node - s->P];
}

const char *sg_node_str(const social *s, int32_t node, char *buf, size_t size)
{
    if (node >= 0 && node < s->P)
        snprintf(buf, size, "agent %d", node);
    else if (node >= s->P && node < s->N)
        snprintf(buf, size, "group %d", node - s->P);
    else
        snprintf(buf, size, "node %d", node);
    return buf;
}

static uint32_t edge_bucket(const social *s, int32_t from, int32_t to)
{
    uint64_t key = (uint64_t)(uint32_t)from * (uint64_t)s->N + (uint64_t)(uint32_t)to;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & s->bucket_mask;
}

static inline uint64_t edge_key(int32_t from, int32_t to)
{
    return (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
}

int32_t sg_edge_find(const social *s, int32_t from, int32_t to)
{
    if (from < 0 || to < 0 || from >= s->N || to >= s->N) return -1;
    const uint64_t key = edge_key(from, to);
    for (int32_t e = s->bucket[edge_bucket(s, from, to)]; e >= 0; e = s->e_next[e])
        if (s->e_key[e] == key) return e;
    return -1;
}

static int32_t slot_of(const social *s, int32_t e, int32_t attr)
{
    const int32_t *ids = s->e_attr + (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e]; i++)
        if (ids[i] == attr) return i;
    return -1;
}

bool sg_edge_get(const social *s, int32_t e, int32_t attr, double *value)
{
    if (e < 0) return false;
    int32_t i = slot_of(s, e, attr);
    if (i < 0) return false;
    if (value) *value = s->e_val[(size_t)e * (size_t)s->K + (size_t)i];
    return true;
}

bool sg_edge_has_family(const social *s, int32_t e, int32_t root)
{
    if (e < 0 || root < 0) return false;
    const int32_t *ids = s->e_attr + (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e]; i++)
        if (sg_attr_in_family(s, ids[i], root)) return true;
    return false;
}

static inline int32_t highest_bit(uint64_t v) /* v != 0 */
{
#if defined(__GNUC__)
    return 63 - __builtin_clzll(v);
#else
    int32_t n = 63;
    while (!(v >> n)) n--;
    return n;
#endif
}

/* The last edge of to's in-list with a source below from (-1: none), and from marked as a
 * source of to. With the bitmap, the highest source below from and one hash lookup: the
 * walk back from the tail took 13-20 steps per new edge at 100 agents with random map
 * sharing, each a likely cache miss (docs/performance-log.md). */
static int32_t in_before(social *s, int32_t from, int32_t to)
{
    if (!s->in_src) { /* walk back from the tail (sources mostly arrive in order) */
        int32_t after = s->in_tail[to];
        while (after >= 0 && s->e_from[after] > from) after = s->e_in_prev[after];
        return after;
    }
    uint64_t *row = s->in_src + (size_t)to * (size_t)s->in_words;
    int32_t w = from >> 6;
    const uint64_t bit = (uint64_t)1 << (from & 63);
    uint64_t m = row[w] & (bit - 1);
    row[w] |= bit;
    while (!m && w > 0) m = row[--w];
    if (!m) return -1;
    return sg_edge_find(s, w * 64 + highest_bit(m), to);
}

static int32_t edge_new(social *s, int32_t from, int32_t to)
{
    int32_t e = s->free_edge;
    if (e < 0) return -1;
    s->free_edge = s->e_out_next[e];
    s->e_from[e] = from;
    s->e_to[e] = to;
    s->e_key[e] = edge_key(from, to);
    s->e_nattr[e] = 0;
    s->e_watch[e] = 0;
    s->e_seq[e] = s->seq_next++;
    dense_note(s, from, to, true);
    /* out-list: append (insertion order) */
    s->e_out_prev[e] = s->out_tail[from];
    s->e_out_next[e] = -1;
    if (s->out_tail[from] >= 0)
        s->e_out_next[s->out_tail[from]] = e;
    else
        s->out_head[from] = e;
    s->out_tail[from] = e;
    /* in-list: sorted by source */
    const int32_t after = in_before(s, from, to);
    s->e_in_prev[e] = after;
    s->e_in_next[e] = after >= 0 ? s->e_in_next[after] : s->in_head[to];
    if (s->e_in_next[e] >= 0)
        s->e_in_prev[s->e_in_next[e]] = e;
    else
        s->in_tail[to] = e;
    if (after >= 0)
        s->e_in_next[after] = e;
    else
        s->in_head[to] = e;
    uint32_t b = edge_bucket(s, from, to);
    s->e_next[e] = s->bucket[b];
    s->bucket[b] = e;
    s->out_deg[from]++;
    s->in_deg[to]++;
    s->n_edges++;
    return e;
}

static void edge_drop(social *s, int32_t e)
{
    int32_t from = s->e_from[e], to = s->e_to[e];
    s->e_nattr[e] = 0;
    sg_scene_touch(s, e);
    if (s->e_watch[e]) watch_edge(s, e);
    dense_note(s, from, to, false);
    if (s->in_src)
        s->in_src[(size_t)to * (size_t)s->in_words + (size_t)(from >> 6)] &=
            ~((uint64_t)1 << (from & 63));
    if (s->e_out_prev[e] >= 0)
        s->e_out_next[s->e_out_prev[e]] = s->e_out_next[e];
    else
        s->out_head[from] = s->e_out_next[e];
    if (s->e_out_next[e] >= 0)
        s->e_out_prev[s->e_out_next[e]] = s->e_out_prev[e];
    else
        s->out_tail[from] = s->e_out_prev[e];
    if (s->e_in_prev[e] >= 0)
        s->e_in_next[s->e_in_prev[e]] = s->e_in_next[e];
    else
        s->in_head[to] = s->e_in_next[e];
    if (s->e_in_next[e] >= 0)
        s->e_in_prev[s->e_in_next[e]] = s->e_in_prev[e];
    else
        s->in_tail[to] = s->e_in_prev[e];
    int32_t *link = &s->bucket[edge_bucket(s, from, to)];
    while (*link != e) link = &s->e_next[*link];
    *link = s->e_next[e];
    s->out_deg[from]--;
    s->in_deg[to]--;
    s->n_edges--;
    s->e_nattr[e] = 0;
    s->e_out_next[e] = s->free_edge;
    s->free_edge = e;
}

void sg_graph_wipe(social *s)
{
    for (int32_t n = 0; n < s->N; n++) {
        for (int32_t e = s->out_head[n], next; e >= 0; e = next) {
            next = s->e_out_next[e];
            edge_drop(s, e);
        }
    }
    if (s->G > 0) memset(s->group_live, 0, (size_t)s->G);
    s->next_group = 0;
    s->n_live_groups = 0;
    s->revision++;
    /* sharing ended without journal entries: a number no change gets, so a reader that had
     * read everything before also finds its next change unknown */
    s->jr_floor = ++s->jr_seq;
}

static void journal_add(social *s, int32_t from, int32_t to, int32_t attr, bool on)
{
    sg_share_rec *r = &s->jr[s->jr_seq & s->jr_mask];
    r->from = from;
    r->to = to;
    r->what = (uint8_t)(attr == s->a_player ? POLIS_SOCIAL_SHARE_PLAYER : POLIS_SOCIAL_SHARE_MAP);
    r->on = on;
    s->jr_seq++;
}

/* Appends to the sharing journal when attr is a sharing attribute of an agent -> agent edge
 * and whether it is non-zero changed (callers check the change). The test is inline: most
 * changes are of other attributes. */
static inline void journal(social *s, int32_t from, int32_t to, int32_t attr, bool on)
{
    if ((attr == s->a_map || attr == s->a_player) && from < s->P && to < s->P && from != to)
        journal_add(s, from, to, attr, on);
}

bool sg_share_change(const social *s, uint64_t seq, sg_share_rec *out)
{
    if (seq < s->jr_floor || seq >= s->jr_seq || s->jr_seq - seq > (uint64_t)s->jr_mask + 1)
        return false;
    *out = s->jr[seq & s->jr_mask];
    return true;
}

/* ---- events --------------------------------------------------------------------------------- */

typedef struct ev_rel {
    int32_t from, to, attr;
    double value;
} ev_rel;

typedef struct ev_pair {
    int32_t group, agent;
} ev_pair;

static polis_status emit(social *s, int32_t type, const void *payload, size_t size)
{
    if (s->quiet) return POLIS_OK;
    s->emitting++;
    polis_status st = s->h->publish(s->ctx, type, payload, size);
    s->emitting--;
    return st;
}

/* A subscriber of a social event that changed the graph while a loop here walks a list
 * would corrupt the walk. The bus delivers social's own events synchronously, so such a
 * change is refused; a subscriber records what it wants and applies it in a hook. */
static polis_status guard(social *s, polis_ctx *who, const char *what)
{
    if (s->emitting == 0) return POLIS_OK;
    s->h->error(who,
                "%s: the social graph cannot change while one of its own events is being "
                "delivered (record the change in the subscriber and apply it in a hook)",
                what);
    return POLIS_ERR_STATE;
}

int32_t sg_groups_of(const social *s, int32_t agent, int32_t attr, int32_t *out, int32_t cap)
{
    int32_t n = 0;
    if (agent < 0 || agent >= s->P) return 0;
    for (int32_t e = s->in_tail[agent]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e])
        n += attr < 0 || sg_edge_get(s, e, attr, NULL);
    /* The walk runs from the tail, so ids come in descending order: fill from the back. */
    int32_t k = n;
    for (int32_t e = s->in_tail[agent]; e >= 0 && s->e_from[e] >= s->P; e = s->e_in_prev[e]) {
        if (attr >= 0 && !sg_edge_get(s, e, attr, NULL)) continue;
        k--;
        if (k < cap) out[k] = s->e_from[e] - s->P;
    }
    return n;
}

polis_status sg_publish_schedule(social *s, int64_t step, int32_t snapshot)
{
    struct {
        int32_t step, snapshot;
    } ev = {(int32_t)step, snapshot};
    return emit(s, s->ev_schedule, &ev, sizeof ev);
}

/* ---- changes -------------------------------------------------------------------------------- */

static polis_status bad_edge(social *s, polis_ctx *who, const char *fn, int32_t from, int32_t to,
                             int32_t attr)
{
    char a[32], b[32];
    if (!sg_node_valid(s, from) || !sg_node_valid(s, to)) {
        int32_t bad = !sg_node_valid(s, from) ? from : to;
        if (bad >= s->P && bad < s->N)
            s->h->error(who, "%s: %s does not exist", fn, sg_node_str(s, bad, a, sizeof a));
        else
            s->h->error(who, "%s: node %d is out of range (agents 0..%d, groups %d..%d)", fn, bad,
                        s->P - 1, s->P, s->N - 1);
        return POLIS_ERR_INVALID;
    }
    s->h->error(who, "%s %s -> %s: unknown attribute id %d", fn, sg_node_str(s, from, a, sizeof a),
                sg_node_str(s, to, b, sizeof b), attr);
    return POLIS_ERR_INVALID;
}

/* sg_set once the edge is there (created: by this set): the slot, the journal, the events. */
static polis_status set_on_edge(social *s, polis_ctx *who, int32_t e, bool created, int32_t attr,
                                double value)
{
    const int32_t from = s->e_from[e], to = s->e_to[e];
    char a[32], b[32];
    polis_status st;
    size_t base = (size_t)e * (size_t)s->K;
    int32_t i = slot_of(s, e, attr);
    if (i >= 0) {
        const double was = s->e_val[base + (size_t)i];
        if (was == value) return POLIS_OK;
        s->e_val[base + (size_t)i] = value;
        if ((was != 0.0) != (value != 0.0)) journal(s, from, to, attr, value != 0.0);
    } else {
        if (s->e_nattr[e] >= s->K) {
            s->h->error(who,
                        "the edge %s -> %s already has max_edge_attrs (%d) attributes; "
                        "cannot add \"%s\" (raise \"max_edge_attrs\")",
                        sg_node_str(s, from, a, sizeof a), sg_node_str(s, to, b, sizeof b), s->K,
                        s->attr_names[attr]);
            return POLIS_ERR_LIMIT;
        }
        i = s->e_nattr[e]++;
        s->e_attr[base + (size_t)i] = attr;
        s->e_val[base + (size_t)i] = value;
        watch_add(s, e, s->attr_watch[attr]);
        if (value != 0.0) journal(s, from, to, attr, true);
    }
    sg_scene_touch(s, e);
    s->revision++;
    ev_rel ev = {from, to, attr, value};
    if ((st = emit(s, s->ev_set, &ev, sizeof ev))) return st;
    if (created && from >= s->P && to < s->P) {
        ev_pair j = {from - s->P, to};
        if ((st = emit(s, s->ev_joined, &j, sizeof j))) return st;
    }
    return POLIS_OK;
}

/* sg_set, leaving the edge in *edge (-1 when the checks failed or it could not be made). */
static polis_status set_edge(social *s, polis_ctx *who, int32_t from, int32_t to, int32_t attr,
                             double value, int32_t *edge)
{
    *edge = -1;
    if (!who) who = s->ctx;
    if (!sg_node_valid(s, from) || !sg_node_valid(s, to) || attr < 0 || attr >= s->n_attrs)
        return bad_edge(s, who, "set", from, to, attr);
    char a[32], b[32];
    if (isnan(value)) {
        s->h->error(who, "set %s -> %s %s: the value is NaN", sg_node_str(s, from, a, sizeof a),
                    sg_node_str(s, to, b, sizeof b), s->attr_names[attr]);
        return POLIS_ERR_INVALID;
    }
    polis_status st = guard(s, who, "set");
    if (st) return st;
    int32_t e = sg_edge_find(s, from, to);
    bool created = false;
    if (e < 0) {
        if ((e = edge_new(s, from, to)) < 0) {
            s->h->error(who,
                        "max_edges (%d) reached: cannot add the edge %s -> %s (raise "
                        "\"max_edges\")",
                        s->max_edges, sg_node_str(s, from, a, sizeof a),
                        sg_node_str(s, to, b, sizeof b));
            return POLIS_ERR_LIMIT;
        }
        created = true;
    }
    *edge = e;
    return set_on_edge(s, who, e, created, attr, value);
}

polis_status sg_set(social *s, polis_ctx *who, int32_t from, int32_t to, int32_t attr, double value)
{
    int32_t e;
    return set_edge(s, who, from, to, attr, value, &e);
}

polis_status sg_set_all(social *s, int32_t from, int32_t to, const int32_t *attrs, int32_t n,
                        double value)
{
    if (n < 1) return POLIS_OK;
    int32_t e;
    polis_status st = set_edge(s, s->ctx, from, to, attrs[0], value, &e);
    if (st || n == 1) return st;
    /* the first set left the edge e there and checked the nodes, the value and the guard;
     * the events' subscribers cannot change the graph (guard), so it stays */
    for (int32_t i = 1; i < n; i++) {
        if (attrs[i] < 0 || attrs[i] >= s->n_attrs)
            return bad_edge(s, s->ctx, "set", from, to, attrs[i]);
        if ((st = set_on_edge(s, s->ctx, e, false, attrs[i], value))) return st;
    }
    return POLIS_OK;
}

/* Removes slot i of edge e and publishes it. The edge itself stays until drop_if_empty, so
 * callers removing several slots drop it once, at the end. rewatch false: the caller
 * recounts the edge's watch bits (watch_edge) once it removed them all. */
static polis_status remove_slot(social *s, int32_t e, int32_t i, bool rewatch)
{
    const size_t base = (size_t)e * (size_t)s->K;
    int32_t *ids = s->e_attr + base;
    double *vals = s->e_val + base;
    const ev_rel ev = {s->e_from[e], s->e_to[e], ids[i], vals[i]};
    const int32_t n = s->e_nattr[e];
    /* the slots after i move down by one, in order: swapped along, a few at most
     * (max_edge_attrs; a plain copy loop became two memmove calls) */
    for (int32_t j = i; j < n - 1; j++) {
        const int32_t a = ids[j + 1];
        const double v = vals[j + 1];
        ids[j + 1] = ids[j];
        vals[j + 1] = vals[j];
        ids[j] = a;
        vals[j] = v;
    }
    s->e_nattr[e] = n - 1;
    sg_scene_touch(s, e);
    if (rewatch && (s->attr_watch[ev.attr] & s->e_watch[e])) watch_edge(s, e);
    s->revision++;
    if (ev.value != 0.0) journal(s, ev.from, ev.to, ev.attr, false);
    return emit(s, s->ev_unset, &ev, sizeof ev);
}

static polis_status drop_if_empty(social *s, int32_t e)
{
    if (s->e_nattr[e] > 0) return POLIS_OK;
    int32_t from = s->e_from[e], to = s->e_to[e];
    edge_drop(s, e);
    s->revision++;
    if (from >= s->P && to < s->P) {
        ev_pair q = {from - s->P, to};
        return emit(s, s->ev_quit, &q, sizeof q);
    }
    return POLIS_OK;
}

static polis_status check_pair(social *s, polis_ctx *who, const char *fn, int32_t from, int32_t to,
                               int32_t attr, bool need_attr)
{
    if (!sg_node_valid(s, from) || !sg_node_valid(s, to) ||
        (need_attr && (attr < 0 || attr >= s->n_attrs)))
        return bad_edge(s, who, fn, from, to, attr);
    return guard(s, who, fn);
}

polis_status sg_unset(social *s, polis_ctx *who, int32_t from, int32_t to, int32_t attr)
{
    if (!who) who = s->ctx;
    polis_status st = check_pair(s, who, "unset", from, to, attr, true);
    if (st) return st;
    int32_t e = sg_edge_find(s, from, to);
    int32_t i = e >= 0 ? slot_of(s, e, attr) : -1;
    if (i < 0) return POLIS_OK;
    if ((st = remove_slot(s, e, i, true))) return st;
    return drop_if_empty(s, e);
}

polis_status sg_unset_family(social *s, polis_ctx *who, int32_t from, int32_t to, int32_t root)
{
    if (!who) who = s->ctx;
    polis_status st = check_pair(s, who, "unset_family", from, to, root, true);
    if (st) return st;
    int32_t e = sg_edge_find(s, from, to);
    if (e < 0) return POLIS_OK;
    size_t base = (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e];) {
        if (!sg_attr_in_family(s, s->e_attr[base + (size_t)i], root)) {
            i++;
            continue;
        }
        if ((st = remove_slot(s, e, i, true))) return st;
    }
    return drop_if_empty(s, e);
}

polis_status sg_unset_watched(social *s, int32_t e, uint32_t watch)
{
    polis_status st = guard(s, s->ctx, "unset_family");
    if (st) return st;
    /* the watch bits are recounted once, after the last removal (nothing reads them while
     * the events are delivered: subscribers cannot change the graph) */
    const size_t base = (size_t)e * (size_t)s->K;
    for (int32_t i = 0; i < s->e_nattr[e];) {
        if (!(s->attr_watch[s->e_attr[base + (size_t)i]] & watch)) {
            i++;
            continue;
        }
        if ((st = remove_slot(s, e, i, false))) {
            watch_edge(s, e);
            return st;
        }
    }
    if (s->e_nattr[e] > 0) watch_edge(s, e);
    return drop_if_empty(s, e);
}

static polis_status drop_edge(social *s, int32_t e)
{
    polis_status st;
    while (s->e_nattr[e] > 0)
        if ((st = remove_slot(s, e, 0, true))) return st;
    return drop_if_empty(s, e);
}

polis_status sg_remove_edge(social *s, polis_ctx *who, int32_t from, int32_t to)
{
    if (!who) who = s->ctx;
    polis_status st = check_pair(s, who, "remove_edge", from, to, 0, false);
    if (st) return st;
    int32_t e = sg_edge_find(s, from, to);
    return e < 0 ? POLIS_OK : drop_edge(s, e);
}

polis_status sg_group_create(social *s, polis_ctx *who, int32_t *out)
{
    if (!who) who = s->ctx;
    polis_status st = guard(s, who, "group_create");
    if (st) return st;
    if (s->next_group >= s->G) {
        s->h->error(who,
                    "max_groups (%d) reached: group ids are not reused until the graph is "
                    "rebuilt (raise \"max_groups\")",
                    s->G);
        return POLIS_ERR_LIMIT;
    }
    int32_t g = s->next_group++;
    s->group_live[g] = 1;
    s->n_live_groups++;
    s->revision++;
    if (out) *out = g;
    int32_t ev = g;
    return emit(s, s->ev_created, &ev, sizeof ev);
}

polis_status sg_group_delete(social *s, polis_ctx *who, int32_t g)
{
    if (!who) who = s->ctx;
    if (g < 0 || g >= s->G || !s->group_live[g]) {
        s->h->error(who, "group_delete: group %d does not exist", g);
        return POLIS_ERR_INVALID;
    }
    polis_status st = guard(s, who, "group_delete");
    if (st) return st;
    int32_t node = s->P + g;
    while (s->out_head[node] >= 0)
        if ((st = drop_edge(s, s->out_head[node]))) return st;
    while (s->in_head[node] >= 0)
        if ((st = drop_edge(s, s->in_head[node]))) return st;
    s->group_live[g] = 0;
    s->n_live_groups--;
    s->revision++;
    int32_t ev = g;
    return emit(s, s->ev_deleted, &ev, sizeof ev);
}

polis_status sg_graph_clear(social *s, polis_ctx *who)
{
    polis_status st;
    for (int32_t a = 0; a < s->P; a++)
        while (s->out_head[a] >= 0)
            if ((st = drop_edge(s, s->out_head[a]))) return st;
    for (int32_t g = 0; g < s->next_group; g++)
        if (s->group_live[g] && (st = sg_group_delete(s, who, g))) return st;
    s->next_group = 0;
    s->revision++;
    return POLIS_OK;
}

polis_status sg_structure_apply(social *s, const sg_structure *str)
{
    polis_status st = POLIS_OK;
    for (int32_t i = 0; i < str->n_ops && st == POLIS_OK; i++) {
        const sg_op *op = &str->ops[i];
        switch (op->kind) {
        case SG_OP_REL: st = sg_set(s, s->ctx, op->a, op->b, op->attr, op->value); break;
        case SG_OP_GROUP: st = sg_group_create(s, s->ctx, NULL); break;
        default: st = sg_set(s, s->ctx, s->P + op->a, op->b, op->attr, op->value); break;
        }
    }
    return st;
}
