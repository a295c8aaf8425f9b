/*
 * survival_stats — plays N episodes of a survival scenario with a policy and prints what a
 * Crafter/Craftax paper reports: the success rate of every achievement (the share of
 * player-episodes that unlocked it), the Crafter score (geometric mean of 1 + the rates in
 * percent, minus 1), the mean return and episode length (with standard errors), deaths by
 * cause, the share of crafts that used a table or furnace placed by another player, and the
 * crafts beside the crafter's own table and furnace and beside another's (seeds/003 Fig. 4).
 *
 *   survival_stats SCENARIO [--policy NAME] [--episodes N] [--seed S] [--agents N]
 *   survival_stats SCENARIO --time-resets N     CPU time of one reset (world generation)
 *
 * Built on the public API only (polis.h): the numbers come from the survival.* bus events.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "polis/polis.h"
#include "core.h"

typedef struct tally {
    int32_t ev_ach, ev_death, ev_craft;
    uint32_t *ach; /* [agents] bits this episode */
    long deaths[SV_N_CAUSES];
    long crafts, crafts_others;
    long table_own, table_other, furnace, furnace_own, furnace_other; /* seeds/003 Fig. 4 */
} tally;

/* Whether the crafter's own station, and another player's, is among n owners. */
static void owners(const int32_t *f, int32_t n, int32_t me, long *own, long *other)
{
    bool mine = false, theirs = false;
    for (int32_t k = 0; k < n && k < 8; k++) {
        mine |= f[k] == me;
        theirs |= f[k] >= 0 && f[k] != me;
    }
    *own += mine;
    *other += theirs;
}

static void on_event(void *ud, const polis_event *ev)
{
    tally *t = ud;
    const int32_t *f = ev->data;
    if (ev->type == t->ev_ach) t->ach[f[0]] |= 1u << f[1];
    if (ev->type == t->ev_death && f[1] >= 0 && f[1] < SV_N_CAUSES) t->deaths[f[1]]++;
    if (ev->type == t->ev_craft) {
        t->crafts++;
        t->crafts_others += (f[2] >= 0 && f[2] != f[0]) || (f[3] >= 0 && f[3] != f[0]);
        /* agent, action, table_owner, furnace_owner, tables, furnaces, table_1..8,
         * furnace_1..8 */
        owners(f + 6, f[4], f[0], &t->table_own, &t->table_other);
        if (f[1] == SV_MAKE_IRON_PICKAXE || f[1] == SV_MAKE_IRON_SWORD) {
            t->furnace++;
            owners(f + 14, f[5], f[0], &t->furnace_own, &t->furnace_other);
        }
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL, *policy = "random";
    long episodes = 100, seed = 1, agents = 0, resets = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
            policy = argv[++i];
        else if (strcmp(argv[i], "--episodes") == 0 && i + 1 < argc)
            episodes = atol(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = atol(argv[++i]);
        else if (strcmp(argv[i], "--time-resets") == 0 && i + 1 < argc)
            resets = atol(argv[++i]);
        else if (strcmp(argv[i], "--agents") == 0 && i + 1 < argc)
            agents = atol(argv[++i]);
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: survival_stats SCENARIO [--policy NAME] [--episodes N] "
                            "[--seed S] [--agents N] [--time-resets N]\n");
            return 2;
        }
    }
    if (!path || episodes < 1) {
        fprintf(stderr, "survival_stats: need a scenario and --episodes >= 1\n");
        return 2;
    }
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    char overrides[64];
    if (agents > 0) {
        snprintf(overrides, sizeof overrides, "{\"agents\": %ld}", agents);
        o.overrides = overrides;
    }
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_file(path, &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "survival_stats: %s\n", err.message);
        return 1;
    }
    if (resets > 0) {
        /* CPU time (not wall time: the machine may be shared) of N resets, each a new world */
        clock_t t0 = clock();
        for (long k = 0; k < resets; k++) polis_env_reset(env, (uint64_t)(seed + k));
        double us = (double)(clock() - t0) / CLOCKS_PER_SEC * 1e6 / (double)resets;
        printf("%s: %ld resets, %.1f us of CPU time per reset (world generation, observations "
               "and masks)\n",
               path, resets, us);
        polis_env_destroy(env);
        return 0;
    }
    int32_t pid = polis_env_policy_find(env, policy), n = polis_env_n_agents(env);
    if (pid < 0) {
        fprintf(stderr, "survival_stats: no policy \"%s\"\n", policy);
        polis_env_destroy(env);
        return 2;
    }
    tally t = {0};
    t.ev_ach = polis_env_event_find(env, "survival.achievement");
    t.ev_death = polis_env_event_find(env, "survival.death");
    t.ev_craft = polis_env_event_find(env, "survival.crafted");
    t.ach = calloc((size_t)n, sizeof *t.ach);
    polis_env_subscribe(env, -1, on_event, &t);
    const polis_io *io = polis_env_io(env);
    long success[SV_N_ACHIEVEMENTS] = {0}, steps = 0;
    double ret = 0.0, len_sq = 0.0;
    for (long e = 0; e < episodes; e++) {
        memset(t.ach, 0, sizeof *t.ach * (size_t)n);
        if (polis_env_reset(env, (uint64_t)(seed + e)) != POLIS_OK) break;
        long steps0 = steps;
        while (!polis_env_done(env)) {
            if (polis_env_policy_act(env, pid, NULL, 0) != POLIS_OK ||
                polis_env_step(env) != POLIS_OK) {
                fprintf(stderr, "survival_stats: %s\n", polis_env_error(env));
                return 1;
            }
            steps++;
            for (int32_t a = 0; a < n; a++) ret += io->rewards[a];
        }
        len_sq += (double)(steps - steps0) * (double)(steps - steps0);
        for (int32_t a = 0; a < n; a++)
            for (int k = 0; k < SV_N_ACHIEVEMENTS; k++) success[k] += t.ach[a] >> k & 1u;
    }
    double pe = (double)episodes * n, logsum = 0.0;
    printf("%s: policy %s, %ld episodes x %d player%s, seeds %ld..%ld\n", path, policy, episodes, n,
           n == 1 ? "" : "s", seed, seed + episodes - 1);
    /* standard errors: of the mean length over episodes; of a rate as a binomial share of
     * player-episodes (players of one episode are not independent, so a lower bound there) */
    double mean_len = (double)steps / (double)episodes;
    double var_len =
        episodes > 1 ? (len_sq - (double)episodes * mean_len * mean_len) / (double)(episodes - 1)
                     : 0.0;
    printf("mean episode length %.1f steps (standard error %.2f), mean return per player "
           "%.2f\n",
           mean_len, sqrt(var_len > 0 ? var_len / (double)episodes : 0.0), ret / pe);
    printf("%-22s %8s %6s\n", "achievement", "success", "s.e.");
    for (int k = 0; k < SV_N_ACHIEVEMENTS; k++) {
        double rate = 100.0 * (double)success[k] / pe;
        logsum += log(1.0 + rate);
        printf("%-22s %7.1f%% %6.2f\n", sv_achievement_names[k], rate,
               sqrt(rate * (100.0 - rate) / pe));
    }
    printf("Crafter score %.2f%%\n", exp(logsum / SV_N_ACHIEVEMENTS) - 1.0);
    printf("deaths:");
    for (int c = 1; c < SV_N_CAUSES; c++) printf(" %s %ld", sv_cause_names[c], t.deaths[c]);
    printf("\ncrafts %ld, with another player's table or furnace %ld (%.1f%%)\n", t.crafts,
           t.crafts_others, t.crafts ? 100.0 * (double)t.crafts_others / (double)t.crafts : 0.0);
    printf("tool use (seeds/003 Fig. 4): table crafts %ld, beside an own table %ld (%.1f%%), "
           "beside another's %ld; furnace crafts %ld, own %ld, another's %ld\n",
           t.crafts, t.table_own, t.crafts ? 100.0 * (double)t.table_own / (double)t.crafts : 0.0,
           t.table_other, t.furnace, t.furnace_own, t.furnace_other);
    free(t.ach);
    polis_env_destroy(env);
    return 0;
}
