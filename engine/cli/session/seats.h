/* engine/cli/session/seats.h — who plays each seat (agent) of one env: a policy the scenario or
 * the kernel registers, a policy process (policyproc.h: a checkpoint, any Python policy, any
 * program speaking the seat protocol), or a population that draws one of its members for the
 * seat at every episode (docs/policies.md). `polis eval` (--seat, --focal, --background),
 * `polis sweep` (policies) and `polis serve --http` (--seat) fill their seats through it.
 *
 * A player is named by text:
 *   NAME          a policy of the scenario or the kernel (random, noop, scripted, ...)
 *   py:SPEC       $POLIS_PYTHON (default python3) -m polis.rl.seat SPEC: a checkpoint file,
 *                 random, module:factory ... (sdk/python/polis/rl/policy.py)
 *   cmd:PROGRAM [ARGS]   a program speaking the seat protocol, words split at spaces
 *   pop:FILE      a population file (below)
 *
 * A population file:
 *   {"polis_population": 1, "name": "bots", "draw": "per_seat" | "per_episode",
 *    "members": [{"policy": "commons_free", "weight": 2}, {"checkpoint": "a.pt"},
 *                {"python": "mod:factory"}, {"command": ["prog", "arg"]}]}
 * Each seat it fills draws a member by weight at every episode, from a generator seeded by
 * the episode's seed (per_episode: one draw for all its seats), so a seeded episode has the
 * same players again. Paths are relative to the file. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_SEATS_H
#define POLIS_CLI_SEATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "polis/polis.h"
#include "session/episode.h"

typedef struct cli_seats cli_seats;

/* The seats of env, every one played by `who` (a NAME, py:, cmd: or pop:; "random" when
 * NULL; `where` names it in errors, "--policy" when NULL). `file`: the scenario file (the
 * processes' hello names it, relative paths of a population start from the population's file).
 * timeout_ms bounds every wait for a process. NULL with the reason in err. */
cli_seats *cli_seats_new(polis_env *env, const char *file, const char *who, const char *where,
                         int timeout_ms, char *err, size_t cap);

/* The scenario file's "seats" object (docs/scenario.md, "seats": agent name -> who plays it
 * wherever the CLI plays the scenario), detached (cJSON_Delete it), or NULL when it has none.
 * The scenario reader checked its shape and agent names when the env was created. */
cJSON *cli_scenario_seats(const char *file);

/* Gives every agent the scenario's "seats" name its player (as cli_seats_assign, `where`
 * "seats.AGENT"). True when there are none. */
bool cli_seats_from_scenario(cli_seats *s, const char *file, char *err, size_t cap);

/* Whether `who` names a player the env does not provide: py:, cmd: or pop:. */
bool cli_seats_outside(const char *who);

/* Agent's player from now on. `where` names the setting in errors ("--seat agent_0=py:x.pt",
 * "--background bots.json"). Starts a policy process the first time one is named. */
bool cli_seats_assign(cli_seats *s, int32_t agent, const char *who, const char *where, char *err,
                      size_t cap);

/* An episode of `seed` starts (after polis_env_reset): populations draw their members, the
 * processes are told their seats. */
bool cli_seats_begin(cli_seats *s, int64_t episode, uint64_t seed, char *err, size_t cap);

/* The episode begun last has ended: every process that played in it and reports figures
 * (policyproc.h: an LLM's tokens, calls, seconds and dollars) is asked for them, and they are
 * added to `figures`: the totals of all processes under each figure's name, each seat's under
 * NAME.AGENT; a name of the game's metrics (`game`, flat) is refused. False with the reason in
 * err (a bad figure names the process, the seat and the episode's seed). */
bool cli_seats_end(cli_seats *s, const cJSON *game, cJSON *figures, char *err, size_t cap);

/* Every unfinished agent's action into io->actions (processes asked all at once). Only
 * agents in `only` (a bool per agent) when it is not NULL. */
bool cli_seats_act(cli_seats *s, const bool *only, char *err, size_t cap);

/* The actor of cli_play_episode_by that plays episodes with these seats: cli_seats_begin
 * after each reset (episodes counted from 0), cli_seats_act before each step, cli_seats_end
 * at the end (the figures then follow the game's metrics and go into the end line). */
cli_actor cli_seats_actor(cli_seats *s);

/* What plays agent in this episode: the player's text ("scripted", "py:/abs/policy.pt"). */
const char *cli_seats_player(const cli_seats *s, int32_t agent);
/* What was assigned to agent (a population's "pop:FILE", or the player's text). */
const char *cli_seats_assigned(const cli_seats *s, int32_t agent);
/* Whether agent is played by a process or a population (not a policy of the env). */
bool cli_seats_external(const cli_seats *s, int32_t agent);

/* The recorder's "policies" array (JSON text, cJSON_free it): what each seat was assigned. */
char *cli_seats_policies_json(const cli_seats *s);

/* Stops every process and frees everything; NULL is ignored. */
void cli_seats_free(cli_seats *s);

#endif
