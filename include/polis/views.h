/*
 * polis/views.h — text and JSON views of an agent's situation and text or JSON actions, for
 * LLM agents and tools (plugin ABI 1.1; docs/kernel.md, "Views and text actions"). The
 * engine/views module implements them in libpolis.
 */
#ifndef POLIS_VIEWS_H
#define POLIS_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"

POLIS_API_BEGIN

/* Renders agent's current view in `format` ("text", "json", or another format a plugin
 * registered) into a newly allocated NUL-terminated string (*out, free with polis_free; NULL
 * on failure). "json" is one object with a member per rendering plugin, in registration
 * order; other formats are the plugins' pieces concatenated in registration order, and
 * "text" ends with the kernel's line of the agent's legal actions from its current mask
 * ("Legal actions: noop, move_up, share_map_0..7 (...)."; docs/kernel.md).
 * POLIS_ERR_INVALID if no plugin renders that format or the agent id is bad;
 * POLIS_ERR_STATE before the first successful reset and after a failed step or reset
 * (a finished episode still renders). A failing renderer fails the call with its message
 * placed ("<plugin>: ... [render json, agent 1 (agent_1), tick 3]") and leaves the env as
 * it was. It allocates (from the env allocator while rendering, malloc for *out). */
polis_status polis_env_render(polis_env *env, int32_t agent, const char *format, char **out);
/* Lists the formats renderers are registered for, sorted and space-separated ("json
 * text"); "" if none. Borrowed, valid until polis_env_destroy. */
const char *polis_env_render_formats(const polis_env *env);
/* Turns a text or JSON action of an agent into an action id. Surrounding whitespace is
 * trimmed; an exact action name ("move_north", "noop") wins, then the registered parsers
 * are asked in registration order. POLIS_ERR_ACTION with a message naming the agent and
 * the input when nothing accepts it (or it is empty); the error of the parser that took the
 * input but found it malformed; POLIS_ERR_INVALID for a bad agent id or a NULL input or
 * out_action. *out_action is -1 on failure. Allowed at any time after create. Does not
 * check the mask: whether the action is legal is for the caller or the protocol. */
polis_status polis_env_parse_action(polis_env *env, int32_t agent, const char *input,
                                    int32_t *out_action);

POLIS_API_END
#endif
