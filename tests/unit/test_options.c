/* polis_options beyond the allocator: scenario overrides (every rule and every message of
 * docs/scenario.md "Overrides"), no_observations, max_memory (docs/scenario.md "Memory"), and
 * hosts built with the older, shorter polis_options. */
#include <stddef.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"
#define WALKER_LUA POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker_lua.json"

static polis_env *with_overrides(const char *ov, polis_error *err)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = ov;
    polis_env *env = NULL;
    if (polis_env_create_file(WALKER, &o, &env, err) != POLIS_OK) return NULL;
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
    const char *p = strstr(err.message, "walker.json: ");
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
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(plugin, "params")) {
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
    env = with_overrides("{\"grid\": {\"width\": 30}, \"plugins.walker.params.items\": 50,"
                         " \"plugins[0].params.view\": 3}",
                         &err);
    CHECK(env != NULL);
    if (env) {
        CHECK(described(env, "width", false) == 30);
        CHECK(described(env, "height", false) == 12);
        CHECK(described(env, "items", true) == 50);
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
                    " \"plugins\": [\"walker\"]}";
    polis_options o = test_options(NULL, NULL);
    o.overrides = "{\"[\\\"max_steps\\\"]\": 9, \"plugins.walker.params\": {\"items\": 2}}";
    CHECK_EQ_INT(polis_env_create_json(s, strlen(s), &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_max_steps(env), 9);
        CHECK(described(env, "items", true) == 2);
        polis_env_destroy(env);
    }
    /* `.N` is an index too; a script entry is named by its path's stem, as config.c names it. */
    env = with_overrides("{\"plugins.0.params.items\": 60}", &err);
    CHECK(env && described(env, "items", true) == 60);
    polis_env_destroy(env);
    o = test_options(NULL, NULL);
    o.overrides = "{\"scripts.first_item.params.bonus\": 300}";
    CHECK_EQ_INT(polis_env_create_file(WALKER_LUA, &o, &env, &err), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(err.message, "walker_lua.json: scripts[0].params.bonus: expected number in "
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
    CHECK_EQ_STR(ov_error("{\"plugins.walkre.params.items\": 1}"),
                 "overrides: \"plugins.walkre.params.items\": no element of plugins is named "
                 "\"walkre\"");
    CHECK_EQ_STR(ov_error("{\"plugins..x\": 1}"),
                 "overrides: \"plugins..x\": empty key in the path");
    CHECK_EQ_STR(ov_error("{\"plugins[x]\": 1}"),
                 "overrides: \"plugins[x]\": expected [N], [+] or [\"key\"] at byte 7 of the path");
    CHECK_EQ_STR(ov_error("{\"plugins]\": 1}"), "overrides: \"plugins]\": unexpected ']'");
    CHECK_EQ_STR(ov_error("{\"agents\": 1e999}"),
                 "overrides: \"agents\": number out of range for a double");
    CHECK_EQ_STR(ov_error("{\"grid\": {\"width\": 3, \"width\": 4}}"),
                 "overrides: \"grid\": key \"width\" appears twice in the value");
    /* Values are checked by the scenario reader and the plugins, at their JSON paths. */
    CHECK_EQ_STR(ov_error("{\"agents\": 0}"),
                 "walker.json: agents: expected integer in [1, 65536], got 0 "
                 "(scenario with overrides)");
    CHECK_EQ_STR(ov_error("{\"plugins.walker.params.items\": -1}"),
                 "walker.json: plugins[0].params.items: expected integer in [0, 1000000], got -1 "
                 "(scenario with overrides)");
    CHECK_EQ_STR(ov_error("{\"max_stepz\": 3}"),
                 "walker.json: max_stepz: unknown key (expected one of polis, name, doc, seed, "
                 "max_steps, agents, max_entities, grid, event_queue, max_memory, lua, plugins, "
                 "scripts, rewards, bindings, compact_observations, replace, live, seats, pixels, "
                 "visibility, vary) (scenario with overrides)");
    CHECK_CONTAINS(ov_error("{\"plugins.walker.params.items\": 400}"),
                   "walker: 4 agents and 400 items do not fit on 12x12 cells (scenario with "
                   "overrides)");
}

/* A final `[+]` appends to an array, creating a missing one; the appended element is read
 * at its place like any other (`--set 'scripts[+]={"path": "bonus.lua"}'`). */
static void test_overrides_append(void)
{
    polis_error err;
    /* walker.json has no "scripts": [+] creates the array, the script loads. */
    polis_env *env = with_overrides("{\"scripts[+]\": {\"path\": \"first_item.lua\"}}", &err);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_n_reward_fns(env), 2);
        CHECK_EQ_STR(polis_env_reward_fn_name(env, 1), "first_item");
        polis_env_destroy(env);
    }
    /* Appends apply in order, after the elements already there. */
    const char *s = "{\"agents\": {\"count\": 4, \"names\": [\"a\", \"b\"]},"
                    " \"plugins\": [\"walker\"], \"grid\": {\"width\": 6, \"height\": 6}}";
    polis_options o = test_options(NULL, NULL);
    o.overrides = "{\"agents.names[+]\": \"c\", \"agents.names[+]\": \"d\"}";
    env = NULL;
    CHECK_EQ_INT(polis_env_create_json(s, strlen(s), &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_STR(polis_env_agent_name(env, 2), "c");
        CHECK_EQ_STR(polis_env_agent_name(env, 3), "d");
        polis_env_destroy(env);
    }
    /* The appended element is checked where it lands. */
    o.overrides = "{\"agents.names[+]\": \"b\", \"agents.names[+]\": \"e\"}";
    CHECK_EQ_INT(polis_env_create_json(s, strlen(s), &o, &env, &err), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(err.message, "agents.names[2]: duplicate agent name \"b\" (scenario with "
                                "overrides)");
    CHECK_EQ_STR(ov_error("{\"grid[+]\": 1}"),
                 "overrides: \"grid[+]\": grid is an object, not an array: [+] appends to an "
                 "array");
    CHECK_EQ_STR(ov_error("{\"seed[+]\": 1}"),
                 "overrides: \"seed[+]\": seed is a number, not an array: [+] appends to an array");
    CHECK_EQ_STR(ov_error("{\"[+]\": 1}"),
                 "overrides: \"[+]\": top level is an object, not an array: [+] appends to an "
                 "array");
    CHECK_EQ_STR(ov_error("{\"plugins[+].params\": {}}"),
                 "overrides: \"plugins[+].params\": [+] appends a value, so it can only be the "
                 "last step");
    CHECK_EQ_STR(ov_error("{\"plugins[+]\": null}"),
                 "overrides: \"plugins[+]\": null cannot be appended (null removes)");
    CHECK_EQ_STR(ov_error("{\"plugins[+\": 1}"),
                 "overrides: \"plugins[+\": expected [N], [+] or [\"key\"] at byte 7 of the path");
}

/* A host built against the 0.1 header passes the shorter struct: the fields it does not
 * have take their defaults. */
static void test_old_struct(void)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = "this is not read";
    o.no_observations = true;
    o.max_memory = -1; /* refused if it were read */
    o.struct_size = offsetof(polis_options, log_ud) + sizeof(void *);
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(WALKER, &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        const polis_io *io = polis_env_io(env);
        int nonzero = 0;
        for (size_t i = 0; i < io->obs_size * 4; i++) nonzero += io->obs[i] != 0;
        CHECK(nonzero > 0); /* observations written: no_observations was not read */
        polis_env_destroy(env);
    }
    o.struct_size = 8;
    CHECK_EQ_INT(polis_env_create_file(WALKER, &o, &env, &err), POLIS_ERR_INVALID);
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
    CHECK_EQ_INT(polis_env_create_file(WALKER, &o, &a, &err), POLIS_OK);
    CHECK_EQ_INT(polis_env_create_file(WALKER, &q, &b, &err), POLIS_OK);
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

/* The memory estimate: a grid beyond 2^28 cells is refused at its keys, and a scenario beyond
 * the cap before the kernel allocates its buffers, naming the keys; the scenario's
 * "max_memory" lowers the default cap, polis_options.max_memory sets it, and a scenario can
 * lower the host's cap but not raise it. */
static polis_status mem_create(const char *ov, int64_t max_memory, test_alloc *al, polis_error *err)
{
    polis_options o = test_options(NULL, al);
    o.overrides = ov;
    o.max_memory = max_memory;
    polis_env *env = NULL;
    polis_status st = polis_env_create_file(WALKER, &o, &env, err);
    polis_env_destroy(env);
    return st;
}

static const char *cut(const polis_error *err)
{
    const char *p = strstr(err->message, "walker.json: ");
    return p ? p : err->message;
}

#define BIG_GRID "{\"grid\": {\"width\": 4096, \"height\": 4096}"
#define BIG_GRID_NEEDS                                                                             \
    "the env needs 128.3 MiB, more than the memory cap of 64 MiB (%s): grid.width 4096 x "         \
    "grid.height 4096 x 2 layers x 4 bytes = 128 MiB; event_queue 4096 x 48 bytes = 192 KiB; "     \
    "max_entities 4100 x 17 bytes = 68.1 KiB; agents 4 x 100 bytes (observations, masks, io, "     \
    "plans) = 400 bytes (scenario with overrides)"

static void test_max_memory(void)
{
    polis_error err;
    test_alloc al = {0};
    char want[1024];
    /* 65536 x 65536: refused while reading the scenario, at its keys, nothing big allocated */
    CHECK_EQ_INT(mem_create("{\"agents\": 65536, \"grid\": {\"width\": 65536, \"height\": "
                            "65536}}",
                            0, &al, &err),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(cut(&err), "walker.json: grid: width 65536 x height 65536 is 4294967296 cells, "
                            "more than 2^28 (268435456) (scenario with overrides)");
    CHECK(al.peak < (4 << 20)); /* 65536 agent names, the parsed JSON */
    CHECK_EQ_INT(al.live, 0);

    /* 128 MiB of grid under a 64 MiB cap from the scenario: refused before the kernel
     * allocates its buffers (what the plugin allocated for itself is all there is) */
    memset(&al, 0, sizeof al);
    CHECK_EQ_INT(mem_create(BIG_GRID ", \"max_memory\": 67108864}", 0, &al, &err), POLIS_ERR_LIMIT);
    snprintf(want, sizeof want, "walker.json: " BIG_GRID_NEEDS,
             "raise \"max_memory\" in the scenario, or polis_options.max_memory");
    CHECK_EQ_STR(cut(&err), want);
    CHECK(al.peak < (8 << 20));
    CHECK_EQ_INT(al.live, 0);
    /* the same from the host's cap */
    memset(&al, 0, sizeof al);
    CHECK_EQ_INT(mem_create(BIG_GRID "}", INT64_C(67108864), &al, &err), POLIS_ERR_LIMIT);
    snprintf(want, sizeof want, "walker.json: " BIG_GRID_NEEDS,
             "the host's polis_options.max_memory");
    CHECK_EQ_STR(cut(&err), want);
    CHECK(al.peak < (8 << 20));
    /* the scenario lowers the host's cap, never raises it */
    CHECK_EQ_INT(mem_create(BIG_GRID ", \"max_memory\": 67108864}", INT64_C(1) << 30, NULL, &err),
                 POLIS_ERR_LIMIT);
    snprintf(want, sizeof want, "walker.json: " BIG_GRID_NEEDS,
             "raise \"max_memory\" in the scenario");
    CHECK_EQ_STR(cut(&err), want);
    CHECK_EQ_INT(
        mem_create(BIG_GRID ", \"max_memory\": 1073741824}", INT64_C(67108864), NULL, &err),
        POLIS_ERR_LIMIT);
    CHECK_CONTAINS(err.message, "the host's polis_options.max_memory");

    /* under the cap: the default, a raised scenario cap, a raised host cap */
    memset(&al, 0, sizeof al);
    CHECK_EQ_INT(mem_create(BIG_GRID "}", 0, &al, &err), POLIS_OK);
    CHECK(al.peak > (128 << 20)); /* the grid was allocated */
    CHECK_EQ_INT(mem_create(BIG_GRID ", \"max_memory\": 268435456}", 0, NULL, &err), POLIS_OK);
    CHECK_EQ_INT(mem_create(BIG_GRID "}", INT64_C(268435456), NULL, &err), POLIS_OK);
    CHECK_EQ_INT(mem_create(NULL, INT64_C(1048576), NULL, &err), POLIS_OK); /* walker: 12x12 */

    /* the bounds of both settings */
    CHECK_EQ_INT(mem_create("{\"max_memory\": 1048575}", 0, NULL, &err), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(cut(&err), "walker.json: max_memory: expected integer in [1048576, "
                            "9007199254740992], got 1048575 (scenario with overrides)");
    CHECK_EQ_INT(mem_create(NULL, -1, NULL, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "polis_options.max_memory is -1, expected 0 (the default) or a "
                              "number of bytes");
}

int main(void)
{
    test_overrides_apply();
    test_overrides_errors();
    test_overrides_append();
    test_old_struct();
    test_no_obs();
    test_max_memory();
    CHECK_DONE();
}
