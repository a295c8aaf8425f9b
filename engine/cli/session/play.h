/* engine/cli/session/play.h — driving one env from the command line: creating it from a
 * scenario file with the command line's overrides, reporting its failures, naming an agent,
 * and the built-in policies of `polis run`, `record` and `render`. Part of the CLI, not of
 * libpolis. */
#ifndef POLIS_CLI_PLAY_H
#define POLIS_CLI_PLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/polis.h"
#include "polis/rng.h"
#include "util/util.h"

/* A polis_options.log that prints each line to stderr. */
void cli_log_stderr(void *ud, const char *msg);

/* The env of the scenario file `path`, created with the overrides (polis_options.overrides
 * text, or NULL) and the extra plugin directories (NULL: none); log lines go to stderr when
 * `show_logs`. NULL after printing "polis: <the env's message>" (and, for one of AdaSociety's
 * own files, what to do instead). */
polis_env *cli_env_open(const char *path, const char *plugin_path, const char *overrides,
                        bool show_logs);

struct cli_args;
/* The env of the command's SCENARIO (its first argument, a file or a scenario name:
 * cli_scenario) with its --plugin-path and overrides; *path (when not NULL) gets the file.
 * NULL after printing why. */
polis_env *cli_env_of(const struct cli_args *a, bool show_logs, const char **path);

/* Prints "polis: <the env's last error>", destroys env and returns EXIT_ENV. */
int cli_env_failure(polis_env *env);

/* The agent `name` (an agent name, or an id) of env in *out. Returns 0, or EXIT_USAGE after
 * printing the usage error of `cmd` (option --agent) listing the agents. */
int cli_resolve_agent(polis_env *env, const char *cmd, const char *name, int32_t *out);

/* The policy of `polis run`: "random" (uniform over each agent's legal actions, from a
 * generator of its own seeded by the episode seed), "noop" (action 0) or a policy the scenario
 * registers (polis_env_policy_act). */
typedef struct cli_play_policy {
    const char *name;
    int kind;   /* CLI_PLAY_RANDOM, CLI_PLAY_NOOP or CLI_PLAY_NAMED */
    int32_t id; /* CLI_PLAY_NAMED: the env's policy */
    polis_rng rng;
} cli_play_policy;

enum { CLI_PLAY_RANDOM, CLI_PLAY_NOOP, CLI_PLAY_NAMED };

/* The policy `name` (NULL: random) in env. Returns 0, or EXIT_USAGE after printing the usage
 * error of `cmd` naming the scenario's policies. */
int cli_play_policy_init(cli_play_policy *p, polis_env *env, const char *cmd, const char *name);
/* Seeds the random policy's generator for the episode of `seed`. */
void cli_play_policy_seed(cli_play_policy *p, uint64_t seed);
/* Writes every agent's action into the env's io. */
polis_status cli_play_policy_act(cli_play_policy *p, polis_env *env);

#endif
