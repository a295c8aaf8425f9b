/*
 * engine/lua/lua_run.c — the running-time half of the `polis` library the scripts call
 * (docs/lua-api.md): publish, random, grid, entities, polis.call and polis.require. The
 * registration calls, the views and the table that installs all of these are in lua_api.c.
 *
 * Everything here runs on a script's state inside lua_host.c's protected boundary and keeps
 * its rules: a failed host call is raised with polis__lua_raise_host() only after the call
 * returned.
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

#include "ffi/internal.h"
#include "lua/internal.h"

/* Callbacks whose payload fits here publish without touching the Lua allocator. */
#define PAYLOAD_STACK 512

/* ---- argument helpers -------------------------------------------------------------------- */

static int32_t check_agent(lua_State *L, polis__lua_script *s, int arg)
{
    lua_Integer a = luaL_checkinteger(L, arg);
    int32_t n = s->h->n_agents(s->ctx);
    if (a < 0 || a >= n)
        luaL_argerror(L, arg, lua_pushfstring(L, "agent %I is not in [0, %d]", a, (int)n - 1));
    return (int32_t)a;
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

int polis__lua_publish(lua_State *L)
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
    /* A key that is not a field is almost always a misspelt one. Every field was found, so
     * a table with as many keys as fields has no other: only then are the keys compared. */
    int32_t keys = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pop(L, 1);
        keys++;
    }
    lua_pushnil(L);
    while (keys > nf && lua_next(L, 2)) {
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

int polis__lua_tick(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->tick(s->ctx));
    return 1;
}

int polis__lua_episode(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, (lua_Integer)s->h->episode(s->ctx));
    return 1;
}

int polis__lua_n_agents(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, s->h->n_agents(s->ctx));
    return 1;
}

int polis__lua_agent_name(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushstring(L, s->h->agent_name(s->ctx, check_agent(L, s, 1)));
    return 1;
}

/* polis.visible(observer, target) and polis.set_visible(observer, target, state) through the
 * "visibility" host API (plugin.h), as a .so game asks. */
static const polis_visibility_api *vis_api(lua_State *L, polis__lua_script *s)
{
    /* the engine's API tables are static: looked up (by name) once per script */
    if (s->vis_api) return s->vis_api;
    const polis_visibility_api *v =
        s->h->host_api(s->ctx, POLIS_VISIBILITY_API, POLIS_VISIBILITY_API_VERSION);
    if (!v) luaL_error(L, "%s", polis_env_error(s->env));
    s->vis_api = v;
    return v;
}

int polis__lua_visible(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t o = check_agent(L, s, 1), t = check_agent(L, s, 2);
    lua_pushboolean(L, vis_api(L, s)->visible(s->ctx, o, t));
    return 1;
}

int polis__lua_visibility_active(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushboolean(L, vis_api(L, s)->active(s->ctx));
    return 1;
}

int polis__lua_set_visible(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_Integer o = luaL_checkinteger(L, 1), t = luaL_checkinteger(L, 2);
    int32_t state;
    if (lua_type(L, 3) == LUA_TBOOLEAN)
        state = lua_toboolean(L, 3) ? POLIS_VISIBILITY_SHOWN : POLIS_VISIBILITY_HIDDEN;
    else if (lua_isnoneornil(L, 3))
        state = POLIS_VISIBILITY_RULES;
    else
        return luaL_argerror(L, 3, "expected true (shown), false (hidden) or nil (the rules)");
    int32_t n = s->h->n_agents(s->ctx);
    if (o < -1 || o >= n)
        luaL_argerror(L, 1, lua_pushfstring(L, "observer %I is not in [-1, %d]", o, (int)n - 1));
    if (t < -1 || t >= n)
        luaL_argerror(L, 2, lua_pushfstring(L, "target %I is not in [-1, %d]", t, (int)n - 1));
    polis_status st = vis_api(L, s)->set(s->ctx, (int32_t)o, (int32_t)t, state);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

int polis__lua_max_steps(lua_State *L)
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
int polis__lua_random(lua_State *L)
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

int polis__lua_randomseed(lua_State *L)
{
    return luaL_error(L, "math.randomseed is disabled: the env seed (given to reset) decides "
                         "every random number");
}

int polis__lua_log(lua_State *L)
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
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (memchr(text, '\0', len)) {
        /* The log takes C strings: an embedded NUL is written as \0, not an end. */
        luaL_Buffer e;
        luaL_buffinit(L, &e);
        for (size_t i = 0; i < len; i++) {
            if (text[i])
                luaL_addchar(&e, text[i]);
            else
                luaL_addstring(&e, "\\0");
        }
        luaL_pushresult(&e);
        text = lua_tostring(L, -1);
    }
    s->h->log(s->ctx, "%s", text);
    return 0;
}

int polis__lua_error(lua_State *L)
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

int polis__lua_terminate(lua_State *L) { return set_done(L, true); }
int polis__lua_truncate(lua_State *L) { return set_done(L, false); }

int polis__lua_set_agent_order(lua_State *L)
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

/* The id a host lookup found, or nil for an unknown name (-1). */
static int push_found_id(lua_State *L, int32_t id)
{
    if (id < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

int polis__lua_action_id(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    return push_found_id(L, s->h->action_find(s->ctx, luaL_checkstring(L, 1)));
}

int polis__lua_event_id(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    return push_found_id(L, s->h->event_find(s->ctx, luaL_checkstring(L, 1)));
}

/* ---- polis.*: grid ---------------------------------------------------------------------- */

int polis__lua_grid_configure(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t w = polis__lua_check_i32(L, 1), h = polis__lua_check_i32(L, 2);
    bool wrap = lua_toboolean(L, 3);
    if (!s->loading) return polis__lua_not_loading(L, "polis.grid_configure");
    polis_status st = s->h->grid_configure(s->ctx, w, h, wrap);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

int polis__lua_grid_layer(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    const char *name = luaL_checkstring(L, 1);
    if (!s->loading) return polis__lua_not_loading(L, "polis.grid_layer");
    /* A new layer of a grid whose size is known adds width x height cells. */
    polis_env *env = s->env;
    uint64_t bytes = 0;
    bool known = false;
    for (int32_t i = 0; i < env->n_layers; i++) known |= strcmp(env->layer_names[i], name) == 0;
    if (!known && env->grid_sized) {
        bytes = sizeof(int32_t) * (uint64_t)env->grid.width * (uint64_t)env->grid.height;
        polis__lua_engine_memory(L, s, lua_pushfstring(L, "polis.grid_layer('%s')", name), bytes);
        lua_pop(L, 1);
    }
    int32_t layer = -1;
    polis_status st = s->h->grid_layer(s->ctx, name, &layer);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    env->lua->engine_bytes += (int64_t)bytes;
    lua_pushinteger(L, layer);
    return 1;
}

static const polis_grid *check_grid(lua_State *L, polis__lua_script *s, const char *fn)
{
    const polis_grid *g = s->h->grid(s->ctx);
    if (!g) luaL_error(L, "%s: the env has no grid", fn);
    return g;
}

int polis__lua_grid_size(lua_State *L)
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

int polis__lua_grid_get(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushinteger(L, *grid_cell_arg(L, s, "polis.grid_get"));
    return 1;
}

int polis__lua_grid_set(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    int32_t v = polis__lua_check_i32(L, 4);
    *grid_cell_arg(L, s, "polis.grid_set") = v;
    return 0;
}

/* luaL_checkinteger with its call saved when the argument is an integer (grid_view takes
 * nine per agent and step); otherwise the library's own check and message. */
static inline lua_Integer int_arg(lua_State *L, int arg)
{
    int isint = 0;
    lua_Integer v = lua_tointegerx(L, arg, &isint);
    return isint ? v : luaL_checkinteger(L, arg);
}

/* Narrows [*on, *off) to the steps c of a row whose coordinate p0 + d * c (d one of -1, 0,
 * 1) lies in [0, n); an empty result has *off <= *on. */
static void clip_span(int64_t p0, int64_t d, int64_t n, int64_t *on, int64_t *off)
{
    int64_t a = 0, b = 0; /* d == 0 and p0 off the map: nothing */
    if (d == 0 && p0 >= 0 && p0 < n) return;
    if (d > 0) a = -p0, b = n - p0;
    if (d < 0) a = p0 - n + 1, b = p0 + 1;
    if (a > *on) *on = a;
    if (b < *off) *off = b;
}

/* polis.grid_view's common case, a symbolic (u8) view of a bounded map. A row of the window
 * runs along the facing's right vector, so the same columns of every row lie on the map
 * along it, and a row's line either crosses the map or misses it: the clipping is worked out
 * once, not per row. The cells are copied without a test each and OR'ed together; false
 * when a value does not fit a byte (the caller's cell-by-cell loop then writes the window
 * again and names the cell). */
static bool view_bytes(uint8_t *dst, const int32_t *base, int64_t w, int64_t h, int64_t x,
                       int64_t y, int64_t ax, int64_t ay, int64_t rx, int64_t ry,
                       const lua_Integer span[4], uint8_t outside)
{
    int64_t rows = span[0] + 1 + span[1], cols = span[2] + 1 + span[3];
    /* the first row's first cell; each row starts one step behind the one before */
    int64_t x0 = x + ax * span[0] - rx * span[2], y0 = y + ay * span[0] - ry * span[2];
    int64_t on = 0, off = cols; /* the columns on the map, in a row that crosses it */
    if (rx != 0)
        clip_span(x0, rx, w, &on, &off);
    else
        clip_span(y0, ry, h, &on, &off);
    if (on > cols) on = cols;
    if (off < on) off = on;
    ptrdiff_t step = (ptrdiff_t)(ry * w + rx);
    uint32_t seen = 0;
    for (int64_t r = 0; r < rows; r++, dst += cols, x0 -= ax, y0 -= ay) {
        int64_t across = rx != 0 ? y0 : x0, n = rx != 0 ? h : w; /* the row's line */
        if (on == off || across < 0 || across >= n) {
            memset(dst, outside, (size_t)cols);
            continue;
        }
        if (on > 0) memset(dst, outside, (size_t)on); /* no call for the usual nothing */
        const int32_t *src = base + (y0 + ry * on) * w + (x0 + rx * on);
        for (int64_t c = on; c < off; c++, src += step) {
            uint32_t val = (uint32_t)*src;
            seen |= val;
            dst[c] = (uint8_t)val;
        }
        if (off < cols) memset(dst + off, outside, (size_t)(cols - off));
    }
    return seen <= UINT8_MAX;
}

/* Element i of an observation view, a value already checked against its dtype. */
static void store_cell(const polis__lua_obs_view *v, size_t i, int64_t val)
{
    switch (v->dtype) {
    case POLIS_DTYPE_U8: ((uint8_t *)v->p)[i] = (uint8_t)val; break;
    case POLIS_DTYPE_I8: ((int8_t *)v->p)[i] = (int8_t)val; break;
    case POLIS_DTYPE_I16: ((int16_t *)v->p)[i] = (int16_t)val; break;
    case POLIS_DTYPE_I32: ((int32_t *)v->p)[i] = (int32_t)val; break;
    case POLIS_DTYPE_F32: ((float *)v->p)[i] = (float)val; break;
    }
}

/* polis.grid_view(buf, layer, x, y, facing, ahead, behind, left, right [, outside [, first
 * [, center]]]): the egocentric window of a layer, rotated so the agent at (x, y) facing
 * `facing` (0 north, 1 east, 2 south, 3 west) looks up, copied into an observation buffer in
 * C; `center`, when given, is written in place of the layer's value at (x, y). A window drawn
 * cell by cell from Lua costs one metamethod call per cell, which dominates a Lua game's
 * step (docs/performance-log.md, "commons"). */
int polis__lua_grid_view(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis__lua_obs_view *v = lua_touserdata(L, 1);
    if (!v || v != s->obs) return luaL_typeerror(L, 1, "observation buffer");
    if (!v->p)
        return luaL_error(L, "polis.grid_view: the observation buffer is only valid while its "
                             "writer runs (do not keep it)");
    const polis_grid *g = check_grid(L, s, "polis.grid_view");
    lua_Integer layer = int_arg(L, 2);
    lua_Integer x = int_arg(L, 3), y = int_arg(L, 4);
    lua_Integer facing = int_arg(L, 5);
    lua_Integer span[4];
    static const char *const span_names[4] = {"ahead", "behind", "left", "right"};
    for (int k = 0; k < 4; k++) {
        span[k] = int_arg(L, 6 + k);
        if (span[k] < 0 || span[k] > 4096)
            return luaL_argerror(
                L, 6 + k,
                lua_pushfstring(L, "%s = %I is not in [0, 4096]", span_names[k], span[k]));
    }
    lua_Integer outside = lua_isnoneornil(L, 10) ? 0 : int_arg(L, 10);
    lua_Integer first = lua_isnoneornil(L, 11) ? 1 : int_arg(L, 11);
    bool has_center = !lua_isnoneornil(L, 12);
    lua_Integer center = has_center ? int_arg(L, 12) : 0;
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
                          "%s '%s' (%d elements)",
                          rows, cols, first, polis__lua_obs_kind(v), v->cb->name, (int)v->count);
    /* in a write_all buffer the window stays in one agent's slice */
    if ((size_t)(first - 1) / v->stride != (size_t)(first - 2 + rows * cols) / v->stride)
        return luaL_error(
            L,
            "polis.grid_view: a %Ix%I window from element %I runs from agent "
            "%d's elements of observation '%s' into agent %d's (%d elements each)",
            rows, cols, first, (int)polis__lua_obs_agent(v, (size_t)(first - 1)), v->cb->name,
            (int)polis__lua_obs_agent(v, (size_t)(first - 2 + rows * cols)), (int)v->stride);
    lua_Integer lo, hi;
    switch (v->dtype) {
    case POLIS_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case POLIS_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case POLIS_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    default: lo = INT32_MIN, hi = INT32_MAX; break;
    }
    if (outside < lo || outside > hi)
        return luaL_error(L,
                          "polis.grid_view: outside value %I does not fit %s '%s' "
                          "(%s)",
                          outside, polis__lua_obs_kind(v), v->cb->name, polis_dtype_name(v->dtype));
    if (has_center && (center < lo || center > hi))
        return luaL_error(L,
                          "polis.grid_view: center value %I does not fit %s '%s' "
                          "(%s)",
                          center, polis__lua_obs_kind(v), v->cb->name, polis_dtype_name(v->dtype));
    /* forward and right unit vectors of each facing */
    static const int fx[4] = {0, 1, 0, -1}, fy[4] = {-1, 0, 1, 0};
    int64_t ax = fx[facing], ay = fy[facing];
    int64_t rx = fx[(facing + 1) % 4], ry = fy[(facing + 1) % 4];
    int64_t w = g->width, h = g->height;
    const int32_t *base = g->cells + (size_t)layer * (size_t)w * (size_t)h;
    size_t i = (size_t)(first - 1);
    /* the common case in one pass; a value that does not fit a byte leaves the window to the
     * loop below, which names the cell */
    bool done =
        !g->wrap && v->dtype == POLIS_DTYPE_U8 &&
        view_bytes((uint8_t *)v->p + i, base, w, h, x, y, ax, ay, rx, ry, span, (uint8_t)outside);
    for (lua_Integer r = 0; r < rows && !done; r++) {
        int64_t ahead = span[0] - r;
        /* the row's first cell, then one step to the right per column */
        int64_t x0 = x + ax * ahead - rx * span[2], y0 = y + ay * ahead - ry * span[2];
        int64_t cx = x0, cy = y0;
        int64_t x1 = x0 + rx * (cols - 1), y1 = y0 + ry * (cols - 1);
        bool inside = !g->wrap && x0 >= 0 && x0 < w && y0 >= 0 && y0 < h && x1 >= 0 && x1 < w &&
                      y1 >= 0 && y1 < h;
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
                if (v->agent < 0)
                    return luaL_error(L,
                                      "polis.grid_view: cell (%I, %I) of layer %I holds %I, "
                                      "outside the %s range of shared observation '%s'",
                                      (lua_Integer)ex, (lua_Integer)ey, layer, (lua_Integer)val,
                                      polis_dtype_name(v->dtype), v->cb->name);
                return luaL_error(L,
                                  "polis.grid_view: cell (%I, %I) of layer %I holds %I, outside "
                                  "the %s range of observation '%s' (agent %d)",
                                  (lua_Integer)ex, (lua_Integer)ey, layer, (lua_Integer)val,
                                  polis_dtype_name(v->dtype), v->cb->name,
                                  (int)polis__lua_obs_agent(v, i));
            }
            store_cell(v, i, val);
        }
    }
    if (has_center) store_cell(v, (size_t)(first - 1) + (size_t)(span[0] * cols + span[2]), center);
    return 0;
}

/* ---- polis.*: entities ------------------------------------------------------------------ */

int polis__lua_entity_create(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis_entity e = POLIS_ENTITY_NONE;
    polis_status st = s->h->entity_create(s->ctx, &e);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    lua_pushinteger(L, (lua_Integer)e);
    return 1;
}

int polis__lua_entity_destroy(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    polis_entity e = (polis_entity)luaL_checkinteger(L, 1);
    polis_status st = s->h->entity_destroy(s->ctx, e);
    if (st != POLIS_OK) return polis__lua_raise_host(L, s, st);
    return 0;
}

int polis__lua_entity_alive(lua_State *L)
{
    polis__lua_script *s = polis__lua_script_of(L);
    lua_pushboolean(L, s->h->entity_alive(s->ctx, (polis_entity)luaL_checkinteger(L, 1)));
    return 1;
}

int polis__lua_agent_entity(lua_State *L)
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

int polis__lua_call(lua_State *L)
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
        case POLIS__FT_CTX:
        case POLIS__FT_PTR: break; /* polis__ffi_lookup refuses exports taking pointers */
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
    case POLIS__FT_CTX:
    case POLIS__FT_PTR: break;
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

int polis__lua_require(lua_State *L)
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
