/*
 * polis/visibility.h — who sees whom: hiding chosen agents from chosen observers, in every
 * observation a game writes (observation fields, text and JSON views, plans, an agent's view
 * of the scene), while the hidden agents go on acting in the world (docs/visibility.md).
 *
 * What an observer sees is decided per pair (observer, target) at the env's current tick
 * (polis_env_tick: the observations written after N steps see tick N):
 *   1. an agent always sees itself;
 *   2. a runtime setting for the pair (polis_env_visibility_set, a plugin's or a script's
 *      "visibility" host API) decides, when there is one;
 *   3. otherwise the scenario's "visibility" rules: the target is hidden when a rule lists the
 *      observer among its "observers" and the target among its "hidden", and from <= tick <
 *      until;
 *   4. otherwise the target is visible.
 * Runtime settings last for the life of the env (across resets) until set again. Games ask
 * through the "visibility" host API (plugin.h) or polis.visible in Lua.
 *
 * Recording: a change made through polis_env_visibility_set is logged with the tick and episode
 * it was made at; a recorder writes the changes made before a reset or a step into that reset's
 * or step's line, and a replay makes them again before it (docs/recording.md).
 */
#ifndef POLIS_VISIBILITY_H
#define POLIS_VISIBILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/types.h"

POLIS_API_BEGIN

struct polis_env;

/* What a runtime setting says of a pair. */
#define POLIS_VISIBILITY_HIDDEN 0
#define POLIS_VISIBILITY_SHOWN 1
#define POLIS_VISIBILITY_RULES (-1) /* no setting: the scenario's rules decide again */

/* Sets what `observer` sees of `target` from now on: POLIS_VISIBILITY_HIDDEN, _SHOWN or _RULES.
 * -1 as observer or target means every agent. Allowed any time after create (between steps;
 * what was written before, the current observations, is not rewritten). The first setting of an
 * env allocates its table of settings (n_agents^2 / 4 bytes) once. POLIS_ERR_INVALID naming the
 * bad argument for an agent outside -1 .. n_agents - 1 or another state; POLIS_ERR_LIMIT after
 * 256 settings between two steps (the change log a recorder reads is that long). */
polis_status polis_env_visibility_set(struct polis_env *env, int32_t observer, int32_t target,
                                      int32_t state);
/* true when `observer` sees `target` now (false for agents outside 0 .. n_agents - 1). */
bool polis_env_visible(const struct polis_env *env, int32_t observer, int32_t target);
/* false when nothing is hidden from anyone now (no rule in effect at this tick, no runtime
 * setting that hides): games skip their per-pair checks then. */
bool polis_env_visibility_active(const struct polis_env *env);

/* The scenario's rules (its "visibility" list, overrides applied): how many, and rule i: its
 * ticks (until -1: never ends) and, when the arrays are not NULL, n_agents flags each of its
 * observers and its hidden agents. POLIS_ERR_INVALID for a bad index. */
int32_t polis_env_visibility_n_rules(const struct polis_env *env);
polis_status polis_env_visibility_rule(const struct polis_env *env, int32_t i, int64_t *from,
                                       int64_t *until, uint8_t *observers, uint8_t *hidden);

/* One change made through polis_env_visibility_set. */
typedef struct polis_visibility_change {
    int32_t observer, target, state;
} polis_visibility_change;

/* The changes polis_env_visibility_set made while the env was at (episode, tick) — episode as
 * counted by resets (0 before the first), tick as polis_env_tick then — in the order made: what
 * a recorder writes into the line of the reset or step that followed. Only the two latest
 * (episode, tick) moments with changes are kept; *n is 0 for any other. The array is borrowed
 * until the next polis_env_visibility_set. */
const polis_visibility_change *polis_env_visibility_changes(const struct polis_env *env,
                                                            int64_t episode, int64_t tick,
                                                            int32_t *n);

POLIS_API_END
#endif
