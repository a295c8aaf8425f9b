/* Each physical action's semantics: moves (AdaSociety's axes, wrapping), pick, dump and
 * produce with their events, rewards (m·h·r̄ with preferences and scores), capacities and
 * sizes enforced and masked, requirement-gated pick and produce, the built-in recipes as the
 * seeds' tables give them. */
#include "fixture.h"

enum {
    WOOD,
    STONE,
    HAMMER,
    COAL,
    TORCH,
    IRON,
    STEEL,
    SHOVEL,
    PICKAXE,
    GEM_MINE,
    CLAY,
    POTTERY,
    CUTTER,
    GEM,
    TOTEM,
    R = 15
};
#define PILE(r) (2 + R + (r))
#define STATION(r) (2 + (r))

static const char *PARAMS =
    "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 5, \"y\": 5}},"
    " \"resources_in_play\": \"all\","
    " \"jobs\": {\"worker\": {\"fov\": 1, \"capacity\": {\"hammer\": 1},"
    "                         \"preference\": {\"wood\": 2}, \"score\": {\"stone\": 3}},"
    "            \"miner\": {\"fov\": [1, 2], \"inventory\": {\"hammer\": 1}}},"
    " \"static\": {"
    "   \"resources\": [{\"name\": \"wood\", \"positions\": [1, 1], \"num\": 3},"
    "                 {\"name\": [\"stone\", \"coal\"], \"positions\": [[1, 1], [2, 2]],"
    "                  \"num\": [2, 5]}],"
    "   \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": [1, 1]}],"
    "   \"players\": [{\"job\": \"worker\", \"positions\": [1, 1]},"
    "               {\"job\": \"miner\", \"positions\": [3, 3]}]}}";

static void test_pick_dump_produce(void)
{
    char *json = soc_scenario(2, 100, PARAMS, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    soc_events ev;
    soc_events_attach(&ev, env);
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 7), POLIS_OK);
    CHECK_CONTAINS(ev.text, "world.generated blocks=0 piles=3 units=10 stations=1 agents=2");

    /* Agent 0 stands on wood 3, stone 2 and a hammer_craft station. */
    CHECK_EQ_INT(soc_mask(env, 0, "pick_wood"), 1);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_stone"), 1);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_coal"), 0);
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 0); /* the station is here, the inputs are not */
    CHECK_EQ_INT(soc_mask(env, 0, "dump_wood"), 0);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(WOOD), 1, 2), 3);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(STONE), 1, 2), 2);
    CHECK_EQ_INT(soc_grid(env, 0, STATION(WOOD), 1, 2), -1);
    CHECK_EQ_INT(soc_grid(env, 0, STATION(STONE), 1, 2), -1);
    CHECK_EQ_INT(soc_grid(env, 0, STATION(HAMMER), 1, 2), 1);
    CHECK_EQ_INT(soc_grid(env, 0, 0, 1, 2), 1); /* own id + 1 at the centre */

    /* pick wood: +1 wood worth preference 2 x objective 1. */
    soc_events_clear(&ev);
    CHECK_EQ_INT(soc_step(env, (const char *[]){"pick_wood", NULL}), POLIS_OK);
    CHECK_EQ_STR(ev.text, "resource.picked agent=0 resource=0 x=1 y=1 amount=1 left=2\n");
    CHECK_EQ_INT(soc_inv(env, 0, WOOD), 1);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(WOOD), 1, 2), 2);
    CHECK(io->rewards[0] == 2.0f);
    CHECK(io->rewards[1] == 0.0f); /* the miner's initial hammer is not a step-1 reward */
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 0);
    CHECK_EQ_INT(soc_mask(env, 0, "dump_wood"), 1);

    /* pick stone: its job score 3 is the unit value itself. */
    CHECK_EQ_INT(soc_step(env, (const char *[]){"pick_stone", NULL}), POLIS_OK);
    CHECK(io->rewards[0] == 3.0f);
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);

    /* produce: wood + stone -> hammer, worth 5 - 2 - 3 = 0. */
    soc_events_clear(&ev);
    CHECK_EQ_INT(soc_step(env, (const char *[]){"produce", NULL}), POLIS_OK);
    CHECK_EQ_STR(ev.text, "recipe.produced agent=0 recipe=0 x=1 y=1\n");
    CHECK_EQ_INT(soc_inv(env, 0, WOOD), 0);
    CHECK_EQ_INT(soc_inv(env, 0, STONE), 0);
    CHECK_EQ_INT(soc_inv(env, 0, HAMMER), 1);
    CHECK(io->rewards[0] == 0.0f);
    CHECK_EQ_INT(io->illegal[0], 0);

    /* A second hammer would exceed the capacity 1: produce is masked, and forcing it is an
     * illegal no-op. */
    soc_step(env, (const char *[]){"pick_wood", NULL});
    soc_step(env, (const char *[]){"pick_stone", NULL});
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 0);
    soc_events_clear(&ev);
    CHECK_EQ_INT(soc_step(env, (const char *[]){"produce", NULL}), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(soc_inv(env, 0, HAMMER), 1);
    CHECK_EQ_INT(soc_inv(env, 0, WOOD), 1);
    CHECK(io->rewards[0] == 0.0f);
    CHECK_EQ_STR(ev.text, "");

    /* dump the hammer: -5, a new pile on the cell; produce is legal again. */
    soc_events_clear(&ev);
    CHECK_EQ_INT(soc_step(env, (const char *[]){"dump_hammer", NULL}), POLIS_OK);
    CHECK_EQ_STR(ev.text, "resource.dumped agent=0 resource=2 x=1 y=1 amount=1 pile=1\n");
    CHECK(io->rewards[0] == -5.0f);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(HAMMER), 1, 2), 1);
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_hammer"), 1);
    /* Capacity of a pick: with a hammer in hand the pile's hammer is masked. */
    soc_step(env, (const char *[]){"produce", NULL});
    CHECK_EQ_INT(soc_inv(env, 0, HAMMER), 1);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_hammer"), 0);
    soc_step(env, (const char *[]){"pick_hammer", NULL});
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(HAMMER), 1, 2), 1);
    /* An empty pile cannot be picked: wood 3 - 2 picks = 1 left, then 0. */
    soc_step(env, (const char *[]){"pick_wood", NULL});
    CHECK_EQ_INT(soc_grid(env, 0, PILE(WOOD), 1, 2), 0);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_wood"), 0);
    soc_step(env, (const char *[]){"pick_wood", NULL});
    CHECK_EQ_INT(io->illegal[0], 1);
    polis_env_destroy(env);
}

static void test_requirements(void)
{
    char *json = soc_scenario(2, 100, PARAMS, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    soc_events ev;
    soc_events_attach(&ev, env);
    polis_env_reset(env, 1);
    soc_events_clear(&ev);
    /* The miner (fov [1, 2], a hammer) sees coal at (2, 2) from (3, 3): dx -1, dy -1 from
     * the centre (1, 2) of its 3 x 5 window... inside the largest window 3 x 5. */
    CHECK_EQ_INT(soc_grid(env, 1, PILE(COAL), 0, 1), 5);
    /* Agent 0 (no hammer) would see (2, 2) at dx +1, dy +1 but coal needs a hammer. */
    CHECK_EQ_INT(soc_grid(env, 0, PILE(COAL), 2, 3), 0);
    /* move_up decreases x, move_left decreases y. */
    CHECK_EQ_INT(soc_step(env, (const char *[]){NULL, "move_up"}), POLIS_OK);
    CHECK_EQ_STR(ev.text, "agent.moved agent=1 from_x=3 from_y=3 x=2 y=3\n");
    soc_step(env, (const char *[]){NULL, "move_left"});
    CHECK_EQ_INT(soc_pos(env, 1, 0), 2);
    CHECK_EQ_INT(soc_pos(env, 1, 1), 2);
    CHECK_EQ_INT(soc_mask(env, 1, "pick_coal"), 1);
    soc_step(env, (const char *[]){NULL, "pick_coal"});
    CHECK_EQ_INT(soc_inv(env, 1, COAL), 1);
    CHECK(io->rewards[1] == 2.0f); /* the miner has no preference: h = 1, r̄(coal) = 2 */
    /* Agent 0 walks onto the coal; without a hammer it is invisible and cannot be picked. */
    soc_step(env, (const char *[]){"move_down", "move_up"});
    soc_step(env, (const char *[]){"move_right", NULL});
    CHECK_EQ_INT(soc_pos(env, 0, 0), 2);
    CHECK_EQ_INT(soc_pos(env, 0, 1), 2);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_coal"), 0);
    CHECK_EQ_INT(soc_grid(env, 0, PILE(COAL), 1, 2), 0);
    soc_step(env, (const char *[]){"pick_coal", NULL});
    CHECK_EQ_INT(io->illegal[0], 1);
    CHECK_EQ_INT(soc_inv(env, 0, COAL), 0);
    /* The miner's view of the same pile shows the 4 units left. */
    CHECK_EQ_INT(soc_grid(env, 1, PILE(COAL), 2, 2), 4);
    polis_env_destroy(env);
}

static void test_wrap_and_size(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 4, \"y\": 3}},"
        " \"jobs\": {\"small\": {\"fov\": 0, \"size\": 2}},"
        " \"static\": {\"resources\": [{\"name\": \"wood\", \"positions\": [0, 0], \"num\": 9}],"
        "             \"players\": [{\"job\": \"small\", \"positions\": [0, 0]}]}}";
    char *json = soc_scenario(1, 100, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    polis_env_reset(env, 3);
    /* resources_in_play "used": only wood, so the action space is noop, 4 moves, produce,
     * pick_wood, dump_wood, and the grid has 2 + 2 channels. */
    CHECK_EQ_INT(polis_env_n_actions(env), 8);
    polis_obs_field f;
    soc_field(env, 0, "grid", &f);
    CHECK_EQ_INT(f.shape[0], 4);
    CHECK_EQ_INT(f.shape[1], 1);
    soc_step(env, (const char *[]){"pick_wood"});
    soc_step(env, (const char *[]){"pick_wood"});
    CHECK_EQ_INT(soc_inv(env, 0, 0), 2);
    CHECK_EQ_INT(soc_mask(env, 0, "pick_wood"), 0); /* size 2 reached */
    soc_step(env, (const char *[]){"move_up"});
    CHECK_EQ_INT(soc_pos(env, 0, 0), 3); /* x 0 - 1 wraps to 3 */
    soc_step(env, (const char *[]){"move_left"});
    CHECK_EQ_INT(soc_pos(env, 0, 1), 2); /* y 0 - 1 wraps to 2 */
    soc_step(env, (const char *[]){"move_down"});
    soc_step(env, (const char *[]){"move_right"});
    CHECK_EQ_INT(soc_pos(env, 0, 0), 0);
    CHECK_EQ_INT(soc_pos(env, 0, 1), 0);
    /* a dump onto a pile of the same resource joins it: 9 - 2 + 1 */
    soc_step(env, (const char *[]){"dump_wood"});
    CHECK_EQ_INT(soc_grid(env, 0, 2 + 1 + 0, 0, 0), 8);
    polis_env_destroy(env);
}

/* A unit is worth what its holder's job says: the dumper loses its value (preference 2), the
 * picker gains its own (preference 1); the dumped unit carries nothing along. */
static void test_value_follows_holder(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
        " \"jobs\": {\"fan\": {\"fov\": 1, \"preference\": {\"wood\": 2}, \"inventory\": "
        "{\"wood\": 1}},"
        "            \"plain\": {\"fov\": 1}},"
        " \"static\": {\"players\": [{\"job\": \"fan\", \"positions\": [0, 0]},"
        "                           {\"job\": \"plain\", \"positions\": [1, 0]}]}}";
    char *json = soc_scenario(2, 100, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 3);
    soc_step(env, (const char *[]){"dump_wood", NULL});
    CHECK(io->rewards[0] == -2.0f);
    soc_step(env, (const char *[]){"move_right", "move_up"});
    CHECK_EQ_INT(soc_pos(env, 1, 0), 0);
    soc_step(env, (const char *[]){NULL, "pick_wood"});
    CHECK(io->rewards[1] == 1.0f);
    polis_env_destroy(env);
}

/* A recipe whose output is also an input is checked with its net change: sharpening keeps
 * one hammer, so it is legal at hammer capacity 1. */
static void test_net_capacity(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
        " \"recipes\": {\"sharpen\": {\"in\": {\"hammer\": 1, \"stone\": 1}, \"out\": {\"hammer\": "
        "1, \"torch\": 1}},"
        "               \"double\": {\"in\": {\"hammer\": 1}, \"out\": {\"hammer\": 2}}},"
        " \"jobs\": {\"smith\": {\"fov\": 1, \"capacity\": {\"hammer\": 1},"
        "                        \"inventory\": {\"hammer\": 1, \"stone\": 2}}},"
        " \"static\": {\"recipes\": [{\"name\": [\"sharpen\", \"double\"], \"positions\": [[0, 0], "
        "[0, 1]]}],"
        "             \"players\": [{\"job\": \"smith\", \"positions\": [0, 0]}]}}";
    char *json = soc_scenario(1, 100, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 3);
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);
    soc_step(env, (const char *[]){"produce"});
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK(io->rewards[0] == 19.0f); /* torch 20 - stone 1, the hammer kept */
    soc_step(env, (const char *[]){"move_right"});
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 0); /* double: 1 - 1 + 2 hammers > 1 */
    polis_env_destroy(env);
}

/* The seeds' Table 5: gem cutting consumes one gem mine and needs (keeps) the cutter; a
 * station whose requirements the agent does not meet is invisible and cannot be used. */
static void test_builtin_recipes(void)
{
    const char *params =
        "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"
        " \"resources_in_play\": \"all\","
        " \"jobs\": {\"cutter\": {\"fov\": 1, \"inventory\": {\"gem_mine\": 2, \"cutter\": 1}},"
        "            \"plain\": {\"fov\": 1, \"inventory\": {\"gem_mine\": 2}}},"
        " \"static\": {\"recipes\": [{\"name\": \"gem_craft\", \"positions\": [[0, 0], [1, 1]]}],"
        "             \"players\": [{\"job\": \"cutter\", \"positions\": [0, 0]},"
        "                           {\"job\": \"plain\", \"positions\": [1, 1]}]}}";
    char *json = soc_scenario(2, 100, params, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 3);
    CHECK_EQ_INT(soc_mask(env, 0, "produce"), 1);
    CHECK_EQ_INT(soc_mask(env, 1, "produce"), 0);
    CHECK_EQ_INT(soc_grid(env, 0, STATION(GEM), 1, 1), 1);
    CHECK_EQ_INT(soc_grid(env, 1, STATION(GEM), 1, 1), 0); /* no cutter: station unseen */
    soc_step(env, (const char *[]){"produce", "produce"});
    CHECK_EQ_INT(io->illegal[1], 1);
    CHECK_EQ_INT(soc_inv(env, 0, GEM), 1);
    CHECK_EQ_INT(soc_inv(env, 0, GEM_MINE), 1);
    CHECK_EQ_INT(soc_inv(env, 0, CUTTER), 1);
    CHECK(io->rewards[0] == 196.0f); /* +200 gem - 4 gem mine */
    CHECK_EQ_INT(soc_inv(env, 1, GEM_MINE), 2);
    polis_env_destroy(env);
}

int main(void)
{
    test_pick_dump_produce();
    test_requirements();
    test_wrap_and_size();
    test_builtin_recipes();
    test_value_follows_holder();
    test_net_capacity();
    CHECK_DONE();
}
