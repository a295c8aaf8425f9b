/* fuzz_protocol — request lines of the agent protocol (`polis serve`, docs/clients.md), in
 * process: each input is a client's whole stdin for `polis serve SCENARIO --stdio`, run
 * through the CLI's own cli_serve_main (engine/cli/cmd/serve.c, linked in as it is), with
 * stdout going to /dev/null. The first byte picks the scenario (gather, exploration with
 * macros and plans, commons in Lua) and --on-bad-action; the rest are the lines. A client may send
 * anything: the server answers every line, never crashes or reads out of bounds, and returns 0 when
 * the client closes. */
#include <fcntl.h>
#include <unistd.h>

#include "fuzz.h"
#include "cmd/commands.h"

static const char *const SCENARIOS[] = {
    POLIS_SOURCE_DIR "/rulesets/gather/gather.json",
    POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json",
    POLIS_SOURCE_DIR "/rulesets/commons/commons_open.json",
};
#define N_SCENARIOS (sizeof SCENARIOS / sizeof *SCENARIOS)

static int input_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pin_plugins();
    /* The session reads stdin: make fd 0 a temporary file each input is written to. */
    FILE *tmp = tmpfile();
    if (!tmp || (input_fd = dup(fileno(tmp))) < 0) {
        perror("fuzz_protocol: tmpfile");
        abort();
    }
    fclose(tmp);
    if (!freopen("/dev/null", "w", stdout)) {
        perror("fuzz_protocol: /dev/null");
        abort();
    }
    setenv("POLIS_PLUGIN_PATH", POLIS_PLUGIN_DIR, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (ftruncate(input_fd, 0) != 0 ||
        pwrite(input_fd, data + 1, size - 1, 0) != (ssize_t)(size - 1) ||
        dup2(input_fd, STDIN_FILENO) < 0) {
        perror("fuzz_protocol: stdin");
        abort();
    }
    clearerr(stdin);
    if (fseek(stdin, 0, SEEK_SET) != 0) abort(); /* drops what stdio buffered last time */
    /* The first byte also picks what a bad action becomes: refused, or noop. */
    char *argv[] = {"polis",
                    "serve",
                    (char *)SCENARIOS[data[0] % N_SCENARIOS],
                    "--stdio",
                    "--plugin-path",
                    POLIS_PLUGIN_DIR,
                    "--on-bad-action",
                    data[0] / N_SCENARIOS % 2 ? "noop" : "error",
                    NULL};
    int rc = cli_serve_main(8, argv);
    FUZZ_ASSERT(rc == 0);
    return 0;
}
