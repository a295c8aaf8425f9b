/*
 * engine/core/overrides.c — scenario overrides (polis_options.overrides): a JSON object of
 * "path": value members applied, in order, to the parsed scenario tree before config.c
 * reads it. So every override is checked by the same reader, with the same messages, as
 * the file itself, and a host (the CLI's `bench --agents`, the Python SDK's
 * `parallel_env(scenario, **overrides)`) changes a scenario without editing or re-serialising
 * it.
 *
 * Paths use the syntax of the scenario error messages: keys separated by '.', `[N]` for an
 * array element (`.N` too), `["any key"]` for a key with other characters, and a final `[+]`
 * to append to an array. Any other key
 * step into an array selects the element with that name (as config.c names entries: a
 * string element, the "name" member, or the stem of "path"), so
 * `plugins.gather.params.coins` does not depend on plugin order.
 *
 * The tree is cJSON's (C heap, as json.c explains); this file only edits it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define KEY_CAP 256  /* longest key in a path */
#define SHOW_CAP 200 /* a path or value quoted in a message is cut here */

typedef struct seg {
    bool is_index;
    bool append; /* `[+]`: the last step, adding the value at the end of an array */
    int64_t index;
    char key[KEY_CAP];
} seg;

/* The override being applied, for messages: its path as written (quoted) and how far the
 * walk got, in the scenario-message syntax ("plugins[0].params"). */
typedef struct walk {
    polis_env *env;
    const char *path;
    char shown[SHOW_CAP + 8];
    char where[512];
} walk;

static polis_status nomem(polis_env *env)
{
    return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

static polis_status wfail(walk *w, const char *fmt, ...) POLIS_PRINTF(2, 3);
static polis_status wfail(walk *w, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return polis__fail(w->env, POLIS_ERR_CONFIG, "overrides: %s: %s", w->shown, what);
}

/* A JSON-quoted copy of s, cut with "..." after SHOW_CAP bytes. */
static void quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s && n + 8 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (n >= SHOW_CAP) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n++] = '"';
    out[n] = '\0';
}

const char *polis__json_kind_name(const cJSON *n)
{
    if (!n) return "nothing";
    switch (n->type & 0xFF) {
    case cJSON_False:
    case cJSON_True: return "a boolean";
    case cJSON_NULL: return "null";
    case cJSON_Number: return "a number";
    case cJSON_String: return "a string";
    case cJSON_Array: return "an array";
    case cJSON_Object: return "an object";
    }
    return "not a JSON value";
}

static bool plain_key(const char *k)
{
    if (!*k) return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '_' || *k == '-'))
            return false;
    return true;
}

/* Appends a step to w->where the way scenario messages write paths. */
static void where_add(walk *w, const char *key, int64_t index)
{
    size_t len = strlen(w->where);
    size_t room = sizeof w->where - len;
    if (!key)
        snprintf(w->where + len, room, "[%" PRId64 "]", index);
    else if (plain_key(key))
        snprintf(w->where + len, room, "%s%s", len ? "." : "", key);
    else {
        char q[KEY_CAP + 16];
        quote(q, sizeof q, key);
        snprintf(w->where + len, room, "[%s]", q);
    }
}

static const char *where_or_top(const walk *w) { return w->where[0] ? w->where : "top level"; }

/* Reads one step at *p (after the first, it starts with '.' or '['). */
static polis_status next_seg(walk *w, const char **p, bool first, seg *s)
{
    const char *c = *p;
    s->is_index = false;
    s->append = false;
    s->key[0] = '\0';
    if (*c == '[') {
        c++;
        if (c[0] == '+' && c[1] == ']') {
            s->append = true;
            *p = c + 2;
            return POLIS_OK;
        }
        if (*c == '"') {
            size_t n = 0;
            for (c++; *c && *c != '"'; c++) {
                if (*c == '\\') {
                    c++;
                    if (*c != '"' && *c != '\\')
                        return wfail(w, "only \\\" and \\\\ may be escaped in a quoted key");
                }
                if (n + 1 >= KEY_CAP) return wfail(w, "a key is longer than %d bytes", KEY_CAP - 1);
                s->key[n++] = *c;
            }
            if (*c != '"' || c[1] != ']') return wfail(w, "unterminated [\"key\"]");
            s->key[n] = '\0';
            *p = c + 2;
            return POLIS_OK;
        }
        int64_t v = 0;
        const char *digits = c;
        for (; *c >= '0' && *c <= '9'; c++) {
            if (v > (INT32_MAX - (*c - '0')) / 10) return wfail(w, "array index too large");
            v = v * 10 + (*c - '0');
        }
        if (c == digits || *c != ']')
            return wfail(w, "expected [N], [+] or [\"key\"] at byte %td of the path",
                         digits - 1 - w->path);
        s->is_index = true;
        s->index = v;
        *p = c + 1;
        return POLIS_OK;
    }
    if (!first) {
        if (*c != '.') return wfail(w, "expected '.' or '[' after a step");
        c++;
    }
    size_t n = 0;
    for (; *c && *c != '.' && *c != '[' && *c != ']'; c++) {
        if (n + 1 >= KEY_CAP) return wfail(w, "a key is longer than %d bytes", KEY_CAP - 1);
        s->key[n++] = *c;
    }
    if (n == 0) return wfail(w, "empty key in the path");
    if (*c == ']') return wfail(w, "unexpected ']'");
    s->key[n] = '\0';
    *p = c;
    return POLIS_OK;
}

/* True when `path`'s file name without its extension is `key` ("rules.lua" for "rules"). */
static bool stem_is(const char *path, const char *key)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return strlen(key) == n && strncmp(base, key, n) == 0;
}

/* The element of an array named `key`, the way config.c names plugin and script entries: the
 * string `key`, an object whose "name" is `key`, or one without a "name" whose "path" has
 * the stem `key`. */
static int32_t find_named(const cJSON *arr, const char *key)
{
    int32_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (cJSON_IsString(e) && strcmp(e->valuestring, key) == 0) return i;
        if (!cJSON_IsObject(e)) continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
        if (cJSON_IsString(name) ? strcmp(name->valuestring, key) == 0
                                 : cJSON_IsString(path) && stem_is(path->valuestring, key))
            return i;
    }
    return -1;
}

/* A `.N` step (digits only) into an array is an index, like `[N]`. */
static bool digits_only(const char *k)
{
    if (!*k) return false;
    for (; *k; k++)
        if (*k < '0' || *k > '9') return false;
    return true;
}

/* The array element a step selects, by index or by name; -1 after a message. */
static int32_t array_pick(walk *w, const cJSON *arr, const seg *s)
{
    int32_t size = cJSON_GetArraySize(arr);
    if (s->is_index || digits_only(s->key)) {
        int64_t index = s->index;
        if (!s->is_index) {
            if (strlen(s->key) > 9)
                index = INT32_MAX;
            else
                index = strtol(s->key, NULL, 10);
        }
        if (index < size) return (int32_t)index;
        if (size == 0)
            wfail(w, "%s is an empty array", where_or_top(w));
        else
            wfail(w, "%s has %d element%s (indices 0 to %d)", where_or_top(w), size,
                  size == 1 ? "" : "s", size - 1);
        return -1;
    }
    int32_t i = find_named(arr, s->key);
    if (i < 0) {
        char q[KEY_CAP + 16];
        quote(q, sizeof q, s->key);
        wfail(w, "no element of %s is named %s", where_or_top(w), q);
    }
    return i;
}

/* Objects merge into objects, member by member (RFC 7386: null removes); anything else is
 * replaced by a copy. */
static polis_status merge(polis_env *env, cJSON *target, const cJSON *patch)
{
    for (const cJSON *m = patch->child; m; m = m->next) {
        cJSON *t = cJSON_GetObjectItemCaseSensitive(target, m->string);
        if (cJSON_IsNull(m)) {
            if (t) cJSON_DeleteItemFromObjectCaseSensitive(target, m->string);
            continue;
        }
        if (cJSON_IsObject(t) && cJSON_IsObject(m)) {
            polis_status st = merge(env, t, m);
            if (st != POLIS_OK) return st;
            continue;
        }
        cJSON *copy = cJSON_Duplicate(m, true);
        if (!copy) return nomem(env);
        bool ok = t ? cJSON_ReplaceItemInObjectCaseSensitive(target, m->string, copy)
                    : cJSON_AddItemToObject(target, m->string, copy);
        if (!ok) {
            cJSON_Delete(copy);
            return nomem(env);
        }
    }
    return POLIS_OK;
}

/* Adds a copy of `value` at the end of array `cur` (a final `[+]` step). */
static polis_status append_to(walk *w, cJSON *cur, const cJSON *value)
{
    if (!cJSON_IsArray(cur))
        return wfail(w, "%s is %s, not an array: [+] appends to an array", where_or_top(w),
                     polis__json_kind_name(cur));
    if (cJSON_IsNull(value)) return wfail(w, "null cannot be appended (null removes)");
    cJSON *copy = cJSON_Duplicate(value, true);
    if (!copy) return nomem(w->env);
    if (!cJSON_AddItemToArray(cur, copy)) {
        cJSON_Delete(copy);
        return nomem(w->env);
    }
    return POLIS_OK;
}

/* Puts `value` at child `s` of container `cur`. */
static polis_status set_at(walk *w, cJSON *cur, const seg *s, const cJSON *value)
{
    if (s->append) return append_to(w, cur, value);
    if (cJSON_IsObject(cur)) {
        if (s->is_index) return wfail(w, "%s is an object, not an array", where_or_top(w));
        cJSON *t = cJSON_GetObjectItemCaseSensitive(cur, s->key);
        if (cJSON_IsNull(value)) {
            if (t) cJSON_DeleteItemFromObjectCaseSensitive(cur, s->key);
            return POLIS_OK;
        }
        if (cJSON_IsObject(t) && cJSON_IsObject(value)) return merge(w->env, t, value);
        cJSON *copy = cJSON_Duplicate(value, true);
        if (!copy) return nomem(w->env);
        bool ok = t ? cJSON_ReplaceItemInObjectCaseSensitive(cur, s->key, copy)
                    : cJSON_AddItemToObject(cur, s->key, copy);
        if (!ok) cJSON_Delete(copy);
        return ok ? POLIS_OK : nomem(w->env);
    }
    if (cJSON_IsArray(cur)) {
        int32_t i = array_pick(w, cur, s);
        if (i < 0) return POLIS_ERR_CONFIG;
        cJSON *t = cJSON_GetArrayItem(cur, i);
        if (cJSON_IsNull(value)) {
            cJSON_DeleteItemFromArray(cur, i);
            return POLIS_OK;
        }
        if (cJSON_IsObject(t) && cJSON_IsObject(value)) return merge(w->env, t, value);
        cJSON *copy = cJSON_Duplicate(value, true);
        if (!copy) return nomem(w->env);
        if (!cJSON_ReplaceItemInArray(cur, i, copy)) {
            cJSON_Delete(copy);
            return nomem(w->env);
        }
        return POLIS_OK;
    }
    return wfail(w, "%s is %s, not an object or array", where_or_top(w),
                 polis__json_kind_name(cur));
}

/* The child that step `s` leads to, created when an object lacks the key (an empty array
 * when the next step appends, `[+]`, else an empty object); a bare string element named by
 * the step becomes {"name": ...} so it can take members such as "params". */
static polis_status descend(walk *w, cJSON *cur, const seg *s, bool next_appends, cJSON **out)
{
    *out = NULL;
    if (s->append) return wfail(w, "[+] appends a value, so it can only be the last step");
    if (cJSON_IsObject(cur)) {
        if (s->is_index) return wfail(w, "%s is an object, not an array", where_or_top(w));
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cur, s->key);
        if (!c && !(c = next_appends ? cJSON_AddArrayToObject(cur, s->key)
                                     : cJSON_AddObjectToObject(cur, s->key)))
            return nomem(w->env);
        where_add(w, s->key, 0);
        *out = c;
        return POLIS_OK;
    }
    if (cJSON_IsArray(cur)) {
        int32_t i = array_pick(w, cur, s);
        if (i < 0) return POLIS_ERR_CONFIG;
        cJSON *c = cJSON_GetArrayItem(cur, i);
        if (cJSON_IsString(c) && !s->is_index && !digits_only(s->key)) {
            cJSON *obj = cJSON_CreateObject();
            if (!obj || !cJSON_AddStringToObject(obj, "name", s->key) ||
                !cJSON_ReplaceItemInArray(cur, i, obj)) {
                cJSON_Delete(obj);
                return nomem(w->env);
            }
            c = obj;
        }
        where_add(w, NULL, i);
        *out = c;
        return POLIS_OK;
    }
    return wfail(w, "%s is %s, not an object or array", where_or_top(w),
                 polis__json_kind_name(cur));
}

/* What json.c's tree check refuses in the file, refused in override values too: numbers
 * that overflowed a double and keys repeated in one object. */
static polis_status check_value(walk *w, const cJSON *v)
{
    int t = v->type & 0xFF;
    if (t == cJSON_Number && !isfinite(v->valuedouble))
        return wfail(w, "number out of range for a double");
    if (t != cJSON_Object && t != cJSON_Array) return POLIS_OK;
    for (const cJSON *c = v->child; c; c = c->next) {
        if (t == cJSON_Object)
            for (const cJSON *d = c->next; d; d = d->next)
                if (strcmp(c->string, d->string) == 0) {
                    char q[KEY_CAP + 16];
                    quote(q, sizeof q, c->string);
                    return wfail(w, "key %s appears twice in the value", q);
                }
        polis_status st = check_value(w, c);
        if (st != POLIS_OK) return st;
    }
    return POLIS_OK;
}

static polis_status apply_one(polis_env *env, cJSON *root, const char *path, const cJSON *value)
{
    walk w;
    w.env = env;
    w.path = path;
    quote(w.shown, sizeof w.shown, path);
    w.where[0] = '\0';
    if (!*path) return wfail(&w, "empty path");
    polis_status st = check_value(&w, value);
    if (st != POLIS_OK) return st;
    const char *p = path;
    seg s, next;
    if ((st = next_seg(&w, &p, true, &s)) != POLIS_OK) return st;
    cJSON *cur = root;
    while (*p) {
        if ((st = next_seg(&w, &p, false, &next)) != POLIS_OK) return st;
        cJSON *child;
        if ((st = descend(&w, cur, &s, next.append, &child)) != POLIS_OK) return st;
        cur = child;
        s = next;
    }
    return set_at(&w, cur, &s, value);
}

polis_status polis__overrides_apply(polis_env *env, cJSON *root)
{
    if (!env->overrides || !cJSON_IsObject(root)) return POLIS_OK;
    const char *text = env->overrides;
    const char *end = NULL;
    errno = 0;
    cJSON *ov = cJSON_ParseWithOpts(text, &end, 1);
    if (!ov) {
        if (errno == ENOMEM) return nomem(env);
        size_t at = end && end >= text ? (size_t)(end - text) : 0;
        size_t len = strlen(text);
        if (at >= len)
            return polis__fail(env, POLIS_ERR_CONFIG,
                               "overrides: invalid JSON: unexpected end of input at byte %zu", len);
        char ex[32];
        snprintf(ex, sizeof ex, "%.24s", text + at);
        for (char *c = ex; *c; c++)
            if (*c == '\n' || *c == '\r') *c = '\0';
        return polis__fail(env, POLIS_ERR_CONFIG, "overrides: invalid JSON at byte %zu: '%s'", at,
                           ex);
    }
    polis_status st = POLIS_OK;
    if (!cJSON_IsObject(ov)) {
        st = polis__fail(env, POLIS_ERR_CONFIG,
                         "overrides: expected a JSON object of \"path\": value members, got %s",
                         polis__json_kind_name(ov));
    } else {
        for (const cJSON *m = ov->child; m && st == POLIS_OK; m = m->next)
            st = apply_one(env, root, m->string, m);
    }
    cJSON_Delete(ov);
    return st;
}
