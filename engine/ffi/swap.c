/*
 * engine/ffi/swap.c — replacing registered handlers by name, from the scenario (docs/ffi.md,
 * "Replacing handlers").
 *
 *   "replace": [
 *     {"kind": "transform", "name": "social.split", "with": "swap_exports.keep_half"},
 *     {"kind": "reward", "name": "inventory", "with": "rules.my_reward"},
 *     {"kind": "termination", "name": "gather.end", "disable": true}
 *   ]
 *
 * Every kind goes through one path: find the registry record by kind and name, check that
 * the handler may be replaced (or disabled) and has not been already, resolve "with" to a
 * plugin export (its declared signature matched against the kind's C callback) or to a
 * script's global Lua function, and write the new function, user data and ctx into the
 * record. This runs when registration freezes, before the per-phase hook copies and the
 * sorted transforms are made, so the step calls a replaced handler through the same
 * indirect call as the original: no branch, no lookup, no allocation per step.
 *
 * The entries are read from the scenario tree (env->scn.root, alive until create returns)
 * and every refusal names its JSON path.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ffi/internal.h"
#include "lua/internal.h"
#include "policy/internal.h"

typedef enum swap_kind {
    SK_ACTION = 0,
    SK_LEGAL,
    SK_OBSERVATION,
    SK_REWARD,
    SK_TRANSFORM,
    SK_TERMINATION,
    SK_HOOK,
    SK_POLICY,
    SK_COUNT
} swap_kind;

static const struct {
    const char *key;  /* the "kind" value */
    const char *what; /* for messages */
} KINDS[SK_COUNT] = {{"action", "action"},
                     {"legal", "legality function"},
                     {"observation", "observation"},
                     {"reward", "reward function"},
                     {"transform", "reward transform"},
                     {"termination", "termination rule"},
                     {"hook", "hook"},
                     {"policy", "policy"}};

/* One handler a "replace" entry took, so a second entry for it is refused. */
typedef struct swap_claim {
    swap_kind kind; /* SK_TERMINATION claims are kept as SK_HOOK: the same records */
    int32_t index;
    int32_t entry;
    bool disabled;
} swap_claim;

struct polis__swap_state {
    swap_claim *claims;
    int32_t n_claims, cap_claims;
};

/* ---- messages ----------------------------------------------------------------------------- */

static const char *src_of(const polis_env *env)
{
    return env->scn.source ? env->scn.source : "<scenario>";
}

/* A short description of a JSON value for "got ..." */
static const char *got(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsString(v))
        snprintf(buf, n, "\"%.60s%s\"", v->valuestring, strlen(v->valuestring) > 60 ? "..." : "");
    else if (cJSON_IsNumber(v))
        snprintf(buf, n, "%.17g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, n, "null");
    else
        snprintf(buf, n, "%s", cJSON_IsArray(v) ? "an array" : "an object");
    return buf;
}

static polis_status at_fail(polis_env *env, polis_status st, const char *path, const char *fmt, ...)
    POLIS_PRINTF(4, 5);
static polis_status at_fail(polis_env *env, polis_status st, const char *path, const char *fmt, ...)
{
    char msg[POLIS_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return polis__fail(env, st, "%s: %s: %s", src_of(env), path, msg);
}

/* Appends s to a ", "-separated list in buf, marking a cut with "...". */
static void list_add(char *buf, size_t n, const char *s)
{
    size_t len = strlen(buf);
    if (len + 8 >= n) return;
    if (len + strlen(s) + 6 >= n) {
        snprintf(buf + len, n - len, "%s...", len ? ", " : "");
        buf[n - 1] = '\0';
        return;
    }
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", s);
}

/* ---- finding the records ------------------------------------------------------------------ */

/* The name a hook is replaced by: "<owner>.<phase>", then "<owner>.<phase>.2", ... for the
 * owner's further hooks of that phase, in registration order. */
static void hook_name(const polis_env *env, int32_t i, char *buf, size_t n)
{
    const polis__hook *h = &env->hooks[i];
    int32_t k = 1;
    for (int32_t j = 0; j < i; j++)
        k += env->hooks[j].ctx == h->ctx && env->hooks[j].phase == h->phase;
    if (k == 1)
        snprintf(buf, n, "%s.%s", h->ctx->name, polis__phase_name(h->phase));
    else
        snprintf(buf, n, "%s.%s.%d", h->ctx->name, polis__phase_name(h->phase), (int)k);
}

static int32_t kind_count(const polis_env *env, swap_kind k)
{
    switch (k) {
    case SK_ACTION:
    case SK_LEGAL: return env->n_actions;
    case SK_OBSERVATION: return env->n_obs;
    case SK_REWARD: return env->n_rewards;
    case SK_TRANSFORM: return env->n_transforms;
    case SK_TERMINATION:
    case SK_HOOK: return env->n_hooks;
    case SK_POLICY: return env->policy->n_policies;
    case SK_COUNT: break;
    }
    return 0;
}

/* The name of record i of kind k (NULL: the record is not of that kind, e.g. a hook of
 * another phase for a termination rule). */
static const char *kind_name(const polis_env *env, swap_kind k, int32_t i, char *buf, size_t n)
{
    switch (k) {
    case SK_ACTION:
    case SK_LEGAL: return env->actions[i].name;
    case SK_OBSERVATION: return env->obs[i].name;
    case SK_REWARD: return env->rewards[i].name;
    case SK_TRANSFORM: return env->transforms[i].name;
    case SK_TERMINATION:
        if (env->hooks[i].phase != POLIS_PHASE_END) return NULL;
        hook_name(env, i, buf, n);
        return buf;
    case SK_HOOK: hook_name(env, i, buf, n); return buf;
    case SK_POLICY: return env->policy->policies[i].name;
    case SK_COUNT: break;
    }
    return NULL;
}

static int32_t kind_find(const polis_env *env, swap_kind k, const char *name)
{
    char buf[192];
    for (int32_t i = 0; i < kind_count(env, k); i++) {
        const char *nm = kind_name(env, k, i, buf, sizeof buf);
        if (nm && strcmp(nm, name) == 0) return i;
    }
    return -1;
}

static polis_status unknown_name(polis_env *env, const char *path, swap_kind k, const char *name)
{
    /* The name may be right and the kind wrong. */
    for (int32_t o = 0; o < SK_COUNT; o++) {
        if (o == (int32_t)k || o == SK_LEGAL || (k == SK_LEGAL && o == SK_ACTION)) continue;
        if (kind_find(env, (swap_kind)o, name) >= 0)
            return at_fail(env, POLIS_ERR_CONFIG, path,
                           "no %s named \"%s\"; \"%s\" is a %s (\"kind\": \"%s\")", KINDS[k].what,
                           name, name, KINDS[o].what, KINDS[o].key);
    }
    char list[512] = "", buf[192];
    for (int32_t i = 0; i < kind_count(env, k); i++) {
        const char *nm = kind_name(env, k, i, buf, sizeof buf);
        if (nm) list_add(list, sizeof list, nm);
    }
    return at_fail(env, POLIS_ERR_CONFIG, path, "no %s named \"%s\" (registered: %s)",
                   KINDS[k].what, name, list[0] ? list : "none");
}

/* ---- what a replacement must look like ---------------------------------------------------- */

/* Whether f's parameters after ctx are exactly `want` (a pointer's element dtype in elem). */
static bool params_are(const polis__ffi_fn *f, const polis__ftype *want, int32_t n,
                       polis_dtype elem)
{
    if (polis__ffi_nparams(f) != n + 1 || polis__ffi_param(f, 0) != POLIS__FT_CTX) return false;
    for (int32_t i = 0; i < n; i++) {
        if (polis__ffi_param(f, i + 1) != want[i]) return false;
        if (want[i] == POLIS__FT_PTR && polis__ffi_param_elem(f, i + 1) != elem) return false;
    }
    return true;
}

/* Whether export f fits kind k (elem: the observation's dtype); writes what it needs. */
static bool signature_fits(const polis__ffi_fn *f, swap_kind k, polis_dtype elem, char *need,
                           size_t n)
{
    static const polis__ftype agent_arg[] = {POLIS__FT_I32, POLIS__FT_I32};
    static const polis__ftype agent_ptr[] = {POLIS__FT_I32, POLIS__FT_PTR};
    static const polis__ftype rewards[] = {POLIS__FT_PTR};
    static const polis__ftype agent[] = {POLIS__FT_I32};
    polis__ftype r = polis__ffi_ret(f);
    bool status = r == POLIS__FT_I32 || r == POLIS__FT_VOID;
    switch (k) {
    case SK_ACTION:
        snprintf(need, n, "i32(ctx,i32,i32) or void(ctx,i32,i32)");
        return status && params_are(f, agent_arg, 2, elem);
    case SK_LEGAL:
        snprintf(need, n, "bool(ctx,i32,i32)");
        return r == POLIS__FT_BOOL && params_are(f, agent_arg, 2, elem);
    case SK_OBSERVATION:
        snprintf(need, n, "void(ctx,i32,%s*)", polis_dtype_name(elem));
        return r == POLIS__FT_VOID && params_are(f, agent_ptr, 2, elem);
    case SK_REWARD:
    case SK_TRANSFORM:
        snprintf(need, n, "i32(ctx,f32*) or void(ctx,f32*)");
        return status && params_are(f, rewards, 1, POLIS_DTYPE_F32);
    case SK_TERMINATION:
    case SK_HOOK:
        snprintf(need, n, "i32(ctx) or void(ctx)");
        return status && params_are(f, NULL, 0, elem);
    case SK_POLICY:
        snprintf(need, n, "i32(ctx,i32)");
        return r == POLIS__FT_I32 && params_are(f, agent, 1, elem);
    case SK_COUNT: break;
    }
    return false;
}

/* ---- disabled handlers -------------------------------------------------------------------- */

static polis_status off_status(polis_ctx *ctx, void *ud)
{
    (void)ctx, (void)ud;
    return POLIS_OK;
}

static polis_status off_rewards(polis_ctx *ctx, void *ud, float *rewards)
{
    (void)ctx, (void)ud, (void)rewards;
    return POLIS_OK;
}

/* The field keeps its place in the layout and stays all zeros (the buffers start zeroed). */
static void off_obs(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)ctx, (void)ud, (void)agent, (void)dst;
}

static bool off_action(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx, (void)ud, (void)agent, (void)arg;
    return false;
}

/* ---- one entry ---------------------------------------------------------------------------- */

/* The replacement: a prepared export or a Lua callback record, and the ctx it runs as. */
typedef struct swap_with {
    const polis__ffi_fn *fn;
    polis__lua_cb *cb;
    polis_ctx *ctx;
} swap_with;

/* Writes the replacement (or, with w NULL, the disabled handler) into record i of kind k. */
static void install(polis_env *env, swap_kind k, int32_t i, const swap_with *w)
{
    void *ud = w ? (w->fn ? (void *)(uintptr_t)w->fn : (void *)w->cb) : NULL;
    polis_ctx *ctx = w ? w->ctx : NULL;
    bool c = w && w->fn;
    switch (k) {
    case SK_ACTION: {
        polis__action *a = &env->actions[i];
        if (!w) { /* never legal, so the handler never runs */
            a->legal = off_action;
            a->legal_ud = NULL;
            break;
        }
        a->handler = c ? polis__ffi_tramp_action(w->fn) : polis__lua_tramp_action;
        a->ud = ud;
        a->ctx = ctx;
        break;
    }
    case SK_LEGAL: {
        polis__action *a = &env->actions[i];
        a->legal = !w ? NULL : c ? polis__ffi_tramp_legal(w->fn) : polis__lua_tramp_legal;
        if (w) {
            a->legal_ud = ud;
            a->legal_ctx = ctx;
        }
        break;
    }
    case SK_OBSERVATION: {
        polis__obs *o = &env->obs[i];
        o->write = !w ? off_obs : c ? polis__ffi_tramp_obs(w->fn, o->dtype) : polis__lua_tramp_obs;
        if (w) {
            o->ud = ud;
            o->ctx = ctx;
        }
        /* The declared range was the replaced writer's promise: a replacement (or the zeros
         * of a disabled field) need not keep it, so the field has none (ABI 1.4). */
        polis__free(env, o->range_lo, sizeof *o->range_lo * (size_t)o->range_n);
        polis__free(env, o->range_hi, sizeof *o->range_hi * (size_t)o->range_n);
        o->range_lo = o->range_hi = NULL;
        o->range_n = 0;
        o->range_dim = -1;
        break;
    }
    case SK_REWARD: {
        polis__reward *r = &env->rewards[i];
        r->fn = !w ? off_rewards : c ? polis__ffi_tramp_rewards(w->fn) : polis__lua_tramp_reward;
        if (w) {
            r->ud = ud;
            r->ctx = ctx;
        }
        break;
    }
    case SK_TRANSFORM: {
        polis__transform *t = &env->transforms[i];
        t->fn = !w ? off_rewards : c ? polis__ffi_tramp_rewards(w->fn) : polis__lua_tramp_transform;
        if (w) {
            t->ud = ud;
            t->ctx = ctx;
        }
        break;
    }
    case SK_TERMINATION:
    case SK_HOOK: {
        polis__hook *h = &env->hooks[i];
        h->fn = !w ? off_status : c ? polis__ffi_tramp_hook(w->fn) : polis__lua_tramp_hook;
        if (w) {
            h->ud = ud;
            h->ctx = ctx;
        }
        break;
    }
    case SK_POLICY: {
        polis__policy *p = &env->policy->policies[i];
        p->fn = c ? polis__ffi_tramp_policy(w->fn) : polis__lua_tramp_policy;
        p->ud = ud;
        p->ctx = ctx;
        break;
    }
    case SK_COUNT: break;
    }
}

/* Why record i of kind k cannot be replaced (or, when disable, disabled); NULL if it can. */
static const char *refusal(const polis_env *env, swap_kind k, int32_t i, bool disable, char *buf,
                           size_t n)
{
    if ((k == SK_ACTION || k == SK_LEGAL) && i == 0)
        return "noop is the kernel's action, always legal; it cannot be replaced or disabled";
    if (k == SK_ACTION || k == SK_LEGAL) {
        int32_t first = -1;
        for (int32_t j = 1; j <= i && first < 0; j++)
            if (env->actions[j].family_count && i < j + env->actions[j].family_count) first = j;
        if (first >= 0 && (k == SK_LEGAL || disable)) {
            snprintf(buf, n,
                     "action %s belongs to the action family %s..%s, whose mask comes from one "
                     "row function for the whole family: its legality cannot be %s alone",
                     env->actions[i].name, env->actions[first].name,
                     env->actions[first + env->actions[first].family_count - 1].name,
                     disable ? "disabled" : "replaced");
            return buf;
        }
    }
    if (k == SK_POLICY && disable)
        return "a policy cannot be disabled: a policy runs only when a host asks for it by "
               "name (leave it unused, or replace it)";
    return NULL;
}

static const char *const ENTRY_KEYS[] = {"kind", "name", "with", "disable"};

static polis_status claim(polis_env *env, swap_kind k, int32_t index, int32_t entry, bool disabled,
                          const char *path, const char *name)
{
    polis__swap_state *s = env->swap;
    swap_kind key = k == SK_TERMINATION ? SK_HOOK : k;
    for (int32_t c = 0; c < s->n_claims; c++) {
        const swap_claim *o = &s->claims[c];
        /* disabling an action takes its legality too (it is made never legal) */
        bool same = o->index == index &&
                    (o->kind == key || (o->kind == SK_ACTION && o->disabled && key == SK_LEGAL) ||
                     (key == SK_ACTION && disabled && o->kind == SK_LEGAL));
        if (same)
            return at_fail(env, POLIS_ERR_CONFIG, path, "%s \"%s\" is already %s by replace[%d]",
                           KINDS[k].what, name, o->disabled ? "disabled" : "replaced",
                           (int)o->entry);
    }
    void *arr = s->claims;
    polis_status st = polis__grow(env, &arr, &s->cap_claims, s->n_claims, sizeof *s->claims);
    s->claims = arr;
    if (st) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    s->claims[s->n_claims++] = (swap_claim){key, index, entry, disabled};
    return POLIS_OK;
}

static polis_status resolve_with(polis_env *env, swap_kind k, int32_t index, const char *with,
                                 const char *path, swap_with *w)
{
    const char *dot = strchr(with, '.');
    if (!dot || dot == with || !dot[1])
        return at_fail(env, POLIS_ERR_CONFIG, path,
                       "\"%s\" does not name a function (expected \"plugin.export\" or "
                       "\"script.function\")",
                       with);
    char owner[128];
    size_t olen = (size_t)(dot - with);
    polis_ctx *ctx = NULL;
    if (olen < sizeof owner) {
        memcpy(owner, with, olen);
        owner[olen] = '\0';
        ctx = polis__ctx_find(env, owner);
    }
    if (!ctx)
        return at_fail(env, POLIS_ERR_CONFIG, path,
                       "\"%s\": no plugin or script named \"%.*s\" "
                       "is loaded",
                       with, (int)olen, with);
    polis_dtype elem = k == SK_OBSERVATION ? env->obs[index].dtype : POLIS_DTYPE_F32;
    char why[POLIS_ERRMAX];
    if (ctx->kind == POLIS__CTX_SCRIPT) {
        size_t count = 0;
        if (k == SK_OBSERVATION) count = env->obs[index].nbytes / polis_dtype_size(elem);
        char label[192];
        const char *nm = kind_name(env, k, index, label, sizeof label);
        polis_status st = polis__lua_swap_cb(ctx, dot + 1, nm ? nm : "?", elem, count,
                                             k == SK_LEGAL, &w->cb, why, sizeof why);
        if (st) return at_fail(env, st, path, "%s", why);
        w->ctx = ctx;
        return POLIS_OK;
    }
    if (ctx->kind != POLIS__CTX_PLUGIN)
        return at_fail(env, POLIS_ERR_CONFIG, path,
                       "\"%s\": %s is the kernel; name a plugin "
                       "export or a script function",
                       with, ctx->name);
    polis_status st = polis__ffi_find(env, with, &w->fn, why, sizeof why);
    if (st) return at_fail(env, st, path, "%s", why);
    char need[64];
    if (!signature_fits(w->fn, k, elem, need, sizeof need)) {
        char extra[160] = "";
        if (k == SK_OBSERVATION)
            snprintf(extra, sizeof extra, " (observation %s is %s)", env->obs[index].name,
                     polis_dtype_name(elem));
        return at_fail(env, POLIS_ERR_FFI, path, "%s has signature %s, but %s %s needs %s%s", with,
                       polis__ffi_signature(w->fn), strchr("aeiou", KINDS[k].what[0]) ? "an" : "a",
                       KINDS[k].what, need, extra);
    }
    w->ctx = polis__ffi_owner(w->fn);
    return POLIS_OK;
}

static polis_status swap_one(polis_env *env, const cJSON *e, int32_t i)
{
    char ip[48], kp[96], g[96];
    snprintf(ip, sizeof ip, "replace[%d]", (int)i);
    if (!cJSON_IsObject(e))
        return at_fail(env, POLIS_ERR_CONFIG, ip, "expected an object, got %s",
                       got(e, g, sizeof g));
    for (const cJSON *m = e->child; m; m = m->next) {
        if (m->string[0] == '_') continue;
        bool known = false;
        for (size_t k = 0; k < sizeof ENTRY_KEYS / sizeof ENTRY_KEYS[0]; k++)
            known |= strcmp(m->string, ENTRY_KEYS[k]) == 0;
        if (!known) {
            snprintf(kp, sizeof kp, "%s[\"%.40s\"]", ip, m->string);
            bool plain = m->string[0] != '\0';
            for (const char *p = m->string; *p; p++)
                plain &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                         (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';
            if (plain) snprintf(kp, sizeof kp, "%s.%.40s", ip, m->string);
            return at_fail(env, POLIS_ERR_CONFIG, kp,
                           "unknown key (expected one of kind, name, with, disable)");
        }
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "kind");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *with = cJSON_GetObjectItemCaseSensitive(e, "with");
    const cJSON *disable = cJSON_GetObjectItemCaseSensitive(e, "disable");
    if (!kind) return at_fail(env, POLIS_ERR_CONFIG, ip, "missing required key \"kind\"");
    if (!name) return at_fail(env, POLIS_ERR_CONFIG, ip, "missing required key \"name\"");
    snprintf(kp, sizeof kp, "%s.kind", ip);
    swap_kind k = SK_COUNT;
    for (int32_t c = 0; c < SK_COUNT && cJSON_IsString(kind); c++)
        if (strcmp(kind->valuestring, KINDS[c].key) == 0) k = (swap_kind)c;
    if (k == SK_COUNT)
        return at_fail(env, POLIS_ERR_CONFIG, kp,
                       "expected one of action, legal, observation, reward, transform, "
                       "termination, hook, policy, got %s",
                       got(kind, g, sizeof g));
    snprintf(kp, sizeof kp, "%s.name", ip);
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return at_fail(env, POLIS_ERR_CONFIG, kp, "expected a non-empty string, got %s",
                       got(name, g, sizeof g));
    if (!with == !disable)
        return at_fail(env, POLIS_ERR_CONFIG, ip,
                       "expected exactly one of \"with\" and \"disable\", got %s",
                       with ? "both" : "neither");
    if (disable && !cJSON_IsTrue(disable)) {
        snprintf(kp, sizeof kp, "%s.disable", ip);
        return at_fail(env, POLIS_ERR_CONFIG, kp, "expected true, got %s",
                       got(disable, g, sizeof g));
    }
    if (with && (!cJSON_IsString(with) || !with->valuestring[0])) {
        snprintf(kp, sizeof kp, "%s.with", ip);
        return at_fail(env, POLIS_ERR_CONFIG, kp,
                       "expected a non-empty string \"plugin.export\" or \"script.function\", "
                       "got %s",
                       got(with, g, sizeof g));
    }

    snprintf(kp, sizeof kp, "%s.name", ip);
    int32_t index = kind_find(env, k, name->valuestring);
    if (index < 0) return unknown_name(env, kp, k, name->valuestring);
    char why[POLIS_ERRMAX];
    const char *no = refusal(env, k, index, disable != NULL, why, sizeof why);
    if (no) {
        if (disable) snprintf(kp, sizeof kp, "%s.disable", ip);
        return at_fail(env, POLIS_ERR_CONFIG, kp, "%s", no);
    }
    polis_status st = claim(env, k, index, i, disable != NULL, kp, name->valuestring);
    if (st) return st;
    if (disable) {
        install(env, k, index, NULL);
        return POLIS_OK;
    }
    snprintf(kp, sizeof kp, "%s.with", ip);
    swap_with w = {0};
    if ((st = resolve_with(env, k, index, with->valuestring, kp, &w))) return st;
    install(env, k, index, &w);
    return POLIS_OK;
}

polis_status polis__swap_apply(polis_env *env)
{
    const cJSON *list =
        env->scn.root ? cJSON_GetObjectItemCaseSensitive(env->scn.root, "replace") : NULL;
    if (!list) return POLIS_OK;
    char g[96];
    if (!cJSON_IsArray(list))
        return at_fail(env, POLIS_ERR_CONFIG, "replace", "expected an array, got %s",
                       got(list, g, sizeof g));
    if (!list->child) return POLIS_OK;
    if (!env->swap && !(env->swap = polis__alloc(env, sizeof *env->swap)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    int32_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        polis_status st = swap_one(env, e, i);
        if (st) return st;
    }
    return POLIS_OK;
}

void polis__swap_free(polis_env *env)
{
    polis__swap_state *s = env->swap;
    if (!s) return;
    polis__free(env, s->claims, sizeof *s->claims * (size_t)s->cap_claims);
    polis__free(env, s, sizeof *s);
    env->swap = NULL;
}
