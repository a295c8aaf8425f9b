/*
 * engine/core/internal.h — the kernel's private structures and cross-file functions.
 *
 * Cross-file functions are named polis__<file>_<verb> and have hidden visibility; nothing
 * here is part of the public API or the plugin ABI.
 */
#ifndef POLIS_INTERNAL_H
#define POLIS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "polis/plugin.h"
#include "polis/polis.h"

#if defined(__GNUC__)
#define POLIS_INTERNAL __attribute__((visibility("hidden")))
#else
#define POLIS_INTERNAL
#endif

struct cJSON;
typedef struct polis__lua_script polis__lua_script; /* lua_host.c */
typedef struct polis__ffi_state polis__ffi_state;   /* ffi.c */
typedef struct polis__swap_state polis__swap_state; /* swap.c */

#define POLIS_ERRMAX 1024

/* ---- scenario (config.c) ------------------------------------------------------------ */

typedef struct polis__scn_plugin {
    char *name;             /* plugin name as written (or derived from the path) */
    char *path;             /* resolved .so path */
    const struct cJSON *params; /* the "params" object or NULL; owned by the scenario root */
    char *jpath;            /* "plugins[1]" */
} polis__scn_plugin;

typedef struct polis__scn_script {
    char *name;             /* unique plugin-like name; default the file's stem */
    char *path;             /* resolved .lua path */
    const struct cJSON *params;
    char *jpath;            /* "scripts[0]" */
} polis__scn_script;

typedef struct polis__scn_reward_weight {
    char *name;
    double weight;
    char *jpath;
} polis__scn_reward_weight;

/* A scenario binding of a plugin export (ffi.c). Exactly one of event/phase is set. */
typedef struct polis__scn_binding {
    char *call;             /* "plugin.export" */
    char *event;            /* subscribe to this event type, or NULL */
    int32_t phase;          /* hook phase, or -1 */
    int32_t priority;
    char *jpath;            /* "bindings[2]" */
} polis__scn_binding;

typedef struct polis__scenario {
    struct cJSON *root;     /* whole document; freed after create */
    char *source;           /* file name (or "<string>") for messages */
    char *base_dir;         /* where relative paths are resolved */
    char *name;
    char *doc;
    uint64_t seed;
    int64_t max_steps;
    int32_t n_agents;
    char **agent_names;     /* [n_agents] */
    int32_t max_entities;
    bool has_grid;          /* a "grid" object was given */
    int32_t grid_width, grid_height;
    bool grid_wrap;
    int32_t event_queue;    /* capacity in events */
    int64_t max_memory;     /* bytes the kernel may allocate for the env; 0 = not given */
    bool compact_observations; /* "compact_observations" */
    int64_t lua_instruction_limit; /* per hook call; 0 = unlimited */
    int64_t lua_memory_limit;      /* bytes per env across its scripts; 0 = unlimited */
    int64_t lua_time_limit_ms;     /* wall clock per hook call; 0 = unlimited */
    polis__scn_plugin *plugins;
    int32_t n_plugins;
    polis__scn_script *scripts;
    int32_t n_scripts;
    polis__scn_reward_weight *weights;
    int32_t n_weights;
    polis__scn_binding *bindings;
    int32_t n_bindings;
} polis__scenario;

/* ---- registries --------------------------------------------------------------------- */

enum { POLIS__CTX_PLUGIN = 0, POLIS__CTX_SCRIPT = 1, POLIS__CTX_KERNEL = 2 };

struct polis_ctx {
    polis_ctx_head head;    /* public: host table and plugin state (plugin.h) */
    polis_env *env;
    int32_t index;          /* position in env->ctxs */
    int32_t kind;           /* POLIS__CTX_* */
    char *name;
    /* .so plugins */
    void *dl;
    char *path;             /* the .so file loaded */
    const polis_plugin_desc *desc;
    bool initialised;
    /* Parameters, the same for plugins and scripts so describe reads one registry: the
     * table (a plugin's desc->params; a script's polis.params copy, owned by the script and
     * freed at its unload) and the validated params struct of params_size bytes. */
    const polis_param_def *param_defs;
    int32_t n_param_defs;
    size_t params_size;
    void *params;
    /* Lua scripts */
    polis__lua_script *script;
    const polis__scn_script *scn_script;
    const polis__scn_plugin *scn_plugin;
};

typedef struct polis__hook {
    polis_phase phase;
    int32_t priority;
    int32_t seq;
    polis_hook_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__hook;

typedef struct polis__action {
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
} polis__action;

typedef struct polis__obs {
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
} polis__obs;

typedef struct polis__reward {
    char *name;
    polis_reward_fn fn;
    void *ud;
    polis_ctx *ctx;
    float weight;
} polis__reward;

typedef struct polis__mask_filter {
    polis_mask_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__mask_filter;

typedef struct polis__transform {
    char *name;
    int32_t priority;
    int32_t seq;
    polis_transform_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__transform;

typedef struct polis__field {
    char *name;
    polis_ftype type;
    size_t offset;
} polis__field;

typedef struct polis__event_type {
    char *name;
    polis__field *fields;
    int32_t n_fields;
    size_t size;            /* payload bytes, padded to the largest field alignment */
    polis_ctx *owner;
    int32_t sub_begin, sub_end; /* range in env->subs after freeze */
} polis__event_type;

typedef struct polis__sub {
    char *event;            /* name as given; resolved at freeze */
    int32_t type;           /* -1 = every event (host subscribers only) */
    int32_t priority;
    int32_t seq;
    polis_event_fn fn;      /* plugin/script subscriber, or NULL */
    polis_host_event_fn host_fn; /* host subscriber, or NULL */
    void *ud;
    polis_ctx *ctx;
} polis__sub;

typedef struct polis__component {
    char *name;
    size_t elem_size;
    uint8_t *data;          /* [max_entities][elem_size], allocated at freeze */
    polis_ctx *owner;
} polis__component;

typedef struct polis__service {
    char *name;
    const void *api;
    polis_ctx *owner;
} polis__service;

/* A renderer of one agent's view in a format (render.c); at most one per (ctx, format). */
typedef struct polis__renderer {
    char *format;
    polis_render_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__renderer;

/* An action parser (render.c), asked in registration order. */
typedef struct polis__parser {
    polis_parse_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__parser;

/* A scripted policy a plugin or script registered (policy.c); public ids start after the
 * kernel's built-ins "noop", "random" and "uniform" (ids 0..POLIS__POLICY_BUILTINS-1). */
#define POLIS__POLICY_BUILTINS 3
typedef struct polis__policy {
    char *name;
    polis_policy_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__policy;

/* A macro (plan.c): a multi-tick controller started by a text command (host->macro). */
typedef struct polis__macro {
    char *name;             /* [A-Z][A-Z0-9_]*, matched case-insensitively */
    char *usage;
    char *doc;
    size_t plan_size;
    polis_status (*start)(polis_ctx *, void *, int32_t, const char *, void *);
    polis_status (*next)(polis_ctx *, void *, int32_t, void *, polis_plan_state *, int32_t *,
                         char *, size_t);
    void *ud;
    polis_ctx *ctx;
} polis__macro;

/* Longest plan command (NUL included) and plan reason the kernel keeps per agent. */
#define POLIS__PLAN_COMMAND_MAX 256
#define POLIS__PLAN_WHY_MAX 256

/* One agent's plan (plan.c). A plan belongs to the episode it was started in, so a reset
 * ends every plan without visiting them. */
typedef struct polis__plan {
    int32_t macro;          /* index in env->macros, -1 = no plan */
    int64_t episode;        /* env->episode when it started */
    int64_t tick;           /* tick of the last `next` call, -1 = none yet */
    int32_t action;         /* the action `next` chose at `tick` */
    char command[POLIS__PLAN_COMMAND_MAX];
    char why[POLIS__PLAN_WHY_MAX];
} polis__plan;

/* A queued event (bus.c): published during a dispatch, delivered after it. */
typedef struct polis__queued {
    int32_t type;
    int64_t tick;
    uint64_t seq;
    size_t offset;          /* into bus_payload */
} polis__queued;

enum {
    POLIS__ENV_LOADING = 0, /* plugins are registering */
    POLIS__ENV_FROZEN = 1,  /* created, never reset */
    POLIS__ENV_RUNNING = 2, /* an episode is in progress */
    POLIS__ENV_DONE = 3,    /* every agent terminated or truncated */
    POLIS__ENV_BROKEN = 4   /* a step or reset failed: reset required */
};

/* A provider of io buffers owned by someone else (vec.c: slices of a polis_vec's shared
 * buffers). Called once, when registration freezes, with io->n_agents, n_actions and
 * obs_size set; it sets the seven buffer pointers (zeroed memory of the sizes polis_io
 * documents) or fails with a message in env->err. The env never frees them. */
typedef polis_status (*polis__io_fn)(void *ud, polis_env *env, polis_io *io);

struct polis_env {
    /* allocator */
    polis_alloc_fn alloc;
    void *alloc_ud;
    void (*log)(void *, const char *);
    void *log_ud;
    char *plugin_path;      /* options->plugin_path copy, or NULL */

    char err[POLIS_ERRMAX];
    bool err_placed;        /* err already names the callback and tick */
    /* A callback that cannot return a status (an observation writer, an action's legality
     * check) failed, with its message in err; write_observations fails with it. */
    polis_status cb_status;
    int32_t state;

    polis__scenario scn;

    /* contexts: plugins, then scripts; [0] is the kernel's own */
    polis_ctx **ctxs;
    int32_t n_ctxs, cap_ctxs;
    polis_ctx *current;     /* the ctx whose callback runs now, for messages */
    const char *current_what; /* what runs now: "hook begin", "action pick", ... */

    /* registries (growable while LOADING, fixed after) */
    polis__hook *hooks; int32_t n_hooks, cap_hooks;
    polis__hook *phase_hooks[POLIS_PHASE_COUNT]; /* sorted views into `hooks` copies */
    int32_t n_phase_hooks[POLIS_PHASE_COUNT];
    polis__action *actions; int32_t n_actions, cap_actions;
    polis__obs *obs; int32_t n_obs, cap_obs;
    polis__reward *rewards; int32_t n_rewards, cap_rewards;
    polis__transform *transforms; int32_t n_transforms, cap_transforms;
    polis__mask_filter *mask_filters; int32_t n_mask_filters, cap_mask_filters;
    polis__event_type *events; int32_t n_events, cap_events;
    polis__sub *subs; int32_t n_subs, cap_subs;
    polis__sub *any_subs; int32_t n_any_subs; /* host subscribers to every event, sorted */
    polis__component *components; int32_t n_components, cap_components;
    polis__service *services; int32_t n_services, cap_services;
    int32_t reg_seq;        /* registration counter for stable ordering */
    /* views and text actions (render.c); render_formats is "json text", rebuilt whenever a
     * renderer adds a new format, so polis_env_render_formats needs no allocation */
    polis__renderer *renderers; int32_t n_renderers, cap_renderers;
    polis__parser *parsers; int32_t n_parsers, cap_parsers;
    char *render_formats;
    /* scripted policies (policy.c) and their generator, seeded at every reset */
    polis__policy *policies; int32_t n_policies, cap_policies;
    polis_rng policy_rng;
    /* macros (plan.c) and, when there are any, every agent's plan, allocated at freeze:
     * plans[n_agents] and plan_mem[n_agents][plan_stride] (the largest plan_size, aligned) */
    polis__macro *macros; int32_t n_macros, cap_macros;
    polis__plan *plans;
    uint8_t *plan_mem;
    size_t plan_stride;

    /* agents */
    int32_t n_agents;
    polis_entity *agent_entities;
    int32_t *order;         /* acting agents this step */
    int32_t n_order;
    bool order_set;         /* set_agent_order called in this BEGIN phase */
    bool in_begin;

    /* entities (entity.c) */
    int32_t max_entities;
    uint32_t *ent_gen;      /* [max_entities], generation of the live or last entity */
    uint8_t *ent_alive;     /* [max_entities] */
    uint32_t *ent_free;     /* stack of free slots */
    int32_t n_ent_free;

    /* grid (grid.c) */
    bool grid_enabled;
    bool grid_sized;        /* dimensions known (scenario or grid_configure) */
    polis_grid grid;
    char **layer_names; int32_t n_layers, cap_layers;

    /* buffers */
    polis_io io;
    float *reward_components; /* [n_rewards][n_agents] */
    float *reward_scratch;    /* [n_agents] */

    /* bus (bus.c) */
    polis__queued *bus_queue; /* ring [event_queue] */
    int32_t bus_cap, bus_head, bus_len;
    uint8_t *bus_payload;   /* ring storage, bus_slot bytes per queued event */
    size_t bus_slot;
    uint64_t bus_seq;
    int32_t bus_depth;      /* > 0 while dispatching */

    /* time */
    int64_t tick;
    int64_t episode;
    int64_t max_steps;
    polis_rng rng;

    /* Lua (lua_host.c) and foreign calls (ffi.c) */
    int64_t lua_memory_used;  /* bytes across this env's Lua states */
    int64_t lua_engine_bytes; /* engine memory the scripts asked for (observations, layers) */
    polis__ffi_state *ffi;
    polis__swap_state *swap; /* the scenario's "replace" entries, applied at freeze */

    /* JSON wrappers handed to plugins during init (params.c), freed after create */
    void *json_arena;
    /* Allocations through the env's allocator that failed (polis__alloc, _realloc, _strdup,
     * host->alloc): a plugin call that fails after one is reported as out of memory,
     * whatever status the plugin returned. */
    uint64_t alloc_failures;

    /* creation options beyond the allocator (env.c) */
    char *overrides;        /* polis_options.overrides copy, applied by config.c, or NULL */
    bool no_obs;            /* polis_options.no_observations: field writers are skipped */
    bool opt_compact;       /* polis_options.compact_observations */
    bool compact;           /* compact observations: the option or the scenario's key */
    int64_t opt_max_memory; /* polis_options.max_memory; 0 = not given */
    polis__io_fn io_fn;     /* non-NULL: io buffers come from io_fn (vec.c) */
    void *io_ud;
    bool io_borrowed;       /* io_fn supplied the buffers: registry_free leaves them */

    /* looks and scenes (scene.c, ABI 1.5): NULL until something registers or asks */
    struct polis__looks *looks;
};

/* ---- memory (env.c) ------------------------------------------------------------------- */
POLIS_INTERNAL void *polis__alloc(polis_env *env, size_t size); /* zeroed */
POLIS_INTERNAL void *polis__realloc(polis_env *env, void *p, size_t osize, size_t nsize);
POLIS_INTERNAL void polis__free(polis_env *env, void *p, size_t size);
POLIS_INTERNAL char *polis__strdup(polis_env *env, const char *s);
POLIS_INTERNAL void polis__strfree(polis_env *env, char *s);
/* Grows *arr (elem bytes each) so that index `need` fits; capacity doubles. */
POLIS_INTERNAL polis_status polis__grow(polis_env *env, void **arr, int32_t *cap, int32_t need,
                                        size_t elem);

/* ---- creation (env.c), for kernel code that needs more than polis_options ------------- */
typedef struct polis__create_args {
    const char *text;       /* the scenario JSON, not necessarily NUL-terminated */
    size_t len;
    const char *source;     /* the file name for messages and the default name, or NULL */
    const char *base_dir;   /* NULL: opts->base_dir, else "." */
    const polis_options *opts;
    polis__io_fn io_fn;     /* NULL: the env allocates its own io buffers */
    void *io_ud;
} polis__create_args;
POLIS_INTERNAL polis_status polis__env_create(const polis__create_args *args, polis_env **out,
                                              polis_error *err);
/* Reads a scenario file with malloc (free() the text) and writes its directory into dir. */
POLIS_INTERNAL polis_status polis__scenario_file(const char *path, char **text, size_t *len,
                                                 char *dir, size_t dir_size, polis_error *err);

/* ---- errors (env.c) ------------------------------------------------------------------- */
/* Sets env->err. Returns `st` so callers can `return polis__fail(env, st, ...)`. */
POLIS_INTERNAL polis_status polis__fail(polis_env *env, polis_status st, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
POLIS_INTERNAL polis_status polis__vfail(polis_env *env, polis_status st, const char *fmt,
                                         va_list ap);
POLIS_INTERNAL void polis__logf(polis_env *env, const char *fmt, ...) POLIS_PRINTF(2, 3);
/* A plugin's error (the host's error(), registry.c): "<plugin>: <message>" into env->err. */
POLIS_INTERNAL void polis__ctx_error(polis_ctx *ctx, const char *fmt, ...) POLIS_PRINTF(2, 3);
/* After a callback failed: appends " [<what>, tick T]" to env->err unless an inner frame
 * already did (an error inside an event dispatched from a hook is placed at the event). */
POLIS_INTERNAL void polis__place_error(polis_env *env, polis_ctx *ctx, polis_status st,
                                       const char *what);
POLIS_INTERNAL void polis__clear_error(polis_env *env);

/* ---- registration (registry.c): the host-table functions, also used by Lua and ffi ---- */
POLIS_INTERNAL const polis_host *polis__host(void);
POLIS_INTERNAL polis_ctx *polis__ctx_new(polis_env *env, int32_t kind, const char *name);
POLIS_INTERNAL polis_ctx *polis__ctx_find(polis_env *env, const char *name);
/* Host-table subscription for host-side (polis_env_subscribe) callers. */
POLIS_INTERNAL polis_status polis__sub_add(polis_env *env, polis__sub *s);
POLIS_INTERNAL polis_status polis__registry_freeze(polis_env *env);
POLIS_INTERNAL void polis__registry_free(polis_env *env);
POLIS_INTERNAL const char *polis__phase_name(polis_phase p);
POLIS_INTERNAL int32_t polis__phase_parse(const char *name); /* -1 if unknown */

/* ---- config.c: the scenario schema (the JSON text itself is json.c's, json.h) ----------- */
POLIS_INTERNAL polis_status polis__scenario_parse(polis_env *env, const char *text, size_t len,
                                                  const char *source, const char *base_dir);
POLIS_INTERNAL void polis__scenario_free(polis_env *env);
/* Drops the JSON tree and the wrappers handed out during init. */
POLIS_INTERNAL void polis__scenario_release_json(polis_env *env);
/* ---- params.c: parameter tables and the polis_json wrappers ------------------------------ */
/* Validates `obj` (a JSON object or NULL) against a parameter table and fills a newly
 * allocated struct of `size` bytes (defaults for missing keys). `jpath` names obj in
 * messages ("plugins[1].params"). */
POLIS_INTERNAL polis_status polis__params_build(polis_env *env, const polis_param_def *defs,
                                                int32_t n, size_t size,
                                                const struct cJSON *obj, const char *jpath,
                                                void **out);
POLIS_INTERNAL void polis__params_free(polis_env *env, const polis_param_def *defs, int32_t n,
                                       size_t size, void *params);
/* Wraps a cJSON node for a plugin (host->json_*). */
POLIS_INTERNAL const polis_json *polis__json_wrap(polis_env *env, const struct cJSON *node,
                                                  const char *path);
/* Host-table JSON accessors. */
POLIS_INTERNAL int polis__json_kind(const polis_json *j);
POLIS_INTERNAL int32_t polis__json_len(const polis_json *j);
POLIS_INTERNAL const polis_json *polis__json_at(polis_ctx *ctx, const polis_json *j, int32_t i);
POLIS_INTERNAL const polis_json *polis__json_get(polis_ctx *ctx, const polis_json *j,
                                                 const char *key);
POLIS_INTERNAL const char *polis__json_key(const polis_json *j, int32_t i);
POLIS_INTERNAL const char *polis__json_path(const polis_json *j);
POLIS_INTERNAL polis_status polis__json_int(polis_ctx *ctx, const polis_json *j, int64_t min,
                                            int64_t max, int64_t *out);
POLIS_INTERNAL polis_status polis__json_double(polis_ctx *ctx, const polis_json *j, double min,
                                               double max, double *out);
POLIS_INTERNAL polis_status polis__json_string(polis_ctx *ctx, const polis_json *j,
                                               const char **out);
POLIS_INTERNAL polis_status polis__json_bool(polis_ctx *ctx, const polis_json *j, bool *out);
/* The "json" host API (ABI 1.7, host_api.c): documents a plugin parses and frees itself,
 * read through the accessors above; at most POLIS__JSON_DOC_MAX bytes of text. */
#define POLIS__JSON_DOC_MAX ((size_t)16 << 20)
POLIS_INTERNAL polis_status polis__json_doc_parse(polis_ctx *ctx, const char *text, size_t len,
                                                  const char *name, const polis_json **out);
POLIS_INTERNAL void polis__json_doc_free(polis_ctx *ctx, const polis_json *doc);
/* host->host_api (host_api.c): the named, versioned tables of host functions. */
POLIS_INTERNAL const void *polis__host_api(polis_ctx *ctx, const char *name, uint32_t version);
/* ---- config.c: files ---------------------------------------------------------------------- */
/* Reads a whole file into a NUL-terminated buffer from the env allocator. */
POLIS_INTERNAL polis_status polis__read_file(polis_env *env, const char *path, char **out,
                                             size_t *len);
/* The largest scenario file, Lua script or engine Lua module the engine reads (64 MiB). */
#define POLIS__FILE_MAX ((size_t)64 << 20)
/* Opens a file for reading only if it is a regular file of at most `max` bytes, without
 * blocking on a FIFO. Returns 0 with *out open, an errno value when the file cannot be
 * opened, or -1 with the reason ("not a regular file (a FIFO)", "N bytes, more than the
 * limit of M bytes") in why. */
POLIS_INTERNAL int polis__file_open(const char *path, size_t max, FILE **out, char *why,
                                    size_t why_cap);
/* Joins base_dir and a relative path (absolute paths are kept). */
POLIS_INTERNAL char *polis__path_join(polis_env *env, const char *base, const char *rel);

/* ---- overrides.c: scenario overrides (polis_options.overrides) ----------------------- */
/* Applies env->overrides to the parsed scenario tree before it is read. A root that is not
 * an object is left alone (the reader reports it). Messages start with "overrides: ". */
POLIS_INTERNAL polis_status polis__overrides_apply(polis_env *env, struct cJSON *root);

/* ---- plugin.c: loading .so plugins ------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__plugins_load(polis_env *env);  /* dlopen + checks + init */
POLIS_INTERNAL polis_status polis__plugins_start(polis_env *env);
POLIS_INTERNAL void polis__plugins_unload(polis_env *env);
/* Resolves a plugin name to a new .so path string using the search path: the options'
 * plugin_path, $POLIS_PLUGIN_PATH (never the scenario's or the current directory), the directories beside the
 * running libpolis (build-tree and install layouts, so an installed or relocated polis
 * finds its own plugins), then the configured build and install directories. */
POLIS_INTERNAL polis_status polis__plugin_resolve(polis_env *env, const char *name, char **out);
/* The directory of the running libpolis, or of the program it is linked into statically
 * (the same place plugin_resolve starts from). false if it cannot be found or does not
 * fit in cap bytes. */
POLIS_INTERNAL bool polis__self_dir(char *buf, size_t cap);

/* ---- render.c: views and text actions ------------------------------------------------- */
/* The host-table functions (ABI 1.1). */
POLIS_INTERNAL void polis__text_append(polis_text *t, const char *s, size_t n);
POLIS_INTERNAL void polis__text_printf(polis_text *t, const char *fmt, ...) POLIS_PRINTF(2, 3);
POLIS_INTERNAL polis_status polis__renderer_add(polis_ctx *ctx, const char *format,
                                                polis_render_fn fn, void *ud);
POLIS_INTERNAL polis_status polis__parser_add(polis_ctx *ctx, polis_parse_fn fn, void *ud);
POLIS_INTERNAL void polis__render_free(polis_env *env);

/* ---- policy.c: scripted policies -------------------------------------------------------- */
/* The policy generator's PCG32 stream ("policy" in ASCII): never the env stream. */
#define POLIS__POLICY_STREAM 0x706f6c696379ULL
/* The host-table functions. */
POLIS_INTERNAL polis_status polis__policy_add(polis_ctx *ctx, const char *name, polis_policy_fn fn,
                                              void *ud);
POLIS_INTERNAL polis_rng *polis__policy_rng(polis_ctx *ctx);
POLIS_INTERNAL void polis__policies_free(polis_env *env);

/* ---- plan.c: plans (macro actions) ----------------------------------------------------- */
/* The host-table function (ABI 1.2). */
POLIS_INTERNAL polis_status polis__macro_add(polis_ctx *ctx, const polis_macro_def *def);
/* Allocates every agent's plan state at freeze (nothing when no macro is registered). */
POLIS_INTERNAL polis_status polis__plans_alloc(polis_env *env);
POLIS_INTERNAL void polis__plans_free(polis_env *env);

/* ---- scene.c: looks and scenes (ABI 1.5) ---------------------------------------------- */
typedef struct polis__looks polis__looks;
/* The host-table functions. */
POLIS_INTERNAL polis_status polis__look_kind(polis_ctx *ctx, const polis_kind_def *def,
                                             int32_t *out_id);
POLIS_INTERNAL polis_status polis__look_layer(polis_ctx *ctx, const char *name, int32_t *out);
POLIS_INTERNAL polis_status polis__look_stat(polis_ctx *ctx, const char *name, const char *group,
                                             int32_t max, int32_t *out);
POLIS_INTERNAL polis_status polis__look_map(polis_ctx *ctx, int32_t width, int32_t height);
POLIS_INTERNAL polis_status polis__look_view(polis_ctx *ctx, int32_t rx, int32_t ry);
POLIS_INTERNAL polis_status polis__look_scene(polis_ctx *ctx, const polis_scene_def *def);
POLIS_INTERNAL polis_status polis__scene_thing(polis_ctx *ctx, polis_scene *scene, int32_t id,
                                               int32_t kind, int32_t x, int32_t y,
                                               const char *label);
POLIS_INTERNAL polis_status polis__scene_node(polis_ctx *ctx, polis_scene *scene, const char *id,
                                              const char *kind, const char *label);
POLIS_INTERNAL polis_status polis__scene_edge(polis_ctx *ctx, polis_scene *scene, const char *from,
                                              const char *to, const char *kind, float weight);
POLIS_INTERNAL int32_t polis__h_look_kind_find(polis_ctx *ctx, const char *name);
/* ABI 1.6: kept layers and the scene's fresh flag. */
POLIS_INTERNAL polis_status polis__look_keep_layer(polis_ctx *ctx, int32_t layer);
POLIS_INTERNAL bool polis__scene_fresh(polis_ctx *ctx, const polis_scene *scene);
POLIS_INTERNAL int32_t polis__look_kind_find(const polis_env *env, const char *name);
/* "square" -> POLIS_SHAPE_SQUARE, ...; -1 if unknown. */
POLIS_INTERNAL int32_t polis__shape_parse(const char *name);
POLIS_INTERNAL void polis__looks_free(polis_env *env);

/* ---- record.c ---------------------------------------------------------------------------- */
/* Allocations the recorder made so far (its line buffers and scene copies): the tests check
 * that recording a tick allocates nothing once the first lines are written. */
POLIS_INTERNAL int64_t polis__recorder_allocs(const polis_recorder *rec);

/* ---- lua_host.c ------------------------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__scripts_load(polis_env *env);  /* run each script's chunk */
POLIS_INTERNAL polis_status polis__scripts_start(polis_env *env); /* polis.on_start callbacks */
POLIS_INTERNAL void polis__scripts_unload(polis_env *env);
POLIS_INTERNAL void polis__scripts_reset(polis_env *env); /* re-seed math.random etc. */

/* ---- ffi.c ----------------------------------------------------------------------------- */
/* Types of foreign-call signatures ("i32(ctx,i32,f64)"). */
typedef enum polis__ftype {
    POLIS__FT_VOID = 0, POLIS__FT_I32, POLIS__FT_I64, POLIS__FT_F32, POLIS__FT_F64,
    POLIS__FT_BOOL, POLIS__FT_STR, POLIS__FT_CTX,
    /* ABI 1.3: a pointer to an array of elements of a polis_dtype ("f32*", "u8*"); only
     * handler replacements (swap.c) call exports that take one. */
    POLIS__FT_PTR
} polis__ftype;

typedef union polis__ffi_value {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    bool b;
    const char *str;
} polis__ffi_value;

#define POLIS__FFI_MAXARGS 16
typedef struct polis__ffi_fn polis__ffi_fn; /* a prepared export: cif + fn + parsed signature */

/* Binds the scenario's "bindings" (event subscriptions and hooks by export name). Runs after
 * every plugin and script init, before registration freezes. */
POLIS_INTERNAL polis_status polis__ffi_bind_scenario(polis_env *env);
/* Finds "plugin.export" among loaded plugins' exports and prepares it (cached per env).
 * Fails with POLIS_ERR_FFI and a message naming the export when it is unknown or its
 * declared signature does not parse. */
POLIS_INTERNAL polis_status polis__ffi_lookup(polis_env *env, const char *qualified,
                                              const polis__ffi_fn **out);
/* The parsed signature: return type, parameter types (a leading ctx parameter included). */
POLIS_INTERNAL polis__ftype polis__ffi_ret(const polis__ffi_fn *f);
POLIS_INTERNAL int32_t polis__ffi_nparams(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ftype polis__ffi_param(const polis__ffi_fn *f, int32_t i);
POLIS_INTERNAL const char *polis__ffi_signature(const polis__ffi_fn *f);
/* The element dtype of pointer parameter i (POLIS__FT_PTR). */
POLIS_INTERNAL polis_dtype polis__ffi_param_elem(const polis__ffi_fn *f, int32_t i);
/* The export's qualified name ("plugin.export") and the ctx its ctx parameter receives. */
POLIS_INTERNAL const char *polis__ffi_name(const polis__ffi_fn *f);
POLIS_INTERNAL polis_ctx *polis__ffi_owner(const polis__ffi_fn *f);
/* ffi_lookup without touching env->err: the message goes to why (for callers that place it
 * at a JSON path). Exports with pointer parameters are found too. */
POLIS_INTERNAL polis_status polis__ffi_find(polis_env *env, const char *qualified,
                                            const polis__ffi_fn **out, char *why, size_t n);
/* The registry callbacks that call export f in place of a replaced handler (swap.c), ud =
 * f. The signature must have been matched against the kind first (swap.c does): they call
 * the export directly with the C type the signature fixes, the observation writer with the
 * pointer type of `dtype`. */
typedef polis_status (*polis__ffi_hook_fn)(polis_ctx *, void *);
typedef polis_status (*polis__ffi_action_fn)(polis_ctx *, void *, int32_t, int32_t);
typedef bool (*polis__ffi_legal_fn)(polis_ctx *, void *, int32_t, int32_t);
typedef void (*polis__ffi_obs_fn)(polis_ctx *, void *, int32_t, void *);
typedef polis_status (*polis__ffi_rewards_fn)(polis_ctx *, void *, float *);
POLIS_INTERNAL polis__ffi_hook_fn polis__ffi_tramp_hook(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_action_fn polis__ffi_tramp_action(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_legal_fn polis__ffi_tramp_legal(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_obs_fn polis__ffi_tramp_obs(const polis__ffi_fn *f, polis_dtype dtype);
POLIS_INTERNAL polis__ffi_rewards_fn polis__ffi_tramp_rewards(const polis__ffi_fn *f);
POLIS_INTERNAL polis_policy_fn polis__ffi_tramp_policy(const polis__ffi_fn *f);
/* Calls f. args[] holds one value per non-ctx parameter (nargs must equal the count); a ctx
 * parameter receives the exporting plugin's own ctx (so the export reaches its state through
 * the public ctx head), whoever the caller is. No allocation. */
POLIS_INTERNAL polis_status polis__ffi_call(polis_env *env, const polis__ffi_fn *f,
                                            polis_ctx *caller, const polis__ffi_value *args,
                                            int32_t nargs, polis__ffi_value *ret);
POLIS_INTERNAL void polis__ffi_free(polis_env *env);

/* ---- swap.c: replacing registered handlers by name (the scenario's "replace") ---------- */
/* Reads the scenario's "replace" array, checks every entry against the registries (name,
 * kind, the replacement's signature, what can be disabled, one replacement per handler) and
 * writes the replacements into the registries. Called by registry_freeze before anything is
 * copied or sorted, so the step runs replaced handlers through the same indirect calls. */
POLIS_INTERNAL polis_status polis__swap_apply(polis_env *env);
POLIS_INTERNAL void polis__swap_free(polis_env *env);

/* lua_api.c: a callback record for the global function `fn` of a script, as if the script
 * had registered it under `name` (dtype and count for an observation writer; as_legal for a
 * legality function). NULL with the reason in why when there is no such function. */
struct polis__lua_cb;
POLIS_INTERNAL polis_status polis__lua_swap_cb(polis_ctx *script, const char *fn, const char *name,
                                               polis_dtype dtype, size_t count, bool as_legal,
                                               struct polis__lua_cb **out, char *why, size_t n);

/* ---- bus.c ------------------------------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__bus_freeze(polis_env *env);
POLIS_INTERNAL polis_status polis__bus_publish(polis_env *env, polis_ctx *from, int32_t type,
                                               const void *payload, size_t size);
POLIS_INTERNAL void polis__bus_reset(polis_env *env);
POLIS_INTERNAL void polis__bus_free(polis_env *env);

/* ---- entity.c ---------------------------------------------------------------------------- */
POLIS_INTERNAL polis_status polis__entities_alloc(polis_env *env);
POLIS_INTERNAL void polis__entities_reset(polis_env *env);
POLIS_INTERNAL void polis__entities_free(polis_env *env);
POLIS_INTERNAL polis_status polis__entity_create(polis_env *env, polis_entity *out);
POLIS_INTERNAL polis_status polis__entity_destroy(polis_env *env, polis_entity e);
POLIS_INTERNAL bool polis__entity_alive(const polis_env *env, polis_entity e);

/* ---- grid.c ------------------------------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__grid_configure(polis_env *env, int32_t w, int32_t h, bool wrap);
POLIS_INTERNAL polis_status polis__grid_layer(polis_env *env, const char *name, int32_t *out);
POLIS_INTERNAL polis_status polis__grid_alloc(polis_env *env);
POLIS_INTERNAL void polis__grid_clear(polis_env *env);
POLIS_INTERNAL void polis__grid_free(polis_env *env);
POLIS_INTERNAL void polis__grid_window(const polis_grid *g, int32_t layer, int32_t cx, int32_t cy,
                                       int32_t rx, int32_t ry, int32_t outside, int32_t *out);

#endif
