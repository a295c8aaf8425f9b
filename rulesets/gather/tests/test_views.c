/* gather's views (views.c) through the public API: the exact "text" and "json" renderings of
 * seeded states, the JSON view against the observation buffer step after step, and the action
 * parser (words and JSON, malformed and truncated input). (These were kernel tests before the
 * kernel got a test game of its own.) */
#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define GATHER POLIS_SOURCE_DIR "/rulesets/gather/gather.json"

static polis_env *gather_env(test_log *log, test_alloc *alloc)
{
    return test_env_file_log(GATHER, log, alloc);
}

/* ---- gather: exact views of a seeded state ----------------------------------------------- */

static void test_gather_exact(void)
{
    polis_env *env = gather_env(NULL, NULL);
    if (!env) return;
    CHECK_EQ_STR(polis_env_render_formats(env), "json text");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(test_render(env, 0, "text"),
                 "You are agent_0 at (9, 7) on the 12x12 grid (bounded; x grows east, y grows "
                 "south). Tick 0 of 200.\n"
                 "Coins in view (up to 2 cells away in x and y): 1.\n"
                 "- coin at (11, 8): 1 south, 2 east (3 steps)\n"
                 "Other agents in view: 1.\n"
                 "- agent_3 at (10, 7): 1 east (1 step)\n"
                 "Coins you collected this episode: 0.\n"
                 "Legal actions: noop, move_north, move_south, move_west, move_east.\n");
    /* agent_3 walks east then south onto the coin at (11, 8) */
    int32_t east[4] = {0, 0, 0, polis_env_action_id(env, "move_east")};
    int32_t south[4] = {0, 0, 0, polis_env_action_id(env, "move_south")};
    CHECK_EQ_INT(test_step_ids(env, east), POLIS_OK);
    CHECK_EQ_INT(test_step_ids(env, south), POLIS_OK);
    CHECK(polis_env_io(env)->rewards[3] == 1.0f);
    CHECK_EQ_STR(test_render(env, 3, "text"),
                 "You are agent_3 at (11, 8) on the 12x12 grid (bounded; x grows east, y grows "
                 "south). Tick 2 of 200.\n"
                 "Coins in view (up to 2 cells away in x and y): none.\n"
                 "Other agents in view: 1.\n"
                 "- agent_0 at (9, 7): 1 north, 2 west (3 steps)\n"
                 "Coins you collected this episode: 1.\n"
                 "Legal actions: noop, move_north, move_south, move_west.\n");
    CHECK_EQ_STR(test_render(env, 3, "json"),
                 "{\"gather\":{\"position\":[11,8],\"coins\":[],\"agents\":[{\"id\":0,\"name\":"
                 "\"agent_0\",\"position\":[9,7]}],\"collected\":1}}");
    CHECK_EQ_STR(test_render(env, 2, "text"),
                 "You are agent_2 at (2, 11) on the 12x12 grid (bounded; x grows east, y grows "
                 "south). Tick 2 of 200.\n"
                 "Coins in view (up to 2 cells away in x and y): none.\n"
                 "Other agents in view: none.\n"
                 "Coins you collected this episode: 0.\n"
                 "Legal actions: noop, move_north, move_west, move_east.\n");
    CHECK_EQ_STR(
        test_render(env, 1, "json"),
        "{\"gather\":{\"position\":[6,2],\"coins\":[[7,1]],\"agents\":[],\"collected\":0}}");
    /* rendering is read-only: the state hash does not move, and the same call gives the
     * same text */
    uint64_t h = polis_env_state_hash(env);
    char first[4096];
    snprintf(first, sizeof first, "%s", test_render(env, 0, "text"));
    CHECK_EQ_STR(test_render(env, 0, "text"), first);
    CHECK(polis_env_state_hash(env) == h);
    polis_env_destroy(env);
}

/* A torus where the view is wider than the coins are sparse: several coins, listed nearest
 * first, coordinates wrapped. */
static void test_gather_torus(void)
{
    polis_env *env =
        test_env("{\"agents\": 2, \"max_steps\": 5, \"grid\": {\"width\": 6, \"height\": 5, "
                 "\"wrap\": true}, "
                 "\"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 6, \"view\": 1}}]}",
                 NULL, NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 7), POLIS_OK);
    const char *text = test_render(env, 0, "text");
    CHECK_CONTAINS(text, "on the 6x5 grid (it wraps around at the edges; x grows east");
    CHECK_CONTAINS(text, "Tick 0 of 5.\n");
    CHECK_CONTAINS(text, "Coins in view (up to 1 cells away in x and y): ");
    CHECK_CONTAINS(text, "Legal actions: noop, move_north, move_south, move_west, move_east.\n");
    polis_env_destroy(env);
}

/* More than 64 coins in view: the prose lists the nearest 64 and counts the rest; the JSON
 * lists all of them. */
static void test_gather_crowded(void)
{
    polis_env *env = test_env(
        "{\"agents\": 1, \"max_steps\": 5, \"grid\": {\"width\": 13, \"height\": 13}, "
        "\"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 160, \"view\": 12}}]}",
        NULL, NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    const char *text = test_render(env, 0, "text");
    CHECK_CONTAINS(text, "Coins in view (up to 12 cells away in x and y): 160.\n");
    CHECK_CONTAINS(text, "\n- and 96 more.\nOther agents in view: none.\n");
    int lines = 0;
    for (const char *q = text; (q = strstr(q, "- coin at (")) != NULL; q++) lines++;
    CHECK_EQ_INT(lines, 64);
    cJSON *doc = cJSON_Parse(test_render(env, 0, "json"));
    cJSON *coins =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "gather"), "coins");
    CHECK_EQ_INT(cJSON_GetArraySize(coins), 160);
    cJSON_Delete(doc);
    polis_env_destroy(env);
}

/* ---- gather: the JSON view agrees with the observation buffer, step after step ----------- */

static const polis_obs_field *field(polis_env *env, const char *name, polis_obs_field *f)
{
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++)
        if (polis_env_obs_field(env, i, f) == POLIS_OK && strcmp(f->name, name) == 0) return f;
    return NULL;
}

static int iabs(int v) { return v < 0 ? -v : v; }

static void cross_check(int n_agents, int width, int height, bool wrap, int n_coins, int view_r,
                        uint64_t seed, int steps)
{
    char scenario[512];
    snprintf(scenario, sizeof scenario,
             "{\"agents\": %d, \"max_steps\": %d, \"grid\": {\"width\": %d, \"height\": %d, "
             "\"wrap\": %s}, \"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": %d, "
             "\"view\": %d}}]}",
             n_agents, steps + 1, width, height, wrap ? "true" : "false", n_coins, view_r);
    polis_env *env = test_env(scenario, NULL, NULL);
    if (!env) return;
    polis_obs_field fv, fp;
    CHECK(field(env, "view", &fv) && field(env, "position", &fp));
    int side = fv.shape[1], v = side / 2, cells = side * side;
    const polis_io *io = polis_env_io(env);
    int n = polis_env_n_agents(env);
    uint32_t rng = (uint32_t)seed * 2654435761u + 1;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    int checked = 0;
    for (int s = 0; s <= steps && !polis_env_done(env); s++) {
        for (int a = 0; a < n; a++) {
            const uint8_t *rec = io->obs + (size_t)a * io->obs_size;
            const int8_t *view = (const int8_t *)(rec + fv.offset);
            int32_t pos[2];
            memcpy(pos, rec + fp.offset, sizeof pos);
            cJSON *doc = cJSON_Parse(test_render(env, a, "json"));
            cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "gather");
            CHECK(g != NULL);
            if (!g) {
                cJSON_Delete(doc);
                continue;
            }
            cJSON *p = cJSON_GetObjectItemCaseSensitive(g, "position");
            CHECK_EQ_INT(cJSON_GetArrayItem(p, 0)->valueint, pos[0]);
            CHECK_EQ_INT(cJSON_GetArrayItem(p, 1)->valueint, pos[1]);
            int coins_in_view = 0, agents_in_view = 0;
            for (int i = 0; i < cells; i++) {
                coins_in_view += view[cells + i] > 0;
                agents_in_view += view[i] == 1;
            }
            cJSON *coins = cJSON_GetObjectItemCaseSensitive(g, "coins");
            cJSON *agents = cJSON_GetObjectItemCaseSensitive(g, "agents");
            CHECK_EQ_INT(cJSON_GetArraySize(coins), coins_in_view);
            CHECK_EQ_INT(cJSON_GetArraySize(agents), agents_in_view);
            /* every listed coin is a coin cell of the view, nearest first */
            int last = -1;
            cJSON *c;
            cJSON_ArrayForEach(c, coins) {
                int x = cJSON_GetArrayItem(c, 0)->valueint, y = cJSON_GetArrayItem(c, 1)->valueint;
                int found = -1;
                for (int i = 0; i < cells && found < 0; i++) {
                    if (view[cells + i] <= 0) continue;
                    int dx = i % side - v, dy = i / side - v;
                    int cx = pos[0] + dx, cy = pos[1] + dy;
                    if (wrap) {
                        cx = (cx % width + width) % width;
                        cy = (cy % height + height) % height;
                    }
                    if (cx == x && cy == y) found = iabs(dx) + iabs(dy);
                }
                CHECK(found >= 0);
                CHECK(found >= last);
                last = found;
            }
            /* every listed agent is where its own observation says */
            cJSON_ArrayForEach(c, agents) {
                int id = cJSON_GetObjectItemCaseSensitive(c, "id")->valueint;
                CHECK(id >= 0 && id < n && id != a);
                if (id < 0 || id >= n) continue;
                int32_t opos[2];
                memcpy(opos, io->obs + (size_t)id * io->obs_size + fp.offset, sizeof opos);
                cJSON *q = cJSON_GetObjectItemCaseSensitive(c, "position");
                CHECK_EQ_INT(cJSON_GetArrayItem(q, 0)->valueint, opos[0]);
                CHECK_EQ_INT(cJSON_GetArrayItem(q, 1)->valueint, opos[1]);
                CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring,
                             polis_env_agent_name(env, id));
            }
            checked++;
            cJSON_Delete(doc);
        }
        /* random legal moves from the text view's own list */
        for (int a = 0; a < n; a++) {
            const uint8_t *mask = io->masks + (size_t)a * (size_t)io->n_actions;
            rng = rng * 1664525u + 1013904223u;
            int pick = (int)((rng >> 16) % (uint32_t)io->n_actions);
            io->actions[a] = mask[pick] ? pick : 0;
        }
        if (s < steps) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK(checked > 0);
    polis_env_destroy(env);
}

/* ---- text actions ------------------------------------------------------------------------ */

static void test_parse_gather(void)
{
    polis_env *env = gather_env(NULL, NULL);
    if (!env) return;
    /* before the first reset: action names and parsers need no episode */
    CHECK_EQ_STR(test_parse(env, 0, "move_north"), "1 move_north");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_STR(test_parse(env, 0, "noop"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 0, "move_east"), "4 move_east");
    CHECK_EQ_STR(test_parse(env, 0, " \t move_west \n"), "3 move_west");
    CHECK_EQ_STR(test_parse(env, 0, "north"), "1 move_north");
    CHECK_EQ_STR(test_parse(env, 0, "south"), "2 move_south");
    CHECK_EQ_STR(test_parse(env, 0, "west"), "3 move_west");
    CHECK_EQ_STR(test_parse(env, 0, "east"), "4 move_east");
    CHECK_EQ_STR(test_parse(env, 1, "move north"), "1 move_north");
    CHECK_EQ_STR(test_parse(env, 1, "go  south"), "2 move_south");
    CHECK_EQ_STR(test_parse(env, 1, "  Go West.\n"), "3 move_west");
    CHECK_EQ_STR(test_parse(env, 1, "MOVE_EAST"), "4 move_east");
    CHECK_EQ_STR(test_parse(env, 2, "stay"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 2, "Wait"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 3, "{\"action\": \"move\", \"direction\": \"north\"}"),
                 "1 move_north");
    CHECK_EQ_STR(
        test_parse(env, 3, " {\"direction\":\"East\",\"why\":[1,{\"a\":null}],\"action\":\"go\"} "),
        "4 move_east");
    CHECK_EQ_STR(test_parse(env, 3, "{\"action\": \"stay\"}"), "0 noop");
    CHECK_EQ_STR(test_parse(env, 3, "{\"action\": \"south\"}"), "2 move_south");
    CHECK_EQ_STR(test_parse(env, 3, "{\"action\": \"move\", \"direction\": \"\\u006eorth\"}"),
                 "1 move_north");

    /* for gather, but malformed: its message, placed */
    CHECK_EQ_STR(test_parse(env, 1, "move"),
                 "ERR 1: gather: \"move\" needs a direction: north, south, west or east "
                 "[parse \"move\", agent 1 (agent_1), tick 0]");
    CHECK_EQ_STR(test_parse(env, 1, "go up"),
                 "ERR 1: gather: \"go up\": the direction must be north, south, west or east "
                 "[parse \"go up\", agent 1 (agent_1), tick 0]");
    CHECK_EQ_STR(test_parse(env, 0, "{\"action\": \"move\"}"),
                 "ERR 1: gather: {\"action\": \"move\"} needs \"direction\": north, south, west or "
                 "east [parse \"{\\\"action\\\": \\\"move\\\"}\", agent 0 (agent_0), tick 0]");
    CHECK_EQ_STR(test_parse(env, 0, "{\"action\": \"move\", \"direction\": \"up\"}"),
                 "ERR 1: gather: \"direction\": \"up\" is not north, south, west or east [parse "
                 "\"{\\\"action\\\": \\\"move\\\", \\\"direction\\\": \\\"up\\\"}\", agent 0 "
                 "(agent_0), tick 0]");

    /* nobody's */
    const char *names = "(action names: noop, move_north, move_south, move_west, move_east; "
                        "1 parser tried)";
    char want[512];
    snprintf(want, sizeof want, "ERR 9: agent 1 (agent_1): cannot parse action \"fly away\" %s",
             names);
    CHECK_EQ_STR(test_parse(env, 1, "  fly away "), want);
    snprintf(want, sizeof want, "ERR 9: agent 0 (agent_0): cannot parse action \"north east\" %s",
             names);
    CHECK_EQ_STR(test_parse(env, 0, "north east"), want);
    snprintf(want, sizeof want,
             "ERR 9: agent 0 (agent_0): cannot parse action \"{\\\"action\\\": "
             "\\\"pick_by_name\\\"}\" %s",
             names);
    CHECK_EQ_STR(test_parse(env, 0, "{\"action\": \"pick_by_name\"}"), want);
    snprintf(want, sizeof want,
             "ERR 9: agent 0 (agent_0): cannot parse action \"{\\\"action\\\": "
             "\\\"move\\\",}\" %s",
             names);
    CHECK_EQ_STR(test_parse(env, 0, "{\"action\": \"move\",}"), want);
    CHECK_EQ_STR(test_parse(env, 0, "Noop x"),
                 "ERR 9: agent 0 (agent_0): cannot parse action "
                 "\"Noop x\" (action names: noop, move_north, move_south, "
                 "move_west, move_east; 1 parser tried)");
    /* the input is quoted with escapes and cut after 64 bytes: 20 before the a's, 44 a's */
    snprintf(want, sizeof want,
             "ERR 9: agent 2 (agent_2): cannot parse action \"line one\\nline\\ttwo \\x01 "
             "%.44s\"... %s",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", names);
    CHECK_EQ_STR(test_parse(env, 2,
                            "line one\nline\ttwo \x01 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaa"),
                 want);

    /* bad calls */
    CHECK_EQ_STR(test_parse(env, 0, ""), "ERR 9: agent 0 (agent_0): empty action");
    CHECK_EQ_STR(test_parse(env, 3, " \n\t "), "ERR 9: agent 3 (agent_3): empty action");
    CHECK_EQ_STR(test_parse(env, 0, NULL), "ERR 1: parse_action: agent 0 (agent_0): input is NULL");
    CHECK_EQ_STR(test_parse(env, 4, "north"),
                 "ERR 1: parse_action: agent 4 is not an agent id (0..3)");
    CHECK_EQ_STR(test_parse(env, -2, "north"),
                 "ERR 1: parse_action: agent -2 is not an agent id (0..3)");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "north", NULL), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "parse_action: out_action is NULL");
    int32_t id = 7;
    CHECK_EQ_INT(polis_env_parse_action(NULL, 0, "north", &id), POLIS_ERR_INVALID);

    /* Truncated JSON ends at its NUL: every prefix of these, followed by blanks (so the
     * kernel hands the parser an exact-size heap copy, where ASan sees any read past the
     * end), is nobody's action or gather's error, never a read beyond the input. The first
     * is the input a fuzzer found reading past the end of the copy. */
    const char *json_inputs[] = {
        "{\"\":{\"",
        "{\"action\": \"move\", \"direction\": \"\\u006eorth\"}",
        "{\"why\": {\"a\": [1, \"x\\\"\", {\"b\": null}]}, \"action\": \"stay\"}",
        "{\"direction\": \"\\n\\u00e9\", \"action\": \"go\"}",
    };
    for (size_t k = 0; k < sizeof json_inputs / sizeof *json_inputs; k++) {
        size_t len = strlen(json_inputs[k]);
        for (size_t cut = 1; cut < len; cut++) {
            char in[128];
            snprintf(in, sizeof in, "%.*s   ", (int)cut, json_inputs[k]);
            const char *got = test_parse(env, 0, in);
            CHECK(strncmp(got, "ERR 9: ", 7) == 0 || strncmp(got, "ERR 1: gather: ", 15) == 0);
        }
    }
    CHECK_EQ_STR(test_parse(env, 0, "{\"\":{\"      "),
                 "ERR 9: agent 0 (agent_0): cannot parse action \"{\\\"\\\":{\\\"\" (action "
                 "names: noop, move_north, move_south, move_west, move_east; 1 parser tried)");

    /* not checked against the mask: agent_2 stands on the south edge */
    CHECK_EQ_INT(polis_env_io(env)->masks[2 * 5 + 2], 0);
    CHECK_EQ_STR(test_parse(env, 2, "south"), "2 move_south");
    polis_env_destroy(env);
}

int main(void)
{
    test_gather_exact();
    test_gather_torus();
    cross_check(4, 9, 7, false, 14, 2, 5, 60);
    cross_check(3, 6, 5, true, 8, 1, 9, 40);
    cross_check(2, 13, 13, false, 150, 12, 3, 4);
    test_gather_crowded();
    test_parse_gather();
    CHECK_DONE();
}
