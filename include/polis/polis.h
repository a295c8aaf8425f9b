/*
 * polis/polis.h — the embedding API: create an env from a scenario, reset, step, read its
 * buffers, close.
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
#ifndef POLIS_POLIS_H
#define POLIS_POLIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libpolis is built with hidden visibility; every declaration in this header is its public
 * API and is exported from the shared library. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define POLIS_VERSION_MAJOR 0
#define POLIS_VERSION_MINOR 1
#define POLIS_VERSION_PATCH 0
#define POLIS_VERSION_STRING "0.1.0"

typedef struct polis_env polis_env;

/* An allocator in the Lua style: nsize == 0 frees ptr (returns NULL); otherwise it
 * (re)allocates ptr from osize to nsize bytes and returns NULL on failure. */
typedef void *(*polis_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Creation options. Zero-initialise, set struct_size = sizeof(polis_options), then the
 * fields you need; NULL options mean all defaults. */
typedef struct polis_options {
    size_t struct_size;
    polis_alloc_fn alloc;   /* NULL: malloc/realloc/free */
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
} polis_options;

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
polis_status polis_env_create_file(const char *path, const polis_options *opts,
                                   polis_env **out, polis_error *err);
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
polis_status polis_env_obs_field(const polis_env *env, int32_t i, polis_obs_field *out);
size_t polis_dtype_size(polis_dtype t);
const char *polis_dtype_name(polis_dtype t);

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
polis_status polis_env_event_field(const polis_env *env, int32_t type, int32_t i,
                                   const char **name, polis_ftype *ftype, size_t *offset);
size_t polis_env_event_size(const polis_env *env, int32_t type);

/* A host-side subscriber (recorders, metrics, the Python SDK). type -1 = every event.
 * Allowed until the first reset. Host subscribers run after all plugin and script
 * subscribers of an event. */
typedef void (*polis_host_event_fn)(void *ud, const polis_event *ev);
polis_status polis_env_subscribe(polis_env *env, int32_t type, polis_host_event_fn fn, void *ud);

/* ---- introspection ---------------------------------------------------------------------- */

/* Writes a JSON description of everything the scenario registered (plugins and their
 * parameters, actions, observation layout, reward functions and transforms, event types,
 * hooks per phase, components, grid, services, exports, renderers, action parsers) into a
 * newly allocated NUL-terminated string, or NULL on allocation failure. Free it with
 * polis_free. */
char *polis_env_describe_json(const polis_env *env);
/* Frees a string returned by polis (polis_env_describe_json, polis_env_render). It is the C
 * library's free(): such strings come from malloc, never from the env's allocator, and
 * outlive the env. */
void polis_free(void *p);

/* ---- text and JSON views, text and JSON actions (for LLM agents and tools) ---------------- */

/* Renders agent's current view in `format` ("text", "json", or another format a plugin
 * registered) into a newly allocated NUL-terminated string (*out, free with polis_free; NULL
 * on failure). "json" is one object with a member per rendering plugin, in registration
 * order; other formats are the plugins' pieces concatenated in registration order.
 * POLIS_ERR_INVALID if no plugin renders that format or the agent id is bad;
 * POLIS_ERR_STATE before the first successful reset and after a failed step or reset
 * (a finished episode still renders). A failing renderer fails the call with its message
 * placed ("<plugin>: ... [render json, agent 1 (agent_1), tick 3]") and leaves the env as
 * it was. It allocates (from the env allocator while rendering, malloc for *out). */
polis_status polis_env_render(polis_env *env, int32_t agent, const char *format, char **out);
/* Lists the formats renderers are registered for, sorted and space-separated ("json
 * text"); "" if none. Borrowed, valid until polis_env_destroy. */
const char *polis_env_render_formats(const polis_env *env);
/* Turns a text or JSON action of an agent into an action id. Surrounding whitespace is
 * trimmed; an exact action name ("move_north", "noop") wins, then the registered parsers
 * are asked in registration order. POLIS_ERR_ACTION with a message naming the agent and
 * the input when nothing accepts it (or it is empty); the error of the parser that took the
 * input but found it malformed; POLIS_ERR_INVALID for a bad agent id or a NULL input or
 * out_action. *out_action is -1 on failure. Allowed at any time after create. Does not
 * check the mask: whether the action is legal is for the caller or the protocol. */
polis_status polis_env_parse_action(polis_env *env, int32_t agent, const char *input,
                                    int32_t *out_action);

/* A 64-bit FNV-1a hash of the observable episode state: observations, masks, rewards,
 * terminations, truncations and tick. Golden tests compare it across versions. */
uint64_t polis_env_state_hash(const polis_env *env);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
