/*
 * engine/core/json.c — JSON text for the engine: parsing with cJSON, the checks cJSON does not
 * make, JSON paths, and typed reads whose messages name the path and the value found.
 * config.c (the scenario schema) and params.c (parameter tables, the polis_json wrappers)
 * read the tree through these; engine/core/json.h lists them.
 *
 * Where memory comes from: cJSON allocates its nodes with the C library's malloc. The only
 * way to redirect it, cJSON_InitHooks, sets process-wide state, which polis does not touch.
 * So the JSON tree lives in the C heap, and only while an env is being created: env.c
 * releases it (cJSON_Delete in polis__scenario_release_json) before create returns, on
 * success and on failure. Everything the env keeps — the scenario fields, names, paths,
 * parameter structs, the polis_json wrappers — comes from the env's allocator.
 *
 * cJSON accepts repeated member names and numbers that overflow to infinity, and reports a
 * syntax error only as a position; check_tree and syntax_error add what the engine needs.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

const char *src_of(const polis_env *env) { return env->scn.source ? env->scn.source : "<string>"; }

polis_status nomem(polis_env *env) { return polis__fail(env, POLIS_ERR_NOMEM, "out of memory"); }

/* ---- bounded string building ------------------------------------------------------------ */

static void sb_putn(strbuf *b, const char *s, size_t n)
{
    if (b->cap > 0 && b->len + 1 < b->cap) {
        size_t room = b->cap - 1 - b->len;
        memcpy(b->s + b->len, s, n < room ? n : room);
        b->s[b->len + (n < room ? n : room)] = '\0';
    }
    b->len += n;
}

void sb_puts(strbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(strbuf *b, const char *fmt, ...) POLIS_PRINTF(2, 3);
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Drops what was appended after `mark`. */
static void sb_cut(strbuf *b, size_t mark)
{
    b->len = mark;
    if (mark < b->cap) b->s[mark] = '\0';
}

/* Integral values print exactly (a seed of 2^53 is not "9.00719925474099e+15"); others the
 * way cJSON prints them, which does not depend on the C locale's decimal separator. */
static void fmt_number(char out[40], double v)
{
    if (!isfinite(v)) {
        snprintf(out, 40, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    } else if (v == floor(v) && fabs(v) < 1e21) {
        snprintf(out, 40, "%.0f", v);
    } else {
        cJSON num;
        memset(&num, 0, sizeof num);
        num.type = cJSON_Number;
        num.valuedouble = v;
        if (!cJSON_PrintPreallocated(&num, out, 40, 0)) snprintf(out, 40, "%g", v);
    }
}

static size_t utf8_boundary(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    return n;
}

static void sb_json_string(strbuf *b, const char *s)
{
    sb_putn(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\r': sb_puts(b, "\\r"); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                sb_printf(b, "\\u%04x", *p);
            else
                sb_putn(b, (const char *)p, 1);
        }
        if (b->cap && b->len > b->cap) return;
    }
    sb_putn(b, "\"", 1);
}

/* Compact JSON of a value; stops early once a fixed buffer is full (never while measuring,
 * cap 0). */
static void sb_json_value(strbuf *b, const cJSON *n)
{
    char num[40];
    switch (n->type & 0xFF) {
    case cJSON_False: sb_puts(b, "false"); return;
    case cJSON_True: sb_puts(b, "true"); return;
    case cJSON_NULL: sb_puts(b, "null"); return;
    case cJSON_Number:
        fmt_number(num, n->valuedouble);
        sb_puts(b, num);
        return;
    case cJSON_String: sb_json_string(b, n->valuestring ? n->valuestring : ""); return;
    case cJSON_Array:
    case cJSON_Object: {
        bool obj = (n->type & 0xFF) == cJSON_Object;
        sb_putn(b, obj ? "{" : "[", 1);
        for (const cJSON *c = n->child; c; c = c->next) {
            if (c != n->child) sb_putn(b, ",", 1);
            if (obj) {
                sb_json_string(b, c->string ? c->string : "");
                sb_putn(b, ":", 1);
            }
            if (b->cap && b->len > b->cap) return;
            sb_json_value(b, c);
        }
        sb_putn(b, obj ? "}" : "]", 1);
        return;
    }
    default: sb_puts(b, "?"); return;
    }
}

/* ---- JSON paths --------------------------------------------------------------------------- */

static bool plain_key(const char *k)
{
    if (!k[0]) return false;
    for (const char *p = k; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* Appends a member step: `.key`, or `["key"]` when the key would make the path ambiguous. */
static void sb_path_key(strbuf *b, const char *key)
{
    if (plain_key(key)) {
        if (b->len > 0) sb_putn(b, ".", 1);
        sb_puts(b, key);
    } else {
        sb_putn(b, "[", 1);
        sb_json_string(b, key);
        sb_putn(b, "]", 1);
    }
}

/* Writes base plus one step (a member `key`, or element `index` when key is NULL) into dst,
 * cut at cap, and returns the full length; cap 0 only measures. */
size_t path_write(char *dst, size_t cap, const char *base, const char *key, int64_t index)
{
    strbuf b = {dst, cap, 0};
    if (cap) dst[0] = '\0';
    sb_puts(&b, base ? base : "");
    if (key)
        sb_path_key(&b, key);
    else
        sb_printf(&b, "[%" PRId64 "]", index);
    return b.len;
}

/* base + one step, into a message-sized buffer. */
const char *path_step(char out[PATH_CAP], const char *base, const char *key, int64_t index)
{
    path_write(out, PATH_CAP, base, key, index);
    return out;
}

/* "<source>: <path>: <what>" with POLIS_ERR_CONFIG. */
polis_status cfg_fail(polis_env *env, const char *path, const char *fmt, ...)
{
    char what[POLIS_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return polis__fail(env, POLIS_ERR_CONFIG, "%s: %s: %s", src_of(env), path && *path ? path : TOP,
                       what);
}

/* A value for the "got ..." part of a message: compact JSON, cut with "..." when long. */
const char *got(char out[GOT_CAP + 8], const cJSON *n)
{
    strbuf b = {out, GOT_CAP + 8, 0};
    sb_json_value(&b, n);
    if (b.len > GOT_CAP) memcpy(out + utf8_boundary(out, GOT_CAP - 3), "...", 4);
    return out;
}

/* "<path>: expected <what>, got <value>", or "<path>: missing (expected <what>)" for an
 * absent value (NULL). */
polis_status mismatch(polis_env *env, const char *path, const cJSON *n, const char *fmt, ...)
{
    char what[POLIS_ERRMAX / 2], g[GOT_CAP + 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!n) return cfg_fail(env, path, "missing (expected %s)", what);
    return cfg_fail(env, path, "expected %s, got %s", what, got(g, n));
}

/* ---- reading the tree ----------------------------------------------------------------------- */

bool is_comment_key(const char *k) { return k && k[0] == '_'; }

bool is_object(const cJSON *n) { return n && (n->type & 0xFF) == cJSON_Object; }

bool is_container(const cJSON *n) { return is_object(n) || (n && (n->type & 0xFF) == cJSON_Array); }

/* check_tree has refused repeated names, so the first match is the only one. */
const cJSON *member(const cJSON *obj, const char *key)
{
    return is_object(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* ---- syntax errors -------------------------------------------------------------------------- */

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Columns count characters (UTF-8 lead bytes), not bytes. */
static void line_col(const char *t, size_t at, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < at; i++) {
        if (t[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)t[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* The text at `at` up to the end of its line (24 bytes at most), quoted, control bytes
 * escaped. */
static const char *excerpt(const char *t, size_t len, size_t at, char out[128])
{
    strbuf b = {out, 128, 0};
    out[0] = '\0';
    sb_putn(&b, "'", 1);
    size_t end = at;
    while (end < len && end - at < 24 && t[end] != '\n' && t[end] != '\r') end++;
    if (end < len && t[end] != '\n' && t[end] != '\r') end = at + utf8_boundary(t + at, end - at);
    for (size_t i = at; i < end; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c < 0x20 || c == 0x7f)
            sb_printf(&b, "\\x%02x", c);
        else
            sb_putn(&b, t + i, 1);
    }
    if (end < len && t[end] != '\n' && t[end] != '\r') sb_puts(&b, "...");
    sb_putn(&b, "'", 1);
    return out;
}

static polis_status syntax_fail(polis_env *env, const char *t, size_t at, const char *fmt, ...)
    POLIS_PRINTF(4, 5);
static polis_status syntax_fail(polis_env *env, const char *t, size_t at, const char *fmt, ...)
{
    char what[POLIS_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line, col;
    line_col(t, at, &line, &col);
    return polis__fail(env, POLIS_ERR_CONFIG, "%s:%d:%d: invalid JSON: %s", src_of(env), line, col,
                       what);
}

/* The last non-blank byte before `at`, or 0. */
static char prev_char(const char *t, size_t at)
{
    while (at > 0 && is_ws(t[at - 1])) at--;
    return at > 0 ? t[at - 1] : 0;
}

/* Where a syntax error really is, from cJSON's parse-end offset `p`. cJSON reports a member
 * name that does not start with '"' (`{agents: 1}`, `{"a": 1,}`) one byte past its first
 * byte. That byte then follows '{' or ',', and is none of what ends a value there: a
 * one-digit number or an opening bracket in an array after ',', the '}' of `{}`, a string's
 * quote. A bad escape, which cJSON reports at its backslash, is left alone too. */
static size_t error_offset(const char *t, size_t len, size_t p)
{
    if (p == 0 || p > len || (p < len && t[p] == '\\')) return p;
    char c = t[p - 1], before = prev_char(t, p - 1);
    if (is_ws(c) || c == '"') return p;
    if (before == '{' ? c == '}' : before != ',' || (c && strchr("[{-0123456789", c))) return p;
    return p - 1;
}

static bool starts_with(const char *t, size_t len, size_t at, const char *w)
{
    size_t n = strlen(w);
    return len - at >= n && memcmp(t + at, w, n) == 0;
}

static polis_status syntax_error(polis_env *env, const char *t, size_t len, size_t p)
{
    size_t q = 0;
    while (q < len && is_ws(t[q])) q++;
    if (q == len) return syntax_fail(env, t, len, "empty document");
    p = error_offset(t, len, p);
    if (p >= len) return syntax_fail(env, t, len, "unexpected end of input");
    char c = t[p], ex[128];
    if (c == '/')
        return syntax_fail(env, t, p, "comments are not JSON (use a key starting with \"_\")");
    if (c == '\'')
        return syntax_fail(env, t, p, "strings need double quotes, found %s",
                           excerpt(t, len, p, ex));
    if ((c == '}' || c == ']') && prev_char(t, p) == ',')
        return syntax_fail(env, t, p, "trailing comma before '%c'", c);
    if (starts_with(t, len, p, "NaN") || starts_with(t, len, p, "Infinity") ||
        starts_with(t, len, p, "-Infinity"))
        return syntax_fail(env, t, p, "NaN and Infinity are not JSON numbers");
    return syntax_fail(env, t, p, "syntax error at %s", excerpt(t, len, p, ex));
}

/* ---- parsing, and the checks cJSON does not make ----------------------------------------------
 */

typedef struct dup_entry {
    const char *key;
    int32_t index;
} dup_entry;

static int dup_cmp(const void *a, const void *b)
{
    const dup_entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The index of the first of n names that repeats an earlier one, -1 if none, -2 if out of
 * memory. The names are a container's member names (`obj`) or `names`. Sorting keeps a
 * hostile object with many members at O(n log n). */
int32_t first_repeat(polis_env *env, const cJSON *obj, char *const *names, int32_t n)
{
    if (n < 2) return -1;
    dup_entry *v = polis__alloc(env, sizeof *v * (size_t)n);
    if (!v) return -2;
    const cJSON *c = obj ? obj->child : NULL;
    for (int32_t i = 0; i < n; i++, c = c ? c->next : NULL)
        v[i] = (dup_entry){c ? c->string : names[i], i};
    qsort(v, (size_t)n, sizeof *v, dup_cmp);
    int32_t first = -1;
    for (int32_t i = 1; i < n; i++)
        if (strcmp(v[i].key, v[i - 1].key) == 0 && (first < 0 || v[i].index < first))
            first = v[i].index;
    polis__free(env, v, sizeof *v * (size_t)n);
    return first;
}

/* Refuses a repeated member name (comment keys included): cJSON keeps both members, and
 * member() would silently see only the first. */
static polis_status check_duplicates(polis_env *env, const cJSON *obj, strbuf *path)
{
    int32_t at = first_repeat(env, obj, NULL, cJSON_GetArraySize(obj));
    if (at == -2) return nomem(env);
    if (at < 0) return POLIS_OK;
    size_t mark = path->len;
    sb_path_key(path, cJSON_GetArrayItem(obj, at)->string);
    polis_status st = cfg_fail(env, path->s, "duplicate key");
    sb_cut(path, mark);
    return st;
}

/* Walks the whole tree, params included: repeated names and numbers that overflowed a double
 * (cJSON reads 1e999 as infinity) are refused wherever they are. Depth is bounded by cJSON's
 * nesting limit. */
static polis_status check_tree(polis_env *env, const cJSON *n, strbuf *path)
{
    int t = n->type & 0xFF;
    if (t == cJSON_Number && !isfinite(n->valuedouble))
        return cfg_fail(env, path->len ? path->s : TOP, "number out of range for a double");
    if (t != cJSON_Object && t != cJSON_Array) return POLIS_OK;
    polis_status st;
    if (t == cJSON_Object && (st = check_duplicates(env, n, path)) != POLIS_OK) return st;
    int64_t i = 0;
    for (const cJSON *c = n->child; c; c = c->next, i++) {
        size_t mark = path->len;
        if (t == cJSON_Object)
            sb_path_key(path, c->string);
        else
            sb_printf(path, "[%" PRId64 "]", i);
        st = check_tree(env, c, path);
        sb_cut(path, mark);
        if (st != POLIS_OK) return st;
    }
    return POLIS_OK;
}

polis_status json_parse(polis_env *env, const char *text, size_t len, cJSON **out)
{
    *out = NULL;
    /* A NUL after the text makes a truncated document fail at its end: cJSON moves an error
     * past the last byte of its buffer back onto that byte. */
    char *copy = len < SIZE_MAX ? polis__alloc(env, len + 1) : NULL;
    if (!copy) return nomem(env);
    memcpy(copy, text, len);
    const char *end = NULL;
    errno = 0;
    cJSON *root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 0);
    polis_status st = POLIS_OK;
    size_t p = end ? (size_t)(end - copy) : 0;
    if (!root) {
        /* cJSON returns NULL for bad text and for a failed malloc alike; malloc sets ENOMEM. */
        st = errno == ENOMEM ? nomem(env) : syntax_error(env, copy, len, p);
    } else {
        while (p < len && is_ws(copy[p])) p++;
        if (p < len) {
            char ex[128];
            st = syntax_fail(env, copy, p, "expected end of input after the value, found %s",
                             excerpt(copy, len, p, ex));
        }
    }
    polis__free(env, copy, len + 1);
    if (st == POLIS_OK) {
        char pbuf[PATH_CAP];
        strbuf path = {pbuf, sizeof pbuf, 0};
        pbuf[0] = '\0';
        st = check_tree(env, root, &path);
    }
    if (st != POLIS_OK) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return POLIS_OK;
}

/* ---- typed reads with messages ------------------------------------------------------------ */

/* The value of an integral number (3.0 and 1e3 count). cJSON reads every number as a double,
 * so integers beyond 2^53 arrive rounded; 2^63 and above do not fit and are refused. */
bool as_int64(const cJSON *n, int64_t *out)
{
    if (!cJSON_IsNumber(n)) return false;
    double v = n->valuedouble;
    if (v != floor(v) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
    *out = (int64_t)v;
    return true;
}

polis_status want_int(polis_env *env, const cJSON *n, const char *path, int64_t lo, int64_t hi,
                      int64_t *out)
{
    int64_t v;
    if (!as_int64(n, &v) || v < lo || v > hi)
        return mismatch(env, path, n, "integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    *out = v;
    return POLIS_OK;
}

/* Reads the member `key` of obj, if present, as an integer in [lo, hi] into *out64 or *out32
 * (whichever is given); an absent member leaves the default in place. */
polis_status opt_int(polis_env *env, const cJSON *obj, const char *path, const char *key,
                     int64_t lo, int64_t hi, int64_t *out64, int32_t *out32)
{
    const cJSON *n = member(obj, key);
    char kp[PATH_CAP];
    int64_t v = 0;
    polis_status st = n ? want_int(env, n, path_step(kp, path, key, 0), lo, hi, &v) : POLIS_OK;
    if (n && st == POLIS_OK && out64) *out64 = v;
    if (n && st == POLIS_OK && out32) *out32 = (int32_t)v;
    return st;
}

polis_status want_double(polis_env *env, const cJSON *n, const char *path, double lo, double hi,
                         double *out)
{
    if (!cJSON_IsNumber(n) || !(n->valuedouble >= lo && n->valuedouble <= hi)) {
        if (isinf(lo) && isinf(hi) && lo < 0 && hi > 0) return mismatch(env, path, n, "number");
        char a[40], b[40];
        fmt_number(a, lo);
        fmt_number(b, hi);
        return mismatch(env, path, n, "number in [%s, %s]", a, b);
    }
    *out = n->valuedouble;
    return POLIS_OK;
}

polis_status want_bool(polis_env *env, const cJSON *n, const char *path, bool *out)
{
    if (!cJSON_IsBool(n)) return mismatch(env, path, n, "true or false");
    *out = cJSON_IsTrue(n);
    return POLIS_OK;
}

polis_status want_string(polis_env *env, const cJSON *n, const char *path, bool nonempty,
                         const char **out)
{
    if (!cJSON_IsString(n) || (nonempty && !n->valuestring[0]))
        return mismatch(env, path, n, "%sstring", nonempty ? "non-empty " : "");
    *out = n->valuestring;
    return POLIS_OK;
}

polis_status want_type(polis_env *env, const cJSON *n, const char *path, int type)
{
    if (n && (n->type & 0xFF) == type) return POLIS_OK;
    return mismatch(env, path, n, "%s", type == cJSON_Object ? "object" : "array");
}

/* Refuses members that are neither comments ("_...") nor among n names found `stride` bytes
 * apart from `keys` (a string array, or the key fields of a parameter table). */
polis_status check_keys(polis_env *env, const cJSON *obj, const char *path, const void *keys,
                        size_t stride, int32_t n)
{
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
        if (is_comment_key(c->string)) continue;
        int32_t i = 0;
        while (i < n && strcmp(*(const char *const *)((const char *)keys + stride * (size_t)i),
                               c->string) != 0)
            i++;
        if (i < n) continue;
        char list[POLIS_ERRMAX / 2], kp[PATH_CAP];
        strbuf b = {list, sizeof list, 0};
        list[0] = '\0';
        for (i = 0; i < n; i++) {
            if (i) sb_puts(&b, ", ");
            sb_puts(&b, *(const char *const *)((const char *)keys + stride * (size_t)i));
        }
        path_step(kp, path, c->string, 0);
        if (n == 0) return cfg_fail(env, kp, "unknown key (this takes no parameters)");
        return cfg_fail(env, kp, "unknown key (expected one of %s)", list);
    }
    return POLIS_OK;
}

polis_status missing(polis_env *env, const char *path, const char *key)
{
    return cfg_fail(env, path, "missing required key \"%s\"", key);
}
