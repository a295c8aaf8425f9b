/*
 * engine/lua_api.c — the `polis` library the scripts call (docs/lua-api.md): registration
 * (polis.on, polis.action, polis.params, ...), the running-time calls (publish, random,
 * grid, entities, polis.call) and the observation-buffer and rewards views.
 *
 * Everything here runs on a script's state inside lua_host.c's protected boundary and keeps
 * its rules: a failed host call is raised with polis__lua_raise_host() only after the call
 * returned, and what a script registers reaches the engine as one of lua_host.c's
 * trampolines.
 */
/* realpath() (XSI), for the module directory's name in messages. */
#define _XOPEN_SOURCE 700
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua_host.h"

/* Callbacks whose payload fits here publish without touching the Lua allocator. */
#define PAYLOAD_STACK 512

/* ---- argument helpers -------------------------------------------------------------------- */

static int32_t check_i32(lua_State *L, int arg)
{
    lua_Integer v = luaL_checkinteger(L, arg);
    if (v < INT32_MIN || v > INT32_MAX)
        luaL_argerror(L, arg, lua_pushfstring(L, "%I does not fit in 32 bits", v));
    return (int32_t)v;
}

static int32_t check_agent(lua_State *L, polis__lua_script *s, int arg)
{
    lua_Integer a = luaL_checkinteger(L, arg);
    int32_t n = s->h->n_agents(s->ctx);
    if (a < 0 || a >= n)
        luaL_argerror(L, arg, lua_pushfstring(L, "agent %I is not in [0, %d]", a, (int)n - 1));
    return (int32_t)a;
}

static int not_loading(lua_State *L, const char *fn)
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
        luaL_error(L, "observation '%s': index must be an integer in [1, %d], got %s", v->cb->name,
                   (int)v->count,
                   lua_type(L, 2) == LUA_TNUMBER ? lua_tostring(L, 2) : luaL_typename(L, 2));
    if (i < 1 || (lua_Unsigned)i > v->count)
        luaL_error(L, "observation '%s': index %I is outside [1, %d]", v->cb->name, i,
                   (int)v->count);
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

static int obs_index_set(lua_State *L)
{
    polis__lua_obs_view *v = check_obs_view(L);
    size_t i = obs_index(L, v);
    const char *dn = polis_dtype_name(v->dtype);
    if (lua_type(L, 3) != LUA_TNUMBER)
        return luaL_error(L, "observation '%s'[%d] (agent %d): value must be a number, got %s",
                          v->cb->name, (int)i + 1, (int)v->agent, luaL_typename(L, 3));
    if (v->dtype == POLIS_DTYPE_F32) {
        double x = lua_tonumber(L, 3);
        if (!isfinite(x) || fabs(x) > FLT_MAX)
            return luaL_error(L, "observation '%s'[%d] (agent %d): %f is not a finite f32",
                              v->cb->name, (int)i + 1, (int)v->agent, x);
        ((float *)v->p)[i] = (float)x;
        return 0;
    }
    int isint;
    lua_Integer x = lua_tointegerx(L, 3, &isint);
    if (!isint)
        return luaL_error(L, "observation '%s'[%d] (agent %d): %s is not an integer (dtype %s)",
                          v->cb->name, (int)i + 1, (int)v->agent, lua_tostring(L, 3), dn);
    lua_Integer lo, hi;
    switch (v->dtype) {
    case POLIS_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case POLIS_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case POLIS_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    default: lo = INT32_MIN, hi = INT32_MAX; break;
    }
    if (x < lo || x > hi)
        return luaL_error(L,
                          "observation '%s'[%d] (agent %d): %I is outside the %s range [%I, "
                          "%I]",
                          v->cb->name, (int)i + 1, (int)v->agent, x, dn, lo, hi);
    switch (v->dtype) {
    case POLIS_DTYPE_U8: ((uint8_t *)v->p)[i] = (uint8_t)x; break;
    case POLIS_DTYPE_I8: ((int8_t *)v->p)[i] = (int8_t)x; break;
    case POLIS_DTYPE_I16: ((int16_t *)v->p)[i] = (int16_t)x; break;
    default: ((int32_t *)v->p)[i] = (int32_t)x; break;
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

static int l_on(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *phase_name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    int32_t prio = luaL_opt(L, check_i32, 3, 0);
    if (!s->loading) return not_loading(L, "polis.on");
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
    if (!s->loading) return not_loading(L, "polis.on_start");
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->start_ref);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    return 0;
}

static int l_action(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return not_loading(L, "polis.action");
    lua_settop(L, 1);
    const char *name = field_string(L, "polis.action", "name", true);
    const char *doc = field_string(L, "polis.action", "doc", false);
    int handler = field_function(L, "polis.action", "handler", true);
    int legal = field_function(L, "polis.action", "legal", false);
    polis__lua_cb *cb = cb_new(L, s, handler, name);
    cb->legal = legal;
    polis_action_def def = {.name = name,
                            .doc = doc,
                            .handler = polis__lua_tramp_action,
                            .legal = legal != LUA_NOREF ? polis__lua_tramp_legal : NULL,
                            .ud = cb};
    int32_t id = -1;
    polis_status st = s->h->action(s->ctx, &def, &id);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, id);
    return 1;
}

/* The shared start of polis.reward, renderer, action_parser and policy: the function
 * argument, the load-time rule (not_loading raises), and the callback record holding a
 * registry reference to the function. */
static polis__lua_cb *load_time_callback(lua_State *L, const char *api, int fn_arg,
                                         const char *name)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, fn_arg, LUA_TFUNCTION);
    if (!s->loading) not_loading(L, api);
    lua_pushvalue(L, fn_arg);
    return cb_new(L, s, luaL_ref(L, LUA_REGISTRYINDEX), name);
}

static int l_reward(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    polis__lua_cb *cb = load_time_callback(L, "polis.reward", 2, name);
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

static int l_reward_transform(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    int fn_arg = 3;
    int32_t prio = 0;
    if (lua_type(L, 2) == LUA_TFUNCTION)
        fn_arg = 2;
    else
        prio = check_i32(L, 2);
    luaL_checktype(L, fn_arg, LUA_TFUNCTION);
    if (!s->loading) return not_loading(L, "polis.reward_transform");
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
    if (!s->loading) return not_loading(L, "polis.event");
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
    int32_t prio = luaL_opt(L, check_i32, 3, 0);
    if (!s->loading) return not_loading(L, "polis.subscribe");
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

static int l_observation(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!s->loading) return not_loading(L, "polis.observation");
    lua_settop(L, 1);
    const char *name = field_string(L, "polis.observation", "name", true);
    const char *doc = field_string(L, "polis.observation", "doc", false);
    const char *dt = field_string(L, "polis.observation", "dtype", true);
    polis_obs_def def = {.name = name, .doc = doc, .write = polis__lua_tramp_obs};
    if (!parse_dtype(dt, &def.dtype))
        return luaL_error(L,
                          "polis.observation('%s'): unknown dtype '%s' (dtypes: u8, i8, i16, "
                          "i32, f32)",
                          name, dt);
    if (lua_getfield(L, 1, "shape") != LUA_TTABLE)
        return luaL_error(L,
                          "polis.observation('%s'): field 'shape' must be a table of 1 to 4 "
                          "positive integers",
                          name);
    lua_Integer nd = luaL_len(L, -1);
    if (nd < 1 || nd > 4)
        return luaL_error(L, "polis.observation('%s'): shape has %I dimensions (1 to 4)", name, nd);
    size_t count = 1;
    for (lua_Integer d = 1; d <= nd; d++) {
        int isint = 0;
        lua_Integer v = 0;
        if (lua_rawgeti(L, -1, d) == LUA_TNUMBER) v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 1 || v > (1 << 24))
            return luaL_error(L,
                              "polis.observation('%s'): shape[%I] must be an integer in [1, "
                              "16777216]",
                              name, d);
        def.shape[d - 1] = (int32_t)v;
        count *= (size_t)v;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    def.ndim = (int32_t)nd;
    int fn = field_function(L, "polis.observation", "write", true);
    polis__lua_cb *cb = cb_new(L, s, fn, name);
    cb->dtype = def.dtype;
    cb->count = count;
    def.ud = cb;
    int32_t id = -1;
    polis_status st = s->h->observation(s->ctx, &def, &id);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, id);
    return 1;
}

/* polis.params: the definitions become a polis_param_def table over a struct of 8-byte
 * slots (int64_t, double, bool or const char *), validated by config.c like a plugin's. */
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
    params_copy_free(env, (polis_param_def *)ctx->param_defs, ctx->n_param_defs,
                     ctx->params_size, ctx->params);
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

/* ---- polis.*: running --------------------------------------------------------------------- */

static bool to_integer(lua_State *L, int idx, lua_Integer *out)
{
    int isint = 0;
    *out = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &isint) : 0;
    return isint;
}

static int32_t resolve_event(lua_State *L, polis__lua_script *s, int arg)
{
    int32_t n = polis_env_n_event_types(s->env);
    if (lua_type(L, arg) == LUA_TNUMBER) {
        lua_Integer id;
        if (!to_integer(L, arg, &id) || id < 0 || id >= n)
            luaL_argerror(L, arg,
                          lua_pushfstring(L, "%s is not an event type id (0..%d)",
                                          lua_tostring(L, arg), (int)n - 1));
        return (int32_t)id;
    }
    const char *name = luaL_checkstring(L, arg);
    int32_t id = s->h->event_find(s->ctx, name);
    if (id < 0) luaL_argerror(L, arg, lua_pushfstring(L, "unknown event type '%s'", name));
    return id;
}

static int l_publish(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t type = resolve_event(L, s, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    polis_env *env = s->env;
    const char *ename = polis_env_event_name(env, type);
    int32_t nf = polis_env_event_n_fields(env, type);
    size_t size = polis_env_event_size(env, type);
    uint64_t stackbuf[PAYLOAD_STACK / sizeof(uint64_t)];
    uint8_t *payload =
        size <= sizeof stackbuf ? (uint8_t *)stackbuf : lua_newuserdatauv(L, size, 0);
    memset(payload, 0, size);
    for (int32_t i = 0; i < nf; i++) {
        const char *fname;
        polis_ftype t;
        size_t off;
        polis_env_event_field(env, type, i, &fname, &t, &off);
        int lt = lua_getfield(L, 2, fname);
        if (lt == LUA_TNIL)
            return luaL_error(L, "polis.publish('%s'): missing field '%s'", ename, fname);
        if (lt != LUA_TNUMBER)
            return luaL_error(L, "polis.publish('%s'): field '%s' must be a number, got %s", ename,
                              fname, lua_typename(L, lt));
        uint8_t *p = payload + off;
        if (t == POLIS_FIELD_I32 || t == POLIS_FIELD_I64) {
            lua_Integer v;
            if (!to_integer(L, -1, &v))
                return luaL_error(L, "polis.publish('%s'): field '%s' must be an integer, got %s",
                                  ename, fname, lua_tostring(L, -1));
            if (t == POLIS_FIELD_I32) {
                if (v < INT32_MIN || v > INT32_MAX)
                    return luaL_error(L,
                                      "polis.publish('%s'): field '%s' = %I does not fit in "
                                      "i32",
                                      ename, fname, v);
                int32_t x = (int32_t)v;
                memcpy(p, &x, sizeof x);
            } else {
                int64_t x = (int64_t)v;
                memcpy(p, &x, sizeof x);
            }
        } else {
            double v = lua_tonumber(L, -1);
            if (t == POLIS_FIELD_F32) {
                if (isfinite(v) && fabs(v) > FLT_MAX)
                    return luaL_error(L,
                                      "polis.publish('%s'): field '%s' = %f does not fit in "
                                      "f32",
                                      ename, fname, v);
                float x = (float)v;
                memcpy(p, &x, sizeof x);
            } else {
                memcpy(p, &v, sizeof v);
            }
        }
        lua_pop(L, 1);
    }
    /* A key that is not a field is almost always a misspelt one. */
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -1);
            for (int32_t i = 0; i < nf && !known; i++) {
                const char *fname;
                polis_env_event_field(env, type, i, &fname, NULL, NULL);
                known = strcmp(fname, k) == 0;
            }
        }
        if (!known) {
            lua_pushvalue(L, -1);
            return luaL_error(L, "polis.publish('%s'): '%s' is not a field of the event", ename,
                              luaL_tolstring(L, -1, NULL));
        }
    }
    polis_status st = s->h->publish(s->ctx, type, payload, size);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static int l_tick(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->tick(s->ctx));
    return 1;
}

static int l_episode(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->episode(s->ctx));
    return 1;
}

static int l_n_agents(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, s->h->n_agents(s->ctx));
    return 1;
}

static int l_agent_name(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushstring(L, s->h->agent_name(s->ctx, check_agent(L, s, 1)));
    return 1;
}

static int l_max_steps(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->max_steps(s->ctx));
    return 1;
}

static uint64_t rand64(polis_rng *r)
{
    uint64_t hi = polis_rng_next(r);
    return hi << 32 | polis_rng_next(r);
}

/* Uniform in [0, n]. */
static uint64_t rand_upto(polis_rng *r, uint64_t n)
{
    if (n < UINT32_MAX) return polis_rng_below(r, (uint32_t)n + 1);
    if (n == UINT32_MAX) return polis_rng_next(r);
    uint64_t mask = n;
    mask |= mask >> 1, mask |= mask >> 2, mask |= mask >> 4;
    mask |= mask >> 8, mask |= mask >> 16, mask |= mask >> 32;
    uint64_t x;
    while ((x = rand64(r) & mask) > n) {
    }
    return x;
}

/* math.random's contract (Lua 5.4 manual 6.7), drawn from the env generator. */
static int l_random(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    if (s->env->state == POLIS__ENV_LOADING || s->env->state == POLIS__ENV_FROZEN)
        return luaL_error(L, "random: the env generator is seeded by reset; draw random numbers "
                             "in callbacks, not while the script loads");
    polis_rng *r = s->in_policy ? s->h->policy_rng(s->ctx) : s->h->rng(s->ctx);
    lua_Integer low, up;
    switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, polis_rng_double(r)); return 1;
    case 1:
        low = 1;
        up = luaL_checkinteger(L, 1);
        if (up == 0) {
            lua_pushinteger(L, (lua_Integer)rand64(r));
            return 1;
        }
        break;
    case 2:
        low = luaL_checkinteger(L, 1);
        up = luaL_checkinteger(L, 2);
        break;
    default: return luaL_error(L, "wrong number of arguments");
    }
    luaL_argcheck(L, low <= up, 1, "interval is empty");
    uint64_t off = rand_upto(r, (uint64_t)up - (uint64_t)low);
    lua_pushinteger(L, (lua_Integer)((uint64_t)low + off));
    return 1;
}

static int l_randomseed(lua_State *L)
{
    return luaL_error(L, "math.randomseed is disabled: the env seed (given to reset) decides "
                         "every random number");
}

static int l_log(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, ' ');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    s->h->log(s->ctx, "%s", lua_tostring(L, -1));
    return 0;
}

static int l_error(lua_State *L)
{
    int level = (int)luaL_optinteger(L, 2, 1);
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    if (lua_type(L, 1) == LUA_TSTRING && level > 0) {
        luaL_where(L, level);
        lua_insert(L, 1);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int set_done(lua_State *L, bool terminate)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t a = check_agent(L, s, 1);
    const polis_io *io = s->h->io(s->ctx);
    if (s->env->state != POLIS__ENV_RUNNING || !io->terminations)
        return luaL_error(L, "polis.%s: only during an episode",
                          terminate ? "terminate" : "truncate");
    if (terminate)
        io->terminations[a] = 1;
    else
        io->truncations[a] = 1;
    return 0;
}

static int l_terminate(lua_State *L) { return set_done(L, true); }
static int l_truncate(lua_State *L) { return set_done(L, false); }

static int l_set_agent_order(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 1);
    int32_t max = s->h->n_agents(s->ctx);
    if (n < 0 || n > max)
        return luaL_error(L, "polis.set_agent_order: %I agents (at most %d)", n, (int)max);
    int32_t small[64];
    int32_t *order = n <= 64 ? small : lua_newuserdatauv(L, sizeof(int32_t) * (size_t)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        lua_Integer a;
        if (!to_integer(L, -1, &a) || a < 0 || a >= max)
            return luaL_error(L, "polis.set_agent_order: element %I is not an agent id (0..%d)", i,
                              (int)max - 1);
        order[i - 1] = (int32_t)a;
        lua_pop(L, 1);
    }
    polis_status st = s->h->set_agent_order(s->ctx, order, (int32_t)n);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static int l_action_id(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t id = s->h->action_find(s->ctx, luaL_checkstring(L, 1));
    if (id < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

static int l_event_id(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t id = s->h->event_find(s->ctx, luaL_checkstring(L, 1));
    if (id < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

/* ---- polis.*: grid ---------------------------------------------------------------------- */

static int l_grid_configure(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t w = check_i32(L, 1), h = check_i32(L, 2);
    bool wrap = lua_toboolean(L, 3);
    if (!s->loading) return not_loading(L, "polis.grid_configure");
    polis_status st = s->h->grid_configure(s->ctx, w, h, wrap);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static int l_grid_layer(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!s->loading) return not_loading(L, "polis.grid_layer");
    int32_t layer = -1;
    polis_status st = s->h->grid_layer(s->ctx, name, &layer);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, layer);
    return 1;
}

static const polis_grid *check_grid(lua_State *L, polis__lua_script *s, const char *fn)
{
    const polis_grid *g = s->h->grid(s->ctx);
    if (!g) luaL_error(L, "%s: the env has no grid", fn);
    return g;
}

static int l_grid_size(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const polis_grid *g = check_grid(L, s, "polis.grid_size");
    lua_pushinteger(L, g->width);
    lua_pushinteger(L, g->height);
    lua_pushboolean(L, g->wrap);
    return 3;
}

/* The cell (layer, x, y) from arguments 1..3; a torus wraps, a bounded grid refuses. */
static int32_t *grid_cell_arg(lua_State *L, polis__lua_script *s, const char *fn)
{
    const polis_grid *g = check_grid(L, s, fn);
    lua_Integer layer = luaL_checkinteger(L, 1);
    lua_Integer x = luaL_checkinteger(L, 2), y = luaL_checkinteger(L, 3);
    if (!g->cells) luaL_error(L, "%s: the grid has no cells until the first reset", fn);
    if (layer < 0 || layer >= g->layers)
        luaL_error(L, "%s: layer %I is not in [0, %d]", fn, layer, (int)g->layers - 1);
    if (g->wrap) {
        x %= g->width;
        if (x < 0) x += g->width;
        y %= g->height;
        if (y < 0) y += g->height;
    } else if (x < 0 || x >= g->width || y < 0 || y >= g->height) {
        luaL_error(L, "%s: (%I, %I) is outside the %dx%d grid", fn, x, y, (int)g->width,
                   (int)g->height);
    }
    return polis_grid_cell(g, (int32_t)layer, (int32_t)x, (int32_t)y);
}

static int l_grid_get(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, *grid_cell_arg(L, s, "polis.grid_get"));
    return 1;
}

static int l_grid_set(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t v = check_i32(L, 4);
    *grid_cell_arg(L, s, "polis.grid_set") = v;
    return 0;
}

/* polis.grid_view(buf, layer, x, y, facing, ahead, behind, left, right [, outside [, first]]):
 * the egocentric window of a layer, rotated so the agent at (x, y) facing `facing` (0 north,
 * 1 east, 2 south, 3 west) looks up, copied into an observation buffer in C. A window drawn
 * cell by cell from Lua costs one metamethod call per cell, which dominates a Lua game's
 * step (docs/performance.md, "commons"). */
static int l_grid_view(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis__lua_obs_view *v = lua_touserdata(L, 1);
    if (!v || v != s->obs) return luaL_typeerror(L, 1, "observation buffer");
    if (!v->p)
        return luaL_error(L, "polis.grid_view: the observation buffer is only valid while its "
                             "writer runs (do not keep it)");
    const polis_grid *g = check_grid(L, s, "polis.grid_view");
    lua_Integer layer = luaL_checkinteger(L, 2);
    lua_Integer x = luaL_checkinteger(L, 3), y = luaL_checkinteger(L, 4);
    lua_Integer facing = luaL_checkinteger(L, 5);
    lua_Integer span[4];
    static const char *const span_names[4] = {"ahead", "behind", "left", "right"};
    for (int k = 0; k < 4; k++) {
        span[k] = luaL_checkinteger(L, 6 + k);
        if (span[k] < 0 || span[k] > 4096)
            return luaL_argerror(
                L, 6 + k,
                lua_pushfstring(L, "%s = %I is not in [0, 4096]", span_names[k], span[k]));
    }
    lua_Integer outside = luaL_optinteger(L, 10, 0);
    lua_Integer first = luaL_optinteger(L, 11, 1);
    if (!g->cells)
        return luaL_error(L, "polis.grid_view: the grid has no cells until the first reset");
    if (layer < 0 || layer >= g->layers)
        return luaL_error(L, "polis.grid_view: layer %I is not in [0, %d]", layer,
                          (int)g->layers - 1);
    if (facing < 0 || facing > 3)
        return luaL_error(L,
                          "polis.grid_view: facing %I is not 0 (north), 1 (east), 2 (south) "
                          "or 3 (west)",
                          facing);
    if (x < INT32_MIN || x > INT32_MAX || y < INT32_MIN || y > INT32_MAX)
        return luaL_error(L, "polis.grid_view: (%I, %I) does not fit in 32 bits", x, y);
    lua_Integer rows = span[0] + 1 + span[1], cols = span[2] + 1 + span[3];
    if (first < 1 || (lua_Unsigned)(first - 1 + rows * cols) > v->count)
        return luaL_error(L,
                          "polis.grid_view: a %Ix%I window from element %I does not fit "
                          "observation '%s' (%d elements)",
                          rows, cols, first, v->cb->name, (int)v->count);
    lua_Integer lo, hi;
    switch (v->dtype) {
    case POLIS_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case POLIS_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case POLIS_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    default: lo = INT32_MIN, hi = INT32_MAX; break;
    }
    if (outside < lo || outside > hi)
        return luaL_error(L,
                          "polis.grid_view: outside value %I does not fit observation '%s' "
                          "(%s)",
                          outside, v->cb->name, polis_dtype_name(v->dtype));
    /* forward and right unit vectors of each facing */
    static const int fx[4] = {0, 1, 0, -1}, fy[4] = {-1, 0, 1, 0};
    int64_t ax = fx[facing], ay = fy[facing];
    int64_t rx = fx[(facing + 1) % 4], ry = fy[(facing + 1) % 4];
    int64_t w = g->width, h = g->height;
    const int32_t *base = g->cells + (size_t)layer * (size_t)w * (size_t)h;
    size_t i = (size_t)(first - 1);
    for (lua_Integer r = 0; r < rows; r++) {
        int64_t ahead = span[0] - r;
        /* the row's first cell, then one step to the right per column */
        int64_t x0 = x + ax * ahead - rx * span[2], y0 = y + ay * ahead - ry * span[2];
        int64_t x1 = x0 + rx * (cols - 1), y1 = y0 + ry * (cols - 1);
        bool inside = !g->wrap && x0 >= 0 && x0 < w && y0 >= 0 && y0 < h && x1 >= 0 && x1 < w &&
                      y1 >= 0 && y1 < h;
        int64_t cx = x0, cy = y0;
        if (inside && v->dtype == POLIS_DTYPE_U8) {
            /* the common case of a symbolic view: a row inside the map, bytes */
            const int32_t *src = base + y0 * w + x0;
            ptrdiff_t step = (ptrdiff_t)(ry * w + rx);
            uint8_t *dst = (uint8_t *)v->p + i;
            lua_Integer c = 0;
            for (; c < cols; c++, src += step) {
                if ((uint32_t)*src > UINT8_MAX) break;
                dst[c] = (uint8_t)*src;
            }
            if (c == cols) {
                i += (size_t)cols;
                continue;
            }
        }
        for (lua_Integer c = 0; c < cols; c++, i++, cx += rx, cy += ry) {
            int64_t val;
            if (inside) {
                val = base[cy * w + cx];
            } else if (g->wrap) {
                int64_t wx = cx % w, wy = cy % h;
                if (wx < 0) wx += w;
                if (wy < 0) wy += h;
                val = base[wy * w + wx];
            } else if (cx < 0 || cx >= w || cy < 0 || cy >= h) {
                val = outside;
            } else {
                val = base[cy * w + cx];
            }
            if (val < lo || val > hi) {
                int64_t ex = g->wrap ? ((cx % w) + w) % w : cx;
                int64_t ey = g->wrap ? ((cy % h) + h) % h : cy;
                return luaL_error(L,
                                  "polis.grid_view: cell (%I, %I) of layer %I holds %I, outside "
                                  "the %s range of observation '%s' (agent %d)",
                                  (lua_Integer)ex, (lua_Integer)ey, layer, (lua_Integer)val,
                                  polis_dtype_name(v->dtype), v->cb->name, (int)v->agent);
            }
            switch (v->dtype) {
            case POLIS_DTYPE_U8: ((uint8_t *)v->p)[i] = (uint8_t)val; break;
            case POLIS_DTYPE_I8: ((int8_t *)v->p)[i] = (int8_t)val; break;
            case POLIS_DTYPE_I16: ((int16_t *)v->p)[i] = (int16_t)val; break;
            case POLIS_DTYPE_I32: ((int32_t *)v->p)[i] = (int32_t)val; break;
            case POLIS_DTYPE_F32: ((float *)v->p)[i] = (float)val; break;
            }
        }
    }
    return 0;
}

/* ---- polis.*: entities ------------------------------------------------------------------ */

static int l_entity_create(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis_entity e = POLIS_ENTITY_NONE;
    polis_status st = s->h->entity_create(s->ctx, &e);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, (lua_Integer)e);
    return 1;
}

static int l_entity_destroy(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis_entity e = (polis_entity)luaL_checkinteger(L, 1);
    polis_status st = s->h->entity_destroy(s->ctx, e);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

static int l_entity_alive(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushboolean(L, s->h->entity_alive(s->ctx, (polis_entity)luaL_checkinteger(L, 1)));
    return 1;
}

static int l_agent_entity(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->agent_entity(s->ctx, check_agent(L, s, 1)));
    return 1;
}

/* ---- polis.call: plugin exports through libffi ------------------------------------------- */

static const char *ftype_name(polis__ftype t)
{
    static const char *const names[] = {"void", "i32", "i64", "f32", "f64", "bool", "str", "ctx"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static int l_call(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    const polis__ffi_fn *f;
    polis_status st = polis__ffi_lookup(s->env, name, &f);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    int32_t np = polis__ffi_nparams(f);
    int want = 0;
    for (int32_t i = 0; i < np; i++) want += polis__ffi_param(f, i) != POLIS__FT_CTX;
    int got = lua_gettop(L) - 1;
    if (got != want)
        return luaL_error(L, "polis.call('%s'): %s takes %d argument%s, got %d", name,
                          polis__ffi_signature(f), want, want == 1 ? "" : "s", got);
    polis__ffi_value args[POLIS__FFI_MAXARGS];
    int k = 0;
    for (int32_t i = 0; i < np; i++) {
        polis__ftype t = polis__ffi_param(f, i);
        if (t == POLIS__FT_CTX) continue;
        int idx = k + 2;
        polis__ffi_value *v = &args[k++];
        lua_Integer n;
        bool ok = true;
        switch (t) {
        case POLIS__FT_I32:
            ok = to_integer(L, idx, &n) && n >= INT32_MIN && n <= INT32_MAX;
            if (ok) v->i32 = (int32_t)n;
            break;
        case POLIS__FT_I64:
            ok = to_integer(L, idx, &n);
            if (ok) v->i64 = (int64_t)n;
            break;
        case POLIS__FT_F32:
            ok = lua_type(L, idx) == LUA_TNUMBER &&
                 !(isfinite(lua_tonumber(L, idx)) && fabs(lua_tonumber(L, idx)) > FLT_MAX);
            if (ok) v->f32 = (float)lua_tonumber(L, idx);
            break;
        case POLIS__FT_F64:
            ok = lua_type(L, idx) == LUA_TNUMBER;
            if (ok) v->f64 = lua_tonumber(L, idx);
            break;
        case POLIS__FT_BOOL:
            ok = lua_type(L, idx) == LUA_TBOOLEAN;
            if (ok) v->b = lua_toboolean(L, idx);
            break;
        case POLIS__FT_STR:
            ok = lua_type(L, idx) == LUA_TSTRING;
            if (ok) v->str = lua_tostring(L, idx);
            break;
        case POLIS__FT_VOID:
        case POLIS__FT_CTX: break;
        }
        if (!ok) {
            const char *got_s =
                lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx);
            return luaL_error(L, "polis.call('%s'): argument %d must be %s %s, got %s", name, k,
                              t == POLIS__FT_I32 ? "an" : "a", ftype_name(t), got_s);
        }
    }
    polis__ffi_value ret;
    st = polis__ffi_call(s->env, f, s->ctx, args, k, &ret);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    switch (polis__ffi_ret(f)) {
    case POLIS__FT_I32: lua_pushinteger(L, ret.i32); return 1;
    case POLIS__FT_I64: lua_pushinteger(L, (lua_Integer)ret.i64); return 1;
    case POLIS__FT_F32: lua_pushnumber(L, ret.f32); return 1;
    case POLIS__FT_F64: lua_pushnumber(L, ret.f64); return 1;
    case POLIS__FT_BOOL: lua_pushboolean(L, ret.b); return 1;
    case POLIS__FT_STR:
        if (ret.str)
            lua_pushstring(L, ret.str);
        else
            lua_pushnil(L);
        return 1;
    case POLIS__FT_VOID:
    case POLIS__FT_CTX: break;
    }
    return 0;
}

/* ---- polis.require: the engine's own Lua modules ---------------------------------------- */

#ifndef POLIS_LUA_SOURCE_DIR
#define POLIS_LUA_SOURCE_DIR ""
#endif
#ifndef POLIS_LUA_INSTALL_DIR
#define POLIS_LUA_INSTALL_DIR ""
#endif
#ifndef POLIS_LUA_REL_LIBDIR
#define POLIS_LUA_REL_LIBDIR "../share/polis/lua"
#endif
#ifndef POLIS_LUA_REL_BINDIR
#define POLIS_LUA_REL_BINDIR "../share/polis/lua"
#endif

/* Words of [a-z0-9_] joined by single dots, at most 64 bytes: a name can only reach a file
 * under the module directory (no '/', no "..", no absolute path, no other suffix). */
static bool valid_module_name(const char *name, size_t n)
{
    if (n == 0 || n > 64 || name[0] == '.' || name[n - 1] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c == '.') {
            if (name[i + 1] == '.') return false;
        } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            return false;
        }
    }
    return true;
}

/* The engine's Lua library directory: the one installed beside the running libpolis (or
 * the program it is linked into) first, so an installed or relocated polis uses its own
 * modules; then the source tree it was built from; then the configured install directory.
 * The first that has a "polis" subdirectory wins. Returns false and lists what was tried
 * in `tried` when none has. */
static bool module_dir(char *out, size_t cap, char *tried, size_t tried_cap)
{
    char self[PATH_MAX];
    char cand[3][PATH_MAX + 64];
    int n = 0;
    if (polis__self_dir(self, sizeof self)) {
        snprintf(cand[n++], sizeof cand[0], "%s/%s", self, POLIS_LUA_REL_LIBDIR);
        if (strcmp(POLIS_LUA_REL_LIBDIR, POLIS_LUA_REL_BINDIR) != 0)
            snprintf(cand[n++], sizeof cand[0], "%s/%s", self, POLIS_LUA_REL_BINDIR);
    }
    const char *fixed[2] = {POLIS_LUA_SOURCE_DIR, POLIS_LUA_INSTALL_DIR};
    tried[0] = '\0';
    for (int i = 0; i < n + 2; i++) {
        const char *dir = i < n ? cand[i] : fixed[i - n];
        if (!dir[0]) continue;
        char probe[PATH_MAX + 80];
        size_t dl = strlen(dir);
        if (dl + sizeof "/polis" > sizeof probe) continue;
        memcpy(probe, dir, dl);
        memcpy(probe + dl, "/polis", sizeof "/polis");
        size_t tl = strlen(tried);
        snprintf(tried + tl, tried_cap - tl, "%s%s", tl ? ", " : "", probe);
        if (access(probe, X_OK) != 0) continue;
        /* "<bin>/../share/polis/lua" reads better as the directory it is */
        char canon[PATH_MAX];
        const char *use = realpath(dir, canon) ? canon : dir;
        if ((size_t)snprintf(out, cap, "%s", use) < cap) return true;
    }
    return false;
}

static int l_require(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    size_t n;
    const char *name = luaL_checklstring(L, 1, &n);
    lua_settop(L, 1);
    if (!valid_module_name(name, n))
        return luaL_error(L,
                          "polis.require: '%s' is not a module name (words of a-z, 0-9 and _ "
                          "joined by dots, e.g. \"grid\")",
                          name);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, "polis.modules"); /* 2 */
    int t = lua_getfield(L, 2, name);                        /* 3 */
    if (t == LUA_TBOOLEAN && !lua_toboolean(L, 3))
        return luaL_error(L,
                          "polis.require: module '%s' is still loading (it requires itself, "
                          "directly or through another module, or it failed when first loaded)",
                          name);
    if (t != LUA_TNIL) return 1;
    if (!s->loading)
        return luaL_error(L,
                          "polis.require: module '%s' was not loaded while the script loaded "
                          "(require modules in the chunk or a polis.on_start function)",
                          name);
    char dir[PATH_MAX], tried[3 * PATH_MAX + 256];
    if (!module_dir(dir, sizeof dir, tried, sizeof tried))
        return luaL_error(L, "polis.require: cannot find the engine's Lua modules (tried %s)",
                          tried);
    char rel[80], path[PATH_MAX + 160];
    snprintf(rel, sizeof rel, "polis/%s.lua", name);
    for (char *p = rel + 6; *p; p++)
        if (*p == '.' && strcmp(p, ".lua") != 0) *p = '/';
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (access(path, R_OK) != 0)
        return luaL_error(L, "polis.require: no module '%s' (looked for %s)", name, path);
    char *text = NULL;
    size_t len = 0;
    polis_status st = polis__read_file(s->env, path, &text, &len);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    /* Messages name the module as "polis/grid.lua:12: ...", wherever it is installed. */
    char chunkname[96];
    snprintf(chunkname, sizeof chunkname, "@%s", rel);
    int rc = luaL_loadbufferx(L, text, len, chunkname, "t"); /* 4 */
    polis__free(s->env, text, len + 1);
    if (rc == LUA_ERRMEM) {
        /* lua_error would turn it into a script error: report it as what it is */
        if (s->limit_hit)
            return luaL_error(L,
                              "%s: memory limit of %I bytes exceeded (lua_memory_limit, shared "
                              "by the env's scripts)",
                              s->display, (lua_Integer)s->env->scn.lua_memory_limit);
        polis__fail(s->env, POLIS_ERR_NOMEM, "out of memory loading %s", rel);
        return polis__lua_raise_host(L, s, POLIS_ERR_NOMEM);
    }
    if (rc != LUA_OK) return lua_error(L);
    lua_pushboolean(L, 0);
    lua_setfield(L, 2, name);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, 2, name);
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
                                       {"reward_transform", l_reward_transform},
                                       {"event", l_event},
                                       {"publish", l_publish},
                                       {"subscribe", l_subscribe},
                                       {"observation", l_observation},
                                       {"tick", l_tick},
                                       {"episode", l_episode},
                                       {"n_agents", l_n_agents},
                                       {"agent_name", l_agent_name},
                                       {"max_steps", l_max_steps},
                                       {"random", l_random},
                                       {"log", l_log},
                                       {"error", l_error},
                                       {"terminate", l_terminate},
                                       {"truncate", l_truncate},
                                       {"set_agent_order", l_set_agent_order},
                                       {"action_id", l_action_id},
                                       {"event_id", l_event_id},
                                       {"grid_configure", l_grid_configure},
                                       {"grid_layer", l_grid_layer},
                                       {"grid_size", l_grid_size},
                                       {"grid_get", l_grid_get},
                                       {"grid_set", l_grid_set},
                                       {"entity_create", l_entity_create},
                                       {"entity_destroy", l_entity_destroy},
                                       {"entity_alive", l_entity_alive},
                                       {"agent_entity", l_agent_entity},
                                       {"grid_view", l_grid_view},
                                       {"require", l_require},
                                       {"call", l_call},
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
    lua_pushcfunction(L, l_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, l_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_log);
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
    s->rewards = new_view(L, sizeof *s->rewards, "polis.rewards");
}
