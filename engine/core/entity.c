/*
 * entity.c — entities: slot indices with generation counters, so a stale id (its entity
 * destroyed, or the env reset) is recognised instead of silently aliasing a new entity.
 * All arrays are preallocated for max_entities at create; create/destroy never allocate.
 */
#include <string.h>

#include "internal.h"

polis_status polis__entities_alloc(polis_env *env)
{
    size_t n = (size_t)env->max_entities;
    env->ent_gen = polis__alloc(env, n * sizeof(uint32_t));
    env->ent_alive = polis__alloc(env, n);
    env->ent_free = polis__alloc(env, n * sizeof(uint32_t));
    if (!env->ent_gen || !env->ent_alive || !env->ent_free)
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating %zu entities", n);
    for (size_t i = 0; i < n; i++) env->ent_gen[i] = 1;
    polis__entities_reset(env);
    return POLIS_OK;
}

static uint32_t next_gen(uint32_t g) { return g == UINT32_MAX ? 1 : g + 1; }

void polis__entities_reset(polis_env *env)
{
    int32_t n = env->max_entities;
    for (int32_t i = 0; i < n; i++) {
        if (env->ent_alive[i]) env->ent_gen[i] = next_gen(env->ent_gen[i]);
        env->ent_alive[i] = 0;
    }
    /* Free stack popped from the end: slot 0 comes out first, so agents get slots
     * 0..n_agents-1 after every reset. */
    for (int32_t i = 0; i < n; i++) env->ent_free[i] = (uint32_t)(n - 1 - i);
    env->n_ent_free = n;
}

void polis__entities_free(polis_env *env)
{
    size_t n = (size_t)env->max_entities;
    polis__free(env, env->ent_gen, n * sizeof(uint32_t));
    polis__free(env, env->ent_alive, n);
    polis__free(env, env->ent_free, n * sizeof(uint32_t));
}

polis_status polis__entity_create(polis_env *env, polis_entity *out)
{
    if (env->n_ent_free == 0)
        return polis__fail(env, POLIS_ERR_LIMIT,
                           "entity_create: all %d entities are in use; raise \"max_entities\" "
                           "in the scenario",
                           env->max_entities);
    uint32_t slot = env->ent_free[--env->n_ent_free];
    env->ent_alive[slot] = 1;
    for (int32_t c = 0; c < env->n_components; c++) {
        polis__component *cp = &env->components[c];
        memset(cp->data + (size_t)slot * cp->elem_size, 0, cp->elem_size);
    }
    if (out) *out = ((polis_entity)env->ent_gen[slot] << 32) | slot;
    return POLIS_OK;
}

bool polis__entity_alive(const polis_env *env, polis_entity e)
{
    uint32_t slot = POLIS_ENTITY_INDEX(e);
    return e != POLIS_ENTITY_NONE && slot < (uint32_t)env->max_entities && env->ent_alive &&
           env->ent_alive[slot] && env->ent_gen[slot] == POLIS_ENTITY_GEN(e);
}

polis_status polis__entity_destroy(polis_env *env, polis_entity e)
{
    if (!polis__entity_alive(env, e))
        return polis__fail(env, POLIS_ERR_INVALID,
                           "entity_destroy: entity %u (generation %u) is not alive",
                           POLIS_ENTITY_INDEX(e), POLIS_ENTITY_GEN(e));
    uint32_t slot = POLIS_ENTITY_INDEX(e);
    for (int32_t a = 0; a < env->n_agents; a++)
        if (env->agent_entities[a] == e)
            return polis__fail(env, POLIS_ERR_INVALID,
                               "entity_destroy: entity %u is agent %d's; agents live for the "
                               "whole episode (terminate the agent instead)",
                               slot, a);
    env->ent_alive[slot] = 0;
    env->ent_gen[slot] = next_gen(env->ent_gen[slot]);
    env->ent_free[env->n_ent_free++] = slot;
    return POLIS_OK;
}
