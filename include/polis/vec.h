/*
 * polis/vec.h — vectorised envs: M envs of one scenario stepped together into one set of
 * buffers, optionally by a pool of threads (docs/kernel.md, "Vectorised envs"). The
 * engine/vec module implements them in libpolis.
 */
#ifndef POLIS_VEC_H
#define POLIS_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"

POLIS_API_BEGIN

/*
 * A polis_vec is M envs created from one scenario and stepped together, in one call, into
 * one set of contiguous buffers, optionally by a pool of T threads.
 *
 * Buffers: polis_vec_io(vec) has one row per agent of every env, env-major: env k's agent a
 * is row k * n + a (n = polis_vec_agents_per_env). io->n_agents is M * n; n_actions and
 * obs_size are the scenario's. Each env reads and writes its own slice of these buffers
 * directly (polis_env_io of env k points into them), so nothing is copied. The pointers
 * stay valid and fixed until polis_vec_destroy.
 *
 * Seeds: polis_vec_reset(vec, seed) resets env k with polis_vec_env_seed(seed, k, 0); the
 * e-th automatic reset of env k after that uses polis_vec_env_seed(seed, k, e). An env of a
 * vec is therefore the same episode, bit for bit, as a lone env reset with that seed and
 * given the same actions, and results never depend on the number of threads.
 *
 * Auto-reset ("next-step", as Gymnasium names it): when an env's episode ends (every agent
 * terminated or truncated) its rows keep the final step's observations, rewards,
 * terminations and truncations (masks allow only noop). The NEXT polis_vec_step does not
 * step that env: it resets it instead, ignoring (and not validating) its actions, and its
 * rows then hold the first observation and masks of the new episode, rewards 0, every flag
 * 0, and polis_vec_autoreset(vec)[k] == 1. Every other env steps normally and has
 * autoreset 0. So a transition is (obs, action) -> (reward, termination, truncation, next
 * obs) in every row whose env has autoreset == 0 after the call.
 *
 * Threads: n_threads == 1 steps every env on the calling thread. With n_threads = T > 1, T-1
 * worker threads start at create and live until destroy; a call either hands the envs to
 * them (each thread, the calling one included, steps its own contiguous block first, then
 * helps with what is left of the others') or, when handing off costs more than it saves
 * (a few small envs), steps every env on the calling thread: the vec times a few calls each
 * way now and then and runs the rest the faster way. Which thread steps an env never
 * changes a result. Workers wait for work by spinning briefly, yielding, then sleeping. No
 * thread is created and nothing is allocated per step. Plugin callbacks, and the allocator
 * and log callbacks of polis_options, may then run on worker threads, several envs at once:
 * with T > 1 they must be thread-safe (the default allocator is; Lua scripts allocate while
 * they run). A vec is used by one thread at a time, like an env.
 *
 * Errors: every failure names the env ("env 3: <the env's own message>"); when several envs
 * fail in one call, the lowest index is reported, whatever T is. Actions are checked before
 * any env steps: an id outside [0, n_actions) fails the call with POLIS_ERR_ACTION and
 * nothing runs, so the caller may fix the actions and step again. Any other failure of a
 * step or reset leaves the vec needing polis_vec_reset (steps fail with POLIS_ERR_STATE).
 */
typedef struct polis_vec polis_vec;

/* Creates n_envs envs from one scenario with the same options (allocator, plugin path,
 * overrides, no_observations, ...) and starts n_threads - 1 worker threads. n_envs must be
 * at least 1 and n_threads in [1, n_envs] (a thread with no env to step is refused, not
 * clamped); n_envs * agents must fit in int32. Failures fill err: POLIS_ERR_INVALID for
 * bad counts ("polis_vec: n_threads is 3, expected 1 to n_envs (2)"), the env's status and
 * "env k: <message>" when env k cannot be created, POLIS_ERR_LIMIT when a thread cannot
 * start. The envs are not reset yet. */
polis_status polis_vec_create_file(const char *path, const polis_options *opts, int32_t n_envs,
                                   int32_t n_threads, polis_vec **out, polis_error *err);
polis_status polis_vec_create_json(const char *json, size_t len, const polis_options *opts,
                                   int32_t n_envs, int32_t n_threads, polis_vec **out,
                                   polis_error *err);
/* Stops the workers, destroys the envs and frees the buffers. NULL is a no-op. */
void polis_vec_destroy(polis_vec *vec);

/* Resets every env (env k with polis_vec_env_seed(seed, k, 0)) and restarts the episode
 * counts; autoreset flags are 0 afterwards. */
polis_status polis_vec_reset(polis_vec *vec, uint64_t seed);
/* Steps every env with its rows of io->actions, auto-resetting envs whose episode ended in
 * the previous call (see above). POLIS_ERR_STATE before the first reset and after a failed
 * call; POLIS_ERR_ACTION for a bad id (nothing ran). */
polis_status polis_vec_step(polis_vec *vec);
/* The message of the last failed call (empty after a success); valid until the next call. */
const char *polis_vec_error(const polis_vec *vec);

/* The shared buffers (see above). */
const polis_io *polis_vec_io(const polis_vec *vec);
/* [n_envs]: 1 if the last polis_vec_step reset env k instead of stepping it. */
const uint8_t *polis_vec_autoreset(const polis_vec *vec);

/* Episode statistics, kept by every polis_vec_reset and polis_vec_step on the threads that
 * step the envs (the figures of Gymnasium's RecordEpisodeStatistics, per row). A row's
 * episode starts at the reset of its env (length 0, return 0); each step of the env adds 1
 * to its length and its reward to its return, and the row's episode ends in the step where
 * its termination or truncation becomes 1. An env's episode ends in the step where its last
 * agent's does (the next call resets it: polis_vec_autoreset). */
typedef struct polis_vec_episodes {
    int32_t n_rows; /* io->n_agents */
    int32_t n_envs;
    int32_t rows_ended;       /* rows with ended[row] == 1 */
    int32_t envs_ended;       /* envs with env_ended[k] == 1 */
    const uint8_t *ended;     /* [n_rows]: 1 if the row's episode ended in the last call */
    const float *returns;     /* [n_rows]: the return of the row's last ended episode (0 until
                               * one ends after polis_vec_reset) */
    const int64_t *lengths;   /* [n_rows]: its length in steps */
    const uint8_t *env_ended; /* [n_envs]: 1 if env k's episode ended in the last call */
} polis_vec_episodes;
/* The vec's statistics, borrowed: the pointers and the struct stay valid until
 * polis_vec_destroy, and every reset and step updates what they point to. */
const polis_vec_episodes *polis_vec_episode_stats(const polis_vec *vec);
int32_t polis_vec_n_envs(const polis_vec *vec);
int32_t polis_vec_n_threads(const polis_vec *vec);
int32_t polis_vec_agents_per_env(const polis_vec *vec);
/* Env k, borrowed, for introspection: names, observation layout, describe, render,
 * state hash. Do not step, reset or destroy it. NULL if k is out of range. */
polis_env *polis_vec_env(polis_vec *vec, int32_t k);
/* Env k's shared observation fields (polis/env.h, "shared observation fields"): its shared
 * buffer, *size bytes (may be NULL), laid out as polis_env_shared_field(polis_vec_env(vec,
 * k), ...) says (the same for every env of the vec); NULL (size 0) when the scenario has no
 * shared field or k is out of range. Each env keeps its own; borrowed like
 * polis_env_shared_obs (since 0.9). */
const void *polis_vec_shared_obs(const polis_vec *vec, int32_t k, size_t *size);
/* Episodes env k started since the last polis_vec_reset, minus one (0 during the first). */
int64_t polis_vec_episode(const polis_vec *vec, int32_t k);
/* The reset seed of env k's episode e after polis_vec_reset(vec, seed):
 *   mix(mix(seed + mix(k)) + e), mix = SplitMix64's output function applied to x +
 *   0x9e3779b97f4a7c15 (k and e as unsigned 64-bit). */
uint64_t polis_vec_env_seed(uint64_t seed, int32_t k, int64_t episode);

POLIS_API_END
#endif
