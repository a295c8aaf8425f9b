/* The society scene drawn from copies (looks.c's soc_take and soc_draw, "scene" host API
 * version 5) against the env's own (soc_scene) after every reset and step, on the Exploration
 * scenario and on small maps whose piles are gathered and whose blocks and stations a Lua
 * script moves; takes refused when they do not add up; and a recording that draws from copies
 * equal to one that reads the env's scenes. */
#include "fixture.h"
#include "polis/record.h"
#include "polis/scene.h"
#include "scene_compare.h"

#define EXPLORATION POLIS_SOURCE_DIR "/rulesets/exploration/exploration_physical.json"

/* a small map: three agents gathering piles that stations turn into tools, the terrain moved
 * by lua/shifts.lua */
static const char *SMALL_PARAMS =
    "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 7, \"y\": 6}},"
    " \"random\": {\"blocks\": 4,"
    "   \"resources\": [{\"name\": \"wood\", \"num\": 3, \"repeat\": 6},"
    "                   {\"name\": \"stone\", \"num\": 2, \"repeat\": 6}],"
    "   \"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 4}],"
    "   \"players\": [{\"job\": \"explorer\"}]}}";

static polis_env *open_small(void)
{
    char *json = soc_scenario(3, 120, SMALL_PARAMS, ", \"scripts\": [\"lua/shifts.lua\"]");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    return env;
}

typedef struct copy_counts {
    int64_t compared, said, changes, things, edges, layers_redrawn, unequal;
} copy_counts;

/* After every reset and step of `episodes` episodes (seeds seed, seed + 1, ...; random legal
 * actions), the env's scene and the one drawn from a take of the same moment compared: some
 * steps read both, some only the copy (its draws now and then waiting for the takes of a few
 * steps), some only the env's scene. */
static void compare_copies(polis_env *env, uint64_t seed, int episodes, copy_counts *n)
{
    CHECK(polis_env_scene_copyable(env));
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    if (!c) return;
    size_t max = polis_scene_copy_max(c);
    enum { WAIT = 3 };
    uint64_t *buf[WAIT];
    size_t len[WAIT];
    for (int i = 0; i < WAIT; i++) buf[i] = malloc(max + 8);
    polis_rng pol;
    polis_rng_seed(&pol, seed, 7);
    const polis_scene *cs = NULL;
    for (int e = 0; e < episodes; e++) {
        if (e) CHECK_EQ_INT(polis_env_reset(env, seed + (uint64_t)e), POLIS_OK);
        uint32_t rng = 77u + (uint32_t)(seed * 31 + (uint64_t)e * 13);
        bool both_before = false;
        for (int t = 0; !polis_env_done(env) || t == 0; t++) {
            if (t) {
                test_uniform_policy(env, &pol);
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            }
            rng = rng * 1103515245u + 12345u;
            /* 0, 1: both; 2: only the copy, its draws now and then after a few takes; 3: only
             * the env's scene (no take) */
            uint32_t mode = t == 0 ? 0 : (rng >> 16) % 4;
            int waits = t > 0 && mode == 2 && (rng >> 20) % 3 == 0 ? WAIT : 1;
            const polis_scene *es = NULL;
            uint64_t ver_before[2] = {polis_env_scene_layer_version(env, 0),
                                      polis_env_scene_layer_version(env, 1)};
            if (mode != 2) CHECK_EQ_INT(polis_env_scene_get(env, &es), POLIS_OK);
            int n_taken = 0;
            for (int k = 0; k < waits && mode != 3; k++) {
                if (k) { /* the env steps on while earlier takes wait for their draws */
                    test_uniform_policy(env, &pol);
                    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
                }
                CHECK_EQ_INT(polis_scene_copy_take(c, buf[k], &len[k]), POLIS_OK);
                CHECK(len[k] <= max);
                n_taken++;
                if (polis_env_done(env)) break;
            }
            const polis_scene_said *before = polis_scene_copy_said(c);
            uint64_t cver_before[2] = {before ? before->layer_ver[0] : 0,
                                       before ? before->layer_ver[1] : 0};
            for (int k = 0; k < n_taken; k++)
                CHECK_EQ_INT(polis_scene_copy_draw(c, buf[k], len[k], &cs), POLIS_OK);
            if (!es || n_taken != 1) { /* one of the two did not see this scene */
                both_before = false;
                continue;
            }
            n->compared++;
            n->things += cs->n_things;
            n->edges += cs->n_edges;
            polis_scene_kept ke, kc;
            CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &ke), POLIS_OK);
            CHECK_EQ_INT(polis_scene_copy_kept(c, POLIS_SCENE_THINGS, &kc), POLIS_OK);
            n->unequal += !test_scenes_equal(es, cs) ||
                          !test_kept_equal(es, &ke, cs, &kc, POLIS_SCENE_THINGS);
            if (both_before) { /* what each scene says of itself since the one before */
                const polis_scene_said *se = polis_env_scene_said(env),
                                       *sc = polis_scene_copy_said(c);
                n->said++;
                n->unequal += !test_same_slots(
                    se->changed[POLIS_SCENE_THINGS], se->n_changed[POLIS_SCENE_THINGS],
                    sc->changed[POLIS_SCENE_THINGS], sc->n_changed[POLIS_SCENE_THINGS], ke.slots);
                n->changes += se->n_changed[POLIS_SCENE_THINGS];
                for (int l = 0; l < 2; l++) {
                    bool re = se->layer_ver[l] != ver_before[l];
                    n->unequal += re != (sc->layer_ver[l] != cver_before[l]);
                    n->layers_redrawn += re;
                    uint64_t since_e = 0, since_c = 0;
                    n->unequal += !polis_env_scene_layer_rows(env, l, &since_e) !=
                                  !polis_scene_copy_layer_rows(c, l, &since_c);
                }
            }
            both_before = true;
        }
    }
    CHECK_EQ_STR(polis_scene_copy_error(c), "");
    for (int i = 0; i < WAIT; i++) free(buf[i]);
    polis_scene_copy_close(c);
}

static void test_copy(void)
{
    copy_counts n = {0};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        polis_env *env = test_env_file(EXPLORATION, NULL);
        CHECK(env != NULL);
        if (env) compare_copies(env, seed * 100, 2, &n);
        polis_env_destroy(env);
    }
    copy_counts small = {0};
    for (uint64_t seed = 1; seed <= 4; seed++) {
        polis_env *env = open_small();
        CHECK(env != NULL);
        if (env) compare_copies(env, seed, 6, &small);
        polis_env_destroy(env);
    }
    printf("scene copies: exploration %lld compared, %lld things, %lld said, %lld changes; "
           "small %lld compared, %lld said, %lld changes, %lld layers redrawn\n",
           (long long)n.compared, (long long)n.things, (long long)n.said, (long long)n.changes,
           (long long)small.compared, (long long)small.said, (long long)small.changes,
           (long long)small.layers_redrawn);
    CHECK_EQ_INT((int)n.unequal, 0);
    CHECK_EQ_INT((int)small.unequal, 0);
    CHECK(n.compared > 1000);
    CHECK(n.said > 500);
    CHECK(n.changes > 100); /* piles were gathered */
    CHECK(small.compared > 500);
    CHECK(small.changes > 50);
    CHECK(small.layers_redrawn > 40); /* lua/shifts.lua moved blocks and stations */
}

/* The shipped games with the social plugin too (Exploration, Contract, Negotiation, a Social
 * Structure game): every scene callback has a copy, so a recording draws them on its writer
 * thread; the drawn scenes equal the env's, the social graph's groups and edges included. */
static void test_copy_social(void)
{
    static const char *const games[] = {
        POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json",
        POLIS_SOURCE_DIR "/rulesets/contract/contract.json",
        POLIS_SOURCE_DIR "/rulesets/negotiation/negotiation.json",
        POLIS_SOURCE_DIR "/rulesets/social_structure/dynamic.json",
    };
    for (size_t g = 0; g < sizeof games / sizeof *games; g++) {
        copy_counts n = {0};
        polis_env *env = test_env_file(games[g], NULL);
        CHECK(env != NULL);
        if (!env) continue;
        compare_copies(env, 11 + g, 3, &n);
        polis_env_destroy(env);
        printf("scene copies: %s %lld compared, %lld things, %lld edges, %lld changes\n",
               strrchr(games[g], '/') + 1, (long long)n.compared, (long long)n.things,
               (long long)n.edges, (long long)n.changes);
        CHECK_EQ_INT((int)n.unequal, 0);
        CHECK(n.compared > 100);
        CHECK(n.edges > 0); /* the graph was drawn */
    }
}

/* The society part of a fresh take (in words): its head is 7 (fresh, blocks, recipes) and the
 * number of cells, 42 on the small map. The kernel's head holds the take's length (byte 40)
 * and whether it is fresh (byte 48); society's part (the last) follows its length (8 bytes). */
static size_t find_head(const uint32_t *w, size_t words)
{
    for (size_t i = 14; i + 1 < words; i++)
        if (w[i] == 7 && w[i + 1] == 42) return i;
    return words;
}

/* Takes that do not add up, with flags a fresh take cannot have, naming a cell off the map, or
 * fresh when the scene is not (or the other way round): soc_draw refuses them with its message
 * (in the reader's, never the env's), the reader keeps it and refuses every later draw. */
static void test_copy_bad(void)
{
    polis_env *env = open_small();
    CHECK(env != NULL);
    if (!env) return;
    static const char *const want[] = {
        "its head says", /* a take of N bytes, its head says N + 8 */
        "society: scene copy: a take's flags 0x5 and 42 pile records do not agree",
        "society: scene copy: a take's flags 0x8 and 42 pile records do not agree",
        "society: scene copy: a take's pile record 0 names cell 42 of 42",
        "society: scene copy: a fresh take for a scene that is not fresh",
        "society: scene copy: a later take for a scene that is fresh",
    };
    polis_rng pol;
    polis_rng_seed(&pol, 5, 1);
    for (int bad = 0; bad < 6; bad++) {
        CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
        polis_scene_copy *c = NULL;
        CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
        if (!c) break;
        size_t max = polis_scene_copy_max(c), len = 0;
        uint64_t *buf = calloc(max / 8 + 1, 8);
        CHECK_EQ_INT(polis_scene_copy_take(c, buf, &len), POLIS_OK);
        uint32_t *w = (uint32_t *)buf;
        size_t at = find_head(w, len / 4);
        CHECK(at < len / 4);
        if (at >= len / 4) at = 14;
        const polis_scene *sc = NULL;
        if (bad == 0) { /* the last 8 bytes cut off: the part's length and the take's */
            uint64_t part;
            memcpy(&part, w + at - 2, sizeof part);
            part -= 8;
            len -= 8;
            memcpy(w + at - 2, &part, sizeof part);
            memcpy((char *)buf + 40, &(uint64_t){len}, sizeof(uint64_t));
        } else if (bad == 1) {
            w[at] = 5; /* fresh and the recipes, without the blocks */
        } else if (bad == 2) {
            w[at] = 8; /* no such flag */
        } else if (bad == 4) {
            /* the scene not fresh, society's part still fresh */
            memcpy((char *)buf + 48, &(uint32_t){0}, sizeof(uint32_t));
        } else { /* a later take, with a pile record (3) or one the kernel says fresh (5) */
            CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_OK);
            for (int i = 0; i < 400; i++) {
                test_uniform_policy(env, &pol);
                CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
                CHECK_EQ_INT(polis_scene_copy_take(c, buf, &len), POLIS_OK);
                if (w[at + 1] > 0 || polis_env_done(env)) break; /* records */
                CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_OK);
            }
            CHECK(w[at] <= 6 && !(w[at] & 1) && w[at + 1] > 0);
            int32_t R = sc ? sc->n_stats : 1; /* the resources are the only stats */
            uint64_t part;
            memcpy(&part, w + at - 2, sizeof part);
            if (bad == 3) /* the first record's cell: the records (cell, R amounts) end it */
                w[at + part / 4 - w[at + 1] * (size_t)(1 + R)] = 42;
            else /* the kernel says fresh */
                memcpy((char *)buf + 48, &(uint32_t){1}, sizeof(uint32_t));
        }
        CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_ERR_STATE);
        CHECK_CONTAINS(polis_scene_copy_error(c), want[bad]);
        CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_ERR_STATE); /* it stays */
        CHECK_EQ_STR(polis_env_error(env), "");
        free(buf);
        polis_scene_copy_close(c);
    }
    polis_env_destroy(env);
}

int main(void)
{
    test_copy();
    test_copy_social();
    test_copy_bad();
    CHECK_DONE();
}
