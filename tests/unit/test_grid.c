/* grid.c: configuration conflicts, layers shared by name, windows on a torus and on a
 * bounded grid. */
#include "check.h"
#include "core/internal.h"
#include "testutil.h"

int main(void)
{
    /* Windows, checked directly on a hand-made 4x3 grid with two layers. */
    int32_t cells[2 * 3 * 4];
    for (int i = 0; i < 24; i++) cells[i] = i; /* layer 0: 0..11, layer 1: 12..23 */
    polis_grid g = {.width = 4, .height = 3, .layers = 2, .wrap = true, .cells = cells};
    CHECK_EQ_INT(*polis_grid_cell(&g, 1, 2, 1), 12 + 1 * 4 + 2);
    int32_t out[9];
    polis__grid_window(&g, 0, 0, 0, 1, 1, -1, out);
    /* rows y = -1 (wraps to 2), 0, 1; columns x = -1 (wraps to 3), 0, 1 */
    const int32_t torus[9] = {11, 8, 9, 3, 0, 1, 7, 4, 5};
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(out[i], torus[i]);
    g.wrap = false;
    polis__grid_window(&g, 0, 0, 0, 1, 1, -1, out);
    const int32_t bounded[9] = {-1, -1, -1, -1, 0, 1, -1, 4, 5};
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(out[i], bounded[i]);
    polis__grid_window(&g, 1, 3, 2, 1, 0, -7, out);
    const int32_t edge[3] = {12 + 10, 12 + 11, -7};
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(out[i], edge[i]);
    /* A window far larger than the torus wraps several times. */
    g.wrap = true;
    int32_t big[5 * 7];
    polis__grid_window(&g, 0, 1, 1, 3, 1, 0, big);
    CHECK_EQ_INT(big[0 * 7 + 0], 0 * 4 + 2); /* (x=-2 -> 2, y=0) */
    CHECK_EQ_INT(big[2 * 7 + 6], 2 * 4 + 0); /* (x=4 -> 0, y=2) */
    /* Bad layer: everything reads as outside. */
    polis__grid_window(&g, 5, 0, 0, 1, 1, -9, out);
    for (int i = 0; i < 9; i++) CHECK_EQ_INT(out[i], -9);

    /* Through an env: the walker test plugin asks for layers; the scenario sets the size. */
    test_log log = {0};
    polis_env *env = test_env("{\"agents\": 2, \"grid\": {\"width\": 5, \"height\": 4, "
                              "\"wrap\": true}, \"plugins\": [\"walker\"]}",
                              &log, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(env->grid.width, 5);
        CHECK_EQ_INT(env->grid.height, 4);
        CHECK_EQ_INT(env->grid.layers, 2);
        CHECK(env->grid.wrap);
        int32_t layer = -1;
        CHECK_EQ_INT(polis__grid_layer(env, "items", &layer), POLIS_OK);
        CHECK_EQ_INT(layer, 1); /* found by name, not added */
        CHECK_EQ_INT(polis__grid_configure(env, 5, 4, true), POLIS_OK);
        CHECK_EQ_INT(polis__grid_configure(env, 6, 4, true), POLIS_ERR_CONFIG);
        CHECK_EQ_STR(polis_env_error(env), "grid is already 5x4 (wrap); cannot make it 6x4 (wrap)");
        CHECK_EQ_INT(polis__grid_configure(env, 0, 4, true), POLIS_ERR_INVALID);
        polis_env_destroy(env);
    }

    /* A game that needs a grid says so at start; the kernel refuses a layer without a size
     * for a plugin that does not check. */
    CHECK_EQ_STR(test_env_error("{\"agents\": 1, \"plugins\": [\"walker\"]}"),
                 "<string>: plugins[0]: plugin \"walker\" start failed: walker: the scenario has "
                 "no \"grid\"");
    CHECK_EQ_STR(test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                                "\"params\": {\"mode\": \"layer_only\"}}]}"),
                 "<string>: grid layer \"probe.layer\" is registered but the grid has no size: add "
                 "\"grid\": {\"width\": W, \"height\": H} to the scenario");
    CHECK_DONE();
}
