/* engine/cli/util/file.h — the one way the `polis` program opens a file it reads (file.c):
 * scenarios and sweep specs read whole, sweep results, recordings read line by line (plain or
 * gzip), and the recording `polis view` serves. Regular files only, refused without blocking
 * (a FIFO, a device such as /dev/zero, a directory or a socket), sizes bounded where the
 * format allows, and a gzip stream read to its end: a line over the limit (a gzip bomb),
 * a stream cut off or damaged, and bytes after the stream are refused naming the line.
 * docs/security.md ("Files") lists the limits. Part of the CLI, not of libpolis. */
#ifndef POLIS_CLI_FILE_H
#define POLIS_CLI_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file read whole (a scenario, a sweep spec): the engine's limit for scenario files. */
#define CLI_FILE_TEXT_MAX ((int64_t)64 << 20)
/* A sweep's results file, read whole by --resume and the summary. */
#define CLI_FILE_RESULTS_MAX ((int64_t)1 << 30)
/* One line of a recording, after gunzipping (docs/recording.md, "Limits"). */
#define CLI_RECORDING_MAX_LINE ((size_t)64 << 20)

/* Opens path for reading: a regular file of at most max bytes (max <= 0: any size), checked
 * on the open descriptor before a byte is read. Returns the descriptor (close it), or -1
 * with the reason in why ("not a regular file (a FIFO)", "76 MiB is over the limit of 64
 * MiB", strerror's text; errno is open's when it failed). */
int cli_file_open(const char *path, int64_t max, char *why, size_t cap);

/* The whole of the regular file path, NUL-terminated (free it), its length in *len (may be
 * NULL); a file that grows beyond max while it is read is refused too. NULL with the reason in
 * why. */
char *cli_file_read(const char *path, int64_t max, size_t *len, char *why, size_t cap);

/* A recording read line by line; gzip when it starts with gzip's magic bytes (1f 8b), where
 * gzip members may follow one another (as `cat a.gz b.gz` makes) but nothing else may. */
typedef struct cli_lines cli_lines;

/* NULL with the reason in why. */
cli_lines *cli_lines_open(const char *path, size_t max_line, char *why, size_t cap);
/* The next line, without its '\n' and NUL-terminated, in *line (valid until the next call)
 * and *len: 1; 0 at the end of the file; -1 when the file ends inside a line (*line holds
 * what there is); -2 on an error (cli_lines_error: "line N: <reason>"). */
int cli_lines_next(cli_lines *r, char **line, size_t *len);
/* Lines returned so far (the number of the line just returned). */
int64_t cli_lines_number(const cli_lines *r);
const char *cli_lines_error(const cli_lines *r);
void cli_lines_close(cli_lines *r);

#endif
