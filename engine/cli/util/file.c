/*
 * engine/cli/util/file.c — the one opener of the `polis` program (file.h).
 *
 * A file is opened with O_NONBLOCK, so opening a FIFO does not wait for a writer, and its
 * type and size are taken from the open descriptor (fstat), so nothing changes between the
 * check and the read. A recording's gzip stream is inflated here rather than through gzread,
 * which ignores whatever follows the stream: after each member only another member may
 * follow. Lines are assembled in a buffer that never holds more than one line over the
 * limit's worth, so a small gzip file declaring a huge line costs the limit, not the line.
 */
#define _POSIX_C_SOURCE 200809L
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

static const char *kind_of(mode_t m)
{
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISSOCK(m)) return "a socket";
    return "not a file";
}

/* "64 MiB", "1 GiB", "1000 bytes" */
static void size_text(int64_t n, char *out, size_t cap)
{
    if (n >= ((int64_t)1 << 30) && n % ((int64_t)1 << 30) == 0)
        snprintf(out, cap, "%" PRId64 " GiB", n >> 30);
    else if (n >= ((int64_t)1 << 20))
        snprintf(out, cap, "%" PRId64 " MiB", (n + (((int64_t)1 << 20) - 1)) >> 20);
    else
        snprintf(out, cap, "%" PRId64 " bytes", n);
}

static void too_big(int64_t size, int64_t max, char *why, size_t cap)
{
    char a[32], b[32];
    size_text(size, a, sizeof a);
    size_text(max, b, sizeof b);
    snprintf(why, cap, "%s is over the limit of %s", a, b);
}

int cli_file_open(const char *path, int64_t max, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, cap, "%s", strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, cap, "not a regular file (%s)", kind_of(st.st_mode));
        close(fd);
        return -1;
    }
    if (max > 0 && (int64_t)st.st_size > max) {
        too_big((int64_t)st.st_size, max, why, cap);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

char *cli_file_read(const char *path, int64_t max, size_t *len, char *why, size_t cap)
{
    int fd = cli_file_open(path, max, why, cap);
    if (fd < 0) return NULL;
    struct stat st;
    size_t size = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
    size_t bufcap = size + 4096, n = 0;
    char *buf = malloc(bufcap);
    for (;;) {
        if (!buf) {
            snprintf(why, cap, "out of memory");
            break;
        }
        if (n + 1 >= bufcap) {
            char *p = realloc(buf, bufcap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = p;
            bufcap *= 2;
        }
        ssize_t r = read(fd, buf + n, bufcap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, cap, "%s", strerror(errno));
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (max > 0 && (int64_t)n > max) { /* it grew while read */
            too_big((int64_t)n, max, why, cap);
            free(buf);
            buf = NULL;
            break;
        }
    }
    close(fd);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* ---- recordings, line by line ------------------------------------------------------------ */

enum { RAW_CHUNK = 64 * 1024 };

struct cli_lines {
    int fd;
    bool gz, gz_end; /* gzip; the current member has ended */
    bool eof;        /* no more bytes will come */
    z_stream zs;
    bool zs_live;
    unsigned char raw[RAW_CHUNK];
    size_t raw_len, raw_pos; /* plain text: what read() gave, not yet moved into buf */
    char *buf;               /* text not yet returned: [pos, len) */
    size_t pos, len, cap;
    size_t max_line;
    int64_t line;
    char error[512];
};

#if defined(__GNUC__)
static int lines_fail(cli_lines *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
static int lines_fail(cli_lines *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->error, sizeof r->error, "line %" PRId64 ": %s", r->line + 1, msg);
    return -2;
}

/* More raw bytes into r->raw (r->raw_len, from 0). 0 at the end, -1 on an error. */
static int read_raw(cli_lines *r)
{
    for (;;) {
        ssize_t n = read(r->fd, r->raw, sizeof r->raw);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        r->raw_len = (size_t)n;
        r->raw_pos = 0;
        return n > 0;
    }
}

/* Room for at least `want` more bytes at the end of buf, moving what is left to the start. */
static bool make_room(cli_lines *r, size_t want)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->len >= want + 1) return true;
    size_t cap = r->cap ? r->cap : RAW_CHUNK;
    while (cap - r->len < want + 1) cap *= 2;
    char *p = realloc(r->buf, cap);
    if (!p) return false;
    r->buf = p;
    r->cap = cap;
    return true;
}

/* Appends more text to buf. 1 more came, 0 the end of the file, -2 an error (said). */
static int fill(cli_lines *r)
{
    if (r->eof) return 0;
    if (!make_room(r, RAW_CHUNK)) return lines_fail(r, "out of memory");
    if (!r->gz) {
        int got = read_raw(r);
        if (got < 0) return lines_fail(r, "cannot read the file: %s", strerror(errno));
        if (got == 0) {
            r->eof = true;
            return 0;
        }
        memcpy(r->buf + r->len, r->raw, r->raw_len);
        r->len += r->raw_len;
        r->raw_len = 0;
        return 1;
    }
    for (;;) {
        if (r->zs.avail_in == 0) {
            int got = read_raw(r);
            if (got < 0) return lines_fail(r, "cannot read the file: %s", strerror(errno));
            if (got == 0) {
                r->eof = true;
                if (!r->gz_end)
                    return lines_fail(r, "the gzip stream ends early: the file is cut off");
                return 0;
            }
            r->zs.next_in = r->raw;
            r->zs.avail_in = (uInt)r->raw_len;
        }
        if (r->gz_end) {
            /* after a member only another member may follow */
            if (r->zs.next_in[0] != 0x1f || (r->zs.avail_in > 1 && r->zs.next_in[1] != 0x8b))
                return lines_fail(r, "bytes after the end of the gzip stream (trailing "
                                     "garbage): not a recording polis wrote");
            inflateReset(&r->zs);
            r->gz_end = false;
        }
        size_t room = r->cap - r->len - 1;
        r->zs.next_out = (Bytef *)(r->buf + r->len);
        r->zs.avail_out = (uInt)(room > UINT32_MAX ? UINT32_MAX : room);
        uInt before = r->zs.avail_out;
        int z = inflate(&r->zs, Z_NO_FLUSH);
        size_t made = before - r->zs.avail_out;
        r->len += made;
        if (z == Z_STREAM_END) {
            r->gz_end = true;
        } else if (z == Z_NEED_DICT || z == Z_DATA_ERROR || z == Z_MEM_ERROR) {
            return lines_fail(r, "the gzip stream is damaged (%s)",
                              r->zs.msg          ? r->zs.msg
                              : z == Z_MEM_ERROR ? "out of memory"
                                                 : "bad data");
        } else if (z == Z_BUF_ERROR && made == 0 && r->zs.avail_in != 0) {
            return lines_fail(r, "the gzip stream is damaged");
        }
        if (made > 0) return 1;
    }
}

cli_lines *cli_lines_open(const char *path, size_t max_line, char *why, size_t cap)
{
    int fd = cli_file_open(path, 0, why, cap);
    if (fd < 0) return NULL;
    cli_lines *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, cap, "out of memory");
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->max_line = max_line;
    int got = read_raw(r);
    if (got < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        cli_lines_close(r);
        return NULL;
    }
    if (r->raw_len >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b) {
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK) {
            snprintf(why, cap, "out of memory");
            cli_lines_close(r);
            return NULL;
        }
        r->zs_live = true;
        r->gz = true;
        r->zs.next_in = r->raw;
        r->zs.avail_in = (uInt)r->raw_len;
    } else if (r->raw_len > 0) {
        if (!make_room(r, r->raw_len)) {
            snprintf(why, cap, "out of memory");
            cli_lines_close(r);
            return NULL;
        }
        memcpy(r->buf, r->raw, r->raw_len);
        r->len = r->raw_len;
    } else {
        r->eof = true;
    }
    return r;
}

int cli_lines_next(cli_lines *r, char **line, size_t *len)
{
    size_t scanned = 0; /* bytes of buf[pos..] known to hold no '\n' */
    for (;;) {
        char *start = r->buf ? r->buf + r->pos : NULL;
        size_t have = r->len - r->pos;
        char *nl = have > scanned ? memchr(start + scanned, '\n', have - scanned) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - start);
            if (n > r->max_line) break;
            *nl = '\0';
            r->pos += n + 1;
            r->line++;
            *line = start;
            *len = n;
            return 1;
        }
        scanned = have;
        if (have > r->max_line) break;
        int got = fill(r);
        if (got == -2) return -2;
        if (got == 0) {
            have = r->len - r->pos;
            if (have == 0) return 0;
            if (!make_room(r, 0)) return lines_fail(r, "out of memory");
            r->buf[r->len] = '\0';
            *line = r->buf;
            *len = have;
            r->pos = r->len;
            r->line++;
            return -1;
        }
    }
    char lim[32];
    size_text((int64_t)r->max_line, lim, sizeof lim);
    return lines_fail(r,
                      "the line is longer than the limit of %s (a damaged file, or a gzip "
                      "bomb)",
                      lim);
}

int64_t cli_lines_number(const cli_lines *r) { return r->line; }

const char *cli_lines_error(const cli_lines *r) { return r->error; }

void cli_lines_close(cli_lines *r)
{
    if (!r) return;
    if (r->zs_live) inflateEnd(&r->zs);
    if (r->fd >= 0) close(r->fd);
    free(r->buf);
    free(r);
}
