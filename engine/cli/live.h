/* engine/cli/live.h — `polis serve SCENARIO --http` (live.c), called from `polis serve`. */
#ifndef POLIS_CLI_LIVE_H
#define POLIS_CLI_LIVE_H

/* The help text of the --http mode. */
extern const char CLI_LIVE_HELP[];

/* Runs `polis serve ... --http [HOST:]PORT` with the whole argv (argv[1] is "serve"). Returns
 * the exit status: 0 after an interrupt, 1 the scenario, the viewer or the socket failed (or
 * no libwebsockets), 2 bad usage. */
int cli_live_main(int argc, char **argv);

#endif
