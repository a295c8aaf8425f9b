/* engine/cli/session/episode.h — what `polis eval` and `polis sweep` share: the scenario overrides
 * that add the metrics plugin, one episode played by a policy and flattened into its metrics, the
 * summary statistics of a metric over episodes and the progress bar. Part of the CLI. */
#ifndef POLIS_CLI_EPISODE_H
#define POLIS_CLI_EPISODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "polis/polis.h"

/* The overrides text (polis_options.overrides; cJSON_free it) for evaluating the scenario file
 * `path`: "metrics" appended to its plugins when `add_metrics` and it lacks the plugin, then
 * every member of `user` (an object of override paths, or NULL) in order, so the user's paths
 * see the plugin list with metrics in it. NULL when there is nothing to override, or with
 * *oom set when memory ran out. A file that is not a readable JSON object gets no metrics
 * override: creating the env reports it. */
char *cli_eval_overrides(const char *path, const cJSON *user, bool add_metrics, bool *oom);

/* The first --set override (in `overrides`, an object of path -> value) of the scenario's
 * "seats" ("seats" or "seats.AGENT"), or NULL: the commands read the seats from the file and
 * take --seat instead (session/seats.h, cli_seats_from_scenario). */
const char *cli_overrides_seats(const cJSON *overrides);

/* Whether the env renders the "metrics" format (the metrics plugin, or a game's own). */
bool cli_has_metrics(polis_env *env);

/* The names of the env's policies, ", "-separated, in buf (truncated to size). */
void cli_policy_names(polis_env *env, char *buf, size_t size);

/* The policy named `name` in *out. Returns 0, or EXIT_USAGE after printing the usage error of
 * `cmd` naming the scenario's policies. */
int cli_find_policy(polis_env *env, const char *cmd, const char *name, int32_t *out);

/* The "metrics" rendering's pieces merged into one object (the first plugin's value wins a
 * name both use; NULL: a piece is not a JSON object, or out of memory), and that object
 * flattened as `polis eval` reports it: every number and null under dotted keys, arrays and
 * the top-level "episode" left out (NULL on out of memory). `polis serve` reports the latter
 * at an episode's end. */
cJSON *cli_metrics_parse(const char *text);
cJSON *cli_metrics_flat(const cJSON *metrics);

/* One finished episode. */
typedef struct cli_episode {
    int64_t steps;
    uint64_t hash;  /* polis_env_state_hash at the end */
    cJSON *metrics; /* flat object: "steps", "illegal_actions", then every number of the
                       metrics rendering under dotted keys (null: undefined), or, without the
                       metrics plugin, "reward.mean" and "reward.total" */
    cJSON *raw;     /* the metrics rendering as one object (when asked; NULL otherwise) */
    cJSON *task;    /* the task the episode drew (polis_env_task: the scenario's "vary"), or
                       NULL when the scenario varies nothing */
} cli_episode;

/* Resets env with `seed` and lets `policy` act until the episode ends or after `steps_limit`
 * steps (0: no limit), recording the episode into `rec` when not NULL (its end line with the
 * metrics rendering). `returns` has room for one double per agent. Returns true with *out
 * filled (cli_episode_free it), or false with the reason in err (the env's message, or "out
 * of memory"). */
bool cli_play_episode(polis_env *env, int32_t policy, uint64_t seed, int64_t steps_limit,
                      bool has_metrics, bool want_raw, double *returns, polis_recorder *rec,
                      cli_episode *out, char *err, size_t err_size);
void cli_episode_free(cli_episode *e);

/* Who acts in an episode played by cli_play_episode_by: `begin` (may be NULL) after the reset,
 * `act` before every step, writing the actions into the env's io; `end` (may be NULL) once the
 * episode is over, adding what the players report of it (an LLM's calls, tokens, dollars) to
 * `figures` (flat names; `game` is the episode's flat metrics, whose names figures may not
 * take). Each returns false with the reason in err. */
typedef struct cli_actor {
    bool (*begin)(void *ud, polis_env *env, uint64_t seed, char *err, size_t err_size);
    bool (*act)(void *ud, polis_env *env, char *err, size_t err_size);
    bool (*end)(void *ud, const cJSON *game, cJSON *figures, char *err, size_t err_size);
    void *ud;
} cli_actor;

/* The member of an end line's "metrics" that holds the players' figures (cli_actor.end: the
 * seat protocol's "end" replies, polis.llm's costs): recorded beside the game's metrics,
 * carried over unchecked by `polis replay --verify`, which cannot re-derive them. */
#define CLI_REPORTED "reported"

/* The end line's metrics: `game` (the merged "metrics" rendering, or NULL) with `figures`
 * (flat, may be NULL or empty) as its CLI_REPORTED member; both are copied. NULL, with *oom
 * false, when there is neither; NULL with *oom true when out of memory. */
cJSON *cli_end_metrics(const cJSON *game, const cJSON *figures, bool *oom);

/* cli_play_episode with the actions of `actor` (seats.h's seats, for one). The figures its
 * `end` reports follow the game's in out->metrics and are the end line's CLI_REPORTED. */
bool cli_play_episode_by(polis_env *env, const cli_actor *actor, uint64_t seed, int64_t steps_limit,
                         bool has_metrics, bool want_raw, double *returns, polis_recorder *rec,
                         cli_episode *out, char *err, size_t err_size);

/* A metric over episodes: the defined values (not NaN) among `count` values `stride` apart,
 * their mean, sample standard deviation (n - 1; 0 for one value) and the half-width of the
 * 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom; 0 for one
 * value). */
typedef struct cli_stat {
    int64_t n;
    double mean, sd, ci95;
} cli_stat;
cli_stat cli_stat_of(const double *values, int64_t count, ptrdiff_t stride);

/* Metrics of a fixed number of episodes: the names in first-seen order and every episode's
 * values (NaN: undefined there). Zero-initialise with .episodes set; free with
 * cli_table_free. Allocation failures set .oom. */
typedef struct cli_table {
    char **keys;
    int32_t n_keys, cap_keys;
    double *values; /* [episodes][cap_keys], grown with the keys */
    int64_t episodes;
    bool oom;
} cli_table;

/* The index of a metric name, added (undefined in every episode) when new; -1 on oom. */
int32_t cli_table_key(cli_table *t, const char *key);
void cli_table_put(cli_table *t, int64_t episode, const char *key, double v);
/* Every member of a flat metrics object (cli_episode.metrics; null: NaN) for one episode. */
void cli_table_add(cli_table *t, int64_t episode, const cJSON *flat);
cli_stat cli_table_stat(const cli_table *t, int32_t key);
void cli_table_free(cli_table *t);

/* "\r[#####     ] 12/40 episodes, 3.2 s left" on f (a terminal). The estimate is made from
 * the episodes done since `started` of them were (resumed ones) `elapsed` seconds ago;
 * elapsed < 0: no estimate. */
void cli_progress(FILE *f, int64_t done, int64_t total, int64_t started, double elapsed);

#endif
