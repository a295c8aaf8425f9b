/*
 * tests/cli/fail_write.c — an LD_PRELOAD shim that makes one write to a sweep's results file
 * fail the way a disk that fills for a moment does: the Nth write() to a file named
 * results.jsonl ($POLIS_TEST_FAIL_WRITE=N) writes half its bytes, the next one fails with
 * ENOSPC, and every later one succeeds. tests/cli/sweep_torn.sh checks that the sweep stops
 * with the file ending in a whole line, and that --resume finishes it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int results_fd(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    const char *base = strrchr(path, '/');
    return base && strcmp(base + 1, "results.jsonl") == 0;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real)(int, const void *, size_t);
    static int seen, state; /* state 0: counting, 1: the next write fails, 2: done */
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *n = getenv("POLIS_TEST_FAIL_WRITE");
    if (n && state < 2 && count > 1 && results_fd(fd)) {
        if (state == 1) {
            state = 2;
            errno = ENOSPC;
            return -1;
        }
        if (++seen == atoi(n)) {
            state = 1;
            return real(fd, buf, count / 2);
        }
    }
    return real(fd, buf, count);
}
