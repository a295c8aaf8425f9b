/* engine/cli/session/policyproc.h — a policy process: a program that plays seats by speaking the
 * seat protocol (docs/policies.md) on its stdin and stdout. `python3 -m polis.rl.seat SPEC` is
 * one (a checkpoint, or any Python policy); any program in any language can be another.
 *
 * The host starts it, says hello (the scenario, agents, actions and observation layout), and
 * then, each tick, sends the observations and masks of the seats it plays in one request and
 * reads their actions from one reply. Observations travel as the flat float32 rows of the
 * Python SDK's flatten=True layout (every field's elements in order), little-endian; the env's
 * shared fields, to a process that asks for them, once per request as the env's shared buffer
 * (polis_env_shared_obs: each field in its dtype at its offset), little-endian. Every
 * wait is bounded by the process's timeout; a process that exits, answers nonsense or takes
 * too long is an error naming it (its label and pid), never a hang or a crash. Part of the
 * CLI, not of libpolis. */
#ifndef POLIS_CLI_POLICYPROC_H
#define POLIS_CLI_POLICYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "polis/polis.h"

#define CLI_SEAT_PROTOCOL 1
/* What version 1 gained since it began (hello's "revision"; absent means 0). A revision
 * adds only what a process asks for in its hello reply, so a process of an older revision
 * plays unchanged. Revision 1: the env's shared observation fields (hello's "shared_fields"
 * and "shared_size", the view "shared", an act's "shared_bytes"). */
#define CLI_SEAT_REVISION 1

/* The figures a process may report for an episode (docs/policies.md, "The seat protocol"):
 * at most this many per object, names this long at most, values from 0 to this. */
#define CLI_FIGURES_MAX 32
#define CLI_FIGURE_NAME_MAX 48
#define CLI_FIGURE_VALUE_MAX 1e15

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
bool cli_policyproc_send(cli_policyproc *p, const int32_t *seats, int32_t n, char *err, size_t cap);

/* Reads the reply to the last send and writes each seat's action into the env's io->actions.
 * An action is an id in [0, n_actions) or a text the scenario's parsers read. */
bool cli_policyproc_recv(cli_policyproc *p, char *err, size_t cap);

/* Whether the process reports figures of its episodes (tokens, calls, seconds, dollars: what
 * an LLM seat cost): its hello reply held "stats": true. */
bool cli_policyproc_reports(const cli_policyproc *p);

/* An episode in which the process played `seats` (n > 0; the seats of its reset) has ended:
 * asks for its figures ({"op": "end"}) and adds them to `into`, an object of name -> number or
 * null that sums the figures of every process of the episode: the process's totals under
 * their names ("llm.prompt_tokens") and each seat's under NAME.AGENT
 * ("llm.prompt_tokens.agent_0"); null (unknown) stays null. A name that `game` (the episode's
 * metrics) already has, a bad name, a value that is not a number from 0 to
 * CLI_FIGURE_VALUE_MAX or null, or a malformed reply is an error naming the process, the seat
 * and the episode's seed. */
bool cli_policyproc_end(cli_policyproc *p, int64_t episode, uint64_t seed, const int32_t *seats,
                        int32_t n, const cJSON *game, cJSON *into, char *err, size_t cap);

/* The program a py: player starts: $POLIS_PYTHON, else "python3". */
const char *cli_python(void);

/* The environment of a Python child (free the array, not its strings): ours, with the source
 * tree's Python SDK first on PYTHONPATH when this polis was built from a tree that has one
 * (`pythonpath`, cap bytes, holds that variable). NULL when memory runs out. */
char **cli_python_env(char *pythonpath, size_t cap);

/* Says close, waits a moment for the process to exit (then kills it) and frees everything;
 * NULL is ignored. */
void cli_policyproc_stop(cli_policyproc *p);

#endif
