/*
 * engine/lua/internal.h — what the Lua host (lua_host.c), the `polis` library the scripts
 * call (lua_api.c, lua_run.c) and the bounded standard library (lua_lib.c) share: the
 * module's state, the per-script state, the callback and view records, and the few
 * functions one file calls in another. Internal to the engine; ffi/swap.c uses the callback
 * records to replace a handler by a script's function (docs/architecture.md).
 */
#ifndef POLIS_LUA_INTERNAL_H
#define POLIS_LUA_INTERNAL_H

#include <string.h>

#include <lua.h>

#include "core/module.h"

typedef struct polis__script polis__lua_script;

/* The module's state (env->lua), allocated when the first script loads: what the env's
 * scripts share against lua_memory_limit. */
struct polis__lua {
    int64_t memory_used;  /* bytes across this env's Lua states */
    int64_t engine_bytes; /* engine memory the scripts asked for (observations, layers) */
};

_Static_assert(LUA_EXTRASPACE >= sizeof(void *), "the script pointer lives in the extra space");

/* Where the values of an observation field or a reward come from (polis.observation's
 * `write`, `write_all` or `values`; polis.reward's function or table), and where an action
 * goes (polis.action's handler, or the table `into` the host sets). */
typedef enum polis__lua_source {
    POLIS__LUA_FUNCTION = 0, /* a function called per agent: write(agent, buf), fn(agent) */
    POLIS__LUA_WRITE_ALL,    /* write_all(buf): one call for every agent's slice */
    POLIS__LUA_TABLE         /* a table the script fills and the host reads: t[agent] */
} polis__lua_source;

/* One registered Lua callback: the user data of its trampoline. Owned by the script, freed
 * at unload; the Lua functions are kept alive by registry references. */
typedef struct polis__lua_cb {
    struct polis__lua_cb *next;
    polis__lua_script *s;
    int fn;                   /* registry ref of the function */
    int legal;                /* actions: ref of the legality function, or LUA_NOREF */
    char *name;               /* what it was registered as, for messages */
    polis_dtype dtype;        /* observations */
    size_t count;             /* observations: elements per agent */
    int macro_next;           /* macros: ref of the next function */
    int macro_plans;          /* macros: ref of the table agent + 1 -> the plan start returned */
    int scene_writer;         /* polis.look: ref of the scene writer handed to the scene function */
    polis__lua_source source; /* observations and rewards: fn is the ref of a table for
                               * POLIS__LUA_TABLE */
    char *where;              /* POLIS__LUA_TABLE: "file:line" of the registration */
    void *stage;              /* POLIS__LUA_WRITE_ALL: every agent's slice, agent by agent */
    size_t stage_bytes;
    int64_t into_value; /* actions with POLIS__LUA_TABLE: into[agent] = into_value */
} polis__lua_cb;

/* The writer a polis.look scene function receives (lua_api.c): the scene while the
 * function runs, NULL otherwise. */
typedef struct polis__lua_scene_writer {
    polis__lua_script *s;
    polis_scene *scene;
} polis__lua_scene_writer;

/* The observation buffer a writer gets: valid only while the writer runs. A write(agent,
 * buf) view holds one agent's slice (stride == count); a write_all view every agent's, agent
 * after agent (stride: elements per agent), and agent is 0; a shared field's view
 * (polis.shared_observation) the env's one slice, and agent is -1. */
typedef struct polis__lua_obs_view {
    void *p;
    size_t count;
    size_t stride;
    polis_dtype dtype;
    const polis__lua_cb *cb;
    int32_t agent;
} polis__lua_obs_view;

/* The agent whose slice element i (0-based) of a view belongs to. */
static inline int32_t polis__lua_obs_agent(const polis__lua_obs_view *v, size_t i)
{
    return v->agent + (int32_t)(i / v->stride);
}

/* What a view's field is called in messages: "shared observation" or "observation". */
static inline const char *polis__lua_obs_kind(const polis__lua_obs_view *v)
{
    return v->agent < 0 ? "shared observation" : "observation";
}

/* The rewards array a transform gets: valid only while the transform runs. */
typedef struct polis__lua_reward_view {
    float *p;
    int32_t n;
    const polis__lua_cb *cb;
} polis__lua_reward_view;

struct polis__script {
    polis_env *env;
    polis_ctx *ctx;
    const polis_host *h;
    const polis__scn_script *scn;
    lua_State *L;
    char *display;   /* the script path as the scenario gave it */
    char *chunkname; /* "@" display */
    polis__lua_cb *cbs;
    int start_ref;    /* table of polis.on_start functions */
    int evtables_ref; /* table: event type id + 1 -> the reused event table */
    int obs_ref;      /* the observation view (s->obs) */
    polis__lua_obs_view *obs;
    polis__lua_reward_view *rewards;
    /* The scene writer whose scene function runs now (NULL: none): its methods recognise it
     * by this pointer instead of looking its metatable up by name on every call. */
    struct polis__lua_scene_writer *writer_now;
    bool loading; /* chunk or on_start running: registration allowed */
    bool params_called;
    bool in_policy; /* a policy runs: math.random draws from the policy generator */
    int depth;      /* nesting of run_protected on this state */
    const struct polis_visibility_api *vis_api; /* the host's visibility API, once asked */

    /* The limits of the outermost callback now running (lua_host.c, "limits"). */
    int64_t budget_left;            /* instructions left; INT64_MAX when instruction_limit is 0 */
    struct polis__lua_watch *watch; /* the thread's watchdog slot while it runs, or NULL */
    lua_State *watch_prev;          /* the slot's target before this script entered */
    bool exhausted;                 /* a limit was hit: every further instruction raises */
    bool timed_out;                 /* ... and it was the time limit */

    bool limit_hit;       /* the allocator refused an allocation at the memory cap */
    char limit_where[96]; /* "file:line" running when it first did, or "" */

    /* The last failed host call made from Lua: its status and message, so the outermost
     * report keeps the status (out of memory, config error) and the engine's placement. */
    polis_status host_status;
    bool host_placed;
    char host_msg[POLIS_ERRMAX];
};

/* The script that owns L (or the thread L runs on): script_load keeps the pointer in the
 * extra space of the main thread, which Lua copies into every new thread. */
static inline polis__lua_script *polis__lua_script_of(lua_State *L)
{
    polis__lua_script *s;
    memcpy(&s, lua_getextraspace(L), sizeof s);
    return s;
}

/* ---- lua_host.c ------------------------------------------------------------------------- */

/* Raises the error of a failed host call (its message is in env->err) as a Lua error, and
 * keeps the status and the engine's placement for the report at the protected boundary.
 * Call only from a lua_CFunction, after the host call returned; does not return. */
POLIS_INTERNAL int polis__lua_raise_host(lua_State *L, polis__lua_script *s, polis_status st);

/* Charges `units` of work done by a library function (one unit is about one VM
 * instruction: an element moved, a matching step, 64 bytes produced) to the running
 * callback's instruction budget, and reads the clock once enough work has been charged.
 * When a limit is hit, raises the located limit error; call only from a lua_CFunction,
 * before the work (or between pieces of it). */
POLIS_INTERNAL void polis__lua_charge(lua_State *L, int64_t units);

/* The C callbacks a script's registrations hand to the host table; ud is the polis__lua_cb.
 * Each runs the Lua function under the script's protected boundary and budget. */
POLIS_INTERNAL polis_status polis__lua_tramp_hook(polis_ctx *ctx, void *ud);
POLIS_INTERNAL polis_status polis__lua_tramp_action(polis_ctx *ctx, void *ud, int32_t agent,
                                                    int32_t arg);
POLIS_INTERNAL bool polis__lua_tramp_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg);
POLIS_INTERNAL polis_status polis__lua_tramp_reward(polis_ctx *ctx, void *ud, float *out);
POLIS_INTERNAL polis_status polis__lua_tramp_transform(polis_ctx *ctx, void *ud, float *rewards);
POLIS_INTERNAL polis_status polis__lua_tramp_event(polis_ctx *ctx, void *ud, const polis_event *ev);
POLIS_INTERNAL void polis__lua_tramp_obs(polis_ctx *ctx, void *ud, int32_t agent, void *dst);
POLIS_INTERNAL polis_status polis__lua_tramp_render(polis_ctx *ctx, void *ud, int32_t agent,
                                                    polis_text *out);
POLIS_INTERNAL polis_status polis__lua_tramp_parse(polis_ctx *ctx, void *ud, int32_t agent,
                                                   const char *input, int32_t *out_action);
POLIS_INTERNAL polis_status polis__lua_tramp_policy(polis_ctx *ctx, void *ud, int32_t agent,
                                                    int32_t *out_action);
/* polis.macro: start and next of polis_macro_def (the kernel's plan memory is unused; the
 * plan start returns is kept in the callback's table). */
POLIS_INTERNAL polis_status polis__lua_tramp_scene(polis_ctx *ctx, void *ud, polis_scene *scene);
POLIS_INTERNAL polis_status polis__lua_tramp_macro_start(polis_ctx *ctx, void *ud, int32_t agent,
                                                         const char *args, void *plan);
POLIS_INTERNAL polis_status polis__lua_tramp_macro_next(polis_ctx *ctx, void *ud, int32_t agent,
                                                        void *plan, polis_plan_state *state,
                                                        int32_t *out_action, char *why, size_t cap);

/* The count hook of the limits; the watchdog's signal handler installs it too. */
POLIS_INTERNAL void polis__lua_count_hook(lua_State *L, lua_Debug *ar);

/* ---- lua_watch.c ------------------------------------------------------------------------ */

/* The time limit's watchdog (one thread per process, lua_watch.c says how it works). */
typedef struct polis__lua_watch polis__lua_watch;

/* Starts watching the calling thread's outermost callback under limit_ms (> 0); nested
 * entries (another script's callback inside it) share the outer one's clock. target is the
 * state an overrun arms with a count hook of 1 (NULL: the script has its own count hook,
 * which polls the overrun). *prev receives what exit must restore. */
POLIS_INTERNAL polis__lua_watch *polis__lua_watch_enter(lua_State *target, int64_t limit_ms,
                                                        lua_State **prev);
POLIS_INTERNAL void polis__lua_watch_exit(polis__lua_watch *w, lua_State *prev);
/* True once the watchdog found the callback now running past its limit. */
POLIS_INTERNAL bool polis__lua_watch_overrun(const polis__lua_watch *w);

/* ---- lua_api.c -------------------------------------------------------------------------- */

/* Refuses (raises) engine memory a script asks for (an observation field, a grid layer)
 * when it would take the env past lua_memory_limit together with what the scripts' Lua
 * states hold; `what` names the request. The caller adds the bytes to env->lua->engine_bytes
 * once the engine accepted the request. */
POLIS_INTERNAL void polis__lua_engine_memory(lua_State *L, polis__lua_script *s, const char *what,
                                             uint64_t bytes);

/* Stores the number at stack index idx as element i of an observation buffer of dtype dt,
 * range-checked, never clamped; raises nothing and allocates nothing. False, with why set
 * (e.g. "256 is outside the u8 range [0, 255]"), when the value does not fit. */
POLIS_INTERNAL bool polis__lua_obs_store(lua_State *L, int idx, polis_dtype dt, void *p, size_t i,
                                         char *why, size_t cap);

/* Argument helpers lua_run.c shares: an integer argument that must fit in 32 bits, and the
 * error of a load-time-only call made while the script runs. Both raise. */
POLIS_INTERNAL int32_t polis__lua_check_i32(lua_State *L, int arg);
POLIS_INTERNAL int polis__lua_not_loading(lua_State *L, const char *fn);

/* A callback record for the global function `fn` of a script, as if the script had
 * registered it under `name` (dtype and count for an observation writer; as_legal for a
 * legality function): what ffi/swap.c installs in place of a replaced handler. NULL with
 * the reason in why when there is no such function. */
POLIS_INTERNAL polis_status polis__lua_swap_cb(polis_ctx *script, const char *fn, const char *name,
                                               polis_dtype dtype, size_t count, bool as_legal,
                                               polis__lua_cb **out, char *why, size_t n);

/* Frees the parameter table and values struct polis.params left on a script's ctx (its own
 * copies) and clears the ctx's parameter fields. Safe when the script declared none. */
POLIS_INTERNAL void polis__lua_params_release(polis_env *env, polis_ctx *ctx);

/* These two run inside the protected call that sets up the sandbox, so they may raise. */

/* Installs the global table `polis`, the env-seeded math.random (math.randomseed refuses)
 * and print as polis.log. */
POLIS_INTERNAL void polis__lua_open_api(lua_State *L);

/* Creates the observation-buffer and rewards views (s->obs, s->rewards) that writers and
 * reward transforms receive. */
POLIS_INTERNAL void polis__lua_open_views(lua_State *L, polis__lua_script *s);

/* ---- lua_lib.c -------------------------------------------------------------------------- */

/* Replaces the standard library functions whose work is not bounded by one VM instruction
 * (string.rep, table.move, the pattern functions, ...) by versions that charge their work
 * with polis__lua_charge. Runs inside the protected setup call, after the libraries opened. */
POLIS_INTERNAL void polis__lua_open_bounded(lua_State *L);

/* ---- lua_run.c -------------------------------------------------------------------------- */

/* The running-time functions of the `polis` library, which polis__lua_open_api installs:
 * polis.<name> for each polis__lua_<name>; polis__lua_random, polis__lua_randomseed and
 * polis__lua_log also become math.random, math.randomseed and print. */
POLIS_INTERNAL int polis__lua_publish(lua_State *L);
POLIS_INTERNAL int polis__lua_tick(lua_State *L);
POLIS_INTERNAL int polis__lua_episode(lua_State *L);
POLIS_INTERNAL int polis__lua_n_agents(lua_State *L);
POLIS_INTERNAL int polis__lua_agent_name(lua_State *L);
POLIS_INTERNAL int polis__lua_visible(lua_State *L);
POLIS_INTERNAL int polis__lua_visibility_active(lua_State *L);
POLIS_INTERNAL int polis__lua_set_visible(lua_State *L);
POLIS_INTERNAL int polis__lua_max_steps(lua_State *L);
POLIS_INTERNAL int polis__lua_random(lua_State *L);
POLIS_INTERNAL int polis__lua_randomseed(lua_State *L);
POLIS_INTERNAL int polis__lua_log(lua_State *L);
POLIS_INTERNAL int polis__lua_error(lua_State *L);
POLIS_INTERNAL int polis__lua_terminate(lua_State *L);
POLIS_INTERNAL int polis__lua_truncate(lua_State *L);
POLIS_INTERNAL int polis__lua_set_agent_order(lua_State *L);
POLIS_INTERNAL int polis__lua_action_id(lua_State *L);
POLIS_INTERNAL int polis__lua_event_id(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_configure(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_layer(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_size(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_get(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_set(lua_State *L);
POLIS_INTERNAL int polis__lua_grid_view(lua_State *L);
POLIS_INTERNAL int polis__lua_entity_create(lua_State *L);
POLIS_INTERNAL int polis__lua_entity_destroy(lua_State *L);
POLIS_INTERNAL int polis__lua_entity_alive(lua_State *L);
POLIS_INTERNAL int polis__lua_agent_entity(lua_State *L);
POLIS_INTERNAL int polis__lua_call(lua_State *L);
POLIS_INTERNAL int polis__lua_require(lua_State *L);

#endif
