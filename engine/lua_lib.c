/*
 * engine/lua_lib.c — the standard library functions a polis script gets in bounded form.
 *
 * The instruction budget counts VM instructions, but one call of some library functions
 * does work without bound in a single instruction: string.rep of an empty string 2^34
 * times, table.move of 2^30 elements, a backtracking pattern. Each such function is replaced
 * here by one that charges its work to the running callback's limits (polis__lua_charge in
 * lua_host.c) before doing it, or piece by piece while doing it, so the instruction budget
 * and the wall-clock limit hold inside them too. Results and errors are those of Lua's own
 * functions; what is charged is listed in docs/lua-api.md ("Limits").
 */
#include <limits.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua_host.h"

/* Bytes produced or scanned per unit charged. */
#define BYTES_PER_UNIT 64
/* Elements table.move moves between two charges. */
#define MOVE_PIECE 4096

/* Calls the original function (upvalue 1) with this call's arguments. */
static int call_original(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* An integer argument the way Lua's own library reads it. */
static lua_Integer opt_int(lua_State *L, int arg, lua_Integer def)
{
    return lua_isnoneornil(L, arg) ? def : luaL_checkinteger(L, arg);
}

static int64_t units_of_bytes(uint64_t n)
{
    uint64_t u = n / BYTES_PER_UNIT + 1;
    return u > INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* ---- string ------------------------------------------------------------------------------- */

/* string.rep(s, n [, sep]): an empty result costs nothing (Lua's loop would still run n
 * times); otherwise the bytes it will produce. */
static int b_rep(lua_State *L)
{
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    uint64_t per = (uint64_t)l + (uint64_t)lsep;
    uint64_t total = per > UINT64_MAX / (uint64_t)n ? UINT64_MAX : per * (uint64_t)n;
    polis__lua_charge(L, units_of_bytes(total));
    return call_original(L);
}

/* string.byte(s, i, j): one unit per value returned. */
static int b_byte(lua_State *L)
{
    size_t l;
    luaL_checklstring(L, 1, &l);
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = opt_int(L, 3, i);
    if (i < 0) i = (lua_Integer)l + i + 1;
    if (j < 0) j = (lua_Integer)l + j + 1;
    if (i < 1) i = 1;
    if (j > (lua_Integer)l) j = (lua_Integer)l;
    if (j >= i) polis__lua_charge(L, (int64_t)(j - i + 1));
    return call_original(L);
}

/* ---- table -------------------------------------------------------------------------------- */

/* table.move(a1, f, e, t [, a2]): moved in pieces, charging each before it is moved, in the
 * order Lua's own moves them (backwards when the ranges overlap in the same table). */
static int b_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    lua_Integer t = luaL_checkinteger(L, 4);
    int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
    if (e < f || e - f < MOVE_PIECE) {
        if (e >= f) polis__lua_charge(L, (int64_t)(e - f + 1));
        return call_original(L);
    }
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    bool forward = t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ));
    for (lua_Integer done = 0; done < n;) {
        lua_Integer k = n - done < MOVE_PIECE ? n - done : MOVE_PIECE;
        lua_Integer from = forward ? f + done : e - done - k + 1;
        polis__lua_charge(L, (int64_t)k);
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_pushinteger(L, from);
        lua_pushinteger(L, from + k - 1);
        lua_pushinteger(L, t + (from - f));
        lua_pushvalue(L, tt);
        lua_call(L, 5, 0);
        done += k;
    }
    lua_pushvalue(L, tt);
    return 1;
}

/* A table argument as the table library takes it: a table, or a value whose metatable
 * has __index, __newindex and __len. Returns its length (luaL_len, so __len counts). */
static lua_Integer table_arg(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TTABLE) {
        int ok = 0;
        if (lua_getmetatable(L, 1)) {
            ok = lua_getfield(L, -1, "__index") != LUA_TNIL;
            ok &= lua_getfield(L, -2, "__newindex") != LUA_TNIL;
            ok &= lua_getfield(L, -3, "__len") != LUA_TNIL;
            lua_pop(L, 4);
        }
        if (!ok) luaL_checktype(L, 1, LUA_TTABLE);
    }
    return luaL_len(L, 1);
}

/* Shifts t[from + d] into t[from] for from = a, a + step, ... (count of them), charging
 * every piece. */
static void shift(lua_State *L, lua_Integer a, lua_Integer count, int step)
{
    for (lua_Integer done = 0; done < count; done++) {
        if (done % MOVE_PIECE == 0)
            polis__lua_charge(L, count - done < MOVE_PIECE ? count - done : MOVE_PIECE);
        lua_Integer i = a + step * done;
        lua_geti(L, 1, i + step);
        lua_seti(L, 1, i);
    }
}

/* table.insert(t, [pos,] v) and table.remove(t [, pos]): one unit per element shifted. */
static int b_insert(lua_State *L)
{
    lua_Integer e = table_arg(L);
    e = (lua_Integer)((lua_Unsigned)e + 1u); /* first empty element */
    lua_Integer pos;
    switch (lua_gettop(L)) {
    case 2: pos = e; break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        shift(L, e, e - pos, -1); /* t[i] = t[i - 1] for i = e down to pos + 1 */
        break;
    default: return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, pos);
    return 0;
}

static int b_remove(lua_State *L)
{
    lua_Integer size = table_arg(L);
    lua_Integer pos = opt_int(L, 2, size);
    if (pos != size)
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 2,
                      "position out of bounds");
    lua_geti(L, 1, pos);
    if (pos < size) shift(L, pos, size - pos, 1); /* t[i] = t[i + 1] for i = pos .. size - 1 */
    lua_pushnil(L);
    lua_seti(L, 1, pos < size ? size : pos);
    return 1;
}

/* table.concat(t, sep, i, j) and table.unpack(t, i, j): one unit per element (the bytes
 * produced are charged by the allocator). */
static int b_concat(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer i = opt_int(L, 3, 1);
        lua_Integer j = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
        if (j >= i) polis__lua_charge(L, j - i >= INT64_MAX ? INT64_MAX : (int64_t)(j - i) + 1);
    }
    return call_original(L);
}

static int b_unpack(lua_State *L)
{
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = lua_isnoneornil(L, 3) ? luaL_len(L, 1) : luaL_checkinteger(L, 3);
    if (j >= i) polis__lua_charge(L, j - i >= INT64_MAX ? INT64_MAX : (int64_t)(j - i) + 1);
    return call_original(L);
}

/* table.sort(t [, comp]): n log2 n units up front (a Lua comparator's own instructions are
 * counted as it runs). */
static int b_sort(lua_State *L)
{
    lua_Integer n = luaL_len(L, 1);
    if (n > 1) {
        int64_t lg = 1;
        while (lg < 63 && ((lua_Integer)1 << lg) < n) lg++;
        polis__lua_charge(L, n > INT64_MAX / lg ? INT64_MAX : (int64_t)n * lg);
    }
    return call_original(L);
}

/* ---- utf8 --------------------------------------------------------------------------------- */

/* utf8.len(s, i, j) and utf8.codepoint(s, i, j): the bytes they decode. */
static int b_utf8_span(lua_State *L, lua_Integer def_j)
{
    size_t l;
    luaL_checklstring(L, 1, &l);
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = opt_int(L, 3, def_j);
    if (i < 0) i = (lua_Integer)l + i + 1;
    if (j < 0) j = (lua_Integer)l + j + 1;
    if (i < 1) i = 1;
    if (j > (lua_Integer)l) j = (lua_Integer)l;
    if (j >= i) polis__lua_charge(L, units_of_bytes((uint64_t)(j - i + 1)));
    return call_original(L);
}

static int b_utf8_len(lua_State *L)
{
    return b_utf8_span(L, -1);
}

static int b_utf8_codepoint(lua_State *L)
{
    /* one value per byte at most: charge them as values */
    size_t l;
    luaL_checklstring(L, 1, &l);
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = opt_int(L, 3, i);
    if (i < 0) i = (lua_Integer)l + i + 1;
    if (j < 0) j = (lua_Integer)l + j + 1;
    if (i < 1) i = 1;
    if (j > (lua_Integer)l) j = (lua_Integer)l;
    if (j >= i) polis__lua_charge(L, (int64_t)(j - i + 1));
    return call_original(L);
}

/* utf8.offset(s, n, i): scans up to the whole string. */
static int b_utf8_offset(lua_State *L)
{
    size_t l;
    luaL_checklstring(L, 1, &l);
    polis__lua_charge(L, units_of_bytes(l));
    return call_original(L);
}

/* ---- installing --------------------------------------------------------------------------- */

static void replace(lua_State *L, const char *lib, const char *name, lua_CFunction fn)
{
    lua_getglobal(L, lib);
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void polis__lua_open_bounded(lua_State *L)
{
    replace(L, LUA_STRLIBNAME, "rep", b_rep);
    replace(L, LUA_STRLIBNAME, "byte", b_byte);
    replace(L, LUA_TABLIBNAME, "move", b_move);
    replace(L, LUA_TABLIBNAME, "insert", b_insert);
    replace(L, LUA_TABLIBNAME, "remove", b_remove);
    replace(L, LUA_TABLIBNAME, "concat", b_concat);
    replace(L, LUA_TABLIBNAME, "unpack", b_unpack);
    replace(L, LUA_TABLIBNAME, "sort", b_sort);
    replace(L, LUA_UTF8LIBNAME, "len", b_utf8_len);
    replace(L, LUA_UTF8LIBNAME, "codepoint", b_utf8_codepoint);
    replace(L, LUA_UTF8LIBNAME, "offset", b_utf8_offset);
}
