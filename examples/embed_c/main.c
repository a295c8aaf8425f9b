/*
 * examples/embed_c — the smallest complete polis host: load a scenario, play random legal
 * actions for a number of steps (resetting when an episode ends) and print the speed.
 *
 *   embed_c SCENARIO [STEPS]        (default 100000 steps)
 *
 * Everything goes through the public embedding API in polis/polis.h; the buffers in
 * polis_io are mapped once and stay at the same address for the life of the env.
 */
/* clock_gettime is POSIX; say so for strict -std=c11 builds. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <polis/polis.h>
#include <polis/rng.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Each agent picks uniformly among the actions its mask marks legal. */
static void random_legal_actions(const polis_io *io, polis_rng *rng)
{
    for (int32_t a = 0; a < io->n_agents; a++) {
        const uint8_t *mask = io->masks + (size_t)a * (size_t)io->n_actions;
        uint32_t n_legal = 0;
        for (int32_t k = 0; k < io->n_actions; k++) n_legal += mask[k] != 0;
        int32_t pick = 0; /* "noop" is action 0 and always legal */
        uint32_t r = n_legal ? polis_rng_below(rng, n_legal) : 0;
        for (int32_t k = 0; k < io->n_actions && n_legal; k++) {
            if (mask[k] && r-- == 0) {
                pick = k;
                break;
            }
        }
        io->actions[a] = pick;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s SCENARIO [STEPS]\n", argv[0]);
        return 2;
    }
    long long steps = 100000;
    if (argc == 3) {
        char *end = NULL;
        steps = strtoll(argv[2], &end, 10);
        if (!*argv[2] || *end || steps <= 0) {
            fprintf(stderr, "%s: STEPS must be a positive integer, got '%s'\n", argv[0], argv[2]);
            return 2;
        }
    }

    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(argv[1], NULL, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        return 1;
    }
    printf("polis %s, scenario %s: %d agents, %d actions, %zu observation bytes per agent\n",
           polis_version(), polis_env_name(env), (int)polis_env_n_agents(env),
           (int)polis_env_n_actions(env), polis_env_io(env)->obs_size);

    const polis_io *io = polis_env_io(env);
    uint64_t seed = polis_env_default_seed(env);
    polis_rng rng;
    polis_rng_seed(&rng, seed, 54u); /* the policy's own stream, apart from the env's */

    int rc = 0;
    long long episodes = 0, done_steps = 0;
    double reward_sum = 0;
    double t0 = now_seconds();
    if (polis_env_reset(env, seed) != POLIS_OK) goto fail;
    while (done_steps < steps) {
        random_legal_actions(io, &rng);
        if (polis_env_step(env) != POLIS_OK) goto fail;
        done_steps++;
        for (int32_t a = 0; a < io->n_agents; a++) reward_sum += io->rewards[a];
        if (polis_env_done(env)) {
            episodes++;
            if (polis_env_reset(env, seed + (uint64_t)episodes) != POLIS_OK) goto fail;
        }
    }
    double dt = now_seconds() - t0;
    printf("%lld steps, %lld finished episodes, total reward %.3f, state hash %016" PRIx64 "\n",
           done_steps, episodes, reward_sum, polis_env_state_hash(env));
    printf("%.0f steps/s\n", dt > 0 ? (double)done_steps / dt : 0.0);
    polis_env_destroy(env);
    return rc;

fail:
    fprintf(stderr, "%s: %s\n", argv[0], polis_env_error(env));
    polis_env_destroy(env);
    return 1;
}
