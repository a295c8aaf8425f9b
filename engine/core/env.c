/*
 * env.c — the env lifecycle: create from a scenario, reset, step through the tick phases,
 * observations and masks, destroy; the env allocator and error messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- memory ------------------------------------------------------------------------------ */

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

void *polis__alloc(polis_env *env, size_t size)
{
    if (size == 0) size = 1;
    void *p = env->alloc(env->alloc_ud, NULL, 0, size);
    if (p)
        memset(p, 0, size);
    else
        env->alloc_failures++;
    return p;
}

void *polis__realloc(polis_env *env, void *p, size_t osize, size_t nsize)
{
    if (nsize == 0) {
        polis__free(env, p, osize);
        return NULL;
    }
    void *q = env->alloc(env->alloc_ud, p, p ? osize : 0, nsize);
    if (!q) env->alloc_failures++;
    return q;
}

void polis__free(polis_env *env, void *p, size_t size)
{
    if (p) env->alloc(env->alloc_ud, p, size, 0);
}

char *polis__strdup(polis_env *env, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = env->alloc(env->alloc_ud, NULL, 0, n);
    if (d)
        memcpy(d, s, n);
    else
        env->alloc_failures++;
    return d;
}

void polis__strfree(polis_env *env, char *s)
{
    if (s) polis__free(env, s, strlen(s) + 1);
}

polis_status polis__grow(polis_env *env, void **arr, int32_t *cap, int32_t need, size_t elem)
{
    if (need < *cap) return POLIS_OK;
    int32_t ncap = *cap ? *cap : 8;
    while (ncap <= need) {
        if (ncap > INT32_MAX / 2) return polis__fail(env, POLIS_ERR_LIMIT, "registry too large");
        ncap *= 2;
    }
    void *p = polis__realloc(env, *arr, (size_t)*cap * elem, (size_t)ncap * elem);
    if (!p) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return POLIS_OK;
}

/* ---- errors ------------------------------------------------------------------------------ */

polis_status polis__vfail(polis_env *env, polis_status st, const char *fmt, va_list ap)
{
    vsnprintf(env->err, sizeof env->err, fmt, ap);
    return st;
}

polis_status polis__fail(polis_env *env, polis_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    polis__vfail(env, st, fmt, ap);
    va_end(ap);
    return st;
}

void polis__logf(polis_env *env, const char *fmt, ...)
{
    if (!env->log) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    env->log(env->log_ud, buf);
}

/* Appends " [what, tick T]" once to the message of a failed callback, so the outermost
 * frame does not add a second place to a message an inner frame already placed. */
void polis__place_error(polis_env *env, polis_ctx *ctx, polis_status st, const char *what)
{
    if (env->err_placed) return;
    if (env->err[0] == '\0')
        snprintf(env->err, sizeof env->err, "%s: failed (%s)", ctx ? ctx->name : "polis",
                 polis_status_str(st));
    size_t len = strlen(env->err);
    snprintf(env->err + len, sizeof env->err - len, " [%s, tick %lld]", what, (long long)env->tick);
    env->err_placed = true;
}

void polis__clear_error(polis_env *env)
{
    env->err[0] = '\0';
    env->err_placed = false;
}

polis_status polis_env_set_error(polis_env *env, polis_status st, const char *fmt, ...)
{
    if (!env) return st;
    env->err_placed = false;
    if (!fmt) {
        env->err[0] = '\0';
        return st;
    }
    va_list ap;
    va_start(ap, fmt);
    polis__vfail(env, st, fmt, ap);
    va_end(ap);
    return st;
}

void polis_env_clear_error(polis_env *env)
{
    if (env) polis__clear_error(env);
}

const char *polis_status_str(polis_status s)
{
    switch (s) {
    case POLIS_OK: return "ok";
    case POLIS_ERR_INVALID: return "invalid argument";
    case POLIS_ERR_NOMEM: return "out of memory";
    case POLIS_ERR_CONFIG: return "config error";
    case POLIS_ERR_PLUGIN: return "plugin error";
    case POLIS_ERR_SCRIPT: return "script error";
    case POLIS_ERR_STATE: return "wrong state";
    case POLIS_ERR_IO: return "i/o error";
    case POLIS_ERR_LIMIT: return "limit exceeded";
    case POLIS_ERR_ACTION: return "bad action";
    case POLIS_ERR_FFI: return "foreign call error";
    }
    return "unknown status";
}

const char *polis_version(void) { return POLIS_VERSION_STRING; }

/* ---- create / destroy --------------------------------------------------------------------- */

static polis_status noop_handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx, (void)ud, (void)agent, (void)arg;
    return POLIS_OK;
}

static polis_status build(polis_env *env, const char *text, size_t len, const char *source,
                          const char *base_dir)
{
    polis_status st;
    polis_ctx *kernel = polis__ctx_new(env, POLIS__CTX_KERNEL, "polis");
    if (!kernel) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    polis_action_def noop = {.name = "noop", .doc = "do nothing", .handler = noop_handler};
    int32_t id;
    if ((st = polis__host()->action(kernel, &noop, &id)) != POLIS_OK) return st;

    if ((st = polis__scenario_parse(env, text, len, source, base_dir)) != POLIS_OK) return st;
    env->n_agents = env->scn.n_agents;
    env->max_steps = env->scn.max_steps;
    env->max_entities = env->scn.max_entities;
    if (env->scn.has_grid &&
        (st = polis__grid_configure(env, env->scn.grid_width, env->scn.grid_height,
                                    env->scn.grid_wrap)) != POLIS_OK)
        return st;

    if ((st = polis__plugins_load(env)) != POLIS_OK) return st;
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->load && (st = (*m)->load(env)) != POLIS_OK) return st;
    if ((st = polis__plugins_start(env)) != POLIS_OK) return st;
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->start && (st = (*m)->start(env)) != POLIS_OK) return st;
    if ((st = polis__registry_freeze(env)) != POLIS_OK) return st;
    polis__scenario_release_json(env);
    env->state = POLIS__ENV_FROZEN;
    return POLIS_OK;
}

/* Options fields up to log_ud are the original 0.1 layout; later fields are read only when
 * the caller's struct_size covers them, so a host built against the older header works. */
#define OPTIONS_BASE_SIZE (offsetof(polis_options, log_ud) + sizeof(void *))
#define OPTIONS_HAS(o, field)                                                                      \
    ((o)->struct_size >= offsetof(polis_options, field) + sizeof((o)->field))

static polis_status read_options(polis_env *env, const polis_options *opts, const char **base_dir)
{
    if (!opts || opts->struct_size == 0) return POLIS_OK;
    if (opts->struct_size < OPTIONS_BASE_SIZE)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "polis_options.struct_size is %zu, expected %zu (set it to "
                           "sizeof(polis_options))",
                           opts->struct_size, sizeof(polis_options));
    env->log = opts->log;
    env->log_ud = opts->log_ud;
    if (opts->plugin_path && !(env->plugin_path = polis__strdup(env, opts->plugin_path)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if (!*base_dir) *base_dir = opts->base_dir;
    if (OPTIONS_HAS(opts, overrides) && opts->overrides &&
        !(env->overrides = polis__strdup(env, opts->overrides)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if (OPTIONS_HAS(opts, no_observations)) env->no_obs = opts->no_observations;
    if (OPTIONS_HAS(opts, compact_observations)) env->opt_compact = opts->compact_observations;
    if (OPTIONS_HAS(opts, max_memory)) {
        if (opts->max_memory < 0)
            return polis__fail(env, POLIS_ERR_INVALID,
                               "polis_options.max_memory is %" PRId64 ", expected 0 (the "
                               "default) or a number of bytes",
                               opts->max_memory);
        env->opt_max_memory = opts->max_memory;
    }
    return POLIS_OK;
}

polis_status polis__env_create(const polis__create_args *args, polis_env **out, polis_error *err)
{
    const polis_options *opts = args->opts;
    polis_alloc_fn alloc = default_alloc;
    void *alloc_ud = NULL;
    if (opts && opts->struct_size >= offsetof(polis_options, alloc_ud) + sizeof(void *) &&
        opts->alloc) {
        alloc = opts->alloc;
        alloc_ud = opts->alloc_ud;
    }
    if (out) *out = NULL;
    if (err) {
        err->status = POLIS_OK;
        err->message[0] = '\0';
    }
    if (!out) {
        if (err) {
            err->status = POLIS_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "polis_env_create: out is NULL");
        }
        return POLIS_ERR_INVALID;
    }
    polis_env *env = alloc(alloc_ud, NULL, 0, sizeof *env);
    if (!env) {
        if (err) {
            err->status = POLIS_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return POLIS_ERR_NOMEM;
    }
    memset(env, 0, sizeof *env);
    env->alloc = alloc;
    env->alloc_ud = alloc_ud;
    env->state = POLIS__ENV_LOADING;
    env->io_fn = args->io_fn;
    env->io_ud = args->io_ud;
    const char *base_dir = args->base_dir;
    polis_status st = read_options(env, opts, &base_dir);
    for (const polis__module *const *m = polis__modules; *m && st == POLIS_OK; m++)
        if ((*m)->create) st = (*m)->create(env);
    if (st == POLIS_OK)
        st = build(env, args->text, args->len, args->source ? args->source : "<string>", base_dir);
    if (st != POLIS_OK) {
        /* An overridden value is checked where the scenario reader or a plugin meets it, at
         * its JSON path; say that the file alone is not what was read. */
        if (env->overrides && st != POLIS_ERR_NOMEM && strncmp(env->err, "overrides: ", 11) != 0) {
            size_t len = strlen(env->err);
            snprintf(env->err + len, sizeof env->err - len, " (scenario with overrides)");
        }
        if (err) {
            err->status = st;
            snprintf(err->message, sizeof err->message, "%s",
                     env->err[0] ? env->err : polis_status_str(st));
        }
        polis_env_destroy(env);
        return st;
    }
    *out = env;
    return POLIS_OK;
}

polis_status polis_env_create_json(const char *json, size_t len, const polis_options *opts,
                                   polis_env **out, polis_error *err)
{
    if (!json) {
        if (out) *out = NULL;
        if (err) {
            err->status = POLIS_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "polis_env_create_json: json is NULL");
        }
        return POLIS_ERR_INVALID;
    }
    polis__create_args args = {.text = json, .len = len, .source = "<string>", .opts = opts};
    return polis__env_create(&args, out, err);
}

polis_status polis__scenario_file(const char *path, char **text, size_t *len, char *dir,
                                  size_t dir_size, polis_error *err)
{
    *text = NULL;
    *len = 0;
    FILE *f = NULL;
    char why[160];
    int oerr = polis__file_open(path, POLIS__FILE_MAX, &f, why, sizeof why);
    if (oerr != 0) {
        if (err) {
            err->status = POLIS_ERR_IO;
            snprintf(err->message, sizeof err->message, "cannot read %s: %s", path,
                     oerr > 0 ? strerror(oerr) : why);
        }
        return POLIS_ERR_IO;
    }
    /* Read with plain malloc: the env (and its allocator) does not exist yet, and the text
     * is freed before creation returns. */
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int ioerr = ferror(f);
    fclose(f);
    if (!buf || ioerr) {
        free(buf);
        if (err) {
            err->status = buf ? POLIS_ERR_IO : POLIS_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "cannot read %s: %s", path,
                     buf ? "read error" : "out of memory");
        }
        return buf ? POLIS_ERR_IO : POLIS_ERR_NOMEM;
    }
    snprintf(dir, dir_size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, dir_size, ".");
    *text = buf;
    *len = n;
    return POLIS_OK;
}

polis_status polis_env_create_file(const char *path, const polis_options *opts, polis_env **out,
                                   polis_error *err)
{
    if (out) *out = NULL;
    if (!path) {
        if (err) {
            err->status = POLIS_ERR_INVALID;
            snprintf(err->message, sizeof err->message, "polis_env_create_file: path is NULL");
        }
        return POLIS_ERR_INVALID;
    }
    char *buf;
    size_t n;
    char dir[4096];
    polis_status st = polis__scenario_file(path, &buf, &n, dir, sizeof dir, err);
    if (st != POLIS_OK) return st;
    polis__create_args args = {
        .text = buf, .len = n, .source = path, .base_dir = dir, .opts = opts};
    st = polis__env_create(&args, out, err);
    free(buf);
    return st;
}

/* Everything a build made: plugins, scripts, registries, module state, the scenario. */
static void teardown(polis_env *env)
{
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->unload) (*m)->unload(env);
    polis__plugins_unload(env);
    polis__bus_free(env);
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->free) (*m)->free(env);
    polis__registry_free(env);
    polis__entities_free(env);
    polis__grid_free(env);
    polis__scenario_release_json(env);
    polis__scenario_free(env);
    polis__strfree(env, env->overrides);
    env->overrides = NULL;
}

void polis_env_destroy(polis_env *env)
{
    if (!env) return;
    teardown(env);
    polis__strfree(env, env->plugin_path);
    polis_alloc_fn alloc = env->alloc;
    void *ud = env->alloc_ud;
    alloc(ud, env, sizeof *env, 0);
}

/* ---- rebuilding in place (polis__env_rebuild) --------------------------------------------- */

/* The io buffers of the build being replaced, lent to the new one (as a polis_vec lends its
 * slices) when the new layout has the same sizes. */
static polis_status lend_io(void *ud, polis_env *env, polis_io *io)
{
    const polis_io *old = ud;
    if (io->n_agents != old->n_agents || io->n_actions != old->n_actions ||
        io->obs_size != old->obs_size)
        return polis__fail(env, POLIS_ERR_CONFIG,
                           "the rebuilt env has %d agents, %d actions and %zu observation bytes "
                           "per agent; the env it replaces has %d, %d and %zu (its buffers "
                           "cannot change)",
                           io->n_agents, io->n_actions, io->obs_size, old->n_agents, old->n_actions,
                           old->obs_size);
    io->obs = old->obs;
    io->masks = old->masks;
    io->actions = old->actions;
    io->rewards = old->rewards;
    io->terminations = old->terminations;
    io->truncations = old->truncations;
    io->illegal = old->illegal;
    return POLIS_OK;
}

polis_status polis__env_rebuild(polis_env *env, const char *text, size_t len, const char *source,
                                const char *base_dir, const char *overrides)
{
    /* what outlives the build: the options, the io buffers, the host's subscribers */
    polis_env keep = *env;
    int32_t n_host = 0;
    for (int32_t i = 0; i < env->n_subs; i++) n_host += env->subs[i].host_fn != NULL;
    polis__sub *host_subs = NULL;
    if (n_host && !(host_subs = polis__alloc(env, sizeof *host_subs * (size_t)n_host)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    n_host = 0;
    for (int32_t i = 0; i < env->n_subs; i++)
        if (env->subs[i].host_fn) host_subs[n_host++] = env->subs[i];
    char *src = polis__strdup(env, source), *dir = polis__strdup(env, base_dir);
    polis_status st = POLIS_OK;
    if ((source && !src) || (base_dir && !dir))
        st = polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    polis_io io = env->io;
    bool had_io = io.obs != NULL;
    bool owned = had_io && !env->io_borrowed;
    /* the reward components stay too (a host maps them, as the Python SDK does) */
    float *components = env->reward_components;
    size_t n_components = (size_t)env->n_rewards * (size_t)env->n_agents;
    if (st == POLIS_OK) {
        env->io_borrowed = true; /* the teardown leaves the buffers to the new build */
        env->reward_components = NULL;
        teardown(env);
        memset(env, 0, sizeof *env);
        env->alloc = keep.alloc;
        env->alloc_ud = keep.alloc_ud;
        env->log = keep.log;
        env->log_ud = keep.log_ud;
        env->plugin_path = keep.plugin_path;
        env->no_obs = keep.no_obs;
        env->opt_compact = keep.opt_compact;
        env->opt_max_memory = keep.opt_max_memory;
        env->episode = keep.episode;
        env->state = POLIS__ENV_LOADING;
        if (had_io) {
            env->io_fn = lend_io;
            env->io_ud = &io;
        } else {
            env->io_fn = keep.io_fn;
            env->io_ud = keep.io_ud;
        }
        if (overrides && !(env->overrides = polis__strdup(env, overrides)))
            st = polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        for (const polis__module *const *m = polis__modules; *m && st == POLIS_OK; m++)
            if ((*m)->create) st = (*m)->create(env);
        if (st == POLIS_OK) st = build(env, text, len, src ? src : "<string>", dir);
        /* the buffers stay the host's (or the vec's) as they were; an unfinished build
         * keeps them too, for the destroy or the next rebuild */
        env->io_fn = keep.io_fn;
        env->io_ud = keep.io_ud;
        if (had_io && !env->io.obs) env->io = io;
        env->io_borrowed = had_io ? !owned : env->io_borrowed;
        size_t n_now = (size_t)env->n_rewards * (size_t)env->n_agents;
        if (components && env->reward_components && n_now == n_components) {
            polis__free(env, env->reward_components, (n_now ? n_now : 1) * sizeof(float));
            env->reward_components = components;
            components = NULL;
        } else if (components && st == POLIS_OK) {
            st =
                polis__fail(env, POLIS_ERR_CONFIG,
                            "the rebuilt env has %d reward functions; the env it replaces has "
                            "%zu (per agent)",
                            env->n_rewards, n_components / (size_t)(io.n_agents ? io.n_agents : 1));
        }
        for (int32_t i = 0; i < n_host && st == POLIS_OK; i++) {
            polis__sub s = host_subs[i];
            if (s.type >= env->n_events)
                st = polis__fail(env, POLIS_ERR_CONFIG,
                                 "the rebuilt env has %d event types; a host subscriber "
                                 "listens to type %d",
                                 env->n_events, s.type);
            else
                st = polis__sub_add(env, &s);
        }
        if (st == POLIS_OK && n_host) st = polis__bus_freeze(env);
        if (st != POLIS_OK) env->state = POLIS__ENV_LOADING;
    }
    if (components) polis__free(env, components, (n_components ? n_components : 1) * sizeof(float));
    polis__free(env, host_subs, sizeof *host_subs * (size_t)(n_host ? n_host : 1));
    polis__strfree(env, src);
    polis__strfree(env, dir);
    return st;
}

/* ---- running callbacks ------------------------------------------------------------------- */

static polis_status run_hooks(polis_env *env, polis_phase phase)
{
    const polis__hook *h = env->phase_hooks[phase];
    int32_t n = env->n_phase_hooks[phase];
    for (int32_t i = 0; i < n; i++) {
        env->current = h[i].ctx;
        polis_status st = h[i].fn(h[i].ctx, h[i].ud);
        if (st != POLIS_OK) {
            char what[64];
            snprintf(what, sizeof what, "hook %s", polis__phase_name(phase));
            polis__place_error(env, h[i].ctx, st, what);
            return st;
        }
    }
    env->current = NULL;
    return POLIS_OK;
}

static inline bool agent_done(const polis_env *env, int32_t a)
{
    return env->io.terminations[a] || env->io.truncations[a];
}

/* ---- compact observations: narrowing a writer's shadow record into the buffer ------------ */

/* Copies len elements of src type ST into dst type DT; true when all lie in [lo, hi]. This
 * reads every element of a shadow record at every step, so it is written to vectorise at
 * -O2 (GCC's cheap vectoriser wants a fixed trip count and no runtime alias check) as well
 * as at -O3: restrict buffers, blocks of NARROW_LANES elements, and the range test as a
 * running minimum and maximum per lane in ST (one vector min and max per load, kept in
 * registers across blocks, folded once at the end; a per-element flag widened to int cost
 * several instructions per element). */
#define NARROW_LANES 16
/* The (written, stored) dtype pairs, in the order of narrow_pair: each loop below is made once
 * per pair from this list. */
#define POLIS_NARROW_PAIRS(X)                                                                      \
    X(i16_u8, int16_t, uint8_t, INT16_MIN, INT16_MAX)                                              \
    X(i16_i8, int16_t, int8_t, INT16_MIN, INT16_MAX)                                               \
    X(i32_u8, int32_t, uint8_t, INT32_MIN, INT32_MAX)                                              \
    X(i32_i8, int32_t, int8_t, INT32_MIN, INT32_MAX)                                               \
    X(i32_i16, int32_t, int16_t, INT32_MIN, INT32_MAX)

#define POLIS_NARROW_ENUM(pair, ...) NARROW_##pair,
enum { POLIS_NARROW_PAIRS(POLIS_NARROW_ENUM) };
#undef POLIS_NARROW_ENUM

/* Field o's place in POLIS_NARROW_PAIRS. */
static inline int narrow_pair(const polis__obs *o)
{
    if (o->dtype == POLIS_DTYPE_I16)
        return o->out_dtype == POLIS_DTYPE_U8 ? NARROW_i16_u8 : NARROW_i16_i8;
    return o->out_dtype == POLIS_DTYPE_U8   ? NARROW_i32_u8
           : o->out_dtype == POLIS_DTYPE_I8 ? NARROW_i32_i8
                                            : NARROW_i32_i16;
}

#define POLIS_NARROW(pair, ST, DT, ST_MIN, ST_MAX)                                                 \
    static bool narrow_##pair(const void *restrict src, void *restrict dst, size_t len,            \
                              int32_t lo, int32_t hi)                                              \
    {                                                                                              \
        const ST *s = src;                                                                         \
        DT *d = dst;                                                                               \
        if (len < NARROW_LANES) { /* a position, a clock: lanes would cost more than the copy */   \
            bool ok = true;                                                                        \
            for (size_t i = 0; i < len; i++) {                                                     \
                ST v = s[i];                                                                       \
                ok &= v >= lo && v <= hi;                                                          \
                d[i] = (DT)v;                                                                      \
            }                                                                                      \
            return ok;                                                                             \
        }                                                                                          \
        ST mn[NARROW_LANES], mx[NARROW_LANES];                                                     \
        for (size_t k = 0; k < NARROW_LANES; k++) {                                                \
            mn[k] = ST_MAX;                                                                        \
            mx[k] = ST_MIN;                                                                        \
        }                                                                                          \
        size_t i = 0;                                                                              \
        for (; i + NARROW_LANES <= len; i += NARROW_LANES) {                                       \
            const ST *bs = s + i;                                                                  \
            DT *bd = d + i;                                                                        \
            _Pragma("GCC unroll 1") for (size_t k = 0; k < NARROW_LANES; k++)                      \
            {                                                                                      \
                ST v = bs[k];                                                                      \
                mn[k] = v < mn[k] ? v : mn[k];                                                     \
                mx[k] = v > mx[k] ? v : mx[k];                                                     \
                bd[k] = (DT)v;                                                                     \
            }                                                                                      \
        }                                                                                          \
        for (size_t k = 0; i < len; i++, k++) {                                                    \
            ST v = s[i];                                                                           \
            mn[k] = v < mn[k] ? v : mn[k];                                                         \
            mx[k] = v > mx[k] ? v : mx[k];                                                         \
            d[i] = (DT)v;                                                                          \
        }                                                                                          \
        ST low = ST_MAX, high = ST_MIN;                                                            \
        for (size_t k = 0; k < NARROW_LANES; k++) {                                                \
            low = mn[k] < low ? mn[k] : low;                                                       \
            high = mx[k] > high ? mx[k] : high;                                                    \
        }                                                                                          \
        return len == 0 || (low >= lo && high <= hi);                                              \
    }
POLIS_NARROW_PAIRS(POLIS_NARROW)
#undef POLIS_NARROW
#undef NARROW_LANES

typedef bool (*narrow_fn)(const void *restrict, void *restrict, size_t, int32_t, int32_t);
#define POLIS_NARROW_FN(pair, ...) narrow_##pair,
static const narrow_fn narrow_fns[] = {POLIS_NARROW_PAIRS(POLIS_NARROW_FN)};
#undef POLIS_NARROW_FN

static int64_t read_int(const void *p, polis_dtype t, size_t i)
{
    return t == POLIS_DTYPE_I16 ? ((const int16_t *)p)[i] : ((const int32_t *)p)[i];
}

/* The step's error for element i of agent a's shadow record src of field o, which lies
 * outside its range. */
static polis_status range_error(polis_env *env, const polis__obs *o, int32_t a, size_t i,
                                const uint8_t *src)
{
    size_t k = 0;
    if (o->range_dim >= 0) {
        size_t stride = 1;
        for (int32_t d = o->range_dim + 1; d < o->ndim; d++) stride *= (size_t)o->shape[d];
        k = i / stride % (size_t)o->shape[o->range_dim];
    }
    polis__clear_error(env);
    snprintf(env->err, sizeof env->err,
             "%s: observation %s, agent %d (%s), element %zu = %lld is outside its "
             "declared range [%d, %d]%s",
             o->ctx->name, o->name, (int)a, env->scn.agent_names[a], i,
             (long long)read_int(src, o->dtype, i), (int)o->range_lo[k], (int)o->range_hi[k],
             o->range_dim >= 0 ? " (per index of a dimension)" : "");
    return o->ctx->kind == POLIS__CTX_SCRIPT ? POLIS_ERR_SCRIPT : POLIS_ERR_PLUGIN;
}

/* Narrows elements [b, end) of agent a's shadow record of field o into dst, run by run of
 * elements sharing a range: run r covers elements [r x stride, (r + 1) x stride) with range
 * r mod n, and consecutive runs sharing a range are narrowed in one call. A value outside
 * its range fails the step (a range is a promise, never a clamp), naming the first such
 * element. */
static polis_status narrow_span(polis_env *env, const polis__obs *o, int32_t a, uint8_t *dst,
                                size_t b, size_t end)
{
    const size_t in = o->narrow_in, out = o->narrow_out, stride = o->narrow_stride;
    const size_t n = o->narrow_n;
    const uint8_t *src = o->shadow + (size_t)a * o->nbytes;
    const narrow_fn fn = narrow_fns[narrow_pair(o)];
    size_t r = b < end ? b / stride : 0, k = r % n; /* run r holds b; k its range */
    while (b < end) {
        const int32_t lo = (int32_t)o->range_lo[k], hi = (int32_t)o->range_hi[k];
        size_t next = k + 1 == n ? 0 : k + 1; /* the range of run r + 1 */
        r++;
        while (r * stride < end && o->range_lo[next] == o->range_lo[k] &&
               o->range_hi[next] == o->range_hi[k]) {
            r++;
            next = next + 1 == n ? 0 : next + 1;
        }
        const size_t e = r * stride < end ? r * stride : end;
        k = next;
        if (!fn(src + b * in, dst + b * out, e - b, lo, hi)) {
            size_t i = b;
            while (read_int(src, o->dtype, i) >= lo && read_int(src, o->dtype, i) <= hi) i++;
            return range_error(env, o, a, i, src);
        }
        b = e;
    }
    return POLIS_OK;
}

/* A position, a clock, a stage (fewer than POLIS__NARROW_SMALL elements), every agent's
 * shadow record at once (row a of the buffer at dst + a x stride): element by element against
 * each element's own bounds, without the calls, lanes and range runs of narrow_span (they cost
 * more than the copy), one call and one dispatch per field and write rather than per agent.
 * Returns SIZE_MAX, or the first element outside its range in the first agent's record that
 * has one (*agent). */
#define POLIS_NARROW_ROWS(pair, ST, DT, ...)                                                       \
    static size_t narrow_rows_##pair(const polis__obs *o, const void *restrict src,                \
                                     uint8_t *restrict dst, size_t stride, int32_t n,              \
                                     int32_t *agent)                                               \
    {                                                                                              \
        const ST *s = src;                                                                         \
        const size_t count = o->narrow_count;                                                      \
        for (int32_t a = 0; a < n; a++, s += count, dst += stride) {                               \
            DT *d = (DT *)(void *)dst;                                                             \
            for (size_t i = 0; i < count; i++) {                                                   \
                const ST v = s[i];                                                                 \
                if (v < o->small_lo[i] || v > o->small_hi[i]) {                                    \
                    *agent = a;                                                                    \
                    return i;                                                                      \
                }                                                                                  \
                d[i] = (DT)v;                                                                      \
            }                                                                                      \
        }                                                                                          \
        return SIZE_MAX;                                                                           \
    }
POLIS_NARROW_PAIRS(POLIS_NARROW_ROWS)
#undef POLIS_NARROW_ROWS

/* Narrows every agent's shadow record of the small field o (fewer than POLIS__NARROW_SMALL
 * elements: a position, a clock) into the buffer rows at dst. */
static polis_status narrow_small_rows(polis_env *env, const polis__obs *o, uint8_t *dst)
{
    const size_t stride = env->io.obs_size;
    const int32_t n = env->io.n_agents;
    int32_t a = 0;
    size_t bad = SIZE_MAX;
    switch (narrow_pair(o)) {
#define POLIS_NARROW_CASE(pair, ...)                                                               \
    case NARROW_##pair: bad = narrow_rows_##pair(o, o->shadow, dst, stride, n, &a); break;
        POLIS_NARROW_PAIRS(POLIS_NARROW_CASE)
#undef POLIS_NARROW_CASE
    }
    return bad == SIZE_MAX ? POLIS_OK
                           : range_error(env, o, a, bad, o->shadow + (size_t)a * o->nbytes);
}

/* Narrows agent a's whole shadow record of field o (POLIS__NARROW_SMALL elements or more)
 * into dst. */
static polis_status narrow_field(polis_env *env, const polis__obs *o, int32_t a, uint8_t *dst)
{
    return narrow_span(env, o, a, dst, 0, o->narrow_count);
}

/* ---- reported changes: the "observations" host API (plugin.h) ------------------------------
 *
 * A writer that knows which elements of its record it changed reports them while it writes,
 * and they are narrowed at once (they hold their final values for the write); a write that
 * reports nothing is narrowed whole after it returns. Reports count only while the kernel
 * runs a writer whose field's buffer rows all hold its previous write (o->narrow_synced):
 * otherwise (the first write, a moved buffer, a failed write) the kernel ignores them and
 * narrows whole. Society's grid writer changes a few hundred of its 12,800 elements a step;
 * narrowing all of them read every element of every record (docs/performance-log.md). */

/* The range index of element e of field o: (e / stride) mod n, the division by a
 * multiplication (q is e / stride or one less, corrected by one test). */
static inline size_t range_index(const polis__obs *o, size_t e)
{
    if (o->narrow_n == 1) return 0;
    size_t q;
    if (o->narrow_recip) {
        q = (size_t)(((uint64_t)e * o->narrow_recip) >> 32);
        q += (q + 1) * o->narrow_stride <= e;
    } else {
        q = e / o->narrow_stride;
    }
    return q < o->narrow_n ? q : q % o->narrow_n;
}

/* Narrows the elements at[i] + j x step of a record (j from 0 while inside it; step 0: at[i]
 * alone). Returns SIZE_MAX when all lie in their ranges and inside the record; else the
 * first element outside its range, or *bad = i for an at[i] outside the record. */
#define POLIS_NARROW_AT(pair, ST, DT, ...)                                                         \
    static size_t narrow_at_##pair(const polis__obs *o, const void *restrict src,                  \
                                   void *restrict dst, const int32_t *at, size_t n, size_t step,   \
                                   size_t *bad)                                                    \
    {                                                                                              \
        const ST *s = src;                                                                         \
        DT *d = dst;                                                                               \
        const size_t count = o->narrow_count;                                                      \
        const ST lo = (ST)o->narrow_lo, hi = (ST)o->narrow_hi;                                     \
        if (!step) { /* the common case, one element per entry */                                  \
            for (size_t i = 0; i < n; i++) {                                                       \
                const size_t e = (size_t)at[i]; /* a negative at[i] is >= count too */             \
                if (e >= count) {                                                                  \
                    *bad = i;                                                                      \
                    return SIZE_MAX - 1;                                                           \
                }                                                                                  \
                const ST v = s[e];                                                                 \
                if (v < lo || v > hi) { /* else inside every range */                              \
                    const size_t k = range_index(o, e);                                            \
                    if (v < o->range_lo[k] || v > o->range_hi[k]) return e;                        \
                }                                                                                  \
                d[e] = (DT)v;                                                                      \
            }                                                                                      \
            return SIZE_MAX;                                                                       \
        }                                                                                          \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (at[i] < 0 || (size_t)at[i] >= count) {                                             \
                *bad = i;                                                                          \
                return SIZE_MAX - 1;                                                               \
            }                                                                                      \
            for (size_t e = (size_t)at[i]; e < count; e += step) {                                 \
                const ST v = s[e];                                                                 \
                if (v < lo || v > hi) {                                                            \
                    const size_t k = range_index(o, e);                                            \
                    if (v < o->range_lo[k] || v > o->range_hi[k]) return e;                        \
                }                                                                                  \
                d[e] = (DT)v;                                                                      \
            }                                                                                      \
        }                                                                                          \
        return SIZE_MAX;                                                                           \
    }
POLIS_NARROW_PAIRS(POLIS_NARROW_AT)
#undef POLIS_NARROW_AT

typedef size_t (*narrow_at_fn)(const polis__obs *, const void *restrict, void *restrict,
                               const int32_t *, size_t, size_t, size_t *);
#define POLIS_NARROW_FN(pair, ...) narrow_at_##pair,
static const narrow_at_fn narrow_at_fns[] = {POLIS_NARROW_PAIRS(POLIS_NARROW_FN)};
#undef POLIS_NARROW_FN

/* The field whose write ctx's report is about, NULL when reports do nothing now (no writer
 * of ctx runs, its field is not narrowed, or the write must be narrowed whole); marks the
 * write as reported. */
static const polis__obs *reporting(polis_ctx *ctx)
{
    polis_env *env = ctx ? ctx->env : NULL;
    const polis__obs *o = env ? env->narrowing : NULL;
    if (!o || o->ctx != ctx || env->cb_status != POLIS_OK) return NULL;
    env->narrowing_reported = true;
    return o;
}

/* The step's error for a report naming element `at` outside the record (at NULL: none). */
static polis_status bad_report(polis_env *env, const polis__obs *o, const long long *at)
{
    char what[64] = "changed(): at is NULL";
    if (at) snprintf(what, sizeof what, "element %lld reported changed", *at);
    polis__clear_error(env);
    snprintf(env->err, sizeof env->err,
             "%s: observation %s, agent %d (%s): %s is outside the record's %zu elements",
             o->ctx->name, o->name, (int)env->narrowing_agent,
             env->scn.agent_names[env->narrowing_agent], what, o->narrow_count);
    return o->ctx->kind == POLIS__CTX_SCRIPT ? POLIS_ERR_SCRIPT : POLIS_ERR_PLUGIN;
}

bool polis__obs_narrowed(polis_ctx *ctx, int32_t field)
{
    const polis_env *env = ctx ? ctx->env : NULL;
    if (!env || env->state == POLIS__ENV_LOADING || field < 0 || field >= env->n_obs) return false;
    const polis__obs *o = &env->obs[field];
    return o->ctx == ctx && o->shadow != NULL;
}

void polis__obs_changed(polis_ctx *ctx, const int32_t *at, size_t n, size_t step)
{
    const polis__obs *o = reporting(ctx);
    if (!o || !n) return;
    polis_env *env = ctx->env;
    const int32_t a = env->narrowing_agent;
    const uint8_t *src = o->shadow + (size_t)a * o->nbytes;
    size_t bad = 0;
    if (!at) {
        env->cb_status = bad_report(env, o, NULL);
        return;
    }
    const size_t e = narrow_at_fns[narrow_pair(o)](o, src, env->narrowing_dst, at, n, step, &bad);
    if (e == SIZE_MAX) return;
    const long long wrong = at[bad];
    env->cb_status =
        e == SIZE_MAX - 1 ? bad_report(env, o, &wrong) : range_error(env, o, a, e, src);
}

void polis__obs_changed_run(polis_ctx *ctx, size_t first, size_t count)
{
    const polis__obs *o = reporting(ctx);
    if (!o || !count) return;
    polis_env *env = ctx->env;
    if (first >= o->narrow_count || count > o->narrow_count - first) {
        const long long wrong = (long long)(first >= o->narrow_count ? first : first + count - 1);
        env->cb_status = bad_report(env, o, &wrong);
        return;
    }
    env->cb_status =
        narrow_span(env, o, env->narrowing_agent, env->narrowing_dst, first, first + count);
}

/* A legality callback failed (env->cb_status): the message names the actions and agent. */
static polis_status mask_error(polis_env *env, const polis__mask_op *op, int32_t agent)
{
    char what[320];
    const char *name = env->actions[op->first].name;
    if (op->count > 1)
        snprintf(what, sizeof what, "legality of %s..%s, agent %d", name,
                 env->actions[op->first + op->count - 1].name, agent);
    else
        snprintf(what, sizeof what, "legality of %s, agent %d", name, agent);
    polis__place_error(env, op->ctx, env->cb_status, what);
    return env->cb_status;
}

static polis_status write_observations(polis_env *env)
{
    polis_status st = run_hooks(env, POLIS_PHASE_OBSERVE);
    if (st != POLIS_OK) return st;
    polis_io *io = &env->io;
    env->cb_status = POLIS_OK;
    int32_t n_fields = env->no_obs ? 0 : env->n_obs; /* masks are still written below */
    /* shared fields first: one write each, agent -1 (host API "shared_observations") */
    for (int32_t f = 0; f < (env->no_obs ? 0 : env->n_shared); f++) {
        const polis__obs *o = &env->shared[f];
        env->current = o->ctx;
        o->write(o->ctx, o->ud, -1, env->shared_obs + o->offset);
        if (env->cb_status != POLIS_OK) {
            char what[160];
            snprintf(what, sizeof what, "shared observation %s", o->name);
            polis__place_error(env, o->ctx, env->cb_status, what);
            return env->cb_status;
        }
    }
    for (int32_t f = 0; f < n_fields; f++) {
        polis__obs *o = &env->obs[f];
        env->current = o->ctx;
        uint8_t *dst = io->obs + o->offset;
        if (o->shadow && o->narrow_count < POLIS__NARROW_SMALL) {
            /* a position, a clock: every agent written, then all narrowed in one pass (reports
             * do nothing: env->narrowing is NULL) */
            uint8_t *sh = o->shadow;
            for (int32_t a = 0; a < io->n_agents && env->cb_status == POLIS_OK;
                 a++, sh += o->nbytes)
                o->write(o->ctx, o->ud, a, sh);
            if (env->cb_status == POLIS_OK) env->cb_status = narrow_small_rows(env, o, dst);
        } else if (o->shadow) {
            /* reports of changes count when every row holds the previous write narrowed */
            const bool reports = o->narrow_synced == io->obs;
            o->narrow_synced = NULL;
            uint8_t *sh = o->shadow;
            for (int32_t a = 0; a < io->n_agents && env->cb_status == POLIS_OK;
                 a++, dst += io->obs_size, sh += o->nbytes) {
                env->narrowing = reports ? o : NULL;
                env->narrowing_dst = dst;
                env->narrowing_agent = a;
                env->narrowing_reported = false;
                o->write(o->ctx, o->ud, a, sh);
                env->narrowing = NULL;
                if (env->cb_status == POLIS_OK && !env->narrowing_reported)
                    env->cb_status = narrow_field(env, o, a, dst);
            }
            if (env->cb_status == POLIS_OK) o->narrow_synced = io->obs;
        } else {
            for (int32_t a = 0; a < io->n_agents; a++, dst += io->obs_size)
                o->write(o->ctx, o->ud, a, dst);
        }
        if (env->cb_status != POLIS_OK) {
            char what[160];
            snprintf(what, sizeof what, "observation %s", o->name);
            polis__place_error(env, o->ctx, env->cb_status, what);
            return env->cb_status;
        }
    }
    for (int32_t a = 0; a < io->n_agents; a++) {
        uint8_t *row = io->masks + (size_t)a * (size_t)io->n_actions;
        row[0] = 1;
        if (agent_done(env, a)) {
            memset(row + 1, 0, (size_t)io->n_actions - 1);
            continue;
        }
        /* the mask pass registry_freeze built (registry.h): a memset per run of always-legal
         * actions, a call per family, group or other action with a legality function */
        for (const polis__mask_op *op = env->mask_ops, *end = op + env->n_mask_ops; op < end;
             op++) {
            switch (op->kind) {
            case POLIS__MASK_ONES: memset(row + op->first, 1, (size_t)op->count); continue;
            case POLIS__MASK_LEGAL:
                row[op->first] = (uint8_t)op->fn.legal(op->ctx, op->ud, a, op->arg);
                break;
            default: op->fn.row(op->ctx, op->ud, a, row + op->first); break;
            }
            if (env->cb_status != POLIS_OK) return mask_error(env, op, a);
        }
        for (int32_t f = 0; f < env->n_mask_filters; f++) {
            const polis__mask_filter *mf = &env->mask_filters[f];
            env->current = mf->ctx;
            mf->fn(mf->ctx, mf->ud, a, row);
        }
        row[0] = 1;
    }
    env->current = NULL;
    return POLIS_OK;
}

static void update_done(polis_env *env)
{
    for (int32_t a = 0; a < env->n_agents; a++)
        if (!agent_done(env, a)) return;
    env->state = POLIS__ENV_DONE;
}

polis_status polis_env_reset(polis_env *env, uint64_t seed)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (env->state == POLIS__ENV_LOADING)
        return polis__fail(env, POLIS_ERR_STATE, "reset: the env was not created completely");
    polis_status st;
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->prereset && (st = (*m)->prereset(env, seed)) != POLIS_OK) {
            if (env->state != POLIS__ENV_LOADING) env->state = POLIS__ENV_BROKEN;
            return st;
        }
    env->tick = 0;
    env->episode++;
    /* Stream constant: "polis" in ASCII, so the env stream differs from callers' own PCG32
     * generators seeded with the same number on the default stream. */
    polis_rng_seed(&env->rng, seed, POLIS__ENV_STREAM);
    polis_io *io = &env->io;
    memset(io->rewards, 0, sizeof(float) * (size_t)io->n_agents);
    memset(io->terminations, 0, (size_t)io->n_agents);
    memset(io->truncations, 0, (size_t)io->n_agents);
    memset(io->illegal, 0, (size_t)io->n_agents);
    memset(io->actions, 0, sizeof(int32_t) * (size_t)io->n_agents);
    if (env->n_rewards)
        memset(env->reward_components, 0,
               sizeof(float) * (size_t)env->n_rewards * (size_t)env->n_agents);
    polis__bus_reset(env);
    polis__entities_reset(env);
    polis__grid_clear(env);
    for (int32_t a = 0; a < env->n_agents; a++) {
        if ((st = polis__entity_create(env, &env->agent_entities[a])) != POLIS_OK) goto fail;
    }
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->reset) (*m)->reset(env, seed);
    env->state = POLIS__ENV_RUNNING;
    if ((st = run_hooks(env, POLIS_PHASE_RESET)) != POLIS_OK) goto fail;
    if ((st = write_observations(env)) != POLIS_OK) goto fail;
    return POLIS_OK;
fail:
    env->state = POLIS__ENV_BROKEN;
    polis__bus_reset(env);
    return st;
}

polis_status polis_env_step(polis_env *env)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    switch (env->state) {
    case POLIS__ENV_RUNNING: break;
    case POLIS__ENV_DONE:
        return polis__fail(env, POLIS_ERR_STATE,
                           "step: the episode is over (tick %lld); call reset",
                           (long long)env->tick);
    case POLIS__ENV_BROKEN:
        return polis__fail(env, POLIS_ERR_STATE,
                           "step: the previous step or reset failed; call reset");
    default: return polis__fail(env, POLIS_ERR_STATE, "step: call reset before the first step");
    }
    polis_io *io = &env->io;
    /* Validate every action before anything runs, so a bad action leaves the env untouched. */
    for (int32_t a = 0; a < io->n_agents; a++) {
        int32_t act = io->actions[a];
        if (act < 0 || act >= io->n_actions)
            return polis__fail(env, POLIS_ERR_ACTION,
                               "step: agent %d (%s): action %d is outside [0, %d) at tick %lld", a,
                               env->scn.agent_names[a], act, io->n_actions, (long long)env->tick);
    }
    polis_status st;
    memset(io->illegal, 0, (size_t)io->n_agents);
    memset(io->rewards, 0, sizeof(float) * (size_t)io->n_agents);

    env->n_order = 0;
    for (int32_t a = 0; a < io->n_agents; a++)
        if (!agent_done(env, a)) env->order[env->n_order++] = a;
    env->in_begin = true;
    st = run_hooks(env, POLIS_PHASE_BEGIN);
    env->in_begin = false;
    if (st != POLIS_OK) goto fail;

    for (int32_t i = 0; i < env->n_order; i++) {
        int32_t a = env->order[i];
        if (agent_done(env, a)) continue;
        int32_t act = io->actions[a];
        if (act == 0) continue;
        if (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)act]) {
            io->illegal[a] = 1;
            continue;
        }
        const polis__action *ac = &env->actions[act];
        env->current = ac->ctx;
        st = ac->handler(ac->ctx, ac->ud, a, ac->arg);
        if (st == POLIS_ERR_ACTION) {
            io->illegal[a] = 1;
            polis__clear_error(env);
        } else if (st != POLIS_OK) {
            char what[160];
            snprintf(what, sizeof what, "action %s, agent %d (%s)", ac->name, a,
                     env->scn.agent_names[a]);
            polis__place_error(env, ac->ctx, st, what);
            goto fail;
        }
    }
    if ((st = run_hooks(env, POLIS_PHASE_RESOLVE)) != POLIS_OK) goto fail;
    if ((st = run_hooks(env, POLIS_PHASE_WORLD)) != POLIS_OK) goto fail;
    if ((st = run_hooks(env, POLIS_PHASE_POST)) != POLIS_OK) goto fail;

    for (int32_t r = 0; r < env->n_rewards; r++) {
        const polis__reward *rf = &env->rewards[r];
        float *row = env->reward_components + (size_t)r * (size_t)io->n_agents;
        memset(row, 0, sizeof(float) * (size_t)io->n_agents);
        env->current = rf->ctx;
        if ((st = rf->fn(rf->ctx, rf->ud, row)) != POLIS_OK) {
            char what[96];
            snprintf(what, sizeof what, "reward %s", rf->name);
            polis__place_error(env, rf->ctx, st, what);
            goto fail;
        }
        float w = rf->weight;
        for (int32_t a = 0; a < io->n_agents; a++) io->rewards[a] += w * row[a];
    }
    for (int32_t t = 0; t < env->n_transforms; t++) {
        const polis__transform *tf = &env->transforms[t];
        env->current = tf->ctx;
        if ((st = tf->fn(tf->ctx, tf->ud, io->rewards)) != POLIS_OK) {
            char what[96];
            snprintf(what, sizeof what, "reward transform %s", tf->name);
            polis__place_error(env, tf->ctx, st, what);
            goto fail;
        }
    }
    if ((st = run_hooks(env, POLIS_PHASE_END)) != POLIS_OK) goto fail;
    if (env->tick + 1 >= env->max_steps)
        for (int32_t a = 0; a < io->n_agents; a++)
            if (!io->terminations[a]) io->truncations[a] = 1;
    env->tick++;
    if ((st = write_observations(env)) != POLIS_OK) {
        env->tick--;
        goto fail;
    }
    update_done(env);
    return POLIS_OK;
fail:
    env->current = NULL;
    env->state = POLIS__ENV_BROKEN;
    polis__bus_reset(env);
    return st;
}

/* ---- accessors --------------------------------------------------------------------------- */

const char *polis_env_error(const polis_env *env) { return env ? env->err : "env is NULL"; }
uint64_t polis_env_default_seed(const polis_env *env) { return env->scn.seed; }
int64_t polis_env_tick(const polis_env *env) { return env->tick; }
int64_t polis_env_episode(const polis_env *env) { return env->episode; }
int64_t polis_env_max_steps(const polis_env *env) { return env->max_steps; }
bool polis_env_done(const polis_env *env) { return env->state == POLIS__ENV_DONE; }
const char *polis_env_name(const polis_env *env) { return env->scn.name; }
const polis_io *polis_env_io(polis_env *env) { return &env->io; }
int32_t polis_env_n_agents(const polis_env *env) { return env->n_agents; }

const char *polis_env_agent_name(const polis_env *env, int32_t agent)
{
    return agent >= 0 && agent < env->n_agents ? env->scn.agent_names[agent] : NULL;
}

int32_t polis_env_n_actions(const polis_env *env) { return env->n_actions; }

const char *polis_env_action_name(const polis_env *env, int32_t action)
{
    return action >= 0 && action < env->n_actions ? env->actions[action].name : NULL;
}

const char *polis_env_action_doc(const polis_env *env, int32_t action)
{
    return action >= 0 && action < env->n_actions ? env->actions[action].doc : NULL;
}

int32_t polis_env_action_id(const polis_env *env, const char *name)
{
    if (!name) return -1;
    for (int32_t i = 0; i < env->n_actions; i++)
        if (strcmp(env->actions[i].name, name) == 0) return i;
    return -1;
}

int32_t polis_env_n_obs_fields(const polis_env *env) { return env->n_obs; }

polis_status polis_env_obs_field(const polis_env *env, int32_t i, polis_obs_field *out)
{
    if (i < 0 || i >= env->n_obs || !out) return POLIS_ERR_INVALID;
    const polis__obs *o = &env->obs[i];
    out->name = o->name;
    out->doc = o->doc;
    out->dtype = o->out_dtype;
    out->ndim = o->ndim;
    memcpy(out->shape, o->shape, sizeof out->shape);
    out->offset = o->offset;
    out->nbytes = o->out_nbytes;
    return POLIS_OK;
}

int32_t polis_env_n_shared_fields(const polis_env *env) { return env ? env->n_shared : 0; }

polis_status polis_env_shared_field(const polis_env *env, int32_t i, polis_obs_field *out)
{
    if (!env || i < 0 || i >= env->n_shared || !out) return POLIS_ERR_INVALID;
    const polis__obs *o = &env->shared[i];
    *out = (polis_obs_field){.name = o->name,
                             .doc = o->doc,
                             .dtype = o->dtype,
                             .ndim = o->ndim,
                             .offset = o->offset,
                             .nbytes = o->nbytes};
    memcpy(out->shape, o->shape, sizeof out->shape);
    return POLIS_OK;
}

int32_t polis_env_shared_find(const polis_env *env, const char *name)
{
    if (!env || !name) return -1;
    for (int32_t i = 0; i < env->n_shared; i++)
        if (strcmp(env->shared[i].name, name) == 0) return i;
    return -1;
}

const void *polis_env_shared_obs(const polis_env *env, size_t *size)
{
    if (size) *size = env && env->shared_obs ? env->shared_size : 0;
    return env ? env->shared_obs : NULL;
}

polis_status polis_env_obs_field_range(const polis_env *env, int32_t i, int32_t *dim, int32_t *n,
                                       const double **lo, const double **hi)
{
    if (!env || i < 0 || i >= env->n_obs || !dim || !n || !lo || !hi) return POLIS_ERR_INVALID;
    const polis__obs *o = &env->obs[i];
    *dim = o->range_n ? o->range_dim : -1;
    *n = o->range_n;
    *lo = o->range_lo;
    *hi = o->range_hi;
    return POLIS_OK;
}

polis_dtype polis_env_obs_field_written_dtype(const polis_env *env, int32_t i)
{
    return env && i >= 0 && i < env->n_obs ? env->obs[i].dtype : (polis_dtype)-1;
}

size_t polis_dtype_size(polis_dtype t)
{
    switch (t) {
    case POLIS_DTYPE_U8:
    case POLIS_DTYPE_I8: return 1;
    case POLIS_DTYPE_I16: return 2;
    case POLIS_DTYPE_I32:
    case POLIS_DTYPE_F32: return 4;
    }
    return 0;
}

const char *polis_dtype_name(polis_dtype t)
{
    switch (t) {
    case POLIS_DTYPE_U8: return "u8";
    case POLIS_DTYPE_I8: return "i8";
    case POLIS_DTYPE_I16: return "i16";
    case POLIS_DTYPE_I32: return "i32";
    case POLIS_DTYPE_F32: return "f32";
    }
    return NULL;
}

int32_t polis_env_n_reward_fns(const polis_env *env) { return env->n_rewards; }

const char *polis_env_reward_fn_name(const polis_env *env, int32_t i)
{
    return i >= 0 && i < env->n_rewards ? env->rewards[i].name : NULL;
}

const float *polis_env_reward_components(const polis_env *env) { return env->reward_components; }

/* FNV-1a over the observable state, so golden tests catch any behaviour change. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int32_t polis_env_state_parts(const polis_env *env, const void *ptr[POLIS_STATE_PARTS],
                              size_t len[POLIS_STATE_PARTS])
{
    const polis_io *io = &env->io;
    size_t n = (size_t)io->n_agents;
    int32_t k = 0;
#define PART(p, l) (ptr[k] = (p), len[k++] = (l))
    PART(&env->tick, sizeof env->tick);
    PART(io->obs, n * io->obs_size);
    PART(io->masks, n * (size_t)io->n_actions);
    PART(io->rewards, n * sizeof(float));
    PART(io->terminations, n);
    PART(io->truncations, n);
    if (env->shared_obs) PART(env->shared_obs, env->shared_size);
    if (env->grid.cells)
        PART(env->grid.cells, sizeof(int32_t) * (size_t)env->grid.width * (size_t)env->grid.height *
                                  (size_t)env->grid.layers);
#undef PART
    return k;
}

uint64_t polis_env_state_hash(const polis_env *env)
{
    const void *ptr[POLIS_STATE_PARTS];
    size_t len[POLIS_STATE_PARTS];
    int32_t k = polis_env_state_parts(env, ptr, len);
    uint64_t h = 14695981039346656037ULL;
    for (int32_t i = 0; i < k; i++) h = fnv(h, ptr[i], len[i]);
    return h;
}
