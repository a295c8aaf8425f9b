/* tests/unit/test_swap.c — engine/ffi/swap.c: the scenario's "replace" list. Every kind of
 * handler of tests/plugins/swap_probe.c replaced by a C export and by a Lua function
 * (tests/scenarios/swap/), disabled, every refusal with its JSON path, no allocation in the
 * step with replaced handlers, clean out-of-memory failures, and the Contract game with two
 * other reward splits: seeded episodes reproducible, and different from the shipped split. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/internal.h"
#include "ffi/internal.h"
#include "testutil.h"

#define FIXTURE(name) POLIS_TEST_SOURCE_DIR "/scenarios/swap/" name
#define CONTRACT POLIS_SOURCE_DIR "/rulesets/contract/"

static int32_t count_of(polis_env *env, int32_t agent)
{
    const void *p = test_obs_field(env, agent, "count", NULL);
    int32_t v = 0;
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

static void set_actions(polis_env *env, const char *a0, const char *a1)
{
    const polis_io *io = polis_env_io(env);
    io->actions[0] = a0 ? test_action_id(env, a0) : 0;
    io->actions[1] = a1 ? test_action_id(env, a1) : 0;
}

/* ---- every kind, replaced by C exports -------------------------------------------------- */

static void test_c_replacements(void)
{
    polis_env *env = test_env_file(FIXTURE("probe_c.json"), NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    /* legal_odd: step is legal for agent 1 only */
    CHECK_EQ_INT(test_mask(env, 0, "step"), 0);
    CHECK_EQ_INT(test_mask(env, 1, "step"), 1);
    CHECK_EQ_INT(count_of(env, 0), -100); /* write_neg */
    set_actions(env, "step", "step");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(io->illegal[1], 0);
    CHECK_EQ_INT(count_of(env, 0), -100);
    CHECK_EQ_INT(count_of(env, 1), -103); /* act_thrice */
    /* reward_agent gives [0, 1]; halve (in place of double) makes it [0, 0.5] */
    CHECK(io->rewards[0] == 0.0f);
    CHECK(io->rewards[1] == 0.5f);
    /* pick_noop in place of stepper */
    int32_t stepper = polis_env_policy_find(env, "stepper");
    CHECK(stepper >= 2);
    io->actions[1] = 7;
    CHECK_EQ_INT(polis_env_policy_act(env, stepper, NULL, 0), POLIS_OK);
    CHECK_EQ_INT(io->actions[1], 0);
    /* end_at_2 in place of the tick-5 rule: everyone is done after the third step */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(!polis_env_done(env));
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(polis_env_done(env));
    CHECK_EQ_INT(io->terminations[0] && io->terminations[1], 1);
    polis_env_destroy(env);
}

/* A replacement that fails is placed like the handler it replaced, named by its exporter. */
static void test_c_failures_are_placed(void)
{
    const char *json = "{\"agents\": 2, \"plugins\": [\"swap_probe\"], \"replace\": ["
                       "{\"kind\": \"action\", \"name\": \"step\", \"with\": \"swap_probe.%s\"}]}";
    char buf[512];
    snprintf(buf, sizeof buf, json, "act_refuse");
    polis_env *env = test_env(buf, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    set_actions(env, NULL, "step");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "swap_probe: refuses agent 1 [action step, agent 1 (agent_1), tick 0]");
    polis_env_destroy(env);

    snprintf(buf, sizeof buf, json, "act_bad_status");
    env = test_env(buf, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    set_actions(env, "step", NULL);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_FFI);
    CHECK_EQ_STR(polis_env_error(env),
                 "swap_probe: swap_probe.act_bad_status returned 42, which is not a "
                 "polis_status [action step, agent 0 (agent_0), tick 0]");
    polis_env_destroy(env);
}

/* ---- every kind, replaced by Lua functions ---------------------------------------------- */

static void test_lua_replacements(void)
{
    polis_env *env = test_env_file(FIXTURE("probe_lua.json"), NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(test_mask(env, 0, "step"), 1); /* even_only */
    CHECK_EQ_INT(test_mask(env, 1, "step"), 0);
    CHECK_EQ_INT(count_of(env, 1), 1); /* write_tick: tick 0 * 10 + agent */
    int32_t stepper = polis_env_policy_find(env, "stepper");
    io->actions[0] = 5;
    CHECK_EQ_INT(polis_env_policy_act(env, stepper, NULL, 0), POLIS_OK);
    CHECK_EQ_INT(io->actions[0], 0); /* choose_noop */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    /* reward_tick at tick 0: [0, 1]; team_mean (in place of double): [0.5, 0.5] */
    CHECK(io->rewards[0] == 0.5f && io->rewards[1] == 0.5f);
    CHECK_EQ_INT(count_of(env, 1), 11);
    set_actions(env, "step", NULL);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK); /* stop: agent 0 terminated by its action */
    CHECK_EQ_INT(io->terminations[0], 1);
    CHECK_EQ_INT(io->terminations[1], 0);
    CHECK(io->rewards[0] == 1.5f && io->rewards[1] == 1.5f);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(!polis_env_done(env));
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK); /* end_at_3 */
    CHECK(polis_env_done(env));
    polis_env_destroy(env);
}

/* ---- disabling ----------------------------------------------------------------------------- */

static polis_env *probe_with(const char *entries)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"agents\": 2, \"max_steps\": 50, \"plugins\": [\"swap_probe\"], "
             "\"replace\": [%s]}",
             entries);
    polis_env *env = test_env(buf, NULL, NULL);
    CHECK(env != NULL);
    if (env) CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    return env;
}

static void test_disable(void)
{
    /* the shipped rules: step counts, base 1 doubled, agent 0 ends at tick 5 */
    polis_env *env = probe_with("");
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    set_actions(env, "step", "step");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(io->rewards[0] == 2.0f);
    CHECK_EQ_INT(count_of(env, 0), 1);
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->terminations[0], 1);
    polis_env_destroy(env);

    /* a disabled action is never legal, so it is a flagged no-op */
    if (!(env = probe_with("{\"kind\": \"action\", \"name\": \"step\", \"disable\": true}")))
        return;
    io = polis_env_io(env);
    CHECK_EQ_INT(test_mask(env, 0, "step"), 0);
    set_actions(env, "step", NULL);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(count_of(env, 0), 0);
    polis_env_destroy(env);

    /* reward off: the transform doubles zeros; transform off: the raw 1 */
    if (!(env = probe_with("{\"kind\": \"reward\", \"name\": \"base\", \"disable\": true}")))
        return;
    io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(io->rewards[0] == 0.0f && io->rewards[1] == 0.0f);
    polis_env_destroy(env);
    if (!(env = probe_with("{\"kind\": \"transform\", \"name\": \"double\", \"disable\": true}")))
        return;
    io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK(io->rewards[0] == 1.0f && io->rewards[1] == 1.0f);
    polis_env_destroy(env);

    /* termination off: nobody ends before max_steps; observation off: the field stays 0 */
    if (!(env = probe_with("{\"kind\": \"termination\", \"name\": \"swap_probe.end\", "
                           "\"disable\": true}, "
                           "{\"kind\": \"observation\", \"name\": \"count\", \"disable\": true}")))
        return;
    io = polis_env_io(env);
    for (int i = 0; i < 8; i++) {
        set_actions(env, "step", NULL);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK_EQ_INT(io->terminations[0], 0);
    CHECK_EQ_INT(count_of(env, 0), 0);
    polis_env_destroy(env);

    /* a hook off (by its name under "hook"): the counts are not cleared at reset */
    if (!(env = probe_with("{\"kind\": \"hook\", \"name\": \"swap_probe.reset\", "
                           "\"disable\": true}")))
        return;
    set_actions(env, "step", NULL);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(count_of(env, 0), 1);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(count_of(env, 0), 1);
    polis_env_destroy(env);

    /* legality off: always legal */
    if (!(env = probe_with("{\"kind\": \"legal\", \"name\": \"step\", \"with\": "
                           "\"swap_probe.legal_odd\"}")))
        return;
    CHECK_EQ_INT(test_mask(env, 0, "step"), 0);
    polis_env_destroy(env);
    if (!(env = probe_with("{\"kind\": \"legal\", \"name\": \"step\", \"disable\": true}"))) return;
    CHECK_EQ_INT(test_mask(env, 0, "step"), 1);
    CHECK_EQ_INT(test_mask(env, 1, "step"), 1);
    polis_env_destroy(env);
}

/* A legality group's member (the "actions" host API) whose legality the scenario replaces or
 * disables, or whose action it disables, is asked on its own after the group's row writer:
 * the probe plugin's pg_a..pg_d (legal when agent + i is even, pg_c always). */
static void test_group_members(void)
{
    test_log log = {0};
    polis_env *env = test_env(
        "{\"agents\": 3, \"plugins\": [{\"name\": \"probe\", \"params\": {\"mode\": "
        "\"group\"}}, {\"name\": \"swap_probe\", \"params\": {\"game\": false}}], "
        "\"replace\": [{\"kind\": \"legal\", \"name\": \"pg_b\", \"with\": "
        "\"swap_probe.legal_odd\"}, {\"kind\": \"legal\", \"name\": \"pg_a\", \"disable\": "
        "true}, {\"kind\": \"action\", \"name\": \"pg_d\", \"disable\": true}]}",
        &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    for (int32_t a = 0; a < 3; a++) {
        CHECK_EQ_INT(test_mask(env, a, "pg_a"), 1);      /* legality off: always legal */
        CHECK_EQ_INT(test_mask(env, a, "pg_b"), a == 1); /* legal_odd */
        CHECK_EQ_INT(test_mask(env, a, "pg_c"), 1);      /* the row writer's */
        CHECK_EQ_INT(test_mask(env, a, "pg_d"), 0);      /* the action off */
    }
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_CONTAINS(log.text, "[probe] group rows=3 legal=0\n");
    polis_env_destroy(env);
}

/* ---- refusals --------------------------------------------------------------------------- */

static const char *refused(const char *entries)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"agents\": 2, \"plugins\": [\"swap_probe\"], \"scripts\": [\"rules.lua\"], "
             "\"replace\": %s}",
             entries);
    static polis_error err;
    polis_options o = test_options(NULL, NULL);
    o.base_dir = POLIS_TEST_SOURCE_DIR "/scenarios/swap";
    polis_env *env = NULL;
    if (polis_env_create_json(buf, strlen(buf), &o, &env, &err) == POLIS_OK) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    return err.message;
}

static void test_refusals(void)
{
    /* the shape of the list and of its entries */
    CHECK_EQ_STR(refused("{}"), "<string>: replace: expected an array, got an object");
    CHECK_EQ_STR(refused("[3]"), "<string>: replace[0]: expected an object, got 3");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"wiht\": \"x.y\"}]"),
                 "<string>: replace[0].wiht: unknown key (expected one of kind, name, with, "
                 "disable)");
    CHECK_EQ_STR(refused("[{\"name\": \"base\", \"disable\": true}]"),
                 "<string>: replace[0]: missing required key \"kind\"");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"disable\": true}]"),
                 "<string>: replace[0]: missing required key \"name\"");
    CHECK_EQ_STR(refused("[{\"kind\": \"rewrd\", \"name\": \"base\", \"disable\": true}]"),
                 "<string>: replace[0].kind: expected one of action, legal, observation, "
                 "reward, transform, termination, hook, policy, got \"rewrd\"");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": 5, \"disable\": true}]"),
                 "<string>: replace[0].name: expected a non-empty string, got 5");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\"}]"),
                 "<string>: replace[0]: expected exactly one of \"with\" and \"disable\", got "
                 "neither");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": \"rules.x\", "
                         "\"disable\": true}]"),
                 "<string>: replace[0]: expected exactly one of \"with\" and \"disable\", got "
                 "both");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"disable\": false}]"),
                 "<string>: replace[0].disable: expected true, got false");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": 1}]"),
                 "<string>: replace[0].with: expected a non-empty string \"plugin.export\" or "
                 "\"script.function\", got 1");

    /* names and kinds */
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"bse\", \"disable\": true}]"),
                 "<string>: replace[0].name: no reward function named \"bse\" (registered: "
                 "base)");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"double\", \"disable\": true}]"),
                 "<string>: replace[0].name: no reward function named \"double\"; \"double\" is "
                 "a reward transform (\"kind\": \"transform\")");
    CHECK_EQ_STR(refused("[{\"kind\": \"termination\", \"name\": \"swap_probe.reset\", "
                         "\"disable\": true}]"),
                 "<string>: replace[0].name: no termination rule named \"swap_probe.reset\"; "
                 "\"swap_probe.reset\" is a hook (\"kind\": \"hook\")");
    CHECK_EQ_STR(refused("[{\"kind\": \"hook\", \"name\": \"swap_probe.post\", \"disable\": "
                         "true}]"),
                 "<string>: replace[0].name: no hook named \"swap_probe.post\" (registered: "
                 "swap_probe.reset, swap_probe.end)");

    /* what cannot be replaced or disabled */
    CHECK_EQ_STR(refused("[{\"kind\": \"policy\", \"name\": \"stepper\", \"disable\": true}]"),
                 "<string>: replace[0].disable: a policy cannot be disabled: a policy runs only "
                 "when a host asks for it by name (leave it unused, or replace it)");
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"noop\", \"with\": "
                         "\"swap_probe.act_thrice\"}]"),
                 "<string>: replace[0].name: noop is the kernel's action, always legal; it "
                 "cannot be replaced or disabled");
    CHECK_EQ_STR(refused("[{\"kind\": \"legal\", \"name\": \"fam_1\", \"with\": "
                         "\"swap_probe.legal_odd\"}]"),
                 "<string>: replace[0].name: action fam_1 belongs to the action family "
                 "fam_0..fam_2, whose mask comes from one row function for the whole family: "
                 "its legality cannot be replaced alone");
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"fam_0\", \"disable\": true}]"),
                 "<string>: replace[0].disable: action fam_0 belongs to the action family "
                 "fam_0..fam_2, whose mask comes from one row function for the whole family: "
                 "its legality cannot be disabled alone");
    /* a family member's handler can be replaced */
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"fam_2\", \"with\": "
                         "\"swap_probe.act_thrice\"}]"),
                 "(created successfully)");

    /* twice */
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": "
                         "\"swap_probe.reward_agent\"}, {\"kind\": \"reward\", \"name\": \"base\", "
                         "\"disable\": true}]"),
                 "<string>: replace[1].name: reward function \"base\" is already replaced by "
                 "replace[0]");
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"step\", \"disable\": true}, "
                         "{\"kind\": \"legal\", \"name\": \"step\", \"with\": "
                         "\"swap_probe.legal_odd\"}]"),
                 "<string>: replace[1].name: legality function \"step\" is already disabled "
                 "by replace[0]");
    CHECK_EQ_STR(refused("[{\"kind\": \"hook\", \"name\": \"swap_probe.end\", \"disable\": "
                         "true}, {\"kind\": \"termination\", \"name\": \"swap_probe.end\", "
                         "\"disable\": true}]"),
                 "<string>: replace[1].name: termination rule \"swap_probe.end\" is already "
                 "disabled by replace[0]");
    /* the action and its legality are two handlers */
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"step\", \"with\": "
                         "\"swap_probe.act_thrice\"}, {\"kind\": \"legal\", \"name\": \"step\", "
                         "\"disable\": true}]"),
                 "(created successfully)");

    /* the replacement */
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": \"nodot\"}]"),
                 "<string>: replace[0].with: \"nodot\" does not name a function (expected "
                 "\"plugin.export\" or \"script.function\")");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": \"nope.f\"}]"),
                 "<string>: replace[0].with: \"nope.f\": no plugin or script named \"nope\" is "
                 "loaded");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": \"polis.f\"}]"),
                 "<string>: replace[0].with: \"polis.f\": polis is the kernel; name a plugin "
                 "export or a script function");
    CHECK_CONTAINS(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": "
                           "\"swap_probe.nope\"}]"),
                   "<string>: replace[0].with: \"swap_probe.nope\": plugin swap_probe has no "
                   "export \"nope\" (it exports: act_thrice, ");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": "
                         "\"swap_probe.wrong\"}]"),
                 "<string>: replace[0].with: swap_probe.wrong has signature f32(ctx,i32), but a "
                 "reward function needs i32(ctx,f32*) or void(ctx,f32*)");
    CHECK_EQ_STR(refused("[{\"kind\": \"observation\", \"name\": \"count\", \"with\": "
                         "\"swap_probe.write_f32\"}]"),
                 "<string>: replace[0].with: swap_probe.write_f32 has signature "
                 "void(ctx,i32,f32*), but an observation needs void(ctx,i32,i32*) (observation "
                 "count is i32)");
    CHECK_EQ_STR(refused("[{\"kind\": \"legal\", \"name\": \"step\", \"with\": "
                         "\"swap_probe.act_thrice\"}]"),
                 "<string>: replace[0].with: swap_probe.act_thrice has signature "
                 "i32(ctx,i32,i32), but a legality function needs bool(ctx,i32,i32)");
    CHECK_EQ_STR(refused("[{\"kind\": \"policy\", \"name\": \"stepper\", \"with\": "
                         "\"swap_probe.end_at_2\"}]"),
                 "<string>: replace[0].with: swap_probe.end_at_2 has signature void(ctx), but a "
                 "policy needs i32(ctx,i32)");
    CHECK_EQ_STR(refused("[{\"kind\": \"termination\", \"name\": \"swap_probe.end\", \"with\": "
                         "\"swap_probe.halve\"}]"),
                 "<string>: replace[0].with: swap_probe.halve has signature i32(ctx,f32*), but "
                 "a termination rule needs i32(ctx) or void(ctx)");
    CHECK_EQ_STR(refused("[{\"kind\": \"action\", \"name\": \"step\", \"with\": "
                         "\"swap_probe.legal_odd\"}]"),
                 "<string>: replace[0].with: swap_probe.legal_odd has signature "
                 "bool(ctx,i32,i32), but an action needs i32(ctx,i32,i32) or void(ctx,i32,i32)");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": "
                         "\"rules.missing\"}]"),
                 "<string>: replace[0].with: script rules has no global function \"missing\"");
    CHECK_EQ_STR(refused("[{\"kind\": \"reward\", \"name\": \"base\", \"with\": "
                         "\"rules.not_a_function\"}]"),
                 "<string>: replace[0].with: script rules has no global function "
                 "\"not_a_function\" (it is a number)");
    /* an empty list replaces nothing */
    CHECK_EQ_STR(refused("[]"), "(created successfully)");
}

/* Exports taking pointers replace handlers only: polis.call cannot pass them values. */
static void test_pointer_exports(void)
{
    polis_env *env = probe_with("");
    if (!env) return;
    const polis__ffi_fn *f = NULL;
    char why[256];
    CHECK_EQ_INT(polis__ffi_find(env, "swap_probe.halve", &f, why, sizeof why), POLIS_OK);
    if (f) CHECK_EQ_STR(polis__ffi_signature(f), "i32(ctx,f32*)"); /* declared "i32(ctx, f32 *)" */
    CHECK_EQ_INT(polis__ffi_find(env, "swap_probe.ptr_i64", &f, why, sizeof why), POLIS_ERR_FFI);
    CHECK_EQ_STR(why, "plugin swap_probe: export \"ptr_i64\": signature \"void(ctx,i64*)\": no "
                      "pointer to \"i64\" at column 10 (pointers: u8*, i8*, i16*, i32*, f32*)");
    CHECK_EQ_INT(polis__ffi_find(env, "swap_probe.ptr_ret", &f, why, sizeof why), POLIS_ERR_FFI);
    CHECK_EQ_STR(why, "plugin swap_probe: export \"ptr_ret\": signature \"f32*(ctx)\": a pointer "
                      "is not a return type, at column 1");
    CHECK_EQ_INT(polis__ffi_lookup(env, "swap_probe.halve", &f), POLIS_ERR_FFI);
    CHECK_EQ_STR(polis_env_error(env),
                 "swap_probe.halve has signature i32(ctx,f32*): an export taking a pointer only "
                 "replaces a handler (scenario \"replace\"), it cannot be called with values");
    polis_env_destroy(env);
}

/* ---- the step allocates nothing; creation fails cleanly --------------------------------- */

static void test_no_allocation_in_step(void)
{
    test_alloc al = {0};
    polis_env *env = test_env_file(FIXTURE("probe_c.json"), &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    long before = al.calls;
    const polis_io *io = polis_env_io(env);
    for (int i = 0; i < 10000; i++) {
        if (polis_env_done(env)) CHECK_EQ_INT(polis_env_reset(env, (uint64_t)i), POLIS_OK);
        io->actions[0] = io->actions[1] = test_action_id(env, "step");
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

static void test_create_out_of_memory(void)
{
    long total = 0, failures = 0;
    CHECK_EQ_INT(test_create_sweep(FIXTURE("probe_c.json"), &total, &failures), 0);
    CHECK(failures > 0 && failures == total);
    CHECK_EQ_INT(test_create_sweep(FIXTURE("probe_lua.json"), &total, &failures), 0);
}

/* ---- Contract with other reward splits ----------------------------------------------------- */

/* A seeded Contract episode under the random policy: a hash of every step's rewards and
 * flags. Checks the split property of each step when `check` is set: 1 = team mean (every
 * agent the same), 2 = keep half (the total of the raw rewards is kept). */
static uint64_t contract_hash(const char *path, uint64_t seed, int check)
{
    polis_env *env = test_env_file(path, NULL);
    CHECK(env != NULL);
    if (!env) return 0;
    const polis_io *io = polis_env_io(env);
    uint64_t h = 1469598103934665603ULL;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    int32_t n = io->n_agents, n_rewards = polis_env_n_reward_fns(env);
    float nonzero = 0;
    while (!polis_env_done(env)) {
        CHECK_EQ_INT(polis_env_policy_act(env, 1, NULL, 0), POLIS_OK);
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "%s: %s\n", path, polis_env_error(env));
            CHECK(0);
            break;
        }
        const float *comp = polis_env_reward_components(env);
        float raw = 0, got = 0;
        for (int32_t a = 0; a < n; a++) {
            for (int32_t r = 0; r < n_rewards; r++) raw += comp[(size_t)r * (size_t)n + (size_t)a];
            got += io->rewards[a];
            nonzero += fabsf(io->rewards[a]);
        }
        if (check == 1)
            for (int32_t a = 1; a < n; a++) CHECK(io->rewards[a] == io->rewards[0]);
        if (check == 2) CHECK(fabsf(raw - got) <= 1e-3f * (1.0f + fabsf(raw)));
        for (int32_t a = 0; a < n; a++) {
            uint32_t bits;
            memcpy(&bits, &io->rewards[a], sizeof bits);
            h = (h ^ bits) * 1099511628211ULL;
            h = (h ^ io->terminations[a] ^ (uint64_t)io->truncations[a] << 1) * 1099511628211ULL;
        }
    }
    CHECK(nonzero > 0); /* the episode had rewards to split */
    polis_env_destroy(env);
    return h;
}

static void test_contract_splits(void)
{
    uint64_t shipped = contract_hash(CONTRACT "contract.json", 7, 0);
    uint64_t team = contract_hash(CONTRACT "contract_team.json", 7, 1);
    uint64_t half = contract_hash(FIXTURE("contract_keep_half.json"), 7, 2);
    CHECK(team != shipped);
    CHECK(half != shipped);
    CHECK(half != team);
    CHECK(contract_hash(CONTRACT "contract_team.json", 7, 1) == team);
    CHECK(contract_hash(FIXTURE("contract_keep_half.json"), 7, 2) == half);
    CHECK(contract_hash(CONTRACT "contract.json", 7, 0) == shipped);
}

int main(void)
{
    test_c_replacements();
    test_c_failures_are_placed();
    test_lua_replacements();
    test_disable();
    test_group_members();
    test_refusals();
    test_pointer_exports();
    test_no_allocation_in_step();
    test_create_out_of_memory();
    test_contract_splits();
    CHECK_DONE();
}
