/*
 * engine/core/describe.c — polis_env_describe_json: everything a scenario registered, as one JSON
 * document read straight from the frozen registries, so what `polis describe` (or any tool
 * reading the document) shows cannot drift from what the engine actually runs.
 *
 * The document is built with cJSON and returned in a buffer from the C library's malloc
 * (copied out of cJSON's buffer, so a host that installs its own cJSON hooks still frees it
 * correctly with polis_free). Describe runs outside create/reset/step and never touches the
 * env's allocator: the result outlives any allocator state the caller might tear down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

/* Adding to a cJSON tree fails only on allocation failure; the builder remembers the first
 * failure so the code below reads as a plain description and checks once at the end. */
struct polis__describe {
    bool failed;
};
typedef struct polis__describe describe_builder;

static cJSON *add(describe_builder *b, cJSON *parent, const char *key, cJSON *item)
{
    if (!item) {
        b->failed = true;
        return NULL;
    }
    if (!parent) {
        cJSON_Delete(item);
        return NULL;
    }
    bool ok = cJSON_IsArray(parent) ? cJSON_AddItemToArray(parent, item)
                                    : cJSON_AddItemToObject(parent, key, item);
    if (!ok) {
        cJSON_Delete(item);
        b->failed = true;
        return NULL;
    }
    return item;
}

static cJSON *add_str(describe_builder *b, cJSON *parent, const char *key, const char *s)
{
    return add(b, parent, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static cJSON *add_num(describe_builder *b, cJSON *parent, const char *key, double v)
{
    return add(b, parent, key, cJSON_CreateNumber(v));
}

/* Integers are written verbatim: a seed or an int64 parameter does not fit a double. */
static cJSON *add_i64(describe_builder *b, cJSON *parent, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return add(b, parent, key, cJSON_CreateRaw(buf));
}

static cJSON *add_u64(describe_builder *b, cJSON *parent, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return add(b, parent, key, cJSON_CreateRaw(buf));
}

static cJSON *add_bool(describe_builder *b, cJSON *parent, const char *key, bool v)
{
    return add(b, parent, key, cJSON_CreateBool(v));
}

static cJSON *add_obj(describe_builder *b, cJSON *parent, const char *key)
{
    return add(b, parent, key, cJSON_CreateObject());
}

static cJSON *add_arr(describe_builder *b, cJSON *parent, const char *key)
{
    return add(b, parent, key, cJSON_CreateArray());
}

static const char *owner_name(const polis_ctx *ctx)
{
    return ctx && ctx->name ? ctx->name : "polis";
}

static const char *ftype_name(polis_ftype t)
{
    switch (t) {
    case POLIS_FIELD_I32: return "i32";
    case POLIS_FIELD_I64: return "i64";
    case POLIS_FIELD_F32: return "f32";
    case POLIS_FIELD_F64: return "f64";
    }
    return "?";
}

static const char *param_type_name(polis_param_type t)
{
    switch (t) {
    case POLIS_PARAM_BOOL: return "bool";
    case POLIS_PARAM_INT: return "int";
    case POLIS_PARAM_DOUBLE: return "double";
    case POLIS_PARAM_STRING: return "string";
    case POLIS_PARAM_JSON: return "json";
    }
    return "?";
}

static const char *ctx_kind_name(int32_t kind)
{
    switch (kind) {
    case POLIS__CTX_PLUGIN: return "plugin";
    case POLIS__CTX_SCRIPT: return "script";
    default: return "kernel";
    }
}

/* A parameter's default or value. `src` is NULL for the default. JSON parameters are only
 * readable during init, so their value is reported as null. */
static void add_param_value(describe_builder *b, cJSON *parent, const char *key,
                            const polis_param_def *d, const void *src)
{
    if (!src) {
        switch (d->type) {
        case POLIS_PARAM_BOOL: add_bool(b, parent, key, d->def_num != 0); return;
        case POLIS_PARAM_INT: add_i64(b, parent, key, (int64_t)d->def_num); return;
        case POLIS_PARAM_DOUBLE: add_num(b, parent, key, d->def_num); return;
        case POLIS_PARAM_STRING: add_str(b, parent, key, d->def_str); return;
        case POLIS_PARAM_JSON: break;
        }
        add(b, parent, key, cJSON_CreateNull());
        return;
    }
    const unsigned char *p = (const unsigned char *)src + d->offset;
    switch (d->type) {
    case POLIS_PARAM_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        add_bool(b, parent, key, v);
        return;
    }
    case POLIS_PARAM_INT: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        add_i64(b, parent, key, v);
        return;
    }
    case POLIS_PARAM_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof v);
        add_num(b, parent, key, v);
        return;
    }
    case POLIS_PARAM_STRING: {
        const char *v;
        memcpy(&v, p, sizeof v);
        add_str(b, parent, key, v);
        return;
    }
    case POLIS_PARAM_JSON: break;
    }
    add(b, parent, key, cJSON_CreateNull());
}

/* Plugins and scripts keep the same registry on their ctx (a plugin's descriptor table, a
 * script's polis.params copy), so both are listed by one path. */
static void describe_params(describe_builder *b, cJSON *plugin, const polis_ctx *ctx)
{
    cJSON *arr = add_arr(b, plugin, "params");
    if (!ctx->param_defs) return;
    /* A params struct exists only when the owner declared a size for it. */
    const void *values = ctx->params_size > 0 ? ctx->params : NULL;
    for (int32_t i = 0; i < ctx->n_param_defs; i++) {
        const polis_param_def *d = &ctx->param_defs[i];
        cJSON *p = add_obj(b, arr, NULL);
        add_str(b, p, "key", d->key);
        add_str(b, p, "type", param_type_name(d->type));
        add_param_value(b, p, "default", d, NULL);
        if (d->type == POLIS_PARAM_INT) {
            add_i64(b, p, "min", (int64_t)d->min);
            add_i64(b, p, "max", (int64_t)d->max);
        } else if (d->type == POLIS_PARAM_DOUBLE) {
            add_num(b, p, "min", d->min);
            add_num(b, p, "max", d->max);
        }
        add_bool(b, p, "required", d->required);
        add_str(b, p, "doc", d->doc);
        if (values && d->offset < ctx->params_size)
            add_param_value(b, p, "value", d, values);
        else
            add(b, p, "value", cJSON_CreateNull());
    }
}

static void describe_plugins(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "plugins");
    for (int32_t i = 0; i < env->n_ctxs; i++) {
        const polis_ctx *ctx = env->ctxs[i];
        if (!ctx || ctx->kind == POLIS__CTX_KERNEL) continue;
        cJSON *p = add_obj(b, arr, NULL);
        add_str(b, p, "name", ctx->name);
        add_str(b, p, "kind", ctx_kind_name(ctx->kind));
        const char *path = NULL;
        if (ctx->kind == POLIS__CTX_PLUGIN) path = ctx->path;
        if (ctx->kind == POLIS__CTX_SCRIPT && ctx->scn_script) path = ctx->scn_script->path;
        add_str(b, p, "path", path);
        const polis_plugin_desc *desc = ctx->kind == POLIS__CTX_PLUGIN ? ctx->desc : NULL;
        add_str(b, p, "version", desc ? desc->version : NULL);
        add_str(b, p, "doc", desc ? desc->doc : NULL);
        cJSON *req = add_arr(b, p, "requires");
        if (desc && desc->requires)
            for (const char *const *r = desc->requires; *r; r++) add_str(b, req, NULL, *r);
        describe_params(b, p, ctx);
    }
}

static void describe_exports(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "exports");
    for (int32_t i = 0; i < env->n_ctxs; i++) {
        const polis_ctx *ctx = env->ctxs[i];
        if (!ctx || ctx->kind != POLIS__CTX_PLUGIN || !ctx->desc || !ctx->desc->exports) continue;
        for (int32_t k = 0; k < ctx->desc->n_exports; k++) {
            const polis_export *ex = &ctx->desc->exports[k];
            char qualified[256];
            snprintf(qualified, sizeof qualified, "%s.%s", owner_name(ctx),
                     ex->name ? ex->name : "");
            cJSON *e = add_obj(b, arr, NULL);
            add_str(b, e, "name", qualified);
            add_str(b, e, "signature", ex->signature);
            add_str(b, e, "doc", ex->doc);
            add_str(b, e, "owner", owner_name(ctx));
        }
    }
}

static void describe_grid(describe_builder *b, cJSON *root, const polis_env *env)
{
    if (!env->grid_enabled) {
        add(b, root, "grid", cJSON_CreateNull());
        return;
    }
    cJSON *g = add_obj(b, root, "grid");
    add_i64(b, g, "width", env->grid.width);
    add_i64(b, g, "height", env->grid.height);
    add_bool(b, g, "wrap", env->grid.wrap);
    cJSON *layers = add_arr(b, g, "layers");
    for (int32_t i = 0; i < env->n_layers; i++) add_str(b, layers, NULL, env->layer_names[i]);
}

static void describe_actions(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "actions");
    for (int32_t i = 0; i < env->n_actions; i++) {
        const polis__action *a = &env->actions[i];
        cJSON *o = add_obj(b, arr, NULL);
        add_i64(b, o, "id", i);
        add_str(b, o, "name", a->name);
        add_str(b, o, "doc", a->doc);
        add_str(b, o, "owner", owner_name(a->ctx));
    }
}

/* One field of the per-agent record (fields) or of the env's shared buffer (shared_fields). */
static void describe_field(describe_builder *b, cJSON *arr, const polis__obs *f)
{
    cJSON *o = add_obj(b, arr, NULL);
    add_str(b, o, "name", f->name);
    add_str(b, o, "dtype", polis_dtype_name(f->out_dtype));
    if (f->out_dtype != f->dtype) add_str(b, o, "written_dtype", polis_dtype_name(f->dtype));
    cJSON *shape = add_arr(b, o, "shape");
    for (int32_t d = 0; d < f->ndim && d < 4; d++) add_i64(b, shape, NULL, f->shape[d]);
    add_u64(b, o, "offset", f->offset);
    add_u64(b, o, "nbytes", f->out_nbytes);
    /* ABI 1.4: {"dim": -1, "lo": [l], "hi": [h]}, or one bound per index of dim */
    if (f->range_n) {
        cJSON *r = add_obj(b, o, "range");
        add_i64(b, r, "dim", f->range_dim);
        cJSON *lo = add_arr(b, r, "lo"), *hi = add_arr(b, r, "hi");
        for (int32_t k = 0; k < f->range_n; k++) {
            add_num(b, lo, NULL, f->range_lo[k]);
            add_num(b, hi, NULL, f->range_hi[k]);
        }
    }
    add_str(b, o, "doc", f->doc);
    add_str(b, o, "owner", owner_name(f->ctx));
}

static void describe_observation(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *obs = add_obj(b, root, "observation");
    add_u64(b, obs, "obs_size", env->io.obs_size);
    add_bool(b, obs, "compact", env->compact);
    cJSON *arr = add_arr(b, obs, "fields");
    for (int32_t i = 0; i < env->n_obs; i++) describe_field(b, arr, &env->obs[i]);
    /* fields held once per env (host API "shared_observations"), only when there are any */
    if (env->n_shared == 0) return;
    add_u64(b, obs, "shared_size", env->shared_size);
    arr = add_arr(b, obs, "shared_fields");
    for (int32_t i = 0; i < env->n_shared; i++) describe_field(b, arr, &env->shared[i]);
}

static void describe_rewards(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "rewards");
    for (int32_t i = 0; i < env->n_rewards; i++) {
        const polis__reward *r = &env->rewards[i];
        cJSON *o = add_obj(b, arr, NULL);
        add_str(b, o, "name", r->name);
        add_num(b, o, "weight", r->weight);
        add_str(b, o, "owner", owner_name(r->ctx));
    }
}

/* Registries keep registration order; the engine runs transforms, hooks and subscribers by
 * (priority, registration seq). Listing them in run order needs a sort, done here by
 * repeated minimum search so describe allocates nothing but the JSON itself (these lists are
 * a handful of entries long). `key` says whether record i belongs to the list (`arg` is the
 * phase or event type) and gives its sort key. Returns the record after (lp, ls), or -1. */
typedef bool (*order_key_fn)(const polis_env *env, int32_t i, int32_t arg, int32_t *prio,
                             int32_t *seq);

static int32_t next_in_order(const polis_env *env, int32_t n, order_key_fn key, int32_t arg,
                             bool have_last, int32_t lp, int32_t ls)
{
    int32_t best = -1, bp = 0, bs = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t p, s;
        if (!key(env, i, arg, &p, &s)) continue;
        if (have_last && (p < lp || (p == lp && s <= ls))) continue;
        if (best < 0 || p < bp || (p == bp && s < bs)) {
            best = i;
            bp = p;
            bs = s;
        }
    }
    return best;
}

/* Walks one ordered list, adding {owner, priority[, name]} per record. */
typedef const char *(*order_name_fn)(const polis_env *env, int32_t i);
typedef const polis_ctx *(*order_owner_fn)(const polis_env *env, int32_t i);

static void add_ordered(describe_builder *b, cJSON *arr, const polis_env *env, int32_t n,
                        order_key_fn key, int32_t arg, order_name_fn name, order_owner_fn owner)
{
    bool have = false;
    int32_t lp = 0, ls = 0;
    for (;;) {
        int32_t i = next_in_order(env, n, key, arg, have, lp, ls);
        if (i < 0) break;
        int32_t p, s;
        key(env, i, arg, &p, &s);
        cJSON *o = add_obj(b, arr, NULL);
        if (name) add_str(b, o, "name", name(env, i));
        add_i64(b, o, "priority", p);
        add_str(b, o, "owner", owner_name(owner(env, i)));
        have = true;
        lp = p;
        ls = s;
    }
}

static bool transform_key(const polis_env *env, int32_t i, int32_t arg, int32_t *prio, int32_t *seq)
{
    *prio = env->transforms[i].priority;
    *seq = env->transforms[i].seq;
    return true;
}

static const char *transform_name(const polis_env *env, int32_t i)
{
    return env->transforms[i].name;
}

static const polis_ctx *transform_owner(const polis_env *env, int32_t i)
{
    return env->transforms[i].ctx;
}

static bool hook_key(const polis_env *env, int32_t i, int32_t phase, int32_t *prio, int32_t *seq)
{
    *prio = env->hooks[i].priority;
    *seq = env->hooks[i].seq;
    return (int32_t)env->hooks[i].phase == phase;
}

static const polis_ctx *hook_owner(const polis_env *env, int32_t i) { return env->hooks[i].ctx; }

/* Plugin and script subscribers only: host subscribers (polis_env_subscribe) belong to the
 * caller, not to the scenario. */
static bool sub_key(const polis_env *env, int32_t i, int32_t type, int32_t *prio, int32_t *seq)
{
    *prio = env->subs[i].priority;
    *seq = env->subs[i].seq;
    return env->subs[i].type == type && env->subs[i].fn != NULL;
}

static const polis_ctx *sub_owner(const polis_env *env, int32_t i) { return env->subs[i].ctx; }

static void describe_transforms(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "reward_transforms");
    add_ordered(b, arr, env, env->n_transforms, transform_key, 0, transform_name, transform_owner);
}

static void describe_hooks(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *obj = add_obj(b, root, "hooks");
    for (int32_t phase = 0; phase < POLIS_PHASE_COUNT; phase++) {
        cJSON *arr = add_arr(b, obj, polis__phase_name((polis_phase)phase));
        add_ordered(b, arr, env, env->n_hooks, hook_key, phase, NULL, hook_owner);
    }
}

static void describe_events(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "events");
    for (int32_t i = 0; i < env->n_events; i++) {
        const polis__event_type *e = &env->events[i];
        cJSON *o = add_obj(b, arr, NULL);
        add_i64(b, o, "id", i);
        add_str(b, o, "name", e->name);
        add_u64(b, o, "size", e->size);
        add_str(b, o, "owner", owner_name(e->owner));
        cJSON *fields = add_arr(b, o, "fields");
        for (int32_t k = 0; k < e->n_fields; k++) {
            cJSON *f = add_obj(b, fields, NULL);
            add_str(b, f, "name", e->fields[k].name);
            add_str(b, f, "type", ftype_name(e->fields[k].type));
            add_u64(b, f, "offset", e->fields[k].offset);
        }
        cJSON *subs = add_arr(b, o, "subscribers");
        add_ordered(b, subs, env, env->n_subs, sub_key, i, NULL, sub_owner);
    }
}

static void describe_components(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "components");
    for (int32_t i = 0; i < env->n_components; i++) {
        const polis__component *c = &env->components[i];
        cJSON *o = add_obj(b, arr, NULL);
        add_i64(b, o, "id", i);
        add_str(b, o, "name", c->name);
        add_u64(b, o, "elem_size", c->elem_size);
        add_str(b, o, "owner", owner_name(c->owner));
    }
}

static void describe_services(describe_builder *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = add_arr(b, root, "services");
    for (int32_t i = 0; i < env->n_services; i++) {
        cJSON *o = add_obj(b, arr, NULL);
        add_str(b, o, "name", env->services[i].name);
        add_str(b, o, "owner", owner_name(env->services[i].owner));
    }
}

static void describe_scenario(describe_builder *b, cJSON *root, const polis_env *env)
{
    const polis__scenario *scn = &env->scn;
    cJSON *s = add_obj(b, root, "scenario");
    add_str(b, s, "name", scn->name);
    add_str(b, s, "doc", scn->doc);
    add_str(b, s, "source", scn->source);
    add_u64(b, s, "seed", scn->seed);
    add_i64(b, s, "max_steps", env->max_steps);
    add_i64(b, s, "max_entities", env->max_entities);
    add_i64(b, s, "event_queue", scn->event_queue);
    cJSON *agents = add_arr(b, root, "agents");
    for (int32_t i = 0; i < env->n_agents; i++)
        add_str(b, agents, NULL, polis_env_agent_name(env, i));
}

/* What modules' describe callbacks add with (core/module.h). */
cJSON *polis__describe_obj(polis__describe *b, cJSON *parent, const char *key)
{
    return add_obj(b, parent, key);
}

cJSON *polis__describe_arr(polis__describe *b, cJSON *parent, const char *key)
{
    return add_arr(b, parent, key);
}

cJSON *polis__describe_str(polis__describe *b, cJSON *parent, const char *key, const char *s)
{
    return add_str(b, parent, key, s);
}

cJSON *polis__describe_i64(polis__describe *b, cJSON *parent, const char *key, int64_t v)
{
    return add_i64(b, parent, key, v);
}

const char *polis__describe_owner(const polis_ctx *ctx) { return owner_name(ctx); }

char *polis_env_describe_json(const polis_env *env)
{
    if (!env) return NULL;
    describe_builder b = {false};
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    add_str(&b, root, "polis_version", POLIS_VERSION_STRING);
    describe_scenario(&b, root, env);
    describe_grid(&b, root, env);
    describe_plugins(&b, root, env);
    describe_actions(&b, root, env);
    describe_observation(&b, root, env);
    describe_rewards(&b, root, env);
    describe_transforms(&b, root, env);
    describe_events(&b, root, env);
    describe_hooks(&b, root, env);
    describe_components(&b, root, env);
    describe_services(&b, root, env);
    describe_exports(&b, root, env);
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->describe) (*m)->describe(&b, root, env);

    char *out = NULL;
    if (!b.failed) {
        char *text = cJSON_Print(root);
        if (text) {
            size_t len = strlen(text);
            out = malloc(len + 2);
            if (out) {
                memcpy(out, text, len);
                out[len] = '\n';
                out[len + 1] = '\0';
            }
            cJSON_free(text);
        }
    }
    cJSON_Delete(root);
    return out;
}

void polis_free(void *p) { free(p); }
