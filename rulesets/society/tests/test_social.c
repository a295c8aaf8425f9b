/* society with the real social plugin (plugins/social): shared vision switched on by a social
 * action reaches the map view, the text view and the JSON sharings; the inventory reward
 * is shared inside a weighted group by social's transform. */
#include "fixture.h"

static const char *PARAMS =
    "{\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 8, \"y\": 8}}, \"view\": \"map\","
    " \"static\": {\"resources\": [{\"name\": [\"wood\", \"stone\"], \"positions\": [[1, 1], [6, "
    "6]],"
    "                             \"num\": 5}],"
    "   \"players\": [{\"job\": \"explorer\", \"positions\": [[1, 1], [5, 5], [3, 6]]}]}}";

static const char *SOCIAL =
    ", {\"name\": \"social\", \"params\": {"
    "   \"social\": {\"groups\": [{\"name\": \"g\", \"players\": {\"ids\": [0, 1],"
    "                \"attributes\": {\"division_weight\": [3, 1]}}}]},"
    "   \"post_updates\": [{\"function\": \"split_score_to_group\","
    "                       \"kwargs\": {\"attribute\": \"division_weight\"}}],"
    "   \"actions\": [{\"family\": \"share_map\"}, {\"family\": \"share_player\"}]}}";

int main(void)
{
    char *json = soc_scenario_plugins(3, 50, PARAMS, SOCIAL, "");
    polis_env *env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();
    const polis_io *io = polis_env_io(env);
    polis_env_reset(env, 1);

    /* Agent 1 at (5, 5) cannot see agent 0 at (1, 1), nor the wood there. Agent 1's map
     * view puts absolute (x, y) at (x - 5 + 4, y - 5 + 4) mod 8: (1, 1) -> (0, 0). */
    CHECK_EQ_INT(soc_grid(env, 1, 0, 0, 0), 0);
    /* agent 0 lets agent 1 see its map (and agent 2 its inventory) */
    soc_step(env, (const char *[]){"share_map_1", NULL, NULL});
    CHECK_EQ_INT(io->illegal[0], 0);
    CHECK_EQ_INT(soc_grid(env, 1, 0, 0, 0), 1);         /* agent 0 itself */
    CHECK_EQ_INT(soc_grid(env, 1, 2 + 2 + 0, 0, 0), 5); /* the wood under it (R = 2) */
    CHECK_EQ_INT(soc_grid(env, 2, 0, 2, 7), 0);         /* agent 2 sees nothing of it */
    char *out = NULL;
    CHECK_EQ_INT(polis_env_render(env, 1, "text", &out), POLIS_OK);
    CHECK_CONTAINS(out, "; also the view of agent_0 at (1, 1) (2 up/down, 2 left/right), shared "
                        "with you.");
    CHECK_CONTAINS(out, "- wood piles: 5 at (1, 1) 4 up 4 left\n");
    CHECK_CONTAINS(out,
                   "- agents: agent_2 at (3, 6) 2 up 1 right; agent_0 at (1, 1) 4 up 4 left\n");
    polis_free(out);
    soc_step(env, (const char *[]){"share_player_2", NULL, NULL});
    CHECK_EQ_INT(polis_env_render(env, 2, "json", &out), POLIS_OK);
    CHECK_CONTAINS(out, "\"sharings\": {\"0\": {\"Player\": {\"id\": 0, \"name\": \"agent_0\"");
    polis_free(out);
    /* toggling the share off removes the view */
    soc_step(env, (const char *[]){"share_map_1", NULL, NULL});
    CHECK_EQ_INT(soc_grid(env, 1, 0, 0, 0), 0);

    /* Agent 0 picks a wood (+1): the group {0: 3, 1: 1} shares it 0.75 / 0.25; agent 2 is in
     * no group and keeps its own (0). */
    soc_step(env, (const char *[]){"pick_wood", NULL, NULL});
    CHECK(io->rewards[0] == 0.75f);
    CHECK(io->rewards[1] == 0.25f);
    CHECK(io->rewards[2] == 0.0f);
    const float *raw = polis_env_reward_components(env);
    CHECK(raw[0] == 1.0f); /* the inventory reward before the transform */
    polis_env_destroy(env);
    CHECK_DONE();
}
