/*
 * engine/core/registry.h — what plugins and scripts register, as the kernel keeps it: the
 * contexts (one per plugin, script and the kernel), the registry records (hooks, actions,
 * observation fields, rewards, events, subscribers, components, services), the host table
 * and parameter tables. Internal to the engine, like core/env.h (which it includes).
 */
#ifndef POLIS_CORE_REGISTRY_H
#define POLIS_CORE_REGISTRY_H

#include "core/env.h"

enum { POLIS__CTX_PLUGIN = 0, POLIS__CTX_SCRIPT = 1, POLIS__CTX_KERNEL = 2 };

struct polis_ctx {
    polis_ctx_head head; /* public: host table and plugin state (plugin.h) */
    polis_env *env;
    int32_t index; /* position in env->ctxs */
    int32_t kind;  /* POLIS__CTX_* */
    char *name;
    /* .so plugins */
    void *dl;
    char *path; /* the .so file loaded */
    const polis_plugin_desc *desc;
    bool initialised;
    /* Parameters, the same for plugins and scripts so describe reads one registry: the
     * table (a plugin's desc->params; a script's polis.params copy, owned by the script and
     * freed at its unload) and the validated params struct of params_size bytes. */
    const polis_param_def *param_defs;
    int32_t n_param_defs;
    size_t params_size;
    void *params;
    /* Lua scripts: the script host's state of this script (opaque here) */
    struct polis__script *script;
    const polis__scn_script *scn_script;
    const polis__scn_plugin *scn_plugin;
};

struct polis__hook {
    polis_phase phase;
    int32_t priority;
    int32_t seq;
    polis_hook_fn fn;
    void *ud;
    polis_ctx *ctx;
};

struct polis__action {
    char *name;
    char *doc;
    polis_status (*handler)(polis_ctx *, void *, int32_t, int32_t);
    bool (*legal)(polis_ctx *, void *, int32_t, int32_t);
    int32_t arg;
    void *ud;
    polis_ctx *ctx; /* NULL for the kernel's noop */
    /* The ctx and user data `legal` and `legal_row` receive: the registration's, until a
     * scenario replaces the handler or the legality function alone (swap.c). */
    polis_ctx *legal_ctx;
    void *legal_ud;
    /* On the first action of a family (host->action_family): the family's size and its
     * row writer, so the mask costs one call per family per agent; 0 everywhere else. */
    int32_t family_count;
    void (*legal_row)(polis_ctx *, void *, int32_t, uint8_t *);
    /* ABI 1.8 legality groups (host->action_legal_rows): on the group's first action its
     * size, row writer, ctx and user data; on every member `grouped` and the legality it
     * had when grouped (group_legal, group_legal_ud), so a member whose legality a scenario
     * replaced later (swap.c) is told apart and asked on its own after the row writer. */
    int32_t group_count;
    void (*group_row)(polis_ctx *, void *, int32_t, uint8_t *);
    polis_ctx *group_ctx;
    void *group_ud;
    bool grouped;
    bool (*group_legal)(polis_ctx *, void *, int32_t, int32_t);
    void *group_legal_ud;
};

/* One step of the mask pass, built by registry_freeze from the actions (after the handler
 * replacements): a run of always-legal actions (one memset), one action's `legal`, or one
 * row writer for a family or a legality group. The step walks this flat array instead of
 * the action records, one entry per run or call instead of one per action. */
enum { POLIS__MASK_ONES = 0, POLIS__MASK_LEGAL = 1, POLIS__MASK_ROW = 2 };

struct polis__mask_op {
    int32_t kind;  /* POLIS__MASK_* */
    int32_t first; /* the first action id the op writes */
    int32_t count; /* mask bytes it writes */
    int32_t arg;   /* POLIS__MASK_LEGAL: the action's arg */
    union {
        bool (*legal)(polis_ctx *, void *, int32_t, int32_t);
        void (*row)(polis_ctx *, void *, int32_t, uint8_t *);
    } fn;
    polis_ctx *ctx;
    void *ud;
};

/* Compact fields of fewer elements are narrowed element by element (env.c). */
#define POLIS__NARROW_SMALL 32

struct polis__obs {
    char *name;
    char *doc;
    polis_dtype dtype;
    int32_t ndim;
    int32_t shape[4];
    size_t offset;
    size_t nbytes;
    void (*write)(polis_ctx *, void *, int32_t, void *);
    void *ud;
    polis_ctx *ctx;
    /* ABI 1.4 ranges (host->obs_range): none (range_n 0), one for the field (range_dim -1,
     * range_n 1) or one per index along range_dim; range_lo/hi hold range_n bounds. */
    int32_t range_dim, range_n;
    double *range_lo, *range_hi;
    /* Compact observations (freeze): the buffer's dtype and bytes when narrower than what
     * the writer writes (dtype, nbytes); the writer then writes into `shadow`
     * ([n_agents][nbytes], stable per agent like the record it replaces) and the kernel
     * narrows it into the buffer, checking the range. Equal to dtype, nbytes otherwise. */
    polis_dtype out_dtype;
    size_t out_nbytes;
    uint8_t *shadow;
    /* "observations" API version 2 (writes_stored): the writer writes out_dtype itself, into
     * the buffer: no shadow, no narrowing, its values' range its own promise */
    bool writes_stored;
    /* the narrowing's shape, worked out with out_dtype: elements of a record, consecutive
     * elements sharing a range index (stride), range indices (1 without per-index ranges),
     * bytes of an element written and stored */
    size_t narrow_count, narrow_stride, narrow_n;
    uint8_t narrow_in, narrow_out;
    /* Reported changes (env.c, host API "observations"): floor(2^32 / narrow_stride), to find
     * an element's range without a division (0: records of 2^32 elements or more divide), and
     * the io->obs this field's records were last all narrowed into (NULL: none yet, or a
     * write failed since): only then may a write be narrowed where its writer reported. */
    uint64_t narrow_recip;
    const uint8_t *narrow_synced;
    /* the bounds every range shares (the largest lo, the smallest hi): a value inside them
     * needs no range lookup; and for fields of fewer than POLIS__NARROW_SMALL elements each
     * element's own bounds */
    int32_t narrow_lo, narrow_hi;
    int32_t small_lo[POLIS__NARROW_SMALL], small_hi[POLIS__NARROW_SMALL];
};

struct polis__reward {
    char *name;
    polis_reward_fn fn;
    void *ud;
    polis_ctx *ctx;
    float weight;
};

struct polis__mask_filter {
    polis_mask_fn fn;
    void *ud;
    polis_ctx *ctx;
};

struct polis__transform {
    char *name;
    int32_t priority;
    int32_t seq;
    polis_transform_fn fn;
    void *ud;
    polis_ctx *ctx;
};

typedef struct polis__field {
    char *name;
    polis_ftype type;
    size_t offset;
} polis__field;

struct polis__event_type {
    char *name;
    polis__field *fields;
    int32_t n_fields;
    size_t size; /* payload bytes, padded to the largest field alignment */
    polis_ctx *owner;
    int32_t sub_begin, sub_end; /* range in env->subs after freeze */
};

struct polis__sub {
    char *event;  /* name as given; resolved at freeze */
    int32_t type; /* -1 = every event (host subscribers only) */
    int32_t priority;
    int32_t seq;
    polis_event_fn fn;           /* plugin/script subscriber, or NULL */
    polis_host_event_fn host_fn; /* host subscriber, or NULL */
    void *ud;
    polis_ctx *ctx;
};

struct polis__component {
    char *name;
    size_t elem_size;
    uint8_t *data; /* [max_entities][elem_size], allocated at freeze */
    polis_ctx *owner;
};

struct polis__service {
    char *name;
    const void *api;
    polis_ctx *owner;
};

/* ---- registration (registry.c) -------------------------------------------------------- */
/* The host table plugins and scripts call: the kernel's slots and every module's
 * (engine/modules.c), filled once per process. */
POLIS_INTERNAL const polis_host *polis__host(void);
POLIS_INTERNAL polis_ctx *polis__ctx_new(polis_env *env, int32_t kind, const char *name);
POLIS_INTERNAL polis_ctx *polis__ctx_find(polis_env *env, const char *name);
/* Host-table subscription for host-side (polis_env_subscribe) callers. */
POLIS_INTERNAL polis_status polis__sub_add(polis_env *env, polis__sub *s);
POLIS_INTERNAL const char *polis__phase_name(polis_phase p);
POLIS_INTERNAL int32_t polis__phase_parse(const char *name); /* -1 if unknown */

/* ---- params.c: parameter tables ---------------------------------------------------------- */
/* Validates `obj` (a JSON object or NULL) against a parameter table and fills a newly
 * allocated struct of `size` bytes (defaults for missing keys). `jpath` names obj in
 * messages ("plugins[1].params"). */
POLIS_INTERNAL polis_status polis__params_build(polis_env *env, const polis_param_def *defs,
                                                int32_t n, size_t size, const struct cJSON *obj,
                                                const char *jpath, void **out);
POLIS_INTERNAL void polis__params_free(polis_env *env, const polis_param_def *defs, int32_t n,
                                       size_t size, void *params);

#endif
