/*
 * looks.c — what recordings, the replay and the viewer draw of orchard: trees and ripe
 * fruit on a tile layer, the agents and how much each picked. Optional.
 */
#include "internal.h"

static polis_status scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    orchard *o = ud;
    const orchard_core *g = &o->core;
    int32_t *tiles = sc->tiles + (size_t)o->layer_trees * (size_t)sc->width * (size_t)sc->height;
    for (int32_t y = 0; y < g->height; y++)
        for (int32_t x = 0; x < g->width; x++) {
            int32_t t = g->tree[y * g->width + x];
            if (t)
                tiles[(size_t)y * (size_t)sc->width + (size_t)x] =
                    t == 1 ? o->kind_fruit : o->kind_tree;
        }
    for (int32_t a = 0; a < g->n_agents; a++) {
        sc->agents[a].x = g->x[a];
        sc->agents[a].y = g->y[a];
        sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)o->stat_picked] = g->picked[a];
    }
    return POLIS_OK;
}

polis_status orchard_register_looks(orchard *o)
{
    const polis_host *h = o->h;
    static const polis_kind_def tree = {"tree", "t", "#3c7a3c", POLIS_SHAPE_TRIANGLE};
    static const polis_kind_def fruit = {"fruit", "@", "#d8452b", POLIS_SHAPE_CIRCLE};
    polis_scene_def def = {.fn = scene, .ud = o};
    polis_status st;
    if ((st = h->look_kind(o->ctx, &tree, &o->kind_tree)) ||
        (st = h->look_kind(o->ctx, &fruit, &o->kind_fruit)) ||
        (st = h->look_layer(o->ctx, "trees", &o->layer_trees)) ||
        (st = h->look_stat(o->ctx, "picked", "inventory", 0, &o->stat_picked)) ||
        (st = h->look_view(o->ctx, 1, 1)) || (st = h->look_scene(o->ctx, &def)))
        return st;
    return POLIS_OK;
}
