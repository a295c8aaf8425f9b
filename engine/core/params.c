/*
 * engine/core/params.c — what plugins and scripts read from the scenario: parameter tables
 * validated into plain C structs, and the polis_json wrappers behind the host table's
 * json_* functions, allocated from an arena released with the JSON tree. The same wrappers
 * serve the documents plugins parse themselves (the "json" host API, ABI 1.7), each with an
 * arena of its own released when the plugin frees the document.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

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

static void *arena_alloc(polis_env *env, void **head, size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    arena_chunk *c = *head;
    if (!c || c->size - ARENA_HEADER - c->used < n) {
        size_t size = ARENA_HEADER + (n > ARENA_CHUNK ? n : ARENA_CHUNK);
        arena_chunk *nc = polis__alloc(env, size);
        if (!nc) return NULL;
        nc->size = size;
        nc->next = c;
        *head = c = nc;
    }
    void *p = (char *)c + ARENA_HEADER + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

static void arena_release(polis_env *env, void **head)
{
    arena_chunk *c = *head;
    while (c) {
        arena_chunk *next = c->next;
        polis__free(env, c, c->size);
        c = next;
    }
    *head = NULL;
}

void polis__json_arena_free(polis_env *env) { arena_release(env, &env->json_arena); }

/* ---- JSON wrappers for plugins ------------------------------------------------------------ */

struct polis_json {
    const cJSON *node; /* NULL: absent */
    const char *path;
    polis_env *env;     /* NULL only for the static fallbacks below */
    void **arena;       /* where child wrappers come from: the env's, or a document's */
    const char *source; /* a document's name for messages; NULL: the scenario's file */
    int32_t len;        /* children without comments; -1 until counted */
    int32_t cur_index;  /* iteration cursor: child number cur_index is cur */
    const cJSON *cur;
    bool oom;  /* stands in for a wrapper that could not be allocated */
    bool root; /* the root of a parsed document (json_doc) */
};

/* Immutable stand-ins returned where no wrapper can be allocated; never written. */
static const polis_json json_none = {NULL, "(none)", NULL, NULL, NULL, 0, 0, NULL, false, false};
static const polis_json json_oom = {NULL, "(out of memory)", NULL, NULL, NULL, 0, 0, NULL, true,
                                    false};

static polis_json *wrap_new(polis_env *env, void **arena, const cJSON *node, size_t path_len)
{
    polis_json *w = arena_alloc(env, arena, sizeof *w + path_len + 1);
    if (!w) return NULL;
    w->node = node;
    w->path = (char *)(w + 1);
    w->env = env;
    w->arena = arena;
    w->len = -1;
    return w;
}

const polis_json *polis__json_wrap(polis_env *env, const cJSON *node, const char *path)
{
    if (!path) path = "";
    size_t n = strlen(path);
    polis_json *w = wrap_new(env, &env->json_arena, node, n);
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
    polis_json *w = wrap_new(env, j->arena, node, n);
    if (!w) {
        nomem(env);
        return &json_oom;
    }
    w->source = j->source;
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

/* A document's messages name the document ("<plugin>: <name>: <path>: ..."), not the
 * scenario file: its source stands in for the scenario's while the value is read. */
static char *source_push(polis_env *env, const polis_json *j)
{
    char *saved = env->scn.source;
    if (j->source) env->scn.source = (char *)(uintptr_t)j->source;
    return saved;
}

polis_status polis__json_int(polis_ctx *ctx, const polis_json *j, int64_t min, int64_t max,
                             int64_t *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    if (st != POLIS_OK) return st;
    char *saved = source_push(env, j);
    st = want_int(env, j->node, j->path, min, max, out);
    env->scn.source = saved;
    return st;
}

polis_status polis__json_double(polis_ctx *ctx, const polis_json *j, double min, double max,
                                double *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    if (st != POLIS_OK) return st;
    char *saved = source_push(env, j);
    st = want_double(env, j->node, j->path, min, max, out);
    env->scn.source = saved;
    return st;
}

polis_status polis__json_string(polis_ctx *ctx, const polis_json *j, const char **out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    if (st != POLIS_OK) return st;
    char *saved = source_push(env, j);
    st = want_string(env, j->node, j->path, false, out);
    env->scn.source = saved;
    return st;
}

polis_status polis__json_bool(polis_ctx *ctx, const polis_json *j, bool *out)
{
    polis_env *env;
    polis_status st = read_check(ctx, j, out, &env);
    if (st != POLIS_OK) return st;
    char *saved = source_push(env, j);
    st = want_bool(env, j->node, j->path, out);
    env->scn.source = saved;
    return st;
}

/* ---- documents plugins parse (the "json" host API) ----------------------------------------- */

/* A parsed document: its root wrapper first, so the root a plugin holds is the document. */
typedef struct json_doc {
    polis_json root;
    cJSON *tree;
    void *arena;  /* the wrappers of its members */
    char *source; /* "<plugin>: <name>" */
} json_doc;

polis_status polis__json_doc_parse(polis_ctx *ctx, const char *text, size_t len, const char *name,
                                   const polis_json **out)
{
    if (!ctx) return POLIS_ERR_INVALID;
    polis_env *env = ctx->env;
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "%s: json parse: out is NULL", ctx->name);
    *out = NULL;
    if (!text)
        return polis__fail(env, POLIS_ERR_INVALID, "%s: json parse: text is NULL", ctx->name);
    if (!name || !*name) name = "json";
    if (len > POLIS__JSON_DOC_MAX)
        return polis__fail(env, POLIS_ERR_LIMIT, "%s: %s: %zu bytes of JSON, more than %zu",
                           ctx->name, name, len, (size_t)POLIS__JSON_DOC_MAX);
    size_t slen = strlen(ctx->name) + strlen(name) + 3;
    json_doc *doc = polis__alloc(env, sizeof *doc);
    char *source = polis__alloc(env, slen);
    if (!doc || !source) {
        polis__free(env, doc, sizeof *doc);
        polis__free(env, source, slen);
        return nomem(env);
    }
    snprintf(source, slen, "%s: %s", ctx->name, name);
    char *saved = env->scn.source;
    env->scn.source = source;
    polis_status st = json_parse(env, text, len, &doc->tree);
    env->scn.source = saved;
    if (st != POLIS_OK) {
        polis__free(env, doc, sizeof *doc);
        polis__free(env, source, slen);
        return st;
    }
    doc->source = source;
    doc->root = (polis_json){.node = doc->tree,
                             .path = "",
                             .env = env,
                             .arena = &doc->arena,
                             .source = source,
                             .len = -1,
                             .root = true};
    *out = &doc->root;
    return POLIS_OK;
}

void polis__json_doc_free(polis_ctx *ctx, const polis_json *j)
{
    if (!ctx || !j || !j->root) return; /* NULL, or not a document: nothing to free */
    json_doc *doc = (json_doc *)(uintptr_t)j;
    polis_env *env = ctx->env;
    cJSON_Delete(doc->tree);
    arena_release(env, &doc->arena);
    polis__free(env, doc->source, strlen(doc->source) + 1);
    polis__free(env, doc, sizeof *doc);
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
