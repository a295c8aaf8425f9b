/*
 * tests/plugins/ffi_exports.c — a plugin whose exports are called through libffi
 * (engine/ffi/ffi.c): typed bus subscribers and phase hooks bound from a scenario's "bindings",
 * helpers for Lua's polis.call with every signature type, and deliberately wrong exports
 * whose refusal tests/unit/test_ffi.c asserts word for word.
 *
 * It registers ffi.ping and ffi.mixed and publishes them from a POST hook each step; what
 * the bound exports receive goes into an ffi_exports_record (ffi_exports.h), offered as the
 * service "ffi_exports.record" and turned into the reward "ffi_ping" (each agent's received
 * value).
 */
#include <string.h>

#include "polis/kit.h"

#include "ffi_exports.h"

/* An export whose signature starts with ctx receives this plugin's own ctx, whose public
 * head (plugin.h) holds the host table and the state init() created. */
static const polis_host *host_of(polis_ctx *ctx) { return polis_ctx_host(ctx); }

static ffi_exports_record *record(polis_ctx *ctx) { return polis_ctx_state(ctx); }

/* ---- bound to events and phases -------------------------------------------------------- */

static void on_ping(polis_ctx *ctx, int32_t agent, double value, int64_t count)
{
    ffi_exports_record *r = record(ctx);
    if (agent < 0 || agent >= r->n_agents) {
        r->stray++;
        return;
    }
    r->ping_calls[agent]++;
    r->value[agent] = value;
    r->count[agent] = count;
}

static int32_t on_ping_i32(polis_ctx *ctx, int32_t agent, double value, int64_t count)
{
    ffi_exports_record *r = record(ctx);
    if (agent < 0 || agent >= r->n_agents || value != ffi_ping_value(r->pub_tick, agent) ||
        count != ffi_ping_count(r->pub_tick, agent)) {
        host_of(ctx)->error(ctx, "on_ping_i32: got agent %d value %g count %lld at tick %lld",
                            (int)agent, value, (long long)count, (long long)r->pub_tick);
        return POLIS_ERR_INVALID;
    }
    r->ping_i32_calls[agent]++;
    return POLIS_OK;
}

static void on_mixed(polis_ctx *ctx, float a, int32_t b, double c, int32_t d)
{
    ffi_exports_record *r = record(ctx);
    r->mixed_calls++;
    r->mixed.a = a;
    r->mixed.b = b;
    r->mixed.c = c;
    r->mixed.d = d;
}

static void on_begin(polis_ctx *ctx) { record(ctx)->begin_runs++; }

static int32_t guard(polis_ctx *ctx)
{
    ffi_exports_record *r = record(ctx);
    if (++r->guard_runs == r->fail_at) {
        host_of(ctx)->error(ctx, "guard tripped on run %lld", (long long)r->guard_runs);
        return r->fail_code;
    }
    return POLIS_OK;
}

/* ---- helpers for polis.call ------------------------------------------------------------- */

static int32_t add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static double scale(double v, float by) { return v * (double)by; }
static int64_t big(int64_t x) { return x * 3 - 1; }
static bool is_even(int32_t x) { return x % 2 == 0; }
static bool not_(bool b) { return !b; }
static float mulf(float a, float b) { return a * b; }
static int32_t strlen_(const char *s) { return (int32_t)strlen(s); }
static int32_t agents(polis_ctx *ctx) { return host_of(ctx)->n_agents(ctx); }
static const char *parity(int32_t x) { return x % 2 == 0 ? "even" : "odd"; }

/* Keeps the last value it was given so a void return can be observed. */
static void note(polis_ctx *ctx, int64_t v) { record(ctx)->note = v; }

/* Sixteen arguments of every numeric class: more than the registers of any ABI hold, so
 * some travel on the stack. Each is weighted by its position, so an order mistake shows. */
static double sum16(int32_t a1, int64_t a2, float a3, double a4, bool a5, int32_t a6, int64_t a7,
                    float a8, double a9, bool a10, int32_t a11, int64_t a12, float a13, double a14,
                    bool a15, int32_t a16)
{
    return 1.0 * a1 + 2.0 * (double)a2 + 3.0 * a3 + 4.0 * a4 + 5.0 * a5 + 6.0 * a6 +
           7.0 * (double)a7 + 8.0 * a8 + 9.0 * a9 + 10.0 * a10 + 11.0 * a11 + 12.0 * (double)a12 +
           13.0 * a13 + 14.0 * a14 + 15.0 * a15 + 16.0 * a16;
}

/* The target of the exports that must be refused before anything calls them. */
static void never_called(void) {}

#define FN(f) ((void (*)(void))(f))

static const polis_export fx_exports[] = {
    {"on_ping", "void(ctx,i32,f64,i64)", FN(on_ping), "records an ffi.ping"},
    {"on_ping_i32", "i32(ctx, i32, f64, i64)", FN(on_ping_i32), "checks an ffi.ping"},
    {"on_mixed", "void(ctx,f32,i32,f64,i32)", FN(on_mixed), "records an ffi.mixed"},
    {"on_begin", "void(ctx)", FN(on_begin), "counts its runs"},
    {"guard", "i32(ctx)", FN(guard), "fails on run params.fail_at"},
    {"add", "i32(i32,i32)", FN(add), "a + b, wrapping"},
    {"scale", " f64 ( f64 ,\tf32 ) ", FN(scale), "v * by"},
    {"big", "i64(i64)", FN(big), "3x - 1"},
    {"is_even", "bool(i32)", FN(is_even), "x % 2 == 0"},
    {"not_", "bool(bool)", FN(not_), "!b"},
    {"mulf", "f32(f32,f32)", FN(mulf), "a * b"},
    {"strlen_", "i32(str)", FN(strlen_), "strlen(s)"},
    {"agents", "i32(ctx)", FN(agents), "the caller's agent count"},
    {"parity", "str(i32)", FN(parity), "\"even\" or \"odd\""},
    {"note", "void(ctx,i64)", FN(note), "stores v in the record"},
    {"sum16", "f64(i32,i64,f32,f64,bool,i32,i64,f32,f64,bool,i32,i64,f32,f64,bool,i32)", FN(sum16),
     "a position-weighted sum"},
    /* wrong on purpose */
    {"bad", "i32(i32,,f64)", FN(never_called), NULL},
    {"ctx_late", "i32(i32, ctx)", FN(never_called), NULL},
    {"too_many", "void(i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32)",
     FN(never_called), NULL},
    {"unknown_type", "i32(int)", FN(never_called), NULL},
    {"void_param", "void(void)", FN(never_called), NULL},
    {"trailing", "i32(i32) x", FN(never_called), NULL},
    {"ctx_ret", "ctx(i32)", FN(never_called), NULL},
    {"no_paren", "i32 i32", FN(never_called), NULL},
    {"on_ping_short", "void(ctx,i32,f64)", FN(never_called), NULL},
    {"on_ping_f32", "void(ctx,i32,f32,i64)", FN(never_called), NULL},
    {"on_ping_noctx", "void(i32,f64,i64)", FN(never_called), NULL},
    {"no_fn", "void(ctx)", NULL, NULL},
};

/* ---- the plugin ------------------------------------------------------------------------- */

typedef struct fx_params {
    int64_t fail_at;
    int64_t fail_code;
} fx_params;

static const polis_param_def fx_params_defs[] = {
    POLIS_P_INT(fx_params, "fail_at", fail_at, -1, 1000000, -1,
                "the run of the guard hook that fails (-1: never)"),
    POLIS_P_INT(fx_params, "fail_code", fail_code, 0, 1000, POLIS_ERR_LIMIT,
                "what the guard returns when it fails"),
};

static polis_status publish(polis_ctx *ctx, void *ud)
{
    ffi_exports_record *r = ud;
    const polis_host *h = host_of(ctx);
    r->pub_tick = h->tick(ctx);
    r->posts++;
    r->mixed_calls = 0;
    for (int32_t a = 0; a < r->n_agents; a++) r->ping_calls[a] = r->ping_i32_calls[a] = 0;
    for (int32_t a = 0; a < r->n_agents; a++) {
        ffi_ping p = {a, ffi_ping_value(r->pub_tick, a), ffi_ping_count(r->pub_tick, a)};
        polis_status st = h->publish(ctx, r->type_ping, &p, sizeof p);
        if (st != POLIS_OK) return st;
    }
    ffi_mixed m = ffi_mixed_at(r->pub_tick);
    return h->publish(ctx, r->type_mixed, &m, sizeof m);
}

static polis_status reward(polis_ctx *ctx, void *ud, float *out)
{
    const ffi_exports_record *r = ud;
    for (int32_t a = 0; a < r->n_agents; a++) out[a] = r->ping_calls[a] ? (float)r->value[a] : 0.0f;
    return POLIS_OK;
}

static polis_status fx_init(const polis_host *h, polis_ctx *ctx, const void *params, void **state)
{
    const fx_params *p = params;
    int32_t n = h->n_agents(ctx);
    if (n > FFI_EXPORTS_MAX_AGENTS) {
        h->error(ctx, "at most %d agents, got %d", FFI_EXPORTS_MAX_AGENTS, (int)n);
        return POLIS_ERR_CONFIG;
    }
    ffi_exports_record *r = h->alloc(ctx, sizeof *r);
    if (!r) {
        h->error(ctx, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    *state = r;
    r->n_agents = n;
    r->fail_at = (int32_t)p->fail_at;
    r->fail_code = (int32_t)p->fail_code;

    static const polis_field_def ping[] = {
        {"agent", POLIS_FIELD_I32}, {"value", POLIS_FIELD_F64}, {"count", POLIS_FIELD_I64}};
    static const polis_field_def mixed[] = {{"a", POLIS_FIELD_F32},
                                            {"b", POLIS_FIELD_I32},
                                            {"c", POLIS_FIELD_F64},
                                            {"d", POLIS_FIELD_I32}};
    polis_status st;
    if ((st = h->event_type(ctx, "ffi.ping", ping, 3, &r->type_ping)) != POLIS_OK ||
        (st = h->event_type(ctx, "ffi.mixed", mixed, 4, &r->type_mixed)) != POLIS_OK ||
        (st = h->hook(ctx, POLIS_PHASE_POST, 0, publish, r)) != POLIS_OK ||
        (st = h->reward(ctx, "ffi_ping", reward, r)) != POLIS_OK ||
        (st = h->service_provide(ctx, "ffi_exports.record", r)) != POLIS_OK)
        return st;
    return POLIS_OK;
}

static void fx_destroy(polis_ctx *ctx, void *state)
{
    if (state) host_of(ctx)->free(ctx, state, sizeof(ffi_exports_record));
}

static const polis_plugin_desc fx_desc = {
    POLIS_DESC_HEAD("ffi_exports", 7),
    .version = "1.0",
    .doc = "test plugin: exports called through libffi",
    POLIS_DESC_PARAMS(fx_params_defs, fx_params),
    .init = fx_init,
    .destroy = fx_destroy,
    POLIS_DESC_EXPORTS(fx_exports),
};

POLIS_PLUGIN(fx_desc)
