/* host_api.c and the "json" host API (plugin ABI 1.7), through the json_probe test plugin:
 * the refusals (a newer version, an unknown name, version 0), valid, invalid and hostile
 * documents parsed while an action is parsed, a document kept from init and read later, no
 * leak and clean out-of-memory failures. */
#include "check.h"
#include "testutil.h"

#define PROBE(mode)                                                                                \
    "{\"agents\": 1, \"plugins\": [{\"name\": \"json_probe\", \"params\": {\"mode\": \"" mode      \
    "\"}}]}"

static void test_refusals(void)
{
    char want[512];
    snprintf(want, sizeof want,
             "<string>: plugins[0]: plugin \"json_probe\" init failed: json_probe: host API "
             "\"json\" version %d is newer than this engine's (polis %s has version %d; rebuild "
             "the plugin for it, or update polis)",
             POLIS_JSON_API_VERSION + 1, POLIS_VERSION_STRING, POLIS_JSON_API_VERSION);
    CHECK_EQ_STR(test_env_error(PROBE("future")), want);
    snprintf(want, sizeof want,
             "<string>: plugins[0]: plugin \"json_probe\" init failed: json_probe: this engine "
             "(polis %s) has no host API \"nope\" (it has \"json\", \"observations\", \"actions\", "
             "\"shared_observations\", "
             "\"scene\", \"visibility\", \"reset_ahead\")",
             POLIS_VERSION_STRING);
    CHECK_EQ_STR(test_env_error(PROBE("unknown")), want);
    CHECK_EQ_STR(test_env_error(PROBE("zero")),
                 "<string>: plugins[0]: plugin \"json_probe\" init failed: json_probe: host API "
                 "\"json\": version 0 is not a version (they start at 1)");
}

static void test_documents(void)
{
    test_alloc alloc = {0};
    polis_env *env = test_env(PROBE("parse"), NULL, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    /* valid: before the first reset too, any member order, nesting, escapes, UTF-8 */
    CHECK_EQ_STR(test_parse(env, 0, "{\"act\": \"jp_b\"}"), "2 jp_b");
    CHECK_EQ_STR(test_parse(env, 0,
                            "{\"x\": [1, {\"y\": \"\\u00e9\\n\"}, null, true, -2.5e3], "
                            "\"act\": \"jp_\\u0061\", \"z\": {}}"),
                 "1 jp_a");
    CHECK_EQ_STR(test_parse(env, 0, "  {\"act\":\"jp_a\"}\n"), "1 jp_a");
    /* read errors name the plugin, the document and the path */
    CHECK_EQ_STR(
        test_parse(env, 0, "{\"act\": 3}"),
        "ERR 3: json_probe: action: act: expected string, got 3 [parse \"{\\\"act\\\": 3}\", "
        "agent 0 (agent_0), tick 0]");
    CHECK_EQ_STR(test_parse(env, 0, "[\"act\"]"),
                 "ERR 3: json_probe: action: act: missing (expected string) [parse "
                 "\"[\\\"act\\\"]\", agent 0 (agent_0), tick 0]");
    CHECK_EQ_STR(
        test_parse(env, 0, "\"jp_a\""),
        "ERR 3: json_probe: action: act: missing (expected string) [parse \"\\\"jp_a\\\"\", "
        "agent 0 (agent_0), tick 0]");
    CHECK_EQ_STR(
        test_parse(env, 0, "{\"act\": \"jp_c\"}"),
        "ERR 1: json_probe: no action \"jp_c\" [parse \"{\\\"act\\\": \\\"jp_c\\\"}\", agent 0 "
        "(agent_0), tick 0]");
    /* invalid: line and column, what is wrong */
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": }"),
                   "ERR 3: json_probe: action:1:9: invalid JSON: syntax error at '}'");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"jp_a\",}"),
                   "json_probe: action:1:16: invalid JSON: trailing comma before '}'");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"jp_a\"} {}"),
                   "json_probe: action:1:17: invalid JSON: expected end of input after the "
                   "value, found '{}'");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"jp_a\", \"act\": \"jp_b\"}"),
                   "json_probe: action: act: duplicate key");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": NaN}"),
                   "json_probe: action:1:9: invalid JSON: NaN and Infinity are not JSON numbers");
    CHECK_CONTAINS(test_parse(env, 0, "{\"n\": 1e999, \"act\": \"jp_a\"}"),
                   "json_probe: action: n: number out of range for a double");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"jp_a"),
                   "json_probe: action:1:10: invalid JSON: syntax error at 'jp_a'");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"\\ud800\"}"), "json_probe: action:1:");
    /* hostile: deep nesting, a long text, control bytes, invalid UTF-8 */
    static char deep[40016];
    for (int i = 0; i < 20000; i++) deep[i] = '[';
    for (int i = 0; i < 20000; i++) deep[20000 + i] = ']';
    deep[0] = '{';
    CHECK_CONTAINS(test_parse(env, 0, deep), "ERR 3: json_probe: action:");
    deep[0] = '[';
    CHECK_CONTAINS(test_parse(env, 0, deep), "ERR 3: json_probe: action:");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"jp\x01_a\"}"),
                   "ERR 1: json_probe: no action \"jp");
    CHECK_CONTAINS(test_parse(env, 0, "{\"act\": \"\xff\xfe\"}"),
                   "ERR 1: json_probe: no action \"");
    size_t big = ((size_t)16 << 20) + 2;
    char *huge = malloc(big + 1);
    CHECK(huge != NULL);
    if (huge) {
        memset(huge, ' ', big);
        huge[0] = '"';
        huge[big - 1] = '"';
        huge[big] = '\0';
        CHECK_CONTAINS(test_parse(env, 0, huge),
                       "ERR 8: json_probe: action: 16777218 bytes of JSON, more "
                       "than 16777216");
        free(huge);
    }
    /* every document was freed: parsing allocates nothing that outlives the parser */
    long long live = alloc.live;
    for (int i = 0; i < 50; i++)
        CHECK_EQ_STR(test_parse(env, 0, "{\"act\": \"jp_b\", \"x\": [1, 2]}"), "2 jp_b");
    CHECK_EQ_INT(alloc.live, live);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
}

/* A document parsed in init, read at every rendering, freed in destroy. */
static void test_kept(void)
{
    test_alloc alloc = {0};
    polis_env *env =
        test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"json_probe\", \"params\": "
                 "{\"mode\": \"keep\", \"doc\": \"{\\\"items\\\": [\\\"a b\\\", 2, "
                 "3]}\"}}]}",
                 NULL, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    for (int i = 0; i < 3; i++) {
        char *out = NULL;
        CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_OK);
        CHECK(out && strncmp(out, "items: 3, first: a b, path: items[0]\n", 37) == 0);
        polis_free(out);
    }
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
    /* a document that does not parse fails init, naming it */
    CHECK_EQ_STR(
        test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"json_probe\", "
                       "\"params\": {\"mode\": \"keep\", \"doc\": \"{\\\"items\\\": [1,\"}}]}"),
        "<string>: plugins[0]: plugin \"json_probe\" init failed: json_probe: doc:1:14: "
        "invalid JSON: unexpected end of input");
}

/* Every allocation of create, parse and render failing in turn: a clean error, no leak. */
static void test_out_of_memory(void)
{
    for (long n = 1; n < 400; n++) {
        test_alloc alloc = {0};
        alloc.fail_at = n;
        polis_options o = test_options(NULL, &alloc);
        polis_env *env = NULL;
        polis_error err;
        const char *json = "{\"agents\": 1, \"plugins\": [{\"name\": \"json_probe\", \"params\": "
                           "{\"mode\": \"keep\", \"doc\": \"{\\\"items\\\": [\\\"x\\\"]}\"}}]}";
        polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
        if (st == POLIS_OK) {
            int32_t id = -1;
            st = polis_env_parse_action(env, 0, "{\"act\": \"jp_a\", \"y\": [[], {}]}", &id);
            CHECK(st == POLIS_OK || st == POLIS_ERR_NOMEM);
            if (st == POLIS_OK) CHECK_EQ_INT(id, 1);
            polis_env_destroy(env);
        } else {
            CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
        }
        CHECK_EQ_INT(alloc.live, 0);
        if (!alloc.failed) break;
    }
}

int main(void)
{
    test_refusals();
    test_documents();
    test_kept();
    test_out_of_memory();
    CHECK_DONE();
}
