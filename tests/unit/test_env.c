/* env.c: lifecycle states, action validation, masks and illegal flags, rewards with weights
 * and transforms, truncation, failure and recovery, hook order, agent order; what the
 * scenario loaded and errors set by libraries on the public API. */
#include "check.h"
#include "testutil.h"

static const char *PROBE3 = "{\"agents\": 3, \"max_steps\": 4, \"plugins\": [\"probe\"]}";

static const int32_t *probe_obs(polis_env *env, int32_t agent)
{
    const polis_io *io = polis_env_io(env);
    polis_obs_field f;
    polis_env_obs_field(env, 0, &f);
    return (const int32_t *)(io->obs + (size_t)agent * io->obs_size + f.offset);
}

static void lifecycle(void)
{
    test_log log = {0};
    polis_env *env = test_env(PROBE3, &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(io->n_agents, 3);
    CHECK_EQ_INT(io->n_actions, 3);
    CHECK_EQ_STR(polis_env_action_name(env, 0), "noop");
    CHECK_EQ_STR(polis_env_action_name(env, 1), "probe_act");
    CHECK_EQ_INT(polis_env_action_id(env, "probe_reject"), 2);
    CHECK_EQ_INT(polis_env_action_id(env, "nope"), -1);
    CHECK_EQ_STR(polis_env_agent_name(env, 2), "agent_2");
    CHECK(polis_env_agent_name(env, 3) == NULL);
    CHECK_EQ_INT(io->obs_size, 16); /* 3 x i32 padded to 8 */

    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "step: call reset before the first step");

    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    const uint8_t masks[9] = {1, 1, 1, 1, 0, 1, 1, 1, 1};
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    CHECK_EQ_INT(probe_obs(env, 1)[0], 1);
    CHECK_EQ_INT(probe_obs(env, 1)[1], 0);
    CHECK_EQ_INT(probe_obs(env, 1)[2], 1);

    /* agent 1's action is masked; agent 2's is rejected by its handler. */
    io->actions[0] = 1;
    io->actions[1] = 1;
    io->actions[2] = 2;
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] act agent=0 arg=7\n");
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK_EQ_INT(io->illegal[1], 1);
    CHECK_EQ_INT(io->illegal[2], 1);
    /* probe_r = a+1, then probe_double (priority -10), then probe_add (10) */
    CHECK(io->rewards[0] == 3.0f && io->rewards[1] == 5.0f && io->rewards[2] == 7.0f);
    CHECK_EQ_INT(polis_env_n_reward_fns(env), 1);
    CHECK(polis_env_reward_components(env)[2] == 3.0f);
    CHECK_EQ_INT(probe_obs(env, 2)[1], 1);
    CHECK_EQ_INT(polis_env_tick(env), 1);

    /* An out-of-range action is refused before anything runs; the env keeps going. */
    io->actions[1] = 3;
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env),
                 "step: agent 1 (agent_1): action 3 is outside [0, 3) at tick 1");
    io->actions[1] = -1;
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_ACTION);
    CHECK_EQ_INT(polis_env_tick(env), 1);
    io->actions[0] = io->actions[1] = io->actions[2] = 0;
    for (int t = 1; t < 4; t++) {
        CHECK(!polis_env_done(env));
        CHECK_EQ_INT(io->truncations[0], 0);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK_EQ_INT(polis_env_tick(env), 4);
    CHECK(polis_env_done(env));
    for (int a = 0; a < 3; a++) {
        CHECK_EQ_INT(io->truncations[a], 1);
        CHECK_EQ_INT(io->terminations[a], 0);
        /* a finished agent can only noop */
        CHECK_EQ_INT(io->masks[a * 3 + 0], 1);
        CHECK_EQ_INT(io->masks[a * 3 + 1], 0);
    }
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "step: the episode is over (tick 4); call reset");
    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    CHECK_EQ_INT(probe_obs(env, 0)[2], 2); /* episode counter */
    CHECK(!polis_env_done(env));
    polis_env_destroy(env);
}

static void weights(void)
{
    polis_env *env = test_env("{\"agents\": 3, \"plugins\": [\"probe\"], "
                              "\"rewards\": {\"probe_r\": 0.5}}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    CHECK(io->rewards[0] == 2.0f && io->rewards[1] == 3.0f && io->rewards[2] == 4.0f);
    polis_env_destroy(env);
    CHECK_EQ_STR(test_env_error("{\"agents\": 1, \"plugins\": [\"probe\"], "
                                "\"rewards\": {\"nope\": 1}}"),
                 "<string>: rewards.nope: no reward function named \"nope\" (registered: "
                 "probe_r)");
}

static void failures(void)
{
    /* A hook failing at tick 2: the message names plugin, hook and tick; the env then needs
     * a reset, and the reset works. */
    polis_env *env = test_env("{\"agents\": 2, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"fail_hook\"}}]}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "probe: deliberate failure [hook post, tick 2]");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "step: the previous step or reset failed; call reset");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    polis_env_destroy(env);

    env = test_env("{\"agents\": 2, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"fail_action\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_env_io(env)->actions[0] = 1;
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "probe: action refuses agent 0 [action probe_act, agent 0 (agent_0), tick 0]");
    polis_env_destroy(env);

    CHECK_EQ_STR(test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                                "\"params\": {\"mode\": \"dup_action\"}}]}"),
                 "<string>: plugins[0]: plugin \"probe\" init failed: probe: action "
                 "\"probe_act\" is already registered by probe");
    CHECK_EQ_STR(test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                                "\"params\": {\"mode\": \"bad_sub\"}}]}"),
                 "probe: subscribes to event type \"no.such.event\", which no plugin or script "
                 "registers");
}

static void phases(void)
{
    test_log log = {0};
    polis_env *env = test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"trace\"}}]}",
                              &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] hook reset/-3\n[probe] hook reset/0\n"
                           "[probe] entities 1 2 3\n"
                           "[probe] hook observe/-3\n[probe] hook observe/0\n");
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] hook begin/-3\n[probe] hook begin/0\n"
                           "[probe] hook resolve/-3\n[probe] hook resolve/0\n"
                           "[probe] hook world/-3\n[probe] hook world/0\n"
                           "[probe] hook post/-3\n[probe] hook post/0\n"
                           "[probe] hook end/-3\n[probe] hook end/0\n"
                           "[probe] hook observe/-3\n[probe] hook observe/0\n");
    polis_env_destroy(env);
}

static void agent_order(void)
{
    test_log log = {0};
    polis_env *env = test_env("{\"agents\": 5, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"order\"}}]}",
                              &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    for (int a = 0; a < 5; a++) io->actions[a] = 1;
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] act agent=4 arg=7\n[probe] act agent=2 arg=7\n"
                           "[probe] act agent=0 arg=7\n");
    polis_env_destroy(env);

    /* Registration in start() is still allowed. */
    env = test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"late_register\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_action_id(env, "late"), 3);
        polis_env_destroy(env);
    }
}

static void mask_filters(void)
{
    polis_env *env = test_env("{\"agents\": 3, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"mask_filter\"}}]}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    /* agent 0: everything cleared by the filter but noop; agents 1, 2 as the legality says */
    const uint8_t masks[9] = {1, 0, 0, 1, 0, 1, 1, 1, 1};
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    /* a filtered action is illegal when sent */
    io->actions[0] = 1;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 1);
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    polis_env_destroy(env);
}

/* Each {mode, message}: the probe plugin in that mode fails its init with that message. */
static void probe_init_errors(const char *const (*errs)[2], size_t n)
{
    const char *pre = "<string>: plugins[0]: plugin \"probe\" init failed: probe: ";
    for (size_t i = 0; i < n; i++) {
        char json[160], want[320];
        snprintf(json, sizeof json,
                 "{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                 "\"params\": {\"mode\": \"%s\"}}]}",
                 errs[i][0]);
        snprintf(want, sizeof want, "%s%s", pre, errs[i][1]);
        CHECK_EQ_STR(test_env_error(json), want);
    }
}

/* host->action_family: consecutive ids and "<prefix>_<i>" names, masks from one row
 * writer per family (then the filters), dispatch with the index, registration errors. */
static void action_families(void)
{
    test_log log = {0};
    test_alloc al = {0};
    polis_env *env = test_env("{\"agents\": 3, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"family\"}}]}",
                              &log, &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_CONTAINS(log.text, "[probe] family pf first=3\n[probe] family pn first=7\n");
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(io->n_actions, 9);
    const char *names[9] = {"noop", "probe_act", "probe_reject", "pf_0", "pf_1",
                            "pf_2", "pf_3",      "pn_0",         "pn_1"};
    for (int32_t k = 0; k < 9; k++) CHECK_EQ_STR(polis_env_action_name(env, k), names[k]);
    CHECK_EQ_INT(polis_env_action_id(env, "pf_3"), 6);
    char *desc = polis_env_describe_json(env);
    CHECK(desc != NULL);
    if (desc) {
        CHECK_CONTAINS(desc, "\"pf target 2\"");
        CHECK_CONTAINS(desc, "\"plain\"");
        polis_free(desc);
    }
    int32_t parsed = -1;
    CHECK_EQ_INT(polis_env_parse_action(env, 0, " pf_1 ", &parsed), POLIS_OK);
    CHECK_EQ_INT(parsed, 4);

    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    /* rows: noop, probe_act (even agents), probe_reject, pf (agent + i even; pf_0 filtered
     * away for agent 2), pn (no row writer: legal) */
    const uint8_t masks[27] = {1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1,
                               0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1};
    for (int i = 0; i < 27; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    long before = al.calls;
    io->actions[0] = 8; /* pn_1 */
    io->actions[1] = 6; /* pf_3 */
    io->actions[2] = 3; /* pf_0, masked by the filter */
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] fam pn agent=0 index=1\n[probe] fam pf agent=1 index=3\n");
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK_EQ_INT(io->illegal[1], 0);
    CHECK_EQ_INT(io->illegal[2], 1);
    for (int i = 0; i < 27; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    for (int t = 0; t < 50; t++) {
        for (int32_t a = 0; a < 3; a++) io->actions[a] = (int32_t)(3 + (t + a) % 6);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK_EQ_INT(al.calls - before, 0); /* no allocation in step */
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);

    static const char *const errs[][2] = {
        {"fam_zero", "action_family pf: count 0 is not positive"},
        {"fam_nohandler", "action_family pf: handler is NULL"},
        {"fam_null", "action_family: definition is NULL"},
        {"fam_clash", "action \"pf_2\" is already registered by probe"},
        {"fam_badname", "action family name \"p f\" has a character that is not allowed at 1 "
                        "(use letters, digits and punctuation without spaces or quotes)"},
    };
    probe_init_errors(errs, sizeof errs / sizeof errs[0]);
}

/* The "actions" host API's legality groups: one row call per agent instead of one legality
 * call per member, the same masks, dispatch unchanged, registration errors. (The society
 * plugin's produce/pick/dump group runs in every Exploration test; a member whose legality a
 * scenario replaces is in test_swap.c.) */
static void legality_groups(void)
{
    test_log log = {0};
    test_alloc al = {0};
    polis_env *env = test_env("{\"agents\": 3, \"plugins\": [{\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"group\"}}]}",
                              &log, &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_CONTAINS(log.text, "[probe] group pg first=3\n");
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(io->n_actions, 7);
    CHECK_EQ_STR(polis_env_action_name(env, 5), "pg_c");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    /* noop, probe_act (even agents), probe_reject, pg_a..pg_d (agent + i even; pg_c always) */
    const uint8_t masks[21] = {1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0};
    for (int i = 0; i < 21; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    io->actions[0] = 4; /* pg_b: illegal for agent 0 */
    io->actions[1] = 4;
    io->actions[2] = 6; /* pg_d: illegal for agent 2 */
    test_log_clear(&log);
    long before = al.calls;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    /* one row call per agent at the reset, no member's own legality function */
    CHECK_EQ_STR(log.text, "[probe] pg agent=1 arg=1\n[probe] group rows=3 legal=0\n");
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(io->illegal[1], 0);
    CHECK_EQ_INT(io->illegal[2], 1);
    for (int i = 0; i < 21; i++) CHECK_EQ_INT(io->masks[i], masks[i]);
    for (int t = 0; t < 20; t++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(al.calls - before, 0); /* no allocation in step */
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);

    static const char *const errs[][2] = {
        {"grp_null", "legal_rows: the row function is NULL"},
        {"grp_zero", "legal_rows: actions 3..2: expected count >= 1 and ids in 0..6"},
        {"grp_range", "legal_rows: actions 3..7: expected count >= 1 and ids in 0..6"},
        {"grp_huge", "legal_rows: actions 3..2147483649: expected count >= 1 and ids in 0..6"},
        {"grp_noop", "legal_rows: action noop (0) is registered by polis, not by this plugin"},
        {"grp_twice", "legal_rows: action pg_b (4) is already in a legality group"},
        {"grp_family", "legal_rows: action pf_0 (7) belongs to the action family pf_0..pf_1, "
                       "whose mask comes from its own row function"},
    };
    probe_init_errors(errs, sizeof errs / sizeof errs[0]);
    /* after creation: refused, and the reset fails naming it */
    env = test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"grp_late\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_ERR_STATE);
    CHECK_CONTAINS(polis_env_error(env),
                   "legal_rows: registration is closed once the env is created");
    polis_env_destroy(env);
}

static void api_misuse(void)
{
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_json(NULL, 0, NULL, &env, &err), POLIS_ERR_INVALID);
    CHECK(env == NULL);
    CHECK_EQ_INT(polis_env_create_file("/nonexistent/scenario.json", NULL, &env, &err),
                 POLIS_ERR_IO);
    CHECK_EQ_STR(err.message, "cannot read /nonexistent/scenario.json: No such file or directory");
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = 3;
    CHECK_EQ_INT(polis_env_create_json("{}", 2, &o, &env, &err), POLIS_ERR_INVALID);
    CHECK_CONTAINS(err.message, "polis_options.struct_size is 3");
    CHECK_EQ_INT(polis_env_reset(NULL, 0), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_step(NULL), POLIS_ERR_INVALID);
    polis_env_destroy(NULL);
    CHECK_EQ_STR(polis_status_str(POLIS_ERR_CONFIG), "config error");
    CHECK_EQ_STR(polis_version(), POLIS_VERSION_STRING);
}

/* What the scenario loaded (polis_env_n_plugins, polis_env_plugin: what a recording's header
 * lists), and errors reported by a library on the public API (polis_env_set_error). */
static void loaded_and_library_errors(void)
{
    polis_env *env = test_env("{\"agents\": 2, \"plugins\": [\"probe\"],"
                              " \"scripts\": [\"scenarios/lua_views.lua\"]}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_plugins(env), 2);
    polis_plugin_info p;
    CHECK_EQ_INT(polis_env_plugin(env, 0, &p), POLIS_OK);
    CHECK_EQ_STR(p.name, "probe");
    CHECK_EQ_STR(p.version, "0.0.1");
    CHECK_EQ_INT(p.kind, POLIS_PLUGIN_SO);
    CHECK_CONTAINS(p.path, "/probe.so");
    CHECK_EQ_INT(polis_env_plugin(env, 1, &p), POLIS_OK);
    CHECK_EQ_STR(p.name, "lua_views");
    CHECK_EQ_STR(p.version, "");
    CHECK_EQ_INT(p.kind, POLIS_PLUGIN_LUA);
    CHECK_CONTAINS(p.path, "scenarios/lua_views.lua");
    CHECK_EQ_INT(polis_env_plugin(env, 2, &p), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_plugin(env, -1, &p), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_plugin(env, 0, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_plugin(NULL, 0, &p), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_n_plugins(NULL), 0);

    /* A library's error reads like the kernel's, and leaves the env usable. */
    CHECK_EQ_INT(polis_env_set_error(env, POLIS_ERR_LIMIT, "lib: %d too many", 3), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "lib: 3 too many");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(polis_env_error(env), "");
    polis_env_set_error(env, POLIS_ERR_INVALID, "again");
    polis_env_clear_error(env);
    CHECK_EQ_STR(polis_env_error(env), "");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_set_error(NULL, POLIS_ERR_IO, "x"), POLIS_ERR_IO);
    polis_env_clear_error(NULL);
    polis_env_destroy(env);

    /* A scenario without plugins or scripts lists nothing. */
    env = test_env("{\"agents\": 1}", NULL, NULL);
    CHECK(env && polis_env_n_plugins(env) == 0);
    polis_env_destroy(env);
}

int main(void)
{
    lifecycle();
    loaded_and_library_errors();
    weights();
    failures();
    phases();
    agent_order();
    mask_filters();
    action_families();
    legality_groups();
    api_misuse();
    CHECK_DONE();
}
