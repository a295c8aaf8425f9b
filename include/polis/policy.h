/*
 * polis/policy.h — scripted policies (named controllers that pick an agent's action) and
 * plans (macro actions started by a text command and run tick by tick). docs/kernel.md,
 * "Scripted policies" and "Plans (macro actions)". The engine/policy module implements them
 * in libpolis.
 */
#ifndef POLIS_POLICY_H
#define POLIS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"

POLIS_API_BEGIN

/* Policies plugins registered (host->policy): count, name, lookup (-1 if unknown). The
 * kernel also provides, as ids 0, 1 and 2: "noop"; "random" (uniform over the legal actions
 * of the current mask, drawn from the policy generator); "uniform" (uniform over all
 * actions, ignoring the mask, from the policy generator; a masked draw is sent as noop,
 * which is what the step would make of it, without the illegal flag). Plugin and script
 * policies follow from id 3; a plugin may not register a kernel policy's name. */
int32_t polis_env_n_policies(const polis_env *env);
const char *polis_env_policy_name(const polis_env *env, int32_t policy);
int32_t polis_env_policy_find(const polis_env *env, const char *name);
/* Writes the policy's action for each agent in agents[0..n) into io->actions (NULL agents:
 * every agent not yet finished). Allowed after a successful reset, between steps. A policy
 * returning an action outside [0, n_actions) fails with POLIS_ERR_ACTION naming policy,
 * agent and tick. */
polis_status polis_env_policy_act(polis_env *env, int32_t policy, const int32_t *agents, int32_t n);

/* ---- plans (macro actions) ------------------------------------------------------------------ */

/* Macros plugins registered (host->macro): count, name ("GATHER"), usage
 * ("GATHER <n> <resource>"), doc; NULL for an index out of range. */
int32_t polis_env_n_macros(const polis_env *env);
const char *polis_env_macro_name(const polis_env *env, int32_t macro);
const char *polis_env_macro_usage(const polis_env *env, int32_t macro);
const char *polis_env_macro_doc(const polis_env *env, int32_t macro);
/* Starts a plan for agent from a command, "GATHER 3 wood" (the first word names the macro,
 * case-insensitively; the rest are its arguments), replacing any plan the agent had.
 * Allowed after a successful reset, for an agent not yet finished. An unknown macro or
 * arguments the macro refuses: POLIS_ERR_ACTION with the reason in the env's error, and the
 * agent keeps no plan. Allocates nothing. */
polis_status polis_env_plan_start(polis_env *env, int32_t agent, const char *command);
/* Asks agent's plan for this tick's action. POLIS_OK with *state RUNNING and *out_action
 * set, or *state DONE / IMPOSSIBLE with *why (owned by the env, valid until the next plan
 * call for that agent) — the plan has then ended. An agent that finished ends its plan as
 * IMPOSSIBLE. POLIS_ERR_INVALID if the agent has no plan; a macro that fails or returns an
 * action outside the agent's mask: POLIS_ERR_ACTION naming the macro, agent and tick (the
 * plan ends). Call once per tick, before polis_env_step. */
polis_status polis_env_plan_next(polis_env *env, int32_t agent, polis_plan_state *state,
                                 int32_t *out_action, const char **why);
/* Ends agent's plan, if any. Reset ends every plan. */
void polis_env_plan_cancel(polis_env *env, int32_t agent);
/* The command of agent's running plan as it was started, or NULL if it has none. */
const char *polis_env_plan_command(const polis_env *env, int32_t agent);

POLIS_API_END
#endif
