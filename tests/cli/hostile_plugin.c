/*
 * tests/cli/hostile_plugin.c — a shared object that is not a polis plugin and runs code the
 * moment it is loaded: its constructor creates the file named by $POLIS_TEST_MARKER. A
 * recording whose header names it stands for one a stranger sends; tests/cli/files.sh checks
 * that `polis replay` never loads it without --trust (docs/security.md, "Recordings").
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void hostile_ran(void)
{
    const char *marker = getenv("POLIS_TEST_MARKER");
    if (!marker) return;
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
}
