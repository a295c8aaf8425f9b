/* engine/cli/cmd/commands.h — the commands of the `polis` program, one file each in cmd/
 * (engine/cli/README.md). main.c dispatches to them; `polis help` lists them. */
#ifndef POLIS_CLI_COMMANDS_H
#define POLIS_CLI_COMMANDS_H

#include <stdio.h>

#include "util/options.h"

extern const cli_command CLI_CMD_RUN;      /* run.c */
extern const cli_command CLI_CMD_VALIDATE; /* validate.c */
extern const cli_command CLI_CMD_DESCRIBE; /* describe.c */
extern const cli_command CLI_CMD_RENDER;   /* render.c */
extern const cli_command CLI_CMD_RECORD;   /* record.c */
extern const cli_command CLI_CMD_PARSE;    /* parse.c */
extern const cli_command CLI_CMD_BENCH;    /* bench.c */
extern const cli_command CLI_CMD_EVAL;     /* eval.c */
extern const cli_command CLI_CMD_SERVE;    /* serve.c: --stdio, --tcp */
extern const cli_command CLI_CMD_LIVE;     /* serve.c: --http, live play */
extern const cli_command CLI_CMD_SWEEP;    /* sweep.c */
extern const cli_command CLI_CMD_REPLAY;   /* replay.c */
extern const cli_command CLI_CMD_VIEW;     /* view.c */
extern const cli_command CLI_CMD_LLM;      /* llm.c: python3 -m polis.llm */
extern const cli_command CLI_CMD_HELP;     /* help.c */

/* Every command in the order `polis help` lists them, NULL-terminated. */
extern const cli_command *const CLI_COMMANDS[];

/* The command named `name` (NULL: none). */
const cli_command *cli_command_find(const char *name);

/* `polis help`'s list of commands, to f (help.c). */
void cli_print_usage(FILE *f);
/* The usage error "unknown command 'NAME' (commands: run, ...)" of cmd (NULL: of polis). */
int cli_unknown_command(const char *cmd, const char *name);

/* `polis serve ...`: live play (CLI_CMD_LIVE) when the arguments hold --http, else CLI_CMD_SERVE.
 * The agent protocol's fuzz harness calls it as main does. */
int cli_serve_main(int argc, char **argv);

/* `polis llm ARGS...`: runs python3 -m polis.llm ARGS... (llm.c); its arguments are the
 * runner's, not parsed here. */
int cli_llm_main(int argc, char **argv);

/* The options `polis run` and `polis record` share (run.c). */
#define CLI_RUN_OPTIONS                                                                            \
    {.id = CLI_OPT_SEED}, {.id = CLI_OPT_STEPS}, {.id = CLI_OPT_EPISODES, .def = "1"},             \
        {.id = CLI_OPT_POLICY}, {.id = CLI_OPT_QUIET}, {.id = CLI_OPT_JSON}, CLI_SCENARIO_OPTIONS

/* `polis run` and `polis record`: episodes played by a built-in policy (run.c). */
int cli_run_episodes(cli_args *a);

#endif
