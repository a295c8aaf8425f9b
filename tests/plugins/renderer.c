/*
 * renderer — a test plugin for views and text actions (ABI 1.1). Its "mode" parameter picks
 * what it registers and how its renderers misbehave, so tests/unit/test_render.c asserts the
 * kernel's exact output and messages:
 *   ok          text, json and "ascii" renderers and a parser (below)
 *   none        registers no renderer and no parser
 *   start       the ok renderers and parser, registered in start() instead of init()
 *   greedy      ok renderers, and a parser that accepts every input as "wave"
 *   many        40 extra actions (act_00..act_39) and no parser, for the bounded name list
 *   bad_json, trailing_json, empty_json        the json renderer writes bad JSON
 *   fail, fail_silent, nul, null_str, printf_nul, huge, text_after_error
 *                                               the text renderer fails in one way each
 *   bad_format, long_format, null_format, null_fn, dup, parser_null, late
 *                                               a refused registration
 * The parser (ok, start): "wave ..." -> wave; "bad ..." -> malformed (an error message);
 * "silent ..." -> an error without a message; "range" -> id 99; "unset" -> OK without an
 * id; anything else -> not mine (after calling host->error, which the kernel must drop).
 * Every parser call is logged as "parse agent=A input=<input>".
 */
#include <stddef.h>
#include <string.h>

#include "polis/kit.h"

typedef struct rparams {
    const char *mode;
} rparams;

typedef struct rstate {
    const polis_host *h;
    char mode[32];
    int32_t wave;
} rstate;

static bool is(const rstate *r, const char *m) { return strcmp(r->mode, m) == 0; }

static polis_status wave(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg) { return POLIS_OK; }

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    rstate *r = ud;
    const polis_host *h = r->h;
    if (is(r, "fail") && agent == 1) {
        h->error(ctx, "cannot see agent %d", agent);
        return POLIS_ERR_INVALID;
    }
    if (is(r, "fail_silent")) return POLIS_ERR_LIMIT;
    if (is(r, "nul")) h->text_append(t, "a\0b", 3);
    if (is(r, "null_str")) h->text_append(t, NULL, 5);
    if (is(r, "printf_nul")) h->text_printf(t, "x%cy", 0);
    if (is(r, "huge")) {
        char line[4096];
        memset(line, 'x', sizeof line);
        for (int i = 0; i < 5000; i++) h->text_append(t, line, sizeof line);
    }
    if (is(r, "text_after_error")) {
        h->text_append(t, NULL, 1);
        h->text_printf(t, "never written");
    }
    h->text_printf(t, "renderer sees %s at tick %lld.\n", h->agent_name(ctx, agent),
                   (long long)h->tick(ctx));
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    rstate *r = ud;
    const polis_host *h = r->h;
    if (is(r, "bad_json")) {
        h->text_printf(t, "{\"agent\": %d,}", agent);
    } else if (is(r, "trailing_json")) {
        h->text_printf(t, "[1] [2]");
    } else if (is(r, "empty_json")) {
        h->text_printf(t, " \n");
    } else {
        h->text_printf(t, "{\"agent\":%d,\"tick\":%lld,\"note\":\"a \\\"quoted\\\" word\"}", agent,
                       (long long)h->tick(ctx));
    }
    return POLIS_OK;
}

static polis_status render_ascii(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    rstate *r = ud;
    r->h->text_append(t, "[#]", 3);
    return POLIS_OK;
}

static polis_status parse(polis_ctx *ctx, void *ud, int32_t agent, const char *input, int32_t *out)
{
    rstate *r = ud;
    const polis_host *h = r->h;
    h->log(ctx, "parse agent=%d input=%s", agent, input);
    if (is(r, "greedy") || strncmp(input, "wave", 4) == 0) {
        *out = r->wave;
        return POLIS_OK;
    }
    if (strncmp(input, "bad", 3) == 0) {
        h->error(ctx, "malformed wave: %s", input);
        return POLIS_ERR_INVALID;
    }
    if (strncmp(input, "silent", 6) == 0) return POLIS_ERR_LIMIT;
    if (strcmp(input, "range") == 0) {
        *out = 99;
        return POLIS_OK;
    }
    if (strcmp(input, "unset") == 0) return POLIS_OK;
    h->error(ctx, "not mine: %s", input);
    return POLIS_ERR_ACTION;
}

static polis_status register_views(polis_ctx *ctx, rstate *r)
{
    const polis_host *h = r->h;
    polis_status st;
    if ((st = h->renderer(ctx, "text", render_text, r))) return st;
    if ((st = h->renderer(ctx, "json", render_json, r))) return st;
    if ((st = h->renderer(ctx, "ascii", render_ascii, r))) return st;
    if (is(r, "many")) return POLIS_OK;
    return h->action_parser(ctx, parse, r);
}

static polis_status late(polis_ctx *ctx, void *ud)
{
    rstate *r = ud;
    polis_status st = r->h->renderer(ctx, "text", render_text, r);
    return st ? st : r->h->action_parser(ctx, parse, r);
}

static polis_status rinit(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const rparams *p = params;
    rstate *r = h->alloc(ctx, sizeof *r);
    if (!r) return POLIS_ERR_NOMEM;
    *state = r;
    r->h = h;
    strncpy(r->mode, p->mode, sizeof r->mode - 1);
    polis_action_def a = {.name = "wave", .doc = "wave", .handler = wave};
    polis_status st = h->action(ctx, &a, &r->wave);
    if (st) return st;
    if (is(r, "many")) {
        for (int i = 0; i < 40; i++) {
            char name[8] = {'a', 'c', 't', '_', (char)('0' + i / 10), (char)('0' + i % 10), 0};
            polis_action_def m = {.name = name, .handler = wave};
            if ((st = h->action(ctx, &m, NULL))) return st;
        }
    }
    if (is(r, "none") || is(r, "start")) return POLIS_OK;
    if (is(r, "bad_format")) return h->renderer(ctx, "Text", render_text, r);
    if (is(r, "long_format"))
        return h->renderer(ctx, "a234567890123456789012345678901234567890123456789012345678901234",
                           render_text, r);
    if (is(r, "null_format")) return h->renderer(ctx, NULL, render_text, r);
    if (is(r, "null_fn")) return h->renderer(ctx, "text", NULL, r);
    if (is(r, "dup")) {
        if ((st = h->renderer(ctx, "text", render_text, r))) return st;
        return h->renderer(ctx, "text", render_text, r);
    }
    if (is(r, "parser_null")) return h->action_parser(ctx, NULL, r);
    if (is(r, "late")) return h->hook(ctx, POLIS_PHASE_RESET, 0, late, r);
    return register_views(ctx, r);
}

static polis_status rstart(polis_ctx *ctx, void *state)
{
    rstate *r = state;
    return is(r, "start") ? register_views(ctx, r) : POLIS_OK;
}

static void rdestroy(polis_ctx *ctx, void *state)
{
    rstate *r = state;
    if (r) r->h->free(ctx, r, sizeof *r);
}

static const polis_param_def rparams_table[] = {
    POLIS_P_STRING(rparams, "mode", mode, "ok", "what to register"),
};

static const polis_plugin_desc rdesc = {
    POLIS_DESC_HEAD("renderer", 7),
    .version = "1.0.0",
    .doc = "test plugin: renderers and an action parser",
    POLIS_DESC_PARAMS(rparams_table, rparams),
    .init = rinit,
    .start = rstart,
    .destroy = rdestroy,
};

POLIS_PLUGIN(rdesc)
