/*
 * society — AdaSociety's physical world as a polis ruleset (README.md has the rules).
 *
 * init():  parameters, the AdaSociety files if any, the base map (so the grid has its size
 *          before other plugins start), grid layers, event types, hooks, the reward
 *          function, renderers, and the "society" service through which other plugins
 *          define resources and recipes.
 * start(): freezes the content tables (built-in, AdaSociety files, scenario, run-time
 *          definitions from Lua and .so plugins), reads the static and random content,
 *          allocates everything the step loop touches, registers the actions (one pick and
 *          one dump per resource) and the observation fields (their sizes depend on the
 *          number of resources).
 * reset:   world.c generates a new world; step: rules.c; observations: observe.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"
#include "internal.h"

/* ---- memory --------------------------------------------------------------------------------- */

/* An arena for everything that lives as long as the env: tables, names, the world
 * description and the step loop's arrays. Freed in one sweep at destroy. */
struct soc_block {
    soc_block *next;
    size_t size, used;
    max_align_t data[];
};

void *soc_alloc(soc *s, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    soc_block *b = s->arena;
    if (!b || b->size - b->used < size) {
        size_t want = size > 65536 ? size : 65536;
        b = s->h->alloc(s->ctx, sizeof *b + want);
        if (!b) return NULL;
        b->size = want;
        b->used = 0;
        b->next = s->arena;
        s->arena = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    return p; /* host->alloc zeroes, and arena memory is never reused */
}

const char *soc_scenario_path(soc *s, const char *p)
{
    if (p[0] == '/') return p;
    const char *dir = s->h->scenario_dir(s->ctx);
    size_t n = strlen(dir) + 1 + strlen(p) + 1;
    char *full = soc_alloc(s, n);
    if (full) snprintf(full, n, "%s/%s", dir, p);
    return full;
}

char *soc_strdup(soc *s, const char *str)
{
    size_t n = strlen(str);
    char *d = soc_alloc(s, n + 1);
    if (d) memcpy(d, str, n + 1);
    return d;
}

void *soc_heap(soc *s, size_t size) { return s->h->alloc(s->ctx, size); }

void soc_heap_free(soc *s, void *p, size_t size)
{
    if (p) s->h->free(s->ctx, p, size);
}

polis_status soc_list_push(soc *s, soc_list *l, soc_place item)
{
    if (l->n == l->cap) {
        int32_t ncap = l->cap ? l->cap * 2 : 16;
        soc_place *v = soc_alloc(s, sizeof *v * (size_t)ncap);
        if (!v) return POLIS_ERR_NOMEM;
        if (l->n) memcpy(v, l->v, sizeof *v * (size_t)l->n);
        l->v = v;
        l->cap = ncap;
    }
    l->v[l->n++] = item;
    return POLIS_OK;
}

bool soc_valid_name(const char *name)
{
    if (!name) return false;
    size_t n = 0;
    for (const char *p = name; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return n >= 1 && n < SOC_NAME_MAX;
}

/* ---- run-time definitions and queries: exports (Lua's polis.call) and the service ------------ */

static polis_status runtime_define(soc *s, polis_ctx *caller, int kind, const char *name,
                                   double score, const char *req, const char *in, const char *out,
                                   const char *who)
{
    char origin[160], err[512];
    s->n_runtime_calls++;
    snprintf(origin, sizeof origin, "%s (call %d, %s \"%s\")", who, (int)s->n_runtime_calls,
             kind == SOC_DEF_RESOURCE ? "resource" : "recipe", name ? name : "(null)");
    polis_status st =
        soc_define(s, kind, SOC_LEVEL_RUNTIME, name, score, req, in, out, origin, err, sizeof err);
    if (st == POLIS_OK) return POLIS_OK;
    if (st == POLIS_ERR_NOMEM) snprintf(err, sizeof err, "out of memory");
    /* The caller sees the status; a definition that failed also fails start(), so an
     * unchecked failure cannot go unnoticed. */
    if (!s->def_status) {
        s->def_status = st;
        snprintf(s->def_error, sizeof s->def_error, "%s", err);
    }
    s->h->error(caller, "%s", err);
    return st;
}

static int32_t x_define_resource(polis_ctx *ctx, const char *name, double score, const char *req)
{
    return (int32_t)runtime_define(polis_ctx_state(ctx), ctx, SOC_DEF_RESOURCE, name, score, req,
                                   NULL, NULL, "society.define_resource");
}

static int32_t x_define_recipe(polis_ctx *ctx, const char *name, const char *in, const char *out,
                               const char *req)
{
    return (int32_t)runtime_define(polis_ctx_state(ctx), ctx, SOC_DEF_RECIPE, name, 0, req, in, out,
                                   "society.define_recipe");
}

static int32_t x_resource_id(polis_ctx *ctx, const char *name)
{
    soc *s = polis_ctx_state(ctx);
    return s->frozen ? soc_resource_find(s, name) : -1;
}

static int32_t x_recipe_id(polis_ctx *ctx, const char *name)
{
    soc *s = polis_ctx_state(ctx);
    return s->frozen ? soc_recipe_find(s, name) : -1;
}

static int32_t x_n_resources(polis_ctx *ctx)
{
    soc *s = polis_ctx_state(ctx);
    return s->frozen ? s->R : 0;
}

static int32_t x_inventory(polis_ctx *ctx, int32_t agent, int32_t r)
{
    soc *s = polis_ctx_state(ctx);
    if (!s->gcells || agent < 0 || agent >= s->n_agents || r < 0 || r >= s->R) return -1;
    return s->inv[(size_t)agent * (size_t)s->R + (size_t)r];
}

static int32_t x_give(polis_ctx *ctx, int32_t agent, int32_t r, int32_t delta)
{
    soc *s = polis_ctx_state(ctx);
    char err[256];
    polis_status st = soc_give(s, agent, r, delta, err, sizeof err);
    if (st && st != POLIS_ERR_NOMEM && err[0]) s->h->error(ctx, "%s", err);
    return (int32_t)st;
}

static int32_t x_pile(polis_ctx *ctx, int32_t x, int32_t y, int32_t r)
{
    soc *s = polis_ctx_state(ctx);
    if (!s->gcells || x < 0 || y < 0 || x >= s->W || y >= s->H || r < 0 || r >= s->R) return -1;
    return s->piles[((size_t)y * (size_t)s->W + (size_t)x) * (size_t)s->R + (size_t)r];
}

static int32_t x_set_pile(polis_ctx *ctx, int32_t x, int32_t y, int32_t r, int32_t amount)
{
    soc *s = polis_ctx_state(ctx);
    char err[256];
    polis_status st = soc_set_pile(s, x, y, r, amount, err, sizeof err);
    if (st && st != POLIS_ERR_NOMEM && err[0]) s->h->error(ctx, "%s", err);
    return (int32_t)st;
}

static int32_t x_agent_x(polis_ctx *ctx, int32_t agent)
{
    soc *s = polis_ctx_state(ctx);
    return s->gcells && agent >= 0 && agent < s->n_agents ? s->ax[agent] : -1;
}

static int32_t x_agent_y(polis_ctx *ctx, int32_t agent)
{
    soc *s = polis_ctx_state(ctx);
    return s->gcells && agent >= 0 && agent < s->n_agents ? s->ay[agent] : -1;
}

#define EXPORT(name, sig, fn, doc)                                                                 \
    {                                                                                              \
        name, sig, (void (*)(void))fn, doc                                                         \
    }
static const polis_export EXPORTS[] = {
    EXPORT("define_resource", "i32(ctx,str,f64,str)", x_define_resource,
           "define_resource(name, score, requirements): a custom resource, before start; "
           "returns a polis_status (0 ok)"),
    EXPORT("define_recipe", "i32(ctx,str,str,str,str)", x_define_recipe,
           "define_recipe(name, inputs, outputs, requirements): a custom recipe, before start"),
    EXPORT("resource_id", "i32(ctx,str)", x_resource_id, "resource id by name, -1 if not in play"),
    EXPORT("recipe_id", "i32(ctx,str)", x_recipe_id, "recipe id by name, -1 if not in play"),
    EXPORT("n_resources", "i32(ctx)", x_n_resources, "resources in play"),
    EXPORT("inventory", "i32(ctx,i32,i32)", x_inventory, "inventory(agent, resource): units held"),
    EXPORT("give", "i32(ctx,i32,i32,i32)", x_give,
           "give(agent, resource, delta): change an inventory within its capacity; counts in "
           "the reward; returns a polis_status"),
    EXPORT("pile", "i32(ctx,i32,i32,i32)", x_pile, "pile(x, y, resource): units on a cell"),
    EXPORT("set_pile", "i32(ctx,i32,i32,i32,i32)", x_set_pile,
           "set_pile(x, y, resource, amount): set the units on a cell; returns a polis_status"),
    EXPORT("agent_x", "i32(ctx,i32)", x_agent_x, "agent_x(agent): its x"),
    EXPORT("agent_y", "i32(ctx,i32)", x_agent_y, "agent_y(agent): its y"),
};
#undef EXPORT

static polis_status api_define_resource(void *self, polis_ctx *caller, const char *name,
                                        double score, const char *req)
{
    soc *s = self;
    char who[96];
    snprintf(who, sizeof who, "plugin %s", s->h->plugin_name(caller));
    return runtime_define(s, caller, SOC_DEF_RESOURCE, name, score, req, NULL, NULL, who);
}

static polis_status api_define_recipe(void *self, polis_ctx *caller, const char *name,
                                      const char *in, const char *out, const char *req)
{
    soc *s = self;
    char who[96];
    snprintf(who, sizeof who, "plugin %s", s->h->plugin_name(caller));
    return runtime_define(s, caller, SOC_DEF_RECIPE, name, 0, req, in, out, who);
}

static int32_t api_n_resources(void *self)
{
    soc *s = self;
    return s->frozen ? s->R : 0;
}

static int32_t api_resource_find(void *self, const char *name)
{
    soc *s = self;
    return s->frozen && name ? soc_resource_find(s, name) : -1;
}

static const char *api_resource_name(void *self, int32_t r)
{
    soc *s = self;
    return s->frozen && r >= 0 && r < s->R ? s->res[r].name : NULL;
}

static int32_t api_n_recipes(void *self)
{
    soc *s = self;
    return s->frozen ? s->K : 0;
}

static int32_t api_recipe_find(void *self, const char *name)
{
    soc *s = self;
    return s->frozen && name ? soc_recipe_find(s, name) : -1;
}

static const char *api_recipe_name(void *self, int32_t k)
{
    soc *s = self;
    return s->frozen && k >= 0 && k < s->K ? s->rec[k].name : NULL;
}

static int32_t api_inventory(void *self, int32_t agent, int32_t r)
{
    soc *s = self;
    return x_inventory(s->ctx, agent, r);
}

static polis_status api_give(void *self, polis_ctx *caller, int32_t agent, int32_t r, int32_t delta)
{
    soc *s = self;
    char err[256];
    polis_status st = soc_give(s, agent, r, delta, err, sizeof err);
    if (st && st != POLIS_ERR_NOMEM && err[0]) s->h->error(caller, "%s", err);
    return st;
}

static int32_t api_pile(void *self, int32_t x, int32_t y, int32_t r)
{
    soc *s = self;
    return x_pile(s->ctx, x, y, r);
}

static polis_status api_set_pile(void *self, polis_ctx *caller, int32_t x, int32_t y, int32_t r,
                                 int32_t amount)
{
    soc *s = self;
    char err[256];
    polis_status st = soc_set_pile(s, x, y, r, amount, err, sizeof err);
    if (st && st != POLIS_ERR_NOMEM && err[0]) s->h->error(caller, "%s", err);
    return st;
}

static bool api_position(void *self, int32_t agent, int32_t *x, int32_t *y)
{
    soc *s = self;
    if (!s->gcells || agent < 0 || agent >= s->n_agents) return false;
    if (x) *x = s->ax[agent];
    if (y) *y = s->ay[agent];
    return true;
}

static polis_status api_greedy_action(void *self, polis_ctx *caller, int32_t agent,
                                      int32_t *out_action)
{
    soc *s = self;
    if (!out_action) {
        s->h->error(caller, "greedy_action: out_action is NULL");
        return POLIS_ERR_INVALID;
    }
    if (!s->gcells || agent < 0 || agent >= s->n_agents) {
        *out_action = 0;
        s->h->error(caller, "greedy_action: %s", s->gcells ? "bad agent id" : "only after a reset");
        return s->gcells ? POLIS_ERR_INVALID : POLIS_ERR_STATE;
    }
    return soc_greedy_action(s, agent, out_action);
}

static int64_t api_initial_amount(void *self, int32_t r)
{
    soc *s = self;
    if (!s->frozen || r < 0 || r >= s->R) return -1;
    int64_t total = 0;
    for (int32_t i = 0; i < s->st_piles.n; i++)
        if (s->st_piles.v[i].what == r) total += s->st_piles.v[i].num.hi;
    for (int32_t i = 0; i < s->rnd_piles.n; i++)
        if (s->rnd_piles.v[i].what == r) total += s->rnd_piles.v[i].num.hi;
    return total;
}

static int32_t api_recipe_stations(void *self, int32_t k)
{
    soc *s = self;
    if (!s->frozen || k < 0 || k >= s->K) return -1;
    int32_t n = 0;
    for (int32_t i = 0; i < s->st_stations.n; i++) n += s->st_stations.v[i].what == k;
    for (int32_t i = 0; i < s->rnd_stations.n; i++) n += s->rnd_stations.v[i].what == k;
    return n;
}

static int32_t api_amounts(void *self, int32_t which, int32_t id, int32_t *res, int32_t *units,
                           int32_t cap)
{
    soc *s = self;
    if (!s->frozen || cap < 0 || (cap > 0 && (!res || !units))) return -1;
    int32_t first, n;
    if (which == POLIS_SOCIETY_SEE) {
        if (id < 0 || id >= s->R) return -1;
        first = s->res[id].req;
        n = s->res[id].n_req;
    } else {
        if (id < 0 || id >= s->K) return -1;
        const soc_recipe *rc = &s->rec[id];
        switch (which) {
        case POLIS_SOCIETY_IN: first = rc->in, n = rc->n_in; break;
        case POLIS_SOCIETY_OUT: first = rc->out, n = rc->n_out; break;
        case POLIS_SOCIETY_REQ: first = rc->req, n = rc->n_req; break;
        default: return -1;
        }
    }
    for (int32_t i = 0; i < n && i < cap; i++) {
        res[i] = s->amounts[first + i].res;
        units[i] = s->amounts[first + i].n;
    }
    return n;
}

static double api_unit_value(void *self, int32_t agent, int32_t r)
{
    soc *s = self;
    if (!s->frozen || agent < 0 || agent >= s->n_agents || r < 0 || r >= s->R) return NAN;
    return soc_unit_value(s, agent, r);
}

static const char *api_agent_job(void *self, int32_t agent)
{
    soc *s = self;
    if (!s->frozen || !s->agent_job || agent < 0 || agent >= s->n_agents) return NULL;
    return s->jobs[s->agent_job[agent]].name;
}

/* ---- parameters ------------------------------------------------------------------------------ */

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(
        soc_params, "adasociety", adasociety, NULL,
        "path of an AdaSociety main.json (task, job, resource and event files); the map and "
        "its content then come from the task file"),
    POLIS_P_BOOL(soc_params, "builtin", builtin, true,
                 "include the 15 built-in resources, the 9 built-in recipes and the explorer job"),
    POLIS_P_JSON(soc_params, "resources", resources,
                 "custom resources: {name: {\"score\": r, \"requirements\": {res: n}, \"type\": "
                 "\"natural\"|\"synthetic\"}}"),
    POLIS_P_JSON(soc_params, "recipes", recipes,
                 "custom recipes: {name: {\"in\": {res: n}, \"out\": {res: n}, \"requirements\": "
                 "{res: n}}}"),
    POLIS_P_JSON(
        soc_params, "jobs", jobs,
        "agent types: {name: {\"fov\": n|[h, v], \"capacity\": {res: n}, \"default_capacity\": n, "
        "\"size\": n, \"preference\": {res: h}, \"score\": {res: v}, \"inventory\": {res: n}}}"),
    POLIS_P_JSON(
        soc_params, "map", map,
        "base map: {\"init_rule\": \"blank\"|\"box\"|\"map_file\", \"size\": {\"x\": W, \"y\": H}, "
        "\"file_path\": path}"),
    POLIS_P_JSON(soc_params, "static", static_,
                 "fixed content: {\"blocks\", \"resources\", \"recipes\", \"players\"} (README)"),
    POLIS_P_JSON(
        soc_params, "random", random,
        "randomly placed content: {\"blocks\", \"resources\", \"recipes\", \"players\"} (README)"),
    POLIS_P_INT(soc_params, "max_length", max_length, 0, 1e9, 0,
                "truncate every agent after this many steps (0: the scenario's max_steps only)"),
    POLIS_P_STRING(
        soc_params, "resources_in_play", resources_in_play, "used",
        "\"used\": only what the world places, its stations use and the players start with "
        "(AdaSociety); \"all\": every defined resource and recipe"),
    POLIS_P_STRING(
        soc_params, "view", view, "window",
        "grid observation: \"window\" (egocentric fov window) or \"map\" (map-sized, merged with "
        "shared maps, as AdaSociety's Exploration)"),
    POLIS_P_INT(
        soc_params, "pile_shown", pile_shown, 1, 32767, 32767,
        "the most units of a resource the grid observation shows on one pile (larger piles "
        "show this many) and the top of the pile channels' declared range; 127 lets compact "
        "observations store the grid as i8 (docs/scenario.md)"),
    POLIS_P_BOOL(
        soc_params, "terminate_at_limit", terminate_at_limit, false,
        "at the time limit report agents terminated as well as truncated (AdaSociety reports "
        "both)"),
    POLIS_P_INT(soc_params, "plan_patience", plan_patience, 1, 1e6, 30,
                "plans (GATHER, CRAFT, DUMP, GOTO) give up after this many ticks in a row without "
                "progress (README \"Plans\")"),
    POLIS_P_INT(soc_params, "plan_explore_ticks", plan_explore_ticks, 1, 1e6, 20,
                "ticks an EXPLORE plan walks when nothing new comes into view"),
};

/* ---- lifecycle ----------------------------------------------------------------------------- */

static polis_status society_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                 void **state)
{
    soc *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->ctx = ctx;
    memcpy(&s->p, params, sizeof s->p);
    s->n_agents = h->n_agents(ctx);
    if (!(s->vis = h->host_api(ctx, POLIS_VISIBILITY_API, 1))) return POLIS_ERR_PLUGIN;
    polis_status st;
    if (strcmp(s->p.view, "window") == 0) {
        s->view = SOC_VIEW_WINDOW;
    } else if (strcmp(s->p.view, "map") == 0) {
        s->view = SOC_VIEW_MAP;
    } else {
        h->error(ctx, "params.view: expected \"window\" or \"map\", got \"%s\"", s->p.view);
        return POLIS_ERR_CONFIG;
    }
    if (strcmp(s->p.resources_in_play, "used") && strcmp(s->p.resources_in_play, "all")) {
        h->error(ctx, "params.resources_in_play: expected \"used\" or \"all\", got \"%s\"",
                 s->p.resources_in_play);
        return POLIS_ERR_CONFIG;
    }
    if (s->p.adasociety) {
        const char *main_path = soc_scenario_path(s, s->p.adasociety);
        if (!main_path) return POLIS_ERR_NOMEM;
        if ((st = soc_load_adasociety(s, main_path))) return st;
    }
    if ((st = soc_map_setup(s))) return st;
    if ((st = h->grid_configure(ctx, s->W, s->H, true))) return st;
    if ((st = h->grid_layer(ctx, "blocks", &s->L_blocks)) ||
        (st = h->grid_layer(ctx, "agents", &s->L_agents)) ||
        (st = h->grid_layer(ctx, "recipes", &s->L_recipes)))
        return st;
    s->api = (polis_society_api){
        .version = POLIS_SOCIETY_VERSION,
        .struct_size = sizeof(polis_society_api),
        .self = s,
        .define_resource = api_define_resource,
        .define_recipe = api_define_recipe,
        .n_resources = api_n_resources,
        .resource_find = api_resource_find,
        .resource_name = api_resource_name,
        .n_recipes = api_n_recipes,
        .recipe_find = api_recipe_find,
        .recipe_name = api_recipe_name,
        .inventory = api_inventory,
        .give = api_give,
        .pile = api_pile,
        .set_pile = api_set_pile,
        .position = api_position,
        .greedy_action = api_greedy_action,
        .initial_amount = api_initial_amount,
        .recipe_stations = api_recipe_stations,
        .amounts = api_amounts,
        .unit_value = api_unit_value,
        .agent_job = api_agent_job,
    };
    if ((st = h->service_provide(ctx, POLIS_SOCIETY_SERVICE, &s->api))) return st;
    if ((st = soc_register_events(s))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, soc_on_reset, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, SOC_LAST_PRIORITY, soc_on_reset_done, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, soc_on_begin, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESOLVE, 0, soc_on_resolve, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, soc_on_end, s)))
        return st;
    if ((st = h->reward(ctx, "inventory", soc_reward, s))) return st;
    return soc_register_renderers(s);
}

static polis_status society_start(polis_ctx *ctx, void *state)
{
    soc *s = state;
    const polis_host *h = s->h;
    polis_status st;
    s->frozen = true;
    if (s->def_status) {
        h->error(ctx, "%s", s->def_error);
        return s->def_status;
    }
    if ((st = soc_content_build(s)) || (st = soc_jobs_build(s)) || (st = soc_world_setup(s)))
        return st;
    int32_t n = s->n_agents;
    size_t cells = (size_t)s->cells, R = (size_t)s->R;
    if (cells * R > ((size_t)1 << 28)) {
        h->error(ctx,
                 "a %dx%d map with %d resources in play is too large (more than 2^28 "
                 "pile cells)",
                 (int)s->W, (int)s->H, (int)s->R);
        return POLIS_ERR_CONFIG;
    }
#define A(field, count) ((s->field = soc_alloc(s, sizeof *s->field * (size_t)(count))) == NULL)
    if (A(ax, n) || A(ay, n) || A(inv, (size_t)n * R) || A(inv_total, n) || A(pending, n) ||
        A(piles, cells * R) || A(kinds, cells) || A(scratch, cells) || A(tgt, n) || A(moving, n) ||
        A(wants, n) || A(why, n) || A(dir, n) || A(losers, n) || A(blk_epoch, cells) ||
        A(claim_epoch, cells) || A(claim_head, cells) || A(claim_tail, cells) ||
        A(claim_len, cells) || A(claim_next, n) || A(claim_keys, n) || A(stack, n + 1) ||
        A(views, n) || A(seen, (size_t)n * (R + (size_t)s->K)) || A(act_pick, R) || A(act_dump, R))
        return POLIS_ERR_NOMEM;
#undef A
    const polis_social_api *soc_api = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (soc_api &&
        soc_api->struct_size >= offsetof(polis_social_api, sharers) + sizeof soc_api->sharers &&
        soc_api->sharers)
        s->social = soc_api;
    if ((st = soc_register_actions(s)) || (st = soc_register_observations(s)) ||
        (st = soc_register_policy(s)) || (st = soc_register_random_ada(s)) ||
        (st = soc_register_plans(s)) || (st = soc_register_looks(s)))
        return st;
    soc_free_adasociety(s);
    return POLIS_OK;
}

static void society_destroy(polis_ctx *ctx, void *state)
{
    soc *s = state;
    if (!s) return;
    soc_free_adasociety(s);
    const polis_host *h = s->h;
    while (s->arena) {
        soc_block *next = s->arena->next;
        h->free(ctx, s->arena, sizeof *s->arena + s->arena->size);
        s->arena = next;
    }
    h->free(ctx, s, sizeof *s);
}

static const polis_plugin_desc SOCIETY = {
    POLIS_DESC_HEAD("society", 7),
    .version = "1.0.0",
    .doc = "AdaSociety's physical world: resources, recipes, inventories, moves with "
           "collisions, requirement-gated vision (rulesets/society/README.md)",
    .requires = NULL,
    POLIS_DESC_PARAMS(PARAMS, soc_params),
    .init = society_init,
    .start = society_start,
    .destroy = society_destroy,
    POLIS_DESC_EXPORTS(EXPORTS),
};

POLIS_PLUGIN(SOCIETY)
