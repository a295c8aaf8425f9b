/*
 * engine/lua/lua_lib.c — the standard library functions a polis script gets in bounded form.
 *
 * The instruction budget counts VM instructions, but one call of some library functions
 * does work without bound in a single instruction: string.rep of an empty string 2^34
 * times, table.move of 2^30 elements, a backtracking pattern. Each such function is replaced
 * here by one that charges its work to the running callback's limits (polis__lua_charge in
 * lua_host.c) before doing it, or piece by piece while doing it, so the instruction budget
 * and the wall-clock limit hold inside them too. Results and errors are those of Lua's own
 * functions; what is charged is listed in docs/lua-api.md ("Limits").
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/internal.h"

/* Bytes produced or scanned per unit charged. */
#define BYTES_PER_UNIT 64
/* Elements table.move moves between two charges. */
#define MOVE_PIECE 4096
/* The most values a Lua stack holds (LUAI_MAXSTACK). */
#define STACK_MAX 1000000

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

/* The number of integers in [i, j] as units (saturated; 0 when j < i). */
static int64_t span(lua_Integer i, lua_Integer j)
{
    if (j < i) return 0;
    lua_Unsigned d = (lua_Unsigned)j - (lua_Unsigned)i;
    return d >= (lua_Unsigned)INT64_MAX ? INT64_MAX : (int64_t)d + 1;
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

/* The bytes of s[i..j] that string.byte, utf8.len and utf8.codepoint read: s is argument 1,
 * i and j arguments 2 and 3 (negative counts from the end), clamped to the string as Lua
 * clamps them; i defaults to 1, j to i when j_is_i, else to def_j. 0 for an empty span. */
static lua_Integer string_span(lua_State *L, bool j_is_i, lua_Integer def_j)
{
    size_t l;
    luaL_checklstring(L, 1, &l);
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = opt_int(L, 3, j_is_i ? i : def_j);
    if (i < 0) i = (lua_Integer)l + i + 1;
    if (j < 0) j = (lua_Integer)l + j + 1;
    if (i < 1) i = 1;
    if (j > (lua_Integer)l) j = (lua_Integer)l;
    return j >= i ? j - i + 1 : 0;
}

/* string.byte(s, i, j): one unit per value returned. */
static int b_byte(lua_State *L)
{
    lua_Integer n = string_span(L, true, 0);
    if (n) polis__lua_charge(L, (int64_t)n);
    return call_original(L);
}

/* ---- patterns ----------------------------------------------------------------------------- */

/* string.find, match, gmatch and gsub, on a backtracking matcher of polis's own that counts
 * its steps (one per pattern item tried, per character a repetition or %b scans) and
 * charges them every PATTERN_PIECE steps: a pattern that backtracks without end meets the
 * instruction budget and the clock like a loop does. The patterns are Lua 5.4's (manual
 * §6.4.1), with the same captures, errors and recursion limit. */

#define PATTERN_PIECE 1024
#define PATTERN_DEPTH 200 /* nested repetitions and captures, as Lua allows */
#define CAP_OPEN (-1)     /* a capture still open */
#define CAP_POS (-2)      /* a position capture "()" */
#define MAX_CAPTURES 32   /* as Lua's own string library */

typedef struct pmatch {
    lua_State *L;
    const char *s0, *s_end; /* subject */
    const char *p_end;      /* pattern end */
    int64_t steps;          /* not yet charged */
    int depth;
    int ncap;
    struct {
        const char *at;
        ptrdiff_t len; /* or CAP_OPEN, CAP_POS */
    } cap[MAX_CAPTURES];
} pmatch;

static void pm_step(pmatch *m, int64_t n)
{
    m->steps += n;
    if (m->steps >= PATTERN_PIECE) {
        int64_t k = m->steps;
        m->steps = 0;
        polis__lua_charge(m->L, k);
    }
}

/* Does character c belong to class letter cl ("%a", "%D", ...; other letters and symbols
 * stand for themselves)? */
static bool in_class(int c, int cl)
{
    bool r;
    switch (cl | 0x20) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    case 'z': r = c == 0; break; /* deprecated in Lua 5.2, still accepted */
    default: return cl == c;
    }
    return isupper(cl) ? !r : r;
}

/* The end of the single-character class starting at p ("x", "%a", "[...]"). */
static const char *class_end(pmatch *m, const char *p)
{
    char first = *p++;
    if (first == '%') {
        if (p >= m->p_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (first != '[') return p;
    if (p < m->p_end && *p == '^') p++;
    /* a ']' right after '[' or '[^' is a member, not the end */
    for (bool first_member = true;; first_member = false) {
        if (p >= m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
        char c = *p++;
        if (c == ']' && !first_member) return p;
        if (c == '%') {
            if (p >= m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
            p++;
        }
    }
}

/* c in the set [ ... ] spanning p (at '[') to last (at the closing ']'). */
static bool in_set(int c, const char *p, const char *last)
{
    bool negate = p[1] == '^';
    p += negate ? 2 : 1;
    for (; p < last; p++) {
        if (*p == '%' && p + 1 < last) {
            p++;
            if (in_class(c, (unsigned char)*p)) return !negate;
        } else if (p + 2 < last && p[1] == '-') {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return !negate;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return !negate;
        }
    }
    return negate;
}

/* Does the subject character at s match the class p..ep? */
static bool one(const pmatch *m, const char *s, const char *p, const char *ep)
{
    if (s >= m->s_end) return false;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return true;
    case '%': return in_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *pm_match(pmatch *m, const char *s, const char *p);

static const char *pm_capture(pmatch *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->ncap >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->cap[m->ncap].at = s;
    m->cap[m->ncap].len = what;
    m->ncap++;
    const char *r = pm_match(m, s, p);
    if (!r) m->ncap--;
    return r;
}

static const char *pm_close(pmatch *m, const char *s, const char *p)
{
    int open = m->ncap - 1;
    while (open >= 0 && m->cap[open].len != CAP_OPEN) open--;
    if (open < 0) luaL_error(m->L, "invalid pattern capture");
    m->cap[open].len = s - m->cap[open].at;
    const char *r = pm_match(m, s, p);
    if (!r) m->cap[open].len = CAP_OPEN;
    return r;
}

/* Greedy repetition of p..ep from s (at least `min` times), then the rest after ep. */
static const char *pm_greedy(pmatch *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t n = 0;
    while (one(m, s + n, p, ep)) {
        n++;
        pm_step(m, 1);
    }
    for (; n >= 0; n--) {
        const char *r = pm_match(m, s + n, ep + 1);
        if (r) return r;
    }
    return NULL;
}

static const char *pm_lazy(pmatch *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = pm_match(m, s, ep + 1);
        if (r) return r;
        if (!one(m, s, p, ep)) return NULL;
        s++;
    }
}

/* %bxy at s: the end of the balanced span, or NULL. */
static const char *pm_balance(pmatch *m, const char *s, const char *p)
{
    if (p + 1 >= m->p_end) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->s_end || *s != p[0]) return NULL;
    int open = 1;
    for (const char *q = s + 1; q < m->s_end; q++) {
        pm_step(m, 1);
        if (*q == p[1]) {
            if (--open == 0) return q + 1;
        } else if (*q == p[0]) {
            open++;
        }
    }
    return NULL;
}

static const char *pm_match(pmatch *m, const char *s, const char *p)
{
    if (++m->depth > PATTERN_DEPTH) luaL_error(m->L, "pattern too complex");
    const char *r = NULL;
    for (;;) {
        pm_step(m, 1);
        if (p >= m->p_end) {
            r = s;
            break;
        }
        if (*p == '(') {
            r = p + 1 < m->p_end && p[1] == ')' ? pm_capture(m, s, p + 2, CAP_POS)
                                                : pm_capture(m, s, p + 1, CAP_OPEN);
            break;
        }
        if (*p == ')') {
            r = pm_close(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->p_end) {
            r = s == m->s_end ? s : NULL;
            break;
        }
        if (*p == '%' && p + 1 < m->p_end && p[1] == 'b') {
            s = pm_balance(m, s, p + 2);
            if (!s) break;
            p += 4;
            continue;
        }
        if (*p == '%' && p + 1 < m->p_end && p[1] == 'f') {
            p += 2;
            if (p >= m->p_end || *p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
            const char *ep = class_end(m, p);
            int prev = s == m->s0 ? 0 : (unsigned char)s[-1];
            int cur = s < m->s_end ? (unsigned char)*s : 0;
            if (in_set(prev, p, ep - 1) || !in_set(cur, p, ep - 1)) break;
            p = ep;
            continue;
        }
        if (*p == '%' && p + 1 < m->p_end && isdigit((unsigned char)p[1])) {
            int k = p[1] - '1';
            if (k < 0 || k >= m->ncap || m->cap[k].len == CAP_OPEN)
                luaL_error(m->L, "invalid capture index %%%d", k + 1);
            if (m->cap[k].len == CAP_POS) break; /* a position matches no text */
            size_t len = (size_t)m->cap[k].len;
            pm_step(m, (int64_t)(len / BYTES_PER_UNIT));
            if ((size_t)(m->s_end - s) < len || memcmp(m->cap[k].at, s, len) != 0) break;
            s += len;
            p += 2;
            continue;
        }
        const char *ep = class_end(m, p);
        char q = ep < m->p_end ? *ep : '\0';
        if (!one(m, s, p, ep)) {
            if (q == '*' || q == '?' || q == '-') { /* zero repetitions will do */
                p = ep + 1;
                continue;
            }
            break;
        }
        if (q == '?') {
            r = pm_match(m, s + 1, ep + 1);
            if (r) break;
            p = ep + 1;
            continue;
        }
        if (q == '+') {
            r = pm_greedy(m, s + 1, p, ep);
            break;
        }
        if (q == '*') {
            r = pm_greedy(m, s, p, ep);
            break;
        }
        if (q == '-') {
            r = pm_lazy(m, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    m->depth--;
    return r;
}

/* Pushes capture i of the match s..e (the whole match when the pattern has none). */
static void push_capture(pmatch *m, int i, const char *s, const char *e)
{
    if (i >= m->ncap) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        lua_pushlstring(m->L, s, (size_t)(e - s));
        return;
    }
    ptrdiff_t len = m->cap[i].len;
    if (len == CAP_OPEN) luaL_error(m->L, "unfinished capture");
    if (len == CAP_POS)
        lua_pushinteger(m->L, (lua_Integer)(m->cap[i].at - m->s0) + 1);
    else
        lua_pushlstring(m->L, m->cap[i].at, (size_t)len);
}

/* Pushes the captures (or the whole match when there are none and s is not NULL). */
static int push_captures(pmatch *m, const char *s, const char *e)
{
    int n = m->ncap == 0 && s ? 1 : m->ncap;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

static void pm_init(pmatch *m, lua_State *L, const char *s, size_t ls, const char *p_end)
{
    m->L = L;
    m->s0 = s;
    m->s_end = s + ls;
    m->p_end = p_end;
    m->steps = 0;
    m->depth = 0;
    m->ncap = 0;
}

/* Starts the next attempt: the captures of a failed one are dropped. */
static const char *pm_try(pmatch *m, const char *s, const char *p)
{
    m->ncap = 0;
    m->depth = 0;
    return pm_match(m, s, p);
}

/* Lua's reading of a start position: negative counts from the end, out of range clamps. */
static size_t start_index(lua_Integer pos, size_t len)
{
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

static bool has_specials(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (strchr("^$*+?.([%-", p[i]) && p[i] != '\0') return true;
    return false;
}

static int find_or_match(lua_State *L, bool find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    pmatch m;
    pm_init(&m, L, s, ls, p + lp);
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        /* plain search: one step per position, and the bytes compared */
        for (size_t at = init; lp <= ls - at; at++) {
            pm_step(&m, 1 + (int64_t)(lp / BYTES_PER_UNIT));
            if (memcmp(s + at, p, lp) == 0) {
                lua_pushinteger(L, (lua_Integer)at + 1);
                lua_pushinteger(L, (lua_Integer)(at + lp));
                return 2;
            }
        }
        luaL_pushfail(L);
        return 1;
    }
    bool anchor = lp > 0 && *p == '^';
    if (anchor) p++;
    const char *at = s + init;
    do {
        const char *e = pm_try(&m, at, p);
        if (e) {
            if (!find) return push_captures(&m, at, e);
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(e - s));
            return push_captures(&m, NULL, NULL) + 2;
        }
    } while (at++ < m.s_end && !anchor);
    luaL_pushfail(L);
    return 1;
}

static int b_find(lua_State *L) { return find_or_match(L, true); }

static int b_match(lua_State *L) { return find_or_match(L, false); }

/* gmatch's iterator: upvalues subject, pattern, and the state (next position, end of the
 * last match or -1). */
typedef struct gm_state {
    size_t next;
    ptrdiff_t last;
} gm_state;

static int gmatch_next(lua_State *L)
{
    size_t ls, lp;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls);
    const char *p = lua_tolstring(L, lua_upvalueindex(2), &lp);
    gm_state *g = lua_touserdata(L, lua_upvalueindex(3));
    pmatch m;
    pm_init(&m, L, s, ls, p + lp);
    for (size_t at = g->next; at <= ls; at++) {
        const char *e = pm_try(&m, s + at, p);
        if (e && e - s != g->last) {
            g->next = (size_t)(e - s);
            g->last = e - s;
            return push_captures(&m, s + at, e);
        }
    }
    g->next = ls + 1;
    return 0;
}

static int b_gmatch(lua_State *L)
{
    size_t ls;
    luaL_checklstring(L, 1, &ls);
    luaL_checkstring(L, 2);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) init = ls + 1;
    lua_settop(L, 2);
    gm_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    g->next = init;
    g->last = -1;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* Appends the replacement of the match s..e to b; false when the match is kept as it was. */
static bool add_replacement(pmatch *m, luaL_Buffer *b, const char *s, const char *e, int tr)
{
    lua_State *L = m->L;
    if (tr == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (tr == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        size_t lr;
        const char *r = lua_tolstring(L, 3, &lr);
        const char *r_end = r + lr;
        pm_step(m, (int64_t)(lr / BYTES_PER_UNIT));
        while (r < r_end) {
            const char *pct = memchr(r, '%', (size_t)(r_end - r));
            if (!pct) {
                luaL_addlstring(b, r, (size_t)(r_end - r));
                break;
            }
            luaL_addlstring(b, r, (size_t)(pct - r));
            pct++;
            if (pct < r_end && *pct == '%') {
                luaL_addchar(b, '%');
            } else if (pct < r_end && isdigit((unsigned char)*pct)) {
                if (*pct == '0')
                    luaL_addlstring(b, s, (size_t)(e - s));
                else {
                    push_capture(m, *pct - '1', s, e);
                    luaL_tolstring(L, -1, NULL);
                    lua_remove(L, -2);
                    luaL_addvalue(b);
                }
            } else {
                luaL_error(L, "invalid use of '%%' in replacement string");
            }
            r = pct + 1;
        }
        return true;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return false;
    }
    if (!lua_isstring(L, -1))
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return true;
}

static int b_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int tr = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(
        L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
        "string/function/table");
    const char *p_end = p + lp;
    bool anchor = lp > 0 && *p == '^';
    if (anchor) p++;
    pmatch m;
    pm_init(&m, L, src, ls, p_end);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *last = NULL;
    lua_Integer n = 0;
    bool changed = false;
    while (n < max) {
        const char *e = pm_try(&m, src, p);
        if (e && e != last) {
            n++;
            changed = add_replacement(&m, &b, src, e, tr) || changed;
            src = last = e;
        } else if (src < m.s_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.s_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
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
    if (span(f, e) <= MOVE_PIECE) {
        polis__lua_charge(L, span(f, e));
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
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, /* as Lua 5.4.4 */
                      "position out of bounds");
    lua_geti(L, 1, pos);
    if (pos < size) shift(L, pos, size - pos, 1); /* t[i] = t[i + 1] for i = pos .. size - 1 */
    lua_pushnil(L);
    lua_seti(L, 1, pos < size ? size : pos);
    return 1;
}

/* table.concat(t, sep, i, j) and table.unpack(t, i, j): one unit per element, at most as
 * many as the table holds (concat stops at the first missing one; the bytes it produces
 * are charged by the allocator) or the stack can take (unpack refuses more before any
 * work), so an absurd range still gets Lua's own error. */
static int b_concat(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer i = opt_int(L, 3, 1);
        lua_Integer j = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
        int64_t n = span(i, j), held = (int64_t)lua_rawlen(L, 1) + 1;
        polis__lua_charge(L, n < held ? n : held);
    }
    return call_original(L);
}

static int b_unpack(lua_State *L)
{
    lua_Integer i = opt_int(L, 2, 1);
    lua_Integer j = lua_isnoneornil(L, 3) ? luaL_len(L, 1) : luaL_checkinteger(L, 3);
    int64_t n = span(i, j);
    polis__lua_charge(L, n < STACK_MAX ? n : STACK_MAX);
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

/* utf8.len(s, i, j) and utf8.codepoint(s, i, j): the bytes they decode (string_span). */
static int b_utf8_len(lua_State *L)
{
    lua_Integer n = string_span(L, false, -1);
    if (n) polis__lua_charge(L, units_of_bytes((uint64_t)n));
    return call_original(L);
}

static int b_utf8_codepoint(lua_State *L)
{
    /* one value per byte at most: charge them as values */
    lua_Integer n = string_span(L, true, 0);
    if (n) polis__lua_charge(L, (int64_t)n);
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
    replace(L, LUA_STRLIBNAME, "find", b_find);
    replace(L, LUA_STRLIBNAME, "match", b_match);
    replace(L, LUA_STRLIBNAME, "gmatch", b_gmatch);
    replace(L, LUA_STRLIBNAME, "gsub", b_gsub);
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
