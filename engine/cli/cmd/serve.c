/*
 * engine/cli/cmd/serve.c — `polis serve`: the agent protocol (docs/clients.md). One env per
 * client, driven by JSON lines: one request per line in, one reply per line out.
 *
 * Over --stdio the process serves one client and exits when stdin ends or the client sends
 * "close". Over --tcp every connection gets its own env on its own thread, or with --isolate
 * in its own forked process (at most --max-clients at once); a connection that drops
 * mid-episode just frees its env.
 *
 * No client can hold the server: a request line is limited while it is read (the bytes of a
 * longer line are counted and dropped, so a connection's input buffer stays under about
 * 1 MiB), and over TCP a client whose next request does not arrive within --idle-timeout, or
 * who does not take a reply within --write-timeout, is dropped with a line in the server's
 * log. Plugins are trusted code, but under --isolate a plugin that crashes takes down one
 * session's process only: the server reports it to that client and in its log.
 *
 * Nothing a client sends ends the server: every request is answered, failures with
 * {"ok": false, "error": {"code", "message", "agent"}}. Actions go through
 * polis_env_parse_action, so the server accepts whatever the scenario's parsers accept.
 * Like the rest of the CLI it uses only the public API (polis.h).
 *
 * Plans (macro actions, polis_env_plan_*): an action whose first word names a macro starts
 * a plan. After every tick the server asks each running plan for its next action at once
 * (the kernel keeps it for that tick), so a plan that has reached its goal, or cannot, is
 * reported in the reply of the tick that ended it rather than one request later.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
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
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cjson/cJSON.h>

#include "session/episode.h"
#include "session/live.h"
#include "session/proto.h"
#include "cmd/commands.h"
#include "util/util.h"
#include "session/record.h"
#include "polis/polis.h"

/* A request line longer than this is refused (and skipped) rather than parsed. The limit
 * holds while the line is read: the bytes beyond it are counted and dropped, never kept. */
#define SERVE_MAX_LINE (1u << 20)
/* Bytes asked of read() at a time; the input buffer never holds more than
 * SERVE_MAX_LINE + 1 + SERVE_READ_CHUNK bytes. */
#define SERVE_READ_CHUNK (64u << 10)

/* ---- arguments ---------------------------------------------------------------------------- */

typedef struct serve_args {
    const char *scenario;
    const char *plugin_path;
    const char *tcp; /* NULL: --stdio */
    bool stdio;
    bool allow_remote;
    bool bad_is_noop;
    bool isolate; /* --isolate: a process per TCP client */
    bool no_metrics; /* --no-metrics: leave the scenario's plugins as they are */
    int max_clients;
    int idle_timeout;        /* seconds, 0: none (TCP only) */
    int write_timeout;       /* seconds, 0: none (TCP only) */
    char *overrides_text;    /* what every session's env is created with; NULL: none */
    const char *record;      /* --record FILE (TCP: a file per client, record_name) */
    int64_t keyframe_every;  /* --keyframe-every K */
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

/* ---- one client's session ------------------------------------------------------------------ */

/* How a plan turned out in the ticks a reply covers (plans still running are read from the
 * env). */
enum { PLAN_NONE = 0, PLAN_DONE, PLAN_IMPOSSIBLE, PLAN_CANCELLED };
static const char *const PLAN_STATUS[] = {"running", "done", "impossible", "cancelled"};

/* What a request says for one agent. */
enum { GIVEN_NONE = 0, GIVEN_ACTION, GIVEN_PLAN };

#define PLAN_COMMAND_MAX 256
#define PLAN_WHY_MAX 1280

typedef struct plan_event {
    int status; /* PLAN_* */
    char command[PLAN_COMMAND_MAX];
    char why[PLAN_WHY_MAX];
} plan_event;

/* An "advance" runs at most this many ticks per request, so one request cannot hold the
 * client's thread for an unbounded time. */
#define ADVANCE_MAX_TICKS 10000
#define ADVANCE_DEFAULT_TICKS 100

typedef struct session {
    polis_env *env;
    bool bad_is_noop;
    bool in_episode; /* a reset succeeded and no step failed since */
    bool has_json, has_text, has_metrics;
    int64_t steps;
    int64_t *bad_actions; /* [n_agents], this episode */
    int64_t *illegal;     /* [n_agents], this episode: masked actions the env made no-ops */
    int32_t *chosen;      /* [n_agents], scratch for a step */
    char **bad_message;   /* [n_agents], scratch: why an action became a noop */
    /* plans (scratch for one request, [n_agents] each) */
    int32_t n_macros;
    plan_event *plan_events; /* how plans ended in the ticks this reply covers */
    int8_t *given;           /* GIVEN_* */
    const char **plan_text;  /* a GIVEN_PLAN agent's command (borrowed from the request) */
    double *reward_sum;      /* rewards over the ticks of an advance */
    uint8_t *illegal_any;    /* an illegal action in some tick of an advance */
    /* --record: the recorder, and the action each agent's client sent for the next tick as
     * text (owned: a text action as sent, a JSON action compact, an id as the action's name;
     * written into the step line's "msgs" once, with the plan commands of plan_text) */
    polis_recorder *rec;
    bool rec_failed;
    char **sent_text;
} session;

static void session_free(session *s)
{
    if (s->bad_message) {
        for (int32_t i = 0; s->env && i < polis_env_n_agents(s->env); i++) free(s->bad_message[i]);
    }
    free(s->bad_message);
    free(s->bad_actions);
    free(s->illegal);
    free(s->chosen);
    free(s->plan_events);
    free(s->given);
    free(s->plan_text);
    free(s->reward_sum);
    free(s->illegal_any);
    for (int32_t i = 0; s->sent_text && s->env && i < polis_env_n_agents(s->env); i++)
        free(s->sent_text[i]);
    free(s->sent_text);
    if (s->rec) {
        if (s->in_episode && !s->rec_failed) polis_recorder_end_episode(s->rec, NULL);
        polis_recorder_close(s->rec);
    }
    polis_env_destroy(s->env);
    memset(s, 0, sizeof *s);
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

/* Creates the client's env, and its recorder when `record` names a file; on failure fills
 * err and returns its status. */
static polis_status session_open(session *s, const serve_args *a, const char *record,
                                 polis_error *err)
{
    memset(s, 0, sizeof *s);
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = a->plugin_path;
    opts.overrides = a->overrides_text;
    polis_status st = polis_env_create_file(a->scenario, &opts, &s->env, err);
    if (st != POLIS_OK) return st;
    int32_t n = polis_env_n_agents(s->env);
    size_t cnt = n > 0 ? (size_t)n : 1;
    s->bad_actions = calloc(cnt, sizeof *s->bad_actions);
    s->illegal = calloc(cnt, sizeof *s->illegal);
    s->chosen = calloc(cnt, sizeof *s->chosen);
    s->bad_message = calloc(cnt, sizeof *s->bad_message);
    s->plan_events = calloc(cnt, sizeof *s->plan_events);
    s->given = calloc(cnt, sizeof *s->given);
    s->plan_text = calloc(cnt, sizeof *s->plan_text);
    s->reward_sum = calloc(cnt, sizeof *s->reward_sum);
    s->illegal_any = calloc(cnt, sizeof *s->illegal_any);
    s->sent_text = calloc(cnt, sizeof *s->sent_text);
    if (!s->bad_actions || !s->illegal || !s->chosen || !s->bad_message || !s->plan_events ||
        !s->given || !s->plan_text || !s->reward_sum || !s->illegal_any || !s->sent_text) {
        session_free(s);
        err->status = POLIS_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return POLIS_ERR_NOMEM;
    }
    const char *formats = polis_env_render_formats(s->env);
    s->has_json = cli_proto_has_format(formats, "json");
    s->has_text = cli_proto_has_format(formats, "text");
    s->has_metrics = cli_proto_has_format(formats, "metrics");
    s->bad_is_noop = a->bad_is_noop;
    s->n_macros = polis_env_n_macros(s->env);
    if (record) {
        char *pol_text = cli_record_policies(s->env, "client");
        if (pol_text)
            s->rec = cli_record_open(record, s->env, a->scenario, a->overrides_text,
                                     polis_env_default_seed(s->env), a->keyframe_every, pol_text,
                                     "serve");
        cJSON_free(pol_text);
        if (!s->rec) {
            session_free(s);
            err->status = POLIS_ERR_IO;
            snprintf(err->message, sizeof err->message, "--record %s: cannot record", record);
            return POLIS_ERR_IO;
        }
    }
    return POLIS_OK;
}

/* --record: a recorder failure ends the recording (the reply says so once); the session goes
 * on. */
static void record_failed(session *s)
{
    fprintf(stderr, "polis: serve: --record: %s; recording stopped\n", polis_recorder_error(s->rec));
    s->rec_failed = true;
}

/* ---- replies ----------------------------------------------------------------------------- */

/* An error reply. agent may be NULL (the "agent" member is then null). Returns NULL only
 * when memory runs out. */
#if defined(__GNUC__)
static cJSON *error_reply(const char *code, const char *agent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
static cJSON *error_reply(const char *code, const char *agent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *r = cli_proto_verror(code, agent, fmt, ap);
    va_end(ap);
    return r;
}

static cJSON *ok_reply(const char *op) { return cli_proto_ok(op); }

/* Adds one agent's views and legal actions to obj. Returns NULL, or an engine_error reply
 * when a renderer fails (the env is unchanged by that). */
static cJSON *add_views(session *s, int32_t agent, cJSON *obj)
{
    return cli_proto_views(s->env, agent, obj, s->has_json, s->has_text);
}

static void add_stats(session *s, cJSON *r)
{
    cJSON *st = cJSON_AddObjectToObject(r, "stats");
    cJSON_AddNumberToObject(st, "steps", (double)s->steps);
    cJSON *bad = cJSON_AddObjectToObject(st, "bad_actions");
    cJSON *ill = cJSON_AddObjectToObject(st, "illegal_actions");
    for (int32_t i = 0; i < polis_env_n_agents(s->env); i++) {
        cJSON_AddNumberToObject(bad, polis_env_agent_name(s->env, i), (double)s->bad_actions[i]);
        cJSON_AddNumberToObject(ill, polis_env_agent_name(s->env, i), (double)s->illegal[i]);
    }
}

static int32_t find_agent(session *s, const char *name) { return cli_agent_find(s->env, name); }

/* ---- ops ------------------------------------------------------------------------------------ */

static cJSON *op_describe(session *s)
{
    cJSON *r = ok_reply("describe");
    cli_proto_describe(s->env, r, s->bad_is_noop, s->in_episode);
    return r;
}

/* The agent's plan, if one runs or one ended in the ticks this reply covers. A running plan
 * wins over an ended one: a plan command replaced it in the same request. */
static void add_plan(session *s, int32_t agent, cJSON *a)
{
    const char *running = polis_env_plan_command(s->env, agent);
    const plan_event *ev = &s->plan_events[agent];
    if (!running && ev->status == PLAN_NONE) return;
    cli_proto_plan(a, running, PLAN_STATUS[ev->status], ev->command, ev->why);
}

/* The episode's figures, as `polis eval` reports them for one episode: the metrics plugin's
 * rendering flattened, and eval's own "steps" and "illegal_actions" (summed over agents).
 * NULL, or an engine_error reply. */
static cJSON *add_metrics(session *s, cJSON *r)
{
    int64_t illegal = 0;
    for (int32_t i = 0; i < polis_env_n_agents(s->env); i++) illegal += s->illegal[i];
    return cli_proto_metrics(s->env, s->steps, illegal, r);
}

/* The per-agent part of reset, step and advance replies, and tick/done. `sums`: rewards
 * and illegal flags over the ticks of an advance rather than the last tick's. */
static cJSON *add_agents(session *s, cJSON *r, bool with_step, bool sums)
{
    const polis_io *io = polis_env_io(s->env);
    cJSON_AddNumberToObject(r, "tick", (double)polis_env_tick(s->env));
    cJSON_AddBoolToObject(r, "done", polis_env_done(s->env));
    cJSON *agents = cJSON_AddObjectToObject(r, "agents");
    for (int32_t i = 0; i < io->n_agents; i++) {
        cJSON *a = cJSON_AddObjectToObject(agents, polis_env_agent_name(s->env, i));
        if (with_step) {
            cJSON_AddNumberToObject(a, "reward", sums ? s->reward_sum[i] : io->rewards[i]);
            cJSON_AddBoolToObject(a, "terminated", io->terminations[i]);
            cJSON_AddBoolToObject(a, "truncated", io->truncations[i]);
            cJSON_AddBoolToObject(a, "illegal", sums ? s->illegal_any[i] : io->illegal[i]);
            if (s->bad_message[i])
                cJSON_AddStringToObject(a, "bad_action", s->bad_message[i]);
            else
                cJSON_AddNullToObject(a, "bad_action");
        }
        add_plan(s, i, a);
        cJSON *err = add_views(s, i, a);
        if (err) {
            cJSON_Delete(r);
            return err;
        }
    }
    add_stats(s, r);
    if (with_step && s->has_metrics && polis_env_done(s->env)) {
        cJSON *err = add_metrics(s, r);
        if (err) {
            cJSON_Delete(r);
            return err;
        }
    }
    return r;
}

static cJSON *op_reset(session *s, const cJSON *req)
{
    uint64_t seed = polis_env_default_seed(s->env);
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(req, "seed");
    if (js && !cJSON_IsNull(js)) {
        if (cJSON_IsNumber(js)) {
            double d = js->valuedouble;
            if (!(d >= 0 && d <= 9007199254740992.0 && d == floor(d)))
                return error_reply("bad_request", NULL,
                                   "\"seed\": %g is not an integer in [0, 2^53] (give larger "
                                   "seeds as a decimal string)",
                                   d);
            seed = (uint64_t)d;
        } else if (cJSON_IsString(js)) {
            const char *v = js->valuestring;
            char *end;
            errno = 0;
            unsigned long long u = strtoull(v, &end, 10);
            if (!*v || *end || errno || v[0] == '-' || v[0] == '+' || v[0] == ' ')
                return error_reply("bad_request", NULL,
                                   "\"seed\": \"%.64s\" is not a decimal integer in [0, 2^64)", v);
            seed = (uint64_t)u;
        } else {
            return error_reply("bad_request", NULL,
                               "\"seed\" must be an integer or a decimal string");
        }
    }
    /* the reset ends every plan: the reply says which */
    for (int32_t i = 0; i < polis_env_n_agents(s->env); i++) {
        const char *cmd = polis_env_plan_command(s->env, i);
        s->plan_events[i].status = cmd ? PLAN_CANCELLED : PLAN_NONE;
        if (cmd) {
            snprintf(s->plan_events[i].command, PLAN_COMMAND_MAX, "%s", cmd);
            snprintf(s->plan_events[i].why, PLAN_WHY_MAX, "reset");
        }
    }
    if (s->rec && !s->rec_failed && s->in_episode && polis_recorder_end_episode(s->rec, NULL))
        record_failed(s);
    s->in_episode = false;
    if (polis_env_reset(s->env, seed) != POLIS_OK)
        return error_reply("engine_error", NULL, "%s", polis_env_error(s->env));
    s->in_episode = true;
    if (s->rec && !s->rec_failed && polis_recorder_begin_episode(s->rec, seed)) record_failed(s);
    s->steps = 0;
    for (int32_t i = 0; i < polis_env_n_agents(s->env); i++) {
        s->bad_actions[i] = 0;
        s->illegal[i] = 0;
        free(s->bad_message[i]);
        s->bad_message[i] = NULL;
    }
    cJSON *r = ok_reply("reset");
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, seed);
    cJSON_AddRawToObject(r, "seed", buf);
    return add_agents(s, r, false, false);
}

/* Resolves one agent's action into s->chosen[agent]. Returns NULL, or the error reply when
 * the action cannot be used and the policy is "error" (or it is not an action at all). */
static cJSON *resolve_action(session *s, int32_t agent, const cJSON *v)
{
    const char *name = polis_env_agent_name(s->env, agent);
    const polis_io *io = polis_env_io(s->env);
    char msg[1280];
    const char *code = NULL;
    int32_t id = -1;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d != floor(d) || d < 0 || d >= io->n_actions) {
            code = "bad_action";
            snprintf(msg, sizeof msg, "agent %s: action %g is not an action id (0..%d)", name, d,
                     io->n_actions - 1);
        } else {
            id = (int32_t)d;
        }
    } else if (cJSON_IsString(v) || cJSON_IsObject(v)) {
        char *text = cJSON_IsString(v) ? v->valuestring : cJSON_PrintUnformatted(v);
        if (!text) return error_reply("engine_error", name, "out of memory");
        if (polis_env_parse_action(s->env, agent, text, &id) != POLIS_OK) {
            code = "bad_action";
            int w = snprintf(msg, sizeof msg, "%s", polis_env_error(s->env));
            /* a client that misspelt a plan command learns that plans exist */
            int32_t nm = polis_env_n_macros(s->env);
            for (int32_t k = 0; k < nm && w > 0 && (size_t)w < sizeof msg; k++)
                w += snprintf(msg + w, sizeof msg - (size_t)w, "%s%s",
                              k ? ", " : "; plan commands: ", polis_env_macro_usage(s->env, k));
            id = -1;
        }
        if (!cJSON_IsString(v)) cJSON_free(text);
    } else {
        return error_reply("bad_request", name,
                           "\"actions\".\"%s\": an action is an id, a name or text (a string), "
                           "or a JSON action (an object)",
                           name);
    }
    if (id >= 0 && !io->masks[(size_t)agent * (size_t)io->n_actions + (size_t)id] &&
        !io->terminations[agent] && !io->truncations[agent]) {
        code = "illegal_action";
        char list[512];
        cli_legal_names(s->env, agent, list, sizeof list);
        snprintf(msg, sizeof msg,
                 "agent %s: action %s is not legal at tick %" PRId64 " (legal: %s)", name,
                 polis_env_action_name(s->env, id), polis_env_tick(s->env), list);
    }
    if (!code) {
        s->chosen[agent] = id;
        return NULL;
    }
    s->bad_actions[agent]++;
    if (!s->bad_is_noop) return error_reply(code, name, "%s", msg);
    s->chosen[agent] = 0;
    free(s->bad_message[agent]);
    s->bad_message[agent] = strdup(msg);
    return NULL;
}

/* Whether text's first word names one of the scenario's macros (case-insensitively). */
static bool is_plan_command(const session *s, const char *text)
{
    while (*text == ' ' || *text == '\t') text++;
    size_t len = strcspn(text, " \t\r\n");
    for (int32_t m = 0; len && m < s->n_macros; m++) {
        const char *name = polis_env_macro_name(s->env, m);
        if (strlen(name) == len && strncasecmp(name, text, len) == 0) return true;
    }
    return false;
}

static void plan_end(session *s, int32_t agent, int status, const char *command, const char *why)
{
    plan_event *ev = &s->plan_events[agent];
    ev->status = status;
    snprintf(ev->command, sizeof ev->command, "%s", command ? command : "");
    snprintf(ev->why, sizeof ev->why, "%s", why);
}

/* Asks agent's running plan for this tick's action into s->chosen (noop when it has just
 * ended). A macro that fails ends its plan as impossible, with the engine's message: the
 * fault is the macro's, not the client's, and the episode goes on. */
static void plan_follow(session *s, int32_t agent)
{
    char command[PLAN_COMMAND_MAX];
    snprintf(command, sizeof command, "%s", polis_env_plan_command(s->env, agent));
    polis_plan_state st;
    int32_t act = 0;
    const char *why = NULL;
    s->chosen[agent] = 0;
    if (polis_env_plan_next(s->env, agent, &st, &act, &why) != POLIS_OK) {
        char msg[PLAN_WHY_MAX];
        snprintf(msg, sizeof msg, "macro error: %s", polis_env_error(s->env));
        plan_end(s, agent, PLAN_IMPOSSIBLE, command, msg);
        return;
    }
    if (st == POLIS_PLAN_RUNNING)
        s->chosen[agent] = act;
    else
        plan_end(s, agent, st == POLIS_PLAN_DONE ? PLAN_DONE : PLAN_IMPOSSIBLE, command, why);
}

/* Clears the per-request scratch: nobody chose anything and no plan ended yet. */
static void choices_clear(session *s)
{
    for (int32_t i = 0; i < polis_env_n_agents(s->env); i++) {
        s->chosen[i] = 0; /* kernel noop */
        s->given[i] = GIVEN_NONE;
        s->plan_text[i] = NULL;
        s->plan_events[i].status = PLAN_NONE;
        free(s->sent_text[i]);
        s->sent_text[i] = NULL;
        s->reward_sum[i] = 0;
        s->illegal_any[i] = 0;
        free(s->bad_message[i]);
        s->bad_message[i] = NULL;
    }
}

/* A refused plan command: the error reply under "error"; under "noop" the agent does noop
 * and its bad_action says why. */
static cJSON *plan_refused(session *s, int32_t agent, const char *msg)
{
    const char *name = polis_env_agent_name(s->env, agent);
    s->bad_actions[agent]++;
    if (!s->bad_is_noop) return error_reply("bad_plan", name, "%s", msg);
    s->chosen[agent] = 0;
    free(s->bad_message[agent]);
    s->bad_message[agent] = strdup(msg);
    return NULL;
}

/* --record: what the client sent as agent's action, as text for the step line's "msgs": a
 * text action as sent, a JSON action compact (what the parser read), an action id as the
 * action's name (the number itself when it is not an id). False when out of memory. */
static bool sent(session *s, int32_t agent, const cJSON *v)
{
    free(s->sent_text[agent]);
    s->sent_text[agent] = NULL;
    if (cJSON_IsString(v)) {
        s->sent_text[agent] = strdup(v->valuestring);
    } else if (cJSON_IsObject(v)) {
        char *t = cJSON_PrintUnformatted(v);
        s->sent_text[agent] = t ? strdup(t) : NULL;
        cJSON_free(t);
    } else {
        double d = v->valuedouble;
        const char *name = d == floor(d) && d >= 0 && d < polis_env_n_actions(s->env)
                               ? polis_env_action_name(s->env, (int32_t)d)
                               : NULL;
        char num[64];
        snprintf(num, sizeof num, "%.17g", d);
        s->sent_text[agent] = strdup(name ? name : num);
    }
    return s->sent_text[agent] != NULL;
}

/* The actions of one tick from a request's "actions" (may be NULL) into s->chosen: explicit
 * actions, plan commands (started here, their first action taken this tick), and the running
 * plans of agents left out. Every action is checked before any plan changes, so a bad action
 * leaves the plans as they were; after a refused plan command every agent given a plan
 * command in the request is left without a plan (a start replaces the old plan even when it
 * fails, so keeping the others' old plans would depend on the order of the agents). */
static cJSON *choose_actions(session *s, const cJSON *acts)
{
    int32_t n = polis_env_n_agents(s->env);
    const cJSON *v;
    cJSON_ArrayForEach(v, acts) {
        int32_t agent = find_agent(s, v->string);
        if (agent < 0) {
            char list[512];
            cli_agent_names(s->env, list, sizeof list);
            return error_reply("unknown_agent", v->string,
                               "\"actions\": no agent named \"%.64s\" (agents: %s)", v->string,
                               list);
        }
        const cJSON *plan = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "plan") : NULL;
        if (plan) {
            if (!cJSON_IsString(plan))
                return error_reply("bad_request", v->string,
                                   "\"actions\".\"%s\".\"plan\" must be a plan command (a string "
                                   "such as \"GATHER 3 wood\")",
                                   v->string);
            s->given[agent] = GIVEN_PLAN;
            s->plan_text[agent] = plan->valuestring;
            continue;
        }
        /* an action's exact name stays that action even when a macro shares the word */
        if (cJSON_IsString(v) && polis_env_action_id(s->env, v->valuestring) < 0 &&
            is_plan_command(s, v->valuestring)) {
            s->given[agent] = GIVEN_PLAN;
            s->plan_text[agent] = v->valuestring;
            continue;
        }
        cJSON *err = resolve_action(s, agent, v);
        if (err) return err;
        s->given[agent] = GIVEN_ACTION;
        if (s->rec && !s->rec_failed && !sent(s, agent, v))
            return error_reply("engine_error", v->string, "out of memory");
    }
    for (int32_t i = 0; i < n; i++) {
        if (s->given[i] != GIVEN_PLAN) continue;
        if (polis_env_plan_start(s->env, i, s->plan_text[i]) == POLIS_OK) continue;
        char msg[PLAN_WHY_MAX];
        snprintf(msg, sizeof msg, "%s", polis_env_error(s->env));
        cJSON *err = plan_refused(s, i, msg);
        if (err) {
            for (int32_t k = 0; k < n; k++)
                if (s->given[k] == GIVEN_PLAN) polis_env_plan_cancel(s->env, k);
            return err;
        }
        s->given[i] = GIVEN_ACTION; /* its noop */
    }
    for (int32_t i = 0; i < n; i++) {
        const char *running = polis_env_plan_command(s->env, i);
        if (!running) continue;
        if (s->given[i] == GIVEN_ACTION) {
            plan_end(s, i, PLAN_CANCELLED, running, "an action was given instead");
            polis_env_plan_cancel(s->env, i);
        } else {
            plan_follow(s, i);
        }
    }
    return NULL;
}

/* Steps the env with s->chosen, adds up the tick's rewards and illegal flags, then asks
 * every running plan for its next action, so a plan that just ended is reported now. */
static cJSON *run_tick(session *s)
{
    int32_t n = polis_env_n_agents(s->env);
    const polis_io *io = polis_env_io(s->env);
    memcpy(io->actions, s->chosen, (size_t)n * sizeof *s->chosen);
    if (s->rec && !s->rec_failed) {
        /* what the clients sent for this tick, once: a plan command (also one the game
         * refused, played as noop: the agent's old plan ended) or an action */
        for (int32_t i = 0; i < n; i++) {
            const char *kind = s->plan_text[i] ? "plan" : "action";
            const char *text = s->plan_text[i] ? s->plan_text[i] : s->sent_text[i];
            if (text && !s->rec_failed && polis_recorder_msg(s->rec, i, kind, text))
                record_failed(s);
            free(s->sent_text[i]);
            s->sent_text[i] = NULL;
            s->plan_text[i] = NULL;
        }
    }
    if (polis_env_step(s->env) != POLIS_OK) {
        s->in_episode = false;
        return error_reply("engine_error", NULL, "%s (send {\"op\": \"reset\"})",
                           polis_env_error(s->env));
    }
    if (s->rec && !s->rec_failed && polis_recorder_step(s->rec)) record_failed(s);
    s->steps++;
    for (int32_t i = 0; i < n; i++) {
        s->illegal[i] += io->illegal[i];
        s->illegal_any[i] |= io->illegal[i];
        s->reward_sum[i] += io->rewards[i];
    }
    for (int32_t i = 0; i < n; i++)
        if (polis_env_plan_command(s->env, i)) plan_follow(s, i);
    return NULL;
}

/* Whether the request can run a tick: an episode is on. NULL or the error reply. */
static cJSON *check_episode(session *s, const cJSON *acts)
{
    if (acts && !cJSON_IsObject(acts))
        return error_reply("bad_request", NULL,
                           "\"actions\" must be an object {agent name: action}");
    if (!s->in_episode)
        return error_reply("no_episode", NULL, "no episode: send {\"op\": \"reset\"} first");
    if (polis_env_done(s->env))
        return error_reply("episode_over", NULL,
                           "the episode ended at tick %" PRId64 ": send {\"op\": \"reset\"}",
                           polis_env_tick(s->env));
    return NULL;
}

static cJSON *op_step(session *s, const cJSON *req)
{
    const cJSON *acts = cJSON_GetObjectItemCaseSensitive(req, "actions");
    cJSON *err = check_episode(s, acts);
    if (err) return err;
    choices_clear(s);
    if ((err = choose_actions(s, acts))) return err;
    if ((err = run_tick(s))) return err;
    return add_agents(s, ok_reply("step"), true, false);
}

/* Ticks until a plan ends (done or impossible), the episode ends, or max_ticks: the first
 * tick takes "actions" like a step; then agents with a running plan follow it and the
 * others do noop. */
static cJSON *op_advance(session *s, const cJSON *req)
{
    const cJSON *acts = cJSON_GetObjectItemCaseSensitive(req, "actions");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(req, "max_ticks");
    int64_t max_ticks = ADVANCE_DEFAULT_TICKS;
    if (mt && !cJSON_IsNull(mt)) {
        double d = cJSON_IsNumber(mt) ? mt->valuedouble : -1;
        if (!cJSON_IsNumber(mt) || d != floor(d) || d < 1 || d > ADVANCE_MAX_TICKS)
            return error_reply("bad_request", NULL,
                               "\"max_ticks\" must be an integer in [1, %d] (default %d)",
                               ADVANCE_MAX_TICKS, ADVANCE_DEFAULT_TICKS);
        max_ticks = (int64_t)d;
    }
    cJSON *err = check_episode(s, acts);
    if (err) return err;
    choices_clear(s);
    if ((err = choose_actions(s, acts))) return err;
    int32_t n = polis_env_n_agents(s->env);
    int64_t ticks = 0;
    const char *stopped = "max_ticks";
    for (;;) {
        if ((err = run_tick(s))) return err;
        ticks++;
        bool ended = false;
        for (int32_t i = 0; i < n; i++)
            ended |= s->plan_events[i].status == PLAN_DONE ||
                     s->plan_events[i].status == PLAN_IMPOSSIBLE;
        /* the end of the episode ends every plan too; it is the better reason to give */
        if (polis_env_done(s->env)) {
            stopped = "episode_done";
            break;
        }
        if (ended) {
            stopped = "plan_ended";
            break;
        }
        if (ticks >= max_ticks) break;
        for (int32_t i = 0; i < n; i++) {
            s->chosen[i] = 0;
            if (polis_env_plan_command(s->env, i)) plan_follow(s, i);
        }
    }
    cJSON *r = ok_reply("advance");
    cJSON_AddNumberToObject(r, "ticks", (double)ticks);
    cJSON_AddStringToObject(r, "stopped", stopped);
    return add_agents(s, r, true, true);
}

/* Answers one request line. *close is set when the client asked to close. */
static char *handle_line(session *s, const char *line, size_t len, bool *close)
{
    cJSON *reply, *req;
    const char *op;
    cli_proto_parse(line, len, "describe, reset, step, advance, close", &req, &op, &reply);
    if (!op)
        ;
    else if (strcmp(op, "describe") == 0)
        reply = op_describe(s);
    else if (strcmp(op, "reset") == 0)
        reply = op_reset(s, req);
    else if (strcmp(op, "step") == 0)
        reply = op_step(s, req);
    else if (strcmp(op, "advance") == 0)
        reply = op_advance(s, req);
    else if (strcmp(op, "close") == 0) {
        reply = ok_reply("close");
        *close = true;
    } else
        reply = error_reply("unknown_op", NULL,
                            "unknown op \"%.64s\" (ops: describe, reset, step, advance, close)", op);
    /* Echo the client's request id so pipelined clients can match replies. */
    const cJSON *id = cJSON_IsObject(req) ? cJSON_GetObjectItemCaseSensitive(req, "id") : NULL;
    if (reply && id) cJSON_AddItemToObject(reply, "id", cJSON_Duplicate(id, true));
    cJSON_Delete(req);
    char *text = reply ? cJSON_PrintUnformatted(reply) : NULL;
    cJSON_Delete(reply);
    return text;
}

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

static char *print_reply(cJSON *r)
{
    char *text = r ? cJSON_PrintUnformatted(r) : NULL;
    cJSON_Delete(r);
    return text;
}

/* Serves one client until it closes, sends "close", or is dropped; returns why it ended. */
static end_reason serve_stream(session *s, line_io *io)
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
            text = print_reply(error_reply("line_too_long", NULL,
                                           "the request is %" PRIu64 " bytes; the limit is %u",
                                           too_long, SERVE_MAX_LINE));
            break;
        case LINE_OK: text = handle_line(s, line, len, &close); break;
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

static int serve_stdio(const serve_args *a)
{
    session s;
    polis_error err;
    if (session_open(&s, a, a->record, &err) != POLIS_OK) {
        fprintf(stderr, "polis: serve: %s\n", err.message);
        return EXIT_ENV;
    }
    line_io io;
    memset(&io, 0, sizeof io);
    io.in_fd = STDIN_FILENO;
    io.out_fd = STDOUT_FILENO;
    serve_stream(&s, &io);
    free(io.buf);
    session_free(&s);
    return 0;
}

/* ---- tcp ------------------------------------------------------------------------------------ */

/* A line on the server's log (stderr), "polis serve: ...", in one write so the lines of
 * concurrent sessions (threads or processes) do not interleave. */
#if defined(__GNUC__)
static void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static void serve_log(const char *fmt, ...)
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
static void send_line_nowait(int fd, cJSON *r)
{
    char *text = print_reply(r);
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
static void serve_client(const serve_args *a, int fd, unsigned id, const char *who)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        serve_log("%s: %s", who, strerror(errno));
        return;
    }
    session s;
    polis_error err;
    char record[PATH_MAX + 32];
    if (a->record && !record_name(a->record, id, record, sizeof record)) {
        send_line_nowait(fd, error_reply("engine_error", NULL, "--record: the file name of "
                                                                "client %u is too long", id));
        serve_log("%s: --record: the file name is too long", who);
        shutdown(fd, SHUT_WR);
        return;
    }
    if (session_open(&s, a, a->record ? record : NULL, &err) != POLIS_OK) {
        send_line_nowait(fd, error_reply("engine_error", NULL, "%s", err.message));
        serve_log("%s: no env: %s", who, err.message);
        shutdown(fd, SHUT_WR);
        return;
    }
    line_io io;
    memset(&io, 0, sizeof io);
    io.in_fd = io.out_fd = fd;
    io.idle_ms = a->idle_timeout * 1000;
    io.write_ms = a->write_timeout * 1000;
    if (s.rec) serve_log("%s: recording to %s", who, record);
    end_reason why = serve_stream(&s, &io);
    free(io.buf);
    session_free(&s);
    if (why == END_IDLE) {
        send_line_nowait(fd, error_reply("idle_timeout", NULL,
                                         "no complete request in %d s: the server closes the "
                                         "connection (--idle-timeout)",
                                         a->idle_timeout));
        serve_log("%s dropped: no complete request in %d s (--idle-timeout)", who, a->idle_timeout);
    } else if (why == END_WRITE_TIMEOUT) {
        serve_log("%s dropped: a reply was not taken within %d s (--write-timeout)", who,
                  a->write_timeout);
    } else if (why == END_NOMEM) {
        serve_log("%s dropped: out of memory", who);
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

static void refuse_full(int fd, int max_clients)
{
    send_line_nowait(fd,
                     error_reply("server_full", NULL,
                                 "the server already has %d clients (--max-clients)", max_clients));
    close(fd);
}

/* -- a thread per client (the default) -- */

typedef struct server {
    const serve_args *args;
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
    serve_client(c->srv->args, c->fd, c->id, c->who);
    close(c->fd);
    pthread_mutex_lock(&c->srv->lock);
    c->srv->active--;
    pthread_mutex_unlock(&c->srv->lock);
    free(c);
    return NULL;
}

static int serve_threads(const serve_args *a, int lfd)
{
    server srv;
    srv.args = a;
    srv.active = 0;
    pthread_mutex_init(&srv.lock, NULL);
    unsigned next_id = 0;
    for (;;) {
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        int fd = accept(lfd, (struct sockaddr *)&peer, &plen);
        if (fd < 0) {
            if (accept_can_go_on()) continue;
            fprintf(stderr, "polis: serve: accept: %s\n", strerror(errno));
            break;
        }
        unsigned id = ++next_id;
        pthread_mutex_lock(&srv.lock);
        bool full = srv.active >= a->max_clients;
        if (!full) srv.active++;
        pthread_mutex_unlock(&srv.lock);
        if (full) {
            refuse_full(fd, a->max_clients);
            continue;
        }
        connection *c = malloc(sizeof *c);
        pthread_t t;
        pthread_attr_t attr;
        bool started = false;
        if (c && pthread_attr_init(&attr) == 0) {
            c->srv = &srv;
            c->fd = fd;
            c->id = id;
            client_name(c->who, sizeof c->who, id, (struct sockaddr *)&peer, plen);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            started = pthread_create(&t, &attr, connection_main, c) == 0;
            pthread_attr_destroy(&attr);
        }
        if (!started) {
            free(c);
            send_line_nowait(fd, error_reply("server_full", NULL, "cannot start a client thread"));
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
static void isolated_child(const serve_args *a, int fd, unsigned id, const char *who, int lfd,
                           seat *seats, pid_t server_pid)
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
    serve_client(a, fd, id, who);
    close(fd);
    _exit(0);
}

/* Frees the seats of the children that ended; a child that did not end normally (a signal,
 * a non-zero status: a plugin crashed or called exit) is logged and reported to its client
 * in place of the reply it was working on. */
static void reap_children(const serve_args *a, seat *seats, int *active)
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
            serve_log("%s: its session process %ld %s; the session is over, the other clients "
                      "go on",
                      s->who, (long)pid, how);
            send_line_nowait(s->fd, error_reply("session_crashed", NULL,
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

static int serve_isolated(const serve_args *a, int lfd)
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
            reap_children(a, seats, &active);
        }
        if (!(p[0].revents & POLLIN)) continue;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        int fd = accept(lfd, (struct sockaddr *)&peer, &plen);
        if (fd < 0) {
            if (accept_can_go_on()) continue;
            fprintf(stderr, "polis: serve: accept: %s\n", strerror(errno));
            break;
        }
        unsigned id = ++next_id;
        if (active >= a->max_clients) {
            refuse_full(fd, a->max_clients);
            continue;
        }
        seat *s = NULL;
        for (int i = 0; i < a->max_clients && !s; i++)
            if (!seats[i].pid) s = &seats[i];
        char who[96];
        client_name(who, sizeof who, id, (struct sockaddr *)&peer, plen);
        pid_t pid = fork();
        if (pid == 0) isolated_child(a, fd, id, who, lfd, seats, server_pid);
        if (pid < 0) {
            send_line_nowait(fd,
                             error_reply("server_full", NULL, "cannot start a session process: %s",
                                         strerror(errno)));
            close(fd);
            continue;
        }
        s->pid = pid;
        s->fd = fd;
        snprintf(s->who, sizeof s->who, "%s", who);
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

static int serve_tcp(const serve_args *a)
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
    /* Check the scenario loads before listening, so a bad scenario fails at once. */
    session probe;
    polis_error err;
    if (session_open(&probe, a, NULL, &err) != POLIS_OK) {
        freeaddrinfo(res);
        fprintf(stderr, "polis: serve: %s\n", err.message);
        return EXIT_ENV;
    }
    session_free(&probe);

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

    int rc = a->isolate ? serve_isolated(a, lfd) : serve_threads(a, lfd);
    close(lfd);
    return rc;
}

static int serve_main(cli_args *c)
{
    serve_args a;
    int rc = serve_args_of(c, &a);
    if (rc == 0) {
        /* A client that vanishes must not kill the server with SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
        rc = a.stdio ? serve_stdio(&a) : serve_tcp(&a);
    }
    cJSON_free(a.overrides_text);
    return rc;
}

/* `polis serve --http`: the live game (session/live.c). */
static int live_main(cli_args *c)
{
    /* the live game's own key is read from the file, so it is set with --seat and --tick-ms
     * rather than --set */
    const cJSON *ov;
    cJSON_ArrayForEach(ov, c->overrides.obj)
        if (strncmp(ov->string, "live", 4) == 0 && (!ov->string[4] || ov->string[4] == '.'))
            return cli_usage(c->name, "--set %s: set the live game with --seat, --tick-ms and "
                                      "--episodes",
                             ov->string);
    cli_live_args a = {
        .http = cli_text(c, CLI_OPT_HTTP),
        .tcp = cli_text(c, CLI_OPT_TCP),
        .record = cli_text(c, CLI_OPT_RECORD),
        .plugin_path = cli_text(c, CLI_OPT_PLUGIN_PATH),
        .policy = cli_text(c, CLI_OPT_POLICY),
        .tick_ms = cli_has(c, CLI_OPT_TICK_MS) ? cli_num(c, CLI_OPT_TICK_MS) : -1,
        .episodes = cli_has(c, CLI_OPT_EPISODES) ? cli_num(c, CLI_OPT_EPISODES) : -1,
        .keyframe_every = cli_num(c, CLI_OPT_KEYFRAME_EVERY),
        .seed = c->v[CLI_OPT_SEED].u64,
        .has_seed = cli_has(c, CLI_OPT_SEED),
        .allow_remote = cli_has(c, CLI_OPT_ALLOW_REMOTE),
        .seat_arg = c->v[CLI_OPT_SEAT].list,
        .n_seat_args = c->v[CLI_OPT_SEAT].n,
    };
    if (!(a.scenario = cli_scenario(c->name, c->pos[0]))) return EXIT_ENV;
    bool oom = false;
    /* as with `polis serve --tcp`, the env has the metrics plugin, so the reply that ends a
     * client's episode and the recording's end lines carry the figures eval prints */
    char *overrides = cli_eval_overrides(a.scenario, c->overrides.obj, true, &oom);
    if (oom) return cli_usage(c->name, "out of memory");
    a.overrides_text = overrides;
    int rc = cli_live_run(&a);
    cJSON_free(overrides);
    return rc;
}

static const char *const BAD_ACTION[] = {"error", "noop", NULL};

static const cli_use SERVE_USES[] = {
    {.id = CLI_OPT_STDIO},
    {.id = CLI_OPT_TCP, .help = "listen on HOST (default 127.0.0.1) and PORT (0: any free\n"
                  "port); the bound address is printed on stderr as\n"
                  "'polis serve: listening on HOST:PORT'. Each connection gets its\n"
                  "own env. Runs until killed."},
    {.id = CLI_OPT_ALLOW_REMOTE},
    {.id = CLI_OPT_MAX_CLIENTS, .def = "8"},
    {.id = CLI_OPT_IDLE_TIMEOUT, .def = "600"},
    {.id = CLI_OPT_WRITE_TIMEOUT, .def = "60"},
    {.id = CLI_OPT_ISOLATE},
    {.id = CLI_OPT_RECORD, .help = "record the client's episodes to FILE (docs/recording.md; gzip\n"
                     "when it ends in .gz), the actions and plan commands it sent in\n"
                     "\"msgs\"; check it with `polis replay FILE --verify`. TCP: each\n"
                     "client N to its own file, FILE with {client} replaced by N, or\n"
                     "else with -N before the first '.' of its name (ep.jsonl.gz:\n"
                     "ep-1.jsonl.gz, ep-2.jsonl.gz, ...)"},
    {.id = CLI_OPT_KEYFRAME_EVERY, .needs = CLI_BIT(CLI_OPT_RECORD)},
    {.id = CLI_OPT_ON_BAD_ACTION, .def = "error", .choices = BAD_ACTION},
    {.id = CLI_OPT_NO_METRICS, .help = "do not add the metrics plugin when the scenario lacks it (the\n"
                         "reply that ends an episode then has no \"metrics\")"},
    CLI_SCENARIO_OPTIONS,
};

const cli_command CLI_CMD_SERVE = {
    .name = "serve",
    CLI_SCENARIO_AND(SERVE_USES),
    .summary = "serve agents (LLM or any language) over JSON lines on stdio/TCP",
    .usage = "serve SCENARIO (--stdio | --tcp [HOST:]PORT) [options]",
    .about = "Serves SCENARIO to agents over the agent protocol: JSON lines, one request per line,\n"
             "one reply per line (docs/clients.md). Requests: {\"op\": \"describe\"},\n"
             "{\"op\": \"reset\", \"seed\": N}, {\"op\": \"step\", \"actions\": {AGENT: ACTION}},\n"
             "{\"op\": \"advance\", \"max_ticks\": N}, {\"op\": \"close\"}. An ACTION is an action id,\n"
             "an action name, a text action (\"move north\"), a JSON action object, or a plan\n"
             "command (\"GATHER 3 wood\", a macro of the scenario); agents left out do noop or\n"
             "follow their plan. \"advance\" runs the plans until one ends.\n",
    .notes = "polis serve SCENARIO --http [HOST:]PORT [--seat AGENT=human|client|POLICY] [--tcp ...]\n"
             "plays live: people in the browser, agent-protocol clients over --tcp and policies\n"
             "together (`polis serve x --http 0 --help` for its options).\n",
    .run = serve_main,
};

static const cli_use LIVE_USES[] = {
    {.id = CLI_OPT_HTTP},
    {.id = CLI_OPT_SEAT, .help = "who plays AGENT: 'human' (a person on the page, or any client of\n"
                   "the \"polis-seat\" WebSocket protocol), 'client' (an agent-protocol\n"
                   "client over --tcp) or a policy of the scenario (random, greedy,\n"
                   "...); repeatable; wins over the scenario's \"live\" seats"},
    {.id = CLI_OPT_POLICY, .help = "the policy of the seats nobody names (default random)", .def = "random",
     .metavar = "P"},
    {.id = CLI_OPT_TCP, .help = "listen for the agent-protocol clients of the client seats (JSON\n"
                  "lines); the address is printed on stdout as tcp://HOST:PORT"},
    {.id = CLI_OPT_TICK_MS, .help = "tick every N ms, a seat whose player did not act doing noop\n"
                      "(default: the scenario's \"live\" tick_ms, else 0: wait until\n"
                      "every human and client seat has acted)"},
    {.id = CLI_OPT_EPISODES, .help = "play N episodes, then keep serving the page (default: the\n"
                       "scenario's \"live\" episodes, else 0: no end)",
     .lo = 0, .hi = INT32_MAX},
    {.id = CLI_OPT_SEED, .help = "the first episode's seed (default: the scenario's); then S+1, ...",
     .metavar = "S"},
    {.id = CLI_OPT_RECORD, .help = "also record every episode to FILE (gzip when it ends in .gz)"},
    {.id = CLI_OPT_KEYFRAME_EVERY, .help = "a keyframe every K ticks (default 100)",
     .needs = CLI_BIT(CLI_OPT_RECORD)},
    {.id = CLI_OPT_ALLOW_REMOTE, .help = "allow a HOST that is not a loopback address (anyone who can\n"
                           "connect can take a seat)"},
    CLI_SCENARIO_OPTIONS,
};

const cli_command CLI_CMD_LIVE = {
    .name = "serve",
    CLI_SCENARIO_AND(LIVE_USES),
    .summary = "play live: the browser viewer's seats, agent-protocol clients and policies",
    .usage = "serve SCENARIO --http [HOST:]PORT [options]",
    .about = "Plays SCENARIO live: serves the browser viewer on HOST (default 127.0.0.1) and PORT (0:\n"
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
