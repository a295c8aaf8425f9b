/*
 * engine/record.c — the recorder: writes an episode of any game as a polis recording
 * (docs/recording.md) from what the kernel already knows — the scenario, the action table,
 * the looks the game registered (scene.c), every bus event (through a host subscriber), the
 * io buffers and the state hash. No per-game code.
 *
 * Each line is built in one growable buffer and handed to a sink: a file (gzip through zlib
 * when the name ends in ".gz") or the caller's function (the replay check compares the lines
 * it would write with the recorded ones). Per tick the recorder writes what changed since the
 * previous line: it keeps a copy of the last scene, and things, nodes and edges are compared
 * by key after an in-place sort of both sides (no allocation once the buffers are sized).
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "internal.h"

typedef struct rbuf {
    char *p;
    size_t len, cap;
    bool oom;
} rbuf;

static void rb_reserve(rbuf *b, size_t more)
{
    if (b->oom || b->len + more + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void rb_put(rbuf *b, const char *s, size_t n)
{
    rb_reserve(b, n);
    if (b->oom) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void rb_puts(rbuf *b, const char *s) { rb_put(b, s, strlen(s)); }

static void rb_printf(rbuf *b, const char *fmt, ...) POLIS_PRINTF(2, 3);
static void rb_printf(rbuf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        rb_put(b, small, (size_t)n);
        return;
    }
    rb_reserve(b, (size_t)n);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* An integer, without printf (the recorder writes thousands per tick). */
static void rb_int(rbuf *b, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[sizeof tmp - 1 - n++] = '-';
    rb_put(b, tmp + sizeof tmp - n, (size_t)n);
}

/* ",v" or "v" */
static void rb_item(rbuf *b, bool comma, int64_t v)
{
    if (comma) rb_put(b, ",", 1);
    rb_int(b, v);
}

/* A JSON string literal (RFC 8259 escapes; bytes >= 0x80 are passed through as UTF-8). */
static void rb_str(rbuf *b, const char *s)
{
    rb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': rb_put(b, "\\\"", 2); break;
        case '\\': rb_put(b, "\\\\", 2); break;
        case '\n': rb_put(b, "\\n", 2); break;
        case '\r': rb_put(b, "\\r", 2); break;
        case '\t': rb_put(b, "\\t", 2); break;
        default:
            if (*p < 0x20)
                rb_printf(b, "\\u%04x", *p);
            else
                rb_put(b, (const char *)p, 1);
        }
    }
    rb_put(b, "\"", 1);
}

/* A float with enough digits to round-trip as f32; JSON has no infinities or NaN. */
static void rb_f32(rbuf *b, float v)
{
    if (v != v || v > FLT_MAX || v < -FLT_MAX)
        rb_puts(b, "null");
    else if (v == (float)(int32_t)v && v < 16777216.0f && v > -16777216.0f)
        rb_int(b, (int32_t)v); /* what %.9g prints for a whole number (0 for -0) */
    else
        rb_printf(b, "%.9g", (double)v);
}

static void rb_f64(rbuf *b, double v)
{
    if (v != v || v > DBL_MAX || v < -DBL_MAX)
        rb_puts(b, "null");
    else
        rb_printf(b, "%.17g", v);
}

struct polis_recorder {
    polis_env *env;
    void (*sink)(void *ud, const char *line, size_t len);
    void *sink_ud;
    FILE *f;
    gzFile gz;
    bool write_failed;
    char err[POLIS_ERRMAX];
    int32_t keyframe_every;
    int32_t n_agents;
    int64_t episode;          /* -1 before the first begin_episode */
    bool in_episode;
    double *returns;          /* [n_agents] */
    rbuf line;
    rbuf events;              /* the current tick's events, ",{...}" each */
    rbuf msgs;                /* messages for the next step line, ",{...}" each */
    bool events_on;
    /* the previous line's scene */
    bool have_prev;
    polis_scene prev;
    size_t prev_cells, prev_stats;
    polis_scene_thing *cur_things; /* sorted copy of the current things */
    polis_scene_node *cur_nodes;
    polis_scene_edge *cur_edges;
    int32_t cap_things, cap_nodes, cap_edges;
};

static polis_status rec_fail(polis_recorder *r, polis_status st, const char *fmt, ...)
    POLIS_PRINTF(3, 4);
static polis_status rec_fail(polis_recorder *r, polis_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    return st;
}

const char *polis_recorder_error(const polis_recorder *r) { return r ? r->err : "recorder is NULL"; }

/* Hands the finished line (with its '\n') to the sink. */
static polis_status emit(polis_recorder *r)
{
    rb_put(&r->line, "\n", 1);
    if (r->line.oom || r->events.oom || r->msgs.oom)
        return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory building a line");
    if (r->sink) {
        r->sink(r->sink_ud, r->line.p, r->line.len);
    } else if (r->gz) {
        if (gzwrite(r->gz, r->line.p, (unsigned)r->line.len) != (int)r->line.len)
            r->write_failed = true;
    } else if (fwrite(r->line.p, 1, r->line.len, r->f) != r->line.len) {
        r->write_failed = true;
    }
    r->line.len = 0;
    if (r->write_failed) return rec_fail(r, POLIS_ERR_IO, "recorder: cannot write the recording");
    return POLIS_OK;
}

/* ---- events ----------------------------------------------------------------------------- */

static void on_event(void *ud, const polis_event *ev)
{
    polis_recorder *r = ud;
    if (!r->events_on) return;
    const polis_env *env = r->env;
    const polis__event_type *t = &env->events[ev->type];
    rbuf *b = &r->events;
    rb_puts(b, ",{\"type\":");
    rb_str(b, t->name);
    for (int32_t i = 0; i < t->n_fields; i++) {
        const polis__field *f = &t->fields[i];
        const uint8_t *p = (const uint8_t *)ev->data + f->offset;
        rb_put(b, ",", 1);
        rb_str(b, f->name);
        rb_put(b, ":", 1);
        switch (f->type) {
        case POLIS_FIELD_I32: {
            int32_t v;
            memcpy(&v, p, sizeof v);
            rb_int(b, v);
            break;
        }
        case POLIS_FIELD_I64: {
            int64_t v;
            memcpy(&v, p, sizeof v);
            rb_int(b, v);
            break;
        }
        case POLIS_FIELD_F32: {
            float v;
            memcpy(&v, p, sizeof v);
            rb_f32(b, v);
            break;
        }
        case POLIS_FIELD_F64: {
            double v;
            memcpy(&v, p, sizeof v);
            rb_f64(b, v);
            break;
        }
        }
    }
    rb_put(b, "}", 1);
}

/* ---- opening: the header ---------------------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* A JSON text as one line (re-printed without formatting), or NULL if it does not parse. */
static char *one_line(const char *text, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!j) return NULL;
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

static polis_status header(polis_recorder *r, const polis_record_info *info)
{
    polis_env *env = r->env;
    rbuf *b = &r->line;
    rb_printf(b, "{\"t\":\"header\",\"format\":\"polis-recording\",\"version\":%d,\"polis\":",
              POLIS_RECORDING_VERSION);
    rb_str(b, POLIS_VERSION_STRING);
    rb_printf(b, ",\"abi\":\"%d.%d\",\"name\":", POLIS_ABI_MAJOR, POLIS_ABI_MINOR);
    rb_str(b, polis_env_name(env));
    rb_puts(b, ",\"scenario\":");
    char *scn = one_line(info->scenario_text, info->scenario_len);
    if (!scn)
        return rec_fail(r, POLIS_ERR_INVALID, "recorder: the scenario text is not valid JSON");
    rb_puts(b, scn);
    /* the hash of the scenario as the header holds it, so a replay re-checks it */
    uint64_t scn_hash = fnv1a(scn, strlen(scn));
    cJSON_free(scn);
    rb_puts(b, ",\"scenario_path\":");
    if (info->scenario_path)
        rb_str(b, info->scenario_path);
    else
        rb_puts(b, "null");
    rb_puts(b, ",\"base_dir\":");
    if (info->base_dir)
        rb_str(b, info->base_dir);
    else
        rb_puts(b, "null");
    rb_printf(b, ",\"scenario_hash\":\"%016" PRIx64 "\",\"overrides\":", scn_hash);
    if (info->overrides && *info->overrides) {
        char *ov = one_line(info->overrides, strlen(info->overrides));
        if (!ov) return rec_fail(r, POLIS_ERR_INVALID, "recorder: the overrides are not valid JSON");
        rb_puts(b, ov);
        cJSON_free(ov);
    } else {
        rb_puts(b, "null");
    }
    rb_printf(b, ",\"seed\":%" PRIu64 ",\"keyframe_every\":%d,\"plugins\":[", info->seed,
              (int)r->keyframe_every);
    bool first = true;
    for (int32_t i = 1; i < env->n_ctxs; i++) {
        const polis_ctx *c = env->ctxs[i];
        if (c->kind != POLIS__CTX_PLUGIN && c->kind != POLIS__CTX_SCRIPT) continue;
        rb_puts(b, first ? "{\"name\":" : ",{\"name\":");
        first = false;
        rb_str(b, c->name);
        rb_puts(b, ",\"version\":");
        rb_str(b, c->kind == POLIS__CTX_PLUGIN && c->desc && c->desc->version ? c->desc->version
                                                                              : "");
        rb_puts(b, c->kind == POLIS__CTX_PLUGIN ? ",\"kind\":\"so\",\"path\":"
                                                : ",\"kind\":\"lua\",\"path\":");
        const char *path = c->kind == POLIS__CTX_PLUGIN ? c->path
                           : c->scn_script             ? c->scn_script->path
                                                       : NULL;
        rb_str(b, path ? path : "");
        rb_put(b, "}", 1);
    }
    rb_puts(b, "],\"agents\":[");
    for (int32_t a = 0; a < env->n_agents; a++) {
        if (a) rb_put(b, ",", 1);
        rb_str(b, polis_env_agent_name(env, a));
    }
    rb_puts(b, "],\"actions\":[");
    for (int32_t i = 0; i < env->n_actions; i++) {
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, env->actions[i].name);
        rb_puts(b, ",\"doc\":");
        rb_str(b, env->actions[i].doc ? env->actions[i].doc : "");
        rb_put(b, "}", 1);
    }
    rb_printf(b, "],\"map\":{\"width\":%d,\"height\":%d,\"layers\":[",
              (int)polis_env_scene_width(env), (int)polis_env_scene_height(env));
    int32_t nl = polis_env_scene_width(env) > 0 ? polis_env_scene_n_layers(env) : 0;
    for (int32_t i = 0; i < nl; i++) {
        if (i) rb_put(b, ",", 1);
        rb_str(b, polis_env_scene_layer_name(env, i));
    }
    rb_puts(b, "]},\"kinds\":[");
    for (int32_t i = 0; i < polis_env_scene_n_kinds(env); i++) {
        polis_kind_info k;
        polis_env_scene_kind(env, i, &k);
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, k.name);
        rb_puts(b, ",\"glyph\":");
        rb_str(b, k.glyph);
        rb_puts(b, ",\"color\":");
        rb_str(b, k.color);
        rb_puts(b, ",\"shape\":");
        rb_str(b, polis_shape_name(k.shape));
        rb_puts(b, ",\"plugin\":");
        rb_str(b, k.plugin);
        rb_put(b, "}", 1);
    }
    rb_puts(b, "],\"stats\":[");
    for (int32_t i = 0; i < polis_env_scene_n_stats(env); i++) {
        const char *name, *group;
        int32_t max;
        polis_env_scene_stat(env, i, &name, &group, &max);
        rb_puts(b, i ? ",{\"name\":" : "{\"name\":");
        rb_str(b, name);
        rb_puts(b, ",\"group\":");
        rb_str(b, group);
        rb_printf(b, ",\"max\":%d}", (int)max);
    }
    int32_t rx, ry;
    if (polis_env_scene_view(env, &rx, &ry))
        rb_printf(b, "],\"view\":{\"rx\":%d,\"ry\":%d}", (int)rx, (int)ry);
    else
        rb_puts(b, "],\"view\":null");
    rb_puts(b, ",\"policies\":");
    if (info->policies && *info->policies) {
        char *pol = one_line(info->policies, strlen(info->policies));
        if (!pol) return rec_fail(r, POLIS_ERR_INVALID, "recorder: policies is not valid JSON");
        rb_puts(b, pol);
        cJSON_free(pol);
    } else {
        rb_puts(b, "null");
    }
    rb_puts(b, ",\"source\":");
    rb_str(b, info->source ? info->source : "api");
    rb_put(b, "}", 1);
    return emit(r);
}

static polis_status open_common(polis_recorder *r, polis_env *env, const polis_record_info *info,
                                polis_error *err)
{
    r->env = env;
    r->episode = -1;
    r->n_agents = polis_env_n_agents(env);
    r->keyframe_every = info->keyframe_every > 0 ? info->keyframe_every : 100;
    r->events_on = true; /* the first reset's events go into its reset line */
    r->returns = calloc((size_t)(r->n_agents ? r->n_agents : 1), sizeof *r->returns);
    if (!r->returns) return POLIS_ERR_NOMEM;
    polis_status st = polis_env_subscribe(env, -1, on_event, r);
    if (st) {
        snprintf(err->message, sizeof err->message,
                 "recorder: cannot subscribe to the env's events (%s): open the recorder "
                 "before the first reset",
                 polis_env_error(env));
        return st;
    }
    if ((st = header(r, info))) snprintf(err->message, sizeof err->message, "%s", r->err);
    return st;
}

static void rec_free(polis_recorder *r)
{
    if (!r) return;
    free(r->returns);
    free(r->line.p);
    free(r->events.p);
    free(r->msgs.p);
    free(r->prev.tiles);
    free(r->prev.agents);
    free(r->prev.stats);
    free(r->prev.things);
    free(r->prev.nodes);
    free(r->prev.edges);
    free(r->cur_things);
    free(r->cur_nodes);
    free(r->cur_edges);
    free(r);
}

static polis_status check_info(polis_env *env, const polis_record_info *info, polis_error *err)
{
    if (!env || !info || !info->scenario_text || info->keyframe_every < 0) {
        snprintf(err->message, sizeof err->message,
                 "recorder: %s", !env ? "env is NULL" : !info ? "info is NULL"
                                 : !info->scenario_text ? "info->scenario_text is NULL"
                                                        : "keyframe_every is negative");
        return err->status = POLIS_ERR_INVALID;
    }
    return POLIS_OK;
}

polis_status polis_recorder_open(const char *path, polis_env *env, const polis_record_info *info,
                                 polis_recorder **out, polis_error *err)
{
    polis_error local;
    if (!err) err = &local;
    err->status = POLIS_OK;
    err->message[0] = '\0';
    if (out) *out = NULL;
    if (!out || !path) {
        snprintf(err->message, sizeof err->message, "recorder: %s is NULL", out ? "path" : "out");
        return err->status = POLIS_ERR_INVALID;
    }
    polis_status st = check_info(env, info, err);
    if (st) return st;
    polis_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "recorder: out of memory");
        return err->status = POLIS_ERR_NOMEM;
    }
    size_t n = strlen(path);
    bool gz = n > 3 && strcmp(path + n - 3, ".gz") == 0;
    if (gz)
        r->gz = gzopen(path, "wb1"); /* fast deflate: recording runs beside the step */
    else
        r->f = fopen(path, "wb");
    if (!r->gz && !r->f) {
        snprintf(err->message, sizeof err->message, "recorder: cannot create %s: %s", path,
                 strerror(errno));
        rec_free(r);
        return err->status = POLIS_ERR_IO;
    }
    if ((st = open_common(r, env, info, err))) {
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "%s", r->err);
        polis_recorder_close(r);
        remove(path);
        return err->status = st;
    }
    *out = r;
    return POLIS_OK;
}

polis_status polis_recorder_open_sink(void (*sink)(void *ud, const char *line, size_t len),
                                      void *ud, polis_env *env, const polis_record_info *info,
                                      polis_recorder **out, polis_error *err)
{
    polis_error local;
    if (!err) err = &local;
    err->status = POLIS_OK;
    err->message[0] = '\0';
    if (out) *out = NULL;
    if (!out || !sink) {
        snprintf(err->message, sizeof err->message, "recorder: %s is NULL", out ? "sink" : "out");
        return err->status = POLIS_ERR_INVALID;
    }
    polis_status st = check_info(env, info, err);
    if (st) return st;
    polis_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->message, sizeof err->message, "recorder: out of memory");
        return err->status = POLIS_ERR_NOMEM;
    }
    r->sink = sink;
    r->sink_ud = ud;
    if ((st = open_common(r, env, info, err))) {
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "%s", r->err);
        rec_free(r);
        return err->status = st;
    }
    *out = r;
    return POLIS_OK;
}

polis_status polis_recorder_close(polis_recorder *r)
{
    if (!r) return POLIS_OK;
    polis_status st = r->write_failed ? POLIS_ERR_IO : POLIS_OK;
    if (r->gz && gzclose(r->gz) != Z_OK) st = POLIS_ERR_IO;
    if (r->f && fclose(r->f) != 0) st = POLIS_ERR_IO;
    rec_free(r);
    return st;
}

/* ---- scenes ----------------------------------------------------------------------------- */

/* In-place heapsort (qsort may allocate), by a comparison of whole elements. */
static void heap_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *a = base;
    char tmp[256];
    if (size > sizeof tmp) return;
#define EL(i) (a + (size_t)(i) * size)
#define SWAP(i, j)                                                                                 \
    do {                                                                                           \
        memcpy(tmp, EL(i), size);                                                                  \
        memcpy(EL(i), EL(j), size);                                                                \
        memcpy(EL(j), tmp, size);                                                                  \
    } while (0)
    for (size_t start = n / 2; start-- > 0;) {
        size_t root = start;
        for (size_t child; (child = 2 * root + 1) < n; root = child) {
            if (child + 1 < n && cmp(EL(child), EL(child + 1)) < 0) child++;
            if (cmp(EL(root), EL(child)) >= 0) break;
            SWAP(root, child);
        }
    }
    for (size_t end = n; end-- > 1;) {
        SWAP(0, end);
        size_t root = 0;
        for (size_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && cmp(EL(child), EL(child + 1)) < 0) child++;
            if (cmp(EL(root), EL(child)) >= 0) break;
            SWAP(root, child);
        }
    }
#undef SWAP
#undef EL
}

static int cmp_thing(const void *a, const void *b)
{
    const polis_scene_thing *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_node(const void *a, const void *b)
{
    return strcmp(((const polis_scene_node *)a)->id, ((const polis_scene_node *)b)->id);
}

static int cmp_edge(const void *a, const void *b)
{
    const polis_scene_edge *x = a, *y = b;
    int c = strcmp(x->from, y->from);
    if (!c) c = strcmp(x->to, y->to);
    if (!c) c = strcmp(x->kind, y->kind);
    return c;
}

static polis_status sized(polis_recorder *r, const polis_scene *s)
{
    if (r->prev.tiles || r->prev.agents || r->cur_things || r->cur_nodes || r->cur_edges ||
        r->have_prev)
        return POLIS_OK;
    r->prev = *s;
    r->prev_cells = (size_t)s->n_layers * (size_t)s->width * (size_t)s->height;
    r->prev_stats = (size_t)s->n_agents * (size_t)s->n_stats;
    size_t na = (size_t)s->n_agents;
    r->prev.tiles = calloc(r->prev_cells + 1, sizeof *r->prev.tiles);
    r->prev.agents = calloc(na + 1, sizeof *r->prev.agents);
    r->prev.stats = calloc(r->prev_stats + 1, sizeof *r->prev.stats);
    r->prev.things = calloc((size_t)s->cap_things + 1, sizeof *r->prev.things);
    r->prev.nodes = calloc((size_t)s->cap_nodes + 1, sizeof *r->prev.nodes);
    r->prev.edges = calloc((size_t)s->cap_edges + 1, sizeof *r->prev.edges);
    r->cur_things = calloc((size_t)s->cap_things + 1, sizeof *r->cur_things);
    r->cur_nodes = calloc((size_t)s->cap_nodes + 1, sizeof *r->cur_nodes);
    r->cur_edges = calloc((size_t)s->cap_edges + 1, sizeof *r->cur_edges);
    if (!r->prev.tiles || !r->prev.agents || !r->prev.stats || !r->prev.things || !r->prev.nodes ||
        !r->prev.edges || !r->cur_things || !r->cur_nodes || !r->cur_edges)
        return rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory for the scene copy");
    return POLIS_OK;
}

/* Reads the scene and sorts its things, nodes and edges into the cur_ copies. */
static polis_status take_scene(polis_recorder *r, const polis_scene **out)
{
    polis_status st = polis_env_scene_get(r->env, out);
    if (st)
        return rec_fail(r, st, "recorder: tick %" PRId64 ": %s", polis_env_tick(r->env),
                        polis_env_error(r->env));
    const polis_scene *s = *out;
    if ((st = sized(r, s))) return st;
    /* a game without things, nodes or edges has no such buffers (NULL) */
    if (s->n_things) memcpy(r->cur_things, s->things, (size_t)s->n_things * sizeof *s->things);
    if (s->n_nodes) memcpy(r->cur_nodes, s->nodes, (size_t)s->n_nodes * sizeof *s->nodes);
    if (s->n_edges) memcpy(r->cur_edges, s->edges, (size_t)s->n_edges * sizeof *s->edges);
    heap_sort(r->cur_things, (size_t)s->n_things, sizeof *s->things, cmp_thing);
    heap_sort(r->cur_nodes, (size_t)s->n_nodes, sizeof *s->nodes, cmp_node);
    heap_sort(r->cur_edges, (size_t)s->n_edges, sizeof *s->edges, cmp_edge);
    for (int32_t i = 1; i < s->n_things; i++)
        if (r->cur_things[i].id == r->cur_things[i - 1].id)
            return rec_fail(r, POLIS_ERR_INVALID,
                            "recorder: tick %" PRId64 ": two things have id %d in the scene",
                            polis_env_tick(r->env), (int)r->cur_things[i].id);
    return POLIS_OK;
}

/* Remembers the scene just written, for the next diff. */
static void keep_scene(polis_recorder *r, const polis_scene *s)
{
    if (r->prev_cells) memcpy(r->prev.tiles, s->tiles, r->prev_cells * sizeof *s->tiles);
    if (s->n_agents) memcpy(r->prev.agents, s->agents, (size_t)s->n_agents * sizeof *s->agents);
    if (r->prev_stats) memcpy(r->prev.stats, s->stats, r->prev_stats * sizeof *s->stats);
    memcpy(r->prev.things, r->cur_things, (size_t)s->n_things * sizeof *s->things);
    memcpy(r->prev.nodes, r->cur_nodes, (size_t)s->n_nodes * sizeof *s->nodes);
    memcpy(r->prev.edges, r->cur_edges, (size_t)s->n_edges * sizeof *s->edges);
    r->prev.n_things = s->n_things;
    r->prev.n_nodes = s->n_nodes;
    r->prev.n_edges = s->n_edges;
    r->have_prev = true;
}

static void put_thing(rbuf *b, const polis_scene_thing *t)
{
    rb_put(b, "[", 1);
    rb_int(b, t->id);
    rb_item(b, true, t->kind);
    rb_item(b, true, t->x);
    rb_item(b, true, t->y);
    rb_put(b, ",", 1);
    rb_str(b, t->label);
    rb_put(b, "]", 1);
}

static void put_node(rbuf *b, const polis_scene_node *n)
{
    rb_put(b, "[", 1);
    rb_str(b, n->id);
    rb_put(b, ",", 1);
    rb_str(b, n->kind);
    rb_put(b, ",", 1);
    rb_str(b, n->label);
    rb_put(b, "]", 1);
}

static void put_edge(rbuf *b, const polis_scene_edge *e, bool weight)
{
    rb_put(b, "[", 1);
    rb_str(b, e->from);
    rb_put(b, ",", 1);
    rb_str(b, e->to);
    rb_put(b, ",", 1);
    rb_str(b, e->kind);
    if (weight) {
        rb_put(b, ",", 1);
        rb_f32(b, e->weight);
    }
    rb_put(b, "]", 1);
}

static polis_status keyframe(polis_recorder *r, const polis_scene *s)
{
    rbuf *b = &r->line;
    polis_env *env = r->env;
    rb_printf(b, "{\"t\":\"key\",\"tick\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\",\"tiles\":[",
              polis_env_tick(env), polis_env_state_hash(env));
    size_t plane = (size_t)s->width * (size_t)s->height;
    for (int32_t l = 0; l < s->n_layers; l++) {
        rb_puts(b, l ? ",[" : "[");
        const int32_t *t = plane ? s->tiles + (size_t)l * plane : NULL; /* no map: no cells */
        for (size_t i = 0; i < plane;) {
            size_t j = i + 1;
            while (j < plane && t[j] == t[i]) j++;
            rb_item(b, i != 0, t[i]);
            rb_item(b, true, (int64_t)(j - i));
            i = j;
        }
        rb_put(b, "]", 1);
    }
    rb_puts(b, "],\"things\":[");
    for (int32_t i = 0; i < s->n_things; i++) {
        if (i) rb_put(b, ",", 1);
        put_thing(b, &r->cur_things[i]);
    }
    rb_puts(b, "],\"agents\":[");
    for (int32_t a = 0; a < s->n_agents; a++) {
        const polis_scene_agent *ag = &s->agents[a];
        rb_printf(b, "%s{\"x\":%d,\"y\":%d,\"facing\":%d,\"alive\":%d,\"stats\":[", a ? "," : "",
                  (int)ag->x, (int)ag->y, (int)ag->facing, (int)ag->alive);
        for (int32_t k = 0; k < s->n_stats; k++)
            rb_item(b, k != 0, s->stats[(size_t)a * (size_t)s->n_stats + (size_t)k]);
        rb_puts(b, "],\"return\":");
        rb_f64(b, r->returns[a]);
        rb_put(b, "}", 1);
    }
    rb_puts(b, "],\"nodes\":[");
    for (int32_t i = 0; i < s->n_nodes; i++) {
        if (i) rb_put(b, ",", 1);
        put_node(b, &r->cur_nodes[i]);
    }
    rb_puts(b, "],\"edges\":[");
    for (int32_t i = 0; i < s->n_edges; i++) {
        if (i) rb_put(b, ",", 1);
        put_edge(b, &r->cur_edges[i], true);
    }
    rb_puts(b, "]}");
    return emit(r);
}

/* The members of a step line that say what changed since the previous line. */
static void diff(polis_recorder *r, const polis_scene *s)
{
    rbuf *b = &r->line;
    const polis_scene *p = &r->prev;
    size_t plane = (size_t)s->width * (size_t)s->height;
    bool any = false;
    for (int32_t l = 0; l < s->n_layers; l++)
        for (size_t i = 0; i < plane; i++) {
            size_t k = (size_t)l * plane + i;
            if (s->tiles[k] == p->tiles[k]) continue;
            rb_puts(b, any ? ",[" : ",\"tiles\":[[");
            rb_item(b, false, l);
            rb_item(b, true, (int64_t)(i % (size_t)s->width));
            rb_item(b, true, (int64_t)(i / (size_t)s->width));
            rb_item(b, true, s->tiles[k]);
            rb_put(b, "]", 1);
            any = true;
        }
    if (any) rb_put(b, "]", 1);

    /* things: a merge of the two id-sorted lists */
    const polis_scene_thing *ct = r->cur_things, *pt = p->things;
    int32_t nc = s->n_things, np = p->n_things;
    bool add = false, move = false, del = false;
    size_t mark = b->len;
    rb_puts(b, ",\"things\":{");
    size_t start = b->len;
    for (int pass = 0; pass < 3; pass++) {
        bool *flag = pass == 0 ? &add : pass == 1 ? &move : &del;
        int32_t i = 0, j = 0;
        while (i < nc || j < np) {
            int c = i >= nc ? 1 : j >= np ? -1 : cmp_thing(&ct[i], &pt[j]);
            const char *open = pass == 0 ? "\"add\":[" : pass == 1 ? "\"move\":[" : "\"del\":[";
            if (c < 0 || (c == 0 && (ct[i].kind != pt[j].kind ||
                                     strcmp(ct[i].label, pt[j].label) != 0))) {
                /* new, or changed in kind or label: added again (replacing the old one) */
                if (pass == 0) {
                    if (!*flag) rb_puts(b, b->len > start ? ",\"add\":[" : open);
                    else rb_put(b, ",", 1);
                    put_thing(b, &ct[i]);
                    *flag = true;
                }
                i++;
                if (c == 0) j++;
            } else if (c > 0) {
                if (pass == 2) {
                    if (!*flag) rb_puts(b, b->len > start ? ",\"del\":[" : open);
                    else rb_put(b, ",", 1);
                    rb_int(b, pt[j].id);
                    *flag = true;
                }
                j++;
            } else {
                if (pass == 1 && (ct[i].x != pt[j].x || ct[i].y != pt[j].y)) {
                    if (!*flag) rb_puts(b, b->len > start ? ",\"move\":[" : open);
                    else rb_put(b, ",", 1);
                    rb_printf(b, "[%d,%d,%d]", (int)ct[i].id, (int)ct[i].x, (int)ct[i].y);
                    *flag = true;
                }
                i++, j++;
            }
        }
        if (*flag) rb_put(b, "]", 1);
    }
    if (add || move || del)
        rb_put(b, "}", 1);
    else
        b->len = mark;

    /* agents: changed members only */
    any = false;
    for (int32_t a = 0; a < s->n_agents; a++) {
        const polis_scene_agent *c = &s->agents[a], *o = &p->agents[a];
        /* a game without stats has no stats buffers (NULL; no offset may be applied) */
        const int32_t *cs = s->n_stats ? s->stats + (size_t)a * (size_t)s->n_stats : NULL;
        const int32_t *os = s->n_stats ? p->stats + (size_t)a * (size_t)s->n_stats : NULL;
        bool pos = c->x != o->x || c->y != o->y, face = c->facing != o->facing,
             alive = c->alive != o->alive;
        bool stats = s->n_stats && memcmp(cs, os, (size_t)s->n_stats * sizeof *cs) != 0;
        if (!pos && !face && !alive && !stats) continue;
        rb_printf(b, "%s[%d,{", any ? "," : ",\"agents\":[", (int)a);
        any = true;
        bool first = true;
        if (pos) {
            rb_printf(b, "\"x\":%d,\"y\":%d", (int)c->x, (int)c->y);
            first = false;
        }
        if (face) {
            rb_printf(b, "%s\"facing\":%d", first ? "" : ",", (int)c->facing);
            first = false;
        }
        if (alive) {
            rb_printf(b, "%s\"alive\":%d", first ? "" : ",", (int)c->alive);
            first = false;
        }
        if (stats) {
            rb_puts(b, first ? "\"stats\":{" : ",\"stats\":{");
            bool f2 = true;
            for (int32_t k = 0; k < s->n_stats; k++) {
                if (cs[k] == os[k]) continue;
                rb_printf(b, "%s\"%d\":%d", f2 ? "" : ",", (int)k, (int)cs[k]);
                f2 = false;
            }
            rb_put(b, "}", 1);
        }
        rb_puts(b, "}]");
    }
    if (any) rb_put(b, "]", 1);

    /* nodes and edges: a changed label or weight is a del and an add of the same key */
    for (int which = 0; which < 2; which++) {
        int32_t n1 = which ? s->n_edges : s->n_nodes, n0 = which ? p->n_edges : p->n_nodes;
        bool a1 = false, d1 = false;
        mark = b->len;
        rb_puts(b, which ? ",\"edges\":{" : ",\"nodes\":{");
        for (int pass = 0; pass < 2; pass++) {
            int32_t i = 0, j = 0;
            bool *flag = pass == 0 ? &a1 : &d1;
            while (i < n1 || j < n0) {
                int c;
                bool changed = false;
                if (which) {
                    c = i >= n1 ? 1 : j >= n0 ? -1 : cmp_edge(&r->cur_edges[i], &p->edges[j]);
                    if (c == 0) changed = r->cur_edges[i].weight != p->edges[j].weight;
                } else {
                    c = i >= n1 ? 1 : j >= n0 ? -1 : cmp_node(&r->cur_nodes[i], &p->nodes[j]);
                    if (c == 0)
                        changed = strcmp(r->cur_nodes[i].kind, p->nodes[j].kind) != 0 ||
                                  strcmp(r->cur_nodes[i].label, p->nodes[j].label) != 0;
                }
                bool put_add = pass == 0 && (c < 0 || (c == 0 && changed));
                bool put_del = pass == 1 && (c > 0 || (c == 0 && changed));
                if (put_add || put_del) {
                    if (!*flag) rb_puts(b, pass == 0 ? "\"add\":[" : a1 ? ",\"del\":[" : "\"del\":[");
                    else rb_put(b, ",", 1);
                    *flag = true;
                    if (which)
                        put_edge(b, put_add ? &r->cur_edges[i] : &p->edges[j], put_add);
                    else if (put_add)
                        put_node(b, &r->cur_nodes[i]);
                    else
                        rb_str(b, p->nodes[j].id);
                }
                if (c <= 0) i++;
                if (c >= 0) j++;
            }
            if (*flag) rb_put(b, "]", 1);
        }
        if (a1 || d1)
            rb_put(b, "}", 1);
        else
            b->len = mark;
    }
}

/* ---- episodes ------------------------------------------------------------------------------ */

polis_status polis_recorder_begin_episode(polis_recorder *r, uint64_t seed)
{
    if (!r) return POLIS_ERR_INVALID;
    polis_env *env = r->env;
    if (polis_env_tick(env) != 0)
        return rec_fail(r, POLIS_ERR_STATE,
                        "recorder: begin_episode at tick %" PRId64 ": call it right after "
                        "polis_env_reset",
                        polis_env_tick(env));
    if (r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE, "recorder: episode %" PRId64 " has no end line yet "
                                            "(call polis_recorder_end_episode)",
                        r->episode);
    r->episode++;
    r->in_episode = true;
    for (int32_t a = 0; a < r->n_agents; a++) r->returns[a] = 0;
    const polis_scene *s;
    polis_status st = take_scene(r, &s);
    if (st) return st;
    rb_printf(&r->line, "{\"t\":\"reset\",\"episode\":%" PRId64 ",\"seed\":%" PRIu64, r->episode,
              seed);
    /* the events of the reset (world generation) were collected since the last line */
    if (r->events.len) {
        rb_puts(&r->line, ",\"events\":[");
        rb_put(&r->line, r->events.p + 1, r->events.len - 1);
        rb_put(&r->line, "]", 1);
    }
    r->events.len = 0;
    rb_put(&r->line, "}", 1);
    if ((st = emit(r))) return st;
    if ((st = keyframe(r, s))) return st;
    keep_scene(r, s);
    return POLIS_OK;
}

polis_status polis_recorder_msg(polis_recorder *r, int32_t agent, const char *kind,
                                const char *text)
{
    if (!r || !kind || !text) return POLIS_ERR_INVALID;
    if (agent < 0 || agent >= r->n_agents)
        return rec_fail(r, POLIS_ERR_INVALID, "recorder: msg for agent %d (0..%d)", (int)agent,
                        (int)r->n_agents - 1);
    rb_printf(&r->msgs, ",{\"agent\":%d,\"kind\":", (int)agent);
    rb_str(&r->msgs, kind);
    rb_puts(&r->msgs, ",\"text\":");
    rb_str(&r->msgs, text);
    rb_put(&r->msgs, "}", 1);
    return r->msgs.oom ? rec_fail(r, POLIS_ERR_NOMEM, "recorder: out of memory") : POLIS_OK;
}

static void put_u8s(rbuf *b, const char *name, const uint8_t *v, int32_t n)
{
    rb_printf(b, ",\"%s\":[", name);
    for (int32_t a = 0; a < n; a++) rb_item(b, a != 0, v[a]);
    rb_put(b, "]", 1);
}

polis_status polis_recorder_step(polis_recorder *r)
{
    if (!r) return POLIS_ERR_INVALID;
    if (!r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE, "recorder: step outside an episode (call "
                                            "polis_recorder_begin_episode after the reset)");
    polis_env *env = r->env;
    const polis_io *io = polis_env_io(env);
    const polis_scene *s;
    polis_status st = take_scene(r, &s);
    if (st) return st;
    int64_t tick = polis_env_tick(env);
    rbuf *b = &r->line;
    rb_printf(b, "{\"t\":\"step\",\"tick\":%" PRId64 ",\"actions\":[", tick);
    for (int32_t a = 0; a < r->n_agents; a++) rb_item(b, a != 0, io->actions[a]);
    rb_puts(b, "],\"rewards\":[");
    for (int32_t a = 0; a < r->n_agents; a++) {
        if (a) rb_put(b, ",", 1);
        rb_f32(b, io->rewards[a]);
        r->returns[a] += io->rewards[a];
    }
    rb_put(b, "]", 1);
    put_u8s(b, "term", io->terminations, r->n_agents);
    put_u8s(b, "trunc", io->truncations, r->n_agents);
    put_u8s(b, "illegal", io->illegal, r->n_agents);
    if (r->events.len) {
        rb_puts(b, ",\"events\":[");
        rb_put(b, r->events.p + 1, r->events.len - 1);
        rb_put(b, "]", 1);
        r->events.len = 0;
    }
    diff(r, s);
    if (r->msgs.len) {
        rb_puts(b, ",\"msgs\":[");
        rb_put(b, r->msgs.p + 1, r->msgs.len - 1);
        rb_put(b, "]", 1);
        r->msgs.len = 0;
    }
    rb_put(b, "}", 1);
    if ((st = emit(r))) return st;
    if (tick % r->keyframe_every == 0 && (st = keyframe(r, s))) return st;
    keep_scene(r, s);
    return POLIS_OK;
}

polis_status polis_recorder_end_episode(polis_recorder *r, const char *metrics_json)
{
    if (!r) return POLIS_ERR_INVALID;
    if (!r->in_episode)
        return rec_fail(r, POLIS_ERR_STATE, "recorder: end_episode outside an episode");
    rbuf *b = &r->line;
    rb_printf(b, "{\"t\":\"end\",\"episode\":%" PRId64 ",\"tick\":%" PRId64 ",\"returns\":[",
              r->episode, polis_env_tick(r->env));
    for (int32_t a = 0; a < r->n_agents; a++) {
        if (a) rb_put(b, ",", 1);
        rb_f64(b, r->returns[a]);
    }
    rb_puts(b, "],\"metrics\":");
    if (metrics_json && *metrics_json) {
        char *m = one_line(metrics_json, strlen(metrics_json));
        if (!m) {
            b->len = 0;
            return rec_fail(r, POLIS_ERR_INVALID, "recorder: the metrics are not valid JSON");
        }
        rb_puts(b, m);
        cJSON_free(m);
    } else {
        rb_puts(b, "null");
    }
    rb_printf(b, ",\"hash\":\"%016" PRIx64 "\"}", polis_env_state_hash(r->env));
    r->in_episode = false;
    r->events.len = 0;
    return emit(r);
}
