/* Social actions: every family, its mask, gating (the Contract hook), illegal actions as
 * flagged no-ops, and the communication observation. */
#include "fixture.h"

static const char *FAMILIES =
    "{\"communication_length\": 2, \"social\": {\"groups\": [{}, {}]},"
    " \"pre_updates\": [\"@pre_updates\"],"
    " \"actions\": [{\"family\": \"communicate\", \"word\": 5},"
    "  {\"family\": \"share_map\"}, {\"family\": \"share_player\", \"self\": false},"
    "  {\"family\": \"switch_group\"},"
    "  {\"family\": \"choose_group\", \"name\": \"choose\", \"enabled\": false},"
    "  {\"family\": \"add_relation\", \"name\": \"befriend\", \"self\": false,"
    "   \"attributes\": {\"friend\": 1, \"trust\": {\"level\": 0.5}}},"
    "  {\"family\": \"remove_relation\", \"name\": \"unfriend\", \"attribute\": \"friend\","
    "   \"self\": false},"
    "  {\"family\": \"join_group\", \"name\": \"join\", \"attributes\": {\"score\": 1}},"
    "  {\"family\": \"quit_group\", \"name\": \"quit\", \"attribute\": \"score\"}]}";

static polis_env *families_env(const char *pre, const char *probe)
{
    static char buf[4096];
    const char *at = strstr(FAMILIES, "[\"@pre_updates\"]");
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - FAMILIES), FAMILIES, pre,
             at + strlen("[\"@pre_updates\"]"));
    return sg_env(3, 100, buf, probe, NULL);
}

static void test_layout_and_reset_masks(void)
{
    polis_env *env = families_env("[]", "{}");
    CHECK(env != NULL);
    if (!env) return;
    /* noop + communicate 3 + share_map 3 + share_player 3 + switch 2 + choose 2 + befriend 3 +
     * unfriend 3 + join 2 + quit 2 */
    CHECK_EQ_INT(polis_env_n_actions(env), 24);
    CHECK_EQ_INT(polis_env_action_id(env, "communicate_0"), 1);
    CHECK_EQ_INT(polis_env_action_id(env, "share_map_0"), 4);
    CHECK_EQ_INT(polis_env_action_id(env, "switch_group_1"), 11);
    CHECK_EQ_INT(polis_env_action_id(env, "quit_1"), 23);
    CHECK(sg_legal(env, 0, "communicate_0")); /* AdaSociety lets an agent target itself */
    CHECK(sg_legal(env, 0, "share_map_0"));
    CHECK(!sg_legal(env, 0, "share_player_0")); /* "self": false */
    CHECK(sg_legal(env, 0, "share_player_1"));
    CHECK(!sg_legal(env, 0, "befriend_0"));
    CHECK(sg_legal(env, 0, "befriend_2"));
    CHECK(!sg_legal(env, 0, "unfriend_1")); /* nothing to remove */
    CHECK(sg_legal(env, 0, "switch_group_1"));
    CHECK(!sg_legal(env, 0, "choose_0")); /* "enabled": false */
    CHECK(sg_legal(env, 0, "join_0"));
    CHECK(!sg_legal(env, 0, "quit_0"));
    CHECK(sg_has_obs(env, "player_id"));
    CHECK(sg_has_obs(env, "communication"));
    CHECK(!sg_has_obs(env, "social_state"));
    polis_env_destroy(env);
}

static void test_relations(void)
{
    polis_env *env = families_env(
        "[]", "{\"watch\": 0, \"queries\": [[2, 0, \"friend\"], [2, 0, \"trust.level\"],"
              "[0, 1, \"communication.0\"], [0, 1, \"communication.1\"],"
              "[1, 0, \"sharing.Map\"]]}");
    CHECK(env != NULL);
    if (!env) return;
    const char *s1[] = {"communicate_1", "share_map_0", "befriend_0"};
    CHECK_EQ_INT(sg_step(env, 3, s1), POLIS_OK);
    CHECK_NEAR(sg_q(env, 0), 1);
    CHECK_NEAR(sg_q(env, 1), 0.5);
    CHECK_NEAR(sg_q(env, 2), 5);
    CHECK_NEAR(sg_q(env, 3), 5);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "1: 1");
    const int8_t *comm = sg_obs(env, 1, "communication"); /* [3][2] rows by sender */
    CHECK_EQ_INT(comm[0], 5);
    CHECK_EQ_INT(comm[1], 5);
    for (int i = 2; i < 6; i++) CHECK_EQ_INT(comm[i], 0);
    CHECK(sg_legal(env, 2, "unfriend_0"));
    CHECK(!sg_legal(env, 2, "unfriend_1"));

    /* toggling again stops the sharing; unfriend removes "friend" only */
    const char *s2[] = {NULL, "share_map_0", "unfriend_0"};
    CHECK_EQ_INT(sg_step(env, 3, s2), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "0:");
    CHECK_ABSENT(sg_q(env, 0));
    CHECK_NEAR(sg_q(env, 1), 0.5);
    CHECK_ABSENT(sg_q(env, 4));
    CHECK(!sg_legal(env, 2, "unfriend_0"));
    /* without a clearing rule the message stays */
    CHECK_NEAR(sg_q(env, 2), 5);
    polis_env_destroy(env);
}

static void test_communication_cleared(void)
{
    polis_env *env = families_env(
        "[{\"function\": \"clear_temporary_relation\", \"kwargs\": {\"attr\": \"communication\"}}]",
        "{\"queries\": [[0, 0, \"communication.0\"]]}");
    CHECK(env != NULL);
    if (!env) return;
    const char *s1[] = {"communicate_0", "communicate_0", "communicate_0"};
    CHECK_EQ_INT(sg_step(env, 3, s1), POLIS_OK);
    const int8_t *comm = sg_obs(env, 0, "communication");
    CHECK_EQ_INT(comm[0], 5); /* from itself */
    CHECK_EQ_INT(comm[2], 5); /* from 1 */
    CHECK_EQ_INT(comm[4], 5); /* from 2 */
    CHECK_NEAR(sg_q(env, 0), 5);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* pre_updates clear last step's messages */
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(comm[i], 0);
    CHECK_ABSENT(sg_q(env, 0));
    polis_env_destroy(env);
}

/* Words are rounded half away from zero and saturated to int8; a message whose edge carries
 * only some of the words shows the others as 0; words land in the sender's row whatever
 * the other attributes of its edge. */
static void test_communication_words(void)
{
    polis_env *env = sg_env(
        3, 100, "{\"communication_length\": 8}",
        "{\"ops\": [{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"x\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"communicate\", \"from\": 1, \"to\": 0, \"words\": [2.5, -0.5, "
        "300, -1000, 0.49999999999999994, -2.5, 126.5, -127.49]},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"communication.6\", "
        "\"value\": -7.5},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"communication.1\", "
        "\"value\": 1.5}]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    const int8_t *comm = sg_obs(env, 0, "communication");               /* [3][8] rows by sender */
    static const int8_t want[24] = {0, 0,  0,   0,    0, 0,  0,   0,    /* from 0: none */
                                    3, -1, 127, -128, 0, -3, 127, -127, /* from 1 */
                                    0, 2,  0,   0,    0, 0,  -8,  0};   /* from 2 */
    for (int i = 0; i < 24; i++) CHECK_EQ_INT(comm[i], want[i]);
    polis_env_destroy(env);
}

static void test_groups(void)
{
    polis_env *env = families_env(
        "[]", "{\"watch\": 0, \"watch_group\": 0, \"queries\": [[3, 0, \"division_weight\"],"
              "[4, 0, \"division_weight\"], [3, 1, \"score\"]],"
              "\"ops\": [{\"tick\": 3, \"op\": \"allow\", \"agent\": 2, \"family\": 4,"
              " \"value\": 1},"
              "{\"tick\": 5, \"op\": \"group_delete\", \"group\": 1}]}");
    CHECK(env != NULL);
    if (!env) return;
    const char *s1[] = {"switch_group_0", "join_0"};
    CHECK_EQ_INT(sg_step(env, 2, s1), POLIS_OK); /* tick 0 */
    CHECK_NEAR(sg_q(env, 0), 1);
    CHECK_NEAR(sg_q(env, 2), 1);
    CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 1");
    CHECK(sg_legal(env, 1, "quit_0"));
    CHECK(!sg_legal(env, 1, "quit_1"));

    /* switching quits the old group (its only attribute: the membership goes) */
    const char *s2[] = {"switch_group_1", "quit_0"};
    CHECK_EQ_INT(sg_step(env, 2, s2), POLIS_OK); /* tick 1 */
    CHECK_ABSENT(sg_q(env, 0));
    CHECK_NEAR(sg_q(env, 1), 1);
    CHECK_ABSENT(sg_q(env, 2));
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 1");
    CHECK_EQ_STR(sg_list(env, "probe_members"), "0:");

    /* a masked action is a no-op flagged illegal */
    const char *s3[] = {"choose_0", "quit_0"};
    CHECK_EQ_INT(sg_step(env, 2, s3), POLIS_OK); /* tick 2 */
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(io->illegal[1], 1);
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 1");

    /* the gate opens for agent 2 only (the probe calls allow at the start of tick 3) */
    CHECK(!sg_legal(env, 2, "choose_0"));
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* tick 3 */
    CHECK(sg_legal(env, 2, "choose_0"));
    CHECK(sg_legal(env, 2, "choose_1"));
    CHECK(!sg_legal(env, 0, "choose_0"));
    const char *s4[] = {NULL, NULL, "choose_0"};
    CHECK_EQ_INT(sg_step(env, 3, s4), POLIS_OK); /* tick 4 */
    CHECK_EQ_INT(io->illegal[2], 0);
    CHECK_EQ_STR(sg_list(env, "probe_members"), "1: 2");

    /* a deleted group is masked for every group family */
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* tick 5: group 1 deleted */
    CHECK(!sg_legal(env, 0, "switch_group_1"));
    CHECK(!sg_legal(env, 2, "choose_1"));
    CHECK(!sg_legal(env, 1, "join_1"));
    CHECK(sg_legal(env, 1, "join_0"));
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "0:");
    /* gates go back to "enabled" at reset */
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    CHECK(!sg_legal(env, 2, "choose_0"));
    polis_env_destroy(env);
}

/* switch_group leaves every group joined with the weight attribute, including ones from the
 * initial structure (AdaSociety's agent only remembered the group it chose itself). */
static void test_switch_leaves_all(void)
{
    polis_env *env = sg_env(
        2, 100,
        "{\"social\": {\"groups\": [{\"players\": {\"ids\": [0], \"attributes\": "
        "{\"division_weight\": [0.5], \"score\": [2]}}}, {\"players\": {\"ids\": [0], "
        "\"attributes\": {\"division_weight\": [0.5]}}}, {}]},"
        " \"actions\": [{\"family\": \"switch_group\"}]}",
        "{\"watch\": 0, \"queries\": [[2, 0, \"score\"], [4, 0, \"division_weight\"]]}", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "2: 0 1");
    const char *s[] = {"switch_group_2"};
    CHECK_EQ_INT(sg_step(env, 1, s), POLIS_OK);
    /* group 0 keeps the membership through "score"; group 1's edge is gone */
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "2: 0 2");
    CHECK_NEAR(sg_q(env, 0), 2);
    CHECK_NEAR(sg_q(env, 1), 1);
    polis_env_destroy(env);
}

int main(void)
{
    test_layout_and_reset_masks();
    test_relations();
    test_communication_cleared();
    test_communication_words();
    test_groups();
    test_switch_leaves_all();
    CHECK_DONE();
}
