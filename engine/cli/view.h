/* engine/cli/view.h — `polis view` (view.c), called from the CLI's main (main.c). */
#ifndef POLIS_CLI_VIEW_H
#define POLIS_CLI_VIEW_H

/* The text of `polis help view`. */
extern const char CLI_VIEW_HELP[];

/* Runs `polis view` with the whole argv (argv[1] is "view"). Returns the exit status: 0 after
 * an interrupt, 1 the file, the viewer or the socket failed (or no libwebsockets), 2 bad usage. */
int cli_view_main(int argc, char **argv);

#include <stdbool.h>

/* The viewer's directory (sdk/viewer, installed to share/polis/viewer) as a real path into
 * out (PATH_MAX bytes): $POLIS_VIEWER_DIR, beside the executable, the source tree, the install
 * prefix. False when none holds index.html. Also used by `polis serve --http` (live.c). */
bool cli_find_viewer(char *out);

#ifdef POLIS_HAVE_LWS
struct lws_context;
/* Serves ctx until SIGINT or SIGTERM (or until libwebsockets fails): the loop of `polis view`
 * and `polis serve --http`. */
void cli_lws_run(struct lws_context *ctx);
#endif

#endif
