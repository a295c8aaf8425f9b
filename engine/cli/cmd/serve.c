/*
 * engine/cli/cmd/serve.c — `polis serve`: the agent protocol (docs/clients.md) over JSON lines,
 * one session with its own env per client (session/agent.c) on stdin/stdout or TCP
 * (transport/lines.c); with --http, the live game in the browser (session/live.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/commands.h"
#include "session/agent.h"
#include "session/episode.h"
#include "session/live.h"
#include "session/proto.h"
#include "transport/http.h"
#include "transport/lines.h"
#include "transport/ws.h"

/* ---- arguments ---------------------------------------------------------------------------- */

typedef struct serve_args {
    const char *scenario;
    const char *plugin_path;
    const char *tcp; /* NULL: --stdio */
    bool stdio;
    bool allow_remote;
    bool bad_is_noop;
    bool isolate;    /* --isolate: a process per TCP client */
    bool no_metrics; /* --no-metrics: leave the scenario's plugins as they are */
    int max_clients;
    int idle_timeout;       /* seconds, 0: none (TCP only) */
    int write_timeout;      /* seconds, 0: none (TCP only) */
    char *overrides_text;   /* what every session's env is created with; NULL: none */
    const char *record;     /* --record FILE (TCP: a file per client, record_name) */
    int64_t keyframe_every; /* --keyframe-every K */
} serve_args;

/* Checks the command line and makes the overrides every session's env is created with.
 * Returns 0, EXIT_USAGE or EXIT_ENV after printing the problem. */
static int serve_args_of(const cli_args *c, serve_args *a)
{
    memset(a, 0, sizeof *a);
    a->plugin_path = cli_text(c, CLI_OPT_PLUGIN_PATH);
    a->tcp = cli_text(c, CLI_OPT_TCP);
    a->stdio = cli_has(c, CLI_OPT_STDIO);
    a->allow_remote = cli_has(c, CLI_OPT_ALLOW_REMOTE);
    a->bad_is_noop = strcmp(cli_text(c, CLI_OPT_ON_BAD_ACTION), "noop") == 0;
    a->isolate = cli_has(c, CLI_OPT_ISOLATE);
    a->no_metrics = cli_has(c, CLI_OPT_NO_METRICS);
    a->max_clients = (int)cli_num(c, CLI_OPT_MAX_CLIENTS);
    a->idle_timeout = (int)cli_num(c, CLI_OPT_IDLE_TIMEOUT);
    a->write_timeout = (int)cli_num(c, CLI_OPT_WRITE_TIMEOUT);
    a->record = cli_text(c, CLI_OPT_RECORD);
    a->keyframe_every = cli_num(c, CLI_OPT_KEYFRAME_EVERY);
    if (a->stdio && a->tcp) return cli_usage(c->name, "--stdio and --tcp exclude each other");
    if (!a->stdio && !a->tcp)
        return cli_usage(c->name, "choose a transport: --stdio or --tcp [HOST:]PORT");
    /* the first option given that only --tcp takes */
    static const cli_opt_id tcp_only[] = {CLI_OPT_ISOLATE, CLI_OPT_IDLE_TIMEOUT,
                                          CLI_OPT_WRITE_TIMEOUT};
    const cli_value *first = NULL;
    cli_opt_id first_id = CLI_OPT_ISOLATE;
    for (size_t k = 0; k < sizeof tcp_only / sizeof tcp_only[0]; k++) {
        const cli_value *v = &c->v[tcp_only[k]];
        if (v->n > 0 && (!first || v->at < first->at)) {
            first = v;
            first_id = tcp_only[k];
        }
    }
    if (a->stdio && first)
        return cli_usage(c->name, "%s is for --tcp (a --stdio server has one client, its parent)",
                         CLI_OPTIONS[first_id].name);
    if (!(a->scenario = cli_scenario(c->name, c->pos[0]))) return EXIT_ENV;
    bool oom = false;
    /* Like `polis eval`, every session's env has the metrics plugin, so the reply that ends
     * an episode carries the figures eval prints for an RL policy. */
    a->overrides_text = cli_eval_overrides(a->scenario, c->overrides.obj, !a->no_metrics, &oom);
    if (oom) return cli_usage(c->name, "out of memory");
    return 0;
}

/* --record FILE for TCP client `id` (docs/clients.md, "Recording"): every "{client}" in FILE
 * replaced by id, or without one, "-<id>" inserted before the first '.' of FILE's base name
 * (not a leading one): "runs/ep.jsonl.gz" -> "runs/ep-3.jsonl.gz", "ep" -> "ep-3". False
 * when the name does not fit. */
static bool record_name(const char *file, unsigned id, char *out, size_t cap)
{
    char num[16];
    snprintf(num, sizeof num, "%u", id);
    if (strstr(file, "{client}")) {
        size_t used = 0;
        for (const char *p = file;;) {
            const char *at = strstr(p, "{client}");
            int n = at ? snprintf(out + used, cap - used, "%.*s%s", (int)(at - p), p, num)
                       : snprintf(out + used, cap - used, "%s", p);
            if (n < 0 || (size_t)n >= cap - used) return false;
            used += (size_t)n;
            if (!at) return true;
            p = at + strlen("{client}");
        }
    }
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    const char *dot = *base ? strchr(base + 1, '.') : NULL;
    int head = (int)(dot ? dot - file : (ptrdiff_t)strlen(file));
    int n = snprintf(out, cap, "%.*s-%s%s", head, file, num, file + head);
    return n >= 0 && (size_t)n < cap;
}

/* ---- the sessions on the lines ------------------------------------------------------------- */

/* The agent protocol's sessions as a line service (transport/lines.h). */
typedef struct server {
    cli_agent_config config;
    const char *record; /* --record FILE: stdio's file, or a file per TCP client */
} server;

static void *open_session(void *ud, int id, const char *who, char *err, size_t cap)
{
    const server *srv = ud;
    char record[PATH_MAX + 32];
    const char *file = id < 0 ? NULL : srv->record;
    if (file && id > 0) {
        if (!record_name(srv->record, (unsigned)id, record, sizeof record)) {
            snprintf(err, cap, "--record: the file name of client %d is too long", id);
            return NULL;
        }
        file = record;
    }
    polis_error e;
    memset(&e, 0, sizeof e);
    cli_agent_session *s = cli_agent_open(&srv->config, file, &e);
    if (!s) {
        snprintf(err, cap, "%s", e.message);
        return NULL;
    }
    if (who && cli_agent_recording(s)) cli_lines_log("%s: recording to %s", who, file);
    return s;
}

static char *handle_line(void *s, const char *line, size_t len, bool *close)
{
    return cli_agent_handle(s, line, len, close);
}

static void close_session(void *s) { cli_agent_close(s); }

static char *error_line(const char *code, const char *message)
{
    cJSON *r = cli_proto_error(code, NULL, "%s", message);
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    cJSON_Delete(r);
    return text;
}

static int serve_main(cli_args *c)
{
    serve_args a;
    int rc = serve_args_of(c, &a);
    if (rc == 0) {
        server srv = {.config = {.scenario = a.scenario,
                                 .plugin_path = a.plugin_path,
                                 .overrides_text = a.overrides_text,
                                 .bad_is_noop = a.bad_is_noop,
                                 .keyframe_every = a.keyframe_every},
                      .record = a.record};
        cli_line_service svc = {.ud = &srv,
                                .open = open_session,
                                .handle = handle_line,
                                .close = close_session,
                                .error = error_line};
        cli_tcp_options tcp = {.tcp = a.tcp,
                               .allow_remote = a.allow_remote,
                               .isolate = a.isolate,
                               .max_clients = a.max_clients,
                               .idle_timeout = a.idle_timeout,
                               .write_timeout = a.write_timeout};
        /* A client that vanishes must not kill the server with SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
        rc = a.stdio ? cli_lines_stdio(&svc) : cli_lines_tcp(&svc, &tcp);
    }
    cJSON_free(a.overrides_text);
    return rc;
}

/* ---- live play: the game (session/live.c) over libwebsockets (transport/ws.c) ------------ */

#ifdef POLIS_HAVE_LWS
/* HOST:PORT or PORT into host (cap bytes) and *port. HOST is an IPv4 address in dotted-quad
 * form, or "localhost" (taken as 127.0.0.1): libwebsockets would take any other text for the
 * name of a network interface and, finding none, listen nowhere. */
static bool parse_http(const char *v, char *host, size_t cap, int *port)
{
    const char *colon = strrchr(v, ':');
    const char *p = colon ? colon + 1 : v;
    int64_t num;
    if (!cli_parse_int(p, 0, 65535, &num)) return false;
    *port = (int)num;
    if (!colon) {
        snprintf(host, cap, "127.0.0.1");
        return true;
    }
    size_t hl = (size_t)(colon - v);
    if (hl == 0 || hl >= cap) return false;
    memcpy(host, v, hl);
    host[hl] = '\0';
    if (strcmp(host, "localhost") == 0) snprintf(host, cap, "127.0.0.1");
    struct in_addr a;
    int dots = 0;
    for (const char *d = host; *d; d++) dots += *d == '.';
    return dots == 3 && inet_pton(AF_INET, host, &a) == 1;
}

static bool is_loopback_host(const char *h) { return strncmp(h, "127.", 4) == 0; }

static char *ws_error_line(const char *code, const char *message)
{
    cJSON *r = cli_proto_error(code, NULL, "%s", message);
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    cJSON_Delete(r);
    char *out = text ? strdup(text) : NULL;
    cJSON_free(text);
    return out;
}

/* the connections' events, handed to the game */
static void *ws_seat_open(void *ud, cli_ws_conn *c) { return cli_live_seat_open(ud, c); }
static void ws_seat_message(void *ud, void *seat, const char *text, size_t len, bool too_long)
{
    cli_live_seat_message(ud, seat, text, len, too_long ? CLI_WS_MAX_MESSAGE : 0);
}
static void ws_seat_close(void *ud, void *seat) { cli_live_seat_close(ud, seat); }
static void *ws_client_open(void *ud, cli_ws_conn *c) { return cli_live_client_open(ud, c); }
static int ws_client_data(void *ud, void *client, const char *data, size_t len)
{
    return cli_live_client_data(ud, client, data, len);
}
static void ws_client_close(void *ud, void *client) { cli_live_client_close(ud, client); }
static const char *ws_stream_header(void *ud, size_t *len)
{
    return cli_live_stream_header(ud, len);
}
static const char *ws_stream_join(void *ud, size_t *len, uint64_t *at)
{
    return cli_live_stream_join(ud, len, at);
}
static const char *ws_stream_from(void *ud, uint64_t at, size_t *len)
{
    return cli_live_stream_from(ud, at, len);
}
static void ws_timer(void *ud) { cli_live_tick(ud); }

/* what the game asks of the connections */
static bool link_send(void *conn, const char *text) { return cli_ws_send(conn, text); }
static void link_close(void *conn) { cli_ws_close_when_sent(conn); }
static void link_hold(void *conn, bool hold) { cli_ws_hold(conn, hold); }
static void link_waiting(void *conn, bool waiting) { cli_ws_waiting(conn, waiting); }
static void link_stream(void *ws) { cli_ws_stream_grew(ws); }
static void link_timer(void *ws, int64_t us) { cli_ws_timer(ws, us); }

/* Plays the game on the page's address and, with --tcp, the clients'; until interrupted. */
static int play_live(const cli_live_args *a, cli_ws_config cfg)
{
    int rc;
    cli_live *lv = cli_live_open(a, &rc);
    if (!lv) return rc;
    if (!a->tcp) cfg.tcp_host = NULL;
    const char *host = cfg.http_host, *tcp_host = cfg.tcp_host;
    cli_ws_handlers h = {.ud = lv,
                         .seat_open = ws_seat_open,
                         .seat_message = ws_seat_message,
                         .seat_close = ws_seat_close,
                         .client_open = ws_client_open,
                         .client_data = ws_client_data,
                         .client_close = ws_client_close,
                         .error_line = ws_error_line,
                         .stream_header = ws_stream_header,
                         .stream_join = ws_stream_join,
                         .stream_from = ws_stream_from,
                         .timer = ws_timer};
    int bound, tcp_bound;
    cli_ws *ws = cli_ws_open(&cfg, &h, &bound, &tcp_bound);
    if (!ws) {
        cli_live_free(lv);
        return EXIT_ENV;
    }
    cli_lws_catch_signals(); /* before the addresses: whoever reads them may stop us at once */
    /* each human seat's own link first (its token takes the seat), then the page that
     * watches and the clients' address */
    for (int32_t i = 0; i < cli_live_n_agents(lv); i++) {
        const char *agent = NULL, *token = cli_live_seat_token(lv, i, &agent);
        if (token) printf("seat %s: http://%s:%d/?live=1&token=%s\n", agent, host, bound, token);
    }
    printf("http://%s:%d/?live=1\n", host, bound);
    if (a->tcp) printf("tcp://%s:%d\n", tcp_host, tcp_bound);
    fflush(stdout);
    fprintf(stderr, "polis serve: live on %s:%d (%s), the viewer in %s; Ctrl-C stops\n", host,
            bound,
            cli_live_fixed_rate(lv) ? "fixed tick rate" : "waiting for the human and client seats",
            cfg.viewer);
    if (a->tcp) fprintf(stderr, "polis serve: agent clients on %s:%d\n", tcp_host, tcp_bound);
    cli_live_link link = {.ud = ws,
                          .send = link_send,
                          .close_when_sent = link_close,
                          .hold = link_hold,
                          .waiting = link_waiting,
                          .stream_grew = link_stream,
                          .timer = link_timer};
    cli_live_start(lv, &link);
    cli_ws_run(ws);
    cli_live_stop(lv);
    cli_ws_free(ws); /* first: closing the connections frees their seats */
    cli_live_free(lv);
    return 0;
}
#endif

/* `polis serve --http`: the live game. */
static int live_main(cli_args *c)
{
    /* the live game's own key is read from the file, so it is set with --seat and --tick-ms
     * rather than --set */
    const cJSON *ov;
    cJSON_ArrayForEach(ov, c->overrides.obj)
        if (strncmp(ov->string, "live", 4) == 0 && (!ov->string[4] || ov->string[4] == '.'))
            return cli_usage(c->name,
                             "--set %s: set the live game with --seat, --tick-ms and "
                             "--episodes",
                             ov->string);
    const char *seats_set = cli_overrides_seats(c->overrides.obj);
    if (seats_set)
        return cli_usage(c->name, "--set %s: give the scenario's seats with --seat AGENT=WHO",
                         seats_set);
    cli_live_args a = {
        .tcp = cli_text(c, CLI_OPT_TCP),
        .record = cli_text(c, CLI_OPT_RECORD),
        .plugin_path = cli_text(c, CLI_OPT_PLUGIN_PATH),
        .policy = cli_text(c, CLI_OPT_POLICY),
        .tick_ms = cli_has(c, CLI_OPT_TICK_MS) ? cli_num(c, CLI_OPT_TICK_MS) : -1,
        .episodes = cli_has(c, CLI_OPT_EPISODES) ? cli_num(c, CLI_OPT_EPISODES) : -1,
        .keyframe_every = cli_num(c, CLI_OPT_KEYFRAME_EVERY),
        .seed = c->v[CLI_OPT_SEED].u64,
        .has_seed = cli_has(c, CLI_OPT_SEED),
        .seat_arg = c->v[CLI_OPT_SEAT].list,
        .n_seat_args = c->v[CLI_OPT_SEAT].n,
    };
#ifdef POLIS_HAVE_LWS
    char viewer[PATH_MAX];
    if (!cli_find_viewer(viewer)) {
        fprintf(stderr, "polis: serve: the viewer's files (index.html) are not found (set "
                        "$POLIS_VIEWER_DIR)\n");
        return EXIT_ENV;
    }
    const char *http = cli_text(c, CLI_OPT_HTTP);
    bool remote = cli_has(c, CLI_OPT_ALLOW_REMOTE);
    char host[256], tcp_host[256];
    int port, tcp_port = 0;
    if (!parse_http(http, host, sizeof host, &port))
        return cli_usage(c->name,
                         "--http: '%s' is not [HOST:]PORT (HOST an IPv4 address such as "
                         "127.0.0.1, or localhost; PORT in [0, 65535])",
                         http);
    if (a.tcp && !parse_http(a.tcp, tcp_host, sizeof tcp_host, &tcp_port))
        return cli_usage(c->name,
                         "--tcp: '%s' is not [HOST:]PORT (HOST an IPv4 address such as "
                         "127.0.0.1, or localhost; PORT in [0, 65535])",
                         a.tcp);
    if (!is_loopback_host(host) && !remote)
        return cli_usage(c->name,
                         "--http: %s is not a loopback address; add --allow-remote to "
                         "let anyone who can connect take a seat",
                         host);
    if (a.tcp && !is_loopback_host(tcp_host) && !remote)
        return cli_usage(c->name,
                         "--tcp: %s is not a loopback address; add --allow-remote to "
                         "let anyone who can connect take a seat",
                         tcp_host);
    if (!(a.scenario = cli_scenario(c->name, c->pos[0]))) return EXIT_ENV;
    bool oom = false;
    /* as with `polis serve --tcp`, the env has the metrics plugin, so the reply that ends a
     * client's episode and the recording's end lines carry the figures eval prints */
    char *overrides = cli_eval_overrides(a.scenario, c->overrides.obj, true, &oom);
    if (oom) return cli_usage(c->name, "out of memory");
    a.overrides_text = overrides;
    /* a page or client that vanishes must not kill the server with SIGPIPE */
    signal(SIGPIPE, SIG_IGN);
    cli_origins origins = {.allow = c->v[CLI_OPT_ALLOW_ORIGIN].list,
                           .n_allow = c->v[CLI_OPT_ALLOW_ORIGIN].n};
    cli_ws_config cfg = {.viewer = viewer,
                         .http_host = host,
                         .http_port = port,
                         .tcp_host = tcp_host,
                         .tcp_port = tcp_port,
                         .origins = &origins,
                         .max_pages = (int)cli_num(c, CLI_OPT_MAX_PAGES),
                         .max_clients = (int)cli_num(c, CLI_OPT_MAX_CLIENTS),
                         .idle_timeout = (int)cli_num(c, CLI_OPT_IDLE_TIMEOUT),
                         .write_timeout = (int)cli_num(c, CLI_OPT_WRITE_TIMEOUT)};
    int rc = play_live(&a, cfg);
    cJSON_free(overrides);
    return rc;
#else
    (void)a;
    fprintf(stderr, "polis: serve: --http needs libwebsockets; this polis was built without it "
                    "(install libwebsockets-dev and rebuild)\n");
    return EXIT_ENV;
#endif
}

static const char *const BAD_ACTION[] = {"error", "noop", NULL};

static const cli_use SERVE_USES[] = {
    {.id = CLI_OPT_STDIO},
    {.id = CLI_OPT_TCP,
     .help = "listen on HOST (default 127.0.0.1) and PORT (0: any free\n"
             "port); the bound address is printed on stderr as\n"
             "'polis serve: listening on HOST:PORT'. Each connection gets its\n"
             "own env. Runs until killed."},
    {.id = CLI_OPT_ALLOW_REMOTE},
    {.id = CLI_OPT_MAX_CLIENTS, .def = "8"},
    {.id = CLI_OPT_IDLE_TIMEOUT, .def = "600"},
    {.id = CLI_OPT_WRITE_TIMEOUT, .def = "60"},
    {.id = CLI_OPT_ISOLATE},
    {.id = CLI_OPT_RECORD,
     .help = "record the client's episodes to FILE (docs/recording.md; gzip\n"
             "when it ends in .gz), the actions and plan commands it sent in\n"
             "\"msgs\"; check it with `polis replay FILE --verify`. TCP: each\n"
             "client N to its own file, FILE with {client} replaced by N, or\n"
             "else with -N before the first '.' of its name (ep.jsonl.gz:\n"
             "ep-1.jsonl.gz, ep-2.jsonl.gz, ...)"},
    {.id = CLI_OPT_KEYFRAME_EVERY, .needs = CLI_BIT(CLI_OPT_RECORD)},
    {.id = CLI_OPT_ON_BAD_ACTION, .def = "error", .choices = BAD_ACTION},
    {.id = CLI_OPT_NO_METRICS,
     .help = "do not add the metrics plugin when the scenario lacks it (the\n"
             "reply that ends an episode then has no \"metrics\")"},
    CLI_SCENARIO_OPTIONS,
};

const cli_command CLI_CMD_SERVE = {
    .name = "serve",
    CLI_SCENARIO_AND(SERVE_USES),
    .summary = "serve agents (LLM or any language) over JSON lines on stdio/TCP",
    .usage = "serve SCENARIO (--stdio | --tcp [HOST:]PORT) [options]",
    .about =
        "Serves SCENARIO to agents over the agent protocol: JSON lines, one request per line,\n"
        "one reply per line (docs/clients.md). Requests: {\"op\": \"describe\"},\n"
        "{\"op\": \"reset\", \"seed\": N}, {\"op\": \"step\", \"actions\": {AGENT: ACTION}},\n"
        "{\"op\": \"advance\", \"max_ticks\": N}, {\"op\": \"close\"}. An ACTION is an action id,\n"
        "an action name, a text action (\"move north\"), a JSON action object, or a plan\n"
        "command (\"GATHER 3 wood\", a macro of the scenario); agents left out do noop or\n"
        "follow their plan. \"advance\" runs the plans until one ends.\n",
    .notes =
        "polis serve SCENARIO --http [HOST:]PORT [--seat AGENT=human|client|POLICY] [--tcp ...]\n"
        "plays live: people in the browser, agent-protocol clients over --tcp and policies\n"
        "together (`polis serve x --http 0 --help` for its options).\n",
    .run = serve_main,
};

static const cli_use LIVE_USES[] = {
    {.id = CLI_OPT_HTTP},
    {.id = CLI_OPT_SEAT,
     .help = "who plays AGENT: 'human' (a person on the page, or any client of\n"
             "the \"polis-seat\" WebSocket protocol), 'client' (an agent-protocol\n"
             "client over --tcp) or a policy of the scenario (random, greedy,\n"
             "...); repeatable; wins over the scenario's \"live\" seats and its\n"
             "\"seats\""},
    {.id = CLI_OPT_POLICY,
     .help = "the policy of the seats nobody names (default random)",
     .def = "random",
     .metavar = "P"},
    {.id = CLI_OPT_TCP,
     .help = "listen for the agent-protocol clients of the client seats (JSON\n"
             "lines); the address is printed on stdout as tcp://HOST:PORT"},
    {.id = CLI_OPT_TICK_MS,
     .help = "tick every N ms, a seat whose player did not act doing noop\n"
             "(default: the scenario's \"live\" tick_ms, else 0: wait until\n"
             "every human and client seat has acted)"},
    {.id = CLI_OPT_EPISODES,
     .help = "play N episodes, then keep serving the page (default: the\n"
             "scenario's \"live\" episodes, else 0: no end)",
     .lo = 0,
     .hi = INT32_MAX},
    {.id = CLI_OPT_SEED,
     .help = "the first episode's seed (default: the scenario's); then S+1, ...",
     .metavar = "S"},
    {.id = CLI_OPT_RECORD, .help = "also record every episode to FILE (gzip when it ends in .gz)"},
    {.id = CLI_OPT_KEYFRAME_EVERY,
     .help = "a keyframe every K ticks (default 100)",
     .needs = CLI_BIT(CLI_OPT_RECORD)},
    {.id = CLI_OPT_ALLOW_REMOTE,
     .help = "allow a HOST that is not a loopback address (anyone who can\n"
             "connect can watch; a human seat still needs its token)"},
    {.id = CLI_OPT_ALLOW_ORIGIN},
    {.id = CLI_OPT_MAX_PAGES, .def = "64"},
    {.id = CLI_OPT_MAX_CLIENTS,
     .def = "8",
     .help = "--tcp clients connected at once (default 8); "
             "others are told\n'server_full' and closed"},
    {.id = CLI_OPT_IDLE_TIMEOUT,
     .def = "600",
     .help = "drop a --tcp client that sends no request for S seconds while\n"
             "none of its requests waits for a tick (default 600; 0: never)"},
    {.id = CLI_OPT_WRITE_TIMEOUT,
     .def = "60",
     .help = "drop a page or --tcp client that takes none of what is sent to\n"
             "it for S seconds (default 60; 0: never)"},
    CLI_SCENARIO_OPTIONS,
};

const cli_command CLI_CMD_LIVE = {
    .name = "serve",
    CLI_SCENARIO_AND(LIVE_USES),
    .summary = "play live: the browser viewer's seats, agent-protocol clients and policies",
    .usage = "serve SCENARIO --http [HOST:]PORT [options]",
    .about =
        "Plays SCENARIO live: serves the browser viewer on HOST (default 127.0.0.1) and PORT (0:\n"
        "any free port), prints the page's URL on stdout, and streams the episodes' record lines\n"
        "to every page that watches. From the page a person takes a human seat and plays its\n"
        "agent (docs/viewer.md, \"Live play\"); agent-protocol clients (LLM agents) play the\n"
        "client seats over --tcp (docs/clients.md, \"Live games\"). Runs until killed.\n",
    .unknown_lists = "with --http",
    .run = live_main,
};

int cli_serve_main(int argc, char **argv)
{
    /* --http: one game played live in the browser */
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--http") == 0 || strncmp(argv[i], "--http=", 7) == 0)
            return cli_command_main(&CLI_CMD_LIVE, argc, argv);
    return cli_command_main(&CLI_CMD_SERVE, argc, argv);
}
