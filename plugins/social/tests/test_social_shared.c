/* social_state "shared": the matrix held once per env (the "shared_observations" host API)
 * equals every agent's per-agent social_state matrix at every step of random-social
 * Exploration episodes (two envs, the same seed and actions, one with social_state true and
 * one with "shared"); everything else each agent observes, its masks and rewards are the
 * same too. Bad values of the parameter are refused at their JSON path. */
#include "fixture.h"

#define EXPLORATION SOCIAL_SOURCE_DIR "/../../rulesets/exploration/exploration.json"

static polis_env *open_mode(const char *mode)
{
    char ov[256];
    snprintf(ov, sizeof ov, "{\"agents\": 12, \"plugins.social.params.social_state\": %s}", mode);
    polis_options o = test_options(NULL, NULL);
    o.overrides = ov;
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(EXPLORATION, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", mode, err.message);
        return NULL;
    }
    return env;
}

/* Uniform over every legal action (social actions are most of them), from the policy's own
 * generator. */
static void random_actions(const polis_io *io, polis_rng *r, int32_t *out)
{
    for (int32_t a = 0; a < io->n_agents; a++) {
        const uint8_t *m = io->masks + (size_t)a * (size_t)io->n_actions;
        int32_t n = 0;
        for (int32_t k = 0; k < io->n_actions; k++) n += m[k];
        int32_t pick = (int32_t)polis_rng_below(r, (uint32_t)n);
        for (int32_t k = 0; k < io->n_actions; k++)
            if (m[k] && pick-- == 0) {
                out[a] = k;
                break;
            }
    }
}

/* Every per-agent field of `per` except social_state equals the same field of `sh`, and
 * `sh` has no per-agent social_state. */
static bool same_records(polis_env *per, polis_env *sh)
{
    const polis_io *pi = polis_env_io(per), *si = polis_env_io(sh);
    bool ok = !sg_has_obs(sh, "social_state");
    for (int32_t i = 0; i < polis_env_n_obs_fields(per); i++) {
        polis_obs_field f;
        polis_env_obs_field(per, i, &f);
        if (strcmp(f.name, "social_state") == 0) continue;
        for (int32_t a = 0; a < pi->n_agents; a++)
            ok &= memcmp(pi->obs + (size_t)a * pi->obs_size + f.offset, sg_obs(sh, a, f.name),
                         f.nbytes) == 0;
    }
    size_t n = (size_t)pi->n_agents;
    ok &= memcmp(pi->masks, si->masks, n * (size_t)pi->n_actions) == 0;
    ok &= memcmp(pi->rewards, si->rewards, n * sizeof(float)) == 0;
    ok &= memcmp(pi->terminations, si->terminations, n) == 0;
    ok &= memcmp(pi->truncations, si->truncations, n) == 0;
    return ok;
}

static void test_equal_to_per_agent(void)
{
    polis_env *per = open_mode("true"), *sh = open_mode("\"shared\"");
    CHECK(per && sh);
    if (!per || !sh) {
        polis_env_destroy(per);
        polis_env_destroy(sh);
        return;
    }
    CHECK_EQ_INT(polis_env_n_shared_fields(per), 0);
    CHECK_EQ_INT(polis_env_n_shared_fields(sh), 1);
    polis_obs_field f;
    CHECK_EQ_INT(polis_env_shared_field(sh, 0, &f), POLIS_OK);
    CHECK_EQ_STR(f.name, "social_state");
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I8);
    size_t size = 0;
    const int8_t *shared = polis_env_shared_obs(sh, &size);
    const int32_t N = f.shape[0];
    CHECK_EQ_INT(f.shape[1], N);
    CHECK(N > 12);
    CHECK_EQ_INT(f.nbytes, (size_t)N * (size_t)N);
    CHECK(size >= f.nbytes);
    const polis_io *pi = polis_env_io(per), *si = polis_env_io(sh);
    polis_rng r;
    polis_rng_seed(&r, 5, 77);
    int32_t acts[12];
    long mismatches = 0, edges_seen = 0, changed_steps = 0;
    /* two episodes: the second starts from a reset (the matrix rebuilt whole) */
    for (int ep = 0; ep < 2; ep++) {
        CHECK_EQ_INT(polis_env_reset(per, 40 + (uint64_t)ep), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(sh, 40 + (uint64_t)ep), POLIS_OK);
        CHECK(polis_env_shared_obs(sh, NULL) == shared);
        int8_t prev[4096];
        const bool track = (size_t)N * (size_t)N <= sizeof prev;
        if (track) memcpy(prev, shared, (size_t)N * (size_t)N);
        for (int t = 0; t < 150; t++) {
            for (int32_t a = 0; a < pi->n_agents; a++)
                mismatches += memcmp(sg_obs(per, a, "social_state"), shared, f.nbytes) != 0;
            mismatches += !same_records(per, sh);
            for (size_t i = 0; i < f.nbytes; i++) edges_seen += shared[i] == 1;
            if (track) {
                changed_steps += memcmp(prev, shared, (size_t)N * (size_t)N) != 0;
                memcpy(prev, shared, (size_t)N * (size_t)N);
            }
            if (polis_env_done(per)) break;
            random_actions(pi, &r, acts);
            memcpy(pi->actions, acts, sizeof acts);
            memcpy(si->actions, acts, sizeof acts);
            CHECK_EQ_INT(polis_env_step(per), POLIS_OK);
            CHECK_EQ_INT(polis_env_step(sh), POLIS_OK);
        }
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(edges_seen > 1000);   /* the graph was not empty ... */
    CHECK(changed_steps > 100); /* ... and changed at most steps */
    polis_env_destroy(per);
    polis_env_destroy(sh);
}

static void test_bad_values(void)
{
    const char *pre = "<string>: plugins[0]: plugin \"social\" init failed: social: "
                      "plugins[0].params.social_state: ";
    char want[512];
    snprintf(want, sizeof want, "%sexpected true, false or \"shared\", got \"share\"", pre);
    CHECK_EQ_STR(sg_error(4, "{\"social_state\": \"share\"}"), want);
    snprintf(want, sizeof want, "%sexpected true, false or \"shared\", got a number", pre);
    CHECK_EQ_STR(sg_error(4, "{\"social_state\": 1}"), want);
    snprintf(want, sizeof want, "%sexpected true, false or \"shared\", got null", pre);
    CHECK_EQ_STR(sg_error(4, "{\"social_state\": null}"), want);
    /* the three good values */
    polis_env *env = sg_env(4, 10, "{\"social_state\": false}", NULL, NULL);
    CHECK(env && !sg_has_obs(env, "social_state") && polis_env_n_shared_fields(env) == 0);
    polis_env_destroy(env);
    env = sg_env(4, 10, "{\"social_state\": true}", NULL, NULL);
    CHECK(env && sg_has_obs(env, "social_state") && polis_env_n_shared_fields(env) == 0);
    polis_env_destroy(env);
    env = sg_env(4, 10, "{\"social_state\": \"shared\"}", NULL, NULL);
    CHECK(env && !sg_has_obs(env, "social_state") && polis_env_n_shared_fields(env) == 1);
    polis_env_destroy(env);
}

int main(void)
{
    test_bad_values();
    test_equal_to_per_agent();
    CHECK_DONE();
}
