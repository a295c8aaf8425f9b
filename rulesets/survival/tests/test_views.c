/* The survival views and policies through the kernel: the text view (grid, legend, vitals,
 * legal actions), the JSON view (valid, checked by the kernel's parser), the action parser
 * (names, phrases, verbs, JSON, malformed commands), and the scripted and uniform policies
 * (legal actions, reproducible from the seed, and better than chance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core.h"
#include "testutil.h"

#define CLASSIC POLIS_SOURCE_DIR "/rulesets/survival/survival_classic.json"
#define MAC POLIS_SOURCE_DIR "/rulesets/survival/survival_mac.json"

static void test_text(void)
{
    polis_env *env = test_env_file(MAC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 4) == POLIS_OK);
    char *out = NULL;
    CHECK(polis_env_render(env, 1, "text", &out) == POLIS_OK);
    CHECK_CONTAINS(out, "You are agent_1 (player 1 of 3), awake, at row 32, column 32");
    CHECK_CONTAINS(out, "facing up");
    CHECK_CONTAINS(out, "Health 9/9, food 9/9, drink 9/9, energy 9/9.");
    CHECK_CONTAINS(out, "Inventory: nothing.");
    CHECK_CONTAINS(out, "Achievements 0/22: none yet.");
    CHECK_CONTAINS(out, "Legend: . grass");
    CHECK_CONTAINS(out, "Legal actions: noop, left, right, up, down");
    CHECK(strstr(out, "Can craft now") == NULL); /* the legal actions say it, from the mask */
    /* the view: 7 lines of 9 characters, @ in the middle of the fourth */
    const char *v = strstr(out, "up is row - 1):\n");
    CHECK(v != NULL);
    if (v) {
        v += strlen("up is row - 1):\n");
        int lines = 0;
        for (const char *p = v; lines < 7; lines++) {
            const char *nl = strchr(p, '\n');
            CHECK(nl && nl - p == 11);
            if (!nl) break;
            if (lines == 3) CHECK(p[2 + 4] == '@');
            p = nl + 1;
        }
    }
    polis_free(out);
    CHECK(polis_env_render(env, 0, "json", &out) == POLIS_OK);
    CHECK_CONTAINS(out, "{\"survival\":{\"player\":0,\"alive\":true,\"sleeping\":false,\"row\":32");
    CHECK_CONTAINS(out, "\"inventory\":{\"wood\":0,");
    CHECK_CONTAINS(out, "\"legal\":[\"noop\",\"left\",");
    polis_free(out);
    polis_env_destroy(env);
}

static void test_parser(void)
{
    polis_env *env = test_env_file(CLASSIC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    static const struct {
        const char *in;
        int32_t want;
    } OK[] = {
        {"left", SV_LEFT},
        {"move left", SV_LEFT},
        {"Go North", SV_UP},
        {"walk south.", SV_DOWN},
        {"east", SV_RIGHT},
        {"do", SV_DO},
        {"mine", SV_DO},
        {"drink", SV_DO},
        {"sleep", SV_SLEEP},
        {"rest", SV_SLEEP},
        {"place table", SV_PLACE_TABLE},
        {"place_crafting_table", SV_PLACE_TABLE},
        {"plant sapling", SV_PLACE_PLANT},
        {"make wood pickaxe", SV_MAKE_WOOD_PICKAXE},
        {"craft iron_sword", SV_MAKE_IRON_SWORD},
        {"make_stone_sword", SV_MAKE_STONE_SWORD},
        {"wait", SV_NOOP},
        {"{\"action\": \"place furnace\"}", SV_PLACE_FURNACE},
        {"{\"action\": \"make_iron_pickaxe\", \"why\": \"diamonds\"}", SV_MAKE_IRON_PICKAXE},
        /* any valid JSON object: "action" after other members, escapes, nested values */
        {"{\"note\":\"action\",\"action\":\"left\"}", SV_LEFT},
        {"{\"why\": {\"action\": [1, \"x\"]}, \"action\": \"go\\u0020north\"}", SV_UP},
        {"{\"action\": \"sleep\", \"n\": -1.5e3, \"ok\": true, \"z\": null}", SV_SLEEP},
    };
    for (size_t k = 0; k < sizeof OK / sizeof OK[0]; k++) {
        int32_t id = -1;
        CHECK(polis_env_parse_action(env, 0, OK[k].in, &id) == POLIS_OK);
        if (id != OK[k].want) fprintf(stderr, "parse \"%s\": %d\n", OK[k].in, id);
        CHECK_EQ_INT(id, OK[k].want);
    }
    int32_t id;
    CHECK(polis_env_parse_action(env, 0, "move sideways", &id) == POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env),
                   "survival: \"move sideways\": the direction must be left, right");
    CHECK(polis_env_parse_action(env, 0, "craft spaceship", &id) == POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "can make wood_pickaxe");
    CHECK(polis_env_parse_action(env, 0, "dance", &id) == POLIS_ERR_ACTION);
    CHECK(polis_env_parse_action(env, 0, "{\"act\": \"sleep\"}", &id) == POLIS_ERR_ACTION);
    /* JSON that is not an object with a string "action" is not survival's: nobody's action */
    static const char *const NOT_OURS[] = {
        "{\"action\": 3}",
        "{\"action\": \"sleep\",}",
        "{\"action\": \"sleep\"",
        "[\"sleep\"]",
        "{\"action\": \"sleep\", \"action\": \"do\"}",
        "{\"action\": \"sleep\"} {}",
        "{\"\":{\"",
        /* an "action" longer than any survival command (64 bytes) */
        "{\"action\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
    };
    for (size_t k = 0; k < sizeof NOT_OURS / sizeof NOT_OURS[0]; k++) {
        CHECK(polis_env_parse_action(env, 0, NOT_OURS[k], &id) == POLIS_ERR_ACTION);
        CHECK_CONTAINS(polis_env_error(env), "cannot parse action");
    }
    /* every prefix of a valid action, followed by blanks: nobody's action or survival's
     * error, never a read beyond the input */
    const char *full = "{\"why\": [\"a\\\"\", {\"b\": null}], \"action\": \"move \\u006ceft\"}";
    for (size_t cut = 1; cut < strlen(full); cut++) {
        char in[128];
        snprintf(in, sizeof in, "%.*s  ", (int)cut, full);
        polis_status st = polis_env_parse_action(env, 0, in, &id);
        CHECK(st == POLIS_ERR_ACTION || st == POLIS_ERR_INVALID);
    }
    CHECK(polis_env_parse_action(env, 0, full, &id) == POLIS_OK && id == SV_LEFT);
    polis_env_destroy(env);
}

/* A policy's episode: every action legal, and the same actions from the same seed. */
static uint64_t policy_run(const char *path, const char *policy, uint64_t seed, int *ach,
                           int *illegal)
{
    polis_env *env = test_env_file(path, NULL);
    if (!env) return 0;
    const polis_io *io = polis_env_io(env);
    int32_t pid = polis_env_policy_find(env, policy);
    CHECK(pid >= 0);
    int32_t ev = polis_env_event_find(env, "survival.achievement");
    (void)ev;
    polis_env_reset(env, seed);
    uint64_t h = 0;
    double ret = 0;
    int t = 0;
    while (!polis_env_done(env) && t < 3000) {
        CHECK(polis_env_policy_act(env, pid, NULL, 0) == POLIS_OK);
        for (int32_t a = 0; a < io->n_agents; a++) h = h * 131 + (uint64_t)io->actions[a];
        CHECK(polis_env_step(env) == POLIS_OK);
        for (int32_t a = 0; a < io->n_agents; a++) {
            *illegal += io->illegal[a];
            ret += io->rewards[a];
        }
        t++;
    }
    *ach += (int)(ret + 1.0); /* achievements dominate the return (health change >= -0.9) */
    polis_env_destroy(env);
    return h;
}

/* The scripted policy's actions are pinned (a hash over five classic episodes and one MAC
 * episode): its path searches and shelter building may be reorganised, never changed. */
static void test_policies(void)
{
    int ach_scripted = 0, ach_uniform = 0, illegal = 0;
    uint64_t pinned = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        int dummy = 0, ill2 = 0;
        uint64_t a = policy_run(CLASSIC, "scripted", seed, &ach_scripted, &illegal);
        CHECK(a == policy_run(CLASSIC, "scripted", seed, &dummy, &ill2));
        pinned = pinned * 1000003 + a;
        policy_run(CLASSIC, "uniform", seed, &ach_uniform, &illegal);
    }
    CHECK_EQ_INT(illegal, 0);
    CHECK(ach_scripted > ach_uniform);
    CHECK(ach_scripted >= 5 * 6); /* wood, table, wood pickaxe, drink, ... every episode */
    int ill3 = 0, dummy = 0;
    pinned = pinned * 1000003 + policy_run(MAC, "scripted", 3, &dummy, &ill3);
    CHECK_EQ_INT(ill3, 0);
    CHECK(pinned == 0x5d45473d83deb723ULL);
}

typedef struct per_agent {
    int32_t type;
    uint32_t ach[4];
} per_agent;

static void on_agent_achievement(void *ud, const polis_event *ev)
{
    per_agent *pa = ud;
    const int32_t *f = ev->data;
    if (ev->type == pa->type && f[0] < 4) pa->ach[f[0]] |= 1u << f[1];
}

/* The scripted policy as the expert of the paper's expert setups: in MAC's reference preset
 * (4 players, no mask) it drives agents 0 and 1 only, while 2 and 3 act uniformly at random
 * (standing in for learners); the experts climb far past the learners (every one makes a
 * stone pickaxe within 1,500 steps) and the learners' actions are left as set. */
static void test_scripted_experts(void)
{
    polis_env *env =
        test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_mac_reference.json", NULL);
    CHECK(env != NULL);
    if (!env) return;
    int32_t scripted = polis_env_policy_find(env, "scripted");
    int32_t uniform = polis_env_policy_find(env, "uniform");
    per_agent pa = {.type = polis_env_event_find(env, "survival.achievement")};
    polis_env_subscribe(env, -1, on_agent_achievement, &pa);
    const polis_io *io = polis_env_io(env);
    const int32_t experts[2] = {0, 1}, learners[2] = {2, 3};
    int expert_count = 0, learner_count = 0, stone_tools = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        memset(pa.ach, 0, sizeof pa.ach);
        polis_env_reset(env, seed);
        for (int t = 0; t < 1500 && !polis_env_done(env); t++) {
            CHECK(polis_env_policy_act(env, uniform, learners, 2) == POLIS_OK);
            int32_t l2 = io->actions[2], l3 = io->actions[3];
            CHECK(polis_env_policy_act(env, scripted, experts, 2) == POLIS_OK);
            CHECK(io->actions[2] == l2 && io->actions[3] == l3);
            CHECK(polis_env_step(env) == POLIS_OK);
        }
        for (int a = 0; a < 4; a++) {
            int c = __builtin_popcount(pa.ach[a]);
            if (a < 2) {
                expert_count += c;
                stone_tools += (pa.ach[a] >> SV_ACH_MAKE_STONE_PICKAXE) & 1u;
            } else {
                learner_count += c;
            }
        }
    }
    fprintf(stderr, "experts %d, learners %d achievements; stone pickaxes %d of 8\n", expert_count,
            learner_count, stone_tools);
    CHECK(expert_count > 2 * learner_count);
    CHECK(stone_tools >= 6);
    polis_env_destroy(env);
}

typedef struct ladder {
    uint32_t ach; /* achievements of the episode */
} ladder;

static void on_achievement(void *ud, const polis_event *ev)
{
    ladder *l = ud;
    l->ach |= 1u << ((const int32_t *)ev->data)[1];
}

/* Whether the player, seen in its classic observation, is closed in: at most 3 tiles a mob
 * could walk on (not solid, not lava) are connected to its own inside the view. */
static bool sealed(const float *obs)
{
    int32_t q[64], n = 0;
    bool seen[7][9] = {{false}};
    q[n++] = 3 * 9 + 4;
    seen[3][4] = true;
    for (int32_t h = 0; h < n; h++) {
        static const int32_t D[4][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}};
        for (int32_t d = 0; d < 4; d++) {
            int32_t r = q[h] / 9 + D[d][0], c = q[h] % 9 + D[d][1], b = -1;
            if (r < 0 || r >= 7 || c < 0 || c >= 9) return false;
            if (seen[r][c]) continue;
            for (int32_t k = 0; k < 17; k++)
                if (obs[(r * 9 + c) * 21 + k] == 1.0f) b = k;
            if (b == SV_OUT_OF_BOUNDS || sv_solid(b) || b == SV_LAVA) continue;
            seen[r][c] = true;
            if (n == 3) return false;
            q[n++] = r * 9 + c;
        }
    }
    return true;
}

/* The scripted baseline climbs the whole tree (README "Baselines"): over eight seeded
 * episodes of Craftax-Classic it makes iron tools and eats a plant it planted, and it sleeps
 * sealed in (a pocket closed with a stone) rather than in the open. */
static void test_scripted_ladder(void)
{
    uint32_t any = 0;
    int total = 0, asleep = 0, asleep_sealed = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        polis_env *env = test_env_file(CLASSIC, NULL);
        CHECK(env != NULL);
        if (!env) return;
        ladder l = {0};
        polis_env_subscribe(env, polis_env_event_find(env, "survival.achievement"), on_achievement,
                            &l);
        int32_t pid = polis_env_policy_find(env, "scripted");
        polis_obs_field f;
        const float *obs = test_obs_field(env, 0, "symbolic", &f);
        CHECK(polis_env_reset(env, seed) == POLIS_OK);
        for (int t = 0; t < 4000 && !polis_env_done(env); t++) {
            CHECK(polis_env_policy_act(env, pid, NULL, 0) == POLIS_OK);
            CHECK(polis_env_step(env) == POLIS_OK);
            if (obs[1344] == 1.0f) {
                asleep++;
                asleep_sealed += sealed(obs);
            }
        }
        any |= l.ach;
        total += __builtin_popcount(l.ach);
        polis_env_destroy(env);
    }
    static const int32_t DEEP[6] = {SV_ACH_MAKE_STONE_PICKAXE, SV_ACH_PLACE_FURNACE,
                                    SV_ACH_COLLECT_IRON,       SV_ACH_MAKE_IRON_PICKAXE,
                                    SV_ACH_EAT_PLANT,          SV_ACH_DEFEAT_SKELETON};
    for (int k = 0; k < 6; k++) CHECK(any >> DEEP[k] & 1u);
    CHECK(total >= 8 * 15);
    CHECK(asleep > 100);
    CHECK(asleep_sealed * 10 >= asleep * 9);
}

/* Runs agent 0's plan until it ends (others noop); returns its final state, why in *why. */
static polis_plan_state run_plan(polis_env *env, const char *cmd, const char **why, int *ticks)
{
    const polis_io *io = polis_env_io(env);
    *ticks = 0;
    if (polis_env_plan_start(env, 0, cmd) != POLIS_OK) {
        fprintf(stderr, "plan_start %s: %s\n", cmd, polis_env_error(env));
        return POLIS_PLAN_IMPOSSIBLE;
    }
    for (;;) {
        polis_plan_state st;
        int32_t a;
        if (polis_env_plan_next(env, 0, &st, &a, why) != POLIS_OK) {
            fprintf(stderr, "plan_next: %s\n", polis_env_error(env));
            return POLIS_PLAN_IMPOSSIBLE;
        }
        if (st != POLIS_PLAN_RUNNING) return st;
        for (int32_t k = 0; k < io->n_agents; k++) io->actions[k] = 0;
        io->actions[0] = a;
        if (polis_env_step(env) != POLIS_OK || io->illegal[0]) return POLIS_PLAN_IMPOSSIBLE;
        (*ticks)++;
    }
}

static void test_plans(void)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"agents\": 1, \"max_steps\": 10000, \"plugins\": [{\"name\": \"survival\", "
             "\"params\": {\"god_mode\": true}}]}");
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 6);
    int done = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        CHECK(polis_env_reset(env, seed) == POLIS_OK);
        const char *why = NULL;
        int ticks;
        CHECK(run_plan(env, "MAKE wood_pickaxe", &why, &ticks) == POLIS_PLAN_IMPOSSIBLE);
        CHECK_CONTAINS(why, "needs 1 wood");
        CHECK(run_plan(env, "COLLECT stone", &why, &ticks) == POLIS_PLAN_IMPOSSIBLE);
        CHECK_CONTAINS(why, "mining stone needs a wood_pickaxe");
        if (run_plan(env, "collect 3 wood", &why, &ticks) != POLIS_PLAN_DONE) continue;
        CHECK_CONTAINS(why, "holding 3 wood");
        CHECK(run_plan(env, "PLACE table", &why, &ticks) == POLIS_PLAN_DONE);
        CHECK_CONTAINS(why, "placed a table");
        CHECK(run_plan(env, "MAKE wood_pickaxe", &why, &ticks) == POLIS_PLAN_DONE);
        CHECK_CONTAINS(why, "made a wood_pickaxe");
        CHECK(run_plan(env, "SLEEP", &why, &ticks) == POLIS_PLAN_IMPOSSIBLE);
        CHECK_CONTAINS(why, "energy is full");
        CHECK(run_plan(env, "DRINK", &why, &ticks) != POLIS_PLAN_RUNNING);
        done++;
    }
    CHECK(done >= 3);
    CHECK(polis_env_plan_start(env, 0, "COLLECT 12 wood") == POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "COLLECT: the count must be 1 to 9");
    CHECK(polis_env_plan_start(env, 0, "MAKE bow") == POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "MAKE <tool>: the tool is wood_pickaxe");
    CHECK(polis_env_plan_start(env, 0, "PLACE") == POLIS_ERR_ACTION);
    CHECK(polis_env_plan_start(env, 0, "DRINK now") == POLIS_ERR_ACTION);
    CHECK_CONTAINS(polis_env_error(env), "DRINK takes no arguments");
    polis_env_destroy(env);
}

/* survival.crafted events counted the paper's way from their station lists. */
typedef struct crafted_count {
    int32_t type, events, table_own, table_other, furnace, furnace_own, furnace_other;
} crafted_count;

static void count_crafted(void *ud, const polis_event *ev)
{
    crafted_count *c = ud;
    if (ev->type != c->type) return;
    const int32_t *f = ev->data; /* agent, action, table_owner, furnace_owner, tables,
                                    furnaces, table_1..8, furnace_1..8 */
    c->events++;
    bool own = false, other = false;
    for (int32_t k = 0; k < 8; k++) {
        if (k >= f[4]) CHECK_EQ_INT(f[6 + k], -2);
        if (k >= f[5]) CHECK_EQ_INT(f[14 + k], -2);
        if (k < f[4]) {
            own |= f[6 + k] == f[0];
            other |= f[6 + k] >= 0 && f[6 + k] != f[0];
        }
    }
    CHECK(f[4] >= 1);
    c->table_own += own;
    c->table_other += other;
    if (f[1] == 13 || f[1] == 16) { /* the iron tools */
        CHECK(f[5] >= 1);
        own = other = false;
        for (int32_t k = 0; k < f[5]; k++) {
            own |= f[14 + k] == f[0];
            other |= f[14 + k] >= 0 && f[14 + k] != f[0];
        }
        c->furnace++;
        c->furnace_own += own;
        c->furnace_other += other;
    }
}

static int32_t metric_int(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    return p ? atoi(p + strlen(key)) : -1;
}

/* The "metrics" rendering polis eval reads: shares of players per achievement, deaths, tool
 * use (from the survival.crafted events' station lists, recounted here). */
static void test_metrics(void)
{
    polis_env *env = test_env_file(MAC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    int32_t pid = polis_env_policy_find(env, "scripted");
    crafted_count cc = {.type = polis_env_event_find(env, "survival.crafted")};
    CHECK(cc.type >= 0);
    polis_env_subscribe(env, -1, count_crafted, &cc);
    polis_env_reset(env, 3); /* an episode with iron tools, every player dead by its end */
    while (!polis_env_done(env)) {
        polis_env_policy_act(env, pid, NULL, 0);
        if (polis_env_step(env) != POLIS_OK) break;
    }
    char *out = NULL;
    CHECK(polis_env_render(env, 0, "metrics", &out) == POLIS_OK);
    CHECK_CONTAINS(out, "{\"achievements\":{\"collect_wood\":1,\"place_table\":1,");
    CHECK_CONTAINS(out, "\"deaths\":{\"zombie\":");
    CHECK_CONTAINS(out, "\"crafts_with_others_share\":");
    /* the deaths add up to the three players */
    int dead = 0;
    const char *d = strstr(out, "\"deaths\":{");
    for (const char *p = d; p && *p && *p != '}'; p++)
        if (*p == ':' && p > d + 10) dead += atoi(p + 1);
    CHECK_EQ_INT(dead, 3);
    const char *tu = strstr(out, "\"tool_use\":{");
    CHECK(tu != NULL);
    if (tu) {
        CHECK(cc.events > 0 && cc.furnace > 0);
        CHECK_EQ_INT(metric_int(tu, "\"table_crafts\":"), cc.events);
        CHECK_EQ_INT(metric_int(tu, "\"table_own\":"), cc.table_own);
        CHECK_EQ_INT(metric_int(tu, "\"table_other\":"), cc.table_other);
        CHECK_EQ_INT(metric_int(tu, "\"furnace_crafts\":"), cc.furnace);
        CHECK_EQ_INT(metric_int(tu, "\"furnace_own\":"), cc.furnace_own);
        CHECK_EQ_INT(metric_int(tu, "\"furnace_other\":"), cc.furnace_other);
        CHECK_EQ_INT(metric_int(out, "\"crafts\":"), cc.events);
    }
    CHECK_CONTAINS(out, "\"tool_use_by_player\":{\"0\":{\"table_crafts\":");
    CHECK_CONTAINS(out, ",\"2\":{\"table_crafts\":");
    polis_free(out);
    polis_env_destroy(env);
}

static double metric_num(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    return p ? atof(p + strlen(key)) : -1.0;
}

/* The proximity rows of the "metrics" rendering on survival_proximity.json, recomputed from
 * the players' rows, columns and lives in their JSON views after every step: the share of steps
 * each pair was in each other's view (|dr| <= 3, |dc| <= 4, both alive), the mean over pairs,
 * and the bonus (0.01 x the share of the other players in view, per living player). */
static void test_proximity_metrics(void)
{
    polis_env *env =
        test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_proximity.json", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_agents(env), 4);
    int32_t pid = polis_env_policy_find(env, "random");
    int32_t pairs[4][4] = {{0}}, steps = 0;
    double bonus = 0.0;
    polis_env_reset(env, 5);
    char *out = NULL;
    CHECK(polis_env_render(env, 0, "metrics", &out) == POLIS_OK);
    CHECK(out && !strstr(out, "proximity")); /* no step yet */
    polis_free(out);
    for (; steps < 400 && !polis_env_done(env); steps++) {
        polis_env_policy_act(env, pid, NULL, 0);
        if (polis_env_step(env) != POLIS_OK) break;
        int32_t r[4], c[4], alive[4];
        for (int32_t a = 0; a < 4; a++) {
            char *v = NULL;
            CHECK(polis_env_render(env, a, "json", &v) == POLIS_OK);
            alive[a] = v && strstr(v, "\"alive\":true") != NULL;
            r[a] = (int32_t)metric_int(v ? v : "", "\"row\":");
            c[a] = (int32_t)metric_int(v ? v : "", "\"col\":");
            polis_free(v);
        }
        for (int32_t i = 0; i < 4; i++) {
            int32_t near = 0;
            for (int32_t j = 0; j < 4; j++) {
                bool in = i != j && alive[i] && alive[j] && abs(r[i] - r[j]) <= 3 &&
                          abs(c[i] - c[j]) <= 4;
                pairs[i][j] += in;
                near += in;
            }
            if (alive[i]) bonus += 0.01 * near / 3.0;
        }
    }
    CHECK(steps > 50);
    CHECK(polis_env_render(env, 0, "metrics", &out) == POLIS_OK);
    double sum = 0.0;
    int32_t seen = 0;
    for (int32_t i = 0; i < 4; i++)
        for (int32_t j = i + 1; j < 4; j++) {
            char key[32];
            snprintf(key, sizeof key, "\"%d-%d\":", i, j);
            double want = (double)pairs[i][j] / steps;
            CHECK(fabs(metric_num(out, key) - want) < 1e-5);
            CHECK_EQ_INT(pairs[i][j], pairs[j][i]);
            sum += want;
            seen += pairs[i][j] > 0;
        }
    CHECK(seen > 0); /* the players start together: some pair was in view */
    CHECK(fabs(metric_num(out, "\"proximity\":") - sum / 6.0) < 1e-5);
    CHECK(fabs(metric_num(out, "\"proximity_bonus\":") - bonus / 4.0) < 1e-4);
    CHECK(bonus > 0.0);
    polis_free(out);
    polis_env_destroy(env);
    /* survival_mac (bonus off): the statistic, no bonus row */
    env = test_env_file(MAC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 5);
    polis_env_policy_act(env, polis_env_policy_find(env, "random"), NULL, 0);
    polis_env_step(env);
    CHECK(polis_env_render(env, 0, "metrics", &out) == POLIS_OK);
    CHECK_CONTAINS(out, "\"proximity\":1,\"proximity_by_pair\":{\"0-1\":1,\"0-2\":1,\"1-2\":1}}");
    CHECK(!strstr(out, "proximity_bonus"));
    polis_free(out);
    polis_env_destroy(env);
}

int main(void)
{
    test_metrics();
    test_proximity_metrics();
    test_scripted_experts();
    test_plans();
    test_text();
    test_parser();
    test_policies();
    test_scripted_ladder();
    CHECK_DONE();
}
