/* tests/unit/test_ffi.c — engine/ffi/ffi.c: exports of tests/plugins/ffi_exports.c bound from
 * scenarios (tests/scenarios/ffi/) and called directly, every refusal with its exact text,
 * no allocation on the call paths, and clean out-of-memory failures. */
#include <float.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/internal.h"
#include "ffi/internal.h"
#include "plugins/ffi_exports.h"

#define FIXTURE(name) POLIS_TEST_SOURCE_DIR "/scenarios/ffi/" name

/* An allocator that counts, tracks live bytes and can fail its Nth allocation. */
typedef struct counter {
    long long allocs;  /* successful and failed (re)allocations */
    long long live;    /* bytes held */
    long long fail_at; /* 0: never */
} counter;

static void *count_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
    counter *c = ud;
    if (nsize == 0) {
        if (p) c->live -= (long long)osize;
        free(p);
        return NULL;
    }
    if (++c->allocs == c->fail_at) return NULL;
    void *q = realloc(p, nsize);
    if (q) c->live += (long long)nsize - (p ? (long long)osize : 0);
    return q;
}

static polis_options options(counter *c)
{
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = POLIS_TEST_PLUGIN_DIR;
    if (c) {
        o.alloc = count_alloc;
        o.alloc_ud = c;
    }
    return o;
}

static polis_env *open_fixture(const char *path, counter *c)
{
    polis_options o = options(c);
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_file(path, &o, &env, &err);
    if (st != POLIS_OK) fprintf(stderr, "%s: %s\n", path, err.message);
    CHECK_EQ_INT(st, POLIS_OK);
    return env;
}

static ffi_exports_record *record_of(polis_env *env)
{
    polis_ctx *ctx = polis__ctx_find(env, "ffi_exports");
    CHECK(ctx != NULL);
    return ctx ? (ffi_exports_record *)polis__host()->service(ctx, "ffi_exports.record") : NULL;
}

static const polis__ffi_fn *lookup(polis_env *env, const char *name)
{
    const polis__ffi_fn *f = NULL;
    polis_status st = polis__ffi_lookup(env, name, &f);
    if (st != POLIS_OK) fprintf(stderr, "lookup %s: %s\n", name, polis_env_error(env));
    CHECK_EQ_INT(st, POLIS_OK);
    return f;
}

/* ---- bound subscribers and hooks ------------------------------------------------------- */

static void test_bound_exports_receive_every_event(void)
{
    polis_env *env = open_fixture(FIXTURE("bind_ok.json"), NULL);
    if (!env) return;
    ffi_exports_record *r = record_of(env);
    const polis_io *io = polis_env_io(env);
    CHECK_EQ_INT(polis_env_reset(env, 7), POLIS_OK);
    CHECK_EQ_INT(r->posts, 0);
    CHECK_EQ_INT(r->begin_runs, 0);
    int64_t prev_tick = -1;
    for (int step = 1; step <= 40; step++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(r->posts, step);
        CHECK_EQ_INT(r->begin_runs, step);
        CHECK_EQ_INT(r->guard_runs, step);
        if (prev_tick >= 0) CHECK_EQ_INT(r->pub_tick, prev_tick + 1);
        prev_tick = r->pub_tick;
        int64_t t = r->pub_tick;
        for (int32_t a = 0; a < io->n_agents; a++) {
            CHECK_EQ_INT(r->ping_calls[a], 1);
            CHECK_EQ_INT(r->ping_i32_calls[a], 1);
            CHECK(r->value[a] == ffi_ping_value(t, a));
            CHECK_EQ_INT(r->count[a], ffi_ping_count(t, a));
            CHECK(io->rewards[a] == (float)ffi_ping_value(t, a));
        }
        ffi_mixed m = ffi_mixed_at(t);
        CHECK_EQ_INT(r->mixed_calls, 1);
        CHECK(r->mixed.a == m.a);
        CHECK_EQ_INT(r->mixed.b, m.b);
        CHECK(r->mixed.c == m.c);
        CHECK_EQ_INT(r->mixed.d, m.d);
        CHECK_EQ_INT(r->stray, 0);
        if (step == 1) CHECK(r->value[2] < 0); /* negative values do travel */
    }
    /* the counts do reach past 32 bits, both ways */
    CHECK(r->count[1] < INT32_MIN);
    CHECK(r->count[2] > INT32_MAX);
    polis_env_destroy(env);
}

static void test_i32_hook_status_fails_the_step(void)
{
    polis_env *env = open_fixture(FIXTURE("guard_fails.json"), NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_LIMIT);
    CHECK_CONTAINS(polis_env_error(env), "ffi_exports: guard tripped on run 3");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
    polis_env_destroy(env);

    env = open_fixture(FIXTURE("guard_bad_status.json"), NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_FFI);
    CHECK_CONTAINS(polis_env_error(env),
                   "ffi_exports: ffi_exports.guard returned 42, which is not a polis_status");
    polis_env_destroy(env);
}

/* ---- refused bindings --------------------------------------------------------------------- */

static const char *const all_exports =
    "on_ping, on_ping_i32, on_mixed, on_begin, guard, add, scale, big, is_even, not_, mulf, "
    "strlen_, agents, parity, note, sum16, bad, ctx_late, too_many, unknown_type, void_param, "
    "trailing, ctx_ret, no_paren, on_ping_short, on_ping_f32, on_ping_noctx, no_fn";

static void check_refused(const char *file, polis_status want, const char *want_tail)
{
    char path[1024], want_msg[2048];
    snprintf(path, sizeof path, "%s/scenarios/ffi/%s", POLIS_TEST_SOURCE_DIR, file);
    snprintf(want_msg, sizeof want_msg, "%s: %s", path, want_tail);
    counter c = {0, 0, 0};
    polis_options o = options(&c);
    polis_env *env = (polis_env *)&c; /* must be reset to NULL on failure */
    polis_error err;
    polis_status st = polis_env_create_file(path, &o, &env, &err);
    CHECK_EQ_INT(st, want);
    CHECK_EQ_INT(err.status, want);
    CHECK(env == NULL);
    CHECK_EQ_STR(err.message, want_msg);
    CHECK_EQ_INT(c.live, 0);
    if (st == POLIS_OK) polis_env_destroy(env);
}

static void test_refused_bindings(void)
{
    char msg[1024];
    check_refused("bind_unknown_plugin.json", POLIS_ERR_FFI,
                  "bindings[0].call: \"nope.on_ping\": no plugin named \"nope\" is loaded");
    snprintf(msg, sizeof msg,
             "bindings[1].call: \"ffi_exports.on_pong\": plugin ffi_exports has no export "
             "\"on_pong\" (it exports: %s)",
             all_exports);
    check_refused("bind_unknown_export.json", POLIS_ERR_FFI, msg);
    check_refused("bind_not_qualified.json", POLIS_ERR_FFI,
                  "bindings[0].call: \"on_ping\" does not name an export (expected "
                  "\"plugin.export\")");
    check_refused("bind_script.json", POLIS_ERR_FFI,
                  "bindings[0].call: \"noop.tick\": noop is a Lua script; only .so plugins "
                  "have exports");
    check_refused("bind_bad_signature.json", POLIS_ERR_FFI,
                  "bindings[0].call: plugin ffi_exports: export \"bad\": signature "
                  "\"i32(i32,,f64)\": expected a type at column 9");
    check_refused("bind_event_short.json", POLIS_ERR_FFI,
                  "bindings[1].call: ffi_exports.on_ping_short has signature void(ctx,i32,f64), "
                  "but event ffi.ping needs void(ctx,i32,f64,i64) or i32(ctx,i32,f64,i64)");
    check_refused("bind_event_f32.json", POLIS_ERR_FFI,
                  "bindings[0].call: ffi_exports.on_ping_f32 has signature "
                  "void(ctx,i32,f32,i64), but event ffi.ping needs void(ctx,i32,f64,i64) or "
                  "i32(ctx,i32,f64,i64)");
    check_refused("bind_event_noctx.json", POLIS_ERR_FFI,
                  "bindings[0].call: ffi_exports.on_ping_noctx has signature void(i32,f64,i64), "
                  "but event ffi.ping needs void(ctx,i32,f64,i64) or i32(ctx,i32,f64,i64)");
    check_refused("bind_event_mixed.json", POLIS_ERR_FFI,
                  "bindings[0].call: ffi_exports.on_ping has signature void(ctx,i32,f64,i64), "
                  "but event ffi.mixed needs void(ctx,f32,i32,f64,i32) or "
                  "i32(ctx,f32,i32,f64,i32)");
    check_refused("bind_unknown_event.json", POLIS_ERR_CONFIG,
                  "bindings[0].event: unknown event type \"ffi.pong\"");
    check_refused("bind_hook_mismatch.json", POLIS_ERR_FFI,
                  "bindings[0].call: ffi_exports.add has signature i32(i32,i32), but a post "
                  "hook needs void(ctx) or i32(ctx)");
    check_refused("bind_hook_subscriber.json", POLIS_ERR_FFI,
                  "bindings[0].call: ffi_exports.on_ping has signature void(ctx,i32,f64,i64), "
                  "but a world hook needs void(ctx) or i32(ctx)");
}

/* ---- lookups ------------------------------------------------------------------------------- */

static void check_lookup_refused(polis_env *env, const char *name, const char *want)
{
    const polis__ffi_fn *f = (const polis__ffi_fn *)env; /* must be reset to NULL */
    CHECK_EQ_INT(polis__ffi_lookup(env, name, &f), POLIS_ERR_FFI);
    CHECK(f == NULL);
    CHECK_EQ_STR(polis_env_error(env), want);
}

static void test_lookup(polis_env *env)
{
    const polis__ffi_fn *f = lookup(env, "ffi_exports.on_ping");
    if (f) {
        CHECK_EQ_STR(polis__ffi_signature(f), "void(ctx,i32,f64,i64)");
        CHECK_EQ_INT(polis__ffi_ret(f), POLIS__FT_VOID);
        CHECK_EQ_INT(polis__ffi_nparams(f), 4);
        CHECK_EQ_INT(polis__ffi_param(f, 0), POLIS__FT_CTX);
        CHECK_EQ_INT(polis__ffi_param(f, 1), POLIS__FT_I32);
        CHECK_EQ_INT(polis__ffi_param(f, 2), POLIS__FT_F64);
        CHECK_EQ_INT(polis__ffi_param(f, 3), POLIS__FT_I64);
        CHECK(lookup(env, "ffi_exports.on_ping") == f); /* cached */
    }
    /* whitespace is allowed anywhere between tokens and dropped from the canonical form */
    f = lookup(env, "ffi_exports.scale");
    if (f) CHECK_EQ_STR(polis__ffi_signature(f), "f64(f64,f32)");
    f = lookup(env, "ffi_exports.on_ping_i32");
    if (f) CHECK_EQ_STR(polis__ffi_signature(f), "i32(ctx,i32,f64,i64)");
    f = lookup(env, "ffi_exports.parity");
    if (f) {
        CHECK_EQ_INT(polis__ffi_ret(f), POLIS__FT_STR);
        CHECK_EQ_INT(polis__ffi_nparams(f), 1);
    }
    f = lookup(env, "ffi_exports.sum16");
    if (f) CHECK_EQ_INT(polis__ffi_nparams(f), POLIS__FFI_MAXARGS);

    char msg[1024];
    check_lookup_refused(env, "nope.add", "\"nope.add\": no plugin named \"nope\" is loaded");
    check_lookup_refused(env, "add",
                         "\"add\" does not name an export (expected \"plugin.export\")");
    check_lookup_refused(env, ".add",
                         "\".add\" does not name an export (expected \"plugin.export\")");
    check_lookup_refused(env, "ffi_exports.",
                         "\"ffi_exports.\" does not name an export (expected \"plugin.export\")");
    check_lookup_refused(env, "polis.add",
                         "\"polis.add\": polis is the kernel; only .so plugins have exports");
    snprintf(msg, sizeof msg,
             "\"ffi_exports.nope\": plugin ffi_exports has no export \"nope\" (it exports: %s)",
             all_exports);
    check_lookup_refused(env, "ffi_exports.nope", msg);
    check_lookup_refused(env, "ffi_exports.bad",
                         "plugin ffi_exports: export \"bad\": signature \"i32(i32,,f64)\": "
                         "expected a type at column 9");
    check_lookup_refused(env, "ffi_exports.ctx_late",
                         "plugin ffi_exports: export \"ctx_late\": signature \"i32(i32, ctx)\": "
                         "ctx must be the first parameter, at column 10");
    check_lookup_refused(env, "ffi_exports.too_many",
                         "plugin ffi_exports: export \"too_many\": signature \"void(i32,i32,i32,"
                         "i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32,i32)\": more than "
                         "16 parameters, at column 70");
    check_lookup_refused(env, "ffi_exports.unknown_type",
                         "plugin ffi_exports: export \"unknown_type\": signature \"i32(int)\": "
                         "unknown type \"int\" at column 5 (types: void, i32, i64, f32, f64, "
                         "bool, str, ctx; pointers: u8*, i8*, i16*, i32*, f32*)");
    check_lookup_refused(env, "ffi_exports.void_param",
                         "plugin ffi_exports: export \"void_param\": signature \"void(void)\": "
                         "void is only a return type, at column 6");
    check_lookup_refused(env, "ffi_exports.trailing",
                         "plugin ffi_exports: export \"trailing\": signature \"i32(i32) x\": "
                         "unexpected \"x\" after ')' at column 10");
    check_lookup_refused(env, "ffi_exports.ctx_ret",
                         "plugin ffi_exports: export \"ctx_ret\": signature \"ctx(i32)\": ctx is "
                         "not a return type, at column 1");
    check_lookup_refused(env, "ffi_exports.no_paren",
                         "plugin ffi_exports: export \"no_paren\": signature \"i32 i32\": "
                         "expected '(' at column 5");
    check_lookup_refused(env, "ffi_exports.no_fn",
                         "plugin ffi_exports: export \"no_fn\" has no function pointer");
}

/* ---- calls --------------------------------------------------------------------------------- */

static polis__ffi_value call(polis_env *env, const char *name, polis_ctx *caller,
                             const polis__ffi_value *args, int32_t nargs)
{
    polis__ffi_value ret;
    memset(&ret, 0xa5, sizeof ret); /* a stale return value must not survive the call */
    const polis__ffi_fn *f = lookup(env, name);
    if (!f) return ret;
    polis_status st = polis__ffi_call(env, f, caller, args, nargs, &ret);
    if (st != POLIS_OK) fprintf(stderr, "call %s: %s\n", name, polis_env_error(env));
    CHECK_EQ_INT(st, POLIS_OK);
    return ret;
}

static polis__ffi_value i32v(int32_t v)
{
    polis__ffi_value x = {.i32 = v};
    return x;
}
static polis__ffi_value i64v(int64_t v)
{
    polis__ffi_value x = {.i64 = v};
    return x;
}
static polis__ffi_value f32v(float v)
{
    polis__ffi_value x = {.f32 = v};
    return x;
}
static polis__ffi_value f64v(double v)
{
    polis__ffi_value x = {.f64 = v};
    return x;
}
static polis__ffi_value boolv(bool v)
{
    polis__ffi_value x = {.b = v};
    return x;
}
static polis__ffi_value strv(const char *v)
{
    polis__ffi_value x = {.str = v};
    return x;
}

static void test_calls(polis_env *env)
{
    polis_ctx *plugin = polis__ctx_find(env, "ffi_exports");
    ffi_exports_record *r = record_of(env);
    if (!plugin || !r) return;

    polis__ffi_value a2[2] = {i32v(2), i32v(3)};
    CHECK_EQ_INT(call(env, "ffi_exports.add", NULL, a2, 2).i32, 5);
    a2[0] = i32v(-7);
    a2[1] = i32v(INT32_MIN + 7);
    CHECK_EQ_INT(call(env, "ffi_exports.add", NULL, a2, 2).i32, INT32_MIN);
    a2[0] = i32v(INT32_MAX);
    a2[1] = i32v(1);
    CHECK_EQ_INT(call(env, "ffi_exports.add", NULL, a2, 2).i32, INT32_MIN);

    polis__ffi_value sc[2] = {f64v(-1.25), f32v(3.5f)};
    CHECK(call(env, "ffi_exports.scale", NULL, sc, 2).f64 == -4.375);
    sc[0] = f64v(1e300);
    sc[1] = f32v(0.5f);
    CHECK(call(env, "ffi_exports.scale", NULL, sc, 2).f64 == 5e299);

    polis__ffi_value b = i64v(-3000000000000LL);
    CHECK_EQ_INT(call(env, "ffi_exports.big", NULL, &b, 1).i64, -9000000000001LL);
    b = i64v(INT64_MAX / 3);
    CHECK_EQ_INT(call(env, "ffi_exports.big", NULL, &b, 1).i64, INT64_MAX / 3 * 3 - 1);
    b = i64v(0x100000000LL);
    CHECK_EQ_INT(call(env, "ffi_exports.big", NULL, &b, 1).i64, 0x2ffffffffLL);

    polis__ffi_value e = i32v(-4);
    CHECK(call(env, "ffi_exports.is_even", NULL, &e, 1).b == true);
    e = i32v(7);
    CHECK(call(env, "ffi_exports.is_even", NULL, &e, 1).b == false);
    e = i32v(-7);
    CHECK(call(env, "ffi_exports.is_even", NULL, &e, 1).b == false);
    e = boolv(true);
    CHECK(call(env, "ffi_exports.not_", NULL, &e, 1).b == false);
    e = boolv(false);
    CHECK(call(env, "ffi_exports.not_", NULL, &e, 1).b == true);

    polis__ffi_value m[2] = {f32v(-1.5f), f32v(1e20f)};
    CHECK(call(env, "ffi_exports.mulf", NULL, m, 2).f32 == -1.5e20f);
    m[0] = f32v(FLT_MIN);
    m[1] = f32v(2.0f);
    CHECK(call(env, "ffi_exports.mulf", NULL, m, 2).f32 == FLT_MIN * 2.0f);

    polis__ffi_value s = strv("hello");
    CHECK_EQ_INT(call(env, "ffi_exports.strlen_", NULL, &s, 1).i32, 5);
    s = strv("");
    CHECK_EQ_INT(call(env, "ffi_exports.strlen_", NULL, &s, 1).i32, 0);

    CHECK_EQ_INT(call(env, "ffi_exports.agents", plugin, NULL, 0).i32, polis_env_n_agents(env));

    polis__ffi_value p = i32v(10);
    CHECK_EQ_STR(call(env, "ffi_exports.parity", NULL, &p, 1).str, "even");
    p = i32v(-3);
    CHECK_EQ_STR(call(env, "ffi_exports.parity", NULL, &p, 1).str, "odd");

    polis__ffi_value nv = i64v(-5000000000LL);
    call(env, "ffi_exports.note", plugin, &nv, 1);
    CHECK_EQ_INT(r->note, -5000000000LL);

    polis__ffi_value many[16] = {
        i32v(-1),     i64v(5000000000LL), f32v(0.5f),  f64v(-2.25),  boolv(true), i32v(6),
        i64v(-7),     f32v(8.5f),         f64v(1e10),  boolv(false), i32v(-11),   i64v(12),
        f32v(13.25f), f64v(-14.5),        boolv(true), i32v(16)};
    double want = 1.0 * -1 + 2.0 * 5000000000.0 + 3.0 * 0.5 + 4.0 * -2.25 + 5.0 * 1 + 6.0 * 6 +
                  7.0 * -7 + 8.0 * 8.5 + 9.0 * 1e10 + 10.0 * 0 + 11.0 * -11 + 12.0 * 12 +
                  13.0 * 13.25 + 14.0 * -14.5 + 15.0 * 1 + 16.0 * 16;
    CHECK(call(env, "ffi_exports.sum16", NULL, many, 16).f64 == want);

    /* refusals of a call */
    const polis__ffi_fn *add = lookup(env, "ffi_exports.add");
    polis__ffi_value ret;
    CHECK_EQ_INT(polis__ffi_call(env, add, NULL, a2, 1, &ret), POLIS_ERR_FFI);
    CHECK_EQ_STR(polis_env_error(env), "ffi_exports.add(i32,i32) takes 2 arguments, got 1");
    const polis__ffi_fn *agents = lookup(env, "ffi_exports.agents");
    CHECK_EQ_INT(polis__ffi_call(env, agents, plugin, a2, 1, &ret), POLIS_ERR_FFI);
    CHECK_EQ_STR(polis_env_error(env), "ffi_exports.agents(ctx) takes 0 arguments, got 1");
    const polis__ffi_fn *sl = lookup(env, "ffi_exports.strlen_");
    s = strv(NULL);
    CHECK_EQ_INT(polis__ffi_call(env, sl, NULL, &s, 1, &ret), POLIS_ERR_FFI);
    CHECK_EQ_STR(polis_env_error(env), "ffi_exports.strlen_: argument 1 (str) is NULL");
    CHECK_EQ_INT(polis__ffi_call(env, NULL, NULL, NULL, 0, &ret), POLIS_ERR_INVALID);
    /* a NULL ret is allowed: the value is dropped */
    CHECK_EQ_INT(polis__ffi_call(env, add, NULL, a2, 2, NULL), POLIS_OK);
}

/* ---- allocation ---------------------------------------------------------------------------- */

static void test_no_allocation_on_call_paths(void)
{
    counter c = {0, 0, 0};
    polis_env *env = open_fixture(FIXTURE("bind_ok.json"), &c);
    if (!env) return;
    ffi_exports_record *r = record_of(env);
    polis_ctx *plugin = polis__ctx_find(env, "ffi_exports");
    CHECK_EQ_INT(polis_env_reset(env, 3), POLIS_OK);
    const polis__ffi_fn *add = lookup(env, "ffi_exports.add");
    const polis__ffi_fn *sum16 = lookup(env, "ffi_exports.sum16");
    const polis__ffi_fn *sl = lookup(env, "ffi_exports.strlen_");
    const polis__ffi_fn *note = lookup(env, "ffi_exports.note");
    if (!r || !plugin || !add || !sum16 || !sl || !note) {
        polis_env_destroy(env);
        return;
    }
    long long before = c.allocs;
    int64_t sum = 0;
    polis_status worst = POLIS_OK;
    for (int i = 0; i < 10000; i++) {
        polis_status st = polis_env_step(env);
        if (st != POLIS_OK) worst = st;
        const polis__ffi_fn *again = NULL;
        if (polis__ffi_lookup(env, "ffi_exports.add", &again) != POLIS_OK || again != add)
            worst = POLIS_ERR_FFI;
        polis__ffi_value args[16], ret;
        args[0] = i32v(i);
        args[1] = i32v(1);
        if (polis__ffi_call(env, add, NULL, args, 2, &ret) != POLIS_OK) worst = POLIS_ERR_FFI;
        sum += ret.i32;
        for (int k = 0; k < 16; k++) args[k] = i64v(0);
        if (polis__ffi_call(env, sum16, NULL, args, 16, &ret) != POLIS_OK) worst = POLIS_ERR_FFI;
        args[0] = strv("four");
        if (polis__ffi_call(env, sl, NULL, args, 1, &ret) != POLIS_OK) worst = POLIS_ERR_FFI;
        args[0] = i64v(i);
        if (polis__ffi_call(env, note, plugin, args, 1, NULL) != POLIS_OK) worst = POLIS_ERR_FFI;
    }
    CHECK_EQ_INT(worst, POLIS_OK);
    CHECK_EQ_INT(c.allocs - before, 0);
    CHECK_EQ_INT(r->posts, 10000);
    CHECK_EQ_INT(r->begin_runs, 10000);
    CHECK_EQ_INT(r->note, 9999);
    CHECK_EQ_INT(sum, 10000LL * 10001 / 2);
    polis_env_destroy(env);
    CHECK_EQ_INT(c.live, 0);
}

/* Every allocation of a create with bindings fails in turn: each attempt must end in an error
 * with a message and nothing left allocated, until one succeeds. The bindings of bind_ok.json
 * are all valid, so a failure while binding can only be the allocator's: it must be
 * POLIS_ERR_NOMEM. */
static void test_failing_allocator(void)
{
    int failures = 0, bad = 0, in_bindings = 0;
    bool created = false;
    for (long long n = 1; n < 5000 && !created; n++) {
        counter c = {0, 0, n};
        polis_options o = options(&c);
        polis_env *env = NULL;
        polis_error err;
        polis_status st = polis_env_create_file(FIXTURE("bind_ok.json"), &o, &env, &err);
        if (st == POLIS_OK) {
            created = true;
            polis_env_destroy(env);
        } else {
            failures++;
            bool binding = strstr(err.message, "bind_ok.json: bindings[") != NULL ||
                           strstr(err.message, "binding scenario exports") != NULL;
            in_bindings += binding;
            if ((err.message[0] == '\0' || (binding && st != POLIS_ERR_NOMEM)) && bad++ < 5)
                fprintf(stderr, "allocation %lld failing gave %d: %s\n", n, (int)st, err.message);
        }
        if (c.live != 0 && bad++ < 5)
            fprintf(stderr, "allocation %lld failing leaked %lld bytes\n", n, c.live);
    }
    CHECK(created);
    CHECK(failures > 0);
    CHECK(in_bindings > 0);
    CHECK_EQ_INT(bad, 0);

    /* a lookup that cannot allocate fails cleanly and works once memory is back */
    counter c = {0, 0, 0};
    polis_env *env = open_fixture(FIXTURE("bind_ok.json"), &c);
    if (!env) return;
    const polis__ffi_fn *f = NULL;
    for (long long k = 1; k <= 3; k++) {
        c.fail_at = c.allocs + k;
        polis_status st = polis__ffi_lookup(env, "ffi_exports.mulf", &f);
        if (st == POLIS_OK) break;
        CHECK_EQ_INT(st, POLIS_ERR_NOMEM);
        CHECK_EQ_STR(polis_env_error(env), "out of memory preparing export ffi_exports.mulf");
        CHECK(f == NULL);
    }
    c.fail_at = 0;
    CHECK_EQ_INT(polis__ffi_lookup(env, "ffi_exports.mulf", &f), POLIS_OK);
    CHECK(f != NULL);
    polis_env_destroy(env);
    CHECK_EQ_INT(c.live, 0);
}

int main(void)
{
    test_bound_exports_receive_every_event();
    test_i32_hook_status_fails_the_step();
    test_refused_bindings();
    polis_env *env = open_fixture(FIXTURE("bind_ok.json"), NULL);
    if (env) {
        test_lookup(env);
        test_calls(env);
        polis_env_destroy(env);
    }
    test_no_allocation_on_call_paths();
    test_failing_allocator();
    CHECK_DONE();
}
