/* engine/cli/session/agent.h — one client's session of the agent protocol (docs/clients.md,
 * agent.c): an env driven by request lines, one reply line each. `polis serve --stdio|--tcp`
 * (cmd/serve.c) gives every client one over transport/lines.c. Part of the CLI, not of
 * libpolis. */
#ifndef POLIS_CLI_AGENT_H
#define POLIS_CLI_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/polis.h"

/* What every session of a server is made with. */
typedef struct cli_agent_config {
    const char *scenario;       /* the scenario file */
    const char *plugin_path;    /* extra plugin directories, or NULL */
    const char *overrides_text; /* polis_options.overrides, or NULL */
    bool bad_is_noop;           /* --on-bad-action noop */
    int64_t keyframe_every;     /* of the recording (0: the recorder's default) */
} cli_agent_config;

typedef struct cli_agent_session cli_agent_session;

/* A new session with its own env, recording the client's episodes into `record` when not
 * NULL. NULL with the reason in err. */
cli_agent_session *cli_agent_open(const cli_agent_config *c, const char *record, polis_error *err);
/* The reply to one request line (free it; NULL only when memory runs out); *close is
 * set when the client asked to close. */
char *cli_agent_handle(cli_agent_session *s, const char *line, size_t len, bool *close);
/* Whether the session records its episodes. */
bool cli_agent_recording(const cli_agent_session *s);
/* Ends the session (its recording's last episode and file too); NULL is ignored. */
void cli_agent_close(cli_agent_session *s);

#endif
