/*
 * plan.c — plans (macro actions) for LLM agents, registered with host->macro (ABI 1.2):
 *
 *   GATHER [<n>] <resource>   walk to the nearest pile of it and pick until n more are held
 *   CRAFT [<n>] <item>        walk to a station whose recipe makes it and produce
 *   EXPLORE [MAP] [<ticks>]   walk towards cells not in view until something new shows up
 *   DUMP [<n>] <resource>     lay units on the agent's cell
 *   GOTO <x> <y>              walk to a cell
 *
 * the plans AdaSociety's LLM agents choose ("GATHER 5 WOOD", "CRAFT 1 HAMMER", "EXPLORE MAP",
 * "DUMP HAMMER"), plus GOTO. Each tick the kernel asks a running plan for the agent's action;
 * the plan answers with one primitive action legal under the agent's mask (noop when the
 * action it wants is masked, e.g. in a mini-game's negotiation stage), or ends, DONE or
 * IMPOSSIBLE, with a one-line reason (README "Plans" lists every reason).
 *
 * What a plan knows is what its agent knows: targets (piles, stations) come from the agent's
 * own field of view as it sees it (requirements filter piles and stations, as in the
 * observation), and a plan remembers the targets it saw earlier in the plan (PLAN_MEMORY
 * cells), forgetting one when it comes back into view without the target. Paths are shortest
 * paths over the whole map's blocks — terrain is static within an episode and the agent may
 * know it (a GOTO can cross the map) — around the other agents it sees, across the torus'
 * wrap. A move can fail in the collision resolution: the plan re-plans from the actual
 * position at the next tick. When an agent's body blocks every way, the plan walks the path
 * that ignores agents and waits for the way to clear.
 *
 * Progress: a plan gives up after plan_patience ticks in a row without progress (a unit
 * gathered, produced or dumped, or the path to its target shorter than ever since the last
 * such unit). Counting uses the plan's own actions: a unit counts when the plan chose the
 * action at the previous tick and the inventory changed accordingly.
 *
 * Randomness (EXPLORE's destinations) comes only from host->policy_rng. Nothing allocates:
 * the search arrays (a distance, a first move and a queue per cell) are sized at start. A
 * tick costs one or two breadth-first searches over the map, O(cells), plus a scan of the
 * agent's window.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* move_up, move_down, move_left, move_right (rules.c): x is the vertical axis. */
static const int32_t DX[4] = {-1, 1, 0, 0};
static const int32_t DY[4] = {0, 0, -1, 1};

enum { PLAN_GATHER, PLAN_CRAFT, PLAN_EXPLORE, PLAN_DUMP, PLAN_GOTO };
#define PLAN_MEMORY 16
#define PLAN_MAX_COUNT 1000000
#define NO_DIST INT32_MAX

typedef struct plan {
    int32_t kind;
    int32_t res;       /* GATHER, DUMP: the resource; CRAFT: the item made */
    int32_t recipe;    /* CRAFT: the recipe named in the command, -1: any recipe making res */
    int32_t n;         /* units to gather, craft or dump; EXPLORE: ticks to walk */
    int32_t got;       /* units gathered, crafted or dumped so far */
    int32_t gx, gy;    /* GOTO: the destination; others: the exploring destination, gx -1 none */
    int32_t sx, sy;    /* where the agent stood when the plan started */
    int32_t ticks;     /* actions chosen */
    int32_t idle;      /* ticks in a row without progress */
    int32_t best;      /* shortest path to a target since the last progress, NO_DIST none */
    int64_t last_tick; /* when the plan last chose an action, -2 before the first */
    int32_t last_action, last_inv; /* that action, and the units of res held then */
    bool masked;                   /* the mask refused the action the plan wanted last */
    int32_t n_mem;
    int32_t mem[PLAN_MEMORY]; /* cells where the plan saw a target */
} plan;

/* ---- the agent and its view ------------------------------------------------------------ */

static inline int32_t *inv_of(const soc *s, int32_t agent)
{
    return s->inv + (size_t)agent * (size_t)s->R;
}

static inline int32_t cap_of(const soc *s, int32_t agent, int32_t r)
{
    return s->cap[(size_t)s->agent_job[agent] * (size_t)s->R + (size_t)r];
}

static inline const soc_job *job_of(const soc *s, int32_t agent)
{
    return &s->jobs[s->agent_job[agent]];
}

static inline int32_t here(const soc *s, int32_t agent)
{
    return s->ay[agent] * s->W + s->ax[agent];
}

static inline bool is_block(const soc *s, int32_t cell)
{
    return *soc_layer(s, s->L_blocks, cell) != 0;
}

static inline int32_t torus_dist(int32_t a, int32_t b, int32_t n)
{
    int32_t d = a > b ? a - b : b - a;
    return d < n - d ? d : n - d;
}

/* Whether the cell is inside the field of view the agent has when standing at (cx, cy). */
static bool in_view_of(const soc *s, int32_t agent, int32_t cx, int32_t cy, int32_t cell)
{
    const soc_job *j = job_of(s, agent);
    return torus_dist(cell % s->W, cx, s->W) <= j->fov_h &&
           torus_dist(cell / s->W, cy, s->H) <= j->fov_v;
}

static bool in_view(const soc *s, int32_t agent, int32_t cell)
{
    return in_view_of(s, agent, s->ax[agent], s->ay[agent], cell);
}

static int32_t pile_at(const soc *s, int32_t cell, int32_t r)
{
    return s->piles[(size_t)cell * (size_t)s->R + (size_t)r];
}

/* `action` if the agent's mask allows it, else noop. */
static int32_t allowed(const soc *s, int32_t agent, int32_t action)
{
    const polis_io *io = s->h->io(s->ctx);
    return io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)action] ? action : 0;
}

/* Units of r the agent can still take in: its capacity for r and its job's size. */
static int64_t room_for(const soc *s, int32_t agent, int32_t r)
{
    int64_t by_cap = (int64_t)cap_of(s, agent, r) - inv_of(s, agent)[r];
    int64_t by_size = job_of(s, agent)->size - s->inv_total[agent];
    return by_cap < by_size ? by_cap : by_size;
}

/* ---- text --------------------------------------------------------------------------------- */

/* "wood 1, stone 2" for amounts[first .. first + n), each times `times`. */
static void amounts_text(const soc *s, int32_t first, int32_t n, int64_t times, char *buf,
                         size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used < cap; i++) {
        const soc_amount *a = &s->amounts[first + i];
        int w = snprintf(buf + used, cap - used, "%s%s %lld", i ? ", " : "",
                         a->res >= 0 ? s->res[a->res].name : "(a resource not in play)",
                         (long long)(a->n * times));
        if (w < 0) return;
        used += (size_t)w;
    }
}

static void resource_list(const soc *s, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t r = 0; r < s->R; r++) {
        int w = snprintf(buf + used, cap - used, "%s%s", r ? ", " : "", s->res[r].name);
        if (w < 0 || (size_t)w >= cap - used) {
            if (cap > 4) snprintf(buf + (used < cap - 4 ? used : cap - 4), 4, "...");
            return;
        }
        used += (size_t)w;
    }
}

/* ---- arguments ----------------------------------------------------------------------------- */

#define MAX_WORDS 4

typedef struct words {
    char buf[256];
    char *w[MAX_WORDS];
    int n;
} words;

/* Splits the arguments at spaces (and, for coordinates, at commas and parentheses); one
 * trailing '.' is dropped, as the seeds' LLM answers end their plans with one ("GATHER 5
 * WOOD."). False if they do not fit. */
static bool split(const char *args, const char *seps, words *out)
{
    size_t len = strlen(args);
    out->n = 0;
    if (len >= sizeof out->buf) return false;
    memcpy(out->buf, args, len + 1);
    while (len > 0 && (out->buf[len - 1] == ' ' || out->buf[len - 1] == '\t')) len--;
    if (len > 0 && out->buf[len - 1] == '.') len--;
    out->buf[len] = '\0';
    char *p = out->buf;
    for (;;) {
        while (*p && strchr(seps, *p)) *p++ = '\0';
        if (!*p) return true;
        if (out->n == MAX_WORDS) return false;
        out->w[out->n++] = p;
        while (*p && !strchr(seps, *p)) p++;
    }
}

/* An integer of at most 9 digits with an optional sign; false for anything else. */
static bool parse_int(const char *w, int32_t *out)
{
    const char *p = w;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (!*p || strlen(p) > 9) return false;
    int32_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* Resource and recipe names are lower case ([a-z0-9_]); commands may shout them. */
static void lower(const char *w, char *out, size_t cap)
{
    size_t i = 0;
    for (; w[i] && i + 1 < cap; i++) out[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
    out[i] = '\0';
}

static int32_t find_resource(const soc *s, const char *w)
{
    char name[SOC_NAME_MAX];
    if (strlen(w) >= sizeof name) return -1;
    lower(w, name, sizeof name);
    return soc_resource_find(s, name);
}

/* "[<n>] <name>": the count (1 when absent) and the name's word. */
static bool count_and_name(soc *s, polis_ctx *ctx, const char *usage, const char *args, int32_t *n,
                           const char **name, words *ws)
{
    if (!split(args, " \t", ws) || ws->n == 0 || ws->n > 2) {
        s->h->error(ctx, "expected %s, got \"%s\"", usage, args);
        return false;
    }
    *n = 1;
    *name = ws->w[ws->n - 1];
    if (ws->n == 2) {
        if (!parse_int(ws->w[0], n)) {
            s->h->error(ctx, "\"%s\" is not a count (usage: %s)", ws->w[0], usage);
            return false;
        }
        if (*n <= 0 || *n > PLAN_MAX_COUNT) {
            s->h->error(ctx, "the count must be between 1 and %d, got %d", PLAN_MAX_COUNT, (int)*n);
            return false;
        }
    }
    return true;
}

static bool resource_arg(soc *s, polis_ctx *ctx, const char *w, int32_t *r)
{
    *r = find_resource(s, w);
    if (*r >= 0) return true;
    char list[512];
    resource_list(s, list, sizeof list);
    s->h->error(ctx, "\"%s\" is not a resource (resources in play: %s)", w, list);
    return false;
}

/* ---- searching --------------------------------------------------------------------------- */

typedef struct search {
    soc *s;
    const plan *p;
    int32_t agent;
    bool agents;  /* the other agents the agent sees are obstacles */
    int32_t goal; /* a destination cell (GOTO, exploring), -1: the plan's targets */
    int32_t found, found_dist, found_first;
} search;

static int32_t map_step(void *ud, int32_t cell, int32_t dir)
{
    const search *q = ud;
    const soc *s = q->s;
    int32_t x = soc_wrap(cell % s->W + DX[dir], s->W), y = soc_wrap(cell / s->W + DY[dir], s->H);
    int32_t next = y * s->W + x;
    if (is_block(s, next)) return -1;
    if (q->agents) {
        int32_t other = *soc_layer(s, s->L_agents, next) - 1;
        if (other >= 0 && other != q->agent && in_view(s, q->agent, next) &&
            soc_sees(s, q->agent, other))
            return -1;
    }
    return next;
}

static bool station_makes(const soc *s, const plan *p, int32_t k)
{
    if (p->recipe >= 0) return k == p->recipe;
    const soc_recipe *rc = &s->rec[k];
    for (int32_t i = 0; i < rc->n_out; i++)
        if (s->amounts[rc->out + i].res == p->res) return true;
    return false;
}

static bool remembered(const plan *p, int32_t cell)
{
    for (int32_t i = 0; i < p->n_mem; i++)
        if (p->mem[i] == cell) return true;
    return false;
}

/* What the agent sees on a cell in its view: a target of the plan. */
static bool target_seen(const soc *s, const plan *p, int32_t agent, int32_t cell)
{
    if (p->kind == PLAN_GATHER) return pile_at(s, cell, p->res) > 0;
    int32_t k = *soc_layer(s, s->L_recipes, cell) - 1;
    return k >= 0 && station_makes(s, p, k) && soc_can_run(s, agent, k);
}

/* A target is one in view, or one remembered out of view (the agent cannot know it left). */
static bool is_target(const soc *s, const plan *p, int32_t agent, int32_t cell)
{
    if (in_view(s, agent, cell)) return target_seen(s, p, agent, cell);
    return remembered(p, cell);
}

static bool target_visit(void *ud, int32_t cell, int32_t d, int32_t first)
{
    search *q = ud;
    bool hit = q->goal >= 0 ? cell == q->goal : is_target(q->s, q->p, q->agent, cell);
    if (!hit) return false;
    q->found = cell;
    q->found_dist = d;
    q->found_first = first;
    return true;
}

static void bfs(search *q, int32_t from, bool (*visit)(void *, int32_t, int32_t, int32_t))
{
    soc *s = q->s;
    memset(s->p_dist, 0xff, sizeof *s->p_dist * (size_t)s->cells);
    soc_bfs b = {.dist = s->p_dist,
                 .first = s->p_first,
                 .queue = s->p_queue,
                 .step = map_step,
                 .visit = visit,
                 .ud = q};
    q->found = -1;
    soc_bfs_run(&b, from);
}

/* The nearest target (or q->goal) around the agents in view; failing that, through them.
 * False when none can be reached at all. */
static bool route(search *q)
{
    int32_t from = here(q->s, q->agent);
    q->agents = true;
    bfs(q, from, target_visit);
    if (q->found >= 0) return true;
    q->agents = false;
    bfs(q, from, target_visit);
    return q->found >= 0;
}

static int32_t move_action(const soc *s, int32_t dir) { return dir >= 0 ? s->act_move[dir] : 0; }

/* Adds the targets in view to the plan's memory and forgets remembered cells now seen empty. */
static void remember(const soc *s, plan *p, int32_t agent)
{
    for (int32_t i = 0; i < p->n_mem;) {
        int32_t c = p->mem[i];
        if (in_view(s, agent, c) && !target_seen(s, p, agent, c))
            p->mem[i] = p->mem[--p->n_mem];
        else
            i++;
    }
    const soc_job *j = job_of(s, agent);
    for (int32_t dx = -j->fov_h; dx <= j->fov_h && p->n_mem < PLAN_MEMORY; dx++)
        for (int32_t dy = -j->fov_v; dy <= j->fov_v && p->n_mem < PLAN_MEMORY; dy++) {
            int32_t c =
                soc_wrap(s->ay[agent] + dy, s->H) * s->W + soc_wrap(s->ax[agent] + dx, s->W);
            if (target_seen(s, p, agent, c) && !remembered(p, c)) p->mem[p->n_mem++] = c;
        }
}

/* ---- exploring --------------------------------------------------------------------------- */

/* Draws a destination among the cells the agent can reach (blocks only): cells seen neither
 * from where the plan started nor from here if any, else cells out of view, else any other
 * cell. False when the agent cannot leave its cell. */
static bool draw_destination(soc *s, plan *p, int32_t agent)
{
    search q = {.s = s, .p = p, .agent = agent, .agents = false, .goal = -1};
    bfs(&q, here(s, agent), NULL);
    int32_t counts[3] = {0, 0, 0};
    for (int32_t c = 0; c < s->cells; c++) {
        if (s->p_dist[c] <= 0) continue;
        bool now = in_view(s, agent, c);
        counts[2]++;
        if (!now) counts[1]++;
        if (!now && !in_view_of(s, agent, p->sx, p->sy, c)) counts[0]++;
    }
    int tier = counts[0] ? 0 : counts[1] ? 1 : 2;
    if (!counts[tier]) return false;
    polis_rng *rng = s->h->policy_rng(s->ctx);
    int32_t k = (int32_t)polis_rng_below(rng, (uint32_t)counts[tier]);
    for (int32_t c = 0; c < s->cells; c++) {
        if (s->p_dist[c] <= 0) continue;
        bool now = in_view(s, agent, c);
        if ((tier < 2 && now) || (tier == 0 && in_view_of(s, agent, p->sx, p->sy, c))) continue;
        if (k-- == 0) {
            p->gx = c % s->W;
            p->gy = c / s->W;
            return true;
        }
    }
    return false;
}

/* The next move towards the exploring destination, drawing a new one when there is none, it
 * is reached or it cannot be reached any more. -1: the agent cannot leave its cell. */
static int32_t explore_move(soc *s, plan *p, int32_t agent)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (p->gx < 0 || (p->gx == s->ax[agent] && p->gy == s->ay[agent]))
            if (!draw_destination(s, p, agent)) return -1;
        search q = {.s = s, .p = p, .agent = agent, .goal = p->gy * s->W + p->gx};
        if (route(&q)) return move_action(s, q.found_first);
        p->gx = -1;
    }
    return -1;
}

/* ---- progress ------------------------------------------------------------------------------ */

/* Plays `want` if the agent's mask allows it, else noop (a mini-game's stage may mask
 * physical actions: the plan waits). Every action a plan returns passes here. */
static void choose(soc *s, plan *p, int32_t agent, int32_t want, int32_t *out)
{
    int32_t action = allowed(s, agent, want);
    p->masked = want != 0 && action == 0;
    *out = action;
    p->last_tick = s->h->tick(s->ctx);
    p->last_action = action;
    p->last_inv = p->res >= 0 ? inv_of(s, agent)[p->res] : 0;
    p->ticks++;
}

/* Units the plan's previous action moved into (sign 1) or out of (-1) the inventory. */
static int32_t credited(soc *s, const plan *p, int32_t agent, int32_t action, int sign)
{
    if (p->last_tick != s->h->tick(s->ctx) - 1 || p->last_action != action || action == 0) return 0;
    int32_t d = sign * (inv_of(s, agent)[p->res] - p->last_inv);
    return d > 0 ? d : 0;
}

/* Counts a tick without progress; true when plan_patience of them came in a row. The first
 * tick follows no action of the plan, so it is never one. */
static bool stalled(const soc *s, plan *p, bool progress)
{
    p->idle = progress || p->ticks == 0 ? 0 : p->idle + 1;
    return p->idle >= (int32_t)s->p.plan_patience;
}

/* Records the distance to the target this tick; true if it is progress. */
static bool closer(plan *p, int32_t dist)
{
    if (dist < p->best) {
        p->best = dist;
        return true;
    }
    return false;
}

static polis_status end(polis_plan_state *state, polis_plan_state how, char *why, size_t cap,
                        const char *fmt, ...) POLIS_PRINTF(5, 6);

static polis_status end(polis_plan_state *state, polis_plan_state how, char *why, size_t cap,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    *state = how;
    return POLIS_OK;
}

/* The common part of every start: the plan's fields in their initial state. False (with the
 * error set) outside an episode. */
static bool begin(soc *s, polis_ctx *ctx, plan *p, int32_t agent)
{
    if (!s->gcells || agent < 0 || agent >= s->n_agents) {
        s->h->error(ctx, "plans start only after a reset (agent %d)", (int)agent);
        return false;
    }
    memset(p, 0, sizeof *p);
    p->res = p->recipe = p->gx = p->gy = -1;
    p->best = NO_DIST;
    p->last_tick = -2;
    p->sx = s->ax[agent];
    p->sy = s->ay[agent];
    return true;
}

/* ---- GATHER ------------------------------------------------------------------------------ */

/* Why the agent cannot see (and so not pick) r, or false if it can. */
static bool cannot_see(const soc *s, int32_t agent, int32_t r, char *buf, size_t cap)
{
    if (soc_resource_visible(s, agent, r)) return false;
    char req[256];
    amounts_text(s, s->res[r].req, s->res[r].n_req, 1, req, sizeof req);
    snprintf(buf, cap, "cannot see or pick %s: it requires %s", s->res[r].name, req);
    return true;
}

/* Why the agent's inventory cannot take one more r, or false if it can. */
static bool full_for(const soc *s, int32_t agent, int32_t r, char *buf, size_t cap)
{
    if (room_for(s, agent, r) > 0) return false;
    if (inv_of(s, agent)[r] >= cap_of(s, agent, r))
        snprintf(buf, cap, "inventory full: holds %d %s, the capacity of its job %s",
                 (int)inv_of(s, agent)[r], s->res[r].name, job_of(s, agent)->name);
    else
        snprintf(buf, cap, "inventory full: holds %lld units, the size of its job %s",
                 (long long)s->inv_total[agent], job_of(s, agent)->name);
    return true;
}

static polis_status gather_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                 void *mem)
{
    soc *s = ud;
    plan *p = mem;
    if (!begin(s, ctx, p, agent)) return POLIS_ERR_STATE;
    words ws;
    const char *name;
    int32_t n, r;
    char why[512];
    if (!count_and_name(s, ctx, "GATHER <n> <resource>", args, &n, &name, &ws) ||
        !resource_arg(s, ctx, name, &r))
        return POLIS_ERR_ACTION;
    if (cap_of(s, agent, r) == 0) {
        s->h->error(ctx, "its job %s cannot hold %s (capacity 0)", job_of(s, agent)->name,
                    s->res[r].name);
        return POLIS_ERR_ACTION;
    }
    if (cannot_see(s, agent, r, why, sizeof why) || full_for(s, agent, r, why, sizeof why)) {
        s->h->error(ctx, "%s", why);
        return POLIS_ERR_ACTION;
    }
    int64_t room = room_for(s, agent, r);
    if (n > room) {
        if (room == (int64_t)cap_of(s, agent, r) - inv_of(s, agent)[r])
            s->h->error(ctx, "can take only %lld more %s (holds %d, capacity %d)", (long long)room,
                        s->res[r].name, (int)inv_of(s, agent)[r], (int)cap_of(s, agent, r));
        else
            s->h->error(ctx,
                        "can take only %lld more %s (holds %lld units, the "
                        "size of its job is %lld)",
                        (long long)room, s->res[r].name, (long long)s->inv_total[agent],
                        (long long)job_of(s, agent)->size);
        return POLIS_ERR_ACTION;
    }
    p->kind = PLAN_GATHER;
    p->res = r;
    p->n = n;
    return POLIS_OK;
}

/* The common course of GATHER and CRAFT once the plan goes on: `act` (>= 0) when the agent
 * stands on a target, else a step along the route to the nearest one, else exploring; and
 * the end when there was no progress for plan_patience ticks. The reasons read "no <kind>
 * <name> found ...", "the nearest <kind><name> is ...", "(<verb> <got> of <n>)". */
static polis_status seek(soc *s, plan *p, int32_t agent, int32_t act, bool progress,
                         const char *verb, const char *name, const char *kind,
                         polis_plan_state *state, int32_t *out, char *why, size_t cap)
{
    int32_t action = 0, dist = NO_DIST;
    if (act >= 0) {
        action = act;
        dist = 0;
    } else {
        search q = {.s = s, .p = p, .agent = agent, .goal = -1};
        if (route(&q)) {
            dist = q.found_dist;
            action = move_action(s, q.found_first);
        }
    }
    if (dist != NO_DIST && closer(p, dist)) progress = true;
    if (stalled(s, p, progress)) {
        if (p->masked)
            return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                       "no progress for %d ticks: the agent's actions are masked (%s %d of %d)",
                       (int)s->p.plan_patience, verb, (int)p->got, (int)p->n);
        if (dist == NO_DIST)
            return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                       "no %s%s found in %d ticks of exploring (%s %d of %d)", kind, name,
                       (int)s->p.plan_patience, verb, (int)p->got, (int)p->n);
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                   "no progress for %d ticks: the nearest %s%s is %d step%s away and the way is "
                   "blocked (%s %d of %d)",
                   (int)s->p.plan_patience, kind, name, (int)dist, dist == 1 ? "" : "s", verb,
                   (int)p->got, (int)p->n);
    }
    if (dist == NO_DIST) {
        int32_t m = explore_move(s, p, agent);
        action = m < 0 ? 0 : m;
    } else {
        p->gx = -1; /* a new exploration starts afresh */
    }
    choose(s, p, agent, action, out);
    *state = POLIS_PLAN_RUNNING;
    return POLIS_OK;
}

static polis_status gather_next(soc *s, plan *p, int32_t agent, polis_plan_state *state,
                                int32_t *out, char *why, size_t cap)
{
    const char *name = s->res[p->res].name;
    int32_t got = credited(s, p, agent, s->act_pick[p->res], 1);
    bool progress = got > 0;
    p->got += got;
    if (progress) p->best = NO_DIST;
    if (p->got >= p->n)
        return end(state, POLIS_PLAN_DONE, why, cap, "gathered %d %s", (int)p->n, name);
    char reason[400];
    if (cannot_see(s, agent, p->res, reason, sizeof reason) ||
        full_for(s, agent, p->res, reason, sizeof reason))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "%s (gathered %d of %d %s)", reason,
                   (int)p->got, (int)p->n, name);
    remember(s, p, agent);
    bool there = pile_at(s, here(s, agent), p->res) > 0;
    return seek(s, p, agent, there ? s->act_pick[p->res] : -1, progress, "gathered", name, "",
                state, out, why, cap);
}

/* ---- CRAFT ------------------------------------------------------------------------------- */

static int32_t out_units(const soc *s, int32_t k, int32_t r)
{
    const soc_recipe *rc = &s->rec[k];
    int32_t n = 0;
    for (int32_t i = 0; i < rc->n_out; i++)
        if (s->amounts[rc->out + i].res == r) n += s->amounts[rc->out + i].n;
    return n;
}

/* How far recipe k gets for `runs` runs: 0 its requirements are not held, 1 inputs are
 * missing, 2 the results do not fit, 3 it can run. buf says why when below 3. */
static int craft_stage(const soc *s, int32_t agent, int32_t k, int64_t runs, char *buf, size_t cap)
{
    const soc_recipe *rc = &s->rec[k];
    const int32_t *inv = inv_of(s, agent);
    char a[256], b[256];
    if (!soc_recipe_visible(s, agent, k)) {
        amounts_text(s, rc->req, rc->n_req, 1, a, sizeof a);
        snprintf(buf, cap, "cannot see or use %s: it requires %s", rc->name, a);
        return 0;
    }
    size_t used = 0;
    a[0] = '\0';
    for (int32_t i = 0; i < rc->n_in; i++) {
        const soc_amount *m = &s->amounts[rc->in + i];
        int64_t need = (int64_t)m->n * runs;
        if (inv[m->res] >= need) continue;
        int w = snprintf(a + used, sizeof a - used, "%s%s %lld", used ? ", " : "",
                         s->res[m->res].name, (long long)(need - inv[m->res]));
        if (w > 0 && (size_t)w < sizeof a - used) used += (size_t)w;
    }
    if (used) {
        amounts_text(s, rc->in, rc->n_in, runs, b, sizeof b);
        snprintf(buf, cap, "missing inputs for %s: %s (needs %s)", rc->name, a, b);
        return 1;
    }
    int64_t net_total = 0;
    for (int32_t i = 0; i < rc->n_in; i++) net_total -= (int64_t)s->amounts[rc->in + i].n * runs;
    for (int32_t i = 0; i < rc->n_out; i++) {
        const soc_amount *m = &s->amounts[rc->out + i];
        int64_t after = inv[m->res] + (int64_t)m->n * runs;
        for (int32_t j = 0; j < rc->n_in; j++)
            if (s->amounts[rc->in + j].res == m->res)
                after -= (int64_t)s->amounts[rc->in + j].n * runs;
        net_total += (int64_t)m->n * runs;
        if (after > cap_of(s, agent, m->res)) {
            snprintf(buf, cap, "cannot hold the results of %s: %lld %s, capacity %d", rc->name,
                     (long long)after, s->res[m->res].name, (int)cap_of(s, agent, m->res));
            return 2;
        }
    }
    if (s->inv_total[agent] + net_total > job_of(s, agent)->size) {
        snprintf(buf, cap, "cannot hold the results of %s: %lld units, the size of its job %s",
                 rc->name, (long long)(s->inv_total[agent] + net_total), job_of(s, agent)->name);
        return 2;
    }
    if (!soc_can_run(s, agent, k)) {
        snprintf(buf, cap, "cannot run %s", rc->name);
        return 2;
    }
    return 3;
}

/* Whether some recipe of the plan can make the `left` units still wanted: true, or false
 * with the reason of the recipe that got furthest. */
static bool craftable(const soc *s, const plan *p, int32_t agent, int32_t left, char *why,
                      size_t cap)
{
    int best = -1;
    char buf[512];
    for (int32_t k = 0; k < s->K; k++) {
        if (!station_makes(s, p, k)) continue;
        int32_t per = out_units(s, k, p->res);
        int64_t runs = per > 0 ? ((int64_t)left + per - 1) / per : 1;
        int stage = craft_stage(s, agent, k, runs, buf, sizeof buf);
        if (stage == 3) return true;
        if (stage > best) {
            best = stage;
            snprintf(why, cap, "%s", buf);
        }
    }
    if (best < 0) snprintf(why, cap, "no recipe makes %s", s->res[p->res].name);
    return false;
}

static polis_status craft_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                void *mem)
{
    soc *s = ud;
    plan *p = mem;
    if (!begin(s, ctx, p, agent)) return POLIS_ERR_STATE;
    words ws;
    const char *name;
    int32_t n;
    if (!count_and_name(s, ctx, "CRAFT <n> <item>", args, &n, &name, &ws)) return POLIS_ERR_ACTION;
    p->kind = PLAN_CRAFT;
    p->n = n;
    p->recipe = -1;
    p->res = find_resource(s, name);
    if (p->res < 0) {
        char lname[SOC_NAME_MAX];
        lower(name, lname, sizeof lname);
        int32_t k = strlen(name) < sizeof lname ? soc_recipe_find(s, lname) : -1;
        if (k < 0) {
            s->h->error(ctx, "\"%s\" is neither a resource nor a recipe", name);
            return POLIS_ERR_ACTION;
        }
        if (s->rec[k].n_out == 0) {
            s->h->error(ctx, "the recipe %s makes nothing", s->rec[k].name);
            return POLIS_ERR_ACTION;
        }
        p->recipe = k;
        p->res = s->amounts[s->rec[k].out].res;
    }
    char why[512];
    if (!craftable(s, p, agent, n, why, sizeof why)) {
        s->h->error(ctx, "%s", why);
        return POLIS_ERR_ACTION;
    }
    return POLIS_OK;
}

static polis_status craft_next(soc *s, plan *p, int32_t agent, polis_plan_state *state,
                               int32_t *out, char *why, size_t cap)
{
    const char *name = s->res[p->res].name;
    int32_t got = credited(s, p, agent, s->act_produce, 1);
    bool progress = got > 0;
    p->got += got;
    if (progress) p->best = NO_DIST;
    if (p->got >= p->n)
        return end(state, POLIS_PLAN_DONE, why, cap, "crafted %d %s", (int)p->got, name);
    char reason[400];
    if (!craftable(s, p, agent, p->n - p->got, reason, sizeof reason))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "%s (crafted %d of %d %s)", reason,
                   (int)p->got, (int)p->n, name);
    remember(s, p, agent);
    int32_t cell = here(s, agent);
    bool there = *soc_layer(s, s->L_recipes, cell) > 0 && target_seen(s, p, agent, cell);
    return seek(s, p, agent, there ? s->act_produce : -1, progress, "crafted", name,
                "station making ", state, out, why, cap);
}

/* ---- EXPLORE ------------------------------------------------------------------------------ */

static polis_status explore_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args,
                                  void *mem)
{
    soc *s = ud;
    plan *p = mem;
    if (!begin(s, ctx, p, agent)) return POLIS_ERR_STATE;
    words ws;
    int32_t n = (int32_t)s->p.plan_explore_ticks;
    bool ok = split(args, " \t", &ws) && ws.n <= 2;
    int i = 0;
    if (ok && i < ws.n) {
        char w[8];
        lower(ws.w[i], w, sizeof w);
        if (strcmp(w, "map") == 0 && strlen(ws.w[i]) == 3) i++;
    }
    if (ok && i < ws.n) {
        ok = parse_int(ws.w[i], &n) && i + 1 == ws.n;
        if (ok && (n <= 0 || n > PLAN_MAX_COUNT)) {
            s->h->error(ctx, "the number of ticks must be between 1 and %d, got %d", PLAN_MAX_COUNT,
                        (int)n);
            return POLIS_ERR_ACTION;
        }
    }
    if (!ok) {
        s->h->error(ctx, "expected EXPLORE [MAP] [<ticks>], got \"%s\"", args);
        return POLIS_ERR_ACTION;
    }
    p->kind = PLAN_EXPLORE;
    p->n = n;
    p->res = -1;
    return POLIS_OK;
}

/* The nearest pile or station the agent sees on a cell it did not see when the plan started
 * (ties: up-down, then left-right scan order); -1 if none. */
static int32_t something_new(const soc *s, const plan *p, int32_t agent, char *what, size_t cap)
{
    const soc_job *j = job_of(s, agent);
    int32_t best = -1, best_d = NO_DIST;
    for (int32_t dx = -j->fov_h; dx <= j->fov_h; dx++)
        for (int32_t dy = -j->fov_v; dy <= j->fov_v; dy++) {
            int32_t c =
                soc_wrap(s->ay[agent] + dy, s->H) * s->W + soc_wrap(s->ax[agent] + dx, s->W);
            int32_t d = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
            if (d >= best_d || in_view_of(s, agent, p->sx, p->sy, c)) continue;
            int32_t k = *soc_layer(s, s->L_recipes, c) - 1;
            bool station = k >= 0 && soc_recipe_visible(s, agent, k);
            bool pile = false;
            if (!station && s->kinds[c])
                for (int32_t r = 0; r < s->R && !pile; r++)
                    pile = pile_at(s, c, r) > 0 && soc_resource_visible(s, agent, r);
            if (!station && !pile) continue;
            best = c;
            best_d = d;
        }
    if (best < 0) return -1;
    int32_t x = best % s->W, y = best / s->W, k = *soc_layer(s, s->L_recipes, best) - 1;
    if (k >= 0 && soc_recipe_visible(s, agent, k)) {
        snprintf(what, cap, "found a %s station at (%d, %d)", s->rec[k].name, (int)x, (int)y);
        return best;
    }
    size_t used = (size_t)snprintf(what, cap, "found");
    bool firstr = true;
    for (int32_t r = 0; r < s->R && used < cap; r++) {
        int32_t units = pile_at(s, best, r);
        if (units <= 0 || !soc_resource_visible(s, agent, r)) continue;
        int w = snprintf(what + used, cap - used, "%s %d %s", firstr ? "" : ",", (int)units,
                         s->res[r].name);
        if (w < 0) break;
        used += (size_t)w;
        firstr = false;
    }
    if (used < cap) snprintf(what + used, cap - used, " at (%d, %d)", (int)x, (int)y);
    return best;
}

static polis_status explore_next(soc *s, plan *p, int32_t agent, polis_plan_state *state,
                                 int32_t *out, char *why, size_t cap)
{
    if (something_new(s, p, agent, why, cap) >= 0) {
        *state = POLIS_PLAN_DONE;
        return POLIS_OK;
    }
    if (p->ticks >= p->n)
        return end(state, POLIS_PLAN_DONE, why, cap, "explored for %d ticks; nothing new in view",
                   (int)p->ticks);
    int32_t m = explore_move(s, p, agent);
    if (m < 0)
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                   "nowhere to explore: no other cell can be reached from (%d, %d)",
                   (int)s->ax[agent], (int)s->ay[agent]);
    choose(s, p, agent, m, out);
    *state = POLIS_PLAN_RUNNING;
    return POLIS_OK;
}

/* ---- DUMP --------------------------------------------------------------------------------- */

static polis_status dump_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args, void *mem)
{
    soc *s = ud;
    plan *p = mem;
    if (!begin(s, ctx, p, agent)) return POLIS_ERR_STATE;
    words ws;
    const char *name;
    int32_t n, r;
    if (!count_and_name(s, ctx, "DUMP <n> <resource>", args, &n, &name, &ws) ||
        !resource_arg(s, ctx, name, &r))
        return POLIS_ERR_ACTION;
    int32_t held = inv_of(s, agent)[r];
    if (held == 0) {
        s->h->error(ctx, "the agent holds no %s", s->res[r].name);
        return POLIS_ERR_ACTION;
    }
    if (n > held) {
        s->h->error(ctx, "the agent holds only %d %s", (int)held, s->res[r].name);
        return POLIS_ERR_ACTION;
    }
    p->kind = PLAN_DUMP;
    p->res = r;
    p->n = n;
    return POLIS_OK;
}

static polis_status dump_next(soc *s, plan *p, int32_t agent, polis_plan_state *state, int32_t *out,
                              char *why, size_t cap)
{
    const char *name = s->res[p->res].name;
    int32_t got = credited(s, p, agent, s->act_dump[p->res], -1);
    p->got += got;
    if (p->got >= p->n)
        return end(state, POLIS_PLAN_DONE, why, cap, "dumped %d %s at (%d, %d)", (int)p->got, name,
                   (int)s->ax[agent], (int)s->ay[agent]);
    if (inv_of(s, agent)[p->res] == 0)
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "holds no %s (dumped %d of %d)", name,
                   (int)p->got, (int)p->n);
    if (stalled(s, p, got > 0))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                   "dump_%s was not allowed for %d ticks (dumped %d of %d)", name,
                   (int)s->p.plan_patience, (int)p->got, (int)p->n);
    choose(s, p, agent, s->act_dump[p->res], out);
    *state = POLIS_PLAN_RUNNING;
    return POLIS_OK;
}

/* ---- GOTO --------------------------------------------------------------------------------- */

static polis_status goto_start(polis_ctx *ctx, void *ud, int32_t agent, const char *args, void *mem)
{
    soc *s = ud;
    plan *p = mem;
    if (!begin(s, ctx, p, agent)) return POLIS_ERR_STATE;
    words ws;
    int32_t x, y;
    if (!split(args, " \t,()", &ws) || ws.n != 2 || !parse_int(ws.w[0], &x) ||
        !parse_int(ws.w[1], &y)) {
        s->h->error(ctx, "expected two integers x y, got \"%s\"", args);
        return POLIS_ERR_ACTION;
    }
    if (x < 0 || y < 0 || x >= s->W || y >= s->H) {
        s->h->error(ctx, "(%d, %d) is outside the %dx%d map (0 <= x < %d, 0 <= y < %d)", (int)x,
                    (int)y, (int)s->W, (int)s->H, (int)s->W, (int)s->H);
        return POLIS_ERR_ACTION;
    }
    int32_t goal = y * s->W + x;
    if (is_block(s, goal)) {
        s->h->error(ctx, "(%d, %d) is a block", (int)x, (int)y);
        return POLIS_ERR_ACTION;
    }
    search q = {.s = s, .p = p, .agent = agent, .agents = false, .goal = goal};
    bfs(&q, here(s, agent), target_visit);
    if (q.found < 0) {
        s->h->error(ctx, "(%d, %d) cannot be reached from (%d, %d)", (int)x, (int)y,
                    (int)s->ax[agent], (int)s->ay[agent]);
        return POLIS_ERR_ACTION;
    }
    p->kind = PLAN_GOTO;
    p->res = -1;
    p->gx = x;
    p->gy = y;
    return POLIS_OK;
}

static polis_status goto_next(soc *s, plan *p, int32_t agent, polis_plan_state *state, int32_t *out,
                              char *why, size_t cap)
{
    if (s->ax[agent] == p->gx && s->ay[agent] == p->gy)
        return end(state, POLIS_PLAN_DONE, why, cap, "arrived at (%d, %d)", (int)p->gx, (int)p->gy);
    int32_t goal = p->gy * s->W + p->gx;
    if (is_block(s, goal))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap, "(%d, %d) is a block now", (int)p->gx,
                   (int)p->gy);
    search q = {.s = s, .p = p, .agent = agent, .goal = goal};
    if (!route(&q))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                   "(%d, %d) can no longer be reached from (%d, %d)", (int)p->gx, (int)p->gy,
                   (int)s->ax[agent], (int)s->ay[agent]);
    if (stalled(s, p, closer(p, q.found_dist)))
        return end(state, POLIS_PLAN_IMPOSSIBLE, why, cap,
                   "no progress towards (%d, %d) for %d ticks: at (%d, %d), %d step%s away, %s",
                   (int)p->gx, (int)p->gy, (int)s->p.plan_patience, (int)s->ax[agent],
                   (int)s->ay[agent], (int)q.found_dist, q.found_dist == 1 ? "" : "s",
                   p->masked ? "the agent's moves are masked" : "the way blocked by other agents");
    choose(s, p, agent, move_action(s, q.found_first), out);
    *state = POLIS_PLAN_RUNNING;
    return POLIS_OK;
}

/* ---- registration -------------------------------------------------------------------------- */

static polis_status plan_next(polis_ctx *ctx, void *ud, int32_t agent, void *mem,
                              polis_plan_state *state, int32_t *out_action, char *why, size_t cap)
{
    soc *s = ud;
    plan *p = mem;
    *out_action = 0;
    *state = POLIS_PLAN_RUNNING;
    if (!s->gcells || agent < 0 || agent >= s->n_agents) {
        s->h->error(ctx, "plans run only after a reset (agent %d)", (int)agent);
        return POLIS_ERR_STATE;
    }
    switch (p->kind) {
    case PLAN_GATHER: return gather_next(s, p, agent, state, out_action, why, cap);
    case PLAN_CRAFT: return craft_next(s, p, agent, state, out_action, why, cap);
    case PLAN_EXPLORE: return explore_next(s, p, agent, state, out_action, why, cap);
    case PLAN_DUMP: return dump_next(s, p, agent, state, out_action, why, cap);
    default: return goto_next(s, p, agent, state, out_action, why, cap);
    }
}

polis_status soc_register_plans(soc *s)
{
    const polis_host *h = s->h;
    size_t cells = (size_t)s->cells;
    s->p_dist = soc_alloc(s, sizeof *s->p_dist * cells);
    s->p_first = soc_alloc(s, cells);
    s->p_queue = soc_alloc(s, sizeof *s->p_queue * cells);
    if (!s->p_dist || !s->p_first || !s->p_queue) return POLIS_ERR_NOMEM;
#define MACRO(NAME, USAGE, DOC, START)                                                             \
    {                                                                                              \
        .name = NAME, .usage = USAGE, .doc = DOC, .plan_size = sizeof(plan), .start = START,       \
        .next = plan_next, .ud = s                                                                 \
    }
    const polis_macro_def defs[] = {
        MACRO("GATHER", "GATHER [<n>] <resource>",
              "Walk to the nearest visible pile of the resource (exploring while none is seen) "
              "and pick until n more units (default 1) are held.",
              gather_start),
        MACRO("CRAFT", "CRAFT [<n>] <item>",
              "Walk to the nearest visible station whose recipe makes the item (a resource or a "
              "recipe name) and produce until n units (default 1) arrived.",
              craft_start),
        MACRO("EXPLORE", "EXPLORE [MAP] [<ticks>]",
              "Walk towards cells not in view; done when a pile or station appears on a cell not "
              "seen at the start, or after the ticks (default plan_explore_ticks).",
              explore_start),
        MACRO("DUMP", "DUMP [<n>] <resource>",
              "Lay n units (default 1) of a resource held onto the agent's cell.", dump_start),
        MACRO("GOTO", "GOTO <x> <y>",
              "Walk a shortest path around blocks and agents to the cell (x, y); done on arrival.",
              goto_start),
    };
#undef MACRO
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        polis_status st = h->macro(s->ctx, &defs[i]);
        if (st) return st;
    }
    return POLIS_OK;
}
