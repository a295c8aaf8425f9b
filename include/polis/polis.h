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
polis_status polis_env_obs_field_range(const polis_env *env, int32_t i, int32_t *dim,
                                       int32_t *n, const double **lo, const double **hi);
/* The dtype field i's writer writes (the registered one), which compact observations may
 * narrow in the buffer; -1 (cast) for a bad index. */
polis_dtype polis_env_obs_field_written_dtype(const polis_env *env, int32_t i);
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
 * hooks per phase, components, grid, services, exports, renderers, action parsers,
 * policies) into a
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
 * order; other formats are the plugins' pieces concatenated in registration order, and
 * "text" ends with the kernel's line of the agent's legal actions from its current mask
 * ("Legal actions: noop, move_up, share_map_0..7 (...)."; docs/kernel.md).
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

/* ---- looks and scenes (plugin ABI 1.5; docs/kernel.md, "Looks and scenes") ---------------- */

/* What the game registered about how it looks: the scene map's size (0 x 0 when the game has
 * none), its tile layers, the kind table shared by tiles and things, per-agent stats, and an
 * agent's view half-extent. Names are borrowed, valid until polis_env_destroy. */
int32_t polis_env_scene_width(const polis_env *env);
int32_t polis_env_scene_height(const polis_env *env);
int32_t polis_env_scene_n_layers(const polis_env *env);
const char *polis_env_scene_layer_name(const polis_env *env, int32_t layer); /* NULL if bad */
int32_t polis_env_scene_n_kinds(const polis_env *env);
typedef struct polis_kind_info {
    const char *name;
    const char *glyph;  /* one UTF-8 character */
    const char *color;  /* "#rrggbb" */
    polis_shape shape;
    const char *plugin; /* who registered it */
} polis_kind_info;
polis_status polis_env_scene_kind(const polis_env *env, int32_t kind, polis_kind_info *out);
int32_t polis_env_scene_kind_find(const polis_env *env, const char *name); /* -1 if unknown */
int32_t polis_env_scene_n_stats(const polis_env *env);
/* Stat i: name, group ("vitals", "inventory", ...), largest value (0: unbounded). */
polis_status polis_env_scene_stat(const polis_env *env, int32_t stat, const char **name,
                                  const char **group, int32_t *max);
/* true and the half-extent when the game registered an agent's view. */
bool polis_env_scene_view(const polis_env *env, int32_t *rx, int32_t *ry);
/* "square", "circle", ...; NULL for a value outside polis_shape. */
const char *polis_shape_name(polis_shape shape);
/* Writes the current scene (every plugin's scene callback, in registration order) into the
 * env's scene buffers and points *out at them (borrowed; overwritten by the next call, valid
 * until polis_env_destroy). Allowed after a successful reset, also when the episode ended;
 * POLIS_ERR_STATE otherwise. The first call allocates the buffers; later calls allocate
 * nothing. A failing callback fails the call with its message placed
 * ("<plugin>: ... [scene, tick 5]"); the env is unchanged. */
polis_status polis_env_scene_get(polis_env *env, const polis_scene **out);

/* Pixels: the current scene as an RGB frame (3 bytes a pixel, rows top to bottom), drawn
 * like the browser viewer (sdk/viewer/draw.js): tile layers in order then things, each in
 * its kind's colour and shape, then agents (a disc in the agent's own colour,
 * polis_agent_rgb, with a black facing mark; a black cross when dead). Cells are cell_px
 * pixels square (1 to 64); from 10 px on, a faint grid marks the cells. agent = -1 draws the
 * whole scene map; agent A draws A's view window, (2 rx + 1) x (2 ry + 1) cells centred on A
 * (cells off the map in the background colour), when the game registered a view, and the
 * whole map otherwise. polis_env_render_rgb_size gives the frame's size without drawing;
 * polis_env_render_rgb draws into out (cap bytes, at least w * h * 3: POLIS_ERR_LIMIT
 * otherwise) and allocates nothing once the scene buffers exist (after the first
 * polis_env_scene_get). POLIS_ERR_INVALID for a bad agent or cell_px or a game without a
 * scene map; the errors of polis_env_scene_get (no episode yet). *w and *h are set on
 * success and on a too-small buffer, 0 for bad arguments. docs/kernel.md, "Pixels". */
polis_status polis_env_render_rgb_size(polis_env *env, int32_t agent, int32_t cell_px,
                                       int32_t *w, int32_t *h);
polis_status polis_env_render_rgb(polis_env *env, int32_t agent, int32_t cell_px, uint8_t *out,
                                  size_t cap, int32_t *w, int32_t *h);
/* polis_env_render_rgb with flags (0: the same frame). POLIS_RENDER_GLYPHS: a kind whose
 * glyph is one printable ASCII character (' ' to '~') is drawn as that glyph in its colour,
 * from a built-in 5 x 7 pixel font scaled to cell_px / 8 pixels a font pixel and centred in
 * the cell (the viewer's "glyphs" box draws the same pixels), instead of its shape; other
 * glyphs, and every glyph in cells under 8 px, keep the shape. POLIS_ERR_INVALID for an
 * unknown flag. docs/kernel.md, "Pixels". */
#define POLIS_RENDER_GLYPHS 1u
polis_status polis_env_render_rgb_ex(polis_env *env, int32_t agent, int32_t cell_px,
                                     uint32_t flags, uint8_t *out, size_t cap, int32_t *w,
                                     int32_t *h);
/* The agent colours of frames and of the viewer, {r, g, b}: entry i of the base list of 16
 * (repeating; NULL for i < 0). A frame of a game skips the colours that look like one of its
 * kinds (a redmean RGB distance under 120), putting them last: polis_env_agent_rgb gives agent
 * i's colour in env's frames (NULL for i < 0 or no env). */
const uint8_t *polis_agent_rgb(int32_t agent);
const uint8_t *polis_env_agent_rgb(const polis_env *env, int32_t agent);

/* ---- recordings (docs/recording.md) ------------------------------------------------------ */

/*
 * A recorder writes the episodes of one env as a polis recording: a header (scenario, its
 * hash, seed, plugins, agents, actions and their docs, the looks), then per episode a reset
 * line, a keyframe at tick 0, one step line per tick (actions, rewards, flags, every bus
 * event, what changed in the scene, messages) with a keyframe every keyframe_every ticks,
 * and an end line (returns, metrics, state hash). Nothing in it is game-specific.
 *
 * Use: open it after polis_env_create and before the first polis_env_reset (it subscribes
 * to every event); after each polis_env_reset call polis_recorder_begin_episode, after each
 * polis_env_step polis_recorder_step, when the episode is over polis_recorder_end_episode;
 * polis_recorder_close at the end (it flushes; the env may be destroyed after). Failures
 * return a status with the reason in polis_recorder_error. The recorder allocates while it
 * builds lines (amortised: its buffers only grow); the env's step allocates nothing more.
 */
#define POLIS_RECORDING_VERSION 1
typedef struct polis_recorder polis_recorder;
typedef struct polis_record_info {
    const char *scenario_text; /* the scenario JSON as read (required): header and hash */
    size_t scenario_len;
    const char *scenario_path; /* the file it came from, or NULL */
    const char *base_dir;      /* where its relative paths resolve (replay uses it), or NULL */
    const char *overrides;     /* polis_options.overrides text, or NULL */
    uint64_t seed;             /* the first episode's seed */
    int32_t keyframe_every;    /* 0: 100 */
    const char *policies;      /* a JSON array of per-agent policy names, or NULL */
    const char *source;        /* "run", "eval", "serve", "python"; NULL: "api" */
} polis_record_info;

/* Creates FILE (gzip-compressed when the name ends in ".gz") and writes the header.
 * POLIS_ERR_IO when the file cannot be created, POLIS_ERR_INVALID for bad info, with err
 * (if not NULL) saying why. */
polis_status polis_recorder_open(const char *path, polis_env *env, const polis_record_info *info,
                                 polis_recorder **out, polis_error *err);
/* The same, handing every line (with its '\n') to sink instead of a file. */
polis_status polis_recorder_open_sink(void (*sink)(void *ud, const char *line, size_t len),
                                      void *ud, polis_env *env, const polis_record_info *info,
                                      polis_recorder **out, polis_error *err);
polis_status polis_recorder_begin_episode(polis_recorder *rec, uint64_t seed);
polis_status polis_recorder_step(polis_recorder *rec);
/* A message of a protocol client ("text", "plan", "action") written into the next step
 * line's "msgs". */
polis_status polis_recorder_msg(polis_recorder *rec, int32_t agent, const char *kind,
                                const char *text);
/* metrics_json: a JSON object text (what `polis eval` prints for the episode) or NULL. */
polis_status polis_recorder_end_episode(polis_recorder *rec, const char *metrics_json);
/* Flushes and closes; POLIS_ERR_IO if any write failed. NULL is a no-op. */
polis_status polis_recorder_close(polis_recorder *rec);
const char *polis_recorder_error(const polis_recorder *rec);

/* ---- vectorised envs ------------------------------------------------------------------- */

/*
 * A polis_vec is M envs created from one scenario and stepped together, in one call, into
 * one set of contiguous buffers, optionally by a pool of T threads.
 *
 * Buffers: polis_vec_io(vec) has one row per agent of every env, env-major: env k's agent a
 * is row k * n + a (n = polis_vec_agents_per_env). io->n_agents is M * n; n_actions and
 * obs_size are the scenario's. Each env reads and writes its own slice of these buffers
 * directly (polis_env_io of env k points into them), so nothing is copied. The pointers
 * stay valid and fixed until polis_vec_destroy.
 *
 * Seeds: polis_vec_reset(vec, seed) resets env k with polis_vec_env_seed(seed, k, 0); the
 * e-th automatic reset of env k after that uses polis_vec_env_seed(seed, k, e). An env of a
 * vec is therefore the same episode, bit for bit, as a lone env reset with that seed and
 * given the same actions, and results never depend on the number of threads.
 *
 * Auto-reset ("next-step", as Gymnasium names it): when an env's episode ends (every agent
 * terminated or truncated) its rows keep the final step's observations, rewards,
 * terminations and truncations (masks allow only noop). The NEXT polis_vec_step does not
 * step that env: it resets it instead, ignoring (and not validating) its actions, and its
 * rows then hold the first observation and masks of the new episode, rewards 0, every flag
 * 0, and polis_vec_autoreset(vec)[k] == 1. Every other env steps normally and has
 * autoreset 0. So a transition is (obs, action) -> (reward, termination, truncation, next
 * obs) in every row whose env has autoreset == 0 after the call.
 *
 * Threads: n_threads == 1 steps every env on the calling thread. With n_threads = T > 1, T-1
 * worker threads start at create and live until destroy; each call splits the envs into T
 * contiguous blocks (the calling thread steps the first) and returns when all are done.
 * Workers wait for work by spinning briefly, then sleeping. No thread is created and nothing
 * is allocated per step. Plugin callbacks, and the allocator and log callbacks of
 * polis_options, may then run on worker threads, several envs at once: with T > 1 they must
 * be thread-safe (the default allocator is; Lua scripts allocate while they run). A vec is
 * used by one thread at a time, like an env.
 *
 * Errors: every failure names the env ("env 3: <the env's own message>"); when several envs
 * fail in one call, the lowest index is reported, whatever T is. Actions are checked before
 * any env steps: an id outside [0, n_actions) fails the call with POLIS_ERR_ACTION and
 * nothing runs, so the caller may fix the actions and step again. Any other failure of a
 * step or reset leaves the vec needing polis_vec_reset (steps fail with POLIS_ERR_STATE).
 */
typedef struct polis_vec polis_vec;

/* Creates n_envs envs from one scenario with the same options (allocator, plugin path,
 * overrides, no_observations, ...) and starts n_threads - 1 worker threads. n_envs must be
 * at least 1 and n_threads in [1, n_envs] (a thread with no env to step is refused, not
 * clamped); n_envs * agents must fit in int32. Failures fill err: POLIS_ERR_INVALID for
 * bad counts ("polis_vec: n_threads is 3, expected 1 to n_envs (2)"), the env's status and
 * "env k: <message>" when env k cannot be created, POLIS_ERR_LIMIT when a thread cannot
 * start. The envs are not reset yet. */
polis_status polis_vec_create_file(const char *path, const polis_options *opts, int32_t n_envs,
                                   int32_t n_threads, polis_vec **out, polis_error *err);
polis_status polis_vec_create_json(const char *json, size_t len, const polis_options *opts,
                                   int32_t n_envs, int32_t n_threads, polis_vec **out,
                                   polis_error *err);
/* Stops the workers, destroys the envs and frees the buffers. NULL is a no-op. */
void polis_vec_destroy(polis_vec *vec);

/* Resets every env (env k with polis_vec_env_seed(seed, k, 0)) and restarts the episode
 * counts; autoreset flags are 0 afterwards. */
polis_status polis_vec_reset(polis_vec *vec, uint64_t seed);
/* Steps every env with its rows of io->actions, auto-resetting envs whose episode ended in
 * the previous call (see above). POLIS_ERR_STATE before the first reset and after a failed
 * call; POLIS_ERR_ACTION for a bad id (nothing ran). */
polis_status polis_vec_step(polis_vec *vec);
/* The message of the last failed call (empty after a success); valid until the next call. */
const char *polis_vec_error(const polis_vec *vec);

/* The shared buffers (see above). */
const polis_io *polis_vec_io(const polis_vec *vec);
/* [n_envs]: 1 if the last polis_vec_step reset env k instead of stepping it. */
const uint8_t *polis_vec_autoreset(const polis_vec *vec);

/* Episode statistics, kept by every polis_vec_reset and polis_vec_step on the threads that
 * step the envs (the figures of Gymnasium's RecordEpisodeStatistics, per row). A row's
 * episode starts at the reset of its env (length 0, return 0); each step of the env adds 1
 * to its length and its reward to its return, and the row's episode ends in the step where
 * its termination or truncation becomes 1. An env's episode ends in the step where its last
 * agent's does (the next call resets it: polis_vec_autoreset). */
typedef struct polis_vec_episodes {
    int32_t n_rows;           /* io->n_agents */
    int32_t n_envs;
    int32_t rows_ended;       /* rows with ended[row] == 1 */
    int32_t envs_ended;       /* envs with env_ended[k] == 1 */
    const uint8_t *ended;     /* [n_rows]: 1 if the row's episode ended in the last call */
    const float *returns;     /* [n_rows]: the return of the row's last ended episode (0 until
                               * one ends after polis_vec_reset) */
    const int64_t *lengths;   /* [n_rows]: its length in steps */
    const uint8_t *env_ended; /* [n_envs]: 1 if env k's episode ended in the last call */
} polis_vec_episodes;
/* The vec's statistics, borrowed: the pointers and the struct stay valid until
 * polis_vec_destroy, and every reset and step updates what they point to. */
const polis_vec_episodes *polis_vec_episode_stats(const polis_vec *vec);
int32_t polis_vec_n_envs(const polis_vec *vec);
int32_t polis_vec_n_threads(const polis_vec *vec);
int32_t polis_vec_agents_per_env(const polis_vec *vec);
/* Env k, borrowed, for introspection: names, observation layout, describe, render,
 * state hash. Do not step, reset or destroy it. NULL if k is out of range. */
polis_env *polis_vec_env(polis_vec *vec, int32_t k);
/* Episodes env k started since the last polis_vec_reset, minus one (0 during the first). */
int64_t polis_vec_episode(const polis_vec *vec, int32_t k);
/* The reset seed of env k's episode e after polis_vec_reset(vec, seed):
 *   mix(mix(seed + mix(k)) + e), mix = SplitMix64's output function applied to x +
 *   0x9e3779b97f4a7c15 (k and e as unsigned 64-bit). */
uint64_t polis_vec_env_seed(uint64_t seed, int32_t k, int64_t episode);

/* ---- scripted policies ---------------------------------------------------------------------- */

/* Policies plugins registered (host->policy): count, name, lookup (-1 if unknown). The
 * kernel also provides, as ids 0, 1 and 2: "noop"; "random" (uniform over the legal actions
 * of the current mask, drawn from the policy generator); "uniform" (uniform over all
 * actions, ignoring the mask, from the policy generator; a masked draw is sent as noop,
 * which is what the step would make of it, without the illegal flag). Plugin and script
 * policies follow from id 3; a plugin may not register a kernel policy's name. */
int32_t polis_env_n_policies(const polis_env *env);
const char *polis_env_policy_name(const polis_env *env, int32_t policy);
int32_t polis_env_policy_find(const polis_env *env, const char *name);
/* Writes the policy's action for each agent in agents[0..n) into io->actions (NULL agents:
 * every agent not yet finished). Allowed after a successful reset, between steps. A policy
 * returning an action outside [0, n_actions) fails with POLIS_ERR_ACTION naming policy,
 * agent and tick. */
polis_status polis_env_policy_act(polis_env *env, int32_t policy, const int32_t *agents,
                                  int32_t n);

/* ---- plans (macro actions) ------------------------------------------------------------------ */

/* Macros plugins registered (host->macro): count, name ("GATHER"), usage
 * ("GATHER <n> <resource>"), doc; NULL for an index out of range. */
int32_t polis_env_n_macros(const polis_env *env);
const char *polis_env_macro_name(const polis_env *env, int32_t macro);
const char *polis_env_macro_usage(const polis_env *env, int32_t macro);
const char *polis_env_macro_doc(const polis_env *env, int32_t macro);
/* Starts a plan for agent from a command, "GATHER 3 wood" (the first word names the macro,
 * case-insensitively; the rest are its arguments), replacing any plan the agent had.
 * Allowed after a successful reset, for an agent not yet finished. An unknown macro or
 * arguments the macro refuses: POLIS_ERR_ACTION with the reason in the env's error, and the
 * agent keeps no plan. Allocates nothing. */
polis_status polis_env_plan_start(polis_env *env, int32_t agent, const char *command);
/* Asks agent's plan for this tick's action. POLIS_OK with *state RUNNING and *out_action
 * set, or *state DONE / IMPOSSIBLE with *why (owned by the env, valid until the next plan
 * call for that agent) — the plan has then ended. An agent that finished ends its plan as
 * IMPOSSIBLE. POLIS_ERR_INVALID if the agent has no plan; a macro that fails or returns an
 * action outside the agent's mask: POLIS_ERR_ACTION naming the macro, agent and tick (the
 * plan ends). Call once per tick, before polis_env_step. */
polis_status polis_env_plan_next(polis_env *env, int32_t agent, polis_plan_state *state,
                                 int32_t *out_action, const char **why);
/* Ends agent's plan, if any. Reset ends every plan. */
void polis_env_plan_cancel(polis_env *env, int32_t agent);
/* The command of agent's running plan as it was started, or NULL if it has none. */
const char *polis_env_plan_command(const polis_env *env, int32_t agent);

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
