/* engine/cli/session/record.h — `--record FILE` for the commands that play episodes (run, eval):
 * opens a recorder (docs/recording.md) with the scenario file's text, its directory and the
 * command line's overrides in the header. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_RECORD_H
#define POLIS_CLI_RECORD_H

#include <stdint.h>

#include "polis/polis.h"

/* Opens FILE for env (before its first reset). overrides: the JSON text the env was created
 * with, or NULL. policies: a JSON array text or NULL. Prints the reason and returns NULL on
 * failure. */
polis_recorder *cli_record_open(const char *file, polis_env *env, const char *scenario_path,
                                const char *overrides, uint64_t seed, int64_t keyframe_every,
                                const char *policies, const char *source);

#endif
