/*
 * polis/metrics.h — the service of the `metrics` plugin (plugins/metrics): the paper's
 * evaluation metrics (seeds/000 Appendix A.5) of the current episode, so far.
 *
 *   const polis_metrics_api *m = host->service(ctx, POLIS_METRICS_SERVICE);
 *   double f;
 *   if (m && m->value(m->self, "fairness", &f)) ...
 *
 * Keys are the flattened names of the numbers in the plugin's "metrics" rendering
 * (README): "reward.mean", "reward.total", "fairness", "oracle", "total_reward_normalised"
 * (the paper's normalised reward: the sum of the returns over the oracle),
 * "mean_reward_normalised" (the mean per agent over the oracle; "reward_normalised" and
 * "total_normalised" are the old names of the two, still answered),
 * "completion.<recipe>", "degree.agent.in_mean", "split_ratio", "events.<name>" (the event
 * types of the count_events parameter), ... value() returns false for an unknown key and for
 * a metric that is undefined now (null in the rendering, e.g. fairness while every reward is
 * 0, or the oracle in a build without GLPK). Valid after create; the values describe the episode in
 * progress (or the last one, once it ended) and restart at every reset.
 *
 * Service version 1. Functions are only ever appended; check struct_size.
 */
#ifndef POLIS_METRICS_H
#define POLIS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POLIS_METRICS_SERVICE "metrics"
#define POLIS_METRICS_VERSION 1

typedef struct polis_metrics_api {
    uint32_t version;     /* POLIS_METRICS_VERSION of the provider */
    uint32_t struct_size; /* sizeof(polis_metrics_api) of the provider */
    void *self;           /* the provider's state; pass it back as the first argument */
    bool (*value)(void *self, const char *key, double *out);
    /* The oracle's value and the executions of recipe k in its solution (society scenarios
     * only); false when there is no oracle or k is not a recipe. */
    bool (*oracle)(void *self, int32_t recipe, double *value, int64_t *executions);
} polis_metrics_api;

#ifdef __cplusplus
}
#endif
#endif
