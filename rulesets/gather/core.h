/*
 * core.h — gather's rules, knowing nothing of the engine: a gather_core is one game (agents'
 * positions, the agent and coin maps, the counts), and the functions below are every rule.
 * Randomness comes from the polis_rng passed in; the maps are arrays the caller provides.
 * gather.c wraps this as a polis plugin (the maps are then two of the kernel grid's layers),
 * tests/test_core.c drives it directly on crafted states. README.md states the rules.
 */
#ifndef GATHER_CORE_H
#define GATHER_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/rng.h"

/* The scenario's parameters (the plugin's parameter table fills it). */
typedef struct gather_params {
    int64_t coins;     /* coins on the map at reset */
    double coin_value; /* reward per coin collected */
    int64_t view;      /* view radius of the observation window */
    bool respawn;      /* a collected coin reappears elsewhere */
} gather_params;

typedef struct gather_pos {
    int32_t x, y;
} gather_pos;

/* The four moves, in the order of their actions: north (y-1), south (y+1), west, east. */
enum { GATHER_NORTH, GATHER_SOUTH, GATHER_WEST, GATHER_EAST, GATHER_DIRS };

typedef struct gather_core {
    gather_params p;
    int32_t n_agents, width, height;
    bool wrap; /* a torus; otherwise moves off the map are illegal */
    /* [height][width] each, provided by the caller: agent id + 1 (0 empty), and 1 for a coin */
    int32_t *agents, *coins;
    gather_pos *pos;      /* [n_agents] */
    int32_t *step_coins;  /* [n_agents] collected this step */
    int32_t *total_coins; /* [n_agents] collected this episode */
    int32_t coins_left;
    /* [(height + 63) / 64] or NULL, provided by the caller: row y's bit (bit y % 64 of word
     * y / 64) is set whenever a coin of row y appears or goes; the caller clears them (the
     * scene redraws only those rows) */
    uint64_t *coin_rows;
} gather_core;

/* Notes that row y's coins changed. */
static inline void gather_coin_row(gather_core *g, int32_t y)
{
    if (g->coin_rows) g->coin_rows[y >> 6] |= UINT64_C(1) << (y & 63);
}

/* The cell of a map. */
static inline int32_t *gather_cell(int32_t *map, const gather_core *g, int32_t x, int32_t y)
{
    return map + (int64_t)y * g->width + x;
}

/* A new episode: clears both maps, puts each agent on a random free cell, then p.coins coins
 * on free cells. False when an agent finds no free cell (*bad_agent says which). */
bool gather_reset(gather_core *g, polis_rng *rng, int32_t *bad_agent);

/* Where a move leads: false when it leaves a bounded map (the move is illegal). */
bool gather_target(const gather_core *g, gather_pos from, int32_t dir, gather_pos *out);

/* Moves an agent one cell. 1: moved (*from is where it was), 0: blocked by another agent
 * (a no-op, not illegal), -1: illegal (off a bounded map). */
int gather_move(gather_core *g, int32_t agent, int32_t dir, gather_pos *from);

/* A step begins: nothing collected yet. */
void gather_begin(gather_core *g);

/* Collects the coin under the agent, if any (true). A respawning game then calls
 * gather_respawn, after the caller has told the world. */
bool gather_collect(gather_core *g, int32_t agent);

/* With respawn on, puts a new coin on a random free cell (none when the map is full). */
void gather_respawn(gather_core *g, polis_rng *rng);

/* The episode ends once every coin is collected, when coins do not respawn. */
bool gather_over(const gather_core *g);

/* The reward of this step: coin_value per coin collected. */
float gather_reward(const gather_core *g, int32_t agent);

/* Copies the (2v+1) x (2v+1) window of `map` centred on (cx, cy) into out, rows of y,
 * wrapping on a torus; cells off a bounded map read as `outside`. */
void gather_window(const gather_core *g, const int32_t *map, int32_t cx, int32_t cy, int32_t v,
                   int32_t outside, int32_t *out);

/* The observation "view" of an agent: channel 0 agents (2 self, 1 other, -1 off the map),
 * channel 1 coins, each (2v+1)^2; window is (2v+1)^2 scratch. */
void gather_observe(const gather_core *g, int32_t agent, int8_t *out, int32_t *window);

#endif
