/*
 * engine/policy/internal.h — what the scripted policies (policy.c) and the plans (plan.c)
 * share: the module's state behind env->policy, the registered records and the functions
 * one file calls in the other. Internal to the engine; ffi/swap.c reads the policy records
 * to replace a policy by name (docs/architecture.md allows ffi -> policy).
 */
#ifndef POLIS_POLICY_INTERNAL_H
#define POLIS_POLICY_INTERNAL_H

#include "core/module.h"

/* A scripted policy a plugin or script registered (policy.c); public ids start after the
 * kernel's built-ins "noop", "random" and "uniform" (ids 0..POLIS__POLICY_BUILTINS-1). */
#define POLIS__POLICY_BUILTINS 3
typedef struct polis__policy {
    char *name;
    polis_policy_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__policy;

/* A macro (plan.c): a multi-tick controller started by a text command (host->macro). */
typedef struct polis__macro {
    char *name; /* [A-Z][A-Z0-9_]*, matched case-insensitively */
    char *usage;
    char *doc;
    size_t plan_size;
    polis_status (*start)(polis_ctx *, void *, int32_t, const char *, void *);
    polis_status (*next)(polis_ctx *, void *, int32_t, void *, polis_plan_state *, int32_t *,
                         char *, size_t);
    void *ud;
    polis_ctx *ctx;
} polis__macro;

/* Longest plan command (NUL included) and plan reason the kernel keeps per agent. */
#define POLIS__PLAN_COMMAND_MAX 256
#define POLIS__PLAN_WHY_MAX 256

/* One agent's plan (plan.c). A plan belongs to the episode it was started in, so a reset
 * ends every plan without visiting them. */
typedef struct polis__plan {
    int32_t macro;   /* index in env->macros, -1 = no plan */
    int64_t episode; /* env->episode when it started */
    int64_t tick;    /* tick of the last `next` call, -1 = none yet */
    int32_t action;  /* the action `next` chose at `tick` */
    char command[POLIS__PLAN_COMMAND_MAX];
    char why[POLIS__PLAN_WHY_MAX];
} polis__plan;

/* The module's state (env->policy), allocated when the env is created: the generator is
 * there for the kernel's own policies even when no plugin registers one. */
struct polis__policy_state {
    /* scripted policies (policy.c) and their generator, seeded at every reset */
    polis__policy *policies;
    int32_t n_policies, cap_policies;
    polis_rng rng;
    /* macros (plan.c) and, when there are any, every agent's plan, allocated at freeze:
     * plans[n_agents] and plan_mem[n_agents][plan_stride] (the largest plan_size, aligned) */
    polis__macro *macros;
    int32_t n_macros, cap_macros;
    polis__plan *plans;
    uint8_t *plan_mem;
    size_t plan_stride;
};

/* ---- policy.c: scripted policies -------------------------------------------------------- */
/* The policy generator's PCG32 stream ("policy" in ASCII): never the env stream. */
#define POLIS__POLICY_STREAM 0x706f6c696379ULL
/* The host-table functions. */
POLIS_INTERNAL polis_status polis__policy_add(polis_ctx *ctx, const char *name, polis_policy_fn fn,
                                              void *ud);
POLIS_INTERNAL polis_rng *polis__policy_rng(polis_ctx *ctx);
POLIS_INTERNAL void polis__policies_free(polis_env *env);

/* ---- plan.c: plans (macro actions) ----------------------------------------------------- */
/* The host-table function (ABI 1.2). */
POLIS_INTERNAL polis_status polis__macro_add(polis_ctx *ctx, const polis_macro_def *def);
/* Allocates every agent's plan state at freeze (nothing when no macro is registered). */
POLIS_INTERNAL polis_status polis__plans_alloc(polis_env *env);
POLIS_INTERNAL void polis__plans_free(polis_env *env);

/* Bytes per agent polis__plans_alloc allocates (the memory estimate counts them first). */
POLIS_INTERNAL size_t polis__plans_agent_bytes(const polis_env *env);
/* The describe document's "policies" and "macros". */
POLIS_INTERNAL void polis__policies_describe(polis__describe *b, struct cJSON *root,
                                             const polis_env *env);
POLIS_INTERNAL void polis__macros_describe(polis__describe *b, struct cJSON *root,
                                           const polis_env *env);

#endif
