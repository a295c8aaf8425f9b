/* The Contract mini-game (contract.so over society + social): the shipped scenarios' layout,
 * the turn order (a permutation from the env RNG per episode), stage timing, masks and flags
 * in each stage, group formation and equal reward splits, the views and the parser, bad
 * parameters with exact messages, no allocation in step, golden hashes, and the scripted
 * policy when the kernel has policies. */
#include <math.h>

#include "check.h"
#include "testutil.h"

#define DIR POLIS_SOURCE_DIR "/rulesets/contract/"

static polis_env *open_file(const char *path) { return test_env_file(path, NULL); }

static const void *field(polis_env *env, int32_t agent, const char *name, polis_obs_field *out)
{
    return test_obs_field(env, agent, name, out);
}

/* contract field: [stage, turn agent, formation steps left] */
static int stage_of(polis_env *env, int k)
{
    return ((const int32_t *)field(env, 0, "contract", NULL))[k];
}

static int32_t id(polis_env *env, const char *name) { return test_action_id(env, name); }

static uint8_t mask(polis_env *env, int32_t agent, const char *action)
{
    return test_mask(env, agent, action);
}

/* Steps with actions by name (NULL: noop). */
static polis_status step(polis_env *env, const char *const *names)
{
    return test_step_names(env, names);
}

/* The agent's membership of group g in social_state ([to][from], nodes: agents, groups). */
static int member(polis_env *env, int32_t agent, int32_t g)
{
    polis_obs_field f;
    const int8_t *s = field(env, 0, "social_state", &f);
    int32_t n = f.shape[0], P = polis_env_n_agents(env);
    return s[(size_t)agent * (size_t)n + (size_t)(P + g)];
}

static void test_layout(void)
{
    polis_env *env = open_file(DIR "contract.json");
    CHECK(env != NULL);
    if (!env) return;
    /* AdaSociety's n = 6 + 2R + G = 6 + 6 + 4 */
    CHECK_EQ_INT(polis_env_n_actions(env), 16);
    CHECK_EQ_INT(polis_env_max_steps(env), 120);
    polis_obs_field f;
    CHECK(field(env, 0, "grid", &f) != NULL);
    CHECK_EQ_INT(f.shape[0], 8); /* 2 + 2R, R = 3 (wood, stone, hammer) */
    CHECK_EQ_INT(f.shape[1], 7); /* fov 3 window */
    CHECK(field(env, 0, "social_state", &f) != NULL);
    CHECK_EQ_INT(f.shape[0], 8); /* 4 agents + 4 groups */
    CHECK(field(env, 0, "contract", &f) != NULL);
    CHECK_EQ_INT(f.shape[0], 3);
    polis_env_destroy(env);
    env = open_file(DIR "contract_hard.json");
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_actions(env), 26); /* 6 + 12 + 8 */
    CHECK_EQ_INT(polis_env_max_steps(env), 240);
    polis_env_reset(env, 3);
    for (int t = 0; t < 40; t++) {
        CHECK_EQ_INT(stage_of(env, 0), 0);
        CHECK_EQ_INT(stage_of(env, 2), 40 - t);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    CHECK_EQ_INT(stage_of(env, 0), 1);
    CHECK_EQ_INT(stage_of(env, 1), -1);
    polis_env_destroy(env);
}

/* Turns: each round of N steps is the same permutation, drawn per episode; the same seed
 * gives the same order. Masks: only the turn agent may choose a group (and every group),
 * nobody may in the physical stage. */
static void test_turns_and_masks(void)
{
    polis_env *env = open_file(DIR "contract.json");
    CHECK(env != NULL);
    if (!env) return;
    int32_t orders[8][4];
    int distinct = 0;
    for (int e = 0; e < 8; e++) {
        polis_env_reset(env, (uint64_t)e + 1);
        int seen[4] = {0};
        for (int t = 0; t < 20; t++) {
            int32_t turn = stage_of(env, 1);
            CHECK(turn >= 0 && turn < 4);
            if (turn < 0 || turn > 3) break;
            if (t < 4) {
                orders[e][t] = turn;
                seen[turn]++;
            } else {
                CHECK_EQ_INT(turn, orders[e][t % 4]);
            }
            for (int32_t a = 0; a < 4; a++)
                for (int g = 0; g < 4; g++) {
                    char name[32];
                    snprintf(name, sizeof name, "choose_group_%d", g);
                    CHECK_EQ_INT(mask(env, a, name), a == turn);
                }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        for (int a = 0; a < 4; a++) CHECK_EQ_INT(seen[a], 1);
        for (int32_t a = 0; a < 4; a++) CHECK_EQ_INT(mask(env, a, "choose_group_0"), 0);
        int same = 0;
        for (int p = 0; p < e; p++) same |= memcmp(orders[p], orders[e], sizeof orders[e]) == 0;
        distinct += !same;
    }
    CHECK(distinct >= 4); /* 24 orders: 8 episodes do not all repeat one */
    polis_env_reset(env, 2);
    CHECK_EQ_INT(stage_of(env, 1), orders[1][0]);
    polis_env_destroy(env);
}

/* A small world with fixed positions: carpenters at (0,0) on wood and (1,1) on stone, miners
 * at (2,2) on wood and (3,3). Two formation rounds (8 steps), then 22 physical steps. */
static const char *SMALL =
    "{\"agents\": {\"count\": 4, \"names\": [\"carpenter_0\", \"carpenter_1\", \"miner_2\", "
    "\"miner_3\"]}, \"max_steps\": 30, \"plugins\": [{\"name\": \"society\", \"params\": {"
    "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 5, \"y\": 5}},"
    "\"jobs\": {\"carpenter\": {\"fov\": 2, \"capacity\": {\"hammer\": 1}},"
    "          \"miner\": {\"fov\": 2, \"capacity\": {\"wood\": 0, \"stone\": 0},"
    "                    \"preference\": {\"hammer\": 2}}},"
    "\"static\": {\"resources\": [{\"name\": [\"wood\", \"stone\", \"wood\"], "
    "                           \"positions\": [[0, 0], [1, 1], [2, 2]], \"num\": 5}],"
    "            \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [4, 4]}],"
    "            \"players\": [{\"job\": \"carpenter\", \"positions\": [[0, 0], [1, 1]]},"
    "                          {\"job\": \"miner\", \"positions\": [[2, 2], [3, 3]]}]}}},"
    " {\"name\": \"social\", \"params\": {\"social_state\": true, \"social\": {\"groups\": "
    "  [{}, {}, {}, {}]}, \"post_updates\": [{\"function\": \"split_score_to_group\", "
    "  \"kwargs\": {\"attribute\": \"division_weight\"}}], \"actions\": [{\"family\": "
    "  \"choose_group\", \"enabled\": false}]}},"
    " {\"name\": \"contract\", \"params\": {\"rounds\": %d%s}}]}";

static polis_env *small(int rounds, test_alloc *al)
{
    char json[4096];
    snprintf(json, sizeof json, SMALL, rounds, "");
    return test_env(json, NULL, al);
}

static int pos(polis_env *env, int32_t agent, int k)
{
    return ((const int32_t *)field(env, agent, "position", NULL))[k];
}

/* Formation: round 1 everyone takes group 3; round 2 carpenter_0 and miner_2 take group 0,
 * carpenter_1 and miner_3 group 1 (leaving group 3). Actions out of turn or out of stage are
 * flagged no-ops. Then rewards split equally inside the groups. */
static void test_formation_and_split(void)
{
    polis_env *env = small(2, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 7);
    static const int target[4] = {0, 1, 0, 1};
    for (int t = 0; t < 8; t++) {
        int32_t turn = stage_of(env, 1);
        CHECK(turn >= 0);
        if (turn < 0) break;
        const char *names[4] = {NULL, NULL, NULL, NULL};
        char choice[32];
        snprintf(choice, sizeof choice, "choose_group_%d", t < 4 ? 3 : target[turn]);
        names[turn] = choice;
        int32_t other = (turn + 1) % 4, x0 = pos(env, other, 0);
        names[other] = t % 2 ? "choose_group_2" : "move_down"; /* out of turn */
        CHECK_EQ_INT(step(env, names), POLIS_OK);
        CHECK_EQ_INT(io->illegal[turn], 0);
        CHECK_EQ_INT(io->illegal[other], 1);
        CHECK_EQ_INT(pos(env, other, 0), x0);
        CHECK_EQ_INT(member(env, other, 2), 0);
        CHECK_EQ_INT(member(env, turn, t < 4 ? 3 : target[turn]), 1);
        if (t >= 4) CHECK_EQ_INT(member(env, turn, 3), 0); /* one group at a time */
        for (int a = 0; a < 4; a++) CHECK(io->rewards[a] == 0.0f);
    }
    /* the turn agent's physical action in the formation stage is a flagged no-op too */
    polis_env_reset(env, 7);
    int32_t turn = stage_of(env, 1);
    const char *names[4] = {NULL, NULL, NULL, NULL};
    names[turn] = turn == 0 ? "pick_wood" : "move_down";
    int32_t x0 = pos(env, turn, 0);
    CHECK_EQ_INT(step(env, names), POLIS_OK);
    CHECK_EQ_INT(io->illegal[turn], 1);
    CHECK_EQ_INT(pos(env, turn, 0), x0);
    CHECK(io->rewards[turn] == 0.0f);
    /* replay the formation with the pairs */
    polis_env_reset(env, 7);
    for (int t = 0; t < 8; t++) {
        const char *n2[4] = {NULL, NULL, NULL, NULL};
        char choice[32];
        int32_t tu = stage_of(env, 1);
        snprintf(choice, sizeof choice, "choose_group_%d", target[tu]);
        n2[tu] = choice;
        CHECK_EQ_INT(step(env, n2), POLIS_OK);
    }
    CHECK_EQ_INT(stage_of(env, 0), 1);
    for (int32_t a = 0; a < 4; a++) {
        CHECK_EQ_INT(member(env, a, target[a]), 1);
        CHECK_EQ_INT(mask(env, a, "choose_group_0"), 0); /* masked in the physical stage */
    }
    CHECK_EQ_INT(mask(env, 2, "pick_wood"), 0); /* a miner cannot hold wood (Table 7) */
    CHECK_EQ_INT(mask(env, 0, "pick_wood"), 1);
    /* carpenter_0 picks a wood (+1): half to it, half to miner_2; carpenter_1 a stone */
    CHECK_EQ_INT(step(env, (const char *[]){"pick_wood", "pick_stone", "choose_group_1", NULL}),
                 POLIS_OK);
    CHECK_EQ_INT(io->illegal[2], 1); /* a social action in the physical stage */
    CHECK(io->rewards[0] == 0.5f);
    CHECK(io->rewards[2] == 0.5f);
    CHECK(io->rewards[1] == 0.5f);
    CHECK(io->rewards[3] == 0.5f);
    CHECK_EQ_INT(member(env, 2, 1), 0);
    polis_env_destroy(env);
}

static char *render(polis_env *env, int32_t agent, const char *format)
{
    char *out = NULL;
    if (polis_env_render(env, agent, format, &out)) fprintf(stderr, "%s\n", polis_env_error(env));
    return out;
}

static void test_views_and_parser(void)
{
    polis_env *env = small(1, NULL);
    CHECK(env != NULL);
    if (!env) return;
    int32_t out = -1;
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "join group 2", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "choose_group_2"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "Choose Group 1", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "choose_group_1"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "join 3", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "choose_group_3"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "group 0", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "choose_group_0"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "join group 9", &out), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "contract: \"join group 9\": there is no group 9 (groups "
                 "0..3) [parse \"join group 9\", agent 0 (carpenter_0), tick 0]");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "join the blue team", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "contract: \"join the blue team\": expected \"join "
                                         "group <g>\" with a group number 0..3");

    polis_env_reset(env, 7);
    int32_t turn = stage_of(env, 1);
    const char *names[4] = {NULL, NULL, NULL, NULL};
    names[turn] = "choose_group_2";
    step(env, names);
    int32_t next = stage_of(env, 1);
    char *text = render(env, next, "text");
    CHECK_CONTAINS(text, "Contract: formation stage, step 1 of 4 (then the physical stage until "
                         "step 30).\nTurn order: ");
    CHECK_CONTAINS(text, "It is your turn: join a group (\"join group <g>\": you leave your "
                         "current group) or pass (\"noop\").");
    char expect[256];
    snprintf(expect, sizeof expect,
             "Groups: group 0: empty; group 1: empty; group 2: %s; group "
             "3: empty.\nYou are in no group",
             polis_env_agent_name(env, turn));
    CHECK_CONTAINS(text, expect);
    polis_free(text);
    text = render(env, turn, "text");
    CHECK_CONTAINS(text, "You are in group 2 with nobody else; rewards are split equally inside "
                         "the group.\n");
    snprintf(expect, sizeof expect, "It is %s's turn; you wait (noop). You have no turn left.",
             polis_env_agent_name(env, next));
    CHECK_CONTAINS(text, expect);
    polis_free(text);
    char *json = render(env, turn, "json");
    snprintf(expect, sizeof expect,
             "\"contract\":{\"stage\": \"formation\", \"step\": 1, "
             "\"formation_steps\": 4, \"turn\": %d, \"next_turn\": -1",
             next);
    CHECK_CONTAINS(json, expect);
    CHECK_CONTAINS(json, "\"group\": 2}");
    snprintf(expect, sizeof expect, "{\"id\": 2, \"members\": [%d]}", turn);
    CHECK_CONTAINS(json, expect);
    polis_free(json);
    for (int t = 1; t < 4; t++) step(env, (const char *[]){NULL, NULL, NULL, NULL});
    text = render(env, 0, "text");
    CHECK_CONTAINS(text, "Contract: physical stage, step 4 of 30. The contracts are fixed.\n");
    polis_free(text);
    polis_env_destroy(env);
}

static void test_bad_params(void)
{
    char json[4096];
    snprintf(json, sizeof json, SMALL, 0, "");
    CHECK_CONTAINS(test_env_error(json), "plugins[2].params.rounds");
    /* A formation stage longer than the episode: the episode is truncated inside it. */
    snprintf(json, sizeof json, SMALL, 8, "");
    polis_env *shortened = test_env(json, NULL, NULL);
    CHECK(shortened != NULL);
    if (shortened) {
        CHECK_EQ_INT(polis_env_reset(shortened, 1), POLIS_OK);
        for (int t = 0; t < 30; t++) {
            CHECK_EQ_INT(stage_of(shortened, 0), 0);
            CHECK(!polis_env_done(shortened));
            CHECK_EQ_INT(step(shortened, (const char *[]){NULL, NULL, NULL, NULL}), POLIS_OK);
        }
        CHECK(polis_env_done(shortened));
        CHECK_EQ_INT(stage_of(shortened, 2), 2);
        polis_env_destroy(shortened);
    }
    snprintf(json, sizeof json, SMALL, 1, ", \"family\": \"pick_team\"");
    CHECK_EQ_STR(test_env_error(json),
                 "<string>: plugins[2]: plugin \"contract\" start failed: contract: family: "
                 "the social plugin has no action family named \"pick_team\" "
                 "(add {\"family\": \"choose_group\", \"name\": \"pick_team\"} to its "
                 "\"actions\")");
    /* a family of agent targets (4 agents) is not a group family (3 groups) */
    char *swapped = malloc(strlen(SMALL) + 128);
    const char *at = strstr(SMALL, "[{}, {}, {}, {}]");
    size_t head = (size_t)(at - SMALL);
    memcpy(swapped, SMALL, head);
    strcpy(swapped + head, "[{}, {}, {}]}, \"post_updates\": [], \"actions\": [");
    strcat(swapped, "{\"family\": \"choose_group\", \"enabled\": false}, {\"family\": "
                    "\"share_map\", \"name\": \"team\"}]}},"
                    " {\"name\": \"contract\", \"params\": {\"rounds\": %d%s}}]}");
    snprintf(json, sizeof json, swapped, 1, ", \"family\": \"team\"");
    free(swapped);
    CHECK_EQ_STR(test_env_error(json),
                 "<string>: plugins[2]: plugin \"contract\" start failed: contract: family: "
                 "\"team\" must be a group family with one action per group "
                 "(team_0 .. team_2); the social plugin has 3 groups");
    CHECK_CONTAINS(test_env_error("{\"agents\": 2, \"plugins\": [\"contract\"]}"), "social");
}

/* A random policy over the masks, restricted to what the stage allows (the turn agent's
 * group choice or noop in the formation stage): never flagged. */
static uint64_t run(polis_env *env, uint64_t seed, int episodes, long *illegal, int *steps)
{
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, seed, 0x636f6e7472ULL);
    int32_t first = id(env, "choose_group_0");
    polis_obs_field f;
    field(env, 0, "social_state", &f);
    int32_t G = f.shape[0] - io->n_agents;
    uint64_t h = 0;
    for (int e = 0; e < episodes; e++) {
        polis_env_reset(env, seed + (uint64_t)e);
        *steps = 0;
        while (!polis_env_done(env)) {
            bool formation = stage_of(env, 0) == 0;
            int32_t turn = stage_of(env, 1);
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
                int32_t legal[64], n = 0;
                for (int32_t k = 0; k < io->n_actions && n < 64; k++) {
                    bool stage_ok =
                        !formation || k == 0 || (a == turn && k >= first && k < first + G);
                    if (m[k] && stage_ok) legal[n++] = k;
                }
                io->actions[a] = legal[polis_rng_below(&r, (uint32_t)n)];
            }
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "step: %s\n", polis_env_error(env));
                return 0;
            }
            for (int32_t a = 0; a < io->n_agents; a++) *illegal += io->illegal[a];
            h = h * 1099511628211ULL ^ polis_env_state_hash(env);
            (*steps)++;
        }
    }
    return h;
}

static void test_golden(const char *file, int length, uint64_t golden1, uint64_t golden2)
{
    polis_env *env = open_file(file);
    CHECK(env != NULL);
    if (!env) return;
    long illegal = 0;
    int steps = 0;
    uint64_t h1 = run(env, 1, 1, &illegal, &steps);
    CHECK_EQ_INT(steps, length);
    uint64_t h2 = run(env, 2, 2, &illegal, &steps);
    CHECK_EQ_INT(illegal, 0);
    if (h1 != golden1 || h2 != golden2)
        fprintf(stderr, "%s: hashes 0x%016llx 0x%016llx\n", file, (unsigned long long)h1,
                (unsigned long long)h2);
    CHECK(h1 == golden1);
    CHECK(h2 == golden2);
    CHECK(run(env, 1, 1, &illegal, &steps) == h1);
    polis_env_destroy(env);
}

/* Nothing in a step allocates, in either stage. */
/* A failing allocator: whichever allocation of create fails, creation fails cleanly with
 * POLIS_ERR_NOMEM and leaks nothing. */
static void test_alloc_sweep(void)
{
    long total = 0, failures = 0;
    CHECK_EQ_INT(test_create_sweep(DIR "contract.json", &total, &failures), 0);
    CHECK(failures > total / 2);
}

static void test_no_alloc(void)
{
    test_alloc al = {0};
    polis_env *env = small(2, &al);
    CHECK(env != NULL);
    if (!env) return;
    long illegal = 0;
    int steps = 0;
    polis_env_reset(env, 1);
    long before = al.calls;
    const polis_io *io = polis_env_io(env);
    for (int e = 0; e < 20; e++) {
        while (!polis_env_done(env)) {
            for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = (a + e + steps) % 7;
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            steps++;
        }
        CHECK_EQ_INT(al.calls, before);
        polis_env_reset(env, (uint64_t)e + 2);
        before = al.calls;
    }
    (void)illegal;
    CHECK(steps >= 600);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

#ifdef POLIS_TEST_POLICIES
/* The scripted policy: on its turn an agent pairs with the other trade; after the formation
 * stage every non-empty group mixes carpenters and miners, and nothing was flagged. */
static void test_scripted(const char *file)
{
    polis_env *env = open_file(file);
    CHECK(env != NULL);
    if (!env) return;
    int32_t pol = polis_env_policy_find(env, "scripted");
    CHECK(pol >= 0);
    if (pol < 0) {
        polis_env_destroy(env);
        return;
    }
    const polis_io *io = polis_env_io(env);
    polis_obs_field f;
    field(env, 0, "social_state", &f);
    int32_t P = io->n_agents, G = f.shape[0] - P;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        polis_env_reset(env, seed);
        long illegal = 0;
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, pol, NULL, 0), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int32_t a = 0; a < P; a++) illegal += io->illegal[a];
            if (polis_env_tick(env) != P * 5) continue;
            for (int32_t g = 0; g < G; g++) {
                int carp = 0, mine = 0;
                for (int32_t a = 0; a < P; a++)
                    if (member(env, a, g)) {
                        if (strncmp(polis_env_agent_name(env, a), "miner", 5) == 0)
                            mine++;
                        else
                            carp++;
                    }
                CHECK(carp + mine == 0 || (carp > 0 && mine > 0));
            }
            int joined = 0;
            for (int32_t a = 0; a < P; a++)
                for (int32_t g = 0; g < G; g++) joined += member(env, a, g);
            CHECK_EQ_INT(joined, P);
        }
        CHECK_EQ_INT(illegal, 0);
    }
    polis_env_destroy(env);
}
#endif

int main(void)
{
    test_layout();
    test_turns_and_masks();
    test_formation_and_split();
    test_views_and_parser();
    test_bad_params();
    test_no_alloc();
    test_alloc_sweep();
    test_golden(DIR "contract.json", 120, 0x357d57ba24d85349ULL, 0xac24e59bbcbbf4c5ULL);
    test_golden(DIR "contract_hard.json", 240, 0xcc694d10ea6f8f9cULL, 0x259a46c33a969600ULL);
#ifdef POLIS_TEST_POLICIES
    test_scripted(DIR "contract.json");
    test_scripted(DIR "contract_hard.json");
#endif
    CHECK_DONE();
}
