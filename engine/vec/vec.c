/*
 * engine/vec/vec.c — vectorised envs (polis_vec, declared in polis.h): M envs of one scenario
 * stepped in one call into one set of shared buffers, by a persistent pool of T threads,
 * with next-step auto-reset.
 *
 * Zero copy: each env is created over its slice of the shared buffers (polis__env_create
 * with an io provider), so the kernel writes observations, masks, rewards and flags where
 * the caller reads them. The kernel's per-agent flags are also the env's own state (a
 * terminated agent stays terminated), which is why the auto-reset is "next-step": the
 * final step's rows are left as the env wrote them, and the reset happens in the following
 * call, in place of that env's step.
 *
 * Threads: T-1 workers start at create. A call that hands off publishes the job by bumping
 * a generation counter; every thread, the caller included, then claims runs of envs, first
 * from its own block (so an env tends to stay in one core's cache), then from the others'
 * blocks, all of a block whose owner has not started (asleep, or without a core) but only
 * single envs, and only while STEAL_MIN are left, of one whose owner runs (moving an env's
 * state to the other core costs more than waiting for a running owner's last envs), from
 * counters tagged with the generation (a worker that wakes late finds the tag changed and
 * claims nothing), and counts the envs it finished. A block's envs are claimed in an order
 * that puts those that reset in the call first, one claim each (order_blocks): a reset costs
 * many steps, and the envs behind it then go to whichever thread is free. The caller returns
 * when all are finished, so a worker that cannot run (its core is taken, by the caller itself
 * when both threads share one) costs nothing but the hand-off: the caller steps its envs.
 * Whether a call hands off at all is measured: a hand-off costs more than two small envs'
 * steps, so the pool times a few calls each way now and then and runs the rest the faster
 * way ("whether a call hands off" below; docs/performance-log.md, "Threads that hand off only
 * what pays").
 * A worker with nothing left to claim may run, until the next call is published, the
 * prepare functions of envs' next resets ("resets made ahead" below: a game's world made on
 * otherwise idle time; docs/kernel.md, "Resets made ahead").
 * Waiting spins a few pause instructions (a step of a small game takes microseconds, less
 * than a sleep and wake-up costs), then yields the core (sched_yield: the thread it waits
 * for may be the one that wants it), and only then sleeps on a condition variable. The
 * sleeper counts make the hand-off race-free with sequentially consistent atomics: a thread
 * announces that it is going to sleep before it re-checks the condition under the mutex,
 * and the other side changes the condition before it looks for sleepers.
 *
 * Sharing: the calling thread decides which envs reset (autoreset, episode) before the
 * workers start; each thread records failures in its own cache line, which it clears
 * itself; the generation the workers poll and the count the caller polls have lines of
 * their own; the one-byte statistics rows (several envs to a line) are stored only when
 * they change; the vec's buffers, and with threads its envs' blocks, own the cache lines they
 * touch (vec_alloc, env_alloc). What threads still both write are the cache lines of the io rows
 * where their envs meet (the rows are contiguous by contract), so small envs split over threads pay
 * some false sharing.
 *
 * Episode statistics (polis_vec_episode_stats): each thread adds up its rows' rewards and
 * steps right after stepping its envs, while the rows are in its cache, so a trainer's
 * RecordEpisodeStatistics costs nothing on the calling thread.
 *
 * Determinism: envs never share state, each has its own seed sequence
 * (polis_vec_env_seed), and errors are reported for the lowest failing env index, so
 * nothing observable depends on T, on timing, or on whether a call was handed off.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/env.h"
#include "vec/internal.h"

#define SPIN_ROUNDS 64   /* pause instructions before a waiting thread starts yielding */
#define YIELD_ROUNDS 256 /* sched_yield calls before it sleeps */
#define PROBE_BLOCKS 4   /* a probe: blocks of calls, handed off and not, alternately */
#define PROBE_TIMED 4    /* timed calls per block */
#define PROBE_WARMUP 2   /* untimed calls that start a block, at least */
#define PROBE_WAKE 8     /* ... and at most, while no worker takes part */
#define PROBE_CALLS (PROBE_BLOCKS / 2 * PROBE_TIMED) /* timed calls each way */
#define PERIOD_MIN 64   /* calls between probes, at first and after a change of verdict */
#define PERIOD_MAX 4096 /* ... and at most */
#define OWNER_STARTED (UINT64_C(1) << 31) /* in a claim counter */
#define STEAL_MIN 3 /* envs a running owner must have left before another thread takes one */

enum { VEC_FROZEN = 0, VEC_RUNNING = 1, VEC_BROKEN = 2 };
enum { JOB_RESET = 0, JOB_STEP = 1 };

typedef struct vec_worker {
    polis_vec *vec;
    int32_t index;      /* thread index, 1..T-1 (0 is the caller) */
    int32_t ahead_next; /* the env its next look for a reset to make ahead starts at */
    pthread_t thread;
} vec_worker;

/* Env k's reset made ahead ("resets made ahead" below): the lock that keeps a prepare and
 * the env's reset apart, and what the next reset will use. One cache line per env. */
enum { AHEAD_FREE = 0, AHEAD_PREPARING = 1, AHEAD_RESETTING = 2 };
typedef struct vec_ahead {
    _Alignas(64) atomic_int lock;
    atomic_bool pending; /* `want` is not prepared yet */
    bool made_valid;     /* the env's prepare ran for `made` since its last reset */
    uint64_t want;       /* the seed of the env's next reset (under the lock) */
    uint64_t made;       /* ... and the seed last prepared */
} vec_ahead;

/* What one thread's envs did in the current call: its lowest failing env, and the rows and
 * envs whose episodes ended (which a handed-off call adds into vec_finish). One cache line
 * per thread, so threads never write a line another thread writes; each thread clears its
 * own when it claims its first env of a call (tagged with the call's generation); the
 * calling thread reads a worker's line only after a call in which an env failed. */
typedef struct vec_result {
    _Alignas(64) int32_t failed; /* env index, or -1 */
    polis_status status;
    int32_t rows_ended, envs_ended; /* of the block: whose episode ended */
    unsigned gen;                   /* the call these are of */
} vec_result;

/* Block u's claim counter: generation << 32 | OWNER_STARTED once thread u has claimed from
 * it in that generation | the place in the order (order_blocks) of the next env of the block
 * to claim. A counter of an earlier generation reads as its block untouched, so the calling
 * thread publishes a call without writing the counters (each stays in the cache of the
 * thread that claims from it). Thread u claims from it
 * first, the others when their own blocks are done: all of what is left while thread u has
 * not started (it is asleep, or cannot run), else only while STEAL_MIN or more envs are
 * left, so that a running owner keeps its envs, and their state stays in its core's cache. */
typedef struct vec_claim {
    _Alignas(64) _Atomic uint64_t next;
} vec_claim;

/* What the threads poll, each in a line of its own: the generation that publishes a call
 * (written by the calling thread once a call; workers spin on it), and the count of envs
 * finished (every thread adds to it once a call; the calling thread spins on it). */
typedef struct vec_publish {
    _Alignas(64) atomic_uint gen;
    atomic_int sleepers;
    atomic_int stop;
    atomic_bool probing; /* a probe runs: the workers make no resets ahead */
} vec_publish;

/* The counts the threads add to at the end of a handed-off call, in the line each must own
 * for its last add anyway; they are never reset (they wrap), so the calling thread writes
 * nothing here at a call and takes each call's part as the difference: after generation g,
 * g * n_envs envs have finished. The calling thread then finds the call's sums in the line
 * its wait brought in, and reads a thread's own result line only after a failure. */
typedef struct vec_finish {
    _Alignas(64) atomic_uint finished;  /* envs of handed-off calls finished, ever */
    atomic_uint rows_ended, envs_ended; /* vec_result's sums of those calls, ever */
    atomic_uint failed_gen;             /* the last generation in which an env failed */
    atomic_int main_waiting;
    atomic_llong prepared, hits; /* resets made ahead; resets whose seed was prepared */
} vec_finish;

struct polis_vec {
    polis_alloc_fn alloc;
    void *alloc_ud;
    int32_t n_envs, n_threads, n_agents; /* n_agents per env */
    polis_env **envs;
    int32_t creating;  /* the env being created, for the io provider */
    bool layout_error; /* the provider refused the layout (message is not env k's) */

    /* shared buffers, rows env-major */
    polis_io io;
    size_t obs_alloc; /* bytes allocated for io.obs */
    /* episode statistics per row: the public part, and the running sums behind it */
    polis_vec_episodes stats;
    float *run_return;   /* [rows] the current episode's sum of rewards */
    int64_t *run_length; /* [rows] its steps */
    uint8_t *was_done;   /* [rows] terminated or truncated before this call */
    /* Written by the calling thread before the workers start, read-only to them: which envs
     * this call resets, and their episode numbers. */
    uint8_t *autoreset; /* [n_envs] */
    int64_t *episode;   /* [n_envs] */
    /* polis_env_done of each env after the last call, stored (when it changes) by the thread
     * that ran the env: what the calling thread reads before a step, in place of the env's
     * own state, which sits in the cache of the core that stepped it */
    uint8_t *env_done;   /* [n_envs] */
    void *results_mem;   /* the allocation results, claims, pub and fin point into (aligned) */
    vec_result *results; /* [n_threads] */
    vec_claim *claims;   /* [n_threads] */
    vec_publish *pub;
    vec_finish *fin;
    uint64_t seed;
    int32_t state; /* these three stored only when they change (the workers read this line) */
    int32_t job;
    char err[POLIS_ERRMAX];

    /* pool */
    vec_worker *workers; /* [n_threads - 1] */
    int32_t n_started;
    bool sync_ready;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    int32_t chunk;     /* envs per claim */
    vec_ahead *aheads; /* [n_envs] with resets made ahead, else NULL */
    int32_t *order;    /* [n_envs] the envs in the order threads claim them (order_blocks) */
    bool in_order;     /* order is 0, 1, ..., n_envs - 1 */

    /* What the calling thread alone writes at every call, in lines of its own: a store to a
     * line that the workers read (the fields above) would send it to their cores again. */
    char gap[64];
    int32_t n_results; /* results of the last call to collect: 1, or n_threads if handed off */
    unsigned rows_seen, envs_seen; /* fin's rows_ended and envs_ended after the last call */
    unsigned call_gen;             /* the generation of the last call handed off */

    /* whether calls hand off (the calling thread's alone; "whether a call hands off") */
    polis__vec_pool pool;
    bool parallel;        /* the verdict of the last probe */
    int32_t probe;        /* the current probe's block, -1 between probes */
    int32_t block_calls;  /* calls of the block done */
    int32_t block_timed;  /* of which timed */
    int32_t worker_calls; /* calls of the block a worker took part in */
    int32_t until_probe;  /* calls left before the next probe */
    int32_t period;       /* calls between probes */
    int64_t probe_ser[PROBE_CALLS], probe_par[PROBE_CALLS]; /* ns */
    int64_t calls[2]; /* calls run on the caller alone, handed off */
    int64_t probes, parallel_verdicts;
    char gap_after[64];
};

/* ---- seeds --------------------------------------------------------------------------------- */

/* SplitMix64's finaliser (Steele, Lea, Flood 2014): every input bit affects every output
 * bit, so neighbouring (seed, k, e) give unrelated env seeds. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t polis_vec_env_seed(uint64_t seed, int32_t k, int64_t episode)
{
    return mix64(mix64(seed + mix64((uint64_t)(int64_t)k)) + (uint64_t)episode);
}

/* ---- memory ---------------------------------------------------------------------------------- */

/* The vec's buffers start on a cache line and own every line they touch: the allocator
 * packs small blocks together, so without this the last rows of one buffer (the last
 * thread's envs) would share a line with the first rows of the next (the calling thread's),
 * and the threads would take that line from each other at every step. The block's address
 * is kept in the word before the line. */
#define LINE 64

static size_t lines_bytes(size_t size)
{
    size_t n = size ? size : 1;
    return (n + LINE - 1) / LINE * LINE + LINE + sizeof(void *);
}

static void *vec_alloc(polis_vec *v, size_t size)
{
    size_t total = lines_bytes(size);
    char *raw = v->alloc(v->alloc_ud, NULL, 0, total);
    if (!raw) return NULL;
    memset(raw, 0, total);
    char *p = (char *)(((uintptr_t)raw + sizeof(void *) + LINE - 1) & ~(uintptr_t)(LINE - 1));
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    return p;
}

static void vec_free(polis_vec *v, void *p, size_t size);

/* The allocator of a vec's envs when it has threads: their blocks own their lines too. An
 * env's state written at every step would otherwise share lines with another env's, stepped
 * on the other core: the allocator packs the blocks of consecutive envs together, and reuses
 * for one env the blocks another freed at its reset (gather 16 x 4, a call handed off on two
 * threads whose cores exchange a line in ~250 ns: 9.9 -> 8.2 us; commons_open's Lua heaps, 4
 * envs: 10.9 -> 12.9 MiB peak, the same rate). */
static void *env_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    polis_vec *v = ud;
    if (nsize == 0) {
        vec_free(v, ptr, osize);
        return NULL;
    }
    char *raw = v->alloc(v->alloc_ud, NULL, 0, lines_bytes(nsize));
    if (!raw) return NULL;
    char *p = (char *)(((uintptr_t)raw + sizeof(void *) + LINE - 1) & ~(uintptr_t)(LINE - 1));
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    if (ptr) {
        memcpy(p, ptr, osize < nsize ? osize : nsize);
        vec_free(v, ptr, osize);
    }
    return p;
}

static void vec_free(polis_vec *v, void *p, size_t size)
{
    if (!p) return;
    void *raw;
    memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
    v->alloc(v->alloc_ud, raw, lines_bytes(size), 0);
}

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

/* ---- the io provider: env k's slice of the shared buffers ------------------------------------ */

static polis_status provide_io(void *ud, polis_env *env, polis_io *io)
{
    polis_vec *v = ud;
    int32_t k = v->creating;
    if (k == 0) {
        int64_t rows = (int64_t)io->n_agents * v->n_envs;
        if (rows > INT32_MAX) {
            v->layout_error = true;
            return polis__fail(env, POLIS_ERR_LIMIT,
                               "polis_vec: %d envs x %d agents is %lld rows, more than %d",
                               v->n_envs, io->n_agents, (long long)rows, INT32_MAX);
        }
        size_t n = (size_t)rows;
        if (io->obs_size && n > SIZE_MAX / io->obs_size) {
            v->layout_error = true;
            return polis__fail(env, POLIS_ERR_LIMIT, "polis_vec: observation buffer too large");
        }
        v->n_agents = io->n_agents;
        v->io.n_agents = (int32_t)rows;
        v->io.n_actions = io->n_actions;
        v->io.obs_size = io->obs_size;
        v->obs_alloc = n * io->obs_size;
        v->io.obs = vec_alloc(v, v->obs_alloc);
        v->io.masks = vec_alloc(v, n * (size_t)io->n_actions);
        v->io.actions = vec_alloc(v, n * sizeof(int32_t));
        v->io.rewards = vec_alloc(v, n * sizeof(float));
        v->io.terminations = vec_alloc(v, n);
        v->io.truncations = vec_alloc(v, n);
        v->io.illegal = vec_alloc(v, n);
        v->stats.n_rows = (int32_t)rows;
        v->stats.n_envs = v->n_envs;
        v->stats.ended = vec_alloc(v, n);
        v->stats.env_ended = vec_alloc(v, (size_t)v->n_envs);
        v->stats.returns = vec_alloc(v, n * sizeof(float));
        v->stats.lengths = vec_alloc(v, n * sizeof(int64_t));
        v->run_return = vec_alloc(v, n * sizeof(float));
        v->run_length = vec_alloc(v, n * sizeof(int64_t));
        v->was_done = vec_alloc(v, n);
        if (!v->io.obs || !v->io.masks || !v->io.actions || !v->io.rewards || !v->io.terminations ||
            !v->io.truncations || !v->io.illegal || !v->stats.ended || !v->stats.returns ||
            !v->stats.lengths || !v->stats.env_ended || !v->run_return || !v->run_length ||
            !v->was_done)
            return polis__fail(env, POLIS_ERR_NOMEM, "out of memory allocating vec buffers");
    } else if (io->n_agents != v->n_agents || io->n_actions != v->io.n_actions ||
               io->obs_size != v->io.obs_size) {
        return polis__fail(env, POLIS_ERR_CONFIG,
                           "its layout (%d agents, %d actions, %zu observation bytes) differs "
                           "from env 0's (%d, %d, %zu)",
                           io->n_agents, io->n_actions, io->obs_size, v->n_agents, v->io.n_actions,
                           v->io.obs_size);
    }
    size_t r = (size_t)k * (size_t)v->n_agents;
    io->obs = v->io.obs + r * v->io.obs_size;
    io->masks = v->io.masks + r * (size_t)v->io.n_actions;
    io->actions = v->io.actions + r;
    io->rewards = v->io.rewards + r;
    io->terminations = v->io.terminations + r;
    io->truncations = v->io.truncations + r;
    io->illegal = v->io.illegal + r;
    return POLIS_OK;
}

/* ---- the work -------------------------------------------------------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void lock_ahead(vec_ahead *a)
{
    for (int i = 0;; i++) {
        int expect = AHEAD_FREE;
        if (atomic_compare_exchange_weak(&a->lock, &expect, AHEAD_RESETTING)) return;
        if (i < SPIN_ROUNDS)
            cpu_relax();
        else
            sched_yield();
    }
}

static polis_status run_env(polis_vec *v, int32_t k)
{
    polis_env *env = v->envs[k];
    if (v->job != JOB_RESET && !v->autoreset[k]) return polis_env_step(env);
    const uint64_t seed = polis_vec_env_seed(v->seed, k, v->episode[k]);
    if (!v->aheads) return polis_env_reset(env, seed);
    /* with resets made ahead: never while the env's prepare runs; then the next one's seed */
    vec_ahead *a = &v->aheads[k];
    lock_ahead(a);
    if (a->made_valid && a->made == seed) atomic_fetch_add(&v->fin->hits, 1);
    polis_status st = polis_env_reset(env, seed);
    a->made_valid = false;
    a->want = polis_vec_env_seed(v->seed, k, v->episode[k] + 1);
    atomic_store(&a->pending, true);
    atomic_store(&a->lock, AHEAD_FREE);
    return st;
}

/* Stores x at *p only if it differs: the one-byte rows of several envs share a cache line,
 * and a line that neither thread writes stays in both cores' caches. */
static inline void set_u8(uint8_t *p, uint8_t x)
{
    if (*p != x) *p = x;
}

/* Env k's episode statistics after it ran, counted in r. A reset starts its rows' sums
 * (return 0, length 0); a row ends in the call where it becomes terminated or truncated, an
 * env in the step after which it is done (a reset leaves none done). */
static void account_env(polis_vec *v, int32_t k, vec_result *res)
{
    size_t lo = (size_t)k * (size_t)v->n_agents, hi = lo + (size_t)v->n_agents;
    const float *reward = v->io.rewards;
    const uint8_t *term = v->io.terminations, *trunc = v->io.truncations;
    float *ret = v->run_return, *out_ret = (float *)v->stats.returns;
    int64_t *len = v->run_length, *out_len = (int64_t *)v->stats.lengths;
    uint8_t *ended = (uint8_t *)v->stats.ended, *was = v->was_done;
    if (v->job == JOB_RESET || v->autoreset[k]) {
        for (size_t r = lo; r < hi; r++) {
            ret[r] = 0.0f;
            len[r] = 0;
            set_u8(&was[r], (uint8_t)(term[r] | trunc[r]));
            set_u8(&ended[r], 0);
        }
        set_u8((uint8_t *)v->stats.env_ended + k, 0);
        set_u8(&v->env_done[k], polis_env_done(v->envs[k]));
        return;
    }
    int32_t n = 0;
    for (size_t r = lo; r < hi; r++) {
        ret[r] += reward[r];
        len[r]++;
        uint8_t done = (uint8_t)(term[r] | trunc[r]);
        uint8_t end = (uint8_t)(done & !was[r]);
        set_u8(&was[r], done);
        set_u8(&ended[r], end);
        if (end) {
            out_ret[r] = ret[r];
            out_len[r] = len[r];
            n++;
        }
    }
    uint8_t env_end = polis_env_done(v->envs[k]);
    set_u8((uint8_t *)v->stats.env_ended + k, env_end);
    set_u8(&v->env_done[k], env_end);
    res->rows_ended += n;
    res->envs_ended += env_end;
}

static void clear_result(vec_result *r, unsigned gen)
{
    r->failed = -1;
    r->status = POLIS_OK;
    r->rows_ended = 0;
    r->envs_ended = 0;
    r->gen = gen;
}

/* Runs the envs at places lo..hi-1 of the order for thread t. Every env runs even after one
 * failed, so what the envs did never depends on how they were split among threads. */
static void run_envs(polis_vec *v, int32_t t, int32_t lo, int32_t hi)
{
    vec_result *r = &v->results[t];
    for (int32_t i = lo; i < hi; i++) {
        const int32_t k = v->order[i];
        polis_status st = run_env(v, k);
        if (st != POLIS_OK && (r->failed < 0 || k < r->failed)) {
            r->failed = k;
            r->status = st;
        }
        account_env(v, k, r);
    }
}

/* ---- the pool -------------------------------------------------------------------------------- */

/* Thread u's block of envs, [block_lo(u), block_lo(u + 1)). */
static int32_t block_lo(const polis_vec *v, int32_t u)
{
    return (int32_t)((int64_t)u * v->n_envs / v->n_threads);
}

/* Each block's envs in the order threads claim them: those that reset in this call first (a
 * reset costs many steps: claimed first and alone, the envs after it go to whichever thread is
 * free first), then the others, each group by index. Stored only where it changes (the workers
 * read it). */
static void order_blocks(polis_vec *v, int32_t resets)
{
    for (int32_t u = 0; u < v->n_threads; u++) {
        const int32_t lo = block_lo(v, u), hi = block_lo(v, u + 1);
        int32_t i = lo;
        for (int pass = 1; pass >= 0; pass--)
            for (int32_t k = lo; k < hi; k++)
                if (v->autoreset[k] == pass) {
                    if (v->order[i] != k) v->order[i] = k;
                    i++;
                }
    }
    v->in_order = resets == 0;
}

/* Claims and runs envs of block u in generation g while it has any (thread t is its owner
 * when t == u; see vec_claim for what the others may take); returns how many. */
static int32_t run_block(polis_vec *v, int32_t t, int32_t u, unsigned g, int32_t done)
{
    const uint64_t tag = (uint64_t)g << 32;
    const int32_t hi = block_lo(v, u + 1);
    _Atomic uint64_t *claim = &v->claims[u].next;
    int32_t ran = 0;
    uint64_t c = atomic_load(claim);
    for (;;) {
        /* a counter of an earlier generation is this one's, untouched: the block from its
         * start (the calling thread does not reset the counters: each is written only by
         * the threads that claim from it) */
        const unsigned cg = (unsigned)(c >> 32);
        if (cg != g && (int32_t)(g - cg) < 0) return ran; /* a later call's: this one is over */
        const bool fresh = cg != g;
        const int32_t k = fresh ? block_lo(v, u) : (int32_t)(c & (OWNER_STARTED - 1));
        if (k >= hi) return ran;
        const bool started = !fresh && (c & OWNER_STARTED) != 0;
        /* a reset alone: the envs after it go to whichever thread is free first */
        int32_t e = v->autoreset[v->order[k]] ? k + 1 : hi - k < v->chunk ? hi : k + v->chunk;
        if (t != u && started) {
            if (hi - k < STEAL_MIN) return ran;
            e = k + 1;
        }
        const uint64_t next = tag | (t == u || started ? OWNER_STARTED : 0) | (uint32_t)e;
        if (!atomic_compare_exchange_weak(claim, &c, next)) continue;
        if (done + ran == 0) clear_result(&v->results[t], g);
        run_envs(v, t, k, e);
        ran += e - k;
        c = atomic_load(claim);
    }
}

/* Runs envs of generation g while there are any: thread t's own block first (so an env
 * tends to stay in one core's cache from call to call), then what is left of the others'.
 * The thread that finishes the last env wakes the caller if it sleeps. */
static int32_t run_claims(polis_vec *v, int32_t t, unsigned g)
{
    int32_t done = 0;
    for (int32_t i = 0; i < v->n_threads; i++) {
        int32_t u = t + i < v->n_threads ? t + i : t + i - v->n_threads;
        done += run_block(v, t, u, g, done);
    }
    if (done == 0) return 0;
    const vec_result *r = &v->results[t];
    vec_finish *f = v->fin;
    if (r->rows_ended)
        atomic_fetch_add_explicit(&f->rows_ended, r->rows_ended, memory_order_relaxed);
    if (r->envs_ended)
        atomic_fetch_add_explicit(&f->envs_ended, r->envs_ended, memory_order_relaxed);
    if (r->failed >= 0) atomic_store_explicit(&f->failed_gen, g, memory_order_relaxed);
    /* sequentially consistent: the sums and the envs' rows before it */
    if (atomic_fetch_add(&f->finished, (unsigned)done) + (unsigned)done ==
            g * (unsigned)v->n_envs &&
        t != 0 && atomic_load(&f->main_waiting)) {
        pthread_mutex_lock(&v->mu);
        pthread_cond_signal(&v->cv_done);
        pthread_mutex_unlock(&v->mu);
    }
    return done;
}

static unsigned wait_for_work(polis_vec *v, unsigned seen)
{
    unsigned g;
    for (int i = 0; i < SPIN_ROUNDS + YIELD_ROUNDS; i++) {
        g = atomic_load_explicit(&v->pub->gen, memory_order_acquire);
        if (g != seen) return g;
        if (i < SPIN_ROUNDS)
            cpu_relax();
        else
            sched_yield();
    }
    atomic_fetch_add(&v->pub->sleepers, 1);
    pthread_mutex_lock(&v->mu);
    while ((g = atomic_load(&v->pub->gen)) == seen) pthread_cond_wait(&v->cv_work, &v->mu);
    pthread_mutex_unlock(&v->mu);
    atomic_fetch_sub(&v->pub->sleepers, 1);
    return g;
}

/* ---- resets made ahead -------------------------------------------------------------------------
 *
 * A reset of a game that generates a world costs many steps (survival: about 93), and it is
 * one env's: the other threads wait for it at the end of the call. When the envs' plugins
 * registered a prepare function (the "reset_ahead" host API, ahead.c), a worker that has
 * finished its envs of a call and finds no new call published runs the prepare of an env's
 * next reset (its seed is polis_vec_env_seed(seed, k, episode + 1)), one env at a time, and
 * looks for a new call between them; the reset then takes the prepared world, if the game
 * finds it made for the generator it starts with. A new call meanwhile finds the worker's
 * block not started, so the calling thread steps it. A prepare runs while its env may be
 * stepping (the prepare touches only its own memory: plugin.h), never during the env's reset:
 * a lock per env, which a reset takes (and waits for, if a prepare runs) and a prepare only
 * tries. What an env does never depends on whether its reset was prepared (the game's check),
 * so results stay the same whatever the threads do; the workers' idle time becomes the resets'.
 */

/* Prepares one env's next reset that is not prepared yet, from worker w's place on; false
 * when a call was published or there is none. */
static bool prepare_one(polis_vec *v, vec_worker *w, unsigned g)
{
    for (int32_t i = 0; i < v->n_envs; i++) {
        if (atomic_load_explicit(&v->pub->gen, memory_order_relaxed) != g ||
            atomic_load_explicit(&v->pub->probing, memory_order_relaxed))
            return false;
        int32_t k =
            w->ahead_next + i < v->n_envs ? w->ahead_next + i : w->ahead_next + i - v->n_envs;
        vec_ahead *a = &v->aheads[k];
        if (!atomic_load_explicit(&a->pending, memory_order_relaxed)) continue;
        int expect = AHEAD_FREE;
        if (!atomic_compare_exchange_strong(&a->lock, &expect, AHEAD_PREPARING)) continue;
        if (atomic_load(&a->pending)) {
            atomic_store(&a->pending, false);
            if (polis__env_can_prepare(v->envs[k])) {
                polis__env_prepare(v->envs[k], a->want);
                a->made = a->want;
                a->made_valid = true;
                atomic_fetch_add(&v->fin->prepared, 1);
            }
        }
        atomic_store(&a->lock, AHEAD_FREE);
        w->ahead_next = k + 1 < v->n_envs ? k + 1 : 0;
        return true;
    }
    return false;
}

void polis__vec_ahead_stats(const polis_vec *vec, int64_t *prepared, int64_t *hits)
{
    *prepared = vec->aheads ? atomic_load(&vec->fin->prepared) : 0;
    *hits = vec->aheads ? atomic_load(&vec->fin->hits) : 0;
}

static void *worker_main(void *arg)
{
    vec_worker *w = arg;
    polis_vec *v = w->vec;
    unsigned seen = 0;
    for (;;) {
        seen = wait_for_work(v, seen);
        if (atomic_load(&v->pub->stop)) return NULL;
        run_claims(v, w->index, seen);
        if (v->aheads)
            while (prepare_one(v, w, seen)) {
            }
    }
}

/* Publishes a new generation (work or stop) and wakes sleeping workers. */
static void wake_workers(polis_vec *v)
{
    atomic_fetch_add(&v->pub->gen, 1);
    if (atomic_load(&v->pub->sleepers) > 0) {
        pthread_mutex_lock(&v->mu);
        pthread_cond_broadcast(&v->cv_work);
        pthread_mutex_unlock(&v->mu);
    }
}

/* One call handed to the pool: every thread, the caller included, claims envs. Returns
 * whether a worker stepped any. */
static bool run_parallel(polis_vec *v)
{
    /* the generation that opens the claim counters; the call is over when the envs finished
     * since create are g * n_envs */
    const unsigned g = atomic_load(&v->pub->gen) + 1, all = g * (unsigned)v->n_envs;
    v->call_gen = g;
    v->n_results = v->n_threads;
    wake_workers(v);
    if (run_claims(v, 0, g) == v->n_envs) return false;
    for (int i = 0; i < SPIN_ROUNDS + YIELD_ROUNDS; i++) {
        if (atomic_load_explicit(&v->fin->finished, memory_order_acquire) == all) return true;
        if (i < SPIN_ROUNDS)
            cpu_relax();
        else
            sched_yield();
    }
    atomic_store(&v->fin->main_waiting, 1);
    pthread_mutex_lock(&v->mu);
    while (atomic_load(&v->fin->finished) != all) pthread_cond_wait(&v->cv_done, &v->mu);
    pthread_mutex_unlock(&v->mu);
    atomic_store(&v->fin->main_waiting, 0);
    return true;
}

/* ---- whether a call hands off ------------------------------------------------------------------
 *
 * Handing envs to a worker costs the caller the publication, the worker's wake-up and the
 * cache lines of the envs' rows moving between cores (0.2-2 us on a VM, more when the worker
 * is asleep or shares the caller's core); a call of two small envs does less work than
 * that. So the pool measures: now and then it runs a probe, four blocks of calls, handed
 * off and run on the caller alone in turn, and until the next probe it runs every call the
 * way whose timed calls had the lower median. A block's first calls are not timed: they
 * move the envs' state to the cores that step them the block's way, and wake the workers
 * (a handed-off block is timed once PROBE_WARMUP of its calls had a worker taking part, or
 * after PROBE_WAKE calls: a worker that never takes part, because it cannot run, is part of
 * what is measured; a worker just woken from its sleep steps its first call late and the
 * state of its envs is still in the caller's cache, so the call that woke it is no sample). Calls
 * outside a probe are not timed (a clock read is 20-30 ns). The probes come every 64 calls at
 * first, twice as far apart each time the verdict stays, up to every 4,096, so at most about
 * PROBE_CALLS + 2 * PROBE_WAKE calls per period run the slower way. */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sort_ns(int64_t *x, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        int64_t y = x[i];
        int32_t j = i;
        for (; j > 0 && x[j - 1] > y; j--) x[j] = x[j - 1];
        x[j] = y;
    }
}

bool polis__vec_prefer_parallel(int64_t *serial_ns, int64_t *parallel_ns, int32_t n)
{
    if (n < 1) return false;
    sort_ns(serial_ns, n);
    sort_ns(parallel_ns, n);
    /* twice the median (the two middle values of an even n) */
    int64_t s = serial_ns[(n - 1) / 2] + serial_ns[n / 2];
    int64_t p = parallel_ns[(n - 1) / 2] + parallel_ns[n / 2];
    /* a tie goes to the caller alone: it leaves the other cores to other work */
    return p * 20 < s * 19;
}

/* Whether this call hands off, and whether it is a timed call of a probe. */
static bool choose_parallel(polis_vec *v, bool *timed)
{
    *timed = false;
    if (v->pool == POLIS__VEC_SERIAL) return false;
    if (v->pool == POLIS__VEC_PARALLEL || v->job == JOB_RESET) return v->parallel;
    if (v->probe < 0) {
        if (v->until_probe > 0) {
            v->until_probe--;
            return v->parallel;
        }
        v->probe = 0;
        v->block_calls = v->block_timed = v->worker_calls = 0;
        if (v->aheads) atomic_store(&v->pub->probing, true);
    }
    const bool par = (v->probe & 1) == 0;
    *timed = par ? v->worker_calls >= PROBE_WARMUP || v->block_calls >= PROBE_WAKE
                 : v->block_calls >= PROBE_WARMUP;
    return par;
}

/* Books a probe's step call (its time if timed); after the last, the verdict and the next
 * period. */
static void probe_done(polis_vec *v, bool par, bool worker, bool timed, int64_t ns)
{
    v->block_calls++;
    v->worker_calls += worker;
    if (!timed) return;
    (par ? v->probe_par : v->probe_ser)[v->probe / 2 * PROBE_TIMED + v->block_timed] = ns;
    if (++v->block_timed < PROBE_TIMED) return;
    v->block_calls = v->block_timed = v->worker_calls = 0;
    if (++v->probe < PROBE_BLOCKS) return;
    bool verdict = polis__vec_prefer_parallel(v->probe_ser, v->probe_par, PROBE_CALLS);
    v->probes++;
    v->parallel_verdicts += verdict;
    if (verdict == v->parallel)
        v->period = v->period * 2 < PERIOD_MAX ? v->period * 2 : PERIOD_MAX;
    else
        v->period = PERIOD_MIN;
    v->parallel = verdict;
    v->until_probe = v->period;
    v->probe = -1;
    if (v->aheads) atomic_store(&v->pub->probing, false);
}

static void pool_run(polis_vec *v, int32_t job)
{
    if (v->job != job) v->job = job;
    bool timed = false, worker = false;
    bool par = v->n_threads > 1 && choose_parallel(v, &timed);
    int64_t t0 = timed ? now_ns() : 0;
    if (par) {
        worker = run_parallel(v);
    } else {
        v->n_results = 1;
        clear_result(&v->results[0], v->call_gen);
        run_envs(v, 0, 0, v->n_envs);
    }
    if (v->probe >= 0 && job == JOB_STEP)
        probe_done(v, par, worker, timed, timed ? now_ns() - t0 : 0);
    v->calls[par]++;
}

void polis__vec_set_pool(polis_vec *vec, polis__vec_pool pool)
{
    vec->pool = pool;
    vec->parallel = pool != POLIS__VEC_SERIAL;
    vec->probe = -1;
    vec->until_probe = 0;
    vec->period = PERIOD_MIN;
    if (vec->aheads) atomic_store(&vec->pub->probing, false);
}

void polis__vec_pool_calls(const polis_vec *vec, int64_t *serial, int64_t *parallel)
{
    *serial = vec->calls[0];
    *parallel = vec->calls[1];
}

void polis__vec_pool_probes(const polis_vec *vec, int64_t *probes, int64_t *parallel_verdicts)
{
    *probes = vec->probes;
    *parallel_verdicts = vec->parallel_verdicts;
}

static void pool_stop(polis_vec *v)
{
    if (v->n_started > 0) {
        atomic_store(&v->pub->stop, 1);
        wake_workers(v);
        for (int32_t i = 0; i < v->n_started; i++) pthread_join(v->workers[i].thread, NULL);
        v->n_started = 0;
    }
    if (v->sync_ready) {
        pthread_mutex_destroy(&v->mu);
        pthread_cond_destroy(&v->cv_work);
        pthread_cond_destroy(&v->cv_done);
        v->sync_ready = false;
    }
}

static polis_status pool_start(polis_vec *v, polis_error *err)
{
    if (v->n_threads == 1) return POLIS_OK;
    atomic_init(&v->pub->gen, 0);
    for (int32_t u = 0; u < v->n_threads; u++) atomic_init(&v->claims[u].next, 0);
    atomic_init(&v->fin->finished, 0);
    atomic_init(&v->fin->rows_ended, 0);
    atomic_init(&v->fin->envs_ended, 0);
    atomic_init(&v->fin->failed_gen, 0);
    atomic_init(&v->fin->prepared, 0);
    atomic_init(&v->fin->hits, 0);
    /* about four claims per block: fewer atomics than one env each, and a thread that
     * cannot run holds back at most a quarter of its share */
    v->chunk = v->n_envs / (4 * v->n_threads) > 1 ? v->n_envs / (4 * v->n_threads) : 1;
    atomic_init(&v->pub->sleepers, 0);
    atomic_init(&v->fin->main_waiting, 0);
    atomic_init(&v->pub->stop, 0);
    atomic_init(&v->pub->probing, false);
    int rc = pthread_mutex_init(&v->mu, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&v->cv_work, NULL)) != 0) pthread_mutex_destroy(&v->mu);
    if (rc == 0 && (rc = pthread_cond_init(&v->cv_done, NULL)) != 0) {
        pthread_cond_destroy(&v->cv_work);
        pthread_mutex_destroy(&v->mu);
    }
    if (rc == 0) v->sync_ready = true;
    for (int32_t i = 0; rc == 0 && i < v->n_threads - 1; i++) {
        v->workers[i].vec = v;
        v->workers[i].index = i + 1;
        if ((rc = pthread_create(&v->workers[i].thread, NULL, worker_main, &v->workers[i])) == 0)
            v->n_started++;
    }
    if (rc == 0) return POLIS_OK;
    if (err) {
        err->status = POLIS_ERR_LIMIT;
        snprintf(err->message, sizeof err->message,
                 "polis_vec: cannot start worker thread %d of %d: %s", v->n_started + 1,
                 v->n_threads - 1, strerror(rc));
    }
    return POLIS_ERR_LIMIT;
}

/* ---- create / destroy ------------------------------------------------------------------------ */

static polis_status bad_input(polis_error *err, polis_status st, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
static polis_status bad_input(polis_error *err, polis_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = st;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return st;
}

static size_t results_bytes(int32_t n_threads)
{
    return (sizeof(vec_result) + sizeof(vec_claim)) * (size_t)n_threads + sizeof(vec_publish) +
           sizeof(vec_finish) + 64;
}

void polis_vec_destroy(polis_vec *vec)
{
    if (!vec) return;
    pool_stop(vec);
    if (vec->envs)
        for (int32_t k = 0; k < vec->n_envs; k++) polis_env_destroy(vec->envs[k]);
    size_t n = (size_t)vec->io.n_agents;
    vec_free(vec, vec->io.obs, vec->obs_alloc);
    vec_free(vec, vec->io.masks, n * (size_t)vec->io.n_actions);
    vec_free(vec, vec->io.actions, n * sizeof(int32_t));
    vec_free(vec, vec->io.rewards, n * sizeof(float));
    vec_free(vec, vec->io.terminations, n);
    vec_free(vec, vec->io.truncations, n);
    vec_free(vec, vec->io.illegal, n);
    vec_free(vec, (void *)vec->stats.ended, n);
    vec_free(vec, (void *)vec->stats.returns, n * sizeof(float));
    vec_free(vec, (void *)vec->stats.lengths, n * sizeof(int64_t));
    vec_free(vec, (void *)vec->stats.env_ended, (size_t)vec->n_envs);
    vec_free(vec, vec->run_return, n * sizeof(float));
    vec_free(vec, vec->run_length, n * sizeof(int64_t));
    vec_free(vec, vec->was_done, n);
    size_t m = (size_t)vec->n_envs;
    vec_free(vec, vec->envs, m * sizeof *vec->envs);
    vec_free(vec, vec->autoreset, m);
    vec_free(vec, vec->env_done, m);
    vec_free(vec, vec->episode, m * sizeof *vec->episode);
    vec_free(vec, vec->order, m * sizeof *vec->order);
    vec_free(vec, vec->results_mem, results_bytes(vec->n_threads));
    vec_free(vec, vec->aheads, (size_t)vec->n_envs * sizeof *vec->aheads);
    vec_free(vec, vec->workers, (size_t)(vec->n_threads - 1) * sizeof *vec->workers);
    vec->alloc(vec->alloc_ud, vec, sizeof *vec, 0);
}

static polis_status vec_create(const char *text, size_t len, const char *source,
                               const char *base_dir, const polis_options *opts, int32_t n_envs,
                               int32_t n_threads, polis_vec **out, polis_error *err)
{
    if (n_envs < 1)
        return bad_input(err, POLIS_ERR_INVALID, "polis_vec: n_envs is %d, expected at least 1",
                         n_envs);
    if (n_threads < 1 || n_threads > n_envs)
        return bad_input(err, POLIS_ERR_INVALID,
                         "polis_vec: n_threads is %d, expected 1 to n_envs (%d)", n_threads,
                         n_envs);
    polis_alloc_fn alloc = default_alloc;
    void *alloc_ud = NULL;
    if (opts && opts->struct_size >= offsetof(polis_options, alloc_ud) + sizeof(void *) &&
        opts->alloc) {
        alloc = opts->alloc;
        alloc_ud = opts->alloc_ud;
    }
    polis_vec *v = alloc(alloc_ud, NULL, 0, sizeof *v);
    if (!v) return bad_input(err, POLIS_ERR_NOMEM, "out of memory");
    memset(v, 0, sizeof *v);
    v->alloc = alloc;
    v->alloc_ud = alloc_ud;
    v->n_envs = n_envs;
    v->n_threads = n_threads;
    size_t m = (size_t)n_envs;
    v->envs = vec_alloc(v, m * sizeof *v->envs);
    v->autoreset = vec_alloc(v, m);
    v->env_done = vec_alloc(v, m);
    v->episode = vec_alloc(v, m * sizeof *v->episode);
    v->order = vec_alloc(v, m * sizeof *v->order);
    v->results_mem = vec_alloc(v, results_bytes(n_threads));
    v->workers = vec_alloc(v, (size_t)(n_threads - 1) * sizeof *v->workers);
    if (v->results_mem) {
        v->results = (vec_result *)(((uintptr_t)v->results_mem + 63) & ~(uintptr_t)63);
        v->claims = (vec_claim *)(v->results + n_threads);
        v->pub = (vec_publish *)(v->claims + n_threads);
        v->fin = (vec_finish *)(v->pub + 1);
    }
    polis__vec_set_pool(v, POLIS__VEC_ADAPT);
    if (v->order) {
        for (int32_t k = 0; k < n_envs; k++) v->order[k] = k;
        v->in_order = true;
    }
    if (!v->envs || !v->autoreset || !v->env_done || !v->episode || !v->order || !v->results_mem ||
        !v->workers) {
        polis_vec_destroy(v);
        return bad_input(err, POLIS_ERR_NOMEM, "out of memory");
    }
    /* with threads, the caller's options with env_alloc in front of its allocator (the
     * fields its struct_size leaves out keep their defaults) */
    polis_options eo;
    memset(&eo, 0, sizeof eo);
    if (opts && opts->struct_size)
        memcpy(&eo, opts, opts->struct_size < sizeof eo ? opts->struct_size : sizeof eo);
    else
        eo.struct_size = offsetof(polis_options, log_ud) + sizeof(void *);
    if (n_threads > 1 && eo.struct_size >= offsetof(polis_options, alloc_ud) + sizeof(void *)) {
        eo.alloc = env_alloc;
        eo.alloc_ud = v;
    }
    for (int32_t k = 0; k < n_envs; k++) {
        polis__create_args args = {.text = text,
                                   .len = len,
                                   .source = source,
                                   .base_dir = base_dir,
                                   .opts = n_threads > 1 ? &eo : opts,
                                   .io_fn = provide_io,
                                   .io_ud = v};
        polis_error e;
        v->creating = k;
        polis_status st = polis__env_create(&args, &v->envs[k], &e);
        if (st != POLIS_OK) {
            if (v->layout_error)
                bad_input(err, st, "%s", e.message);
            else
                bad_input(err, st, "env %d: %s", k, e.message);
            polis_vec_destroy(v);
            return st;
        }
    }
    /* resets made ahead, when there are workers and env 0's plugins offer a prepare */
    if (n_threads > 1 && polis__env_can_prepare(v->envs[0])) {
        if (!(v->aheads = vec_alloc(v, m * sizeof *v->aheads))) {
            polis_vec_destroy(v);
            return bad_input(err, POLIS_ERR_NOMEM, "out of memory");
        }
        for (size_t k = 0; k < m; k++) {
            atomic_init(&v->aheads[k].lock, AHEAD_FREE);
            atomic_init(&v->aheads[k].pending, false);
        }
    }
    polis_status st = pool_start(v, err);
    if (st != POLIS_OK) {
        polis_vec_destroy(v);
        return st;
    }
    v->state = VEC_FROZEN;
    *out = v;
    if (err) {
        err->status = POLIS_OK;
        err->message[0] = '\0';
    }
    return POLIS_OK;
}

polis_status polis_vec_create_json(const char *json, size_t len, const polis_options *opts,
                                   int32_t n_envs, int32_t n_threads, polis_vec **out,
                                   polis_error *err)
{
    if (!out) return bad_input(err, POLIS_ERR_INVALID, "polis_vec_create_json: out is NULL");
    *out = NULL;
    if (!json) return bad_input(err, POLIS_ERR_INVALID, "polis_vec_create_json: json is NULL");
    return vec_create(json, len, "<string>", NULL, opts, n_envs, n_threads, out, err);
}

polis_status polis_vec_create_file(const char *path, const polis_options *opts, int32_t n_envs,
                                   int32_t n_threads, polis_vec **out, polis_error *err)
{
    if (!out) return bad_input(err, POLIS_ERR_INVALID, "polis_vec_create_file: out is NULL");
    *out = NULL;
    if (!path) return bad_input(err, POLIS_ERR_INVALID, "polis_vec_create_file: path is NULL");
    /* Counts first, so a bad count is reported without touching the file system. */
    if (n_envs < 1 || n_threads < 1 || n_threads > n_envs)
        return vec_create(NULL, 0, path, NULL, opts, n_envs, n_threads, out, err);
    char *text;
    size_t len;
    char dir[4096];
    polis_status st = polis__scenario_file(path, &text, &len, dir, sizeof dir, err);
    if (st != POLIS_OK) return st;
    st = vec_create(text, len, path, dir, opts, n_envs, n_threads, out, err);
    free(text);
    return st;
}

/* ---- running --------------------------------------------------------------------------------- */

/* The lowest failing env of the last call (the lowest of the threads' lowest), its message
 * prefixed with its index. */
static polis_status collect(polis_vec *v)
{
    int32_t rows_ended, envs_ended;
    const vec_result *r = NULL;
    if (v->n_results == 1) { /* the calling thread alone */
        rows_ended = v->results[0].rows_ended;
        envs_ended = v->results[0].envs_ended;
        if (v->results[0].failed >= 0) r = &v->results[0];
    } else {
        const vec_finish *f = v->fin;
        unsigned rows = atomic_load_explicit(&f->rows_ended, memory_order_relaxed),
                 envs = atomic_load_explicit(&f->envs_ended, memory_order_relaxed);
        rows_ended = (int32_t)(rows - v->rows_seen);
        envs_ended = (int32_t)(envs - v->envs_seen);
        v->rows_seen = rows;
        v->envs_seen = envs;
        if (atomic_load_explicit(&f->failed_gen, memory_order_relaxed) == v->call_gen)
            for (int32_t t = 0; t < v->n_results; t++) {
                const vec_result *x = &v->results[t];
                if (x->gen != v->call_gen) continue; /* took no env in this call */
                if (x->failed >= 0 && (!r || x->failed < r->failed)) r = x;
            }
    }
    if (v->stats.rows_ended != rows_ended) v->stats.rows_ended = rows_ended;
    if (v->stats.envs_ended != envs_ended) v->stats.envs_ended = envs_ended;
    if (r) {
        int32_t k = r->failed;
        const char *msg = polis_env_error(v->envs[k]);
        if (!msg[0]) msg = polis_status_str(r->status);
        if (v->job == JOB_STEP && v->autoreset[k])
            snprintf(v->err, sizeof v->err, "env %d: %s (auto-reset to episode %lld)", k, msg,
                     (long long)v->episode[k]);
        else
            snprintf(v->err, sizeof v->err, "env %d: %s", k, msg);
        v->state = VEC_BROKEN;
        return r->status;
    }
    if (v->state != VEC_RUNNING) v->state = VEC_RUNNING;
    return POLIS_OK;
}

polis_status polis_vec_reset(polis_vec *vec, uint64_t seed)
{
    if (!vec) return POLIS_ERR_INVALID;
    vec->err[0] = '\0';
    vec->seed = seed;
    memset(vec->autoreset, 0, (size_t)vec->n_envs);
    memset(vec->episode, 0, sizeof *vec->episode * (size_t)vec->n_envs);
    size_t n = (size_t)vec->io.n_agents;
    memset((void *)vec->stats.returns, 0, n * sizeof(float));
    memset((void *)vec->stats.lengths, 0, n * sizeof(int64_t));
    pool_run(vec, JOB_RESET);
    return collect(vec);
}

polis_status polis_vec_step(polis_vec *vec)
{
    if (!vec) return POLIS_ERR_INVALID;
    if (vec->err[0]) vec->err[0] = '\0';
    if (vec->state == VEC_FROZEN) {
        snprintf(vec->err, sizeof vec->err, "polis_vec_step: call polis_vec_reset first");
        return POLIS_ERR_STATE;
    }
    if (vec->state == VEC_BROKEN) {
        snprintf(vec->err, sizeof vec->err,
                 "polis_vec_step: the previous step or reset failed; call polis_vec_reset");
        return POLIS_ERR_STATE;
    }
    /* Check every action that will be read before any env runs, so a bad id leaves the
     * whole vec as it was. */
    const int32_t n_actions = vec->io.n_actions;
    for (int32_t k = 0; k < vec->n_envs; k++) {
        if (vec->env_done[k]) continue;
        polis_env *env = vec->envs[k];
        const int32_t *act = vec->io.actions + (size_t)k * (size_t)vec->n_agents;
        for (int32_t a = 0; a < vec->n_agents; a++) {
            if (act[a] >= 0 && act[a] < n_actions) continue;
            snprintf(vec->err, sizeof vec->err,
                     "env %d: step: agent %d (%s): action %d is outside [0, %d) at tick %lld "
                     "(row %lld)",
                     k, a, polis_env_agent_name(env, a), act[a], n_actions,
                     (long long)polis_env_tick(env), (long long)k * vec->n_agents + a);
            return POLIS_ERR_ACTION;
        }
    }
    int32_t resets = 0;
    for (int32_t k = 0; k < vec->n_envs; k++) {
        uint8_t done = vec->env_done[k];
        set_u8(&vec->autoreset[k], done);
        if (done) vec->episode[k]++;
        resets += done;
    }
    if (vec->n_threads > 1 && (resets > 0 || !vec->in_order)) order_blocks(vec, resets);
    pool_run(vec, JOB_STEP);
    return collect(vec);
}

/* ---- accessors ------------------------------------------------------------------------------- */

const char *polis_vec_error(const polis_vec *vec) { return vec ? vec->err : "vec is NULL"; }
const polis_io *polis_vec_io(const polis_vec *vec) { return &vec->io; }
const uint8_t *polis_vec_autoreset(const polis_vec *vec) { return vec->autoreset; }
const polis_vec_episodes *polis_vec_episode_stats(const polis_vec *vec) { return &vec->stats; }
int32_t polis_vec_n_envs(const polis_vec *vec) { return vec->n_envs; }
int32_t polis_vec_n_threads(const polis_vec *vec) { return vec->n_threads; }
int32_t polis_vec_agents_per_env(const polis_vec *vec) { return vec->n_agents; }

const void *polis_vec_shared_obs(const polis_vec *vec, int32_t k, size_t *size)
{
    if (!vec || k < 0 || k >= vec->n_envs) {
        if (size) *size = 0;
        return NULL;
    }
    return polis_env_shared_obs(vec->envs[k], size);
}

polis_env *polis_vec_env(polis_vec *vec, int32_t k)
{
    return k >= 0 && k < vec->n_envs ? vec->envs[k] : NULL;
}

int64_t polis_vec_episode(const polis_vec *vec, int32_t k)
{
    return k >= 0 && k < vec->n_envs ? vec->episode[k] : -1;
}
