/*
 * json_probe — a test plugin of the host APIs (ABI 1.7) and the "json" API.
 *
 * "mode": "parse" (default): registers two actions and an action parser that parses every
 *         input starting with '{', '[' or '"' as a document named "action" and reads
 *         {"act": "<action name>"} from it; a document that does not parse, or an "act" that
 *         is not a string, fails the parse with the API's message (so tests see it).
 *         "keep": also parses the "doc" parameter at init and keeps the document until
 *         destroy; its "text" renderer reads it at every rendering.
 *         "future": asks for "json" version POLIS_JSON_API_VERSION + 1 (init fails).
 *         "unknown": asks for a host API "nope" (init fails).
 *         "zero": asks for "json" version 0 (init fails).
 */
#include <string.h>

#include "polis/kit.h"

typedef struct jp_params {
    const char *mode;
    const char *doc;
} jp_params;

typedef struct jp {
    const polis_host *h;
    polis_ctx *ctx;
    const polis_json_api *json;
    const polis_json *kept;
} jp;

static polis_status act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg) { return POLIS_OK; }

static polis_status parse(polis_ctx *ctx, void *ud, int32_t agent, const char *input, int32_t *out)
{
    jp *p = ud;
    if (input[0] != '{' && input[0] != '[' && input[0] != '"') return POLIS_ERR_ACTION;
    const polis_json *doc;
    polis_status st = p->json->parse(ctx, input, strlen(input), "action", &doc);
    if (st != POLIS_OK) return st;
    const char *name = NULL;
    st = p->h->json_string(ctx, p->h->json_get(ctx, doc, "act"), &name);
    if (st == POLIS_OK) {
        *out = p->h->action_find(ctx, name);
        if (*out < 0) {
            p->h->error(ctx, "no action \"%s\"", name);
            st = POLIS_ERR_INVALID;
        }
    }
    p->json->free(ctx, doc);
    return st;
}

/* The kept document, read long after init: {"items": [..]} -> "items: 3, first: <string>". */
static polis_status render(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    jp *p = ud;
    const polis_host *h = p->h;
    const polis_json *items = h->json_get(ctx, p->kept, "items");
    const char *first = NULL;
    polis_status st = h->json_string(ctx, h->json_at(ctx, items, 0), &first);
    if (st) return st;
    h->text_printf(t, "items: %d, first: %s, path: %s\n", h->json_len(items), first,
                   h->json_path(h->json_at(ctx, items, 0)));
    return POLIS_OK;
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const jp_params *pp = params;
    jp *p = h->alloc(ctx, sizeof *p);
    if (!p) return POLIS_ERR_NOMEM;
    *state = p;
    p->h = h;
    p->ctx = ctx;
    const char *mode = pp->mode;
    if (!strcmp(mode, "future"))
        return h->host_api(ctx, POLIS_JSON_API, POLIS_JSON_API_VERSION + 1) ? POLIS_OK
                                                                            : POLIS_ERR_PLUGIN;
    if (!strcmp(mode, "unknown")) return h->host_api(ctx, "nope", 1) ? POLIS_OK : POLIS_ERR_PLUGIN;
    if (!strcmp(mode, "zero"))
        return h->host_api(ctx, POLIS_JSON_API, 0) ? POLIS_OK : POLIS_ERR_PLUGIN;
    if (!(p->json = polis_kit_json_api(h, ctx))) return POLIS_ERR_PLUGIN;
    polis_status st;
    polis_action_def a = {.name = "jp_a", .doc = "an action", .handler = act};
    polis_action_def b = {.name = "jp_b", .doc = "another action", .handler = act};
    if ((st = h->action(ctx, &a, NULL)) || (st = h->action(ctx, &b, NULL)) ||
        (st = h->action_parser(ctx, parse, p)))
        return st;
    if (!strcmp(mode, "keep")) {
        const char *text = pp->doc ? pp->doc : "";
        if ((st = p->json->parse(ctx, text, strlen(text), "doc", &p->kept)) ||
            (st = h->renderer(ctx, "text", render, p)))
            return st;
    }
    return POLIS_OK;
}

static void destroy(polis_ctx *ctx, void *state)
{
    jp *p = state;
    if (!p) return;
    if (p->kept) p->json->free(ctx, p->kept);
    p->h->free(ctx, p, sizeof *p);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(jp_params, "mode", mode, "parse", "parse, keep, future, unknown or zero"),
    POLIS_P_STRING(jp_params, "doc", doc, NULL, "JSON text the keep mode parses at init"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("json_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: host APIs and JSON documents",
    POLIS_DESC_PARAMS(PARAMS, jp_params),
    .init = init,
    .destroy = destroy,
};

POLIS_PLUGIN(DESC)
