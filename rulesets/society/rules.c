/*
 * rules.c — the physical actions, their legality (the action masks), simultaneous moves with
 * AdaSociety's collision resolution (spec §8), rewards and the bus events.
 *
 * Within a step (spec §6): agents act in the kernel's order (id order by default); picks,
 * dumps and produces change the world at once, at the agent's cell at the start of the step;
 * a move only records a target. RESOLVE then resolves every move together and commits them.
 * Nothing here allocates: every array was sized at start.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* move_up, move_down, move_left, move_right: AdaSociety's axes (x is vertical). */
static const int32_t DX[4] = {-1, 1, 0, 0};
static const int32_t DY[4] = {0, 0, -1, 1};
static const char *const MOVE_NAMES[4] = {"move_up", "move_down", "move_left", "move_right"};
static const char *const MOVE_DOCS[4] = {"move up: x - 1 (wraps)", "move down: x + 1 (wraps)",
                                         "move left: y - 1 (wraps)", "move right: y + 1 (wraps)"};

static inline int32_t cell_of(const soc *s, int32_t agent)
{
    return s->ay[agent] * s->W + s->ax[agent];
}

static inline int32_t *inv_of(const soc *s, int32_t agent)
{
    return s->inv + (size_t)agent * (size_t)s->R;
}

bool soc_meets(const soc *s, int32_t agent, int32_t req, int32_t n_req)
{
    const int32_t *inv = inv_of(s, agent);
    for (int32_t i = 0; i < n_req; i++) {
        const soc_amount *a = &s->amounts[req + i];
        if (a->res < 0 || inv[a->res] < a->n) return false;
    }
    return true;
}

/* Requirements are checked once per inventory change, not per cell seen or mask written. */
void soc_refresh_seen(soc *s, int32_t agent)
{
    uint8_t *row = s->seen + (size_t)agent * (size_t)(s->R + s->K);
    for (int32_t r = 0; r < s->R; r++) row[r] = soc_meets(s, agent, s->res[r].req, s->res[r].n_req);
    for (int32_t k = 0; k < s->K; k++)
        row[s->R + k] = soc_meets(s, agent, s->rec[k].req, s->rec[k].n_req);
    soc_seen_bits(s, agent);
}

bool soc_resource_visible(const soc *s, int32_t agent, int32_t r)
{
    return s->seen[(size_t)agent * (size_t)(s->R + s->K) + (size_t)r];
}

bool soc_recipe_visible(const soc *s, int32_t agent, int32_t k)
{
    return s->seen[(size_t)agent * (size_t)(s->R + s->K) + (size_t)(s->R + k)];
}

double soc_unit_value(const soc *s, int32_t agent, int32_t r)
{
    return s->value[(size_t)s->agent_job[agent] * (size_t)s->R + (size_t)r];
}

static inline int32_t cap_of(const soc *s, int32_t agent, int32_t r)
{
    return s->cap[(size_t)s->agent_job[agent] * (size_t)s->R + (size_t)r];
}

void soc_pile_add(soc *s, int32_t cell, int32_t r, int32_t delta)
{
    int32_t *p = &s->piles[(size_t)cell * (size_t)s->R + (size_t)r];
    int32_t before = *p;
    *p += delta;
    if (before == 0 && *p > 0) s->kinds[cell]++;
    if (before > 0 && *p == 0) s->kinds[cell]--;
    soc_obs_pile_changed(s, cell);
    soc_scene_pile_changed(s, cell);
}

/* ---- pick, dump, produce ------------------------------------------------------------------ */

bool soc_can_pick(const soc *s, int32_t agent, int32_t r)
{
    return soc_resource_visible(s, agent, r) && inv_of(s, agent)[r] < cap_of(s, agent, r) &&
           s->inv_total[agent] < s->jobs[s->agent_job[agent]].size;
}

static bool pick_ok(const soc *s, int32_t agent, int32_t r)
{
    int32_t cell = cell_of(s, agent);
    return s->piles[(size_t)cell * (size_t)s->R + (size_t)r] > 0 && soc_can_pick(s, agent, r);
}

static bool pick_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t r)
{
    return pick_ok(ud, agent, r);
}

static polis_status pick(polis_ctx *ctx, void *ud, int32_t agent, int32_t r)
{
    soc *s = ud;
    if (!pick_ok(s, agent, r)) return POLIS_ERR_ACTION;
    int32_t cell = cell_of(s, agent);
    soc_pile_add(s, cell, r, -1);
    inv_of(s, agent)[r]++;
    s->inv_total[agent]++;
    s->pending[agent] += soc_unit_value(s, agent, r);
    soc_refresh_seen(s, agent);
    soc_ev_picked ev = {agent,        r, s->ax[agent],
                        s->ay[agent], 1, s->piles[(size_t)cell * (size_t)s->R + (size_t)r]};
    return s->h->publish(ctx, s->ev_picked, &ev, sizeof ev);
}

static bool dump_ok(const soc *s, int32_t agent, int32_t r)
{
    int32_t cell = cell_of(s, agent);
    return inv_of(s, agent)[r] > 0 && s->piles[(size_t)cell * (size_t)s->R + (size_t)r] < INT32_MAX;
}

static bool dump_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t r)
{
    return dump_ok(ud, agent, r);
}

static polis_status dump(polis_ctx *ctx, void *ud, int32_t agent, int32_t r)
{
    soc *s = ud;
    if (!dump_ok(s, agent, r)) return POLIS_ERR_ACTION;
    int32_t cell = cell_of(s, agent);
    inv_of(s, agent)[r]--;
    s->inv_total[agent]--;
    soc_pile_add(s, cell, r, 1);
    s->pending[agent] -= soc_unit_value(s, agent, r);
    soc_refresh_seen(s, agent);
    soc_ev_dumped ev = {agent,        r, s->ax[agent],
                        s->ay[agent], 1, s->piles[(size_t)cell * (size_t)s->R + (size_t)r]};
    return s->h->publish(ctx, s->ev_dumped, &ev, sizeof ev);
}

/* Whether every result of recipe rc fits the agent's per-resource capacities (an input that
 * is also an output counts with its net change, decision 26). */
static bool results_fit(const soc *s, int32_t agent, const soc_recipe *rc)
{
    const int32_t *inv = inv_of(s, agent);
    for (int32_t i = 0; i < rc->n_out; i++) {
        const soc_amount *a = &s->amounts[rc->out + i];
        int64_t after = (int64_t)inv[a->res] + a->n;
        for (int32_t j = 0; j < rc->n_in; j++)
            if (s->amounts[rc->in + j].res == a->res) after -= s->amounts[rc->in + j].n;
        if (after > cap_of(s, agent, a->res)) return false;
    }
    return true;
}

/* The paper: recipes are "observed and executed" by agents meeting the requirements; the
 * inputs must be held and every result fit the capacities (per resource and in total). */
bool soc_can_run(const soc *s, int32_t agent, int32_t k)
{
    if (!soc_recipe_visible(s, agent, k)) return false;
    const soc_recipe *rc = &s->rec[k];
    const int32_t *inv = inv_of(s, agent);
    int64_t net_total = 0;
    for (int32_t i = 0; i < rc->n_in; i++) {
        const soc_amount *a = &s->amounts[rc->in + i];
        if (inv[a->res] < a->n) return false;
        net_total -= a->n;
    }
    if (!results_fit(s, agent, rc)) return false;
    for (int32_t i = 0; i < rc->n_out; i++) net_total += s->amounts[rc->out + i].n;
    return s->inv_total[agent] + net_total <= s->jobs[s->agent_job[agent]].size;
}

/* The recipe of the station on the agent's cell if it can run it, or -1. */
static int32_t produce_recipe(const soc *s, int32_t agent)
{
    int32_t k = *soc_layer(s, s->L_recipes, cell_of(s, agent)) - 1;
    return k >= 0 && soc_can_run(s, agent, k) ? k : -1;
}

static bool produce_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return produce_recipe(ud, agent) >= 0;
}

/* The mask bytes of produce, pick_<r> and dump_<r> (registered in that order) in one pass
 * over the agent's cell and inventory (a legality group, the "actions" host API): row[0]
 * produce, row[1 + r] pick, row[1 + R + r] dump, what produce_legal, pick_legal and
 * dump_legal answer. */
static void produce_pick_dump_row(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    const soc *s = ud;
    const int32_t R = s->R;
    const size_t job = (size_t)s->agent_job[agent];
    const int32_t cell = cell_of(s, agent);
    const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
    const int32_t *inv = inv_of(s, agent);
    const int32_t *cap = s->cap + job * (size_t)R;
    const uint8_t *seen = s->seen + (size_t)agent * (size_t)(R + s->K);
    const bool room = s->inv_total[agent] < s->jobs[job].size;
    (void)ctx;
    row[0] = produce_recipe(s, agent) >= 0;
    /* no pile on the cell: nothing to pick; an empty inventory (inventories are never
     * negative, inv_total is their sum): nothing to dump */
    if (s->kinds[cell])
        for (int32_t r = 0; r < R; r++)
            row[1 + r] = pile[r] > 0 && room && seen[r] && inv[r] < cap[r];
    else
        memset(row + 1, 0, (size_t)R);
    if (s->inv_total[agent] > 0)
        for (int32_t r = 0; r < R; r++) row[1 + R + r] = inv[r] > 0 && pile[r] < INT32_MAX;
    else
        memset(row + 1 + R, 0, (size_t)R);
}

static polis_status produce(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    soc *s = ud;
    int32_t k = produce_recipe(s, agent);
    if (k < 0) return POLIS_ERR_ACTION;
    const soc_recipe *rc = &s->rec[k];
    int32_t *inv = inv_of(s, agent);
    for (int32_t i = 0; i < rc->n_in; i++) {
        const soc_amount *a = &s->amounts[rc->in + i];
        inv[a->res] -= a->n;
        s->inv_total[agent] -= a->n;
        s->pending[agent] -= a->n * soc_unit_value(s, agent, a->res);
    }
    for (int32_t i = 0; i < rc->n_out; i++) {
        const soc_amount *a = &s->amounts[rc->out + i];
        inv[a->res] += a->n;
        s->inv_total[agent] += a->n;
        s->pending[agent] += a->n * soc_unit_value(s, agent, a->res);
    }
    soc_refresh_seen(s, agent);
    soc_ev_produced ev = {agent, k, s->ax[agent], s->ay[agent]};
    return s->h->publish(ctx, s->ev_produced, &ev, sizeof ev);
}

/* ---- moves and collision resolution (spec §8) -------------------------------------------- */

static polis_status move(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    soc *s = ud;
    int32_t x = soc_wrap(s->ax[agent] + DX[dir], s->W), y = soc_wrap(s->ay[agent] + DY[dir], s->H);
    s->tgt[agent] = y * s->W + x;
    s->dir[agent] = (uint8_t)dir;
    s->moving[agent] = 1;
    s->wants[agent] = 1;
    return POLIS_OK;
}

polis_status soc_on_begin(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    memset(s->moving, 0, (size_t)s->n_agents);
    memset(s->wants, 0, (size_t)s->n_agents);
    return POLIS_OK;
}

static inline void undo(soc *s, int32_t a, uint8_t why)
{
    s->tgt[a] = cell_of(s, a);
    s->moving[a] = 0;
    s->why[a] = why;
}

static inline void block(soc *s, int32_t cell) { s->blk_epoch[cell] = s->epoch; }

static inline bool is_blocked(const soc *s, int32_t cell) { return s->blk_epoch[cell] == s->epoch; }

static inline bool has_claims(const soc *s, int32_t cell)
{
    return s->claim_epoch[cell] == s->epoch && s->claim_len[cell] > 0;
}

static void claim(soc *s, int32_t cell, int32_t a)
{
    if (s->claim_epoch[cell] != s->epoch) {
        s->claim_epoch[cell] = s->epoch;
        s->claim_head[cell] = s->claim_tail[cell] = -1;
        s->claim_len[cell] = 0;
        s->claim_keys[s->n_claim_keys++] = cell;
    }
    s->claim_next[a] = -1;
    if (s->claim_tail[cell] >= 0)
        s->claim_next[s->claim_tail[cell]] = a;
    else
        s->claim_head[cell] = a;
    s->claim_tail[cell] = a;
    s->claim_len[cell]++;
}

/* Everyone who wanted to move into `cell` stays, and so, recursively, does everyone who
 * wanted to move into their cells. Each claim list is popped once, so this is linear. */
static void cascade(soc *s, int32_t cell)
{
    int32_t top = 0;
    s->stack[top++] = cell;
    while (top > 0) {
        int32_t c = s->stack[--top];
        if (!has_claims(s, c)) continue;
        int32_t q = s->claim_head[c];
        s->claim_len[c] = -1; /* popped */
        while (q >= 0) {
            int32_t next = s->claim_next[q];
            undo(s, q, SOC_BLOCKED_OCCUPIED);
            int32_t p = cell_of(s, q);
            block(s, p);
            s->stack[top++] = p;
            q = next;
        }
    }
}

static void resolve_moves(soc *s, polis_rng *rng)
{
    if (++s->epoch == 0) {
        memset(s->blk_epoch, 0, sizeof *s->blk_epoch * (size_t)s->cells);
        memset(s->claim_epoch, 0, sizeof *s->claim_epoch * (size_t)s->cells);
        s->epoch = 1;
    }
    s->n_claim_keys = 0;
    for (int32_t a = 0; a < s->n_agents; a++) {
        int32_t p = cell_of(s, a);
        if (!s->moving[a]) s->tgt[a] = p;
        if (s->moving[a] && *soc_layer(s, s->L_blocks, s->tgt[a])) undo(s, a, SOC_BLOCKED_TERRAIN);
        if (s->moving[a]) {
            if (is_blocked(s, s->tgt[a])) {
                undo(s, a, SOC_BLOCKED_OCCUPIED);
                block(s, p);
                cascade(s, p);
            } else {
                claim(s, s->tgt[a], a);
            }
        } else {
            block(s, p);
            cascade(s, p);
        }
    }
    for (int32_t i = 0; i < s->n_claim_keys; i++) {
        int32_t c = s->claim_keys[i];
        if (!has_claims(s, c) || s->claim_len[c] == 1) continue;
        int32_t pickn = (int32_t)polis_rng_below(rng, (uint32_t)s->claim_len[c]);
        int32_t n_losers = 0, winner = -1, k = 0;
        for (int32_t q = s->claim_head[c]; q >= 0; q = s->claim_next[q], k++) {
            if (k == pickn)
                winner = q;
            else
                s->losers[n_losers++] = q;
        }
        s->claim_head[c] = s->claim_tail[c] = winner;
        s->claim_next[winner] = -1;
        s->claim_len[c] = 1;
        for (int32_t i2 = 0; i2 < n_losers; i2++) {
            int32_t q = s->losers[i2];
            undo(s, q, SOC_BLOCKED_CONTEST);
            int32_t p = cell_of(s, q);
            block(s, p);
            cascade(s, p);
        }
    }
}

polis_status soc_on_resolve(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    resolve_moves(s, s->h->rng(ctx));
    /* Commit: vacate every mover's cell first, so swaps and cycles land cleanly. */
    for (int32_t a = 0; a < s->n_agents; a++)
        if (s->moving[a]) *soc_layer(s, s->L_agents, cell_of(s, a)) = 0;
    for (int32_t a = 0; a < s->n_agents; a++) {
        if (!s->moving[a]) continue;
        s->ax[a] = s->tgt[a] % s->W;
        s->ay[a] = s->tgt[a] / s->W;
        *soc_layer(s, s->L_agents, s->tgt[a]) = a + 1;
    }
    for (int32_t a = 0; a < s->n_agents; a++) {
        if (!s->wants[a]) continue;
        polis_status st;
        if (s->moving[a]) {
            int32_t fx = soc_wrap(s->ax[a] - DX[s->dir[a]], s->W);
            int32_t fy = soc_wrap(s->ay[a] - DY[s->dir[a]], s->H);
            soc_ev_moved ev = {a, fx, fy, s->ax[a], s->ay[a]};
            st = s->h->publish(ctx, s->ev_moved, &ev, sizeof ev);
        } else {
            int32_t tx = soc_wrap(s->ax[a] + DX[s->dir[a]], s->W);
            int32_t ty = soc_wrap(s->ay[a] + DY[s->dir[a]], s->H);
            soc_ev_blocked ev = {a, s->ax[a], s->ay[a], tx, ty, s->why[a]};
            st = s->h->publish(ctx, s->ev_blocked, &ev, sizeof ev);
        }
        if (st) return st;
    }
    return POLIS_OK;
}

/* ---- rewards and the time limit ------------------------------------------------------------ */

/* The change in the value of the inventory, Σ_ρ m·h(ρ)·r̄(ρ) (seeds/000 §2): every unit that
 * came in this step counts its value, every unit that went out counts it negatively. */
polis_status soc_reward(polis_ctx *ctx, void *ud, float *out)
{
    soc *s = ud;
    for (int32_t a = 0; a < s->n_agents; a++) {
        out[a] = (float)s->pending[a];
        s->pending[a] = 0;
    }
    return POLIS_OK;
}

polis_status soc_on_end(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    int64_t t = s->h->tick(ctx) + 1, limit = s->h->max_steps(ctx);
    if (s->max_length > 0 && s->max_length < limit) limit = s->max_length;
    if (t < limit) return POLIS_OK;
    const polis_io *io = s->h->io(ctx);
    for (int32_t a = 0; a < s->n_agents; a++) {
        if (io->terminations[a] || io->truncations[a]) continue;
        io->truncations[a] = 1;
        if (s->p.terminate_at_limit) io->terminations[a] = 1;
    }
    return POLIS_OK;
}

/* ---- changes made by other plugins and scripts --------------------------------------------- */

polis_status soc_give(soc *s, int32_t agent, int32_t r, int32_t delta, char *err, size_t n)
{
    if (!s->gcells) {
        snprintf(err, n, "give: only during reset and step");
        return POLIS_ERR_STATE;
    }
    if (agent < 0 || agent >= s->n_agents || r < 0 || r >= s->R) {
        snprintf(err, n, "give: bad agent %d or resource %d", (int)agent, (int)r);
        return POLIS_ERR_INVALID;
    }
    int64_t after = (int64_t)inv_of(s, agent)[r] + delta;
    int64_t total = s->inv_total[agent] + delta;
    if (after < 0 || after > cap_of(s, agent, r) || total > s->jobs[s->agent_job[agent]].size) {
        snprintf(err, n, "give: agent %d would hold %lld %s (capacity %d, size %lld)", (int)agent,
                 (long long)after, s->res[r].name, (int)cap_of(s, agent, r),
                 (long long)s->jobs[s->agent_job[agent]].size);
        return POLIS_ERR_INVALID;
    }
    inv_of(s, agent)[r] = (int32_t)after;
    s->inv_total[agent] = total;
    s->pending[agent] += delta * soc_unit_value(s, agent, r);
    soc_refresh_seen(s, agent);
    soc_ev_inventory ev = {agent, r, delta, (int32_t)after};
    return s->h->publish(s->ctx, s->ev_inventory, &ev, sizeof ev);
}

polis_status soc_set_pile(soc *s, int32_t x, int32_t y, int32_t r, int32_t amount, char *err,
                          size_t n)
{
    if (!s->gcells) {
        snprintf(err, n, "set_pile: only during reset and step");
        return POLIS_ERR_STATE;
    }
    if (x < 0 || y < 0 || x >= s->W || y >= s->H || r < 0 || r >= s->R || amount < 0) {
        snprintf(err, n, "set_pile: bad cell (%d, %d), resource %d or amount %d", (int)x, (int)y,
                 (int)r, (int)amount);
        return POLIS_ERR_INVALID;
    }
    int32_t cell = y * s->W + x;
    soc_pile_add(s, cell, r, amount - s->piles[(size_t)cell * (size_t)s->R + (size_t)r]);
    soc_ev_pile ev = {x, y, r, amount};
    return s->h->publish(s->ctx, s->ev_pile, &ev, sizeof ev);
}

/* ---- AdaSociety's masks (the random_ada policy) -------------------------------------------- */

/* AdaSociety's task layer masked less than polis (README "Decisions" 4 and 5): produce on a
 * station the agent sees whenever every result fits the per-resource capacities, whether or
 * not it holds the inputs (the env then does nothing); a pick of a pile it sees on its cell
 * while it holds fewer than the capacity; neither checked the total `size`. Moves and dumps
 * are as in polis. */
bool soc_ada_legal(const soc *s, int32_t agent, int32_t what)
{
    const int32_t *inv = inv_of(s, agent);
    int32_t cell = cell_of(s, agent);
    if (what == SOC_ADA_MOVE) return true;
    if (what == SOC_ADA_PRODUCE) {
        int32_t k = *soc_layer(s, s->L_recipes, cell) - 1;
        return k >= 0 && soc_recipe_visible(s, agent, k) && results_fit(s, agent, &s->rec[k]);
    }
    int32_t r = what - SOC_ADA_PICK;
    if (r >= 0 && r < s->R)
        return s->piles[(size_t)cell * (size_t)s->R + (size_t)r] > 0 &&
               soc_resource_visible(s, agent, r) && inv[r] < cap_of(s, agent, r);
    r -= s->R;
    return r >= 0 && r < s->R && dump_ok(s, agent, r);
}

/* ---- registration --------------------------------------------------------------------------- */

bool soc_action_legal(soc *s, int32_t agent, int32_t id)
{
    for (int d = 0; d < 4; d++)
        if (id == s->act_move[d]) return true;
    if (id == s->act_produce) return produce_recipe(s, agent) >= 0;
    for (int32_t r = 0; r < s->R; r++) {
        if (id == s->act_pick[r]) return pick_ok(s, agent, r);
        if (id == s->act_dump[r]) return dump_ok(s, agent, r);
    }
    return false;
}

polis_status soc_register_actions(soc *s)
{
    const polis_host *h = s->h;
    polis_status st;
    for (int32_t d = 0; d < 4; d++) {
        polis_action_def def = {
            .name = MOVE_NAMES[d], .doc = MOVE_DOCS[d], .handler = move, .arg = d, .ud = s};
        if ((st = h->action(s->ctx, &def, &s->act_move[d]))) return st;
    }
    polis_action_def pd = {.name = "produce",
                           .doc = "run the recipe of the station on the agent's cell",
                           .handler = produce,
                           .legal = produce_legal,
                           .ud = s};
    if ((st = h->action(s->ctx, &pd, &s->act_produce))) return st;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t r = 0; r < s->R; r++) {
            char name[SOC_NAME_MAX + 8], doc[160];
            snprintf(name, sizeof name, "%s_%s", pass ? "dump" : "pick", s->res[r].name);
            snprintf(doc, sizeof doc,
                     pass ? "lay one %s from the inventory on the cell"
                          : "take one %s from the pile on the cell",
                     s->res[r].name);
            polis_action_def ad = {.name = name,
                                   .doc = doc,
                                   .handler = pass ? dump : pick,
                                   .legal = pass ? dump_legal : pick_legal,
                                   .arg = r,
                                   .ud = s};
            if ((st = h->action(s->ctx, &ad, pass ? &s->act_dump[r] : &s->act_pick[r]))) return st;
        }
    /* one legality call per agent for all of them, when their ids follow each other (they
     * do: nothing registers in between) */
    for (int32_t r = 0; r < s->R; r++)
        if (s->act_pick[r] != s->act_produce + 1 + r ||
            s->act_dump[r] != s->act_produce + 1 + s->R + r)
            return POLIS_OK;
    const polis_actions_api *api = h->host_api(s->ctx, POLIS_ACTIONS_API, 1);
    if (!api) return POLIS_ERR_PLUGIN;
    return api->legal_rows(s->ctx, s->act_produce, 1 + 2 * s->R, produce_pick_dump_row, s);
}

polis_status soc_register_events(soc *s)
{
    const polis_host *h = s->h;
    polis_status st;
#define F(n)                                                                                       \
    {                                                                                              \
        n, POLIS_FIELD_I32                                                                         \
    }
    static const polis_field_def moved[] = {F("agent"), F("from_x"), F("from_y"), F("x"), F("y")};
    static const polis_field_def blocked[] = {F("agent"), F("x"),    F("y"),
                                              F("to_x"),  F("to_y"), F("reason")};
    static const polis_field_def picked[] = {F("agent"), F("resource"), F("x"),
                                             F("y"),     F("amount"),   F("left")};
    static const polis_field_def dumped[] = {F("agent"), F("resource"), F("x"),
                                             F("y"),     F("amount"),   F("pile")};
    static const polis_field_def produced[] = {F("agent"), F("recipe"), F("x"), F("y")};
    static const polis_field_def inventory[] = {F("agent"), F("resource"), F("delta"), F("amount")};
    static const polis_field_def pile[] = {F("x"), F("y"), F("resource"), F("amount")};
    static const polis_field_def generated[] = {F("blocks"), F("piles"), F("units"), F("stations"),
                                                F("agents")};
#undef F
#define REG(name, fields, id)                                                                      \
    if ((st = h->event_type(s->ctx, name, fields, (int32_t)(sizeof fields / sizeof fields[0]),     \
                            &s->id)))                                                              \
        return st;
    REG("agent.moved", moved, ev_moved)
    REG("agent.blocked", blocked, ev_blocked)
    REG("resource.picked", picked, ev_picked)
    REG("resource.dumped", dumped, ev_dumped)
    REG("recipe.produced", produced, ev_produced)
    REG("inventory.changed", inventory, ev_inventory)
    REG("pile.changed", pile, ev_pile)
    REG("world.generated", generated, ev_generated)
#undef REG
    return POLIS_OK;
}
