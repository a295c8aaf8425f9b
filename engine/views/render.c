/*
 * render.c — views and text actions (plugin ABI 1.1): the text buffer renderers write into,
 * the renderer and action-parser registries, polis_env_render and polis_env_parse_action.
 *
 * Rendering and parsing are on demand (an LLM client, the CLI, the Python SDK), never part
 * of a step, so they may allocate: the text buffer grows from the env's allocator and the
 * result is copied into a malloc'd string the caller frees with polis_free, like describe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/module.h"

typedef struct polis__renderer {
    char *format;
    polis_render_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__renderer;

/* An action parser (render.c), asked in registration order. */
typedef struct polis__parser {
    polis_parse_fn fn;
    void *ud;
    polis_ctx *ctx;
} polis__parser;

/* The module's state (env->views), allocated when the env is created. formats is "json
 * text", rebuilt whenever a renderer adds a new format, so polis_env_render_formats needs
 * no allocation. */
struct polis__views {
    polis__renderer *renderers;
    int32_t n_renderers, cap_renderers;
    polis__parser *parsers;
    int32_t n_parsers, cap_parsers;
    char *formats;
};

/* One render's output. A failed append (no memory, too long, bad input) is remembered and
 * makes every later append a no-op: host->text_* return nothing, so the kernel checks once
 * after the renderer returns and reports the first failure. */
struct polis_text {
    polis_env *env;
    char *buf; /* NUL-terminated when non-NULL */
    size_t len, cap;
    polis_status st;
    char why[160];
};

/* A renderer that loops forever appending would otherwise exhaust memory. */
#define TEXT_MAX ((size_t)1 << 24)

/* Inputs quoted in messages are cut here, so a long LLM reply cannot flood the message. */
#define QUOTE_MAX 64

static void text_fail(polis_text *t, polis_status st, const char *fmt, ...) POLIS_PRINTF(3, 4);

static void text_fail(polis_text *t, polis_status st, const char *fmt, ...)
{
    if (t->st) return;
    t->st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

/* Makes room for `extra` more bytes and the NUL. */
static bool text_reserve(polis_text *t, size_t extra)
{
    if (t->st) return false;
    if (extra > TEXT_MAX - t->len) {
        text_fail(t, POLIS_ERR_LIMIT, "the rendering is longer than %zu bytes", TEXT_MAX);
        return false;
    }
    size_t need = t->len + extra + 1;
    if (need <= t->cap) return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < need) cap *= 2;
    char *p = polis__realloc(t->env, t->buf, t->cap, cap);
    if (!p) {
        text_fail(t, POLIS_ERR_NOMEM, "out of memory (rendering %zu bytes)", need);
        return false;
    }
    t->buf = p;
    t->cap = cap;
    return true;
}

static void text_append(polis_text *t, const char *s, size_t n)
{
    if (!t || t->st || n == 0) return;
    if (!s) {
        text_fail(t, POLIS_ERR_INVALID, "text_append: the string is NULL (length %zu)", n);
        return;
    }
    /* The result is a C string: an embedded NUL would silently cut it for every reader. */
    const char *nul = memchr(s, '\0', n);
    if (nul) {
        text_fail(t, POLIS_ERR_INVALID, "text_append: NUL byte at offset %zu of %zu",
                  (size_t)(nul - s), n);
        return;
    }
    if (!text_reserve(t, n)) return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void text_puts(polis_text *t, const char *s) { text_append(t, s, strlen(s)); }

static void text_printf(polis_text *t, const char *fmt, ...) POLIS_PRINTF(2, 3);

static void text_printf(polis_text *t, const char *fmt, ...)
{
    if (!t || t->st) return;
    if (!fmt) {
        text_fail(t, POLIS_ERR_INVALID, "text_printf: the format is NULL");
        return;
    }
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    size_t room = t->buf ? t->cap - t->len : 0;
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (t->buf) t->buf[t->len] = '\0';
        text_fail(t, POLIS_ERR_INVALID, "text_printf: cannot format \"%.40s\"", fmt);
    } else if ((size_t)n >= room) {
        if (t->buf) t->buf[t->len] = '\0';
        if (text_reserve(t, (size_t)n)) vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (t->st || n < 0) return;
    const char *nul = memchr(t->buf + t->len, '\0', (size_t)n);
    if (nul) {
        t->buf[t->len] = '\0';
        text_fail(t, POLIS_ERR_INVALID, "text_printf: NUL byte at offset %zu of %d",
                  (size_t)(nul - (t->buf + t->len)), n);
        return;
    }
    t->len += (size_t)n;
}

/* Writes s[0..n) as a quoted C-style literal into buf, cut after QUOTE_MAX bytes. */
static void quote(char *buf, size_t size, const char *s, size_t n)
{
    size_t o = 0;
    buf[o++] = '"';
    for (size_t i = 0; i < n && i < QUOTE_MAX && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else if (c == '\t') {
            buf[o++] = '\\';
            buf[o++] = 't';
        } else if (c < ' ' || c == 127) {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    if (n > QUOTE_MAX && o + 4 < size) memcpy(buf + o, "...", 4);
}

/* ---- registration ------------------------------------------------------------------------ */

static bool valid_format(const char *f)
{
    size_t n = 0;
    for (; f[n]; n++)
        if (!((f[n] >= 'a' && f[n] <= 'z') || (f[n] >= '0' && f[n] <= '9') || f[n] == '_'))
            return false;
    return n >= 1 && n <= 63;
}

static polis_status registration_open(polis_ctx *ctx, const char *what)
{
    if (ctx->env->state == POLIS__ENV_LOADING) return POLIS_OK;
    ctx->head.host->error(ctx,
                          "%s: registration is closed once the env is created (register "
                          "in init or start)",
                          what);
    return POLIS_ERR_STATE;
}

/* Rebuilds "json text": the distinct formats, sorted, space-separated. */
static polis_status rebuild_formats(polis_env *env)
{
    const struct polis__views *v = env->views;
    size_t size = 1;
    for (int32_t i = 0; i < v->n_renderers; i++) size += strlen(v->renderers[i].format) + 1;
    char *s = polis__alloc(env, size);
    if (!s) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    size_t len = 0;
    const char *last = NULL;
    for (;;) {
        const char *next = NULL;
        for (int32_t i = 0; i < env->views->n_renderers; i++) {
            const char *f = env->views->renderers[i].format;
            if (last && strcmp(f, last) <= 0) continue;
            if (!next || strcmp(f, next) < 0) next = f;
        }
        if (!next) break;
        len += (size_t)snprintf(s + len, size - len, "%s%s", len ? " " : "", next);
        last = next;
    }
    polis__strfree(env, env->views->formats);
    env->views->formats = polis__strdup(env, s);
    polis__free(env, s, size);
    if (!env->views->formats) return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    return POLIS_OK;
}

static polis_status renderer_add(polis_ctx *ctx, const char *format, polis_render_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    const polis_host *h = ctx->head.host;
    polis_status st = registration_open(ctx, "renderer");
    if (st) return st;
    if (!format || !valid_format(format)) {
        char q[QUOTE_MAX * 4 + 8];
        if (format) quote(q, sizeof q, format, strlen(format));
        h->error(ctx, "renderer: format %s is not 1-63 characters of [a-z0-9_]",
                 format ? q : "NULL");
        return POLIS_ERR_INVALID;
    }
    if (!fn) {
        h->error(ctx, "renderer %s: function is NULL", format);
        return POLIS_ERR_INVALID;
    }
    /* A "json" rendering has one member per plugin, so one renderer per format per plugin
     * keeps its keys unique; text renderers follow the same rule for symmetry. */
    struct polis__views *v = env->views;
    for (int32_t i = 0; i < v->n_renderers; i++) {
        if (v->renderers[i].ctx == ctx && strcmp(v->renderers[i].format, format) == 0) {
            h->error(ctx,
                     "renderer for format \"%s\" is already registered by %s (one per "
                     "format per plugin)",
                     format, ctx->name);
            return POLIS_ERR_INVALID;
        }
    }
    if ((st = polis__grow(env, (void **)&v->renderers, &v->cap_renderers, v->n_renderers,
                          sizeof *v->renderers)))
        return st;
    polis__renderer *r = &env->views->renderers[env->views->n_renderers];
    if (!(r->format = polis__strdup(env, format)))
        return polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
    r->fn = fn;
    r->ud = ud;
    r->ctx = ctx;
    env->views->n_renderers++;
    return rebuild_formats(env);
}

static polis_status parser_add(polis_ctx *ctx, polis_parse_fn fn, void *ud)
{
    polis_env *env = ctx->env;
    polis_status st = registration_open(ctx, "action_parser");
    if (st) return st;
    if (!fn) {
        ctx->head.host->error(ctx, "action_parser: function is NULL");
        return POLIS_ERR_INVALID;
    }
    struct polis__views *v = env->views;
    if ((st = polis__grow(env, (void **)&v->parsers, &v->cap_parsers, v->n_parsers,
                          sizeof *v->parsers)))
        return st;
    v->parsers[v->n_parsers++] = (polis__parser){.fn = fn, .ud = ud, .ctx = ctx};
    return POLIS_OK;
}

/* ---- the module (engine/modules.c) ----------------------------------------------------- */

static void views_host(polis_host *h)
{
    h->text_append = text_append;
    h->text_printf = text_printf;
    h->renderer = renderer_add;
    h->action_parser = parser_add;
}

static polis_status views_create(polis_env *env)
{
    env->views = polis__alloc(env, sizeof *env->views);
    return env->views ? POLIS_OK : polis__fail(env, POLIS_ERR_NOMEM, "out of memory");
}

static void views_free(polis_env *env)
{
    struct polis__views *v = env->views;
    if (!v) return;
    for (int32_t i = 0; i < v->n_renderers; i++) polis__strfree(env, v->renderers[i].format);
    polis__free(env, v->renderers, sizeof *v->renderers * (size_t)v->cap_renderers);
    polis__free(env, v->parsers, sizeof *v->parsers * (size_t)v->cap_parsers);
    polis__strfree(env, v->formats);
    polis__free(env, v, sizeof *v);
    env->views = NULL;
}

/* Renderers and action parsers in registration order: the order their pieces appear in a
 * rendering and the order parsers are asked. */
static void views_describe(polis__describe *b, cJSON *root, const polis_env *env)
{
    const struct polis__views *v = env->views;
    cJSON *arr = polis__describe_arr(b, root, "renderers");
    for (int32_t i = 0; i < v->n_renderers; i++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        polis__describe_str(b, o, "format", v->renderers[i].format);
        polis__describe_str(b, o, "owner", polis__describe_owner(v->renderers[i].ctx));
    }
    arr = polis__describe_arr(b, root, "action_parsers");
    for (int32_t i = 0; i < v->n_parsers; i++) {
        cJSON *o = polis__describe_obj(b, arr, NULL);
        polis__describe_str(b, o, "owner", polis__describe_owner(v->parsers[i].ctx));
    }
}

POLIS_INTERNAL const polis__module polis__views_module = {
    .name = "views",
    .host = views_host,
    .create = views_create,
    .free = views_free,
    .describe = views_describe,
};

/* ---- rendering --------------------------------------------------------------------------- */

const char *polis_env_render_formats(const polis_env *env)
{
    return env && env->views->formats ? env->views->formats : "";
}

static polis_status check_agent(polis_env *env, const char *what, int32_t agent)
{
    if (agent >= 0 && agent < env->n_agents) return POLIS_OK;
    return polis__fail(env, POLIS_ERR_INVALID, "%s: agent %d is not an agent id (0..%d)", what,
                       agent, env->n_agents - 1);
}

/* Checks a json renderer's piece, buf[start..len), with cJSON; the message shows where the
 * parser stopped and the bytes around it, so a plugin author sees what went wrong. */
static polis_status check_json_piece(polis_env *env, const polis__renderer *r, const polis_text *t,
                                     size_t start)
{
    const char *piece = t->buf + start;
    size_t n = t->len - start;
    size_t lead = 0;
    while (lead < n && (piece[lead] == ' ' || piece[lead] == '\t' || piece[lead] == '\n' ||
                        piece[lead] == '\r'))
        lead++;
    if (lead == n)
        return polis__fail(env, POLIS_ERR_INVALID, "%s: the json renderer wrote no JSON value",
                           r->ctx->name);
    const char *end = NULL;
    /* n + 1: cJSON checks for the terminating NUL when asked for no trailing text. */
    cJSON *v = cJSON_ParseWithLengthOpts(piece, n + 1, &end, 1);
    if (v) {
        cJSON_Delete(v);
        return POLIS_OK;
    }
    /* cJSON reports where it gave up, which can be a little past the mistake: show the
     * bytes before that point too. */
    size_t at = end && end >= piece && end <= piece + n ? (size_t)(end - piece) : 0;
    size_t from = at > 24 ? at - 24 : 0, len = n - from < 40 ? n - from : 40;
    char near[QUOTE_MAX * 4 + 8];
    quote(near, sizeof near, piece + from, len);
    return polis__fail(env, POLIS_ERR_INVALID,
                       "%s: the json renderer wrote invalid JSON (error at byte %zu of %zu: "
                       "%s%s%s)",
                       r->ctx->name, at, n, from ? "..." : "", near, from + len < n ? "..." : "");
}

static polis_status render_state(polis_env *env)
{
    switch (env->state) {
    case POLIS__ENV_RUNNING:
    case POLIS__ENV_DONE: return POLIS_OK;
    case POLIS__ENV_BROKEN:
        return polis__fail(env, POLIS_ERR_STATE,
                           "render: the previous step or reset failed; call reset");
    case POLIS__ENV_FROZEN:
        return polis__fail(env, POLIS_ERR_STATE,
                           "render: no episode yet; call reset before rendering");
    default: return polis__fail(env, POLIS_ERR_STATE, "render: the env was not created completely");
    }
}

/* The kernel's own part of a json rendering: the braces, commas and member names. */
static polis_status kernel_puts(polis_env *env, polis_text *t, const char *s)
{
    text_puts(t, s);
    if (t->st) return polis__fail(env, t->st, "render: %s", t->why);
    return POLIS_OK;
}

/* The kernel's legal-action line, written from the agent's current mask row after the
 * renderers' pieces of every "text" rendering, so no text view can disagree with the mask:
 * "Legal actions: noop, move_up, join_group_0..3 (x_i..j: each of x_i to x_j).". A family's
 * (host->action_family) legal members are written as runs, "prefix_i..j" for three or more
 * consecutive ones; the note on ranges is there only when a range is. */
static polis_status legal_actions(polis_env *env, int32_t agent, polis_text *t)
{
    const uint8_t *row = env->io.masks + (size_t)agent * (size_t)env->io.n_actions;
    const char *sep = "";
    bool range = false;
    text_puts(t, "Legal actions: ");
    for (int32_t k = 0; k < env->n_actions;) {
        const polis__action *a = &env->actions[k];
        int32_t n = a->family_count > 0 ? a->family_count : 1;
        /* "<prefix>_0": the family's prefix is the first name without its "_0". */
        int plen = (int)strlen(a->name) - 2;
        for (int32_t i = 0; i < n;) {
            if (!row[k + i]) {
                i++;
                continue;
            }
            int32_t j = i;
            while (j + 1 < n && row[k + j + 1]) j++;
            if (j - i >= 2) {
                text_printf(t, "%s%.*s_%d..%d", sep, plen, a->name, (int)i, (int)j);
                range = true;
            } else {
                for (int32_t m = i; m <= j; m++)
                    text_printf(t, "%s%s", m == i ? sep : ", ", env->actions[k + m].name);
            }
            sep = ", ";
            i = j + 1;
        }
        k += n;
    }
    text_puts(t, range ? " (x_i..j: each of x_i to x_j).\n" : ".\n");
    if (t->st) return polis__fail(env, t->st, "render: %s", t->why);
    return POLIS_OK;
}

static polis_status run_renderers(polis_env *env, int32_t agent, const char *format, polis_text *t)
{
    bool json = strcmp(format, "json") == 0;
    polis_status st;
    if (json && (st = kernel_puts(env, t, "{"))) return st;
    bool first = true;
    for (int32_t i = 0; i < env->views->n_renderers; i++) {
        const polis__renderer *r = &env->views->renderers[i];
        if (strcmp(r->format, format) != 0) continue;
        size_t start = t->len;
        if (json) {
            /* Plugin and script names are [a-z0-9_] (checked at load): no escaping. */
            if ((st = kernel_puts(env, t, first ? "\"" : ",\"")) ||
                (st = kernel_puts(env, t, r->ctx->name)) || (st = kernel_puts(env, t, "\":")))
                return st;
            start = t->len;
        }
        first = false;
        polis__clear_error(env);
        env->current = r->ctx;
        st = r->fn(r->ctx, r->ud, agent, t);
        env->current = NULL;
        if (st == POLIS_OK && t->st) st = polis__fail(env, t->st, "%s: %s", r->ctx->name, t->why);
        if (st == POLIS_OK && json) st = check_json_piece(env, r, t, start);
        if (st != POLIS_OK) {
            char what[160];
            snprintf(what, sizeof what, "render %s, agent %d (%s)", format, agent,
                     polis_env_agent_name(env, agent));
            polis__place_error(env, r->ctx, st, what);
            return st;
        }
    }
    if (json && (st = kernel_puts(env, t, "}"))) return st;
    if (strcmp(format, "text") == 0 && (st = legal_actions(env, agent, t))) return st;
    return POLIS_OK;
}

polis_status polis_env_render(polis_env *env, int32_t agent, const char *format, char **out)
{
    if (!env) return POLIS_ERR_INVALID;
    if (out) *out = NULL;
    polis__clear_error(env);
    if (!out) return polis__fail(env, POLIS_ERR_INVALID, "render: out is NULL");
    if (!format) return polis__fail(env, POLIS_ERR_INVALID, "render: format is NULL");
    polis_status st = check_agent(env, "render", agent);
    if (st) return st;
    bool known = false;
    for (int32_t i = 0; i < env->views->n_renderers && !known; i++)
        known = strcmp(env->views->renderers[i].format, format) == 0;
    if (!known) {
        char q[QUOTE_MAX * 4 + 8];
        quote(q, sizeof q, format, strlen(format));
        return polis__fail(env, POLIS_ERR_INVALID,
                           "render: no renderer for format %s (formats: %s)", q,
                           env->views->n_renderers ? env->views->formats : "none registered");
    }
    if ((st = render_state(env))) return st;

    polis_text t = {.env = env};
    st = run_renderers(env, agent, format, &t);
    if (st == POLIS_OK) {
        *out = malloc(t.len + 1);
        if (*out) {
            if (t.len) memcpy(*out, t.buf, t.len);
            (*out)[t.len] = '\0';
            polis__clear_error(env);
        } else {
            st = polis__fail(env, POLIS_ERR_NOMEM, "render: out of memory (%zu bytes)", t.len + 1);
        }
    }
    polis__free(env, t.buf, t.cap);
    return st;
}

/* ---- text actions ------------------------------------------------------------------------ */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* "noop, move_north, ... (+37 more)": enough to show what the names look like without
 * letting a game with hundreds of actions flood the message. */
static void list_actions(const polis_env *env, char *buf, size_t size)
{
    size_t len = 0;
    int32_t i = 0;
    buf[0] = '\0';
    for (; i < env->n_actions; i++) {
        const char *name = env->actions[i].name;
        if (i >= 16 || len + strlen(name) + 2 > 240) break;
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", name);
    }
    if (i < env->n_actions) snprintf(buf + len, size - len, ", ... (+%d more)", env->n_actions - i);
}

/* Asks the parsers in registration order; *id is set when one accepts. */
static polis_status run_parsers(polis_env *env, int32_t agent, const char *text, size_t n,
                                int32_t *id)
{
    for (int32_t i = 0; i < env->views->n_parsers; i++) {
        const polis__parser *p = &env->views->parsers[i];
        int32_t got = -1;
        polis__clear_error(env);
        env->current = p->ctx;
        polis_status st = p->fn(p->ctx, p->ud, agent, text, &got);
        env->current = NULL;
        if (st == POLIS_ERR_ACTION) continue;
        if (st == POLIS_OK && (got < 0 || got >= env->n_actions))
            st = polis__fail(env, POLIS_ERR_ACTION,
                             "%s: the action parser accepted the input but returned action %d, "
                             "outside [0, %d)",
                             p->ctx->name, got, env->n_actions);
        if (st != POLIS_OK) {
            char q[QUOTE_MAX * 4 + 8], what[QUOTE_MAX * 4 + 96];
            quote(q, sizeof q, text, n);
            snprintf(what, sizeof what, "parse %s, agent %d (%s)", q, agent,
                     polis_env_agent_name(env, agent));
            polis__place_error(env, p->ctx, st, what);
            return st;
        }
        *id = got;
        return POLIS_OK;
    }
    polis__clear_error(env);
    char q[QUOTE_MAX * 4 + 8], names[320];
    quote(q, sizeof q, text, n);
    list_actions(env, names, sizeof names);
    return polis__fail(env, POLIS_ERR_ACTION,
                       "agent %d (%s): cannot parse action %s (action names: %s; %d parser%s "
                       "tried)",
                       agent, polis_env_agent_name(env, agent), q, names, env->views->n_parsers,
                       env->views->n_parsers == 1 ? "" : "s");
}

polis_status polis_env_parse_action(polis_env *env, int32_t agent, const char *input,
                                    int32_t *out_action)
{
    if (!env) return POLIS_ERR_INVALID;
    polis__clear_error(env);
    if (!out_action) return polis__fail(env, POLIS_ERR_INVALID, "parse_action: out_action is NULL");
    *out_action = -1;
    polis_status st = check_agent(env, "parse_action", agent);
    if (st) return st;
    const char *name = polis_env_agent_name(env, agent);
    if (!input)
        return polis__fail(env, POLIS_ERR_INVALID, "parse_action: agent %d (%s): input is NULL",
                           agent, name);
    while (is_space(*input)) input++;
    size_t n = strlen(input);
    while (n > 0 && is_space(input[n - 1])) n--;
    if (n == 0)
        return polis__fail(env, POLIS_ERR_ACTION, "agent %d (%s): empty action", agent, name);

    for (int32_t i = 0; i < env->n_actions; i++) {
        const char *a = env->actions[i].name;
        if (strncmp(a, input, n) == 0 && a[n] == '\0') {
            *out_action = i;
            return POLIS_OK;
        }
    }
    /* Parsers get the trimmed input as a C string: a copy only when whitespace trails. */
    char *copy = NULL;
    const char *text = input;
    if (input[n] != '\0') {
        if (!(copy = polis__alloc(env, n + 1)))
            return polis__fail(env, POLIS_ERR_NOMEM, "parse_action: out of memory");
        memcpy(copy, input, n);
        text = copy;
    }
    int32_t id = -1;
    st = run_parsers(env, agent, text, n, &id);
    if (copy) polis__free(env, copy, n + 1);
    if (st == POLIS_OK) {
        *out_action = id;
        polis__clear_error(env); /* an accepting parser may have left a message */
    }
    return st;
}
