/* gather's rules core (core.h) driven directly, without the engine, on crafted states: moves
 * (legal, blocked, off the map, on a torus), collecting and respawning, the end of the
 * episode, the reward, the observation window, and reset's placement. */
#include <string.h>

#include "check.h"
#include "core.h"

#define W 5
#define H 4
#define N 3

typedef struct game {
    gather_core c;
    int32_t agents[W * H], coins[W * H], step[N], total[N];
    gather_pos pos[N];
    int32_t window[(2 * 1 + 1) * (2 * 1 + 1)];
} game;

/* An empty W x H map with N agents at (0,0), (1,0), (2,0); view 1. */
static void setup(game *g, bool wrap, bool respawn)
{
    memset(g, 0, sizeof *g);
    g->c = (gather_core){.p = {.coins = 0, .coin_value = 2.5, .view = 1, .respawn = respawn},
                         .n_agents = N,
                         .width = W,
                         .height = H,
                         .wrap = wrap,
                         .agents = g->agents,
                         .coins = g->coins,
                         .pos = g->pos,
                         .step_coins = g->step,
                         .total_coins = g->total};
    for (int32_t a = 0; a < N; a++) {
        g->pos[a] = (gather_pos){a, 0};
        g->agents[a] = a + 1;
    }
}

static void test_moves(void)
{
    game g;
    setup(&g, false, false);
    gather_pos from, t;
    /* off the bounded map: illegal, nothing moves */
    CHECK(!gather_target(&g.c, g.pos[0], GATHER_NORTH, &t));
    CHECK(!gather_target(&g.c, g.pos[0], GATHER_WEST, &t));
    CHECK_EQ_INT(gather_move(&g.c, 0, GATHER_NORTH, &from), -1);
    /* into another agent: blocked, not illegal */
    CHECK(gather_target(&g.c, g.pos[0], GATHER_EAST, &t));
    CHECK_EQ_INT(gather_move(&g.c, 0, GATHER_EAST, &from), 0);
    CHECK_EQ_INT(g.pos[0].x, 0);
    /* a free cell: the map and the position follow */
    CHECK_EQ_INT(gather_move(&g.c, 1, GATHER_SOUTH, &from), 1);
    CHECK_EQ_INT(from.x, 1);
    CHECK_EQ_INT(from.y, 0);
    CHECK_EQ_INT(g.pos[1].y, 1);
    CHECK_EQ_INT(g.agents[1], 0);
    CHECK_EQ_INT(g.agents[1 * W + 1], 2);
    CHECK_EQ_INT(gather_move(&g.c, 0, GATHER_EAST, &from), 1); /* now free */
    /* a torus wraps */
    setup(&g, true, false);
    CHECK_EQ_INT(gather_move(&g.c, 0, GATHER_NORTH, &from), 1);
    CHECK_EQ_INT(g.pos[0].y, H - 1);
    CHECK_EQ_INT(gather_move(&g.c, 0, GATHER_WEST, &from), 1);
    CHECK_EQ_INT(g.pos[0].x, W - 1);
    CHECK_EQ_INT(g.agents[(H - 1) * W + W - 1], 1);
}

static void test_collect(void)
{
    game g;
    setup(&g, false, false);
    g.coins[0] = 1; /* under agent 0 */
    g.coins[W + 2] = 1;
    g.c.coins_left = 2;
    gather_begin(&g.c);
    CHECK(gather_collect(&g.c, 0));
    CHECK(!gather_collect(&g.c, 0)); /* gone */
    CHECK(!gather_collect(&g.c, 1));
    CHECK_EQ_INT(g.coins[0], 0);
    CHECK_EQ_INT(g.c.coins_left, 1);
    CHECK(gather_reward(&g.c, 0) == 2.5f);
    CHECK(gather_reward(&g.c, 1) == 0.0f);
    CHECK(!gather_over(&g.c));
    gather_begin(&g.c); /* a new step: nothing collected yet, the total stays */
    CHECK(gather_reward(&g.c, 0) == 0.0f);
    CHECK_EQ_INT(g.total[0], 1);
    gather_pos from;
    CHECK_EQ_INT(gather_move(&g.c, 2, GATHER_SOUTH, &from), 1);
    CHECK(gather_collect(&g.c, 2));
    CHECK_EQ_INT(g.c.coins_left, 0);
    CHECK(gather_over(&g.c)); /* no respawn: the coins ran out */

    /* respawn: a new coin on a free cell (neither agent nor coin), drawn from the rng */
    setup(&g, false, true);
    polis_rng rng;
    polis_rng_seed(&rng, 7, 1);
    for (int k = 0; k < 50; k++) {
        gather_begin(&g.c);
        int32_t a = k % N;
        g.coins[g.pos[a].y * W + g.pos[a].x] = 1;
        g.c.coins_left++;
        CHECK(gather_collect(&g.c, a));
        gather_respawn(&g.c, &rng);
        CHECK(!gather_over(&g.c));
        int32_t coins = 0;
        for (int32_t i = 0; i < W * H; i++) {
            coins += g.coins[i];
            if (g.coins[i]) CHECK_EQ_INT(g.agents[i], 0);
        }
        CHECK_EQ_INT(coins, g.c.coins_left);
    }
    /* a full map: no room, no coin */
    setup(&g, false, true);
    for (int32_t i = N; i < W * H; i++) g.coins[i] = 1;
    g.c.coins_left = W * H - N;
    g.coins[0] = 1;
    g.c.coins_left++;
    CHECK(gather_collect(&g.c, 0));
    g.coins[0] = 0;
    int32_t before = g.c.coins_left;
    g.agents[0] = 1; /* agent 0 still stands there */
    gather_respawn(&g.c, &rng);
    CHECK_EQ_INT(g.c.coins_left, before);
}

static void test_observe(void)
{
    game g;
    setup(&g, false, false);
    g.coins[1 * W + 0] = 1;
    int8_t obs[2 * 9];
    gather_observe(&g.c, 0, obs, g.window);
    /* agent 0 at (0, 0), view 1: row y=-1 and column x=-1 are off the map */
    static const int8_t agents[9] = {-1, -1, -1, -1, 2, 1, -1, 0, 0};
    static const int8_t coins[9] = {0, 0, 0, 0, 0, 0, 0, 1, 0};
    CHECK(memcmp(obs, agents, 9) == 0);
    CHECK(memcmp(obs + 9, coins, 9) == 0);
    /* on a torus the window wraps: (W-1, H-1) is up and to the left of (0, 0) */
    setup(&g, true, false);
    g.coins[(H - 1) * W + W - 1] = 1;
    gather_observe(&g.c, 0, obs, g.window);
    CHECK_EQ_INT(obs[0], 0);
    CHECK_EQ_INT(obs[4], 2);
    CHECK_EQ_INT(obs[5], 1);
    CHECK_EQ_INT(obs[9 + 0], 1);
}

static void test_reset(void)
{
    game g;
    setup(&g, false, false);
    g.c.p.coins = W * H - N;
    g.coins[7] = 1; /* stale state from an earlier episode is cleared */
    g.total[1] = 9;
    polis_rng a, b;
    polis_rng_seed(&a, 3, 1);
    polis_rng_seed(&b, 3, 1);
    int32_t bad = -1;
    CHECK(gather_reset(&g.c, &a, &bad));
    CHECK_EQ_INT(g.total[1], 0);
    CHECK_EQ_INT(g.c.coins_left, W * H - N); /* every free cell holds a coin */
    int32_t agents = 0;
    for (int32_t i = 0; i < W * H; i++) {
        agents += g.agents[i] != 0;
        CHECK((g.agents[i] != 0) + g.coins[i] == 1);
    }
    CHECK_EQ_INT(agents, N);
    for (int32_t k = 0; k < N; k++) CHECK_EQ_INT(g.agents[g.pos[k].y * W + g.pos[k].x], k + 1);
    /* the same seed places the same way */
    game h;
    setup(&h, false, false);
    h.c.p.coins = W * H - N;
    CHECK(gather_reset(&h.c, &b, &bad));
    CHECK(memcmp(g.agents, h.agents, sizeof g.agents) == 0);
    CHECK(memcmp(g.coins, h.coins, sizeof g.coins) == 0);
    /* more agents than cells: the first agent without a cell is named */
    game t;
    setup(&t, false, false);
    t.c.width = 1;
    t.c.height = 2;
    CHECK(!gather_reset(&t.c, &a, &bad));
    CHECK_EQ_INT(bad, 2);
}

int main(void)
{
    test_moves();
    test_collect();
    test_observe();
    test_reset();
    CHECK_DONE();
}
