/*
 * registrar — a test plugin that makes one deliberately wrong host call, chosen by its
 * "case" parameter, so tests/unit/test_registry.c can assert the exact refusal. Cases whose
 * name starts with "run_" make their call from a POST hook (running-time calls); the others
 * make it in init.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/kit.h"

typedef struct reg_params {
    const char *which;
} reg_params;

typedef struct reg {
    const polis_host *h;
    char which[48];
    int32_t ev;
} reg;

static polis_status handler(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return POLIS_OK;
}

static void writer(polis_ctx *ctx, void *ud, int32_t agent, void *dst) {}

static polis_status reward(polis_ctx *ctx, void *ud, float *out) { return POLIS_OK; }

static polis_status hook(polis_ctx *ctx, void *ud) { return POLIS_OK; }

static bool is(const reg *r, const char *w) { return strcmp(r->which, w) == 0; }

static polis_status post(polis_ctx *ctx, void *ud)
{
    reg *r = ud;
    const polis_host *h = r->h;
    if (is(r, "run_register")) {
        polis_action_def a = {.name = "too_late", .handler = handler};
        return h->action(ctx, &a, NULL);
    }
    if (is(r, "run_publish_size")) {
        int32_t v = 1;
        return h->publish(ctx, r->ev, &v, sizeof v);
    }
    if (is(r, "run_publish_type")) {
        int64_t v[2] = {0, 0};
        return h->publish(ctx, 42, v, sizeof v);
    }
    if (is(r, "run_order")) {
        int32_t order[1] = {0};
        return h->set_agent_order(ctx, order, 1);
    }
    if (is(r, "run_destroy_stale")) {
        polis_entity e;
        polis_status st = h->entity_create(ctx, &e);
        if (st) return st;
        if ((st = h->entity_destroy(ctx, e))) return st;
        return h->entity_destroy(ctx, e);
    }
    return POLIS_OK;
}

static polis_status begin(polis_ctx *ctx, void *ud)
{
    reg *r = ud;
    if (is(r, "run_order_dup")) {
        int32_t order[2] = {1, 1};
        return r->h->set_agent_order(ctx, order, 2);
    }
    if (is(r, "run_order_range")) {
        int32_t order[1] = {7};
        return r->h->set_agent_order(ctx, order, 1);
    }
    return POLIS_OK;
}

static polis_status reg_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const reg_params *p = params;
    reg *r = h->alloc(ctx, sizeof *r);
    if (!r) return POLIS_ERR_NOMEM;
    *state = r;
    r->h = h;
    snprintf(r->which, sizeof r->which, "%s", p->which);
    polis_status st;
    static const polis_field_def two[2] = {{"a", POLIS_FIELD_I64}, {"b", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "reg.ev", two, 2, &r->ev))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_POST, 0, post, r))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, begin, r))) return st;

    if (is(r, "action_name_empty")) {
        polis_action_def a = {.name = "", .handler = handler};
        return h->action(ctx, &a, NULL);
    }
    if (is(r, "action_name_space")) {
        polis_action_def a = {.name = "pick wood", .handler = handler};
        return h->action(ctx, &a, NULL);
    }
    if (is(r, "action_no_handler")) {
        polis_action_def a = {.name = "x"};
        return h->action(ctx, &a, NULL);
    }
    if (is(r, "action_noop")) {
        polis_action_def a = {.name = "noop", .handler = handler};
        return h->action(ctx, &a, NULL);
    }
    if (is(r, "obs_ndim")) {
        polis_obs_def o = {.name = "o", .dtype = POLIS_DTYPE_U8, .ndim = 5, .write = writer};
        return h->observation(ctx, &o, NULL);
    }
    if (is(r, "obs_shape")) {
        polis_obs_def o = {
            .name = "o", .dtype = POLIS_DTYPE_U8, .ndim = 2, .shape = {3, 0}, .write = writer};
        return h->observation(ctx, &o, NULL);
    }
    if (is(r, "obs_dtype")) {
        polis_obs_def o = {
            .name = "o", .dtype = (polis_dtype)9, .ndim = 1, .shape = {1}, .write = writer};
        return h->observation(ctx, &o, NULL);
    }
    if (is(r, "obs_no_writer")) {
        polis_obs_def o = {.name = "o", .dtype = POLIS_DTYPE_U8, .ndim = 1, .shape = {1}};
        return h->observation(ctx, &o, NULL);
    }
    if (is(r, "obs_huge")) {
        polis_obs_def o = {.name = "o",
                           .dtype = POLIS_DTYPE_F32,
                           .ndim = 3,
                           .shape = {4096, 4096, 4096},
                           .write = writer};
        return h->observation(ctx, &o, NULL);
    }
    if (is(r, "event_dup_field")) {
        static const polis_field_def f[2] = {{"a", POLIS_FIELD_I32}, {"a", POLIS_FIELD_F32}};
        return h->event_type(ctx, "reg.dup", f, 2, NULL);
    }
    if (is(r, "event_bad_type")) {
        static const polis_field_def f[1] = {{"a", (polis_ftype)7}};
        return h->event_type(ctx, "reg.bad", f, 1, NULL);
    }
    if (is(r, "event_dup")) return h->event_type(ctx, "reg.ev", two, 2, NULL);
    if (is(r, "component_zero")) return h->component(ctx, "c", 0, NULL);
    if (is(r, "component_dup")) {
        if ((st = h->component(ctx, "c", 4, NULL))) return st;
        return h->component(ctx, "c", 8, NULL);
    }
    if (is(r, "service_dup")) {
        if ((st = h->service_provide(ctx, "svc", r))) return st;
        return h->service_provide(ctx, "svc", r);
    }
    if (is(r, "reward_null")) return h->reward(ctx, "r", NULL, r);
    if (is(r, "reward_dup")) {
        if ((st = h->reward(ctx, "r", reward, r))) return st;
        return h->reward(ctx, "r", reward, r);
    }
    if (is(r, "hook_phase")) return h->hook(ctx, (polis_phase)99, 0, hook, r);
    if (is(r, "grid_conflict")) return h->grid_configure(ctx, 3, 3, false);
    if (is(r, "order_in_init")) {
        int32_t order[1] = {0};
        return h->set_agent_order(ctx, order, 1);
    }
    return POLIS_OK;
}

static void reg_destroy(polis_ctx *ctx, void *state)
{
    reg *r = state;
    if (r) r->h->free(ctx, r, sizeof *r);
}

static const polis_param_def reg_param_table[] = {
    POLIS_P_STRING(reg_params, "case", which, "", "which wrong call"),
};

static const polis_plugin_desc reg_desc = {
    POLIS_DESC_HEAD("registrar", 7),
    .doc = "makes one deliberately wrong host call",
    POLIS_DESC_PARAMS(reg_param_table, reg_params),
    .init = reg_init,
    .destroy = reg_destroy,
};

POLIS_PLUGIN(reg_desc)
