/* gather's scene (looks.c) through the public API: the coin layer kept between scenes and
 * redrawn only in the rows whose coins changed must show what a scene drawn from nothing
 * shows, whether the scene is read every tick or only now and then, on a map taller than 64
 * rows (more than one word of row bits); the floor is said the same after an episode's first
 * scene, and the rows a scene names are exactly those that changed. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

int main(void)
{
    test_agents_whole(TINY, true);
    test_agents_whole(SMALL, false);
    test_rows_against_fresh(TALL, 7, 90);
    test_rows_against_fresh(SMALL, 3, 130);
    CHECK_DONE();
}
