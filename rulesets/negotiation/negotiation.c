/*
 * negotiation — AdaSociety's Negotiation mini-game (seeds/000 §4, specs/adasociety.md §14.6,
 * §15.2) as a plugin over the `society` ruleset and the `social` plugin.
 *
 * Negotiation stage, steps t < negotiation_steps. An agent that is not bargaining may send a
 * request to another (request_<j>); two agents that request each other in the same step
 * start a bargaining session. In a session the two take turns, one step each (AdaSociety's
 * parity rule: the lower id moves on even steps): PROPOSE a split (propose_<w>: "I get w,
 * you get 1 - w", w on a grid of 1/proposal_grid), ACCEPT the opponent's pending proposal,
 * or DECLINE (end the session without commitment); the first move of a session must be a
 * proposal. A session also ends when the stage ends or after session_turns turns (timeouts).
 * An accepted split forms or merges groups whose "score" weights multiply through (seeds/000
 * §4): an agent negotiates for its whole group, so when i of {i: w_i, j: w_j} agrees
 * (x, 1 - x) with k, the group becomes {i: w_i x, j: w_j x, k: 1 - x}. Physical stage: the
 * social plugin's split_score_to_group(score) shares every reward by those weights.
 *
 * Stage rules use general mechanisms only: the actions' masks (this plugin's own legality
 * callbacks), and a kernel mask filter that masks every other plugin's action during the
 * negotiation stage (a masked action is a no-op flagged in io->illegal).
 * The state of the sessions is mirrored in the social graph ("parity" and "proposal"
 * relations, as AdaSociety kept it), so the graph's views and social_state show it.
 * README.md beside this file is the reference.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/kit.h"
#include "polis/social.h"
#include "polis/society.h"

typedef struct nego_params {
    int64_t steps;
    int64_t grid;
    int64_t session_turns;
} nego_params;

enum { END_DECLINE = 1, END_TIMEOUT = 2, END_STAGE = 3, END_PARTNERS = 4 };

typedef struct nego {
    const polis_host *h;
    polis_ctx *ctx;
    nego_params p;
    const polis_social_api *social;
    const polis_society_api *society;
    int32_t P, K; /* agents; proposals 1 .. K (K = grid - 1) */
    int32_t a_score, a_parity, a_proposal;
    int32_t act_request, act_accept, act_decline, act_propose; /* first ids */
    int32_t ev_matched, ev_proposed, ev_agreed, ev_ended;
    polis_kit_stored state_obs; /* the "negotiation" field, written in the dtype stored */
    int32_t left;               /* negotiation steps left at this observation pass, 0 after */
    void **written;             /* [P] the record write_state last wrote the physical vector to */

    /* sessions, kept in both agents' slots */
    int32_t *partner; /* [P] opponent or -1 */
    int32_t *mover;   /* [P] whose turn it is in the session */
    int32_t *pending; /* [P] who made the pending proposal, or -1 */
    int32_t *claim;   /* [P] the pending proposal: its maker gets claim / grid */
    int32_t *turns;   /* [P] turns taken in the session */
    int32_t *request; /* [P] this step's request, or -1 */
    int32_t *group;   /* [P] the agent's group (lowest with "score"), or -1 */
    int32_t *kind;    /* [P] agent kinds for the scripted policy */
    int32_t *scratch; /* [P] */
    int32_t *size;    /* [P] scratch: members per group */
} nego;

typedef struct ev_pair {
    int32_t a, b, first;
} ev_pair;
typedef struct ev_proposed {
    int32_t agent, opponent;
    double share;
} ev_proposed;
typedef struct ev_agreed {
    int32_t agent, opponent;
    double share;
    int32_t group;
} ev_agreed;
typedef struct ev_ended {
    int32_t a, b, reason;
} ev_ended;

/* ---- state ---------------------------------------------------------------------------------- */

static int64_t now(const nego *n) { return n->h->tick(n->ctx); }
static bool stage(const nego *n) { return now(n) < n->p.steps; }
/* The same as stage() for the masks and writers of an observation pass and the actions of the
 * step after it (they run at the pass's tick): on_observe keeps the steps left once a pass. */
static bool pass_stage(const nego *n) { return n->left > 0; }
static const char *name_of(const nego *n, int32_t a) { return n->h->agent_name(n->ctx, a); }

static void refresh_groups(nego *n)
{
    for (int32_t a = 0; a < n->P; a++) {
        int32_t g = -1;
        n->group[a] = n->social->groups_of(n->social->self, a, n->a_score, &g, 1) > 0 ? g : -1;
    }
}

static bool partners(const nego *n, int32_t a, int32_t b)
{
    return n->group[a] >= 0 && n->group[a] == n->group[b];
}

/* Whom agent a may request now: another agent, outside a's group, neither bargaining. */
static bool invitable(const nego *n, int32_t a, int32_t j)
{
    return j != a && n->partner[a] < 0 && n->partner[j] < 0 && !partners(n, a, j);
}

static bool my_turn(const nego *n, int32_t a) { return n->partner[a] >= 0 && n->mover[a] == a; }

static void set_session(nego *n, int32_t a, int32_t b, int32_t mover, int32_t pending,
                        int32_t claim, int32_t turns)
{
    int32_t who[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        int32_t x = who[i];
        n->partner[x] = i == 0 ? b : a;
        n->mover[x] = mover;
        n->pending[x] = pending;
        n->claim[x] = claim;
        n->turns[x] = turns;
    }
}

static polis_status end_session(nego *n, int32_t a, int32_t reason)
{
    int32_t b = n->partner[a];
    n->partner[a] = n->partner[b] = -1;
    n->pending[a] = n->pending[b] = -1;
    polis_status st = n->social->end_bargaining(n->social->self, n->ctx, a, b);
    if (st || reason == 0) return st;
    ev_ended ev = {a < b ? a : b, a < b ? b : a, reason};
    return n->h->publish(n->ctx, n->ev_ended, &ev, sizeof ev);
}

/* Multiplies every "score" weight of group g by f. */
static polis_status scale_group(nego *n, int32_t g, double f)
{
    const polis_social_api *s = n->social;
    int32_t m = s->members(s->self, g, n->scratch, n->P);
    polis_status st;
    for (int32_t i = 0; i < m && i < n->P; i++) {
        double w;
        int32_t node = n->P + g;
        if (s->get(s->self, node, n->scratch[i], n->a_score, &w) &&
            (st = s->set(s->self, n->ctx, node, n->scratch[i], n->a_score, w * f)))
            return st;
    }
    return POLIS_OK;
}

/* a gets share x, b gets 1 - x, each for its whole group (seeds/000 §4); returns the group. */
static polis_status merge(nego *n, int32_t a, int32_t b, double x, int32_t *out)
{
    const polis_social_api *s = n->social;
    int32_t ga = n->group[a], gb = n->group[b];
    polis_status st;
    if (ga < 0 && gb < 0) {
        if ((st = s->group_create(s->self, n->ctx, &ga)) ||
            (st = s->set(s->self, n->ctx, n->P + ga, a, n->a_score, x)) ||
            (st = s->set(s->self, n->ctx, n->P + ga, b, n->a_score, 1.0 - x)))
            return st;
    } else if (gb < 0) {
        if ((st = scale_group(n, ga, x)) ||
            (st = s->set(s->self, n->ctx, n->P + ga, b, n->a_score, 1.0 - x)))
            return st;
    } else if (ga < 0) {
        if ((st = scale_group(n, gb, 1.0 - x)) ||
            (st = s->set(s->self, n->ctx, n->P + gb, a, n->a_score, x)))
            return st;
        ga = gb;
    } else {
        if ((st = scale_group(n, ga, x)) || (st = scale_group(n, gb, 1.0 - x))) return st;
        int32_t m = s->members(s->self, gb, n->scratch, n->P);
        for (int32_t i = 0; i < m && i < n->P; i++) {
            double w;
            if (s->get(s->self, n->P + gb, n->scratch[i], n->a_score, &w) &&
                (st = s->set(s->self, n->ctx, n->P + ga, n->scratch[i], n->a_score, w)))
                return st;
        }
        if ((st = s->group_delete(s->self, n->ctx, gb))) return st;
    }
    *out = ga;
    refresh_groups(n);
    return POLIS_OK;
}

/* ---- actions -------------------------------------------------------------------------------- */

static bool request_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t j)
{
    nego *n = ud;
    return pass_stage(n) && invitable(n, agent, j);
}

/* Sessions start only after the actions, so nothing a request depends on changes during
 * them, except that a merge earlier in the step may make the two partners: the request then
 * stands and the matching (on_post) ignores it. */
static polis_status request_act(polis_ctx *ctx, void *ud, int32_t agent, int32_t j)
{
    nego *n = ud;
    n->request[agent] = j;
    return POLIS_OK;
}

static bool propose_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t k)
{
    nego *n = ud;
    return pass_stage(n) && my_turn(n, agent);
}

static polis_status propose_act(polis_ctx *ctx, void *ud, int32_t agent, int32_t k)
{
    nego *n = ud;
    if (!propose_legal(ctx, ud, agent, k)) return POLIS_ERR_ACTION;
    int32_t b = n->partner[agent];
    const polis_social_api *s = n->social;
    double share = (double)k / (double)n->p.grid;
    polis_status st;
    /* a counter-proposal replaces the opponent's: one proposal is pending at a time */
    if ((st = s->unset(s->self, ctx, b, agent, n->a_proposal)) ||
        (st = s->propose(s->self, ctx, agent, b, share)))
        return st;
    n->pending[agent] = n->pending[b] = agent;
    n->claim[agent] = n->claim[b] = k;
    ev_proposed ev = {agent, b, share};
    return n->h->publish(ctx, n->ev_proposed, &ev, sizeof ev);
}

static bool accept_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    nego *n = ud;
    return pass_stage(n) && my_turn(n, agent) && n->pending[agent] == n->partner[agent];
}

static polis_status accept_act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    nego *n = ud;
    int32_t b = n->partner[agent];
    /* a merge earlier in this step may have put both sides in one group already */
    if (!accept_legal(ctx, ud, agent, arg) || partners(n, agent, b)) return POLIS_ERR_ACTION;
    double theirs = (double)n->claim[agent] / (double)n->p.grid, mine = 1.0 - theirs;
    polis_status st;
    int32_t g;
    if ((st = end_session(n, agent, 0)) || (st = merge(n, agent, b, mine, &g))) return st;
    ev_agreed ev = {agent, b, mine, g};
    return n->h->publish(ctx, n->ev_agreed, &ev, sizeof ev);
}

static bool decline_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    nego *n = ud;
    return pass_stage(n) && my_turn(n, agent) && n->pending[agent] >= 0;
}

static polis_status decline_act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    nego *n = ud;
    if (!decline_legal(ctx, ud, agent, arg)) return POLIS_ERR_ACTION;
    return end_session(n, agent, END_DECLINE);
}

/* ---- hooks ---------------------------------------------------------------------------------- */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    nego *n = ud;
    polis_kit_stored_ask(ctx, &n->state_obs);
    for (int32_t a = 0; a < n->P; a++) {
        n->partner[a] = n->pending[a] = n->request[a] = -1;
        n->turns[a] = 0;
        n->written[a] = NULL;
    }
    refresh_groups(n);
    return POLIS_OK;
}

static bool own_action(const nego *n, int32_t id)
{
    return id >= n->act_request && id < n->act_propose + n->K;
}

/* In the negotiation stage only this plugin's actions are legal: a kernel mask filter
 * clears every other plugin's (society's physical actions), so a masked action is a flagged
 * no-op and a policy that follows the masks never sends one. */
static void mask_stage(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    nego *n = ud;
    if (!pass_stage(n)) return;
    int32_t count = n->h->io(ctx)->n_actions;
    for (int32_t k = 1; k < count; k++)
        if (!own_action(n, k)) row[k] = 0;
}

/* After the actions: turns pass, timeouts, new sessions from mutual requests, and the end of
 * the stage. */
static polis_status on_post(polis_ctx *ctx, void *ud)
{
    nego *n = ud;
    int64_t t = now(n);
    if (t >= n->p.steps) return POLIS_OK;
    polis_status st;
    for (int32_t a = 0; a < n->P; a++) {
        int32_t b = n->partner[a];
        if (b < a) continue;
        if (partners(n, a, b)) {
            if ((st = end_session(n, a, END_PARTNERS))) return st;
            continue;
        }
        int32_t turns = n->turns[a] + 1;
        n->turns[a] = n->turns[b] = turns;
        n->mover[a] = n->mover[b] = n->mover[a] == a ? b : a;
        if (n->p.session_turns > 0 && turns >= n->p.session_turns &&
            (st = end_session(n, a, END_TIMEOUT)))
            return st;
    }
    const polis_social_api *s = n->social;
    for (int32_t a = 0; a < n->P; a++) {
        int32_t b = n->request[a];
        if (b <= a || n->request[b] != a || !invitable(n, a, b)) continue;
        /* AdaSociety's parity: the lower id moves on even steps, the other on odd ones */
        int32_t first = (t + 1) % 2 == 0 ? a : b;
        set_session(n, a, b, first, -1, 0, 0);
        if ((st = s->set(s->self, ctx, a, b, n->a_parity, 0.0)) ||
            (st = s->set(s->self, ctx, b, a, n->a_parity, 1.0)))
            return st;
        ev_pair ev = {a, b, first};
        if ((st = n->h->publish(ctx, n->ev_matched, &ev, sizeof ev))) return st;
    }
    for (int32_t a = 0; a < n->P; a++) n->request[a] = -1;
    if (t + 1 == n->p.steps)
        for (int32_t a = 0; a < n->P; a++)
            if (n->partner[a] > a && (st = end_session(n, a, END_STAGE))) return st;
    return POLIS_OK;
}

/* Groups can change outside this plugin (a schedule, a rule): read them before the masks. */
static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    nego *n = ud;
    int64_t t = now(n);
    n->left = t < n->p.steps ? (int32_t)(n->p.steps - t) : 0; /* for write_state */
    refresh_groups(n);
    return POLIS_OK;
}

/* ---- observations --------------------------------------------------------------------------- */

/* proposal[j]: the share agent j claims for itself in its pending proposal to this agent */
static void write_proposal(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    nego *n = ud;
    float *out = dst;
    memset(out, 0, sizeof(float) * (size_t)n->P);
    int32_t b = n->partner[agent];
    if (b >= 0 && n->pending[agent] == b) out[b] = (float)n->claim[agent] / (float)n->p.grid;
}

/* final_split[j]: agent j's weight in its group, 1 when it is in none */
static void write_split(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    nego *n = ud;
    float *out = dst;
    for (int32_t j = 0; j < n->P; j++) {
        double w = 1.0;
        if (n->group[j] >= 0)
            n->social->get(n->social->self, n->P + n->group[j], j, n->a_score, &w);
        out[j] = (float)w;
    }
}

static void write_available(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    nego *n = ud;
    int8_t *out = dst;
    bool on = pass_stage(n);
    for (int32_t j = 0; j < n->P; j++) out[j] = (int8_t)(on && invitable(n, agent, j));
}

/* [stage (0 negotiation, 1 physical), opponent (-1 none), 1 when it is my turn,
 *  steps left in the negotiation stage], in the dtype the env stores (i8 or i16 with compact
 *  observations: the values lie inside register_fields' ranges by construction).
 *  Sessions start and end only in the negotiation stage (its actions are legal there alone,
 *  on_post does nothing after it) and the last of them end with it, so from the physical
 *  stage's first pass to the next reset every agent's vector is [1, -1, 0, 0]: the writer
 *  writes it once into each record and keeps the record's address (the kernel leaves a record
 *  as it was written; a moved buffer is written again). */
static void write_state(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    nego *n = ud;
    const int32_t left = n->left; /* on_observe's, this pass's */
    if (!left) {
        if (n->written[agent] == dst) return;
        n->written[agent] = dst;
    }
    const int32_t v[4] = {!left, n->partner[agent], my_turn(n, agent), left};
    polis_kit_put_stored(&n->state_obs, dst, v, 4);
}

/* ---- views ---------------------------------------------------------------------------------- */

static void put(const nego *n, polis_text *t, const char *s) { n->h->text_append(t, s, strlen(s)); }

/* The shortest decimal that reads back as v ("0.35", not "0.34999999999999998"). */
static void put_number(const nego *n, polis_text *t, double v)
{
    char buf[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    put(n, t, buf);
}

static void put_share(const nego *n, polis_text *t, int32_t k)
{
    put_number(n, t, (double)k / (double)n->p.grid);
}

static void put_groups(const nego *n, polis_text *t, bool json)
{
    const polis_social_api *s = n->social;
    int32_t G = s->max_groups(s->self);
    bool any = false;
    for (int32_t g = 0; g < G; g++) {
        if (!s->group_alive(s->self, g)) continue;
        int32_t m = s->members(s->self, g, n->scratch, n->P);
        if (json)
            n->h->text_printf(t, "%s{\"id\": %d, \"weights\": {", any ? ", " : "", g);
        else
            n->h->text_printf(t, "%s group %d:", any ? ";" : "", g);
        for (int32_t i = 0; i < m && i < n->P; i++) {
            double w = 0.0;
            s->get(s->self, n->P + g, n->scratch[i], n->a_score, &w);
            if (json) {
                n->h->text_printf(t, "%s\"%d\": ", i ? ", " : "", n->scratch[i]);
                put_number(n, t, w);
            } else {
                n->h->text_printf(t, "%s %s %.4g", i ? "," : "", name_of(n, n->scratch[i]), w);
            }
        }
        if (json) put(n, t, "}}");
        any = true;
    }
    if (!any && !json) put(n, t, " none");
}

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    nego *n = ud;
    const polis_host *h = n->h;
    int64_t tn = now(n), max = h->max_steps(ctx);
    int32_t b = n->partner[agent];
    if (tn < n->p.steps) {
        h->text_printf(t,
                       "Negotiation: negotiation stage, step %lld of %lld (then the physical "
                       "stage until step %lld; physical actions wait until then).\n",
                       (long long)tn, (long long)n->p.steps, (long long)max);
        if (b >= 0) {
            h->text_printf(t, "You are bargaining with %s; it is %s turn.", name_of(n, b),
                           my_turn(n, agent) ? "your" : "their");
            if (n->pending[agent] == b) {
                h->text_printf(t, " %s proposes: %s gets ", name_of(n, b), name_of(n, b));
                put_share(n, t, n->claim[agent]);
                put(n, t, ", you get ");
                put_share(n, t, (int32_t)n->p.grid - n->claim[agent]);
                put(n, t, ".");
            } else if (n->pending[agent] == agent) {
                put(n, t, " Your proposal: you get ");
                put_share(n, t, n->claim[agent]);
                h->text_printf(t, ", %s gets ", name_of(n, b));
                put_share(n, t, (int32_t)n->p.grid - n->claim[agent]);
                put(n, t, ".");
            }
            if (my_turn(n, agent)) {
                put(n, t,
                    n->pending[agent] == b       ? " Answer \"accept\", \"decline\" or "
                                                   "\"propose <your share>\" ("
                    : n->pending[agent] == agent ? " Say \"decline\" or \"propose <your "
                                                   "share>\" ("
                                                 : " Open with \"propose <your share>\" (");
                put_share(n, t, 1);
                put(n, t, " .. ");
                put_share(n, t, n->K);
                put(n, t, ").");
            } else {
                put(n, t, " Wait (noop).");
            }
            if (n->p.session_turns > 0)
                h->text_printf(t, " The session breaks up after %lld turns (%d taken).",
                               (long long)n->p.session_turns, (int)n->turns[agent]);
            put(n, t, "\n");
        } else {
            put(n, t, "You are not bargaining. You may request:");
            bool any = false;
            for (int32_t j = 0; j < n->P; j++) {
                if (!invitable(n, agent, j)) continue;
                h->text_printf(t, "%s %s", any ? "," : "", name_of(n, j));
                any = true;
            }
            put(n, t,
                any ? " (\"request <name>\"; bargaining starts when you request each "
                      "other in the same step).\n"
                    : " nobody.\n");
        }
        bool any = false;
        for (int32_t a = 0; a < n->P; a++) {
            if (n->partner[a] <= a || a == agent || n->partner[a] == agent) continue;
            h->text_printf(t, "%s %s with %s", any ? "," : "Bargaining now:", name_of(n, a),
                           name_of(n, n->partner[a]));
            any = true;
        }
        if (any) put(n, t, ".\n");
    } else {
        h->text_printf(t,
                       "Negotiation: physical stage, step %lld of %lld. The agreements are "
                       "fixed.\n",
                       (long long)tn, (long long)max);
    }
    put(n, t, "Groups (reward weights):");
    put_groups(n, t, false);
    put(n, t, ".\n");
    if (n->group[agent] >= 0) {
        double w = 0.0;
        n->social->get(n->social->self, n->P + n->group[agent], agent, n->a_score, &w);
        h->text_printf(t,
                       "You are in group %d with weight %.4g: you get that share of every "
                       "member's reward.\n",
                       n->group[agent], w);
    } else {
        put(n, t, "You are in no group: you keep your own rewards.\n");
    }
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    nego *n = ud;
    const polis_host *h = n->h;
    int64_t tn = now(n);
    int32_t b = n->partner[agent];
    h->text_printf(t,
                   "{\"stage\": \"%s\", \"step\": %lld, \"negotiation_steps\": %lld, "
                   "\"proposal_grid\": %lld, \"opponent\": %d, \"your_turn\": %s, "
                   "\"pending\": ",
                   tn < n->p.steps ? "negotiation" : "physical", (long long)tn,
                   (long long)n->p.steps, (long long)n->p.grid, (int)b,
                   my_turn(n, agent) ? "true" : "false");
    if (b >= 0 && n->pending[agent] >= 0) {
        h->text_printf(t, "{\"by\": %d, \"share\": ", n->pending[agent]);
        put_number(n, t, (double)n->claim[agent] / (double)n->p.grid);
        put(n, t, "}");
    } else
        put(n, t, "null");
    h->text_printf(t, ", \"turns\": %d, \"available\": [", b >= 0 ? (int)n->turns[agent] : 0);
    bool any = false;
    for (int32_t j = 0; j < n->P; j++) {
        if (!(tn < n->p.steps && invitable(n, agent, j))) continue;
        h->text_printf(t, "%s%d", any ? ", " : "", j);
        any = true;
    }
    put(n, t, "], \"sessions\": [");
    any = false;
    for (int32_t a = 0; a < n->P; a++) {
        if (n->partner[a] <= a) continue;
        h->text_printf(t, "%s{\"agents\": [%d, %d], \"turn\": %d}", any ? ", " : "", a,
                       n->partner[a], n->mover[a]);
        any = true;
    }
    put(n, t, "], \"groups\": [");
    put_groups(n, t, true);
    h->text_printf(t, "], \"group\": %d}", (int)n->group[agent]);
    return POLIS_OK;
}

/* A share on the grid from "0.6", "60%" or "3/5"; -1 when it is not a number at all, 0 when
 * it is a number off the grid. */
static int32_t grid_point(const nego *n, const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s) return -1;
    if (*end == '%') {
        v /= 100.0;
        end++;
    } else if (*end == '/') {
        char *e2 = NULL;
        double d = strtod(end + 1, &e2);
        if (e2 == end + 1 || d == 0.0) return -1;
        v /= d;
        end = e2;
    }
    while (*end == ' ') end++;
    if (*end || !isfinite(v)) return -1;
    double k = v * (double)n->p.grid;
    double r = floor(k + 0.5);
    /* 1e-6 of a share: the six digits of an action name ("propose_0.142857") still match */
    if (fabs(v - r / (double)n->p.grid) > 1e-6 || r < 1 || r > n->K) return 0;
    return (int32_t)r;
}

static int32_t agent_named(const nego *n, const char *s)
{
    for (int32_t a = 0; a < n->P; a++)
        if (strcmp(name_of(n, a), s) == 0) return a;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end != s && !*end && v >= 0 && v < n->P) return (int32_t)v;
    return -1;
}

/* "propose 0.6" (60%, 3/5), "accept", "decline" (reject), "request miner_3" (or an id). */
static polis_status parse(polis_ctx *ctx, void *ud, int32_t agent, const char *input, int32_t *out)
{
    nego *n = ud;
    char buf[128];
    size_t len = strlen(input);
    if (len >= sizeof buf) return POLIS_ERR_ACTION;
    memcpy(buf, input, len + 1);
    char *arg = buf;
    while (*arg && *arg != ' ' && *arg != '\t') {
        *arg = (char)tolower((unsigned char)*arg);
        arg++;
    }
    if (*arg) *arg++ = '\0';
    while (*arg == ' ' || *arg == '\t') arg++;
    const char *verb = buf;
    if (!strcmp(verb, "accept") || !strcmp(verb, "decline") || !strcmp(verb, "reject")) {
        if (*arg) {
            n->h->error(ctx, "\"%.64s\": \"%s\" takes no argument", input, verb);
            return POLIS_ERR_INVALID;
        }
        *out = verb[0] == 'a' ? n->act_accept : n->act_decline;
        return POLIS_OK;
    }
    if (!strcmp(verb, "propose")) {
        int32_t k = *arg ? grid_point(n, arg) : -1;
        if (k <= 0) {
            char lo[32], hi[32];
            snprintf(lo, sizeof lo, "%g", 1.0 / (double)n->p.grid);
            snprintf(hi, sizeof hi, "%g", (double)n->K / (double)n->p.grid);
            if (k == 0)
                n->h->error(ctx,
                            "\"%.64s\": %s is not on the proposal grid (multiples of %s "
                            "from %s to %s)",
                            input, arg, lo, lo, hi);
            else
                n->h->error(ctx,
                            "\"%.64s\": expected \"propose <your share>\", a share from "
                            "%s to %s in steps of %s (\"propose 0.6\", \"propose 60%%\")",
                            input, lo, hi, lo);
            return POLIS_ERR_INVALID;
        }
        *out = n->act_propose + k - 1;
        return POLIS_OK;
    }
    if (!strcmp(verb, "request")) {
        int32_t j = *arg ? agent_named(n, arg) : -1;
        if (j < 0) {
            n->h->error(ctx, "\"%.64s\": expected \"request <agent name or id>\"%s%s%s", input,
                        *arg ? "; there is no agent \"" : "", *arg ? arg : "", *arg ? "\"" : "");
            return POLIS_ERR_INVALID;
        }
        *out = n->act_request + j;
        return POLIS_OK;
    }
    return POLIS_ERR_ACTION;
}

/* ---- the scripted policy -------------------------------------------------------------------- */

static bool greedy_available(const polis_society_api *s)
{
    return s &&
           s->struct_size >= offsetof(polis_society_api, greedy_action) + sizeof s->greedy_action &&
           s->greedy_action;
}

static int32_t group_size(const nego *n, int32_t a)
{
    return n->group[a] >= 0 ? n->social->members(n->social->self, n->group[a], NULL, 0) : 1;
}

/* The agent still looks for a partner: its group (or itself alone) has one kind only. */
static bool seeking(const nego *n, int32_t a)
{
    if (n->partner[a] >= 0) return false;
    if (n->group[a] < 0) return true;
    int32_t m = n->social->members(n->social->self, n->group[a], n->size, n->P);
    for (int32_t i = 0; i < m && i < n->P; i++)
        if (n->kind[n->size[i]] != n->kind[a]) return false;
    return true;
}

/* Negotiation's baseline. Seekers pair up with the first seeker of another kind by id, the
 * same pairing every agent computes, so requests are mutual. In a session the mover claims
 * its fair share (its group's size over both groups' sizes, on the grid) and accepts an offer
 * within one grid step of fair. In the physical stage: society's greedy action. */
static polis_status policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    nego *n = ud;
    *out = 0;
    if (!stage(n)) {
        if (greedy_available(n->society))
            return n->society->greedy_action(n->society->self, ctx, agent, out);
        return POLIS_OK;
    }
    int32_t b = n->partner[agent];
    if (b >= 0) {
        if (!my_turn(n, agent)) return POLIS_OK;
        int32_t mine = group_size(n, agent), theirs = group_size(n, b);
        int32_t fair = (int32_t)floor((double)n->p.grid * mine / (mine + theirs) + 0.5);
        if (fair < 1) fair = 1;
        if (fair > n->K) fair = n->K;
        if (n->pending[agent] == b && (int32_t)n->p.grid - n->claim[agent] >= fair - 1) {
            *out = n->act_accept;
            return POLIS_OK;
        }
        *out = n->act_propose + fair - 1;
        return POLIS_OK;
    }
    if (!seeking(n, agent)) return POLIS_OK;
    /* scratch[a]: a's partner in the pairing, -1 unpaired */
    for (int32_t a = 0; a < n->P; a++) n->scratch[a] = -1;
    for (int32_t a = 0; a < n->P; a++) {
        if (n->scratch[a] >= 0 || !seeking(n, a)) continue;
        for (int32_t j = a + 1; j < n->P; j++) {
            if (n->scratch[j] >= 0 || n->kind[j] == n->kind[a] || !seeking(n, j) ||
                !invitable(n, a, j))
                continue;
            n->scratch[a] = j;
            n->scratch[j] = a;
            break;
        }
        if (a == agent) break;
    }
    if (n->scratch[agent] >= 0) *out = n->act_request + n->scratch[agent];
    return POLIS_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void assign_kinds(nego *n)
{
    for (int32_t a = 0; a < n->P; a++) {
        const char *na = name_of(n, a);
        size_t la = strlen(na);
        const char *u = strrchr(na, '_');
        if (u && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1)) la = (size_t)(u - na);
        n->kind[a] = a;
        for (int32_t b = 0; b < a; b++) {
            const char *nb = name_of(n, b);
            if (n->kind[b] == b && strncmp(na, nb, la) == 0 && nb[la] == '_' && nb[la + 1] &&
                strspn(nb + la + 1, "0123456789") == strlen(nb + la + 1)) {
                n->kind[a] = b;
                break;
            }
        }
    }
}

static polis_status register_actions(nego *n)
{
    const polis_host *h = n->h;
    polis_status st;
    char name[64], doc[160];
    for (int32_t j = 0; j < n->P; j++) {
        snprintf(name, sizeof name, "request_%d", j);
        snprintf(doc, sizeof doc,
                 "ask agent %d (%s) to bargain; a session starts when it asks "
                 "you in the same step",
                 j, name_of(n, j));
        polis_action_def d = {.name = name,
                              .doc = doc,
                              .handler = request_act,
                              .legal = request_legal,
                              .arg = j,
                              .ud = n};
        if ((st = h->action(n->ctx, &d, j == 0 ? &n->act_request : NULL))) return st;
    }
    polis_action_def acc = {.name = "accept",
                            .doc = "accept the opponent's pending proposal",
                            .handler = accept_act,
                            .legal = accept_legal,
                            .ud = n};
    polis_action_def dec = {.name = "decline",
                            .doc = "decline: end the bargaining session without an agreement",
                            .handler = decline_act,
                            .legal = decline_legal,
                            .ud = n};
    if ((st = h->action(n->ctx, &acc, &n->act_accept)) ||
        (st = h->action(n->ctx, &dec, &n->act_decline)))
        return st;
    for (int32_t k = 1; k <= n->K; k++) {
        double w = (double)k / (double)n->p.grid;
        snprintf(name, sizeof name, "propose_%g", w);
        snprintf(doc, sizeof doc, "propose the split: you get %g, the opponent %g", w, 1.0 - w);
        polis_action_def d = {.name = name,
                              .doc = doc,
                              .handler = propose_act,
                              .legal = propose_legal,
                              .arg = k,
                              .ud = n};
        if ((st = h->action(n->ctx, &d, k == 1 ? &n->act_propose : NULL))) return st;
    }
    return POLIS_OK;
}

static polis_status register_fields(nego *n)
{
    const polis_host *h = n->h;
    polis_status st;
    polis_obs_def defs[4] = {
        {.name = "proposal",
         .doc = "[P] the share agent j claims for itself in its pending proposal to you (0: "
                "none)",
         .dtype = POLIS_DTYPE_F32,
         .ndim = 1,
         .shape = {n->P},
         .write = write_proposal,
         .ud = n},
        {.name = "final_split",
         .doc = "[P] each agent's weight in its group (1: in none)",
         .dtype = POLIS_DTYPE_F32,
         .ndim = 1,
         .shape = {n->P},
         .write = write_split,
         .ud = n},
        {.name = "available_player",
         .doc = "[P] 1 for the agents you may request now",
         .dtype = POLIS_DTYPE_I8,
         .ndim = 1,
         .shape = {n->P},
         .write = write_available,
         .ud = n},
        {.name = "negotiation",
         .doc = "[stage (0 negotiation, 1 physical), opponent (-1 none), 1 on your turn, "
                "negotiation steps left]",
         .dtype = POLIS_DTYPE_I32,
         .ndim = 1,
         .shape = {4},
         .write = write_state,
         .ud = n},
    };
    int32_t ids[4];
    for (int i = 0; i < 4; i++)
        if ((st = h->observation(n->ctx, &defs[i], &ids[i]))) return st;
    const double zero = 0, one = 1;
    const double slo[4] = {0, -1, 0, 0},
                 shi[4] = {1, n->P - 1, 1,
                           (double)(n->p.steps < INT32_MAX ? n->p.steps : INT32_MAX)};
    for (int i = 0; i < 3; i++)
        if ((st = h->obs_range(n->ctx, ids[i], -1, 1, &zero, &one))) return st;
    if ((st = h->obs_range(n->ctx, ids[3], 0, 4, slo, shi)) ||
        (st = polis_kit_writes_stored(h, n->ctx, ids[3], &n->state_obs)))
        return st;
    static const polis_field_def pair[3] = {
        {"a", POLIS_FIELD_I32}, {"b", POLIS_FIELD_I32}, {"first", POLIS_FIELD_I32}};
    static const polis_field_def prop[3] = {
        {"agent", POLIS_FIELD_I32}, {"opponent", POLIS_FIELD_I32}, {"share", POLIS_FIELD_F64}};
    static const polis_field_def agr[4] = {{"agent", POLIS_FIELD_I32},
                                           {"opponent", POLIS_FIELD_I32},
                                           {"share", POLIS_FIELD_F64},
                                           {"group", POLIS_FIELD_I32}};
    static const polis_field_def end[3] = {
        {"a", POLIS_FIELD_I32}, {"b", POLIS_FIELD_I32}, {"reason", POLIS_FIELD_I32}};
    if ((st = h->event_type(n->ctx, "negotiation.matched", pair, 3, &n->ev_matched)) ||
        (st = h->event_type(n->ctx, "negotiation.proposed", prop, 3, &n->ev_proposed)) ||
        (st = h->event_type(n->ctx, "negotiation.agreed", agr, 4, &n->ev_agreed)) ||
        (st = h->event_type(n->ctx, "negotiation.ended", end, 3, &n->ev_ended)))
        return st;
    return POLIS_OK;
}

static polis_status nego_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    nego *n = h->alloc(ctx, sizeof *n);
    if (!n) return POLIS_ERR_NOMEM;
    *state = n;
    n->h = h;
    n->ctx = ctx;
    memcpy(&n->p, params, sizeof n->p);
    n->P = h->n_agents(ctx);
    n->K = (int32_t)n->p.grid - 1;
    int32_t **arrays[] = {&n->partner, &n->mover, &n->pending, &n->claim,   &n->turns,
                          &n->request, &n->group, &n->kind,    &n->scratch, &n->size};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = h->alloc(ctx, (size_t)n->P * sizeof(int32_t)))) return POLIS_ERR_NOMEM;
    if (!(n->written = h->alloc(ctx, (size_t)n->P * sizeof(void *)))) return POLIS_ERR_NOMEM;
    polis_status st;
    if ((st = register_actions(n)) || (st = register_fields(n)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, n)) ||
        (st = h->mask_filter(ctx, mask_stage, n)) ||
        (st = h->hook(ctx, POLIS_PHASE_POST, 0, on_post, n)) ||
        (st = h->hook(ctx, POLIS_PHASE_OBSERVE, 0, on_observe, n)))
        return st;
    if ((st = h->renderer(ctx, "text", render_text, n)) ||
        (st = h->renderer(ctx, "json", render_json, n)) || (st = h->action_parser(ctx, parse, n)) ||
        (st = h->policy(ctx, "scripted", policy, n)))
        return st;
    return POLIS_OK;
}

static polis_status nego_start(polis_ctx *ctx, void *state)
{
    nego *n = state;
    const polis_host *h = n->h;
    n->social = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (!n->social || n->social->struct_size < offsetof(polis_social_api, end_bargaining) +
                                                   sizeof n->social->end_bargaining) {
        h->error(ctx, "needs the social plugin (service \"social\" version 2)");
        return POLIS_ERR_CONFIG;
    }
    const polis_society_api *soc = h->service(ctx, POLIS_SOCIETY_SERVICE);
    n->society =
        soc && soc->struct_size >= offsetof(polis_society_api, position) + sizeof soc->position
            ? soc
            : NULL;
    const polis_social_api *s = n->social;
    n->a_score = s->attr_id(s->self, "score");
    n->a_parity = s->attr_id(s->self, "parity");
    n->a_proposal = s->attr_id(s->self, "proposal");
    if (n->a_score < 0 || n->a_parity < 0 || n->a_proposal < 0) {
        h->error(ctx, "the social plugin's attribute table is full (raise its \"max_attrs\")");
        return POLIS_ERR_LIMIT;
    }
    int32_t G = s->max_groups(s->self);
    if (G < n->P / 2) {
        h->error(ctx,
                 "the social plugin has max_groups %d, but %d agents can form up to %d "
                 "groups by agreement (set plugins.social.params.max_groups to at least "
                 "%d)",
                 G, n->P, n->P / 2, n->P / 2);
        return POLIS_ERR_CONFIG;
    }
    /* An episode limit inside the negotiation stage is allowed: the episode is truncated
     * there, with no physical stage (PettingZoo's max_cycles_test asks for 4 steps). */
    assign_kinds(n);
    return POLIS_OK;
}

static void nego_destroy(polis_ctx *ctx, void *state)
{
    nego *n = state;
    if (!n) return;
    int32_t *arrays[] = {n->partner, n->mover, n->pending, n->claim,   n->turns,
                         n->request, n->group, n->kind,    n->scratch, n->size};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (arrays[i]) n->h->free(ctx, arrays[i], (size_t)n->P * sizeof(int32_t));
    if (n->written) n->h->free(ctx, n->written, (size_t)n->P * sizeof(void *));
    n->h->free(ctx, n, sizeof *n);
}

static const polis_param_def nego_params_def[] = {
    POLIS_P_INT(nego_params, "negotiation_steps", steps, 1, 1000000, 20,
                "steps of the negotiation stage (steps 0 .. n-1); the physical stage follows"),
    POLIS_P_INT(nego_params, "proposal_grid", grid, 2, 1000, 10,
                "proposals are k / grid for k = 1 .. grid-1 (10: tenths, 0.1 .. 0.9)"),
    POLIS_P_INT(nego_params, "session_turns", session_turns, 0, 1000000, 0,
                "a session without agreement breaks up after this many turns (0: only at the end "
                "of the stage)"),
};

static const char *const nego_requires[] = {"social", NULL};

static const polis_plugin_desc nego_desc = {
    POLIS_DESC_HEAD("negotiation", 4),
    .version = "1.0.0",
    .doc = "AdaSociety's Negotiation: requests, turn-based bargaining over reward splits, "
           "groups whose weights multiply through, then the physical stage",
    .requires = nego_requires,
    POLIS_DESC_PARAMS(nego_params_def, nego_params),
    .init = nego_init,
    .start = nego_start,
    .destroy = nego_destroy,
};

POLIS_PLUGIN(nego_desc)
