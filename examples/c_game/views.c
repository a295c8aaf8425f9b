/*
 * views.c — orchard for LLM agents and tools: the "text" view and an action parser taking
 * words ("north", "go west", "pick") and JSON ({"action": "pick"}). Optional: the game plays
 * the same without it.
 */
#include <string.h>

#include "internal.h"

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    orchard *o = ud;
    const polis_host *h = o->h;
    const orchard_core *g = &o->core;
    int8_t around[9];
    orchard_observe(g, agent, around);
    static const char *const what[4] = {"nothing", "a tree", "a ripe tree", "an agent"};
    h->text_printf(t, "You are %s at (%d, %d); you picked %d fruit. Tick %lld.\n",
                   h->agent_name(ctx, agent), g->x[agent], g->y[agent], g->picked[agent],
                   (long long)h->tick(ctx));
    h->text_printf(t, "Here: %s.\n", what[around[4]]);
    static const char *const dirs[4] = {"north", "south", "west", "east"};
    static const int8_t at[4] = {1, 7, 3, 5};
    for (int32_t d = 0; d < 4; d++)
        if (around[at[d]]) h->text_printf(t, "To the %s: %s.\n", dirs[d], what[around[at[d]]]);
    return POLIS_OK; /* the kernel appends the legal actions */
}

/* "north", "move north", "go north", "pick", "pick fruit"; anything else is another
 * parser's. */
static polis_status parse_words(orchard *o, const char *s, int32_t *out)
{
    char buf[64];
    const char *w[3];
    int n = polis_kit_words(s, " \t_-", buf, sizeof buf, w, 3);
    if (n < 1) return POLIS_ERR_ACTION;
    int k = (!strcmp(w[0], "move") || !strcmp(w[0], "go")) && n == 2 ? 1 : 0;
    static const char *const words[ORCHARD_ACTIONS] = {"north", "south", "west", "east", "pick"};
    for (int32_t a = 0; a < ORCHARD_ACTIONS; a++)
        if (!strcmp(w[k], words[a]) && (n == k + 1 || (a == ORCHARD_PICK && n == 2 && !k))) {
            *out = o->act[a];
            return POLIS_OK;
        }
    if (k) {
        o->h->error(o->ctx, "\"%s\": the direction must be north, south, west or east", s);
        return POLIS_ERR_INVALID;
    }
    return POLIS_ERR_ACTION;
}

static polis_status parse_action(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                 int32_t *out)
{
    orchard *o = ud;
    if (input[0] != '{') return parse_words(o, input, out);
    const polis_json *doc;
    polis_status st = polis_kit_json_input(o->json, ctx, input, &doc);
    if (st != POLIS_OK) return st; /* not JSON: someone else's; or out of memory */
    const char *a = polis_kit_json_str(o->h, ctx, doc, "action");
    char words[64];
    bool ok = a && polis_kit_lower(words, sizeof words, a);
    o->json->free(ctx, doc);
    return ok ? parse_words(o, words, out) : POLIS_ERR_ACTION;
}

polis_status orchard_register_views(orchard *o)
{
    if (!(o->json = polis_kit_json_api(o->h, o->ctx))) return POLIS_ERR_PLUGIN;
    polis_status st;
    if ((st = o->h->renderer(o->ctx, "text", render_text, o)) ||
        (st = o->h->action_parser(o->ctx, parse_action, o)))
        return st;
    return POLIS_OK;
}
