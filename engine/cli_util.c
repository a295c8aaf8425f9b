/* engine/cli_util.c — the pieces every `polis` subcommand shares (cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("polis: ", stderr);
    if (cmd) fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'polis help %s'.\n", cmd);
    else
        fputs("\nTry 'polis --help'.\n", stderr);
    return EXIT_USAGE;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return false;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || *end) return false;
    *out = (uint64_t)v;
    return true;
}

bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > (uint64_t)hi || (int64_t)v < lo) return false;
    *out = (int64_t)v;
    return true;
}
