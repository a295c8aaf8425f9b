/*
 * engine/cli/cmd/view.c — `polis view FILE [--port P] [--follow]`: serves the browser viewer
 * (sdk/viewer, installed to share/polis/viewer) and one recording on 127.0.0.1 over HTTP
 * (transport/http.c) and prints the URL that opens the recording in it. Built without
 * libwebsockets, `polis view` says so and exits 1.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "transport/http.h"
#include "util/file.h"

static const cli_use USES[] = {{.id = CLI_OPT_PORT, .def = "0"},
                               {.id = CLI_OPT_ALLOW_ORIGIN},
                               {.id = CLI_OPT_FOLLOW,
                                .help =
                                    "stream FILE to the page over a WebSocket as it grows, for a\n"
                                    "recording still being written (polis run --record FILE): the\n"
                                    "page shows each tick as it arrives"}};

static int view_main(cli_args *a)
{
    const char *file = a->pos[0];
    int64_t port = cli_num(a, CLI_OPT_PORT);
    bool follow = cli_has(a, CLI_OPT_FOLLOW);
    char why[256];
    int fd = cli_file_open(file, 0, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "polis: view: %s: %s\n", file, why);
        return EXIT_ENV;
    }
    close(fd);
    char viewer[PATH_MAX];
    if (!cli_find_viewer(viewer)) {
        fprintf(stderr, "polis: view: the viewer's files (index.html) are not in %s\n",
                getenv("POLIS_VIEWER_DIR") && *getenv("POLIS_VIEWER_DIR")
                    ? "$POLIS_VIEWER_DIR"
                    : "../share/polis/viewer beside polis, " POLIS_VIEWER_SOURCE_DIR
                      " or " POLIS_VIEWER_INSTALL_DIR);
        return EXIT_ENV;
    }
    cli_origins origins = {.allow = a->v[CLI_OPT_ALLOW_ORIGIN].list,
                           .n_allow = a->v[CLI_OPT_ALLOW_ORIGIN].n};
    return cli_http_serve_recording(viewer, file, (int)port, follow, &origins);
}

const cli_command CLI_CMD_VIEW = {
    .name = "view",
    .args = "FILE",
    .summary = "watch a recording in the browser viewer (served on 127.0.0.1)",
    .about =
        "Serves the browser viewer and the recording FILE (a .jsonl or .jsonl.gz written with\n"
        "--record, docs/recording.md) on 127.0.0.1 and prints the URL that opens it; open the URL\n"
        "in a browser. Runs until interrupted (Ctrl-C). Only the viewer's files and FILE are\n"
        "served, nothing else. The viewer also opens a file chosen or dropped on its page.\n",
    CLI_USES(USES),
    .notes = "The viewer's files are found in $POLIS_VIEWER_DIR, else beside the executable\n"
             "(../share/polis/viewer), else in the source tree, else under the install prefix.\n"
             "Docs: docs/viewer.md.\n",
    .pos_name = {"FILE"},
    .pos_what = {"a recording, .jsonl or .jsonl.gz"},
    .n_pos = 1,
    .n_required = 1,
    .run = view_main,
};
