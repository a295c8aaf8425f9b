/* tests/scene_compare.h — two scenes compared (an env's and one drawn from copies, or two
 * envs'): the same tiles, agents, stats, nodes, things and edges, kept lists slot by slot, the
 * same changed slots in any order. */
#ifndef POLIS_TEST_SCENE_COMPARE_H
#define POLIS_TEST_SCENE_COMPARE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "polis/scene.h"

static inline int test_cmp_thing_id(const void *a, const void *b)
{
    int32_t x = ((const polis_scene_thing *)a)->id, y = ((const polis_scene_thing *)b)->id;
    return x < y ? -1 : x > y;
}

static inline int test_cmp_edge(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(polis_scene_edge));
}

/* n elements of `size` bytes at x and at y the same in some order (sorted copies compared whole;
 * x, y may be NULL when n is 0). */
static inline bool test_same_set(const void *x, const void *y, size_t n, size_t size,
                                 int (*cmp)(const void *, const void *))
{
    if (n == 0) return true;
    char *sx = malloc(n * size), *sy = malloc(n * size);
    bool same = sx && sy;
    if (same) {
        memcpy(sx, x, n * size);
        memcpy(sy, y, n * size);
        qsort(sx, n, size, cmp);
        qsort(sy, n, size, cmp);
        same = memcmp(sx, sy, n * size) == 0;
    }
    free(sx);
    free(sy);
    return same;
}

/* Tiles, agents, stats and nodes as they are, things and edges as sets (a kept list's order is
 * its slots'; edges compared whole: the kernel pads their strings with NULs). */
static inline bool test_scenes_equal(const polis_scene *a, const polis_scene *b)
{
    size_t cells = (size_t)a->n_layers * (size_t)a->width * (size_t)a->height,
           stats = (size_t)a->n_agents * (size_t)a->n_stats;
    /* (a scene without layers or stats may have no arrays for them) */
    if (a->n_layers != b->n_layers || a->width != b->width || a->height != b->height ||
        a->n_things != b->n_things || a->n_agents != b->n_agents || a->n_stats != b->n_stats ||
        a->n_nodes != b->n_nodes || a->n_edges != b->n_edges ||
        (cells && memcmp(a->tiles, b->tiles, cells * sizeof *a->tiles) != 0) ||
        (a->n_agents && memcmp(a->agents, b->agents, (size_t)a->n_agents * sizeof *a->agents)) ||
        (stats && memcmp(a->stats, b->stats, stats * sizeof(int32_t))))
        return false;
    /* the nodes' strings (the bytes past their ends are not said) */
    for (int32_t i = 0; i < a->n_nodes; i++) {
        const polis_scene_node *x = &a->nodes[i], *y = &b->nodes[i];
        if (strcmp(x->id, y->id) || strcmp(x->kind, y->kind) || strcmp(x->label, y->label))
            return false;
    }
    return test_same_set(a->things, b->things, (size_t)a->n_things, sizeof *a->things,
                         test_cmp_thing_id) &&
           test_same_set(a->edges, b->edges, (size_t)a->n_edges, sizeof *a->edges, test_cmp_edge);
}

/* A kept list (POLIS_SCENE_THINGS or POLIS_SCENE_EDGES) slot by slot (polis_scene_kept of one
 * scene and of the other). */
static inline bool test_kept_equal(const polis_scene *a, const polis_scene_kept *ka,
                                   const polis_scene *b, const polis_scene_kept *kb, int32_t list)
{
    if (ka->slots != kb->slots || ka->whole != kb->whole) return false;
    for (int32_t i = 0; i < ka->slots; i++) {
        int32_t x = ka->where[i], y = kb->where[i];
        if ((x < 0) != (y < 0)) return false;
        if (x < 0) continue;
        if (list == POLIS_SCENE_EDGES ? memcmp(&a->edges[x], &b->edges[y], sizeof *a->edges)
                                      : memcmp(&a->things[x], &b->things[y], sizeof *a->things))
            return false;
    }
    return true;
}

/* The same set of slots (a kept list's changes, each below `slots`), in any order. */
static inline bool test_same_slots(const int32_t *a, int32_t na, const int32_t *b, int32_t nb,
                                   int32_t slots)
{
    if (na != nb) return false;
    uint8_t *in = calloc((size_t)slots + 1, 1);
    bool same = in != NULL;
    for (int32_t i = 0; i < na && same; i++) in[a[i]]++;
    for (int32_t i = 0; i < nb && same; i++) same = in[b[i]]-- > 0;
    free(in);
    return same;
}

#endif
