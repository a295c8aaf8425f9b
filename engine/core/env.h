/*
 * engine/core/env.h — the env as the kernel keeps it: struct polis_env (the kernel's own
 * fields and one opaque pointer per module), the scenario as config.c reads it, the env
 * allocator, error messages and creation. Internal to the engine: the kernel (engine/core)
 * and the modules beside it (engine/<module>) include it; nothing here is public API or
 * plugin ABI. docs/architecture.md says who may include what.
 *
 * Cross-file functions are named polis__<noun>_<verb> and have hidden visibility.
 */
#ifndef POLIS_CORE_ENV_H
#define POLIS_CORE_ENV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "polis/plugin.h"
#include "polis/env.h"
#include "polis/policy.h"
#include "polis/scene.h"
#include "polis/vec.h"
#include "polis/views.h"
#include "polis/visibility.h"

#if defined(__GNUC__)
#define POLIS_INTERNAL __attribute__((visibility("hidden")))
#else
#define POLIS_INTERNAL
#endif

struct cJSON;
struct polis__script; /* a script ctx's state: the script host's (engine/lua), opaque here */

#define POLIS_ERRMAX 1024

/* ---- scenario (config.c) ------------------------------------------------------------ */

typedef struct polis__scn_plugin {
    char *name;                 /* plugin name as written (or derived from the path) */
    char *path;                 /* resolved .so path */
    const struct cJSON *params; /* the "params" object or NULL; owned by the scenario root */
    char *jpath;                /* "plugins[1]" */
} polis__scn_plugin;

typedef struct polis__scn_script {
    char *name; /* unique plugin-like name; default the file's stem */
    char *path; /* resolved .lua path */
    const struct cJSON *params;
    char *jpath; /* "scripts[0]" */
} polis__scn_script;

typedef struct polis__scn_reward_weight {
    char *name;
    double weight;
    char *jpath;
} polis__scn_reward_weight;

/* A scenario binding of a plugin export (ffi.c). Exactly one of event/phase is set. */
typedef struct polis__scn_binding {
    char *call;    /* "plugin.export" */
    char *event;   /* subscribe to this event type, or NULL */
    int32_t phase; /* hook phase, or -1 */
    int32_t priority;
    char *jpath; /* "bindings[2]" */
} polis__scn_binding;

typedef struct polis__scenario {
    struct cJSON *root; /* whole document; freed after create */
    char *source;       /* file name (or "<string>") for messages */
    char *base_dir;     /* where relative paths are resolved */
    char *name;
    char *doc;
    uint64_t seed;
    int64_t max_steps;
    int32_t n_agents;
    char **agent_names; /* [n_agents] */
    int32_t max_entities;
    bool has_grid; /* a "grid" object was given */
    int32_t grid_width, grid_height;
    bool grid_wrap;
    int32_t event_queue;           /* capacity in events */
    int64_t max_memory;            /* bytes the kernel may allocate for the env; 0 = not given */
    bool compact_observations;     /* "compact_observations" */
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

/* ---- registry records the env holds (core/registry.h defines them) ----------------- */
typedef struct polis__hook polis__hook;
typedef struct polis__action polis__action;
typedef struct polis__obs polis__obs;
typedef struct polis__reward polis__reward;
typedef struct polis__mask_filter polis__mask_filter;
typedef struct polis__mask_op polis__mask_op;
typedef struct polis__transform polis__transform;
typedef struct polis__event_type polis__event_type;
typedef struct polis__sub polis__sub;
typedef struct polis__component polis__component;
typedef struct polis__service polis__service;

/* A queued event (bus.c): published during a dispatch, delivered after it. */
typedef struct polis__queued {
    int32_t type;
    int64_t tick;
    uint64_t seq;
    size_t offset; /* into bus_payload */
} polis__queued;

enum {
    POLIS__ENV_LOADING = 0, /* plugins are registering */
    POLIS__ENV_FROZEN = 1,  /* created, never reset */
    POLIS__ENV_RUNNING = 2, /* an episode is in progress */
    POLIS__ENV_DONE = 3,    /* every agent terminated or truncated */
    POLIS__ENV_BROKEN = 4   /* a step or reset failed: reset required */
};

/* A provider of io buffers owned by someone else (a polis_vec's: slices of its shared
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
    char *plugin_path; /* options->plugin_path copy, or NULL */

    char err[POLIS_ERRMAX];
    bool err_placed; /* err already names the callback and tick */
    /* A callback that cannot return a status (an observation writer, an action's legality
     * check) failed, with its message in err; write_observations fails with it. */
    polis_status cb_status;
    int32_t state;
    /* Compact observations (env.c): the field whose writer runs now when the changes it
     * reports are narrowed at once (host API "observations"), the agent, its buffer row, and
     * whether this write reported; narrowing is NULL at any other time. */
    const polis__obs *narrowing;
    uint8_t *narrowing_dst;
    int32_t narrowing_agent;
    bool narrowing_reported;

    polis__scenario scn;

    /* contexts: plugins, then scripts; [0] is the kernel's own */
    polis_ctx **ctxs;
    int32_t n_ctxs, cap_ctxs;
    polis_ctx *current;       /* the ctx whose callback runs now, for messages */
    const char *current_what; /* what runs now: "hook begin", "action pick", ... */

    /* registries (growable while LOADING, fixed after) */
    polis__hook *hooks;
    int32_t n_hooks, cap_hooks;
    polis__hook *phase_hooks[POLIS_PHASE_COUNT]; /* sorted views into `hooks` copies */
    int32_t n_phase_hooks[POLIS_PHASE_COUNT];
    polis__action *actions;
    int32_t n_actions, cap_actions;
    polis__obs *obs;
    int32_t n_obs, cap_obs;
    /* shared observation fields (host API "shared_observations"): held once per env, in
     * shared_obs (shared_size bytes, each field 8-aligned; allocated at freeze) */
    polis__obs *shared;
    int32_t n_shared, cap_shared;
    uint8_t *shared_obs;
    size_t shared_size;
    polis__reward *rewards;
    int32_t n_rewards, cap_rewards;
    polis__transform *transforms;
    int32_t n_transforms, cap_transforms;
    polis__mask_filter *mask_filters;
    int32_t n_mask_filters, cap_mask_filters;
    polis__mask_op *mask_ops; /* the mask pass (registry.h), built at freeze */
    int32_t n_mask_ops, cap_mask_ops;
    polis__event_type *events;
    int32_t n_events, cap_events;
    polis__sub *subs;
    int32_t n_subs, cap_subs;
    polis__sub *any_subs;
    int32_t n_any_subs; /* host subscribers to every event, sorted */
    polis__component *components;
    int32_t n_components, cap_components;
    polis__service *services;
    int32_t n_services, cap_services;
    int32_t reg_seq; /* registration counter for stable ordering */

    /* agents */
    int32_t n_agents;
    polis_entity *agent_entities;
    int32_t *order; /* acting agents this step */
    int32_t n_order;
    bool order_set; /* set_agent_order called in this BEGIN phase */
    bool in_begin;

    /* entities (entity.c) */
    int32_t max_entities;
    uint32_t *ent_gen;  /* [max_entities], generation of the live or last entity */
    uint8_t *ent_alive; /* [max_entities] */
    uint32_t *ent_free; /* stack of free slots */
    int32_t n_ent_free;

    /* grid (grid.c) */
    bool grid_enabled;
    bool grid_sized; /* dimensions known (scenario or grid_configure) */
    polis_grid grid;
    char **layer_names;
    int32_t n_layers, cap_layers;

    /* buffers */
    polis_io io;
    float *reward_components; /* [n_rewards][n_agents] */
    float *reward_scratch;    /* [n_agents] */

    /* bus (bus.c) */
    polis__queued *bus_queue; /* ring [event_queue] */
    int32_t bus_cap, bus_head, bus_len;
    uint8_t *bus_payload; /* ring storage, bus_slot bytes per queued event */
    size_t bus_slot;
    uint64_t bus_seq;
    int32_t bus_depth; /* > 0 while dispatching */

    /* time */
    int64_t tick;
    int64_t episode;
    int64_t max_steps;
    polis_rng rng;

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
    polis__io_fn io_fn;     /* non-NULL: io buffers come from io_fn (a polis_vec's) */
    void *io_ud;
    bool io_borrowed; /* io_fn supplied the buffers: registry_free leaves them */

    /* The modules' state (engine/modules.c lists the modules; docs/architecture.md). Each
     * is opaque here: its module defines, allocates and frees it (NULL until the module
     * first needs it, unless its `create` callback allocates it). */
    struct polis__views *views;           /* views/: renderers and action parsers */
    struct polis__policy_state *policy;   /* policy/: scripted policies, macros and plans */
    struct polis__looks *looks;           /* scene/: looks and scenes */
    struct polis__lua *lua;               /* lua/: what the env's scripts share */
    struct polis__ffi_state *ffi;         /* ffi/: prepared exports and bindings */
    struct polis__swap_state *swap;       /* ffi/: the scenario's "replace" entries */
    struct polis__visibility *visibility; /* visibility/: who sees whom */
    struct polis__vary *vary;             /* vary/: the scenario's task distribution */
    struct polis__ahead *ahead;           /* vec/: resets made ahead ("reset_ahead" API) */
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
    const char *text; /* the scenario JSON, not necessarily NUL-terminated */
    size_t len;
    const char *source;   /* the file name for messages and the default name, or NULL */
    const char *base_dir; /* NULL: opts->base_dir, else "." */
    const polis_options *opts;
    polis__io_fn io_fn; /* NULL: the env allocates its own io buffers */
    void *io_ud;
} polis__create_args;
POLIS_INTERNAL polis_status polis__env_create(const polis__create_args *args, polis_env **out,
                                              polis_error *err);
/* Rebuilds env in place from the scenario `text` (len bytes; its messages name `source`,
 * relative paths resolve against `base_dir`) with `overrides` (NULL: none), keeping what a
 * host holds: the env's address, its io buffers (the new build must have the same agent
 * count, action count and observation record size, or it fails naming the difference), its
 * host subscribers, its creation options and its episode count. Everything else — plugins,
 * scripts, registries, module state — is torn down and built anew, as a create would. The
 * module that calls it keeps its own state pointer out of the env meanwhile (the teardown
 * frees every module's state). On failure the env is left unusable (state LOADING: reset
 * fails) until a rebuild succeeds; polis_env_destroy frees it either way. For module
 * prereset callbacks (engine/vary). */
POLIS_INTERNAL polis_status polis__env_rebuild(polis_env *env, const char *text, size_t len,
                                               const char *source, const char *base_dir,
                                               const char *overrides);
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
/* A plugin's error (the host's error(), registry.c): "<plugin>: <message>" into env->err, or,
 * on a thread drawing a scene from a copy (scene.c, polis_scene_copy_draw), into the buffer
 * polis__draw_err names: the env's thread owns env->err meanwhile. */
POLIS_INTERNAL void polis__ctx_error(polis_ctx *ctx, const char *fmt, ...) POLIS_PRINTF(2, 3);
typedef struct polis__err_buf {
    char *p;
    size_t cap;
} polis__err_buf;
POLIS_INTERNAL extern _Thread_local polis__err_buf *polis__draw_err;
/* After a callback failed: appends " [<what>, tick T]" to env->err unless an inner frame
 * already did (an error inside an event dispatched from a hook is placed at the event). */
POLIS_INTERNAL void polis__place_error(polis_env *env, polis_ctx *ctx, polis_status st,
                                       const char *what);
POLIS_INTERNAL void polis__clear_error(polis_env *env);

/* ---- config.c: files ---------------------------------------------------------------------- */
/* Reads a whole file into a NUL-terminated buffer from the env allocator. */
POLIS_INTERNAL polis_status polis__read_file(polis_env *env, const char *path, char **out,
                                             size_t *len);
/* The env generator's stream (polis_env_reset seeds it with the reset seed on this stream):
 * "polis" in ASCII. A reset made ahead (engine/vec/ahead.c) seeds its copy the same way. */
#define POLIS__ENV_STREAM 0x706f6c6973ULL

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

/* The directory of the running libpolis, or of the program it is linked into statically
 * (where plugin.c's search starts, and the Lua module path). false if it cannot be found or
 * does not fit in cap bytes. */
POLIS_INTERNAL bool polis__self_dir(char *buf, size_t cap);

#endif
