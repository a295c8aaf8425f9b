/*
 * tests/lua/test_lua_alloc.c — the failing-allocator sweep through Lua scripts: for every N,
 * the Nth allocation of a create/reset/step/reset/step run fails. Each run must end in a
 * clean POLIS_ERR_NOMEM (never a crash, another status or a leak), and after a failed reset
 * or step the env must reset and step again, so a Lua state that met an allocation failure
 * stays usable. A second sweep fails every allocation from the Nth on: each call then
 * returns OK or POLIS_ERR_NOMEM and destroy still frees everything.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/polis.h"

#include "check.h"

typedef struct counting {
    long calls, fail_at;
    bool persist; /* fail every allocation from fail_at on */
    long long live;
} counting;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counting *c = ud;
    if (nsize == 0) {
        if (ptr) c->live -= (long long)osize;
        free(ptr);
        return NULL;
    }
    ++c->calls;
    if (c->fail_at && (c->calls == c->fail_at || (c->persist && c->calls > c->fail_at)))
        return NULL;
    void *p = realloc(ptr, nsize);
    if (p) c->live += (long long)nsize - (ptr ? (long long)osize : 0);
    return p;
}

static const char scenario[] =
    "{\"agents\": 3, \"max_steps\": 4, \"grid\": {\"width\": 4, \"height\": 4},"
    " \"scripts\": [{\"path\": \"sweep.lua\", \"params\": {\"n\": 2}}]}";

static void discard_log(void *ud, const char *msg) { (void)ud, (void)msg; }

/* One run; returns the number of allocations it asked for. A failure must be NOMEM with a
 * message; afterwards the env must recover. */
static long run(long fail_at, int *failures_seen)
{
    counting c = {.fail_at = fail_at};
    polis_options o = {0};
    o.struct_size = sizeof o;
    o.alloc = count_alloc;
    o.alloc_ud = &c;
    o.base_dir = POLIS_LUA_ALLOC_DIR;
    o.log = discard_log;
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json(scenario, strlen(scenario), &o, &env, &err);
    if (st != POLIS_OK) {
        (*failures_seen)++;
        CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
        if (st != POLIS_ERR_NOMEM)
            fprintf(stderr, "  fail_at %ld: create: %s\n", fail_at, err.message);
        CHECK(err.message[0] != '\0');
    } else {
        const polis_io *io = polis_env_io(env);
        for (int ep = 0; ep < 2; ep++) {
            st = polis_env_reset(env, 5);
            for (int t = 0; st == POLIS_OK && t < 3; t++) {
                for (int a = 0; a < io->n_agents; a++) io->actions[a] = (a + t) % 2;
                st = polis_env_step(env);
            }
            if (st != POLIS_OK) {
                (*failures_seen)++;
                CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
                if (st != POLIS_ERR_NOMEM)
                    fprintf(stderr, "  fail_at %ld: %s\n", fail_at, polis_env_error(env));
                CHECK(polis_env_error(env)[0] != '\0');
                /* Only the Nth allocation fails: the env must come back. */
                CHECK_EQ_INT(polis_env_reset(env, 6), POLIS_OK);
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            }
        }
        polis_env_destroy(env);
    }
    CHECK_EQ_INT(c.live, 0);
    return c.calls;
}

/* From the Nth allocation on, everything fails. */
static void run_persistent(long fail_at, int *failures_seen)
{
    counting c = {.fail_at = fail_at, .persist = true};
    polis_options o = {0};
    o.struct_size = sizeof o;
    o.alloc = count_alloc;
    o.alloc_ud = &c;
    o.base_dir = POLIS_LUA_ALLOC_DIR;
    o.log = discard_log;
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json(scenario, strlen(scenario), &o, &env, &err);
    if (st != POLIS_OK) {
        (*failures_seen)++;
        CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
    } else {
        const polis_io *io = polis_env_io(env);
        bool failed = false;
        for (int ep = 0; ep < 2; ep++) {
            st = polis_env_reset(env, 5);
            for (int t = 0; st == POLIS_OK && t < 3; t++) {
                for (int a = 0; a < io->n_agents; a++) io->actions[a] = (a + t) % 2;
                st = polis_env_step(env);
            }
            if (st != POLIS_OK) {
                failed = true;
                CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
                if (st != POLIS_ERR_NOMEM)
                    fprintf(stderr, "  from %ld: %s\n", fail_at, polis_env_error(env));
            }
        }
        if (failed) (*failures_seen)++;
        polis_env_destroy(env);
    }
    CHECK_EQ_INT(c.live, 0);
}

int main(void)
{
    int failures = 0;
    long total = run(0, &failures);
    CHECK_EQ_INT(failures, 0);
    CHECK(total > 100);
    failures = 0;
    for (long n = 1; n <= total; n++) run(n, &failures);
    /* Every allocation of the run was made to fail once, and each failure was seen. */
    fprintf(stderr, "%ld allocations swept, %d runs failed cleanly\n", total, failures);
    CHECK(failures > 0);
    failures = 0;
    for (long n = 1; n <= total; n++) run_persistent(n, &failures);
    /* The run needs every one of its allocations, so each of these runs must fail. */
    CHECK_EQ_INT(failures, total);
    CHECK_DONE();
}
