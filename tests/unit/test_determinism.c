/* Determinism of the kernel, on its own test game (tests/plugins/walker.c): a golden seeded
 * trajectory hash of walker (C) and of walker + a Lua rule; two envs interleaved in one
 * process equal each stepped alone; envs stepped on two threads at once equal the same envs
 * stepped sequentially. Games keep their own golden hashes in their tests
 * (rulesets/gather/tests/test_golden.c, ...). */
#include <pthread.h>

#include "check.h"
#include "testutil.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"
#define WALKER_LUA POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker_lua.json"

typedef struct job {
    const char *path;
    uint64_t seed;
    uint64_t hash;
} job;

static void *thread_main(void *p)
{
    job *j = p;
    j->hash = test_trajectory(j->path, j->seed, 300, NULL);
    return NULL;
}

int main(void)
{
    float ret = 0;
    uint64_t g1 = test_trajectory(WALKER, 1, 500, &ret);
    uint64_t g1b = test_trajectory(WALKER, 1, 500, NULL);
    uint64_t g2 = test_trajectory(WALKER, 2, 500, NULL);
    CHECK(g1 != 0);
    CHECK_EQ_INT(g1, g1b);
    CHECK(g1 != g2);
    /* Items are picked up: the random policy earns something. */
    CHECK(ret > 0);
    /* The golden value: any change to the kernel's order of operations, the RNG or walker
     * changes it. Update it only for an intended behaviour change, and say so. */
    fprintf(stderr, "walker golden: 0x%016llx (return %.1f)\n", (unsigned long long)g1, ret);
    CHECK_EQ_INT(g1, (long long)0xa5c68f197e1cfee4ULL);

    uint64_t l1 = test_trajectory(WALKER_LUA, 1, 300, &ret);
    CHECK(l1 != 0);
    CHECK_EQ_INT(l1, test_trajectory(WALKER_LUA, 1, 300, NULL));
    fprintf(stderr, "walker_lua golden: 0x%016llx (return %.1f)\n", (unsigned long long)l1, ret);
    CHECK_EQ_INT(l1, (long long)0x7a7b6164368e4b40ULL);

    /* Interleaved: A and B stepped alternately equal A alone and B alone. */
    polis_env *a = test_env_file(WALKER, NULL), *b = test_env_file(WALKER_LUA, NULL);
    CHECK(a && b);
    if (a && b) {
        polis_rng ra, rb;
        polis_rng_seed(&ra, 1, 99);
        polis_rng_seed(&rb, 1, 99);
        uint64_t ha = 0, hb = 0;
        polis_env_reset(a, 1);
        polis_env_reset(b, 1);
        for (int t = 0; t < 300; t++) {
            if (polis_env_done(a)) polis_env_reset(a, 1 + (uint64_t)t);
            if (polis_env_done(b)) polis_env_reset(b, 1 + (uint64_t)t);
            test_uniform_policy(a, &ra);
            test_uniform_policy(b, &rb);
            CHECK_EQ_INT(polis_env_step(a), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(b), POLIS_OK);
            ha = ha * 31 + polis_env_state_hash(a);
            hb = hb * 31 + polis_env_state_hash(b);
        }
        CHECK_EQ_INT(ha, test_trajectory(WALKER, 1, 300, NULL));
        CHECK_EQ_INT(hb, l1);
    }
    polis_env_destroy(a);
    polis_env_destroy(b);

    /* Threads: four envs on two threads at a time equal the sequential runs. */
    job jobs[4] = {{WALKER, 3, 0}, {WALKER_LUA, 4, 0}, {WALKER, 5, 0}, {WALKER_LUA, 6, 0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_main, &jobs[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        CHECK(jobs[i].hash != 0);
        CHECK_EQ_INT(jobs[i].hash, test_trajectory(jobs[i].path, jobs[i].seed, 300, NULL));
    }
    CHECK_DONE();
}
