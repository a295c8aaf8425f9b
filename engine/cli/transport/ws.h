/* engine/cli/transport/ws.h — the connections of a live game over libwebsockets (ws.c): one
 * event loop serving the viewer's files over HTTP, the record stream to every page that follows
 * it (WebSocket protocol "polis-follow"), the pages that take seats ("polis-seat", one JSON
 * text message each way) and agent-protocol clients over raw TCP (JSON lines), plus a timer.
 * The game (session/live.c) is handed each connection's messages through cli_ws_handlers and
 * answers with cli_ws_send. Every connection's memory is bounded whatever its peer does
 * (docs/security.md, "Live servers"): what is queued for it, how far behind the stream it may
 * fall, how long it may leave output untaken or (a TCP client) send no request, and how many
 * connections there are. Only with libwebsockets (POLIS_HAVE_LWS). Part of the CLI, not of
 * libpolis. */
#ifndef POLIS_CLI_WS_H
#define POLIS_CLI_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/http.h"

/* A page's message is at most this long; a longer one is handed over as too long. */
enum { CLI_WS_MAX_MESSAGE = 64 * 1024 };
/* What may wait to be sent to one seat page or TCP client; a connection that lets more pile up
 * (it does not read) is dropped. */
enum { CLI_WS_MAX_QUEUE = 1 << 20 };

typedef struct cli_ws cli_ws;           /* the server */
typedef struct cli_ws_conn cli_ws_conn; /* one seat page or TCP client */

/* What the game does with its connections. `game` is what open returned for the connection. */
typedef struct cli_ws_handlers {
    void *ud;
    /* a page connected with "polis-seat"; NULL refuses it (the connection closes) */
    void *(*seat_open)(void *ud, cli_ws_conn *c);
    /* one whole message of a page, or `too_long` (text NULL) when it was over the limit */
    void (*seat_message)(void *ud, void *game, const char *text, size_t len, bool too_long);
    void (*seat_close)(void *ud, void *game);
    /* an agent-protocol client connected over TCP */
    void *(*client_open)(void *ud, cli_ws_conn *c);
    /* bytes a client sent; -1 closes the connection */
    int (*client_data)(void *ud, void *game, const char *data, size_t len);
    void (*client_close)(void *ud, void *game);
    /* an agent-protocol error line (malloc'ed, without '\n') for a TCP client the transport
     * drops: "server_full", "idle_timeout" */
    char *(*error_line)(const char *code, const char *message);
    /* The record stream, in three parts. A follower is sent the header line, then the reset
     * line of the episode in play and the stream from `at` on (its latest keyframe: a late
     * watcher starts there); the stream's bytes from `at` on, NULL when they are no longer
     * kept (the follower fell too far behind). The pointers live until the stream grows. */
    const char *(*stream_header)(void *ud, size_t *len);
    const char *(*stream_join)(void *ud, size_t *len, uint64_t *at);
    const char *(*stream_from)(void *ud, uint64_t at, size_t *len);
    /* the timer of cli_ws_timer fired */
    void (*timer)(void *ud);
} cli_ws_handlers;

/* Where to listen and the limits. HOSTs are IPv4 addresses. The strings must outlive the
 * server. */
typedef struct cli_ws_config {
    const char *viewer; /* the viewer's directory, served at / */
    const char *http_host;
    int http_port;        /* 0: any free port */
    const char *tcp_host; /* NULL: no TCP clients */
    int tcp_port;
    const cli_origins *origins; /* who may use the pages (Host, Origin) */
    int max_pages;              /* WebSocket connections at once */
    int max_clients;            /* TCP clients at once */
    int idle_timeout;  /* seconds a TCP client with no request waiting may send none; 0: none */
    int write_timeout; /* seconds a connection may leave its output untaken; 0: none */
} cli_ws_config;

/* Starts listening; the ports bound go to *http_bound and *tcp_bound. NULL after printing why
 * ("polis: serve: cannot listen on ..."). */
cli_ws *cli_ws_open(const cli_ws_config *cfg, const cli_ws_handlers *h, int *http_bound,
                    int *tcp_bound);
/* Serves until SIGINT or SIGTERM. */
void cli_ws_run(cli_ws *ws);
/* Closes every connection (each closes through its handler) and the server; NULL is ignored. */
void cli_ws_free(cli_ws *ws);

/* Queues text for c: a page's next message, or a client's next line (a '\n' is added).
 * False when it is not queued: memory ran out, or c let more than CLI_WS_MAX_QUEUE bytes pile
 * up and is being dropped (said on stderr). */
bool cli_ws_send(cli_ws_conn *c, const char *text);
/* Closes c once what is queued for it is sent. */
void cli_ws_close_when_sent(cli_ws_conn *c);
/* Stops (hold) or resumes reading from c. */
void cli_ws_hold(cli_ws_conn *c, bool hold);
/* A TCP client has a request waiting for the game (true: its idle timeout does not run). */
void cli_ws_waiting(cli_ws_conn *c, bool waiting);
/* The stream grew: send the followers what is new. */
void cli_ws_stream_grew(cli_ws *ws);
/* Calls handlers.timer after `us` microseconds (one timer: a later call replaces it). */
void cli_ws_timer(cli_ws *ws, int64_t us);

#endif
