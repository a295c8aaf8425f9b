/* engine/cli/view.h — `polis view` (view.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_VIEW_H
#define POLIS_CLI_VIEW_H

/* The text of `polis help view`. */
extern const char CLI_VIEW_HELP[];

/* Runs `polis view` with the whole argv (argv[1] is "view"). Returns the exit status: 0 after
 * an interrupt, 1 the file, the viewer or the socket failed (or no libwebsockets), 2 bad usage. */
int cli_view_main(int argc, char **argv);

#endif
