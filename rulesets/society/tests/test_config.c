/* Configuration: AdaSociety's own files imported (main.json naming task, job, resource and
 * event files; repeated __COMMENT__ and repeated keys; a map file; cyclic static entries;
 * capacities from "max"; max_length), and bad configs refused with the exact place. */
#include "fixture.h"
#include <sys/stat.h>
#include <unistd.h>

/* Relative file names in params resolve against the scenario's directory (fixture.h sets it
 * to this tests directory); messages name the resolved file. */
#define ADA "adasociety/config"
#define ADA_FULL POLIS_SOURCE_DIR "/rulesets/society/tests/adasociety/config"

static polis_env *open_ada(const char *main, int agents, const char *more, test_log *log)
{
    char params[1024];
    snprintf(params, sizeof params, "{\"adasociety\": \"%s/%s\"%s}", ADA, main, more);
    char *json = soc_scenario(agents, 1000, params, "");
    polis_env *env = soc_open(json, log, NULL);
    free(json);
    return env;
}

static void test_contract_like(void)
{
    polis_env *env = open_ada("main.json", 4, "", NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    /* in play: wood, stone and hammer (hammer_craft's output; the hammer entry places
     * nothing): 1 + 4 moves + produce + 3 picks + 3 dumps */
    CHECK_EQ_INT(polis_env_n_actions(env), 12);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[0], 2 + 2 * 3);
    /* the carpenter's fov 3 (the repeated key's last value; the players entry's "fov" 1 is
     * ignored, as in AdaSociety) */
    CHECK_EQ_INT(f.shape[1], 7);
    CHECK_EQ_INT(f.shape[2], 7);
    polis_env_reset(env, 5);
    /* the miner starts with its hammer; carpenters with nothing */
    CHECK_EQ_INT(soc_inv(env, 2, 2), 1);
    CHECK_EQ_INT(soc_inv(env, 0, 2), 0);
    /* 41 stations on a 7 x 7 map: count them through the agents' full-map views */
    int steps = 0;
    while (!polis_env_done(env)) {
        CHECK_EQ_INT(soc_step(env, (const char *[]){NULL, NULL, NULL, NULL}), POLIS_OK);
        steps++;
        if (steps > 200) break;
    }
    CHECK_EQ_INT(steps, 120); /* the task's max_length */
    CHECK_EQ_INT(io->truncations[0], 1);
    CHECK_EQ_INT(io->terminations[0], 0);
    polis_env_destroy(env);

    /* terminate_at_limit reports both, as AdaSociety does */
    env = open_ada("main.json", 4, ", \"terminate_at_limit\": true", NULL);
    if (!env) return;
    io = polis_env_io(env);
    polis_env_reset(env, 5);
    for (int t = 0; t < 120; t++) soc_step(env, (const char *[]){NULL, NULL, NULL, NULL});
    CHECK(polis_env_done(env));
    CHECK_EQ_INT(io->truncations[3], 1);
    CHECK_EQ_INT(io->terminations[3], 1);
    polis_env_destroy(env);
}

/* Capacities of AdaSociety jobs: a resource missing from "max" has capacity 0 (the miner
 * cannot hold wood), the carpenter holds at most one hammer. */
static void test_contract_capacities(void)
{
    polis_env *env = open_ada("main.json", 4, "", NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    /* Walk every agent around until each has stood on wood; check the masks there. */
    int miner_on_wood = 0, carpenter_on_wood = 0;
    for (uint64_t seed = 0; seed < 20; seed++) {
        polis_env_reset(env, seed);
        for (int t = 0; t < 30; t++) {
            for (int a = 0; a < 4; a++) {
                int x = soc_pos(env, a, 0), y = soc_pos(env, a, 1);
                (void)x;
                (void)y;
                int on_wood = soc_grid(env, a, 2 + 3 + 0, 3, 3) > 0;
                if (!on_wood) continue;
                if (a >= 2) {
                    miner_on_wood++;
                    CHECK_EQ_INT(soc_mask(env, a, "pick_wood"), 0);
                } else {
                    carpenter_on_wood++;
                    CHECK_EQ_INT(soc_mask(env, a, "pick_wood"), 1);
                }
            }
            soc_step(env, (const char *[]){t % 2 ? "move_down" : "move_right", "move_right",
                                           "move_down", "move_left"});
            for (int a = 0; a < 4; a++) CHECK_EQ_INT(io->illegal[a], 0);
        }
    }
    CHECK(miner_on_wood > 0);
    CHECK(carpenter_on_wood > 0);
    polis_env_destroy(env);
}

static void test_static_map(void)
{
    test_log log = {0};
    polis_env *env = open_ada("main_static.json", 2, "", &log);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_CONTAINS(log.text, "task/static_map.json: requests: ignoring unknown key");
    const polis_io *io = polis_env_io(env);
    /* in play, canonical order: wood, gem_mine, cutter, gem */
    CHECK_EQ_INT(soc_action(env, "pick_wood"), 6);
    CHECK_EQ_INT(soc_action(env, "pick_gem_mine"), 7);
    CHECK_EQ_INT(soc_action(env, "pick_cutter"), 8);
    CHECK_EQ_INT(soc_action(env, "pick_gem"), 9);
    for (uint64_t seed = 0; seed < 8; seed++) {
        polis_env_reset(env, seed);
        /* the map file's border is blocks; (0, 0) is a block seen by agent 0 at (1, 1) */
        CHECK_EQ_INT(soc_grid(env, 0, 1, 0, 0), 1);
        CHECK_EQ_INT(soc_grid(env, 0, 1, 1, 1), 0);
        /* cyclic expansion: gem_mine on (1,1) and (2,1), wood on (1,2); 3 units each */
        CHECK_EQ_INT(soc_grid(env, 0, 2 + 4 + 1, 1, 1), 3);
        CHECK_EQ_INT(soc_grid(env, 0, 2 + 4 + 1, 2, 1), 3);
        CHECK_EQ_INT(soc_grid(env, 0, 2 + 4 + 0, 1, 2), 3);
        /* exactly one random block, on (3, 1) or (3, 2), seen by agent 1 at (2, 2) */
        int b1 = soc_grid(env, 1, 1, 2, 0), b2 = soc_grid(env, 1, 1, 2, 1);
        CHECK_EQ_INT(b1 + b2, 1);
    }
    /* AdaSociety's event.json: gem_craft consumes the cutter too */
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 0); /* no gem_mine yet: the station is unseen */
    soc_step(env, (const char *[]){"pick_gem_mine", NULL});
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);
    soc_step(env, (const char *[]){"produce", NULL});
    CHECK_EQ_INT(soc_inv(env, 0, 3), 1);
    CHECK_EQ_INT(soc_inv(env, 0, 2), 0);
    CHECK(io->rewards[0] == 200.0f - 100.0f - 4.0f);
    polis_env_destroy(env);
}

/* A map file's rows are kept as written (leading spaces are cells) and short rows padded. */
static void test_ragged_map(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"map_file\", \"file_path\": "
        "\"maps/ragged.map\"},"
        " \"view\": \"map\", \"resources_in_play\": \"all\", \"jobs\": {\"seer\": {\"fov\": [2, "
        "1]}},"
        " \"static\": {\"players\": [{\"job\": \"seer\", \"positions\": [0, 0]}]}}";
    char *json = soc_scenario(1, 10, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[1], 4); /* W: the longest row */
    CHECK_EQ_INT(f.shape[2], 2); /* H: two rows */
    /* (x, y) lands at ((x + 2) % 4, (y + 1) % 2); blocks at (2, 0), (3, 0), (0, 1) */
    static const int want[4][2] = {{0, 1}, {0, 1}, {1, 0}, {0, 0}}; /* [x][y] of the view */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) CHECK_EQ_INT(soc_grid(env, 0, 1, i, j), want[i][j]);
    polis_env_destroy(env);
}

/* Every key of AdaSociety's format at once (main.json: task, render, job, resource, event,
 * __COMMENT__; the task: agent, env_handler, base_map with a map file whose rows carry
 * leading and trailing blanks, static with social, social_schedule, communication_length,
 * stackable and a NON-EMPTY blocks list, random with every entry kind, max_length, the
 * social rule lists, contract, negotiation and negotiation_steps). The world is checked cell
 * by cell, and is the same as with an empty static.blocks: AdaSociety places no static
 * blocks. Agent 0 (the static carpenter at (1, 2)) sees the 6 x 5 map centred on itself. */
static int every_cell(polis_env *env, int c, int x, int y)
{
    return soc_grid(env, 0, c, (x - 1 + 3 + 6) % 6, (y - 2 + 2 + 5) % 5);
}

static void test_every_key(void)
{
    test_log log = {0};
    polis_env *env = open_ada("main_every_key.json", 2, ", \"view\": \"map\"", &log);
    polis_env *same = open_ada("main_every_key_empty.json", 2, ", \"view\": \"map\"", NULL);
    CHECK(env != NULL);
    CHECK(same != NULL);
    if (!env || !same) return;
    CHECK_CONTAINS(log.text, "every_key.json: static.blocks: ignored, as AdaSociety ignores it");
    CHECK(strstr(log.text, "ignoring unknown key") == NULL); /* every key is known */
    /* in play: wood, stone, hammer: 1 + 4 moves + produce + 3 picks + 3 dumps */
    CHECK_EQ_INT(polis_env_n_actions(env), 12);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[0], 2 + 2 * 3);
    CHECK_EQ_INT(f.shape[1], 6); /* the stripped rows are 6 wide ("size" 32 x 32 is ignored) */
    CHECK_EQ_INT(f.shape[2], 5); /* 5 rows: blank and comment lines skipped */
    const polis_io *io = polis_env_io(env);
    for (uint64_t seed = 0; seed < 12; seed++) {
        polis_env_reset(env, seed);
        polis_env_reset(same, seed);
        CHECK_EQ_INT(soc_pos(env, 0, 0), 1);
        CHECK_EQ_INT(soc_pos(env, 0, 1), 2);
        CHECK_EQ_INT(soc_inv(env, 1, 2), 1); /* the miner's initial hammer (job.json "init") */
        int inner_blocks = 0, wood = 0, stone = 0;
        for (int x = 0; x < 6; x++)
            for (int y = 0; y < 5; y++) {
                int border = x == 0 || x == 5 || y == 0 || y == 4;
                int b = every_cell(env, 1, x, y);
                if (border) CHECK_EQ_INT(b, 1);
                if (!border) inner_blocks += b;
                wood += every_cell(env, 2 + 3 + 0, x, y);
                stone += every_cell(env, 2 + 3 + 1, x, y);
            }
        CHECK_EQ_INT(inner_blocks, 1); /* random.blocks' single block, no static one */
        CHECK_EQ_INT(wood, 3 + 2 + 7); /* static 3 and 2, random "static" rule 7 */
        CHECK_EQ_INT(stone, 4 + 2);    /* static 4, random 2..2 */
        CHECK(every_cell(env, 2 + 3 + 0, 1, 1) >= 3);
        CHECK(every_cell(env, 2 + 3 + 1, 2, 1) >= 4);
        CHECK(every_cell(env, 2 + 3 + 0, 4, 3) >= 2);
        /* with "blocks": [] the world is the same, cell for cell */
        polis_obs_field g;
        const int16_t *a = soc_field(env, 0, "grid", &f);
        const int16_t *b = soc_field(same, 0, "grid", &g);
        CHECK(a && b && memcmp(a, b, f.nbytes) == 0);
    }
    int steps = 0;
    while (!polis_env_done(env) && steps < 50) {
        soc_step(env, (const char *[]){"move_right", "move_left"});
        steps++;
    }
    CHECK_EQ_INT(steps, 9); /* max_length */
    CHECK_EQ_INT(io->truncations[1], 1);
    polis_env_destroy(env);
    polis_env_destroy(same);
}

/* "jobs" in a polis scenario takes AdaSociety's job.json form too: a path to such a file
 * (relative to the scenario), or entries with "inventory": {"max", "size", "init", "score"}.
 * A resource missing from a present "max" has capacity 0 (the repository's miner). */
static void test_jobs_in_adasociety_form(void)
{
    static const char *const jobs[] = {
        "\"adasociety/config/common/job.json\"",
        ("{\"miner\": {\"fov\": 1, \"inventory\": {\"max\": {\"hammer\": 100}, "
         "\"init\": [{\"name\": \"hammer\", \"num\": 1}]}}}"),
        "{\"miner\": {\"fov\": 1, \"inventory\": {\"hammer\": 1}}}", /* polis's form */
    };
    for (int i = 0; i < 3; i++) {
        char params[1024];
        snprintf(params, sizeof params,
                 "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}}, "
                 "\"jobs\": %s, \"static\": {\"resources\": [{\"name\": \"wood\", "
                 "\"positions\": [0, 0], \"num\": 5}], \"recipes\": [{\"name\": "
                 "\"hammer_craft\", \"positions\": [2, 2]}], \"players\": [{\"job\": \"miner\", "
                 "\"positions\": [0, 0]}]}}",
                 jobs[i]);
        char *json = soc_scenario(1, 10, params, "");
        polis_env *env = soc_open(json, NULL, NULL);
        free(json);
        CHECK(env != NULL);
        if (!env) continue;
        polis_env_reset(env, 1);
        CHECK_EQ_INT(soc_inv(env, 0, 2), 1);                         /* the initial hammer */
        CHECK_EQ_INT(soc_mask(env, 0, "pick_wood"), i == 2 ? 1 : 0); /* max without wood: 0 */
        polis_env_destroy(env);
    }
    char *json = soc_scenario(1, 10,
                              "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": "
                              "3}}, \"jobs\": \"adasociety/nope.json\"}",
                              "");
    CHECK_CONTAINS(soc_error(json), "rulesets/society/tests/adasociety/nope.json: cannot read the "
                                    "file: No such file or directory");
    free(json);
    json = soc_scenario(1, 10,
                        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}}, "
                        "\"jobs\": {\"miner\": {\"fov\": 1, \"inventory\": {\"max\": {\"wod\": "
                        "1}}}}}",
                        "");
    CHECK_CONTAINS(soc_error(json), "plugins[0].params.jobs.miner.inventory.max.wod: \"wod\" is "
                                    "not a resource");
    free(json);
}

typedef struct bad {
    const char *params;
    const char *want;
} bad;

static void test_bad_configs(void)
{
    static const bad cases[] = {
        {"{}", "society: plugins[0].params.map: missing: give \"map\" (or \"adasociety\", an "
               "AdaSociety main.json)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"sise\": {\"x\": 3, \"y\": 3}}}",
         "society: plugins[0].params.map.sise: unknown key (expected one of init_rule, size, "
         "file_path)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"miner\": {\"size\": 2}}}",
         "society: plugins[0].params.jobs.miner: missing \"fov\""},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"miner\": {\"fov\": 1, \"sight\": 2}}}",
         "society: plugins[0].params.jobs.miner.sight: unknown key (expected one of fov, "
         "capacity, default_capacity, size, preference, score, inventory)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"miner\": [1]}}",
         "society: plugins[0].params.jobs.miner: expected an object"},
        {"{\"map\": {\"init_rule\": \"round\", \"size\": {\"x\": 3, \"y\": 3}}}",
         "society: plugins[0].params.map.init_rule: expected \"blank\", \"box\" or "
         "\"map_file\", got \"round\""},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 0, \"y\": 3}}}",
         "plugins[0].params.map.size.x: expected integer in [1, 4096], got 0"},
        {"{\"map\": {\"init_rule\": \"map_file\", \"file_path\": \"no/such.map\"}}",
         "society: plugins[0].params.map.file_path: cannot read the map file \"" POLIS_SOURCE_DIR
         "/rulesets/society/tests/no/such.map\": No such file or directory"},
        {"{\"map\": {\"init_rule\": \"map_file\", \"file_path\": \"/dev/zero\"}}",
         "society: plugins[0].params.map.file_path: cannot read the map file \"/dev/zero\": not "
         "a regular file (a device or socket)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": 1, \"repeat\": 1},"
         "                            {\"name\": \"wod\", \"num\": 1, \"repeat\": 1}],"
         "            \"players\": [{\"job\": \"explorer\"}]}}",
         "society: plugins[0].params.random.resources[1].name: \"wod\" is not a resource"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": 1, \"repeat\": 1}],"
         "            \"players\": [{\"job\": \"explorer\", \"repeat\": 2}]}}",
         "society: plugins[0].params.random: the static and random players are 2, but the "
         "scenario has 1 agents (\"agents\"); they must be equal"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"blocks\": 9, \"resources\": [{\"name\": \"wood\", \"num\": 1, "
         "\"repeat\": 1}],"
         "            \"players\": [{\"job\": \"explorer\"}]}}",
         "society: plugins[0].params.random: 1 random piles do not fit: 0 free cells after the "
         "blocks, 0 of them taken by static ones"},
        {"{\"map\": {\"init_rule\": \"box\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"static\": {\"players\": [{\"job\": \"explorer\", \"positions\": [0, 1]}]}}",
         "society: plugins[0].params.static.players[0].positions: (0, 1) is a block of the "
         "base map"},
        {"{\"map\": {\"init_rule\": \"box\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"static\": {\"resources\": [{\"name\": \"wood\", \"positions\": [[1, 1], [2, 1]], "
         "\"num\": 1}], \"players\": [{\"job\": \"explorer\", \"positions\": [1, 1]}]}}",
         "society: plugins[0].params.static.resources[0].positions[1]: (2, 1) is a block of the "
         "base map: no agent could ever stand there to pick this pile (AdaSociety places it "
         "anyway); move it to a free cell"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"static\": {\"players\": [{\"job\": \"explorer\", \"positions\": [0, 3]}]}}",
         "plugins[0].params.static.players[0].positions[1]: expected integer in [0, 2], got 3"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"static\": {\"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [[0, 0], [0, "
         "0]]}],"
         "            \"players\": [{\"job\": \"explorer\", \"positions\": [0, 1]}]}}",
         "society: plugins[0].params.static.recipes[0].positions[1]: (0, 0) already has a "
         "recipe station"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"cook\": {\"fov\": 1, \"capacity\": {\"wod\": 1}}},"
         " \"random\": {\"players\": [{\"job\": \"cook\"}]}}",
         "society: plugins[0].params.jobs.cook.capacity.wod: \"wod\" is not a resource "
         "(resources: wood, stone, hammer,"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"cook\": {\"fov\": 1, \"preference\": {\"wood\": 2}, \"score\": {\"wood\": "
         "3}}},"
         " \"random\": {\"players\": [{\"job\": \"cook\"}]}}",
         "society: plugins[0].params.jobs.cook.preference.wood: \"wood\" has both a preference "
         "and a score (the score is the unit value itself)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"jobs\": {\"cook\": {\"fov\": 1, \"capacity\": {\"wood\": 1}, \"inventory\": "
         "{\"wood\": 2}}},"
         " \"random\": {\"players\": [{\"job\": \"cook\"}]}}",
         "society: plugins[0].params.jobs.cook: job \"cook\" starts with 2 wood, above its "
         "capacity 1"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": {\"rule\": \"loop\"}, "
         "\"repeat\": 1}], \"players\": [{\"job\": \"explorer\"}]}}",
         "society: plugins[0].params.random.resources[0].num.rule: expected \"static\" or "
         "\"random\", got \"loop\" (AdaSociety does not implement \"loop\" either)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": {\"rule\": \"random\", "
         "\"min\": 5, \"max\": 2}, \"repeat\": 1}], \"players\": [{\"job\": \"explorer\"}]}}",
         "society: plugins[0].params.random.resources[0].num.max: max 2 is below min 5"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}}, \"view\": "
         "\"wide\"}",
         "society: params.view: expected \"window\" or \"map\", got \"wide\""},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"resources\": {\"Food\": {\"score\": 1}}}",
         "society: plugins[0].params.resources.Food: invalid resource name (expected 1 to 63 "
         "characters from a-z, 0-9 and _)"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"recipes\": {\"stew\": {\"in\": {\"meat\": 1}, \"out\": {\"stew\": 1}}}}",
         "society: plugins[0].params.recipes.stew: inputs: \"meat\" is not a resource"},
        {"{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
         " \"random\": {\"players\": [{\"job\": \"explorer\"}]}}",
         "society: plugins[0].params.random: no resource is in play: the world places no pile "
         "and no station (set \"resources_in_play\": \"all\" to keep them all)"},
        {"{\"adasociety\": \"" ADA "/nope.json\"}",
         "society: " ADA_FULL "/nope.json: cannot read the file: No such file or directory"},
        {"{\"adasociety\": \"/dev/zero\"}",
         "society: /dev/zero: cannot read the file: not a regular file (a device or socket)"},
        {"{\"adasociety\": \"" ADA "/common\"}",
         "society: " ADA_FULL "/common: cannot read the file: not a regular file (a directory)"},
        {"{\"adasociety\": \"" ADA "/main.json\", \"map\": {}}",
         "society: plugins[0].params.map: \"map\", \"static\" and \"random\" come from the "
         "AdaSociety task file when \"adasociety\" is given; remove them"},
        {"{\"adasociety\": \"" ADA "/common/job.json\"}",
         "society: " ADA_FULL "/common/job.json: missing \"task\" (the task file)"},
        {"{\"adasociety\": \"adasociety/bad/main.json\"}",
         "society: " POLIS_SOURCE_DIR "/rulesets/society/tests/adasociety/bad/task.json:4:21: "
         "invalid JSON"},
        {"{\"adasociety\": \"adasociety/bad/main_array.json\"}",
         "society: " POLIS_SOURCE_DIR "/rulesets/society/tests/adasociety/bad/array_task.json: "
         "expected an object, got [{\"base_map\":{}}]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = soc_scenario(1, 50, cases[i].params, "");
        const char *e = soc_error(json);
        if (!strstr(e, cases[i].want)) fprintf(stderr, "case %zu:\n", i);
        CHECK_CONTAINS(e, cases[i].want);
        free(json);
    }
}

/* A FIFO named as an AdaSociety file or a map is refused at once, never waited on. */
static void test_fifo(void)
{
    char dir[] = "/tmp/polis_soc_fifoXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char fifo[64], params[160], want[160];
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
    snprintf(params, sizeof params, "{\"adasociety\": \"%s\"}", fifo);
    snprintf(want, sizeof want, "society: %s: cannot read the file: not a regular file (a FIFO)",
             fifo);
    char *json = soc_scenario(1, 50, params, "");
    CHECK_CONTAINS(soc_error(json), want);
    free(json);
    snprintf(params, sizeof params,
             "{\"map\": {\"init_rule\": \"map_file\", \"file_path\": \"%s\"}}", fifo);
    snprintf(want, sizeof want, "cannot read the map file \"%s\": not a regular file (a FIFO)",
             fifo);
    json = soc_scenario(1, 50, params, "");
    CHECK_CONTAINS(soc_error(json), want);
    free(json);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    test_fifo();
    test_contract_like();
    test_contract_capacities();
    test_static_map();
    test_ragged_map();
    test_every_key();
    test_jobs_in_adasociety_form();
    test_bad_configs();
    CHECK_DONE();
}
