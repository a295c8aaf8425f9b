/* engine/cli_util.h — what every `polis` subcommand shares: exit codes, the usage-error
 * message shape, and strict number parsing. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_UTIL_H
#define POLIS_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

enum { EXIT_ENV = 1, EXIT_USAGE = 2 };

/* Prints "polis: CMD: <message>" and "Try 'polis help CMD'." (or "Try 'polis --help'." for a
 * NULL cmd) to stderr; returns EXIT_USAGE. */
#if defined(__GNUC__)
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#else
int cli_usage(const char *cmd, const char *fmt, ...);
#endif

/* Decimal digits only (strtoull alone would accept "-1", " 7" and "0x10"), no overflow. */
bool cli_parse_u64(const char *s, uint64_t *out);
/* The same, within [lo, hi] (lo >= 0). */
bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

#endif
