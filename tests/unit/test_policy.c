/* Scripted policies (engine/policy/policy.c): the kernel's noop, random and uniform, plugin and Lua
 * policies, the policy generator's determinism and its independence from the env stream,
 * exact error messages, and no allocation while acting. */
#include "check.h"
#include "testutil.h"

#define PROBE(mode)                                                                                \
    "{\"agents\": 4, \"max_steps\": 40, \"seed\": 3, \"plugins\": [{\"name\": \"policy_probe\", "  \
    "\"params\": {\"mode\": \"" mode "\"}}]}"
#define LUA_SCN                                                                                    \
    "{\"agents\": 3, \"max_steps\": 30, \"scripts\": [\"" POLIS_TEST_SOURCE_DIR                    \
    "/scenarios/policy/lua_policy.lua\"]}"

static int32_t find(polis_env *env, const char *name)
{
    int32_t id = polis_env_policy_find(env, name);
    CHECK(id >= 0);
    return id;
}

static void test_listing(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const char *want[] = {"noop", "random", "uniform", "last_legal", "dice",
                          "bad",  "fail",   "silent",  "thief"};
    CHECK_EQ_INT(polis_env_n_policies(env), 9);
    for (int32_t i = 0; i < 9; i++) {
        CHECK_EQ_STR(polis_env_policy_name(env, i), want[i]);
        CHECK_EQ_INT(polis_env_policy_find(env, want[i]), i);
    }
    CHECK(polis_env_policy_name(env, 9) == NULL);
    CHECK(polis_env_policy_name(env, -1) == NULL);
    CHECK_EQ_INT(polis_env_policy_find(env, "greedy"), -1);
    CHECK_EQ_INT(polis_env_policy_find(env, NULL), -1);

    char *d = polis_env_describe_json(env);
    CHECK_CONTAINS(d, "\"policies\":");
    CHECK_CONTAINS(d, "\"name\":\t\"random\",\n\t\t\t\"owner\":\t\"polis\"");
    CHECK_CONTAINS(d, "\"id\":\t2,\n\t\t\t\"name\":\t\"uniform\",\n\t\t\t\"owner\":\t\"polis\"");
    CHECK_CONTAINS(d, "\"id\":\t3,\n\t\t\t\"name\":\t\"last_legal\"");
    CHECK_CONTAINS(d, "\"name\":\t\"dice\",\n\t\t\t\"owner\":\t\"policy_probe\"");
    polis_free(d);
    polis_env_destroy(env);

    /* Without plugin policies there are only the kernel's. */
    env = test_env("{\"agents\": 1}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_policies(env), 3);
    polis_env_destroy(env);
}

static void test_act(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);

    CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "policy_act: call reset before choosing actions");

    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_policy_act(env, 9, NULL, 0), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "policy_act: policy 9 is not a policy id (0..8)");
    CHECK_EQ_INT(polis_env_policy_act(env, -1, NULL, 0), POLIS_ERR_INVALID);
    int32_t bad_agents[] = {0, 4};
    CHECK_EQ_INT(polis_env_policy_act(env, 1, bad_agents, 2), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "policy_act: agents[1] = 4 is not an agent id (0..3)");
    CHECK_EQ_INT(polis_env_policy_act(env, 1, bad_agents, 5), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "policy_act: 5 agents (expected 0..4)");

    /* last_legal: "right" (id 2) is legal for even agents only. */
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "last_legal"), NULL, 0), POLIS_OK);
    CHECK_EQ_INT(io->actions[0], 2);
    CHECK_EQ_INT(io->actions[1], 1);
    CHECK_EQ_INT(io->actions[2], 2);
    CHECK_EQ_INT(io->actions[3], 1);
    /* An explicit list acts for those agents only, in its order. */
    int32_t two[] = {3, 0};
    CHECK_EQ_INT(polis_env_policy_act(env, 0, two, 2), POLIS_OK);
    CHECK_EQ_INT(io->actions[0], 0);
    CHECK_EQ_INT(io->actions[1], 1);
    CHECK_EQ_INT(io->actions[2], 2);
    CHECK_EQ_INT(io->actions[3], 0);

    /* random: always legal, and every legal action turns up. */
    int seen[4][3] = {{0}};
    for (int t = 0; t < 39; t++) {
        CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_OK);
        for (int32_t a = 0; a < 4; a++) {
            int32_t k = io->actions[a];
            CHECK(k >= 0 && k < 3);
            CHECK(io->masks[a * 3 + k] == 1);
            seen[a][k]++;
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        for (int32_t a = 0; a < 4; a++) CHECK_EQ_INT(io->illegal[a], 0);
    }
    CHECK(seen[0][0] > 0 && seen[0][1] > 0 && seen[0][2] > 0);
    CHECK(seen[1][0] > 0 && seen[1][1] > 0 && seen[1][2] == 0);

    /* At the end of the episode NULL means nobody: the actions stay as they are. */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(polis_env_done(env));
    polis_io *w = (polis_io *)io;
    for (int32_t a = 0; a < 4; a++) w->actions[a] = 1;
    CHECK_EQ_INT(polis_env_policy_act(env, 0, NULL, 0), POLIS_OK);
    for (int32_t a = 0; a < 4; a++) CHECK_EQ_INT(io->actions[a], 1);
    /* A finished agent's mask allows only noop, and random respects it. */
    CHECK_EQ_INT(polis_env_policy_act(env, 1, two, 2), POLIS_OK);
    CHECK_EQ_INT(io->actions[3], 0);
    CHECK_EQ_INT(io->actions[0], 0);
    polis_env_destroy(env);
}

/* uniform: every action is drawn with probability 1/3 whatever the mask says; a masked
 * draw ("right" for odd agents) is sent as noop, so nothing is flagged illegal and odd
 * agents play noop about twice as often as even ones. */
static void test_uniform(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t uniform = find(env, "uniform");
    CHECK_EQ_INT(uniform, 2);
    int seen[4][3] = {{0}}, n = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, uniform, NULL, 0), POLIS_OK);
            for (int32_t a = 0; a < 4; a++) {
                int32_t k = io->actions[a];
                CHECK(k >= 0 && k < 3);
                CHECK(io->masks[a * 3 + k] == 1);
                seen[a][k]++;
            }
            n++;
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int32_t a = 0; a < 4; a++) CHECK_EQ_INT(io->illegal[a], 0);
        }
    }
    /* n = 2400 draws per agent: 1/3 is 800 (sd about 23), 2/3 is 1600 */
    CHECK_EQ_INT(n, 2400);
    for (int32_t a = 0; a < 4; a += 2)
        for (int32_t k = 0; k < 3; k++) CHECK(seen[a][k] > 700 && seen[a][k] < 900);
    for (int32_t a = 1; a < 4; a += 2) {
        CHECK(seen[a][0] > 1500 && seen[a][0] < 1700);
        CHECK(seen[a][1] > 700 && seen[a][1] < 900);
        CHECK_EQ_INT(seen[a][2], 0);
    }
    polis_env_destroy(env);
}

/* The actions "random" and "dice" choose over `steps` steps from a reset with `seed`. */
static void policy_trace(const char *policy, uint64_t seed, int32_t *out, int steps)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t id = find(env, policy);
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    for (int t = 0; t < steps; t++) {
        CHECK_EQ_INT(polis_env_policy_act(env, id, NULL, 0), POLIS_OK);
        for (int32_t a = 0; a < 4; a++) out[t * 4 + a] = io->actions[a];
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    polis_env_destroy(env);
}

static void test_determinism(void)
{
    for (int p = 0; p < 3; p++) {
        const char *policy = p == 2 ? "uniform" : p ? "dice" : "random";
        int32_t a[120], b[120], c[120];
        policy_trace(policy, 11, a, 30);
        policy_trace(policy, 11, b, 30);
        policy_trace(policy, 12, c, 30);
        CHECK(memcmp(a, b, sizeof a) == 0);
        CHECK(memcmp(a, c, sizeof a) != 0);
    }
    /* A reset restarts the policy generator: episode 2 repeats episode 1. */
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t first[40], again[40];
    for (int ep = 0; ep < 2; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
        for (int t = 0; t < 10; t++) {
            CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_OK);
            memcpy((ep ? again : first) + t * 4, io->actions, 4 * sizeof(int32_t));
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
    }
    CHECK(memcmp(first, again, sizeof first) == 0);
    polis_env_destroy(env);
}

/* Rewards (drawn from the env generator) of 30 steps of "left" for everyone, asking
 * `policy` (NULL: none) for actions before each step and then overriding them. */
static void rewards_trace(const char *json, const char *policy, float *out, uint64_t *hash)
{
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_io *io = (polis_io *)polis_env_io(env);
    int32_t id = policy ? find(env, policy) : -1;
    int32_t fixed = polis_env_action_id(env, strstr(json, "lua") ? "jump" : "left");
    CHECK(fixed > 0);
    CHECK_EQ_INT(polis_env_reset(env, 9), POLIS_OK);
    for (int t = 0; t < 30; t++) {
        if (id >= 0) {
            CHECK_EQ_INT(polis_env_policy_act(env, id, NULL, 0), POLIS_OK);
            CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_OK);
        }
        for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = fixed;
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        for (int32_t a = 0; a < io->n_agents; a++) out[t * io->n_agents + a] = io->rewards[a];
    }
    *hash = polis_env_state_hash(env);
    polis_env_destroy(env);
}

static void test_independence(void)
{
    float plain[120], with[120], stolen[120];
    uint64_t h_plain = 0, h_with = 1, h_stolen = 2;
    rewards_trace(PROBE("ok"), NULL, plain, &h_plain);
    rewards_trace(PROBE("ok"), "dice", with, &h_with);
    CHECK(memcmp(plain, with, sizeof plain) == 0);
    CHECK(h_plain == h_with);
    /* A policy drawing from the env generator changes the rewards: the comparison sees it. */
    rewards_trace(PROBE("ok"), "thief", stolen, &h_stolen);
    CHECK(memcmp(plain, stolen, sizeof plain) != 0);

    /* Lua: math.random inside a policy draws from the policy generator. */
    float lplain[90], lwith[90];
    rewards_trace(LUA_SCN, NULL, lplain, &h_plain);
    rewards_trace(LUA_SCN, "lua_dice", lwith, &h_with);
    CHECK(memcmp(lplain, lwith, sizeof lplain) == 0);
    CHECK(h_plain == h_with);
}

static void test_errors(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "bad"), NULL, 0), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env),
                 "policy bad: agent 1 (agent_1): action 999 is outside [0, 3) at tick 1");
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "fail"), NULL, 0), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "policy_probe: refuses agent 1 [policy fail, agent 1 (agent_1), tick 1]");
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "silent"), NULL, 0), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "policy_probe: failed (limit exceeded) [policy silent, "
                                       "agent 0 (agent_0), tick 1]");
    /* A failing policy changes nothing else: the env steps on. */
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int32_t a = 0; a < 4; a++) io->actions[a] = 0;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    polis_env_destroy(env);

    CHECK_CONTAINS(test_env_error(PROBE("dup")),
                   "policy_probe: policy \"dice\" is already registered by policy_probe");
    CHECK_CONTAINS(test_env_error(PROBE("builtin")),
                   "policy_probe: policy \"random\" is the kernel's (noop, random and uniform are "
                   "reserved); choose another name");
    CHECK_CONTAINS(test_env_error(PROBE("builtin_uniform")),
                   "policy_probe: policy \"uniform\" is the kernel's (noop, random and uniform "
                   "are reserved); choose another name");
    CHECK_CONTAINS(test_env_error(PROBE("bad_name")),
                   "policy_probe: policy name \"Dice!\" is not 1 to 63 characters from a-z, 0-9 "
                   "and _");
    CHECK_CONTAINS(test_env_error(PROBE("null_fn")), "policy_probe: policy dice: function is NULL");

    env = test_env(PROBE("late"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env),
                 "policy_probe: policy: registration is closed once the env is created "
                 "(register in init or start) [hook reset, tick 0]");
    CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "policy_act: the previous step or reset failed; call reset");
    polis_env_destroy(env);
}

static void test_lua(void)
{
    polis_env *env = test_env(LUA_SCN, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t jump = polis_env_action_id(env, "jump");
    CHECK_EQ_INT(polis_env_n_policies(env), 9);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "by_name"), NULL, 0), POLIS_OK);
    for (int32_t a = 0; a < 3; a++) CHECK_EQ_INT(io->actions[a], jump);
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "unknown"), NULL, 0), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env),
                   "lua_policy.lua:10: policy 'unknown' (the function defined here) returned "
                   "'fly', which is not an action name [policy unknown, agent 0 (agent_0), "
                   "tick 0]");
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "wrong"), NULL, 0), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env),
                   "lua_policy.lua:11: policy 'wrong' for agent 0 (the function defined here) "
                   "returned table, expected an action id or an action name");
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "raises"), NULL, 0), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "lua_policy.lua:12: no policy for agent 0 [policy "
                                         "raises, agent 0 (agent_0), tick 0]");
    CHECK_EQ_INT(polis_env_policy_act(env, find(env, "range"), NULL, 0), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env),
                 "policy range: agent 0 (agent_0): action 42 is outside [0, 2) at tick 0");
    polis_env_destroy(env);

    CHECK_CONTAINS(test_env_error("{\"agents\": 1, \"scripts\": [\"" POLIS_TEST_SOURCE_DIR
                                  "/scenarios/policy/lua_policy.lua\", \"" POLIS_TEST_SOURCE_DIR
                                  "/scenarios/policy/dup_policy.lua\"]}"),
                   "dup_policy.lua:2: policy \"lua_dice\" is already registered by lua_policy");
}

/* Acting allocates nothing: the kernel's, plugin and Lua policies over whole episodes. */
static void test_no_alloc(void)
{
    const char *scns[2] = {PROBE("ok"), LUA_SCN};
    for (int s = 0; s < 2; s++) {
        test_alloc al = {0};
        polis_env *env = test_env(scns[s], NULL, &al);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK_EQ_INT(polis_env_reset(env, 4), POLIS_OK);
        int32_t ids[4] = {0, 1, 2, find(env, s ? "lua_dice" : "dice")};
        long before = al.calls;
        for (int ep = 0; ep < 3; ep++) {
            while (!polis_env_done(env)) {
                for (int i = 0; i < 4; i++)
                    CHECK_EQ_INT(polis_env_policy_act(env, ids[i], NULL, 0), POLIS_OK);
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            }
            if (s == 0) CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep), POLIS_OK);
            if (s == 1) break;
        }
        /* Lua's own garbage may allocate inside the script's budget; C policies never do. */
        if (s == 0) CHECK_EQ_INT(al.calls, before);
        polis_env_destroy(env);
        CHECK_EQ_INT(al.live, 0);
    }
}

/* Registration under a failing allocator: a clean error and no leak at every failure. */
static void test_alloc_sweep(void)
{
    int failures = 0;
    for (long n = 1; n < 100000; n++) {
        test_alloc al = {.fail_at = n};
        polis_options o = test_options(NULL, &al);
        polis_env *env = NULL;
        polis_error err;
        const char *json = PROBE("ok");
        polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
        if (st == POLIS_OK) {
            polis_env_destroy(env);
            CHECK_EQ_INT(al.live, 0);
            if (!al.failed) break;
            continue;
        }
        failures++;
        CHECK(st == POLIS_ERR_NOMEM || st == POLIS_ERR_PLUGIN);
        CHECK_EQ_INT(al.live, 0);
    }
    CHECK(failures > 10);
}

int main(void)
{
    test_listing();
    test_act();
    test_uniform();
    test_determinism();
    test_independence();
    test_errors();
    test_lua();
    test_no_alloc();
    test_alloc_sweep();
    CHECK_DONE();
}
