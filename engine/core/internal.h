/*
 * engine/core/internal.h — what only the kernel's files (engine/core) share: the steps of
 * creation and destruction the env runs (scenario, plugins, registries, bus, entities,
 * grid) and the JSON accessors of the host table. Modules never include it: they see the
 * env through core/env.h and core/registry.h and plug into its lifecycle through
 * core/module.h (docs/architecture.md).
 */
#ifndef POLIS_CORE_INTERNAL_H
#define POLIS_CORE_INTERNAL_H

#include "core/module.h"
#include "core/registry.h"

POLIS_INTERNAL polis_status polis__registry_freeze(polis_env *env);
POLIS_INTERNAL void polis__registry_free(polis_env *env);

/* ---- config.c: the scenario schema (the JSON text itself is json.c's, json.h) ----------- */
POLIS_INTERNAL polis_status polis__scenario_parse(polis_env *env, const char *text, size_t len,
                                                  const char *source, const char *base_dir);
POLIS_INTERNAL void polis__scenario_free(polis_env *env);
/* Drops the JSON tree and the wrappers handed out during init. */
POLIS_INTERNAL void polis__scenario_release_json(polis_env *env);

/* ---- params.c: the polis_json wrappers ---------------------------------------------------- */
/* Wraps a cJSON node for a plugin (host->json_*). */
POLIS_INTERNAL const polis_json *polis__json_wrap(polis_env *env, const struct cJSON *node,
                                                  const char *path);
/* Host-table JSON accessors. */
POLIS_INTERNAL int polis__json_kind(const polis_json *j);
POLIS_INTERNAL int32_t polis__json_len(const polis_json *j);
POLIS_INTERNAL const polis_json *polis__json_at(polis_ctx *ctx, const polis_json *j, int32_t i);
POLIS_INTERNAL const polis_json *polis__json_get(polis_ctx *ctx, const polis_json *j,
                                                 const char *key);
POLIS_INTERNAL const char *polis__json_key(const polis_json *j, int32_t i);
POLIS_INTERNAL const char *polis__json_path(const polis_json *j);
POLIS_INTERNAL polis_status polis__json_int(polis_ctx *ctx, const polis_json *j, int64_t min,
                                            int64_t max, int64_t *out);
POLIS_INTERNAL polis_status polis__json_double(polis_ctx *ctx, const polis_json *j, double min,
                                               double max, double *out);
POLIS_INTERNAL polis_status polis__json_string(polis_ctx *ctx, const polis_json *j,
                                               const char **out);
POLIS_INTERNAL polis_status polis__json_bool(polis_ctx *ctx, const polis_json *j, bool *out);
/* The "json" host API (ABI 1.7, host_api.c): documents a plugin parses and frees itself,
 * read through the accessors above; at most POLIS__JSON_DOC_MAX bytes of text. */
#define POLIS__JSON_DOC_MAX ((size_t)16 << 20)
POLIS_INTERNAL polis_status polis__json_doc_parse(polis_ctx *ctx, const char *text, size_t len,
                                                  const char *name, const polis_json **out);
POLIS_INTERNAL void polis__json_doc_free(polis_ctx *ctx, const polis_json *doc);
/* The "observations" host API (env.c): writers of compacted fields report what changed. */
POLIS_INTERNAL bool polis__obs_narrowed(polis_ctx *ctx, int32_t field);
POLIS_INTERNAL void polis__obs_changed(polis_ctx *ctx, const int32_t *at, size_t n, size_t step);
POLIS_INTERNAL void polis__obs_changed_run(polis_ctx *ctx, size_t first, size_t count);
/* ... and, version 2 (registry.c), writers that write the stored dtype themselves. */
POLIS_INTERNAL polis_status polis__obs_writes_stored(polis_ctx *ctx, int32_t field);
POLIS_INTERNAL int32_t polis__obs_stored(polis_ctx *ctx, int32_t field);
/* The "actions" host API's legal_rows (registry.c; plugin.h documents it). */
POLIS_INTERNAL polis_status polis__legal_rows(polis_ctx *ctx, int32_t first, int32_t count,
                                              polis_legal_rows_fn row, void *ud);
/* The "shared_observations" host API's field (registry.c; plugin.h documents it). */
POLIS_INTERNAL polis_status polis__shared_field(polis_ctx *ctx, const polis_obs_def *def,
                                                int32_t *out_id);
/* host->host_api (host_api.c): the named, versioned tables of host functions. */
POLIS_INTERNAL const void *polis__host_api(polis_ctx *ctx, const char *name, uint32_t version);

/* ---- overrides.c: scenario overrides (polis_options.overrides) ----------------------- */
/* Applies env->overrides to the parsed scenario tree before it is read. A root that is not
 * an object is left alone (the reader reports it). Messages start with "overrides: ". */
POLIS_INTERNAL polis_status polis__overrides_apply(polis_env *env, struct cJSON *root);

/* ---- plugin.c: loading .so plugins ------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__plugins_load(polis_env *env); /* dlopen + checks + init */
POLIS_INTERNAL polis_status polis__plugins_start(polis_env *env);
POLIS_INTERNAL void polis__plugins_unload(polis_env *env);
/* Resolves a plugin name to a new .so path string using the search path: the options'
 * plugin_path, $POLIS_PLUGIN_PATH (never the scenario's or the current directory), the
 * directories beside the running libpolis (build-tree and install layouts, so an installed
 * or relocated polis finds its own plugins), then the configured build and install
 * directories. */
POLIS_INTERNAL polis_status polis__plugin_resolve(polis_env *env, const char *name, char **out);

/* ---- bus.c ------------------------------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__bus_freeze(polis_env *env);
POLIS_INTERNAL polis_status polis__bus_publish(polis_env *env, polis_ctx *from, int32_t type,
                                               const void *payload, size_t size);
POLIS_INTERNAL void polis__bus_reset(polis_env *env);
POLIS_INTERNAL void polis__bus_free(polis_env *env);

/* ---- entity.c ---------------------------------------------------------------------------- */
POLIS_INTERNAL polis_status polis__entities_alloc(polis_env *env);
POLIS_INTERNAL void polis__entities_reset(polis_env *env);
POLIS_INTERNAL void polis__entities_free(polis_env *env);
POLIS_INTERNAL polis_status polis__entity_create(polis_env *env, polis_entity *out);
POLIS_INTERNAL polis_status polis__entity_destroy(polis_env *env, polis_entity e);
POLIS_INTERNAL bool polis__entity_alive(const polis_env *env, polis_entity e);

/* ---- grid.c ------------------------------------------------------------------------------ */
POLIS_INTERNAL polis_status polis__grid_configure(polis_env *env, int32_t w, int32_t h, bool wrap);
POLIS_INTERNAL polis_status polis__grid_layer(polis_env *env, const char *name, int32_t *out);
POLIS_INTERNAL polis_status polis__grid_alloc(polis_env *env);
POLIS_INTERNAL void polis__grid_clear(polis_env *env);
POLIS_INTERNAL void polis__grid_free(polis_env *env);
POLIS_INTERNAL void polis__grid_window(const polis_grid *g, int32_t layer, int32_t cx, int32_t cy,
                                       int32_t rx, int32_t ry, int32_t outside, int32_t *out);

#endif
