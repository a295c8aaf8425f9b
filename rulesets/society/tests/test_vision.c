/* What agents see: the window channels (agents, blocks, stations as -in/+out, piles),
 * requirement-gated resources and stations, the map-sized egocentric view, and shared vision
 * through the social service (a stand-in plugin here): a shared window is placed at its
 * owner's true position, filtered by the owner's requirements, one hop only; the window view
 * ignores sharing. */
#include "fixture.h"

enum { WOOD, STONE, HAMMER, COAL };

static polis_env *open_view_journal(const char *view, const char *share, int journal)
{
    char params[2048], plugins[256];
    snprintf(
        params, sizeof params,
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 7, \"y\": 7}}, \"view\": \"%s\","
        " \"jobs\": {\"plain\": {\"fov\": 1}, \"miner\": {\"fov\": 1, \"inventory\": {\"hammer\": "
        "1}}},"
        " \"static\": {\"blocks\": [{\"positions\": [6, 5]}],"
        "   \"resources\": [{\"name\": [\"coal\", \"wood\"], \"positions\": [[5, 6], [4, 5]], "
        "\"num\": 4}],"
        "   \"recipes\": [{\"name\": [\"hammer_craft\", \"torch_craft\"], \"positions\": [[1, 2], "
        "[5, 4]]}],"
        "   \"players\": [{\"job\": \"plain\", \"positions\": [1, 1]},"
        "                 {\"job\": \"miner\", \"positions\": [5, 5]},"
        "                 {\"job\": \"plain\", \"positions\": [3, 3]}]}}",
        view);
    snprintf(plugins, sizeof plugins,
             ", {\"name\": \"fake_social\", \"params\": {\"map\": %s, \"journal\": %d}}", share,
             journal);
    char *json = soc_scenario_plugins(3, 50, params, share[0] ? plugins : "", "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    return env;
}

static polis_env *open_view(const char *view, const char *share)
{
    return open_view_journal(view, share, 0);
}

/* In play: wood, stone (hammer_craft), hammer, coal (torch_craft) and torch: R = 5 here. */
#define RR 5
#define CH_STATION(r) (2 + (r))
#define CH_PILE(r) (2 + RR + (r))

static void test_window(void)
{
    polis_env *env = open_view("window", "[[1, 0]]");
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[0], 2 + 2 * RR);
    CHECK_EQ_INT(f.shape[1], 3);
    /* agent 0 at (1, 1): own id at the centre, hammer_craft at (1, 2) = [1][2] */
    CHECK_EQ_INT(soc_grid(env, 0, 0, 1, 1), 1);
    CHECK_EQ_INT(soc_grid(env, 0, CH_STATION(WOOD), 1, 2), -1);
    CHECK_EQ_INT(soc_grid(env, 0, CH_STATION(STONE), 1, 2), -1);
    CHECK_EQ_INT(soc_grid(env, 0, CH_STATION(HAMMER), 1, 2), 1);
    /* the window view ignores sharing: nothing of agent 1's surroundings */
    int sum = 0;
    for (int x = 0; x < 3; x++)
        for (int y = 0; y < 3; y++)
            sum += soc_grid(env, 0, 1, x, y) + soc_grid(env, 0, CH_PILE(COAL), x, y);
    CHECK_EQ_INT(sum, 0);
    /* the miner at (5, 5) sees coal (5, 6) at [1][2], wood (4, 5) at [0][1], the block
     * (6, 5) at [2][1]; torch_craft (5, 4) needs coal in hand: unseen */
    CHECK_EQ_INT(soc_grid(env, 1, CH_PILE(COAL), 1, 2), 4);
    CHECK_EQ_INT(soc_grid(env, 1, CH_PILE(WOOD), 0, 1), 4);
    CHECK_EQ_INT(soc_grid(env, 1, 1, 2, 1), 1);
    CHECK_EQ_INT(soc_grid(env, 1, CH_STATION(COAL), 1, 0), 0);
    /* agent 2 at (3, 3) sees nobody; with its fov 1 the wood (4, 5) is out of reach */
    CHECK_EQ_INT(soc_grid(env, 2, 0, 1, 1), 3);
    CHECK_EQ_INT(soc_grid(env, 2, CH_PILE(WOOD), 2, 2), 0);
    /* the miner picks coal: now torch_craft is visible (-1 wood, -1 coal, +1 torch) */
    soc_step(env, (const char *[]){NULL, "move_right", NULL});
    soc_step(env, (const char *[]){NULL, "pick_coal", NULL});
    soc_step(env, (const char *[]){NULL, "move_left", NULL});
    CHECK_EQ_INT(soc_inv(env, 1, COAL), 1);
    CHECK_EQ_INT(soc_grid(env, 1, CH_STATION(COAL), 1, 0), -1);
    CHECK_EQ_INT(soc_grid(env, 1, CH_STATION(WOOD), 1, 0), -1);
    CHECK_EQ_INT(soc_grid(env, 1, CH_STATION(4), 1, 0), 1);
    polis_env_destroy(env);
}

static void test_map_view_sharing(void)
{
    polis_env *env = open_view("map", "[[1, 0], [2, 1]]");
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[1], 7);
    CHECK_EQ_INT(f.shape[2], 7);
    /* Agent 0 at (1, 1) is drawn at (3, 3); absolute (x, y) lands at (x + 2, y + 2) mod 7.
     * Agent 1 shares its map with 0: its window around (5, 5) lands around (0, 0). */
    CHECK_EQ_INT(soc_grid(env, 0, 0, 3, 3), 1);
    CHECK_EQ_INT(soc_grid(env, 0, 0, 0, 0), 2);                  /* agent 1 itself */
    CHECK_EQ_INT(soc_grid(env, 0, 1, 1, 0), 1);                  /* the block (6, 5) */
    CHECK_EQ_INT(soc_grid(env, 0, CH_PILE(COAL), 0, 1), 4);      /* coal (5, 6): agent 1's hammer */
    CHECK_EQ_INT(soc_grid(env, 0, CH_PILE(WOOD), 6, 0), 4);      /* wood (4, 5) */
    CHECK_EQ_INT(soc_grid(env, 0, CH_STATION(HAMMER), 3, 4), 1); /* own view: (1, 2) */
    /* one hop only: agent 2 shares with 1, not with 0; agent 2 at (3, 3) -> (5, 5) unseen */
    CHECK_EQ_INT(soc_grid(env, 0, 0, 5, 5), 0);
    /* agent 1 sees agent 2's window too, around (3, 3) -> agent 1 at (5, 5) is the centre */
    CHECK_EQ_INT(soc_grid(env, 1, 0, 1, 1), 3);
    /* agent 2 receives nothing: its own window only, own cell at the centre */
    int seen = 0;
    for (int x = 0; x < 7; x++)
        for (int y = 0; y < 7; y++) seen += soc_grid(env, 2, 0, x, y) != 0;
    CHECK_EQ_INT(seen, 1);
    /* everything else of agent 0's view is 0: cells outside every window */
    CHECK_EQ_INT(soc_grid(env, 0, CH_PILE(WOOD), 3, 3), 0);
    CHECK_EQ_INT(soc_grid(env, 0, 1, 5, 5), 0);
    polis_env_destroy(env);

    /* without sharing, agent 0 sees neither the coal nor agent 1 */
    env = open_view("map", "");
    if (!env) return;
    polis_env_reset(env, 1);
    CHECK_EQ_INT(soc_grid(env, 0, 0, 0, 0), 0);
    CHECK_EQ_INT(soc_grid(env, 0, CH_PILE(COAL), 0, 1), 0);
    polis_env_destroy(env);
}

/* The live merged views (observe.c) kept from a sharing journal with no changes, and from
 * one that loses changes (rebuilt then, kept up to date in between), write what the painters
 * write without a journal: the same moves, picks and produces in the three envs, every grid
 * compared. */
static void test_map_view_journal(void)
{
    polis_env *env[3];
    for (int j = 0; j < 3; j++) env[j] = open_view_journal("map", "[[1, 0], [2, 1], [0, 2]]", j);
    CHECK(env[0] && env[1] && env[2]);
    if (env[0] && env[1] && env[2]) {
        /* agent 0 stays (its view is kept, not repainted), 1 moves every other step, 2
         * every fourth: their windows move through 0's view */
        static const char *const stay[] = {"noop", "pick_coal", "produce", "pick_wood"};
        static const char *const moves[] = {"move_right", "move_down", "move_left", "move_up"};
        long differ = 0, painted = 0;
        for (int t = 0; t <= 48; t++) { /* the episode has 50 steps */
            for (int j = 0; j < 3; j++) {
                if (t == 0)
                    polis_env_reset(env[j], 1);
                else
                    soc_step(env[j],
                             (const char *[]){stay[t % 4], t % 2 ? moves[(t / 2) % 4] : stay[t % 4],
                                              t % 4 ? stay[t % 4] : moves[(t / 4) % 4]});
            }
            for (int32_t a = 0; a < 3; a++)
                for (int c = 0; c < 2 + 2 * RR; c++)
                    for (int x = 0; x < 7; x++)
                        for (int y = 0; y < 7; y++) {
                            int32_t v = soc_grid(env[0], a, c, x, y);
                            painted += v != 0;
                            differ += soc_grid(env[1], a, c, x, y) != v ||
                                      soc_grid(env[2], a, c, x, y) != v;
                        }
        }
        CHECK_EQ_INT(differ, 0);
        CHECK(painted > 0);
    }
    for (int j = 0; j < 3; j++) polis_env_destroy(env[j]);
}

/* Tensor values saturate at the i16 range; the inventory (i32) does not. */
static void test_saturation(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
        " \"recipes\": {\"bulk\": {\"in\": {\"wood\": 40000}, \"out\": {\"stone\": 1}}},"
        " \"jobs\": {\"hoarder\": {\"fov\": 0, \"inventory\": {\"wood\": 50000}}},"
        " \"static\": {\"resources\": [{\"name\": \"wood\", \"positions\": [0, 0], \"num\": "
        "40000}],"
        "             \"recipes\": [{\"name\": \"bulk\", \"positions\": [0, 0]}],"
        "             \"players\": [{\"job\": \"hoarder\", \"positions\": [0, 0]}]}}";
    char *json = soc_scenario(1, 10, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    polis_env_reset(env, 1);
    /* R = 2 (wood, stone): channels 2, 3 stations, 4, 5 piles */
    CHECK_EQ_INT(soc_grid(env, 0, 4, 0, 0), 32767);
    CHECK_EQ_INT(soc_grid(env, 0, 2, 0, 0), -32767);
    CHECK_EQ_INT(soc_inv(env, 0, 0), 50000);
    polis_env_destroy(env);
}

int main(void)
{
    test_saturation();
    test_window();
    test_map_view_sharing();
    test_map_view_journal();
    CHECK_DONE();
}
