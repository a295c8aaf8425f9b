/* The social graph's scene drawn from copies (looks.c: sg_take on the env's thread, sg_draw on
 * the reader's, "scene" host API version 5) against the env's own scene (social_scene), on
 * social-only envs: the probe changes the graph at random every step (edges, attributes with
 * names that first appear mid-episode, values, groups created and deleted) while the agents
 * play social actions at random; a take after every reset and step, its draw now or a few
 * steps later; bad takes refused with a message; a recording drawn from copies is the one drawn
 * from the env's scenes. */
#include <unistd.h>

#include "fixture.h"
#include "polis/record.h"
#include "polis/scene.h"
#include "scene_compare.h"

/* Agents with long names (still ids), groups from the start and a schedule that rebuilds the
 * graph, the rules of an AdaSociety game, every social action family, and the probe's churn. */
static char *scenario(int agents, int max_steps, int churn, bool long_name)
{
    static const char *SOCIAL =
        "{\"communication_length\": 2, \"max_groups\": 12, \"max_edge_attrs\": 40, \"max_edges\": "
        "512,"
        " \"social\": {\"relations\": [{\"attributes\": {\"sharing\": {\"Map\": true}},"
        "  \"players\": [{\"from\": 0, \"to\": 1}, {\"from\": 1, \"to\": 0}]}],"
        "  \"groups\": [{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": "
        "[3, 1]}}}, {}]},"
        " \"social_schedule\": {\"37\": {\"relations\": [], \"groups\": [{\"players\": {\"ids\": "
        "[0, 1, 2], \"attributes\": {\"division_weight\": [1, 1, 1]}}}, {}, {}]}},"
        " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"communication\"}]],"
        " \"post_updates\": [[\"split_score_to_group\", {\"attribute\": \"division_weight\"}]],"
        " \"actions\": [{\"family\": \"communicate\"}, {\"family\": \"share_map\"},"
        "  {\"family\": \"share_player\"}, {\"family\": \"switch_group\"},"
        "  {\"family\": \"add_relation\", \"name\": \"befriend\", \"attributes\": {\"friend\": 1}},"
        "  {\"family\": \"remove_relation\", \"name\": \"unfriend\", \"attribute\": \"friend\"},"
        "  {\"family\": \"join_group\", \"name\": \"join\", \"attributes\": {\"score\": 1}},"
        "  {\"family\": \"quit_group\", \"name\": \"quit\", \"attribute\": \"score\"}]}";
    char names[2048] = "";
    size_t n = 0;
    for (int a = 0; a < agents; a++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s\"%s%d\"", a ? ", " : "",
                              long_name && a == agents - 1
                                  ? "a_name_long_enough_for_a_scene_edge_id_of_sixty_four_bytes_"
                                  : "agent_",
                              a);
    char *json = malloc(1 << 14);
    snprintf(json, 1 << 14,
             "{\"polis\": 1, \"name\": \"social_copy\", \"seed\": 1, \"max_steps\": %d,"
             " \"agents\": {\"count\": %d, \"names\": [%s]},"
             " \"plugins\": [{\"name\": \"social\", \"params\": %s},"
             " {\"name\": \"social_probe\", \"params\": {\"churn\": %d, \"churn_names\": 30}}]}",
             max_steps, agents, names, SOCIAL, churn);
    return json;
}

/* A step of the random policy; false (the env's message printed) when it failed. */
static bool step(polis_env *env, int32_t policy)
{
    polis_env_policy_act(env, policy, NULL, 0);
    polis_status st = polis_env_step(env);
    if (st) fprintf(stderr, "step: %s\n", polis_env_error(env));
    CHECK_EQ_INT(st, POLIS_OK);
    return st == POLIS_OK;
}

/* (1) Copyable when every node's id fits a scene edge's and the edges are kept; not when an
 * agent's name is too long (the env's scene still draws its edges, with edge_put). */
static void test_copyable(void)
{
    char *json = scenario(3, 20, 4, false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (env) CHECK(polis_env_scene_copyable(env));
    polis_env_destroy(env);
    json = scenario(3, 20, 4, true);
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(!polis_env_scene_copyable(env));
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    CHECK(sc && sc->n_edges > 0 && sc->n_nodes > 0);
    polis_env_destroy(env);
}

/* (2) After every reset and step of several episodes (seeds, agent counts), the scene drawn
 * from a take against the env's at the same tick: the same nodes, the same edges slot by slot,
 * and, when both read the scene before too, the same slots said changed. Some steps read only
 * the copy (its draws now and then waiting for the takes of a few steps), some only the env's
 * scene: each reader's changes are its own. Nothing is allocated after the first scene and take
 * (resets, steps, takes and draws). */
static void test_copy(int agents, int churn, uint64_t seed, int episodes, int64_t *counts)
{
    char *json = scenario(agents, 120, churn, false);
    test_alloc al = {0};
    long calls = -1;
    polis_env *env = test_env(json, NULL, &al);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_scene_copyable(env));
    int32_t random = polis_env_policy_find(env, "random");
    CHECK(random >= 0);
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    polis_scene_copy *c = NULL;
    CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
    if (!c) {
        polis_env_destroy(env);
        return;
    }
    size_t max = polis_scene_copy_max(c);
    enum { WAIT = 4 };
    uint64_t *buf[WAIT];
    size_t len[WAIT];
    for (int i = 0; i < WAIT; i++) buf[i] = malloc(max + 8);
    uint32_t rng = 91u + (uint32_t)seed * 7u;
    int64_t unequal = 0;
    for (int e = 0; e < episodes; e++) {
        if (e) CHECK_EQ_INT(polis_env_reset(env, seed + (uint64_t)e), POLIS_OK);
        bool both_before = false;
        for (int t = 0; !polis_env_done(env) && !check_failures; t++) {
            if (t && !step(env, random)) break;
            rng = rng * 1103515245u + 12345u;
            /* 0, 1: both; 2: only the copy, its draws now and then after a few takes; 3: only
             * the env's scene (no take) */
            uint32_t mode = t == 0 ? 0 : (rng >> 16) % 4;
            int waits = t > 0 && mode == 2 && (rng >> 20) % 3 == 0 ? WAIT : 1;
            const polis_scene *es = NULL, *cs = NULL;
            if (mode != 2) CHECK_EQ_INT(polis_env_scene_get(env, &es), POLIS_OK);
            int n_taken = 0;
            for (int k = 0; k < waits && mode != 3; k++) {
                if (k && !step(env, random)) /* the env steps on while takes wait */
                    break;
                CHECK_EQ_INT(polis_scene_copy_take(c, buf[k], &len[k]), POLIS_OK);
                CHECK(len[k] <= max);
                n_taken++;
                if (polis_env_done(env)) break;
            }
            for (int k = 0; k < n_taken; k++)
                CHECK_EQ_INT(polis_scene_copy_draw(c, buf[k], len[k], &cs), POLIS_OK);
            if (calls < 0) calls = al.calls; /* nothing allocated after the first of both */
            if (!es || n_taken != 1) {       /* one of the two did not see this scene */
                both_before = false;
                continue;
            }
            counts[0]++;
            counts[1] += cs->n_edges;
            counts[2] += cs->n_nodes;
            polis_scene_kept ke, kc;
            CHECK_EQ_INT(polis_env_scene_kept(env, POLIS_SCENE_EDGES, &ke), POLIS_OK);
            CHECK_EQ_INT(polis_scene_copy_kept(c, POLIS_SCENE_EDGES, &kc), POLIS_OK);
            unequal +=
                !test_scenes_equal(es, cs) || !test_kept_equal(es, &ke, cs, &kc, POLIS_SCENE_EDGES);
            if (both_before) {
                const polis_scene_said *se = polis_env_scene_said(env),
                                       *sd = polis_scene_copy_said(c);
                counts[3]++;
                counts[4] += se->n_changed[POLIS_SCENE_EDGES];
                unequal += !test_same_slots(
                    se->changed[POLIS_SCENE_EDGES], se->n_changed[POLIS_SCENE_EDGES],
                    sd->changed[POLIS_SCENE_EDGES], sd->n_changed[POLIS_SCENE_EDGES], ke.slots);
            }
            both_before = true;
        }
    }
    CHECK_EQ_STR(polis_scene_copy_error(c), "");
    CHECK_EQ_INT((int)unequal, 0);
    CHECK_EQ_INT((int)(al.calls - calls), 0);
    for (int i = 0; i < WAIT; i++) free(buf[i]);
    polis_scene_copy_close(c);
    polis_env_destroy(env);
}

/* The social part of a take: the last (the probe draws nothing), its length in the word
 * before it, the take padded to 8 bytes after it; its head's fresh flag is `fresh`. */
static size_t social_part(const uint64_t *buf, size_t len, uint32_t fresh)
{
    size_t found = 0;
    for (size_t at = 1; at < len / 8; at++) {
        uint32_t fr;
        memcpy(&fr, &buf[at], sizeof fr);
        if (fr == fresh && ((buf[at - 1] + 7) & ~(uint64_t)7) == len - 8 * at) found = at;
    }
    return found;
}

/* (3) Takes that do not add up: an edge more than sent (the take ends inside it), an edge id
 * out of range, a fresh flag that is not the scene's (both ways), an edge fewer than sent
 * (bytes left over), an attribute count over max_edge_attrs. Each draw fails with sg_draw's
 * message in the reader's error and breaks that reader (none crashes); the env plays on. */
static void test_copy_bad(void)
{
    char *json = scenario(4, 60, 6, false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    int32_t random = polis_env_policy_find(env, "random");
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    static const char *const want[] = {
        "social: scene copy: the take ends inside edge record",
        "social: scene copy: edge record 0 of",
        "social: scene copy: a partial take for a fresh scene",
        "bytes after the take's",
        "social: scene copy: edge record 1 of",
        "social: scene copy: a fresh take for a kept scene",
    };
    for (int bad = 0; bad < 6 && !check_failures; bad++) {
        polis_scene_copy *c = NULL;
        CHECK_EQ_INT(polis_scene_copy_open(env, &c), POLIS_OK);
        if (!c) break;
        size_t max = polis_scene_copy_max(c), len = 0;
        uint64_t *buf = calloc(max / 8 + 2, 8);
        const polis_scene *sc = NULL;
        uint32_t fresh = 1;
        if (bad == 5) { /* a kept take drawn first, then one said fresh */
            CHECK_EQ_INT(polis_scene_copy_take(c, buf, &len), POLIS_OK);
            CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_OK);
            step(env, random);
            fresh = 0;
        }
        CHECK_EQ_INT(polis_scene_copy_take(c, buf, &len), POLIS_OK);
        size_t at = social_part(buf, len, fresh);
        CHECK(at > 0);
        uint8_t *part = (uint8_t *)&buf[at];
        int32_t edges, v;
        memcpy(&edges, part + 4, sizeof edges);
        CHECK(bad == 5 || edges > 1);
        const size_t head = 8 + 12; /* 12 groups' bytes */
        switch (bad) {
        case 0: /* an edge more than sent */
        case 3: /* an edge fewer: the last one's bytes left over */
            v = edges + (bad ? -1 : 1);
            memcpy(part + 4, &v, sizeof v);
            break;
        case 1: /* edge 0's id beyond max_edges */
            v = 1 << 30;
            memcpy(part + head, &v, sizeof v);
            break;
        case 2: /* a fresh scene's take said partial */
            v = 0;
            memcpy(part, &v, sizeof v);
            break;
        case 4: { /* the second edge's attribute count over max_edge_attrs */
            int32_t na0;
            memcpy(&na0, part + head + 12, sizeof na0);
            v = 41;
            memcpy(part + head + 16 + 8 * (size_t)na0 + 12, &v, sizeof v);
            break;
        }
        default: /* a kept take said fresh */
            v = 1;
            memcpy(part, &v, sizeof v);
            break;
        }
        polis_status st = polis_scene_copy_draw(c, buf, len, &sc);
        CHECK(st == POLIS_ERR_STATE || st == POLIS_ERR_INVALID);
        CHECK_CONTAINS(polis_scene_copy_error(c), want[bad]);
        CHECK_EQ_INT(polis_scene_copy_draw(c, buf, len, &sc), POLIS_ERR_STATE); /* and stays */
        free(buf);
        polis_scene_copy_close(c);
        step(env, random);
    }
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
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
    int32_t random = env ? polis_env_policy_find(env, "random") : -1;
    for (int ep = 0; ep < 4 && rec; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep + 1), POLIS_OK);
        CHECK_EQ_INT(polis_recorder_begin_episode(rec, (uint64_t)ep + 1), POLIS_OK);
        while (!polis_env_done(env)) {
            polis_env_policy_act(env, random, NULL, 0);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            CHECK_EQ_INT(polis_recorder_step(rec), POLIS_OK);
        }
        CHECK_EQ_INT(polis_recorder_end_episode(rec, NULL), POLIS_OK);
    }
    CHECK_EQ_INT(polis_recorder_close(rec), POLIS_OK);
    polis_env_destroy(env);
    unsetenv("POLIS_RECORD_COPIES");
}

/* (4) A recording drawn from copies (the writer thread) is the one from the env's scenes. */
static void test_recording_copies(void)
{
    char *json = scenario(5, 70, 8, false);
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/social_copies_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    snprintf(b, sizeof b, "%s/social_env_%d.jsonl", POLIS_BINARY_DIR, (int)getpid());
    record(json, a, false);
    record(json, b, true);
    size_t la = 0, lb = 0;
    char *ta = test_slurp(a, &la), *tb = test_slurp(b, &lb);
    CHECK(ta && tb && la > 10000);
    CHECK(la == lb && ta && tb && !memcmp(ta, tb, la));
    CHECK(ta && strstr(ta, "\",\"c2\",") != NULL); /* the probe's attributes were recorded */
    free(ta);
    free(tb);
    remove(a);
    remove(b);
    free(json);
}

int main(void)
{
    test_copyable();
    /* scenes compared, edges and nodes in them, scenes said after one said, slots changed */
    int64_t counts[5] = {0};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        test_copy(4, 6, seed, 5, counts);
        test_copy(7, 12, seed + 10, 4, counts);
    }
    test_copy(3, 0, 40, 4, counts); /* the agents' actions only */
    printf("social scene copies: %lld scenes compared, %lld edges, %lld nodes, %lld said "
           "(%lld kept changes)\n",
           (long long)counts[0], (long long)counts[1], (long long)counts[2], (long long)counts[3],
           (long long)counts[4]);
    CHECK(counts[0] > 1000);
    CHECK(counts[1] > 20000);
    CHECK(counts[2] > 2000);
    CHECK(counts[3] > 500);
    CHECK(counts[4] > 2000);
    test_copy_bad();
    test_recording_copies();
    CHECK_DONE();
}
