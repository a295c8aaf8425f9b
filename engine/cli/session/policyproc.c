/*
 * engine/cli/session/policyproc.c — a policy process speaking the seat protocol (policyproc.h,
 * docs/policies.md).
 *
 * The process's stdin and stdout are one end of a Unix socket pair, the other end is ours:
 * writes use MSG_NOSIGNAL, so a process that died is an EPIPE error here rather than a SIGPIPE
 * that would end the whole program, and every read and write waits in poll() with the
 * process's timeout. Its stderr is ours: what it prints there reaches the user unchanged.
 *
 * The buffers of a tick (the flat observation rows, the masks, the request line and the
 * reply line) are allocated when the process starts, sized for every agent at once, so a tick
 * allocates nothing but the reply's parse.
 */
#define _GNU_SOURCE /* pipe2-style SOCK_CLOEXEC, environ */
#include "session/policyproc.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

extern char **environ;

/* The most a reply line may hold: a number or a short text per seat, and an error message. */
#define REPLY_MAX (64 * 1024)

typedef struct field {
    polis_dtype dtype;
    size_t offset, count; /* bytes into the agent's record (or the shared buffer); elements */
} field;

struct cli_policyproc {
    char label[256];
    char name[256];
    pid_t pid;
    int fd;
    int timeout_ms;
    bool exited; /* reaped */
    int status;
    polis_env *env;
    const polis_io *io;
    int32_t n_agents, n_actions;
    int32_t n_fields;
    field *fields;
    size_t dim; /* floats per agent */
    bool want_flat, want_text, want_shared;
    bool reports;  /* its hello said "stats": true: asked for its figures at episodes' ends */
    float *obs;    /* [n_agents][dim] */
    uint8_t *mask; /* [n_agents][n_actions] */
    char *head;    /* the request line */
    size_t head_cap;
    char *line; /* the reply being read: [REPLY_MAX + 1] */
    size_t line_len,
        line_have; /* bytes of the current line; bytes read in all (a next line's start) */
    int32_t *sent; /* the seats of the last send */
    int32_t n_sent;
    bool awaiting; /* a request was sent and its reply not read */

    /* the env's shared fields (seat protocol revision 1), sent to a process that asks */
    size_t shared_size; /* bytes of the env's shared buffer (0: no shared fields) */
    field *shared;      /* offsets into the shared buffer */
    int32_t n_shared;
    uint8_t *shared_le; /* a big-endian host's little-endian copy of the buffer, else NULL */
};

/* ---- the process ------------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reaps the process if it has exited (waiting up to wait_ms for it). */
static void reap(cli_policyproc *p, int wait_ms)
{
    double until = now_ms() + wait_ms;
    while (!p->exited) {
        pid_t r = waitpid(p->pid, &p->status, WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR)) {
            p->exited = true;
            break;
        }
        if (now_ms() >= until) break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* "exited with status 1", "was killed by signal 9 (Killed)", or "is still running". */
static void fate(cli_policyproc *p, char *buf, size_t cap)
{
    reap(p, 500);
    if (!p->exited)
        snprintf(buf, cap, "is still running");
    else if (WIFEXITED(p->status))
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(p->status),
                 strsignal(WTERMSIG(p->status)));
    else
        snprintf(buf, cap, "ended");
}

static bool fail(cli_policyproc *p, char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(cli_policyproc *p, char *err, size_t cap, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, cap, "the policy process %s (pid %d) %s", p->label, (int)p->pid, what);
    return false;
}

static bool write_all(cli_policyproc *p, const void *buf, size_t len, char *err, size_t cap)
{
    const char *b = buf;
    double until = now_ms() + p->timeout_ms;
    while (len > 0) {
        struct pollfd pf = {.fd = p->fd, .events = POLLOUT};
        int left = (int)(until - now_ms());
        if (left < 0) left = 0;
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0)
            return fail(p, err, cap, "took no input for %.3g s (the policy timeout)",
                        p->timeout_ms / 1e3);
        ssize_t w = send(p->fd, b, len, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            char how[128];
            fate(p, how, sizeof how);
            return fail(p, err, cap, "%s: its input is closed (%s)", how, strerror(errno));
        }
        b += w;
        len -= (size_t)w;
    }
    return true;
}

/* Reads one reply line into p->line (NUL-terminated, without its newline). */
static bool read_line(cli_policyproc *p, char *err, size_t cap)
{
    /* drop the line read last time, keep what followed it */
    if (p->line_len) {
        size_t rest = p->line_have - p->line_len;
        memmove(p->line, p->line + p->line_len, rest);
        p->line_have = rest;
        p->line_len = 0;
    }
    double until = now_ms() + p->timeout_ms;
    for (;;) {
        char *nl = memchr(p->line, '\n', p->line_have);
        if (nl) {
            *nl = '\0';
            p->line_len = (size_t)(nl - p->line) + 1;
            return true;
        }
        if (p->line_have >= REPLY_MAX)
            return fail(p, err, cap, "sent a reply line longer than %d bytes", REPLY_MAX);
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        int left = (int)(until - now_ms());
        if (left < 0) left = 0;
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0)
            return fail(p, err, cap, "did not answer within %.3g s (the policy timeout)",
                        p->timeout_ms / 1e3);
        ssize_t n = recv(p->fd, p->line + p->line_have, REPLY_MAX - p->line_have, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) {
            char how[128];
            fate(p, how, sizeof how);
            return fail(p, err, cap, "%s without answering%s", how,
                        p->line_have ? " (a partial line was left)" : "");
        }
        p->line_have += (size_t)n;
    }
}

/* The reply as an object with "ok": true, or NULL with the reason in err. */
static cJSON *read_reply(cli_policyproc *p, const char *op, char *err, size_t cap)
{
    if (!read_line(p, err, cap)) return NULL;
    cJSON *r = cJSON_Parse(p->line);
    if (!cJSON_IsObject(r)) {
        cJSON_Delete(r);
        fail(p, err, cap, "answered %s with a line that is not a JSON object: \"%.120s\"", op,
             p->line);
        return NULL;
    }
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(r, "ok");
    if (!cJSON_IsTrue(ok)) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
        fail(p, err, cap, "refused %s: %s", op,
             cJSON_IsString(e) ? e->valuestring : "(no \"error\" given)");
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

const char *cli_python(void)
{
    const char *py = getenv("POLIS_PYTHON");
    return py && *py ? py : "python3";
}

char **cli_python_env(char *pythonpath, size_t cap)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **envp = calloc(n + 2, sizeof *envp);
    if (!envp) return NULL;
    size_t k = 0;
    const char *old = getenv("PYTHONPATH");
#ifdef POLIS_CLI_SDK_PYTHON_DIR
    if (access(POLIS_CLI_SDK_PYTHON_DIR "/polis/rl/seat.py", R_OK) == 0)
        snprintf(pythonpath, cap, "PYTHONPATH=%s%s%s", POLIS_CLI_SDK_PYTHON_DIR,
                 old && *old ? ":" : "", old && *old ? old : "");
    else
#endif
        pythonpath[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!pythonpath[0] || strncmp(environ[i], "PYTHONPATH=", 11) != 0) envp[k++] = environ[i];
    if (pythonpath[0]) envp[k++] = pythonpath;
    envp[k] = NULL;
    return envp;
}

/* The layout of the env's per-agent fields (shared: false) or shared fields into a new array
 * of *n (NULL when memory runs out); *elements (may be NULL) receives their elements. */
static field *read_fields(polis_env *env, bool shared, int32_t *n, size_t *elements)
{
    *n = shared ? polis_env_n_shared_fields(env) : polis_env_n_obs_fields(env);
    field *out = calloc((size_t)*n + 1, sizeof *out);
    size_t total = 0;
    for (int32_t i = 0; out && i < *n; i++) {
        polis_obs_field f;
        if (shared)
            polis_env_shared_field(env, i, &f);
        else
            polis_env_obs_field(env, i, &f);
        out[i] = (field){
            .dtype = f.dtype, .offset = f.offset, .count = f.nbytes / polis_dtype_size(f.dtype)};
        total += out[i].count;
    }
    if (elements) *elements = total;
    return out;
}

static bool setup_layout(cli_policyproc *p, char *err, size_t cap)
{
    p->fields = read_fields(p->env, false, &p->n_fields, &p->dim);
    p->shared = read_fields(p->env, true, &p->n_shared, NULL);
    if (!p->fields || !p->shared) return fail(p, err, cap, "could not be set up: out of memory");
    polis_env_shared_obs(p->env, &p->shared_size);
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1 && !(p->shared_le = calloc(p->shared_size + 1, 1)))
        return fail(p, err, cap, "could not be set up: out of memory");
    size_t n = (size_t)p->n_agents;
    p->obs = calloc(n * p->dim + 1, sizeof *p->obs);
    p->mask = calloc(n * (size_t)p->n_actions + 1, 1);
    p->sent = calloc(n + 1, sizeof *p->sent);
    p->head_cap = 256 + 12 * n;
    p->head = malloc(p->head_cap);
    p->line = malloc(REPLY_MAX + 1);
    if (!p->obs || !p->mask || !p->sent || !p->head || !p->line)
        return fail(p, err, cap, "could not be set up: out of memory");
    return true;
}

/* A field of hello's "obs_fields" or (with its offset) "shared_fields". */
static void add_field(cJSON *arr, const polis_obs_field *f, bool offset)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddStringToObject(o, "dtype", polis_dtype_name(f->dtype));
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (int32_t d = 0; d < f->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber(f->shape[d]));
    if (offset) cJSON_AddNumberToObject(o, "offset", (double)f->offset);
}

/* The hello request (a JSON line, free it), or NULL when memory runs out. */
static char *hello_line(cli_policyproc *p, const char *file)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "op", "hello");
    cJSON_AddNumberToObject(h, "protocol", CLI_SEAT_PROTOCOL);
    cJSON_AddNumberToObject(h, "revision", CLI_SEAT_REVISION);
    cJSON_AddStringToObject(h, "scenario", polis_env_name(p->env));
    if (file) cJSON_AddStringToObject(h, "file", file);
    cJSON *ag = cJSON_AddArrayToObject(h, "agents");
    for (int32_t i = 0; i < p->n_agents; i++)
        cJSON_AddItemToArray(ag, cJSON_CreateString(polis_env_agent_name(p->env, i)));
    cJSON *ac = cJSON_AddArrayToObject(h, "actions");
    for (int32_t i = 0; i < p->n_actions; i++)
        cJSON_AddItemToArray(ac, cJSON_CreateString(polis_env_action_name(p->env, i)));
    cJSON *fs = cJSON_AddArrayToObject(h, "obs_fields");
    for (int32_t i = 0; i < p->n_fields; i++) {
        polis_obs_field f;
        polis_env_obs_field(p->env, i, &f);
        add_field(fs, &f, false);
    }
    cJSON_AddNumberToObject(h, "obs_dim", (double)p->dim);
    /* revision 1: the shared fields, with their offsets in the buffer an act carries */
    fs = cJSON_AddArrayToObject(h, "shared_fields");
    for (int32_t i = 0; i < p->n_shared; i++) {
        polis_obs_field f;
        polis_env_shared_field(p->env, i, &f);
        add_field(fs, &f, true);
    }
    cJSON_AddNumberToObject(h, "shared_size", (double)p->shared_size);
    cJSON_AddNumberToObject(h, "n_actions", p->n_actions);
    char *text = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    return text;
}

cli_policyproc *cli_policyproc_start(char *const argv[], const char *label, polis_env *env,
                                     const char *file, int timeout_ms, char *err, size_t cap)
{
    cli_policyproc *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    snprintf(p->label, sizeof p->label, "%s", label);
    snprintf(p->name, sizeof p->name, "%s", label);
    p->fd = -1;
    p->pid = -1;
    p->exited = true;
    p->timeout_ms = timeout_ms;
    p->env = env;
    p->io = polis_env_io(env);
    p->n_agents = polis_env_n_agents(env);
    p->n_actions = polis_env_n_actions(env);
    int sv[2];
    if (!setup_layout(p, err, cap)) goto fail;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, cap, "the policy process %s: socketpair: %s", label, strerror(errno));
        goto fail;
    }
    char pythonpath[4096 + 16];
    char **envp = cli_python_env(pythonpath, sizeof pythonpath);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    int rc = envp ? posix_spawnp(&p->pid, argv[0], &fa, NULL, argv, envp) : ENOMEM;
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    close(sv[1]);
    p->fd = sv[0];
    if (rc != 0) {
        p->pid = -1;
        snprintf(err, cap, "the policy process %s: cannot start %s: %s", label, argv[0],
                 strerror(rc));
        goto fail;
    }
    p->exited = false;
    char *hello = hello_line(p, file);
    bool sent =
        hello && write_all(p, hello, strlen(hello), err, cap) && write_all(p, "\n", 1, err, cap);
    if (!hello) snprintf(err, cap, "out of memory");
    cJSON_free(hello);
    if (!sent) goto fail;
    cJSON *r = read_reply(p, "hello", err, cap);
    if (!r) goto fail;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
    if (cJSON_IsString(name) && name->valuestring[0])
        snprintf(p->name, sizeof p->name, "%s", name->valuestring);
    const cJSON *views = cJSON_GetObjectItemCaseSensitive(r, "views"), *v;
    p->want_flat = views == NULL;
    cJSON_ArrayForEach(v, views) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, "flat") == 0)
            p->want_flat = true;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "text") == 0)
            p->want_text = true;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "shared") == 0)
            p->want_shared = true;
        else {
            fail(p, err, cap, "asked for the view %s (views: flat, text, shared)",
                 cJSON_IsString(v) ? v->valuestring : "(not a string)");
            cJSON_Delete(r);
            goto fail;
        }
    }
    const cJSON *stats = cJSON_GetObjectItemCaseSensitive(r, "stats");
    if (stats && !cJSON_IsBool(stats)) {
        fail(p, err, cap, "answered hello with a \"stats\" that is not true or false");
        cJSON_Delete(r);
        goto fail;
    }
    p->reports = cJSON_IsTrue(stats);
    cJSON_Delete(r);
    return p;
fail:
    cli_policyproc_stop(p);
    return NULL;
}

const char *cli_policyproc_name(const cli_policyproc *p) { return p->name; }

bool cli_policyproc_reset(cli_policyproc *p, int64_t episode, uint64_t seed, const int32_t *seats,
                          int32_t n, char *err, size_t cap)
{
    size_t len = (size_t)snprintf(p->head, p->head_cap,
                                  "{\"op\":\"reset\",\"episode\":%" PRId64 ",\"seed\":%" PRIu64
                                  ",\"seats\":[",
                                  episode, seed);
    for (int32_t i = 0; i < n && len < p->head_cap; i++)
        len += (size_t)snprintf(p->head + len, p->head_cap - len, "%s%d", i ? "," : "", seats[i]);
    if (len < p->head_cap) len += (size_t)snprintf(p->head + len, p->head_cap - len, "]}\n");
    if (len >= p->head_cap) return fail(p, err, cap, "could not be told: a request overflowed");
    if (!write_all(p, p->head, len, err, cap)) return false;
    cJSON *r = read_reply(p, "reset", err, cap);
    cJSON_Delete(r);
    return r != NULL;
}

static void flat_row(const cli_policyproc *p, int32_t agent, float *out)
{
    const uint8_t *rec = p->io->obs + (size_t)agent * p->io->obs_size;
    for (int32_t i = 0; i < p->n_fields; i++) {
        const field *f = &p->fields[i];
        const uint8_t *src = rec + f->offset;
        switch (f->dtype) {
        case POLIS_DTYPE_U8:
            for (size_t k = 0; k < f->count; k++) out[k] = (float)src[k];
            break;
        case POLIS_DTYPE_I8:
            for (size_t k = 0; k < f->count; k++) out[k] = (float)((const int8_t *)src)[k];
            break;
        case POLIS_DTYPE_I16: {
            int16_t v;
            for (size_t k = 0; k < f->count; k++) {
                memcpy(&v, src + 2 * k, 2);
                out[k] = (float)v;
            }
            break;
        }
        case POLIS_DTYPE_I32: {
            int32_t v;
            for (size_t k = 0; k < f->count; k++) {
                memcpy(&v, src + 4 * k, 4);
                out[k] = (float)v;
            }
            break;
        }
        case POLIS_DTYPE_F32: memcpy(out, src, 4 * f->count); break;
        }
        out += f->count;
    }
}

/* The protocol's floats are little-endian; a big-endian host swaps them. */
static void to_little_endian(float *v, size_t n)
{
    const uint16_t one = 1;
    if (*(const uint8_t *)&one == 1) return;
    for (size_t i = 0; i < n; i++) {
        uint8_t b[4];
        memcpy(b, &v[i], 4);
        uint8_t s[4] = {b[3], b[2], b[1], b[0]};
        memcpy(&v[i], s, 4);
    }
}

/* A big-endian host's copy of the shared buffer with every element's bytes reversed. */
static const uint8_t *shared_little_endian(cli_policyproc *p, const uint8_t *buf)
{
    memcpy(p->shared_le, buf, p->shared_size);
    for (int32_t i = 0; i < p->n_shared; i++) {
        size_t w = polis_dtype_size(p->shared[i].dtype);
        uint8_t *e = p->shared_le + p->shared[i].offset;
        for (size_t k = 0; w > 1 && k < p->shared[i].count; k++, e += w)
            for (size_t a = 0, b = w - 1; a < b; a++, b--) {
                uint8_t t = e[a];
                e[a] = e[b];
                e[b] = t;
            }
    }
    return p->shared_le;
}

bool cli_policyproc_send(cli_policyproc *p, const int32_t *seats, int32_t n, char *err, size_t cap)
{
    size_t na = (size_t)p->n_actions;
    for (int32_t i = 0; i < n; i++) {
        if (p->want_flat) flat_row(p, seats[i], p->obs + (size_t)i * p->dim);
        memcpy(p->mask + (size_t)i * na, p->io->masks + (size_t)seats[i] * na, na);
        p->sent[i] = seats[i];
    }
    p->n_sent = n;
    size_t obs_bytes = p->want_flat ? (size_t)n * p->dim * sizeof(float) : 0;
    if (p->want_flat) to_little_endian(p->obs, (size_t)n * p->dim);
    size_t len =
        (size_t)snprintf(p->head, p->head_cap, "{\"op\":\"act\",\"tick\":%" PRId64 ",\"seats\":[",
                         polis_env_tick(p->env));
    for (int32_t i = 0; i < n && len < p->head_cap; i++)
        len += (size_t)snprintf(p->head + len, p->head_cap - len, "%s%d", i ? "," : "", seats[i]);
    if (len < p->head_cap)
        len +=
            (size_t)snprintf(p->head + len, p->head_cap - len,
                             "],\"obs_bytes\":%zu,\"mask_bytes\":%zu", obs_bytes, (size_t)n * na);
    const uint8_t *shared = NULL;
    if (p->want_shared) {
        size_t size = 0;
        shared = polis_env_shared_obs(p->env, &size);
        if (size != p->shared_size)
            return fail(p, err, cap,
                        "could not be asked: the env's shared fields are %zu bytes at tick "
                        "%" PRId64 ", %zu at hello",
                        size, polis_env_tick(p->env), p->shared_size);
        if (p->shared_le) shared = shared_little_endian(p, shared);
        if (len < p->head_cap)
            len += (size_t)snprintf(p->head + len, p->head_cap - len, ",\"shared_bytes\":%zu",
                                    p->shared_size);
    }
    if (len >= p->head_cap) return fail(p, err, cap, "could not be asked: a request overflowed");
    bool ok = write_all(p, p->head, len, err, cap);
    if (ok && p->want_text) {
        /* the text views as a JSON array, one per seat, in the same line */
        cJSON *arr = cJSON_CreateArray();
        for (int32_t i = 0; arr && i < n; i++) {
            char *t = NULL;
            if (polis_env_render(p->env, seats[i], "text", &t) != POLIS_OK) {
                cJSON_Delete(arr);
                return fail(p, err, cap, "could not be shown agent %d's text view: %s", seats[i],
                            polis_env_error(p->env));
            }
            cJSON_AddItemToArray(arr, cJSON_CreateString(t));
            polis_free(t);
        }
        char *js = arr ? cJSON_PrintUnformatted(arr) : NULL;
        cJSON_Delete(arr);
        if (!js) return fail(p, err, cap, "could not be asked: out of memory");
        ok = write_all(p, ",\"text\":", 8, err, cap) && write_all(p, js, strlen(js), err, cap);
        cJSON_free(js);
    }
    ok = ok && write_all(p, "}\n", 2, err, cap);
    ok = ok && (!obs_bytes || write_all(p, p->obs, obs_bytes, err, cap));
    ok = ok && write_all(p, p->mask, (size_t)n * na, err, cap);
    ok = ok &&
         (!p->shared_size || !p->want_shared || write_all(p, shared, p->shared_size, err, cap));
    p->awaiting = ok;
    return ok;
}

bool cli_policyproc_recv(cli_policyproc *p, char *err, size_t cap)
{
    p->awaiting = false;
    cJSON *r = read_reply(p, "act", err, cap);
    if (!r) return false;
    const cJSON *acts = cJSON_GetObjectItemCaseSensitive(r, "actions");
    bool ok = cJSON_IsArray(acts) && cJSON_GetArraySize(acts) == p->n_sent;
    if (!ok) {
        fail(p, err, cap, "answered act with %s for %d seats at tick %" PRId64,
             cJSON_IsArray(acts) ? "another number of actions" : "no \"actions\" array", p->n_sent,
             polis_env_tick(p->env));
    }
    for (int32_t i = 0; ok && i < p->n_sent; i++) {
        const cJSON *a = cJSON_GetArrayItem(acts, i);
        int32_t agent = p->sent[i], id = -1;
        if (cJSON_IsNumber(a) && a->valuedouble >= 0 && a->valuedouble < p->n_actions &&
            a->valuedouble == (double)(int32_t)a->valuedouble) {
            id = (int32_t)a->valuedouble;
        } else if (cJSON_IsString(a)) {
            if (polis_env_parse_action(p->env, agent, a->valuestring, &id) != POLIS_OK) {
                ok = fail(p, err, cap,
                          "sent agent %d (%s) the action \"%.80s\" at tick %" PRId64 ": %s", agent,
                          polis_env_agent_name(p->env, agent), a->valuestring,
                          polis_env_tick(p->env), polis_env_error(p->env));
                break;
            }
        } else {
            char *t = cJSON_PrintUnformatted(a);
            ok = fail(p, err, cap,
                      "sent agent %d (%s) the action %.40s at tick %" PRId64
                      ": not an action id (0..%d) or a text action",
                      agent, polis_env_agent_name(p->env, agent), t ? t : "?",
                      polis_env_tick(p->env), p->n_actions - 1);
            cJSON_free(t);
            break;
        }
        p->io->actions[agent] = id;
    }
    cJSON_Delete(r);
    return ok;
}

/* ---- an episode's figures ------------------------------------------------------------------ */

bool cli_policyproc_reports(const cli_policyproc *p) { return p->reports; }

/* Whether name is a figure's name: a letter, then letters, digits, '_', '-' and '.' (not two
 * in a row, not last), at most CLI_FIGURE_NAME_MAX bytes. */
static bool figure_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > CLI_FIGURE_NAME_MAX || !((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z'))
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && name[i - 1] != '.' && i + 1 < n);
        if (!ok) return false;
    }
    return true;
}

/* Adds the figure v (a number or null) under key to into: summed, null when either is. */
static bool add_figure(cJSON *into, const char *key, const cJSON *v)
{
    cJSON *old = cJSON_GetObjectItemCaseSensitive(into, key);
    if (old && cJSON_IsNull(old)) return true;
    if (old && cJSON_IsNumber(v)) {
        cJSON_SetNumberValue(old, old->valuedouble + v->valuedouble);
        return true;
    }
    cJSON *n = cJSON_IsNumber(v) ? cJSON_CreateNumber(v->valuedouble) : cJSON_CreateNull();
    if (!n) return false;
    if (old) return cJSON_ReplaceItemInObjectCaseSensitive(into, key, n);
    if (!cJSON_AddItemToObject(into, key, n)) {
        cJSON_Delete(n);
        return false;
    }
    return true;
}

/* "agent 2 (miner_2)", or "its seats agent_0, agent_1" for the totals (seat < 0). */
static void whose(const cli_policyproc *p, int32_t seat, const int32_t *seats, int32_t n, char *buf,
                  size_t cap)
{
    if (seat >= 0) {
        snprintf(buf, cap, "agent %d (%s)", seat, polis_env_agent_name(p->env, seat));
        return;
    }
    size_t len = (size_t)snprintf(buf, cap, "its seat%s", n == 1 ? "" : "s");
    for (int32_t i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s %s", i ? "," : "",
                                polis_env_agent_name(p->env, seats[i]));
}

/* Checks one object of figures (the totals when seat < 0, else the seat's) and adds it to
 * into, each name suffixed with ".AGENT" for a seat. */
static bool take_figures(cli_policyproc *p, const cJSON *obj, const char *member, int32_t seat,
                         const int32_t *seats, int32_t n, uint64_t seed, const cJSON *game,
                         cJSON *into, char *err, size_t cap)
{
    char who[512];
    whose(p, seat, seats, n, who, sizeof who);
    if (!cJSON_IsObject(obj))
        return fail(p, err, cap,
                    "answered end with a \"%s\" for %s that is not an object of "
                    "figures (the episode of seed %" PRIu64 ")",
                    member, who, seed);
    if (cJSON_GetArraySize(obj) > CLI_FIGURES_MAX)
        return fail(p, err, cap,
                    "reported %d figures for %s in the episode of seed %" PRIu64 " (at most %d)",
                    cJSON_GetArraySize(obj), who, seed, CLI_FIGURES_MAX);
    const cJSON *v;
    cJSON_ArrayForEach(v, obj) {
        if (!figure_name(v->string))
            return fail(p, err, cap,
                        "reported a figure named \"%.60s\" for %s in the episode "
                        "of seed %" PRIu64 ": a name is a letter, then letters, digits, '_', "
                        "'-' and single '.', at most %d bytes",
                        v->string, who, seed, CLI_FIGURE_NAME_MAX);
        if (!(cJSON_IsNull(v) || (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
                                  v->valuedouble <= CLI_FIGURE_VALUE_MAX))) {
            char *t = cJSON_PrintUnformatted(v);
            bool r = fail(p, err, cap,
                          "reported %s = %.40s for %s in the episode of seed %" PRIu64
                          ": not a number from 0 to %g (or null: unknown)",
                          v->string, t ? t : "?", who, seed, CLI_FIGURE_VALUE_MAX);
            cJSON_free(t);
            return r;
        }
        char key[CLI_FIGURE_NAME_MAX + 256];
        if (seat >= 0)
            snprintf(key, sizeof key, "%s.%s", v->string, polis_env_agent_name(p->env, seat));
        else
            snprintf(key, sizeof key, "%s", v->string);
        if (cJSON_GetObjectItemCaseSensitive(game, key))
            return fail(p, err, cap,
                        "reported the figure %s for %s in the episode of seed %" PRIu64
                        ", which is a metric of the game: a process's figures need names of "
                        "their own (llm.calls)",
                        key, who, seed);
        if (!add_figure(into, key, v))
            return fail(p, err, cap, "could not be heard: out of memory");
    }
    return true;
}

bool cli_policyproc_end(cli_policyproc *p, int64_t episode, uint64_t seed, const int32_t *seats,
                        int32_t n, const cJSON *game, cJSON *into, char *err, size_t cap)
{
    size_t len = (size_t)snprintf(
        p->head, p->head_cap,
        "{\"op\":\"end\",\"episode\":%" PRId64 ",\"seed\":%" PRIu64 ",\"seats\":[", episode, seed);
    for (int32_t i = 0; i < n && len < p->head_cap; i++)
        len += (size_t)snprintf(p->head + len, p->head_cap - len, "%s%d", i ? "," : "", seats[i]);
    if (len < p->head_cap) len += (size_t)snprintf(p->head + len, p->head_cap - len, "]}\n");
    if (len >= p->head_cap) return fail(p, err, cap, "could not be told: a request overflowed");
    if (!write_all(p, p->head, len, err, cap)) return false;
    cJSON *r = read_reply(p, "end", err, cap);
    if (!r) return false;
    bool ok = take_figures(p, cJSON_GetObjectItemCaseSensitive(r, "stats"), "stats", -1, seats, n,
                           seed, game, into, err, cap);
    const cJSON *per = cJSON_GetObjectItemCaseSensitive(r, "per_seat");
    if (ok && per && (!cJSON_IsArray(per) || cJSON_GetArraySize(per) != n)) {
        char who[512];
        whose(p, -1, seats, n, who, sizeof who);
        ok = fail(p, err, cap,
                  "answered end with a \"per_seat\" that is not an array of %d "
                  "objects, one for each of %s (the episode of seed %" PRIu64 ")",
                  n, who, seed);
    }
    for (int32_t i = 0; ok && per && i < n; i++)
        ok = take_figures(p, cJSON_GetArrayItem(per, i), "per_seat", seats[i], seats, n, seed, game,
                          into, err, cap);
    cJSON_Delete(r);
    return ok;
}

void cli_policyproc_stop(cli_policyproc *p)
{
    if (!p) return;
    if (p->fd >= 0) {
        if (!p->exited && !p->awaiting) {
            static const char bye[] = "{\"op\":\"close\"}\n";
            (void)!send(p->fd, bye, sizeof bye - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        shutdown(p->fd, SHUT_WR);
        close(p->fd);
    }
    if (!p->exited && p->pid > 0) {
        reap(p, 2000);
        if (!p->exited) {
            kill(p->pid, SIGKILL);
            reap(p, 2000);
        }
    }
    free(p->fields);
    free(p->shared);
    free(p->shared_le);
    free(p->obs);
    free(p->mask);
    free(p->head);
    free(p->line);
    free(p->sent);
    free(p);
}
