/* engine/cli/transport/http.h — HTTP and WebSocket over libwebsockets (http.c): the viewer's
 * files, the event loop, and the server of `polis view`. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_HTTP_H
#define POLIS_CLI_HTTP_H

#include <stdbool.h>

/* The viewer's directory (sdk/viewer, installed to share/polis/viewer) as a real path into
 * out (PATH_MAX bytes): $POLIS_VIEWER_DIR, beside the executable, the source tree, the install
 * prefix. False when none holds index.html. */
bool cli_find_viewer(char *out);

/* Who may use a server's pages and WebSockets (docs/security.md, "Pages and origins"): a
 * request's Host must name the server — an IP address, "localhost", or the host of an origin
 * allowed here — so a page on another name that resolves to the server (DNS rebinding) is
 * refused; and its Origin, when a browser sends one, must be the server's own page
 * ("http://" + Host) or one allowed here. "*" allows every origin and host. */
typedef struct cli_origins {
    const char *const *allow; /* --allow-origin values ("http://HOST[:PORT]" or "*") */
    int n_allow;
} cli_origins;

/* Serves the viewer's directory and the recording `file` on 127.0.0.1:port (0: any free port),
 * with follow the "polis-follow" WebSocket protocol that streams the file as it grows; prints
 * the page's URL on stdout. Requests are checked against `origins`. Returns the exit status
 * when interrupted (0) or when serving fails (1, said on stderr; also without
 * libwebsockets). */
int cli_http_serve_recording(const char *viewer, const char *file, int port, bool follow,
                             const cli_origins *origins);

#ifdef POLIS_HAVE_LWS
struct lws;
struct lws_context;
/* Serves ctx until SIGINT or SIGTERM (or until libwebsockets fails): the loop of `polis view`
 * and `polis serve --http`. */
void cli_lws_run(struct lws_context *ctx);
/* SIGINT and SIGTERM from now on end cli_lws_run's loop (cli_lws_run sets this too): call it
 * before printing the address a caller may stop the server at once after reading. */
void cli_lws_catch_signals(void);
/* Whether the request or WebSocket handshake on wsi may go on (cli_origins); false with the
 * reason in why ("Origin http://evil.example is not this server's page"). */
bool cli_http_allowed(struct lws *wsi, const cli_origins *o, char *why, size_t cap);
/* Refuses the HTTP request on wsi: 403 with why as its body. Returns what the callback
 * returns. */
int cli_http_forbid(struct lws *wsi, const char *why);
#endif

#endif
