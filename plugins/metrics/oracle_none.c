/*
 * oracle_none.c — the oracle of a build without GLPK (configured with POLIS_GLPK=OFF, or
 * AUTO where libglpk-dev is missing): there is no solver, so the oracle is off and every
 * metric that needs it (oracle, normalised rewards, completion rates) is undefined.
 */
#include <stdio.h>

#include "core.h"

oracle_status oracle_solve(const oracle_problem *p, const oracle_alloc *al, double *value,
                           int64_t *x, char *detail, size_t detail_size)
{
    (void)al;
    *value = 0;
    for (int32_t e = 0; e < p->K; e++) x[e] = 0;
    snprintf(detail, detail_size,
             "off: polis was built without GLPK (install libglpk-dev and reconfigure)");
    return ORACLE_UNAVAILABLE;
}
