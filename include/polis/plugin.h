/*
 * polis/plugin.h — the plugin ABI.
 *
 * A plugin is a shared object that exports exactly one symbol, POLIS_PLUGIN_ENTRY
 * ("polis_plugin_entry"), a function returning a pointer to a const polis_plugin_desc.
 * Plugins never link against libpolis: everything they may do goes through the
 * polis_host table of function pointers the engine passes to init(). Both the descriptor
 * and the host table start with the ABI major version and their struct size.
 *
 * Versions — the one rule. A descriptor's abi_minor is the OLDEST host minor the plugin
 * needs: the newest slot or behaviour it uses (marked "ABI 1.N" below; unmarked is 1.0). The
 * loader refuses a plugin whose abi_minor is newer than the engine's POLIS_ABI_MINOR, naming
 * the file and both versions, so a loaded plugin may call every slot up to its abi_minor
 * without checking host->struct_size. A major version other than the engine's is refused
 * too. The host table and the descriptor are frozen as of ABI 1.7: functions added later
 * come in host APIs, named tables with versions of their own (host->host_api, "Host APIs"
 * below), and the descriptor gains no fields (what a plugin adds, it registers in init).
 * include/polis/kit.h has the helpers most plugins want (parameter tables, text).
 *
 * Lifecycle, per env:
 *   create:  the engine loads every plugin named by the scenario (in dependency order),
 *            validates its parameters against desc->params into a struct of
 *            desc->params_size bytes, and calls desc->init(). init() registers everything
 *            the plugin adds: components, grid layers, actions, observation fields, reward
 *            functions and transforms, event types, subscriptions, hooks, services.
 *            After every plugin's init, desc->start() (if set) runs: other plugins'
 *            registrations and services are visible then. Registration is frozen after.
 *   reset:   entities and the grid are cleared, agents get their entities, then RESET
 *            hooks run (world generation), then observations and masks are written.
 *   step:    BEGIN hooks, action handlers, RESOLVE, WORLD, POST hooks, reward functions,
 *            reward transforms, END hooks, kernel truncation, OBSERVE hooks, observations.
 *   destroy: desc->destroy(state) for each plugin in reverse load order. destroy is also
 *            called when init failed after storing a non-NULL *state, so a plugin frees
 *            in one place (its state was zeroed by host->alloc, so unset fields are NULL).
 *
 * Threading: an env is used by one thread at a time; all callbacks of an env run on that
 * thread. Plugins must keep their mutable state in the `state` they create (no globals),
 * so many envs can use the same .so concurrently.
 *
 * Errors: a callback returns POLIS_OK or an error status; before returning an error it calls
 * host->error(ctx, fmt, ...) so the env's message says what went wrong. The engine adds the
 * plugin name and tick.
 */
#ifndef POLIS_PLUGIN_H
#define POLIS_PLUGIN_H

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/rng.h"
#include "polis/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POLIS_ABI_MAJOR 1
#define POLIS_ABI_MINOR 7
#define POLIS_PLUGIN_ENTRY "polis_plugin_entry"

#if defined(__GNUC__)
#define POLIS_EXPORT __attribute__((visibility("default")))
#define POLIS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define POLIS_EXPORT
#define POLIS_PRINTF(a, b)
#endif

/* One plugin instance inside one env. Opaque; every host function takes it first. */
typedef struct polis_ctx polis_ctx;

/* A JSON value, read through host->json_*: a node of the scenario JSON handed to a plugin for
 * POLIS_PARAM_JSON parameters (valid only during init() and start()), or of a document the
 * plugin parsed with the "json" host API (valid until the plugin frees the document). */
typedef struct polis_json polis_json;

/* ---- parameters ------------------------------------------------------------------------ */

typedef enum polis_param_type {
    POLIS_PARAM_BOOL = 0,   /* stored as bool */
    POLIS_PARAM_INT = 1,    /* stored as int64_t; range [min, max] enforced */
    POLIS_PARAM_DOUBLE = 2, /* stored as double; range [min, max] enforced */
    POLIS_PARAM_STRING = 3, /* stored as const char *, owned by the env, valid for its life */
    POLIS_PARAM_JSON = 4    /* stored as const polis_json *, valid during init/start only */
} polis_param_type;

/* One parameter, nginx-style: a key, a type and where it goes in the plugin's params
 * struct. A key missing from the scenario takes the default; `required` keys must be
 * present. A NULL def_str for a STRING parameter defaults to NULL. */
typedef struct polis_param_def {
    const char *key;
    polis_param_type type;
    size_t offset;       /* offsetof(your_params, field) */
    double min, max;     /* INT and DOUBLE: inclusive range */
    double def_num;      /* BOOL (0/1), INT, DOUBLE default */
    const char *def_str; /* STRING default */
    const char *doc;     /* one line, shown by `polis describe` and the reference docs */
    bool required;
} polis_param_def;

/* ---- foreign-callable exports (libffi) ------------------------------------------------ */

/* A C function a plugin offers to scenarios and Lua by name ("plugin.name"). The signature
 * is a string checked when something binds to it, e.g. "i32(i32,i32)", "void(ctx,i32,f32)".
 * Types: void (return only), i32, i64, f32, f64, bool, str (const char *), ctx (the
 * caller's polis_ctx *; first parameter only). A subscriber bound to a bus event from the
 * scenario must have signature "void(ctx,<the event's field types in order>)" or
 * "i32(ctx,...)" returning a polis_status. ABI 1.3 adds pointer parameters to arrays of an
 * observation dtype, "u8*", "i8*", "i16*", "i32*", "f32*" (uint8_t *, ..., float *), for
 * exports that replace a registered handler by name from the scenario's "replace" list
 * (docs/ffi.md gives each kind's signature: reward functions "i32(ctx,f32*)", observation
 * writers "void(ctx,i32,u8*)", ...); such exports cannot be called with values (polis.call). */
typedef struct polis_export {
    const char *name;
    const char *signature;
    void (*fn)(void);
    const char *doc;
} polis_export;

/* ---- registration records --------------------------------------------------------------- */

typedef polis_status (*polis_hook_fn)(polis_ctx *ctx, void *ud);

/* An action. Actions of all plugins form one flat discrete space (id 0 is the kernel's
 * "noop", always legal). `arg` is passed back so one handler serves a family of actions
 * ("pick wood", "pick stone"). `legal` (may be NULL = always legal) builds the action mask;
 * it must not change state. `handler` applies the action for `agent`; it may return
 * POLIS_ERR_ACTION to say the action turned out illegal at resolution time (flagged, a
 * no-op), or another error to fail the step. */
typedef struct polis_action_def {
    const char *name;
    const char *doc;
    polis_status (*handler)(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg);
    bool (*legal)(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg);
    int32_t arg;
    void *ud;
} polis_action_def;

/* An action family: `count` actions named "<prefix>_0" .. "<prefix>_<count-1>" with
 * consecutive ids, one per target (agent, group, item). Each is an ordinary action (named,
 * described, parsed, sent like any other); what differs is the mask: the kernel calls
 * `legal_row` once per agent with the family's `count` mask bytes, instead of one `legal`
 * call per action. `legal_row` (may be NULL = all legal) must write all `count` bytes (0 or
 * 1) and must not change state. `doc` (may be NULL) writes the doc of action `index`
 * (truncated to `size`, NUL-terminated); without it every member gets `doc_text` (may be
 * NULL). `handler` gets the index within the family, as `arg` of a single action. */
typedef struct polis_action_family_def {
    const char *prefix;
    int32_t count;
    const char *doc_text;
    void (*doc)(polis_ctx *ctx, void *ud, int32_t index, char *buf, size_t size);
    polis_status (*handler)(polis_ctx *ctx, void *ud, int32_t agent, int32_t index);
    void (*legal_row)(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row);
    void *ud;
} polis_action_family_def;

/* An observation field: a fixed-shape array inside each agent's observation record. The
 * writer must fill every element of `dst` (the buffer is not cleared between steps). */
typedef struct polis_obs_def {
    const char *name;
    const char *doc;
    polis_dtype dtype;
    int32_t ndim; /* 1..4 */
    int32_t shape[4];
    void (*write)(polis_ctx *ctx, void *ud, int32_t agent, void *dst);
    void *ud;
} polis_obs_def;

/* A reward function writes each agent's raw reward into out[0..n_agents) (out is zeroed
 * before the call). The env reward is the weighted sum of all reward functions (weights
 * from the scenario's "rewards" object, default 1), then every reward transform runs in
 * priority order on the summed rewards, in place. */
typedef polis_status (*polis_reward_fn)(polis_ctx *ctx, void *ud, float *out);
typedef polis_status (*polis_transform_fn)(polis_ctx *ctx, void *ud, float *rewards);

typedef polis_status (*polis_event_fn)(polis_ctx *ctx, void *ud, const polis_event *ev);

/* A growable text buffer owned by the kernel (host->text_append / text_printf). */
typedef struct polis_text polis_text;
typedef polis_status (*polis_render_fn)(polis_ctx *ctx, void *ud, int32_t agent, polis_text *out);
typedef polis_status (*polis_parse_fn)(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                       int32_t *out_action);
/* A mask filter edits one agent's mask row (n_actions bytes) after the legality callbacks. */
typedef void (*polis_mask_fn)(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row);
/* A policy writes one action id for `agent` (it should be legal under the current mask). */
typedef polis_status (*polis_policy_fn)(polis_ctx *ctx, void *ud, int32_t agent,
                                        int32_t *out_action);

/* ABI 1.2: plans (macro actions). A macro is a multi-tick controller a client starts for one
 * agent with a text command ("GATHER 3 wood", "GOTO 4 7"); from then on it chooses the
 * agent's primitive action at every tick until it reports that its goal is reached or can
 * no longer be reached, and why (polis_plan_state, types.h). LLM agents plan at this level
 * (docs/clients.md). */
typedef struct polis_macro_def {
    const char *name;  /* the command word, [A-Z][A-Z0-9_]*, matched case-insensitively */
    const char *usage; /* "GATHER <n> <resource>" */
    const char *doc;   /* one or two sentences: what it does, when it ends */
    size_t plan_size;  /* bytes of per-agent plan state the kernel keeps (<= 4096) */
    /* Starts a plan for agent from the words after the name (trimmed; "" when none) into
     * `plan` (plan_size bytes, zeroed by the kernel). Arguments it cannot accept: set
     * host->error and return POLIS_ERR_ACTION (no plan is started). Reads state, never
     * changes it. Called only after a successful reset. */
    polis_status (*start)(polis_ctx *ctx, void *ud, int32_t agent, const char *args, void *plan);
    /* Called at most once per tick while the plan runs, between steps: sets *state and,
     * when RUNNING, *out_action (it must be legal under the agent's current mask); when DONE
     * or IMPOSSIBLE it writes a one-line reason into why (cap bytes, NUL-terminated). May
     * update `plan`; reads the env's state and draws randomness only from
     * host->policy_rng. */
    polis_status (*next)(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                         polis_plan_state *state, int32_t *out_action, char *why, size_t cap);
    void *ud;
} polis_macro_def;

/* ABI 1.5: looks and scenes (docs/kernel.md, "Looks and scenes"). A kind of tile or thing and
 * how it is drawn: name [a-z0-9_]+ (unique per env), glyph one UTF-8 character (the text
 * renderer's), color "#rrggbb", shape. Tiles and things share one kind table. */
typedef struct polis_kind_def {
    const char *name;
    const char *glyph;
    const char *color;
    polis_shape shape;
} polis_kind_def;

/* Writes this plugin's part of the current scene (tiles of its layers, things, agents'
 * positions and stats, social nodes and edges) into kernel buffers. Reads state, never
 * changes it; allocates nothing. Things, nodes and edges are appended with host->scene_thing,
 * scene_node and scene_edge; tiles, agents and stats are written directly. */
typedef polis_status (*polis_scene_fn)(polis_ctx *ctx, void *ud, polis_scene *scene);

/* A scene callback with the most things, social nodes and edges it ever appends: the kernel
 * allocates the scene once from the sum over plugins, and an append beyond a plugin's own
 * declaration fails with POLIS_ERR_LIMIT. */
typedef struct polis_scene_def {
    polis_scene_fn fn;
    void *ud;
    int32_t max_things, max_nodes, max_edges;
} polis_scene_def;

/* The grid: width x height cells in `layers` int32 layers, stored [layer][y][x]. Cleared to
 * 0 at every reset. Plugins index `cells` directly in hot loops. */
typedef struct polis_grid {
    int32_t width, height, layers;
    bool wrap; /* torus if true; bounded otherwise */
    int32_t *cells;
} polis_grid;

static inline int32_t *polis_grid_cell(const polis_grid *g, int32_t layer, int32_t x, int32_t y)
{
    return g->cells + ((size_t)layer * (size_t)g->height + (size_t)y) * (size_t)g->width + x;
}

/* ---- the host table --------------------------------------------------------------------- */

typedef struct polis_host {
    uint32_t abi_major;   /* POLIS_ABI_MAJOR */
    uint32_t struct_size; /* sizeof(polis_host) of the engine */
    uint32_t abi_minor;   /* the engine's POLIS_ABI_MINOR, at least the plugin's abi_minor */

    /* errors and logging */
    void (*error)(polis_ctx *ctx, const char *fmt, ...) POLIS_PRINTF(2, 3);
    void (*log)(polis_ctx *ctx, const char *fmt, ...) POLIS_PRINTF(2, 3);

    /* who and when */
    const char *(*plugin_name)(polis_ctx *ctx);
    int32_t (*n_agents)(polis_ctx *ctx);
    const char *(*agent_name)(polis_ctx *ctx, int32_t agent);
    int64_t (*tick)(polis_ctx *ctx);    /* steps completed in this episode */
    int64_t (*episode)(polis_ctx *ctx); /* resets so far, 1 after the first */
    int64_t (*max_steps)(polis_ctx *ctx);
    polis_rng *(*rng)(polis_ctx *ctx);
    const polis_io *(*io)(polis_ctx *ctx);

    /* registration (init/start only) */
    polis_status (*hook)(polis_ctx *ctx, polis_phase phase, int32_t priority, polis_hook_fn fn,
                         void *ud);
    polis_status (*action)(polis_ctx *ctx, const polis_action_def *def, int32_t *out_id);
    polis_status (*observation)(polis_ctx *ctx, const polis_obs_def *def, int32_t *out_id);
    polis_status (*reward)(polis_ctx *ctx, const char *name, polis_reward_fn fn, void *ud);
    polis_status (*reward_transform)(polis_ctx *ctx, const char *name, int32_t priority,
                                     polis_transform_fn fn, void *ud);
    polis_status (*event_type)(polis_ctx *ctx, const char *name, const polis_field_def *fields,
                               int32_t n_fields, int32_t *out_id);
    /* Subscribes to an event type by name; the name is resolved when registration freezes
     * (so it may belong to a plugin loaded later). Lower priority runs first; equal
     * priorities run in registration order. */
    polis_status (*subscribe)(polis_ctx *ctx, const char *event, int32_t priority,
                              polis_event_fn fn, void *ud);
    polis_status (*component)(polis_ctx *ctx, const char *name, size_t elem_size, int32_t *out_id);
    polis_status (*grid_configure)(polis_ctx *ctx, int32_t width, int32_t height, bool wrap);
    polis_status (*grid_layer)(polis_ctx *ctx, const char *name, int32_t *out_layer);
    polis_status (*service_provide)(polis_ctx *ctx, const char *name, const void *api);

    /* lookups (any time) */
    int32_t (*event_find)(polis_ctx *ctx, const char *name);     /* -1 if unknown */
    int32_t (*component_find)(polis_ctx *ctx, const char *name); /* -1 if unknown */
    int32_t (*action_find)(polis_ctx *ctx, const char *name);    /* -1 if unknown */
    const void *(*service)(polis_ctx *ctx, const char *name);    /* NULL if none */

    /* running (after registration froze) */
    polis_status (*publish)(polis_ctx *ctx, int32_t type, const void *payload, size_t size);
    void *(*component_data)(polis_ctx *ctx, int32_t component); /* [max_entities][elem] */
    /* NULL while the grid has no size (no "grid" in the scenario and no grid_configure);
     * the cells pointer is valid only after create. */
    const polis_grid *(*grid)(polis_ctx *ctx);
    /* Copies the (2rx+1) x (2ry+1) window centred on (cx, cy) of `layer` into out, rows of
     * y, wrapping on a torus; cells outside a bounded grid read as `outside`. */
    void (*grid_window)(polis_ctx *ctx, int32_t layer, int32_t cx, int32_t cy, int32_t rx,
                        int32_t ry, int32_t outside, int32_t *out);
    polis_status (*entity_create)(polis_ctx *ctx, polis_entity *out);
    polis_status (*entity_destroy)(polis_ctx *ctx, polis_entity e);
    bool (*entity_alive)(polis_ctx *ctx, polis_entity e);
    polis_entity (*agent_entity)(polis_ctx *ctx, int32_t agent);
    int32_t (*max_entities)(polis_ctx *ctx);
    /* BEGIN phase only: the agents that act this step, in this order (default: all live
     * agents in id order). Agents left out do nothing this step. */
    polis_status (*set_agent_order)(polis_ctx *ctx, const int32_t *agents, int32_t n);

    /* scenario JSON (init/start only), for POLIS_PARAM_JSON parameters. Accessors that read
     * a value report a type or range error with the full JSON path via host->error and
     * return POLIS_ERR_CONFIG. */
    /* 0 null, 1 bool, 2 number, 3 string, 4 array, 5 object, -1 absent, -2 out of memory
     * (json_get/json_at could not allocate the wrapper; the env error says so, and every
     * accessor on it returns POLIS_ERR_NOMEM). */
    int (*json_kind)(const polis_json *j);
    int32_t (*json_len)(const polis_json *j); /* array or object length, else 0 */
    const polis_json *(*json_at)(polis_ctx *ctx, const polis_json *j, int32_t i);
    const polis_json *(*json_get)(polis_ctx *ctx, const polis_json *j, const char *key);
    const char *(*json_key)(const polis_json *j, int32_t i); /* object member key */
    const char *(*json_path)(const polis_json *j);
    polis_status (*json_int)(polis_ctx *ctx, const polis_json *j, int64_t min, int64_t max,
                             int64_t *out);
    polis_status (*json_double)(polis_ctx *ctx, const polis_json *j, double min, double max,
                                double *out);
    polis_status (*json_string)(polis_ctx *ctx, const polis_json *j, const char **out);
    polis_status (*json_bool)(polis_ctx *ctx, const polis_json *j, bool *out);

    /* memory from the env's allocator; use it for state created in init (not in step) */
    void *(*alloc)(polis_ctx *ctx, size_t size); /* zeroed; NULL on failure */
    void (*free)(polis_ctx *ctx, void *p, size_t size);

    /* ---- ABI 1.1: renderers and action parsers ---- */

    /* Appends to a text buffer handed to a renderer (valid only during that call). Rendering
     * happens on demand (an LLM client, the CLI, the Python SDK), never inside step, so the
     * buffer may grow, up to 16 MiB per rendering. These return nothing: the first failure
     * (out of memory, the size limit, a NULL string, a NUL byte in the text) is remembered,
     * later appends do nothing, and the rendering fails with that message after the
     * renderer returns. */
    void (*text_append)(polis_text *t, const char *s, size_t n);
    void (*text_printf)(polis_text *t, const char *fmt, ...) POLIS_PRINTF(2, 3);
    /* Registers a renderer of one agent's view in a named format (init/start only; one per
     * format per plugin): "text" (for LLM agents, deterministic prose; end lines with '\n';
     * the kernel appends the line of legal actions from the mask, so a renderer does not
     * list them)
     * and "json" (exactly one JSON value, checked by the kernel: invalid JSON fails the
     * rendering with a message naming the plugin and agent) are the conventional ones; any
     * 1-63 character [a-z0-9_] name is allowed. Several plugins may register the same
     * format: the kernel concatenates the pieces of a text (or any non-json) format in
     * registration order, and builds a JSON object with one member per plugin, in
     * registration order, for "json" ({"society": ..., "social": ...}). A renderer reads
     * state and must not change it; it runs only after a successful reset, including after
     * the episode ended. An error return (after host->error) fails the rendering, placed:
     * "<plugin>: <message> [render text, agent 2 (agent_2), tick 5]"; the env is unchanged. */
    polis_status (*renderer)(polis_ctx *ctx, const char *format, polis_render_fn fn, void *ud);
    /* Registers a parser turning an agent's text or JSON action ("pick wood",
     * {"action": "pick_by_name", "kwargs": {"resource_name": "wood"}}) into an action id
     * (init/start only). The kernel trims surrounding whitespace, first matches the input
     * exactly against action names, then asks the parsers in registration order with the
     * trimmed input: a parser returns POLIS_OK with *out set to an id in
     * [0, n_actions), POLIS_ERR_ACTION when the input is not for it (any message it set is
     * dropped and the next parser is asked), or another error (with host->error) when it is
     * for it but malformed, which ends the parse with that message. Parsers may be called at
     * any time after create, also before the first reset: they must not change state, and
     * one that reads the world should check host->episode(ctx) > 0. The mask is not
     * consulted: whether the action is legal is for the caller or the protocol to decide. */
    polis_status (*action_parser)(polis_ctx *ctx, polis_parse_fn fn, void *ud);
    /* The directory relative paths in the scenario resolve against: the scenario file's
     * directory, or polis_options.base_dir (default ".") for a scenario string. Plugins
     * resolve file names in their parameters (maps, imported configs) against it. */
    const char *(*scenario_dir)(polis_ctx *ctx);
    /* Registers a named policy: a scripted controller that picks an action for one agent
     * from the current state (baselines such as "greedy", background bots, macro-action
     * controllers). Names are unique per env ([a-z0-9_]+). A policy draws randomness only
     * from host->policy_rng, never from host->rng, so running a policy does not change
     * the env's own random stream. Registration during init/start only. */
    polis_status (*policy)(polis_ctx *ctx, const char *name, polis_policy_fn fn, void *ud);
    /* The generator for policies: seeded at every reset from the reset seed on its own
     * stream, so a scripted episode is reproducible and independent of the env stream. */
    polis_rng *(*policy_rng)(polis_ctx *ctx);
    /* Registers a mask filter: after the legality callbacks of every action wrote an
     * agent's mask row, filters run in registration order and may clear bits of any
     * plugin's actions — how a staged game (contract formation, negotiation turns) makes
     * other plugins' actions illegal for some agents at some ticks. Filters should only
     * clear bits; the kernel keeps noop (bit 0) legal. Not called for finished agents.
     * Registration during init/start only. */
    polis_status (*mask_filter)(polis_ctx *ctx, polis_mask_fn fn, void *ud);
    /* ABI 1.1. Registers an action family (see
     * polis_action_family_def): `count` actions with
     * consecutive ids, the first written to *out_first_id. All names are checked before any
     * is registered, so a failure registers nothing. Registration during init/start only. */
    polis_status (*action_family)(polis_ctx *ctx, const polis_action_family_def *def,
                                  int32_t *out_first_id);
    /* ABI 1.2. Registers a macro (polis_macro_def). Names
     * are unique per env. Registration during init/start only. */
    polis_status (*macro)(polis_ctx *ctx, const polis_macro_def *def);
    /* ABI 1.4. Declares the values an observation field
     * registered by this plugin can hold (init/start only; once per field): every element
     * written lies in [lo[k], hi[k]]. dim -1 and n 1: one range for the whole field;
     * dim in [0, ndim) and n == shape[dim]: one range per index along that dimension (a
     * channel dimension such as society's grid [channel][x][y], dim 0). Bounds are finite
     * with lo <= hi; for an integer dtype they are integers inside the dtype's range. The
     * kernel reports them (polis_env_obs_field_range, `polis describe`, the Python SDK's
     * spaces), packs integer fields into the smallest dtype holding the range when an env
     * asks for compact observations (docs/scenario.md), and then fails the step naming
     * the field, agent, tick and value if a writer breaks its range: a range is a promise
     * the tests check, never a clamp. */
    polis_status (*obs_range)(polis_ctx *ctx, int32_t field, int32_t dim, int32_t n,
                              const double *lo, const double *hi);
    /* ABI 1.5: looks and scenes, what a recording, the
     * replay and the viewer draw (docs/kernel.md, "Looks and scenes"). Registration during
     * init/start only. A kind (polis_kind_def), written to *out_id (ids from 0, in
     * registration order across plugins). */
    polis_status (*look_kind)(polis_ctx *ctx, const polis_kind_def *def, int32_t *out_id);
    /* A tile layer of the scene (drawn in registration order), written to *out_layer. Not
     * the kernel grid's layers: a game shows what it chooses, in kinds. */
    polis_status (*look_layer)(polis_ctx *ctx, const char *name, int32_t *out_layer);
    /* A per-agent stat: name, group ("vitals", "inventory" or any [a-z0-9_]+), the largest
     * value (0: unbounded), written to *out_stat. */
    polis_status (*look_stat)(polis_ctx *ctx, const char *name, const char *group, int32_t max,
                              int32_t *out_stat);
    /* The scene map's size (1..65536 each); default the kernel grid's size. One plugin sets
     * it; a second, different size is refused. */
    polis_status (*look_map)(polis_ctx *ctx, int32_t width, int32_t height);
    /* An agent's view half-extent (what the agent sees: (2rx+1) x (2ry+1) cells around it). */
    polis_status (*look_view)(polis_ctx *ctx, int32_t rx, int32_t ry);
    /* Registers a scene callback (one per plugin) with its capacities. */
    polis_status (*look_scene)(polis_ctx *ctx, const polis_scene_def *def);
    /* Appends to the scene handed to a scene callback (valid only during that call). Bad
     * kinds, ids or strings longer than the POLIS_SCENE_*_MAX sizes fail with
     * POLIS_ERR_INVALID, more than the plugin declared with POLIS_ERR_LIMIT, both with the
     * message set (return the status). label may be NULL (""). */
    polis_status (*scene_thing)(polis_ctx *ctx, polis_scene *scene, int32_t id, int32_t kind,
                                int32_t x, int32_t y, const char *label);
    polis_status (*scene_node)(polis_ctx *ctx, polis_scene *scene, const char *id, const char *kind,
                               const char *label);
    polis_status (*scene_edge)(polis_ctx *ctx, polis_scene *scene, const char *from, const char *to,
                               const char *kind, float weight);
    /* A kind's id by name, -1 if unknown (kinds of other plugins too). */
    int32_t (*look_kind_find)(polis_ctx *ctx, const char *name);
    /* ABI 1.6: scenes that write only what changed
     * (docs/kernel.md, "Kept layers"). Registration only: the kernel keeps this tile layer from one
     * scene to the next instead of clearing it to -1 before the callbacks run, so the callback that
     * draws it writes only the cells that changed since its previous call. */
    polis_status (*look_keep_layer)(polis_ctx *ctx, int32_t layer);
    /* In a scene callback: true when the kept layers were cleared to -1 for this scene (its
     * first of the episode, or the previous scene failed): write every cell of them. True
     * outside a scene callback. */
    bool (*scene_fresh)(polis_ctx *ctx, const polis_scene *scene);
    /* ABI 1.7, the last slot: the host API `name` ("Host APIs" below) at `version` or later,
     * a constant table that starts with its version and struct size. NULL when this engine
     * has no such API or only older versions of it; the plugin's error then says which
     * versions the engine has, so init() can just return POLIS_ERR_PLUGIN. Any time, any
     * thread that may use the ctx. */
    const void *(*host_api)(polis_ctx *ctx, const char *name, uint32_t version);
} polis_host;

/* ---- host APIs ------------------------------------------------------------------------------
 *
 * What the host offers after ABI 1.7 comes in host APIs rather than new polis_host slots: a
 * named table of functions with a version of its own, fetched once (in init) with
 * host->host_api(ctx, NAME, VERSION). A table only grows, by appending functions, each
 * marked with the version that added it; asking for version v returns a table that has every
 * function of v, so a plugin never checks a struct size. Asking for a version the engine does
 * not have returns NULL with a message naming both versions (tests/unit/test_host_api.c). A
 * new API, or a new version of one, bumps no ABI minor (the CHANGELOG says which polis
 * release added it). Every table starts like polis_host_api_head. */
typedef struct polis_host_api_head {
    uint32_t version;     /* the newest version this engine has */
    uint32_t struct_size; /* sizeof the table in this engine */
} polis_host_api_head;

/* "json", version 1: JSON text a plugin parses itself (an action an agent sent, a message),
 * read through the host->json_* accessors. Parsing allocates: it is for parsers, renderers
 * and init, not for every step. */
#define POLIS_JSON_API "json"
#define POLIS_JSON_API_VERSION 1

typedef struct polis_json_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. Parses len bytes of text (at most 16 MiB) into a document: *out is its root
     * value, read with host->json_kind, json_get, json_string, ... (the values those return
     * live as long as the document). JSON as the scenario reader takes it: one value, no
     * comments, no trailing commas, no repeated member names, numbers that fit a double.
     * Any time after init starts, also while a parser or renderer runs. Errors (*out NULL, the
     * plugin's error set, naming `name`, line and column: "<plugin>: action:1:12: invalid JSON:
     * ..."): POLIS_ERR_CONFIG for text that is not JSON, POLIS_ERR_LIMIT for too long a text,
     * POLIS_ERR_NOMEM, POLIS_ERR_INVALID for NULL arguments. `name` (NULL: "json") names the
     * document in messages, also in the accessors' ("<plugin>: action: kwargs.dx: expected
     * integer ..."). */
    polis_status (*parse)(polis_ctx *ctx, const char *text, size_t len, const char *name,
                          const polis_json **out);
    /* Version 1. Frees a document parse returned (its root; NULL or any other value does
     * nothing), with every value read from it. The plugin owns what parse returned and frees
     * it before its destroy() returns. */
    void (*free)(polis_ctx *ctx, const polis_json *doc);
} polis_json_api;

/* "visibility", version 1: who sees whom (docs/visibility.md, polis/visibility.h). A game asks
 * visible(observer, target) for every other agent it would draw into an observer's observation
 * field, text or JSON view, plan or scene view, and leaves out those it may not see; the hidden
 * agents still act, collide, fight and craft. active() is false when nothing is hidden from
 * anyone at this tick, so writers skip the per-pair checks. The answer follows the env's tick
 * (host->tick): what an observation written after N steps sees is decided at tick N. Queries
 * allocate nothing and may run at any time, in any callback. */
#define POLIS_VISIBILITY_API "visibility"
#define POLIS_VISIBILITY_API_VERSION 1

typedef struct polis_visibility_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. true when observer sees target now; an agent always sees itself; false for
     * an agent outside 0 .. n_agents - 1. */
    bool (*visible)(polis_ctx *ctx, int32_t observer, int32_t target);
    /* Version 1. false when nothing is hidden from anyone now. */
    bool (*active)(polis_ctx *ctx);
    /* Version 1. What observer sees of target from now on: 0 hidden, 1 shown, -1 the
     * scenario's rules again (POLIS_VISIBILITY_* of polis/visibility.h); -1 as observer or
     * target is every agent. Settings last across resets. A game's changes are not logged for
     * recordings: a replay re-runs the game, which makes them again. The first setting of an
     * env allocates its table (n_agents^2 / 4 bytes) once. POLIS_ERR_INVALID (with the
     * message set) for a bad agent or state. */
    polis_status (*set)(polis_ctx *ctx, int32_t observer, int32_t target, int32_t state);
} polis_visibility_api;

/* "observations", version 1: writers that report what they changed, so that compact
 * observations (docs/scenario.md) cost what the change costs. With compact observations a
 * writer of an integer field with a declared range (host->obs_range) writes its registered
 * dtype into a record of its own, and the kernel narrows that record into the caller's
 * buffer, checking every element against its range. Without reports it narrows every
 * element of every record after each write; a writer that keeps its record up to date
 * (it changes a few hundred of 12,800 elements a step) reports which
 * elements it changed in this write, and only those are narrowed (docs/kernel.md, "Compact
 * observations"). A plugin that never reports keeps the whole narrowing: nothing else
 * changes. A field's values are the same either way, byte for byte, when the reports are
 * complete (tests/unit/test_obs_range.c). Version 2's writes_stored goes further: the
 * writer is handed the buffer row in the dtype the env stores and writes it directly, with
 * no record of its own and nothing narrowed (society's grid, position and time do). */
#define POLIS_OBSERVATIONS_API "observations"
#define POLIS_OBSERVATIONS_API_VERSION 2

typedef struct polis_observations_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. true when the env stores `field` (one this plugin registered) narrower than
     * its writer writes, so that reporting pays; false for plain observations, --no-obs, a
     * float field or one without a range, another plugin's field, and before the env is
     * created (ask from a hook or a writer, not from init or start). */
    bool (*narrowed)(polis_ctx *ctx, int32_t field);
    /* Version 1. While the writer of a narrowed field runs (ctx its own): the elements
     * at[i] + j x stride of the record being written (j = 0, 1, ... while inside the record;
     * stride 0: at[i] alone; element indices as in the record, 0 .. elements - 1) hold their
     * final values for this write and are narrowed now. A write that reports (even n 0) is
     * narrowed only where it reported, so it must report every element whose value differs
     * from what the record held after the previous write into it (more does no harm); an
     * element written again after its report is reported again. A write that reports
     * nothing is narrowed whole. The kernel ignores reports and narrows whole where it must
     * (a record's first write, a buffer moved since, any write after one that failed), and
     * reports do nothing at other times (plain observations included). A value outside its
     * range fails the step as always (field, agent, element, value, range, tick); so does an
     * element outside the record (a writer's bug), and at NULL with n > 0. */
    void (*changed)(polis_ctx *ctx, const int32_t *at, size_t n, size_t stride);
    /* Version 1. The same for the elements first .. first + count - 1. */
    void (*changed_run)(polis_ctx *ctx, size_t first, size_t count);
    /* Version 2. Declares, while registering (init or start, after host->observation), that
     * the writer of `field` (one this plugin registered) writes the dtype the env stores the
     * field in (stored(), below) rather than the registered one. With compact observations
     * the writer then gets the caller's buffer row itself, in that narrower dtype: the kernel
     * keeps no shadow record, narrows nothing and checks no value, so a value inside the
     * declared range is the writer's own promise (it is cut to the narrow dtype otherwise);
     * without compact observations nothing changes. narrowed() is false for such a field.
     * POLIS_ERR_INVALID for a field not this plugin's, POLIS_ERR_STATE after registration
     * (message set either way). */
    polis_status (*writes_stored)(polis_ctx *ctx, int32_t field);
    /* Version 2. The dtype (polis_dtype) the buffer holds `field` in, fixed for the env's
     * life: the registered one, or the narrower one compact observations chose; -1 for a
     * field not this plugin's and before the env is created (ask from a hook or a writer).
     * A writer that declared writes_stored writes this dtype. */
    int32_t (*stored)(polis_ctx *ctx, int32_t field);
} polis_observations_api;
/* "shared_observations", version 1: observation fields held once per env (docs/kernel.md,
 * "Shared observation fields"). A value every agent would see the same — a social graph, a
 * clock, a public scoreboard — costs one copy per agent in the per-agent record: 1,000
 * agents each holding the same 1 MB matrix is 1 GB rewritten every step. A shared field is
 * kept once per env, outside the agents' records, in a buffer of its own that hosts read
 * with polis_env_shared_obs (polis/env.h) or polis_vec_shared_obs (polis/vec.h). Its writer
 * runs once per observation pass (after the OBSERVE hooks, before the per-agent fields),
 * with agent -1 and dst the field's place in that buffer; like a per-agent writer it must
 * leave every element holding the field's value (the buffer is not cleared between passes,
 * so a writer may update it in place). Shared fields are stored in their registered dtype
 * (compact observations do not narrow them), are not written under no_observations (the
 * buffer stays zero), and are part of polis_env_state_hash when an env has any. */
#define POLIS_SHARED_OBS_API "shared_observations"
#define POLIS_SHARED_OBS_API_VERSION 1

typedef struct polis_shared_obs_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. Registers a shared field (init/start only), as host->observation registers
     * a per-agent one: the same definition and checks (a name unique among every
     * observation field of the env, per-agent or shared; dtype; ndim 1..4; each dimension
     * 1..2^24; at most 2^28 elements; a write function). The id written to *out_id (may be
     * NULL) numbers the env's shared fields from 0, in registration order, as
     * polis_env_shared_field does; it is no per-agent field id (host->obs_range and the
     * "observations" API do not take it: a shared field declares no range and is never
     * narrowed). Errors (message set, naming the field): POLIS_ERR_INVALID
     * for a bad definition or a duplicate name, POLIS_ERR_STATE after registration closed. */
    polis_status (*field)(polis_ctx *ctx, const polis_obs_def *def, int32_t *out_id);
} polis_shared_obs_api;

/* "reset_ahead", version 1: a game's costly part of a reset (a world's generation) done
 * ahead of time, on a thread of a vectorised env's pool that would otherwise wait (docs/
 * kernel.md, "Resets made ahead"). A polis_vec knows the seed of each env's next reset
 * (polis_vec_env_seed); between calls, a worker with nothing to step calls the env's
 * prepare function with the generator as that reset will hand it to the RESET hooks
 * (seeded, nothing drawn yet). The function works out what the reset would draw into memory
 * of its own, keyed by that generator state; the RESET hook then takes the prepared result
 * when host->rng(ctx) is in exactly the keyed state (copying the generator's state after the
 * draws as well) and generates as before otherwise, so the episode is the same byte for byte
 * either way: only the time moves. A plugin that registers nothing, a lone env and a vec of
 * one thread change nothing. */
#define POLIS_RESET_AHEAD_API "reset_ahead"
#define POLIS_RESET_AHEAD_API_VERSION 1

/* Runs on any thread of the vec's pool while the env may be stepping on another (never
 * during its reset or destroy, and never twice at once for one env): it may read only what
 * does not change after init, and write only memory that nothing but itself and the
 * plugin's RESET hook touch. No host functions (the ctx is not its thread's); rng is the
 * reset's generator as it will start the RESET hooks: copy it and draw from the copy. */
typedef void (*polis_prepare_fn)(void *ud, const polis_rng *rng);

typedef struct polis_reset_ahead_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. Registers the env's prepare function (init/start only; at most one per
     * plugin, four per env). Errors (message set): POLIS_ERR_INVALID for a NULL fn or a
     * second registration of the plugin, POLIS_ERR_LIMIT past four, POLIS_ERR_STATE after
     * registration closed, POLIS_ERR_NOMEM. */
    polis_status (*prepare)(polis_ctx *ctx, polis_prepare_fn fn, void *ud);
} polis_reset_ahead_api;

/* "actions", version 1: more about the actions a plugin registered. */
#define POLIS_ACTIONS_API "actions"
#define POLIS_ACTIONS_API_VERSION 1

/* Writes the mask bytes of a legality group for `agent`: row[i] (0 or 1) for the group's
 * action first + i, i in [0, count). Like polis_action_def.legal it must not change state. */
typedef void (*polis_legal_rows_fn)(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row);

typedef struct polis_actions_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. A legality group: the `count` single actions with ids first .. first +
     * count - 1, all registered by this plugin with host->action (not members of a family or
     * of another group), get their mask bytes from one call of `row` per agent instead of one
     * `legal` call each — a plugin with many related actions ("pick_<resource>" for every
     * resource) answers them in one pass over the agent's state. Each action keeps its names,
     * ids, handler and `legal`, and `row` must write for each exactly what its `legal`
     * returns (NULL legal: 1). A scenario may still replace or disable one member's legality
     * ("replace", docs/ffi.md): that member is then asked on its own, after `row`.
     * Registration during init/start only. POLIS_ERR_INVALID (message set) for a NULL row,
     * count < 1, ids out of range or an action that is not this plugin's single, ungrouped
     * action. */
    polis_status (*legal_rows)(polis_ctx *ctx, int32_t first, int32_t count,
                               polis_legal_rows_fn row, void *ud);
} polis_actions_api;

/* "scene", version 1: scenes that say what they did not change (docs/kernel.md, "Kept
 * layers"). A reader that keeps a copy of the last scene (the recorder) compares every kept
 * layer with it each time, a memcmp of the whole map per layer per tick; a scene callback
 * that knows it wrote nothing into a kept layer says so, and the reader skips it
 * (polis_env_scene_layer_version, polis/scene.h). Version 2 keeps things and edges in slots,
 * version 3 names the rows of a kept layer a scene rewrote and moves a kept thing, version 4
 * says what a callback writes whole, version 5 draws scenes from copies off the stepping
 * thread. */
#define POLIS_SCENE_API "scene"
#define POLIS_SCENE_API_VERSION 5

/* scene_whole's bits ("scene" host API version 4) */
#define POLIS_SCENE_WHOLE_AGENTS 1u       /* every agent's x, y, facing and alive */
#define POLIS_SCENE_WHOLE_STATS 2u        /* every agent's value of each stat it registered */
#define POLIS_SCENE_WHOLE_FRESH_LAYERS 4u /* every cell of the layers it keeps, when fresh */

/* A plugin's scene drawn from copies ("scene" host API version 5). The reader (one per env at
 * a time) calls take on the env's thread after a reset or a step, every time, and draw later on
 * its own thread, for each take in the order taken; the scene draw writes is the one the
 * plugin's scene callback would have written at the take. Every host call a scene callback may
 * make is allowed in draw too (scene_fresh, scene_thing, the "scene" API's layer_same,
 * layer_rows, thing_put, thing_move, slot_clear, ...), with the ctx and scene it was handed;
 * no other. */
typedef struct polis_scene_copy_def {
    /* On the env's thread: writes into buf[0 .. max_take) what draw needs to bring the scene it
     * drew last up to the game's current state, everything when `fresh` (the first take of an
     * episode or of the reader, or the one after a take failed), and its bytes to *len. Reads the
     * game; changes only what the take itself keeps (its own marks of what changed: the
     * scene callback and the rules must see no difference). Allocates nothing. */
    polis_status (*take)(polis_ctx *ctx, void *ud, bool fresh, void *buf, size_t *len);
    /* On the reader's thread: the plugin's part of `scene` from a take (take_len bytes) — as
     * the scene callback, with the same calls. `state` is draw's own (state_bytes, zeroed
     * before a fresh take's draw) for what it keeps between draws (what each slot shows, ...);
     * ud is take's, only read here (what registration left in it, never the game's changing
     * state: the env's thread is stepping meanwhile). host->error called here sets the
     * reader's message (polis_scene_copy_error), not the env's. Allocates nothing. */
    polis_status (*draw)(polis_ctx *ctx, void *ud, void *state, const void *take, size_t take_len,
                         polis_scene *scene);
    void *ud;
    size_t max_take;    /* the most bytes one take writes (1 .. 2^30) */
    size_t state_bytes; /* draw's state (0 .. 2^30; 0: none, state NULL) */
} polis_scene_copy_def;

typedef struct polis_scene_api {
    uint32_t version;
    uint32_t struct_size;
    /* Version 1. In a scene callback (ctx its own, scene the one it was handed): the kept
     * layer `layer` (look_keep_layer) holds exactly what it held after the previous scene —
     * this callback wrote no cell of it, and no other callback writes it. Ignored when the
     * scene is fresh (host->scene_fresh: the layer was cleared). Saying it of a layer that
     * changed is the plugin's bug: readers then miss the change. POLIS_ERR_INVALID for a layer
     * id out of range or one not kept, POLIS_ERR_STATE outside the plugin's own scene
     * callback, both with the message set. Allocates nothing. */
    polis_status (*layer_same)(polis_ctx *ctx, const polis_scene *scene, int32_t layer);

    /* Version 2: kept lists (docs/kernel.md, "Kept lists"). A plugin that knows which of its
     * things or edges changed keeps them in numbered slots instead of appending them all at
     * every scene: the kernel keeps the plugin's share of the list from one scene to the next
     * (the elements in no particular order) and notes which slots each scene put or cleared,
     * so a reader with a copy of the last scene (the recorder) looks only at those
     * (polis_env_scene_kept, polis/scene.h).
     *
     * list_keep (registration, after look_scene): this plugin's things (POLIS_SCENE_THINGS)
     * or edges (POLIS_SCENE_EDGES) are kept, in slots 0 .. slots - 1 (1 .. 2^24); at most
     * look_scene's max_things / max_edges of them hold an element at once. The plugin then
     * cannot append to that list (scene_thing / scene_edge: POLIS_ERR_STATE). Errors
     * (POLIS_ERR_INVALID, message set): nodes, another list, slots out of range, no scene
     * callback yet, a list kept twice.
     *
     * In the plugin's own scene callback: when host->scene_fresh is true the kernel emptied
     * every slot (the first scene of an episode, or after one that failed) and the callback
     * puts every element again; otherwise the slots hold what the callback left in them.
     * thing_put / edge_put set a slot's element (checked as scene_thing / scene_edge check
     * theirs; POLIS_ERR_LIMIT beyond the declared maximum), slot_clear empties a slot (an
     * empty one stays empty). A slot out of range or a list not kept: POLIS_ERR_INVALID;
     * outside the callback: POLIS_ERR_STATE; messages set. Putting an element equal to the
     * one held is allowed (readers then find nothing changed). Keys (a thing's id, an
     * edge's from, to and kind) must stay unique over the list, as for appended elements.
     * Allocates nothing. */
    polis_status (*list_keep)(polis_ctx *ctx, int32_t list, int32_t slots);
    polis_status (*thing_put)(polis_ctx *ctx, polis_scene *scene, int32_t slot, int32_t id,
                              int32_t kind, int32_t x, int32_t y, const char *label);
    polis_status (*edge_put)(polis_ctx *ctx, polis_scene *scene, int32_t slot, const char *from,
                             const char *to, const char *kind, float weight);
    polis_status (*slot_clear)(polis_ctx *ctx, polis_scene *scene, int32_t list, int32_t slot);

    /* Version 3: scenes that say where they changed (docs/kernel.md, "Kept layers", "Kept
     * lists"). In the plugin's own scene callback, as layer_same and thing_put:
     *
     * thing_move: the thing held in kept thing slot `slot` moves to (x, y), its id, kind and
     * label kept — what thing_put with them would do, without the label's copy and checks.
     * POLIS_ERR_INVALID (message set) for an empty slot, a place outside the map, a slot out
     * of range or things not kept by this plugin; POLIS_ERR_STATE outside the callback.
     *
     * layer_rows: the kept layer `layer` holds what it held after the previous scene except in
     * the rows whose bits are set in rows[0 .. n_words) (row y: bit y % 64 of rows[y / 64];
     * bits of rows past the map's height are ignored) — this callback wrote only those rows,
     * and no other callback writes the layer. Calls in one scene add up. A reader with a copy
     * of the layer compares only those rows (polis_env_scene_layer_rows, polis/scene.h).
     * Ignored when the scene is fresh or the layer is said the same (layer_same). Leaving a
     * changed row out is the plugin's bug: readers then miss the change. POLIS_ERR_INVALID
     * for a layer that is not kept, rows NULL or n_words outside 1 .. (height + 63) / 64;
     * POLIS_ERR_STATE outside the callback; messages set. Neither allocates. */
    polis_status (*thing_move)(polis_ctx *ctx, polis_scene *scene, int32_t slot, int32_t x,
                               int32_t y);
    polis_status (*layer_rows)(polis_ctx *ctx, const polis_scene *scene, int32_t layer,
                               const uint64_t *rows, int32_t n_words);
    /* Also version 3 (plugin ABI 1.7): edge_put with the edge already in the scene's own form, its
     * from, to and kind each NUL-padded to its array's end (polis/types.h) — a plugin that
     * keeps its names so hands them over without the kernel measuring and padding three
     * strings per put (copied as one 164-byte block). Checked as edge_put checks (the ends
     * not empty, each string ending inside its array: its last byte NUL, the weight not NaN;
     * POLIS_ERR_INVALID, message set; the slot and the callback as for edge_put); the padding
     * is not checked: a byte that is not NUL after a string's end is the plugin's bug (readers
     * compare the arrays whole and then order or match the edge wrongly). Allocates nothing.
     * Check `version >= 3` on the table a version-2 request returned before calling it. */
    polis_status (*edge_put_padded)(polis_ctx *ctx, polis_scene *scene, int32_t slot,
                                    const polis_scene_edge *edge);

    /* Version 4: scene_whole (registration, after look_scene): this plugin's scene callback
     * writes, in every scene, what the bits of `what` name, so the kernel need not clear it
     * before the callbacks run (docs/kernel.md, "Scenes written whole"):
     * POLIS_SCENE_WHOLE_AGENTS every agent's x, y, facing and alive (the kernel otherwise sets
     * them to -1, -1, none and "not terminated" first); POLIS_SCENE_WHOLE_STATS every agent's
     * value of each stat this plugin registered (otherwise 0 first; the clear is skipped only
     * when every stat's plugin said so); POLIS_SCENE_WHOLE_FRESH_LAYERS, in a fresh scene
     * (host->scene_fresh), every cell of each layer this plugin keeps (look_keep_layer;
     * otherwise -1 first). Calls add up. Saying it of something the callback leaves unwritten
     * is the plugin's bug: the scene then shows what an earlier scene held. POLIS_ERR_STATE
     * after registration, POLIS_ERR_INVALID for unknown bits or no scene callback of this
     * plugin yet; messages set. Check `version >= 4` on the table before calling it. */
    polis_status (*scene_whole)(polis_ctx *ctx, uint32_t what);

    /* Version 5: scene_copy (registration, after look_scene): this plugin's part of a scene can
     * also be drawn from a copy of what changed, on another thread (docs/kernel.md, "Scenes
     * drawn from copies"; polis_scene_copy, polis/scene.h). The recorder draws its scenes so,
     * on its writer thread, when every plugin with a scene callback registered a copy: the
     * stepping thread only takes the copies. The def is copied. POLIS_ERR_STATE after
     * registration, POLIS_ERR_INVALID (message set) for a NULL take or draw, max_take 0 or over
     * 2^30, state_bytes over 2^30, no scene callback of this plugin yet or a second copy.
     * Check `version >= 5` on the table before calling it. */
    polis_status (*scene_copy)(polis_ctx *ctx, const polis_scene_copy_def *def);
} polis_scene_api;

/* ---- the public head of a ctx ------------------------------------------------------------ */

/* Every polis_ctx starts with this head, so code that receives only a ctx — an exported
 * function called through libffi, a callback registered with ud = NULL — reaches the host
 * table and the plugin's state (what init() stored in *state). An export whose signature
 * starts with `ctx` always receives the exporting plugin's own ctx. */
typedef struct polis_ctx_head {
    const polis_host *host;
    void *state;
} polis_ctx_head;

static inline const polis_host *polis_ctx_host(polis_ctx *ctx)
{
    return ((const polis_ctx_head *)(const void *)ctx)->host;
}

static inline void *polis_ctx_state(polis_ctx *ctx)
{
    return ((const polis_ctx_head *)(const void *)ctx)->state;
}

/* ---- the descriptor --------------------------------------------------------------------- */

/* What a plugin is. Frozen as of ABI 1.7: no field will be added. */
typedef struct polis_plugin_desc {
    uint32_t abi_major;   /* POLIS_ABI_MAJOR */
    uint32_t struct_size; /* sizeof(polis_plugin_desc) as the plugin was built */
    const char *name;     /* unique per env; [a-z0-9_]+ */
    /* The oldest host minor this plugin needs: the newest "ABI 1.N" it uses (a literal such
     * as 5, not POLIS_ABI_MINOR, which would refuse older engines for nothing). 0 is 1.0. */
    uint32_t abi_minor;
    const char *version;
    const char *doc;
    const char *const *requires; /* NULL-terminated plugin names loaded before this one */
    const polis_param_def *params;
    int32_t n_params;
    size_t params_size; /* sizeof(your params struct); 0 if none */
    polis_status (*init)(const polis_host *host, polis_ctx *ctx, const void *params, void **state);
    polis_status (*start)(polis_ctx *ctx, void *state);
    void (*destroy)(polis_ctx *ctx, void *state);
    const polis_export *exports;
    int32_t n_exports;
} polis_plugin_desc;

typedef const polis_plugin_desc *(*polis_plugin_entry_fn)(void);

#define POLIS_PLUGIN(desc_var)                                                                     \
    POLIS_EXPORT const polis_plugin_desc *polis_plugin_entry(void);                                \
    POLIS_EXPORT const polis_plugin_desc *polis_plugin_entry(void) { return &(desc_var); }

#ifdef __cplusplus
}
#endif
#endif
