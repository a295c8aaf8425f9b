/*
 * engine/policy/policy.c — scripted policies: named controllers that pick an action for an agent
 * from the current state (baselines such as society's "greedy", background bots, the CLI's
 * `--policy`), and the policy generator they draw from.
 *
 * Ids: 0 is the kernel's "noop", 1 the kernel's "random" (uniform over the legal actions of
 * the agent's current mask), 2 the kernel's "uniform" (uniform over all actions, ignoring
 * the mask), then the policies plugins and scripts registered, in registration order. The
 * built-ins have no record in env->policy->policies, so an env without plugin policies allocates
 * nothing here. Their names are reserved: a plugin or script registering one is refused.
 *
 * The policy generator (env->policy->rng) is seeded at every reset from the reset seed on
 * its own stream, so running policies never draws from the env's generator: an episode with
 * given actions is the same whether or not a policy chose them, and a scripted episode is
 * reproducible from its seed.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/internal.h"

enum {
    POLICY_NOOP = 0,
    POLICY_RANDOM = 1,
    POLICY_UNIFORM = 2,
    POLICY_BUILTINS = POLIS__POLICY_BUILTINS
};

static const char *const BUILTIN_NAMES[POLICY_BUILTINS] = {"noop", "random", "uniform"};

/* [a-z0-9_]+, at most 63 characters: policies are named on command lines and in configs. */
static bool valid_policy_name(const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return n >= 1 && n <= 63;
}

polis_status polis__policy_add(polis_ctx *ctx, const char *name, polis_policy_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    const polis_host *h = ctx->head.host;
    if (env->state != POLIS__ENV_LOADING) {
        h->error(ctx, "policy: registration is closed once the env is created (register in "
                      "init or start)");
        return POLIS_ERR_STATE;
    }
    if (!name || !valid_policy_name(name)) {
        h->error(ctx, "policy name \"%s\" is not 1 to 63 characters from a-z, 0-9 and _",
                 name ? name : "(null)");
        return POLIS_ERR_INVALID;
    }
    if (!fn) {
        h->error(ctx, "policy %s: function is NULL", name);
        return POLIS_ERR_INVALID;
    }
    int32_t dup = polis_env_policy_find(env, name);
    if (dup >= 0 && dup < POLICY_BUILTINS) {
        h->error(ctx,
                 "policy \"%s\" is the kernel's (noop, random and uniform are reserved); "
                 "choose another name",
                 name);
        return POLIS_ERR_INVALID;
    }
    if (dup >= 0) {
        h->error(ctx, "policy \"%s\" is already registered by %s", name,
                 env->policy->policies[dup - POLICY_BUILTINS].ctx->name);
        return POLIS_ERR_INVALID;
    }
    struct polis__policy_state *ps = env->policy;
    polis_status st = polis__grow(env, (void **)&ps->policies, &ps->cap_policies, ps->n_policies,
                                  sizeof *ps->policies);
    if (st) return st;
    polis__policy *p = &env->policy->policies[env->policy->n_policies];
    if (!(p->name = polis__strdup(env, name)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    p->fn = fn;
    p->ud = ud;
    p->ctx = ctx;
    env->policy->n_policies++;
    return POLIS_OK;
}

polis_rng *polis__policy_rng(polis_ctx *ctx) { return &ctx->env->policy->rng; }

void polis__policies_free(polis_env *env)
{
    struct polis__policy_state *ps = env->policy;
    for (int32_t i = 0; i < ps->n_policies; i++) polis__strfree(env, ps->policies[i].name);
    polis__free(env, ps->policies, sizeof *ps->policies * (size_t)ps->cap_policies);
    ps->policies = NULL;
    ps->n_policies = ps->cap_policies = 0;
}

/* Scripted policies by id: the kernel's "noop", "random" and "uniform", then the registered
 * ones in registration order. */
void polis__policies_describe(polis__describe *b, cJSON *root, const polis_env *env)
{
    cJSON *arr = polis__describe_arr(b, root, "policies");
    for (int32_t i = 0; i < polis_env_n_policies(env); i++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        polis__describe_i64(b, o, "id", i);
        polis__describe_str(b, o, "name", polis_env_policy_name(env, i));
        const polis_ctx *owner =
            i < POLICY_BUILTINS ? NULL : env->policy->policies[i - POLICY_BUILTINS].ctx;
        polis__describe_str(b, o, "owner", polis__describe_owner(owner));
    }
}

/* ---- the module (engine/modules.c) ----------------------------------------------------- */

static void policy_host(polis_host *h)
{
    h->policy = polis__policy_add;
    h->policy_rng = polis__policy_rng;
    h->macro = polis__macro_add;
}

static polis_status policy_create(polis_env *env)
{
    env->policy = polis__alloc(env, sizeof *env->policy);
    return env->policy ? POLIS_OK : polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

static polis_status policy_freeze(polis_env *env) { return polis__plans_alloc(env); }

static void policy_reset(polis_env *env, uint64_t seed)
{
    polis_rng_seed(&env->policy->rng, seed, POLIS__POLICY_STREAM);
}

static void policy_free(polis_env *env)
{
    if (!env->policy) return;
    polis__plans_free(env);
    polis__policies_free(env);
    polis__free(env, env->policy, sizeof *env->policy);
    env->policy = NULL;
}

static void policy_describe(polis__describe *b, cJSON *root, const polis_env *env)
{
    polis__policies_describe(b, root, env);
    polis__macros_describe(b, root, env);
}

POLIS_INTERNAL const polis__module polis__policy_module = {
    .name = "policy",
    .host = policy_host,
    .create = policy_create,
    .agent_bytes = polis__plans_agent_bytes,
    .freeze = policy_freeze,
    .reset = policy_reset,
    .free = policy_free,
    .describe = policy_describe,
};

int32_t polis_env_n_policies(const polis_env *env)
{
    return env ? POLICY_BUILTINS + env->policy->n_policies : 0;
}

const char *polis_env_policy_name(const polis_env *env, int32_t policy)
{
    if (!env || policy < 0 || policy >= POLICY_BUILTINS + env->policy->n_policies) return NULL;
    return policy < POLICY_BUILTINS ? BUILTIN_NAMES[policy]
                                    : env->policy->policies[policy - POLICY_BUILTINS].name;
}

int32_t polis_env_policy_find(const polis_env *env, const char *name)
{
    if (!env || !name) return -1;
    for (int32_t i = 0; i < POLICY_BUILTINS; i++)
        if (strcmp(BUILTIN_NAMES[i], name) == 0) return i;
    for (int32_t i = 0; i < env->policy->n_policies; i++)
        if (strcmp(env->policy->policies[i].name, name) == 0) return POLICY_BUILTINS + i;
    return -1;
}

/* Uniform over the legal actions of the agent's mask row; noop is always among them. */
static int32_t random_legal(polis_env *env, int32_t agent)
{
    const polis_io *io = &env->io;
    const uint8_t *row = io->masks + (size_t)agent * (size_t)io->n_actions;
    uint32_t legal = 0;
    for (int32_t k = 0; k < io->n_actions; k++) legal += row[k] != 0;
    if (legal == 0) return 0;
    uint32_t pick = polis_rng_below(&env->policy->rng, legal);
    for (int32_t k = 0; k < io->n_actions; k++)
        if (row[k] && pick-- == 0) return k;
    return 0;
}

/* Uniform over all n_actions actions, whatever the mask says (the random agents of Crafter
 * and Craftax). A drawn action the mask forbids would be a no-op flagged illegal at the
 * step; it is sent as noop instead, which has the same effect without the flag. */
static int32_t uniform_any(polis_env *env, int32_t agent)
{
    const polis_io *io = &env->io;
    int32_t k = (int32_t)polis_rng_below(&env->policy->rng, (uint32_t)io->n_actions);
    return io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)k] ? k : 0;
}

static polis_status act_one(polis_env *env, int32_t policy, int32_t agent)
{
    polis_io *io = &env->io;
    if (policy == POLICY_NOOP) {
        io->actions[agent] = 0;
        return POLIS_OK;
    }
    if (policy == POLICY_RANDOM) {
        io->actions[agent] = random_legal(env, agent);
        return POLIS_OK;
    }
    if (policy == POLICY_UNIFORM) {
        io->actions[agent] = uniform_any(env, agent);
        return POLIS_OK;
    }
    const polis__policy *p = &env->policy->policies[policy - POLICY_BUILTINS];
    int32_t action = -1;
    env->current = p->ctx;
    polis_status st = p->fn(p->ctx, p->ud, agent, &action);
    env->current = NULL;
    if (st != POLIS_OK) {
        char what[160];
        snprintf(what, sizeof what, "policy %s, agent %d (%s)", p->name, agent,
                 env->scn.agent_names[agent]);
        polis__place_error(env, p->ctx, st, what);
        return st;
    }
    if (action < 0 || action >= io->n_actions)
        return polis__fail(env, POLIS_ERR_ACTION,
                           "policy %s: agent %d (%s): action %d is outside [0, %d) at tick %lld",
                           p->name, agent, env->scn.agent_names[agent], action, io->n_actions,
                           (long long)env->tick);
    io->actions[agent] = action;
    return POLIS_OK;
}

polis_status polis_env_policy_act(polis_env *env, int32_t policy, const int32_t *agents, int32_t n)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (env->state != POLIS__ENV_RUNNING && env->state != POLIS__ENV_DONE)
        return polis__fail(env, POLIS_ERR_STATE, "policy_act: %s",
                           env->state == POLIS__ENV_BROKEN
                               ? "the previous step or reset failed; call reset"
                               : "call reset before choosing actions");
    if (policy < 0 || policy >= POLICY_BUILTINS + env->policy->n_policies)
        return polis__fail(env, POLIS_ERR_INVALID,
                           "policy_act: policy %d is not a policy id (0..%d)", policy,
                           POLICY_BUILTINS + env->policy->n_policies - 1);
    if (agents) {
        if (n < 0 || n > env->n_agents)
            return polis__fail(env, POLIS_ERR_INVALID, "policy_act: %d agents (expected 0..%d)", n,
                               env->n_agents);
        for (int32_t i = 0; i < n; i++)
            if (agents[i] < 0 || agents[i] >= env->n_agents)
                return polis__fail(env, POLIS_ERR_INVALID,
                                   "policy_act: agents[%d] = %d is not an agent id (0..%d)", i,
                                   agents[i], env->n_agents - 1);
        for (int32_t i = 0; i < n; i++) {
            polis_status st = act_one(env, policy, agents[i]);
            if (st) return st;
        }
        return POLIS_OK;
    }
    const polis_io *io = &env->io;
    for (int32_t a = 0; a < env->n_agents; a++) {
        if (io->terminations[a] || io->truncations[a]) continue;
        polis_status st = act_one(env, policy, a);
        if (st) return st;
    }
    return POLIS_OK;
}
