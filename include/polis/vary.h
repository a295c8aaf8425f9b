/*
 * polis/vary.h — task distributions: what a scenario's top-level "vary" key draws anew at
 * every reset (docs/scenario.md, "Task distributions"). Each member of "vary" is an override
 * path (the syntax of polis_options.overrides) and a draw:
 *
 *   {"choice": [v, ...]}                     one of the values, uniformly
 *   {"choice": [v, ...], "weights": [w, ...]} one of the values with those weights
 *   {"range": [lo, hi]}                      a real number uniform in [lo, hi)
 *   {"range": [lo, hi], "int": true}         an integer uniform in lo..hi, both included
 *   {"groups": {"groups": G, ...}}           a social structure (social plugin's groups)
 *
 * polis_env_reset(env, seed) draws the task from a generator seeded by `seed` alone (a stream
 * of its own: the env's generator, which the game draws from, is seeded as without "vary"),
 * so an episode is reproduced from its seed. When the draw differs from what the env is built
 * with, the env is rebuilt in place with the drawn values as overrides: a task may change
 * values (map sizes, densities, social structures), not the env's layout — the agents, the
 * actions, the observation record and the event types stay those of the scenario, and a
 * task that changes them is refused naming the difference. The io buffers, host subscribers
 * and the env's address stay. Runtime visibility settings (polis/visibility.h) do not
 * survive a rebuild.
 */
#ifndef POLIS_VARY_H
#define POLIS_VARY_H

#include <stdint.h>

#include "polis/types.h"

POLIS_API_BEGIN

struct polis_env;

/* The task the current episode plays: a JSON object of override paths and the values drawn
 * for them, in the order "vary" lists them ("{}" before the first reset). NULL when the
 * scenario has no "vary". Borrowed, valid until the next reset or polis_env_destroy. */
const char *polis_env_task(const struct polis_env *env);

/* polis_env_reset, playing `task` (a JSON object of override paths and values, as
 * polis_env_task returns it) instead of drawing one: a replay re-applies a recorded task.
 * NULL task: draw, as polis_env_reset does. POLIS_ERR_STATE when the scenario has no "vary";
 * POLIS_ERR_CONFIG, naming the path, for a task that cannot be applied. */
polis_status polis_env_reset_task(struct polis_env *env, uint64_t seed, const char *task);

/* The scenario's draws: how many, and draw i's override path and its spec (the JSON text of
 * the draw as written, normalised). NULL for a bad index. Borrowed, valid until
 * polis_env_destroy. */
int32_t polis_env_n_varied(const struct polis_env *env);
const char *polis_env_varied_path(const struct polis_env *env, int32_t i);
const char *polis_env_varied_spec(const struct polis_env *env, int32_t i);

POLIS_API_END
#endif
