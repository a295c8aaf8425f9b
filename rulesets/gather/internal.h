/*
 * internal.h — what gather's plugin glue (gather.c) shares with its optional views: the
 * plugin's state around the rules core, and the functions that register the views.
 */
#ifndef GATHER_INTERNAL_H
#define GATHER_INTERNAL_H

#include "core.h"
#include "polis/kit.h"

typedef struct gather {
    const polis_host *h;
    polis_ctx *ctx;
    gather_core core;
    int32_t layer_agents, layer_coins; /* the kernel grid layers the core's maps live in */
    int32_t obs_view, obs_position;    /* observation field ids */
    polis_kit_stored position;         /* obs_position, written in the dtype stored */
    int32_t comp_pos;                  /* "gather.position": the positions, for other plugins */
    int32_t ev_moved, ev_coin;
    int32_t act[GATHER_DIRS];   /* action ids of move_north .. move_east */
    int32_t *window;            /* (2v+1)^2 scratch for windows */
    const polis_json_api *json; /* for JSON actions */
    int32_t kind_floor, kind_coin, look_ground, look_coins, stat_coins; /* looks */
    const polis_scene_api *scene; /* layer_same, layer_rows (looks) */
    /* [(height + 63) / 64] each, in core.coin_rows' allocation (GATHER_ROW_WORDS of it): the
     * coin rows that changed since the scene (write_scene) and the copy's take (take_coins)
     * last read them, left to each by the other (looks.c, read_rows) */
    uint64_t *scene_rows, *take_rows;
    int32_t look_w, look_h, look_n; /* the grid and agents at registration (draw_coins's) */
} gather;

/* The words of core.coin_rows' allocation: the rules' marks, scene_rows and take_rows. */
#define GATHER_ROW_WORDS(height) (3 * (size_t)(((height) + 63) / 64))

/* views.c: the "text" and "json" renderers and the action parser (init). */
polis_status gather_register_views(gather *g);
/* looks.c: kinds, layers, the coins stat and the scene (start, when the grid is sized). */
polis_status gather_register_looks(gather *g);

#endif
