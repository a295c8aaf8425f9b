/* The Negotiation mini-game (negotiation.so over society + social): layout, the protocol
 * step by step (requests, turns, proposals, counter-proposals, accept, decline, timeouts,
 * the end of the stage), groups negotiating with outsiders and with groups (weights multiply
 * through), two merges of one group in one step, reward splits by the agreed weights, masks
 * and flags in each stage, the observations AdaSociety never filled, views and parser (a
 * proposal off the grid), bad parameters with exact messages, no allocation in step, golden
 * hashes, and the scripted policy when the kernel has policies. */
#include <math.h>

#include "check.h"
#include "testutil.h"

#define DIR POLIS_SOURCE_DIR "/rulesets/negotiation/"
#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-6)

static polis_env *open_file(const char *path) { return test_env_file(path, NULL); }

static const void *field(polis_env *env, int32_t agent, const char *name, polis_obs_field *out)
{
    return test_obs_field(env, agent, name, out);
}

/* negotiation field: [stage, opponent, my turn, steps left] */
static int state(polis_env *env, int32_t agent, int k)
{
    return ((const int32_t *)field(env, agent, "negotiation", NULL))[k];
}

static float proposal(polis_env *env, int32_t agent, int32_t j)
{
    return ((const float *)field(env, agent, "proposal", NULL))[j];
}

static float split(polis_env *env, int32_t j)
{
    return ((const float *)field(env, 0, "final_split", NULL))[j];
}

static int available(polis_env *env, int32_t agent, int32_t j)
{
    return ((const int8_t *)field(env, agent, "available_player", NULL))[j];
}

static int32_t id(polis_env *env, const char *name) { return test_action_id(env, name); }

static uint8_t mask(polis_env *env, int32_t agent, const char *action)
{
    return test_mask(env, agent, action);
}

static polis_status step(polis_env *env, const char *const *names)
{
    return test_step_names(env, names);
}

#define STEP(env, a0, a1, a2, a3) CHECK_EQ_INT(step(env, (const char *[]){a0, a1, a2, a3}), 0)

/* Group membership from social_state ([to][from]; nodes: agents, then groups). */
static int member(polis_env *env, int32_t agent, int32_t g)
{
    polis_obs_field f;
    const int8_t *s = field(env, 0, "social_state", &f);
    int32_t P = polis_env_n_agents(env);
    return s[(size_t)agent * (size_t)f.shape[0] + (size_t)(P + g)];
}

/* The bus events of the negotiation plugin as text lines. */
typedef struct event_log {
    char text[4096];
    polis_env *env;
} event_log;

static void on_event(void *ud, const polis_event *ev)
{
    event_log *l = ud;
    const char *name = polis_env_event_name(l->env, ev->type);
    size_t n = strlen(l->text);
    const int32_t *i = ev->data;
    if (!strcmp(name, "negotiation.proposed") || !strcmp(name, "negotiation.agreed")) {
        double share;
        memcpy(&share, (const char *)ev->data + 8, sizeof share);
        snprintf(l->text + n, sizeof l->text - n, "%lld %s %d %d %g", (long long)ev->tick, name,
                 i[0], i[1], share);
        n = strlen(l->text);
        if (name[12] == 'a')
            snprintf(l->text + n, sizeof l->text - n, " %d", ((const int32_t *)ev->data)[4]);
    } else {
        snprintf(l->text + n, sizeof l->text - n, "%lld %s %d %d %d", (long long)ev->tick, name,
                 i[0], i[1], i[2]);
    }
    n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "\n");
}

static void log_events(polis_env *env, event_log *l)
{
    memset(l, 0, sizeof *l);
    l->env = env;
    static const char *const names[] = {"negotiation.matched", "negotiation.proposed",
                                        "negotiation.agreed", "negotiation.ended"};
    for (int i = 0; i < 4; i++)
        polis_env_subscribe(env, polis_env_event_find(env, names[i]), on_event, l);
}

/* Fixed positions: carpenter_0 on wood at (0,0), carpenter_1 on stone at (1,1), miner_2 on
 * wood at (2,2), miner_3 at (3,3). */
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
    " {\"name\": \"social\", \"params\": {\"social_state\": true, \"max_groups\": %d, "
    "  \"post_updates\": [{\"function\": \"split_score_to_group\", \"kwargs\": {\"attribute\": "
    "  \"score\"}}]}},"
    " {\"name\": \"negotiation\", \"params\": {\"negotiation_steps\": %d, \"proposal_grid\": %d, "
    "  \"session_turns\": %d}}]}";

static polis_env *small(int groups, int steps, int grid, int turns, test_alloc *al)
{
    char json[4096];
    snprintf(json, sizeof json, SMALL, groups, steps, grid, turns);
    return test_env(json, NULL, al);
}

static void test_layout(void)
{
    polis_env *env = open_file(DIR "negotiation.json");
    CHECK(env != NULL);
    if (!env) return;
    /* AdaSociety's n = 6 + 2R + P + 2 + C = 6 + 6 + 4 + 2 + 9 */
    CHECK_EQ_INT(polis_env_n_actions(env), 27);
    CHECK(id(env, "request_3") >= 0);
    CHECK(id(env, "accept") >= 0);
    CHECK(id(env, "decline") >= 0);
    CHECK(id(env, "propose_0.1") >= 0);
    CHECK_EQ_INT(id(env, "propose_0.9"), id(env, "propose_0.1") + 8);
    polis_obs_field f;
    CHECK(field(env, 0, "proposal", &f) != NULL);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_F32);
    CHECK_EQ_INT(f.shape[0], 4);
    CHECK(field(env, 0, "social_state", &f) != NULL);
    CHECK_EQ_INT(f.shape[0], 6); /* 4 agents + 2 groups */
    CHECK(field(env, 0, "negotiation", &f) != NULL);
    CHECK_EQ_INT(f.shape[0], 4);
    polis_env_reset(env, 1);
    CHECK_EQ_INT(state(env, 0, 0), 0);
    CHECK_EQ_INT(state(env, 0, 3), 20);
    polis_env_destroy(env);
    env = open_file(DIR "negotiation_hard.json");
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_actions(env), 37); /* 6 + 12 + 8 + 2 + 9 */
    CHECK_EQ_INT(polis_env_max_steps(env), 240);
    polis_env_reset(env, 1);
    CHECK_EQ_INT(state(env, 0, 3), 40);
    polis_env_destroy(env);
}

static void test_protocol(void)
{
    polis_env *env = small(2, 10, 10, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    event_log log;
    log_events(env, &log);
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 1);
    CHECK_EQ_INT(mask(env, 0, "request_0"), 0);
    for (int j = 1; j < 4; j++) CHECK_EQ_INT(available(env, 0, j), 1);
    CHECK_EQ_INT(available(env, 0, 0), 0);
    CHECK_EQ_INT(mask(env, 0, "request_2"), 1);
    CHECK_EQ_INT(mask(env, 0, "propose_0.5"), 0);
    CHECK_EQ_INT(mask(env, 0, "accept"), 0);
    CHECK_EQ_INT(mask(env, 0, "decline"), 0);

    /* t0: no two requests meet; a physical action is a flagged no-op in this stage */
    STEP(env, "request_2", "request_3", "request_1", "move_down");
    for (int a = 0; a < 3; a++) CHECK_EQ_INT(io->illegal[a], 0);
    CHECK_EQ_INT(io->illegal[3], 1);
    CHECK_EQ_INT(((const int32_t *)field(env, 3, "position", NULL))[0], 3);
    for (int a = 0; a < 4; a++) CHECK_EQ_INT(state(env, a, 1), -1);
    /* t1: a request lasts one step: 3 answering 1's request of t0 meets nothing */
    STEP(env, NULL, NULL, NULL, "request_1");
    CHECK_EQ_INT(state(env, 1, 1), -1);
    /* t2: 0 and 2 request each other: a session; t3 is odd, so the higher id moves first */
    STEP(env, "request_2", NULL, "request_0", NULL);
    CHECK_EQ_INT(state(env, 0, 1), 2);
    CHECK_EQ_INT(state(env, 2, 1), 0);
    CHECK_EQ_INT(state(env, 0, 2), 0);
    CHECK_EQ_INT(state(env, 2, 2), 1);
    CHECK_EQ_INT(mask(env, 2, "propose_0.1"), 1);
    CHECK_EQ_INT(mask(env, 2, "accept"), 0);  /* nothing to accept yet */
    CHECK_EQ_INT(mask(env, 2, "decline"), 0); /* the opening move is a proposal */
    CHECK_EQ_INT(mask(env, 2, "request_1"), 0);
    CHECK_EQ_INT(mask(env, 0, "propose_0.5"), 0); /* not its turn */
    CHECK_EQ_INT(available(env, 1, 0), 0);
    CHECK_EQ_INT(available(env, 1, 2), 0);
    CHECK_EQ_INT(available(env, 1, 3), 1);
    /* t3: miner_2 claims 0.6; carpenter_0's out-of-turn proposal is flagged */
    STEP(env, "propose_0.5", NULL, "propose_0.6", NULL);
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(io->illegal[2], 0);
    CHECK(NEAR(proposal(env, 0, 2), 0.6));
    CHECK(NEAR(proposal(env, 2, 0), 0.0));
    CHECK_EQ_INT(state(env, 0, 2), 1);
    CHECK_EQ_INT(mask(env, 0, "accept"), 1);
    CHECK_EQ_INT(mask(env, 0, "decline"), 1);
    CHECK_EQ_INT(mask(env, 0, "propose_0.9"), 1);
    CHECK_EQ_INT(mask(env, 2, "propose_0.9"), 0);
    /* t4: a counter-proposal replaces the pending one */
    STEP(env, "propose_0.5", NULL, NULL, NULL);
    CHECK(NEAR(proposal(env, 2, 0), 0.5));
    CHECK(NEAR(proposal(env, 0, 2), 0.0));
    char *json = NULL;
    polis_env_render(env, 0, "json", &json);
    CHECK_CONTAINS(json, "\"pending\": {\"by\": 0, \"share\": 0.5}, \"turns\": 2");
    CHECK_CONTAINS(json, "\"to\": {\"type\": \"player\", \"id\": 2}, \"attributes\": "
                         "{\"parity\": 0, \"proposal\": 0.5}}");
    CHECK_CONTAINS(json, "\"to\": {\"type\": \"player\", \"id\": 0}, \"attributes\": "
                         "{\"parity\": 1}}");
    polis_free(json);
    /* t5: miner_2 declines: no commitment, both free again */
    STEP(env, NULL, NULL, "decline", NULL);
    CHECK_EQ_INT(state(env, 0, 1), -1);
    CHECK_EQ_INT(state(env, 2, 1), -1);
    CHECK_EQ_INT(available(env, 0, 2), 1);
    CHECK(NEAR(split(env, 0), 1.0));
    /* t6-t8: again; miner_2 claims 0.3, carpenter_0 accepts 0.7 */
    STEP(env, "request_2", NULL, "request_0", NULL);
    STEP(env, NULL, NULL, "propose_0.3", NULL);
    STEP(env, "accept", NULL, NULL, NULL);
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK_EQ_INT(state(env, 0, 1), -1);
    CHECK(NEAR(split(env, 0), 0.7));
    CHECK(NEAR(split(env, 2), 0.3));
    CHECK(NEAR(split(env, 1), 1.0));
    CHECK_EQ_INT(member(env, 0, 0), 1);
    CHECK_EQ_INT(member(env, 2, 0), 1);
    CHECK_EQ_INT(available(env, 0, 2), 0); /* partners are not invited again */
    CHECK_EQ_INT(available(env, 0, 1), 1);
    /* t9, the stage's last step: 1 and 3 meet, and the stage's end breaks them up at once */
    STEP(env, NULL, "request_3", NULL, "request_1");
    CHECK_EQ_INT(state(env, 1, 1), -1);
    CHECK_EQ_INT(state(env, 1, 0), 1);
    CHECK_EQ_STR(log.text, "2 negotiation.matched 0 2 2\n"
                           "3 negotiation.proposed 2 0 0.6\n"
                           "4 negotiation.proposed 0 2 0.5\n"
                           "5 negotiation.ended 0 2 1\n"
                           "6 negotiation.matched 0 2 2\n"
                           "7 negotiation.proposed 2 0 0.3\n"
                           "8 negotiation.agreed 0 2 0.7 0\n"
                           "9 negotiation.matched 1 3 1\n"
                           "9 negotiation.ended 1 3 3\n");
    /* the physical stage: every negotiation action is masked, and flagged if sent */
    for (int a = 0; a < 4; a++) {
        CHECK_EQ_INT(mask(env, a, "request_1") + mask(env, a, "request_0"), 0);
        CHECK_EQ_INT(mask(env, a, "accept") + mask(env, a, "propose_0.5"), 0);
        CHECK_EQ_INT(available(env, a, (a + 1) % 4), 0);
    }
    /* carpenter_0 picks a wood (+1): 0.7 to it, 0.3 to miner_2; carpenter_1 keeps its stone */
    STEP(env, "pick_wood", "pick_stone", NULL, "request_1");
    CHECK_EQ_INT(io->illegal[3], 1);
    CHECK(NEAR(io->rewards[0], 0.7));
    CHECK(NEAR(io->rewards[2], 0.3));
    CHECK(NEAR(io->rewards[1], 1.0));
    CHECK(NEAR(io->rewards[3], 0.0));
    polis_env_destroy(env);
}

/* AdaSociety's verified trace (spec 14.6): 0 and 1 agree 0.7 / 0.3; later 1, for the group,
 * accepts outsider 2's claim of 0.5: {0: 0.35, 1: 0.15, 2: 0.5}; then outsider 3 joins by
 * claiming 0.2 from 0: everyone else's weight times 0.8. */
static void test_outsiders(void)
{
    polis_env *env = small(2, 20, 10, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    STEP(env, "request_1", "request_0", NULL, NULL); /* t0 */
    STEP(env, NULL, "propose_0.3", NULL, NULL);      /* t1: 1 moves (odd) */
    STEP(env, "accept", NULL, NULL, NULL);           /* t2 */
    CHECK(NEAR(split(env, 0), 0.7));
    CHECK(NEAR(split(env, 1), 0.3));
    CHECK_EQ_INT(available(env, 1, 0), 0);
    STEP(env, NULL, NULL, NULL, NULL);               /* t3 */
    STEP(env, NULL, "request_2", "request_1", NULL); /* t4: 1 speaks for {0, 1} */
    STEP(env, NULL, NULL, "propose_0.5", NULL);      /* t5 */
    STEP(env, NULL, "accept", NULL, NULL);           /* t6 */
    CHECK(NEAR(split(env, 0), 0.35));
    CHECK(NEAR(split(env, 1), 0.15));
    CHECK(NEAR(split(env, 2), 0.5));
    for (int a = 0; a < 3; a++) CHECK_EQ_INT(member(env, a, 0), 1);
    STEP(env, NULL, NULL, NULL, NULL);               /* t7 */
    STEP(env, "request_3", NULL, NULL, "request_0"); /* t8 */
    STEP(env, NULL, NULL, NULL, "propose_0.2");      /* t9 */
    STEP(env, "accept", NULL, NULL, NULL);           /* t10 */
    CHECK(NEAR(split(env, 0), 0.28));
    CHECK(NEAR(split(env, 1), 0.12));
    CHECK(NEAR(split(env, 2), 0.4));
    CHECK(NEAR(split(env, 3), 0.2));
    double sum = 0;
    for (int a = 0; a < 4; a++) sum += split(env, a);
    CHECK(NEAR(sum, 1.0));
    char *text = NULL;
    polis_env_render(env, 3, "text", &text);
    CHECK_CONTAINS(text, "Groups (reward weights): group 0: carpenter_0 0.28, carpenter_1 0.12, "
                         "miner_2 0.4, miner_3 0.2.\nYou are in group 0 with weight 0.2: you "
                         "get that share of every member's reward.\n");
    CHECK_CONTAINS(text, "You are not bargaining. You may request: nobody.\n");
    polis_free(text);
    polis_env_destroy(env);
}

/* Resets env (seed 1) and pairs agents up in four steps: {0, 1} and {2, 3} agree at t2 (both
 * sides propose 0.5), t3 passes. */
static void two_groups(polis_env *env)
{
    polis_env_reset(env, 1);
    STEP(env, "request_1", "request_0", "request_3", "request_2"); /* t0 */
    STEP(env, NULL, "propose_0.5", NULL, "propose_0.5");           /* t1 */
    STEP(env, "accept", NULL, "accept", NULL);                     /* t2 */
    STEP(env, NULL, NULL, NULL, NULL);                             /* t3 */
}

/* Two groups agree: each side's weights scale by its share and one group absorbs the other.
 * Then two members of one group accept in the same step: the merges apply in turn; a session
 * whose sides became partners through an earlier merge of the step is void. */
static void test_groups(void)
{
    polis_env *env = small(2, 20, 10, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    event_log log;
    log_events(env, &log);
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 1);
    STEP(env, "request_1", "request_0", "request_3", "request_2"); /* t0 */
    STEP(env, NULL, "propose_0.5", NULL, "propose_0.5");           /* t1 */
    STEP(env, "accept", NULL, "accept", NULL);                     /* t2 */
    CHECK_EQ_INT(member(env, 0, 0) + member(env, 1, 0), 2);
    CHECK_EQ_INT(member(env, 2, 1) + member(env, 3, 1), 2);
    STEP(env, NULL, NULL, NULL, NULL);               /* t3 */
    STEP(env, NULL, "request_3", NULL, "request_1"); /* t4 */
    STEP(env, NULL, NULL, NULL, "propose_0.4");      /* t5 */
    STEP(env, NULL, "accept", NULL, NULL);           /* t6 */
    CHECK(NEAR(split(env, 0), 0.3));
    CHECK(NEAR(split(env, 1), 0.3));
    CHECK(NEAR(split(env, 2), 0.2));
    CHECK(NEAR(split(env, 3), 0.2));
    for (int a = 0; a < 4; a++) {
        CHECK_EQ_INT(member(env, a, 0), 1);
        CHECK_EQ_INT(member(env, a, 1), 0);
    }
    char *json = NULL;
    polis_env_render(env, 0, "json", &json);
    CHECK_CONTAINS(json, "\"groups\": [{\"id\": 0, \"weights\": {\"0\": 0.3, \"1\": 0.3, \"2\": "
                         "0.2, \"3\": 0.2}}], \"group\": 0}");
    polis_free(json);
    polis_env_destroy(env);

    /* {0, 1} and {2, 3}; sessions 0-2 and 1-3 open together; 0 accepts (the groups merge),
     * then 1's accept finds 3 already a partner: flagged, and the session is void */
    env = small(2, 20, 10, 0, NULL);
    log_events(env, &log);
    io = polis_env_io(env);
    two_groups(env);                                               /* t0 .. t3 */
    STEP(env, "request_2", "request_3", "request_0", "request_1"); /* t4 */
    STEP(env, NULL, NULL, "propose_0.5", "propose_0.5");           /* t5 */
    STEP(env, "accept", "accept", NULL, NULL);                     /* t6 */
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK_EQ_INT(io->illegal[1], 1);
    for (int a = 0; a < 4; a++) CHECK(NEAR(split(env, a), 0.25));
    CHECK_EQ_INT(state(env, 1, 1), -1);
    CHECK_CONTAINS(log.text, "6 negotiation.agreed 0 2 0.5 0\n6 negotiation.ended 1 3 4\n");
    polis_env_destroy(env);

    /* {0, 1}; 0 with 2 and 1 with 3 agree in the same step: the second merge scales the
     * first's result, so the weights still sum to 1 */
    env = small(2, 20, 10, 0, NULL);
    polis_env_reset(env, 1);
    STEP(env, "request_1", "request_0", NULL, NULL); /* t0 */
    STEP(env, NULL, "propose_0.5", NULL, NULL);      /* t1 */
    STEP(env, "accept", NULL, NULL, NULL);           /* t2 */
    STEP(env, NULL, NULL, NULL, NULL);               /* t3 */
    STEP(env, "request_2", "request_3", "request_0", "request_1");
    STEP(env, NULL, NULL, "propose_0.5", "propose_0.5");
    STEP(env, "accept", "accept", NULL, NULL);
    CHECK(NEAR(split(env, 0), 0.125));
    CHECK(NEAR(split(env, 1), 0.125));
    CHECK(NEAR(split(env, 2), 0.25));
    CHECK(NEAR(split(env, 3), 0.5));
    polis_env_destroy(env);
}

/* Two accepts between the same two groups, with unequal claims: {0, 1} and {2, 3}; 2 claims
 * 0.7 from 0 and 3 claims 0.6 from 1. polis applies the first and voids the second, whether
 * the second comes in the same step or later: {0, 1: 0.15; 2, 3: 0.35}. AdaSociety's code on
 * this trace gives {0, 1: 0.111; 2, 3: 0.389} in one step and 0.15 / 0.35 two steps apart
 * (README, "Where polis differs"). */
static void test_two_accepts(void)
{
    for (int late = 0; late < 2; late++) {
        polis_env *env = small(2, 20, 10, 0, NULL);
        CHECK(env != NULL);
        if (!env) return;
        event_log log;
        log_events(env, &log);
        const polis_io *io = polis_env_io(env);
        two_groups(env);                                               /* t0 .. t3 */
        STEP(env, "request_2", "request_3", "request_0", "request_1"); /* t4 */
        STEP(env, NULL, NULL, "propose_0.7", "propose_0.6");           /* t5 */
        if (!late) {
            STEP(env, "accept", "accept", NULL, NULL); /* t6 */
            CHECK_EQ_INT(io->illegal[1], 1);
        } else {
            STEP(env, "accept", NULL, NULL, NULL); /* t6: the merge ends session 1-3 */
            CHECK_EQ_INT(state(env, 1, 1), -1);
            STEP(env, NULL, NULL, NULL, NULL);     /* t7 */
            STEP(env, NULL, "accept", NULL, NULL); /* t8: nothing left to accept */
            CHECK_EQ_INT(io->illegal[1], 1);
        }
        CHECK_CONTAINS(log.text, "6 negotiation.agreed 0 2 0.3 0\n6 negotiation.ended 1 3 4\n");
        CHECK(NEAR(split(env, 0), 0.15));
        CHECK(NEAR(split(env, 1), 0.15));
        CHECK(NEAR(split(env, 2), 0.35));
        CHECK(NEAR(split(env, 3), 0.35));
        polis_env_destroy(env);
    }
}

/* Timeouts: a session breaks up after session_turns turns (a pass is a turn), and when the
 * stage ends. */
static void test_timeouts(void)
{
    polis_env *env = small(2, 20, 10, 3, NULL);
    CHECK(env != NULL);
    if (!env) return;
    event_log log;
    log_events(env, &log);
    polis_env_reset(env, 1);
    STEP(env, "request_2", NULL, "request_0", NULL); /* t0 */
    STEP(env, NULL, NULL, "propose_0.6", NULL);      /* t1: turn 1 */
    char *text = NULL;
    polis_env_render(env, 0, "text", &text);
    CHECK_CONTAINS(text, "You are bargaining with miner_2; it is your turn. miner_2 proposes: "
                         "miner_2 gets 0.6, you get 0.4. Answer \"accept\", \"decline\" or "
                         "\"propose <your share>\" (0.1 .. 0.9). The session breaks up after 3 "
                         "turns (1 taken).\n");
    polis_free(text);
    polis_env_render(env, 2, "text", &text);
    CHECK_CONTAINS(text, "You are bargaining with carpenter_0; it is their turn. Your proposal: "
                         "you get 0.6, carpenter_0 gets 0.4. Wait (noop).");
    polis_free(text);
    STEP(env, "propose_0.5", NULL, NULL, NULL); /* t2: turn 2 */
    CHECK_EQ_INT(state(env, 0, 1), 2);
    STEP(env, NULL, NULL, NULL, NULL); /* t3: miner_2 passes, turn 3 */
    CHECK_EQ_INT(state(env, 0, 1), -1);
    CHECK_CONTAINS(log.text, "3 negotiation.ended 0 2 2\n");
    polis_env_destroy(env);

    env = small(2, 4, 10, 0, NULL);
    log_events(env, &log);
    polis_env_reset(env, 1);
    STEP(env, NULL, "request_3", NULL, "request_1"); /* t0 */
    STEP(env, NULL, NULL, NULL, "propose_0.5");      /* t1 */
    STEP(env, NULL, "propose_0.6", NULL, NULL);      /* t2 */
    CHECK_EQ_INT(state(env, 1, 1), 3);
    STEP(env, NULL, NULL, NULL, NULL); /* t3: the last negotiation step */
    CHECK_EQ_INT(state(env, 1, 1), -1);
    CHECK_EQ_INT(state(env, 1, 0), 1);
    CHECK(NEAR(split(env, 1), 1.0));
    CHECK_CONTAINS(log.text, "3 negotiation.ended 1 3 3\n");
    CHECK_EQ_INT(mask(env, 1, "propose_0.5"), 0);
    polis_env_destroy(env);
}

static void test_parser(void)
{
    polis_env *env = small(2, 20, 10, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    int32_t out = -1;
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.6", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.6"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "Propose 60%", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.6"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 3/5", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.6"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose_0.6", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.6"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "accept", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "accept"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "reject", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "decline"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "request miner_3", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "request_3"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "request 2", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "request_2"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.65", &out), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "negotiation: \"propose 0.65\": 0.65 is not on the proposal grid (multiples of "
                 "0.1 from 0.1 to 0.9) [parse \"propose 0.65\", agent 0 (carpenter_0), tick 0]");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 1", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "1 is not on the proposal grid");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0", &out), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose half", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "negotiation: \"propose half\": expected \"propose "
                                         "<your share>\", a share from 0.1 to 0.9 in steps of "
                                         "0.1 (\"propose 0.6\", \"propose 60%\")");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "accept it", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "\"accept\" takes no argument");
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "request mnier_3", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "negotiation: \"request mnier_3\": expected \"request "
                                         "<agent name or id>\"; there is no agent \"mnier_3\"");
    polis_env_destroy(env);
    /* a grid of quarters */
    env = small(2, 20, 4, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(id(env, "propose_0.25") >= 0);
    CHECK(id(env, "propose_0.75") >= 0);
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.75", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.75"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.3", &out), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "(multiples of 0.25 from 0.25 to 0.75)");
    polis_env_destroy(env);
    /* sevenths: names carry six digits, which the parser accepts like the fraction */
    env = small(2, 20, 7, 0, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 1/7", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.142857"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.142857", &out), POLIS_OK);
    CHECK_EQ_INT(out, id(env, "propose_0.142857"));
    CHECK_EQ_INT(polis_env_parse_action(env, 0, "propose 0.1429", &out), POLIS_ERR_INVALID);
    polis_env_destroy(env);
}

static void test_bad_params(void)
{
    char json[4096];
    snprintf(json, sizeof json, SMALL, 2, 20, 1, 0);
    CHECK_CONTAINS(test_env_error(json), "plugins[2].params.proposal_grid");
    /* A negotiation stage as long as the episode: the episode is truncated inside it. */
    polis_env *shortened = small(2, 30, 10, 0, NULL);
    CHECK(shortened != NULL);
    if (shortened) {
        CHECK_EQ_INT(polis_env_reset(shortened, 1), POLIS_OK);
        for (int t = 0; t < 30; t++) {
            CHECK_EQ_INT(state(shortened, 0, 0), 0);
            CHECK(!polis_env_done(shortened));
            CHECK_EQ_INT(step(shortened, (const char *[]){NULL, NULL, NULL, NULL}), POLIS_OK);
        }
        CHECK(polis_env_done(shortened));
        polis_env_destroy(shortened);
    }
    snprintf(json, sizeof json, SMALL, 1, 20, 10, 0);
    CHECK_EQ_STR(test_env_error(json),
                 "<string>: plugins[2]: plugin \"negotiation\" start failed: negotiation: the "
                 "social plugin has max_groups 1, but 4 agents can form up to 2 groups by "
                 "agreement (set plugins.social.params.max_groups to at least 2)");
    CHECK_CONTAINS(test_env_error("{\"agents\": 2, \"plugins\": [\"negotiation\"]}"), "social");
}

/* A random policy over the masks and the stage (only negotiation actions in the first
 * stage): never flagged. */
static uint64_t run(polis_env *env, uint64_t seed, int episodes, long *illegal, int *steps,
                    int *agreements)
{
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, seed, 0x6e65676fULL);
    int32_t first = id(env, "request_0"), last = id(env, "propose_0.9");
    uint64_t h = 0;
    for (int e = 0; e < episodes; e++) {
        polis_env_reset(env, seed + (uint64_t)e);
        *steps = 0;
        while (!polis_env_done(env)) {
            bool talk = state(env, 0, 0) == 0;
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
                int32_t legal[64], n = 0;
                for (int32_t k = 0; k < io->n_actions && n < 64; k++)
                    if (m[k] && (!talk || k == 0 || (k >= first && k <= last))) legal[n++] = k;
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
        for (int32_t a = 0; a < io->n_agents; a++) *agreements += split(env, a) < 0.999f;
    }
    return h;
}

static void test_golden(const char *file, int length, uint64_t golden1, uint64_t golden2)
{
    polis_env *env = open_file(file);
    CHECK(env != NULL);
    if (!env) return;
    long illegal = 0;
    int steps = 0, agreements = 0;
    uint64_t h1 = run(env, 1, 1, &illegal, &steps, &agreements);
    CHECK_EQ_INT(steps, length);
    uint64_t h2 = run(env, 2, 4, &illegal, &steps, &agreements);
    CHECK_EQ_INT(illegal, 0);
    CHECK(agreements > 0); /* random bargaining does reach agreements */
    if (h1 != golden1 || h2 != golden2)
        fprintf(stderr, "%s: hashes 0x%016llx 0x%016llx\n", file, (unsigned long long)h1,
                (unsigned long long)h2);
    CHECK(h1 == golden1);
    CHECK(h2 == golden2);
    CHECK(run(env, 1, 1, &illegal, &steps, &agreements) == h1);
    polis_env_destroy(env);
}

/* A failing allocator: whichever allocation of create fails, creation fails cleanly with
 * POLIS_ERR_NOMEM and leaks nothing. */
static void test_alloc_sweep(void)
{
    long total = 0, failures = 0;
    CHECK_EQ_INT(test_create_sweep(DIR "negotiation.json", &total, &failures), 0);
    CHECK(failures > total / 2);
}

static void test_no_alloc(void)
{
    test_alloc al = {0};
    polis_env *env = small(2, 20, 10, 4, &al);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, 5, 1);
    long steps = 0;
    for (int e = 0; e < 30; e++) {
        polis_env_reset(env, (uint64_t)e);
        long before = al.calls;
        while (!polis_env_done(env)) {
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
                int32_t legal[64], n = 0;
                for (int32_t k = 0; k < io->n_actions && n < 64; k++)
                    if (m[k]) legal[n++] = k;
                io->actions[a] = legal[polis_rng_below(&r, (uint32_t)n)];
            }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            steps++;
        }
        CHECK_EQ_INT(al.calls, before);
    }
    CHECK(steps >= 900);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

/* Element k of agent a's state vector, in whichever dtype the env stores it. */
static int stored_state(polis_env *env, int32_t agent, int k)
{
    polis_obs_field f;
    const void *p = field(env, agent, "negotiation", &f);
    return f.dtype == POLIS_DTYPE_I8 ? ((const int8_t *)p)[k] : ((const int32_t *)p)[k];
}

/* Counts the agents whose state vector differs from [stage, -1, 0, left] (every agent's from
 * the physical stage on; -1 for the opponent and 0 for the turn are checked only then). */
static int wrong_states(polis_env *env, int stage, int left)
{
    int wrong = 0;
    for (int32_t a = 0; a < polis_env_n_agents(env); a++) {
        wrong += stored_state(env, a, 0) != stage || stored_state(env, a, 3) != left;
        if (stage) wrong += stored_state(env, a, 1) != -1 || stored_state(env, a, 2) != 0;
    }
    return wrong;
}

/* From the physical stage on, the state vector is written once into each record: a buffer the
 * caller moves (here to garbage) is written again, so is the first one when it comes back
 * (garbage too by then), and a reset starts the negotiation stage's vector again. Plain (i32)
 * and compact (i8) observations. */
static void test_state_written_once(bool compact)
{
    polis_options o = test_options(NULL, NULL);
    o.compact_observations = compact;
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(DIR "negotiation.json", &o, &env, &err), POLIS_OK);
    if (!env) return;
    polis_obs_field f;
    field(env, 0, "negotiation", &f);
    CHECK_EQ_INT(f.dtype, compact ? POLIS_DTYPE_I8 : POLIS_DTYPE_I32);
    polis_io *io = (polis_io *)polis_env_io(env);
    const size_t bytes = (size_t)io->n_agents * io->obs_size;
    uint8_t *own = io->obs, *other = malloc(bytes);
    CHECK(other != NULL);
    if (!other) {
        polis_env_destroy(env);
        return;
    }
    int32_t random = polis_env_policy_find(env, "random");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    int wrong = wrong_states(env, 0, 20);
    for (int t = 1; t <= 40; t++) {
        if (t == 25) { /* moved to garbage */
            memset(other, 0x5a, bytes);
            io->obs = other;
        }
        if (t == 30) { /* back to the first buffer, garbage by now */
            memset(own, 0x5a, bytes);
            io->obs = own;
        }
        CHECK_EQ_INT(polis_env_policy_act(env, random, NULL, 0), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        wrong += wrong_states(env, t >= 20, t >= 20 ? 0 : 20 - t);
    }
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    wrong += wrong_states(env, 0, 20);
    for (int t = 1; t <= 25; t++) {
        CHECK_EQ_INT(polis_env_policy_act(env, random, NULL, 0), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        wrong += wrong_states(env, t >= 20, t >= 20 ? 0 : 20 - t);
    }
    CHECK_EQ_INT(wrong, 0);
    polis_env_destroy(env);
    free(other);
}

#ifdef POLIS_TEST_POLICIES
/* The scripted policy: carpenters and miners pair up and agree on fair splits; nothing is
 * flagged; the physical stage runs society's greedy action. */
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
    int32_t P = io->n_agents;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        polis_env_reset(env, seed);
        long illegal = 0;
        double total = 0;
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, pol, NULL, 0), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int32_t a = 0; a < P; a++) {
                illegal += io->illegal[a];
                total += io->rewards[a];
            }
        }
        CHECK_EQ_INT(illegal, 0);
        for (int32_t a = 0; a < P; a++) {
            /* everyone is in a mixed group of one carpenter and one miner at fair shares */
            CHECK(NEAR(split(env, a), 0.5));
        }
        CHECK(total > 0);
    }
    polis_env_destroy(env);
}

/* random_ada: AdaSociety's random baseline (society's policy). In the negotiation stage it never
 * passes while another action is legal (AdaSociety's mask had no no_act there), and only sends
 * legal actions; in the physical stage noop is one of its choices, and so is produce without
 * the inputs (AdaSociety's mask offered it; polis flags it illegal). */
static void test_random_ada(const char *file)
{
    polis_env *env = open_file(file);
    CHECK(env != NULL);
    if (!env) return;
    int32_t pol = polis_env_policy_find(env, "random_ada");
    CHECK(pol >= 0);
    if (pol < 0) {
        polis_env_destroy(env);
        return;
    }
    const polis_io *io = polis_env_io(env);
    int32_t P = io->n_agents, A = io->n_actions;
    long passes_forced = 0, passes_free = 0, physical_noops = 0, illegal = 0, matched = 0;
    long illegal_produce = 0;
    int32_t produce = polis_env_action_id(env, "produce");
    for (uint64_t seed = 1; seed <= 10; seed++) {
        polis_env_reset(env, seed);
        for (int64_t t = 0; !polis_env_done(env); t++) {
            CHECK_EQ_INT(polis_env_policy_act(env, pol, NULL, 0), POLIS_OK);
            for (int32_t a = 0; a < P; a++) {
                const uint8_t *row = io->masks + (size_t)a * (size_t)A;
                int others = 0;
                for (int32_t k = 1; k < A; k++) others += row[k];
                if (t < 20 && io->actions[a] == 0) {
                    if (others)
                        passes_forced++;
                    else
                        passes_free++;
                }
                if (t >= 20 && io->actions[a] == 0) physical_noops++;
            }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int32_t a = 0; a < P; a++) {
                bool produce_unheld = t >= 20 && io->actions[a] == produce;
                illegal_produce += io->illegal[a] && produce_unheld;
                illegal += io->illegal[a] && !produce_unheld;
            }
            if (t < 20)
                for (int32_t a = 0; a < P; a++) matched += state(env, a, 1) >= 0;
        }
    }
    CHECK_EQ_INT(passes_forced, 0); /* never a pass while something else is legal */
    CHECK(passes_free > 0);         /* waiting for the other side's turn: noop only */
    CHECK(physical_noops > 0);
    CHECK_EQ_INT(illegal, 0);
    CHECK(illegal_produce > 0);
    CHECK(matched > 0); /* requests meet: sessions happen */
    polis_env_destroy(env);
}
#endif

int main(void)
{
    test_layout();
    test_protocol();
    test_outsiders();
    test_groups();
    test_two_accepts();
    test_timeouts();
    test_parser();
    test_bad_params();
    test_no_alloc();
    test_state_written_once(false);
    test_state_written_once(true);
    test_alloc_sweep();
    test_golden(DIR "negotiation.json", 120, 0x26e294160ecd1563ULL, 0x37ac6d0de7567316ULL);
    test_golden(DIR "negotiation_hard.json", 240, 0xc1f16d165171197fULL, 0xbf4ebd4614ece594ULL);
#ifdef POLIS_TEST_POLICIES
    test_scripted(DIR "negotiation.json");
    test_scripted(DIR "negotiation_hard.json");
    test_random_ada(DIR "negotiation.json");
#endif
    CHECK_DONE();
}
