/* engine/cli/transport/lines.h — a service over JSON lines (lines.c): one request per line in,
 * one reply per line out, on stdin/stdout or over TCP (a thread or, isolated, a process per
 * client), with the limits of docs/clients.md ("Limits"). `polis serve --stdio|--tcp`
 * (cmd/serve.c) runs the agent protocol's sessions (session/agent.h) on it; the messages name
 * that command's options. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_LINES_H
#define POLIS_CLI_LINES_H

#include <stdbool.h>
#include <stddef.h>

/* What the lines carry: a session per client and its replies. */
typedef struct cli_line_service {
    void *ud;
    /* The session of client `id` (0: the one client of stdio; -1: a probe, opened and closed
     * before a TCP server listens, so that a scenario that cannot load fails at once), or NULL
     * with the reason in err, which the client is sent as an "engine_error" and the log gets.
     * `who` names a TCP client in the log ("client 3 (127.0.0.1:40512)"), else NULL. */
    void *(*open)(void *ud, int id, const char *who, char *err, size_t cap);
    /* The reply line to one request (malloc'ed, freed by the transport; NULL: out of memory);
     * *close when the client asked to close. */
    char *(*handle)(void *session, const char *line, size_t len, bool *close);
    void (*close)(void *session);
    /* An error reply line of the protocol (malloc'ed; NULL: out of memory): a request line too
     * long, an idle client, a full server, a session process that crashed. */
    char *(*error)(const char *code, const char *message);
} cli_line_service;

/* Serves one client on stdin/stdout until stdin ends or it closes. Returns 0, or EXIT_ENV when
 * its session cannot open (said on stderr). */
int cli_lines_stdio(const cli_line_service *svc);

/* How a TCP server listens and how long it waits. */
typedef struct cli_tcp_options {
    const char *tcp;   /* [HOST:]PORT (HOST: 127.0.0.1 by default; PORT 0: any free one) */
    bool allow_remote; /* HOST may be other than a loopback address */
    bool isolate;      /* a process per client */
    int max_clients;   /* served at once; more are told "server_full" */
    int idle_timeout;  /* seconds a client may take for its next request (0: no limit) */
    int write_timeout; /* seconds a client may take to read a reply (0: no limit) */
} cli_tcp_options;

/* Listens (saying "polis serve: listening on HOST:PORT" on stderr) and serves clients until
 * the process is killed. Returns EXIT_USAGE for a bad address (said), else EXIT_ENV when it
 * cannot listen or accepting fails. */
int cli_lines_tcp(const cli_line_service *svc, const cli_tcp_options *o);

/* A line on the server's log (stderr), "polis serve: ...", in one write so the lines of
 * concurrent sessions (threads or processes) do not interleave. */
#if defined(__GNUC__)
void cli_lines_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#else
void cli_lines_log(const char *fmt, ...);
#endif

#endif
