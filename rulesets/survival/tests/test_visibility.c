/* Who sees whom in survival (docs/visibility.md): a player hidden from another is absent from
 * that player's "symbolic" view (the other-players channel), its "others" rows, its text and
 * JSON views and its pixel view, while it still walks; the observer's DO passes a player it
 * does not see by (pvp: no attack, as its mask says); a rule
 * from tick N changes nothing before N; the hidden world is the same world; runtime settings
 * through the public call; bad rules refused naming their JSON path; determinism and replay
 * --verify of a recording with rules and runtime changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core.h"
#include "testutil.h"

#define MAC POLIS_SOURCE_DIR "/rulesets/survival/survival_mac.json"
#define SRC MAC ": "
#define CH 22 /* MAC's channels; 21 is "other players" */
#define OTHERS_AT(obs, cell) ((obs)[(cell)*CH + 21])

static polis_env *make(const char *overrides)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(MAC, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

static const char *create_error(const char *overrides)
{
    static polis_error err;
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    polis_env *env = NULL;
    if (polis_env_create_file(MAC, &o, &env, &err) == POLIS_OK) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    return err.message;
}

#define TWO_PVP "\"agents\": 2, \"plugins.survival.params.pvp\": true"

static int others_marks(polis_env *env, int32_t agent)
{
    polis_obs_field f;
    const float *obs = test_obs_field(env, agent, "symbolic", &f);
    int marks = 0;
    for (int32_t cell = 0; cell < SV_VIEW_CELLS; cell++) marks += OTHERS_AT(obs, cell) != 0.0f;
    return marks;
}

static void pos(polis_env *env, int32_t agent, int32_t *row, int32_t *col)
{
    const polis_scene *s = NULL;
    CHECK(polis_env_scene_get(env, &s) == POLIS_OK);
    *row = s ? s->agents[agent].y : -1;
    *col = s ? s->agents[agent].x : -1;
}

static void count_attack(void *ud, const polis_event *ev)
{
    const int32_t *f = ev->data;
    if (f[1] == 1) ++*(int *)ud; /* victim: agent 1 */
}

/* Player 1 walks two cells right, player 0 follows one and hits it twice (pvp); players do not
 * block each other in MAC (they share the start cell). */
static const int32_t SCRIPT[][2] = {{0, SV_RIGHT}, {0, SV_RIGHT}, {SV_RIGHT, 0},
                                    {SV_DO, 0},    {SV_DO, 0},    {0, 0}};
#define SCRIPT_LEN ((int)(sizeof SCRIPT / sizeof SCRIPT[0]))

typedef struct run {
    int marks0[SCRIPT_LEN + 1], marks1[SCRIPT_LEN + 1]; /* channel-21 marks of 0 and 1 */
    int32_t row0[SCRIPT_LEN + 1], col0[SCRIPT_LEN + 1], col1[SCRIPT_LEN + 1];
    int attacks;
    bool text_a[SCRIPT_LEN + 1]; /* agent 0's text view shows an 'A' */
    bool faces_player[SCRIPT_LEN + 1];
    uint64_t hash1; /* agent 1's observations are its own business: hashed */
} run;

static uint64_t hash_obs(polis_env *env, int32_t agent, uint64_t h)
{
    const polis_io *io = polis_env_io(env);
    const uint8_t *p = io->obs + (size_t)agent * io->obs_size;
    for (size_t i = 0; i < io->obs_size; i++) h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static void note(polis_env *env, run *r, int t)
{
    r->marks0[t] = others_marks(env, 0);
    r->marks1[t] = others_marks(env, 1);
    int32_t row1;
    pos(env, 0, &r->row0[t], &r->col0[t]);
    pos(env, 1, &row1, &r->col1[t]);
    const char *text = test_render(env, 0, "text");
    const char *view = strstr(text, "View (");
    r->text_a[t] = view && strchr(view, 'A') && strchr(view, 'A') < strstr(view, "Legend");
    r->faces_player[t] = strstr(text, "toward another player") != NULL;
    r->hash1 = hash_obs(env, 1, r->hash1);
}

static void play(polis_env *env, run *r)
{
    memset(r, 0, sizeof *r);
    r->hash1 = 1469598103934665603u;
    CHECK(polis_env_subscribe(env, polis_env_event_find(env, "survival.attack"), count_attack,
                              &r->attacks) == POLIS_OK);
    CHECK(polis_env_reset(env, 5) == POLIS_OK);
    note(env, r, 0);
    for (int t = 0; t < SCRIPT_LEN; t++) {
        CHECK(test_step_ids(env, SCRIPT[t]) == POLIS_OK);
        note(env, r, t + 1);
    }
}

static void test_hidden_still_acts(void)
{
    polis_env *plain = make("{" TWO_PVP "}");
    polis_env *hid = make("{" TWO_PVP ", \"visibility\": [{\"observers\": [\"agent_0\"], "
                          "\"hidden\": [1]}]}");
    CHECK(plain && hid);
    if (!plain || !hid) return;
    run a, b;
    play(plain, &a);
    play(hid, &b);
    /* the same walks: the hidden player went on as in the plain episode; hit twice there,
     * never by the player that does not see it (its DO acted on the tile) */
    for (int t = 0; t <= SCRIPT_LEN; t++) {
        CHECK_EQ_INT(b.row0[t], a.row0[t]);
        CHECK_EQ_INT(b.col0[t], a.col0[t]);
        CHECK_EQ_INT(b.col1[t], a.col1[t]);
    }
    CHECK_EQ_INT(a.col1[2], a.col1[0] + 2);
    CHECK_EQ_INT(a.col0[3], a.col1[3] - 1);
    CHECK_EQ_INT(a.attacks, 2);
    CHECK_EQ_INT(b.attacks, 0);
    /* what player 0 sees: player 1 in the plain episode at every tick (it is always within
     * the 9 x 7 view here), never in the hidden one; player 1 still sees player 0 */
    for (int t = 0; t <= SCRIPT_LEN; t++) {
        CHECK_EQ_INT(a.marks0[t], 1);
        CHECK_EQ_INT(b.marks0[t], 0);
        CHECK(a.text_a[t] || t == 0); /* at tick 0 both stand on one cell, drawn as '@' */
        CHECK(!b.text_a[t]);
    }
    CHECK(a.faces_player[3] && !b.faces_player[3]);
    /* the pixel view (polis_pixels_draw): player 0's leaves player 1 out, player 1's is the
     * same in both; the cell right of player 0's centre is player 1's */
    enum { C = 8, W = 9 * C, H = 7 * C };
    static uint8_t fa[W * H * 3], fb[W * H * 3];
    int32_t w, h;
    const uint8_t *rgb1 = polis_pixels_agent_rgb(plain, 1);
    CHECK(polis_pixels_draw(plain, 0, C, fa, sizeof fa, &w, &h) == POLIS_OK);
    CHECK(polis_pixels_draw(hid, 0, C, fb, sizeof fb, &w, &h) == POLIS_OK);
    CHECK_EQ_INT(w, W);
    size_t at = ((size_t)(3 * C + C / 2) * W + (size_t)(5 * C + C / 2)) * 3;
    CHECK(memcmp(fa + at, rgb1, 3) == 0);
    CHECK(memcmp(fb + at, rgb1, 3) != 0);
    CHECK(polis_pixels_draw(plain, 1, C, fa, sizeof fa, &w, &h) == POLIS_OK);
    CHECK(polis_pixels_draw(hid, 1, C, fb, sizeof fb, &w, &h) == POLIS_OK);
    CHECK(memcmp(fa, fb, sizeof fa) == 0);
    for (int t = 0; t <= SCRIPT_LEN; t++) CHECK_EQ_INT(b.marks1[t], a.marks1[t]);
    CHECK(polis_env_visible(hid, 1, 0) && !polis_env_visible(hid, 0, 1));
    /* the JSON view */
    const char *js = test_render(hid, 0, "json");
    CHECK(strstr(js, "another player") == NULL && strchr(strstr(js, "\"view\""), 'A') == NULL);
    js = test_render(plain, 0, "json");
    CHECK(strstr(js, "another player") != NULL);
    polis_env_destroy(plain);
    polis_env_destroy(hid);
}

/* The masks as the observer may know them (docs/visibility.md, "Masks and legal actions"):
 * with stone in hand (a Lua rule gives it), player 0 facing player 1 may not place a stone
 * there while it sees player 1; hidden, the mask and the text view's legal list allow it as on
 * an empty tile, and the placement does nothing (player 1 still stands there). */
static void test_masks_keep_the_secret(void)
{
    const char *lua = "/tmp/polis_test_visibility_give.lua";
    FILE *f = fopen(lua, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("polis.on(\"begin\", function() polis.call(\"survival.give\", 0, \"stone\", 2) end)\n",
          f);
    fclose(f);
    char plain_ov[512], hid_ov[640];
    snprintf(plain_ov, sizeof plain_ov, "{" TWO_PVP ", \"scripts\": [{\"path\": \"%s\"}]}", lua);
    snprintf(hid_ov, sizeof hid_ov,
             "{" TWO_PVP ", \"scripts\": [{\"path\": \"%s\"}], \"visibility\": "
             "[{\"observers\": [\"agent_0\"], \"hidden\": [1]}]}",
             lua);
    polis_env *plain = make(plain_ov), *hid = make(hid_ov);
    CHECK(plain && hid);
    if (plain && hid) {
        /* the script to tick 3, where player 0 faces player 1 */
        int32_t id_place = polis_env_action_id(plain, "place_stone");
        CHECK(id_place > 0);
        for (int k = 0; k < 2; k++) {
            polis_env *env = k ? hid : plain;
            CHECK(polis_env_reset(env, 5) == POLIS_OK);
            for (int t = 0; t < 3; t++) CHECK(test_step_ids(env, SCRIPT[t]) == POLIS_OK);
            int32_t r0, c0, r1, c1;
            pos(env, 0, &r0, &c0);
            pos(env, 1, &r1, &c1);
            CHECK(r0 == r1 && c0 + 1 == c1); /* player 1 right in front of player 0 */
            const polis_io *io = polis_env_io(env);
            bool legal = io->masks[id_place] != 0; /* agent 0's row */
            const char *text = test_render(env, 0, "text");
            const char *list = strstr(text, "Legal actions:");
            CHECK(list != NULL);
            CHECK_EQ_INT(legal, k == 1);
            CHECK_EQ_INT(list && strstr(list, "place_stone") != NULL, k == 1);
            /* placing there does nothing: player 1 still stands on its tile */
            int32_t place[2] = {id_place, 0};
            CHECK(test_step_ids(env, place) == POLIS_OK);
            const char *js = test_render(env, 0, "json");
            CHECK(strstr(js, "\"facing_tile\"") != NULL);
            CHECK(strstr(js, "\"facing_tile\":\"stone\"") == NULL);
            int32_t r1b, c1b;
            pos(env, 1, &r1b, &c1b);
            CHECK(r1b == r1 && c1b == c1);
        }
        CHECK_EQ_INT(polis_env_io(plain)->illegal[0], 1); /* masked: refused by the kernel */
        CHECK_EQ_INT(polis_env_io(hid)->illegal[0], 0);   /* allowed, and without effect */
    }
    polis_env_destroy(plain);
    polis_env_destroy(hid);
    remove(lua);
}

/* A rule from tick 3: before it the observations are the plain ones. */
static void test_from_tick(void)
{
    polis_env *plain = make("{" TWO_PVP "}");
    polis_env *late = make("{" TWO_PVP ", \"visibility\": [{\"observers\": \"all\", "
                           "\"hidden\": \"all\", \"from\": 3, \"until\": 5}]}");
    CHECK(plain && late);
    if (!plain || !late) return;
    run a, b;
    play(plain, &a);
    play(late, &b);
    for (int t = 0; t <= SCRIPT_LEN; t++) {
        bool hidden = t >= 3 && t < 5;
        CHECK_EQ_INT(b.marks0[t], hidden ? 0 : a.marks0[t]);
        CHECK_EQ_INT(b.marks1[t], hidden ? 0 : a.marks1[t]);
        CHECK_EQ_INT(b.col0[t], a.col0[t]);
    }
    CHECK(b.hash1 != a.hash1);
    polis_env_destroy(plain);
    polis_env_destroy(late);
}

/* share_stats: the hidden player's "others" row is zeros. Runtime settings through the public
 * call, from the next observation on. */
static void test_others_and_runtime(void)
{
    polis_env *env = make("{\"agents\": 3, \"plugins.survival.params.observation\": "
                          "\"share_stats\"}");
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 2) == POLIS_OK);
    polis_obs_field f;
    const float *others = test_obs_field(env, 0, "others", &f);
    CHECK(others[3 * 9 + 4] == 1.0f && others[84 + 3 * 9 + 4] == 1.0f); /* 1 and 2 at the centre */
    CHECK(polis_env_visibility_set(env, 0, 2, POLIS_VISIBILITY_HIDDEN) == POLIS_OK);
    CHECK(!polis_env_visible(env, 0, 2) && polis_env_visible(env, 2, 0));
    int32_t noop[3] = {0, 0, 0};
    CHECK(test_step_ids(env, noop) == POLIS_OK);
    others = test_obs_field(env, 0, "others", &f);
    CHECK(others[3 * 9 + 4] == 1.0f);
    for (int32_t i = 0; i < 84; i++) CHECK(others[84 + i] == 0.0f);
    CHECK(polis_env_visibility_set(env, -1, -1, POLIS_VISIBILITY_RULES) == POLIS_OK);
    CHECK(test_step_ids(env, noop) == POLIS_OK);
    others = test_obs_field(env, 0, "others", &f);
    CHECK(others[84 + 3 * 9 + 4] == 1.0f);
    /* bad calls name the argument */
    CHECK(polis_env_visibility_set(env, 3, 0, 0) == POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "visibility_set: observer 3 is not an agent (0 .. 2) nor -1 (every agent)");
    CHECK(polis_env_visibility_set(env, 0, -2, 0) == POLIS_ERR_INVALID);
    CHECK(polis_env_visibility_set(env, 0, 1, 2) == POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "visibility_set: state 2 is not 0 (hidden), 1 (shown) or "
                                       "-1 (the scenario's rules)");
    polis_env_destroy(env);
}

static void test_bad_rules(void)
{
    CHECK_EQ_STR(create_error("{\"visibility\": {\"observers\": [0]}}"),
                 SRC "visibility: expected an array of rules, got "
                     "{\"observers\":[0]} (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [0], \"hidden\": [\"bob\"]}]}"),
                 SRC "visibility[0].hidden[0]: no agent named \"bob\" (agents "
                     "are agent_0 .. agent_2) (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [3], \"hidden\": [0]}]}"),
                 SRC "visibility[0].observers[0]: expected an agent index in "
                     "[0, 2], got 3 (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"hidden\": [0]}]}"),
                 SRC "visibility[0]: missing required key \"observers\" "
                     "(scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [0], \"hidden\": [1], "
                              "\"from\": 5, \"until\": 5}]}"),
                 SRC "visibility[0]: until: 5 is not after from (5): the rule "
                     "would hide nothing (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [0], \"hidden\": [1], "
                              "\"from\": -1}]}"),
                 SRC "visibility[0]: from: expected a tick (an integer >= 0), "
                     "got -1 (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [0], \"hidden\": [1], "
                              "\"form\": 2}]}"),
                 SRC "visibility[0]: unknown key \"form\" (expected observers, "
                     "hidden, from, until, doc) (scenario with overrides)");
    CHECK_EQ_STR(create_error("{\"visibility\": [{\"observers\": [], \"hidden\": [1]}]}"),
                 SRC "visibility[0].observers: expected at least one agent, got "
                     "[] (scenario with overrides)");
}

/* Same rules and seed, same episode; runtime changes recorded and replayed. */
static void test_determinism_and_replay(void)
{
    const char *ov = "{\"visibility\": [{\"observers\": [0, 2], \"hidden\": [1], \"from\": 4}]}";
    uint64_t h[2] = {0, 0};
    char path[256];
    snprintf(path, sizeof path, "%s/survival_visibility_test.jsonl", POLIS_BINARY_DIR);
    static char text[4096];
    FILE *sf = fopen(MAC, "r");
    size_t len = sf ? fread(text, 1, sizeof text - 1, sf) : 0;
    if (sf) fclose(sf);
    CHECK(len > 0);
    for (int k = 0; k < 2; k++) {
        polis_env *env = make(ov);
        CHECK(env != NULL);
        if (!env) return;
        polis_recorder *rec = NULL;
        polis_error err;
        polis_record_info info = {.scenario_text = text,
                                  .scenario_len = len,
                                  .scenario_path = MAC,
                                  .overrides = ov,
                                  .seed = 9,
                                  .keyframe_every = 16};
        if (k == 0) CHECK(polis_recorder_open(path, env, &info, &rec, &err) == POLIS_OK);
        /* a change before the first reset, one between episodes, some mid-episode */
        CHECK(polis_env_visibility_set(env, 2, 0, POLIS_VISIBILITY_HIDDEN) == POLIS_OK);
        polis_rng rng;
        polis_rng_seed(&rng, 17, 1);
        for (int ep = 0; ep < 2; ep++) {
            CHECK(polis_env_reset(env, 9 + (uint64_t)ep) == POLIS_OK);
            if (rec) CHECK(polis_recorder_begin_episode(rec, 9 + (uint64_t)ep) == POLIS_OK);
            for (int t = 0; t < 60 && !polis_env_done(env); t++) {
                if (t == 10) CHECK(polis_env_visibility_set(env, -1, 2, 0) == POLIS_OK);
                if (t == 20) {
                    CHECK(polis_env_visibility_set(env, 0, 2, 1) == POLIS_OK);
                    CHECK(polis_env_visibility_set(env, 1, -1, 0) == POLIS_OK);
                }
                test_uniform_policy(env, &rng);
                CHECK(polis_env_step(env) == POLIS_OK);
                if (rec) CHECK(polis_recorder_step(rec) == POLIS_OK);
                h[k] = h[k] * 31 + polis_env_state_hash(env);
            }
            if (rec) CHECK(polis_recorder_end_episode(rec, NULL) == POLIS_OK);
            CHECK(polis_env_visibility_set(env, -1, -1, -1) == POLIS_OK);
        }
        if (rec) CHECK(polis_recorder_close(rec) == POLIS_OK);
        polis_env_destroy(env);
    }
    CHECK(h[0] == h[1]);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/polis replay %s --verify > /dev/null", POLIS_BINARY_DIR, path);
    CHECK_EQ_INT(system(cmd), 0);
    /* the recording holds the changes: replayed without them, it differs */
    snprintf(cmd, sizeof cmd, "grep -v '^{\"t\":\"header' %s | grep -c '\"visibility\":\\[' > %s.n",
             path, path);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "sed 's/,\"visibility\":\\[\\[[-0-9,]*\\]\\(,\\[[-0-9,]*\\]\\)*\\]//' %s > %s.cut && "
             "%s/polis replay %s.cut --verify 2> /dev/null",
             path, path, POLIS_BINARY_DIR, path);
    CHECK(system(cmd) != 0);
    snprintf(cmd, sizeof cmd, "%s.n", path);
    FILE *f = fopen(cmd, "r");
    int lines = 0;
    CHECK(f && fscanf(f, "%d", &lines) == 1);
    if (f) fclose(f);
    CHECK_EQ_INT(lines, 6); /* the reset of each episode, ticks 10 and 20 of each */
    remove(cmd);
    snprintf(cmd, sizeof cmd, "%s.cut", path);
    remove(cmd);
    remove(path);
}

/* The paper's expert setups: scripted experts (polis_env_policy_act) beside a random learner,
 * hidden from it from step 0 (solo) or 50 (half); the experts see each other and the learner. */
static void test_expert_scenarios(void)
{
    static const char *const FILES[2] = {
        POLIS_SOURCE_DIR "/rulesets/survival/survival_experts_solo.json",
        POLIS_SOURCE_DIR "/rulesets/survival/survival_experts_half.json"};
    for (int k = 0; k < 2; k++) {
        polis_env *env = test_env_file(FILES[k], NULL);
        CHECK(env != NULL);
        if (!env) return;
        int32_t scripted = polis_env_policy_find(env, "scripted");
        int32_t random = polis_env_policy_find(env, "random");
        const int32_t experts[3] = {1, 2, 3}, learner[1] = {0};
        CHECK(scripted >= 3 && random >= 0);
        CHECK(polis_env_reset(env, 11) == POLIS_OK);
        int before = 0, after = 0, experts_see = 0;
        for (int t = 0; t <= 120 && !polis_env_done(env); t++) {
            int m = others_marks(env, 0);
            if (t < 50)
                before += m;
            else
                after += m;
            experts_see += others_marks(env, 1) + others_marks(env, 2);
            CHECK(polis_env_policy_act(env, scripted, experts, 3) == POLIS_OK);
            CHECK(polis_env_policy_act(env, random, learner, 1) == POLIS_OK);
            CHECK(polis_env_step(env) == POLIS_OK);
        }
        CHECK_EQ_INT(after, 0);
        CHECK(k == 0 ? before == 0 : before > 0);
        CHECK(experts_see > 0);
        polis_env_destroy(env);
    }
}

/* Hiding allocates nothing per step: rules from tick 3 and a runtime setting made before. */
static void test_no_alloc(void)
{
    test_alloc al = {0};
    polis_options o = test_options(NULL, &al);
    o.overrides = "{\"agents\": 4, \"plugins.survival.params.observation\": \"share_stats\", "
                  "\"visibility\": [{\"observers\": \"all\", \"hidden\": [0, 1], \"from\": 3}]}";
    polis_env *env = NULL;
    polis_error err;
    CHECK(polis_env_create_file(MAC, &o, &env, &err) == POLIS_OK);
    if (!env) return;
    CHECK(polis_env_visibility_set(env, 2, 3, POLIS_VISIBILITY_HIDDEN) == POLIS_OK);
    int32_t random = polis_env_policy_find(env, "random");
    CHECK(polis_env_reset(env, 1) == POLIS_OK);
    char *text = NULL;
    CHECK(polis_env_render(env, 0, "text", &text) == POLIS_OK);
    polis_free(text);
    long before = al.calls;
    for (int t = 0; t < 3000; t++) {
        if (polis_env_done(env)) polis_env_reset(env, (uint64_t)t);
        polis_env_policy_act(env, random, NULL, 0);
        CHECK(polis_env_step(env) == POLIS_OK);
    }
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
}

int main(void)
{
    test_no_alloc();
    test_expert_scenarios();
    test_hidden_still_acts();
    test_masks_keep_the_secret();
    test_from_tick();
    test_others_and_runtime();
    test_bad_rules();
    test_determinism_and_replay();
    CHECK_DONE();
}
