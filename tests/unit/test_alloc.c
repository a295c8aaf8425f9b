/* The injected allocator: every allocation of create/reset/step can fail and the result is
 * a clean error with nothing leaked; the step loop of a C game allocates nothing. */
#include "check.h"
#include "testutil.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"
#define WALKER_LUA POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker_lua.json"

/* One run with the Nth allocation failing. Returns 1 when nothing failed (N is past the last
 * allocation), 0 when the failure was handled cleanly, -1 on a wrong outcome. */
static int run_failing(const char *path, long n)
{
    test_alloc al = {0};
    al.fail_at = n;
    polis_options o = test_options(NULL, &al);
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_file(path, &o, &env, &err);
    if (st == POLIS_OK) {
        st = polis_env_reset(env, 1);
        for (int t = 0; st == POLIS_OK && t < 20; t++) st = polis_env_step(env);
        if (st != POLIS_OK && polis_env_error(env)[0] == '\0') {
            fprintf(stderr, "n=%ld: status %d without a message\n", n, st);
            polis_env_destroy(env);
            return -1;
        }
        polis_env_destroy(env);
    } else if (err.message[0] == '\0') {
        fprintf(stderr, "n=%ld: create failed (%d) without a message\n", n, st);
        return -1;
    }
    if (al.live != 0) {
        fprintf(stderr, "n=%ld: %lld bytes leaked (status %d: %s)\n", n, al.live, st,
                st == POLIS_OK ? "" : err.message);
        return -1;
    }
    if (!al.failed) return st == POLIS_OK ? 1 : -1;
    /* A failed allocation must surface as an error, unless the failure was in Lua code that
     * handled it (Lua retries after a collection). */
    return 0;
}

static void sweep(const char *path)
{
    int bad = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        int r = run_failing(path, n);
        if (r < 0) bad++;
        if (r == 1) break;
    }
    fprintf(stderr, "%s: %ld allocations swept, %d bad\n", path, n - 1, bad);
    CHECK(n > 10);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    sweep(WALKER);
    sweep(WALKER_LUA);

    /* No allocation in the C step loop: the count stays put over 10,000 steps, including
     * episode ends and resets. */
    test_alloc al = {0};
    polis_options o = test_options(NULL, &al);
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(WALKER, &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        long before = al.calls;
        const polis_io *io = polis_env_io(env);
        polis_rng r;
        polis_rng_seed(&r, 1, 1);
        for (int t = 0; t < 10000; t++) {
            if (polis_env_done(env)) CHECK_EQ_INT(polis_env_reset(env, (uint64_t)t), POLIS_OK);
            for (int32_t a = 0; a < io->n_agents; a++) {
                int32_t k = (int32_t)polis_rng_below(&r, (uint32_t)io->n_actions);
                io->actions[a] = k;
            }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        CHECK_EQ_INT(al.calls - before, 0);
        polis_env_destroy(env);
        CHECK_EQ_INT(al.live, 0);
    }
    CHECK_DONE();
}
