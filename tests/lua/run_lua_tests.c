/*
 * tests/lua/run_lua_tests.c — runs one Lua test script and checks its inline expectations.
 * Built twice: run_lua_tests for the test suite (it also finds the kernel's test plugins)
 * and polis-lua-test, installed beside the CLI. docs/lua.md ("Testing a Lua game") is the
 * user's reference of the directives below.
 *
 * A test script is an ordinary polis script whose comments tell the runner what to do and
 * what must happen (Wren-style). Directives, each on a line of its own:
 *
 *   -- scenario: {...}        the scenario JSON (required). Unless it has "scripts", the
 *                             runner adds "scripts": [{"path": "<this file>"}]; paths are
 *                             relative to the script's directory.
 *   -- seed: N                reset seed of the first episode (default: the scenario's);
 *                             episode e uses seed + e
 *   -- episodes: N            episodes to run (default 1)
 *   -- steps: N               steps per episode at most (default: until done)
 *   -- actions T: a b ...     the actions (ids or names) of agents 0, 1, ... at the step
 *                             that makes tick T (1-based); unlisted steps use 0 (noop)
 *   -- dump: WHAT ...         after each reset and step, add lines for: obs (every field),
 *                             shared (every shared field), rewards, masks, done, illegal
 *   -- on-error: reset        after a failed reset or step, check that step is refused and
 *                             go on with the next episode (default: stop)
 *   -- plugins: test          search the test plugins directory for .so plugins
 *   -- determinism: A B       run with seed A twice and seed B once: the first two runs
 *                             must give the same lines, the third different ones
 *   -- timeout: S             fail (rather than hang) when the whole run takes more than S
 *                             seconds
 *   -- max-ms: N              add an error line for every create, reset or step that takes
 *                             more than N milliseconds
 *
 * Expectations, anywhere on a line (so they can follow the code that causes them):
 *
 *   -- expect: TEXT           the next output line is exactly TEXT
 *   -- expect error: TEXT     the next output line is an error containing TEXT
 *
 * Output lines are, in order: the scripts' log lines (polis.log, print; the "[<name>] "
 * prefix of this script is dropped), dump lines ("t3 rewards: 1 0.5"), and errors, written
 * as "<create|reset|step>: <status>: <polis_env_error text>". The run passes when the output
 * is exactly the expected lines, and the env allocator is balanced after destroy. With
 * POLIS_LUA_TEST_VERBOSE set in the environment the output is printed even on success.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "polis/polis.h"

#define MAX_AGENTS 64

typedef struct line {
    bool error;
    char *text;
} line;

typedef struct lines {
    line *v;
    int n, cap;
} lines;

typedef struct step_actions {
    long tick;
    int n;
    char tok[MAX_AGENTS][64];
} step_actions;

typedef struct spec {
    const char *path;
    char dir[4096];
    char file[512];
    char stem[512];
    char *scenario;
    bool has_seed;
    uint64_t seed;
    int episodes;
    long steps;
    step_actions *actions;
    int n_actions;
    bool dump_obs, dump_shared, dump_rewards, dump_masks, dump_done, dump_illegal;
    bool on_error_reset;
    bool test_plugins;
    bool determinism;
    uint64_t det_a, det_b;
    unsigned timeout;
    long max_ms;
    lines expect;
} spec;

static const char *g_prog = "run_lua_tests"; /* the program's name, for messages */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d) die("out of memory");
    memcpy(d, s, n);
    return d;
}

static void lines_push(lines *l, bool error, const char *text)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
        if (!l->v) die("out of memory");
    }
    l->v[l->n].error = error;
    l->v[l->n].text = xstrdup(text);
    l->n++;
}

static void lines_free(lines *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i].text);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void linef(lines *l, bool error, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lines_push(l, error, buf);
}

/* ---- parsing the script's directives ------------------------------------------------------ */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read %s", path);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char *after(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Puts the test script into the scenario unless it names its scripts itself. */
static char *with_script(const char *json, const char *file)
{
    if (strstr(json, "\"scripts\"")) return xstrdup(json);
    const char *brace = strchr(json, '{');
    if (!brace) die("scenario is not a JSON object: %s", json);
    const char *rest = brace + 1;
    while (isspace((unsigned char)*rest)) rest++;
    size_t n = strlen(json) + strlen(file) + 64;
    char *out = malloc(n);
    if (!out) die("out of memory");
    snprintf(out, n, "%.*s\"scripts\": [{\"path\": \"%s\"}]%s %s", (int)(brace - json + 1), json,
             file, *rest == '}' ? "" : ",", rest);
    return out;
}

static void parse_spec(spec *sp, const char *path)
{
    memset(sp, 0, sizeof *sp);
    sp->path = path;
    sp->episodes = 1;
    sp->steps = -1;
    snprintf(sp->dir, sizeof sp->dir, "%s", path);
    char *slash = strrchr(sp->dir, '/');
    if (slash) {
        *slash = '\0';
        snprintf(sp->file, sizeof sp->file, "%s", slash + 1);
    } else {
        snprintf(sp->dir, sizeof sp->dir, ".");
        snprintf(sp->file, sizeof sp->file, "%s", path);
    }
    snprintf(sp->stem, sizeof sp->stem, "%s", sp->file);
    char *dot = strrchr(sp->stem, '.');
    if (dot) *dot = '\0';

    char *text = read_all(path);
    for (char *ln = strtok(text, "\n"); ln; ln = strtok(NULL, "\n")) {
        char *exp = strstr(ln, "-- expect");
        if (exp) {
            const char *v;
            if ((v = after(exp, "-- expect error:")))
                lines_push(&sp->expect, true, trim((char *)v));
            else if ((v = after(exp, "-- expect:")))
                lines_push(&sp->expect, false, trim((char *)v));
            continue;
        }
        const char *v;
        if (!(v = after(ln, "-- "))) continue;
        const char *d;
        if ((d = after(v, "scenario:"))) {
            sp->scenario = with_script(d, sp->file);
        } else if ((d = after(v, "seed:"))) {
            sp->has_seed = true;
            sp->seed = strtoull(d, NULL, 10);
        } else if ((d = after(v, "episodes:"))) {
            sp->episodes = atoi(d);
        } else if ((d = after(v, "steps:"))) {
            sp->steps = atol(d);
        } else if ((d = after(v, "actions "))) {
            char *end;
            long tick = strtol(d, &end, 10);
            if (end == d || *end != ':') die("%s: bad actions line: %s", path, ln);
            sp->actions = realloc(sp->actions, sizeof *sp->actions * (size_t)(sp->n_actions + 1));
            if (!sp->actions) die("out of memory");
            step_actions *sa = &sp->actions[sp->n_actions++];
            memset(sa, 0, sizeof *sa);
            sa->tick = tick;
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", end + 1);
            for (char *save, *t = strtok_r(buf, " \t", &save); t && sa->n < MAX_AGENTS;
                 t = strtok_r(NULL, " \t", &save))
                snprintf(sa->tok[sa->n++], sizeof sa->tok[0], "%s", t);
        } else if ((d = after(v, "dump:"))) {
            sp->dump_obs |= strstr(d, "obs") != NULL;
            sp->dump_shared |= strstr(d, "shared") != NULL;
            sp->dump_rewards |= strstr(d, "rewards") != NULL;
            sp->dump_masks |= strstr(d, "masks") != NULL;
            sp->dump_done |= strstr(d, "done") != NULL;
            sp->dump_illegal |= strstr(d, "illegal") != NULL;
        } else if ((d = after(v, "on-error:"))) {
            sp->on_error_reset = strstr(d, "reset") != NULL;
        } else if ((d = after(v, "plugins:"))) {
            sp->test_plugins = strstr(d, "test") != NULL;
        } else if ((d = after(v, "timeout:"))) {
            sp->timeout = (unsigned)atoi(d);
        } else if ((d = after(v, "max-ms:"))) {
            sp->max_ms = atol(d);
        } else if ((d = after(v, "determinism:"))) {
            sp->determinism = true;
            if (sscanf(d, "%" SCNu64 " %" SCNu64, &sp->det_a, &sp->det_b) != 2)
                die("%s: determinism needs two seeds", path);
        }
    }
    free(text);
    if (!sp->scenario) die("%s: no '-- scenario: {...}' line", path);
}

/* ---- running ----------------------------------------------------------------------------- */

typedef struct run_ctx {
    lines *out;
    char prefix[520];
    long long live;
} run_ctx;

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    run_ctx *rc = ud;
    if (nsize == 0) {
        if (ptr) rc->live -= (long long)osize;
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) rc->live += (long long)nsize - (ptr ? (long long)osize : 0);
    return p;
}

static void capture_log(void *ud, const char *msg)
{
    run_ctx *rc = ud;
    const char *m = after(msg, rc->prefix);
    lines_push(rc->out, false, m ? m : msg);
}

/* Appends the n elements of dtype dt at p to buf (holding len bytes) as " v v ...". */
static size_t format_values(char *buf, size_t cap, size_t len, const uint8_t *p, polis_dtype dt,
                            size_t n)
{
    for (size_t i = 0; i < n && len < cap - 32; i++) {
        switch (dt) {
        case POLIS_DTYPE_U8: len += (size_t)sprintf(buf + len, " %u", p[i]); break;
        case POLIS_DTYPE_I8:
            len += (size_t)sprintf(buf + len, " %d", ((const int8_t *)p)[i]);
            break;
        case POLIS_DTYPE_I16: {
            int16_t v;
            memcpy(&v, p + 2 * i, 2);
            len += (size_t)sprintf(buf + len, " %d", v);
            break;
        }
        case POLIS_DTYPE_I32: {
            int32_t v;
            memcpy(&v, p + 4 * i, 4);
            len += (size_t)sprintf(buf + len, " %d", v);
            break;
        }
        case POLIS_DTYPE_F32: {
            float v;
            memcpy(&v, p + 4 * i, 4);
            len += (size_t)sprintf(buf + len, " %g", (double)v);
            break;
        }
        }
    }
    return len;
}

static void dump(const spec *sp, polis_env *env, lines *out)
{
    const polis_io *io = polis_env_io(env);
    long long t = (long long)polis_env_tick(env);
    char buf[8192];
    if (sp->dump_obs) {
        for (int32_t f = 0; f < polis_env_n_obs_fields(env); f++) {
            polis_obs_field of;
            polis_env_obs_field(env, f, &of);
            size_t n = of.nbytes / polis_dtype_size(of.dtype);
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *p = io->obs + (size_t)a * io->obs_size + of.offset;
                size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld obs %s a%d:", t, of.name, a);
                format_values(buf, sizeof buf, len, p, of.dtype, n);
                lines_push(out, false, buf);
            }
        }
    }
    if (sp->dump_shared) {
        const uint8_t *base = polis_env_shared_obs(env, NULL);
        for (int32_t f = 0; f < polis_env_n_shared_fields(env); f++) {
            polis_obs_field of;
            polis_env_shared_field(env, f, &of);
            size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld shared %s:", t, of.name);
            format_values(buf, sizeof buf, len, base + of.offset, of.dtype,
                          of.nbytes / polis_dtype_size(of.dtype));
            lines_push(out, false, buf);
        }
    }
    if (sp->dump_rewards) {
        size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld rewards:", t);
        for (int32_t a = 0; a < io->n_agents; a++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %g", (double)io->rewards[a]);
        lines_push(out, false, buf);
    }
    if (sp->dump_masks) {
        for (int32_t a = 0; a < io->n_agents; a++) {
            size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld masks a%d:", t, a);
            for (int32_t k = 0; k < io->n_actions; k++)
                len += (size_t)snprintf(buf + len, sizeof buf - len, " %u",
                                        io->masks[(size_t)a * (size_t)io->n_actions + (size_t)k]);
            lines_push(out, false, buf);
        }
    }
    if (sp->dump_done) {
        size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld done: term", t);
        for (int32_t a = 0; a < io->n_agents; a++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %u", io->terminations[a]);
        len += (size_t)snprintf(buf + len, sizeof buf - len, " trunc");
        for (int32_t a = 0; a < io->n_agents; a++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %u", io->truncations[a]);
        lines_push(out, false, buf);
    }
    if (sp->dump_illegal) {
        size_t len = (size_t)snprintf(buf, sizeof buf, "t%lld illegal:", t);
        for (int32_t a = 0; a < io->n_agents; a++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %u", io->illegal[a]);
        lines_push(out, false, buf);
    }
}

static bool set_actions(const spec *sp, polis_env *env, long tick, lines *out)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = 0;
    for (int i = 0; i < sp->n_actions; i++) {
        const step_actions *sa = &sp->actions[i];
        if (sa->tick != tick) continue;
        for (int a = 0; a < sa->n && a < io->n_agents; a++) {
            char *end;
            long id = strtol(sa->tok[a], &end, 10);
            if (*end) id = polis_env_action_id(env, sa->tok[a]);
            if (id < 0) {
                linef(out, true, "runner: unknown action '%s' at tick %ld", sa->tok[a], tick);
                return false;
            }
            io->actions[a] = (int32_t)id;
        }
    }
    return true;
}

static void record_error(lines *out, const char *what, polis_status st, const char *msg)
{
    linef(out, true, "%s: %s: %s", what, polis_status_str(st), msg);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* With max-ms: an error line when the call that started at t0 took too long. */
static void check_time(const spec *sp, lines *out, const char *what, double t0)
{
    double ms = now_ms() - t0;
    if (sp->max_ms > 0 && ms > (double)sp->max_ms)
        linef(out, true, "runner: %s took %.0f ms, more than %ld", what, ms, sp->max_ms);
}

/* Runs the scenario once; every output line goes to `out`. */
static void run_once(const spec *sp, bool use_seed, uint64_t seed, lines *out)
{
    run_ctx rc = {.out = out};
    snprintf(rc.prefix, sizeof rc.prefix, "[%s] ", sp->stem);
    polis_options opts = {0};
    opts.struct_size = sizeof opts;
    opts.alloc = count_alloc;
    opts.alloc_ud = &rc;
    opts.base_dir = sp->dir;
    opts.log = capture_log;
    opts.log_ud = &rc;
#ifdef POLIS_TEST_PLUGIN_DIR
    if (sp->test_plugins) opts.plugin_path = POLIS_TEST_PLUGIN_DIR;
#endif
    polis_env *env = NULL;
    polis_error err;
    double t0 = now_ms();
    polis_status st = polis_env_create_json(sp->scenario, strlen(sp->scenario), &opts, &env, &err);
    check_time(sp, out, "create", t0);
    if (st != POLIS_OK) {
        record_error(out, "create", st, err.message);
    } else {
        uint64_t base = use_seed ? seed : polis_env_default_seed(env);
        for (int ep = 0; ep < sp->episodes; ep++) {
            t0 = now_ms();
            st = polis_env_reset(env, base + (uint64_t)ep);
            check_time(sp, out, "reset", t0);
            if (st != POLIS_OK) {
                record_error(out, "reset", st, polis_env_error(env));
                if (sp->on_error_reset) continue;
                break;
            }
            dump(sp, env, out);
            bool failed = false;
            for (long t = 1; (sp->steps < 0 || t <= sp->steps) && !polis_env_done(env); t++) {
                if (!set_actions(sp, env, t, out)) {
                    failed = true;
                    break;
                }
                t0 = now_ms();
                st = polis_env_step(env);
                check_time(sp, out, "step", t0);
                if (st != POLIS_OK) {
                    record_error(out, "step", st, polis_env_error(env));
                    polis_status again = polis_env_step(env);
                    if (again != POLIS_ERR_STATE)
                        linef(out, true,
                              "runner: a step after a failed step returned %s, "
                              "expected %s",
                              polis_status_str(again), polis_status_str(POLIS_ERR_STATE));
                    failed = true;
                    break;
                }
                dump(sp, env, out);
            }
            if (failed && !sp->on_error_reset) break;
        }
        polis_env_destroy(env);
    }
    if (rc.live != 0) linef(out, true, "runner: %lld bytes still allocated after destroy", rc.live);
}

static bool same_lines(const lines *a, const lines *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
        if (a->v[i].error != b->v[i].error || strcmp(a->v[i].text, b->v[i].text) != 0) return false;
    return true;
}

static void print_lines(const char *title, const lines *l)
{
    fprintf(stderr, "%s (%d lines):\n", title, l->n);
    for (int i = 0; i < l->n; i++)
        fprintf(stderr, "  %3d %s%s\n", i + 1, l->v[i].error ? "error: " : "", l->v[i].text);
}

static bool check_expect(const spec *sp, const lines *got)
{
    int n = got->n > sp->expect.n ? got->n : sp->expect.n;
    for (int i = 0; i < n; i++) {
        const line *e = i < sp->expect.n ? &sp->expect.v[i] : NULL;
        const line *g = i < got->n ? &got->v[i] : NULL;
        bool ok = e && g && e->error == g->error &&
                  (e->error ? strstr(g->text, e->text) != NULL : strcmp(e->text, g->text) == 0);
        if (!ok) {
            fprintf(stderr, "%s: output line %d differs\n  expected: %s%s\n  got:      %s%s\n",
                    sp->path, i + 1, e && e->error ? "error containing " : "",
                    e ? e->text : "(nothing)", g && g->error ? "error: " : "",
                    g ? g->text : "(nothing)");
            print_lines("output", got);
            return false;
        }
    }
    return true;
}

static const char *g_path;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = ": FAILED: the run did not end within its timeout\n";
    if (write(2, g_path, strlen(g_path)) < 0 || write(2, msg, sizeof msg - 1) < 0) _exit(1);
    _exit(1);
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0][0])
        g_prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc != 2) die("usage: %s SCRIPT.lua (docs/lua.md, \"Testing a Lua game\")", g_prog);
    spec sp;
    parse_spec(&sp, argv[1]);
    if (sp.timeout) {
        g_path = argv[1];
        signal(SIGALRM, on_alarm);
        alarm(sp.timeout);
    }
    bool ok = true;
    lines first = {0};
    if (sp.determinism) {
        lines again = {0}, other = {0};
        run_once(&sp, true, sp.det_a, &first);
        run_once(&sp, true, sp.det_a, &again);
        run_once(&sp, true, sp.det_b, &other);
        if (!same_lines(&first, &again)) {
            fprintf(stderr, "%s: two runs with seed %" PRIu64 " differ\n", sp.path, sp.det_a);
            print_lines("first run", &first);
            print_lines("second run", &again);
            ok = false;
        }
        if (same_lines(&first, &other)) {
            fprintf(stderr, "%s: seeds %" PRIu64 " and %" PRIu64 " give the same output\n", sp.path,
                    sp.det_a, sp.det_b);
            print_lines("output", &first);
            ok = false;
        }
        for (int i = 0; i < first.n; i++) {
            if (first.v[i].error) {
                fprintf(stderr, "%s: the determinism run failed: %s\n", sp.path, first.v[i].text);
                ok = false;
            }
        }
        lines_free(&again);
        lines_free(&other);
        if (sp.expect.n && !check_expect(&sp, &first)) ok = false;
    } else {
        run_once(&sp, sp.has_seed, sp.seed, &first);
        if (!check_expect(&sp, &first)) ok = false;
    }
    if (getenv("POLIS_LUA_TEST_VERBOSE")) print_lines("output", &first);
    lines_free(&first);
    lines_free(&sp.expect);
    free(sp.scenario);
    free(sp.actions);
    fprintf(stderr, "%s: %s\n", argv[1], ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
