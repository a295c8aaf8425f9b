/* engine/cli/eval.h — `polis eval` (eval.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_EVAL_H
#define POLIS_CLI_EVAL_H

/* The text of `polis help eval`. */
extern const char CLI_EVAL_HELP[];

/* Runs `polis eval` with the whole argv (argv[1] is "eval"). Returns the exit status:
 * 0 ok, 1 the scenario or engine failed, 2 bad usage. */
int cli_eval_main(int argc, char **argv);

#endif
