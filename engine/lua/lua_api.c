/*
 * engine/lua/lua_api.c — the load-time half of the `polis` library the scripts call
 * (docs/lua-api.md): registration (polis.on, polis.action, polis.params, ...), the
 * observation-buffer and rewards views, and opening the library; the running-time calls are
 * in lua_run.c.
 *
 * Everything here runs on a script's state inside lua_host.c's protected boundary and keeps
 * its rules: a failed host call is raised with polis__lua_raise_host() only after the call
 * returned, and what a script registers reaches the engine as one of lua_host.c's
 * trampolines.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/internal.h"

/* ---- argument helpers -------------------------------------------------------------------- */

void polis__lua_engine_memory(lua_State *L, polis__lua_script *s, const char *what, uint64_t bytes)
{
    polis_env *env = s->env;
    int64_t limit = env->scn.lua_memory_limit;
    int64_t used = env->lua->memory_used + env->lua->engine_bytes;
    if (limit <= 0) return;
    if (bytes > (uint64_t)INT64_MAX || (int64_t)bytes > limit - used)
        luaL_error(L,
                   "%s needs %I bytes of engine memory; with the %I bytes the env's scripts "
                   "already hold that exceeds lua_memory_limit of %I bytes",
                   what, (lua_Integer)(bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bytes),
                   (lua_Integer)used, (lua_Integer)limit);
}

int32_t polis__lua_check_i32(lua_State *L, int arg)
{
    lua_Integer v = luaL_checkinteger(L, arg);
    if (v < INT32_MIN || v > INT32_MAX)
        luaL_argerror(L, arg, lua_pushfstring(L, "%I does not fit in 32 bits", v));
    return (int32_t)v;
}

int polis__lua_not_loading(lua_State *L, const char *fn)
{
    return luaL_error(L,
                      "%s: registration is only allowed while the script loads (in its "
                      "chunk or a polis.on_start function)",
                      fn);
}

/* Reads t[key] (t at the top of the stack) as a string; the string stays referenced by t. */
static const char *field_string(lua_State *L, const char *fn, const char *key, bool required)
{
    int t = lua_getfield(L, -1, key);
    const char *v = NULL;
    if (t == LUA_TSTRING)
        v = lua_tostring(L, -1);
    else if (t != LUA_TNIL || required)
        luaL_error(L, "%s: field '%s' must be a string, got %s", fn, key, lua_typename(L, t));
    lua_pop(L, 1);
    return v;
}

/* Pops and returns a registry reference to t[key] if it is a function. */
static int field_function(lua_State *L, const char *fn, const char *key, bool required)
{
    int t = lua_getfield(L, -1, key);
    if (t == LUA_TFUNCTION) return luaL_ref(L, LUA_REGISTRYINDEX);
    if (t != LUA_TNIL || required)
        luaL_error(L, "%s: field '%s' must be a function, got %s", fn, key, lua_typename(L, t));
    lua_pop(L, 1);
    return LUA_NOREF;
}

/* An optional table field of the argument table at -1: its registry reference, or
 * LUA_NOREF when absent; raises when it is not a table. */
static int field_table(lua_State *L, const char *fn, const char *name, const char *key)
{
    int t = lua_getfield(L, -1, key);
    if (t == LUA_TTABLE) return luaL_ref(L, LUA_REGISTRYINDEX);
    if (t != LUA_TNIL)
        luaL_error(L, "%s('%s'): field '%s' must be a table, got %s", fn, name, key,
                   lua_typename(L, t));
    lua_pop(L, 1);
    return LUA_NOREF;
}

static polis__lua_cb *cb_new(lua_State *L, polis__lua_script *s, int fn_ref, const char *name)
{
    polis__lua_cb *cb = polis__alloc(s->env, sizeof *cb);
    char *nm = cb ? polis__strdup(s->env, name ? name : "") : NULL;
    if (!nm) {
        polis__free(s->env, cb, sizeof *cb);
        polis__fail(s->env, POLIS_ERR_NOMEM, "out of memory");
        polis__lua_raise_host(L, s, POLIS_ERR_NOMEM);
        return NULL;
    }
    cb->s = s;
    cb->fn = fn_ref;
    cb->legal = LUA_NOREF;
    cb->name = nm;
    cb->next = s->cbs;
    s->cbs = cb;
    return cb;
}

/* Keeps "file:line" of the script line registering cb (the caller of the polis.* function
 * running now) for the errors of a table the host reads: nothing of the script runs then. */
static void registration_place(lua_State *L, polis__lua_script *s, polis__lua_cb *cb)
{
    lua_Debug ar;
    char where[160];
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
        snprintf(where, sizeof where, "%s:%d", ar.short_src, ar.currentline);
    else
        snprintf(where, sizeof where, "%s", s->display);
    if (!(cb->where = polis__strdup(s->env, where))) {
        polis__fail(s->env, POLIS_ERR_NOMEM, "out of memory");
        polis__lua_raise_host(L, s, POLIS_ERR_NOMEM);
    }
}

/* ---- handler replacements (swap.c): a script's global function as a callback ------------- */

typedef struct swap_ref_args {
    const char *fn;
    int type; /* of the global */
    int ref;
} swap_ref_args;

static int body_swap_ref(lua_State *L)
{
    swap_ref_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushstring(L, a->fn);
    a->type = lua_rawget(L, -2);
    if (a->type == LUA_TFUNCTION) a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

polis_status polis__lua_swap_cb(polis_ctx *script, const char *fn, const char *name,
                                polis_dtype dtype, size_t count, bool as_legal, polis__lua_cb **out,
                                char *why, size_t n)
{
    polis__lua_script *s = script->script;
    *out = NULL;
    if (!s || !s->L) {
        snprintf(why, n, "script %s is not loaded", script->name);
        return POLIS_ERR_SCRIPT;
    }
    polis__lua_cb *cb = polis__alloc(s->env, sizeof *cb);
    char *nm = cb ? polis__strdup(s->env, name) : NULL;
    if (!nm) {
        polis__free(s->env, cb, sizeof *cb);
        snprintf(why, n, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    /* A raw read of the global (no metamethod runs) under a protected call, since the
     * reference may need memory the script's cap refuses. */
    swap_ref_args a = {.fn = fn, .type = LUA_TNIL, .ref = LUA_NOREF};
    lua_State *L = s->L;
    int top = lua_gettop(L);
    lua_pushcfunction(L, body_swap_ref);
    lua_pushlightuserdata(L, &a);
    int rc = lua_pcall(L, 1, 0, 0);
    if (rc != LUA_OK || a.type != LUA_TFUNCTION) {
        if (rc != LUA_OK)
            snprintf(why, n, "script %s: %s", script->name,
                     rc == LUA_ERRMEM ? "out of memory" : "cannot read its globals");
        else
            snprintf(why, n, "script %s has no global function \"%s\"%s%s", script->name, fn,
                     a.type == LUA_TNIL ? "" : " (it is a ",
                     a.type == LUA_TNIL ? "" : lua_typename(L, a.type));
        if (rc == LUA_OK && a.type != LUA_TNIL) strncat(why, ")", n - strlen(why) - 1);
        lua_settop(L, top);
        polis__strfree(s->env, nm);
        polis__free(s->env, cb, sizeof *cb);
        return rc == LUA_ERRMEM ? POLIS_ERR_NOMEM : POLIS_ERR_SCRIPT;
    }
    lua_settop(L, top);
    cb->s = s;
    cb->fn = as_legal ? LUA_NOREF : a.ref;
    cb->legal = as_legal ? a.ref : LUA_NOREF;
    cb->name = nm;
    cb->dtype = dtype;
    cb->count = count;
    cb->macro_next = LUA_NOREF;
    cb->macro_plans = LUA_NOREF;
    cb->next = s->cbs;
    s->cbs = cb;
    *out = cb;
    return POLIS_OK;
}

/* ---- views: observation buffers and rewards ------------------------------------------------ */

static polis__lua_obs_view *check_obs_view(lua_State *L)
{
    polis__lua_obs_view *v = lua_touserdata(L, 1);
    if (!v || v != polis__lua_script_of(L)->obs) luaL_typeerror(L, 1, "observation buffer");
    if (!v->p)
        luaL_error(L, "the observation buffer is only valid while its writer runs (do not keep "
                      "it)");
    return v;
}

static size_t obs_index(lua_State *L, const polis__lua_obs_view *v)
{
    int isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint || lua_type(L, 2) != LUA_TNUMBER)
        luaL_error(L, "%s '%s': index must be an integer in [1, %d], got %s",
                   polis__lua_obs_kind(v), v->cb->name, (int)v->count,
                   lua_type(L, 2) == LUA_TNUMBER ? lua_tostring(L, 2) : luaL_typename(L, 2));
    if (i < 1 || (lua_Unsigned)i > v->count)
        luaL_error(L, "%s '%s': index %I is outside [1, %d]", polis__lua_obs_kind(v), v->cb->name,
                   i, (int)v->count);
    return (size_t)(i - 1);
}

static int obs_index_get(lua_State *L)
{
    polis__lua_obs_view *v = check_obs_view(L);
    size_t i = obs_index(L, v);
    switch (v->dtype) {
    case POLIS_DTYPE_U8: lua_pushinteger(L, ((uint8_t *)v->p)[i]); break;
    case POLIS_DTYPE_I8: lua_pushinteger(L, ((int8_t *)v->p)[i]); break;
    case POLIS_DTYPE_I16: lua_pushinteger(L, ((int16_t *)v->p)[i]); break;
    case POLIS_DTYPE_I32: lua_pushinteger(L, ((int32_t *)v->p)[i]); break;
    case POLIS_DTYPE_F32: lua_pushnumber(L, ((float *)v->p)[i]); break;
    }
    return 1;
}

bool polis__lua_obs_store(lua_State *L, int idx, polis_dtype dt, void *p, size_t i, char *why,
                          size_t cap)
{
    if (lua_type(L, idx) != LUA_TNUMBER) {
        snprintf(why, cap, "value must be a number, got %s", luaL_typename(L, idx));
        return false;
    }
    if (dt == POLIS_DTYPE_F32) {
        double x = lua_tonumber(L, idx);
        if (!isfinite(x) || fabs(x) > FLT_MAX) {
            snprintf(why, cap, LUA_NUMBER_FMT " is not a finite f32", x);
            return false;
        }
        ((float *)p)[i] = (float)x;
        return true;
    }
    int isint;
    lua_Integer x = lua_tointegerx(L, idx, &isint);
    if (!isint) {
        /* a float without an integral value: Lua's own tostring of it, without allocating */
        snprintf(why, cap, LUA_NUMBER_FMT " is not an integer (dtype %s)", lua_tonumber(L, idx),
                 polis_dtype_name(dt));
        return false;
    }
    lua_Integer lo, hi;
    switch (dt) {
    case POLIS_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case POLIS_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case POLIS_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    default: lo = INT32_MIN, hi = INT32_MAX; break;
    }
    if (x < lo || x > hi) {
        snprintf(why, cap,
                 LUA_INTEGER_FMT " is outside the %s range [" LUA_INTEGER_FMT ", " LUA_INTEGER_FMT
                                 "]",
                 (LUAI_UACINT)x, polis_dtype_name(dt), (LUAI_UACINT)lo, (LUAI_UACINT)hi);
        return false;
    }
    switch (dt) {
    case POLIS_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)x; break;
    case POLIS_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)x; break;
    case POLIS_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)x; break;
    default: ((int32_t *)p)[i] = (int32_t)x; break;
    }
    return true;
}

static int obs_index_set(lua_State *L)
{
    polis__lua_obs_view *v = check_obs_view(L);
    size_t i = obs_index(L, v);
    char why[160];
    if (!polis__lua_obs_store(L, 3, v->dtype, v->p, i, why, sizeof why)) {
        if (v->agent < 0)
            return luaL_error(L, "shared observation '%s'[%d]: %s", v->cb->name, (int)i + 1, why);
        return luaL_error(L, "observation '%s'[%d] (agent %d): %s", v->cb->name, (int)i + 1,
                          (int)polis__lua_obs_agent(v, i), why);
    }
    return 0;
}

static int obs_len(lua_State *L)
{
    polis__lua_obs_view *v = check_obs_view(L);
    lua_pushinteger(L, (lua_Integer)v->count);
    return 1;
}

static polis__lua_reward_view *check_reward_view(lua_State *L)
{
    polis__lua_reward_view *v = lua_touserdata(L, 1);
    if (!v || v != polis__lua_script_of(L)->rewards) luaL_typeerror(L, 1, "rewards view");
    if (!v->p)
        luaL_error(L, "the rewards view is only valid while its transform runs (do not keep "
                      "it)");
    return v;
}

static int32_t reward_index(lua_State *L, const polis__lua_reward_view *v)
{
    int isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint || lua_type(L, 2) != LUA_TNUMBER || i < 0 || i >= v->n)
        luaL_error(L, "reward transform '%s': index must be an agent id in [0, %d], got %s",
                   v->cb->name, (int)v->n - 1,
                   lua_type(L, 2) == LUA_TNUMBER ? lua_tostring(L, 2) : luaL_typename(L, 2));
    return (int32_t)i;
}

static int reward_get(lua_State *L)
{
    polis__lua_reward_view *v = check_reward_view(L);
    lua_pushnumber(L, v->p[reward_index(L, v)]);
    return 1;
}

static int reward_set(lua_State *L)
{
    polis__lua_reward_view *v = check_reward_view(L);
    int32_t i = reward_index(L, v);
    if (lua_type(L, 3) != LUA_TNUMBER)
        return luaL_error(L, "reward transform '%s': rewards[%d] must be a number, got %s",
                          v->cb->name, (int)i, luaL_typename(L, 3));
    double x = lua_tonumber(L, 3);
    if (!isfinite(x) || fabs(x) > FLT_MAX)
        return luaL_error(L,
                          "reward transform '%s': rewards[%d] = %f is not a finite 32-bit "
                          "float",
                          v->cb->name, (int)i, x);
    v->p[i] = (float)x;
    return 0;
}

static int reward_len(lua_State *L)
{
    polis__lua_reward_view *v = check_reward_view(L);
    lua_pushinteger(L, v->n);
    return 1;
}

/* ---- polis.*: registration ------------------------------------------------------------------ */

/* A shape's value from its name (polis_shape_name's inverse); -1 if none has it. */
static int32_t shape_find(const char *name)
{
    const char *n;
    for (int32_t i = 0; name && (n = polis_shape_name((polis_shape)i)) != NULL; i++)
        if (strcmp(n, name) == 0) return i;
    return -1;
}

static int l_on(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *phase_name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int32_t prio = luaL_opt(L, polis__lua_check_i32, 3, 0);
    if (!s->loading) return polis__lua_not_loading(L, "polis.on");
    int32_t phase = polis__phase_parse(phase_name);
    if (phase < 0)
        return luaL_argerror(L, 1,
                             lua_pushfstring(L,
                                             "unknown phase '%s' (phases: reset, begin, "
                                             "resolve, world, post, end, observe)",
                                             phase_name));
    lua_pushvalue(L, 2);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    polis__lua_cb *cb = cb_new(L, s, ref, phase_name);
    polis_status st = s->h->hook(s->ctx, (polis_phase)phase, prio, polis__lua_tramp_hook, cb);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static int l_on_start(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (!s->loading) return polis__lua_not_loading(L, "polis.on_start");
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->start_ref);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

static int l_action(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, "polis.action");
    lua_settop(L, 1);
    const char *name = field_string(L, "polis.action", "name", true);
    const char *doc = field_string(L, "polis.action", "doc", false);
    int handler = field_function(L, "polis.action", "handler", false);
    int legal = field_function(L, "polis.action", "legal", false);
    /* into = t, value = v: the host sets t[agent] = v instead of calling a handler */
    int into = field_table(L, "polis.action", name, "into");
    if ((handler != LUA_NOREF) == (into != LUA_NOREF))
        return luaL_error(L,
                          "polis.action('%s'): give one of 'handler' (a function of the agent) "
                          "and 'into' (a table the host sets)",
                          name);
    bool has_value = lua_getfield(L, 1, "value") != LUA_TNIL;
    int isint = 0;
    lua_Integer value = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    if (has_value && (into == LUA_NOREF || !isint))
        return luaL_error(L,
                          into == LUA_NOREF
                              ? "polis.action('%s'): field 'value' goes with 'into'"
                              : "polis.action('%s'): field 'value' must be an integer",
                          name);
    polis__lua_cb *cb = cb_new(L, s, into != LUA_NOREF ? into : handler, name);
    cb->legal = legal;
    if (into != LUA_NOREF) {
        cb->source = POLIS__LUA_TABLE;
        registration_place(L, s, cb);
    }
    polis_action_def def = {.name = name,
                            .doc = doc,
                            .handler = polis__lua_tramp_action,
                            .legal = legal != LUA_NOREF ? polis__lua_tramp_legal : NULL,
                            .ud = cb};
    int32_t id = -1;
    polis_status st = s->h->action(s->ctx, &def, &id);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    cb->into_value = has_value ? (int64_t)value : id; /* default: the action's id */
    lua_pushinteger(L, id);
    return 1;
}

/* The shared start of polis.reward, renderer, action_parser and policy: the function
 * argument, the load-time rule (polis__lua_not_loading raises), and the callback record holding a
 * registry reference to the function. */
static polis__lua_cb *load_time_callback(lua_State *L, const char *api, int fn_arg,
                                         const char *name)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, fn_arg, LUA_TFUNCTION);
    if (!s->loading) polis__lua_not_loading(L, api);
    lua_pushvalue(L, fn_arg);
    return cb_new(L, s, luaL_ref(L, LUA_REGISTRYINDEX), name);
}

static int l_reward(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    polis__lua_cb *cb;
    if (lua_type(L, 2) == LUA_TTABLE) { /* rewards[agent], read by the host */
        if (!s->loading) return polis__lua_not_loading(L, "polis.reward");
        lua_pushvalue(L, 2);
        cb = cb_new(L, s, luaL_ref(L, LUA_REGISTRYINDEX), name);
        cb->source = POLIS__LUA_TABLE;
        registration_place(L, s, cb);
    } else {
        if (lua_type(L, 2) != LUA_TFUNCTION) luaL_typeerror(L, 2, "function or table");
        cb = load_time_callback(L, "polis.reward", 2, name);
    }
    polis_status st = s->h->reward(s->ctx, name, polis__lua_tramp_reward, cb);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int l_renderer(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *format = luaL_checkstring(L, 1);
    polis__lua_cb *cb = load_time_callback(L, "polis.renderer", 2, format);
    polis_status st = s->h->renderer(s->ctx, format, polis__lua_tramp_render, cb);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int l_action_parser(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis__lua_cb *cb = load_time_callback(L, "polis.action_parser", 1, "action parser");
    polis_status st = s->h->action_parser(s->ctx, polis__lua_tramp_parse, cb);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int l_policy(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    polis__lua_cb *cb = load_time_callback(L, "polis.policy", 2, name);
    polis_status st = s->h->policy(s->ctx, name, polis__lua_tramp_policy, cb);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

/* polis.macro{name=, usage=, doc=, start=, next=}: a plan command (docs/kernel.md,
 * "Plans"). The plans start returns live in a table per macro, one slot per agent, which a
 * new plan overwrites: nothing grows while the episode runs. */
static int l_macro(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, "polis.macro");
    lua_settop(L, 1);
    const char *name = field_string(L, "polis.macro", "name", true);
    const char *usage = field_string(L, "polis.macro", "usage", false);
    const char *doc = field_string(L, "polis.macro", "doc", false);
    int start = field_function(L, "polis.macro", "start", true);
    int next = field_function(L, "polis.macro", "next", true);
    lua_createtable(L, s->h->n_agents(s->ctx), 0);
    int plans = luaL_ref(L, LUA_REGISTRYINDEX);
    polis__lua_cb *cb = cb_new(L, s, start, name);
    cb->macro_next = next;
    cb->macro_plans = plans;
    polis_macro_def def = {.name = name,
                           .usage = usage,
                           .doc = doc,
                           .plan_size = 0,
                           .start = polis__lua_tramp_macro_start,
                           .next = polis__lua_tramp_macro_next,
                           .ud = cb};
    polis_status st = s->h->macro(s->ctx, &def);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

/* ---- polis.look: looks and scenes (ABI 1.5) ----------------------------------------------- */

#define SCENE_WRITER "polis.scene_writer"

static polis__lua_scene_writer *check_writer(lua_State *L)
{
    polis__lua_scene_writer *w = lua_touserdata(L, 1);
    if (w && w == polis__lua_script_of(L)->writer_now) return w; /* a scene function's own */
    w = luaL_checkudata(L, 1, SCENE_WRITER);
    if (!w->scene) luaL_error(L, "the scene writer is used outside its scene function");
    return w;
}

/* A kind, layer or stat argument: an id or a name. */
static int32_t look_id(lua_State *L, int arg, const char *what, int32_t n,
                       int32_t (*find)(const polis_env *, const char *), polis_env *env)
{
    if (lua_type(L, arg) == LUA_TSTRING) {
        const char *name = lua_tostring(L, arg);
        int32_t id = find(env, name);
        if (id < 0) luaL_error(L, "no %s named '%s'", what, name);
        return id;
    }
    int isint = 0;
    lua_Integer v = lua_tointegerx(L, arg, &isint);
    if (!isint || v < 0 || v >= n)
        luaL_error(L, "bad %s (argument %d): expected a name or an id in 0..%d", what, arg,
                   (int)n - 1);
    return (int32_t)v;
}

static int32_t find_layer(const polis_env *env, const char *name)
{
    for (int32_t i = 0; i < polis_env_scene_n_layers(env); i++)
        if (strcmp(polis_env_scene_layer_name(env, i), name) == 0) return i;
    return -1;
}

static int32_t find_stat(const polis_env *env, const char *name)
{
    for (int32_t i = 0; i < polis_env_scene_n_stats(env); i++) {
        const char *n;
        polis_env_scene_stat(env, i, &n, NULL, NULL);
        if (strcmp(n, name) == 0) return i;
    }
    return -1;
}

static int32_t cell_arg(lua_State *L, int arg, int32_t n, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, arg);
    if (v < 0 || v >= n) luaL_error(L, "%s %I is outside the map (0..%d)", what, v, (int)n - 1);
    return (int32_t)v;
}

static int32_t agent_arg(lua_State *L, int arg, const polis_scene *sc)
{
    lua_Integer a = luaL_checkinteger(L, arg);
    if (a < 0 || a >= sc->n_agents)
        luaL_error(L, "agent %I is not an agent id (0..%d)", a, (int)sc->n_agents - 1);
    return (int32_t)a;
}

/* w:tile(layer, x, y, kind): kind nil or -1 clears the cell. */
static int w_tile(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis_scene *sc = w->scene;
    polis_env *env = w->s->env;
    int32_t layer = look_id(L, 2, "layer", sc->n_layers, find_layer, env);
    int32_t x = cell_arg(L, 3, sc->width, "x"), y = cell_arg(L, 4, sc->height, "y");
    int32_t kind = -1;
    if (!lua_isnoneornil(L, 5) && !(lua_isinteger(L, 5) && lua_tointeger(L, 5) == -1))
        kind = look_id(L, 5, "kind", polis_env_scene_n_kinds(env), polis_env_scene_kind_find, env);
    sc->tiles[((size_t)layer * (size_t)sc->height + (size_t)y) * (size_t)sc->width + (size_t)x] =
        kind;
    return 0;
}

static int w_thing(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis__lua_script *s = w->s;
    lua_Integer id = luaL_checkinteger(L, 2);
    if (id < INT32_MIN || id > INT32_MAX)
        return luaL_error(L, "thing id %I is not a 32-bit integer", id);
    int32_t kind =
        look_id(L, 3, "kind", polis_env_scene_n_kinds(s->env), polis_env_scene_kind_find, s->env);
    lua_Integer x = luaL_checkinteger(L, 4), y = luaL_checkinteger(L, 5);
    const char *label = luaL_optstring(L, 6, "");
    if (x < INT32_MIN || x > INT32_MAX || y < INT32_MIN || y > INT32_MAX)
        return luaL_error(L, "thing %I: position out of range", id);
    polis_status st =
        s->h->scene_thing(s->ctx, w->scene, (int32_t)id, kind, (int32_t)x, (int32_t)y, label);
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int32_t facing_arg(lua_State *L, int arg)
{
    static const char *const names[] = {"none", "up", "right", "down", "left", NULL};
    if (lua_type(L, arg) == LUA_TSTRING) return (int32_t)luaL_checkoption(L, arg, NULL, names);
    lua_Integer f = luaL_optinteger(L, arg, 0);
    if (f < 0 || f > 4) luaL_error(L, "facing %I is not 0..4 (none, up, right, down, left)", f);
    return (int32_t)f;
}

/* w:agent(a, x, y [, facing [, alive]]): x, y nil or -1 when the agent is off the map. */
static int w_agent(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis_scene *sc = w->scene;
    int32_t a = agent_arg(L, 2, sc);
    int32_t x = -1, y = -1;
    if (!lua_isnoneornil(L, 3) && !(lua_isinteger(L, 3) && lua_tointeger(L, 3) == -1)) {
        x = cell_arg(L, 3, sc->width, "x");
        y = cell_arg(L, 4, sc->height, "y");
    }
    sc->agents[a].x = x;
    sc->agents[a].y = y;
    if (!lua_isnoneornil(L, 5)) sc->agents[a].facing = facing_arg(L, 5);
    if (!lua_isnoneornil(L, 6)) sc->agents[a].alive = lua_toboolean(L, 6) ? 1 : 0;
    return 0;
}

static int w_stat(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis_scene *sc = w->scene;
    int32_t a = agent_arg(L, 2, sc);
    int32_t k = look_id(L, 3, "stat", sc->n_stats, find_stat, w->s->env);
    lua_Number v = luaL_checknumber(L, 4);
    if (!(v >= INT32_MIN && v <= INT32_MAX))
        return luaL_error(L, "stat value %f is not a 32-bit integer", v);
    sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)k] = (int32_t)v;
    return 0;
}

static int w_node(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis__lua_script *s = w->s;
    polis_status st = s->h->scene_node(s->ctx, w->scene, luaL_checkstring(L, 2),
                                       luaL_checkstring(L, 3), luaL_optstring(L, 4, ""));
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int w_edge(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    polis__lua_script *s = w->s;
    polis_status st =
        s->h->scene_edge(s->ctx, w->scene, luaL_checkstring(L, 2), luaL_checkstring(L, 3),
                         luaL_checkstring(L, 4), (float)luaL_optnumber(L, 5, 1.0));
    return st == POLIS_OK ? 0 : polis__lua_raise_host(L, s, st);
}

static int w_size(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    lua_pushinteger(L, w->scene->width);
    lua_pushinteger(L, w->scene->height);
    return 2;
}

/* s:fresh(): true when the kept layers were cleared for this scene (ABI 1.6). */
static int w_fresh(lua_State *L)
{
    polis__lua_scene_writer *w = check_writer(L);
    lua_pushboolean(L, w->s->h->scene_fresh(w->s->ctx, w->scene));
    return 1;
}

static const luaL_Reg writer_methods[] = {{"tile", w_tile}, {"thing", w_thing}, {"agent", w_agent},
                                          {"stat", w_stat}, {"node", w_node},   {"edge", w_edge},
                                          {"size", w_size}, {"fresh", w_fresh}, {NULL, NULL}};

static int32_t opt_count(lua_State *L, const char *key)
{
    int t = lua_getfield(L, 1, key);
    int isint = 0;
    lua_Integer v = t == LUA_TNIL ? 0 : lua_tointegerx(L, -1, &isint);
    if (t != LUA_TNIL && (!isint || v < 0 || v > (1 << 24)))
        luaL_error(L, "polis.look: field '%s' must be an integer in 0..16777216", key);
    lua_pop(L, 1);
    return (int32_t)v;
}

/* polis.look{kinds=, layers=, stats=, map=, view=, things=, nodes=, edges=, scene=}: how the
 * script's game looks (docs/lua-api.md, "Looks and scenes"). Returns {kinds = {name = id},
 * layers = {name = id}, stats = {name = id}}. */
static int l_look(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, "polis.look");
    lua_settop(L, 1);
    polis_status st;
    lua_createtable(L, 0, 3); /* 2: the result */
    /* kinds */
    lua_newtable(L);
    if (lua_getfield(L, 1, "kinds") == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            if (!lua_istable(L, -1))
                return luaL_error(L,
                                  "polis.look: kinds[%I] must be a table {name=, glyph=, "
                                  "color=, shape=}",
                                  i);
            lua_getfield(L, -1, "name");
            lua_getfield(L, -2, "glyph");
            lua_getfield(L, -3, "color");
            lua_getfield(L, -4, "shape");
            const char *shape = lua_isnil(L, -1) ? "square" : lua_tostring(L, -1);
            int32_t sh = shape_find(shape);
            if (sh < 0)
                return luaL_error(L,
                                  "polis.look: kinds[%I]: shape '%s' is not one of square, "
                                  "circle, triangle, diamond, cross, dot, agent",
                                  i, shape ? shape : "?");
            polis_kind_def def = {lua_tostring(L, -4), lua_tostring(L, -3), lua_tostring(L, -2),
                                  (polis_shape)sh};
            int32_t id;
            if ((st = s->h->look_kind(s->ctx, &def, &id))) return polis__lua_raise_host(L, s, st);
            lua_pushinteger(L, id);
            lua_setfield(L, -8, def.name);
            lua_pop(L, 5);
        }
        lua_pop(L, 1);
    } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "polis.look: field 'kinds' must be an array of tables");
    }
    lua_pop(L, 1);
    lua_setfield(L, 2, "kinds");
    /* layers */
    lua_newtable(L);
    if (lua_getfield(L, 1, "layers") == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            const char *name = lua_tostring(L, -1);
            if (!name) return luaL_error(L, "polis.look: layers[%I] must be a string", i);
            int32_t id;
            if ((st = s->h->look_layer(s->ctx, name, &id))) return polis__lua_raise_host(L, s, st);
            lua_pushinteger(L, id);
            lua_setfield(L, -4, name);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "polis.look: field 'layers' must be an array of names");
    }
    lua_pop(L, 1);
    /* keep = true (every layer of this call) or an array of layer names (ABI 1.6) */
    int kt = lua_getfield(L, 1, "keep");
    if (kt == LUA_TBOOLEAN) {
        if (lua_toboolean(L, -1)) {
            lua_pushnil(L);
            while (lua_next(L, -3)) {
                if ((st = s->h->look_keep_layer(s->ctx, (int32_t)lua_tointeger(L, -1))))
                    return polis__lua_raise_host(L, s, st);
                lua_pop(L, 1);
            }
        }
    } else if (kt == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            int32_t id = name ? find_layer(s->env, name) : -1;
            if (id < 0)
                return luaL_error(L, "polis.look: keep[%I] must be the name of a layer, not %s", i,
                                  name ? name : luaL_typename(L, -1));
            if ((st = s->h->look_keep_layer(s->ctx, id))) return polis__lua_raise_host(L, s, st);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    } else if (kt != LUA_TNIL) {
        return luaL_error(L, "polis.look: field 'keep' must be true or an array of layer names");
    }
    lua_pop(L, 1);
    lua_setfield(L, 2, "layers");
    /* stats */
    lua_newtable(L);
    if (lua_getfield(L, 1, "stats") == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            if (!lua_istable(L, -1))
                return luaL_error(L, "polis.look: stats[%I] must be a table {name=, group=, max=}",
                                  i);
            lua_getfield(L, -1, "name");
            lua_getfield(L, -2, "group");
            lua_getfield(L, -3, "max");
            int isint = 0;
            lua_Integer max = lua_isnil(L, -1) ? 0 : lua_tointegerx(L, -1, &isint);
            if (!lua_isnil(L, -1) && (!isint || max < 0 || max > INT32_MAX))
                return luaL_error(L, "polis.look: stats[%I].max must be a non-negative integer", i);
            const char *name = lua_tostring(L, -3);
            const char *group = lua_isnil(L, -2) ? "vitals" : lua_tostring(L, -2);
            int32_t id;
            if ((st = s->h->look_stat(s->ctx, name, group, (int32_t)max, &id)))
                return polis__lua_raise_host(L, s, st);
            lua_pushinteger(L, id);
            lua_setfield(L, -7, name);
            lua_pop(L, 4);
        }
        lua_pop(L, 1);
    } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "polis.look: field 'stats' must be an array of tables");
    }
    lua_pop(L, 1);
    lua_setfield(L, 2, "stats");
    /* map and view: {w, h} / {rx, ry} */
    static const char *const pair_keys[2] = {"map", "view"};
    for (int k = 0; k < 2; k++) {
        int t = lua_getfield(L, 1, pair_keys[k]);
        if (t == LUA_TTABLE) {
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            int i1 = 0, i2 = 0;
            lua_Integer a = lua_tointegerx(L, -2, &i1), b = lua_tointegerx(L, -1, &i2);
            if (!i1 || !i2 || a < 0 || b < 0 || a > 65536 || b > 65536)
                return luaL_error(L, "polis.look: field '%s' must be {%s} of integers in 0..65536",
                                  pair_keys[k], k ? "rx, ry" : "width, height");
            st = k ? s->h->look_view(s->ctx, (int32_t)a, (int32_t)b)
                   : s->h->look_map(s->ctx, (int32_t)a, (int32_t)b);
            if (st) return polis__lua_raise_host(L, s, st);
            lua_pop(L, 2);
        } else if (t != LUA_TNIL) {
            return luaL_error(L, "polis.look: field '%s' must be a table of two integers",
                              pair_keys[k]);
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, 1);
    int fn = field_function(L, "polis.look", "scene", false);
    lua_pop(L, 1);
    if (fn != LUA_NOREF) {
        polis_scene_def def = {.fn = polis__lua_tramp_scene,
                               .max_things = opt_count(L, "things"),
                               .max_nodes = opt_count(L, "nodes"),
                               .max_edges = opt_count(L, "edges")};
        polis__lua_scene_writer *w = lua_newuserdatauv(L, sizeof *w, 0);
        w->s = s;
        w->scene = NULL;
        if (luaL_newmetatable(L, SCENE_WRITER)) {
            luaL_newlib(L, writer_methods);
            lua_setfield(L, -2, "__index");
            lua_pushliteral(L, "locked");
            lua_setfield(L, -2, "__metatable");
        }
        lua_setmetatable(L, -2);
        int wref = luaL_ref(L, LUA_REGISTRYINDEX);
        polis__lua_cb *cb = cb_new(L, s, fn, "scene");
        cb->scene_writer = wref;
        def.ud = cb;
        if ((st = s->h->look_scene(s->ctx, &def))) return polis__lua_raise_host(L, s, st);
    }
    lua_settop(L, 2);
    return 1;
}

static int l_reward_transform(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    int fn_arg = 3;
    int32_t prio = 0;
    if (lua_type(L, 2) == LUA_TFUNCTION)
        fn_arg = 2;
    else
        prio = polis__lua_check_i32(L, 2);
    luaL_checktype(L, fn_arg, LUA_TFUNCTION);
    if (!s->loading) return polis__lua_not_loading(L, "polis.reward_transform");
    lua_pushvalue(L, fn_arg);
    polis__lua_cb *cb = cb_new(L, s, luaL_ref(L, LUA_REGISTRYINDEX), name);
    polis_status st = s->h->reward_transform(s->ctx, name, prio, polis__lua_tramp_transform, cb);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static bool parse_ftype(const char *t, polis_ftype *out)
{
    static const struct {
        const char *name;
        polis_ftype t;
    } types[] = {{"i32", POLIS_FIELD_I32},
                 {"i64", POLIS_FIELD_I64},
                 {"f32", POLIS_FIELD_F32},
                 {"f64", POLIS_FIELD_F64}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(types[i].name, t) == 0) {
            *out = types[i].t;
            return true;
        }
    }
    return false;
}

static int l_event(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, "polis.event");
    lua_settop(L, 2);
    lua_Integer n = luaL_len(L, 2);
    if (n < 0 || n > 64) return luaL_error(L, "polis.event('%s'): %I fields (at most 64)", name, n);
    polis_field_def *defs = lua_newuserdatauv(L, sizeof *defs * (size_t)(n ? n : 1), 0); /* 3 */
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
            return luaL_error(L, "polis.event('%s'): field %I must be a table {name, type}", name,
                              i);
        int tn = lua_rawgeti(L, -1, 1), tt = lua_rawgeti(L, -2, 2);
        if (tn == LUA_TNIL && tt == LUA_TNIL) {
            lua_pop(L, 2);
            tn = lua_getfield(L, -1, "name");
            tt = lua_getfield(L, -2, "type");
        }
        if (tn != LUA_TSTRING || tt != LUA_TSTRING)
            return luaL_error(L,
                              "polis.event('%s'): field %I must be {name, type} with two "
                              "strings",
                              name, i);
        /* The strings stay referenced by the field table, itself held by argument 2. */
        defs[i - 1].name = lua_tostring(L, -2);
        const char *t = lua_tostring(L, -1);
        if (!parse_ftype(t, &defs[i - 1].type))
            return luaL_error(L,
                              "polis.event('%s'): field '%s' has unknown type '%s' (types: "
                              "i32, i64, f32, f64)",
                              name, defs[i - 1].name, t);
        lua_pop(L, 3);
    }
    int32_t id = -1;
    polis_status st = s->h->event_type(s->ctx, name, defs, (int32_t)n, &id);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, id);
    return 1;
}

static int l_subscribe(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int32_t prio = luaL_opt(L, polis__lua_check_i32, 3, 0);
    if (!s->loading) return polis__lua_not_loading(L, "polis.subscribe");
    lua_pushvalue(L, 2);
    polis__lua_cb *cb = cb_new(L, s, luaL_ref(L, LUA_REGISTRYINDEX), name);
    polis_status st = s->h->subscribe(s->ctx, name, prio, polis__lua_tramp_event, cb);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static bool parse_dtype(const char *t, polis_dtype *out)
{
    for (int d = POLIS_DTYPE_U8; d <= POLIS_DTYPE_F32; d++) {
        if (strcmp(polis_dtype_name((polis_dtype)d), t) == 0) {
            *out = (polis_dtype)d;
            return true;
        }
    }
    return false;
}

/* The "range" key of polis.observation (plugin ABI 1.4, host->obs_range) at the top of the
 * stack: {lo, hi} for the whole field, or {dim = d, lo = {...}, hi = {...}} with one bound
 * per index of dimension d (1-based, as shape). The bounds live in a userdata left on the
 * stack below the key until the call returns. Returns the number of ranges. */
static int32_t obs_range_read(lua_State *L, const char *name, const polis_obs_def *def,
                              int32_t *dim, double **lo, double **hi)
{
    int t = lua_gettop(L);
    if (!lua_istable(L, t))
        luaL_error(L,
                   "polis.observation('%s'): range must be {lo, hi} or {dim = d, lo = {...}, "
                   "hi = {...}}, got %s",
                   name, luaL_typename(L, t));
    int32_t n = 1;
    lua_getfield(L, t, "dim");
    bool per_index = !lua_isnil(L, -1);
    if (per_index) {
        int isint = 0;
        lua_Integer d = lua_tointegerx(L, -1, &isint);
        if (!isint || d < 1 || d > def->ndim)
            luaL_error(L, "polis.observation('%s'): range.dim must be an integer in [1, %d]", name,
                       (int)def->ndim);
        *dim = (int32_t)d - 1;
        n = def->shape[d - 1];
    }
    lua_pop(L, 1);
    double *b = lua_newuserdatauv(L, sizeof *b * 2 * (size_t)n, 0);
    lua_insert(L, t); /* below the range table, which is now at t + 1 */
    t++;
    for (int side = 0; side < 2; side++) {
        double *out = b + (size_t)side * (size_t)n;
        const char *key = side ? "hi" : "lo";
        if (!per_index) {
            if (lua_rawgeti(L, t, side + 1) != LUA_TNUMBER)
                luaL_error(L, "polis.observation('%s'): range[%d] (%s) must be a number", name,
                           side + 1, key);
            out[0] = lua_tonumber(L, -1);
            lua_pop(L, 1);
            continue;
        }
        if (lua_getfield(L, t, key) != LUA_TTABLE || luaL_len(L, -1) != n)
            luaL_error(L,
                       "polis.observation('%s'): range.%s must be a table of %d numbers (one "
                       "per index of dim %d)",
                       name, key, (int)n, (int)*dim + 1);
        for (int32_t k = 0; k < n; k++) {
            if (lua_rawgeti(L, -1, k + 1) != LUA_TNUMBER)
                luaL_error(L, "polis.observation('%s'): range.%s[%d] must be a number", name, key,
                           (int)k + 1);
            out[k] = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    *lo = b;
    *hi = b + n;
    return n;
}

/* The name, doc, dtype and shape of polis.observation's or polis.shared_observation's
 * (`fn`) table at index 1 into def (the strings stay referenced by the table); returns the
 * field's elements (SIZE_MAX when they overflow). Raises on a bad entry. */
static size_t obs_def_read(lua_State *L, const char *fn, polis_obs_def *def)
{
    const char *name = field_string(L, fn, "name", true);
    def->name = name;
    def->doc = field_string(L, fn, "doc", false);
    const char *dt = field_string(L, fn, "dtype", true);
    if (!parse_dtype(dt, &def->dtype))
        luaL_error(L, "%s('%s'): unknown dtype '%s' (dtypes: u8, i8, i16, i32, f32)", fn, name, dt);
    if (lua_getfield(L, 1, "shape") != LUA_TTABLE)
        luaL_error(L, "%s('%s'): field 'shape' must be a table of 1 to 4 positive integers", fn,
                   name);
    lua_Integer nd = luaL_len(L, -1);
    if (nd < 1 || nd > 4) luaL_error(L, "%s('%s'): shape has %I dimensions (1 to 4)", fn, name, nd);
    size_t count = 1;
    for (lua_Integer d = 1; d <= nd; d++) {
        int isint = 0;
        lua_Integer v = 0;
        if (lua_rawgeti(L, -1, d) == LUA_TNUMBER) v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 1 || v > (1 << 24))
            luaL_error(L, "%s('%s'): shape[%I] must be an integer in [1, 16777216]", fn, name, d);
        def->shape[d - 1] = (int32_t)v;
        count = count > SIZE_MAX / (size_t)v ? SIZE_MAX : count * (size_t)v;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    def->ndim = (int32_t)nd;
    return count;
}

static int l_observation(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, "polis.observation");
    lua_settop(L, 1);
    polis_obs_def def = {.write = polis__lua_tramp_obs};
    size_t count = obs_def_read(L, "polis.observation", &def);
    const char *name = def.name;
    size_t per_agent = count > SIZE_MAX / polis_dtype_size(def.dtype)
                           ? SIZE_MAX
                           : count * polis_dtype_size(def.dtype);
    int32_t n_agents = s->h->n_agents(s->ctx);
    uint64_t bytes = per_agent > UINT64_MAX / (uint64_t)(n_agents > 0 ? n_agents : 1)
                         ? UINT64_MAX
                         : (uint64_t)per_agent * (uint64_t)(n_agents > 0 ? n_agents : 1);
    /* the values come from write(agent, buf), write_all(buf) or a table read by the host */
    int fn = field_function(L, "polis.observation", "write", false);
    int all = field_function(L, "polis.observation", "write_all", false);
    int tbl = field_table(L, "polis.observation", name, "values");
    int given = (fn != LUA_NOREF) + (all != LUA_NOREF) + (tbl != LUA_NOREF);
    if (given != 1)
        return luaL_error(L,
                          "polis.observation('%s'): give one of 'write' (a function of agent "
                          "and buffer), 'write_all' (a function of every agent's buffer) and "
                          "'values' (a table), got %d",
                          name, given);
    /* write_all's buffer: every agent's slice, staged by the host and copied to each agent */
    uint64_t staged = all != LUA_NOREF ? bytes : 0;
    const char *what = lua_pushfstring(L, "polis.observation('%s')", name);
    polis__lua_engine_memory(L, s, what, bytes > UINT64_MAX - staged ? UINT64_MAX : bytes + staged);
    lua_pop(L, 1);
    polis__lua_cb *cb = cb_new(L, s, fn != LUA_NOREF ? fn : all != LUA_NOREF ? all : tbl, name);
    cb->dtype = def.dtype;
    cb->count = count;
    if (all != LUA_NOREF) {
        cb->source = POLIS__LUA_WRITE_ALL;
        cb->stage_bytes = (size_t)bytes;
        if (!(cb->stage = polis__alloc(s->env, cb->stage_bytes))) {
            polis__fail(s->env, POLIS_ERR_NOMEM, "out of memory");
            return polis__lua_raise_host(L, s, POLIS_ERR_NOMEM);
        }
    } else if (tbl != LUA_NOREF) {
        cb->source = POLIS__LUA_TABLE;
        registration_place(L, s, cb);
    }
    def.ud = cb;
    int32_t id = -1;
    int32_t rdim = -1, rn = 0;
    double *rlo = NULL, *rhi = NULL;
    if (lua_getfield(L, 1, "range") != LUA_TNIL)
        rn = obs_range_read(L, name, &def, &rdim, &rlo, &rhi);
    lua_pop(L, 1);
    polis_status st = s->h->observation(s->ctx, &def, &id);
    if (st == POLIS_OK && rn) st = s->h->obs_range(s->ctx, id, rdim, rn, rlo, rhi);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    s->env->lua->engine_bytes += (int64_t)(bytes + staged);
    lua_pushinteger(L, id);
    return 1;
}

/* polis.shared_observation: a field held once per env (host API "shared_observations"),
 * its values from write(buf) or a table the host reads (t[1..n]); checked as
 * polis.observation's, but a shared field declares no range and has no write_all. */
static int l_shared_observation(lua_State *L)
{
    static const char FN[] = "polis.shared_observation";
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return polis__lua_not_loading(L, FN);
    lua_settop(L, 1);
    polis_obs_def def = {.write = polis__lua_tramp_obs};
    size_t count = obs_def_read(L, FN, &def);
    const char *name = def.name;
    if (lua_getfield(L, 1, "range") != LUA_TNIL)
        return luaL_error(L,
                          "%s('%s'): a shared field declares no range (ranges are for per-agent "
                          "fields, polis.observation)",
                          FN, name);
    if (lua_getfield(L, 1, "write_all") != LUA_TNIL)
        return luaL_error(L,
                          "%s('%s'): 'write_all' is for per-agent fields; a shared field has one "
                          "buffer: give 'write' or 'values'",
                          FN, name);
    lua_settop(L, 1);
    int fn = field_function(L, FN, "write", false);
    int tbl = field_table(L, FN, name, "values");
    int given = (fn != LUA_NOREF) + (tbl != LUA_NOREF);
    if (given != 1)
        return luaL_error(L,
                          "%s('%s'): give one of 'write' (a function of the buffer) and 'values' "
                          "(a table of the field's elements), got %d",
                          FN, name, given);
    uint64_t bytes = count > SIZE_MAX / polis_dtype_size(def.dtype)
                         ? UINT64_MAX
                         : (uint64_t)count * polis_dtype_size(def.dtype);
    polis__lua_engine_memory(L, s, lua_pushfstring(L, "%s('%s')", FN, name), bytes);
    lua_pop(L, 1);
    const polis_shared_obs_api *api =
        s->h->host_api(s->ctx, POLIS_SHARED_OBS_API, POLIS_SHARED_OBS_API_VERSION);
    if (!api) return polis__lua_raise_host(L, s, POLIS_ERR_PLUGIN);
    polis__lua_cb *cb = cb_new(L, s, fn != LUA_NOREF ? fn : tbl, name);
    cb->dtype = def.dtype;
    cb->count = count;
    if (tbl != LUA_NOREF) {
        cb->source = POLIS__LUA_TABLE;
        registration_place(L, s, cb);
    }
    def.ud = cb;
    int32_t id = -1;
    polis_status st = api->field(s->ctx, &def, &id);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    s->env->lua->engine_bytes += (int64_t)bytes;
    lua_pushinteger(L, id);
    return 1;
}

/* polis.params: the definitions become a polis_param_def table over a struct of 8-byte
 * slots (int64_t, double, bool or const char *), validated by params.c like a plugin's. */
typedef struct params_read {
    const polis_param_def *defs;
    int32_t n;
    const uint8_t *values;
} params_read;

static int params_to_table(lua_State *L)
{
    const params_read *r = lua_touserdata(L, 1);
    lua_createtable(L, 0, r->n);
    for (int32_t i = 0; i < r->n; i++) {
        const uint8_t *slot = r->values + r->defs[i].offset;
        switch (r->defs[i].type) {
        case POLIS_PARAM_BOOL: {
            bool b;
            memcpy(&b, slot, sizeof b);
            lua_pushboolean(L, b);
            break;
        }
        case POLIS_PARAM_INT: {
            int64_t v;
            memcpy(&v, slot, sizeof v);
            lua_pushinteger(L, (lua_Integer)v);
            break;
        }
        case POLIS_PARAM_DOUBLE: {
            double v;
            memcpy(&v, slot, sizeof v);
            lua_pushnumber(L, v);
            break;
        }
        case POLIS_PARAM_STRING: {
            const char *v;
            memcpy(&v, slot, sizeof v);
            if (v)
                lua_pushstring(L, v);
            else
                lua_pushnil(L);
            break;
        }
        case POLIS_PARAM_JSON: lua_pushnil(L); break;
        }
        lua_setfield(L, -2, r->defs[i].key);
    }
    return 1;
}

static bool parse_param_type(const char *t, polis_param_type *out)
{
    static const struct {
        const char *name;
        polis_param_type t;
    } types[] = {{"int", POLIS_PARAM_INT},
                 {"double", POLIS_PARAM_DOUBLE},
                 {"bool", POLIS_PARAM_BOOL},
                 {"string", POLIS_PARAM_STRING}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcmp(types[i].name, t) == 0) {
            *out = types[i].t;
            return true;
        }
    }
    return false;
}

static const char *fmt_num(char buf[32], double v)
{
    snprintf(buf, 32, "%.14g", v);
    return buf;
}

/* Reads the optional number t[key] of parameter entry i. */
static double param_number(lua_State *L, lua_Integer i, const char *pkey, const char *key,
                           double dflt, bool integer)
{
    int t = lua_getfield(L, -1, key);
    double v = dflt;
    if (t == LUA_TNUMBER) {
        v = lua_tonumber(L, -1);
        if (integer && !lua_isinteger(L, -1) && v != floor(v))
            luaL_error(L, "polis.params: entry %I ('%s'): %s must be an integer", i, pkey, key);
    } else if (t != LUA_TNIL) {
        luaL_error(L, "polis.params: entry %I ('%s'): %s must be a number, got %s", i, pkey, key,
                   lua_typename(L, t));
    }
    lua_pop(L, 1);
    return v;
}

/* Frees what params_copy made: the values struct (its strings need the table), then the
 * table's strings and the table. */
static void params_copy_free(polis_env *env, polis_param_def *defs, int32_t n, size_t size,
                             void *values)
{
    polis__params_free(env, defs, n, size, values);
    if (!defs) return; /* none declared, or the copy's first allocation failed */
    for (int32_t i = 0; i < n; i++) {
        polis__strfree(env, (char *)defs[i].key);
        polis__strfree(env, (char *)defs[i].doc);
        polis__strfree(env, (char *)defs[i].def_str);
    }
    polis__free(env, defs, sizeof *defs * (size_t)n);
}

/* The declared table points into Lua strings that die with the call; describe needs the
 * table for the env's life, so the script keeps its own copy. */
static polis_status params_copy(polis_env *env, const polis_param_def *defs, int32_t n,
                                polis_param_def **out)
{
    *out = NULL;
    if (n == 0) return POLIS_OK;
    polis_param_def *own = polis__alloc(env, sizeof *own * (size_t)n);
    if (!own) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        own[i] = defs[i];
        own[i].key = polis__strdup(env, defs[i].key);
        own[i].doc = polis__strdup(env, defs[i].doc);
        own[i].def_str = polis__strdup(env, defs[i].def_str);
        if (!own[i].key || (defs[i].doc && !own[i].doc) || (defs[i].def_str && !own[i].def_str)) {
            params_copy_free(env, own, n, 0, NULL); /* later entries are still zeroed */
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        }
    }
    *out = own;
    return POLIS_OK;
}

void polis__lua_params_release(polis_env *env, polis_ctx *ctx)
{
    /* The table and struct are the script's own copies (params_copy), never a plugin's. */
    params_copy_free(env, (polis_param_def *)ctx->param_defs, ctx->n_param_defs, ctx->params_size,
                     ctx->params);
    ctx->param_defs = NULL;
    ctx->n_param_defs = 0;
    ctx->params_size = 0;
    ctx->params = NULL;
}

static int l_params(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading || s->env->state != POLIS__ENV_LOADING)
        return luaL_error(L, "polis.params: parameters can only be read while the script loads");
    /* One table per script, as a plugin has one: describe lists it and the scenario's
     * "params" is validated against it once. A call that failed declared nothing. */
    if (s->params_called)
        return luaL_error(L, "polis.params: the parameters are already declared (call it once, "
                             "with every parameter)");
    lua_settop(L, 1);
    lua_Integer n = luaL_len(L, 1);
    if (n < 0 || n > 256) return luaL_error(L, "polis.params: %I entries (at most 256)", n);
    size_t size = 8 * (size_t)(n ? n : 1);
    polis_param_def *defs = lua_newuserdatauv(L, sizeof *defs * (size_t)(n ? n : 1), 0); /* 2 */
    memset(defs, 0, sizeof *defs * (size_t)(n ? n : 1));
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 1, i) != LUA_TTABLE)
            return luaL_error(L, "polis.params: entry %I must be a table {key=, type=, ...}", i);
        polis_param_def *d = &defs[i - 1];
        d->key = field_string(L, "polis.params", "key", true);
        for (lua_Integer j = 0; j < i - 1; j++)
            if (strcmp(defs[j].key, d->key) == 0)
                return luaL_error(L, "polis.params: key '%s' is declared twice", d->key);
        const char *t = field_string(L, "polis.params", "type", true);
        if (!parse_param_type(t, &d->type))
            return luaL_error(L,
                              "polis.params: entry %I ('%s'): unknown type '%s' (types: int, "
                              "double, bool, string)",
                              i, d->key, t);
        d->doc = field_string(L, "polis.params", "doc", false);
        d->offset = 8 * (size_t)(i - 1);
        int rt = lua_getfield(L, -1, "required");
        if (rt != LUA_TNIL && rt != LUA_TBOOLEAN)
            return luaL_error(L, "polis.params: entry %I ('%s'): required must be a boolean", i,
                              d->key);
        d->required = lua_toboolean(L, -1);
        lua_pop(L, 1);
        bool integer = d->type == POLIS_PARAM_INT;
        double big = integer ? 9007199254740992.0 : HUGE_VAL;
        d->min = param_number(L, i, d->key, "min", -big, integer);
        d->max = param_number(L, i, d->key, "max", big, integer);
        char b1[32], b2[32];
        if (d->min > d->max)
            return luaL_error(L, "polis.params: entry %I ('%s'): min %s is above max %s", i, d->key,
                              fmt_num(b1, d->min), fmt_num(b2, d->max));
        int dt = lua_getfield(L, -1, "default");
        switch (d->type) {
        case POLIS_PARAM_BOOL:
            if (dt != LUA_TNIL && dt != LUA_TBOOLEAN)
                return luaL_error(L, "polis.params: entry %I ('%s'): default must be a boolean", i,
                                  d->key);
            d->def_num = lua_toboolean(L, -1) ? 1.0 : 0.0;
            lua_pop(L, 1);
            break;
        case POLIS_PARAM_STRING:
            if (dt != LUA_TNIL && dt != LUA_TSTRING)
                return luaL_error(L, "polis.params: entry %I ('%s'): default must be a string", i,
                                  d->key);
            lua_pop(L, 1);
            d->def_str = field_string(L, "polis.params", "default", false);
            break;
        default:
            lua_pop(L, 1);
            d->def_num = param_number(L, i, d->key, "default", 0.0, integer);
            if (dt != LUA_TNIL && d->def_num < d->min)
                return luaL_error(L, "polis.params: entry %I ('%s'): default %s is below min %s", i,
                                  d->key, fmt_num(b1, d->def_num), fmt_num(b2, d->min));
            if (dt != LUA_TNIL && d->def_num > d->max)
                return luaL_error(L, "polis.params: entry %I ('%s'): default %s is above max %s", i,
                                  d->key, fmt_num(b1, d->def_num), fmt_num(b2, d->max));
            if (dt == LUA_TNIL && !d->required && (0.0 < d->min || 0.0 > d->max))
                return luaL_error(L,
                                  "polis.params: entry %I ('%s'): give a default (0 is "
                                  "outside [%s, %s]) or required = true",
                                  i, d->key, fmt_num(b1, d->min), fmt_num(b2, d->max));
            break;
        }
        lua_pop(L, 1);
    }
    const char *jpath = lua_pushfstring(L, "%s.params", s->scn->jpath); /* 3 */
    polis_env *env = s->env;
    polis_param_def *own = NULL;
    void *values = NULL;
    polis_status st = params_copy(env, defs, (int32_t)n, &own);
    if (st == POLIS_OK)
        st = polis__params_build(env, own, (int32_t)n, size, s->scn->params, jpath, &values);
    if (st != POLIS_OK) {
        params_copy_free(env, own, (int32_t)n, size, values);
        return polis__lua_raise_host(L, s, st);
    }
    /* Reading the struct back allocates; a nested pcall frees the copies if that raises a
     * memory error, so only a call that returns leaves the parameters declared. */
    params_read r = {own, (int32_t)n, values};
    lua_pushcfunction(L, params_to_table);
    lua_pushlightuserdata(L, &r);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        params_copy_free(env, own, (int32_t)n, size, values);
        return lua_error(L);
    }
    polis_ctx *ctx = s->ctx;
    ctx->param_defs = own;
    ctx->n_param_defs = (int32_t)n;
    ctx->params_size = size;
    ctx->params = values;
    s->params_called = true;
    return 1;
}

/* ---- opening the library ---------------------------------------------------------------- */

static const luaL_Reg polis_funcs[] = {{"params", l_params},
                                       {"on", l_on},
                                       {"on_start", l_on_start},
                                       {"action", l_action},
                                       {"reward", l_reward},
                                       {"renderer", l_renderer},
                                       {"action_parser", l_action_parser},
                                       {"policy", l_policy},
                                       {"macro", l_macro},
                                       {"look", l_look},
                                       {"reward_transform", l_reward_transform},
                                       {"event", l_event},
                                       {"publish", polis__lua_publish},
                                       {"subscribe", l_subscribe},
                                       {"observation", l_observation},
                                       {"shared_observation", l_shared_observation},
                                       {"tick", polis__lua_tick},
                                       {"episode", polis__lua_episode},
                                       {"n_agents", polis__lua_n_agents},
                                       {"agent_name", polis__lua_agent_name},
                                       {"visible", polis__lua_visible},
                                       {"visibility_active", polis__lua_visibility_active},
                                       {"set_visible", polis__lua_set_visible},
                                       {"max_steps", polis__lua_max_steps},
                                       {"random", polis__lua_random},
                                       {"log", polis__lua_log},
                                       {"error", polis__lua_error},
                                       {"terminate", polis__lua_terminate},
                                       {"truncate", polis__lua_truncate},
                                       {"set_agent_order", polis__lua_set_agent_order},
                                       {"action_id", polis__lua_action_id},
                                       {"event_id", polis__lua_event_id},
                                       {"grid_configure", polis__lua_grid_configure},
                                       {"grid_layer", polis__lua_grid_layer},
                                       {"grid_size", polis__lua_grid_size},
                                       {"grid_get", polis__lua_grid_get},
                                       {"grid_set", polis__lua_grid_set},
                                       {"entity_create", polis__lua_entity_create},
                                       {"entity_destroy", polis__lua_entity_destroy},
                                       {"entity_alive", polis__lua_entity_alive},
                                       {"agent_entity", polis__lua_agent_entity},
                                       {"grid_view", polis__lua_grid_view},
                                       {"require", polis__lua_require},
                                       {"call", polis__lua_call},
                                       {NULL, NULL}};

static void new_view_type(lua_State *L, const char *tname, lua_CFunction get, lua_CFunction set,
                          lua_CFunction len)
{
    luaL_newmetatable(L, tname);
    lua_pushcfunction(L, get);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, set);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, len);
    lua_setfield(L, -2, "__len");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

/* Creates a view userdata, keyed in the registry by its own address. */
static void *new_view(lua_State *L, size_t size, const char *tname)
{
    void *v = lua_newuserdatauv(L, size, 0);
    memset(v, 0, size);
    luaL_setmetatable(L, tname);
    lua_pushlightuserdata(L, v);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return v;
}

void polis__lua_open_api(lua_State *L)
{
    luaL_newlib(L, polis_funcs);
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_pushcfunction(L, polis__lua_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, polis__lua_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_pushcfunction(L, polis__lua_log);
    lua_setglobal(L, "print");
    /* In the loaded table, so argument errors say "bad argument #1 to 'polis.on'". */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "polis");
    lua_pop(L, 1);
    lua_setglobal(L, "polis");
}

void polis__lua_open_views(lua_State *L, polis__lua_script *s)
{
    new_view_type(L, "polis.obsbuf", obs_index_get, obs_index_set, obs_len);
    new_view_type(L, "polis.rewards", reward_get, reward_set, reward_len);
    s->obs = new_view(L, sizeof *s->obs, "polis.obsbuf");
    lua_rawgetp(L, LUA_REGISTRYINDEX, s->obs); /* writers get it by reference (an array slot) */
    s->obs_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->rewards = new_view(L, sizeof *s->rewards, "polis.rewards");
}
