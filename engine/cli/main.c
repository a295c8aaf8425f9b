/*
 * engine/cli/main.c — the `polis` program: finds the command (cmd/commands.h) and hands it the
 * command line, which the option table parses (util/options.h). The layout of the program is
 * in engine/cli/README.md.
 *
 * The CLI is a client of the public embedding API only (include/polis): it sees what any host
 * program sees. Exit status: 0 success, 1 the env refused (its message, prefixed "polis: "),
 * 2 a usage error (unknown command or option, missing or malformed argument).
 */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "polis/polis.h"

const cli_command *const CLI_COMMANDS[] = {
    &CLI_CMD_RUN,    &CLI_CMD_VALIDATE, &CLI_CMD_DESCRIBE, &CLI_CMD_RENDER, &CLI_CMD_RECORD,
    &CLI_CMD_PARSE,  &CLI_CMD_BENCH,    &CLI_CMD_EVAL,     &CLI_CMD_SERVE,  &CLI_CMD_SWEEP,
    &CLI_CMD_REPLAY, &CLI_CMD_VIEW,     &CLI_CMD_LLM,      &CLI_CMD_HELP,   NULL,
};

const cli_command *cli_command_find(const char *name)
{
    for (int i = 0; CLI_COMMANDS[i]; i++)
        if (strcmp(CLI_COMMANDS[i]->name, name) == 0) return CLI_COMMANDS[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        if (argc > 2) return cli_usage(NULL, "--version takes no arguments");
        printf("polis %s\n", polis_version());
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return cli_command_main(&CLI_CMD_HELP, argc, argv);
    if (strcmp(cmd, "serve") == 0) return cli_serve_main(argc, argv);
    if (strcmp(cmd, "llm") == 0) return cli_llm_main(argc, argv);
    const cli_command *c = cli_command_find(cmd);
    if (c) return cli_command_main(c, argc, argv);
    if (cmd[0] == '-') return cli_usage(NULL, "unknown option '%s'", cmd);
    return cli_unknown_command(NULL, cmd);
}
