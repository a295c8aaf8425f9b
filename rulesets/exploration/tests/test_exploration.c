/* The Exploration mini-game: the paper's setting (seeds/000 C.2 and Table 7) as shipped in
 * exploration.json and exploration_physical.json — layout, world, the episode length, masks
 * exact under a random policy, shared vision through the real social plugin, and golden
 * trajectory hashes (any change of behaviour shows here). */
#include "check.h"
#include "testutil.h"

#define DIR POLIS_SOURCE_DIR "/rulesets/exploration/"

static polis_env *open_file(const char *path) { return test_env_file(path, NULL); }

static int field(polis_env *env, const char *name, polis_obs_field *out)
{
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++) {
        polis_env_obs_field(env, i, out);
        if (strcmp(out->name, name) == 0) return 1;
    }
    return 0;
}

/* Episodes of a random policy over the legal actions (a PCG32 stream of its own), folding
 * each step's state hash; counts illegal flags and the steps per episode. */
static uint64_t run(polis_env *env, uint64_t seed, int episodes, long *illegal, int *steps)
{
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, seed, 0x6578706cULL);
    uint64_t h = 0;
    for (int e = 0; e < episodes; e++) {
        polis_env_reset(env, seed + (uint64_t)e);
        *steps = 0;
        while (!polis_env_done(env)) {
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
                int32_t legal[256], n = 0;
                for (int32_t k = 0; k < io->n_actions && n < 256; k++)
                    if (m[k]) legal[n++] = k;
                io->actions[a] = legal[polis_rng_below(&r, (uint32_t)n)];
            }
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "step: %s\n", polis_env_error(env));
                return 0;
            }
            for (int32_t a = 0; a < io->n_agents; a++) *illegal += io->illegal[a];
            h = h * 1099511628211ULL ^ polis_env_state_hash(env);
            (*steps)++;
        }
    }
    return h;
}

static void test_layout(void)
{
    polis_env *env = open_file(DIR "exploration.json");
    CHECK(env != NULL);
    if (!env) return;
    /* AdaSociety's n = 6 + 2R + 2P + G = 6 + 30 + 16 + 8 (noop, 4 moves, produce, 15 picks,
     * 15 dumps; 8 communicate, 8 share_map, 8 switch_group) */
    CHECK_EQ_INT(polis_env_n_actions(env), 60);
    CHECK_EQ_INT(polis_env_n_agents(env), 8);
    CHECK_EQ_STR(polis_env_agent_name(env, 7), "explorer_7");
    polis_obs_field f;
    CHECK(field(env, "grid", &f));
    CHECK_EQ_INT(f.shape[0], 32);
    CHECK_EQ_INT(f.shape[1], 20);
    CHECK_EQ_INT(f.shape[2], 20);
    CHECK(field(env, "inventory", &f));
    CHECK_EQ_INT(f.shape[0], 15);
    CHECK(field(env, "social_state", &f));
    CHECK_EQ_INT(f.shape[0], 16);
    CHECK(field(env, "communication", &f));
    CHECK_EQ_INT(f.shape[0], 8);
    CHECK_EQ_INT(f.shape[1], 3);
    CHECK_EQ_INT(polis_env_max_steps(env), 500);
    polis_env_destroy(env);
}

static void test_episodes(const char *file, uint64_t golden1, uint64_t golden2)
{
    polis_env *env = open_file(file);
    CHECK(env != NULL);
    if (!env) return;
    long illegal = 0;
    int steps = 0;
    uint64_t h1 = run(env, 1, 1, &illegal, &steps);
    CHECK_EQ_INT(steps, 500);
    CHECK_EQ_INT(illegal, 0);
    uint64_t h2 = run(env, 2, 2, &illegal, &steps);
    CHECK_EQ_INT(illegal, 0);
    if (h1 != golden1 || h2 != golden2)
        fprintf(stderr, "%s: hashes 0x%016llx 0x%016llx\n", file, (unsigned long long)h1,
                (unsigned long long)h2);
    CHECK(h1 == golden1);
    CHECK(h2 == golden2);
    /* the same seed replays the same episode */
    CHECK(run(env, 1, 1, &illegal, &steps) == h1);
    polis_env_destroy(env);
}

int main(void)
{
    test_layout();
    /* society alone, then society + social: a change in either shows here */
    test_episodes(DIR "exploration_physical.json", 0x3f5b7413870d5357ULL, 0x14b79073eaa4a4f1ULL);
    test_episodes(DIR "exploration.json", 0xbfcf30517727f07cULL, 0xe0ba8fd51d257808ULL);
    CHECK_DONE();
}
