/* tests/unit/test_config.c — the scenario JSON layer (engine/core/config.c): syntax errors as
 * cJSON reports them, the checks added on top of cJSON, the scenario schema with its exact
 * messages, parameter tables, the host-table JSON accessors, files and paths, and clean
 * out-of-memory failures. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "core/internal.h"

#define FIXTURES POLIS_TEST_SOURCE_DIR "/scenarios/config"

/* ---- a counting allocator that can fail the Nth allocation --------------------------- */

typedef struct talloc {
    long long live; /* bytes allocated and not freed */
    long calls;     /* allocations and reallocations so far */
    long fail_at;   /* this call returns NULL; -1 = never */
    long bad_sizes; /* frees or reallocs that named the wrong old size */
} talloc;

/* A header remembers each block's size, so a free with the wrong size is caught. */
#define HDR 16

static void *talloc_fn(void *ud, void *p, size_t osize, size_t nsize)
{
    talloc *t = ud;
    char *block = p ? (char *)p - HDR : NULL;
    if (block) {
        size_t have;
        memcpy(&have, block, sizeof have);
        if (have != osize) t->bad_sizes++;
    }
    if (nsize == 0) {
        if (block) {
            t->live -= (long long)osize;
            free(block);
        }
        return NULL;
    }
    if (t->calls++ == t->fail_at) return NULL;
    char *nb = realloc(block, nsize + HDR);
    if (!nb) return NULL;
    memcpy(nb, &nsize, sizeof nsize);
    t->live += (long long)nsize - (block ? (long long)osize : 0);
    return nb + HDR;
}

static polis_env *env_new(talloc *t)
{
    memset(t, 0, sizeof *t);
    t->fail_at = -1;
    polis_env *env = calloc(1, sizeof *env);
    env->alloc = talloc_fn;
    env->alloc_ud = t;
    return env;
}

/* Frees the scenario and checks that nothing leaked. */
static void env_end(polis_env *env)
{
    talloc *t = env->alloc_ud;
    polis__scenario_release_json(env);
    polis__scenario_free(env);
    CHECK_EQ_INT(t->live, 0);
    CHECK_EQ_INT(t->bad_sizes, 0);
    free(env);
}

static polis_status parse(polis_env *env, const char *json)
{
    return polis__scenario_parse(env, json, strlen(json), "demo.json", "/base");
}

/* Parses `json` and expects exactly `msg` (a config error), then nothing leaked. */
#define EXPECT_ERR(json, msg)                                                                      \
    do {                                                                                           \
        talloc t_;                                                                                 \
        polis_env *e_ = env_new(&t_);                                                              \
        CHECK_EQ_INT(parse(e_, json), POLIS_ERR_CONFIG);                                           \
        CHECK_EQ_STR(e_->err, msg);                                                                \
        CHECK(e_->scn.root == NULL && e_->scn.source == NULL);                                     \
        CHECK_EQ_INT(t_.live, 0);                                                                  \
        env_end(e_);                                                                               \
    } while (0)

#define TOP_KEYS                                                                                   \
    "polis, name, doc, seed, max_steps, agents, max_entities, grid, event_queue, max_memory, "     \
    "lua, plugins, scripts, rewards, bindings, compact_observations, replace, live, seats, "       \
    "pixels, visibility, vary"

/* ---- bad JSON --------------------------------------------------------------------------- */

static void test_syntax(void)
{
    EXPECT_ERR("", "demo.json:1:1: invalid JSON: empty document");
    EXPECT_ERR("  \n ", "demo.json:2:2: invalid JSON: empty document");
    EXPECT_ERR("{\"agents\": 2,\n  \"seed\": 1 x}",
               "demo.json:2:13: invalid JSON: syntax error at 'x}'");
    /* A truncated document fails at its end, not at its last byte. */
    EXPECT_ERR("{\"agents\": 2", "demo.json:1:13: invalid JSON: unexpected end of input");
    EXPECT_ERR("{\"plugins\": [\"a\",\n\n", "demo.json:3:1: invalid JSON: unexpected end of input");
    EXPECT_ERR("{\"agents\": 2,}", "demo.json:1:14: invalid JSON: trailing comma before '}'");
    EXPECT_ERR("{\"plugins\": [\"a\",]}",
               "demo.json:1:18: invalid JSON: trailing comma before ']'");
    EXPECT_ERR("{\"agents\": 2 // two\n}",
               "demo.json:1:14: invalid JSON: comments are not JSON (use a key starting with "
               "\"_\")");
    EXPECT_ERR("{\"agents\": NaN}",
               "demo.json:1:12: invalid JSON: NaN and Infinity are not JSON numbers");
    EXPECT_ERR("{\"agents\": -Infinity}",
               "demo.json:1:12: invalid JSON: NaN and Infinity are not JSON numbers");
    EXPECT_ERR("{\"agents\": 2e}", "demo.json:1:13: invalid JSON: syntax error at 'e}'");
    EXPECT_ERR("{\"agents\": -}", "demo.json:1:12: invalid JSON: syntax error at '-}'");
    EXPECT_ERR("{\"agents\": tru}", "demo.json:1:12: invalid JSON: syntax error at 'tru}'");
    EXPECT_ERR("{\"agents\" 2}", "demo.json:1:11: invalid JSON: syntax error at '2}'");
    EXPECT_ERR("{\"agents\": [1,2 3]}", "demo.json:1:17: invalid JSON: syntax error at '3]}'");
    /* cJSON reports a member name without '"' one byte late; the message names its start... */
    EXPECT_ERR("{agents: 2}", "demo.json:1:2: invalid JSON: syntax error at 'agents: 2}'");
    EXPECT_ERR("{,", "demo.json:1:2: invalid JSON: syntax error at ','");
    EXPECT_ERR("[1,{x", "demo.json:1:5: invalid JSON: syntax error at 'x'");
    EXPECT_ERR("{\"agents\": 1,x", "demo.json:1:14: invalid JSON: syntax error at 'x'");
    EXPECT_ERR("{'agents': 2}", "demo.json:1:2: invalid JSON: strings need double quotes, found "
                                "''agents': 2}'");
    /* ... and only then: after a value that ends right after '{' or ',' it stays put. */
    EXPECT_ERR("{\"a\": {}x}", "demo.json:1:9: invalid JSON: syntax error at 'x}'");
    EXPECT_ERR("[1,2x]", "demo.json:1:5: invalid JSON: syntax error at 'x]'");
    EXPECT_ERR("[1,[x]", "demo.json:1:5: invalid JSON: syntax error at 'x]'");
    EXPECT_ERR("{\"a\": \"{q\\q\"}", "demo.json:1:10: invalid JSON: syntax error at '\\q\"}'");
    EXPECT_ERR("{\"name\": 'x'}",
               "demo.json:1:10: invalid JSON: strings need double quotes, found ''x'}'");
    EXPECT_ERR("{\"agents\": 2} {}", "demo.json:1:15: invalid JSON: expected end of input after "
                                     "the value, found '{}'");
    EXPECT_ERR("{\"name\": \"a\\qb\"}", "demo.json:1:12: invalid JSON: syntax error at '\\qb\"}'");
    /* An unterminated string is reported where it starts. */
    EXPECT_ERR("{\"name\": \"abc", "demo.json:1:11: invalid JSON: syntax error at 'abc'");
    /* Columns count characters, not bytes. */
    EXPECT_ERR("{\"doc\": \"\xc3\xa9\xc3\xa9\", x}",
               "demo.json:1:15: invalid JSON: syntax error at 'x}'");
    /* The excerpt stops at 24 bytes and at the end of the line. */
    EXPECT_ERR("{\"agents\": 2, @abcdefghijklmnopqrstuvwxyz0123456789}",
               "demo.json:1:15: invalid JSON: syntax error at '@abcdefghijklmnopqrstuvw...'");
    EXPECT_ERR("{\"agents\": 2 @\n}", "demo.json:1:14: invalid JSON: syntax error at '@'");
    /* cJSON reads numbers that overflow a double as infinity; they are refused anywhere. */
    EXPECT_ERR("{\"agents\": 1e999}", "demo.json: agents: number out of range for a double");
    EXPECT_ERR("{\"agents\": 1, \"_c\": [0, -1e999]}",
               "demo.json: _c[1]: number out of range for a double");
    EXPECT_ERR("1e999", "demo.json: top level: number out of range for a double");
    /* A NUL byte inside the given length is not the end of the text. */
    {
        talloc t;
        polis_env *env = env_new(&t);
        CHECK_EQ_INT(polis__scenario_parse(env, "{\"agents\": 2}\0", 14, "demo.json", NULL),
                     POLIS_ERR_CONFIG);
        CHECK_EQ_STR(env->err, "demo.json:1:14: invalid JSON: expected end of input after the "
                               "value, found '\\x00'");
        env_end(env);
    }
    /* cJSON bounds nesting (CJSON_NESTING_LIMIT), which also bounds the engine's walks of
     * the tree. The document's own object is one level. */
    for (int extra = 0; extra < 2; extra++) {
        size_t n = CJSON_NESTING_LIMIT - 1 + (size_t)extra;
        char *deep = malloc(2 * n + 64);
        strcpy(deep, "{\"agents\": 1, \"_deep\": ");
        size_t k = strlen(deep);
        memset(deep + k, '[', n);
        memset(deep + k + n, ']', n);
        strcpy(deep + k + 2 * n, "}");
        talloc t;
        polis_env *env = env_new(&t);
        if (extra == 0) {
            CHECK_EQ_INT(parse(env, deep), POLIS_OK);
        } else {
            /* cJSON stops at the innermost '[', the first one too deep. */
            char msg[128];
            snprintf(msg, sizeof msg,
                     "demo.json:1:%zu: invalid JSON: syntax error at '[]]]]]]]]]]]]]]]]]]]]]]]...'",
                     k + n);
            CHECK_EQ_INT(parse(env, deep), POLIS_ERR_CONFIG);
            CHECK_EQ_STR(env->err, msg);
        }
        env_end(env);
        free(deep);
    }
    /* Only the given length is read: the text needs no terminating NUL. */
    {
        talloc t;
        polis_env *env = env_new(&t);
        const char text[] = "{\"agents\": 7}garbage";
        CHECK_EQ_INT(polis__scenario_parse(env, text, 13, "demo.json", NULL), POLIS_OK);
        CHECK_EQ_INT(env->scn.n_agents, 7);
        env_end(env);
    }
    /* A UTF-8 byte order mark is skipped. */
    {
        talloc t;
        polis_env *env = env_new(&t);
        CHECK_EQ_INT(parse(env, "\xEF\xBB\xBF{\"agents\": 1}"), POLIS_OK);
        env_end(env);
    }
}

/* ---- duplicate keys and comments ----------------------------------------------------------- */

static void test_duplicates_and_comments(void)
{
    EXPECT_ERR("{\"agents\": 2,\n \"agents\": 3}", "demo.json: agents: duplicate key");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 3, \"height\": 3, \"width\": 4}}",
               "demo.json: grid.width: duplicate key");
    /* Inside params too, and inside arrays of objects. */
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"a\", {\"name\": \"b\", \"params\": "
               "{\"m\": [{\"x\": 1, \"x\": 2}]}}]}",
               "demo.json: plugins[1].params.m[0].x: duplicate key");
    /* Comment keys are keys too: two of the same name are refused. */
    EXPECT_ERR("{\"_c\": 1, \"_c\": 2, \"agents\": 2}", "demo.json: _c: duplicate key");
    /* The first repeat in the object is named, not the first in sorted order. */
    EXPECT_ERR("{\"agents\": 2, \"rewards\": {\"b\": 1, \"a\": 1, \"b\": 2, \"a\": 2}}",
               "demo.json: rewards.b: duplicate key");
    {
        char big[4096];
        size_t k = (size_t)snprintf(big, sizeof big, "{\"agents\": 2, \"rewards\": {");
        for (int i = 0; i < 60; i++)
            k += (size_t)snprintf(big + k, sizeof big - k, "\"r%02d\": 1, ", i);
        k += (size_t)snprintf(big + k, sizeof big - k, "\"r50\": 2, \"r07\": 3}}");
        (void)k;
        EXPECT_ERR(big, "demo.json: rewards.r50: duplicate key");
    }
    /* "_" keys are ignored in every object of the scenario. */
    {
        talloc t;
        polis_env *env = env_new(&t);
        CHECK_EQ_INT(parse(env, "{\"_c\": {\"anything\": [1]}, \"agents\": {\"_n\": 0, "
                                "\"count\": 2}, \"grid\": {\"_\": 1, \"width\": 3, \"height\": 4},"
                                " \"lua\": {\"_x\": null}, \"rewards\": {\"_off\": \"x\"}, "
                                "\"plugins\": [{\"name\": \"p\", \"_c\": 1}], \"bindings\": "
                                "[{\"_c\": 1, \"call\": \"p.f\", \"phase\": \"end\"}]}"),
                     POLIS_OK);
        CHECK_EQ_INT(env->scn.n_agents, 2);
        CHECK_EQ_INT(env->scn.grid_width, 3);
        CHECK_EQ_INT(env->scn.n_weights, 0);
        CHECK_EQ_INT(env->scn.n_plugins, 1);
        CHECK_EQ_INT(env->scn.bindings[0].phase, POLIS_PHASE_END);
        env_end(env);
    }
}

/* ---- the schema: one bad value per key ------------------------------------------------------ */

static void test_schema_errors(void)
{
    EXPECT_ERR("[1, 2]", "demo.json: top level: expected object, got [1,2]");
    EXPECT_ERR("\"x\"", "demo.json: top level: expected object, got \"x\"");
    EXPECT_ERR("{\"agents\": 2, \"max_stpes\": 5}",
               "demo.json: max_stpes: unknown key (expected one of " TOP_KEYS ")");
    EXPECT_ERR("{\"agents\": 2, \"bad key\": 5}",
               "demo.json: [\"bad key\"]: unknown key (expected one of " TOP_KEYS ")");
    EXPECT_ERR("{}", "demo.json: top level: missing required key \"agents\"");
    /* "live" (polis serve --http): its shape is the engine's to check */
    EXPECT_ERR("{\"agents\": 2, \"live\": {\"tick_ms\": -4}}",
               "demo.json: live.tick_ms: expected integer in [0, 3600000], got -4");
    EXPECT_ERR("{\"agents\": 2, \"live\": {\"seat\": {}}}",
               "demo.json: live.seat: unknown key (expected one of seats, tick_ms, episodes)");
    EXPECT_ERR("{\"agents\": 2, \"live\": {\"seats\": {\"agent_0\": 3}}}",
               "demo.json: live.seats.agent_0: expected non-empty string, got 3");
    /* "seats" (who plays chosen agents in polis eval, serve and polis.rl.ppo): the shape and
     * the agents are the engine's to check, the policies the players' */
    EXPECT_ERR("{\"agents\": 2, \"seats\": [\"scripted\"]}",
               "demo.json: seats: expected object, got [\"scripted\"]");
    EXPECT_ERR("{\"agents\": 2, \"seats\": {\"agent_1\": \"\"}}",
               "demo.json: seats.agent_1: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": 2, \"seats\": {\"agent_0\": \"random\", \"bob\": \"random\"}}",
               "demo.json: seats.bob: no agent named \"bob\" (agents are agent_0 .. agent_1)");
    /* "pixels" (the SDK's pixel observations): its shape too */
    EXPECT_ERR("{\"agents\": 2, \"pixels\": 7}", "demo.json: pixels: expected object, got 7");
    EXPECT_ERR("{\"agents\": 2, \"pixels\": {\"cell\": 7}}",
               "demo.json: pixels.cell: unknown key (expected one of cell_px, downscale, grey, "
               "stats, obs)");
    EXPECT_ERR("{\"agents\": 2, \"pixels\": {\"cell_px\": 0}}",
               "demo.json: pixels.cell_px: expected integer in [1, 64], got 0");
    EXPECT_ERR("{\"agents\": 2, \"pixels\": {\"downscale\": 2}}",
               "demo.json: pixels.downscale: 2 is not a divisor of cell_px 7");
    EXPECT_ERR("{\"agents\": 2, \"pixels\": {\"grey\": 1}}",
               "demo.json: pixels.grey: expected true or false, got 1");
    EXPECT_ERR("{\"agents\": 2, \"pixels\": {\"obs\": \"rgb\"}}",
               "demo.json: pixels.obs: expected \"pixels\" or \"both\", got \"rgb\"");

    EXPECT_ERR("{\"polis\": 2, \"agents\": 2}",
               "demo.json: polis: unsupported format version 2 (this engine reads 1)");
    EXPECT_ERR("{\"polis\": \"1\", \"agents\": 2}",
               "demo.json: polis: expected format version 1, got \"1\"");
    EXPECT_ERR("{\"name\": 5, \"agents\": 2}", "demo.json: name: expected non-empty string, got 5");
    EXPECT_ERR("{\"name\": \"\", \"agents\": 2}",
               "demo.json: name: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"doc\": [\"x\"], \"agents\": 2}", "demo.json: doc: expected string, got [\"x\"]");
    EXPECT_ERR("{\"seed\": -1, \"agents\": 2}",
               "demo.json: seed: expected integer in [0, 9007199254740992], got -1");
    /* Numbers are doubles: 2^53 + 1 reads as 2^53 (accepted, test_defaults), 2^53 + 2 is
     * exact and out of range. */
    EXPECT_ERR("{\"seed\": 9007199254740994, \"agents\": 2}",
               "demo.json: seed: expected integer in [0, 9007199254740992], got "
               "9007199254740994");
    EXPECT_ERR("{\"seed\": 1e300, \"agents\": 2}",
               "demo.json: seed: expected integer in [0, 9007199254740992], got 1e+300");
    EXPECT_ERR("{\"seed\": true, \"agents\": 2}",
               "demo.json: seed: expected integer in [0, 9007199254740992], got true");
    EXPECT_ERR("{\"max_steps\": 3.5, \"agents\": 2}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got 3.5");
    EXPECT_ERR("{\"max_steps\": 0.1, \"agents\": 2}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got 0.1");
    EXPECT_ERR("{\"max_steps\": \"ten\", \"agents\": 2}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got \"ten\"");
    EXPECT_ERR("{\"max_steps\": 0, \"agents\": 2}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got 0");
    EXPECT_ERR("{\"max_steps\": null, \"agents\": 2}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got null");

    EXPECT_ERR("{\"agents\": \"4\"}",
               "demo.json: agents: expected integer in [1, 65536] or object, got \"4\"");
    EXPECT_ERR("{\"agents\": 0}", "demo.json: agents: expected integer in [1, 65536], got 0");
    EXPECT_ERR("{\"agents\": 65537}",
               "demo.json: agents: expected integer in [1, 65536], got 65537");
    EXPECT_ERR("{\"agents\": 2.5}", "demo.json: agents: expected integer in [1, 65536], got 2.5");
    EXPECT_ERR("{\"agents\": {\"names\": [\"a\"]}}",
               "demo.json: agents: missing required key \"count\"");
    EXPECT_ERR("{\"agents\": {\"count\": 2, \"cnt\": 2}}",
               "demo.json: agents.cnt: unknown key (expected one of count, names)");
    EXPECT_ERR("{\"agents\": {\"count\": -1}}",
               "demo.json: agents.count: expected integer in [1, 65536], got -1");
    EXPECT_ERR("{\"agents\": {\"count\": 4, \"names\": [\"a\", \"b\", \"c\"]}}",
               "demo.json: agents.names: expected 4 names (agents.count), got 3");
    EXPECT_ERR("{\"agents\": {\"count\": 1, \"names\": \"a\"}}",
               "demo.json: agents.names: expected array, got \"a\"");
    EXPECT_ERR("{\"agents\": {\"count\": 1, \"names\": []}}",
               "demo.json: agents.names: expected 1 names (agents.count), got 0");
    EXPECT_ERR("{\"agents\": {\"count\": 4, \"names\": [\"a\", \"b\", \"b\", \"d\"]}}",
               "demo.json: agents.names[2]: duplicate agent name \"b\"");
    EXPECT_ERR("{\"agents\": {\"count\": 2, \"names\": [\"a\", \"\"]}}",
               "demo.json: agents.names[1]: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": {\"count\": 2, \"names\": [\"a\", 7]}}",
               "demo.json: agents.names[1]: expected non-empty string, got 7");
    EXPECT_ERR("{\"agents\": {\"count\": 2, \"names\": [\"a\", \"b\\nc\"]}}",
               "demo.json: agents.names[1]: agent name must not contain control characters, "
               "got \"b\\nc\"");

    EXPECT_ERR("{\"agents\": 4, \"max_entities\": 3}",
               "demo.json: max_entities: expected integer in [4, 16777216], got 3");
    EXPECT_ERR("{\"agents\": 4, \"max_entities\": 16777217}",
               "demo.json: max_entities: expected integer in [4, 16777216], got 16777217");

    EXPECT_ERR("{\"agents\": 2, \"grid\": 5}", "demo.json: grid: expected object, got 5");
    EXPECT_ERR("{\"agents\": 2, \"grid\": null}", "demo.json: grid: expected object, got null");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 3}}",
               "demo.json: grid: missing required key \"height\"");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"height\": 3}}",
               "demo.json: grid: missing required key \"width\"");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 0, \"height\": 3}}",
               "demo.json: grid.width: expected integer in [1, 65536], got 0");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 3, \"height\": 65537}}",
               "demo.json: grid.height: expected integer in [1, 65536], got 65537");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 3, \"height\": 3, \"wrap\": 1}}",
               "demo.json: grid.wrap: expected true or false, got 1");
    EXPECT_ERR("{\"agents\": 2, \"grid\": {\"width\": 3, \"height\": 3, \"torus\": true}}",
               "demo.json: grid.torus: unknown key (expected one of width, height, wrap)");

    EXPECT_ERR("{\"agents\": 2, \"event_queue\": 8}",
               "demo.json: event_queue: expected integer in [16, 1048576], got 8");
    EXPECT_ERR("{\"agents\": 2, \"lua\": []}", "demo.json: lua: expected object, got []");
    EXPECT_ERR("{\"agents\": 2, \"lua\": {\"instruction_limit\": -1}}",
               "demo.json: lua.instruction_limit: expected integer in [0, 1000000000000], got -1");
    EXPECT_ERR("{\"agents\": 2, \"lua\": {\"memory_limit\": 1099511627777}}",
               "demo.json: lua.memory_limit: expected integer in [0, 1099511627776], got "
               "1099511627777");
    EXPECT_ERR("{\"agents\": 2, \"lua\": {\"memory\": 1}}",
               "demo.json: lua.memory: unknown key (expected one of instruction_limit, "
               "memory_limit, time_limit_ms)");

    EXPECT_ERR("{\"agents\": 2, \"plugins\": {}}", "demo.json: plugins: expected array, got {}");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [5]}",
               "demo.json: plugins[0]: expected plugin name or object, got 5");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"Foo\"]}",
               "demo.json: plugins[0]: invalid plugin name \"Foo\" (expected 1 to 63 characters "
               "from a-z, 0-9 and _)");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"\"]}",
               "demo.json: plugins[0]: invalid plugin name \"\" (expected 1 to 63 characters "
               "from a-z, 0-9 and _)");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"a\", {}]}",
               "demo.json: plugins[1]: expected \"name\" or \"path\" (or both)");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"name\": \"a.b\"}]}",
               "demo.json: plugins[0].name: invalid plugin name \"a.b\" (expected 1 to 63 "
               "characters from a-z, 0-9 and _)");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"name\": 3}]}",
               "demo.json: plugins[0].name: expected non-empty string, got 3");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"path\": \"\"}]}",
               "demo.json: plugins[0].path: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"name\": \"a\", \"params\": [1]}]}",
               "demo.json: plugins[0].params: expected object, got [1]");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"name\": \"a\", \"param\": {}}]}",
               "demo.json: plugins[0].param: unknown key (expected one of name, path, params)");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"a\", \"a\"]}",
               "demo.json: plugins[1]: name \"a\" is already used by plugins[0]");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [{\"path\": \"lib/My-Plugin.so\"}]}",
               "demo.json: plugins[0].path: the file name gives the plugin name \"My-Plugin\", "
               "which is invalid (expected 1 to 63 characters from a-z, 0-9 and _); set "
               "\"name\"");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"gather\", {\"path\": \"x/gather.so\"}]}",
               "demo.json: plugins[1].path: name \"gather\" is already used by plugins[0]");

    EXPECT_ERR("{\"agents\": 2, \"scripts\": \"a.lua\"}",
               "demo.json: scripts: expected array, got \"a.lua\"");
    EXPECT_ERR("{\"agents\": 2, \"scripts\": [true]}",
               "demo.json: scripts[0]: expected script path or object, got true");
    EXPECT_ERR("{\"agents\": 2, \"scripts\": [\"\"]}",
               "demo.json: scripts[0]: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": 2, \"scripts\": [{\"name\": \"r\"}]}",
               "demo.json: scripts[0]: missing required key \"path\"");
    EXPECT_ERR("{\"agents\": 2, \"plugins\": [\"rules\"], \"scripts\": [\"lua/rules.lua\"]}",
               "demo.json: scripts[0]: name \"rules\" is already used by plugins[0]");
    EXPECT_ERR(
        "{\"agents\": 2, \"scripts\": [\"a/r.lua\", {\"path\": \"b.lua\", \"name\": \"r\"}]}",
        "demo.json: scripts[1].name: name \"r\" is already used by scripts[0]");
    EXPECT_ERR("{\"agents\": 2, \"scripts\": [\"my-rules.lua\"]}",
               "demo.json: scripts[0]: the file name gives the script name \"my-rules\", which "
               "is invalid (expected 1 to 63 characters from a-z, 0-9 and _); set \"name\"");
    EXPECT_ERR("{\"agents\": 2, \"scripts\": [{\"path\": \"r.lua\", \"params\": 1}]}",
               "demo.json: scripts[0].params: expected object, got 1");

    EXPECT_ERR("{\"agents\": 2, \"rewards\": []}", "demo.json: rewards: expected object, got []");
    EXPECT_ERR("{\"agents\": 2, \"rewards\": {\"coin\": \"1\"}}",
               "demo.json: rewards.coin: expected number in [-1e9, 1e9], got \"1\"");
    EXPECT_ERR("{\"agents\": 2, \"rewards\": {\"coins\": 1e300}}",
               "demo.json: rewards.coins: expected number in [-1e9, 1e9], got 1e+300");
    EXPECT_ERR("{\"agents\": 2, \"rewards\": {\"coins\": -1000000001}}",
               "demo.json: rewards.coins: expected number in [-1e9, 1e9], got -1000000001");
    EXPECT_ERR("{\"agents\": 2, \"rewards\": {\"\": 1}}",
               "demo.json: rewards[\"\"]: empty reward function name");

    EXPECT_ERR("{\"agents\": 2, \"bindings\": {}}", "demo.json: bindings: expected array, got {}");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [\"p.f\"]}",
               "demo.json: bindings[0]: expected object, got \"p.f\"");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"event\": \"e\"}]}",
               "demo.json: bindings[0]: missing required key \"call\"");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"event\": \"e\", "
               "\"phase\": \"post\"}]}",
               "demo.json: bindings[0]: expected exactly one of \"event\" and \"phase\", got both");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\"}]}",
               "demo.json: bindings[0]: expected exactly one of \"event\" and \"phase\", got "
               "neither");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"phase\": \"pots\"}]}",
               "demo.json: bindings[0].phase: expected one of reset, begin, resolve, world, post, "
               "end, observe, got \"pots\"");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"phase\": 4}]}",
               "demo.json: bindings[0].phase: expected one of reset, begin, resolve, world, post, "
               "end, observe, got 4");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": 5, \"event\": \"e\"}]}",
               "demo.json: bindings[0].call: expected non-empty string, got 5");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"\", \"event\": \"e\"}]}",
               "demo.json: bindings[0].call: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"event\": \"\"}]}",
               "demo.json: bindings[0].event: expected non-empty string, got \"\"");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"event\": \"e\", "
               "\"priority\": 2000000}]}",
               "demo.json: bindings[0].priority: expected integer in [-1000000, 1000000], got "
               "2000000");
    EXPECT_ERR("{\"agents\": 2, \"bindings\": [{\"call\": \"p.f\", \"event\": \"e\", "
               "\"when\": 1}]}",
               "demo.json: bindings[0].when: unknown key (expected one of call, event, phase, "
               "priority)");

    /* Long values are cut; strings stay quoted. */
    EXPECT_ERR("{\"agents\": 2, \"max_steps\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,"
               "20,21,22,23,24,25]}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got "
               "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22...");
    EXPECT_ERR("{\"agents\": 2, \"max_steps\": {\"a\": \"x\\\"y\", \"b\": [true, null]}}",
               "demo.json: max_steps: expected integer in [1, 1000000000], got "
               "{\"a\":\"x\\\"y\",\"b\":[true,null]}");
}

/* ---- good scenarios ------------------------------------------------------------------------ */

static void test_defaults(void)
{
    talloc t;
    polis_env *env = env_new(&t);
    CHECK_EQ_INT(polis__scenario_parse(env, "{\"agents\": 3}", 13, "<string>", NULL), POLIS_OK);
    const polis__scenario *s = &env->scn;
    CHECK_EQ_STR(s->source, "<string>");
    CHECK_EQ_STR(s->base_dir, ".");
    CHECK_EQ_STR(s->name, "scenario");
    CHECK(s->doc == NULL);
    CHECK_EQ_INT(s->seed, 0);
    CHECK_EQ_INT(s->max_steps, 1000);
    CHECK_EQ_INT(s->n_agents, 3);
    CHECK_EQ_STR(s->agent_names[0], "agent_0");
    CHECK_EQ_STR(s->agent_names[2], "agent_2");
    CHECK_EQ_INT(s->max_entities, 3 + 4096);
    CHECK(!s->has_grid);
    CHECK_EQ_INT(s->event_queue, 4096);
    CHECK_EQ_INT(s->lua_instruction_limit, 0);
    CHECK_EQ_INT(s->lua_time_limit_ms, 5000);
    CHECK_EQ_INT(s->lua_memory_limit, 67108864);
    CHECK_EQ_INT(s->n_plugins, 0);
    CHECK_EQ_INT(s->n_scripts, 0);
    CHECK_EQ_INT(s->n_weights, 0);
    CHECK_EQ_INT(s->n_bindings, 0);
    CHECK(s->root != NULL);
    env_end(env);

    /* A NULL source is a string scenario too; a file source names the scenario. */
    env = env_new(&t);
    CHECK_EQ_INT(polis__scenario_parse(env, "{\"agents\": 1}", 13, NULL, NULL), POLIS_OK);
    CHECK_EQ_STR(env->scn.source, "<string>");
    CHECK_EQ_STR(env->scn.name, "scenario");
    env_end(env);
    env = env_new(&t);
    CHECK_EQ_INT(polis__scenario_parse(env, "{\"agents\": 1}", 13, "a/b.c/my.scn.json", "a"),
                 POLIS_OK);
    CHECK_EQ_STR(env->scn.name, "my.scn");
    env_end(env);

    /* Edges of every range are accepted; integral doubles count as integers; the seed
     * 2^53 + 1 reads as the double 2^53. */
    env = env_new(&t);
    CHECK_EQ_INT(parse(env, "{\"polis\": 1.0, \"seed\": 9007199254740993, \"max_steps\": 1e9, "
                            "\"agents\": 65536, \"max_entities\": 65536, \"grid\": {\"width\": "
                            "65536, \"height\": 1}, \"event_queue\": 16, \"lua\": "
                            "{\"instruction_limit\": 1000000000000, \"memory_limit\": "
                            "1099511627776}, \"rewards\": {\"r\": -1e9, \"s\": 1e9}, \"bindings\": "
                            "[{\"call\": \"p.f\", \"phase\": \"reset\", \"priority\": "
                            "-1000000}]}"),
                 POLIS_OK);
    s = &env->scn;
    CHECK(s->seed == 9007199254740992ULL);
    CHECK_EQ_INT(s->max_steps, 1000000000);
    CHECK_EQ_INT(s->n_agents, 65536);
    CHECK_EQ_STR(s->agent_names[65535], "agent_65535");
    CHECK_EQ_INT(s->max_entities, 65536);
    CHECK_EQ_INT(s->grid_width, 65536);
    CHECK(!s->grid_wrap);
    CHECK_EQ_INT(s->event_queue, 16);
    CHECK_EQ_INT(s->lua_instruction_limit, 1000000000000LL);
    CHECK_EQ_INT(s->lua_memory_limit, 1099511627776LL);
    CHECK(s->weights[0].weight == -1e9 && s->weights[1].weight == 1e9);
    CHECK_EQ_INT(s->bindings[0].phase, POLIS_PHASE_RESET);
    CHECK_EQ_INT(s->bindings[0].priority, -1000000);
    CHECK(s->bindings[0].event == NULL);
    env_end(env);

    /* Parsing again replaces the previous scenario without leaking it. */
    env = env_new(&t);
    CHECK_EQ_INT(parse(env, "{\"agents\": 2, \"plugins\": [\"a\"]}"), POLIS_OK);
    CHECK_EQ_INT(parse(env, "{\"agents\": 5}"), POLIS_OK);
    CHECK_EQ_INT(env->scn.n_agents, 5);
    CHECK_EQ_INT(env->scn.n_plugins, 0);
    env_end(env);
}

static void check_demo(const polis__scenario *s, const char *base)
{
    char buf[1024];
    CHECK_EQ_STR(s->name, "demo");
    CHECK_EQ_STR(s->doc, "a demo with every key");
    CHECK_EQ_INT(s->seed, 42);
    CHECK_EQ_INT(s->max_steps, 250);
    CHECK_EQ_INT(s->n_agents, 3);
    CHECK_EQ_STR(s->agent_names[0], "ann");
    CHECK_EQ_STR(s->agent_names[1], "bob");
    CHECK_EQ_STR(s->agent_names[2], "cy");
    CHECK_EQ_INT(s->max_entities, 1000);
    CHECK(s->has_grid);
    CHECK_EQ_INT(s->grid_width, 16);
    CHECK_EQ_INT(s->grid_height, 9);
    CHECK(s->grid_wrap);
    CHECK_EQ_INT(s->event_queue, 64);
    CHECK_EQ_INT(s->lua_instruction_limit, 0);
    CHECK_EQ_INT(s->lua_memory_limit, 1048576);

    CHECK_EQ_INT(s->n_plugins, 4);
    CHECK_EQ_STR(s->plugins[0].name, "gather");
    CHECK(s->plugins[0].path == NULL);
    CHECK(s->plugins[0].params == NULL);
    CHECK_EQ_STR(s->plugins[0].jpath, "plugins[0]");
    CHECK_EQ_STR(s->plugins[1].name, "social");
    CHECK(s->plugins[1].params != NULL);
    CHECK_EQ_STR(s->plugins[1].jpath, "plugins[1]");
    CHECK_EQ_STR(s->plugins[2].name, "metrics");
    snprintf(buf, sizeof buf, "%s/../plugins/metrics.so", base);
    CHECK_EQ_STR(s->plugins[2].path, buf);
    CHECK_EQ_STR(s->plugins[3].name, "abs");
    CHECK_EQ_STR(s->plugins[3].path, "/opt/polis/abs.so");

    CHECK_EQ_INT(s->n_scripts, 2);
    CHECK_EQ_STR(s->scripts[0].name, "rules");
    snprintf(buf, sizeof buf, "%s/rules.lua", base);
    CHECK_EQ_STR(s->scripts[0].path, buf);
    CHECK(s->scripts[0].params == NULL);
    CHECK_EQ_STR(s->scripts[0].jpath, "scripts[0]");
    CHECK_EQ_STR(s->scripts[1].name, "extra");
    snprintf(buf, sizeof buf, "%s/lua/extra.rules.lua", base);
    CHECK_EQ_STR(s->scripts[1].path, buf);
    CHECK(s->scripts[1].params != NULL);

    CHECK_EQ_INT(s->n_weights, 2);
    CHECK_EQ_STR(s->weights[0].name, "gather.coins");
    CHECK(s->weights[0].weight == 1.5);
    CHECK_EQ_STR(s->weights[0].jpath, "rewards[\"gather.coins\"]");
    CHECK_EQ_STR(s->weights[1].name, "social_share");
    CHECK(s->weights[1].weight == -0.25);
    CHECK_EQ_STR(s->weights[1].jpath, "rewards.social_share");

    CHECK_EQ_INT(s->n_bindings, 2);
    CHECK_EQ_STR(s->bindings[0].call, "gather.on_coin");
    CHECK_EQ_STR(s->bindings[0].event, "coin.collected");
    CHECK_EQ_INT(s->bindings[0].phase, -1);
    CHECK_EQ_INT(s->bindings[0].priority, 0);
    CHECK_EQ_STR(s->bindings[0].jpath, "bindings[0]");
    CHECK_EQ_STR(s->bindings[1].call, "social.tick");
    CHECK(s->bindings[1].event == NULL);
    CHECK_EQ_INT(s->bindings[1].phase, POLIS_PHASE_POST);
    CHECK_EQ_INT(s->bindings[1].priority, -5);
    CHECK_EQ_STR(s->bindings[1].jpath, "bindings[1]");
}

static void test_files(void)
{
    talloc t;
    polis_env *env = env_new(&t);
    char *text = NULL;
    size_t len = 0;
    const char *path = FIXTURES "/demo.json";
    CHECK_EQ_INT(polis__read_file(env, path, &text, &len), POLIS_OK);
    CHECK(text && len > 100 && text[len] == '\0' && strlen(text) == len);
    CHECK_EQ_INT(polis__scenario_parse(env, text, len, path, FIXTURES), POLIS_OK);
    CHECK_EQ_STR(env->scn.source, path);
    CHECK_EQ_STR(env->scn.base_dir, FIXTURES);
    check_demo(&env->scn, FIXTURES);
    polis__free(env, text, len + 1);
    polis__scenario_release_json(env);
    CHECK(env->scn.root == NULL && env->json_arena == NULL);
    CHECK(env->scn.plugins[1].params == NULL && env->scn.scripts[1].params == NULL);
    CHECK_EQ_STR(env->scn.plugins[1].name, "social"); /* the rest stays */
    env_end(env);

    /* Messages name the file as given, with line:col for syntax. */
    env = env_new(&t);
    path = FIXTURES "/bad_syntax.json";
    CHECK_EQ_INT(polis__read_file(env, path, &text, &len), POLIS_OK);
    CHECK_EQ_INT(polis__scenario_parse(env, text, len, path, FIXTURES), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, FIXTURES "/bad_syntax.json:3:23: invalid JSON: syntax error at "
                                    "'\"height\": 4}'");
    polis__free(env, text, len + 1);
    env_end(env);

    /* Parameters are checked against the plugin's table later, with the same file name. */
    env = env_new(&t);
    path = FIXTURES "/bad_param.json";
    CHECK_EQ_INT(polis__read_file(env, path, &text, &len), POLIS_OK);
    CHECK_EQ_INT(polis__scenario_parse(env, text, len, path, FIXTURES), POLIS_OK);
    polis__free(env, text, len + 1);
    static const polis_param_def speed[] = {
        {"speed", POLIS_PARAM_DOUBLE, 0, 0, 10, 1, NULL, "cells per step", false},
    };
    void *out = NULL;
    CHECK_EQ_INT(polis__params_build(env, speed, 1, sizeof(double), env->scn.plugins[0].params,
                                     "plugins[0].params", &out),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, FIXTURES "/bad_param.json: plugins[0].params.speed: expected number in "
                                    "[0, 10], got \"fast\"");
    CHECK(out == NULL);
    env_end(env);

    env = env_new(&t);
    CHECK_EQ_INT(polis__read_file(env, FIXTURES "/nope.json", &text, &len), POLIS_ERR_IO);
    CHECK_EQ_STR(env->err, "cannot read " FIXTURES "/nope.json: No such file or directory");
    CHECK(text == NULL);
    CHECK_EQ_INT(polis__read_file(env, FIXTURES, &text, &len), POLIS_ERR_IO);
    CHECK_EQ_STR(env->err, "cannot read " FIXTURES ": not a regular file (a directory)");
    CHECK(text == NULL);
    /* What cannot be a scenario or a script is refused before a byte is read: /dev/zero
     * would be read until memory ran out, a FIFO would block forever. */
    CHECK_EQ_INT(polis__read_file(env, "/dev/zero", &text, &len), POLIS_ERR_IO);
    CHECK_EQ_STR(env->err, "cannot read /dev/zero: not a regular file (a character device)");
    CHECK(text == NULL);
    const char *fifo = POLIS_BINARY_DIR "/test_config.fifo";
    unlink(fifo);
    CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
    CHECK_EQ_INT(polis__read_file(env, fifo, &text, &len), POLIS_ERR_IO);
    CHECK_EQ_STR(env->err, "cannot read " POLIS_BINARY_DIR "/test_config.fifo: not a regular "
                           "file (a FIFO)");
    polis_env *fenv = NULL;
    polis_error ferr;
    CHECK_EQ_INT(polis_env_create_file(fifo, NULL, &fenv, &ferr), POLIS_ERR_IO);
    CHECK_EQ_STR(ferr.message, "cannot read " POLIS_BINARY_DIR "/test_config.fifo: not a regular "
                               "file (a FIFO)");
    CHECK_EQ_INT(polis_env_create_file("/dev/zero", NULL, &fenv, &ferr), POLIS_ERR_IO);
    CHECK_EQ_STR(ferr.message, "cannot read /dev/zero: not a regular file (a character device)");
    unlink(fifo);
    /* A file beyond the limit (sparse: no disk used) is refused by its size. */
    const char *big = POLIS_BINARY_DIR "/test_config.big.json";
    FILE *bf = fopen(big, "w");
    CHECK(bf != NULL);
    if (bf) fclose(bf);
    CHECK_EQ_INT(truncate(big, (off_t)POLIS__FILE_MAX + 1), 0);
    CHECK_EQ_INT(polis__read_file(env, big, &text, &len), POLIS_ERR_IO);
    CHECK_EQ_STR(env->err, "cannot read " POLIS_BINARY_DIR "/test_config.big.json: 67108865 "
                           "bytes, more than the limit of 67108864 bytes");
    CHECK_EQ_INT(polis_env_create_file(big, NULL, &fenv, &ferr), POLIS_ERR_IO);
    CHECK_EQ_STR(ferr.message, "cannot read " POLIS_BINARY_DIR "/test_config.big.json: 67108865 "
                               "bytes, more than the limit of 67108864 bytes");
    /* Empty files read as an empty, terminated buffer. */
    CHECK_EQ_INT(truncate(big, 0), 0);
    CHECK_EQ_INT(polis__read_file(env, big, &text, &len), POLIS_OK);
    CHECK(text && len == 0 && text[0] == '\0');
    polis__free(env, text, len + 1);
    unlink(big);
    env_end(env);

    env = env_new(&t);
    char *p = polis__path_join(env, "/a/b", "c.so");
    CHECK_EQ_STR(p, "/a/b/c.so");
    polis__strfree(env, p);
    p = polis__path_join(env, "/a/b/", "c.so");
    CHECK_EQ_STR(p, "/a/b/c.so");
    polis__strfree(env, p);
    p = polis__path_join(env, "/a/b", "/abs/c.so");
    CHECK_EQ_STR(p, "/abs/c.so");
    polis__strfree(env, p);
    p = polis__path_join(env, NULL, "c.so");
    CHECK_EQ_STR(p, "c.so");
    polis__strfree(env, p);
    p = polis__path_join(env, "", "x/c.so");
    CHECK_EQ_STR(p, "x/c.so");
    polis__strfree(env, p);
    p = polis__path_join(env, ".", "c.so");
    CHECK_EQ_STR(p, "./c.so");
    polis__strfree(env, p);
    env_end(env);
}

/* ---- parameter tables -------------------------------------------------------------------- */

typedef struct tparams {
    bool flag;
    int64_t count;
    double speed;
    const char *label;
    const polis_json *map;
} tparams;

static const polis_param_def tdefs[] = {
    {"flag", POLIS_PARAM_BOOL, offsetof(tparams, flag), 0, 0, 1, NULL, "a flag", false},
    {"count", POLIS_PARAM_INT, offsetof(tparams, count), 1, 100, 10, NULL, "a count", false},
    {"speed", POLIS_PARAM_DOUBLE, offsetof(tparams, speed), 0, 5, 1.5, NULL, "a speed", false},
    {"label", POLIS_PARAM_STRING, offsetof(tparams, label), 0, 0, 0, "hi", "a label", false},
    {"map", POLIS_PARAM_JSON, offsetof(tparams, map), 0, 0, 0, NULL, "a map", false},
};
#define N_TDEFS ((int32_t)(sizeof tdefs / sizeof tdefs[0]))

/* Parses a scenario whose only plugin has `params` and returns that params object. */
static const struct cJSON *params_of(polis_env *env, const char *params)
{
    char json[2048];
    snprintf(json, sizeof json, "{\"agents\": 1, \"plugins\": [{\"name\": \"p\", \"params\": %s}]}",
             params);
    if (parse(env, json) != POLIS_OK) {
        fprintf(stderr, "params_of: %s\n", env->err);
        return NULL;
    }
    return env->scn.plugins[0].params;
}

#define EXPECT_PARAM_ERR(params, st, msg)                                                          \
    do {                                                                                           \
        talloc t_;                                                                                 \
        polis_env *e_ = env_new(&t_);                                                              \
        const struct cJSON *o_ = params_of(e_, params);                                            \
        void *out_ = (void *)1;                                                                    \
        CHECK(o_ != NULL);                                                                         \
        CHECK_EQ_INT(polis__params_build(e_, tdefs, N_TDEFS, sizeof(tparams), o_,                  \
                                         "plugins[0].params", &out_),                              \
                     st);                                                                          \
        CHECK(out_ == NULL);                                                                       \
        CHECK_EQ_STR(e_->err, msg);                                                                \
        env_end(e_);                                                                               \
    } while (0)

static void test_params(void)
{
    EXPECT_PARAM_ERR("{\"sped\": 1}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.sped: unknown key (expected one of flag, "
                     "count, speed, label, map)");
    EXPECT_PARAM_ERR("{\"flag\": 1}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.flag: expected true or false, got 1");
    EXPECT_PARAM_ERR("{\"count\": \"ten\"}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.count: expected integer in [1, 100], got "
                     "\"ten\"");
    EXPECT_PARAM_ERR("{\"count\": 101}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.count: expected integer in [1, 100], got 101");
    EXPECT_PARAM_ERR("{\"count\": 2.5}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.count: expected integer in [1, 100], got 2.5");
    EXPECT_PARAM_ERR("{\"speed\": 6}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.speed: expected number in [0, 5], got 6");
    EXPECT_PARAM_ERR("{\"speed\": \"1\"}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.speed: expected number in [0, 5], got \"1\"");
    EXPECT_PARAM_ERR("{\"label\": 5}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.label: expected string, got 5");
    /* A failure after a string was copied frees it (env_end checks for leaks). */
    EXPECT_PARAM_ERR("{\"label\": \"x\", \"map\": 1, \"count\": 0}", POLIS_ERR_CONFIG,
                     "demo.json: plugins[0].params.count: expected integer in [1, 100], got 0");

    talloc t;
    polis_env *env;
    tparams *p;

    /* NULL object: every default; the string default is a copy. */
    env = env_new(&t);
    p = NULL;
    CHECK_EQ_INT(
        polis__params_build(env, tdefs, N_TDEFS, sizeof *p, NULL, "plugins[0].params", (void **)&p),
        POLIS_OK);
    CHECK(p && p->flag == true && p->count == 10 && p->speed == 1.5);
    CHECK_EQ_STR(p->label, "hi");
    CHECK(p->label != tdefs[3].def_str);
    CHECK_EQ_INT(polis__json_kind(p->map), -1);
    CHECK_EQ_STR(polis__json_path(p->map), "plugins[0].params.map");
    polis__params_free(env, tdefs, N_TDEFS, sizeof *p, p);
    env_end(env);

    /* Given values, comments ignored, the string copied out of the tree. */
    env = env_new(&t);
    const struct cJSON *o = params_of(env, "{\"_c\": 1, \"flag\": false, \"count\": 100, "
                                           "\"speed\": 0, \"label\": \"yo\", \"map\": {\"k\": 1}}");
    p = NULL;
    CHECK_EQ_INT(
        polis__params_build(env, tdefs, N_TDEFS, sizeof *p, o, "plugins[0].params", (void **)&p),
        POLIS_OK);
    CHECK(p && p->flag == false && p->count == 100 && p->speed == 0.0);
    CHECK_EQ_STR(p->label, "yo");
    CHECK_EQ_INT(polis__json_kind(p->map), 5);
    CHECK_EQ_INT(polis__json_len(p->map), 1);
    polis__scenario_release_json(env);
    CHECK_EQ_STR(p->label, "yo"); /* survives the JSON tree */
    polis__params_free(env, tdefs, N_TDEFS, sizeof *p, p);
    env_end(env);

    /* Required keys, tables without parameters, size 0, non-object params. */
    env = env_new(&t);
    static const polis_param_def req[] = {
        {"count", POLIS_PARAM_INT, 0, 0, 10, 0, NULL, NULL, true},
    };
    void *out = NULL;
    CHECK_EQ_INT(polis__params_build(env, req, 1, sizeof(int64_t), NULL, "plugins[2].params", &out),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "<string>: plugins[2].params: missing required key \"count\"");
    o = params_of(env, "{\"x\": 1}");
    CHECK_EQ_INT(polis__params_build(env, NULL, 0, 0, o, "plugins[0].params", &out),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err,
                 "demo.json: plugins[0].params.x: unknown key (this takes no parameters)");
    o = params_of(env, "{\"_only\": \"a comment\"}");
    out = (void *)1;
    CHECK_EQ_INT(polis__params_build(env, NULL, 0, 0, o, "plugins[0].params", &out), POLIS_OK);
    CHECK(out == NULL);
    env_end(env);

    /* Broken tables are the plugin's bug, refused before memory is touched. */
    env = env_new(&t);
    static const polis_param_def off[] = {
        {"wide", POLIS_PARAM_INT, 4, 0, 10, 0, NULL, NULL, false},
    };
    CHECK_EQ_INT(polis__params_build(env, off, 1, 8, NULL, "plugins[0].params", &out),
                 POLIS_ERR_PLUGIN);
    CHECK_EQ_STR(env->err, "<string>: plugins[0].params: parameter table: \"wide\" at offset 4 "
                           "(8 bytes) does not fit params_size 8");
    static const polis_param_def baddef[] = {
        {"n", POLIS_PARAM_INT, 0, 0, 10, 11, NULL, NULL, false},
    };
    CHECK_EQ_INT(polis__params_build(env, baddef, 1, 8, NULL, "p", &out), POLIS_ERR_PLUGIN);
    CHECK_EQ_STR(env->err, "<string>: p: parameter table: \"n\" has a default that is not an "
                           "integer in [min, max]");
    static const polis_param_def twice[] = {
        {"n", POLIS_PARAM_BOOL, 0, 0, 0, 0, NULL, NULL, false},
        {"n", POLIS_PARAM_BOOL, 1, 0, 0, 0, NULL, NULL, false},
    };
    CHECK_EQ_INT(polis__params_build(env, twice, 2, 2, NULL, "p", &out), POLIS_ERR_PLUGIN);
    CHECK_EQ_STR(env->err, "<string>: p: parameter table: \"n\" is declared twice");
    env_end(env);

    /* Huge INT ranges: numbers are doubles, so the edges are the doubles nearest to them;
     * 2^63 itself does not fit an int64 and is refused (without undefined behaviour). */
    env = env_new(&t);
    static const polis_param_def big[] = {
        {"n", POLIS_PARAM_INT, 0, -9.3e18, 9.3e18, 0, NULL, NULL, false},
    };
    o = params_of(env, "{\"n\": 9223372036854774784}");
    int64_t *np = NULL;
    CHECK_EQ_INT(polis__params_build(env, big, 1, sizeof *np, o, "p", (void **)&np), POLIS_OK);
    CHECK(np && *np == INT64_C(9223372036854774784));
    polis__params_free(env, big, 1, sizeof *np, np);
    o = params_of(env, "{\"n\": -9223372036854775808}");
    CHECK_EQ_INT(polis__params_build(env, big, 1, sizeof *np, o, "p", (void **)&np), POLIS_OK);
    CHECK(np && *np == INT64_MIN);
    polis__params_free(env, big, 1, sizeof *np, np);
    o = params_of(env, "{\"n\": 9223372036854775807}");
    CHECK_EQ_INT(polis__params_build(env, big, 1, sizeof *np, o, "p", (void **)&np),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: p.n: expected integer in [-9223372036854775808, "
                           "9223372036854775807], got 9223372036854775808");
    env_end(env);
}

/* ---- the host-table JSON accessors ----------------------------------------------------------- */

static void test_json_access(void)
{
    talloc t;
    polis_env *env = env_new(&t);
    struct polis_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.env = env;
    const struct cJSON *o = params_of(
        env, "{\"map\": {\"_note\": \"ignored\", \"resources\": [{\"amount\": 5}, {\"amount\": -1},"
             " {\"name\": \"wood\", \"rate\": 0.25, \"on\": true, \"none\": null}], "
             "\"size\": 3, \"_tail\": 0, \"weird key\": 1}}");
    tparams *p = NULL;
    CHECK_EQ_INT(
        polis__params_build(env, tdefs, N_TDEFS, sizeof *p, o, "plugins[0].params", (void **)&p),
        POLIS_OK);
    const polis_json *map = p->map;
    CHECK_EQ_INT(polis__json_kind(map), 5);
    CHECK_EQ_STR(polis__json_path(map), "plugins[0].params.map");
    /* Comment members are invisible. */
    CHECK_EQ_INT(polis__json_len(map), 3);
    CHECK_EQ_STR(polis__json_key(map, 0), "resources");
    CHECK_EQ_STR(polis__json_key(map, 1), "size");
    CHECK_EQ_STR(polis__json_key(map, 2), "weird key");
    CHECK(polis__json_key(map, 3) == NULL);
    CHECK_EQ_STR(polis__json_key(map, 0), "resources"); /* going back works */
    CHECK_EQ_INT(polis__json_kind(polis__json_get(&ctx, map, "_note")), -1);
    CHECK_EQ_STR(polis__json_path(polis__json_at(&ctx, map, 2)),
                 "plugins[0].params.map[\"weird key\"]");

    const polis_json *res = polis__json_get(&ctx, map, "resources");
    CHECK_EQ_INT(polis__json_kind(res), 4);
    CHECK_EQ_INT(polis__json_len(res), 3);
    int64_t v = 0;
    CHECK_EQ_INT(polis__json_int(&ctx,
                                 polis__json_get(&ctx, polis__json_at(&ctx, res, 0), "amount"), 0,
                                 100, &v),
                 POLIS_OK);
    CHECK_EQ_INT(v, 5);
    const polis_json *amt1 = polis__json_get(&ctx, polis__json_at(&ctx, res, 1), "amount");
    CHECK_EQ_INT(polis__json_int(&ctx, amt1, 0, 100, &v), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: plugins[0].params.map.resources[1].amount: expected "
                           "integer in [0, 100], got -1");
    const polis_json *r2 = polis__json_at(&ctx, res, 2);
    const char *s = NULL;
    CHECK_EQ_INT(polis__json_string(&ctx, polis__json_get(&ctx, r2, "name"), &s), POLIS_OK);
    CHECK_EQ_STR(s, "wood");
    double d = 0;
    CHECK_EQ_INT(polis__json_double(&ctx, polis__json_get(&ctx, r2, "rate"), 0, 1, &d), POLIS_OK);
    CHECK(d == 0.25);
    CHECK_EQ_INT(polis__json_double(&ctx, polis__json_get(&ctx, r2, "rate"), 0.5, 1, &d),
                 POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: plugins[0].params.map.resources[2].rate: expected number "
                           "in [0.5, 1], got 0.25");
    bool b = false;
    CHECK_EQ_INT(polis__json_bool(&ctx, polis__json_get(&ctx, r2, "on"), &b), POLIS_OK);
    CHECK(b);
    CHECK_EQ_INT(polis__json_kind(polis__json_get(&ctx, r2, "none")), 0);
    CHECK_EQ_INT(polis__json_bool(&ctx, polis__json_get(&ctx, r2, "none"), &b), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: plugins[0].params.map.resources[2].none: expected true or "
                           "false, got null");
    CHECK_EQ_INT(polis__json_string(&ctx, polis__json_get(&ctx, r2, "rate"), &s), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: plugins[0].params.map.resources[2].rate: expected string, "
                           "got 0.25");

    /* Absent values keep their path, so a plugin can say what is missing. */
    const polis_json *miss = polis__json_get(&ctx, r2, "amount");
    CHECK_EQ_INT(polis__json_kind(miss), -1);
    CHECK_EQ_STR(polis__json_path(miss), "plugins[0].params.map.resources[2].amount");
    CHECK_EQ_INT(polis__json_int(&ctx, miss, 0, 10, &v), POLIS_ERR_CONFIG);
    CHECK_EQ_STR(env->err, "demo.json: plugins[0].params.map.resources[2].amount: missing "
                           "(expected integer in [0, 10])");
    const polis_json *out_of = polis__json_at(&ctx, res, 7);
    CHECK_EQ_INT(polis__json_kind(out_of), -1);
    CHECK_EQ_STR(polis__json_path(out_of), "plugins[0].params.map.resources[7]");
    CHECK_EQ_INT(polis__json_kind(polis__json_at(&ctx, res, -1)), -1);
    /* ... also through absent or scalar parents, and NULL never crashes. */
    const polis_json *deep = polis__json_at(&ctx, polis__json_get(&ctx, miss, "x"), 3);
    CHECK_EQ_INT(polis__json_kind(deep), -1);
    CHECK_EQ_STR(polis__json_path(deep), "plugins[0].params.map.resources[2].amount.x[3]");
    CHECK_EQ_INT(polis__json_kind(polis__json_get(&ctx, polis__json_get(&ctx, map, "size"), "a")),
                 -1);
    CHECK_EQ_INT(polis__json_len(polis__json_get(&ctx, map, "size")), 0);
    CHECK(polis__json_key(res, 0) == NULL);
    CHECK_EQ_INT(polis__json_kind(NULL), -1);
    CHECK_EQ_INT(polis__json_len(NULL), 0);
    CHECK_EQ_INT(polis__json_kind(polis__json_at(&ctx, NULL, 0)), -1);
    CHECK_EQ_INT(polis__json_kind(polis__json_get(&ctx, NULL, "a")), -1);
    CHECK_EQ_INT(polis__json_kind(polis__json_get(NULL, NULL, NULL)), -1);
    CHECK(polis__json_key(NULL, 0) == NULL);
    CHECK_EQ_STR(polis__json_path(NULL), "");
    CHECK_EQ_INT(polis__json_int(&ctx, NULL, 0, 1, &v), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis__json_int(NULL, NULL, 0, 1, &v), POLIS_ERR_INVALID);

    /* Sequential walks use the cursor; a fresh walk from the start still works. */
    int64_t sum = 0;
    for (int32_t i = 0; i < polis__json_len(res); i++) {
        int64_t a = 0;
        const polis_json *am = polis__json_get(&ctx, polis__json_at(&ctx, res, i), "amount");
        if (polis__json_kind(am) == 2 && polis__json_int(&ctx, am, -10, 10, &a) == POLIS_OK)
            sum += a;
    }
    CHECK_EQ_INT(sum, 4);

    /* A wrapper that cannot be allocated stands in as "out of memory" all the way down. */
    /* Wrappers come from an arena: keep asking until it needs a chunk, which fails. */
    t.fail_at = t.calls;
    const polis_json *oom = NULL;
    for (int i = 0; i < 100000; i++) {
        oom = polis__json_get(&ctx, map, "size");
        if (polis__json_kind(oom) != 2) break;
    }
    t.fail_at = -1;
    CHECK_EQ_STR(env->err, "out of memory");
    CHECK_EQ_INT(polis__json_kind(oom), -2);
    CHECK_EQ_INT(polis__json_int(&ctx, oom, 0, 10, &v), POLIS_ERR_NOMEM);
    CHECK_EQ_INT(polis__json_kind(polis__json_at(&ctx, oom, 0)), -2);
    CHECK_EQ_INT(polis__json_int(&ctx, polis__json_get(&ctx, oom, "a"), 0, 1, &v), POLIS_ERR_NOMEM);

    polis__params_free(env, tdefs, N_TDEFS, sizeof *p, p);
    env_end(env);
}

/* ---- out of memory -----------------------------------------------------------------------------
 */

static void test_failing_allocator(void)
{
    char *text = NULL;
    size_t len = 0;
    {
        talloc t;
        polis_env *env = env_new(&t);
        CHECK_EQ_INT(polis__read_file(env, FIXTURES "/demo.json", &text, &len), POLIS_OK);
        /* Kept past the env: copy into plain memory. */
        char *copy = malloc(len + 1);
        memcpy(copy, text, len + 1);
        polis__free(env, text, len + 1);
        text = copy;
        env_end(env);
    }
    /* Every allocation of the env allocator can fail, on the way to success and on the way to
     * a config error (the duplicate check allocates too); cJSON's own allocations are in the
     * C heap, outside this allocator (test_cjson_oom). */
    const char *inputs[] = {text, "{\"agents\": 2, \"rewards\": {\"a\": 1, \"b\": 2, \"a\": 3}}",
                            "{\"agents\": 2, \"seed\": x}"};
    const polis_status want[] = {POLIS_OK, POLIS_ERR_CONFIG, POLIS_ERR_CONFIG};
    for (int in = 0; in < 3; in++) {
        long n;
        polis_status st = POLIS_ERR_NOMEM;
        for (n = 0; n < 100000 && st == POLIS_ERR_NOMEM; n++) {
            talloc t;
            polis_env *env = env_new(&t);
            t.fail_at = n;
            st = polis__scenario_parse(env, inputs[in], strlen(inputs[in]), FIXTURES "/demo.json",
                                       FIXTURES);
            if (st == POLIS_ERR_NOMEM) CHECK_EQ_STR(env->err, "out of memory");
            if (st != POLIS_OK) {
                CHECK_EQ_INT(t.live, 0);
                CHECK(env->scn.root == NULL && env->scn.source == NULL);
            } else {
                check_demo(&env->scn, FIXTURES);
            }
            env_end(env);
        }
        CHECK_EQ_INT(st, want[in]);
        CHECK(n > (in == 0 ? 50 : 2)); /* the loop really ran through the allocations */
    }

    /* params_build: every allocation (struct, string copies, JSON wrappers) can fail. */
    long n;
    polis_status st = POLIS_ERR_NOMEM;
    for (n = 0; n < 1000 && st != POLIS_OK; n++) {
        talloc t;
        polis_env *env = env_new(&t);
        const struct cJSON *o = params_of(env, "{\"label\": \"x\", \"map\": {}}");
        long base = t.calls;
        t.fail_at = base + n;
        tparams *p = NULL;
        st = polis__params_build(env, tdefs, N_TDEFS, sizeof *p, o, "p", (void **)&p);
        if (st != POLIS_OK) {
            CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
            CHECK(p == NULL);
        } else {
            CHECK_EQ_STR(p->label, "x");
            polis__params_free(env, tdefs, N_TDEFS, sizeof *p, p);
        }
        env_end(env);
    }
    CHECK_EQ_INT(st, POLIS_OK);
    CHECK(n >= 3);

    /* read_file. */
    st = POLIS_ERR_NOMEM;
    for (n = 0; n < 100 && st != POLIS_OK; n++) {
        talloc t;
        polis_env *env = env_new(&t);
        t.fail_at = n;
        char *buf = NULL;
        st = polis__read_file(env, FIXTURES "/demo.json", &buf, &len);
        if (st != POLIS_OK) {
            CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
            CHECK(buf == NULL);
        } else {
            polis__free(env, buf, len + 1);
        }
        env_end(env);
    }
    CHECK_EQ_INT(st, POLIS_OK);
    free(text);
}

/* cJSON allocates from the C heap and returns NULL both for bad text and for a failed
 * malloc; the latter must still be "out of memory". A child process lowers its address-space
 * limit so that the copy of the text fits but cJSON's copy of a long string does not.
 * AddressSanitizer reserves more address space than any such limit, so it skips this. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang's spelling of __SANITIZE_ADDRESS__ */
#define TEST_CONFIG_ASAN 1
#endif
#endif
static void test_cjson_oom(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(TEST_CONFIG_ASAN)
    fprintf(stderr, "test_cjson_oom: skipped under AddressSanitizer\n");
#else
    size_t big = (size_t)64 << 20;
    char *text = malloc(big + 64);
    CHECK(text != NULL);
    if (!text) return;
    size_t k = (size_t)sprintf(text, "{\"agents\": 1, \"doc\": \"");
    memset(text + k, 'a', big);
    strcpy(text + k + big, "\"}");
    size_t len = strlen(text);
    pid_t pid = fork();
    if (pid == 0) {
        talloc t;
        polis_env *env = env_new(&t);
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1) _exit(3);
        fclose(f);
        rlim_t vm = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
        struct rlimit lim = {vm + (rlim_t)big + ((rlim_t)32 << 20), RLIM_INFINITY};
        lim.rlim_max = lim.rlim_cur;
        if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(4);
        polis_status st = polis__scenario_parse(env, text, len, "demo.json", NULL);
        int ok = st == POLIS_ERR_NOMEM && strcmp(env->err, "out of memory") == 0;
        polis__scenario_free(env);
        _exit(ok && t.live == 0 ? 0 : st == POLIS_OK ? 5 : 6);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
    /* Without the limit the same text parses. */
    talloc t;
    polis_env *env = env_new(&t);
    CHECK_EQ_INT(polis__scenario_parse(env, text, len, "demo.json", NULL), POLIS_OK);
    env_end(env);
    free(text);
#endif
}

int main(void)
{
    test_syntax();
    test_duplicates_and_comments();
    test_schema_errors();
    test_defaults();
    test_files();
    test_params();
    test_json_access();
    test_failing_allocator();
    test_cjson_oom();
    CHECK_DONE();
}
