/* Bad parameters are refused at create with their full JSON path; capacities are checked at
 * create for the structures and at run time for what actions and services add, with a
 * clear error, never a silent drop. */
#include "fixture.h"

#define PRE "<string>: plugins[0]: plugin \"social\" init failed: "
#define P "plugins[0].params."

typedef struct bad_case {
    const char *social;
    const char *message;
} bad_case;

static const bad_case CASES[] = {
    {"{\"social\": {\"relations\": [{\"players\": [{\"from\": 0, \"to\": 4}]}]}}",
     PRE "<string>: " P "social.relations[0].players[0].to: expected integer in [0, 3], got 4"},
    {"{\"social\": {\"relations\": [{\"player\": []}]}}",
     PRE "social: " P "social.relations[0].player: unknown key (did you mean \"players\"? "
         "expected one of name, "
         "attributes, players, requests, offers)"},
    {"{\"social\": {\"relations\": [{\"name\": \"x\"}]}}",
     PRE "social: " P "social.relations[0].players: expected an array, got missing"},
    {"{\"social\": {\"groups\": [{\"players\": {\"ids\": [0, 1], \"attributes\": {\"w\": [1]}}}]}}",
     PRE "social: " P "social.groups[0].players.attributes.w: expected 2 values (one per id in "
         "players.ids), got 1"},
    {"{\"social\": {\"groups\": [{\"players\": {\"ids\": [0, 9]}}]}}",
     PRE "<string>: " P "social.groups[0].players.ids[1]: expected integer in [0, 3], got 9"},
    {"{\"max_groups\": 1, \"social\": {\"groups\": [{}, {}]}}",
     PRE "social: " P "social.groups[1]: group 1 does not fit in max_groups (1) (raise "
         "\"max_groups\")"},
    {"{\"social\": []}", PRE "social: " P "social: expected an object, got an array"},
    {"{\"social\": {\"relation\": []}}",
     PRE "social: " P "social.relation: unknown key (did you mean \"relations\"? expected one of "
         "relations, groups)"},
    {"{\"social_schedule\": {\"ten\": {}}}",
     PRE "social: " P "social_schedule.ten: schedule key \"ten\" is not a step number (an "
         "integer in [0, 1000000000])"},
    {"{\"social_schedule\": {\"30\": {}, \"030\": {}}}",
     PRE "social: " P "social_schedule.030: step 30 is scheduled twice"},
    {"{\"social_schedule\": {\"5\": {\"groups\": [{\"players\": {\"ids\": [7]}}]}}}",
     PRE "<string>: " P "social_schedule.5.groups[0].players.ids[0]: expected integer in [0, 3], "
         "got 7"},
    {"{\"post_updates\": [\"nope\"]}",
     PRE "social: " P "post_updates[0]: unknown rule function \"nope\" (expected one of "
         "clear_temporary_relation, split_score_to_group, matching_edge, "
         "merge_relation_to_group, normalization, symmetrize_relation)"},
    {"{\"post_updates\": [\"relation_switch\"]}",
     PRE "social: " P "post_updates[0]: \"relation_switch\" is broken in AdaSociety (it crashes "
         "or never fires) and is not provided"},
    {"{\"post_updates\": [\"normalization\"]}",
     PRE "social: " P "post_updates[0]: normalization needs the argument \"attr\""},
    {"{\"post_updates\": [{\"function\": \"normalization\"}]}",
     PRE "social: " P "post_updates[0].kwargs: normalization needs the argument \"attr\""},
    {"{\"post_updates\": [{\"function\": \"normalization\", \"kwargs\": {\"attr\": \"w\", "
     "\"x\": 1}}]}",
     PRE "social: " P "post_updates[0].kwargs.x: unknown key (expected one of attr)"},
    {"{\"post_updates\": [{\"function\": \"normalization\", \"kwargs\": {\"attr\": 3}}]}",
     PRE "social: " P "post_updates[0].kwargs.attr: expected a string, got a number"},
    {"{\"pre_updates\": [[\"split_score_to_group\", {\"attribute\": \"w\"}]]}",
     PRE "social: " P "pre_updates[0][0]: split_score_to_group shares the step's reward, which "
         "exists only after the actions: put it in post_updates"},
    {"{\"post_updates\": [3]}",
     PRE "social: " P "post_updates[0]: expected a function name, {\"function\", \"kwargs\"} "
         "or [function, kwargs], got a number"},
    {"{\"post_updates\": [[\"normalization\"]]}",
     PRE "social: " P "post_updates[0]: expected [function, kwargs], got 1 elements"},
    {"{\"post_updates\": {}}", PRE "social: " P "post_updates: expected an array, got an object"},
    {"{\"post_updates\": [{\"function\": \"matching_edge\", \"kwargs\": {\"condition_attr\": "
     "\"m\", \"result_attr1\": 0, \"result_attr2\": {}}}]}",
     PRE "social: " P "post_updates[0].kwargs.result_attr1: expected an object, got a number"},
    {"{\"actions\": [{\"family\": \"dance\"}]}",
     PRE "social: " P "actions[0].family: unknown family \"dance\" (expected one of "
         "communicate, share_map, share_player, switch_group, choose_group, add_relation, "
         "remove_relation, join_group, quit_group)"},
    {"{\"actions\": [{\"family\": \"share_map\"}, {\"family\": \"share_map\"}]}",
     PRE "social: " P "actions[1].family: family name \"share_map\" is already used by "
         "actions[0] (give this one a different \"name\")"},
    {"{\"actions\": [{\"family\": \"share_map\", \"name\": \"a b\"}]}",
     PRE "social: " P "actions[0].name: family name \"a b\" must be 1 to 40 characters from "
         "letters, digits, _ . -"},
    {"{\"actions\": [{\"family\": \"share_map\", \"attribute\": \"x\"}]}",
     PRE "social: " P "actions[0].attribute: unknown key (expected one of family, name, "
         "enabled, self)"},
    {"{\"actions\": [{\"family\": \"remove_relation\"}]}",
     PRE "social: " P "actions[0]: remove_relation needs \"attribute\" (the attribute it "
         "removes)"},
    {"{\"actions\": [{\"family\": \"add_relation\"}]}",
     PRE "social: " P "actions[0]: add_relation needs \"attributes\" (the attributes it sets)"},
    {"{\"actions\": [{\"family\": \"communicate\"}]}",
     PRE "social: " P "actions[0].family: communicate needs communication_length >= 1 (the "
         "words of a message)"},
    {"{\"actions\": [{\"family\": \"join_group\"}]}",
     PRE "social: " P "actions[0].family: join_group acts on groups, but max_groups is 0"},
    {"{\"actions\": [{\"family\": \"share_map\", \"enabled\": 1}]}",
     PRE "<string>: " P "actions[0].enabled: expected true or false, got 1"},
    {"{\"social\": {\"relations\": [{\"attributes\": {\"abcdefghijabcdefghijabcdefghijabcdefghij"
     "abcdefghijabcdefghijabcd\": 1}, \"players\": []}]}}",
     PRE "social: " P "social.relations[0].attributes.abcdefghijabcdefghijabcdefghijabcdefghij"
         "abcdefghijabcdefghijabcd: attribute name \"abcdefghijabcdefghijabcdefghijabcdefghij"
         "abcdefghijabcdefghijabcd\" is longer than 63 characters"},
    {"{\"social\": {\"relations\": [{\"attributes\": {\"a b\": 1}, \"players\": []}]}}",
     PRE "social: " P "social.relations[0].attributes[\"a b\"]: attribute name \"a b\" has a "
         "space, a quote, a backslash or a non-ASCII character"},
    {"{\"social\": {\"relations\": [{\"attributes\": {\"a\": {\"b\": null}}, \"players\": []}]}}",
     PRE "social: " P "social.relations[0].attributes.a.b: null is not an attribute value"},
    {"{\"max_edges\": 1, \"social\": {\"relations\": [{\"attributes\": {\"x\": 1}, \"players\": "
     "[{\"from\": 0, \"to\": 1}, {\"from\": 1, \"to\": 0}]}]}}",
     PRE "social: " P "social.relations[0].players[1]: the structure needs more than max_edges "
         "(1) edges (raise \"max_edges\")"},
    {"{\"max_edge_attrs\": 1, \"social\": {\"relations\": [{\"attributes\": {\"x\": 1, \"y\": 2}, "
     "\"players\": [{\"from\": 0, \"to\": 1}]}]}}",
     PRE "social: " P "social.relations[0].players[0]: the edge agent 0 -> agent 1 needs more "
         "than max_edge_attrs (1) attributes (raise \"max_edge_attrs\")"},
    {"{\"max_edge_attrs\": 1, \"social\": {\"groups\": [{\"players\": {\"ids\": [2], "
     "\"attributes\": {\"x\": [1], \"y\": [{\"z\": 1}]}}}]}}",
     PRE "social: " P "social.groups[0].players.attributes.y[0].z: the edge group 0 -> agent 2 "
         "needs more than max_edge_attrs (1) attributes (raise \"max_edge_attrs\")"},
    {"{\"max_attrs\": 16, \"social\": {\"relations\": [{\"attributes\": {\"a0\": 1, \"a1\": 1, "
     "\"a2\": 1, \"a3\": 1, \"a4\": 1, \"a5\": 1, \"a6\": 1, \"a7\": 1}, \"players\": []}]}}",
     PRE "social: " P "social.relations[0].attributes.a7: more than max_attrs (16) attribute "
         "names (raise \"max_attrs\")"},
};

static void test_bad_parameters(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const char *got = sg_error(4, CASES[i].social);
        if (strcmp(got, CASES[i].message) != 0) fprintf(stderr, "case %zu:\n", i);
        CHECK_EQ_STR(got, CASES[i].message);
    }
    /* more families than gate bits */
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "{\"actions\": [");
    for (int i = 0; i < 65; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "%s{\"family\": \"share_map\", \"name\": "
                      "\"f%d\"}",
                      i ? ", " : "", i);
    snprintf(buf + n, sizeof buf - (size_t)n, "]}");
    CHECK_EQ_STR(sg_error(2, buf), PRE "social: " P "actions: at most 64 families, got 65");
    /* the kernel checks the parameter table itself */
    CHECK_CONTAINS(sg_error(2, "{\"max_group\": 3}"),
                   "plugins[0].params.max_group: unknown key (expected one of max_groups");
    CHECK_CONTAINS(sg_error(2, "{\"max_groups\": -2}"),
                   "plugins[0].params.max_groups: expected integer in [-1, 65536], got -2");
}

/* The same AdaSociety shapes pass through unchanged: every form of the rule lists, comment
 * keys, extra relation keys of demo.json, an empty schedule snapshot. */
static void test_accepted_shapes(void)
{
    polis_env *env =
        sg_env(2, 10,
               "{\"_comment\": \"x\", \"social\": {\"relations\": [], \"groups\": []},"
               " \"social_schedule\": {\"3\": {}, \"99\": {\"relations\": []}},"
               " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"communication\"}]],"
               " \"post_updates\": [{\"function\": \"symmetrize_relation\", \"kwargs\": {\"attr\": "
               "\"a\", \"_note\": 1}}, [\"normalization\", {\"attr\": \"score\"}]]}",
               NULL, NULL);
    CHECK(env != NULL);
    if (env) polis_env_destroy(env);
}

/* Runtime capacities: the step fails with the reason, the env needs a reset, and the reset
 * restores the initial graph. */
static void test_runtime_limits(void)
{
    polis_env *env =
        sg_env(3, 100,
               "{\"max_edges\": 2, \"actions\": [{\"family\": \"add_relation\", \"name\": "
               "\"link\", \"attributes\": {\"x\": 1}}]}",
               NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        const char *s[] = {"link_1", "link_2", "link_0"};
        const polis_io *io = polis_env_io(env);
        for (int a = 0; a < 3; a++) io->actions[a] = sg_action(env, s[a]);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_LIMIT);
        CHECK_EQ_STR(polis_env_error(env),
                     "social: max_edges (2) reached: cannot add the edge agent 2 -> agent 0 "
                     "(raise \"max_edges\") [action link_0, agent 2 (agent_2), tick 0]");
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK(sg_legal(env, 0, "link_1"));
        polis_env_destroy(env);
    }
    env = sg_env(2, 100, "{\"max_groups\": 1, \"social\": {\"groups\": [{}]}}",
                 "{\"ops\": [{\"tick\": 1, \"op\": \"group_create\"}]}", NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_LIMIT);
        CHECK_EQ_STR(polis_env_error(env),
                     "social_probe: max_groups (1) reached: group ids are not reused until the "
                     "graph is rebuilt (raise \"max_groups\") [hook begin, tick 1]");
        polis_env_destroy(env);
    }
    env = sg_env(2, 100, "{\"max_edge_attrs\": 1}",
                 "{\"ops\": [{\"tick\": 0, \"op\": \"set\", \"from\": 0, \"to\": 1, \"attr\": "
                 "\"x\", \"value\": 1}, {\"tick\": 0, \"op\": \"set\", \"from\": 0, \"to\": 1, "
                 "\"attr\": \"y\", \"value\": 1}]}",
                 NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_LIMIT);
        CHECK_EQ_STR(polis_env_error(env),
                     "social_probe: the edge agent 0 -> agent 1 already has max_edge_attrs (1) "
                     "attributes; cannot add \"y\" (raise \"max_edge_attrs\") [hook begin, "
                     "tick 0]");
        polis_env_destroy(env);
    }
    /* service misuse is refused with the reason */
    env = sg_env(2, 100, "{\"max_groups\": 2, \"social\": {\"groups\": [{}]}}",
                 "{\"ops\": [{\"tick\": 0, \"op\": \"set\", \"from\": 3, \"to\": 1, \"attr\": "
                 "\"x\", \"value\": 1}]}",
                 NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
        CHECK_EQ_STR(polis_env_error(env),
                     "social_probe: set: group 1 does not exist [hook begin, tick 0]");
        polis_env_destroy(env);
    }
    env =
        sg_env(2, 100, "{}",
               "{\"ops\": [{\"tick\": 0, \"op\": \"communicate\", \"from\": 0, \"to\": 1}]}", NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
        CHECK_EQ_STR(polis_env_error(env),
                     "social_probe: communicate: agents 0 -> 1 with 0 words (communication_length "
                     "is 0) [hook begin, tick 0]");
        polis_env_destroy(env);
    }
}

/* A subscriber of a social event may not change the graph while the event is delivered; Lua
 * reads the graph and changes it through social's exports otherwise. */
static void test_lua_exports_and_guard(void)
{
    test_log log = {0};
    polis_options o = test_options(&log, NULL);
    o.base_dir = SOCIAL_SOURCE_DIR "/tests";
    const char *scn =
        "{\"agents\": 2, \"plugins\": [{\"name\": \"social\", \"params\": {\"actions\": "
        "[{\"family\": \"add_relation\", \"name\": \"link\", \"attributes\": {\"x\": 1}}]}}],"
        " \"scripts\": [\"guard.lua\"]}";
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_json(scn, strlen(scn), &o, &env, &err), POLIS_OK);
    if (!env) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const char *s[] = {"link_1"};
    CHECK_EQ_INT(sg_step(env, 1, s), POLIS_OK);
    CHECK_EQ_STR(log.text, "[guard] in the subscriber: set returned 6\n"
                           "[guard] in the hook: set returned 0, 0 -> 1 x = 1, y = 2\n");
    polis_env_destroy(env);
}

int main(void)
{
    test_bad_parameters();
    test_accepted_shapes();
    test_runtime_limits();
    test_lua_exports_and_guard();
    CHECK_DONE();
}
