/* test_obs_merged.c — society's map-view grid checked against the world as it is, step after
 * step. The merged views are painted from per-pass caches (a table of each cell's elements,
 * and the union of an owner set kept in map coordinates for every viewer with the same
 * owners, observe.c); a cache that outlived a change of the world would paint the world of
 * an earlier step. Here every agent's grid is compared, after every reset and step of random
 * legal play, with what society's JSON view of that agent says at that moment: its own
 * window and the windows shared with it, each listing the blocks, the agents, the piles and
 * stations its owner sees, read from the world itself. So piles changing (pick, dump),
 * agents moving, requirements gained and lost (what an owner sees), sharing toggled and
 * group switches (Exploration's social actions, dynamic_hard's schedule) all show. */
#include <cjson/cJSON.h>

#include "fixture.h"

#define MAX_RES 64

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t next_u32(rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}

static void random_actions(const polis_io *io, rng *r)
{
    for (int32_t a = 0; a < io->n_agents; a++) {
        const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
        int32_t legal = 0;
        for (int32_t k = 0; k < io->n_actions; k++) legal += m[k] != 0;
        int32_t pick = legal ? (int32_t)(next_u32(r) % (uint32_t)legal) : 0, k = 0;
        for (; k < io->n_actions; k++)
            if (m[k] && pick-- == 0) break;
        io->actions[a] = k < io->n_actions ? k : 0;
    }
}

static polis_env *open_file(const char *rel, const char *overrides)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", POLIS_SOURCE_DIR, rel);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", rel, err.message);
        return NULL;
    }
    return env;
}

/* What the grid must hold, built from the JSON views: per map cell. */
typedef struct expect {
    int32_t W, H, R, C;
    char res[MAX_RES][64]; /* resource names by channel order, from the grid's doc */
    uint8_t *covered;      /* [cells] */
    int16_t *agent, *block;
    int16_t *pile;            /* [cells][R] */
    int16_t *station;         /* [cells] recipe index in `recipes` + 1, 0: none seen */
    char recipes[64][64];     /* recipe names met so far */
    int16_t vec[64][MAX_RES]; /* each recipe's values in channels 2..2+R-1, learnt once */
    bool vec_known[64];
    int n_recipes;
    long conflicts; /* two views disagreeing about one cell: a broken reference */
} expect;

static int res_index(const expect *e, const char *name)
{
    for (int r = 0; r < e->R; r++)
        if (!strcmp(e->res[r], name)) return r;
    return -1;
}

static int recipe_index(expect *e, const char *name)
{
    for (int k = 0; k < e->n_recipes; k++)
        if (!strcmp(e->recipes[k], name)) return k;
    if (e->n_recipes == 64) return -1;
    snprintf(e->recipes[e->n_recipes], sizeof e->recipes[0], "%s", name);
    return e->n_recipes++;
}

static bool pos(const cJSON *j, int *x, int *y)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "position");
    if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2) return false;
    *x = cJSON_GetArrayItem(p, 0)->valueint;
    *y = cJSON_GetArrayItem(p, 1)->valueint;
    return true;
}

static void put16(expect *e, int16_t *slot, int16_t v)
{
    if (*slot && *slot != v) e->conflicts++;
    *slot = v;
}

/* Adds one owner's window (a "Map" object) centred on (cx, cy), the owner `owner`. */
static void add_map(expect *e, const cJSON *map, int cx, int cy, int owner)
{
    const cJSON *bg = cJSON_GetObjectItemCaseSensitive(map, "block_grids");
    CHECK(cJSON_IsArray(bg));
    int fh = (cJSON_GetArraySize(bg) - 1) / 2, fv = 0;
    int dx = -fh;
    const cJSON *col;
    cJSON_ArrayForEach(col, bg) {
        fv = (cJSON_GetArraySize(col) - 1) / 2;
        int dy = -fv;
        const cJSON *b;
        cJSON_ArrayForEach(b, col) {
            int x = ((cx + dx) % e->W + e->W) % e->W, y = ((cy + dy) % e->H + e->H) % e->H;
            int cell = y * e->W + x;
            e->covered[cell] = 1;
            if (b->valueint) e->block[cell] = 1;
            dy++;
        }
        dx++;
    }
    int owner_cell = cy * e->W + cx;
    put16(e, &e->agent[owner_cell], (int16_t)(owner + 1));
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(map, "players")) {
        int x = 0, y = 0;
        CHECK(pos(it, &x, &y));
        put16(e, &e->agent[y * e->W + x],
              (int16_t)(cJSON_GetObjectItemCaseSensitive(it, "id")->valueint + 1));
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(map, "resources")) {
        int x = 0, y = 0,
            r = res_index(e, cJSON_GetObjectItemCaseSensitive(it, "name")->valuestring);
        CHECK(pos(it, &x, &y) && r >= 0);
        if (r < 0) continue;
        int v = cJSON_GetObjectItemCaseSensitive(it, "amount")->valueint;
        put16(e, &e->pile[(size_t)(y * e->W + x) * (size_t)e->R + (size_t)r],
              (int16_t)(v > 32767 ? 32767 : v));
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(map, "events")) {
        int x = 0, y = 0,
            k = recipe_index(e, cJSON_GetObjectItemCaseSensitive(it, "name")->valuestring);
        CHECK(pos(it, &x, &y) && k >= 0);
        if (k >= 0) put16(e, &e->station[y * e->W + x], (int16_t)(k + 1));
    }
}

/* Compares agent's grid with its JSON view; returns the mismatching elements. */
static long check_agent(polis_env *env, expect *e, int32_t agent, long *painted)
{
    size_t cells = (size_t)e->W * (size_t)e->H;
    memset(e->covered, 0, cells);
    memset(e->agent, 0, cells * sizeof(int16_t));
    memset(e->block, 0, cells * sizeof(int16_t));
    memset(e->station, 0, cells * sizeof(int16_t));
    memset(e->pile, 0, cells * (size_t)e->R * sizeof(int16_t));
    char *text = NULL;
    CHECK_EQ_INT(polis_env_render(env, agent, "json", &text), POLIS_OK);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    polis_free(text);
    const cJSON *soc = cJSON_GetObjectItemCaseSensitive(j, "society");
    CHECK(soc != NULL);
    if (!soc) {
        cJSON_Delete(j);
        return 1;
    }
    int vx = 0, vy = 0;
    CHECK(pos(cJSON_GetObjectItemCaseSensitive(soc, "Player"), &vx, &vy));
    add_map(e, cJSON_GetObjectItemCaseSensitive(soc, "Map"), vx, vy, agent);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(soc, "Social"), "sharings");
    const cJSON *u;
    cJSON_ArrayForEach(u, sh) {
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(u, "Map");
        if (!map) continue;
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(map, "center");
        CHECK(cJSON_IsArray(c));
        add_map(e, map, cJSON_GetArrayItem(c, 0)->valueint, cJSON_GetArrayItem(c, 1)->valueint,
                atoi(u->string));
    }
    cJSON_Delete(j);
    const int16_t *g = test_obs_field(env, agent, "grid", NULL);
    const size_t plane = cells;
    long bad = 0;
    for (int x = 0; x < e->W; x++)
        for (int y = 0; y < e->H; y++) {
            int cell = y * e->W + x;
            int i = ((x - vx + e->W / 2) % e->W + e->W) % e->W;
            int jj = ((y - vy + e->H / 2) % e->H + e->H) % e->H;
            size_t at = (size_t)i * (size_t)e->H + (size_t)jj;
            int16_t want[2 + 2 * MAX_RES];
            memset(want, 0, sizeof want);
            if (e->covered[cell]) {
                want[0] = e->agent[cell];
                want[1] = e->block[cell];
                for (int r = 0; r < e->R; r++)
                    want[2 + e->R + r] = e->pile[(size_t)cell * e->R + r];
            }
            int k = e->covered[cell] ? e->station[cell] - 1 : -1;
            for (int c = 0; c < e->C; c++) {
                int16_t got = g[(size_t)c * plane + at];
                *painted += got != 0;
                if (c >= 2 && c < 2 + e->R) {
                    /* a station's values: the same for every cell of its recipe, learnt
                     * from the first one seen; nothing where no station is seen */
                    if (k < 0) {
                        bad += got != 0;
                    } else if (!e->vec_known[k]) {
                        e->vec[k][c - 2] = got;
                    } else {
                        bad += got != e->vec[k][c - 2];
                    }
                    continue;
                }
                if (got != want[c]) {
                    if (bad < 3)
                        fprintf(stderr, "agent %d: channel %d at map (%d, %d): %d, want %d\n",
                                (int)agent, c, x, y, got, want[c]);
                    bad++;
                }
            }
            if (k >= 0 && !e->vec_known[k]) {
                bool any = false;
                for (int r = 0; r < e->R; r++) any |= e->vec[k][r] != 0;
                CHECK(any); /* a seen station paints something */
                e->vec_known[k] = true;
            }
        }
    return bad;
}

/* Plays `steps` random steps (resetting after each episode), checking every agent's grid
 * after every reset and step; returns the nonzero grid elements seen. */
static long check_run(const char *rel, const char *overrides, int steps, uint64_t seed)
{
    polis_env *env = open_file(rel, overrides);
    CHECK(env != NULL);
    if (!env) return 0;
    expect e;
    memset(&e, 0, sizeof e);
    polis_obs_field f;
    CHECK(test_obs_field(env, 0, "grid", &f) != NULL);
    e.C = f.shape[0];
    e.W = f.shape[1];
    e.H = f.shape[2];
    e.R = (e.C - 2) / 2;
    CHECK(e.R <= MAX_RES);
    /* "...; resources: 0 wood, 1 stone; unseen ..." */
    const char *p = strstr(f.doc, "resources: ");
    CHECK(p != NULL);
    for (int r = 0; p && r < e.R; r++) {
        int num = -1;
        CHECK(sscanf(p + (r ? 2 : 11), "%d %63[a-z0-9_]", &num, e.res[r]) == 2);
        CHECK_EQ_INT(num, r);
        p = strchr(p + (r ? 2 : 11), ',');
        if (!p) break;
    }
    size_t cells = (size_t)e.W * (size_t)e.H;
    e.covered = calloc(cells, 1);
    e.agent = calloc(cells, sizeof(int16_t));
    e.block = calloc(cells, sizeof(int16_t));
    e.station = calloc(cells, sizeof(int16_t));
    e.pile = calloc(cells * (size_t)e.R, sizeof(int16_t));
    const polis_io *io = polis_env_io(env);
    rng acts = {seed};
    uint64_t ep = seed;
    long bad = 0, painted = 0;
    for (int t = 0; t <= steps; t++) {
        if (t == 0 || polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_reset(env, ep++), POLIS_OK);
        } else {
            random_actions(io, &acts);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        long before = bad;
        for (int32_t a = 0; a < io->n_agents; a++) bad += check_agent(env, &e, a, &painted);
        if (bad > before && before == 0)
            fprintf(stderr, "%s: grid differs from the world at tick %lld\n", rel,
                    (long long)polis_env_tick(env));
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(e.conflicts, 0);
    free(e.covered);
    free(e.agent);
    free(e.block);
    free(e.station);
    free(e.pile);
    polis_env_destroy(env);
    return painted;
}

#define MIXED                                                                                      \
    "\"plugins.society.params.jobs\": {\"smith\": {\"fov\": 2, \"inventory\": {\"hammer\": "       \
    "1}}, \"chemist\": {\"fov\": 3, \"inventory\": {\"coal\": 1, \"torch\": 1, \"iron\": "         \
    "1}}, \"scout\": {\"fov\": 1}}, \"plugins.society.params.random.players\": [{\"job\": "        \
    "\"smith\", \"repeat\": 3}, {\"job\": \"chemist\", \"repeat\": 3}, {\"job\": "                 \
    "\"scout\", \"repeat\": 2}]"

/* agents 0-1, 2-3 and 4-5 share their maps with each other */
#define PAIRS                                                                                      \
    "\"plugins.social.params.social.relations\": [{\"name\": \"pairs\", \"attributes\": "          \
    "{\"sharing\": {\"Map\": true}}, \"players\": [{\"from\": 0, \"to\": 1}, {\"from\": 1, "       \
    "\"to\": 0}, {\"from\": 2, \"to\": 3}, {\"from\": 3, \"to\": 2}, {\"from\": 4, "               \
    "\"to\": 5}, {\"from\": 5, \"to\": 4}]}]"

int main(void)
{
    const char *ss = "rulesets/social_structure/";
    char path[256];
    /* groups sharing their maps: every member paints the same union (one cache entry for
     * all, two, four); dynamic_hard switches the structure at steps 30 and 60 */
    static const char *const games[] = {"ind_group_hard", "inequality_hard", "connection_hard",
                                        "dynamic_hard", "ind_group"};
    for (size_t i = 0; i < sizeof games / sizeof *games; i++) {
        snprintf(path, sizeof path, "%s%s.json", ss, games[i]);
        CHECK(check_run(path, NULL, i == 3 ? 120 : 60, 11 + i) > 0);
    }
    /* Exploration: sharing toggled at random, messages, group switches, picks and dumps
     * that change what owners see */
    const char *e = "rulesets/exploration/exploration.json";
    CHECK(check_run(e, "{\"max_steps\": 50}", 100, 3) > 0);
    CHECK(check_run(e, "{\"max_steps\": 60, " MIXED "}", 120, 4) > 0);
    /* pairs sharing their maps from the start: each pair has one owner set, so a cached
     * union serves both viewers while things change under it */
    CHECK(check_run(e, "{\"max_steps\": 40, \"agents\": 6, " PAIRS "}", 80, 5) > 0);
    /* the same pairs on a map over 64 cells high (the unions' per-cell path), with owners
     * that see different things, and on a 4x3 map where every window wraps onto itself */
    CHECK(check_run(e,
                    "{\"max_steps\": 40, " MIXED ", \"plugins.society.params.map.size\": "
                    "{\"x\": 9, \"y\": 70}, " PAIRS "}",
                    80, 6) > 0);
    /* 64 cells high, the most a column's coverage bit set holds: windows wrap across its
     * last bit, and with fov 32 every window covers whole columns (the covered run is the
     * full 64 bits) */
    CHECK(check_run(e,
                    "{\"max_steps\": 40, \"agents\": 6, \"plugins.society.params.map.size\": "
                    "{\"x\": 12, \"y\": 64}, " PAIRS "}",
                    80, 8) > 0);
    CHECK(check_run(e,
                    "{\"max_steps\": 20, \"agents\": 6, \"plugins.society.params.map.size\": "
                    "{\"x\": 9, \"y\": 64}, \"plugins.society.params.jobs\": {\"seer\": "
                    "{\"fov\": 32}}, \"plugins.society.params.random.players\": [{\"job\": "
                    "\"seer\", \"repeat\": 6}], " PAIRS "}",
                    40, 9) > 0);
    CHECK(check_run(e,
                    "{\"max_steps\": 30, \"agents\": 6, \"plugins.society.params.map.size\": "
                    "{\"x\": 4, \"y\": 3}, \"plugins.society.params.random\": {\"blocks\": 1, "
                    "\"resources\": [{\"name\": \"wood\", \"num\": 5, \"repeat\": 2}], "
                    "\"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 2}]}, " PAIRS "}",
                    60, 7) > 0);
    CHECK_DONE();
}
