/*
 * polis/env.h — the kernel's API: create an env from a scenario, reset, step, read its
 * buffers and registries, close. polis/polis.h includes it with every other public header.
 *
 * Ownership and lifetimes
 *   - polis_env_create_* returns an env the caller owns; polis_env_destroy frees it and
 *     everything it loaded (plugins, Lua states).
 *   - Pointers the env returns (io buffers, names, the error string, layout records) are
 *     borrowed: valid until polis_env_destroy, except the error string, valid until the
 *     next call on the env.
 *
 * Threading
 *   No global mutable state: many envs may live in one process and different envs may be
 *   used from different threads at the same time. One env must be used by one thread at a
 *   time.
 *
 * Errors
 *   Every fallible call returns a polis_status. Creation failures fill a polis_error; later
 *   failures leave the message in polis_env_error(env). A failed step leaves the env in the
 *   "needs reset" state: step fails with POLIS_ERR_STATE until polis_env_reset succeeds.
 */
#ifndef POLIS_ENV_H
#define POLIS_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/types.h"
#include "polis/version.h" /* POLIS_VERSION_* */

POLIS_API_BEGIN

typedef struct polis_env polis_env;

/* An allocator in the Lua style: nsize == 0 frees ptr (returns NULL); otherwise it
 * (re)allocates ptr from osize to nsize bytes and returns NULL on failure. */
typedef void *(*polis_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Creation options. Zero-initialise, set struct_size = sizeof(polis_options), then the
 * fields you need; NULL options mean all defaults. */
typedef struct polis_options {
    size_t struct_size;
    polis_alloc_fn alloc; /* NULL: malloc/realloc/free */
    void *alloc_ud;
    /* Extra plugin directories, ':'-separated, searched before $POLIS_PLUGIN_PATH and the
     * built-in directories. */
    const char *plugin_path;
    /* Where plugin and script paths of a scenario given as a string are relative to
     * (default: the current directory). Ignored for scenario files: their own directory. */
    const char *base_dir;
    /* Receives plugin log lines (host->log, Lua polis.log). NULL: discarded. */
    void (*log)(void *ud, const char *msg);
    void *log_ud;

    /* ---- since 0.1 with overrides; a struct_size that ends before a field means its
     * default ---- */

    /* Scenario overrides (docs/scenario.md, "Overrides"): a JSON object whose members are
     * JSON paths into the scenario and the values to put there, applied in order to the
     * parsed scenario before it is read:
     *   {"agents": 100, "grid": {"width": 64, "height": 64},
     *    "plugins.gather.params.coins": 400}
     * Objects merge into objects (RFC 7386: null removes a member); anything else replaces.
     * Copied at create; NULL: none. A path that cannot be applied fails the create with
     * POLIS_ERR_CONFIG and "overrides: \"<path>\": <what>"; a value the scenario reader or
     * a plugin then refuses is reported as if it were in the file, at its JSON path, with
     * " (scenario with overrides)" appended (as is every other creation error while
     * overrides are set). */
    const char *overrides;
    /* true: observation fields are not written (OBSERVE hooks and action masks still are);
     * io->obs stays all zero. For benchmarks of the simulation alone, and for hosts that
     * read only text or JSON views. */
    bool no_observations;

    /* ---- since 0.1 with max_memory ---- */

    /* The most bytes the kernel may allocate for one env's buffers (grid, io and observation
     * buffers, entity and component tables, event queue, plan state), estimated before it
     * allocates them; beyond it the create fails with POLIS_ERR_LIMIT naming the scenario
     * keys responsible (docs/scenario.md, "Memory"). 0: the scenario's "max_memory", or
     * POLIS_DEFAULT_MAX_MEMORY (4 GiB). When set, the scenario's "max_memory" can lower the
     * cap but not raise it. Plugins' and scripts' own allocations are not counted. */
    int64_t max_memory;

    /* ---- since 0.1 with compact observations (plugin ABI 1.4) ---- */

    /* true: integer observation fields whose declared range (host->obs_range) fits a
     * narrower dtype are stored in it (u8, then i8, then i16), as the scenario key
     * "compact_observations" does (docs/scenario.md, "Compact observations"); either one
     * turns it on. polis_env_obs_field reports the buffer's dtype. */
    bool compact_observations;
} polis_options;

#define POLIS_DEFAULT_MAX_MEMORY (INT64_C(4) << 30)

/* A creation error. */
typedef struct polis_error {
    polis_status status;
    char message[1024];
} polis_error;

const char *polis_version(void);
/* A short static name for a status ("ok", "config error", ...). */
const char *polis_status_str(polis_status s);

/* Loads a scenario, its plugins and scripts, and freezes registration. The env is not
 * reset yet. On failure *out is NULL and err (if not NULL) says why, with the JSON path or
 * file:line. */
polis_status polis_env_create_file(const char *path, const polis_options *opts, polis_env **out,
                                   polis_error *err);
polis_status polis_env_create_json(const char *json, size_t len, const polis_options *opts,
                                   polis_env **out, polis_error *err);
void polis_env_destroy(polis_env *env);

/* Starts a new episode from `seed`. Writes the first observations and masks. */
polis_status polis_env_reset(polis_env *env, uint64_t seed);
/* Runs one tick with the actions in io->actions. Fails with POLIS_ERR_ACTION (naming the
 * agent and tick) for an id outside [0, n_actions), with POLIS_ERR_STATE when the episode
 * is over or the env needs a reset. A masked (illegal) action is a no-op and sets
 * io->illegal[agent]. */
polis_status polis_env_step(polis_env *env);
const char *polis_env_error(const polis_env *env);

/* The scenario's seed (the "seed" key, default 0). */
uint64_t polis_env_default_seed(const polis_env *env);
int64_t polis_env_tick(const polis_env *env);
/* Resets so far: 0 before the first, 1 during the first episode (host->episode). */
int64_t polis_env_episode(const polis_env *env);
int64_t polis_env_max_steps(const polis_env *env);
/* True when every agent is terminated or truncated. */
bool polis_env_done(const polis_env *env);
const char *polis_env_name(const polis_env *env);

/* ---- buffers ---------------------------------------------------------------------------- */

/* Per-agent buffers, rows in agent order; see plugin.h for the field list. The pointers stay
 * valid (and at the same address) for the life of the env, so a caller maps them once. */
const polis_io *polis_env_io(polis_env *env);

int32_t polis_env_n_agents(const polis_env *env);
const char *polis_env_agent_name(const polis_env *env, int32_t agent);
int32_t polis_env_n_actions(const polis_env *env);
const char *polis_env_action_name(const polis_env *env, int32_t action);
int32_t polis_env_action_id(const polis_env *env, const char *name); /* -1 if unknown */
/* The one-line doc of an action ("" when its plugin gave none; NULL for a bad id), as
 * `polis describe` shows it. Borrowed, valid until polis_env_destroy. */
const char *polis_env_action_doc(const polis_env *env, int32_t action);

/* One field of the per-agent observation record. */
typedef struct polis_obs_field {
    const char *name;
    const char *doc;
    polis_dtype dtype;
    int32_t ndim;
    int32_t shape[4];
    size_t offset; /* bytes from the start of the agent's record; aligned to 8 */
    size_t nbytes;
} polis_obs_field;

int32_t polis_env_n_obs_fields(const polis_env *env);
/* dtype and nbytes are those of the buffer: with compact observations, the narrower dtype
 * the kernel stores the field in (polis_env_obs_field_written_dtype says what its writer
 * writes). */
polis_status polis_env_obs_field(const polis_env *env, int32_t i, polis_obs_field *out);
/* The value range declared for field i (plugin ABI 1.4, host->obs_range; Lua: the "range"
 * key of polis.observation). *n is 0 when none was declared (then *dim is -1 and *lo, *hi
 * NULL); 1 with *dim -1 for one range over the field; else shape[*dim] with one range per
 * index along dimension *dim. The arrays are borrowed, valid until polis_env_destroy.
 * Every element of the field lies in [lo[k], hi[k]]. POLIS_ERR_INVALID for a bad index or
 * a NULL pointer. */
polis_status polis_env_obs_field_range(const polis_env *env, int32_t i, int32_t *dim, int32_t *n,
                                       const double **lo, const double **hi);
/* The dtype field i's writer writes (the registered one), which compact observations may
 * narrow in the buffer; -1 (cast) for a bad index. */
polis_dtype polis_env_obs_field_written_dtype(const polis_env *env, int32_t i);
size_t polis_dtype_size(polis_dtype t);
const char *polis_dtype_name(polis_dtype t);

/* ---- shared observation fields (since 0.9; docs/kernel.md, "Shared observation fields") ----
 *
 * Fields a plugin registered through the "shared_observations" host API (plugin.h): values
 * every agent sees alike, held once per env instead of once in each agent's record (social's
 * social_state: "shared"). They are written at every reset and step, after the OBSERVE hooks,
 * into one buffer of polis_env_shared_obs's size, each field at its offset (8-aligned) in its
 * registered dtype (compact observations do not narrow them); under no_observations they are
 * not written (the buffer stays zero). polis_env_state_hash covers them. */

/* The number of shared fields (0 when the scenario registers none, and for a NULL env). */
int32_t polis_env_n_shared_fields(const polis_env *env);
/* Shared field i: name, doc, dtype, shape, nbytes, and offset = bytes from the start of the
 * shared buffer. The strings are borrowed, valid until polis_env_destroy. POLIS_ERR_INVALID
 * for a bad index or a NULL env or out. */
polis_status polis_env_shared_field(const polis_env *env, int32_t i, polis_obs_field *out);
/* The index of the shared field `name`, -1 if none. */
int32_t polis_env_shared_find(const polis_env *env, const char *name);
/* The shared buffer, read-only (*size bytes when size is not NULL); NULL (size 0) when the
 * env has no shared field or is not created. Borrowed: the address stays the same for the
 * env's life, except that an env with a task distribution ("vary", which rebuilds the env at
 * a reset) may move it at polis_env_reset — read it again after a reset there. */
const void *polis_env_shared_obs(const polis_env *env, size_t *size);

/* Reward components: one row per reward function, the last step's raw values. */
int32_t polis_env_n_reward_fns(const polis_env *env);
const char *polis_env_reward_fn_name(const polis_env *env, int32_t i);
const float *polis_env_reward_components(const polis_env *env); /* [n_fns][n_agents] */

/* ---- events ------------------------------------------------------------------------------ */

int32_t polis_env_n_event_types(const polis_env *env);
int32_t polis_env_event_find(const polis_env *env, const char *name); /* -1 if unknown */
const char *polis_env_event_name(const polis_env *env, int32_t type);
int32_t polis_env_event_n_fields(const polis_env *env, int32_t type);
/* Field i of an event type: name, type and byte offset inside the payload. */
polis_status polis_env_event_field(const polis_env *env, int32_t type, int32_t i, const char **name,
                                   polis_ftype *ftype, size_t *offset);
size_t polis_env_event_size(const polis_env *env, int32_t type);

/* A host-side subscriber (recorders, metrics, the Python SDK). type -1 = every event.
 * Allowed until the first reset. Host subscribers run after all plugin and script
 * subscribers of an event. */
typedef void (*polis_host_event_fn)(void *ud, const polis_event *ev);
polis_status polis_env_subscribe(polis_env *env, int32_t type, polis_host_event_fn fn, void *ud);

/* ---- introspection ---------------------------------------------------------------------- */

/* Writes a JSON description of everything the scenario registered (plugins and their
 * parameters, actions, observation layout, reward functions and transforms, event types,
 * hooks per phase, components, grid, services, exports, renderers, action parsers,
 * policies) into a
 * newly allocated NUL-terminated string, or NULL on allocation failure. Free it with
 * polis_free. */
char *polis_env_describe_json(const polis_env *env);
/* Frees a string returned by polis (polis_env_describe_json, polis_env_render). It is the C
 * library's free(): such strings come from malloc, never from the env's allocator, and
 * outlive the env. */
void polis_free(void *p);

/* ---- what the scenario loaded ---------------------------------------------------------- */

/* The scenario's .so plugins and Lua scripts, in load order (plugins first, then scripts),
 * as describe's "plugins" lists them and a recording's header names them. */
typedef enum polis_plugin_kind {
    POLIS_PLUGIN_SO = 0, /* a .so plugin */
    POLIS_PLUGIN_LUA = 1 /* a Lua script */
} polis_plugin_kind;

typedef struct polis_plugin_info {
    const char *name;    /* as the scenario names it (a script: its file's stem by default) */
    const char *version; /* the plugin descriptor's version; "" for scripts and plugins
                          * without one */
    polis_plugin_kind kind;
    const char *path; /* the resolved .so or .lua file */
} polis_plugin_info;

int32_t polis_env_n_plugins(const polis_env *env);
/* Plugin or script i (0 <= i < polis_env_n_plugins). The strings are borrowed, valid until
 * polis_env_destroy. POLIS_ERR_INVALID for a bad index or a NULL env or out. */
polis_status polis_env_plugin(const polis_env *env, int32_t i, polis_plugin_info *out);

/* ---- errors of libraries built on this API ------------------------------------------------ */

/* For a library built only on the public API (libpolis-pixels, a host's own helpers):
 * report a failure through the env as the kernel's own calls do. Sets the message
 * polis_env_error returns (printf-style) and returns st, so a call ends with
 *   return polis_env_set_error(env, POLIS_ERR_INVALID, "pixels: cell_px %d ...", cell_px);
 * polis_env_clear_error empties it, as every kernel call does when it starts. Neither
 * changes the env's state (a set error does not make the env need a reset). NULL env: a
 * no-op (set_error still returns st). */
polis_status polis_env_set_error(polis_env *env, polis_status st, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
void polis_env_clear_error(polis_env *env);

/* A 64-bit FNV-1a hash of the observable episode state: observations, masks, rewards,
 * terminations, truncations and tick. Golden tests compare it across versions. */
uint64_t polis_env_state_hash(const polis_env *env);
/* The bytes polis_env_state_hash reads, in its order: ptr[i] and len[i] for i below the
 * count returned (at most POLIS_STATE_PARTS; borrowed, valid until the next step, reset or
 * destroy). The hash is 64-bit FNV-1a over their concatenation, so a copy hashed later
 * gives the same value (the recorder hashes its keyframes' copies on its writer thread). */
#define POLIS_STATE_PARTS 8
int32_t polis_env_state_parts(const polis_env *env, const void *ptr[POLIS_STATE_PARTS],
                              size_t len[POLIS_STATE_PARTS]);

POLIS_API_END
#endif
