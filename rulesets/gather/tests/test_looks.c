/* gather's scene (looks.c) through the public API: the coin layer kept between scenes and
 * redrawn only in the rows whose coins changed must show what a scene drawn from nothing
 * shows, whether the scene is read every tick or only now and then, on a map taller than 64
 * rows (more than one word of row bits); the floor is said the same after an episode's first
 * scene, and the rows a scene names are exactly those that changed. The scene drawn from
 * copies (take_coins, draw_coins) is the env's, and so is a recording made from them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "polis/record.h"
#include "polis/scene.h"
#include "testutil.h"

/* 70 x 130 cells (three words of row bits), 300 coins that respawn, 8 agents, short episodes */
static const char *const TALL =
    "{\"polis\": 1, \"name\": \"tall\", \"seed\": 3, \"max_steps\": 40, \"agents\": 8,"
    " \"grid\": {\"width\": 70, \"height\": 130},"
    " \"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 300, \"view\": 3}}]}";

/* 12 x 12, coins that do not respawn: an episode can end with every coin collected */
static const char *const SMALL =
    "{\"polis\": 1, \"name\": \"small\", \"seed\": 5, \"max_steps\": 60, \"agents\": 4,"
    " \"grid\": {\"width\": 12, \"height\": 12},"
    " \"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 12, \"respawn\": false}}]}";

/* 6 x 6, three coins that do not respawn, long episodes: they end with every coin collected
 * (the agents terminated) */
static const char *const TINY =
    "{\"polis\": 1, \"name\": \"tiny\", \"seed\": 2, \"max_steps\": 1000, \"agents\": 4,"
    " \"grid\": {\"width\": 6, \"height\": 6},"
    " \"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 3, \"respawn\": false}}]}";

static int32_t layer_of(polis_env *env, const char *name)
{
    for (int32_t l = 0; l < polis_env_scene_n_layers(env); l++)
        if (!strcmp(polis_env_scene_layer_name(env, l), name)) return l;
    return -1;
}

static bool same_scene(const polis_scene *a, const polis_scene *b)
{
    size_t n = (size_t)a->n_layers * (size_t)a->width * (size_t)a->height;
    if (a->n_layers != b->n_layers || a->width != b->width || a->height != b->height) return false;
    if (memcmp(a->tiles, b->tiles, n * sizeof *a->tiles) != 0) return false;
    if (memcmp(a->agents, b->agents, sizeof *a->agents * (size_t)a->n_agents) != 0) return false;
    return !memcmp(a->stats, b->stats, sizeof *a->stats * (size_t)a->n_agents * (size_t)a->n_stats);
}

/* Three envs of one scenario stepped alike: `every` reads its scene each tick, `some` every
 * `gap`-th tick, and at those ticks a third env, made afresh and replayed to the same tick,
 * draws its first scene from nothing — all three must agree. */
static void test_rows_against_fresh(const char *json, int gap, int ticks)
{
    polis_env *every = test_env(json, NULL, NULL), *some = test_env(json, NULL, NULL);
    CHECK(every && some);
    if (!every || !some) goto out;
    int32_t coins = layer_of(every, "coins"), ground = layer_of(every, "ground");
    CHECK(coins >= 0 && ground >= 0);
    polis_rng r1, r2;
    polis_rng_seed(&r1, 11, 1);
    polis_rng_seed(&r2, 11, 1);
    CHECK_EQ_INT(polis_env_reset(every, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(some, 1), POLIS_OK);
    int32_t *trail = malloc(sizeof(int32_t) * 8 * (size_t)ticks); /* every action taken */
    const polis_io *io = polis_env_io(every);
    int checked = 0, rows_said = 0, resets = 0;
    uint64_t ground_v = 0;
    int32_t *prev = NULL; /* every's coin layer at its previous scene */
    bool fresh_next = false;
    for (int t = 1; t <= ticks && trail; t++) {
        bool over = false;
        for (int32_t a = 0; a < io->n_agents; a++)
            over |= io->terminations[a] || io->truncations[a];
        if (over) { /* a new episode: its seed from the tick, in all three */
            CHECK_EQ_INT(polis_env_reset(every, (uint64_t)t), POLIS_OK);
            CHECK_EQ_INT(polis_env_reset(some, (uint64_t)t), POLIS_OK);
            trail[(size_t)(t - 1) * 8] = -1 - t;
            ground_v = 0;
            fresh_next = true; /* its coins all drawn anew */
            resets++;
        } else {
            test_uniform_policy(every, &r1);
            test_uniform_policy(some, &r2);
            memcpy(trail + (size_t)(t - 1) * 8, io->actions,
                   sizeof(int32_t) * (size_t)io->n_agents);
            CHECK_EQ_INT(polis_env_step(every), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(some), POLIS_OK);
        }
        const polis_scene *se, *ss, *sf;
        uint64_t coins_before = polis_env_scene_layer_version(every, coins);
        CHECK_EQ_INT(polis_env_scene_get(every, &se), POLIS_OK);
        /* the floor: the same from the episode's first scene on */
        uint64_t gv = polis_env_scene_layer_version(every, ground);
        if (ground_v) CHECK(gv == ground_v);
        ground_v = gv;
        /* the rows said cover every row whose coins changed; none changed: the layer is said
         * the same (its version kept) */
        uint64_t since = 0;
        const uint64_t *rows = polis_env_scene_layer_rows(every, coins, &since);
        size_t plane = (size_t)se->width * (size_t)se->height;
        const int32_t *now = se->tiles + (size_t)coins * plane;
        if (prev && !fresh_next) {
            bool changed = false;
            for (size_t i = 0; i < plane; i++) {
                if (now[i] == prev[i]) continue;
                size_t y = i / (size_t)se->width;
                changed = true;
                CHECK(rows && (rows[y / 64] >> (y % 64) & 1));
                if (!rows) break;
            }
            if (!changed) CHECK(polis_env_scene_layer_version(every, coins) == coins_before);
            if (rows) {
                CHECK(since == coins_before);
                rows_said++;
            }
        }
        fresh_next = false;
        if (!prev) prev = malloc(sizeof(int32_t) * plane);
        if (prev) memcpy(prev, now, sizeof(int32_t) * plane);
        if (t % gap) continue;
        CHECK_EQ_INT(polis_env_scene_get(some, &ss), POLIS_OK);
        CHECK(same_scene(se, ss));
        polis_env *fresh = test_env(json, NULL, NULL);
        CHECK(fresh != NULL);
        if (!fresh) break;
        /* replays the trail: a reset where one was, else the actions */
        const polis_io *fio = polis_env_io(fresh);
        CHECK_EQ_INT(polis_env_reset(fresh, 1), POLIS_OK);
        for (int u = 1; u <= t; u++) {
            const int32_t *acts = trail + (size_t)(u - 1) * 8;
            if (acts[0] < 0 && acts[0] == -1 - u) {
                CHECK_EQ_INT(polis_env_reset(fresh, (uint64_t)u), POLIS_OK);
            } else {
                memcpy(fio->actions, acts, sizeof(int32_t) * (size_t)fio->n_agents);
                CHECK_EQ_INT(polis_env_step(fresh), POLIS_OK);
            }
        }
        CHECK_EQ_INT(polis_env_scene_get(fresh, &sf), POLIS_OK);
        CHECK(same_scene(se, sf));
        polis_env_destroy(fresh);
        checked++;
    }
    CHECK(checked >= 3);
    CHECK(rows_said > 0); /* coins were collected (and respawned) in some scene */
    CHECK(resets > 0);    /* and an episode ended: its coins all drawn anew */
    free(trail);
    free(prev);
out:
    polis_env_destroy(every);
    polis_env_destroy(some);
}

/* The agents gather writes whole (scene_whole: the kernel clears none of them first): each
 * scene's agent at its place, facing nothing, alive until terminated, with its coins — also in
 * the scene read once the episode is over, and in the next episode's first scene. */
static void test_agents_whole(const char *json, bool ended_wanted)
{
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_rng rng;
    polis_rng_seed(&rng, 5, 1);
    const polis_io *io = polis_env_io(env);
    int ended = 0;
    for (int ep = 0; ep < 3; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep + 1), POLIS_OK);
        for (bool over = false; !over;) {
            const polis_scene *sc;
            CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
            for (int32_t a = 0; a < sc->n_agents; a++) {
                const polis_scene_agent *ag = &sc->agents[a];
                CHECK(ag->x >= 0 && ag->x < sc->width && ag->y >= 0 && ag->y < sc->height);
                CHECK_EQ_INT(ag->facing, POLIS_FACING_NONE);
                CHECK_EQ_INT(ag->alive, !io->terminations[a]);
                CHECK(sc->stats[(size_t)a * (size_t)sc->n_stats] >= 0);
            }
            for (int32_t a = 0; a < io->n_agents; a++)
                over |= io->terminations[a] || io->truncations[a];
            if (over) {
                for (int32_t a = 0; a < io->n_agents; a++) ended += io->terminations[a] != 0;
                break;
            }
            test_uniform_policy(env, &rng);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
    }
    if (ended_wanted) CHECK(ended > 0); /* scenes with agents terminated were read */
    polis_env_destroy(env);
}

/* The same rows named, or none, by the env's scene and the copy's, of each layer. */
static bool same_said(polis_env *env, polis_scene_copy *c, int32_t n_layers, int32_t n_words,
                      const uint64_t *ver_env, const uint64_t *ver_copy)
{
    const polis_scene_said *se = polis_env_scene_said(env), *sc = polis_scene_copy_said(c);
    bool same = true;
    for (int32_t l = 0; l < n_layers; l++) {
        same &= (se->layer_ver[l] != ver_env[l]) == (sc->layer_ver[l] != ver_copy[l]);
        uint64_t since_e = 0, since_c = 0;
        const uint64_t *re = polis_env_scene_layer_rows(env, l, &since_e);
        const uint64_t *rc = polis_scene_copy_layer_rows(c, l, &since_c);
        same &= !re == !rc && (!re || !memcmp(re, rc, sizeof *re * (size_t)n_words));
    }
    return same;
}

/* Random steps and resets: after each, the env's scene and the scene drawn from a take are the
 * same (tiles, agents, stats) and say the same of their layers; at some ticks only one of the
 * two is read (the marks of one do not take the other's changes). */
static void test_copy(const char *json, uint64_t seed, int ticks)
{
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_scene_copyable(env));
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    size_t max = c ? polis_scene_copy_max(c) : 0, len = 0;
    uint64_t *buf = malloc(max + 8);
    const polis_io *io = polis_env_io(env);
    int32_t n_layers = polis_env_scene_n_layers(env), coins = layer_of(env, "coins");
    int32_t n_words = 0;
    uint64_t ver_env[8] = {0}, ver_copy[8] = {0};
    CHECK(n_layers <= 8 && coins >= 0);
    polis_rng rng;
    polis_rng_seed(&rng, seed, 2);
    int compared = 0, said = 0, rows_said = 0, resets = 0, unequal = 0;
    bool both_before = false;
    for (int t = 0; t < ticks && c && buf && n_layers <= 8; t++) {
        if (t) {
            bool over = false;
            for (int32_t a = 0; a < io->n_agents; a++)
                over |= io->terminations[a] || io->truncations[a];
            if (over || polis_rng_below(&rng, 60) == 0) {
                CHECK_EQ_INT(polis_env_reset(env, seed + (uint64_t)t), POLIS_OK);
                resets++;
            } else {
                test_uniform_policy(env, &rng);
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            }
        }
        /* 0, 1: both; 2: only the copy; 3: only the env's scene */
        uint32_t mode = t == 0 ? 0 : polis_rng_below(&rng, 4);
        for (int32_t l = 0; l < n_layers; l++) ver_env[l] = polis_env_scene_layer_version(env, l);
        const polis_scene_said *before = polis_scene_copy_said(c);
        for (int32_t l = 0; l < n_layers && before; l++) ver_copy[l] = before->layer_ver[l];
        const polis_scene *es = NULL, *cs = NULL;
        if (mode != 2) CHECK_EQ_INT(polis_env_scene_get(env, &es), POLIS_OK);
        if (mode != 3) {
            CHECK_EQ_INT(polis_scene_copy_take(c, buf, &len), POLIS_OK);
            CHECK(len <= max);
            CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &cs), POLIS_OK);
        }
        if (!es || !cs) {
            both_before = false;
            continue;
        }
        n_words = (es->height + 63) / 64;
        compared++;
        unequal += !same_scene(es, cs);
        if (both_before) {
            said++;
            unequal += !same_said(env, c, n_layers, n_words, ver_env, ver_copy);
            uint64_t since = 0;
            rows_said += polis_env_scene_layer_rows(env, coins, &since) != NULL;
        }
        both_before = true;
    }
    CHECK_EQ_STR(c ? polis_scene_copy_error(c) : "", "");
    printf("gather copies (seed %llu): %d scenes compared, %d said (%d with rows), %d resets\n",
           (unsigned long long)seed, compared, said, rows_said, resets);
    CHECK_EQ_INT(unequal, 0);
    CHECK(compared > ticks / 4 && said > ticks / 8 && rows_said > 0 && resets > 0);
    free(buf);
    polis_scene_copy_close(c);
    polis_env_destroy(env);
}

/* A take whose gather part names a row past the grid's, or one row more than it holds: the
 * draw refuses it (POLIS_ERR_INVALID, no message of its own) and the reader keeps refusing. */
static void test_copy_bad(void)
{
    polis_env *env = test_env(SMALL, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    if (!c) {
        polis_env_destroy(env);
        return;
    }
    for (int bad = 0; bad < 2; bad++) {
        size_t max = polis_scene_copy_max(c), len = 0;
        uint64_t *buf = calloc(max / 8 + 1, 8);
        CHECK(polis_scene_copy_take(c, buf, &len) == POLIS_OK);
        /* a fresh take (the reader's first, and the one after a failed draw): gather's part
         * starts with every row of the 12, the word 0xfff */
        size_t at = 0;
        while (at < len / 8 && buf[at] != UINT64_C(0xfff)) at++;
        CHECK(at < len / 8);
        if (at < len / 8) buf[at] = bad ? UINT64_C(0x7ff) : UINT64_C(0x1fff);
        const polis_scene *sc = NULL;
        CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc),
                     POLIS_ERR_STATE); /* gather said invalid: */
        CHECK_CONTAINS(polis_scene_copy_error(c), "gather: failed (invalid argument)");
        CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_ERR_STATE); /* and stays */
        free(buf);
        polis_scene_copy_close(c);
        c = NULL;
        CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
        if (!c) break;
    }
    polis_scene_copy_close(c);
    polis_env_destroy(env);
}

/* Records episodes of json into path (copies or, `env_scenes`, the env's scenes). */
static void record(const char *json, const char *path, bool env_scenes)
{
    if (env_scenes) setenv("POLIS_RECORD_COPIES", "0", 1);
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    polis_record_info info = {0};
    info.scenario_text = json;
    info.scenario_len = strlen(json);
    info.seed = 1;
    info.keyframe_every = 25; /* keyframes drawn from the scene the writer drew last */
    polis_recorder *rec = NULL;
    polis_error err;
    if (env) CHECK_EQ_INT(polis_recorder_open(path, env, &info, &rec, &err), POLIS_OK);
    polis_rng rng;
    polis_rng_seed(&rng, 9, 1);
    const polis_io *io = env ? polis_env_io(env) : NULL;
    for (int ep = 0; ep < 4 && rec; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep + 1), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_begin_episode(rec, (uint64_t)ep + 1), POLIS_OK);
        for (bool over = false; !over;) {
            test_uniform_policy(env, &rng);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
            for (int32_t a = 0; a < io->n_agents; a++)
                over |= io->terminations[a] || io->truncations[a];
        }
        CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
    }
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
    unsetenv("POLIS_RECORD_COPIES");
}

/* A recording drawn from copies (the writer thread) is the one from the env's scenes. */
static void test_recording_copies(const char *json)
{
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/gather_copies_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    snprintf(b, sizeof b, "%s/gather_env_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    record(json, a, false);
    record(json, b, true);
    size_t la = 0, lb = 0;
    char *ta = test_slurp(a, &la), *tb = test_slurp(b, &lb);
    CHECK(ta && tb && la > 1000);
    CHECK(la == lb && ta && tb && !memcmp(ta, tb, la));
    free(ta);
    free(tb);
    remove(a);
    remove(b);
}

int main(void)
{
    test_agents_whole(TINY, true);
    test_agents_whole(SMALL, false);
    test_rows_against_fresh(TALL, 7, 90);
    test_rows_against_fresh(SMALL, 3, 130);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        test_copy(TALL, seed, 300);
        test_copy(SMALL, seed + 10, 300);
        test_copy(TINY, seed + 20, 300);
    }
    test_copy_bad();
    test_recording_copies(TALL);
    test_recording_copies(TINY);
    CHECK_DONE();
}
