/*
 * core.c — gather's rules (core.h). Nothing here knows the engine.
 */
#include <string.h>

#include "core.h"

static const int32_t DX[GATHER_DIRS] = {0, 0, -1, 1};
static const int32_t DY[GATHER_DIRS] = {-1, 1, 0, 0};

static bool cell_free(const gather_core *g, int32_t x, int32_t y)
{
    return !*gather_cell(g->agents, g, x, y) && !*gather_cell(g->coins, g, x, y);
}

/* A uniformly random cell with neither coin nor agent; false if there is none. Rejection
 * sampling first (cheap on sparse maps), then a scan from a random start. */
static bool free_cell(const gather_core *g, polis_rng *rng, gather_pos *out)
{
    int32_t w = g->width, h = g->height;
    for (int tries = 0; tries < 64; tries++) {
        int32_t x = (int32_t)polis_rng_below(rng, (uint32_t)w);
        int32_t y = (int32_t)polis_rng_below(rng, (uint32_t)h);
        if (cell_free(g, x, y)) {
            *out = (gather_pos){x, y};
            return true;
        }
    }
    int64_t cells = (int64_t)w * h;
    int64_t start = polis_rng_below(rng, (uint32_t)cells);
    for (int64_t k = 0; k < cells; k++) {
        int64_t c = (start + k) % cells;
        int32_t x = (int32_t)(c % w), y = (int32_t)(c / w);
        if (cell_free(g, x, y)) {
            *out = (gather_pos){x, y};
            return true;
        }
    }
    return false;
}

bool gather_reset(gather_core *g, polis_rng *rng, int32_t *bad_agent)
{
    size_t cells = (size_t)g->width * (size_t)g->height;
    memset(g->agents, 0, sizeof(int32_t) * cells);
    memset(g->coins, 0, sizeof(int32_t) * cells);
    if (g->coin_rows) /* every row: the episode's coins are all new */
        memset(g->coin_rows, 0xff, sizeof(uint64_t) * (size_t)((g->height + 63) / 64));
    memset(g->total_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    for (int32_t a = 0; a < g->n_agents; a++) {
        gather_pos p;
        if (!free_cell(g, rng, &p)) {
            *bad_agent = a;
            return false;
        }
        g->pos[a] = p;
        *gather_cell(g->agents, g, p.x, p.y) = a + 1;
    }
    g->coins_left = 0;
    for (int64_t c = 0; c < g->p.coins; c++) {
        gather_pos p;
        if (!free_cell(g, rng, &p)) break; /* the plugin checked there is room */
        *gather_cell(g->coins, g, p.x, p.y) = 1;
        g->coins_left++;
    }
    return true;
}

bool gather_target(const gather_core *g, gather_pos from, int32_t dir, gather_pos *out)
{
    int32_t x = from.x + DX[dir], y = from.y + DY[dir];
    if (g->wrap) {
        x = (x + g->width) % g->width;
        y = (y + g->height) % g->height;
    } else if (x < 0 || y < 0 || x >= g->width || y >= g->height) {
        return false;
    }
    out->x = x;
    out->y = y;
    return true;
}

int gather_move(gather_core *g, int32_t agent, int32_t dir, gather_pos *from)
{
    gather_pos *p = &g->pos[agent], t;
    if (!gather_target(g, *p, dir, &t)) return -1;
    int32_t *dst = gather_cell(g->agents, g, t.x, t.y);
    if (*dst != 0) return 0;
    *gather_cell(g->agents, g, p->x, p->y) = 0;
    *dst = agent + 1;
    *from = *p;
    *p = t;
    return 1;
}

void gather_begin(gather_core *g)
{
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
}

bool gather_collect(gather_core *g, int32_t agent)
{
    gather_pos p = g->pos[agent];
    int32_t *coin = gather_cell(g->coins, g, p.x, p.y);
    if (!*coin) return false;
    *coin = 0;
    gather_coin_row(g, p.y);
    g->coins_left--;
    g->step_coins[agent]++;
    g->total_coins[agent]++;
    return true;
}

void gather_respawn(gather_core *g, polis_rng *rng)
{
    gather_pos np;
    if (g->p.respawn && free_cell(g, rng, &np)) {
        *gather_cell(g->coins, g, np.x, np.y) = 1;
        gather_coin_row(g, np.y);
        g->coins_left++;
    }
}

bool gather_over(const gather_core *g) { return g->coins_left <= 0 && !g->p.respawn; }

float gather_reward(const gather_core *g, int32_t agent)
{
    return (float)(g->step_coins[agent] * g->p.coin_value);
}

static int32_t wrap_coord(int32_t v, int32_t n)
{
    int32_t r = v % n;
    return r < 0 ? r + n : r;
}

void gather_window(const gather_core *g, const int32_t *map, int32_t cx, int32_t cy, int32_t v,
                   int32_t outside, int32_t *out)
{
    int32_t side = 2 * v + 1;
    for (int32_t dy = -v; dy <= v; dy++) {
        int32_t y = cy + dy;
        int32_t *row = out + (size_t)(dy + v) * (size_t)side;
        if (g->wrap) {
            const int32_t *src = map + (size_t)wrap_coord(y, g->height) * (size_t)g->width;
            for (int32_t dx = -v; dx <= v; dx++) row[dx + v] = src[wrap_coord(cx + dx, g->width)];
        } else if (y < 0 || y >= g->height) {
            for (int32_t dx = 0; dx < side; dx++) row[dx] = outside;
        } else {
            const int32_t *src = map + (size_t)y * (size_t)g->width;
            for (int32_t dx = -v; dx <= v; dx++) {
                int32_t x = cx + dx;
                row[dx + v] = (x < 0 || x >= g->width) ? outside : src[x];
            }
        }
    }
}

void gather_observe(const gather_core *g, int32_t agent, int8_t *out, int32_t *window)
{
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1, cells = side * side;
    gather_pos p = g->pos[agent];
    gather_window(g, g->agents, p.x, p.y, v, -1, window);
    for (int32_t i = 0; i < cells; i++)
        out[i] = (int8_t)(window[i] == agent + 1 ? 2 : window[i] > 0 ? 1 : window[i]);
    gather_window(g, g->coins, p.x, p.y, v, 0, window);
    for (int32_t i = 0; i < cells; i++) out[cells + i] = (int8_t)window[i];
}
