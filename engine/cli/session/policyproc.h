/* engine/cli/session/policyproc.h — a policy process: a program that plays seats by speaking the
 * seat protocol (docs/policies.md) on its stdin and stdout. `python3 -m polis.rl.seat SPEC` is
 * one (a checkpoint, or any Python policy); any program in any language can be another.
 *
 * The host starts it, says hello (the scenario, agents, actions and observation layout), and
 * then, each tick, sends the observations and masks of the seats it plays in one request and
 * reads their actions from one reply. Observations travel as the flat float32 rows of the
 * Python SDK's flatten=True layout (every field's elements in order), little-endian. Every
 * wait is bounded by the process's timeout; a process that exits, answers nonsense or takes
 * too long is an error naming it (its label and pid), never a hang or a crash. Part of the
 * CLI, not of libpolis. */
#ifndef POLIS_CLI_POLICYPROC_H
#define POLIS_CLI_POLICYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/polis.h"

#define CLI_SEAT_PROTOCOL 1

typedef struct cli_policyproc cli_policyproc;

/* Starts argv (argv[0] looked up in PATH; NULL-terminated) with its stdin and stdout joined to
 * the host, says hello for env and waits for the answer. `label` names it in errors
 * ("py:runs/x/policy.pt"); `file` is the scenario file the hello names (or NULL). A reply
 * slower than timeout_ms is an error. NULL with the reason in err: the program cannot be
 * started, it exits, or it refuses the env (its reason quoted). */
cli_policyproc *cli_policyproc_start(char *const argv[], const char *label, polis_env *env,
                                     const char *file, int timeout_ms, char *err, size_t cap);

/* The name the process gave itself in its hello reply (its label when it gave none). */
const char *cli_policyproc_name(const cli_policyproc *p);

/* An episode starts: the seats it plays in it (agent ids). */
bool cli_policyproc_reset(cli_policyproc *p, int64_t episode, uint64_t seed, const int32_t *seats,
                          int32_t n, char *err, size_t cap);

/* Sends the observations and masks of `seats` (agent ids, n > 0) for the coming tick. */
bool cli_policyproc_send(cli_policyproc *p, const int32_t *seats, int32_t n, char *err,
                         size_t cap);

/* Reads the reply to the last send and writes each seat's action into the env's io->actions.
 * An action is an id in [0, n_actions) or a text the scenario's parsers read. */
bool cli_policyproc_recv(cli_policyproc *p, char *err, size_t cap);

/* Says close, waits a moment for the process to exit (then kills it) and frees everything;
 * NULL is ignored. */
void cli_policyproc_stop(cli_policyproc *p);

#endif
