/* engine/cli/cmd/crossplay.h — `polis eval --focal ... --background ...`: focal players against
 * background populations, one cell per pair (crossplay.c). Part of the CLI. */
#ifndef POLIS_CLI_CROSSPLAY_H
#define POLIS_CLI_CROSSPLAY_H

#include "util/options.h"

/* Runs eval's held-out evaluation with the parsed command line; returns the exit status. */
int cli_crossplay_main(cli_args *a);

/* The player text of a --seat, --focal or --background value: "pop:FILE" for an existing
 * .json file, the value itself otherwise. Into buf (cap bytes). */
const char *cli_player_text(const char *value, char *buf, size_t cap);

/* The check of --seat's AGENT=WHO (options.h's cli_use.check). */
bool cli_check_seat(const char *value, char *why, size_t cap);

/* --policy-timeout in milliseconds (default 600 s). */
int cli_policy_timeout_ms(const cli_args *a);

#endif
