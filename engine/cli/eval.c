/*
 * engine/cli/eval.c — `polis eval`: N episodes of a scenario under a policy, and the mean ±
 * standard deviation of every per-episode metric.
 *
 * The metrics come from the `metrics` plugin's "metrics" rendering (plugins/metrics), read
 * once at the end of each episode and flattened: every number of the JSON object, nested
 * keys joined with '.', arrays left out (per-agent lists, the oracle's table). When the
 * scenario does not load the plugin, eval appends it to the scenario's plugins through an
 * override (polis_options.overrides), so every scenario is evaluated the same way;
 * --no-metrics leaves the scenario as it is. eval itself counts the steps and the illegal
 * actions, and, without the plugin, the episode returns.
 *
 * Actions come from polis_env_policy_act: the kernel's "random" and "noop" or any policy the
 * scenario registers (society's "greedy", a mini-game's "scripted"). Like the rest of the
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
    "  --policy NAME        random (default: uniform over the legal actions), noop, or a\n"
    "                       policy the scenario registers (polis describe lists them,\n"
    "                       e.g. greedy)\n"
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
    if (a->keyframe_every && !a->record)
        return cli_usage("eval", "--keyframe-every needs --record FILE");
    return 0;
}

/* ---- adding the metrics plugin ------------------------------------------------------------- */

/* Whether a plugins[] entry is the metrics plugin: "metrics", {"name": "metrics"} or a path
 * whose file is metrics.so. */
static bool is_metrics(const cJSON *entry)
{
    const char *s = cJSON_IsString(entry) ? entry->valuestring : NULL;
    if (cJSON_IsObject(entry)) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(entry, "name");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(entry, "path");
        s = cJSON_IsString(n) ? n->valuestring : cJSON_IsString(p) ? p->valuestring : NULL;
    }
    if (!s) return false;
    const char *base = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
    return strcmp(base, "metrics") == 0 || strcmp(base, "metrics.so") == 0;
}

/* The overrides that append "metrics" to the scenario's plugins, or NULL when it has it (or
 * the file is not a readable JSON object: creating the env then reports that). Sets *oom. */
static char *metrics_override(const char *path, bool *oom)
{
    *oom = false;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 14, n = 0;
    char *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *t = realloc(text, cap * 2);
        if (!t) {
            free(text);
            text = NULL;
            break;
        }
        text = t;
        cap *= 2;
    }
    fclose(f);
    if (!text) {
        *oom = true;
        return NULL;
    }
    text[n] = '\0';
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *plugins = root ? cJSON_GetObjectItemCaseSensitive(root, "plugins") : NULL;
    char *out = NULL;
    if (cJSON_IsObject(root) && (!plugins || cJSON_IsArray(plugins))) {
        bool has = false;
        const cJSON *it;
        cJSON_ArrayForEach(it, plugins) has = has || is_metrics(it);
        if (!has) {
            cJSON *list = plugins ? cJSON_Duplicate(plugins, true) : cJSON_CreateArray();
            cJSON *o = cJSON_CreateObject();
            cJSON *name = cJSON_CreateString("metrics");
            bool ok = list && o && name && cJSON_AddItemToArray(list, name);
            if (!ok) cJSON_Delete(name);
            ok = ok && cJSON_AddItemToObject(o, "plugins", list);
            if (!ok && list && (!o || !cJSON_GetObjectItemCaseSensitive(o, "plugins")))
                cJSON_Delete(list);
            out = ok ? cJSON_PrintUnformatted(o) : NULL;
            if (!out) *oom = true;
            cJSON_Delete(o);
        }
    }
    cJSON_Delete(root);
    return out;
}

/* ---- metrics of one episode ------------------------------------------------------------------ */

/* The "metrics" rendering: every plugin that renders the format contributes one JSON
 * object, and the kernel concatenates non-"json" formats (the metrics plugin's, a Lua
 * game's own). Merges them into one object, the first plugin's value winning a name both
 * use; NULL when a piece is not an object (or out of memory). */
static cJSON *parse_metrics(const char *text)
{
    cJSON *all = cJSON_CreateObject();
    const char *p = text;
    while (all) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
        if (!*p) break;
        const char *end = NULL;
        cJSON *m = cJSON_ParseWithOpts(p, &end, false);
        if (!cJSON_IsObject(m) || !end) {
            cJSON_Delete(m);
            cJSON_Delete(all);
            return NULL;
        }
        for (const cJSON *it = m->child; it; it = it->next) {
            if (cJSON_GetObjectItemCaseSensitive(all, it->string)) continue;
            cJSON *dup = cJSON_Duplicate(it, true);
            if (!dup || !cJSON_AddItemToObject(all, it->string, dup)) {
                cJSON_Delete(dup);
                cJSON_Delete(m);
                cJSON_Delete(all);
                return NULL;
            }
        }
        cJSON_Delete(m);
        p = end;
    }
    return all;
}

/* The metric names in first-seen order and every episode's values (NAN: undefined). */
typedef struct table {
    char **keys;
    int32_t n_keys, cap_keys;
    double *values; /* [episodes][cap_keys], grown with the keys */
    int64_t episodes;
    bool oom;
} table;

static int32_t key_index(table *t, const char *key)
{
    for (int32_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i], key) == 0) return i;
    if (t->n_keys == t->cap_keys) {
        int32_t ncap = t->cap_keys ? t->cap_keys * 2 : 32;
        char **k = realloc(t->keys, sizeof *k * (size_t)ncap);
        double *v = k ? malloc(sizeof *v * (size_t)ncap * (size_t)t->episodes) : NULL;
        if (!v) {
            if (k) t->keys = k;
            t->oom = true;
            return -1;
        }
        t->keys = k;
        for (int64_t e = 0; e < t->episodes; e++)
            for (int32_t i = 0; i < ncap; i++)
                v[e * ncap + i] = i < t->n_keys ? t->values[e * t->cap_keys + i] : NAN;
        free(t->values);
        t->values = v;
        t->cap_keys = ncap;
    }
    if (!(t->keys[t->n_keys] = strdup(key))) {
        t->oom = true;
        return -1;
    }
    return t->n_keys++;
}

static void put(table *t, int64_t episode, const char *key, double v)
{
    int32_t i = key_index(t, key);
    if (i >= 0) t->values[episode * t->cap_keys + i] = v;
}

/* Every number (and null) of a JSON object, under dotted keys; arrays are left out. */
static void flatten(table *t, int64_t episode, const cJSON *o, const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", it->string);
        if (!*prefix && strcmp(it->string, "episode") == 0) continue;
        if (cJSON_IsNumber(it))
            put(t, episode, key, it->valuedouble);
        else if (cJSON_IsNull(it))
            put(t, episode, key, NAN);
        else if (cJSON_IsObject(it))
            flatten(t, episode, it, key);
    }
}

typedef struct stat {
    double mean, std;
    int64_t n;
} stat;

static stat stat_of(const table *t, int32_t key)
{
    stat s = {0, 0, 0};
    double sum = 0;
    for (int64_t e = 0; e < t->episodes; e++) {
        double v = t->values[e * t->cap_keys + key];
        if (isnan(v)) continue;
        sum += v;
        s.n++;
    }
    if (!s.n) return s;
    s.mean = sum / (double)s.n;
    double sq = 0;
    for (int64_t e = 0; e < t->episodes; e++) {
        double v = t->values[e * t->cap_keys + key];
        if (!isnan(v)) sq += (v - s.mean) * (v - s.mean);
    }
    /* The sample standard deviation (n - 1); 0 for a single value. */
    s.std = s.n > 1 ? sqrt(sq / (double)(s.n - 1)) : 0;
    return s;
}

/* ---- output -----------------------------------------------------------------------------------
 */

static void progress(int64_t done, int64_t total)
{
    int width = 30, filled = (int)(done * width / total);
    printf("\r[%.*s%*s] %" PRId64 "/%" PRId64 " episodes", filled, "##############################",
           width - filled, "", done, total);
    fflush(stdout);
}

static const char PAPER_METRIC[] = "total_reward_normalised";

static void print_table(const table *t, const char *scenario, const char *policy, uint64_t seed0,
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
        stat s = stat_of(t, i);
        if (s.n)
            printf("  %-*s  %12.6g  %10.4g  %" PRId64 "\n", width, t->keys[i], s.mean, s.std, s.n);
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
static char *json_document(const table *t, cJSON *raws, const char *scenario, const char *file,
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
        stat s = stat_of(t, i);
        cJSON *m = cJSON_CreateObject();
        ok = m && cJSON_AddItemToObject(sum, t->keys[i], m);
        if (!ok) {
            cJSON_Delete(m);
            break;
        }
        cJSON *mean = s.n ? number_or_null(s.mean) : cJSON_CreateNull();
        cJSON *std = s.n ? number_or_null(s.std) : cJSON_CreateNull();
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

/* The metrics override (cJSON text, or NULL), followed by the user's --set / --agents, as one
 * overrides object: the user's paths apply to the plugin list with metrics in it. Frees
 * `metrics`; the result is cJSON text. */
static char *with_user_overrides(char *metrics, const cli_overrides *user, bool *oom)
{
    cJSON *all = metrics ? cJSON_Parse(metrics) : cJSON_CreateObject();
    if (metrics) cJSON_free(metrics);
    bool ok = all != NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, user->obj)
    {
        cJSON *copy = ok ? cJSON_Duplicate(it, true) : NULL;
        ok = copy && cJSON_AddItemToObject(all, it->string, copy);
        if (!ok) cJSON_Delete(copy);
    }
    char *text = ok ? cJSON_PrintUnformatted(all) : NULL;
    cJSON_Delete(all);
    if (!text) *oom = true;
    return text;
}

static int env_failure(polis_env *env)
{
    fprintf(stderr, "polis: %s\n", polis_env_error(env));
    return EXIT_ENV;
}

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
    char *overrides = a.no_metrics ? NULL : metrics_override(a.scenario, &oom);
    if (!oom && a.overrides.obj) overrides = with_user_overrides(overrides, &a.overrides, &oom);
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
    int32_t policy = polis_env_policy_find(env, a.policy);
    if (policy < 0) {
        char list[1024] = "";
        size_t len = 0;
        for (int32_t i = 0; i < polis_env_n_policies(env) && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                    polis_env_policy_name(env, i));
        polis_env_destroy(env);
        return cli_usage("eval", "--policy: '%s' is not a policy of this scenario (policies: %s)",
                         a.policy, list);
    }
    bool has_metrics = false;
    {
        const char *formats = polis_env_render_formats(env);
        for (const char *p = formats; (p = strstr(p, "metrics")) != NULL; p += 7)
            if ((p == formats || p[-1] == ' ') && (p[7] == '\0' || p[7] == ' ')) has_metrics = true;
    }
    bool to_stdout = a.json && strcmp(a.json, "-") == 0;
    bool bar = !a.quiet && !to_stdout && isatty(STDOUT_FILENO);

    int32_t n = polis_env_n_agents(env);
    const polis_io *io = polis_env_io(env);
    uint64_t seed0 = a.has_seed ? a.seed : polis_env_default_seed(env);
    table t = {.episodes = a.episodes};
    cJSON *raws = a.json ? cJSON_CreateArray() : NULL;
    double *returns = calloc((size_t)n + 1, sizeof *returns);
    int64_t total_steps = 0;
    rc = 0;
    if (!returns || (a.json && !raws)) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    /* The paper's normalised reward (seeds/000 Tables 2, 3 and 8: the sum of every agent's
     * return over the oracle) comes first, the per-agent figure next to it; the rest in the
     * order the metrics plugin writes them. */
    if (has_metrics) {
        key_index(&t, PAPER_METRIC);
        key_index(&t, "mean_reward_normalised");
    }
    for (int64_t ep = 0; ep < a.episodes; ep++) {
        uint64_t seed = seed0 + (uint64_t)ep;
        if (polis_env_reset(env, seed) != POLIS_OK) {
            rc = env_failure(env);
            goto out;
        }
        if (rec && polis_recorder_begin_episode(rec, seed) != POLIS_OK) goto rec_failed;
        memset(returns, 0, sizeof *returns * (size_t)n);
        int64_t steps = 0, illegal = 0;
        while (!polis_env_done(env) && (a.steps == 0 || steps < a.steps)) {
            if (polis_env_policy_act(env, policy, NULL, 0) != POLIS_OK ||
                polis_env_step(env) != POLIS_OK) {
                rc = env_failure(env);
                goto out;
            }
            steps++;
            for (int32_t ag = 0; ag < n; ag++) {
                returns[ag] += io->rewards[ag];
                illegal += io->illegal[ag] != 0;
            }
            if (rec && polis_recorder_step(rec) != POLIS_OK) goto rec_failed;
        }
        char *rec_metrics = NULL;
        total_steps += steps;
        put(&t, ep, "steps", (double)steps);
        put(&t, ep, "illegal_actions", (double)illegal);
        if (has_metrics) {
            char *text = NULL;
            if (polis_env_render(env, 0, "metrics", &text) != POLIS_OK) {
                rc = env_failure(env);
                goto out;
            }
            cJSON *m = parse_metrics(text);
            polis_free(text);
            if (!m) {
                fprintf(stderr, "polis: the \"metrics\" rendering is not a sequence of JSON "
                                "objects\n");
                rc = EXIT_ENV;
                goto out;
            }
            flatten(&t, ep, m, "");
            if (rec) rec_metrics = cJSON_PrintUnformatted(m);
            if (!raws || !cJSON_AddItemToArray(raws, m)) cJSON_Delete(m);
        } else {
            double total = 0;
            for (int32_t ag = 0; ag < n; ag++) total += returns[ag];
            put(&t, ep, "reward.mean", n ? total / n : 0);
            put(&t, ep, "reward.total", total);
        }
        if (rec) {
            polis_status rs = polis_recorder_end_episode(rec, rec_metrics);
            cJSON_free(rec_metrics);
            if (rs != POLIS_OK) goto rec_failed;
        }
        if (t.oom) {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
            goto out;
        }
        if (bar) progress(ep + 1, a.episodes);
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
rec_failed:
    fprintf(stderr, "polis: --record %s: %s\n", a.record, polis_recorder_error(rec));
    rc = EXIT_ENV;
out:
    if (rec && polis_recorder_close(rec) != POLIS_OK && rc == 0) {
        fprintf(stderr, "polis: --record %s: writing the recording failed\n", a.record);
        rc = EXIT_ENV;
    }
    for (int32_t i = 0; i < t.n_keys; i++) free(t.keys[i]);
    free(t.keys);
    free(t.values);
    free(returns);
    cJSON_Delete(raws);
    polis_env_destroy(env);
    return rc;
}
