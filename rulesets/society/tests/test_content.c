/* Custom content from the three sources — scenario JSON, a Lua script (society.define_*
 * exports during its load) and a .so plugin (the society service) — with overrides of
 * built-ins, the canonical order, and every refusal; a Lua rule built on the exports
 * (give, pile, set_pile) with its reward semantics. */
#include "fixture.h"

static const char *ONE_CELL_WORLD =
    "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
    " \"resources_in_play\": \"all\"";

static polis_env *open_with(const char *params, const char *extra, int agents, test_log *log)
{
    char *json = soc_scenario(agents, 50, params, extra);
    polis_env *env = soc_open(json, log, NULL);
    free(json);
    return env;
}

static const char *error_with(const char *params, const char *extra)
{
    char *json = soc_scenario(1, 50, params, extra);
    const char *e = soc_error(json);
    free(json);
    return e;
}

static void test_json_content(void)
{
    char params[2048];
    snprintf(
        params, sizeof params,
        "{%s, \"resources\": {\"berry\": {\"score\": 2, \"requirements\": {\"wood\": 1}},"
        "                   \"wood\": {\"score\": 5},"
        "                   \"jar\": {\"score\": 9, \"type\": \"synthetic\"}},"
        " \"recipes\": {\"jam\": {\"in\": {\"berry\": 2}, \"out\": {\"jar\": 1}}},"
        " \"static\": {\"resources\": [{\"name\": [\"wood\", \"berry\"], \"positions\": [0, 0],"
        "                             \"num\": [1, 2]}],"
        "             \"recipes\": [{\"name\": \"jam\", \"positions\": [0, 0]}],"
        "             \"players\": [{\"job\": \"explorer\", \"positions\": [0, 0]}]}}",
        ONE_CELL_WORLD);
    polis_env *env = open_with(params, "", 1, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    /* canonical order: the 15 built-ins (wood overridden in place), then berry, jar */
    CHECK_EQ_STR(polis_env_action_name(env, soc_action(env, "pick_wood")), "pick_wood");
    CHECK_EQ_INT(soc_action(env, "pick_berry"), soc_action(env, "pick_wood") + 15);
    CHECK_EQ_INT(soc_action(env, "pick_jar"), soc_action(env, "pick_wood") + 16);
    polis_env_reset(env, 1);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_berry"), 0); /* needs wood in hand */
    soc_step(env, (const char *[]){"pick_wood"});
    CHECK(io->rewards[0] == 5.0f); /* the scenario's wood is worth 5 */
    CHECK_EQ_INT(soc_mask(env, 0, "pick_berry"), 1);
    soc_step(env, (const char *[]){"pick_berry"});
    soc_step(env, (const char *[]){"pick_berry"});
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);
    soc_step(env, (const char *[]){"produce"});
    CHECK(io->rewards[0] == 5.0f); /* jar 9 - 2 berries 4 */
    CHECK_EQ_INT(soc_inv(env, 0, 16), 1);
    polis_env_destroy(env);
}

static void test_lua_content(void)
{
    char params[2048];
    snprintf(
        params, sizeof params,
        "{%s, \"static\": {\"resources\": [{\"name\": [\"food\", \"wood\"], \"positions\": [0, 0],"
        "                                 \"num\": [2, 1]}],"
        "                 \"recipes\": [{\"name\": \"cooking\", \"positions\": [0, 0]}],"
        "                 \"players\": [{\"job\": \"explorer\", \"positions\": [0, 0]}]}}",
        "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}}");
    test_log log = {0};
    polis_env *env = open_with(params, ", \"scripts\": [\"lua/food.lua\"]", 1, &log);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    /* resources_in_play "used": wood (placed), food (placed) and meal (cooking's output) */
    CHECK_EQ_INT(polis_env_n_actions(env), 1 + 4 + 1 + 2 * 3);
    polis_env_reset(env, 1);
    const char *seq[] = {"pick_food", "pick_food", "pick_wood", "produce"};
    const float want[] = {3, 3, 1, 10 - 6 - 1};
    for (int i = 0; i < 4; i++) {
        soc_step(env, (const char *[]){seq[i]});
        CHECK_EQ_INT(io->illegal[0], 0);
        CHECK(io->rewards[0] == want[i]);
    }
    CHECK_CONTAINS(log.text, "[food] agent 0 cooked at (0, 0) and holds 1 meal");
    polis_env_destroy(env);

    const char *e = error_with(params, ", \"scripts\": [{\"path\": \"lua/food.lua\", "
                                       "\"params\": {\"mode\": \"twice\"}}]");
    CHECK_CONTAINS(e, "plugin \"society\" start failed: society: resource \"food\" is defined "
                      "twice (run-time definition): by society.define_resource (call 1, "
                      "resource \"food\") and by society.define_resource (call 4, resource "
                      "\"food\")");
    e = error_with(params, ", \"scripts\": [{\"path\": \"lua/food.lua\", "
                           "\"params\": {\"mode\": \"unknown\"}}]");
    CHECK_CONTAINS(e, "society.define_recipe (call 3, recipe \"cooking\"): inputs: \"wod\" is "
                      "not a resource (resources: wood, stone,");
}

static void test_plugin_content(void)
{
    char params[2048];
    snprintf(
        params, sizeof params,
        "{%s, \"static\": {\"resources\": [{\"name\": [\"silk\", \"wood\"], \"positions\": [0, 0],"
        "                                 \"num\": [2, 1]}],"
        "                 \"recipes\": [{\"name\": \"weaving\", \"positions\": [0, 0]}],"
        "                 \"players\": [{\"job\": \"explorer\", \"positions\": [0, 0]}]}}",
        "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}}");
    char *full = soc_scenario_plugins(1, 50, params, ", \"resource_pack\"", "");
    polis_env *env = soc_open(full, NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        const polis_io *io = polis_env_io(env);
        polis_env_reset(env, 1);
        CHECK_EQ_INT(soc_mask(env, 0, "pick_silk"), 0);
        soc_step(env, (const char *[]){"pick_wood"});
        CHECK_EQ_INT(soc_mask(env, 0, "pick_silk"), 1);
        soc_step(env, (const char *[]){"pick_silk"});
        CHECK(io->rewards[0] == 7.0f);
        soc_step(env, (const char *[]){"pick_silk"});
        soc_step(env, (const char *[]){"produce"});
        CHECK(io->rewards[0] == 16.0f); /* cloth 30 - 2 silk 14 */
        polis_env_destroy(env);
    }
    free(full);
    full = soc_scenario_plugins(1, 50, params,
                                ", {\"name\": \"resource_pack\", \"params\": "
                                "{\"mode\": \"bad_spec\"}}",
                                "");
    CHECK_CONTAINS(soc_error(full), "plugin resource_pack (call 3, recipe \"weaving\"): inputs "
                                    "\"silk:two\": expected an amount in [1, 1000000000] at "
                                    "column 6");
    free(full);
    /* A pack defining in its start(), after society's: refused (the world here needs no silk,
     * so society starts fine and the pack's call is what fails). */
    full =
        soc_scenario_plugins(1, 50,
                             "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
                             " \"random\": {\"resources\": [{\"name\": \"wood\", \"num\": 1, "
                             "\"repeat\": 1}], \"players\": [{\"job\": \"explorer\"}]}}",
                             ", {\"name\": \"resource_pack\", \"params\": "
                             "{\"mode\": \"late\"}}",
                             "");
    CHECK_CONTAINS(soc_error(full), "the tables are frozen once society has started");
    free(full);
}

static void test_lua_rule(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
        " \"jobs\": {\"holder\": {\"fov\": 1, \"capacity\": {\"stone\": 50}}},"
        " \"static\": {\"resources\": [{\"name\": [\"wood\", \"stone\"], \"positions\": [0, 0],"
        "                             \"num\": [1, 1]}],"
        "             \"players\": [{\"job\": \"holder\", \"positions\": [[0, 0], [2, 2]]}]}}";
    test_log log = {0};
    polis_env *env = open_with(params, ", \"scripts\": [\"lua/gifts.lua\"]", 2, &log);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(soc_inv(env, 0, 1), 1); /* the reset gift */
    CHECK_EQ_INT(soc_inv(env, 1, 1), 1);
    CHECK_EQ_INT(soc_step(env, (const char *[]){NULL, NULL}), POLIS_OK);
    CHECK(io->rewards[0] == 0.0f && io->rewards[1] == 0.0f); /* gifts at reset are no reward */
    CHECK_EQ_INT(soc_step(env, (const char *[]){"pick_wood", NULL}), POLIS_OK);
    CHECK(io->rewards[0] == 2.0f); /* wood 1 + the bonus stone 1 */
    CHECK_EQ_INT(soc_inv(env, 0, 1), 2);
    CHECK_EQ_INT(soc_grid(env, 0, 2 + 2 + 0, 1, 1), 2); /* the pile grew back to 2 */
    polis_env_destroy(env);
}

int main(void)
{
    test_json_content();
    test_lua_content();
    test_plugin_content();
    test_lua_rule();
    CHECK_DONE();
}
