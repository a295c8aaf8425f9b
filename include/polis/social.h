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
 * Service version 3 (version 1 ended at `revision`, version 2 at `end_bargaining`).
 * Functions are only ever appended; check struct_size before using a function newer than
 * the version you were built against.
 * Every function takes the caller's ctx; the social plugin's state is found through its
 * service registration, not through the caller. Calls are valid after create (attr_id also
 * during start()); functions that change the graph publish bus events, so they work only
 * during reset and step. Errors are reported with host->error on the caller's ctx.
 * plugins/social/README.md documents the model, the events and every decision.
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
#define POLIS_SOCIAL_VERSION 3

/* What a sharing edge u -> p with attribute "sharing.Map" / "sharing.Player" lets p see. */
typedef enum polis_social_share {
    POLIS_SOCIAL_SHARE_MAP = 0,   /* u's view of the map */
    POLIS_SOCIAL_SHARE_PLAYER = 1 /* u's own state (inventory) */
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
    polis_status (*unset)(void *self, polis_ctx *caller, int32_t from, int32_t to, int32_t attr);
    /* Groups of agent a through membership edges carrying attr (attr -1: any), ascending;
     * at most cap written, the total count returned. */
    int32_t (*groups_of)(void *self, int32_t agent, int32_t attr, int32_t *out, int32_t cap);
    /* Members of group g (ascending agent ids); at most cap written, total returned. */
    int32_t (*members)(void *self, int32_t group, int32_t *out, int32_t cap);
    /* Increments on every change of the graph, so readers can cache derived data. */
    uint64_t (*revision)(void *self);

    /* ---- version 2 (check struct_size before use) ---------------------------------- */

    /* The interned name of attr, or NULL for an unknown id. */
    const char *(*attr_name)(void *self, int32_t attr);
    /* True while group g exists (created and not deleted in the current graph). */
    bool (*group_alive)(void *self, int32_t group);
    /* Live groups, ascending ids; at most cap written, the total count returned. */
    int32_t (*groups)(void *self, int32_t *out, int32_t cap);
    /* Creates a group with the next id (ids are never reused within a graph; they restart
     * at 0 when a reset or a schedule snapshot rebuilds it). POLIS_ERR_LIMIT when
     * max_groups ids have been used. Publishes social.group_created. */
    polis_status (*group_create)(void *self, polis_ctx *caller, int32_t *out_group);
    /* Removes every edge of group g (members quit), then g itself. */
    polis_status (*group_delete)(void *self, polis_ctx *caller, int32_t group);
    /* Removes attr and every attribute below it ("sharing" removes "sharing.Map" and
     * "sharing.Player"): AdaSociety's remove_relation / quit_group of a dict-valued key.
     * Absent attributes or edges are a no-op. */
    polis_status (*unset_family)(void *self, polis_ctx *caller, int32_t from, int32_t to,
                                 int32_t attr);
    /* Removes the edge from -> to with all its attributes (no-op if absent). */
    polis_status (*remove_edge)(void *self, polis_ctx *caller, int32_t from, int32_t to);
    /* Out-degree (in = false) or in-degree (in = true) of a node; -1 for a bad node. */
    int32_t (*degree)(void *self, int32_t node, bool in);
    /* Social action families (the "actions" parameter), by their "name"; -1 if unknown. */
    int32_t (*family_find)(void *self, const char *name);
    /* Gates a family for an agent: while off, its actions are masked for that agent (a
     * mini-game's stage rules, e.g. Contract's turn order). family -1 = every family,
     * agent -1 = every agent. Gates return to each family's "enabled" at every reset. */
    polis_status (*allow)(void *self, polis_ctx *caller, int32_t agent, int32_t family, bool on);
    bool (*allowed)(void *self, int32_t agent, int32_t family);
    /* Sets the communication edge from -> to with words[0..n) (n <= communication_length;
     * the rest are 0), as the communicate action does with its fixed word. */
    polis_status (*communicate)(void *self, polis_ctx *caller, int32_t from, int32_t to,
                                const double *words, int32_t n);
    /* Negotiation helpers (AdaSociety's player-level actions, spec 9.2). request_matching
     * sets from -> to "matching_request_step" = the current step; propose sets from -> to
     * "proposal" = share (the share the proposer wants); accept_proposal makes `agent` accept
     * the proposal on opponent -> agent (POLIS_ERR_ACTION, nothing changed, when there is
     * none); end_bargaining removes "proposal" and "parity" in both directions. */
    polis_status (*request_matching)(void *self, polis_ctx *caller, int32_t from, int32_t to);
    polis_status (*propose)(void *self, polis_ctx *caller, int32_t from, int32_t to, double share);
    polis_status (*accept_proposal)(void *self, polis_ctx *caller, int32_t agent, int32_t opponent);
    polis_status (*end_bargaining)(void *self, polis_ctx *caller, int32_t a, int32_t b);

    /* ---- version 3 (check struct_size before use) ---------------------------------- */

    /* The sharing journal, for readers that keep derived data (society's merged maps)
     * up to date with what changed instead of reading every agent's sharers each step.
     * Each time an agent u starts or stops sharing `what` with another agent p (the
     * sharing attribute of the edge u -> p becomes non-zero, or zero or absent) the
     * change gets the next sequence number. share_seq returns the number the next change
     * will get. share_change reads change `seq` (< share_seq) into *what, *from, *to and
     * *on (true: u shares now) and returns true; it returns false when the change is no
     * longer known: the journal holds the last 4 x max(1024, n_agents) changes, and a reset
     * (or any rebuild of the whole graph without events) forgets every earlier change.
     * After false, read the sharers afresh and continue from share_seq. */
    uint64_t (*share_seq)(void *self);
    bool (*share_change)(void *self, uint64_t seq, polis_social_share *what, int32_t *from,
                         int32_t *to, bool *on);
} polis_social_api;

#ifdef __cplusplus
}
#endif
#endif
