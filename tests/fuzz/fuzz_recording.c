/* fuzz_recording — recordings someone sends (docs/recording.md, docs/security.md
 * "Recordings"), in process: each input is written to a file that `polis replay` reads through
 * the CLI's own replay command (engine/cli/cmd/replay.c with util/file.c, the one opener,
 * linked in as they are). The first byte says how: bit 0 gzips the rest (so the mutations stay
 * in the text and the gzip path is read too), bit 1 then appends a byte after the gzip stream,
 * bits 2-3 pick --verify, --tick 2 --render text, or --tick 1 --render json --agent 1. A
 * recording may hold anything: the replay reports a difference or a bad line with exit status
 * 1, or matches with 0; it never crashes, reads out of bounds or loads a plugin file the
 * recording names (there is no --trust here: plugins come from the plugin path only), and a
 * byte after the gzip stream is always refused. */
#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>

#include "fuzz.h"
#include "cmd/commands.h"

static char path[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_pin_plugins();
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_recording-%ld.jsonl", dir && *dir ? dir : "/tmp",
             (long)getpid());
    if (!freopen("/dev/null", "w", stdout)) {
        perror("fuzz_recording: /dev/null");
        abort();
    }
    setenv("POLIS_PLUGIN_PATH", POLIS_PLUGIN_DIR, 1);
    return 0;
}

/* data as one gzip member into a new buffer (free it); NULL when out of memory. */
static uint8_t *gzip_of(const uint8_t *data, size_t size, size_t *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t cap = deflateBound(&zs, (uLong)size) + 16;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&zs);
        return NULL;
    }
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)size;
    zs.next_out = buf;
    zs.avail_out = (uInt)cap;
    int z = deflate(&zs, Z_FINISH);
    *out = cap - zs.avail_out;
    deflateEnd(&zs);
    if (z != Z_STREAM_END) {
        free(buf);
        return NULL;
    }
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20)) return 0;
    uint8_t how = data[0];
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    uint8_t *gz = NULL;
    bool garbage = false;
    if (how & 1) {
        if (!(gz = gzip_of(body, n, &n))) return 0;
        garbage = how & 2;
        if (garbage) {
            uint8_t *more = realloc(gz, n + 1);
            if (!more) {
                free(gz);
                return 0;
            }
            gz = more;
            gz[n++] = 'x';
        }
        body = gz;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, body, n) != (ssize_t)n || close(fd) != 0) {
        perror("fuzz_recording: the input file");
        abort();
    }
    free(gz);
    char *verify[] = {"polis", "replay", path, "--plugin-path", POLIS_PLUGIN_DIR, NULL};
    char *text[] = {"polis",         "replay",         path, "--tick", "2", "--render", "text",
                    "--plugin-path", POLIS_PLUGIN_DIR, NULL};
    char *json[] = {"polis",          "replay", path,      "--tick", "1",
                    "--render",       "json",   "--agent", "1",      "--plugin-path",
                    POLIS_PLUGIN_DIR, NULL};
    char **argv = (how >> 2) % 3 == 0 ? verify : (how >> 2) % 3 == 1 ? text : json;
    int argc = 0;
    while (argv[argc]) argc++;
    int rc = cli_command_main(&CLI_CMD_REPLAY, argc, argv);
    FUZZ_ASSERT(rc == 0 || rc == 1);
    FUZZ_ASSERT(!garbage || rc == 1);
    unlink(path);
    return 0;
}
