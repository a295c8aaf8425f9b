/* Lua renderers and action parsers: polis.renderer and polis.action_parser go through the
 * same kernel registries as C ones. */
#include "check.h"
#include "testutil.h"

#define SCENARIO                                                                                   \
    "{\"agents\": 2, \"scripts\": [\"" POLIS_TEST_SOURCE_DIR "/scenarios/lua_views.lua\"]}"

int main(void)
{
    polis_env *env = test_env(SCENARIO, NULL, NULL);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();
    CHECK_EQ_STR(polis_env_render_formats(env), "json text");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    char *out = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_OK);
    CHECK_EQ_STR(out, "agent 0 at tick 1\nLegal actions: noop, wave.\n");
    polis_free(out);
    out = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "json", &out), POLIS_OK);
    CHECK_EQ_STR(out, "{\"lua_views\":{\"agent\": 0}}");
    polis_free(out);
    out = NULL;
    /* invalid JSON from a script is refused, naming it */
    CHECK(polis_env_render(env, 1, "json", &out) != POLIS_OK);
    CHECK_CONTAINS(polis_env_error(env), "lua_views");
    CHECK(out == NULL);

    int32_t id = -1;
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "wave hello", &id), POLIS_OK);
    CHECK_EQ_INT(id, polis_env_action_id(env, "wave"));
    CHECK_EQ_INT(polis_env_parse_action(env, 1, "act 0", &id), POLIS_OK);
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(polis_env_parse_action(env, 1, "wave", &id), POLIS_OK); /* a plain name */
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "act 7", &id), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "action parser: action id 7 is outside [0, 2)");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "explode", &id), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "lua_views.lua:18: cannot explode here");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "bad name", &id), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "no action named 'no_such_action'");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "bad type", &id), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "returned table, expected an action id");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "dance", &id), POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "cannot parse action \"dance\"");
    /* the env is unharmed by parse errors */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    polis_env_destroy(env);
    CHECK_DONE();
}
