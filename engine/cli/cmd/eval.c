/*
 * engine/cli/cmd/eval.c — `polis eval`: N episodes of a scenario under a policy, and the mean ±
 * standard deviation of every per-episode metric.
 *
 * The episodes and their metrics are episode.c's (shared with `polis sweep`): the metrics
 * plugin's "metrics" rendering flattened, the plugin added through an override when the
 * scenario lacks it (--no-metrics leaves the scenario as it is).
 *
 * Actions come from polis_env_policy_act: the kernel's "random", "noop" and "uniform" or any
 * policy the scenario registers (society's "greedy", a mini-game's "scripted"). Like the rest of
 * the CLI it uses only the public API (polis.h).
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

#include "session/episode.h"
#include "session/play.h"
#include "cmd/commands.h"
#include "util/util.h"
#include "session/proto.h"
#include "session/record.h"
#include "session/seats.h"
#include "cmd/crossplay.h"
#include "polis/polis.h"

static int eval_main(cli_args *a);

static const cli_use USES[] = {
    {.id = CLI_OPT_EPISODES, .help = "episodes (default 10)", .def = "10", .lo = 1, .hi = 1000000},
    {.id = CLI_OPT_POLICY,
     .help = "random (default: uniform over the legal actions), noop,\n"
             "uniform (over all actions, ignoring the mask), or a policy\n"
             "the scenario registers (polis describe lists them, e.g.\n"
             "greedy)",
     .def = "random"},
    {.id = CLI_OPT_SEED,
     .help = "seed of the first episode (default: the scenario's \"seed\")",
     .metavar = "S"},
    {.id = CLI_OPT_STEPS},
    {.id = CLI_OPT_JSON_FILE,
     .help = "also write every episode's metrics and the summary as JSON to\n"
             "FILE ('-': stdout, instead of the table)"},
    {.id = CLI_OPT_NO_METRICS},
    {.id = CLI_OPT_QUIET, .help = "no progress bar"},
    {.id = CLI_OPT_SET},
    {.id = CLI_OPT_AGENTS},
    {.id = CLI_OPT_RECORD},
    {.id = CLI_OPT_KEYFRAME_EVERY, .needs = CLI_BIT(CLI_OPT_RECORD)},
    {.id = CLI_OPT_PLUGIN_PATH},
    {.id = CLI_OPT_SEAT,
     .help = "who plays AGENT (repeatable): a policy, py:SPEC (a checkpoint\n"
             "or Python policy, docs/policies.md), cmd:PROGRAM [ARGS] (a\n"
             "program speaking the seat protocol) or pop:FILE (a\n"
             "population); wins over the scenario's \"seats\"; the other\n"
             "seats play --policy",
     .check = cli_check_seat},
    {.id = CLI_OPT_FOCAL,
     .excludes = CLI_BIT(CLI_OPT_SEAT) | CLI_BIT(CLI_OPT_RECORD),
     .why = "(held-out evaluation fills every seat from --focal and --background)"},
    {.id = CLI_OPT_BACKGROUND,
     .excludes = CLI_BIT(CLI_OPT_SEAT) | CLI_BIT(CLI_OPT_RECORD),
     .why = "(held-out evaluation fills every seat from --focal and --background)"},
    {.id = CLI_OPT_FOCAL_SEATS, .needs = CLI_BIT(CLI_OPT_FOCAL) | CLI_BIT(CLI_OPT_BACKGROUND)},
    {.id = CLI_OPT_POLICY_TIMEOUT},
};

const cli_command CLI_CMD_EVAL = {
    .name = "eval",
    CLI_SCENARIO_AND(USES),
    .summary = "evaluate a policy: metrics over N episodes (mean and std)",
    .about =
        "Plays N episodes of SCENARIO with a policy and prints, for every metric of the\n"
        "metrics plugin (individual reward, fairness, the oracle and the normalised reward,\n"
        "completion rate per recipe, degrees, split ratio; plugins/metrics/README.md), its mean\n"
        "and standard deviation over the episodes and in how many episodes it was defined.\n"
        "On a game with an oracle, first comes the paper's normalised reward,\n"
        "total_reward_normalised: the sum of all agents' returns over the oracle\n"
        "(mean_reward_normalised is the mean per agent). Episode k uses seed S+k-1. A\n"
        "progress bar is shown when stdout is a terminal.\n"
        "\n"
        "The scenario's \"seats\" (docs/scenario.md) and --seat give single seats to other\n"
        "players: policies the scenario registers, trained checkpoints (py:FILE.pt),\n"
        "programs, populations. --focal and --background evaluate held out: the focal\n"
        "seats (--focal-seats) played by each --focal player, the others by each\n"
        "--background population, reporting the focal and background per-capita returns;\n"
        "several of either make a cross-play matrix (docs/policies.md).\n",
    .run = eval_main,
};

typedef struct eval_args {
    const char *scenario;
    const char *plugin_path;
    const char *policy;
    const char *json;
    int64_t episodes, steps;
    bool has_seed;
    uint64_t seed;
    bool no_metrics, quiet;
    const cli_overrides *overrides; /* --set, --agents: applied after the metrics plugin is added */
    const char *record;             /* --record FILE */
    int64_t keyframe_every;         /* --keyframe-every K */
} eval_args;

/* ---- output -----------------------------------------------------------------------------------
 */

static const char PAPER_METRIC[] = "total_reward_normalised";

/* The rows of the oracle (plugins/metrics/README.md): printed on a game that has one, one
 * whose "oracle" metric is defined in some episode, and left out elsewhere, where they could
 * only say "undefined". */
static bool oracle_row(const char *key)
{
    return strcmp(key, PAPER_METRIC) == 0 || strcmp(key, "mean_reward_normalised") == 0 ||
           strcmp(key, "oracle") == 0;
}

static bool has_oracle(const cli_table *t)
{
    for (int32_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i], "oracle") == 0) return cli_table_stat(t, i).n > 0;
    return false;
}

static void print_table(const cli_table *t, const char *scenario, const char *policy,
                        uint64_t seed0, int64_t total_steps)
{
    printf("%s: %" PRId64 " episode%s, policy %s, seeds %" PRIu64 "..%" PRIu64 ", %" PRId64
           " steps\n",
           scenario, t->episodes, t->episodes == 1 ? "" : "s", policy, seed0,
           seed0 + (uint64_t)(t->episodes - 1), total_steps);
    bool oracle = has_oracle(t);
    int width = 6;
    for (int32_t i = 0; i < t->n_keys; i++)
        if ((oracle || !oracle_row(t->keys[i])) && (int)strlen(t->keys[i]) > width)
            width = (int)strlen(t->keys[i]);
    printf("  %-*s  %12s  %10s  %s\n", width, "metric", "mean", "std", "episodes");
    for (int32_t i = 0; i < t->n_keys; i++) {
        if (!oracle && oracle_row(t->keys[i])) continue;
        cli_stat s = cli_table_stat(t, i);
        if (s.n)
            printf("  %-*s  %12.6g  %10.4g  %" PRId64 "\n", width, t->keys[i], s.mean, s.sd, s.n);
        else
            printf("  %-*s  %12s  %10s  0\n", width, t->keys[i], "undefined", "-");
    }
    if (oracle && t->n_keys > 0 && strcmp(t->keys[0], PAPER_METRIC) == 0)
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
static char *json_document(const cli_table *t, cJSON *raws, cJSON *tasks, const char *scenario,
                           const char *file, const char *policy, uint64_t seed0,
                           int64_t steps_limit)
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
        /* the task the episode drew (the scenario's "vary"), when it varies anything */
        cJSON *task = tasks ? cJSON_DetachItemFromArray(tasks, 0) : NULL;
        if (task && cJSON_IsNull(task))
            cJSON_Delete(task);
        else if (ok && task && !cJSON_AddItemToObject(ep, "task", task)) {
            cJSON_Delete(task);
            ok = false;
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

/* ---- seats --------------------------------------------------------------------------------------
 */

/* What plays the episodes, for the table and the JSON: the policy, and the seats --seat
 * gave to others ("random; carpenter_0: py:a.pt"). */
static void seats_label(polis_env *env, const cli_seats *seats, const char *policy, char *buf,
                        size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "%s", policy);
    for (int32_t i = 0; seats && i < polis_env_n_agents(env) && len < cap; i++)
        if (strcmp(cli_seats_assigned(seats, i), policy) != 0)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s",
                                    len == strlen(policy) ? "; " : ", ",
                                    polis_env_agent_name(env, i), cli_seats_assigned(seats, i));
}

/* Whether the scenario file seats some of its agents itself (its "seats" key). */
static bool scenario_has_seats(const char *file)
{
    cJSON *seats = cli_scenario_seats(file);
    bool any = false;
    const cJSON *it;
    cJSON_ArrayForEach(it, seats) any |= it->string[0] != '_';
    cJSON_Delete(seats);
    return any;
}

/* The seats of the scenario's "seats" and of --seat AGENT=WHO, which wins (the others play
 * `policy`), in *out. Returns 0 or the exit status after saying why. */
static int eval_seats(cli_args *args, polis_env *env, const char *file, const char *policy,
                      cli_seats **out)
{
    char err[2048];
    cli_seats *s =
        cli_seats_new(env, file, policy, NULL, cli_policy_timeout_ms(args), err, sizeof err);
    if (s && !cli_seats_from_scenario(s, file, err, sizeof err)) {
        cli_seats_free(s);
        s = NULL;
    }
    const cli_value *v = &args->v[CLI_OPT_SEAT];
    for (int k = 0; s && k < v->n; k++) {
        const char *arg = v->list ? v->list[k] : v->text;
        const char *eq = strchr(arg, '=');
        char agent[256], who[4200], where[4400];
        snprintf(agent, sizeof agent, "%.*s", (int)(eq - arg), arg);
        snprintf(where, sizeof where, "--seat %s", arg);
        int32_t id = cli_agent_find(env, agent);
        if (id < 0) {
            char names[512];
            cli_agent_names(env, names, sizeof names);
            cli_seats_free(s);
            return cli_usage("eval", "%s: no agent named '%s' (agents: %s)", where, agent, names);
        }
        if (!cli_seats_assign(s, id, cli_player_text(eq + 1, who, sizeof who), where, err,
                              sizeof err)) {
            cli_seats_free(s);
            s = NULL;
        }
    }
    if (!s) {
        fprintf(stderr, "polis: eval: %s\n", err);
        return EXIT_ENV;
    }
    *out = s;
    return 0;
}

/* ---- running ------------------------------------------------------------------------------------
 */

static int eval_main(cli_args *args)
{
    eval_args a = {
        .plugin_path = cli_text(args, CLI_OPT_PLUGIN_PATH),
        .policy = cli_text(args, CLI_OPT_POLICY),
        .json = cli_text(args, CLI_OPT_JSON_FILE),
        .episodes = cli_num(args, CLI_OPT_EPISODES),
        .steps = cli_num(args, CLI_OPT_STEPS),
        .has_seed = cli_has(args, CLI_OPT_SEED),
        .seed = args->v[CLI_OPT_SEED].u64,
        .no_metrics = cli_has(args, CLI_OPT_NO_METRICS),
        .quiet = cli_has(args, CLI_OPT_QUIET),
        .overrides = &args->overrides,
        .record = cli_text(args, CLI_OPT_RECORD),
        .keyframe_every = cli_num(args, CLI_OPT_KEYFRAME_EVERY),
    };
    int rc;
    if (cli_has(args, CLI_OPT_FOCAL) || cli_has(args, CLI_OPT_BACKGROUND))
        return cli_crossplay_main(args);
    const char *seats_set = cli_overrides_seats(a.overrides->obj);
    if (seats_set)
        return cli_usage("eval", "--set %s: give the scenario's seats with --seat AGENT=WHO",
                         seats_set);
    if (!(a.scenario = cli_scenario(args->name, args->pos[0]))) return EXIT_ENV;
    bool oom = false;
    char *overrides = cli_eval_overrides(a.scenario, a.overrides->obj, !a.no_metrics, &oom);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return EXIT_ENV;
    }
    polis_env *env = cli_env_open(a.scenario, a.plugin_path, overrides, false);
    if (!env) {
        cJSON_free(overrides);
        return EXIT_ENV;
    }
    int32_t policy;
    if ((rc = cli_find_policy(env, "eval", a.policy, &policy)) != 0) {
        if (overrides) cJSON_free(overrides);
        polis_env_destroy(env);
        return rc;
    }
    /* --seat: the named seats by their players, the rest by --policy */
    cli_seats *seats = NULL;
    if ((cli_has(args, CLI_OPT_SEAT) || scenario_has_seats(a.scenario)) &&
        (rc = eval_seats(args, env, a.scenario, a.policy, &seats)) != 0) {
        if (overrides) cJSON_free(overrides);
        polis_env_destroy(env);
        return rc;
    }
    /* every episode into one recording, each end line with the episode's metrics (and what
     * the seats' processes reported of it: an LLM's tokens and cost) */
    polis_recorder *rec = NULL;
    if (a.record) {
        char *pol_text =
            seats ? cli_seats_policies_json(seats) : cli_record_policies(env, a.policy);
        uint64_t first = a.has_seed ? a.seed : polis_env_default_seed(env);
        if (pol_text)
            rec = cli_record_open(a.record, env, a.scenario, overrides, first, a.keyframe_every,
                                  pol_text, "eval");
        cJSON_free(pol_text);
        if (!rec) {
            if (overrides) cJSON_free(overrides);
            cli_seats_free(seats);
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
    cJSON *tasks = a.json ? cJSON_CreateArray() : NULL;
    double *returns = calloc((size_t)n + 1, sizeof *returns);
    int64_t total_steps = 0;
    double t0 = cli_now();
    if (!returns || (a.json && (!raws || !tasks))) {
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
    cli_actor by_seats = seats ? cli_seats_actor(seats) : (cli_actor){0};
    for (int64_t ep = 0; ep < a.episodes; ep++) {
        cli_episode e;
        char why[2048];
        if (!(seats
                  ? cli_play_episode_by(env, &by_seats, seed0 + (uint64_t)ep, a.steps, has_metrics,
                                        raws != NULL, returns, rec, &e, why, sizeof why)
                  : cli_play_episode(env, policy, seed0 + (uint64_t)ep, a.steps, has_metrics,
                                     raws != NULL, returns, rec, &e, why, sizeof why))) {
            if (seats) /* the seats' processes: which episode failed */
                fprintf(stderr, "polis: eval: episode %" PRId64 " (seed %" PRIu64 "): %s\n", ep + 1,
                        seed0 + (uint64_t)ep, why);
            else
                fprintf(stderr, "polis: %s\n", why);
            rc = EXIT_ENV;
            goto out;
        }
        total_steps += e.steps;
        cli_table_add(&t, ep, e.metrics);
        if (e.raw && cJSON_AddItemToArray(raws, e.raw)) e.raw = NULL;
        if (tasks && cJSON_AddItemToArray(tasks, e.task ? e.task : cJSON_CreateNull()))
            e.task = NULL;
        cli_episode_free(&e);
        if (t.oom) {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
            goto out;
        }
        if (bar) cli_progress(stdout, ep + 1, a.episodes, 0, cli_now() - t0);
    }
    if (bar) fputs("\r\033[K", stdout);
    char label[1024];
    seats_label(env, seats, a.policy, label, sizeof label);
    if (!to_stdout) print_table(&t, polis_env_name(env), label, seed0, total_steps);
    if (a.json) {
        char *doc =
            json_document(&t, raws, tasks, polis_env_name(env), a.scenario, label, seed0, a.steps);
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
    if (rec && rc == 0 && polis_recorder_flush(rec) != POLIS_OK) {
        fprintf(stderr, "polis: --record %s: %s\n", a.record, polis_recorder_error(rec));
        rc = EXIT_ENV;
    }
    if (rec && polis_recorder_close(rec) != POLIS_OK && rc == 0) {
        fprintf(stderr, "polis: --record %s: writing the recording failed\n", a.record);
        rc = EXIT_ENV;
    }
    cli_seats_free(seats);
    cli_table_free(&t);
    free(returns);
    cJSON_Delete(raws);
    cJSON_Delete(tasks);
    polis_env_destroy(env);
    return rc;
}
