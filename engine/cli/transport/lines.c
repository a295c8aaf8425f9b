/*
 * engine/cli/transport/lines.c — a service over JSON lines (lines.h): one request per line
 * in, one reply per line out, on stdin/stdout or over TCP.
 *
 * Over stdio the process serves one client and returns when stdin ends or the client closes.
 * Over TCP every connection gets its own session on its own thread, or with isolate in its
 * own forked process (at most max_clients at once); a connection that drops just ends its
 * session.
 *
 * No client can hold the server: a request line is limited while it is read (the bytes of a
 * longer line are counted and dropped, so a connection's input buffer stays under about
 * 1 MiB), and over TCP a client whose next request does not arrive within the idle timeout,
 * or who does not take a reply within the write timeout, is dropped with a line in the
 * server's log. Under isolate a session that crashes (a plugin is trusted code, but may
 * crash) takes down its own process only: the server reports it to that client and in its
 * log.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "transport/lines.h"
#include "util/util.h"

/* A request line longer than this is refused (and skipped) rather than parsed. The limit
 * holds while the line is read: the bytes beyond it are counted and dropped, never kept. */
#define SERVE_MAX_LINE (1u << 20)
/* Bytes asked of read() at a time; the input buffer never holds more than
 * SERVE_MAX_LINE + 1 + SERVE_READ_CHUNK bytes. */
#define SERVE_READ_CHUNK (64u << 10)

/* ---- the line transport ------------------------------------------------------------------- */

/* How a client's session ended (END_NONE: it goes on). */
typedef enum end_reason {
    END_NONE = 0,
    END_EOF,           /* the client closed its side (or stdin ended) */
    END_CLOSE,         /* the client sent "close" */
    END_IDLE,          /* no complete request within --idle-timeout */
    END_WRITE_TIMEOUT, /* a reply not taken within --write-timeout */
    END_WRITE_FAILED,  /* the client went away while a reply was written */
    END_READ_FAILED,   /* the connection failed (reset) */
    END_NOMEM,
} end_reason;

/* One client's byte streams. Reads go through buf, which never holds more than one line's
 * worth of the limit plus one read (SERVE_MAX_LINE + 1 + SERVE_READ_CHUNK bytes): a longer
 * line is counted while it arrives and dropped, not buffered. Timeouts are in ms (0: none)
 * and need non-blocking fds; without them blocking fds work as well. */
typedef struct line_io {
    int in_fd, out_fd;
    int idle_ms, write_ms;
    int64_t read_deadline; /* CLOCK_MONOTONIC ms by which the next line must be in; 0: none */
    char *buf;
    size_t cap, beg, end; /* the unread bytes are buf[beg, end) */
    size_t scan;          /* buf[beg, scan) holds no newline */
    bool eof;
    bool discarding;    /* the current line is over the limit: counted, not kept */
    uint64_t discarded; /* its bytes dropped so far */
    bool discarded_cr;  /* the last of them was '\r' */
} line_io;

typedef enum { LINE_OK, LINE_TOO_LONG, LINE_EOF, LINE_TIMEOUT, LINE_ERROR, LINE_NOMEM } line_status;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` or the deadline (0: none) passes. Returns 1 when
 * ready (or failed: the next read or write says how), 0 at the deadline, -1 on error. */
static int wait_ready(int fd, short events, int64_t deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline) {
            int64_t left = deadline - now_ms();
            if (left <= 0) return 0;
            ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        struct pollfd p = {.fd = fd, .events = events, .revents = 0};
        int r = poll(&p, 1, ms);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* Reads the next line (its '\n' and trailing '\r's cut off) into *line and *len, valid until the
 * next call. A line over SERVE_MAX_LINE is LINE_TOO_LONG with its length in *too_long. A last
 * line without '\n' before the end of the input counts as a line. */
static line_status read_line(line_io *io, char **line, size_t *len, uint64_t *too_long)
{
    /* give back what a long line made the buffer grow to */
    if (io->beg == io->end && io->cap > 2 * SERVE_READ_CHUNK) {
        free(io->buf);
        io->buf = NULL;
        io->cap = io->beg = io->end = io->scan = 0;
    }
    for (;;) {
        char *nl = io->end > io->scan ? memchr(io->buf + io->scan, '\n', io->end - io->scan) : NULL;
        if (nl || (io->eof && (io->end > io->beg || io->discarding))) {
            size_t stop = nl ? (size_t)(nl - io->buf) : io->end;
            char *start = io->buf + io->beg;
            size_t n = stop - io->beg;
            io->beg = io->scan = nl ? stop + 1 : stop;
            if (io->discarding) {
                bool cr = n ? start[n - 1] == '\r' : io->discarded_cr;
                io->discarding = false;
                *too_long = io->discarded + n - (cr ? 1 : 0);
                return LINE_TOO_LONG;
            }
            while (n && start[n - 1] == '\r') n--;
            if (n > SERVE_MAX_LINE) {
                *too_long = n;
                return LINE_TOO_LONG;
            }
            *line = start;
            *len = n;
            return LINE_OK;
        }
        if (io->eof) return LINE_EOF;
        /* no newline in buf[beg, end): keep the line, or count and drop it when too long */
        size_t pending = io->end - io->beg;
        if (io->discarding || pending > SERVE_MAX_LINE + 1) {
            if (!io->discarding) io->discarded = 0;
            io->discarding = true;
            io->discarded += pending;
            if (pending) io->discarded_cr = io->buf[io->end - 1] == '\r';
            io->beg = io->end = 0;
        } else if (io->beg > 0) {
            memmove(io->buf, io->buf + io->beg, pending);
            io->beg = 0;
            io->end = pending;
        }
        io->scan = io->end;
        if (io->cap - io->end < SERVE_READ_CHUNK) {
            size_t cap = io->cap ? io->cap : SERVE_READ_CHUNK;
            while (cap < io->end + SERVE_READ_CHUNK) cap *= 2;
            if (cap > SERVE_MAX_LINE + 1 + SERVE_READ_CHUNK)
                cap = SERVE_MAX_LINE + 1 + SERVE_READ_CHUNK;
            char *grown = realloc(io->buf, cap);
            if (!grown) return LINE_NOMEM;
            io->buf = grown;
            io->cap = cap;
        }
        ssize_t r = read(io->in_fd, io->buf + io->end, io->cap - io->end);
        if (r > 0) {
            io->end += (size_t)r;
            /* a client that trickles bytes does not get more time than a silent one */
            if (io->read_deadline && now_ms() >= io->read_deadline) return LINE_TIMEOUT;
        } else if (r == 0) {
            io->eof = true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = wait_ready(io->in_fd, POLLIN, io->read_deadline);
            if (w == 0) return LINE_TIMEOUT;
            if (w < 0) return LINE_ERROR;
        } else if (errno != EINTR) {
            return LINE_ERROR;
        }
    }
}

/* Writes text and a newline, all within --write-timeout, and frees text (which has room for
 * the newline in place of its terminating NUL). */
static end_reason write_reply(line_io *io, char *text)
{
    size_t len = strlen(text);
    text[len++] = '\n';
    int64_t deadline = io->write_ms ? now_ms() + io->write_ms : 0;
    end_reason why = END_NONE;
    size_t off = 0;
    while (off < len && why == END_NONE) {
        ssize_t w = write(io->out_fd, text + off, len - off);
        if (w > 0) {
            off += (size_t)w;
            /* a client that takes a byte at a time does not get more time either */
            if (off < len && deadline && now_ms() >= deadline) why = END_WRITE_TIMEOUT;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_ready(io->out_fd, POLLOUT, deadline);
            if (r == 0) why = END_WRITE_TIMEOUT;
            if (r < 0) why = END_WRITE_FAILED;
        } else if (w == 0 || errno != EINTR) {
            why = END_WRITE_FAILED;
        }
    }
    free(text);
    return why;
}

/* The service's error line (code, the formatted message). */
#if defined(__GNUC__)
static char *error_line(const cli_line_service *svc, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
static char *error_line(const cli_line_service *svc, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return svc->error(code, msg);
}

/* Serves one client until it closes, sends "close", or is dropped; returns why it ended. */
static end_reason serve_stream(const cli_line_service *svc, void *s, line_io *io)
{
    bool close = false;
    while (!close) {
        io->read_deadline = io->idle_ms ? now_ms() + io->idle_ms : 0;
        char *line = NULL, *text = NULL;
        size_t len = 0;
        uint64_t too_long = 0;
        line_status ls;
        do ls = read_line(io, &line, &len, &too_long);
        while (ls == LINE_OK && len == 0); /* blank lines are ignored (and give no more time) */
        switch (ls) {
        case LINE_EOF: return END_EOF;
        case LINE_TIMEOUT: return END_IDLE;
        case LINE_ERROR: return END_READ_FAILED;
        case LINE_NOMEM: return END_NOMEM;
        case LINE_TOO_LONG:
            text = error_line(svc, "line_too_long",
                              "the request is %" PRIu64 " bytes; the limit is %u", too_long,
                              SERVE_MAX_LINE);
            break;
        case LINE_OK: text = svc->handle(s, line, len, &close); break;
        }
        if (!text)
            text = strdup("{\"ok\":false,\"error\":{\"code\":\"engine_error\","
                          "\"message\":\"out of memory\",\"agent\":null}}");
        if (!text) return END_NOMEM;
        end_reason why = write_reply(io, text);
        if (why != END_NONE) return why;
    }
    return END_CLOSE;
}

/* ---- stdio ---------------------------------------------------------------------------------- */

int cli_lines_stdio(const cli_line_service *svc)
{
    char err[1024];
    void *s = svc->open(svc->ud, 0, NULL, err, sizeof err);
    if (!s) {
        fprintf(stderr, "polis: serve: %s\n", err);
        return EXIT_ENV;
    }
    line_io io;
    memset(&io, 0, sizeof io);
    io.in_fd = STDIN_FILENO;
    io.out_fd = STDOUT_FILENO;
    serve_stream(svc, s, &io);
    free(io.buf);
    svc->close(s);
    return 0;
}

/* ---- tcp ------------------------------------------------------------------------------------ */

void cli_lines_log(const char *fmt, ...)
{
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "polis serve: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg);
    msg[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, msg, len);
    (void)w;
}

/* Sends r as one line if the socket takes it now; never waits (a client that is not
 * reading just misses it). */
static void send_line_nowait(int fd, char *text)
{
    if (!text) return;
    size_t len = strlen(text);
    text[len++] = '\n';
    ssize_t w = send(fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    free(text);
}

/* The client's name in the log: its number and address, "client 3 (127.0.0.1:40512)". */
static void client_name(char *out, size_t cap, unsigned id, const struct sockaddr *sa,
                        socklen_t len)
{
    char host[INET6_ADDRSTRLEN] = "?", port[16] = "?";
    if (getnameinfo(sa, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(host, sizeof host, "?");
    bool v6 = sa->sa_family == AF_INET6;
    snprintf(out, cap, "client %u (%s%s%s:%s)", id, v6 ? "[" : "", host, v6 ? "]" : "", port);
}

/* Serves one TCP client on fd (the caller closes it): its own env, the timeouts, and a log
 * line when it is dropped. */
static void serve_client(const cli_line_service *svc, const cli_tcp_options *a, int fd, unsigned id,
                         const char *who)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        cli_lines_log("%s: %s", who, strerror(errno));
        return;
    }
    char err[1024];
    void *s = svc->open(svc->ud, (int)id, who, err, sizeof err);
    if (!s) {
        send_line_nowait(fd, error_line(svc, "engine_error", "%s", err));
        cli_lines_log("%s: %s", who, err);
        shutdown(fd, SHUT_WR);
        return;
    }
    line_io io;
    memset(&io, 0, sizeof io);
    io.in_fd = io.out_fd = fd;
    io.idle_ms = a->idle_timeout * 1000;
    io.write_ms = a->write_timeout * 1000;
    end_reason why = serve_stream(svc, s, &io);
    free(io.buf);
    svc->close(s);
    if (why == END_IDLE) {
        send_line_nowait(fd, error_line(svc, "idle_timeout",
                                        "no complete request in %d s: the server closes the "
                                        "connection (--idle-timeout)",
                                        a->idle_timeout));
        cli_lines_log("%s dropped: no complete request in %d s (--idle-timeout)", who,
                      a->idle_timeout);
    } else if (why == END_WRITE_TIMEOUT) {
        cli_lines_log("%s dropped: a reply was not taken within %d s (--write-timeout)", who,
                      a->write_timeout);
    } else if (why == END_NOMEM) {
        cli_lines_log("%s dropped: out of memory", who);
    }
    if (why == END_WRITE_TIMEOUT) {
        /* reset rather than leave the unsent reply to the kernel */
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        /* the end of the stream now, even while another process holds the socket (--isolate) */
        shutdown(fd, SHUT_WR);
    }
}

/* An accept() failure that leaves the listening socket usable. Out of descriptors waits a
 * little, as the connection stays queued and would be reported again at once. */
static bool accept_can_go_on(void)
{
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        return true;
    }
    return errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EWOULDBLOCK ||
           errno == EPROTO;
}

static void refuse_full(const cli_line_service *svc, int fd, int max_clients)
{
    send_line_nowait(fd,
                     error_line(svc, "server_full",
                                "the server already has %d clients (--max-clients)", max_clients));
    close(fd);
}

/* A client just accepted: its socket, its number (from 1) and its name in the log. */
typedef struct accepted {
    int fd;
    unsigned id;
    char who[96];
} accepted;

/* The next connection on lfd into *c (*count clients so far): 1, 0 to try again, or -1 after
 * saying why accepting failed for good. */
static int next_client(int lfd, unsigned *count, accepted *c)
{
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    c->fd = accept(lfd, (struct sockaddr *)&peer, &plen);
    if (c->fd < 0) {
        if (accept_can_go_on()) return 0;
        fprintf(stderr, "polis: serve: accept: %s\n", strerror(errno));
        return -1;
    }
    c->id = ++*count;
    client_name(c->who, sizeof c->who, c->id, (struct sockaddr *)&peer, plen);
    return 1;
}

/* -- a thread per client (the default) -- */

typedef struct server {
    const cli_line_service *svc;
    const cli_tcp_options *args;
    pthread_mutex_t lock;
    int active;
} server;

typedef struct connection {
    server *srv;
    int fd;
    unsigned id;
    char who[96];
} connection;

static void *connection_main(void *p)
{
    connection *c = p;
    serve_client(c->srv->svc, c->srv->args, c->fd, c->id, c->who);
    close(c->fd);
    pthread_mutex_lock(&c->srv->lock);
    c->srv->active--;
    pthread_mutex_unlock(&c->srv->lock);
    free(c);
    return NULL;
}

static int serve_threads(const cli_line_service *svc, const cli_tcp_options *a, int lfd)
{
    server srv;
    srv.svc = svc;
    srv.args = a;
    srv.active = 0;
    pthread_mutex_init(&srv.lock, NULL);
    unsigned next_id = 0;
    accepted ac;
    for (int got; (got = next_client(lfd, &next_id, &ac)) >= 0;) {
        if (!got) continue;
        int fd = ac.fd;
        pthread_mutex_lock(&srv.lock);
        bool full = srv.active >= a->max_clients;
        if (!full) srv.active++;
        pthread_mutex_unlock(&srv.lock);
        if (full) {
            refuse_full(svc, fd, a->max_clients);
            continue;
        }
        connection *c = malloc(sizeof *c);
        pthread_t t;
        pthread_attr_t attr;
        bool started = false;
        if (c && pthread_attr_init(&attr) == 0) {
            c->srv = &srv;
            c->fd = fd;
            c->id = ac.id;
            snprintf(c->who, sizeof c->who, "%s", ac.who);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            started = pthread_create(&t, &attr, connection_main, c) == 0;
            pthread_attr_destroy(&attr);
        }
        if (!started) {
            free(c);
            send_line_nowait(fd, error_line(svc, "server_full", "cannot start a client thread"));
            close(fd);
            pthread_mutex_lock(&srv.lock);
            srv.active--;
            pthread_mutex_unlock(&srv.lock);
        }
    }
    return EXIT_ENV;
}

/* -- a process per client (--isolate) -- */

/* A client being served by a child process. The server keeps its own copy of the socket so
 * it can tell the client when that process dies. */
typedef struct seat {
    pid_t pid; /* 0: free */
    int fd;
    char who[96];
} seat;

/* SIGCHLD is turned into a byte on this pipe, which the accept loop polls. */
static int sigchld_pipe[2] = {-1, -1};

static void on_sigchld(int sig)
{
    (void)sig;
    int saved = errno;
    ssize_t w = write(sigchld_pipe[1], "c", 1);
    (void)w;
    errno = saved;
}

/* The child: serves its client and exits; nothing of it outlives the session. */
static void isolated_child(const cli_line_service *svc, const cli_tcp_options *a, int fd,
                           unsigned id, const char *who, int lfd, seat *seats, pid_t server_pid)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, NULL);
#ifdef __linux__
    /* sessions end with the server, as they do when they are its threads */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server_pid) _exit(0);
#else
    (void)server_pid;
#endif
    close(lfd);
    close(sigchld_pipe[0]);
    close(sigchld_pipe[1]);
    for (int i = 0; i < a->max_clients; i++)
        if (seats[i].pid) close(seats[i].fd);
    serve_client(svc, a, fd, id, who);
    close(fd);
    _exit(0);
}

/* Frees the seats of the children that ended; a child that did not end normally (a signal,
 * a non-zero status: a plugin crashed or called exit) is logged and reported to its client
 * in place of the reply it was working on. */
static void reap_children(const cli_line_service *svc, const cli_tcp_options *a, seat *seats,
                          int *active)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        seat *s = NULL;
        for (int i = 0; i < a->max_clients && !s; i++)
            if (seats[i].pid == pid) s = &seats[i];
        if (!s) continue;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            char how[160];
            if (WIFSIGNALED(status))
                snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status),
                         strsignal(WTERMSIG(status)));
            else
                snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
            cli_lines_log("%s: its session process %ld %s; the session is over, the other clients "
                          "go on",
                          s->who, (long)pid, how);
            send_line_nowait(s->fd, error_line(svc, "session_crashed",
                                               "the process serving this session (pid %ld) %s: "
                                               "the session and its env are gone; connect "
                                               "again for a new one",
                                               (long)pid, how));
            shutdown(s->fd, SHUT_WR);
            /* read what the client already sent, so closing does not reset the connection
             * (which could discard the report before the client reads it) */
            char sink[4096];
            for (int k = 0; k < 256 && recv(s->fd, sink, sizeof sink, MSG_DONTWAIT) > 0; k++) {
            }
        }
        close(s->fd);
        s->pid = 0;
        (*active)--;
    }
}

static int serve_isolated(const cli_line_service *svc, const cli_tcp_options *a, int lfd)
{
    seat *seats = calloc((size_t)a->max_clients, sizeof *seats);
    int fl = fcntl(lfd, F_GETFL);
    if (!seats || pipe(sigchld_pipe) != 0 || fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK) != 0 ||
        fcntl(sigchld_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(sigchld_pipe[1], F_SETFL, O_NONBLOCK) != 0) {
        fprintf(stderr, "polis: serve: --isolate: %s\n", seats ? strerror(errno) : "out of memory");
        free(seats);
        return EXIT_ENV;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    pid_t server_pid = getpid();
    int active = 0;
    unsigned next_id = 0;
    for (;;) {
        struct pollfd p[2] = {{.fd = lfd, .events = POLLIN, .revents = 0},
                              {.fd = sigchld_pipe[0], .events = POLLIN, .revents = 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "polis: serve: poll: %s\n", strerror(errno));
            break;
        }
        if (p[1].revents) {
            char sink[64];
            while (read(sigchld_pipe[0], sink, sizeof sink) > 0) {
            }
            reap_children(svc, a, seats, &active);
        }
        if (!(p[0].revents & POLLIN)) continue;
        accepted ac;
        int got = next_client(lfd, &next_id, &ac);
        if (got < 0) break;
        if (!got) continue;
        int fd = ac.fd;
        if (active >= a->max_clients) {
            refuse_full(svc, fd, a->max_clients);
            continue;
        }
        seat *s = NULL;
        for (int i = 0; i < a->max_clients && !s; i++)
            if (!seats[i].pid) s = &seats[i];
        pid_t pid = fork();
        if (pid == 0) isolated_child(svc, a, fd, ac.id, ac.who, lfd, seats, server_pid);
        if (pid < 0) {
            send_line_nowait(fd, error_line(svc, "server_full",
                                            "cannot start a session process: %s", strerror(errno)));
            close(fd);
            continue;
        }
        s->pid = pid;
        s->fd = fd;
        snprintf(s->who, sizeof s->who, "%s", ac.who);
        active++;
    }
    free(seats);
    return EXIT_ENV;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return false;
}

int cli_lines_tcp(const cli_line_service *svc, const cli_tcp_options *a)
{
    char host[256] = "127.0.0.1";
    const char *port = a->tcp;
    const char *colon = strrchr(a->tcp, ':');
    if (colon) {
        size_t hl = (size_t)(colon - a->tcp);
        if (hl >= sizeof host) return cli_usage("serve", "--tcp: host name too long");
        if (hl) {
            memcpy(host, a->tcp, hl);
            host[hl] = '\0';
            /* [::1]:port */
            if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
                memmove(host, host + 1, hl - 2);
                host[hl - 2] = '\0';
            }
        }
        port = colon + 1;
    }
    char *end;
    long pn = strtol(port, &end, 10);
    if (!*port || *end || pn < 0 || pn > 65535)
        return cli_usage("serve", "--tcp: '%s' is not [HOST:]PORT with PORT in [0, 65535]", a->tcp);

    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        fprintf(stderr, "polis: serve: --tcp: cannot resolve '%s': %s\n", host, gai_strerror(gai));
        return EXIT_ENV;
    }
    if (!a->allow_remote && !is_loopback(res->ai_addr)) {
        freeaddrinfo(res);
        return cli_usage("serve",
                         "--tcp: '%s' is not a loopback address; the protocol has no "
                         "authentication, so pass --allow-remote to serve other machines",
                         host);
    }
    /* Check a session opens before listening, so a bad scenario fails at once. */
    char err[1024];
    void *probe = svc->open(svc->ud, -1, NULL, err, sizeof err);
    if (!probe) {
        freeaddrinfo(res);
        fprintf(stderr, "polis: serve: %s\n", err);
        return EXIT_ENV;
    }
    svc->close(probe);

    int lfd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    int one = 1;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(lfd, res->ai_addr, res->ai_addrlen) != 0 || listen(lfd, 16) != 0) {
        fprintf(stderr, "polis: serve: --tcp %s: %s\n", a->tcp, strerror(errno));
        if (lfd >= 0) close(lfd);
        freeaddrinfo(res);
        return EXIT_ENV;
    }
    freeaddrinfo(res);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    char shown[INET6_ADDRSTRLEN] = "?";
    int bport = 0;
    if (getsockname(lfd, (struct sockaddr *)&bound, &blen) == 0) {
        if (bound.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&bound;
            inet_ntop(AF_INET, &in->sin_addr, shown, sizeof shown);
            bport = ntohs(in->sin_port);
        } else {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&bound;
            inet_ntop(AF_INET6, &in6->sin6_addr, shown, sizeof shown);
            bport = ntohs(in6->sin6_port);
        }
    }
    bool v6 = bound.ss_family == AF_INET6;
    fprintf(stderr, "polis serve: listening on %s%s%s:%d\n", v6 ? "[" : "", shown, v6 ? "]" : "",
            bport);
    fflush(stderr);

    int rc = a->isolate ? serve_isolated(svc, a, lfd) : serve_threads(svc, a, lfd);
    close(lfd);
    return rc;
}
