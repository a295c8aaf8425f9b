/*
 * engine/cli/transport/ws.c — a live game's connections over libwebsockets (ws.h).
 *
 * One context, one thread: the viewer's directory as an HTTP file mount, three protocols on
 * the page's vhost ("http", "polis-follow", "polis-seat") and, with a TCP address, a second
 * vhost whose connections are raw sockets ("polis-agent"). Every connection keeps its own
 * queue of what is to be written and writes when libwebsockets says it can, so a slow reader
 * holds up no one else. The record stream belongs to the game: a follower is sent it from its
 * start and then whatever it grew by, in binary messages of at most STREAM_CHUNK bytes, so any
 * number of watchers see identical bytes.
 */
#include "transport/ws.h"

#ifdef POLIS_HAVE_LWS

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "transport/http.h"

enum { STREAM_CHUNK = 64 * 1024 };

struct cli_ws {
    struct lws_context *ctx;
    cli_ws_handlers h;
    lws_sorted_usec_list_t sul;
    const struct lws_protocols *follow;
    struct lws_http_mount mount; /* libwebsockets keeps pointing at it */
};

struct cli_ws_conn {
    struct lws *wsi;
    void *game;
    bool raw;    /* a TCP client (lines), else a page (messages) */
    char *out;   /* queued: a page's messages each ending in '\0', or a client's bytes */
    size_t out_len, out_sent, out_cap;
    bool closing; /* close once the queue is sent */
    char *in;     /* a page's message arriving in fragments */
    size_t in_len;
    bool in_too_long;
    unsigned char buf[LWS_PRE + STREAM_CHUNK];
};

typedef struct follower {
    size_t sent; /* bytes of the stream sent */
    unsigned char buf[LWS_PRE + STREAM_CHUNK];
} follower;

static cli_ws *server_of(struct lws *wsi) { return lws_context_user(lws_get_context(wsi)); }

bool cli_ws_send(cli_ws_conn *c, const char *text)
{
    size_t n = strlen(text);
    if (c->out_len + n + 1 > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n + 1) cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p) return false;
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, text, n);
    c->out[c->out_len + n] = c->raw ? '\n' : '\0';
    c->out_len += n + 1;
    lws_callback_on_writable(c->wsi);
    return true;
}

void cli_ws_close_when_sent(cli_ws_conn *c)
{
    c->closing = true;
    lws_callback_on_writable(c->wsi);
}

void cli_ws_hold(cli_ws_conn *c, bool hold)
{
    if (c->wsi) lws_rx_flow_control(c->wsi, !hold);
}

void cli_ws_stream_grew(cli_ws *ws)
{
    if (ws && ws->ctx) lws_callback_on_writable_all_protocol(ws->ctx, ws->follow);
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

/* ---- the protocols --------------------------------------------------------------------------- */

static int on_follow(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    (void)in;
    (void)len;
    follower *f = user;
    cli_ws *ws = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        f->sent = 0;
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        size_t total = 0;
        const char *stream = ws->h.stream(ws->h.ud, &total);
        size_t n = total - f->sent;
        if (n == 0) return 0;
        if (n > STREAM_CHUNK) n = STREAM_CHUNK;
        memcpy(f->buf + LWS_PRE, stream + f->sent, n);
        if (lws_write(wsi, f->buf + LWS_PRE, n, LWS_WRITE_BINARY) < (int)n) return -1;
        f->sent += n;
        if (f->sent < total) lws_callback_on_writable(wsi);
        return 0;
    }
    default: return 0;
    }
}

static void conn_start(cli_ws_conn *c, struct lws *wsi, bool raw)
{
    memset(c, 0, offsetof(cli_ws_conn, buf));
    c->wsi = wsi;
    c->raw = raw;
}

static void conn_end(cli_ws_conn *c)
{
    free(c->out);
    free(c->in);
    memset(c, 0, offsetof(cli_ws_conn, buf));
}

static int on_seat(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    cli_ws_conn *c = user;
    cli_ws *ws = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        conn_start(c, wsi, false);
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
        if (c->in_too_long)
            ws->h.seat_message(ws->h.ud, c->game, NULL, 0, true);
        else
            ws->h.seat_message(ws->h.ud, c->game, c->in ? c->in : "", c->in_len, false);
        c->in_len = 0;
        c->in_too_long = false;
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (!c->out_len) return 0;
        size_t n = strlen(c->out);
        unsigned char *buf = malloc(LWS_PRE + n);
        if (!buf) return -1;
        memcpy(buf + LWS_PRE, c->out, n);
        int w = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
        free(buf);
        if (w < (int)n) return -1;
        memmove(c->out, c->out + n + 1, c->out_len - n - 1);
        c->out_len -= n + 1;
        if (c->out_len) lws_callback_on_writable(wsi);
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
        conn_start(c, wsi, true);
        c->game = ws->h.client_open(ws->h.ud, c);
        return c->game ? 0 : -1;
    case LWS_CALLBACK_RAW_RX: return c->game ? ws->h.client_data(ws->h.ud, c->game, in, len) : -1;
    case LWS_CALLBACK_RAW_WRITEABLE: {
        if (c->out_sent == c->out_len) return c->closing ? -1 : 0;
        size_t n = c->out_len - c->out_sent;
        if (n > STREAM_CHUNK) n = STREAM_CHUNK;
        memcpy(c->buf + LWS_PRE, c->out + c->out_sent, n);
        if (lws_write(wsi, c->buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n) return -1;
        c->out_sent += n;
        if (c->out_sent == c->out_len) c->out_sent = c->out_len = 0;
        if (c->out_len || c->closing) lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_RAW_CLOSE:
        if (c->game) ws->h.client_close(ws->h.ud, c->game);
        conn_end(c);
        return 0;
    default: return 0;
    }
}

/* ---- the server ------------------------------------------------------------------------------- */

static const struct lws_protocols PAGE_PROTOCOLS[] = {
    {"http", lws_callback_http_dummy, 0, 0, 0, NULL, 0},
    {"polis-follow", on_follow, sizeof(follower), 0, 0, NULL, 0},
    {"polis-seat", on_seat, sizeof(cli_ws_conn), CLI_WS_MAX_MESSAGE, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static const struct lws_protocols CLIENT_PROTOCOLS[] = {
    {"polis-agent", on_client, sizeof(cli_ws_conn), STREAM_CHUNK, 0, NULL, 0},
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
    if (!vh) {
        fprintf(stderr, "polis: serve: cannot listen on %s:%d\n", cfg->http_host, cfg->http_port);
        cli_ws_free(ws);
        return NULL;
    }
    *http_bound = lws_get_vhost_listen_port(vh);
    *tcp_bound = 0;
    if (cfg->tcp_host) {
        /* the agent-protocol clients: raw TCP connections in the same loop */
        struct lws_context_creation_info ti;
        memset(&ti, 0, sizeof ti);
        ti.options = LWS_SERVER_OPTION_ADOPT_APPLY_LISTEN_ACCEPT_CONFIG |
                     LWS_SERVER_OPTION_DISABLE_IPV6;
        ti.listen_accept_role = "raw-skt";
        ti.listen_accept_protocol = "polis-agent";
        ti.port = cfg->tcp_port;
        ti.iface = cfg->tcp_host;
        ti.protocols = CLIENT_PROTOCOLS;
        ti.vhost_name = "agents";
        struct lws_vhost *tv = lws_create_vhost(ws->ctx, &ti);
        if (!tv) {
            fprintf(stderr, "polis: serve: --tcp: cannot listen on %s:%d\n", cfg->tcp_host,
                    cfg->tcp_port);
            cli_ws_free(ws);
            return NULL;
        }
        *tcp_bound = lws_get_vhost_listen_port(tv);
    }
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
