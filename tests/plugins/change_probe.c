/* Test plugin: a writer that reports what it changed (the "observations" host API), so that
 * compact observations narrow only those elements. One field "c" (i16 [4][40], ranges per
 * row: [0, 100], [-100, 0], [-128, 127], [0, 50]: stored as i8) kept up to date in the
 * writer's record (never cleared, also not at a reset):
 * at every write a few elements chosen from the tick and the agent take new values, all
 * inside their ranges, and the writer reports them as params.mode says:
 *   "none"    nothing (the kernel narrows the whole record)
 *   "list"    changed(ctx, at, n, 0) with the changed elements
 *   "column"  changed(ctx, &x, 1, 40) with each changed element's column (all four rows)
 *   "run"     changed_run(ctx, first, count) over the changed elements' span
 *   "empty"   "list", and changed(ctx, NULL, 0, 0) on writes that change nothing
 *   "partial" the first changed element only (an incomplete report: the buffer goes wrong)
 * At tick params.bad_tick (0: never) agent 1's write goes wrong as params.bad says:
 *   "value"   element 87 (row 2, column 7) = 300, reported
 *   "at"      reports element 160 (outside the 160-element record)
 *   "null"    changed(ctx, NULL, 2, 0)
 *   "run"     changed_run(ctx, 150, 20)
 * A second field "d" (i32 [3], range [0, 200]: stored as u8) is written in the dtype the
 * buffer holds (observations API version 2: writes_stored at init, stored() in the writer),
 * so the kernel neither keeps a record of its own for it nor narrows it; init fails when
 * stored() answers anything but -1 before the env exists. params.stored_probe:
 *   "foreign" init declares writes_stored for a field that is not its own (init fails)
 *   "late"    an OBSERVE hook declares it at tick 2, after registration (the step fails) */
#include <stddef.h>
#include <string.h>

#include "polis/kit.h"

#define ROWS 4
#define COLS 40

typedef struct cparams {
    const char *mode, *bad;
    int64_t bad_tick;
    const char *stored_probe;
} cparams;

typedef struct cstate {
    const polis_host *h;
    const polis_observations_api *api;
    int32_t field, field_d, dt_d;
    cparams p;
} cstate;

static void write_d(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    cstate *s = ud;
    if (s->dt_d < 0) s->dt_d = s->api->stored(ctx, s->field_d);
    const int64_t t = s->h->tick(ctx);
    for (int32_t i = 0; i < 3; i++) {
        const int32_t v = (int32_t)((t * 7 + agent * 3 + i * 50) % 201);
        if (s->dt_d == POLIS_DTYPE_U8)
            ((uint8_t *)dst)[i] = (uint8_t)v;
        else
            ((int32_t *)dst)[i] = v;
    }
}

static const int16_t LO[ROWS] = {0, -100, -128, 0}, HI[ROWS] = {100, 0, 127, 50};

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    return x ^ (x >> 16);
}

static void write_c(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    cstate *s = ud;
    int16_t *o = dst;
    const int64_t t = s->h->tick(ctx);
    int32_t at[8], n = 0;
    /* every 5th tick agent 0 changes nothing */
    const int32_t changes =
        agent == 0 && t % 5 == 0 ? 0 : 1 + (int32_t)(mix((uint32_t)(t * 31 + agent)) % 6);
    for (int32_t k = 0; k < changes; k++) {
        const uint32_t h = mix((uint32_t)(t * 977 + agent * 131 + k));
        const int32_t e = (int32_t)(h % (ROWS * COLS)), row = e / COLS;
        const int32_t span = HI[row] - LO[row] + 1;
        o[e] = (int16_t)(LO[row] + (int32_t)((h >> 12) % (uint32_t)span));
        at[n++] = e;
    }
    const bool bad = s->p.bad_tick && t == s->p.bad_tick && agent == 1;
    if (bad && !strcmp(s->p.bad, "value")) {
        o[2 * COLS + 7] = 300;
        at[n++] = 2 * COLS + 7;
    }
    if (!s->api->narrowed(ctx, s->field)) return;
    if (bad && !strcmp(s->p.bad, "at")) {
        const int32_t outside = ROWS * COLS;
        s->api->changed(ctx, &outside, 1, 0);
        return;
    }
    if (bad && !strcmp(s->p.bad, "null")) {
        s->api->changed(ctx, NULL, 2, 0);
        return;
    }
    if (bad && !strcmp(s->p.bad, "run")) {
        s->api->changed_run(ctx, 150, 20);
        return;
    }
    const char *m = s->p.mode;
    if (!strcmp(m, "partial")) {
        s->api->changed(ctx, at, n ? 1 : 0, 0);
    } else if (!strcmp(m, "list") || (!strcmp(m, "empty") && n)) {
        s->api->changed(ctx, at, (size_t)n, 0);
    } else if (!strcmp(m, "empty")) {
        s->api->changed(ctx, NULL, 0, 0);
    } else if (!strcmp(m, "column")) {
        for (int32_t i = 0; i < n; i++) {
            const int32_t x = at[i] % COLS;
            s->api->changed(ctx, &x, 1, COLS);
        }
    } else if (!strcmp(m, "run") && n) {
        int32_t lo = at[0], hi = at[0];
        for (int32_t i = 1; i < n; i++) {
            lo = at[i] < lo ? at[i] : lo;
            hi = at[i] > hi ? at[i] : hi;
        }
        s->api->changed_run(ctx, (size_t)lo, (size_t)(hi - lo + 1));
    }
}

/* stored_probe "late": writes_stored after registration, at tick 2 */
static polis_status late_stored(polis_ctx *ctx, void *ud)
{
    cstate *s = ud;
    return s->h->tick(ctx) == 2 ? s->api->writes_stored(ctx, s->field_d) : POLIS_OK;
}

static polis_status init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    cstate *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    memcpy(&s->p, params, sizeof s->p);
    if (!(s->api = h->host_api(ctx, POLIS_OBSERVATIONS_API, 2))) return POLIS_ERR_PLUGIN;
    polis_obs_def def = {.name = "c",
                         .doc = "kept up to date, changes reported",
                         .dtype = POLIS_DTYPE_I16,
                         .ndim = 2,
                         .shape = {ROWS, COLS},
                         .write = write_c,
                         .ud = s};
    polis_status st = h->observation(ctx, &def, &s->field);
    if (st) return st;
    const double lo[ROWS] = {LO[0], LO[1], LO[2], LO[3]}, hi[ROWS] = {HI[0], HI[1], HI[2], HI[3]};
    if ((st = h->obs_range(ctx, s->field, 0, ROWS, lo, hi))) return st;
    polis_obs_def d = {.name = "d",
                       .doc = "written in the stored dtype",
                       .dtype = POLIS_DTYPE_I32,
                       .ndim = 1,
                       .shape = {3},
                       .write = write_d,
                       .ud = s};
    if ((st = h->observation(ctx, &d, &s->field_d))) return st;
    s->dt_d = -1;
    if (s->api->stored(ctx, s->field_d) != -1) {
        h->error(ctx, "stored() answered a dtype before the env exists");
        return POLIS_ERR_PLUGIN;
    }
    if (!strcmp(s->p.stored_probe, "foreign") && (st = s->api->writes_stored(ctx, s->field_d + 1)))
        return st;
    if (!strcmp(s->p.stored_probe, "late") &&
        (st = h->hook(ctx, POLIS_PHASE_OBSERVE, 0, late_stored, s)))
        return st;
    const double dlo = 0, dhi = 200;
    if ((st = h->obs_range(ctx, s->field_d, -1, 1, &dlo, &dhi))) return st;
    return s->api->writes_stored(ctx, s->field_d);
}

static void destroy(polis_ctx *ctx, void *state)
{
    cstate *s = state;
    if (s) s->h->free(ctx, s, sizeof *s);
}

static const polis_param_def PARAMS[] = {
    POLIS_P_STRING(cparams, "mode", mode, "list", "how changes are reported"),
    POLIS_P_STRING(cparams, "bad", bad, "value", "what goes wrong at bad_tick"),
    POLIS_P_INT(cparams, "bad_tick", bad_tick, 0, 1000, 0, "when agent 1's write goes wrong"),
    POLIS_P_STRING(cparams, "stored_probe", stored_probe, "", "writes_stored misused"),
};

static const polis_plugin_desc DESC = {
    POLIS_DESC_HEAD("change_probe", 7),
    .version = "1.0.0",
    .doc = "test plugin: a writer that reports its changes",
    POLIS_DESC_PARAMS(PARAMS, cparams),
    .init = init,
    .destroy = destroy,
};
POLIS_PLUGIN(DESC)
