/* fixture.h — helpers for the society tests: envs from scenario strings, actions by name,
 * observation fields by name, and a log of bus events as text lines
 * ("resource.picked agent=0 resource=0 x=1 y=1 amount=1 left=4"). */
#ifndef SOCIETY_TESTS_FIXTURE_H
#define SOCIETY_TESTS_FIXTURE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "polis/plugin.h"
#include "polis/polis.h"
#include "testutil.h"

/* A scenario with `agents` agents and society's params (a JSON object text). plugins is
 * appended to the plugins array after society (e.g. ", \"resource_pack\""), extra inside the
 * top-level object (e.g. ", \"scripts\": [...]"); both may be "". Free the result. */
static inline char *soc_scenario_plugins(int agents, int max_steps, const char *params,
                                         const char *plugins, const char *extra)
{
    size_t n = strlen(params) + strlen(plugins) + strlen(extra) + 256;
    char *s = malloc(n);
    snprintf(s, n,
             "{\"agents\": %d, \"max_steps\": %d, \"plugins\": [{\"name\": \"society\", "
             "\"params\": %s}%s]%s}",
             agents, max_steps, params, plugins, extra);
    return s;
}

static inline char *soc_scenario(int agents, int max_steps, const char *params, const char *extra)
{
    return soc_scenario_plugins(agents, max_steps, params, "", extra);
}

static inline polis_env *soc_open(const char *json, test_log *log, test_alloc *al)
{
    polis_options o = test_options(log, al);
    o.base_dir = POLIS_SOURCE_DIR "/rulesets/society/tests";
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) != POLIS_OK) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return NULL;
    }
    return env;
}

/* The creation error of a scenario expected to fail. */
static inline const char *soc_error(const char *json)
{
    static polis_error err;
    polis_options o = test_options(NULL, NULL);
    o.base_dir = POLIS_SOURCE_DIR "/rulesets/society/tests";
    polis_env *env = NULL;
    if (polis_env_create_json(json, strlen(json), &o, &env, &err) == POLIS_OK) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    return err.message;
}

static inline int32_t soc_action(polis_env *env, const char *name)
{
    return test_action_id(env, name);
}

/* Sets every agent's action: names[a] ("noop" when NULL). */
static inline void soc_set(polis_env *env, const char *const *names)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++)
        io->actions[a] = names[a] ? soc_action(env, names[a]) : 0;
}

static inline polis_status soc_step(polis_env *env, const char *const *names)
{
    return test_step_names(env, names);
}

static inline const void *soc_field(polis_env *env, int32_t agent, const char *name,
                                    polis_obs_field *out)
{
    return test_obs_field(env, agent, name, out);
}

/* grid[c][x][y] of an agent's "grid" field. */
static inline int soc_grid(polis_env *env, int32_t agent, int c, int x, int y)
{
    polis_obs_field f;
    memset(&f, 0, sizeof f);
    const int16_t *g = soc_field(env, agent, "grid", &f);
    if (!g) return -99999;
    return g[((size_t)c * (size_t)f.shape[1] + (size_t)x) * (size_t)f.shape[2] + (size_t)y];
}

static inline int soc_inv(polis_env *env, int32_t agent, int r)
{
    return ((const int32_t *)soc_field(env, agent, "inventory", NULL))[r];
}

static inline int soc_pos(polis_env *env, int32_t agent, int k)
{
    return ((const int32_t *)soc_field(env, agent, "position", NULL))[k];
}

static inline int soc_mask(polis_env *env, int32_t agent, const char *action)
{
    const polis_io *io = polis_env_io(env);
    return io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)soc_action(env, action)];
}

/* ---- an event log ------------------------------------------------------------------------ */

typedef struct soc_events {
    polis_env *env;
    char text[1 << 16];
    size_t len;
} soc_events;

static inline void soc_events_fn(void *ud, const polis_event *ev)
{
    soc_events *l = ud;
    char line[512];
    int n = snprintf(line, sizeof line, "%s", polis_env_event_name(l->env, ev->type));
    for (int32_t i = 0; i < polis_env_event_n_fields(l->env, ev->type); i++) {
        const char *fname;
        polis_ftype ft;
        size_t off;
        polis_env_event_field(l->env, ev->type, i, &fname, &ft, &off);
        int32_t v;
        memcpy(&v, (const char *)ev->data + off, sizeof v);
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%d", fname, (int)v);
    }
    if (l->len + (size_t)n + 2 < sizeof l->text) {
        memcpy(l->text + l->len, line, (size_t)n);
        l->len += (size_t)n;
        l->text[l->len++] = '\n';
        l->text[l->len] = '\0';
    }
}

static inline void soc_events_attach(soc_events *l, polis_env *env)
{
    memset(l, 0, sizeof *l);
    l->env = env;
    polis_env_subscribe(env, -1, soc_events_fn, l);
}

static inline void soc_events_clear(soc_events *l)
{
    l->len = 0;
    l->text[0] = '\0';
}

#endif
