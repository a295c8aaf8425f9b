/*
 * core.h — the metrics plugin's core, which knows nothing of the engine: AdaSociety's
 * oracle (seeds/002 eq. 5, as specs/adasociety.md §16 states it), the most value one agent
 * holding every skill could make from the world's resources, ignoring time, distances and
 * capacities, as a mixed-integer program solved with GLPK.
 *
 *   variables  x_e ∈ ℤ≥0 executions of recipe e, r_k ∈ ℤ≥0 final units of resource k,
 *              d_e ∈ {0,1} recipe e used, y_k ∈ {0,1} resource k accessible
 *   maximise   Σ_k v_k r_k
 *   subject to r_k = a_k + Σ_e x_e (out_ek − in_ek)                    (balance)
 *              x_e ≤ M d_e, M = Σ_k a_k · max(1, max_e Σ_k (out_ek − in_ek))
 *              a_q + Σ_e' x_e' out_e'q ≥ t d_e   for each requirement (q, t) of recipe e
 *              a_q + Σ_e' x_e' out_e'q ≥ t y_k   for each requirement (q, t) of resource k
 *              d_e ≤ y_k                         for each input k of recipe e
 *
 * Recipes that are not placed in the world, or that require a resource not in play, cannot
 * run (x_e = d_e = 0); a resource requiring a resource not in play is never accessible
 * (y_k = 0), so no recipe consumes it, though its initial units still count in the value, as
 * in AdaSociety's cal_oracle.py.
 *
 * Pure C over plain arrays so the tests solve hand-made cases; memory for the model comes
 * from the caller's allocator, GLPK's own from malloc (GLPK offers no allocator hook).
 * oracle.c solves it with GLPK; a build without GLPK compiles oracle_none.c instead, whose
 * oracle_solve always answers ORACLE_UNAVAILABLE (the oracle is off).
 */
#ifndef METRICS_CORE_H
#define METRICS_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oracle_problem {
    int32_t R, K;
    const double *initial;    /* [R] a_k */
    const double *value;      /* [R] v_k */
    const int32_t *in;        /* [K][R] units consumed */
    const int32_t *out;       /* [K][R] units produced */
    const int32_t *req;       /* [K][R] units held to see and use the recipe */
    const int32_t *see;       /* [R][R] see[k][q]: units of q held to see and pick k */
    const uint8_t *usable;    /* [K] 0: the recipe can never run (not placed, unmeetable) */
    const uint8_t *reachable; /* [R] 0: the resource can never be seen (unmeetable) */
    int32_t time_limit_ms;    /* GLPK's limit; 0: none */
} oracle_problem;

typedef enum oracle_status {
    ORACLE_OPTIMAL = 0,
    ORACLE_NOT_OPTIMAL = 1, /* time limit or a solver failure: no value */
    ORACLE_NOMEM = 2,
    ORACLE_UNAVAILABLE = 3 /* polis was built without a solver (GLPK): the oracle is off */
} oracle_status;

typedef struct oracle_alloc {
    void *(*alloc)(void *ud, size_t size); /* zeroed; NULL on failure */
    void (*free)(void *ud, void *p, size_t size);
    void *ud;
} oracle_alloc;

/* Solves the problem: *value is the optimum, x[0..K) the executions of an optimal solution
 * (GLPK's). `detail` receives a short reason when the status is not ORACLE_OPTIMAL. */
oracle_status oracle_solve(const oracle_problem *p, const oracle_alloc *al, double *value,
                           int64_t *x, char *detail, size_t detail_size);

#endif
