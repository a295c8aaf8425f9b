/* engine/cli/session/play.c — creating an env from the command line and playing it with the
 * CLI's built-in policies (play.h). */
#include "session/play.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "session/episode.h"
#include "session/proto.h"
#include "util/options.h"

/* The random policy's own generator stream, so it never shares draws with the env. */
#define CLI_POLICY_STREAM 0x706f6c69637955ULL

void cli_log_stderr(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

polis_env *cli_env_open(const char *path, const char *plugin_path, const char *overrides,
                        bool show_logs)
{
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = plugin_path;
    opts.log = show_logs ? cli_log_stderr : NULL; /* NULL: the env discards log lines */
    opts.overrides = overrides;                   /* copied by the env */
    polis_env *env = NULL;
    polis_error err;
    memset(&err, 0, sizeof err);
    polis_status st = polis_env_create_file(path, &opts, &env, &err);
    if (st != POLIS_OK) {
        fprintf(stderr, "polis: %s\n", err.message[0] ? err.message : polis_status_str(err.status));
        cli_scenario_hint(path);
        return NULL;
    }
    return env;
}

polis_env *cli_env_of(const cli_args *a, bool show_logs, const char **path)
{
    const char *file = cli_scenario(a->name, a->pos[0]);
    if (path) *path = file;
    if (!file) return NULL;
    bool oom = false;
    char *overrides = cli_overrides_text(&a->overrides, &oom);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return NULL;
    }
    polis_env *env = cli_env_open(file, cli_text(a, CLI_OPT_PLUGIN_PATH), overrides, show_logs);
    cJSON_free(overrides);
    return env;
}

int cli_env_failure(polis_env *env)
{
    const char *msg = polis_env_error(env);
    fprintf(stderr, "polis: %s\n", msg && *msg ? msg : "unknown error");
    polis_env_destroy(env);
    return EXIT_ENV;
}

int cli_resolve_agent(polis_env *env, const char *cmd, const char *name, int32_t *out)
{
    int32_t n = polis_env_n_agents(env);
    int32_t i = cli_agent_find(env, name);
    uint64_t v;
    if (i < 0 && cli_parse_u64(name, &v) && v < (uint64_t)n) i = (int32_t)v;
    if (i >= 0) {
        *out = i;
        return 0;
    }
    char names[256];
    cli_agent_names(env, names, sizeof names);
    return cli_usage(cmd, "--agent: '%s' is neither an agent id (0..%d) nor an agent name (%s)",
                     name, (int)n - 1, names);
}

int cli_play_policy_init(cli_play_policy *p, polis_env *env, const char *cmd, const char *name)
{
    memset(p, 0, sizeof *p);
    p->name = name ? name : "random";
    if (strcmp(p->name, "random") == 0) {
        p->kind = CLI_PLAY_RANDOM;
    } else if (strcmp(p->name, "noop") == 0) {
        p->kind = CLI_PLAY_NOOP;
    } else {
        p->kind = CLI_PLAY_NAMED;
        return cli_find_policy(env, cmd, p->name, &p->id);
    }
    return 0;
}

void cli_play_policy_seed(cli_play_policy *p, uint64_t seed)
{
    polis_rng_seed(&p->rng, seed, CLI_POLICY_STREAM);
}

polis_status cli_play_policy_act(cli_play_policy *p, polis_env *env)
{
    if (p->kind == CLI_PLAY_NAMED) return polis_env_policy_act(env, p->id, NULL, 0);
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) {
        int32_t pick = 0;
        if (p->kind == CLI_PLAY_RANDOM) {
            const uint8_t *mask = io->masks + (size_t)a * (size_t)io->n_actions;
            uint32_t n_legal = 0;
            for (int32_t k = 0; k < io->n_actions; k++) n_legal += mask[k] != 0;
            if (n_legal > 0) {
                uint32_t r = polis_rng_below(&p->rng, n_legal);
                for (int32_t k = 0; k < io->n_actions; k++) {
                    if (!mask[k]) continue;
                    if (r-- == 0) {
                        pick = k;
                        break;
                    }
                }
            }
        }
        io->actions[a] = pick;
    }
    return POLIS_OK;
}
