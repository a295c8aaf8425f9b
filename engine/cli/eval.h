/* engine/cli/eval.h — `polis eval` (eval.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_EVAL_H
#define POLIS_CLI_EVAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "util.h"

/* The text of `polis help eval`. */
extern const char CLI_EVAL_HELP[];

/* Runs `polis eval` with the whole argv (argv[1] is "eval"). Returns the exit status:
 * 0 ok, 1 the scenario or engine failed, 2 bad usage. */
int cli_eval_main(int argc, char **argv);

/* The overrides every env of `polis eval` (and `polis serve`) is created with: the metrics
 * plugin appended to the scenario's plugins unless it has it or no_metrics, then the user's
 * --set/--agents overrides. A string to cJSON_free, or NULL for none (*oom on failure). */
char *cli_metrics_overrides(const char *scenario, bool no_metrics, const cli_overrides *user,
                            bool *oom);

/* The "metrics" rendering's pieces merged into one object (NULL: a piece is not a JSON
 * object, or out of memory), and that object flattened as `polis eval` reports it: every
 * number and null under dotted keys, arrays and the top-level "episode" left out. */
cJSON *cli_metrics_parse(const char *text);
cJSON *cli_metrics_flat(const cJSON *metrics);

#endif
