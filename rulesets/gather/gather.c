/*
 * gather — the kernel's demo game: agents walk a grid and collect coins.
 *
 * Rules (README.md has the full text):
 *   - Actions: noop, move_north (y-1), move_south (y+1), move_west (x-1), move_east (x+1).
 *     A move off a bounded grid is illegal (masked). Agents act one after another in id
 *     order; a move into a cell another agent occupies at that moment is blocked (a no-op,
 *     not illegal).
 *   - RESOLVE: an agent standing on a coin collects it (+coin_value reward) and, with
 *     respawn on, a new coin appears on a random cell with no coin and no agent.
 *   - Without respawn the episode terminates once every coin is collected.
 *   - Observation: "view", an egocentric (2v+1)x(2v+1) window with two channels
 *     (0: agents — 2 for self, 1 for others, -1 outside a bounded grid; 1: coins), and
 *     "position" (x, y).
 *
 *   - Views: a "text" renderer (prose for LLM agents) and a "json" renderer; an action
 *     parser for "north", "move north", "go north", "stay", {"action": "move", ...}.
 *
 * It exercises every kernel service a real game uses: parameters, a grid with two layers,
 * a component, actions with legality, an observation layout, a reward function, hooks in
 * RESET/BEGIN/RESOLVE/END, event types published on the bus, a foreign-callable export,
 * renderers and an action parser.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "polis/plugin.h"

typedef struct gather_params {
    int64_t coins;
    double coin_value;
    int64_t view;
    bool respawn;
} gather_params;

typedef struct pos {
    int32_t x, y;
} pos;

typedef struct moved_ev {
    int32_t agent, from_x, from_y, x, y;
} moved_ev;

typedef struct coin_ev {
    int32_t agent, x, y;
} coin_ev;

typedef struct gather {
    const polis_host *h;
    polis_ctx *ctx;
    gather_params p;
    int32_t n_agents;
    int32_t layer_agents, layer_coins;
    int32_t obs_view, obs_position; /* observation field ids */
    int32_t comp_pos;
    int32_t ev_moved, ev_coin;
    int32_t coins_left;
    int32_t *step_coins;  /* [n_agents] collected this step */
    int32_t *total_coins; /* [n_agents] collected this episode */
    int32_t *window;      /* (2v+1)^2 scratch for grid_window */
    int32_t act[4];       /* action ids of move_north, move_south, move_west, move_east */
    int32_t kind_floor, kind_coin, look_ground, look_coins, stat_coins; /* looks (ABI 1.5) */
} gather;

static const int32_t DX[4] = {0, 0, -1, 1};
static const int32_t DY[4] = {-1, 1, 0, 0};

static pos *agent_pos(gather *g, int32_t agent)
{
    pos *all = g->h->component_data(g->ctx, g->comp_pos);
    return &all[POLIS_ENTITY_INDEX(g->h->agent_entity(g->ctx, agent))];
}

/* Target of a move, or false when it leaves a bounded grid. */
static bool target(const polis_grid *grid, pos p, int32_t dir, pos *out)
{
    int32_t x = p.x + DX[dir], y = p.y + DY[dir];
    if (grid->wrap) {
        x = (x + grid->width) % grid->width;
        y = (y + grid->height) % grid->height;
    } else if (x < 0 || y < 0 || x >= grid->width || y >= grid->height) {
        return false;
    }
    out->x = x;
    out->y = y;
    return true;
}

static bool move_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    pos t;
    return target(g->h->grid(ctx), *agent_pos(g, agent), dir, &t);
}

static polis_status move(polis_ctx *ctx, void *ud, int32_t agent, int32_t dir)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    pos *p = agent_pos(g, agent), t;
    if (!target(grid, *p, dir, &t)) return POLIS_ERR_ACTION;
    int32_t *dst = polis_grid_cell(grid, g->layer_agents, t.x, t.y);
    if (*dst != 0) return POLIS_OK; /* blocked by another agent */
    *polis_grid_cell(grid, g->layer_agents, p->x, p->y) = 0;
    *dst = agent + 1;
    moved_ev ev = {agent, p->x, p->y, t.x, t.y};
    *p = t;
    return g->h->publish(ctx, g->ev_moved, &ev, sizeof ev);
}

/* A uniformly random cell with neither coin nor agent; false if there is none. Rejection
 * sampling first (cheap on sparse maps), then a scan from a random start. */
static bool free_cell(gather *g, pos *out)
{
    const polis_grid *grid = g->h->grid(g->ctx);
    polis_rng *rng = g->h->rng(g->ctx);
    int32_t w = grid->width, hgt = grid->height;
    for (int tries = 0; tries < 64; tries++) {
        int32_t x = (int32_t)polis_rng_below(rng, (uint32_t)w);
        int32_t y = (int32_t)polis_rng_below(rng, (uint32_t)hgt);
        if (!*polis_grid_cell(grid, g->layer_agents, x, y) &&
            !*polis_grid_cell(grid, g->layer_coins, x, y)) {
            *out = (pos){x, y};
            return true;
        }
    }
    int64_t cells = (int64_t)w * hgt;
    int64_t start = polis_rng_below(rng, (uint32_t)cells);
    for (int64_t k = 0; k < cells; k++) {
        int64_t c = (start + k) % cells;
        int32_t x = (int32_t)(c % w), y = (int32_t)(c / w);
        if (!*polis_grid_cell(grid, g->layer_agents, x, y) &&
            !*polis_grid_cell(grid, g->layer_coins, x, y)) {
            *out = (pos){x, y};
            return true;
        }
    }
    return false;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    memset(g->total_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    for (int32_t a = 0; a < g->n_agents; a++) {
        pos p;
        if (!free_cell(g, &p)) {
            g->h->error(ctx, "no free cell for agent %d", a);
            return POLIS_ERR_LIMIT;
        }
        *agent_pos(g, a) = p;
        *polis_grid_cell(grid, g->layer_agents, p.x, p.y) = a + 1;
    }
    g->coins_left = 0;
    for (int64_t c = 0; c < g->p.coins; c++) {
        pos p;
        if (!free_cell(g, &p)) break; /* start() guaranteed room; defensive only */
        *polis_grid_cell(grid, g->layer_coins, p.x, p.y) = 1;
        g->coins_left++;
    }
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    memset(g->step_coins, 0, sizeof(int32_t) * (size_t)g->n_agents);
    return POLIS_OK;
}

static polis_status on_resolve(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    for (int32_t a = 0; a < g->n_agents; a++) {
        pos p = *agent_pos(g, a);
        int32_t *coin = polis_grid_cell(grid, g->layer_coins, p.x, p.y);
        if (!*coin) continue;
        *coin = 0;
        g->coins_left--;
        g->step_coins[a]++;
        g->total_coins[a]++;
        coin_ev ev = {a, p.x, p.y};
        polis_status st = g->h->publish(ctx, g->ev_coin, &ev, sizeof ev);
        if (st) return st;
        pos np;
        if (g->p.respawn && free_cell(g, &np)) {
            *polis_grid_cell(grid, g->layer_coins, np.x, np.y) = 1;
            g->coins_left++;
        }
    }
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    gather *g = ud;
    if (g->coins_left > 0 || g->p.respawn) return POLIS_OK;
    const polis_io *io = g->h->io(ctx);
    for (int32_t a = 0; a < g->n_agents; a++) io->terminations[a] = 1;
    return POLIS_OK;
}

static polis_status reward_coins(polis_ctx *ctx, void *ud, float *out)
{
    gather *g = ud;
    for (int32_t a = 0; a < g->n_agents; a++)
        out[a] = (float)(g->step_coins[a] * g->p.coin_value);
    return POLIS_OK;
}

static void write_view(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    int8_t *out = dst;
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1, cells = side * side;
    pos p = *agent_pos(g, agent);
    g->h->grid_window(ctx, g->layer_agents, p.x, p.y, v, v, -1, g->window);
    for (int32_t i = 0; i < cells; i++)
        out[i] = (int8_t)(g->window[i] == agent + 1 ? 2 : g->window[i] > 0 ? 1 : g->window[i]);
    g->h->grid_window(ctx, g->layer_coins, p.x, p.y, v, v, 0, g->window);
    for (int32_t i = 0; i < cells; i++) out[cells + i] = (int8_t)g->window[i];
}

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    gather *g = ud;
    pos p = *agent_pos(g, agent);
    int32_t xy[2] = {p.x, p.y};
    memcpy(dst, xy, sizeof xy);
}

/* ---- views for LLM agents and tools ----------------------------------------------------- */

static const char *const DIR_NAMES[4] = {"north", "south", "west", "east"};

static int32_t iabs(int32_t v) { return v < 0 ? -v : v; }

/* One visible thing: its offset from the viewer, its cell and its layer value. */
typedef struct seen {
    int32_t dx, dy, x, y, value;
} seen;

/* The things on `layer` in agent's view window (coins, or the other agents), nearest first
 * by steps (|dx| + |dy|), ties in row order, so the prose and the JSON list them alike.
 * Stores those numbered [skip, skip + cap) in out and returns the count of all of them, so
 * a caller pages through a crowded window with a small array. The window is copied into
 * g->window: scratch shared with write_view, which is safe because rendering never runs
 * inside a step. */
static int32_t seen_on_layer(gather *g, int32_t agent, int32_t layer, seen *out, int32_t skip,
                             int32_t cap)
{
    const polis_grid *grid = g->h->grid(g->ctx);
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1, n = 0;
    pos p = *agent_pos(g, agent);
    g->h->grid_window(g->ctx, layer, p.x, p.y, v, v, -1, g->window);
    for (int32_t d = 0; d <= 2 * v; d++) {
        for (int32_t i = 0; i < side * side; i++) {
            int32_t dx = i % side - v, dy = i / side - v, val = g->window[i];
            if (iabs(dx) + iabs(dy) != d || val <= 0) continue;
            if (layer == g->layer_agents && val == agent + 1) continue;
            if (n >= skip && n - skip < cap) {
                int32_t x = p.x + dx, y = p.y + dy;
                if (grid->wrap) {
                    x = ((x % grid->width) + grid->width) % grid->width;
                    y = ((y % grid->height) + grid->height) % grid->height;
                }
                out[n - skip] = (seen){dx, dy, x, y, val};
            }
            n++;
        }
    }
    return n;
}

/* "2 south, 1 west (3 steps)" */
static void say_offset(const polis_host *h, polis_text *t, int32_t dx, int32_t dy)
{
    if (dy) h->text_printf(t, "%d %s", iabs(dy), dy < 0 ? "north" : "south");
    if (dx) h->text_printf(t, "%s%d %s", dy ? ", " : "", iabs(dx), dx < 0 ? "west" : "east");
    int32_t steps = iabs(dx) + iabs(dy);
    if (steps == 0)
        h->text_printf(t, "here");
    else
        h->text_printf(t, " (%d step%s)", steps, steps == 1 ? "" : "s");
}

/* Agent names come from the scenario and may hold quotes or backslashes. */
static void json_string(const polis_host *h, polis_text *t, const char *s)
{
    h->text_append(t, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') h->text_append(t, "\\", 1);
        h->text_append(t, s, 1);
    }
    h->text_append(t, "\"", 1);
}

/* A window holds up to (2*32+1)^2 cells. Prose about thousands of coins helps nobody: the
 * text lists the nearest VIEW_LIST of each kind and counts the rest. The JSON lists all,
 * VIEW_LIST at a time. */
#define VIEW_LIST 64

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    gather *g = ud;
    const polis_host *h = g->h;
    const polis_grid *grid = h->grid(ctx);
    const polis_io *io = h->io(ctx);
    pos p = *agent_pos(g, agent);
    seen list[VIEW_LIST];

    h->text_printf(t,
                   "You are %s at (%d, %d) on the %dx%d grid (%s; x grows east, y grows "
                   "south). Tick %lld of %lld.\n",
                   h->agent_name(ctx, agent), p.x, p.y, grid->width, grid->height,
                   grid->wrap ? "it wraps around at the edges" : "bounded", (long long)h->tick(ctx),
                   (long long)h->max_steps(ctx));

    int32_t n = seen_on_layer(g, agent, g->layer_coins, list, 0, VIEW_LIST);
    h->text_printf(t, "Coins in view (up to %lld cells away in x and y): ", (long long)g->p.view);
    if (n == 0)
        h->text_printf(t, "none.\n");
    else
        h->text_printf(t, "%d.\n", n);
    for (int32_t i = 0; i < n && i < VIEW_LIST; i++) {
        h->text_printf(t, "- coin at (%d, %d): ", list[i].x, list[i].y);
        say_offset(h, t, list[i].dx, list[i].dy);
        h->text_printf(t, "\n");
    }
    if (n > VIEW_LIST) h->text_printf(t, "- and %d more.\n", n - VIEW_LIST);

    n = seen_on_layer(g, agent, g->layer_agents, list, 0, VIEW_LIST);
    h->text_printf(t, "Other agents in view: ");
    if (n == 0)
        h->text_printf(t, "none.\n");
    else
        h->text_printf(t, "%d.\n", n);
    for (int32_t i = 0; i < n && i < VIEW_LIST; i++) {
        h->text_printf(t, "- %s at (%d, %d): ", h->agent_name(ctx, list[i].value - 1), list[i].x,
                       list[i].y);
        say_offset(h, t, list[i].dx, list[i].dy);
        h->text_printf(t, "\n");
    }
    if (n > VIEW_LIST) h->text_printf(t, "- and %d more.\n", n - VIEW_LIST);

    h->text_printf(t, "Coins you collected this episode: %d.\n", g->total_coins[agent]);
    if (io->terminations[agent] || io->truncations[agent]) {
        h->text_printf(t, "Your episode is over (%s).\n",
                       io->terminations[agent] ? "terminated" : "truncated");
        return POLIS_OK;
    }
    /* The legal actions follow: the kernel appends them from the mask (docs/kernel.md). */
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    gather *g = ud;
    const polis_host *h = g->h;
    pos p = *agent_pos(g, agent);
    seen list[VIEW_LIST];
    h->text_printf(t, "{\"position\":[%d,%d],\"coins\":[", p.x, p.y);
    int32_t n = 0;
    for (int32_t skip = 0; skip == 0 || skip < n; skip += VIEW_LIST) {
        n = seen_on_layer(g, agent, g->layer_coins, list, skip, VIEW_LIST);
        for (int32_t i = skip; i < n && i < skip + VIEW_LIST; i++)
            h->text_printf(t, "%s[%d,%d]", i ? "," : "", list[i - skip].x, list[i - skip].y);
    }
    h->text_printf(t, "],\"agents\":[");
    for (int32_t skip = 0; skip == 0 || skip < n; skip += VIEW_LIST) {
        n = seen_on_layer(g, agent, g->layer_agents, list, skip, VIEW_LIST);
        for (int32_t i = skip; i < n && i < skip + VIEW_LIST; i++) {
            int32_t other = list[i - skip].value - 1;
            h->text_printf(t, "%s{\"id\":%d,\"name\":", i ? "," : "", other);
            json_string(h, t, h->agent_name(ctx, other));
            h->text_printf(t, ",\"position\":[%d,%d]}", list[i - skip].x, list[i - skip].y);
        }
    }
    h->text_printf(t, "],\"collected\":%d}", g->total_coins[agent]);
    return POLIS_OK;
}

/* ---- text and JSON actions ------------------------------------------------------------ */

/* Which move a word names: 0..3, or -1. */
static int32_t direction_of(const char *w)
{
    for (int32_t d = 0; d < 4; d++)
        if (strcmp(w, DIR_NAMES[d]) == 0) return d;
    return -1;
}

/* Splits a command into at most 3 lower-case words (separators: whitespace, '_' and '-';
 * one trailing '.' is ignored). Returns the word count, or -1 when it is not a short
 * command of letters. */
static int split_words(const char *s, char words[3][16])
{
    size_t n = strlen(s);
    if (n > 0 && s[n - 1] == '.') n--;
    int count = 0;
    size_t len = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? s[i] : ' ';
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '_' || c == '-') {
            if (len) words[count++][len] = '\0';
            len = 0;
            continue;
        }
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c < 'a' || c > 'z' || len >= 15 || (len == 0 && count == 3)) return -1;
        words[count][len++] = c;
    }
    return count;
}

/* "north", "move north", "go north", "stay", "wait". A known verb with a wrong or missing
 * direction is for this parser but malformed: an error that says what is accepted. */
static polis_status parse_words(gather *g, const char *s, int32_t *out)
{
    char w[3][16];
    int n = split_words(s, w);
    if (n < 1) return POLIS_ERR_ACTION;
    if (n == 1 &&
        (strcmp(w[0], "stay") == 0 || strcmp(w[0], "wait") == 0 || strcmp(w[0], "noop") == 0)) {
        *out = 0; /* the kernel's noop */
        return POLIS_OK;
    }
    int32_t d = direction_of(w[0]);
    if (n == 1 && d >= 0) {
        *out = g->act[d];
        return POLIS_OK;
    }
    bool verb = strcmp(w[0], "move") == 0 || strcmp(w[0], "go") == 0;
    if (!verb) return POLIS_ERR_ACTION;
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

/* A minimal reader for the one JSON shape this parser takes, {"action": "move",
 * "direction": "north"}: plugins never link the engine (or its cJSON), and a flat object of
 * strings needs little. Other members are skipped whatever their type.
 *
 * The input is untrusted (any `polis serve` client writes it), so the reader keeps one
 * invariant: r->s never moves past the terminating NUL. Every step that consumes a
 * character first checks which one it is (jr_eat), so a truncated input stops at its end
 * and reads nothing after it. */
typedef struct jreader {
    const char *s;
    bool bad;
} jreader;

static void jr_ws(jreader *r)
{
    while (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r') r->s++;
}

/* Consumes `c` if it is the next character; false (and nothing consumed) otherwise. */
static bool jr_eat(jreader *r, char c)
{
    if (*r->s != c) return false;
    r->s++;
    return true;
}

/* A string into buf (cut to size-1; *cut set when longer). Non-ASCII escapes become '?'. */
static void jr_string(jreader *r, char *buf, size_t size, bool *cut)
{
    size_t len = 0;
    if (*r->s != '"') {
        r->bad = true;
        return;
    }
    r->s++;
    for (;;) {
        char c = *r->s;
        if (c == '\0' || (unsigned char)c < 0x20) {
            r->bad = true;
            return;
        }
        r->s++;
        if (c == '"') break;
        if (c == '\\') {
            char e = *r->s;
            if (e == '\0') {
                r->bad = true;
                return;
            }
            r->s++;
            switch (e) {
            case '"':
            case '\\':
            case '/': c = e; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    char hx = *r->s;
                    v <<= 4;
                    if (hx >= '0' && hx <= '9')
                        v |= (unsigned)(hx - '0');
                    else if (hx >= 'a' && hx <= 'f')
                        v |= (unsigned)(hx - 'a' + 10);
                    else if (hx >= 'A' && hx <= 'F')
                        v |= (unsigned)(hx - 'A' + 10);
                    else {
                        r->bad = true; /* also the NUL of a truncated escape */
                        return;
                    }
                    r->s++;
                }
                c = v > 0 && v < 0x80 ? (char)v : '?';
                break;
            }
            default: r->bad = true; return;
            }
        }
        if (buf && len + 1 < size)
            buf[len++] = c;
        else if (cut)
            *cut = true;
    }
    if (buf) buf[len] = '\0';
}

static void jr_value(jreader *r, int depth)
{
    jr_ws(r);
    char c = *r->s;
    if (depth > 32) {
        r->bad = true;
    } else if (c == '"') {
        jr_string(r, NULL, 0, NULL);
    } else if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->s++;
        jr_ws(r);
        if (*r->s == close) {
            r->s++;
            return;
        }
        while (!r->bad) {
            if (c == '{') {
                jr_ws(r);
                jr_string(r, NULL, 0, NULL);
                jr_ws(r);
                if (!r->bad && !jr_eat(r, ':')) r->bad = true;
            }
            if (r->bad) return;
            jr_value(r, depth + 1);
            if (r->bad) return;
            jr_ws(r);
            if (jr_eat(r, ',')) continue;
            if (!jr_eat(r, close)) r->bad = true;
            return;
        }
    } else {
        /* numbers, true, false, null: their characters; the exact grammar does not matter
         * to an input this parser only accepts when "action" and "direction" are strings */
        const char *start = r->s;
        while ((*r->s >= '0' && *r->s <= '9') || (*r->s >= 'a' && *r->s <= 'z') || *r->s == '-' ||
               *r->s == '+' || *r->s == '.' || *r->s == 'E')
            r->s++;
        if (r->s == start) r->bad = true;
    }
}

static polis_status parse_json_action(gather *g, const char *s, int32_t *out)
{
    jreader r = {s, false};
    char action[32] = "", direction[32] = "";
    bool has_action = false, has_direction = false, cut = false;
    jr_ws(&r);
    if (!jr_eat(&r, '{')) return POLIS_ERR_ACTION;
    jr_ws(&r);
    if (!jr_eat(&r, '}')) {
        while (!r.bad) {
            char key[16];
            bool key_cut = false;
            jr_ws(&r);
            jr_string(&r, key, sizeof key, &key_cut);
            jr_ws(&r);
            if (r.bad || !jr_eat(&r, ':')) return POLIS_ERR_ACTION;
            jr_ws(&r);
            bool is_action = !key_cut && strcmp(key, "action") == 0;
            bool is_dir = !key_cut && strcmp(key, "direction") == 0;
            if ((is_action || is_dir) && *r.s == '"') {
                jr_string(&r, is_action ? action : direction, sizeof action, &cut);
                if (is_action)
                    has_action = true;
                else
                    has_direction = true;
            } else {
                jr_value(&r, 1);
            }
            if (r.bad) return POLIS_ERR_ACTION;
            jr_ws(&r);
            if (jr_eat(&r, ',')) continue;
            if (!jr_eat(&r, '}')) r.bad = true;
            break;
        }
    }
    jr_ws(&r);
    if (r.bad || *r.s != '\0' || !has_action || cut) return POLIS_ERR_ACTION;
    for (char *c = action; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    for (char *c = direction; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    bool move = strcmp(action, "move") == 0 || strcmp(action, "go") == 0;
    if (move && (!has_direction || direction_of(direction) < 0)) {
        if (has_direction)
            g->h->error(g->ctx, "\"direction\": \"%s\" is not north, south, west or east",
                        direction);
        else
            g->h->error(g->ctx,
                        "{\"action\": \"%s\"} needs \"direction\": north, south, west "
                        "or east",
                        action);
        return POLIS_ERR_INVALID;
    }
    char words[96];
    snprintf(words, sizeof words, "%s%s%s", action, has_direction ? " " : "",
             has_direction ? direction : "");
    return parse_words(g, words, out);
}

static polis_status parse_action(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                 int32_t *out)
{
    gather *g = ud;
    if (input[0] == '{') return parse_json_action(g, input, out);
    return parse_words(g, input, out);
}

static polis_status gather_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                void **state)
{
    gather *g = h->alloc(ctx, sizeof *g);
    if (!g) return POLIS_ERR_NOMEM;
    *state = g;
    g->h = h;
    g->ctx = ctx;
    memcpy(&g->p, params, sizeof g->p);
    g->n_agents = h->n_agents(ctx);
    int32_t v = (int32_t)g->p.view, side = 2 * v + 1;
    g->step_coins = h->alloc(ctx, sizeof(int32_t) * (size_t)g->n_agents);
    g->total_coins = h->alloc(ctx, sizeof(int32_t) * (size_t)g->n_agents);
    g->window = h->alloc(ctx, sizeof(int32_t) * (size_t)side * (size_t)side);
    if (!g->step_coins || !g->total_coins || !g->window) return POLIS_ERR_NOMEM;

    polis_status st;
    if ((st = h->grid_layer(ctx, "agents", &g->layer_agents))) return st;
    if ((st = h->grid_layer(ctx, "coins", &g->layer_coins))) return st;
    if ((st = h->component(ctx, "gather.position", sizeof(pos), &g->comp_pos))) return st;

    static const char *names[4] = {"move_north", "move_south", "move_west", "move_east"};
    static const char *docs[4] = {"move to y-1", "move to y+1", "move to x-1", "move to x+1"};
    for (int32_t d = 0; d < 4; d++) {
        polis_action_def a = {.name = names[d], .doc = docs[d], .handler = move,
                              .legal = move_legal, .arg = d, .ud = g};
        if ((st = h->action(ctx, &a, &g->act[d]))) return st;
    }
    polis_obs_def view = {.name = "view",
                          .doc = "egocentric window: [0] agents (2 self, 1 other, -1 outside), "
                                 "[1] coins",
                          .dtype = POLIS_DTYPE_I8, .ndim = 3, .shape = {2, side, side},
                          .write = write_view, .ud = g};
    polis_obs_def position = {.name = "position", .doc = "own (x, y)", .dtype = POLIS_DTYPE_I32,
                              .ndim = 1, .shape = {2}, .write = write_position, .ud = g};
    if ((st = h->observation(ctx, &view, &g->obs_view))) return st;
    if ((st = h->observation(ctx, &position, &g->obs_position))) return st;
    if ((st = h->reward(ctx, "coins", reward_coins, g))) return st;

    static const polis_field_def moved_fields[5] = {{"agent", POLIS_FIELD_I32},
                                                    {"from_x", POLIS_FIELD_I32},
                                                    {"from_y", POLIS_FIELD_I32},
                                                    {"x", POLIS_FIELD_I32},
                                                    {"y", POLIS_FIELD_I32}};
    static const polis_field_def coin_fields[3] = {
        {"agent", POLIS_FIELD_I32}, {"x", POLIS_FIELD_I32}, {"y", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "agent.moved", moved_fields, 5, &g->ev_moved))) return st;
    if ((st = h->event_type(ctx, "coin.collected", coin_fields, 3, &g->ev_coin))) return st;

    if ((st = h->renderer(ctx, "text", render_text, g))) return st;
    if ((st = h->renderer(ctx, "json", render_json, g))) return st;
    if ((st = h->action_parser(ctx, parse_action, g))) return st;

    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_RESOLVE, 0, on_resolve, g))) return st;
    if ((st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, g))) return st;
    return POLIS_OK;
}

/* The scene (ABI 1.5): the floor, a layer of coins, each agent's position, facing the way it
 * last moved, and the coins it collected this episode. */
static polis_status write_scene(polis_ctx *ctx, void *ud, polis_scene *sc)
{
    gather *g = ud;
    const polis_grid *grid = g->h->grid(ctx);
    size_t plane = (size_t)sc->width * (size_t)sc->height;
    int32_t *ground = sc->tiles + (size_t)g->look_ground * plane;
    int32_t *coins = sc->tiles + (size_t)g->look_coins * plane;
    for (int32_t y = 0; y < grid->height; y++)
        for (int32_t x = 0; x < grid->width; x++) {
            size_t i = (size_t)y * (size_t)sc->width + (size_t)x;
            ground[i] = g->kind_floor;
            if (*polis_grid_cell(grid, g->layer_coins, x, y)) coins[i] = g->kind_coin;
        }
    for (int32_t a = 0; a < g->n_agents; a++) {
        const pos *p = agent_pos(g, a);
        sc->agents[a].x = p->x;
        sc->agents[a].y = p->y;
        sc->stats[(size_t)a * (size_t)sc->n_stats + (size_t)g->stat_coins] = g->total_coins[a];
    }
    return POLIS_OK;
}

static polis_status register_looks(gather *g)
{
    const polis_host *h = g->h;
    if (h->struct_size <= offsetof(polis_host, look_kind_find)) return POLIS_OK;
    static const polis_kind_def floor = {"floor", ".", "#2b2f36", POLIS_SHAPE_SQUARE};
    static const polis_kind_def coin = {"coin", "o", "#f2c94c", POLIS_SHAPE_CIRCLE};
    polis_scene_def scene = {.fn = write_scene, .ud = g};
    polis_status st;
    if ((st = h->look_kind(g->ctx, &floor, &g->kind_floor)) ||
        (st = h->look_kind(g->ctx, &coin, &g->kind_coin)) ||
        (st = h->look_layer(g->ctx, "ground", &g->look_ground)) ||
        (st = h->look_layer(g->ctx, "coins", &g->look_coins)) ||
        (st = h->look_stat(g->ctx, "coins", "inventory", 0, &g->stat_coins)) ||
        (st = h->look_view(g->ctx, (int32_t)g->p.view, (int32_t)g->p.view)) ||
        (st = h->look_scene(g->ctx, &scene)))
        return st;
    return POLIS_OK;
}

/* Runs after every plugin's init, when the grid size is final. */
static polis_status gather_start(polis_ctx *ctx, void *state)
{
    gather *g = state;
    const polis_grid *grid = g->h->grid(ctx);
    if (!grid) {
        g->h->error(ctx, "needs a grid: add \"grid\": {\"width\": W, \"height\": H} to the "
                         "scenario");
        return POLIS_ERR_CONFIG;
    }
    int64_t cells = (int64_t)grid->width * grid->height;
    if (g->n_agents + g->p.coins > cells) {
        g->h->error(ctx, "%d agents and %lld coins do not fit on a %dx%d grid", g->n_agents,
                    (long long)g->p.coins, grid->width, grid->height);
        return POLIS_ERR_CONFIG;
    }
    if (g->h->struct_size > offsetof(polis_host, obs_range)) { /* ABI 1.4: value ranges */
        const double vlo[2] = {-1, 0}, vhi[2] = {2, 1}; /* agents (2 self, 1 other), coins */
        const double plo[2] = {0, 0}, phi[2] = {grid->width - 1, grid->height - 1};
        polis_status st;
        if ((st = g->h->obs_range(ctx, g->obs_view, 0, 2, vlo, vhi)) ||
            (st = g->h->obs_range(ctx, g->obs_position, 0, 2, plo, phi)))
            return st;
    }
    return register_looks(g);
}

static void gather_destroy(polis_ctx *ctx, void *state)
{
    gather *g = state;
    if (!g) return;
    int32_t side = 2 * (int32_t)g->p.view + 1;
    g->h->free(ctx, g->step_coins, sizeof(int32_t) * (size_t)g->n_agents);
    g->h->free(ctx, g->total_coins, sizeof(int32_t) * (size_t)g->n_agents);
    g->h->free(ctx, g->window, sizeof(int32_t) * (size_t)side * (size_t)side);
    g->h->free(ctx, g, sizeof *g);
}

/* Exports for scenarios and Lua (polis.call("gather.coins_left")). */
static int32_t gather_coins_left(polis_ctx *ctx)
{
    gather *g = polis_ctx_state(ctx);
    return g->coins_left;
}

static int32_t gather_total(polis_ctx *ctx, int32_t agent)
{
    gather *g = polis_ctx_state(ctx);
    return agent >= 0 && agent < g->n_agents ? g->total_coins[agent] : -1;
}

static const polis_export gather_exports[] = {
    {"coins_left", "i32(ctx)", (void (*)(void))gather_coins_left, "coins on the map now"},
    {"total", "i32(ctx,i32)", (void (*)(void))gather_total,
     "coins agent collected this episode (-1 for a bad id)"},
};

static const polis_param_def gather_params_table[] = {
    {"coins", POLIS_PARAM_INT, offsetof(gather_params, coins), 0, 1000000, 8, NULL,
     "coins on the map at reset", false},
    {"coin_value", POLIS_PARAM_DOUBLE, offsetof(gather_params, coin_value), -1e6, 1e6, 1.0,
     NULL, "reward per coin collected", false},
    {"view", POLIS_PARAM_INT, offsetof(gather_params, view), 0, 32, 2, NULL,
     "view radius of the observation window", false},
    {"respawn", POLIS_PARAM_BOOL, offsetof(gather_params, respawn), 0, 1, 1, NULL,
     "a collected coin reappears elsewhere", false},
};

static const polis_plugin_desc gather_desc = {
    .abi_major = POLIS_ABI_MAJOR,
    .struct_size = sizeof(polis_plugin_desc),
    .name = "gather",
    .abi_minor = POLIS_ABI_MINOR,
    .version = "1.0.0",
    .doc = "demo game: agents walk a grid and collect coins",
    .params = gather_params_table,
    .n_params = 4,
    .params_size = sizeof(gather_params),
    .init = gather_init,
    .start = gather_start,
    .destroy = gather_destroy,
    .exports = gather_exports,
    .n_exports = 2,
};

POLIS_PLUGIN(gather_desc)
