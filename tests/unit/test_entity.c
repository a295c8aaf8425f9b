/* entity.c: generational ids, stale ids after destroy and reset, capacity, component rows
 * zeroed on create, agents own the first slots. */
#include "check.h"
#include "core/internal.h"
#include "testutil.h"

int main(void)
{
    polis_env *env = test_env("{\"agents\": 2, \"max_entities\": 5, "
                              "\"plugins\": [{\"name\": \"probe\"}]}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    /* Agents took slots 0 and 1, probe's reset hook slots 2..4: the table is full. */
    CHECK_EQ_INT(POLIS_ENTITY_INDEX(env->agent_entities[0]), 0);
    CHECK_EQ_INT(POLIS_ENTITY_INDEX(env->agent_entities[1]), 1);
    polis_entity e;
    CHECK_EQ_INT(polis__entity_create(env, &e), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "entity_create: all 5 entities are in use; raise "
                                       "\"max_entities\" in the scenario");

    polis_entity third = ((polis_entity)env->ent_gen[2] << 32) | 2u;
    CHECK(polis__entity_alive(env, third));
    CHECK_EQ_INT(polis__entity_destroy(env, third), POLIS_OK);
    CHECK(!polis__entity_alive(env, third));
    CHECK_EQ_INT(polis__entity_destroy(env, third), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "entity_destroy: entity 2 (generation");
    /* The slot is reused with a new generation: the old id stays dead. */
    polis_entity again;
    CHECK_EQ_INT(polis__entity_create(env, &again), POLIS_OK);
    CHECK_EQ_INT(POLIS_ENTITY_INDEX(again), 2);
    CHECK(POLIS_ENTITY_GEN(again) != POLIS_ENTITY_GEN(third));
    CHECK(polis__entity_alive(env, again));
    CHECK(!polis__entity_alive(env, third));
    /* Agents cannot be destroyed. */
    CHECK_EQ_INT(polis__entity_destroy(env, env->agent_entities[1]), POLIS_ERR_INVALID);
    CHECK_CONTAINS(polis_env_error(env), "is agent 1's");
    /* Null and out-of-range ids are simply not alive. */
    CHECK(!polis__entity_alive(env, POLIS_ENTITY_NONE));
    CHECK(!polis__entity_alive(env, ((polis_entity)1 << 32) | 99u));

    /* Reset kills every id of the previous episode. */
    polis_entity agent0 = env->agent_entities[0];
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK(!polis__entity_alive(env, agent0));
    CHECK(!polis__entity_alive(env, again));
    CHECK(polis__entity_alive(env, env->agent_entities[0]));
    CHECK_EQ_INT(POLIS_ENTITY_INDEX(env->agent_entities[0]), 0);
    polis_env_destroy(env);
    CHECK_DONE();
}
