/* polis_options beyond the allocator: scenario overrides (every rule and every message of
 * docs/scenario.md "Overrides"), no_observations, and hosts built with the older, shorter
 * polis_options. */
#include <stddef.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define GATHER POLIS_SOURCE_DIR "/rulesets/gather/gather.json"
#define GATHER_LUA POLIS_SOURCE_DIR "/rulesets/gather/gather_lua.json"

static polis_env *with_overrides(const char *ov, polis_error *err)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = ov;
    polis_env *env = NULL;
    if (polis_env_create_file(GATHER, &o, &env, err) != POLIS_OK) return NULL;
    return env;
}

/* The creation error for overrides `ov`, with the scenario's absolute path cut off. */
static const char *ov_error(const char *ov)
{
    static polis_error err;
    polis_env *env = with_overrides(ov, &err);
    if (env) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    const char *p = strstr(err.message, "gather.json: ");
    return p ? p : err.message;
}

/* A number of the describe JSON: plugins[0].params[key].value, or grid.<key> when param is
 * false; -1 if absent. */
static double described(polis_env *env, const char *key, bool param)
{
    char *d = polis_env_describe_json(env);
    cJSON *root = d ? cJSON_Parse(d) : NULL;
    polis_free(d);
    double v = -1;
    if (param) {
        const cJSON *plugin = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "plugins"), 0);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(plugin, "params"))
        {
            const cJSON *k = cJSON_GetObjectItem(p, "key");
            if (cJSON_IsString(k) && strcmp(k->valuestring, key) == 0)
                v = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "value"));
        }
    } else {
        const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "grid"), key);
        if (cJSON_IsNumber(n)) v = n->valuedouble;
    }
    cJSON_Delete(root);
    return v;
}

static void test_overrides_apply(void)
{
    polis_error err;
    polis_env *env = with_overrides("{\"agents\": 7, \"max_steps\": 33}", &err);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_n_agents(env), 7);
        CHECK_EQ_INT(polis_env_max_steps(env), 33);
        CHECK_EQ_STR(polis_env_agent_name(env, 6), "agent_6");
        polis_env_destroy(env);
    }
    /* Objects merge: width changes, height and wrap stay. */
    env = with_overrides("{\"grid\": {\"width\": 30}, \"plugins.gather.params.coins\": 50,"
                         " \"plugins[0].params.view\": 3}", &err);
    CHECK(env != NULL);
    if (env) {
        CHECK(described(env, "width", false) == 30);
        CHECK(described(env, "height", false) == 12);
        CHECK(described(env, "coins", true) == 50);
        CHECK(described(env, "view", true) == 3);
        /* view 3: a 7x7 window of two i8 channels (98 bytes, 104 aligned) + position 8. */
        CHECK_EQ_INT(polis_env_io(env)->obs_size, 112);
        polis_env_destroy(env);
    }
    /* Applied in order: a later override sees an earlier one's result. */
    env = with_overrides("{\"agents\": 5, \"agents\": 6}", &err);
    CHECK(env && polis_env_n_agents(env) == 6);
    polis_env_destroy(env);
    /* null removes (the default returns); a missing parent object is created. */
    env = with_overrides("{\"max_steps\": null, \"lua.instruction_limit\": 5000}", &err);
    CHECK(env && polis_env_max_steps(env) == 1000);
    polis_env_destroy(env);
    /* Quoted keys, and a bare-string plugin entry reached by name. */
    const char *s = "{\"agents\": 2, \"grid\": {\"width\": 5, \"height\": 5},"
                    " \"plugins\": [\"gather\"]}";
    polis_options o = test_options(NULL, NULL);
    o.overrides = "{\"[\\\"max_steps\\\"]\": 9, \"plugins.gather.params\": {\"coins\": 2}}";
    CHECK_EQ_INT(polis_env_create_json(s, strlen(s), &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_max_steps(env), 9);
        CHECK(described(env, "coins", true) == 2);
        polis_env_destroy(env);
    }
    /* `.N` is an index too; a script entry is named by its path's stem, as config.c names it. */
    env = with_overrides("{\"plugins.0.params.coins\": 60}", &err);
    CHECK(env && described(env, "coins", true) == 60);
    polis_env_destroy(env);
    o = test_options(NULL, NULL);
    o.overrides = "{\"scripts.bonus.params.bonus\": 300}";
    CHECK_EQ_INT(polis_env_create_file(GATHER_LUA, &o, &env, &err), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(err.message, "gather_lua.json: scripts[0].params.bonus: expected number in "
                                "[-100, 100], got 300 (scenario with overrides)");
    /* An empty object changes nothing. */
    env = with_overrides("{}", &err);
    CHECK(env && polis_env_n_agents(env) == 4 && polis_env_max_steps(env) == 200);
    polis_env_destroy(env);
}

static void test_overrides_errors(void)
{
    CHECK_EQ_STR(ov_error("nope"), "overrides: invalid JSON at byte 0: 'nope'");
    CHECK_EQ_STR(ov_error("{\"agents\": 3"),
                 "overrides: invalid JSON: unexpected end of input at byte 12");
    CHECK_EQ_STR(ov_error("[1]"),
                 "overrides: expected a JSON object of \"path\": value members, got an array");
    CHECK_EQ_STR(ov_error("{\"\": 1}"), "overrides: \"\": empty path");
    CHECK_EQ_STR(ov_error("{\"grid.width.x\": 1}"),
                 "overrides: \"grid.width.x\": grid.width is a number, not an object or array");
    CHECK_EQ_STR(ov_error("{\"seed.x\": 1}"),
                 "overrides: \"seed.x\": seed is a number, not an object or array");
    CHECK_EQ_STR(ov_error("{\"grid[0]\": 1}"),
                 "overrides: \"grid[0]\": grid is an object, not an array");
    CHECK_EQ_STR(ov_error("{\"plugins[3].params\": {}}"),
                 "overrides: \"plugins[3].params\": plugins has 1 element (indices 0 to 0)");
    CHECK_EQ_STR(ov_error("{\"plugins.2.params\": {}}"),
                 "overrides: \"plugins.2.params\": plugins has 1 element (indices 0 to 0)");
    CHECK_EQ_STR(ov_error("{\"plugins.gahter.params.coins\": 1}"),
                 "overrides: \"plugins.gahter.params.coins\": no element of plugins is named "
                 "\"gahter\"");
    CHECK_EQ_STR(ov_error("{\"plugins..x\": 1}"),
                 "overrides: \"plugins..x\": empty key in the path");
    CHECK_EQ_STR(ov_error("{\"plugins[x]\": 1}"),
                 "overrides: \"plugins[x]\": expected [N] or [\"key\"] at byte 7 of the path");
    CHECK_EQ_STR(ov_error("{\"plugins]\": 1}"), "overrides: \"plugins]\": unexpected ']'");
    CHECK_EQ_STR(ov_error("{\"agents\": 1e999}"),
                 "overrides: \"agents\": number out of range for a double");
    CHECK_EQ_STR(ov_error("{\"grid\": {\"width\": 3, \"width\": 4}}"),
                 "overrides: \"grid\": key \"width\" appears twice in the value");
    /* Values are checked by the scenario reader and the plugins, at their JSON paths. */
    CHECK_EQ_STR(ov_error("{\"agents\": 0}"),
                 "gather.json: agents: expected integer in [1, 65536], got 0 "
                 "(scenario with overrides)");
    CHECK_EQ_STR(ov_error("{\"plugins.gather.params.coins\": -1}"),
                 "gather.json: plugins[0].params.coins: expected integer in [0, 1000000], got -1 "
                 "(scenario with overrides)");
    CHECK_EQ_STR(ov_error("{\"max_stepz\": 3}"),
                 "gather.json: max_stepz: unknown key (expected one of polis, name, doc, seed, "
                 "max_steps, agents, max_entities, grid, event_queue, lua, plugins, scripts, "
                 "rewards, bindings, replace) (scenario with overrides)");
    CHECK_CONTAINS(ov_error("{\"plugins.gather.params.coins\": 400}"),
                   "gather: 4 agents and 400 coins do not fit on a 12x12 grid (scenario with "
                   "overrides)");
}

/* A host built against the 0.1 header passes the shorter struct: the fields it does not
 * have take their defaults. */
static void test_old_struct(void)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = "this is not read";
    o.no_observations = true;
    o.struct_size = offsetof(polis_options, log_ud) + sizeof(void *);
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(GATHER, &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        const polis_io *io = polis_env_io(env);
        int nonzero = 0;
        for (size_t i = 0; i < io->obs_size * 4; i++) nonzero += io->obs[i] != 0;
        CHECK(nonzero > 0); /* observations written: no_observations was not read */
        polis_env_destroy(env);
    }
    o.struct_size = 8;
    CHECK_EQ_INT(polis_env_create_file(GATHER, &o, &env, &err), POLIS_ERR_INVALID);
    CHECK_CONTAINS(err.message, "polis_options.struct_size is 8");
}

/* no_observations: the obs buffer stays zero, everything else is as with observations. */
static void test_no_obs(void)
{
    polis_options o = test_options(NULL, NULL);
    polis_options q = o;
    q.no_observations = true;
    polis_env *a = NULL, *b = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(GATHER, &o, &a, &err), POLIS_OK);
    CHECK_EQ_INT(polis_env_create_file(GATHER, &q, &b, &err), POLIS_OK);
    if (!a || !b) goto out;
    const polis_io *ia = polis_env_io(a), *ib = polis_env_io(b);
    CHECK_EQ_INT(ib->obs_size, ia->obs_size);
    CHECK_EQ_INT(polis_env_reset(a, 3), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(b, 3), POLIS_OK);
    polis_rng r;
    polis_rng_seed(&r, 1, 1);
    size_t obs_bytes = ia->obs_size * (size_t)ia->n_agents;
    int obs_zero = 1, same = 1, a_wrote = 0;
    for (int t = 0; t < 150; t++) {
        for (int32_t k = 0; k < ia->n_agents; k++)
            ia->actions[k] = ib->actions[k] = (int32_t)polis_rng_below(&r, 5);
        CHECK_EQ_INT(polis_env_step(a), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(b), POLIS_OK);
        for (size_t i = 0; i < obs_bytes; i++) {
            obs_zero &= ib->obs[i] == 0;
            a_wrote |= ia->obs[i] != 0;
        }
        same &= memcmp(ia->masks, ib->masks, (size_t)ia->n_agents * 5) == 0 &&
                memcmp(ia->rewards, ib->rewards, sizeof(float) * (size_t)ia->n_agents) == 0 &&
                memcmp(ia->illegal, ib->illegal, (size_t)ia->n_agents) == 0;
    }
    CHECK(obs_zero);
    CHECK(a_wrote);
    CHECK(same);
out:
    polis_env_destroy(a);
    polis_env_destroy(b);
}

int main(void)
{
    test_overrides_apply();
    test_overrides_errors();
    test_old_struct();
    test_no_obs();
    CHECK_DONE();
}
