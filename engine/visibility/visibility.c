/*
 * engine/visibility/visibility.c — who sees whom (polis/visibility.h, docs/visibility.md): the
 * scenario's "visibility" rules (observers x hidden agents, from tick N until tick M), the
 * runtime settings per pair that polis_env_visibility_set, plugins and scripts make, and the
 * "visibility" host API games ask while they write observations.
 *
 * Rules are bitsets over the agents, read once at create; runtime settings are two bit
 * matrices [observer][target] (a setting exists, its value), allocated at the first setting.
 * A query is a few bit tests and allocates nothing, so observation writers may ask per pair.
 * Changes made through the public call are logged with the moment (episode, tick) they were
 * made at, for recorders; a plugin's or a script's changes are not (a replay makes them again
 * by re-running the game).
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/module.h"
#include "polis/visibility.h"

#define VIS_LOG_CAP 256

typedef struct vis_rule {
    int64_t from, until; /* hidden while from <= tick < until */
    uint64_t *observers, *hidden;
} vis_rule;

typedef struct vis_log {
    int64_t episode, tick; /* the moment its changes were made at; episode -1: empty */
    int32_t n;
    polis_visibility_change changes[VIS_LOG_CAP];
} vis_log;

struct polis__visibility {
    int32_t n, words; /* agents; uint64 words per bitset row */
    vis_rule *rules;
    int32_t n_rules;
    uint64_t *rule_bits;   /* every rule's two bitsets, one allocation */
    uint64_t *set, *value; /* [n][words]: a setting exists; it shows. NULL until the first */
    bool any_hiding;       /* a setting ever hid a pair (a conservative "active") */
    vis_log log[2];        /* the latest two moments with public changes */
    int32_t log_cur;
};

typedef struct polis__visibility vis;

static inline bool bit(const uint64_t *row, int32_t i) { return (row[i >> 6] >> (i & 63)) & 1u; }

static bool visible_at(const vis *v, int64_t tick, int32_t o, int32_t t)
{
    if (o == t) return true;
    if (v->set) {
        size_t row = (size_t)o * (size_t)v->words;
        if (bit(v->set + row, t)) return bit(v->value + row, t);
    }
    for (int32_t r = 0; r < v->n_rules; r++) {
        const vis_rule *ru = &v->rules[r];
        if (tick >= ru->from && tick < ru->until && bit(ru->observers, o) && bit(ru->hidden, t))
            return false;
    }
    return true;
}

static bool active_at(const vis *v, int64_t tick)
{
    if (v->any_hiding) return true;
    for (int32_t r = 0; r < v->n_rules; r++)
        if (tick >= v->rules[r].from && tick < v->rules[r].until) return true;
    return false;
}

static void vis_free(polis_env *env)
{
    vis *v = env->visibility;
    if (!v) return;
    size_t words = (size_t)v->n * (size_t)v->words;
    polis__free(env, v->rules, sizeof *v->rules * (size_t)v->n_rules);
    polis__free(env, v->rule_bits, sizeof(uint64_t) * 2 * (size_t)v->words * (size_t)v->n_rules);
    polis__free(env, v->set, sizeof(uint64_t) * words);
    polis__free(env, v->value, sizeof(uint64_t) * words);
    polis__free(env, v, sizeof *v);
    env->visibility = NULL;
}

static vis *vis_get(polis_env *env)
{
    if (env->visibility) return env->visibility;
    vis *v = polis__alloc(env, sizeof *v);
    if (!v) return NULL;
    v->n = env->n_agents;
    v->words = (env->n_agents + 63) / 64;
    v->log[0].episode = v->log[1].episode = -1;
    env->visibility = v;
    return v;
}

/* ---- the scenario's "visibility" --------------------------------------------------------- */

static polis_status at_fail(polis_env *env, const char *path, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
static polis_status at_fail(polis_env *env, const char *path, const char *fmt, ...)
{
    char msg[POLIS_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return polis__fail(env, POLIS_ERR_CONFIG, "%s: %s: %s", env->scn.source, path, msg);
}

static const char *got(const cJSON *n, char *buf, size_t cap)
{
    char *s = cJSON_PrintUnformatted(n);
    if (!s) return "a value";
    size_t len = strlen(s);
    if (len > 60)
        snprintf(buf, cap, "%.57s...", s);
    else
        snprintf(buf, cap, "%s", s);
    cJSON_free(s);
    return buf;
}

/* An agent by index or name into bits; "all" as the whole list. */
static polis_status read_agents(polis_env *env, const cJSON *list, const char *path, uint64_t *bits,
                                int32_t words)
{
    char g[80];
    if (cJSON_IsString(list) && strcmp(list->valuestring, "all") == 0) {
        for (int32_t a = 0; a < env->n_agents; a++) bits[a >> 6] |= UINT64_C(1) << (a & 63);
        return POLIS_OK;
    }
    if (!cJSON_IsArray(list))
        return at_fail(env, path,
                       "expected an array of agents (names or indices) or \"all\", "
                       "got %s",
                       got(list, g, sizeof g));
    if (!list->child) return at_fail(env, path, "expected at least one agent, got []");
    int32_t i = 0;
    (void)words;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char ep[128];
        snprintf(ep, sizeof ep, "%s[%d]", path, (int)i);
        int32_t a = -1;
        if (cJSON_IsNumber(e)) {
            double d = e->valuedouble;
            if (d != (double)(int64_t)d || d < 0 || d >= env->n_agents)
                return at_fail(env, ep, "expected an agent index in [0, %d], got %s",
                               (int)env->n_agents - 1, got(e, g, sizeof g));
            a = (int32_t)d;
        } else if (cJSON_IsString(e)) {
            for (int32_t k = 0; k < env->n_agents && a < 0; k++)
                if (strcmp(env->scn.agent_names[k], e->valuestring) == 0) a = k;
            if (a < 0)
                return at_fail(env, ep, "no agent named %s (agents are %s%s%s)",
                               got(e, g, sizeof g), env->scn.agent_names[0],
                               env->n_agents > 1 ? " .. " : "",
                               env->n_agents > 1 ? env->scn.agent_names[env->n_agents - 1] : "");
        } else {
            return at_fail(env, ep, "expected an agent name or index, got %s", got(e, g, sizeof g));
        }
        bits[a >> 6] |= UINT64_C(1) << (a & 63);
    }
    return POLIS_OK;
}

static polis_status read_tick(polis_env *env, const cJSON *rule, const char *ip, const char *key,
                              int64_t *out)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(rule, key);
    if (!n) return POLIS_OK;
    char g[80];
    if (!cJSON_IsNumber(n) || n->valuedouble != (double)(int64_t)n->valuedouble ||
        n->valuedouble < 0 || n->valuedouble > 1e15)
        return at_fail(env, ip, "%s: expected a tick (an integer >= 0), got %s", key,
                       got(n, g, sizeof g));
    *out = (int64_t)n->valuedouble;
    return POLIS_OK;
}

static polis_status read_rule(polis_env *env, const cJSON *e, int32_t i, vis_rule *ru)
{
    char ip[64], kp[96], g[80];
    snprintf(ip, sizeof ip, "visibility[%d]", (int)i);
    if (!cJSON_IsObject(e))
        return at_fail(env, ip,
                       "expected an object {\"observers\", \"hidden\", \"from\", "
                       "\"until\"}, got %s",
                       got(e, g, sizeof g));
    static const char *const keys[] = {"observers", "hidden", "from", "until", "doc"};
    for (const cJSON *m = e->child; m; m = m->next) {
        if (m->string[0] == '_') continue;
        bool known = false;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !known; k++)
            known = strcmp(keys[k], m->string) == 0;
        if (!known)
            return at_fail(env, ip,
                           "unknown key \"%s\" (expected observers, hidden, from, "
                           "until, doc)",
                           m->string);
    }
    static const char *const need[] = {"observers", "hidden"};
    for (int k = 0; k < 2; k++) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, need[k]);
        if (!l) return at_fail(env, ip, "missing required key \"%s\"", need[k]);
        snprintf(kp, sizeof kp, "%s.%s", ip, need[k]);
        polis_status st =
            read_agents(env, l, kp, k ? ru->hidden : ru->observers, env->visibility->words);
        if (st) return st;
    }
    ru->from = 0;
    ru->until = INT64_MAX;
    polis_status st;
    if ((st = read_tick(env, e, ip, "from", &ru->from)) ||
        (st = read_tick(env, e, ip, "until", &ru->until)))
        return st;
    if (ru->until <= ru->from)
        return at_fail(env, ip,
                       "until: %" PRId64 " is not after from (%" PRId64 "): the rule "
                       "would hide nothing",
                       ru->until, ru->from);
    return POLIS_OK;
}

/* After the plugins' init, so their start may already ask. */
static polis_status vis_load(polis_env *env)
{
    const cJSON *list =
        env->scn.root ? cJSON_GetObjectItemCaseSensitive(env->scn.root, "visibility") : NULL;
    if (!list) return POLIS_OK;
    char g[80];
    if (!cJSON_IsArray(list))
        return at_fail(env, "visibility", "expected an array of rules, got %s",
                       got(list, g, sizeof g));
    int32_t n = cJSON_GetArraySize(list);
    if (n == 0) return POLIS_OK;
    vis *v = vis_get(env);
    if (!v) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    v->rule_bits = polis__alloc(env, sizeof(uint64_t) * 2 * (size_t)v->words * (size_t)n);
    v->rules = v->rule_bits ? polis__alloc(env, sizeof *v->rules * (size_t)n) : NULL;
    if (!v->rules) {
        polis__free(env, v->rule_bits, sizeof(uint64_t) * 2 * (size_t)v->words * (size_t)n);
        v->rule_bits = NULL;
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    v->n_rules = n;
    int32_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        vis_rule *ru = &v->rules[i];
        ru->observers = v->rule_bits + (size_t)2 * (size_t)i * (size_t)v->words;
        ru->hidden = ru->observers + v->words;
        polis_status st = read_rule(env, e, i, ru);
        if (st) return st;
    }
    return POLIS_OK;
}

/* ---- settings ------------------------------------------------------------------------------ */

static polis_status set_pairs(polis_env *env, int32_t observer, int32_t target, int32_t state,
                              const char *who)
{
    int32_t n = env->n_agents;
    if (observer < -1 || observer >= n)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "%s: observer %d is not an agent (0 .. %d) nor -1 (every agent)", who,
                           (int)observer, (int)n - 1);
    if (target < -1 || target >= n)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "%s: target %d is not an agent (0 .. %d) nor -1 (every agent)", who,
                           (int)target, (int)n - 1);
    if (state < POLIS_VISIBILITY_RULES || state > POLIS_VISIBILITY_SHOWN)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "%s: state %d is not 0 (hidden), 1 (shown) or -1 (the scenario's "
                           "rules)",
                           who, (int)state);
    vis *v = vis_get(env);
    if (!v) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if (!v->set) {
        size_t words = (size_t)n * (size_t)v->words;
        v->set = polis__alloc(env, sizeof(uint64_t) * words);
        v->value = v->set ? polis__alloc(env, sizeof(uint64_t) * words) : NULL;
        if (!v->value) {
            polis__free(env, v->set, sizeof(uint64_t) * words);
            v->set = NULL;
            return polis__fail(env, POLIS_ERR_NOMEM, "%s: out of memory (%zu bytes)", who,
                               2 * sizeof(uint64_t) * words);
        }
    }
    if (state == POLIS_VISIBILITY_HIDDEN) v->any_hiding = true;
    int32_t o0 = observer < 0 ? 0 : observer, o1 = observer < 0 ? n : observer + 1;
    int32_t t0 = target < 0 ? 0 : target, t1 = target < 0 ? n : target + 1;
    for (int32_t o = o0; o < o1; o++) {
        uint64_t *s = v->set + (size_t)o * (size_t)v->words;
        uint64_t *val = v->value + (size_t)o * (size_t)v->words;
        for (int32_t t = t0; t < t1; t++) {
            uint64_t m = UINT64_C(1) << (t & 63);
            if (state == POLIS_VISIBILITY_RULES) {
                s[t >> 6] &= ~m;
                val[t >> 6] &= ~m;
            } else {
                s[t >> 6] |= m;
                if (state == POLIS_VISIBILITY_SHOWN)
                    val[t >> 6] |= m;
                else
                    val[t >> 6] &= ~m;
            }
        }
    }
    return POLIS_OK;
}

polis_status polis_env_visibility_set(polis_env *env, int32_t observer, int32_t target,
                                      int32_t state)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (env->state == POLIS__ENV_LOADING)
        return polis__fail(env, POLIS_ERR_STATE, "visibility_set: the env is not created yet");
    vis *v = vis_get(env);
    if (!v) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    vis_log *lg = &v->log[v->log_cur];
    if (lg->episode != env->episode || lg->tick != env->tick) {
        v->log_cur ^= 1;
        lg = &v->log[v->log_cur];
        lg->episode = env->episode;
        lg->tick = env->tick;
        lg->n = 0;
    }
    if (lg->n == VIS_LOG_CAP)
        return polis__fail(env, POLIS_ERR_LIMIT,
                           "visibility_set: more than %d changes at tick %" PRId64
                           " (the log a recording keeps of one moment is that long)",
                           VIS_LOG_CAP, env->tick);
    polis_status st = set_pairs(env, observer, target, state, "visibility_set");
    if (st) return st;
    lg->changes[lg->n++] = (polis_visibility_change){observer, target, state};
    return POLIS_OK;
}

bool polis_env_visible(const polis_env *env, int32_t observer, int32_t target)
{
    if (!env || observer < 0 || target < 0 || observer >= env->n_agents || target >= env->n_agents)
        return false;
    return !env->visibility || visible_at(env->visibility, env->tick, observer, target);
}

bool polis_env_visibility_active(const polis_env *env)
{
    return env && env->visibility && active_at(env->visibility, env->tick);
}

const polis_visibility_change *polis_env_visibility_changes(const polis_env *env, int64_t episode,
                                                            int64_t tick, int32_t *n)
{
    if (n) *n = 0;
    if (!env || !env->visibility || !n) return NULL;
    for (int k = 0; k < 2; k++) {
        const vis_log *lg = &env->visibility->log[k];
        if (lg->n && lg->episode == episode && lg->tick == tick) {
            *n = lg->n;
            return lg->changes;
        }
    }
    return NULL;
}

int32_t polis_env_visibility_n_rules(const polis_env *env)
{
    return env && env->visibility ? env->visibility->n_rules : 0;
}

polis_status polis_env_visibility_rule(const polis_env *env, int32_t i, int64_t *from,
                                       int64_t *until, uint8_t *observers, uint8_t *hidden)
{
    if (i < 0 || i >= polis_env_visibility_n_rules(env)) return POLIS_ERR_INVALID;
    const vis *v = env->visibility;
    const vis_rule *ru = &v->rules[i];
    if (from) *from = ru->from;
    if (until) *until = ru->until == INT64_MAX ? -1 : ru->until;
    for (int32_t a = 0; a < v->n; a++) {
        if (observers) observers[a] = bit(ru->observers, a);
        if (hidden) hidden[a] = bit(ru->hidden, a);
    }
    return POLIS_OK;
}

/* ---- the "visibility" host API -------------------------------------------------------------- */

static bool api_visible(polis_ctx *ctx, int32_t observer, int32_t target)
{
    return polis_env_visible(ctx->env, observer, target);
}

static bool api_active(polis_ctx *ctx) { return polis_env_visibility_active(ctx->env); }

static polis_status api_set(polis_ctx *ctx, int32_t observer, int32_t target, int32_t state)
{
    polis_status st = set_pairs(ctx->env, observer, target, state, "visibility set");
    if (st) {
        /* the env's message becomes the plugin's, placed like any other */
        char msg[POLIS_ERRMAX];
        snprintf(msg, sizeof msg, "%s", ctx->env->err);
        polis__ctx_error(ctx, "%s", msg);
    }
    return st;
}

static const polis_visibility_api vis_api = {
    .version = POLIS_VISIBILITY_API_VERSION,
    .struct_size = sizeof(polis_visibility_api),
    .visible = api_visible,
    .active = api_active,
    .set = api_set,
};

static void vis_describe(polis__describe *b, struct cJSON *root, const polis_env *env)
{
    const vis *v = env->visibility;
    if (!v || !v->n_rules) return;
    cJSON *arr = polis__describe_arr(b, root, "visibility");
    for (int32_t r = 0; r < v->n_rules; r++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        cJSON *obs = polis__describe_arr(b, o, "observers");
        for (int32_t a = 0; a < v->n; a++)
            if (bit(v->rules[r].observers, a)) polis__describe_i64(b, obs, NULL, a);
        cJSON *hid = polis__describe_arr(b, o, "hidden");
        for (int32_t a = 0; a < v->n; a++)
            if (bit(v->rules[r].hidden, a)) polis__describe_i64(b, hid, NULL, a);
        polis__describe_i64(b, o, "from", v->rules[r].from);
        if (v->rules[r].until != INT64_MAX) polis__describe_i64(b, o, "until", v->rules[r].until);
    }
}

POLIS_INTERNAL const polis__module polis__visibility_module = {
    .name = "visibility",
    .load = vis_load,
    .free = vis_free,
    .describe = vis_describe,
    .api_name = POLIS_VISIBILITY_API,
    .api_version = POLIS_VISIBILITY_API_VERSION,
    .api = &vis_api,
};
