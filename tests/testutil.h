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
    long calls;     /* allocations and reallocations that asked for memory */
    long fail_at;   /* 0 = never */
    long long live; /* bytes currently allocated */
    long long peak; /* the most bytes allocated at once */
    int failed;     /* an allocation was refused */
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
    if (a->live > a->peak) a->peak = a->live;
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

/* Creates an env from a scenario file, plugin log lines into log (may be NULL); on failure
 * prints the error and returns NULL. */
static inline polis_env *test_env_file_log(const char *path, test_log *log, test_alloc *alloc)
{
    polis_options o = test_options(log, alloc);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return NULL;
    }
    return env;
}

/* test_env_file_log without a log. */
static inline polis_env *test_env_file(const char *path, test_alloc *alloc)
{
    return test_env_file_log(path, NULL, alloc);
}

/* Agent's bytes of the observation field `name` (its layout into *out when out is not
 * NULL); NULL, after a message, when the env has no such field. */
static inline const void *test_obs_field(polis_env *env, int32_t agent, const char *name,
                                         polis_obs_field *out)
{
    const polis_io *io = polis_env_io(env);
    if (out) memset(out, 0, sizeof *out);
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++) {
        polis_obs_field f;
        polis_env_obs_field(env, i, &f);
        if (strcmp(f.name, name) == 0) {
            if (out) *out = f;
            return io->obs + (size_t)agent * io->obs_size + f.offset;
        }
    }
    fprintf(stderr, "no observation field %s\n", name);
    return NULL;
}

/* An action's id by name; -1, after a message, when there is none. */
static inline int32_t test_action_id(polis_env *env, const char *name)
{
    int32_t id = polis_env_action_id(env, name);
    if (id < 0) fprintf(stderr, "no action named %s\n", name);
    return id;
}

/* Agent's mask bit of the named action. */
static inline uint8_t test_mask(polis_env *env, int32_t agent, const char *action)
{
    const polis_io *io = polis_env_io(env);
    return io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)test_action_id(env, action)];
}

/* Sets every agent's action by name (names[a], noop when NULL) and steps; a failing step
 * prints the env's error. */
static inline polis_status test_step_names(polis_env *env, const char *const *names)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++)
        io->actions[a] = names[a] ? test_action_id(env, names[a]) : 0;
    polis_status st = polis_env_step(env);
    if (st) fprintf(stderr, "step failed: %s\n", polis_env_error(env));
    return st;
}

/* The failing-allocator sweep over creating an env from a scenario file: the creation is
 * repeated with each of its allocations failing in turn, and each must fail cleanly
 * (POLIS_ERR_NOMEM, whatever status a plugin returned after the failed allocation) and leak
 * nothing.
 * Returns the number of creations that broke that rule (each printed); *out_total is the
 * number of allocations of a successful creation, *out_failures how many sweeps failed. */
static inline long test_create_sweep(const char *path, long *out_total, long *out_failures)
{
    test_alloc probe = {0};
    polis_env *env = test_env_file(path, &probe);
    if (!env) return 1;
    polis_env_destroy(env);
    long bad = 0, failures = 0;
    for (long k = 1; k <= probe.calls; k++) {
        test_alloc al = {0};
        al.fail_at = k;
        polis_options o = test_options(NULL, &al);
        polis_error err;
        env = NULL;
        polis_status st = polis_env_create_file(path, &o, &env, &err);
        if (st == POLIS_OK) {
            polis_env_destroy(env);
        } else {
            failures++;
            if (st != POLIS_ERR_NOMEM) {
                fprintf(stderr, "%s, allocation %ld failing: %s\n", path, k, err.message);
                bad++;
            }
        }
        if (al.live != 0) {
            fprintf(stderr, "%s, allocation %ld failing: %lld bytes leaked\n", path, k, al.live);
            bad++;
        }
    }
    *out_total = probe.calls;
    *out_failures = failures;
    return bad;
}

/* Renders and returns a static copy of the text, or "ERR <status>: <message>" (" [out not
 * NULL]" appended when a failed call left *out set, which a test's exact match then shows). */
static inline const char *test_render(polis_env *env, int32_t agent, const char *format)
{
    static char buf[1 << 15];
    char *out = (char *)"junk";
    polis_status st = polis_env_render(env, agent, format, &out);
    if (st != POLIS_OK) {
        snprintf(buf, sizeof buf, "ERR %d: %s%s", (int)st, polis_env_error(env),
                 out ? " [out not NULL]" : "");
        return buf;
    }
    snprintf(buf, sizeof buf, "%s", out);
    polis_free(out);
    return buf;
}

/* Parses an action and returns "<id> <name>" or "ERR <status>: <message>" (" [id not -1]"
 * appended when a failed parse left an id). */
static inline const char *test_parse(polis_env *env, int32_t agent, const char *input)
{
    static char buf[2048];
    int32_t id = 12345;
    polis_status st = polis_env_parse_action(env, agent, input, &id);
    if (st != POLIS_OK) {
        snprintf(buf, sizeof buf, "ERR %d: %s%s", (int)st, polis_env_error(env),
                 id != -1 ? " [id not -1]" : "");
        return buf;
    }
    snprintf(buf, sizeof buf, "%d %s", id, polis_env_action_name(env, id));
    return buf;
}

/* Sets every agent's action id and steps; a failing step prints the env's error. */
static inline polis_status test_step_ids(polis_env *env, const int32_t *actions)
{
    const polis_io *io = polis_env_io(env);
    memcpy(io->actions, actions, sizeof(int32_t) * (size_t)io->n_agents);
    polis_status st = polis_env_step(env);
    if (st) fprintf(stderr, "step failed: %s\n", polis_env_error(env));
    return st;
}

/* A deterministic policy: uniform over each agent's legal actions, drawn from a generator
 * of its own (not the env's), so the policy does not perturb the env stream. */
static inline void test_uniform_policy(polis_env *env, polis_rng *r)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) {
        const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
        int32_t legal[64], n = 0;
        for (int32_t k = 0; k < io->n_actions && n < 64; k++)
            if (m[k]) legal[n++] = k;
        io->actions[a] = legal[polis_rng_below(r, (uint32_t)n)];
    }
}

/* A file's bytes (malloc'd, not NUL-terminated) and their count in *len; NULL when it cannot be
 * read. */
static inline char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *len = 0;
    if (!f) return NULL;
    char *text = NULL;
    size_t cap = 0;
    for (size_t n; text = realloc(text, cap + 65536), text && (n = fread(text + cap, 1, 65536, f));)
        cap += n;
    fclose(f);
    *len = cap;
    return text;
}

/* A seeded trajectory of a scenario file under test_uniform_policy: `steps` steps (an
 * episode that ends is reset with seed + the step number), every step's state hash folded
 * into one. 0 on any failure (printed); *ret, when given, is the summed reward. The golden
 * hashes of the kernel (tests/unit/test_determinism.c) and of games (their tests) are such
 * trajectories. */
static inline uint64_t test_trajectory(const char *path, uint64_t seed, int steps, float *ret)
{
    polis_env *env = test_env_file(path, NULL);
    if (!env) return 0;
    polis_rng r;
    polis_rng_seed(&r, seed, 99);
    uint64_t h = 0;
    float total = 0;
    if (polis_env_reset(env, seed) != POLIS_OK) {
        polis_env_destroy(env);
        return 0;
    }
    for (int t = 0; t < steps; t++) {
        if (polis_env_done(env)) polis_env_reset(env, seed + (uint64_t)t);
        test_uniform_policy(env, &r);
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "step: %s\n", polis_env_error(env));
            polis_env_destroy(env);
            return 0;
        }
        for (int32_t a = 0; a < polis_env_n_agents(env); a++)
            total += polis_env_io(env)->rewards[a];
        h = h * 31 + polis_env_state_hash(env);
    }
    polis_env_destroy(env);
    if (ret) *ret = total;
    return h;
}

#endif
