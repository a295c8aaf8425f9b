/* render.c: views (polis_env_render) and text actions (polis_env_parse_action) through the
 * public API, on the walker and renderer test plugins: exact outputs, ordering,
 * the JSON object, every error message, lifecycle states, allocation failures. */
#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"
#define EXPLORATION POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json"

static polis_env *walker_env(test_log *log, test_alloc *alloc)
{
    return test_env_file_log(WALKER, log, alloc);
}

/* walker (bounded 12x12, 2 agents) plus the renderer plugin in `mode`, in either order. */
static polis_env *pair_env(const char *mode, bool renderer_first, test_log *log)
{
    char json[1024];
    char rp[128];
    snprintf(rp, sizeof rp, "{\"name\": \"renderer\", \"params\": {\"mode\": \"%s\"}}", mode);
    const char *gp = "{\"name\": \"walker\", \"params\": {\"items\": 10}}";
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 50, \"grid\": {\"width\": 12, \"height\": 12}, "
             "\"plugins\": [%s, %s]}",
             renderer_first ? rp : gp, renderer_first ? gp : rp);
    return test_env(json, log, NULL);
}

/* The renderer plugin alone. */
static polis_env *renderer_env(const char *mode, test_log *log)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 3, \"max_steps\": 4, \"plugins\": [{\"name\": \"renderer\", "
             "\"params\": {\"mode\": \"%s\"}}]}",
             mode);
    return test_env(json, log, NULL);
}

/* ---- ordering, concatenation, the JSON object -------------------------------------------- */

static void test_ordering(void)
{
    polis_env *solo = test_env("{\"agents\": 2, \"max_steps\": 50, \"grid\": {\"width\": 12, "
                               "\"height\": 12}, \"plugins\": [{\"name\": \"walker\", \"params\": "
                               "{\"items\": 10}}]}",
                               NULL, NULL);
    polis_env *gr = pair_env("ok", false, NULL);
    polis_env *rg = pair_env("ok", true, NULL);
    if (!solo || !gr || !rg) goto out;
    CHECK_EQ_STR(polis_env_render_formats(gr), "ascii json text");
    CHECK_EQ_STR(polis_env_render_formats(rg), "ascii json text");
    CHECK_EQ_INT(polis_env_reset(solo, 4), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(gr, 4), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(rg, 4), POLIS_OK);
    int32_t noop[2] = {0, 0};
    CHECK_EQ_INT(test_step_ids(solo, noop), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(gr, noop), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(rg, noop), POLIS_OK);

    char gtext[4096], gjson[4096], want[8192];
    snprintf(gtext, sizeof gtext, "%s", test_render(solo, 1, "text"));
    const char *gj = test_render(solo, 1, "json");
    /* the solo rendering is {"walker":<piece>}: cut the piece out */
    CHECK(strncmp(gj, "{\"walker\":", 10) == 0);
    snprintf(gjson, sizeof gjson, "%.*s", (int)strlen(gj) - 11, gj + 10);

    /* text: the pieces in registration order, concatenated as written, then the kernel's
     * line of legal actions (once, whatever the number of pieces; both plugins' actions) */
    char *legal = strstr(gtext, "Legal actions: ");
    CHECK(legal != NULL && strchr(legal, '\n') == legal + strlen(legal) - 1);
    if (!legal) goto out;
    *legal = '\0'; /* gtext is walker's piece alone now */
    snprintf(want, sizeof want,
             "%srenderer sees agent_1 at tick 1.\nLegal actions: noop, move_north, move_south, "
             "move_west, move_east, wave.\n",
             gtext);
    CHECK_EQ_STR(test_render(gr, 1, "text"), want);
    snprintf(want, sizeof want,
             "renderer sees agent_1 at tick 1.\n%sLegal actions: noop, wave, move_north, "
             "move_south, move_west, move_east.\n",
             gtext);
    CHECK_EQ_STR(test_render(rg, 1, "text"), want);

    /* json: one member per plugin, in registration order, each piece verbatim */
    snprintf(want, sizeof want,
             "{\"walker\":%s,\"renderer\":{\"agent\":1,\"tick\":1,\"note\":\"a \\\"quoted\\\" "
             "word\"}}",
             gjson);
    CHECK_EQ_STR(test_render(gr, 1, "json"), want);
    snprintf(want, sizeof want,
             "{\"renderer\":{\"agent\":1,\"tick\":1,\"note\":\"a \\\"quoted\\\" word\"},"
             "\"walker\":%s}",
             gjson);
    CHECK_EQ_STR(test_render(rg, 1, "json"), want);
    cJSON *doc = cJSON_Parse(test_render(rg, 0, "json"));
    CHECK(cJSON_IsObject(doc) && cJSON_GetArraySize(doc) == 2);
    CHECK_EQ_STR(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "renderer"), "note")
            ->valuestring,
        "a \"quoted\" word");
    cJSON_Delete(doc);

    /* a format only one plugin renders */
    CHECK_EQ_STR(test_render(gr, 0, "ascii"), "[#]");
out:
    polis_env_destroy(solo);
    polis_env_destroy(gr);
    polis_env_destroy(rg);
}

static void test_start_registration(void)
{
    polis_env *env = renderer_env("start", NULL);
    if (!env) return;
    CHECK_EQ_STR(polis_env_render_formats(env), "ascii json text");
    CHECK_EQ_INT(polis_env_reset(env, 0), POLIS_OK);
    CHECK_EQ_STR(test_render(env, 2, "text"),
                 "renderer sees agent_2 at tick 0.\nLegal actions: noop, wave.\n");
    CHECK_EQ_STR(test_render(env, 0, "json"),
                 "{\"renderer\":{\"agent\":0,\"tick\":0,\"note\":\"a \\\"quoted\\\" word\"}}");
    CHECK_EQ_STR(test_parse(env, 0, "wave"), "1 wave");
    CHECK_EQ_STR(test_parse(env, 0, "wave at me"), "1 wave");
    polis_env_destroy(env);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_argument_errors(void)
{
    polis_env *env = walker_env(NULL, NULL);
    if (!env) return;
    char *out = (char *)"junk";
    CHECK_EQ_INT(polis_env_render(NULL, 0, "text", &out), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_render(env, 0, "text", NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "render: out is NULL");
    CHECK_EQ_STR(test_render(env, 0, NULL), "ERR 1: render: format is NULL");
    CHECK_EQ_STR(test_render(env, -1, "text"), "ERR 1: render: agent -1 is not an agent id (0..3)");
    CHECK_EQ_STR(test_render(env, 4, "text"), "ERR 1: render: agent 4 is not an agent id (0..3)");
    CHECK_EQ_STR(test_render(env, 0, "yaml"),
                 "ERR 1: render: no renderer for format \"yaml\" (formats: json text)");
    CHECK_EQ_STR(test_render(env, 0, ""),
                 "ERR 1: render: no renderer for format \"\" (formats: json text)");
    CHECK_EQ_STR(test_render(env, 0, "te\"xt\n"),
                 "ERR 1: render: no renderer for format \"te\\\"xt\\n\" (formats: json text)");
    CHECK_EQ_STR(test_render(env, 0, "text"),
                 "ERR 6: render: no episode yet; call reset before rendering");
    polis_env_destroy(env);

    polis_env *none = renderer_env("none", NULL);
    if (!none) return;
    CHECK_EQ_STR(polis_env_render_formats(none), "");
    CHECK_EQ_INT(polis_env_reset(none, 0), POLIS_OK);
    CHECK_EQ_STR(test_render(none, 0, "text"),
                 "ERR 1: render: no renderer for format \"text\" (formats: none registered)");
    CHECK_EQ_STR(polis_env_render_formats(NULL), "");
    polis_env_destroy(none);
}

static void test_states(void)
{
    /* walker + probe, whose post hook fails at tick 2 */
    polis_env *env = test_env("{\"agents\": 2, \"max_steps\": 10, \"grid\": {\"width\": 6, "
                              "\"height\": 6}, \"plugins\": [\"walker\", {\"name\": \"probe\", "
                              "\"params\": {\"mode\": \"fail_hook\"}}]}",
                              NULL, NULL);
    if (!env) return;
    int32_t noop[2] = {0, 0};
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(env, noop), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(env, noop), POLIS_OK);
    CHECK_CONTAINS(test_render(env, 0, "text"), "Tick 2 of 10.");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
    CHECK_EQ_STR(test_render(env, 0, "text"),
                 "ERR 6: render: the previous step or reset failed; call reset");
    CHECK_EQ_STR(test_render(env, 1, "json"),
                 "ERR 6: render: the previous step or reset failed; call reset");
    /* parsing names and parsers is not tied to the episode */
    CHECK_EQ_STR(test_parse(env, 0, "n"), "1 move_north");
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    CHECK_CONTAINS(test_render(env, 0, "text"), "Tick 0 of 10.");
    polis_env_destroy(env);

    /* a finished episode still renders, and says so */
    env = test_env("{\"agents\": 1, \"max_steps\": 2, \"grid\": {\"width\": 5, \"height\": 5}, "
                   "\"plugins\": [\"walker\"]}",
                   NULL, NULL);
    if (!env) return;
    int32_t one[1] = {0};
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_CONTAINS(test_render(env, 0, "text"), "Legal actions: noop, move_");
    CHECK_EQ_INT(test_step_ids(env, one), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(env, one), POLIS_OK);
    CHECK(polis_env_done(env));
    const char *text = test_render(env, 0, "text");
    CHECK_CONTAINS(text, "Tick 2 of 2.\n");
    CHECK_CONTAINS(text, "Your episode is over (truncated).\n");
    CHECK(strstr(text, "Legal actions: noop.\n") != NULL); /* the mask of a finished agent */
    polis_env_destroy(env);
}

static const char *render_error(const char *mode, int32_t agent, const char *format)
{
    static char msg[2048];
    polis_env *env = renderer_env(mode, NULL);
    if (!env) return "(create failed)";
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    int32_t noop[3] = {0, 0, 0};
    CHECK_EQ_INT(test_step_ids(env, noop), POLIS_OK);
    snprintf(msg, sizeof msg, "%s", test_render(env, agent, format));
    /* a failed rendering leaves the env running */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(test_render(env, 0, "ascii"), "[#]");
    polis_env_destroy(env);
    return msg;
}

static void test_renderer_errors(void)
{
    CHECK_EQ_STR(render_error("bad_json", 2, "json"),
                 "ERR 1: renderer: the json renderer wrote invalid JSON (error at byte 13 of 13: "
                 "\"{\\\"agent\\\": 2,}\") [render json, agent 2 (agent_2), tick 1]");
    CHECK_EQ_STR(render_error("trailing_json", 0, "json"),
                 "ERR 1: renderer: the json renderer wrote invalid JSON (error at byte 4 of 7: "
                 "\"[1] [2]\") [render json, agent 0 (agent_0), tick 1]");
    CHECK_EQ_STR(render_error("empty_json", 0, "json"),
                 "ERR 1: renderer: the json renderer wrote no JSON value [render json, agent 0 "
                 "(agent_0), tick 1]");
    CHECK_EQ_STR(render_error("fail", 1, "text"),
                 "ERR 1: renderer: cannot see agent 1 [render text, agent 1 (agent_1), tick 1]");
    CHECK_EQ_STR(render_error("fail", 0, "text"),
                 "renderer sees agent_0 at tick 1.\nLegal actions: noop, wave.\n");
    CHECK_EQ_STR(render_error("fail_silent", 0, "text"),
                 "ERR 8: renderer: failed (limit exceeded) [render text, agent 0 (agent_0), "
                 "tick 1]");
    CHECK_EQ_STR(render_error("nul", 0, "text"),
                 "ERR 1: renderer: text_append: NUL byte at offset 1 of 3 [render text, agent 0 "
                 "(agent_0), tick 1]");
    CHECK_EQ_STR(render_error("null_str", 0, "text"),
                 "ERR 1: renderer: text_append: the string is NULL (length 5) [render text, agent "
                 "0 (agent_0), tick 1]");
    CHECK_EQ_STR(render_error("printf_nul", 0, "text"),
                 "ERR 1: renderer: text_printf: NUL byte at offset 1 of 3 [render text, agent 0 "
                 "(agent_0), tick 1]");
    CHECK_EQ_STR(render_error("huge", 2, "text"),
                 "ERR 8: renderer: the rendering is longer than 16777216 bytes [render text, "
                 "agent 2 (agent_2), tick 1]");
    /* the first failure is the one reported; later appends are no-ops */
    CHECK_EQ_STR(render_error("text_after_error", 0, "text"),
                 "ERR 1: renderer: text_append: the string is NULL (length 1) [render text, agent "
                 "0 (agent_0), tick 1]");
}

#define INIT_FAILED "<string>: plugins[0]: plugin \"renderer\" init failed: renderer: "

static const char *create_error(const char *mode)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 1, \"plugins\": [{\"name\": \"renderer\", \"params\": {\"mode\": "
             "\"%s\"}}]}",
             mode);
    return test_env_error(json);
}

static void test_registration_errors(void)
{
    CHECK_EQ_STR(create_error("bad_format"),
                 INIT_FAILED "renderer: format \"Text\" is not 1-63 characters of [a-z0-9_]");
    CHECK_EQ_STR(create_error("long_format"),
                 INIT_FAILED "renderer: format \"a2345678901234567890123456789012345678901234567890"
                             "12345678901234\" is not 1-63 characters of [a-z0-9_]");
    CHECK_EQ_STR(create_error("null_format"),
                 INIT_FAILED "renderer: format NULL is not 1-63 characters of [a-z0-9_]");
    CHECK_EQ_STR(create_error("null_fn"), INIT_FAILED "renderer text: function is NULL");
    CHECK_EQ_STR(create_error("dup"),
                 INIT_FAILED "renderer for format \"text\" is already registered by renderer "
                             "(one per format per plugin)");
    CHECK_EQ_STR(create_error("parser_null"), INIT_FAILED "action_parser: function is NULL");

    polis_env *env = renderer_env("late", NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 0), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env),
                 "renderer: renderer: registration is closed once the env is created (register "
                 "in init or start) [hook reset, tick 0]");
    CHECK_EQ_STR(polis_env_render_formats(env), "");
    polis_env_destroy(env);
}

/* ---- text actions ------------------------------------------------------------------------ */

/* What the kernel says about text actions, whatever the parsers: names before parsers, the
 * message when nobody takes the input (quoted, cut), bad calls, no mask check. */
static void test_parse_kernel(void)
{
    polis_env *env = walker_env(NULL, NULL);
    if (!env) return;
    /* before the first reset: action names and parsers need no episode */
    CHECK_EQ_STR(test_parse(env, 0, "move_north"), "1 move_north");
    CHECK_EQ_STR(test_parse(env, 0, "s"), "2 move_south");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(test_parse(env, 0, "noop"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 0, " \t move_west \n"), "3 move_west");
    CHECK_EQ_STR(test_parse(env, 0, "  rest\n"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 0, "Noop x"),
                 "ERR 9: agent 0 (agent_0): cannot parse action "
                 "\"Noop x\" (action names: noop, move_north, move_south, "
                 "move_west, move_east; 1 parser tried)");
    /* the input is quoted with escapes and cut after 64 bytes: 20 before the a's, 44 a's */
    char want[1024];
    snprintf(want, sizeof want,
             "ERR 9: agent 2 (agent_2): cannot parse action \"line one\\nline\\ttwo \\x01 "
             "%.44s\"... (action names: noop, move_north, move_south, move_west, move_east; 1 "
             "parser tried)",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    CHECK_EQ_STR(test_parse(env, 2,
                            "line one\nline\ttwo \x01 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaa"),
                 want);
    /* bad calls */
    CHECK_EQ_STR(test_parse(env, 0, ""), "ERR 9: agent 0 (agent_0): empty action");
    CHECK_EQ_STR(test_parse(env, 3, " \n\t "), "ERR 9: agent 3 (agent_3): empty action");
    CHECK_EQ_STR(test_parse(env, 0, NULL), "ERR 1: parse_action: agent 0 (agent_0): input is NULL");
    CHECK_EQ_STR(test_parse(env, 4, "n"), "ERR 1: parse_action: agent 4 is not an agent id (0..3)");
    CHECK_EQ_STR(test_parse(env, -2, "n"),
                 "ERR 1: parse_action: agent -2 is not an agent id (0..3)");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "n", NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "parse_action: out_action is NULL");
    int32_t id = 7;
    CHECK_EQ_INT(polis_env_parse_action(NULL, 0, "n", &id), POLIS_ERR_INVALID);
    /* not checked against the mask: an action masked for an agent still parses */
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++)
        for (int32_t k = 1; k < io->n_actions; k++)
            if (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)k]) {
                const char *w[5] = {"", "n", "s", "w", "e"};
                char got[64];
                snprintf(got, sizeof got, "%d %s", k, polis_env_action_name(env, k));
                CHECK_EQ_STR(test_parse(env, a, w[k]), got);
            }
    polis_env_destroy(env);
}

static void test_parser_chain(void)
{
    test_log log;
    test_log_clear(&log);
    polis_env *gr = pair_env("ok", false, &log);
    if (!gr) return;
    CHECK_EQ_INT(polis_env_reset(gr, 2), POLIS_OK);

    /* an action name never reaches a parser */
    test_log_clear(&log);
    CHECK_EQ_STR(test_parse(gr, 1, "wave"), "5 wave");
    CHECK_EQ_INT(log.lines, 0);
    /* walker accepts first; the renderer plugin is not asked */
    CHECK_EQ_STR(test_parse(gr, 1, "n"), "1 move_north");
    CHECK_EQ_INT(log.lines, 0);
    /* walker declines, the renderer plugin accepts; it sees the agent and the trimmed input */
    CHECK_EQ_STR(test_parse(gr, 1, "  wave hello \r\n"), "5 wave");
    CHECK_EQ_STR(log.text, "[renderer] parse agent=1 input=wave hello\n");
    /* malformed, with and without a message */
    CHECK_EQ_STR(test_parse(gr, 0, "bad wave"),
                 "ERR 1: renderer: malformed wave: bad wave [parse \"bad wave\", agent 0 "
                 "(agent_0), tick 0]");
    CHECK_EQ_STR(test_parse(gr, 0, "silent"),
                 "ERR 8: renderer: failed (limit exceeded) [parse \"silent\", agent 0 (agent_0), "
                 "tick 0]");
    /* accepted with an id that is no action */
    CHECK_EQ_STR(test_parse(gr, 1, "range"),
                 "ERR 9: renderer: the action parser accepted the input but returned action 99, "
                 "outside [0, 6) [parse \"range\", agent 1 (agent_1), tick 0]");
    CHECK_EQ_STR(test_parse(gr, 1, "unset"),
                 "ERR 9: renderer: the action parser accepted the input but returned action -1, "
                 "outside [0, 6) [parse \"unset\", agent 1 (agent_1), tick 0]");
    /* both decline: the renderer's "not mine" message is dropped */
    test_log_clear(&log);
    CHECK_EQ_STR(test_parse(gr, 1, "dance"),
                 "ERR 9: agent 1 (agent_1): cannot parse action \"dance\" (action names: noop, "
                 "move_north, move_south, move_west, move_east, wave; 2 parsers tried)");
    CHECK_EQ_STR(log.text, "[renderer] parse agent=1 input=dance\n");
    int32_t noop[2] = {0, 0};
    CHECK_EQ_INT(test_step_ids(gr, noop), POLIS_OK);
    CHECK_EQ_STR(test_parse(gr, 0, "bad"),
                 "ERR 1: renderer: malformed wave: bad [parse \"bad\", agent 0 (agent_0), tick 1]");
    polis_env_destroy(gr);

    /* registration order decides: a greedy parser first takes even "north" */
    polis_env *greedy_first = pair_env("greedy", true, NULL);
    polis_env *greedy_last = pair_env("greedy", false, NULL);
    if (greedy_first && greedy_last) {
        CHECK_EQ_STR(test_parse(greedy_first, 0, "north"), "1 wave");
        CHECK_EQ_STR(test_parse(greedy_last, 0, "n"), "1 move_north");
        CHECK_EQ_STR(test_parse(greedy_last, 0, "fly"), "5 wave");
        /* exact names still come first */
        CHECK_EQ_STR(test_parse(greedy_first, 0, "move_south"), "3 move_south");
    }
    polis_env_destroy(greedy_first);
    polis_env_destroy(greedy_last);
}

static void test_parse_bounded_names(void)
{
    polis_env *env = renderer_env("many", NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_actions(env), 42);
    CHECK_EQ_STR(test_parse(env, 2, "act_07"), "9 act_07");
    CHECK_EQ_STR(test_parse(env, 2, "jump"),
                 "ERR 9: agent 2 (agent_2): cannot parse action \"jump\" (action names: noop, "
                 "wave, act_00, act_01, act_02, act_03, act_04, act_05, act_06, act_07, act_08, "
                 "act_09, act_10, act_11, act_12, act_13, ... (+26 more); 0 parsers tried)");
    polis_env_destroy(env);
}

/* ---- allocation failures ----------------------------------------------------------------- */

static void test_alloc_failures(void)
{
    test_alloc alloc = {0};
    polis_env *env = walker_env(NULL, &alloc);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    char good[4096];
    snprintf(good, sizeof good, "%s", test_render(env, 0, "text"));
    long before = alloc.calls;
    char *out = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_OK);
    polis_free(out);
    long per_render = alloc.calls - before;
    CHECK(per_render >= 1); /* the text buffer */
    long long live = alloc.live;
    for (long k = 1; k <= per_render; k++) {
        alloc.fail_at = alloc.calls + k;
        out = (char *)"junk";
        CHECK_EQ_INT(polis_env_render(env, 0, "text", &out), POLIS_ERR_NOMEM);
        CHECK(out == NULL);
        CHECK_CONTAINS(polis_env_error(env), "walker: out of memory (rendering ");
        CHECK_CONTAINS(polis_env_error(env), " [render text, agent 0 (agent_0), tick 0]");
        CHECK_EQ_INT(alloc.live, live);
        alloc.fail_at = 0;
        CHECK_EQ_STR(test_render(env, 0, "text"), good);
    }
    /* a parser gets a copy of the input only when whitespace trails it */
    alloc.fail_at = alloc.calls + 1;
    CHECK_EQ_STR(test_parse(env, 0, "n "), "ERR 2: parse_action: out of memory");
    alloc.fail_at = alloc.calls + 1;
    CHECK_EQ_STR(test_parse(env, 0, "  n"), "1 move_north");
    alloc.fail_at = 0;
    CHECK_EQ_INT(alloc.live, live);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);

    /* creation with renderers and parsers under every failing allocation: clean errors */
    for (long k = 1;; k++) {
        test_alloc a2 = {0};
        a2.fail_at = k;
        polis_options o = test_options(NULL, &a2);
        polis_env *e = NULL;
        polis_error err;
        polis_status st = polis_env_create_file(WALKER, &o, &e, &err);
        if (st == POLIS_OK) {
            CHECK_EQ_STR(polis_env_render_formats(e), "json text");
            polis_env_destroy(e);
            CHECK_EQ_INT(a2.live, 0);
            break;
        }
        CHECK(st == POLIS_ERR_NOMEM || st == POLIS_ERR_PLUGIN || st == POLIS_ERR_CONFIG);
        CHECK_EQ_INT(a2.live, 0);
        if (k > 100000) {
            CHECK(!"creation never succeeded");
            break;
        }
    }
}

/* The kernel's "Legal actions" line is written from the mask row as it is at render time:
 * rows written here by hand pin the format (families as runs, the note on ranges only when
 * a range is there); a reset writes the real masks again. */
static void test_legal_line(void)
{
    polis_env *env = test_env_file(EXPLORATION, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    int32_t n = io->n_actions, share = polis_env_action_id(env, "share_map_0");
    int32_t up = polis_env_action_id(env, "move_up");
    CHECK(share > 0 && up > 0 && polis_env_action_id(env, "share_map_7") == share + 7);
    uint8_t *row = io->masks + (size_t)n; /* agent 1 */
    memset(row, 0, (size_t)n);
    row[0] = 1;
    const char *text = test_render(env, 1, "text");
    CHECK(strstr(text, "\nLegal actions: noop.\n") != NULL);
    CHECK_EQ_INT((int)strlen(strstr(text, "Legal actions:")),
                 (int)strlen("Legal actions: noop.\n"));
    /* runs of 3+ are ranges; runs of 1 or 2 are names */
    static const uint8_t bits[8] = {1, 1, 1, 0, 1, 0, 1, 1};
    memcpy(row + share, bits, sizeof bits);
    row[up] = 1;
    CHECK_CONTAINS(test_render(env, 1, "text"),
                   "\nLegal actions: noop, share_map_0..2, share_map_4, share_map_6, share_map_7, "
                   "move_up (x_i..j: each of x_i to x_j).\n");
    static const uint8_t pairs[8] = {0, 1, 1, 0, 0, 0, 0, 1};
    memcpy(row + share, pairs, sizeof pairs);
    CHECK_CONTAINS(test_render(env, 1, "text"),
                   "\nLegal actions: noop, share_map_1, share_map_2, share_map_7, move_up.\n");
    memset(row + share, 1, 8);
    CHECK_CONTAINS(test_render(env, 1, "text"), "noop, share_map_0..7, move_up (x_i..j");
    /* the other formats are the plugins' own */
    CHECK(strstr(test_render(env, 1, "json"), "Legal actions") == NULL);
    /* the describe-level doc of each action */
    CHECK_EQ_STR(polis_env_action_doc(env, 0), "do nothing");
    CHECK(polis_env_action_doc(env, n) == NULL && polis_env_action_doc(env, -1) == NULL);
    CHECK(strlen(polis_env_action_doc(env, share + 3)) > 0);
    polis_env_destroy(env);
}

int main(void)
{
    test_legal_line();
    test_ordering();
    test_start_registration();
    test_argument_errors();
    test_states();
    test_renderer_errors();
    test_registration_errors();
    test_parse_kernel();
    test_parser_chain();
    test_parse_bounded_names();
    test_alloc_failures();
    CHECK_DONE();
}
