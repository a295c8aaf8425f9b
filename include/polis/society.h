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
 * Service version 2 (version 1 ended at `position`). Functions are only ever appended; check
 * struct_size before using a function newer than the version you were built against.
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
#define POLIS_SOCIETY_VERSION 2

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
    /* The greedy baseline's physical action for agent (the "greedy" policy): produce on a
     * station whose recipe it can run and values, else pick a valued visible resource on
     * its cell within capacity, else step towards the nearest such target (wrapping
     * distance), else explore. Always a legal action under the current mask. */
    polis_status (*greedy_action)(void *self, polis_ctx *caller, int32_t agent,
                                  int32_t *out_action);

    /* ---- the world's content as data (the oracle of plugins/metrics reads it) ---------- */

    /* The most units of `resource` world generation can place: the largest amount of each
     * static pile (one per position) plus the largest amount of each random pile; -1 for a
     * bad id. */
    int64_t (*initial_amount)(void *self, int32_t resource);
    /* Stations of `recipe` world generation places at every reset (static and random); -1
     * for a bad id. */
    int32_t (*recipe_stations)(void *self, int32_t recipe);
    /* One list of amounts: `which` is POLIS_SOCIETY_IN, _OUT or _REQ of recipe `id`, or
     * POLIS_SOCIETY_SEE of resource `id` (what an agent must hold to see and pick it). Writes
     * up to cap (resource, units) pairs into res[] and units[] (either may be NULL when cap
     * is 0) and returns the list's length, -1 for bad arguments. A resource of -1 is a
     * requirement on a resource not in play: it can never be met. */
    int32_t (*amounts)(void *self, int32_t which, int32_t id, int32_t *res, int32_t *units,
                       int32_t cap);
    /* The value of one unit of `resource` to `agent` (h·r̄ of its job); NAN for bad ids. */
    double (*unit_value)(void *self, int32_t agent, int32_t resource);
    /* The agent's job name ("carpenter"); NULL for a bad id. */
    const char *(*agent_job)(void *self, int32_t agent);
} polis_society_api;

enum { POLIS_SOCIETY_IN = 0, POLIS_SOCIETY_OUT = 1, POLIS_SOCIETY_REQ = 2, POLIS_SOCIETY_SEE = 3 };

#ifdef __cplusplus
}
#endif
#endif
