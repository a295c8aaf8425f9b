/*
 * engine/cli/session/frames.c — the frames of `polis replay --png/--video`, `polis record --video`
 * and `polis render --png` (docs/recording.md): a PNG through libpng's simplified API
 * (optional at build: POLIS_HAVE_PNG), a PPM without it, and videos by piping raw rgb24
 * frames into ffmpeg's stdin. ffmpeg is looked up on PATH when the video starts; without it
 * the frames are written as numbered images into a directory and the caller says so.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if POLIS_HAVE_PNG
#include <png.h>
#endif

#include "session/frames.h"

static int errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

bool cli_frames_have_png(void) { return POLIS_HAVE_PNG; }

bool cli_check_png(const char *value, char *why, size_t cap)
{
    (void)value;
    if (POLIS_HAVE_PNG) return true;
    snprintf(why, cap, "this polis was built without libpng (install libpng-dev and rebuild)");
    return false;
}

bool cli_check_video(const char *value, char *why, size_t cap)
{
    if (cli_video_kind(value) >= 0) return true;
    snprintf(why, cap,
             "'%s' is not OUT.mp4, OUT.gif or a directory (a name ending in '/' or without a "
             "'.')",
             value);
    return false;
}

static int write_ppm(const char *path, const uint8_t *rgb, int32_t w, int32_t h, char *err,
                     size_t cap)
{
    FILE *f = fopen(path, "wb");
    if (!f) return errf(err, cap, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "P6\n%d %d\n255\n", (int)w, (int)h);
    size_t n = (size_t)w * (size_t)h * 3;
    bool ok = fwrite(rgb, 1, n, f) == n;
    if (fclose(f) != 0) ok = false;
    if (!ok) return errf(err, cap, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

int cli_frames_write_image(const char *path, const uint8_t *rgb, int32_t w, int32_t h, bool ppm,
                           char *err, size_t errcap)
{
#if POLIS_HAVE_PNG
    if (!ppm) {
        png_image img;
        memset(&img, 0, sizeof img);
        img.version = PNG_IMAGE_VERSION;
        img.width = (png_uint_32)w;
        img.height = (png_uint_32)h;
        img.format = PNG_FORMAT_RGB;
        if (!png_image_write_to_file(&img, path, 0, rgb, 0, NULL)) {
            int rc = errf(err, errcap, "cannot write %s: %s", path, img.message);
            png_image_free(&img);
            return rc;
        }
        return 0;
    }
#else
    if (!ppm)
        return errf(err, errcap,
                    "cannot write %s: this polis was built without libpng "
                    "(install libpng-dev and rebuild)",
                    path);
#endif
    return write_ppm(path, rgb, w, h, err, errcap);
}

bool cli_frames_find_ffmpeg(char *out, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path) return false;
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && n + sizeof "/ffmpeg" <= cap) {
            memcpy(out, p, n);
            memcpy(out + n, "/ffmpeg", sizeof "/ffmpeg");
            if (access(out, X_OK) == 0) return true;
        }
        if (!end) break;
        p = end + 1;
    }
    return false;
}

/* s in single quotes for sh ('\'' for a quote inside); false if it does not fit. */
static bool shell_quote(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    if (cap < 3) return false;
    out[o++] = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            if (o + 4 >= cap) return false;
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            if (o + 1 >= cap) return false;
            out[o++] = *s;
        }
    }
    if (o + 2 > cap) return false;
    out[o++] = '\'';
    out[o] = '\0';
    return true;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

int cli_video_kind(const char *path)
{
    if (ends_with(path, ".mp4") || ends_with(path, ".gif")) return 1;
    struct stat sb;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) || !strchr(base, '.')) return 0;
    return -1;
}

int cli_video_open(cli_video *v, const char *path, int32_t w, int32_t h, int32_t fps,
                   bool *fallback, char *err, size_t errcap)
{
    memset(v, 0, sizeof *v);
    v->w = w;
    v->h = h;
    *fallback = false;
    bool gif = ends_with(path, ".gif");
    int kind = cli_video_kind(path);
    if (kind < 0) return errf(err, errcap, "--video %s: the name must end in .mp4 or .gif", path);
    char ffmpeg[4096];
    if (kind == 0 || !cli_frames_find_ffmpeg(ffmpeg, sizeof ffmpeg)) {
        *fallback = kind == 1;
        v->ppm = !cli_frames_have_png();
        if ((size_t)snprintf(v->dir, sizeof v->dir, kind ? "%s.frames" : "%s", path) >=
            sizeof v->dir)
            return errf(err, errcap, "--video %s: the name is too long", path);
        if (mkdir(v->dir, 0777) != 0 && errno != EEXIST)
            return errf(err, errcap, "cannot create %s: %s", v->dir, strerror(errno));
        return 0;
    }
    char qprog[8300], qpath[8300], cmd[17000];
    if (!shell_quote(qprog, sizeof qprog, ffmpeg) || !shell_quote(qpath, sizeof qpath, path))
        return errf(err, errcap, "--video %s: the name is too long", path);
    /* mp4: yuv420p wants even sizes; gif: a palette made from the frames themselves */
    snprintf(cmd, sizeof cmd,
             "%s -hide_banner -loglevel error -nostdin -y -f rawvideo -pix_fmt rgb24 -s %dx%d "
             "-framerate %d -i - %s %s",
             qprog, (int)w, (int)h, (int)fps,
             gif ? "-filter_complex 'split[a][b];[a]palettegen=reserve_transparent=0[p];"
                   "[b][p]paletteuse=dither=none'"
                 : "-vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt yuv420p",
             qpath);
    /* a dying ffmpeg must fail a write, not kill polis */
    signal(SIGPIPE, SIG_IGN);
    v->pipe = popen(cmd, "w");
    if (!v->pipe) return errf(err, errcap, "cannot start %s: %s", ffmpeg, strerror(errno));
    return 0;
}

int cli_video_frame(cli_video *v, const uint8_t *rgb, char *err, size_t errcap)
{
    size_t n = (size_t)v->w * (size_t)v->h * 3;
    if (v->pipe) {
        if (fwrite(rgb, 1, n, v->pipe) != n) {
            /* ffmpeg quit: its exit status says why (its messages are on stderr) */
            int e = errno, st = pclose(v->pipe);
            v->pipe = NULL;
            if (st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                return errf(err, errcap,
                            "ffmpeg failed at frame %lld (exit status %d; its messages are "
                            "above)",
                            (long long)v->frames,
                            WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            return errf(err, errcap, "ffmpeg stopped reading frames (frame %lld): %s",
                        (long long)v->frames, strerror(e));
        }
    } else {
        char file[4200];
        snprintf(file, sizeof file, "%s/frame-%06lld.%s", v->dir, (long long)v->frames,
                 v->ppm ? "ppm" : "png");
        if (cli_frames_write_image(file, rgb, v->w, v->h, v->ppm, err, errcap)) return -1;
    }
    v->frames++;
    return 0;
}

int cli_video_close(cli_video *v, char *err, size_t errcap)
{
    if (!v->pipe) return 0;
    int st = pclose(v->pipe);
    v->pipe = NULL;
    if (st == -1) return errf(err, errcap, "ffmpeg: %s", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return errf(err, errcap, "ffmpeg failed (exit status %d; its messages are above)",
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return 0;
}

/* ---- frames of an env being played ------------------------------------------------------- */

int cli_frames_draw(cli_frames *fr, polis_env *env, char *err, size_t errcap)
{
    if (!fr->rgb) {
        if (polis_pixels_size(env, fr->agent, fr->cell, &fr->w, &fr->h) != POLIS_OK)
            return errf(err, errcap, "%s", polis_env_error(env));
        fr->rgb = malloc((size_t)fr->w * (size_t)fr->h * 3);
        if (!fr->rgb) return errf(err, errcap, "out of memory (a %d x %d frame)", fr->w, fr->h);
    }
    int32_t w = 0, h = 0;
    if (polis_pixels_draw_ex(env, fr->agent, fr->cell, fr->flags, fr->rgb,
                             (size_t)fr->w * (size_t)fr->h * 3, &w, &h) != POLIS_OK)
        return errf(err, errcap, "%s", polis_env_error(env));
    return 0;
}

int cli_frames_add(cli_frames *fr, polis_env *env, char *err, size_t errcap)
{
    if (cli_frames_draw(fr, env, err, errcap)) return -1;
    if (!fr->open) {
        if (cli_video_open(&fr->v, fr->video, fr->w, fr->h, fr->fps, &fr->fallback, err, errcap))
            return -1;
        fr->open = true;
    }
    return cli_video_frame(&fr->v, fr->rgb, err, errcap);
}

int cli_frames_finish(cli_frames *fr, char *err, size_t errcap)
{
    int rc = 0;
    if (fr->open) rc = cli_video_close(&fr->v, err, errcap);
    fr->open = false;
    free(fr->rgb);
    fr->rgb = NULL;
    return rc;
}
