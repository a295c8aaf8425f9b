/* engine/cli/session/proto.c — the shared parts of the agent protocol's servers (proto.h). */
#include "session/proto.h"

#include "session/episode.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

cJSON *cli_proto_verror(const char *code, const char *agent, const char *fmt, va_list ap)
{
    char msg[1536];
    vsnprintf(msg, sizeof msg, fmt, ap);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddFalseToObject(r, "ok");
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    if (agent)
        cJSON_AddStringToObject(e, "agent", agent);
    else
        cJSON_AddNullToObject(e, "agent");
    return r;
}

cJSON *cli_proto_error(const char *code, const char *agent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *r = cli_proto_verror(code, agent, fmt, ap);
    va_end(ap);
    return r;
}

cJSON *cli_proto_ok(const char *op)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddTrueToObject(r, "ok");
    cJSON_AddStringToObject(r, "op", op);
    return r;
}

void cli_proto_parse(const char *line, size_t len, const char *ops, cJSON **req, const char **op,
                     cJSON **err)
{
    const char *end = NULL;
    *op = NULL;
    *err = NULL;
    *req = cJSON_ParseWithLengthOpts(line, len, &end, false);
    if (!*req) {
        size_t at = end ? (size_t)(end - line) : 0;
        if (at > len) at = len;
        *err = cli_proto_error("bad_json", NULL, "malformed JSON at byte %zu of the request", at);
        return;
    }
    while (end && (size_t)(end - line) < len && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(*req, "op");
    if (end && (size_t)(end - line) < len)
        *err = cli_proto_error("bad_json", NULL, "unexpected text at byte %zu after the request",
                               (size_t)(end - line));
    else if (!cJSON_IsObject(*req))
        *err = cli_proto_error("bad_request", NULL, "a request is a JSON object with \"op\"");
    else if (!cJSON_IsString(o))
        *err = cli_proto_error("bad_request", NULL, "\"op\" is missing or not a string (ops: %s)",
                               ops);
    else
        *op = o->valuestring;
}

bool cli_proto_http_request(const char *line, size_t len)
{
    static const char *const METHODS[] = {"GET ",    "POST ",  "PUT ",     "HEAD ", "OPTIONS ",
                                          "DELETE ", "PATCH ", "CONNECT ", "TRACE "};
    bool method = false;
    for (size_t k = 0; k < sizeof METHODS / sizeof METHODS[0]; k++) {
        size_t n = strlen(METHODS[k]);
        method |= len >= n && memcmp(line, METHODS[k], n) == 0;
    }
    for (size_t k = 0; method && k + 6 <= len; k++)
        if (memcmp(line + k, " HTTP/", 6) == 0) return true;
    return false;
}

void cli_proto_describe(polis_env *env, cJSON *r, bool bad_is_noop, bool in_episode)
{
    cJSON_AddStringToObject(r, "scenario", polis_env_name(env));
    cJSON *agents = cJSON_AddArrayToObject(r, "agents");
    for (int32_t i = 0; i < polis_env_n_agents(env); i++)
        cJSON_AddItemToArray(agents, cJSON_CreateString(polis_env_agent_name(env, i)));
    cJSON *actions = cJSON_AddArrayToObject(r, "actions");
    for (int32_t k = 0; k < polis_env_n_actions(env); k++)
        cJSON_AddItemToArray(actions, cJSON_CreateString(polis_env_action_name(env, k)));
    cJSON *docs = cJSON_AddObjectToObject(r, "action_docs");
    for (int32_t k = 0; k < polis_env_n_actions(env); k++)
        cJSON_AddStringToObject(docs, polis_env_action_name(env, k), polis_env_action_doc(env, k));
    cJSON *formats = cJSON_AddArrayToObject(r, "formats");
    const char *f = polis_env_render_formats(env);
    while (*f) {
        const char *sp = strchr(f, ' ');
        size_t len = sp ? (size_t)(sp - f) : strlen(f);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)len, f);
        cJSON_AddItemToArray(formats, cJSON_CreateString(buf));
        f += len;
        if (*f == ' ') f++;
    }
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, polis_env_default_seed(env));
    cJSON_AddRawToObject(r, "default_seed", seed);
    cJSON_AddNumberToObject(r, "max_steps", (double)polis_env_max_steps(env));
    cJSON_AddStringToObject(r, "on_bad_action", bad_is_noop ? "noop" : "error");
    cJSON_AddBoolToObject(r, "in_episode", in_episode);
    cJSON *macros = cJSON_AddArrayToObject(r, "macros");
    for (int32_t m = 0; m < polis_env_n_macros(env); m++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(macros, o);
        cJSON_AddStringToObject(o, "name", polis_env_macro_name(env, m));
        cJSON_AddStringToObject(o, "usage", polis_env_macro_usage(env, m));
        cJSON_AddStringToObject(o, "doc", polis_env_macro_doc(env, m));
    }
}

cJSON *cli_proto_views(polis_env *env, int32_t agent, cJSON *obj, bool json, bool text)
{
    const char *name = polis_env_agent_name(env, agent);
    if (json) {
        char *out = NULL;
        if (polis_env_render(env, agent, "json", &out) != POLIS_OK)
            return cli_proto_error("engine_error", name, "%s", polis_env_error(env));
        cJSON *v = cJSON_Parse(out);
        polis_free(out);
        if (!v) return cli_proto_error("engine_error", name, "the json rendering did not parse");
        cJSON_AddItemToObject(obj, "observation", v);
    } else {
        cJSON_AddNullToObject(obj, "observation");
    }
    if (text) {
        char *out = NULL;
        if (polis_env_render(env, agent, "text", &out) != POLIS_OK)
            return cli_proto_error("engine_error", name, "%s", polis_env_error(env));
        cJSON_AddStringToObject(obj, "text", out);
        polis_free(out);
    } else {
        cJSON_AddNullToObject(obj, "text");
    }
    const polis_io *io = polis_env_io(env);
    cJSON *legal = cJSON_AddArrayToObject(obj, "legal_actions");
    const uint8_t *mask = io->masks + (size_t)agent * (size_t)io->n_actions;
    for (int32_t k = 0; k < io->n_actions; k++)
        if (mask[k]) cJSON_AddItemToArray(legal, cJSON_CreateString(polis_env_action_name(env, k)));
    return NULL;
}

bool cli_proto_has_format(const char *formats, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = formats; *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0) return true;
        if (!sp) break;
        p = sp + 1;
    }
    return false;
}

int32_t cli_agent_find(polis_env *env, const char *name)
{
    for (int32_t i = 0; i < polis_env_n_agents(env); i++)
        if (strcmp(polis_env_agent_name(env, i), name) == 0) return i;
    return -1;
}

void cli_agent_names(polis_env *env, char *buf, size_t cap) /* cap >= 16 */
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < polis_env_n_agents(env) && used < cap - 8; i++) {
        int w =
            snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", polis_env_agent_name(env, i));
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used >= cap - 8) strcpy(buf + cap - 8, ", ...");
}

cJSON *cli_proto_metrics(polis_env *env, int64_t steps, int64_t illegal, cJSON *r)
{
    char *text = NULL;
    if (polis_env_render(env, 0, "metrics", &text) != POLIS_OK)
        return cli_proto_error("engine_error", NULL, "metrics: %s", polis_env_error(env));
    cJSON *m = cli_metrics_parse(text);
    polis_free(text);
    cJSON *flat = m ? cli_metrics_flat(m) : NULL;
    cJSON_Delete(m);
    if (!flat)
        return cli_proto_error(
            "engine_error", NULL,
            "metrics: the \"metrics\" rendering is not a sequence of JSON objects");
    /* eval's own counts, unless the plugin reports the same names (its value wins there) */
    if (!cJSON_GetObjectItemCaseSensitive(flat, "steps"))
        cJSON_AddNumberToObject(flat, "steps", (double)steps);
    if (!cJSON_GetObjectItemCaseSensitive(flat, "illegal_actions"))
        cJSON_AddNumberToObject(flat, "illegal_actions", (double)illegal);
    cJSON_AddItemToObject(r, "metrics", flat);
    return NULL;
}

void cli_legal_names(polis_env *env, int32_t agent, char *buf, size_t cap)
{
    const polis_io *io = polis_env_io(env);
    const uint8_t *mask = io->masks + (size_t)agent * (size_t)io->n_actions;
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < io->n_actions && used < cap - 1; k++) {
        if (!mask[k]) continue;
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
                         polis_env_action_name(env, k));
        if (w < 0) break;
        used += (size_t)w;
    }
}

void cli_proto_plan(cJSON *a, const char *running, const char *status, const char *command,
                    const char *why)
{
    cJSON *p = cJSON_AddObjectToObject(a, "plan");
    cJSON_AddStringToObject(p, "command", running ? running : command);
    cJSON_AddStringToObject(p, "status", running ? "running" : status);
    if (running)
        cJSON_AddNullToObject(p, "why");
    else
        cJSON_AddStringToObject(p, "why", why);
}
