/*
 * cfg.c — one reader for two sources of configuration: the scenario's parameters (read
 * through the host's json_* accessors, whose errors carry the scenario's JSON path) and
 * AdaSociety's own files (parsed here with cJSON, because they repeat "__COMMENT__" keys,
 * which the scenario parser refuses). The rest of the ruleset reads soc_node values and
 * never knows which one it has, so AdaSociety files and polis scenarios share one parser.
 *
 * AdaSociety dialect (spec §2.1): a key named "__COMMENT__" is ignored wherever it is; a
 * repeated key means its last occurrence; unknown keys are logged and ignored, as the
 * original ignores them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char COMMENT[] = "__COMMENT__";

soc_node soc_node_params(soc *s, const polis_json *pj)
{
    (void)s;
    soc_node n;
    memset(&n, 0, sizeof n);
    n.pj = pj;
    return n;
}

soc_node soc_node_file(const cJSON *cj, const char *file)
{
    soc_node n;
    memset(&n, 0, sizeof n);
    n.cj = cj;
    n.file = file;
    n.ada = true;
    return n;
}

static const char *path_of(soc *s, const soc_node *n)
{
    return n->pj ? s->h->json_path(n->pj) : n->path;
}

static bool plain_key(const char *k)
{
    if (!*k) return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '_' || *k == '-'))
            return false;
    return true;
}

/* Paths longer than the buffer are cut; they only ever feed messages. */
static void path_step(char *dst, size_t cap, const char *base, const char *key, int32_t index)
{
    int w;
    if (key && plain_key(key))
        w = snprintf(dst, cap, "%s%s%s", base, *base ? "." : "", key);
    else if (key)
        w = snprintf(dst, cap, "%s[\"%s\"]", base, key);
    else
        w = snprintf(dst, cap, "%s[%d]", base, (int)index);
    if (w < 0) dst[0] = '\0';
}

/* A member of an AdaSociety object counts when it is not a comment and no later member
 * repeats its key (the last occurrence wins, as in Python). */
static bool effective(const cJSON *c)
{
    if (!c->string || strcmp(c->string, COMMENT) == 0) return false;
    for (const cJSON *d = c->next; d; d = d->next)
        if (d->string && strcmp(d->string, c->string) == 0) return false;
    return true;
}

static const cJSON *file_child(const cJSON *j, int32_t i)
{
    if (!j || i < 0) return NULL;
    if (cJSON_IsArray(j)) return cJSON_GetArrayItem(j, i);
    if (!cJSON_IsObject(j)) return NULL;
    for (const cJSON *c = j->child; c; c = c->next)
        if (effective(c) && i-- == 0) return c;
    return NULL;
}

int soc_kind(soc *s, const soc_node *n)
{
    if (n->pj) return s->h->json_kind(n->pj);
    const cJSON *j = n->cj;
    if (!j) return -1;
    if (cJSON_IsNull(j)) return 0;
    if (cJSON_IsBool(j)) return 1;
    if (cJSON_IsNumber(j)) return 2;
    if (cJSON_IsString(j)) return 3;
    if (cJSON_IsArray(j)) return 4;
    if (cJSON_IsObject(j)) return 5;
    return -1;
}

int32_t soc_len(soc *s, const soc_node *n)
{
    if (n->pj) return s->h->json_len(n->pj);
    const cJSON *j = n->cj;
    if (!j) return 0;
    int32_t k = 0;
    if (cJSON_IsArray(j)) {
        for (const cJSON *c = j->child; c; c = c->next) k++;
    } else if (cJSON_IsObject(j)) {
        for (const cJSON *c = j->child; c; c = c->next)
            if (effective(c)) k++;
    }
    return k;
}

soc_node soc_at(soc *s, const soc_node *n, int32_t i)
{
    soc_node c = *n;
    if (n->pj) {
        c.pj = s->h->json_at(s->ctx, n->pj, i);
        return c;
    }
    c.cj = file_child(n->cj, i);
    if (n->cj && cJSON_IsObject(n->cj))
        path_step(c.path, sizeof c.path, n->path, c.cj ? c.cj->string : "?", 0);
    else
        path_step(c.path, sizeof c.path, n->path, NULL, i);
    return c;
}

soc_node soc_get(soc *s, const soc_node *n, const char *key)
{
    soc_node c = *n;
    if (n->pj) {
        /* the host's json_get answers a NULL key with a missing node too */
        c.pj = s->h->json_get(s->ctx, n->pj, key);
        return c;
    }
    c.cj = NULL;
    if (!key) {
        /* No key is no member: a missing node, never a string comparison with NULL. */
        path_step(c.path, sizeof c.path, n->path, "?", 0);
        return c;
    }
    if (n->cj && cJSON_IsObject(n->cj) && strcmp(key, COMMENT) != 0)
        for (const cJSON *m = n->cj->child; m; m = m->next)
            if (m->string && strcmp(m->string, key) == 0) c.cj = m;
    path_step(c.path, sizeof c.path, n->path, key, 0);
    return c;
}

const char *soc_key(soc *s, const soc_node *n, int32_t i)
{
    if (n->pj) return s->h->json_key(n->pj, i);
    const cJSON *c = n->cj && cJSON_IsObject(n->cj) ? file_child(n->cj, i) : NULL;
    return c ? c->string : NULL;
}

static polis_status vfail(soc *s, const soc_node *n, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *path = path_of(s, n);
    if (n->pj)
        s->h->error(s->ctx, "%s: %s", *path ? path : "params", msg);
    else if (*path)
        s->h->error(s->ctx, "%s: %s: %s", n->file, path, msg);
    else
        s->h->error(s->ctx, "%s: %s", n->file, msg);
    return POLIS_ERR_CONFIG;
}

polis_status soc_fail(soc *s, const soc_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    polis_status st = vfail(s, n, fmt, ap);
    va_end(ap);
    return st;
}

/* The offending value, compact and cut, for messages about AdaSociety files. */
static void show(const cJSON *j, char *buf, size_t cap)
{
    if (!j) {
        snprintf(buf, cap, "nothing");
        return;
    }
    char *txt = cJSON_PrintUnformatted(j);
    if (!txt) {
        snprintf(buf, cap, "a value");
        return;
    }
    if (strlen(txt) > 60)
        snprintf(buf, cap, "%.60s...", txt);
    else
        snprintf(buf, cap, "%s", txt);
    cJSON_free(txt);
}

static polis_status mismatch(soc *s, const soc_node *n, const char *want)
{
    if (!n->cj) return soc_fail(s, n, "missing (expected %s)", want);
    char got[80];
    show(n->cj, got, sizeof got);
    return soc_fail(s, n, "expected %s, got %s", want, got);
}

polis_status soc_int(soc *s, const soc_node *n, int64_t lo, int64_t hi, int64_t *out)
{
    if (n->pj) {
        if (s->h->json_kind(n->pj) == -1)
            return soc_fail(s, n, "missing (expected an integer in [%lld, %lld])", (long long)lo,
                            (long long)hi);
        return s->h->json_int(s->ctx, n->pj, lo, hi, out);
    }
    char want[96];
    snprintf(want, sizeof want, "integer in [%lld, %lld]", (long long)lo, (long long)hi);
    const cJSON *j = n->cj;
    if (!cJSON_IsNumber(j)) return mismatch(s, n, want);
    double d = j->valuedouble;
    if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d)
        return mismatch(s, n, want);
    *out = (int64_t)d;
    return POLIS_OK;
}

polis_status soc_double(soc *s, const soc_node *n, double lo, double hi, double *out)
{
    if (n->pj) {
        if (s->h->json_kind(n->pj) == -1)
            return soc_fail(s, n, "missing (expected a number in [%g, %g])", lo, hi);
        return s->h->json_double(s->ctx, n->pj, lo, hi, out);
    }
    char want[96];
    snprintf(want, sizeof want, "number in [%g, %g]", lo, hi);
    const cJSON *j = n->cj;
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= lo && j->valuedouble <= hi))
        return mismatch(s, n, want);
    *out = j->valuedouble;
    return POLIS_OK;
}

polis_status soc_string(soc *s, const soc_node *n, const char **out)
{
    if (n->pj) {
        if (s->h->json_kind(n->pj) == -1) return soc_fail(s, n, "missing (expected a string)");
        return s->h->json_string(s->ctx, n->pj, out);
    }
    if (!cJSON_IsString(n->cj)) return mismatch(s, n, "string");
    *out = n->cj->valuestring;
    return POLIS_OK;
}

polis_status soc_bool(soc *s, const soc_node *n, bool *out)
{
    if (n->pj) {
        if (s->h->json_kind(n->pj) == -1) return soc_fail(s, n, "missing (expected a boolean)");
        return s->h->json_bool(s->ctx, n->pj, out);
    }
    if (!cJSON_IsBool(n->cj)) return mismatch(s, n, "true or false");
    *out = cJSON_IsTrue(n->cj);
    return POLIS_OK;
}

polis_status soc_want_object(soc *s, const soc_node *n)
{
    int k = soc_kind(s, n);
    if (k == 5) return POLIS_OK;
    if (k == -2) return POLIS_ERR_NOMEM; /* the host's node for no memory */
    if (k == -1) return soc_fail(s, n, "missing (expected an object)");
    if (n->pj) return soc_fail(s, n, "expected an object");
    return mismatch(s, n, "an object");
}

polis_status soc_check_keys(soc *s, const soc_node *n, const char *const *keys)
{
    /* Keys are only read from an object: an array (or anything else) where an object belongs
     * is an error here, so no caller can be handed a NULL key name. */
    polis_status st = soc_want_object(s, n);
    if (st) return st;
    int32_t len = soc_len(s, n);
    for (int32_t i = 0; i < len; i++) {
        const char *k = soc_key(s, n, i);
        if (!k) return soc_fail(s, n, "member %d has no key", (int)i);
        bool known = false;
        for (const char *const *q = keys; *q && !known; q++) known = strcmp(*q, k) == 0;
        if (known) continue;
        soc_node c = soc_at(s, n, i);
        char list[512];
        size_t used = 0;
        list[0] = '\0';
        for (const char *const *q = keys; *q; q++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *q);
            if (w < 0 || (size_t)w >= sizeof list - used) break;
            used += (size_t)w;
        }
        if (n->ada) {
            s->h->log(s->ctx, "%s: %s: ignoring unknown key", n->file, c.path);
            continue;
        }
        return soc_fail(s, &c, "unknown key (expected one of %s)", list);
    }
    return POLIS_OK;
}

/* ---- files ------------------------------------------------------------------------------- */

polis_status soc_read_file(soc *s, const char *path, char **out, size_t *len, const char **why)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = strerror(errno);
        return POLIS_ERR_IO;
    }
    struct stat sb;
    *why = fstat(fd, &sb) != 0                   ? strerror(errno)
           : S_ISDIR(sb.st_mode)                 ? "not a regular file (a directory)"
           : S_ISFIFO(sb.st_mode)                ? "not a regular file (a FIFO)"
           : !S_ISREG(sb.st_mode)                ? "not a regular file (a device or socket)"
           : (uint64_t)sb.st_size > SOC_FILE_MAX ? "larger than the limit of 67108864 bytes"
                                                 : NULL;
    if (*why) {
        close(fd);
        return POLIS_ERR_IO;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        *why = strerror(errno);
        close(fd);
        return POLIS_ERR_IO;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    polis_status st = POLIS_OK;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *nb = soc_heap(s, ncap);
            if (!nb) {
                st = POLIS_ERR_NOMEM;
                break;
            }
            if (buf) memcpy(nb, buf, n);
            soc_heap_free(s, buf, cap);
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    if (st == POLIS_OK && ferror(f)) {
        st = POLIS_ERR_IO;
        *why = "a read error";
    }
    fclose(f);
    if (st != POLIS_OK) {
        soc_heap_free(s, buf, cap);
        return st;
    }
    /* Hand back exactly len + 1 bytes, so the caller frees what it knows the size of. */
    char *exact = soc_heap(s, n + 1);
    if (!exact) {
        soc_heap_free(s, buf, cap);
        return POLIS_ERR_NOMEM;
    }
    memcpy(exact, buf, n);
    exact[n] = '\0';
    soc_heap_free(s, buf, cap);
    *out = exact;
    *len = n;
    return POLIS_OK;
}

static polis_status parse_file(soc *s, const char *path, cJSON **out)
{
    char *text;
    size_t len;
    const char *why = NULL;
    polis_status st = soc_read_file(s, path, &text, &len, &why);
    if (st == POLIS_ERR_NOMEM) {
        s->h->error(s->ctx, "out of memory");
        return st;
    }
    if (st != POLIS_OK) {
        s->h->error(s->ctx, "%s: cannot read the file: %s", path, why);
        return POLIS_ERR_IO;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j) {
        int line = 1, col = 1;
        const char *stop = end && end >= text && end <= text + len ? end : text;
        for (const char *c = text; c < stop; c++) {
            if (*c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        s->h->error(s->ctx, "%s:%d:%d: invalid JSON", path, line, col);
        soc_heap_free(s, text, len + 1);
        return POLIS_ERR_CONFIG;
    }
    soc_heap_free(s, text, len + 1);
    *out = j;
    return POLIS_OK;
}

static bool readable(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fclose(f);
    return true;
}

/* AdaSociety's paths are relative to its repository root (the process's working directory
 * there). Tried in order: the path as written (absolute, or relative to the working
 * directory), then relative to the main file's directory and each of its ancestors, so a
 * copied AdaSociety config tree works from wherever it lies. */
static const char *resolve(soc *s, const char *main_path, const char *p)
{
    if (readable(p) || p[0] == '/') return soc_strdup(s, p);
    size_t n = strlen(main_path);
    char *dir = soc_alloc(s, n + 1);
    if (!dir) return NULL;
    memcpy(dir, main_path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) return soc_strdup(s, p);
    *slash = '\0';
    for (;;) {
        size_t m = strlen(dir) + 1 + strlen(p) + 1;
        char *cand = soc_alloc(s, m);
        if (!cand) return NULL;
        snprintf(cand, m, "%s/%s", dir, p);
        if (readable(cand)) return cand;
        slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = '\0';
        if (!*dir) break;
    }
    return soc_strdup(s, p);
}

polis_status soc_load_adasociety(soc *s, const char *main_path)
{
    s->ada_main_path = soc_strdup(s, main_path);
    if (!s->ada_main_path) return POLIS_ERR_NOMEM;
    polis_status st = parse_file(s, main_path, &s->ada_main);
    if (st) return st;
    soc_node m = soc_node_file(s->ada_main, s->ada_main_path);
    if ((st = soc_want_object(s, &m))) return st;
    static const char *const keys[] = {"task", "render", "job", "resource", "event", NULL};
    if ((st = soc_check_keys(s, &m, keys))) return st;
    struct {
        const char *key;
        cJSON **tree;
        const char **path;
    } files[] = {{"task", &s->ada_task, &s->ada_task_path},
                 {"job", &s->ada_job, &s->ada_job_path},
                 {"resource", &s->ada_resource, &s->ada_resource_path},
                 {"event", &s->ada_event, &s->ada_event_path}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        soc_node f = soc_get(s, &m, files[i].key);
        if (soc_kind(s, &f) == -1) {
            if (i == 0) return soc_fail(s, &m, "missing \"task\" (the task file)");
            continue; /* without it, the built-in table of that kind is used */
        }
        const char *p;
        if ((st = soc_string(s, &f, &p))) return st;
        const char *full = resolve(s, main_path, p);
        if (!full) return POLIS_ERR_NOMEM;
        if (!readable(full))
            return soc_fail(s, &f,
                            "cannot read \"%s\" (tried it relative to the working "
                            "directory and to %s and its parent directories)",
                            p, main_path);
        *files[i].path = full;
        if ((st = parse_file(s, full, files[i].tree))) return st;
    }
    return POLIS_OK;
}

polis_status soc_parse_json_file(soc *s, const char *path, cJSON **out)
{
    return parse_file(s, path, out);
}

const char *soc_resolve_ada_path(soc *s, const char *p) { return resolve(s, s->ada_main_path, p); }

void soc_free_adasociety(soc *s)
{
    cJSON **trees[] = {&s->ada_main,     &s->ada_task,  &s->ada_job,
                       &s->ada_resource, &s->ada_event, &s->jobs_file};
    for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++) {
        cJSON_Delete(*trees[i]);
        *trees[i] = NULL;
    }
}
