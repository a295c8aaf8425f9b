/*
 * engine/cli/transport/http.c — HTTP and WebSocket over libwebsockets (Debian's
 * libwebsockets-dev): where the browser viewer's files are, the event loop `polis view` and
 * `polis serve --http` run, and the server of `polis view` (http.h).
 *
 * `polis view` serves two mounts: a file mount with the viewer's directory, and a callback mount
 * with the recording under /recording/NAME and nothing else there. The served set is exactly
 * those two; any other path is 404 (libwebsockets normalises "..", and the recording mount
 * compares the whole name). With follow a WebSocket protocol ("polis-follow") streams the
 * recording from its start and then what is appended to it, so the page can watch a recording
 * being written.
 */
/* realpath() (XSI), for the served paths. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/http.h"
#include "util/file.h"
#include "util/util.h"

#ifdef POLIS_HAVE_LWS
#include <libwebsockets.h>
#endif

/* Does dir hold the viewer (its index.html)? */
static bool viewer_at(const char *dir)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/index.html", dir);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* The viewer's directory, as a real path, into out (PATH_MAX). False when none is found. */
bool cli_find_viewer(char *out)
{
    const char *env = getenv("POLIS_VIEWER_DIR");
    if (env && *env) return viewer_at(env) && realpath(env, out) != NULL;
    char exe[PATH_MAX];
    if (cli_exe_dir(exe)) {
        char dir[PATH_MAX];
        int m = snprintf(dir, sizeof dir, "%s/%s", exe, POLIS_VIEWER_REL_BINDIR);
        if (m > 0 && (size_t)m < sizeof dir && viewer_at(dir) && realpath(dir, out)) return true;
    }
    if (viewer_at(POLIS_VIEWER_SOURCE_DIR) && realpath(POLIS_VIEWER_SOURCE_DIR, out)) return true;
    return viewer_at(POLIS_VIEWER_INSTALL_DIR) && realpath(POLIS_VIEWER_INSTALL_DIR, out) != NULL;
}

#ifdef POLIS_HAVE_LWS

/* ---- origins and hosts ----------------------------------------------------------------------- */

/* An address, not a name: IPv4 digits and dots, or an IPv6 literal in brackets. A name is
 * what a DNS rebinding attack controls; an address it does not. */
static bool is_address(const char *h)
{
    if (h[0] == '[') return true;
    int dots = 0;
    for (const char *p = h; *p; p++) {
        if (*p == '.')
            dots++;
        else if (*p < '0' || *p > '9')
            return false;
    }
    return dots == 3;
}

static bool allowed_origin(const cli_origins *o, const char *origin)
{
    for (int i = 0; o && i < o->n_allow; i++) {
        const char *a = o->allow[i];
        if (strcmp(a, "*") == 0) return true;
        size_t n = strlen(a);
        while (n && a[n - 1] == '/') n--;
        if (strlen(origin) == n && strncasecmp(origin, a, n) == 0) return true;
    }
    return false;
}

static bool allowed_host(const cli_origins *o, const char *host)
{
    if (is_address(host) || strcasecmp(host, "localhost") == 0) return true;
    for (int i = 0; o && i < o->n_allow; i++) {
        char h[256];
        if (strcmp(o->allow[i], "*") == 0) return true;
        if (cli_origin_host(o->allow[i], h, sizeof h) && strcasecmp(h, host) == 0) return true;
    }
    return false;
}

bool cli_http_allowed(struct lws *wsi, const cli_origins *o, char *why, size_t cap)
{
    char host[256], origin[512], name[256];
    int hl = lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST);
    if (hl <= 0 || !cli_origin_host(host, name, sizeof name)) {
        snprintf(why, cap, "the request has no Host header");
        return false;
    }
    if (!allowed_host(o, name)) {
        snprintf(why, cap,
                 "Host %.200s is not this server's address (a name that resolves here is refused "
                 "unless --allow-origin names it)",
                 host);
        return false;
    }
    int ol = lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN);
    if (ol <= 0) return true; /* not a browser's request: browsers always send Origin here */
    if (ol >= (int)sizeof origin ||
        lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) <= 0) {
        snprintf(why, cap, "the Origin header is too long");
        return false;
    }
    char own[300];
    snprintf(own, sizeof own, "http://%s", host);
    if (strcasecmp(origin, own) == 0 || allowed_origin(o, origin)) return true;
    snprintf(why, cap,
             "Origin %.200s is not this server's page (%.200s); --allow-origin allows another",
             origin, own);
    return false;
}

/* Logs a refused request or WebSocket ("a request", "a WebSocket"), at most once a second for
 * each: a page that asks in a loop must not flood the log. */
static void log_refusal(bool websocket, const char *why)
{
    static lws_usec_t said[2];
    static unsigned unsaid[2];
    const char *what = websocket ? "a WebSocket" : "a request";
    lws_usec_t now = lws_now_usecs();
    if (said[websocket] && now - said[websocket] < LWS_US_PER_SEC) {
        unsaid[websocket]++;
        return;
    }
    if (unsaid[websocket])
        fprintf(stderr, "polis: refused %s: %s (and %u more in the last second)\n", what, why,
                unsaid[websocket]);
    else
        fprintf(stderr, "polis: refused %s: %s\n", what, why);
    said[websocket] = now;
    unsaid[websocket] = 0;
}

int cli_http_forbid(struct lws *wsi, const char *why)
{
    log_refusal(false, why);
    if (lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, why)) return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* The name the recording is served under: its base name with anything but [A-Za-z0-9._-]
 * made '_' (so the URL needs no escaping), never starting with '.'. */
static void served_name(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t i = 0;
    for (; base[i] && i + 1 < cap; i++) {
        char c = base[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = '\0';
    if (out[0] == '.') out[0] = '_';
}

typedef struct view_state {
    char file[PATH_MAX];     /* the recording, as a real path */
    char url_path[PATH_MAX]; /* "/NAME": the path under the /recording mount */
    const char *mime;
    const cli_origins *origins;
    unsigned char buf[LWS_PRE + 64 * 1024]; /* what is being written (one thread) */
} view_state;

/* --follow: one WebSocket client reading the recording from its start, then what is appended,
 * in binary messages of at most FOLLOW_CHUNK bytes; polled every FOLLOW_POLL_US when it has
 * caught up. */
enum { FOLLOW_CHUNK = 16 * 1024, FOLLOW_POLL_US = 100 * 1000 };

typedef struct follow_session {
    int fd; /* the recording, through the one opener (util/file.h); 0: none */
    bool open;
} follow_session;

static int view_follow(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    (void)in;
    (void)len;
    follow_session *fs = user;
    view_state *vs = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        char why[512];
        if (cli_http_allowed(wsi, vs->origins, why, sizeof why)) return 0;
        log_refusal(true, why);
        return 1;
    }
    case LWS_CALLBACK_ESTABLISHED: {
        char why[256];
        fs->fd = cli_file_open(vs->file, 0, why, sizeof why);
        if (fs->fd < 0) {
            fprintf(stderr, "polis: view: %s: %s\n", vs->file, why);
            return -1;
        }
        fs->open = true;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (!fs->open) return -1;
        ssize_t n = read(fs->fd, vs->buf + LWS_PRE, FOLLOW_CHUNK);
        if (n < 0 && errno != EINTR) return -1;
        if (n <= 0) { /* at the end for now: look again later */
            lws_set_timer_usecs(wsi, FOLLOW_POLL_US);
            return 0;
        }
        if (lws_write(wsi, vs->buf + LWS_PRE, (size_t)n, LWS_WRITE_BINARY) < (int)n) return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_TIMER: lws_callback_on_writable(wsi); return 0;
    case LWS_CALLBACK_CLOSED:
        if (fs->open) close(fs->fd);
        fs->open = false;
        return 0;
    default: return 0;
    }
}

static volatile sig_atomic_t view_interrupted;

static void view_on_signal(int sig)
{
    (void)sig;
    view_interrupted = 1;
}

void cli_lws_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = view_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_lws_run(struct lws_context *ctx)
{
    cli_lws_catch_signals();
    int n = 0;
    while (n >= 0 && !view_interrupted) n = lws_service(ctx, 0);
}

/* An HTTP request's state: the recording being sent. */
typedef struct view_get {
    int fd;
    bool open;
    int64_t left; /* bytes still to send */
} view_get;

/* Every HTTP request is checked (Host, Origin); the /recording mount serves the one file,
 * opened by the one opener and sent from its descriptor, or 404. */
static int view_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    view_state *vs = lws_context_user(lws_get_context(wsi));
    view_get *g = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_HTTP_CONNECTION: {
        char why[512];
        if (cli_http_allowed(wsi, vs->origins, why, sizeof why)) return 0;
        return cli_http_forbid(wsi, why) ? -1 : 1;
    }
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        /* a WebSocket naming no protocol (or "http") lands here: it would be an idle
         * connection that no Origin check, no cap and no timeout covers */
        log_refusal(true, "it names no protocol of this server (polis-follow)");
        return 1;
    case LWS_CALLBACK_HTTP: {
        const char *path = in ? (const char *)in : "";
        if (strcmp(path, vs->url_path) != 0) {
            if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL)) return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        char why[256];
        int fd = cli_file_open(vs->file, 0, why, sizeof why);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            fprintf(stderr, "polis: view: %s: %s\n", vs->file, fd < 0 ? why : strerror(errno));
            if (fd >= 0) close(fd);
            if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL)) return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        unsigned char *start = vs->buf + LWS_PRE, *p = start, *end = vs->buf + sizeof vs->buf - 1;
        if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, vs->mime, (lws_filepos_t)st.st_size,
                                        &p, end) ||
            lws_finalize_write_http_header(wsi, start, &p, end)) {
            close(fd);
            return -1;
        }
        g->fd = fd;
        g->open = true;
        g->left = (int64_t)st.st_size;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        if (!g->open) return 0;
        size_t want = g->left < FOLLOW_CHUNK ? (size_t)g->left : FOLLOW_CHUNK;
        ssize_t n = want ? read(g->fd, vs->buf + LWS_PRE, want) : 0;
        if (n < 0) return -1;
        if ((size_t)n < want) return -1; /* the file shrank while it was sent */
        g->left -= n;
        if (lws_write(wsi, vs->buf + LWS_PRE, (size_t)n,
                      g->left ? LWS_WRITE_HTTP : LWS_WRITE_HTTP_FINAL) < (int)n)
            return -1;
        if (g->left) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        close(g->fd);
        g->open = false;
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    case LWS_CALLBACK_CLOSED_HTTP:
        if (g && g->open) close(g->fd);
        if (g) g->open = false;
        return 0;
    default: return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static int serve(const char *viewer, view_state *vs, int port, const char *name, bool follow)
{
    static const struct lws_protocols protocols[] = {
        {"http", view_http, sizeof(view_get), 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
    };
    /* --follow adds the WebSocket protocol the page asks for ("polis-follow"). */
    static const struct lws_protocols follow_protocols[] = {
        {"http", view_http, sizeof(view_get), 0, 0, NULL, 0},
        {"polis-follow", view_follow, sizeof(follow_session), 0, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
    };
    struct lws_http_mount rec_mount, viewer_mount;
    memset(&rec_mount, 0, sizeof rec_mount);
    rec_mount.mountpoint = "/recording";
    rec_mount.mountpoint_len = (unsigned char)strlen("/recording");
    rec_mount.protocol = "http";
    rec_mount.origin_protocol = LWSMPRO_CALLBACK;
    memset(&viewer_mount, 0, sizeof viewer_mount);
    viewer_mount.mount_next = &rec_mount;
    viewer_mount.mountpoint = "/";
    viewer_mount.mountpoint_len = 1;
    viewer_mount.origin = viewer;
    viewer_mount.def = "index.html";
    viewer_mount.origin_protocol = LWSMPRO_FILE;

    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6;
    info.user = vs;
    struct lws_context *ctx = lws_create_context(&info);
    if (!ctx) {
        fprintf(stderr, "polis: view: cannot start libwebsockets\n");
        return EXIT_ENV;
    }
    info.port = port;
    info.iface = "127.0.0.1";
    info.protocols = follow ? follow_protocols : protocols;
    info.mounts = &viewer_mount;
    info.vhost_name = "localhost";
    struct lws_vhost *vh = lws_create_vhost(ctx, &info);
    if (!vh) {
        fprintf(stderr, "polis: view: cannot listen on 127.0.0.1:%d\n", port);
        lws_context_destroy(ctx);
        return EXIT_ENV;
    }
    int bound = lws_get_vhost_listen_port(vh);
    cli_lws_catch_signals(); /* before the URL: whoever reads it may stop the server at once */
    printf("http://127.0.0.1:%d/?file=/recording/%s%s\n", bound, name, follow ? "&follow=1" : "");
    fflush(stdout);
    fprintf(stderr, "polis view: serving %s and the viewer in %s; Ctrl-C stops\n", vs->file,
            viewer);

    cli_lws_run(ctx);
    lws_context_destroy(ctx);
    return 0;
}

#endif

int cli_http_serve_recording(const char *viewer, const char *file, int port, bool follow,
                             const cli_origins *origins)
{
#ifdef POLIS_HAVE_LWS
    view_state *vs = calloc(1, sizeof *vs);
    if (vs) vs->origins = origins;
    if (!vs) {
        fprintf(stderr, "polis: view: out of memory\n");
        return EXIT_ENV;
    }
    if (!realpath(file, vs->file)) {
        fprintf(stderr, "polis: view: %s: %s\n", file, strerror(errno));
        free(vs);
        return EXIT_ENV;
    }
    char name[256];
    served_name(vs->file, name, sizeof name);
    snprintf(vs->url_path, sizeof vs->url_path, "/%s", name);
    size_t nl = strlen(name);
    vs->mime =
        nl > 3 && strcmp(name + nl - 3, ".gz") == 0 ? "application/gzip" : "application/x-ndjson";
    int rc = serve(viewer, vs, port, name, follow);
    free(vs);
    return rc;
#else
    (void)file;
    (void)port;
    (void)follow;
    (void)origins;
    fprintf(stderr,
            "polis: view: this polis was built without libwebsockets (install libwebsockets-dev "
            "and rebuild); open %s/index.html from a web server of your own, or choose the file "
            "on the page\n",
            viewer);
    return EXIT_ENV;
#endif
}
