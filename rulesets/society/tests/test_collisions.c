/* Simultaneous moves resolved by AdaSociety's algorithm (spec §8): swaps, following (in
 * either id order), cycles, moves into a staying agent or a block, contests with a uniformly
 * random winner from the env RNG, losers whose stay cascades back along a chain, and a
 * contest winner undone by a later cascade. */
#include "fixture.h"

/* An env on a 6 x 6 torus with agents at the given cells (x, y) and blocks. */
static polis_env *open_case(int n, const int (*pos)[2], const char *blocks)
{
    char players[1024], params[2048];
    size_t used = 0;
    for (int a = 0; a < n; a++)
        used += (size_t)snprintf(players + used, sizeof players - used, "%s[%d, %d]", a ? ", " : "",
                                 pos[a][0], pos[a][1]);
    char block_part[256] = "";
    if (blocks)
        snprintf(block_part, sizeof block_part, "\"blocks\": [{\"positions\": %s}], ", blocks);
    snprintf(
        params, sizeof params,
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 6, \"y\": 6}},"
        " \"jobs\": {\"walker\": {\"fov\": 0}},"
        " \"static\": {\"resources\": [{\"name\": \"wood\", \"positions\": [5, 5], \"num\": 1}],"
        "             %s\"players\": [{\"job\": \"walker\", \"positions\": [%s]}]}}",
        block_part, players);
    char *json = soc_scenario(n, 100, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    return env;
}

static int at(polis_env *env, int a, int x, int y)
{
    return soc_pos(env, a, 0) == x && soc_pos(env, a, 1) == y;
}

static void test_swap_follow_cycle(void)
{
    /* swap */
    polis_env *env = open_case(2, (const int[][2]){{2, 2}, {3, 2}}, NULL);
    if (!env) return;
    soc_events ev;
    soc_events_attach(&ev, env);
    polis_env_reset(env, 1);
    soc_events_clear(&ev);
    soc_step(env, (const char *[]){"move_down", "move_up"});
    CHECK(at(env, 0, 3, 2) && at(env, 1, 2, 2));
    CHECK_EQ_STR(ev.text, "agent.moved agent=0 from_x=2 from_y=2 x=3 y=2\n"
                          "agent.moved agent=1 from_x=3 from_y=2 x=2 y=2\n");
    /* follow: the leader has the higher id, then the lower id */
    soc_step(env, (const char *[]){"move_up", "move_up"}); /* 0: (3,2)->(2,2), 1: (2,2)->(1,2) */
    CHECK(at(env, 0, 2, 2) && at(env, 1, 1, 2));
    soc_step(env, (const char *[]){"move_down", "move_down"}); /* 0 leads now */
    CHECK(at(env, 0, 3, 2) && at(env, 1, 2, 2));
    /* into a staying agent: blocked, reason 2 */
    soc_events_clear(&ev);
    soc_step(env, (const char *[]){NULL, "move_down"});
    CHECK(at(env, 0, 3, 2) && at(env, 1, 2, 2));
    CHECK_EQ_STR(ev.text, "agent.blocked agent=1 x=2 y=2 to_x=3 to_y=2 reason=2\n");
    polis_env_destroy(env);

    /* a rotating 2 x 2 cycle: everyone moves */
    env = open_case(4, (const int[][2]){{1, 1}, {1, 2}, {2, 2}, {2, 1}}, NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    soc_step(env, (const char *[]){"move_right", "move_down", "move_left", "move_up"});
    CHECK(at(env, 0, 1, 2) && at(env, 1, 2, 2) && at(env, 2, 2, 1) && at(env, 3, 1, 1));
    /* a cycle with one agent staying blocks everyone behind it */
    soc_step(env, (const char *[]){"move_down", "move_left", NULL, "move_right"});
    CHECK(at(env, 0, 1, 2) && at(env, 1, 2, 2) && at(env, 2, 2, 1) && at(env, 3, 1, 1));
    polis_env_destroy(env);
}

static void test_blocks(void)
{
    polis_env *env = open_case(2, (const int[][2]){{2, 2}, {2, 3}}, "[3, 2]");
    if (!env) return;
    soc_events ev;
    soc_events_attach(&ev, env);
    polis_env_reset(env, 1);
    CHECK_EQ_INT(soc_grid(env, 0, 1, 0, 0), 0); /* fov 0: only the own cell */
    soc_events_clear(&ev);
    /* 0 walks into the block; 1 follows 0 (left into 0's cell): both stay */
    soc_step(env, (const char *[]){"move_down", "move_left"});
    CHECK(at(env, 0, 2, 2) && at(env, 1, 2, 3));
    CHECK_EQ_STR(ev.text, "agent.blocked agent=0 x=2 y=2 to_x=3 to_y=2 reason=1\n"
                          "agent.blocked agent=1 x=2 y=3 to_x=2 to_y=2 reason=2\n");
    polis_env_destroy(env);
}

static void test_contest(void)
{
    /* 0 and 2 contest (2, 2); 1 stays out of the way. */
    polis_env *env = open_case(2, (const int[][2]){{1, 2}, {3, 2}}, NULL);
    if (!env) return;
    int wins0 = 0, wins1 = 0;
    for (uint64_t seed = 0; seed < 400; seed++) {
        polis_env_reset(env, seed);
        soc_step(env, (const char *[]){"move_down", "move_up"});
        int w0 = at(env, 0, 2, 2), w1 = at(env, 1, 2, 2);
        CHECK(w0 + w1 == 1);
        CHECK(w0 ? at(env, 1, 3, 2) : at(env, 0, 1, 2));
        wins0 += w0;
        wins1 += w1;
    }
    /* uniform: 400 draws, each side wins 200 +- 4 sigma (40) */
    CHECK(wins0 > 160 && wins0 < 240);
    CHECK_EQ_INT(wins0 + wins1, 400);
    /* the same seed gives the same winner */
    polis_env_reset(env, 11);
    soc_step(env, (const char *[]){"move_down", "move_up"});
    int first = at(env, 0, 2, 2);
    polis_env_reset(env, 11);
    soc_step(env, (const char *[]){"move_down", "move_up"});
    CHECK_EQ_INT(at(env, 0, 2, 2), first);
    polis_env_destroy(env);
}

/* A -> c <- B with C following B: when B loses the contest, C stays too (cascade). */
static void test_chain(void)
{
    polis_env *env = open_case(3, (const int[][2]){{2, 1}, {2, 3}, {2, 4}}, NULL);
    if (!env) return;
    soc_events ev;
    soc_events_attach(&ev, env);
    int b_lost = 0, b_won = 0;
    for (uint64_t seed = 0; seed < 100; seed++) {
        polis_env_reset(env, seed);
        soc_events_clear(&ev);
        soc_step(env, (const char *[]){"move_right", "move_left", "move_left"});
        if (at(env, 1, 2, 2)) {
            b_won++;
            CHECK(at(env, 0, 2, 1) && at(env, 2, 2, 3));
        } else {
            b_lost++;
            CHECK(at(env, 0, 2, 2) && at(env, 1, 2, 3) && at(env, 2, 2, 4));
            CHECK_CONTAINS(ev.text, "agent.blocked agent=1 x=2 y=3 to_x=2 to_y=2 reason=3\n");
            CHECK_CONTAINS(ev.text, "agent.blocked agent=2 x=2 y=4 to_x=2 to_y=3 reason=2\n");
        }
    }
    CHECK(b_lost > 0 && b_won > 0);
    polis_env_destroy(env);
}

/* W and L contest c (claimed first); Z leaves c for d, which Q contests. When Z loses d it
 * stays on c, and the cascade undoes c's winner as well. */
static void test_winner_undone(void)
{
    /* ids: W 0 at (1,2) -> down c(2,2); Z 1 at c -> down d(3,2); Q 2 at (4,2) -> up d;
     * L 3 at (2,3) -> left c. */
    polis_env *env = open_case(4, (const int[][2]){{1, 2}, {2, 2}, {4, 2}, {2, 3}}, NULL);
    if (!env) return;
    int z_lost = 0, z_won = 0;
    for (uint64_t seed = 0; seed < 200; seed++) {
        polis_env_reset(env, seed);
        soc_step(env, (const char *[]){"move_down", "move_down", "move_up", "move_left"});
        if (at(env, 1, 3, 2)) {
            z_won++;
            CHECK(at(env, 2, 4, 2));
            CHECK(at(env, 0, 2, 2) + at(env, 3, 2, 2) == 1);
        } else {
            z_lost++;
            CHECK(at(env, 1, 2, 2) && at(env, 2, 3, 2));
            CHECK(at(env, 0, 1, 2) && at(env, 3, 2, 3));
        }
    }
    CHECK(z_lost > 0 && z_won > 0);
    polis_env_destroy(env);
}

/* A move without a rival draws nothing from the env RNG: the draws a Lua rule logs after each
 * step are the same whether or not an agent walks alone. */
static void test_no_needless_draws(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 6, \"y\": 6}},"
        " \"jobs\": {\"walker\": {\"fov\": 0}},"
        " \"static\": {\"resources\": [{\"name\": \"wood\", \"positions\": [5, 5], \"num\": 1}],"
        "             \"players\": [{\"job\": \"walker\", \"positions\": [[0, 0], [3, 3]]}]}}";
    char *json = soc_scenario(2, 100, params, ", \"scripts\": [\"lua/draws.lua\"]");
    test_log walk = {0}, stay = {0};
    polis_env *a = soc_open(json, &walk, NULL), *b = soc_open(json, &stay, NULL);
    free(json);
    CHECK(a && b);
    if (!a || !b) return;
    polis_env_reset(a, 4);
    polis_env_reset(b, 4);
    for (int t = 0; t < 10; t++) {
        soc_step(a, (const char *[]){"move_right", NULL}); /* around the row x = 0 */
        soc_step(b, (const char *[]){NULL, NULL});
    }
    CHECK(!at(a, 0, 0, 0));
    CHECK_EQ_INT(walk.lines, 10);
    CHECK_EQ_STR(walk.text, stay.text);
    polis_env_destroy(a);
    polis_env_destroy(b);
}

int main(void)
{
    test_no_needless_draws();
    test_swap_follow_cycle();
    test_blocks();
    test_contest();
    test_chain();
    test_winner_undone();
    CHECK_DONE();
}
