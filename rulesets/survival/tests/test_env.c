/* survival.so through the kernel: the shipped scenarios, the observation field and action
 * layout, masks, rewards against the achievement events, dead players frozen and the episode
 * ending only when every player is done, golden state hashes of seeded episodes, no
 * allocation in the step loop, a failing-allocator sweep, and bad parameters refused with
 * their JSON path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core.h"
#include "scene_compare.h"
#include "testutil.h"

#define CLASSIC POLIS_SOURCE_DIR "/rulesets/survival/survival_classic.json"
#define MAC POLIS_SOURCE_DIR "/rulesets/survival/survival_mac.json"
#define CLASSIC_REF POLIS_SOURCE_DIR "/rulesets/survival/survival_classic_reference.json"
#define MAC_REF POLIS_SOURCE_DIR "/rulesets/survival/survival_mac_reference.json"

static char *scenario(int agents, const char *params)
{
    size_t n = strlen(params) + 256;
    char *s = malloc(n);
    snprintf(s, n,
             "{\"agents\": %d, \"max_steps\": 10000, \"plugins\": [{\"name\": \"survival\", "
             "\"params\": %s}]}",
             agents, params);
    return s;
}

static void test_layout(void)
{
    polis_env *env = test_env_file(CLASSIC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_actions(env), SV_N_ACTIONS);
    for (int32_t a = 0; a < SV_N_ACTIONS; a++)
        CHECK_EQ_STR(polis_env_action_name(env, a), sv_action_names[a]);
    CHECK_EQ_INT(polis_env_n_obs_fields(env), 1);
    polis_obs_field f;
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    const float *obs = test_obs_field(env, 0, "symbolic", &f);
    CHECK_EQ_INT(f.ndim, 1);
    CHECK_EQ_INT(f.shape[0], 1345);
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_F32);
    CHECK_EQ_INT(polis_env_io(env)->obs_size, 1345 * 4 + 4); /* padded to 8 bytes */
    /* the player on grass at the centre, facing up, full vitals, light(0) */
    CHECK(obs[(3 * 9 + 4) * 21 + SV_GRASS] == 1.0f);
    CHECK(obs[1323 + 12] == 0.89990234375f);
    CHECK(obs[1323 + 16 + 2] == 1.0f);
    CHECK(fabsf(obs[1343] - 0.797f) < 0.001f);
    CHECK(test_mask(env, 0, "noop") == 1);
    CHECK(test_mask(env, 0, "sleep") == 0); /* energy 9 */
    CHECK(test_mask(env, 0, "make_wood_pickaxe") == 0);
    CHECK(test_mask(env, 0, "place_table") == 0);
    polis_env_destroy(env);

    env = test_env_file(MAC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    obs = test_obs_field(env, 2, "symbolic", &f);
    CHECK_EQ_INT(f.shape[0], 1409);
    /* all three start on one tile: the others are on the player's own cell */
    CHECK(obs[(3 * 9 + 4) * 22 + 21] == 1.0f);
    CHECK(obs[1408] == 1.0f);
    polis_env_destroy(env);

    char *json = scenario(4, "{\"observation\": \"share_stats\"}");
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    test_obs_field(env, 0, "symbolic", &f);
    CHECK_EQ_INT(f.shape[0], 1346);
    const float *others = test_obs_field(env, 0, "others", &f);
    CHECK_EQ_INT(f.ndim, 2);
    CHECK_EQ_INT(f.shape[0], 3);
    CHECK_EQ_INT(f.shape[1], 84);
    for (int k = 0; k < 3; k++) CHECK(others[k * 84 + 3 * 9 + 4] == 1.0f);
    polis_env_destroy(env);
}

typedef struct counts {
    int32_t ach_type, death_type;
    int32_t ach[8];
    int32_t deaths;
} counts;

static void count_event(void *ud, const polis_event *ev)
{
    counts *c = ud;
    const int32_t *f = ev->data;
    if (ev->type == c->ach_type && f[0] < 8) c->ach[f[0]]++;
    if (ev->type == c->death_type) c->deaths++;
}

/* Three players at random: after the first one dies the episode goes on, the dead player's
 * observation stays frozen (vitals, inventory, is_alive 0), its mask allows only noop; the
 * episode ends only when all are done. Each return equals the player's achievement events
 * plus 0.1 x its health change. */
static void test_dead_and_done(void)
{
    polis_env *env = test_env_file(MAC, NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    counts c = {0};
    c.ach_type = polis_env_event_find(env, "survival.achievement");
    c.death_type = polis_env_event_find(env, "survival.death");
    polis_env_subscribe(env, -1, count_event, &c);
    int firsts_checked = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        memset(c.ach, 0, sizeof c.ach);
        c.deaths = 0;
        CHECK(polis_env_reset(env, seed) == POLIS_OK);
        double ret[3] = {0};
        float frozen[3][23];
        bool dead[3] = {false, false, false};
        int32_t random = polis_env_policy_find(env, "random");
        while (!polis_env_done(env)) {
            CHECK(polis_env_policy_act(env, random, NULL, 0) == POLIS_OK);
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "%s\n", polis_env_error(env));
                CHECK(false);
                break;
            }
            int32_t n_dead = 0;
            for (int a = 0; a < 3; a++) {
                ret[a] += io->rewards[a];
                const float *o = test_obs_field(env, a, "symbolic", NULL);
                if (io->terminations[a] && !dead[a]) {
                    dead[a] = true;
                    memcpy(frozen[a], o + 1386, sizeof frozen[a]);
                    CHECK(o[1408] == 0.0f);
                } else if (dead[a]) {
                    CHECK(io->rewards[a] == 0.0f);
                    /* inventory, vitals and facing as they were at death */
                    CHECK(memcmp(frozen[a], o + 1386, sizeof(float) * 20) == 0);
                    uint8_t only_noop = 1;
                    for (int32_t k = 1; k < io->n_actions; k++)
                        only_noop &= io->masks[a * io->n_actions + k] == 0;
                    CHECK(only_noop);
                }
                n_dead += dead[a];
            }
            if (n_dead > 0 && n_dead < 3) {
                CHECK(!polis_env_done(env));
                firsts_checked++;
            }
        }
        for (int a = 0; a < 3; a++) {
            CHECK(io->terminations[a] || io->truncations[a]);
            const float *o = test_obs_field(env, a, "symbolic", NULL);
            int health = (int)lroundf(o[1386 + 12] * 10.0f);
            double want = c.ach[a] + 0.1 * (health - 9);
            CHECK(fabs(ret[a] - want) < 1e-3);
        }
        CHECK_EQ_INT(c.deaths, 3);
        CHECK(polis_env_step(env) == POLIS_ERR_STATE);
    }
    CHECK(firsts_checked > 0);
    polis_env_destroy(env);
}

/* The state hash of seeded random episodes through the kernel, pinned. */
static uint64_t run_hash(const char *path, uint64_t seed, int steps)
{
    polis_env *env = test_env_file(path, NULL);
    if (!env) return 0;
    int32_t random = polis_env_policy_find(env, "random");
    uint64_t h = 0;
    polis_env_reset(env, seed);
    for (int t = 0; t < steps; t++) {
        if (polis_env_done(env)) polis_env_reset(env, seed + (uint64_t)t);
        polis_env_policy_act(env, random, NULL, 0);
        polis_env_step(env);
        h = h * 31 + polis_env_state_hash(env);
    }
    polis_env_destroy(env);
    return h;
}

/* The 16 masks come from one row call per agent (a legality group); a scenario that
 * disables a member's legality or the action itself still gets what it asked for, and the
 * other members keep the game's masks. */
static void test_mask_group(void)
{
    const char *json = "{\"agents\": 1, \"plugins\": [{\"name\": \"survival\"}], \"replace\": ["
                       "{\"kind\": \"legal\", \"name\": \"sleep\", \"disable\": true},"
                       "{\"kind\": \"action\", \"name\": \"left\", \"disable\": true}]}";
    polis_env *env = test_env(json, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    CHECK(test_mask(env, 0, "sleep") == 1); /* energy 9: the game says no, the scenario yes */
    CHECK(test_mask(env, 0, "left") == 0);  /* the game says yes, the action is disabled */
    CHECK(test_mask(env, 0, "right") == 1);
    CHECK(test_mask(env, 0, "noop") == 1);
    CHECK(test_mask(env, 0, "make_wood_pickaxe") == 0);
    CHECK(test_mask(env, 0, "place_table") == 0);
    polis_env_destroy(env);
}

static void test_golden(void)
{
    uint64_t a = run_hash(CLASSIC, 11, 600), b = run_hash(MAC, 11, 600);
    CHECK(a == run_hash(CLASSIC, 11, 600));
    CHECK(a != run_hash(CLASSIC, 12, 600));
    fprintf(stderr, "golden classic %016llx mac %016llx\n", (unsigned long long)a,
            (unsigned long long)b);
    CHECK(a == 0xe1d220c4144496b4ULL);
    CHECK(b == 0x0365809cefb2dd99ULL);
}

/* No allocation in the step loop, resets included, for 1 and 16 players, the second with
 * every reference switch on. */
static void test_no_alloc(void)
{
    for (int n = 1; n <= 16; n += 15) {
        test_alloc al = {0};
        char *json = scenario(
            n, n == 1 ? "{\"max_cows\": 10, \"spawn_cow_chance\": 0.3}"
                      : "{\"max_cows\": 10, \"spawn_cow_chance\": 0.3, \"tie_break\": "
                        "\"reference\", \"place_on_players\": true, \"unclamped_health\": "
                        "true, \"ghost_mobs\": \"every_step\", \"skeleton_axis\": "
                        "\"all_players\", \"legal_mask\": false, \"edge_wraps\": true, "
                        "\"shared_sapling_draw\": true, \"faced_sapling_resets\": true, "
                        "\"eaten_plant_stays_ripe\": true, \"plant_slots\": \"reference\"}");
        polis_env *env = test_env(json, NULL, &al);
        free(json);
        CHECK(env != NULL);
        if (!env) continue;
        int32_t random = polis_env_policy_find(env, "random");
        polis_env_reset(env, 1);
        long before = al.calls;
        int resets = 0;
        for (int t = 0; t < 10000; t++) {
            if (polis_env_done(env)) {
                polis_env_reset(env, (uint64_t)t);
                resets++;
            }
            polis_env_policy_act(env, random, NULL, 0);
            polis_env_step(env);
        }
        CHECK_EQ_INT(al.calls, before);
        CHECK(resets > 0);
        polis_env_destroy(env);
        CHECK_EQ_INT(al.live, 0);
    }
}

static void test_alloc_sweep(void)
{
    long total, failures;
    CHECK_EQ_INT(test_create_sweep(CLASSIC, &total, &failures), 0);
    CHECK(failures > 0);
    CHECK_EQ_INT(test_create_sweep(MAC, &total, &failures), 0);
    CHECK(failures > 0);
    CHECK_EQ_INT(test_create_sweep(MAC_REF, &total, &failures), 0);
    CHECK(failures > 0);
}

static void expect_error(int agents, const char *params, const char *want)
{
    char *json = scenario(agents, params);
    CHECK_CONTAINS(test_env_error(json), want);
    free(json);
}

static void test_bad_params(void)
{
    expect_error(1, "{\"observation\": \"pixels\"}",
                 "survival: params.observation: expected \"classic\", \"mac\", \"share_stats\" "
                 "or \"auto\", got \"pixels\"");
    expect_error(1, "{\"observation\": \"share_stats\"}",
                 "params.observation: \"share_stats\" needs at least 2 players");
    expect_error(2, "{\"tie_break\": \"first\"}",
                 "params.tie_break: expected \"intended\" or \"reference\", got \"first\"");
    expect_error(2, "{\"reward_mode\": \"shared\"}", "params.reward_mode: expected");
    expect_error(2, "{\"skeleton_axis\": \"nearest\"}",
                 "params.skeleton_axis: expected \"target\" or \"all_players\", got "
                 "\"nearest\"");
    expect_error(2, "{\"plant_slots\": \"mac\"}",
                 "params.plant_slots: expected \"next_free\" or \"reference\", got \"mac\"");
    expect_error(2, "{\"legal_mask\": \"no\"}", "plugins[0].params.legal_mask");
    expect_error(1, "{\"achievement_weights\": {\"collect_wood\": 2, \"eat_bread\": 1}}",
                 "plugins[0].params.achievement_weights.eat_bread: unknown achievement "
                 "\"eat_bread\"");
    expect_error(1, "{\"achievement_weights\": {\"collect_wood\": \"a lot\"}}",
                 "plugins[0].params.achievement_weights.collect_wood");
    expect_error(1, "{\"achievement_weights\": [1, 2, 3]}",
                 "plugins[0].params.achievement_weights: expected 22 weights (one per "
                 "achievement), got 3");
    expect_error(1, "{\"achievement_weights\": 5}",
                 "plugins[0].params.achievement_weights: expected an object");
    expect_error(1, "{\"max_cows\": 65}", "plugins[0].params.max_cows");
    expect_error(1, "{\"spawn_cow_chance\": 1.5}", "plugins[0].params.spawn_cow_chance");
    expect_error(1, "{\"pvp_heal\": 0.3}", "params.pvp_heal: expected a multiple of 0.5");
    expect_error(1, "{\"proximity_bonus\": 0.5}",
                 "survival: params.proximity_bonus: needs at least 2 players, the scenario has 1");
    expect_error(2, "{\"proximity_bonus\": 101}",
                 "plugins[0].params.proximity_bonus: expected number in [-100, 100], got 101");
    expect_error(2, "{\"proximity_bonus\": \"high\"}", "plugins[0].params.proximity_bonus");
    expect_error(2, "{\"proximity_radius\": -2}",
                 "plugins[0].params.proximity_radius: expected integer in [-1, 63], got -2");
    expect_error(2, "{\"proximity_radius\": 64}", "plugins[0].params.proximity_radius");
    expect_error(2, "{\"proximity_radius\": 1.5}", "plugins[0].params.proximity_radius");
    expect_error(300, "{}", "needs 1 to 256 players (agents), the scenario has 300");

    /* weights that parse: an object and an array */
    char *json = scenario(1, "{\"achievement_weights\": {\"collect_wood\": 2.5}}");
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (env) polis_env_destroy(env);
    json = scenario(1, "{\"achievement_weights\": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,0]}");
    env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (env) polis_env_destroy(env);
}

/* The uniform random agent's mean episode length over `episodes` seeded episodes. */
static double mean_length(const char *path, int episodes)
{
    polis_env *env = test_env_file(path, NULL);
    if (!env) return 0.0;
    int32_t uniform = polis_env_policy_find(env, "uniform");
    long steps = 0;
    for (int e = 0; e < episodes; e++) {
        polis_env_reset(env, (uint64_t)(1 + e));
        while (!polis_env_done(env)) {
            polis_env_policy_act(env, uniform, NULL, 0);
            if (polis_env_step(env) != POLIS_OK) break;
            steps++;
        }
    }
    polis_env_destroy(env);
    return (double)steps / episodes;
}

/* The reference presets (README "Reference presets"): no mask (every action legal, so the
 * kernel's uniform agent hands the game even the actions that cannot apply), 4 players in
 * MAC's; pinned by golden hashes; the random agent dies sooner than under the cleaned-up
 * defaults (ghost mobs): 143 vs 155 steps alone (standard errors 2.5 over 1,000 episodes);
 * with 4 players 213 over 10,000 episodes (2.5 over these 500). */
static void test_reference_presets(void)
{
    polis_env *env = test_env_file(MAC_REF, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_agents(env), 4);
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    for (int32_t a = 0; a < SV_N_ACTIONS; a++) CHECK(test_mask(env, 0, sv_action_names[a]) == 1);
    polis_env_destroy(env);
    env = test_env_file(CLASSIC_REF, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 3) == POLIS_OK);
    CHECK(test_mask(env, 0, "place_table") == 1);
    CHECK(test_mask(env, 0, "make_iron_sword") == 1);
    polis_env_destroy(env);

    uint64_t a = run_hash(CLASSIC_REF, 11, 600), b = run_hash(MAC_REF, 11, 600);
    CHECK(a == run_hash(CLASSIC_REF, 11, 600));
    fprintf(stderr, "golden classic_reference %016llx mac_reference %016llx\n",
            (unsigned long long)a, (unsigned long long)b);
    CHECK(a == 0x6dec0da3b8c23000ULL);
    CHECK(b == 0x0e674441da68e56bULL);
    CHECK(a != run_hash(CLASSIC, 11, 600));
    CHECK(b != run_hash(MAC, 11, 600));

    double ref = mean_length(CLASSIC_REF, 1000), clean = mean_length(CLASSIC, 1000);
    fprintf(stderr, "uniform agent: classic_reference %.1f, classic %.1f steps\n", ref, clean);
    CHECK(ref > 135.0 && ref < 151.0);
    CHECK(clean - ref > 5.0);
    ref = mean_length(MAC_REF, 500);
    fprintf(stderr, "uniform agents: mac_reference %.1f steps\n", ref);
    CHECK(ref > 203.0 && ref < 223.0);
}

typedef struct attacks {
    int32_t type, given[4], taken[4], total;
} attacks;

static void count_attack(void *ud, const polis_event *ev)
{
    attacks *at = ud;
    const int32_t *f = ev->data; /* agent, victim */
    if (ev->type != at->type) return;
    at->given[f[0]]++;
    at->taken[f[1]]++;
    at->total++;
}

/* The paper's competitive and cooperative setups as shipped: random players in survival_pvp
 * hit each other, and each step's rewards exceed those of the same game without PvP rewards
 * (same seed, same actions) by exactly +1 per hit given and -0.5 per hit taken; the metrics
 * count the hits. In survival_shared_reward every player gets the same reward every step. */
static void test_paper_setups(void)
{
    polis_env *env = test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_pvp.json", NULL);
    char *json = scenario(4, "{\"observation\": \"mac\", \"max_cows\": 10, "
                             "\"spawn_cow_chance\": 0.3, \"pvp\": true, "
                             "\"pvp_attack_reward\": 0, \"pvp_attacked_penalty\": 0}");
    polis_env *twin = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL && twin != NULL);
    if (!env || !twin) return;
    CHECK_EQ_INT(polis_env_n_agents(env), 4);
    attacks at = {.type = polis_env_event_find(env, "survival.attack")};
    polis_env_subscribe(env, -1, count_attack, &at);
    int32_t random = polis_env_policy_find(env, "random");
    const polis_io *io = polis_env_io(env), *tio = polis_env_io(twin);
    int bad = 0;
    for (int e = 0; e < 20; e++) {
        polis_env_reset(env, (uint64_t)(100 + e));
        polis_env_reset(twin, (uint64_t)(100 + e));
        int before = at.total;
        while (!polis_env_done(env)) {
            polis_env_policy_act(env, random, NULL, 0);
            memcpy(tio->actions, io->actions, sizeof *io->actions * 4);
            memset(&at.given, 0, sizeof at.given);
            memset(&at.taken, 0, sizeof at.taken);
            CHECK(polis_env_step(env) == POLIS_OK);
            CHECK(polis_env_step(twin) == POLIS_OK);
            for (int32_t a = 0; a < 4; a++) {
                float want = tio->rewards[a] + 1.0f * at.given[a] - 0.5f * at.taken[a];
                bad += fabsf(io->rewards[a] - want) > 1e-4f;
            }
        }
        CHECK(polis_env_done(twin));
        char *out = NULL;
        CHECK(polis_env_render(env, 0, "metrics", &out) == POLIS_OK);
        const char *p = out ? strstr(out, "\"pvp_hits\":") : NULL;
        CHECK(p != NULL);
        if (p) CHECK_EQ_INT(atoi(p + 11), at.total - before);
        polis_free(out);
    }
    CHECK(at.total > 0);
    CHECK_EQ_INT(bad, 0);
    polis_env_destroy(env);
    polis_env_destroy(twin);

    env = test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_shared_reward.json", NULL);
    CHECK(env != NULL);
    if (!env) return;
    random = polis_env_policy_find(env, "random");
    io = polis_env_io(env);
    polis_env_reset(env, 7);
    int nonzero = 0, unequal = 0;
    for (int t = 0; t < 300 && !polis_env_done(env); t++) {
        polis_env_policy_act(env, random, NULL, 0);
        CHECK(polis_env_step(env) == POLIS_OK);
        for (int32_t a = 1; a < 4; a++) unequal += fabsf(io->rewards[a] - io->rewards[0]) > 1e-5f;
        nonzero += io->rewards[0] != 0.0f;
    }
    CHECK_EQ_INT(unequal, 0);
    CHECK(nonzero > 0);
    polis_env_destroy(env);
}

/* 64 players in one world step and stay consistent. */
static void test_many(void)
{
    char *json = scenario(64, "{}");
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t random = polis_env_policy_find(env, "random");
    CHECK(polis_env_reset(env, 9) == POLIS_OK);
    int t = 0;
    while (!polis_env_done(env) && t < 3000) {
        CHECK(polis_env_policy_act(env, random, NULL, 0) == POLIS_OK);
        CHECK(polis_env_step(env) == POLIS_OK);
        t++;
    }
    int done = 0;
    for (int a = 0; a < 64; a++) done += io->terminations[a] || io->truncations[a];
    CHECK(t > 50);
    CHECK(done == 64 || t == 3000);
    polis_env_destroy(env);
}

typedef struct bounty_count {
    int32_t killed, paid;
    long kills, pays, stones, night_kills;
} bounty_count;

static void bounty_event(void *ud, const polis_event *ev)
{
    bounty_count *b = ud;
    const int32_t *f = ev->data;
    if (ev->type == b->killed && f[1] == SV_ZOMBIE) {
        b->kills++;
        int t = (int)(ev->tick % 300);
        b->night_kills += t >= 148 && t <= 272;
    }
    if (ev->type == b->paid) {
        b->pays++;
        b->stones += f[1];
    }
}

/* The Lua rule on top of survival (bounty.lua): one payment per zombie killed, in reward
 * (the "bounty" reward function) and by night in stone. */
static void test_lua_rule(void)
{
    polis_env *env =
        test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_bounty.json", NULL);
    CHECK(env != NULL);
    if (!env) return;
    bounty_count b = {0};
    b.killed = polis_env_event_find(env, "survival.mob_killed");
    b.paid = polis_env_event_find(env, "bounty.paid");
    CHECK(b.paid >= 0);
    polis_env_subscribe(env, -1, bounty_event, &b);
    int32_t fn = -1, scripted = polis_env_policy_find(env, "scripted");
    for (int32_t i = 0; i < polis_env_n_reward_fns(env); i++)
        if (strcmp(polis_env_reward_fn_name(env, i), "bounty") == 0) fn = i;
    CHECK(fn >= 0);
    double bounty = 0.0;
    for (uint64_t seed = 1; seed <= 2; seed++) {
        polis_env_reset(env, seed);
        while (!polis_env_done(env)) {
            CHECK(polis_env_policy_act(env, scripted, NULL, 0) == POLIS_OK);
            if (polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "%s\n", polis_env_error(env));
                CHECK(false);
                break;
            }
            const float *row = polis_env_reward_components(env) + (size_t)fn * 3;
            for (int a = 0; a < 3; a++) bounty += row[a];
        }
    }
    CHECK(b.kills > 5);
    CHECK_EQ_INT(b.pays, b.kills);
    CHECK_EQ_INT(b.stones, b.night_kills);
    CHECK(fabs(bounty - 0.5 * (double)b.kills) < 1e-3);
    polis_env_destroy(env);
}

/* The larger social scenario: inside a tribe every step's reward is shared equally. */
static void test_tribes(void)
{
    polis_env *env =
        test_env_file(POLIS_SOURCE_DIR "/rulesets/survival/survival_tribes.json", NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    int32_t random = polis_env_policy_find(env, "random");
    polis_env_reset(env, 5);
    int unequal = 0, nonzero = 0;
    for (int t = 0; t < 400 && !polis_env_done(env); t++) {
        polis_env_policy_act(env, random, NULL, 0);
        CHECK(polis_env_step(env) == POLIS_OK);
        for (int tribe = 0; tribe < 2; tribe++)
            for (int a = 1; a < 6; a++)
                unequal += fabsf(io->rewards[tribe * 6 + a] - io->rewards[tribe * 6]) > 1e-5f;
        nonzero += io->rewards[0] != 0.0f;
    }
    CHECK_EQ_INT(unequal, 0);
    CHECK(nonzero > 0);
    polis_env_destroy(env);
}

/* The terrain layer of the scene (looks.c: a fresh scene's 4,096 cells and the rows the rules
 * rewrote, drawn by a portable loop or its AVX2 build) against what the player sees, which
 * sv_write_obs reads from the map itself: at every tick of ten episodes, every cell of the
 * 9 x 7 view inside the map is the scene's kind of the block whose one-hot the observation sets. */
static void test_scene_terrain_seen(void)
{
    char *json = scenario(1, "{}");
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    /* each block's scene kind, by its name (-1: no kind, as for "invalid") */
    int32_t kind_of[SV_N_BLOCKS];
    for (int32_t b = 0; b < SV_N_BLOCKS; b++)
        kind_of[b] = polis_env_scene_kind_find(env, sv_block_names[b]);
    CHECK(kind_of[SV_GRASS] >= 0 && kind_of[SV_OUT_OF_BOUNDS] < 0);
    const polis_io *io = polis_env_io(env);
    int32_t random = polis_env_policy_find(env, "random");
    const int32_t ch = SV_N_BLOCKS + 4; /* "classic": blocks, then zombie, cow, skeleton, arrow */
    CHECK(io->obs_size >= sizeof(float) * (size_t)(SV_VIEW_CELLS * ch + 22));
    int64_t cells = 0, wrong = 0, rows_rewritten = 0;
    for (int e = 0; e < 10; e++) {
        CHECK(polis_env_reset(env, 40 + (uint64_t)e) == POLIS_OK);
        uint64_t ver = 0;
        for (int t = 0; t < 600 && !polis_env_done(env); t++) {
            if (t) {
                polis_env_policy_act(env, random, NULL, 0);
                CHECK(polis_env_step(env) == POLIS_OK);
            }
            const polis_scene *sc;
            CHECK(polis_env_scene_get(env, &sc) == POLIS_OK);
            uint64_t v = polis_env_scene_layer_version(env, 0);
            rows_rewritten += t && v != ver;
            ver = v;
            const float *obs = (const float *)(const void *)io->obs;
            int32_t r0 = sc->agents[0].y - SV_VIEW_ROWS / 2,
                    c0 = sc->agents[0].x - SV_VIEW_COLS / 2;
            for (int32_t i = 0; i < SV_VIEW_CELLS; i++) {
                int32_t r = r0 + i / SV_VIEW_COLS, c = c0 + i % SV_VIEW_COLS, block = -1;
                if (r < 0 || r >= sc->height || c < 0 || c >= sc->width) continue;
                for (int32_t b = 0; b < SV_N_BLOCKS; b++)
                    if (obs[i * ch + b] == 1.0f) block = b;
                cells++;
                wrong += block < 0 ||
                         sc->tiles[(size_t)r * (size_t)sc->width + (size_t)c] != kind_of[block];
            }
        }
    }
    CHECK(cells > 60000);
    CHECK(rows_rewritten > 15); /* scenes after the rules changed the map, not only fresh ones */
    CHECK_EQ_INT((int)wrong, 0);
    polis_env_destroy(env);
}

/* The scene survival keeps (looks.c: only the map rows the rules wrote, a mob put only when it
 * changed) against scenes drawn otherwise, over the same episodes (same seeds, the random
 * policy): env 0 reads its scene after every step, env 1 once per episode at a tick that moves
 * from episode to episode (its first read, so drawn whole: scene_fresh), env 2 every 5th
 * step (a read after several steps' changes). At each tick a second env reads, the scenes
 * are alike; and the kept terrain changed and mobs came and went along the way. */
static void test_scene_kept(void)
{
    char *json = scenario(4, "{\"max_cows\": 10, \"spawn_cow_chance\": 0.3, \"max_zombies\": "
                             "6, \"max_skeletons\": 4, \"max_arrows\": 6}");
    polis_env *env[3];
    int32_t random[3];
    for (int i = 0; i < 3; i++) {
        env[i] = test_env(json, NULL, NULL);
        CHECK(env[i] != NULL);
        if (!env[i]) return;
        random[i] = polis_env_policy_find(env[i], "random");
    }
    free(json);
    int32_t compared = 0, layer_changes = 0, max_things = 0, unequal = 0;
    for (int e = 0; e < 12; e++) {
        for (int i = 0; i < 3; i++) CHECK(polis_env_reset(env[i], 300 + (uint64_t)e) == POLIS_OK);
        int32_t at = 2 + e * 17;
        uint64_t ver = 0;
        for (int32_t t = 1; t < 2000; t++) {
            for (int i = 0; i < 3; i++) {
                polis_env_policy_act(env[i], random[i], NULL, 0);
                CHECK(polis_env_step(env[i]) == POLIS_OK);
            }
            const polis_scene *s0, *s1;
            CHECK(polis_env_scene_get(env[0], &s0) == POLIS_OK);
            uint64_t v = polis_env_scene_layer_version(env[0], 0);
            layer_changes += t > 1 && v != ver;
            ver = v;
            if (s0->n_things > max_things) max_things = s0->n_things;
            bool done = polis_env_done(env[0]);
            for (int i = 1; i < 3; i++) {
                if (!(i == 1 ? t == at || (done && t < at) : t % 5 == 0 || done)) continue;
                CHECK(polis_env_scene_get(env[i], &s1) == POLIS_OK);
                unequal += !test_scenes_equal(s0, s1);
                compared++;
            }
            if (done) break;
        }
    }
    CHECK_EQ_INT(unequal, 0);
    CHECK(compared > 100);
    CHECK(layer_changes > 10);
    CHECK(max_things > 5);
    for (int i = 0; i < 3; i++) polis_env_destroy(env[i]);
}

typedef struct mob_counts {
    int32_t active[SV_N_MOB_KINDS];
    int32_t got; /* events since the test last looked */
} mob_counts;

static void on_mob_counts(void *ud, const polis_event *ev)
{
    mob_counts *m = ud;
    memcpy(m->active, ev->data, sizeof m->active);
    m->got++;
}

/* The mobs of the scene read after every step (looks.c visits only the mob slots the rules
 * marked, sv_mark_mob) against the game: per kind, as many things as active mobs (a script
 * asks survival.active_mobs after each step), and in every living player's view a thing of a
 * kind exactly where the observation shows a mob of that kind; things' ids unique. A change
 * the rules did not mark leaves a thing where the mob was, or a mob without its thing. */
static void test_scene_mobs(void)
{
    char *json = malloc(1024);
    snprintf(json, 1024,
             "{\"agents\": 4, \"max_steps\": 10000, \"plugins\": [{\"name\": \"survival\", "
             "\"params\": {\"max_cows\": 10, \"spawn_cow_chance\": 0.3, \"max_zombies\": 6, "
             "\"max_skeletons\": 4, \"max_arrows\": 6}}], \"scripts\": [\"%s\"]}",
             POLIS_SOURCE_DIR "/rulesets/survival/tests/mob_counts.lua");
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    mob_counts mc = {{0}, 0};
    int32_t type = polis_env_event_find(env, "mob_counts.active");
    CHECK(type >= 0);
    CHECK(polis_env_subscribe(env, type, on_mob_counts, &mc) == POLIS_OK);
    int32_t kind_of[SV_N_MOB_KINDS];
    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
        kind_of[k] = polis_env_scene_kind_find(env, sv_mob_names[k]);
        CHECK(kind_of[k] >= 0);
    }
    int32_t random = polis_env_policy_find(env, "random");
    int64_t ticks = 0, things = 0, cells = 0, moved = 0, wrong = 0;
    for (int e = 0; e < 20; e++) {
        CHECK(polis_env_reset(env, 500 + (uint64_t)e) == POLIS_OK);
        int32_t last_x[SV_N_MOB_KINDS * SV_MAX_MOBS] = {0};
        for (int t = 0; t < 1500 && !polis_env_done(env); t++) {
            if (t) {
                polis_env_policy_act(env, random, NULL, 0);
                CHECK(polis_env_step(env) == POLIS_OK);
            }
            CHECK_EQ_INT(mc.got, 1);
            mc.got = 0;
            const polis_scene *sc;
            CHECK(polis_env_scene_get(env, &sc) == POLIS_OK);
            ticks++;
            int32_t n[SV_N_MOB_KINDS] = {0};
            for (int32_t i = 0; i < sc->n_things; i++) {
                const polis_scene_thing *th = &sc->things[i];
                int32_t k = 0;
                while (k < SV_N_MOB_KINDS && kind_of[k] != th->kind) k++;
                wrong += k == SV_N_MOB_KINDS;
                if (k < SV_N_MOB_KINDS) n[k]++;
                for (int32_t j = 0; j < i; j++) wrong += sc->things[j].id == th->id;
                if (th->id < (int32_t)(sizeof last_x / sizeof *last_x)) {
                    moved += last_x[th->id] && last_x[th->id] != th->x + 1;
                    last_x[th->id] = th->x + 1;
                }
            }
            things += sc->n_things;
            for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) wrong += n[k] != mc.active[k];
            for (int32_t a = 0; a < sc->n_agents; a++) {
                if (!sc->agents[a].alive) continue;
                polis_obs_field f;
                const float *obs = test_obs_field(env, a, "symbolic", &f);
                const int32_t ch = (f.shape[0] - 22) / SV_VIEW_CELLS; /* blocks, mobs, (others) */
                int32_t r0 = sc->agents[a].y - SV_VIEW_ROWS / 2,
                        c0 = sc->agents[a].x - SV_VIEW_COLS / 2;
                for (int32_t v = 0; v < SV_VIEW_CELLS; v++) {
                    int32_t r = r0 + v / SV_VIEW_COLS, c = c0 + v % SV_VIEW_COLS;
                    if (r < 0 || r >= sc->height || c < 0 || c >= sc->width) continue;
                    cells++;
                    for (int32_t k = 0; k < SV_N_MOB_KINDS; k++) {
                        bool seen = obs[v * ch + SV_N_BLOCKS + k] == 1.0f, there = false;
                        for (int32_t i = 0; i < sc->n_things; i++)
                            there = there || (sc->things[i].kind == kind_of[k] &&
                                              sc->things[i].x == c && sc->things[i].y == r);
                        wrong += seen != there;
                    }
                }
            }
        }
    }
    polis_env_destroy(env);
    printf("scene mobs: %lld ticks, %lld things, %lld moves, %lld view cells\n", (long long)ticks,
           (long long)things, (long long)moved, (long long)cells);
    CHECK(ticks > 3000);
    CHECK(things > 10000); /* mobs were about, */
    CHECK(moved > 1000);   /* and moved */
    CHECK(cells > 100000);
    CHECK_EQ_INT((int)wrong, 0);
}

/* The scene drawn from copies (looks.c's take and draw, on this thread) against the env's own
 * (sv_scene) after every reset and step, over several seeds with resets, one player and four
 * with many mobs: the same tiles, agents, stats and things slot by slot; when both read the
 * scene before too, the same kept changes and the same terrain rows said. Some steps read only
 * the copy, some only the env's scene, and takes wait a few steps for their draws: the take's
 * marks and the scene's are each their own. */
static void test_scene_copy(void)
{
    char *many =
        scenario(4, "{\"max_cows\": 12, \"spawn_cow_chance\": 0.3, \"max_zombies\": 8, "
                    "\"max_skeletons\": 6, \"max_arrows\": 8, \"spawn_zombie_base_chance\": "
                    "0.1}");
    char *one = scenario(1, "{}");
    const char *json[2] = {one, many};
    int64_t compared = 0, said = 0, rows_said = 0, changes = 0, unequal = 0, things = 0;
    for (int cfg = 0; cfg < 2; cfg++) {
        polis_env *env = test_env(json[cfg], NULL, NULL);
        CHECK(env != NULL);
        if (!env) continue;
        CHECK(polis_env_scene_copyable(env));
        /* the scripted player digs and places (terrain rows), the random four meet mobs */
        int32_t random = polis_env_policy_find(env, cfg ? "random" : "scripted");
        CHECK(random >= 0);
        polis_scene_copy *c = NULL;
        CHECK(polis_env_reset(env, 900) == POLIS_OK);
        CHECK(polis_scene_copy_open(env, &c) == POLIS_OK);
        if (!c) {
            polis_env_destroy(env);
            continue;
        }
        size_t max = polis_scene_copy_max(c);
        enum { WAIT = 3 };
        uint8_t *buf[WAIT];
        size_t len[WAIT];
        for (int i = 0; i < WAIT; i++) buf[i] = malloc(max);
        const polis_scene *cs = NULL;
        for (int e = 0; e < 24; e++) {
            if (e) CHECK(polis_env_reset(env, 900 + (uint64_t)e) == POLIS_OK);
            uint32_t rng = 77u + (uint32_t)e * 13u;
            bool both_before = false;
            for (int t = 0; t < 400; t++) {
                if (t) {
                    polis_env_policy_act(env, random, NULL, 0);
                    CHECK(polis_env_step(env) == POLIS_OK);
                }
                rng = rng * 1103515245u + 12345u;
                /* 0, 1: both; 2: only the copy, its draws now and then waiting for the
                 * takes of a few steps; 3: only the env's scene (no take) */
                uint32_t mode = t == 0 ? 0 : (rng >> 16) % 4;
                int waits = t > 0 && mode == 2 && (rng >> 20) % 3 == 0 ? WAIT : 1;
                const polis_scene *es = NULL;
                uint64_t ver_before = polis_env_scene_layer_version(env, 0);
                if (mode != 2) CHECK(polis_env_scene_get(env, &es) == POLIS_OK);
                int n_taken = 0;
                for (int k = 0; k < waits && mode != 3; k++) {
                    if (k) { /* the env steps on while earlier takes wait for their draws */
                        polis_env_policy_act(env, random, NULL, 0);
                        CHECK(polis_env_step(env) == POLIS_OK);
                    }
                    CHECK(polis_scene_copy_take(c, buf[k], &len[k]) == POLIS_OK);
                    CHECK(len[k] <= max);
                    n_taken++;
                    if (polis_env_done(env)) break;
                }
                const polis_scene_said *before = polis_scene_copy_said(c);
                uint64_t cver_before = before ? before->layer_ver[0] : 0;
                for (int k = 0; k < n_taken; k++)
                    CHECK(polis_scene_copy_draw(c, buf[k], len[k], &cs) == POLIS_OK);
                if (!es || n_taken != 1) { /* one of the two did not see this scene */
                    both_before = false;
                    if (polis_env_done(env)) break;
                    continue;
                }
                compared++;
                things += cs->n_things;
                polis_scene_kept ke, kc;
                CHECK(polis_env_scene_kept(env, POLIS_SCENE_THINGS, &ke) == POLIS_OK);
                CHECK(polis_scene_copy_kept(c, POLIS_SCENE_THINGS, &kc) == POLIS_OK);
                unequal += !test_scenes_equal(es, cs) ||
                           !test_kept_equal(es, &ke, cs, &kc, POLIS_SCENE_THINGS);
                if (both_before) { /* what each scene says of itself since the one before */
                    const polis_scene_said *se = polis_env_scene_said(env),
                                           *sc = polis_scene_copy_said(c);
                    said++;
                    unequal += !test_same_slots(
                        se->changed[POLIS_SCENE_THINGS], se->n_changed[POLIS_SCENE_THINGS],
                        sc->changed[POLIS_SCENE_THINGS], sc->n_changed[POLIS_SCENE_THINGS],
                        SV_N_MOB_KINDS * SV_MAX_MOBS);
                    changes += se->n_changed[POLIS_SCENE_THINGS];
                    unequal +=
                        (se->layer_ver[0] != ver_before) != (sc->layer_ver[0] != cver_before);
                    uint64_t since_e = 0, since_c = 0;
                    const uint64_t *re = polis_env_scene_layer_rows(env, 0, &since_e);
                    const uint64_t *rc = polis_scene_copy_layer_rows(c, 0, &since_c);
                    unequal += !re != !rc || (re && re[0] != rc[0]);
                    rows_said += re != NULL;
                }
                both_before = true;
                if (polis_env_done(env)) break;
            }
        }
        CHECK_EQ_STR(polis_scene_copy_error(c), "");
        for (int i = 0; i < WAIT; i++) free(buf[i]);
        polis_scene_copy_close(c);
        polis_env_destroy(env);
    }
    free(one);
    free(many);
    printf("scene copies: %lld scenes compared, %lld things, %lld said (%lld with rows, %lld "
           "kept changes)\n",
           (long long)compared, (long long)things, (long long)said, (long long)rows_said,
           (long long)changes);
    CHECK_EQ_INT((int)unequal, 0);
    CHECK(compared > 1000);
    CHECK(said > 500);
    CHECK(rows_said > 100);
    CHECK(changes > 500);
    CHECK(things > 2000);
}

/* A take whose survival part does not add up (its head names one map row fewer than it holds):
 * looks.c's draw refuses it (POLIS_ERR_INVALID; no message of its own, the host's error is the
 * env's), the reader keeps the message and refuses every later draw. */
static void test_scene_copy_bad(void)
{
    char *json = scenario(1, "{}");
    polis_env *env = test_env(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (!env) return;
    CHECK(polis_env_reset(env, 5) == POLIS_OK);
    polis_scene_copy *c = NULL;
    CHECK(polis_scene_copy_open(env, &c) == POLIS_OK);
    if (!c) {
        polis_env_destroy(env);
        return;
    }
    size_t max = polis_scene_copy_max(c), len = 0;
    uint64_t *buf = calloc(max / 8 + 1, 8);
    CHECK(polis_scene_copy_take(c, buf, &len) == POLIS_OK);
    /* a fresh take: survival's part starts with every row (the first all-ones word) */
    size_t at = 0;
    while (at < len / 8 && buf[at] != ~UINT64_C(0)) at++;
    CHECK(at < len / 8);
    buf[at] &= ~UINT64_C(1);
    const polis_scene *sc = NULL;
    CHECK(polis_scene_copy_draw(c, buf, len, &sc) != POLIS_OK);
    CHECK(strstr(polis_scene_copy_error(c), "survival: failed (invalid argument)") != NULL);
    CHECK(polis_scene_copy_draw(c, buf, len, &sc) == POLIS_ERR_STATE);
    free(buf);
    polis_scene_copy_close(c);
    polis_env_destroy(env);
}

int main(void)
{
    test_tribes();
    test_lua_rule();
    test_layout();
    test_mask_group();
    test_dead_and_done();
    test_golden();
    test_reference_presets();
    test_paper_setups();
    test_no_alloc();
    test_alloc_sweep();
    test_bad_params();
    test_many();
    test_scene_kept();
    test_scene_terrain_seen();
    test_scene_mobs();
    test_scene_copy();
    test_scene_copy_bad();
    CHECK_DONE();
}
