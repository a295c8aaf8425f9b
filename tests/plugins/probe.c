/*
 * probe — a test plugin touching every registration area. What it does is chosen by its
 * "mode" parameter, and it reports through host->log so tests assert the exact sequence.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"

typedef struct probe_params {
    const char *mode;
    int64_t int_p;
    double dbl_p;
    bool flag;
    const char *name_p;
    const polis_json *extra;
} probe_params;

typedef struct probe {
    const polis_host *h;
    char mode[32];
    int32_t ev_a, ev_b;
    int32_t comp;
    polis_entity ents[3];
    int32_t grp_rows, grp_legal; /* mode "group": calls of the row writer and of pg_legal */
} probe;

typedef struct ev_a {
    int32_t n;
    double v;
} ev_a;

typedef struct ev_b {
    int32_t n;
} ev_b;

static bool is(const probe *p, const char *m) { return strcmp(p->mode, m) == 0; }

static polis_status trace_hook(polis_ctx *ctx, void *ud)
{
    probe *p = polis_ctx_state(ctx);
    (void)p;
    p->h->log(ctx, "hook %s", (const char *)ud);
    return POLIS_OK;
}

static polis_status post_publish(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    if (is(p, "fail_hook") && p->h->tick(ctx) == 2) {
        p->h->error(ctx, "deliberate failure");
        return POLIS_ERR_INVALID;
    }
    if (!is(p, "bus") && !is(p, "flood") && !is(p, "fail_sub")) return POLIS_OK;
    ev_a a = {(int32_t)p->h->tick(ctx), 0.5};
    polis_status st = p->h->publish(ctx, p->ev_a, &a, sizeof a);
    p->h->log(ctx, "post published, status %d", (int)st);
    return st;
}

static polis_status sub_a_early(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    probe *p = ud;
    const ev_a *a = ev->data;
    p->h->log(ctx, "a(-1) n=%d v=%g seq=%llu", a->n, a->v, (unsigned long long)ev->seq);
    return POLIS_OK;
}

static polis_status sub_a_late(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    probe *p = ud;
    const ev_a *a = ev->data;
    p->h->log(ctx, "a(5) n=%d", a->n);
    if (is(p, "fail_sub") && a->n == 1) {
        p->h->error(ctx, "subscriber refuses n=%d", a->n);
        return POLIS_ERR_INVALID;
    }
    int reps = is(p, "flood") ? 100 : 2;
    for (int i = 0; i < reps; i++) {
        ev_b b = {a->n * 10 + i};
        polis_status st = p->h->publish(ctx, p->ev_b, &b, sizeof b);
        if (st) return st;
    }
    p->h->log(ctx, "a(5) done");
    return POLIS_OK;
}

static polis_status sub_b(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    probe *p = ud;
    const ev_b *b = ev->data;
    if (!is(p, "flood")) p->h->log(ctx, "b n=%d", b->n);
    return POLIS_OK;
}

static bool act_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return agent % 2 == 0;
}

static polis_status act_handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    probe *p = ud;
    if (is(p, "fail_action")) {
        p->h->error(ctx, "action refuses agent %d", agent);
        return POLIS_ERR_INVALID;
    }
    p->h->log(ctx, "act agent=%d arg=%d", agent, arg);
    return POLIS_OK;
}

static polis_status reject_handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return POLIS_ERR_ACTION;
}

static polis_status reward_fn(polis_ctx *ctx, void *ud, float *out)
{
    probe *p = ud;
    int32_t n = p->h->n_agents(ctx);
    for (int32_t a = 0; a < n; a++) out[a] = (float)(a + 1);
    return POLIS_OK;
}

static polis_status transform_double(polis_ctx *ctx, void *ud, float *r)
{
    probe *p = ud;
    int32_t n = p->h->n_agents(ctx);
    for (int32_t a = 0; a < n; a++) r[a] *= 2.0f;
    return POLIS_OK;
}

static polis_status transform_add(polis_ctx *ctx, void *ud, float *r)
{
    probe *p = ud;
    int32_t n = p->h->n_agents(ctx);
    for (int32_t a = 0; a < n; a++) r[a] += 1.0f;
    return POLIS_OK;
}

static void write_obs(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    probe *p = ud;
    int32_t v[3] = {agent, (int32_t)p->h->tick(ctx), (int32_t)p->h->episode(ctx)};
    memcpy(dst, v, sizeof v);
}

static polis_status reset_entities(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    int32_t *data = p->h->component_data(ctx, p->comp);
    for (int i = 0; i < 3; i++) {
        polis_status st = p->h->entity_create(ctx, &p->ents[i]);
        if (st) return st;
        if (data[POLIS_ENTITY_INDEX(p->ents[i])] != 0) {
            p->h->error(ctx, "component row not zeroed");
            return POLIS_ERR_INVALID;
        }
        data[POLIS_ENTITY_INDEX(p->ents[i])] = 100 + i;
    }
    p->h->log(ctx, "entities %u %u %u", POLIS_ENTITY_INDEX(p->ents[0]),
              POLIS_ENTITY_INDEX(p->ents[1]), POLIS_ENTITY_INDEX(p->ents[2]));
    return POLIS_OK;
}

/* Clears every bit of agent 0's row, noop included: the kernel keeps noop legal. */
static void mask_agent0(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    probe *p = ud;
    if (agent != 0) return;
    int32_t n = p->h->io(ctx)->n_actions;
    memset(row, 0, (size_t)n);
}

/* mode "family": pf_0..pf_3 (legal when agent + index is even) and pn_0..pn_1 (no row
 * writer: all legal); the filter then clears pf_0 for agent 2. */
static void fam_legal_row(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    (void)ctx;
    (void)ud;
    for (int32_t i = 0; i < 4; i++) row[i] = (agent + i) % 2 == 0;
}

static polis_status fam_handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t index)
{
    probe *p = polis_ctx_state(ctx);
    p->h->log(ctx, "fam %s agent=%d index=%d", (const char *)ud, agent, index);
    return POLIS_OK;
}

static void fam_doc(polis_ctx *ctx, void *ud, int32_t index, char *buf, size_t size)
{
    (void)ctx;
    snprintf(buf, size, "%s target %d", (const char *)ud, index);
}

static void mask_family(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    (void)ctx;
    (void)ud;
    if (agent == 2) row[3] = 0;
}

static polis_status register_family_mode(probe *p, polis_ctx *ctx)
{
    const polis_host *h = p->h;
    polis_status st;
    polis_action_family_def pf = {.prefix = "pf",
                                  .count = 4,
                                  .doc = fam_doc,
                                  .handler = fam_handler,
                                  .legal_row = fam_legal_row,
                                  .ud = (void *)"pf"};
    if (is(p, "fam_zero")) pf.count = 0;
    if (is(p, "fam_nohandler")) pf.handler = NULL;
    if (is(p, "fam_badname")) pf.prefix = "p f";
    if (is(p, "fam_null")) return h->action_family(ctx, NULL, NULL);
    if (is(p, "fam_clash")) {
        polis_action_def one = {.name = "pf_2", .handler = act_handler, .ud = p};
        if ((st = h->action(ctx, &one, NULL))) return st;
    }
    int32_t first = -1;
    if ((st = h->action_family(ctx, &pf, &first))) return st;
    h->log(ctx, "family pf first=%d", first);
    polis_action_family_def pn = {.prefix = "pn",
                                  .count = 2,
                                  .doc_text = "plain",
                                  .handler = fam_handler,
                                  .ud = (void *)"pn"};
    if ((st = h->action_family(ctx, &pn, &first))) return st;
    h->log(ctx, "family pn first=%d", first);
    return h->mask_filter(ctx, mask_family, p);
}

/* mode "group": pg_a, pg_b, pg_c (no legality function), pg_d in one legality group (the
 * "actions" host API): pg_<i> is legal when agent + i is even, pg_c always; the row writer
 * and pg_legal count their calls, which a POST hook logs. The "grp_*" modes misuse it. */
static bool pg_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    probe *p = ud;
    (void)ctx;
    p->grp_legal++;
    return (agent + arg) % 2 == 0;
}

static void pg_row(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    probe *p = ud;
    (void)ctx;
    p->grp_rows++;
    for (int32_t i = 0; i < 4; i++) row[i] = i == 2 || (agent + i) % 2 == 0;
}

static polis_status pg_handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    probe *p = ud;
    p->h->log(ctx, "pg agent=%d arg=%d", agent, arg);
    return POLIS_OK;
}

static polis_status group_log(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    p->h->log(ctx, "group rows=%d legal=%d", p->grp_rows, p->grp_legal);
    return POLIS_OK;
}

static polis_status group_late(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    const polis_actions_api *api = p->h->host_api(ctx, POLIS_ACTIONS_API, 1);
    return api ? api->legal_rows(ctx, 3, 1, pg_row, p) : POLIS_ERR_PLUGIN;
}

static polis_status register_group_mode(probe *p, polis_ctx *ctx)
{
    const polis_host *h = p->h;
    const polis_actions_api *api = h->host_api(ctx, POLIS_ACTIONS_API, POLIS_ACTIONS_API_VERSION);
    if (!api) return POLIS_ERR_PLUGIN;
    static const char *const names[4] = {"pg_a", "pg_b", "pg_c", "pg_d"};
    polis_status st;
    int32_t first = -1;
    for (int32_t i = 0; i < 4; i++) {
        polis_action_def d = {.name = names[i],
                              .handler = pg_handler,
                              .legal = i == 2 ? NULL : pg_legal,
                              .arg = i,
                              .ud = p};
        if ((st = h->action(ctx, &d, i == 0 ? &first : NULL))) return st;
    }
    if (is(p, "grp_late")) return h->hook(ctx, POLIS_PHASE_RESET, 0, group_late, p);
    if (is(p, "grp_family")) {
        polis_action_family_def pf = {.prefix = "pf", .count = 2, .handler = fam_handler};
        if ((st = h->action_family(ctx, &pf, NULL))) return st;
        return api->legal_rows(ctx, first + 3, 2, pg_row, p);
    }
    if (is(p, "grp_null")) return api->legal_rows(ctx, first, 4, NULL, p);
    if (is(p, "grp_zero")) return api->legal_rows(ctx, first, 0, pg_row, p);
    if (is(p, "grp_range")) return api->legal_rows(ctx, first, 5, pg_row, p);
    if (is(p, "grp_huge")) return api->legal_rows(ctx, first, INT32_MAX, pg_row, p);
    if (is(p, "grp_noop")) return api->legal_rows(ctx, 0, 2, pg_row, p);
    if (is(p, "grp_twice") && (st = api->legal_rows(ctx, first + 1, 2, pg_row, p))) return st;
    if ((st = api->legal_rows(ctx, first, 4, pg_row, p))) return st;
    h->log(ctx, "group pg first=%d", first);
    return h->hook(ctx, POLIS_PHASE_POST, 0, group_log, p);
}

static polis_status order_hook(polis_ctx *ctx, void *ud)
{
    probe *p = ud;
    int32_t n = p->h->n_agents(ctx);
    int32_t order[64];
    for (int32_t i = 0; i < n && i < 64; i++) order[i] = n - 1 - i;
    return p->h->set_agent_order(ctx, order, n < 64 ? n : 64);
}

static const char *phase_labels[POLIS_PHASE_COUNT][2] = {
    {"reset/0", "reset/-3"},    {"begin/0", "begin/-3"}, {"resolve/0", "resolve/-3"},
    {"world/0", "world/-3"},    {"post/0", "post/-3"},   {"end/0", "end/-3"},
    {"observe/0", "observe/-3"}};

static polis_status probe_init(const polis_host *h, polis_ctx *ctx, const void *params,
                               void **state)
{
    const probe_params *pp = params;
    probe *p = h->alloc(ctx, sizeof *p);
    if (!p) return POLIS_ERR_NOMEM;
    *state = p;
    p->h = h;
    snprintf(p->mode, sizeof p->mode, "%s", pp->mode ? pp->mode : "");
    h->log(ctx, "params mode=%s int_p=%lld dbl_p=%g flag=%d name_p=%s extra=%d", p->mode,
           (long long)pp->int_p, pp->dbl_p, (int)pp->flag, pp->name_p ? pp->name_p : "(null)",
           h->json_kind(pp->extra));
    if (is(p, "fail_init")) {
        h->error(ctx, "refusing to start: mode fail_init");
        return POLIS_ERR_CONFIG;
    }
    if (is(p, "json")) {
        /* Walk "extra": {"list": [int...]} and report every value through the accessors. */
        const polis_json *list = h->json_get(ctx, pp->extra, "list");
        for (int32_t i = 0; i < h->json_len(list); i++) {
            int64_t v;
            polis_status st = h->json_int(ctx, h->json_at(ctx, list, i), 0, 9, &v);
            if (st) return st;
            h->log(ctx, "list[%d]=%lld at %s", i, (long long)v,
                   h->json_path(h->json_at(ctx, list, i)));
        }
    }
    polis_status st;
    if (is(p, "trace")) {
        for (int ph = 0; ph < POLIS_PHASE_COUNT; ph++) {
            if ((st = h->hook(ctx, (polis_phase)ph, 0, trace_hook, (void *)phase_labels[ph][0])))
                return st;
            if ((st = h->hook(ctx, (polis_phase)ph, -3, trace_hook, (void *)phase_labels[ph][1])))
                return st;
        }
    }
    if (is(p, "late_register")) {
        /* registers nothing now; start() tries after init, which is still allowed */
    }
    if (is(p, "layer_only")) {
        int32_t layer;
        if ((st = h->grid_layer(ctx, "probe.layer", &layer))) return st;
    }
    if (is(p, "mask_filter")) {
        if ((st = h->mask_filter(ctx, mask_agent0, p))) return st;
    }
    if (is(p, "order")) {
        if ((st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, order_hook, p))) return st;
    }
    if (is(p, "bad_sub")) {
        if ((st = h->subscribe(ctx, "no.such.event", 0, sub_b, p))) return st;
    }
    static const polis_field_def fa[2] = {{"n", POLIS_FIELD_I32}, {"v", POLIS_FIELD_F64}};
    static const polis_field_def fb[1] = {{"n", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "probe.a", fa, 2, &p->ev_a))) return st;
    if ((st = h->event_type(ctx, "probe.b", fb, 1, &p->ev_b))) return st;
    if ((st = h->subscribe(ctx, "probe.a", 5, sub_a_late, p))) return st;
    if ((st = h->subscribe(ctx, "probe.a", -1, sub_a_early, p))) return st;
    if ((st = h->subscribe(ctx, "probe.b", 0, sub_b, p))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_POST, 1, post_publish, p))) return st;

    polis_action_def act = {
        .name = "probe_act", .handler = act_handler, .legal = act_legal, .arg = 7, .ud = p};
    polis_action_def rej = {.name = "probe_reject", .handler = reject_handler, .ud = p};
    if ((st = h->action(ctx, &act, NULL))) return st;
    if ((st = h->action(ctx, &rej, NULL))) return st;
    if (strncmp(p->mode, "fam", 3) == 0 && (st = register_family_mode(p, ctx))) return st;
    if ((is(p, "group") || strncmp(p->mode, "grp_", 4) == 0) && (st = register_group_mode(p, ctx)))
        return st;
    if (is(p, "dup_action") && (st = h->action(ctx, &act, NULL))) return st;
    if ((st = h->reward(ctx, "probe_r", reward_fn, p))) return st;
    /* Registered add-then-double with priorities that make double run first. */
    if ((st = h->reward_transform(ctx, "probe_add", 10, transform_add, p))) return st;
    if ((st = h->reward_transform(ctx, "probe_double", -10, transform_double, p))) return st;
    polis_obs_def obs = {.name = "probe_obs",
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {3},
                         .write = write_obs,
                         .ud = p};
    if ((st = h->observation(ctx, &obs, NULL))) return st;
    if ((st = h->component(ctx, "probe.value", sizeof(int32_t), &p->comp))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, reset_entities, p))) return st;
    return POLIS_OK;
}

static polis_status probe_start(polis_ctx *ctx, void *state)
{
    probe *p = state;
    if (is(p, "late_register")) {
        polis_action_def act = {.name = "late", .handler = act_handler, .ud = p};
        return p->h->action(ctx, &act, NULL);
    }
    return POLIS_OK;
}

static void probe_destroy(polis_ctx *ctx, void *state)
{
    probe *p = state;
    if (p) p->h->free(ctx, p, sizeof *p);
}

static const polis_param_def probe_param_table[] = {
    POLIS_P_STRING(probe_params, "mode", mode, "", "what to test"),
    POLIS_P_INT(probe_params, "int_p", int_p, -5, 5, 1, "an int"),
    POLIS_P_DOUBLE(probe_params, "dbl_p", dbl_p, 0, 1, 0.5, "a double"),
    POLIS_P_BOOL(probe_params, "flag", flag, false, "a bool"),
    POLIS_P_STRING(probe_params, "name_p", name_p, "x", "a string"),
    POLIS_P_JSON(probe_params, "extra", extra, "any JSON"),
};

static const polis_plugin_desc probe_desc = {
    POLIS_DESC_HEAD("probe", 7),
    .version = "0.0.1",
    .doc = "test plugin touching every registration area",
    POLIS_DESC_PARAMS(probe_param_table, probe_params),
    .init = probe_init,
    .start = probe_start,
    .destroy = probe_destroy,
};

POLIS_PLUGIN(probe_desc)
