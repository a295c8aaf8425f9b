/*
 * social_probe — a test plugin that drives the social service through its public contract
 * (include/polis/social.h) and shows the results to tests through public channels:
 *   - "ops": service calls at given ticks, in a BEGIN hook after social's (priority 100),
 *     or at reset (tick -1); "reward" ops set this step's reward of the "probe" function
 *   - observations: probe_get (values of [from, to, attr] queries, NaN when absent),
 *     probe_sharers / probe_sharers_player / probe_groups / probe_members / probe_live
 *     (count, then ids, -1 padded), probe_degree (out, in of the watched agent),
 *     probe_refused (accept_proposal calls refused as having nothing to accept)
 *   - every social bus event, logged with host->log using attribute names
 *   - "churn": that many random changes of the graph per step (sets, unsets, removed edges,
 *     groups created and deleted; attribute names c0, c1, ... interned as they first appear,
 *     more of them as the ticks go on, up to "churn_names"), from the env's generator
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"
#include "polis/social.h"

#define MAX_OPS 256
#define MAX_Q 64

typedef enum op_kind {
    OP_REWARD,
    OP_SET,
    OP_UNSET,
    OP_UNSET_FAMILY,
    OP_REMOVE_EDGE,
    OP_GROUP_CREATE,
    OP_GROUP_DELETE,
    OP_ALLOW,
    OP_COMMUNICATE,
    OP_REQUEST,
    OP_PROPOSE,
    OP_ACCEPT,
    OP_END,
    OP_COUNT
} op_kind;

static const char *const OP_NAMES[OP_COUNT] = {
    "reward",       "set",          "unset", "unset_family", "remove_edge",
    "group_create", "group_delete", "allow", "communicate",  "request",
    "propose",      "accept",       "end"};

typedef struct op {
    int64_t tick;
    op_kind kind;
    int64_t a, b;
    double value;
    char attr[64];
    int32_t attr_id;
    double words[8];
    int32_t n_words;
} op;

typedef struct probe_params {
    const polis_json *ops;
    const polis_json *queries;
    int64_t watch, watch_group;
    bool log_events;
    int64_t churn, churn_names;
} probe_params;

typedef struct probe {
    const polis_host *h;
    polis_ctx *ctx;
    probe_params p;
    const polis_social_api *soc;
    int32_t P, G;
    op ops[MAX_OPS];
    int32_t n_ops;
    int32_t q_from[MAX_Q], q_to[MAX_Q], q_attr[MAX_Q];
    char q_name[MAX_Q][64];
    int32_t n_q;
    float rewards[1024];
    int32_t refused;
    int32_t ev[7];
    uint64_t jseq;              /* the sharing journal's next change to read */
    int32_t journal[1 + 4 * 8]; /* probe_journal as agent 0's record got it */
    int32_t churn_attr[64];     /* the ids of c0, c1, ... (-1: not interned yet) */
    int64_t churn_ticks;        /* steps churned so far, over every episode */
} probe;

static polis_status run_op(probe *p, const op *o)
{
    const polis_social_api *s = p->soc;
    polis_ctx *c = p->ctx;
    int32_t a = (int32_t)o->a, b = (int32_t)o->b;
    polis_status st = POLIS_OK;
    switch (o->kind) {
    case OP_REWARD: p->rewards[a] += (float)o->value; break;
    case OP_SET: st = s->set(s->self, c, a, b, o->attr_id, o->value); break;
    case OP_UNSET: st = s->unset(s->self, c, a, b, o->attr_id); break;
    case OP_UNSET_FAMILY: st = s->unset_family(s->self, c, a, b, o->attr_id); break;
    case OP_REMOVE_EDGE: st = s->remove_edge(s->self, c, a, b); break;
    case OP_GROUP_CREATE: st = s->group_create(s->self, c, NULL); break;
    case OP_GROUP_DELETE: st = s->group_delete(s->self, c, a); break;
    case OP_ALLOW: st = s->allow(s->self, c, a, b, o->value != 0); break;
    case OP_COMMUNICATE: st = s->communicate(s->self, c, a, b, o->words, o->n_words); break;
    case OP_REQUEST: st = s->request_matching(s->self, c, a, b); break;
    case OP_PROPOSE: st = s->propose(s->self, c, a, b, o->value); break;
    case OP_ACCEPT:
        st = s->accept_proposal(s->self, c, a, b);
        if (st == POLIS_ERR_ACTION) {
            p->refused++;
            st = POLIS_OK;
        }
        break;
    case OP_END: st = s->end_bargaining(s->self, c, a, b); break;
    default: break;
    }
    return st;
}

static polis_status run_ops(probe *p, int64_t tick)
{
    polis_status st;
    for (int32_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].tick == tick && (st = run_op(p, &p->ops[i]))) return st;
    return POLIS_OK;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    (void)ctx;
    p->refused = 0;
    memset(p->rewards, 0, sizeof p->rewards);
    return run_ops(p, -1);
}

/* "churn" random changes of the graph between any live nodes. */
static polis_status churn(probe *p)
{
    const polis_social_api *s = p->soc;
    polis_rng *r = p->h->rng(p->ctx);
    int32_t live[1024];
    int32_t nl = s->groups(s->self, live, 1024);
    int64_t names = 2 + p->churn_ticks++ / 12;
    if (names > p->p.churn_names) names = p->p.churn_names;
    polis_status st = POLIS_OK;
    for (int64_t k = 0; k < p->p.churn && !st; k++) {
        uint32_t what = polis_rng_below(r, 100);
        uint32_t nodes = (uint32_t)(p->P + nl);
        int32_t f = (int32_t)polis_rng_below(r, nodes), t = (int32_t)polis_rng_below(r, nodes);
        f = f < p->P ? f : p->P + live[f - p->P];
        t = t < p->P ? t : p->P + live[t - p->P];
        int32_t i = (int32_t)polis_rng_below(r, (uint32_t)names);
        if (p->churn_attr[i] < 0) {
            char name[16];
            snprintf(name, sizeof name, "c%d", (int)i);
            p->churn_attr[i] = s->attr_id(s->self, name);
        }
        int32_t attr = p->churn_attr[i];
        if (what < 45) {
            st = s->set(s->self, p->ctx, f, t, attr, (double)polis_rng_below(r, 17) * 0.25 - 2.0);
        } else if (what < 70) {
            st = s->unset(s->self, p->ctx, f, t, attr);
        } else if (what < 80) {
            st = s->remove_edge(s->self, p->ctx, f, t);
        } else if (what < 90) {
            if (nl < p->G) st = s->group_create(s->self, p->ctx, NULL);
            if (st == POLIS_ERR_LIMIT) st = POLIS_OK; /* the ids of this graph are used up */
            nl = s->groups(s->self, live, 1024);
        } else if (what < 95 && nl > 0) {
            st = s->group_delete(s->self, p->ctx, live[polis_rng_below(r, (uint32_t)nl)]);
            nl = s->groups(s->self, live, 1024);
        }
    }
    return st;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    memset(p->rewards, 0, sizeof p->rewards);
    polis_status st = run_ops(p, p->h->tick(ctx));
    return st || !p->p.churn ? st : churn(p);
}

static polis_status reward(polis_ctx *ctx, void *ud, float *out)
{
    probe *p = ud;
    (void)ctx;
    memcpy(out, p->rewards, sizeof(float) * (size_t)p->P);
    return POLIS_OK;
}

static void write_get(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    float *out = dst;
    (void)ctx;
    (void)agent;
    out[0] = NAN;
    for (int32_t i = 0; i < p->n_q; i++) {
        double v;
        out[i] =
            p->soc->get(p->soc->self, p->q_from[i], p->q_to[i], p->q_attr[i], &v) ? (float)v : NAN;
    }
}

static void write_list(int32_t *out, int32_t cap, int32_t n)
{
    for (int32_t i = n < cap ? n : cap; i < cap; i++) out[1 + i] = -1;
    out[0] = n;
}

static void write_sharers(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    write_list(
        out, p->P,
        p->soc->sharers(p->soc->self, (int32_t)p->p.watch, POLIS_SOCIAL_SHARE_MAP, out + 1, p->P));
}

static void write_sharers_player(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    write_list(out, p->P,
               p->soc->sharers(p->soc->self, (int32_t)p->p.watch, POLIS_SOCIAL_SHARE_PLAYER,
                               out + 1, p->P));
}

static void write_groups(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    write_list(out, p->G, p->soc->groups_of(p->soc->self, (int32_t)p->p.watch, -1, out + 1, p->G));
}

static void write_members(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    write_list(out, p->P, p->soc->members(p->soc->self, (int32_t)p->p.watch_group, out + 1, p->P));
}

static void write_live(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    write_list(out, p->G, p->soc->groups(p->soc->self, out + 1, p->G));
}

static void write_degree(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t *out = dst;
    (void)ctx;
    (void)agent;
    out[0] = p->soc->degree(p->soc->self, (int32_t)p->p.watch, false);
    out[1] = p->soc->degree(p->soc->self, (int32_t)p->p.watch, true);
    out[2] = p->refused;
}

/* The sharing journal's changes since the previous write: count (-1: lost, then the reader
 * starts again at share_seq), then (what, from, to, on) for up to 8 of them, -1 padded. Read
 * once per write (agent 0), the same for every agent. */
static void write_journal(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    (void)ctx;
    if (agent == 0) {
        const polis_social_api *s = p->soc;
        const uint64_t end = s->share_seq(s->self);
        int32_t n = 0;
        for (int32_t i = 1; i < 1 + 4 * 8; i++) p->journal[i] = -1;
        for (uint64_t q = p->jseq; q < end; q++) {
            polis_social_share what;
            int32_t from, to;
            bool on;
            if (!s->share_change(s->self, q, &what, &from, &to, &on)) {
                n = -1;
                break;
            }
            if (n < 8) {
                int32_t *r = p->journal + 1 + 4 * n;
                r[0] = (int32_t)what;
                r[1] = from;
                r[2] = to;
                r[3] = on;
            }
            n++;
        }
        p->journal[0] = n;
        p->jseq = end;
    }
    memcpy(dst, p->journal, sizeof p->journal);
}

/* ---- event log ------------------------------------------------------------------------------- */

static const char *node(const probe *p, int32_t n, char *buf)
{
    if (n < p->P)
        snprintf(buf, 24, "a%d", n);
    else
        snprintf(buf, 24, "g%d", n - p->P);
    return buf;
}

static polis_status on_event(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    probe *p = polis_ctx_state(ctx);
    intptr_t k = (intptr_t)ud;
    char x[24], y[24], v[40];
    if (k <= 1) {
        const struct {
            int32_t from, to, attr;
            double value;
        } *r = ev->data;
        snprintf(v, sizeof v, "%g", r->value);
        p->h->log(ctx, "%s %s->%s %s=%s", k == 0 ? "set" : "unset", node(p, r->from, x),
                  node(p, r->to, y), p->soc->attr_name(p->soc->self, r->attr), v);
    } else if (k <= 3) {
        const int32_t *g = ev->data;
        p->h->log(ctx, "%s g%d", k == 2 ? "created" : "deleted", g[0]);
    } else if (k <= 5) {
        const int32_t *m = ev->data;
        p->h->log(ctx, "%s g%d a%d", k == 4 ? "joined" : "quit", m[0], m[1]);
    } else {
        const int32_t *sc = ev->data;
        p->h->log(ctx, "schedule step %d snapshot %d", sc[0], sc[1]);
    }
    return POLIS_OK;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static polis_status read_op(probe *p, const polis_json *j, op *o)
{
    const polis_host *h = p->h;
    polis_ctx *c = p->ctx;
    const char *name;
    polis_status st;
    if ((st = h->json_int(c, h->json_get(c, j, "tick"), -1, 1000000, &o->tick)) ||
        (st = h->json_string(c, h->json_get(c, j, "op"), &name)))
        return st;
    o->kind = OP_COUNT;
    for (int k = 0; k < OP_COUNT; k++)
        if (strcmp(OP_NAMES[k], name) == 0) o->kind = (op_kind)k;
    if (o->kind == OP_COUNT) {
        h->error(c, "%s: unknown op %s", h->json_path(j), name);
        return POLIS_ERR_CONFIG;
    }
    static const char *const ka[] = {"agent", "from", "group", "a"};
    static const char *const kb[] = {"to", "family", "opponent", "b"};
    for (int k = 0; k < 4; k++) {
        const polis_json *v = h->json_get(c, j, ka[k]);
        if (h->json_kind(v) >= 0 && (st = h->json_int(c, v, -1, 100000, &o->a))) return st;
        v = h->json_get(c, j, kb[k]);
        if (h->json_kind(v) >= 0 && (st = h->json_int(c, v, -1, 100000, &o->b))) return st;
    }
    const polis_json *v = h->json_get(c, j, "value");
    if (h->json_kind(v) >= 0 && (st = h->json_double(c, v, -1e300, 1e300, &o->value))) return st;
    v = h->json_get(c, j, "attr");
    if (h->json_kind(v) >= 0) {
        const char *a;
        if ((st = h->json_string(c, v, &a))) return st;
        snprintf(o->attr, sizeof o->attr, "%s", a);
    }
    v = h->json_get(c, j, "words");
    for (int32_t i = 0; i < h->json_len(v) && i < 8; i++) {
        if ((st = h->json_double(c, h->json_at(c, v, i), -1e9, 1e9, &o->words[i]))) return st;
        o->n_words = i + 1;
    }
    return POLIS_OK;
}

static polis_status probe_init(const polis_host *h, polis_ctx *ctx, const void *params,
                               void **state)
{
    probe *p = h->alloc(ctx, sizeof *p);
    if (!p) return POLIS_ERR_NOMEM;
    *state = p;
    p->h = h;
    p->ctx = ctx;
    memcpy(&p->p, params, sizeof p->p);
    p->P = h->n_agents(ctx);
    if (p->P > 1024) {
        h->error(ctx, "at most 1024 agents");
        return POLIS_ERR_CONFIG;
    }
    polis_status st;
    for (int32_t i = 0; i < h->json_len(p->p.ops) && i < MAX_OPS; i++) {
        if ((st = read_op(p, h->json_at(ctx, p->p.ops, i), &p->ops[i]))) return st;
        p->n_ops = i + 1;
    }
    for (int32_t i = 0; i < h->json_len(p->p.queries) && i < MAX_Q; i++) {
        const polis_json *q = h->json_at(ctx, p->p.queries, i);
        int64_t f, t;
        const char *a;
        if ((st = h->json_int(ctx, h->json_at(ctx, q, 0), 0, 100000, &f)) ||
            (st = h->json_int(ctx, h->json_at(ctx, q, 1), 0, 100000, &t)) ||
            (st = h->json_string(ctx, h->json_at(ctx, q, 2), &a)))
            return st;
        p->q_from[i] = (int32_t)f;
        p->q_to[i] = (int32_t)t;
        snprintf(p->q_name[i], sizeof p->q_name[i], "%s", a);
        p->n_q = i + 1;
    }
    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 100, on_reset, p)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 100, on_begin, p)) ||
        (st = h->reward(ctx, "probe", reward, p)))
        return st;
    if (p->p.log_events) {
        static const char *const evs[7] = {"social.relation_set",    "social.relation_unset",
                                           "social.group_created",   "social.group_deleted",
                                           "social.joined",          "social.quit",
                                           "social.schedule_applied"};
        for (intptr_t k = 0; k < 7; k++)
            if ((st = h->subscribe(ctx, evs[k], 0, on_event, (void *)k))) return st;
    }
    return POLIS_OK;
}

static polis_status probe_start(polis_ctx *ctx, void *state)
{
    probe *p = state;
    const polis_host *h = p->h;
    p->soc = h->service(ctx, POLIS_SOCIAL_SERVICE);
    if (!p->soc || p->soc->struct_size < sizeof(polis_social_api)) {
        h->error(ctx, "no social service of version %d", POLIS_SOCIAL_VERSION);
        return POLIS_ERR_PLUGIN;
    }
    p->G = p->soc->max_groups(p->soc->self);
    if (p->p.churn && p->G > 1024) {
        h->error(ctx, "churn: at most 1024 groups");
        return POLIS_ERR_CONFIG;
    }
    for (int32_t i = 0; i < 64; i++) p->churn_attr[i] = -1;
    for (int32_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].attr[0]) p->ops[i].attr_id = p->soc->attr_id(p->soc->self, p->ops[i].attr);
    for (int32_t i = 0; i < p->n_q; i++) p->q_attr[i] = p->soc->attr_id(p->soc->self, p->q_name[i]);
    polis_status st;
    int32_t nq = p->n_q > 0 ? p->n_q : 1, g1 = p->G + 1, p1 = p->P + 1;
    polis_obs_def defs[] = {
        {"probe_get", "query values", POLIS_DTYPE_F32, 1, {nq}, write_get, p},
        {"probe_sharers", "map sharers of watch", POLIS_DTYPE_I32, 1, {p1}, write_sharers, p},
        {"probe_sharers_player",
         "player sharers of watch",
         POLIS_DTYPE_I32,
         1,
         {p1},
         write_sharers_player,
         p},
        {"probe_groups", "groups of watch", POLIS_DTYPE_I32, 1, {g1}, write_groups, p},
        {"probe_members", "members of watch_group", POLIS_DTYPE_I32, 1, {p1}, write_members, p},
        {"probe_live", "live groups", POLIS_DTYPE_I32, 1, {g1}, write_live, p},
        {"probe_degree",
         "out, in of watch; refused accepts",
         POLIS_DTYPE_I32,
         1,
         {3},
         write_degree,
         p},
        {"probe_journal",
         "sharing journal changes since the last write",
         POLIS_DTYPE_I32,
         1,
         {1 + 4 * 8},
         write_journal,
         p},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if ((st = h->observation(ctx, &defs[i], NULL))) return st;
    return POLIS_OK;
}

static void probe_destroy(polis_ctx *ctx, void *state)
{
    probe *p = state;
    if (p) p->h->free(ctx, p, sizeof *p);
}

static const polis_param_def probe_params_table[] = {
    POLIS_P_JSON(probe_params, "ops", ops, "service calls"),
    POLIS_P_JSON(probe_params, "queries", queries, "[from, to, attr] for probe_get"),
    POLIS_P_INT(probe_params, "watch", watch, 0, 100000, 0, "agent of probe_sharers/groups/degree"),
    POLIS_P_INT(probe_params, "watch_group", watch_group, 0, 100000, 0, "group of probe_members"),
    POLIS_P_BOOL(probe_params, "log_events", log_events, false, "log every social event"),
    POLIS_P_INT(probe_params, "churn", churn, 0, 1000, 0, "random graph changes per step"),
    POLIS_P_INT(probe_params, "churn_names", churn_names, 1, 64, 16,
                "attribute names the changes use at most (c0 ..)"),
};

static const char *const probe_requires[] = {"social", NULL};

static const polis_plugin_desc probe_desc = {
    POLIS_DESC_HEAD("social_probe", 7),
    .version = "1.0.0",
    .doc = "test driver of the social service",
    .requires = probe_requires,
    POLIS_DESC_PARAMS(probe_params_table, probe_params),
    .init = probe_init,
    .start = probe_start,
    .destroy = probe_destroy,
};

POLIS_PLUGIN(probe_desc)
