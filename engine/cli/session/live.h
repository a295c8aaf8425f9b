/* engine/cli/session/live.h — a live game (live.c): one env played by people in the browser,
 * agent-protocol clients over TCP and the scenario's policies together, started by `polis
 * serve SCENARIO --http [HOST:]PORT` (cmd/serve.c), which plays it over transport/ws.c's
 * connections. The game knows its connections only as `void *conn` and a cli_live_link. Part
 * of the CLI, not of libpolis. */
#ifndef POLIS_CLI_LIVE_H
#define POLIS_CLI_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the command line asks of the game (docs/viewer.md, "Live play"). */
typedef struct cli_live_args {
    const char *scenario; /* the scenario file */
    const char *tcp;      /* [HOST:]PORT of the agent-protocol clients, or NULL */
    const char *record;   /* --record FILE, or NULL */
    const char *plugin_path;
    const char *policy;     /* the seats nobody names */
    int64_t tick_ms;        /* -1: the scenario's */
    int64_t episodes;       /* -1: the scenario's */
    int64_t keyframe_every; /* 0: the recorder's default */
    uint64_t seed;
    bool has_seed;
    const char *const *seat_arg; /* the --seat values AGENT=WHO, checked once the env exists */
    int n_seat_args;
    const char *overrides_text; /* what the env is created with; NULL: none */
} cli_live_args;

typedef struct cli_live cli_live;

/* What the game asks of the connections it is played over; `conn` is what the connection's
 * events below were given. cmd/serve.c hands it transport/ws.c's. */
typedef struct cli_live_link {
    void *ud;
    bool (*send)(void *conn, const char *text); /* a page's next message, a client's line */
    void (*close_when_sent)(void *conn);
    void (*hold)(void *conn, bool hold); /* stop or resume reading from conn */
    /* an agent-protocol client's request waits for a tick (true) or was answered (false) */
    void (*waiting)(void *conn, bool waiting);
    void (*stream_grew)(void *ud);       /* cli_live_stream has more for the followers */
    void (*timer)(void *ud, int64_t us); /* call cli_live_tick after us microseconds */
} cli_live_link;

/* The game: its env, seats and recorders, the first episode begun. NULL with the exit status
 * in *rc (1 the scenario or a recorder failed, 2 a seat the command line or the scenario's
 * "live" key gives is refused; said on stderr). */
cli_live *cli_live_open(const cli_live_args *a, int *rc);
/* The agents, and the token a page must give to take agent i's seat (docs/viewer.md, "Live
 * play"), with its name in *agent; NULL when i is not a human seat. */
int32_t cli_live_n_agents(const cli_live *lv);
const char *cli_live_seat_token(const cli_live *lv, int32_t i, const char **agent);
/* Whether it ticks at a fixed rate (else it waits for its human and client seats). */
bool cli_live_fixed_rate(const cli_live *lv);
/* Plays over `link` (copied) from now on: the first tick is scheduled. */
void cli_live_start(cli_live *lv, const cli_live_link *link);
/* The server stops: ends the recording of an episode still in play. */
void cli_live_stop(cli_live *lv);
/* Frees the game, once its connections are closed; NULL is ignored. */
void cli_live_free(cli_live *lv);

/* A page that takes seats connected: its seat object (NULL: out of memory); one message of it
 * (too_long: the message was over that many bytes, text NULL); it went away. */
void *cli_live_seat_open(cli_live *lv, void *conn);
void cli_live_seat_message(cli_live *lv, void *seat, const char *text, size_t len, size_t too_long);
void cli_live_seat_close(cli_live *lv, void *seat);
/* An agent-protocol client connected, sent bytes (-1: close it), went away. */
void *cli_live_client_open(cli_live *lv, void *conn);
int cli_live_client_data(cli_live *lv, void *client, const char *data, size_t len);
void cli_live_client_close(cli_live *lv, void *client);
/* The record stream every page that follows the game is sent (cli_ws_handlers in
 * transport/ws.h): the header line; the reset line of the episode in play and the stream
 * offset of its latest keyframe (where a page that joins goes on); the stream's bytes from
 * `at` on, NULL when they are no longer kept. */
const char *cli_live_stream_header(const cli_live *lv, size_t *len);
const char *cli_live_stream_join(const cli_live *lv, size_t *len, uint64_t *at);
const char *cli_live_stream_from(const cli_live *lv, uint64_t at, size_t *len);
/* The timer the game asked for fired. */
void cli_live_tick(cli_live *lv);

#endif
