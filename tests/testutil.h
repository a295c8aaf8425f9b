/* tests/testutil.h — helpers shared by the C tests: an env with captured log lines, a
 * counting allocator that can be told to fail, and a scenario string builder. */
#ifndef POLIS_TEST_UTIL_H
#define POLIS_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/plugin.h"
#include "polis/polis.h"

/* Captured log lines, one per line in one buffer. */
typedef struct test_log {
    char text[1 << 16];
    size_t len;
    int lines;
} test_log;

static inline void test_log_fn(void *ud, const char *msg)
{
    test_log *l = ud;
    size_t n = strlen(msg);
    if (l->len + n + 2 < sizeof l->text) {
        memcpy(l->text + l->len, msg, n);
        l->len += n;
        l->text[l->len++] = '\n';
        l->text[l->len] = '\0';
    }
    l->lines++;
}

static inline void test_log_clear(test_log *l)
{
    l->len = 0;
    l->text[0] = '\0';
    l->lines = 0;
}

/* A counting allocator: fail_at = N makes the Nth allocation (1-based) fail; live bytes and
 * the allocation count let tests prove "no leak" and "no allocation in step". */
typedef struct test_alloc {
    long calls;      /* allocations and reallocations that asked for memory */
    long fail_at;    /* 0 = never */
    long long live;  /* bytes currently allocated */
    int failed;      /* an allocation was refused */
} test_alloc;

static inline void *test_alloc_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    test_alloc *a = ud;
    if (nsize == 0) {
        if (ptr) a->live -= (long long)osize;
        free(ptr);
        return NULL;
    }
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) {
        a->failed = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) a->live += (long long)nsize - (ptr ? (long long)osize : 0);
    return p;
}

static inline polis_options test_options(test_log *log, test_alloc *alloc)
{
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = POLIS_TEST_PLUGIN_DIR ":" POLIS_PLUGIN_DIR;
    if (log) {
        o.log = test_log_fn;
        o.log_ud = log;
    }
    if (alloc) {
        o.alloc = test_alloc_fn;
        o.alloc_ud = alloc;
    }
    return o;
}

/* Creates an env from a JSON string; on failure prints the error and returns NULL. */
static inline polis_env *test_env(const char *json, test_log *log, test_alloc *alloc)
{
    polis_options o = test_options(log, alloc);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

/* Creation is expected to fail; returns the message (static buffer). */
static inline const char *test_env_error(const char *json)
{
    static polis_error err;
    polis_options o = test_options(NULL, NULL);
    polis_env *env = NULL;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) == POLIS_OK) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    return err.message;
}

#endif
