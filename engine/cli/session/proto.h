/* engine/cli/session/proto.h — the parts of the agent protocol (docs/clients.md) that both of its
 * servers use: `polis serve --stdio|--tcp` (serve.c) and the client seats of a live episode,
 * `polis serve --http ... --tcp` (live.c). Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_PROTO_H
#define POLIS_CLI_PROTO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "polis/polis.h"

/* {"ok": false, "error": {"code", "message", "agent"}}; agent NULL gives "agent": null.
 * NULL only when memory runs out. */
cJSON *cli_proto_verror(const char *code, const char *agent, const char *fmt, va_list ap);
#if defined(__GNUC__)
cJSON *cli_proto_error(const char *code, const char *agent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#else
cJSON *cli_proto_error(const char *code, const char *agent, const char *fmt, ...);
#endif

/* {"ok": true, "op": op}. */
cJSON *cli_proto_ok(const char *op);

/* Parses one request line: the request object and its "op" (*op), or NULL with the error
 * reply in *err (bad_json: malformed or text after the value; bad_request: not an object,
 * no "op" string; `ops` lists the valid ops for the message). A request that parsed but is
 * refused is still returned in *req (for its "id"); the caller deletes *req. */
void cli_proto_parse(const char *line, size_t len, const char *ops, cJSON **req, const char **op,
                     cJSON **err);

/* Whether a connection's first line is an HTTP request ("POST / HTTP/1.1"): a web page made
 * its browser connect to the agent port, a request line hidden in the body. The servers close
 * such a connection before playing anything (docs/security.md, "Pages and origins"). */
bool cli_proto_http_request(const char *line, size_t len);

/* Adds describe's members after "op": scenario, agents, actions, action_docs, formats,
 * default_seed, max_steps, on_bad_action, in_episode, macros. */
void cli_proto_describe(polis_env *env, cJSON *r, bool bad_is_noop, bool in_episode);

/* Adds agent's "observation" (the json view, or null), "text" (or null) and
 * "legal_actions" to obj. NULL, or an engine_error reply when a renderer fails. */
cJSON *cli_proto_views(polis_env *env, int32_t agent, cJSON *obj, bool json, bool text);

/* Adds "metrics" to r: the metrics rendering flattened as `polis eval` reports one episode
 * (dotted keys), with eval's "steps" and "illegal_actions" (summed over the agents) unless the
 * rendering has them. NULL, or an engine_error reply (r untouched). */
cJSON *cli_proto_metrics(polis_env *env, int64_t steps, int64_t illegal, cJSON *r);

/* Whether the space-separated list `formats` (polis_env_render_formats) has `name`. */
bool cli_proto_has_format(const char *formats, const char *name);

/* The agent's index, or -1. */
int32_t cli_agent_find(polis_env *env, const char *name);
/* "agent_0, agent_1, ..." into buf (cap bytes; ", ..." when it does not fit). */
void cli_agent_names(polis_env *env, char *buf, size_t cap);
/* Adds an agent's "plan" to a: {"command", "status": "running", "why": null} for the running
 * plan (when `running` is not NULL), else the ended plan's command, status and why. */
void cli_proto_plan(cJSON *a, const char *running, const char *status, const char *command,
                    const char *why);

/* The names of the actions agent's mask allows now, ", "-separated, into buf (cap bytes;
 * cut short when they do not fit). */
void cli_legal_names(polis_env *env, int32_t agent, char *buf, size_t cap);

#endif
