/* tests/plugins/ffi_exports.h — what the ffi_exports test plugin publishes and records, shared
 * with tests/unit/test_ffi.c. The plugin offers its record as the service
 * "ffi_exports.record" so the test can read exactly what the bound exports received. */
#ifndef POLIS_TEST_FFI_EXPORTS_H
#define POLIS_TEST_FFI_EXPORTS_H

#include <stdint.h>

#define FFI_EXPORTS_MAX_AGENTS 8

/* ffi.ping {agent:i32, value:f64, count:i64}: one per agent from a POST hook each step. */
typedef struct ffi_ping {
    int32_t agent;
    double value;
    int64_t count;
} ffi_ping;

/* ffi.mixed {a:f32, b:i32, c:f64, d:i32}: one per step; its padding differs from ffi.ping. */
typedef struct ffi_mixed {
    float a;
    int32_t b;
    double c;
    int32_t d;
} ffi_mixed;

/* The values published at tick t: negative and beyond 32 bits, so a wrong width, offset or
 * register class shows. Every value is exactly representable. */
static inline double ffi_ping_value(int64_t t, int32_t agent)
{
    return (double)t * 0.75 - (double)agent * 1.5 - 2.125;
}

static inline int64_t ffi_ping_count(int64_t t, int32_t agent)
{
    return (t + 1) * 4000000007LL * (agent % 2 ? -1 : 1) + agent;
}

static inline ffi_mixed ffi_mixed_at(int64_t t)
{
    ffi_mixed m = {(float)t * 0.5f + 0.25f, -(int32_t)t - 1, (double)t * 1e12 + 0.5,
                   7 + (int32_t)t};
    return m;
}

typedef struct ffi_exports_record {
    int32_t n_agents;
    int32_t fail_at;   /* params: the guard's run that fails (-1 never) */
    int32_t fail_code; /* params: what the guard returns then */
    int32_t type_ping, type_mixed;
    int64_t pub_tick;                           /* host->tick() when the POST hook last published */
    int64_t posts;                              /* POST hook runs */
    int64_t begin_runs;                         /* runs of the bound void(ctx) hook "on_begin" */
    int64_t guard_runs;                         /* runs of the bound i32(ctx) hook "guard" */
    int64_t stray;                              /* pings whose agent was out of range */
    int32_t ping_calls[FFI_EXPORTS_MAX_AGENTS]; /* void subscriber, this step */
    int32_t ping_i32_calls[FFI_EXPORTS_MAX_AGENTS]; /* i32 subscriber, this step */
    double value[FFI_EXPORTS_MAX_AGENTS];
    int64_t count[FFI_EXPORTS_MAX_AGENTS];
    int64_t mixed_calls; /* this step */
    ffi_mixed mixed;     /* as the subscriber received it */
    int64_t note;        /* the last value given to the "note" export */
} ffi_exports_record;

#endif
