/*
 * engine/config.c — the scenario JSON layer: parsing with cJSON, the checks cJSON does not
 * make, the scenario schema, plugin parameter tables, and the JSON accessors of the host
 * table.
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

#include "internal.h"

#define PATH_CAP 512 /* JSON paths inside messages are cut at this length */
#define GOT_CAP 60   /* "got" values longer than this are cut with "..." */
#define NAME_MAX_LEN 63
#define TOP "top level"

static const char *src_of(const polis_env *env)
{
    return env->scn.source ? env->scn.source : "<string>";
}

static polis_status nomem(polis_env *env)
{
    return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

/* ---- bounded string building ------------------------------------------------------------ */

/* Appends keep counting past `cap` in `len`, so one pass can measure what a second pass with
 * an exact buffer will write (cap 0 only measures). */
typedef struct strbuf {
    char *s;
    size_t cap;
    size_t len;
} strbuf;

static void sb_putn(strbuf *b, const char *s, size_t n)
{
    if (b->cap > 0 && b->len + 1 < b->cap) {
        size_t room = b->cap - 1 - b->len;
        memcpy(b->s + b->len, s, n < room ? n : room);
        b->s[b->len + (n < room ? n : room)] = '\0';
    }
    b->len += n;
}

static void sb_puts(strbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

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
static size_t path_write(char *dst, size_t cap, const char *base, const char *key, int64_t index)
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
static const char *path_step(char out[PATH_CAP], const char *base, const char *key, int64_t index)
{
    path_write(out, PATH_CAP, base, key, index);
    return out;
}

/* "<source>: <path>: <what>" with POLIS_ERR_CONFIG. */
static polis_status cfg_fail(polis_env *env, const char *path, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
static polis_status cfg_fail(polis_env *env, const char *path, const char *fmt, ...)
{
    char what[POLIS_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return polis__fail(env, POLIS_ERR_CONFIG, "%s: %s: %s", src_of(env), path, what);
}

/* A value for the "got ..." part of a message: compact JSON, cut with "..." when long. */
static const char *got(char out[GOT_CAP + 8], const cJSON *n)
{
    strbuf b = {out, GOT_CAP + 8, 0};
    sb_json_value(&b, n);
    if (b.len > GOT_CAP) memcpy(out + utf8_boundary(out, GOT_CAP - 3), "...", 4);
    return out;
}

/* "<path>: expected <what>, got <value>", or "<path>: missing (expected <what>)" for an
 * absent value (NULL). */
static polis_status mismatch(polis_env *env, const char *path, const cJSON *n, const char *fmt, ...)
    POLIS_PRINTF(4, 5);
static polis_status mismatch(polis_env *env, const char *path, const cJSON *n, const char *fmt, ...)
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

static bool is_comment_key(const char *k) { return k && k[0] == '_'; }

static bool is_object(const cJSON *n) { return n && (n->type & 0xFF) == cJSON_Object; }

static bool is_container(const cJSON *n)
{
    return is_object(n) || (n && (n->type & 0xFF) == cJSON_Array);
}

/* check_tree has refused repeated names, so the first match is the only one. */
static const cJSON *member(const cJSON *obj, const char *key)
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
static int32_t first_repeat(polis_env *env, const cJSON *obj, char *const *names, int32_t n)
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

static polis_status json_parse(polis_env *env, const char *text, size_t len, cJSON **out)
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
static bool as_int64(const cJSON *n, int64_t *out)
{
    if (!cJSON_IsNumber(n)) return false;
    double v = n->valuedouble;
    if (v != floor(v) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
    *out = (int64_t)v;
    return true;
}

static polis_status want_int(polis_env *env, const cJSON *n, const char *path, int64_t lo,
                             int64_t hi, int64_t *out)
{
    int64_t v;
    if (!as_int64(n, &v) || v < lo || v > hi)
        return mismatch(env, path, n, "integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    *out = v;
    return POLIS_OK;
}

/* Reads the member `key` of obj, if present, as an integer in [lo, hi] into *out64 or *out32
 * (whichever is given); an absent member leaves the default in place. */
static polis_status opt_int(polis_env *env, const cJSON *obj, const char *path, const char *key,
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

static polis_status want_double(polis_env *env, const cJSON *n, const char *path, double lo,
                                double hi, double *out)
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

static polis_status want_bool(polis_env *env, const cJSON *n, const char *path, bool *out)
{
    if (!cJSON_IsBool(n)) return mismatch(env, path, n, "true or false");
    *out = cJSON_IsTrue(n);
    return POLIS_OK;
}

static polis_status want_string(polis_env *env, const cJSON *n, const char *path, bool nonempty,
                                const char **out)
{
    if (!cJSON_IsString(n) || (nonempty && !n->valuestring[0]))
        return mismatch(env, path, n, "%sstring", nonempty ? "non-empty " : "");
    *out = n->valuestring;
    return POLIS_OK;
}

static polis_status want_type(polis_env *env, const cJSON *n, const char *path, int type)
{
    if (n && (n->type & 0xFF) == type) return POLIS_OK;
    return mismatch(env, path, n, "%s", type == cJSON_Object ? "object" : "array");
}

/* Refuses members that are neither comments ("_...") nor among n names found `stride` bytes
 * apart from `keys` (a string array, or the key fields of a parameter table). */
static polis_status check_keys(polis_env *env, const cJSON *obj, const char *path, const void *keys,
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

#define REFUSE_UNKNOWN(env, obj, path, keys)                                                       \
    check_keys((env), (obj), (path), (keys), sizeof(keys)[0],                                      \
               (int32_t)(sizeof(keys) / sizeof(keys)[0]))

static polis_status missing(polis_env *env, const char *path, const char *key)
{
    return cfg_fail(env, path, "missing required key \"%s\"", key);
}

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > NAME_MAX_LEN) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return true;
}

#define NAME_RULE "1 to 63 characters from a-z, 0-9 and _"

/* The file name without directories and without its last extension (or only `.so`). */
static char *stem_dup(polis_env *env, const char *path, bool only_so)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (only_so) {
        if (n > 3 && strcmp(base + n - 3, ".so") == 0) n -= 3;
    } else {
        const char *dot = strrchr(base, '.');
        if (dot && dot != base) n = (size_t)(dot - base);
    }
    char *s = polis__alloc(env, n + 1);
    if (!s) return NULL;
    memcpy(s, base, n);
    s[n] = '\0';
    return s;
}

/* ---- the scenario schema ------------------------------------------------------------------ */

static const char *const top_keys[] = {
    "polis", "name",        "doc", "seed",    "max_steps", "agents",  "max_entities",
    "grid",  "event_queue", "lua", "plugins", "scripts",   "rewards", "bindings",
    "replace" /* read by swap.c when registration freezes */};

static polis_status read_agents(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *a = member(root, "agents");
    const cJSON *names = NULL;
    polis_status st;
    if (!a) return missing(env, TOP, "agents");
    if ((a->type & 0xFF) == cJSON_Object) {
        static const char *const keys[] = {"count", "names"};
        if ((st = REFUSE_UNKNOWN(env, a, "agents", keys)) != POLIS_OK) return st;
        if (!member(a, "count")) return missing(env, "agents", "count");
        if ((st = opt_int(env, a, "agents", "count", 1, 65536, NULL, &s->n_agents)) != POLIS_OK)
            return st;
        names = member(a, "names");
    } else if ((a->type & 0xFF) == cJSON_Number) {
        if ((st = opt_int(env, root, "", "agents", 1, 65536, NULL, &s->n_agents)) != POLIS_OK)
            return st;
    } else {
        return mismatch(env, "agents", a, "integer in [1, 65536] or object");
    }
    if (names) {
        if ((st = want_type(env, names, "agents.names", cJSON_Array)) != POLIS_OK) return st;
        int32_t k = cJSON_GetArraySize(names);
        if (k != s->n_agents)
            return cfg_fail(env, "agents.names", "expected %d names (agents.count), got %d",
                            (int)s->n_agents, (int)k);
    }
    int32_t n = s->n_agents;
    /* The count of the array is what the free path trusts; set both together. */
    s->agent_names = polis__alloc(env, sizeof(char *) * (size_t)n);
    if (!s->agent_names) {
        s->n_agents = 0;
        return nomem(env);
    }
    const cJSON *e = names ? names->child : NULL;
    for (int32_t i = 0; i < n; i++, e = e ? e->next : NULL) {
        if (!e) {
            char nm[32];
            snprintf(nm, sizeof nm, "agent_%d", (int)i);
            if (!(s->agent_names[i] = polis__strdup(env, nm))) return nomem(env);
            continue;
        }
        char ip[PATH_CAP];
        path_step(ip, "agents.names", NULL, i);
        const char *v = NULL;
        if ((st = want_string(env, e, ip, true, &v)) != POLIS_OK) return st;
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
            if (*p < 0x20 || *p == 0x7f) {
                char g[GOT_CAP + 8];
                return cfg_fail(env, ip, "agent name must not contain control characters, got %s",
                                got(g, e));
            }
        if (!(s->agent_names[i] = polis__strdup(env, v))) return nomem(env);
    }
    int32_t at = names ? first_repeat(env, NULL, s->agent_names, n) : -1;
    if (at == -2) return nomem(env);
    if (at < 0) return POLIS_OK;
    char ip[PATH_CAP];
    return cfg_fail(env, path_step(ip, "agents.names", NULL, at), "duplicate agent name \"%s\"",
                    s->agent_names[at]);
}

static polis_status read_grid(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *g = member(root, "grid");
    if (!g) return POLIS_OK;
    static const char *const keys[] = {"width", "height", "wrap"};
    polis_status st;
    if ((st = want_type(env, g, "grid", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, g, "grid", keys)) != POLIS_OK) return st;
    if (!member(g, "width")) return missing(env, "grid", "width");
    if (!member(g, "height")) return missing(env, "grid", "height");
    if ((st = opt_int(env, g, "grid", "width", 1, 65536, NULL, &s->grid_width)) != POLIS_OK ||
        (st = opt_int(env, g, "grid", "height", 1, 65536, NULL, &s->grid_height)) != POLIS_OK)
        return st;
    const cJSON *wrap = member(g, "wrap");
    s->grid_wrap = false;
    if (wrap && (st = want_bool(env, wrap, "grid.wrap", &s->grid_wrap)) != POLIS_OK) return st;
    s->has_grid = true;
    return POLIS_OK;
}

static polis_status read_lua(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    s->lua_instruction_limit = 10000000;
    s->lua_memory_limit = 67108864;
    s->lua_time_limit_ms = 5000;
    const cJSON *l = member(root, "lua");
    if (!l) return POLIS_OK;
    static const char *const keys[] = {"instruction_limit", "memory_limit", "time_limit_ms"};
    polis_status st;
    if ((st = want_type(env, l, "lua", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, l, "lua", keys)) != POLIS_OK) return st;
    if ((st = opt_int(env, l, "lua", "instruction_limit", 0, INT64_C(1000000000000),
                      &s->lua_instruction_limit, NULL)) != POLIS_OK)
        return st;
    if ((st = opt_int(env, l, "lua", "time_limit_ms", 0, INT64_C(86400000),
                      &s->lua_time_limit_ms, NULL)) != POLIS_OK)
        return st;
    return opt_int(env, l, "lua", "memory_limit", 0, INT64_C(1099511627776), &s->lua_memory_limit,
                   NULL);
}

/* A plugin or script name must be unique across both lists; `path` names where it came
 * from. */
static polis_status check_unique_name(polis_env *env, const char *name, const char *path,
                                      int32_t n_plugins, int32_t n_scripts)
{
    const polis__scenario *s = &env->scn;
    for (int32_t i = 0; i < n_plugins + n_scripts; i++) {
        bool p = i < n_plugins;
        const char *other = p ? s->plugins[i].name : s->scripts[i - n_plugins].name;
        if (other && strcmp(other, name) == 0)
            return cfg_fail(env, path, "name \"%s\" is already used by %s", name,
                            p ? s->plugins[i].jpath : s->scripts[i - n_plugins].jpath);
    }
    return POLIS_OK;
}

static const char *const plugin_keys[] = {"name", "path", "params"};
static const char *const script_keys[] = {"path", "name", "params"};

/* A plugins[] or scripts[] entry: a string (a plugin's name, a script's path) or an object
 * with name, path and params. The name defaults to the file's stem. */
static polis_status read_entry(polis_env *env, const cJSON *e, int32_t i, bool plugin)
{
    polis__scenario *s = &env->scn;
    const char *what = plugin ? "plugin" : "script";
    char **name_out = plugin ? &s->plugins[i].name : &s->scripts[i].name;
    char **path_out = plugin ? &s->plugins[i].path : &s->scripts[i].path;
    char **jpath_out = plugin ? &s->plugins[i].jpath : &s->scripts[i].jpath;
    const cJSON **params_out = plugin ? &s->plugins[i].params : &s->scripts[i].params;
    char ip[PATH_CAP], kp[PATH_CAP], pp[PATH_CAP];
    path_step(ip, plugin ? "plugins" : "scripts", NULL, i);
    if (!(*jpath_out = polis__strdup(env, ip))) return nomem(env);
    polis_status st;
    const char *name = NULL, *path = NULL, *name_at = ip;
    int t = e->type & 0xFF;
    if (t == cJSON_String && plugin) {
        name = e->valuestring;
    } else if (t == cJSON_String) {
        if (!e->valuestring[0]) return cfg_fail(env, ip, "expected non-empty string, got \"\"");
        path = e->valuestring;
    } else if (t == cJSON_Object) {
        st = check_keys(env, e, ip, plugin ? plugin_keys : script_keys, sizeof(char *), 3);
        if (st != POLIS_OK) return st;
        const cJSON *n = member(e, "name"), *pa = member(e, "path"), *pr = member(e, "params");
        if (!plugin && !pa) return missing(env, ip, "path");
        if (!n && !pa) return cfg_fail(env, ip, "expected \"name\" or \"path\" (or both)");
        if (pa && (st = want_string(env, pa, path_step(pp, ip, "path", 0), true, &path))) return st;
        name_at = n ? path_step(kp, ip, "name", 0) : path_step(kp, ip, "path", 0);
        if (n && (st = want_string(env, n, name_at, true, &name)) != POLIS_OK) return st;
        if (pr && (st = want_type(env, pr, path_step(pp, ip, "params", 0), cJSON_Object)))
            return st;
        *params_out = pr;
    } else {
        return mismatch(env, ip, e, "%s",
                        plugin ? "plugin name or object" : "script path or object");
    }
    if (path && !(*path_out = polis__path_join(env, s->base_dir, path))) return nomem(env);
    if (name) {
        if (!valid_name(name))
            return cfg_fail(env, name_at, "invalid %s name \"%s\" (expected " NAME_RULE ")", what,
                            name);
        if (!(*name_out = polis__strdup(env, name))) return nomem(env);
    } else {
        if (!(*name_out = stem_dup(env, path, plugin))) return nomem(env);
        if (!valid_name(*name_out))
            return cfg_fail(env, name_at,
                            "the file name gives the %s name \"%s\", which is invalid "
                            "(expected " NAME_RULE "); set \"name\"",
                            what, *name_out);
    }
    return check_unique_name(env, *name_out, name_at, plugin ? i : s->n_plugins, plugin ? 0 : i);
}

static polis_status read_rewards(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *r = member(root, "rewards");
    if (!r) return POLIS_OK;
    polis_status st;
    if ((st = want_type(env, r, "rewards", cJSON_Object)) != POLIS_OK) return st;
    int32_t n = 0;
    for (const cJSON *c = r->child; c; c = c->next) n += !is_comment_key(c->string);
    if (n == 0) return POLIS_OK;
    if (!(s->weights = polis__alloc(env, sizeof *s->weights * (size_t)n))) return nomem(env);
    s->n_weights = n;
    int32_t i = 0;
    for (const cJSON *c = r->child; c; c = c->next) {
        if (is_comment_key(c->string)) continue;
        polis__scn_reward_weight *w = &s->weights[i++];
        char kp[PATH_CAP];
        path_step(kp, "rewards", c->string, 0);
        if (!c->string[0]) return cfg_fail(env, kp, "empty reward function name");
        /* The engine keeps weights as float; this range keeps a weighted sum far from its
         * limits. */
        if (!cJSON_IsNumber(c) || !(fabs(c->valuedouble) <= 1e9))
            return mismatch(env, kp, c, "number in [-1e9, 1e9]");
        w->weight = c->valuedouble;
        if (!(w->name = polis__strdup(env, c->string))) return nomem(env);
        if (!(w->jpath = polis__strdup(env, kp))) return nomem(env);
    }
    return POLIS_OK;
}

static polis_status phase_fail(polis_env *env, const char *path, const cJSON *v)
{
    char list[256];
    strbuf b = {list, sizeof list, 0};
    list[0] = '\0';
    for (int32_t p = 0; p < POLIS_PHASE_COUNT; p++) {
        if (p) sb_puts(&b, ", ");
        sb_puts(&b, polis__phase_name((polis_phase)p));
    }
    return mismatch(env, path, v, "one of %s", list);
}

static polis_status read_binding(polis_env *env, const cJSON *e, int32_t i)
{
    polis__scn_binding *b = &env->scn.bindings[i];
    b->phase = -1;
    char ip[PATH_CAP], kp[PATH_CAP];
    path_step(ip, "bindings", NULL, i);
    if (!(b->jpath = polis__strdup(env, ip))) return nomem(env);
    polis_status st;
    if ((st = want_type(env, e, ip, cJSON_Object)) != POLIS_OK) return st;
    static const char *const keys[] = {"call", "event", "phase", "priority"};
    if ((st = REFUSE_UNKNOWN(env, e, ip, keys)) != POLIS_OK) return st;
    const cJSON *call = member(e, "call"), *ev = member(e, "event"), *ph = member(e, "phase");
    if (!call) return missing(env, ip, "call");
    const char *v = NULL;
    path_step(kp, ip, "call", 0);
    if ((st = want_string(env, call, kp, true, &v)) != POLIS_OK) return st;
    /* The "plugin.export" shape and the export itself are checked by ffi.c when it binds. */
    if (!(b->call = polis__strdup(env, v))) return nomem(env);
    if (!ev == !ph)
        return cfg_fail(env, ip, "expected exactly one of \"event\" and \"phase\", got %s",
                        ev ? "both" : "neither");
    if (ev) {
        if ((st = want_string(env, ev, path_step(kp, ip, "event", 0), true, &v)) != POLIS_OK)
            return st;
        if (!(b->event = polis__strdup(env, v))) return nomem(env);
    } else {
        path_step(kp, ip, "phase", 0);
        if ((ph->type & 0xFF) != cJSON_String) return phase_fail(env, kp, ph);
        b->phase = polis__phase_parse(ph->valuestring);
        if (b->phase < 0) return phase_fail(env, kp, ph);
    }
    b->priority = 0;
    return opt_int(env, e, ip, "priority", -1000000, 1000000, NULL, &b->priority);
}

enum { LIST_PLUGINS, LIST_SCRIPTS, LIST_BINDINGS };

static polis_status read_list(polis_env *env, const cJSON *root, const char *key, int kind)
{
    polis__scenario *s = &env->scn;
    const cJSON *list = member(root, key);
    if (!list) return POLIS_OK;
    polis_status st;
    if ((st = want_type(env, list, key, cJSON_Array)) != POLIS_OK) return st;
    int32_t n = cJSON_GetArraySize(list);
    if (n == 0) return POLIS_OK;
    static const size_t elem[] = {sizeof(polis__scn_plugin), sizeof(polis__scn_script),
                                  sizeof(polis__scn_binding)};
    void *arr = polis__alloc(env, elem[kind] * (size_t)n);
    if (!arr) return nomem(env);
    /* The free path trusts the counts; set each with its array. */
    if (kind == LIST_PLUGINS) {
        s->plugins = arr;
        s->n_plugins = n;
    } else if (kind == LIST_SCRIPTS) {
        s->scripts = arr;
        s->n_scripts = n;
    } else {
        s->bindings = arr;
        s->n_bindings = n;
    }
    int32_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        st = kind == LIST_BINDINGS ? read_binding(env, e, i)
                                   : read_entry(env, e, i, kind == LIST_PLUGINS);
        if (st != POLIS_OK) return st;
    }
    return POLIS_OK;
}

static polis_status read_scenario(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    polis_status st;
    const cJSON *n;
    if (!cJSON_IsObject(root)) return mismatch(env, TOP, root, "object");
    /* Top-level keys are paths of their own: "max_steps", not "top level.max_steps". */
    if ((st = REFUSE_UNKNOWN(env, root, "", top_keys)) != POLIS_OK) return st;

    if ((n = member(root, "polis"))) {
        int64_t v;
        if (!as_int64(n, &v)) return mismatch(env, "polis", n, "format version 1");
        if (v != 1)
            return cfg_fail(env, "polis",
                            "unsupported format version %" PRId64 " (this engine reads 1)", v);
    }

    const char *str = NULL;
    if ((n = member(root, "name"))) {
        if ((st = want_string(env, n, "name", true, &str)) != POLIS_OK) return st;
        s->name = polis__strdup(env, str);
    } else if (strcmp(s->source, "<string>") == 0) {
        s->name = polis__strdup(env, "scenario");
    } else {
        s->name = stem_dup(env, s->source, false);
    }
    if (!s->name) return nomem(env);

    if ((n = member(root, "doc"))) {
        if ((st = want_string(env, n, "doc", false, &str)) != POLIS_OK) return st;
        if (!(s->doc = polis__strdup(env, str))) return nomem(env);
    }

    int64_t seed = 0;
    s->max_steps = 1000;
    if ((st = opt_int(env, root, "", "seed", 0, INT64_C(9007199254740992), &seed, NULL)) ||
        (st = opt_int(env, root, "", "max_steps", 1, 1000000000, &s->max_steps, NULL)) ||
        (st = read_agents(env, root)) != POLIS_OK)
        return st;
    s->seed = (uint64_t)seed;
    s->max_entities = s->n_agents + 4096;
    s->event_queue = 4096;
    if ((st = opt_int(env, root, "", "max_entities", s->n_agents, 16777216, NULL,
                      &s->max_entities)) ||
        (st = read_grid(env, root)) ||
        (st = opt_int(env, root, "", "event_queue", 16, 1048576, NULL, &s->event_queue)))
        return st;

    if ((st = read_lua(env, root)) != POLIS_OK) return st;
    if ((st = read_list(env, root, "plugins", LIST_PLUGINS)) != POLIS_OK) return st;
    if ((st = read_list(env, root, "scripts", LIST_SCRIPTS)) != POLIS_OK) return st;
    if ((st = read_rewards(env, root)) != POLIS_OK) return st;
    return read_list(env, root, "bindings", LIST_BINDINGS);
}

polis_status polis__scenario_parse(polis_env *env, const char *text, size_t len, const char *source,
                                   const char *base_dir)
{
    polis__scenario_release_json(env);
    polis__scenario_free(env);
    polis__scenario *s = &env->scn;
    polis_status st;
    if (!(s->source = polis__strdup(env, source ? source : "<string>")) ||
        !(s->base_dir = polis__strdup(env, base_dir ? base_dir : "."))) {
        st = nomem(env);
        goto done;
    }
    if (!text) {
        st = polis__fail(env, POLIS_ERR_INVALID, "%s: no scenario text", s->source);
        goto done;
    }
    if ((st = json_parse(env, text, len, &s->root)) != POLIS_OK) goto done;
    if (env->overrides && (st = polis__overrides_apply(env, s->root)) != POLIS_OK) goto done;
    st = read_scenario(env, s->root);
done:
    if (st != POLIS_OK) {
        polis__scenario_release_json(env);
        polis__scenario_free(env);
    }
    return st;
}

static void free3(polis_env *env, char *a, char *b, char *c)
{
    polis__strfree(env, a);
    polis__strfree(env, b);
    polis__strfree(env, c);
}

void polis__scenario_free(polis_env *env)
{
    polis__scenario *s = &env->scn;
    cJSON_Delete(s->root);
    free3(env, s->source, s->base_dir, s->name);
    polis__strfree(env, s->doc);
    for (int32_t i = 0; s->agent_names && i < s->n_agents; i++)
        polis__strfree(env, s->agent_names[i]);
    polis__free(env, s->agent_names, sizeof(char *) * (size_t)s->n_agents);
    for (int32_t i = 0; i < s->n_plugins; i++)
        free3(env, s->plugins[i].name, s->plugins[i].path, s->plugins[i].jpath);
    polis__free(env, s->plugins, sizeof *s->plugins * (size_t)s->n_plugins);
    for (int32_t i = 0; i < s->n_scripts; i++)
        free3(env, s->scripts[i].name, s->scripts[i].path, s->scripts[i].jpath);
    polis__free(env, s->scripts, sizeof *s->scripts * (size_t)s->n_scripts);
    for (int32_t i = 0; i < s->n_weights; i++)
        free3(env, s->weights[i].name, s->weights[i].jpath, NULL);
    polis__free(env, s->weights, sizeof *s->weights * (size_t)s->n_weights);
    for (int32_t i = 0; i < s->n_bindings; i++)
        free3(env, s->bindings[i].call, s->bindings[i].event, s->bindings[i].jpath);
    polis__free(env, s->bindings, sizeof *s->bindings * (size_t)s->n_bindings);
    memset(s, 0, sizeof *s);
}

/* ---- the wrapper arena -------------------------------------------------------------------- */

/* Wrappers live until the scenario's JSON is released, so a bump arena frees them at once
 * and plugins never free anything they read. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size; /* bytes of the whole chunk */
    size_t used; /* bytes handed out after the header */
} arena_chunk;

#define ARENA_ALIGN 16
#define ARENA_HEADER ((sizeof(arena_chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
#define ARENA_CHUNK 4096

static void *arena_alloc(polis_env *env, size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    arena_chunk *c = env->json_arena;
    if (!c || c->size - ARENA_HEADER - c->used < n) {
        size_t size = ARENA_HEADER + (n > ARENA_CHUNK ? n : ARENA_CHUNK);
        arena_chunk *nc = polis__alloc(env, size);
        if (!nc) return NULL;
        nc->size = size;
        nc->next = c;
        env->json_arena = c = nc;
    }
    void *p = (char *)c + ARENA_HEADER + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

void polis__scenario_release_json(polis_env *env)
{
    arena_chunk *c = env->json_arena;
    while (c) {
        arena_chunk *next = c->next;
        polis__free(env, c, c->size);
        c = next;
    }
    env->json_arena = NULL;
    cJSON_Delete(env->scn.root);
    env->scn.root = NULL;
    for (int32_t i = 0; i < env->scn.n_plugins; i++) env->scn.plugins[i].params = NULL;
    for (int32_t i = 0; i < env->scn.n_scripts; i++) env->scn.scripts[i].params = NULL;
}

/* ---- JSON wrappers for plugins ------------------------------------------------------------ */

struct polis_json {
    const cJSON *node; /* NULL: absent */
    const char *path;
    polis_env *env;    /* NULL only for the static fallbacks below */
    int32_t len;       /* children without comments; -1 until counted */
    int32_t cur_index; /* iteration cursor: child number cur_index is cur */
    const cJSON *cur;
    bool oom; /* stands in for a wrapper that could not be allocated */
};

/* Immutable stand-ins returned where no wrapper can be allocated; never written. */
static const polis_json json_none = {NULL, "(none)", NULL, 0, 0, NULL, false};
static const polis_json json_oom = {NULL, "(out of memory)", NULL, 0, 0, NULL, true};

static polis_json *wrap_new(polis_env *env, const cJSON *node, size_t path_len)
{
    polis_json *w = arena_alloc(env, sizeof *w + path_len + 1);
    if (!w) return NULL;
    w->node = node;
    w->path = (char *)(w + 1);
    w->env = env;
    w->len = -1;
    return w;
}

const polis_json *polis__json_wrap(polis_env *env, const cJSON *node, const char *path)
{
    if (!path) path = "";
    size_t n = strlen(path);
    polis_json *w = wrap_new(env, node, n);
    if (!w) {
        nomem(env);
        return NULL;
    }
    memcpy((char *)w->path, path, n + 1);
    return w;
}

int polis__json_kind(const polis_json *j)
{
    if (j && j->oom) return -2;
    if (!j || !j->node) return -1;
    switch (j->node->type & 0xFF) {
    case cJSON_NULL: return 0;
    case cJSON_False:
    case cJSON_True: return 1;
    case cJSON_Number: return 2;
    case cJSON_String: return 3;
    case cJSON_Array: return 4;
    case cJSON_Object: return 5;
    default: return -1;
    }
}

int32_t polis__json_len(const polis_json *j)
{
    if (!j || !is_container(j->node)) return 0;
    if (j->len >= 0 || !j->env) return j->len >= 0 ? j->len : 0;
    int32_t n = 0;
    bool obj = is_object(j->node);
    for (const cJSON *c = j->node->child; c; c = c->next)
        if (!obj || !is_comment_key(c->string)) n++;
    ((polis_json *)j)->len = n;
    return n;
}

/* Child i of a container, comments skipped; sequential walks cost O(1) per step. */
static const cJSON *nth_child(const polis_json *j, int32_t i)
{
    if (i < 0 || !is_container(j->node)) return NULL;
    bool obj = is_object(j->node);
    const cJSON *c;
    int32_t k;
    if (j->cur && j->cur_index <= i) {
        c = j->cur;
        k = j->cur_index;
    } else {
        c = j->node->child;
        while (c && obj && is_comment_key(c->string)) c = c->next;
        k = 0;
    }
    while (c && k < i) {
        c = c->next;
        while (c && obj && is_comment_key(c->string)) c = c->next;
        k++;
    }
    if (c && j->env) {
        ((polis_json *)j)->cur = c;
        ((polis_json *)j)->cur_index = k;
    }
    return c;
}

/* A child wrapper whose path is j's path plus one step. */
static const polis_json *wrap_child(polis_env *env, const polis_json *j, const cJSON *node,
                                    const char *key, int32_t index)
{
    size_t n = path_write(NULL, 0, j->path, key, index);
    polis_json *w = wrap_new(env, node, n);
    if (!w) {
        nomem(env);
        return &json_oom;
    }
    path_write((char *)w->path, n + 1, j->path, key, index);
    return w;
}

static polis_env *env_of(polis_ctx *ctx, const polis_json *j)
{
    if (j && j->env) return j->env;
    return ctx ? ctx->env : NULL;
}

const polis_json *polis__json_at(polis_ctx *ctx, const polis_json *j, int32_t i)
{
    if (!j) return &json_none;
    if (j->oom) return j;
    polis_env *env = env_of(ctx, j);
    if (!env) return &json_none;
    const cJSON *c = nth_child(j, i);
    if (c && is_object(j->node)) return wrap_child(env, j, c, c->string, 0);
    return wrap_child(env, j, c, NULL, i);
}

const polis_json *polis__json_get(polis_ctx *ctx, const polis_json *j, const char *key)
{
    if (!j || !key) return &json_none;
    if (j->oom) return j;
    polis_env *env = env_of(ctx, j);
    if (!env) return &json_none;
    const cJSON *c = is_comment_key(key) ? NULL : member(j->node, key);
    return wrap_child(env, j, c, key, 0);
}

const char *polis__json_key(const polis_json *j, int32_t i)
{
    if (!j || !is_object(j->node)) return NULL;
    const cJSON *c = nth_child(j, i);
    return c ? c->string : NULL;
}

const char *polis__json_path(const polis_json *j) { return j ? j->path : ""; }

/* The checks common to the value readers; *env is set when they pass. */
static polis_status read_check(polis_ctx *ctx, const polis_json *j, const void *out,
                               polis_env **env)
{
    *env = env_of(ctx, j);
    if (j && j->oom) return POLIS_ERR_NOMEM;
    if (!j || !out)
        return *env ? polis__fail(*env, POLIS_ERR_INVALID, "json read: %s is NULL",
                                  !j ? "value" : "out")
                    : POLIS_ERR_INVALID;
    return *env ? POLIS_OK : POLIS_ERR_CONFIG;
}

polis_status polis__json_int(polis_ctx *ctx, const polis_json *j, int64_t min, int64_t max,
                             int64_t *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    return st != POLIS_OK ? st : want_int(env, j->node, j->path, min, max, out);
}

polis_status polis__json_double(polis_ctx *ctx, const polis_json *j, double min, double max,
                                double *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    return st != POLIS_OK ? st : want_double(env, j->node, j->path, min, max, out);
}

polis_status polis__json_string(polis_ctx *ctx, const polis_json *j, const char **out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    return st != POLIS_OK ? st : want_string(env, j->node, j->path, false, out);
}

polis_status polis__json_bool(polis_ctx *ctx, const polis_json *j, bool *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    return st != POLIS_OK ? st : want_bool(env, j->node, j->path, out);
}

/* ---- parameter tables --------------------------------------------------------------------- */

static size_t param_size(polis_param_type t)
{
    switch (t) {
    case POLIS_PARAM_BOOL: return sizeof(bool);
    case POLIS_PARAM_INT: return sizeof(int64_t);
    case POLIS_PARAM_DOUBLE: return sizeof(double);
    case POLIS_PARAM_STRING: return sizeof(const char *);
    case POLIS_PARAM_JSON: return sizeof(const polis_json *);
    }
    return 0;
}

/* An int64 bound of a table's double range: the integers inside [min, max]. */
static int64_t int_bound(double v, bool lower)
{
    if (!(v > -9223372036854775808.0)) return INT64_MIN;
    if (v >= 9223372036854775807.0) return INT64_MAX; /* the double is 2^63 */
    return (int64_t)(lower ? ceil(v) : floor(v));
}

/* A broken table is the plugin author's bug; refuse it before it corrupts memory. */
static polis_status check_defs(polis_env *env, const polis_param_def *defs, int32_t n, size_t size,
                               const char *jpath)
{
    for (int32_t i = 0; i < n; i++) {
        const polis_param_def *d = &defs[i];
        const char *k = d->key ? d->key : "(null)";
        size_t fs = param_size(d->type);
        const char *why = NULL;
        char buf[160];
        if (!d->key || !d->key[0]) {
            why = "has no key";
        } else if (is_comment_key(d->key)) {
            why = "starts with '_' (such keys are comments in scenarios)";
        } else if (!fs) {
            snprintf(buf, sizeof buf, "has unknown type %d", (int)d->type);
            why = buf;
        } else if (d->offset > size || size - d->offset < fs) {
            snprintf(buf, sizeof buf, "at offset %zu (%zu bytes) does not fit params_size %zu",
                     d->offset, fs, size);
            why = buf;
        } else if ((d->type == POLIS_PARAM_INT || d->type == POLIS_PARAM_DOUBLE) &&
                   !(d->min <= d->max)) {
            why = "has min > max";
        } else if (!d->required && d->type == POLIS_PARAM_INT &&
                   (d->def_num != floor(d->def_num) || d->def_num < d->min ||
                    d->def_num > d->max)) {
            why = "has a default that is not an integer in [min, max]";
        } else if (!d->required && d->type == POLIS_PARAM_DOUBLE &&
                   !(d->def_num >= d->min && d->def_num <= d->max)) {
            why = "has a default outside [min, max]";
        } else {
            for (int32_t k2 = 0; k2 < i; k2++)
                if (defs[k2].key && strcmp(defs[k2].key, d->key) == 0) why = "is declared twice";
        }
        if (why)
            return polis__fail(env, POLIS_ERR_PLUGIN, "%s: %s: parameter table: \"%s\" %s",
                               src_of(env), jpath, k, why);
    }
    return POLIS_OK;
}

static polis_status param_set(polis_env *env, const polis_param_def *d, const cJSON *v,
                              const char *jpath, unsigned char *dst)
{
    char kp[PATH_CAP];
    path_step(kp, jpath, d->key, 0);
    polis_status st = POLIS_OK;
    switch (d->type) {
    case POLIS_PARAM_BOOL: {
        bool b = d->def_num != 0;
        if (v) st = want_bool(env, v, kp, &b);
        memcpy(dst, &b, sizeof b);
        break;
    }
    case POLIS_PARAM_INT: {
        int64_t x = (int64_t)d->def_num;
        if (v) st = want_int(env, v, kp, int_bound(d->min, true), int_bound(d->max, false), &x);
        memcpy(dst, &x, sizeof x);
        break;
    }
    case POLIS_PARAM_DOUBLE: {
        double x = d->def_num;
        if (v) st = want_double(env, v, kp, d->min, d->max, &x);
        memcpy(dst, &x, sizeof x);
        break;
    }
    case POLIS_PARAM_STRING: {
        const char *s = d->def_str;
        if (v && (st = want_string(env, v, kp, false, &s)) != POLIS_OK) break;
        char *copy = NULL;
        if (s && !(copy = polis__strdup(env, s))) return nomem(env);
        memcpy(dst, &copy, sizeof copy);
        break;
    }
    case POLIS_PARAM_JSON: {
        const polis_json *w = polis__json_wrap(env, v, kp);
        if (!w) return POLIS_ERR_NOMEM;
        memcpy(dst, &w, sizeof w);
        break;
    }
    }
    return st;
}

polis_status polis__params_build(polis_env *env, const polis_param_def *defs, int32_t n,
                                 size_t size, const cJSON *obj, const char *jpath, void **out)
{
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "params_build: out is NULL");
    *out = NULL;
    if (!jpath) jpath = "params";
    if (n < 0 || (n > 0 && !defs))
        return polis__fail(env, POLIS_ERR_INVALID, "%s: %s: parameter table is NULL or n < 0",
                           src_of(env), jpath);
    polis_status st = check_defs(env, defs, n, size, jpath);
    if (st != POLIS_OK) return st;
    if (obj && !is_object(obj)) return mismatch(env, jpath, obj, "object");
    if ((st = check_keys(env, obj, jpath, defs ? &defs->key : NULL, sizeof *defs, n)) != POLIS_OK)
        return st;
    for (int32_t i = 0; i < n; i++)
        if (defs[i].required && !member(obj, defs[i].key)) return missing(env, jpath, defs[i].key);
    if (size == 0) return POLIS_OK;
    unsigned char *p = polis__alloc(env, size);
    if (!p) return nomem(env);
    for (int32_t i = 0; i < n; i++) {
        st = param_set(env, &defs[i], member(obj, defs[i].key), jpath, p + defs[i].offset);
        if (st != POLIS_OK) {
            polis__params_free(env, defs, n, size, p);
            return st;
        }
    }
    *out = p;
    return POLIS_OK;
}

void polis__params_free(polis_env *env, const polis_param_def *defs, int32_t n, size_t size,
                        void *params)
{
    if (!params) return;
    for (int32_t i = 0; i < n; i++) {
        if (defs[i].type != POLIS_PARAM_STRING || defs[i].offset + sizeof(char *) > size) continue;
        char *s;
        memcpy(&s, (unsigned char *)params + defs[i].offset, sizeof s);
        polis__strfree(env, s);
    }
    polis__free(env, params, size);
}

/* ---- files -------------------------------------------------------------------------------- */

static polis_status io_fail(polis_env *env, const char *path, int err)
{
    char msg[256];
    if (strerror_r(err, msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "error %d", err);
    return polis__fail(env, POLIS_ERR_IO, "cannot read %s: %s", path, msg);
}

polis_status polis__read_file(polis_env *env, const char *path, char **out, size_t *len)
{
    if (!out || !path) return polis__fail(env, POLIS_ERR_INVALID, "read_file: NULL argument");
    *out = NULL;
    if (len) *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return io_fail(env, path, errno);
    size_t cap = 4096, n = 0;
    char *buf = polis__realloc(env, NULL, 0, cap);
    int err = 0;
    while (buf) {
        if (cap - n < 2) {
            char *nb = cap <= SIZE_MAX / 2 ? polis__realloc(env, buf, cap, cap * 2) : NULL;
            if (!nb) {
                polis__free(env, buf, cap);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        errno = 0;
        size_t got_n = fread(buf + n, 1, cap - 1 - n, f);
        n += got_n;
        if (got_n == 0) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (!buf) return nomem(env);
    if (err) {
        polis__free(env, buf, cap);
        return io_fail(env, path, err);
    }
    /* Shrink to the exact size the caller frees: *len + 1. */
    char *exact = polis__realloc(env, buf, cap, n + 1);
    if (!exact) {
        polis__free(env, buf, cap);
        return nomem(env);
    }
    exact[n] = '\0';
    *out = exact;
    if (len) *len = n;
    return POLIS_OK;
}

char *polis__path_join(polis_env *env, const char *base, const char *rel)
{
    if (!rel) return NULL;
    char *s;
    if (rel[0] == '/' || !base || !base[0]) {
        s = polis__strdup(env, rel);
    } else {
        size_t bl = strlen(base), rl = strlen(rel);
        bool slash = base[bl - 1] == '/';
        s = polis__alloc(env, bl + !slash + rl + 1);
        if (s) {
            memcpy(s, base, bl);
            if (!slash) s[bl] = '/';
            memcpy(s + bl + !slash, rel, rl + 1);
        }
    }
    if (!s) nomem(env);
    return s;
}
