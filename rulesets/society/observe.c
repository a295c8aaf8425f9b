/*
 * observe.c — the tensor observation of each agent (spec §14), into the kernel's buffers:
 *
 *   grid       i16 [2 + 2R][A][B]  indexed [channel][x][y] (x first, as AdaSociety)
 *                0          agents: id + 1 on each visible agent's cell (own cell: own id + 1)
 *                1          blocks (1)
 *                2 + r      recipe stations: -amount for input r, +amount for output r
 *                2 + R + r  piles: units of resource r
 *   inventory  i32 [R]      own units per resource
 *   position   i32 [2]      own (x, y)
 *   time       i32 [1]      steps completed in the episode
 *
 * R and the channel order are fixed when the tables freeze (the canonical resource order,
 * README "Resources"), so the layout never changes while agents discover things.
 *
 * view "window" (Contract-like): A x B = (2h+1) x (2v+1) for the largest fov among the
 * players' jobs, centred on the agent; an agent with a smaller fov sees zeros beyond it.
 * view "map" (Exploration, spec §14.3): A x B = W x H, egocentric with the agent at
 * (W/2, H/2), merged with the views of the agents sharing their map with it (social
 * service): each shared window is placed at its owner's true position and filtered by its
 * owner's requirements. Cells nobody sees are 0. Values beyond the i16 range saturate.
 */
#include <stdio.h>
#include <string.h>

#include "soc.h"

static inline int16_t sat16(int32_t v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
}

int32_t soc_views(soc *s, int32_t agent)
{
    s->views[0] = agent;
    if (!s->social || s->n_agents < 2) return 1;
    int32_t n = s->social->sharers(s->social->self, agent, POLIS_SOCIAL_SHARE_MAP, s->views + 1,
                                   s->n_agents - 1);
    if (n > s->n_agents - 1) n = s->n_agents - 1;
    return n < 0 ? 1 : 1 + n;
}

/* Paints owner's window into viewer's grid: torus (map view) puts the viewer's own cell at
 * (W/2, H/2), otherwise the window is centred on (hmax, vmax).
 * The map and grid coordinates are wrapped once per window and then stepped by one with a
 * compare: two soc_wrap divisions per cell were the hottest instructions of write_grid
 * (docs/performance.md). Stepping wraps exactly as soc_wrap(first + k) does. */
static void paint(soc *s, int32_t viewer, int32_t owner, int16_t *o, bool torus)
{
    const soc_job *job = &s->jobs[s->agent_job[owner]];
    const int32_t plane = s->A * s->B, R = s->R, W = s->W, H = s->H;
    int16_t *ch_agents = o, *ch_blocks = o + plane, *ch_rec = o + 2 * plane,
            *ch_res = o + (size_t)(2 + R) * (size_t)plane;
    /* what owner's inventory lets it see: vis[r] resources, vis[R + k] recipes */
    const uint8_t *vis = s->seen + (size_t)owner * (size_t)(R + s->K);
    const int32_t x0 = soc_wrap(s->ax[owner] - job->fov_h, W);
    const int32_t y0 = soc_wrap(s->ay[owner] - job->fov_v, H);
    const int32_t i0 = torus ? soc_wrap(x0 - s->ax[viewer] + W / 2, W) : s->hmax - job->fov_h;
    const int32_t j0 = torus ? soc_wrap(y0 - s->ay[viewer] + H / 2, H) : s->vmax - job->fov_v;
    int32_t x = x0, i = i0;
    for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++) {
        int32_t y = y0, j = j0;
        for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
            int32_t cell = y * W + x, at = i * s->B + j;
            int32_t ag = *soc_layer(s, s->L_agents, cell);
            if (ag) ch_agents[at] = sat16(ag);
            if (*soc_layer(s, s->L_blocks, cell)) ch_blocks[at] = 1;
            int32_t k = *soc_layer(s, s->L_recipes, cell) - 1;
            if (k >= 0 && vis[R + k]) {
                const soc_recipe *rc = &s->rec[k];
                for (int32_t q = 0; q < rc->n_in; q++) {
                    const soc_amount *a = &s->amounts[rc->in + q];
                    ch_rec[(size_t)a->res * (size_t)plane + (size_t)at] = sat16(-a->n);
                }
                for (int32_t q = 0; q < rc->n_out; q++) {
                    const soc_amount *a = &s->amounts[rc->out + q];
                    ch_rec[(size_t)a->res * (size_t)plane + (size_t)at] = sat16(a->n);
                }
            }
            if (s->kinds[cell]) {
                const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
                for (int32_t r = 0; r < R; r++)
                    if (pile[r] && vis[r])
                        ch_res[(size_t)r * (size_t)plane + (size_t)at] = sat16(pile[r]);
            }
            if (++y == H) y = 0;
            if (++j == H && torus) j = 0;
        }
        if (++x == W) x = 0;
        if (++i == W && torus) i = 0;
    }
}

static void write_grid(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int16_t *o = dst;
    memset(o, 0, sizeof *o * (size_t)(2 + 2 * s->R) * (size_t)s->A * (size_t)s->B);
    if (s->view == SOC_VIEW_WINDOW) {
        paint(s, agent, agent, o, false);
        return;
    }
    int32_t n = soc_views(s, agent);
    for (int32_t i = 0; i < n; i++) paint(s, agent, s->views[i], o, true);
}

static void write_inventory(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    memcpy(dst, s->inv + (size_t)agent * (size_t)s->R, sizeof(int32_t) * (size_t)s->R);
}

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int32_t xy[2] = {s->ax[agent], s->ay[agent]};
    memcpy(dst, xy, sizeof xy);
}

static void write_time(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int32_t t = (int32_t)s->h->tick(ctx);
    memcpy(dst, &t, sizeof t);
}

/* "wood, stone, ..." into buf. */
static void names(const soc *s, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t r = 0; r < s->R; r++) {
        int w = snprintf(buf + used, cap - used, "%s%d %s", r ? ", " : "", (int)r, s->res[r].name);
        if (w < 0 || (size_t)w >= cap - used) return;
        used += (size_t)w;
    }
}

polis_status soc_register_observations(soc *s)
{
    const polis_host *h = s->h;
    polis_status st;
    s->hmax = s->vmax = 0;
    for (int32_t a = 0; a < s->n_agents; a++) {
        const soc_job *j = &s->jobs[s->agent_job[a]];
        if (j->fov_h > s->hmax) s->hmax = j->fov_h;
        if (j->fov_v > s->vmax) s->vmax = j->fov_v;
    }
    if (s->view == SOC_VIEW_MAP) {
        s->A = s->W;
        s->B = s->H;
    } else {
        s->A = 2 * s->hmax + 1;
        s->B = 2 * s->vmax + 1;
    }
    int64_t elems = (int64_t)(2 + 2 * s->R) * s->A * s->B;
    if (elems > (1 << 26)) {
        h->error(s->ctx,
                 "the grid observation would have %lld elements per agent; use a "
                 "smaller map, fov or \"view\": \"window\"",
                 (long long)elems);
        return POLIS_ERR_CONFIG;
    }
    size_t cap = 4096 + (size_t)s->R * (SOC_NAME_MAX + 8);
    char *list = soc_alloc(s, cap), *doc = soc_alloc(s, cap * 2 + 1024);
    if (!list || !doc) return POLIS_ERR_NOMEM;
    names(s, list, cap);
    snprintf(doc, cap * 2 + 1024,
             "%s, indexed [channel][x][y]; channels: 0 agents (id+1), 1 blocks, 2..%d recipe "
             "stations (-input/+output units per resource), %d..%d piles (units per "
             "resource); resources: %s; unseen cells 0, values saturate at +-32767",
             s->view == SOC_VIEW_MAP
                 ? "map-sized egocentric view (own cell at [W/2][H/2]) merged with the maps "
                   "shared with the agent"
                 : "egocentric window of the largest fov among the jobs (own cell at the "
                   "centre)",
             (int)(1 + s->R), (int)(2 + s->R), (int)(1 + 2 * s->R), list);
    polis_obs_def grid = {.name = "grid",
                          .doc = doc,
                          .dtype = POLIS_DTYPE_I16,
                          .ndim = 3,
                          .shape = {2 + 2 * s->R, s->A, s->B},
                          .write = write_grid,
                          .ud = s};
    if ((st = h->observation(s->ctx, &grid, NULL))) return st;
    snprintf(doc, cap * 2 + 1024, "own units per resource: %s", list);
    polis_obs_def inv = {.name = "inventory",
                         .doc = doc,
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {s->R},
                         .write = write_inventory,
                         .ud = s};
    if ((st = h->observation(s->ctx, &inv, NULL))) return st;
    polis_obs_def pos = {.name = "position",
                         .doc = "own (x, y)",
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {2},
                         .write = write_position,
                         .ud = s};
    if ((st = h->observation(s->ctx, &pos, NULL))) return st;
    polis_obs_def time = {.name = "time",
                          .doc = "steps completed in the episode",
                          .dtype = POLIS_DTYPE_I32,
                          .ndim = 1,
                          .shape = {1},
                          .write = write_time,
                          .ud = s};
    return h->observation(s->ctx, &time, NULL);
}
