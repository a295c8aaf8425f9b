/* Plans (plan.c): GATHER, CRAFT, EXPLORE, DUMP and GOTO driven through the public API on
 * hand-made maps — exact paths around walls and across the wrap, the reasons a plan ends,
 * every refusal word for word — then long runs on Exploration and Contract with every agent
 * planning (never an illegal action, masks of a negotiation stage respected), determinism,
 * and no allocation while planning. */
#include "fixture.h"

#define PREFIX "plan_start: agent 0 (agent_0): "

/* One agent (plus `others` static players of the same job, listed in `players`) on a map;
 * `map` is the map parameter, `job` the job "smith", `content` goes into "static" after the
 * players, `extra` into society's params. */
static polis_env *world(const char *map, const char *job, const char *players, const char *content,
                        const char *extra, int agents, test_alloc *al)
{
    char params[4096];
    snprintf(params, sizeof params,
             "{\"map\": %s, \"resources_in_play\": \"all\", \"jobs\": {\"smith\": %s},"
             " \"static\": {\"players\": [{\"job\": \"smith\", \"positions\": [%s]}]%s}%s}",
             map, job, players, content, extra);
    char *json = soc_scenario(agents, 300, params, "");
    polis_env *env = soc_open(json, NULL, al);
    free(json);
    CHECK(env != NULL);
    if (env) CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    return env;
}

#define BLANK7 "{\"init_rule\": \"blank\", \"size\": {\"x\": 7, \"y\": 7}}"
#define BOX9 "{\"init_rule\": \"box\", \"size\": {\"x\": 9, \"y\": 9}}"

static polis_env *one(const char *job, int x, int y, const char *content, const char *extra)
{
    char at[32];
    snprintf(at, sizeof at, "%d, %d", x, y);
    return world(BLANK7, job, at, content, extra, 1, NULL);
}

typedef struct run {
    int state; /* polis_plan_state, -1 on an error */
    int ticks; /* actions taken */
    char why[256];
    char trace[2048]; /* the actions' names, space-separated */
} run;

/* Runs agent's plan (the others noop) until it ends or `max` actions were taken. Every
 * action must be legal under the mask it was chosen with, and no step may flag it. */
static run run_plan(polis_env *env, int32_t agent, int max)
{
    run r;
    memset(&r, 0, sizeof r);
    r.state = -1;
    polis_io *io = (polis_io *)polis_env_io(env);
    for (;;) {
        polis_plan_state s;
        int32_t act = -1;
        const char *why = NULL;
        if (polis_env_plan_next(env, agent, &s, &act, &why) != POLIS_OK) {
            fprintf(stderr, "plan_next failed: %s\n", polis_env_error(env));
            CHECK(0);
            return r;
        }
        if (s != POLIS_PLAN_RUNNING) {
            r.state = (int)s;
            snprintf(r.why, sizeof r.why, "%s", why ? why : "(null)");
            return r;
        }
        if (r.ticks == max) {
            polis_env_plan_cancel(env, agent);
            r.state = POLIS_PLAN_RUNNING;
            return r;
        }
        CHECK_EQ_INT(io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)act], 1);
        for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = 0;
        io->actions[agent] = act;
        size_t len = strlen(r.trace);
        snprintf(r.trace + len, sizeof r.trace - len, "%s%s", len ? " " : "",
                 polis_env_action_name(env, act));
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "step failed: %s\n", polis_env_error(env));
            CHECK(0);
            return r;
        }
        CHECK_EQ_INT(io->illegal[agent], 0);
        r.ticks++;
    }
}

static run start_run(polis_env *env, const char *command, int max)
{
    polis_status st = polis_env_plan_start(env, 0, command);
    if (st != POLIS_OK) fprintf(stderr, "plan_start(%s): %s\n", command, polis_env_error(env));
    CHECK_EQ_INT(st, POLIS_OK);
    CHECK_EQ_STR(polis_env_plan_command(env, 0), command);
    return run_plan(env, 0, max);
}

/* The command is refused with exactly this message (after the kernel's "plan_start: agent 0
 * (agent_0): " and the macro's name), and leaves no plan. */
static void refused(polis_env *env, const char *command, const char *want)
{
    CHECK_EQ_INT(polis_env_plan_start(env, 0, command), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env), want);
    CHECK(polis_env_plan_command(env, 0) == NULL);
}

/* ---- GATHER ------------------------------------------------------------------------------ */

static void test_gather(void)
{
    /* Wood two cells up behind a block: left around it (up is blocked; going down across the
     * wrap is 5 steps, left or right 4, and left comes first), then two picks. */
    polis_env *env = one("{\"fov\": 2}", 3, 3,
                         ", \"blocks\": [{\"positions\": [[2, 3]]}],"
                         " \"resources\": [{\"name\": \"wood\", \"positions\": [1, 3], "
                         "\"num\": 3}]",
                         "");
    if (!env) return;
    run r = start_run(env, "GATHER 2 wood", 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "gathered 2 wood");
    CHECK_EQ_STR(r.trace, "move_left move_up move_up move_right pick_wood pick_wood");
    CHECK_EQ_INT(soc_inv(env, 0, 0), 2);
    CHECK(polis_env_plan_command(env, 0) == NULL);
    /* The seeds' form: upper case, a trailing period; the count is counted from the start. */
    r = start_run(env, "gather 1 WOOD.", 50);
    CHECK_EQ_STR(r.why, "gathered 1 wood");
    CHECK_EQ_STR(r.trace, "pick_wood");
    CHECK_EQ_INT(soc_inv(env, 0, 0), 3);
    /* Nothing left anywhere: it explores, then gives up after plan_patience (30) ticks. */
    r = start_run(env, "GATHER wood", 100);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(r.why, "no wood found in 30 ticks of exploring (gathered 0 of 1)");
    CHECK_EQ_INT(r.ticks, 30);
    polis_env_destroy(env);

    /* Across the wrap: stone at y = 6 is one step left of y = 0. */
    env = one("{\"fov\": 2}", 3, 0,
              ", \"resources\": [{\"name\": \"stone\", \"positions\": [3, 6], \"num\": 1}]", "");
    if (!env) return;
    r = start_run(env, "GATHER 1 stone", 50);
    CHECK_EQ_STR(r.why, "gathered 1 stone");
    CHECK_EQ_STR(r.trace, "move_left pick_stone");
    polis_env_destroy(env);

    /* Out of view (fov 1): it explores until the pile shows up, then walks to it. Two piles
     * in one view: after the first is empty, the second, remembered out of view, is next. */
    env = one("{\"fov\": 1}", 0, 0,
              ", \"resources\": [{\"name\": \"wood\", \"positions\": [[3, 3], [3, 5]], "
              "\"num\": 1}]",
              ", \"plan_patience\": 60");
    if (!env) return;
    r = start_run(env, "GATHER 2 wood", 200);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "gathered 2 wood");
    CHECK_EQ_INT(soc_inv(env, 0, 0), 2);
    polis_env_destroy(env);

    /* The inventory fills up during the plan: lua/gifts.lua gives a stone for every wood
     * picked (and one at the reset), and the job holds 3 units. */
    {
        char *json = soc_scenario(
            1, 100,
            "{\"map\": " BLANK7 ", \"jobs\": {\"smith\": {\"fov\": 2, \"size\": 3}},"
            " \"static\": {\"players\": [{\"job\": \"smith\", \"positions\": [0, 0]}],"
            " \"resources\": [{\"name\": [\"wood\", \"stone\"], \"positions\": [[0, 0], [4, 4]],"
            " \"num\": 2}]}}",
            ", \"scripts\": [\"lua/gifts.lua\"]");
        env = soc_open(json, NULL, NULL);
        free(json);
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        r = start_run(env, "GATHER 2 wood", 20);
        CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
        CHECK_EQ_STR(r.why, "inventory full: holds 3 units, the size of its job smith (gathered 1 "
                            "of 2 wood)");
        CHECK_EQ_STR(r.trace, "pick_wood");
        polis_env_destroy(env);
    }

    /* The requirement is lost during the plan: lua/take_hammer.lua takes the hammer away at
     * the end of the first step, and coal can no longer be seen or picked. */
    {
        char *json = soc_scenario(
            1, 100,
            "{\"map\": " BLANK7 ", \"resources_in_play\": \"all\", \"jobs\": {\"smith\": "
            "{\"fov\": 3, \"inventory\": {\"hammer\": 1}}},"
            " \"static\": {\"players\": [{\"job\": \"smith\", \"positions\": [0, 0]}],"
            " \"resources\": [{\"name\": \"coal\", \"positions\": [0, 3], \"num\": 1}]}}",
            ", \"scripts\": [\"lua/take_hammer.lua\"]");
        env = soc_open(json, NULL, NULL);
        free(json);
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        r = start_run(env, "GATHER 1 coal", 20);
        CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
        CHECK_EQ_STR(r.why, "cannot see or pick coal: it requires hammer 1 (gathered 0 of 1 coal)");
        CHECK_EQ_STR(r.trace, "move_right");
        polis_env_destroy(env);
    }

    /* Another agent stands on the only pile: the plan walks up to it and waits. */
    env = world(BLANK7, "{\"fov\": 2}", "[3, 3], [3, 5]",
                ", \"resources\": [{\"name\": \"wood\", \"positions\": [3, 5], \"num\": 1}]",
                ", \"plan_patience\": 3", 2, NULL);
    if (!env) return;
    r = start_run(env, "GATHER 1 wood", 20);
    CHECK_EQ_STR(r.why, "no progress for 3 ticks: the nearest wood is 1 step away and the way is "
                        "blocked (gathered 0 of 1)");
    CHECK_EQ_STR(r.trace, "move_right move_right move_right move_right");
    polis_env_destroy(env);

    /* The patience parameter. */
    env = one("{\"fov\": 1}", 0, 0, "", ", \"plan_patience\": 4");
    if (!env) return;
    r = start_run(env, "GATHER 1 wood", 100);
    CHECK_EQ_STR(r.why, "no wood found in 4 ticks of exploring (gathered 0 of 1)");
    CHECK_EQ_INT(r.ticks, 4);
    polis_env_destroy(env);

    /* Refusals. */
    env = one("{\"fov\": 2, \"capacity\": {\"stone\": 0, \"hammer\": 1}, \"size\": 6,"
              " \"inventory\": {\"hammer\": 1, \"wood\": 2}}",
              3, 3, "", "");
    if (!env) return;
    refused(env, "GATHER 2 wod",
            PREFIX "GATHER: society: \"wod\" is not a resource (resources in play: wood, stone, "
                   "hammer, coal, torch, iron, steel, shovel, pickaxe, gem_mine, clay, pottery, "
                   "cutter, gem, totem)");
    refused(env, "GATHER", PREFIX "GATHER: society: expected GATHER <n> <resource>, got \"\"");
    refused(env, "GATHER 2 wood stone",
            PREFIX "GATHER: society: expected GATHER <n> <resource>, got \"2 wood stone\"");
    refused(env, "GATHER two wood",
            PREFIX "GATHER: society: \"two\" is not a count (usage: GATHER <n> <resource>)");
    refused(env, "GATHER 0 wood",
            PREFIX "GATHER: society: the count must be between 1 and 1000000, got 0");
    refused(env, "GATHER -3 wood",
            PREFIX "GATHER: society: the count must be between 1 and 1000000, got -3");
    refused(env, "GATHER 5 stone",
            PREFIX "GATHER: society: its job smith cannot hold stone (capacity 0)");
    refused(env, "GATHER 1 iron",
            PREFIX "GATHER: society: cannot see or pick iron: it requires torch 1");
    refused(env, "GATHER 1 hammer",
            PREFIX "GATHER: society: inventory full: holds 1 hammer, the capacity of its job "
                   "smith");
    refused(env, "GATHER 4 wood",
            PREFIX "GATHER: society: can take only 3 more wood (holds 3 units, the size of its "
                   "job is 6)");
    polis_env_destroy(env);
    env = one("{\"fov\": 2, \"capacity\": {\"wood\": 3}, \"size\": 3,"
              " \"inventory\": {\"wood\": 1, \"stone\": 2}}",
              3, 3, "", "");
    if (!env) return;
    refused(env, "GATHER 1 coal",
            PREFIX "GATHER: society: cannot see or pick coal: it requires hammer 1");
    refused(env, "GATHER 1 wood",
            PREFIX "GATHER: society: inventory full: holds 3 units, the size of its job smith");
    polis_env_destroy(env);
    env = one("{\"fov\": 2, \"capacity\": {\"wood\": 3}, \"inventory\": {\"wood\": 1}}", 3, 3, "",
              "");
    if (!env) return;
    refused(env, "GATHER 3 wood",
            PREFIX "GATHER: society: can take only 2 more wood (holds 1, capacity 3)");
    polis_env_destroy(env);
}

/* ---- DUMP --------------------------------------------------------------------------------- */

static void test_dump(void)
{
    polis_env *env = one("{\"fov\": 2, \"inventory\": {\"wood\": 3, \"hammer\": 1}}", 3, 3, "", "");
    if (!env) return;
    run r = start_run(env, "DUMP 2 wood", 10);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "dumped 2 wood at (3, 3)");
    CHECK_EQ_STR(r.trace, "dump_wood dump_wood");
    CHECK_EQ_INT(soc_inv(env, 0, 0), 1);
    CHECK_EQ_INT(soc_grid(env, 0, 2 + 15 + 0, 2, 2), 2); /* the pile under the agent */
    r = start_run(env, "DUMP HAMMER.", 10);
    CHECK_EQ_STR(r.why, "dumped 1 hammer at (3, 3)");
    CHECK_EQ_STR(r.trace, "dump_hammer");
    refused(env, "DUMP hammer", PREFIX "DUMP: society: the agent holds no hammer");
    refused(env, "DUMP 2 wood", PREFIX "DUMP: society: the agent holds only 1 wood");
    refused(env, "DUMP 1 wod",
            PREFIX "DUMP: society: \"wod\" is not a resource (resources in play: wood, stone, "
                   "hammer, coal, torch, iron, steel, shovel, pickaxe, gem_mine, clay, pottery, "
                   "cutter, gem, totem)");
    refused(env, "DUMP", PREFIX "DUMP: society: expected DUMP <n> <resource>, got \"\"");
    refused(env, "DUMP 0 wood",
            PREFIX "DUMP: society: the count must be between 1 and 1000000, got 0");
    polis_env_destroy(env);
}

/* ---- GOTO --------------------------------------------------------------------------------- */

/* A 9x9 box (no wrap) with a wall at y = 4 from x = 1 to 6: the only gap is (7, 4). */
#define WALL "{\"positions\": [[1, 4], [2, 4], [3, 4], [4, 4], [5, 4], [6, 4], [1, 2], [2, 1]]}"

static void test_goto(void)
{
    polis_env *env = world(BOX9, "{\"fov\": 2}", "4, 2", ", \"blocks\": [" WALL "]", "", 1, NULL);
    if (!env) return;
    /* Around the wall: down to x = 7 (3), right through the gap to y = 6 (4), up to x = 4 (3). */
    run r = start_run(env, "GOTO 4 6", 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "arrived at (4, 6)");
    CHECK_EQ_INT(r.ticks, 10);
    CHECK_EQ_STR(r.trace, "move_down move_down move_down move_right move_right move_right "
                          "move_up move_up move_up move_right");
    CHECK_EQ_INT(soc_pos(env, 0, 0), 4);
    CHECK_EQ_INT(soc_pos(env, 0, 1), 6);
    /* Already there: done at once. Other spellings of the coordinates. */
    r = start_run(env, "goto 4 6", 5);
    CHECK_EQ_INT(r.ticks, 0);
    CHECK_EQ_STR(r.why, "arrived at (4, 6)");
    r = start_run(env, "GOTO (4, 5)", 5);
    CHECK_EQ_STR(r.why, "arrived at (4, 5)");
    CHECK_EQ_STR(r.trace, "move_left");
    refused(env, "GOTO 4 4", PREFIX "GOTO: society: (4, 4) is a block");
    refused(env, "GOTO 0 3", PREFIX "GOTO: society: (0, 3) is a block");
    refused(env, "GOTO 1 1", PREFIX "GOTO: society: (1, 1) cannot be reached from (4, 5)");
    refused(env, "GOTO 9 2",
            PREFIX "GOTO: society: (9, 2) is outside the 9x9 map (0 <= x < 9, 0 <= y < 9)");
    refused(env, "GOTO -1 2",
            PREFIX "GOTO: society: (-1, 2) is outside the 9x9 map (0 <= x < 9, 0 <= y < 9)");
    refused(env, "GOTO 3", PREFIX "GOTO: society: expected two integers x y, got \"3\"");
    refused(env, "GOTO a b", PREFIX "GOTO: society: expected two integers x y, got \"a b\"");
    refused(env, "GOTO 1 2 3", PREFIX "GOTO: society: expected two integers x y, got \"1 2 3\"");
    polis_env_destroy(env);

    /* Another agent stands in the gap: the plan walks up to it and waits; with patience 3 it
     * gives up after three ticks without getting closer. */
    env = world(BOX9, "{\"fov\": 2}", "[4, 2], [7, 4]", ", \"blocks\": [" WALL "]",
                ", \"plan_patience\": 3", 2, NULL);
    if (!env) return;
    r = start_run(env, "GOTO 4 6", 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(r.why, "no progress towards (4, 6) for 3 ticks: at (7, 3), 6 steps away, the "
                        "way blocked by other agents");
    CHECK_EQ_STR(r.trace, "move_down move_down move_down move_right move_right move_right "
                          "move_right");
    polis_env_destroy(env);

    /* On a torus an agent blocking the direct way is walked around: agent 1 at (3, 4) is
     * between agent 0 at (3, 3) and (3, 5); the plan sidesteps (up, right, right, down). */
    env = world(BLANK7, "{\"fov\": 2}", "[3, 3], [3, 4]", "", "", 2, NULL);
    if (!env) return;
    r = start_run(env, "GOTO 3 5", 50);
    CHECK_EQ_STR(r.why, "arrived at (3, 5)");
    CHECK_EQ_INT(r.ticks, 4);
    CHECK_EQ_STR(r.trace, "move_up move_right move_right move_down");
    polis_env_destroy(env);
}

/* ---- CRAFT -------------------------------------------------------------------------------- */

static void test_craft(void)
{
    /* A hammer station two cells right: walk, produce. */
    polis_env *env =
        one("{\"fov\": 2, \"inventory\": {\"wood\": 2, \"stone\": 2}}", 3, 3,
            ", \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [3, 5]}]", "");
    if (!env) return;
    run r = start_run(env, "CRAFT 1 HAMMER.", 20);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "crafted 1 hammer");
    CHECK_EQ_STR(r.trace, "move_right move_right produce");
    CHECK_EQ_INT(soc_inv(env, 0, 2), 1);
    /* By the recipe's name; then the inputs run out. */
    r = start_run(env, "CRAFT hammer_craft", 20);
    CHECK_EQ_STR(r.why, "crafted 1 hammer");
    CHECK_EQ_STR(r.trace, "produce");
    refused(env, "CRAFT hammer",
            PREFIX "CRAFT: society: missing inputs for hammer_craft: wood 1, stone 1 (needs "
                   "wood 1, stone 1)");
    refused(env, "CRAFT torch",
            PREFIX "CRAFT: society: cannot see or use torch_craft: it requires coal 1");
    refused(env, "CRAFT wood", PREFIX "CRAFT: society: no recipe makes wood");
    refused(env, "CRAFT hamer",
            PREFIX "CRAFT: society: \"hamer\" is neither a resource nor a recipe");
    refused(env, "CRAFT 0 hammer",
            PREFIX "CRAFT: society: the count must be between 1 and 1000000, got 0");
    refused(env, "CRAFT", PREFIX "CRAFT: society: expected CRAFT <n> <item>, got \"\"");
    polis_env_destroy(env);

    /* Inputs for one hammer, not two; a capacity of one hammer. */
    env = one("{\"fov\": 2, \"capacity\": {\"hammer\": 1}, \"inventory\": {\"wood\": 3, "
              "\"stone\": 1}}",
              3, 3, ", \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [3, 3]}]", "");
    if (!env) return;
    refused(env, "CRAFT 2 hammer",
            PREFIX "CRAFT: society: missing inputs for hammer_craft: stone 1 (needs wood 2, "
                   "stone 2)");
    r = start_run(env, "CRAFT 1 hammer", 5);
    CHECK_EQ_STR(r.trace, "produce");
    CHECK_EQ_STR(r.why, "crafted 1 hammer");
    polis_env_destroy(env);
    env = one("{\"fov\": 2, \"capacity\": {\"hammer\": 1}, \"inventory\": {\"wood\": 3, "
              "\"stone\": 3, \"hammer\": 1}}",
              3, 3, ", \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [3, 3]}]", "");
    if (!env) return;
    refused(env, "CRAFT hammer",
            PREFIX "CRAFT: society: cannot hold the results of hammer_craft: 2 hammer, capacity 1");
    polis_env_destroy(env);

    /* Custom recipes: one without outputs, one that needs room in the job's size. */
    env = one("{\"fov\": 2, \"size\": 2, \"inventory\": {\"wood\": 2}}", 3, 3, "",
              ", \"recipes\": {\"burn\": {\"in\": {\"wood\": 1}, \"out\": {}},"
              " \"split\": {\"in\": {\"wood\": 1}, \"out\": {\"stone\": 2}}}");
    if (!env) return;
    refused(env, "CRAFT burn", PREFIX "CRAFT: society: the recipe burn makes nothing");
    refused(env, "CRAFT split",
            PREFIX "CRAFT: society: cannot hold the results of split: 3 units, the size of its "
                   "job smith");
    polis_env_destroy(env);

    /* No station in view: it explores and gives up after plan_patience ticks. */
    env = one("{\"fov\": 1, \"inventory\": {\"wood\": 1, \"stone\": 1}}", 0, 0, "",
              ", \"plan_patience\": 5");
    if (!env) return;
    r = start_run(env, "CRAFT hammer", 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(r.why, "no station making hammer found in 5 ticks of exploring (crafted 0 of 1)");
    CHECK_EQ_INT(r.ticks, 5);
    polis_env_destroy(env);
}

/* ---- EXPLORE ------------------------------------------------------------------------------ */

static void test_explore(void)
{
    /* Nothing to find: walks the default 20 ticks (moves only), then done. */
    polis_env *env = world(BOX9, "{\"fov\": 1}", "4, 4", "", "", 1, NULL);
    if (!env) return;
    run r = start_run(env, "EXPLORE MAP", 100);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "explored for 20 ticks; nothing new in view");
    CHECK_EQ_INT(r.ticks, 20);
    CHECK(strstr(r.trace, "noop") == NULL);
    r = start_run(env, "explore 3", 100);
    CHECK_EQ_STR(r.why, "explored for 3 ticks; nothing new in view");
    refused(env, "EXPLORE the map",
            PREFIX "EXPLORE: society: expected EXPLORE [MAP] [<ticks>], got \"the map\"");
    refused(env, "EXPLORE MAP 0",
            PREFIX "EXPLORE: society: the number of ticks must be between 1 and 1000000, got 0");
    polis_env_destroy(env);

    /* A pile out of view ends it as soon as it comes into view; a pile in view at the start
     * does not count. */
    env = world(BOX9, "{\"fov\": 1}", "2, 2",
                ", \"resources\": [{\"name\": \"wood\", \"positions\": [[6, 6], [2, 3]], "
                "\"num\": [4, 1]}]",
                ", \"plan_explore_ticks\": 200", 1, NULL);
    if (!env) return;
    r = start_run(env, "EXPLORE", 300);
    CHECK_EQ_INT(r.state, POLIS_PLAN_DONE);
    CHECK_EQ_STR(r.why, "found 4 wood at (6, 6)");
    CHECK(r.ticks >= 6);
    polis_env_destroy(env);

    /* A station counts too. */
    env = world(BOX9, "{\"fov\": 1}", "2, 2",
                ", \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [6, 6]}]",
                ", \"plan_explore_ticks\": 200", 1, NULL);
    if (!env) return;
    r = start_run(env, "EXPLORE", 300);
    CHECK_EQ_STR(r.why, "found a hammer_craft station at (6, 6)");
    polis_env_destroy(env);

    /* A window as large as the map: nothing can be new; it walks to the end. */
    env = world(BLANK7, "{\"fov\": 3}", "3, 3",
                ", \"resources\": [{\"name\": \"wood\", \"positions\": [0, 0], \"num\": 1}]", "", 1,
                NULL);
    if (!env) return;
    r = start_run(env, "EXPLORE 12", 100);
    CHECK_EQ_STR(r.why, "explored for 12 ticks; nothing new in view");
    CHECK(strstr(r.trace, "noop") == NULL);
    polis_env_destroy(env);

    /* Walled in: nowhere to go. */
    env = world(BOX9, "{\"fov\": 1}", "1, 1", ", \"blocks\": [" WALL "]", "", 1, NULL);
    if (!env) return;
    r = start_run(env, "EXPLORE", 10);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(r.why, "nowhere to explore: no other cell can be reached from (1, 1)");
    CHECK_EQ_INT(r.ticks, 0);
    polis_env_destroy(env);
}

/* ---- the kernel's side of a command ---------------------------------------------------------- */

static void test_listing(void)
{
    polis_env *env = one("{\"fov\": 2}", 3, 3, "", "");
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 5);
    const char *names[] = {"GATHER", "CRAFT", "EXPLORE", "DUMP", "GOTO"};
    for (int i = 0; i < 5; i++) CHECK_EQ_STR(polis_env_macro_name(env, i), names[i]);
    CHECK_EQ_STR(polis_env_macro_usage(env, 0), "GATHER [<n>] <resource>");
    CHECK_EQ_STR(polis_env_macro_usage(env, 4), "GOTO <x> <y>");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "FLY 3 3"), POLIS_ERR_ACTION);
    CHECK_EQ_STR(polis_env_error(env),
                 PREFIX "unknown macro \"FLY\" (macros: GATHER, CRAFT, EXPLORE, DUMP, GOTO)");
    polis_env_destroy(env);
}

/* ---- long runs: every agent planning ----------------------------------------------------------
 */

typedef struct tally {
    long running, done, impossible, refused, illegal;
    uint64_t hash;
} tally;

/* Plays `ticks` steps of a scenario with every agent following plans: an agent without a
 * plan starts the next command of a rotation (GOTO to a cell drawn from a local generator);
 * the kernel checks every action against the mask. */
static tally plan_everyone(const char *path, uint64_t seed, int ticks, test_alloc *al,
                           long *alloc_calls)
{
    tally t = {0};
    polis_options o = test_options(NULL, al);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        CHECK(0);
        return t;
    }
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    if (alloc_calls && al) *alloc_calls = al->calls;
    polis_io *io = (polis_io *)polis_env_io(env);
    int32_t n = io->n_agents;
    const char *cmds[] = {"GATHER 2 wood", "CRAFT 1 hammer", "EXPLORE MAP",   "GATHER 1 stone",
                          "DUMP 1 wood",   "GOTO",           "GATHER 1 coal", "CRAFT torch"};
    int ncmd = (int)(sizeof cmds / sizeof cmds[0]);
    int next_cmd[64] = {0};
    uint64_t lcg = seed * 6364136223846793005ULL + 1;
    for (int step = 0; step < ticks && !polis_env_done(env); step++) {
        for (int32_t a = 0; a < n; a++) {
            io->actions[a] = 0;
            if (io->terminations[a] || io->truncations[a]) continue;
            for (int tries = 0; tries < ncmd && !polis_env_plan_command(env, a); tries++) {
                char cmd[64];
                const char *c = cmds[next_cmd[a] % ncmd];
                next_cmd[a]++;
                if (strcmp(c, "GOTO") == 0) {
                    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
                    snprintf(cmd, sizeof cmd, "GOTO %d %d", (int)((lcg >> 33) % 20),
                             (int)((lcg >> 45) % 20));
                    c = cmd;
                }
                polis_status st = polis_env_plan_start(env, a, c);
                if (st == POLIS_ERR_ACTION)
                    t.refused++;
                else
                    CHECK_EQ_INT(st, POLIS_OK);
            }
            if (!polis_env_plan_command(env, a)) continue;
            polis_plan_state s;
            int32_t act = 0;
            const char *why;
            polis_status st = polis_env_plan_next(env, a, &s, &act, &why);
            if (st != POLIS_OK) {
                fprintf(stderr, "%s: plan_next: %s\n", path, polis_env_error(env));
                CHECK(0);
                polis_env_destroy(env);
                return t;
            }
            if (s == POLIS_PLAN_RUNNING) {
                t.running++;
                if (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)act]) t.illegal++;
                io->actions[a] = act;
            } else if (s == POLIS_PLAN_DONE) {
                t.done++;
            } else {
                t.impossible++;
            }
        }
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "%s: step: %s\n", path, polis_env_error(env));
            CHECK(0);
            break;
        }
        for (int32_t a = 0; a < n; a++) t.illegal += io->illegal[a];
        t.hash = t.hash * 31 + polis_env_state_hash(env);
    }
    if (alloc_calls && al) *alloc_calls = al->calls - *alloc_calls;
    polis_env_destroy(env);
    return t;
}

/* Contract's formation stage masks every physical action: a plan started at the reset waits
 * with noop for the 20 formation steps, then walks. */
static void test_masked(void)
{
    polis_options o = test_options(NULL, NULL);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(POLIS_SOURCE_DIR "/rulesets/contract/contract.json", &o, &env,
                              &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "GOTO %d %d", soc_pos(env, 0, 0), (soc_pos(env, 0, 1) + 3) % 7);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, cmd), POLIS_OK);
    run r = run_plan(env, 0, 21);
    CHECK_EQ_INT(r.state, POLIS_PLAN_RUNNING);
    CHECK_EQ_INT(r.ticks, 21);
    char want[512] = "";
    for (int i = 0; i < 20; i++) strcat(want, "noop ");
    CHECK(strncmp(r.trace, want, strlen(want)) == 0);
    CHECK(strncmp(r.trace + strlen(want), "move_", 5) == 0);
    polis_env_destroy(env);

    /* With little patience a plan gives up while it waits, and says why. */
    o.overrides =
        "{\"plugins.society.params.plan_patience\": 5,"
        " \"plugins.society.params.jobs.carpenter.inventory\": {\"wood\": 2, \"stone\": 1}}";
    if (polis_env_create_file(POLIS_SOURCE_DIR "/rulesets/contract/contract.json", &o, &env,
                              &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "GATHER 1 wood"), POLIS_OK);
    r = run_plan(env, 0, 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(r.why,
                 "no progress for 5 ticks: the agent's actions are masked (gathered 0 of 1)");
    CHECK_EQ_STR(r.trace, "noop noop noop noop noop");
    snprintf(cmd, sizeof cmd, "GOTO %d %d", soc_pos(env, 0, 0), (soc_pos(env, 0, 1) + 3) % 7);
    CHECK_EQ_INT(polis_env_plan_start(env, 0, cmd), POLIS_OK);
    r = run_plan(env, 0, 50);
    CHECK_EQ_INT(r.state, POLIS_PLAN_IMPOSSIBLE);
    CHECK_CONTAINS(r.why, "for 5 ticks: at (");
    CHECK_CONTAINS(r.why, "3 steps away, the agent's moves are masked");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "DUMP 1 wood"), POLIS_OK);
    r = run_plan(env, 0, 50);
    CHECK_EQ_STR(r.why, "dump_wood was not allowed for 5 ticks (dumped 0 of 1)");
    CHECK_EQ_STR(r.trace, "noop noop noop noop noop");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "CRAFT hammer"), POLIS_OK);
    r = run_plan(env, 0, 50);
    CHECK_EQ_STR(r.why, "no progress for 5 ticks: the agent's actions are masked (crafted 0 of 1)");
    polis_env_destroy(env);
}

static void test_scenarios(void)
{
    const char *paths[] = {POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json",
                           POLIS_SOURCE_DIR "/rulesets/contract/contract.json"};
    for (int i = 0; i < 2; i++) {
        tally a = plan_everyone(paths[i], 7, 400, NULL, NULL);
        fprintf(stderr, "%s: %ld plan actions, %ld done, %ld impossible, %ld refused\n", paths[i],
                a.running, a.done, a.impossible, a.refused);
        CHECK_EQ_INT(a.illegal, 0);
        CHECK(a.running > 100);
        CHECK(a.done > 10);
        /* Determinism: the same seed, the same episode. */
        tally b = plan_everyone(paths[i], 7, 400, NULL, NULL);
        CHECK(a.hash == b.hash);
        CHECK_EQ_INT(a.done, b.done);
        tally c = plan_everyone(paths[i], 8, 400, NULL, NULL);
        CHECK(a.hash != c.hash);
    }
    /* Nothing allocates while planning. */
    test_alloc al = {0};
    long calls = -1;
    plan_everyone(paths[0], 9, 300, &al, &calls);
    CHECK_EQ_INT(calls, 0);
    CHECK_EQ_INT(al.live, 0);
}

int main(void)
{
    test_listing();
    test_gather();
    test_dump();
    test_goto();
    test_craft();
    test_explore();
    test_masked();
    test_scenarios();
    CHECK_DONE();
}
