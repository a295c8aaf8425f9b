/* Plans (engine/policy/plan.c): macro registration and its errors, starting and running plans to
 * DONE and IMPOSSIBLE, refused commands, macros that misbehave, finished agents, reset,
 * determinism, no allocation while planning, a failing-allocator sweep, and Lua macros
 * (polis.macro). */
#include "check.h"
#include "testutil.h"

#define PROBE_AT(mode, finish)                                                                     \
    "{\"agents\": 3, \"max_steps\": 50, \"seed\": 3, \"plugins\": [{\"name\": \"macro_probe\", "   \
    "\"params\": {\"mode\": \"" mode "\", \"finish_at\": " finish "}}]}"
#define PROBE(mode) PROBE_AT(mode, "0")

/* Runs agent's plan for one tick; the others noop. Returns the state (-1 on an error). */
static int plan_tick(polis_env *env, int32_t agent, const char **why)
{
    polis_plan_state s;
    int32_t act = -1;
    if (polis_env_plan_next(env, agent, &s, &act, why) != POLIS_OK) return -1;
    if (s != POLIS_PLAN_RUNNING) return (int)s;
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = 0;
    io->actions[agent] = act;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    return (int)s;
}

static int32_t pos(polis_env *env, int32_t agent)
{
    const int32_t *p = (const int32_t *)test_obs_field(env, agent, "pos", NULL);
    return p ? *p : -1;
}

static void test_listing(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 4);
    CHECK_EQ_STR(polis_env_macro_name(env, 0), "WALK");
    CHECK_EQ_STR(polis_env_macro_usage(env, 1), "BACK <n>");
    CHECK_EQ_STR(polis_env_macro_doc(env, 2), "n ticks of random steps forward or pauses.");
    CHECK(polis_env_macro_name(env, 4) == NULL);
    CHECK(polis_env_macro_usage(env, -1) == NULL);
    CHECK(polis_env_macro_doc(NULL, 0) == NULL);
    CHECK_EQ_INT(polis_env_n_macros(NULL), 0);
    char *d = polis_env_describe_json(env);
    CHECK_CONTAINS(d, "\"macros\":");
    CHECK_CONTAINS(d, "\"name\":\t\"WALK\",\n\t\t\t\"usage\":\t\"WALK <n>\",\n\t\t\t\"doc\":\t"
                      "\"Steps forward n times (1..100); done when walked.\",\n\t\t\t\"owner\":\t"
                      "\"macro_probe\"");
    polis_free(d);
    polis_env_destroy(env);

    env = test_env("{\"agents\": 2}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 0);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 2"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 0 (agent_0): the scenario has no macros");
    polis_plan_state s;
    int32_t act;
    CHECK_EQ_INT(polis_env_plan_next(env, 0, &s, &act, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "plan_next: agent 0 (agent_0) has no plan");
    CHECK(polis_env_plan_command(env, 0) == NULL);
    polis_env_plan_cancel(env, 0);
    polis_env_destroy(env);
}

static void test_run(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_plan_state s;
    int32_t act = -1;
    const char *why = "unset";
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 2"), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: call reset before using plans");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);

    /* case-insensitive name, surrounding space trimmed; the command is kept as given */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "  walk   3 \n"), POLIS_OK);
    CHECK_EQ_STR(polis_env_plan_command(env, 0), "walk   3");
    CHECK(polis_env_plan_command(env, 1) == NULL);
    CHECK(polis_env_plan_command(env, 7) == NULL);
    for (int t = 0; t < 3; t++) {
        CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_RUNNING);
        CHECK(why == NULL);
    }
    CHECK_EQ_INT(pos(env, 0), 3);
    CHECK_EQ_INT(pos(env, 1), 0);
    CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "walked 3 steps, now at 3");
    CHECK(polis_env_plan_command(env, 0) == NULL);
    CHECK_EQ_INT(polis_env_plan_next(env, 0, &s, &act, &why), POLIS_ERR_INVALID);

    /* a repeated plan_next in one tick does not advance the plan */
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "WALK 1"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_next(env, 1, &s, &act, NULL), POLIS_OK);
    CHECK_EQ_INT(s, POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(act, polis_env_action_id(env, "fwd"));
    act = -1;
    CHECK_EQ_INT(polis_env_plan_next(env, 1, &s, &act, NULL), POLIS_OK);
    CHECK_EQ_INT(s, POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(act, polis_env_action_id(env, "fwd"));
    CHECK_EQ_INT(plan_tick(env, 1, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(pos(env, 1), 1);
    CHECK_EQ_INT(plan_tick(env, 1, &why), POLIS_PLAN_DONE);

    /* IMPOSSIBLE with the macro's reason */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "BACK 5"), POLIS_OK);
    for (int t = 0; t < 3; t++) CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(why, "hit the wall at 0 with 2 steps to go");

    /* a macro without a reason gets the kernel's */
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "WANDER 1"), POLIS_OK);
    CHECK_EQ_INT(plan_tick(env, 2, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 2, &why), POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "done");

    /* a new plan replaces the running one; cancel ends it */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 9"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 1"), POLIS_OK);
    CHECK_EQ_STR(polis_env_plan_command(env, 0), "WALK 1");
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_DONE);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 4"), POLIS_OK);
    polis_env_plan_cancel(env, 0);
    CHECK(polis_env_plan_command(env, 0) == NULL);
    CHECK_EQ_INT(polis_env_plan_next(env, 0, &s, &act, NULL), POLIS_ERR_INVALID);

    /* reset ends every plan */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 4"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "WALK 4"), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK(polis_env_plan_command(env, 0) == NULL);
    CHECK(polis_env_plan_command(env, 2) == NULL);
    CHECK_EQ_INT(polis_env_plan_next(env, 2, &s, &act, NULL), POLIS_ERR_INVALID);
    polis_env_destroy(env);
}

static void test_refused(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "FLY 3"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 0 (agent_0): unknown macro \"FLY\" "
                                       "(macros: WALK, BACK, WANDER, BAD)");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALKER 3"), POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "unknown macro \"WALKER\"");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WAL 3"), POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "unknown macro \"WAL\"");
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "  \t "), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 1 (agent_1): the command is empty");
    CHECK_EQ_INT(polis_env_plan_start(env, 1, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 1 (agent_1): command is NULL");
    CHECK_EQ_INT(polis_env_plan_start(env, 3, "WALK 1"), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 3 is not an agent id (0..2)");
    CHECK_EQ_INT(polis_env_plan_start(env, -1, "WALK 1"), POLIS_ERR_INVALID);
    char longcmd[300];
    memset(longcmd, 'x', sizeof longcmd - 1);
    memcpy(longcmd, "WALK ", 5);
    longcmd[sizeof longcmd - 1] = '\0';
    CHECK_EQ_INT(polis_env_plan_start(env, 1, longcmd), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env),
                 "plan_start: agent 1 (agent_1): the command is longer than 255 characters");

    /* the macro's own refusal, with its reason; the agent keeps no plan */
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "WALK 1"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "WALK lots"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 2 (agent_2): WALK: macro_probe: WALK: "
                                       "the step count must be 1 to 100, got \"lots\"");
    CHECK(polis_env_plan_command(env, 2) == NULL);
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "walk"), POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "the step count must be 1 to 100, got \"\"");
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "BAD refuse"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 2 (agent_2): BAD: refused the arguments");
    /* a start that fails (not a refusal) is placed like any callback failure */
    CHECK_EQ_INT(polis_env_plan_start(env, 2, "BAD crash"), POLIS_ERR_PLUGIN);
    CHECK_EQ_STR(polis_env_error(env), "macro_probe: cannot start [macro BAD start, agent 2 "
                                       "(agent_2), tick 0]");
    polis_env_destroy(env);
}

static void test_bad_macro(void)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_plan_state s;
    int32_t act;
    struct {
        const char *cmd;
        polis_status st;
        const char *msg;
    } cases[] = {
        {"BAD illegal", POLIS_ERR_ACTION,
         "plan_next: macro BAD: agent 1 (agent_1): action 2 (back) is not legal at tick 0"},
        {"BAD range", POLIS_ERR_ACTION,
         "plan_next: macro BAD: agent 1 (agent_1): action 99 is outside [0, 3) at tick 0"},
        {"BAD state", POLIS_ERR_ACTION,
         "plan_next: macro BAD: agent 1 (agent_1): plan state 7 is not RUNNING, DONE or "
         "IMPOSSIBLE at tick 0"},
        {"BAD fail", POLIS_ERR_INVALID,
         "macro_probe: bad plan failed for agent 1 [macro BAD, agent 1 (agent_1), tick 0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ_INT(polis_env_plan_start(env, 1, cases[i].cmd), POLIS_OK);
        CHECK_EQ_INT(polis_env_plan_next(env, 1, &s, &act, NULL), cases[i].st);
        CHECK_EQ_STR(polis_env_error(env), cases[i].msg);
        /* the plan has ended */
        CHECK(polis_env_plan_command(env, 1) == NULL);
    }
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "BAD none"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_next(env, 1, NULL, &act, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "plan_next: state or out_action is NULL");
    CHECK_EQ_INT(polis_env_plan_next(env, 9, &s, &act, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "plan_next: agent 9 is not an agent id (0..2)");
    polis_env_destroy(env);
}

static void test_finished(void)
{
    polis_env *env = test_env(PROBE_AT("ok", "2"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const char *why = NULL;
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 5"), POLIS_OK);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(polis_env_io(env)->terminations[0], 1);
    CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(why, "agent finished");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 1"), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: agent 0 (agent_0) has finished the episode "
                                       "(tick 2)");
    polis_env_destroy(env);
}

static void test_registration(void)
{
    CHECK_CONTAINS(test_env_error(PROBE("dup")),
                   "macro_probe: macro \"WALK\" is already registered by macro_probe");
    CHECK_CONTAINS(test_env_error(PROBE("lower")),
                   "macro_probe: macro name \"Walk\" is not 1 to 63 characters from A-Z, 0-9 and "
                   "_ starting with a letter");
    CHECK_CONTAINS(test_env_error(PROBE("digit_first")), "macro name \"2WALK\" is not 1 to 63");
    CHECK_CONTAINS(test_env_error(PROBE("null_start")), "macro_probe: macro WALK: start is NULL");
    CHECK_CONTAINS(test_env_error(PROBE("null_next")), "macro_probe: macro WALK: next is NULL");
    CHECK_CONTAINS(test_env_error(PROBE("big")),
                   "macro_probe: macro WALK: plan_size 4097 is larger than 4096");
    CHECK_CONTAINS(test_env_error(PROBE("null_def")), "macro_probe: macro: definition is NULL");

    polis_env *env = test_env(PROBE("max"), NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_plan_start(env, 2, "WALK 1"), POLIS_OK);
        CHECK_EQ_INT(plan_tick(env, 2, NULL), POLIS_PLAN_RUNNING);
        polis_env_destroy(env);
    }

    env = test_env(PROBE("late"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env),
                 "macro_probe: macro: registration is closed once the env is created (register "
                 "in init or start) [hook reset, tick 0]");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "WALK 1"), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "plan_start: the previous step or reset failed; call reset");
    polis_env_destroy(env);
}

/* Every agent wanders for the whole episode; the positions it reaches. */
static void wander_trace(uint64_t seed, int32_t *out)
{
    polis_env *env = test_env(PROBE("ok"), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int32_t a = 0; a < 3; a++)
        CHECK_EQ_INT(polis_env_plan_start(env, a, "WANDER 40"), POLIS_OK);
    for (int t = 0; t < 40; t++) {
        for (int32_t a = 0; a < 3; a++) {
            polis_plan_state s;
            CHECK_EQ_INT(polis_env_plan_next(env, a, &s, &io->actions[a], NULL), POLIS_OK);
            CHECK_EQ_INT(s, POLIS_PLAN_RUNNING);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    for (int32_t a = 0; a < 3; a++) out[a] = pos(env, a);
    polis_env_destroy(env);
}

static void test_determinism(void)
{
    int32_t x[3] = {0}, y[3] = {0}, z[3] = {0};
    wander_trace(5, x);
    wander_trace(5, y);
    wander_trace(6, z);
    for (int32_t a = 0; a < 3; a++) {
        CHECK_EQ_INT(x[a], y[a]);
        CHECK(x[a] > 5 && x[a] < 35); /* a random walk, not all steps or none */
    }
    CHECK(x[0] != z[0] || x[1] != z[1] || x[2] != z[2]);
}

/* Starting and running plans allocates nothing, over several episodes. */
static void test_no_alloc(void)
{
    test_alloc al = {0};
    polis_env *env = test_env(PROBE_AT("ok", "30"), NULL, &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    long before = al.calls;
    polis_io *io = (polis_io *)polis_env_io(env);
    const char *cmds[3] = {"WALK 7", "WANDER 5", "BACK 2"};
    int ended = 0;
    for (int ep = 0; ep < 3; ep++) {
        while (!polis_env_done(env)) {
            for (int32_t a = 0; a < 3; a++) {
                polis_plan_state s = POLIS_PLAN_DONE;
                io->actions[a] = 0;
                if (polis_env_plan_command(env, a) &&
                    polis_env_plan_next(env, a, &s, &io->actions[a], NULL) != POLIS_OK)
                    CHECK(0);
                if (s != POLIS_PLAN_RUNNING) {
                    ended++;
                    if (!io->terminations[a] && !io->truncations[a]) {
                        CHECK_EQ_INT(polis_env_plan_start(env, a, cmds[a]), POLIS_OK);
                        CHECK_EQ_INT(polis_env_plan_next(env, a, &s, &io->actions[a], NULL),
                                     POLIS_OK);
                        if (s != POLIS_PLAN_RUNNING) io->actions[a] = 0;
                    }
                }
            }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep + 2), POLIS_OK);
    }
    CHECK(ended > 20);
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

/* Creation, registration and planning under a failing allocator: a clean error and no leak
 * wherever the failure lands. */
static void alloc_sweep(const char *json, const char *command)
{
    int failures = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        test_alloc al = {.fail_at = n};
        polis_options o = test_options(NULL, &al);
        polis_env *env = NULL;
        polis_error err;
        polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
        if (st == POLIS_OK) {
            st = polis_env_reset(env, 1);
            if (st == POLIS_OK) st = polis_env_plan_start(env, 0, command);
            if (st == POLIS_OK) {
                polis_plan_state ps;
                polis_io *io = (polis_io *)polis_env_io(env);
                st = polis_env_plan_next(env, 0, &ps, &io->actions[0], NULL);
                if (st == POLIS_OK) st = polis_env_step(env);
            }
            if (st != POLIS_OK) CHECK(polis_env_error(env)[0] != '\0');
            polis_env_destroy(env);
            CHECK_EQ_INT(al.live, 0);
            if (!al.failed) break;
            continue;
        }
        failures++;
        CHECK(err.message[0] != '\0');
        CHECK(st == POLIS_ERR_NOMEM || st == POLIS_ERR_PLUGIN || st == POLIS_ERR_SCRIPT);
        CHECK_EQ_INT(al.live, 0);
    }
    CHECK(failures > 10);
    CHECK(n < 100000);
}

static void test_alloc_sweep(void) { alloc_sweep(PROBE("ok"), "WALK 2"); }

/* ---- Lua macros (polis.macro) ---------------------------------------------------------- */

#define LUA_FILE POLIS_BINARY_DIR "/plan_lua.lua"
#define LUA_DUP_FILE POLIS_BINARY_DIR "/plan_lua_dup.lua"
#define LUA_SCN(file)                                                                              \
    "{\"agents\": 2, \"max_steps\": 30, \"plugins\": [{\"name\": \"macro_probe\"}], "              \
    "\"scripts\": [\"" file "\"]}"

static const char LUA_MACROS[] =
    "polis.macro{name = 'HOP', usage = 'HOP <n>', doc = 'Hops forward n times.',\n"
    "  start = function(agent, args)\n"
    "    local n = math.tointeger(tonumber(args))\n"
    "    if not n or n < 1 then return nil, \"HOP needs a positive count, got '\" .. args .. "
    "\"'\" end\n"
    "    return {left = n, total = n}\n"
    "  end,\n"
    "  next = function(agent, plan)\n"
    "    if plan.left == 0 then return 'done', 'hopped ' .. plan.total end\n"
    "    plan.left = plan.left - 1\n"
    "    return 'running', 'fwd'\n"
    "  end}\n"
    "polis.macro{name = 'DICE',\n"
    "  start = function(agent, args) return {n = tonumber(args)} end,\n"
    "  next = function(agent, plan)\n"
    "    if plan.n == 0 then return 'impossible' end\n"
    "    plan.n = plan.n - 1\n"
    "    return 'running', math.random(0, 1)\n"
    "  end}\n"
    "polis.macro{name = 'LBAD',\n"
    "  start = function(agent, args)\n"
    "    if args == 'raise' then error('cannot start') end\n"
    "    return args\n"
    "  end,\n"
    "  next = function(agent, plan)\n"
    "    if plan == 'state' then return 'flying' end\n"
    "    if plan == 'name' then return 'running', 'teleport' end\n"
    "    if plan == 'type' then return 'running', {} end\n"
    "    if plan == 'nothing' then return nil end\n"
    "    error('boom')\n"
    "  end}\n";

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Positions of both agents after DICE runs for 12 ticks from a reset with seed. */
static void dice_trace(uint64_t seed, int32_t *out)
{
    polis_env *env = test_env(LUA_SCN(LUA_FILE), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int32_t a = 0; a < 2; a++) CHECK_EQ_INT(polis_env_plan_start(env, a, "DICE 12"), POLIS_OK);
    for (int t = 0; t < 12; t++) {
        for (int32_t a = 0; a < 2; a++) {
            polis_plan_state st;
            CHECK_EQ_INT(polis_env_plan_next(env, a, &st, &io->actions[a], NULL), POLIS_OK);
            CHECK_EQ_INT(st, POLIS_PLAN_RUNNING);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    for (int32_t a = 0; a < 2; a++) out[a] = pos(env, a);
    polis_env_destroy(env);
}

static void test_lua(void)
{
    CHECK(write_file(LUA_FILE, LUA_MACROS));
    polis_env *env = test_env(LUA_SCN(LUA_FILE), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 7);
    /* scripts load before plugins start, and macro_probe registers its macros in start */
    CHECK_EQ_STR(polis_env_macro_name(env, 0), "HOP");
    CHECK_EQ_STR(polis_env_macro_usage(env, 0), "HOP <n>");
    CHECK_EQ_STR(polis_env_macro_doc(env, 0), "Hops forward n times.");
    CHECK_EQ_STR(polis_env_macro_usage(env, 1), "DICE"); /* no usage: the name */
    CHECK_EQ_STR(polis_env_macro_doc(env, 1), "");
    CHECK_EQ_STR(polis_env_macro_name(env, 3), "WALK");
    char *d = polis_env_describe_json(env);
    CHECK_CONTAINS(d, "\"name\":\t\"HOP\",\n\t\t\t\"usage\":\t\"HOP <n>\",\n\t\t\t\"doc\":\t"
                      "\"Hops forward n times.\",\n\t\t\t\"owner\":\t\"plan_lua\"");
    polis_free(d);

    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const char *why = NULL;
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "hop 2"), POLIS_OK);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "hopped 2");
    CHECK_EQ_INT(pos(env, 0), 2);
    /* a plan per agent: agent 1's plan is its own */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "HOP 1"), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "HOP 3"), POLIS_OK);
    CHECK_EQ_INT(plan_tick(env, 0, NULL), POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(plan_tick(env, 0, &why), POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "hopped 1");
    CHECK_EQ_STR(polis_env_plan_command(env, 1), "HOP 3");
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "DICE 0"), POLIS_OK);
    CHECK_EQ_INT(plan_tick(env, 1, &why), POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(why, "the macro gave no reason");

    CHECK_EQ_INT(polis_env_plan_start(env, 0, "HOP x"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(
        polis_env_error(env),
        "plan_start: agent 0 (agent_0): HOP: plan_lua: HOP needs a positive count, got 'x'");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "LBAD raise"), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "plan_lua.lua:21: cannot start [macro LBAD start, agent 0 "
                                         "(agent_0), tick 3]");
    polis_plan_state st;
    int32_t act;
    struct {
        const char *cmd;
        const char *msg;
    } bad[] = {
        {"LBAD state", "macro LBAD next for agent 0 returned 'flying', expected 'running', 'done' "
                       "or 'impossible' [macro LBAD, agent 0 (agent_0), tick 3]"},
        {"LBAD name", "macro LBAD returned 'running', 'teleport', which is not an action name "
                      "[macro LBAD, agent 0 (agent_0), tick 3]"},
        {"LBAD type", "macro LBAD next for agent 0 (running) (the function defined here) "
                      "returned table, expected an action id or an action name after 'running'"},
        {"LBAD nothing", "macro LBAD next for agent 0 (the function defined here) returned nil, "
                         "expected 'running', 'done' or 'impossible'"},
        {"LBAD boom", "plan_lua.lua:29: boom [macro LBAD, agent 0 (agent_0), tick 3]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(polis_env_plan_start(env, 0, bad[i].cmd), POLIS_OK);
        CHECK_EQ_INT(polis_env_plan_next(env, 0, &st, &act, NULL), POLIS_ERR_SCRIPT);
        CHECK_CONTAINS(polis_env_error(env), bad[i].msg);
        CHECK(polis_env_plan_command(env, 0) == NULL);
    }
    polis_env_destroy(env);

    /* randomness from the policy generator: reproducible per seed */
    int32_t x[2] = {0}, y[2] = {0}, z[2] = {0};
    dice_trace(3, x);
    dice_trace(3, y);
    dice_trace(4, z);
    CHECK(x[0] == y[0] && x[1] == y[1]);
    CHECK(x[0] != z[0] || x[1] != z[1]);
    CHECK(x[0] > 0 && x[0] < 12);

    CHECK(write_file(LUA_DUP_FILE, "polis.macro{name = 'WALK', start = function() return 1 end,\n"
                                   "  next = function() return 'done' end}\n"));
    CHECK_CONTAINS(test_env_error(LUA_SCN(LUA_DUP_FILE)),
                   "plugin \"macro_probe\" start failed: macro_probe: macro \"WALK\" is already "
                   "registered by plan_lua_dup");
    CHECK(write_file(LUA_DUP_FILE, "polis.macro{name = 'LATE', start = 1, next = 2}\n"));
    CHECK_CONTAINS(test_env_error(LUA_SCN(LUA_DUP_FILE)),
                   "plan_lua_dup.lua:1: polis.macro: field 'start' must be a function, got number");
    alloc_sweep(LUA_SCN(LUA_FILE), "HOP 2");
    remove(LUA_FILE);
    remove(LUA_DUP_FILE);
}

int main(void)
{
    test_listing();
    test_run();
    test_refused();
    test_bad_macro();
    test_finished();
    test_registration();
    test_determinism();
    test_no_alloc();
    test_alloc_sweep();
    test_lua();
    CHECK_DONE();
}
