/* engine/cli/serve.h — `polis serve` (serve.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_SERVE_H
#define POLIS_CLI_SERVE_H

/* The text of `polis help serve`. */
extern const char CLI_SERVE_HELP[];

/* Runs `polis serve` with the whole argv (argv[1] is "serve"). Returns the exit status:
 * 0 ok (stdio: the client closed or sent "close"), 1 the scenario or the socket failed,
 * 2 bad usage. */
int cli_serve_main(int argc, char **argv);

#endif
