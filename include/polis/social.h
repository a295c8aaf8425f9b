/*
 * polis/social.h — the service the `social` plugin (plugins/social) provides to other
 * plugins: AdaSociety's multi-layer directed social graph.
 *
 *   const polis_social_api *soc = host->service(ctx, POLIS_SOCIAL_SERVICE);
 *
 * Nodes are agents (node id = agent id, 0..n_agents-1) and groups (node id =
 * n_agents + group id). Edges are directed and carry named numeric attributes; an edge
 * exists while it has at least one attribute. Attribute names are interned once
 * (attr_id) and used by id in hot paths. Membership of agent a in group g is the edge
 * g -> a; its attributes are the member's weights (e.g. "division_weight").
 *
 * Service version 1. Functions are only ever appended; check struct_size before using a
 * function newer than the version you were built against. Every function takes the
 * caller's ctx; the social plugin's state is found through its service registration, not
 * through the caller. Calls are valid after create (attr_id also during start()).
 */
#ifndef POLIS_SOCIAL_H
#define POLIS_SOCIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POLIS_SOCIAL_SERVICE "social"
#define POLIS_SOCIAL_VERSION 1

/* What a sharing edge u -> p with attribute "sharing.Map" / "sharing.Player" lets p see. */
typedef enum polis_social_share {
    POLIS_SOCIAL_SHARE_MAP = 0,    /* u's view of the map */
    POLIS_SOCIAL_SHARE_PLAYER = 1  /* u's own state (inventory) */
} polis_social_share;

typedef struct polis_social_api {
    uint32_t version;     /* POLIS_SOCIAL_VERSION of the provider */
    uint32_t struct_size; /* sizeof(polis_social_api) of the provider */
    void *self;           /* the provider's state; pass it back as the first argument */

    /* Interns an attribute name ("sharing.Map", "division_weight"); -1 if the table is
     * full or the name is invalid. */
    int32_t (*attr_id)(void *self, const char *name);
    int32_t (*max_groups)(void *self);
    /* Agents u that share `what` with `agent` (edges u -> agent with that sharing
     * attribute set to a non-zero value), ascending ids, u != agent; at most cap written,
     * the total count returned. */
    int32_t (*sharers)(void *self, int32_t agent, polis_social_share what, int32_t *out,
                       int32_t cap);
    /* Edge attribute access; nodes as described above. get returns false when the edge or
     * attribute is absent. set creates the edge; unset removes the attribute (and the edge
     * when it was the last); both publish the social bus events. */
    bool (*get)(void *self, int32_t from, int32_t to, int32_t attr, double *value);
    polis_status (*set)(void *self, polis_ctx *caller, int32_t from, int32_t to, int32_t attr,
                        double value);
    polis_status (*unset)(void *self, polis_ctx *caller, int32_t from, int32_t to,
                          int32_t attr);
    /* Groups of agent a through membership edges carrying attr (attr -1: any), ascending;
     * at most cap written, the total count returned. */
    int32_t (*groups_of)(void *self, int32_t agent, int32_t attr, int32_t *out, int32_t cap);
    /* Members of group g (ascending agent ids); at most cap written, total returned. */
    int32_t (*members)(void *self, int32_t group, int32_t *out, int32_t cap);
    /* Increments on every change of the graph, so readers can cache derived data. */
    uint64_t (*revision)(void *self);
} polis_social_api;

#ifdef __cplusplus
}
#endif
#endif
