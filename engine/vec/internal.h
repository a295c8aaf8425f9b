/*
 * engine/vec/internal.h — what the vec's tests see of its thread pool: the choice a call
 * makes between stepping every env on the calling thread and handing envs to the workers
 * (docs/performance-log.md, "Threads that hand off only what pays"), forced or counted. Results
 * never depend on that choice; only the time does.
 */
#ifndef POLIS_VEC_INTERNAL_H
#define POLIS_VEC_INTERNAL_H

#include "core/env.h"

/* How a vec with T > 1 threads runs its calls. ADAPT (the default) times a few calls of
 * each kind now and then and runs the rest the faster way; SERIAL runs every call on the
 * calling thread alone, PARALLEL hands every call to the pool. */
typedef enum polis__vec_pool {
    POLIS__VEC_ADAPT = 0,
    POLIS__VEC_SERIAL = 1,
    POLIS__VEC_PARALLEL = 2
} polis__vec_pool;

POLIS_INTERNAL void polis__vec_set_pool(polis_vec *vec, polis__vec_pool pool);
/* Calls (steps and resets) run on the calling thread alone, and handed to the pool, since
 * create. A vec of one thread counts every call as serial. */
POLIS_INTERNAL void polis__vec_pool_calls(const polis_vec *vec, int64_t *serial, int64_t *parallel);
/* The probes finished since create, and how many of them found handing off faster. */
POLIS_INTERNAL void polis__vec_pool_probes(const polis_vec *vec, int64_t *probes,
                                           int64_t *parallel_verdicts);
/* The probe's verdict on n timed calls of each kind (nanoseconds, reordered in place):
 * true when the pool's calls are faster by a clear margin, judged on medians so that a
 * call interrupted by the scheduler does not decide. */
POLIS_INTERNAL bool polis__vec_prefer_parallel(int64_t *serial_ns, int64_t *parallel_ns, int32_t n);

/* ---- resets made ahead (ahead.c, the "reset_ahead" host API) ---- */
/* Whether a plugin of env registered a prepare function. */
POLIS_INTERNAL bool polis__env_can_prepare(const polis_env *env);
/* Calls env's prepare functions for a reset with `seed`; any thread, while nothing resets or
 * destroys env (the vec's lock on the env). */
POLIS_INTERNAL void polis__env_prepare(polis_env *env, uint64_t seed);
/* Resets env k made ahead since create: prepared by an idle worker, and the env's resets. */
POLIS_INTERNAL void polis__vec_ahead_stats(const polis_vec *vec, int64_t *prepared,
                                           int64_t *resets);

#endif
