/* fixture.h — helpers of the social plugin's tests: scenarios with the social plugin
 * and the social_probe driver, typed access to observation fields, and stepping with named
 * actions. */
#ifndef SOCIAL_TESTS_FIXTURE_H
#define SOCIAL_TESTS_FIXTURE_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

static char sg_scn_buf[1 << 17];

/* The scenario text: `agents` agents, the social plugin with params `social` (a JSON object)
 * and, unless probe is NULL, the probe with params `probe`. */
static inline const char *sg_scenario(int agents, int max_steps, const char *social,
                                      const char *probe)
{
    if (probe)
        snprintf(sg_scn_buf, sizeof sg_scn_buf,
                 "{\"agents\": %d, \"max_steps\": %d, \"plugins\": [{\"name\": \"social\", "
                 "\"params\": %s}, {\"name\": \"social_probe\", \"params\": %s}]}",
                 agents, max_steps, social, probe);
    else
        snprintf(sg_scn_buf, sizeof sg_scn_buf,
                 "{\"agents\": %d, \"max_steps\": %d, \"plugins\": [{\"name\": \"social\", "
                 "\"params\": %s}]}",
                 agents, max_steps, social);
    return sg_scn_buf;
}

static inline polis_env *sg_env(int agents, int max_steps, const char *social, const char *probe,
                                test_log *log)
{
    polis_env *env = test_env(sg_scenario(agents, max_steps, social, probe), log, NULL);
    if (env && polis_env_reset(env, 1) != POLIS_OK) {
        fprintf(stderr, "reset failed: %s\n", polis_env_error(env));
        polis_env_destroy(env);
        return NULL;
    }
    return env;
}

/* The creation error of a scenario expected to fail. */
static inline const char *sg_error(int agents, const char *social)
{
    return test_env_error(sg_scenario(agents, 100, social, NULL));
}

static inline const void *sg_obs(polis_env *env, int32_t agent, const char *name)
{
    polis_obs_field f;
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++) {
        if (polis_env_obs_field(env, i, &f) == POLIS_OK && strcmp(f.name, name) == 0) {
            const polis_io *io = polis_env_io(env);
            return io->obs + (size_t)agent * io->obs_size + f.offset;
        }
    }
    fprintf(stderr, "no observation field %s\n", name);
    return NULL;
}

static inline bool sg_has_obs(polis_env *env, const char *name)
{
    polis_obs_field f;
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++)
        if (polis_env_obs_field(env, i, &f) == POLIS_OK && strcmp(f.name, name) == 0) return true;
    return false;
}

/* probe_get[i] (NaN when absent). */
static inline float sg_q(polis_env *env, int i)
{
    const float *q = sg_obs(env, 0, "probe_get");
    return q ? q[i] : -12345.0f;
}

#define CHECK_NEAR(a, b)                                                                           \
    do {                                                                                           \
        double cn_a_ = (double)(a), cn_b_ = (double)(b);                                           \
        check_count++;                                                                             \
        if (!(fabs(cn_a_ - cn_b_) <= 1e-5)) {                                                      \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s == %s (%.9g vs %.9g)\n", __FILE__,       \
                    __LINE__, #a, #b, cn_a_, cn_b_);                                               \
        }                                                                                          \
    } while (0)

#define CHECK_ABSENT(a) CHECK(isnan((double)(a)))

/* A probe list observation ("probe_groups", ...) as "n: id id ...". */
static inline const char *sg_list(polis_env *env, const char *name)
{
    static char buf[512];
    const int32_t *l = sg_obs(env, 0, name);
    if (!l) return "(none)";
    int n = snprintf(buf, sizeof buf, "%d:", l[0]);
    for (int32_t i = 0; i < l[0] && n < (int)sizeof buf - 16; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", l[1 + i]);
    return buf;
}

static inline int32_t sg_action(polis_env *env, const char *name)
{
    int32_t id = polis_env_action_id(env, name);
    if (id < 0) fprintf(stderr, "no action %s\n", name);
    return id;
}

static inline bool sg_legal(polis_env *env, int32_t agent, const char *name)
{
    const polis_io *io = polis_env_io(env);
    int32_t id = sg_action(env, name);
    return id >= 0 && io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)id];
}

/* One step; names[a] is agent a's action (NULL = noop), n names given. */
static inline polis_status sg_step(polis_env *env, int n, const char *const *names)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) {
        io->actions[a] = 0;
        if (a < n && names[a]) {
            int32_t id = sg_action(env, names[a]);
            io->actions[a] = id < 0 ? 0 : id;
        }
    }
    polis_status st = polis_env_step(env);
    if (st) fprintf(stderr, "step failed: %s\n", polis_env_error(env));
    return st;
}

static inline polis_status sg_noop(polis_env *env) { return sg_step(env, 0, NULL); }

#endif
