/*
 * engine/cli/eval.c — `polis eval`: N episodes of a scenario under a policy, and the mean ±
 * standard deviation of every per-episode metric.
 *
 * The episodes and their metrics are episode.c's (shared with `polis sweep`): the metrics
 * plugin's "metrics" rendering flattened, the plugin added through an override when the
 * scenario lacks it (--no-metrics leaves the scenario as it is).
 *
 * Actions come from polis_env_policy_act: the kernel's "random", "noop" and "uniform" or any
 * policy the scenario registers (society's "greedy", a mini-game's "scripted"). Like the rest of the
 * CLI it uses only the public API (polis.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "episode.h"
#include "eval.h"
#include "util.h"
#include "record.h"
#include "polis/polis.h"

const char CLI_EVAL_HELP[] =
    "usage: polis eval SCENARIO [options]\n"
    "\n"
    "Plays N episodes of SCENARIO with a policy and prints, for every metric of the\n"
    "metrics plugin (individual reward, fairness, the oracle and the normalised reward,\n"
    "completion rate per recipe, degrees, split ratio; plugins/metrics/README.md), its mean\n"
    "and standard deviation over the episodes and in how many episodes it was defined.\n"
    "First comes the paper's normalised reward, total_reward_normalised: the sum of all\n"
    "agents' returns over the oracle (mean_reward_normalised is the mean per agent).\n"
    "Episode k uses seed S+k-1. A progress bar is shown when stdout is a terminal.\n"
    "\n"
    "options:\n"
    "  --episodes N         episodes (default 10)\n"
    "  --policy NAME        random (default: uniform over the legal actions), noop,\n"
    "                       uniform (over all actions, ignoring the mask), or a policy\n"
    "                       the scenario registers (polis describe lists them, e.g.\n"
    "                       greedy)\n"
    "  --seed S             seed of the first episode (default: the scenario's \"seed\")\n"
    "  --steps N            stop each episode after N steps (default: until it ends)\n"
    "  --json FILE          also write every episode's metrics and the summary as JSON to\n"
    "                       FILE ('-': stdout, instead of the table)\n"
    "  --no-metrics         do not add the metrics plugin when the scenario lacks it\n"
    "  --quiet              no progress bar\n"
    CLI_OVERRIDES_HELP
    CLI_RECORD_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

/* ---- arguments ---------------------------------------------------------------------------- */

typedef struct eval_args {
    const char *scenario;
    const char *plugin_path;
    const char *policy;
    const char *json;
    int64_t episodes, steps;
    bool has_seed;
    uint64_t seed;
    bool no_metrics, quiet, help;
    cli_overrides overrides; /* --set, --agents: applied after the metrics plugin is added */
    const char *record;      /* --record FILE */
    int64_t keyframe_every;  /* --keyframe-every K */
} eval_args;

static int parse_args(int argc, char **argv, eval_args *a)
{
    a->episodes = 10;
    a->policy = "random";
    bool only_positional = false;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (a->scenario)
                return cli_usage("eval", "unexpected argument '%s' (SCENARIO is '%s')", arg,
                                 a->scenario);
            a->scenario = arg;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = true;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        static const char *const flags[] = {"--no-metrics", "--quiet"};
        static const char *const valued[] = {"--episodes", "--policy", "--seed",  "--steps",
                                             "--json",     "--plugin-path", "--set", "--agents",
                                             "--record",   "--keyframe-every"};
        int flag = -1, val = -1;
        for (int k = 0; k < 2; k++)
            if (strlen(flags[k]) == name_len && strncmp(arg, flags[k], name_len) == 0) flag = k;
        for (int k = 0; k < 10; k++)
            if (strlen(valued[k]) == name_len && strncmp(arg, valued[k], name_len) == 0) val = k;
        if (flag >= 0) {
            if (eq) return cli_usage("eval", "%s takes no value", flags[flag]);
            if (flag == 0) a->no_metrics = true;
            if (flag == 1) a->quiet = true;
            continue;
        }
        if (val < 0) return cli_usage("eval", "unknown option '%.*s'", (int)name_len, arg);
        const char *value;
        if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc) return cli_usage("eval", "%s needs a value", valued[val]);
            value = argv[++i];
        }
        switch (val) {
        case 0:
            if (!cli_parse_int(value, 1, 1000000, &a->episodes))
                return cli_usage("eval", "--episodes: '%s' is not an integer in [1, 1000000]",
                                 value);
            break;
        case 1:
            if (!*value) return cli_usage("eval", "--policy: empty name");
            a->policy = value;
            break;
        case 2:
            if (!cli_parse_u64(value, &a->seed))
                return cli_usage("eval", "--seed: '%s' is not an integer in [0, 2^64)", value);
            a->has_seed = true;
            break;
        case 8:
            if (!*value) return cli_usage("eval", "--record: empty file name");
            a->record = value;
            break;
        case 9:
            if (!cli_parse_int(value, 1, INT32_MAX, &a->keyframe_every))
                return cli_usage("eval", "--keyframe-every: '%s' is not an integer in [1, %d]",
                                 value, INT32_MAX);
            break;
        case 3:
            if (!cli_parse_int(value, 1, INT64_MAX, &a->steps))
                return cli_usage("eval", "--steps: '%s' is not a positive integer", value);
            break;
        case 4:
            if (!*value) return cli_usage("eval", "--json: empty file name");
            a->json = value;
            break;
        case 5:
            if (!*value) return cli_usage("eval", "--plugin-path: empty directory list");
            a->plugin_path = value;
            break;
        case 6: {
            int rc = cli_overrides_set(&a->overrides, "eval", value);
            if (rc) return rc;
            break;
        }
        case 7: {
            int rc = cli_overrides_agents(&a->overrides, "eval", value);
            if (rc) return rc;
            break;
        }
        }
    }
    if (a->help) return 0;
    if (!a->scenario) return cli_usage("eval", "missing SCENARIO (a scenario .json file)");
    if (!(a->scenario = cli_scenario("eval", a->scenario))) return EXIT_ENV;
    if (a->keyframe_every && !a->record)
        return cli_usage("eval", "--keyframe-every needs --record FILE");
    return 0;
}

/* ---- output -----------------------------------------------------------------------------------
 */

static const char PAPER_METRIC[] = "total_reward_normalised";

static void print_table(const cli_table *t, const char *scenario, const char *policy, uint64_t seed0,
                        int64_t total_steps)
{
    printf("%s: %" PRId64 " episode%s, policy %s, seeds %" PRIu64 "..%" PRIu64 ", %" PRId64
           " steps\n",
           scenario, t->episodes, t->episodes == 1 ? "" : "s", policy, seed0,
           seed0 + (uint64_t)(t->episodes - 1), total_steps);
    int width = 6;
    for (int32_t i = 0; i < t->n_keys; i++)
        if ((int)strlen(t->keys[i]) > width) width = (int)strlen(t->keys[i]);
    printf("  %-*s  %12s  %10s  %s\n", width, "metric", "mean", "std", "episodes");
    for (int32_t i = 0; i < t->n_keys; i++) {
        cli_stat s = cli_table_stat(t, i);
        if (s.n)
            printf("  %-*s  %12.6g  %10.4g  %" PRId64 "\n", width, t->keys[i], s.mean, s.sd, s.n);
        else
            printf("  %-*s  %12s  %10s  0\n", width, t->keys[i], "undefined", "-");
    }
    if (t->n_keys > 0 && strcmp(t->keys[0], PAPER_METRIC) == 0)
        printf("%s: the paper's normalised reward (Tables 2, 3, 8): the sum of all agents'\n"
               "  returns / oracle. mean_reward_normalised: the mean per agent / oracle.\n",
               PAPER_METRIC);
}

static cJSON *number_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* The JSON document: the run, every episode (its flattened metrics and the metrics plugin's
 * own object), and the summary. NULL on allocation failure. */
static char *json_document(const cli_table *t, cJSON *raws, const char *scenario, const char *file,
                           const char *policy, uint64_t seed0, int64_t steps_limit)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    char buf[32];
    ok = ok && cJSON_AddStringToObject(o, "scenario", scenario);
    ok = ok && cJSON_AddStringToObject(o, "file", file);
    ok = ok && cJSON_AddStringToObject(o, "policy", policy);
    snprintf(buf, sizeof buf, "%" PRIu64, seed0);
    ok = ok && cJSON_AddRawToObject(o, "seed", buf);
    snprintf(buf, sizeof buf, "%" PRId64, t->episodes);
    ok = ok && cJSON_AddRawToObject(o, "episodes", buf);
    snprintf(buf, sizeof buf, "%" PRId64, steps_limit);
    ok = ok && cJSON_AddRawToObject(o, "steps_limit", steps_limit ? buf : "null");
    cJSON *eps = ok ? cJSON_AddArrayToObject(o, "per_episode") : NULL;
    cJSON *sum = eps ? cJSON_AddObjectToObject(o, "summary") : NULL;
    ok = sum != NULL;
    for (int64_t e = 0; ok && e < t->episodes; e++) {
        cJSON *ep = cJSON_CreateObject();
        ok = ep && cJSON_AddItemToArray(eps, ep);
        snprintf(buf, sizeof buf, "%" PRId64, e + 1);
        ok = ok && cJSON_AddRawToObject(ep, "episode", buf);
        snprintf(buf, sizeof buf, "%" PRIu64, seed0 + (uint64_t)e);
        ok = ok && cJSON_AddRawToObject(ep, "seed", buf);
        cJSON *flat = ok ? cJSON_AddObjectToObject(ep, "metrics") : NULL;
        ok = flat != NULL;
        for (int32_t i = 0; ok && i < t->n_keys; i++) {
            cJSON *v = number_or_null(t->values[e * t->cap_keys + i]);
            ok = v && cJSON_AddItemToObject(flat, t->keys[i], v);
            if (!ok) cJSON_Delete(v);
        }
        cJSON *raw = raws ? cJSON_DetachItemFromArray(raws, 0) : NULL;
        if (ok && raw && !cJSON_AddItemToObject(ep, "plugin", raw)) {
            cJSON_Delete(raw);
            ok = false;
        }
    }
    for (int32_t i = 0; ok && i < t->n_keys; i++) {
        cli_stat s = cli_table_stat(t, i);
        cJSON *m = cJSON_CreateObject();
        ok = m && cJSON_AddItemToObject(sum, t->keys[i], m);
        if (!ok) {
            cJSON_Delete(m);
            break;
        }
        cJSON *mean = s.n ? number_or_null(s.mean) : cJSON_CreateNull();
        cJSON *std = s.n ? number_or_null(s.sd) : cJSON_CreateNull();
        ok = mean && cJSON_AddItemToObject(m, "mean", mean);
        if (!ok) cJSON_Delete(mean);
        ok = ok && std && cJSON_AddItemToObject(m, "std", std);
        if (!ok) cJSON_Delete(std);
        snprintf(buf, sizeof buf, "%" PRId64, s.n);
        ok = ok && cJSON_AddRawToObject(m, "n", buf);
    }
    char *text = ok ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    return text;
}

/* ---- running ------------------------------------------------------------------------------------
 */

int cli_eval_main(int argc, char **argv)
{
    eval_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc || a.help) {
        if (rc == 0) fputs(CLI_EVAL_HELP, stdout);
        cli_overrides_free(&a.overrides);
        return rc;
    }

    bool oom = false;
    char *overrides = cli_eval_overrides(a.scenario, a.overrides.obj, !a.no_metrics, &oom);
    cli_overrides_free(&a.overrides);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return EXIT_ENV;
    }
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = a.plugin_path;
    o.overrides = overrides;
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_file(a.scenario, &o, &env, &err);
    if (st != POLIS_OK) {
        if (overrides) cJSON_free(overrides);
        fprintf(stderr, "polis: %s\n", err.message);
        cli_scenario_hint(a.scenario);
        return EXIT_ENV;
    }
    int32_t policy;
    if ((rc = cli_find_policy(env, "eval", a.policy, &policy)) != 0) {
        if (overrides) cJSON_free(overrides);
        polis_env_destroy(env);
        return rc;
    }
    /* every episode into one recording, each end line with the episode's metrics */
    polis_recorder *rec = NULL;
    if (a.record) {
        cJSON *pol = cJSON_CreateArray();
        for (int32_t ag = 0; pol && ag < polis_env_n_agents(env); ag++)
            cJSON_AddItemToArray(pol, cJSON_CreateString(a.policy));
        char *pol_text = pol ? cJSON_PrintUnformatted(pol) : NULL;
        cJSON_Delete(pol);
        uint64_t first = a.has_seed ? a.seed : polis_env_default_seed(env);
        if (pol_text)
            rec = cli_record_open(a.record, env, a.scenario, overrides, first, a.keyframe_every,
                                  pol_text, "eval");
        cJSON_free(pol_text);
        if (!rec) {
            if (overrides) cJSON_free(overrides);
            polis_env_destroy(env);
            return EXIT_ENV;
        }
    }
    if (overrides) cJSON_free(overrides);
    bool has_metrics = cli_has_metrics(env);
    bool to_stdout = a.json && strcmp(a.json, "-") == 0;
    bool bar = !a.quiet && !to_stdout && isatty(STDOUT_FILENO);

    int32_t n = polis_env_n_agents(env);
    uint64_t seed0 = a.has_seed ? a.seed : polis_env_default_seed(env);
    cli_table t = {.episodes = a.episodes};
    cJSON *raws = a.json ? cJSON_CreateArray() : NULL;
    double *returns = calloc((size_t)n + 1, sizeof *returns);
    int64_t total_steps = 0;
    double t0 = cli_now();
    if (!returns || (a.json && !raws)) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    /* The paper's normalised reward (seeds/000 Tables 2, 3 and 8: the sum of every agent's
     * return over the oracle) comes first, the per-agent figure next to it; the rest in the
     * order the metrics plugin writes them. */
    if (has_metrics) {
        cli_table_key(&t, PAPER_METRIC);
        cli_table_key(&t, "mean_reward_normalised");
    }
    for (int64_t ep = 0; ep < a.episodes; ep++) {
        cli_episode e;
        char why[1024];
        if (!cli_play_episode(env, policy, seed0 + (uint64_t)ep, a.steps, has_metrics,
                              raws != NULL, returns, rec, &e, why, sizeof why)) {
            fprintf(stderr, "polis: %s\n", why);
            rc = EXIT_ENV;
            goto out;
        }
        total_steps += e.steps;
        cli_table_add(&t, ep, e.metrics);
        if (e.raw && cJSON_AddItemToArray(raws, e.raw)) e.raw = NULL;
        cli_episode_free(&e);
        if (t.oom) {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
            goto out;
        }
        if (bar) cli_progress(stdout, ep + 1, a.episodes, 0, cli_now() - t0);
    }
    if (bar) fputs("\r\033[K", stdout);
    if (!to_stdout) print_table(&t, polis_env_name(env), a.policy, seed0, total_steps);
    if (a.json) {
        char *doc =
            json_document(&t, raws, polis_env_name(env), a.scenario, a.policy, seed0, a.steps);
        if (!doc) {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
            goto out;
        }
        FILE *f = to_stdout ? stdout : fopen(a.json, "w");
        bool written = f && fputs(doc, f) >= 0 && fputc('\n', f) != EOF;
        if (f && !to_stdout && fclose(f) != 0) written = false;
        if (!written) {
            fprintf(stderr, "polis: cannot write %s: %s\n", a.json, strerror(errno));
            rc = EXIT_ENV;
        }
        cJSON_free(doc);
    }
    fflush(stdout);
    goto out;
out:
    if (rec && polis_recorder_close(rec) != POLIS_OK && rc == 0) {
        fprintf(stderr, "polis: --record %s: writing the recording failed\n", a.record);
        rc = EXIT_ENV;
    }
    cli_table_free(&t);
    free(returns);
    cJSON_Delete(raws);
    polis_env_destroy(env);
    return rc;
}
