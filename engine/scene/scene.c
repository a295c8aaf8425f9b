/*
 * engine/scene/scene.c — looks and scenes (plugin ABI 1.5): what each game registers about how it
 * looks (kinds of tiles and things with a glyph, a colour and a shape, tile layers, per-agent
 * stats, the map size, an agent's view) and the scene callbacks that write the current
 * moment into buffers the kernel owns. Recordings (record.c), the replay check and the
 * viewer read only this, so they need no per-game code.
 *
 * The scene buffers are allocated at the first polis_env_scene_get, from the capacities the
 * callbacks declared; every later call only overwrites them, so recording allocates nothing
 * per step. A registry is kept only once a plugin registers something (env->looks).
 *
 * Kept layers (ABI 1.6) are not cleared between scenes: their callbacks write only the cells
 * that changed since their previous call, and host->scene_fresh tells them when the kernel
 * cleared the layers (the first scene of an episode, or after a scene failed) and every
 * cell is to be written again.
 */
#include <stdio.h>
#include <string.h>

#include "core/module.h"

typedef struct polis__looks polis__looks;

#define LOOK_NAME_MAX 127

typedef struct look_kind {
    char *name;
    char glyph[8];
    char color[8];
    polis_shape shape;
    polis_ctx *ctx;
} look_kind;

typedef struct look_stat {
    char *name;
    char *group;
    int32_t max;
} look_stat;

typedef struct look_fn {
    polis_scene_fn fn;
    void *ud;
    polis_ctx *ctx;
    int32_t max_things, max_nodes, max_edges;
    /* while this callback runs: where its share of the appended arrays ends */
    int32_t end_things, end_nodes, end_edges;
} look_fn;

struct polis__looks {
    look_kind *kinds;
    int32_t n_kinds, cap_kinds;
    char **layers;
    int32_t n_layers, cap_layers;
    bool *kept;
    int32_t cap_kept; /* [layer]: kept between scenes (ABI 1.6) */
    look_stat *stats;
    int32_t n_stats, cap_stats;
    look_fn *fns;
    int32_t n_fns, cap_fns;
    int32_t map_w, map_h; /* 0: the grid's size */
    polis_ctx *map_ctx;
    bool has_view;
    int32_t view_rx, view_ry;
    polis_scene scene;
    bool allocated;
    const look_fn *running; /* the callback running now (appends check its share) */
    /* kept layers: the episode the last scene was read in (-1: none yet, or it failed);
     * fresh while the callbacks of a scene that cleared them run */
    int64_t scene_episode;
    bool fresh;
    /* [scene.n_layers]: each layer's version (polis_env_scene_layer_version) and whether the
     * callbacks of the scene being written said it stayed the same ("scene" host API) */
    uint64_t *layer_ver;
    bool *layer_same;
    uint64_t ver_last; /* the last version given */
};

static const char *const shape_names[] = {"square", "circle", "triangle", "diamond",
                                          "cross",  "dot",    "agent"};

const char *polis_shape_name(polis_shape shape)
{
    return (unsigned)shape < sizeof shape_names / sizeof shape_names[0] ? shape_names[shape] : NULL;
}

static bool valid_name(const char *s)
{
    if (!s || !*s) return false;
    size_t n = 0;
    for (const char *p = s; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return n <= LOOK_NAME_MAX;
}

/* Registration is open while plugins and scripts load; the registry is created by the first
 * registration. */
static polis_status registering(polis_ctx *ctx, const char *what, polis__looks **out)
{
    polis_env *env = ctx->env;
    if (env->state != POLIS__ENV_LOADING) {
        polis__ctx_error(ctx,
                         "%s: registration is closed once the env is created (register in init or "
                         "start)",
                         what);
        return POLIS_ERR_STATE;
    }
    if (!env->looks) {
        env->looks = polis__alloc(env, sizeof *env->looks);
        if (!env->looks) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    }
    *out = env->looks;
    return POLIS_OK;
}

/* One UTF-8 character: a lead byte and its continuation bytes, nothing more. */
static bool one_char(const char *s)
{
    if (!s || !*s) return false;
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!n || c < 0x20 || c == 0x7f || strlen(s) != n) return false;
    for (size_t i = 1; i < n; i++)
        if (((unsigned char)s[i] >> 6) != 2) return false;
    return true;
}

static bool valid_color(const char *s)
{
    if (!s || strlen(s) != 7 || s[0] != '#') return false;
    for (int i = 1; i < 7; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

static int32_t look_kind_find(const polis_env *env, const char *name)
{
    if (!env->looks || !name) return -1;
    for (int32_t i = 0; i < env->looks->n_kinds; i++)
        if (strcmp(env->looks->kinds[i].name, name) == 0) return i;
    return -1;
}

static polis_status h_look_kind(polis_ctx *ctx, const polis_kind_def *def, int32_t *out_id)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_kind", &lk);
    if (st) return st;
    if (!def) {
        polis__ctx_error(ctx, "look_kind: definition is NULL");
        return POLIS_ERR_INVALID;
    }
    if (!valid_name(def->name)) {
        polis__ctx_error(ctx,
                         "look_kind: name \"%s\" is not 1 to %d characters from a-z, 0-9 and _",
                         def->name ? def->name : "(null)", LOOK_NAME_MAX);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = look_kind_find(ctx->env, def->name);
    if (dup >= 0) {
        polis__ctx_error(ctx, "look_kind: kind \"%s\" is already registered by %s", def->name,
                         lk->kinds[dup].ctx->name);
        return POLIS_ERR_INVALID;
    }
    if (!one_char(def->glyph)) {
        polis__ctx_error(ctx, "look_kind %s: glyph \"%s\" is not one printable UTF-8 character",
                         def->name, def->glyph ? def->glyph : "(null)");
        return POLIS_ERR_INVALID;
    }
    if (!valid_color(def->color)) {
        polis__ctx_error(ctx, "look_kind %s: color \"%s\" is not \"#rrggbb\"", def->name,
                         def->color ? def->color : "(null)");
        return POLIS_ERR_INVALID;
    }
    if (!polis_shape_name(def->shape)) {
        polis__ctx_error(ctx, "look_kind %s: shape %d is not a polis_shape", def->name,
                         (int)def->shape);
        return POLIS_ERR_INVALID;
    }
    if ((st = polis__grow(ctx->env, (void **)&lk->kinds, &lk->cap_kinds, lk->n_kinds,
                          sizeof *lk->kinds)))
        return st;
    look_kind *k = &lk->kinds[lk->n_kinds];
    k->name = polis__strdup(ctx->env, def->name);
    if (!k->name) return polis__fail(ctx->env, POLIS_ERR_NOMEM, "out of memory");
    snprintf(k->glyph, sizeof k->glyph, "%s", def->glyph);
    snprintf(k->color, sizeof k->color, "%s", def->color);
    for (int i = 1; i < 7; i++)
        if (k->color[i] >= 'A' && k->color[i] <= 'F') k->color[i] = (char)(k->color[i] + 32);
    k->shape = def->shape;
    k->ctx = ctx;
    if (out_id) *out_id = lk->n_kinds;
    lk->n_kinds++;
    return POLIS_OK;
}

static polis_status h_look_layer(polis_ctx *ctx, const char *name, int32_t *out_layer)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_layer", &lk);
    if (st) return st;
    if (!valid_name(name)) {
        polis__ctx_error(ctx,
                         "look_layer: name \"%s\" is not 1 to %d characters from a-z, 0-9 and _",
                         name ? name : "(null)", LOOK_NAME_MAX);
        return POLIS_ERR_INVALID;
    }
    for (int32_t i = 0; i < lk->n_layers; i++)
        if (strcmp(lk->layers[i], name) == 0) {
            polis__ctx_error(ctx, "look_layer: layer \"%s\" is already registered", name);
            return POLIS_ERR_INVALID;
        }
    if ((st = polis__grow(ctx->env, (void **)&lk->layers, &lk->cap_layers, lk->n_layers,
                          sizeof *lk->layers)))
        return st;
    if ((st = polis__grow(ctx->env, (void **)&lk->kept, &lk->cap_kept, lk->n_layers,
                          sizeof *lk->kept)))
        return st;
    lk->kept[lk->n_layers] = false;
    lk->layers[lk->n_layers] = polis__strdup(ctx->env, name);
    if (!lk->layers[lk->n_layers]) return polis__fail(ctx->env, POLIS_ERR_NOMEM, "out of memory");
    if (out_layer) *out_layer = lk->n_layers;
    lk->n_layers++;
    return POLIS_OK;
}

static polis_status h_look_keep_layer(polis_ctx *ctx, int32_t layer)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_keep_layer", &lk);
    if (st) return st;
    if (layer < 0 || layer >= lk->n_layers) {
        polis__ctx_error(ctx, "look_keep_layer: %d is not a layer id (0..%d)", (int)layer,
                         (int)lk->n_layers - 1);
        return POLIS_ERR_INVALID;
    }
    lk->kept[layer] = true;
    return POLIS_OK;
}

static polis_status h_look_stat(polis_ctx *ctx, const char *name, const char *group, int32_t max,
                                int32_t *out_stat)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_stat", &lk);
    if (st) return st;
    if (!valid_name(name) || !valid_name(group)) {
        polis__ctx_error(ctx, "look_stat: %s \"%s\" is not 1 to %d characters from a-z, 0-9 and _",
                         valid_name(name) ? "group" : "name",
                         valid_name(name) ? (group ? group : "(null)") : (name ? name : "(null)"),
                         LOOK_NAME_MAX);
        return POLIS_ERR_INVALID;
    }
    if (max < 0) {
        polis__ctx_error(ctx, "look_stat %s: max %d is negative (0 means unbounded)", name,
                         (int)max);
        return POLIS_ERR_INVALID;
    }
    for (int32_t i = 0; i < lk->n_stats; i++)
        if (strcmp(lk->stats[i].name, name) == 0) {
            polis__ctx_error(ctx, "look_stat: stat \"%s\" is already registered", name);
            return POLIS_ERR_INVALID;
        }
    if ((st = polis__grow(ctx->env, (void **)&lk->stats, &lk->cap_stats, lk->n_stats,
                          sizeof *lk->stats)))
        return st;
    look_stat *s = &lk->stats[lk->n_stats];
    s->name = polis__strdup(ctx->env, name);
    s->group = polis__strdup(ctx->env, group);
    if (!s->name || !s->group) {
        polis__strfree(ctx->env, s->name);
        polis__strfree(ctx->env, s->group);
        memset(s, 0, sizeof *s);
        return polis__fail(ctx->env, POLIS_ERR_NOMEM, "out of memory");
    }
    s->max = max;
    if (out_stat) *out_stat = lk->n_stats;
    lk->n_stats++;
    return POLIS_OK;
}

static polis_status h_look_map(polis_ctx *ctx, int32_t width, int32_t height)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_map", &lk);
    if (st) return st;
    if (width < 1 || height < 1 || width > 65536 || height > 65536) {
        polis__ctx_error(ctx, "look_map: %d x %d is outside 1..65536 x 1..65536", (int)width,
                         (int)height);
        return POLIS_ERR_INVALID;
    }
    if (lk->map_w && (lk->map_w != width || lk->map_h != height)) {
        polis__ctx_error(ctx, "look_map: %d x %d, but %s set the map to %d x %d", (int)width,
                         (int)height, lk->map_ctx->name, (int)lk->map_w, (int)lk->map_h);
        return POLIS_ERR_INVALID;
    }
    lk->map_w = width;
    lk->map_h = height;
    lk->map_ctx = ctx;
    return POLIS_OK;
}

static polis_status h_look_view(polis_ctx *ctx, int32_t rx, int32_t ry)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_view", &lk);
    if (st) return st;
    if (rx < 0 || ry < 0 || rx > 65536 || ry > 65536) {
        polis__ctx_error(ctx, "look_view: half-extent %d x %d is outside 0..65536", (int)rx,
                         (int)ry);
        return POLIS_ERR_INVALID;
    }
    lk->has_view = true;
    lk->view_rx = rx;
    lk->view_ry = ry;
    return POLIS_OK;
}

#define CAP_MAX (1 << 24)

static polis_status h_look_scene(polis_ctx *ctx, const polis_scene_def *def)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "look_scene", &lk);
    if (st) return st;
    if (!def || !def->fn) {
        polis__ctx_error(ctx, "look_scene: %s is NULL", def ? "fn" : "definition");
        return POLIS_ERR_INVALID;
    }
    if (def->max_things < 0 || def->max_nodes < 0 || def->max_edges < 0 ||
        def->max_things > CAP_MAX || def->max_nodes > CAP_MAX || def->max_edges > CAP_MAX) {
        polis__ctx_error(ctx,
                         "look_scene: capacities (things %d, nodes %d, edges %d) must be in 0..%d",
                         (int)def->max_things, (int)def->max_nodes, (int)def->max_edges, CAP_MAX);
        return POLIS_ERR_INVALID;
    }
    for (int32_t i = 0; i < lk->n_fns; i++)
        if (lk->fns[i].ctx == ctx) {
            polis__ctx_error(ctx,
                             "look_scene: a scene callback is already registered (one per plugin)");
            return POLIS_ERR_INVALID;
        }
    if ((st = polis__grow(ctx->env, (void **)&lk->fns, &lk->cap_fns, lk->n_fns, sizeof *lk->fns)))
        return st;
    look_fn *f = &lk->fns[lk->n_fns++];
    memset(f, 0, sizeof *f);
    f->fn = def->fn;
    f->ud = def->ud;
    f->ctx = ctx;
    f->max_things = def->max_things;
    f->max_nodes = def->max_nodes;
    f->max_edges = def->max_edges;
    return POLIS_OK;
}

/* ---- appends (during a scene callback) -------------------------------------------------- */

static polis_status appending(polis_ctx *ctx, polis_scene *scene, const char *what)
{
    polis__looks *lk = ctx->env->looks;
    if (!lk || !lk->running || lk->running->ctx != ctx || scene != &lk->scene) {
        polis__ctx_error(ctx,
                         "%s: only the plugin's own scene callback may append, to the scene it was "
                         "handed",
                         what);
        return POLIS_ERR_STATE;
    }
    return POLIS_OK;
}

static polis_status copy_str(polis_ctx *ctx, char *dst, size_t cap, const char *src,
                             const char *what, const char *member)
{
    if (!src) src = "";
    size_t n = strlen(src);
    if (n >= cap) {
        polis__ctx_error(ctx, "%s: %s \"%.40s...\" is %zu bytes, longer than %zu", what, member,
                         src, n, cap - 1);
        return POLIS_ERR_LIMIT;
    }
    /* NUL to the end of the array (types.h): readers compare the arrays with memcmp; cleared
     * whole with a constant size (a few stores, not a call) */
    _Static_assert(POLIS_SCENE_ID_MAX == POLIS_SCENE_LABEL_MAX, "two sizes of scene strings");
    if (cap == POLIS_SCENE_KIND_MAX)
        memset(dst, 0, POLIS_SCENE_KIND_MAX);
    else
        memset(dst, 0, POLIS_SCENE_ID_MAX);
    memcpy(dst, src, n);
    return POLIS_OK;
}

static polis_status h_scene_thing(polis_ctx *ctx, polis_scene *scene, int32_t id, int32_t kind,
                                  int32_t x, int32_t y, const char *label)
{
    polis_status st = appending(ctx, scene, "scene_thing");
    if (st) return st;
    polis__looks *lk = ctx->env->looks;
    if (kind < 0 || kind >= lk->n_kinds) {
        polis__ctx_error(ctx, "scene_thing %d: kind %d is not a kind id (0..%d)", (int)id,
                         (int)kind, (int)lk->n_kinds - 1);
        return POLIS_ERR_INVALID;
    }
    if (x < 0 || y < 0 || x >= scene->width || y >= scene->height) {
        polis__ctx_error(ctx, "scene_thing %d: (%d, %d) is outside the %d x %d map", (int)id,
                         (int)x, (int)y, (int)scene->width, (int)scene->height);
        return POLIS_ERR_INVALID;
    }
    if (scene->n_things >= lk->running->end_things) {
        polis__ctx_error(ctx,
                         "scene_thing: more than the %d things this plugin declared (look_scene "
                         "max_things)",
                         (int)lk->running->max_things);
        return POLIS_ERR_LIMIT;
    }
    polis_scene_thing *t = &scene->things[scene->n_things];
    if ((st = copy_str(ctx, t->label, sizeof t->label, label, "scene_thing", "label"))) return st;
    t->id = id;
    t->kind = kind;
    t->x = x;
    t->y = y;
    scene->n_things++;
    return POLIS_OK;
}

static polis_status h_scene_node(polis_ctx *ctx, polis_scene *scene, const char *id,
                                 const char *kind, const char *label)
{
    polis_status st = appending(ctx, scene, "scene_node");
    if (st) return st;
    polis__looks *lk = ctx->env->looks;
    if (!id || !*id) {
        polis__ctx_error(ctx, "scene_node: the id is empty");
        return POLIS_ERR_INVALID;
    }
    if (scene->n_nodes >= lk->running->end_nodes) {
        polis__ctx_error(
            ctx, "scene_node: more than the %d nodes this plugin declared (look_scene max_nodes)",
            (int)lk->running->max_nodes);
        return POLIS_ERR_LIMIT;
    }
    polis_scene_node *n = &scene->nodes[scene->n_nodes];
    if ((st = copy_str(ctx, n->id, sizeof n->id, id, "scene_node", "id")) ||
        (st = copy_str(ctx, n->kind, sizeof n->kind, kind, "scene_node", "kind")) ||
        (st = copy_str(ctx, n->label, sizeof n->label, label, "scene_node", "label")))
        return st;
    scene->n_nodes++;
    return POLIS_OK;
}

static polis_status h_scene_edge(polis_ctx *ctx, polis_scene *scene, const char *from,
                                 const char *to, const char *kind, float weight)
{
    polis_status st = appending(ctx, scene, "scene_edge");
    if (st) return st;
    polis__looks *lk = ctx->env->looks;
    if (!from || !*from || !to || !*to) {
        polis__ctx_error(ctx, "scene_edge: an end is empty");
        return POLIS_ERR_INVALID;
    }
    if (weight != weight) {
        polis__ctx_error(ctx, "scene_edge %s -> %s: the weight is NaN", from, to);
        return POLIS_ERR_INVALID;
    }
    if (scene->n_edges >= lk->running->end_edges) {
        polis__ctx_error(
            ctx, "scene_edge: more than the %d edges this plugin declared (look_scene max_edges)",
            (int)lk->running->max_edges);
        return POLIS_ERR_LIMIT;
    }
    polis_scene_edge *e = &scene->edges[scene->n_edges];
    if ((st = copy_str(ctx, e->from, sizeof e->from, from, "scene_edge", "from")) ||
        (st = copy_str(ctx, e->to, sizeof e->to, to, "scene_edge", "to")) ||
        (st = copy_str(ctx, e->kind, sizeof e->kind, kind, "scene_edge", "kind")))
        return st;
    e->weight = weight;
    scene->n_edges++;
    return POLIS_OK;
}

static bool h_scene_fresh(polis_ctx *ctx, const polis_scene *scene)
{
    const polis__looks *lk = ctx->env->looks;
    /* outside a scene callback nothing was kept for the caller: everything is to be written */
    return !lk || !lk->running || scene != &lk->scene || lk->fresh;
}

static polis_status h_layer_same(polis_ctx *ctx, const polis_scene *scene, int32_t layer)
{
    polis__looks *lk = ctx->env->looks;
    if (!lk || !lk->running || lk->running->ctx != ctx || scene != &lk->scene) {
        polis__ctx_error(ctx, "scene layer_same: only in the plugin's own scene callback, for "
                              "the scene it was handed");
        return POLIS_ERR_STATE;
    }
    if (layer < 0 || layer >= scene->n_layers || !lk->kept[layer]) {
        polis__ctx_error(ctx, "scene layer_same: %d is not a kept layer (look_keep_layer)",
                         (int)layer);
        return POLIS_ERR_INVALID;
    }
    lk->layer_same[layer] = true;
    return POLIS_OK;
}

static const polis_scene_api scene_api = {
    .version = POLIS_SCENE_API_VERSION,
    .struct_size = sizeof(polis_scene_api),
    .layer_same = h_layer_same,
};

static int32_t h_look_kind_find(polis_ctx *ctx, const char *name)
{
    return look_kind_find(ctx->env, name);
}

/* ---- the public API ------------------------------------------------------------------ */

static void map_size(const polis_env *env, int32_t *w, int32_t *h)
{
    const polis__looks *lk = env->looks;
    if (lk && lk->map_w) {
        *w = lk->map_w;
        *h = lk->map_h;
    } else if (lk && env->grid_enabled && env->grid_sized) {
        *w = env->grid.width;
        *h = env->grid.height;
    } else {
        *w = *h = 0;
    }
}

int32_t polis_env_scene_width(const polis_env *env)
{
    int32_t w = 0, h = 0;
    if (env) map_size(env, &w, &h);
    return w;
}

int32_t polis_env_scene_height(const polis_env *env)
{
    int32_t w = 0, h = 0;
    if (env) map_size(env, &w, &h);
    return h;
}

int32_t polis_env_scene_n_layers(const polis_env *env)
{
    return env && env->looks ? env->looks->n_layers : 0;
}

const char *polis_env_scene_layer_name(const polis_env *env, int32_t layer)
{
    if (!env || !env->looks || layer < 0 || layer >= env->looks->n_layers) return NULL;
    return env->looks->layers[layer];
}

int32_t polis_env_scene_n_kinds(const polis_env *env)
{
    return env && env->looks ? env->looks->n_kinds : 0;
}

polis_status polis_env_scene_kind(const polis_env *env, int32_t kind, polis_kind_info *out)
{
    if (!env || !out || !env->looks || kind < 0 || kind >= env->looks->n_kinds)
        return POLIS_ERR_INVALID;
    const look_kind *k = &env->looks->kinds[kind];
    out->name = k->name;
    out->glyph = k->glyph;
    out->color = k->color;
    out->shape = k->shape;
    out->plugin = k->ctx->name;
    return POLIS_OK;
}

int32_t polis_env_scene_kind_find(const polis_env *env, const char *name)
{
    return env ? look_kind_find(env, name) : -1;
}

int32_t polis_env_scene_n_stats(const polis_env *env)
{
    return env && env->looks ? env->looks->n_stats : 0;
}

polis_status polis_env_scene_stat(const polis_env *env, int32_t stat, const char **name,
                                  const char **group, int32_t *max)
{
    if (!env || !env->looks || stat < 0 || stat >= env->looks->n_stats) return POLIS_ERR_INVALID;
    const look_stat *s = &env->looks->stats[stat];
    if (name) *name = s->name;
    if (group) *group = s->group;
    if (max) *max = s->max;
    return POLIS_OK;
}

uint64_t polis_env_scene_layer_version(const polis_env *env, int32_t layer)
{
    if (!env || !env->looks || !env->looks->allocated || layer < 0 ||
        layer >= env->looks->scene.n_layers)
        return 0;
    return env->looks->layer_ver[layer];
}

bool polis_env_scene_view(const polis_env *env, int32_t *rx, int32_t *ry)
{
    if (!env || !env->looks || !env->looks->has_view) return false;
    if (rx) *rx = env->looks->view_rx;
    if (ry) *ry = env->looks->view_ry;
    return true;
}

static polis_status scene_alloc(polis_env *env, polis__looks *lk)
{
    polis_scene *s = &lk->scene;
    map_size(env, &s->width, &s->height);
    s->n_layers = s->width > 0 ? lk->n_layers : 0;
    s->n_agents = env->n_agents;
    s->n_stats = lk->n_stats;
    int64_t things = 0, nodes = 0, edges = 0;
    for (int32_t i = 0; i < lk->n_fns; i++) {
        things += lk->fns[i].max_things;
        nodes += lk->fns[i].max_nodes;
        edges += lk->fns[i].max_edges;
    }
    if (things > INT32_MAX / 2 || nodes > INT32_MAX / 2 || edges > INT32_MAX / 2)
        return polis__fail(env, POLIS_ERR_LIMIT,
                           "scene: the plugins declared more than %d things, nodes or edges",
                           INT32_MAX / 2);
    s->cap_things = (int32_t)things;
    s->cap_nodes = (int32_t)nodes;
    s->cap_edges = (int32_t)edges;
    size_t cells = (size_t)s->n_layers * (size_t)s->width * (size_t)s->height;
    size_t n = (size_t)s->n_agents;
    s->tiles = cells ? polis__alloc(env, cells * sizeof *s->tiles) : NULL;
    s->agents = n ? polis__alloc(env, n * sizeof *s->agents) : NULL;
    size_t nstats = n * (size_t)s->n_stats;
    s->stats = nstats ? polis__alloc(env, nstats * sizeof(int32_t)) : NULL;
    s->things = things ? polis__alloc(env, (size_t)things * sizeof *s->things) : NULL;
    s->nodes = nodes ? polis__alloc(env, (size_t)nodes * sizeof *s->nodes) : NULL;
    s->edges = edges ? polis__alloc(env, (size_t)edges * sizeof *s->edges) : NULL;
    size_t nl = (size_t)s->n_layers;
    lk->layer_ver = nl ? polis__alloc(env, nl * sizeof *lk->layer_ver) : NULL;
    lk->layer_same = nl ? polis__alloc(env, nl * sizeof *lk->layer_same) : NULL;
    if ((cells && !s->tiles) || (n && !s->agents) || (nstats && !s->stats) ||
        (things && !s->things) || (nodes && !s->nodes) || (edges && !s->edges) ||
        (nl && (!lk->layer_ver || !lk->layer_same)))
        return polis__fail(env, POLIS_ERR_NOMEM, "scene: out of memory");
    lk->allocated = true;
    lk->scene_episode = -1;
    return POLIS_OK;
}

/* A registry with nothing in it, for games that registered no looks: agents, no map. */
static polis_status ensure_looks(polis_env *env)
{
    if (env->looks) return POLIS_OK;
    env->looks = polis__alloc(env, sizeof *env->looks);
    return env->looks ? POLIS_OK : polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

polis_status polis_env_scene_get(polis_env *env, const polis_scene **out)
{
    if (!env) return POLIS_ERR_INVALID;
    if (out) *out = NULL;
    polis__clear_error(env);
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "scene: out is NULL");
    switch (env->state) {
    case POLIS__ENV_RUNNING:
    case POLIS__ENV_DONE: break;
    case POLIS__ENV_BROKEN:
        return polis__fail(env, POLIS_ERR_STATE,
                           "scene: the previous step or reset failed; call reset");
    default: return polis__fail(env, POLIS_ERR_STATE, "scene: no episode yet; call reset first");
    }
    polis_status st = ensure_looks(env);
    if (st) return st;
    polis__looks *lk = env->looks;
    if (!lk->allocated && (st = scene_alloc(env, lk))) return st;
    polis_scene *s = &lk->scene;
    /* kept layers hold what the callbacks wrote last, unless this is the first scene of the
     * episode or the previous one failed half-written */
    bool fresh = lk->scene_episode != env->episode;
    size_t plane = (size_t)s->width * (size_t)s->height;
    for (int32_t l = 0; l < s->n_layers; l++) {
        if (fresh || !lk->kept[l]) /* every byte 0xff: -1 */
            memset(s->tiles + (size_t)l * plane, 0xff, plane * sizeof *s->tiles);
        lk->layer_same[l] = false;
    }
    lk->scene_episode = -1;
    lk->fresh = fresh;
    for (int32_t a = 0; a < s->n_agents; a++) {
        s->agents[a].x = s->agents[a].y = -1;
        s->agents[a].facing = POLIS_FACING_NONE;
        s->agents[a].alive = !env->io.terminations[a];
    }
    if (s->stats) memset(s->stats, 0, (size_t)s->n_agents * (size_t)s->n_stats * sizeof(int32_t));
    s->n_things = s->n_nodes = s->n_edges = 0;
    for (int32_t i = 0; i < lk->n_fns; i++) {
        look_fn *f = &lk->fns[i];
        f->end_things = s->n_things + f->max_things;
        f->end_nodes = s->n_nodes + f->max_nodes;
        f->end_edges = s->n_edges + f->max_edges;
        lk->running = f;
        env->current = f->ctx;
        st = f->fn(f->ctx, f->ud, s);
        env->current = NULL;
        lk->running = NULL;
        if (st != POLIS_OK) {
            polis__place_error(env, f->ctx, st, "scene");
            for (int32_t l = 0; l < s->n_layers; l++) lk->layer_ver[l] = ++lk->ver_last;
            return st;
        }
    }
    /* a new version for each layer the callbacks may have changed */
    for (int32_t l = 0; l < s->n_layers; l++)
        if (fresh || !lk->layer_same[l]) lk->layer_ver[l] = ++lk->ver_last;
    lk->scene_episode = env->episode;
    *out = s;
    return POLIS_OK;
}

static void looks_free(polis_env *env)
{
    polis__looks *lk = env->looks;
    if (!lk) return;
    for (int32_t i = 0; i < lk->n_kinds; i++) polis__strfree(env, lk->kinds[i].name);
    polis__free(env, lk->kinds, sizeof *lk->kinds * (size_t)lk->cap_kinds);
    for (int32_t i = 0; i < lk->n_layers; i++) polis__strfree(env, lk->layers[i]);
    polis__free(env, lk->layers, sizeof *lk->layers * (size_t)lk->cap_layers);
    polis__free(env, lk->kept, sizeof *lk->kept * (size_t)lk->cap_kept);
    for (int32_t i = 0; i < lk->n_stats; i++) {
        polis__strfree(env, lk->stats[i].name);
        polis__strfree(env, lk->stats[i].group);
    }
    polis__free(env, lk->stats, sizeof *lk->stats * (size_t)lk->cap_stats);
    polis__free(env, lk->fns, sizeof *lk->fns * (size_t)lk->cap_fns);
    polis_scene *s = &lk->scene;
    if (lk->allocated) {
        size_t cells = (size_t)s->n_layers * (size_t)s->width * (size_t)s->height;
        size_t n = (size_t)s->n_agents;
        polis__free(env, s->tiles, cells * sizeof *s->tiles);
        polis__free(env, s->agents, n * sizeof *s->agents);
        polis__free(env, s->stats, n * (size_t)s->n_stats * sizeof(int32_t));
        polis__free(env, s->things, (size_t)s->cap_things * sizeof *s->things);
        polis__free(env, s->nodes, (size_t)s->cap_nodes * sizeof *s->nodes);
        polis__free(env, s->edges, (size_t)s->cap_edges * sizeof *s->edges);
        polis__free(env, lk->layer_ver, (size_t)s->n_layers * sizeof *lk->layer_ver);
        polis__free(env, lk->layer_same, (size_t)s->n_layers * sizeof *lk->layer_same);
    }
    polis__free(env, lk, sizeof *lk);
    env->looks = NULL;
}

/* ---- the module (engine/modules.c) ----------------------------------------------------- */

static void scene_host(polis_host *h)
{
    h->look_kind = h_look_kind;
    h->look_layer = h_look_layer;
    h->look_stat = h_look_stat;
    h->look_map = h_look_map;
    h->look_view = h_look_view;
    h->look_scene = h_look_scene;
    h->scene_thing = h_scene_thing;
    h->scene_node = h_scene_node;
    h->scene_edge = h_scene_edge;
    h->look_kind_find = h_look_kind_find;
    h->look_keep_layer = h_look_keep_layer;
    h->scene_fresh = h_scene_fresh;
}

POLIS_INTERNAL const polis__module polis__scene_module = {
    .name = "scene",
    .host = scene_host,
    .free = looks_free,
    .api_name = POLIS_SCENE_API,
    .api_version = POLIS_SCENE_API_VERSION,
    .api = &scene_api,
};
