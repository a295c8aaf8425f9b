/*
 * plugins/social/internal.h — the state of the social plugin, shared by its files:
 *   graph.c   the graph: interned attributes, preallocated edge pool, groups, bus events
 *   config.c  the JSON parameters: structures, schedule, rule lists, action families
 *   rules.c   AdaSociety's rule functions, reward sharing and negotiation helpers
 *   render.c  the "json" and "text" views
 *   social.c  the plugin: hooks, actions, observations, the service, exports
 *
 * Node ids: agents 0..P-1, group g is node P+g. Every edge lives in three intrusive lists:
 * the out-list of its source (insertion order, as AdaSociety's networkx graph iterates),
 * the in-list of its target (ascending source id, so agents come before groups) and a hash
 * bucket keyed by (from, to). Everything is allocated at create; nothing in step.
 *
 * Names shared between the files start with sg_ / SG_ (social graph); the society ruleset's
 * own prefix is soc_.
 */
#ifndef SOCIAL_INTERNAL_H
#define SOCIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/plugin.h"
#include "polis/social.h"

#define SG_NAME_MAX 64     /* attribute names: 1..63 characters */
#define SG_MAX_FAMILIES 64 /* one gate bit each */
#define SG_WATCH_ROOTS 31  /* clear_temporary_relation roots with a watch bit (graph.c) */
#define SG_COM_ROWS 16     /* rows of a communication record remembered (social.c) */
#define SG_IN_SRC_MAX 8192 /* the most nodes with in_src bitmaps (N^2 / 8 bytes: 8 MiB) */

#if defined(__GNUC__)
#define SG_INTERNAL __attribute__((visibility("hidden")))
#else
#define SG_INTERNAL
#endif

enum { SG_STATE_OFF = 0, SG_STATE_AGENT = 1, SG_STATE_SHARED = 2 };

typedef struct sg_params {
    int64_t max_groups; /* -1: auto */
    int64_t max_edges;  /* 0: auto */
    int64_t max_attrs;
    int64_t max_edge_attrs; /* 0: auto */
    int64_t communication_length;
    const polis_json *social_state; /* false, true or "shared" (sg_config_size reads it) */
    bool player_id;
    int64_t priority;
    const polis_json *social;
    const polis_json *social_schedule;
    const polis_json *pre_updates;
    const polis_json *post_updates;
    const polis_json *actions;
} sg_params;

typedef struct sg_kv {
    int32_t attr;
    double value;
} sg_kv;

/* One step of building a structure (the initial graph or a schedule snapshot). */
typedef enum sg_op_kind {
    SG_OP_REL = 0,   /* set a -> b attr = value (agents) */
    SG_OP_GROUP = 1, /* create the next group (its id is a: graphs are rebuilt from empty) */
    SG_OP_JOIN = 2   /* set group a -> agent b attr = value */
} sg_op_kind;

typedef struct sg_op {
    int32_t kind, a, b, attr;
    double value;
} sg_op;

typedef struct sg_structure {
    int64_t step; /* schedule key; 0 for the initial structure */
    sg_op *ops;
    int32_t n_ops, cap_ops;
} sg_structure;

typedef enum sg_rule_kind {
    SG_RULE_CLEAR = 0,     /* clear_temporary_relation(attr) */
    SG_RULE_SPLIT = 1,     /* split_score_to_group(attribute) */
    SG_RULE_MATCH = 2,     /* matching_edge(condition_attr, result_attr1, result_attr2) */
    SG_RULE_MERGE = 3,     /* merge_relation_to_group(condition_attr, result_attr) */
    SG_RULE_NORMALIZE = 4, /* normalization(attr) */
    SG_RULE_SYMMETRIZE = 5 /* symmetrize_relation(attr) */
} sg_rule_kind;

typedef struct sg_rule {
    sg_rule_kind kind;
    int32_t attr;  /* the rule's (condition) attribute */
    int32_t attr2; /* merge: result_attr */
    sg_kv *res1, *res2;
    int32_t n_res1, n_res2;
    uint32_t watch; /* clear: the watch bit of its root (0: none, every edge is walked) */
} sg_rule;

typedef enum sg_family_kind {
    SG_FAM_COMMUNICATE = 0,
    SG_FAM_SHARE_MAP = 1,
    SG_FAM_SHARE_PLAYER = 2,
    SG_FAM_SWITCH_GROUP = 3,
    SG_FAM_CHOOSE_GROUP = 4,
    SG_FAM_ADD_RELATION = 5,
    SG_FAM_REMOVE_RELATION = 6,
    SG_FAM_JOIN_GROUP = 7,
    SG_FAM_QUIT_GROUP = 8,
    SG_FAM_COUNT = 9
} sg_family_kind;

struct social;

typedef struct sg_family {
    struct social *s;
    sg_family_kind kind;
    int32_t index;
    char name[SG_NAME_MAX];
    int32_t attr; /* switch/choose: weight; remove/quit: the removed key; share: sharing.X */
    double value; /* switch/choose: weight value; communicate: the word */
    sg_kv *kv;    /* add_relation / join_group: the attributes set */
    int32_t n_kv;
    bool self;    /* agent families: may target oneself */
    bool enabled; /* gate at reset */
    int32_t first_action, n_actions;
} sg_family;

typedef struct social {
    const polis_host *h;
    polis_ctx *ctx;
    sg_params p;
    bool json_oom;      /* a json lookup could not allocate (config.c) */
    int32_t P, G, N, L; /* agents, max groups, nodes, communication length */

    /* attributes */
    int32_t max_attrs, n_attrs;
    char (*attr_names)[SG_NAME_MAX];
    uint8_t *attr_len;
    int32_t *attr_hash; /* open addressing, -1 empty; names are never removed */
    uint32_t attr_hash_mask;

    /* nodes */
    int32_t *out_head, *out_tail, *in_head, *in_tail, *out_deg, *in_deg; /* [N] */
    uint8_t *group_live;                                                 /* [G] */
    int32_t next_group, n_live_groups;

    /* edges */
    int32_t max_edges, K, n_edges, free_edge;
    int32_t *e_from, *e_to, *e_out_prev, *e_out_next, *e_in_prev, *e_in_next, *e_next;
    int32_t *e_nattr;
    int32_t *e_attr; /* [max_edges][K] */
    double *e_val;   /* [max_edges][K] */
    uint64_t *e_key; /* [max_edges] from << 32 | to: one load per hash chain step */
    int32_t *bucket;
    uint32_t bucket_mask;
    /* [N][in_words]: bit f of row t set while the edge f -> t exists, so a new edge's place
     * in t's in-list (sorted by source) is the edge from the highest set bit below f, found
     * without walking the list; NULL above SG_IN_SRC_MAX nodes (the walk back from the tail) */
    uint64_t *in_src;
    int32_t in_words;
    uint64_t revision;
    struct sg_order *order; /* looks.c: the scene's edges in name order (at the first scene) */
    /* looks.c: the scene's edges as a kept list, slot e * K + i for attribute slot i of edge
     * e: the edges changed since the last scene (sg_scene_touch), once each */
    bool scene_kept;
    const polis_scene_api *scene_api;
    uint8_t *scene_mark;  /* [max_edges] */
    int32_t *scene_dirty; /* [max_edges] */
    int32_t n_scene_dirty;
    int32_t *scene_shown; /* [max_edges] the attributes the edge's slots show */
    /* [N] each node's id NUL-padded as a scene edge holds it (edge_put_padded, "scene"
     * version 3; built at registration, never changed); "" for one that does not fit (its
     * edges take edge_put, which says so) */
    char (*scene_ids)[POLIS_SCENE_ID_MAX];
    /* looks.c: the scene drawn from copies ("scene" version 5; NULL: none registered) */
    struct sg_copy *copy;
    bool quiet;       /* no bus events (dry runs at create) */
    int32_t emitting; /* inside a publish of a social event */

    /* bus event types */
    int32_t ev_set, ev_unset, ev_created, ev_deleted, ev_joined, ev_quit, ev_schedule;

    /* attributes the plugin itself uses */
    int32_t a_edge, a_map, a_player, a_comm, a_match, a_proposal, a_parity, a_accept, a_score;
    int32_t *a_words; /* [L]: communication.0 .. communication.L-1 */

    /* structures and rules */
    sg_structure initial;
    sg_structure *sched;
    int32_t n_sched, cap_sched, sched_next;
    sg_rule *pre, *post;
    int32_t n_pre, n_post, cap_pre, cap_post;
    int32_t post_split_at; /* post rules from here on run in the reward transform */

    /* social actions */
    sg_family *fams;
    int32_t n_fams, cap_fams;
    uint64_t *gate;      /* [P] one bit per family */
    uint64_t gate_reset; /* the families' "enabled" */

    /* scratch, sized at create */
    double *pot, *acc;              /* [G], [P] */
    uint8_t *touched;               /* [G] */
    int32_t *scr_a, *scr_b, *scr_c; /* [N] each */
    sg_kv *scr_kv;                  /* [K] */
    /* social_state: off, a field in every agent's record, or one shared field per env (the
     * "shared_observations" host API); sg_config_size reads the parameter */
    int32_t state_mode; /* SG_STATE_* */
    int8_t *dense;      /* [N][N] when social_state is on */
    bool dense_valid;
    /* Observation records already holding their content (the kernel never clears a record,
     * and clients must not write into one): agent a's social_state record is dense_dst[a]
     * when it holds the matrix of rebuild dense_gen_of[a]; its player_id record is
     * pid_dst[a] once written. NULL: not known. */
    uint64_t dense_gen; /* rebuilds of dense so far */
    /* The entries (positions to * N + from) of the edges created or dropped since the last
     * rebuild, each with whether the edge is there after that change (edge_new, edge_drop;
     * dense_lost when more than the log holds), and those the last rebuild changed: the
     * entries that became 1 at the front of dense_chg, those that became 0 at its back
     * (n_dense_chg -1: not known). A record one rebuild behind is brought up to date in
     * place, with a store of a constant per entry. */
    uint32_t *dense_log; /* [2 max_edges] */
    int8_t *dense_logv;  /* [2 max_edges] */
    uint32_t *dense_chg; /* [2 max_edges] */
    int32_t n_dense_log, n_dense_chg, n_dense_ones;
    bool dense_lost;
    void **dense_dst;       /* [P] when social_state is per agent, [1] when shared */
    uint64_t *dense_gen_of; /* the same */
    void **pid_dst;         /* [P] */

    /* The sharing journal (polis/social.h, share_change): a ring of the last jr_mask + 1
     * changes; jr_seq is the next change's number, jr_floor the first one still valid. */
    struct sg_share_rec *jr; /* [jr_mask + 1] */
    uint32_t jr_mask;
    uint64_t jr_seq, jr_floor;

    /* Watches (graph.c): bit 0 marks the communication words, bit k >= 1 the family of the
     * k-th distinct clear_temporary_relation root. Every edge carrying a watched attribute
     * is on wl, so the clear rule and write_communication visit those edges instead of
     * every edge (with random sharing, O(P^2) of them). */
    uint32_t *attr_watch; /* [max_attrs] */
    int32_t *attr_word;   /* [max_attrs] i for communication.i, else -1 (at sg_watch_setup) */
    int32_t watch_root[SG_WATCH_ROOTS], n_watch_roots;
    bool watching;     /* attr_watch is set up (sg_watch_setup) */
    uint32_t *e_watch; /* [max_edges] the OR of its attributes' bits */
    int32_t *e_wpos;   /* [max_edges] its index in wl */
    uint64_t *e_seq;   /* [max_edges] creation order: each out-list is in this order */
    uint64_t seq_next;
    int32_t *wl, n_wl;        /* [max_edges] */
    struct sg_clear_ent *clr; /* [max_edges] rule_clear's scratch */
    /* write_communication: the agent -> agent edges with words, by target, for revision
     * com_rev; and each record's address and the rows it holds (-1: not known) */
    int32_t *com_start, *com_el; /* [P + 1], [max_edges] */
    uint64_t com_rev;
    bool com_valid;
    void **com_dst;    /* [P] */
    int32_t *com_n;    /* [P] */
    int32_t *com_rows; /* [P][SG_COM_ROWS] */

    polis_social_api api;
} social;

typedef struct sg_clear_ent {
    uint64_t seq;
    int32_t from, e;
} sg_clear_ent;

typedef struct sg_share_rec {
    int32_t from, to;
    uint8_t what; /* polis_social_share */
    uint8_t on;
} sg_share_rec;

/* ---- graph.c ------------------------------------------------------------------------------ */

SG_INTERNAL polis_status sg_graph_alloc(social *s);
SG_INTERNAL void sg_graph_free(social *s);
/* Empties the graph without events (reset, dry runs). */
SG_INTERNAL void sg_graph_wipe(social *s);
/* Interns a name of len bytes; -1 when it is invalid or the table is full. */
SG_INTERNAL int32_t sg_attr_intern(social *s, const char *name, size_t len);
SG_INTERNAL int32_t sg_attr_find(const social *s, const char *name, size_t len);
/* attr is root itself or below it ("sharing.Map" is in the family "sharing"). */
SG_INTERNAL bool sg_attr_in_family(const social *s, int32_t attr, int32_t root);
/* Why a name cannot be interned, for error messages (NULL when it can). */
SG_INTERNAL const char *sg_attr_invalid(const char *name, size_t len);
SG_INTERNAL bool sg_node_valid(const social *s, int32_t node);
/* "agent 3" / "group 1" into buf. */
SG_INTERNAL const char *sg_node_str(const social *s, int32_t node, char *buf, size_t size);
/* Groups of agent (membership edges carrying attr; attr -1: any), ascending; at most cap
 * written, the count returned. The in-list is sorted by source, so groups are its tail. */
SG_INTERNAL int32_t sg_groups_of(const social *s, int32_t agent, int32_t attr, int32_t *out,
                                 int32_t cap);
SG_INTERNAL int32_t sg_edge_find(const social *s, int32_t from, int32_t to);
/* Change seq of the sharing journal into *out; false when it is no longer held. */
/* Sets up the watches once the rules are parsed (the graph is empty then). */
SG_INTERNAL void sg_watch_setup(social *s);
SG_INTERNAL bool sg_share_change(const social *s, uint64_t seq, sg_share_rec *out);
SG_INTERNAL bool sg_edge_get(const social *s, int32_t e, int32_t attr, double *value);
/* The edge carries an attribute of the family root. */
SG_INTERNAL bool sg_edge_has_family(const social *s, int32_t e, int32_t root);
SG_INTERNAL polis_status sg_set(social *s, polis_ctx *who, int32_t from, int32_t to, int32_t attr,
                                double value);
/* sg_set(s, s->ctx, from, to, attrs[i], value) for i = 0 .. n - 1, in that order (the same
 * changes and events), finding the edge and checking the nodes once: a message's words. */
SG_INTERNAL polis_status sg_set_all(social *s, int32_t from, int32_t to, const int32_t *attrs,
                                    int32_t n, double value);
SG_INTERNAL polis_status sg_unset(social *s, polis_ctx *who, int32_t from, int32_t to,
                                  int32_t attr);
SG_INTERNAL polis_status sg_unset_family(social *s, polis_ctx *who, int32_t from, int32_t to,
                                         int32_t root);
/* sg_unset_family(s, s->ctx, from, to, root) for edge e, the family given as a watch bit
 * (r->watch of a clear rule: the attributes with it are the root's family): the same
 * removals, events and drop, without finding the edge again (rules.c, rule_clear). */
SG_INTERNAL polis_status sg_unset_watched(social *s, int32_t e, uint32_t watch);
SG_INTERNAL polis_status sg_remove_edge(social *s, polis_ctx *who, int32_t from, int32_t to);
SG_INTERNAL polis_status sg_group_create(social *s, polis_ctx *who, int32_t *out);
SG_INTERNAL polis_status sg_group_delete(social *s, polis_ctx *who, int32_t g);
/* Removes everything with events (a schedule snapshot replaces the graph). */
SG_INTERNAL polis_status sg_graph_clear(social *s, polis_ctx *who);
/* Runs a structure's ops on the current graph. */
SG_INTERNAL polis_status sg_structure_apply(social *s, const sg_structure *st);
SG_INTERNAL polis_status sg_publish_schedule(social *s, int64_t step, int32_t snapshot);

/* ---- config.c ----------------------------------------------------------------------------- */

/* Sizes (max_groups, max_edges, max_edge_attrs) from the parameters, before allocation. */
SG_INTERNAL polis_status sg_config_size(social *s);
/* Parses and dry-runs the structures, the rule lists and the action families. */
SG_INTERNAL polis_status sg_config_load(social *s);
SG_INTERNAL void sg_config_free(social *s);

/* ---- rules.c ------------------------------------------------------------------------------ */

SG_INTERNAL polis_status sg_rule_run(social *s, const sg_rule *r, float *rewards);
SG_INTERNAL polis_status sg_request_matching(social *s, polis_ctx *who, int32_t from, int32_t to);
SG_INTERNAL polis_status sg_propose(social *s, polis_ctx *who, int32_t from, int32_t to,
                                    double share);
SG_INTERNAL polis_status sg_accept(social *s, polis_ctx *who, int32_t agent, int32_t opponent);
SG_INTERNAL polis_status sg_end_bargaining(social *s, polis_ctx *who, int32_t a, int32_t b);

/* ---- render.c ----------------------------------------------------------------------------- */

/* looks.c: groups and edges in the scene (ABI 1.5; nothing on an older host). */
SG_INTERNAL polis_status sg_register_looks(social *s);
/* Edge e's source, target, attributes or values changed: its scene slots are written again at
 * the next scene and the next take of a copy (looks.c; nothing before the first of either:
 * scene_mark is NULL until then, so an env never read pays nothing here). */
static inline void sg_scene_touch(social *s, int32_t e)
{
    if (s->scene_mark && !s->scene_mark[e]) {
        s->scene_mark[e] = 1;
        s->scene_dirty[s->n_scene_dirty++] = e;
    }
}
SG_INTERNAL void sg_free_looks(social *s);
SG_INTERNAL polis_status sg_render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *out);
SG_INTERNAL polis_status sg_render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *out);
/* Shortest decimal that reads back as v ("0.85", "1", "-0.25"). */
SG_INTERNAL void sg_fmt_double(char *buf, size_t size, double v);

/* ---- memory (init only) ------------------------------------------------------------------- */

SG_INTERNAL void *sg_alloc(social *s, size_t n, size_t size);
SG_INTERNAL void sg_free(social *s, void *p, size_t n, size_t size);
/* Grows *arr of elements of `size` from *cap to at least need; POLIS_ERR_NOMEM on failure. */
SG_INTERNAL polis_status sg_grow(social *s, void **arr, int32_t *cap, int32_t need, size_t size);

#endif
