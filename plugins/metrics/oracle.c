/*
 * oracle.c — the oracle MILP (core.h) built row by row and solved with GLPK's
 * branch-and-cut (glp_intopt with its presolver, messages off).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glpk.h>

#include "core.h"

/* The constraint matrix as GLPK's 1-based triplets, grown in the caller's allocator. */
typedef struct triplets {
    int *ia, *ja;
    double *ar;
    int n, cap;
    const oracle_alloc *al;
    bool failed;
} triplets;

static void put(triplets *t, int row, int col, double v)
{
    if (t->failed || v == 0) return;
    if (t->n + 1 >= t->cap) {
        int ncap = t->cap ? t->cap * 2 : 256;
        int *ia = t->al->alloc(t->al->ud, sizeof *ia * (size_t)ncap);
        int *ja = t->al->alloc(t->al->ud, sizeof *ja * (size_t)ncap);
        double *ar = t->al->alloc(t->al->ud, sizeof *ar * (size_t)ncap);
        if (ia && ja && ar && t->cap) {
            memcpy(ia, t->ia, sizeof *ia * (size_t)t->cap);
            memcpy(ja, t->ja, sizeof *ja * (size_t)t->cap);
            memcpy(ar, t->ar, sizeof *ar * (size_t)t->cap);
        }
        if (t->cap) {
            t->al->free(t->al->ud, t->ia, sizeof *t->ia * (size_t)t->cap);
            t->al->free(t->al->ud, t->ja, sizeof *t->ja * (size_t)t->cap);
            t->al->free(t->al->ud, t->ar, sizeof *t->ar * (size_t)t->cap);
        }
        t->ia = ia, t->ja = ja, t->ar = ar;
        t->cap = ncap;
        if (!ia || !ja || !ar) {
            if (ia) t->al->free(t->al->ud, ia, sizeof *ia * (size_t)ncap);
            if (ja) t->al->free(t->al->ud, ja, sizeof *ja * (size_t)ncap);
            if (ar) t->al->free(t->al->ud, ar, sizeof *ar * (size_t)ncap);
            t->ia = t->ja = NULL;
            t->ar = NULL;
            t->cap = 0;
            t->failed = true;
            return;
        }
    }
    t->n++;
    t->ia[t->n] = row;
    t->ja[t->n] = col;
    t->ar[t->n] = v;
}

static void triplets_free(triplets *t)
{
    if (!t->cap) return;
    t->al->free(t->al->ud, t->ia, sizeof *t->ia * (size_t)t->cap);
    t->al->free(t->al->ud, t->ja, sizeof *t->ja * (size_t)t->cap);
    t->al->free(t->al->ud, t->ar, sizeof *t->ar * (size_t)t->cap);
}

oracle_status oracle_solve(const oracle_problem *p, const oracle_alloc *al, double *value,
                           int64_t *x, char *detail, size_t detail_size)
{
    const int32_t R = p->R, K = p->K;
    *value = 0;
    for (int32_t e = 0; e < K; e++) x[e] = 0;
    detail[0] = '\0';

    /* Columns: x_e 1..K, r_k K+1..K+R, d_e K+R+1..2K+R, y_k 2K+R+1..2K+2R. */
#define X(e) (1 + (e))
#define RR(k) (1 + K + (k))
#define D(e) (1 + K + R + (e))
#define Y(k) (1 + 2 * K + R + (k))
    double sum_a = 0, max_net = 1;
    for (int32_t k = 0; k < R; k++) sum_a += p->initial[k];
    for (int32_t e = 0; e < K; e++) {
        double net = 0;
        for (int32_t k = 0; k < R; k++) net += p->out[(size_t)e * R + k] - p->in[(size_t)e * R + k];
        if (net > max_net) max_net = net;
    }
    double big_m = sum_a * max_net;

    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    if (2 * K + 2 * R > 0) glp_add_cols(lp, 2 * K + 2 * R);
    for (int32_t e = 0; e < K; e++) {
        glp_set_col_kind(lp, X(e), GLP_IV);
        if (p->usable[e])
            glp_set_col_bnds(lp, X(e), GLP_LO, 0, 0);
        else
            glp_set_col_bnds(lp, X(e), GLP_FX, 0, 0);
        glp_set_col_kind(lp, D(e), GLP_BV);
        if (!p->usable[e]) glp_set_col_bnds(lp, D(e), GLP_FX, 0, 0);
    }
    for (int32_t k = 0; k < R; k++) {
        glp_set_col_kind(lp, RR(k), GLP_IV);
        glp_set_col_bnds(lp, RR(k), GLP_LO, 0, 0);
        glp_set_obj_coef(lp, RR(k), p->value[k]);
        glp_set_col_kind(lp, Y(k), GLP_BV);
        if (!p->reachable[k]) glp_set_col_bnds(lp, Y(k), GLP_FX, 0, 0);
    }

    triplets t = {.al = al};
    int row = 0;
    /* balance: r_k - Σ_e (out - in) x_e = a_k */
    for (int32_t k = 0; k < R; k++) {
        row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_FX, p->initial[k], p->initial[k]);
        put(&t, row, RR(k), 1);
        for (int32_t e = 0; e < K; e++)
            put(&t, row, X(e), -(double)(p->out[(size_t)e * R + k] - p->in[(size_t)e * R + k]));
    }
    /* x_e - M d_e <= 0 */
    for (int32_t e = 0; e < K; e++) {
        row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
        put(&t, row, X(e), 1);
        put(&t, row, D(e), -big_m);
    }
    /* Requirements: Σ_e' out_e'q x_e' - t z >= -a_q, z = d_e (recipes) or y_k (resources). */
    for (int pass = 0; pass < 2; pass++) {
        int32_t n = pass == 0 ? K : R;
        const int32_t *req = pass == 0 ? p->req : p->see;
        for (int32_t i = 0; i < n; i++)
            for (int32_t q = 0; q < R; q++) {
                int32_t need = req[(size_t)i * R + q];
                if (need <= 0) continue;
                row = glp_add_rows(lp, 1);
                glp_set_row_bnds(lp, row, GLP_LO, -p->initial[q], 0);
                for (int32_t e = 0; e < K; e++) put(&t, row, X(e), p->out[(size_t)e * R + q]);
                put(&t, row, pass == 0 ? D(i) : Y(i), -(double)need);
            }
    }
    /* d_e - y_k <= 0 for each input k of e */
    for (int32_t e = 0; e < K; e++)
        for (int32_t k = 0; k < R; k++) {
            if (p->in[(size_t)e * R + k] <= 0) continue;
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
            put(&t, row, D(e), 1);
            put(&t, row, Y(k), -1);
        }
#undef X
#undef RR
#undef D
#undef Y
    if (t.failed) {
        glp_delete_prob(lp);
        glp_free_env();
        snprintf(detail, detail_size, "out of memory");
        return ORACLE_NOMEM;
    }
    if (t.n > 0) glp_load_matrix(lp, t.n, t.ia, t.ja, t.ar);
    triplets_free(&t);

    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    if (p->time_limit_ms > 0) parm.tm_lim = p->time_limit_ms;
    int rc = 2 * K + 2 * R > 0 ? glp_intopt(lp, &parm) : 0;
    int status = 2 * K + 2 * R > 0 ? glp_mip_status(lp) : GLP_OPT;
    oracle_status result = ORACLE_OPTIMAL;
    if (rc != 0 || status != GLP_OPT) {
        snprintf(detail, detail_size, "%s",
                 rc == GLP_ETMLIM       ? "the solver's time limit was reached"
                 : status == GLP_NOFEAS ? "the problem has no integer solution"
                 : rc == GLP_ENOPFS     ? "the problem has no primal feasible solution"
                                        : "the solver failed");
        result = ORACLE_NOT_OPTIMAL;
    } else {
        *value = 2 * K + 2 * R > 0 ? glp_mip_obj_val(lp) : 0;
        for (int32_t e = 0; e < K; e++) x[e] = (int64_t)llround(glp_mip_col_val(lp, 1 + e));
    }
    glp_delete_prob(lp);
    /* GLPK keeps an environment per thread until glp_free_env: a thread that ends without it
     * (polis sweep's workers, any host's) leaks it. Nothing of GLPK is alive here any more. */
    glp_free_env();
    return result;
}
