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

/* Who sees whom (docs/visibility.md): explorer_0 hidden from everyone from tick 40. Both envs
 * get the same actions: the world is the same (explorer_0 walks, blocks and picks up as
 * before), its own observation is the same, and every other explorer's grid is the plain one
 * without explorer_0 in the agents channel — also where a shared map would have shown it —
 * from tick 40 on, and exactly the plain one before. */
static polis_env *open_with(const char *path, const char *overrides)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

static void test_visibility(void)
{
    polis_env *plain = open_file(DIR "exploration.json");
    polis_env *hid =
        open_with(DIR "exploration.json", "{\"visibility\": [{\"observers\": \"all\", \"hidden\": "
                                          "[\"explorer_0\"], \"from\": 40}]}");
    CHECK(plain && hid);
    if (!plain || !hid) return;
    polis_obs_field g, pos;
    CHECK(field(plain, "grid", &g) && field(plain, "position", &pos));
    const polis_io *pi = polis_env_io(plain), *hi = polis_env_io(hid);
    const size_t plane = (size_t)g.shape[1] * (size_t)g.shape[2];
    polis_rng r;
    polis_rng_seed(&r, 4, 7);
    CHECK(polis_env_reset(plain, 3) == POLIS_OK && polis_env_reset(hid, 3) == POLIS_OK);
    int seen_before = 0, would_see = 0, moved = 0, bad = 0, shared_sight = 0;
    int32_t x0 = -1, y0 = -1;
    for (int t = 0; t <= 300 && !bad; t++) {
        CHECK(memcmp(pi->masks, hi->masks, (size_t)pi->n_agents * (size_t)pi->n_actions) == 0);
        for (int32_t a = 0; a < pi->n_agents; a++) {
            const uint8_t *po = pi->obs + (size_t)a * pi->obs_size;
            const uint8_t *ho = hi->obs + (size_t)a * hi->obs_size;
            const int16_t *pg = (const int16_t *)(const void *)(po + g.offset);
            const int16_t *hg = (const int16_t *)(const void *)(ho + g.offset);
            /* everything but the grid's agents channel is the same, for everyone */
            bad += memcmp(po, ho, g.offset) != 0;
            bad += memcmp(po + g.offset + plane * 2, ho + g.offset + plane * 2,
                          pi->obs_size - g.offset - plane * 2) != 0;
            for (size_t i = 0; i < plane; i++) {
                int16_t want = pg[i];
                if (a != 0 && want == 1) {
                    if (t >= 40)
                        want = 0, would_see++;
                    else
                        seen_before++;
                }
                bad += hg[i] != want;
            }
            if (a == 0) {
                const int32_t *xy = (const int32_t *)(const void *)(po + pos.offset);
                moved += t > 0 && (xy[0] != x0 || xy[1] != y0);
                x0 = xy[0];
                y0 = xy[1];
            }
        }
        if (t == 300) break;
        for (int32_t a = 0; a < pi->n_agents; a++) {
            const uint8_t *m = pi->masks + (size_t)a * (size_t)pi->n_actions;
            int32_t legal[256], n = 0;
            for (int32_t k = 0; k < pi->n_actions && n < 256; k++)
                if (m[k]) legal[n++] = k;
            pi->actions[a] = hi->actions[a] = legal[polis_rng_below(&r, (uint32_t)n)];
        }
        CHECK(polis_env_step(plain) == POLIS_OK && polis_env_step(hid) == POLIS_OK);
        CHECK(memcmp(pi->rewards, hi->rewards, sizeof(float) * (size_t)pi->n_agents) == 0);
        if (t ==
            150) { /* the JSON views: explorer_0 is nobody's player, in plain sight or shared */
            for (int32_t a = 1; a < pi->n_agents; a++) {
                const char *js = test_render(hid, a, "json");
                bad += strstr(js, "{\"id\": 0,") != NULL;
                js = test_render(plain, a, "json");
                shared_sight += strstr(js, "{\"id\": 0,") != NULL;
                const char *tx = test_render(hid, a, "text");
                bad += strstr(tx, "explorer_0 at") != NULL && strstr(tx, "views of") == NULL &&
                       strstr(tx, "view of") == NULL;
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(seen_before > 0 && would_see > 0 && moved > 0 && shared_sight > 0);
    if (!(seen_before > 0 && would_see > 0 && shared_sight > 0))
        fprintf(stderr, "seen before %d, would see %d, moved %d, in JSON %d\n", seen_before,
                would_see, moved, shared_sight);
    /* bad input names its JSON path */
    polis_error err;
    polis_env *no = NULL;
    polis_options o = test_options(NULL, NULL);
    o.overrides = "{\"visibility\": [{\"observers\": [\"explorer_9\"], \"hidden\": [0]}]}";
    CHECK(polis_env_create_file(DIR "exploration.json", &o, &no, &err) == POLIS_ERR_CONFIG);
    CHECK_CONTAINS(err.message, "exploration.json: visibility[0].observers[0]: no agent named "
                                "\"explorer_9\" (agents are explorer_0 .. explorer_7)");
    polis_env_destroy(plain);
    polis_env_destroy(hid);
}

int main(void)
{
    test_layout();
    test_visibility();
    /* society alone, then society + social: a change in either shows here */
    test_episodes(DIR "exploration_physical.json", 0x3f5b7413870d5357ULL, 0x14b79073eaa4a4f1ULL);
    test_episodes(DIR "exploration.json", 0xbfcf30517727f07cULL, 0xe0ba8fd51d257808ULL);
    CHECK_DONE();
}
