/*
 * grid.c — the optional 2D layered grid: width x height int32 cells per layer, stored
 * [layer][y][x], a torus or bounded. Layers are named so plugins share them ("agents").
 */
#include <string.h>

#include "internal.h"

polis_status polis__grid_configure(polis_env *env, int32_t w, int32_t h, bool wrap)
{
    if (w < 1 || h < 1 || w > 65536 || h > 65536)
        return polis__fail(env, POLIS_ERR_INVALID, "grid size %dx%d is outside 1x1 .. 65536x65536",
                           w, h);
    if ((int64_t)w * h > ((int64_t)1 << 28))
        return polis__fail(env, POLIS_ERR_INVALID, "grid %dx%d has more than 2^28 cells", w, h);
    if (env->grid_sized) {
        if (env->grid.width == w && env->grid.height == h && env->grid.wrap == wrap)
            return POLIS_OK;
        return polis__fail(env, POLIS_ERR_CONFIG,
                           "grid is already %dx%d (%s); cannot make it %dx%d (%s)", env->grid.width,
                           env->grid.height, env->grid.wrap ? "wrap" : "bounded", w, h,
                           wrap ? "wrap" : "bounded");
    }
    env->grid_sized = true;
    env->grid_enabled = true;
    env->grid.width = w;
    env->grid.height = h;
    env->grid.wrap = wrap;
    return POLIS_OK;
}

polis_status polis__grid_layer(polis_env *env, const char *name, int32_t *out)
{
    for (int32_t i = 0; i < env->n_layers; i++) {
        if (strcmp(env->layer_names[i], name) == 0) {
            if (out) *out = i;
            return POLIS_OK;
        }
    }
    if (env->n_layers >= 256) return polis__fail(env, POLIS_ERR_LIMIT, "more than 256 grid layers");
    polis_status st = polis__grow(env, (void **)&env->layer_names, &env->cap_layers, env->n_layers,
                                  sizeof(char *));
    if (st) return st;
    if (!(env->layer_names[env->n_layers] = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    if (out) *out = env->n_layers;
    env->n_layers++;
    env->grid_enabled = true;
    return POLIS_OK;
}

static size_t grid_bytes(const polis_env *env)
{
    return sizeof(int32_t) * (size_t)env->grid.width * (size_t)env->grid.height *
           (size_t)env->n_layers;
}

polis_status polis__grid_alloc(polis_env *env)
{
    if (!env->grid_enabled) return POLIS_OK;
    if (!env->grid_sized)
        return polis__fail(env, POLIS_ERR_CONFIG,
                           "%s: grid layer \"%s\" is registered but the grid has no size: add "
                           "\"grid\": {\"width\": W, \"height\": H} to the scenario",
                           env->scn.source, env->layer_names[0]);
    env->grid.layers = env->n_layers;
    if (env->n_layers == 0) return POLIS_OK;
    env->grid.cells = polis__alloc(env, grid_bytes(env));
    if (!env->grid.cells)
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating the grid");
    return POLIS_OK;
}

void polis__grid_clear(polis_env *env)
{
    if (env->grid.cells) memset(env->grid.cells, 0, grid_bytes(env));
}

void polis__grid_free(polis_env *env)
{
    polis__free(env, env->grid.cells, grid_bytes(env));
    env->grid.cells = NULL;
    for (int32_t i = 0; i < env->n_layers; i++) polis__strfree(env, env->layer_names[i]);
    polis__free(env, env->layer_names, sizeof(char *) * (size_t)env->cap_layers);
}

static inline int32_t wrap_coord(int32_t v, int32_t n)
{
    int32_t m = v % n;
    return m < 0 ? m + n : m;
}

void polis__grid_window(const polis_grid *g, int32_t layer, int32_t cx, int32_t cy, int32_t rx,
                        int32_t ry, int32_t outside, int32_t *out)
{
    int32_t w = 2 * rx + 1, h = 2 * ry + 1;
    if (!g->cells || layer < 0 || layer >= g->layers || rx < 0 || ry < 0) {
        for (int32_t i = 0; i < w * h; i++) out[i] = outside;
        return;
    }
    const int32_t *base = g->cells + (size_t)layer * (size_t)g->width * (size_t)g->height;
    for (int32_t dy = -ry; dy <= ry; dy++) {
        int32_t y = cy + dy;
        int32_t *row = out + (size_t)(dy + ry) * (size_t)w;
        if (g->wrap) {
            const int32_t *src = base + (size_t)wrap_coord(y, g->height) * (size_t)g->width;
            for (int32_t dx = -rx; dx <= rx; dx++)
                row[dx + rx] = src[wrap_coord(cx + dx, g->width)];
        } else if (y < 0 || y >= g->height) {
            for (int32_t dx = 0; dx < w; dx++) row[dx] = outside;
        } else {
            const int32_t *src = base + (size_t)y * (size_t)g->width;
            for (int32_t dx = -rx; dx <= rx; dx++) {
                int32_t x = cx + dx;
                row[dx + rx] = (x < 0 || x >= g->width) ? outside : src[x];
            }
        }
    }
}
