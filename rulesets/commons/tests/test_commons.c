/*
 * test_commons.c — Commons Harvest (rulesets/commons/commons.lua) from the host's side: the
 * shipped maps and parameters against ../shared/specs/ecosystem.md §1, regrowth rates by
 * neighbour count over many seeded steps, the distribution of the stochastic episode end,
 * a golden state hash, bad parameters, the text/JSON views and the action parser, the
 * metrics the bus carries, and the background bots as policies. Seeds are fixed, so every
 * statistical check is deterministic; tolerances are 4 standard deviations.
 */
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define DIR COMMONS_DIR
#define PROBE DIR "/tests/probe/map_probe.lua"

/* ---- helpers ----------------------------------------------------------------------------- */

/* A scenario running commons.lua with `params` (a JSON object's text) and, if asked, the map
 * probe (which logs the view layer as rows of text at every reset). */
static char *scenario(int agents, long max_steps, const char *params, bool probe)
{
    size_t n = strlen(params) + 1024;
    char *s = malloc(n);
    snprintf(s, n,
             "{\"agents\": %d, \"max_steps\": %ld, \"scripts\": [{\"path\": \"%s/commons.lua\", "
             "\"params\": %s}%s]}",
             agents, max_steps, DIR, params, probe ? ", {\"path\": \"" PROBE "\"}" : "");
    return s;
}

static polis_env *env_from_file(const char *file, const char *overrides, test_log *log)
{
    polis_options o = test_options(log, NULL);
    o.overrides = overrides;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DIR, file);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create %s failed: %s\n", file, err.message);
        return NULL;
    }
    return env;
}

/* The rows the probe logged (the last `h` "row" lines of the log). */
static int probe_rows(const test_log *log, char rows[][64], int max)
{
    int n = 0;
    for (const char *p = log->text; (p = strstr(p, "[map_probe] row ")) != NULL;) {
        p += strlen("[map_probe] row ");
        const char *e = strchr(p, '\n');
        if (n == max) {
            memmove(rows, rows + 1, sizeof rows[0] * (size_t)(max - 1));
            n--;
        }
        snprintf(rows[n++], 64, "%.*s", (int)(e - p), p);
        p = e;
    }
    return n;
}

static int count_char(char rows[][64], int h, char c)
{
    int n = 0;
    for (int y = 0; y < h; y++)
        for (const char *p = rows[y]; *p; p++) n += *p == c;
    return n;
}

typedef struct event_log {
    polis_env *env;
    int n;
    int64_t tick[20000];
    int32_t f[20000][12];
    double d[20000][3];
} event_log;

/* Host subscriber: keeps the i32 fields (and up to three f64 fields) of each event. */
static void on_event(void *ud, const polis_event *ev)
{
    event_log *l = ud;
    if (l->n >= 20000) return;
    int ni = 0, nd = 0;
    for (int32_t i = 0; i < polis_env_event_n_fields(l->env, ev->type); i++) {
        const char *name;
        polis_ftype t;
        size_t off;
        polis_env_event_field(l->env, ev->type, i, &name, &t, &off);
        if (t == POLIS_FIELD_I32 && ni < 12)
            memcpy(&l->f[l->n][ni++], (const char *)ev->data + off, 4);
        if (t == POLIS_FIELD_F64 && nd < 3)
            memcpy(&l->d[l->n][nd++], (const char *)ev->data + off, 8);
    }
    l->tick[l->n] = ev->tick;
    l->n++;
}

static void subscribe(polis_env *env, const char *name, event_log *l)
{
    l->env = env;
    l->n = 0;
    int32_t type = polis_env_event_find(env, name);
    CHECK(type >= 0);
    CHECK_EQ_INT(polis_env_subscribe(env, type, on_event, l), POLIS_OK);
}

static void set_all(polis_env *env, int32_t action)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) io->actions[a] = action;
}

/* ---- the shipped variants ----------------------------------------------------------------- */

static void test_variants(void)
{
    static const char *const variants[3] = {"open", "closed", "partnership"};
    for (int v = 0; v < 3; v++) {
        char params[128];
        snprintf(params, sizeof params, "{\"map\": \"%s\"}", variants[v]);
        char *json = scenario(7, 5000, params, true);
        test_log log = {0};
        polis_env *env = test_env(json, &log, NULL);
        free(json);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
        char rows[32][64];
        int h = probe_rows(&log, rows, 32);
        CHECK_EQ_INT(h, 18);
        for (int y = 0; y < h; y++) CHECK_EQ_INT(strlen(rows[y]), 24);
        /* 64 apples, 32 in each half, all alive at the start */
        CHECK_EQ_INT(count_char(rows, h, 'A'), 64);
        int left = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < 12; x++) left += rows[y][x] == 'A';
        CHECK_EQ_INT(left, 32);
        /* the border is wall */
        for (int x = 0; x < 24; x++) CHECK(rows[0][x] == '#' && rows[17][x] == '#');
        for (int y = 0; y < 18; y++) CHECK(rows[y][0] == '#' && rows[y][23] == '#');
        /* players 0 and 1 start on the inner spawn points (7, 7) and (16, 7); the others on
         * the outer ones, in rows 14-16 */
        bool q_ok =
            (rows[7][7] == '0' && rows[7][16] == '1') || (rows[7][7] == '1' && rows[7][16] == '0');
        CHECK(q_ok);
        for (int y = 0; y < 18; y++)
            for (int x = 0; x < 24; x++)
                if (rows[y][x] >= '2' && rows[y][x] <= '6') CHECK(y >= 14 && y <= 16);
        if (v == 0) {
            /* open: no interior walls */
            CHECK_EQ_INT(count_char(rows, h, '#'), 2 * 24 + 2 * 16);
        } else {
            /* rows 11 and 13: one door per room at columns 10 and 13; gaps at 1-2, 21-22 */
            CHECK_EQ_STR(rows[11], "##########.##.##########");
            for (int x = 0; x < 24; x++) {
                bool door = x == 10 || x == 13;
                CHECK(door ? rows[11][x] != '#' : rows[11][x] == '#');
                bool gap = x == 1 || x == 2 || x == 21 || x == 22;
                CHECK(gap ? rows[13][x] != '#' : rows[13][x] == '#');
            }
            /* row 9: a wall from column 7 to 16 */
            for (int x = 7; x <= 16; x++) CHECK(rows[9][x] == '#');
            /* the divider: walls in closed; in partnership only at rows 7, 9, 10 (the 'I'
             * tiles are floor) */
            for (int y = 1; y <= 10; y++) {
                bool wall = v == 1 || y == 7 || y == 9 || y == 10;
                CHECK(wall ? rows[y][11] == '#' && rows[y][12] == '#'
                           : rows[y][11] != '#' && rows[y][12] != '#');
            }
        }
        polis_env_destroy(env);
    }
}

/* The parameters in the shipped scenario files are the spec's table (§1.1, §1.6). */
static void test_variant_params(void)
{
    static const struct {
        const char *file;
        double p1;
        int cooldown, length, respawn;
    } want[3] = {{"commons_open.json", 0.0025, 2, 3, 4},
                 {"commons_closed.json", 0.001, 1, 4, 100},
                 {"commons_partnership.json", 0.001, 1, 4, 100}};
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", DIR, want[i].file);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f) continue;
        static char text[1 << 16];
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        cJSON *root = cJSON_Parse(text);
        CHECK(root != NULL);
        if (!root) continue;
        CHECK_EQ_INT(cJSON_GetObjectItem(root, "agents")->valueint, 7);
        CHECK_EQ_INT(cJSON_GetObjectItem(root, "max_steps")->valueint, 5000);
        cJSON *p = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "scripts"), 0),
                                       "params");
        CHECK(p != NULL);
        if (p) {
            CHECK(cJSON_GetObjectItem(p, "regrowth_p0")->valuedouble == 0.0);
            CHECK(cJSON_GetObjectItem(p, "regrowth_p1")->valuedouble == want[i].p1);
            CHECK(cJSON_GetObjectItem(p, "regrowth_p2")->valuedouble == 0.005);
            CHECK(cJSON_GetObjectItem(p, "regrowth_p3")->valuedouble == 0.025);
            CHECK(cJSON_GetObjectItem(p, "regrowth_radius")->valuedouble == 2.0);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "zap_cooldown")->valueint, want[i].cooldown);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "beam_length")->valueint, want[i].length);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "beam_radius")->valueint, 1);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "respawn_delay")->valueint, want[i].respawn);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "inner_spawns")->valueint, 2);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "end_min_steps")->valueint, 1000);
            CHECK_EQ_INT(cJSON_GetObjectItem(p, "end_interval")->valueint, 100);
            CHECK(cJSON_GetObjectItem(p, "end_probability")->valuedouble == 0.15);
        }
        cJSON_Delete(root);
        /* ... and they load: 8 actions, an 11x11 view and READY_TO_SHOOT */
        polis_env *env = env_from_file(want[i].file, NULL, NULL);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK_EQ_INT(polis_env_n_actions(env), 8);
        static const char *const names[8] = {"noop",       "forward",   "backward",   "step_left",
                                             "step_right", "turn_left", "turn_right", "fire_zap"};
        for (int a = 0; a < 8; a++) CHECK_EQ_STR(polis_env_action_name(env, a), names[a]);
        polis_obs_field of;
        CHECK_EQ_INT(polis_env_obs_field(env, 0, &of), POLIS_OK);
        CHECK_EQ_STR(of.name, "view");
        CHECK(of.ndim == 2 && of.shape[0] == 11 && of.shape[1] == 11);
        CHECK_EQ_INT(polis_env_obs_field(env, 1, &of), POLIS_OK);
        CHECK_EQ_STR(of.name, "READY_TO_SHOOT");
        polis_env_destroy(env);
    }
}

/* ---- regrowth ---------------------------------------------------------------------------- */

/* Blocks of 6x6 cells, each an empty apple cell ('a') at its centre with k live apples
 * ('A') within distance 1.5 of it; blocks are far enough apart (>= 4 cells between their
 * apples) that no cell counts another block's apples. Nothing eats: the only player sits
 * boxed in a corner. For each k the estimate of the per-step regrowth probability is
 * (regrowths) / (steps the targets spent empty). */
#define BLOCKS_X 13
#define BLOCKS_Y 8
static void test_regrowth_statistics(void)
{
    static const int class_k[5] = {0, 1, 2, 3, 5};
    static const int per_class[5] = {8, 24, 24, 24, 24};
    static const double class_p[5] = {0.0, 0.01, 0.03, 0.06, 0.06};
    static const int off[5][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}};
    const int w = BLOCKS_X * 6 + 2, h = BLOCKS_Y * 6 + 4;
    static char grid[64][128];
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++)
            grid[y][x] = (x == 0 || y == 0 || x == w - 1 || y == h - 1) ? 'W' : '.';
        grid[y][w] = '\0';
    }
    int tx[128], ty[128], tk[128], nt = 0;
    int c = 0, left = per_class[0];
    for (int b = 0; b < BLOCKS_X * BLOCKS_Y && c < 5; b++) {
        int x = 1 + (b % BLOCKS_X) * 6 + 3, y = 1 + (b / BLOCKS_X) * 6 + 3;
        grid[y][x] = 'a';
        for (int j = 0; j < class_k[c]; j++) grid[y + off[j][1]][x + off[j][0]] = 'A';
        tx[nt] = x, ty[nt] = y, tk[nt] = c, nt++;
        if (--left == 0 && ++c < 5) left = per_class[c];
    }
    CHECK_EQ_INT(nt, 104);
    /* the player, walled in at the bottom left, and the one outer spawn point beside it */
    grid[h - 2][1] = '0';
    grid[h - 2][2] = 'W';
    grid[h - 3][1] = 'W';
    grid[h - 2][w - 2] = 'P';
    size_t cap = (size_t)(h * (w + 2)) + 512;
    char *map = malloc(cap), *params = malloc(cap + 512);
    size_t len = 0;
    for (int y = 0; y < h; y++)
        len += (size_t)snprintf(map + len, cap - len, "%s%s", y ? "\\n" : "", grid[y]);
    snprintf(params, cap + 512,
             "{\"map\": \"%s\", \"regrowth_p0\": 0, \"regrowth_p1\": 0.01, \"regrowth_p2\": "
             "0.03, \"regrowth_p3\": 0.06, \"end_min_steps\": 1000000, \"view_ahead\": 1, "
             "\"view_behind\": 0, \"view_side\": 0}",
             map);
    char *json = scenario(1, 100000, params, false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    free(params);
    free(map);
    CHECK(env != NULL);
    if (!env) return;
    static event_log grows;
    subscribe(env, "commons.grow", &grows);
    const int steps = 300, episodes = 16;
    double events[5] = {0}, exposure[5] = {0};
    for (int ep = 0; ep < episodes; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, 1000 + (uint64_t)ep), POLIS_OK);
        grows.n = 0;
        for (int s = 0; s < steps; s++) {
            set_all(env, 0);
            if (polis_env_step(env) != POLIS_OK) {
                CHECK(!"step failed");
                break;
            }
        }
        int64_t regrew_at[128];
        for (int t = 0; t < nt; t++) regrew_at[t] = -1;
        for (int e = 0; e < grows.n; e++) {
            int x = grows.f[e][0], y = grows.f[e][1], t = 0;
            while (t < nt && !(tx[t] == x && ty[t] == y)) t++;
            CHECK(t < nt); /* only targets regrow */
            if (t < nt) {
                CHECK(regrew_at[t] < 0); /* and each only once: nothing eats it again */
                regrew_at[t] = grows.tick[e];
            }
        }
        for (int t = 0; t < nt; t++) {
            if (regrew_at[t] >= 0) {
                events[tk[t]] += 1;
                exposure[tk[t]] += (double)regrew_at[t] + 1;
            } else {
                exposure[tk[t]] += steps;
            }
        }
    }
    /* k = 0: never, whatever the seed */
    CHECK(events[0] == 0);
    for (int k = 1; k < 5; k++) {
        double phat = events[k] / exposure[k], p = class_p[k];
        double tol = 4 * sqrt(p * (1 - p) / exposure[k]);
        if (fabs(phat - p) > tol)
            fprintf(stderr, "k = %d: %g regrowths in %g empty steps: p = %g, expected %g +- %g\n",
                    class_k[k], events[k], exposure[k], phat, p, tol);
        CHECK(fabs(phat - p) <= tol);
        /* the expected count of targets regrown within `steps` steps */
        double want = per_class[k] * episodes * (1 - pow(1 - p, steps));
        double sd = sqrt(per_class[k] * episodes * (1 - pow(1 - p, steps)) * pow(1 - p, steps));
        CHECK(fabs(events[k] - want) <= 4 * sd + 1);
    }
    polis_env_destroy(env);
}

/* ---- the stochastic episode end ------------------------------------------------------------ */

/* min 20, interval 10, p 0.15, max_steps 200: the episode ends after 20 + 10 j steps with
 * probability 0.15 * 0.85^j (j < 18), and reaches 200 with probability 0.85^18. */
static void test_episode_ending(void)
{
    char *json = scenario(1, 200,
                          "{\"map\": \"WWWW\\nW0PW\\nWWWW\", \"end_min_steps\": 20, "
                          "\"end_interval\": 10, \"end_probability\": 0.15, \"view_ahead\": 0, "
                          "\"view_behind\": 0, \"view_side\": 0}",
                          false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    enum { N = 2000, J = 19 };
    int count[J] = {0}, bad = 0, capped_terminated = 0;
    double sum = 0;
    for (int ep = 0; ep < N; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, 77 + (uint64_t)ep), POLIS_OK);
        while (!polis_env_done(env)) {
            io->actions[0] = 0;
            if (polis_env_step(env) != POLIS_OK) {
                CHECK(!"step failed");
                break;
            }
        }
        int64_t len = polis_env_tick(env);
        sum += (double)len;
        if (len < 20 || len > 200 || len % 10 != 0) {
            bad++;
            continue;
        }
        count[(len - 20) / 10]++;
        if (len < 200) {
            CHECK(io->terminations[0] == 1 && io->truncations[0] == 0);
        } else {
            capped_terminated += io->terminations[0];
        }
    }
    CHECK_EQ_INT(bad, 0);
    double mean = 0, var = 0;
    for (int j = 0; j < J; j++) {
        double pj = j < J - 1 ? 0.15 * pow(0.85, j) : pow(0.85, J - 1);
        double len = 20 + 10 * j;
        mean += pj * len;
        var += pj * len * len;
        double sd = sqrt(N * pj * (1 - pj));
        if (fabs(count[j] - N * pj) > 4 * sd)
            fprintf(stderr, "episodes of %g steps: %d, expected %g +- %g\n", len, count[j], N * pj,
                    4 * sd);
        CHECK(fabs(count[j] - N * pj) <= 4 * sd);
    }
    var -= mean * mean;
    CHECK(fabs(sum / N - mean) <= 4 * sqrt(var / N));
    /* at the cap the last draw still happens: some capped episodes are terminations */
    CHECK(capped_terminated > 0 && capped_terminated < count[J - 1]);
    polis_env_destroy(env);

    /* The shipped parameters (min 1000, interval 100, p 0.15, cap 5000): the expected length
     * is sum_{j<40} 0.15 * 0.85^j * (1000 + 100 j) + 0.85^40 * 5000 = 1565.8 steps; the cap
     * is reached with probability 0.85^40 = 0.15%. */
    double e = 0;
    for (int j = 0; j <= 40; j++) {
        double pj = j < 40 ? 0.15 * pow(0.85, j) : pow(0.85, 40);
        e += pj * (1000 + 100 * j);
    }
    CHECK(fabs(e - 1565.8) < 0.05);
    CHECK(fabs(pow(0.85, 40) - 0.0015) < 0.0001);
}

/* ---- determinism -------------------------------------------------------------------------- */

/* Plays `steps` steps of the open scenario with actions from a fixed LCG; returns the state
 * hash. */
static uint64_t play(uint64_t seed, int steps, uint32_t lcg)
{
    polis_env *env = env_from_file("commons_open.json", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return 0;
    CHECK_EQ_INT(polis_env_reset(env, seed), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    for (int s = 0; s < steps && !polis_env_done(env); s++) {
        for (int32_t a = 0; a < io->n_agents; a++) {
            lcg = lcg * 1664525u + 1013904223u;
            io->actions[a] = (int32_t)((lcg >> 16) % 8);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    uint64_t h = polis_env_state_hash(env);
    polis_env_destroy(env);
    return h;
}

static void test_determinism(void)
{
    uint64_t a = play(11, 600, 1), b = play(11, 600, 1), c = play(12, 600, 1), d = play(11, 600, 2);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(a != d);
    /* Golden: any change to the rules, the RNG use or the observation changes this hash. */
    if (a != 0x0068e58f7c51b154ULL)
        fprintf(stderr, "golden hash: 0x%016llx\n", (unsigned long long)a);
    CHECK(a == 0x0068e58f7c51b154ULL);
}

/* ---- bad parameters ----------------------------------------------------------------------- */

static void expect_error(int agents, const char *params, const char *want)
{
    char *json = scenario(agents, 100, params, false);
    const char *msg = test_env_error(json);
    free(json);
    CHECK_CONTAINS(msg, want);
}

static void test_bad_params(void)
{
    expect_error(7, "{\"map\": \"nowhere\"}", "commons: ");
    expect_error(7, "{\"map\": \"nowhere\"}", "/commons.lua:");
    expect_error(7, "{\"map\": \"nowhere\"}",
                 "params.map: unknown map 'nowhere' (maps: open, closed, partnership, or an "
                 "ASCII map with rows separated by newlines)");
    expect_error(1, "{\"map\": \"WWW\\nWW\"}", "params.map: row 2 has 2 characters, row 1 has 3");
    expect_error(1, "{\"map\": \"WXW\\nW0W\"}",
                 "params.map: row 1, column 2: unknown character 'X'");
    expect_error(2, "{\"map\": \"WWWW\\nWPPW\\nWWWW\"}",
                 "params.map: 2 players start on the inner spawn points but the map has 0 'Q'");
    expect_error(3, "{\"map\": \"WWWW\\nWPPW\\nWWWW\", \"inner_spawns\": 0}",
                 "params.map: 3 players start on the outer spawn points and every respawn uses "
                 "them, but the map has 2 'P'");
    expect_error(1, "{\"map\": \"WWWW\\nW0QW\\nWWWW\"}",
                 "params.map: 0 players start on the outer spawn points and every respawn uses "
                 "them, but the map has 0 'P'");
    expect_error(2, "{\"map\": \"WWWW\\nW5PW\\nW0PW\"}",
                 "params.map: a spawn cell for agent 5, but the scenario has 2 agents");
    expect_error(2, "{\"map\": \"WWWW\\nW0PW\\nW0PW\"}",
                 "params.map: spawn cell '0' appears 2 times");
    expect_error(7, "{\"background\": \"9\"}",
                 "params.background: agent 9 is not an agent id (0..6)");
    expect_error(7, "{\"background\": \"2, x\"}",
                 "params.background: 'x' is neither an agent id, a range nor an agent name");
    expect_error(7, "{\"background\": \"3-1\"}", "params.background: range '3-1' is empty");
    expect_error(7, "{\"background\": \"1,0-2\"}", "params.background: agent 1 is listed twice");
    expect_error(7, "{\"background_bot\": \"zapper\"}",
                 "params.background_bot: 'zapper' is not free or pacifist");
    expect_error(7, "{\"background_driver\": \"python\"}",
                 "params.background_driver: 'python' is not game or host");
    expect_error(7, "{\"facing\": \"up\"}",
                 "params.facing: 'up' is not random, north, east, south or west");
    expect_error(7, "{\"facing\": \"n\"}",
                 "params.facing: 'n' is not random, north, east, south or west");
    expect_error(7, "{\"regrowth_p1\": 2}",
                 "scripts[0].params.regrowth_p1: expected number in [0, 1], got 2");
    expect_error(7, "{\"end_interval\": 0}", "scripts[0].params.end_interval: expected integer in");
    expect_error(7, "{\"beam_radius\": -1}",
                 "scripts[0].params.beam_radius: expected integer in [0, 16], got -1");
    expect_error(7, "{\"speed\": 3}", "scripts[0].params.speed: unknown key");
    expect_error(250, "{}", "commons supports at most 249 agents (u8 observation codes), got 250");
    /* background by name and by range are accepted */
    char *json = scenario(7, 100, "{\"background\": \"agent_6, 2-3\"}", false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    polis_env_destroy(env);
}

/* ---- views and text actions --------------------------------------------------------------- */

static char *render(polis_env *env, int32_t agent, const char *format)
{
    char *out = NULL;
    polis_status st = polis_env_render(env, agent, format, &out);
    if (st != POLIS_OK) fprintf(stderr, "render failed: %s\n", polis_env_error(env));
    CHECK_EQ_INT(st, POLIS_OK);
    return out;
}

static int32_t parse(polis_env *env, int32_t agent, const char *input, polis_status want)
{
    int32_t id = -1;
    polis_status st = polis_env_parse_action(env, agent, input, &id);
    if (st != want) fprintf(stderr, "parse '%s': %s\n", input, polis_env_error(env));
    CHECK_EQ_INT(st, want);
    return id;
}

static void test_views_and_parser(void)
{
    polis_env *env = env_from_file("commons_open.json", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    /* before any reset, "go to" needs the world; plain words do not */
    CHECK_EQ_INT(parse(env, 0, "turn left", POLIS_OK), 5);
    parse(env, 0, "go to [7, 10]", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "'go to' needs an episode: reset the env first");
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);

    char *text = render(env, 0, "text");
    CHECK_CONTAINS(text, "You are agent agent_0. Step 0. Positions are [row, column]; [0, 0] is "
                         "the top-left corner of the 18 x 24 map (rows x columns).");
    CHECK_CONTAINS(text, "You are at position [7, ");
    CHECK_CONTAINS(text, "Your zapping beam is ready.");
    CHECK_CONTAINS(text, "Observed an apple at position [");
    CHECK_CONTAINS(text, "This apple belongs to tree ");
    CHECK_CONTAINS(text, "This tree has ");
    CHECK_CONTAINS(text, "grass for apples growing on the observed map. The tree might have more "
                         "apples and grass on the global map.");
    polis_free(text);

    char *js = render(env, 0, "json");
    cJSON *root = cJSON_Parse(js);
    CHECK(root != NULL);
    cJSON *c = root ? cJSON_GetObjectItem(root, "commons") : NULL;
    CHECK(c != NULL);
    if (c) {
        cJSON *pos = cJSON_GetObjectItem(c, "position");
        CHECK(cJSON_GetArraySize(pos) == 2 && cJSON_GetArrayItem(pos, 0)->valueint == 7);
        CHECK_EQ_STR(cJSON_GetObjectItem(c, "role")->valuestring, "focal");
        cJSON *ep = cJSON_GetObjectItem(c, "episode");
        CHECK_EQ_INT(cJSON_GetObjectItem(ep, "apples")->valueint, 64);
        CHECK_EQ_INT(cJSON_GetObjectItem(ep, "apples_total")->valueint, 64);
        CHECK_EQ_INT(cJSON_GetObjectItem(ep, "patches")->valueint, 6);
        CHECK(cJSON_GetArraySize(
                  cJSON_GetObjectItem(cJSON_GetObjectItem(c, "observed"), "apples")) > 0);
        CHECK(cJSON_GetObjectItem(c, "ready_to_shoot")->valuedouble == 1.0);
    }
    cJSON_Delete(root);
    polis_free(js);

    char *m = render(env, 3, "metrics");
    CHECK_CONTAINS(m, "\"apples\":{\"remaining\":64,\"total\":64}");
    CHECK_CONTAINS(m, "\"patches\":{\"depleted\":0,\"total\":6}");
    CHECK_CONTAINS(m, "\"zaps\":{\"fired\":0,\"hits\":0,\"landed\":0}");
    CHECK_CONTAINS(m, "\"background_per_capita\":null");
    CHECK_CONTAINS(m, "\"population\":{\"background\":0,\"focal\":7}");
    cJSON *mj = cJSON_Parse(m);
    CHECK(cJSON_IsObject(mj));
    cJSON_Delete(mj);
    polis_free(m);

    CHECK_EQ_INT(parse(env, 0, "Turn_Left.", POLIS_OK), 5);
    CHECK_EQ_INT(parse(env, 0, "  turn right ", POLIS_OK), 6);
    CHECK_EQ_INT(parse(env, 0, "stay", POLIS_OK), 0);
    CHECK_EQ_INT(parse(env, 0, "ZAP", POLIS_OK), 7);
    CHECK_EQ_INT(parse(env, 0, "move forward", POLIS_OK), 1);
    CHECK_EQ_INT(parse(env, 0, "step-back", POLIS_OK), 2);
    CHECK_EQ_INT(parse(env, 0, "{\"action\": \"move\", \"direction\": \"left\"}", POLIS_OK), 3);
    CHECK_EQ_INT(parse(env, 0, "{\"action\": \"fire_zap\"}", POLIS_OK), 7);
    int32_t go = parse(env, 0, "go to [12, 12]", POLIS_OK);
    CHECK(go >= 1 && go <= 4);
    go = parse(env, 0, "{\"action\": \"go_to\", \"position\": [12, 12]}", POLIS_OK);
    CHECK(go >= 1 && go <= 4);
    parse(env, 0, "go to [0, 0]", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "position [0, 0] is a wall");
    parse(env, 0, "go to [99, 1]", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "position [99, 1] is outside the 18 x 24 map");
    parse(env, 0, "go to the orchard", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env),
                   "'go to' needs a position [row, column], got 'the orchard'");
    parse(env, 0, "turn around", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "cannot parse 'turn around'");
    parse(env, 0, "{\"action\": \"dance\"}", POLIS_ERR_SCRIPT);
    CHECK_CONTAINS(polis_env_error(env), "unknown action 'dance'");
    parse(env, 0, "fly away", POLIS_ERR_ACTION);
    polis_env_destroy(env);

    /* out of the game: agent 1 stands in front of agent 0, which zaps it */
    char *json = scenario(2, 100,
                          "{\"map\": \"WWWWW\\nW...W\\nW.1.W\\nW.0.W\\nWP..W\\nWWWWW\", "
                          "\"facing\": \"north\", \"respawn_delay\": 10}",
                          false);
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    io->actions[0] = 7, io->actions[1] = 0;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    text = render(env, 1, "text");
    CHECK_CONTAINS(text, "There are no observations: you were attacked by agent agent_0 and are "
                         "currently out of the game.");
    polis_free(text);
    text = render(env, 0, "text");
    CHECK_CONTAINS(text, "Changes since the last step:\nObserved that someone was attacked at "
                         "position [2, 2].");
    CHECK_CONTAINS(text, "Your zapping beam is recharging: it can fire again in 3 steps.");
    polis_free(text);
    js = render(env, 1, "json");
    CHECK_CONTAINS(js, "\"zapped_by\":\"agent_0\"");
    CHECK_CONTAINS(js, "\"on_map\":false");
    polis_free(js);
    io->actions[0] = 0;
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    text = render(env, 1, "text");
    CHECK_CONTAINS(text, "There are no observations: you are out of the game.");
    polis_free(text);
    CHECK_EQ_INT(parse(env, 1, "go to [1, 1]", POLIS_OK), 0);
    polis_env_destroy(env);
}

/* ---- metrics on the bus, focal and background, the bots as policies ------------------------ */

static void test_metrics_and_bots(void)
{
    test_log log = {0};
    polis_env *env = env_from_file("commons_open_visitors.json", NULL, &log);
    CHECK(env != NULL);
    if (!env) return;
    static event_log zaps, hits, depleted, apples, episode;
    subscribe(env, "commons.zap", &zaps);
    subscribe(env, "commons.hit", &hits);
    subscribe(env, "commons.depleted", &depleted);
    subscribe(env, "commons.apples", &apples);
    subscribe(env, "commons.episode", &episode);
    CHECK(polis_env_policy_find(env, "commons_free") >= 2);
    CHECK(polis_env_policy_find(env, "commons_pacifist") >= 2);
    CHECK_EQ_INT(polis_env_reset(env, 21), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    double ret[7] = {0};
    uint32_t lcg = 5;
    while (!polis_env_done(env)) {
        for (int a = 0; a < 7; a++) {
            lcg = lcg * 1664525u + 1013904223u;
            io->actions[a] = (int32_t)((lcg >> 16) % 8);
        }
        if (polis_env_step(env) != POLIS_OK) {
            CHECK(!"step failed");
            break;
        }
        for (int a = 0; a < 7; a++) ret[a] += io->rewards[a];
    }
    int64_t steps = polis_env_tick(env);
    CHECK(steps >= 1000 && steps <= 5000 && steps % 100 == 0);
    CHECK_EQ_INT(episode.n, 1);
    if (episode.n == 1) {
        /* steps ended apples zaps zap_hits zaps_landed patches depleted focal background */
        const int32_t *f = episode.f[0];
        CHECK_EQ_INT(f[0], steps);
        CHECK_EQ_INT(f[3], zaps.n);
        CHECK_EQ_INT(f[4], hits.n);
        int landed = 0;
        for (int i = 0; i < zaps.n; i++) landed += zaps.f[i][4] > 0;
        CHECK_EQ_INT(f[5], landed);
        CHECK(landed > 0);
        CHECK_EQ_INT(f[6], 6);
        CHECK_EQ_INT(f[7], depleted.n);
        CHECK_EQ_INT(f[8], 2);
        CHECK_EQ_INT(f[9], 5);
        double all = 0, focal = (ret[0] + ret[1]) / 2, bg = 0;
        for (int a = 0; a < 7; a++) all += ret[a] / 7;
        for (int a = 2; a < 7; a++) bg += ret[a] / 5;
        CHECK(fabs(episode.d[0][0] - all) < 1e-9);
        CHECK(fabs(episode.d[0][1] - focal) < 1e-9);
        CHECK(fabs(episode.d[0][2] - bg) < 1e-9);
        /* the greedy bots outharvest random focal players */
        CHECK(bg > focal);
        /* apples sampled every 100 steps; the last sample is the final count */
        CHECK_EQ_INT(apples.n, steps / 100);
        if (apples.n > 0) CHECK_EQ_INT(apples.f[apples.n - 1][0], f[2]);
    }
    CHECK_CONTAINS(log.text, "[commons] episode 1 ended after ");
    CHECK_CONTAINS(log.text, "focal ");
    CHECK_CONTAINS(log.text, "(agents 0-1), background ");
    CHECK_CONTAINS(log.text, "(agents 2-6, free bots)");
    polis_env_destroy(env);

    /* driven by the game, the host's actions for background players do not matter */
    uint64_t h[2];
    for (int run = 0; run < 2; run++) {
        env = env_from_file("commons_open_visitors.json", NULL, NULL);
        CHECK(env != NULL);
        if (!env) return;
        CHECK_EQ_INT(polis_env_reset(env, 4), POLIS_OK);
        io = polis_env_io(env);
        for (int s = 0; s < 300; s++) {
            for (int a = 0; a < 7; a++) io->actions[a] = a < 2 ? (s + a) % 8 : run ? 7 : 0;
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        h[run] = polis_env_state_hash(env);
        polis_env_destroy(env);
    }
    CHECK(h[0] == h[1]);

    /* driven by the host through polis_env_policy_act, the same bot plays the same game */
    uint64_t hh = 0;
    double bg_return = 0;
    env = env_from_file("commons_open_visitors.json",
                        "{\"scripts.commons.params.background_driver\": \"host\"}", NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 4), POLIS_OK);
    io = polis_env_io(env);
    int32_t bot = polis_env_policy_find(env, "commons_free");
    static const int32_t bg[5] = {2, 3, 4, 5, 6};
    for (int s = 0; s < 300; s++) {
        for (int a = 0; a < 2; a++) io->actions[a] = (s + a) % 8;
        CHECK_EQ_INT(polis_env_policy_act(env, bot, bg, 5), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        for (int a = 2; a < 7; a++) bg_return += io->rewards[a];
    }
    hh = polis_env_state_hash(env);
    CHECK(bg_return > 0);
    /* the bots see the state at the start of the step either way: the same episode */
    CHECK(hh == h[0]);
    polis_env_destroy(env);
}

/* ---- a failing allocator ------------------------------------------------------------------ */

typedef struct failing {
    long calls, fail_at;
    long long live;
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    failing *f = ud;
    if (nsize == 0) {
        if (ptr) f->live -= (long long)osize;
        free(ptr);
        return NULL;
    }
    if (++f->calls == f->fail_at) return NULL;
    void *p = realloc(ptr, nsize);
    if (p) f->live += (long long)nsize - (ptr ? (long long)osize : 0);
    return p;
}

/* The Nth allocation of create (modules, map, registration), reset and three steps (moves,
 * eating, a zap, the bot's distance field) fails, for every N: each run ends in a clean
 * POLIS_ERR_NOMEM and frees everything; after a failed reset or step the env resets and
 * steps again. Returns the allocations a run makes without failures. */
static long alloc_run(long fail_at, int *failed)
{
    static const char params[] =
        "{\"map\": \"WWWWWW\\nWA.A.W\\nW.01.W\\nWPAA.W\\nWWWWWW\", \"facing\": \"north\", "
        "\"background\": \"1\", \"regrowth_p3\": 1, \"view_ahead\": 2, \"view_side\": 1}";
    char *json = scenario(2, 50, params, false);
    failing f = {.fail_at = fail_at};
    polis_options o = test_options(NULL, NULL);
    o.alloc = failing_alloc;
    o.alloc_ud = &f;
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
    free(json);
    if (st != POLIS_OK) {
        (*failed)++;
        if (st != POLIS_ERR_NOMEM)
            fprintf(stderr, "fail_at %ld: create: %s\n", fail_at, err.message);
        CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
    } else {
        const polis_io *io = polis_env_io(env);
        for (int round = 0; round < 2; round++) {
            st = polis_env_reset(env, 9);
            for (int t = 0; st == POLIS_OK && t < 3; t++) {
                io->actions[0] = t == 0 ? 7 : 1;
                io->actions[1] = 0;
                st = polis_env_step(env);
            }
            if (st == POLIS_OK) break;
            (*failed)++;
            if (st != POLIS_ERR_NOMEM)
                fprintf(stderr, "fail_at %ld: %s\n", fail_at, polis_env_error(env));
            CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
        }
        CHECK_EQ_INT(st, POLIS_OK);
        polis_env_destroy(env);
    }
    if (f.live != 0) fprintf(stderr, "fail_at %ld: %lld bytes leaked\n", fail_at, f.live);
    CHECK_EQ_INT(f.live, 0);
    return f.calls;
}

static void test_failing_allocator(void)
{
    int failed = 0;
    long total = alloc_run(0, &failed);
    CHECK_EQ_INT(failed, 0);
    CHECK(total > 1000);
    for (long n = 1; n <= total; n++) alloc_run(n, &failed);
    /* Lua retries a refused allocation after a full collection, so most single failures
     * inside a Lua state are absorbed; the rest must have failed cleanly. */
    CHECK(failed >= 100);
}

/* ---- plans -------------------------------------------------------------------------------- */

/* Runs agent's plan (the other agents do noop) until it ends or `max` ticks passed; returns
 * the ticks stepped, the final state in *state and its reason in why. */
static int run_plan(polis_env *env, int32_t agent, int max, polis_plan_state *state, char *why,
                    size_t cap)
{
    const polis_io *io = polis_env_io(env);
    why[0] = '\0';
    for (int t = 0; t <= max; t++) {
        int32_t action = 0;
        const char *r = NULL;
        if (polis_env_plan_next(env, agent, state, &action, &r) != POLIS_OK) {
            fprintf(stderr, "plan_next: %s\n", polis_env_error(env));
            *state = POLIS_PLAN_IMPOSSIBLE;
            return -1;
        }
        if (*state != POLIS_PLAN_RUNNING) {
            snprintf(why, cap, "%s", r ? r : "");
            return t;
        }
        set_all(env, 0);
        io->actions[agent] = action;
        if (polis_env_step(env) != POLIS_OK) return -1;
    }
    return max + 1;
}

/* HARVEST and GOTO (Lua macros) on a small map: exact path lengths, the counted apples, the
 * refusals, and the endings when nothing is left or no way exists. */
static void test_plans(void)
{
    /* (x, y): apple (2, 1); player 0 at (1, 3), player 1 at (4, 3); (5, 1) is walled in */
    char *json =
        scenario(2, 200,
                 "{\"map\": \"WWWWWWW\\nW.A.W.W\\nW....WW\\nW0..1.W\\nWP....W\\nWWWWWWW\", "
                 "\"facing\": \"north\", \"shuffle_order\": false, "
                 "\"end_min_steps\": 1000000, \"regrowth_p1\": 0, \"regrowth_p2\": 0, "
                 "\"regrowth_p3\": 0}",
                 false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_macros(env), 5);
    CHECK_EQ_STR(polis_env_macro_usage(env, 0), "HARVEST [<n>]");
    CHECK_EQ_STR(polis_env_macro_usage(env, 1), "GOTO <row> <column>");
    CHECK_EQ_STR(polis_env_macro_usage(env, 2), "IMMOBILIZE <player> [<row> <column>]");
    CHECK_EQ_STR(polis_env_macro_usage(env, 3), "STAY [<ticks>]");
    CHECK_EQ_STR(polis_env_macro_usage(env, 4), "EXPLORE <row> <column>");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_plan_state st;
    char why[256];

    CHECK_EQ_INT(polis_env_plan_start(env, 0, "HARVEST 1"), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 0, 20, &st, why, sizeof why), 3); /* 1 right, 2 up */
    CHECK_EQ_INT(st, POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "ate 1 apple");
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "harvest"), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 0, 100, &st, why, sizeof why), 29); /* 30 checks, 29 steps */
    CHECK_EQ_INT(st, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(why, "no apple left on the map for 30 ticks (ate 0 of 1)");

    CHECK_EQ_INT(polis_env_plan_start(env, 1, "GOTO 4 5"), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 1, 20, &st, why, sizeof why), 2);
    CHECK_EQ_INT(st, POLIS_PLAN_DONE);
    CHECK_EQ_STR(why, "arrived at [4, 5]");
    CHECK_EQ_INT(polis_env_plan_start(env, 1, "GOTO 1 5"), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 1, 100, &st, why, sizeof why), 29);
    CHECK_EQ_INT(st, POLIS_PLAN_IMPOSSIBLE);
    CHECK_EQ_STR(why, "no way from [4, 5] to [1, 5] now (walls or players block it) for 30 ticks");

    const struct {
        const char *command, *message;
    } bad[] = {
        {"HARVEST 0", "HARVEST takes a number of apples from 1 to 1000000, got '0'"},
        {"HARVEST lots", "HARVEST takes a number of apples from 1 to 1000000, got 'lots'"},
        {"GOTO", "GOTO needs a position: <row> <column>, got ''"},
        {"GOTO north", "GOTO needs a position: <row> <column>, got 'north'"},
        {"GOTO 0 0", "position [0, 0] is a wall"},
        {"GOTO 9 2", "position [9, 2] is outside the 6 x 7 map (rows x columns)"},
        {"IMMOBILIZE", "IMMOBILIZE needs a player name (players: agent_0, agent_1)"},
        {"IMMOBILIZE bob", "IMMOBILIZE: no player named 'bob' (players: agent_0, agent_1)"},
        {"IMMOBILIZE agent_0", "IMMOBILIZE: a player cannot immobilize itself"},
        {"IMMOBILIZE agent_1 at north", "IMMOBILIZE: 'north' is not a position <row> <column>"},
        {"IMMOBILIZE agent_1 9 9", "position [9, 9] is outside the 6 x 7 map"},
        {"STAY 0", "STAY takes a number of ticks from 1 to 1000000, got '0'"},
        {"STAY long", "STAY takes a number of ticks from 1 to 1000000, got 'long'"},
        {"EXPLORE", "EXPLORE needs a position: <row> <column>, got ''"},
        {"EXPLORE 0 0", "position [0, 0] is a wall"},
        {"EXPLORE 2 9", "position [2, 9] is outside the 6 x 7 map (rows x columns)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(polis_env_plan_start(env, 0, bad[i].command), POLIS_ERR_ACTION);
        CHECK_CONTAINS(polis_env_error(env), bad[i].message);
        CHECK(polis_env_plan_command(env, 0) == NULL);
    }
    /* "GOTO (2, 3)" is the text view's own notation; player 0 stands on (x, y) = (2, 1) */
    CHECK_EQ_INT(polis_env_plan_start(env, 0, "GOTO (2, 3)"), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 0, 20, &st, why, sizeof why), 2);
    CHECK_EQ_STR(why, "arrived at [2, 3]");
    polis_env_destroy(env);
}

/* The Melting Pot LLM study's high-level actions (IMMOBILIZE, STAY, EXPLORE), the welfare
 * statistics, the bots' cadence (bot_every) and the end when the apples run out. */
/* Starts `command` for player 0 and runs it: it must end after `steps` steps in `state`,
 * saying `want`. */
static void check_plan(polis_env *env, const char *command, int steps, polis_plan_state state,
                       const char *want)
{
    polis_plan_state st;
    char why[256];
    CHECK_EQ_INT(polis_env_plan_start(env, 0, command), POLIS_OK);
    CHECK_EQ_INT(run_plan(env, 0, 20, &st, why, sizeof why), steps);
    CHECK_EQ_INT(st, state);
    CHECK_EQ_STR(why, want);
}

static void test_study_plans(void)
{
    /* player 0 at [3, 1] and player 1 at [3, 4], both facing north; one apple at [1, 2] */
    char *json =
        scenario(2, 200,
                 "{\"map\": \"WWWWWWW\\nW.A.W.W\\nW....WW\\nW0..1.W\\nWP....W\\nWWWWWWW\", "
                 "\"facing\": \"north\", \"shuffle_order\": false, \"respawn_delay\": 4, "
                 "\"end_min_steps\": 1000000, \"regrowth_p1\": 0, \"regrowth_p2\": 0, "
                 "\"regrowth_p3\": 0}",
                 false);
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    /* turn right (east): agent_1 is 3 cells ahead, in the beam; fire; the hit ends it */
    check_plan(env, "IMMOBILIZE agent_1 at [3, 4]", 2, POLIS_PLAN_DONE, "immobilized agent_1");
    /* agent_1 is off the map now: chasing it is impossible */
    check_plan(env, "immobilize AGENT_1", 0, POLIS_PLAN_IMPOSSIBLE, "agent_1 is out of the game");
    char *m = render(env, 0, "metrics");
    CHECK_CONTAINS(m, "\"focal\":{\"last_apple_ratio\":null,\"last_apples\":0,\"zapped\":1,"
                      "\"zaps\":1,\"zaps_landed\":1}");
    CHECK_CONTAINS(m, "\"background\":null");
    CHECK_CONTAINS(m,
                   "{\"agent\":\"agent_0\",\"last_apple_approach\":null,\"last_apple_near\":null,"
                   "\"last_apples\":0,\"return\":0,\"role\":\"focal\",\"zapped\":0,"
                   "\"zapped_by\":{},\"zaps\":1,\"zaps_landed\":1}");
    CHECK_CONTAINS(m, "\"zapped\":1,\"zapped_by\":{\"agent_0\":1},\"zaps\":0");
    CHECK_CONTAINS(m, "\"apples_mean\":1");
    polis_free(m);

    check_plan(env, "STAY 3", 3, POLIS_PLAN_DONE, "stayed 3 ticks");
    check_plan(env, "stay", 1, POLIS_PLAN_DONE, "stayed 1 tick");
    check_plan(env, "EXPLORE 2 3", 3, POLIS_PLAN_DONE, "explored [2, 3]: 1 apple in view");
    /* the last apple of its patch, eaten: a last apple in the welfare statistics */
    check_plan(env, "HARVEST", 2, POLIS_PLAN_DONE, "ate 1 apple");
    m = render(env, 0, "metrics");
    CHECK_CONTAINS(m, "\"focal\":{\"last_apple_ratio\":null,\"last_apples\":1,");
    polis_free(m);

    polis_env_destroy(env);

    /* bot_every 2: the game's bot (agent 1) moves on steps 0, 2, 4 and waits on 1, 3; the
     * episode ends (everyone terminated) once its last apple is eaten */
    json = scenario(2, 200,
                    "{\"map\": \"WWWWWWWWW\\nW0.....PW\\nW......1W\\nWA......W\\nWWWWWWWWW\", "
                    "\"facing\": \"west\", \"shuffle_order\": false, \"background\": \"1\", "
                    "\"background_bot\": \"pacifist\", \"bot_every\": 2, "
                    "\"end_when_no_apples\": true, \"end_min_steps\": 1000000, "
                    "\"regrowth_p1\": 0, \"regrowth_p2\": 0, \"regrowth_p3\": 0}",
                    false);
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    const char *want[] = {"[2,6]", "[2,6]", "[2,5]", "[2,5]", "[2,4]"};
    for (int t = 0; t < 5; t++) {
        set_all(env, 0);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        char *j = render(env, 1, "json");
        char pos[64];
        snprintf(pos, sizeof pos, "\"position\":%s", want[t]);
        CHECK_CONTAINS(j, pos);
        polis_free(j);
    }
    CHECK(!io->terminations[0]);
    int steps = 5;
    while (!polis_env_done(env) && steps < 100) {
        set_all(env, 0);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        steps++;
    }
    CHECK(polis_env_done(env));
    CHECK(io->terminations[0] && io->terminations[1]);
    m = render(env, 0, "metrics");
    CHECK_CONTAINS(m, "\"remaining\":0");
    CHECK_CONTAINS(m, "\"background\":{\"last_apple_ratio\":null,\"last_apples\":1,");
    polis_free(m);
    polis_env_destroy(env);

    /* study_metrics: player 0 steps away from the only apple (the last of its tree), then
     * walks to it and eats it: 5 steps began with it nearest, 4 got closer */
    json = scenario(1, 200,
                    "{\"map\": \"WWWWWWW\\nW.0..AW\\nWP....W\\nWWWWWWW\", \"facing\": \"east\", "
                    "\"study_metrics\": true, \"end_min_steps\": 1000000, \"regrowth_p1\": 0, "
                    "\"regrowth_p2\": 0, \"regrowth_p3\": 0}",
                    false);
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    io = polis_env_io(env);
    const int32_t walk[] = {2, 1, 1, 1, 1, 1}; /* backward, then forward (the last: no apple) */
    for (size_t t = 0; t < sizeof walk / sizeof walk[0]; t++) {
        io->actions[0] = walk[t];
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    m = render(env, 0, "metrics");
    CHECK_CONTAINS(m, "\"last_apple_approach\":4,\"last_apple_near\":5,\"last_apples\":1");
    CHECK_CONTAINS(m, "\"focal\":{\"last_apple_approach\":4,\"last_apple_near\":5,"
                      "\"last_apple_ratio\":0.8,");
    polis_free(m);
    polis_env_destroy(env);
}

/* ---- the scene's apples layer (recordings, the viewer) ------------------------------------- */

/* commons_open stepped to `ticks` with the actions of `seed`, reading the scene at every tick
 * where `every` divides it (0: never before the end) and once at the end; the apples layer
 * then. The scene function rewrites only the apples marked since its last call, so a reader
 * that skips ticks must see what one that reads every tick sees, and what the first (fresh,
 * fully written) scene of a new env sees. */
static void apples_layer(int ticks, int every, uint64_t seed, int32_t *out, size_t n)
{
    polis_env *env = env_from_file("commons_open.json", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    const polis_io *io = polis_env_io(env);
    const polis_scene *sc = NULL;
    for (int t = 1; t <= ticks; t++) {
        for (int32_t a = 0; a < io->n_agents; a++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            io->actions[a] = (int32_t)((seed >> 33) % (uint64_t)io->n_actions);
        }
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        if (every > 0 && t % every == 0) CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    }
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    int32_t layer = -1;
    for (int32_t l = 0; sc && l < sc->n_layers; l++)
        if (strcmp(polis_env_scene_layer_name(env, l), "apples") == 0) layer = l;
    CHECK(sc && layer >= 0 && (size_t)sc->width * (size_t)sc->height == n);
    if (sc && layer >= 0 && (size_t)sc->width * (size_t)sc->height == n)
        memcpy(out, sc->tiles + (size_t)layer * n, n * sizeof *out);
    polis_env_destroy(env);
}

static void test_scene_apples(void)
{
    enum { CELLS = 24 * 18 };
    static const int TICKS[] = {40, 157, 400};
    for (size_t k = 0; k < sizeof TICKS / sizeof TICKS[0]; k++) {
        int32_t fresh[CELLS], every[CELLS], skipping[CELLS];
        apples_layer(TICKS[k], 0, 99, fresh, CELLS);
        apples_layer(TICKS[k], 1, 99, every, CELLS);
        apples_layer(TICKS[k], 7, 99, skipping, CELLS);
        CHECK(memcmp(fresh, every, sizeof fresh) == 0);
        CHECK(memcmp(fresh, skipping, sizeof fresh) == 0);
        /* the episode moved: the apple cells (all live at the start) show two kinds or more */
        int32_t first = -1;
        bool mixed = false;
        for (int c = 0; c < CELLS; c++) {
            if (fresh[c] < 0) continue;
            if (first < 0) first = fresh[c];
            mixed = mixed || fresh[c] != first;
        }
        CHECK(first >= 0);
        if (k == 2) CHECK(mixed);
    }
}

/* ---- who sees whom (docs/visibility.md) ----------------------------------------------------- */

/* A scenario string with a "visibility" list (NULL: none). */
static char *vis_scenario(const char *rules)
{
    const char *params =
        "{\"map\": \"WWWWWWWW\\nW0..A1.W\\nW......W\\nWP.....W\\nWWWWWWWW\", "
        "\"facing\": \"east\", \"shuffle_order\": false, \"end_min_steps\": 1000000, "
        "\"regrowth_p1\": 0, \"regrowth_p2\": 0, \"regrowth_p3\": 0}";
    char *base = scenario(2, 100, params, false);
    if (!rules) return base;
    size_t n = strlen(base) + strlen(rules) + 32;
    char *s = malloc(n);
    snprintf(s, n, "%.*s, \"visibility\": %s}", (int)(strlen(base) - 1), base, rules);
    free(base);
    return s;
}

static int agent_x(polis_env *env, int32_t a)
{
    const polis_scene *s = NULL;
    CHECK(polis_env_scene_get(env, &s) == POLIS_OK);
    return s ? s->agents[a].x : -1;
}

/* Player 1 (hidden from player 0 from tick 1) walks west along row 1, eats the apple at x 4,
 * and is stopped by player 0 at x 1; then player 0 walks into it and is stopped too. The world
 * is the plain one; player 0's view, text and JSON leave player 1 out from tick 1 on. */
static void test_visibility(void)
{
    char *a = vis_scenario(NULL), *b = vis_scenario("[{\"observers\": [0], \"hidden\": "
                                                    "[\"agent_1\"], \"from\": 1}]");
    polis_env *plain = test_env(a, NULL, NULL), *hid = test_env(b, NULL, NULL);
    free(a);
    free(b);
    CHECK(plain && hid);
    if (!plain || !hid) return;
    static const char *const STEPS[][2] = {{NULL, "backward"},
                                           {NULL, "backward"},
                                           {NULL, "backward"},
                                           {NULL, "backward"},
                                           {"forward", NULL}};
    polis_obs_field f;
    CHECK(polis_env_reset(plain, 1) == POLIS_OK && polis_env_reset(hid, 1) == POLIS_OK);
    int x1[6], x0[6];
    float r1 = 0;
    for (int t = 0; t <= 5; t++) {
        if (t > 0) {
            CHECK(test_step_names(plain, STEPS[t - 1]) == POLIS_OK);
            CHECK(test_step_names(hid, STEPS[t - 1]) == POLIS_OK);
            CHECK(polis_env_io(plain)->rewards[1] == polis_env_io(hid)->rewards[1]);
            r1 += polis_env_io(hid)->rewards[1];
        }
        x0[t] = agent_x(hid, 0);
        x1[t] = agent_x(hid, 1);
        CHECK_EQ_INT(x0[t], agent_x(plain, 0));
        CHECK_EQ_INT(x1[t], agent_x(plain, 1));
        const uint8_t *pv = test_obs_field(plain, 0, "view", &f);
        const uint8_t *hv = test_obs_field(hid, 0, "view", &f);
        int in_plain = 0, in_hidden = 0, other = 0;
        for (int32_t i = 0; i < f.shape[0] * f.shape[1]; i++) {
            in_plain += pv[i] == 8;
            in_hidden += hv[i] == 8;
            other += pv[i] != 8 && pv[i] != hv[i];
        }
        CHECK_EQ_INT(in_plain, 1);
        CHECK_EQ_INT(in_hidden, t == 0 ? 1 : 0);
        CHECK_EQ_INT(other, 0);
        /* player 1 still sees player 0 */
        CHECK(memcmp(test_obs_field(plain, 1, "view", &f), test_obs_field(hid, 1, "view", &f),
                     (size_t)f.nbytes) == 0);
    }
    CHECK(r1 == 1.0f);      /* it ate the apple */
    CHECK_EQ_INT(x1[4], 2); /* stopped by player 0 at x 1 */
    CHECK_EQ_INT(x0[5], 1); /* and player 0 by it */
    char *pt = render(plain, 0, "text"), *ht = render(hid, 0, "text");
    char *pj = render(plain, 0, "json"), *hj = render(hid, 0, "json");
    CHECK(pt && strstr(pt, "agent_1") && ht && !strstr(ht, "agent_1"));
    CHECK(pj && strstr(pj, "agent_1") && hj && !strstr(hj, "agent_1"));
    free(pt);
    free(ht);
    free(pj);
    free(hj);
    polis_env_destroy(plain);
    polis_env_destroy(hid);
    /* a bad rule names its JSON path */
    b = vis_scenario("[{\"observers\": [0], \"hidden\": [1], \"until\": \"soon\"}]");
    CHECK_EQ_STR(test_env_error(b), "<string>: visibility[0]: until: expected a tick (an "
                                    "integer >= 0), got \"soon\"");
    free(b);
}

int main(void)
{
    test_visibility();
    test_variants();
    test_variant_params();
    test_regrowth_statistics();
    test_episode_ending();
    test_determinism();
    test_bad_params();
    test_views_and_parser();
    test_metrics_and_bots();
    test_failing_allocator();
    test_plans();
    test_study_plans();
    test_scene_apples();
    CHECK_DONE();
}
