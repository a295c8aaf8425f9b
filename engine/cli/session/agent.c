/*
 * engine/cli/session/agent.c — one client's session of the agent protocol (docs/clients.md):
 * its own env, driven by request lines ("describe", "reset", "step", "advance", "close"), one
 * reply each (agent.h). The transport that carries the lines is transport/lines.c.
 *
 * Nothing a client sends ends the session: every request is answered, failures with
 * {"ok": false, "error": {"code", "message", "agent"}}. Actions go through
 * polis_env_parse_action, so the session accepts whatever the scenario's parsers accept.
 *
 * Plans (macro actions, polis_env_plan_*): an action whose first word names a macro starts
 * a plan. After every tick the session asks each running plan for its next action at once
 * (the kernel keeps it for that tick), so a plan that has reached its goal, or cannot, is
 * reported in the reply of the tick that ended it rather than one request later.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "session/agent.h"
#include "session/proto.h"
#include "session/record.h"
#include "util/util.h"

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

struct cli_agent_session {
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
    bool spoke; /* a line came */
};
typedef cli_agent_session session;

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

/* Creates the client's env, and its recorder when `record` names a file; on failure fills
 * err and returns its status. */
static polis_status session_open(session *s, const cli_agent_config *a, const char *record,
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
    fprintf(stderr, "polis: serve: --record: %s; recording stopped\n",
            polis_recorder_error(s->rec));
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
    if (!s->spoke && cli_proto_http_request(line, len)) {
        /* a web page made its browser connect here: nothing of it is played */
        *close = true;
        fprintf(stderr, "polis serve: closed a client whose first line is an HTTP request (a "
                        "web page connecting to the agent port?)\n");
        reply = error_reply("not_a_client", NULL, "an HTTP request on the agent port: closed");
        char *text = cJSON_PrintUnformatted(reply);
        cJSON_Delete(reply);
        return text;
    }
    s->spoke = true;
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
        reply =
            error_reply("unknown_op", NULL,
                        "unknown op \"%.64s\" (ops: describe, reset, step, advance, close)", op);
    /* Echo the client's request id so pipelined clients can match replies. */
    const cJSON *id = cJSON_IsObject(req) ? cJSON_GetObjectItemCaseSensitive(req, "id") : NULL;
    if (reply && id) cJSON_AddItemToObject(reply, "id", cJSON_Duplicate(id, true));
    cJSON_Delete(req);
    char *text = reply ? cJSON_PrintUnformatted(reply) : NULL;
    cJSON_Delete(reply);
    return text;
}

/* ---- the session's calls -------------------------------------------------------------------- */

cli_agent_session *cli_agent_open(const cli_agent_config *c, const char *record, polis_error *err)
{
    session *s = malloc(sizeof *s);
    if (!s) {
        err->status = POLIS_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    if (session_open(s, c, record, err) != POLIS_OK) {
        free(s);
        return NULL;
    }
    return s;
}

char *cli_agent_handle(cli_agent_session *s, const char *line, size_t len, bool *close)
{
    return handle_line(s, line, len, close);
}

bool cli_agent_recording(const cli_agent_session *s) { return s->rec != NULL; }

void cli_agent_close(cli_agent_session *s)
{
    if (!s) return;
    session_free(s);
    free(s);
}
