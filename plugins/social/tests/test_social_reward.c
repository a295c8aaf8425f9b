/* Reward sharing (spec 11.2) and the schedule's timing (9.4). */
#include "fixture.h"

#define SPLIT                                                                                      \
    "\"post_updates\": [{\"function\": \"split_score_to_group\", "                                 \
    "\"kwargs\": {\"attribute\": \"division_weight\"}}]"

static polis_env *reward_env(int agents, const char *groups, const char *ops)
{
    char social[2048], probe[2048];
    snprintf(social, sizeof social, "{\"social\": {\"groups\": %s}, " SPLIT "}", groups);
    snprintf(probe, sizeof probe, "{\"ops\": %s}", ops);
    return sg_env(agents, 100, social, probe, NULL);
}

/* The verified example: group {0, 1} with weights 3:1; player 0 earns +1 -> 0.75 / 0.25;
 * it loses 1 -> -0.75 / -0.25. An agent in no group keeps its reward. */
static void test_weights(void)
{
    polis_env *env = reward_env(
        3, "[{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": [3, 1]}}}]",
        "[{\"tick\": 0, \"op\": \"reward\", \"agent\": 0, \"value\": 1},"
        " {\"tick\": 0, \"op\": \"reward\", \"agent\": 2, \"value\": 2},"
        " {\"tick\": 1, \"op\": \"reward\", \"agent\": 0, \"value\": -1}]");
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(io->rewards[0], 0.75);
    CHECK_NEAR(io->rewards[1], 0.25);
    CHECK_NEAR(io->rewards[2], 2);
    /* the raw reward is still visible per reward function */
    const float *raw = polis_env_reward_components(env);
    CHECK_NEAR(raw[0], 1);
    CHECK_NEAR(raw[1], 0);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(io->rewards[0], -0.75);
    CHECK_NEAR(io->rewards[1], -0.25);
    CHECK_NEAR(io->rewards[2], 0);
    polis_env_destroy(env);
}

/* An agent in several groups splits its reward equally across them; each group pays by its
 * own weights; the total is kept. */
static void test_several_groups(void)
{
    polis_env *env = reward_env(
        4,
        "[{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": [1, 1]}}},"
        " {\"players\": {\"ids\": [0, 2, 3], \"attributes\": {\"division_weight\": [2, 1, 1]}}}]",
        "[{\"tick\": 0, \"op\": \"reward\", \"agent\": 0, \"value\": 1},"
        " {\"tick\": 1, \"op\": \"reward\", \"agent\": 3, \"value\": 4},"
        " {\"tick\": 1, \"op\": \"reward\", \"agent\": 1, \"value\": 2}]");
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    /* 0.5 to group 0 (0.25 + 0.25), 0.5 to group 1 (0.25 + 0.125 + 0.125) */
    CHECK_NEAR(io->rewards[0], 0.5);
    CHECK_NEAR(io->rewards[1], 0.25);
    CHECK_NEAR(io->rewards[2], 0.125);
    CHECK_NEAR(io->rewards[3], 0.125);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    /* group 1 gets 4 from agent 3 (2, 1, 1); group 0 gets 2 from agent 1 (1, 1) */
    CHECK_NEAR(io->rewards[0], 3);
    CHECK_NEAR(io->rewards[1], 1);
    CHECK_NEAR(io->rewards[2], 1);
    CHECK_NEAR(io->rewards[3], 1);
    polis_env_destroy(env);
}

/* A group whose weights sum to zero pays nothing out: the contributions go back (AdaSociety
 * divides by zero). Members without the attribute get nothing and give nothing. */
static void test_zero_weights(void)
{
    polis_env *env = reward_env(
        3,
        "[{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": [0, 0]}}},"
        " {\"players\": {\"ids\": [0, 2], \"attributes\": {\"division_weight\": [1, 1]}}},"
        " {\"players\": {\"ids\": [1], \"attributes\": {\"score\": [1]}}}]",
        "[{\"tick\": 0, \"op\": \"reward\", \"agent\": 0, \"value\": 1},"
        " {\"tick\": 1, \"op\": \"reward\", \"agent\": 1, \"value\": 1}]");
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    /* 0.5 to the zero group (refunded), 0.5 to group 1 (0.25 + 0.25) */
    CHECK_NEAR(io->rewards[0], 0.75);
    CHECK_NEAR(io->rewards[1], 0);
    CHECK_NEAR(io->rewards[2], 0.25);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(io->rewards[0], 0);
    CHECK_NEAR(io->rewards[1], 1); /* its only group with the attribute pays it all back */
    CHECK_NEAR(io->rewards[2], 0);
    polis_env_destroy(env);
}

/* Spec 9.4: a snapshot at step k applies after the reward of the step that makes the
 * counter k was shared (with the old graph), and that step's observation shows the new
 * graph. A snapshot at "0" replaces the initial structure at reset. */
static void test_schedule_timing(void)
{
    polis_env *env =
        sg_env(3, 100,
               "{\"social_state\": true, \"social\": {\"groups\": [{\"players\": {\"ids\": [0, 1], "
               "\"attributes\": {\"division_weight\": [1, 1]}}}]},"
               " \"social_schedule\": {\"2\": {\"relations\": [], \"groups\": [{\"players\": "
               "{\"ids\": [0, 2], \"attributes\": {\"division_weight\": [1, 1]}}}]}}, " SPLIT "}",
               "{\"watch_group\": 0, \"ops\": [{\"tick\": 1, \"op\": \"reward\", \"agent\": 0, "
               "\"value\": 1}, {\"tick\": 2, \"op\": \"reward\", \"agent\": 0, \"value\": 1}]}",
               NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    const int8_t *ss = sg_obs(env, 0, "social_state"); /* 3 agents + 1 group */
    CHECK_EQ_INT(ss[1 * 4 + 3], 1);
    CHECK_EQ_INT(ss[2 * 4 + 3], 0);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* step 0: counter 1 */
    CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 1");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* step 1: counter 2 */
    CHECK_NEAR(io->rewards[0], 0.5);      /* shared with the old group {0, 1} */
    CHECK_NEAR(io->rewards[1], 0.5);
    CHECK_NEAR(io->rewards[2], 0);
    CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 2"); /* observed: the new graph */
    CHECK_EQ_INT(ss[1 * 4 + 3], 0);
    CHECK_EQ_INT(ss[2 * 4 + 3], 1);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(io->rewards[0], 0.5);
    CHECK_NEAR(io->rewards[1], 0);
    CHECK_NEAR(io->rewards[2], 0.5);
    /* the next episode starts from the initial structure */
    CHECK_EQ_INT(polis_env_reset(env, 9), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 1");
    polis_env_destroy(env);

    env = sg_env(2, 100,
                 "{\"social\": {\"groups\": [{\"players\": {\"ids\": [0]}}]},"
                 " \"social_schedule\": {\"0\": {\"groups\": [{\"players\": {\"ids\": [1]}}]}}}",
                 "{\"watch_group\": 0}", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(sg_list(env, "probe_members"), "1: 1");
    polis_env_destroy(env);
}

int main(void)
{
    test_weights();
    test_several_groups();
    test_zero_weights();
    test_schedule_timing();
    CHECK_DONE();
}
