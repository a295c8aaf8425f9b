/*
 * engine/cli/cmd/replay.c — `polis replay FILE`: re-simulates a recording (docs/recording.md)
 * from its header (the scenario, its overrides) and the recorded seeds and actions, and
 * compares every line the recorder writes while doing so with the recorded line, member by
 * member: the first difference is reported with its line, tick and member ("line 83: tick
 * 40: agents[2].stats.wood: recorded 3, replayed 4"). Keyframes (the full scene and the
 * state hash), the end line's hash and metrics and the header's scenario hash are therefore
 * checked, and so is every step line in between; the clients' messages are re-derived
 * against the recorded actions (check_msgs). `--tick T --render FORMAT` stops at a moment and
 * prints polis_env_render;
 * `--tick T --png OUT` draws that moment with polis_pixels_draw into a PNG, and `--video
 * OUT` draws every tick of an episode into a video (frames.c: ffmpeg, or image files).
 *
 * A line that is not JSON, a missing end line, a wrong version, a step out of order: an error
 * naming the line, exit 1. Nothing is skipped.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "session/episode.h"
#include "session/frames.h"
#include "cmd/commands.h"
#include "util/file.h"
#include "util/util.h"
#include "polis/polis.h"

/* ---- reading lines ------------------------------------------------------------------------ */

typedef struct reader {
    cli_lines *lines;
    char *buf; /* the line just read */
    int64_t line;
} reader;

/* The next line without its '\n' in r->buf: 1, 0 at the end, -1 when the last line has no
 * '\n' (cut off), -2 on an error (cli_lines_error names the line and the reason), -3 when
 * the line holds a NUL byte. */
static int next_line(reader *r)
{
    size_t len = 0;
    int got = cli_lines_next(r->lines, &r->buf, &len);
    r->line = cli_lines_number(r->lines);
    return got == 1 && memchr(r->buf, '\0', len) ? -3 : got;
}

/* ---- produced lines ------------------------------------------------------------------------ */

typedef struct produced {
    char **lines;
    int32_t head, n, cap;
    bool oom;
} produced;

static void sink(void *ud, const char *line, size_t len)
{
    produced *p = ud;
    if (p->head + p->n >= p->cap) {
        if (p->head > 0) {
            memmove(p->lines, p->lines + p->head, sizeof *p->lines * (size_t)p->n);
            p->head = 0;
        }
        if (p->n >= p->cap) {
            int32_t cap = p->cap ? p->cap * 2 : 8;
            char **l = realloc(p->lines, sizeof *l * (size_t)cap);
            if (!l) {
                p->oom = true;
                return;
            }
            p->lines = l;
            p->cap = cap;
        }
    }
    char *s = malloc(len + 1);
    if (!s) {
        p->oom = true;
        return;
    }
    memcpy(s, line, len);
    s[len] = '\0';
    if (len && s[len - 1] == '\n') s[len - 1] = '\0';
    p->lines[p->head + p->n++] = s;
}

static char *pop(produced *p)
{
    if (!p->n) return NULL;
    char *s = p->lines[p->head++];
    p->n--;
    if (!p->n) p->head = 0;
    return s;
}

/* ---- comparing ---------------------------------------------------------------------------- */

typedef struct diff {
    char path[512];
    char recorded[160], replayed[160];
} diff;

static void value_text(const cJSON *v, char *buf, size_t cap)
{
    if (!v) {
        snprintf(buf, cap, "(absent)");
        return;
    }
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        snprintf(buf, cap, "?");
        return;
    }
    if (strlen(s) >= cap)
        snprintf(buf, cap, "%.*s...", (int)cap - 4, s);
    else
        snprintf(buf, cap, "%s", s);
    cJSON_free(s);
}

/* The first difference between a and b below `path`; skip names top-level members not
 * compared. */
static bool compare(const cJSON *a, const cJSON *b, char *path, size_t plen, diff *d,
                    const char *const *skip)
{
    bool same_type = a && b && (a->type & 0xff) == (b->type & 0xff);
    if (same_type && cJSON_IsObject(a)) {
        for (int pass = 0; pass < 2; pass++) {
            const cJSON *outer = pass ? b : a, *other = pass ? a : b;
            for (const cJSON *m = outer->child; m; m = m->next) {
                bool skipped = false;
                for (const char *const *k = skip; k && *k && !skipped; k++)
                    skipped = strcmp(*k, m->string) == 0;
                if (skipped) continue;
                const cJSON *o = cJSON_GetObjectItemCaseSensitive(other, m->string);
                if (pass && o) continue; /* compared in the first pass */
                int n = snprintf(path + plen, sizeof d->path - plen, "%s%s", plen ? "." : "",
                                 m->string);
                size_t np = n < 0                                ? plen
                            : plen + (size_t)n >= sizeof d->path ? sizeof d->path - 1
                                                                 : plen + (size_t)n;
                if (!compare(pass ? o : m, pass ? m : o, path, np, d, NULL)) return false;
                path[plen] = '\0';
            }
        }
        return true;
    }
    if (same_type && cJSON_IsArray(a)) {
        int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
        const cJSON *x = a->child, *y = b->child;
        for (int i = 0; i < (na > nb ? na : nb); i++) {
            int n = snprintf(path + plen, sizeof d->path - plen, "[%d]", i);
            size_t np = n < 0                                ? plen
                        : plen + (size_t)n >= sizeof d->path ? sizeof d->path - 1
                                                             : plen + (size_t)n;
            if (!compare(x, y, path, np, d, NULL)) return false;
            path[plen] = '\0';
            if (x) x = x->next;
            if (y) y = y->next;
        }
        return true;
    }
    bool equal = same_type;
    if (equal && cJSON_IsNumber(a)) equal = a->valuedouble == b->valuedouble;
    if (equal && cJSON_IsString(a)) equal = strcmp(a->valuestring, b->valuestring) == 0;
    if (equal) return true;
    snprintf(d->path, sizeof d->path, "%s", path);
    value_text(a, d->recorded, sizeof d->recorded);
    value_text(b, d->replayed, sizeof d->replayed);
    return false;
}

/* "agents[2].stats[3]" (a keyframe) and "agents[0][1].stats.3" (a step line, whose agents
 * are [index, changes] pairs) as "agents[2].stats.wood". */
static void pretty_path(char *path, size_t cap, const cJSON *line, const cJSON *stats)
{
    int i = -1, k = -1, used = 0;
    char rest[512] = "";
    const cJSON *agents = cJSON_GetObjectItemCaseSensitive(line, "agents");
    int agent = -1;
    if (sscanf(path, "agents[%d][1].stats.%d%n", &i, &k, &used) == 2) {
        const cJSON *pair = cJSON_GetArrayItem(agents, i);
        const cJSON *idx = pair ? cJSON_GetArrayItem(pair, 0) : NULL;
        agent = cJSON_IsNumber(idx) ? idx->valueint : -1;
    } else if (sscanf(path, "agents[%d].stats[%d]%n", &i, &k, &used) == 2) {
        agent = i;
    } else if (sscanf(path, "agents[%d][1]%n", &i, &used) == 1) {
        const cJSON *pair = cJSON_GetArrayItem(agents, i);
        const cJSON *idx = pair ? cJSON_GetArrayItem(pair, 0) : NULL;
        if (cJSON_IsNumber(idx)) {
            snprintf(rest, sizeof rest, "%s", path + used);
            snprintf(path, cap, "agents[%d]%s", idx->valueint, rest);
        }
        return;
    } else {
        return;
    }
    snprintf(rest, sizeof rest, "%s", path + used);
    const cJSON *st = cJSON_GetArrayItem(stats, k);
    const cJSON *name = st ? cJSON_GetObjectItemCaseSensitive(st, "name") : NULL;
    if (agent < 0) agent = i;
    if (cJSON_IsString(name))
        snprintf(path, cap, "agents[%d].stats.%s%s", agent, name->valuestring, rest);
    else
        snprintf(path, cap, "agents[%d].stats.%d%s", agent, k, rest);
}

/* ---- the command ---------------------------------------------------------------------------- */

typedef struct replay_args {
    const char *file;
    const char *plugin_path;
    bool trust; /* --trust: load the plugin files the recording names */
    bool verify;
    bool has_tick;
    int64_t tick;
    int64_t episode;
    const char *format;
    const char *agent;
    const char *png;
    const char *video;
    int64_t fps, cell;
} replay_args;

typedef struct replay {
    const replay_args *a;
    reader r;
    polis_env *env;
    polis_recorder *rec;
    produced out;
    cJSON *header;
    const cJSON *stats; /* header.stats */
    int64_t episode;    /* the episode running, -1 before the first reset line */
    bool in_episode;
    int64_t steps;
    uint8_t *given; /* [n_agents] scratch of check_msgs: MSG_* */
    /* --png and --video */
    uint8_t *rgb;
    int32_t w, h, frame_agent;
    cli_video video;
    bool video_open;
    int64_t framed_tick; /* the tick of the last video frame, -1 before the first */
} replay;

static int fail(replay *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(replay *rp, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "polis: replay %s: line %" PRId64 ": %s\n", rp->a->file, rp->r.line, msg);
    return EXIT_ENV;
}

/* Compares the recorded line with the next line the replay wrote, which must be of type t. */
static int check_line(replay *rp, const cJSON *recorded, const char *t, const char *const *skip)
{
    if (rp->out.oom) return fail(rp, "out of memory");
    char *mine = pop(&rp->out);
    if (!mine) return fail(rp, "a \"%s\" line where the replay wrote nothing", t);
    cJSON *j = cJSON_Parse(mine);
    free(mine);
    if (!j) return fail(rp, "out of memory");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "t");
    const cJSON *tick = cJSON_GetObjectItemCaseSensitive(j, "tick");
    if (!cJSON_IsString(mt) || strcmp(mt->valuestring, t) != 0) {
        int rc = fail(rp, "a \"%s\" line where the replay wrote a \"%s\" line%s", t,
                      cJSON_IsString(mt) ? mt->valuestring : "?",
                      cJSON_IsString(mt) && strcmp(mt->valuestring, "key") == 0
                          ? " (a keyframe is missing)"
                          : "");
        cJSON_Delete(j);
        return rc;
    }
    diff d;
    char path[512] = "";
    memset(&d, 0, sizeof d);
    int rc = 0;
    if (!compare(recorded, j, path, 0, &d, skip)) {
        pretty_path(d.path, sizeof d.path, recorded, rp->stats);
        if (cJSON_IsNumber(tick))
            rc = fail(rp, "tick %" PRId64 ": %s: recorded %s, replayed %s",
                      (int64_t)tick->valuedouble, d.path, d.recorded, d.replayed);
        else
            rc = fail(rp, "%s line: %s: recorded %s, replayed %s", t, d.path, d.recorded,
                      d.replayed);
    }
    cJSON_Delete(j);
    return rc;
}

/* Whether v is a whole number in [lo, hi], checked before any conversion (a double out of an
 * integer type's range converts to nothing defined). */
static bool whole_in(const cJSON *v, double lo, double hi)
{
    return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi &&
           v->valuedouble == floor(v->valuedouble);
}

static const cJSON *member(const cJSON *o, const char *key, int type_check(const cJSON *))
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    return m && type_check(m) ? m : NULL;
}

/* Whether v holds, at any depth, an object member named "path". */
static bool names_a_path(const cJSON *v)
{
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
        if ((c->string && strcmp(c->string, "path") == 0) || names_a_path(c)) return true;
    return false;
}

/* A recording is data (docs/security.md, "Recordings"): without --trust nothing it names runs
 * as native code. A plugin its scenario names by path is loaded by its name from the plugin
 * path instead (--plugin-path, $POLIS_PLUGIN_PATH, beside libpolis, the install directory),
 * each refusal said on stderr; overrides that would set a plugin's path are refused. The
 * scenario is changed in place (the recorder is given the recorded text, so the header still
 * compares). Returns 0 or the exit status after printing why. */
/* The first member of an override object (the header's overrides, the scenario's "vary", a
 * reset line's task) that could set a plugin's file: its path goes into "plugins" and names a
 * "path", or its value holds a "path" member. NULL when none does. */
static const char *sets_plugin_path(const cJSON *members)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, members) {
        if (m->string && strstr(m->string, "plugins") &&
            (strstr(m->string, "path") || names_a_path(m)))
            return m->string;
    }
    return NULL;
}

static int untrust(replay *rp, cJSON *scenario, const cJSON *overrides)
{
    if (rp->a->trust) return 0;
    const char *key = sets_plugin_path(overrides);
    if (key)
        return fail(rp,
                    "the header's overrides set a plugin's path (\"%.200s\"): a "
                    "recording is data, and polis runs no code it names; replay with "
                    "--trust to load it",
                    key);
    /* a task distribution's draws are overrides too, played at create (its probe envs) */
    if ((key = sets_plugin_path(cJSON_GetObjectItemCaseSensitive(scenario, "vary"))))
        return fail(rp,
                    "the recorded scenario's \"vary\" draws a plugin's path (\"%.200s\"): a "
                    "recording is data, and polis runs no code it names; replay with "
                    "--trust to load it",
                    key);
    cJSON *plugins = cJSON_GetObjectItemCaseSensitive(scenario, "plugins");
    int k = 0;
    for (cJSON *p = cJSON_IsArray(plugins) ? plugins->child : NULL; p; p = p->next, k++) {
        cJSON *path = cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, "path") : NULL;
        if (!path) continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        char base[128] = "";
        if (cJSON_IsString(name)) {
            snprintf(base, sizeof base, "%s", name->valuestring);
        } else if (cJSON_IsString(path)) {
            const char *b = strrchr(path->valuestring, '/');
            snprintf(base, sizeof base, "%s", b ? b + 1 : path->valuestring);
            size_t n = strlen(base);
            if (n > 3 && strcmp(base + n - 3, ".so") == 0) base[n - 3] = '\0';
        }
        char shown[300];
        value_text(path, shown, sizeof shown);
        fprintf(stderr,
                "polis: replay %s: plugins[%d]: not loading %s, the file the recording names "
                "(a recording is data: --trust loads it); looking for '%s' on the plugin path "
                "instead\n",
                rp->a->file, k, shown, base);
        cJSON_DeleteItemFromObjectCaseSensitive(p, "path");
        if (!cJSON_IsString(name)) {
            cJSON_DeleteItemFromObjectCaseSensitive(p, "name");
            if (!cJSON_AddStringToObject(p, "name", base)) return fail(rp, "out of memory");
        }
    }
    return 0;
}

static int start_env(replay *rp)
{
    const cJSON *h = rp->header;
    const cJSON *t = member(h, "t", cJSON_IsString);
    if (!t || strcmp(t->valuestring, "header") != 0)
        return fail(rp, "the first line is not a header (\"t\": \"header\")");
    const cJSON *format = member(h, "format", cJSON_IsString);
    if (!format || strcmp(format->valuestring, "polis-recording") != 0)
        return fail(rp, "\"format\" is not \"polis-recording\"");
    const cJSON *version = member(h, "version", cJSON_IsNumber);
    if (!version) return fail(rp, "the header has no \"version\"");
    if (version->valuedouble != POLIS_RECORDING_VERSION)
        return fail(rp, "version %g is not supported (this polis reads version %d)",
                    version->valuedouble, POLIS_RECORDING_VERSION);
    const cJSON *scenario = member(h, "scenario", cJSON_IsObject);
    if (!scenario) return fail(rp, "the header has no \"scenario\" object");
    const cJSON *seed = member(h, "seed", cJSON_IsNumber);
    const cJSON *every = member(h, "keyframe_every", cJSON_IsNumber);
    if (!seed || !whole_in(every, 1, INT32_MAX))
        return fail(rp, "the header needs \"seed\" and a positive \"keyframe_every\" (1 to "
                        "2^31-1)");
    /* JSON numbers beyond 2^53 lose digits in cJSON: read the seed from its text */
    char *seed_text = cJSON_PrintUnformatted(seed);
    uint64_t seed0 = 0;
    bool seed_ok = seed_text && cli_parse_u64(seed_text, &seed0);
    cJSON_free(seed_text);
    if (!seed_ok) return fail(rp, "the header's \"seed\" is not an integer in [0, 2^64)");
    rp->stats = cJSON_GetObjectItemCaseSensitive(h, "stats");
    const cJSON *base = member(h, "base_dir", cJSON_IsString);
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(h, "overrides");
    char *scn = cJSON_PrintUnformatted(scenario);
    char *ovt = cJSON_IsObject(ov) ? cJSON_PrintUnformatted(ov) : NULL;
    cJSON *loaded = cJSON_Duplicate(scenario, true);
    int urc = loaded ? untrust(rp, loaded, ov) : fail(rp, "out of memory");
    char *load_text = urc ? NULL : cJSON_PrintUnformatted(loaded);
    cJSON_Delete(loaded);
    if (urc || !load_text || !scn) {
        cJSON_free(scn);
        cJSON_free(ovt);
        cJSON_free(load_text);
        return urc ? urc : fail(rp, "out of memory");
    }
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = rp->a->plugin_path;
    opts.base_dir = base ? base->valuestring : ".";
    opts.overrides = ovt;
    polis_error err;
    memset(&err, 0, sizeof err);
    polis_status st = polis_env_create_json(load_text, strlen(load_text), &opts, &rp->env, &err);
    cJSON_free(load_text);
    int rc = 0;
    if (st != POLIS_OK) {
        rc = fail(rp, "the recorded scenario does not load: %s", err.message);
    } else {
        polis_record_info info = {.scenario_text = scn,
                                  .scenario_len = strlen(scn),
                                  .overrides = ovt,
                                  .seed = seed0,
                                  .keyframe_every = (int32_t)every->valuedouble,
                                  .source = "replay"};
        if (polis_recorder_open_sink(sink, &rp->out, rp->env, &info, &rp->rec, &err) != POLIS_OK)
            rc = fail(rp, "%s", err.message);
    }
    cJSON_free(scn);
    cJSON_free(ovt);
    if (rc) return rc;
    rp->given = calloc((size_t)polis_env_n_agents(rp->env) + 1, 1);
    if (!rp->given) return fail(rp, "out of memory");
    /* What the game registered must be what was recorded, and the scenario the replay loaded
     * must hash to the recorded scenario_hash (FNV-1a 64 of its compact text). Not compared:
     * who wrote the file and where (the polis and ABI versions, the scenario's path and base
     * directory, the plugins' paths and versions, the policies and the source). */
    static const char *const header_skip[] = {"polis",   "abi",      "scenario_path", "base_dir",
                                              "plugins", "policies", "source",        NULL};
    return check_line(rp, h, "header", header_skip);
}

static int32_t agent_index(replay *rp)
{
    if (!rp->a->agent) return 0;
    int32_t n = polis_env_n_agents(rp->env);
    for (int32_t i = 0; i < n; i++)
        if (strcmp(polis_env_agent_name(rp->env, i), rp->a->agent) == 0) return i;
    int64_t v;
    if (cli_parse_int(rp->a->agent, 0, n - 1, &v)) return (int32_t)v;
    return -1;
}

/* The frame buffer of --png and --video, once the env exists and the episode is reset. */
static int frames_start(replay *rp)
{
    if (rp->rgb) return 0;
    int32_t agent = -1;
    if (rp->a->agent && (agent = agent_index(rp)) < 0) {
        fprintf(stderr, "polis: replay %s: --agent %s: no such agent (0..%d or a name)\n",
                rp->a->file, rp->a->agent, (int)polis_env_n_agents(rp->env) - 1);
        return EXIT_ENV;
    }
    rp->frame_agent = agent;
    if (polis_pixels_size(rp->env, agent, (int32_t)rp->a->cell, &rp->w, &rp->h)) {
        fprintf(stderr, "polis: replay %s: %s\n", rp->a->file, polis_env_error(rp->env));
        return EXIT_ENV;
    }
    rp->rgb = malloc((size_t)rp->w * (size_t)rp->h * 3);
    if (!rp->rgb) {
        fprintf(stderr, "polis: replay %s: out of memory for a %d x %d frame\n", rp->a->file,
                (int)rp->w, (int)rp->h);
        return EXIT_ENV;
    }
    return 0;
}

static int draw(replay *rp)
{
    if (polis_pixels_draw(rp->env, rp->frame_agent, (int32_t)rp->a->cell, rp->rgb,
                          (size_t)rp->w * (size_t)rp->h * 3, NULL, NULL)) {
        fprintf(stderr, "polis: replay %s: tick %" PRId64 ": %s\n", rp->a->file,
                polis_env_tick(rp->env), polis_env_error(rp->env));
        return EXIT_ENV;
    }
    return 0;
}

static int png_now(replay *rp)
{
    int rc = frames_start(rp);
    if (rc || (rc = draw(rp))) return rc;
    char err[4400];
    if (cli_frames_write_image(rp->a->png, rp->rgb, rp->w, rp->h, false, err, sizeof err)) {
        fprintf(stderr, "polis: replay %s: %s\n", rp->a->file, err);
        return EXIT_ENV;
    }
    printf("%s: tick %" PRId64 " of episode %" PRId64 ", %d x %d pixels\n", rp->a->png,
           polis_env_tick(rp->env), rp->episode, (int)rp->w, (int)rp->h);
    return 0;
}

/* --video: a frame for each new tick of the episode. */
static int video_frame(replay *rp)
{
    if (polis_env_tick(rp->env) == rp->framed_tick) return 0;
    int rc = frames_start(rp);
    if (rc) return rc;
    char err[4400];
    if (!rp->video_open) {
        bool fallback = false;
        if (cli_video_open(&rp->video, rp->a->video, rp->w, rp->h, (int32_t)rp->a->fps, &fallback,
                           err, sizeof err)) {
            fprintf(stderr, "polis: replay %s: %s\n", rp->a->file, err);
            return EXIT_ENV;
        }
        rp->video_open = true;
        if (fallback)
            fprintf(stderr,
                    "polis: replay: ffmpeg is not on PATH: writing the frames as "
                    "images into %s/ instead of %s\n",
                    rp->video.dir, rp->a->video);
    }
    if ((rc = draw(rp))) return rc;
    if (cli_video_frame(&rp->video, rp->rgb, err, sizeof err)) {
        fprintf(stderr, "polis: replay %s: %s\n", rp->a->file, err);
        return EXIT_ENV;
    }
    rp->framed_tick = polis_env_tick(rp->env);
    return 0;
}

static int render_now(replay *rp)
{
    if (rp->a->png) return png_now(rp);
    int32_t agent = agent_index(rp);
    if (agent < 0) {
        fprintf(stderr, "polis: replay %s: --agent %s: no such agent (0..%d or a name)\n",
                rp->a->file, rp->a->agent, (int)polis_env_n_agents(rp->env) - 1);
        return EXIT_ENV;
    }
    char *out = NULL;
    if (polis_env_render(rp->env, agent, rp->a->format, &out) != POLIS_OK) {
        fprintf(stderr, "polis: replay %s: %s\n", rp->a->file, polis_env_error(rp->env));
        return EXIT_ENV;
    }
    fputs(out, stdout);
    if (*out && out[strlen(out) - 1] != '\n') fputc('\n', stdout);
    polis_free(out);
    return 0;
}

/* ---- the messages of a step line ------------------------------------------------------------ */

enum { MSG_NONE = 0, MSG_ACTION, MSG_PLAN };

static const char *action_name(replay *rp, int32_t id)
{
    const char *name = polis_env_action_name(rp->env, id);
    return name ? name : "?";
}

/* Re-derives the recorded actions from the step line's "msgs" (docs/recording.md) before the
 * replay steps, as `polis serve` and the live server derived them: an "action" message is
 * parsed as its agent's action (text the parser refuses, or an action the mask forbids, was
 * played as noop) and ends the agent's plan; a "plan" message starts the plan (a command the
 * game refuses was played as noop); an agent with a running plan and no action message plays
 * the plan's next action (noop once the plan has ended). The replay env keeps the plans, as
 * the server's did. Messages of other kinds ("text") are free text and not checked. */
static int check_msgs(replay *rp, const cJSON *line, int64_t tick)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(line, "msgs");
    int32_t n = polis_env_n_agents(rp->env);
    const polis_io *io = polis_env_io(rp->env);
    memset(rp->given, MSG_NONE, (size_t)n);
    if (msgs && !cJSON_IsArray(msgs))
        return fail(rp, "tick %" PRId64 ": \"msgs\" is not an array", tick);
    int k = 0;
    for (const cJSON *m = msgs ? msgs->child : NULL; m; m = m->next, k++) {
        const cJSON *ag = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "agent") : NULL;
        const cJSON *kind = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "kind") : NULL;
        const cJSON *text = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "text") : NULL;
        if (!whole_in(ag, 0, n - 1) || !cJSON_IsString(kind) || !cJSON_IsString(text))
            return fail(rp,
                        "tick %" PRId64 ": msgs[%d]: not {\"agent\": 0..%d, \"kind\": "
                        "string, \"text\": string}",
                        tick, k, (int)n - 1);
        int32_t a = (int32_t)ag->valuedouble, got = io->actions[a];
        if (strcmp(kind->valuestring, "action") == 0) {
            rp->given[a] = MSG_ACTION;
            polis_env_plan_cancel(rp->env, a);
            int32_t id = -1;
            const char *why = NULL;
            if (polis_env_parse_action(rp->env, a, text->valuestring, &id) != POLIS_OK)
                why = "is not an action";
            else if (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)id] &&
                     !io->terminations[a] && !io->truncations[a])
                why = "is not legal at this tick";
            int32_t want = why ? 0 : id;
            if (got != want) {
                char what[160];
                if (why)
                    snprintf(what, sizeof what, "which %s (played as noop)", why);
                else
                    snprintf(what, sizeof what, "which is action %d (%s)", (int)id,
                             action_name(rp, id));
                return fail(rp,
                            "tick %" PRId64 ": msgs[%d]: agent %d sent \"%.200s\", %s, but "
                            "actions[%d] is %d (%s)",
                            tick, k, (int)a, text->valuestring, what, (int)a, (int)got,
                            action_name(rp, got));
            }
        } else if (strcmp(kind->valuestring, "plan") == 0) {
            rp->given[a] = MSG_PLAN;
            if (polis_env_plan_start(rp->env, a, text->valuestring) != POLIS_OK) {
                rp->given[a] = MSG_ACTION; /* refused: played as noop */
                if (got != 0)
                    return fail(rp,
                                "tick %" PRId64 ": msgs[%d]: agent %d's plan \"%.200s\" does "
                                "not start (%s; played as noop), but actions[%d] is %d (%s)",
                                tick, k, (int)a, text->valuestring, polis_env_error(rp->env),
                                (int)a, (int)got, action_name(rp, got));
            }
        }
    }
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(rp->header, "policies");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(rp->header, "source");
    bool live = cJSON_IsString(src) && strcmp(src->valuestring, "live") == 0;
    for (int32_t a = 0; a < n; a++) {
        const char *cmd = polis_env_plan_command(rp->env, a);
        if (rp->given[a] == MSG_ACTION || !cmd) continue;
        /* a live game's client seat asks its plan for the next action when the previous tick
         * ends (docs/clients.md, "Live games"), not just before the step as here: its plans'
         * actions are replayed as recorded, not re-derived */
        const cJSON *who = cJSON_IsArray(pol) ? cJSON_GetArrayItem(pol, a) : NULL;
        if (live && cJSON_IsString(who) && strcmp(who->valuestring, "client") == 0) continue;
        char command[256];
        snprintf(command, sizeof command, "%s", cmd);
        polis_plan_state st;
        int32_t act = 0, want = 0;
        const char *why = NULL;
        if (polis_env_plan_next(rp->env, a, &st, &act, &why) == POLIS_OK &&
            st == POLIS_PLAN_RUNNING)
            want = act;
        if (io->actions[a] != want)
            return fail(rp,
                        "tick %" PRId64 ": actions[%d]: recorded %d (%s), agent %d's plan "
                        "\"%s\" %s %d (%s)",
                        tick, (int)a, (int)io->actions[a], action_name(rp, io->actions[a]), (int)a,
                        command, st == POLIS_PLAN_RUNNING ? "chose" : "has ended: noop,", (int)want,
                        action_name(rp, want));
    }
    return 0;
}

/* The end line's "metrics" as `polis eval` writes them (the "metrics" rendering merged into
 * one object), into *out (cJSON_free it); NULL when the recorded line has none (null) or the
 * game renders no metrics (the comparison then names the difference). The recorded
 * CLI_REPORTED member (what the players reported: an LLM's tokens and cost) is carried over
 * unchecked when it is an object: the replay cannot re-derive it. */
static int end_metrics(replay *rp, const cJSON *line, char **out)
{
    *out = NULL;
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(line, "metrics");
    if (!cJSON_IsObject(rec)) return 0;
    const cJSON *reported = cJSON_GetObjectItemCaseSensitive(rec, CLI_REPORTED);
    if (!cJSON_IsObject(reported)) reported = NULL;
    cJSON *m = NULL;
    if (cli_has_metrics(rp->env)) {
        char *text = NULL;
        if (polis_env_render(rp->env, 0, "metrics", &text) != POLIS_OK)
            return fail(rp, "the metrics rendering failed: %s", polis_env_error(rp->env));
        m = cli_metrics_parse(text);
        polis_free(text);
        if (!m) return fail(rp, "the \"metrics\" rendering is not a sequence of JSON objects");
    }
    bool oom = false;
    cJSON *both = cli_end_metrics(m, reported, &oom);
    cJSON_Delete(m);
    if (oom) return fail(rp, "out of memory");
    if (!both) return 0;
    *out = cJSON_PrintUnformatted(both);
    cJSON_Delete(both);
    return *out ? 0 : fail(rp, "out of memory");
}

/* The changes of who sees whom a reset or step line records ("visibility":
 * [[observer, target, state], ...], docs/recording.md), made again before that reset or step. */
static int apply_visibility(replay *rp, const cJSON *line)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(line, "visibility");
    if (!v) return 0;
    if (!cJSON_IsArray(v)) return fail(rp, "\"visibility\" is not an array");
    int k = 0;
    for (const cJSON *e = v->child; e; e = e->next, k++) {
        const cJSON *x[3] = {NULL, NULL, NULL};
        int i = 0;
        for (const cJSON *c = cJSON_IsArray(e) ? e->child : NULL; c && i < 4; c = c->next, i++)
            if (i < 3) x[i] = c;
        /* range-checked before converting: (int32_t)1e300 is undefined */
        if (i != 3 || !whole_in(x[0], INT32_MIN, INT32_MAX) ||
            !whole_in(x[1], INT32_MIN, INT32_MAX) || !whole_in(x[2], INT32_MIN, INT32_MAX))
            return fail(rp, "visibility[%d]: not [observer, target, state] (integers)", k);
        if (polis_env_visibility_set(rp->env, (int32_t)x[0]->valuedouble,
                                     (int32_t)x[1]->valuedouble, (int32_t)x[2]->valuedouble))
            return fail(rp, "visibility[%d]: %s", k, polis_env_error(rp->env));
    }
    return 0;
}

/* One recorded line after the header. *stop is set when --tick is reached. */
static int replay_line(replay *rp, const cJSON *line, bool *stop)
{
    const cJSON *t = member(line, "t", cJSON_IsString);
    if (!t) return fail(rp, "no \"t\" member (the line type)");
    const char *type = t->valuestring;
    polis_status st;
    if (strcmp(type, "reset") == 0) {
        if (rp->in_episode)
            return fail(rp, "a reset line inside episode %" PRId64 " (its end line is missing)",
                        rp->episode);
        const cJSON *seed = member(line, "seed", cJSON_IsNumber);
        if (!seed || seed->valuedouble < 0) return fail(rp, "the reset line has no \"seed\"");
        /* JSON numbers beyond 2^53 lose digits in cJSON: read the seed from its text */
        char *txt = cJSON_PrintUnformatted(seed);
        uint64_t s = 0;
        bool ok = txt && cli_parse_u64(txt, &s);
        cJSON_free(txt);
        if (!ok) return fail(rp, "the reset seed is not an integer in [0, 2^64)");
        rp->episode++;
        rp->in_episode = true;
        int vrc = apply_visibility(rp, line);
        if (vrc) return vrc;
        /* the task the episode drew (the scenario's "vary") is played again as recorded */
        const cJSON *task = cJSON_GetObjectItemCaseSensitive(line, "task");
        if (task && !cJSON_IsObject(task))
            return fail(rp, "the reset line's \"task\" is not an object of override paths");
        const char *key = rp->a->trust ? NULL : sets_plugin_path(task);
        if (key)
            return fail(rp,
                        "the reset line's \"task\" sets a plugin's path (\"%.200s\"): a "
                        "recording is data, and polis runs no code it names; replay with "
                        "--trust to load it",
                        key);
        char *task_text = task ? cJSON_PrintUnformatted(task) : NULL;
        if (task && !task_text) return fail(rp, "out of memory");
        st = task ? polis_env_reset_task(rp->env, s, task_text) : polis_env_reset(rp->env, s);
        cJSON_free(task_text);
        if (st) return fail(rp, "reset failed: %s", polis_env_error(rp->env));
        if (polis_recorder_begin_episode(rp->rec, s))
            return fail(rp, "%s", polis_recorder_error(rp->rec));
        int rc = check_line(rp, line, "reset", NULL);
        if (rc) return rc;
        if (rp->a->has_tick && rp->a->tick == 0 && rp->episode == rp->a->episode) *stop = true;
        return 0;
    }
    if (!rp->in_episode)
        return fail(rp, "a \"%s\" line outside an episode (no reset line before it)", type);
    if (strcmp(type, "key") == 0) return check_line(rp, line, "key", NULL);
    if (strcmp(type, "step") == 0) {
        if (rp->out.n) return check_line(rp, line, "step", NULL); /* reports the missing key */
        const cJSON *tick = member(line, "tick", cJSON_IsNumber);
        int64_t want = polis_env_tick(rp->env) + 1;
        if (!tick) return fail(rp, "the step line has no \"tick\"");
        if (tick->valuedouble != (double)want)
            return fail(rp, "step tick %g is out of order (expected tick %" PRId64 ")",
                        tick->valuedouble, want);
        if (polis_env_done(rp->env))
            return fail(rp, "tick %" PRId64 ": a step after the episode ended", want);
        const cJSON *acts = member(line, "actions", cJSON_IsArray);
        int32_t n = polis_env_n_agents(rp->env), na = polis_env_n_actions(rp->env);
        if (!acts || cJSON_GetArraySize(acts) != n)
            return fail(rp, "tick %" PRId64 ": \"actions\" must be an array of %d action ids", want,
                        (int)n);
        const polis_io *io = polis_env_io(rp->env);
        int32_t i = 0;
        for (const cJSON *v = acts->child; v; v = v->next, i++) {
            if (!whole_in(v, 0, na - 1))
                return fail(rp, "tick %" PRId64 ": actions[%d] is not an action id (0..%d)", want,
                            (int)i, (int)na - 1);
            io->actions[i] = (int32_t)v->valuedouble;
        }
        int rc = check_msgs(rp, line, want);
        if (rc || (rc = apply_visibility(rp, line))) return rc;
        if ((st = polis_env_step(rp->env)))
            return fail(rp, "tick %" PRId64 ": the step failed: %s", want,
                        polis_env_error(rp->env));
        rp->steps++;
        if (polis_recorder_step(rp->rec)) return fail(rp, "%s", polis_recorder_error(rp->rec));
        /* the replay's recorder has no messages: they were checked above */
        static const char *const step_skip[] = {"msgs", NULL};
        rc = check_line(rp, line, "step", step_skip);
        if (rc) return rc;
        if (rp->a->has_tick && rp->a->tick == want && rp->episode == rp->a->episode) *stop = true;
        return 0;
    }
    if (strcmp(type, "end") == 0) {
        if (rp->out.n) return check_line(rp, line, "end", NULL);
        char *metrics = NULL;
        int rc = end_metrics(rp, line, &metrics);
        if (rc) return rc;
        st = polis_recorder_end_episode(rp->rec, metrics);
        cJSON_free(metrics);
        if (st) return fail(rp, "%s", polis_recorder_error(rp->rec));
        rp->in_episode = false;
        return check_line(rp, line, "end", NULL);
    }
    if (strcmp(type, "header") == 0) return fail(rp, "a second header line");
    return fail(rp, "unknown line type \"%s\"", type);
}

/* --video of a replay: a video file, not a directory of frames. */
static bool check_video_file(const char *s, char *why, size_t cap)
{
    if (cli_video_kind(s) == 1) return true;
    snprintf(why, cap, "'%s' is not OUT.mp4 or OUT.gif", s);
    return false;
}

#define DRAWN (CLI_BIT(CLI_OPT_RENDER) | CLI_BIT(CLI_OPT_PNG) | CLI_BIT(CLI_OPT_VIDEO))

static const cli_use USES[] = {
    {.id = CLI_OPT_VERIFY},
    {.id = CLI_OPT_TICK, .needs = CLI_BIT(CLI_OPT_RENDER) | CLI_BIT(CLI_OPT_PNG)},
    {.id = CLI_OPT_RENDER, .needs = CLI_BIT(CLI_OPT_TICK), .excludes = CLI_BIT(CLI_OPT_PNG)},
    {.id = CLI_OPT_PNG,
     .help = "with --tick: draw the scene at that moment (the map, or with\n"
             "--agent the agent's view) into a PNG file",
     .check = cli_check_png,
     .needs = CLI_BIT(CLI_OPT_TICK)},
    {.id = CLI_OPT_VIDEO,
     .help = "draw every tick of the episode into OUT.mp4 or OUT.gif (ffmpeg;\n"
             "without ffmpeg, numbered PNG files into OUT.frames/)",
     .check = check_video_file,
     .excludes = CLI_BIT(CLI_OPT_TICK) | CLI_BIT(CLI_OPT_RENDER) | CLI_BIT(CLI_OPT_PNG),
     .why = "--video draws a whole episode"},
    {.id = CLI_OPT_FPS,
     .help = "frames per second of --video (1 to 120, default 8)",
     .def = "8",
     .needs = CLI_BIT(CLI_OPT_VIDEO)},
    {.id = CLI_OPT_CELL,
     .help = "pixels per cell of --png and --video (1 to 64, default 16)",
     .def = "16",
     .needs = CLI_BIT(CLI_OPT_PNG) | CLI_BIT(CLI_OPT_VIDEO)},
    {.id = CLI_OPT_AGENT,
     .help = "the agent to render, an id or a name (default 0; for --png and\n"
             "--video the whole map unless given)",
     .needs = DRAWN},
    {.id = CLI_OPT_EPISODE, .def = "0"},
    {.id = CLI_OPT_PLUGIN_PATH},
    {.id = CLI_OPT_TRUST},
};

static int replay_main(cli_args *args);

const cli_command CLI_CMD_REPLAY = {
    .name = "replay",
    .args = "FILE",
    .summary = "check a recording (--record) by re-simulating it; show a tick",
    .usage =
        "replay FILE [--verify] [--tick T --render FORMAT [--agent A] [--episode E]]\n"
        "       polis replay FILE --tick T --png OUT.png [--agent A] [--cell PX] [--episode E]\n"
        "       polis replay FILE --video OUT.mp4|OUT.gif [--agent A] [--fps N] [--cell PX]\n"
        "                                                 [--episode E]",
    .about =
        "Re-simulates a recording made with --record (docs/recording.md) from its header\n"
        "(scenario, overrides) and its recorded seeds and actions, and checks every line the\n"
        "recording holds against the replay: the header (the game's looks, the scenario and its\n"
        "hash), each step (rewards, flags, events, scene changes, and the clients' messages\n"
        "against the actions), each keyframe (the whole scene and the state hash) and each end\n"
        "line (returns, metrics, hash). The first difference is reported with its line, tick and\n"
        "member, and the exit status is 1. docs/recording.md lists what is compared.\n",
    CLI_USES(USES),
    .notes = "Exit status: 0 the replay matches, 1 it differs or the file is bad, 2 bad usage.\n",
    .pos_name = {"FILE"},
    .pos_what = {"a recording made with --record"},
    .n_pos = 1,
    .n_required = 1,
    .run = replay_main,
};

static int replay_main(cli_args *args)
{
    replay_args a = {
        .file = args->pos[0],
        .plugin_path = cli_text(args, CLI_OPT_PLUGIN_PATH),
        .trust = cli_has(args, CLI_OPT_TRUST),
        .verify = cli_has(args, CLI_OPT_VERIFY),
        .has_tick = cli_has(args, CLI_OPT_TICK),
        .tick = cli_num(args, CLI_OPT_TICK),
        .episode = cli_num(args, CLI_OPT_EPISODE),
        .format = cli_text(args, CLI_OPT_RENDER),
        .agent = cli_text(args, CLI_OPT_AGENT),
        .png = cli_text(args, CLI_OPT_PNG),
        .video = cli_text(args, CLI_OPT_VIDEO),
        .fps = cli_num(args, CLI_OPT_FPS),
        .cell = cli_num(args, CLI_OPT_CELL),
    };
    if (a.video) a.verify = false;
    if (!a.has_tick && !a.video) a.verify = true;
    int rc;
    replay rp;
    memset(&rp, 0, sizeof rp);
    rp.a = &a;
    rp.episode = -1;
    rp.framed_tick = -1;
    char why[512];
    rp.r.lines = cli_lines_open(a.file, CLI_RECORDING_MAX_LINE, why, sizeof why);
    if (!rp.r.lines) {
        fprintf(stderr, "polis: replay: %s: %s\n", a.file, why);
        return EXIT_ENV;
    }
    bool stop = false;
    int64_t episodes = 0;
    for (;;) {
        int got = next_line(&rp.r);
        if (got == -2) {
            fprintf(stderr, "polis: replay %s: %s\n", a.file, cli_lines_error(rp.r.lines));
            rc = EXIT_ENV;
            break;
        }
        if (got == -3) {
            rc = fail(&rp, "a NUL byte inside the line: not JSON text");
            break;
        }
        if (got == -1) {
            rc = fail(&rp, "the line is cut off (no newline at its end): the file is truncated");
            break;
        }
        if (got == 0) {
            if (rp.r.line == 0) {
                rc = fail(&rp, "the file is empty (no header)");
            } else if (rp.in_episode) {
                rc = fail(&rp,
                          "the file ends here, inside episode %" PRId64 " (no end line): "
                          "it is truncated",
                          rp.episode);
            } else if (rp.episode < 0) {
                rc = fail(&rp, "the file has a header but no episode");
            } else if (a.has_tick) {
                rc = fail(&rp, "episode %" PRId64 " has no tick %" PRId64 " in this recording",
                          a.episode, a.tick);
            } else if (a.video) {
                rc = fail(&rp,
                          "there is no episode %" PRId64 " in this recording (%" PRId64
                          " episode%s)",
                          a.episode, rp.episode + 1, rp.episode == 0 ? "" : "s");
            }
            break;
        }
        cJSON *line = cJSON_Parse(rp.r.buf);
        if (!line || !cJSON_IsObject(line)) {
            const char *at = line ? NULL : cJSON_GetErrorPtr();
            rc = at && at >= rp.r.buf && at <= rp.r.buf + strlen(rp.r.buf)
                     ? fail(&rp, "not a JSON object (bad JSON at column %d)",
                            (int)(at - rp.r.buf) + 1)
                     : fail(&rp, "not a JSON object");
            cJSON_Delete(line);
            break;
        }
        if (rp.r.line == 1) {
            rp.header = line;
            if ((rc = start_env(&rp))) break;
            continue;
        }
        bool was_in = rp.in_episode;
        rc = replay_line(&rp, line, &stop);
        cJSON_Delete(line);
        if (rc) break;
        if (was_in && !rp.in_episode) episodes++;
        if (a.video && rp.episode == a.episode) {
            if (rp.in_episode && (rc = video_frame(&rp))) break;
            if (was_in && !rp.in_episode) {
                char err[4400];
                rc = cli_video_close(&rp.video, err, sizeof err);
                rp.video_open = false;
                if (rc) {
                    fprintf(stderr, "polis: replay %s: %s\n", a.file, err);
                    rc = EXIT_ENV;
                } else if (rp.video.dir[0]) {
                    printf("%s/: %" PRId64 " frames of episode %" PRId64 ", %d x %d pixels "
                           "(no ffmpeg: images, not %s)\n",
                           rp.video.dir, rp.video.frames, a.episode, (int)rp.w, (int)rp.h, a.video);
                } else {
                    printf("%s: %" PRId64 " frames of episode %" PRId64 ", %d x %d pixels at "
                           "%d fps\n",
                           a.video, rp.video.frames, a.episode, (int)rp.w, (int)rp.h, (int)a.fps);
                }
                stop = true;
                break;
            }
        }
        if (stop) {
            rc = render_now(&rp);
            break;
        }
    }
    if (rp.video_open) {
        char err[4400];
        cli_video_close(&rp.video, err, sizeof err);
    }
    free(rp.rgb);
    free(rp.given);
    if (!rc && !stop)
        printf("%s: replay matches: %" PRId64 " episode%s, %" PRId64 " steps, every keyframe "
               "and final hash checked\n",
               a.file, episodes, episodes == 1 ? "" : "s", rp.steps);
    polis_recorder_close(rp.rec);
    if (rp.env) polis_env_destroy(rp.env);
    cJSON_Delete(rp.header);
    for (char *s; (s = pop(&rp.out));) free(s);
    free(rp.out.lines);
    cli_lines_close(rp.r.lines);
    return rc;
}
