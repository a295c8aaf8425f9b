/*
 * engine/core/module.h — how a module plugs into the env: one static descriptor per module
 * with the lifecycle callbacks it needs, all of them listed in one table (engine/modules.c,
 * the only file that names every module). The kernel walks the table at each step of an
 * env's life and never names a module itself; a module keeps its state behind its own
 * opaque pointer in struct polis_env (core/env.h). docs/architecture.md draws the layers.
 *
 * Every callback is optional (NULL: the module has nothing to do then). Callbacks of one
 * kind run in table order; the order of the table is therefore part of the behaviour (a
 * script's on_start runs before the scenario's bindings are made, a describe document lists
 * the views before the policies).
 */
#ifndef POLIS_CORE_MODULE_H
#define POLIS_CORE_MODULE_H

#include "core/registry.h"

typedef struct polis__describe polis__describe;

typedef struct polis__module {
    const char *name; /* the folder under engine/: "lua", "ffi", ... */

    /* Fills the host-table slots the module implements (polis_host, plugin.h). Called once
     * per process, before the first env is created, on a table holding the kernel's slots. */
    void (*host)(polis_host *h);

    /* ---- creation (polis_env_create_*), in this order ---- */
    /* The env struct exists and the options are read; nothing is loaded yet. */
    polis_status (*create)(polis_env *env);
    /* Every plugin's init ran (scripts run their chunks here). */
    polis_status (*load)(polis_env *env);
    /* Every plugin's start ran (script on_start callbacks, the scenario's bindings). */
    polis_status (*start)(polis_env *env);
    /* Registration is complete; the registries are about to be copied and sorted (handler
     * replacements go in here, so the step calls them like any other). */
    polis_status (*prefreeze)(polis_env *env);
    /* Bytes per agent `freeze` will allocate, counted in the memory estimate that runs
     * before anything is allocated ("agents N x B bytes (... plans)"). */
    size_t (*agent_bytes)(const polis_env *env);
    /* The kernel's buffers are allocated (io, entities, grid); the bus is not frozen yet. */
    polis_status (*freeze)(polis_env *env);

    /* ---- first thing in every polis_env_reset, before the env's state is touched; `seed`
     * is the reset seed. May rebuild the env in place (polis__env_rebuild, core/env.h: the
     * vary module's drawn tasks). A failure fails the reset with the module's message. ---- */
    polis_status (*prereset)(polis_env *env, uint64_t seed);

    /* ---- every polis_env_reset, after the agents' entities exist and before the RESET
     * hooks run; `seed` is the reset seed. Cannot fail. ---- */
    void (*reset)(polis_env *env, uint64_t seed);

    /* ---- polis_env_destroy (also after a failed create, at any point of it) ---- */
    /* Before the plugins are unloaded: whatever calls into plugin code (Lua states holding
     * plugin callbacks, prepared foreign calls). */
    void (*unload)(polis_env *env);
    /* After: the module's own memory. */
    void (*free)(polis_env *env);

    /* Adds the module's registries to polis_env_describe_json's document (root object). */
    void (*describe)(polis__describe *b, struct cJSON *root, const polis_env *env);

    /* A host API the module offers plugins (host->host_api, plugin.h): its name, newest
     * version and constant table; NULL name: none. */
    const char *api_name;
    uint32_t api_version;
    const void *api;
} polis__module;

/* The table (engine/modules.c), NULL-terminated. */
POLIS_INTERNAL extern const polis__module *const polis__modules[];

/* ---- describe.c: what a module's describe callback adds with ---------------------------- */
/* Each adds a member `key` to an object (or an element to an array: key is then ignored)
 * and returns it, or NULL after remembering the failure (polis_env_describe_json then
 * returns NULL). A NULL parent adds nothing. */
POLIS_INTERNAL struct cJSON *polis__describe_obj(polis__describe *b, struct cJSON *parent,
                                                 const char *key);
POLIS_INTERNAL struct cJSON *polis__describe_arr(polis__describe *b, struct cJSON *parent,
                                                 const char *key);
POLIS_INTERNAL struct cJSON *polis__describe_str(polis__describe *b, struct cJSON *parent,
                                                 const char *key, const char *s);
POLIS_INTERNAL struct cJSON *polis__describe_i64(polis__describe *b, struct cJSON *parent,
                                                 const char *key, int64_t v);
/* The name describe gives a registration's owner: the ctx's name, "polis" for the kernel. */
POLIS_INTERNAL const char *polis__describe_owner(const polis_ctx *ctx);

/* ---- overrides.c ------------------------------------------------------------------------ */
/* What a JSON value is, for messages: "a number", "an object", ...; "nothing" for NULL. */
POLIS_INTERNAL const char *polis__json_kind_name(const struct cJSON *n);

#endif
