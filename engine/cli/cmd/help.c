/* engine/cli/cmd/help.c — `polis help [COMMAND]`: the list of commands, or one command's help,
 * both printed from the command table (commands.h) and the option table (util/options.h). */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"

/* "  run SCENARIO        summary" and the summary's further lines under its first. */
static void print_command(FILE *f, const cli_command *c)
{
    char left[64];
    snprintf(left, sizeof left, "%s %s", c->name, c->args);
    if (strlen(left) <= 19)
        fprintf(f, "  %-19s ", left);
    else
        fprintf(f, "  %s\n%22s", left, "");
    for (const char *p = c->summary; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "%.*s\n", n, p);
        if (!nl) break;
        p = nl + 1;
        fprintf(f, "%22s", "");
    }
}

/* The list of commands ("run, validate, ...") into buf. */
static void command_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; CLI_COMMANDS[i]; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", CLI_COMMANDS[i]->name);
        if (n > 0 && (size_t)n < cap - used) used += (size_t)n;
    }
}

int cli_unknown_command(const char *cmd, const char *name)
{
    char names[256];
    command_names(names, sizeof names);
    return cli_usage(cmd, "unknown command '%s' (commands: %s)", name, names);
}

void cli_print_usage(FILE *f)
{
    fprintf(f, "usage: polis <command> [options]\n\ncommands:\n");
    for (int i = 0; CLI_COMMANDS[i]; i++) print_command(f, CLI_COMMANDS[i]);
    fprintf(f, "\noptions:\n"
               "  --help, -h          show help\n"
               "  --version           print the polis version\n"
               "\n"
               "Exit status: 0 ok, 1 the scenario or engine failed, 2 bad usage.\n");
}

static int help_main(cli_args *a)
{
    if (a->n_pos == 0) {
        cli_print_usage(stdout);
        return 0;
    }
    const cli_command *c = cli_command_find(a->pos[0]);
    if (!c) return cli_unknown_command(a->name, a->pos[0]);
    cli_command_help(c);
    return 0;
}

const cli_command CLI_CMD_HELP = {
    .name = "help",
    .args = "[COMMAND]",
    .summary = "show this help or a command's help",
    .usage = "help [COMMAND]",
    .about = "Shows the list of commands, or the help of COMMAND.\n",
    .pos_name = {"COMMAND"},
    .pos_what = {"a command"},
    .n_pos = 1,
    .run = help_main,
};
