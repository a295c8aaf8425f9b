/*
 * engine/cli/live.c — `polis serve SCENARIO --http [HOST:]PORT`: one episode played live in
 * the browser (docs/viewer.md, "Live play"; docs/clients.md, "Seats over a WebSocket").
 *
 * One env, one thread, one libwebsockets event loop. The episode's record lines (the same
 * lines `--record` writes: header, reset, keyframes, steps, end) come from a recorder whose
 * sink appends them to an in-memory log; every page that connects with the WebSocket
 * protocol "polis-follow" gets the log from its start and then each line as it is written,
 * so any number of watchers see identical bytes. Over the protocol "polis-seat" a page (or
 * any client) takes a free human seat and sends its agent's actions as JSON; every message is
 * checked and a bad one answered with {"type": "error", "code", "message"}. Other seats are
 * played by the scenario's policies. The game ticks every --tick-ms, a human who did not act
 * doing noop, or (the default) waits until every human seat has acted.
 *
 * Like the rest of the CLI it uses only the public API (polis.h).
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

#include <cjson/cJSON.h>

#include "episode.h"
#include "live.h"
#include "record.h"
#include "util.h"
#include "view.h"
#include "polis/polis.h"

#ifdef POLIS_HAVE_LWS
#include <libwebsockets.h>
#endif

const char CLI_LIVE_HELP[] =
    "usage: polis serve SCENARIO --http [HOST:]PORT [options]\n"
    "\n"
    "Plays one episode of SCENARIO live: serves the browser viewer on HOST (default\n"
    "127.0.0.1) and PORT (0: any free port), prints the page's URL on stdout, and streams\n"
    "the episode's record lines to every page that watches. From the page a person takes a\n"
    "human seat and plays its agent (docs/viewer.md, \"Live play\"). Runs until killed.\n"
    "\n"
    "options:\n"
    "  --seat AGENT=WHO     who plays AGENT: 'human' (a person on the page, or any client of\n"
    "                       the \"polis-seat\" WebSocket protocol) or a policy of the scenario\n"
    "                       (random, greedy, ...); repeatable. Other agents: --policy\n"
    "  --policy P           the policy of the seats no --seat names (default random)\n"
    "  --tick-ms N          tick every N ms, a human seat that did not act doing noop\n"
    "                       (default 0: wait until every human seat has acted)\n"
    "  --seed S             the episode's seed (default: the scenario's)\n"
    "  --record FILE        also record the episode to FILE (gzip when it ends in .gz)\n"
    "  --keyframe-every K   a keyframe every K ticks (default 100)\n"
    "  --allow-remote       allow a HOST that is not a loopback address (anyone who can\n"
    "                       connect can take a seat)\n"
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

#ifdef POLIS_HAVE_LWS

enum { SEAT_POLICY = 0, SEAT_HUMAN };
enum { STREAM_CHUNK = 64 * 1024 };

typedef struct live_args {
    const char *scenario;
    const char *http;
    const char *record;
    const char *plugin_path;
    const char *policy;
    int64_t tick_ms;
    int64_t keyframe_every;
    uint64_t seed;
    bool has_seed;
    bool allow_remote;
    const char *seat_arg[256]; /* the --seat values, checked once the env exists */
    int n_seat_args;
} live_args;

struct seat_client;

typedef struct live {
    polis_env *env;
    int32_t n;
    int32_t n_actions;
    int *seat_kind;   /* [n] SEAT_* */
    int32_t *policy;  /* [n] the policy of a SEAT_POLICY seat */
    struct seat_client **holder; /* [n] who holds a human seat, or NULL */
    int32_t *pending; /* [n] a human's action for the next tick, -1: none */
    char **pending_text; /* [n] what the human sent (for the step line's "msgs") */
    int64_t tick_ms;
    bool over;        /* the episode has ended */
    bool tick_queued;
    polis_recorder *rec;  /* the stream's */
    polis_recorder *file; /* --record */
    char *log;            /* every record line so far */
    size_t log_len, log_cap;
    bool log_failed;
    struct lws_context *ctx;
    lws_sorted_usec_list_t sul;
    struct seat_client *clients; /* every "polis-seat" connection */
} live;

typedef struct stream_client {
    size_t sent; /* bytes of the log sent */
    unsigned char buf[LWS_PRE + STREAM_CHUNK];
} stream_client;

typedef struct seat_client {
    int32_t agent; /* -1: none taken */
    char *out;     /* the replies not yet sent, '\n'-free JSON texts each ending in '\0' */
    size_t out_len, out_cap;
    struct lws *wsi;
    struct seat_client *next; /* the list of every seat connection */
} seat_client;

static live *the_live; /* the one live episode of this process (lws callbacks reach it) */

/* ---- the log of record lines ---------------------------------------------------------------- */

static void log_sink(void *ud, const char *line, size_t len)
{
    live *lv = ud;
    if (lv->log_failed) return;
    if (lv->log_len + len > lv->log_cap) {
        size_t cap = lv->log_cap ? lv->log_cap : 1 << 16;
        while (cap < lv->log_len + len) cap *= 2;
        char *p = realloc(lv->log, cap);
        if (!p) {
            lv->log_failed = true;
            fprintf(stderr, "polis: serve: out of memory for the live stream\n");
            return;
        }
        lv->log = p;
        lv->log_cap = cap;
    }
    memcpy(lv->log + lv->log_len, line, len);
    lv->log_len += len;
}

/* ---- replies to seat clients ------------------------------------------------------------- */

/* Queues r (consumed) for c and asks to write. */
static void seat_send(seat_client *c, cJSON *r)
{
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    cJSON_Delete(r);
    if (!text) return;
    size_t len = strlen(text) + 1;
    if (c->out_len + len > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + len) cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p) {
            cJSON_free(text);
            return;
        }
        c->out = p;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, text, len);
    c->out_len += len;
    cJSON_free(text);
    lws_callback_on_writable(c->wsi);
}

#if defined(__GNUC__)
static cJSON *live_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
    cJSON_AddBoolToObject(r, "over", lv->over);
    cJSON_AddStringToObject(r, "mode", lv->tick_ms ? "fixed" : "wait");
    cJSON_AddNumberToObject(r, "tick_ms", (double)lv->tick_ms);
    cJSON *arr = cJSON_AddArrayToObject(r, "seats");
    for (int32_t i = 0; i < lv->n; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "agent", polis_env_agent_name(lv->env, i));
        cJSON_AddStringToObject(s, "player", lv->seat_kind[i] == SEAT_HUMAN
                                                 ? "human"
                                                 : polis_env_policy_name(lv->env, lv->policy[i]));
        cJSON_AddBoolToObject(s, "free", lv->seat_kind[i] == SEAT_HUMAN && !lv->holder[i]);
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
    bool done = lv->over || io->terminations[agent] || io->truncations[agent];
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

/* ---- the episode ------------------------------------------------------------------------ */

static void tick_cb(lws_sorted_usec_list_t *sul);

static void schedule_tick(live *lv, int64_t us)
{
    lws_sul_schedule(lv->ctx, 0, &lv->sul, tick_cb, us);
    lv->tick_queued = true;
}

/* Whether the game may tick now in waiting mode: every human seat acted (or follows a plan,
 * or is finished). */
static bool all_humans_acted(const live *lv)
{
    const polis_io *io = polis_env_io(lv->env);
    for (int32_t i = 0; i < lv->n; i++) {
        if (lv->seat_kind[i] != SEAT_HUMAN || io->terminations[i] || io->truncations[i]) continue;
        if (lv->pending[i] < 0 && !polis_env_plan_command(lv->env, i)) return false;
    }
    return true;
}

static void stream_wake(live *lv);

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

static polis_status end_no_metrics(polis_recorder *rec) { return polis_recorder_end_episode(rec, NULL); }

/* One tick: policies act, humans' actions (noop if none), plans, step, record. */
static void live_tick(live *lv)
{
    const polis_io *io = polis_env_io(lv->env);
    for (int32_t i = 0; i < lv->n; i++) {
        io->actions[i] = 0;
        if (io->terminations[i] || io->truncations[i]) continue;
        if (lv->seat_kind[i] == SEAT_POLICY) {
            if (polis_env_policy_act(lv->env, lv->policy[i], &i, 1) != POLIS_OK) {
                fprintf(stderr, "polis: serve: %s\n", polis_env_error(lv->env));
                io->actions[i] = 0;
            }
        } else if (lv->pending[i] >= 0) {
            io->actions[i] = lv->pending[i];
        } else if (polis_env_plan_command(lv->env, i)) {
            polis_plan_state ps;
            int32_t act = 0;
            const char *why = NULL;
            if (polis_env_plan_next(lv->env, i, &ps, &act, &why) == POLIS_OK &&
                ps == POLIS_PLAN_RUNNING)
                io->actions[i] = act;
        }
        if (lv->pending_text[i]) {
            const char *kind = lv->pending[i] >= 0 ? "action" : "plan";
            if (lv->rec) polis_recorder_msg(lv->rec, i, kind, lv->pending_text[i]);
            if (lv->file) polis_recorder_msg(lv->file, i, kind, lv->pending_text[i]);
            free(lv->pending_text[i]);
            lv->pending_text[i] = NULL;
        }
        lv->pending[i] = -1;
    }
    if (polis_env_step(lv->env) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s; the episode stops\n", polis_env_error(lv->env));
        lv->over = true;
    } else {
        record_both(lv, polis_recorder_step);
        if (polis_env_done(lv->env)) {
            lv->over = true;
            record_both(lv, end_no_metrics);
            if (lv->file) {
                if (polis_recorder_close(lv->file) != POLIS_OK)
                    fprintf(stderr, "polis: serve: --record: %s\n", polis_recorder_error(lv->file));
                lv->file = NULL;
            }
            fprintf(stderr, "polis serve: the episode ended at tick %" PRId64 "\n",
                    polis_env_tick(lv->env));
        }
    }
    stream_wake(lv);
    send_turns(lv);
}

static void tick_cb(lws_sorted_usec_list_t *sul)
{
    live *lv = lws_container_of(sul, live, sul);
    lv->tick_queued = false;
    if (lv->over) return;
    if (lv->tick_ms) {
        live_tick(lv);
        if (!lv->over) schedule_tick(lv, lv->tick_ms * 1000);
    } else if (all_humans_acted(lv)) {
        live_tick(lv);
        if (!lv->over && all_humans_acted(lv)) schedule_tick(lv, 0);
    }
}

/* ---- the seat protocol -------------------------------------------------------------------- */

static int32_t agent_by_name(const live *lv, const char *name)
{
    for (int32_t i = 0; i < lv->n; i++)
        if (strcmp(polis_env_agent_name(lv->env, i), name) == 0) return i;
    return -1;
}

static cJSON *op_take(live *lv, seat_client *c, const cJSON *req)
{
    const cJSON *ag = cJSON_GetObjectItemCaseSensitive(req, "agent");
    if (!cJSON_IsString(ag))
        return live_error("bad_request", "\"take\" needs \"agent\": the name of a human seat");
    int32_t i = agent_by_name(lv, ag->valuestring);
    if (i < 0) return live_error("unknown_seat", "no agent named \"%.64s\"", ag->valuestring);
    if (lv->seat_kind[i] != SEAT_HUMAN)
        return live_error("not_human", "agent %s is played by the policy %s, not by a person",
                          ag->valuestring, polis_env_policy_name(lv->env, lv->policy[i]));
    if (c->agent == i) return turn_reply(lv, i);
    if (lv->holder[i]) return live_error("seat_taken", "agent %s's seat is taken", ag->valuestring);
    if (c->agent >= 0)
        return live_error("already_seated", "you hold agent %s's seat; send {\"op\": \"leave\"} first",
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
    if (io->terminations[i] || io->truncations[i])
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
        lv->pending_text[i] = strdup(cJSON_IsString(v) ? v->valuestring
                                                       : polis_env_action_name(lv->env, id));
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", "accepted");
    cJSON_AddStringToObject(r, "agent", name);
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(lv->env));
    if (plan)
        cJSON_AddStringToObject(r, "plan", plan->valuestring);
    else
        cJSON_AddStringToObject(r, "action", polis_env_action_name(lv->env, lv->pending[i]));
    if (!lv->tick_ms && !lv->tick_queued && all_humans_acted(lv)) schedule_tick(lv, 0);
    return r;
}

static cJSON *handle_message(live *lv, seat_client *c, const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *req = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!req) {
        size_t at = end ? (size_t)(end - text) : 0;
        return live_error("bad_json", "malformed JSON at byte %zu of the message", at > len ? len : at);
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

/* The largest seat message taken; a longer one is refused. */
enum { SEAT_MAX_MESSAGE = 64 * 1024 };

typedef struct seat_session {
    seat_client c;
    char *in; /* a message arriving in fragments */
    size_t in_len;
    bool in_too_long;
} seat_session;

static int live_seat(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len)
{
    seat_session *ss = user;
    live *lv = the_live;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        memset(ss, 0, sizeof *ss);
        ss->c.agent = -1;
        ss->c.wsi = wsi;
        ss->c.next = lv->clients;
        lv->clients = &ss->c;
        seat_send(&ss->c, seats_reply(lv, &ss->c));
        return 0;
    case LWS_CALLBACK_RECEIVE: {
        if (!ss->in_too_long) {
            if (ss->in_len + len > SEAT_MAX_MESSAGE) {
                ss->in_too_long = true;
            } else {
                char *p = realloc(ss->in, ss->in_len + len + 1);
                if (!p) return -1;
                ss->in = p;
                memcpy(ss->in + ss->in_len, in, len);
                ss->in_len += len;
            }
        }
        if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) return 0;
        cJSON *r = ss->in_too_long
                       ? live_error("too_long", "a message is at most %d bytes", SEAT_MAX_MESSAGE)
                       : handle_message(lv, &ss->c, ss->in ? ss->in : "", ss->in_len);
        ss->in_len = 0;
        ss->in_too_long = false;
        seat_send(&ss->c, r);
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (!ss->c.out_len) return 0;
        size_t n = strlen(ss->c.out);
        unsigned char *buf = malloc(LWS_PRE + n);
        if (!buf) return -1;
        memcpy(buf + LWS_PRE, ss->c.out, n);
        int w = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT);
        free(buf);
        if (w < (int)n) return -1;
        memmove(ss->c.out, ss->c.out + n + 1, ss->c.out_len - n - 1);
        ss->c.out_len -= n + 1;
        if (ss->c.out_len) lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_CLOSED:
        if (ss->c.agent >= 0)
            fprintf(stderr, "polis serve: agent %s's seat left\n",
                    polis_env_agent_name(lv->env, ss->c.agent));
        for (seat_client **pp = &lv->clients; *pp; pp = &(*pp)->next) {
            if (*pp == &ss->c) {
                *pp = ss->c.next;
                break;
            }
        }
        seat_leave(lv, &ss->c);
        free(ss->c.out);
        free(ss->in);
        memset(ss, 0, sizeof *ss);
        return 0;
    default: return 0;
    }
}

/* ---- the record stream ------------------------------------------------------------------ */

static const struct lws_protocols *stream_protocol;

static void stream_wake(live *lv)
{
    if (lv->ctx && stream_protocol)
        lws_callback_on_writable_all_protocol(lv->ctx, stream_protocol);
}

static int live_stream(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    (void)in;
    (void)len;
    stream_client *sc = user;
    live *lv = the_live;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        sc->sent = 0;
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        size_t n = lv->log_len - sc->sent;
        if (n == 0) return 0;
        if (n > STREAM_CHUNK) n = STREAM_CHUNK;
        memcpy(sc->buf + LWS_PRE, lv->log + sc->sent, n);
        if (lws_write(wsi, sc->buf + LWS_PRE, n, LWS_WRITE_BINARY) < (int)n) return -1;
        sc->sent += n;
        if (sc->sent < lv->log_len) lws_callback_on_writable(wsi);
        return 0;
    }
    default: return 0;
    }
}

/* ---- setup -------------------------------------------------------------------------------- */

static volatile sig_atomic_t live_interrupted;

static void live_on_signal(int sig)
{
    (void)sig;
    live_interrupted = 1;
}

static int parse_args(int argc, char **argv, live_args *a)
{
    memset(a, 0, sizeof *a);
    a->policy = "random";
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return -1;
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->scenario)
                return cli_usage("serve", "unexpected argument '%s' (SCENARIO is '%s')", arg,
                                 a->scenario);
            a->scenario = arg;
            continue;
        }
        if (strcmp(arg, "--allow-remote") == 0) {
            a->allow_remote = true;
            continue;
        }
        static const char *const with_value[] = {"--http", "--seat", "--policy", "--tick-ms",
                                                 "--seed", "--record", "--keyframe-every",
                                                 "--plugin-path", NULL};
        bool known = false;
        for (int k = 0; with_value[k]; k++) known |= strcmp(arg, with_value[k]) == 0;
        if (!known)
            return cli_usage("serve", "unknown option '%s' (with --http: --seat, --policy, "
                                      "--tick-ms, --seed, --record, --keyframe-every, "
                                      "--allow-remote, --plugin-path)",
                             arg);
        if (i + 1 >= argc) return cli_usage("serve", "%s needs a value", arg);
        const char *v = argv[++i];
        int64_t num;
        if (strcmp(arg, "--http") == 0) {
            a->http = v;
        } else if (strcmp(arg, "--seat") == 0) {
            if (!strchr(v, '=') || v[0] == '=' || !strchr(v, '=')[1])
                return cli_usage("serve", "--seat: '%s' is not AGENT=human|POLICY", v);
            if (a->n_seat_args == (int)(sizeof a->seat_arg / sizeof a->seat_arg[0]))
                return cli_usage("serve", "--seat: too many");
            a->seat_arg[a->n_seat_args++] = v;
        } else if (strcmp(arg, "--policy") == 0) {
            a->policy = v;
        } else if (strcmp(arg, "--tick-ms") == 0) {
            if (!cli_parse_int(v, 0, 3600000, &a->tick_ms))
                return cli_usage("serve", "--tick-ms: '%s' is not an integer in [0, 3600000]", v);
        } else if (strcmp(arg, "--seed") == 0) {
            if (!cli_parse_int(v, 0, INT64_MAX, &num))
                return cli_usage("serve", "--seed: '%s' is not a non-negative integer", v);
            a->seed = (uint64_t)num;
            a->has_seed = true;
        } else if (strcmp(arg, "--record") == 0) {
            if (!*v) return cli_usage("serve", "--record: empty file name");
            a->record = v;
        } else if (strcmp(arg, "--keyframe-every") == 0) {
            if (!cli_parse_int(v, 1, INT32_MAX, &a->keyframe_every))
                return cli_usage("serve", "--keyframe-every: '%s' is not an integer in [1, %d]", v,
                                 INT32_MAX);
        } else {
            if (!*v) return cli_usage("serve", "--plugin-path: empty directory list");
            a->plugin_path = v;
        }
    }
    if (!a->scenario) return cli_usage("serve", "missing SCENARIO (a scenario .json file)");
    if (!(a->scenario = cli_scenario("serve", a->scenario))) return EXIT_ENV;
    return 0;
}

/* HOST:PORT or PORT into host (cap bytes) and *port. */
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
    return true;
}

static bool is_loopback_host(const char *h)
{
    return strncmp(h, "127.", 4) == 0 || strcmp(h, "localhost") == 0;
}

/* Assigns every seat from --seat and --policy. Returns 0 or EXIT_USAGE. */
static int assign_seats(live *lv, const live_args *a)
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
    }
    for (int k = 0; k < a->n_seat_args; k++) {
        const char *v = a->seat_arg[k];
        const char *eq = strchr(v, '=');
        char agent[128];
        snprintf(agent, sizeof agent, "%.*s", (int)(eq - v), v);
        int32_t i = agent_by_name(lv, agent);
        if (i < 0) {
            char list[512] = "";
            size_t used = 0;
            for (int32_t j = 0; j < lv->n && used + 1 < sizeof list; j++) {
                int w = snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "",
                                 polis_env_agent_name(lv->env, j));
                if (w < 0) break;
                used += (size_t)w;
            }
            return cli_usage("serve", "--seat %s: no agent named '%s' (agents: %s)", v, agent, list);
        }
        if (strcmp(eq + 1, "human") == 0) {
            lv->seat_kind[i] = SEAT_HUMAN;
            continue;
        }
        int32_t p = polis_env_policy_find(lv->env, eq + 1);
        if (p < 0) {
            char names[512];
            cli_policy_names(lv->env, names, sizeof names);
            return cli_usage("serve", "--seat %s: '%s' is neither 'human' nor a policy (%s)", v,
                             eq + 1, names);
        }
        lv->seat_kind[i] = SEAT_POLICY;
        lv->policy[i] = p;
    }
    return 0;
}

/* The recorder's "policies" array: "human" or the policy's name per agent. */
static char *policies_json(const live *lv)
{
    cJSON *pol = cJSON_CreateArray();
    for (int32_t i = 0; pol && i < lv->n; i++)
        cJSON_AddItemToArray(pol, cJSON_CreateString(lv->seat_kind[i] == SEAT_HUMAN
                                                         ? "human"
                                                         : polis_env_policy_name(lv->env, lv->policy[i])));
    char *t = pol ? cJSON_PrintUnformatted(pol) : NULL;
    cJSON_Delete(pol);
    return t;
}

static int run_live(const live_args *a, live *lv, const char *viewer)
{
    char host[256];
    int port;
    if (!parse_http(a->http, host, sizeof host, &port))
        return cli_usage("serve", "--http: '%s' is not [HOST:]PORT (PORT in [0, 65535])", a->http);
    if (!is_loopback_host(host) && !a->allow_remote)
        return cli_usage("serve", "--http: %s is not a loopback address; add --allow-remote to "
                                  "let anyone who can connect take a seat",
                         host);
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = a->plugin_path;
    polis_error err;
    memset(&err, 0, sizeof err);
    if (polis_env_create_file(a->scenario, &opts, &lv->env, &err) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s\n", err.message);
        return EXIT_ENV;
    }
    lv->n = polis_env_n_agents(lv->env);
    lv->n_actions = polis_env_n_actions(lv->env);
    size_t cnt = lv->n > 0 ? (size_t)lv->n : 1;
    lv->seat_kind = calloc(cnt, sizeof *lv->seat_kind);
    lv->policy = calloc(cnt, sizeof *lv->policy);
    lv->holder = calloc(cnt, sizeof *lv->holder);
    lv->pending = calloc(cnt, sizeof *lv->pending);
    lv->pending_text = calloc(cnt, sizeof *lv->pending_text);
    if (!lv->seat_kind || !lv->policy || !lv->holder || !lv->pending || !lv->pending_text) {
        fprintf(stderr, "polis: serve: out of memory\n");
        return EXIT_ENV;
    }
    int rc = assign_seats(lv, a);
    if (rc) return rc;
    lv->tick_ms = a->tick_ms;
    uint64_t seed = a->has_seed ? a->seed : polis_env_default_seed(lv->env);

    /* the stream's recorder: the header's text is the scenario file's, as --record has it */
    char *pol = policies_json(lv);
    if (!pol) return EXIT_ENV;
    FILE *f = fopen(a->scenario, "rb");
    char *text = NULL;
    size_t tlen = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
        if (text) tlen = fread(text, 1, (size_t)sz, f);
        fclose(f);
    }
    if (!text) {
        fprintf(stderr, "polis: serve: cannot read %s again for the header\n", a->scenario);
        cJSON_free(pol);
        return EXIT_ENV;
    }
    char dir[PATH_MAX], abs_dir[PATH_MAX];
    const char *slash = strrchr(a->scenario, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - a->scenario) : 1,
             slash ? a->scenario : ".");
    if (slash == a->scenario) snprintf(dir, sizeof dir, "/");
    polis_record_info info = {.scenario_text = text,
                              .scenario_len = tlen,
                              .scenario_path = a->scenario,
                              .base_dir = realpath(dir, abs_dir) ? abs_dir : dir,
                              .seed = seed,
                              .keyframe_every = (int32_t)a->keyframe_every,
                              .policies = pol,
                              .source = "serve"};
    polis_status st = polis_recorder_open_sink(log_sink, lv, lv->env, &info, &lv->rec, &err);
    free(text);
    if (st != POLIS_OK) {
        fprintf(stderr, "polis: serve: live stream: %s\n", err.message);
        cJSON_free(pol);
        return EXIT_ENV;
    }
    if (a->record) {
        lv->file = cli_record_open(a->record, lv->env, a->scenario, NULL, seed, a->keyframe_every,
                                   pol, "serve");
        if (!lv->file) {
            cJSON_free(pol);
            return EXIT_ENV;
        }
    }
    cJSON_free(pol);
    if (polis_env_reset(lv->env, seed) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s\n", polis_env_error(lv->env));
        return EXIT_ENV;
    }
    if (polis_recorder_begin_episode(lv->rec, seed) != POLIS_OK ||
        (lv->file && polis_recorder_begin_episode(lv->file, seed) != POLIS_OK)) {
        fprintf(stderr, "polis: serve: cannot record the reset\n");
        return EXIT_ENV;
    }

    static const struct lws_protocols protocols[] = {
        {"http", lws_callback_http_dummy, 0, 0, 0, NULL, 0},
        {"polis-follow", live_stream, sizeof(stream_client), 0, 0, NULL, 0},
        {"polis-seat", live_seat, sizeof(seat_session), SEAT_MAX_MESSAGE, 0, NULL, 0},
        {NULL, NULL, 0, 0, 0, NULL, 0},
    };
    stream_protocol = &protocols[1];
    struct lws_http_mount mount;
    memset(&mount, 0, sizeof mount);
    mount.mountpoint = "/";
    mount.mountpoint_len = 1;
    mount.origin = viewer;
    mount.def = "index.html";
    mount.origin_protocol = LWSMPRO_FILE;
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info ci;
    memset(&ci, 0, sizeof ci);
    ci.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6;
    lv->ctx = lws_create_context(&ci);
    if (!lv->ctx) {
        fprintf(stderr, "polis: serve: cannot start libwebsockets\n");
        return EXIT_ENV;
    }
    ci.port = port;
    ci.iface = host;
    ci.protocols = protocols;
    ci.mounts = &mount;
    ci.vhost_name = "localhost";
    struct lws_vhost *vh = lws_create_vhost(lv->ctx, &ci);
    if (!vh) {
        fprintf(stderr, "polis: serve: cannot listen on %s:%d\n", host, port);
        return EXIT_ENV;
    }
    int bound = lws_get_vhost_listen_port(vh);
    printf("http://%s:%d/?live=1\n", host, bound);
    fflush(stdout);
    fprintf(stderr, "polis serve: live on %s:%d (%s), the viewer in %s; Ctrl-C stops\n", host,
            bound, lv->tick_ms ? "fixed tick rate" : "waiting for the human seats", viewer);
    if (lv->tick_ms)
        schedule_tick(lv, lv->tick_ms * 1000);
    else if (all_humans_acted(lv))
        schedule_tick(lv, 0);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = live_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int n = 0;
    while (n >= 0 && !live_interrupted) n = lws_service(lv->ctx, 0);
    return 0;
}

static void live_free(live *lv)
{
    if (lv->ctx) lws_context_destroy(lv->ctx);
    if (lv->file) polis_recorder_close(lv->file);
    if (lv->rec) polis_recorder_close(lv->rec);
    for (int32_t i = 0; lv->pending_text && i < lv->n; i++) free(lv->pending_text[i]);
    free(lv->pending_text);
    free(lv->seat_kind);
    free(lv->policy);
    free(lv->holder);
    free(lv->pending);
    free(lv->log);
    polis_env_destroy(lv->env);
}

#endif

int cli_live_main(int argc, char **argv)
{
#ifdef POLIS_HAVE_LWS
    live_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) {
        fputs(CLI_LIVE_HELP, stdout);
        return 0;
    }
    if (rc) return rc;
    if (!a.http) return cli_usage("serve", "--http needs [HOST:]PORT");
    char viewer[PATH_MAX];
    if (!cli_find_viewer(viewer)) {
        fprintf(stderr, "polis: serve: the viewer's files (index.html) are not found (set "
                        "$POLIS_VIEWER_DIR)\n");
        return EXIT_ENV;
    }
    signal(SIGPIPE, SIG_IGN);
    live *lv = calloc(1, sizeof *lv);
    if (!lv) return EXIT_ENV;
    the_live = lv;
    rc = run_live(&a, lv, viewer);
    live_free(lv);
    the_live = NULL;
    free(lv);
    return rc;
#else
    (void)argc;
    (void)argv;
    fprintf(stderr, "polis: serve: --http needs libwebsockets; this polis was built without it "
                    "(install libwebsockets-dev and rebuild)\n");
    return EXIT_ENV;
#endif
}
