/*
 * engine/ffi/ffi.c — calls into plugin-exported C functions whose signatures are declared at run
 * time (plugin.h, polis_export).
 *
 * An export is prepared once per env (signature parsed, ffi_cif built) and cached in
 * env->ffi; the cached record never moves, so callers (Lua's polis.call, scenario bindings)
 * keep the pointer for the env's life. Calls allocate nothing: argument values live in a
 * local array and avalue[] points into it, or straight into a bus event's payload. Exports
 * that replace a registered handler (swap.c) have one of a few fixed signatures and are
 * called directly with that C type (the callbacks at the end of the file).
 */
#include <ffi.h>
#include <stdio.h>
#include <string.h>

#include "ffi/internal.h"

/* bool crosses the ABI as a 1-byte unsigned integer (C _Bool on every ABI libffi knows). */
_Static_assert(sizeof(bool) == 1, "bool is passed to libffi as uint8");

#define FFI_SIGMAX 128 /* canonical signatures; the longest is checked below */
_Static_assert(sizeof "void(" - 1 + POLIS__FFI_MAXARGS * sizeof "i16*," <= FFI_SIGMAX,
               "the canonical signature fits");

struct polis__ffi_fn {
    char *qualified; /* "plugin.export", the cache key */
    polis_ctx *ctx;  /* the exporting plugin */
    const polis_export *exp;
    polis__ftype ret;
    int32_t nparams; /* including a leading ctx */
    int32_t nargs;   /* nparams without the ctx */
    polis__ftype params[POLIS__FFI_MAXARGS];
    polis_dtype elems[POLIS__FFI_MAXARGS]; /* element dtype of each POLIS__FT_PTR parameter */
    bool has_ptr;
    ffi_type *atypes[POLIS__FFI_MAXARGS];
    ffi_cif cif;
    char sig[FFI_SIGMAX]; /* canonical: no whitespace */
};

/* A scenario binding: the user data of the trampolines below. */
typedef struct ffi_binding {
    const polis__ffi_fn *fn;
} ffi_binding;

struct polis__ffi_state {
    polis__ffi_fn **fns;
    int32_t n_fns, cap_fns;
    ffi_binding *bindings;
    int32_t n_bindings;
};

/* ---- signatures ------------------------------------------------------------------------- */

static const char *const ffi_type_names[] = {"void", "i32", "i64", "f32", "f64",
                                             "bool", "str", "ctx", "ptr"};

/* Pointer element types ("f32*"): the observation dtypes, named as polis_dtype_name does. */
static const char *const ffi_elem_names[] = {"u8", "i8", "i16", "i32", "f32"};

static ffi_type *ffi_type_of(polis__ftype t)
{
    switch (t) {
    case POLIS__FT_VOID: return &ffi_type_void;
    case POLIS__FT_I32: return &ffi_type_sint32;
    case POLIS__FT_I64: return &ffi_type_sint64;
    case POLIS__FT_F32: return &ffi_type_float;
    case POLIS__FT_F64: return &ffi_type_double;
    case POLIS__FT_BOOL: return &ffi_type_uint8;
    case POLIS__FT_STR:
    case POLIS__FT_CTX:
    case POLIS__FT_PTR: return &ffi_type_pointer;
    }
    return NULL;
}

static polis__ftype ffi_ftype_of_field(polis_ftype t)
{
    switch (t) {
    case POLIS_FIELD_I32: return POLIS__FT_I32;
    case POLIS_FIELD_I64: return POLIS__FT_I64;
    case POLIS_FIELD_F32: return POLIS__FT_F32;
    case POLIS_FIELD_F64: return POLIS__FT_F64;
    }
    return POLIS__FT_VOID;
}

static bool ffi_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static bool ffi_is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t ffi_skip_space(const char *s, size_t i)
{
    while (ffi_is_space(s[i])) i++;
    return i;
}

/* Reads one type name at s[*i]: a scalar type, or an element type followed by '*' (ABI
 * 1.3), whose dtype goes to *elem. Columns in messages are 1-based. */
static bool ffi_parse_type(const char *s, size_t *i, polis__ftype *out, polis_dtype *elem,
                           char *why, size_t n)
{
    size_t start = *i, end = start;
    while (ffi_is_word(s[end])) end++;
    if (end == start) {
        snprintf(why, n, "expected a type at column %zu", start + 1);
        return false;
    }
    size_t after = ffi_skip_space(s, end);
    if (s[after] == '*') {
        for (size_t t = 0; t < sizeof ffi_elem_names / sizeof ffi_elem_names[0]; t++) {
            if (strlen(ffi_elem_names[t]) == end - start &&
                memcmp(ffi_elem_names[t], s + start, end - start) == 0) {
                *out = POLIS__FT_PTR;
                *elem = (polis_dtype)t;
                *i = after + 1;
                return true;
            }
        }
        snprintf(why, n,
                 "no pointer to \"%.*s\" at column %zu (pointers: u8*, i8*, i16*, i32*, f32*)",
                 (int)(end - start), s + start, start + 1);
        return false;
    }
    for (size_t t = 0; t < POLIS__FT_PTR; t++) {
        if (strlen(ffi_type_names[t]) == end - start &&
            memcmp(ffi_type_names[t], s + start, end - start) == 0) {
            *out = (polis__ftype)t;
            *i = end;
            return true;
        }
    }
    snprintf(why, n,
             "unknown type \"%.*s\" at column %zu (types: void, i32, i64, f32, f64, bool, str, "
             "ctx; pointers: u8*, i8*, i16*, i32*, f32*)",
             (int)(end - start), s + start, start + 1);
    return false;
}

/* The canonical name of a parameter type: "i32", or "f32*" for a pointer. */
static const char *ffi_param_name(polis__ftype t, polis_dtype elem, char buf[8])
{
    if (t != POLIS__FT_PTR) return ffi_type_names[t];
    snprintf(buf, 8, "%s*", ffi_elem_names[elem]);
    return buf;
}

/* Parses "ret(param,...)" into f->ret/params/nparams and writes the canonical form. */
static bool ffi_parse_signature(const char *s, polis__ffi_fn *f, char *why, size_t n)
{
    size_t i = ffi_skip_space(s, 0), col;
    polis_dtype elem = POLIS_DTYPE_U8;
    if (!ffi_parse_type(s, &i, &f->ret, &elem, why, n)) return false;
    if (f->ret == POLIS__FT_PTR) {
        snprintf(why, n, "a pointer is not a return type, at column %zu", ffi_skip_space(s, 0) + 1);
        return false;
    }
    if (f->ret == POLIS__FT_CTX) {
        snprintf(why, n, "ctx is not a return type, at column %zu", ffi_skip_space(s, 0) + 1);
        return false;
    }
    i = ffi_skip_space(s, i);
    if (s[i] != '(') {
        snprintf(why, n, "expected '(' at column %zu", i + 1);
        return false;
    }
    i = ffi_skip_space(s, i + 1);
    f->nparams = 0;
    if (s[i] == ')') {
        i++;
    } else {
        for (;;) {
            col = i + 1;
            if (f->nparams == POLIS__FFI_MAXARGS) {
                snprintf(why, n, "more than %d parameters, at column %zu", POLIS__FFI_MAXARGS, col);
                return false;
            }
            polis__ftype t;
            if (!ffi_parse_type(s, &i, &t, &elem, why, n)) return false;
            if (t == POLIS__FT_VOID) {
                snprintf(why, n, "void is only a return type, at column %zu", col);
                return false;
            }
            if (t == POLIS__FT_CTX && f->nparams > 0) {
                snprintf(why, n, "ctx must be the first parameter, at column %zu", col);
                return false;
            }
            f->elems[f->nparams] = t == POLIS__FT_PTR ? elem : POLIS_DTYPE_U8;
            f->has_ptr |= t == POLIS__FT_PTR;
            f->params[f->nparams++] = t;
            i = ffi_skip_space(s, i);
            if (s[i] == ')') {
                i++;
                break;
            }
            if (s[i] != ',') {
                snprintf(why, n, "expected ',' or ')' at column %zu", i + 1);
                return false;
            }
            i = ffi_skip_space(s, i + 1);
        }
    }
    i = ffi_skip_space(s, i);
    if (s[i] != '\0') {
        snprintf(why, n, "unexpected \"%c\" after ')' at column %zu", s[i], i + 1);
        return false;
    }
    f->nargs = f->nparams - (f->nparams > 0 && f->params[0] == POLIS__FT_CTX ? 1 : 0);

    size_t len = (size_t)snprintf(f->sig, sizeof f->sig, "%s(", ffi_type_names[f->ret]);
    for (int32_t k = 0; k < f->nparams; k++) {
        char pb[8];
        len += (size_t)snprintf(f->sig + len, sizeof f->sig - len, "%s%s", k ? "," : "",
                                ffi_param_name(f->params[k], f->elems[k], pb));
    }
    snprintf(f->sig + len, sizeof f->sig - len, ")");
    return true;
}

/* ---- lookup ----------------------------------------------------------------------------- */

static polis__ffi_state *ffi_state(polis_env *env)
{
    if (!env->ffi) env->ffi = polis__alloc(env, sizeof *env->ffi);
    return env->ffi;
}

static void ffi_fn_free(polis_env *env, polis__ffi_fn *f)
{
    if (f->qualified) polis__strfree(env, f->qualified);
    polis__free(env, f, sizeof *f);
}

/* Lists a plugin's export names after "it exports: " for an unknown-export message. */
static void ffi_list_exports(const polis_plugin_desc *d, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < d->n_exports && len < n; k++) {
        if (!d->exports[k].name) continue;
        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", d->exports[k].name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* The lookup proper; the message (without any JSON-path prefix) goes to why. */
static polis_status ffi_find(polis_env *env, const char *qualified, const polis__ffi_fn **out,
                             char *why, size_t n)
{
    *out = NULL;
    if (!qualified) {
        snprintf(why, n, "no export name given (expected \"plugin.export\")");
        return POLIS_ERR_FFI;
    }
    if (env->ffi) {
        for (int32_t k = 0; k < env->ffi->n_fns; k++) {
            if (strcmp(env->ffi->fns[k]->qualified, qualified) == 0) {
                *out = env->ffi->fns[k];
                return POLIS_OK;
            }
        }
    }

    const char *dot = strchr(qualified, '.');
    if (!dot || dot == qualified || dot[1] == '\0') {
        snprintf(why, n, "\"%s\" does not name an export (expected \"plugin.export\")", qualified);
        return POLIS_ERR_FFI;
    }
    char plugin[128];
    size_t plen = (size_t)(dot - qualified);
    const char *name = dot + 1;
    polis_ctx *ctx = NULL;
    if (plen < sizeof plugin) {
        memcpy(plugin, qualified, plen);
        plugin[plen] = '\0';
        ctx = polis__ctx_find(env, plugin);
    }
    if (!ctx) {
        snprintf(why, n, "\"%s\": no plugin named \"%.*s\" is loaded", qualified, (int)plen,
                 qualified);
        return POLIS_ERR_FFI;
    }
    if (ctx->kind != POLIS__CTX_PLUGIN) {
        snprintf(why, n, "\"%s\": %s is %s; only .so plugins have exports", qualified, ctx->name,
                 ctx->kind == POLIS__CTX_SCRIPT ? "a Lua script" : "the kernel");
        return POLIS_ERR_FFI;
    }
    const polis_plugin_desc *d = ctx->desc;
    const polis_export *exp = NULL;
    if (d && d->exports) {
        for (int32_t k = 0; k < d->n_exports && !exp; k++)
            if (d->exports[k].name && strcmp(d->exports[k].name, name) == 0) exp = &d->exports[k];
    }
    if (!exp) {
        char list[512];
        if (d && d->exports)
            ffi_list_exports(d, list, sizeof list);
        else
            list[0] = '\0';
        if (list[0])
            snprintf(why, n, "\"%s\": plugin %s has no export \"%s\" (it exports: %s)", qualified,
                     ctx->name, name, list);
        else
            snprintf(why, n, "\"%s\": plugin %s has no export \"%s\" (it exports nothing)",
                     qualified, ctx->name, name);
        return POLIS_ERR_FFI;
    }
    if (!exp->fn) {
        snprintf(why, n, "plugin %s: export \"%s\" has no function pointer", ctx->name, name);
        return POLIS_ERR_FFI;
    }
    if (!exp->signature) {
        snprintf(why, n, "plugin %s: export \"%s\" has no signature", ctx->name, name);
        return POLIS_ERR_FFI;
    }

    polis__ffi_fn parsed;
    memset(&parsed, 0, sizeof parsed);
    char perr[256];
    if (!ffi_parse_signature(exp->signature, &parsed, perr, sizeof perr)) {
        snprintf(why, n, "plugin %s: export \"%s\": signature \"%s\": %s", ctx->name, name,
                 exp->signature, perr);
        return POLIS_ERR_FFI;
    }
    polis__ffi_state *st = ffi_state(env);
    polis__ffi_fn *f = st ? polis__alloc(env, sizeof *f) : NULL;
    if (!f) {
        snprintf(why, n, "out of memory preparing export %s", qualified);
        return POLIS_ERR_NOMEM;
    }
    *f = parsed;
    f->ctx = ctx;
    f->exp = exp;
    /* Prepared in place: the cif keeps a pointer to atypes, which must live as long. */
    for (int32_t k = 0; k < f->nparams; k++) f->atypes[k] = ffi_type_of(f->params[k]);
    ffi_status fst = ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, (unsigned)f->nparams,
                                  ffi_type_of(f->ret), f->atypes);
    if (fst != FFI_OK) {
        snprintf(why, n, "plugin %s: export \"%s\": libffi cannot prepare %s (status %d)",
                 ctx->name, name, f->sig, (int)fst);
        ffi_fn_free(env, f);
        return POLIS_ERR_FFI;
    }
    f->qualified = polis__strdup(env, qualified);
    void *arr = st->fns;
    if (!f->qualified ||
        polis__grow(env, &arr, &st->cap_fns, st->n_fns, sizeof *st->fns) != POLIS_OK) {
        st->fns = arr;
        ffi_fn_free(env, f);
        snprintf(why, n, "out of memory preparing export %s", qualified);
        return POLIS_ERR_NOMEM;
    }
    st->fns = arr;
    st->fns[st->n_fns++] = f;
    *out = f;
    return POLIS_OK;
}

polis_status polis__ffi_lookup(polis_env *env, const char *qualified, const polis__ffi_fn **out)
{
    char why[POLIS_ERRMAX];
    polis_status st = ffi_find(env, qualified, out, why, sizeof why);
    if (st != POLIS_OK) return polis__fail(env, st, "%s", why);
    if ((*out)->has_ptr) {
        const polis__ffi_fn *f = *out;
        *out = NULL;
        return polis__fail(env, POLIS_ERR_FFI,
                           "%s has signature %s: an export taking a pointer only replaces a "
                           "handler (scenario \"replace\"), it cannot be called with values",
                           f->qualified, f->sig);
    }
    return POLIS_OK;
}

polis_status polis__ffi_find(polis_env *env, const char *qualified, const polis__ffi_fn **out,
                             char *why, size_t n)
{
    return ffi_find(env, qualified, out, why, n);
}

polis_dtype polis__ffi_param_elem(const polis__ffi_fn *f, int32_t i)
{
    return i >= 0 && i < f->nparams ? f->elems[i] : POLIS_DTYPE_U8;
}

const char *polis__ffi_name(const polis__ffi_fn *f) { return f->qualified; }
polis_ctx *polis__ffi_owner(const polis__ffi_fn *f) { return f->ctx; }

polis__ftype polis__ffi_ret(const polis__ffi_fn *f) { return f->ret; }
int32_t polis__ffi_nparams(const polis__ffi_fn *f) { return f->nparams; }

polis__ftype polis__ffi_param(const polis__ffi_fn *f, int32_t i)
{
    return i >= 0 && i < f->nparams ? f->params[i] : POLIS__FT_VOID;
}

const char *polis__ffi_signature(const polis__ffi_fn *f) { return f->sig; }

/* ---- calls ------------------------------------------------------------------------------ */

/* Storage for one argument in the callee's C type; avalue[] points at these. */
typedef union ffi_slot {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    uint8_t u8;
    const char *str;
    void *ptr;
} ffi_slot;

/* libffi widens integral returns narrower than a register to ffi_arg, so the return buffer
 * is at least that big and small integers are read back through it. */
typedef union ffi_ret_slot {
    ffi_arg u;
    ffi_sarg s;
    int64_t i64;
    float f32;
    double f64;
    const char *str;
} ffi_ret_slot;

static void ffi_read_ret(polis__ftype t, const ffi_ret_slot *r, polis__ffi_value *out)
{
    memset(out, 0, sizeof *out);
    switch (t) {
    case POLIS__FT_I32: out->i32 = (int32_t)r->s; break;
    case POLIS__FT_I64: out->i64 = r->i64; break;
    case POLIS__FT_F32: out->f32 = r->f32; break;
    case POLIS__FT_F64: out->f64 = r->f64; break;
    case POLIS__FT_BOOL: out->b = (uint8_t)r->u != 0; break;
    case POLIS__FT_STR: out->str = r->str; break;
    case POLIS__FT_VOID:
    case POLIS__FT_CTX:
    case POLIS__FT_PTR: break;
    }
}

polis_status polis__ffi_call(polis_env *env, const polis__ffi_fn *f, polis_ctx *caller,
                             const polis__ffi_value *args, int32_t nargs, polis__ffi_value *ret)
{
    if (!f) return polis__fail(env, POLIS_ERR_INVALID, "foreign call without an export");
    if (nargs != f->nargs)
        return polis__fail(env, POLIS_ERR_FFI, "%s%s takes %d argument%s, got %d", f->qualified,
                           f->sig + strlen(ffi_type_names[f->ret]), (int)f->nargs,
                           f->nargs == 1 ? "" : "s", (int)nargs);
    if (nargs > 0 && !args)
        return polis__fail(env, POLIS_ERR_INVALID, "%s: no argument values", f->qualified);
    if (f->has_ptr)
        return polis__fail(env, POLIS_ERR_FFI,
                           "%s%s takes a pointer: it cannot be called with "
                           "values",
                           f->qualified, f->sig + strlen(ffi_type_names[f->ret]));

    ffi_slot slots[POLIS__FFI_MAXARGS];
    void *avalue[POLIS__FFI_MAXARGS];
    int32_t a = 0;
    for (int32_t k = 0; k < f->nparams; k++) {
        ffi_slot *s = &slots[k];
        switch (f->params[k]) {
        case POLIS__FT_CTX: s->ptr = f->ctx; break; /* the exporter's own ctx (plugin.h) */
        case POLIS__FT_I32: s->i32 = args[a++].i32; break;
        case POLIS__FT_I64: s->i64 = args[a++].i64; break;
        case POLIS__FT_F32: s->f32 = args[a++].f32; break;
        case POLIS__FT_F64: s->f64 = args[a++].f64; break;
        case POLIS__FT_BOOL: s->u8 = args[a++].b ? 1 : 0; break;
        case POLIS__FT_STR:
            if (!args[a].str)
                return polis__fail(env, POLIS_ERR_FFI, "%s: argument %d (str) is NULL",
                                   f->qualified, (int)a + 1);
            s->str = args[a++].str;
            break;
        case POLIS__FT_VOID:
        case POLIS__FT_PTR: break;
        }
        avalue[k] = s;
    }

    ffi_ret_slot r;
    memset(&r, 0, sizeof r);
    ffi_call((ffi_cif *)&f->cif, f->exp->fn, &r, f->nparams ? avalue : NULL);
    if (ret) ffi_read_ret(f->ret, &r, ret);
    return POLIS_OK;
}

/* ---- scenario bindings ------------------------------------------------------------------ */

/* An i32 return of a bound export is a polis_status; the callee reported the details. */
static polis_status ffi_fn_status(polis_ctx *ctx, const polis__ffi_fn *f, const ffi_ret_slot *r)
{
    if (f->ret != POLIS__FT_I32) return POLIS_OK;
    int32_t v = (int32_t)r->s;
    if (v >= POLIS_OK && v <= POLIS_ERR_FFI) return (polis_status)v;
    polis__host()->error(ctx, "%s returned %d, which is not a polis_status", f->qualified, (int)v);
    return POLIS_ERR_FFI;
}

static polis_status ffi_bound_status(polis_ctx *ctx, const ffi_binding *b, const ffi_ret_slot *r)
{
    return ffi_fn_status(ctx, b->fn, r);
}

/* The payload is the natural C struct of the event's fields, so each argument is a pointer
 * straight into it; the signature was matched against the fields at bind time. */
static polis_status ffi_event_trampoline(polis_ctx *ctx, void *ud, const polis_event *ev)
{
    const ffi_binding *b = ud;
    const polis__event_type *et = &ctx->env->events[ev->type];
    void *avalue[POLIS__FFI_MAXARGS];
    void *self = ctx;
    avalue[0] = &self;
    for (int32_t k = 0; k < et->n_fields; k++)
        avalue[k + 1] = (void *)((const uint8_t *)ev->data + et->fields[k].offset);
    ffi_ret_slot r;
    memset(&r, 0, sizeof r);
    ffi_call((ffi_cif *)&b->fn->cif, b->fn->exp->fn, &r, avalue);
    return ffi_bound_status(ctx, b, &r);
}

static polis_status ffi_hook_trampoline(polis_ctx *ctx, void *ud)
{
    const ffi_binding *b = ud;
    void *self = ctx;
    void *avalue[1] = {&self};
    ffi_ret_slot r;
    memset(&r, 0, sizeof r);
    ffi_call((ffi_cif *)&b->fn->cif, b->fn->exp->fn, &r, avalue);
    return ffi_bound_status(ctx, b, &r);
}

/* ---- handler replacements (swap.c) -------------------------------------------------------
 * Each has the C type of its registry's callback and ud = the prepared export. swap.c
 * matched the export's declared signature against the kind, which fixes its C type
 * exactly (i32 is int32_t, f32* is float *, ...), so these call the export directly with
 * that type instead of through ffi_call: the step pays two indirect calls and allocates
 * nothing. ctx is the exporter's own (the registry entry's). The void and i32 returns have
 * separate callbacks, chosen when the replacement is installed. */

static polis_status ffi_status_of(polis_ctx *ctx, const polis__ffi_fn *f, int32_t v)
{
    if (v >= POLIS_OK && v <= POLIS_ERR_FFI) return (polis_status)v;
    polis__host()->error(ctx, "%s returned %d, which is not a polis_status", f->qualified, (int)v);
    return POLIS_ERR_FFI;
}

#define FN(f, type) ((type)(((const polis__ffi_fn *)(f))->exp->fn))

typedef int32_t (*x_hook_i32)(polis_ctx *);
typedef void (*x_hook_void)(polis_ctx *);
typedef int32_t (*x_action_i32)(polis_ctx *, int32_t, int32_t);
typedef void (*x_action_void)(polis_ctx *, int32_t, int32_t);
typedef bool (*x_legal)(polis_ctx *, int32_t, int32_t);
typedef int32_t (*x_rewards_i32)(polis_ctx *, float *);
typedef void (*x_rewards_void)(polis_ctx *, float *);
typedef int32_t (*x_policy)(polis_ctx *, int32_t);

static polis_status tramp_hook_i32(polis_ctx *ctx, void *ud)
{
    return ffi_status_of(ctx, ud, FN(ud, x_hook_i32)(ctx));
}

static polis_status tramp_hook_void(polis_ctx *ctx, void *ud)
{
    FN(ud, x_hook_void)(ctx);
    return POLIS_OK;
}

static polis_status tramp_action_i32(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return ffi_status_of(ctx, ud, FN(ud, x_action_i32)(ctx, agent, arg));
}

static polis_status tramp_action_void(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    FN(ud, x_action_void)(ctx, agent, arg);
    return POLIS_OK;
}

static bool tramp_legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    return FN(ud, x_legal)(ctx, agent, arg);
}

static polis_status tramp_rewards_i32(polis_ctx *ctx, void *ud, float *rewards)
{
    return ffi_status_of(ctx, ud, FN(ud, x_rewards_i32)(ctx, rewards));
}

static polis_status tramp_rewards_void(polis_ctx *ctx, void *ud, float *rewards)
{
    FN(ud, x_rewards_void)(ctx, rewards);
    return POLIS_OK;
}

/* A replacement policy returns the action id; policy_act checks its range. */
static polis_status tramp_policy(polis_ctx *ctx, void *ud, int32_t agent, int32_t *out_action)
{
    *out_action = FN(ud, x_policy)(ctx, agent);
    return POLIS_OK;
}

/* One observation writer per dtype: the export's pointer parameter has the field's type. */
#define OBS_TRAMP(name, ctype)                                                                     \
    typedef void (*x_obs_##name)(polis_ctx *, int32_t, ctype *);                                   \
    static void tramp_obs_##name(polis_ctx *ctx, void *ud, int32_t agent, void *dst)               \
    {                                                                                              \
        FN(ud, x_obs_##name)(ctx, agent, dst);                                                     \
    }
OBS_TRAMP(u8, uint8_t)
OBS_TRAMP(i8, int8_t)
OBS_TRAMP(i16, int16_t)
OBS_TRAMP(i32, int32_t)
OBS_TRAMP(f32, float)
#undef OBS_TRAMP

polis__ffi_hook_fn polis__ffi_tramp_hook(const polis__ffi_fn *f)
{
    return f->ret == POLIS__FT_VOID ? tramp_hook_void : tramp_hook_i32;
}

polis__ffi_action_fn polis__ffi_tramp_action(const polis__ffi_fn *f)
{
    return f->ret == POLIS__FT_VOID ? tramp_action_void : tramp_action_i32;
}

polis__ffi_legal_fn polis__ffi_tramp_legal(const polis__ffi_fn *f)
{
    (void)f;
    return tramp_legal;
}

polis__ffi_obs_fn polis__ffi_tramp_obs(const polis__ffi_fn *f, polis_dtype dtype)
{
    (void)f;
    switch (dtype) {
    case POLIS_DTYPE_U8: return tramp_obs_u8;
    case POLIS_DTYPE_I8: return tramp_obs_i8;
    case POLIS_DTYPE_I16: return tramp_obs_i16;
    case POLIS_DTYPE_I32: return tramp_obs_i32;
    case POLIS_DTYPE_F32: return tramp_obs_f32;
    }
    return tramp_obs_u8;
}

polis__ffi_rewards_fn polis__ffi_tramp_rewards(const polis__ffi_fn *f)
{
    return f->ret == POLIS__FT_VOID ? tramp_rewards_void : tramp_rewards_i32;
}

polis_policy_fn polis__ffi_tramp_policy(const polis__ffi_fn *f)
{
    (void)f;
    return tramp_policy;
}

#undef FN

/* Writes "<ret>(ctx,<field types>)" for an event's required subscriber signature. */
static void ffi_event_sig(const polis__event_type *et, const char *ret, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%s(ctx", ret);
    for (int32_t k = 0; k < et->n_fields && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, ",%s",
                                ffi_type_names[ffi_ftype_of_field(et->fields[k].type)]);
    if (len < n) snprintf(buf + len, n - len, ")");
}

static bool ffi_matches_event(const polis__ffi_fn *f, const polis__event_type *et)
{
    if (f->ret != POLIS__FT_VOID && f->ret != POLIS__FT_I32) return false;
    if (f->nparams != et->n_fields + 1 || f->params[0] != POLIS__FT_CTX) return false;
    for (int32_t k = 0; k < et->n_fields; k++)
        if (f->params[k + 1] != ffi_ftype_of_field(et->fields[k].type)) return false;
    return true;
}

static bool ffi_matches_hook(const polis__ffi_fn *f)
{
    return (f->ret == POLIS__FT_VOID || f->ret == POLIS__FT_I32) && f->nparams == 1 &&
           f->params[0] == POLIS__FT_CTX;
}

static polis_status ffi_bind_one(polis_env *env, const polis__scn_binding *sb, ffi_binding *b)
{
    const char *src = env->scn.source ? env->scn.source : "<scenario>";
    char why[POLIS_ERRMAX];
    const polis__ffi_fn *f;
    polis_status st = ffi_find(env, sb->call, &f, why, sizeof why);
    if (st != POLIS_OK) return polis__fail(env, st, "%s: %s.call: %s", src, sb->jpath, why);
    b->fn = f;

    const polis_host *host = polis__host();
    if (sb->event) {
        int32_t type = host->event_find(f->ctx, sb->event);
        if (type < 0 || type >= env->n_events)
            return polis__fail(env, POLIS_ERR_CONFIG, "%s: %s.event: unknown event type \"%s\"",
                               src, sb->jpath, sb->event);
        const polis__event_type *et = &env->events[type];
        if (!ffi_matches_event(f, et)) {
            char want_void[256], want_i32[256];
            ffi_event_sig(et, "void", want_void, sizeof want_void);
            ffi_event_sig(et, "i32", want_i32, sizeof want_i32);
            return polis__fail(env, POLIS_ERR_FFI,
                               "%s: %s.call: %s has signature %s, but event %s needs %s or %s", src,
                               sb->jpath, f->qualified, f->sig, et->name, want_void, want_i32);
        }
        return host->subscribe(f->ctx, sb->event, sb->priority, ffi_event_trampoline, b);
    }
    if (sb->phase < 0 || sb->phase >= POLIS_PHASE_COUNT)
        return polis__fail(env, POLIS_ERR_CONFIG, "%s: %s: needs an \"event\" or a \"phase\"", src,
                           sb->jpath);
    if (!ffi_matches_hook(f))
        return polis__fail(env, POLIS_ERR_FFI,
                           "%s: %s.call: %s has signature %s, but a %s hook needs void(ctx) or "
                           "i32(ctx)",
                           src, sb->jpath, f->qualified, f->sig,
                           polis__phase_name((polis_phase)sb->phase));
    return host->hook(f->ctx, (polis_phase)sb->phase, sb->priority, ffi_hook_trampoline, b);
}

polis_status polis__ffi_bind_scenario(polis_env *env)
{
    int32_t n = env->scn.n_bindings;
    if (n <= 0) return POLIS_OK;
    polis__ffi_state *st = ffi_state(env);
    if (!st) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory binding scenario exports");
    st->bindings = polis__alloc(env, (size_t)n * sizeof *st->bindings);
    if (!st->bindings)
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory binding scenario exports");
    st->n_bindings = n;
    for (int32_t i = 0; i < n; i++) {
        polis_status s = ffi_bind_one(env, &env->scn.bindings[i], &st->bindings[i]);
        if (s != POLIS_OK) return s;
    }
    return POLIS_OK;
}

void polis__ffi_free(polis_env *env)
{
    polis__ffi_state *st = env->ffi;
    if (!st) return;
    for (int32_t k = 0; k < st->n_fns; k++) ffi_fn_free(env, st->fns[k]);
    polis__free(env, st->fns, (size_t)st->cap_fns * sizeof *st->fns);
    polis__free(env, st->bindings, (size_t)st->n_bindings * sizeof *st->bindings);
    polis__free(env, st, sizeof *st);
    env->ffi = NULL;
}

/* ---- the module (engine/modules.c) ----------------------------------------------------- */

POLIS_INTERNAL const polis__module polis__ffi_module = {
    .name = "ffi",
    .start = polis__ffi_bind_scenario, /* after every script's on_start */
    .prefreeze = polis__swap_apply,    /* replaced handlers, before the registries are copied */
    .unload = polis__ffi_free,         /* prepared calls point into the plugins */
    .free = polis__swap_free,
};
