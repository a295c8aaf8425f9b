/*
 * engine/lua/lua_host.c — the embedded Lua 5.4 host.
 *
 * Each scenario script gets its own lua_State and its own polis_ctx, and registers through
 * the same host table as a .so plugin (polis__host()): a Lua function becomes a C callback
 * through a trampoline whose user data holds the function's registry reference. The API the
 * scripts see (the global table `polis`) is implemented in lua_api.c and documented in
 * docs/lua-api.md; this file owns the states, the boundary between engine and Lua, the
 * trampolines and the sandbox.
 *
 * Safety rules this file keeps (and lua_api.c with it):
 *   - Every call into Lua from the engine goes through run_protected(): a light C function
 *     run by lua_pcall with a message handler, so allocation failures and script errors
 *     unwind to that one boundary and a Lua longjmp never crosses an engine frame.
 *   - Errors are raised (lua_error) only from lua_CFunctions, after every engine call they
 *     made has returned; engine callbacks into Lua nest their own lua_pcall.
 *   - Scripts allocate through the env allocator, under one byte budget shared by all of
 *     the env's Lua states, and run under a per-callback instruction budget.
 *   - The sandbox is the state's global table itself: only the safe libraries are opened
 *     and the dangerous entries are removed or replaced before the chunk runs.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/internal.h"

/* The count hook of the instruction budget fires at least this often, so coroutines, which
 * keep their own counters, cannot run far past the budget they share with the main thread;
 * it is also how often a coroutine checks the time limit's watchdog. */
#define BUDGET_SLICE 1000
/* Bytes a script allocates per unit of work charged to its budget. */
#define ALLOC_BYTES_PER_UNIT 64

/* The arguments of one protected call into Lua. */
typedef struct call_args {
    const polis__lua_cb *cb;
    int32_t agent;
    void *dst;
    float *rewards;
    const polis_event *ev;
    const char *text; /* the chunk */
    size_t len;
    int index;         /* on_start: position in the list */
    polis_text *out;   /* renderers */
    const char *input; /* action parsers */
    /* results */
    polis_status status;
    bool legal;
    int32_t action; /* action parsers: -1 = not mine */
    /* macros: the refusal of a start, or the state and reason next returned */
    bool refused;
    polis_plan_state plan_state;
    char reason[POLIS_ERRMAX];
} call_args;

/* ---- limits ------------------------------------------------------------------------------- */

/* Every callback runs under two limits, started afresh by the outermost one: a budget of VM
 * instructions (deterministic: a script that exceeds it does so at the same instruction on
 * every run) and a wall-clock limit (a backstop that only aborts: nothing a script computes
 * can see the clock).
 *
 * The budget is a count hook: the Lua 5.4 VM then stops before every instruction (however
 * large the count), about as much work again as the instruction, so it is off by default.
 * The time limit costs nothing while a callback stays inside it: a watchdog thread
 * (lua_watch.c) notices the overrun and arms a count hook of 1 then. Library functions that
 * do more than an instruction's work (lua_lib.c) and allocations charge their work, so no
 * single C call or cheap loop over such calls escapes either limit. Coroutines get a count
 * hook of BUDGET_SLICE when created: their instructions are checked every slice. */

/* Charges units of work; true when a limit is (now or already) hit. */
static bool limits_spent(polis__lua_script *s, int64_t units)
{
    if (s->exhausted) return true;
    if (s->env->scn.lua_instruction_limit > 0) {
        s->budget_left -= units;
        if (s->budget_left <= 0) {
            s->exhausted = true;
            return true;
        }
    }
    if (s->watch && polis__lua_watch_overrun(s->watch)) {
        s->exhausted = s->timed_out = true;
        return true;
    }
    return false;
}

static int next_slice(const polis__lua_script *s)
{
    return s->budget_left < BUDGET_SLICE ? (int)s->budget_left : BUDGET_SLICE;
}

/* Once a limit is hit the hook fires on every instruction, so a script that catches the
 * error (pcall, xpcall, coroutine.resume) meets it again at once and it reaches the engine.
 * Coroutines other than L notice at the end of their slice. */
static void fire_every_instruction(polis__lua_script *s, lua_State *L)
{
    if (L) lua_sethook(L, polis__lua_count_hook, LUA_MASKCOUNT, 1);
    if (L != s->L) lua_sethook(s->L, polis__lua_count_hook, LUA_MASKCOUNT, 1);
}

/* "file:line" of the innermost running Lua function, or "" when none runs. */
static void locate(lua_State *L, char *out, size_t cap)
{
    lua_Debug ar;
    out[0] = '\0';
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        snprintf(out, cap, "%s:%d", ar.short_src, ar.currentline);
        return;
    }
}

static int raise_limit(lua_State *L, polis__lua_script *s)
{
    char where[96];
    locate(L, where, sizeof where);
    if (s->timed_out)
        lua_pushfstring(L, "%s: time limit of %I ms exceeded", where[0] ? where : s->display,
                        (lua_Integer)s->env->scn.lua_time_limit_ms);
    else
        lua_pushfstring(L, "%s: instruction limit of %I exceeded", where[0] ? where : s->display,
                        (lua_Integer)s->env->scn.lua_instruction_limit);
    return lua_error(L);
}

/* lua_sethook walks every frame of the running thread's call stack, so the hook re-arms
 * itself only when the slice changes (once, as the budget runs out): Lua reloads the count
 * after every firing, and a script's cost no longer grows with its call depth. Without the
 * budget the main thread has a hook only when the watchdog's signal armed it (or a late
 * signal of a callback that already ended): not spent, it removes itself. */
void polis__lua_count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    polis__lua_script *s = polis__lua_script_of(L);
    if (!limits_spent(s, lua_gethookcount(L))) {
        if (L == s->L && s->env->scn.lua_instruction_limit <= 0) {
            lua_sethook(L, NULL, 0, 0);
            return;
        }
        int slice = next_slice(s);
        if (slice != lua_gethookcount(L))
            lua_sethook(L, polis__lua_count_hook, LUA_MASKCOUNT, slice);
        return;
    }
    fire_every_instruction(s, L);
    raise_limit(L, s);
}

void polis__lua_charge(lua_State *L, int64_t units)
{
    polis__lua_script *s = polis__lua_script_of(L);
    if (units < 0) units = INT64_MAX;
    if (!limits_spent(s, units)) return;
    fire_every_instruction(s, L);
    raise_limit(L, s);
}

/* A new coroutine has its own hook settings: it inherits the budget's hook from the thread
 * that creates it; without the budget it gets a slice hook for the watchdog to be seen. */
static void arm_coroutine(lua_State *co)
{
    polis__lua_script *s = polis__lua_script_of(co);
    if (!lua_gethook(co) && s->env->scn.lua_time_limit_ms > 0)
        lua_sethook(co, polis__lua_count_hook, LUA_MASKCOUNT, BUDGET_SLICE);
}

static void budget_start(polis__lua_script *s)
{
    int64_t limit = s->env->scn.lua_instruction_limit;
    int64_t ms = s->env->scn.lua_time_limit_ms;
    s->exhausted = s->timed_out = false;
    s->budget_left = limit > 0 ? limit : INT64_MAX;
    if (limit > 0)
        lua_sethook(s->L, polis__lua_count_hook, LUA_MASKCOUNT, next_slice(s));
    else if (lua_gethook(s->L)) /* left by a limit hit in the last callback */
        lua_sethook(s->L, NULL, 0, 0);
    if (ms > 0) s->watch = polis__lua_watch_enter(limit > 0 ? NULL : s->L, ms, &s->watch_prev);
}

/* The outermost callback returned: the watchdog stops watching it. */
static void budget_end(polis__lua_script *s)
{
    if (!s->watch) return;
    polis__lua_watch_exit(s->watch, s->watch_prev);
    s->watch = NULL;
}

/* ---- memory ------------------------------------------------------------------------------ */

/* lua_Alloc over the env allocator. The cap counts every byte of every Lua state of the env
 * and the engine memory the scripts asked for; a refused allocation makes Lua collect
 * garbage and retry, then raise a memory error. While a callback runs, what it allocates is
 * charged to its limits: a limit hit here raises at the next instruction. */
static void *script_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    polis__lua_script *s = ud;
    polis_env *env = s->env;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        if (ptr) {
            polis__free(env, ptr, osize);
            env->lua->memory_used -= (int64_t)osize;
        }
        return NULL;
    }
    int64_t limit = env->scn.lua_memory_limit;
    int64_t used = env->lua->memory_used + env->lua->engine_bytes;
    if (limit > 0 && nsize > old &&
        (nsize - old > (size_t)INT64_MAX || used > limit - (int64_t)(nsize - old))) {
        /* Lua does not run the message handler for memory errors: keep the place here
         * (reading the stack allocates nothing). */
        if (!s->limit_hit && s->L && s->depth > 0)
            locate(s->L, s->limit_where, sizeof s->limit_where);
        s->limit_hit = true;
        return NULL;
    }
    void *p = polis__realloc(env, ptr, old, nsize);
    if (!p) return NULL;
    env->lua->memory_used += (int64_t)nsize - (int64_t)old;
    if (nsize > old && s->depth > 0 && s->L && !s->exhausted &&
        limits_spent(s, (int64_t)((nsize - old) / ALLOC_BYTES_PER_UNIT)))
        fire_every_instruction(s, NULL);
    return p;
}

/* ---- the protected boundary -------------------------------------------------------------- */

static bool starts_with_place(const char *msg, const char *src)
{
    size_t n = strlen(src);
    return strncmp(msg, src, n) == 0 && msg[n] == ':';
}

/* Message handler: makes the error a string that starts with "file:line:" of the innermost
 * Lua function (Lua's own errors already do; error(msg, 0), non-string error objects and
 * errors raised from C arrive without one). */
static int message_handler(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *msg = NULL;
    if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) {
        msg = lua_tostring(L, 1);
    } else if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
        msg = lua_tostring(L, -1);
    } else {
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        if (!starts_with_place(msg, ar.short_src))
            msg = lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
        return 1;
    }
    if (!starts_with_place(msg, s->display)) lua_pushfstring(L, "%s: %s", s->display, msg);
    return 1;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return m <= n && strcmp(s + n - m, suffix) == 0;
}

static polis_status report(polis__lua_script *s, int rc)
{
    lua_State *L = s->L;
    polis_status st = POLIS_ERR_SCRIPT;
    bool placed = false;
    char msg[POLIS_ERRMAX];
    const char *m = rc == LUA_ERRMEM ? NULL : lua_tostring(L, -1);
    /* A memory error that left a coroutine arrives as an ordinary error with Lua's message. */
    bool mem = rc == LUA_ERRMEM || (s->limit_hit && m && ends_with(m, "not enough memory"));
    if (mem) {
        if (s->limit_hit) {
            snprintf(msg, sizeof msg,
                     "%s: memory limit of %lld bytes exceeded (lua_memory_limit, shared by "
                     "the env's scripts)",
                     s->limit_where[0] ? s->limit_where : s->display,
                     (long long)s->env->scn.lua_memory_limit);
        } else {
            snprintf(msg, sizeof msg, "%s: out of memory", s->display);
            st = POLIS_ERR_NOMEM;
        }
    } else {
        if (!m) m = "(error without a message)";
        if (rc == LUA_ERRERR)
            snprintf(msg, sizeof msg, "%s: error in the error handler: %s", s->display, m);
        else
            snprintf(msg, sizeof msg, "%s", m);
        if (s->host_status != POLIS_OK && ends_with(msg, s->host_msg)) {
            if (s->host_status == POLIS_ERR_NOMEM || s->host_status == POLIS_ERR_CONFIG ||
                s->host_status == POLIS_ERR_LIMIT)
                st = s->host_status;
            placed = s->host_placed;
        }
    }
    s->h->error(s->ctx, "%s", msg);
    /* The message already names the callback and tick where the failure happened. */
    if (placed) s->env->err_placed = true;
    return st;
}

/* Prepares a protected call on the script's main thread with room for `slots` values:
 * resets the per-callback state and starts the limits when this is the outermost call.
 * False (and *st set) when the stack cannot grow. */
static bool protect_enter(polis__lua_script *s, int slots, polis_status *st)
{
    lua_State *L = s->L;
    if (s->depth == 0) {
        s->limit_hit = false;
        s->limit_where[0] = '\0';
        s->host_status = POLIS_OK;
        s->host_msg[0] = '\0';
    }
    /* The C-call limit stops nesting long before the stack limit, so a stack that cannot
     * grow means the allocator said no. */
    if (!lua_checkstack(L, slots)) {
        if (s->limit_hit) {
            s->h->error(s->ctx,
                        "%s: memory limit of %lld bytes exceeded (lua_memory_limit, "
                        "shared by the env's scripts)",
                        s->limit_where[0] ? s->limit_where : s->display,
                        (long long)s->env->scn.lua_memory_limit);
            *st = POLIS_ERR_SCRIPT;
            return false;
        }
        s->h->error(s->ctx, "%s: out of memory", s->display);
        *st = POLIS_ERR_NOMEM;
        return false;
    }
    if (s->depth == 0) budget_start(s);
    return true;
}

/* Calls what the caller pushed above `base` (the message handler, then the function and
 * its nargs arguments) under lua_pcall, and reports a failure. */
static polis_status protect_call(polis__lua_script *s, int base, int nargs)
{
    lua_State *L = s->L;
    s->depth++;
    int rc = lua_pcall(L, nargs, 0, base + 1);
    if (--s->depth == 0) budget_end(s);
    polis_status st = rc == LUA_OK ? POLIS_OK : report(s, rc);
    lua_settop(L, base);
    return st;
}

/* Runs body(args) on the script's main thread under lua_pcall. Nothing is pushed or
 * allocated before the pcall, so even a memory error is caught. */
static polis_status run_protected(polis__lua_script *s, lua_CFunction body, call_args *args)
{
    lua_State *L = s->L;
    polis_status st;
    if (!protect_enter(s, 3, &st)) return st;
    int base = lua_gettop(L);
    lua_pushcfunction(L, message_handler);
    lua_pushcfunction(L, body);
    lua_pushlightuserdata(L, args);
    return protect_call(s, base, 1);
}

/* The callbacks whose Lua function returns nothing the engine reads (hooks, observation
 * writers) call it directly under lua_pcall, without a C body in between: one frame less
 * per call. What is pushed before the pcall allocates nothing (the stack was grown by
 * protect_enter; integers, light userdata and registry reads do not allocate). With
 * agent < 0 the function gets no argument; with a view (its registry reference, or
 * LUA_NOREF), the agent and the view. */
static polis_status run_direct(polis__lua_script *s, int fn, int32_t agent, int view)
{
    lua_State *L = s->L;
    polis_status st;
    if (!protect_enter(s, 4, &st)) return st;
    int base = lua_gettop(L);
    int nargs = 0;
    lua_pushcfunction(L, message_handler);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fn);
    if (agent >= 0) {
        lua_pushinteger(L, agent);
        nargs++;
    }
    if (view != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, view);
        nargs++;
    }
    return protect_call(s, base, nargs);
}

/* Room for n values on the script's main thread for the host's own raw reads and writes
 * (lua_checkstack raises nothing); false, with the error set, when the stack cannot grow. */
static bool stack_room(polis__lua_script *s, int n)
{
    if (lua_checkstack(s->L, n)) return true;
    s->h->error(s->ctx, "%s: out of memory", s->display);
    return false;
}

/* The message drops the "<script>: " prefix the host put on it (the final report adds it
 * once). */
int polis__lua_raise_host(lua_State *L, polis__lua_script *s, polis_status st)
{
    const char *m = s->env->err;
    size_t n = strlen(s->ctx->name);
    if (strncmp(m, s->ctx->name, n) == 0 && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
    if (!*m) m = polis_status_str(st);
    s->host_status = st;
    s->host_placed = s->env->err_placed;
    snprintf(s->host_msg, sizeof s->host_msg, "%s", m);
    lua_pushstring(L, s->host_msg);
    return lua_error(L);
}

/* A callback that cannot return a status (legality, observation writers) failed: keep the
 * message and let the engine fail the step once the callback returns. */
static void defer_failure(polis__lua_script *s, polis_status st)
{
    if (s->env->cb_status == POLIS_OK) s->env->cb_status = st;
}

/* Message for a callback that returned the wrong thing, placed at the function's
 * definition (the call itself has no line once it returned). fn_idx holds the function. */
static int bad_return(lua_State *L, int fn_idx, const char *what, const char *expected, int got_idx)
{
    lua_Debug ar;
    const char *got = luaL_typename(L, got_idx);
    lua_pushvalue(L, fn_idx);
    if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
        return luaL_error(L, "%s:%d: %s (the function defined here) returned %s, expected %s",
                          ar.short_src, ar.linedefined, what, got, expected);
    return luaL_error(L, "%s returned %s, expected %s", what, got, expected);
}

/* ---- trampolines: engine -> Lua ------------------------------------------------------------ */

polis_status polis__lua_tramp_hook(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    const polis__lua_cb *cb = ud;
    return run_direct(cb->s, cb->fn, -1, LUA_NOREF);
}

/* Raises the error of an action handler that returned something else than nothing, true or
 * false: 1 the handler, 2 what it returned, 3 the polis__lua_cb. */
static int body_bad_action(lua_State *L)
{
    const polis__lua_cb *cb = lua_touserdata(L, 3);
    const char *what = lua_pushfstring(L, "the handler of action '%s'", cb->name);
    return bad_return(L, 1, what, "nothing, true or false", 2);
}

/* into[agent] = value where setting the key may grow the table. */
static int body_set_into(lua_State *L)
{
    const call_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn);
    lua_pushinteger(L, (lua_Integer)a->cb->into_value);
    lua_rawseti(L, -2, a->agent);
    return 0;
}

/* polis.action{into = t, value = v}: t[agent] = v, without running any Lua. Replacing a
 * value the table holds neither allocates nor raises; a key the table lacks may grow it, so
 * that set runs protected. */
static polis_status set_into(const polis__lua_cb *cb, int32_t agent)
{
    polis__lua_script *s = cb->s;
    lua_State *L = s->L;
    if (!stack_room(s, 3)) return POLIS_ERR_NOMEM;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn);
    if (lua_rawgeti(L, -1, agent) != LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushinteger(L, (lua_Integer)cb->into_value);
        lua_rawseti(L, -2, agent);
        lua_settop(L, top);
        return POLIS_OK;
    }
    lua_settop(L, top);
    call_args a = {.cb = cb, .agent = agent};
    return run_protected(s, body_set_into, &a);
}

/* The handler runs directly under lua_pcall (as hooks do); only a wrong return value takes
 * a second protected call, which raises the error naming the handler's definition. */
polis_status polis__lua_tramp_action(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx, (void)arg;
    const polis__lua_cb *cb = ud;
    polis__lua_script *s = cb->s;
    if (cb->source == POLIS__LUA_TABLE) return set_into(cb, agent);
    lua_State *L = s->L;
    polis_status st;
    if (!protect_enter(s, 6, &st)) return st;
    int base = lua_gettop(L);
    lua_pushcfunction(L, message_handler);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn);
    lua_pushinteger(L, agent);
    s->depth++;
    int rc = lua_pcall(L, 1, 1, base + 1);
    if (rc == LUA_OK && !lua_isnil(L, -1) && !lua_isboolean(L, -1)) {
        lua_pushcfunction(L, body_bad_action);
        lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn);
        lua_pushvalue(L, base + 2);
        lua_pushlightuserdata(L, (void *)cb);
        rc = lua_pcall(L, 3, 0, base + 1);
    }
    if (--s->depth == 0) budget_end(s);
    st = rc == LUA_OK ? POLIS_OK : report(s, rc);
    if (st == POLIS_OK && lua_isboolean(L, -1) && !lua_toboolean(L, -1)) st = POLIS_ERR_ACTION;
    lua_settop(L, base);
    return st;
}

static int body_legal(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->legal);
    lua_pushvalue(L, -1);
    lua_pushinteger(L, a->agent);
    lua_call(L, 1, 1);
    if (!lua_isboolean(L, -1)) {
        const char *what = lua_pushfstring(L, "the legality function of action '%s'", a->cb->name);
        return bad_return(L, 2, what, "true or false", -2);
    }
    a->legal = lua_toboolean(L, -1);
    return 0;
}

bool polis__lua_tramp_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx, (void)arg;
    call_args a = {.cb = ud, .agent = agent};
    /* After a failure the step fails anyway; keep the first message. */
    if (a.cb->s->env->cb_status != POLIS_OK) return false;
    polis_status st = run_protected(a.cb->s, body_legal, &a);
    if (st != POLIS_OK) {
        defer_failure(a.cb->s, st);
        return false;
    }
    return a.legal;
}

static int body_reward(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    int32_t n = s->h->n_agents(s->ctx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    for (int32_t agent = 0; agent < n; agent++) {
        lua_pushvalue(L, 2);
        lua_pushinteger(L, agent);
        lua_call(L, 1, 1);
        int isnum = lua_type(L, -1) == LUA_TNUMBER;
        double v = isnum ? lua_tonumber(L, -1) : 0.0;
        if (!isnum) {
            const char *what =
                lua_pushfstring(L, "reward '%s' for agent %d", a->cb->name, (int)agent);
            return bad_return(L, 2, what, "a number", -2);
        }
        if (!isfinite(v) || fabs(v) > FLT_MAX)
            return luaL_error(L, "reward '%s' for agent %d: %f is not a finite 32-bit float",
                              a->cb->name, (int)agent, v);
        a->rewards[agent] = (float)v;
        lua_pop(L, 1);
    }
    return 0;
}

/* The place of a table the host reads (where it was registered), for its errors. */
static const char *table_place(const polis__lua_cb *cb)
{
    return cb->where ? cb->where : cb->s->display;
}

/* polis.reward(name, t): t[agent] for every agent, read without running any Lua (raw reads
 * neither raise nor allocate), so no protected call. */
static polis_status read_reward_table(const polis__lua_cb *cb, float *out)
{
    polis__lua_script *s = cb->s;
    lua_State *L = s->L;
    if (!stack_room(s, 2)) return POLIS_ERR_NOMEM;
    int32_t n = s->h->n_agents(s->ctx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn);
    for (int32_t agent = 0; agent < n; agent++) {
        int t = lua_rawgeti(L, -1, agent);
        double v = t == LUA_TNUMBER ? lua_tonumber(L, -1) : 0.0;
        lua_pop(L, 1);
        if (t != LUA_TNUMBER) {
            lua_pop(L, 1);
            s->h->error(s->ctx,
                        "%s: reward '%s': the table's [%d] (agent %d) is %s, expected a number",
                        table_place(cb), cb->name, (int)agent, (int)agent, lua_typename(L, t));
            return POLIS_ERR_SCRIPT;
        }
        if (!isfinite(v) || fabs(v) > FLT_MAX) {
            lua_pop(L, 1);
            s->h->error(s->ctx,
                        "%s: reward '%s': the table's [%d] (agent %d) = " LUA_NUMBER_FMT
                        " is not a finite 32-bit float",
                        table_place(cb), cb->name, (int)agent, (int)agent, v);
            return POLIS_ERR_SCRIPT;
        }
        out[agent] = (float)v;
    }
    lua_pop(L, 1);
    return POLIS_OK;
}

polis_status polis__lua_tramp_reward(polis_ctx *ctx, void *ud, float *out)
{
    (void)ctx;
    call_args a = {.cb = ud, .rewards = out};
    if (a.cb->source == POLIS__LUA_TABLE) return read_reward_table(a.cb, out);
    return run_protected(a.cb->s, body_reward, &a);
}

static int body_render(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    lua_pushvalue(L, 2);
    lua_pushinteger(L, a->agent);
    lua_call(L, 1, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
        const char *what =
            lua_pushfstring(L, "renderer '%s' for agent %d", a->cb->name, (int)a->agent);
        return bad_return(L, 2, what, "a string", -2);
    }
    size_t n;
    const char *text = lua_tolstring(L, -1, &n);
    s->h->text_append(a->out, text, n);
    return 0;
}

polis_status polis__lua_tramp_render(polis_ctx *ctx, void *ud, int32_t agent, polis_text *out)
{
    (void)ctx;
    call_args a = {.cb = ud, .agent = agent, .out = out};
    return run_protected(a.cb->s, body_render, &a);
}

/* A Lua parser returns an action id, an action name, or nil for "not mine"; raising an
 * error means "mine, but malformed". */
static int body_parse(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    lua_pushvalue(L, 2);
    lua_pushinteger(L, a->agent);
    lua_pushstring(L, a->input);
    lua_call(L, 2, 1);
    int t = lua_type(L, -1);
    if (t == LUA_TNIL) return 0;
    if (t == LUA_TSTRING) {
        const char *name = lua_tostring(L, -1);
        int32_t id = s->h->action_find(s->ctx, name);
        if (id < 0) return luaL_error(L, "action parser: no action named '%s'", name);
        a->action = id;
        return 0;
    }
    int isint = 0;
    lua_Integer id = t == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
    if (!isint) {
        const char *what = "action parser";
        return bad_return(L, 2, what, "an action id, an action name or nil", -1);
    }
    int32_t n = s->h->io(s->ctx)->n_actions;
    if (id < 0 || id >= n)
        return luaL_error(L, "action parser: action id %I is outside [0, %d)", id, (int)n);
    a->action = (int32_t)id;
    return 0;
}

polis_status polis__lua_tramp_parse(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                    int32_t *out_action)
{
    (void)ctx;
    call_args a = {.cb = ud, .agent = agent, .input = input, .action = -1};
    polis_status st = run_protected(a.cb->s, body_parse, &a);
    if (st != POLIS_OK) return st;
    if (a.action < 0) return POLIS_ERR_ACTION;
    *out_action = a.action;
    return POLIS_OK;
}

/* Runs body the way policies and macros run: math.random and polis.random draw from the
 * policy generator meanwhile; the previous setting comes back after, as calls can nest. */
static polis_status run_as_policy(polis__lua_script *s, lua_CFunction body, call_args *a)
{
    bool was = s->in_policy;
    s->in_policy = true;
    polis_status st = run_protected(s, body, a);
    s->in_policy = was;
    return st;
}

/* A Lua policy returns an action id or an action name. While it runs, math.random and
 * polis.random draw from the policy generator, so a policy never moves the env's stream. */
static int body_policy(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    lua_pushvalue(L, 2);
    lua_pushinteger(L, a->agent);
    lua_call(L, 1, 1);
    int t = lua_type(L, -1);
    if (t == LUA_TSTRING) {
        const char *name = lua_tostring(L, -1);
        int32_t id = s->h->action_find(s->ctx, name);
        if (id < 0) {
            lua_Debug ar;
            lua_pushvalue(L, 2);
            if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
                return luaL_error(L,
                                  "%s:%d: policy '%s' (the function defined here) returned "
                                  "'%s', which is not an action name",
                                  ar.short_src, ar.linedefined, a->cb->name, name);
            return luaL_error(L, "policy '%s' returned '%s', which is not an action name",
                              a->cb->name, name);
        }
        a->action = id;
        return 0;
    }
    int isint = 0;
    lua_Integer id = t == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
    if (!isint) {
        const char *what =
            lua_pushfstring(L, "policy '%s' for agent %d", a->cb->name, (int)a->agent);
        return bad_return(L, 2, what, "an action id or an action name", -2);
    }
    a->action = id < INT32_MIN || id > INT32_MAX ? -1 : (int32_t)id;
    return 0;
}

polis_status polis__lua_tramp_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out_action)
{
    (void)ctx;
    call_args a = {.cb = ud, .agent = agent, .action = -1};
    polis__lua_script *s = a.cb->s;
    polis_status st = run_as_policy(s, body_policy, &a);
    if (st == POLIS_OK) *out_action = a.action;
    return st;
}

/* A polis.look scene function gets the script's writer, pointed at the scene for the call,
 * and whether the kept layers were cleared for it (ABI 1.6). */
static int body_scene(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->scene_writer);
    polis__lua_scene_writer *w = lua_touserdata(L, -1);
    lua_pushboolean(L, a->cb->s->h->scene_fresh(a->cb->s->ctx, w->scene));
    lua_call(L, 2, 0);
    return 0;
}

polis_status polis__lua_tramp_scene(polis_ctx *ctx, void *ud, polis_scene *scene)
{
    (void)ctx;
    call_args a = {.cb = ud};
    polis__lua_script *s = a.cb->s;
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, a.cb->scene_writer);
    polis__lua_scene_writer *w = lua_touserdata(s->L, -1);
    lua_pop(s->L, 1);
    polis__lua_scene_writer *saved = s->writer_now;
    w->scene = scene;
    s->writer_now = w;
    polis_status st = run_protected(s, body_scene, &a);
    s->writer_now = saved;
    w->scene = NULL;
    return st;
}

/* A Lua macro's start returns the plan (any value but nil or false, kept for next), or nil
 * (or false) and a reason to refuse the arguments. */
static int body_macro_start(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn); /* 2 */
    lua_pushinteger(L, a->agent);
    lua_pushstring(L, a->input);
    lua_call(L, 2, 2);
    if (!lua_toboolean(L, -2)) {
        const char *why = lua_tostring(L, -1);
        a->refused = true;
        snprintf(a->reason, sizeof a->reason, "%s", why ? why : "refused the arguments");
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->macro_plans);
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, (lua_Integer)a->agent + 1);
    return 0;
}

polis_status polis__lua_tramp_macro_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                          void *plan)
{
    (void)plan;
    call_args a = {.cb = ud, .agent = agent, .input = args};
    polis__lua_script *s = a.cb->s;
    polis_status st = run_as_policy(s, body_macro_start, &a);
    if (st == POLIS_OK && a.refused) {
        s->h->error(ctx, "%s", a.reason);
        return POLIS_ERR_ACTION;
    }
    return st;
}

/* next(agent, plan) returns "running" and an action id or name, or "done" / "impossible"
 * and a reason. */
static int body_macro_next(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->macro_next); /* 2 */
    lua_pushvalue(L, 2);
    lua_pushinteger(L, a->agent);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->macro_plans);
    lua_rawgeti(L, -1, (lua_Integer)a->agent + 1);
    lua_remove(L, -2);
    lua_call(L, 2, 2); /* 3: state, 4: action or reason */
    const char *state = lua_type(L, 3) == LUA_TSTRING ? lua_tostring(L, 3) : NULL;
    if (state && (strcmp(state, "done") == 0 || strcmp(state, "impossible") == 0)) {
        a->plan_state = state[0] == 'd' ? POLIS_PLAN_DONE : POLIS_PLAN_IMPOSSIBLE;
        const char *why = lua_type(L, 4) == LUA_TSTRING ? lua_tostring(L, 4) : "";
        snprintf(a->reason, sizeof a->reason, "%s", why);
        return 0;
    }
    if (state && strcmp(state, "running") != 0)
        return luaL_error(L,
                          "macro %s next for agent %d returned '%s', expected 'running', "
                          "'done' or 'impossible'",
                          a->cb->name, (int)a->agent, state);
    if (!state) {
        const char *what =
            lua_pushfstring(L, "macro %s next for agent %d", a->cb->name, (int)a->agent);
        return bad_return(L, 2, what, "'running', 'done' or 'impossible'", 3);
    }
    a->plan_state = POLIS_PLAN_RUNNING;
    if (lua_type(L, 4) == LUA_TSTRING) {
        const char *name = lua_tostring(L, 4);
        int32_t id = s->h->action_find(s->ctx, name);
        if (id < 0)
            return luaL_error(L, "macro %s returned 'running', '%s', which is not an action name",
                              a->cb->name, name);
        a->action = id;
        return 0;
    }
    int isint = 0;
    lua_Integer id = lua_type(L, 4) == LUA_TNUMBER ? lua_tointegerx(L, 4, &isint) : 0;
    if (!isint) {
        const char *what =
            lua_pushfstring(L, "macro %s next for agent %d (running)", a->cb->name, (int)a->agent);
        return bad_return(L, 2, what, "an action id or an action name after 'running'", 4);
    }
    a->action = id < INT32_MIN || id > INT32_MAX ? -1 : (int32_t)id;
    return 0;
}

polis_status polis__lua_tramp_macro_next(polis_ctx *ctx, void *ud, int32_t agent, void *plan,
                                         polis_plan_state *state, int32_t *out_action, char *why,
                                         size_t cap)
{
    (void)ctx, (void)plan;
    call_args a = {.cb = ud, .agent = agent, .action = -1};
    polis__lua_script *s = a.cb->s;
    polis_status st = run_as_policy(s, body_macro_next, &a);
    if (st != POLIS_OK) return st;
    *state = a.plan_state;
    if (a.plan_state == POLIS_PLAN_RUNNING)
        *out_action = a.action;
    else
        snprintf(why, cap, "%s", a.reason);
    return POLIS_OK;
}

static int body_transform(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    s->rewards->p = a->rewards;
    s->rewards->n = s->h->n_agents(s->ctx);
    s->rewards->cb = a->cb;
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn);
    lua_pushlightuserdata(L, s->rewards);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_call(L, 1, 0);
    return 0;
}

polis_status polis__lua_tramp_transform(polis_ctx *ctx, void *ud, float *rewards)
{
    (void)ctx;
    call_args a = {.cb = ud, .rewards = rewards};
    polis__lua_script *s = a.cb->s;
    polis__lua_reward_view saved = *s->rewards;
    polis_status st = run_protected(s, body_transform, &a);
    *s->rewards = saved;
    return st;
}

static void push_field(lua_State *L, polis_ftype t, const uint8_t *p)
{
    switch (t) {
    case POLIS_FIELD_I32: {
        int32_t v;
        memcpy(&v, p, sizeof v);
        lua_pushinteger(L, v);
        return;
    }
    case POLIS_FIELD_I64: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        lua_pushinteger(L, (lua_Integer)v);
        return;
    }
    case POLIS_FIELD_F32: {
        float v;
        memcpy(&v, p, sizeof v);
        lua_pushnumber(L, v);
        return;
    }
    case POLIS_FIELD_F64: {
        double v;
        memcpy(&v, p, sizeof v);
        lua_pushnumber(L, v);
        return;
    }
    }
    lua_pushnil(L);
}

static int body_event(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = a->cb->s;
    const polis_event *ev = a->ev;
    int32_t nf = polis_env_event_n_fields(s->env, ev->type);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->evtables_ref); /* 2 */
    if (lua_rawgeti(L, 2, (lua_Integer)ev->type + 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, nf + 3);
        lua_pushvalue(L, -1);
        lua_rawseti(L, 2, (lua_Integer)ev->type + 1);
    }
    const uint8_t *data = ev->data;
    for (int32_t i = 0; i < nf; i++) {
        const char *name;
        polis_ftype t;
        size_t off;
        if (polis_env_event_field(s->env, ev->type, i, &name, &t, &off) != POLIS_OK) continue;
        push_field(L, t, data + off);
        lua_setfield(L, -2, name);
    }
    lua_pushstring(L, polis_env_event_name(s->env, ev->type));
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)ev->tick);
    lua_setfield(L, -2, "tick");
    lua_pushinteger(L, (lua_Integer)ev->seq);
    lua_setfield(L, -2, "seq");
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->cb->fn);
    lua_insert(L, -2);
    lua_call(L, 1, 0);
    return 0;
}

polis_status polis__lua_tramp_event(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    (void)ctx;
    call_args a = {.cb = ud, .ev = ev};
    return run_protected(a.cb->s, body_event, &a);
}

/* polis.observation{values = t}: t[agent] is nil (the field stays 0), a number (a field of
 * one element) or an array of the field's elements; polis.shared_observation{values = t}
 * (agent -1): t is the array. Read without running any Lua. */
static void read_obs_table(const polis__lua_cb *cb, int32_t agent, void *dst)
{
    polis__lua_script *s = cb->s;
    lua_State *L = s->L;
    if (!stack_room(s, 3)) {
        defer_failure(s, POLIS_ERR_NOMEM);
        return;
    }
    int top = lua_gettop(L);
    char why[160];
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn);
    int t = agent >= 0 ? lua_rawgeti(L, -1, agent) : LUA_TTABLE;
    if (t == LUA_TNUMBER && cb->count == 1) {
        if (!polis__lua_obs_store(L, -1, cb->dtype, dst, 0, why, sizeof why)) {
            s->h->error(s->ctx, "%s: observation '%s': the table's [%d] (agent %d): %s",
                        table_place(cb), cb->name, (int)agent, (int)agent, why);
            defer_failure(s, POLIS_ERR_SCRIPT);
        }
    } else if (t == LUA_TTABLE) {
        for (size_t i = 0; i < cb->count; i++) {
            bool ok = lua_rawgeti(L, -1, (lua_Integer)i + 1) == LUA_TNIL || /* stays 0 */
                      polis__lua_obs_store(L, -1, cb->dtype, dst, i, why, sizeof why);
            lua_pop(L, 1);
            if (ok) continue;
            if (agent >= 0)
                s->h->error(s->ctx, "%s: observation '%s': the table's [%d][%d] (agent %d): %s",
                            table_place(cb), cb->name, (int)agent, (int)i + 1, (int)agent, why);
            else
                s->h->error(s->ctx, "%s: shared observation '%s': the table's [%d]: %s",
                            table_place(cb), cb->name, (int)i + 1, why);
            defer_failure(s, POLIS_ERR_SCRIPT);
            break;
        }
    } else if (t != LUA_TNIL) {
        if (cb->count == 1)
            s->h->error(s->ctx,
                        "%s: observation '%s': the table's [%d] (agent %d) is %s, expected a "
                        "number or nil",
                        table_place(cb), cb->name, (int)agent, (int)agent, lua_typename(L, t));
        else
            s->h->error(s->ctx,
                        "%s: observation '%s': the table's [%d] (agent %d) is %s, expected an "
                        "array of %d numbers or nil",
                        table_place(cb), cb->name, (int)agent, (int)agent, lua_typename(L, t),
                        (int)cb->count);
        defer_failure(s, POLIS_ERR_SCRIPT);
    }
    lua_settop(L, top);
}

void polis__lua_tramp_obs(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)ctx;
    const polis__lua_cb *cb = ud;
    polis__lua_script *s = cb->s;
    size_t nbytes = cb->count * polis_dtype_size(cb->dtype);
    memset(dst, 0, nbytes);
    if (cb->source == POLIS__LUA_WRITE_ALL && agent == 0 && s->env->cb_status == POLIS_OK) {
        /* The kernel writes a field for agents 0, 1, ... in turn (env.c,
         * write_observations): agent 0's call runs write_all for every agent, the others
         * copy their slice of what it wrote. */
        memset(cb->stage, 0, cb->stage_bytes);
        polis__lua_obs_view saved = *s->obs;
        *s->obs = (polis__lua_obs_view){.p = cb->stage,
                                        .count = cb->stage_bytes / polis_dtype_size(cb->dtype),
                                        .stride = cb->count,
                                        .dtype = cb->dtype,
                                        .cb = cb,
                                        .agent = 0};
        polis_status st = run_direct(s, cb->fn, -1, s->obs_ref);
        *s->obs = saved;
        if (st != POLIS_OK) defer_failure(s, st);
    }
    if (s->env->cb_status != POLIS_OK) return;
    switch (cb->source) {
    case POLIS__LUA_WRITE_ALL:
        memcpy(dst, (const uint8_t *)cb->stage + (size_t)agent * nbytes, nbytes);
        return;
    case POLIS__LUA_TABLE: read_obs_table(cb, agent, dst); return;
    case POLIS__LUA_FUNCTION: break;
    }
    polis__lua_obs_view saved = *s->obs;
    *s->obs = (polis__lua_obs_view){.p = dst,
                                    .count = cb->count,
                                    .stride = cb->count,
                                    .dtype = cb->dtype,
                                    .cb = cb,
                                    .agent = agent};
    polis_status st = run_direct(s, cb->fn, agent, s->obs_ref);
    *s->obs = saved;
    if (st != POLIS_OK) defer_failure(s, st);
}

/* ---- the sandbox -------------------------------------------------------------------------- */

/* load restricted to text chunks; the default environment is the sandbox's globals. */
static int l_load(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    if (n >= 2)
        lua_pushvalue(L, 2);
    else
        lua_pushnil(L);
    lua_pushliteral(L, "t");
    int nargs = 3;
    if (n >= 4) {
        lua_pushvalue(L, 4);
        nargs = 4;
    }
    lua_call(L, nargs, LUA_MULTRET);
    return lua_gettop(L) - n;
}

static int l_collectgarbage(lua_State *L)
{
    static const char *const allowed[] = {"collect", "count", "step", "isrunning", NULL};
    const char *opt = luaL_optstring(L, 1, "collect");
    for (int i = 0; allowed[i]; i++) {
        if (strcmp(opt, allowed[i]) == 0) {
            int n = lua_gettop(L);
            lua_pushvalue(L, lua_upvalueindex(1));
            lua_insert(L, 1);
            lua_call(L, n, LUA_MULTRET);
            return lua_gettop(L);
        }
    }
    return luaL_error(L,
                      "collectgarbage('%s') is not allowed in polis scripts (allowed: "
                      "collect, count, step, isrunning)",
                      opt);
}

/* Finalizers would run outside any callback's budget (at lua_close even with no budget at
 * all), so metatables with __gc are refused. */
static int l_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE && (lua_pushliteral(L, "__gc"), lua_rawget(L, 2)) != LUA_TNIL)
        return luaL_error(L, "setmetatable: __gc metamethods are not allowed in polis scripts");
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
}

/* xpcall's message handler runs inside the error it handles, and an error raised by the
 * count hook is raised with hooks off: a handler run then would be unbounded. Once a limit
 * is hit the script's handler is not run; the error passes through unchanged. */
static int xpcall_handler(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    if (s->exhausted) return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int xpcall_done(lua_State *L, int status, lua_KContext ctx)
{
    (void)status, (void)ctx;
    return lua_gettop(L);
}

static int l_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, xpcall_handler, 1);
    lua_replace(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_callk(L, n, LUA_MULTRET, 0, xpcall_done);
    return lua_gettop(L);
}

/* The function coroutine.wrap returns puts the place of its caller in front of a string
 * error, so an error in nested coroutines carried one "file:line:" per level. Called from
 * this C function, it finds no place to add: the error keeps the one of where it happened. */
static int wrapped_call(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, xpcall_done);
    return lua_gettop(L);
}

static int l_coroutine_wrap(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 1, 1);
    /* the function wrap returns keeps its coroutine as its upvalue */
    if (lua_getupvalue(L, -1, 1) && lua_type(L, -1) == LUA_TTHREAD)
        arm_coroutine(lua_tothread(L, -1));
    lua_pop(L, 1);
    lua_pushcclosure(L, wrapped_call, 1);
    return 1;
}

static int l_coroutine_create(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 1, 1);
    arm_coroutine(lua_tothread(L, -1));
    return 1;
}

/* Replaces global `name` by fn with the original as its upvalue. */
static void wrap_global(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_getglobal(L, name);
    lua_pushcclosure(L, fn, 1);
    lua_setglobal(L, name);
}

static int body_setup(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    wrap_global(L, "load", l_load);
    wrap_global(L, "collectgarbage", l_collectgarbage);
    wrap_global(L, "setmetatable", l_setmetatable);
    wrap_global(L, "xpcall", l_xpcall);
    lua_getglobal(L, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    lua_getglobal(L, LUA_COLIBNAME);
    lua_getfield(L, -1, "wrap");
    lua_pushcclosure(L, l_coroutine_wrap, 1);
    lua_setfield(L, -2, "wrap");
    lua_getfield(L, -1, "create");
    lua_pushcclosure(L, l_coroutine_create, 1);
    lua_setfield(L, -2, "create");
    lua_pop(L, 1);
    polis__lua_open_bounded(L);

    polis__lua_open_api(L);

    lua_newtable(L);
    s->start_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    s->evtables_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    polis__lua_open_views(L, s);
    return 0;
}

static int body_chunk(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = polis__lua_script_of(L);
    if (luaL_loadbufferx(L, a->text, a->len, s->chunkname, "t") != LUA_OK) return lua_error(L);
    lua_call(L, 0, 0);
    return 0;
}

static int body_start(lua_State *L)
{
    call_args *a = lua_touserdata(L, 1);
    polis__lua_script *s = polis__lua_script_of(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->start_ref);
    lua_rawgeti(L, -1, a->index);
    lua_call(L, 0, 0);
    return 0;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* The path as the scenario wrote it: config.c joined it to the scenario's directory. */
static const char *display_path(const polis_env *env, const char *path)
{
    const char *base = env->scn.base_dir;
    if (!base || !*base) return path;
    size_t n = strlen(base);
    while (n > 1 && base[n - 1] == '/') n--;
    if (strncmp(path, base, n) == 0 && path[n] == '/' && path[n + 1]) return path + n + 1;
    return path;
}

static polis_status script_load(polis_env *env, const polis__scn_script *scn)
{
    polis_ctx *ctx = polis__ctx_new(env, POLIS__CTX_SCRIPT, scn->name);
    if (!ctx) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory loading %s", scn->path);
    polis__lua_script *s = polis__alloc(env, sizeof *s);
    if (!s) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory loading %s", scn->path);
    ctx->script = s;
    ctx->scn_script = scn;
    s->env = env;
    s->ctx = ctx;
    s->h = polis__host();
    s->scn = scn;
    s->start_ref = s->evtables_ref = s->obs_ref = LUA_NOREF;
    s->display = polis__strdup(env, display_path(env, scn->path));
    size_t dn = s->display ? strlen(s->display) : 0;
    s->chunkname = s->display ? polis__alloc(env, dn + 2) : NULL;
    if (!s->chunkname)
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory loading %s", scn->path);
    s->chunkname[0] = '@';
    memcpy(s->chunkname + 1, s->display, dn + 1);

    char *text = NULL;
    size_t len = 0;
    polis_status st = polis__read_file(env, scn->path, &text, &len);
    if (st != POLIS_OK) {
        /* name the scenario entry that asked for the file, as plugin load errors do */
        char why[POLIS_ERRMAX];
        snprintf(why, sizeof why, "%s", env->err);
        return polis__fail(env, st, "%s: %s: %s", env->scn.source, scn->jpath, why);
    }
    s->L = lua_newstate(script_alloc, s);
    if (!s->L) {
        polis__free(env, text, len + 1);
        if (s->limit_hit)
            return polis__fail(env, POLIS_ERR_SCRIPT,
                               "%s: lua_memory_limit of %lld bytes is too small to create a Lua "
                               "state",
                               s->display, (long long)env->scn.lua_memory_limit);
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory creating the Lua state for %s",
                           s->display);
    }
    memcpy(lua_getextraspace(s->L), &s, sizeof s);
    s->loading = true;
    call_args a = {.text = text, .len = len};
    st = run_protected(s, body_setup, &a);
    if (st == POLIS_OK) st = run_protected(s, body_chunk, &a);
    polis__free(env, text, len + 1);
    if (st != POLIS_OK) return st;

    /* A script that declares no parameters still must not be given unknown ones. */
    if (scn->params && !s->params_called) {
        void *values = NULL;
        char jpath[256];
        snprintf(jpath, sizeof jpath, "%s.params", scn->jpath);
        if ((st = polis__params_build(env, NULL, 0, 0, scn->params, jpath, &values)) != POLIS_OK)
            return st;
    }
    return POLIS_OK;
}

static polis_status scripts_load(polis_env *env)
{
    if (env->scn.n_scripts == 0) return POLIS_OK;
    if (!(env->lua = polis__alloc(env, sizeof *env->lua)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < env->scn.n_scripts; i++) {
        polis_status st = script_load(env, &env->scn.scripts[i]);
        if (st != POLIS_OK) return st;
    }
    return POLIS_OK;
}

static polis_status scripts_start(polis_env *env)
{
    for (int32_t c = 0; c < env->n_ctxs; c++) {
        polis__lua_script *s =
            env->ctxs[c]->kind == POLIS__CTX_SCRIPT ? env->ctxs[c]->script : NULL;
        if (!s || !s->L) continue;
        /* The list may grow while it runs: an on_start function may add another. */
        for (int i = 1;; i++) {
            lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->start_ref);
            lua_Unsigned n = lua_rawlen(s->L, -1);
            lua_pop(s->L, 1);
            if ((lua_Unsigned)i > n) break;
            call_args a = {.index = i};
            polis_status st = run_protected(s, body_start, &a);
            if (st != POLIS_OK) return st;
        }
    }
    for (int32_t c = 0; c < env->n_ctxs; c++) {
        polis__lua_script *s =
            env->ctxs[c]->kind == POLIS__CTX_SCRIPT ? env->ctxs[c]->script : NULL;
        if (s) s->loading = false;
    }
    return POLIS_OK;
}

static void scripts_reset(polis_env *env, uint64_t seed)
{
    (void)seed; /* math.random draws from the env's generator, seeded by the kernel */
    for (int32_t c = 0; c < env->n_ctxs; c++) {
        polis__lua_script *s =
            env->ctxs[c]->kind == POLIS__CTX_SCRIPT ? env->ctxs[c]->script : NULL;
        if (!s || !s->L) continue;
        /* A failed step may have left a view pointing into its buffers. */
        s->obs->p = NULL;
        s->rewards->p = NULL;
        s->depth = 0;
        budget_end(s);
        s->exhausted = s->timed_out = false;
    }
}

static void script_free(polis_env *env, polis__lua_script *s)
{
    if (s->L) {
        lua_sethook(s->L, NULL, 0, 0);
        lua_close(s->L);
    }
    for (polis__lua_cb *cb = s->cbs, *next; cb; cb = next) {
        next = cb->next;
        polis__strfree(env, cb->name);
        polis__strfree(env, cb->where);
        if (cb->stage) polis__free(env, cb->stage, cb->stage_bytes);
        polis__free(env, cb, sizeof *cb);
    }
    if (s->chunkname) polis__free(env, s->chunkname, strlen(s->chunkname) + 1);
    polis__strfree(env, s->display);
    polis__free(env, s, sizeof *s);
}

static void scripts_unload(polis_env *env)
{
    for (int32_t c = env->n_ctxs - 1; c >= 0; c--) {
        polis_ctx *ctx = env->ctxs[c];
        if (ctx->kind != POLIS__CTX_SCRIPT) continue;
        polis__lua_params_release(env, ctx);
        if (!ctx->script) continue;
        script_free(env, ctx->script);
        ctx->script = NULL;
    }
    polis__free(env, env->lua, sizeof *env->lua);
    env->lua = NULL;
}

/* ---- the module (engine/modules.c) ----------------------------------------------------- */

POLIS_INTERNAL const polis__module polis__lua_module = {
    .name = "lua",
    .load = scripts_load,   /* each script's chunk, after every plugin's init */
    .start = scripts_start, /* polis.on_start callbacks, after every plugin's start */
    .reset = scripts_reset,
    .unload = scripts_unload, /* the Lua states hold plugin callbacks: before plugins go */
};
