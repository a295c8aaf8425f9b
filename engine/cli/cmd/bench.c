/*
 * engine/cli/cmd/bench.c — `polis bench`: how fast a scenario steps.
 *
 * M envs run as one polis_vec (T threads, next-step auto-reset), driven by a random policy
 * over the legal actions of the masks, so the numbers are those of a training loop's env
 * side. Only polis_vec_step is timed; the policy runs on the calling thread and is reported
 * on its own. A repetition's steps are timed as one block (two clock reads per step would
 * cost 5-7% of a small env's step), less the policy's time measured apart as below; with
 * --pixels each step and each drawing is timed alone instead. Warm-up steps are not timed,
 * each repetition is timed alone, and the median, minimum and maximum are printed — the
 * spread says how far to trust the median. In the same run a plain memset of the
 * observation buffer's size gives the machine's write bandwidth for the same bytes, to
 * compare with the rate at which the env writes observations.
 *
 * Rates per CPU-second stand beside the wall-clock ones, for a machine shared with other
 * work: the process's CPU time over each repetition (every thread, so a pool's waiting
 * counts), less the policy's. A CPU clock read is a system call (about a microsecond), too
 * dear to put around each step, so the policy's time and CPU time are measured apart:
 * after each repetition the policy chooses as many times again on the masks as they are,
 * with a copy of its generator, into a scratch buffer (the episodes are unchanged).
 *
 * Like the rest of the CLI it uses only the public API (include/polis).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cmd/commands.h"
#include "session/play.h"
#include "polis/polis.h"
#include "polis/rng.h"

/* From engine/vec/internal.h (the CLI builds without engine/'s private headers): the vec's
 * calls run on the calling thread alone and handed to its threads since create, and its
 * probes (calls timed both ways) and those that found handing off faster. */
void polis__vec_pool_calls(const polis_vec *vec, int64_t *serial, int64_t *parallel);
void polis__vec_pool_probes(const polis_vec *vec, int64_t *probes, int64_t *parallel_verdicts);

/* The policy's generator stream ("bench"), apart from the envs' and `polis run`'s. */
#define BENCH_POLICY_STREAM 0x62656e6368ULL
#define BIG_MEMSET_BYTES ((size_t)64 << 20)

/* ---- arguments ---------------------------------------------------------------------------- */

static const char *const BENCH_POLICIES[] = {"random", "physical", NULL};

static const cli_use USES[] = {
    {.id = CLI_OPT_AGENTS},
    {.id = CLI_OPT_SET},
    {.id = CLI_OPT_STEPS, .help = "timed vec steps per repetition (default 2000)", .def = "2000"},
    {.id = CLI_OPT_ENVS, .def = "1"},
    {.id = CLI_OPT_THREADS, .help = "threads stepping them, 1 to M (default 1)", .def = "1"},
    {.id = CLI_OPT_POLICY,
     .help = "random: uniform over each agent's legal actions (default);\n"
             "physical: the same without the excluded actions, by default\n"
             "those of the social plugin (--exclude-actions @social)",
     .metavar = "random|physical",
     .choices = BENCH_POLICIES},
    {.id = CLI_OPT_EXCLUDE_ACTIONS},
    {.id = CLI_OPT_NO_OBS},
    {.id = CLI_OPT_COMPACT},
    {.id = CLI_OPT_PIXELS},
    {.id = CLI_OPT_SEED, .help = "vec seed (default: the scenario's \"seed\")"},
    {.id = CLI_OPT_REPEAT, .def = "5"},
    {.id = CLI_OPT_WARMUP, .def = "200"},
    {.id = CLI_OPT_JSON, .help = "print one JSON object"},
    {.id = CLI_OPT_PLUGIN_PATH},
};

typedef struct bench_args {
    const char *scenario;
    const char *plugin_path;
    const cli_overrides *overrides;
    int64_t steps, repeat, warmup;
    int32_t envs, threads;
    bool physical;
    const char *exclude; /* as given, or NULL */
    bool no_obs;
    bool compact;
    bool pixels; /* --pixels: popts */
    polis_pixels_obs_opts popts;
    bool has_seed;
    uint64_t seed;
    bool json;
} bench_args;

/* ---- the policy ---------------------------------------------------------------------------- */

/* Marks allowed[k] = 0 for every action an exclusion item names (noop, id 0, never).
 * Returns the count excluded, -1 (message printed) when the owners cannot be read, or -2
 * (usage message printed) when `strict` and an item matches nothing: a typo in an explicit
 * list should not pass as "nothing to exclude". */
static int32_t build_allowed(polis_env *env, const char *list, bool strict, uint8_t *allowed)
{
    int32_t n_actions = polis_env_n_actions(env);
    memset(allowed, 1, (size_t)n_actions);
    if (!list) return 0;
    cJSON *desc = NULL;
    const cJSON *actions = NULL;
    if (strchr(list, '@')) {
        char *text = polis_env_describe_json(env);
        desc = text ? cJSON_Parse(text) : NULL;
        polis_free(text);
        actions = cJSON_GetObjectItemCaseSensitive(desc, "actions");
        if (!cJSON_IsArray(actions)) {
            cJSON_Delete(desc);
            fprintf(stderr, "polis: bench: cannot read the action owners (out of memory)\n");
            return -1;
        }
    }
    int32_t excluded = 0;
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int32_t matched = 0;
        for (int32_t k = 1; k < n_actions; k++) {
            bool hit;
            if (*p == '@') {
                const cJSON *owner =
                    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(actions, k), "owner");
                hit = cJSON_IsString(owner) && strlen(owner->valuestring) == n - 1 &&
                      strncmp(owner->valuestring, p + 1, n - 1) == 0;
            } else {
                hit = strncmp(polis_env_action_name(env, k), p, n) == 0;
            }
            matched += hit;
            if (hit && allowed[k]) {
                allowed[k] = 0;
                excluded++;
            }
        }
        if (strict && matched == 0) {
            cJSON_Delete(desc);
            cli_usage("bench",
                      "--exclude-actions: '%.*s' matches no action of %s (noop is never excluded)",
                      (int)n, p, polis_env_name(env));
            return -2;
        }
        p += n + (c != NULL);
    }
    cJSON_Delete(desc);
    return excluded;
}

/* Each row takes a uniformly random action among those legal in its mask and allowed,
 * written to actions[row]. */
static void choose(const polis_io *io, const uint8_t *allowed, polis_rng *rng, int32_t *actions)
{
    const int32_t n_actions = io->n_actions;
    const uint8_t *mask = io->masks;
    for (int32_t a = 0; a < io->n_agents; a++, mask += n_actions) {
        uint32_t n_ok = 0;
        for (int32_t k = 0; k < n_actions; k++) n_ok += mask[k] & allowed[k];
        int32_t pick = 0;
        if (n_ok > 0) {
            uint32_t r = polis_rng_below(rng, n_ok);
            for (int32_t k = 0; k < n_actions; k++) {
                if (!(mask[k] & allowed[k])) continue;
                if (r-- == 0) {
                    pick = k;
                    break;
                }
            }
        }
        actions[a] = pick;
    }
}

/* ---- measuring ----------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stat3 {
    double median, min, max;
} stat3;

static stat3 summarise(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    stat3 s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

/* Bytes per second of memset over `bytes` bytes, the median of three timings of enough
 * rounds to write at least 256 MiB. The volatile function pointer keeps the compiler from
 * dropping stores nobody reads. */
static double memset_rate(uint8_t *buf, size_t bytes)
{
    void *(*volatile set)(void *, int, size_t) = memset;
    size_t rounds = ((size_t)256 << 20) / (bytes ? bytes : 1) + 1;
    double r[3];
    for (int t = 0; t < 3; t++) {
        double t0 = cli_now();
        for (size_t i = 0; i < rounds; i++) set(buf, (int)(i & 0x7f), bytes);
        double dt = cli_now() - t0;
        r[t] = dt > 0 ? (double)bytes * (double)rounds / dt : 0;
    }
    return summarise(r, 3).median;
}

/* Seconds of CPU time of the clock `id` (the process or the calling thread). */
static double cpu_seconds(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

/* ---- output ---------------------------------------------------------------------------------- */

typedef struct bench_result {
    const char *name;
    int32_t agents, envs, threads, n_actions, excluded;
    size_t obs_size;
    uint64_t seed;
    stat3 env_rate, agent_rate, ns, obs_rate;
    stat3 cpu_env_rate, cpu_agent_rate; /* per CPU-second of the env steps alone */
    double policy_ns, loop_agent_rate, memset_same, memset_big, rss_mib;
    double policy_cpu_ns, loop_cpu_agent_rate, cpu_per_wall;
    int64_t autoresets; /* during the timed steps */
    /* over the timed steps: those run on the calling thread alone and handed off, the pool's
     * probes and those that found handing off faster */
    int64_t pool_serial, pool_parallel, probes, parallel_verdicts;
    /* --pixels: the observation's size, frames (agent-steps) per second of drawing them and
     * per CPU-second of it, and agent-steps per second of stepping and drawing together */
    int32_t pw, ph, pch;
    stat3 pix_rate, cpu_pix_rate, with_pix_rate;
} bench_result;

/* One row of rates; the spread is that of `of` (env and agent rates share theirs). */
static void print_row(const char *label, stat3 s, stat3 of)
{
    double spread = of.median > 0 ? (of.max - of.min) / of.median * 100 : 0;
    printf("%-18s %14.0f %14.0f %14.0f %7.1f%%\n", label, s.median, s.min, s.max, spread);
}

static void print_text(const bench_args *b, const bench_result *r)
{
    printf("bench %s: %d agent%s x %d env%s, %d thread%s, policy %s", r->name, r->agents,
           r->agents == 1 ? "" : "s", r->envs, r->envs == 1 ? "" : "s", r->threads,
           r->threads == 1 ? "" : "s", b->physical ? "physical" : "random");
    if (r->excluded) printf(" (%d of %d actions excluded)", r->excluded, r->n_actions);
    printf(", observations %s, seed %" PRIu64 "\n",
           b->no_obs    ? "off"
           : b->compact ? "on (compact)"
                        : "on",
           r->seed);
    printf("timed: %" PRId64 " repetition%s x %" PRId64 " steps after %" PRId64
           " warm-up steps; %" PRId64 " auto-reset%s\n",
           b->repeat, b->repeat == 1 ? "" : "s", b->steps, b->warmup, r->autoresets,
           r->autoresets == 1 ? "" : "s");
    printf("%-18s %14s %14s %14s %8s\n", "", "median", "min", "max", "spread");
    print_row("env steps/s", r->env_rate, r->agent_rate);
    print_row("agent-steps/s", r->agent_rate, r->agent_rate);
    print_row("env steps/CPU-s", r->cpu_env_rate, r->cpu_agent_rate);
    print_row("agent-steps/CPU-s", r->cpu_agent_rate, r->cpu_agent_rate);
    printf("%-18s %14.1f %14.1f %14.1f\n", "ns/agent-step", r->ns.median, r->ns.min, r->ns.max);
    size_t per_step = r->obs_size * (size_t)r->agents * (size_t)r->envs;
    printf("observations: %zu bytes/agent-step, %zu bytes/vec step", r->obs_size, per_step);
    if (b->no_obs)
        printf(", not written (--no-obs)\n");
    else
        printf(", written at %.2f GB/s (median)\n", r->obs_rate.median / 1e9);
    printf("memset: %.2f GB/s over %zu bytes (the observation buffer's size), %.2f GB/s over "
           "64 MiB\n",
           r->memset_same / 1e9, per_step, r->memset_big / 1e9);
    if (b->pixels)
        printf("pixels: %d x %d x %d bytes/agent (cells of %d px, downscale %d%s), drawn on the "
               "calling thread at %.0f frames/s (median; min %.0f, max %.0f), %.0f frames/CPU-s; "
               "stepping and drawing %.0f agent-steps/s\n",
               r->ph, r->pw, r->pch, b->popts.cell_px, b->popts.downscale,
               b->popts.grey ? ", grey" : "", r->pix_rate.median, r->pix_rate.min, r->pix_rate.max,
               r->cpu_pix_rate.median, r->with_pix_rate.median);
    printf("policy: %.1f ns/agent-step on the calling thread, not timed above; with it "
           "%.0f agent-steps/s\n",
           r->policy_ns, r->loop_agent_rate);
    printf("CPU time: %.2f CPU-s per wall second over the timed repetitions (every thread); "
           "the policy %.1f ns/agent-step; with it %.0f agent-steps/CPU-s\n",
           r->cpu_per_wall, r->policy_cpu_ns, r->loop_cpu_agent_rate);
    printf("peak memory: %.1f MiB (maximum resident set size)\n", r->rss_mib);
    if (r->threads > 1) {
        int64_t calls = r->pool_serial + r->pool_parallel;
        printf("pool: %" PRId64 " of %" PRId64 " timed steps handed off to the threads (%.1f%%), "
               "%" PRId64 " run on the calling thread alone; %" PRId64 " probe%s, %" PRId64
               " found handing off faster\n",
               r->pool_parallel, calls,
               calls ? 100.0 * (double)r->pool_parallel / (double)calls : 0, r->pool_serial,
               r->probes, r->probes == 1 ? "" : "s", r->parallel_verdicts);
    }
}

static bool add_stat(cJSON *o, const char *key, stat3 s)
{
    cJSON *j = cJSON_AddObjectToObject(o, key);
    return j && cJSON_AddNumberToObject(j, "median", s.median) &&
           cJSON_AddNumberToObject(j, "min", s.min) && cJSON_AddNumberToObject(j, "max", s.max);
}

/* "pixels": null, or the observation's shape and options and the rates of drawing it. */
static bool add_pixels(cJSON *o, const bench_args *b, const bench_result *r)
{
    if (!b->pixels) return cJSON_AddNullToObject(o, "pixels") != NULL;
    cJSON *p = cJSON_AddObjectToObject(o, "pixels");
    int shape[3] = {r->ph, r->pw, r->pch};
    cJSON *sh = cJSON_CreateIntArray(shape, 3);
    if (!p || !sh) {
        cJSON_Delete(sh);
        return false;
    }
    cJSON_AddItemToObject(p, "shape", sh);
    return cJSON_AddNumberToObject(p, "cell_px", b->popts.cell_px) &&
           cJSON_AddNumberToObject(p, "downscale", b->popts.downscale) &&
           cJSON_AddBoolToObject(p, "grey", b->popts.grey) &&
           add_stat(p, "frames_per_s", r->pix_rate) &&
           add_stat(p, "frames_per_cpu_s", r->cpu_pix_rate) &&
           add_stat(p, "agent_steps_per_s_with_pixels", r->with_pix_rate);
}

static bool print_json(const bench_args *b, const bench_result *r)
{
    cJSON *o = cJSON_CreateObject();
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, r->seed);
    size_t per_step = r->obs_size * (size_t)r->agents * (size_t)r->envs;
    bool ok =
        o && cJSON_AddStringToObject(o, "scenario", r->name) &&
        cJSON_AddStringToObject(o, "file", b->scenario) &&
        cJSON_AddNumberToObject(o, "agents", r->agents) &&
        cJSON_AddNumberToObject(o, "envs", r->envs) &&
        cJSON_AddNumberToObject(o, "threads", r->threads) &&
        cJSON_AddStringToObject(o, "policy", b->physical ? "physical" : "random") &&
        cJSON_AddNumberToObject(o, "actions", r->n_actions) &&
        cJSON_AddNumberToObject(o, "excluded_actions", r->excluded) &&
        cJSON_AddBoolToObject(o, "observations", !b->no_obs) &&
        cJSON_AddRawToObject(o, "seed", seed) &&
        cJSON_AddNumberToObject(o, "steps", (double)b->steps) &&
        cJSON_AddNumberToObject(o, "repeat", (double)b->repeat) &&
        cJSON_AddNumberToObject(o, "warmup", (double)b->warmup) &&
        cJSON_AddNumberToObject(o, "autoresets", (double)r->autoresets) &&
        cJSON_AddNumberToObject(o, "pool_serial_steps", (double)r->pool_serial) &&
        cJSON_AddNumberToObject(o, "pool_parallel_steps", (double)r->pool_parallel) &&
        cJSON_AddNumberToObject(o, "pool_probes", (double)r->probes) &&
        cJSON_AddNumberToObject(o, "pool_parallel_verdicts", (double)r->parallel_verdicts) &&
        add_stat(o, "env_steps_per_s", r->env_rate) &&
        add_stat(o, "agent_steps_per_s", r->agent_rate) &&
        add_stat(o, "ns_per_agent_step", r->ns) &&
        cJSON_AddNumberToObject(o, "obs_bytes_per_agent_step", (double)r->obs_size) &&
        cJSON_AddNumberToObject(o, "obs_bytes_per_step", (double)per_step) &&
        cJSON_AddBoolToObject(o, "compact", b->compact) &&
        (b->no_obs ? cJSON_AddNullToObject(o, "obs_write_bytes_per_s") != NULL
                   : add_stat(o, "obs_write_bytes_per_s", r->obs_rate)) &&
        cJSON_AddNumberToObject(o, "memset_same_bytes_per_s", r->memset_same) &&
        cJSON_AddNumberToObject(o, "memset_64mib_bytes_per_s", r->memset_big) &&
        cJSON_AddNumberToObject(o, "policy_ns_per_agent_step", r->policy_ns) &&
        cJSON_AddNumberToObject(o, "agent_steps_per_s_with_policy", r->loop_agent_rate) &&
        add_stat(o, "env_steps_per_cpu_s", r->cpu_env_rate) &&
        add_stat(o, "agent_steps_per_cpu_s", r->cpu_agent_rate) &&
        cJSON_AddNumberToObject(o, "policy_cpu_ns_per_agent_step", r->policy_cpu_ns) &&
        cJSON_AddNumberToObject(o, "agent_steps_per_cpu_s_with_policy", r->loop_cpu_agent_rate) &&
        cJSON_AddNumberToObject(o, "cpu_s_per_wall_s", r->cpu_per_wall) &&
        cJSON_AddNumberToObject(o, "peak_rss_mib", r->rss_mib) && add_pixels(o, b, r);
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    if (text) puts(text);
    cJSON_free(text);
    cJSON_Delete(o);
    return text != NULL;
}

/* ---- the command ---------------------------------------------------------------------------- */

static int vec_failure(polis_vec *vec)
{
    fprintf(stderr, "polis: %s\n", polis_vec_error(vec));
    return EXIT_ENV;
}

/* Every env's pixel observations of every agent, env k's at pix + k * need. */
static int draw_pixels(polis_vec *vec, const bench_args *b, uint8_t *pix, size_t need)
{
    for (int32_t k = 0; k < b->envs; k++) {
        polis_env *env = polis_vec_env(vec, k);
        if (polis_pixels_obs(env, POLIS_PIXELS_ALL_AGENTS, &b->popts, pix + (size_t)k * need,
                             need) != POLIS_OK) {
            fprintf(stderr, "polis: bench: --pixels: env %d: %s\n", (int)k, polis_env_error(env));
            return EXIT_ENV;
        }
    }
    return 0;
}

static int run_bench(const bench_args *b)
{
    bool oom = false;
    char *overrides = cli_overrides_text(b->overrides, &oom);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return EXIT_ENV;
    }
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = b->plugin_path;
    opts.log = b->json ? NULL : cli_log_stderr;
    opts.overrides = overrides;
    opts.no_observations = b->no_obs;
    opts.compact_observations = b->compact;
    polis_vec *vec = NULL;
    polis_error err;
    memset(&err, 0, sizeof err);
    polis_status cst = polis_vec_create_file(b->scenario, &opts, b->envs, b->threads, &vec, &err);
    cJSON_free(overrides);
    if (cst != POLIS_OK) {
        fprintf(stderr, "polis: %s\n", err.message[0] ? err.message : polis_status_str(err.status));
        return EXIT_ENV;
    }
    polis_env *env0 = polis_vec_env(vec, 0);
    const polis_io *io = polis_vec_io(vec);
    bench_result r;
    memset(&r, 0, sizeof r);
    r.name = polis_env_name(env0);
    r.agents = polis_vec_agents_per_env(vec);
    r.envs = b->envs;
    r.threads = b->threads;
    r.n_actions = io->n_actions;
    r.obs_size = io->obs_size;
    r.seed = b->has_seed ? b->seed : polis_env_default_seed(env0);

    int rc = 0;
    size_t pneed = 0;
    uint8_t *pix = NULL;
    if (b->pixels && polis_pixels_obs_size(env0, POLIS_PIXELS_ALL_AGENTS, &b->popts, &r.pw, &r.ph,
                                           &r.pch, &pneed) != POLIS_OK) {
        fprintf(stderr, "polis: bench: --pixels: %s\n", polis_env_error(env0));
        polis_vec_destroy(vec);
        return EXIT_ENV;
    }
    if (b->pixels && !(pix = malloc(pneed * (size_t)b->envs))) {
        fprintf(stderr, "polis: out of memory\n");
        polis_vec_destroy(vec);
        return EXIT_ENV;
    }
    uint8_t *allowed = malloc((size_t)io->n_actions);
    double *rates = malloc(sizeof(double) * (size_t)b->repeat * 9);
    int32_t *scratch_actions = malloc(sizeof(int32_t) * (size_t)io->n_agents);
    size_t obs_total = io->obs_size * (size_t)io->n_agents;
    uint8_t *scratch = malloc(obs_total > BIG_MEMSET_BYTES ? obs_total : BIG_MEMSET_BYTES);
    if (!allowed || !rates || !scratch_actions || !scratch) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    const char *exclude = b->exclude ? b->exclude : b->physical ? "@social" : NULL;
    if ((r.excluded = build_allowed(env0, exclude, b->exclude != NULL, allowed)) < 0) {
        rc = r.excluded == -2 ? EXIT_USAGE : EXIT_ENV;
        goto out;
    }

    polis_rng rng;
    polis_rng_seed(&rng, r.seed, BENCH_POLICY_STREAM);
    if (polis_vec_reset(vec, r.seed) != POLIS_OK) {
        rc = vec_failure(vec);
        goto out;
    }
    for (int64_t s = 0; s < b->warmup; s++) {
        choose(io, allowed, &rng, io->actions);
        if (polis_vec_step(vec) != POLIS_OK) {
            rc = vec_failure(vec);
            goto out;
        }
        if (b->pixels && (rc = draw_pixels(vec, b, pix, pneed))) goto out;
    }
    if (b->pixels && b->warmup == 0 && (rc = draw_pixels(vec, b, pix, pneed))) goto out;
    const uint8_t *autoreset = polis_vec_autoreset(vec);
    int64_t serial0, parallel0;
    int64_t probes0, verdicts0;
    polis__vec_pool_calls(vec, &serial0, &parallel0);
    polis__vec_pool_probes(vec, &probes0, &verdicts0);
    double *env_rate = rates, *agent_rate = rates + b->repeat, *ns = rates + 2 * b->repeat,
           *obs_rate = rates + 3 * b->repeat, *cpu_env_rate = rates + 4 * b->repeat,
           *cpu_agent_rate = rates + 5 * b->repeat, *pix_rate = rates + 6 * b->repeat,
           *cpu_pix_rate = rates + 7 * b->repeat, *with_pix_rate = rates + 8 * b->repeat;
    double policy_total = 0, step_total = 0, cpu_total = 0, policy_cpu_total = 0;
    double agent_steps = (double)b->steps * (double)b->envs * (double)r.agents;
    for (int64_t rep = 0; rep < b->repeat; rep++) {
        double stepping = 0, drawing = 0, drawing_cpu = 0, t_loop = cli_now();
        double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
        for (int64_t s = 0; s < b->steps; s++) {
            choose(io, allowed, &rng, io->actions);
            if (!b->pixels) {
                /* no clock read per step: the loop is timed whole, less the policy's time
                 * measured apart (below) */
                if (polis_vec_step(vec) != POLIS_OK) {
                    rc = vec_failure(vec);
                    goto out;
                }
                for (int32_t k = 0; k < b->envs; k++) r.autoresets += autoreset[k];
                continue;
            }
            /* with --pixels, two clock reads and two CPU-clock reads per vec step: small
             * beside drawing every agent's frame, which is timed apart */
            double t0 = cli_now();
            polis_status st = polis_vec_step(vec);
            stepping += cli_now() - t0;
            if (st != POLIS_OK) {
                rc = vec_failure(vec);
                goto out;
            }
            for (int32_t k = 0; k < b->envs; k++) r.autoresets += autoreset[k];
            double t1 = cli_now(), c1 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
            if ((rc = draw_pixels(vec, b, pix, pneed))) goto out;
            drawing_cpu += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c1;
            drawing += cli_now() - t1;
        }
        double cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
        double loop = cli_now() - t_loop;
        /* The policy's time and CPU time, measured apart (see the top of the file). */
        polis_rng again = rng;
        double pcpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID), pt0 = cli_now();
        for (int64_t s = 0; s < b->steps; s++) choose(io, allowed, &again, scratch_actions);
        double policy_wall = cli_now() - pt0;
        double policy_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - pcpu0;
        if (!b->pixels) stepping = loop - policy_wall;
        policy_total += loop - stepping - drawing;
        step_total += stepping;
        cpu_total += cpu - drawing_cpu;
        policy_cpu_total += policy_cpu;
        if (stepping <= 0) stepping = 1e-9;
        env_rate[rep] = (double)b->steps * (double)b->envs / stepping;
        agent_rate[rep] = agent_steps / stepping;
        ns[rep] = stepping * 1e9 / agent_steps;
        obs_rate[rep] = agent_rate[rep] * (double)io->obs_size;
        double env_cpu = cpu - policy_cpu - drawing_cpu;
        if (env_cpu < 1e-9) env_cpu = 1e-9;
        pix_rate[rep] = drawing > 0 ? agent_steps / drawing : 0;
        cpu_pix_rate[rep] = drawing_cpu > 0 ? agent_steps / drawing_cpu : 0;
        with_pix_rate[rep] = agent_steps / (stepping + drawing);
        cpu_env_rate[rep] = (double)b->steps * (double)b->envs / env_cpu;
        cpu_agent_rate[rep] = agent_steps / env_cpu;
    }
    polis__vec_pool_calls(vec, &r.pool_serial, &r.pool_parallel);
    r.pool_serial -= serial0;
    r.pool_parallel -= parallel0;
    polis__vec_pool_probes(vec, &r.probes, &r.parallel_verdicts);
    r.probes -= probes0;
    r.parallel_verdicts -= verdicts0;
    r.env_rate = summarise(env_rate, b->repeat);
    r.agent_rate = summarise(agent_rate, b->repeat);
    r.ns = summarise(ns, b->repeat);
    r.obs_rate = summarise(obs_rate, b->repeat);
    r.cpu_env_rate = summarise(cpu_env_rate, b->repeat);
    r.cpu_agent_rate = summarise(cpu_agent_rate, b->repeat);
    r.pix_rate = summarise(pix_rate, b->repeat);
    r.cpu_pix_rate = summarise(cpu_pix_rate, b->repeat);
    r.with_pix_rate = summarise(with_pix_rate, b->repeat);
    double all_agent_steps = agent_steps * (double)b->repeat;
    r.policy_ns = policy_total * 1e9 / all_agent_steps;
    r.loop_agent_rate = all_agent_steps / (policy_total + step_total);
    r.policy_cpu_ns = policy_cpu_total * 1e9 / all_agent_steps;
    r.loop_cpu_agent_rate = cpu_total > 0 ? all_agent_steps / cpu_total : 0;
    r.cpu_per_wall = policy_total + step_total > 0 ? cpu_total / (policy_total + step_total) : 0;
    /* with --pixels the loop's time and CPU time include the drawing: the two rates "with
     * the policy" stay those of stepping and choosing */
    /* Before the memsets touch the scratch buffer's pages. */
    r.rss_mib = peak_rss_mib();
    r.memset_same = memset_rate(scratch, obs_total);
    r.memset_big = memset_rate(scratch, BIG_MEMSET_BYTES);
    if (b->json) {
        if (!print_json(b, &r)) {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
        }
    } else {
        print_text(b, &r);
    }
    fflush(stdout);
out:
    free(allowed);
    free(rates);
    free(scratch_actions);
    free(scratch);
    free(pix);
    polis_vec_destroy(vec);
    return rc;
}

static int bench_main(cli_args *a)
{
    bench_args b = {
        .plugin_path = cli_text(a, CLI_OPT_PLUGIN_PATH),
        .overrides = &a->overrides,
        .steps = cli_num(a, CLI_OPT_STEPS),
        .repeat = cli_num(a, CLI_OPT_REPEAT),
        .warmup = cli_num(a, CLI_OPT_WARMUP),
        .envs = (int32_t)cli_num(a, CLI_OPT_ENVS),
        .threads = (int32_t)cli_num(a, CLI_OPT_THREADS),
        .physical =
            cli_has(a, CLI_OPT_POLICY) && strcmp(cli_text(a, CLI_OPT_POLICY), "physical") == 0,
        .exclude = cli_text(a, CLI_OPT_EXCLUDE_ACTIONS),
        .no_obs = cli_has(a, CLI_OPT_NO_OBS),
        .compact = cli_has(a, CLI_OPT_COMPACT),
        .pixels = cli_has(a, CLI_OPT_PIXELS),
        .has_seed = cli_has(a, CLI_OPT_SEED),
        .seed = a->v[CLI_OPT_SEED].u64,
        .json = cli_has(a, CLI_OPT_JSON),
    };
    if (b.pixels) cli_pixels_spec(cli_text(a, CLI_OPT_PIXELS), &b.popts);
    if (b.threads > b.envs)
        return cli_usage(a->name, "--threads %d is more than --envs %d (a thread steps whole envs)",
                         b.threads, b.envs);
    if (!(b.scenario = cli_scenario(a->name, a->pos[0]))) return EXIT_ENV;
    return run_bench(&b);
}

const cli_command CLI_CMD_BENCH = {
    .name = "bench",
    CLI_SCENARIO_AND(USES),
    .summary = "measure steps per second (vectorised envs, threads)",
    .about =
        "Measures how fast SCENARIO steps: M envs stepped together as one vectorised env\n"
        "(polis_vec) by T threads, each agent taking a random legal action from its mask. Prints\n"
        "env steps/s, agent-steps/s, the same per CPU-second of the process (the policy's CPU\n"
        "time, measured apart, subtracted), ns per agent-step, observation bytes per step and the\n"
        "rate they are written at (beside a plain memset of as many bytes), the policy's own cost\n"
        "and the peak memory. With --pixels it also draws every agent's pixel observation\n"
        "(polis_pixels_obs) after each step on the calling thread, timed apart, and prints its\n"
        "frames/s. Only the env steps are timed; warm-up steps are not; each\n"
        "repetition is timed alone and the median, minimum and maximum are shown. On a machine\n"
        "shared with other work, quote the rates per CPU-second.\n",
    .run = bench_main,
};
