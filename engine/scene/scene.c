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
#include <stdarg.h>
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
    polis_ctx *ctx; /* the plugin that registered it */
} look_stat;

typedef struct look_fn {
    polis_scene_fn fn;
    void *ud;
    polis_ctx *ctx;
    int32_t max_things, max_nodes, max_edges;
    uint32_t whole; /* POLIS_SCENE_WHOLE_* the plugin said (scene_whole, "scene" API 4) */
    /* while this callback runs: where its share of the appended arrays ends */
    int32_t end_things, end_nodes, end_edges;
    polis_scene_copy_def copy; /* scene_copy ("scene" API 5; take NULL: none) */
    void *state;               /* a copy reader's: draw's state (copy.state_bytes) */
} look_fn;

/* A kept list (the "scene" host API, version 2; one plugin keeps it): the plugin's elements
 * are the first n of the scene's array, kept from one scene to the next (appended elements of
 * other plugins follow them). Per slot: its element's index (-1: empty) and the number of the
 * scene that last put or cleared it; the largest such number per block of 64 slots; the slot
 * of each of the n elements; and the slots the last scene put or cleared, once each (a reader
 * of every scene needs no scan). */
#define KEPT_BLOCK 64
typedef struct kept_list {
    polis_ctx *ctx; /* the plugin that keeps it; NULL: not kept */
    int32_t slots, n;
    int32_t *where; /* [slots] */
    uint64_t *ver;  /* [slots] */
    uint64_t *bver; /* [slots / KEPT_BLOCK + 1] */
    int32_t *back;  /* [the list's capacity] */
    int32_t *log;   /* [slots] */
    int32_t n_log;
    bool whole;
    int32_t *count; /* the scene's count of the list (n_things or n_edges) */
} kept_list;

struct polis__looks {
    look_kind *kinds;
    int32_t n_kinds, cap_kinds;
    char **layers;
    int32_t n_layers, cap_layers;
    polis_ctx **kept;
    int32_t cap_kept; /* [layer]: the plugin that keeps it between scenes (ABI 1.6), or NULL */
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
    polis_ctx *running_ctx; /* its plugin (NULL: none runs): the host calls' one check */
    /* kept layers: the episode the last scene was read in (-1: none yet, or it failed);
     * fresh while the callbacks of a scene that cleared them run */
    int64_t scene_episode;
    bool fresh;
    /* [scene.n_layers]: each layer's version (polis_env_scene_layer_version) and the number of
     * the last scene whose callbacks said it stayed the same ("scene" host API; a number, not
     * a flag, so that nothing is cleared before a scene) */
    uint64_t *layer_ver;
    uint64_t *same_no;
    uint64_t ver_last; /* the last version given */
    /* what the kernel need not clear before the callbacks ("scene" API 4, scene_whole): the
     * agents, the stats, and per layer [scene.n_layers] a kept layer's fill in a fresh scene;
     * whether some layer is filled in every scene (one not kept) */
    bool keep_agents, keep_stats;
    bool *fresh_written;
    bool fill_always;
    bool clear_always; /* something is cleared before every scene (scene_clear) */
    /* [scene.n_layers]: the rows the callbacks said they rewrote ("scene" host API 3;
     * row_words words a layer), the number of the last scene whose callbacks said any, and the
     * version the last scene's rows are relative to (0: none, polis_env_scene_layer_rows) */
    uint64_t *rows;
    uint64_t *rows_no;
    uint64_t *rows_since;
    int32_t row_words;
    kept_list kl[3];                     /* [POLIS_SCENE_*]: kept things and edges */
    int32_t n_kept_lists, kept_lists[3]; /* the lists a plugin keeps, in order */
    uint64_t scene_no;                   /* polis_env_scene_number */
    polis_scene_said said; /* polis_env_scene_said: set as scene_no, the whole and the logs are */
    /* scenes drawn from copies ("scene" API 5): the env's instance points at the open reader;
     * a reader's own instance (the per-scene parts above, the registry's shared) at its reader */
    polis_scene_copy *open_copy;
    polis_scene_copy *self;
};

/* A reader of copies (polis/scene.h): a second instance of the per-scene state, drawn on the
 * reader's thread, and what the env's thread's takes keep. */
struct polis_scene_copy {
    polis__looks lk;
    polis_env *env;
    size_t max;           /* polis_scene_copy_max */
    size_t term_bytes;    /* the terminations a take holds (when the kernel clears the agents) */
    uint64_t taken;       /* takes written (the env's thread) */
    uint64_t drawn;       /* takes drawn (the reader's thread) */
    int64_t take_episode; /* the episode of the last good take (-1: none, or it failed) */
    int64_t tick;         /* the tick of the take being drawn (messages) */
    bool broken;          /* a draw failed */
    char err[POLIS_ERRMAX];
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
    lk->kept[lk->n_layers] = NULL;
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
    lk->kept[layer] = ctx;
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
    s->ctx = ctx;
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

/* The instance a scene callback's host call works on: the env's, or the open copy reader's
 * when handed that reader's scene (in its draw); the env's for any other scene (the calls
 * then refuse it). The env's is compared first: polis_env_scene_get's calls take no detour. */
static inline polis__looks *scene_lk(const polis_ctx *ctx, const polis_scene *scene)
{
    polis__looks *lk = ctx->env->looks;
    if (lk && scene != &lk->scene && lk->open_copy && scene == &lk->open_copy->lk.scene)
        return &lk->open_copy->lk;
    return lk;
}

/* A copy reader's message: "<who>: <message>" (who NULL: the message alone). */
static POLIS_PRINTF(3, 0) void copy_verr(polis_scene_copy *c, const char *who, const char *fmt,
                                         va_list ap)
{
    int n = who ? snprintf(c->err, sizeof c->err, "%s: ", who) : 0;
    if (n < 0 || (size_t)n >= sizeof c->err) n = 0;
    vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
}

/* A host call's error in a scene callback: the env's error (polis__ctx_error), but a copy
 * reader's own when its draw made the call — the reader's thread touches nothing of the env. */
static POLIS_PRINTF(3, 4) void scene_err(const polis__looks *lk, polis_ctx *ctx, const char *fmt,
                                         ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (lk && lk->self) {
        copy_verr(lk->self, ctx->name, fmt, ap);
    } else {
        char msg[POLIS_ERRMAX];
        vsnprintf(msg, sizeof msg, fmt, ap);
        polis__ctx_error(ctx, "%s", msg);
    }
    va_end(ap);
}

static polis_status appending(polis_ctx *ctx, polis_scene *scene, const char *what, int32_t list)
{
    polis__looks *lk = scene_lk(ctx, scene);
    if (!lk || lk->running_ctx != ctx || scene != &lk->scene) {
        scene_err(lk, ctx,
                  "%s: only the plugin's own scene callback may append, to the scene it was "
                  "handed",
                  what);
        return POLIS_ERR_STATE;
    }
    if (list >= 0 && lk->kl[list].ctx == ctx) {
        scene_err(lk, ctx, "%s: this plugin keeps the list (list_keep): put it in a slot", what);
        return POLIS_ERR_STATE;
    }
    return POLIS_OK;
}

static polis_status str_fits(const polis__looks *lk, polis_ctx *ctx, const char *src, size_t cap,
                             const char *what, const char *member, size_t *len)
{
    if (!src) src = "";
    size_t n = *len = *src ? strlen(src) : 0; /* most labels are empty: no call */
    if (n >= cap) {
        scene_err(lk, ctx, "%s: %s \"%.40s...\" is %zu bytes, longer than %zu", what, member, src,
                  n, cap - 1);
        return POLIS_ERR_LIMIT;
    }
    return POLIS_OK;
}

/* src (checked by str_fits) into dst, NUL to the end of the array (types.h): readers compare
 * the arrays with memcmp; cleared whole with a constant size (a few stores, not a call) */
static void str_fill(char *dst, size_t cap, const char *src, size_t len)
{
    if (!src) src = "";
    _Static_assert(POLIS_SCENE_ID_MAX == POLIS_SCENE_LABEL_MAX, "two sizes of scene strings");
    if (cap == POLIS_SCENE_KIND_MAX)
        memset(dst, 0, POLIS_SCENE_KIND_MAX);
    else
        memset(dst, 0, POLIS_SCENE_ID_MAX);
    if (len) memcpy(dst, src, len);
}

static polis_status copy_str(const polis__looks *lk, polis_ctx *ctx, char *dst, size_t cap,
                             const char *src, const char *what, const char *member)
{
    size_t len;
    polis_status st = str_fits(lk, ctx, src, cap, what, member, &len);
    if (!st) str_fill(dst, cap, src, len);
    return st;
}

/* What scene_thing and thing_put check of a thing; the label's length too, so that the
 * element is written only once it is known to be good. */
static polis_status thing_check(const polis__looks *lk, polis_ctx *ctx, const polis_scene *scene,
                                const char *what, int32_t id, int32_t kind, int32_t x, int32_t y,
                                const char *label, size_t *len)
{
    if (kind < 0 || kind >= lk->n_kinds) {
        scene_err(lk, ctx, "%s %d: kind %d is not a kind id (0..%d)", what, (int)id, (int)kind,
                  (int)lk->n_kinds - 1);
        return POLIS_ERR_INVALID;
    }
    if (x < 0 || y < 0 || x >= scene->width || y >= scene->height) {
        scene_err(lk, ctx, "%s %d: (%d, %d) is outside the %d x %d map", what, (int)id, (int)x,
                  (int)y, (int)scene->width, (int)scene->height);
        return POLIS_ERR_INVALID;
    }
    return str_fits(lk, ctx, label, POLIS_SCENE_LABEL_MAX, what, "label", len);
}

static void thing_fill(polis_scene_thing *t, int32_t id, int32_t kind, int32_t x, int32_t y,
                       const char *label, size_t len)
{
    str_fill(t->label, sizeof t->label, label, len);
    t->id = id;
    t->kind = kind;
    t->x = x;
    t->y = y;
}

/* What scene_edge and edge_put check of an edge (the strings' lengths too). */
static polis_status edge_check(const polis__looks *lk, polis_ctx *ctx, const char *what,
                               const char *from, const char *to, const char *kind, float weight,
                               size_t len[3])
{
    if (!from || !*from || !to || !*to) {
        scene_err(lk, ctx, "%s: an end is empty", what);
        return POLIS_ERR_INVALID;
    }
    if (weight != weight) {
        scene_err(lk, ctx, "%s %s -> %s: the weight is NaN", what, from, to);
        return POLIS_ERR_INVALID;
    }
    polis_status st;
    if ((st = str_fits(lk, ctx, from, POLIS_SCENE_ID_MAX, what, "from", &len[0])) ||
        (st = str_fits(lk, ctx, to, POLIS_SCENE_ID_MAX, what, "to", &len[1])) ||
        (st = str_fits(lk, ctx, kind, POLIS_SCENE_KIND_MAX, what, "kind", &len[2])))
        return st;
    return POLIS_OK;
}

static void edge_fill(polis_scene_edge *e, const char *from, const char *to, const char *kind,
                      float weight, const size_t len[3])
{
    str_fill(e->from, sizeof e->from, from, len[0]);
    str_fill(e->to, sizeof e->to, to, len[1]);
    str_fill(e->kind, sizeof e->kind, kind, len[2]);
    e->weight = weight;
}

static polis_status h_scene_thing(polis_ctx *ctx, polis_scene *scene, int32_t id, int32_t kind,
                                  int32_t x, int32_t y, const char *label)
{
    size_t len;
    polis_status st = appending(ctx, scene, "scene_thing", POLIS_SCENE_THINGS);
    if (st) return st;
    polis__looks *lk = scene_lk(ctx, scene);
    if ((st = thing_check(lk, ctx, scene, "scene_thing", id, kind, x, y, label, &len))) return st;
    if (scene->n_things >= lk->running->end_things) {
        scene_err(lk, ctx,
                  "scene_thing: more than the %d things this plugin declared (look_scene "
                  "max_things)",
                  (int)lk->running->max_things);
        return POLIS_ERR_LIMIT;
    }
    thing_fill(&scene->things[scene->n_things], id, kind, x, y, label, len);
    scene->n_things++;
    return POLIS_OK;
}

static polis_status h_scene_node(polis_ctx *ctx, polis_scene *scene, const char *id,
                                 const char *kind, const char *label)
{
    polis_status st = appending(ctx, scene, "scene_node", -1);
    if (st) return st;
    polis__looks *lk = scene_lk(ctx, scene);
    if (!id || !*id) {
        scene_err(lk, ctx, "scene_node: the id is empty");
        return POLIS_ERR_INVALID;
    }
    if (scene->n_nodes >= lk->running->end_nodes) {
        scene_err(lk, ctx,
                  "scene_node: more than the %d nodes this plugin declared (look_scene max_nodes)",
                  (int)lk->running->max_nodes);
        return POLIS_ERR_LIMIT;
    }
    polis_scene_node *n = &scene->nodes[scene->n_nodes];
    if ((st = copy_str(lk, ctx, n->id, sizeof n->id, id, "scene_node", "id")) ||
        (st = copy_str(lk, ctx, n->kind, sizeof n->kind, kind, "scene_node", "kind")) ||
        (st = copy_str(lk, ctx, n->label, sizeof n->label, label, "scene_node", "label")))
        return st;
    scene->n_nodes++;
    return POLIS_OK;
}

static polis_status h_scene_edge(polis_ctx *ctx, polis_scene *scene, const char *from,
                                 const char *to, const char *kind, float weight)
{
    size_t len[3];
    polis_status st = appending(ctx, scene, "scene_edge", POLIS_SCENE_EDGES);
    if (st) return st;
    polis__looks *lk = scene_lk(ctx, scene);
    if ((st = edge_check(lk, ctx, "scene_edge", from, to, kind, weight, len))) return st;
    if (scene->n_edges >= lk->running->end_edges) {
        scene_err(lk, ctx,
                  "scene_edge: more than the %d edges this plugin declared (look_scene max_edges)",
                  (int)lk->running->max_edges);
        return POLIS_ERR_LIMIT;
    }
    edge_fill(&scene->edges[scene->n_edges], from, to, kind, weight, len);
    scene->n_edges++;
    return POLIS_OK;
}

static bool h_scene_fresh(polis_ctx *ctx, const polis_scene *scene)
{
    const polis__looks *lk = scene_lk(ctx, scene);
    /* outside a scene callback nothing was kept for the caller: everything is to be written */
    return !lk || !lk->running || scene != &lk->scene || lk->fresh;
}

static polis_status h_layer_same(polis_ctx *ctx, const polis_scene *scene, int32_t layer)
{
    polis__looks *lk = scene_lk(ctx, scene);
    if (!lk || lk->running_ctx != ctx || scene != &lk->scene) {
        scene_err(lk, ctx,
                  "scene layer_same: only in the plugin's own scene callback, for "
                  "the scene it was handed");
        return POLIS_ERR_STATE;
    }
    if (layer < 0 || layer >= scene->n_layers || !lk->kept[layer]) {
        scene_err(lk, ctx, "scene layer_same: %d is not a kept layer (look_keep_layer)",
                  (int)layer);
        return POLIS_ERR_INVALID;
    }
    lk->same_no[layer] = lk->scene_no;
    return POLIS_OK;
}

static polis_status h_layer_rows(polis_ctx *ctx, const polis_scene *scene, int32_t layer,
                                 const uint64_t *rows, int32_t n_words)
{
    polis__looks *lk = scene_lk(ctx, scene);
    if (!lk || lk->running_ctx != ctx || scene != &lk->scene) {
        scene_err(lk, ctx,
                  "scene layer_rows: only in the plugin's own scene callback, for "
                  "the scene it was handed");
        return POLIS_ERR_STATE;
    }
    if (layer < 0 || layer >= scene->n_layers || !lk->kept[layer]) {
        scene_err(lk, ctx, "scene layer_rows: %d is not a kept layer (look_keep_layer)",
                  (int)layer);
        return POLIS_ERR_INVALID;
    }
    if (!rows || n_words < 1 || n_words > lk->row_words) {
        scene_err(lk, ctx, "scene layer_rows: %d words of rows%s, not 1..%d", (int)n_words,
                  rows ? "" : " (NULL)", (int)lk->row_words);
        return POLIS_ERR_INVALID;
    }
    uint64_t *mine = lk->rows + (size_t)layer * (size_t)lk->row_words;
    if (lk->rows_no[layer] != lk->scene_no) {
        for (int32_t i = 0; i < lk->row_words; i++) mine[i] = 0;
        lk->rows_no[layer] = lk->scene_no;
    }
    for (int32_t i = 0; i < n_words; i++) mine[i] |= rows[i];
    int32_t tail = scene->height % 64; /* no bits past the map's last row */
    if (n_words == lk->row_words && tail) mine[n_words - 1] &= (UINT64_C(1) << tail) - 1;
    return POLIS_OK;
}

/* ---- kept lists (the "scene" host API, version 2) ------------------------------------------ */

static size_t el_size(int32_t list)
{
    return list == POLIS_SCENE_THINGS ? sizeof(polis_scene_thing) : sizeof(polis_scene_edge);
}

static char *el_at(polis_scene *s, int32_t list, int32_t i)
{
    return list == POLIS_SCENE_THINGS ? (char *)&s->things[i] : (char *)&s->edges[i];
}

static int32_t *list_count(polis_scene *s, int32_t list)
{
    return list == POLIS_SCENE_THINGS ? &s->n_things : &s->n_edges;
}

static const char *const list_names[3] = {"things", "nodes", "edges"};

static polis_status h_list_keep(polis_ctx *ctx, int32_t list, int32_t slots)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "scene list_keep", &lk);
    if (st) return st;
    if (list != POLIS_SCENE_THINGS && list != POLIS_SCENE_EDGES) {
        scene_err(lk, ctx,
                  "scene list_keep: list %d is not POLIS_SCENE_THINGS (0) or "
                  "POLIS_SCENE_EDGES (2)",
                  (int)list);
        return POLIS_ERR_INVALID;
    }
    if (slots < 1 || slots > CAP_MAX) {
        scene_err(lk, ctx, "scene list_keep %s: %d slots, not 1..%d", list_names[list], (int)slots,
                  CAP_MAX);
        return POLIS_ERR_INVALID;
    }
    bool has_fn = false;
    for (int32_t i = 0; i < lk->n_fns; i++) has_fn = has_fn || lk->fns[i].ctx == ctx;
    if (!has_fn) {
        scene_err(lk, ctx, "scene list_keep %s: register the scene callback (look_scene) first",
                  list_names[list]);
        return POLIS_ERR_INVALID;
    }
    kept_list *kl = &lk->kl[list];
    if (kl->ctx) {
        scene_err(lk, ctx, "scene list_keep %s: the list is already kept by %s", list_names[list],
                  kl->ctx->name);
        return POLIS_ERR_INVALID;
    }
    kl->ctx = ctx;
    kl->slots = slots;
    return POLIS_OK;
}

/* The kept list `list` of the calling plugin, in its own scene callback, and a slot of it. */
static polis_status kept_slot(polis_ctx *ctx, const polis_scene *scene, const char *what,
                              int32_t list, int32_t slot, kept_list **out, polis__looks **out_lk)
{
    polis__looks *lk = *out_lk = scene_lk(ctx, scene);
    if (!lk || lk->running_ctx != ctx || scene != &lk->scene) {
        scene_err(lk, ctx,
                  "scene %s: only in the plugin's own scene callback, for the scene "
                  "it was handed",
                  what);
        return POLIS_ERR_STATE;
    }
    if ((list != POLIS_SCENE_THINGS && list != POLIS_SCENE_EDGES) || lk->kl[list].ctx != ctx) {
        scene_err(lk, ctx, "scene %s: list %d is not kept by this plugin (list_keep)", what,
                  (int)list);
        return POLIS_ERR_INVALID;
    }
    kept_list *kl = &lk->kl[list];
    if (slot < 0 || slot >= kl->slots) {
        scene_err(lk, ctx, "scene %s: slot %d is outside 0..%d", what, (int)slot,
                  (int)kl->slots - 1);
        return POLIS_ERR_INVALID;
    }
    *out = kl;
    return POLIS_OK;
}

static void kept_touch(const polis__looks *lk, kept_list *kl, int32_t slot)
{
    uint64_t no = lk->scene_no;
    if (kl->ver[slot] == no) return; /* touched in this scene already: its block too */
    kl->log[kl->n_log++] = slot;
    kl->ver[slot] = no;
    kl->bver[(uint32_t)slot / KEPT_BLOCK] = no;
}

/* An empty slot's new element, at index n of the array (an appended element there moves to
 * the end); NULL past the plugin's declared maximum. */
static char *kept_el_new(polis__looks *lk, polis_ctx *ctx, polis_scene *scene, int32_t list,
                         kept_list *kl, int32_t slot, int32_t max)
{
    if (kl->n >= max) {
        scene_err(lk, ctx, "scene %s: more than the %d %s this plugin declared (look_scene)",
                  list == POLIS_SCENE_THINGS ? "thing_put" : "edge_put", (int)max,
                  list_names[list]);
        return NULL;
    }
    int32_t *count = list_count(scene, list);
    int32_t at = kl->n++;
    if (*count > at) memcpy(el_at(scene, list, *count), el_at(scene, list, at), el_size(list));
    (*count)++;
    kl->where[slot] = at;
    kl->back[at] = slot;
    kept_touch(lk, kl, slot);
    return el_at(scene, list, at);
}

/* The element of a slot: kept_el_new's when the slot is empty; one that holds an element (most
 * puts) without a call. */
static inline char *kept_el(polis__looks *lk, polis_ctx *ctx, polis_scene *scene, int32_t list,
                            kept_list *kl, int32_t slot, int32_t max)
{
    int32_t at = kl->where[slot];
    if (at < 0) return kept_el_new(lk, ctx, scene, list, kl, slot, max);
    kept_touch(lk, kl, slot);
    return el_at(scene, list, at);
}

static polis_status h_thing_put(polis_ctx *ctx, polis_scene *scene, int32_t slot, int32_t id,
                                int32_t kind, int32_t x, int32_t y, const char *label)
{
    kept_list *kl;
    polis__looks *lk;
    size_t len;
    polis_status st = kept_slot(ctx, scene, "thing_put", POLIS_SCENE_THINGS, slot, &kl, &lk);
    if (st || (st = thing_check(lk, ctx, scene, "thing_put", id, kind, x, y, label, &len)))
        return st;
    char *el = kept_el(lk, ctx, scene, POLIS_SCENE_THINGS, kl, slot, lk->running->max_things);
    if (!el) return POLIS_ERR_LIMIT;
    thing_fill((polis_scene_thing *)(void *)el, id, kind, x, y, label, len);
    return POLIS_OK;
}

static polis_status h_thing_move(polis_ctx *ctx, polis_scene *scene, int32_t slot, int32_t x,
                                 int32_t y)
{
    kept_list *kl;
    polis__looks *lk;
    polis_status st = kept_slot(ctx, scene, "thing_move", POLIS_SCENE_THINGS, slot, &kl, &lk);
    if (st) return st;
    int32_t at = kl->where[slot];
    if (at < 0) {
        scene_err(lk, ctx, "scene thing_move: slot %d is empty (thing_put it first)", (int)slot);
        return POLIS_ERR_INVALID;
    }
    polis_scene_thing *t = &scene->things[at];
    if ((uint32_t)x >= (uint32_t)scene->width || (uint32_t)y >= (uint32_t)scene->height) {
        scene_err(lk, ctx, "thing_move %d: (%d, %d) is outside the %d x %d map", (int)t->id, (int)x,
                  (int)y, (int)scene->width, (int)scene->height);
        return POLIS_ERR_INVALID;
    }
    t->x = x;
    t->y = y;
    kept_touch(lk, kl, slot);
    return POLIS_OK;
}

static polis_status h_edge_put(polis_ctx *ctx, polis_scene *scene, int32_t slot, const char *from,
                               const char *to, const char *kind, float weight)
{
    kept_list *kl;
    polis__looks *lk;
    size_t len[3];
    polis_status st = kept_slot(ctx, scene, "edge_put", POLIS_SCENE_EDGES, slot, &kl, &lk);
    if (st || (st = edge_check(lk, ctx, "edge_put", from, to, kind, weight, len))) return st;
    char *el = kept_el(lk, ctx, scene, POLIS_SCENE_EDGES, kl, slot, lk->running->max_edges);
    if (!el) return POLIS_ERR_LIMIT;
    edge_fill((polis_scene_edge *)(void *)el, from, to, kind, weight, len);
    return POLIS_OK;
}

/* Empties a slot: the plugin's last element fills its place, and the last appended element the
 * place that frees. */
static void kept_remove(polis__looks *lk, polis_scene *scene, int32_t list, kept_list *kl,
                        int32_t slot)
{
    int32_t at = kl->where[slot], last = kl->n - 1, *count = list_count(scene, list);
    size_t size = el_size(list);
    if (at != last) {
        memcpy(el_at(scene, list, at), el_at(scene, list, last), size);
        kl->back[at] = kl->back[last];
        kl->where[kl->back[at]] = at;
    }
    if (*count - 1 > last) memcpy(el_at(scene, list, last), el_at(scene, list, *count - 1), size);
    (*count)--;
    kl->n--;
    kl->where[slot] = -1;
    kept_touch(lk, kl, slot);
}

static polis_status h_slot_clear(polis_ctx *ctx, polis_scene *scene, int32_t list, int32_t slot)
{
    kept_list *kl;
    polis__looks *lk;
    polis_status st = kept_slot(ctx, scene, "slot_clear", list, slot, &kl, &lk);
    if (st) return st;
    if (kl->where[slot] >= 0) kept_remove(lk, scene, list, kl, slot);
    return POLIS_OK;
}

/* edge_put with the element already NUL-padded (version 3): what edge_check checks, without
 * measuring the strings (the padding is the plugin's word), then one fixed-size copy. */
static polis_status h_edge_put_padded(polis_ctx *ctx, polis_scene *scene, int32_t slot,
                                      const polis_scene_edge *edge)
{
    static const char *const what = "edge_put_padded";
    kept_list *kl;
    polis__looks *lk;
    polis_status st = kept_slot(ctx, scene, what, POLIS_SCENE_EDGES, slot, &kl, &lk);
    if (st) return st;
    if (!edge || !edge->from[0] || !edge->to[0]) {
        scene_err(lk, ctx, "%s: %s", what, edge ? "an end is empty" : "the edge is NULL");
        return POLIS_ERR_INVALID;
    }
    const char *str[3] = {edge->from, edge->to, edge->kind};
    static const char *const member[3] = {"from", "to", "kind"};
    const size_t cap[3] = {sizeof edge->from, sizeof edge->to, sizeof edge->kind};
    for (int i = 0; i < 3; i++)
        if (str[i][cap[i] - 1]) {
            scene_err(lk, ctx, "%s: %s \"%.40s...\" does not end in its %zu bytes", what, member[i],
                      str[i], cap[i]);
            return POLIS_ERR_INVALID;
        }
    if (edge->weight != edge->weight) {
        scene_err(lk, ctx, "%s %s -> %s: the weight is NaN", what, edge->from, edge->to);
        return POLIS_ERR_INVALID;
    }
    char *el = kept_el(lk, ctx, scene, POLIS_SCENE_EDGES, kl, slot, lk->running->max_edges);
    if (!el) return POLIS_ERR_LIMIT;
    memcpy(el, edge, sizeof *edge);
    return POLIS_OK;
}

/* the scene callback of plugin `ctx` (NULL: none yet) */
static look_fn *fn_of(polis__looks *lk, const polis_ctx *ctx)
{
    for (int32_t i = 0; i < lk->n_fns; i++)
        if (lk->fns[i].ctx == ctx) return &lk->fns[i];
    return NULL;
}

static polis_status h_scene_whole(polis_ctx *ctx, uint32_t what)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "scene scene_whole", &lk);
    if (st) return st;
    if (what & ~(uint32_t)(POLIS_SCENE_WHOLE_AGENTS | POLIS_SCENE_WHOLE_STATS |
                           POLIS_SCENE_WHOLE_FRESH_LAYERS)) {
        polis__ctx_error(ctx, "scene scene_whole: unknown bits 0x%x", (unsigned)what);
        return POLIS_ERR_INVALID;
    }
    look_fn *f = fn_of(lk, ctx);
    if (!f) {
        polis__ctx_error(ctx, "scene scene_whole: register the scene callback (look_scene) first");
        return POLIS_ERR_INVALID;
    }
    f->whole |= what;
    return POLIS_OK;
}

#define COPY_MAX ((size_t)1 << 30)

static polis_status h_scene_copy(polis_ctx *ctx, const polis_scene_copy_def *def)
{
    polis__looks *lk = NULL;
    polis_status st = registering(ctx, "scene scene_copy", &lk);
    if (st) return st;
    const char *bad = !def         ? "the definition is NULL"
                      : !def->take ? "take is NULL"
                      : !def->draw ? "draw is NULL"
                                   : NULL;
    if (bad) {
        polis__ctx_error(ctx, "scene scene_copy: %s", bad);
        return POLIS_ERR_INVALID;
    }
    if (def->max_take < 1 || def->max_take > COPY_MAX || def->state_bytes > COPY_MAX) {
        polis__ctx_error(ctx, "scene scene_copy: max_take %zu or state_bytes %zu is outside %s",
                         def->max_take, def->state_bytes,
                         def->max_take < 1 || def->max_take > COPY_MAX ? "1..2^30" : "0..2^30");
        return POLIS_ERR_INVALID;
    }
    look_fn *f = fn_of(lk, ctx);
    if (!f) {
        polis__ctx_error(ctx, "scene scene_copy: register the scene callback (look_scene) first");
        return POLIS_ERR_INVALID;
    }
    if (f->copy.take) {
        polis__ctx_error(ctx, "scene scene_copy: a copy is already registered (one per plugin)");
        return POLIS_ERR_INVALID;
    }
    f->copy = *def;
    return POLIS_OK;
}

static const polis_scene_api scene_api = {
    .version = POLIS_SCENE_API_VERSION,
    .struct_size = sizeof(polis_scene_api),
    .layer_same = h_layer_same,
    .list_keep = h_list_keep,
    .thing_put = h_thing_put,
    .edge_put = h_edge_put,
    .slot_clear = h_slot_clear,
    .thing_move = h_thing_move,
    .layer_rows = h_layer_rows,
    .edge_put_padded = h_edge_put_padded,
    .scene_whole = h_scene_whole,
    .scene_copy = h_scene_copy,
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

/* polis_env_scene_said, _layer_rows and _kept of an instance (the env's, or a copy reader's) */
static const polis_scene_said *said_of(const polis__looks *lk)
{
    return lk && lk->scene_no ? &lk->said : NULL;
}

static const uint64_t *rows_of(const polis__looks *lk, int32_t layer, uint64_t *since)
{
    if (since) *since = 0;
    if (!lk || !lk->allocated || layer < 0 || layer >= lk->scene.n_layers || !lk->rows_since[layer])
        return NULL;
    if (since) *since = lk->rows_since[layer];
    return lk->rows + (size_t)layer * (size_t)lk->row_words;
}

static polis_status kept_of(const polis__looks *lk, int32_t list, polis_scene_kept *out)
{
    if (!out || list < 0 || list > 2) return POLIS_ERR_INVALID;
    if (!lk || !lk->allocated) return POLIS_ERR_STATE;
    const kept_list *kl = &lk->kl[list];
    out->slots = kl->ctx ? kl->slots : 0;
    out->where = kl->ctx ? kl->where : NULL;
    out->whole = kl->ctx ? kl->whole : false;
    return POLIS_OK;
}

const polis_scene_said *polis_env_scene_said(const polis_env *env)
{
    return said_of(env ? env->looks : NULL);
}

const uint64_t *polis_env_scene_layer_rows(const polis_env *env, int32_t layer, uint64_t *since)
{
    return rows_of(env ? env->looks : NULL, layer, since);
}

uint64_t polis_env_scene_number(const polis_env *env)
{
    return env && env->looks ? env->looks->scene_no : 0;
}

polis_status polis_env_scene_kept(const polis_env *env, int32_t list, polis_scene_kept *out)
{
    return env ? kept_of(env->looks, list, out) : POLIS_ERR_INVALID;
}

int32_t polis_env_scene_kept_changes(const polis_env *env, int32_t list, uint64_t since,
                                     int32_t *out, int32_t cap)
{
    if (!env || !env->looks || list < 0 || list > 2 || (cap > 0 && !out)) return -1;
    const kept_list *kl = &env->looks->kl[list];
    if (!kl->ctx || !kl->where) return 0;
    if (since + 1 == env->looks->scene_no) { /* the last scene's own log */
        int32_t n = kl->n_log;
        if (n > cap) return -1;
        if (n > 8) /* a few (Survival's two or three mobs a tick) copied here, not by a call */
            memcpy(out, kl->log, (size_t)n * sizeof *out);
        else
            for (int32_t i = 0; i < n; i++) out[i] = kl->log[i];
        return n;
    }
    int32_t n = 0;
    for (int32_t b = 0; b * KEPT_BLOCK < kl->slots; b++) {
        if (kl->bver[b] <= since) continue;
        int32_t end = (b + 1) * KEPT_BLOCK < kl->slots ? (b + 1) * KEPT_BLOCK : kl->slots;
        for (int32_t i = b * KEPT_BLOCK; i < end; i++) {
            if (kl->ver[i] <= since) continue;
            if (n >= cap) return -1;
            out[n++] = i;
        }
    }
    return n;
}

bool polis_env_scene_view(const polis_env *env, int32_t *rx, int32_t *ry)
{
    if (!env || !env->looks || !env->looks->has_view) return false;
    if (rx) *rx = env->looks->view_rx;
    if (ry) *ry = env->looks->view_ry;
    return true;
}

/* what the plugin `ctx` said it writes whole (scene_whole; 0: nothing, or no callback) */
static uint32_t said_whole(const polis__looks *lk, const polis_ctx *ctx)
{
    uint32_t w = 0;
    for (int32_t i = 0; i < lk->n_fns; i++)
        if (lk->fns[i].ctx == ctx) w |= lk->fns[i].whole;
    return w;
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
    lk->same_no = nl ? polis__alloc(env, nl * sizeof *lk->same_no) : NULL;
    lk->fresh_written = nl ? polis__alloc(env, nl * sizeof *lk->fresh_written) : NULL;
    lk->row_words = (s->height + 63) / 64;
    size_t nrows = nl * (size_t)lk->row_words;
    lk->rows = nrows ? polis__alloc(env, nrows * sizeof *lk->rows) : NULL;
    lk->rows_no = nl ? polis__alloc(env, nl * sizeof *lk->rows_no) : NULL;
    lk->rows_since = nl ? polis__alloc(env, nl * sizeof *lk->rows_since) : NULL;
    if ((cells && !s->tiles) || (n && !s->agents) || (nstats && !s->stats) ||
        (things && !s->things) || (nodes && !s->nodes) || (edges && !s->edges) ||
        (nl && (!lk->layer_ver || !lk->same_no || !lk->fresh_written)) ||
        (nl && ((nrows && !lk->rows) || !lk->rows_no || !lk->rows_since)))
        return polis__fail(env, POLIS_ERR_NOMEM, "scene: out of memory");
    for (int32_t list = 0; list < 3; list++) {
        kept_list *kl = &lk->kl[list];
        if (!kl->ctx) continue;
        size_t slots = (size_t)kl->slots, blocks = slots / KEPT_BLOCK + 1;
        size_t cap = (size_t)(list == POLIS_SCENE_THINGS ? s->cap_things : s->cap_edges) + 1;
        kl->where = polis__alloc(env, slots * sizeof *kl->where);
        kl->ver = polis__alloc(env, slots * sizeof *kl->ver);
        kl->bver = polis__alloc(env, blocks * sizeof *kl->bver);
        kl->back = polis__alloc(env, cap * sizeof *kl->back);
        kl->log = polis__alloc(env, slots * sizeof *kl->log);
        if (!kl->where || !kl->ver || !kl->bver || !kl->back || !kl->log)
            return polis__fail(env, POLIS_ERR_NOMEM, "scene: out of memory");
        memset(kl->where, 0xff, slots * sizeof *kl->where); /* -1: empty */
        lk->said.changed[list] = kl->log;
        kl->count = list_count(s, list);
        lk->kept_lists[lk->n_kept_lists++] = list;
    }
    lk->said.layer_ver = lk->layer_ver;
    /* what the plugins said they write whole (scene_whole): the agents when one of them
     * writes them all, the stats when each stat's plugin writes its own, a kept layer's cells
     * in a fresh scene when the plugin that keeps it writes them all */
    lk->keep_agents = false;
    for (int32_t i = 0; i < lk->n_fns; i++)
        lk->keep_agents = lk->keep_agents || (lk->fns[i].whole & POLIS_SCENE_WHOLE_AGENTS);
    lk->keep_stats = lk->n_stats > 0;
    for (int32_t k = 0; k < lk->n_stats; k++)
        lk->keep_stats =
            lk->keep_stats && (said_whole(lk, lk->stats[k].ctx) & POLIS_SCENE_WHOLE_STATS);
    for (int32_t l = 0; l < s->n_layers; l++) {
        lk->fresh_written[l] =
            lk->kept[l] && (said_whole(lk, lk->kept[l]) & POLIS_SCENE_WHOLE_FRESH_LAYERS);
        lk->fill_always = lk->fill_always || !lk->kept[l];
    }
    lk->clear_always = lk->fill_always || !lk->keep_agents || (s->stats && !lk->keep_stats);
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

/* n bytes set to `byte` in 64-byte blocks of fixed-size stores: libc's memset takes `rep
 * stosb` for a 64x64 layer (or the stats of 100 agents, about 10 kB), which valgrind counts a
 * byte at a time (on the CPU about the same). */
static void fill_blocks(void *dst, int byte, size_t n)
{
    char *d = dst;
    for (; n >= 64; n -= 64, d += 64) memset(d, byte, 64);
    if (n) memset(d, byte, n);
}

/* What the kernel clears before the callbacks: the layers (every byte 0xff: -1) but a kept
 * layer (in a fresh scene, one its plugin rewrites whole), the agents and the stats unless
 * the plugins write them whole (scene_whole). Only when fresh, or some of it always
 * (lk->clear_always): out of the way of polis_env_scene_get's every call. */
static __attribute__((noinline)) void scene_clear(const polis__looks *lk, polis_scene *s,
                                                  bool fresh, const uint8_t *terminations)
{
    size_t plane = (size_t)s->width * (size_t)s->height;
    for (int32_t l = 0; l < s->n_layers; l++)
        if (!lk->kept[l] || (fresh && !lk->fresh_written[l]))
            fill_blocks(s->tiles + (size_t)l * plane, 0xff, plane * sizeof *s->tiles);
    for (int32_t a = 0; !lk->keep_agents && a < s->n_agents; a++) {
        s->agents[a].x = s->agents[a].y = -1;
        s->agents[a].facing = POLIS_FACING_NONE;
        s->agents[a].alive = !terminations[a];
    }
    if (s->stats && !lk->keep_stats)
        fill_blocks(s->stats, 0, (size_t)s->n_agents * (size_t)s->n_stats * sizeof(int32_t));
}

/* A fresh scene's kept lists emptied (their slots logged as changed). */
static __attribute__((noinline)) void kept_clear(polis__looks *lk, polis_scene *s)
{
    for (int32_t k = 0; k < lk->n_kept_lists; k++) {
        int32_t list = lk->kept_lists[k];
        kept_list *kl = &lk->kl[list];
        while (kl->n > 0) kept_remove(lk, s, list, kl, kl->back[kl->n - 1]);
    }
}

/* A callback failed: the scene is half written (every layer a new version, no list whole). The
 * message placed in the env's error, or a copy reader's own (its draw's thread). */
static __attribute__((noinline)) polis_status scene_failed(polis_env *env, polis__looks *lk,
                                                           const look_fn *f, polis_status st)
{
    polis_scene_copy *c = lk->self;
    if (!c) {
        polis__place_error(env, f->ctx, st, "scene");
    } else {
        if (!c->err[0])
            snprintf(c->err, sizeof c->err, "%s: failed (%s)", f->ctx->name, polis_status_str(st));
        size_t n = strlen(c->err);
        snprintf(c->err + n, sizeof c->err - n, " [scene copy, tick %lld]", (long long)c->tick);
    }
    for (int32_t l = 0; l < lk->scene.n_layers; l++) {
        lk->layer_ver[l] = ++lk->ver_last;
        lk->rows_since[l] = 0;
    }
    for (int32_t list = 0; list < 3; list++) {
        lk->said.kept_whole[list] = false;
        lk->said.n_changed[list] = lk->kl[list].ctx ? lk->kl[list].n_log : 0;
    }
    return st;
}

/* What polis_env_scene_get (the env's instance, the scene callbacks: take NULL) and
 * polis_scene_copy_draw (a reader's instance, the plugins' draws from a take's parts, checked)
 * share: the clears, the kept lists, the callbacks, then what the scene says of itself. Inlined
 * in both, so that the env's path keeps no test of the reader's. */
static inline __attribute__((always_inline)) polis_status scene_write(polis_env *env,
                                                                      polis__looks *lk, bool fresh,
                                                                      const uint8_t *terminations,
                                                                      const unsigned char *take)
{
    polis_scene *s = &lk->scene;
    /* kept layers hold what the callbacks wrote last, unless this is the first scene of the
     * episode or the previous one failed half-written */
    if (fresh || lk->clear_always) scene_clear(lk, s, fresh, terminations);
    lk->fresh = fresh;
    s->n_things = s->n_nodes = s->n_edges = 0;
    /* the layers' same_no and rows_no of earlier scenes are smaller than this number */
    uint64_t no = lk->said.number = ++lk->scene_no;
    /* kept lists stay, the first elements of their arrays, unless the scene is fresh */
    for (int32_t k = 0; k < lk->n_kept_lists; k++) {
        kept_list *kl = &lk->kl[lk->kept_lists[k]];
        *kl->count = kl->n;
        kl->n_log = 0;
    }
    if (fresh && lk->n_kept_lists) kept_clear(lk, s);
    for (int32_t i = 0; i < lk->n_fns; i++) {
        look_fn *f = &lk->fns[i];
        f->end_things = s->n_things + f->max_things;
        f->end_nodes = s->n_nodes + f->max_nodes;
        f->end_edges = s->n_edges + f->max_edges;
        lk->running = f;
        polis_status st;
        if (!take) {
            lk->running_ctx = env->current = f->ctx;
            st = f->fn(f->ctx, f->ud, s);
            env->current = NULL;
        } else { /* the part's bytes' count, then the bytes (8-byte aligned) */
            uint64_t n;
            memcpy(&n, take, sizeof n);
            if (fresh && f->copy.state_bytes) memset(f->state, 0, f->copy.state_bytes);
            lk->running_ctx = f->ctx;
            st = f->copy.draw(f->ctx, f->copy.ud, f->state, take + 8, (size_t)n, s);
            take += 8 + ((n + 7) & ~(uint64_t)7);
        }
        lk->running = NULL;
        lk->running_ctx = NULL;
        if (st != POLIS_OK) return scene_failed(env, lk, f, st);
    }
    /* a list not kept: not whole, no changes (said stays zeros) */
    for (int32_t k = 0; k < lk->n_kept_lists; k++) {
        int32_t list = lk->kept_lists[k];
        kept_list *kl = &lk->kl[list];
        kl->whole = kl->n == *kl->count;
        lk->said.kept_whole[list] = kl->whole;
        lk->said.n_changed[list] = kl->n_log;
    }
    /* a new version for each layer the callbacks may have changed; the rows they said they
     * rewrote are relative to the version before */
    for (int32_t l = 0; l < s->n_layers; l++) {
        bool changed = fresh || lk->same_no[l] != no;
        lk->rows_since[l] = changed && !fresh && lk->rows_no[l] == no ? lk->layer_ver[l] : 0;
        if (changed) lk->layer_ver[l] = ++lk->ver_last;
    }
    return POLIS_OK;
}

/* Whether a scene may be read now (polis_env_scene_get, polis_scene_copy_take): after a
 * successful reset; `what` names the caller in the message. */
static polis_status scene_allowed(polis_env *env, const char *what)
{
    switch (env->state) {
    case POLIS__ENV_RUNNING:
    case POLIS__ENV_DONE: return POLIS_OK;
    case POLIS__ENV_BROKEN:
        return polis__fail(env, POLIS_ERR_STATE,
                           "%s: the previous step or reset failed; call reset", what);
    default: return polis__fail(env, POLIS_ERR_STATE, "%s: no episode yet; call reset first", what);
    }
}

polis_status polis_env_scene_get(polis_env *env, const polis_scene **out)
{
    if (!env) return POLIS_ERR_INVALID;
    if (out) *out = NULL;
    polis__clear_error(env);
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "scene: out is NULL");
    polis_status st = env->state == POLIS__ENV_RUNNING ? POLIS_OK : scene_allowed(env, "scene");
    if (st) return st;
    if ((st = ensure_looks(env))) return st;
    polis__looks *lk = env->looks;
    if (!lk->allocated && (st = scene_alloc(env, lk))) return st;
    bool fresh = lk->scene_episode != env->episode;
    lk->scene_episode = -1;
    if ((st = scene_write(env, lk, fresh, env->io.terminations, NULL))) return st;
    lk->scene_episode = env->episode;
    *out = &lk->scene;
    return POLIS_OK;
}

/* An instance's scene buffers and kept lists (scene_alloc's; also half made: the sizes are set
 * before the buffers, and polis__free skips NULL). */
static void scene_free(polis_env *env, polis__looks *lk)
{
    polis_scene *s = &lk->scene;
    size_t cells = (size_t)s->n_layers * (size_t)s->width * (size_t)s->height;
    size_t n = (size_t)s->n_agents;
    polis__free(env, s->tiles, cells * sizeof *s->tiles);
    polis__free(env, s->agents, n * sizeof *s->agents);
    polis__free(env, s->stats, n * (size_t)s->n_stats * sizeof(int32_t));
    polis__free(env, s->things, (size_t)s->cap_things * sizeof *s->things);
    polis__free(env, s->nodes, (size_t)s->cap_nodes * sizeof *s->nodes);
    polis__free(env, s->edges, (size_t)s->cap_edges * sizeof *s->edges);
    polis__free(env, lk->layer_ver, (size_t)s->n_layers * sizeof *lk->layer_ver);
    polis__free(env, lk->same_no, (size_t)s->n_layers * sizeof *lk->same_no);
    polis__free(env, lk->fresh_written, (size_t)s->n_layers * sizeof *lk->fresh_written);
    polis__free(env, lk->rows, (size_t)s->n_layers * (size_t)lk->row_words * sizeof *lk->rows);
    polis__free(env, lk->rows_no, (size_t)s->n_layers * sizeof *lk->rows_no);
    polis__free(env, lk->rows_since, (size_t)s->n_layers * sizeof *lk->rows_since);
    for (int32_t list = 0; list < 3; list++) {
        kept_list *kl = &lk->kl[list];
        size_t slots = (size_t)kl->slots;
        size_t cap = (size_t)(list == POLIS_SCENE_THINGS ? s->cap_things : s->cap_edges) + 1;
        polis__free(env, kl->where, slots * sizeof *kl->where);
        polis__free(env, kl->ver, slots * sizeof *kl->ver);
        polis__free(env, kl->bver, (slots / KEPT_BLOCK + 1) * sizeof *kl->bver);
        polis__free(env, kl->back, cap * sizeof *kl->back);
        polis__free(env, kl->log, slots * sizeof *kl->log);
    }
}

/* ---- scenes drawn from copies (polis/scene.h) ------------------------------------------- */

/* What a take holds first, then the agents' terminations when the kernel clears the agents
 * before a scene (term_bytes: n_agents bytes rounded up to 8), then per scene callback its
 * part's bytes' count (a uint64_t) and the bytes, rounded up to 8: every part 8-byte aligned. */
typedef struct take_head {
    uint64_t magic;  /* TAKE_MAGIC */
    uint64_t reader; /* the reader's address: a take of another one is refused */
    uint64_t seq;    /* the reader's takes numbered 1, 2, ... in order */
    int64_t episode, tick;
    uint64_t len; /* the take's bytes, this head included */
    uint32_t fresh, n_fns;
} take_head;
#define TAKE_MAGIC UINT64_C(0x79706f63656e6373) /* "scnecopy", little-endian */

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

bool polis_env_scene_copyable(const polis_env *env)
{
    if (!env) return false;
    const polis__looks *lk = env->looks;
    for (int32_t i = 0; lk && i < lk->n_fns; i++)
        if (!lk->fns[i].copy.take) return false;
    return true;
}

static void copy_free(polis_env *env, polis_scene_copy *c)
{
    polis__looks *lk = &c->lk;
    scene_free(env, lk);
    for (int32_t i = 0; lk->fns && i < lk->n_fns; i++)
        polis__free(env, lk->fns[i].state, lk->fns[i].copy.state_bytes);
    polis__free(env, lk->fns, (size_t)lk->n_fns * sizeof *lk->fns);
    polis__free(env, c, sizeof *c);
}

/* The reader's instance: the registry's parts shared (read only once the env is created), the
 * per-scene parts its own. */
static polis_status copy_make(polis_env *env, polis_scene_copy *c)
{
    const polis__looks *e = env->looks;
    polis__looks *lk = &c->lk;
    lk->kinds = e->kinds;
    lk->n_kinds = e->n_kinds;
    lk->layers = e->layers;
    lk->n_layers = e->n_layers;
    lk->kept = e->kept;
    lk->stats = e->stats;
    lk->n_stats = e->n_stats;
    lk->map_w = e->map_w;
    lk->map_h = e->map_h;
    lk->map_ctx = e->map_ctx;
    lk->has_view = e->has_view;
    lk->view_rx = e->view_rx;
    lk->view_ry = e->view_ry;
    for (int32_t list = 0; list < 3; list++) {
        lk->kl[list].ctx = e->kl[list].ctx;
        lk->kl[list].slots = e->kl[list].slots;
    }
    lk->self = c;
    c->env = env;
    c->take_episode = -1;
    if (e->n_fns) {
        lk->fns = polis__alloc(env, (size_t)e->n_fns * sizeof *lk->fns);
        if (!lk->fns) return polis__fail(env, POLIS_ERR_NOMEM, "scene copy: out of memory");
        lk->n_fns = lk->cap_fns = e->n_fns;
        memcpy(lk->fns, e->fns, (size_t)e->n_fns * sizeof *lk->fns);
    }
    for (int32_t i = 0; i < lk->n_fns; i++) {
        look_fn *f = &lk->fns[i];
        f->state = NULL;
        if (f->copy.state_bytes && !(f->state = polis__alloc(env, f->copy.state_bytes)))
            return polis__fail(env, POLIS_ERR_NOMEM, "scene copy: out of memory");
    }
    polis_status st = scene_alloc(env, lk);
    if (st) return st;
    c->term_bytes = lk->keep_agents ? 0 : round8((size_t)lk->scene.n_agents);
    c->max = sizeof(take_head) + c->term_bytes;
    for (int32_t i = 0; i < lk->n_fns; i++) c->max += 8 + round8(lk->fns[i].copy.max_take);
    return POLIS_OK;
}

polis_status polis_scene_copy_open(polis_env *env, polis_scene_copy **out)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "scene copy: out is NULL");
    *out = NULL;
    if (env->state == POLIS__ENV_LOADING)
        return polis__fail(env, POLIS_ERR_STATE, "scene copy: the env is not created yet");
    const polis__looks *e = env->looks;
    for (int32_t i = 0; e && i < e->n_fns; i++)
        if (!e->fns[i].copy.take)
            return polis__fail(env, POLIS_ERR_STATE,
                               "scene copy: %s's scene callback has no copy (the \"scene\" host "
                               "API's scene_copy)",
                               e->fns[i].ctx->name);
    if (e && e->open_copy)
        return polis__fail(env, POLIS_ERR_STATE, "scene copy: a reader is open (one per env)");
    polis_status st = ensure_looks(env);
    if (st) return st;
    polis_scene_copy *c = polis__alloc(env, sizeof *c);
    if (!c) return polis__fail(env, POLIS_ERR_NOMEM, "scene copy: out of memory");
    if ((st = copy_make(env, c))) {
        copy_free(env, c);
        return st;
    }
    env->looks->open_copy = c;
    *out = c;
    return POLIS_OK;
}

void polis_scene_copy_close(polis_scene_copy *c)
{
    if (!c) return;
    polis_env *env = c->env;
    if (env->looks && env->looks->open_copy == c) env->looks->open_copy = NULL;
    copy_free(env, c);
}

size_t polis_scene_copy_max(const polis_scene_copy *c) { return c ? c->max : 0; }

polis_status polis_scene_copy_take(polis_scene_copy *c, void *buf, size_t *len)
{
    if (!c) return POLIS_ERR_INVALID;
    polis_env *env = c->env;
    polis__clear_error(env);
    if (len) *len = 0;
    if (!buf || !len || (uintptr_t)buf % 8)
        return polis__fail(env, POLIS_ERR_INVALID, "scene copy: buf %s",
                           buf ? (len ? "is not 8-byte aligned" : "len is NULL") : "is NULL");
    polis_status st = scene_allowed(env, "scene copy");
    if (st) return st;
    const polis__looks *e = env->looks;
    unsigned char *p = buf;
    bool fresh = c->take_episode != env->episode;
    size_t off = sizeof(take_head);
    if (c->term_bytes) {
        size_t n = (size_t)c->lk.scene.n_agents;
        memcpy(p + off, env->io.terminations, n);
        memset(p + off + n, 0, c->term_bytes - n);
        off += c->term_bytes;
    }
    for (int32_t i = 0; i < e->n_fns; i++) {
        const look_fn *f = &e->fns[i];
        size_t n = 0;
        env->current = f->ctx;
        st = f->copy.take(f->ctx, f->copy.ud, fresh, p + off + 8, &n);
        env->current = NULL;
        if (!st && n > f->copy.max_take) {
            polis__ctx_error(f->ctx, "scene copy: take wrote %zu bytes, more than max_take %zu", n,
                             f->copy.max_take);
            st = POLIS_ERR_LIMIT;
        }
        if (st) {
            polis__place_error(env, f->ctx, st, "scene copy");
            c->take_episode = -1; /* the next take is fresh */
            return st;
        }
        uint64_t n64 = n;
        memcpy(p + off, &n64, sizeof n64);
        for (size_t z = n; z & 7; z++) p[off + 8 + z] = 0; /* to the next 8 bytes */
        off += 8 + round8(n);
    }
    /* the head's fields stored one by one (a struct built on the stack and copied stalls on
     * its mixed-size stores) */
    const uint64_t magic = TAKE_MAGIC, reader = (uint64_t)(uintptr_t)c, seq = ++c->taken,
                   len64 = off;
    const int64_t episode = env->episode, tick = env->tick;
    const uint32_t fr = fresh, n_fns = (uint32_t)e->n_fns;
    memcpy(p + offsetof(take_head, magic), &magic, sizeof magic);
    memcpy(p + offsetof(take_head, reader), &reader, sizeof reader);
    memcpy(p + offsetof(take_head, seq), &seq, sizeof seq);
    memcpy(p + offsetof(take_head, episode), &episode, sizeof episode);
    memcpy(p + offsetof(take_head, tick), &tick, sizeof tick);
    memcpy(p + offsetof(take_head, len), &len64, sizeof len64);
    memcpy(p + offsetof(take_head, fresh), &fr, sizeof fr);
    memcpy(p + offsetof(take_head, n_fns), &n_fns, sizeof n_fns);
    c->take_episode = episode;
    *len = off;
    return POLIS_OK;
}

/* A take refused (nothing drawn): the message, and st. */
static POLIS_PRINTF(3, 4) polis_status
    copy_refuse(polis_scene_copy *c, polis_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    copy_verr(c, NULL, fmt, ap);
    va_end(ap);
    return st;
}

polis_status polis_scene_copy_draw(polis_scene_copy *c, const void *take, size_t len,
                                   const polis_scene **out)
{
    if (!c) return POLIS_ERR_INVALID;
    if (out) *out = NULL;
    if (c->broken) return POLIS_ERR_STATE; /* its message stays */
    c->err[0] = '\0';
    polis__looks *lk = &c->lk;
    const unsigned char *p = take;
    take_head h;
    if (!out || !take || (uintptr_t)take % 8)
        return copy_refuse(c, POLIS_ERR_INVALID, "scene copy: %s",
                           !out   ? "out is NULL"
                           : take ? "take is not 8-byte aligned"
                                  : "take is NULL");
    if (len < sizeof h || (memcpy(&h, p, sizeof h), h.magic != TAKE_MAGIC) ||
        h.reader != (uint64_t)(uintptr_t)c || h.len != len || h.n_fns != (uint32_t)lk->n_fns)
        return copy_refuse(c, POLIS_ERR_INVALID,
                           "scene copy: %zu bytes that are not a take of this reader", len);
    if (h.seq != c->drawn + 1)
        return copy_refuse(c, POLIS_ERR_INVALID,
                           "scene copy: take %llu, but the next to draw is take %llu (each once, "
                           "in order)",
                           (unsigned long long)h.seq, (unsigned long long)(c->drawn + 1));
    size_t off = sizeof h + c->term_bytes;
    bool bad = off > len;
    for (int32_t i = 0; !bad && i < lk->n_fns; i++) {
        uint64_t n = 0;
        bad = off + 8 > len;
        if (!bad) memcpy(&n, p + off, sizeof n);
        bad = bad || n > lk->fns[i].copy.max_take;
        if (!bad) off += 8 + round8((size_t)n);
    }
    if (bad || off != len)
        return copy_refuse(c, POLIS_ERR_INVALID,
                           "scene copy: take %llu's parts do not add up to its %zu bytes",
                           (unsigned long long)h.seq, len);
    c->drawn = h.seq;
    c->tick = h.tick;
    /* the host's error() called in a draw writes the reader's message, not the env's */
    polis__err_buf sink = {c->err, sizeof c->err};
    polis__draw_err = &sink;
    polis_status st = scene_write(c->env, lk, h.fresh != 0, c->term_bytes ? p + sizeof h : NULL,
                                  p + sizeof h + c->term_bytes);
    polis__draw_err = NULL;
    if (st) {
        c->broken = true;
        return POLIS_ERR_STATE;
    }
    c->err[0] = '\0';
    *out = &lk->scene;
    return POLIS_OK;
}

const char *polis_scene_copy_error(const polis_scene_copy *c) { return c ? c->err : ""; }

const polis_scene_said *polis_scene_copy_said(const polis_scene_copy *c)
{
    return c ? said_of(&c->lk) : NULL;
}

const uint64_t *polis_scene_copy_layer_rows(const polis_scene_copy *c, int32_t layer,
                                            uint64_t *since)
{
    return rows_of(c ? &c->lk : NULL, layer, since);
}

polis_status polis_scene_copy_kept(const polis_scene_copy *c, int32_t list, polis_scene_kept *out)
{
    return kept_of(c ? &c->lk : NULL, list, out);
}

static void looks_free(polis_env *env)
{
    polis__looks *lk = env->looks;
    if (!lk) return;
    if (lk->open_copy) copy_free(env, lk->open_copy); /* a reader its caller did not close */
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
    scene_free(env, lk);
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
