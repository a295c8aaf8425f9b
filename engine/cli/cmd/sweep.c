/*
 * engine/cli/cmd/sweep.c — `polis sweep`: a grid of scenarios × override values × policies × seeds,
 * one episode per job, run on the machine's cores (threads) or, built with MPI, over the ranks
 * of `mpirun` / `srun`; every finished episode appended to a results file at once, then a
 * summary per cell (mean, standard deviation, 95% interval of the mean).
 *
 * Jobs are numbered cell-major: job = cell × seeds + k, cells ordered scenario, then the grid's
 * combinations (the last grid path varying fastest), then policy. A job's episode depends on
 * its cell and seed only (each worker keeps one env per cell and resets it with the job's
 * seed), so its final state hash is the same whichever thread or rank played it.
 *
 * One writer: rank 0 (or, without MPI, whichever thread holds the lock) appends each result
 * as one complete line with write(2) and fsyncs every SYNC_LINES lines or SYNC_SECONDS
 * seconds. A run killed at any point leaves whole lines (a torn last line is cut off by the
 * next --resume), so it loses the episodes in flight and nothing else. --resume reads the
 * file, checks its first line (the sweep's normalised spec) against this sweep and plays only
 * the jobs missing. The summary is computed from the file, in job order, so a resumed sweep's
 * summary is the uninterrupted one's, byte for byte.
 *
 * MPI (POLIS_HAVE_MPI, docs/sweep.md; the protocol is transport/mpi.c): rank 0 hands out job
 * numbers one at a time to whichever rank asks (dynamic load balancing: episodes differ in
 * length), plays jobs itself on its own threads, and is the only rank that touches the
 * results. Other ranks play one job at a time and send the result line back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "session/episode.h"
#include "session/record.h"
#include "session/seats.h"
#include "cmd/commands.h"
#include "transport/mpi.h"
#include "util/file.h"
#include "util/util.h"
#include "polis/polis.h"

#define SYNC_LINES 64
#define SYNC_SECONDS 1.0
/* Seeds are JSON numbers: integers up to 2^53 are exact. */
#define MAX_SEED 9007199254740992.0
#define MAX_JOBS 100000000

/* ---- the sweep ------------------------------------------------------------------------- */

typedef enum out_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV } out_format;

typedef struct sweep_cell {
    const char *file;   /* in sweep.spec */
    const char *policy; /* in sweep.spec */
    cJSON *params;      /* {path: value} of the grid for this cell */
    char *overrides;    /* polis_options.overrides text, or NULL */
} sweep_cell;

typedef struct sweep {
    cJSON *spec; /* normalised: scenarios, set, grid, policies, seeds, steps, metrics */
    char *out;
    const char *plugin_path;
    uint64_t *seeds;
    int64_t n_seeds, steps;
    bool metrics;
    sweep_cell *cells;
    int64_t n_cells, n_jobs;
    int threads;
    bool quiet, record;
    out_format format;

    /* rank 0 */
    char *results;    /* OUT/results.jsonl */
    int64_t *pending; /* the jobs to play, in order */
    int64_t n_pending, next;
    int64_t done_before, done_now;
    int fd;
    off_t results_len; /* the results file's length: where its last whole line ends */
    int64_t unsynced;
    double last_sync, t0, last_bar;
    bool bar, failed;
    char error[2048];
    pthread_mutex_t mu;
} sweep;

static int spec_error(const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int spec_error(const char *where, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "polis: %s: ", where);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_ENV;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", dir, *dir && dir[strlen(dir) - 1] != '/' ? "/" : "", name);
    return s;
}

/* A path of the spec file, relative to the spec's directory unless absolute. */
static char *spec_path(const char *spec_file, const char *path)
{
    if (!spec_file || path[0] == '/') return strdup(path);
    const char *slash = strrchr(spec_file, '/');
    if (!slash) return strdup(path);
    char *dir = strndup(spec_file, (size_t)(slash - spec_file + 1));
    char *s = dir ? join_path(dir, path) : NULL;
    free(dir);
    return s;
}

/* A JSON number that is an integer in [lo, hi]. */
static bool json_int(const cJSON *v, double lo, double hi, int64_t *out)
{
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi) || d != floor(d)) return false;
    *out = (int64_t)d;
    return true;
}

/* The shortest decimal that reads back as exactly v (cJSON's own printing stops at 15 digits
 * when the value is merely close). */
static void exact_text(char buf[32], double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* A JSON number printed exactly, or null for NaN and the infinities (undefined). */
static cJSON *exact_number(double v, bool defined)
{
    char buf[32];
    if (!defined || !isfinite(v)) return cJSON_CreateNull();
    exact_text(buf, v);
    return cJSON_CreateRaw(buf);
}

/* ---- arguments -------------------------------------------------------------------------- */

static const char *const FORMATS[] = {"table", "json", "csv", NULL};

static const cli_use USES[] = {
    {.id = CLI_OPT_SCENARIO, .help = "a scenario (repeatable; replaces the spec's \"scenarios\")"},
    {.id = CLI_OPT_GRID,
     .help = "an override path and its values, e.g. --grid 'max_steps=[50,100]'\n"
             "(repeatable; added to the spec's \"grid\")"},
    {.id = CLI_OPT_SET, .help = "an override of every cell (repeatable; added to \"set\")"},
    {.id = CLI_OPT_AGENTS, .help = "as --set agents=N"},
    {.id = CLI_OPT_POLICY,
     .help = "a policy (repeatable; replaces \"policies\"; default random)",
     .flags = CLI_MANY},
    {.id = CLI_OPT_SEED,
     .help = "first seed (default 1); the seeds are S..S+N-1",
     .metavar = "S",
     .hi = (int64_t)1 << 53},
    {.id = CLI_OPT_EPISODES,
     .help = "seeds (episodes) per cell (default 10)",
     .lo = 1,
     .hi = 1000000},
    {.id = CLI_OPT_STEPS},
    {.id = CLI_OPT_NO_METRICS},
    {.id = CLI_OPT_OUT,
     .help = "where the results go (required unless the spec has \"out\")",
     .metavar = "DIR"},
    {.id = CLI_OPT_RESUME,
     .help = "finish the sweep OUT/results.jsonl holds: play only the jobs\n"
             "missing from it (without the file: start it)"},
    {.id = CLI_OPT_THREADS,
     .help = "threads playing jobs (default: the machine's cores; under MPI 1\n"
             "per rank)",
     .metavar = "N",
     .lo = 1,
     .hi = 1024},
    {.id = CLI_OPT_FORMAT,
     .help = "what to print at the end: table (default), json or csv",
     .choices = FORMATS},
    {.id = CLI_OPT_QUIET, .help = "no progress bar"},
    {.id = CLI_OPT_RECORD_ALL,
     .help = "record every episode to OUT/recordings/job-N.jsonl.gz\n"
             "(docs/recording.md; the result line names it; under MPI, OUT\n"
             "must be a directory every rank can write)"},
    {.id = CLI_OPT_PLUGIN_PATH},
};

static int sweep_main(cli_args *args);

const cli_command CLI_CMD_SWEEP = {
    .name = "sweep",
    .args = "[SPEC]",
    .summary = "play a grid of scenarios x overrides x policies x seeds (threads\n"
               "or MPI ranks), resumable; a summary per cell",
    .usage = "sweep [SPEC] [options]",
    .about =
        "Plays every job of a sweep: each scenario x each combination of the grid's override\n"
        "values x each policy (a cell) x each seed, one episode per job. Every finished episode\n"
        "is appended at once to OUT/results.jsonl as one JSON line (job, cell, scenario, policy,\n"
        "params, seed, steps, final state hash, every metric of `polis eval`); then the summary\n"
        "per cell (n, mean, sd and the 95% interval of the mean of every metric) is written to\n"
        "OUT/summary.txt, OUT/summary.json and OUT/summary.csv and printed. SPEC is a JSON file\n"
        "(docs/sweep.md); the options below add to it or replace its keys. A progress bar with\n"
        "the time left is shown on stderr when it is a terminal.\n"
        "\n"
        "Started by mpirun or srun, in a build with MPI (the last line below says), the ranks\n"
        "share the jobs: rank 0 hands them out and writes the results, every rank plays them.\n",
    CLI_USES(USES),
#ifdef POLIS_HAVE_MPI
    .notes = "This polis is built with MPI.\n",
#else
    .notes =
        "This polis is built without MPI (configure with -DPOLIS_MPI=ON and an MPI installed).\n",
#endif
    .pos_name = {"SPEC"},
    .pos_what = {"a sweep .json file"},
    .n_pos = 1,
    .run = sweep_main,
};

/* What the command line adds to the spec, or replaces in it. */
typedef struct sweep_args {
    const char *spec;
    const char *const *scenarios, *const *policies;
    int n_scenarios, n_policies;
    const cli_overrides *set, *grid;
    bool has_seed, has_episodes, has_steps, no_metrics, resume, quiet, record;
    int64_t seed, episodes, steps, threads;
    const char *out, *plugin_path;
    out_format format;
} sweep_args;

/* ---- the spec ---------------------------------------------------------------------------- */

/* Adds a string array named `key` to the normalised spec: the spec file's (paths resolved
 * against its directory when `paths`), unless the command line gave some. */
static int spec_names(cJSON *norm, const cJSON *file_spec, const char *spec_file, const char *key,
                      const char *const *cli, int n_cli, bool paths, const char *fallback)
{
    cJSON *list = cJSON_AddArrayToObject(norm, key);
    if (!list) return spec_error("sweep", "out of memory");
    if (n_cli > 0) {
        for (int i = 0; i < n_cli; i++)
            if (!cJSON_AddItemToArray(list, cJSON_CreateString(cli[i])))
                return spec_error("sweep", "out of memory");
        return 0;
    }
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(file_spec, key);
    if (!given && fallback) {
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(fallback)))
            return spec_error("sweep", "out of memory");
        return 0;
    }
    if (!given)
        return spec_error(spec_file ? spec_file : "sweep",
                          "no %s: give them in the spec's \"%s\" or with --%.*s", key, key,
                          (int)strlen(key) - 1, key);
    if (!cJSON_IsArray(given) || cJSON_GetArraySize(given) == 0)
        return spec_error(spec_file, "%s: expected a non-empty array of names", key);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, given) {
        if (!cJSON_IsString(it) || !*it->valuestring)
            return spec_error(spec_file, "%s[%d]: expected a non-empty string", key, i);
        char *s = paths ? spec_path(spec_file, it->valuestring) : strdup(it->valuestring);
        cJSON *str = s ? cJSON_CreateString(s) : NULL;
        free(s);
        if (!cJSON_AddItemToArray(list, str)) return spec_error("sweep", "out of memory");
        i++;
    }
    return 0;
}

/* "set" / "grid": the spec file's object, then the command line's members. */
static int spec_overrides(cJSON *norm, const cJSON *file_spec, const char *spec_file,
                          const char *key, const cJSON *cli)
{
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(file_spec, key);
    if (given && !cJSON_IsObject(given))
        return spec_error(spec_file, "%s: expected an object of override paths", key);
    cJSON *o = given ? cJSON_Duplicate(given, true) : cJSON_CreateObject();
    if (!o || !cJSON_AddItemToObject(norm, key, o)) {
        cJSON_Delete(o);
        return spec_error("sweep", "out of memory");
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cli) {
        cJSON *copy = cJSON_Duplicate(it, true);
        if (!copy || !cJSON_AddItemToObject(o, it->string, copy)) {
            cJSON_Delete(copy);
            return spec_error("sweep", "out of memory");
        }
    }
    if (strcmp(key, "grid") == 0)
        cJSON_ArrayForEach(it, o)
            if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0)
                return spec_error(spec_file ? spec_file : "sweep",
                                  "grid.%s: expected a non-empty array of values", it->string);
    return 0;
}

static int spec_seeds(cJSON *norm, const cJSON *file_spec, const char *spec_file,
                      const sweep_args *a)
{
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(file_spec, "seeds");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(file_spec, "seed");
    const cJSON *episodes = cJSON_GetObjectItemCaseSensitive(file_spec, "episodes");
    cJSON *list = cJSON_AddArrayToObject(norm, "seeds");
    if (!list) return spec_error("sweep", "out of memory");
    if (seeds && (seed || episodes))
        return spec_error(spec_file, "seeds: give either \"seeds\" or \"seed\" and \"episodes\"");
    if (seeds && !a->has_seed && !a->has_episodes) {
        if (!cJSON_IsArray(seeds) || cJSON_GetArraySize(seeds) == 0)
            return spec_error(spec_file, "seeds: expected a non-empty array of integers");
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, seeds) {
            int64_t v;
            if (!json_int(it, 0, MAX_SEED, &v))
                return spec_error(spec_file, "seeds[%d]: expected an integer in [0, 2^53]", i);
            if (!cJSON_AddItemToArray(list, cJSON_CreateNumber((double)v)))
                return spec_error("sweep", "out of memory");
            i++;
        }
        return 0;
    }
    int64_t first = 1, count = 10;
    if (seed && !json_int(seed, 0, MAX_SEED, &first))
        return spec_error(spec_file, "seed: expected an integer in [0, 2^53]");
    if (episodes && !json_int(episodes, 1, 1000000, &count))
        return spec_error(spec_file, "episodes: expected an integer in [1, 1000000]");
    if (a->has_seed) first = a->seed;
    if (a->has_episodes) count = a->episodes;
    if ((double)first + (double)(count - 1) > MAX_SEED)
        return spec_error(spec_file ? spec_file : "sweep",
                          "seeds: %" PRId64 "..%" PRId64 " goes beyond 2^53", first,
                          first + count - 1);
    for (int64_t k = 0; k < count; k++)
        if (!cJSON_AddItemToArray(list, cJSON_CreateNumber((double)(first + k))))
            return spec_error("sweep", "out of memory");
    return 0;
}

/* The normalised spec (what the results file's first line records) from the spec file and
 * the command line, plus the output directory. */
static int build_spec(const sweep_args *a, sweep *sw)
{
    static const char *const KEYS[] = {"doc",      "scenarios", "set",      "grid",
                                       "policies", "seed",      "episodes", "seeds",
                                       "steps",    "metrics",   "out"};
    cJSON *file_spec = NULL;
    if (a->spec) {
        char why[256];
        char *text = cli_file_read(a->spec, CLI_FILE_TEXT_MAX, NULL, why, sizeof why);
        if (!text) return spec_error("sweep", "cannot read %s: %s", a->spec, why);
        const char *end = NULL;
        file_spec = cJSON_ParseWithOpts(text, &end, true);
        if (!file_spec) {
            int line = 1;
            for (const char *p = text; end && p < end; p++) line += *p == '\n';
            free(text);
            return spec_error(a->spec, "%d: not valid JSON", line);
        }
        free(text);
        if (!cJSON_IsObject(file_spec)) {
            cJSON_Delete(file_spec);
            return spec_error(a->spec, "expected a JSON object");
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, file_spec) {
            bool known = false;
            for (size_t k = 0; k < sizeof KEYS / sizeof KEYS[0]; k++)
                known = known || strcmp(it->string, KEYS[k]) == 0;
            if (!known) {
                int rc = spec_error(a->spec,
                                    "%s: unknown key (known: scenarios, set, grid, policies, "
                                    "seed, episodes, seeds, steps, metrics, out, doc)",
                                    it->string);
                cJSON_Delete(file_spec);
                return rc;
            }
        }
    }
    sw->spec = cJSON_CreateObject();
    int rc = sw->spec ? 0 : spec_error("sweep", "out of memory");
    if (!rc)
        rc = spec_names(sw->spec, file_spec, a->spec, "scenarios", a->scenarios, a->n_scenarios,
                        true, NULL);
    if (!rc) rc = spec_overrides(sw->spec, file_spec, a->spec, "set", a->set->obj);
    if (!rc) rc = spec_overrides(sw->spec, file_spec, a->spec, "grid", a->grid->obj);
    if (!rc)
        rc = spec_names(sw->spec, file_spec, a->spec, "policies", a->policies, a->n_policies, false,
                        "random");
    if (!rc) rc = spec_seeds(sw->spec, file_spec, a->spec, a);
    if (!rc) {
        const cJSON *steps = cJSON_GetObjectItemCaseSensitive(file_spec, "steps");
        sw->steps = 0;
        if (steps && !cJSON_IsNull(steps) && !json_int(steps, 1, 1e15, &sw->steps))
            rc = spec_error(a->spec, "steps: expected a positive integer or null");
        if (a->has_steps) sw->steps = a->steps;
        cJSON *v = sw->steps ? cJSON_CreateNumber((double)sw->steps) : cJSON_CreateNull();
        if (!rc && !cJSON_AddItemToObject(sw->spec, "steps", v)) {
            cJSON_Delete(v);
            rc = spec_error("sweep", "out of memory");
        }
    }
    if (!rc) {
        const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(file_spec, "metrics");
        if (metrics && !cJSON_IsBool(metrics))
            rc = spec_error(a->spec, "metrics: expected true or false");
        sw->metrics = !a->no_metrics && !cJSON_IsFalse(metrics);
        if (!rc && !cJSON_AddBoolToObject(sw->spec, "metrics", sw->metrics))
            rc = spec_error("sweep", "out of memory");
    }
    if (!rc) {
        const cJSON *out = cJSON_GetObjectItemCaseSensitive(file_spec, "out");
        if (out && (!cJSON_IsString(out) || !*out->valuestring))
            rc = spec_error(a->spec, "out: expected a directory name");
        else if (a->out)
            sw->out = strdup(a->out);
        else if (out)
            sw->out = spec_path(a->spec, out->valuestring);
        else
            rc = cli_usage("sweep", "missing --out DIR (or \"out\" in the spec): where the "
                                    "results go");
        if (!rc && !sw->out) rc = spec_error("sweep", "out of memory");
    }
    cJSON_Delete(file_spec);
    return rc;
}

/* ---- cells and jobs ---------------------------------------------------------------------- */

static int expand_cells(sweep *sw)
{
    const cJSON *scenarios = cJSON_GetObjectItemCaseSensitive(sw->spec, "scenarios");
    const cJSON *policies = cJSON_GetObjectItemCaseSensitive(sw->spec, "policies");
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(sw->spec, "set");
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(sw->spec, "grid");
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(sw->spec, "seeds");
    /* Counted in doubles first: a grid of many long axes must not overflow on the way. */
    double jobs = (double)cJSON_GetArraySize(scenarios) * cJSON_GetArraySize(policies) *
                  cJSON_GetArraySize(seeds);
    const cJSON *axis;
    cJSON_ArrayForEach(axis, grid) jobs *= cJSON_GetArraySize(axis);
    if (jobs > MAX_JOBS)
        return spec_error("sweep", "the sweep has %.0f jobs, more than %d", jobs, MAX_JOBS);
    int64_t combos = 1;
    cJSON_ArrayForEach(axis, grid) combos *= cJSON_GetArraySize(axis);
    sw->n_seeds = cJSON_GetArraySize(seeds);
    sw->n_cells = (int64_t)cJSON_GetArraySize(scenarios) * combos * cJSON_GetArraySize(policies);
    sw->n_jobs = sw->n_cells * sw->n_seeds;
    sw->seeds = malloc(sizeof *sw->seeds * (size_t)sw->n_seeds);
    sw->cells = calloc((size_t)sw->n_cells, sizeof *sw->cells);
    if (!sw->seeds || !sw->cells) return spec_error("sweep", "out of memory");
    int64_t k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, seeds) sw->seeds[k++] = (uint64_t)it->valuedouble;

    int64_t c = 0;
    const cJSON *scn;
    cJSON_ArrayForEach(scn, scenarios)
        for (int64_t g = 0; g < combos; g++) {
            const cJSON *pol;
            cJSON_ArrayForEach(pol, policies) {
                sweep_cell *ce = &sw->cells[c++];
                ce->file = scn->valuestring;
                ce->policy = pol->valuestring;
                ce->params = cJSON_CreateObject();
                if (!ce->params) return spec_error("sweep", "out of memory");
                /* The combination's index in mixed radix, the last axis fastest. */
                int64_t rest = g, stride = combos;
                cJSON_ArrayForEach(axis, grid) {
                    stride /= cJSON_GetArraySize(axis);
                    const cJSON *v = cJSON_GetArrayItem(axis, (int)(rest / stride));
                    rest %= stride;
                    cJSON *copy = cJSON_Duplicate(v, true);
                    if (!copy || !cJSON_AddItemToObject(ce->params, axis->string, copy)) {
                        cJSON_Delete(copy);
                        return spec_error("sweep", "out of memory");
                    }
                }
                /* The fixed overrides first, the cell's grid values after them. */
                cJSON *user = cJSON_Duplicate(set, true);
                bool ok = user != NULL;
                cJSON_ArrayForEach(it, ce->params) {
                    cJSON *copy = ok ? cJSON_Duplicate(it, true) : NULL;
                    ok = copy && cJSON_AddItemToObject(user, it->string, copy);
                    if (!ok) cJSON_Delete(copy);
                }
                bool oom = !ok;
                if (ok) ce->overrides = cli_eval_overrides(ce->file, user, sw->metrics, &oom);
                cJSON_Delete(user);
                if (oom) return spec_error("sweep", "out of memory");
            }
        }
    return 0;
}

/* "cell 3 (gather.json, policy random, max_steps=50)" */
static void cell_text(const sweep *sw, int64_t c, char *buf, size_t size)
{
    const sweep_cell *ce = &sw->cells[c];
    const char *base = strrchr(ce->file, '/') ? strrchr(ce->file, '/') + 1 : ce->file;
    size_t n = (size_t)snprintf(buf, size, "cell %" PRId64 " (%s, policy %s", c, base, ce->policy);
    const cJSON *it;
    cJSON_ArrayForEach(it, ce->params) {
        char *v = n < size ? cJSON_PrintUnformatted(it) : NULL;
        if (v) n += (size_t)snprintf(buf + n, size - n, ", %s=%s", it->string, v);
        cJSON_free(v);
    }
    if (n < size) snprintf(buf + n, size - n, ")");
}

static void cell_env_free(polis_env **env)
{
    polis_env_destroy(*env);
    *env = NULL;
}

/* A new env for cell c and its policy (an env's policy in *policy, or a policy process or
 * population in *seats: session/seats.h), or NULL with the reason in err. */
static polis_env *cell_env(const sweep *sw, int64_t c, int32_t *policy, cli_seats **seats,
                           char *err, size_t size)
{
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = sw->plugin_path;
    o.overrides = sw->cells[c].overrides;
    polis_env *env = NULL;
    polis_error e;
    char where[512];
    cell_text(sw, c, where, sizeof where);
    if (polis_env_create_file(sw->cells[c].file, &o, &env, &e) != POLIS_OK) {
        snprintf(err, size, "%s: %s", where, e.message);
        return NULL;
    }
    *seats = NULL;
    if (cli_seats_outside(sw->cells[c].policy)) {
        char why[2048];
        *policy = -1;
        *seats = cli_seats_new(env, sw->cells[c].file, sw->cells[c].policy, "policy", 600000, why,
                               sizeof why);
        if (!*seats) {
            snprintf(err, size, "%s: %s", where, why);
            cell_env_free(&env);
        }
        return env;
    }
    *policy = polis_env_policy_find(env, sw->cells[c].policy);
    if (*policy < 0) {
        char list[512];
        cli_policy_names(env, list, sizeof list);
        snprintf(err, size, "%s: '%s' is not a policy of this scenario (policies: %s)", where,
                 sw->cells[c].policy, list);
        cell_env_free(&env);
    }
    return env;
}

/* ---- playing jobs ------------------------------------------------------------------------ */

typedef struct worker {
    sweep *sw;
    int64_t cell; /* of env; -1: none */
    polis_env *env;
    int32_t policy;
    cli_seats *seats; /* the policy when it is a process or a population */
    bool has_metrics;
    double *returns;
    pthread_t thread;
} worker;

static void worker_free(worker *w)
{
    cli_seats_free(w->seats);
    w->seats = NULL;
    cell_env_free(&w->env);
    free(w->returns);
    w->returns = NULL;
    w->cell = -1;
}

/* A recorder of job's episode into OUT/<name> (the cell's scenario, overrides, policy and
 * seed in its header), or NULL with the reason in err. */
static polis_recorder *record_job(worker *w, int64_t job, uint64_t seed, const char *name,
                                  char *err, size_t size)
{
    const sweep *sw = w->sw;
    const sweep_cell *cell = &sw->cells[job / sw->n_seeds];
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", sw->out, name) >= sizeof path) {
        snprintf(err, size, "job %" PRId64 ": --record: the path under %.900s is too long", job,
                 sw->out);
        return NULL;
    }
    char *policies = cli_record_policies(w->env, cell->policy);
    polis_recorder *rec = policies ? cli_record_open(path, w->env, cell->file, cell->overrides,
                                                     seed, 0, policies, "sweep")
                                   : NULL;
    if (!rec)
        snprintf(err, size, "job %" PRId64 ": --record: cannot record to %.1024s%s", job, path,
                 policies ? " (the reason is above)" : ": out of memory");
    cJSON_free(policies);
    return rec;
}

/* The result line of a job ("...}\n", free it), or NULL with the reason in err. */
static char *play_job(worker *w, int64_t job, char *err, size_t size)
{
    const sweep *sw = w->sw;
    int64_t c = job / sw->n_seeds;
    uint64_t seed = sw->seeds[job % sw->n_seeds];
    /* A recorder subscribes to an env's events before its first reset: with --record every
     * job gets a fresh env (the same episode, bit for bit, as a reused one). */
    if (w->cell != c || sw->record) {
        worker_free(w);
        if (!(w->env = cell_env(sw, c, &w->policy, &w->seats, err, size))) return NULL;
        w->cell = c;
        w->has_metrics = cli_has_metrics(w->env);
        w->returns = calloc((size_t)polis_env_n_agents(w->env) + 1, sizeof *w->returns);
        if (!w->returns) {
            snprintf(err, size, "out of memory");
            return NULL;
        }
    }
    char rec_name[64] = "";
    polis_recorder *rec = NULL;
    if (sw->record) {
        snprintf(rec_name, sizeof rec_name, "recordings/job-%06" PRId64 ".jsonl.gz", job);
        if (!(rec = record_job(w, job, seed, rec_name, err, size))) {
            worker_free(w);
            return NULL;
        }
    }
    cli_episode e;
    char why[1024];
    cli_actor by_seats = w->seats ? cli_seats_actor(w->seats) : (cli_actor){0};
    bool played = w->seats ? cli_play_episode_by(w->env, &by_seats, seed, sw->steps, w->has_metrics,
                                                 false, w->returns, rec, &e, why, sizeof why)
                           : cli_play_episode(w->env, w->policy, seed, sw->steps, w->has_metrics,
                                              false, w->returns, rec, &e, why, sizeof why);
    if (rec && played && polis_recorder_flush(rec) != POLIS_OK) {
        cli_episode_free(&e);
        snprintf(why, sizeof why, "--record %.600s/%s: %.300s", sw->out, rec_name,
                 polis_recorder_error(rec));
        played = false;
    }
    if (rec && polis_recorder_close(rec) != POLIS_OK && played) {
        cli_episode_free(&e);
        snprintf(why, sizeof why, "--record: writing %.900s/%s failed", sw->out, rec_name);
        played = false;
    }
    if (!played) {
        char where[512];
        cell_text(sw, c, where, sizeof where);
        snprintf(err, size, "job %" PRId64 ", %s, seed %" PRIu64 ": %s", job, where, seed, why);
        /* The env is in an unknown state: the next job of the cell gets a new one. */
        worker_free(w);
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    char buf[32];
    bool ok = o != NULL;
    snprintf(buf, sizeof buf, "%" PRId64, job);
    ok = ok && cJSON_AddRawToObject(o, "job", buf);
    snprintf(buf, sizeof buf, "%" PRId64, c);
    ok = ok && cJSON_AddRawToObject(o, "cell", buf);
    ok = ok && cJSON_AddStringToObject(o, "scenario", polis_env_name(w->env));
    ok = ok && cJSON_AddStringToObject(o, "policy", sw->cells[c].policy);
    cJSON *params = ok ? cJSON_Duplicate(sw->cells[c].params, true) : NULL;
    ok = params && cJSON_AddItemToObject(o, "params", params);
    if (!ok && params && !cJSON_GetObjectItemCaseSensitive(o, "params")) cJSON_Delete(params);
    snprintf(buf, sizeof buf, "%" PRIu64, seed);
    ok = ok && cJSON_AddRawToObject(o, "seed", buf);
    snprintf(buf, sizeof buf, "%" PRId64, e.steps);
    ok = ok && cJSON_AddRawToObject(o, "steps", buf);
    snprintf(buf, sizeof buf, "%016" PRIx64, e.hash);
    ok = ok && cJSON_AddStringToObject(o, "hash", buf);
    if (*rec_name) ok = ok && cJSON_AddStringToObject(o, "recording", rec_name);
    if (ok && e.task) { /* the task the episode drew (the scenario's "vary") */
        ok = cJSON_AddItemToObject(o, "task", e.task);
        if (ok) e.task = NULL;
    }
    cJSON *metrics = ok ? cJSON_AddObjectToObject(o, "metrics") : NULL;
    ok = metrics != NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, e.metrics) {
        cJSON *v = ok ? exact_number(it->valuedouble, cJSON_IsNumber(it)) : NULL;
        ok = v && cJSON_AddItemToObject(metrics, it->string, v);
        if (!ok) cJSON_Delete(v);
    }
    cli_episode_free(&e);
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    char *line = text ? malloc(strlen(text) + 2) : NULL;
    if (line) sprintf(line, "%s\n", text);
    cJSON_free(text);
    if (!line) snprintf(err, size, "out of memory");
    return line;
}

/* ---- the writer (rank 0; the caller holds sw->mu) ---------------------------------------- */

static void fail(sweep *sw, const char *msg)
{
    if (!sw->failed) snprintf(sw->error, sizeof sw->error, "%s", msg);
    sw->failed = true;
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* fsync without the lock (writers go on appending meanwhile); a failure fails the sweep. */
static void sync_results(sweep *sw)
{
    if (fsync(sw->fd) == 0) return;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: cannot sync: %s", sw->results, strerror(errno));
    pthread_mutex_lock(&sw->mu);
    fail(sw, msg);
    pthread_mutex_unlock(&sw->mu);
}

/* Appends one result line (the caller holds sw->mu). Returns true when a batch is complete:
 * the caller then calls sync_results once it has let go of the lock. */
static bool record(sweep *sw, const char *line)
{
    /* After a failure nothing more is appended, and a line written in part is cut off, so
     * the file always ends with a whole line and --resume can finish it. */
    if (sw->failed) return false;
    size_t n = strlen(line);
    if (!write_all(sw->fd, line, n)) {
        int e = errno;
        bool cut = ftruncate(sw->fd, sw->results_len) == 0;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: cannot write: %s%s", sw->results, strerror(e),
                 cut ? "" : " (the line written in part is left; --resume cuts it off)");
        fail(sw, msg);
        return false;
    }
    sw->results_len += (off_t)n;
    sw->done_now++;
    sw->unsynced++;
    double now = cli_now();
    if (sw->bar && (now - sw->last_bar >= 0.1 || sw->done_before + sw->done_now == sw->n_jobs)) {
        cli_progress(stderr, sw->done_before + sw->done_now, sw->n_jobs, sw->done_before,
                     now - sw->t0);
        sw->last_bar = now;
    }
    if (sw->unsynced < SYNC_LINES && now - sw->last_sync < SYNC_SECONDS) return false;
    sw->unsynced = 0;
    sw->last_sync = now;
    return true;
}

/* The next job to hand out, or -1 when there is none left or the sweep failed. */
static int64_t take_job(sweep *sw)
{
    pthread_mutex_lock(&sw->mu);
    int64_t job = !sw->failed && sw->next < sw->n_pending ? sw->pending[sw->next++] : -1;
    pthread_mutex_unlock(&sw->mu);
    return job;
}

static void *local_worker(void *arg)
{
    worker *w = arg;
    sweep *sw = w->sw;
    for (int64_t job; (job = take_job(sw)) >= 0;) {
        char err[2048];
        char *line = play_job(w, job, err, sizeof err);
        pthread_mutex_lock(&sw->mu);
        bool sync = false;
        if (line)
            sync = record(sw, line);
        else
            fail(sw, err);
        pthread_mutex_unlock(&sw->mu);
        if (sync) sync_results(sw);
        free(line);
    }
    worker_free(w);
    return NULL;
}

/* ---- the results file -------------------------------------------------------------------- */

/* Where each job's line starts in the results text (-1: not there), from a whole-line scan
 * that checks every line against the sweep. `*good` is the length of the text up to the end
 * of the last complete line. Returns 0 or EXIT_ENV (message printed). */
static int scan_results(const sweep *sw, const char *text, size_t len, int64_t *line_of,
                        size_t *good)
{
    for (int64_t j = 0; j < sw->n_jobs; j++) line_of[j] = -1;
    *good = 0;
    char *header = cJSON_PrintUnformatted(sw->spec);
    if (!header) return spec_error("sweep", "out of memory");
    int64_t line = 0;
    int rc = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) break; /* a torn last line: the run was killed while writing it */
        size_t end = (size_t)(nl - text);
        line++;
        const char *parse_end = NULL;
        cJSON *o = cJSON_ParseWithLengthOpts(text + pos, end - pos, &parse_end, false);
        if (!cJSON_IsObject(o)) {
            rc = spec_error(sw->results, "%" PRId64 ": not a JSON object", line);
        } else if (line == 1) {
            const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
            char *theirs = spec ? cJSON_PrintUnformatted(spec) : NULL;
            if (!cJSON_GetObjectItemCaseSensitive(o, "polis_sweep") || !theirs)
                rc = spec_error(sw->results, "1: not the header of a polis sweep");
            else if (strcmp(theirs, header) != 0)
                rc = spec_error(sw->results,
                                "1: written by a different sweep (its spec differs from this "
                                "one's); give another --out");
            cJSON_free(theirs);
        } else {
            int64_t job, cell, seed;
            if (!json_int(cJSON_GetObjectItemCaseSensitive(o, "job"), 0, (double)(sw->n_jobs - 1),
                          &job) ||
                !json_int(cJSON_GetObjectItemCaseSensitive(o, "cell"), 0, 1e15, &cell) ||
                !json_int(cJSON_GetObjectItemCaseSensitive(o, "seed"), 0, MAX_SEED, &seed) ||
                !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "metrics")))
                rc = spec_error(sw->results,
                                "%" PRId64 ": not a result of this sweep (job, cell, seed, "
                                "metrics)",
                                line);
            else if (cell != job / sw->n_seeds || (uint64_t)seed != sw->seeds[job % sw->n_seeds])
                rc = spec_error(sw->results,
                                "%" PRId64 ": job %" PRId64 " is cell %" PRId64 " seed %" PRIu64
                                " in this sweep, not cell %" PRId64 " seed %" PRId64,
                                line, job, job / sw->n_seeds, sw->seeds[job % sw->n_seeds], cell,
                                seed);
            else if (line_of[job] < 0)
                line_of[job] = (int64_t)pos;
        }
        cJSON_Delete(o);
        pos = end + 1;
        *good = pos;
    }
    cJSON_free(header);
    return rc;
}

static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p) return spec_error("sweep", "out of memory");
    for (char *s = p + 1;; s++) {
        bool last = *s == '\0';
        if (*s == '/' || last) {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int rc = spec_error(dir, "cannot create the directory: %s", strerror(errno));
                free(p);
                return rc;
            }
            if (last) break;
            *s = '/';
        }
    }
    free(p);
    return 0;
}

/* Opens OUT/results.jsonl for appending: a new file gets the header line; with --resume an
 * existing one is checked, its torn last line cut off, and the jobs it holds are not played
 * again. Fills sw->pending. */
static int open_results(sweep *sw, bool resume)
{
    int rc = make_dirs(sw->out);
    if (!rc && sw->record) {
        size_t n = strlen(sw->out) + sizeof "/recordings";
        char *dir = malloc(n);
        if (!dir) return spec_error("sweep", "out of memory");
        snprintf(dir, n, "%s/recordings", sw->out);
        rc = make_dirs(dir);
        free(dir);
    }
    if (rc) return rc;
    if (!(sw->results = join_path(sw->out, "results.jsonl")))
        return spec_error("sweep", "out of memory");
    int64_t *line_of = malloc(sizeof *line_of * (size_t)sw->n_jobs);
    sw->pending = malloc(sizeof *sw->pending * (size_t)sw->n_jobs);
    if (!line_of || !sw->pending) {
        free(line_of);
        return spec_error("sweep", "out of memory");
    }
    for (int64_t j = 0; j < sw->n_jobs; j++) line_of[j] = -1;
    size_t len = 0, good = 0;
    char why[256];
    char *text = cli_file_read(sw->results, CLI_FILE_RESULTS_MAX, &len, why, sizeof why);
    if (!text && errno != ENOENT) {
        free(line_of);
        return spec_error(sw->results, "cannot read: %s", why);
    }
    if (text && len > 0 && !resume) {
        free(text);
        free(line_of);
        return spec_error(sw->results, "already holds a sweep: --resume finishes it; remove it "
                                       "to start again");
    }
    if (text) rc = scan_results(sw, text, len, line_of, &good);
    free(text);
    if (!rc) {
        sw->fd = open(sw->results, O_WRONLY | O_CREAT | O_APPEND, 0666);
        if (sw->fd < 0)
            rc = spec_error(sw->results, "cannot open: %s", strerror(errno));
        else if (good < len && ftruncate(sw->fd, (off_t)good) != 0)
            rc = spec_error(sw->results, "cannot cut off the torn last line: %s", strerror(errno));
    }
    if (!rc && good == 0) {
        /* A new file (or one killed before its header was complete): the header first. */
        cJSON *h = cJSON_CreateObject();
        char *line = NULL;
        if (h && cJSON_AddNumberToObject(h, "polis_sweep", 1) &&
            cJSON_AddItemReferenceToObject(h, "spec", sw->spec) &&
            cJSON_AddNumberToObject(h, "jobs", (double)sw->n_jobs))
            line = cJSON_PrintUnformatted(h);
        cJSON_Delete(h);
        if (!line)
            rc = spec_error("sweep", "out of memory");
        else if ((good < len && ftruncate(sw->fd, 0) != 0) ||
                 !write_all(sw->fd, line, strlen(line)) || !write_all(sw->fd, "\n", 1) ||
                 fsync(sw->fd) != 0) {
            int e = errno;
            /* a header written in part is cut off too: the file is left empty */
            bool cut = ftruncate(sw->fd, 0) == 0;
            rc = spec_error(sw->results, "cannot write: %s%s", strerror(e),
                            cut ? ""
                                : " (the header written in part is left; --resume cuts it off)");
        }
        cJSON_free(line);
    }
    if (!rc && (sw->results_len = lseek(sw->fd, 0, SEEK_END)) < 0)
        rc = spec_error(sw->results, "cannot seek: %s", strerror(errno));
    for (int64_t j = 0; !rc && j < sw->n_jobs; j++) {
        if (line_of[j] >= 0)
            sw->done_before++;
        else
            sw->pending[sw->n_pending++] = j;
    }
    free(line_of);
    return rc;
}

/* ---- the summary ------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v, bool defined)
{
    char buf[32];
    if (!defined || !isfinite(v)) return;
    exact_text(buf, v);
    fputs(buf, f);
}

typedef struct summary_out {
    FILE *txt, *csv;
    cJSON *json; /* {"cells": [...]} */
    cJSON *cells;
    bool ok;
} summary_out;

static void summarise_cell(const sweep *sw, int64_t c, const char *scenario, const cli_table *t,
                           summary_out *so)
{
    const sweep_cell *ce = &sw->cells[c];
    fprintf(so->txt, "\ncell %" PRId64 ": %s, policy %s", c, scenario, ce->policy);
    const cJSON *it;
    cJSON_ArrayForEach(it, ce->params) {
        char *v = cJSON_PrintUnformatted(it);
        fprintf(so->txt, ", %s=%s", it->string, v ? v : "?");
        so->ok = so->ok && v;
        cJSON_free(v);
    }
    fprintf(so->txt, " (%" PRId64 " episodes)\n", t->episodes);
    int width = 6;
    for (int32_t i = 0; i < t->n_keys; i++)
        if ((int)strlen(t->keys[i]) > width) width = (int)strlen(t->keys[i]);
    fprintf(so->txt, "  %-*s  %6s  %12s  %10s  %s\n", width, "metric", "n", "mean", "sd",
            "95% interval");

    cJSON *o = cJSON_CreateObject();
    so->ok = so->ok && o && cJSON_AddItemToArray(so->cells, o);
    if (!so->ok) {
        cJSON_Delete(o);
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, c);
    so->ok = cJSON_AddRawToObject(o, "cell", buf) &&
             cJSON_AddStringToObject(o, "scenario", scenario) &&
             cJSON_AddStringToObject(o, "file", ce->file) &&
             cJSON_AddStringToObject(o, "policy", ce->policy);
    cJSON *params = so->ok ? cJSON_Duplicate(ce->params, true) : NULL;
    so->ok = params && cJSON_AddItemToObject(o, "params", params);
    if (!so->ok && params && !cJSON_GetObjectItemCaseSensitive(o, "params")) cJSON_Delete(params);
    snprintf(buf, sizeof buf, "%" PRId64, t->episodes);
    so->ok = so->ok && cJSON_AddRawToObject(o, "episodes", buf);
    cJSON *metrics = so->ok ? cJSON_AddObjectToObject(o, "metrics") : NULL;
    so->ok = metrics != NULL;

    for (int32_t i = 0; so->ok && i < t->n_keys; i++) {
        cli_stat s = cli_table_stat(t, i);
        bool def = s.n > 0;
        if (def)
            fprintf(so->txt, "  %-*s  %6" PRId64 "  %12.6g  %10.4g  [%.6g, %.6g]\n", width,
                    t->keys[i], s.n, s.mean, s.sd, s.mean - s.ci95, s.mean + s.ci95);
        else
            fprintf(so->txt, "  %-*s  %6d  %12s  %10s  -\n", width, t->keys[i], 0, "undefined",
                    "-");
        fprintf(so->csv, "%" PRId64 ",", c);
        csv_field(so->csv, scenario);
        fputc(',', so->csv);
        csv_field(so->csv, ce->policy);
        cJSON_ArrayForEach(it, ce->params) {
            char *v = cJSON_PrintUnformatted(it);
            fputc(',', so->csv);
            csv_field(so->csv, v ? v : "");
            so->ok = so->ok && v;
            cJSON_free(v);
        }
        fputc(',', so->csv);
        csv_field(so->csv, t->keys[i]);
        fprintf(so->csv, ",%" PRId64 ",", s.n);
        csv_number(so->csv, s.mean, def);
        fputc(',', so->csv);
        csv_number(so->csv, s.sd, def);
        fputc(',', so->csv);
        csv_number(so->csv, s.mean - s.ci95, def);
        fputc(',', so->csv);
        csv_number(so->csv, s.mean + s.ci95, def);
        fputc('\n', so->csv);

        cJSON *m = cJSON_CreateObject();
        so->ok = so->ok && m && cJSON_AddItemToObject(metrics, t->keys[i], m);
        if (!so->ok) {
            cJSON_Delete(m);
            break;
        }
        snprintf(buf, sizeof buf, "%" PRId64, s.n);
        cJSON *ci = cJSON_CreateArray();
        so->ok = cJSON_AddRawToObject(m, "n", buf) &&
                 cJSON_AddItemToObject(m, "mean", exact_number(s.mean, def)) &&
                 cJSON_AddItemToObject(m, "sd", exact_number(s.sd, def)) && ci &&
                 cJSON_AddItemToObject(m, "ci95", ci);
        if (!so->ok && ci && !cJSON_GetObjectItemCaseSensitive(m, "ci95")) cJSON_Delete(ci);
        so->ok = so->ok && cJSON_AddItemToArray(ci, exact_number(s.mean - s.ci95, def)) &&
                 cJSON_AddItemToArray(ci, exact_number(s.mean + s.ci95, def));
    }
}

/* Writes `text` to OUT/name through a temporary file renamed over it. */
static int write_summary_file(const sweep *sw, const char *name, const char *text)
{
    char *path = join_path(sw->out, name);
    char *tmp = path ? join_path(sw->out, ".summary.tmp") : NULL;
    int rc = 0;
    FILE *f = tmp ? fopen(tmp, "w") : NULL;
    if (!path || !tmp)
        rc = spec_error("sweep", "out of memory");
    else if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        rc = spec_error(path, "cannot write: %s", strerror(errno));
    free(path);
    free(tmp);
    return rc;
}

/* Reads the whole results file, checks every job is in it, and writes and prints the
 * summary. */
static int summarise(const sweep *sw)
{
    size_t len = 0, good = 0;
    char why[256];
    char *text = cli_file_read(sw->results, CLI_FILE_RESULTS_MAX, &len, why, sizeof why);
    if (!text) return spec_error(sw->results, "cannot read: %s", why);
    int64_t *line_of = malloc(sizeof *line_of * (size_t)sw->n_jobs);
    if (!line_of) {
        free(text);
        return spec_error("sweep", "out of memory");
    }
    int rc = scan_results(sw, text, len, line_of, &good);
    for (int64_t j = 0; !rc && j < sw->n_jobs; j++)
        if (line_of[j] < 0) rc = spec_error(sw->results, "job %" PRId64 " is missing", j);

    summary_out so = {0};
    char *txt_text = NULL, *csv_text = NULL;
    size_t txt_len = 0, csv_len = 0;
    so.txt = rc ? NULL : open_memstream(&txt_text, &txt_len);
    so.csv = so.txt ? open_memstream(&csv_text, &csv_len) : NULL;
    so.json = cJSON_CreateObject();
    so.cells = so.json ? cJSON_AddArrayToObject(so.json, "cells") : NULL;
    so.ok = so.txt && so.csv && so.cells;
    if (!rc && !so.ok) rc = spec_error("sweep", "out of memory");
    if (!rc) {
        const cJSON *grid = cJSON_GetObjectItemCaseSensitive(sw->spec, "grid");
        fprintf(so.txt, "sweep: %" PRId64 " cells x %" PRId64 " seeds = %" PRId64 " episodes\n",
                sw->n_cells, sw->n_seeds, sw->n_jobs);
        fputs("cell,scenario,policy", so.csv);
        const cJSON *it;
        cJSON_ArrayForEach(it, grid) {
            fputc(',', so.csv);
            csv_field(so.csv, it->string);
        }
        fputs(",metric,n,mean,sd,ci95_low,ci95_high\n", so.csv);
    }
    for (int64_t c = 0; !rc && c < sw->n_cells; c++) {
        cli_table t = {.episodes = sw->n_seeds};
        char scenario[256] = "";
        for (int64_t k = 0; k < sw->n_seeds && !rc; k++) {
            int64_t j = c * sw->n_seeds + k;
            const char *start = text + line_of[j];
            const char *nl = strchr(start, '\n');
            cJSON *o = cJSON_ParseWithLength(start, (size_t)(nl - start));
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "scenario");
            if (k == 0 && cJSON_IsString(name))
                snprintf(scenario, sizeof scenario, "%s", name->valuestring);
            if (!o)
                rc = spec_error("sweep", "out of memory");
            else
                cli_table_add(&t, k, cJSON_GetObjectItemCaseSensitive(o, "metrics"));
            cJSON_Delete(o);
        }
        if (!rc && t.oom) rc = spec_error("sweep", "out of memory");
        if (!rc) summarise_cell(sw, c, scenario, &t, &so);
        if (!rc && !so.ok) rc = spec_error("sweep", "out of memory");
        cli_table_free(&t);
    }
    if (so.txt && fclose(so.txt) != 0 && !rc) rc = spec_error("sweep", "out of memory");
    if (so.csv && fclose(so.csv) != 0 && !rc) rc = spec_error("sweep", "out of memory");
    char *json_text = rc ? NULL : cJSON_Print(so.json);
    if (!rc && !json_text) rc = spec_error("sweep", "out of memory");
    if (!rc) rc = write_summary_file(sw, "summary.txt", txt_text);
    if (!rc) rc = write_summary_file(sw, "summary.csv", csv_text);
    if (!rc) {
        size_t n = strlen(json_text);
        char *with_nl = malloc(n + 2);
        if (!with_nl) {
            rc = spec_error("sweep", "out of memory");
        } else {
            snprintf(with_nl, n + 2, "%s\n", json_text);
            rc = write_summary_file(sw, "summary.json", with_nl);
            free(with_nl);
        }
    }
    if (!rc) {
        if (sw->format == FORMAT_TABLE) fputs(txt_text, stdout);
        if (sw->format == FORMAT_CSV) fputs(csv_text, stdout);
        if (sw->format == FORMAT_JSON) printf("%s\n", json_text);
        fflush(stdout);
    }
    cJSON_free(json_text);
    cJSON_Delete(so.json);
    free(txt_text);
    free(csv_text);
    free(line_of);
    free(text);
    return rc;
}

/* ---- running ------------------------------------------------------------------------------ */

/* Before anything is played: every cell's env can be made and has its policy. */
static int check_cells(const sweep *sw)
{
    for (int64_t c = 0; c < sw->n_cells; c++) {
        char err[2048];
        int32_t policy;
        cli_seats *seats;
        polis_env *env = cell_env(sw, c, &policy, &seats, err, sizeof err);
        if (!env) {
            fprintf(stderr, "polis: %s\n", err);
            return EXIT_ENV;
        }
        cli_seats_free(seats);
        cell_env_free(&env);
    }
    return 0;
}

static int start_threads(sweep *sw, worker *workers, int n)
{
    for (int i = 0; i < n; i++) {
        workers[i] = (worker){.sw = sw, .cell = -1};
        if (pthread_create(&workers[i].thread, NULL, local_worker, &workers[i]) != 0) {
            pthread_mutex_lock(&sw->mu);
            fail(sw, "cannot start a thread");
            pthread_mutex_unlock(&sw->mu);
            return i;
        }
    }
    return n;
}

/* ---- the other ranks (transport/mpi.c) ------------------------------------------------------- */

static int64_t job_take(void *ud) { return take_job(ud); }

static bool job_result(void *ud, const char *line, bool failed)
{
    sweep *sw = ud;
    pthread_mutex_lock(&sw->mu);
    bool sync = !failed && record(sw, line);
    if (failed) fail(sw, line);
    pthread_mutex_unlock(&sw->mu);
    return sync;
}

static void job_sync(void *ud) { sync_results(ud); }

static char *job_play(void *ud, int64_t job, char *err, size_t cap)
{
    return play_job(ud, job, err, cap);
}

/* FNV-1a of the normalised spec and the options that change results lines; 0 on oom. */
static uint64_t spec_digest(const sweep *sw)
{
    char *text = cJSON_PrintUnformatted(sw->spec);
    if (!text) return 0;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    cJSON_free(text);
    const char *pp = sw->plugin_path ? sw->plugin_path : "";
    for (const unsigned char *p = (const unsigned char *)pp; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    return h ? h : 1;
}

/* Rank 0 (or the only process): prepares the results, plays the jobs with its threads while
 * serving the other ranks, and summarises. `size` ranks in all. */
static int run_rank0(sweep *sw, bool resume, const cli_ranks *ranks)
{
    int rc = check_cells(sw);
    if (!rc) rc = open_results(sw, resume);
    rc = cli_mpi_bcast(ranks, rc);
    if (rc) return rc;
    if (sw->done_before > 0)
        fprintf(stderr, "polis: sweep: %" PRId64 " of %" PRId64 " jobs already in %s\n",
                sw->done_before, sw->n_jobs, sw->results);
    sw->t0 = sw->last_sync = cli_now();
    int n = sw->threads;
    if (n > sw->n_pending) n = sw->n_pending > 0 ? (int)sw->n_pending : 1;
    worker *workers = calloc((size_t)n, sizeof *workers);
    int started = workers ? start_threads(sw, workers, n) : 0;
    if (!workers) {
        pthread_mutex_lock(&sw->mu);
        fail(sw, "out of memory");
        pthread_mutex_unlock(&sw->mu);
    }
    cli_job_source jobs = {.ud = sw, .take = job_take, .result = job_result, .sync = job_sync};
    if (ranks->size > 1) cli_mpi_serve_jobs(ranks, &jobs);
    for (int i = 0; i < started; i++) pthread_join(workers[i].thread, NULL);
    free(workers);
    sync_results(sw);
    if (sw->bar) fputs("\r\033[K", stderr);
    if (close(sw->fd) != 0 && !sw->failed) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: cannot close: %s", sw->results, strerror(errno));
        fail(sw, msg);
    }
    sw->fd = -1;
    if (sw->failed) {
        fprintf(stderr, "polis: %s\n", sw->error);
        fprintf(stderr,
                "polis: sweep: %" PRId64 " of %" PRId64 " jobs are in %s; --resume "
                "plays the rest\n",
                sw->done_before + sw->done_now, sw->n_jobs, sw->results);
        return EXIT_ENV;
    }
    return summarise(sw);
}

static void sweep_free(sweep *sw)
{
    for (int64_t c = 0; sw->cells && c < sw->n_cells; c++) {
        cJSON_Delete(sw->cells[c].params);
        cJSON_free(sw->cells[c].overrides);
    }
    free(sw->cells);
    free(sw->seeds);
    free(sw->pending);
    free(sw->results);
    free(sw->out);
    cJSON_Delete(sw->spec);
    if (sw->fd >= 0) close(sw->fd);
    pthread_mutex_destroy(&sw->mu);
}

static int sweep_main(cli_args *args)
{
    const char *format = cli_text(args, CLI_OPT_FORMAT);
    sweep_args a = {
        .spec = args->n_pos ? args->pos[0] : NULL,
        .scenarios = args->v[CLI_OPT_SCENARIO].list,
        .n_scenarios = args->v[CLI_OPT_SCENARIO].n,
        .policies = args->v[CLI_OPT_POLICY].list,
        .n_policies = args->v[CLI_OPT_POLICY].n,
        .set = &args->overrides,
        .grid = &args->grid,
        .has_seed = cli_has(args, CLI_OPT_SEED),
        .has_episodes = cli_has(args, CLI_OPT_EPISODES),
        .has_steps = cli_has(args, CLI_OPT_STEPS),
        .no_metrics = cli_has(args, CLI_OPT_NO_METRICS),
        .resume = cli_has(args, CLI_OPT_RESUME),
        .quiet = cli_has(args, CLI_OPT_QUIET),
        .record = cli_has(args, CLI_OPT_RECORD_ALL),
        .seed = (int64_t)args->v[CLI_OPT_SEED].u64,
        .episodes = cli_num(args, CLI_OPT_EPISODES),
        .steps = cli_num(args, CLI_OPT_STEPS),
        .threads = cli_num(args, CLI_OPT_THREADS),
        .out = cli_text(args, CLI_OPT_OUT),
        .plugin_path = cli_text(args, CLI_OPT_PLUGIN_PATH),
        .format = !format || strcmp(format, "table") == 0 ? FORMAT_TABLE
                  : strcmp(format, "json") == 0           ? FORMAT_JSON
                                                          : FORMAT_CSV,
    };
    int rc;
    sweep sw;
    memset(&sw, 0, sizeof sw);
    sw.fd = -1;
    pthread_mutex_init(&sw.mu, NULL);
    sw.plugin_path = a.plugin_path;
    sw.quiet = a.quiet;
    sw.record = a.record;
    sw.format = a.format;
    rc = build_spec(&a, &sw);
    if (!rc) rc = expand_cells(&sw);

    cli_ranks ranks = cli_mpi_start();
    if (ranks.mpi) {
        /* Every rank read the same spec; one that failed stops them all the same way. */
        int worst = cli_mpi_max(&ranks, rc);
        if (worst && !rc) {
            if (ranks.rank == 0)
                fprintf(stderr, "polis: sweep: another rank could not read the spec (every "
                                "rank reads it: the same paths on every node)\n");
            rc = worst;
        }
        /* A rank must hand job numbers to ranks that number the same jobs. */
        if (!cli_mpi_same(&ranks, rc ? 0 : spec_digest(&sw)) && !rc) {
            if (ranks.rank == 0)
                fprintf(stderr, "polis: sweep: the ranks were not given the same sweep (their "
                                "specs and options differ)\n");
            rc = EXIT_USAGE;
        }
    }
    if (!rc) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        sw.threads = a.threads ? (int)a.threads : ranks.size > 1 ? 1 : cores > 0 ? (int)cores : 1;
        sw.bar = ranks.rank == 0 && !a.quiet && isatty(STDERR_FILENO);
        if (ranks.rank == 0) {
            rc = run_rank0(&sw, a.resume, &ranks);
        } else if (!(rc = cli_mpi_bcast(&ranks, rc))) {
            worker w = {.sw = &sw, .cell = -1};
            cli_mpi_work(&ranks, job_play, &w);
            worker_free(&w);
        }
    }
    cli_mpi_end(&ranks);
    sweep_free(&sw);
    return rc;
}
