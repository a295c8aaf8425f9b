/*
 * engine/cli/transport/ws.c — a live game's connections over libwebsockets (ws.h).
 *
 * One context, one thread: the viewer's directory as an HTTP file mount, three protocols on
 * the page's vhost ("http", "polis-follow", "polis-seat") and, with a TCP address, a second
 * vhost whose connections are raw sockets ("polis-agent"). Every HTTP request and WebSocket
 * handshake is checked for its Host and Origin (http.c). Every connection keeps its own queue
 * of what is to be written and writes when libwebsockets says it can, so a slow reader holds
 * up no one else; what is written goes through one buffer of the server, so an idle
 * connection costs little.
 *
 * The record stream belongs to the game, which keeps only its recent part: a follower is sent
 * the header, the episode's reset line and the stream from its latest keyframe, then whatever
 * the stream grows by, in binary messages of at most CHUNK bytes. A follower that falls so far
 * behind that its next bytes are no longer kept, or takes nothing for --write-timeout, is
 * dropped, and so is a seat page or TCP client whose queue passes CLI_WS_MAX_QUEUE or that
 * takes nothing for --write-timeout; a TCP client that sends no request for --idle-timeout
 * while none of its requests waits is dropped too. What is untaken counts the queue and what
 * libwebsockets holds (it stops reading a connection whose output it cannot send). One timer
 * of the server looks every SWEEP_US for connections past their time.
 */
#include "transport/ws.h"

#ifdef POLIS_HAVE_LWS

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/ioctl.h>

#include <libwebsockets.h>
#ifdef __linux__
#include <linux/sockios.h>
#endif

enum { CHUNK = 64 * 1024, SWEEP_US = 250 * 1000 };

typedef struct follower follower;

struct cli_ws {
    struct lws_context *ctx;
    cli_ws_handlers h;
    cli_ws_config cfg;
    lws_sorted_usec_list_t sul;
    lws_sorted_usec_list_t sweep;
    const struct lws_protocols *follow;
    struct lws_http_mount mount; /* libwebsockets keeps pointing at it */
    int n_pages, n_clients;
    lws_usec_t refused_said[2];          /* when a refusal (a page, a TCP client) was last logged */
    unsigned refused_unsaid[2];          /* refusals since, not logged */
    follower *followers;                 /* every "polis-follow" connection */
    cli_ws_conn *conns;                  /* every seat page and TCP client */
    unsigned char wbuf[LWS_PRE + CHUNK]; /* what is being written (one thread) */
};

struct cli_ws_conn {
    struct lws *wsi;
    cli_ws *ws;
    void *game;
    bool raw;     /* a TCP client (lines), else a page (messages) */
    bool counted; /* in n_pages or n_clients */
    char *out;    /* queued: a page's messages each ending in '\0', or a client's bytes */
    size_t out_len, out_sent, out_cap;
    bool closing;             /* close once the queue is sent */
    bool dropped;             /* being closed by the transport: nothing more is queued */
    bool waiting;             /* a TCP client's request waits for the game */
    lws_usec_t stalled_since; /* output untaken since then; 0: none waits */
    int unsent;               /* bytes the kernel had not sent at the last look */
    lws_usec_t idle_since;    /* a TCP client idle since then; 0: not idle */
    char *in;                 /* a page's message arriving in fragments */
    size_t in_len;
    bool in_too_long;
    cli_ws_conn *prev, *next; /* cli_ws.conns */
};

struct follower {
    struct lws *wsi;
    int phase;   /* 0 the header, 1 the reset line it joined with, 2 the stream */
    size_t pos;  /* phases 0 and 1: bytes of that line sent */
    uint64_t at; /* phase 2: the next byte of the stream; UINT64_MAX: being dropped */
    char *reset; /* phase 1: a copy of the reset line */
    size_t reset_len;
    lws_usec_t stalled_since; /* behind the stream without progress since then; 0: caught up */
    int unsent;
    follower *prev, *next;
};

static cli_ws *server_of(struct lws *wsi) { return lws_context_user(lws_get_context(wsi)); }

/* A TCP client is idle while none of its requests waits and nothing waits to be sent to it;
 * its idle time starts when it becomes so (bytes of a request trickling in do not restart
 * it). */
static void conn_idle(cli_ws_conn *c)
{
    bool idle = c->raw && !c->waiting && c->out_sent == c->out_len;
    if (!idle)
        c->idle_since = 0;
    else if (!c->idle_since)
        c->idle_since = lws_now_usecs();
}

static const char *who(const cli_ws_conn *c) { return c->raw ? "a TCP client" : "a seat page"; }

/* Closes c from outside its callbacks (the game may be iterating its connections). */
static void drop(cli_ws_conn *c, const char *why)
{
    if (c->dropped) return;
    c->dropped = true;
    fprintf(stderr, "polis serve: dropped %s: %s\n", who(c), why);
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

/* Queues n bytes (a page's message gets its '\0', a client's line its '\n'). */
static bool enqueue(cli_ws_conn *c, const char *text, size_t n)
{
    if (c->dropped) return false;
    if (c->raw && c->out_sent == c->out_len) c->out_sent = c->out_len = 0;
    if (c->out_len - c->out_sent + n + 1 > CLI_WS_MAX_QUEUE) {
        char why[160];
        snprintf(why, sizeof why, "more than %d bytes of replies it does not read",
                 CLI_WS_MAX_QUEUE);
        drop(c, why);
        return false;
    }
    if (c->out_len + n + 1 > c->out_cap) {
        if (c->raw && c->out_sent > 0) { /* reuse the part already sent */
            memmove(c->out, c->out + c->out_sent, c->out_len - c->out_sent);
            c->out_len -= c->out_sent;
            c->out_sent = 0;
        }
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n + 1) cap *= 2;
        if (cap != c->out_cap) {
            char *p = realloc(c->out, cap);
            if (!p) return false;
            c->out = p;
            c->out_cap = cap;
        }
    }
    memcpy(c->out + c->out_len, text, n);
    c->out[c->out_len + n] = c->raw ? '\n' : '\0';
    c->out_len += n + 1;
    lws_callback_on_writable(c->wsi);
    conn_idle(c);
    return true;
}

bool cli_ws_send(cli_ws_conn *c, const char *text) { return enqueue(c, text, strlen(text)); }

void cli_ws_close_when_sent(cli_ws_conn *c)
{
    c->closing = true;
    lws_callback_on_writable(c->wsi);
}

void cli_ws_hold(cli_ws_conn *c, bool hold)
{
    if (c->wsi) lws_rx_flow_control(c->wsi, !hold);
}

void cli_ws_waiting(cli_ws_conn *c, bool waiting)
{
    c->waiting = waiting;
    conn_idle(c);
}

void cli_ws_stream_grew(cli_ws *ws)
{
    if (!ws || !ws->ctx) return;
    lws_callback_on_writable_all_protocol(ws->ctx, ws->follow);
}

static void timer_fired(lws_sorted_usec_list_t *sul)
{
    cli_ws *ws = lws_container_of(sul, cli_ws, sul);
    ws->h.timer(ws->h.ud);
}

void cli_ws_timer(cli_ws *ws, int64_t us)
{
    lws_sul_schedule(ws->ctx, 0, &ws->sul, timer_fired, us);
}

/* ---- admission --------------------------------------------------------------------------- */

/* Logs a refused connection, at most one a second (a flood of connections must not flood the
 * log, nor block the server on a log nobody reads): the others are counted in the next. */
#if defined(__GNUC__)
static void refused(cli_ws *ws, bool raw, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
static void refused(cli_ws *ws, bool raw, const char *fmt, ...)
{
    lws_usec_t now = lws_now_usecs();
    if (ws->refused_said[raw] && now - ws->refused_said[raw] < LWS_US_PER_SEC) {
        ws->refused_unsaid[raw]++;
        return;
    }
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ws->refused_unsaid[raw])
        fprintf(stderr, "polis serve: refused %s (and %u more in the last second)\n", msg,
                ws->refused_unsaid[raw]);
    else
        fprintf(stderr, "polis serve: refused %s\n", msg);
    ws->refused_said[raw] = now;
    ws->refused_unsaid[raw] = 0;
}

/* A WebSocket handshake: from this server's page (or an allowed one), within --max-pages. */
static int admit_page(struct lws *wsi, cli_ws *ws)
{
    char why[512];
    if (!cli_http_allowed(wsi, ws->cfg.origins, why, sizeof why)) {
        refused(ws, false, "a WebSocket: %s", why);
        return 1;
    }
    if (ws->n_pages >= ws->cfg.max_pages) {
        refused(ws, false, "a WebSocket: %d pages are connected (--max-pages)", ws->n_pages);
        return 1;
    }
    return 0;
}

/* ---- the protocols --------------------------------------------------------------------------- */

static int on_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    if (reason == LWS_CALLBACK_FILTER_HTTP_CONNECTION) {
        char why[512];
        if (cli_http_allowed(wsi, server_of(wsi)->cfg.origins, why, sizeof why)) return 0;
        return cli_http_forbid(wsi, why) ? -1 : 1;
    }
    if (reason == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION) {
        /* a WebSocket naming no protocol (or "http") lands here: it would be an idle
         * connection that no Origin check, no --max-pages and no timeout covers */
        refused(server_of(wsi), false,
                "a WebSocket: it names no protocol of this server (polis-follow, polis-seat)");
        return 1;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* Writes the follower's next chunk: -1 drops it. */
static int follow_write(cli_ws *ws, follower *f)
{
    const char *src = NULL;
    size_t n = 0;
    for (;;) {
        if (f->phase == 0) {
            size_t total = 0;
            const char *h = ws->h.stream_header(ws->h.ud, &total);
            if (f->pos < total) {
                src = h + f->pos;
                n = total - f->pos;
                break;
            }
            size_t rl = 0;
            const char *r = ws->h.stream_join(ws->h.ud, &rl, &f->at);
            if (rl && !(f->reset = malloc(rl))) return -1;
            if (rl) memcpy(f->reset, r, rl);
            f->reset_len = rl;
            f->phase = 1;
            f->pos = 0;
        } else if (f->phase == 1) {
            if (f->pos < f->reset_len) {
                src = f->reset + f->pos;
                n = f->reset_len - f->pos;
                break;
            }
            free(f->reset);
            f->reset = NULL;
            f->phase = 2;
        } else {
            if (f->at == UINT64_MAX) return -1; /* dropped by the sweep */
            src = ws->h.stream_from(ws->h.ud, f->at, &n);
            if (!src) {
                fprintf(stderr, "polis serve: dropped a watching page: it fell too far behind the "
                                "stream\n");
                return -1;
            }
            break;
        }
    }
    if (n == 0) return 0; /* caught up */
    if (n > CHUNK) n = CHUNK;
    memcpy(ws->wbuf + LWS_PRE, src, n);
    if (lws_write(f->wsi, ws->wbuf + LWS_PRE, n, LWS_WRITE_BINARY) < (int)n) return -1;
    if (f->phase == 2)
        f->at += n;
    else
        f->pos += n;
    f->stalled_since = 0; /* progress */
    lws_callback_on_writable(f->wsi);
    return 0;
}

static int on_follow(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    (void)in;
    (void)len;
    follower *f = user;
    cli_ws *ws = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return admit_page(wsi, ws);
    case LWS_CALLBACK_ESTABLISHED:
        memset(f, 0, sizeof *f);
        f->wsi = wsi;
        f->next = ws->followers;
        if (f->next) f->next->prev = f;
        ws->followers = f;
        ws->n_pages++;
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: return follow_write(ws, f);
    case LWS_CALLBACK_CLOSED:
        if (!f->wsi) return 0;
        if (f->prev)
            f->prev->next = f->next;
        else
            ws->followers = f->next;
        if (f->next) f->next->prev = f->prev;
        free(f->reset);
        memset(f, 0, sizeof *f);
        ws->n_pages--;
        return 0;
    default: return 0;
    }
}

static void conn_start(cli_ws_conn *c, struct lws *wsi, cli_ws *ws, bool raw)
{
    memset(c, 0, sizeof *c);
    c->wsi = wsi;
    c->ws = ws;
    c->raw = raw;
    c->next = ws->conns;
    if (c->next) c->next->prev = c;
    ws->conns = c;
}

static void conn_end(cli_ws_conn *c)
{
    cli_ws *ws = c->ws;
    if (!ws) return;
    if (c->counted) {
        if (c->raw)
            ws->n_clients--;
        else
            ws->n_pages--;
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        ws->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    free(c->out);
    free(c->in);
    memset(c, 0, sizeof *c);
}

/* A TCP client idle too long: told why, as `polis serve --tcp` does, then closed once that is
 * sent (or dropped when it is not taken). */
static void conn_idle_expired(cli_ws_conn *c)
{
    char why[160];
    snprintf(why, sizeof why, "no request in %d s (--idle-timeout)", c->ws->cfg.idle_timeout);
    c->idle_since = 0;
    fprintf(stderr, "polis serve: dropped %s: %s\n", who(c), why);
    char *line = c->ws->h.error_line ? c->ws->h.error_line("idle_timeout", why) : NULL;
    bool queued = line && enqueue(c, line, strlen(line));
    free(line);
    if (queued)
        cli_ws_close_when_sent(c);
    else
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

/* Bytes written to wsi's socket that the kernel has not sent yet (the peer does not read). */
static int kernel_unsent(struct lws *wsi)
{
    int n = 0;
#ifdef SIOCOUTQ
    lws_sockfd_type fd = lws_get_socket_fd(wsi);
    if (fd < 0 || ioctl(fd, SIOCOUTQ, &n) != 0) n = 0;
#else
    (void)wsi;
#endif
    return n;
}

/* Whether output waits for a connection — in its queue (or, for a follower, in the stream),
 * held by libwebsockets (which then stops reading the connection), or unsent in the kernel —
 * with no progress for --write-timeout. Since when is kept in *since (0 when nothing waits),
 * the kernel's unsent bytes in *unsent (fewer of them is progress: the peer reads). */
static bool stalled_too_long(const cli_ws *ws, struct lws *wsi, bool waits, lws_usec_t now,
                             lws_usec_t *since, int *unsent)
{
    int q = kernel_unsent(wsi);
    if (!waits && !lws_partial_buffered(wsi) && q == 0) {
        *since = 0;
        *unsent = 0;
        return false;
    }
    if (!*since || q < *unsent) *since = now;
    *unsent = q;
    return ws->cfg.write_timeout > 0 &&
           now - *since >= (lws_usec_t)ws->cfg.write_timeout * LWS_US_PER_SEC;
}

/* Every SWEEP_US: the connections past their time. */
static void sweep(lws_sorted_usec_list_t *sul)
{
    cli_ws *ws = lws_container_of(sul, cli_ws, sweep);
    lws_usec_t now = lws_now_usecs();
    char why[160];
    snprintf(why, sizeof why, "it took none of its output for %d s (--write-timeout)",
             ws->cfg.write_timeout);
    for (cli_ws_conn *c = ws->conns; c; c = c->next) {
        if (c->dropped) continue;
        bool waits = c->raw ? c->out_sent < c->out_len : c->out_len > 0;
        if (stalled_too_long(ws, c->wsi, waits, now, &c->stalled_since, &c->unsent))
            drop(c, why);
        else if (c->idle_since && ws->cfg.idle_timeout > 0 && !c->closing &&
                 now - c->idle_since >= (lws_usec_t)ws->cfg.idle_timeout * LWS_US_PER_SEC)
            conn_idle_expired(c);
    }
    for (follower *f = ws->followers; f; f = f->next) {
        if (f->at == UINT64_MAX) continue; /* being dropped */
        size_t n = 0;
        bool behind = f->phase < 2;
        if (f->phase == 2 && !ws->h.stream_from(ws->h.ud, f->at, &n)) {
            fprintf(stderr, "polis serve: dropped a watching page: it fell too far behind the "
                            "stream\n");
            f->at = UINT64_MAX; /* said once */
            lws_set_timeout(f->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
            continue;
        }
        behind |= n > 0;
        if (stalled_too_long(ws, f->wsi, behind, now, &f->stalled_since, &f->unsent)) {
            fprintf(stderr, "polis serve: dropped a watching page: %s\n", why);
            f->at = UINT64_MAX;
            lws_set_timeout(f->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        }
    }
    lws_sul_schedule(ws->ctx, 0, &ws->sweep, sweep, SWEEP_US);
}

static int on_seat(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    cli_ws_conn *c = user;
    cli_ws *ws = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return admit_page(wsi, ws);
    case LWS_CALLBACK_ESTABLISHED:
        conn_start(c, wsi, ws, false);
        c->counted = true;
        ws->n_pages++;
        c->game = ws->h.seat_open(ws->h.ud, c);
        return c->game ? 0 : -1;
    case LWS_CALLBACK_RECEIVE: {
        if (!c->game) return -1;
        if (!c->in_too_long) {
            if (c->in_len + len > CLI_WS_MAX_MESSAGE) {
                c->in_too_long = true;
            } else {
                char *p = realloc(c->in, c->in_len + len + 1);
                if (!p) return -1;
                c->in = p;
                memcpy(c->in + c->in_len, in, len);
                c->in_len += len;
            }
        }
        if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) return 0;
        if (lws_frame_is_binary(wsi)) {
            static const char refused[] = "{\"type\":\"error\",\"code\":\"bad_request\","
                                          "\"message\":\"a message is JSON text, not a binary "
                                          "message\"}";
            c->in_len = 0;
            c->in_too_long = false;
            enqueue(c, refused, sizeof refused - 1);
            return 0;
        }
        if (c->in_too_long)
            ws->h.seat_message(ws->h.ud, c->game, NULL, 0, true);
        else
            ws->h.seat_message(ws->h.ud, c->game, c->in ? c->in : "", c->in_len, false);
        c->in_len = 0;
        c->in_too_long = false;
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (c->dropped) return -1;
        if (!c->out_len) return 0;
        size_t n = strlen(c->out);
        unsigned char *buf = n <= CHUNK ? ws->wbuf : malloc(LWS_PRE + n);
        if (!buf) return -1;
        memcpy(buf + LWS_PRE, c->out, n);
        int w = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
        if (buf != ws->wbuf) free(buf);
        if (w < (int)n) return -1;
        memmove(c->out, c->out + n + 1, c->out_len - n - 1);
        c->out_len -= n + 1;
        if (c->out_len) lws_callback_on_writable(wsi);
        c->stalled_since = 0; /* progress */
        conn_idle(c);
        return 0;
    }
    case LWS_CALLBACK_CLOSED:
        if (c->game) ws->h.seat_close(ws->h.ud, c->game);
        conn_end(c);
        return 0;
    default: return 0;
    }
}

static int on_client(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    cli_ws_conn *c = user;
    cli_ws *ws = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_RAW_ADOPT:
        conn_start(c, wsi, ws, true);
        if (ws->n_clients >= ws->cfg.max_clients) {
            char msg[160];
            snprintf(msg, sizeof msg, "the server already has %d clients (--max-clients)",
                     ws->cfg.max_clients);
            refused(ws, true, "a TCP client: %s", msg);
            char *line = ws->h.error_line ? ws->h.error_line("server_full", msg) : NULL;
            if (line) enqueue(c, line, strlen(line));
            free(line);
            cli_ws_close_when_sent(c);
            return 0;
        }
        c->counted = true;
        ws->n_clients++;
        c->game = ws->h.client_open(ws->h.ud, c);
        if (!c->game) return -1;
        conn_idle(c);
        return 0;
    case LWS_CALLBACK_RAW_RX: return c->game ? ws->h.client_data(ws->h.ud, c->game, in, len) : 0;
    case LWS_CALLBACK_RAW_WRITEABLE: {
        if (c->dropped) return -1;
        if (c->out_sent == c->out_len) return c->closing ? -1 : 0;
        size_t n = c->out_len - c->out_sent;
        if (n > CHUNK) n = CHUNK;
        memcpy(ws->wbuf + LWS_PRE, c->out + c->out_sent, n);
        if (lws_write(wsi, ws->wbuf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n) return -1;
        c->out_sent += n;
        if (c->out_sent == c->out_len) c->out_sent = c->out_len = 0;
        if (c->out_len || c->closing) lws_callback_on_writable(wsi);
        c->stalled_since = 0; /* progress */
        conn_idle(c);
        return 0;
    }
    case LWS_CALLBACK_RAW_CLOSE:
        if (c->game) ws->h.client_close(ws->h.ud, c->game);
        conn_end(c);
        return 0;
    default: return 0;
    }
}

/* ---- the server -------------------------------------------------------------------------------
 */

/* Receive buffers are small (libwebsockets keeps one per WebSocket connection): a seat page's
 * message is put together in the connection's own buffer, up to CLI_WS_MAX_MESSAGE. */
static const struct lws_protocols PAGE_PROTOCOLS[] = {
    {"http", on_http, 0, 0, 0, NULL, 0},
    {"polis-follow", on_follow, sizeof(follower), 512, 0, NULL, 0},
    {"polis-seat", on_seat, sizeof(cli_ws_conn), 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static const struct lws_protocols CLIENT_PROTOCOLS[] = {
    {"polis-agent", on_client, sizeof(cli_ws_conn), 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

cli_ws *cli_ws_open(const cli_ws_config *cfg, const cli_ws_handlers *h, int *http_bound,
                    int *tcp_bound)
{
    cli_ws *ws = calloc(1, sizeof *ws);
    if (!ws) {
        fprintf(stderr, "polis: serve: out of memory\n");
        return NULL;
    }
    ws->h = *h;
    ws->cfg = *cfg;
    ws->follow = &PAGE_PROTOCOLS[1];
    ws->mount.mountpoint = "/";
    ws->mount.mountpoint_len = 1;
    ws->mount.origin = cfg->viewer;
    ws->mount.def = "index.html";
    ws->mount.origin_protocol = LWSMPRO_FILE;
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info ci;
    memset(&ci, 0, sizeof ci);
    ci.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6;
    ci.user = ws;
    /* a connection that has not finished its request, or keeps an idle HTTP connection open,
     * is closed after this long */
    ci.timeout_secs = 10;
    ci.keepalive_timeout = 5;
    ws->ctx = lws_create_context(&ci);
    if (!ws->ctx) {
        fprintf(stderr, "polis: serve: cannot start libwebsockets\n");
        free(ws);
        return NULL;
    }
    ci.port = cfg->http_port;
    ci.iface = cfg->http_host;
    ci.protocols = PAGE_PROTOCOLS;
    ci.mounts = &ws->mount;
    ci.vhost_name = "localhost";
    struct lws_vhost *vh = lws_create_vhost(ws->ctx, &ci);
    *http_bound = vh ? lws_get_vhost_listen_port(vh) : 0;
    if (!vh || *http_bound <= 0) {
        fprintf(stderr, "polis: serve: cannot listen on %s:%d\n", cfg->http_host, cfg->http_port);
        cli_ws_free(ws);
        return NULL;
    }
    *tcp_bound = 0;
    if (cfg->tcp_host) {
        /* the agent-protocol clients: raw TCP connections in the same loop */
        struct lws_context_creation_info ti;
        memset(&ti, 0, sizeof ti);
        ti.options =
            LWS_SERVER_OPTION_ADOPT_APPLY_LISTEN_ACCEPT_CONFIG | LWS_SERVER_OPTION_DISABLE_IPV6;
        ti.listen_accept_role = "raw-skt";
        ti.listen_accept_protocol = "polis-agent";
        ti.port = cfg->tcp_port;
        ti.iface = cfg->tcp_host;
        ti.protocols = CLIENT_PROTOCOLS;
        ti.vhost_name = "agents";
        struct lws_vhost *tv = lws_create_vhost(ws->ctx, &ti);
        *tcp_bound = tv ? lws_get_vhost_listen_port(tv) : 0;
        if (!tv || *tcp_bound <= 0) {
            fprintf(stderr, "polis: serve: --tcp: cannot listen on %s:%d\n", cfg->tcp_host,
                    cfg->tcp_port);
            cli_ws_free(ws);
            return NULL;
        }
    }
    lws_sul_schedule(ws->ctx, 0, &ws->sweep, sweep, SWEEP_US);
    return ws;
}

void cli_ws_run(cli_ws *ws) { cli_lws_run(ws->ctx); }

void cli_ws_free(cli_ws *ws)
{
    if (!ws) return;
    if (ws->ctx) lws_context_destroy(ws->ctx);
    free(ws);
}

#endif
