/* engine/cli/sweep.h — `polis sweep` (sweep.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_SWEEP_H
#define POLIS_CLI_SWEEP_H

/* The text of `polis help sweep`. */
extern const char CLI_SWEEP_HELP[];

/* Runs `polis sweep` with the whole argv (argv[1] is "sweep"). Returns the exit status:
 * 0 ok, 1 the spec, a scenario, the engine or the results file failed, 2 bad usage. */
int cli_sweep_main(int argc, char **argv);

#endif
