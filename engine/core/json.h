/*
 * engine/core/json.h — what json.c (JSON text: parsing, paths, messages, typed reads) offers to
 * config.c (the scenario schema) and params.c (parameter tables and polis_json wrappers).
 * The kernel's own, like core/internal.h (modules never include it: docs/architecture.md).
 *
 * The functions are named polis__json_<verb> and hidden; the three files call them by the
 * short names below, which keep the readers of the schema compact. Every message is
 * "<source>: <JSON path>: <what>" with POLIS_ERR_CONFIG unless said otherwise.
 */
#ifndef POLIS_JSON_H
#define POLIS_JSON_H

#include <cjson/cJSON.h>

#include "internal.h"

#define PATH_CAP 512 /* JSON paths inside messages are cut at this length */
#define GOT_CAP 60   /* "got" values longer than this are cut with "..." */
#define TOP "top level"

/* Appends keep counting past `cap` in `len`, so one pass can measure what a second pass with
 * an exact buffer will write (cap 0 only measures). */
typedef struct polis__strbuf {
    char *s;
    size_t cap;
    size_t len;
} strbuf;

/* The scenario's file name for messages, "<string>" for text. */
POLIS_INTERNAL const char *polis__json_src_of(const polis_env *env);
/* "out of memory", POLIS_ERR_NOMEM. */
POLIS_INTERNAL polis_status polis__json_nomem(polis_env *env);
POLIS_INTERNAL void polis__json_sb_puts(strbuf *b, const char *s);

/* Writes base plus one step (a member `key`, or element `index` when key is NULL) into dst,
 * cut at cap, and returns the full length; cap 0 only measures. */
POLIS_INTERNAL size_t polis__json_path_write(char *dst, size_t cap, const char *base,
                                             const char *key, int64_t index);
/* base + one step, into a message-sized buffer. */
POLIS_INTERNAL const char *polis__json_path_step(char out[PATH_CAP], const char *base,
                                                 const char *key, int64_t index);
/* "<source>: <path>: <what>" with POLIS_ERR_CONFIG. */
POLIS_INTERNAL polis_status polis__json_cfg_fail(polis_env *env, const char *path, const char *fmt,
                                                 ...) POLIS_PRINTF(3, 4);
/* A value for the "got ..." part of a message: compact JSON, cut with "..." when long. */
POLIS_INTERNAL const char *polis__json_got(char out[GOT_CAP + 8], const cJSON *n);
/* "<path>: expected <what>, got <value>", or "<path>: missing (expected <what>)" for an
 * absent value (NULL). */
POLIS_INTERNAL polis_status polis__json_mismatch(polis_env *env, const char *path, const cJSON *n,
                                                 const char *fmt, ...) POLIS_PRINTF(4, 5);
/* "<path>: missing required key "<key>"". */
POLIS_INTERNAL polis_status polis__json_missing(polis_env *env, const char *path, const char *key);

POLIS_INTERNAL bool polis__json_is_comment_key(const char *k); /* "_..." keys are comments */
POLIS_INTERNAL bool polis__json_is_object(const cJSON *n);
POLIS_INTERNAL bool polis__json_is_container(const cJSON *n);
/* obj's member `key`, NULL if absent or obj is not an object (names are unique once
 * parsed). */
POLIS_INTERNAL const cJSON *polis__json_member(const cJSON *obj, const char *key);

/* The index of the first of n names that repeats an earlier one, -1 if none, -2 if out of
 * memory. The names are a container's member names (`obj`) or `names`. */
POLIS_INTERNAL int32_t polis__json_first_repeat(polis_env *env, const cJSON *obj,
                                                char *const *names, int32_t n);
/* Parses len bytes of text into *out (cJSON_Delete it). Syntax errors are
 * "<source>:<line>:<col>: invalid JSON: <what>"; repeated member names and numbers out of
 * range for a double are refused with their path. */
POLIS_INTERNAL polis_status polis__json_parse(polis_env *env, const char *text, size_t len,
                                              cJSON **out);

/* Typed reads: each refuses a value of the wrong type or outside its range with a message
 * naming `path`, the expectation and the value found. */
POLIS_INTERNAL bool polis__json_as_int64(const cJSON *n, int64_t *out);
POLIS_INTERNAL polis_status polis__json_want_int(polis_env *env, const cJSON *n, const char *path,
                                                 int64_t lo, int64_t hi, int64_t *out);
/* Reads the member `key` of obj, if present, as an integer in [lo, hi] into *out64 or *out32
 * (whichever is given); an absent member leaves the default in place. */
POLIS_INTERNAL polis_status polis__json_opt_int(polis_env *env, const cJSON *obj, const char *path,
                                                const char *key, int64_t lo, int64_t hi,
                                                int64_t *out64, int32_t *out32);
POLIS_INTERNAL polis_status polis__json_want_double(polis_env *env, const cJSON *n,
                                                    const char *path, double lo, double hi,
                                                    double *out);
POLIS_INTERNAL polis_status polis__json_want_bool(polis_env *env, const cJSON *n, const char *path,
                                                  bool *out);
POLIS_INTERNAL polis_status polis__json_want_string(polis_env *env, const cJSON *n,
                                                    const char *path, bool nonempty,
                                                    const char **out);
/* type: cJSON_Object or cJSON_Array. */
POLIS_INTERNAL polis_status polis__json_want_type(polis_env *env, const cJSON *n, const char *path,
                                                  int type);
/* Refuses members that are neither comments ("_...") nor among n names found `stride` bytes
 * apart from `keys` (a string array, or the key fields of a parameter table). */
POLIS_INTERNAL polis_status polis__json_check_keys(polis_env *env, const cJSON *obj,
                                                   const char *path, const void *keys,
                                                   size_t stride, int32_t n);

/* The arena the polis_json wrappers live in (params.c), freed with the tree. */
POLIS_INTERNAL void polis__json_arena_free(polis_env *env);

#define src_of(env) polis__json_src_of(env)
#define nomem(env) polis__json_nomem(env)
#define sb_puts(b, s) polis__json_sb_puts(b, s)
#define path_write(...) polis__json_path_write(__VA_ARGS__)
#define path_step(...) polis__json_path_step(__VA_ARGS__)
#define cfg_fail(...) polis__json_cfg_fail(__VA_ARGS__)
#define got(out, n) polis__json_got(out, n)
#define mismatch(...) polis__json_mismatch(__VA_ARGS__)
#define missing(env, path, key) polis__json_missing(env, path, key)
#define is_comment_key(k) polis__json_is_comment_key(k)
#define is_object(n) polis__json_is_object(n)
#define is_container(n) polis__json_is_container(n)
#define member(obj, key) polis__json_member(obj, key)
#define first_repeat(...) polis__json_first_repeat(__VA_ARGS__)
#define json_parse(...) polis__json_parse(__VA_ARGS__)
#define as_int64(n, out) polis__json_as_int64(n, out)
#define want_int(...) polis__json_want_int(__VA_ARGS__)
#define opt_int(...) polis__json_opt_int(__VA_ARGS__)
#define want_double(...) polis__json_want_double(__VA_ARGS__)
#define want_bool(...) polis__json_want_bool(__VA_ARGS__)
#define want_string(...) polis__json_want_string(__VA_ARGS__)
#define want_type(...) polis__json_want_type(__VA_ARGS__)
#define check_keys(...) polis__json_check_keys(__VA_ARGS__)

#define REFUSE_UNKNOWN(env, obj, path, keys)                                                       \
    check_keys((env), (obj), (path), (keys), sizeof(keys)[0],                                      \
               (int32_t)(sizeof(keys) / sizeof(keys)[0]))

#endif
