/* The JSON view in AdaSociety's format (Map / Player / Social.sharings), the text view for
 * LLM agents (pinned word for word), and the action parser: AdaSociety's JSON actions and
 * text actions. Shared map and player views come from a stand-in social service. */
#include <cjson/cJSON.h>

#include "fixture.h"

static const char *PARAMS =
    "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 6, \"y\": 6}},"
    " \"jobs\": {\"smith\": {\"fov\": 1, \"capacity\": {\"hammer\": 1}, \"preference\": {\"wood\": "
    "2},"
    "                        \"inventory\": {\"wood\": 1, \"stone\": 2}},"
    "            \"miner\": {\"fov\": [1, 2], \"inventory\": {\"hammer\": 1}, \"size\": 10}},"
    " \"static\": {\"blocks\": [{\"positions\": [0, 2]}],"
    "   \"resources\": [{\"name\": [\"wood\", \"stone\", \"coal\"], \"positions\": [[1, 1], [1, "
    "1], [4, 4]],"
    "                  \"num\": [3, 2, 5]}],"
    "   \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [1, 1]}],"
    "   \"players\": [{\"job\": \"smith\", \"positions\": [1, 1]}, {\"job\": \"miner\", "
    "\"positions\": [4, 3]}]}}";

static const char *TEXT_ADA =
    "You are ada (agent 0, job smith) at (1, 1). Step 0 of 50.\n"
    "The map is 6 x 6 and wraps around; move_up/move_down change x by -1/+1, move_left/move_right "
    "change y by -1/+1.\n"
    "Inventory: wood 1, stone 2.\n"
    "Value of one unit to you: wood 2, stone 1, hammer 5, coal 2.\n"
    "Capacity: hammer 1.\n"
    "You see 1 cell up/down and 1 left/right; also the view of bob at (4, 3) (1 up/down, 2 "
    "left/right), shared with you. Visible, nearest first (position, direction from you):\n"
    "- blocks: (0, 2) 1 up 1 right\n"
    "- wood piles: 3 at (1, 1) here\n"
    "- stone piles: 2 at (1, 1) here\n"
    "- coal piles: 5 at (4, 4) 3 up 3 left\n"
    "- station hammer_craft (1 wood + 1 stone -> 1 hammer): (1, 1) here\n"
    "- agents: bob at (4, 3) 3 up 2 right\n"
    "Legal actions: noop, move_up, move_down, move_left, move_right, produce, pick_wood, "
    "pick_stone, dump_wood, dump_stone.\n";

static const char *TEXT_BOB =
    "You are bob (agent 1, job miner) at (4, 3). Step 0 of 50.\n"
    "The map is 6 x 6 and wraps around; move_up/move_down change x by -1/+1, move_left/move_right "
    "change y by -1/+1.\n"
    "Inventory: hammer 1.\n"
    "Value of one unit to you: wood 1, stone 1, hammer 5, coal 2.\n"
    "Capacity: 10 units in all.\n"
    "You see 1 cell up/down and 2 left/right. Visible, nearest first (position, direction from "
    "you):\n"
    "- coal piles: 5 at (4, 4) 1 right\n"
    "Legal actions: noop, move_up, move_down, move_left, move_right, dump_hammer.\n";

static const char *JSON_ADA =
    "{\"episode_id\": 0, \"step_id\": 0, \"Map\": {\"block_grids\": [[0, 0, 1], [0, 0, 0], "
    "[0, 0, 0]], \"resources\": [{\"name\": \"wood\", \"position\": [1, 1], \"amount\": 3}, "
    "{\"name\": \"stone\", \"position\": [1, 1], \"amount\": 2}], \"events\": [{\"name\": "
    "\"hammer_craft\", \"position\": [1, 1]}], \"players\": []}, \"Player\": {\"id\": 0, "
    "\"name\": \"ada\", \"job\": \"smith\", \"position\": [1, 1], \"inventory\": [{\"name\": "
    "\"wood\", \"amount\": 1}, {\"name\": \"stone\", \"amount\": 2}]}, \"Social\": {\"sharings\": "
    "{\"1\": {\"Map\": {\"center\": [4, 3], \"block_grids\": [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], "
    "[0, 0, 0, 0, 0]], \"resources\": [{\"name\": \"coal\", \"position\": [4, 4], \"amount\": 5}], "
    "\"events\": [], \"players\": []}, \"Player\": {\"id\": 1, \"name\": \"bob\", \"job\": "
    "\"miner\", \"position\": [4, 3], \"inventory\": [{\"name\": \"hammer\", \"amount\": 1}]}}}}}";

static polis_env *open_render(void)
{
    size_t n = strlen(PARAMS) + 512;
    char *json = malloc(n);
    snprintf(
        json, n,
        "{\"agents\": {\"count\": 2, \"names\": [\"ada\", \"bob\"]}, \"max_steps\": 50,"
        " \"plugins\": [{\"name\": \"society\", \"params\": %s},"
        " {\"name\": \"fake_social\", \"params\": {\"map\": [[1, 0]], \"player\": [[1, 0]]}}]}",
        PARAMS);
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    return env;
}

static void test_views(void)
{
    polis_env *env = open_render();
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(polis_env_render_formats(env), "json text");
    polis_env_reset(env, 1);
    char *out = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_OK);
    CHECK_EQ_STR(out, TEXT_ADA);
    polis_free(out);
    CHECK_EQ_INT(polis_env_render(env, 1, "text", &out), POLIS_OK);
    CHECK_EQ_STR(out, TEXT_BOB);
    polis_free(out);
    CHECK_EQ_INT(polis_env_render(env, 0, "json", &out), POLIS_OK);
    cJSON *j = cJSON_Parse(out);
    CHECK(j != NULL);
    cJSON *mine = cJSON_GetObjectItemCaseSensitive(j, "society");
    char *mine_text = cJSON_PrintUnformatted(mine);
    cJSON *want = cJSON_Parse(JSON_ADA);
    char *want_text = cJSON_PrintUnformatted(want);
    CHECK_EQ_STR(mine_text, want_text);
    cJSON_free(mine_text);
    cJSON_free(want_text);
    cJSON_Delete(want);
    cJSON_Delete(j);
    polis_free(out);

    /* After a pick, produce and a move: step_id, inventory and the view follow. */
    soc_step(env, (const char *[]){"produce", "move_left"});
    CHECK_EQ_INT(polis_env_render(env, 0, "json", &out), POLIS_OK);
    CHECK_CONTAINS(out, "\"step_id\": 1,");
    CHECK_CONTAINS(out, "\"inventory\": [{\"name\": \"stone\", \"amount\": 1}, {\"name\": "
                        "\"hammer\", \"amount\": 1}]");
    CHECK_CONTAINS(out, "\"Map\": {\"center\": [4, 2]");
    polis_free(out);
    CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_OK);
    CHECK_CONTAINS(out, "(1, 1). Step 1 of 50.\n");
    CHECK_CONTAINS(out, "Inventory: stone 1, hammer 1.\n");
    CHECK_CONTAINS(out, "Legal actions: noop, move_up, move_down, move_left, move_right, "
                        "pick_wood, pick_stone, dump_stone, dump_hammer.\n");
    polis_free(out);
    /* episode_id counts the episodes (AdaSociety's was always 0) */
    polis_env_reset(env, 2);
    CHECK_EQ_INT(polis_env_render(env, 1, "json", &out), POLIS_OK);
    CHECK_CONTAINS(out, "{\"episode_id\": 1, \"step_id\": 0,");
    polis_free(out);
    polis_env_destroy(env);
}

typedef struct parse_case {
    const char *input;
    const char *action; /* NULL: refused */
    const char *error;  /* a substring of the error */
} parse_case;

static void test_parser(void)
{
    polis_env *env = open_render();
    if (!env) return;
    polis_env_reset(env, 1);
    static const parse_case cases[] = {
        {"pick wood", "pick_wood", NULL},
        {"Pick up wood.", "pick_wood", NULL},
        {"pick_by_name stone", "pick_stone", NULL},
        {"gather coal", "pick_coal", NULL},
        {"dump hammer", "dump_hammer", NULL},
        {"drop wood", "dump_wood", NULL},
        {"move up", "move_up", NULL},
        {"go right", "move_right", NULL},
        {"down", "move_down", NULL},
        {"move_left", "move_left", NULL},
        {"produce", "produce", NULL},
        {"wait", "noop", NULL},
        {"no_act", "noop", NULL},
        {"pick", "pick_wood", NULL}, /* legacy pick: the first visible pile here */
        {"{\"action\": \"pick_by_name\", \"kwargs\": {\"resource_name\": \"stone\"}}", "pick_stone",
         NULL},
        {"{\"action\": \"dump_by_name\", \"kwargs\": {\"resource_name\": \"wood\"}}", "dump_wood",
         NULL},
        {"{\"action\": \"move_up\"}", "move_up", NULL},
        {"{\"action\": \"no_act\"}", "noop", NULL},
        {"{\"action\": \"produce\"}", "produce", NULL},
        {"{\"action\": \"move\", \"kwargs\": {\"dx\": 0, \"dy\": -1}}", "move_left", NULL},
        {"\"move_right\"", "move_right", NULL},
        {"\"pick wood\"", "pick_wood", NULL},
        {"pick fod", NULL, "society: pick: \"fod\" is not a resource in play (agent 0)"},
        {"pick totem", NULL, "\"totem\" is not a resource in play"},
        {"pick wood now", NULL, "\"pick wood now\": expected \"pick <resource>\" (agent 0)"},
        {"{\"action\": \"pick_by_name\"}", NULL,
         "pick_by_name: expected \"kwargs\": {\"resource_name\": \"...\"} (agent 0)"},
        {"{\"action\": \"move\", \"kwargs\": {\"dx\": 2, \"dy\": 0}}", NULL,
         "move: polis moves one cell per step"},
        {"{\"action\": \"move\", \"kwargs\": {\"dx\": 1e300, \"dy\": -1e300}}", NULL,
         "move: polis moves one cell per step"},
        {"{\"action\": \"move\", \"kwargs\": {\"dx\": 0.5, \"dy\": 0}}", NULL,
         "move: polis moves one cell per step"},
        {"dance", NULL, "cannot parse action \"dance\""},
        {"{\"action\": \"add_relation\", \"kwargs\": {\"to_player_id\": 1}}", NULL,
         "cannot parse action"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t id = -1;
        polis_status st = polis_env_parse_action(env, 0, cases[i].input, &id);
        if (cases[i].action) {
            if (st != POLIS_OK) fprintf(stderr, "%s: %s\n", cases[i].input, polis_env_error(env));
            CHECK_EQ_INT(st, POLIS_OK);
            CHECK_EQ_INT(id, soc_action(env, cases[i].action));
        } else {
            CHECK(st != POLIS_OK);
            CHECK_CONTAINS(polis_env_error(env), cases[i].error);
        }
    }
    polis_env_destroy(env);
}

/* The view the looks register (recordings, the viewer, polis_pixels_draw with an agent)
 * is the field of view: the largest fov among the players' jobs, here smith's 1 and miner's
 * [1, 2]; a window-view scenario's too. */
static void test_look_view(void)
{
    polis_env *env = open_render();
    CHECK(env != NULL);
    if (!env) return;
    int32_t rx = -1, ry = -1, w = 0, h = 0;
    CHECK(polis_env_scene_view(env, &rx, &ry));
    CHECK_EQ_INT(rx, 1);
    CHECK_EQ_INT(ry, 2);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_size(env, 0, 4, &w, &h), POLIS_OK);
    CHECK_EQ_INT(w, 3 * 4);
    CHECK_EQ_INT(h, 5 * 4);
    polis_env_destroy(env);

    polis_options o = test_options(NULL, NULL);
    env = NULL;
    CHECK_EQ_INT(
        polis_env_create_file(POLIS_SOURCE_DIR "/rulesets/contract/contract.json", &o, &env, NULL),
        POLIS_OK);
    if (!env) return;
    CHECK(polis_env_scene_view(env, &rx, &ry));
    CHECK_EQ_INT(rx, 3);
    CHECK_EQ_INT(ry, 3);
    polis_env_destroy(env);
}

int main(void)
{
    test_views();
    test_look_view();
    test_parser();
    CHECK_DONE();
}
