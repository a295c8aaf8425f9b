/* test_scene.c — looks and scenes (plugin ABI 1.5, kept layers 1.6) and the recorder: what a
 * plugin and a Lua script register, the scene the kernel assembles, every refused
 * registration and append with its message, no allocation per scene or per recorded tick
 * once the buffers exist, and the lines the recorder writes. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "testutil.h"

#define WALKER POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json"

static polis_env *probe_env(const char *mode, test_alloc *alloc)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 20, \"plugins\": [{\"name\": \"look_probe\", "
             "\"params\": {\"mode\": \"%s\"}}]}",
             mode);
    return test_env(json, NULL, alloc);
}

static const char *probe_error(const char *mode)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 20, \"plugins\": [{\"name\": \"look_probe\", "
             "\"params\": {\"mode\": \"%s\"}}]}",
             mode);
    return test_env_error(json);
}

static void test_probe_scene(void)
{
    test_alloc alloc = {0};
    polis_env *env = probe_env("ok", &alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_scene_width(env), 6);
    CHECK_EQ_INT(polis_env_scene_height(env), 4);
    CHECK_EQ_INT(polis_env_scene_n_layers(env), 1);
    CHECK_EQ_STR(polis_env_scene_layer_name(env, 0), "ground");
    CHECK(polis_env_scene_layer_name(env, 1) == NULL);
    CHECK_EQ_INT(polis_env_scene_n_kinds(env), 2);
    polis_kind_info k;
    CHECK_EQ_INT(polis_env_scene_kind(env, 0, &k), POLIS_OK);
    CHECK_EQ_STR(k.name, "sand");
    CHECK_EQ_STR(k.color, "#e8d9a0"); /* written in upper case, kept in lower case */
    CHECK_EQ_STR(k.plugin, "look_probe");
    CHECK_EQ_INT(polis_env_scene_kind(env, 1, &k), POLIS_OK);
    CHECK_EQ_STR(k.glyph, "\xe2\x96\xb2");
    CHECK_EQ_STR(polis_shape_name(k.shape), "triangle");
    CHECK_EQ_INT(polis_env_scene_kind(env, 2, &k), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_scene_kind_find(env, "rock"), 1);
    CHECK_EQ_INT(polis_env_scene_kind_find(env, "lava"), -1);
    const char *name, *group;
    int32_t max = -1, rx = 0, ry = 0;
    CHECK_EQ_INT(polis_env_scene_stat(env, 0, &name, &group, &max), POLIS_OK);
    CHECK_EQ_STR(name, "tick");
    CHECK_EQ_STR(group, "clock");
    CHECK_EQ_INT(max, 0);
    CHECK(polis_env_scene_view(env, &rx, &ry));
    CHECK_EQ_INT(rx, 1);
    CHECK_EQ_INT(ry, 2);

    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "scene: no episode yet; call reset first");
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(sc != NULL);
    if (!sc) return;
    CHECK_EQ_INT(sc->tiles[0], 1);
    CHECK_EQ_INT(sc->tiles[1], 0);
    CHECK_EQ_INT(sc->tiles[3 * 6 + 3], 1);
    CHECK_EQ_INT(sc->n_things, 2);
    CHECK_EQ_INT(sc->things[1].id, 101);
    CHECK_EQ_STR(sc->things[1].label, "0");
    CHECK_EQ_INT(sc->agents[1].x, 1);
    CHECK_EQ_INT(sc->agents[1].facing, POLIS_FACING_RIGHT);
    CHECK_EQ_INT(sc->n_nodes, 1);
    CHECK_EQ_STR(sc->nodes[0].label, "The club");
    CHECK_EQ_INT(sc->n_edges, 1);
    CHECK_EQ_STR(sc->edges[0].from, "agent_0");
    CHECK(sc->edges[0].weight == 0.5f);
    /* no allocation per step or per scene once the buffers exist */
    long before = alloc.calls;
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, before);
    CHECK_EQ_STR(sc->things[0].label, "5");
    CHECK_EQ_INT(sc->stats[1], 5);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
}

static void check_scene_error(const char *mode, polis_status want, const char *msg)
{
    polis_env *env = probe_env(mode, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), want);
    CHECK(sc == NULL);
    CHECK_EQ_STR(polis_env_error(env), msg);
    /* the env is unchanged: it still steps */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    polis_env_destroy(env);
}

static void test_errors(void)
{
    check_scene_error("over", POLIS_ERR_LIMIT,
                      "look_probe: scene_thing: more than the 1 things this plugin declared "
                      "(look_scene max_things) [scene, tick 0]");
    check_scene_error(
        "bad_kind", POLIS_ERR_INVALID,
        "look_probe: scene_thing 100: kind 99 is not a kind id (0..1) [scene, tick 0]");
    check_scene_error(
        "bad_pos", POLIS_ERR_INVALID,
        "look_probe: scene_thing 100: (6, 0) is outside the 6 x 4 map [scene, tick 0]");
    check_scene_error(
        "long_label", POLIS_ERR_LIMIT,
        "look_probe: scene_thing: label \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\" "
        "is 60 bytes, longer than 47 [scene, tick 0]");
    check_scene_error("late", POLIS_ERR_STATE,
                      "look_probe: look_kind: registration is closed once the env is created "
                      "(register in init or start) [scene, tick 0]");
    CHECK_CONTAINS(probe_error("dup_kind"),
                   "look_kind: kind \"sand\" is already registered by look_probe");
    CHECK_CONTAINS(probe_error("bad_color"), "look_kind sand: color \"e8d9a0\" is not \"#rrggbb\"");
    CHECK_CONTAINS(probe_error("bad_glyph"),
                   "look_kind sand: glyph \"ab\" is not one printable UTF-8 character");
    CHECK_CONTAINS(probe_error("bad_shape"), "look_kind sand: shape 42 is not a polis_shape");
    CHECK_CONTAINS(probe_error("two_scenes"),
                   "look_scene: a scene callback is already registered (one per plugin)");
    CHECK_CONTAINS(probe_error("map_twice"),
                   "look_map: 7 x 4, but look_probe set the map to 6 x 4");
}

/* A game without looks has a scene of agents only. */
static void test_no_looks(void)
{
    polis_env *env = test_env("{\"agents\": 3, \"max_steps\": 5}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_scene_width(env), 0);
    CHECK_EQ_INT(polis_env_reset(env, 0), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(sc && sc->n_agents == 3 && sc->agents[2].x == -1 && sc->n_layers == 0);
    polis_env_destroy(env);
}

/* ---- Lua: polis.look -------------------------------------------------------------------- */

static const char *LUA_GAME =
    "local L\n"
    "L = polis.look{\n"
    "  kinds = {{name = 'grass', glyph = '.', color = '#00ff00'},\n"
    "           {name = 'sheep', glyph = 'S', color = '#ffffff', shape = 'circle'}},\n"
    "  layers = {'ground'}, stats = {{name = 'wool', group = 'inventory', max = 9}},\n"
    "  map = {3, 2}, view = {1, 1}, things = 1, nodes = 1, edges = 2,\n"
    "  scene = function(s)\n"
    "    local w, h = s:size()\n"
    "    for y = 0, h - 1 do for x = 0, w - 1 do s:tile('ground', x, y, L.kinds.grass) end end\n"
    "    s:thing(7, 'sheep', 2, 1, tostring(polis.tick()))\n"
    "    s:agent(0, 1, 0, 'left')\n"
    "    s:agent(1, nil, nil, 0, false)\n"
    "    s:stat(0, 'wool', polis.tick() * 2)\n"
    "    s:node('herd', 'group', 'The herd')\n"
    "    s:edge('agent_0', 'herd', 'shepherd', 2)\n"
    "    if polis.tick() == 3 then s:tile('ground', 5, 0, 0) end\n"
    "  end}\n"
    "assert(L.kinds.sheep == 1 and L.layers.ground == 0 and L.stats.wool == 0)\n";

static polis_env *lua_env(const char *body, const char **err)
{
    FILE *f = fopen("/tmp/polis_test_scene.lua", "w");
    if (!f) return NULL;
    fputs(body, f);
    fclose(f);
    const char *json = "{\"agents\": 2, \"max_steps\": 10, \"scripts\": "
                       "[\"/tmp/polis_test_scene.lua\"]}";
    if (err) {
        *err = test_env_error(json);
        return NULL;
    }
    return test_env(json, NULL, NULL);
}

static void test_lua(void)
{
    polis_env *env = lua_env(LUA_GAME, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_scene_width(env), 3);
    polis_kind_info k;
    CHECK_EQ_INT(polis_env_scene_kind(env, 0, &k), POLIS_OK);
    CHECK_EQ_STR(polis_shape_name(k.shape), "square");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    if (!sc) {
        fprintf(stderr, "%s\n", polis_env_error(env));
        polis_env_destroy(env);
        return;
    }
    CHECK_EQ_INT(sc->tiles[5], 0);
    CHECK_EQ_INT(sc->n_things, 1);
    CHECK_EQ_STR(sc->things[0].label, "1");
    CHECK_EQ_INT(sc->agents[0].facing, POLIS_FACING_LEFT);
    CHECK_EQ_INT(sc->agents[1].alive, 0);
    CHECK_EQ_INT(sc->agents[1].x, -1);
    CHECK_EQ_INT(sc->stats[0], 2);
    CHECK_EQ_STR(sc->edges[0].kind, "shepherd");
    CHECK(sc->edges[0].weight == 2.0f);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "x 5 is outside the map (0..2)");
    polis_env_destroy(env);

    const char *err = NULL;
    lua_env("polis.look{kinds = {{name = 'a', glyph = 'a', color = '#000000', shape = 'blob'}}}",
            &err);
    CHECK_CONTAINS(err, "polis.look: kinds[1]: shape 'blob' is not one of square, circle, "
                        "triangle, diamond, cross, dot, agent");
    lua_env("polis.look{kinds = {{name = 'A', glyph = 'a', color = '#000000'}}}", &err);
    CHECK_CONTAINS(err, "look_kind: name \"A\" is not 1 to 127 characters from a-z, 0-9 and _");
    lua_env("polis.look{map = {0, 'x'}}", &err);
    CHECK_CONTAINS(err, "polis.look: field 'map' must be {width, height} of integers in 0..65536");
    lua_env("polis.on('reset', function() polis.look{} end)\n", &err);
    CHECK_CONTAINS(err, "(created successfully)");
}

/* ---- the recorder ------------------------------------------------------------------------ */

typedef struct lines {
    char text[1 << 16];
    size_t len;
    int n;
} lines;

static void sink(void *ud, const char *line, size_t len)
{
    lines *l = ud;
    if (l->len + len < sizeof l->text) {
        memcpy(l->text + l->len, line, len);
        l->len += len;
        l->text[l->len] = '\0';
    }
    l->n++;
}

/* Keyframes of probe_recorder every this many ticks */
static int32_t probe_keyframes = 100;

/* What a probe's recording says of itself: a 2 agents' scenario, keyframes every `every` ticks */
static polis_record_info probe_info(int32_t every)
{
    const char *scn = "{\"agents\": 2}";
    return (polis_record_info){.scenario_text = scn,
                               .scenario_len = strlen(scn),
                               .keyframe_every = every,
                               .seed = 4,
                               .source = "test"};
}

/* A recorder of env (probe_info) handing its lines to fn(ud, ...). */
static polis_recorder *sink_recorder(polis_env *env, void (*fn)(void *, const char *, size_t),
                                     void *ud, int32_t every)
{
    polis_record_info info = probe_info(every);
    polis_recorder *rec = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_recorder_open_sink(fn, ud, env, &info, &rec, &err), POLIS_OK);
    return rec;
}

/* A recorder of a probe env (2 agents, keyframes every probe_keyframes ticks) writing into *l,
 * the env reset with seed 4 and the episode begun. */
static polis_recorder *probe_recorder(polis_env *env, lines *l)
{
    memset(l, 0, sizeof *l);
    polis_recorder *rec = sink_recorder(env, sink, l, probe_keyframes);
    CHECK_EQ_INT(polis_env_reset(env, 4), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 4), POLIS_OK);
    return rec;
}

static void test_recorder(void)
{
    polis_env *env = probe_env("ok", NULL);
    CHECK(env != NULL);
    if (!env) return;
    static lines l;
    memset(&l, 0, sizeof l);
    const char *scn = "{\"agents\": 2}";
    polis_record_info info = {.scenario_text = scn,
                              .scenario_len = strlen(scn),
                              .keyframe_every = 2,
                              .seed = 9,
                              .source = "test"};
    polis_recorder *rec = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_recorder_open_sink(sink, &l, env, &info, &rec, &err), POLIS_OK);
    CHECK_EQ_INT(l.n, 1);
    CHECK_CONTAINS(l.text, "\"map\":{\"width\":6,\"height\":4,\"layers\":[\"ground\"]},"
                           "\"kinds\":[{\"name\":\"sand\",\"glyph\":\".\",\"color\":\"#e8d9a0\","
                           "\"shape\":\"square\",\"plugin\":\"look_probe\"}");
    CHECK_CONTAINS(l.text, "\"view\":{\"rx\":1,\"ry\":2},\"policies\":null,\"source\":\"test\"}");
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_ERR_STATE);
    CHECK_EQ_INT(polis_env_reset(env, 9), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 9), POLIS_OK);
    CHECK_CONTAINS(l.text, "{\"t\":\"reset\",\"episode\":0,\"seed\":9}\n");
    CHECK_CONTAINS(l.text, "\"tiles\":[[1,1,0,6,1,1,0,6,1,1,0,6,1,1,0,2]],"
                           "\"things\":[[100,1,0,0,\"0\"],[101,1,1,0,\"0\"]],"
                           "\"agents\":[{\"x\":0,\"y\":1,\"facing\":2,\"alive\":1,\"stats\":[0],"
                           "\"return\":0},");
    CHECK_CONTAINS(l.text, "\"nodes\":[[\"club\",\"group\",\"The club\"]],"
                           "\"edges\":[[\"agent_0\",\"club\",\"member\",0.5]]}\n");
    CHECK_EQ_INT(polis_recorder_msg(rec, 1, "text", "hello \"there\"\n"), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_msg(rec, 2, "text", "x"), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text, "\"illegal\":[0,0],\"things\":{\"add\":[[100,1,0,0,\"1\"],"
                           "[101,1,1,0,\"1\"]]},\"agents\":[[0,{\"stats\":{\"0\":1}}],"
                           "[1,{\"stats\":{\"0\":1}}]],"
                           "\"msgs\":[{\"agent\":1,\"kind\":\"text\","
                           "\"text\":\"hello \\\"there\\\"\\n\"}]}\n");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text, "{\"t\":\"key\",\"tick\":2,");
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 1), POLIS_ERR_STATE);
    CHECK_EQ_INT(polis_recorder_end_episode(rec, "[1"), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_recorder_error(rec), "recorder: the metrics are not valid JSON");
    CHECK_EQ_INT(polis_recorder_end_episode(rec, "{\"a\": 1}"), POLIS_OK);
    CHECK_CONTAINS(l.text, "{\"t\":\"end\",\"episode\":0,\"tick\":2,\"returns\":[0,0],"
                           "\"metrics\":{\"a\":1},\"hash\":\"");
    CHECK_EQ_INT(l.n, 7);
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);

    /* too late: the env was reset already */
    CHECK_EQ_INT(polis_recorder_open_sink(sink, &l, env, &info, &rec, &err), POLIS_ERR_STATE);
    CHECK_CONTAINS(err.message, "open the recorder before the first reset");
    info.scenario_text = "{";
    info.scenario_len = 1;
    polis_env_destroy(env);
    env = probe_env("ok", NULL);
    CHECK_EQ_INT(polis_recorder_open_sink(sink, &l, env, &info, &rec, &err), POLIS_ERR_INVALID);
    CHECK_EQ_STR(err.message, "recorder: the scenario text is not valid JSON");
    polis_env_destroy(env);
}

/* ---- kept layers (ABI 1.6) and what the recorder writes of them --------------------------- */

static int32_t tile(const polis_scene *sc, int32_t x, int32_t y)
{
    return sc->tiles[(size_t)y * (size_t)sc->width + (size_t)x];
}

/* The probe keeps "ground": a fresh scene writes the diagonal, later ones add one rock in row
 * 3 per tick, and the kernel keeps the rest; a reset makes the scene fresh again. Its things
 * come unsorted and come and go, its node and edge change at odd ticks: the step lines say
 * exactly that (one diff helper for things, nodes and edges). */
static void test_keep_probe(void)
{
    test_alloc alloc = {0};
    polis_env *env = probe_env("keep", &alloc);
    CHECK(env != NULL);
    if (!env) return;
    static lines l;
    polis_recorder *rec = probe_recorder(env, &l);
    CHECK_CONTAINS(l.text, "\"tiles\":[[1,1,0,6,1,1,0,6,1,1,0,6,1,1,0,2]],"
                           "\"things\":[[100,1,0,0,\"\"],[101,1,1,0,\"\"]],");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text, "\"illegal\":[0,0],\"tiles\":[[0,1,3,1]],"
                           "\"things\":{\"move\":[[100,1,0]],\"del\":[101]},"
                           "\"agents\":[[0,{\"stats\":{\"0\":1}}],[1,{\"stats\":{\"0\":1}}]],"
                           "\"nodes\":{\"add\":[[\"club\",\"group\",\"The clubhouse\"]],"
                           "\"del\":[\"club\"]},"
                           "\"edges\":{\"add\":[[\"agent_0\",\"club\",\"member\",0.75]],"
                           "\"del\":[[\"agent_0\",\"club\",\"member\"]]}}\n");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text, "\"illegal\":[0,0],\"tiles\":[[0,2,3,1]],"
                           "\"things\":{\"add\":[[101,1,1,0,\"\"]],\"move\":[[100,2,0]]},"
                           "\"agents\":[[0,{\"stats\":{\"0\":2}}],[1,{\"stats\":{\"0\":2}}]],"
                           "\"nodes\":{\"add\":[[\"club\",\"group\",\"The club\"]],"
                           "\"del\":[\"club\"]},"
                           "\"edges\":{\"add\":[[\"agent_0\",\"club\",\"member\",0.5]],"
                           "\"del\":[[\"agent_0\",\"club\",\"member\"]]}}\n");
    /* the kernel kept both rocks the callback wrote in earlier scenes */
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    if (!sc) return;
    CHECK_EQ_INT(tile(sc, 1, 3), 1);
    CHECK_EQ_INT(tile(sc, 2, 3), 1);
    CHECK_EQ_INT(tile(sc, 0, 3), 0);
    CHECK_EQ_INT(tile(sc, 3, 3), 1);

    /* recording a tick allocates nothing once the first lines are written, neither in the env
     * (scene buffers) nor in the recorder (line buffers, scene copies) */
    long calls = alloc.calls;
    int64_t rec_allocs = polis_recorder_allocs(rec);
    CHECK(rec_allocs > 0);
    for (int i = 0; i < 12; i++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, calls);
    CHECK_EQ_INT(polis_recorder_allocs(rec), rec_allocs);
    CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);

    /* a reset makes the next scene fresh: the layer is the diagonal again (the recorder read
     * it; this second scene of tick 0 adds the rock at (0, 3)) */
    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 5), POLIS_OK);
    CHECK_CONTAINS(l.text,
                   "{\"t\":\"reset\",\"episode\":1,\"seed\":5}\n{\"t\":\"key\",\"tick\":0,");
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    for (int32_t x = 0; x < 6; x++) CHECK_EQ_INT(tile(sc, x, 3), (x == 3 || x == 0 ? 1 : 0));
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);

    CHECK_CONTAINS(probe_error("bad_keep"),
                   "look_probe: look_keep_layer: 5 is not a layer id (0..0)");
}

/* walker (a game with events and rewards): no allocation per recorded tick either. */
static void test_recorder_no_alloc(void)
{
    test_alloc alloc = {0};
    polis_env *env = test_env_file(WALKER, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    static lines l;
    memset(&l, 0, sizeof l);
    const char *scn = "{}";
    polis_record_info info = {.scenario_text = scn,
                              .scenario_len = strlen(scn),
                              .keyframe_every = 10,
                              .seed = 1,
                              .source = "test"};
    polis_recorder *rec = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_recorder_open_sink(sink, &l, env, &info, &rec, &err), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    int32_t n = polis_env_n_agents(env);
    long calls = 0;
    int64_t rec_allocs = 0;
    for (int t = 1; t <= 150; t++) {
        for (int32_t a = 0; a < n; a++) io->actions[a] = (t + a) % 5; /* walk about */
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
        if (t == 20) {
            calls = alloc.calls;
            rec_allocs = polis_recorder_allocs(rec);
        }
    }
    CHECK_EQ_INT(alloc.calls, calls);
    CHECK_EQ_INT(polis_recorder_allocs(rec), rec_allocs);
    CHECK_CONTAINS(l.text, "{\"type\":\"agent.moved\",\"agent\":");
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
}

static const char *LUA_KEEP =
    "local L\n"
    "L = polis.look{\n"
    "  kinds = {{name = 'a', glyph = 'a', color = '#000000'}},\n"
    "  layers = {'g', 'h'}, keep = {'h'}, map = {2, 1},\n"
    "  scene = function(s, fresh)\n"
    "    assert(s:fresh() == fresh)\n"
    "    s:tile('h', fresh and 0 or 1, 0, 'a')\n"
    "    s:tile('g', 1, 0, 'a')\n"
    "    if polis.tick() == 2 and not FAILED then FAILED = true; error('scene fails once') end\n"
    "  end}\n";

/* Lua: keep = {names} keeps those layers only; the scene function's second argument and
 * s:fresh() say when the kernel cleared them (the first scene of an episode, or after a
 * scene failed). */
static void test_lua_keep(void)
{
    polis_env *env = lua_env(LUA_KEEP, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_scene *sc = NULL;
    size_t plane = 2;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    if (!sc) return;
    /* fresh: h = [a, -]; g (not kept) = [-, a] */
    CHECK(sc->tiles[0] == -1 && sc->tiles[1] == 0);
    CHECK(sc->tiles[plane + 0] == 0 && sc->tiles[plane + 1] == -1);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    /* not fresh: h keeps (0,0) and gets (1,0) */
    CHECK(sc->tiles[plane + 0] == 0 && sc->tiles[plane + 1] == 0);
    CHECK(sc->tiles[0] == -1 && sc->tiles[1] == 0);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "scene fails once");
    /* after the failure the scene is fresh again */
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    if (!sc) return;
    CHECK(sc->tiles[plane + 0] == 0 && sc->tiles[plane + 1] == -1);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(sc->tiles[plane + 0] == 0 && sc->tiles[plane + 1] == 0);
    /* and after a reset */
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(sc->tiles[plane + 0] == 0 && sc->tiles[plane + 1] == -1);
    polis_env_destroy(env);

    const char *err = NULL;
    lua_env("polis.look{layers = {'g'}, keep = 5}", &err);
    CHECK_CONTAINS(err, "polis.look: field 'keep' must be true or an array of layer names");
    lua_env("polis.look{layers = {'g'}, keep = {'g', 'nope'}}", &err);
    CHECK_CONTAINS(err, "polis.look: keep[2] must be the name of a layer, not nope");
    lua_env("polis.look{layers = {'g'}, keep = {3}}", &err);
    CHECK_CONTAINS(err, "polis.look: keep[1] must be the name of a layer, not number");
}

/* Edges whose ends share their first 15, 16 or 17 bytes, or are longer than 16 bytes (where
 * the recorder's sort compares the strings, not the numbers it reads of their first 16
 * bytes), and one pair with three kinds, appended in another order at each tick: the keyframe
 * and the step lines list them as strcmp orders (source, target, kind). */
static const char *LUA_EDGE_ORDER =
    "local P, Q, B, O = 'abcdefghijklmnop', 'abcdefghijklmnopq', 'abcdefghijklmnopb',\n"
    "  'abcdefghijklmno'\n"
    "polis.look{map = {1, 1}, edges = 9, scene = function(s)\n"
    "  local e = {{Q, 'x', 'k'}, {P, 'x', 'k'}, {B, 'x', 'k'}, {O, 'x', 'k'},\n"
    "             {'agent_a', Q, 'k'}, {'agent_a', P, 'k'}, {'agent_a', P, 'j'},\n"
    "             {'agent_a', P, 'kk'}}\n"
    "  if polis.tick() == 1 then\n"
    "    table.remove(e, 7); table.remove(e, 3); e[#e + 1] = {'abcdefghijklmnopa', 'x', 'k'}\n"
    "  end\n"
    "  local n, t = #e, polis.tick()\n"
    "  for i = 1, n do local v = e[(i * 5 + t) % n + 1]; s:edge(v[1], v[2], v[3], 1) end\n"
    "end}\n";

static void test_edge_order(void)
{
    polis_env *env = lua_env(LUA_EDGE_ORDER, NULL);
    CHECK(env != NULL);
    if (!env) return;
    static lines l;
    polis_recorder *rec = probe_recorder(env, &l);
    CHECK_CONTAINS(l.text, "\"edges\":[[\"abcdefghijklmno\",\"x\",\"k\",1],"
                           "[\"abcdefghijklmnop\",\"x\",\"k\",1],"
                           "[\"abcdefghijklmnopb\",\"x\",\"k\",1],"
                           "[\"abcdefghijklmnopq\",\"x\",\"k\",1],"
                           "[\"agent_a\",\"abcdefghijklmnop\",\"j\",1],"
                           "[\"agent_a\",\"abcdefghijklmnop\",\"k\",1],"
                           "[\"agent_a\",\"abcdefghijklmnop\",\"kk\",1],"
                           "[\"agent_a\",\"abcdefghijklmnopq\",\"k\",1]]}\n");
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text, "\"edges\":{\"add\":[[\"abcdefghijklmnopa\",\"x\",\"k\",1]],"
                           "\"del\":[[\"abcdefghijklmnopb\",\"x\",\"k\"],"
                           "[\"agent_a\",\"abcdefghijklmnop\",\"j\"]]}}\n");
    size_t before = l.len;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(l.text + before, "\"edges\":{\"add\":[[\"abcdefghijklmnopb\",\"x\",\"k\",1],"
                                    "[\"agent_a\",\"abcdefghijklmnop\",\"j\",1]],"
                                    "\"del\":[[\"abcdefghijklmnopa\",\"x\",\"k\"]]}}\n");
    polis_recorder_close(rec);
    polis_env_destroy(env);
}

/* ---- files: written by the recorder's writer thread ------------------------------------- */

typedef struct all_lines {
    char *text;
    size_t len, cap;
} all_lines;

static void sink_all(void *ud, const char *line, size_t len)
{
    all_lines *l = ud;
    if (l->len + len > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1 << 16;
        while (cap < l->len + len) cap *= 2;
        char *p = realloc(l->text, cap);
        if (!p) return;
        l->text = p;
        l->cap = cap;
    }
    memcpy(l->text + l->len, line, len);
    l->len += len;
}

/* The whole of a file, through zlib (which reads plain files as they are). */
static char *read_back(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    int got;
    while (p && (got = gzread(gz, p + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            char *q = realloc(p, cap *= 2);
            if (!q) free(p);
            p = q;
        }
    }
    gzclose(gz);
    *len = n;
    if (p) p[n] = '\0'; /* n < cap: a full buffer grows before the next read */
    return p;
}

/* The probe in an edge mode recorded (keyframes every 4 ticks, 2 episodes of 20 ticks, the
 * scene read by someone else before some of the recorder's reads) into *l. */
static void record_edges(const char *mode, all_lines *l)
{
    polis_env *env = probe_env(mode, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_recorder *rec = sink_recorder(env, sink_all, l, 4);
    const polis_scene *sc = NULL;
    for (int ep = 0; ep < 2; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, 4 + (uint64_t)ep), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_begin_episode(rec, 4 + (uint64_t)ep), POLIS_OK);
        for (int t = 0; t < 20; t++) {
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            if (t == 3 || t == 10 || t == 11) CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
        }
        CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
    }
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
}

/* Kept edges sorted by their strings' ranks (the recorder's numbers for a kept edge list): the
 * probe's edge modes — ends that share their first 16 bytes or go on past them, long kinds,
 * ends that change in a slot, edges moving between slots, new names at every tick, more than
 * the ranks hold — record byte for byte as the same edges appended in another order (sorted
 * by their strings), put with edge_put or with edge_put_padded. */
static void test_kept_edge_order(void)
{
    all_lines appended = {0}, kept = {0}, padded = {0};
    record_edges("edges", &appended);
    record_edges("kept_edges", &kept);
    record_edges("kept_edges_padded", &padded);
    CHECK(appended.len > 10000);
    CHECK(kept.len == appended.len && memcmp(kept.text, appended.text, appended.len) == 0);
    CHECK(padded.len == appended.len && memcmp(padded.text, appended.text, appended.len) == 0);
    /* the order of the ends that share their first 16 bytes, in a keyframe */
    char *key = appended.text ? strstr(appended.text, "{\"t\":\"key\",\"tick\":4,") : NULL;
    CHECK(key != NULL);
    if (key) {
        char *end = strchr(key, '\n');
        if (end) *end = '\0';
        CHECK_CONTAINS(key, "[\"abcdefghijklmno\",\"x\",\"k\",1],"
                            "[\"abcdefghijklmnop\",\"x\",\"k\",1],"
                            "[\"abcdefghijklmnop\",\"y\",\"k\",1],"
                            "[\"abcdefghijklmnop\",\"z\",\"k\",1],"
                            "[\"abcdefghijklmnopb\",\"x\",\"k\",1],"
                            "[\"abcdefghijklmnopq\",\"x\",\"k\",1],"
                            "[\"abcdefghijklmnopq\",\"y\",\"k\",1],"
                            "[\"abcdefghijklmnopq\",\"z\",\"k\",2],"
                            "[\"abcdefghijklmnopqrstuvwxyz_1\",\"abcdefghijklmnopqrstuvwxyz_2\","
                            "\"k\",1],"
                            "[\"abcdefghijklmnopqrstuvwxyz_1\",\"x\",\"k\",1],"
                            "[\"abcdefghijklmnopqrstuvwxyz_2\",\"x\",\"k\",1],");
        CHECK_CONTAINS(key, "[\"agent_b\",\"x\",\"kind_with_a_name_past_16_bytes_0\",1],"
                            "[\"agent_b\",\"x\",\"kind_with_a_name_past_16_bytes_2\",1]");
        if (end) *end = '\n';
    }
    /* tick 1: the edge that moved to the other slot with the other weight is deleted and
     * added again, the one that moved with its weight is not (no step line deletes a "y") */
    CHECK_CONTAINS(appended.text, "\"edges\":{\"add\":[[\"abcdefghijklmnop\",\"z\",\"k\",2],"
                                  "[\"abcdefghijklmnopq\",\"abcdefghijklmnopb\",\"k\",1],"
                                  "[\"abcdefghijklmnopq\",\"z\",\"k\",1],");
    CHECK(appended.text && !strstr(appended.text, "\"y\",\"k\"]"));
    free(appended.text);
    free(kept.text);
    free(padded.text);

    /* 300 edges from one end, in the other order than their slots' (sorted by merging, not by
     * insertion), three new weights a tick among more ends than edges */
    all_lines many = {0}, kept_many = {0};
    record_edges("edges_many", &many);
    record_edges("kept_edges_many", &kept_many);
    CHECK(many.len > 100000);
    CHECK(kept_many.len == many.len && memcmp(kept_many.text, many.text, many.len) == 0);
    CHECK_CONTAINS(many.text, "\"edges\":{\"add\":[[\"hub\",\"t_796\",\"k\",3],"
                              "[\"hub\",\"t_797\",\"k\",1],[\"hub\",\"t_896\",\"k\",3],"
                              "[\"hub\",\"t_897\",\"k\",1],");
    free(many.text);
    free(kept_many.text);
}

/* A script appending an edge to the probe's kept edge list at ticks 2 to 4 of every 7: the list
 * is not whole then, and whole again after */
static const char *APPEND_EDGE =
    "polis.look{edges = 1, scene = function(s)\n"
    "  local t = polis.tick() % 7\n"
    "  if t >= 2 and t <= 4 then s:edge('agent_0', 'zz_extra', 'k', t) end\n"
    "end}\n";

/* The probe in kept_edges mode, and a script (APPEND_EDGE at `lua`) appending to its list. */
static polis_env *append_env(const char *lua)
{
    FILE *f = fopen(lua, "w");
    if (!f) return NULL;
    fputs(APPEND_EDGE, f);
    fclose(f);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"max_steps\": 20, \"plugins\": [{\"name\": \"look_probe\", "
             "\"params\": {\"mode\": \"kept_edges\"}}], \"scripts\": [\"%s\"]}",
             lua);
    return test_env(json, NULL, NULL);
}

/* The probe in each mode recorded into a sink (the stepping thread diffs and formats all) and
 * into a plain file (its writer thread keeps the previous line's kept edges and diffs the
 * changed slots' new edges against them, put_edge_mirror, and diffs the agents and stats,
 * agents_whole), keyframes every 4 ticks, 2 episodes of 20 ticks, a scene read by someone else
 * before some of the recorders' reads: the file holds the sink's bytes. kept_edges fills the
 * ranks' tables (emptied between two ticks, or while a tick's keys are made: then sorted by the
 * strings), kept_edges_many changes 300 slots a tick (3 of them with a new edge), and
 * "appended" is kept_edges with a script appending an edge at some ticks: the list no longer
 * whole (diffed whole against the thread's copy), then whole again (its slots sent again), at
 * keyframes too. */
static void test_recorder_thread_diff(void)
{
    /* kept_walk_copy: the file's scenes drawn by the writer thread from copies, the sink's
     * read from the env (a sink has no writer thread) */
    const char *modes[] = {"kept_edges", "kept_edges_padded", "kept_edges_many", "edges",
                           "kept_walk",  "kept_walk_copy",    "kept_mix",        "kept",
                           "appended"};
    char path[256], lua[256];
    snprintf(path, sizeof path, "%s/test_scene_thr_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    snprintf(lua, sizeof lua, "%s/test_scene_thr_%d.lua", POLIS_BINARY_DIR, (int)getpid());
    polis_record_info info = probe_info(4);
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        /* an env each (the probe's scene may differ from one read to the next), in lockstep */
        bool append = strcmp(modes[m], "appended") == 0;
        polis_env *env[2] = {append ? append_env(lua) : probe_env(modes[m], NULL),
                             append ? append_env(lua) : probe_env(modes[m], NULL)};
        CHECK(env[0] != NULL && env[1] != NULL);
        if (!env[0] || !env[1]) return;
        all_lines l = {0};
        polis_recorder *rec[2] = {sink_recorder(env[0], sink_all, &l, 4), NULL};
        polis_error err;
        CHECK_EQ_INT(polis_recorder_open(path, env[1], &info, &rec[1], &err), POLIS_OK);
        const polis_scene *sc = NULL;
        int whole[2] = {0, 0}; /* ticks the edge list was not whole, was */
        for (int ep = 0; ep < 2 && rec[0] && rec[1]; ep++) {
            for (int i = 0; i < 2; i++) {
                CHECK_EQ_INT(polis_env_reset(env[i], 4 + (uint64_t)ep), POLIS_OK);
                CHECK_EQ_INT(polis_recorder_begin_episode(rec[i], 4 + (uint64_t)ep), POLIS_OK);
            }
            for (int t = 0; t < 20; t++) {
                for (int i = 0; i < 2; i++) {
                    CHECK_EQ_INT(polis_env_step(env[i]), POLIS_OK);
                    if (t == 3 || t == 10 || t == 11)
                        CHECK_EQ_INT(polis_env_scene_get(env[i], &sc), POLIS_OK);
                    CHECK_EQ_INT(polis_recorder_step(rec[i]), POLIS_OK);
                }
                const polis_scene_said *said = polis_env_scene_said(env[1]);
                if (said) whole[said->kept_whole[POLIS_SCENE_EDGES]]++;
            }
            for (int i = 0; i < 2; i++)
                CHECK_EQ_INT(polis_recorder_end_episode(rec[i], NULL), POLIS_OK);
        }
        if (append) CHECK(whole[0] == 18 && whole[1] == 22);
        for (int i = 0; i < 2; i++) CHECK_EQ_INT(polis_recorder_close(rec[i]), POLIS_OK);
        size_t len = 0;
        char *text = read_back(path, &len);
        CHECK(text != NULL && l.len > 1000);
        if (!(text && len == l.len && memcmp(text, l.text, len) == 0))
            fprintf(stderr, "test_recorder_thread_diff: mode %s: the file differs\n", modes[m]);
        CHECK(text && len == l.len && memcmp(text, l.text, len) == 0);
        if (append && text) { /* the appended edge added and deleted, and in a keyframe */
            CHECK_CONTAINS(text, "[\"agent_0\",\"zz_extra\",\"k\",2]");
            CHECK_CONTAINS(text, ",[\"agent_0\",\"zz_extra\",\"k\"]");
            char *key = strstr(text, "{\"t\":\"key\",\"tick\":16,"), *end = NULL;
            CHECK(key && (end = strchr(key, '\n')) != NULL);
            if (end) *end = '\0';
            if (key) CHECK_CONTAINS(key, "[\"agent_0\",\"zz_extra\",\"k\",2]");
        }
        free(text);
        free(l.text);
        remove(path);
        for (int i = 0; i < 2; i++) polis_env_destroy(env[i]);
    }
    remove(lua);
}

/* A recorder whose scenes the writer thread draws from copies (docs/recording.md, "Scenes on
 * the writer thread"): a take that fails fails the step at once, with the plugin's message; a
 * draw that fails (on the writer thread, found later) stops the file at the line before it and
 * is reported by polis_recorder_flush (and the close) with the plugin's message and tick; the
 * lines before it are written whole. With POLIS_RECORD_COPIES=0 the same probe records from the
 * env's scenes, and the draw that would fail is never made. */
/* The probe in `mode`, reset (seed 4), and a recorder of it into path, its episode begun. */
static polis_env *copy_recording(const char *mode, const char *path, polis_recorder **rec)
{
    polis_record_info info = probe_info(100);
    polis_error err;
    polis_env *env = probe_env(mode, NULL);
    *rec = NULL;
    CHECK(env != NULL);
    if (!env) return NULL;
    CHECK_EQ_INT(polis_recorder_open(path, env, &info, rec, &err), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(env, 4), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(*rec, 4), POLIS_OK);
    return env;
}

static void test_recorder_copies(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/test_scene_cp_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    for (int off = 0; off < 2; off++) {
        if (off) setenv("POLIS_RECORD_COPIES", "0", 1);
        polis_recorder *rec;
        polis_env *env = copy_recording("kept_walk_copy_draw_fail", path, &rec);
        if (!env || !rec) return;
        for (int t = 0; t < 6; t++) {
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK); /* the writer draws later */
        }
        CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
        if (!off) {
            CHECK_EQ_INT(polis_recorder_flush(rec), POLIS_ERR_STATE);
            CHECK_CONTAINS(polis_recorder_error(rec), "recorder: tick 3: look_probe: ");
            CHECK_CONTAINS(polis_recorder_error(rec), "[scene copy, tick 3]");
            CHECK_EQ_INT(polis_recorder_flush(rec), POLIS_ERR_STATE); /* and stays */
            CHECK_EQ_INT(polis_recorder_close(rec), POLIS_ERR_STATE);
        } else {
            CHECK_EQ_INT(polis_recorder_flush(rec), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
        }
        size_t len = 0;
        char *text = read_back(path, &len);
        CHECK(text != NULL);
        if (text) {
            CHECK_CONTAINS(text, "{\"t\":\"step\",\"tick\":2,");
            if (!off) { /* up to tick 2's line, whole */
                CHECK(strstr(text, "\"tick\":3,") == NULL);
                CHECK(len > 0 && text[len - 1] == '\n');
            } else {
                CHECK_CONTAINS(text, "{\"t\":\"end\",\"episode\":0,\"tick\":6,");
            }
        }
        free(text);
        polis_env_destroy(env);
        unsetenv("POLIS_RECORD_COPIES");
    }
    /* two file recorders of one env: the first draws from copies, the second (the env has one
     * reader of copies) reads the env's scenes: the same file */
    {
        char path2[300];
        snprintf(path2, sizeof path2, "%s.2", path);
        polis_record_info info = probe_info(4);
        polis_error err;
        polis_env *env = probe_env("kept_walk_copy", NULL);
        polis_recorder *rec[2] = {NULL, NULL};
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_recorder_open(path, env, &info, &rec[0], &err), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_open(path2, env, &info, &rec[1], &err), POLIS_OK);
        for (int ep = 0; ep < 2 && rec[0] && rec[1]; ep++) {
            CHECK_EQ_INT(polis_env_reset(env, 5 + (uint64_t)ep), POLIS_OK);
            for (int i = 0; i < 2; i++)
                CHECK_EQ_INT(polis_recorder_begin_episode(rec[i], 5 + (uint64_t)ep), POLIS_OK);
            while (!polis_env_done(env)) {
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
                for (int i = 0; i < 2; i++) CHECK_EQ_INT(polis_recorder_step(rec[i]), POLIS_OK);
            }
            for (int i = 0; i < 2; i++)
                CHECK_EQ_INT(polis_recorder_end_episode(rec[i], NULL), POLIS_OK);
        }
        for (int i = 0; i < 2; i++) CHECK_EQ_INT(polis_recorder_close(rec[i]), POLIS_OK);
        size_t n[2] = {0, 0};
        char *text[2] = {read_back(path, &n[0]), read_back(path2, &n[1])};
        CHECK(text[0] && text[1] && n[0] > 1000 && n[0] == n[1] &&
              memcmp(text[0], text[1], n[0]) == 0);
        free(text[0]);
        free(text[1]);
        remove(path2);
        polis_env_destroy(env);
    }
    /* a take that fails: that step fails, naming the plugin and the tick */
    polis_recorder *rec;
    polis_env *env = copy_recording("kept_walk_copy_take_fail", path, &rec);
    if (!env || !rec) return;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_ERR_PLUGIN);
    CHECK_CONTAINS(polis_recorder_error(rec), "recorder: tick 2: look_probe: ");
    CHECK_CONTAINS(polis_recorder_error(rec), "[scene copy, tick 2]");
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK); /* the lines before it are good */
    polis_env_destroy(env);
    CHECK_EQ_INT(polis_recorder_flush(NULL), POLIS_ERR_INVALID);
    remove(path);
}

/* What a recorder of the walker scenario is told: a keyframe every `every` ticks. */
static polis_record_info walker_info(int32_t every, uint64_t seed)
{
    static const char scn[] = "{}";
    return (polis_record_info){.scenario_text = scn,
                               .scenario_len = sizeof scn - 1,
                               .keyframe_every = every,
                               .seed = seed,
                               .source = "test"};
}

/* Several hundred KiB (several of the writer's chunks) written to a plain and a gzip file
 * while a sink takes the same lines: the files hold exactly the sink's bytes. A file whose
 * writes fail (/dev/full) fails a later step (at the latest once its lines fill every chunk the
 * writer thread queues: the step waits for the thread, which has found the failure), with the
 * reason, and the close. */
static void test_recorder_files(void)
{
    polis_env *env = test_env_file(WALKER, NULL);
    CHECK(env != NULL);
    if (!env) return;
    char plain[256], gz[256];
    snprintf(plain, sizeof plain, "%s/test_scene_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    snprintf(gz, sizeof gz, "%s/test_scene_%d.jsonl.gz", POLIS_BINARY_DIR, (int)getpid());
    polis_record_info info = walker_info(7, 3);
    all_lines l = {0};
    polis_recorder *rec[4] = {NULL};
    polis_error err;
    CHECK_EQ_INT(polis_recorder_open_sink(sink_all, &l, env, &info, &rec[0], &err), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_open(plain, env, &info, &rec[1], &err), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_open(gz, env, &info, &rec[2], &err), POLIS_OK);
    bool full = access("/dev/full", W_OK) == 0;
    if (full) CHECK_EQ_INT(polis_recorder_open("/dev/full", env, &info, &rec[3], &err), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    int32_t n = polis_env_n_agents(env);
    polis_status full_st = POLIS_OK;
    /* 600 KiB, and more while the failed file's steps go on (its failure is seen once the
     * writer thread got to it: by 32 chunks of 128 KiB at the latest) */
    for (uint64_t ep = 0;
         (l.len < (600u << 10) || (rec[3] && !full_st && l.len < (12u << 20))) && ep < 100000;
         ep++) {
        CHECK_EQ_INT(polis_env_reset(env, ep + 3), POLIS_OK);
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(polis_recorder_begin_episode(rec[i], ep + 3), POLIS_OK);
        if (rec[3] && !full_st) full_st = polis_recorder_begin_episode(rec[3], ep + 3);
        bool done = false;
        for (int t = 1; !done; t++) {
            for (int32_t a = 0; a < n; a++) io->actions[a] = (int32_t)((t * 7 + a + ep) % 5);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int i = 0; i < 3; i++) CHECK_EQ_INT(polis_recorder_step(rec[i]), POLIS_OK);
            if (rec[3] && !full_st) full_st = polis_recorder_step(rec[3]);
            for (int32_t a = 0; a < n; a++) done |= io->terminations[a] || io->truncations[a];
        }
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(polis_recorder_end_episode(rec[i], NULL), POLIS_OK);
        if (rec[3] && !full_st) full_st = polis_recorder_end_episode(rec[3], NULL);
    }
    CHECK(l.len >= (600u << 10));
    if (rec[3]) {
        /* the failure seen by a step or an end line, not first by the close */
        CHECK_EQ_INT(full_st, POLIS_ERR_IO);
        CHECK_EQ_STR(polis_recorder_error(rec[3]), "recorder: cannot write the recording");
        CHECK_EQ_INT(polis_recorder_close(rec[3]), POLIS_ERR_IO);
    }
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(polis_recorder_close(rec[i]), POLIS_OK);
    const char *paths[2] = {plain, gz};
    for (int i = 0; i < 2; i++) {
        size_t len = 0;
        char *text = read_back(paths[i], &len);
        CHECK(text != NULL);
        CHECK_EQ_INT((long long)len, (long long)l.len);
        CHECK(text && len == l.len && memcmp(text, l.text, len) == 0);
        free(text);
        remove(paths[i]);
    }
    free(l.text);
    polis_env_destroy(env);
}

/* The reader of a FIFO: opens it (which lets the recorder's open return), waits before the
 * first read so that the writer thread, blocked on its write, falls behind, then reads all. */
typedef struct fifo_reader {
    const char *path;
    all_lines got;
    bool ok;
} fifo_reader;

static void *fifo_read(void *arg)
{
    fifo_reader *f = arg;
    int fd = open(f->path, O_RDONLY);
    if (fd < 0) return NULL;
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) sink_all(&f->got, buf, (size_t)n);
    f->ok = n == 0;
    close(fd);
    return NULL;
}

/* The writer thread behind: its file is a FIFO nobody reads for 200 ms, so its first write
 * blocks while the stepping thread fills every chunk the thread queues (32 of 128 KiB), then
 * waits for one; a keyframe every other tick puts more hashes in flight than there are state
 * copies, so a keyframe waits for one too. Then the FIFO is read: it held exactly the sink's
 * bytes. */
static void test_recorder_queue(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/test_scene_fifo_%d", POLIS_BINARY_DIR, (int)getpid());
    remove(path);
    if (mkfifo(path, 0600) != 0) {
        fprintf(stderr, "test_recorder_queue: no FIFO here (%s): skipped\n", path);
        return;
    }
    polis_env *env = test_env_file(WALKER, NULL);
    CHECK(env != NULL);
    fifo_reader f = {.path = path};
    pthread_t th;
    bool started = env && pthread_create(&th, NULL, fifo_read, &f) == 0;
    CHECK(started);
    if (!started) {
        remove(path);
        if (env) polis_env_destroy(env);
        return;
    }
    polis_record_info info = walker_info(2, 5);
    all_lines l = {0};
    polis_recorder *rec[2] = {NULL, NULL};
    polis_error err;
    CHECK_EQ_INT(polis_recorder_open_sink(sink_all, &l, env, &info, &rec[0], &err), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_open(path, env, &info, &rec[1], &err), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    int32_t n = polis_env_n_agents(env);
    /* 16 MiB of lines: their raw pieces more than the chunks hold */
    for (uint64_t ep = 0; rec[0] && rec[1] && l.len < (16u << 20) && ep < 100000; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, ep + 5), POLIS_OK);
        for (int i = 0; i < 2; i++)
            CHECK_EQ_INT(polis_recorder_begin_episode(rec[i], ep + 5), POLIS_OK);
        bool done = false;
        for (int t = 1; !done; t++) {
            for (int32_t a = 0; a < n; a++) io->actions[a] = (int32_t)((t * 3 + a + ep) % 5);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int i = 0; i < 2; i++) CHECK_EQ_INT(polis_recorder_step(rec[i]), POLIS_OK);
            for (int32_t a = 0; a < n; a++) done |= io->terminations[a] || io->truncations[a];
        }
        for (int i = 0; i < 2; i++)
            CHECK_EQ_INT(polis_recorder_end_episode(rec[i], NULL), POLIS_OK);
    }
    CHECK(l.len >= (16u << 20));
    for (int i = 0; i < 2; i++)
        if (rec[i]) CHECK_EQ_INT(polis_recorder_close(rec[i]), POLIS_OK);
    pthread_join(th, NULL);
    CHECK(f.ok);
    CHECK_EQ_INT((long long)f.got.len, (long long)l.len);
    CHECK(f.got.text && f.got.len == l.len && memcmp(f.got.text, l.text, l.len) == 0);
    free(f.got.text);
    free(l.text);
    remove(path);
    polis_env_destroy(env);
}

/* The last line a sink got (without its newline). */
static const char *last_line(const lines *l)
{
    static char line[1 << 12];
    size_t end = l->len ? l->len - 1 : 0, start = end;
    while (start > 0 && l->text[start - 1] != '\n') start--;
    size_t n = end - start < sizeof line - 1 ? end - start : sizeof line - 1;
    memcpy(line, l->text + start, n);
    line[n] = '\0';
    return line;
}

/* The "scene" host API: a callback that says its kept layer is as it was keeps the layer's
 * version (polis_env_scene_layer_version), and the recorder, which then does not compare
 * the layer, still writes every change: the probe ("same") rewrites a cell at even ticks and
 * says the layer is the same at odd ones. */
static void test_layer_same(void)
{
    polis_env *env = probe_env("same", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_scene_layer_version(env, 0), 0); /* no scene yet */
    static lines l;
    polis_recorder *rec = probe_recorder(env, &l);
    uint64_t v0 = polis_env_scene_layer_version(env, 0);
    CHECK(v0 != 0);
    CHECK_EQ_INT(polis_env_scene_layer_version(env, 1), 0); /* no such layer */
    CHECK_EQ_INT(polis_env_scene_layer_version(NULL, 0), 0);
    /* tick 1: the same layer, the same version, no tiles in the step line */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK(polis_env_scene_layer_version(env, 0) == v0);
    CHECK(strstr(last_line(&l), "\"tiles\"") == NULL);
    /* tick 2: a rock at (2, 3), a new version */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    uint64_t v2 = polis_env_scene_layer_version(env, 0);
    CHECK(v2 != v0);
    CHECK_CONTAINS(last_line(&l), "\"illegal\":[0,0],\"tiles\":[[0,2,3,1]],");
    /* tick 3: the same again, also for a scene read by someone else first */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(polis_env_scene_layer_version(env, 0) == v2);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK(polis_env_scene_layer_version(env, 0) == v2);
    CHECK(strstr(last_line(&l), "\"tiles\"") == NULL);
    /* tick 4: the rock at (4, 3) */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
    CHECK_CONTAINS(last_line(&l), "\"tiles\":[[0,4,3,1]],");
    uint64_t v4 = polis_env_scene_layer_version(env, 0);
    CHECK(v4 != v2);
    CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
    /* a reset clears the kept layer: a new version whatever the callback says */
    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    CHECK_EQ_INT(polis_recorder_begin_episode(rec, 5), POLIS_OK);
    CHECK(polis_env_scene_layer_version(env, 0) != v4);
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);

    /* only in the plugin's own scene callback, only for a kept layer */
    CHECK_CONTAINS(probe_error("same_outside"),
                   "look_probe: scene layer_same: only in the plugin's own scene callback, for "
                   "the scene it was handed");
    env = probe_env("same_bad", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "look_probe: scene layer_same: 0 is not a kept layer "
                                       "(look_keep_layer) [scene, tick 0]");
    polis_env_destroy(env);
}

/* Kept lists ("scene" host API 2): the probe's "kept" mode puts its things and its edge in
 * slots (agent 1's thing cleared at odd ticks, the others put again, unchanged, every tick);
 * its recording is byte for byte that of the "keep" mode, which appends them, over two
 * episodes and with a scene read by someone else between two of the recorder's. */
static void record_probe(const char *mode, lines *l)
{
    polis_env *env = probe_env(mode, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_recorder *rec = probe_recorder(env, l);
    const polis_scene *sc = NULL;
    for (int ep = 0; ep < 2; ep++) {
        if (ep) {
            CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_begin_episode(rec, 5), POLIS_OK);
        }
        for (int t = 0; t < 7; t++) {
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            if (t == 3) CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
        }
        CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
    }
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
}

/* Two modes whose scenes look the same, recorded: the same lines, more than ten. */
static void record_same(const char *mode_a, lines *a, const char *mode_b, lines *b)
{
    record_probe(mode_a, a);
    record_probe(mode_b, b);
    CHECK(a->n > 10);
    CHECK_EQ_INT(b->n, a->n);
    CHECK(b->len == a->len && memcmp(b->text, a->text, a->len) == 0);
}

/* What a scene says of itself (polis_env_scene_said), read by the recorder without a call
 * each: the same number, layer versions, wholeness and changed slots as the calls give. */
static void test_scene_said(void)
{
    CHECK(polis_env_scene_said(NULL) == NULL);
    polis_env *env = probe_env("kept", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_scene_said(env) == NULL); /* no scene yet */
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK(polis_env_scene_said(env) == NULL);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* tick 0: both things put */
    const polis_scene_said *said = polis_env_scene_said(env);
    CHECK(said != NULL);
    if (!said || !sc) return;
    CHECK(said->number == 1);
    for (int32_t l = 0; l < sc->n_layers; l++)
        CHECK(said->layer_ver[l] == polis_env_scene_layer_version(env, l));
    CHECK(sc->n_layers > 0 || said->layer_ver == NULL);
    CHECK(said->kept_whole[POLIS_SCENE_THINGS] && said->kept_whole[POLIS_SCENE_EDGES]);
    CHECK(!said->kept_whole[POLIS_SCENE_NODES]); /* not kept */
    CHECK(said->changed[POLIS_SCENE_NODES] == NULL && said->n_changed[POLIS_SCENE_NODES] == 0);
    CHECK_EQ_INT(said->n_changed[POLIS_SCENE_THINGS], 2);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* tick 1: agent 1's cleared */
    CHECK(polis_env_scene_said(env) == said);              /* the same record, rewritten */
    CHECK(said->number == 2 && said->number == polis_env_scene_number(env));
    int32_t chg[4] = {-1, -1, -1, -1};
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 1, chg, 4), 2);
    CHECK_EQ_INT(said->n_changed[POLIS_SCENE_THINGS], 2);
    const int32_t *c = said->changed[POLIS_SCENE_THINGS];
    CHECK(c != NULL && ((c[0] == chg[0] && c[1] == chg[1]) || (c[0] == chg[1] && c[1] == chg[0])));
    for (int32_t l = 0; l < sc->n_layers; l++)
        CHECK(said->layer_ver[l] == polis_env_scene_layer_version(env, l));
    /* a list no plugin keeps: not whole and no changes in every scene (the kernel leaves its
     * record alone), the kept ones whole as polis_env_scene_kept says */
    for (int t = 0; t < 3; t++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
        CHECK(said->number == (uint64_t)(3 + t));
        CHECK(!said->kept_whole[POLIS_SCENE_NODES] && said->n_changed[POLIS_SCENE_NODES] == 0);
        CHECK(said->changed[POLIS_SCENE_NODES] == NULL);
        polis_scene_kept k;
        CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &k), POLIS_OK);
        CHECK(said->kept_whole[POLIS_SCENE_THINGS] == k.whole);
        CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_EDGES, &k), POLIS_OK);
        CHECK(said->kept_whole[POLIS_SCENE_EDGES] == k.whole);
        CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_NODES, &k), POLIS_OK);
        CHECK(!k.whole);
    }
    polis_env_destroy(env);

    /* a scene that failed half written is not whole */
    env = probe_env("kept_slot", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK(polis_env_scene_get(env, &sc) != POLIS_OK);
    said = polis_env_scene_said(env);
    CHECK(said != NULL && said->number == 1 && !said->kept_whole[POLIS_SCENE_THINGS]);
    polis_env_destroy(env);
}

static void test_kept_lists(void)
{
    static lines keep, kept;
    record_same("keep", &keep, "kept", &kept);
    CHECK_CONTAINS(kept.text, "\"things\":{\"move\":[[100,1,0]],\"del\":[101]}");

    /* what a reader sees: the slots, where their elements are, which slots changed */
    polis_env *env = probe_env("kept", NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_scene_kept k;
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_number(env), 0);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &k), POLIS_ERR_STATE);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* tick 0: both things */
    CHECK_EQ_INT(polis_env_scene_number(env), 1);
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &k), POLIS_OK);
    CHECK_EQ_INT(k.slots, 4);
    CHECK(k.whole && k.where && k.where[0] == -1 && k.where[1] == -1);
    CHECK(k.where && k.where[3] >= 0 && sc->things[k.where[3]].id == 100);
    CHECK(k.where && k.where[2] >= 0 && sc->things[k.where[2]].id == 101);
    CHECK_EQ_INT(sc->n_things, 2);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* tick 1: agent 1's cleared */
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &k), POLIS_OK);
    CHECK(k.where && k.where[2] == -1 && k.where[3] >= 0 && sc->things[k.where[3]].x == 1);
    CHECK_EQ_INT(sc->n_things, 1);
    int32_t chg[4] = {-1, -1, -1, -1};
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 1, chg, 4), 2);
    CHECK((chg[0] == 2 && chg[1] == 3) || (chg[0] == 3 && chg[1] == 2));
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 1, chg, 1), -1);
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 0, chg, 4), 2); /* a scan */
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 2, chg, 4), 0);
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_NODES, 0, chg, 4), 0);
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, 7, 0, chg, 4), -1);
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_EDGES, &k), POLIS_OK);
    CHECK(k.slots == 2 && k.whole && k.where && k.where[1] == 0 && k.where[0] == -1);
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_NODES, &k), POLIS_OK);
    CHECK(k.slots == 0 && k.where == NULL && !k.whole);
    CHECK_EQ_INT(polis_env_scene_kept(env, 3, &k), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_scene_kept(NULL, 0, &k), POLIS_ERR_INVALID);
    polis_env_destroy(env);

    /* bad use, each with its message and place */
    CHECK_CONTAINS(probe_error("kept_nodes"),
                   "look_probe: scene list_keep: list 1 is not POLIS_SCENE_THINGS (0) or "
                   "POLIS_SCENE_EDGES (2)");
    CHECK_CONTAINS(probe_error("kept_outside"),
                   "look_probe: scene thing_put: only in the plugin's own scene callback, for "
                   "the scene it was handed");
    const char *modes[2] = {"kept_slot", "kept_append"};
    const char *msgs[2] = {"look_probe: scene thing_put: slot 4 is outside 0..3 [scene, tick 0]",
                           "look_probe: scene_thing: this plugin keeps the list (list_keep): put "
                           "it in a slot [scene, tick 0]"};
    const polis_status sts[2] = {POLIS_ERR_INVALID, POLIS_ERR_STATE};
    for (int i = 0; i < 2; i++) {
        env = probe_env(modes[i], NULL);
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), sts[i]);
        CHECK_EQ_STR(polis_env_error(env), msgs[i]);
        polis_env_destroy(env);
    }
}

/* edge_put_padded ("scene" host API 3): the probe's edge put as the scene holds it records as
 * edge_put's; an empty end, a kind that does not end in its array and a NaN weight are
 * refused, each with its message. */
static void test_edge_put_padded(void)
{
    static lines kept, padded;
    record_same("kept", &kept, "kept_padded", &padded);
    CHECK_CONTAINS(padded.text, "[\"agent_0\",\"club\",\"member\",0.75]");
    const char *modes[3] = {"kept_padded_empty", "kept_padded_long", "kept_padded_nan"};
    const char *msgs[3] = {
        "look_probe: edge_put_padded: an end is empty [scene, tick 0]",
        ("look_probe: edge_put_padded: kind \"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...\" does "
         "not end in its 64 bytes [scene, tick 0]"),
        "look_probe: edge_put_padded agent_0 -> club: the weight is NaN [scene, tick 0]"};
    for (int i = 0; i < 3; i++) {
        polis_env *env = probe_env(modes[i], NULL);
        const polis_scene *sc = NULL;
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_INVALID);
        CHECK_EQ_STR(polis_env_error(env), msgs[i]);
        polis_env_destroy(env);
    }
}

/* Kept things whose slots change a few at a time (the recorder's inline diff) or many at once
 * (its sorted merge): moves, a kind and a label replaced, an id that changes slots, an id that
 * changes in its slot, a thing there every other tick. The recording is the one of the same
 * things appended whole every tick (the whole-list merge). */
static void test_kept_mix(void)
{
    static lines mix, kept;
    record_same("mix", &mix, "kept_mix", &kept);
    /* tick 2 (a few slots): id 12 back to slot 2 is a move, 11's new kind and 13's new label
     * are adds, 201 went and 202 came, 5 came back */
    CHECK_CONTAINS(kept.text, "\"tick\":2,");
    CHECK_CONTAINS(kept.text, "\"things\":{\"add\":[[5,1,5,1,\"\"],[11,1,1,1,\"\"],"
                              "[13,1,0,2,\"a\"],[202,1,4,0,\"\"]],"
                              "\"move\":[[10,2,0],[12,1,2]],\"del\":[201]}");
    /* tick 5 (every slot): the 33 others moved too */
    CHECK_CONTAINS(kept.text, "[339,2,3]]");
}

/* Kept things paired by slot (the recorder's inline diff without a merge by id): moves, a kind
 * and a label replaced, a thing there every other tick — the recording of the same things
 * appended whole every tick. */
static void test_kept_mix_paired(void)
{
    static lines mix, kept;
    record_same("mix_paired", &mix, "kept_mix_paired", &kept);
    /* tick 2: 11's new kind and 13's new label are adds, 5 came back, 10 moved */
    CHECK_CONTAINS(kept.text, "\"things\":{\"add\":[[5,1,5,1,\"\"],[11,1,1,1,\"\"],"
                              "[13,1,0,2,\"a\"]],\"move\":[[10,2,0]]}");
    /* tick 3: 5 went */
    CHECK_CONTAINS(kept.text, "\"move\":[[10,3,0]],\"del\":[5]}");
}

/* Kept things that only move, or only move and are replaced in their slots, tick after tick
 * (the recorder writes a move as its id and place and updates only the place of its copy),
 * with keyframes every third tick between them and a scene read by someone else; and ten
 * stats a few of which change at a time (compared four at a time, then one at a time). The
 * recording is the one of the same things appended whole every tick. */
static void test_kept_walk(void)
{
    static lines walk, kept;
    probe_keyframes = 3;
    record_same("walk", &walk, "kept_walk", &kept);
    probe_keyframes = 100;
    CHECK_CONTAINS(kept.text, "{\"t\":\"key\",\"tick\":3,");
    /* tick 2: both moved (ids in order); stats 0 (the tick), s1, s2 and s9 changed */
    CHECK_CONTAINS(kept.text, "\"tick\":2,");
    CHECK_CONTAINS(kept.text, "\"things\":{\"move\":[[100,2,0],[101,3,1]]},\"agents\":[[0,{"
                              "\"stats\":{\"0\":2,\"1\":2,\"2\":1,\"9\":0}}]");
    /* tick 4: agent 1's thing became a sand (an add), agent 0's moved */
    CHECK_CONTAINS(kept.text, "\"things\":{\"add\":[[101,0,5,1,\"\"]],\"move\":[[100,4,0]]}");
    /* tick 7: s1, s7 and s9 changed (the second four and the two after them), and the tick */
    CHECK_CONTAINS(kept.text, "[1,{\"stats\":{\"0\":7,\"1\":7,\"7\":1,\"9\":1}}]]");
}

/* The "scene" host API 3: thing_move moves a kept thing, layer_rows names the rows of a kept
 * layer a scene rewrote (the recorder compares only those); the probe's kept_move mode records
 * as its keep mode does, also with a scene read by someone else between two of the recorder's
 * (then the rows are not relative to the recorder's copy and it compares the whole layer). */
static void test_scene_v3(void)
{
    static lines keep, moved;
    record_same("keep", &keep, "kept_move", &moved);
    CHECK_CONTAINS(moved.text, "\"things\":{\"move\":[[100,1,0]],\"del\":[101]}");
    CHECK_CONTAINS(moved.text, "\"tiles\":[[0,1,3,1]]");

    polis_env *env = probe_env("kept_move", NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_scene *sc = NULL;
    uint64_t since = 7;
    CHECK(polis_env_scene_layer_rows(env, 0, &since) == NULL && since == 0); /* no scene yet */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* fresh: no rows */
    uint64_t v0 = polis_env_scene_layer_version(env, 0);
    CHECK(polis_env_scene_layer_rows(env, 0, &since) == NULL && since == 0);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* tick 1: row 3 */
    const uint64_t *rows = polis_env_scene_layer_rows(env, 0, &since);
    CHECK(rows != NULL && rows[0] == 8 && since == v0);
    CHECK(polis_env_scene_layer_version(env, 0) != v0);
    CHECK(polis_env_scene_layer_rows(env, 0, NULL) == rows);
    CHECK(polis_env_scene_layer_rows(env, 1, &since) == NULL && since == 0);
    CHECK(polis_env_scene_layer_rows(NULL, 0, &since) == NULL);
    /* agent 0's thing moved to (1, 0), its id, kind and label kept */
    polis_scene_kept k;
    CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &k), POLIS_OK);
    CHECK(k.where && k.where[3] >= 0);
    if (k.where && k.where[3] >= 0) {
        const polis_scene_thing *t = &sc->things[k.where[3]];
        CHECK(t->id == 100 && t->x == 1 && t->y == 0 && t->label[0] == '\0');
    }
    int32_t chg[4];
    CHECK_EQ_INT(polis_env_scene_kept_changes(env, POLIS_SCENE_THINGS, 1, chg, 4), 2);
    /* the rows a scene said are its own (the kernel notes the scene's number, clearing
     * nothing between scenes): the same tick read again names row 3 again, relative to the
     * scene before; a new episode's fresh scene names none, and its next scene row 3 again */
    uint64_t v1 = polis_env_scene_layer_version(env, 0);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    rows = polis_env_scene_layer_rows(env, 0, &since);
    CHECK(rows != NULL && rows[0] == 8 && since == v1);
    uint64_t v1b = polis_env_scene_layer_version(env, 0);
    CHECK(v1b != v1);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(polis_env_scene_layer_rows(env, 0, &since) == NULL && since == 0);
    uint64_t v2 = polis_env_scene_layer_version(env, 0);
    CHECK(v2 != v1b);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    rows = polis_env_scene_layer_rows(env, 0, &since);
    CHECK(rows != NULL && rows[0] == 8 && since == v2);
    polis_env_destroy(env);

    /* bad use, each with its message and place */
    CHECK_CONTAINS(probe_error("rows_outside"),
                   "look_probe: scene layer_rows: only in the plugin's own scene callback, for "
                   "the scene it was handed");
    env = probe_env("move_empty", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_INVALID);
    CHECK_EQ_STR(
        polis_env_error(env),
        "look_probe: scene thing_move: slot 0 is empty (thing_put it first) [scene, tick 0]");
    polis_env_destroy(env);
    env = probe_env("rows_bad", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "look_probe: scene layer_rows: 2 words of rows, not 1..1 [scene, tick 1]");
    CHECK(polis_env_scene_layer_rows(env, 0, &since) == NULL && since == 0); /* failed */
    polis_env_destroy(env);
}

/* The "scene" host API 4: scene_whole (the plugin writes every agent, every stat of its own
 * and, when fresh, every cell of its kept layer; the kernel clears none of them first). The
 * probe's kept_walk_whole mode records as its walk mode does, with keyframes every third tick
 * and a scene read by someone else between two of the recorder's; bad use refused. */
static void test_scene_whole(void)
{
    static lines walk, whole;
    probe_keyframes = 3;
    record_same("walk", &walk, "kept_walk_whole", &whole);
    probe_keyframes = 100;
    CHECK_CONTAINS(whole.text, "\"things\":{\"move\":[[100,2,0],[101,3,1]]},\"agents\":[[0,{"
                               "\"stats\":{\"0\":2,\"1\":2,\"2\":1,\"9\":0}}]");
    /* episode after episode: the fresh scene's layer written whole again, not filled first */
    polis_env *env = probe_env("kept_walk_whole", NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_scene *sc = NULL;
    for (int e = 0; e < 2; e++) {
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)e + 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
        CHECK(sc->tiles[0] == 1 && sc->tiles[1] == 0); /* rock on the diagonal, sand */
        CHECK(sc->agents[1].x == 1 && sc->agents[1].y == 1 && sc->agents[1].alive == 1);
        CHECK(sc->stats[sc->n_stats] == 0 && sc->stats[sc->n_stats + 9] == 0);
        for (int t = 0; t < 3; t++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
        CHECK(sc->stats[0] == 3 && sc->stats[9] == 1 && sc->tiles[3 * 6 + 3] == 1);
    }
    polis_env_destroy(env);
    CHECK_CONTAINS(probe_error("whole_bits"), "look_probe: scene scene_whole: unknown bits 0x8");
    CHECK_CONTAINS(probe_error("whole_early"),
                   "look_probe: scene scene_whole: register the scene callback (look_scene) first");
}

/* ---- scenes drawn from copies ("scene" host API 5, polis_scene_copy_*) ---------------------- */

/* What a scene shows and says of itself, in one canonical form, for comparing the env's with
 * a copy reader's: tiles, agents, stats, the kept things and edges by slot, the nodes, per list
 * whole and the changed slots (sorted), per layer whether its version changed and the rows
 * named (and whether relative to the version before). */
typedef struct snap {
    size_t n;
    unsigned char b[6144];
} snap;

static void snap_put(snap *sn, const void *p, size_t n)
{
    if (sn->n + n > sizeof sn->b) {
        CHECK(!"snap overflow");
        return;
    }
    if (n) memcpy(sn->b + sn->n, p, n);
    sn->n += n;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* env's scene when c is NULL, else c's; prev[] each layer's version at the last snap */
static void snap_scene(snap *sn, const polis_env *env, const polis_scene_copy *c,
                       const polis_scene *sc, uint64_t prev[4])
{
    sn->n = 0;
    size_t cells = (size_t)sc->n_layers * (size_t)sc->width * (size_t)sc->height;
    snap_put(sn, sc->tiles, cells * sizeof *sc->tiles);
    for (int32_t a = 0; a < sc->n_agents; a++) {
        const polis_scene_agent *ag = &sc->agents[a];
        int32_t v[4] = {ag->x, ag->y, ag->facing, ag->alive};
        snap_put(sn, v, sizeof v);
    }
    snap_put(sn, sc->stats, (size_t)sc->n_agents * (size_t)sc->n_stats * sizeof(int32_t));
    int32_t counts[3] = {sc->n_things, sc->n_nodes, sc->n_edges};
    snap_put(sn, counts, sizeof counts);
    snap_put(sn, sc->nodes, (size_t)sc->n_nodes * sizeof *sc->nodes);
    const polis_scene_said *said = c ? polis_scene_copy_said(c) : polis_env_scene_said(env);
    CHECK(said != NULL);
    if (!said) return;
    for (int32_t list = 0; list < 3; list += 2) {
        polis_scene_kept k;
        CHECK_EQ_INT(c ? polis_scene_copy_kept(c, list, &k) : polis_env_scene_kept(env, list, &k),
                     POLIS_OK);
        snap_put(sn, &k.slots, sizeof k.slots);
        snap_put(sn, &k.whole, sizeof k.whole);
        for (int32_t s = 0; s < k.slots; s++) {
            int32_t at = k.where[s];
            snap_put(sn, &at, sizeof at); /* -1 or an index: compared by what it holds too */
            if (at >= 0 && list == POLIS_SCENE_THINGS)
                snap_put(sn, &sc->things[at], sizeof *sc->things);
            else if (at >= 0)
                snap_put(sn, &sc->edges[at], sizeof *sc->edges);
        }
        int32_t chg[64], n = said->n_changed[list];
        CHECK(n <= 64);
        if (n > 64) n = 64;
        memcpy(chg, said->changed[list], (size_t)n * sizeof *chg);
        qsort(chg, (size_t)n, sizeof *chg, cmp_i32);
        snap_put(sn, &said->kept_whole[list], sizeof said->kept_whole[list]);
        snap_put(sn, &n, sizeof n);
        snap_put(sn, chg, (size_t)n * sizeof *chg);
    }
    for (int32_t l = 0; l < sc->n_layers && l < 4; l++) {
        uint64_t since = 0;
        const uint64_t *rows = c ? polis_scene_copy_layer_rows(c, l, &since)
                                 : polis_env_scene_layer_rows(env, l, &since);
        bool changed = said->layer_ver[l] != prev[l], rel = rows && since == prev[l];
        snap_put(sn, &changed, sizeof changed);
        snap_put(sn, &rel, sizeof rel);
        if (rows) snap_put(sn, rows, (size_t)(sc->height + 63) / 64 * sizeof *rows);
        prev[l] = said->layer_ver[l];
    }
}

#define COPY_TAKES 70
static _Alignas(8) unsigned char copy_bufs[COPY_TAKES][512];
static size_t copy_lens[COPY_TAKES];
static snap env_snaps[COPY_TAKES], copy_snaps[COPY_TAKES];

/* the reader's thread: draws takes 0 .. *n_taken - 1 in order, until done */
typedef struct copy_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n_taken, n_drawn;
    bool done;
    polis_scene_copy *c;
    uint64_t prev[4];
    int failures;
} copy_queue;

static void *copy_drawer(void *arg)
{
    copy_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (q->n_drawn == q->n_taken && !q->done) pthread_cond_wait(&q->cv, &q->mu);
        int i = q->n_drawn, n = q->n_taken;
        pthread_mutex_unlock(&q->mu);
        if (i == n) return NULL;
        const polis_scene *sc = NULL;
        if (polis_scene_copy_draw(q->c, copy_bufs[i], copy_lens[i], &sc) != POLIS_OK)
            q->failures++;
        else
            snap_scene(&copy_snaps[i], NULL, q->c, sc, q->prev);
        pthread_mutex_lock(&q->mu);
        q->n_drawn++;
        pthread_mutex_unlock(&q->mu);
    }
}

/* The env's scene and the scene drawn from a take of the same moment, after every reset and
 * step of three episodes (one cut short): the same, also what
 * they say of themselves; drawn on this thread or, with `threaded`, on another one while the
 * env steps on. No allocation once the reader is open. */
static void copy_same(const char *mode, bool threaded)
{
    test_alloc alloc = {0};
    polis_env *env = probe_env(mode, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_scene_copyable(env));
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    if (!c) {
        polis_env_destroy(env);
        return;
    }
    CHECK(polis_scene_copy_max(c) <= sizeof copy_bufs[0]);
    CHECK_EQ_STR(polis_scene_copy_error(c), "");
    CHECK(polis_scene_copy_said(c) == NULL);
    copy_queue q = {.c = c};
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    pthread_t th;
    if (threaded) CHECK_EQ_INT(pthread_create(&th, NULL, copy_drawer, &q), 0);
    /* the env's first scene allocates its buffers: before the count (an episode of its own:
     * what a scene says is relative to the scene before, so each reads every one after) */
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_reset(env, 6), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    long calls = alloc.calls;
    uint64_t env_prev[4] = {0};
    int n = 0;
    for (int e = 0; e < 3; e++) {
        CHECK_EQ_INT(polis_env_reset(env, 7 + (uint64_t)e), POLIS_OK);
        for (int t = 0; n < COPY_TAKES; t++) {
            CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
            snap_scene(&env_snaps[n], env, NULL, sc, env_prev);
            CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[n], &copy_lens[n]), POLIS_OK);
            if (threaded) {
                pthread_mutex_lock(&q.mu);
                q.n_taken = ++n;
                pthread_cond_signal(&q.cv);
                pthread_mutex_unlock(&q.mu);
            } else {
                const polis_scene *cs = NULL;
                CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[n], copy_lens[n], &cs), POLIS_OK);
                CHECK(cs != NULL && cs != sc);
                if (cs) snap_scene(&copy_snaps[n], NULL, c, cs, q.prev);
                n++;
            }
            if (polis_env_done(env) || (e == 1 && t == 8)) break;
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
    }
    if (threaded) {
        pthread_mutex_lock(&q.mu);
        q.done = true;
        pthread_cond_signal(&q.cv);
        pthread_mutex_unlock(&q.mu);
        pthread_join(th, NULL);
        CHECK_EQ_INT(q.n_drawn, n);
        CHECK_EQ_INT(q.failures, 0);
    }
    CHECK_EQ_INT(alloc.calls, calls);
    CHECK(n > 40);
    for (int i = 0; i < n; i++) {
        CHECK(env_snaps[i].n > 0 && env_snaps[i].n == copy_snaps[i].n);
        if (env_snaps[i].n != copy_snaps[i].n ||
            memcmp(env_snaps[i].b, copy_snaps[i].b, env_snaps[i].n) != 0) {
            printf("scene %d of %s differs from its copy's\n", i, mode);
            CHECK(false);
            break;
        }
    }
    pthread_cond_destroy(&q.cv);
    pthread_mutex_destroy(&q.mu);
    polis_scene_copy_close(c);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
}

static void test_copy_same(void)
{
    copy_same("kept_walk_copy", false);
    copy_same("kept_walk_copy", true);
    /* the scenes change: layer_same at odd ticks, layer_rows at even ones, things moved */
    CHECK(memcmp(&env_snaps[1], &env_snaps[2], sizeof env_snaps[1]) != 0);

    /* a game with no scene callback: copyable, the agents alone */
    polis_env *env = test_env("{\"agents\": 2, \"max_steps\": 3}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_scene_copyable(env));
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0], &copy_lens[0]), POLIS_OK);
    const polis_scene *cs = NULL;
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[0], copy_lens[0], &cs), POLIS_OK);
    CHECK(cs && cs->n_agents == 2 && cs->agents[1].x == -1 && cs->agents[1].alive == 1);
    polis_env_destroy(env); /* frees the open reader too */
}

/* the probe's env in `mode` (*env, NULL when it failed), reset (seed 1), and a reader of its
 * copies */
static polis_scene_copy *copy_reader(const char *mode, polis_env **env)
{
    polis_scene_copy *c = NULL;
    *env = probe_env(mode, NULL);
    CHECK(*env != NULL);
    if (!*env) return NULL;
    CHECK_EQ_INT(polis_scene_copy_open(*env, &c), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(*env, 1), POLIS_OK);
    return c;
}

/* Every refusal, with its message. */
static void test_copy_errors(void)
{
    CHECK_CONTAINS(probe_error("copy_def"), "look_probe: scene scene_copy: the definition is NULL");
    CHECK_CONTAINS(probe_error("copy_null"), "look_probe: scene scene_copy: draw is NULL");
    CHECK_CONTAINS(probe_error("copy_max"),
                   "look_probe: scene scene_copy: max_take 0 or state_bytes 8 is outside 1..2^30");
    CHECK_CONTAINS(probe_error("copy_state"), "look_probe: scene scene_copy: max_take 40 or "
                                              "state_bytes 1073741825 is outside 0..2^30");
    CHECK_CONTAINS(probe_error("copy_early"),
                   "look_probe: scene scene_copy: register the scene callback (look_scene) first");
    CHECK_CONTAINS(probe_error("copy_twice"),
                   "look_probe: scene scene_copy: a copy is already registered (one per plugin)");
    const polis_scene *sc = NULL, *cs = NULL;
    polis_env *env = probe_env("copy_late", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(!polis_env_scene_copyable(env));
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env),
                 "look_probe: scene scene_copy: registration is closed once the env is created "
                 "(register in init or start) [scene, tick 0]");
    polis_env_destroy(env);

    /* not copyable; open twice; a take before a reset */
    env = probe_env("kept_walk", NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_scene_copy *c = NULL;
    CHECK(!polis_env_scene_copyable(env));
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_ERR_STATE);
    CHECK(c == NULL);
    CHECK_EQ_STR(polis_env_error(env), "scene copy: look_probe's scene callback has no copy (the "
                                       "\"scene\" host API's scene_copy)");
    polis_env_destroy(env);
    env = probe_env("kept_walk_copy", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    polis_scene_copy *c2 = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c2), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "scene copy: a reader is open (one per env)");
    size_t len = 0;
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0], &len), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "scene copy: no episode yet; call reset first");
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0] + 4, &len), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "scene copy: buf is not 8-byte aligned");
    /* a foreign take, a corrupt one, one skipped */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_env *other = NULL;
    polis_scene_copy *oc = copy_reader("kept_walk_copy", &other);
    if (!other) return;
    CHECK_EQ_INT(polis_scene_copy_take(oc, copy_bufs[1], &copy_lens[1]), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[1], copy_lens[1], &cs), POLIS_ERR_INVALID);
    char want[256];
    snprintf(want, sizeof want, "scene copy: %zu bytes that are not a take of this reader",
             copy_lens[1]);
    CHECK_EQ_STR(polis_scene_copy_error(c), want);
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0], &copy_lens[0]), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[0], copy_lens[0] - 8, &cs), POLIS_ERR_INVALID);
    snprintf(want, sizeof want, "scene copy: %zu bytes that are not a take of this reader",
             copy_lens[0] - 8);
    CHECK_EQ_STR(polis_scene_copy_error(c), want);
    uint64_t part; /* the probe's part's count, its last (after the head and terminations) */
    size_t at = copy_lens[0] - 40 - 8;
    memcpy(&part, copy_bufs[0] + at, sizeof part);
    CHECK(part == 40);
    part = 48;
    memcpy(copy_bufs[0] + at, &part, sizeof part);
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[0], copy_lens[0], &cs), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_scene_copy_error(c),
                 "scene copy: take 1's parts do not add up to its 112 bytes");
    part = 40;
    memcpy(copy_bufs[0] + at, &part, sizeof part);
    /* the head and terminations alone, its length said so too: no part */
    memcpy(copy_bufs[2], copy_bufs[0], 64);
    uint64_t short_len = 64;
    memcpy(copy_bufs[2] + 40, &short_len, sizeof short_len); /* the head's len */
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[2], 64, &cs), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_scene_copy_error(c),
                 "scene copy: take 1's parts do not add up to its 64 bytes");
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[1], &copy_lens[1]), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[1], copy_lens[1], &cs), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_scene_copy_error(c),
                 "scene copy: take 2, but the next to draw is take 1 (each once, in order)");
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[0], copy_lens[0], &cs), POLIS_OK);
    CHECK_EQ_STR(polis_scene_copy_error(c), "");
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[1], copy_lens[1], &cs), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[1], copy_lens[1], &cs), POLIS_ERR_INVALID);
    polis_scene_copy_close(c);
    polis_scene_copy_close(oc);
    polis_env_destroy(other);
    /* closed: another may open */
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    polis_scene_copy_close(c);
    polis_env_destroy(env);

    /* a draw that fails, and one whose host call fails: the reader's message, the env's
     * untouched; every later draw refused with it */
    /* a draw that fails: without a message, after a host call refused, with the host's
     * error() (the reader's message: the env's is the env thread's) */
    const char *modes[3] = {"kept_walk_copy_draw_fail", "kept_walk_copy_move_empty",
                            "kept_walk_copy_draw_error"};
    for (int m = 0; m < 3; m++) {
        c = copy_reader(modes[m], &env);
        if (!env) return;
        int fail_tick = m == 1 ? 2 : 3;
        for (int t = 0; t <= fail_tick + 1; t++) {
            CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[t], &copy_lens[t]), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        for (int t = 0; t < fail_tick; t++)
            CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[t], copy_lens[t], &cs), POLIS_OK);
        CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[fail_tick], copy_lens[fail_tick], &cs),
                     POLIS_ERR_STATE);
        CHECK(cs == NULL);
        if (m == 0)
            snprintf(want, sizeof want, "look_probe: failed (%s) [scene copy, tick 3]",
                     polis_status_str(POLIS_ERR_PLUGIN));
        else if (m == 2)
            snprintf(want, sizeof want, "look_probe: no draw at tick 3 [scene copy, tick 3]");
        else
            snprintf(want, sizeof want,
                     "look_probe: scene thing_move: slot 3 is empty (thing_put it first) [scene "
                     "copy, tick 2]");
        CHECK_EQ_STR(polis_scene_copy_error(c), want);
        CHECK_EQ_STR(polis_env_error(env), "");
        CHECK_EQ_INT(
            polis_scene_copy_draw(c, copy_bufs[fail_tick + 1], copy_lens[fail_tick + 1], &cs),
            POLIS_ERR_STATE);
        CHECK_EQ_STR(polis_scene_copy_error(c), want);
        CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK); /* the env's scenes go on */
        polis_scene_copy_close(c);
        polis_env_destroy(env);
    }

    /* a take that fails: the env's message; the next take is fresh and draws */
    c = copy_reader("kept_walk_copy_take_fail", &env);
    if (!env) return;
    for (int t = 0; t < 4; t++) {
        polis_status want_st = t == 2 ? POLIS_ERR_PLUGIN : POLIS_OK;
        CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0], &copy_lens[0]), want_st);
        if (t == 2) {
            snprintf(want, sizeof want, "look_probe: failed (%s) [scene copy, tick 2]",
                     polis_status_str(POLIS_ERR_PLUGIN));
            CHECK_EQ_STR(polis_env_error(env), want);
            CHECK_EQ_INT(copy_lens[0], 0);
        } else {
            CHECK_EQ_INT(polis_scene_copy_draw(c, copy_bufs[0], copy_lens[0], &cs), POLIS_OK);
            CHECK(cs && cs->things[0].x == (t + cs->things[0].y) % 6);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    polis_scene_copy_close(c);
    polis_env_destroy(env);
    c = copy_reader("kept_walk_copy_take_over", &env);
    if (!env) return;
    CHECK_EQ_INT(polis_scene_copy_take(c, copy_bufs[0], &copy_lens[0]), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "look_probe: scene copy: take wrote 41 bytes, more than "
                                       "max_take 40 [scene copy, tick 0]");
    polis_env_destroy(env); /* the reader left open */
}

int main(void)
{
    test_probe_scene();
    test_errors();
    test_no_looks();
    test_lua();
    test_recorder();
    test_keep_probe();
    test_layer_same();
    test_kept_lists();
    test_scene_said();
    test_kept_mix();
    test_kept_mix_paired();
    test_scene_v3();
    test_kept_walk();
    test_scene_whole();
    test_edge_put_padded();
    test_recorder_no_alloc();
    test_recorder_files();
    test_recorder_queue();
    test_recorder_thread_diff();
    test_recorder_copies();
    test_lua_keep();
    test_edge_order();
    test_kept_edge_order();
    test_copy_same();
    test_copy_errors();
    CHECK_DONE();
}
