/* engine/cli/transport/http.h — HTTP and WebSocket over libwebsockets (http.c): the viewer's
 * files, the event loop, and the server of `polis view`. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_HTTP_H
#define POLIS_CLI_HTTP_H

#include <stdbool.h>

/* The viewer's directory (sdk/viewer, installed to share/polis/viewer) as a real path into
 * out (PATH_MAX bytes): $POLIS_VIEWER_DIR, beside the executable, the source tree, the install
 * prefix. False when none holds index.html. */
bool cli_find_viewer(char *out);

/* Serves the viewer's directory and the recording `file` on 127.0.0.1:port (0: any free port),
 * with follow the "polis-follow" WebSocket protocol that streams the file as it grows; prints
 * the page's URL on stdout. Returns the exit status when interrupted (0) or when serving fails
 * (1, said on stderr; also without libwebsockets). */
int cli_http_serve_recording(const char *viewer, const char *file, int port, bool follow);

#ifdef POLIS_HAVE_LWS
struct lws_context;
/* Serves ctx until SIGINT or SIGTERM (or until libwebsockets fails): the loop of `polis view`
 * and `polis serve --http`. */
void cli_lws_run(struct lws_context *ctx);
#endif

#endif
