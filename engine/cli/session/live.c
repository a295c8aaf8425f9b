/*
 * engine/cli/session/live.c — `polis serve SCENARIO --http [HOST:]PORT`: episodes played live by
 * people, agent-protocol clients (LLM agents) and the scenario's policies together
 * (docs/viewer.md, "Live play"; docs/clients.md, "Live games").
 *
 * One env, one thread, one event loop (the connections are transport/ws.c's). The episodes'
 * record lines (the same lines `--record` writes: header, then per episode reset, keyframes,
 * steps, end) come from a recorder whose sink appends them to an in-memory log; every page
 * that connects with the WebSocket protocol "polis-follow" gets the log from its start and
 * then each line as it is written, so any number of watchers see identical bytes. Over the
 * protocol "polis-seat" a
 * page (or any client) takes a free human seat and sends its agent's actions as JSON. With
 * --tcp the same loop listens for agent-protocol clients (JSON lines, the requests of
 * `polis serve --tcp`): a client joins with "reset", which gives it the client seats, and
 * each "step" or "advance" is answered after the tick(s) that used it. Other seats are
 * played by the scenario's policies. The game ticks every --tick-ms, a seat whose player did
 * not act doing noop, or (the default) waits until every human and client seat has acted.
 * Every message is checked and a bad one answered with an error naming it.
 *
 * Like the rest of the CLI it uses only the public API (include/polis).
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <cjson/cJSON.h>

#include "session/episode.h"
#include "session/live.h"
#include "session/proto.h"
#include "session/record.h"
#include "session/seats.h"
#include "util/util.h"
#include "polis/polis.h"

enum { SEAT_POLICY = 0, SEAT_HUMAN, SEAT_CLIENT };
/* An agent-protocol request line longer than this is refused (its bytes dropped as they come),
 * as in `polis serve --tcp`. */
enum { CLIENT_MAX_LINE = 1 << 20 };
/* "advance": at most this many ticks per request (default 100), as in `polis serve`. */
enum { ADVANCE_MAX_TICKS = 10000, ADVANCE_DEFAULT_TICKS = 100 };

typedef cli_live_args live_args;

/* The record stream the pages follow (docs/viewer.md, "Live play"): the header line, the
 * episode's reset line, and the stream's recent bytes [base, base + len): at least everything
 * since the episode's latest keyframe and the last STREAM_KEEP bytes, so a page that joins is
 * sent the header, the reset line and the stream from that keyframe, and a page that follows
 * may fall up to STREAM_KEEP bytes behind. Older bytes are dropped once STREAM_KEEP of them
 * pile up, so the memory stays bounded however long the game runs. */
enum { STREAM_KEEP = 4 << 20 };
/* A human seat's token: 128 random bits in hex. */
enum { TOKEN_LEN = 32 };

typedef struct live_stream {
    char *header;
    size_t header_len;
    char *reset; /* the reset line of the episode in play */
    size_t reset_len, reset_cap;
    char *buf;
    size_t len, cap;
    uint64_t base;   /* the stream offset of buf[0] */
    uint64_t key_at; /* the stream offset of the episode's latest keyframe line */
    bool failed;
} live_stream;

struct seat_client;
struct agent_client;

/* How a client seat's plan ended since its holder's last reply. */
enum { NOTE_NONE = 0, NOTE_DONE, NOTE_IMPOSSIBLE, NOTE_CANCELLED };
static const char *const NOTE_STATUS[] = {"running", "done", "impossible", "cancelled"};

typedef struct plan_note {
    int status; /* NOTE_* */
    char command[256];
    char why[1280];
} plan_note;

struct cli_live {
    polis_env *env;
    int32_t n;
    int32_t n_actions;
    int *seat_kind;      /* [n] SEAT_* */
    int32_t *policy;     /* [n] the policy of a SEAT_POLICY seat; -1: played through `outside` */
    cli_seats *outside;  /* seats played by policy processes or populations (seats.h) */
    bool *outside_seat;  /* [n] */
    bool outside_failed; /* a process failed: its seats noop from then on */
    char *scenario_file; /* the scenario file */
    struct seat_client **holder;  /* [n] who holds a human seat, or NULL */
    struct agent_client **client; /* [n] who holds a client seat, or NULL */
    int32_t *pending;             /* [n] a human's or client's action for the next tick, -1: none */
    char **pending_text;          /* [n] what the player sent (for the step line's "msgs") */
    const char **pending_kind;    /* [n] "action" or "plan" */
    int32_t *planned;             /* [n] a client seat's plan action for the next tick, -1: none */
    plan_note *note;    /* [n] a client seat's plan that ended since its holder's last reply */
    double *reward;     /* [n] a client seat's rewards since its holder's last reply */
    uint8_t *illegal;   /* [n] an illegal flag since its holder's last reply */
    int64_t *n_illegal; /* [n] this episode's illegal flags */
    int64_t *n_bad;     /* [n] this episode's refused actions of a client */
    int64_t tick_ms;
    int64_t episode;  /* the episode being played, from 0 */
    int64_t episodes; /* how many to play; 0: no end */
    uint64_t seed;    /* the episode's */
    bool over;        /* no episode is being played: all were, or a step failed */
    bool tick_queued;
    bool has_json, has_text, has_metrics;
    polis_recorder *rec;  /* the stream's */
    polis_recorder *file; /* --record */
    live_stream stream;
    char (*token)[TOKEN_LEN + 1]; /* [n] a human seat's token ("" for other seats) */
    cli_live_link link;           /* the connections (cli_live_start) */
    bool linked;
    struct seat_client *clients; /* every "polis-seat" connection */
    struct agent_client *agents; /* every --tcp connection */
    unsigned n_connected;        /* --tcp connections so far (their numbers in the log) */
};
typedef cli_live live;

typedef struct seat_client {
    int32_t agent; /* -1: none taken */
    void *conn;
    const cli_live_link *link;
    struct seat_client *next; /* the list of every seat connection */
} seat_client;

/* What an agent-protocol client waits for. */
enum { WAIT_NONE = 0, WAIT_STEP, WAIT_ADVANCE };

typedef struct agent_client {
    void *conn;
    const cli_live_link *link;
    unsigned number; /* counted from 1 in the order of connection */
    char *in;        /* received bytes not yet handled */
    size_t in_len;
    uint64_t dropping; /* >0: the bytes so far of a line over CLIENT_MAX_LINE */
    int wait;          /* WAIT_*: a step or advance waits for its tick(s) */
    cJSON *wait_id;    /* that request's "id" */
    int64_t wait_left; /* advance: ticks it may still take */
    int64_t episode;   /* the episode it joined with "reset"; -1: none */
    int64_t ticks;     /* ticks since its last step reply (or its reset) */
    bool closing;      /* "close" answered: close once the reply is out */
    bool spoke;        /* it has sent a line */
    struct agent_client *next;
} agent_client;

/* ---- the record stream ---------------------------------------------------------------------- */

static bool starts(const char *line, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(line, prefix, n) == 0;
}

static bool keep_copy(char **dst, size_t *dlen, size_t *dcap, const char *src, size_t len)
{
    if (len > *dcap) {
        char *p = realloc(*dst, len);
        if (!p) return false;
        *dst = p;
        *dcap = len;
    }
    memcpy(*dst, src, len);
    *dlen = len;
    return true;
}

static void stream_sink(void *ud, const char *line, size_t len)
{
    live_stream *st = &((live *)ud)->stream;
    if (st->failed) return;
    if (!st->header) {
        size_t cap = 0;
        if (!keep_copy(&st->header, &st->header_len, &cap, line, len)) st->failed = true;
    } else {
        uint64_t end = st->base + st->len;
        if (starts(line, len, "{\"t\":\"reset\"")) {
            if (!keep_copy(&st->reset, &st->reset_len, &st->reset_cap, line, len))
                st->failed = true;
            st->key_at = end + len; /* the tick-0 keyframe comes next */
        } else if (starts(line, len, "{\"t\":\"key\"")) {
            st->key_at = end;
        }
        /* drop what no page needs once there is STREAM_KEEP of it */
        uint64_t keep = end + len > STREAM_KEEP ? end + len - STREAM_KEEP : 0;
        if (st->key_at < keep) keep = st->key_at;
        if (keep > st->base && keep - st->base >= STREAM_KEEP) {
            size_t drop = (size_t)(keep - st->base);
            memmove(st->buf, st->buf + drop, st->len - drop);
            st->len -= drop;
            st->base = keep;
        }
        if (!st->failed && st->len + len > st->cap) {
            size_t cap = st->cap ? st->cap : 1 << 16;
            while (cap < st->len + len) cap *= 2;
            char *p = realloc(st->buf, cap);
            if (p) {
                st->buf = p;
                st->cap = cap;
            } else {
                st->failed = true;
            }
        }
        if (!st->failed) {
            memcpy(st->buf + st->len, line, len);
            st->len += len;
        }
    }
    if (st->failed) fprintf(stderr, "polis: serve: out of memory for the live stream\n");
}

static const char *player_name(const live *lv, int32_t i)
{
    switch (lv->seat_kind[i]) {
    case SEAT_HUMAN: return "human";
    case SEAT_CLIENT: return "client";
    default:
        return lv->policy[i] < 0 ? cli_seats_assigned(lv->outside, i)
                                 : polis_env_policy_name(lv->env, lv->policy[i]);
    }
}

static bool finished(const live *lv, int32_t i)
{
    const polis_io *io = polis_env_io(lv->env);
    return io->terminations[i] || io->truncations[i];
}

/* ---- replies to seat clients ------------------------------------------------------------- */

/* Queues r's compact text (r is consumed) on the connection. */
static void send_reply(const cli_live_link *link, void *conn, cJSON *r)
{
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    cJSON_Delete(r);
    if (text) link->send(conn, text);
    cJSON_free(text);
}

/* Queues r (consumed) for c and asks to write. */
static void seat_send(seat_client *c, cJSON *r) { send_reply(c->link, c->conn, r); }

#if defined(__GNUC__)
static cJSON *live_error(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
static cJSON *live_error(const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "error");
    cJSON_AddStringToObject(r, "code", code);
    cJSON_AddStringToObject(r, "message", msg);
    return r;
}

/* The seats: every agent, who plays it, whether a human seat is free. */
static cJSON *seats_reply(const live *lv, const seat_client *c)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "seats");
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(lv->env));
    cJSON_AddNumberToObject(r, "episode", (double)lv->episode);
    cJSON_AddBoolToObject(r, "over", lv->over);
    cJSON_AddStringToObject(r, "mode", lv->tick_ms ? "fixed" : "wait");
    cJSON_AddNumberToObject(r, "tick_ms", (double)lv->tick_ms);
    cJSON *arr = cJSON_AddArrayToObject(r, "seats");
    for (int32_t i = 0; i < lv->n; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "agent", polis_env_agent_name(lv->env, i));
        cJSON_AddStringToObject(s, "player", player_name(lv, i));
        cJSON_AddBoolToObject(s, "free",
                              (lv->seat_kind[i] == SEAT_HUMAN && !lv->holder[i]) ||
                                  (lv->seat_kind[i] == SEAT_CLIENT && !lv->client[i]));
        cJSON_AddBoolToObject(s, "yours", c && c->agent == i);
        cJSON_AddItemToArray(arr, s);
    }
    return r;
}

/* What the holder of agent's seat may do now: the legal actions (from the mask) with their
 * docs, and the plan commands. */
static cJSON *turn_reply(const live *lv, int32_t agent)
{
    const polis_io *io = polis_env_io(lv->env);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "turn");
    cJSON_AddStringToObject(r, "agent", polis_env_agent_name(lv->env, agent));
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(lv->env));
    cJSON_AddNumberToObject(r, "episode", (double)lv->episode);
    bool done = lv->over || finished(lv, agent);
    cJSON_AddBoolToObject(r, "done", done);
    cJSON_AddBoolToObject(r, "acted", lv->pending[agent] >= 0);
    cJSON *legal = cJSON_AddArrayToObject(r, "legal");
    const uint8_t *mask = io->masks + (size_t)agent * (size_t)lv->n_actions;
    for (int32_t k = 0; !done && k < lv->n_actions; k++) {
        if (!mask[k]) continue;
        cJSON *a = cJSON_CreateObject();
        cJSON_AddNumberToObject(a, "id", k);
        cJSON_AddStringToObject(a, "name", polis_env_action_name(lv->env, k));
        cJSON_AddStringToObject(a, "doc", polis_env_action_doc(lv->env, k));
        cJSON_AddItemToArray(legal, a);
    }
    cJSON *plans = cJSON_AddArrayToObject(r, "plans");
    for (int32_t m = 0; m < polis_env_n_macros(lv->env); m++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "usage", polis_env_macro_usage(lv->env, m));
        cJSON_AddStringToObject(p, "doc", polis_env_macro_doc(lv->env, m));
        cJSON_AddItemToArray(plans, p);
    }
    const char *plan = polis_env_plan_command(lv->env, agent);
    if (plan)
        cJSON_AddStringToObject(r, "plan", plan);
    else
        cJSON_AddNullToObject(r, "plan");
    /* who sees whom (docs/visibility.md): the agents this one may not see now, so the page
     * shows the seat's view without them */
    cJSON *hidden = cJSON_AddArrayToObject(r, "hidden");
    for (int32_t j = 0; hidden && polis_env_visibility_active(lv->env) && j < lv->n; j++)
        if (!polis_env_visible(lv->env, agent, j))
            cJSON_AddItemToArray(hidden, cJSON_CreateString(polis_env_agent_name(lv->env, j)));
    return r;
}

/* Tells every seat connection but `except` that the seats changed (a seat taken or freed):
 * the seats with "changed": true, so a client can tell it from an answer. */
static void seats_changed(live *lv, const seat_client *except)
{
    for (seat_client *c = lv->clients; c; c = c->next) {
        if (c == except) continue;
        cJSON *r = seats_reply(lv, c);
        cJSON_AddTrueToObject(r, "changed");
        seat_send(c, r);
    }
}

static void send_turns(live *lv)
{
    for (int32_t i = 0; i < lv->n; i++)
        if (lv->holder[i]) seat_send(lv->holder[i], turn_reply(lv, i));
}

/* ---- replies to agent-protocol clients ---------------------------------------------------- */

/* Queues r (consumed) as one line for c, with the request's id (not consumed; may be NULL). */
static void client_send(agent_client *c, cJSON *r, const cJSON *id)
{
    if (r && id) cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, true));
    send_reply(c->link, c->conn, r);
}

static bool holds_any(const live *lv, const agent_client *c)
{
    for (int32_t i = 0; i < lv->n; i++)
        if (lv->client[i] == c) return true;
    return false;
}

/* The per-agent part of a client's reset and step replies, for its seats: with_step adds the
 * rewards and flags since its last reply and how its plans ended (then forgotten). NULL, or
 * an engine_error reply. */
static cJSON *client_agents(live *lv, agent_client *c, cJSON *r, bool with_step)
{
    const polis_io *io = polis_env_io(lv->env);
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(lv->env));
    cJSON_AddBoolToObject(r, "done", polis_env_done(lv->env));
    cJSON *agents = cJSON_AddObjectToObject(r, "agents");
    for (int32_t i = 0; i < lv->n; i++) {
        if (lv->client[i] != c) continue;
        cJSON *a = cJSON_AddObjectToObject(agents, polis_env_agent_name(lv->env, i));
        if (with_step) {
            cJSON_AddNumberToObject(a, "reward", lv->reward[i]);
            cJSON_AddBoolToObject(a, "terminated", io->terminations[i]);
            cJSON_AddBoolToObject(a, "truncated", io->truncations[i]);
            cJSON_AddBoolToObject(a, "illegal", lv->illegal[i]);
            cJSON_AddNullToObject(a, "bad_action");
        }
        const char *running = polis_env_plan_command(lv->env, i);
        const plan_note *nt = &lv->note[i];
        if (running || (with_step && nt->status != NOTE_NONE))
            cli_proto_plan(a, running, NOTE_STATUS[nt->status], nt->command, nt->why);
        cJSON *err = cli_proto_views(lv->env, i, a, lv->has_json, lv->has_text);
        if (err) {
            cJSON_Delete(r);
            return err;
        }
        if (with_step) {
            lv->reward[i] = 0;
            lv->illegal[i] = 0;
            lv->note[i].status = NOTE_NONE;
        }
    }
    cJSON *st = cJSON_AddObjectToObject(r, "stats");
    cJSON_AddNumberToObject(st, "steps", (double)polis_env_tick(lv->env));
    cJSON *bad = cJSON_AddObjectToObject(st, "bad_actions");
    cJSON *ill = cJSON_AddObjectToObject(st, "illegal_actions");
    int64_t illegal = 0;
    for (int32_t i = 0; i < lv->n; i++) {
        illegal += lv->n_illegal[i];
        if (lv->client[i] != c) continue;
        cJSON_AddNumberToObject(bad, polis_env_agent_name(lv->env, i), (double)lv->n_bad[i]);
        cJSON_AddNumberToObject(ill, polis_env_agent_name(lv->env, i), (double)lv->n_illegal[i]);
    }
    if (with_step && lv->has_metrics && polis_env_done(lv->env)) {
        cJSON *err = cli_proto_metrics(lv->env, polis_env_tick(lv->env), illegal, r);
        if (err) {
            cJSON_Delete(r);
            return err;
        }
    }
    return r;
}

static void client_pump(live *lv, agent_client *c);

/* Answers c's waiting step or advance (after the tick(s) that used it). */
static void client_answer(live *lv, agent_client *c, const char *stopped)
{
    cJSON *r = cli_proto_ok(c->wait == WAIT_ADVANCE ? "advance" : "step");
    cJSON_AddNumberToObject(r, "ticks", (double)c->ticks);
    if (c->wait == WAIT_ADVANCE) cJSON_AddStringToObject(r, "stopped", stopped);
    client_send(c, client_agents(lv, c, r, true), c->wait_id);
    cJSON_Delete(c->wait_id);
    c->wait_id = NULL;
    c->wait = WAIT_NONE;
    c->link->waiting(c->conn, false);
    c->ticks = 0;
    client_pump(lv, c);
}

/* ---- the episode ------------------------------------------------------------------------ */

static void schedule_tick(live *lv, int64_t us)
{
    lv->link.timer(lv->link.ud, us);
    lv->tick_queued = true;
}

/* Whether seat i has what the coming tick needs from its player, in waiting mode: a human's
 * action (or a plan it follows), a client's step or advance. A finished agent needs none. */
static bool seat_ready(const live *lv, int32_t i)
{
    if (finished(lv, i)) return true;
    if (lv->seat_kind[i] == SEAT_HUMAN)
        return lv->pending[i] >= 0 || polis_env_plan_command(lv->env, i);
    if (lv->seat_kind[i] == SEAT_CLIENT) {
        const agent_client *c = lv->client[i];
        return c && c->wait != WAIT_NONE && c->episode == lv->episode;
    }
    return true;
}

/* Whether the game may tick now in waiting mode: every seat is ready. */
static bool all_ready(const live *lv)
{
    for (int32_t i = 0; i < lv->n; i++)
        if (!seat_ready(lv, i)) return false;
    return true;
}

/* In waiting mode, ticks as soon as every seat is ready. */
static void maybe_tick(live *lv)
{
    if (!lv->tick_ms && !lv->tick_queued && !lv->over && all_ready(lv)) schedule_tick(lv, 0);
}

/* Sends the pages that follow the stream what it grew by. */
static void stream_wake(live *lv)
{
    if (lv->linked) lv->link.stream_grew(lv->link.ud);
}

static void record_both(live *lv, polis_status (*fn)(polis_recorder *))
{
    if (lv->rec && fn(lv->rec) != POLIS_OK)
        fprintf(stderr, "polis: serve: live stream: %s\n", polis_recorder_error(lv->rec));
    if (lv->file && fn(lv->file) != POLIS_OK) {
        fprintf(stderr, "polis: serve: --record: %s; recording stopped\n",
                polis_recorder_error(lv->file));
        polis_recorder_close(lv->file);
        lv->file = NULL;
    }
}

static polis_status end_no_metrics(polis_recorder *rec)
{
    return polis_recorder_end_episode(rec, NULL);
}

static void note_plan(live *lv, int32_t i, int status, const char *command, const char *why)
{
    plan_note *nt = &lv->note[i];
    nt->status = status;
    snprintf(nt->command, sizeof nt->command, "%s", command ? command : "");
    snprintf(nt->why, sizeof nt->why, "%s", why ? why : "");
}

/* Asks client seat i's running plan for the next tick's action (lv->planned), noting a plan
 * that has ended: a client learns of it in the reply of the tick that ended it. A macro that
 * fails ends its plan as impossible, the episode goes on. */
static void plan_ahead(live *lv, int32_t i)
{
    char command[256];
    snprintf(command, sizeof command, "%s", polis_env_plan_command(lv->env, i));
    polis_plan_state ps;
    int32_t act = 0;
    const char *why = NULL;
    lv->planned[i] = -1;
    if (polis_env_plan_next(lv->env, i, &ps, &act, &why) != POLIS_OK) {
        char msg[1280];
        snprintf(msg, sizeof msg, "macro error: %s", polis_env_error(lv->env));
        note_plan(lv, i, NOTE_IMPOSSIBLE, command, msg);
    } else if (ps == POLIS_PLAN_RUNNING) {
        lv->planned[i] = act;
    } else {
        note_plan(lv, i, ps == POLIS_PLAN_DONE ? NOTE_DONE : NOTE_IMPOSSIBLE, command, why);
    }
}

/* Starts episode lv->episode (seed: the first one's plus its number). */
static bool begin_episode(live *lv, uint64_t seed)
{
    lv->seed = seed;
    for (int32_t i = 0; i < lv->n; i++) {
        lv->pending[i] = -1;
        lv->planned[i] = -1;
        lv->note[i].status = NOTE_NONE;
        lv->reward[i] = 0;
        lv->illegal[i] = 0;
        lv->n_illegal[i] = 0;
        lv->n_bad[i] = 0;
        free(lv->pending_text[i]);
        lv->pending_text[i] = NULL;
    }
    if (polis_env_reset(lv->env, seed) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s\n", polis_env_error(lv->env));
        return false;
    }
    char why[2048];
    if (lv->outside && !lv->outside_failed &&
        !cli_seats_begin(lv->outside, lv->episode, seed, why, sizeof why)) {
        fprintf(stderr, "polis: serve: %s; those seats do noop from now on\n", why);
        lv->outside_failed = true;
    }
    if ((lv->rec && polis_recorder_begin_episode(lv->rec, seed) != POLIS_OK) ||
        (lv->file && polis_recorder_begin_episode(lv->file, seed) != POLIS_OK)) {
        fprintf(stderr, "polis: serve: cannot record the reset\n");
        return false;
    }
    return true;
}

/* What the seat processes report of the episode that ended (seat protocol "end": an LLM's
 * calls, tokens and cost), into `figures`; `m` is the game's merged metrics (or NULL). A
 * process that fails is reported and its seats do noop from then on, as when it fails to act. */
static void outside_figures(live *lv, const cJSON *m, cJSON *figures)
{
    if (!lv->outside || lv->outside_failed || !figures) return;
    cJSON *game = m ? cli_metrics_flat(m) : cJSON_CreateObject();
    char why[2048];
    if (!game) {
        fprintf(stderr, "polis: serve: out of memory\n");
    } else if (!cli_seats_end(lv->outside, game, figures, why, sizeof why)) {
        fprintf(stderr, "polis: serve: %s; those seats do noop from now on\n", why);
        lv->outside_failed = true;
        while (figures->child) cJSON_Delete(cJSON_DetachItemViaPointer(figures, figures->child));
    }
    cJSON_Delete(game);
    /* one line on stderr: the figures in total (a seat's are NAME.AGENT, in the end line) */
    char line[1024];
    size_t used = 0;
    line[0] = '\0';
    for (const cJSON *f = figures->child; f && used < sizeof line - 64; f = f->next) {
        if (strchr(f->string, '.') != strrchr(f->string, '.')) continue; /* llm.calls.agent_0 */
        int w = cJSON_IsNumber(f) ? snprintf(line + used, sizeof line - used, "%s%s %.6g",
                                             used ? ", " : "", f->string, f->valuedouble)
                                  : snprintf(line + used, sizeof line - used, "%s%s null",
                                             used ? ", " : "", f->string);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used)
        fprintf(stderr, "polis serve: episode %" PRId64 ": the seat processes report %s\n",
                lv->episode, line);
}

/* The end of an episode: the end lines, then the next episode or none. */
static void episode_ended(live *lv)
{
    /* the end lines carry the metrics as `polis eval` records them: the "metrics" rendering
     * merged into one object (what `polis replay --verify` recomputes), and what the seat
     * processes reported of the episode (end_metrics: CLI_REPORTED) */
    cJSON *m = NULL;
    if (lv->has_metrics) {
        char *text = NULL;
        if (polis_env_render(lv->env, 0, "metrics", &text) == POLIS_OK) m = cli_metrics_parse(text);
        polis_free(text);
    }
    cJSON *figures = cJSON_CreateObject();
    outside_figures(lv, m, figures);
    bool oom = false;
    cJSON *both = cli_end_metrics(m, figures, &oom);
    char *metrics = both ? cJSON_PrintUnformatted(both) : NULL;
    if (oom || (both && !metrics)) fprintf(stderr, "polis: serve: out of memory\n");
    cJSON_Delete(both);
    cJSON_Delete(figures);
    cJSON_Delete(m);
    if (lv->rec && polis_recorder_end_episode(lv->rec, metrics) != POLIS_OK)
        fprintf(stderr, "polis: serve: live stream: %s\n", polis_recorder_error(lv->rec));
    if (lv->file && polis_recorder_end_episode(lv->file, metrics) != POLIS_OK) {
        fprintf(stderr, "polis: serve: --record: %s; recording stopped\n",
                polis_recorder_error(lv->file));
        polis_recorder_close(lv->file);
        lv->file = NULL;
    }
    cJSON_free(metrics);
    fprintf(stderr, "polis serve: episode %" PRId64 " ended at tick %" PRId64 "\n", lv->episode,
            polis_env_tick(lv->env));
    if (lv->episodes && lv->episode + 1 >= lv->episodes) {
        lv->over = true;
        if (lv->file) {
            if (polis_recorder_close(lv->file) != POLIS_OK)
                fprintf(stderr, "polis: serve: --record: %s\n", polis_recorder_error(lv->file));
            lv->file = NULL;
        }
        fprintf(stderr, "polis serve: all %" PRId64 " episodes played\n", lv->episodes);
        return;
    }
    lv->episode++;
    if (!begin_episode(lv, lv->seed + 1)) lv->over = true;
}

/* One tick: policies act, humans' and clients' actions (noop if none), plans, step, record;
 * then the replies of the clients whose requests the tick answers. */
static void live_tick(live *lv)
{
    const polis_io *io = polis_env_io(lv->env);
    for (int32_t i = 0; i < lv->n; i++) {
        io->actions[i] = 0;
        if (finished(lv, i)) {
            /* nothing to do: the env ignores a finished agent's action */
        } else if (lv->seat_kind[i] == SEAT_POLICY && lv->policy[i] < 0) {
            /* a policy process or a population: asked after this loop, all at once */
        } else if (lv->seat_kind[i] == SEAT_POLICY) {
            if (polis_env_policy_act(lv->env, lv->policy[i], &i, 1) != POLIS_OK) {
                fprintf(stderr, "polis: serve: %s\n", polis_env_error(lv->env));
                io->actions[i] = 0;
            }
        } else if (lv->pending[i] >= 0) {
            io->actions[i] = lv->pending[i];
        } else if (lv->seat_kind[i] == SEAT_CLIENT) {
            if (lv->planned[i] >= 0) io->actions[i] = lv->planned[i];
        } else if (polis_env_plan_command(lv->env, i)) {
            polis_plan_state ps;
            int32_t act = 0;
            const char *why = NULL;
            if (polis_env_plan_next(lv->env, i, &ps, &act, &why) == POLIS_OK &&
                ps == POLIS_PLAN_RUNNING)
                io->actions[i] = act;
        }
        if (lv->pending_text[i]) {
            if (lv->rec) polis_recorder_msg(lv->rec, i, lv->pending_kind[i], lv->pending_text[i]);
            if (lv->file) polis_recorder_msg(lv->file, i, lv->pending_kind[i], lv->pending_text[i]);
            free(lv->pending_text[i]);
            lv->pending_text[i] = NULL;
        }
        lv->pending[i] = -1;
        lv->planned[i] = -1;
    }
    char why[2048];
    if (lv->outside && !lv->outside_failed &&
        !cli_seats_act(lv->outside, lv->outside_seat, why, sizeof why)) {
        fprintf(stderr, "polis: serve: %s; those seats do noop from now on\n", why);
        lv->outside_failed = true;
        for (int32_t i = 0; i < lv->n; i++)
            if (lv->outside_seat[i]) io->actions[i] = 0;
    }
    if (polis_env_step(lv->env) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s; the game stops\n", polis_env_error(lv->env));
        lv->over = true;
        for (agent_client *c = lv->agents; c; c = c->next) {
            if (c->wait == WAIT_NONE) continue;
            cJSON_Delete(c->wait_id);
            c->wait_id = NULL;
            c->wait = WAIT_NONE;
            c->link->waiting(c->conn, false);
            client_send(c,
                        cli_proto_error("engine_error", NULL, "%s; the game stops",
                                        polis_env_error(lv->env)),
                        NULL);
        }
        stream_wake(lv);
        send_turns(lv);
        return;
    }
    record_both(lv, polis_recorder_step);
    bool done = polis_env_done(lv->env);
    for (int32_t i = 0; i < lv->n; i++) {
        lv->n_illegal[i] += io->illegal[i];
        if (lv->seat_kind[i] != SEAT_CLIENT) continue;
        lv->reward[i] += io->rewards[i];
        lv->illegal[i] |= io->illegal[i];
        if (polis_env_plan_command(lv->env, i)) plan_ahead(lv, i);
    }
    /* the clients this tick answers: every step; an advance when one of its plans ended, the
     * episode ended, or its ticks are used up */
    for (agent_client *c = lv->agents; c; c = c->next) {
        if (c->episode != lv->episode) continue;
        c->ticks++;
        if (c->wait == WAIT_STEP) {
            client_answer(lv, c, NULL);
        } else if (c->wait == WAIT_ADVANCE) {
            bool ended = false;
            for (int32_t i = 0; i < lv->n; i++)
                ended |= lv->client[i] == c &&
                         (lv->note[i].status == NOTE_DONE || lv->note[i].status == NOTE_IMPOSSIBLE);
            c->wait_left--;
            if (done)
                client_answer(lv, c, "episode_done");
            else if (ended)
                client_answer(lv, c, "plan_ended");
            else if (c->wait_left <= 0)
                client_answer(lv, c, "max_ticks");
        }
    }
    if (done) episode_ended(lv);
    stream_wake(lv);
    send_turns(lv);
}

void cli_live_tick(cli_live *lv)
{
    lv->tick_queued = false;
    if (lv->over) return;
    if (lv->tick_ms) {
        live_tick(lv);
        if (!lv->over) schedule_tick(lv, lv->tick_ms * 1000);
    } else if (all_ready(lv)) {
        live_tick(lv);
        maybe_tick(lv);
    }
}

/* ---- the seat protocol -------------------------------------------------------------------- */

/* Compares in time independent of where the texts differ. */
static bool token_matches(const char *want, const char *given)
{
    size_t n = strlen(given);
    unsigned diff = n != TOKEN_LEN;
    for (size_t k = 0; k < TOKEN_LEN; k++)
        diff |= (unsigned char)want[k] ^ (unsigned char)(k < n ? given[k] : 0);
    return diff == 0;
}

static cJSON *op_take(live *lv, seat_client *c, const cJSON *req)
{
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(req, "agent");
    if (!cJSON_IsString(ag))
        return live_error("bad_request", "\"take\" needs \"agent\": the name of a human seat");
    int32_t i = cli_agent_find(lv->env, ag->valuestring);
    if (i < 0) return live_error("unknown_seat", "no agent named \"%.64s\"", ag->valuestring);
    if (lv->seat_kind[i] == SEAT_CLIENT)
        return live_error("not_human",
                          "agent %s is played by an agent-protocol client (--tcp), "
                          "not by a person",
                          ag->valuestring);
    if (lv->seat_kind[i] != SEAT_HUMAN)
        return live_error("not_human", "agent %s is played by the policy %s, not by a person",
                          ag->valuestring, polis_env_policy_name(lv->env, lv->policy[i]));
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(req, "token");
    if (!cJSON_IsString(tok) || !token_matches(lv->token[i], tok->valuestring))
        return live_error("bad_token",
                          "agent %s's seat needs its token: open the seat's link that polis "
                          "serve printed (\"token\" in the page's address)",
                          ag->valuestring);
    if (c->agent == i) return turn_reply(lv, i);
    if (lv->holder[i]) return live_error("seat_taken", "agent %s's seat is taken", ag->valuestring);
    if (c->agent >= 0)
        return live_error("already_seated",
                          "you hold agent %s's seat; send {\"op\": \"leave\"} first",
                          polis_env_agent_name(lv->env, c->agent));
    lv->holder[i] = c;
    c->agent = i;
    fprintf(stderr, "polis serve: agent %s's seat taken\n", ag->valuestring);
    seats_changed(lv, c);
    return turn_reply(lv, i);
}

static void seat_leave(live *lv, seat_client *c)
{
    if (c->agent < 0) return;
    lv->holder[c->agent] = NULL;
    c->agent = -1;
    seats_changed(lv, c);
}

/* {"op": "act", "action": NAME | ID | TEXT} or {"op": "act", "plan": COMMAND}. */
static cJSON *op_act(live *lv, seat_client *c, const cJSON *req)
{
    if (c->agent < 0)
        return live_error("no_seat", "take a seat first: {\"op\": \"take\", \"agent\": NAME}");
    int32_t i = c->agent;
    const char *name = polis_env_agent_name(lv->env, i);
    const polis_io *io = polis_env_io(lv->env);
    if (lv->over) return live_error("episode_over", "the episode is over");
    if (finished(lv, i))
        return live_error("agent_done", "agent %s is finished for this episode", name);
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(req, "plan");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "action");
    if (plan) {
        if (!cJSON_IsString(plan))
            return live_error("bad_request", "\"plan\" must be a plan command (a string)");
        if (polis_env_plan_start(lv->env, i, plan->valuestring) != POLIS_OK)
            return live_error("bad_plan", "%s", polis_env_error(lv->env));
        lv->pending[i] = -1;
        free(lv->pending_text[i]);
        lv->pending_text[i] = strdup(plan->valuestring);
        lv->pending_kind[i] = "plan";
    } else {
        int32_t id = -1;
        if (cJSON_IsNumber(v)) {
            double d = v->valuedouble;
            if (d != floor(d) || d < 0 || d >= lv->n_actions)
                return live_error("bad_action", "agent %s: %g is not an action id (0..%d)", name, d,
                                  lv->n_actions - 1);
            id = (int32_t)d;
        } else if (cJSON_IsString(v)) {
            if (polis_env_parse_action(lv->env, i, v->valuestring, &id) != POLIS_OK)
                return live_error("bad_action", "%s", polis_env_error(lv->env));
        } else {
            return live_error("bad_request",
                              "\"act\" needs \"action\" (an action's name or id, or a text "
                              "action) or \"plan\" (a plan command)");
        }
        if (!io->masks[(size_t)i * (size_t)lv->n_actions + (size_t)id])
            return live_error("illegal_action", "agent %s: action %s is not legal at tick %" PRId64,
                              name, polis_env_action_name(lv->env, id), polis_env_tick(lv->env));
        polis_env_plan_cancel(lv->env, i);
        lv->pending[i] = id;
        free(lv->pending_text[i]);
        lv->pending_text[i] =
            strdup(cJSON_IsString(v) ? v->valuestring : polis_env_action_name(lv->env, id));
        lv->pending_kind[i] = "action";
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "accepted");
    cJSON_AddStringToObject(r, "agent", name);
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(lv->env));
    if (plan)
        cJSON_AddStringToObject(r, "plan", plan->valuestring);
    else
        cJSON_AddStringToObject(r, "action", polis_env_action_name(lv->env, lv->pending[i]));
    maybe_tick(lv);
    return r;
}

static cJSON *handle_message(live *lv, seat_client *c, const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *req = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!req) {
        size_t at = end ? (size_t)(end - text) : 0;
        return live_error("bad_json", "malformed JSON at byte %zu of the message",
                          at > len ? len : at);
    }
    while (end && (size_t)(end - text) < len && strchr(" \t\r\n", *end) && *end) end++;
    if (end && (size_t)(end - text) < len) {
        cJSON_Delete(req);
        return live_error("bad_json", "unexpected text at byte %zu after the message",
                          (size_t)(end - text));
    }
    cJSON *r;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(req, "op");
    if (!cJSON_IsObject(req) || !cJSON_IsString(op))
        r = live_error("bad_request", "a message is a JSON object with \"op\" (seats, take, act, "
                                      "leave)");
    else if (strcmp(op->valuestring, "seats") == 0)
        r = seats_reply(lv, c);
    else if (strcmp(op->valuestring, "take") == 0)
        r = op_take(lv, c, req);
    else if (strcmp(op->valuestring, "act") == 0)
        r = op_act(lv, c, req);
    else if (strcmp(op->valuestring, "leave") == 0) {
        seat_leave(lv, c);
        r = seats_reply(lv, c);
    } else
        r = live_error("bad_request", "unknown op \"%.32s\" (ops: seats, take, act, leave)",
                       op->valuestring);
    cJSON_Delete(req);
    return r;
}

void *cli_live_seat_open(cli_live *lv, void *conn)
{
    seat_client *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->agent = -1;
    c->conn = conn;
    c->link = &lv->link;
    c->next = lv->clients;
    lv->clients = c;
    seat_send(c, seats_reply(lv, c));
    return c;
}

void cli_live_seat_message(cli_live *lv, void *seat, const char *text, size_t len, size_t too_long)
{
    seat_client *c = seat;
    seat_send(c, too_long ? live_error("too_long", "a message is at most %zu bytes", too_long)
                          : handle_message(lv, c, text, len));
}

void cli_live_seat_close(cli_live *lv, void *seat)
{
    seat_client *c = seat;
    if (c->agent >= 0)
        fprintf(stderr, "polis serve: agent %s's seat left\n",
                polis_env_agent_name(lv->env, c->agent));
    for (seat_client **pp = &lv->clients; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    seat_leave(lv, c);
    free(c);
}

/* ---- the agent protocol over --tcp (client seats) ------------------------------------------- */

static const char CLIENT_OPS[] = "describe, reset, step, advance, close";

/* Frees c's client seats (a waiting request is dropped with them). */
static void client_release(live *lv, agent_client *c)
{
    bool any = false;
    for (int32_t i = 0; i < lv->n; i++) {
        if (lv->client[i] != c) continue;
        lv->client[i] = NULL;
        any = true;
        if (lv->pending_text[i]) {
            free(lv->pending_text[i]);
            lv->pending_text[i] = NULL;
        }
        lv->pending[i] = -1;
    }
    if (any) {
        fprintf(stderr, "polis serve: client %u left its seats\n", c->number);
        seats_changed(lv, NULL);
    }
}

static cJSON *client_describe(live *lv, agent_client *c)
{
    cJSON *r = cli_proto_ok("describe");
    cli_proto_describe(lv->env, r, false, !lv->over && c->episode == lv->episode);
    cJSON *l = cJSON_AddObjectToObject(r, "live");
    cJSON_AddStringToObject(l, "mode", lv->tick_ms ? "fixed" : "wait");
    cJSON_AddNumberToObject(l, "tick_ms", (double)lv->tick_ms);
    cJSON_AddNumberToObject(l, "episode", (double)lv->episode);
    cJSON_AddNumberToObject(l, "episodes", (double)lv->episodes);
    cJSON_AddNumberToObject(l, "tick", (double)polis_env_tick(lv->env));
    cJSON *seats = cJSON_AddObjectToObject(l, "seats");
    cJSON *yours = cJSON_AddArrayToObject(l, "yours");
    cJSON *fr = cJSON_AddArrayToObject(l, "free");
    for (int32_t i = 0; i < lv->n; i++) {
        const char *name = polis_env_agent_name(lv->env, i);
        cJSON_AddStringToObject(seats, name, player_name(lv, i));
        if (lv->client[i] == c) cJSON_AddItemToArray(yours, cJSON_CreateString(name));
        if (lv->seat_kind[i] == SEAT_CLIENT && !lv->client[i])
            cJSON_AddItemToArray(fr, cJSON_CreateString(name));
    }
    return r;
}

/* "reset": joins the episode being played, taking the client seats named by "agents" (an
 * array of names; default: the seats the client holds, or when it holds none, every free
 * client seat). The reply is the episode as it is now, for those seats. */
static cJSON *client_join(live *lv, agent_client *c, const cJSON *req)
{
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(req, "seed");
    if (seed && !cJSON_IsNull(seed))
        return cli_proto_error("bad_request", NULL,
                               "\"seed\": the live server chooses the seeds (--seed, then one "
                               "more per episode); leave it out");
    if (lv->over)
        return cli_proto_error("no_episode", NULL, "no episode is being played: %s",
                               lv->episodes && lv->episode + 1 >= lv->episodes
                                   ? "every episode (--episodes) has been played"
                                   : "the game stopped after an engine error");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(req, "agents");
    uint8_t *want = calloc((size_t)lv->n, 1);
    if (!want) return cli_proto_error("engine_error", NULL, "out of memory");
    int32_t n_want = 0;
    if (names && !cJSON_IsNull(names)) {
        if (!cJSON_IsArray(names) || !cJSON_GetArraySize(names)) {
            free(want);
            return cli_proto_error("bad_request", NULL,
                                   "\"agents\" must be a non-empty array of agent names (the "
                                   "client seats to play)");
        }
        const cJSON *v;
        int k = 0;
        cJSON_ArrayForEach(v, names) {
            int32_t i = cJSON_IsString(v) ? cli_agent_find(lv->env, v->valuestring) : -1;
            cJSON *err = NULL;
            char list[512];
            if (!cJSON_IsString(v)) {
                err = cli_proto_error("bad_request", NULL,
                                      "\"agents\"[%d] is not a string (an agent's name)", k);
            } else if (i < 0) {
                cli_agent_names(lv->env, list, sizeof list);
                err = cli_proto_error("unknown_agent", v->valuestring,
                                      "\"agents\"[%d]: no agent named \"%.64s\" (agents: %s)", k,
                                      v->valuestring, list);
            } else if (lv->seat_kind[i] != SEAT_CLIENT) {
                err = cli_proto_error(
                    "not_client", v->valuestring,
                    "agent %s is played by %s, not by a client (--seat %s=client)", v->valuestring,
                    lv->seat_kind[i] == SEAT_HUMAN ? "a person (human)" : player_name(lv, i),
                    v->valuestring);
            } else if (lv->client[i] && lv->client[i] != c) {
                err = cli_proto_error("seat_taken", v->valuestring,
                                      "agent %s's seat is held by another client", v->valuestring);
            }
            if (err) {
                free(want);
                return err;
            }
            n_want += !want[i];
            want[i] = 1;
            k++;
        }
    } else if (holds_any(lv, c)) {
        for (int32_t i = 0; i < lv->n; i++) want[i] = lv->client[i] == c, n_want += want[i];
    } else {
        for (int32_t i = 0; i < lv->n; i++)
            if (lv->seat_kind[i] == SEAT_CLIENT && !lv->client[i]) want[i] = 1, n_want++;
        if (!n_want) {
            free(want);
            return cli_proto_error("no_free_seat", NULL,
                                   "every client seat is held by another client (or the game "
                                   "has none: --seat AGENT=client)");
        }
    }
    bool changed = false;
    for (int32_t i = 0; i < lv->n; i++) {
        if (want[i] && lv->client[i] != c) {
            lv->client[i] = c;
            lv->reward[i] = 0;
            lv->illegal[i] = 0;
            lv->note[i].status = NOTE_NONE;
            changed = true;
            fprintf(stderr, "polis serve: client %u takes agent %s's seat\n", c->number,
                    polis_env_agent_name(lv->env, i));
        } else if (!want[i] && lv->client[i] == c) {
            lv->client[i] = NULL;
            changed = true;
        }
    }
    free(want);
    c->episode = lv->episode;
    c->ticks = 0;
    if (changed) seats_changed(lv, NULL);
    cJSON *r = cli_proto_ok("reset");
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, lv->seed);
    cJSON_AddRawToObject(r, "seed", buf);
    cJSON_AddNumberToObject(r, "episode", (double)lv->episode);
    return client_agents(lv, c, r, false);
}

/* One agent's action or plan command in a client's step; fills *id or *plan. NULL, or the
 * error reply. */
static cJSON *client_action(live *lv, int32_t i, const cJSON *v, int32_t *id, const char **plan)
{
    const char *name = polis_env_agent_name(lv->env, i);
    const polis_io *io = polis_env_io(lv->env);
    *id = -1;
    *plan = NULL;
    const cJSON *pl = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "plan") : NULL;
    if (pl) {
        if (!cJSON_IsString(pl))
            return cli_proto_error("bad_request", name,
                                   "\"actions\".\"%s\".\"plan\" must be a plan command (a string "
                                   "such as \"GATHER 3 wood\")",
                                   name);
        *plan = pl->valuestring;
        return NULL;
    }
    if (cJSON_IsString(v) && polis_env_action_id(lv->env, v->valuestring) < 0) {
        const char *t = v->valuestring;
        while (*t == ' ' || *t == '\t') t++;
        size_t len = strcspn(t, " \t\r\n");
        for (int32_t m = 0; len && m < polis_env_n_macros(lv->env); m++) {
            const char *mn = polis_env_macro_name(lv->env, m);
            if (strlen(mn) == len && strncasecmp(mn, t, len) == 0) {
                *plan = v->valuestring;
                return NULL;
            }
        }
    }
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d != floor(d) || d < 0 || d >= lv->n_actions)
            return cli_proto_error("bad_action", name,
                                   "agent %s: action %g is not an action id (0..%d)", name, d,
                                   lv->n_actions - 1);
        *id = (int32_t)d;
    } else if (cJSON_IsString(v) || cJSON_IsObject(v)) {
        char *text = cJSON_IsString(v) ? v->valuestring : cJSON_PrintUnformatted(v);
        if (!text) return cli_proto_error("engine_error", name, "out of memory");
        polis_status st = polis_env_parse_action(lv->env, i, text, id);
        if (!cJSON_IsString(v)) cJSON_free(text);
        if (st != POLIS_OK)
            return cli_proto_error("bad_action", name, "%s", polis_env_error(lv->env));
    } else {
        return cli_proto_error("bad_request", name,
                               "\"actions\".\"%s\": an action is an id, a name or text (a "
                               "string), or a JSON action (an object)",
                               name);
    }
    if (!io->masks[(size_t)i * (size_t)lv->n_actions + (size_t)*id]) {
        char list[512];
        cli_legal_names(lv->env, i, list, sizeof list);
        return cli_proto_error("illegal_action", name,
                               "agent %s: action %s is not legal at tick %" PRId64 " (legal: %s)",
                               name, polis_env_action_name(lv->env, *id), polis_env_tick(lv->env),
                               list);
    }
    return NULL;
}

/* "step" / "advance": the actions of the client's seats for the coming tick; the reply comes
 * after it (advance: after the tick in which a plan of the client's ended, the episode ended,
 * or max_ticks). NULL when the reply waits, else the error reply. */
static cJSON *client_play(live *lv, agent_client *c, const cJSON *req, bool advance)
{
    const cJSON *acts = cJSON_GetObjectItemCaseSensitive(req, "actions");
    int64_t max_ticks = ADVANCE_DEFAULT_TICKS;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(req, "max_ticks");
    if (advance && mt && !cJSON_IsNull(mt)) {
        double d = cJSON_IsNumber(mt) ? mt->valuedouble : -1;
        if (!cJSON_IsNumber(mt) || d != floor(d) || d < 1 || d > ADVANCE_MAX_TICKS)
            return cli_proto_error("bad_request", NULL,
                                   "\"max_ticks\" must be an integer in [1, %d] (default %d)",
                                   ADVANCE_MAX_TICKS, ADVANCE_DEFAULT_TICKS);
        max_ticks = (int64_t)d;
    }
    if (acts && !cJSON_IsNull(acts) && !cJSON_IsObject(acts))
        return cli_proto_error("bad_request", NULL,
                               "\"actions\" must be an object {agent name: action}");
    if (c->episode < 0 || !holds_any(lv, c))
        return cli_proto_error("no_episode", NULL,
                               "no seat: send {\"op\": \"reset\"} first to join the game");
    if (lv->over || c->episode != lv->episode || polis_env_done(lv->env))
        return cli_proto_error("episode_over", NULL,
                               "the episode you joined is over%s: send {\"op\": \"reset\"} to join "
                               "the %s",
                               lv->over ? " and no other is being played" : "",
                               lv->over ? "next one if there is one" : "next one");
    int32_t *id = malloc(sizeof *id * (size_t)lv->n);
    const char **plan = calloc((size_t)lv->n, sizeof *plan);
    cJSON *err = NULL;
    if (!id || !plan) err = cli_proto_error("engine_error", NULL, "out of memory");
    for (int32_t i = 0; !err && i < lv->n; i++) id[i] = -2; /* not given */
    const cJSON *v;
    cJSON_ArrayForEach(v, acts) {
        if (err) break;
        int32_t i = cli_agent_find(lv->env, v->string);
        char list[512];
        if (i < 0) {
            cli_agent_names(lv->env, list, sizeof list);
            err = cli_proto_error("unknown_agent", v->string,
                                  "\"actions\": no agent named \"%.64s\" (agents: %s)", v->string,
                                  list);
        } else if (lv->client[i] != c) {
            err = cli_proto_error("not_your_seat", v->string,
                                  "\"actions\": agent %s is not one of your seats (%s plays it)",
                                  v->string, lv->client[i] ? "another client" : player_name(lv, i));
        } else if (!finished(lv, i)) { /* a finished agent's action is ignored, as by the env */
            err = client_action(lv, i, v, &id[i], &plan[i]);
            if (err) lv->n_bad[i]++;
        }
    }
    /* every action checked; now the plans start (their first action is this tick's) */
    for (int32_t i = 0; !err && i < lv->n; i++) {
        if (!plan[i]) continue;
        if (polis_env_plan_start(lv->env, i, plan[i]) != POLIS_OK) {
            lv->n_bad[i]++;
            err = cli_proto_error("bad_plan", polis_env_agent_name(lv->env, i), "%s",
                                  polis_env_error(lv->env));
            for (int32_t k = 0; k < lv->n; k++)
                if (plan[k]) polis_env_plan_cancel(lv->env, k);
        }
    }
    for (int32_t i = 0; !err && i < lv->n; i++) {
        if (lv->client[i] != c) continue;
        const char *running = polis_env_plan_command(lv->env, i);
        if (plan[i]) {
            free(lv->pending_text[i]);
            lv->pending_text[i] = strdup(plan[i]);
            lv->pending_kind[i] = "plan";
            lv->pending[i] = -1;
            if (running) plan_ahead(lv, i);
        } else if (id[i] >= 0) {
            if (running) {
                note_plan(lv, i, NOTE_CANCELLED, running, "an action was given instead");
                polis_env_plan_cancel(lv->env, i);
                lv->planned[i] = -1;
            }
            lv->pending[i] = id[i];
            free(lv->pending_text[i]);
            const cJSON *given =
                cJSON_GetObjectItemCaseSensitive(acts, polis_env_agent_name(lv->env, i));
            lv->pending_text[i] = cJSON_IsString(given) ? strdup(given->valuestring) : NULL;
            lv->pending_kind[i] = "action";
        }
    }
    free(id);
    free(plan);
    if (err) return err;
    c->wait = advance ? WAIT_ADVANCE : WAIT_STEP;
    c->link->waiting(c->conn, true);
    c->wait_left = max_ticks;
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(req, "id");
    c->wait_id = rid ? cJSON_Duplicate(rid, true) : NULL;
    maybe_tick(lv);
    return NULL;
}

/* Answers one request line of c (a step or advance may wait for its tick). */
static void client_line(live *lv, agent_client *c, const char *line, size_t len)
{
    if (!c->spoke && cli_proto_http_request(line, len)) {
        fprintf(stderr,
                "polis serve: client %u closed: its first line is an HTTP request (a web "
                "page connecting to the agent port?)\n",
                c->number);
        client_send(c,
                    cli_proto_error("not_a_client", NULL,
                                    "an HTTP request on the agent "
                                    "port: closed"),
                    NULL);
        c->closing = true;
        c->link->close_when_sent(c->conn);
        return;
    }
    c->spoke = true;
    cJSON *reply, *req;
    const char *op;
    cli_proto_parse(line, len, CLIENT_OPS, &req, &op, &reply);
    if (!op)
        ;
    else if (strcmp(op, "describe") == 0)
        reply = client_describe(lv, c);
    else if (strcmp(op, "reset") == 0)
        reply = client_join(lv, c, req);
    else if (strcmp(op, "step") == 0 || strcmp(op, "advance") == 0)
        reply = client_play(lv, c, req, op[0] == 'a');
    else if (strcmp(op, "close") == 0) {
        reply = cli_proto_ok("close");
        client_release(lv, c);
        c->closing = true;
        c->link->close_when_sent(c->conn);
    } else
        reply =
            cli_proto_error("unknown_op", NULL, "unknown op \"%.64s\" (ops: %s)", op, CLIENT_OPS);
    if (reply)
        client_send(c, reply,
                    cJSON_IsObject(req) ? cJSON_GetObjectItemCaseSensitive(req, "id") : NULL);
    cJSON_Delete(req);
}

/* Handles c's complete lines while nothing waits (the lines after a waiting step wait for
 * its answer, so the requests are answered in order); a line over the limit is refused. */
static void client_pump(live *lv, agent_client *c)
{
    while (c->wait == WAIT_NONE && !c->closing) {
        char *nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
        if (!nl) {
            if (c->in_len > CLIENT_MAX_LINE) {
                c->dropping = c->in_len;
                c->in_len = 0;
            }
            break;
        }
        size_t len = (size_t)(nl - c->in);
        size_t line_len = len;
        while (line_len && c->in[line_len - 1] == '\r') line_len--;
        bool blank = true;
        for (size_t k = 0; k < line_len && blank; k++) blank = c->in[k] == ' ' || c->in[k] == '\t';
        if (line_len > CLIENT_MAX_LINE)
            client_send(c,
                        cli_proto_error("line_too_long", NULL,
                                        "the request is %zu bytes; the limit is %d", line_len,
                                        CLIENT_MAX_LINE),
                        NULL);
        else if (!blank)
            client_line(lv, c, c->in, line_len);
        memmove(c->in, nl + 1, c->in_len - len - 1);
        c->in_len -= len + 1;
    }
    /* reading goes on while a request waits, so a client that goes away is seen at once (its
     * seats freed); only a client that sends more than a line's worth meanwhile is held */
    c->link->hold(c->conn, c->in_len > CLIENT_MAX_LINE);
}

/* New bytes from c. */
static int client_receive(live *lv, agent_client *c, const char *data, size_t len)
{
    if (c->dropping) {
        const char *nl = memchr(data, '\n', len);
        if (!nl) {
            c->dropping += len;
            return 0;
        }
        size_t line = c->dropping + (size_t)(nl - data);
        c->dropping = 0;
        client_send(c,
                    cli_proto_error("line_too_long", NULL,
                                    "the request is %zu bytes; the limit is %d", line,
                                    CLIENT_MAX_LINE),
                    NULL);
        len -= (size_t)(nl + 1 - data);
        data = nl + 1;
    }
    char *p = realloc(c->in, c->in_len + len + 1);
    if (!p) return -1;
    c->in = p;
    memcpy(c->in + c->in_len, data, len);
    c->in_len += len;
    client_pump(lv, c);
    return 0;
}

void *cli_live_client_open(cli_live *lv, void *conn)
{
    agent_client *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->conn = conn;
    c->link = &lv->link;
    c->episode = -1;
    c->number = ++lv->n_connected;
    c->next = lv->agents;
    lv->agents = c;
    return c;
}

int cli_live_client_data(cli_live *lv, void *client, const char *data, size_t len)
{
    return client_receive(lv, client, data, len);
}

void cli_live_client_close(cli_live *lv, void *client)
{
    agent_client *c = client;
    for (agent_client **pp = &lv->agents; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    client_release(lv, c);
    cJSON_Delete(c->wait_id);
    free(c->in);
    free(c);
}

/* ---- the record stream ------------------------------------------------------------------ */

const char *cli_live_stream_header(const cli_live *lv, size_t *len)
{
    *len = lv->stream.header_len;
    return lv->stream.header;
}

const char *cli_live_stream_join(const cli_live *lv, size_t *len, uint64_t *at)
{
    *len = lv->stream.reset_len;
    *at = lv->stream.key_at;
    return lv->stream.reset;
}

const char *cli_live_stream_from(const cli_live *lv, uint64_t at, size_t *len)
{
    const live_stream *st = &lv->stream;
    if (at < st->base || at > st->base + st->len) return NULL;
    *len = (size_t)(st->base + st->len - at);
    return st->buf ? st->buf + (at - st->base) : "";
}

/* ---- setup -------------------------------------------------------------------------------- */

/* Sets seat i from WHO ("human", "client" or a policy). `where` names the setting in an
 * error ("--seat agent_0=x", "live.seats.agent_0"). Returns 0 or EXIT_USAGE. */
static int set_seat(live *lv, int32_t i, const char *who, const char *where)
{
    if (strcmp(who, "human") == 0) {
        lv->seat_kind[i] = SEAT_HUMAN;
        return 0;
    }
    if (strcmp(who, "client") == 0) {
        lv->seat_kind[i] = SEAT_CLIENT;
        return 0;
    }
    if (cli_seats_outside(who)) {
        char why[2048];
        if (!lv->outside && !(lv->outside = cli_seats_new(lv->env, lv->scenario_file, "noop", where,
                                                          600000, why, sizeof why))) {
            fprintf(stderr, "polis: serve: %s\n", why);
            return EXIT_ENV;
        }
        if (!cli_seats_assign(lv->outside, i, who, where, why, sizeof why)) {
            fprintf(stderr, "polis: serve: %s\n", why);
            return EXIT_ENV;
        }
        lv->seat_kind[i] = SEAT_POLICY;
        lv->policy[i] = -1;
        lv->outside_seat[i] = true;
        return 0;
    }
    int32_t p = polis_env_policy_find(lv->env, who);
    if (p < 0) {
        char names[512];
        cli_policy_names(lv->env, names, sizeof names);
        return cli_usage("serve",
                         "%s: '%s' is neither 'human', 'client' nor a policy (%s; or py:SPEC, "
                         "cmd:PROGRAM, pop:FILE)",
                         where, who, names);
    }
    if (lv->outside_seat[i]) lv->outside_seat[i] = false;
    lv->seat_kind[i] = SEAT_POLICY;
    lv->policy[i] = p;
    return 0;
}

/* The scenario's "live" or "seats" key (checked by the scenario reader: docs/scenario.md),
 * or NULL. */
static cJSON *scenario_member(const char *text, size_t len, const char *key)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    cJSON *l = cJSON_DetachItemFromObjectCaseSensitive(root, key);
    cJSON_Delete(root);
    return l;
}

/* The seats of one object (the scenario's "seats" or "live.seats": agent name -> who), each
 * named `prefix`.AGENT in errors. Returns 0 or EXIT_USAGE. */
static int assign_from(live *lv, const cJSON *seats, const char *prefix)
{
    char list[512], where[256];
    const cJSON *s;
    cJSON_ArrayForEach(s, seats) {
        if (s->string[0] == '_') continue; /* a comment, as everywhere in a scenario */
        int32_t i = cli_agent_find(lv->env, s->string);
        snprintf(where, sizeof where, "%s.%.128s", prefix, s->string);
        if (!cJSON_IsString(s))
            return cli_usage("serve", "%s: not a string ('human', 'client' or a policy)", where);
        if (i < 0) {
            cli_agent_names(lv->env, list, sizeof list);
            return cli_usage("serve", "%s: no agent named '%s' (agents: %s)", where, s->string,
                             list);
        }
        int rc = set_seat(lv, i, s->valuestring, where);
        if (rc) return rc;
    }
    return 0;
}

/* Assigns every seat: --seat, else the scenario's "live" seats, else its "seats", else
 * --policy. Returns 0 or EXIT_USAGE. */
static int assign_seats(live *lv, const live_args *a, const cJSON *conf, const cJSON *seats)
{
    int32_t def = polis_env_policy_find(lv->env, a->policy);
    if (def < 0) {
        char names[512];
        cli_policy_names(lv->env, names, sizeof names);
        return cli_usage("serve", "--policy: the scenario has no policy '%s' (policies: %s)",
                         a->policy, names);
    }
    for (int32_t i = 0; i < lv->n; i++) {
        lv->seat_kind[i] = SEAT_POLICY;
        lv->policy[i] = def;
        lv->pending[i] = -1;
        lv->planned[i] = -1;
    }
    int rc = assign_from(lv, seats, "seats");
    if (!rc) rc = assign_from(lv, cJSON_GetObjectItemCaseSensitive(conf, "seats"), "live.seats");
    if (rc) return rc;
    char list[512], where[256];
    for (int k = 0; k < a->n_seat_args; k++) {
        const char *v = a->seat_arg[k];
        const char *eq = strchr(v, '=');
        char agent[128];
        snprintf(agent, sizeof agent, "%.*s", (int)(eq - v), v);
        int32_t i = cli_agent_find(lv->env, agent);
        snprintf(where, sizeof where, "--seat %.200s", v);
        if (i < 0) {
            cli_agent_names(lv->env, list, sizeof list);
            return cli_usage("serve", "%s: no agent named '%s' (agents: %s)", where, agent, list);
        }
        if ((rc = set_seat(lv, i, eq + 1, where)) != 0) return rc;
    }
    return 0;
}

/* Draws every human seat's token from the system's random source. */
static bool make_tokens(live *lv)
{
    lv->token = calloc((size_t)(lv->n > 0 ? lv->n : 1), sizeof *lv->token);
    if (!lv->token) return false;
    for (int32_t i = 0; i < lv->n; i++) {
        if (lv->seat_kind[i] != SEAT_HUMAN) continue;
        unsigned char r[TOKEN_LEN / 2];
        size_t got = 0;
        while (got < sizeof r) {
            ssize_t n = getrandom(r + got, sizeof r - got, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            got += (size_t)n;
        }
        for (size_t k = 0; k < sizeof r; k++) snprintf(lv->token[i] + 2 * k, 3, "%02x", r[k]);
    }
    return true;
}

int32_t cli_live_n_agents(const cli_live *lv) { return lv->n; }

const char *cli_live_seat_token(const cli_live *lv, int32_t i, const char **agent)
{
    if (i < 0 || i >= lv->n || lv->seat_kind[i] != SEAT_HUMAN) return NULL;
    *agent = polis_env_agent_name(lv->env, i);
    return lv->token[i];
}

/* The recorder's "policies" array: "human", "client" or the policy's name per agent. */
static char *policies_json(const live *lv)
{
    cJSON *pol = cJSON_CreateArray();
    for (int32_t i = 0; pol && i < lv->n; i++)
        cJSON_AddItemToArray(pol, cJSON_CreateString(player_name(lv, i)));
    char *t = pol ? cJSON_PrintUnformatted(pol) : NULL;
    cJSON_Delete(pol);
    return t;
}

/* Creates the env and the live state, the seats and the recorders. Returns 0 or the exit
 * status. */
static int live_open(const live_args *a, live *lv)
{
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = a->plugin_path;
    opts.overrides = a->overrides_text;
    polis_error err;
    memset(&err, 0, sizeof err);
    if (polis_env_create_file(a->scenario, &opts, &lv->env, &err) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s\n", err.message);
        cli_scenario_hint(a->scenario);
        return EXIT_ENV;
    }
    lv->n = polis_env_n_agents(lv->env);
    lv->n_actions = polis_env_n_actions(lv->env);
    size_t cnt = lv->n > 0 ? (size_t)lv->n : 1;
    lv->seat_kind = calloc(cnt, sizeof *lv->seat_kind);
    lv->policy = calloc(cnt, sizeof *lv->policy);
    lv->outside_seat = calloc(cnt, sizeof *lv->outside_seat);
    lv->scenario_file = strdup(a->scenario);
    lv->holder = calloc(cnt, sizeof *lv->holder);
    lv->client = calloc(cnt, sizeof *lv->client);
    lv->pending = calloc(cnt, sizeof *lv->pending);
    lv->pending_text = calloc(cnt, sizeof *lv->pending_text);
    lv->pending_kind = calloc(cnt, sizeof *lv->pending_kind);
    lv->planned = calloc(cnt, sizeof *lv->planned);
    lv->note = calloc(cnt, sizeof *lv->note);
    lv->reward = calloc(cnt, sizeof *lv->reward);
    lv->illegal = calloc(cnt, sizeof *lv->illegal);
    lv->n_illegal = calloc(cnt, sizeof *lv->n_illegal);
    lv->n_bad = calloc(cnt, sizeof *lv->n_bad);
    if (!lv->seat_kind || !lv->policy || !lv->outside_seat || !lv->scenario_file || !lv->holder ||
        !lv->client || !lv->pending || !lv->pending_text || !lv->pending_kind || !lv->planned ||
        !lv->note || !lv->reward || !lv->illegal || !lv->n_illegal || !lv->n_bad) {
        fprintf(stderr, "polis: serve: out of memory\n");
        return EXIT_ENV;
    }
    const char *formats = polis_env_render_formats(lv->env);
    lv->has_json = cli_proto_has_format(formats, "json");
    lv->has_text = cli_proto_has_format(formats, "text");
    lv->has_metrics = cli_proto_has_format(formats, "metrics");

    /* the stream's recorder: the header's text is the scenario file's, as --record has it */
    char dir[PATH_MAX];
    polis_record_info info = {.overrides = a->overrides_text,
                              .keyframe_every = (int32_t)a->keyframe_every,
                              .source = "live"};
    if (!cli_record_scenario(&info, a->scenario, dir, "serve")) return EXIT_ENV;
    char *text = (char *)info.scenario_text;
    size_t tlen = info.scenario_len;
    cJSON *conf = scenario_member(text, tlen, "live");
    cJSON *seats = scenario_member(text, tlen, "seats");
    int rc = assign_seats(lv, a, conf, seats);
    cJSON_Delete(seats);
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(conf, "tick_ms");
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(conf, "episodes");
    lv->tick_ms = a->tick_ms >= 0 ? a->tick_ms : cJSON_IsNumber(tm) ? (int64_t)tm->valuedouble : 0;
    lv->episodes = a->episodes >= 0     ? a->episodes
                   : cJSON_IsNumber(ep) ? (int64_t)ep->valuedouble
                                        : 0;
    cJSON_Delete(conf);
    if (!rc && !make_tokens(lv)) {
        free(text);
        fprintf(stderr, "polis: serve: cannot draw the seats' tokens: %s\n", strerror(errno));
        return EXIT_ENV;
    }
    bool any_client = false;
    for (int32_t i = 0; i < lv->n; i++) any_client |= lv->seat_kind[i] == SEAT_CLIENT;
    if (!rc && any_client && !a->tcp)
        rc = cli_usage("serve", "a client seat needs --tcp [HOST:]PORT for its client to connect");
    if (!rc && a->tcp && !any_client)
        rc = cli_usage("serve", "--tcp: no seat is played by a client (--seat AGENT=client)");
    if (rc) {
        free(text);
        return rc;
    }
    uint64_t seed = a->has_seed ? a->seed : polis_env_default_seed(lv->env);

    char *pol = policies_json(lv);
    info.seed = seed;
    info.policies = pol;
    polis_status st =
        pol ? polis_recorder_open_sink(stream_sink, lv, lv->env, &info, &lv->rec, &err)
            : POLIS_ERR_NOMEM;
    free(text);
    if (st != POLIS_OK) {
        fprintf(stderr, "polis: serve: live stream: %s\n", pol ? err.message : "out of memory");
        cJSON_free(pol);
        return EXIT_ENV;
    }
    if (a->record) {
        lv->file = cli_record_open(a->record, lv->env, a->scenario, a->overrides_text, seed,
                                   a->keyframe_every, pol, "live");
        if (!lv->file) {
            cJSON_free(pol);
            return EXIT_ENV;
        }
    }
    cJSON_free(pol);
    return begin_episode(lv, seed) ? 0 : EXIT_ENV;
}

cli_live *cli_live_open(const cli_live_args *a, int *rc)
{
    live *lv = calloc(1, sizeof *lv);
    if (!lv) {
        fprintf(stderr, "polis: serve: out of memory\n");
        *rc = EXIT_ENV;
        return NULL;
    }
    if ((*rc = live_open(a, lv)) != 0) {
        cli_live_free(lv);
        return NULL;
    }
    return lv;
}

bool cli_live_fixed_rate(const cli_live *lv) { return lv->tick_ms != 0; }

void cli_live_start(cli_live *lv, const cli_live_link *link)
{
    lv->link = *link;
    lv->linked = true;
    if (lv->tick_ms)
        schedule_tick(lv, lv->tick_ms * 1000);
    else
        maybe_tick(lv);
}

void cli_live_stop(cli_live *lv)
{
    /* a server stopped mid-episode ends that episode's recording where it is */
    if (!lv->over && lv->file) {
        record_both(lv, end_no_metrics);
        fprintf(stderr, "polis serve: stopped in episode %" PRId64 " at tick %" PRId64 "\n",
                lv->episode, polis_env_tick(lv->env));
    }
}

void cli_live_free(cli_live *lv)
{
    if (!lv) return;
    if (lv->file) polis_recorder_close(lv->file);
    if (lv->rec) polis_recorder_close(lv->rec);
    for (int32_t i = 0; lv->pending_text && i < lv->n; i++) free(lv->pending_text[i]);
    free(lv->pending_text);
    free(lv->pending_kind);
    free(lv->seat_kind);
    free(lv->policy);
    cli_seats_free(lv->outside);
    free(lv->outside_seat);
    free(lv->scenario_file);
    free(lv->holder);
    free(lv->client);
    free(lv->pending);
    free(lv->planned);
    free(lv->note);
    free(lv->reward);
    free(lv->illegal);
    free(lv->n_illegal);
    free(lv->n_bad);
    free(lv->stream.header);
    free(lv->stream.reset);
    free(lv->stream.buf);
    free(lv->token);
    polis_env_destroy(lv->env);
    free(lv);
}
