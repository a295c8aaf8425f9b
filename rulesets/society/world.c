/*
 * world.c — a new world at every reset (spec §4), every random choice from the env RNG, in
 * this order: random blocks, static pile amounts, random pile cells, random pile amounts,
 * random station cells, random player cells. A uniform sample of k distinct cells out of
 * the candidates is a partial Fisher-Yates shuffle of the candidate list (cells in row-major
 * order); an amount whose min equals its max draws nothing.
 *
 * Candidates (setup.c checked there are enough):
 *   random blocks    free cells of the base map without static content
 *   random piles     non-block cells without a static pile
 *   random stations  non-block cells without a static station
 *   random players   non-block cells without a static player (AdaSociety may put a random
 *                    player on a static one's cell; polis keeps one agent per cell)
 * Piles and stations may share cells with each other and with players, as in AdaSociety.
 */
#include <string.h>

#include "internal.h"

static int32_t candidates(soc *s, uint8_t reserved_mask)
{
    int32_t n = 0;
    for (int32_t c = 0; c < s->cells; c++)
        if (!*soc_layer(s, s->L_blocks, c) && !(s->reserved[c] & reserved_mask))
            s->scratch[n++] = c;
    return n;
}

/* Moves a uniform sample of k of the n candidates to scratch[0..k). */
static void sample(soc *s, polis_rng *rng, int32_t n, int32_t k)
{
    for (int32_t i = 0; i < k; i++) {
        int32_t j = i + (int32_t)polis_rng_below(rng, (uint32_t)(n - i));
        int32_t t = s->scratch[i];
        s->scratch[i] = s->scratch[j];
        s->scratch[j] = t;
    }
}

static int32_t draw(polis_rng *rng, soc_num num)
{
    return num.lo == num.hi ? num.lo : polis_rng_range(rng, num.lo, num.hi);
}

polis_status soc_on_reset(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    const polis_host *h = s->h;
    s->gcells = h->grid(ctx)->cells;
    polis_rng *rng = h->rng(ctx);
    memset(s->piles, 0, sizeof *s->piles * (size_t)s->cells * (size_t)s->R);
    memset(s->kinds, 0, sizeof *s->kinds * (size_t)s->cells);
    soc_ev_generated gen = {0};
    int64_t units = 0;

    for (int32_t c = 0; c < s->cells; c++) *soc_layer(s, s->L_blocks, c) = s->base[c];
    for (int32_t i = 0; i < s->st_blocks.n; i++)
        *soc_layer(s, s->L_blocks, s->st_blocks.v[i].y * s->W + s->st_blocks.v[i].x) = 1;
    int32_t n = candidates(s, SOC_RESERVED_PILE | SOC_RESERVED_STATION | SOC_RESERVED_PLAYER);
    sample(s, rng, n, s->random_blocks);
    for (int32_t i = 0; i < s->random_blocks; i++) *soc_layer(s, s->L_blocks, s->scratch[i]) = 1;
    for (int32_t c = 0; c < s->cells; c++) gen.blocks += *soc_layer(s, s->L_blocks, c) != 0;

    for (int32_t i = 0; i < s->st_piles.n; i++) {
        const soc_place *p = &s->st_piles.v[i];
        int32_t amount = draw(rng, p->num);
        soc_pile_add(s, p->y * s->W + p->x, p->what, amount);
        units += amount;
    }
    n = candidates(s, SOC_RESERVED_PILE);
    sample(s, rng, n, s->rnd_piles.n);
    for (int32_t i = 0; i < s->rnd_piles.n; i++) {
        int32_t amount = draw(rng, s->rnd_piles.v[i].num);
        soc_pile_add(s, s->scratch[i], s->rnd_piles.v[i].what, amount);
        units += amount;
    }
    gen.units = units > INT32_MAX ? INT32_MAX : (int32_t)units; /* saturates, for the event */
    gen.piles = s->st_piles.n + s->rnd_piles.n;

    for (int32_t i = 0; i < s->st_stations.n; i++) {
        const soc_place *p = &s->st_stations.v[i];
        *soc_layer(s, s->L_recipes, p->y * s->W + p->x) = p->what + 1;
    }
    n = candidates(s, SOC_RESERVED_STATION);
    sample(s, rng, n, s->rnd_stations.n);
    for (int32_t i = 0; i < s->rnd_stations.n; i++)
        *soc_layer(s, s->L_recipes, s->scratch[i]) = s->rnd_stations.v[i].what + 1;
    gen.stations = s->st_stations.n + s->rnd_stations.n;

    for (int32_t a = 0; a < s->st_players.n; a++) {
        s->ax[a] = s->st_players.v[a].x;
        s->ay[a] = s->st_players.v[a].y;
    }
    n = candidates(s, SOC_RESERVED_PLAYER);
    sample(s, rng, n, s->rnd_players.n);
    for (int32_t i = 0; i < s->rnd_players.n; i++) {
        int32_t a = s->st_players.n + i;
        s->ax[a] = s->scratch[i] % s->W;
        s->ay[a] = s->scratch[i] / s->W;
    }
    for (int32_t a = 0; a < s->n_agents; a++) {
        *soc_layer(s, s->L_agents, s->ay[a] * s->W + s->ax[a]) = a + 1;
        const int32_t *init = s->init + (size_t)s->agent_job[a] * (size_t)s->R;
        int32_t *inv = s->inv + (size_t)a * (size_t)s->R;
        memcpy(inv, init, sizeof *inv * (size_t)s->R);
        s->inv_total[a] = 0;
        for (int32_t r = 0; r < s->R; r++) s->inv_total[a] += inv[r];
        soc_refresh_seen(s, a);
        /* The initial inventory is the baseline of the reward, not a step-1 gain (spec §11.1
         * QUIRK). */
        s->pending[a] = 0;
        s->wants[a] = s->moving[a] = 0;
    }
    gen.agents = s->n_agents;
    return h->publish(ctx, s->ev_generated, &gen, sizeof gen);
}

/* Runs after every other reset hook: whatever they gave the agents (society.give) is part of
 * the initial state, the baseline of the first reward, not a gain. */
polis_status soc_on_reset_done(polis_ctx *ctx, void *ud)
{
    soc *s = ud;
    for (int32_t a = 0; a < s->n_agents; a++) s->pending[a] = 0;
    return POLIS_OK;
}
