/* polis_vec: bad input, zero-copy slices, next-step auto-reset, equivalence with lone envs
 * seeded by polis_vec_env_seed, determinism across thread counts and across the pool's
 * choice of handing a call off or not, resets made ahead (the "reset_ahead" host API: the
 * same episodes whether or not a prepared world is taken), error propagation with the env
 * index, episode statistics, and a step loop that allocates nothing (also with threads). No
 * timing. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include "check.h"
#include "testutil.h"
#include "vec/internal.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"
#define VEC_DIR POLIS_TEST_SOURCE_DIR "/scenarios/vec"

static polis_vec *make_vec(const char *overrides, int32_t m, int32_t t, test_alloc *al)
{
    polis_options o = test_options(NULL, al);
    o.overrides = overrides;
    polis_vec *v = NULL;
    polis_error err;
    if (polis_vec_create_file(WALKER, &o, m, t, &v, &err) != POLIS_OK) {
        fprintf(stderr, "vec create failed: %s\n", err.message);
        return NULL;
    }
    return v;
}

static polis_env *make_env(const char *overrides)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(WALKER, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "env create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t vec_hash(const polis_vec *v)
{
    const polis_io *io = polis_vec_io(v);
    size_t n = (size_t)io->n_agents;
    uint64_t h = 14695981039346656037ULL;
    h = fnv(h, io->obs, n * io->obs_size);
    h = fnv(h, io->masks, n * (size_t)io->n_actions);
    h = fnv(h, io->rewards, n * sizeof(float));
    h = fnv(h, io->terminations, n);
    h = fnv(h, io->truncations, n);
    h = fnv(h, io->illegal, n);
    h = fnv(h, polis_vec_autoreset(v), (size_t)polis_vec_n_envs(v));
    return h;
}

static void random_actions(const polis_io *io, polis_rng *r)
{
    for (int32_t a = 0; a < io->n_agents; a++)
        io->actions[a] = (int32_t)polis_rng_below(r, (uint32_t)io->n_actions);
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void test_bad_input(void)
{
    polis_vec *v = (polis_vec *)1;
    polis_error err;
    CHECK_EQ_INT(polis_vec_create_file(WALKER, NULL, 0, 1, &v, &err), POLIS_ERR_INVALID);
    CHECK(v == NULL);
    CHECK_EQ_STR(err.message, "polis_vec: n_envs is 0, expected at least 1");
    CHECK_EQ_INT(polis_vec_create_file(WALKER, NULL, -3, 1, &v, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec: n_envs is -3, expected at least 1");
    CHECK_EQ_INT(polis_vec_create_file(WALKER, NULL, 2, 0, &v, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec: n_threads is 0, expected 1 to n_envs (2)");
    CHECK_EQ_INT(polis_vec_create_file(WALKER, NULL, 2, 3, &v, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec: n_threads is 3, expected 1 to n_envs (2)");
    CHECK_EQ_INT(polis_vec_create_file(NULL, NULL, 1, 1, &v, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec_create_file: path is NULL");
    CHECK_EQ_INT(polis_vec_create_file(WALKER, NULL, 1, 1, NULL, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec_create_file: out is NULL");
    CHECK_EQ_INT(polis_vec_create_json(NULL, 0, NULL, 1, 1, &v, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_vec_create_json: json is NULL");
    CHECK_EQ_INT(polis_vec_create_file("/nonexistent/x.json", NULL, 1, 1, &v, &err), POLIS_ERR_IO);
    CHECK_EQ_STR(err.message, "cannot read /nonexistent/x.json: No such file or directory");

    /* A creation error names the env and keeps the env's message. */
    const char *bad = "{\"agents\": 0}";
    CHECK_EQ_INT(polis_vec_create_json(bad, strlen(bad), NULL, 2, 1, &v, &err), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(err.message, "env 0: <string>: agents: expected integer in [1, 65536], got 0");

    /* More rows than an int32 holds: refused before the buffers are allocated. */
    const char *wide = "{\"agents\": 65536}";
    CHECK_EQ_INT(polis_vec_create_json(wide, strlen(wide), NULL, 40000, 1, &v, &err),
                 POLIS_ERR_LIMIT);
    CHECK_EQ_STR(err.message,
                 "polis_vec: 40000 envs x 65536 agents is 2621440000 rows, more than 2147483647");
    CHECK(v == NULL);

    /* Lifecycle errors. */
    v = make_vec(NULL, 2, 1, NULL);
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ_INT(polis_vec_step(v), POLIS_ERR_STATE);
        CHECK_EQ_STR(polis_vec_error(v), "polis_vec_step: call polis_vec_reset first");
        CHECK(polis_vec_env(v, 2) == NULL);
        CHECK(polis_vec_env(v, -1) == NULL);
        CHECK_EQ_INT(polis_vec_episode(v, 5), -1);
        polis_vec_destroy(v);
    }
    polis_vec_destroy(NULL);
}

/* ---- layout and zero copy ------------------------------------------------------------------- */

static void test_layout(void)
{
    polis_vec *v = make_vec(NULL, 3, 2, NULL);
    CHECK(v != NULL);
    if (!v) return;
    const polis_io *io = polis_vec_io(v);
    CHECK_EQ_INT(polis_vec_n_envs(v), 3);
    CHECK_EQ_INT(polis_vec_n_threads(v), 2);
    CHECK_EQ_INT(polis_vec_agents_per_env(v), 4);
    CHECK_EQ_INT(io->n_agents, 12);
    CHECK_EQ_INT(io->n_actions, 5);
    CHECK_EQ_INT(io->obs_size, 64);
    for (int32_t k = 0; k < 3; k++) {
        const polis_io *e = polis_env_io(polis_vec_env(v, k));
        size_t r = (size_t)k * 4;
        CHECK_EQ_INT(e->n_agents, 4);
        CHECK(e->obs == io->obs + r * io->obs_size);
        CHECK(e->masks == io->masks + r * (size_t)io->n_actions);
        CHECK(e->actions == io->actions + r);
        CHECK(e->rewards == io->rewards + r);
        CHECK(e->terminations == io->terminations + r);
        CHECK(e->truncations == io->truncations + r);
        CHECK(e->illegal == io->illegal + r);
    }
    CHECK_EQ_INT(polis_vec_reset(v, 5), POLIS_OK);
    CHECK_EQ_STR(polis_vec_error(v), "");
    /* Every env wrote its own rows: no row of masks is still zero (noop is always legal). */
    for (int32_t a = 0; a < io->n_agents; a++) CHECK_EQ_INT(io->masks[(size_t)a * 5], 1);
    /* Different envs got different seeds, so different worlds. */
    CHECK(memcmp(io->obs, io->obs + 4 * io->obs_size, 4 * io->obs_size) != 0);
    polis_vec_destroy(v);
}

/* ---- equivalence with lone envs and auto-reset semantics ----------------------------------- */

static bool rows_equal(const polis_io *io, int32_t k, const polis_io *e)
{
    size_t r = (size_t)k * (size_t)e->n_agents, n = (size_t)e->n_agents;
    return memcmp(io->obs + r * io->obs_size, e->obs, n * e->obs_size) == 0 &&
           memcmp(io->masks + r * (size_t)io->n_actions, e->masks, n * (size_t)e->n_actions) == 0 &&
           memcmp(io->rewards + r, e->rewards, n * sizeof(float)) == 0 &&
           memcmp(io->terminations + r, e->terminations, n) == 0 &&
           memcmp(io->truncations + r, e->truncations, n) == 0 &&
           memcmp(io->illegal + r, e->illegal, n) == 0;
}

static void test_autoreset(int32_t threads)
{
    enum { M = 3, STEPS = 40 };
    const char *ov = "{\"max_steps\": 7}";
    const uint64_t seed = 42;
    polis_vec *v = make_vec(ov, M, threads, NULL);
    polis_env *lone[M] = {0};
    for (int32_t k = 0; k < M; k++) lone[k] = make_env(ov);
    CHECK(v && lone[0] && lone[1] && lone[2]);
    if (!v || !lone[0] || !lone[1] || !lone[2]) goto out;
    const polis_io *io = polis_vec_io(v);
    const uint8_t *ar = polis_vec_autoreset(v);
    CHECK_EQ_INT(polis_vec_reset(v, seed), POLIS_OK);
    for (int32_t k = 0; k < M; k++) {
        CHECK_EQ_INT(polis_env_reset(lone[k], polis_vec_env_seed(seed, k, 0)), POLIS_OK);
        CHECK(rows_equal(io, k, polis_env_io(lone[k])));
        CHECK_EQ_INT(ar[k], 0);
        CHECK_EQ_INT(polis_vec_episode(v, k), 0);
    }
    polis_rng r;
    polis_rng_seed(&r, 9, 9);
    int64_t episodes[M] = {0};
    int resets_seen = 0;
    for (int t = 0; t < STEPS; t++) {
        random_actions(io, &r);
        bool will_reset[M];
        for (int32_t k = 0; k < M; k++) {
            will_reset[k] = polis_env_done(lone[k]);
            if (will_reset[k]) {
                /* The final step's rows are still there: all truncated at max_steps. */
                for (int32_t a = 0; a < 4; a++) CHECK_EQ_INT(io->truncations[k * 4 + a], 1);
                /* Actions of an env being reset are neither read nor checked. */
                io->actions[k * 4 + 1] = 999;
            }
        }
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        for (int32_t k = 0; k < M; k++) {
            polis_env *e = lone[k];
            if (will_reset[k]) {
                episodes[k]++;
                CHECK_EQ_INT(polis_env_reset(e, polis_vec_env_seed(seed, k, episodes[k])),
                             POLIS_OK);
                CHECK_EQ_INT(ar[k], 1);
                for (int32_t a = 0; a < 4; a++) {
                    CHECK(io->rewards[k * 4 + a] == 0.0f);
                    CHECK_EQ_INT(io->terminations[k * 4 + a], 0);
                    CHECK_EQ_INT(io->truncations[k * 4 + a], 0);
                    CHECK_EQ_INT(io->illegal[k * 4 + a], 0);
                }
                CHECK_EQ_INT(polis_env_tick(polis_vec_env(v, k)), 0);
                resets_seen++;
            } else {
                memcpy(polis_env_io(e)->actions, io->actions + k * 4, 4 * sizeof(int32_t));
                CHECK_EQ_INT(polis_env_step(e), POLIS_OK);
                CHECK_EQ_INT(ar[k], 0);
            }
            CHECK(rows_equal(io, k, polis_env_io(e)));
            CHECK_EQ_INT(polis_vec_episode(v, k), episodes[k]);
            CHECK_EQ_INT(polis_env_state_hash(polis_vec_env(v, k)), polis_env_state_hash(e));
        }
    }
    /* 40 steps of 7-step episodes plus a reset step each: 5 resets per env. */
    CHECK_EQ_INT(resets_seen, 5 * M);
out:
    for (int32_t k = 0; k < M; k++) polis_env_destroy(lone[k]);
    polis_vec_destroy(v);
}

/* ---- determinism across thread counts ------------------------------------------------------- */

/* calls[0], calls[1]: the run's calls on the caller alone and handed off; calls[2],
 * calls[3]: its probes and those that found handing off faster (calls may be NULL) */
/* Resets v with `seed` (again with seed + 1 before step `reseed_at`; -1: never) and steps it
 * with random actions, pausing pause_ns after each call: every step's hash in per_step, and
 * the hash of them all after the reset's. */
static uint64_t step_hashes(polis_vec *v, uint64_t seed, int reseed_at, long pause_ns,
                            uint64_t *per_step, int steps)
{
    const polis_io *io = polis_vec_io(v);
    polis_rng r;
    polis_rng_seed(&r, seed, 3);
    CHECK_EQ_INT(polis_vec_reset(v, seed), POLIS_OK);
    uint64_t h = vec_hash(v);
    for (int t = 0; t < steps; t++) {
        if (t == reseed_at) CHECK_EQ_INT(polis_vec_reset(v, seed + 1), POLIS_OK);
        random_actions(io, &r);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        per_step[t] = vec_hash(v);
        h = fnv(h, &per_step[t], sizeof per_step[t]);
        if (pause_ns > 0) {
            struct timespec pause = {0, pause_ns};
            nanosleep(&pause, NULL);
        }
    }
    return h;
}

static uint64_t run_pool_hashes(int32_t threads, polis__vec_pool pool, uint64_t *per_step,
                                int steps, int64_t *calls)
{
    polis_vec *v = make_vec("{\"max_steps\": 9}", 5, threads, NULL);
    CHECK(v != NULL);
    if (!v) return 0;
    polis__vec_set_pool(v, pool);
    uint64_t h = step_hashes(v, 77, -1, 0, per_step, steps);
    if (calls) {
        polis__vec_pool_calls(v, &calls[0], &calls[1]);
        polis__vec_pool_probes(v, &calls[2], &calls[3]);
    }
    polis_vec_destroy(v);
    return h;
}

static uint64_t run_hashes(int32_t threads, uint64_t *per_step, int steps)
{
    return run_pool_hashes(threads, POLIS__VEC_ADAPT, per_step, steps, NULL);
}

static void test_threads_agree(void)
{
    enum { STEPS = 300 };
    static uint64_t h1[STEPS], h2[STEPS], h4[STEPS];
    uint64_t a = run_hashes(1, h1, STEPS), b = run_hashes(2, h2, STEPS),
             c = run_hashes(4, h4, STEPS);
    CHECK(a != 0);
    CHECK(a == b);
    CHECK(a == c);
    int first_diff = -1;
    for (int t = 0; t < STEPS && first_diff < 0; t++)
        if (h1[t] != h2[t] || h1[t] != h4[t]) first_diff = t;
    CHECK_EQ_INT(first_diff, -1);
    /* A different vec seed is a different run. */
    polis_vec *v = make_vec(NULL, 2, 1, NULL);
    if (v) {
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
        uint64_t x = vec_hash(v);
        CHECK_EQ_INT(polis_vec_reset(v, 2), POLIS_OK);
        CHECK(x != vec_hash(v));
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
        CHECK(x == vec_hash(v));
        polis_vec_destroy(v);
    }
    /* The documented seed formula. */
    CHECK(polis_vec_env_seed(1, 0, 0) != polis_vec_env_seed(1, 1, 0));
    CHECK(polis_vec_env_seed(1, 0, 1) != polis_vec_env_seed(1, 0, 0));
    CHECK(polis_vec_env_seed(1, 1, 0) != polis_vec_env_seed(2, 0, 0));
    CHECK_EQ_INT(polis_vec_env_seed(0, 0, 0), polis_vec_env_seed(0, 0, 0));
}

/* Threads sharing one core (the process pinned to one CPU before the vec starts its
 * workers, which inherit it): every call still finishes, with the same results as one
 * thread, whichever thread claims which envs (a worker that cannot run claims none). */
static void test_threads_one_core(void)
{
#if defined(__linux__)
    cpu_set_t was, one;
    if (sched_getaffinity(0, sizeof was, &was) != 0) return;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &was)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK_EQ_INT(sched_setaffinity(0, sizeof one, &one), 0);
    enum { STEPS = 200 };
    static uint64_t h1[STEPS], h3[STEPS];
    uint64_t a = run_hashes(1, h1, STEPS), b = run_hashes(3, h3, STEPS);
    CHECK(a != 0);
    CHECK(a == b);
    CHECK(memcmp(h1, h3, sizeof h1) == 0);
    /* every call handed off, the workers sharing the caller's core */
    int64_t calls[4];
    b = run_pool_hashes(3, POLIS__VEC_PARALLEL, h3, STEPS, calls);
    CHECK(a == b);
    CHECK(memcmp(h1, h3, sizeof h1) == 0);
    CHECK_EQ_INT(calls[0], 0);
    CHECK_EQ_INT(calls[1], STEPS + 1);
    CHECK_EQ_INT(sched_setaffinity(0, sizeof was, &was), 0);
#endif
}

/* Small calls (five envs of two agents) with T threads: whether the pool hands a call off
 * changes nothing but the time. Every call on the caller alone, every call handed off, and
 * the adaptive choice (whose probes run calls both ways, whatever they measure) give the
 * one-thread run's observations, masks, rewards and flags at every step. */
static void test_pool_choice(void)
{
    enum { STEPS = 400 };
    static uint64_t h1[STEPS], ht[STEPS];
    uint64_t a = run_hashes(1, h1, STEPS);
    CHECK(a != 0);
    const polis__vec_pool pools[] = {POLIS__VEC_SERIAL, POLIS__VEC_PARALLEL, POLIS__VEC_ADAPT};
    for (int32_t threads = 2; threads <= 4; threads += 2) {
        for (int i = 0; i < 3; i++) {
            int64_t calls[4] = {-1, -1, -1, -1};
            uint64_t b = run_pool_hashes(threads, pools[i], ht, STEPS, calls);
            CHECK(a == b);
            CHECK(memcmp(h1, ht, sizeof h1) == 0);
            CHECK_EQ_INT(calls[0] + calls[1], STEPS + 1); /* the reset and the steps */
            if (pools[i] == POLIS__VEC_SERIAL) CHECK_EQ_INT(calls[1], 0);
            if (pools[i] == POLIS__VEC_PARALLEL) CHECK_EQ_INT(calls[0], 0);
            /* a probe: two blocks each way of at least 2 untimed and 4 timed calls; the
             * forced choices run none */
            if (pools[i] == POLIS__VEC_ADAPT) {
                CHECK(calls[0] >= 12);
                CHECK(calls[1] >= 12);
                CHECK(calls[2] >= 1);
                CHECK(calls[3] >= 0 && calls[3] <= calls[2]);
            } else {
                CHECK_EQ_INT(calls[2], 0);
                CHECK_EQ_INT(calls[3], 0);
            }
        }
    }
    /* One thread has nothing to hand off. */
    polis_vec *v = make_vec(NULL, 2, 1, NULL);
    if (v) {
        int64_t calls[2];
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
        for (int t = 0; t < 100; t++) CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        polis__vec_pool_calls(v, &calls[0], &calls[1]);
        CHECK_EQ_INT(calls[0], 101);
        CHECK_EQ_INT(calls[1], 0);
        polis_vec_destroy(v);
    }
}

/* ---- resets made ahead ------------------------------------------------------------------------
 */

#define AHEAD_JSON(mode)                                                                           \
    "{\"agents\": 2, \"max_steps\": 3, \"plugins\": [{\"name\": \"ahead_probe\", "                 \
    "\"params\": {\"mode\": \"" mode "\"}}]}"
#define SURVIVAL POLIS_SOURCE_DIR "/rulesets/survival/survival_classic.json"

static polis_vec *make_ahead(const char *json, const char *path, int32_t m, int32_t t,
                             test_alloc *al, polis_error *err)
{
    polis_options o = test_options(NULL, al);
    polis_vec *v = NULL;
    polis_status st = path ? polis_vec_create_file(path, &o, m, t, &v, err)
                           : polis_vec_create_json(json, strlen(json), &o, m, t, &v, err);
    return st == POLIS_OK ? v : NULL;
}

/* ahead_probe's count of worlds its resets took from prepare while it is loaded; 0 when it
 * is not (a survival vec) */
static long ahead_taken(void)
{
    void *so = dlopen(POLIS_TEST_PLUGIN_DIR "/ahead_probe.so", RTLD_NOW | RTLD_NOLOAD);
    if (!so) return 0;
    long (*fn)(void) = (long (*)(void))dlsym(so, "ahead_probe_taken");
    long n = fn ? fn() : -1;
    dlclose(so);
    return n;
}

/* Steps a vec of M envs with T threads, every call handed off (with threads), the caller
 * pausing 20 us after each so that the worker has time to prepare; halfway through a reset with
 * another seed (the worlds prepared for the old one fit no reset). The hash of every step;
 * the vec's prepared and hit counts in stats[0..1], the worlds ahead_probe took in stats[2]. */
static uint64_t ahead_hashes(const char *json, const char *path, int32_t m, int32_t threads,
                             uint64_t *per_step, int steps, int64_t *stats)
{
    polis_error err;
    polis_vec *v = make_ahead(json, path, m, threads, NULL, &err);
    CHECK(v != NULL);
    if (!v) {
        fprintf(stderr, "vec create failed: %s\n", err.message);
        return 0;
    }
    if (threads > 1) polis__vec_set_pool(v, POLIS__VEC_PARALLEL);
    long taken = ahead_taken();
    uint64_t h = step_hashes(v, 31, steps / 2, 20000, per_step, steps);
    polis__vec_ahead_stats(v, &stats[0], &stats[1]);
    stats[2] = ahead_taken() - taken;
    polis_vec_destroy(v);
    return h;
}

/* One thread never prepares; two prepare the next resets while the caller pauses, and the
 * resets take those worlds, with the same observations at every step as one thread. A
 * world drawn for another generator state (a hook drew first; another vec seed) is not
 * taken: the reset draws its own, the same again. */
static void test_ahead(void)
{
    enum { STEPS = 400 };
    static uint64_t h1[STEPS], h2[STEPS];
    int64_t s1[3], s2[3];
    uint64_t a = ahead_hashes(AHEAD_JSON("ok"), NULL, 4, 1, h1, STEPS, s1);
    CHECK(a != 0);
    CHECK_EQ_INT(s1[0], 0);
    CHECK_EQ_INT(s1[1], 0);
    CHECK_EQ_INT(s1[2], 0);
    uint64_t b = ahead_hashes(AHEAD_JSON("ok"), NULL, 4, 2, h2, STEPS, s2);
    CHECK(a == b);
    CHECK(memcmp(h1, h2, sizeof h1) == 0);
    /* 4 envs reset every 3 steps: ~530 resets; the worker prepares most between calls, and
     * every reset whose seed was prepared takes the world */
    CHECK(s2[0] > 0);
    CHECK(s2[1] > 0 && s2[1] <= s2[0]);
    CHECK_EQ_INT(s2[2], s2[1]);

    /* a RESET hook draws before the world's: nothing prepared fits, the episodes are the same */
    a = ahead_hashes(AHEAD_JSON("draw_first"), NULL, 4, 1, h1, STEPS, s1);
    b = ahead_hashes(AHEAD_JSON("draw_first"), NULL, 4, 2, h2, STEPS, s2);
    CHECK(a != 0);
    CHECK(a == b);
    CHECK(memcmp(h1, h2, sizeof h1) == 0);
    CHECK(s2[0] > 0);
    CHECK_EQ_INT(s2[2], 0);

    /* survival's terrain made ahead: its episodes (about 150 steps under random actions) */
    enum { SV_STEPS = 600 };
    static uint64_t g1[SV_STEPS], g2[SV_STEPS];
    a = ahead_hashes(NULL, SURVIVAL, 4, 1, g1, SV_STEPS, s1);
    b = ahead_hashes(NULL, SURVIVAL, 4, 2, g2, SV_STEPS, s2);
    CHECK(a != 0);
    CHECK(a == b);
    CHECK(memcmp(g1, g2, sizeof g1) == 0);
    CHECK_EQ_INT(s1[0], 0);
    CHECK(s2[0] > 0);
    CHECK(s2[1] > 0);
}

/* The API's errors: a NULL function, a second registration, one after create, a version this
 * engine does not have. A vec of envs without a prepare function keeps none. */
static void test_ahead_errors(void)
{
    polis_error err;
    polis_vec *v = make_ahead(AHEAD_JSON("null"), NULL, 2, 2, NULL, &err);
    CHECK(v == NULL);
    CHECK(strstr(err.message, "reset_ahead.prepare: fn is NULL") != NULL);
    v = make_ahead(AHEAD_JSON("twice"), NULL, 2, 2, NULL, &err);
    CHECK(v == NULL);
    CHECK(strstr(err.message, "reset_ahead.prepare: this plugin registered one already") != NULL);
    v = make_ahead(AHEAD_JSON("future"), NULL, 2, 2, NULL, &err);
    CHECK(v == NULL);
    CHECK(strstr(err.message, "host API \"reset_ahead\" version 2 is newer") != NULL);
    v = make_ahead(AHEAD_JSON("late"), NULL, 2, 2, NULL, &err);
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_ERR_STATE);
        CHECK(strstr(polis_vec_error(v), "registration is closed") != NULL);
        polis_vec_destroy(v);
    }
    v = make_vec(NULL, 2, 2, NULL);
    if (v) {
        int64_t st[2] = {-1, -1};
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        polis__vec_ahead_stats(v, &st[0], &st[1]);
        CHECK_EQ_INT(st[0], 0);
        CHECK_EQ_INT(st[1], 0);
        polis_vec_destroy(v);
    }
}

/* Resets made ahead allocate nothing either: survival, 2 threads, every call handed off. */
static void test_ahead_no_alloc(void)
{
    test_alloc al = {0};
    polis_error err;
    polis_vec *v = make_ahead(NULL, SURVIVAL, 3, 2, &al, &err);
    CHECK(v != NULL);
    if (!v) return;
    polis__vec_set_pool(v, POLIS__VEC_PARALLEL);
    const polis_io *io = polis_vec_io(v);
    polis_rng r;
    polis_rng_seed(&r, 5, 5);
    CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
    long before = al.calls;
    for (int t = 0; t < 2000; t++) {
        random_actions(io, &r);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
    }
    CHECK_EQ_INT(al.calls - before, 0);
    polis_vec_destroy(v);
    CHECK_EQ_INT(al.live, 0);
}

/* The probe's verdict: medians, a clear margin, ties to the caller alone. */
static void test_prefer_parallel(void)
{
    int64_t s[8], p[8];
    for (int i = 0; i < 8; i++) s[i] = 1000, p[i] = 500;
    CHECK(polis__vec_prefer_parallel(s, p, 8));
    for (int i = 0; i < 8; i++) s[i] = 1000, p[i] = 2000;
    CHECK(!polis__vec_prefer_parallel(s, p, 8));
    /* within 5%: not worth the other core */
    for (int i = 0; i < 8; i++) s[i] = 1000, p[i] = 960;
    CHECK(!polis__vec_prefer_parallel(s, p, 8));
    for (int i = 0; i < 8; i++) s[i] = 1000, p[i] = 940;
    CHECK(polis__vec_prefer_parallel(s, p, 8));
    /* three calls of each kind interrupted (any order) do not decide */
    for (int i = 0; i < 8; i++) s[i] = 1000 + i, p[i] = 600 - i;
    p[1] = p[4] = p[6] = 50000000;
    CHECK(polis__vec_prefer_parallel(s, p, 8));
    for (int i = 0; i < 8; i++) s[i] = 1000 + i, p[i] = 600 - i;
    s[0] = s[3] = s[7] = 50000000;
    CHECK(polis__vec_prefer_parallel(s, p, 8));
    for (int i = 0; i < 8; i++) s[i] = 1000 + i, p[i] = 1500;
    s[2] = s[5] = s[7] = 50000000;
    CHECK(!polis__vec_prefer_parallel(s, p, 8));
    /* the median of an even count is the middle pair's */
    int64_t s2[2] = {100, 300}, p2[2] = {10, 360};
    CHECK(polis__vec_prefer_parallel(s2, p2, 2)); /* 370 < 400 * 0.95 */
    p2[0] = 30, p2[1] = 360;
    CHECK(!polis__vec_prefer_parallel(s2, p2, 2)); /* 390 */
    CHECK(!polis__vec_prefer_parallel(s2, p2, 0));
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void test_bad_action(void)
{
    polis_vec *v = make_vec(NULL, 3, 2, NULL);
    CHECK(v != NULL);
    if (!v) return;
    const polis_io *io = polis_vec_io(v);
    CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
    uint64_t before = vec_hash(v);
    io->actions[5] = 99;
    CHECK_EQ_INT(polis_vec_step(v), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_vec_error(v),
                 "env 1: step: agent 1 (agent_1): action 99 is outside [0, 5) at tick 0 (row 5)");
    io->actions[5] = 0;
    io->actions[11] = -1;
    CHECK_EQ_INT(polis_vec_step(v), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_vec_error(v),
                 "env 2: step: agent 3 (agent_3): action -1 is outside [0, 5) at tick 0 (row 11)");
    /* Nothing ran: same buffers, no tick advanced; fixed actions step normally. */
    CHECK(before == vec_hash(v));
    for (int32_t k = 0; k < 3; k++) CHECK_EQ_INT(polis_env_tick(polis_vec_env(v, k)), 0);
    io->actions[11] = 0;
    CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
    CHECK_EQ_STR(polis_vec_error(v), "");
    for (int32_t k = 0; k < 3; k++) CHECK_EQ_INT(polis_env_tick(polis_vec_env(v, k)), 1);
    polis_vec_destroy(v);
}

static polis_vec *make_fail_vec(const char *mode, int32_t m, int32_t t)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 4, \"grid\": {\"width\": 6, \"height\": 6},"
             " \"plugins\": [{\"name\": \"walker\", \"params\": {\"items\": 3}}],"
             " \"scripts\": [{\"path\": \"vec_fail.lua\", \"params\": {\"mode\": \"%s\"}}]}",
             mode);
    polis_options o = test_options(NULL, NULL);
    o.base_dir = VEC_DIR;
    polis_vec *v = NULL;
    polis_error err;
    if (polis_vec_create_json(json, strlen(json), &o, m, t, &v, &err) != POLIS_OK) {
        fprintf(stderr, "vec create failed: %s\n", err.message);
        return NULL;
    }
    return v;
}

static polis_env *make_fail_env(const char *mode)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 4, \"grid\": {\"width\": 6, \"height\": 6},"
             " \"plugins\": [{\"name\": \"walker\", \"params\": {\"items\": 3}}],"
             " \"scripts\": [{\"path\": \"vec_fail.lua\", \"params\": {\"mode\": \"%s\"}}]}",
             mode);
    polis_options o = test_options(NULL, NULL);
    o.base_dir = VEC_DIR;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "env create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

static void test_step_failure(void)
{
    enum { M = 6 };
    /* Find, with lone envs, a vec seed whose lowest failing env is not env 0, and that env's
     * own message: the vec must report exactly that, whatever the thread count. */
    polis_env *lone = make_fail_env("step");
    CHECK(lone != NULL);
    if (!lone) return;
    uint64_t seed = 0;
    int32_t expect_k = -1;
    char expect_msg[1200] = "";
    for (uint64_t s = 1; s < 200 && expect_k < 1; s++) {
        expect_k = -1;
        for (int32_t k = 0; k < M && expect_k < 0; k++) {
            CHECK_EQ_INT(polis_env_reset(lone, polis_vec_env_seed(s, k, 0)), POLIS_OK);
            for (int t = 0; t < 3; t++) {
                if (polis_env_step(lone) != POLIS_OK) {
                    expect_k = k;
                    snprintf(expect_msg, sizeof expect_msg, "env %d: %s", k, polis_env_error(lone));
                    break;
                }
            }
        }
        seed = s;
    }
    polis_env_destroy(lone);
    CHECK(expect_k >= 1);
    CHECK_CONTAINS(expect_msg, "unlucky env [hook post, tick 2]");
    /* threads claim envs as they come, so which thread meets which failure varies: repeat,
     * with calls handed off or not as the pool decides, always, and never */
    for (int32_t run = 0; run < 12; run++) {
        const int32_t threads = 1 + run % 3;
        const polis__vec_pool pool = (polis__vec_pool)(run / 3 % 3);
        polis_vec *v = make_fail_vec("step", M, threads);
        CHECK(v != NULL);
        if (!v) continue;
        polis__vec_set_pool(v, pool);
        CHECK_EQ_INT(polis_vec_reset(v, seed), POLIS_OK);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_ERR_SCRIPT);
        CHECK_EQ_STR(polis_vec_error(v), expect_msg);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_ERR_STATE);
        CHECK_EQ_STR(polis_vec_error(v),
                     "polis_vec_step: the previous step or reset failed; call polis_vec_reset");
        /* A reset makes it usable again. */
        CHECK_EQ_INT(polis_vec_reset(v, seed + 1000), POLIS_OK);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        polis_vec_destroy(v);
    }

    /* A failing auto-reset says so. Each env's third reset fails: the second auto-reset. */
    polis_vec *v = make_fail_vec("reset", 3, 2);
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
        polis_status st = POLIS_OK;
        int steps = 0;
        while (st == POLIS_OK && steps < 20) {
            st = polis_vec_step(v);
            steps++;
        }
        /* 4 steps, the first auto-reset, 4 steps, then the failing one. */
        CHECK_EQ_INT(steps, 10);
        CHECK_EQ_INT(st, POLIS_ERR_SCRIPT);
        CHECK_CONTAINS(polis_vec_error(v), "env 0: vec_fail: ");
        CHECK_CONTAINS(polis_vec_error(v),
                       "no third episode [hook reset, tick 0] (auto-reset to episode 2)");
        polis_vec_destroy(v);
    }
}

/* ---- episode statistics -------------------------------------------------------------------- */

/* polis_vec_episode_stats against sums kept here from the rows themselves: rows that end at
 * different steps (agent 0 is terminated early, the others truncated at max_steps), rewards
 * every step, auto-resets; the same figures at every thread count, with every call on the
 * caller alone, every call handed off (each thread counts its envs' ends in its own result,
 * which it clears when it claims its first env of a call) and the adaptive choice, and zeros
 * after a reset. */
static void test_episode_stats(void)
{
    enum { M = 5, A = 2, ROWS = M * A, STEPS = 60 };
    const char *json = "{\"agents\": 2, \"max_steps\": 6, \"grid\": {\"width\": 6, \"height\": 6},"
                       " \"plugins\": [{\"name\": \"walker\", \"params\": {\"items\": 3}}],"
                       " \"scripts\": [{\"path\": \"vec_episodes.lua\"}]}";
    const struct {
        int32_t threads;
        polis__vec_pool pool;
    } runs[] = {{1, POLIS__VEC_ADAPT}, {2, POLIS__VEC_SERIAL},   {2, POLIS__VEC_PARALLEL},
                {2, POLIS__VEC_ADAPT}, {3, POLIS__VEC_PARALLEL}, {3, POLIS__VEC_ADAPT}};
    double first_sum = 0;
    for (size_t run = 0; run < sizeof runs / sizeof runs[0]; run++) {
        const int32_t threads = runs[run].threads;
        polis_options o = test_options(NULL, NULL);
        o.base_dir = VEC_DIR;
        polis_vec *v = NULL;
        polis_error err;
        CHECK_EQ_INT(polis_vec_create_json(json, strlen(json), &o, M, threads, &v, &err), POLIS_OK);
        if (!v) continue;
        polis__vec_set_pool(v, runs[run].pool);
        const polis_io *io = polis_vec_io(v);
        const uint8_t *ar = polis_vec_autoreset(v);
        const polis_vec_episodes *st = polis_vec_episode_stats(v);
        CHECK_EQ_INT(st->n_rows, ROWS);
        CHECK_EQ_INT(st->n_envs, M);
        CHECK_EQ_INT(polis_vec_reset(v, 3), POLIS_OK);
        CHECK_EQ_INT(st->rows_ended, 0);
        CHECK_EQ_INT(st->envs_ended, 0);
        float ret[ROWS] = {0}, last_ret[ROWS] = {0};
        int64_t len[ROWS] = {0}, last_len[ROWS] = {0};
        bool done[ROWS] = {0};
        int ended_total = 0, early = 0, envs_total = 0;
        uint8_t env_was_ended[M] = {0};
        double sum = 0;
        polis_rng r;
        polis_rng_seed(&r, 5, 5);
        for (int t = 0; t < STEPS; t++) {
            random_actions(io, &r);
            CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
            int32_t n_ended = 0, n_envs_ended = 0;
            for (int32_t k = 0; k < M; k++) {
                /* An env that ended is reset by the next call; one that is done ended. */
                CHECK_EQ_INT(ar[k], env_was_ended[k]);
                CHECK_EQ_INT(st->env_ended[k], polis_env_done(polis_vec_env(v, k)));
                env_was_ended[k] = st->env_ended[k];
                n_envs_ended += st->env_ended[k];
            }
            for (int32_t row = 0; row < ROWS; row++) {
                if (ar[row / A]) {
                    ret[row] = 0;
                    len[row] = 0;
                    done[row] = false;
                } else {
                    ret[row] += io->rewards[row];
                    len[row]++;
                }
                bool now = io->terminations[row] || io->truncations[row];
                bool end = now && !done[row];
                done[row] = now;
                CHECK_EQ_INT(st->ended[row], end);
                if (end) {
                    last_ret[row] = ret[row];
                    last_len[row] = len[row];
                    n_ended++;
                    early += len[row] < 6;
                }
                CHECK(st->returns[row] == last_ret[row]);
                CHECK_EQ_INT(st->lengths[row], last_len[row]);
                sum += st->returns[row] + (double)st->lengths[row];
            }
            CHECK_EQ_INT(st->rows_ended, n_ended);
            CHECK_EQ_INT(st->envs_ended, n_envs_ended);
            ended_total += n_ended;
            envs_total += n_envs_ended;
        }
        /* Every row ended several episodes, agent 0's often before max_steps. */
        CHECK(ended_total >= 8 * ROWS);
        CHECK(envs_total >= 8 * M);
        CHECK(early > 0);
        if (threads == 1)
            first_sum = sum;
        else
            CHECK(sum == first_sum);
        CHECK_EQ_INT(polis_vec_reset(v, 4), POLIS_OK);
        CHECK_EQ_INT(st->rows_ended, 0);
        CHECK_EQ_INT(st->envs_ended, 0);
        for (int32_t k = 0; k < M; k++) CHECK_EQ_INT(st->env_ended[k], 0);
        for (int32_t row = 0; row < ROWS; row++) {
            CHECK_EQ_INT(st->ended[row], 0);
            CHECK(st->returns[row] == 0.0f);
            CHECK_EQ_INT(st->lengths[row], 0);
        }
        polis_vec_destroy(v);
    }
}

/* ---- allocation ------------------------------------------------------------------------------ */

static void test_no_alloc(int32_t threads)
{
    test_alloc al = {0};
    polis_vec *v = make_vec(NULL, 3, threads, &al);
    CHECK(v != NULL);
    if (!v) return;
    const polis_io *io = polis_vec_io(v);
    polis_rng r;
    polis_rng_seed(&r, 5, 5);
    CHECK_EQ_INT(polis_vec_reset(v, 1), POLIS_OK);
    long before = al.calls;
    int64_t resets = 0;
    for (int t = 0; t < 10000; t++) {
        random_actions(io, &r);
        CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        for (int32_t k = 0; k < 3; k++) resets += polis_vec_autoreset(v)[k];
    }
    CHECK_EQ_INT(al.calls - before, 0);
    /* walker truncates at 200 steps: 10,000 steps are 49 auto-resets per env. */
    CHECK_EQ_INT(resets, 3 * 49);
    polis_vec_destroy(v);
    CHECK_EQ_INT(al.live, 0);
}

/* The vec's buffers start on cache lines, and with threads so do its envs' blocks (two
 * threads never share a line through the allocator's packing); every block, also those a
 * Lua script grows and frees, goes back to the caller's allocator at destroy. */
static void test_lines(void)
{
    const char *json = "{\"agents\": 2, \"max_steps\": 6, \"grid\": {\"width\": 6, \"height\": 6},"
                       " \"plugins\": [{\"name\": \"walker\", \"params\": {\"items\": 3}}],"
                       " \"scripts\": [{\"path\": \"vec_episodes.lua\"}]}";
    for (int32_t threads = 1; threads <= 2; threads++) {
        test_alloc al = {0};
        polis_options o = test_options(NULL, &al);
        o.base_dir = VEC_DIR;
        polis_vec *v = NULL;
        polis_error err;
        CHECK_EQ_INT(polis_vec_create_json(json, strlen(json), &o, 5, threads, &v, &err), POLIS_OK);
        if (!v) continue;
        const polis_io *io = polis_vec_io(v);
        const polis_vec_episodes *st = polis_vec_episode_stats(v);
        const void *bufs[] = {io->obs,          io->masks,       io->actions, io->rewards,
                              io->terminations, io->truncations, io->illegal, st->ended,
                              st->env_ended,    st->returns,     st->lengths};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            CHECK_EQ_INT((uintptr_t)bufs[i] % 64, 0);
        if (threads > 1)
            for (int32_t k = 0; k < 5; k++) CHECK_EQ_INT((uintptr_t)polis_vec_env(v, k) % 64, 0);
        polis_rng r;
        polis_rng_seed(&r, 5, 5);
        CHECK_EQ_INT(polis_vec_reset(v, 3), POLIS_OK);
        for (int t = 0; t < 60; t++) {
            random_actions(io, &r);
            CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
        }
        CHECK(al.calls > 0);
        polis_vec_destroy(v);
        CHECK_EQ_INT(al.live, 0);
    }
}

/* Every allocation of create, reset and step may fail: a clean error, nothing leaked. */
static void test_failing_alloc(void)
{
    int bad = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        test_alloc al = {0};
        al.fail_at = n;
        polis_options o = test_options(NULL, &al);
        polis_vec *v = NULL;
        polis_error err;
        polis_status st = polis_vec_create_file(WALKER, &o, 2, 2, &v, &err);
        if (st == POLIS_OK) {
            st = polis_vec_reset(v, 1);
            for (int t = 0; st == POLIS_OK && t < 20; t++) st = polis_vec_step(v);
            if (st != POLIS_OK && polis_vec_error(v)[0] == '\0') bad++;
            polis_vec_destroy(v);
        } else if (err.message[0] == '\0' || v != NULL) {
            bad++;
        }
        if (al.live != 0) {
            fprintf(stderr, "n=%ld: %lld bytes leaked\n", n, al.live);
            bad++;
        }
        if (!al.failed) {
            if (st != POLIS_OK) bad++;
            break;
        }
        if (st == POLIS_OK) bad++; /* a refused allocation must surface */
    }
    fprintf(stderr, "vec: %ld allocations swept, %d bad\n", n - 1, bad);
    CHECK(n > 20);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_bad_input();
    test_layout();
    test_autoreset(1);
    test_autoreset(2);
    test_threads_agree();
    test_threads_one_core();
    test_pool_choice();
    test_ahead();
    test_ahead_errors();
    test_ahead_no_alloc();
    test_prefer_parallel();
    test_bad_action();
    test_step_failure();
    test_episode_stats();
    test_no_alloc(1);
    test_no_alloc(2);
    test_lines();
    test_failing_alloc();
    CHECK_DONE();
}
