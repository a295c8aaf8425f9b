/*
 * polis/rng.h — the env random number generator: PCG32 (O'Neill 2014, "PCG XSH RR 64/32",
 * the pcg32 reference generator: 64-bit LCG state, multiplier 6364136223846793005, output
 * xorshift-high + random rotate).
 *
 * Each env owns exactly one polis_rng (plugins get it with host->rng(ctx)); every random
 * choice in C and Lua draws from it, so the same scenario + seed + actions give the same
 * episode. The functions are inline so a plugin's hot loop pays no call. The layout is part
 * of plugin ABI major 1.
 */
#ifndef POLIS_RNG_H
#define POLIS_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct polis_rng {
    uint64_t state;
    uint64_t inc; /* stream selector, always odd */
} polis_rng;

static inline uint32_t polis_rng_next(polis_rng *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* Seeds as pcg32_srandom_r(initstate, initseq). */
static inline void polis_rng_seed(polis_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0u;
    r->inc = (stream << 1u) | 1u;
    polis_rng_next(r);
    r->state += seed;
    polis_rng_next(r);
}

/* Uniform integer in [0, bound), bound >= 1, without modulo bias (Lemire's method with
 * rejection). Returns 0 for bound == 0. */
static inline uint32_t polis_rng_below(polis_rng *r, uint32_t bound)
{
    if (bound == 0) return 0;
    uint64_t m = (uint64_t)polis_rng_next(r) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)polis_rng_next(r) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* Uniform integer in [lo, hi] (inclusive); lo <= hi. */
static inline int32_t polis_rng_range(polis_rng *r, int32_t lo, int32_t hi)
{
    uint32_t span = (uint32_t)((int64_t)hi - (int64_t)lo + 1);
    if (span == 0) return (int32_t)polis_rng_next(r); /* full 32-bit range */
    return (int32_t)((int64_t)lo + polis_rng_below(r, span));
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double polis_rng_double(polis_rng *r)
{
    uint64_t hi = polis_rng_next(r) >> 5; /* 27 bits */
    uint64_t lo = polis_rng_next(r) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

#ifdef __cplusplus
}
#endif
#endif
