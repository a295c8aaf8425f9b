/*
 * render.c — views for LLM agents and tools, and the parser of their actions.
 *
 *   "json"  one agent's observation in AdaSociety's format (seeds/001 README "Observation"):
 *           episode_id, step_id, Map {block_grids, resources, events, players},
 *           Player {id, name, job, position, inventory}, Social {sharings}. The social
 *           plugin renders the graph itself (its own member of the kernel's JSON object).
 *   "text"  deterministic prose: position, inventory, capacities, and everything visible in
 *           the agent's window and the windows shared with it, each cell once, grouped by
 *           kind (blocks, each resource's piles, each station type with its recipe, agents),
 *           nearest first, with positions, amounts and directions. The kernel appends the
 *           legal actions from the mask (docs/kernel.md).
 *
 * Actions: the kernel matches action names ("pick_wood", "move_up") itself; this parser adds
 * AdaSociety's JSON actions ({"action": "pick_by_name", "kwargs": {"resource_name":
 * "wood"}}, "no_act", "move" with dx/dy) and text ("pick wood", "move up", "up", "produce",
 * "dump stone", "wait"). Rendering and parsing run outside the step, on demand.
 */
#include <ctype.h>
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/kit.h"
#include "internal.h"

static void put(soc *s, polis_text *t, const char *str) { s->h->text_append(t, str, strlen(str)); }

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_str(soc *s, polis_text *t, const char *str)
{
    polis_kit_put_json_string(s->h, t, str);
}

static void json_inventory(soc *s, polis_text *t, int32_t a)
{
    const polis_host *h = s->h;
    const int32_t *inv = s->inv + (size_t)a * (size_t)s->R;
    put(s, t, "[");
    bool first = true;
    for (int32_t r = 0; r < s->R; r++) {
        if (!inv[r]) continue;
        h->text_printf(t, "%s{\"name\": \"%s\", \"amount\": %d}", first ? "" : ", ", s->res[r].name,
                       (int)inv[r]);
        first = false;
    }
    put(s, t, "]");
}

static void json_player(soc *s, polis_text *t, int32_t a)
{
    const polis_host *h = s->h;
    h->text_printf(t, "{\"id\": %d, \"name\": ", (int)a);
    json_str(s, t, h->agent_name(s->ctx, a));
    h->text_printf(t, ", \"job\": \"%s\", \"position\": [%d, %d], \"inventory\": ",
                   s->jobs[s->agent_job[a]].name, (int)s->ax[a], (int)s->ay[a]);
    json_inventory(s, t, a);
    put(s, t, "}");
}

/* Cells of owner's window, dx outer, dy inner (AdaSociety's scan order). */
static void json_map(soc *s, polis_text *t, int32_t viewer, int32_t owner, bool center)
{
    const polis_host *h = s->h;
    const soc_job *job = &s->jobs[s->agent_job[owner]];
    int32_t ox = s->ax[owner], oy = s->ay[owner];
    put(s, t, "{");
    if (center) h->text_printf(t, "\"center\": [%d, %d], ", (int)ox, (int)oy);
    put(s, t, "\"block_grids\": [");
    for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++) {
        put(s, t, dx > -job->fov_h ? ", [" : "[");
        for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
            int32_t cell = soc_wrap(oy + dy, s->H) * s->W + soc_wrap(ox + dx, s->W);
            h->text_printf(t, dy > -job->fov_v ? ", %d" : "%d",
                           *soc_layer(s, s->L_blocks, cell) ? 1 : 0);
        }
        put(s, t, "]");
    }
    put(s, t, "]");
    for (int part = 0; part < 3; part++) {
        static const char *const keys[] = {"resources", "events", "players"};
        h->text_printf(t, ", \"%s\": [", keys[part]);
        bool first = true;
        for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++)
            for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
                int32_t x = soc_wrap(ox + dx, s->W), y = soc_wrap(oy + dy, s->H);
                int32_t cell = y * s->W + x;
                if (part == 0 && s->kinds[cell]) {
                    const int32_t *pile = s->piles + (size_t)cell * (size_t)s->R;
                    for (int32_t r = 0; r < s->R; r++) {
                        if (!pile[r] || !soc_resource_visible(s, owner, r)) continue;
                        h->text_printf(t,
                                       "%s{\"name\": \"%s\", \"position\": [%d, %d], "
                                       "\"amount\": %d}",
                                       first ? "" : ", ", s->res[r].name, (int)x, (int)y,
                                       (int)pile[r]);
                        first = false;
                    }
                } else if (part == 1) {
                    int32_t k = *soc_layer(s, s->L_recipes, cell) - 1;
                    if (k < 0 || !soc_recipe_visible(s, owner, k)) continue;
                    h->text_printf(t, "%s{\"name\": \"%s\", \"position\": [%d, %d]}",
                                   first ? "" : ", ", s->rec[k].name, (int)x, (int)y);
                    first = false;
                } else if (part == 2) {
                    int32_t q = *soc_layer(s, s->L_agents, cell) - 1;
                    if (q < 0 || q == owner || !soc_sees(s, viewer, q)) continue;
                    h->text_printf(t, "%s{\"id\": %d, \"name\": ", first ? "" : ", ", (int)q);
                    json_str(s, t, h->agent_name(s->ctx, q));
                    h->text_printf(t, ", \"position\": [%d, %d]}", (int)x, (int)y);
                    first = false;
                }
            }
        put(s, t, "]");
    }
    put(s, t, "}");
}

static int32_t sharers(soc *s, int32_t agent, polis_social_share what, int32_t *out)
{
    if (!s->social || s->n_agents < 2) return 0;
    int32_t n = s->social->sharers(s->social->self, agent, what, out, s->n_agents);
    return n < 0 ? 0 : n > s->n_agents ? s->n_agents : n;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    soc *s = ud;
    const polis_host *h = s->h;
    int64_t episode = h->episode(ctx);
    h->text_printf(t, "{\"episode_id\": %lld, \"step_id\": %lld, \"Map\": ",
                   (long long)(episode > 0 ? episode - 1 : 0), (long long)h->tick(ctx));
    json_map(s, t, agent, agent, false);
    put(s, t, ", \"Player\": ");
    json_player(s, t, agent);
    put(s, t, ", \"Social\": {\"sharings\": {");
    /* views[] and losers[] are scratch here: rendering never runs inside a step. */
    int32_t nm = sharers(s, agent, POLIS_SOCIAL_SHARE_MAP, s->views);
    int32_t np = sharers(s, agent, POLIS_SOCIAL_SHARE_PLAYER, s->losers);
    int32_t i = 0, j = 0;
    bool first = true;
    while (i < nm || j < np) {
        int32_t u = i < nm && (j >= np || s->views[i] <= s->losers[j]) ? s->views[i] : s->losers[j];
        bool map = i < nm && s->views[i] == u, player = j < np && s->losers[j] == u;
        h->text_printf(t, "%s\"%d\": {", first ? "" : ", ", (int)u);
        if (map) {
            put(s, t, "\"Map\": ");
            json_map(s, t, agent, u, true);
        }
        if (player) {
            h->text_printf(t, "%s\"Player\": ", map ? ", " : "");
            json_player(s, t, u);
        }
        put(s, t, "}");
        first = false;
        i += map;
        j += player;
    }
    put(s, t, "}}}");
    return POLIS_OK;
}

/* ---- text ---------------------------------------------------------------------------------- */

static void direction(soc *s, polis_text *t, int32_t dx, int32_t dy)
{
    const polis_host *h = s->h;
    if (dx == 0 && dy == 0) {
        put(s, t, "here");
        return;
    }
    if (dx) h->text_printf(t, "%d %s", (int)(dx < 0 ? -dx : dx), dx < 0 ? "up" : "down");
    if (dx && dy) put(s, t, " ");
    if (dy) h->text_printf(t, "%d %s", (int)(dy < 0 ? -dy : dy), dy < 0 ? "left" : "right");
}

static void recipe_text(soc *s, polis_text *t, int32_t k)
{
    const polis_host *h = s->h;
    const soc_recipe *rc = &s->rec[k];
    for (int32_t i = 0; i < rc->n_in; i++)
        h->text_printf(t, "%s%d %s", i ? " + " : "", (int)s->amounts[rc->in + i].n,
                       s->res[s->amounts[rc->in + i].res].name);
    put(s, t, " -> ");
    for (int32_t i = 0; i < rc->n_out; i++)
        h->text_printf(t, "%s%d %s", i ? " + " : "", (int)s->amounts[rc->out + i].n,
                       s->res[s->amounts[rc->out + i].res].name);
}

/* The text view states every visible cell once: the agent's window and the windows shared
 * with it are merged, and what they show is grouped by kind (blocks, each resource's piles,
 * each station type with its recipe once, agents), each group nearest first. A cell's pile
 * or station shows when at least one window covering it shows it to its owner. */
typedef struct seen_cell {
    int32_t d, rx, ry; /* from the viewer, on the torus */
    int32_t cell, owner;
} seen_cell;

static int seen_cmp(const void *pa, const void *pb)
{
    const seen_cell *a = pa, *b = pb;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    if (a->rx != b->rx) return a->rx < b->rx ? -1 : 1;
    if (a->ry != b->ry) return a->ry < b->ry ? -1 : 1;
    return (a->owner > b->owner) - (a->owner < b->owner);
}

/* Every (cell, owner) pair of the merged windows, sorted nearest first; NULL when out of
 * memory (host->error set). *n gets the count, *size the bytes to free. */
static seen_cell *seen_cells(soc *s, int32_t agent, int32_t n_owners, int32_t *n, size_t *size)
{
    size_t total = 0;
    for (int32_t i = 0; i < n_owners; i++) {
        const soc_job *job = &s->jobs[s->agent_job[s->views[i]]];
        total += (size_t)(2 * job->fov_h + 1) * (size_t)(2 * job->fov_v + 1);
    }
    *size = total * sizeof(seen_cell);
    seen_cell *c = s->h->alloc(s->ctx, *size ? *size : 1);
    if (!c) {
        s->h->error(s->ctx, "text view: out of memory (%zu bytes)", *size);
        return NULL;
    }
    size_t k = 0;
    for (int32_t i = 0; i < n_owners; i++) {
        int32_t owner = s->views[i];
        const soc_job *job = &s->jobs[s->agent_job[owner]];
        for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++)
            for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
                int32_t x = soc_wrap(s->ax[owner] + dx, s->W),
                        y = soc_wrap(s->ay[owner] + dy, s->H);
                int32_t rx = soc_wrap(x - s->ax[agent] + s->W / 2, s->W) - s->W / 2;
                int32_t ry = soc_wrap(y - s->ay[agent] + s->H / 2, s->H) - s->H / 2;
                c[k++] = (seen_cell){.d = (rx < 0 ? -rx : rx) + (ry < 0 ? -ry : ry),
                                     .rx = rx,
                                     .ry = ry,
                                     .cell = y * s->W + x,
                                     .owner = owner};
            }
    }
    qsort(c, k, sizeof *c, seen_cmp);
    *n = (int32_t)k;
    return c;
}

/* What one group lists: blocks, piles of resource `r`, stations of recipe `r`, agents. */
enum { SEE_BLOCK, SEE_PILE, SEE_STATION, SEE_AGENT };

/* Whether the cell of c[i..j) (one cell, every owner whose window covers it) shows the kind;
 * for piles *amount gets the pile, for agents *who the agent. */
static bool cell_shows(soc *s, int32_t agent, const seen_cell *c, int32_t i, int32_t j, int kind,
                       int32_t r, int32_t *val)
{
    int32_t cell = c[i].cell;
    switch (kind) {
    case SEE_BLOCK: return *soc_layer(s, s->L_blocks, cell) != 0;
    case SEE_AGENT: {
        int32_t q = *soc_layer(s, s->L_agents, cell) - 1;
        *val = q;
        return q >= 0 && q != agent && soc_sees(s, agent, q);
    }
    case SEE_PILE:
        if (!s->kinds[cell]) return false;
        *val = s->piles[(size_t)cell * (size_t)s->R + (size_t)r];
        if (!*val) return false;
        for (int32_t m = i; m < j; m++)
            if (soc_resource_visible(s, c[m].owner, r)) return true;
        return false;
    default:
        if (*soc_layer(s, s->L_recipes, cell) - 1 != r) return false;
        for (int32_t m = i; m < j; m++)
            if (soc_recipe_visible(s, c[m].owner, r)) return true;
        return false;
    }
}

static int32_t cell_end(const seen_cell *c, int32_t n, int32_t i)
{
    int32_t j = i + 1;
    while (j < n && c[j].rx == c[i].rx && c[j].ry == c[i].ry) j++;
    return j;
}

static void group_label(soc *s, polis_text *t, int kind, int32_t r)
{
    switch (kind) {
    case SEE_BLOCK: put(s, t, "- blocks:"); break;
    case SEE_PILE: s->h->text_printf(t, "- %s piles:", s->res[r].name); break;
    case SEE_STATION:
        s->h->text_printf(t, "- station %s (", s->rec[r].name);
        recipe_text(s, t, r);
        put(s, t, "):");
        break;
    default: put(s, t, "- agents:"); break;
    }
}

static void cell_pos(soc *s, polis_text *t, const seen_cell *c)
{
    s->h->text_printf(t, "(%d, %d) ", (int)(c->cell % s->W), (int)(c->cell / s->W));
    direction(s, t, c->rx, c->ry);
}

/* One group's line, "- <label>: (x, y) <direction>; ...", or nothing when it is empty. A
 * block or station kind on most visible cells is written by its exceptions instead:
 * "on every visible cell except (x, y) <direction>; ...". */
static bool group_text(soc *s, polis_text *t, int32_t agent, const seen_cell *c, int32_t n,
                       int kind, int32_t r)
{
    const polis_host *h = s->h;
    int32_t cells = 0, shown = 0, val = 0;
    for (int32_t i = 0; i < n; i = cell_end(c, n, i)) {
        cells++;
        shown += cell_shows(s, agent, c, i, cell_end(c, n, i), kind, r, &val);
    }
    if (!shown) return false;
    group_label(s, t, kind, r);
    bool inverse = (kind == SEE_BLOCK || kind == SEE_STATION) && shown > 4 && 2 * shown > cells;
    if (inverse)
        put(s, t, shown == cells ? " on every visible cell" : " on every visible cell except");
    bool any = false;
    for (int32_t i = 0, j; i < n; i = j) {
        j = cell_end(c, n, i);
        if (cell_shows(s, agent, c, i, j, kind, r, &val) == inverse) continue;
        put(s, t, any ? "; " : " ");
        if (kind == SEE_PILE) h->text_printf(t, "%d at ", (int)val);
        if (kind == SEE_AGENT) h->text_printf(t, "%s at ", h->agent_name(s->ctx, val));
        cell_pos(s, t, &c[i]);
        any = true;
    }
    put(s, t, "\n");
    return true;
}

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    soc *s = ud;
    const polis_host *h = s->h;
    const soc_job *job = &s->jobs[s->agent_job[agent]];
    const int32_t *inv = s->inv + (size_t)agent * (size_t)s->R;
    const int32_t *cap = s->cap + (size_t)s->agent_job[agent] * (size_t)s->R;
    h->text_printf(t, "You are %s (agent %d, job %s) at (%d, %d). Step %lld of %lld.\n",
                   h->agent_name(ctx, agent), (int)agent, job->name, (int)s->ax[agent],
                   (int)s->ay[agent], (long long)h->tick(ctx),
                   (long long)(s->max_length > 0 && s->max_length < h->max_steps(ctx)
                                   ? s->max_length
                                   : h->max_steps(ctx)));
    h->text_printf(t,
                   "The map is %d x %d and wraps around; move_up/move_down change x by -1/+1, "
                   "move_left/move_right change y by -1/+1.\n",
                   (int)s->W, (int)s->H);
    put(s, t, "Inventory:");
    const char *sep = " ";
    for (int32_t r = 0; r < s->R; r++)
        if (inv[r]) {
            h->text_printf(t, "%s%s %d", sep, s->res[r].name, (int)inv[r]);
            sep = ", ";
        }
    if (*sep == ' ') put(s, t, " empty");
    put(s, t, ".\nValue of one unit to you:");
    for (int32_t r = 0; r < s->R; r++)
        h->text_printf(t, "%s%s %g", r ? ", " : " ", s->res[r].name, soc_unit_value(s, agent, r));
    put(s, t, ".\nCapacity:");
    sep = " ";
    for (int32_t r = 0; r < s->R; r++)
        if (cap[r] != SOC_UNLIMITED) {
            h->text_printf(t, "%s%s %d", sep, s->res[r].name, (int)cap[r]);
            sep = ", ";
        }
    if (job->size != INT64_MAX) {
        h->text_printf(t, "%s%lld units in all", sep, (long long)job->size);
        sep = ", ";
    }
    h->text_printf(t, "%s.\n", *sep == ' ' ? " unlimited" : "");
    h->text_printf(t, "You see %d cell%s up/down and %d left/right", (int)job->fov_h,
                   job->fov_h == 1 ? "" : "s", (int)job->fov_v);
    int32_t n_owners = soc_views(s, agent);
    /* The sharers' windows, their size once when all have the same. */
    bool same = true;
    for (int32_t i = 2; i < n_owners; i++)
        same &=
            s->agent_job[s->views[i]] == s->agent_job[s->views[1]] ||
            (s->jobs[s->agent_job[s->views[i]]].fov_h == s->jobs[s->agent_job[s->views[1]]].fov_h &&
             s->jobs[s->agent_job[s->views[i]]].fov_v == s->jobs[s->agent_job[s->views[1]]].fov_v);
    for (int32_t i = 1; i < n_owners; i++) {
        int32_t u = s->views[i];
        const soc_job *uj = &s->jobs[s->agent_job[u]];
        if (i == 1) put(s, t, n_owners == 2 ? "; also the view of" : "; also the views of");
        h->text_printf(t, "%s %s at (%d, %d)", i > 1 ? "," : "", h->agent_name(ctx, u),
                       (int)s->ax[u], (int)s->ay[u]);
        if (!same || i == n_owners - 1)
            h->text_printf(t, " (%s%d up/down, %d left/right)", same && n_owners > 2 ? "each " : "",
                           (int)uj->fov_h, (int)uj->fov_v);
    }
    if (n_owners > 1) put(s, t, ", shared with you");
    put(s, t, ". Visible, nearest first (position, direction from you):\n");
    int32_t n = 0;
    size_t size = 0;
    seen_cell *c = seen_cells(s, agent, n_owners, &n, &size);
    if (!c) return POLIS_ERR_NOMEM;
    bool any = group_text(s, t, agent, c, n, SEE_BLOCK, 0);
    for (int32_t r = 0; r < s->R; r++) any |= group_text(s, t, agent, c, n, SEE_PILE, r);
    for (int32_t k = 0; k < s->K; k++) any |= group_text(s, t, agent, c, n, SEE_STATION, k);
    any |= group_text(s, t, agent, c, n, SEE_AGENT, 0);
    h->free(ctx, c, size ? size : 1);
    if (!any) put(s, t, "- nothing\n");
    return POLIS_OK;
}

/* ---- actions ------------------------------------------------------------------------------- */

static int32_t move_named(const char *w)
{
    static const char *const dirs[4] = {"up", "down", "left", "right"};
    for (int d = 0; d < 4; d++)
        if (strcmp(w, dirs[d]) == 0) return d;
    return -1;
}

static polis_status resource_action(soc *s, int32_t agent, const char *verb, const char *name,
                                    bool dump, int32_t *out)
{
    int32_t r = soc_resource_find(s, name);
    if (r < 0) {
        s->h->error(s->ctx, "%s: \"%s\" is not a resource in play (agent %d)", verb, name,
                    (int)agent);
        return POLIS_ERR_INVALID;
    }
    *out = dump ? s->act_dump[r] : s->act_pick[r];
    return POLIS_OK;
}

/* AdaSociety's legacy pick(): the first visible pile on the cell (canonical order). */
static polis_status legacy_pick(soc *s, int32_t agent, int32_t *out)
{
    int32_t cell = s->ay[agent] * s->W + s->ax[agent];
    for (int32_t r = 0; r < s->R; r++)
        if (s->piles[(size_t)cell * (size_t)s->R + (size_t)r] &&
            soc_resource_visible(s, agent, r)) {
            *out = s->act_pick[r];
            return POLIS_OK;
        }
    s->h->error(s->ctx, "pick: agent %d sees no pile on its cell", (int)agent);
    return POLIS_ERR_INVALID;
}

/* A number member of a JSON object, 0 when absent or not a number. */
static double json_number(soc *s, const polis_json *obj, const char *key)
{
    const polis_json *m = s->h->json_get(s->ctx, obj, key);
    double v = 0.0;
    if (s->h->json_kind(m) != 2 || s->h->json_double(s->ctx, m, -DBL_MAX, DBL_MAX, &v)) return 0.0;
    return v;
}

static polis_status parse_json(soc *s, int32_t agent, const polis_json *j, int32_t *out)
{
    const polis_host *h = s->h;
    const char *name = polis_kit_json_str(h, s->ctx, j, "action");
    if (!name) return POLIS_ERR_ACTION;
    const polis_json *kw = h->json_get(s->ctx, j, "kwargs");
    if (strcmp(name, "no_act") == 0 || strcmp(name, "noop") == 0) {
        *out = 0;
        return POLIS_OK;
    }
    if (strncmp(name, "move_", 5) == 0 && move_named(name + 5) >= 0) {
        *out = s->act_move[move_named(name + 5)];
        return POLIS_OK;
    }
    if (strcmp(name, "move") == 0) {
        /* compared as doubles: converting an out-of-range number to int is undefined */
        double ix = json_number(s, kw, "dx"), iy = json_number(s, kw, "dy");
        int d = ix == -1 && iy == 0   ? 0
                : ix == 1 && iy == 0  ? 1
                : ix == 0 && iy == -1 ? 2
                : ix == 0 && iy == 1  ? 3
                                      : -1;
        if (d < 0) {
            s->h->error(s->ctx,
                        "move: polis moves one cell per step (dx, dy one of (-1, 0), "
                        "(1, 0), (0, -1), (0, 1)); agent %d",
                        (int)agent);
            return POLIS_ERR_INVALID;
        }
        *out = s->act_move[d];
        return POLIS_OK;
    }
    if (strcmp(name, "produce") == 0) {
        *out = s->act_produce;
        return POLIS_OK;
    }
    if (strcmp(name, "pick") == 0) return legacy_pick(s, agent, out);
    bool pick = strcmp(name, "pick_by_name") == 0, dump = strcmp(name, "dump_by_name") == 0;
    if (!pick && !dump) return POLIS_ERR_ACTION;
    const char *rn = polis_kit_json_str(h, s->ctx, kw, "resource_name");
    if (!rn) {
        s->h->error(s->ctx, "%s: expected \"kwargs\": {\"resource_name\": \"...\"} (agent %d)",
                    name, (int)agent);
        return POLIS_ERR_INVALID;
    }
    return resource_action(s, agent, name, rn, dump, out);
}

static polis_status parse_text(soc *s, int32_t agent, const char *input, int32_t *out)
{
    char buf[160];
    char *w[4];
    int nw = 0;
    size_t n = 0;
    for (const char *p = input; *p && n + 1 < sizeof buf; p++) {
        char c = (char)tolower((unsigned char)*p);
        buf[n++] = c == '.' || c == '!' || c == '"' || c == '\'' ? ' ' : c;
    }
    buf[n] = '\0';
    for (char *p = buf; *p && nw < 4;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') *p++ = '\0';
        if (!*p) break;
        w[nw++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    }
    for (char *p = buf; p < buf + n; p++)
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') *p = '\0';
    if (nw == 0) return POLIS_ERR_ACTION;
    if (nw == 1 && (!strcmp(w[0], "noop") || !strcmp(w[0], "no_act") || !strcmp(w[0], "wait") ||
                    !strcmp(w[0], "stay"))) {
        *out = 0;
        return POLIS_OK;
    }
    int d = -1;
    if (nw == 1) d = strncmp(w[0], "move_", 5) == 0 ? move_named(w[0] + 5) : move_named(w[0]);
    if (nw == 2 && (!strcmp(w[0], "move") || !strcmp(w[0], "go"))) d = move_named(w[1]);
    if (d >= 0) {
        *out = s->act_move[d];
        return POLIS_OK;
    }
    if (nw == 1 && (!strcmp(w[0], "produce") || !strcmp(w[0], "craft"))) {
        *out = s->act_produce;
        return POLIS_OK;
    }
    bool pick = !strcmp(w[0], "pick") || !strcmp(w[0], "pick_by_name") || !strcmp(w[0], "take") ||
                !strcmp(w[0], "gather");
    bool dump = !strcmp(w[0], "dump") || !strcmp(w[0], "dump_by_name") || !strcmp(w[0], "drop");
    if (!pick && !dump) return POLIS_ERR_ACTION;
    int at = 1;
    if (pick && nw > 2 && !strcmp(w[1], "up")) at = 2; /* "pick up wood" */
    if (nw == 1 && pick) return legacy_pick(s, agent, out);
    if (nw != at + 1) {
        s->h->error(s->ctx, "\"%s\": expected \"%s <resource>\" (agent %d)", input,
                    pick ? "pick" : "dump", (int)agent);
        return POLIS_ERR_INVALID;
    }
    return resource_action(s, agent, pick ? "pick" : "dump", w[at], dump, out);
}

static polis_status parse_action(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                 int32_t *out)
{
    soc *s = ud;
    const char *p = input;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p != '{' && *p != '"') return parse_text(s, agent, p, out);
    const polis_json_api *json = polis_kit_json_api(s->h, ctx);
    const polis_json *j;
    polis_status st = json ? polis_kit_json_input(json, ctx, p, &j) : POLIS_ERR_ACTION;
    if (st != POLIS_OK) return st;
    const char *str;
    if (s->h->json_kind(j) == 3 && s->h->json_string(ctx, j, &str) == POLIS_OK) {
        /* a quoted action: an action name, or text */
        int32_t id = s->h->action_find(ctx, str);
        if (id >= 0) {
            *out = id;
            st = POLIS_OK;
        } else {
            st = parse_text(s, agent, str, out);
        }
    } else {
        st = parse_json(s, agent, j, out);
    }
    json->free(ctx, j);
    return st;
}

polis_status soc_register_renderers(soc *s)
{
    const polis_host *h = s->h;
    polis_status st;
    if ((st = h->renderer(s->ctx, "json", render_json, s))) return st;
    if ((st = h->renderer(s->ctx, "text", render_text, s))) return st;
    return h->action_parser(s->ctx, parse_action, s);
}
