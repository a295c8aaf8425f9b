/* orchard's rules, without the engine: build and run with the plugin (CMake: ctest; make:
 * make test). Every check names its line when it fails. */
#include <stdio.h>
#include <string.h>

#include "core.h"

static int failed;
#define CHECK(c)                                                                                   \
    ((c) ? (void)0 : (void)(failed++, fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c)))

#define W 4
#define H 3

typedef struct game {
    orchard_core g;
    int32_t tree[W * H], agent[W * H], x[2], y[2], picked[2];
    float reward[2];
} game;

static void setup(game *s)
{
    memset(s, 0, sizeof *s);
    s->g = (orchard_core){.p = {.trees = 2, .ripen = 3, .value = 2.0},
                          .n_agents = 2,
                          .width = W,
                          .height = H,
                          .tree = s->tree,
                          .agent = s->agent,
                          .x = s->x,
                          .y = s->y,
                          .reward = s->reward,
                          .picked = s->picked};
}

int main(void)
{
    game s;
    setup(&s);
    polis_rng rng;
    polis_rng_seed(&rng, 5, 1);
    CHECK(orchard_reset(&s.g, &rng));
    int trees = 0, agents = 0;
    for (int c = 0; c < W * H; c++) {
        trees += s.tree[c] != 0;
        agents += s.agent[c] != 0;
        CHECK(!(s.tree[c] && s.agent[c]));
    }
    CHECK(trees == 2 && agents == 2);

    /* crafted: agent 0 at (0, 0) on a ripe tree, agent 1 at (1, 0) */
    setup(&s);
    s.agent[0] = 1, s.agent[1] = 2, s.x[1] = 1, s.tree[0] = 1;
    CHECK(!orchard_legal(&s.g, 0, ORCHARD_NORTH)); /* off the map */
    CHECK(orchard_legal(&s.g, 0, ORCHARD_PICK));
    CHECK(!orchard_legal(&s.g, 1, ORCHARD_PICK)); /* no tree there */
    CHECK(orchard_act(&s.g, 0, ORCHARD_PICK) && s.reward[0] == 2.0f && s.picked[0] == 1);
    CHECK(!orchard_legal(&s.g, 0, ORCHARD_PICK)); /* picked: ripens again in 3 steps */
    for (int t = 0; t < 2; t++) orchard_grow(&s.g);
    CHECK(!orchard_legal(&s.g, 0, ORCHARD_PICK));
    orchard_grow(&s.g);
    CHECK(orchard_legal(&s.g, 0, ORCHARD_PICK));
    /* blocked by agent 1: legal, nothing moves */
    CHECK(orchard_act(&s.g, 0, ORCHARD_EAST) && s.x[0] == 0);
    CHECK(orchard_act(&s.g, 0, ORCHARD_SOUTH) && s.y[0] == 1 && s.agent[W] == 1 && !s.agent[0]);
    int8_t obs[9];
    orchard_observe(&s.g, 0, obs); /* from (0, 1): tree north, agent 1 north-east */
    CHECK(obs[0] == 0 && obs[1] == 2 && obs[2] == 3 && obs[4] == 0);
    if (failed)
        fprintf(stderr, "%d check(s) failed\n", failed);
    else
        printf("orchard core: all checks passed\n");
    return failed != 0;
}
