/* The rule functions of spec 9.3 and the negotiation helpers of 9.2, with the verified traces
 * of 14.6: matching_edge parity, merge_relation_to_group cases (i)-(iv), normalization,
 * symmetrize_relation, clear_temporary_relation. */
#include "fixture.h"

#define NEGOTIATION_RULES                                                                          \
    "\"post_updates\": ["                                                                          \
    " {\"function\": \"matching_edge\", \"kwargs\": {\"condition_attr\": "                         \
    "\"matching_request_step\", \"result_attr1\": {\"parity\": 0}, \"result_attr2\": "             \
    "{\"parity\": 1}}},"                                                                           \
    " {\"function\": \"merge_relation_to_group\", \"kwargs\": {\"condition_attr\": "               \
    "\"accept\", \"result_attr\": \"score\"}},"                                                    \
    " {\"function\": \"normalization\", \"kwargs\": {\"attr\": \"score\"}},"                       \
    " {\"function\": \"clear_temporary_relation\", \"kwargs\": {\"attr\": "                        \
    "\"matching_request_step\"}},"                                                                 \
    " {\"function\": \"split_score_to_group\", \"kwargs\": {\"attribute\": \"score\"}}]"

static void test_matching_parity(void)
{
    polis_env *env = sg_env(
        4, 100, "{" NEGOTIATION_RULES "}",
        "{\"ops\": [{\"tick\": 0, \"op\": \"request\", \"from\": 1, \"to\": 0},"
        "{\"tick\": 0, \"op\": \"request\", \"from\": 0, \"to\": 1},"
        "{\"tick\": 0, \"op\": \"request\", \"from\": 2, \"to\": 3},"
        "{\"tick\": 1, \"op\": \"request\", \"from\": 3, \"to\": 2},"
        "{\"tick\": 2, \"op\": \"request\", \"from\": 3, \"to\": 2},"
        "{\"tick\": 2, \"op\": \"request\", \"from\": 2, \"to\": 3}],"
        "\"queries\": [[0, 1, \"parity\"], [1, 0, \"parity\"], [0, 1, \"matching_request_step\"],"
        "[2, 3, \"matching_request_step\"], [2, 3, \"parity\"], [3, 2, \"parity\"],"
        "[3, 2, \"matching_request_step\"]]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 0), 0); /* the lower id gets result_attr1 */
    CHECK_NEAR(sg_q(env, 1), 1);
    CHECK_ABSENT(sg_q(env, 2)); /* the condition is consumed */
    CHECK_ABSENT(sg_q(env, 3)); /* an unmatched request is cleared the same step */
    CHECK_ABSENT(sg_q(env, 4));
    /* requests of different steps carry different values: no match */
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_ABSENT(sg_q(env, 5));
    CHECK_ABSENT(sg_q(env, 6));
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 4), 0); /* 2 < 3, although 3 asked first */
    CHECK_NEAR(sg_q(env, 5), 1);
    polis_env_destroy(env);
}

/* Spec 14.6: 0 and 1 request each other at step 0; at step 1 player 1 proposes 0.3; at step
 * 2 player 0 accepts -> group {0: 0.7, 1: 0.3}; later 1 merges with 2 accepting 2's claim
 * 0.5 -> {0: 0.35, 1: 0.15, 2: 0.5}. */
static void test_negotiation_trace(void)
{
    test_log log = {0};
    polis_env *env = sg_env(
        4, 100, "{" NEGOTIATION_RULES "}",
        "{\"watch\": 2, \"ops\": [{\"tick\": 0, \"op\": \"request\", \"from\": 0, \"to\": 1},"
        "{\"tick\": 0, \"op\": \"request\", \"from\": 1, \"to\": 0},"
        "{\"tick\": 1, \"op\": \"propose\", \"from\": 1, \"to\": 0, \"value\": 0.3},"
        "{\"tick\": 2, \"op\": \"accept\", \"agent\": 0, \"opponent\": 1},"
        "{\"tick\": 3, \"op\": \"request\", \"from\": 2, \"to\": 1},"
        "{\"tick\": 3, \"op\": \"request\", \"from\": 1, \"to\": 2},"
        "{\"tick\": 4, \"op\": \"propose\", \"from\": 2, \"to\": 1, \"value\": 0.5},"
        "{\"tick\": 5, \"op\": \"accept\", \"agent\": 1, \"opponent\": 2},"
        "{\"tick\": 6, \"op\": \"accept\", \"agent\": 3, \"opponent\": 2},"
        "{\"tick\": 7, \"op\": \"reward\", \"agent\": 2, \"value\": 1}],"
        "\"queries\": [[4, 0, \"score\"], [4, 1, \"score\"], [4, 2, \"score\"],"
        "[1, 0, \"proposal\"], [0, 1, \"parity\"], [1, 0, \"parity\"], [0, 1, \"accept\"]]}",
        &log);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_max_steps(env), 100);
    for (int t = 0; t < 2; t++) CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 3), 0.3);
    CHECK_NEAR(sg_q(env, 4), 0);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* step 2: the accept */
    CHECK_NEAR(sg_q(env, 0), 0.7);
    CHECK_NEAR(sg_q(env, 1), 0.3);
    CHECK_ABSENT(sg_q(env, 3)); /* proposal and parity are gone both ways */
    CHECK_ABSENT(sg_q(env, 4));
    CHECK_ABSENT(sg_q(env, 5));
    CHECK_ABSENT(sg_q(env, 6)); /* merged: the condition is consumed */
    for (int t = 3; t < 6; t++) CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 0), 0.35);
    CHECK_NEAR(sg_q(env, 1), 0.15);
    CHECK_NEAR(sg_q(env, 2), 0.5);
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 0");
    CHECK_EQ_STR(sg_list(env, "probe_live"), "1: 0");
    /* accepting with nothing proposed is refused and changes nothing */
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    const int32_t *deg = sg_obs(env, 0, "probe_degree");
    CHECK_EQ_INT(deg[2], 1);
    /* the negotiated weights share the rewards */
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    CHECK_NEAR(io->rewards[0], 0.35);
    CHECK_NEAR(io->rewards[1], 0.15);
    CHECK_NEAR(io->rewards[2], 0.5);
    CHECK_NEAR(io->rewards[3], 0);
    polis_env_destroy(env);
}

#define MERGE_ONLY                                                                                 \
    "\"post_updates\": [[\"merge_relation_to_group\", {\"condition_attr\": \"accept\", "           \
    "\"result_attr\": \"score\"}]]"

#define ACCEPT_OPS(a, b, va, vb)                                                                   \
    "{\"tick\": 0, \"op\": \"set\", \"from\": " #a ", \"to\": " #b ", \"attr\": \"accept\", "      \
    "\"value\": " #va "},"                                                                         \
    "{\"tick\": 0, \"op\": \"set\", \"from\": " #b ", \"to\": " #a ", \"attr\": \"accept\", "      \
    "\"value\": " #vb "}"

static void test_merge_cases(void)
{
    /* (ii) only `other` (1) is in a group: 0 joins each of 1's groups where 1 has a score */
    polis_env *env =
        sg_env(3, 100,
               "{\"max_groups\": 3, \"social\": {\"groups\": [{\"players\": {\"ids\": [1], "
               "\"attributes\": {\"score\": [1]}}}, {\"players\": {\"ids\": [1], \"attributes\": "
               "{\"other\": [1]}}}]}, " MERGE_ONLY "}",
               "{\"watch\": 0, \"ops\": [" ACCEPT_OPS(
                   0, 1, 0.4, 0.6) "],"
                                   "\"queries\": [[3, 0, \"score\"], [0, 1, \"accept\"]]}",
               NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_NEAR(sg_q(env, 0), 0.4);
        CHECK_ABSENT(sg_q(env, 1));
        CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 0");
        polis_env_destroy(env);
    }
    /* (iii) only `node` (0) is in a group: 1 joins it with its own accepted value */
    env = sg_env(
        3, 100,
        "{\"max_groups\": 3, \"social\": {\"groups\": [{\"players\": {\"ids\": [0], "
        "\"attributes\": {\"score\": [1]}}}]}, " MERGE_ONLY "}",
        "{\"watch\": 1, \"ops\": [" ACCEPT_OPS(0, 1, 0.4, 0.6) "],"
                                                               "\"queries\": [[3, 1, \"score\"]]}",
        NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_NEAR(sg_q(env, 0), 0.6);
        CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 0");
        polis_env_destroy(env);
    }
    /* (iv) both in groups: 1's group moves into 0's with its weights and is deleted */
    env = sg_env(4, 100,
                 "{\"max_groups\": 3, \"social\": {\"groups\": [{\"players\": {\"ids\": [0, 2], "
                 "\"attributes\": {\"score\": [0.5, 0.5]}}}, {\"players\": {\"ids\": [1, 3], "
                 "\"attributes\": {\"score\": [0.7, 0.3]}}}]}, " MERGE_ONLY "}",
                 "{\"watch_group\": 0, \"watch\": 3, \"ops\": [" ACCEPT_OPS(
                     1, 0, 0.2,
                     0.9) "],"
                          "\"queries\": [[4, 1, \"score\"], [4, 3, \"score\"], [4, 0, \"score\"]]}",
                 NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_EQ_STR(sg_list(env, "probe_members"), "4: 0 1 2 3");
        CHECK_EQ_STR(sg_list(env, "probe_live"), "1: 0");
        CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 0");
        CHECK_NEAR(sg_q(env, 0), 0.7);
        CHECK_NEAR(sg_q(env, 1), 0.3);
        CHECK_NEAR(sg_q(env, 2), 0.5);
        polis_env_destroy(env);
    }
    /* (iv) already in the same group: nothing moves, the condition is consumed; a zero value
     * is not an acceptance */
    env = sg_env(
        3, 100,
        "{\"max_groups\": 3, \"social\": {\"groups\": [{\"players\": {\"ids\": [0, 1], "
        "\"attributes\": {\"score\": [0.5, 0.5]}}}]}, " MERGE_ONLY "}",
        "{\"watch_group\": 0, \"ops\": [" ACCEPT_OPS(0, 1, 1, 1) "," ACCEPT_OPS(
            1, 2, 0,
            0.5) "],"
                 "\"queries\": [[0, 1, \"accept\"], [1, 2, \"accept\"], [2, 1, \"accept\"]]}",
        NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 1");
        CHECK_EQ_STR(sg_list(env, "probe_live"), "1: 0");
        CHECK_ABSENT(sg_q(env, 0));
        CHECK_NEAR(sg_q(env, 1), 0);
        CHECK_NEAR(sg_q(env, 2), 0.5);
        polis_env_destroy(env);
    }
}

static void test_normalization_and_symmetrize(void)
{
    polis_env *env = sg_env(
        3, 100,
        "{\"social\": {\"relations\": [{\"attributes\": {\"trust\": 0.5}, \"players\": "
        "[{\"from\": 0, \"to\": 1}]}, {\"attributes\": {\"trust\": 0.2}, \"players\": "
        "[{\"from\": 2, \"to\": 1}]}, {\"attributes\": {\"trust\": 0.9}, \"players\": "
        "[{\"from\": 1, \"to\": 2}]}],"
        " \"groups\": [{\"players\": {\"ids\": [0, 1, 2], \"attributes\": {\"w\": [2, 6, 0]}}},"
        "             {\"players\": {\"ids\": [0, 1], \"attributes\": {\"w\": [0, 0]}}},"
        "             {\"players\": {\"ids\": [2]}}]},"
        " \"post_updates\": ["
        "  {\"function\": \"normalization\", \"kwargs\": {\"attr\": \"w\"}},"
        "  {\"function\": \"symmetrize_relation\", \"kwargs\": {\"attr\": \"trust\"}}]}",
        "{\"queries\": [[3, 0, \"w\"], [3, 1, \"w\"], [3, 2, \"w\"], [4, 0, \"w\"], [1, 0, "
        "\"trust\"], [1, 2, \"trust\"], [2, 1, \"trust\"], [5, 2, \"w\"], [0, 1, \"trust\"]]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 0), 0.25);
    CHECK_NEAR(sg_q(env, 1), 0.75);
    CHECK_NEAR(sg_q(env, 2), 0);
    CHECK_NEAR(sg_q(env, 3), 0);   /* sum 0: left alone */
    CHECK_NEAR(sg_q(env, 4), 0.5); /* created from 0 -> 1 */
    CHECK_NEAR(sg_q(env, 5), 0.9); /* kept: 1 -> 2 had its own value */
    CHECK_NEAR(sg_q(env, 6), 0.2);
    CHECK_ABSENT(sg_q(env, 7)); /* a member without the attribute is not given one */
    CHECK_NEAR(sg_q(env, 8), 0.5);
    polis_env_destroy(env);
}

/* symmetrize_relation copies a dict value whole (everything below the key). */
static void test_symmetrize_dict(void)
{
    polis_env *env =
        sg_env(3, 100,
               "{\"social\": {\"relations\": [{\"attributes\": {\"sharing\": {\"Map\": true, "
               "\"Player\": false}, \"other\": 1}, \"players\": [{\"from\": 0, \"to\": 2}]}]},"
               " \"post_updates\": [[\"symmetrize_relation\", {\"attr\": \"sharing\"}]]}",
               "{\"watch\": 0, \"queries\": [[2, 0, \"sharing.Map\"], [2, 0, \"sharing.Player\"], "
               "[2, 0, \"other\"]]}",
               NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_NEAR(sg_q(env, 0), 1);
    CHECK_NEAR(sg_q(env, 1), 0);
    CHECK_ABSENT(sg_q(env, 2));
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "1: 2");
    polis_env_destroy(env);
}

/* clear_temporary_relation removes the key and everything below it from agent -> agent
 * edges only. */
static void test_clear(void)
{
    polis_env *env = sg_env(
        2, 100,
        "{\"social\": {\"relations\": [{\"attributes\": {\"tmp\": {\"a\": 1, \"b\": 2}, "
        "\"tmpx\": 3, \"keep\": 1}, \"players\": [{\"from\": 0, \"to\": 1}]}, {\"attributes\": "
        "{\"tmp\": 1}, \"players\": [{\"from\": 1, \"to\": 0}]}],"
        " \"groups\": [{\"players\": {\"ids\": [0], \"attributes\": {\"tmp\": [1]}}}]},"
        " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"tmp\"}]]}",
        "{\"watch\": 0, \"queries\": [[0, 1, \"tmp.a\"], [0, 1, \"tmp.b\"], [0, 1, \"tmpx\"], "
        "[0, 1, \"keep\"], [1, 0, \"tmp\"], [2, 0, \"tmp\"]]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_NEAR(sg_q(env, 0), 1);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_ABSENT(sg_q(env, 0));
    CHECK_ABSENT(sg_q(env, 1));
    CHECK_NEAR(sg_q(env, 2), 3); /* "tmpx" is not below "tmp" */
    CHECK_NEAR(sg_q(env, 3), 1);
    CHECK_ABSENT(sg_q(env, 4));
    CHECK_NEAR(sg_q(env, 5), 1);
    const int32_t *deg = sg_obs(env, 0, "probe_degree");
    CHECK_EQ_INT(deg[1], 1); /* 1 -> 0 lost its only attribute: the edge is gone */
    polis_env_destroy(env);
}

/* The clear rule visits only the edges carrying its family (graph.c's watch list, in no
 * order), and removes them in the order of a walk of the agents' out-lists: sources
 * ascending, each out-list in creation order, whenever the attribute arrived. */
static void test_clear_order(void)
{
    test_log log = {0};
    polis_env *env = sg_env(
        3, 100,
        "{\"social\": {\"relations\": [{\"attributes\": {\"keep\": 1}, \"players\": [{\"from\": 0, "
        "\"to\": 1}]}, {\"attributes\": {\"tmp\": {\"a\": 1}}, \"players\": [{\"from\": 2, \"to\": "
        "0}]}, {\"attributes\": {\"tmp\": 1}, \"players\": [{\"from\": 0, \"to\": 2}]}, "
        "{\"attributes\": {\"tmp\": 2}, \"players\": [{\"from\": 1, \"to\": 2}]}]},"
        " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"tmp\"}]]}",
        "{\"log_events\": true, \"ops\": ["
        "{\"tick\": -1, \"op\": \"set\", \"from\": 0, \"to\": 1, \"attr\": \"tmp.x\", \"value\": "
        "1},"
        "{\"tick\": -1, \"op\": \"set\", \"from\": 2, \"to\": 1, \"attr\": \"tmp\", \"value\": "
        "3}]}",
        &log);
    CHECK(env != NULL);
    if (!env) return;
    log.text[0] = '\0';
    log.len = 0;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[social_probe] unset a0->a1 tmp.x=1\n"
                           "[social_probe] unset a0->a2 tmp=1\n"
                           "[social_probe] unset a1->a2 tmp=2\n"
                           "[social_probe] unset a2->a0 tmp.a=1\n"
                           "[social_probe] unset a2->a1 tmp=3\n");
    polis_env_destroy(env);
}

/* A split placed before a rule runs before it: the reward of the step that creates a group is
 * not shared yet; in the opposite order it is. */
static void test_rule_order(void)
{
    static const char *orders[2] = {
        "[[\"split_score_to_group\", {\"attribute\": \"score\"}], [\"merge_relation_to_group\", "
        "{\"condition_attr\": \"accept\", \"result_attr\": \"score\"}]]",
        "[[\"merge_relation_to_group\", {\"condition_attr\": \"accept\", \"result_attr\": "
        "\"score\"}], [\"split_score_to_group\", {\"attribute\": \"score\"}]]"};
    for (int k = 0; k < 2; k++) {
        char social[1024];
        snprintf(social, sizeof social, "{\"post_updates\": %s}", orders[k]);
        polis_env *env = sg_env(
            2, 100, social,
            "{\"ops\": [" ACCEPT_OPS(
                0, 1, 0.25, 0.75) ","
                                  "{\"tick\": 0, \"op\": \"reward\", \"agent\": 0, \"value\": 1},"
                                  "{\"tick\": 1, \"op\": \"reward\", \"agent\": 0, \"value\": 1}]}",
            NULL);
        CHECK(env != NULL);
        if (!env) return;
        const polis_io *io = polis_env_io(env);
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_NEAR(io->rewards[0], k == 0 ? 1.0 : 0.25);
        CHECK_NEAR(io->rewards[1], k == 0 ? 0.0 : 0.75);
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_NEAR(io->rewards[0], 0.25);
        CHECK_NEAR(io->rewards[1], 0.75);
        polis_env_destroy(env);
    }
}

int main(void)
{
    test_matching_parity();
    test_negotiation_trace();
    test_merge_cases();
    test_normalization_and_symmetrize();
    test_symmetrize_dict();
    test_clear();
    test_clear_order();
    test_rule_order();
    CHECK_DONE();
}
