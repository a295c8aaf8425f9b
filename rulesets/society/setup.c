/*
 * setup.c — the world description: the base map (read at init, because the grid's size must
 * be known before the other plugins start) and the static and random content (read at start,
 * when every resource, recipe and job is defined). Everything that can be checked without
 * drawing random numbers is checked here, so a reset never fails on a bad config: positions
 * inside the map and off the base map's blocks, no two stations or players on one cell, and
 * enough free cells for every random placement.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- the base map ------------------------------------------------------------------------- */

static bool map_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static polis_status parse_map_file(soc *s, const soc_node *where, const char *path)
{
    char *text;
    size_t len;
    const char *why = NULL;
    polis_status st = soc_read_file(s, path, &text, &len, &why);
    if (st == POLIS_ERR_NOMEM) return st;
    if (st) return soc_fail(s, where, "cannot read the map file \"%s\": %s", path, why);
    /* Rows are lines; a line that is empty (or only spaces) or starts with '#' is skipped.
     * ' ' is a free cell, every other character a block. A row shorter than the longest is
     * padded with free cells, so an editor trimming trailing spaces changes nothing.
     * A map named by an AdaSociety task file is read as AdaSociety reads it: each line is
     * stripped of its leading and trailing blanks first (Python's str.strip), so a leading
     * blank is no free cell there and "  # note" is a comment. */
    bool strip = s->ada_task != NULL;
    int32_t w = 0, hgt = 0;
    for (int pass = 0; pass < 2; pass++) {
        int32_t y = 0;
        const char *p = text, *end = text + len;
        while (p < end) {
            const char *eol = memchr(p, '\n', (size_t)(end - p));
            if (!eol) eol = end;
            const char *q = eol;
            if (q > p && q[-1] == '\r') q--;
            if (strip) {
                while (p < q && map_space(*p)) p++;
                while (q > p && map_space(q[-1])) q--;
            }
            bool blank = true;
            for (const char *c = p; c < q; c++)
                if (*c != ' ' && *c != '\t') blank = false;
            if (!blank && *p != '#') {
                int32_t n = (int32_t)(q - p);
                if (pass == 0) {
                    if (n > w) w = n;
                } else {
                    for (int32_t x = 0; x < n; x++)
                        if (p[x] != ' ') s->base[(size_t)y * (size_t)w + (size_t)x] = 1;
                }
                y++;
            }
            p = eol + 1;
        }
        if (pass == 0) {
            hgt = y;
            if (w < 1 || hgt < 1 || w > SOC_MAX_MAP || hgt > SOC_MAX_MAP) {
                soc_heap_free(s, text, len + 1);
                return soc_fail(s, where,
                                "map file \"%s\" is %dx%d; a map needs 1 to %d rows "
                                "and columns",
                                path, (int)w, (int)hgt, SOC_MAX_MAP);
            }
            s->W = w;
            s->H = hgt;
            s->cells = w * hgt;
            s->base = soc_alloc(s, (size_t)s->cells);
            if (!s->base) {
                soc_heap_free(s, text, len + 1);
                return POLIS_ERR_NOMEM;
            }
        }
    }
    soc_heap_free(s, text, len + 1);
    return POLIS_OK;
}

polis_status soc_map_setup(soc *s)
{
    polis_status st;
    soc_node top, map;
    if (s->ada_task) {
        if (soc_kind(s, &(soc_node){.pj = s->p.map}) != -1 ||
            soc_kind(s, &(soc_node){.pj = s->p.static_}) != -1 ||
            soc_kind(s, &(soc_node){.pj = s->p.random}) != -1) {
            soc_node p = soc_node_params(s, s->p.map);
            return soc_fail(s, &p,
                            "\"map\", \"static\" and \"random\" come from the AdaSociety "
                            "task file when \"adasociety\" is given; remove them");
        }
        top = soc_node_file(s->ada_task, s->ada_task_path);
        if ((st = soc_want_object(s, &top))) return st;
        map = soc_get(s, &top, "base_map");
    } else {
        map = soc_node_params(s, s->p.map);
        if (soc_kind(s, &map) == -1)
            return soc_fail(s, &map,
                            "missing: give \"map\" (or \"adasociety\", an AdaSociety "
                            "main.json)");
    }
    static const char *const keys[] = {"init_rule", "size", "file_path", NULL};
    if ((st = soc_want_object(s, &map)) || (st = soc_check_keys(s, &map, keys))) return st;
    soc_node rule_n = soc_get(s, &map, "init_rule");
    const char *rule;
    if ((st = soc_string(s, &rule_n, &rule))) return st;
    if (strcmp(rule, "map_file") == 0) {
        soc_node fp = soc_get(s, &map, "file_path");
        const char *path;
        if ((st = soc_string(s, &fp, &path))) return st;
        path = s->ada_task ? soc_resolve_ada_path(s, path) : soc_scenario_path(s, path);
        if (!path) return POLIS_ERR_NOMEM;
        if ((st = parse_map_file(s, &fp, path))) return st;
    } else if (strcmp(rule, "blank") == 0 || strcmp(rule, "box") == 0) {
        soc_node size = soc_get(s, &map, "size");
        static const char *const size_keys[] = {"x", "y", NULL};
        if ((st = soc_want_object(s, &size)) || (st = soc_check_keys(s, &size, size_keys)))
            return st;
        soc_node xn = soc_get(s, &size, "x"), yn = soc_get(s, &size, "y");
        int64_t x, y;
        if ((st = soc_int(s, &xn, 1, SOC_MAX_MAP, &x)) ||
            (st = soc_int(s, &yn, 1, SOC_MAX_MAP, &y)))
            return st;
        s->W = (int32_t)x;
        s->H = (int32_t)y;
        s->cells = s->W * s->H;
        s->base = soc_alloc(s, (size_t)s->cells);
        if (!s->base) return POLIS_ERR_NOMEM;
        if (strcmp(rule, "box") == 0)
            for (int32_t yy = 0; yy < s->H; yy++)
                for (int32_t xx = 0; xx < s->W; xx++)
                    if (xx == 0 || yy == 0 || xx == s->W - 1 || yy == s->H - 1)
                        s->base[(size_t)yy * (size_t)s->W + (size_t)xx] = 1;
    } else {
        return soc_fail(s, &rule_n, "expected \"blank\", \"box\" or \"map_file\", got \"%s\"",
                        rule);
    }
    s->n_base_blocks = 0;
    for (int32_t c = 0; c < s->cells; c++) s->n_base_blocks += s->base[c];
    return POLIS_OK;
}

/* ---- positions and amounts ----------------------------------------------------------------- */

static polis_status position(soc *s, const soc_node *n, int32_t *x, int32_t *y)
{
    polis_status st;
    if (soc_kind(s, n) != 4 || soc_len(s, n) != 2)
        return soc_fail(s, n, "expected a position [x, y]");
    soc_node a = soc_at(s, n, 0), b = soc_at(s, n, 1);
    int64_t xx, yy;
    if ((st = soc_int(s, &a, 0, s->W - 1, &xx)) || (st = soc_int(s, &b, 0, s->H - 1, &yy)))
        return st;
    *x = (int32_t)xx;
    *y = (int32_t)yy;
    return POLIS_OK;
}

/* A value or a list of values, for the cyclic expansion of static entries (spec §2.3.2):
 * "positions" is [x, y] or [[x, y], ...]; "name" and "num" a value or a list. */
static bool is_position_list(soc *s, const soc_node *n)
{
    if (soc_kind(s, n) != 4 || soc_len(s, n) == 0) return false;
    soc_node first = soc_at(s, n, 0);
    return soc_kind(s, &first) == 4;
}

static int32_t cyc_len(soc *s, const soc_node *n, bool positions)
{
    if (positions) return is_position_list(s, n) ? soc_len(s, n) : 1;
    return soc_kind(s, n) == 4 ? soc_len(s, n) : 1;
}

static soc_node cyc_at(soc *s, const soc_node *n, int32_t i, bool positions)
{
    bool list = positions ? is_position_list(s, n) : soc_kind(s, n) == 4;
    return list ? soc_at(s, n, i % soc_len(s, n)) : *n;
}

/* NUM (spec §2.3.3): {"rule": "static", "num": k}, {"rule": "random", "min": a, "max": b,
 * "dist": "uniform", "type": "int"}, or (polis) a plain integer k. */
static polis_status num_rule(soc *s, const soc_node *n, soc_num *out)
{
    polis_status st;
    int64_t a, b;
    if (soc_kind(s, n) == 2) {
        if ((st = soc_int(s, n, 0, SOC_MAX_AMOUNT, &a))) return st;
        out->lo = out->hi = (int32_t)a;
        return POLIS_OK;
    }
    static const char *const keys[] = {"rule", "num", "min", "max", "dist", "type", NULL};
    if ((st = soc_want_object(s, n)) || (st = soc_check_keys(s, n, keys))) return st;
    soc_node rn = soc_get(s, n, "rule");
    const char *rule;
    if ((st = soc_string(s, &rn, &rule))) return st;
    if (strcmp(rule, "static") == 0) {
        soc_node k = soc_get(s, n, "num");
        if ((st = soc_int(s, &k, 0, SOC_MAX_AMOUNT, &a))) return st;
        out->lo = out->hi = (int32_t)a;
        return POLIS_OK;
    }
    if (strcmp(rule, "random") != 0)
        return soc_fail(s, &rn,
                        "expected \"static\" or \"random\", got \"%s\" (AdaSociety "
                        "does not implement \"loop\" either)",
                        rule);
    soc_node dn = soc_get(s, n, "dist"), tn = soc_get(s, n, "type");
    const char *v;
    if (soc_kind(s, &dn) != -1) {
        if ((st = soc_string(s, &dn, &v))) return st;
        if (strcmp(v, "uniform"))
            return soc_fail(s, &dn, "expected \"uniform\" (the only distribution), got \"%s\"", v);
    }
    if (soc_kind(s, &tn) != -1) {
        if ((st = soc_string(s, &tn, &v))) return st;
        if (strcmp(v, "int")) return soc_fail(s, &tn, "expected \"int\", got \"%s\"", v);
    }
    soc_node lo = soc_get(s, n, "min"), hi = soc_get(s, n, "max");
    if ((st = soc_int(s, &lo, 0, SOC_MAX_AMOUNT, &a)) ||
        (st = soc_int(s, &hi, 0, SOC_MAX_AMOUNT, &b)))
        return st;
    if (a > b) return soc_fail(s, &hi, "max %lld is below min %lld", (long long)b, (long long)a);
    out->lo = (int32_t)a;
    out->hi = (int32_t)b;
    return POLIS_OK;
}

/* ---- static content -------------------------------------------------------------------------- */

enum { KIND_BLOCK, KIND_PILE, KIND_STATION, KIND_PLAYER };

static polis_status lookup(soc *s, int kind, const soc_node *n, int32_t *out)
{
    const char *name;
    polis_status st = soc_string(s, n, &name);
    if (st) return st;
    if (kind == KIND_PILE) *out = soc_resource_find(s, name);
    if (kind == KIND_STATION) *out = soc_recipe_find(s, name);
    if (kind == KIND_PLAYER) *out = soc_job_find(s, name);
    if (*out >= 0) return POLIS_OK;
    static const char *const what[] = {"", "resource", "recipe", "job"};
    return soc_fail(s, n, "\"%s\" is not a %s", name, what[kind]);
}

static polis_status static_entries(soc *s, const soc_node *list, int kind, const char *name_key)
{
    if (soc_kind(s, list) == -1) return POLIS_OK;
    if (soc_kind(s, list) != 4) return soc_fail(s, list, "expected an array");
    static const char *const pile_keys[] = {"name", "positions", "num", NULL};
    static const char *const station_keys[] = {"name", "positions", NULL};
    static const char *const player_keys[] = {"job", "positions", NULL};
    static const char *const block_keys[] = {"positions", NULL};
    const char *const *keys = kind == KIND_PILE      ? pile_keys
                              : kind == KIND_STATION ? station_keys
                              : kind == KIND_PLAYER  ? player_keys
                                                     : block_keys;
    polis_status st;
    int32_t len = soc_len(s, list);
    for (int32_t i = 0; i < len; i++) {
        soc_node e = soc_at(s, list, i);
        if ((st = soc_want_object(s, &e)) || (st = soc_check_keys(s, &e, keys))) return st;
        /* Blocks have no name key: their "names" node stays missing (never a NULL key). */
        soc_node names = kind == KIND_BLOCK ? soc_get(s, &e, NULL) : soc_get(s, &e, name_key),
                 pos = soc_get(s, &e, "positions"), num = soc_get(s, &e, "num");
        if (soc_kind(s, &pos) == -1) {
            soc_node one = soc_get(s, &e, "position");
            if (soc_kind(s, &one) != -1)
                return soc_fail(s, &e,
                                "missing \"positions\" (this entry has \"position\"; rename "
                                "it: AdaSociety reads \"positions\" and fails on it too)");
            return soc_fail(s, &e, "missing \"positions\"");
        }
        if (kind != KIND_BLOCK && soc_kind(s, &names) == -1)
            return soc_fail(s, &e, "missing \"%s\"", name_key);
        if (kind == KIND_PILE && soc_kind(s, &num) == -1) return soc_fail(s, &e, "missing \"num\"");
        int32_t count = cyc_len(s, &pos, true);
        if (kind != KIND_BLOCK && cyc_len(s, &names, false) > count)
            count = cyc_len(s, &names, false);
        if (kind == KIND_PILE && soc_kind(s, &num) == 4 && soc_len(s, &num) > count)
            count = soc_len(s, &num);
        for (int32_t k = 0; k < count; k++) {
            soc_place pl = {0};
            soc_node pn = cyc_at(s, &pos, k, true);
            if ((st = position(s, &pn, &pl.x, &pl.y))) return st;
            int32_t cell = pl.y * s->W + pl.x;
            /* AdaSociety places a static pile on a block too (GameEditor.generate_resources
             * never looks at the map), where no agent can ever stand to pick it: README,
             * decision 27. */
            if (s->base[cell] && kind == KIND_PILE)
                return soc_fail(s, &pn,
                                "(%d, %d) is a block of the base map: no agent could ever "
                                "stand there to pick this pile (AdaSociety places it anyway); "
                                "move it to a free cell",
                                (int)pl.x, (int)pl.y);
            if (s->base[cell])
                return soc_fail(s, &pn, "(%d, %d) is a block of the base map", (int)pl.x,
                                (int)pl.y);
            if (kind != KIND_BLOCK) {
                soc_node nn = cyc_at(s, &names, k, false);
                if ((st = lookup(s, kind, &nn, &pl.what))) return st;
            }
            if (kind == KIND_PILE) {
                soc_node kn = cyc_at(s, &num, k, false);
                if ((st = num_rule(s, &kn, &pl.num))) return st;
            }
            uint8_t *r = &s->reserved[cell];
            soc_list *dst;
            switch (kind) {
            case KIND_PILE:
                if (!(*r & SOC_RESERVED_PILE)) s->n_st_pile_cells++;
                *r |= SOC_RESERVED_PILE;
                dst = &s->st_piles;
                break;
            case KIND_STATION:
                if (*r & SOC_RESERVED_STATION)
                    return soc_fail(s, &pn, "(%d, %d) already has a recipe station", (int)pl.x,
                                    (int)pl.y);
                *r |= SOC_RESERVED_STATION;
                s->n_st_station_cells++;
                dst = &s->st_stations;
                break;
            case KIND_PLAYER:
                if (*r & SOC_RESERVED_PLAYER)
                    return soc_fail(s, &pn, "(%d, %d) already has a player", (int)pl.x, (int)pl.y);
                *r |= SOC_RESERVED_PLAYER;
                s->n_st_player_cells++;
                dst = &s->st_players;
                break;
            default:
                if (*r & SOC_RESERVED_BLOCK) continue;
                *r |= SOC_RESERVED_BLOCK;
                dst = &s->st_blocks;
                break;
            }
            if ((st = soc_list_push(s, dst, pl))) return st;
        }
    }
    return POLIS_OK;
}

/* ---- random content ----------------------------------------------------------------------------
 */

static polis_status repeat_of(soc *s, const soc_node *e, int64_t *out)
{
    soc_node rn = soc_get(s, e, "repeat");
    if (soc_kind(s, &rn) == -1) return soc_fail(s, e, "missing \"repeat\"");
    return soc_int(s, &rn, 0, 16777216, out);
}

static polis_status random_entries(soc *s, const soc_node *list, int kind, const char *name_key,
                                   const soc_node *players_place)
{
    if (soc_kind(s, list) == -1) return POLIS_OK;
    polis_status st;
    if (kind == KIND_BLOCK && soc_kind(s, list) == 2 && !list->ada) {
        int64_t b;
        if ((st = soc_int(s, list, 0, (int64_t)s->cells, &b))) return st;
        s->random_blocks += (int32_t)b;
        return POLIS_OK;
    }
    if (soc_kind(s, list) != 4)
        return soc_fail(s, list,
                        kind == KIND_BLOCK && !list->ada
                            ? "expected a count or an array of {\"repeat\": n}"
                            : "expected an array");
    static const char *const pile_keys[] = {"name", "num", "repeat", NULL};
    static const char *const station_keys[] = {"name", "repeat", NULL};
    static const char *const player_keys[] = {"job", "repeat", NULL};
    static const char *const ada_player_keys[] = {"job", "repeat", "fov", NULL};
    static const char *const block_keys[] = {"repeat", NULL};
    const char *const *keys = kind == KIND_PILE      ? pile_keys
                              : kind == KIND_STATION ? station_keys
                              : kind == KIND_BLOCK   ? block_keys
                              : list->ada            ? ada_player_keys
                                                     : player_keys;
    int32_t len = soc_len(s, list);
    int32_t fill_at = -1, fill_job = -1;
    for (int32_t i = 0; i < len; i++) {
        soc_node e = soc_at(s, list, i);
        if ((st = soc_want_object(s, &e)) || (st = soc_check_keys(s, &e, keys))) return st;
        soc_place pl = {0};
        if (kind != KIND_BLOCK) {
            soc_node nn = soc_get(s, &e, name_key);
            if ((st = lookup(s, kind, &nn, &pl.what))) return st;
        }
        soc_node rn = soc_get(s, &e, "repeat");
        if (kind == KIND_PLAYER && !e.ada && soc_kind(s, &rn) == -1) {
            /* polis: a players entry without "repeat" takes every agent left over. */
            if (fill_at >= 0)
                return soc_fail(s, &e, "only one players entry may leave out \"repeat\"");
            fill_at = s->rnd_players.n;
            fill_job = pl.what;
            continue;
        }
        int64_t rep;
        if ((st = repeat_of(s, &e, &rep))) return st;
        if (kind == KIND_BLOCK) {
            if (s->random_blocks + rep > s->cells) return soc_fail(s, &e, "more blocks than cells");
            s->random_blocks += (int32_t)rep;
            continue;
        }
        if (kind == KIND_PILE) {
            soc_node kn = soc_get(s, &e, "num");
            if (soc_kind(s, &kn) == -1) return soc_fail(s, &e, "missing \"num\"");
            if ((st = num_rule(s, &kn, &pl.num))) return st;
        }
        soc_list *dst = kind == KIND_PILE      ? &s->rnd_piles
                        : kind == KIND_STATION ? &s->rnd_stations
                                               : &s->rnd_players;
        if ((int64_t)dst->n + rep > (int64_t)s->cells)
            return soc_fail(s, &e, "more entries than the %d cells of the map", (int)s->cells);
        for (int64_t k = 0; k < rep; k++)
            if ((st = soc_list_push(s, dst, pl))) return st;
    }
    if (fill_at >= 0) {
        int32_t others = s->st_players.n + s->rnd_players.n;
        int32_t left = s->n_agents - others;
        if (left < 0)
            return soc_fail(s, players_place,
                            "the other players entries place %d players, but "
                            "the scenario has %d agents",
                            (int)others, (int)s->n_agents);
        soc_list rebuilt = {0};
        soc_place filler = {.what = fill_job};
        for (int32_t i = 0; i <= s->rnd_players.n; i++) {
            if (i == fill_at)
                for (int32_t k = 0; k < left; k++)
                    if ((st = soc_list_push(s, &rebuilt, filler))) return st;
            if (i < s->rnd_players.n && (st = soc_list_push(s, &rebuilt, s->rnd_players.v[i])))
                return st;
        }
        s->rnd_players = rebuilt;
    }
    return POLIS_OK;
}

/* ---- the whole description ------------------------------------------------------------------- */

polis_status soc_world_setup(soc *s)
{
    polis_status st;
    soc_node stat, rnd, top = {0};
    const char *rec_key;
    bool ada = s->ada_task != NULL;
    s->reserved = soc_alloc(s, (size_t)s->cells);
    if (!s->reserved) return POLIS_ERR_NOMEM;
    if (ada) {
        top = soc_node_file(s->ada_task, s->ada_task_path);
        static const char *const task_keys[] = {
            "agent",    "env_handler", "base_map",          "static",
            "random",   "max_length",  "pre_updates",       "post_updates",
            "contract", "negotiation", "negotiation_steps", NULL};
        if ((st = soc_want_object(s, &top)) || (st = soc_check_keys(s, &top, task_keys))) return st;
        stat = soc_get(s, &top, "static");
        rnd = soc_get(s, &top, "random");
        rec_key = "events";
        soc_node ml = soc_get(s, &top, "max_length");
        if (soc_kind(s, &ml) != -1) {
            int64_t v;
            if ((st = soc_int(s, &ml, 1, 1000000000, &v))) return st;
            s->max_length = v;
        }
    } else {
        stat = soc_node_params(s, s->p.static_);
        rnd = soc_node_params(s, s->p.random);
        rec_key = "recipes";
    }
    if (s->p.max_length > 0) s->max_length = s->p.max_length;

    static const char *const stat_keys[] = {"blocks", "resources", "recipes", "players", NULL};
    static const char *const ada_stat_keys[] = {
        "blocks", "resources",       "events",    "players", "communication_length",
        "social", "social_schedule", "stackable", NULL};
    static const char *const rnd_keys[] = {"blocks", "resources", "recipes", "players", NULL};
    static const char *const ada_rnd_keys[] = {"blocks", "resources", "events", "players", NULL};
    if (soc_kind(s, &stat) != -1) {
        if ((st = soc_want_object(s, &stat)) ||
            (st = soc_check_keys(s, &stat, ada ? ada_stat_keys : stat_keys)))
            return st;
        soc_node n;
        n = soc_get(s, &stat, "blocks");
        if (ada) {
            /* AdaSociety reads static.blocks and places nothing ("TODO load static blocks"):
             * the same task plays the same map here. The entries are logged, not checked. */
            if (soc_kind(s, &n) != -1 && !(soc_kind(s, &n) == 4 && soc_len(s, &n) == 0))
                s->h->log(s->ctx,
                          "%s: %s: ignored, as AdaSociety ignores it (it places no static "
                          "blocks; use random.blocks or a map file)",
                          n.file, n.path);
        } else if ((st = static_entries(s, &n, KIND_BLOCK, NULL))) {
            return st;
        }
        n = soc_get(s, &stat, "resources");
        if ((st = static_entries(s, &n, KIND_PILE, "name"))) return st;
        n = soc_get(s, &stat, rec_key);
        if ((st = static_entries(s, &n, KIND_STATION, "name"))) return st;
        n = soc_get(s, &stat, "players");
        if ((st = static_entries(s, &n, KIND_PLAYER, "job"))) return st;
    }
    soc_node players_place = rnd;
    if (soc_kind(s, &rnd) != -1) {
        if ((st = soc_want_object(s, &rnd)) ||
            (st = soc_check_keys(s, &rnd, ada ? ada_rnd_keys : rnd_keys)))
            return st;
        soc_node n;
        n = soc_get(s, &rnd, "blocks");
        if ((st = random_entries(s, &n, KIND_BLOCK, NULL, NULL))) return st;
        n = soc_get(s, &rnd, "resources");
        if ((st = random_entries(s, &n, KIND_PILE, "name", NULL))) return st;
        n = soc_get(s, &rnd, rec_key);
        if ((st = random_entries(s, &n, KIND_STATION, "name", NULL))) return st;
        players_place = soc_get(s, &rnd, "players");
        if ((st = random_entries(s, &players_place, KIND_PLAYER, "job", &players_place))) return st;
    }

    int32_t players = s->st_players.n + s->rnd_players.n;
    if (players != s->n_agents) {
        soc_node where = ada ? top : soc_node_params(s, s->p.random);
        return soc_fail(s, &where,
                        "the static and random players are %d, but the scenario has "
                        "%d agents (\"agents\"); they must be equal",
                        (int)players, (int)s->n_agents);
    }

    /* Enough free cells for every random placement, whatever the draws. */
    int32_t st_block_cells = s->st_blocks.n;
    int32_t reserved_cells = 0;
    for (int32_t c = 0; c < s->cells; c++)
        if (s->reserved[c] & (SOC_RESERVED_PILE | SOC_RESERVED_STATION | SOC_RESERVED_PLAYER)) {
            if (s->reserved[c] & SOC_RESERVED_BLOCK) {
                soc_node where = ada ? top : stat;
                return soc_fail(s, &where,
                                "(%d, %d) is both a static block and holds static "
                                "content",
                                (int)(c % s->W), (int)(c / s->W));
            }
            reserved_cells++;
        }
    int32_t free_cells = s->cells - s->n_base_blocks - st_block_cells;
    soc_node where = ada ? top : soc_node_params(s, s->p.random);
    if (s->random_blocks > free_cells - reserved_cells)
        return soc_fail(s, &where,
                        "%d random blocks do not fit: %d free cells are not taken by "
                        "static content",
                        (int)s->random_blocks, (int)(free_cells - reserved_cells));
    free_cells -= s->random_blocks;
    struct {
        int32_t n, taken;
        const char *what;
    } need[] = {{s->rnd_piles.n, s->n_st_pile_cells, "random piles"},
                {s->rnd_stations.n, s->n_st_station_cells, "random recipe stations"},
                {s->rnd_players.n, s->n_st_player_cells, "random players"}};
    for (size_t i = 0; i < 3; i++)
        if (need[i].n > free_cells - need[i].taken)
            return soc_fail(s, &where,
                            "%d %s do not fit: %d free cells after the blocks, %d of "
                            "them taken by static ones",
                            (int)need[i].n, need[i].what, (int)free_cells, (int)need[i].taken);
    /* Amounts stacked by static piles on one cell must not overflow. */
    for (int32_t i = 0; i < s->st_piles.n; i++) {
        int64_t sum = 0;
        for (int32_t k = 0; k < s->st_piles.n; k++)
            if (s->st_piles.v[k].x == s->st_piles.v[i].x &&
                s->st_piles.v[k].y == s->st_piles.v[i].y &&
                s->st_piles.v[k].what == s->st_piles.v[i].what)
                sum += s->st_piles.v[k].num.hi;
        if (sum > SOC_MAX_AMOUNT) {
            soc_node w = ada ? top : stat;
            return soc_fail(s, &w, "static piles of %s on (%d, %d) may hold more than %d units",
                            s->res[s->st_piles.v[i].what].name, (int)s->st_piles.v[i].x,
                            (int)s->st_piles.v[i].y, SOC_MAX_AMOUNT);
        }
    }

    /* Jobs of the players, in agent order: static players first, then random ones. */
    s->agent_job = soc_alloc(s, sizeof *s->agent_job * (size_t)s->n_agents);
    if (!s->agent_job) return POLIS_ERR_NOMEM;
    for (int32_t a = 0; a < s->n_agents; a++)
        s->agent_job[a] = a < s->st_players.n ? s->st_players.v[a].what
                                              : s->rnd_players.v[a - s->st_players.n].what;

    /* The resources and recipes in play (spec §13 "resource_name"): what the world places,
     * what its stations consume and make, and what the players start with. */
    uint8_t *used_res = soc_alloc(s, (size_t)s->R);
    uint8_t *used_rec = soc_alloc(s, (size_t)(s->K ? s->K : 1));
    if (!used_res || !used_rec) return POLIS_ERR_NOMEM;
    bool all = strcmp(s->p.resources_in_play, "all") == 0;
    if (all) {
        memset(used_res, 1, (size_t)s->R);
        memset(used_rec, 1, (size_t)(s->K ? s->K : 1));
    } else {
        for (int32_t i = 0; i < s->st_piles.n; i++) used_res[s->st_piles.v[i].what] = 1;
        for (int32_t i = 0; i < s->rnd_piles.n; i++) used_res[s->rnd_piles.v[i].what] = 1;
        for (int32_t i = 0; i < s->st_stations.n; i++) used_rec[s->st_stations.v[i].what] = 1;
        for (int32_t i = 0; i < s->rnd_stations.n; i++) used_rec[s->rnd_stations.v[i].what] = 1;
        for (int32_t k = 0; k < s->K; k++) {
            if (!used_rec[k]) continue;
            const soc_recipe *rc = &s->rec[k];
            for (int32_t i = 0; i < rc->n_in; i++) used_res[s->amounts[rc->in + i].res] = 1;
            for (int32_t i = 0; i < rc->n_out; i++) used_res[s->amounts[rc->out + i].res] = 1;
        }
        for (int32_t a = 0; a < s->n_agents; a++)
            for (int32_t r = 0; r < s->R; r++)
                if (s->init[(size_t)s->agent_job[a] * (size_t)s->R + (size_t)r] > 0)
                    used_res[r] = 1;
    }
    int32_t n_used = 0;
    for (int32_t r = 0; r < s->R; r++) n_used += used_res[r];
    if (n_used == 0) {
        soc_node w = ada ? top : soc_node_params(s, s->p.random);
        return soc_fail(s, &w,
                        "no resource is in play: the world places no pile and no "
                        "station (set \"resources_in_play\": \"all\" to keep them all)");
    }
    return soc_content_compact(s, used_res, used_rec);
}
