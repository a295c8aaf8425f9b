/*
 * core.c — orchard's rules (core.h).
 */
#include <string.h>

#include "core.h"

static int32_t cell(const orchard_core *g, int32_t x, int32_t y) { return y * g->width + x; }

static bool on_map(const orchard_core *g, int32_t x, int32_t y)
{
    return x >= 0 && y >= 0 && x < g->width && y < g->height;
}

/* A random cell with neither agent nor tree, by a scan from a random start. */
static bool free_cell(const orchard_core *g, polis_rng *rng, int32_t *out)
{
    int32_t n = g->width * g->height;
    int32_t start = (int32_t)polis_rng_below(rng, (uint32_t)n);
    for (int32_t k = 0; k < n; k++) {
        int32_t c = (start + k) % n;
        if (!g->agent[c] && !g->tree[c]) {
            *out = c;
            return true;
        }
    }
    return false;
}

bool orchard_reset(orchard_core *g, polis_rng *rng)
{
    size_t cells = (size_t)g->width * (size_t)g->height;
    memset(g->tree, 0, sizeof(int32_t) * cells);
    memset(g->agent, 0, sizeof(int32_t) * cells);
    memset(g->picked, 0, sizeof(int32_t) * (size_t)g->n_agents);
    int32_t c;
    for (int32_t a = 0; a < g->n_agents; a++) {
        if (!free_cell(g, rng, &c)) return false;
        g->agent[c] = a + 1;
        g->x[a] = c % g->width;
        g->y[a] = c / g->width;
    }
    for (int64_t t = 0; t < g->p.trees; t++) {
        if (!free_cell(g, rng, &c)) return false;
        g->tree[c] = 1;
    }
    return true;
}

static const int32_t DX[4] = {0, 0, -1, 1}, DY[4] = {-1, 1, 0, 0};

bool orchard_legal(const orchard_core *g, int32_t agent, int32_t action)
{
    int32_t x = g->x[agent], y = g->y[agent];
    if (action == ORCHARD_PICK) return g->tree[cell(g, x, y)] == 1;
    return on_map(g, x + DX[action], y + DY[action]);
}

bool orchard_act(orchard_core *g, int32_t agent, int32_t action)
{
    if (!orchard_legal(g, agent, action)) return false;
    int32_t here = cell(g, g->x[agent], g->y[agent]);
    if (action == ORCHARD_PICK) {
        g->tree[here] = 1 + (int32_t)g->p.ripen;
        g->reward[agent] += (float)g->p.value;
        g->picked[agent]++;
        return true;
    }
    int32_t nx = g->x[agent] + DX[action], ny = g->y[agent] + DY[action];
    int32_t there = cell(g, nx, ny);
    if (g->agent[there]) return true; /* blocked: legal, but nothing moves */
    g->agent[here] = 0;
    g->agent[there] = agent + 1;
    g->x[agent] = nx;
    g->y[agent] = ny;
    return true;
}

void orchard_grow(orchard_core *g)
{
    int32_t n = g->width * g->height;
    for (int32_t c = 0; c < n; c++)
        if (g->tree[c] > 1) g->tree[c]--;
}

void orchard_observe(const orchard_core *g, int32_t agent, int8_t out[9])
{
    for (int32_t dy = -1; dy <= 1; dy++)
        for (int32_t dx = -1; dx <= 1; dx++) {
            int32_t x = g->x[agent] + dx, y = g->y[agent] + dy;
            int8_t v = 0;
            if (on_map(g, x, y)) {
                int32_t c = cell(g, x, y);
                if (g->agent[c] && g->agent[c] != agent + 1)
                    v = 3;
                else if (g->tree[c])
                    v = g->tree[c] == 1 ? 2 : 1;
            }
            out[(dy + 1) * 3 + dx + 1] = v;
        }
}
