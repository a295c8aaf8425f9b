/*
 * hot_potato — an out-of-tree polis plugin, built against an installed polis with
 * find_package(polis) and polis_add_plugin().
 *
 * Rules:
 *   - At reset a random agent holds the potato and its fuse is set to `fuse` steps.
 *   - Action "pass" (legal only for the holder) hands it to the next agent in id order.
 *     Agents act in id order, so a potato can travel several hands in one step.
 *   - Every step the fuse burns down by one (WORLD phase). Whoever holds the potato at the
 *     end of a step pays `hold_cost`; when the fuse reaches zero the holder pays `penalty`
 *     as well and the episode terminates for everyone.
 *   - Observation: "holding" (u8, 1 if this agent holds the potato) and "fuse" (i32, steps
 *     left).
 *   - Events: "potato.passed" {from, to} and "potato.exploded" {holder}.
 *
 * The plugin touches the engine only through the host table: it never links libpolis.
 */
#include <stddef.h>

#include <polis/kit.h>

typedef struct hp_params {
    int64_t fuse;
    double penalty;
    double hold_cost;
} hp_params;

typedef struct hp_passed {
    int32_t from, to;
} hp_passed;

typedef struct hp_exploded {
    int32_t holder;
} hp_exploded;

typedef struct hot_potato {
    const polis_host *h;
    hp_params p;
    int32_t n_agents;
    int32_t holder;
    int64_t fuse_left;
    bool exploded;
    int32_t ev_passed, ev_exploded;
} hot_potato;

static bool pass_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    const hot_potato *hp = ud;
    return agent == hp->holder && !hp->exploded;
}

static polis_status pass(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    hot_potato *hp = ud;
    /* The mask was built before other agents acted this step; re-check at resolution. */
    if (agent != hp->holder || hp->exploded) return POLIS_ERR_ACTION;
    hp_passed ev = {agent, (agent + 1) % hp->n_agents};
    hp->holder = ev.to;
    return hp->h->publish(ctx, hp->ev_passed, &ev, sizeof ev);
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    hot_potato *hp = ud;
    hp->holder = (int32_t)polis_rng_below(hp->h->rng(ctx), (uint32_t)hp->n_agents);
    hp->fuse_left = hp->p.fuse;
    hp->exploded = false;
    return POLIS_OK;
}

static polis_status on_world(polis_ctx *ctx, void *ud)
{
    hot_potato *hp = ud;
    if (--hp->fuse_left > 0) return POLIS_OK;
    hp->exploded = true;
    hp_exploded ev = {hp->holder};
    return hp->h->publish(ctx, hp->ev_exploded, &ev, sizeof ev);
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    hot_potato *hp = ud;
    if (!hp->exploded) return POLIS_OK;
    const polis_io *io = hp->h->io(ctx);
    for (int32_t a = 0; a < hp->n_agents; a++) io->terminations[a] = 1;
    return POLIS_OK;
}

static polis_status reward_potato(polis_ctx *ctx, void *ud, float *out)
{
    hot_potato *hp = ud;
    out[hp->holder] = (float)-(hp->p.hold_cost + (hp->exploded ? hp->p.penalty : 0.0));
    return POLIS_OK;
}

static void write_holding(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    const hot_potato *hp = ud;
    *(uint8_t *)dst = agent == hp->holder;
}

static void write_fuse(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    const hot_potato *hp = ud;
    *(int32_t *)dst = (int32_t)hp->fuse_left;
}

static polis_status hp_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    hot_potato *hp = h->alloc(ctx, sizeof *hp);
    if (!hp) return POLIS_ERR_NOMEM;
    *state = hp;
    hp->h = h;
    hp->p = *(const hp_params *)params;
    hp->n_agents = h->n_agents(ctx);

    polis_status st;
    polis_action_def pass_def = {.name = "pass",
                                 .doc = "hand the potato to the next agent (holder only)",
                                 .handler = pass,
                                 .legal = pass_legal,
                                 .ud = hp};
    if ((st = h->action(ctx, &pass_def, NULL))) return st;

    polis_obs_def holding = {.name = "holding",
                             .doc = "1 if this agent holds the potato",
                             .dtype = POLIS_DTYPE_U8,
                             .ndim = 1,
                             .shape = {1},
                             .write = write_holding,
                             .ud = hp};
    polis_obs_def fuse = {.name = "fuse",
                          .doc = "steps until the potato explodes",
                          .dtype = POLIS_DTYPE_I32,
                          .ndim = 1,
                          .shape = {1},
                          .write = write_fuse,
                          .ud = hp};
    if ((st = h->observation(ctx, &holding, NULL))) return st;
    if ((st = h->observation(ctx, &fuse, NULL))) return st;
    if ((st = h->reward(ctx, "potato", reward_potato, hp))) return st;

    static const polis_field_def passed_fields[] = {{"from", POLIS_FIELD_I32},
                                                    {"to", POLIS_FIELD_I32}};
    static const polis_field_def exploded_fields[] = {{"holder", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "potato.passed", passed_fields, 2, &hp->ev_passed))) return st;
    if ((st = h->event_type(ctx, "potato.exploded", exploded_fields, 1, &hp->ev_exploded)))
        return st;

    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, hp))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_WORLD, 0, on_world, hp))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, hp))) return st;
    return POLIS_OK;
}

static void hp_destroy(polis_ctx *ctx, void *state)
{
    hot_potato *hp = state;
    if (hp) hp->h->free(ctx, hp, sizeof *hp);
}

static const polis_param_def hp_param_table[] = {
    POLIS_P_INT(hp_params, "fuse", fuse, 1, 1000000, 20,
                "steps from reset until the potato explodes"),
    POLIS_P_DOUBLE(hp_params, "penalty", penalty, 0, 1e6, 10.0,
                   "paid by the holder when the potato explodes"),
    POLIS_P_DOUBLE(hp_params, "hold_cost", hold_cost, 0, 1e6, 0.1,
                   "paid by the holder at the end of every step"),
};

static const polis_plugin_desc hp_desc = {
    POLIS_DESC_HEAD("hot_potato", 0),
    .version = "1.0.0",
    .doc = "pass the potato before its fuse runs out",
    POLIS_DESC_PARAMS(hp_param_table, hp_params),
    .init = hp_init,
    .destroy = hp_destroy,
};

POLIS_PLUGIN(hp_desc)
