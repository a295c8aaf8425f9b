/*
 * views.c — gather for LLM agents and tools: the "text" view (prose), the "json" view and
 * the action parser ("north", "move north", "go north", "stay", {"action": "move",
 * "direction": "north"}). Rendering and parsing run outside the step, on demand.
 */
#include <string.h>

#include "internal.h"

static const char *const DIR_NAMES[GATHER_DIRS] = {"north", "south", "west", "east"};

/* One visible thing: its offset from the viewer, its cell and its map value. */
typedef struct seen {
    int32_t dx, dy, x, y, value;
} seen;

static int32_t iabs(int32_t v) { return v < 0 ? -v : v; }

/* The things on `map` in agent's view window (coins, or the other agents), nearest first by
 * steps (|dx| + |dy|), ties in row order, so the prose and the JSON list them alike. Stores
 * those numbered [skip, skip + cap) in out and returns the count of all of them, so a caller
 * pages through a crowded window with a small array. The window is copied into g->window:
 * scratch shared with the observation writer, which is safe because rendering never runs
 * inside a step. */
static int32_t seen_on_map(gather *g, int32_t agent, const int32_t *map, seen *out, int32_t skip,
                           int32_t cap)
{
    const gather_core *c = &g->core;
    int32_t v = (int32_t)c->p.view, side = 2 * v + 1, n = 0;
    gather_pos p = c->pos[agent];
    gather_window(c, map, p.x, p.y, v, -1, g->window);
    for (int32_t d = 0; d <= 2 * v; d++) {
        for (int32_t i = 0; i < side * side; i++) {
            int32_t dx = i % side - v, dy = i / side - v, val = g->window[i];
            if (iabs(dx) + iabs(dy) != d || val <= 0) continue;
            if (map == c->agents && val == agent + 1) continue;
            if (n >= skip && n - skip < cap) {
                int32_t x = p.x + dx, y = p.y + dy;
                if (c->wrap) {
                    x = ((x % c->width) + c->width) % c->width;
                    y = ((y % c->height) + c->height) % c->height;
                }
                out[n - skip] = (seen){dx, dy, x, y, val};
            }
            n++;
        }
    }
    return n;
}

/* A window holds up to (2*32+1)^2 cells. Prose about thousands of coins helps nobody: the
 * text lists the nearest VIEW_LIST of each kind and counts the rest. The JSON lists all,
 * VIEW_LIST at a time. */
#define VIEW_LIST 64

/* "Coins in view ...: 3." and one line per coin (or agent), nearest first. */
static void list_text(gather *g, polis_text *t, int32_t agent, bool agents)
{
    const polis_host *h = g->h;
    seen list[VIEW_LIST];
    int32_t n = seen_on_map(g, agent, agents ? g->core.agents : g->core.coins, list, 0, VIEW_LIST);
    if (n == 0)
        h->text_printf(t, "none.\n");
    else
        h->text_printf(t, "%d.\n", n);
    for (int32_t i = 0; i < n && i < VIEW_LIST; i++) {
        if (agents)
            h->text_printf(t, "- %s at (%d, %d): ", h->agent_name(g->ctx, list[i].value - 1),
                           list[i].x, list[i].y);
        else
            h->text_printf(t, "- coin at (%d, %d): ", list[i].x, list[i].y);
        polis_kit_put_offset(h, t, list[i].dx, list[i].dy);
        h->text_printf(t, "\n");
    }
    if (n > VIEW_LIST) h->text_printf(t, "- and %d more.\n", n - VIEW_LIST);
}

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    gather *g = ud;
    const polis_host *h = g->h;
    const gather_core *c = &g->core;
    const polis_io *io = h->io(ctx);
    gather_pos p = c->pos[agent];
    h->text_printf(t,
                   "You are %s at (%d, %d) on the %dx%d grid (%s; x grows east, y grows "
                   "south). Tick %lld of %lld.\n",
                   h->agent_name(ctx, agent), p.x, p.y, c->width, c->height,
                   c->wrap ? "it wraps around at the edges" : "bounded", (long long)h->tick(ctx),
                   (long long)h->max_steps(ctx));
    h->text_printf(t, "Coins in view (up to %lld cells away in x and y): ", (long long)c->p.view);
    list_text(g, t, agent, false);
    h->text_printf(t, "Other agents in view: ");
    list_text(g, t, agent, true);
    h->text_printf(t, "Coins you collected this episode: %d.\n", c->total_coins[agent]);
    if (io->terminations[agent] || io->truncations[agent])
        h->text_printf(t, "Your episode is over (%s).\n",
                       io->terminations[agent] ? "terminated" : "truncated");
    /* The legal actions follow: the kernel appends them from the mask (docs/kernel.md). */
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    gather *g = ud;
    const polis_host *h = g->h;
    gather_pos p = g->core.pos[agent];
    seen list[VIEW_LIST];
    h->text_printf(t, "{\"position\":[%d,%d],\"coins\":[", p.x, p.y);
    int32_t n = 0;
    for (int32_t skip = 0; skip == 0 || skip < n; skip += VIEW_LIST) {
        n = seen_on_map(g, agent, g->core.coins, list, skip, VIEW_LIST);
        for (int32_t i = skip; i < n && i < skip + VIEW_LIST; i++)
            h->text_printf(t, "%s[%d,%d]", i ? "," : "", list[i - skip].x, list[i - skip].y);
    }
    h->text_printf(t, "],\"agents\":[");
    for (int32_t skip = 0; skip == 0 || skip < n; skip += VIEW_LIST) {
        n = seen_on_map(g, agent, g->core.agents, list, skip, VIEW_LIST);
        for (int32_t i = skip; i < n && i < skip + VIEW_LIST; i++) {
            int32_t other = list[i - skip].value - 1;
            h->text_printf(t, "%s{\"id\":%d,\"name\":", i ? "," : "", other);
            polis_kit_put_json_string(h, t, h->agent_name(ctx, other));
            h->text_printf(t, ",\"position\":[%d,%d]}", list[i - skip].x, list[i - skip].y);
        }
    }
    h->text_printf(t, "],\"collected\":%d}", g->core.total_coins[agent]);
    return POLIS_OK;
}

/* ---- text and JSON actions ---------------------------------------------------------------- */

/* Which move a word names: 0..3, or -1. */
static int32_t direction_of(const char *w)
{
    for (int32_t d = 0; d < GATHER_DIRS; d++)
        if (strcmp(w, DIR_NAMES[d]) == 0) return d;
    return -1;
}

/* "north", "move north", "go north", "stay", "wait": at most 3 words of at most 15 letters,
 * separated by whitespace, '_' or '-', one trailing '.' ignored, any case. A known verb with
 * a wrong or missing direction is for this parser but malformed: an error that says what is
 * accepted. Anything else is left to the next parser. */
static polis_status parse_words(gather *g, const char *s, int32_t *out)
{
    char buf[128];
    const char *w[3];
    int n = polis_kit_words(s, " \t\n\r_-", buf, sizeof buf, w, 3);
    if (n < 1) return POLIS_ERR_ACTION;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(w[i]);
        if (len > 15 || strspn(w[i], "abcdefghijklmnopqrstuvwxyz") != len) return POLIS_ERR_ACTION;
    }
    if (n == 1 && (!strcmp(w[0], "stay") || !strcmp(w[0], "wait") || !strcmp(w[0], "noop"))) {
        *out = 0; /* the kernel's noop */
        return POLIS_OK;
    }
    int32_t d = direction_of(w[0]);
    if (n == 1 && d >= 0) {
        *out = g->act[d];
        return POLIS_OK;
    }
    if (strcmp(w[0], "move") != 0 && strcmp(w[0], "go") != 0) return POLIS_ERR_ACTION;
    if (n == 1) {
        g->h->error(g->ctx, "\"%s\" needs a direction: north, south, west or east", w[0]);
        return POLIS_ERR_INVALID;
    }
    d = direction_of(w[1]);
    if (n > 2 || d < 0) {
        g->h->error(g->ctx, "\"%s %s%s%s\": the direction must be north, south, west or east", w[0],
                    w[1], n > 2 ? " " : "", n > 2 ? w[2] : "");
        return POLIS_ERR_INVALID;
    }
    *out = g->act[d];
    return POLIS_OK;
}

/* {"action": "move", "direction": "north"} (also {"action": "stay"}, {"action": "north"}):
 * an object whose "action" is a string; other members are ignored. Text that is not such
 * an object is not for this parser. */
static polis_status parse_json_action(gather *g, const char *s, int32_t *out)
{
    const polis_host *h = g->h;
    const polis_json *doc;
    polis_status st = polis_kit_json_input(g->json, g->ctx, s, &doc);
    if (st != POLIS_OK) return st;
    const char *action =
        h->json_kind(doc) == 5 ? polis_kit_json_str(h, g->ctx, doc, "action") : NULL;
    const char *direction = action ? polis_kit_json_str(h, g->ctx, doc, "direction") : NULL;
    char a[32], d[32] = "";
    st = action && polis_kit_lower(a, sizeof a, action) &&
                 (!direction || polis_kit_lower(d, sizeof d, direction))
             ? POLIS_OK
             : POLIS_ERR_ACTION;
    bool has_direction = direction != NULL;
    g->json->free(g->ctx, doc);
    if (st != POLIS_OK) return st;
    bool move = !strcmp(a, "move") || !strcmp(a, "go");
    if (move && (!has_direction || direction_of(d) < 0)) {
        if (has_direction)
            h->error(g->ctx, "\"direction\": \"%s\" is not north, south, west or east", d);
        else
            h->error(g->ctx, "{\"action\": \"%s\"} needs \"direction\": north, south, west or east",
                     a);
        return POLIS_ERR_INVALID;
    }
    char words[96];
    snprintf(words, sizeof words, "%s%s%s", a, has_direction ? " " : "", d);
    return parse_words(g, words, out);
}

static polis_status parse_action(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                 int32_t *out)
{
    gather *g = ud;
    if (input[0] == '{') return parse_json_action(g, input, out);
    return parse_words(g, input, out);
}

polis_status gather_register_views(gather *g)
{
    const polis_host *h = g->h;
    if (!(g->json = polis_kit_json_api(h, g->ctx))) return POLIS_ERR_PLUGIN;
    polis_status st;
    if ((st = h->renderer(g->ctx, "text", render_text, g)) ||
        (st = h->renderer(g->ctx, "json", render_json, g)) ||
        (st = h->action_parser(g->ctx, parse_action, g)))
        return st;
    return POLIS_OK;
}
