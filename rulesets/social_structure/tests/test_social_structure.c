/* The Social Structure mini-game (scenario files for society + social): for each of the six
 * structures on the Easy and Hard tasks, the layout, the whole graph at reset (the
 * social_state observation against the structure written out here independently of
 * make_scenarios.py), shared vision, the paper's capacities and values (Table 7), the
 * Dynamic schedule's timing in the graph and in the reward split of every step, and golden
 * trajectory hashes. */
#include <math.h>

#include "check.h"
#include "testutil.h"

#define DIR POLIS_SOURCE_DIR "/rulesets/social_structure/"
#define P 8

static const int TEAM_A[4] = {0, 1, 4, 5}, TEAM_B[4] = {2, 3, 6, 7};
static const int TRADE_C[4] = {0, 1, 2, 3}, TRADE_M[4] = {4, 5, 6, 7};

typedef enum { ISOLATION, CONNECTION, IND_GROUP, OVLP_GROUP, INEQUALITY, DYNAMIC } structure;

static const char *const FILES[6] = {"isolation",  "connection", "ind_group",
                                     "ovlp_group", "inequality", "dynamic"};

/* The expected graph: share[i][j] = i shares its map with j; weight[g][a] > 0 for members. */
typedef struct graph {
    int share[P][P];
    int G;
    double weight[4][P];
} graph;

static bool in(const int *set, int a)
{
    for (int i = 0; i < 4; i++)
        if (set[i] == a) return true;
    return false;
}

static void add_group(graph *g, const int *set, const double *w)
{
    for (int i = 0; i < 4; i++) g->weight[g->G][set[i]] = w ? w[i] : 1.0;
    g->G++;
}

/* The structure in force at a given step counter (only Dynamic changes). */
static graph expected(structure s, int step)
{
    static const double favour_a[4] = {0.85, 0.05, 0.05, 0.05},
                        favour_b[4] = {0.05, 0.05, 0.85, 0.05};
    graph g;
    memset(&g, 0, sizeof g);
    if (s == DYNAMIC) s = step < 30 ? INEQUALITY : step < 60 ? IND_GROUP : OVLP_GROUP;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            if (i == j) continue;
            bool teams = (in(TEAM_A, i) && in(TEAM_A, j)) || (in(TEAM_B, i) && in(TEAM_B, j));
            bool trades = (in(TRADE_C, i) && in(TRADE_C, j)) || (in(TRADE_M, i) && in(TRADE_M, j));
            g.share[i][j] = s == IND_GROUP || (s == INEQUALITY && teams) ||
                            ((s == CONNECTION || s == OVLP_GROUP) && (teams || trades));
        }
    if (s == IND_GROUP && step < 0) { /* the static file: group 0 is team B */
        add_group(&g, TEAM_B, NULL);
        add_group(&g, TEAM_A, NULL);
    } else if (s == IND_GROUP) { /* Dynamic's snapshot at 30, with two empty groups */
        add_group(&g, TEAM_A, NULL);
        add_group(&g, TEAM_B, NULL);
        g.G += 2;
    } else if (s == OVLP_GROUP) {
        add_group(&g, TEAM_A, NULL);
        add_group(&g, TEAM_B, NULL);
        add_group(&g, TRADE_C, NULL);
        add_group(&g, TRADE_M, NULL);
    } else if (s == INEQUALITY) {
        add_group(&g, TEAM_A, favour_a);
        add_group(&g, TEAM_B, favour_b);
        if (step >= 0) g.G += 2; /* Dynamic starts with two empty groups */
    }
    return g;
}

static polis_env *open_file(const char *name, bool hard)
{
    char path[512];
    snprintf(path, sizeof path, DIR "%s%s.json", name, hard ? "_hard" : "");
    return test_env_file(path, NULL);
}

static const void *field(polis_env *env, int32_t agent, const char *name, polis_obs_field *out)
{
    return test_obs_field(env, agent, name, out);
}

/* social_state ([to][from]) equals the expected graph, entry by entry. */
static int graph_matches(polis_env *env, const graph *g)
{
    polis_obs_field f;
    const int8_t *s = field(env, 3, "social_state", &f);
    int N = f.shape[0];
    if (N != P + g->G) {
        fprintf(stderr, "social_state is %d x %d, expected %d nodes\n", N, N, P + g->G);
        return 0;
    }
    for (int to = 0; to < N; to++)
        for (int from = 0; from < N; from++) {
            int want = 0;
            if (from < P && to < P) want = g->share[from][to];
            if (from >= P && to < P) want = g->weight[from - P][to] > 0;
            if (s[to * N + from] != want) {
                fprintf(stderr, "social_state[%d][%d] = %d, expected %d\n", to, from,
                        s[to * N + from], want);
                return 0;
            }
        }
    return 1;
}

/* split_score_to_group by hand: an agent in K groups gives r / K to each; a group pays its
 * pot by weights; an agent in no group keeps its own. */
static void split(const graph *g, const float *raw, double *out)
{
    double pot[4] = {0};
    for (int a = 0; a < P; a++) {
        int k = 0;
        for (int q = 0; q < g->G; q++) k += g->weight[q][a] > 0;
        out[a] = k ? 0.0 : raw[a];
        for (int q = 0; q < g->G; q++)
            if (g->weight[q][a] > 0) pot[q] += raw[a] / k;
    }
    for (int q = 0; q < g->G; q++) {
        double sum = 0;
        for (int a = 0; a < P; a++) sum += g->weight[q][a];
        for (int a = 0; a < P; a++)
            if (sum > 0) out[a] += pot[q] * g->weight[q][a] / sum;
    }
}

static void test_structures(bool hard)
{
    static const int nodes[6] = {8, 8, 10, 12, 10, 12};
    for (int s = 0; s < 6; s++) {
        polis_env *env = open_file(FILES[s], hard);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK_EQ_INT(polis_env_n_actions(env), hard ? 18 : 12); /* 6 + 2R, physical only */
        CHECK_EQ_INT(polis_env_max_steps(env), 200);
        CHECK_EQ_STR(polis_env_agent_name(env, 4), "miner_4");
        polis_obs_field f;
        CHECK(field(env, 0, "social_state", &f) != NULL);
        CHECK_EQ_INT(f.shape[0], nodes[s]);
        CHECK(field(env, 0, "grid", &f) != NULL);
        CHECK_EQ_INT(f.shape[1], hard ? 15 : 7); /* map-sized view */
        CHECK_EQ_INT(f.shape[0], hard ? 14 : 8); /* 2 + 2R */
        polis_env_reset(env, 5);
        graph g = expected((structure)s, s == DYNAMIC ? 0 : -1);
        CHECK(graph_matches(env, &g));
        if (!graph_matches(env, &g)) fprintf(stderr, "  in %s%s\n", FILES[s], hard ? "_hard" : "");
        polis_env_destroy(env);
    }
}

/* Sharing reaches vision: in Connection every sharer of agent 0 (1, 4 and 5) shows in its
 * agents channel, wherever it stands on the 15 x 15 map (fov 2). */
static void test_vision(void)
{
    polis_env *env = open_file("connection", true);
    CHECK(env != NULL);
    if (!env) return;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        polis_env_reset(env, seed);
        polis_obs_field f;
        const int16_t *grid = field(env, 0, "grid", &f);
        int seen[P + 1] = {0};
        for (int i = 0; i < f.shape[1] * f.shape[2]; i++)
            if (grid[i] > 0 && grid[i] <= P) seen[grid[i]] = 1;
        CHECK(seen[1] && seen[2] && seen[5] && seen[6]); /* agents 0, 1, 4, 5 (id + 1) */
    }
    polis_env_destroy(env);
}

static void test_tasks(void)
{
    polis_env *env = open_file("isolation", false);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    char *text = NULL;
    polis_env_render(env, 0, "text", &text);
    CHECK_CONTAINS(text, "Value of one unit to you: wood 1, stone 1, hammer 5.\nCapacity: "
                         "hammer 1.\n");
    polis_free(text);
    polis_env_render(env, 5, "text", &text);
    CHECK_CONTAINS(text, "Value of one unit to you: wood 1, stone 1, hammer 10.\nCapacity: "
                         "wood 0, stone 0.\n");
    polis_free(text);
    polis_env_destroy(env);
    env = open_file("isolation", true);
    CHECK(env != NULL);
    if (!env) return;
    polis_env_reset(env, 1);
    polis_env_render(env, 0, "text", &text);
    CHECK_CONTAINS(text, "Value of one unit to you: wood 1, stone 1, hammer 5, coal 10, torch "
                         "30, iron 20.\nCapacity: hammer 1, coal 0.\n");
    polis_free(text);
    polis_env_render(env, 7, "text", &text);
    CHECK_CONTAINS(text, "Value of one unit to you: wood 1, stone 1, hammer 5, coal 10, torch "
                         "30, iron 20.\nCapacity: stone 0, torch 1, iron 0.\n");
    polis_free(text);
    polis_env_destroy(env);
}

/* A random policy over the masks (a PCG32 stream of its own); per step: the graph after the
 * step and the reward split of the step against the structure of that step (Dynamic:
 * Inequality for steps 0-29, Independent groups for 30-59, Overlapping after; a snapshot
 * applies after the sharing of the step that reaches its key). Counts steps with a raw
 * reward at the switches. */
static uint64_t run(polis_env *env, structure s, uint64_t seed, int episodes, long *illegal,
                    int *boundary)
{
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, seed, 0x73747275ULL);
    uint64_t h = 0;
    for (int e = 0; e < episodes; e++) {
        polis_env_reset(env, seed + (uint64_t)e);
        while (!polis_env_done(env)) {
            int t = (int)polis_env_tick(env);
            for (int32_t a = 0; a < io->n_agents; a++) {
                const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
                int32_t legal[64], n = 0;
                for (int32_t k = 0; k < io->n_actions && n < 64; k++)
                    if (m[k]) legal[n++] = k;
                io->actions[a] = legal[polis_rng_below(&r, (uint32_t)n)];
            }
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "step: %s\n", polis_env_error(env));
                return 0;
            }
            const float *raw = polis_env_reward_components(env);
            graph g = expected(s, s == DYNAMIC ? t : -1);
            double want[P];
            split(&g, raw, want);
            bool any = false;
            for (int a = 0; a < P; a++) {
                any |= raw[a] != 0.0f;
                if (fabs(want[a] - io->rewards[a]) > 1e-5) {
                    fprintf(stderr, "step %d agent %d: reward %g, expected %g\n", t, a,
                            io->rewards[a], want[a]);
                    return 0;
                }
            }
            if (any && (t == 29 || t == 30 || t == 59 || t == 60)) boundary[(t % 30) ? 1 : 0]++;
            if (s == DYNAMIC && (t == 28 || t == 29 || t == 59 || t == 60)) {
                graph after = expected(s, t + 1);
                if (!graph_matches(env, &after)) {
                    fprintf(stderr, "graph after step %d\n", t);
                    return 0;
                }
            }
            for (int32_t a = 0; a < io->n_agents; a++) *illegal += io->illegal[a];
            h = h * 1099511628211ULL ^ polis_env_state_hash(env);
        }
    }
    return h;
}

static void test_dynamic_rewards(void)
{
    int boundary[2] = {0, 0};
    for (int hard = 0; hard < 2; hard++) {
        polis_env *env = open_file("dynamic", hard);
        CHECK(env != NULL);
        if (!env) return;
        long illegal = 0;
        CHECK(run(env, DYNAMIC, 100, 12, &illegal, boundary) != 0);
        CHECK_EQ_INT(illegal, 0);
        polis_env_destroy(env);
    }
    /* the check above saw rewards on both sides of the switches */
    CHECK(boundary[0] > 0);
    CHECK(boundary[1] > 0);
}

static void test_golden(void)
{
    static const uint64_t golden[2][6] = {
        {0x280de887a27aaff8ULL, 0xf1d73bf5c2906968ULL, 0xac28e2a2c78b5c3cULL, 0xe61426b75a234f3cULL,
         0x6ffc8896bd2096d9ULL, 0xb6ff2be190e595eaULL},
        {0x67bb3e34c67a9de1ULL, 0xa0f12de23a2a32c3ULL, 0x227b7b6813c74179ULL, 0xb9b3fb617b108265ULL,
         0x547b8be1cf01f21bULL, 0xb0c5ee38f6ebc26dULL},
    };
    for (int hard = 0; hard < 2; hard++)
        for (int s = 0; s < 6; s++) {
            polis_env *env = open_file(FILES[s], hard);
            CHECK(env != NULL);
            if (!env) continue;
            long illegal = 0;
            int boundary[2] = {0, 0};
            uint64_t h = run(env, (structure)s, 1, 1, &illegal, boundary);
            CHECK_EQ_INT(illegal, 0);
            if (h != golden[hard][s])
                fprintf(stderr, "%s%s: hash 0x%016llxULL\n", FILES[s], hard ? "_hard" : "",
                        (unsigned long long)h);
            CHECK(h == golden[hard][s]);
            CHECK(run(env, (structure)s, 1, 1, &illegal, boundary) == h);
            polis_env_destroy(env);
        }
}

int main(void)
{
    test_structures(false);
    test_structures(true);
    test_vision();
    test_tasks();
    test_dynamic_rewards();
    test_golden();
    CHECK_DONE();
}
