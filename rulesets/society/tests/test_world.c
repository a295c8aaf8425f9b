/* World generation (spec §4): the configured counts at every reset, every draw from the env
 * RNG (same seed, same world — in one env or two; different seeds, different worlds), random
 * content never on blocks, random piles and stations on distinct cells, agents on distinct
 * cells; and no allocation in the step loop, and a clean error with nothing leaked whichever
 * allocation fails during create, reset or step. */
#include "fixture.h"

#define EXPLORATION POLIS_SOURCE_DIR "/rulesets/exploration/exploration_physical.json"

static polis_env *open_file(const char *path, test_alloc *al)
{
    polis_options o = test_options(NULL, al);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s\n", err.message);
        return NULL;
    }
    return env;
}

static uint64_t hash_after_reset(polis_env *env, uint64_t seed)
{
    polis_env_reset(env, seed);
    return polis_env_state_hash(env);
}

static void test_counts_and_determinism(void)
{
    polis_env *env = open_file(EXPLORATION, NULL), *other = open_file(EXPLORATION, NULL);
    CHECK(env && other);
    if (!env || !other) return;
    soc_events ev;
    soc_events_attach(&ev, env);
    for (uint64_t seed = 0; seed < 20; seed++) {
        soc_events_clear(&ev);
        uint64_t h = hash_after_reset(env, seed);
        /* 25 random blocks on a blank map; 55 piles of 680 units; 220 stations */
        CHECK_EQ_STR(ev.text, "world.generated blocks=25 piles=55 units=680 stations=220 "
                              "agents=8\n");
        CHECK(h == hash_after_reset(other, seed));
        CHECK(h == hash_after_reset(env, seed)); /* a second reset leaves nothing behind */
        CHECK(h != hash_after_reset(other, seed + 1000));
    }
    polis_env_destroy(env);
    polis_env_destroy(other);
}

/* Through the map-sized views of agents that see the whole map: nothing random lands on a
 * block, piles do not share cells (10 random piles of one resource = 10 cells), agents sit on
 * distinct cells. */
static void test_placement(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"box\", \"size\": {\"x\": 9, \"y\": 9}}, \"view\": \"map\","
        " \"jobs\": {\"seer\": {\"fov\": 4}},"
        " \"static\": {\"resources\": [{\"name\": \"stone\", \"positions\": [4, 4], \"num\": 7}],"
        "             \"players\": [{\"job\": \"seer\", \"positions\": [4, 4]}]},"
        " \"random\": {\"blocks\": 10,"
        "   \"resources\": [{\"name\": \"wood\", \"num\": {\"rule\": \"random\", \"min\": 1, "
        "\"max\": 3},"
        "                  \"repeat\": 12}],"
        "   \"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 20}],"
        "   \"players\": [{\"job\": \"seer\", \"repeat\": 6}]}}";
    char *json = soc_scenario(7, 10, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    /* a static player on (4, 4) and 6 random ones: never two on a cell */
    /* in play: wood, stone, hammer; channels 0 agents, 1 blocks, 2..4 stations, 5..7 piles */
    int lo_seen = 3, hi_seen = 1;
    for (uint64_t seed = 0; seed < 30; seed++) {
        polis_env_reset(env, seed);
        int blocks = 0, wood_cells = 0, stations = 0, agents = 0, bad = 0, stone = 0;
        for (int x = 0; x < 9; x++)
            for (int y = 0; y < 9; y++) {
                int b = soc_grid(env, 0, 1, x, y), w = soc_grid(env, 0, 5, x, y);
                int st = soc_grid(env, 0, 4, x, y), ag = soc_grid(env, 0, 0, x, y);
                blocks += b;
                wood_cells += w > 0;
                stations += st != 0;
                agents += ag != 0;
                stone += soc_grid(env, 0, 6, x, y);
                if (b && (w || st || ag)) bad++;
                if (w) {
                    if (w < lo_seen) lo_seen = w;
                    if (w > hi_seen) hi_seen = w;
                }
            }
        CHECK_EQ_INT(blocks, 32 + 10);
        CHECK_EQ_INT(wood_cells, 12);
        CHECK_EQ_INT(stations, 20);
        CHECK_EQ_INT(agents, 7);
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(stone, 7);
    }
    CHECK_EQ_INT(lo_seen, 1); /* amounts drawn over the whole [min, max] */
    CHECK_EQ_INT(hi_seen, 3);
    polis_env_destroy(env);
}

static void random_steps(polis_env *env, polis_rng *r, int steps)
{
    const polis_io *io = polis_env_io(env);
    for (int t = 0; t < steps; t++) {
        if (polis_env_done(env)) polis_env_reset(env, (uint64_t)t);
        for (int32_t a = 0; a < io->n_agents; a++) {
            const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
            int32_t legal[256], n = 0;
            for (int32_t k = 0; k < io->n_actions && n < 256; k++)
                if (m[k]) legal[n++] = k;
            io->actions[a] = legal[polis_rng_below(r, (uint32_t)n)];
        }
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "step: %s\n", polis_env_error(env));
            return;
        }
    }
}

static void test_no_allocation_in_step(void)
{
    test_alloc al = {0};
    polis_env *env = open_file(EXPLORATION, &al);
    CHECK(env != NULL);
    if (!env) return;
    polis_rng r;
    polis_rng_seed(&r, 1, 2);
    polis_env_reset(env, 1);
    random_steps(env, &r, 10); /* any lazy first-step work happens here */
    long before = al.calls;
    for (int e = 0; e < 4; e++) random_steps(env, &r, 499);
    CHECK_EQ_INT(al.calls - before, 0);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);

    /* the same with shared vision merged into map views */
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 12, \"y\": 12}}, \"view\": \"map\","
        " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": 5, \"repeat\": 20}],"
        "   \"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 10}],"
        "   \"players\": [{\"job\": \"explorer\"}]}}";
    char *json = soc_scenario_plugins(4, 100, params,
                                      ", {\"name\": \"fake_social\", \"params\": {\"map\": "
                                      "[[1, 0], [2, 0], [3, 0], [0, 3]]}}",
                                      "");
    test_alloc al2 = {0};
    env = soc_open(json, NULL, &al2);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    random_steps(env, &r, 10);
    before = al2.calls;
    random_steps(env, &r, 2000);
    CHECK_EQ_INT(al2.calls - before, 0);
    polis_env_destroy(env);
}

/* Every allocation of create + reset + 20 steps fails in turn: a clean error, nothing leaked. */
static void test_failing_allocator(const char *json)
{
    int bad = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        test_alloc al = {0};
        al.fail_at = n;
        polis_options o = test_options(NULL, &al);
        o.base_dir = POLIS_SOURCE_DIR "/rulesets/society/tests";
        polis_env *env = NULL;
        polis_error err;
        polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
        if (st == POLIS_OK) {
            st = polis_env_reset(env, 1);
            polis_rng r;
            polis_rng_seed(&r, 1, 1);
            for (int t = 0; st == POLIS_OK && t < 20; t++) {
                const polis_io *io = polis_env_io(env);
                for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = 0;
                st = polis_env_step(env);
            }
            if (st != POLIS_OK && polis_env_error(env)[0] == '\0') bad++;
            polis_env_destroy(env);
        } else if (err.message[0] == '\0') {
            bad++;
        }
        if (al.live != 0) {
            fprintf(stderr, "fail_at %ld: %lld bytes leaked\n", n, al.live);
            bad++;
        }
        if (!al.failed) break;
    }
    CHECK(n > 20);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_counts_and_determinism();
    test_placement();
    test_no_allocation_in_step();
    char *json = soc_scenario(
        3, 50,
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 6, \"y\": 6}},"
        " \"resources\": {\"berry\": {\"score\": 2}},"
        " \"jobs\": {\"cook\": {\"fov\": 1, \"capacity\": {\"wood\": 3}}},"
        " \"static\": {\"players\": [{\"job\": \"cook\", \"positions\": [1, 1]}]},"
        " \"random\": {\"resources\": [{\"name\": \"berry\", \"num\": 2, \"repeat\": 3}],"
        "   \"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 2}],"
        "   \"players\": [{\"job\": \"explorer\"}]}}",
        ", \"scripts\": [\"lua/gifts.lua\"]");
    test_failing_allocator(json);
    free(json);
    json = soc_scenario(
        4, 50, "{\"adasociety\": \"rulesets/society/tests/adasociety/config/main.json\"}", "");
    test_failing_allocator(json);
    free(json);
    CHECK_DONE();
}
