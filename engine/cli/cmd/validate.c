/* engine/cli/cmd/validate.c — `polis validate SCENARIO`: create the env (parse the scenario,
 * load its plugins and scripts, validate every parameter) and say whether that worked. */
#include <stdio.h>

#include "cmd/commands.h"
#include "session/play.h"

static const cli_use USES[] = {CLI_SCENARIO_OPTIONS};

static int validate_main(cli_args *a)
{
    polis_env *env = cli_env_of(a, false, NULL);
    if (!env) return EXIT_ENV;
    const polis_io *io = polis_env_io(env);
    printf("ok: %s: %d agent%s, %d action%s, %zu obs bytes\n", polis_env_name(env),
           (int)polis_env_n_agents(env), polis_env_n_agents(env) == 1 ? "" : "s",
           (int)polis_env_n_actions(env), polis_env_n_actions(env) == 1 ? "" : "s", io->obs_size);
    polis_env_destroy(env);
    return 0;
}

const cli_command CLI_CMD_VALIDATE = {
    .name = "validate",
    CLI_SCENARIO_AND(USES),
    .summary = "load the scenario, its plugins and scripts; report errors",
    .about =
        "Creates an env from SCENARIO: parses it, loads its plugins and scripts, validates every\n"
        "parameter and freezes registration. Prints\n"
        "  ok: <name>: N agents, M actions, K obs bytes\n"
        "or the error with its place (JSON path, file:line).\n",
    .run = validate_main,
};
