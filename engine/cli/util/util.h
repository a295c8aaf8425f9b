/* engine/cli/util/util.h — what every `polis` command shares: exit codes, the usage-error
 * message shape, strict number parsing, scenario overrides and scenario names. Part of the
 * CLI, not of libpolis. */
#ifndef POLIS_CLI_UTIL_H
#define POLIS_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

enum { EXIT_ENV = 1, EXIT_USAGE = 2 };

/* Prints "polis: CMD: <message>" and "Try 'polis help CMD'." (or "Try 'polis --help'." for a
 * NULL cmd) to stderr; returns EXIT_USAGE. */
#if defined(__GNUC__)
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#else
int cli_usage(const char *cmd, const char *fmt, ...);
#endif

/* The usage error "NAME: 'VALUE' is not <the integers in [lo, hi]> (unit)" of cmd: "a positive
 * integer" for [1, 2^63), "a non-negative integer" for [0, 2^63), else "an integer in [lo, hi]"
 * (2^53 written so). unit may be NULL. Returns EXIT_USAGE. */
int cli_int_error(const char *cmd, const char *name, const char *value, int64_t lo, int64_t hi,
                  const char *unit);

/* The directory of the running executable into out (PATH_MAX bytes); false when unknown. */
bool cli_exe_dir(char *out);

/* Seconds on the monotonic clock. */
double cli_now(void);

/* Decimal digits only (strtoull alone would accept "-1", " 7" and "0x10"), no overflow. */
bool cli_parse_u64(const char *s, uint64_t *out);
/* The same, within [lo, hi] (lo >= 0). */
bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Scenario overrides from the command line (polis_options.overrides, docs/scenario.md):
 * `--set PATH=JSON` and `--agents N` (the same as --set agents=N), kept in command-line order
 * (a later one sees the result of the earlier ones). Zero-initialise; free with
 * cli_overrides_free. */
typedef struct cli_overrides {
    cJSON *obj; /* NULL: none */
} cli_overrides;

/* Adds the value of --set ("grid.width=64") or of --agents ("100"). Returns 0, or
 * EXIT_USAGE after printing the problem as a usage error of `cmd`. */
int cli_overrides_set(cli_overrides *o, const char *cmd, const char *value);
int cli_overrides_agents(cli_overrides *o, const char *cmd, const char *value);
/* Adds the value of sweep's --grid ("max_steps=[50,100]": a path and a non-empty JSON array of
 * values) to o. Returns 0, or EXIT_USAGE after printing the problem. */
int cli_overrides_grid(cli_overrides *o, const char *cmd, const char *value);
/* The JSON text for polis_options.overrides (cJSON_free it), or NULL when there are none.
 * Sets *oom when it cannot be made. */
char *cli_overrides_text(const cli_overrides *o, bool *oom);
void cli_overrides_free(cli_overrides *o);

/* The host of an origin "http://HOST[:PORT]" (the scheme optional; an IPv6 literal keeps its
 * brackets) into out; false when there is none. */
bool cli_origin_host(const char *origin, char *out, size_t cap);
/* An option value --allow-origin takes: "*" or http(s)://HOST[:PORT] without a path. False
 * with the reason in why. */
bool cli_check_origin(const char *value, char *why, size_t cap);

/* After a scenario failed to load: when the file is one of AdaSociety's own (a main.json, a
 * task file, a job/resource/event table), prints to stderr what to do with it instead (the
 * importer's command line). Prints nothing for anything else. */
void cli_scenario_hint(const char *path);

/* The scenario file of a SCENARIO argument: `arg` itself when it names an existing file or
 * is not a bare name (it holds a '/', ends in .json or starts with '{'); else the first
 * <arg>.json, itself or one directory down (sorted), in $POLIS_SCENARIO_PATH (':'-separated),
 * share/polis/rulesets beside the installed program, the source tree's rulesets/ (only for a
 * polis running from its build tree) and the install prefix's share/polis/rulesets — the
 * places the Python SDK searches. NULL after printing "polis: CMD: 'x' is neither a file nor
 * a scenario name; scenario names: ..." to stderr. The result lives until the next call. */
const char *cli_scenario(const char *cmd, const char *arg);

#endif
