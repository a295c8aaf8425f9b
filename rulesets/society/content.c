/*
 * content.c — resources, recipes and jobs.
 *
 * Definitions come from four levels, lowest first: the built-in tables (seeds/000 Tables 4
 * and 5), the AdaSociety files a scenario imports, the scenario's own parameters, and
 * run-time definitions (Lua scripts through the society.define_* exports, .so plugins
 * through the service) made before society's start(). A definition replaces one of a lower
 * level with the same name, keeping its place in the canonical order; two definitions of
 * one name at the same level are an error. start() freezes the tables: names referenced in
 * requirements, inputs and outputs are resolved then, so a definition may name a resource
 * that another source defines later.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* seeds/000 Table 4 (objective reward; requirement to see and pick). */
static const struct {
    const char *name;
    double score;
    int synthetic;
    const char *req;
} BUILTIN_RESOURCES[] = {
    {"wood", 1, 0, ""},       {"stone", 1, 0, ""},
    {"hammer", 5, 1, ""},     {"coal", 2, 0, "hammer"},
    {"torch", 20, 1, ""},     {"iron", 3, 0, "torch"},
    {"steel", 30, 1, ""},     {"shovel", 100, 1, ""},
    {"pickaxe", 150, 1, ""},  {"gem_mine", 4, 0, "pickaxe"},
    {"clay", 4, 0, "shovel"}, {"pottery", 40, 1, ""},
    {"cutter", 100, 1, ""},   {"gem", 200, 1, ""},
    {"totem", 1000, 1, ""},
};

/* seeds/000 Table 5 (inputs -> outputs; requirement to see and use the station). Names are
 * those of AdaSociety's event.json, which its task files use. gem_craft consumes only the
 * gem mine, as the paper's table says (AdaSociety's event.json also consumes the cutter;
 * README "Decisions"). */
static const struct {
    const char *name, *in, *out, *req;
} BUILTIN_RECIPES[] = {
    {"hammer_craft", "wood:1, stone:1", "hammer:1", ""},
    {"torch_craft", "wood:1, coal:1", "torch:1", "coal:1"},
    {"steelmaking", "iron:1, coal:1", "steel:1", "iron:1"},
    {"potting", "clay:2, coal:1", "pottery:1", "clay:1"},
    {"shovel_craft", "steel:2, wood:2", "shovel:1", "steel:1"},
    {"pickaxe_craft", "steel:3, wood:2", "pickaxe:1", "steel:1"},
    {"cutter_craft", "steel:2, stone:3", "cutter:1", "steel:1"},
    {"gem_craft", "gem_mine:1", "gem:1", "cutter:1, gem_mine:1"},
    {"totem_making", "gem:2, pottery:1, steel:1", "totem:1", "gem:1"},
};

static const char *const LEVEL_NAMES[SOC_LEVELS] = {"built-in", "AdaSociety files", "scenario",
                                                    "run-time definition"};

/* ---- spec strings ------------------------------------------------------------------------ */

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* "wood:1, stone:2" -> refs. Amounts are integers in [1, SOC_MAX_AMOUNT]. */
static polis_status parse_spec(soc *s, const char *what, const char *spec, soc_ref **out,
                               int32_t *n_out, char *err, size_t en)
{
    *out = NULL;
    *n_out = 0;
    if (!spec) spec = "";
    const char *p = skip_space(spec);
    if (!*p) return POLIS_OK;
    int32_t cap = 1;
    for (const char *c = p; *c; c++) cap += *c == ',';
    soc_ref *refs = soc_alloc(s, sizeof *refs * (size_t)cap);
    if (!refs) return POLIS_ERR_NOMEM;
    int32_t n = 0;
    for (;;) {
        p = skip_space(p);
        const char *start = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
        size_t len = (size_t)(p - start);
        if (len == 0 || len >= SOC_NAME_MAX) {
            snprintf(err, en,
                     "%s \"%s\": expected a resource name ([a-z0-9_], 1 to 63 "
                     "characters) at column %d",
                     what, spec, (int)(start - spec) + 1);
            return POLIS_ERR_CONFIG;
        }
        char name[SOC_NAME_MAX];
        memcpy(name, start, len);
        name[len] = '\0';
        long long amount = 1;
        p = skip_space(p);
        if (*p == ':') {
            p = skip_space(p + 1);
            const char *digits = p;
            amount = 0;
            while (*p >= '0' && *p <= '9' && amount <= SOC_MAX_AMOUNT)
                amount = amount * 10 + (*p++ - '0');
            if (p == digits || amount < 1 || amount > SOC_MAX_AMOUNT) {
                snprintf(err, en, "%s \"%s\": expected an amount in [1, %d] at column %d", what,
                         spec, SOC_MAX_AMOUNT, (int)(digits - spec) + 1);
                return POLIS_ERR_CONFIG;
            }
            p = skip_space(p);
        }
        for (int32_t i = 0; i < n; i++)
            if (strcmp(refs[i].name, name) == 0) {
                snprintf(err, en, "%s \"%s\": \"%s\" is listed twice", what, spec, name);
                return POLIS_ERR_CONFIG;
            }
        refs[n].name = soc_strdup(s, name);
        if (!refs[n].name) return POLIS_ERR_NOMEM;
        refs[n].n = (int32_t)amount;
        n++;
        if (*p == '\0') break;
        if (*p != ',') {
            snprintf(err, en, "%s \"%s\": expected ',' at column %d", what, spec,
                     (int)(p - spec) + 1);
            return POLIS_ERR_CONFIG;
        }
        p++;
    }
    *out = refs;
    *n_out = n;
    return POLIS_OK;
}

static void def_append(soc *s, soc_def *d)
{
    if (s->defs_tail)
        s->defs_tail->next = d;
    else
        s->defs = d;
    s->defs_tail = d;
}

polis_status soc_define(soc *s, int kind, int level, const char *name, double score,
                        const char *req, const char *in, const char *out, const char *origin,
                        char *err, size_t err_size)
{
    if (s->frozen && level == SOC_LEVEL_RUNTIME) {
        snprintf(err, err_size,
                 "%s: the tables are frozen once society has started (define "
                 "content in init, or in a Lua script's chunk)",
                 origin);
        return POLIS_ERR_STATE;
    }
    if (!name || !soc_valid_name(name)) {
        snprintf(err, err_size,
                 "%s: invalid name \"%s\" (expected 1 to 63 characters from "
                 "a-z, 0-9 and _)",
                 origin, name ? name : "(null)");
        return POLIS_ERR_CONFIG;
    }
    if (!(score >= -1e9 && score <= 1e9)) {
        snprintf(err, err_size, "%s: score of \"%s\" must be a number in [-1e9, 1e9]", origin,
                 name);
        return POLIS_ERR_CONFIG;
    }
    soc_def *d = soc_alloc(s, sizeof *d);
    if (!d) return POLIS_ERR_NOMEM;
    d->kind = kind;
    d->level = level;
    d->name = soc_strdup(s, name);
    d->origin = soc_strdup(s, origin);
    d->score = score;
    d->synthetic = -1;
    if (!d->name || !d->origin) return POLIS_ERR_NOMEM;
    char what[96];
    polis_status st;
    snprintf(what, sizeof what, "%s: requirements", origin);
    if ((st = parse_spec(s, what, req, &d->req, &d->n_req, err, err_size))) return st;
    if (kind == SOC_DEF_RECIPE) {
        snprintf(what, sizeof what, "%s: inputs", origin);
        if ((st = parse_spec(s, what, in, &d->in, &d->n_in, err, err_size))) return st;
        snprintf(what, sizeof what, "%s: outputs", origin);
        if ((st = parse_spec(s, what, out, &d->out, &d->n_out, err, err_size))) return st;
        if (d->n_in == 0 && d->n_out == 0) {
            snprintf(err, err_size, "%s: recipe \"%s\" has neither inputs nor outputs", origin,
                     name);
            return POLIS_ERR_CONFIG;
        }
    }
    def_append(s, d);
    return POLIS_OK;
}

/* ---- definitions from JSON (scenario parameters and AdaSociety files) -------------------- */

static polis_status refs_from_node(soc *s, const soc_node *n, soc_ref **out, int32_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    int k = soc_kind(s, n);
    if (k == -1) return POLIS_OK;
    polis_status st;
    if ((st = soc_want_object(s, n))) return st;
    int32_t len = soc_len(s, n);
    if (len == 0) return POLIS_OK;
    soc_ref *refs = soc_alloc(s, sizeof *refs * (size_t)len);
    if (!refs) return POLIS_ERR_NOMEM;
    for (int32_t i = 0; i < len; i++) {
        soc_node v = soc_at(s, n, i);
        const char *key = soc_key(s, n, i);
        if (!soc_valid_name(key))
            return soc_fail(s, &v,
                            "invalid resource name \"%s\" (expected 1 to 63 characters "
                            "from a-z, 0-9 and _)",
                            key ? key : "");
        int64_t amount;
        if ((st = soc_int(s, &v, 1, SOC_MAX_AMOUNT, &amount))) return st;
        refs[i].name = soc_strdup(s, key);
        if (!refs[i].name) return POLIS_ERR_NOMEM;
        refs[i].n = (int32_t)amount;
    }
    *out = refs;
    *n_out = len;
    return POLIS_OK;
}

static polis_status origin_of(soc *s, const soc_node *n, const char **out)
{
    char buf[300];
    if (n->pj)
        snprintf(buf, sizeof buf, "%s", s->h->json_path(n->pj));
    else
        snprintf(buf, sizeof buf, "%s: %s", n->file, n->path);
    *out = soc_strdup(s, buf);
    return *out ? POLIS_OK : POLIS_ERR_NOMEM;
}

static polis_status defs_from_table(soc *s, const soc_node *table, int kind, int level)
{
    if (soc_kind(s, table) == -1) return POLIS_OK;
    polis_status st;
    if ((st = soc_want_object(s, table))) return st;
    static const char *const res_keys[] = {"score", "requirements", "type", NULL};
    static const char *const rec_keys[] = {"in", "out", "requirements", NULL};
    int32_t len = soc_len(s, table);
    for (int32_t i = 0; i < len; i++) {
        soc_node d = soc_at(s, table, i);
        const char *name = soc_key(s, table, i);
        if (!soc_valid_name(name))
            return soc_fail(s, &d,
                            "invalid %s name (expected 1 to 63 characters from a-z, "
                            "0-9 and _)",
                            kind == SOC_DEF_RESOURCE ? "resource" : "recipe");
        if ((st = soc_want_object(s, &d))) return st;
        if ((st = soc_check_keys(s, &d, kind == SOC_DEF_RESOURCE ? res_keys : rec_keys))) return st;
        soc_def *def = soc_alloc(s, sizeof *def);
        if (!def) return POLIS_ERR_NOMEM;
        def->kind = kind;
        def->level = level;
        def->name = soc_strdup(s, name);
        def->synthetic = -1;
        if (!def->name) return POLIS_ERR_NOMEM;
        if ((st = origin_of(s, &d, &def->origin))) return st;
        soc_node req = soc_get(s, &d, "requirements");
        if ((st = refs_from_node(s, &req, &def->req, &def->n_req))) return st;
        if (kind == SOC_DEF_RESOURCE) {
            soc_node score = soc_get(s, &d, "score");
            if (soc_kind(s, &score) == -1) return soc_fail(s, &d, "missing \"score\"");
            if ((st = soc_double(s, &score, -1e9, 1e9, &def->score))) return st;
            soc_node type = soc_get(s, &d, "type");
            if (soc_kind(s, &type) != -1) {
                const char *t;
                if ((st = soc_string(s, &type, &t))) return st;
                if (strcmp(t, "natural") && strcmp(t, "synthetic"))
                    return soc_fail(s, &type, "expected \"natural\" or \"synthetic\", got \"%s\"",
                                    t);
                def->synthetic = strcmp(t, "synthetic") == 0;
            }
        } else {
            soc_node in = soc_get(s, &d, "in"), out = soc_get(s, &d, "out");
            if ((st = refs_from_node(s, &in, &def->in, &def->n_in))) return st;
            if ((st = refs_from_node(s, &out, &def->out, &def->n_out))) return st;
            if (def->n_in == 0 && def->n_out == 0)
                return soc_fail(s, &d, "a recipe needs \"in\" or \"out\"");
        }
        def_append(s, def);
    }
    return POLIS_OK;
}

/* ---- freezing the tables ------------------------------------------------------------------- */

int32_t soc_resource_find(const soc *s, const char *name)
{
    for (int32_t r = 0; r < s->R; r++)
        if (strcmp(s->res[r].name, name) == 0) return r;
    return -1;
}

int32_t soc_recipe_find(const soc *s, const char *name)
{
    for (int32_t k = 0; k < s->K; k++)
        if (strcmp(s->rec[k].name, name) == 0) return k;
    return -1;
}

int32_t soc_job_find(const soc *s, const char *name)
{
    for (int32_t j = 0; j < s->J; j++)
        if (strcmp(s->jobs[j].name, name) == 0) return j;
    return -1;
}

static polis_status amounts_push(soc *s, int32_t res, int32_t n)
{
    if (s->n_amounts == s->cap_amounts) {
        int32_t ncap = s->cap_amounts ? s->cap_amounts * 2 : 64;
        soc_amount *a = soc_alloc(s, sizeof *a * (size_t)ncap);
        if (!a) return POLIS_ERR_NOMEM;
        if (s->n_amounts) memcpy(a, s->amounts, sizeof *a * (size_t)s->n_amounts);
        s->amounts = a;
        s->cap_amounts = ncap;
    }
    s->amounts[s->n_amounts++] = (soc_amount){res, n};
    return POLIS_OK;
}

/* The names of the resources, for "unknown resource" messages. */
static void resource_list(const soc *s, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t r = 0; r < s->R; r++) {
        int w = snprintf(buf + used, cap - used, "%s%s", r ? ", " : "", s->res[r].name);
        if (w < 0 || (size_t)w >= cap - used) {
            if (cap > 4) memcpy(buf + cap - 4, "...", 4);
            return;
        }
        used += (size_t)w;
    }
}

static polis_status resolve_refs(soc *s, const soc_def *d, const char *what, const soc_ref *refs,
                                 int32_t n, int32_t *off, int32_t *count)
{
    *off = s->n_amounts;
    *count = n;
    for (int32_t i = 0; i < n; i++) {
        int32_t r = soc_resource_find(s, refs[i].name);
        if (r < 0) {
            char list[400];
            resource_list(s, list, sizeof list);
            s->h->error(s->ctx, "%s: %s: \"%s\" is not a resource (resources: %s)", d->origin, what,
                        refs[i].name, list);
            return POLIS_ERR_CONFIG;
        }
        polis_status st = amounts_push(s, r, refs[i].n);
        if (st) return st;
    }
    return POLIS_OK;
}

/* Orders one kind of definition: levels ascending, a same-named definition of a higher level
 * replaces a lower one in place. Returns the count in *n. */
static polis_status order_defs(soc *s, int kind, const soc_def **out, int32_t max, int32_t *n)
{
    *n = 0;
    for (int level = 0; level < SOC_LEVELS; level++) {
        for (const soc_def *d = s->defs; d; d = d->next) {
            if (d->kind != kind || d->level != level) continue;
            int32_t at = -1;
            for (int32_t i = 0; i < *n; i++)
                if (strcmp(out[i]->name, d->name) == 0) at = i;
            if (at >= 0 && out[at]->level == level) {
                s->h->error(s->ctx, "%s \"%s\" is defined twice (%s): by %s and by %s",
                            kind == SOC_DEF_RESOURCE ? "resource" : "recipe", d->name,
                            LEVEL_NAMES[level], out[at]->origin, d->origin);
                return POLIS_ERR_CONFIG;
            }
            if (at >= 0) {
                out[at] = d;
                continue;
            }
            if (*n == max) {
                s->h->error(s->ctx, "%s: more than %d %s", d->origin, (int)max,
                            kind == SOC_DEF_RESOURCE ? "resources" : "recipes");
                return POLIS_ERR_LIMIT;
            }
            out[(*n)++] = d;
        }
    }
    return POLIS_OK;
}

polis_status soc_content_build(soc *s)
{
    polis_status st;
    char err[512];
    if (s->p.builtin) {
        for (size_t i = 0; i < sizeof BUILTIN_RESOURCES / sizeof BUILTIN_RESOURCES[0]; i++) {
            st = soc_define(s, SOC_DEF_RESOURCE, SOC_LEVEL_BUILTIN, BUILTIN_RESOURCES[i].name,
                            BUILTIN_RESOURCES[i].score, BUILTIN_RESOURCES[i].req, NULL, NULL,
                            "built-in", err, sizeof err);
            if (st) {
                s->h->error(s->ctx, "%s", err);
                return st;
            }
            s->defs_tail->synthetic = BUILTIN_RESOURCES[i].synthetic;
        }
        for (size_t i = 0; i < sizeof BUILTIN_RECIPES / sizeof BUILTIN_RECIPES[0]; i++) {
            st = soc_define(s, SOC_DEF_RECIPE, SOC_LEVEL_BUILTIN, BUILTIN_RECIPES[i].name, 0,
                            BUILTIN_RECIPES[i].req, BUILTIN_RECIPES[i].in, BUILTIN_RECIPES[i].out,
                            "built-in", err, sizeof err);
            if (st) {
                s->h->error(s->ctx, "%s", err);
                return st;
            }
        }
    }
    if (s->ada_resource) {
        soc_node n = soc_node_file(s->ada_resource, s->ada_resource_path);
        if ((st = defs_from_table(s, &n, SOC_DEF_RESOURCE, SOC_LEVEL_ADASOCIETY))) return st;
    }
    if (s->ada_event) {
        soc_node n = soc_node_file(s->ada_event, s->ada_event_path);
        if ((st = defs_from_table(s, &n, SOC_DEF_RECIPE, SOC_LEVEL_ADASOCIETY))) return st;
    }
    soc_node pr = soc_node_params(s, s->p.resources), pk = soc_node_params(s, s->p.recipes);
    if ((st = defs_from_table(s, &pr, SOC_DEF_RESOURCE, SOC_LEVEL_SCENARIO))) return st;
    if ((st = defs_from_table(s, &pk, SOC_DEF_RECIPE, SOC_LEVEL_SCENARIO))) return st;

    const soc_def **rdefs = soc_alloc(s, sizeof *rdefs * SOC_MAX_RESOURCES);
    const soc_def **kdefs = soc_alloc(s, sizeof *kdefs * SOC_MAX_RECIPES);
    if (!rdefs || !kdefs) return POLIS_ERR_NOMEM;
    int32_t nr, nk;
    if ((st = order_defs(s, SOC_DEF_RESOURCE, rdefs, SOC_MAX_RESOURCES, &nr))) return st;
    if ((st = order_defs(s, SOC_DEF_RECIPE, kdefs, SOC_MAX_RECIPES, &nk))) return st;
    if (nr == 0) {
        s->h->error(s->ctx, "no resources: \"builtin\" is false and nothing defines any");
        return POLIS_ERR_CONFIG;
    }
    s->res = soc_alloc(s, sizeof *s->res * (size_t)nr);
    s->rec = soc_alloc(s, sizeof *s->rec * (size_t)(nk ? nk : 1));
    if (!s->res || !s->rec) return POLIS_ERR_NOMEM;
    /* Names first, so references between resources resolve in any order. */
    for (int32_t r = 0; r < nr; r++) {
        s->res[r].name = rdefs[r]->name;
        s->res[r].score = rdefs[r]->score;
    }
    s->R = nr;
    for (int32_t r = 0; r < nr; r++)
        if ((st = resolve_refs(s, rdefs[r], "requirements", rdefs[r]->req, rdefs[r]->n_req,
                               &s->res[r].req, &s->res[r].n_req)))
            return st;
    for (int32_t k = 0; k < nk; k++) {
        const soc_def *d = kdefs[k];
        soc_recipe *rc = &s->rec[k];
        rc->name = d->name;
        if ((st = resolve_refs(s, d, "requirements", d->req, d->n_req, &rc->req, &rc->n_req)) ||
            (st = resolve_refs(s, d, "inputs", d->in, d->n_in, &rc->in, &rc->n_in)) ||
            (st = resolve_refs(s, d, "outputs", d->out, d->n_out, &rc->out, &rc->n_out)))
            return st;
    }
    s->K = nk;
    for (int32_t r = 0; r < nr; r++) {
        if (rdefs[r]->synthetic >= 0) {
            s->res[r].synthetic = rdefs[r]->synthetic;
            continue;
        }
        for (int32_t k = 0; k < nk && !s->res[r].synthetic; k++)
            for (int32_t i = 0; i < s->rec[k].n_out; i++)
                if (s->amounts[s->rec[k].out + i].res == r) s->res[r].synthetic = true;
    }
    return POLIS_OK;
}

/* ---- jobs --------------------------------------------------------------------------------- */

static polis_status job_slot(soc *s, const char *name, int32_t *out)
{
    int32_t j = soc_job_find(s, name);
    if (j < 0) {
        if (s->J == SOC_MAX_JOBS) {
            s->h->error(s->ctx, "more than %d jobs", SOC_MAX_JOBS);
            return POLIS_ERR_LIMIT;
        }
        j = s->J++;
        s->jobs[j].name = soc_strdup(s, name);
        if (!s->jobs[j].name) return POLIS_ERR_NOMEM;
    }
    /* A job of a higher level replaces the whole definition, like resources and recipes. */
    s->jobs[j].fov_h = s->jobs[j].fov_v = 0;
    s->jobs[j].size = INT64_MAX;
    for (int32_t r = 0; r < s->R; r++) {
        s->cap[(size_t)j * (size_t)s->R + (size_t)r] = SOC_UNLIMITED;
        s->value[(size_t)j * (size_t)s->R + (size_t)r] = s->res[r].score;
        s->init[(size_t)j * (size_t)s->R + (size_t)r] = 0;
    }
    *out = j;
    return POLIS_OK;
}

static polis_status fov_from_node(soc *s, const soc_node *n, soc_job *job)
{
    polis_status st;
    int64_t h, v;
    if (soc_kind(s, n) == 4) {
        if (soc_len(s, n) != 2) return soc_fail(s, n, "expected an integer or [h, v]");
        soc_node a = soc_at(s, n, 0), b = soc_at(s, n, 1);
        if ((st = soc_int(s, &a, 0, SOC_MAX_FOV, &h)) || (st = soc_int(s, &b, 0, SOC_MAX_FOV, &v)))
            return st;
    } else {
        if ((st = soc_int(s, n, 0, SOC_MAX_FOV, &h))) return st;
        v = h;
    }
    job->fov_h = (int32_t)h;
    job->fov_v = (int32_t)v;
    return POLIS_OK;
}

/* {resource: value} into row[r] (ints) or drow[r] (doubles), names checked. */
static polis_status per_resource(soc *s, const soc_node *n, int32_t *row, double *drow, double lo,
                                 double hi, uint8_t *seen)
{
    polis_status st;
    if ((st = soc_want_object(s, n))) return st;
    int32_t len = soc_len(s, n);
    for (int32_t i = 0; i < len; i++) {
        soc_node v = soc_at(s, n, i);
        const char *key = soc_key(s, n, i);
        int32_t r = soc_resource_find(s, key);
        if (r < 0) {
            char list[400];
            resource_list(s, list, sizeof list);
            return soc_fail(s, &v, "\"%s\" is not a resource (resources: %s)", key, list);
        }
        if (seen) seen[r] = 1;
        if (row) {
            int64_t x;
            if ((st = soc_int(s, &v, (int64_t)lo, (int64_t)hi, &x))) return st;
            row[r] = (int32_t)x;
        } else {
            if ((st = soc_double(s, &v, lo, hi, &drow[r]))) return st;
        }
    }
    return POLIS_OK;
}

static polis_status check_init(soc *s, const soc_node *n, int32_t j)
{
    const soc_job *job = &s->jobs[j];
    int64_t total = 0;
    for (int32_t r = 0; r < s->R; r++) {
        size_t o = (size_t)j * (size_t)s->R + (size_t)r;
        if (s->init[o] > s->cap[o])
            return soc_fail(s, n, "job \"%s\" starts with %d %s, above its capacity %d", job->name,
                            (int)s->init[o], s->res[r].name, (int)s->cap[o]);
        total += s->init[o];
    }
    if (total > job->size)
        return soc_fail(s, n, "job \"%s\" starts with %lld units, above its size %lld", job->name,
                        (long long)total, (long long)job->size);
    return POLIS_OK;
}

/* How both forms of a job start: d is an object with only `keys`, the job `name` gets its
 * slot (*out) and its "fov" (required). */
static polis_status job_begin(soc *s, const soc_node *d, const char *const *keys, const char *name,
                              int32_t *out)
{
    polis_status st;
    if ((st = soc_want_object(s, d)) || (st = soc_check_keys(s, d, keys))) return st;
    if ((st = job_slot(s, name, out))) return st;
    soc_node n = soc_get(s, d, "fov");
    if (soc_kind(s, &n) == -1) return soc_fail(s, d, "missing \"fov\"");
    return fov_from_node(s, &n, &s->jobs[*out]);
}

/* A job in polis's own form:
 *   {"fov": 2 | [h, v], "capacity": {res: n}, "default_capacity": n, "size": n,
 *    "preference": {res: h}, "score": {res: v}, "inventory": {res: n}} */
static polis_status job_from_params(soc *s, const soc_node *d, const char *name)
{
    static const char *const keys[] = {"fov",        "capacity", "default_capacity", "size",
                                       "preference", "score",    "inventory",        NULL};
    polis_status st;
    int32_t j;
    if ((st = job_begin(s, d, keys, name, &j))) return st;
    soc_job *job = &s->jobs[j];
    size_t row = (size_t)j * (size_t)s->R;
    soc_node n = soc_get(s, d, "default_capacity");
    if (soc_kind(s, &n) != -1) {
        int64_t c;
        if ((st = soc_int(s, &n, 0, SOC_UNLIMITED, &c))) return st;
        for (int32_t r = 0; r < s->R; r++) s->cap[row + (size_t)r] = (int32_t)c;
    }
    n = soc_get(s, d, "capacity");
    if (soc_kind(s, &n) != -1 &&
        (st = per_resource(s, &n, s->cap + row, NULL, 0, SOC_UNLIMITED, NULL)))
        return st;
    n = soc_get(s, d, "size");
    if (soc_kind(s, &n) != -1) {
        int64_t sz;
        if ((st = soc_int(s, &n, 0, INT32_MAX, &sz))) return st;
        job->size = sz;
    }
    /* value = preference h times the objective value r̄; "score" gives h * r̄ directly. */
    double *pref = soc_alloc(s, sizeof *pref * (size_t)s->R);
    uint8_t *scored = soc_alloc(s, (size_t)s->R);
    if (!pref || !scored) return POLIS_ERR_NOMEM;
    for (int32_t r = 0; r < s->R; r++) pref[r] = 1.0;
    n = soc_get(s, d, "preference");
    if (soc_kind(s, &n) != -1 && (st = per_resource(s, &n, NULL, pref, -1e9, 1e9, NULL))) return st;
    for (int32_t r = 0; r < s->R; r++) s->value[row + (size_t)r] = pref[r] * s->res[r].score;
    n = soc_get(s, d, "score");
    if (soc_kind(s, &n) != -1) {
        soc_node pn = soc_get(s, d, "preference");
        if ((st = per_resource(s, &n, NULL, s->value + row, -1e9, 1e9, scored))) return st;
        for (int32_t r = 0; r < s->R && soc_kind(s, &pn) != -1; r++) {
            soc_node pr = soc_get(s, &pn, s->res[r].name);
            if (scored[r] && soc_kind(s, &pr) != -1)
                return soc_fail(s, &pr,
                                "\"%s\" has both a preference and a score (the score "
                                "is the unit value itself)",
                                s->res[r].name);
        }
    }
    n = soc_get(s, d, "inventory");
    if (soc_kind(s, &n) != -1 &&
        (st = per_resource(s, &n, s->init + row, NULL, 0, SOC_MAX_AMOUNT, NULL)))
        return st;
    return check_init(s, d, j);
}

/* A job in AdaSociety's job.json form (spec §2.4):
 *   {"fov": n | [h, v], "inventory": {"size": n, "init": [{"name", "num"}],
 *                                     "max": {res: n}, "score": {res: v}}}
 * A resource missing from a present "max" has capacity 0, as in AdaSociety's task layer
 * (that is how its miner cannot hold wood); without "max" nothing is limited. */
static polis_status job_from_ada(soc *s, const soc_node *d, const char *name)
{
    static const char *const keys[] = {"fov", "inventory", NULL};
    static const char *const inv_keys[] = {"size", "init", "max", "score", NULL};
    polis_status st;
    int32_t j;
    if ((st = job_begin(s, d, keys, name, &j))) return st;
    soc_job *job = &s->jobs[j];
    size_t row = (size_t)j * (size_t)s->R;
    soc_node n, inv = soc_get(s, d, "inventory");
    if (soc_kind(s, &inv) == -1) return POLIS_OK;
    if ((st = soc_want_object(s, &inv)) || (st = soc_check_keys(s, &inv, inv_keys))) return st;
    n = soc_get(s, &inv, "size");
    if (soc_kind(s, &n) != -1) {
        int64_t sz;
        if ((st = soc_int(s, &n, 0, INT32_MAX, &sz))) return st;
        job->size = sz;
    }
    n = soc_get(s, &inv, "max");
    if (soc_kind(s, &n) != -1) {
        for (int32_t r = 0; r < s->R; r++) s->cap[row + (size_t)r] = 0;
        if ((st = per_resource(s, &n, s->cap + row, NULL, 0, SOC_UNLIMITED, NULL))) return st;
    }
    n = soc_get(s, &inv, "score");
    if (soc_kind(s, &n) != -1 && (st = per_resource(s, &n, NULL, s->value + row, -1e9, 1e9, NULL)))
        return st;
    n = soc_get(s, &inv, "init");
    if (soc_kind(s, &n) != -1) {
        if (soc_kind(s, &n) != 4) return soc_fail(s, &n, "expected an array of {name, num}");
        int32_t len = soc_len(s, &n);
        for (int32_t i = 0; i < len; i++) {
            soc_node e = soc_at(s, &n, i), en = soc_get(s, &e, "name"), num = soc_get(s, &e, "num");
            const char *rn;
            int64_t k;
            if ((st = soc_string(s, &en, &rn)) || (st = soc_int(s, &num, 0, SOC_MAX_AMOUNT, &k)))
                return st;
            int32_t r = soc_resource_find(s, rn);
            if (r < 0) return soc_fail(s, &en, "\"%s\" is not a resource", rn);
            s->init[row + (size_t)r] += (int32_t)k;
        }
    }
    return check_init(s, d, j);
}

polis_status soc_jobs_build(soc *s)
{
    polis_status st;
    s->jobs = soc_alloc(s, sizeof *s->jobs * SOC_MAX_JOBS);
    s->cap = soc_alloc(s, sizeof *s->cap * (size_t)SOC_MAX_JOBS * (size_t)s->R);
    s->value = soc_alloc(s, sizeof *s->value * (size_t)SOC_MAX_JOBS * (size_t)s->R);
    s->init = soc_alloc(s, sizeof *s->init * (size_t)SOC_MAX_JOBS * (size_t)s->R);
    if (!s->jobs || !s->cap || !s->value || !s->init) return POLIS_ERR_NOMEM;
    if (s->p.builtin) {
        /* AdaSociety's explorer (Exploration): fov 2, no limits, preference 1 everywhere, so
         * every unit is worth its objective value (seeds/000 C.2 and Table 7). */
        int32_t j;
        if ((st = job_slot(s, "explorer", &j))) return st;
        s->jobs[j].fov_h = s->jobs[j].fov_v = 2;
    }
    if (s->ada_job) {
        soc_node t = soc_node_file(s->ada_job, s->ada_job_path);
        if ((st = soc_want_object(s, &t))) return st;
        int32_t len = soc_len(s, &t);
        for (int32_t i = 0; i < len; i++) {
            soc_node d = soc_at(s, &t, i);
            const char *name = soc_key(s, &t, i);
            if (!soc_valid_name(name))
                return soc_fail(s, &d,
                                "invalid job name (expected 1 to 63 characters from "
                                "a-z, 0-9 and _)");
            if ((st = job_from_ada(s, &d, name))) return st;
        }
    }
    soc_node t = soc_node_params(s, s->p.jobs);
    if (soc_kind(s, &t) == 3) {
        /* "jobs": "job.json": an AdaSociety job table, relative to the scenario's directory */
        const char *p;
        if ((st = soc_string(s, &t, &p))) return st;
        const char *path = soc_scenario_path(s, p);
        if (!path) return POLIS_ERR_NOMEM;
        s->jobs_file_path = path;
        if ((st = soc_parse_json_file(s, path, &s->jobs_file))) return st;
        t = soc_node_file(s->jobs_file, s->jobs_file_path);
    }
    if (soc_kind(s, &t) != -1) {
        if ((st = soc_want_object(s, &t))) return st;
        int32_t len = soc_len(s, &t);
        for (int32_t i = 0; i < len; i++) {
            soc_node d = soc_at(s, &t, i);
            const char *name = soc_key(s, &t, i);
            if (!soc_valid_name(name))
                return soc_fail(s, &d,
                                "invalid job name (expected 1 to 63 characters from "
                                "a-z, 0-9 and _)");
            /* A job in AdaSociety's job.json form (it has "inventory": {"max", ...}) reads as
             * AdaSociety reads it; polis's form has "capacity" and a flat "inventory". */
            soc_node inv = soc_get(s, &d, "inventory");
            bool ada_form = d.ada;
            static const char *const ada_inv_keys[] = {"size", "init", "max", "score"};
            for (size_t k = 0; k < sizeof ada_inv_keys / sizeof ada_inv_keys[0]; k++) {
                soc_node m = soc_get(s, &inv, ada_inv_keys[k]);
                int kind = soc_kind(s, &m);
                if (kind == -2) return POLIS_ERR_NOMEM; /* the host's node for no memory */
                if (kind >= 0) ada_form = true;
            }
            if ((st = ada_form ? job_from_ada(s, &d, name) : job_from_params(s, &d, name)))
                return st;
        }
    }
    return POLIS_OK;
}

/* ---- resources in play ---------------------------------------------------------------------- */

static void remap_list(soc_list *l, const int32_t *map)
{
    for (int32_t i = 0; i < l->n; i++) l->v[i].what = map[l->v[i].what];
}

polis_status soc_content_compact(soc *s, const uint8_t *used_res, const uint8_t *used_rec)
{
    int32_t *rmap = soc_alloc(s, sizeof *rmap * (size_t)s->R);
    int32_t *kmap = soc_alloc(s, sizeof *kmap * (size_t)(s->K ? s->K : 1));
    if (!rmap || !kmap) return POLIS_ERR_NOMEM;
    int32_t nr = 0, nk = 0;
    for (int32_t r = 0; r < s->R; r++) rmap[r] = used_res[r] ? nr++ : -1;
    for (int32_t k = 0; k < s->K; k++) kmap[k] = used_rec[k] ? nk++ : -1;
    for (int32_t i = 0; i < s->n_amounts; i++)
        if (s->amounts[i].res >= 0) s->amounts[i].res = rmap[s->amounts[i].res];
    for (int32_t r = 0; r < s->R; r++)
        if (rmap[r] >= 0) s->res[rmap[r]] = s->res[r];
    for (int32_t k = 0; k < s->K; k++)
        if (kmap[k] >= 0) s->rec[kmap[k]] = s->rec[k];
    for (int32_t j = 0; j < s->J; j++)
        for (int32_t r = 0; r < s->R; r++) {
            if (rmap[r] < 0) continue;
            size_t from = (size_t)j * (size_t)s->R + (size_t)r;
            size_t to = (size_t)j * (size_t)nr + (size_t)rmap[r];
            s->cap[to] = s->cap[from];
            s->value[to] = s->value[from];
            s->init[to] = s->init[from];
        }
    remap_list(&s->st_piles, rmap);
    remap_list(&s->rnd_piles, rmap);
    remap_list(&s->st_stations, kmap);
    remap_list(&s->rnd_stations, kmap);
    s->R = nr;
    s->K = nk;
    return POLIS_OK;
}
