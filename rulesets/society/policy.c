/*
 * policy.c — the greedy baseline ("greedy" policy, service function greedy_action): a
 * scripted agent that shows what a sensible but short-sighted player earns, beside the
 * kernel's "random".
 *
 * One call decides one agent's physical action from what that agent itself knows: its
 * inventory, its job's values and capacities, and the cells of its own field of view as it
 * sees them (piles and stations it holds the requirements for, blocks, other agents). It
 * reads no shared map, no other agent's inventory and nothing beyond its window. In order:
 *
 *   1. produce, if the station on its cell runs a recipe it can run (inputs held, results
 *      within its capacities) whose outputs are worth more to it than the inputs;
 *   2. pick the most valuable useful resource on its cell that it can hold one more of
 *      ("useful": worth something to its job, or an input of a recipe that gains it value);
 *   3. step along a shortest path, around blocks and inside its window (the torus wraps), to
 *      the nearest cell offering 1 or 2 (ties: the higher value, then scan order);
 *   4. explore: keep a heading for a few steps, turning when a block is ahead or the steps
 *      run out; headings are drawn from the policy generator (host->policy_rng).
 *
 * Whatever it picks is checked against the agent's current mask; a masked choice becomes
 * noop, so the policy never plays an illegal action. The per-agent heading is its only
 * memory, cleared at every reset. A call costs O(window x R) and allocates nothing: the BFS
 * arrays are sized at start for the largest field of view among the players' jobs.
 *
 * Two variants measure what information is worth to this policy (docs/baselines.md,
 * "Exploration: where the gap comes from"); they choose exactly as greedy does, but step 3
 * searches the whole map, along shortest paths around every block:
 *
 *   greedy_shared  a social player: while it does not share its map with every other agent
 *                  it plays share_map_<j> for the lowest such j (one per step, where the
 *                  mask allows it), then plays greedy over the cells its observation shows:
 *                  its own window and the windows of the agents sharing their map with it,
 *                  a pile or station there counting when the owner of a window holding it
 *                  sees it (the merged map view) and the agent can use it;
 *   greedy_map     no social actions; every cell of the map counts, as if the agent saw the
 *                  whole map (an upper bound on what seeing more is worth to greedy).
 *
 * Their calls cost O(map cells x R) and allocate nothing either.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* move_up, move_down, move_left, move_right (rules.c): x is the vertical axis. */
static const int32_t DX[4] = {-1, 1, 0, 0};
static const int32_t DY[4] = {0, 0, -1, 1};

static double recipe_gain(const soc *s, int32_t job, int32_t k)
{
    const soc_recipe *rc = &s->rec[k];
    const double *v = s->value + (size_t)job * (size_t)s->R;
    double g = 0;
    for (int32_t i = 0; i < rc->n_out; i++)
        g += s->amounts[rc->out + i].n * v[s->amounts[rc->out + i].res];
    for (int32_t i = 0; i < rc->n_in; i++)
        g -= s->amounts[rc->in + i].n * v[s->amounts[rc->in + i].res];
    return g;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    memset(s->g_heading, -1, (size_t)s->n_agents);
    memset(s->g_left, 0, sizeof *s->g_left * (size_t)s->n_agents);
    /* The social plugin's actions are all registered by now (a host without action_find,
     * or no social plugin: greedy_shared shares nothing). */
    for (int32_t j = 0; j < s->n_agents; j++) {
        char name[32];
        snprintf(name, sizeof name, "share_map_%d", (int)j);
        s->g_share_act[j] = s->h->action_find ? s->h->action_find(ctx, name) : -1;
    }
    s->g_share_attr = s->social && s->social->attr_id && s->social->get
                          ? s->social->attr_id(s->social->self, "sharing.Map")
                          : -1;
    return POLIS_OK;
}

typedef enum g_scope { G_WINDOW, G_SHARED, G_MAP } g_scope;

static polis_status greedy_scoped(soc *s, int32_t agent, g_scope scope, int32_t *out_action);

static polis_status greedy_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    return soc_greedy_action(ud, agent, out);
}

/* share_map_<j> for the lowest j the agent does not share its map with yet, or -1. */
static int32_t next_share(const soc *s, int32_t agent)
{
    if (s->g_share_attr < 0) return -1;
    const polis_io *io = s->h->io(s->ctx);
    const uint8_t *mask = io->masks + (size_t)agent * (size_t)io->n_actions;
    for (int32_t j = 0; j < s->n_agents; j++) {
        int32_t a = s->g_share_act[j];
        double on = 0;
        if (j == agent || a < 0 || !mask[a]) continue;
        if (!s->social->get(s->social->self, agent, j, s->g_share_attr, &on) || on == 0) return a;
    }
    return -1;
}

static polis_status greedy_shared_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    soc *s = ud;
    *out = 0;
    if (!s->gcells || agent < 0 || agent >= s->n_agents) return POLIS_OK;
    int32_t a = next_share(s, agent);
    if (a >= 0) {
        *out = a;
        return POLIS_OK;
    }
    return greedy_scoped(s, agent, G_SHARED, out);
}

static polis_status greedy_map_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    return greedy_scoped(ud, agent, G_MAP, out);
}

polis_status soc_register_policy(soc *s)
{
    const polis_host *h = s->h;
    int32_t J = s->J, R = s->R, K = s->K, n = s->n_agents;
    int32_t hw = 0, vw = 0;
    for (int32_t a = 0; a < n; a++) {
        const soc_job *j = &s->jobs[s->agent_job[a]];
        if (j->fov_h > hw) hw = j->fov_h;
        if (j->fov_v > vw) vw = j->fov_v;
    }
    s->g_win_h = hw;
    s->g_win_v = vw;
    size_t win = (size_t)(2 * hw + 1) * (size_t)(2 * vw + 1);
    s->g_gain = soc_alloc(s, sizeof *s->g_gain * (size_t)J * (size_t)(K ? K : 1));
    s->g_useful = soc_alloc(s, (size_t)J * (size_t)R);
    s->g_heading = soc_alloc(s, (size_t)n);
    s->g_left = soc_alloc(s, sizeof *s->g_left * (size_t)n);
    s->g_dist = soc_alloc(s, sizeof *s->g_dist * win);
    s->g_first = soc_alloc(s, win);
    s->g_queue = soc_alloc(s, sizeof *s->g_queue * win);
    size_t cells = (size_t)s->cells;
    s->g_mdist = soc_alloc(s, sizeof *s->g_mdist * cells);
    s->g_mfirst = soc_alloc(s, cells);
    s->g_mqueue = soc_alloc(s, sizeof *s->g_mqueue * cells);
    s->g_owners = soc_alloc(s, sizeof *s->g_owners * (size_t)n);
    s->g_cover = soc_alloc(s, sizeof *s->g_cover * (size_t)n);
    s->g_share_act = soc_alloc(s, sizeof *s->g_share_act * (size_t)n);
    s->g_share_attr = -1;
    if (!s->g_gain || !s->g_useful || !s->g_heading || !s->g_left || !s->g_dist || !s->g_first ||
        !s->g_queue || !s->g_mdist || !s->g_mfirst || !s->g_mqueue || !s->g_owners || !s->g_cover ||
        !s->g_share_act)
        return POLIS_ERR_NOMEM;
    for (int32_t j = 0; j < n; j++) s->g_share_act[j] = -1;
    for (int32_t j = 0; j < J; j++) {
        const double *v = s->value + (size_t)j * (size_t)R;
        uint8_t *useful = s->g_useful + (size_t)j * (size_t)R;
        for (int32_t r = 0; r < R; r++) useful[r] = v[r] > 0;
        for (int32_t k = 0; k < K; k++) {
            double g = recipe_gain(s, j, k);
            s->g_gain[(size_t)j * (size_t)K + (size_t)k] = g;
            if (g <= 0) continue;
            const soc_recipe *rc = &s->rec[k];
            for (int32_t i = 0; i < rc->n_in; i++) useful[s->amounts[rc->in + i].res] = 1;
        }
    }
    polis_status st = h->hook(s->ctx, POLIS_PHASE_RESET, 0, on_reset, s);
    if (st || (st = h->policy(s->ctx, "greedy", greedy_policy, s)) ||
        (st = h->policy(s->ctx, "greedy_shared", greedy_shared_policy, s)))
        return st;
    return h->policy(s->ctx, "greedy_map", greedy_map_policy, s);
}

/* Whether one of the n agents `who` sees resource (idx < R) or recipe (R + k); who NULL:
 * no filter. */
static bool shown(const soc *s, const int32_t *who, int32_t n, int32_t idx)
{
    if (!who) return true;
    for (int32_t i = 0; i < n; i++)
        if (s->seen[(size_t)who[i] * (size_t)(s->R + s->K) + (size_t)idx]) return true;
    return false;
}

/* What cell `cell` offers the agent: the value of the best thing it could do standing there
 * (run the station's recipe, or pick a pile), 0 if nothing; *action the action. With `who`,
 * only piles and stations one of those n agents sees count (the owners of the shared windows
 * holding the cell). */
static double offer(const soc *s, int32_t agent, int32_t cell, const int32_t *who, int32_t n,
                    int32_t *action)
{
    int32_t job = s->agent_job[agent];
    double best = 0;
    int32_t k = *soc_layer(s, s->L_recipes, cell) - 1;
    if (k >= 0 && soc_can_run(s, agent, k) && shown(s, who, n, s->R + k)) {
        double g = s->g_gain[(size_t)job * (size_t)s->K + (size_t)k];
        if (g > 0) {
            best = g;
            *action = s->act_produce;
        }
    }
    if (!s->kinds[cell]) return best;
    const int32_t *pile = s->piles + (size_t)cell * (size_t)s->R;
    const uint8_t *useful = s->g_useful + (size_t)job * (size_t)s->R;
    for (int32_t r = 0; r < s->R; r++) {
        if (!pile[r] || !useful[r] || !soc_can_pick(s, agent, r) || !shown(s, who, n, r)) continue;
        /* An input worth nothing by itself still leads somewhere: rank it just above 0. */
        double v = soc_unit_value(s, agent, r);
        if (v <= 0) v = 1e-9;
        if (v > best) {
            best = v;
            *action = s->act_pick[r];
        }
    }
    return best;
}

static bool blocked(const soc *s, int32_t x, int32_t y)
{
    return *soc_layer(s, s->L_blocks, y * s->W + x) != 0;
}

void soc_bfs_run(const soc_bfs *b, int32_t start)
{
    int32_t head = 0, tail = 0;
    b->dist[start] = 0;
    b->first[start] = -1;
    b->queue[tail++] = start;
    while (head < tail) {
        int32_t w = b->queue[head++], d = b->dist[w];
        if (b->visit && b->visit(b->ud, w, d, b->first[w])) return;
        for (int32_t dir = 0; dir < 4; dir++) {
            int32_t nw = b->step(b->ud, w, dir);
            if (nw < 0 || b->dist[nw] >= 0) continue;
            b->dist[nw] = d + 1;
            b->first[nw] = (int8_t)(d == 0 ? dir : b->first[w]);
            b->queue[tail++] = nw;
        }
    }
}

/* The greedy search's nodes are the cells of the agent's window, w = i * B + j (i along x,
 * j along y, the agent at (fh, fv)): a window wider than the map holds a cell twice, as the
 * observation does. */
typedef struct win_search {
    soc *s;
    int32_t agent, fh, fv, B, rows, cols;
    int32_t best_dir, best_dist;
    double best;
} win_search;

static int32_t win_step(void *ud, int32_t w, int32_t dir)
{
    const win_search *q = ud;
    int32_t ni = w / q->B + DX[dir], nj = w % q->B + DY[dir];
    if (ni < 0 || ni >= q->rows || nj < 0 || nj >= q->cols) return -1;
    const soc *s = q->s;
    int32_t x = soc_wrap(s->ax[q->agent] + ni - q->fh, s->W),
            y = soc_wrap(s->ay[q->agent] + nj - q->fv, s->H);
    return blocked(s, x, y) ? -1 : ni * q->B + nj;
}

/* The nearest cell with an offer wins; among cells at its distance, the best offer. */
static bool win_visit(void *ud, int32_t w, int32_t d, int32_t first)
{
    win_search *q = ud;
    if (q->best_dist >= 0 && d > q->best_dist) return true;
    if (d == 0) return false;
    const soc *s = q->s;
    int32_t x = soc_wrap(s->ax[q->agent] + w / q->B - q->fh, s->W),
            y = soc_wrap(s->ay[q->agent] + w % q->B - q->fv, s->H);
    int32_t act = 0;
    double v = offer(s, q->agent, y * s->W + x, NULL, 0, &act);
    if (v > q->best) {
        q->best = v;
        q->best_dir = first;
        q->best_dist = d;
    }
    return false;
}

/* Breadth-first search over the agent's window; returns the first move towards the nearest
 * cell with an offer, or -1 when the window offers nothing reachable. */
static int32_t towards_target(soc *s, int32_t agent)
{
    const soc_job *job = &s->jobs[s->agent_job[agent]];
    win_search q = {.s = s,
                    .agent = agent,
                    .fh = job->fov_h,
                    .fv = job->fov_v,
                    .B = 2 * s->g_win_v + 1,
                    .rows = 2 * job->fov_h + 1,
                    .cols = 2 * job->fov_v + 1,
                    .best_dir = -1,
                    .best_dist = -1,
                    .best = 0};
    for (int32_t i = 0; i < q.rows; i++)
        for (int32_t j = 0; j < q.cols; j++) s->g_dist[i * q.B + j] = -1;
    soc_bfs b = {.dist = s->g_dist,
                 .first = s->g_first,
                 .queue = s->g_queue,
                 .step = win_step,
                 .visit = win_visit,
                 .ud = &q};
    soc_bfs_run(&b, q.fh * q.B + q.fv);
    return q.best_dir;
}

static int32_t explore(soc *s, int32_t agent)
{
    int32_t x = s->ax[agent], y = s->ay[agent];
    int32_t dir = s->g_heading[agent];
    if (dir >= 0 && s->g_left[agent] > 0 &&
        !blocked(s, soc_wrap(x + DX[dir], s->W), soc_wrap(y + DY[dir], s->H))) {
        s->g_left[agent]--;
        return dir;
    }
    int32_t open[4], n = 0;
    for (int32_t d = 0; d < 4; d++)
        if (d != dir && !blocked(s, soc_wrap(x + DX[d], s->W), soc_wrap(y + DY[d], s->H)))
            open[n++] = d;
    if (n == 0) {
        s->g_heading[agent] = -1;
        return -1;
    }
    polis_rng *rng = s->h->policy_rng(s->ctx);
    dir = open[polis_rng_below(rng, (uint32_t)n)];
    s->g_heading[agent] = (int8_t)dir;
    s->g_left[agent] = (int16_t)(3 + polis_rng_below(rng, 8));
    return dir;
}

/* ---- greedy_shared and greedy_map: the search over the whole map ---------------------------- */

typedef struct map_search {
    soc *s;
    int32_t agent, n_owners; /* n_owners 0: every cell counts (greedy_map) */
    int32_t best_dir, best_dist;
    double best;
} map_search;

static int32_t map_step(void *ud, int32_t cell, int32_t dir)
{
    const soc *s = ((const map_search *)ud)->s;
    int32_t x = soc_wrap(cell % s->W + DX[dir], s->W), y = soc_wrap(cell / s->W + DY[dir], s->H);
    return blocked(s, x, y) ? -1 : y * s->W + x;
}

/* The distance between a and b on a ring of n cells. */
static int32_t ring(int32_t a, int32_t b, int32_t n)
{
    int32_t d = a > b ? a - b : b - a;
    return d < n - d ? d : n - d;
}

static bool map_visit(void *ud, int32_t cell, int32_t d, int32_t first)
{
    map_search *q = ud;
    if (q->best_dist >= 0 && d > q->best_dist) return true;
    if (d == 0) return false;
    soc *s = q->s;
    const int32_t *who = NULL;
    int32_t n = 0, x = cell % s->W, y = cell / s->W;
    if (q->n_owners) {
        for (int32_t i = 0; i < q->n_owners; i++) {
            int32_t o = s->g_owners[i];
            const soc_job *j = &s->jobs[s->agent_job[o]];
            if (ring(x, s->ax[o], s->W) <= j->fov_h && ring(y, s->ay[o], s->H) <= j->fov_v)
                s->g_cover[n++] = o;
        }
        if (n == 0) return false;
        who = s->g_cover;
    }
    int32_t act = 0;
    double v = offer(s, q->agent, cell, who, n, &act);
    if (v > q->best) {
        q->best = v;
        q->best_dir = first;
        q->best_dist = d;
    }
    return false;
}

/* Breadth-first search over the map; the first move towards the nearest cell with an offer
 * (among the cells the agent's observation shows, for G_SHARED), or -1. */
static int32_t towards_target_map(soc *s, int32_t agent, g_scope scope)
{
    map_search q = {.s = s, .agent = agent, .best_dir = -1, .best_dist = -1};
    if (scope == G_SHARED) {
        s->g_owners[0] = agent;
        q.n_owners = 1;
        if (s->social && s->n_agents > 1) {
            int32_t m = s->social->sharers(s->social->self, agent, POLIS_SOCIAL_SHARE_MAP,
                                           s->g_owners + 1, s->n_agents - 1);
            q.n_owners += m < 0 ? 0 : m > s->n_agents - 1 ? s->n_agents - 1 : m;
        }
    }
    for (int32_t c = 0; c < s->cells; c++) s->g_mdist[c] = -1;
    soc_bfs b = {.dist = s->g_mdist,
                 .first = s->g_mfirst,
                 .queue = s->g_mqueue,
                 .step = map_step,
                 .visit = map_visit,
                 .ud = &q};
    soc_bfs_run(&b, s->ay[agent] * s->W + s->ax[agent]);
    return q.best_dir;
}

polis_status soc_greedy_action(soc *s, int32_t agent, int32_t *out_action)
{
    return greedy_scoped(s, agent, G_WINDOW, out_action);
}

static polis_status greedy_scoped(soc *s, int32_t agent, g_scope scope, int32_t *out_action)
{
    *out_action = 0;
    if (!s->gcells || agent < 0 || agent >= s->n_agents) return POLIS_OK;
    const polis_io *io = s->h->io(s->ctx);
    const uint8_t *mask = io->masks + (size_t)agent * (size_t)io->n_actions;
    int32_t here = s->ay[agent] * s->W + s->ax[agent], action = 0;
    if (offer(s, agent, here, NULL, 0, &action) > 0) {
        *out_action = mask[action] ? action : 0;
        return POLIS_OK;
    }
    int32_t dir =
        scope == G_WINDOW ? towards_target(s, agent) : towards_target_map(s, agent, scope);
    if (dir >= 0)
        s->g_heading[agent] = -1;
    else
        dir = explore(s, agent);
    if (dir >= 0 && mask[s->act_move[dir]]) *out_action = s->act_move[dir];
    return POLIS_OK;
}

/* ---- random_ada: AdaSociety's random baseline ---------------------------------------------- */

/* Whether AdaSociety's masks offered action k (k > 0) to the agent; `physical`: its moves are
 * legal now. */
static bool ada_offered(const soc *s, const uint8_t *row, bool physical, int32_t agent, int32_t k)
{
    int32_t i = k - s->ada_lo;
    if (!physical || i < 0 || i >= s->ada_n || s->ada_what[i] < 0) return row[k] != 0;
    return soc_ada_legal(s, agent, s->ada_what[i]);
}

/* Uniform over what AdaSociety's task layer offered (spec §14), on polis's rules:
 *   - society's actions by AdaSociety's physical mask (soc_ada_legal): produce on a station
 *     the agent sees whenever the results fit, inputs held or not, picks without the total
 *     `size`;
 *   - every other plugin's action (the social families, Contract's choose_group, Negotiation's
 *     requests and proposals) as the current mask says;
 *   - noop: in a physical stage (the agent's moves are legal: society never masks them, and
 *     Contract's and Negotiation's stage rules mask every one of society's actions) it is one
 *     of the choices, as AdaSociety's no_act always was there; in a stage only when nothing
 *     else is legal (AdaSociety's Contract mover could only choose a group, and its
 *     Negotiation mask enabled no_act only when it was otherwise empty).
 * A produce without the inputs is masked in polis, so it plays as a no-op flagged illegal:
 * AdaSociety's env did nothing with it either. Draws come from the policy generator. */
static polis_status random_ada_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    const soc *s = ud;
    const polis_io *io = s->h->io(ctx);
    int32_t n = io->n_actions;
    const uint8_t *row = io->masks + (size_t)agent * (size_t)n;
    bool physical = row[s->act_move[0]] != 0;
    int32_t first = physical ? 0 : 1, count = physical ? 1 : 0;
    for (int32_t k = 1; k < n; k++) count += ada_offered(s, row, physical, agent, k);
    *out = 0;
    if (count == 0) return POLIS_OK;
    uint32_t pick = polis_rng_below(s->h->policy_rng(ctx), (uint32_t)count);
    for (int32_t k = first; k < n; k++)
        if ((k == 0 || ada_offered(s, row, physical, agent, k)) && pick-- == 0) {
            *out = k;
            break;
        }
    return POLIS_OK;
}

polis_status soc_register_random_ada(soc *s)
{
    int32_t lo = s->act_move[0], hi = s->act_move[0];
#define SPAN(id) (lo = (id) < lo ? (id) : lo, hi = (id) > hi ? (id) : hi)
    for (int d = 0; d < 4; d++) SPAN(s->act_move[d]);
    SPAN(s->act_produce);
    for (int32_t r = 0; r < s->R; r++) SPAN(s->act_pick[r]), SPAN(s->act_dump[r]);
#undef SPAN
    s->ada_lo = lo;
    s->ada_n = hi - lo + 1;
    if (!(s->ada_what = soc_alloc(s, sizeof *s->ada_what * (size_t)s->ada_n)))
        return POLIS_ERR_NOMEM;
    for (int32_t i = 0; i < s->ada_n; i++) s->ada_what[i] = -1;
    for (int d = 0; d < 4; d++) s->ada_what[s->act_move[d] - lo] = SOC_ADA_MOVE;
    s->ada_what[s->act_produce - lo] = SOC_ADA_PRODUCE;
    for (int32_t r = 0; r < s->R; r++) {
        s->ada_what[s->act_pick[r] - lo] = SOC_ADA_PICK + r;
        s->ada_what[s->act_dump[r] - lo] = SOC_ADA_PICK + s->R + r;
    }
    return s->h->policy(s->ctx, "random_ada", random_ada_policy, s);
}
