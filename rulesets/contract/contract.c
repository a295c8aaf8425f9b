/*
 * contract — AdaSociety's Contract mini-game (seeds/000 §4, specs/adasociety.md §14.5, §15.1)
 * as a stage controller over the `society` ruleset and the `social` plugin.
 *
 * Formation stage, steps t < c·N: one agent acts per step, turn_order[t mod N], where
 * turn_order is a permutation drawn from the env RNG at every reset. It may choose a group
 * node (the social plugin's choose_group family: leave the group it chose before, join this
 * one with division_weight 1) or pass (noop); everyone else may only noop. Physical stage,
 * t >= c·N: everyone acts with physical actions at once and social's
 * split_score_to_group(division_weight) divides rewards equally inside each group.
 *
 * Everything is done with general mechanisms, no kernel special case:
 *   OBSERVE  opens the choose_group gate (social's `allow`) for the agent whose turn comes
 *            next and closes it for everyone else, so the masks written right after show the
 *            stage (all gates are closed in the physical stage);
 *   masks    a kernel mask filter (host->mask_filter) leaves the turn agent only its
 *            choose_group actions and everyone else only noop, so any other action is a
 *            masked one: a no-op flagged in io->illegal.
 * README.md beside this file is the reference.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/kit.h"
#include "polis/social.h"
#include "polis/society.h"

typedef struct contract_params {
    int64_t rounds;
    const char *family;
} contract_params;

typedef struct contract {
    const polis_host *h;
    polis_ctx *ctx;
    contract_params p;
    const polis_social_api *social;
    const polis_society_api *society; /* NULL without the society ruleset */
    int32_t P, G;
    int32_t family;       /* index of the choose_group family in the social plugin */
    int32_t first_action; /* id of <family>_0; the family has G actions */
    int32_t weight_attr;  /* division_weight, or the family's attribute (for views) */
    int64_t formation;    /* c·N steps */
    int32_t *order;       /* [P] this episode's turn order */
    int32_t *kind;        /* [P] agent kinds (name without "_<digits>"), for the policy */
    int32_t *scratch;     /* [P] */
    polis_kit_stored obs; /* the "contract" field, written in the dtype the env stores */
} contract;

/* ---- helpers ------------------------------------------------------------------------------- */

static int64_t now(const contract *c) { return c->h->tick(c->ctx); }

/* The agent whose turn it is at step t of the formation stage, or -1 outside it. */
static int32_t turn_at(const contract *c, int64_t t)
{
    return t >= 0 && t < c->formation ? c->order[t % c->P] : -1;
}

static bool family_action(const contract *c, int32_t id)
{
    return id >= c->first_action && id < c->first_action + c->G;
}

/* The group the agent chose (its lowest group with the family's weight), or -1. */
static int32_t group_of(const contract *c, int32_t agent)
{
    int32_t g = -1;
    return c->social->groups_of(c->social->self, agent, c->weight_attr, &g, 1) > 0 ? g : -1;
}

/* ---- hooks --------------------------------------------------------------------------------- */

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    contract *c = ud;
    polis_kit_stored_ask(ctx, &c->obs);
    polis_rng *rng = c->h->rng(ctx);
    for (int32_t i = 0; i < c->P; i++) c->order[i] = i;
    for (int32_t i = c->P - 1; i > 0; i--) {
        int32_t j = (int32_t)polis_rng_below(rng, (uint32_t)i + 1);
        int32_t t = c->order[i];
        c->order[i] = c->order[j];
        c->order[j] = t;
    }
    return POLIS_OK;
}

/* Before the masks: only the next step's turn agent may choose a group. */
static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    contract *c = ud;
    const polis_social_api *s = c->social;
    polis_status st = s->allow(s->self, ctx, -1, c->family, false);
    int32_t turn = turn_at(c, now(c));
    if (!st && turn >= 0) st = s->allow(s->self, ctx, turn, c->family, true);
    return st;
}

/* The masks of the formation stage: the turn agent may only choose a group (or pass),
 * everyone else may only pass — society's physical actions included, so a policy that
 * follows the masks never sends an action the stage refuses. */
static void mask_stage(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    contract *c = ud;
    int32_t turn = turn_at(c, now(c));
    if (turn < 0) return;
    int32_t n = c->h->io(ctx)->n_actions;
    for (int32_t k = 1; k < n; k++)
        if (agent != turn || !family_action(c, k)) row[k] = 0;
}

/* ---- observation --------------------------------------------------------------------------- */

/* [stage (0 formation, 1 physical), the agent whose turn it is (-1 in the physical stage),
 *  steps left in the formation stage], in the dtype the env stores (i8 or i16 with compact
 *  observations: the values lie inside declare_range's ranges by construction). */
static void write_contract(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    contract *c = ud;
    int64_t t = now(c);
    const int32_t v[3] = {t < c->formation ? 0 : 1, turn_at(c, t),
                          t < c->formation ? (int32_t)(c->formation - t) : 0};
    polis_kit_put_stored(&c->obs, dst, v, 3);
}

/* ---- views --------------------------------------------------------------------------------- */

static void put(const contract *c, polis_text *t, const char *s)
{
    c->h->text_append(t, s, strlen(s));
}

static const char *name_of(const contract *c, int32_t a) { return c->h->agent_name(c->ctx, a); }

/* "carpenter_0, miner_2" or "nobody"; members of g other than `skip`. */
static void put_members(const contract *c, polis_text *t, int32_t g, int32_t skip)
{
    int32_t n = c->social->members(c->social->self, g, c->scratch, c->P);
    bool any = false;
    for (int32_t i = 0; i < n && i < c->P; i++) {
        if (c->scratch[i] == skip) continue;
        c->h->text_printf(t, "%s%s", any ? ", " : "", name_of(c, c->scratch[i]));
        any = true;
    }
    if (!any) put(c, t, skip >= 0 ? "nobody else" : "empty");
}

static int64_t next_turn(const contract *c, int32_t agent, int64_t t)
{
    for (int64_t u = t; u < c->formation; u++)
        if (turn_at(c, u) == agent) return u;
    return -1;
}

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    contract *c = ud;
    const polis_host *h = c->h;
    int64_t now_t = now(c), max = h->max_steps(ctx);
    int32_t mine = group_of(c, agent);
    if (now_t < c->formation) {
        h->text_printf(t,
                       "Contract: formation stage, step %lld of %lld (then the physical stage "
                       "until step %lld).\n",
                       (long long)now_t, (long long)c->formation, (long long)max);
        put(c, t, "Turn order:");
        for (int32_t i = 0; i < c->P; i++)
            h->text_printf(t, "%s %s", i ? "," : "", name_of(c, c->order[i]));
        put(c, t, ".\n");
        int32_t turn = turn_at(c, now_t);
        if (turn == agent) {
            put(c, t,
                "It is your turn: join a group (\"join group <g>\": you leave your "
                "current group) or pass (\"noop\"). Physical actions wait for the "
                "physical stage.\n");
        } else {
            int64_t nt = next_turn(c, agent, now_t);
            h->text_printf(t, "It is %s's turn; you wait (noop).", name_of(c, turn));
            if (nt >= 0)
                h->text_printf(t, " Your next turn is at step %lld.\n", (long long)nt);
            else
                put(c, t, " You have no turn left.\n");
        }
    } else {
        h->text_printf(t,
                       "Contract: physical stage, step %lld of %lld. The contracts are "
                       "fixed.\n",
                       (long long)now_t, (long long)max);
    }
    put(c, t, "Groups:");
    for (int32_t g = 0, any = 0; g < c->G; g++) {
        if (!c->social->group_alive(c->social->self, g)) continue;
        h->text_printf(t, "%s group %d: ", any++ ? ";" : "", g);
        put_members(c, t, g, -1);
    }
    put(c, t, ".\n");
    if (mine >= 0) {
        h->text_printf(t, "You are in group %d with ", mine);
        put_members(c, t, mine, agent);
        put(c, t, "; rewards are split equally inside the group.\n");
    } else {
        put(c, t, "You are in no group: you keep your own rewards.\n");
    }
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    contract *c = ud;
    const polis_host *h = c->h;
    int64_t now_t = now(c);
    bool formation = now_t < c->formation;
    h->text_printf(t,
                   "{\"stage\": \"%s\", \"step\": %lld, \"formation_steps\": %lld, "
                   "\"turn\": %d, \"next_turn\": %lld, \"turn_order\": [",
                   formation ? "formation" : "physical", (long long)now_t, (long long)c->formation,
                   (int)turn_at(c, now_t), (long long)next_turn(c, agent, now_t));
    for (int32_t i = 0; i < c->P; i++) h->text_printf(t, "%s%d", i ? ", " : "", c->order[i]);
    put(c, t, "], \"groups\": [");
    for (int32_t g = 0, any = 0; g < c->G; g++) {
        if (!c->social->group_alive(c->social->self, g)) continue;
        h->text_printf(t, "%s{\"id\": %d, \"members\": [", any++ ? ", " : "", g);
        int32_t n = c->social->members(c->social->self, g, c->scratch, c->P);
        for (int32_t i = 0; i < n && i < c->P; i++)
            h->text_printf(t, "%s%d", i ? ", " : "", c->scratch[i]);
        put(c, t, "]}");
    }
    h->text_printf(t, "], \"group\": %d}", (int)group_of(c, agent));
    return POLIS_OK;
}

/* "join group 2", "choose group 2", "join 2", "group 2", "join_group 2", "choose_group_2". */
static polis_status parse(polis_ctx *ctx, void *ud, int32_t agent, const char *input, int32_t *out)
{
    contract *c = ud;
    char buf[96];
    size_t n = 0;
    if (strlen(input) >= sizeof buf) return POLIS_ERR_ACTION; /* no group choice is this long */
    for (const char *p = input; *p; p++)
        buf[n++] = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
    buf[n] = '\0';
    const char *p = buf;
    bool verb = false;
    static const char *const verbs[] = {"join", "choose"};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(verbs[i]);
        if (strncmp(p, verbs[i], k) == 0 && (p[k] == ' ' || p[k] == '\0')) {
            p += k;
            verb = true;
            break;
        }
    }
    while (*p == ' ') p++;
    bool word = strncmp(p, "group", 5) == 0 && (p[5] == ' ' || p[5] == '\0');
    if (word) p += 5;
    if (!verb && !word) return POLIS_ERR_ACTION;
    while (*p == ' ') p++;
    char *end = NULL;
    long g = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
    if (end)
        while (*end == ' ') end++;
    if (g < 0 || !end || *end) {
        c->h->error(ctx, "\"%.64s\": expected \"join group <g>\" with a group number 0..%d", input,
                    c->G - 1);
        return POLIS_ERR_INVALID;
    }
    if (g >= c->G) {
        c->h->error(ctx, "\"%.64s\": there is no group %ld (groups 0..%d)", input, g, c->G - 1);
        return POLIS_ERR_INVALID;
    }
    *out = c->first_action + (int32_t)g;
    return POLIS_OK;
}

/* ---- the scripted policy ------------------------------------------------------------------- */

/* Contract's baseline: on its turn an agent pairs up with other kinds (carpenters with
 * miners): it stays in a group whose other members are all of other kinds, else joins the
 * lowest such group, else stays alone in a group or starts an empty one. In the physical
 * stage it plays society's greedy action. */
static bool group_fits(const contract *c, int32_t g, int32_t agent, int32_t *others)
{
    int32_t n = c->social->members(c->social->self, g, c->scratch, c->P);
    int32_t other = 0;
    for (int32_t i = 0; i < n && i < c->P; i++) {
        int32_t m = c->scratch[i];
        if (m == agent) continue;
        if (c->kind[m] == c->kind[agent]) return false;
        other++;
    }
    *others = other;
    return true;
}

static bool greedy_available(const polis_society_api *s)
{
    return s &&
           s->struct_size >= offsetof(polis_society_api, greedy_action) + sizeof s->greedy_action &&
           s->greedy_action;
}

static polis_status policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out)
{
    contract *c = ud;
    int64_t t = now(c);
    *out = 0;
    if (t >= c->formation) {
        if (greedy_available(c->society))
            return c->society->greedy_action(c->society->self, ctx, agent, out);
        return POLIS_OK;
    }
    if (turn_at(c, t) != agent) return POLIS_OK;
    int32_t mine = group_of(c, agent), empty = -1, pair = -1;
    bool alone = false;
    if (mine >= 0) {
        int32_t o = 0;
        bool fits = group_fits(c, mine, agent, &o);
        if (fits && o > 0) return POLIS_OK;
        alone = fits;
    }
    for (int32_t g = 0; g < c->G; g++) {
        int32_t o = 0;
        if (g == mine || !c->social->group_alive(c->social->self, g) ||
            !group_fits(c, g, agent, &o))
            continue;
        if (o > 0 && pair < 0) pair = g;
        if (o == 0 && empty < 0) empty = g;
    }
    if (pair >= 0)
        *out = c->first_action + pair;
    else if (!alone && empty >= 0)
        *out = c->first_action + empty;
    return POLIS_OK;
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

/* Kinds from names: "carpenter_0" and "carpenter_1" are one kind; a name without a numeric
 * suffix is a kind of its own. */
static void assign_kinds(contract *c)
{
    for (int32_t a = 0; a < c->P; a++) {
        const char *na = name_of(c, a);
        size_t la = strlen(na);
        const char *u = strrchr(na, '_');
        if (u && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1)) la = (size_t)(u - na);
        c->kind[a] = a;
        for (int32_t b = 0; b < a; b++) {
            const char *nb = name_of(c, b);
            if (c->kind[b] == b && strncmp(na, nb, la) == 0 && nb[la] == '_' &&
                strspn(nb + la + 1, "0123456789") == strlen(nb + la + 1) && nb[la + 1]) {
                c->kind[a] = b;
                break;
            }
        }
    }
}

/* [stage 0..1, turn -1..P-1, formation steps left 0..c·N] (plugin ABI 1.4). */
static polis_status declare_range(const contract *c, polis_ctx *ctx, int32_t id)
{
    const polis_host *h = c->h;
    const double lo[3] = {0, -1, 0},
                 hi[3] = {1, c->P - 1,
                          (double)(c->formation < INT32_MAX ? c->formation : INT32_MAX)};
    return h->obs_range(ctx, id, 0, 3, lo, hi);
}

static polis_status contract_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                  void **state)
{
    contract *c = h->alloc(ctx, sizeof *c);
    if (!c) return POLIS_ERR_NOMEM;
    *state = c;
    c->h = h;
    c->ctx = ctx;
    memcpy(&c->p, params, sizeof c->p);
    c->P = h->n_agents(ctx);
    size_t n = (size_t)c->P;
    if (!(c->order = h->alloc(ctx, n * sizeof(int32_t))) ||
        !(c->kind = h->alloc(ctx, n * sizeof(int32_t))) ||
        !(c->scratch = h->alloc(ctx, n * sizeof(int32_t))))
        return POLIS_ERR_NOMEM;
    c->formation = c->p.rounds * c->P;
    polis_status st;
    polis_obs_def obs = {.name = "contract",
                         .doc = "[stage (0 formation, 1 physical), the agent whose turn it is "
                                "(-1 in the physical stage), formation steps left]",
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {3},
                         .write = write_contract,
                         .ud = c};
    int32_t id_obs;
    if ((st = h->observation(ctx, &obs, &id_obs)) || (st = declare_range(c, ctx, id_obs)) ||
        (st = polis_kit_writes_stored(h, ctx, id_obs, &c->obs)) ||
        (st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, c)) ||
        (st = h->mask_filter(ctx, mask_stage, c)) ||
        (st = h->hook(ctx, POLIS_PHASE_OBSERVE, 0, on_observe, c)))
        return st;
    if ((st = h->renderer(ctx, "text", render_text, c)) ||
        (st = h->renderer(ctx, "json", render_json, c)) || (st = h->action_parser(ctx, parse, c)) ||
        (st = h->policy(ctx, "scripted", policy, c)))
        return st;
    return POLIS_OK;
}

/* The social plugin's actions exist once every plugin's init ran. */
static polis_status contract_start(polis_ctx *ctx, void *state)
{
    contract *c = state;
    const polis_host *h = c->h;
    c->social = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (!c->social || c->social->struct_size < offsetof(polis_social_api, end_bargaining) +
                                                   sizeof c->social->end_bargaining) {
        h->error(ctx, "needs the social plugin (service \"social\" version 2)");
        return POLIS_ERR_CONFIG;
    }
    const polis_society_api *soc = h->service(ctx, POLIS_SOCIETY_SERVICE);
    c->society =
        soc && soc->struct_size >= offsetof(polis_society_api, position) + sizeof soc->position
            ? soc
            : NULL;
    const char *fam = c->p.family;
    c->family = c->social->family_find(c->social->self, fam);
    if (c->family < 0) {
        h->error(ctx,
                 "family: the social plugin has no action family named \"%s\" (add "
                 "{\"family\": \"choose_group\", \"name\": \"%s\"} to its \"actions\")",
                 fam, fam);
        return POLIS_ERR_CONFIG;
    }
    c->G = c->social->max_groups(c->social->self);
    char name[160];
    snprintf(name, sizeof name, "%s_0", fam);
    c->first_action = h->action_find(ctx, name);
    snprintf(name, sizeof name, "%s_%d", fam, c->G - 1);
    int32_t last = h->action_find(ctx, name);
    snprintf(name, sizeof name, "%s_%d", fam, c->G);
    if (c->G < 1 || c->first_action < 0 || last != c->first_action + c->G - 1 ||
        h->action_find(ctx, name) >= 0) {
        h->error(ctx,
                 "family: \"%s\" must be a group family with one action per group "
                 "(%s_0 .. %s_%d); the social plugin has %d groups",
                 fam, fam, fam, c->G - 1, c->G);
        return POLIS_ERR_CONFIG;
    }
    c->weight_attr = c->social->attr_id(c->social->self, "division_weight");
    /* An episode limit inside the formation stage is allowed: the episode is truncated
     * there, with no physical stage (PettingZoo's max_cycles_test asks for 4 steps). */
    assign_kinds(c);
    return POLIS_OK;
}

static void contract_destroy(polis_ctx *ctx, void *state)
{
    contract *c = state;
    if (!c) return;
    size_t n = (size_t)c->P * sizeof(int32_t);
    if (c->order) c->h->free(ctx, c->order, n);
    if (c->kind) c->h->free(ctx, c->kind, n);
    if (c->scratch) c->h->free(ctx, c->scratch, n);
    c->h->free(ctx, c, sizeof *c);
}

static const polis_param_def contract_params_def[] = {
    POLIS_P_INT(contract_params, "rounds", rounds, 1, 1000000, 5,
                "c: the formation stage lasts c x agents steps, one turn per agent per round "
                "(AdaSociety's negotiation_round)"),
    POLIS_P_STRING(contract_params, "family", family, "choose_group",
                   "name of the social plugin's choose_group family the turns gate"),
};

static const char *const contract_requires[] = {"social", NULL};

static const polis_plugin_desc contract_desc = {
    POLIS_DESC_HEAD("contract", 4),
    .version = "1.0.0",
    .doc = "AdaSociety's Contract: c x N turns of group choice in a random order, then the "
           "physical stage with rewards split equally inside groups",
    .requires = contract_requires,
    POLIS_DESC_PARAMS(contract_params_def, contract_params),
    .init = contract_init,
    .start = contract_start,
    .destroy = contract_destroy,
};

POLIS_PLUGIN(contract_desc)
