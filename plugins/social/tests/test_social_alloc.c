/* Memory: every allocation of create/reset/step can fail and gives a clean error with nothing
 * leaked; the step loop allocates nothing, whatever the agents do to the graph. */
#include <time.h>

#include "fixture.h"

static const char *FULL =
    "{\"communication_length\": 3, \"social_state\": true, \"max_groups\": 6,"
    " \"social\": {\"relations\": [{\"name\": \"share_obs\", \"attributes\": {\"sharing\": "
    "{\"Map\": true}}, \"players\": [{\"from\": 0, \"to\": 1}, {\"from\": 1, \"to\": 2}]}],"
    "  \"groups\": [{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": "
    "[0.85, 0.15]}}}, {}]},"
    " \"social_schedule\": {\"7\": {\"relations\": [], \"groups\": [{\"players\": {\"ids\": "
    "[0, 1, 2, 3], \"attributes\": {\"division_weight\": [1, 1, 1, 1]}}}, {}, {}]}},"
    " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"communication\"}]],"
    " \"post_updates\": ["
    "  {\"function\": \"matching_edge\", \"kwargs\": {\"condition_attr\": "
    "\"matching_request_step\", \"result_attr1\": {\"parity\": 0}, \"result_attr2\": "
    "{\"parity\": 1}}},"
    "  [\"merge_relation_to_group\", {\"condition_attr\": \"accept\", \"result_attr\": "
    "\"score\"}],"
    "  [\"normalization\", {\"attr\": \"score\"}],"
    "  [\"symmetrize_relation\", {\"attr\": \"friend\"}],"
    "  [\"clear_temporary_relation\", {\"attr\": \"matching_request_step\"}],"
    "  [\"split_score_to_group\", {\"attribute\": \"division_weight\"}],"
    "  [\"split_score_to_group\", {\"attribute\": \"score\"}]],"
    " \"actions\": [{\"family\": \"communicate\"}, {\"family\": \"share_map\"},"
    "  {\"family\": \"share_player\"}, {\"family\": \"switch_group\"},"
    "  {\"family\": \"add_relation\", \"name\": \"befriend\", \"attributes\": {\"friend\": 1}},"
    "  {\"family\": \"remove_relation\", \"name\": \"unfriend\", \"attribute\": \"friend\"},"
    "  {\"family\": \"join_group\", \"name\": \"join\", \"attributes\": {\"score\": 1}},"
    "  {\"family\": \"quit_group\", \"name\": \"quit\", \"attribute\": \"score\"}]}";

static const char *FULL_PROBE =
    "{\"ops\": [{\"tick\": 0, \"op\": \"request\", \"from\": 2, \"to\": 3},"
    "{\"tick\": 0, \"op\": \"request\", \"from\": 3, \"to\": 2},"
    "{\"tick\": 1, \"op\": \"propose\", \"from\": 3, \"to\": 2, \"value\": 0.4},"
    "{\"tick\": 2, \"op\": \"accept\", \"agent\": 2, \"opponent\": 3},"
    "{\"tick\": 3, \"op\": \"reward\", \"agent\": 2, \"value\": 1}]}";

static void random_legal(const polis_io *io, polis_rng *rng)
{
    for (int32_t a = 0; a < io->n_agents; a++) {
        const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
        int32_t k;
        do {
            k = (int32_t)polis_rng_below(rng, (uint32_t)io->n_actions);
        } while (!m[k]);
        io->actions[a] = k;
    }
}

/* 1: nothing failed; 0: the failure was handled cleanly; -1: a wrong outcome. */
static int run_failing(const char *json, long n)
{
    test_alloc al = {0};
    al.fail_at = n;
    polis_options o = test_options(NULL, &al);
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json(json, strlen(json), &o, &env, &err);
    if (st == POLIS_OK) {
        st = polis_env_reset(env, 1);
        polis_rng rng;
        polis_rng_seed(&rng, 3, 3);
        const polis_io *io = polis_env_io(env);
        for (int t = 0; st == POLIS_OK && t < 20; t++) {
            random_legal(io, &rng);
            st = polis_env_step(env);
        }
        if (st != POLIS_OK && polis_env_error(env)[0] == '\0') {
            fprintf(stderr, "n=%ld: status %d without a message\n", n, st);
            polis_env_destroy(env);
            return -1;
        }
        polis_env_destroy(env);
    } else if (err.message[0] == '\0') {
        fprintf(stderr, "n=%ld: create failed (%d) without a message\n", n, st);
        return -1;
    }
    if (al.live != 0) {
        fprintf(stderr, "n=%ld: %lld bytes leaked (status %d: %s)\n", n, al.live, st,
                st == POLIS_OK ? "" : err.message);
        return -1;
    }
    if (!al.failed) return st == POLIS_OK ? 1 : -1;
    return st == POLIS_ERR_NOMEM ? 0 : -1;
}

static void test_failing_allocator(void)
{
    static char json[sizeof sg_scn_buf];
    /* without the probe: the sweep is about social's own allocations */
    snprintf(json, sizeof json, "%s", sg_scenario(4, 100, FULL, NULL));
    int bad = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        int r = run_failing(json, n);
        if (r < 0) bad++;
        if (r == 1) break;
    }
    fprintf(stderr, "%ld allocations swept, %d bad\n", n - 1, bad);
    CHECK(n > 30);
    CHECK_EQ_INT(bad, 0);
}

static void test_no_allocation_in_step(void)
{
    test_alloc al = {0};
    polis_options o = test_options(NULL, &al);
    polis_env *env = NULL;
    polis_error err;
    const char *json = sg_scenario(6, 50, FULL, FULL_PROBE);
    CHECK_EQ_INT(polis_env_create_json(json, strlen(json), &o, &env, &err), POLIS_OK);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    long before = al.calls;
    const polis_io *io = polis_env_io(env);
    polis_rng rng;
    polis_rng_seed(&rng, 11, 1);
    int resets = 0;
    for (int t = 0; t < 10000; t++) {
        if (polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_reset(env, (uint64_t)t), POLIS_OK);
            resets++;
        }
        random_legal(io, &rng);
        if (polis_env_step(env) != POLIS_OK) {
            fprintf(stderr, "step %d: %s\n", t, polis_env_error(env));
            CHECK(0);
            break;
        }
    }
    CHECK(resets > 100);
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
}

/* Many agents acting socially at random: the graph fills up, and the step stays cheap (the
 * rate is printed; the checks are that it runs and that the graph is really used). */
static void test_many_agents(void)
{
    int P = 200;
    polis_env *env = sg_env(
        P, 1000,
        "{\"max_groups\": 200, \"communication_length\": 3,"
        " \"social\": {\"groups\": [{}, {}, {}, {}, {}, {}, {}, {}]},"
        " \"pre_updates\": [[\"clear_temporary_relation\", {\"attr\": \"communication\"}]],"
        " \"post_updates\": [[\"split_score_to_group\", {\"attribute\": \"division_weight\"}]],"
        " \"actions\": [{\"family\": \"communicate\"}, {\"family\": \"share_map\"},"
        "  {\"family\": \"switch_group\"}]}",
        "{}", NULL);
    CHECK(env != NULL);
    if (!env) return;
    const polis_io *io = polis_env_io(env);
    polis_rng rng;
    polis_rng_seed(&rng, 5, 5);
    clock_t t0 = clock();
    int steps = 300;
    for (int t = 0; t < steps; t++) {
        random_legal(io, &rng);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    }
    double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
    fprintf(stderr, "%d agents, all-social random: %.0f steps/s\n", P, sec > 0 ? steps / sec : 0.0);
    const int32_t *deg = sg_obs(env, 0, "probe_degree");
    CHECK(deg[0] > 10); /* agent 0 shares its map with many others by now */
    polis_env_destroy(env);
}

int main(void)
{
    test_failing_allocator();
    test_no_allocation_in_step();
    test_many_agents();
    CHECK_DONE();
}
