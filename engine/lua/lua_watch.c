/*
 * engine/lua/lua_watch.c — the watchdog that enforces lua.time_limit_ms.
 *
 * A count hook makes the Lua 5.4 VM stop in luaG_traceexec before every instruction, however
 * large the count, so a wall-clock limit read from the hook would cost every instruction of
 * every callback. Instead one thread per process watches the threads that run Lua callbacks
 * and touches a callback only once it has overrun:
 *
 *   - Each OS thread that runs a time-limited callback has a slot (thread-local storage,
 *     linked into a list the first time). Entering the outermost callback makes the slot's
 *     generation odd, leaving it makes it even: two stores, no clock, no system call.
 *   - The watchdog wakes every limit / 8 (at most every 250 ms) and looks at every slot. A
 *     generation it saw odd at an earlier look, still unchanged, is the same callback, running
 *     since at least that look; once that is the limit ago, the watchdog marks the generation
 *     overrun and sends SIGURG to the thread. So a callback is stopped after running between
 *     the limit and the limit plus one interval, never before.
 *   - The signal handler, on the callback's own thread, sets a count hook of 1 on the Lua
 *     state running there (lua_sethook is safe in a signal handler: Lua's own interpreter
 *     stops a script this way on ^C); the hook sees the mark and raises the time limit error
 *     at the line that was running. The library functions that charge their work and the
 *     allocator see the mark too, so a long C call (a pattern match) stops as well.
 *   - Until the callback ends, the watchdog sends the signal again every interval, so a
 *     signal that arrived while the hook was being replaced, or went to a nested script,
 *     still stops it.
 *
 * Scripts under the instruction budget have a count hook anyway: it checks the mark every
 * slice, so they get no signal (a hook count changed by a signal would move the count).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "lua/internal.h"

/* The slowest and fastest the watchdog looks while some thread has run Lua. */
#define WATCH_MAX_INTERVAL_MS 250
#define WATCH_MIN_INTERVAL_MS 2
/* Looks that found no callback run since the previous one before the watchdog sleeps until
 * one enters. */
#define WATCH_IDLE_LOOKS 16

struct polis__lua_watch {
    /* Written only by the owning thread. */
    _Atomic uint64_t gen;        /* odd while an outermost callback runs on the thread */
    _Atomic int64_t limit_ms;    /* that callback's time limit */
    _Atomic(lua_State *) target; /* the state the signal arms, NULL = none (budget hook) */
    int nest;                    /* outermost callbacks of different scripts, nested */
    /* Written by the watchdog. */
    _Atomic uint64_t overrun_gen; /* the generation found over its limit */
    /* The list, under the mutex. */
    uint64_t epoch; /* the fork epoch it was linked in; another epoch: not linked */
    pthread_t thread;
    struct polis__lua_watch *next, **pprev;
    /* The watchdog's own notes. */
    uint64_t seen_gen, seen_ns;
    uint64_t last_gen; /* the generation at the last look, running or not */
};

static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cv = PTHREAD_COND_INITIALIZER;
static polis__lua_watch *watch_head;
static _Atomic uint64_t watch_epoch = 1;  /* bumped in a forked child: nothing is linked */
static _Atomic int64_t watch_min_ms = -1; /* the smallest limit seen; -1 none yet */
static bool watch_running;                /* the thread exists (this process) */
static _Atomic bool watch_asleep;         /* idle for a while: waits until a callback enters */
static _Atomic bool watch_fired;          /* a signal was ever sent: the handler reads TLS */
static pthread_key_t watch_key;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static struct sigaction watch_prev_action;
static _Thread_local polis__lua_watch tls_watch;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* ---- the signal ------------------------------------------------------------------------ */

static void chain(int sig, siginfo_t *info, void *uc)
{
    const struct sigaction *p = &watch_prev_action;
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction) p->sa_sigaction(sig, info, uc);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN && p->sa_handler) {
        p->sa_handler(sig);
    }
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    int saved = errno;
    if (atomic_load_explicit(&watch_fired, memory_order_relaxed)) {
        polis__lua_watch *w = &tls_watch;
        uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);
        lua_State *L = atomic_load_explicit(&w->target, memory_order_relaxed);
        if ((g & 1) && L && atomic_load_explicit(&w->overrun_gen, memory_order_relaxed) == g) {
            lua_sethook(L, polis__lua_count_hook, LUA_MASKCOUNT, 1);
            errno = saved;
            return;
        }
    }
    chain(sig, info, uc);
    errno = saved;
}

/* ---- the watchdog thread -------------------------------------------------------------- */

static int64_t interval_ms(void)
{
    int64_t m = atomic_load(&watch_min_ms) / 8;
    if (m > WATCH_MAX_INTERVAL_MS || m < 0) m = WATCH_MAX_INTERVAL_MS;
    if (m < WATCH_MIN_INTERVAL_MS) m = WATCH_MIN_INTERVAL_MS;
    return m;
}

/* One look at every slot; false when no callback ran since the last look. */
static bool look(uint64_t now)
{
    bool busy = false;
    for (polis__lua_watch *w = watch_head; w; w = w->next) {
        uint64_t g = atomic_load_explicit(&w->gen, memory_order_acquire);
        if (g != w->last_gen || (g & 1)) busy = true;
        w->last_gen = g;
        if (!(g & 1)) {
            w->seen_gen = 0;
            continue;
        }
        if (g != w->seen_gen) {
            w->seen_gen = g;
            w->seen_ns = now;
            continue;
        }
        int64_t ms = atomic_load_explicit(&w->limit_ms, memory_order_relaxed);
        if (ms <= 0 || now - w->seen_ns < (uint64_t)ms * UINT64_C(1000000)) continue;
        atomic_store_explicit(&w->overrun_gen, g, memory_order_release);
        if (atomic_load_explicit(&w->target, memory_order_relaxed)) {
            atomic_store(&watch_fired, true);
            pthread_kill(w->thread, SIGURG);
        }
    }
    return busy;
}

static void *watch_main(void *arg)
{
    (void)arg;
    int idle = 0;
    pthread_mutex_lock(&watch_mu);
    for (;;) {
        /* Nothing ran Lua for a while (or no thread has): sleep until a callback enters. */
        if (!watch_head || idle >= WATCH_IDLE_LOOKS) {
            /* A callback that entered after the last look either sees the flag and wakes
             * the watchdog, or is seen by this look (both sides store, then load, in
             * sequential consistency). */
            atomic_store(&watch_asleep, true);
            if (look(mono_ns())) {
                atomic_store(&watch_asleep, false);
                idle = 0;
                continue;
            }
            pthread_cond_wait(&watch_cv, &watch_mu);
            idle = 0;
            continue;
        }
        idle = look(mono_ns()) ? 0 : idle + 1;
        uint64_t t = 0;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec +
            (uint64_t)interval_ms() * UINT64_C(1000000);
        ts.tv_sec = (time_t)(t / UINT64_C(1000000000));
        ts.tv_nsec = (long)(t % UINT64_C(1000000000));
        pthread_cond_timedwait(&watch_cv, &watch_mu, &ts);
    }
    return NULL;
}

/* ---- thread registration ------------------------------------------------------------- */

static void unlink_slot(void *p)
{
    polis__lua_watch *w = p;
    pthread_mutex_lock(&watch_mu);
    if (w->epoch == atomic_load(&watch_epoch)) {
        *w->pprev = w->next;
        if (w->next) w->next->pprev = w->pprev;
        w->epoch = 0;
    }
    pthread_mutex_unlock(&watch_mu);
}

static void fork_prepare(void) { pthread_mutex_lock(&watch_mu); }

static void fork_parent(void) { pthread_mutex_unlock(&watch_mu); }

/* The child has only the forking thread: no watchdog, and no slot is linked. */
static void fork_child(void)
{
    pthread_mutex_unlock(&watch_mu);
    pthread_cond_init(&watch_cv, NULL);
    watch_head = NULL;
    watch_running = false;
    atomic_store(&watch_asleep, false);
    atomic_fetch_add(&watch_epoch, 1);
}

static void watch_init(void)
{
    pthread_key_create(&watch_key, unlink_slot);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGURG, &sa, &watch_prev_action);
}

/* Links the thread's slot and starts the watchdog when it is not running (first use, or
 * the first in a forked child). */
static void link_slot(polis__lua_watch *w)
{
    pthread_once(&watch_once, watch_init);
    pthread_mutex_lock(&watch_mu);
    uint64_t epoch = atomic_load(&watch_epoch);
    if (w->epoch != epoch) {
        w->epoch = epoch;
        w->thread = pthread_self();
        w->seen_gen = 0;
        w->next = watch_head;
        w->pprev = &watch_head;
        if (watch_head) watch_head->pprev = &w->next;
        watch_head = w;
        pthread_setspecific(watch_key, w);
    }
    if (!watch_running) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* The watchdog must not take the signal it sends. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        watch_running = pthread_create(&t, &attr, watch_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_cond_signal(&watch_cv);
    pthread_mutex_unlock(&watch_mu);
}

/* Wakes the watchdog: it sleeps, or a limit below any it knows must shrink its interval. */
static void wake(int64_t ms)
{
    pthread_mutex_lock(&watch_mu);
    int64_t m = atomic_load(&watch_min_ms);
    if (m < 0 || ms < m) atomic_store(&watch_min_ms, ms);
    atomic_store(&watch_asleep, false);
    pthread_cond_signal(&watch_cv);
    pthread_mutex_unlock(&watch_mu);
}

/* ---- the interface --------------------------------------------------------------------- */

polis__lua_watch *polis__lua_watch_enter(lua_State *target, int64_t limit_ms, lua_State **prev)
{
    polis__lua_watch *w = &tls_watch;
    if (w->epoch != atomic_load_explicit(&watch_epoch, memory_order_relaxed)) link_slot(w);
    *prev = atomic_load_explicit(&w->target, memory_order_relaxed);
    atomic_store_explicit(&w->target, target, memory_order_relaxed);
    if (w->nest++ == 0) {
        atomic_store_explicit(&w->limit_ms, limit_ms, memory_order_relaxed);
        uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);
        atomic_store(&w->gen, g + 1); /* before the watch_asleep load (watch_main) */
    }
    int64_t m = atomic_load_explicit(&watch_min_ms, memory_order_relaxed);
    if (atomic_load(&watch_asleep) || m < 0 || limit_ms < m) wake(limit_ms);
    return w;
}

void polis__lua_watch_exit(polis__lua_watch *w, lua_State *prev)
{
    if (--w->nest == 0) {
        uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);
        atomic_store_explicit(&w->gen, g + 1, memory_order_release);
    }
    atomic_store_explicit(&w->target, prev, memory_order_relaxed);
}

bool polis__lua_watch_overrun(const polis__lua_watch *w)
{
    uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);
    return (g & 1) && atomic_load_explicit(&w->overrun_gen, memory_order_acquire) == g;
}
