/*
 * render.c — the survival views for LLM agents and tools: "text" (the local view as a
 * character grid with a legend, vitals, inventory, achievements; the kernel appends the
 * legal actions from the mask) and "json" (the same as one object), and the action parser ("move
 * left", "go north", "mine", "place table", "craft wood pickaxe", {"action": "sleep"}).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "polis/kit.h"

/* One character per block id, then the marks drawn over blocks. */
static const char BLOCK_CH[SV_N_BLOCKS] = {'?', 'X', '.', '~', '#', 'T', 'w', '_', 'c',
                                           'i', 'd', 't', 'f', ':', 'L', 'p', 'P'};
static const char MOB_CH[SV_N_MOB_KINDS] = {'Z', 'C', 'S', '>'};
static const char *const DIR_NAMES[5] = {"", "left", "right", "up", "down"};

/* The view as 7 strings of 9 characters: blocks, then arrows, mobs, other players (those this
 * one may see), you. */
static void view_grid(survival *s, int32_t agent, char grid[SV_VIEW_ROWS][SV_VIEW_COLS + 1])
{
    const uint8_t *seen = sv_seen(s, agent);
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    int32_t r0 = pl->r - 3, c0 = pl->c - 4;
    for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++) {
        for (int32_t vc = 0; vc < SV_VIEW_COLS; vc++) {
            int32_t r = r0 + vr, c = c0 + vc;
            grid[vr][vc] = BLOCK_CH[sv_in_map(r, c) ? w->map[r][c] : SV_OUT_OF_BOUNDS];
        }
        grid[vr][SV_VIEW_COLS] = '\0';
    }
    for (int32_t kind = SV_N_MOB_KINDS - 1; kind >= 0; kind--)
        for (int32_t q = 0; q < w->p.max_mobs[kind]; q++) {
            const sv_mob *m = &w->mobs[kind][q];
            int32_t vr = m->r - r0, vc = m->c - c0;
            if (m->active && (uint32_t)vr < SV_VIEW_ROWS && (uint32_t)vc < SV_VIEW_COLS)
                grid[vr][vc] = MOB_CH[kind];
        }
    for (int32_t j = 0; j < w->p.n_players; j++) {
        const sv_player *o = &w->players[j];
        int32_t vr = o->r - r0, vc = o->c - c0;
        if (j != agent && o->alive && (!seen || seen[j]) && (uint32_t)vr < SV_VIEW_ROWS &&
            (uint32_t)vc < SV_VIEW_COLS)
            grid[vr][vc] = 'A';
    }
    grid[3][4] = '@';
}

/* What the player faces; a player it may not see is not there for it. */
static const char *facing_thing(survival *s, int32_t agent)
{
    static const int32_t DR[5] = {0, 0, 0, -1, 1}, DC[5] = {0, -1, 1, 0, 0};
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir];
    if (!sv_in_map(r, c)) return "the edge of the map";
    uint16_t mm = w->mob_map[r][c];
    if (mm) return sv_mob_names[(mm - 1) >> 8];
    if (w->player_map[r][c]) {
        const uint8_t *seen = sv_seen(s, agent);
        if (!seen) return "another player";
        for (int32_t j = 0; j < w->p.n_players; j++)
            if (j != agent && seen[j] && w->players[j].alive && w->players[j].r == r &&
                w->players[j].c == c)
                return "another player";
    }
    return sv_block_names[w->map[r][c]];
}

static polis_status render_text(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    survival *s = ud;
    const polis_host *h = s->h;
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    h->text_printf(t,
                   "You are %s (player %d of %d), %s, at row %d, column %d of the 64x64 map "
                   "(row 0 is the top), facing %s toward %s. Step %lld of %lld; light %.2f "
                   "(%s).\n",
                   h->agent_name(ctx, agent), agent, w->p.n_players,
                   pl->alive ? (pl->sleeping ? "asleep" : "awake") : "dead", pl->r, pl->c,
                   DIR_NAMES[pl->dir], facing_thing(s, agent), (long long)h->tick(ctx),
                   (long long)h->max_steps(ctx), (double)w->light,
                   w->light < 0.5f ? "night: zombies spawn more" : "day");
    h->text_printf(t, "Health %d/9, food %d/9, drink %d/9, energy %d/9.\n", pl->health, pl->food,
                   pl->drink, pl->energy);
    h->text_printf(t, "Inventory:");
    int held = 0;
    for (int32_t k = 0; k < SV_N_ITEMS; k++)
        if (pl->inv[k] > 0)
            h->text_printf(t, "%s %s %d", held++ ? "," : "", sv_item_names[k], pl->inv[k]);
    h->text_printf(t, "%s\n", held ? "." : " nothing.");
    int got = __builtin_popcount(pl->ach);
    h->text_printf(t, "Achievements %d/22:", got);
    for (int32_t k = 0, first = 1; k < SV_N_ACHIEVEMENTS; k++)
        if (pl->ach & 1u << k) {
            h->text_printf(t, "%s %s", first ? "" : ",", sv_achievement_names[k]);
            first = 0;
        }
    h->text_printf(t, "%s\n", got ? "." : " none yet.");
    char grid[SV_VIEW_ROWS][SV_VIEW_COLS + 1];
    view_grid(s, agent, grid);
    h->text_printf(t, "View (7 rows x 9 columns; you are @, up is row - 1):\n");
    for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++) h->text_printf(t, "  %s\n", grid[vr]);
    h->text_printf(t, "Legend: . grass, ~ water, # stone, T tree, _ path, c coal, i iron, "
                      "d diamond, t table, f furnace, : sand, L lava (deadly), p sapling, P ripe "
                      "plant, X outside the map, Z zombie, C cow, S skeleton, > arrow, A another "
                      "player.\n");
    return POLIS_OK;
}

static polis_status render_json(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    survival *s = ud;
    const polis_host *h = s->h;
    const sv_world *w = s->w;
    const sv_player *pl = &w->players[agent];
    h->text_printf(t,
                   "{\"player\":%d,\"alive\":%s,\"sleeping\":%s,\"row\":%d,\"col\":%d,"
                   "\"facing\":\"%s\",\"facing_tile\":\"%s\",\"step\":%lld,\"light\":%.4f,"
                   "\"health\":%d,\"food\":%d,\"drink\":%d,\"energy\":%d,\"inventory\":{",
                   agent, pl->alive ? "true" : "false", pl->sleeping ? "true" : "false", pl->r,
                   pl->c, DIR_NAMES[pl->dir], facing_thing(s, agent), (long long)h->tick(ctx),
                   (double)w->light, pl->health, pl->food, pl->drink, pl->energy);
    for (int32_t k = 0; k < SV_N_ITEMS; k++)
        h->text_printf(t, "%s\"%s\":%d", k ? "," : "", sv_item_names[k], pl->inv[k]);
    h->text_printf(t, "},\"achievements\":[");
    for (int32_t k = 0, first = 1; k < SV_N_ACHIEVEMENTS; k++)
        if (pl->ach & 1u << k) {
            h->text_printf(t, "%s\"%s\"", first ? "" : ",", sv_achievement_names[k]);
            first = 0;
        }
    char grid[SV_VIEW_ROWS][SV_VIEW_COLS + 1];
    view_grid(s, agent, grid);
    h->text_printf(t, "],\"view\":[");
    for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++)
        h->text_printf(t, "%s\"%s\"", vr ? "," : "", grid[vr]);
    /* from the mask, like the kernel's line in the text view */
    const polis_io *io = h->io(ctx);
    const uint8_t *row = io->masks + (size_t)agent * (size_t)io->n_actions;
    h->text_printf(t, "],\"legal\":[");
    for (int32_t a = 0, first = 1; a < SV_N_ACTIONS; a++)
        if (row[s->action_id[a]]) {
            h->text_printf(t, "%s\"%s\"", first ? "" : ",", sv_action_names[a]);
            first = 0;
        }
    h->text_printf(t, "]}");
    return POLIS_OK;
}

/* ---- metrics for `polis eval` ---------------------------------------------------------------- */

/* Crafts by the stations beside them (seeds/003 Fig. 4; MAC's tracker counts "own"): v = table
 * crafts (every craft), with an own table, with another's; furnace (iron) crafts, own, other.
 * The shares only when there were such crafts (eval averages the episodes that have them). */
static void tool_use(const polis_host *h, polis_text *t, const int32_t *v)
{
    h->text_printf(t, "{\"table_crafts\":%d,\"table_own\":%d,\"table_other\":%d", v[0], v[1], v[2]);
    if (v[0]) h->text_printf(t, ",\"table_own_share\":%.6g", (double)v[1] / v[0]);
    h->text_printf(t, ",\"furnace_crafts\":%d,\"furnace_own\":%d,\"furnace_other\":%d", v[3], v[4],
                   v[5]);
    if (v[3]) h->text_printf(t, ",\"furnace_own_share\":%.6g", (double)v[4] / v[3]);
    h->text_printf(t, "}");
}

/* Proximity (seeds/003 Fig. 7): the share of the episode's steps after which a pair of players
 * was in each other's view (core.h, sv_in_view), its mean over every pair, by pair with up to
 * 16 players (120 pairs); with the bonus on, the bonus per player. Nothing with one player or
 * before the first step. */
static void proximity(const polis_host *h, polis_text *t, const sv_world *w)
{
    int32_t n = w->p.n_players;
    double mean = sv_proximity_mean(w);
    if (mean < 0.0) return;
    h->text_printf(t, ",\"proximity\":%.6g", mean);
    if (n <= 16) {
        h->text_printf(t, ",\"proximity_by_pair\":{");
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = i + 1; j < n; j++)
                h->text_printf(t, "%s\"%d-%d\":%.6g", i + j > 1 ? "," : "", i, j,
                               sv_proximity(w, i, j));
        h->text_printf(t, "}");
    }
    if (w->p.prox_bonus != 0.0f) {
        double sum = 0.0;
        for (int32_t i = 0; i < n; i++) sum += w->players[i].prox_bonus_total;
        h->text_printf(t, ",\"proximity_bonus\":%.6g", sum / n);
    }
}

/* One JSON object per episode (eval averages every number over episodes): the share of players
 * that unlocked each achievement (so the mean is the success rate), the mean count of
 * achievements, deaths by cause, crafts and the share that used another player's table or
 * furnace, the tool use in total and by player, and the proximity. */
static polis_status render_metrics(polis_ctx *ctx, void *ud, int32_t agent, polis_text *t)
{
    (void)ctx;
    (void)agent;
    survival *s = ud;
    const polis_host *h = s->h;
    const sv_world *w = s->w;
    int32_t n = w->p.n_players, crafts = 0, others = 0, got = 0, deaths[SV_N_CAUSES] = {0};
    for (int32_t i = 0; i < n; i++) {
        crafts += w->players[i].crafts;
        others += w->players[i].crafts_others;
        got += __builtin_popcount(w->players[i].ach);
        if (!w->players[i].alive) deaths[w->players[i].cause]++;
    }
    h->text_printf(t, "{\"achievements\":{");
    for (int32_t k = 0; k < SV_N_ACHIEVEMENTS; k++) {
        int32_t c = 0;
        for (int32_t i = 0; i < n; i++) c += (w->players[i].ach >> k) & 1u;
        h->text_printf(t, "%s\"%s\":%.6g", k ? "," : "", sv_achievement_names[k], (double)c / n);
    }
    h->text_printf(t, "},\"achievements_per_player\":%.6g", (double)got / n);
    /* each player's count, for scores of chosen players (a learner beside experts: the
     * cultural-transmission score of seeds/003 section 5); as many players as
     * proximity_by_pair names */
    if (n <= 16) {
        h->text_printf(t, ",\"achievements_by_player\":{");
        for (int32_t i = 0; i < n; i++)
            h->text_printf(t, "%s\"%d\":%d", i ? "," : "", i,
                           __builtin_popcount(w->players[i].ach));
        h->text_printf(t, "}");
    }
    h->text_printf(t, ",\"deaths\":{");
    for (int32_t c = 1; c < SV_N_CAUSES; c++)
        h->text_printf(t, "%s\"%s\":%d", c > 1 ? "," : "", sv_cause_names[c], deaths[c]);
    h->text_printf(t, "},\"crafts\":%d", crafts);
    if (crafts) h->text_printf(t, ",\"crafts_with_others_share\":%.6g", (double)others / crafts);
    int32_t sum[6] = {0};
    for (int32_t i = 0; i < n; i++) {
        const sv_player *pl = &w->players[i];
        const int32_t v[6] = {pl->crafts,         pl->crafts_own_table,   pl->crafts_other_table,
                              pl->crafts_furnace, pl->crafts_own_furnace, pl->crafts_other_furnace};
        for (int32_t k = 0; k < 6; k++) sum[k] += v[k];
    }
    if (w->p.pvp) {
        int32_t hits = 0;
        for (int32_t i = 0; i < n; i++) hits += w->players[i].pvp_hits_total;
        h->text_printf(t, ",\"pvp_hits\":%d", hits);
    }
    h->text_printf(t, ",\"tool_use\":");
    tool_use(h, t, sum);
    h->text_printf(t, ",\"tool_use_by_player\":{");
    for (int32_t i = 0; i < n; i++) {
        const sv_player *pl = &w->players[i];
        const int32_t v[6] = {pl->crafts,         pl->crafts_own_table,   pl->crafts_other_table,
                              pl->crafts_furnace, pl->crafts_own_furnace, pl->crafts_other_furnace};
        h->text_printf(t, "%s\"%d\":", i ? "," : "", i);
        tool_use(h, t, v);
    }
    h->text_printf(t, "}");
    proximity(h, t, w);
    h->text_printf(t, "}");
    return POLIS_OK;
}

/* ---- the action parser ----------------------------------------------------------------- */

/* Phrases (after lower-casing, '_' and '-' as spaces, one trailing '.' dropped, spaces
 * collapsed) and the action each names. */
static const struct {
    const char *phrase;
    int32_t action;
} PHRASES[] = {
    {"wait", SV_NOOP},
    {"stay", SV_NOOP},
    {"nothing", SV_NOOP},
    {"west", SV_LEFT},
    {"east", SV_RIGHT},
    {"north", SV_UP},
    {"south", SV_DOWN},
    {"interact", SV_DO},
    {"attack", SV_DO},
    {"mine", SV_DO},
    {"collect", SV_DO},
    {"chop", SV_DO},
    {"drink", SV_DO},
    {"eat", SV_DO},
    {"hit", SV_DO},
    {"rest", SV_SLEEP},
    {"place stone", SV_PLACE_STONE},
    {"place table", SV_PLACE_TABLE},
    {"place crafting table", SV_PLACE_TABLE},
    {"place furnace", SV_PLACE_FURNACE},
    {"place plant", SV_PLACE_PLANT},
    {"place sapling", SV_PLACE_PLANT},
    {"plant", SV_PLACE_PLANT},
    {"plant sapling", SV_PLACE_PLANT},
};

static const char *const MOVE_VERBS[] = {"move", "go", "walk", "face", "turn"};
static const char *const CRAFT_VERBS[] = {"make", "craft", "build"};

static int32_t match_phrase(const char *w)
{
    for (int32_t a = 0; a < SV_N_ACTIONS; a++) {
        char name[32];
        snprintf(name, sizeof name, "%s", sv_action_names[a]);
        for (char *c = name; *c; c++)
            if (*c == '_') *c = ' ';
        if (strcmp(w, name) == 0) return a;
    }
    for (size_t k = 0; k < sizeof PHRASES / sizeof PHRASES[0]; k++)
        if (strcmp(w, PHRASES[k].phrase) == 0) return PHRASES[k].action;
    return -1;
}

static polis_status parse_words(survival *s, const char *in, int32_t *out)
{
    char buf[96];
    size_t n = 0;
    bool space = true;
    for (const char *p = in; *p; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c == '_' || c == '-' || c == ' ' || c == '\t') {
            if (!space && n < sizeof buf - 1) buf[n++] = ' ';
            space = true;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || c == '.')) return POLIS_ERR_ACTION;
        if (n >= sizeof buf - 1) return POLIS_ERR_ACTION;
        buf[n++] = c;
        space = false;
    }
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '.')) n--;
    buf[n] = '\0';
    if (strchr(buf, '.')) return POLIS_ERR_ACTION;
    int32_t a = match_phrase(buf);
    if (a < 0) {
        /* "<verb> <rest>": a move verb and a direction, a craft verb and a tool */
        char *sp = strchr(buf, ' ');
        if (!sp) return POLIS_ERR_ACTION;
        *sp = '\0';
        const char *rest = sp + 1;
        bool mv = false, cr = false;
        for (size_t k = 0; k < sizeof MOVE_VERBS / sizeof *MOVE_VERBS; k++)
            mv |= !strcmp(buf, MOVE_VERBS[k]);
        for (size_t k = 0; k < sizeof CRAFT_VERBS / sizeof *CRAFT_VERBS; k++)
            cr |= !strcmp(buf, CRAFT_VERBS[k]);
        if (mv) {
            a = match_phrase(rest);
            if (a < SV_LEFT || a > SV_DOWN) {
                s->h->error(s->ctx,
                            "\"%s %s\": the direction must be left, right, up or down "
                            "(or west, east, north, south)",
                            buf, rest);
                return POLIS_ERR_INVALID;
            }
        } else if (cr) {
            char name[64];
            snprintf(name, sizeof name, "make %s", rest);
            a = match_phrase(name);
            if (a < SV_MAKE_WOOD_PICKAXE) {
                s->h->error(s->ctx,
                            "\"%s %s\": can make wood_pickaxe, stone_pickaxe, "
                            "iron_pickaxe, wood_sword, stone_sword or iron_sword",
                            buf, rest);
                return POLIS_ERR_INVALID;
            }
        } else {
            return POLIS_ERR_ACTION;
        }
    }
    *out = s->action_id[a];
    return POLIS_OK;
}

/* {"action": "<words>"}: an object whose "action" is a string (an action name, or words
 * parse_words takes); other members are ignored. Text that is not such an object is not
 * for this parser. */
static polis_status parse_json(survival *s, const char *in, int32_t *out)
{
    const polis_host *h = s->h;
    const polis_json_api *json = polis_kit_json_api(h, s->ctx);
    const polis_json *doc;
    polis_status st = json ? polis_kit_json_input(json, s->ctx, in, &doc) : POLIS_ERR_ACTION;
    if (st != POLIS_OK) return st;
    char words[64];
    const char *a = h->json_kind(doc) == 5 ? polis_kit_json_str(h, s->ctx, doc, "action") : NULL;
    bool ok = a && strlen(a) < sizeof words;
    if (ok) memcpy(words, a, strlen(a) + 1);
    json->free(s->ctx, doc);
    if (!ok) return POLIS_ERR_ACTION;
    int32_t id = h->action_find(s->ctx, words);
    if (id >= 0) {
        *out = id;
        return POLIS_OK;
    }
    return parse_words(s, words, out);
}

static polis_status parse_action(polis_ctx *ctx, void *ud, int32_t agent, const char *input,
                                 int32_t *out)
{
    (void)ctx;
    (void)agent;
    survival *s = ud;
    if (input[0] == '{') return parse_json(s, input, out);
    return parse_words(s, input, out);
}

polis_status sv_register_views(survival *s)
{
    const polis_host *h = s->h;
    polis_status st;
    if ((st = h->renderer(s->ctx, "text", render_text, s)) ||
        (st = h->renderer(s->ctx, "json", render_json, s)) ||
        (st = h->renderer(s->ctx, "metrics", render_metrics, s)) ||
        (st = h->action_parser(s->ctx, parse_action, s)))
        return st;
    return sv_register_policies(s);
}
