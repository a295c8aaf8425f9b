/* Observation ranges (plugin ABI 1.4) and compact observations:
 *   - every shipped scenario declares a range for every observation field, and its
 *     observations stay inside them over seeded random episodes (three seeds each);
 *   - the same episodes with compact observations give the same values, element for
 *     element, in the narrower dtypes, and the step allocates nothing;
 *   - a range a writer breaks is found by the checker here and, with compact observations,
 *     fails the step naming the field, agent, tick and value;
 *   - bad declarations (Lua "range" key) are refused with a message naming the field;
 *   - describe and polis_env_obs_field_range report what was declared. */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "testutil.h"

#define STEPS 120
#define SEEDS 3

static double elem(const uint8_t *p, polis_dtype t, size_t i)
{
    switch (t) {
    case POLIS_DTYPE_U8: return p[i];
    case POLIS_DTYPE_I8: return ((const int8_t *)p)[i];
    case POLIS_DTYPE_I16: {
        int16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case POLIS_DTYPE_I32: {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case POLIS_DTYPE_F32: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    }
    return NAN;
}

/* The range index of element i of field f (declared per index of dim, or one range). */
static int32_t range_index(const polis_obs_field *f, int32_t dim, size_t i)
{
    if (dim < 0) return 0;
    size_t stride = 1;
    for (int32_t d = dim + 1; d < f->ndim; d++) stride *= (size_t)f->shape[d];
    return (int32_t)((i / stride) % (size_t)f->shape[dim]);
}

/* Checks every element of every field with a range; returns the number of elements outside
 * theirs (the first one described in msg). `need_all`: a field without a range counts too. */
static long check_ranges(polis_env *env, bool need_all, char *msg, size_t cap)
{
    const polis_io *io = polis_env_io(env);
    long bad = 0;
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++) {
        polis_obs_field f;
        int32_t dim, n;
        const double *lo, *hi;
        if (polis_env_obs_field(env, i, &f) != POLIS_OK ||
            polis_env_obs_field_range(env, i, &dim, &n, &lo, &hi) != POLIS_OK)
            return -1;
        if (n == 0) {
            if (need_all && bad++ == 0) snprintf(msg, cap, "field %s has no range", f.name);
            continue;
        }
        size_t count = f.nbytes / polis_dtype_size(f.dtype);
        for (int32_t a = 0; a < io->n_agents; a++) {
            const uint8_t *rec = io->obs + (size_t)a * io->obs_size + f.offset;
            for (size_t e = 0; e < count; e++) {
                double v = elem(rec, f.dtype, e);
                int32_t k = range_index(&f, dim, e);
                if (v >= lo[k] && v <= hi[k]) continue;
                if (bad++ == 0)
                    snprintf(msg, cap,
                             "field %s, agent %d, element %zu = %g outside [%g, %g] "
                             "(tick %lld)",
                             f.name, (int)a, e, v, lo[k], hi[k], (long long)polis_env_tick(env));
            }
        }
    }
    return bad;
}

/* Element-for-element equality of two envs' observations (any dtypes). */
static bool same_values(polis_env *a, polis_env *b, char *msg, size_t cap)
{
    const polis_io *ia = polis_env_io(a), *ib = polis_env_io(b);
    for (int32_t i = 0; i < polis_env_n_obs_fields(a); i++) {
        polis_obs_field fa, fb;
        polis_env_obs_field(a, i, &fa);
        polis_env_obs_field(b, i, &fb);
        size_t count = fa.nbytes / polis_dtype_size(fa.dtype);
        if (count != fb.nbytes / polis_dtype_size(fb.dtype)) {
            snprintf(msg, cap, "field %s: %zu vs %zu elements", fa.name, count,
                     fb.nbytes / polis_dtype_size(fb.dtype));
            return false;
        }
        for (int32_t ag = 0; ag < ia->n_agents; ag++) {
            const uint8_t *ra = ia->obs + (size_t)ag * ia->obs_size + fa.offset;
            const uint8_t *rb = ib->obs + (size_t)ag * ib->obs_size + fb.offset;
            for (size_t e = 0; e < count; e++)
                if (elem(ra, fa.dtype, e) != elem(rb, fb.dtype, e)) {
                    snprintf(msg, cap, "field %s agent %d element %zu: %g vs %g (compact)", fa.name,
                             (int)ag, e, elem(ra, fa.dtype, e), elem(rb, fb.dtype, e));
                    return false;
                }
        }
    }
    return true;
}

static polis_env *open_env(const char *path, bool compact, test_alloc *alloc)
{
    polis_options o = test_options(NULL, alloc);
    o.compact_observations = compact;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return NULL;
    }
    return env;
}

/* Whether a scenario file names a Lua script (scripts allocate as they run). */
static bool uses_lua(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return true;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strstr(text, ".lua") != NULL;
}

/* Seeded random episodes of one scenario, plain and compact in lockstep. */
static void scenario_episodes(const char *path)
{
    test_alloc alloc = {0};
    polis_env *env = open_env(path, false, NULL), *cenv = open_env(path, true, &alloc);
    CHECK(env != NULL);
    CHECK(cenv != NULL);
    if (!env || !cenv) {
        polis_env_destroy(env);
        polis_env_destroy(cenv);
        return;
    }
    char msg[512] = "";
    long bad = 0;
    bool same = true, ok = true;
    int32_t random = polis_env_policy_find(env, "random");
    const polis_io *io = polis_env_io(env), *cio = polis_env_io(cenv);
    CHECK(cio->obs_size <= io->obs_size);
    long step_allocs = 0, steps = 0;
    for (uint64_t seed = 1; seed <= SEEDS && ok; seed++) {
        ok = polis_env_reset(env, seed) == POLIS_OK && polis_env_reset(cenv, seed) == POLIS_OK;
        for (int t = 0; ok; t++) {
            if (!bad) bad = check_ranges(env, true, msg, sizeof msg);
            if (same) same = same_values(env, cenv, msg + strlen(msg), sizeof msg - strlen(msg));
            if (t == STEPS || polis_env_done(env)) break;
            memset(io->actions, 0, sizeof *io->actions * (size_t)io->n_agents);
            ok = polis_env_policy_act(env, random, NULL, 0) == POLIS_OK;
            memcpy(cio->actions, io->actions, sizeof *io->actions * (size_t)io->n_agents);
            ok = ok && polis_env_step(env) == POLIS_OK;
            long before = alloc.calls;
            if (ok && polis_env_step(cenv) != POLIS_OK) {
                fprintf(stderr, "%s: compact step: %s\n", path, polis_env_error(cenv));
                ok = false;
            }
            if (seed > 1 || t >= 2) step_allocs += alloc.calls - before;
            steps += seed == 1 && t >= 2;
        }
    }
    if (!ok) fprintf(stderr, "%s: %s | %s\n", path, polis_env_error(env), polis_env_error(cenv));
    if (bad) fprintf(stderr, "%s: %ld elements outside their ranges; first: %s\n", path, bad, msg);
    if (!same) fprintf(stderr, "%s: %s\n", path, msg);
    CHECK(ok);
    CHECK_EQ_INT(bad, 0);
    CHECK(same);
    /* the compact step (writers into the shadow, narrowing) allocates nothing; Lua scripts
     * allocate from the env allocator as they run, so only C-only scenarios are counted.
     * Only the steps are counted: a reset of a scenario with "vary" rebuilds the env. */
    if (steps > 0 && !uses_lua(path)) CHECK_EQ_INT(step_allocs, 0);
    polis_env_destroy(env);
    polis_env_destroy(cenv);
}

static int scenarios_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    char paths[64][512];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
            snprintf(paths[n++], sizeof paths[0], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        printf("  %s\n", paths[i]);
        fflush(stdout);
        scenario_episodes(paths[i]);
    }
    return n;
}

static void test_shipped_scenarios(void)
{
    static const char *const DIRS[] = {
        "rulesets/commons",  "rulesets/contract",    "rulesets/exploration",
        "rulesets/gather",   "rulesets/negotiation", "rulesets/social_structure",
        "rulesets/survival", "plugins/social",       "examples/lua_game"};
    int total = 0;
    for (size_t i = 0; i < sizeof DIRS / sizeof *DIRS; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s", POLIS_SOURCE_DIR, DIRS[i]);
        int n = scenarios_in(dir);
        CHECK(n > 0);
        total += n;
    }
    CHECK(total >= 30);
}

/* ---- a writer that breaks its range, and bad declarations ------------------------------- */

static const char *lua_scenario(const char *script_body, char *buf, size_t cap)
{
    (void)script_body;
    snprintf(buf, cap,
             "{\"polis\": 1, \"agents\": 2, \"max_steps\": 10, \"scripts\": "
             "[{\"path\": \"ranged.lua\"}]}");
    return buf;
}

static polis_env *lua_env(const char *script, bool compact, char *err_out, size_t cap)
{
    char dir[] = "/tmp/polis_obs_range_XXXXXX";
    if (!mkdtemp(dir)) return NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/ranged.lua", dir);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(script, f);
    fclose(f);
    char json[512];
    lua_scenario(script, json, sizeof json);
    polis_options o = test_options(NULL, NULL);
    o.base_dir = dir;
    o.compact_observations = compact;
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
    if (st != POLIS_OK) snprintf(err_out, cap, "%s", err.message);
    remove(path);
    rmdir(dir);
    return env;
}

/* writes tick * 3 into element 2 of agent 1: 0, 3, 6 — the declared [0, 4] breaks at tick 2 */
#define BREAKER                                                                                    \
    "polis.observation{name = 'x', dtype = 'i32', shape = {2, 3},\n"                               \
    "  range = {dim = 2, lo = {0, 0, 0}, hi = {9, 9, 4}},\n"                                       \
    "  write = function(a, buf)\n"                                                                 \
    "    for i = 1, 6 do buf[i] = 0 end\n"                                                         \
    "    if a == 1 then buf[6] = polis.tick() * 3 end\n"                                           \
    "  end}\n"

static void test_broken_range(void)
{
    char err[1024] = "", msg[512] = "";
    polis_env *env = lua_env(BREAKER, false, err, sizeof err);
    CHECK(env != NULL);
    if (!env) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(check_ranges(env, true, msg, sizeof msg), 0);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(check_ranges(env, true, msg, sizeof msg), 0); /* 3 <= 4 */
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(check_ranges(env, true, msg, sizeof msg), 1); /* 6 > 4: the checker sees it */
    CHECK(strstr(msg, "field x, agent 1, element 5 = 6 outside [0, 4]") != NULL);
    polis_env_destroy(env);

    /* compact: x fits u8 ([0, 9]); the kernel narrows and refuses the 6 at tick 2 */
    env = lua_env(BREAKER, true, err, sizeof err);
    CHECK(env != NULL);
    if (!env) return;
    polis_obs_field f;
    CHECK_EQ_INT(polis_env_obs_field(env, 0, &f), POLIS_OK);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_U8);
    CHECK_EQ_INT(f.nbytes, 6);
    CHECK_EQ_INT(polis_env_obs_field_written_dtype(env, 0), POLIS_DTYPE_I32);
    CHECK_EQ_INT(polis_env_io(env)->obs_size, 8);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_io(env)->obs[(size_t)polis_env_io(env)->obs_size + 5], 3);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env),
                   "observation x, agent 1 (agent_1), element 5 = 6 is outside its declared "
                   "range [0, 4]");
    CHECK_CONTAINS(polis_env_error(env), "tick 2]");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE); /* needs a reset, as after any failure */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_env_destroy(env);
}

/* The narrowing runs element by element through runs of equal ranges (the first two
 * channels share one, so they are narrowed as one run of 80, the third alone: 40, not a
 * multiple of the 16-element blocks): every element of both agents' compact records equals
 * what the writer wrote, and the first element outside its channel's range fails the step
 * with its index, value and range. `bad` = {tick, agent, 0-based element, value}. */
#define RUNS_SCRIPT                                                                                \
    "polis.observation{name = 'g', dtype = 'i16', shape = {3, 40},\n"                              \
    "  range = {dim = 1, lo = {-5, -5, 0}, hi = {9, 9, 99}},\n"                                    \
    "  write = function(a, buf)\n"                                                                 \
    "    local t = polis.tick()\n"                                                                 \
    "    for i = 1, 120 do\n"                                                                      \
    "      buf[i] = i <= 80 and (i + t + a) %% 15 - 5 or (i * 7 + t + a) %% 100\n"                 \
    "    end\n"                                                                                    \
    "    if t == %d and a == %d then buf[%d + 1] = %d end\n"                                       \
    "  end}\n"

static int32_t runs_value(int32_t a, int64_t t, int32_t i)
{
    int32_t k = i + 1;
    return k <= 80 ? (int32_t)((k + t + a) % 15) - 5 : (int32_t)((k * 7 + t + a) % 100);
}

static void narrow_runs_case(int32_t elem_bad, int32_t value, const char *want)
{
    char script[1024], err[1024] = "";
    snprintf(script, sizeof script, RUNS_SCRIPT, 4, 1, elem_bad, value);
    polis_env *env = lua_env(script, true, err, sizeof err);
    CHECK(env != NULL);
    if (!env) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    polis_obs_field f;
    CHECK_EQ_INT(polis_env_obs_field(env, 0, &f), POLIS_OK);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I8);
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    int wrong = 0;
    for (int64_t t = 0; t <= 3; t++) {
        if (t > 0) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        for (int32_t a = 0; a < 2; a++)
            for (int32_t i = 0; i < 120; i++)
                wrong += ((const int8_t *)(io->obs + (size_t)a * io->obs_size + f.offset))[i] !=
                         runs_value(a, t, i);
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), want);
    CHECK_CONTAINS(polis_env_error(env), "tick 4]");
    polis_env_destroy(env);
}

static void test_narrow_runs(void)
{
    /* in the merged run of channels 0 and 1, in its second channel */
    narrow_runs_case(45, 10,
                     "observation g, agent 1 (agent_1), element 45 = 10 is outside its declared "
                     "range [-5, 9] (per index of a dimension)");
    narrow_runs_case(0, -6, "element 0 = -6 is outside its declared range [-5, 9]");
    /* channel 2, in the elements past the last whole block */
    narrow_runs_case(117, -1, "element 117 = -1 is outside its declared range [0, 99]");
    narrow_runs_case(80, 100, "element 80 = 100 is outside its declared range [0, 99]");
}

static void expect_refused(const char *range, const char *dtype, const char *want)
{
    char script[1024], err[1024] = "";
    snprintf(script, sizeof script,
             "polis.observation{name = 'y', dtype = '%s', shape = {2, 3}, range = %s,\n"
             "  write = function(a, buf) end}\n",
             dtype, range);
    polis_env *env = lua_env(script, false, err, sizeof err);
    CHECK(env == NULL);
    polis_env_destroy(env);
    if (!strstr(err, want)) fprintf(stderr, "range %s: got \"%s\"\n", range, err);
    CHECK(strstr(err, want) != NULL);
}

static void test_bad_declarations(void)
{
    expect_refused("{3, 1}", "i32", "observation y: range[0] = [3, 1]: lo is above hi");
    expect_refused("{0, 300}", "u8", "range[0] = [0, 300]: outside the dtype's range (dtype u8)");
    expect_refused("{0, 1.5}", "i16", "an integer dtype needs integer bounds");
    expect_refused("{0, 1/0}", "f32", "bounds must be finite");
    expect_refused("{dim = 3, lo = {0}, hi = {1}}", "i32",
                   "range.dim must be an integer in [1, 2]");
    expect_refused("{dim = 1, lo = {0, 0, 0}, hi = {1, 1, 1}}", "i32",
                   "range.lo must be a table of 2 numbers (one per index of dim 1)");
    expect_refused("{dim = 2, lo = {0, 0, 0}, hi = {1, 'a', 1}}", "i32",
                   "range.hi[2] must be a number");
    expect_refused("7", "i32", "range must be {lo, hi} or {dim = d, lo = {...}, hi = {...}}");
    expect_refused("{0}", "i32", "range[2] (hi) must be a number");
}

/* A range on an f32 field and one declared per row: reported, f32 never narrowed. */
static void test_report(void)
{
    char err[1024] = "";
    polis_env *env = lua_env("polis.observation{name = 'f', dtype = 'f32', shape = {3},\n"
                             "  range = {-0.5, 2}, write = function(a, buf) end}\n"
                             "polis.observation{name = 'g', dtype = 'i16', shape = {2, 2},\n"
                             "  range = {dim = 1, lo = {-1, 0}, hi = {1, 300}},\n"
                             "  write = function(a, buf) end}\n"
                             "polis.observation{name = 'h', dtype = 'i32', shape = {1},\n"
                             "  write = function(a, buf) end}\n",
                             true, err, sizeof err);
    CHECK(env != NULL);
    if (!env) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    int32_t dim, n;
    const double *lo, *hi;
    polis_obs_field f;
    CHECK_EQ_INT(polis_env_obs_field_range(env, 0, &dim, &n, &lo, &hi), POLIS_OK);
    CHECK_EQ_INT(dim, -1);
    CHECK_EQ_INT(n, 1);
    CHECK(lo[0] == -0.5 && hi[0] == 2);
    polis_env_obs_field(env, 0, &f);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_F32);
    CHECK_EQ_INT(polis_env_obs_field_range(env, 1, &dim, &n, &lo, &hi), POLIS_OK);
    CHECK_EQ_INT(dim, 0);
    CHECK_EQ_INT(n, 2);
    CHECK(lo[0] == -1 && hi[1] == 300);
    polis_env_obs_field(env, 1, &f);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I16); /* [-1, 300] fits neither u8 nor i8 */
    CHECK_EQ_INT(polis_env_obs_field_range(env, 2, &dim, &n, &lo, &hi), POLIS_OK);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(dim, -1);
    CHECK(lo == NULL && hi == NULL);
    polis_env_obs_field(env, 2, &f);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I32); /* no range: never narrowed */
    CHECK_EQ_INT(polis_env_obs_field_range(env, 3, &dim, &n, &lo, &hi), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_obs_field_range(env, 0, NULL, &n, &lo, &hi), POLIS_ERR_INVALID);
    CHECK_EQ_INT((int)polis_env_obs_field_written_dtype(env, 3), -1);
    char *d = polis_env_describe_json(env);
    CHECK(d != NULL);
    if (d) { /* compared without whitespace */
        size_t w = 0;
        for (size_t r = 0; d[r]; r++)
            if (d[r] != ' ' && d[r] != '\t' && d[r] != '\n') d[w++] = d[r];
        d[w] = '\0';
        CHECK_CONTAINS(d, "\"compact\":true");
        CHECK_CONTAINS(d, "\"range\":{\"dim\":-1,\"lo\":[-0.5],\"hi\":[2]}");
        CHECK_CONTAINS(d, "\"range\":{\"dim\":0,\"lo\":[-1,0],\"hi\":[1,300]}");
    }
    polis_free(d);
    polis_env_destroy(env);
}

/* The scenario key turns compact observations on like the option; a non-boolean is refused. */
static void test_scenario_key(void)
{
    static const char *const base = POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json";
    polis_options o = test_options(NULL, NULL);
    o.overrides = "{\"compact_observations\": true}";
    polis_env *env = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_env_create_file(base, &o, &env, &err), POLIS_OK);
    if (env) {
        polis_obs_field f;
        polis_env_obs_field(env, 1, &f); /* position: i32 in [0, 15] */
        CHECK_EQ_STR(f.name, "position");
        CHECK_EQ_INT(f.dtype, POLIS_DTYPE_U8);
        polis_env_destroy(env);
        env = NULL;
    }
    /* a disabled (or replaced) writer's field loses its range: the zeros or the new writer's
     * values were never promised; compact observations leave it as it is */
    o.overrides = "{\"compact_observations\": true, \"replace\": [{\"kind\": \"observation\", "
                  "\"name\": \"position\", \"disable\": true}]}";
    CHECK_EQ_INT(polis_env_create_file(base, &o, &env, &err), POLIS_OK);
    if (env) {
        polis_obs_field f;
        int32_t dim, n;
        const double *lo, *hi;
        polis_env_obs_field(env, 1, &f);
        CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I32);
        CHECK_EQ_INT(polis_env_obs_field_range(env, 1, &dim, &n, &lo, &hi), POLIS_OK);
        CHECK_EQ_INT(n, 0);
        CHECK_EQ_INT(polis_env_obs_field_range(env, 0, &dim, &n, &lo, &hi), POLIS_OK);
        CHECK_EQ_INT(n, 2); /* view keeps its own */
        CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        polis_env_destroy(env);
        env = NULL;
    }
    o.overrides = "{\"compact_observations\": 1}";
    CHECK_EQ_INT(polis_env_create_file(base, &o, &env, &err), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(err.message, "compact_observations");
    CHECK(env == NULL);
}

/* ---- a C plugin's declarations ------------------------------------------------------------ */

static polis_env *probe_env(const char *mode, int value, bool compact, const char *before,
                            polis_error *err)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"polis\": 1, \"agents\": 2, \"max_steps\": 20, \"grid\": {\"width\": 6, "
             "\"height\": 6}, \"plugins\": [%s{\"name\": \"range_probe\", \"params\": "
             "{\"mode\": \"%s\", \"value\": %d}}]}",
             before, mode, value);
    polis_options o = test_options(NULL, NULL);
    o.compact_observations = compact;
    polis_env *env = NULL;
    memset(err, 0, sizeof *err);
    polis_env_create_json(json, strlen(json), &o, &env, err);
    return env;
}

static void probe_refused(const char *mode, const char *before, const char *want)
{
    polis_error err;
    polis_env *env = probe_env(mode, 0, false, before, &err);
    if (!strcmp(mode, "late")) { /* registration closes at create: the reset hook fails */
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_ERR_STATE);
        CHECK_CONTAINS(polis_env_error(env), want);
        polis_env_destroy(env);
        return;
    }
    CHECK(env == NULL);
    polis_env_destroy(env);
    CHECK_EQ_INT(err.status, POLIS_ERR_PLUGIN);
    CHECK_CONTAINS(err.message, want);
}

static void test_c_plugin(void)
{
    probe_refused("twice", "", "range_probe: observation r: range declared twice");
    probe_refused("foreign", "\"walker\", ",
                  "range_probe: obs_range: field 0 is not an observation field this plugin "
                  "registered");
    probe_refused("badid", "", "obs_range: field 99 is not an observation field");
    probe_refused("badn", "",
                  "observation r: a range per index of dim 1 has n = shape[1] = 3, got 2");
    probe_refused("baddim", "", "observation r: range dim 2 is outside [-1, 2)");
    probe_refused("nulls", "", "observation r: range bounds are NULL");
    probe_refused("late", "",
                  "obs_range: registration is closed once the env is created (register in init "
                  "or start)");

    /* value 35: the elements are 35 + tick, past 40 at tick 6 */
    polis_error err;
    polis_env *env = probe_env("ok", 35, true, "", &err);
    CHECK(env != NULL);
    if (!env) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    polis_obs_field f;
    polis_env_obs_field(env, 0, &f);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_U8);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    for (int t = 1; t <= 5; t++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_io(env)->obs[5], 40);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_PLUGIN);
    CHECK_EQ_STR(polis_env_error(env),
                 "range_probe: observation r, agent 0 (agent_0), element 0 = 41 is outside its "
                 "declared range [0, 40] (per index of a dimension) [observation r, tick 6]");
    polis_env_destroy(env);
    /* the same without compact observations: the step succeeds, the checker sees it */
    env = probe_env("ok", 35, false, "", &err);
    CHECK(env != NULL);
    if (!env) return;
    char msg[256];
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    for (int t = 1; t <= 6; t++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(check_ranges(env, true, msg, sizeof msg), 12);
    CHECK_CONTAINS(msg, "field r, agent 0, element 0 = 41 outside [0, 40] (tick 6)");
    polis_env_destroy(env);
}

/* ---- writers that report their changes (host API "observations") ---------------------------- */

static polis_env *change_env(const char *mode, const char *bad, int bad_tick, bool compact,
                             test_alloc *alloc)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"polis\": 1, \"agents\": 3, \"max_steps\": 1000, \"plugins\": [{\"name\": "
             "\"change_probe\", \"params\": {\"mode\": \"%s\", \"bad\": \"%s\", "
             "\"bad_tick\": %d}}]}",
             mode, bad, bad_tick);
    polis_options o = test_options(NULL, alloc);
    o.compact_observations = compact;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) != POLIS_OK)
        fprintf(stderr, "change_probe %s: %s\n", mode, err.message);
    return env;
}

/* Steps a and b `steps` times; the number of steps after which their observations differ
 * (0: the same after every step). */
static int differing_steps(polis_env *a, polis_env *b, int steps, char *msg, size_t cap)
{
    int differ = 0;
    for (int t = 0; t < steps; t++) {
        if (polis_env_step(a) != POLIS_OK || polis_env_step(b) != POLIS_OK) {
            fprintf(stderr, "step: %s | %s\n", polis_env_error(a), polis_env_error(b));
            CHECK(false);
            return steps;
        }
        differ += !same_values(a, b, msg, cap);
    }
    return differ;
}

/* The compact buffer of a writer reporting its changes equals the plain one after every step,
 * also across a moved buffer and resets; an incomplete report shows (so the reports are what
 * is narrowed); no allocation per step. */
static void test_reported_changes(void)
{
    static const char *const MODES[] = {"none", "list", "column", "run", "empty", "partial"};
    for (size_t m = 0; m < sizeof MODES / sizeof *MODES; m++) {
        test_alloc alloc = {0};
        polis_env *plain = change_env(MODES[m], "value", 0, false, NULL);
        polis_env *env = change_env(MODES[m], "value", 0, true, &alloc);
        CHECK(plain && env);
        if (!plain || !env) {
            polis_env_destroy(plain);
            polis_env_destroy(env);
            continue;
        }
        polis_obs_field f;
        polis_env_obs_field(env, 0, &f);
        CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I8);
        char msg[256] = "";
        CHECK_EQ_INT(polis_env_reset(plain, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        long calls = alloc.calls;
        int differ = differing_steps(plain, env, 60, msg, sizeof msg);
        CHECK_EQ_INT(alloc.calls, calls);
        /* the buffer moved to another, filled with garbage: narrowed whole, then back */
        polis_io *io = (polis_io *)polis_env_io(env);
        uint8_t *own = io->obs, *other = malloc((size_t)io->n_agents * io->obs_size);
        memset(other, 0x5a, (size_t)io->n_agents * io->obs_size);
        io->obs = other;
        differ += differing_steps(plain, env, 20, msg, sizeof msg);
        io->obs = own;
        differ += differing_steps(plain, env, 20, msg, sizeof msg);
        CHECK_EQ_INT(polis_env_reset(plain, 2), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
        differ += !same_values(plain, env, msg, sizeof msg);
        differ += differing_steps(plain, env, 40, msg, sizeof msg);
        io->obs = own;
        free(other);
        if (!strcmp(MODES[m], "partial")) {
            CHECK(differ > 0); /* only reported elements are narrowed */
        } else {
            if (differ) fprintf(stderr, "change_probe %s: %s\n", MODES[m], msg);
            CHECK_EQ_INT(differ, 0);
        }
        polis_env_destroy(plain);
        polis_env_destroy(env);
    }
}

/* A reported value outside its range fails the step as a whole narrowing does, naming the
 * place; so do reports outside the record; the write after a failed one is narrowed whole. */
static void test_reported_errors(void)
{
    static const struct {
        const char *mode, *bad, *want;
    } CASES[] = {
        {"list", "value",
         "change_probe: observation c, agent 1 (agent_1), element 87 = 300 is outside its "
         "declared range [-128, 127] (per index of a dimension) [observation c, tick 3]"},
        {"column", "value",
         "change_probe: observation c, agent 1 (agent_1), element 87 = 300 is outside its "
         "declared range [-128, 127] (per index of a dimension) [observation c, tick 3]"},
        {"run", "value",
         "change_probe: observation c, agent 1 (agent_1), element 87 = 300 is outside its "
         "declared range [-128, 127] (per index of a dimension) [observation c, tick 3]"},
        {"none", "value",
         "change_probe: observation c, agent 1 (agent_1), element 87 = 300 is outside its "
         "declared range [-128, 127] (per index of a dimension) [observation c, tick 3]"},
        {"list", "at",
         "change_probe: observation c, agent 1 (agent_1): element 160 reported changed is "
         "outside the record's 160 elements [observation c, tick 3]"},
        {"list", "null",
         "change_probe: observation c, agent 1 (agent_1): changed(): at is NULL is outside the "
         "record's 160 elements [observation c, tick 3]"},
        {"list", "run",
         "change_probe: observation c, agent 1 (agent_1): element 169 reported changed is "
         "outside the record's 160 elements [observation c, tick 3]"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        polis_env *env = change_env(CASES[i].mode, CASES[i].bad, 3, true, NULL);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_PLUGIN);
        CHECK_EQ_STR(polis_env_error(env), CASES[i].want);
        polis_env_destroy(env);
    }
    /* After the failed write (agent 1's changes at tick 3 were never narrowed) the next
     * writes are narrowed whole: the reporting env matches one that never reports, which
     * failed at the same place with the same records. */
    polis_env *env = change_env("list", "at", 3, true, NULL);
    polis_env *ref = change_env("none", "at", 3, true, NULL);
    CHECK(env && ref);
    if (env && ref) {
        char msg[256] = "";
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(ref, 1), POLIS_OK);
        for (int t = 0; t < 2; t++) {
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(ref), POLIS_OK);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_PLUGIN);
        CHECK_EQ_INT(polis_env_step(ref), POLIS_ERR_PLUGIN);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(ref, 1), POLIS_OK);
        CHECK(same_values(env, ref, msg, sizeof msg));
        CHECK_EQ_INT(differing_steps(env, ref, 2, msg, sizeof msg), 0); /* tick 3 fails again */
    }
    polis_env_destroy(env);
    polis_env_destroy(ref);
}

/* A writer that writes the stored dtype itself (observations API version 2, writes_stored):
 * change_probe's field d is stored as u8 with compact observations and written so, equal to
 * the plain i32 values after every step; declaring it for a field not the plugin's fails the
 * create, after registration the step, each naming the call. */
static polis_env *stored_env(const char *probe, bool compact, polis_error *err)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"polis\": 1, \"agents\": 3, \"max_steps\": 1000, \"plugins\": [{\"name\": "
             "\"change_probe\", \"params\": {\"stored_probe\": \"%s\"}}]}",
             probe);
    polis_options o = test_options(NULL, NULL);
    o.compact_observations = compact;
    polis_env *env = NULL;
    polis_env_create_json(json, strlen(json), &o, &env, err);
    return env;
}

static void test_writes_stored(void)
{
    polis_error err;
    polis_env *plain = stored_env("", false, &err), *env = stored_env("", true, &err);
    CHECK(plain && env);
    if (plain && env) {
        polis_obs_field f, pf;
        CHECK_EQ_INT(polis_env_obs_field(env, 1, &f), POLIS_OK);
        CHECK_EQ_INT(polis_env_obs_field(plain, 1, &pf), POLIS_OK);
        CHECK_EQ_STR(f.name, "d");
        CHECK_EQ_INT(f.dtype, POLIS_DTYPE_U8);
        CHECK_EQ_INT(f.nbytes, 3);
        CHECK_EQ_INT(pf.dtype, POLIS_DTYPE_I32);
        CHECK_EQ_INT(polis_env_obs_field_written_dtype(env, 1), POLIS_DTYPE_I32);
        char msg[256] = "";
        CHECK_EQ_INT(polis_env_reset(plain, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK(same_values(plain, env, msg, sizeof msg));
        int differ = differing_steps(plain, env, 30, msg, sizeof msg);
        if (differ) fprintf(stderr, "writes_stored: %s\n", msg);
        CHECK_EQ_INT(differ, 0);
        /* the values move: d is written at every step, not left from the first */
        const polis_io *io = polis_env_io(env);
        const uint8_t *d = io->obs + f.offset;
        CHECK(d[0] == (30 * 7) % 201 && d[1] == (30 * 7 + 50) % 201);
    }
    polis_env_destroy(plain);
    polis_env_destroy(env);

    CHECK(stored_env("foreign", true, &err) == NULL);
    CHECK_CONTAINS(err.message,
                   "writes_stored: field 2 is not an observation field this plugin registered");
    env = stored_env("late", true, &err);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
        CHECK_CONTAINS(polis_env_error(env), "writes_stored: registration is closed");
    }
    polis_env_destroy(env);
}

/* Fields written in the dtype the buffer holds (writes_stored), society's grid
 * (rulesets/society/observe.c): with pile_shown 127 the painters store i8 (u8 without recipes)
 * straight into the buffer, with more agents than a byte holds i16; contract's, negotiation's
 * and gather's small fields (polis_kit_put_stored). The compact buffers equal the plain ones
 * after every reset and step of long random episodes (social actions, shared maps, live views
 * and their shifts, merged views, hidden agents, resets), field `name` is stored as `want`, and
 * the step allocates nothing (without Lua scripts). */
static void compact_lockstep(const char *rel, const char *overrides, int steps, const char *name,
                             polis_dtype want)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", POLIS_SOURCE_DIR, rel);
    test_alloc alloc = {0};
    polis_options o = test_options(NULL, NULL), co = test_options(NULL, &alloc);
    o.overrides = co.overrides = overrides;
    co.compact_observations = true;
    polis_env *env = NULL, *cenv = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK ||
        polis_env_create_file(path, &co, &cenv, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", rel, err.message);
        CHECK(false);
        polis_env_destroy(env);
        return;
    }
    polis_obs_field f = {0};
    for (int32_t i = 0; i < polis_env_n_obs_fields(cenv); i++)
        if (polis_env_obs_field(cenv, i, &f) == POLIS_OK && !strcmp(f.name, name)) break;
    CHECK_EQ_STR(f.name, name);
    CHECK_EQ_INT(f.dtype, want);
    const polis_io *io = polis_env_io(env), *cio = polis_env_io(cenv);
    int32_t random = polis_env_policy_find(env, "random");
    char msg[256] = "";
    int differ = 0;
    long allocs = 0;
    uint64_t seed = 1;
    bool ok = polis_env_reset(env, seed) == POLIS_OK && polis_env_reset(cenv, seed) == POLIS_OK;
    differ += !same_values(env, cenv, msg, sizeof msg);
    for (int t = 0; ok && t < steps; t++) {
        if (polis_env_done(env)) {
            seed++;
            ok = polis_env_reset(env, seed) == POLIS_OK && polis_env_reset(cenv, seed) == POLIS_OK;
        } else {
            ok = polis_env_policy_act(env, random, NULL, 0) == POLIS_OK;
            memcpy(cio->actions, io->actions, sizeof *io->actions * (size_t)io->n_agents);
            long before = alloc.calls;
            ok = ok && polis_env_step(env) == POLIS_OK && polis_env_step(cenv) == POLIS_OK;
            if (t >= 2) allocs += alloc.calls - before;
        }
        if (!same_values(env, cenv, msg, sizeof msg) && differ++ == 0)
            fprintf(stderr, "%s, step %d: %s\n", rel, t, msg);
    }
    if (!ok) fprintf(stderr, "%s: %s | %s\n", rel, polis_env_error(env), polis_env_error(cenv));
    CHECK(ok);
    CHECK_EQ_INT(differ, 0);
    if (!uses_lua(path)) CHECK_EQ_INT(allocs, 0); /* scripts allocate as they run */
    polis_env_destroy(env);
    polis_env_destroy(cenv);
}

#define PILE127 "\"plugins.society.params.pile_shown\": 127"

static void society_compact(const char *rel, const char *overrides, int steps, polis_dtype want)
{
    compact_lockstep(rel, overrides, steps, "grid", want);
}

static void test_society_compact(void)
{
    const polis_dtype i8 = POLIS_DTYPE_I8;
    society_compact("rulesets/exploration/exploration.json", "{" PILE127 "}", 700, i8);
    society_compact("rulesets/exploration/exploration.json",
                    "{" PILE127 ", \"agents\": 30, \"plugins.society.params.map.size\": "
                    "{\"x\": 11, \"y\": 9}, \"plugins.society.params.random\": {\"blocks\": "
                    "1, \"resources\": [{\"name\": \"wood\", \"num\": 5, \"repeat\": 2}], "
                    "\"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 2}]}}",
                    300, i8);
    society_compact("rulesets/exploration/exploration.json", "{" PILE127 ", \"agents\": 100}", 120,
                    i8);
    society_compact("rulesets/exploration/exploration.json",
                    "{" PILE127 ", \"visibility\": [{\"observers\": \"all\", \"hidden\": "
                    "[0, 3], \"from\": 20, \"until\": 90}]}",
                    300, i8);
    society_compact("rulesets/exploration/exploration_physical.json", "{" PILE127 "}", 300, i8);
    society_compact("rulesets/social_structure/ind_group.json", "{" PILE127 "}", 300, i8);
    society_compact("rulesets/social_structure/dynamic_hard.json", "{" PILE127 "}", 300, i8);
    society_compact("rulesets/social_structure/connection_hard.json", "{" PILE127 "}", 300, i8);
    society_compact("rulesets/social_structure/ovlp_group_hard.json", "{" PILE127 "}", 300, i8);
    society_compact("rulesets/contract/contract.json", "{" PILE127 "}", 240, i8);
    /* no recipe: every value >= 0, u8, agent ids past 127 (some hidden) */
    society_compact("rulesets/exploration/exploration.json",
                    "{" PILE127 ", \"agents\": 200, \"plugins.society.params.map.size\": "
                    "{\"x\": 24, \"y\": 24}, \"plugins.society.params.random.recipes\": [], "
                    "\"plugins.society.params.random.resources\": [{\"name\": \"wood\", "
                    "\"num\": 5, \"repeat\": 4}, {\"name\": \"stone\", \"num\": 5, "
                    "\"repeat\": 4}], "
                    "\"visibility\": [{\"observers\": \"all\", \"hidden\": [5, 140, 199], "
                    "\"from\": 3, \"until\": 30}]}",
                    50, POLIS_DTYPE_U8);
    /* more agents than a byte holds: i16 written as plain, one social_state for the env */
    society_compact("rulesets/exploration/exploration.json",
                    "{" PILE127 ", \"agents\": 300, \"plugins.society.params.map.size\": "
                    "{\"x\": 24, \"y\": 24}, \"plugins.social.params.social_state\": "
                    "\"shared\"}",
                    30, POLIS_DTYPE_I16);
}

/* Contract's, negotiation's and gather's small i32 fields, written i8, i16 or u8 by their
 * plugins (polis_kit_put_stored) where the kernel narrowed them before, and i32 where compact
 * observations keep the registered dtype. */
static void test_small_fields_stored(void)
{
    const polis_dtype u8 = POLIS_DTYPE_U8, i8 = POLIS_DTYPE_I8, i16 = POLIS_DTYPE_I16;
    const char *contract = "rulesets/contract/contract.json",
               *nego = "rulesets/negotiation/negotiation.json",
               *gather = "rulesets/gather/gather.json";
    compact_lockstep(contract, NULL, 400, "contract", i8);
    compact_lockstep("rulesets/contract/contract_hard.json", NULL, 400, "contract", i8);
    compact_lockstep("rulesets/contract/contract_team.json", NULL, 300, "contract", i8);
    /* formation 160 steps (turn order past 127 steps): i16 */
    compact_lockstep(contract, "{\"max_steps\": 200, \"plugins.contract.params.rounds\": 40}", 300,
                     "contract", i16);
    /* 40,000 formation steps: i32 kept, written as plain */
    compact_lockstep(contract, "{\"plugins.contract.params.rounds\": 10000}", 150, "contract",
                     POLIS_DTYPE_I32);
    compact_lockstep(nego, NULL, 400, "negotiation", i8);
    compact_lockstep("rulesets/negotiation/negotiation_hard.json", NULL, 400, "negotiation", i8);
    compact_lockstep(nego,
                     "{\"max_steps\": 300, \"plugins.negotiation.params.negotiation_steps\": "
                     "200}",
                     400, "negotiation", i16);
    compact_lockstep(gather, NULL, 700, "position", u8);
    compact_lockstep(gather, "{\"grid\": {\"width\": 300, \"height\": 7}}", 300, "position", i16);
    compact_lockstep("rulesets/gather/gather_lua.json", NULL, 300, "position", u8);
}

/* A vec of compact envs: the shared buffers take the compact layout; no allocation per step. */
static void test_vec(void)
{
    test_alloc alloc = {0};
    polis_options o = test_options(NULL, &alloc);
    o.compact_observations = true;
    polis_vec *vec = NULL;
    polis_error err;
    CHECK_EQ_INT(polis_vec_create_file(POLIS_TEST_SOURCE_DIR "/scenarios/walker/walker.json", &o, 3,
                                       2, &vec, &err),
                 POLIS_OK);
    if (!vec) return;
    polis_obs_field f;
    polis_env_obs_field(polis_vec_env(vec, 1), 1, &f);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_U8);
    CHECK_EQ_INT(polis_vec_reset(vec, 7), POLIS_OK);
    const polis_io *io = polis_vec_io(vec);
    long calls = alloc.calls;
    for (int t = 0; t < 300; t++) {
        for (int32_t r = 0; r < io->n_agents; r++) io->actions[r] = (r + t) % io->n_actions;
        CHECK_EQ_INT(polis_vec_step(vec), POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, calls);
    /* every row's position equals its env's own record */
    for (int32_t k = 0; k < 3; k++) {
        const polis_io *eio = polis_env_io(polis_vec_env(vec, k));
        CHECK(eio->obs == io->obs + (size_t)k * 4 * io->obs_size);
    }
    polis_vec_destroy(vec);
}

int main(void)
{
    test_c_plugin();
    test_vec();
    test_reported_changes();
    test_reported_errors();
    test_society_compact();
    test_small_fields_stored();
    test_broken_range();
    test_narrow_runs();
    test_writes_stored();
    test_bad_declarations();
    test_report();
    test_scenario_key();
    test_shipped_scenarios();
    CHECK_DONE();
}
