/* engine/cli/session/live.h — a live game (live.c): one env played by people in the browser,
 * agent-protocol clients over TCP and the scenario's policies together, started by `polis
 * serve SCENARIO --http [HOST:]PORT` (cmd/serve.c). Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_LIVE_H
#define POLIS_CLI_LIVE_H

#include <stdbool.h>
#include <stdint.h>

/* What the command line asks of the game (docs/viewer.md, "Live play"). */
typedef struct cli_live_args {
    const char *scenario; /* the scenario file */
    const char *http;     /* [HOST:]PORT of the page */
    const char *tcp;      /* [HOST:]PORT of the agent-protocol clients, or NULL */
    const char *record;   /* --record FILE, or NULL */
    const char *plugin_path;
    const char *policy;     /* the seats nobody names */
    int64_t tick_ms;        /* -1: the scenario's */
    int64_t episodes;       /* -1: the scenario's */
    int64_t keyframe_every; /* 0: the recorder's default */
    uint64_t seed;
    bool has_seed;
    bool allow_remote;
    const char *const *seat_arg; /* the --seat values AGENT=WHO, checked once the env exists */
    int n_seat_args;
    const char *overrides_text; /* what the env is created with; NULL: none */
} cli_live_args;

/* Plays the game until SIGINT or SIGTERM. Returns the exit status: 0 after an interrupt, 1 the
 * scenario, the viewer or the socket failed (or polis was built without libwebsockets), 2 a
 * seat or address the command line gave is refused. */
int cli_live_run(const cli_live_args *a);

#endif
