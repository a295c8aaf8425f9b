/* engine/cli/session/record.h — `--record FILE` for the commands that play episodes (run, eval):
 * opens a recorder (docs/recording.md) with the scenario file's text, its directory and the
 * command line's overrides in the header. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_RECORD_H
#define POLIS_CLI_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/polis.h"

/* The header's scenario: the text of the file at scenario_path (free info->scenario_text),
 * its path, and the directory relative plugin and script paths resolve against, absolute (in
 * dir, PATH_MAX bytes), so a replay from another working directory finds them. False after
 * printing why (`cmd`: "--record", "serve"). */
bool cli_record_scenario(polis_record_info *info, const char *scenario_path, char *dir,
                         const char *cmd);

/* The "policies" array of a recording whose agents all play `policy`, as JSON text
 * (cJSON_free it); NULL when memory runs out. */
char *cli_record_policies(polis_env *env, const char *policy);

/* Opens FILE for env (before its first reset). overrides: the JSON text the env was created
 * with, or NULL. policies: a JSON array text or NULL. Prints the reason and returns NULL on
 * failure. */
polis_recorder *cli_record_open(const char *file, polis_env *env, const char *scenario_path,
                                const char *overrides, uint64_t seed, int64_t keyframe_every,
                                const char *policies, const char *source);

#endif
