/*
 * core.h — orchard's rules, knowing nothing of the engine: trees on a grid bear fruit that
 * ripens over time; agents walk about and pick ripe fruit. An orchard_core is one game; the
 * functions below are every rule. Randomness comes from the polis_rng passed in (a header-only
 * generator, so these files build and test without libpolis).
 *
 * Copying this template: rename orchard_* and ORCHARD_*, then change the rules here first;
 * tests/test_core.c checks them on crafted states before any engine is involved.
 */
#ifndef ORCHARD_CORE_H
#define ORCHARD_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/rng.h"

/* What the scenario can set (the plugin's parameter table in game.c fills it). */
typedef struct orchard_params {
    int64_t trees; /* trees planted at reset */
    int64_t ripen; /* steps a picked tree needs to bear fruit again */
    double value;  /* reward per fruit */
} orchard_params;

/* The actions besides the kernel's noop, in the order game.c registers them. */
enum { ORCHARD_NORTH, ORCHARD_SOUTH, ORCHARD_WEST, ORCHARD_EAST, ORCHARD_PICK, ORCHARD_ACTIONS };

typedef struct orchard_core {
    orchard_params p;
    int32_t n_agents, width, height;
    /* [height * width] each, owned by the caller */
    int32_t *tree;   /* 0 no tree; else 1 + steps until ripe (1: ripe now) */
    int32_t *agent;  /* 0 empty; else agent id + 1 */
    int32_t *x, *y;  /* [n_agents] positions */
    float *reward;   /* [n_agents] this step */
    int32_t *picked; /* [n_agents] fruit picked this episode */
} orchard_core;

/* A new episode: clears the map, places agents and then trees on random free cells (ripe).
 * False when the map is too small. */
bool orchard_reset(orchard_core *g, polis_rng *rng);

/* Whether an action can be taken now (for the action mask). */
bool orchard_legal(const orchard_core *g, int32_t agent, int32_t action);

/* Applies one agent's action; false when it was illegal (nothing happens). */
bool orchard_act(orchard_core *g, int32_t agent, int32_t action);

/* The end of a step: trees ripen by one step. Call after every agent acted. */
void orchard_grow(orchard_core *g);

/* The observation: for each of the 3x3 cells around the agent (rows of y), 0 nothing or off
 * the map, 1 an unripe tree, 2 a ripe tree, 3 another agent. */
void orchard_observe(const orchard_core *g, int32_t agent, int8_t out[9]);

#endif
