/*
 * internal.h — what orchard's plugin files share: the plugin state around the rules core,
 * and the functions that register the optional views and looks.
 */
#ifndef ORCHARD_INTERNAL_H
#define ORCHARD_INTERNAL_H

#include "core.h"
#include "polis/kit.h"

typedef struct orchard {
    const polis_host *h;
    polis_ctx *ctx;
    orchard_core core;
    int32_t act[ORCHARD_ACTIONS]; /* action ids */
    int32_t ev_picked;            /* "fruit.picked" {agent, x, y} */
    int32_t obs_around, obs_position;
    const polis_json_api *json;                              /* for JSON actions */
    int32_t kind_tree, kind_fruit, layer_trees, stat_picked; /* looks */
} orchard;

/* views.c: the "text" view and the action parser */
polis_status orchard_register_views(orchard *o);
/* looks.c: what recordings and the viewer draw */
polis_status orchard_register_looks(orchard *o);

#endif
