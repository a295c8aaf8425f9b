/*
 * internal.h — the metrics plugin's state, shared by its two parts:
 *   metrics.c     the plugin, and what any game can use: returns, fairness, steps, counts of
 *                 the events named in count_events
 *   adasociety.c  AdaSociety's metrics: the oracle, normalised rewards, completion rates,
 *                 degrees, the split ratio; it reads the game only through the public
 *                 services polis/society.h and polis/social.h
 * The oracle's solver is the core (core.h), which knows nothing of the engine.
 *
 * Names shared between the files start with metrics_.
 */
#ifndef METRICS_INTERNAL_H
#define METRICS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "polis/metrics.h"
#include "polis/plugin.h"

typedef struct mparams {
    bool oracle;
    int64_t oracle_time_limit;
    const char *split_attribute;
    const char *split_jobs;
    const char *count_events;
} mparams;

typedef struct metrics_ada metrics_ada; /* adasociety.c */

#define METRICS_MAX_EVENTS 32 /* names in count_events */
#define METRICS_EVENT_NAME 64 /* event type names: 1..63 characters */

/* One event type whose publications the episode counts (count_events). */
typedef struct metrics_count {
    char name[METRICS_EVENT_NAME];
    int64_t n; /* this episode */
} metrics_count;

typedef struct metrics {
    const polis_host *h;
    polis_ctx *ctx;
    mparams p;
    int32_t n;
    double *ret; /* [n] episode returns */
    int64_t steps;
    metrics_count *counts; /* [n_counts] */
    int32_t n_counts;
    metrics_ada *ada; /* AdaSociety's part; NULL only while init fails */
    polis_metrics_api api;
} metrics;

/* ---- metrics.c: the rendering's JSON --------------------------------------------------- */

/* A number: integers exactly, others with 10 significant digits, null when !ok or not
 * finite. */
void metrics_num(const metrics *m, polis_text *t, bool ok, double v);
/* A quoted string with JSON's escapes. */
void metrics_str(const metrics *m, polis_text *t, const char *s);

/* ---- adasociety.c: AdaSociety's metrics ------------------------------------------------- */

/* At init: the part's state and its parameters (split_jobs); POLIS_ERR_CONFIG with a message
 * for a bad value. */
polis_status metrics_ada_init(metrics *m);
/* At start: finds society's and social's services (either may be absent), subscribes to
 * recipe.produced and solves the oracle. */
polis_status metrics_ada_start(metrics *m);
void metrics_ada_reset(metrics *m);
/* Appends AdaSociety's members to the rendering's object, after "fairness": "oracle" and the
 * normalised rewards always (null without an oracle), "completion", "recipes" (and
 * "oracle_status") with society, "degree" and "split_ratio" with social. mean and total are
 * the returns' (metrics.c). */
void metrics_ada_render(const metrics *m, polis_text *t, double mean, double total);
/* The value of one of AdaSociety's keys; false when unknown or undefined. */
bool metrics_ada_value(const metrics *m, const char *key, double mean, double total, double *out);
/* The service's oracle(): the oracle's value and recipe k's executions in its solution. */
bool metrics_ada_oracle(const metrics *m, int32_t recipe, double *value, int64_t *executions);
void metrics_ada_destroy(metrics *m);

#endif
