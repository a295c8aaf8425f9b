/*
 * polis/society.h — the service the `society` ruleset (rulesets/society) provides to other
 * plugins: AdaSociety's physical world (resources, recipes, inventories, piles).
 *
 *   const polis_society_api *soc = host->service(ctx, POLIS_SOCIETY_SERVICE);
 *
 * Two kinds of calls:
 *   - definitions (define_resource, define_recipe) add custom content. They are accepted
 *     until society's start() freezes its tables, i.e. from the init() of a plugin that
 *     lists "society" in its `requires` (or is loaded after it). Names referenced in the
 *     specs may be defined later by anyone; they are resolved when the tables freeze, and
 *     an unknown name then fails the env's creation with a message naming the definition.
 *   - queries and mutations (everything else) are valid after create, during reset and
 *     step. Resource ids are the canonical channel order (README "Resources").
 *
 * A spec string lists resources with amounts: "wood:1, stone:2" ("wood" alone means 1,
 * "" means none). Every function takes the caller's ctx so errors are reported in its name.
 *
 * Service version 1. Functions are only ever appended; check struct_size before using a
 * function newer than the version you were built against.
 */
#ifndef POLIS_SOCIETY_H
#define POLIS_SOCIETY_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POLIS_SOCIETY_SERVICE "society"
#define POLIS_SOCIETY_VERSION 1

typedef struct polis_society_api {
    uint32_t version;     /* POLIS_SOCIETY_VERSION of the provider */
    uint32_t struct_size; /* sizeof(polis_society_api) of the provider */
    void *self;           /* the provider's state; pass it back as the first argument */

    /* A resource with objective unit value `score` (r̄ in the paper) whose piles are seen
     * and picked only by agents holding `requirements`. POLIS_ERR_CONFIG for a bad name or
     * spec, POLIS_ERR_STATE once the tables are frozen. */
    polis_status (*define_resource)(void *self, polis_ctx *caller, const char *name, double score,
                                    const char *requirements);
    /* A recipe (AdaSociety's "event"): a station that turns `inputs` into `outputs` for an
     * agent standing on it and holding `requirements`. */
    polis_status (*define_recipe)(void *self, polis_ctx *caller, const char *name,
                                  const char *inputs, const char *outputs,
                                  const char *requirements);

    int32_t (*n_resources)(void *self);
    int32_t (*resource_find)(void *self, const char *name); /* -1 if not in play */
    const char *(*resource_name)(void *self, int32_t resource);
    int32_t (*n_recipes)(void *self);
    int32_t (*recipe_find)(void *self, const char *name);
    const char *(*recipe_name)(void *self, int32_t recipe);

    /* Units of `resource` agent holds; -1 for a bad id. */
    int32_t (*inventory)(void *self, int32_t agent, int32_t resource);
    /* Adds delta (may be negative) units to an inventory, within [0, capacity]; the change
     * counts in the agent's reward like a pick or a dump and publishes inventory.changed.
     * POLIS_ERR_INVALID (with a message) for bad ids or a result outside the capacity. */
    polis_status (*give)(void *self, polis_ctx *caller, int32_t agent, int32_t resource,
                         int32_t delta);
    /* Units of resource lying on cell (x, y); -1 for bad arguments. */
    int32_t (*pile)(void *self, int32_t x, int32_t y, int32_t resource);
    /* Sets the pile of resource on (x, y) to amount >= 0; publishes pile.changed. */
    polis_status (*set_pile)(void *self, polis_ctx *caller, int32_t x, int32_t y, int32_t resource,
                             int32_t amount);
    /* The agent's cell; false for a bad id. */
    bool (*position)(void *self, int32_t agent, int32_t *x, int32_t *y);
} polis_society_api;

#ifdef __cplusplus
}
#endif
#endif
