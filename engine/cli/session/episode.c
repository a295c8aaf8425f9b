/*
 * engine/cli/session/episode.c — episodes played by a policy and the metrics they end with, shared
 * by `polis eval` (eval.c) and `polis sweep` (sweep.c).
 *
 * The metrics come from the `metrics` plugin's "metrics" rendering (plugins/metrics), read
 * once at the end of each episode and flattened: every number of the JSON object, nested
 * keys joined with '.', arrays left out (per-agent lists, the oracle's table). When the
 * scenario does not load the plugin, the commands append it to the scenario's plugins through
 * an override (polis_options.overrides), so every scenario is evaluated the same way. The
 * episode itself counts the steps and the illegal actions, and, without the plugin, the
 * returns. Only the public API (polis.h) is used.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/episode.h"
#include "util/file.h"
#include "util/util.h"

/* ---- adding the metrics plugin ----------------------------------------------------------- */

/* Whether a plugins[] entry is the metrics plugin: "metrics", {"name": "metrics"} or a path
 * whose file is metrics.so. */
static bool is_metrics(const cJSON *entry)
{
    const char *s = cJSON_IsString(entry) ? entry->valuestring : NULL;
    if (cJSON_IsObject(entry)) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(entry, "name");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(entry, "path");
        s = cJSON_IsString(n) ? n->valuestring : cJSON_IsString(p) ? p->valuestring : NULL;
    }
    if (!s) return false;
    const char *base = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
    return strcmp(base, "metrics") == 0 || strcmp(base, "metrics.so") == 0;
}

/* The scenario file as a cJSON tree, NULL when it cannot be read or parsed. */
static cJSON *read_json_file(const char *path, bool *oom)
{
    char why[256];
    char *text = cli_file_read(path, CLI_FILE_TEXT_MAX, NULL, why, sizeof why);
    if (!text) {
        *oom = strcmp(why, "out of memory") == 0;
        return NULL;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    return root;
}

/* Adds {"plugins": [..., "metrics"]} to `all` when the scenario lacks the plugin. */
static bool add_metrics_override(cJSON *all, const char *path, bool *oom)
{
    cJSON *root = read_json_file(path, oom);
    if (*oom) return false;
    cJSON *plugins = root ? cJSON_GetObjectItemCaseSensitive(root, "plugins") : NULL;
    bool ok = true;
    if (cJSON_IsObject(root) && (!plugins || cJSON_IsArray(plugins))) {
        bool has = false;
        const cJSON *it;
        cJSON_ArrayForEach(it, plugins) has = has || is_metrics(it);
        if (!has) {
            cJSON *list = plugins ? cJSON_Duplicate(plugins, true) : cJSON_CreateArray();
            cJSON *name = cJSON_CreateString("metrics");
            ok = list && name && cJSON_AddItemToArray(list, name);
            if (!ok) cJSON_Delete(name);
            if (ok && !cJSON_AddItemToObject(all, "plugins", list)) ok = false;
            if (!ok) cJSON_Delete(list);
        }
    }
    cJSON_Delete(root);
    if (!ok) *oom = true;
    return ok;
}

char *cli_eval_overrides(const char *path, const cJSON *user, bool add_metrics, bool *oom)
{
    *oom = false;
    cJSON *all = cJSON_CreateObject();
    bool ok = all != NULL;
    if (ok && add_metrics) ok = add_metrics_override(all, path, oom);
    const cJSON *it;
    cJSON_ArrayForEach(it, user) {
        cJSON *copy = ok ? cJSON_Duplicate(it, true) : NULL;
        ok = copy && cJSON_AddItemToObject(all, it->string, copy);
        if (!ok) cJSON_Delete(copy);
    }
    char *text = ok && all->child ? cJSON_PrintUnformatted(all) : NULL;
    if (!ok || (all->child && !text)) *oom = true;
    cJSON_Delete(all);
    return text;
}

const char *cli_overrides_seats(const cJSON *overrides)
{
    const cJSON *ov;
    cJSON_ArrayForEach(ov, overrides)
        if (strncmp(ov->string, "seats", 5) == 0 && (!ov->string[5] || ov->string[5] == '.'))
            return ov->string;
    return NULL;
}

bool cli_has_metrics(polis_env *env)
{
    const char *formats = polis_env_render_formats(env);
    for (const char *p = formats; (p = strstr(p, "metrics")) != NULL; p += 7)
        if ((p == formats || p[-1] == ' ') && (p[7] == '\0' || p[7] == ' ')) return true;
    return false;
}

void cli_policy_names(polis_env *env, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < polis_env_n_policies(env) && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                                polis_env_policy_name(env, i));
}

int cli_find_policy(polis_env *env, const char *cmd, const char *name, int32_t *out)
{
    *out = polis_env_policy_find(env, name);
    if (*out >= 0) return 0;
    char list[1024];
    cli_policy_names(env, list, sizeof list);
    return cli_usage(cmd, "--policy: '%s' is not a policy of this scenario (policies: %s)", name,
                     list);
}

/* ---- metrics of one episode -------------------------------------------------------------- */

/* The "metrics" rendering: every plugin that renders the format contributes one JSON
 * object, and the kernel concatenates non-"json" formats (the metrics plugin's, a Lua
 * game's own). Merges them into one object, the first plugin's value winning a name both
 * use; NULL when a piece is not an object (or out of memory). */
cJSON *cli_metrics_parse(const char *text)
{
    cJSON *all = cJSON_CreateObject();
    const char *p = text;
    while (all) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
        if (!*p) break;
        const char *end = NULL;
        cJSON *m = cJSON_ParseWithOpts(p, &end, false);
        if (!cJSON_IsObject(m) || !end) {
            cJSON_Delete(m);
            cJSON_Delete(all);
            return NULL;
        }
        for (const cJSON *it = m->child; it; it = it->next) {
            if (cJSON_GetObjectItemCaseSensitive(all, it->string)) continue;
            cJSON *dup = cJSON_Duplicate(it, true);
            if (!dup || !cJSON_AddItemToObject(all, it->string, dup)) {
                cJSON_Delete(dup);
                cJSON_Delete(m);
                cJSON_Delete(all);
                return NULL;
            }
        }
        cJSON_Delete(m);
        p = end;
    }
    return all;
}

/* Sets flat[key] (a later value replaces an earlier one, keeping its place). */
static bool put(cJSON *flat, const char *key, double v)
{
    cJSON *item = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    if (!item) return false;
    bool ok = cJSON_GetObjectItemCaseSensitive(flat, key)
                  ? cJSON_ReplaceItemInObjectCaseSensitive(flat, key, item)
                  : cJSON_AddItemToObject(flat, key, item);
    if (!ok) cJSON_Delete(item);
    return ok;
}

/* Every number (and null) of a JSON object, under dotted keys; arrays are left out, and so is
 * the plugin's own episode counter. */
static bool flatten(cJSON *flat, const cJSON *o, const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", it->string);
        if (!*prefix && strcmp(it->string, "episode") == 0) continue;
        bool ok = true;
        if (cJSON_IsNumber(it))
            ok = put(flat, key, it->valuedouble);
        else if (cJSON_IsNull(it))
            ok = put(flat, key, NAN);
        else if (cJSON_IsObject(it))
            ok = flatten(flat, it, key);
        if (!ok) return false;
    }
    return true;
}

cJSON *cli_metrics_flat(const cJSON *metrics)
{
    cJSON *flat = cJSON_CreateObject();
    if (flat && !flatten(flat, metrics, "")) {
        cJSON_Delete(flat);
        flat = NULL;
    }
    return flat;
}

void cli_episode_free(cli_episode *e)
{
    cJSON_Delete(e->metrics);
    cJSON_Delete(e->raw);
    cJSON_Delete(e->task);
    e->metrics = e->raw = e->task = NULL;
}

/* The recorder's failure as the episode's reason. */
static bool rec_failed(polis_recorder *rec, char *err, size_t err_size)
{
    snprintf(err, err_size, "--record: %s", polis_recorder_error(rec));
    return false;
}

bool cli_play_episode_by(polis_env *env, const cli_actor *actor, uint64_t seed, int64_t steps_limit,
                         bool has_metrics, bool want_raw, double *returns, polis_recorder *rec,
                         cli_episode *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    int32_t n = polis_env_n_agents(env);
    const polis_io *io = polis_env_io(env);
    if (polis_env_reset(env, seed) != POLIS_OK) {
        snprintf(err, err_size, "%s", polis_env_error(env));
        return false;
    }
    if (rec && polis_recorder_begin_episode(rec, seed) != POLIS_OK)
        return rec_failed(rec, err, err_size);
    if (actor->begin && !actor->begin(actor->ud, env, seed, err, err_size)) return false;
    memset(returns, 0, sizeof *returns * (size_t)n);
    int64_t steps = 0, illegal = 0;
    while (!polis_env_done(env) && (steps_limit == 0 || steps < steps_limit)) {
        if (!actor->act(actor->ud, env, err, err_size)) return false;
        if (polis_env_step(env) != POLIS_OK) {
            snprintf(err, err_size, "%s", polis_env_error(env));
            return false;
        }
        steps++;
        for (int32_t ag = 0; ag < n; ag++) {
            returns[ag] += io->rewards[ag];
            illegal += io->illegal[ag] != 0;
        }
        if (rec && polis_recorder_step(rec) != POLIS_OK) return rec_failed(rec, err, err_size);
    }
    out->steps = steps;
    out->hash = polis_env_state_hash(env);
    out->metrics = cJSON_CreateObject();
    const char *task = polis_env_task(env);
    if (task && !(out->task = cJSON_Parse(task))) cJSON_Delete(out->metrics), out->metrics = NULL;
    bool ok = out->metrics && put(out->metrics, "steps", (double)steps) &&
              put(out->metrics, "illegal_actions", (double)illegal);
    cJSON *m = NULL;
    if (ok && has_metrics) {
        char *text = NULL;
        if (polis_env_render(env, 0, "metrics", &text) != POLIS_OK) {
            snprintf(err, err_size, "%s", polis_env_error(env));
            cli_episode_free(out);
            return false;
        }
        m = cli_metrics_parse(text);
        polis_free(text);
        if (!m) {
            snprintf(err, err_size, "the \"metrics\" rendering is not a sequence of JSON objects");
            cli_episode_free(out);
            return false;
        }
        ok = flatten(out->metrics, m, "");
    } else if (ok) {
        double total = 0;
        for (int32_t ag = 0; ag < n; ag++) total += returns[ag];
        ok = put(out->metrics, "reward.mean", n ? total / n : 0) &&
             put(out->metrics, "reward.total", total);
    }
    /* what the players report of the episode, after the game's metrics */
    cJSON *figures = ok && actor->end ? cJSON_CreateObject() : NULL;
    if (ok && actor->end) {
        if (!figures || !actor->end(actor->ud, out->metrics, figures, err, err_size)) {
            if (!figures) snprintf(err, err_size, "out of memory");
            cJSON_Delete(figures);
            cJSON_Delete(m);
            cli_episode_free(out);
            return false;
        }
        for (cJSON *f = figures->child; ok && f; f = f->next)
            ok = put(out->metrics, f->string, cJSON_IsNumber(f) ? f->valuedouble : NAN);
    }
    if (ok && rec) { /* the end line carries the game's metrics and the players' figures */
        bool oom = false;
        cJSON *line = cli_end_metrics(m, figures, &oom);
        char *text = line ? cJSON_PrintUnformatted(line) : NULL;
        cJSON_Delete(line);
        polis_status rs =
            oom || (line && !text) ? POLIS_ERR_NOMEM : polis_recorder_end_episode(rec, text);
        cJSON_free(text);
        if (rs == POLIS_ERR_NOMEM) {
            ok = false;
        } else if (rs != POLIS_OK) {
            cJSON_Delete(figures);
            cJSON_Delete(m);
            cli_episode_free(out);
            return rec_failed(rec, err, err_size);
        }
    }
    cJSON_Delete(figures);
    if (ok && want_raw)
        out->raw = m;
    else
        cJSON_Delete(m);
    if (!ok) {
        snprintf(err, err_size, "out of memory");
        cli_episode_free(out);
    }
    return ok;
}

cJSON *cli_end_metrics(const cJSON *game, const cJSON *figures, bool *oom)
{
    *oom = false;
    bool reported = figures && figures->child;
    if (!game && !reported) return NULL;
    cJSON *o = game ? cJSON_Duplicate(game, true) : cJSON_CreateObject();
    cJSON *f = reported ? cJSON_Duplicate(figures, true) : NULL;
    if (o && reported) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, CLI_REPORTED);
        if (f && cJSON_AddItemToObject(o, CLI_REPORTED, f))
            f = NULL;
        else {
            cJSON_Delete(o);
            o = NULL;
        }
    }
    cJSON_Delete(f);
    *oom = o == NULL;
    return o;
}

/* ---- statistics ------------------------------------------------------------------------- */

/* Student's t quantile t(0.975, df): tabulated to 30 degrees of freedom, beyond that the
 * Cornish-Fisher expansion around the normal quantile (its error there is below 1e-7). */
static double t975(int64_t df)
{
    static const double table[30] = {
        12.70620, 4.30265, 3.18245, 2.77645, 2.57058, 2.44691, 2.36462, 2.30600, 2.26216, 2.22814,
        2.20099,  2.17881, 2.16037, 2.14479, 2.13145, 2.11991, 2.10982, 2.10092, 2.09302, 2.08596,
        2.07961,  2.07387, 2.06866, 2.06390, 2.05954, 2.05553, 2.05183, 2.04841, 2.04523, 2.04227};
    if (df <= 30) return table[df - 1];
    double z = 1.959963984540054, v = (double)df, z2 = z * z;
    double g1 = (z2 + 1) * z / 4;
    double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

cli_stat cli_stat_of(const double *values, int64_t count, ptrdiff_t stride)
{
    cli_stat s = {0, 0, 0, 0};
    double sum = 0;
    for (int64_t e = 0; e < count; e++) {
        double v = values[e * stride];
        if (isnan(v)) continue;
        sum += v;
        s.n++;
    }
    if (!s.n) return s;
    s.mean = sum / (double)s.n;
    double sq = 0;
    for (int64_t e = 0; e < count; e++) {
        double v = values[e * stride];
        if (!isnan(v)) sq += (v - s.mean) * (v - s.mean);
    }
    if (s.n > 1) {
        s.sd = sqrt(sq / (double)(s.n - 1));
        s.ci95 = t975(s.n - 1) * s.sd / sqrt((double)s.n);
    }
    return s;
}

/* ---- the table of metrics --------------------------------------------------------------- */

int32_t cli_table_key(cli_table *t, const char *key)
{
    for (int32_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i], key) == 0) return i;
    if (t->n_keys == t->cap_keys) {
        int32_t ncap = t->cap_keys ? t->cap_keys * 2 : 32;
        char **k = realloc(t->keys, sizeof *k * (size_t)ncap);
        double *v = k ? malloc(sizeof *v * (size_t)ncap * (size_t)t->episodes) : NULL;
        if (!v) {
            if (k) t->keys = k;
            t->oom = true;
            return -1;
        }
        t->keys = k;
        for (int64_t e = 0; e < t->episodes; e++)
            for (int32_t i = 0; i < ncap; i++)
                v[e * ncap + i] = i < t->n_keys ? t->values[e * t->cap_keys + i] : NAN;
        free(t->values);
        t->values = v;
        t->cap_keys = ncap;
    }
    if (!(t->keys[t->n_keys] = strdup(key))) {
        t->oom = true;
        return -1;
    }
    return t->n_keys++;
}

void cli_table_put(cli_table *t, int64_t episode, const char *key, double v)
{
    int32_t i = cli_table_key(t, key);
    if (i >= 0) t->values[episode * t->cap_keys + i] = v;
}

void cli_table_add(cli_table *t, int64_t episode, const cJSON *flat)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, flat)
        cli_table_put(t, episode, it->string, cJSON_IsNumber(it) ? it->valuedouble : NAN);
}

cli_stat cli_table_stat(const cli_table *t, int32_t key)
{
    return cli_stat_of(t->values + key, t->episodes, t->cap_keys);
}

void cli_table_free(cli_table *t)
{
    for (int32_t i = 0; i < t->n_keys; i++) free(t->keys[i]);
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* ---- progress ---------------------------------------------------------------------------- */

void cli_progress(FILE *f, int64_t done, int64_t total, int64_t started, double elapsed)
{
    int width = 30, filled = total ? (int)(done * width / total) : width;
    fprintf(f, "\r[%.*s%*s] %" PRId64 "/%" PRId64 " episodes", filled,
            "##############################", width - filled, "", done, total);
    if (elapsed > 0 && done > started && done < total) {
        double left = elapsed / (double)(done - started) * (double)(total - done);
        if (left < 100)
            fprintf(f, ", %.1f s left", left);
        else if (left < 6000)
            fprintf(f, ", %d min %02d s left", (int)(left / 60), (int)left % 60);
        else
            fprintf(f, ", %d h %02d min left", (int)(left / 3600), (int)(left / 60) % 60);
    }
    fputs("\033[K", f);
    fflush(f);
}

/* The actor of one policy of the env for every agent. */
static bool policy_act(void *ud, polis_env *env, char *err, size_t err_size)
{
    if (polis_env_policy_act(env, *(const int32_t *)ud, NULL, 0) == POLIS_OK) return true;
    snprintf(err, err_size, "%s", polis_env_error(env));
    return false;
}

bool cli_play_episode(polis_env *env, int32_t policy, uint64_t seed, int64_t steps_limit,
                      bool has_metrics, bool want_raw, double *returns, polis_recorder *rec,
                      cli_episode *out, char *err, size_t err_size)
{
    cli_actor actor = {.act = policy_act, .ud = &policy};
    return cli_play_episode_by(env, &actor, seed, steps_limit, has_metrics, want_raw, returns, rec,
                               out, err, err_size);
}
