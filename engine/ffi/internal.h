/*
 * engine/ffi/internal.h — what foreign calls (ffi.c: plugin exports called through libffi,
 * the scenario's bindings) and handler replacement (swap.c: the scenario's "replace") share,
 * and what the Lua host uses to call an export (polis.call). Internal to the engine.
 */
#ifndef POLIS_FFI_INTERNAL_H
#define POLIS_FFI_INTERNAL_H

#include "core/module.h"

typedef struct polis__ffi_state polis__ffi_state;   /* ffi.c: env->ffi */
typedef struct polis__swap_state polis__swap_state; /* swap.c: env->swap */

/* ---- ffi.c ----------------------------------------------------------------------------- */
/* Types of foreign-call signatures ("i32(ctx,i32,f64)"). */
typedef enum polis__ftype {
    POLIS__FT_VOID = 0,
    POLIS__FT_I32,
    POLIS__FT_I64,
    POLIS__FT_F32,
    POLIS__FT_F64,
    POLIS__FT_BOOL,
    POLIS__FT_STR,
    POLIS__FT_CTX,
    /* ABI 1.3: a pointer to an array of elements of a polis_dtype ("f32*", "u8*"); only
     * handler replacements (swap.c) call exports that take one. */
    POLIS__FT_PTR
} polis__ftype;

typedef union polis__ffi_value {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    bool b;
    const char *str;
} polis__ffi_value;

#define POLIS__FFI_MAXARGS 16
typedef struct polis__ffi_fn polis__ffi_fn; /* a prepared export: cif + fn + parsed signature */

/* Binds the scenario's "bindings" (event subscriptions and hooks by export name). Runs after
 * every plugin and script init, before registration freezes. */
POLIS_INTERNAL polis_status polis__ffi_bind_scenario(polis_env *env);
/* Finds "plugin.export" among loaded plugins' exports and prepares it (cached per env).
 * Fails with POLIS_ERR_FFI and a message naming the export when it is unknown or its
 * declared signature does not parse. */
POLIS_INTERNAL polis_status polis__ffi_lookup(polis_env *env, const char *qualified,
                                              const polis__ffi_fn **out);
/* The parsed signature: return type, parameter types (a leading ctx parameter included). */
POLIS_INTERNAL polis__ftype polis__ffi_ret(const polis__ffi_fn *f);
POLIS_INTERNAL int32_t polis__ffi_nparams(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ftype polis__ffi_param(const polis__ffi_fn *f, int32_t i);
POLIS_INTERNAL const char *polis__ffi_signature(const polis__ffi_fn *f);
/* The element dtype of pointer parameter i (POLIS__FT_PTR). */
POLIS_INTERNAL polis_dtype polis__ffi_param_elem(const polis__ffi_fn *f, int32_t i);
/* The export's qualified name ("plugin.export") and the ctx its ctx parameter receives. */
POLIS_INTERNAL const char *polis__ffi_name(const polis__ffi_fn *f);
POLIS_INTERNAL polis_ctx *polis__ffi_owner(const polis__ffi_fn *f);
/* ffi_lookup without touching env->err: the message goes to why (for callers that place it
 * at a JSON path). Exports with pointer parameters are found too. */
POLIS_INTERNAL polis_status polis__ffi_find(polis_env *env, const char *qualified,
                                            const polis__ffi_fn **out, char *why, size_t n);
/* The registry callbacks that call export f in place of a replaced handler (swap.c), ud =
 * f. The signature must have been matched against the kind first (swap.c does): they call
 * the export directly with the C type the signature fixes, the observation writer with the
 * pointer type of `dtype`. */
typedef polis_status (*polis__ffi_hook_fn)(polis_ctx *, void *);
typedef polis_status (*polis__ffi_action_fn)(polis_ctx *, void *, int32_t, int32_t);
typedef bool (*polis__ffi_legal_fn)(polis_ctx *, void *, int32_t, int32_t);
typedef void (*polis__ffi_obs_fn)(polis_ctx *, void *, int32_t, void *);
typedef polis_status (*polis__ffi_rewards_fn)(polis_ctx *, void *, float *);
POLIS_INTERNAL polis__ffi_hook_fn polis__ffi_tramp_hook(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_action_fn polis__ffi_tramp_action(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_legal_fn polis__ffi_tramp_legal(const polis__ffi_fn *f);
POLIS_INTERNAL polis__ffi_obs_fn polis__ffi_tramp_obs(const polis__ffi_fn *f, polis_dtype dtype);
POLIS_INTERNAL polis__ffi_rewards_fn polis__ffi_tramp_rewards(const polis__ffi_fn *f);
POLIS_INTERNAL polis_policy_fn polis__ffi_tramp_policy(const polis__ffi_fn *f);
/* Calls f. args[] holds one value per non-ctx parameter (nargs must equal the count); a ctx
 * parameter receives the exporting plugin's own ctx (so the export reaches its state through
 * the public ctx head), whoever the caller is. No allocation. */
POLIS_INTERNAL polis_status polis__ffi_call(polis_env *env, const polis__ffi_fn *f,
                                            polis_ctx *caller, const polis__ffi_value *args,
                                            int32_t nargs, polis__ffi_value *ret);
POLIS_INTERNAL void polis__ffi_free(polis_env *env);

/* ---- swap.c: replacing registered handlers by name (the scenario's "replace") ---------- */
/* Reads the scenario's "replace" array, checks every entry against the registries (name,
 * kind, the replacement's signature, what can be disabled, one replacement per handler) and
 * writes the replacements into the registries. The module's prefreeze: runs before anything
 * is copied or sorted, so the step runs replaced handlers through the same indirect calls. */
POLIS_INTERNAL polis_status polis__swap_apply(polis_env *env);
POLIS_INTERNAL void polis__swap_free(polis_env *env);

#endif
