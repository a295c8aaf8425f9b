/* The greedy baseline (policy.c): its choices on small hand-made maps (a path around a block,
 * across the torus' wrap, produce before pick), never an illegal action over thousands of
 * Exploration steps, clearly more reward than random there, determinism, and no allocation. */
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

typedef struct run_stats {
    double total;
    long agent_steps;
    long illegal;
    uint64_t hash;
} run_stats;

/* `episodes` Exploration episodes under a policy; every chosen action is checked against
 * the mask it was chosen under. */
static run_stats exploration(const char *policy, int episodes, uint64_t seed0)
{
    run_stats r = {0};
    polis_options o = test_options(NULL, NULL);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json", &o, &env,
                              &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        CHECK(0);
        return r;
    }
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
    int32_t greedy = polis_env_policy_find(env, "greedy");
    for (int ep = 0; ep < 5; ep++) {
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, greedy, NULL, 0), POLIS_OK);
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
    test_exploration();
    test_no_alloc();
    CHECK_DONE();
}
