/*
 * engine/vec/ahead.c — the "reset_ahead" host API (polis/plugin.h): the prepare functions a
 * game registers for the costly part of its reset, which a polis_vec's idle workers call
 * for an env's next reset (vec.c, "resets made ahead"; docs/kernel.md, "Resets made ahead").
 *
 * The module keeps what the env's plugins registered, nothing else; the vec decides when to
 * prepare and keeps the env from being reset while a prepare runs. A prepare gets the
 * generator as polis_env_reset will hand it to the RESET hooks: seeded with the reset seed
 * on the env's stream (POLIS__ENV_STREAM), nothing drawn. Whether the game's RESET hook then
 * finds the generator in that state is the game's check, so a module or a script that draws
 * first costs the prepared work, never the episode.
 */
#include <string.h>

#include "core/module.h"
#include "core/registry.h"
#include "vec/internal.h"

#define AHEAD_MAX 4 /* prepare functions per env */

struct polis__ahead {
    int32_t n;
    polis_prepare_fn fn[AHEAD_MAX];
    void *ud[AHEAD_MAX];
    const polis_ctx *owner[AHEAD_MAX];
};

static polis_status ahead_register(polis_ctx *ctx, polis_prepare_fn fn, void *ud)
{
    if (!ctx) return POLIS_ERR_INVALID;
    polis_env *env = ctx->env;
    if (env->state != POLIS__ENV_LOADING) {
        polis__ctx_error(ctx, "reset_ahead.prepare: registration is closed once the env is "
                              "created (register in init or start)");
        return POLIS_ERR_STATE;
    }
    if (!fn) {
        polis__ctx_error(ctx, "reset_ahead.prepare: fn is NULL");
        return POLIS_ERR_INVALID;
    }
    struct polis__ahead *a = env->ahead;
    if (!a && !(a = env->ahead = polis__alloc(env, sizeof *a))) return POLIS_ERR_NOMEM;
    for (int32_t i = 0; i < a->n; i++)
        if (a->owner[i] == ctx) {
            polis__ctx_error(ctx, "reset_ahead.prepare: this plugin registered one already");
            return POLIS_ERR_INVALID;
        }
    if (a->n == AHEAD_MAX) {
        polis__ctx_error(ctx, "reset_ahead.prepare: the env has %d prepare functions already",
                         AHEAD_MAX);
        return POLIS_ERR_LIMIT;
    }
    a->fn[a->n] = fn;
    a->ud[a->n] = ud;
    a->owner[a->n] = ctx;
    a->n++;
    return POLIS_OK;
}

static void ahead_free(polis_env *env)
{
    polis__free(env, env->ahead, sizeof *env->ahead);
    env->ahead = NULL;
}

static const polis_reset_ahead_api ahead_api = {
    .version = POLIS_RESET_AHEAD_API_VERSION,
    .struct_size = sizeof(polis_reset_ahead_api),
    .prepare = ahead_register,
};

POLIS_INTERNAL const polis__module polis__ahead_module = {
    .name = "vec",
    .free = ahead_free,
    .api_name = POLIS_RESET_AHEAD_API,
    .api_version = POLIS_RESET_AHEAD_API_VERSION,
    .api = &ahead_api,
};

bool polis__env_can_prepare(const polis_env *env) { return env && env->ahead && env->ahead->n > 0; }

void polis__env_prepare(polis_env *env, uint64_t seed)
{
    const struct polis__ahead *a = env->ahead;
    if (!a) return;
    polis_rng rng;
    polis_rng_seed(&rng, seed, POLIS__ENV_STREAM);
    for (int32_t i = 0; i < a->n; i++) a->fn[i](a->ud[i], &rng);
}
