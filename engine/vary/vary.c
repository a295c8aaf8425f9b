/*
 * engine/vary/vary.c — task distributions (polis/vary.h, docs/scenario.md "Task
 * distributions"): the scenario's top-level "vary" key, override paths and draws, drawn anew
 * at every reset from a generator seeded by the reset seed alone, and applied by rebuilding
 * the env in place (polis__env_rebuild, core/env.h) when the draw differs from what the env
 * is built with.
 *
 * At create (`load`) the draws are read and checked, and the scenario as read (with the
 * creation overrides applied, without "vary") is kept as text, the base every task is built
 * from. When registration is complete (`freeze`) the env's layout is noted and two probe
 * envs are built, one with every draw's first value (its first choice, the low end of its
 * range) and one with every last value, so an override path no reader accepts, a value out
 * of its range at either end or a task that changes the layout is refused at create, naming
 * the draw. At each reset (`prereset`) the task is drawn; a task that differs from the
 * current build rebuilds the env, and a rebuild that fails or changes the layout is undone
 * (the previous task is built again) and fails the reset with the reason.
 *
 * The task's text is the JSON object of override paths and values; it is what the env is
 * built with, what polis_env_task returns, what a recorder writes in its reset line and what
 * polis_env_reset_task plays again.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/module.h"
#include "polis/rng.h"
#include "polis/vary.h"

/* "vary" in ASCII: the draw's stream, apart from the env's ("polis") */
#define VARY_STREAM 0x76617279ULL

typedef enum { D_CHOICE, D_RANGE, D_GROUPS } draw_kind;

typedef struct draw {
    char *path;  /* the override path (the key in "vary") */
    char *where; /* vary["path"], for messages */
    char *spec;  /* the draw as written, unformatted JSON (malloc: cJSON's) */
    draw_kind kind;
    cJSON *choice; /* owned array (D_CHOICE) */
    int32_t n;     /* choices */
    double *w;     /* [n] cumulative weights, or NULL (uniform) */
    double lo, hi; /* D_RANGE */
    bool is_int;
    int32_t groups;  /* D_GROUPS: group ids */
    int32_t *home;   /* [agents] each agent's home group */
    double p_home;   /* chance an agent joins its home group */
    char *attribute; /* the attribute members get (1) */
} draw;

struct polis__vary {
    char *text; /* the scenario as read, without "vary" (malloc: cJSON's) */
    size_t len;
    char *source, *base_dir;
    draw *draws;
    int32_t n, n_agents;
    char *built;        /* the task the env is built with now (malloc) */
    char *task;         /* the current episode's task (malloc); "{}" before the first reset */
    char *layout;       /* the scenario's layout, which every task keeps (malloc) */
    const char *forced; /* polis_env_reset_task's task, during that call */
};

typedef struct polis__vary vary;

/* ---- messages ----------------------------------------------------------------------------- */

static polis_status vfail(polis_env *env, const char *fmt, ...) POLIS_PRINTF(2, 3);
static polis_status vfail(polis_env *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    polis__vfail(env, POLIS_ERR_CONFIG, fmt, ap);
    va_end(ap);
    return POLIS_ERR_CONFIG;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- reading the draws -------------------------------------------------------------------- */

static bool is_comment(const char *k) { return k && k[0] == '/' && k[1] == '/'; }

static polis_status only_keys(polis_env *env, const cJSON *o, const char *where,
                              const char *const *keys, int n)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, o) {
        if (is_comment(m->string)) continue;
        bool ok = false;
        for (int i = 0; i < n; i++) ok = ok || strcmp(m->string, keys[i]) == 0;
        if (!ok) {
            char list[160] = "";
            for (int i = 0; i < n; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                         keys[i]);
            return vfail(env, "%s: unknown key \"%s\" (expected %s)", where, m->string, list);
        }
    }
    return POLIS_OK;
}

static polis_status number(polis_env *env, const cJSON *n, const char *where, const char *key,
                           double lo, double hi, bool integer, double *out)
{
    if (!cJSON_IsNumber(n))
        return vfail(env, "%s%s: expected a number, got %s", where, key, polis__json_kind_name(n));
    double v = n->valuedouble;
    if (!isfinite(v) || v < lo || v > hi || (integer && v != floor(v))) {
        if (integer)
            return vfail(env, "%s%s: expected an integer in [%.17g, %.17g], got %.17g", where, key,
                         lo, hi, v);
        return vfail(env, "%s%s: expected a number in [%.17g, %.17g], got %.17g", where, key, lo,
                     hi, v);
    }
    *out = v;
    return POLIS_OK;
}

static polis_status read_choice(polis_env *env, draw *d, const cJSON *spec)
{
    static const char *const keys[] = {"choice", "weights"};
    polis_status st = only_keys(env, spec, d->where, keys, 2);
    if (st) return st;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(spec, "choice");
    if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) == 0)
        return vfail(env, "%s.choice: expected a non-empty array of values, got %s%s", d->where,
                     cJSON_IsArray(c) ? "an empty array" : polis__json_kind_name(c), "");
    d->kind = D_CHOICE;
    d->n = cJSON_GetArraySize(c);
    if (!(d->choice = cJSON_Duplicate(c, true)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(spec, "weights");
    if (!w) return POLIS_OK;
    if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) != d->n)
        return vfail(env, "%s.weights: expected %d weights (one per choice), got %s", d->where,
                     d->n, cJSON_IsArray(w) ? "another count" : polis__json_kind_name(w));
    if (!(d->w = polis__alloc(env, sizeof *d->w * (size_t)d->n)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    double sum = 0;
    int32_t i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, w) {
        char key[32];
        snprintf(key, sizeof key, ".weights[%d]", (int)i);
        double v;
        if ((st = number(env, x, d->where, key, 0, 1e300, false, &v))) return st;
        sum += v;
        d->w[i++] = sum;
    }
    if (!(sum > 0)) return vfail(env, "%s.weights: the weights sum to 0", d->where);
    return POLIS_OK;
}

static polis_status read_range(polis_env *env, draw *d, const cJSON *spec)
{
    static const char *const keys[] = {"range", "int"};
    polis_status st = only_keys(env, spec, d->where, keys, 2);
    if (st) return st;
    d->kind = D_RANGE;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(spec, "range");
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(spec, "int");
    if (i && !cJSON_IsBool(i))
        return vfail(env, "%s.int: expected true or false, got %s", d->where,
                     polis__json_kind_name(i));
    d->is_int = cJSON_IsTrue(i);
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2)
        return vfail(env, "%s.range: expected [low, high], got %s", d->where,
                     cJSON_IsArray(r) ? "another length" : polis__json_kind_name(r));
    double lim = d->is_int ? 2147483647.0 : 1e300;
    if ((st = number(env, r->child, d->where, ".range[0]", -lim, lim, d->is_int, &d->lo)) ||
        (st = number(env, r->child->next, d->where, ".range[1]", -lim, lim, d->is_int, &d->hi)))
        return st;
    if (d->lo > d->hi)
        return vfail(env, "%s.range: low %.17g is above high %.17g", d->where, d->lo, d->hi);
    return POLIS_OK;
}

static polis_status read_groups(polis_env *env, vary *v, draw *d, const cJSON *spec)
{
    static const char *const keys[] = {"groups"};
    static const char *const gkeys[] = {"agents", "groups", "home", "p_home", "attribute"};
    polis_status st = only_keys(env, spec, d->where, keys, 1);
    if (st) return st;
    d->kind = D_GROUPS;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(spec, "groups");
    char where[600];
    snprintf(where, sizeof where, "%s.groups", d->where);
    if (!cJSON_IsObject(g))
        return vfail(env, "%s: expected an object, got %s", where, polis__json_kind_name(g));
    if ((st = only_keys(env, g, where, gkeys, 5))) return st;
    double x;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, "agents");
    if (a) {
        if ((st = number(env, a, where, ".agents", 1, 65536, true, &x))) return st;
        if ((int32_t)x != v->n_agents)
            return vfail(env, "%s.agents: %d, but the scenario has %d agents", where, (int)x,
                         (int)v->n_agents);
    }
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "groups");
    if (!n) return vfail(env, "%s: needs \"groups\" (how many group ids)", where);
    if ((st = number(env, n, where, ".groups", 1, 65536, true, &x))) return st;
    d->groups = (int32_t)x;
    d->p_home = 1.0;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(g, "p_home");
    if (p && (st = number(env, p, where, ".p_home", 0, 1, false, &d->p_home))) return st;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(g, "attribute");
    if (at && (!cJSON_IsString(at) || !at->valuestring[0]))
        return vfail(env, "%s.attribute: expected an attribute name, got %s", where,
                     polis__json_kind_name(at));
    if (!(d->attribute = polis__strdup(env, at ? at->valuestring : "division_weight")) ||
        !(d->home = polis__alloc(env, sizeof *d->home * (size_t)v->n_agents)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(g, "home");
    if (!h) return POLIS_OK;
    if (!cJSON_IsArray(h) || cJSON_GetArraySize(h) != v->n_agents)
        return vfail(env, "%s.home: expected %d group ids (one per agent), got %s", where,
                     (int)v->n_agents,
                     cJSON_IsArray(h) ? "another count" : polis__json_kind_name(h));
    int32_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, h) {
        char key[32];
        snprintf(key, sizeof key, ".home[%d]", (int)i);
        if ((st = number(env, e, where, key, 0, d->groups - 1, true, &x))) return st;
        d->home[i++] = (int32_t)x;
    }
    return POLIS_OK;
}

static void draws_free(polis_env *env, vary *v)
{
    for (int32_t i = 0; i < v->n; i++) {
        draw *d = &v->draws[i];
        polis__strfree(env, d->path);
        polis__strfree(env, d->where);
        free(d->spec);
        cJSON_Delete(d->choice);
        polis__free(env, d->w, sizeof *d->w * (size_t)d->n);
        polis__free(env, d->home, sizeof *d->home * (size_t)v->n_agents);
        polis__strfree(env, d->attribute);
    }
    polis__free(env, v->draws, sizeof *v->draws * (size_t)(v->n ? v->n : 1));
}

static void vary_release(polis_env *env, vary *v)
{
    if (!v) return;
    draws_free(env, v);
    free(v->text);
    polis__strfree(env, v->source);
    polis__strfree(env, v->base_dir);
    free(v->built);
    free(v->task);
    free(v->layout);
    polis__free(env, v, sizeof *v);
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* which: -1 draws from rng; 0 the first value of every draw; 1 the last. */
static cJSON *draw_value(const vary *v, const draw *d, polis_rng *rng, int which)
{
    switch (d->kind) {
    case D_CHOICE: {
        int32_t k = 0;
        if (which == 1)
            k = d->n - 1;
        else if (which < 0 && d->w) {
            double u = polis_rng_double(rng) * d->w[d->n - 1];
            while (k < d->n - 1 && !(u < d->w[k])) k++;
        } else if (which < 0)
            k = (int32_t)polis_rng_below(rng, (uint32_t)d->n);
        return cJSON_Duplicate(cJSON_GetArrayItem(d->choice, k), true);
    }
    case D_RANGE: {
        double x = which == 0 ? d->lo : which == 1 ? d->hi : 0;
        if (which < 0)
            x = d->is_int ? (double)polis_rng_range(rng, (int32_t)d->lo, (int32_t)d->hi)
                          : d->lo + (d->hi - d->lo) * polis_rng_double(rng);
        return cJSON_CreateNumber(x);
    }
    case D_GROUPS: {
        cJSON *arr = cJSON_CreateArray();
        if (!arr) return NULL;
        for (int32_t g = 0; g < d->groups; g++) {
            cJSON *grp = cJSON_CreateObject(), *players = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, grp);
            cJSON_AddItemToObject(grp, "players", players);
        }
        int32_t *pick = malloc(sizeof *pick * (size_t)v->n_agents);
        if (!pick) {
            cJSON_Delete(arr);
            return NULL;
        }
        for (int32_t a = 0; a < v->n_agents; a++) {
            pick[a] = d->home[a];
            if (which < 0 && !(polis_rng_double(rng) < d->p_home))
                pick[a] = (int32_t)polis_rng_below(rng, (uint32_t)d->groups);
        }
        int32_t g = 0;
        for (cJSON *grp = arr->child; grp; grp = grp->next, g++) {
            cJSON *ids = cJSON_CreateArray(), *vals = cJSON_CreateArray();
            for (int32_t a = 0; a < v->n_agents; a++)
                if (pick[a] == g) {
                    cJSON_AddItemToArray(ids, cJSON_CreateNumber(a));
                    cJSON_AddItemToArray(vals, cJSON_CreateNumber(1));
                }
            cJSON *players = cJSON_GetObjectItemCaseSensitive(grp, "players");
            if (cJSON_GetArraySize(ids) == 0) {
                cJSON_Delete(ids);
                cJSON_Delete(vals);
                continue;
            }
            cJSON *attrs = cJSON_CreateObject();
            cJSON_AddItemToObject(players, "ids", ids);
            cJSON_AddItemToObject(players, "attributes", attrs);
            cJSON_AddItemToObject(attrs, d->attribute, vals);
        }
        free(pick);
        return arr;
    }
    }
    return NULL;
}

/* The task as JSON text (malloc), or NULL when out of memory. */
static char *make_task(const vary *v, polis_rng *rng, int which, int32_t only)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    for (int32_t i = 0; i < v->n; i++) {
        if (only >= 0 && i != only) continue;
        cJSON *x = draw_value(v, &v->draws[i], rng, which);
        if (!x) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, v->draws[i].path, x);
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* ---- layouts --------------------------------------------------------------------------------- */

/* What every task keeps, as text: one line per agent count, action, observation field and
 * event type (malloc), or NULL when out of memory. */
static char *layout_of(const polis_env *env)
{
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int k_;                                                                                    \
        while ((k_ = snprintf(s + n, cap - n, __VA_ARGS__)) >= 0 && (size_t)k_ >= cap - n) {       \
            char *t_ = realloc(s, cap * 2);                                                        \
            if (!t_) {                                                                             \
                free(s);                                                                           \
                return NULL;                                                                       \
            }                                                                                      \
            s = t_;                                                                                \
            cap *= 2;                                                                              \
        }                                                                                          \
        n += (size_t)k_;                                                                           \
    } while (0)
    ADD("%d agents\n", (int)polis_env_n_agents(env));
    for (int32_t i = 0; i < polis_env_n_actions(env); i++)
        ADD("action %d: %s\n", (int)i, polis_env_action_name(env, i));
    ADD("%d actions\n", (int)polis_env_n_actions(env));
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++) {
        polis_obs_field f;
        polis_env_obs_field(env, i, &f);
        ADD("observation %s: %s [", f.name, polis_dtype_name(f.dtype));
        for (int32_t k = 0; k < f.ndim; k++) ADD("%s%d", k ? ", " : "", (int)f.shape[k]);
        ADD("] at byte %zu\n", f.offset);
    }
    ADD("%d observation fields\n", (int)polis_env_n_obs_fields(env));
    for (int32_t t = 0; t < polis_env_n_event_types(env); t++)
        ADD("event type %d: %s (%zu bytes)\n", (int)t, polis_env_event_name(env, t),
            polis_env_event_size(env, t));
    ADD("%d event types\n", (int)polis_env_n_event_types(env));
    for (int32_t r = 0; r < polis_env_n_reward_fns(env); r++)
        ADD("reward function %d: %s\n", (int)r, polis_env_reward_fn_name(env, r));
    ADD("%d reward functions\n", (int)polis_env_n_reward_fns(env));
#undef ADD
    return s;
}

/* The first line where two layouts differ, as "X; the scenario has Y". */
static void layout_diff(const char *base, const char *now, char *out, size_t cap)
{
    while (*base && *now) {
        size_t lb = strcspn(base, "\n"), ln = strcspn(now, "\n");
        if (lb != ln || memcmp(base, now, lb) != 0) {
            snprintf(out, cap, "%.*s; the scenario has %.*s", (int)ln, now, (int)lb, base);
            return;
        }
        base += lb + (base[lb] != 0);
        now += ln + (now[ln] != 0);
    }
    snprintf(out, cap, "%s", *now ? "more entries" : "fewer entries");
}

/* ---- building tasks -------------------------------------------------------------------------- */

/* OK when `built` (a probe, or env itself after a rebuild) keeps the scenario's layout; else
 * the first difference in env->err. */
static polis_status same_layout(polis_env *env, const vary *v, const polis_env *built)
{
    char *lay = layout_of(built);
    if (!lay) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    polis_status st = POLIS_OK;
    if (strcmp(lay, v->layout) != 0) {
        char why[600];
        layout_diff(v->layout, lay, why, sizeof why);
        st = vfail(env,
                   "it changes the env's layout: %s (a task may change values, not the "
                   "agents, actions, observation layout, event types or reward functions)",
                   why);
    }
    free(lay);
    return st;
}

/* Builds a throwaway env of the task (the probes at create): its error, or a layout
 * difference, goes to env->err. */
static polis_status probe(polis_env *env, vary *v, const char *task)
{
    polis_options o = {.struct_size = sizeof o,
                       .alloc = env->alloc,
                       .alloc_ud = env->alloc_ud,
                       .plugin_path = env->plugin_path,
                       .overrides = task,
                       .no_observations = env->no_obs,
                       .max_memory = env->opt_max_memory,
                       .compact_observations = env->opt_compact};
    polis__create_args args = {
        .text = v->text, .len = v->len, .source = v->source, .base_dir = v->base_dir, .opts = &o};
    polis_env *t = NULL;
    polis_error err;
    polis_status st = polis__env_create(&args, &t, &err);
    if (st) {
        /* the outer create says "(scenario with overrides)" itself */
        static const char with[] = " (scenario with overrides)";
        size_t n = strlen(err.message), w = sizeof with - 1;
        if (n >= w && strcmp(err.message + n - w, with) == 0) err.message[n - w] = '\0';
        snprintf(env->err, sizeof env->err, "%s", err.message);
        return st;
    }
    st = same_layout(env, v, t);
    polis_env_destroy(t);
    return st;
}

/* Rebuilds the env with `task`; the module's state stays out of the teardown. */
static polis_status rebuild(polis_env *env, vary *v, const char *task)
{
    env->vary = NULL;
    polis_status st = polis__env_rebuild(env, v->text, v->len, v->source, v->base_dir, task);
    if (env->vary) { /* cannot happen: the text has no "vary" */
        vary_release(env, env->vary);
    }
    env->vary = v;
    return st ? st : same_layout(env, v, env);
}

/* ---- the module's callbacks ---------------------------------------------------------------- */

static polis_status vary_load(polis_env *env)
{
    const cJSON *spec =
        env->scn.root ? cJSON_GetObjectItemCaseSensitive(env->scn.root, "vary") : NULL;
    if (!spec) return POLIS_OK;
    if (!cJSON_IsObject(spec))
        return vfail(env, "vary: expected an object of override paths and draws, got %s",
                     polis__json_kind_name(spec));
    vary *v = polis__alloc(env, sizeof *v);
    if (!v) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    env->vary = v;
    v->n_agents = env->scn.n_agents;
    int32_t n = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, spec) n += !is_comment(m->string);
    if (n == 0) return vfail(env, "vary: no draws (an empty object); remove the key instead");
    if (!(v->draws = polis__alloc(env, sizeof *v->draws * (size_t)n)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    polis_status st;
    cJSON_ArrayForEach(m, spec) {
        if (is_comment(m->string)) continue;
        draw *d = &v->draws[v->n++];
        cJSON *key = cJSON_CreateStringReference(m->string);
        char *q = key ? cJSON_PrintUnformatted(key) : NULL;
        cJSON_Delete(key);
        char where[512];
        snprintf(where, sizeof where, "vary[%s]", q ? q : m->string);
        free(q);
        if (!(d->path = polis__strdup(env, m->string)) || !(d->where = polis__strdup(env, where)))
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        if (!m->string[0]) return vfail(env, "%s: an empty override path", where);
        if (!cJSON_IsObject(m))
            return vfail(env, "%s: a draw is an object with one of choice, range, groups, got %s",
                         where, polis__json_kind_name(m));
        int kinds = !!cJSON_GetObjectItemCaseSensitive(m, "choice") +
                    !!cJSON_GetObjectItemCaseSensitive(m, "range") +
                    !!cJSON_GetObjectItemCaseSensitive(m, "groups");
        if (kinds != 1)
            return vfail(env, "%s: a draw is an object with exactly one of choice, range, groups",
                         where);
        if (cJSON_GetObjectItemCaseSensitive(m, "choice"))
            st = read_choice(env, d, m);
        else if (cJSON_GetObjectItemCaseSensitive(m, "range"))
            st = read_range(env, d, m);
        else
            st = read_groups(env, v, d, m);
        if (st) return st;
        if (!(d->spec = cJSON_PrintUnformatted(m)))
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    /* the base every task is built from: the scenario as read, without "vary" */
    cJSON *base = cJSON_Duplicate(env->scn.root, true);
    if (base) cJSON_DeleteItemFromObjectCaseSensitive(base, "vary");
    v->text = base ? cJSON_PrintUnformatted(base) : NULL;
    cJSON_Delete(base);
    v->task = dup_str("{}");
    v->built = dup_str("");
    if (!v->text || !v->task || !v->built ||
        !(v->source = polis__strdup(env, env->scn.source ? env->scn.source : "<string>")) ||
        (env->scn.base_dir && !(v->base_dir = polis__strdup(env, env->scn.base_dir))))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    v->len = strlen(v->text);
    return POLIS_OK;
}

/* Probes the first and the last value of every draw; a failure is narrowed to one draw. */
static polis_status vary_check(polis_env *env, vary *v)
{
    if (!(v->layout = layout_of(env))) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    for (int which = 0; which < 2; which++) {
        char *task = make_task(v, NULL, which, -1);
        if (!task) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
        polis_status st = probe(env, v, task);
        free(task);
        if (st == POLIS_OK) continue;
        if (st == POLIS_ERR_NOMEM) return st;
        const char *end = which ? "last" : "first";
        for (int32_t i = 0; i < v->n; i++) {
            char *one = make_task(v, NULL, which, i);
            if (!one) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
            st = probe(env, v, one);
            if (st && st != POLIS_ERR_NOMEM) {
                char why[POLIS_ERRMAX];
                snprintf(why, sizeof why, "%s", env->err);
                vfail(env, "%s: its %s value %.200s cannot be played: %s", v->draws[i].where, end,
                      one, why);
            }
            free(one);
            if (st) return st;
        }
        char why[POLIS_ERRMAX];
        snprintf(why, sizeof why, "%s", env->err);
        return vfail(env, "vary: the task of every draw's %s value cannot be played: %s", end, why);
    }
    return POLIS_OK;
}

static polis_status vary_freeze(polis_env *env)
{
    return env->vary ? vary_check(env, env->vary) : POLIS_OK;
}

static polis_status vary_prereset(polis_env *env, uint64_t seed)
{
    vary *v = env->vary;
    if (!v) return POLIS_OK;
    char *task;
    if (v->forced) {
        /* a given task: its paths must be the draws' (so a recording of another scenario's
         * draws is not played silently) */
        cJSON *t = cJSON_Parse(v->forced);
        if (!cJSON_IsObject(t)) {
            cJSON_Delete(t);
            return vfail(env, "reset_task: the task is not a JSON object of override paths and "
                              "values");
        }
        int32_t k = 0;
        for (const cJSON *m = t->child; m; m = m->next, k++)
            if (k >= v->n || strcmp(m->string, v->draws[k].path) != 0) {
                vfail(env,
                      "reset_task: the task's member %d is \"%s\"; the scenario's vary "
                      "draws %s there",
                      (int)k, m->string, k < v->n ? v->draws[k].where : "nothing");
                cJSON_Delete(t);
                return POLIS_ERR_CONFIG;
            }
        cJSON_Delete(t);
        if (k != v->n)
            return vfail(env, "reset_task: the task sets %d paths; the scenario's vary draws %d",
                         (int)k, (int)v->n);
        task = dup_str(v->forced);
    } else {
        polis_rng rng;
        polis_rng_seed(&rng, seed, VARY_STREAM);
        task = make_task(v, &rng, -1, -1);
    }
    if (!task) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if (strcmp(task, v->built) != 0) {
        polis_status st = rebuild(env, v, task);
        if (st) {
            char why[POLIS_ERRMAX];
            snprintf(why, sizeof why, "%s", env->err);
            /* back to the build that worked (the scenario's base when none did yet) */
            if (rebuild(env, v, v->built[0] ? v->built : NULL) == POLIS_OK)
                env->state = POLIS__ENV_BROKEN;
            vfail(env, "vary: the task drawn for seed %" PRIu64 ", %.300s, cannot be played: %s",
                  seed, task, why);
            free(task);
            return st == POLIS_ERR_NOMEM ? st : POLIS_ERR_CONFIG;
        }
        free(v->built);
        v->built = dup_str(task);
    }
    free(v->task);
    v->task = task;
    return v->built ? POLIS_OK : polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

static void vary_free(polis_env *env)
{
    vary_release(env, env->vary);
    env->vary = NULL;
}

static void vary_describe(polis__describe *b, struct cJSON *root, const polis_env *env)
{
    const vary *v = env->vary;
    if (!v) return;
    cJSON *arr = polis__describe_arr(b, root, "vary");
    for (int32_t i = 0; i < v->n; i++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        polis__describe_str(b, o, "path", v->draws[i].path);
        cJSON *spec = cJSON_Parse(v->draws[i].spec);
        if (o && spec)
            cJSON_AddItemToObject(o, "draw", spec);
        else
            cJSON_Delete(spec);
    }
}

POLIS_INTERNAL const polis__module polis__vary_module = {
    .name = "vary",
    .load = vary_load,
    .freeze = vary_freeze,
    .prereset = vary_prereset,
    .free = vary_free,
    .describe = vary_describe,
};

/* ---- public calls ---------------------------------------------------------------------------- */

const char *polis_env_task(const polis_env *env)
{
    return env && env->vary ? env->vary->task : NULL;
}

polis_status polis_env_reset_task(polis_env *env, uint64_t seed, const char *task)
{
    if (!env) return POLIS_ERR_INVALID;
    if (!env->vary)
        return polis__fail(env, POLIS_ERR_STATE,
                           "reset_task: the scenario has no \"vary\" (docs/scenario.md, \"Task "
                           "distributions\")");
    vary *v = env->vary;
    v->forced = task;
    polis_status st = polis_env_reset(env, seed);
    if (env->vary) env->vary->forced = NULL;
    return st;
}

int32_t polis_env_n_varied(const polis_env *env) { return env && env->vary ? env->vary->n : 0; }

const char *polis_env_varied_path(const polis_env *env, int32_t i)
{
    return env && env->vary && i >= 0 && i < env->vary->n ? env->vary->draws[i].path : NULL;
}

const char *polis_env_varied_spec(const polis_env *env, int32_t i)
{
    return env && env->vary && i >= 0 && i < env->vary->n ? env->vary->draws[i].spec : NULL;
}
