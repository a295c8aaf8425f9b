/* engine/cli/cmd/parse.c — `polis parse SCENARIO ACTION`: an agent's text or JSON action turned
 * into an action id the way polis_env_parse_action does. */
#include <stdio.h>

#include "cmd/commands.h"
#include "session/play.h"

static const cli_use USES[] = {
    {.id = CLI_OPT_AGENT, .help = "the acting agent, an id or an agent name (default 0)"},
    {.id = CLI_OPT_SEED, .help = "seed of the reset (default: the scenario's \"seed\")"},
    CLI_SCENARIO_OPTIONS,
};

static int parse_main(cli_args *a)
{
    polis_env *env = cli_env_of(a, false, NULL);
    if (!env) return EXIT_ENV;
    int32_t agent = 0;
    if (cli_has(a, CLI_OPT_AGENT)) {
        int rc = cli_resolve_agent(env, a->name, cli_text(a, CLI_OPT_AGENT), &agent);
        if (rc) {
            polis_env_destroy(env);
            return rc;
        }
    }
    /* Parsers may read the world (the nearest tree, the agent's inventory): give them one. */
    uint64_t seed = cli_has(a, CLI_OPT_SEED) ? a->v[CLI_OPT_SEED].u64 : polis_env_default_seed(env);
    if (polis_env_reset(env, seed) != POLIS_OK) return cli_env_failure(env);
    int32_t id;
    if (polis_env_parse_action(env, agent, a->pos[1], &id) != POLIS_OK) return cli_env_failure(env);
    printf("%d %s\n", (int)id, polis_env_action_name(env, id));
    polis_env_destroy(env);
    return 0;
}

const cli_command CLI_CMD_PARSE = {
    .name = "parse",
    .args = "SCENARIO ACTION",
    .summary = "turn a text or JSON action into an action id",
    .usage = "parse SCENARIO [options] ACTION",
    .about =
        "Resets SCENARIO and turns ACTION, an agent's text or JSON action (\"move north\",\n"
        "'{\"action\": \"move\", \"direction\": \"north\"}'), into an action id the way\n"
        "polis_env_parse_action does: an exact action name first, then the registered parsers in\n"
        "order. Prints \"<id> <name>\"; exits 1 with the reason when nothing accepts ACTION. The\n"
        "action mask is not consulted. Put ACTION after -- if it starts with '-'.\n",
    CLI_USES(USES),
    .pos_name = {"SCENARIO", "ACTION"},
    .pos_what = {"a scenario .json file", "an action text, e.g. \"move north\""},
    .n_pos = 2,
    .n_required = 2,
    .extra_note = "quote an action of several words",
    .run = parse_main,
};
