/* The greedy baseline (policy.c): its choices on small hand-made maps (a path around a block,
 * across the torus' wrap, produce before pick), never an illegal action over thousands of
 * Exploration steps, clearly more reward than random there, determinism, and no allocation.
 * Its variants greedy_shared (shares its map, then reads the windows shared with it, filtered
 * by their owners' requirements) and greedy_map (the whole map) on the same terms. */
#include "fixture.h"

/* One agent with fov 2 on a 7x7 map; `content` goes into "static" after the player. */
static polis_env *one_agent(const char *job, int x, int y, const char *content, test_alloc *al)
{
    char params[2048];
    snprintf(params, sizeof params,
             "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 7, \"y\": 7}},"
             " \"resources_in_play\": \"all\", \"jobs\": {\"smith\": %s},"
             " \"static\": {\"players\": [{\"job\": \"smith\", \"positions\": [%d, %d]}]%s}}",
             job, x, y, content);
    char *json = soc_scenario(1, 200, params, "");
    polis_env *env = soc_open(json, NULL, al);
    free(json);
    CHECK(env != NULL);
    return env;
}

/* Asks greedy for the agent's action, checks it is legal, steps; returns the action name. */
static const char *greedy_step(polis_env *env)
{
    const polis_io *io = polis_env_io(env);
    int32_t greedy = polis_env_policy_find(env, "greedy");
    CHECK(greedy >= 0);
    CHECK_EQ_INT(polis_env_policy_act(env, greedy, NULL, 0), POLIS_OK);
    int32_t a = io->actions[0];
    CHECK_EQ_INT(io->masks[a], 1);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 0);
    return polis_env_action_name(env, a);
}

static void test_paths(void)
{
    /* Wood two cells up, a block in between: around the block (left first, the BFS order
     * up, down, left, right), then up twice, then right, then pick. */
    polis_env *env = one_agent("{\"fov\": 2}", 3, 3,
                               ", \"blocks\": [{\"positions\": [[2, 3]]}],"
                               " \"resources\": [{\"name\": \"wood\", \"positions\": [1, 3], "
                               "\"num\": 2}]",
                               NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const char *want[] = {"move_left",  "move_up",   "move_up",
                          "move_right", "pick_wood", "pick_wood"};
    for (int i = 0; i < 6; i++) CHECK_EQ_STR(greedy_step(env), want[i]);
    CHECK_EQ_INT(soc_inv(env, 0, 0), 2);
    /* Nothing left in view: it explores with moves only, never an illegal action. */
    for (int i = 0; i < 40; i++) CHECK(strncmp(greedy_step(env), "move_", 5) == 0);
    polis_env_destroy(env);

    /* Across the wrap: stone at y = 6 is one step left of y = 0. */
    env = one_agent("{\"fov\": 2}", 3, 0,
                    ", \"resources\": [{\"name\": \"stone\", \"positions\": [3, 6], \"num\": 1}]",
                    NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(greedy_step(env), "move_left");
    CHECK_EQ_STR(greedy_step(env), "pick_stone");
    polis_env_destroy(env);

    /* Produce beats picking: holding wood and stone on a hammer station with a pile. The
     * nearer of two targets wins; at equal distance the more valuable. */
    env = one_agent("{\"fov\": 2, \"inventory\": {\"wood\": 1, \"stone\": 1}}", 3, 3,
                    ", \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [3, 3]}],"
                    " \"resources\": [{\"name\": [\"wood\", \"coal\", \"stone\"], "
                    "\"positions\": [[3, 3], [3, 4], [3, 2]], \"num\": 1}]",
                    NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(greedy_step(env), "produce");
    CHECK_EQ_STR(greedy_step(env), "pick_wood");
    /* coal (value 2, visible with the hammer) at (3, 4) beats stone (1) at (3, 2). */
    CHECK_EQ_STR(greedy_step(env), "move_right");
    CHECK_EQ_STR(greedy_step(env), "pick_coal");
    polis_env_destroy(env);

    /* A resource it cannot hold is no target; a valueless input of a gainful recipe is. */
    env = one_agent("{\"fov\": 2, \"capacity\": {\"stone\": 0}, \"score\": {\"wood\": 0}}", 3, 3,
                    ", \"resources\": [{\"name\": [\"stone\", \"wood\"], "
                    "\"positions\": [[3, 4], [1, 3]], \"num\": 1}]",
                    NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(greedy_step(env), "move_up");
    CHECK_EQ_STR(greedy_step(env), "move_up");
    CHECK_EQ_STR(greedy_step(env), "pick_wood");
    polis_env_destroy(env);
}

/* Two explorers with fov 1 on a 9x9 map and the social plugin's share_map family: agent 0 at
 * (4, 4); agent 1 caged by blocks at (0, 0), with a pile of `res` at (1, 1) in its window and
 * out of agent 0's. `inv0` / `inv1`: the jobs' starting inventories. */
static polis_env *two_agents(const char *res, const char *inv0, const char *inv1)
{
    char params[2048];
    snprintf(params, sizeof params,
             "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 9, \"y\": 9}},"
             " \"resources_in_play\": \"all\", \"jobs\": {\"a\": {\"fov\": 1, \"inventory\": %s},"
             " \"b\": {\"fov\": 1, \"inventory\": %s}}, \"static\": {\"players\": ["
             "{\"job\": \"a\", \"positions\": [4, 4]}, {\"job\": \"b\", \"positions\": [0, 0]}],"
             " \"blocks\": [{\"positions\": [[1, 0], [8, 0], [0, 1], [0, 8]]}],"
             " \"resources\": [{\"name\": \"%s\", \"positions\": [1, 1], \"num\": 3}]}}",
             inv0, inv1, res);
    char *json = soc_scenario_plugins(
        2, 100, params,
        ", {\"name\": \"social\", \"params\": {\"actions\": [{\"family\": \"share_map\"}]}}", "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    return env;
}

/* Both agents play `policy` for `steps` steps; returns agent 0's action names joined by ' '. */
static void play_two(polis_env *env, const char *policy, int steps, char *out, size_t size)
{
    const polis_io *io = polis_env_io(env);
    int32_t id = polis_env_policy_find(env, policy);
    CHECK(id >= 0);
    out[0] = 0;
    for (int i = 0; i < steps && id >= 0; i++) {
        CHECK_EQ_INT(polis_env_policy_act(env, id, NULL, 0), POLIS_OK);
        for (int32_t a = 0; a < 2; a++)
            CHECK_EQ_INT(io->masks[a * io->n_actions + io->actions[a]], 1);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", len ? " " : "",
                 polis_env_action_name(env, io->actions[0]));
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(io->illegal[0] + io->illegal[1], 0);
    }
}

static void test_shared_and_map(void)
{
    char got[1024];
    /* greedy_shared: both share first (agent 1 with agent 0, agent 0 with agent 1), then agent
     * 0 walks to the wood it sees only in agent 1's window (up first: the BFS order) and
     * picks it. */
    polis_env *env = two_agents("wood", "{}", "{}");
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy_shared", 9, got, sizeof got);
    CHECK_EQ_STR(got, "share_map_1 move_up move_up move_up move_left move_left move_left "
                      "pick_wood pick_wood");
    CHECK_EQ_INT(soc_inv(env, 0, 0), 2);
    /* greedy_map needs no sharing: the whole map counts. */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy_map", 7, got, sizeof got);
    CHECK_EQ_STR(got, "move_up move_up move_up move_left move_left move_left pick_wood");
    /* greedy (its own window) does not know the wood is there: 7 steps pick nothing. */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy", 7, got, sizeof got);
    CHECK(strstr(got, "pick") == NULL);
    CHECK_EQ_INT(soc_inv(env, 0, 0), 0);
    polis_env_destroy(env);

    /* Coal needs a hammer to be seen. Agent 0 holds one, agent 1 not: the shared window does
     * not show the coal (the merged map view is filtered by its owner's requirements), so
     * greedy_shared does not go for it, where greedy_map does. */
    env = two_agents("coal", "{\"hammer\": 1}", "{}");
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy_shared", 8, got, sizeof got);
    CHECK(strstr(got, "pick_coal") == NULL);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy_map", 7, got, sizeof got);
    CHECK_EQ_STR(got, "move_up move_up move_up move_left move_left move_left pick_coal");
    polis_env_destroy(env);
    /* With a hammer agent 1 sees the coal, and shows it. */
    env = two_agents("coal", "{\"hammer\": 1}", "{\"hammer\": 1}");
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    play_two(env, "greedy_shared", 8, got, sizeof got);
    CHECK_EQ_STR(got,
                 "share_map_1 move_up move_up move_up move_left move_left move_left pick_coal");
    polis_env_destroy(env);
}

typedef struct run_stats {
    double total;
    long agent_steps;
    long illegal;
    uint64_t hash;
} run_stats;

/* `episodes` Exploration episodes under a policy; every chosen action is checked against
 * the mask it was chosen under. */
static polis_env *open_exploration(void)
{
    polis_options o = test_options(NULL, NULL);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json", &o, &env,
                              &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        CHECK(0);
        return NULL;
    }
    return env;
}

static run_stats exploration(const char *policy, int episodes, uint64_t seed0)
{
    run_stats r = {0};
    polis_env *env = open_exploration();
    if (!env) return r;
    const polis_io *io = polis_env_io(env);
    int32_t id = polis_env_policy_find(env, policy);
    CHECK(id >= 0);
    for (int ep = 0; ep < episodes; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, seed0 + (uint64_t)ep), POLIS_OK);
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, id, NULL, 0), POLIS_OK);
            for (int32_t a = 0; a < io->n_agents; a++)
                if (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)io->actions[a]])
                    r.illegal++;
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "step failed: %s\n", polis_env_error(env));
                CHECK(0);
                break;
            }
            for (int32_t a = 0; a < io->n_agents; a++) {
                r.total += io->rewards[a];
                r.illegal += io->illegal[a];
                r.agent_steps++;
            }
        }
    }
    r.hash = polis_env_state_hash(env);
    polis_env_destroy(env);
    return r;
}

static void test_exploration(void)
{
    run_stats g = exploration("greedy", 4, 100);
    run_stats rnd = exploration("random", 4, 100);
    fprintf(stderr, "exploration, 4 episodes: greedy %.1f, random %.1f per agent-episode\n",
            g.total / 32.0, rnd.total / 32.0);
    CHECK(g.agent_steps == 4 * 500 * 8);
    CHECK_EQ_INT(g.illegal, 0);
    CHECK_EQ_INT(rnd.illegal, 0);
    CHECK(g.total > 3.0 * rnd.total);
    CHECK(g.total > 0);
    /* Deterministic: the same seeds give the same episodes. */
    run_stats again = exploration("greedy", 1, 103);
    run_stats last = exploration("greedy", 1, 103);
    CHECK(again.hash == last.hash);
    CHECK(again.total == last.total);
    /* The variants: legal, deterministic, far above random. */
    const char *variants[] = {"greedy_shared", "greedy_map"};
    for (int v = 0; v < 2; v++) {
        run_stats r = exploration(variants[v], 2, 100), r2 = exploration(variants[v], 2, 100);
        fprintf(stderr, "exploration, 2 episodes: %s %.1f per agent-episode\n", variants[v],
                r.total / 16.0);
        CHECK_EQ_INT(r.illegal, 0);
        CHECK(r.total > 3.0 * rnd.total / 2.0);
        CHECK(r.hash == r2.hash && r.total == r2.total);
    }
}

/* greedy_shared shares its map with every other explorer in its first 7 steps, one a step,
 * and never turns a share off again. */
static void test_shared_sharing(void)
{
    polis_env *env = open_exploration();
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t id = polis_env_policy_find(env, "greedy_shared");
    int32_t share0 = polis_env_action_id(env, "share_map_0");
    CHECK(id >= 0 && share0 >= 0);
    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    int shares[8] = {0};
    for (int t = 0; t < 500 && !polis_env_done(env); t++) {
        CHECK_EQ_INT(polis_env_policy_act(env, id, NULL, 0), POLIS_OK);
        for (int32_t a = 0; a < 8; a++) {
            int32_t x = io->actions[a], j = x - share0;
            if (j >= 0 && j < 8) {
                /* The t-th step shares with the t-th other agent in id order. */
                CHECK_EQ_INT(j, t < a ? t : t + 1);
                shares[a]++;
            } else if (t < 7) {
                CHECK(0);
            }
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    for (int32_t a = 0; a < 8; a++) CHECK_EQ_INT(shares[a], 7);
    polis_env_destroy(env);
}

static void test_no_alloc(void)
{
    test_alloc al = {0};
    polis_env *env = one_agent("{\"fov\": 2}", 3, 3,
                               ", \"blocks\": [{\"positions\": [[2, 3]]}],"
                               " \"resources\": [{\"name\": \"wood\", \"positions\": [1, 3], "
                               "\"num\": 5}]",
                               &al);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    long before = al.calls;
    int32_t ids[3] = {polis_env_policy_find(env, "greedy"),
                      polis_env_policy_find(env, "greedy_map"),
                      polis_env_policy_find(env, "greedy_shared")};
    for (int ep = 0; ep < 6; ep++) {
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, ids[ep % 3], NULL, 0), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep), POLIS_OK);
    }
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

int main(void)
{
    test_paths();
    test_shared_and_map();
    test_exploration();
    test_shared_sharing();
    test_no_alloc();
    CHECK_DONE();
}
