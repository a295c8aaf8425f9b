/* engine/cli/bench.h — `polis bench` (bench.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_BENCH_H
#define POLIS_CLI_BENCH_H

/* The text of `polis help bench`. */
extern const char CLI_BENCH_HELP[];

/* Runs `polis bench` with the whole argv (argv[1] is "bench"). Returns the exit status:
 * 0 ok, 1 the scenario or engine failed, 2 bad usage. */
int cli_bench_main(int argc, char **argv);

#endif
