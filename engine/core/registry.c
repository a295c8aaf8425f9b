/*
 * registry.c — plugin contexts, the host table plugins and scripts call, and the freeze that
 * turns the growable registries into the flat per-phase arrays and buffers the step loop
 * runs on.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define h_error polis__ctx_error

/* ---- contexts -------------------------------------------------------------------------- */

polis_ctx *polis__ctx_new(polis_env *env, int32_t kind, const char *name)
{
    if (polis__grow(env, (void **)&env->ctxs, &env->cap_ctxs, env->n_ctxs, sizeof(polis_ctx *)))
        return NULL;
    polis_ctx *ctx = polis__alloc(env, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->name = polis__strdup(env, name);
    if (!ctx->name) {
        polis__free(env, ctx, sizeof *ctx);
        return NULL;
    }
    ctx->head.host = polis__host();
    ctx->env = env;
    ctx->kind = kind;
    ctx->index = env->n_ctxs;
    env->ctxs[env->n_ctxs++] = ctx;
    return ctx;
}

polis_ctx *polis__ctx_find(polis_env *env, const char *name)
{
    for (int32_t i = 0; i < env->n_ctxs; i++)
        if (strcmp(env->ctxs[i]->name, name) == 0) return env->ctxs[i];
    return NULL;
}

static const char *phase_names[POLIS_PHASE_COUNT] = {"reset", "begin", "resolve", "world",
                                                     "post",  "end",   "observe"};

const char *polis__phase_name(polis_phase p)
{
    return (unsigned)p < POLIS_PHASE_COUNT ? phase_names[p] : "?";
}

int32_t polis__phase_parse(const char *name)
{
    for (int32_t i = 0; i < POLIS_PHASE_COUNT; i++)
        if (name && strcmp(phase_names[i], name) == 0) return i;
    return -1;
}

/* ---- host: errors, identity, time --------------------------------------------------------- */

_Thread_local polis__err_buf *polis__draw_err;

/* The host's error(): "<plugin>: <message>" into env->err (scene.c's registrations too), or
 * the drawing thread's buffer (polis__draw_err). */
void polis__ctx_error(polis_ctx *ctx, const char *fmt, ...)
{
    polis__err_buf *d = polis__draw_err;
    if (d) {
        int n = snprintf(d->p, d->cap, "%s: ", ctx->name);
        if (n < 0 || (size_t)n >= d->cap) n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->p + n, d->cap - (size_t)n, fmt, ap);
        va_end(ap);
        return;
    }
    polis_env *env = ctx->env;
    int n = snprintf(env->err, sizeof env->err, "%s: ", ctx->name);
    if (n < 0 || (size_t)n >= sizeof env->err) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(env->err + n, sizeof env->err - (size_t)n, fmt, ap);
    va_end(ap);
    env->err_placed = false;
}

static void h_log(polis_ctx *ctx, const char *fmt, ...)
{
    polis_env *env = ctx->env;
    if (!env->log) return;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "[%s] ", ctx->name);
    if (n < 0 || (size_t)n >= sizeof buf) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    env->log(env->log_ud, buf);
}

static const char *h_plugin_name(polis_ctx *ctx) { return ctx->name; }
static int32_t h_n_agents(polis_ctx *ctx) { return ctx->env->n_agents; }

static const char *h_agent_name(polis_ctx *ctx, int32_t agent)
{
    return polis_env_agent_name(ctx->env, agent);
}

static int64_t h_tick(polis_ctx *ctx) { return ctx->env->tick; }
static int64_t h_episode(polis_ctx *ctx) { return ctx->env->episode; }
static int64_t h_max_steps(polis_ctx *ctx) { return ctx->env->max_steps; }
static polis_rng *h_rng(polis_ctx *ctx) { return &ctx->env->rng; }
static const polis_io *h_io(polis_ctx *ctx) { return &ctx->env->io; }

/* ---- host: registration -------------------------------------------------------------------- */

static polis_status closed(polis_ctx *ctx, const char *what)
{
    if (ctx->env->state == POLIS__ENV_LOADING) return POLIS_OK;
    h_error(ctx,
            "%s: registration is closed once the env is created (register in init or "
            "start)",
            what);
    return POLIS_ERR_STATE;
}

/* Names users type in scenarios and action strings: printable, no spaces, bounded. */
static polis_status check_name(polis_ctx *ctx, const char *kind, const char *name)
{
    if (!name || !*name) {
        h_error(ctx, "%s name is empty", kind);
        return POLIS_ERR_INVALID;
    }
    size_t n = strlen(name);
    if (n > 127) {
        h_error(ctx, "%s name \"%.32s...\" is longer than 127 characters", kind, name);
        return POLIS_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 127 || c == '"' || c == '\\') {
            h_error(ctx,
                    "%s name \"%s\" has a character that is not allowed at %zu (use "
                    "letters, digits and punctuation without spaces or quotes)",
                    kind, name, i);
            return POLIS_ERR_INVALID;
        }
    }
    return POLIS_OK;
}

/* Index of the record in base[0..n) whose `char *name` member (at name_off) is `name`, or
 * -1. Registries are small and searched only at load time. */
static int32_t find_named(const void *base, int32_t n, size_t stride, size_t name_off,
                          const char *name)
{
    const char *p = base;
    for (int32_t i = 0; i < n; i++, p += stride) {
        const char *rec_name;
        memcpy(&rec_name, p + name_off, sizeof rec_name);
        if (strcmp(rec_name, name) == 0) return i;
    }
    return -1;
}

static polis_status duplicate(polis_ctx *ctx, const char *kind, const char *name,
                              const polis_ctx *owner, const char *verb)
{
    h_error(ctx, "%s \"%s\" is already %s by %s", kind, name, verb, owner ? owner->name : "polis");
    return POLIS_ERR_INVALID;
}

static polis_status h_hook(polis_ctx *ctx, polis_phase phase, int32_t priority, polis_hook_fn fn,
                           void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "hook");
    if (st) return st;
    if ((unsigned)phase >= POLIS_PHASE_COUNT || !fn) {
        h_error(ctx, "hook: %s", fn ? "unknown phase" : "function is NULL");
        return POLIS_ERR_INVALID;
    }
    if ((st = polis__grow(env, (void **)&env->hooks, &env->cap_hooks, env->n_hooks,
                          sizeof *env->hooks)))
        return st;
    env->hooks[env->n_hooks++] = (polis__hook){.phase = phase,
                                               .priority = priority,
                                               .seq = env->reg_seq++,
                                               .fn = fn,
                                               .ud = ud,
                                               .ctx = ctx};
    return POLIS_OK;
}

static polis_status h_action(polis_ctx *ctx, const polis_action_def *def, int32_t *out_id)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "action");
    if (st) return st;
    if (!def || !def->handler) {
        h_error(ctx, "action %s: %s", def && def->name ? def->name : "?",
                def ? "handler is NULL" : "definition is NULL");
        return POLIS_ERR_INVALID;
    }
    if ((st = check_name(ctx, "action", def->name))) return st;
    int32_t dup = find_named(env->actions, env->n_actions, sizeof *env->actions,
                             offsetof(polis__action, name), def->name);
    if (dup >= 0) return duplicate(ctx, "action", def->name, env->actions[dup].ctx, "registered");
    if ((st = polis__grow(env, (void **)&env->actions, &env->cap_actions, env->n_actions,
                          sizeof *env->actions)))
        return st;
    polis__action *a = &env->actions[env->n_actions];
    a->name = polis__strdup(env, def->name);
    a->doc = polis__strdup(env, def->doc ? def->doc : "");
    if (!a->name || !a->doc) {
        polis__strfree(env, a->name);
        polis__strfree(env, a->doc);
        memset(a, 0, sizeof *a);
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    a->handler = def->handler;
    a->legal = def->legal;
    a->arg = def->arg;
    a->ud = def->ud;
    a->ctx = ctx;
    a->legal_ctx = ctx;
    a->legal_ud = def->ud;
    a->family_count = 0;
    a->legal_row = NULL;
    a->group_count = 0;
    a->group_row = NULL;
    a->grouped = false;
    if (out_id) *out_id = env->n_actions;
    env->n_actions++;
    return POLIS_OK;
}

/* Whether `name` is "<prefix>_<i>" with i in [0, count) written as %d writes it, i.e. a
 * name the family would register. One pass over the registry instead of one search per
 * member keeps registering P-sized families O(P) per family. */
static bool family_member(const char *name, const char *prefix, size_t plen, int32_t count)
{
    if (strncmp(name, prefix, plen) != 0 || name[plen] != '_') return false;
    const char *d = name + plen + 1;
    if (!*d || (d[0] == '0' && d[1])) return false;
    int64_t v = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return false;
        v = v * 10 + (*d - '0');
        if (v >= count) return false;
    }
    return true;
}

static polis_status h_action_family(polis_ctx *ctx, const polis_action_family_def *def,
                                    int32_t *out_first_id)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "action_family");
    if (st) return st;
    if (!def) {
        h_error(ctx, "action_family: definition is NULL");
        return POLIS_ERR_INVALID;
    }
    const char *prefix = def->prefix ? def->prefix : "?";
    if (!def->handler) {
        h_error(ctx, "action_family %s: handler is NULL", prefix);
        return POLIS_ERR_INVALID;
    }
    if (def->count < 1) {
        h_error(ctx, "action_family %s: count %d is not positive", prefix, (int)def->count);
        return POLIS_ERR_INVALID;
    }
    if ((st = check_name(ctx, "action family", def->prefix))) return st;
    char name[160];
    /* the longest member name is the last one's */
    snprintf(name, sizeof name, "%s_%d", def->prefix, (int)(def->count - 1));
    if ((st = check_name(ctx, "action", name))) return st;
    size_t plen = strlen(def->prefix);
    for (int32_t i = 0; i < env->n_actions; i++)
        if (family_member(env->actions[i].name, def->prefix, plen, def->count))
            return duplicate(ctx, "action", env->actions[i].name, env->actions[i].ctx,
                             "registered");
    if (env->n_actions > INT32_MAX - def->count)
        return polis__fail(env, POLIS_ERR_LIMIT, "registry too large");
    if ((st = polis__grow(env, (void **)&env->actions, &env->cap_actions,
                          env->n_actions + def->count - 1, sizeof *env->actions)))
        return st;
    int32_t first = env->n_actions;
    for (int32_t i = 0; i < def->count; i++) {
        char doc[256];
        doc[0] = '\0';
        if (def->doc) {
            def->doc(ctx, def->ud, i, doc, sizeof doc);
            doc[sizeof doc - 1] = '\0';
        }
        snprintf(name, sizeof name, "%s_%d", def->prefix, (int)i);
        polis__action *a = &env->actions[first + i];
        a->name = polis__strdup(env, name);
        a->doc = polis__strdup(env, def->doc ? doc : def->doc_text ? def->doc_text : "");
        if (!a->name || !a->doc) {
            /* a failure registers nothing: drop the members made so far */
            for (int32_t k = first; k <= first + i; k++) {
                polis__strfree(env, env->actions[k].name);
                polis__strfree(env, env->actions[k].doc);
                memset(&env->actions[k], 0, sizeof env->actions[k]);
            }
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        }
        a->handler = def->handler;
        a->legal = NULL;
        a->arg = i;
        a->ud = def->ud;
        a->ctx = ctx;
        a->legal_ctx = ctx;
        a->legal_ud = def->ud;
        a->family_count = i == 0 ? def->count : 0;
        a->legal_row = i == 0 ? def->legal_row : NULL;
        a->group_count = 0;
        a->group_row = NULL;
        a->grouped = false;
    }
    env->n_actions = first + def->count;
    if (out_first_id) *out_first_id = first;
    return POLIS_OK;
}

/* The "actions" host API's legal_rows (plugin.h): checks everything before marking any
 * member, so a refused group changes nothing. */
polis_status polis__legal_rows(polis_ctx *ctx, int32_t first, int32_t count,
                               polis_legal_rows_fn row, void *ud)
{
    if (!ctx) return POLIS_ERR_INVALID;
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "legal_rows");
    if (st) return st;
    if (!row) {
        h_error(ctx, "legal_rows: the row function is NULL");
        return POLIS_ERR_INVALID;
    }
    if (count < 1 || first < 0 || first >= env->n_actions || count > env->n_actions - first) {
        /* 64-bit: first + count may overflow an int32_t */
        h_error(ctx, "legal_rows: actions %lld..%lld: expected count >= 1 and ids in 0..%d",
                (long long)first, (long long)first + count - 1, (int)env->n_actions - 1);
        return POLIS_ERR_INVALID;
    }
    for (int32_t k = 0; k < env->n_actions; k++) {
        const polis__action *a = &env->actions[k];
        if (k >= first && k < first + count) {
            if (a->ctx != ctx) {
                h_error(ctx, "legal_rows: action %s (%d) is registered by %s, not by this plugin",
                        a->name, (int)k, a->ctx ? a->ctx->name : "polis");
                return POLIS_ERR_INVALID;
            }
            if (a->grouped) {
                h_error(ctx, "legal_rows: action %s (%d) is already in a legality group", a->name,
                        (int)k);
                return POLIS_ERR_INVALID;
            }
        }
        /* a family overlapping the range, its first member before or inside it */
        if (a->family_count && k < first + count && k + a->family_count > first) {
            h_error(ctx,
                    "legal_rows: action %s (%d) belongs to the action family %s..%s, whose "
                    "mask comes from its own row function",
                    env->actions[k > first ? k : first].name, (int)(k > first ? k : first), a->name,
                    env->actions[k + a->family_count - 1].name);
            return POLIS_ERR_INVALID;
        }
    }
    for (int32_t k = first; k < first + count; k++) {
        polis__action *a = &env->actions[k];
        a->grouped = true;
        a->group_legal = a->legal;
        a->group_legal_ud = a->legal_ud;
    }
    polis__action *a = &env->actions[first];
    a->group_count = count;
    a->group_row = row;
    a->group_ctx = ctx;
    a->group_ud = ud;
    return POLIS_OK;
}

/* Appends one op to the mask pass, or, with ops NULL, only counts it. A run of always-legal
 * actions right after another one joins it (one memset). */
static void mask_op_add(polis__mask_op *ops, int32_t *n, const polis__mask_op *op)
{
    if (op->kind == POLIS__MASK_ONES && *n > 0 && ops) {
        polis__mask_op *prev = &ops[*n - 1];
        if (prev->kind == POLIS__MASK_ONES && prev->first + prev->count == op->first) {
            prev->count += op->count;
            return;
        }
    }
    if (ops) ops[*n] = *op;
    (*n)++;
}

/* The op that asks action k alone: a memset of one byte when it has no legality function. */
static polis__mask_op single_op(const polis__action *a, int32_t k)
{
    if (!a->legal) return (polis__mask_op){.kind = POLIS__MASK_ONES, .first = k, .count = 1};
    return (polis__mask_op){.kind = POLIS__MASK_LEGAL,
                            .first = k,
                            .count = 1,
                            .arg = a->arg,
                            .fn.legal = a->legal,
                            .ctx = a->legal_ctx,
                            .ud = a->legal_ud};
}

/* Walks the actions into the mask pass: a family's row writer, a group's row writer followed
 * by its members whose legality was replaced since they were grouped (swap.c), runs of
 * always-legal actions, single legality calls. Counts only when ops is NULL (one op per
 * action at most, plus one per group). */
static int32_t mask_ops_build(const polis_env *env, polis__mask_op *ops)
{
    int32_t n = 0;
    for (int32_t k = 0; k < env->n_actions;) {
        const polis__action *a = &env->actions[k];
        if (a->family_count) {
            polis__mask_op op = {.kind = a->legal_row ? POLIS__MASK_ROW : POLIS__MASK_ONES,
                                 .first = k,
                                 .count = a->family_count,
                                 .fn.row = a->legal_row,
                                 .ctx = a->legal_ctx,
                                 .ud = a->legal_ud};
            mask_op_add(ops, &n, &op);
            k += a->family_count;
        } else if (a->group_count) {
            polis__mask_op op = {.kind = POLIS__MASK_ROW,
                                 .first = k,
                                 .count = a->group_count,
                                 .fn.row = a->group_row,
                                 .ctx = a->group_ctx,
                                 .ud = a->group_ud};
            mask_op_add(ops, &n, &op);
            for (int32_t j = k; j < k + a->group_count; j++) {
                const polis__action *m = &env->actions[j];
                if (m->legal == m->group_legal && m->legal_ud == m->group_legal_ud &&
                    m->legal_ctx == m->ctx)
                    continue;
                polis__mask_op own = single_op(m, j);
                mask_op_add(ops, &n, &own);
            }
            k += a->group_count;
        } else {
            polis__mask_op op = single_op(a, k);
            mask_op_add(ops, &n, &op);
            k++;
        }
    }
    return n;
}

/* Registers a per-agent field (env->obs) or a shared one (env->shared, host API
 * "shared_observations"): the same checks, one name space over both. */
static polis_status obs_register(polis_ctx *ctx, const polis_obs_def *def, int32_t *out_id,
                                 bool shared)
{
    polis_env *env = ctx->env;
    const char *kind = shared ? "shared observation" : "observation";
    polis_status st = closed(ctx, kind);
    if (st) return st;
    if (!def || !def->write) {
        h_error(ctx, "%s %s: %s", kind, def && def->name ? def->name : "?",
                def ? "write function is NULL" : "definition is NULL");
        return POLIS_ERR_INVALID;
    }
    if ((st = check_name(ctx, kind, def->name))) return st;
    if (polis_dtype_name(def->dtype) == NULL) {
        h_error(ctx, "%s %s: unknown dtype %d", kind, def->name, (int)def->dtype);
        return POLIS_ERR_INVALID;
    }
    if (def->ndim < 1 || def->ndim > 4) {
        h_error(ctx, "%s %s: ndim %d is outside [1, 4]", kind, def->name, def->ndim);
        return POLIS_ERR_INVALID;
    }
    size_t count = 1;
    for (int32_t d = 0; d < def->ndim; d++) {
        if (def->shape[d] < 1 || def->shape[d] > (1 << 24)) {
            h_error(ctx, "%s %s: shape[%d] = %d is outside [1, 16777216]", kind, def->name, d,
                    def->shape[d]);
            return POLIS_ERR_INVALID;
        }
        count *= (size_t)def->shape[d];
        if (count > ((size_t)1 << 28)) {
            h_error(ctx, "%s %s: more than 2^28 elements%s", kind, def->name,
                    shared ? "" : " per agent");
            return POLIS_ERR_INVALID;
        }
    }
    int32_t dup =
        find_named(env->obs, env->n_obs, sizeof *env->obs, offsetof(polis__obs, name), def->name);
    if (dup >= 0)
        return duplicate(ctx, kind, def->name, env->obs[dup].ctx,
                         shared ? "registered (per agent)" : "registered");
    dup = find_named(env->shared, env->n_shared, sizeof *env->shared, offsetof(polis__obs, name),
                     def->name);
    if (dup >= 0)
        return duplicate(ctx, kind, def->name, env->shared[dup].ctx,
                         shared ? "registered" : "registered (shared)");
    polis__obs **arr = shared ? &env->shared : &env->obs;
    int32_t *n = shared ? &env->n_shared : &env->n_obs;
    if ((st = polis__grow(env, (void **)arr, shared ? &env->cap_shared : &env->cap_obs, *n,
                          sizeof **arr)))
        return st;
    polis__obs *o = &(*arr)[*n];
    o->name = polis__strdup(env, def->name);
    o->doc = polis__strdup(env, def->doc ? def->doc : "");
    if (!o->name || !o->doc) {
        polis__strfree(env, o->name);
        polis__strfree(env, o->doc);
        memset(o, 0, sizeof *o);
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    o->dtype = def->dtype;
    o->ndim = def->ndim;
    memcpy(o->shape, def->shape, sizeof o->shape);
    for (int32_t d = def->ndim; d < 4; d++) o->shape[d] = 0;
    o->nbytes = count * polis_dtype_size(def->dtype);
    o->out_dtype = o->dtype;
    o->out_nbytes = o->nbytes;
    o->writes_stored = false;
    o->range_dim = -1;
    o->write = def->write;
    o->ud = def->ud;
    o->ctx = ctx;
    if (out_id) *out_id = *n;
    (*n)++;
    return POLIS_OK;
}

static polis_status h_observation(polis_ctx *ctx, const polis_obs_def *def, int32_t *out_id)
{
    return obs_register(ctx, def, out_id, false);
}

polis_status polis__shared_field(polis_ctx *ctx, const polis_obs_def *def, int32_t *out_id)
{
    if (!ctx) return POLIS_ERR_INVALID;
    return obs_register(ctx, def, out_id, true);
}

static polis_status h_reward(polis_ctx *ctx, const char *name, polis_reward_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "reward");
    if (st) return st;
    if ((st = check_name(ctx, "reward", name))) return st;
    if (!fn) {
        h_error(ctx, "reward %s: function is NULL", name);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = find_named(env->rewards, env->n_rewards, sizeof *env->rewards,
                             offsetof(polis__reward, name), name);
    if (dup >= 0)
        return duplicate(ctx, "reward function", name, env->rewards[dup].ctx, "registered");
    if ((st = polis__grow(env, (void **)&env->rewards, &env->cap_rewards, env->n_rewards,
                          sizeof *env->rewards)))
        return st;
    polis__reward *r = &env->rewards[env->n_rewards];
    if (!(r->name = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    r->fn = fn;
    r->ud = ud;
    r->ctx = ctx;
    r->weight = 1.0f;
    env->n_rewards++;
    return POLIS_OK;
}

static polis_status h_reward_transform(polis_ctx *ctx, const char *name, int32_t priority,
                                       polis_transform_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "reward_transform");
    if (st) return st;
    if ((st = check_name(ctx, "reward transform", name))) return st;
    if (!fn) {
        h_error(ctx, "reward transform %s: function is NULL", name);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = find_named(env->transforms, env->n_transforms, sizeof *env->transforms,
                             offsetof(polis__transform, name), name);
    if (dup >= 0)
        return duplicate(ctx, "reward transform", name, env->transforms[dup].ctx, "registered");
    if ((st = polis__grow(env, (void **)&env->transforms, &env->cap_transforms, env->n_transforms,
                          sizeof *env->transforms)))
        return st;
    polis__transform *t = &env->transforms[env->n_transforms];
    if (!(t->name = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    t->priority = priority;
    t->seq = env->reg_seq++;
    t->fn = fn;
    t->ud = ud;
    t->ctx = ctx;
    env->n_transforms++;
    return POLIS_OK;
}

static polis_status h_mask_filter(polis_ctx *ctx, polis_mask_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "mask_filter");
    if (st) return st;
    if (!fn) {
        h_error(ctx, "mask_filter: function is NULL");
        return POLIS_ERR_INVALID;
    }
    if ((st = polis__grow(env, (void **)&env->mask_filters, &env->cap_mask_filters,
                          env->n_mask_filters, sizeof *env->mask_filters)))
        return st;
    env->mask_filters[env->n_mask_filters++] = (polis__mask_filter){fn, ud, ctx};
    return POLIS_OK;
}

static size_t ftype_size(polis_ftype t)
{
    switch (t) {
    case POLIS_FIELD_I32:
    case POLIS_FIELD_F32: return 4;
    case POLIS_FIELD_I64:
    case POLIS_FIELD_F64: return 8;
    }
    return 0;
}

static polis_status h_event_type(polis_ctx *ctx, const char *name, const polis_field_def *fields,
                                 int32_t n_fields, int32_t *out_id)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "event_type");
    if (st) return st;
    if ((st = check_name(ctx, "event type", name))) return st;
    if (n_fields < 0 || n_fields > 64 || (n_fields > 0 && !fields)) {
        h_error(ctx, "event type %s: %d fields (expected 0..64 with a field array)", name,
                n_fields);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = polis_env_event_find(env, name);
    if (dup >= 0) return duplicate(ctx, "event type", name, env->events[dup].owner, "registered");
    for (int32_t i = 0; i < n_fields; i++) {
        if ((st = check_name(ctx, "event field", fields[i].name))) return st;
        if (ftype_size(fields[i].type) == 0) {
            h_error(ctx, "event type %s: field %s has unknown type %d", name, fields[i].name,
                    (int)fields[i].type);
            return POLIS_ERR_INVALID;
        }
        for (int32_t j = 0; j < i; j++) {
            if (strcmp(fields[i].name, fields[j].name) == 0) {
                h_error(ctx, "event type %s: duplicate field \"%s\"", name, fields[i].name);
                return POLIS_ERR_INVALID;
            }
        }
    }
    if ((st = polis__grow(env, (void **)&env->events, &env->cap_events, env->n_events,
                          sizeof *env->events)))
        return st;
    polis__event_type *e = &env->events[env->n_events];
    e->name = polis__strdup(env, name);
    e->fields = n_fields ? polis__alloc(env, sizeof *e->fields * (size_t)n_fields) : NULL;
    if (!e->name || (n_fields && !e->fields)) goto nomem;
    size_t off = 0, align = 1;
    for (int32_t i = 0; i < n_fields; i++) {
        size_t sz = ftype_size(fields[i].type);
        off = (off + sz - 1) / sz * sz;
        if (!(e->fields[i].name = polis__strdup(env, fields[i].name))) {
            e->n_fields = i;
            goto nomem;
        }
        e->fields[i].type = fields[i].type;
        e->fields[i].offset = off;
        off += sz;
        if (sz > align) align = sz;
    }
    e->n_fields = n_fields;
    e->size = (off + align - 1) / align * align;
    e->owner = ctx;
    if (out_id) *out_id = env->n_events;
    env->n_events++;
    return POLIS_OK;
nomem:
    for (int32_t i = 0; i < e->n_fields; i++) polis__strfree(env, e->fields[i].name);
    polis__free(env, e->fields, sizeof *e->fields * (size_t)n_fields);
    polis__strfree(env, e->name);
    memset(e, 0, sizeof *e);
    return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

polis_status polis__sub_add(polis_env *env, polis__sub *s)
{
    polis_status st =
        polis__grow(env, (void **)&env->subs, &env->cap_subs, env->n_subs, sizeof *env->subs);
    if (st) return st;
    s->seq = env->reg_seq++;
    env->subs[env->n_subs++] = *s;
    return POLIS_OK;
}

static polis_status h_subscribe(polis_ctx *ctx, const char *event, int32_t priority,
                                polis_event_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "subscribe");
    if (st) return st;
    if ((st = check_name(ctx, "event type", event))) return st;
    if (!fn) {
        h_error(ctx, "subscribe %s: function is NULL", event);
        return POLIS_ERR_INVALID;
    }
    polis__sub s = {.type = -1, .priority = priority, .fn = fn, .ud = ud, .ctx = ctx};
    if (!(s.event = polis__strdup(env, event)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if ((st = polis__sub_add(env, &s))) polis__strfree(env, s.event);
    return st;
}

static polis_status h_component(polis_ctx *ctx, const char *name, size_t elem_size, int32_t *out_id)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "component");
    if (st) return st;
    if ((st = check_name(ctx, "component", name))) return st;
    if (elem_size == 0 || elem_size > (1u << 20)) {
        h_error(ctx, "component %s: element size %zu is outside [1, 1048576]", name, elem_size);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = find_named(env->components, env->n_components, sizeof *env->components,
                             offsetof(polis__component, name), name);
    if (dup >= 0)
        return duplicate(ctx, "component", name, env->components[dup].owner, "registered");
    if ((st = polis__grow(env, (void **)&env->components, &env->cap_components, env->n_components,
                          sizeof *env->components)))
        return st;
    polis__component *c = &env->components[env->n_components];
    if (!(c->name = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    c->elem_size = elem_size;
    c->owner = ctx;
    if (out_id) *out_id = env->n_components;
    env->n_components++;
    return POLIS_OK;
}

static polis_status h_grid_configure(polis_ctx *ctx, int32_t w, int32_t h, bool wrap)
{
    polis_status st = closed(ctx, "grid_configure");
    if (st) return st;
    if ((st = polis__grid_configure(ctx->env, w, h, wrap)) != POLIS_OK) {
        char msg[POLIS_ERRMAX];
        snprintf(msg, sizeof msg, "%s", ctx->env->err);
        h_error(ctx, "%s", msg);
    }
    return st;
}

static polis_status h_grid_layer(polis_ctx *ctx, const char *name, int32_t *out)
{
    polis_status st = closed(ctx, "grid_layer");
    if (st) return st;
    if ((st = check_name(ctx, "grid layer", name))) return st;
    return polis__grid_layer(ctx->env, name, out);
}

static polis_status h_service_provide(polis_ctx *ctx, const char *name, const void *api)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "service_provide");
    if (st) return st;
    if ((st = check_name(ctx, "service", name))) return st;
    int32_t dup = find_named(env->services, env->n_services, sizeof *env->services,
                             offsetof(polis__service, name), name);
    if (dup >= 0) return duplicate(ctx, "service", name, env->services[dup].owner, "provided");
    if ((st = polis__grow(env, (void **)&env->services, &env->cap_services, env->n_services,
                          sizeof *env->services)))
        return st;
    polis__service *s = &env->services[env->n_services];
    if (!(s->name = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    s->api = api;
    s->owner = ctx;
    env->n_services++;
    return POLIS_OK;
}

/* ---- host: lookups ------------------------------------------------------------------------- */

static int32_t h_event_find(polis_ctx *ctx, const char *name)
{
    return polis_env_event_find(ctx->env, name);
}

static int32_t h_component_find(polis_ctx *ctx, const char *name)
{
    polis_env *env = ctx->env;
    return name ? find_named(env->components, env->n_components, sizeof *env->components,
                             offsetof(polis__component, name), name)
                : -1;
}

static int32_t h_action_find(polis_ctx *ctx, const char *name)
{
    return polis_env_action_id(ctx->env, name);
}

static const void *h_service(polis_ctx *ctx, const char *name)
{
    polis_env *env = ctx->env;
    int32_t i = name ? find_named(env->services, env->n_services, sizeof *env->services,
                                  offsetof(polis__service, name), name)
                     : -1;
    return i >= 0 ? env->services[i].api : NULL;
}

/* ---- host: running -------------------------------------------------------------------------- */

static polis_status h_publish(polis_ctx *ctx, int32_t type, const void *payload, size_t size)
{
    return polis__bus_publish(ctx->env, ctx, type, payload, size);
}

static void *h_component_data(polis_ctx *ctx, int32_t component)
{
    polis_env *env = ctx->env;
    if (component < 0 || component >= env->n_components) return NULL;
    return env->components[component].data;
}

static const polis_grid *h_grid(polis_ctx *ctx)
{
    return ctx->env->grid_sized ? &ctx->env->grid : NULL;
}

static void h_grid_window(polis_ctx *ctx, int32_t layer, int32_t cx, int32_t cy, int32_t rx,
                          int32_t ry, int32_t outside, int32_t *out)
{
    polis__grid_window(&ctx->env->grid, layer, cx, cy, rx, ry, outside, out);
}

static polis_status h_entity_create(polis_ctx *ctx, polis_entity *out)
{
    polis_status st = polis__entity_create(ctx->env, out);
    if (st) {
        char msg[POLIS_ERRMAX];
        snprintf(msg, sizeof msg, "%s", ctx->env->err);
        h_error(ctx, "%s", msg);
    }
    return st;
}

static polis_status h_entity_destroy(polis_ctx *ctx, polis_entity e)
{
    polis_status st = polis__entity_destroy(ctx->env, e);
    if (st) {
        char msg[POLIS_ERRMAX];
        snprintf(msg, sizeof msg, "%s", ctx->env->err);
        h_error(ctx, "%s", msg);
    }
    return st;
}

static bool h_entity_alive(polis_ctx *ctx, polis_entity e)
{
    return polis__entity_alive(ctx->env, e);
}

static polis_entity h_agent_entity(polis_ctx *ctx, int32_t agent)
{
    polis_env *env = ctx->env;
    if (agent < 0 || agent >= env->n_agents || !env->agent_entities) return POLIS_ENTITY_NONE;
    return env->agent_entities[agent];
}

static int32_t h_max_entities(polis_ctx *ctx) { return ctx->env->max_entities; }

static polis_status h_set_agent_order(polis_ctx *ctx, const int32_t *agents, int32_t n)
{
    polis_env *env = ctx->env;
    if (!env->in_begin) {
        h_error(ctx, "set_agent_order is only allowed in the begin phase");
        return POLIS_ERR_STATE;
    }
    if (n < 0 || n > env->n_agents || (n > 0 && !agents)) {
        h_error(ctx, "set_agent_order: %d agents (expected 0..%d)", n, env->n_agents);
        return POLIS_ERR_INVALID;
    }
    /* Duplicates are found with io->illegal as scratch: the step cleared it before BEGIN
     * and writes it only after the order is final, so no allocation is needed here. */
    uint8_t *seen = env->io.illegal;
    polis_status st = POLIS_OK;
    for (int32_t i = 0; i < n; i++) {
        int32_t a = agents[i];
        if (a < 0 || a >= env->n_agents) {
            h_error(ctx, "set_agent_order: agents[%d] = %d is not an agent id (0..%d)", i, a,
                    env->n_agents - 1);
            st = POLIS_ERR_INVALID;
            break;
        }
        if (seen[a]) {
            h_error(ctx, "set_agent_order: agent %d appears twice", a);
            st = POLIS_ERR_INVALID;
            break;
        }
        seen[a] = 1;
    }
    memset(seen, 0, (size_t)env->n_agents);
    if (st) return st;
    memcpy(env->order, agents, sizeof(int32_t) * (size_t)n);
    env->n_order = n;
    return POLIS_OK;
}

static const char *h_scenario_dir(polis_ctx *ctx)
{
    const char *d = ctx->env->scn.base_dir;
    return d && *d ? d : ".";
}

static void *h_alloc(polis_ctx *ctx, size_t size) { return polis__alloc(ctx->env, size); }
static void h_free(polis_ctx *ctx, void *p, size_t size) { polis__free(ctx->env, p, size); }
/* The bounds a value of dtype t can take (f32: the finite floats). */
static void dtype_bounds(polis_dtype t, double *lo, double *hi)
{
    switch (t) {
    case POLIS_DTYPE_U8: *lo = 0, *hi = 255; return;
    case POLIS_DTYPE_I8: *lo = -128, *hi = 127; return;
    case POLIS_DTYPE_I16: *lo = -32768, *hi = 32767; return;
    case POLIS_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; return;
    case POLIS_DTYPE_F32: *lo = -3.4028234663852886e38, *hi = 3.4028234663852886e38; return;
    }
    *lo = *hi = 0;
}

/* The "observations" host API, version 2 (plugin.h). */
polis_status polis__obs_writes_stored(polis_ctx *ctx, int32_t field)
{
    if (!ctx) return POLIS_ERR_INVALID;
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "writes_stored");
    if (st) return st;
    if (field < 0 || field >= env->n_obs || env->obs[field].ctx != ctx) {
        h_error(ctx, "writes_stored: field %d is not an observation field this plugin registered",
                field);
        return POLIS_ERR_INVALID;
    }
    env->obs[field].writes_stored = true;
    return POLIS_OK;
}

int32_t polis__obs_stored(polis_ctx *ctx, int32_t field)
{
    const polis_env *env = ctx ? ctx->env : NULL;
    if (!env || env->state == POLIS__ENV_LOADING || field < 0 || field >= env->n_obs ||
        env->obs[field].ctx != ctx)
        return -1;
    return (int32_t)env->obs[field].out_dtype;
}

static polis_status h_obs_range(polis_ctx *ctx, int32_t field, int32_t dim, int32_t n,
                                const double *lo, const double *hi)
{
    polis_env *env = ctx->env;
    polis_status st = closed(ctx, "obs_range");
    if (st) return st;
    if (field < 0 || field >= env->n_obs || env->obs[field].ctx != ctx) {
        h_error(ctx, "obs_range: field %d is not an observation field this plugin registered",
                field);
        return POLIS_ERR_INVALID;
    }
    polis__obs *o = &env->obs[field];
    if (o->range_n) {
        h_error(ctx, "observation %s: range declared twice", o->name);
        return POLIS_ERR_INVALID;
    }
    if (dim < -1 || dim >= o->ndim) {
        h_error(ctx, "observation %s: range dim %d is outside [-1, %d)", o->name, dim, o->ndim);
        return POLIS_ERR_INVALID;
    }
    int32_t want = dim < 0 ? 1 : o->shape[dim];
    if (n != want) {
        if (dim < 0)
            h_error(ctx, "observation %s: a whole-field range (dim -1) has n 1, got %d", o->name,
                    n);
        else
            h_error(ctx,
                    "observation %s: a range per index of dim %d has n = shape[%d] = %d, "
                    "got %d",
                    o->name, dim, dim, want, n);
        return POLIS_ERR_INVALID;
    }
    if (!lo || !hi) {
        h_error(ctx, "observation %s: range bounds are NULL", o->name);
        return POLIS_ERR_INVALID;
    }
    double tlo, thi;
    dtype_bounds(o->dtype, &tlo, &thi);
    bool integral = o->dtype != POLIS_DTYPE_F32;
    for (int32_t k = 0; k < n; k++) {
        const char *bad = NULL;
        if (!isfinite(lo[k]) || !isfinite(hi[k]))
            bad = "bounds must be finite";
        else if (lo[k] > hi[k])
            bad = "lo is above hi";
        else if (lo[k] < tlo || hi[k] > thi)
            bad = "outside the dtype's range";
        else if (integral && (lo[k] != floor(lo[k]) || hi[k] != floor(hi[k])))
            bad = "an integer dtype needs integer bounds";
        if (bad) {
            h_error(ctx, "observation %s: range[%d] = [%g, %g]: %s (dtype %s)", o->name, k, lo[k],
                    hi[k], bad, polis_dtype_name(o->dtype));
            return POLIS_ERR_INVALID;
        }
    }
    double *l = polis__alloc(env, sizeof *l * (size_t)n),
           *u = polis__alloc(env, sizeof *u * (size_t)n);
    if (!l || !u) {
        polis__free(env, l, sizeof *l * (size_t)n);
        polis__free(env, u, sizeof *u * (size_t)n);
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    memcpy(l, lo, sizeof *l * (size_t)n);
    memcpy(u, hi, sizeof *u * (size_t)n);
    o->range_lo = l;
    o->range_hi = u;
    o->range_dim = dim;
    o->range_n = n;
    return POLIS_OK;
}

/* The kernel's slots; every module fills its own (polis__host). */
static const polis_host kernel_slots = {
    .abi_major = POLIS_ABI_MAJOR,
    .struct_size = sizeof(polis_host),
    .abi_minor = POLIS_ABI_MINOR,
    .error = h_error,
    .log = h_log,
    .plugin_name = h_plugin_name,
    .n_agents = h_n_agents,
    .agent_name = h_agent_name,
    .tick = h_tick,
    .episode = h_episode,
    .max_steps = h_max_steps,
    .rng = h_rng,
    .io = h_io,
    .hook = h_hook,
    .action = h_action,
    .observation = h_observation,
    .reward = h_reward,
    .reward_transform = h_reward_transform,
    .event_type = h_event_type,
    .subscribe = h_subscribe,
    .component = h_component,
    .grid_configure = h_grid_configure,
    .grid_layer = h_grid_layer,
    .service_provide = h_service_provide,
    .event_find = h_event_find,
    .component_find = h_component_find,
    .action_find = h_action_find,
    .service = h_service,
    .publish = h_publish,
    .component_data = h_component_data,
    .grid = h_grid,
    .grid_window = h_grid_window,
    .entity_create = h_entity_create,
    .entity_destroy = h_entity_destroy,
    .entity_alive = h_entity_alive,
    .agent_entity = h_agent_entity,
    .max_entities = h_max_entities,
    .set_agent_order = h_set_agent_order,
    .json_kind = polis__json_kind,
    .json_len = polis__json_len,
    .json_at = polis__json_at,
    .json_get = polis__json_get,
    .json_key = polis__json_key,
    .json_path = polis__json_path,
    .json_int = polis__json_int,
    .json_double = polis__json_double,
    .json_string = polis__json_string,
    .json_bool = polis__json_bool,
    .alloc = h_alloc,
    .free = h_free,
    .scenario_dir = h_scenario_dir,
    .mask_filter = h_mask_filter,
    .action_family = h_action_family,
    .obs_range = h_obs_range,    /* ABI 1.4 */
    .host_api = polis__host_api, /* ABI 1.7: every later addition comes through it */
};

static polis_host host_table;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void host_build(void)
{
    host_table = kernel_slots;
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->host) (*m)->host(&host_table);
}

/* Built once per process, before the first env uses it, and never written again: as
 * immutable as a const table from then on, so envs on different threads share it. */
const polis_host *polis__host(void)
{
    pthread_once(&host_once, host_build);
    return &host_table;
}

/* ---- freeze ---------------------------------------------------------------------------------- */

static int cmp_hook(const void *a, const void *b)
{
    const polis__hook *x = a, *y = b;
    if (x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_transform(const void *a, const void *b)
{
    const polis__transform *x = a, *y = b;
    if (x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static polis_status apply_weights(polis_env *env)
{
    for (int32_t w = 0; w < env->scn.n_weights; w++) {
        const polis__scn_reward_weight *sw = &env->scn.weights[w];
        int32_t found = find_named(env->rewards, env->n_rewards, sizeof *env->rewards,
                                   offsetof(polis__reward, name), sw->name);
        if (found < 0) {
            char list[512] = "";
            size_t len = 0;
            for (int32_t r = 0; r < env->n_rewards && len < sizeof list - 1; r++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", r ? ", " : "",
                                        env->rewards[r].name);
            return polis__fail(
                env, POLIS_ERR_CONFIG, "%s: %s: no reward function named \"%s\" (registered: %s)",
                env->scn.source, sw->jpath, sw->name, env->n_rewards ? list : "none");
        }
        env->rewards[found].weight = (float)sw->weight;
    }
    return POLIS_OK;
}

/* ---- the memory estimate ------------------------------------------------------------------ */

/* Saturating: an estimate beyond 2^64 reads as UINT64_MAX, which no cap admits. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

static const char *human_bytes(char *buf, size_t cap, uint64_t n)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%" PRIu64 " bytes", n);
        return buf;
    }
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 6) v /= 1024.0, u++;
    snprintf(buf, cap, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, unit[u]);
    return buf;
}

/* What registry_freeze, the grid, the entity table, the modules (plans) and the bus are
 * about to allocate, in 64-bit arithmetic, refused beyond the cap before any of it is
 * allocated. The message names the keys of every part, biggest first. */
static polis_status check_memory(polis_env *env, size_t obs_size)
{
    enum { GRID, AGENTS, ENTITIES, EVENTS, SHARED, N_PARTS };
    uint64_t part[N_PARTS] = {0};
    uint64_t n = (uint64_t)env->n_agents;
    if (env->grid_enabled && env->grid_sized && env->n_layers > 0)
        part[GRID] = mul_sat(mul_sat((uint64_t)env->grid.width, (uint64_t)env->grid.height),
                             (uint64_t)env->n_layers * sizeof(int32_t));
    size_t modules = 0; /* the modules' per-agent state (plans) */
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->agent_bytes) modules += (*m)->agent_bytes(env);
    uint64_t per_agent = add_sat(obs_size, (uint64_t)env->n_actions);
    per_agent = add_sat(per_agent,
                        3 * sizeof(int32_t) + sizeof(float) + 3 + sizeof(polis_entity) + modules);
    per_agent = add_sat(per_agent, mul_sat((uint64_t)env->n_rewards, sizeof(float)));
    part[AGENTS] = mul_sat(n, per_agent);
    uint64_t per_entity = 2 * sizeof(uint32_t) + 1;
    for (int32_t c = 0; c < env->n_components; c++)
        per_entity = add_sat(per_entity, env->components[c].elem_size);
    part[ENTITIES] = mul_sat((uint64_t)env->max_entities, per_entity);
    uint64_t slot = 8;
    for (int32_t t = 0; t < env->n_events; t++)
        if (env->events[t].size > slot) slot = (env->events[t].size + 7) & ~(uint64_t)7;
    uint64_t events = env->scn.event_queue > 0 ? (uint64_t)env->scn.event_queue : 4096;
    if (!env->bus_queue) part[EVENTS] = mul_sat(events, add_sat(slot, sizeof *env->bus_queue));
    part[SHARED] = env->shared_size;
    uint64_t total = 0;
    for (int k = 0; k < N_PARTS; k++) total = add_sat(total, part[k]);

    uint64_t scn_cap = (uint64_t)env->scn.max_memory, opt_cap = (uint64_t)env->opt_max_memory;
    uint64_t cap = opt_cap ? (scn_cap && scn_cap < opt_cap ? scn_cap : opt_cap)
                           : (scn_cap ? scn_cap : (uint64_t)POLIS_DEFAULT_MAX_MEMORY);
    if (total <= cap) return POLIS_OK;

    char what[N_PARTS][192], b[32], t[32], c[32];
    if (env->scn.has_grid)
        snprintf(what[GRID], sizeof what[GRID],
                 "grid.width %d x grid.height %d x %d layers x 4 bytes", (int)env->grid.width,
                 (int)env->grid.height, (int)env->n_layers);
    else
        snprintf(what[GRID], sizeof what[GRID],
                 "a %d x %d grid (sized by a plugin) x %d layers x 4 bytes", (int)env->grid.width,
                 (int)env->grid.height, (int)env->n_layers);
    snprintf(what[AGENTS], sizeof what[AGENTS],
             "agents %d x %" PRIu64 " bytes (observations, masks, io, plans)", (int)n, per_agent);
    snprintf(what[ENTITIES], sizeof what[ENTITIES], "max_entities %d x %" PRIu64 " bytes",
             (int)env->max_entities, per_entity);
    snprintf(what[EVENTS], sizeof what[EVENTS], "event_queue %" PRIu64 " x %" PRIu64 " bytes",
             events, add_sat(slot, sizeof *env->bus_queue));
    snprintf(what[SHARED], sizeof what[SHARED], "%d shared observation fields", (int)env->n_shared);
    char list[1024];
    size_t len = 0;
    bool used[N_PARTS] = {false};
    for (int round = 0; round < N_PARTS; round++) {
        int best = -1;
        for (int k = 0; k < N_PARTS; k++)
            if (!used[k] && part[k] && (best < 0 || part[k] > part[best])) best = k;
        if (best < 0) break;
        used[best] = true;
        int w = snprintf(list + len, sizeof list - len, "%s%s = %s", len ? "; " : "", what[best],
                         human_bytes(b, sizeof b, part[best]));
        if (w < 0 || (size_t)w >= sizeof list - len) break;
        len += (size_t)w;
    }
    const char *how = !opt_cap        ? "raise \"max_memory\" in the scenario, or "
                                        "polis_options.max_memory"
                      : cap < opt_cap ? "raise \"max_memory\" in the scenario"
                                      : "the host's polis_options.max_memory";
    return polis__fail(
        env, POLIS_ERR_LIMIT, "%s: the env needs %s, more than the memory cap of %s (%s): %s",
        env->scn.source, human_bytes(t, sizeof t, total), human_bytes(c, sizeof c, cap), how, list);
}

/* The narrowest integer dtype holding field o's declared range, when narrower than the
 * field's own (compact observations); floats and fields without a range stay as they are. */
static void compact_field(polis__obs *o)
{
    if (!o->range_n || o->dtype == POLIS_DTYPE_F32 || o->dtype == POLIS_DTYPE_U8 ||
        o->dtype == POLIS_DTYPE_I8)
        return;
    double lo = o->range_lo[0], hi = o->range_hi[0];
    for (int32_t k = 1; k < o->range_n; k++) {
        if (o->range_lo[k] < lo) lo = o->range_lo[k];
        if (o->range_hi[k] > hi) hi = o->range_hi[k];
    }
    static const polis_dtype order[] = {POLIS_DTYPE_U8, POLIS_DTYPE_I8, POLIS_DTYPE_I16};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        double tlo, thi;
        dtype_bounds(order[i], &tlo, &thi);
        if (polis_dtype_size(order[i]) >= polis_dtype_size(o->dtype)) return;
        if (lo >= tlo && hi <= thi) {
            o->out_dtype = order[i];
            o->out_nbytes = o->nbytes / polis_dtype_size(o->dtype) * polis_dtype_size(order[i]);
            o->narrow_in = (uint8_t)polis_dtype_size(o->dtype);
            o->narrow_out = (uint8_t)polis_dtype_size(order[i]);
            o->narrow_count = o->nbytes / o->narrow_in;
            o->narrow_stride = o->narrow_count;
            o->narrow_n = 1;
            if (o->range_dim >= 0) {
                o->narrow_n = (size_t)o->shape[o->range_dim];
                o->narrow_stride = 1;
                for (int32_t d = o->range_dim + 1; d < o->ndim; d++)
                    o->narrow_stride *= (size_t)o->shape[d];
            }
            o->narrow_recip = o->narrow_stride && o->narrow_count <= UINT32_MAX
                                  ? (UINT64_C(1) << 32) / (uint64_t)o->narrow_stride
                                  : 0;
            o->narrow_synced = NULL;
            o->narrow_lo = INT32_MIN;
            o->narrow_hi = INT32_MAX;
            for (int32_t k = 0; k < o->range_n; k++) {
                if (o->range_lo[k] > o->narrow_lo) o->narrow_lo = (int32_t)o->range_lo[k];
                if (o->range_hi[k] < o->narrow_hi) o->narrow_hi = (int32_t)o->range_hi[k];
            }
            for (size_t e = 0; e < o->narrow_count && e < POLIS__NARROW_SMALL; e++) {
                const size_t k = e / o->narrow_stride % o->narrow_n;
                o->small_lo[e] = (int32_t)o->range_lo[k];
                o->small_hi[e] = (int32_t)o->range_hi[k];
            }
            return;
        }
    }
}

polis_status polis__registry_freeze(polis_env *env)
{
    polis_status st;
    if ((st = apply_weights(env))) return st;
    /* Modules' prefreeze first (handler replacements): the per-phase hook copies and the
     * sorted transforms below then carry the replaced functions, and the step calls them like
     * any other. */
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->prefreeze && (st = (*m)->prefreeze(env))) return st;

    /* The mask pass, from the actions as the replacements left them. */
    int32_t n_ops = mask_ops_build(env, NULL);
    if (!(env->mask_ops = polis__alloc(env, sizeof *env->mask_ops * (size_t)n_ops)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    env->cap_mask_ops = n_ops;
    env->n_mask_ops = mask_ops_build(env, env->mask_ops);

    /* Per-phase hook arrays: one sorted copy per phase, so the step walks flat arrays. */
    for (int32_t p = 0; p < POLIS_PHASE_COUNT; p++) {
        int32_t n = 0;
        for (int32_t i = 0; i < env->n_hooks; i++) n += env->hooks[i].phase == (polis_phase)p;
        env->n_phase_hooks[p] = n;
        if (!n) continue;
        env->phase_hooks[p] = polis__alloc(env, sizeof(polis__hook) * (size_t)n);
        if (!env->phase_hooks[p]) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        n = 0;
        for (int32_t i = 0; i < env->n_hooks; i++)
            if (env->hooks[i].phase == (polis_phase)p) env->phase_hooks[p][n++] = env->hooks[i];
        qsort(env->phase_hooks[p], (size_t)n, sizeof(polis__hook), cmp_hook);
    }
    if (env->n_transforms)
        qsort(env->transforms, (size_t)env->n_transforms, sizeof *env->transforms, cmp_transform);

    /* Observation layout: each field starts on an 8-byte boundary. Compact observations
     * store an integer field with a declared range in the smallest dtype holding it, the
     * writer writing into a per-agent shadow record the kernel narrows from (unless it
     * writes the stored dtype itself, polis__obs_writes_stored). */
    env->compact = env->opt_compact || env->scn.compact_observations;
    size_t off = 0, shadow = 0;
    for (int32_t i = 0; i < env->n_obs; i++) {
        polis__obs *o = &env->obs[i];
        if (env->compact && !env->no_obs) compact_field(o);
        if (o->out_dtype != o->dtype && !o->writes_stored) shadow += o->nbytes;
        o->offset = off;
        off += (o->out_nbytes + 7) & ~(size_t)7;
    }
    /* Shared fields: once per env, in their registered dtype, each on an 8-byte boundary. */
    size_t shared_off = 0;
    for (int32_t i = 0; i < env->n_shared; i++) {
        env->shared[i].offset = shared_off;
        shared_off += (env->shared[i].nbytes + 7) & ~(size_t)7;
    }
    env->shared_size = shared_off;
    size_t n = (size_t)env->n_agents;
    polis_io *io = &env->io;
    io->n_agents = env->n_agents;
    io->n_actions = env->n_actions;
    io->obs_size = off;
    if ((st = check_memory(env, off + shadow))) return st;
    if (env->shared_size && !(env->shared_obs = polis__alloc(env, env->shared_size)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating shared observations");
    for (int32_t i = 0; i < env->n_obs && shadow; i++) {
        polis__obs *o = &env->obs[i];
        if (o->out_dtype == o->dtype || o->writes_stored) continue;
        size_t bytes = o->nbytes * n;
        if (!(o->shadow = polis__alloc(env, bytes ? bytes : 1)))
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating observation %s",
                               o->name);
    }
    if (off && n > SIZE_MAX / off)
        return polis__fail(env, POLIS_ERR_LIMIT, "observation buffer too large");
    size_t obs_bytes = off * n;
    if (env->io_fn) {
        if ((st = env->io_fn(env->io_ud, env, io)) != POLIS_OK) return st;
        env->io_borrowed = true;
    } else {
        io->obs = polis__alloc(env, obs_bytes ? obs_bytes : 1);
        io->masks = polis__alloc(env, n * (size_t)env->n_actions);
        io->actions = polis__alloc(env, n * sizeof(int32_t));
        io->rewards = polis__alloc(env, n * sizeof(float));
        io->terminations = polis__alloc(env, n);
        io->truncations = polis__alloc(env, n);
        io->illegal = polis__alloc(env, n);
    }
    env->order = polis__alloc(env, n * sizeof(int32_t));
    env->agent_entities = polis__alloc(env, n * sizeof(polis_entity));
    size_t comp = (size_t)env->n_rewards * n;
    env->reward_components = polis__alloc(env, (comp ? comp : 1) * sizeof(float));
    if (!io->obs || !io->masks || !io->actions || !io->rewards || !io->terminations ||
        !io->truncations || !io->illegal || !env->order || !env->agent_entities ||
        !env->reward_components)
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating env buffers");

    if ((st = polis__entities_alloc(env))) return st;
    for (int32_t c = 0; c < env->n_components; c++) {
        polis__component *cp = &env->components[c];
        if (cp->elem_size > SIZE_MAX / (size_t)env->max_entities)
            return polis__fail(env, POLIS_ERR_LIMIT, "component %s too large", cp->name);
        cp->data = polis__alloc(env, cp->elem_size * (size_t)env->max_entities);
        if (!cp->data)
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating component %s",
                               cp->name);
    }
    if ((st = polis__grid_alloc(env))) return st;
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->freeze && (st = (*m)->freeze(env))) return st;
    return polis__bus_freeze(env);
}

void polis__registry_free(polis_env *env)
{
    for (int32_t p = 0; p < POLIS_PHASE_COUNT; p++)
        polis__free(env, env->phase_hooks[p], sizeof(polis__hook) * (size_t)env->n_phase_hooks[p]);
    polis__free(env, env->hooks, sizeof *env->hooks * (size_t)env->cap_hooks);
    for (int32_t i = 0; i < env->n_actions; i++) {
        polis__strfree(env, env->actions[i].name);
        polis__strfree(env, env->actions[i].doc);
    }
    polis__free(env, env->actions, sizeof *env->actions * (size_t)env->cap_actions);
    for (int32_t i = 0; i < env->n_obs; i++) {
        polis__obs *o = &env->obs[i];
        polis__strfree(env, o->name);
        polis__strfree(env, o->doc);
        polis__free(env, o->range_lo, sizeof *o->range_lo * (size_t)o->range_n);
        polis__free(env, o->range_hi, sizeof *o->range_hi * (size_t)o->range_n);
        if (o->shadow) {
            size_t b = o->nbytes * (size_t)env->n_agents;
            polis__free(env, o->shadow, b ? b : 1);
        }
    }
    polis__free(env, env->obs, sizeof *env->obs * (size_t)env->cap_obs);
    for (int32_t i = 0; i < env->n_shared; i++) {
        polis__strfree(env, env->shared[i].name);
        polis__strfree(env, env->shared[i].doc);
    }
    polis__free(env, env->shared, sizeof *env->shared * (size_t)env->cap_shared);
    polis__free(env, env->shared_obs, env->shared_size);
    for (int32_t i = 0; i < env->n_rewards; i++) polis__strfree(env, env->rewards[i].name);
    polis__free(env, env->rewards, sizeof *env->rewards * (size_t)env->cap_rewards);
    polis__free(env, env->mask_filters, sizeof *env->mask_filters * (size_t)env->cap_mask_filters);
    polis__free(env, env->mask_ops, sizeof *env->mask_ops * (size_t)env->cap_mask_ops);
    for (int32_t i = 0; i < env->n_transforms; i++) polis__strfree(env, env->transforms[i].name);
    polis__free(env, env->transforms, sizeof *env->transforms * (size_t)env->cap_transforms);
    for (int32_t i = 0; i < env->n_events; i++) {
        polis__event_type *e = &env->events[i];
        for (int32_t f = 0; f < e->n_fields; f++) polis__strfree(env, e->fields[f].name);
        polis__free(env, e->fields, sizeof *e->fields * (size_t)e->n_fields);
        polis__strfree(env, e->name);
    }
    polis__free(env, env->events, sizeof *env->events * (size_t)env->cap_events);
    for (int32_t i = 0; i < env->n_subs; i++) polis__strfree(env, env->subs[i].event);
    polis__free(env, env->subs, sizeof *env->subs * (size_t)env->cap_subs);
    for (int32_t i = 0; i < env->n_components; i++) {
        polis__component *c = &env->components[i];
        polis__free(env, c->data, c->elem_size * (size_t)env->max_entities);
        polis__strfree(env, c->name);
    }
    polis__free(env, env->components, sizeof *env->components * (size_t)env->cap_components);
    for (int32_t i = 0; i < env->n_services; i++) polis__strfree(env, env->services[i].name);
    polis__free(env, env->services, sizeof *env->services * (size_t)env->cap_services);

    size_t n = (size_t)env->n_agents;
    polis_io *io = &env->io;
    size_t obs_bytes = io->obs_size * n;
    if (!env->io_borrowed) {
        polis__free(env, io->obs, obs_bytes ? obs_bytes : 1);
        polis__free(env, io->masks, n * (size_t)io->n_actions);
        polis__free(env, io->actions, n * sizeof(int32_t));
        polis__free(env, io->rewards, n * sizeof(float));
        polis__free(env, io->terminations, n);
        polis__free(env, io->truncations, n);
        polis__free(env, io->illegal, n);
    }
    polis__free(env, env->order, n * sizeof(int32_t));
    polis__free(env, env->agent_entities, n * sizeof(polis_entity));
    size_t comp = (size_t)env->n_rewards * n;
    polis__free(env, env->reward_components, (comp ? comp : 1) * sizeof(float));

    for (int32_t i = 0; i < env->n_ctxs; i++) {
        polis__strfree(env, env->ctxs[i]->name);
        polis__free(env, env->ctxs[i], sizeof *env->ctxs[i]);
    }
    polis__free(env, env->ctxs, sizeof *env->ctxs * (size_t)env->cap_ctxs);
}
