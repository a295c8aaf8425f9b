/* Masks are exact: a random policy choosing only unmasked actions never triggers an illegal
 * flag (thousands of steps over several worlds, with tight capacities and sizes, requirement
 * gates and contested moves), every masked action that is forced anyway is an illegal no-op,
 * and the rewards add up to the value of the final inventories. */
#include <math.h>

#include "fixture.h"

#define EXPLORATION POLIS_SOURCE_DIR "/rulesets/exploration/exploration_physical.json"

static polis_env *open_file(const char *path) { return test_env_file(path, NULL); }

/* A crowded world where every rule binds: small capacities and sizes, initial inventories
 * that make recipes runnable, every recipe, piles everywhere. */
static const char *CROWDED =
    "{\"map\": {\"init_rule\": \"box\", \"size\": {\"x\": 7, \"y\": 6}},"
    " \"resources_in_play\": \"all\","
    " \"jobs\": {\"crafter\": {\"fov\": [1, 2], \"size\": 30,"
    "            \"capacity\": {\"hammer\": 2, \"torch\": 1, \"steel\": 4, \"gem\": 2},"
    "            \"inventory\": {\"wood\": 4, \"stone\": 4, \"coal\": 3, \"iron\": 3, \"clay\": 3,"
    "                           \"steel\": 3, \"gem_mine\": 2, \"cutter\": 1, \"pottery\": 1}},"
    "          \"hoarder\": {\"fov\": 1, \"default_capacity\": 3, \"preference\": {\"wood\": -1}}},"
    " \"random\": {\"blocks\": 2,"
    "   \"resources\": [{\"name\": \"wood\", \"num\": {\"rule\": \"random\", \"min\": 1, \"max\": "
    "4}, \"repeat\": 5},"
    "                 {\"name\": \"stone\", \"num\": 2, \"repeat\": 4},"
    "                 {\"name\": \"coal\", \"num\": 2, \"repeat\": 3},"
    "                 {\"name\": \"iron\", \"num\": 2, \"repeat\": 3},"
    "                 {\"name\": \"clay\", \"num\": 3, \"repeat\": 2}],"
    "   \"recipes\": [{\"name\": \"hammer_craft\", \"repeat\": 3}, {\"name\": \"torch_craft\", "
    "\"repeat\": 2},"
    "               {\"name\": \"steelmaking\", \"repeat\": 2}, {\"name\": \"potting\", "
    "\"repeat\": 2},"
    "               {\"name\": \"shovel_craft\", \"repeat\": 1}, {\"name\": \"pickaxe_craft\", "
    "\"repeat\": 1},"
    "               {\"name\": \"cutter_craft\", \"repeat\": 1}, {\"name\": \"gem_craft\", "
    "\"repeat\": 1},"
    "               {\"name\": \"totem_making\", \"repeat\": 1}],"
    "   \"players\": [{\"job\": \"crafter\", \"repeat\": 4}, {\"job\": \"hoarder\"}]}}";

static void count_fn(void *ud, const polis_event *ev)
{
    (void)ev;
    (*(long *)ud)++;
}

static void run_random(polis_env *env, int steps, uint64_t seed, bool force_masked)
{
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, seed, 1234);
    polis_env_reset(env, seed);
    long illegal = 0, forced = 0, forced_ok = 0;
    int32_t *legal = malloc(sizeof *legal * (size_t)io->n_actions);
    int32_t *masked = malloc(sizeof *masked * (size_t)io->n_actions);
    int32_t inv_before[64];
    for (int t = 0; t < steps; t++) {
        if (polis_env_done(env)) polis_env_reset(env, seed + (uint64_t)t);
        bool force = false;
        for (int32_t a = 0; a < io->n_agents; a++) {
            const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
            int32_t nl = 0, nm = 0;
            for (int32_t k = 0; k < io->n_actions; k++) {
                if (m[k])
                    legal[nl++] = k;
                else
                    masked[nm++] = k;
            }
            io->actions[a] = legal[polis_rng_below(&r, (uint32_t)nl)];
            if (a == 0 && force_masked && nm > 0 && polis_rng_below(&r, 3) == 0) {
                io->actions[0] = masked[polis_rng_below(&r, (uint32_t)nm)];
                force = true;
            }
        }
        polis_obs_field f;
        memset(&f, 0, sizeof f);
        const int32_t *inv0 = soc_field(env, 0, "inventory", &f);
        memcpy(inv_before, inv0, sizeof(int32_t) * (size_t)f.shape[0]);
        int px = soc_pos(env, 0, 0), py = soc_pos(env, 0, 1);
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "step: %s\n", polis_env_error(env));
            CHECK(0);
            break;
        }
        for (int32_t a = 0; a < io->n_agents; a++) {
            if (a == 0 && force) continue;
            illegal += io->illegal[a];
        }
        if (force) {
            forced++;
            forced_ok += io->illegal[0] == 1 &&
                         memcmp(inv_before, soc_field(env, 0, "inventory", NULL),
                                sizeof(int32_t) * (size_t)f.shape[0]) == 0 &&
                         soc_pos(env, 0, 0) == px && soc_pos(env, 0, 1) == py;
        }
    }
    free(legal);
    free(masked);
    CHECK_EQ_INT(illegal, 0);
    if (force_masked) {
        CHECK(forced > 100);
        CHECK_EQ_INT(forced_ok, forced);
    }
}

/* Rewards sum to the value of what the explorers end with (no initial inventory, no
 * sharing): Σ_t r_t = Σ_ρ m(ρ)·r̄(ρ). */
static void test_reward_total(void)
{
    static const double SCORE[15] = {1, 1, 5, 2, 20, 3, 30, 100, 150, 4, 4, 40, 100, 200, 1000};
    polis_env *env = open_file(EXPLORATION);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_rng r;
    polis_rng_seed(&r, 3, 77);
    polis_env_reset(env, 3);
    double ret[8] = {0};
    while (!polis_env_done(env)) {
        for (int32_t a = 0; a < io->n_agents; a++) {
            /* prefer picks and produce over moves, so inventories fill up */
            const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
            int32_t best[64], n = 0;
            for (int32_t k = 5; k < io->n_actions && k < 21; k++)
                if (m[k]) best[n++] = k;
            io->actions[a] =
                n ? best[polis_rng_below(&r, (uint32_t)n)] : 1 + (int32_t)polis_rng_below(&r, 4);
        }
        polis_env_step(env);
        for (int32_t a = 0; a < io->n_agents; a++) ret[a] += io->rewards[a];
    }
    double held_total = 0;
    for (int32_t a = 0; a < io->n_agents; a++) {
        double value = 0;
        for (int k = 0; k < 15; k++) value += soc_inv(env, a, k) * SCORE[k];
        held_total += value;
        CHECK(fabs(value - ret[a]) < 1e-3);
    }
    CHECK(held_total > 100);
    polis_env_destroy(env);
}

int main(void)
{
    static long produced = 0;
    polis_env *env = open_file(EXPLORATION);
    if (env) {
        run_random(env, 3000, 1, false);
        run_random(env, 2000, 2, true);
        polis_env_destroy(env);
    }
    char *json = soc_scenario(5, 300, CROWDED, "");
    env = soc_open(json, NULL, NULL);
    free(json);
    CHECK(env != NULL);
    if (env) {
        polis_env_subscribe(env, polis_env_event_find(env, "recipe.produced"), count_fn, &produced);
        run_random(env, 6000, 5, false);
        CHECK(produced > 50); /* the rules that bind were exercised */
        run_random(env, 4000, 6, true);
        polis_env_destroy(env);
    }
    char params[256];
    snprintf(params, sizeof params,
             "{\"adasociety\": \"rulesets/society/tests/adasociety/config/main.json\"}");
    json = soc_scenario(4, 1000, params, "");
    env = soc_open(json, NULL, NULL);
    free(json);
    if (env) {
        run_random(env, 3000, 9, true);
        polis_env_destroy(env);
    }
    test_reward_total();
    CHECK_DONE();
}
