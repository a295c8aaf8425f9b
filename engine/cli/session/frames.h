/* engine/cli/session/frames.h — writing the frames of polis_pixels_draw: one PNG (libpng,
 * when polis was built with it), or a video by piping raw frames to ffmpeg, or, without ffmpeg or
 * when asked, numbered image files in a directory (frames.c). Part of the CLI, not of
 * libpolis. */
#ifndef POLIS_CLI_FRAMES_H
#define POLIS_CLI_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "polis/polis.h"

/* Whether this polis writes PNG files (built with libpng). */
bool cli_frames_have_png(void);

/* Checks of the --png and --video values (cli_use.check): this polis writes PNG files; a
 * --video name is a video or a directory (cli_video_kind). */
bool cli_check_png(const char *value, char *why, size_t cap);
bool cli_check_video(const char *value, char *why, size_t cap);

/* Writes w x h RGB pixels (3 bytes each, rows top to bottom) to path: PNG when built with
 * libpng and `ppm` is false, binary PPM (P6) otherwise. 0 on success; -1 with a message in
 * err otherwise. */
int cli_frames_write_image(const char *path, const uint8_t *rgb, int32_t w, int32_t h, bool ppm,
                           char *err, size_t errcap);

/* A video being written: through ffmpeg (`pipe`) or as numbered images in `dir`. */
typedef struct cli_video {
    FILE *pipe;
    char dir[4096];
    bool ppm;
    int32_t w, h;
    int64_t frames;
} cli_video;

/* The ffmpeg program on PATH ("/usr/bin/ffmpeg"), or false when there is none. */
bool cli_frames_find_ffmpeg(char *out, size_t cap);

/* What a --video name asks for: 1 a video (.mp4 or .gif), 0 a directory of frames (a name
 * ending in '/', an existing directory, or a last component without a '.'), -1 neither
 * (another extension: refused). */
int cli_video_kind(const char *path);

/* Starts a video of w x h frames at fps into path (.mp4 or .gif, by its name). With ffmpeg:
 * frames go to its stdin. Without: into the directory "<path>.frames/" (created; numbered
 * frame-000000.png, or .ppm without libpng), and *fallback is set. A directory name
 * (cli_video_kind 0): the numbered frames go there (created when missing), ffmpeg or not.
 * 0 or -1 with err. */
int cli_video_open(cli_video *v, const char *path, int32_t w, int32_t h, int32_t fps,
                   bool *fallback, char *err, size_t errcap);
int cli_video_frame(cli_video *v, const uint8_t *rgb, char *err, size_t errcap);
/* Finishes the video (waits for ffmpeg: its failure is an error). 0 or -1 with err. */
int cli_video_close(cli_video *v, char *err, size_t errcap);

/* The frames of an env being played (`polis record --video`, `polis render --png`): what to
 * draw, the frame buffer (allocated by the first cli_frames_draw) and the video. */
typedef struct cli_frames {
    int32_t agent;  /* -1: the whole map, else that agent's view */
    int32_t cell;   /* pixels per cell */
    uint32_t flags; /* of polis_pixels_draw_ex (POLIS_PIXELS_GLYPHS) */
    int32_t fps;
    const char *video; /* NULL: no video */
    uint8_t *rgb;
    int32_t w, h;
    cli_video v;
    bool open, fallback;
} cli_frames;

/* Draws env's current scene into fr->rgb. 0 or -1 with err (the env's message). */
int cli_frames_draw(cli_frames *fr, polis_env *env, char *err, size_t errcap);
/* Draws the current scene and adds it to the video (opened by the first frame). */
int cli_frames_add(cli_frames *fr, polis_env *env, char *err, size_t errcap);
/* Finishes the video (when one was started) and frees the buffer. 0 or -1 with err. */
int cli_frames_finish(cli_frames *fr, char *err, size_t errcap);

#endif
