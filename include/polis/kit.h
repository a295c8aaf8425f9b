/*
 * polis/kit.h — helpers for writing plugins: descriptors and parameter tables that count
 * themselves, text for views, words and numbers for action parsers, JSON documents.
 *
 * Header-only and built only on polis/plugin.h, as Lua's lauxlib is built on lua.h: nothing
 * here reaches the kernel another way, so a plugin that uses the kit still links nothing.
 * Every function is static inline and allocates nothing. docs/c-games.md shows them in use;
 * rulesets/gather is a game written with them.
 *
 *     typedef struct my_params { int64_t coins; double value; bool respawn; } my_params;
 *
 *     static const polis_param_def PARAMS[] = {
 *         POLIS_P_INT(my_params, "coins", coins, 0, 1000, 8, "coins at reset"),
 *         POLIS_P_DOUBLE(my_params, "value", value, -10, 10, 1.0, "reward per coin"),
 *         POLIS_P_BOOL(my_params, "respawn", respawn, true, "collected coins come back"),
 *     };
 *     static const polis_plugin_desc DESC = {
 *         POLIS_DESC_HEAD("my_game", 5),           // needs host ABI 1.5 (looks) or newer
 *         POLIS_DESC_PARAMS(PARAMS, my_params),    // .params, .n_params, .params_size
 *         .init = my_init, .destroy = my_destroy,
 *     };
 *     POLIS_PLUGIN(DESC)
 *
 * The parameter macros check at compile time that the field has the type the engine writes
 * (int64_t, double, bool, const char *, const polis_json *): a mismatch is a build error
 * naming the field, never memory written past it.
 */
#ifndef POLIS_KIT_H
#define POLIS_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/plugin.h"
#include "polis/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- counts and descriptors ------------------------------------------------------------- */

/* The number of elements of an array (not a pointer), as the int32_t the descriptor wants. */
#define POLIS_COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

/* The head every descriptor starts with. `minor` is the oldest host ABI minor the plugin
 * needs (plugin.h, "Versions"): the newest "ABI 1.N" slot it uses, written as a number. */
#define POLIS_DESC_HEAD(plugin_name, minor)                                                        \
    .abi_major = POLIS_ABI_MAJOR, .struct_size = sizeof(polis_plugin_desc), .name = (plugin_name), \
    .abi_minor = (minor)

/* A parameter table and the struct it fills. */
#define POLIS_DESC_PARAMS(table, params_type)                                                      \
    .params = (table), .n_params = POLIS_COUNT(table), .params_size = sizeof(params_type)

/* A table of polis_export entries. */
#define POLIS_DESC_EXPORTS(table) .exports = (table), .n_exports = POLIS_COUNT(table)

/* One export: its name, signature (docs/ffi.md), the function, one line of doc. */
#define POLIS_EXPORT_FN(export_name, signature, fn, doc)                                           \
    {                                                                                              \
        (export_name), (signature), (void (*)(void))(fn), (doc)                                    \
    }

/* ---- parameter tables ------------------------------------------------------------------- */

/* offsetof(S, field), refused at compile time unless the field's type is T. */
#if defined(__cplusplus)
#define POLIS_KIT_FIELD(S, field, T) offsetof(S, field)
#else
#define POLIS_KIT_FIELD(S, field, T)                                                               \
    (offsetof(S, field) + 0 * sizeof(struct {                                                      \
                              _Static_assert(_Generic(((S *)0)->field, T : 1, default : 0),        \
                                             "parameter field " #field " must be of type " #T);    \
                              int polis_kit_unused;                                                \
                          }))
#endif

/* An integer parameter in [lo, hi] (stored as int64_t), default def. */
#define POLIS_P_INT(S, key, field, lo, hi, def, doc)                                               \
    {                                                                                              \
        (key), POLIS_PARAM_INT, POLIS_KIT_FIELD(S, field, int64_t), (lo), (hi), (def), NULL,       \
            (doc), false                                                                           \
    }
/* A number in [lo, hi] (stored as double), default def. */
#define POLIS_P_DOUBLE(S, key, field, lo, hi, def, doc)                                            \
    {                                                                                              \
        (key), POLIS_PARAM_DOUBLE, POLIS_KIT_FIELD(S, field, double), (lo), (hi), (def), NULL,     \
            (doc), false                                                                           \
    }
/* A bool, default def (true or false). */
#define POLIS_P_BOOL(S, key, field, def, doc)                                                      \
    {                                                                                              \
        (key), POLIS_PARAM_BOOL, POLIS_KIT_FIELD(S, field, bool), 0, 1, (def) ? 1 : 0, NULL,       \
            (doc), false                                                                           \
    }
/* A string (stored as const char *, owned by the env), default def (may be NULL). */
#define POLIS_P_STRING(S, key, field, def, doc)                                                    \
    {                                                                                              \
        (key), POLIS_PARAM_STRING, POLIS_KIT_FIELD(S, field, const char *), 0, 0, 0, (def), (doc), \
            false                                                                                  \
    }
/* Any JSON value (stored as const polis_json *, readable during init and start). */
#define POLIS_P_JSON(S, key, field, doc)                                                           \
    {                                                                                              \
        (key), POLIS_PARAM_JSON, POLIS_KIT_FIELD(S, field, const polis_json *), 0, 0, 0, NULL,     \
            (doc), false                                                                           \
    }

/* ---- text for views (renderers) -------------------------------------------------------- */

/* Appends a C string. */
static inline void polis_kit_puts(const polis_host *h, polis_text *t, const char *s)
{
    h->text_append(t, s, strlen(s));
}

/* Appends s as a JSON string: quotes, backslashes and control characters escaped, other bytes
 * (UTF-8 included) as they are. For names that come from scenarios. */
static inline void polis_kit_put_json_string(const polis_host *h, polis_text *t, const char *s)
{
    h->text_append(t, "\"", 1);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            h->text_append(t, e, 2);
        } else if (c < 0x20) {
            h->text_printf(t, "\\u%04x", c);
        } else {
            h->text_append(t, p, 1);
        }
    }
    h->text_append(t, "\"", 1);
}

/* Writes the shortest of %.6g .. %.17g that reads back as v ("0.35", "100000", "0.1"), or
 * "null" for a NaN or an infinity (not JSON numbers). size >= 32. */
static inline void polis_kit_fmt_number(char *buf, size_t size, double v)
{
    if (v != v || v - v != 0.0) {
        snprintf(buf, size, "null");
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* Appends a number as polis_kit_fmt_number writes it. */
static inline void polis_kit_put_number(const polis_host *h, polis_text *t, double v)
{
    char buf[40];
    polis_kit_fmt_number(buf, sizeof buf, v);
    polis_kit_puts(h, t, buf);
}

/* Appends "2 south, 1 west (3 steps)", or "here": the way from a cell to another dx cells east
 * and dy cells south (y grows south), in compass words and grid steps. */
static inline void polis_kit_put_offset(const polis_host *h, polis_text *t, int32_t dx, int32_t dy)
{
    int32_t ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
    if (dy) h->text_printf(t, "%d %s", ay, dy < 0 ? "north" : "south");
    if (dx) h->text_printf(t, "%s%d %s", dy ? ", " : "", ax, dx < 0 ? "west" : "east");
    if (ax + ay == 0)
        polis_kit_puts(h, t, "here");
    else
        h->text_printf(t, " (%d step%s)", ax + ay, ax + ay == 1 ? "" : "s");
}

/* ---- words and numbers for action parsers ---------------------------------------------- */

/* Splits s into at most max lower-case words at any of the bytes of `seps`, into buf (cap
 * bytes) with words[] pointing into it; one trailing '.' of s is dropped ("Move north."). Returns
 * the number of words, or -1 when there are more than max or s does not fit buf. */
static inline int polis_kit_words(const char *s, const char *seps, char *buf, size_t cap,
                                  const char **words, int max)
{
    size_t n = strlen(s);
    if (n > 0 && s[n - 1] == '.') n--;
    if (n >= cap) return -1;
    int count = 0;
    bool in_word = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (strchr(seps, c)) {
            buf[i] = '\0';
            in_word = false;
            continue;
        }
        buf[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        if (!in_word) {
            if (count == max) return -1;
            words[count++] = buf + i;
            in_word = true;
        }
    }
    buf[n] = '\0';
    return count;
}

/* Copies s into buf (cap bytes) in lower case (ASCII letters only change). False when it does
 * not fit. */
static inline bool polis_kit_lower(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap) return false;
    for (size_t i = 0; i <= n; i++)
        buf[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    return true;
}

/* A decimal integer in [lo, hi] with an optional sign and nothing around it; false for anything
 * else (empty, other characters, out of range). */
static inline bool polis_kit_parse_int(const char *w, int64_t lo, int64_t hi, int64_t *out)
{
    const char *p = w;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (!*p) return false;
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return false;
    int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
}

/* The length of name without a "_<digits>" suffix: agents "miner_0" and "miner_12" share the
 * stem "miner" (5); a name without such a suffix is its own stem. */
static inline size_t polis_kit_name_stem(const char *name)
{
    size_t n = strlen(name);
    const char *u = strrchr(name, '_');
    if (!u || !u[1] || strspn(u + 1, "0123456789") != strlen(u + 1)) return n;
    return (size_t)(u - name);
}

/* The N of "<stem>_N" ("group_3" with stem "group": 3) when it is in [0, limit); -1 for any
 * other name. */
static inline int32_t polis_kit_name_index(const char *name, const char *stem, int32_t limit)
{
    size_t k = strlen(stem);
    int64_t v;
    if (strncmp(name, stem, k) != 0 || name[k] != '_' || name[k + 1] == '+' || name[k + 1] == '-' ||
        !polis_kit_parse_int(name + k + 1, 0, (int64_t)limit - 1, &v))
        return -1;
    return (int32_t)v;
}

/* ---- the grid ---------------------------------------------------------------------------------
 */

/* The grid, or NULL with the plugin's error saying the scenario needs one (call it in start(),
 * where the size is final, and return POLIS_ERR_CONFIG on NULL). */
static inline const polis_grid *polis_kit_need_grid(const polis_host *h, polis_ctx *ctx)
{
    const polis_grid *g = h->grid(ctx);
    if (!g)
        h->error(ctx, "needs a grid: add \"grid\": {\"width\": W, \"height\": H} to the scenario");
    return g;
}

/* ---- observations written in the stored dtype (the "observations" host API, version 2) ------ */

/* A small integer observation field whose writer stores the dtype the env holds it in: with
 * compact observations that is the narrowest dtype holding the field's declared ranges
 * (host->obs_range), written straight into the caller's buffer, so the kernel keeps no shadow
 * record and narrows nothing; without them it is the registered dtype. The values must lie
 * inside the declared ranges (they are cut to the stored dtype otherwise). */
typedef struct polis_kit_stored {
    const polis_observations_api *api;
    int32_t field; /* the field's id */
    int32_t dtype; /* the polis_dtype stored, -1 until polis_kit_stored_ask */
} polis_kit_stored;

/* Declares that the writer of `field` (registered as POLIS_DTYPE_I32 by this plugin, just
 * before) writes the stored dtype, and fills *out for polis_kit_put_stored. Call it in init or
 * start after host->observation. POLIS_ERR_PLUGIN when the host has no "observations" version
 * 2 (message set), else what writes_stored returned. */
static inline polis_status polis_kit_writes_stored(const polis_host *h, polis_ctx *ctx,
                                                   int32_t field, polis_kit_stored *out)
{
    out->api = (const polis_observations_api *)h->host_api(ctx, POLIS_OBSERVATIONS_API, 2);
    out->field = field;
    out->dtype = -1;
    return out->api ? out->api->writes_stored(ctx, field) : POLIS_ERR_PLUGIN;
}

/* From a RESET hook (the writers run after it): asks which dtype the env stores the field in
 * (fixed for the env's life; polis_kit_put_stored stores nothing before it is asked). */
static inline void polis_kit_stored_ask(polis_ctx *ctx, polis_kit_stored *s)
{
    const int32_t dt = s->api->stored(ctx, s->field);
    s->dtype = dt >= 0 ? dt : POLIS_DTYPE_I32; /* -1: not this plugin's field (a bug) */
}

/* From the field's writer: stores v[0 .. n-1] into its row dst in the stored dtype. For a few
 * values (a position, a stage vector): the stores are volatile, one per value as computed, as
 * the compiler would otherwise pack four of them with shifts or vector shuffles into one wide
 * store, which costs more instructions than the stores. */
static inline void polis_kit_put_stored(const polis_kit_stored *s, void *dst, const int32_t *v,
                                        size_t n)
{
    const int32_t dt = s->dtype;
    /* u8 and i8 (0 and 1) in one test, unsigned so that -1 (not asked yet) stores nothing: the
     * low byte of a value inside either range is its stored byte */
    if ((uint32_t)dt <= (uint32_t)POLIS_DTYPE_I8)
        for (size_t i = 0; i < n; i++) ((volatile uint8_t *)dst)[i] = (uint8_t)v[i];
    else if (dt == POLIS_DTYPE_I32)
        for (size_t i = 0; i < n; i++) ((volatile int32_t *)dst)[i] = v[i];
    else if (dt == POLIS_DTYPE_I16)
        for (size_t i = 0; i < n; i++) ((volatile int16_t *)dst)[i] = (int16_t)v[i];
}

/* ---- JSON documents (the "json" host API, ABI 1.7) ------------------------------------- */

/* The "json" host API, or NULL with the plugin's error set (return POLIS_ERR_PLUGIN from init).
 * Fetch it once, in init. */
static inline const polis_json_api *polis_kit_json_api(const polis_host *h, polis_ctx *ctx)
{
    return (const polis_json_api *)h->host_api(ctx, POLIS_JSON_API, POLIS_JSON_API_VERSION);
}

/* For an action parser: parses an agent's input into a document named "action". POLIS_OK;
 * POLIS_ERR_ACTION when the input is not JSON (not this parser's: return it, the message is
 * dropped); POLIS_ERR_NOMEM when memory ran out (return it too: out of memory is not "not
 * mine"). */
static inline polis_status polis_kit_json_input(const polis_json_api *json, polis_ctx *ctx,
                                                const char *input, const polis_json **doc)
{
    polis_status st = json->parse(ctx, input, strlen(input), "action", doc);
    return st == POLIS_OK || st == POLIS_ERR_NOMEM ? st : POLIS_ERR_ACTION;
}

/* The member `key` of object j when it is a string, else NULL; sets no error (for parsers
 * deciding whether an input is theirs). */
static inline const char *polis_kit_json_str(const polis_host *h, polis_ctx *ctx,
                                             const polis_json *j, const char *key)
{
    const polis_json *m = h->json_get(ctx, j, key);
    const char *s = NULL;
    if (h->json_kind(m) == 3 && h->json_string(ctx, m, &s) == POLIS_OK) return s;
    return NULL;
}

#ifdef __cplusplus
}
#endif
#endif
