/*
 * polis/pixels.h — frames: the current scene drawn as RGB pixels, as the browser viewer
 * draws it (docs/kernel.md, "Pixels"). Built only on the public API (polis/scene.h): link
 * libpolis-pixels (pkg-config polis-pixels, CMake polis::pixels) beside libpolis.
 *
 * Errors are reported through the env (polis_env_error), like the kernel's own calls.
 */
#ifndef POLIS_PIXELS_H
#define POLIS_PIXELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"
#include "polis/scene.h"

POLIS_API_BEGIN

/* The current scene as an RGB frame (3 bytes a pixel, rows top to bottom), drawn
 * like the browser viewer (sdk/viewer/draw.js): tile layers in order then things, each in
 * its kind's colour and shape, then agents (a disc in the agent's own colour,
 * polis_pixels_agent_rgb, with a black facing mark; a black cross when dead). Cells are cell_px
 * pixels square (1 to 64); from 10 px on, a faint grid marks the cells. agent = -1 draws the
 * whole scene map; agent A draws A's view window, (2 rx + 1) x (2 ry + 1) cells centred on A
 * (cells off the map in the background colour), when the game registered a view, and the
 * whole map otherwise. polis_pixels_size gives the frame's size without drawing;
 * polis_pixels_draw draws into out (cap bytes, at least w * h * 3: POLIS_ERR_LIMIT
 * otherwise) and allocates nothing once the scene buffers exist (after the first
 * polis_env_scene_get). POLIS_ERR_INVALID for a bad agent or cell_px or a game without a
 * scene map; the errors of polis_env_scene_get (no episode yet). *w and *h are set on
 * success and on a too-small buffer, 0 for bad arguments. docs/kernel.md, "Pixels". */
polis_status polis_pixels_size(polis_env *env, int32_t agent, int32_t cell_px, int32_t *w,
                               int32_t *h);
polis_status polis_pixels_draw(polis_env *env, int32_t agent, int32_t cell_px, uint8_t *out,
                               size_t cap, int32_t *w, int32_t *h);
/* polis_pixels_draw with flags (0: the same frame). POLIS_PIXELS_GLYPHS: a kind whose
 * glyph is one printable ASCII character (' ' to '~') is drawn as that glyph in its colour,
 * from a built-in 5 x 7 pixel font scaled to cell_px / 8 pixels a font pixel and centred in
 * the cell (the viewer's "glyphs" box draws the same pixels), instead of its shape; other
 * glyphs, and every glyph in cells under 8 px, keep the shape. POLIS_ERR_INVALID for an
 * unknown flag. docs/kernel.md, "Pixels". */
#define POLIS_PIXELS_GLYPHS 1u
polis_status polis_pixels_draw_ex(polis_env *env, int32_t agent, int32_t cell_px, uint32_t flags,
                                  uint8_t *out, size_t cap, int32_t *w, int32_t *h);
/* The agent colours of frames and of the viewer, {r, g, b}: polis_pixels_palette gives entry
 * i of the base list of 16 (repeating; NULL for i < 0). A frame of a game skips the colours
 * that look like one of its kinds (a redmean RGB distance under 120), putting them last:
 * polis_pixels_agent_rgb gives agent i's colour in env's frames (NULL for i < 0 or no env). */
const uint8_t *polis_pixels_palette(int32_t i);
const uint8_t *polis_pixels_agent_rgb(const polis_env *env, int32_t agent);

/* ---- pixel observations (since 0.8; docs/kernel.md, "Pixel observations") ---- */

/* What an agent's pixel observation holds. The frame is the agent's view window as
 * polis_pixels_draw draws it (agents it may not see, polis/visibility.h, are left out), cells
 * of cell_px pixels (1 to 64), and under it, unless no_stats, the agent's stats (look_stat)
 * in rows as wide as the view: stat k in cell k, its value filling a share value / max of the
 * cell's pixels from the bottom up (the value itself up to a whole cell when max is 0), in
 * the colour of the kind named like the stat, else the base agent colour k, on black.
 * Survival at cell_px 7 is Craftax-Classic-Pixels' frame: 9 x 7 cells of 7 px and two rows
 * of its 18 stats, 63 x 63 x 3. downscale (1: none; a divisor of cell_px) averages blocks of
 * downscale x downscale pixels; grey keeps one channel, the luma (299 R + 587 G + 114 B) /
 * 1000. flags: polis_pixels_draw_ex's (POLIS_PIXELS_GLYPHS). */
typedef struct polis_pixels_obs_opts {
    int32_t cell_px;
    int32_t downscale;
    bool grey;
    bool no_stats;
    uint32_t flags;
} polis_pixels_obs_opts;
/* agent for every agent's observation at once, [n_agents][h][w][channels]. */
#define POLIS_PIXELS_ALL_AGENTS (-1)
/* The observation's size, h rows of w pixels of `channels` bytes (1 with grey, else 3), and
 * the bytes polis_pixels_obs needs in out for `agent` (0 .. n_agents - 1, or
 * POLIS_PIXELS_ALL_AGENTS): the frame is drawn at full size in out and reduced in place, so
 * with downscale or grey `need` exceeds the observation's w * h * channels (for every agent,
 * (n_agents - 1) observations and one full frame). POLIS_ERR_INVALID for NULL opts, a bad
 * agent, cell_px, downscale or flag, or a game without a scene map. */
polis_status polis_pixels_obs_size(polis_env *env, int32_t agent, const polis_pixels_obs_opts *opts,
                                   int32_t *w, int32_t *h, int32_t *channels, size_t *need);
/* Writes agent's pixel observation (or every agent's, one after the other) at out (cap
 * bytes, at least polis_pixels_obs_size's need: POLIS_ERR_LIMIT naming both otherwise) from
 * one polis_env_scene_get, and allocates nothing once the scene buffers exist, so a training
 * loop calls it after every step. The same scene gives the same bytes on every machine. */
polis_status polis_pixels_obs(polis_env *env, int32_t agent, const polis_pixels_obs_opts *opts,
                              uint8_t *out, size_t cap);

POLIS_API_END
#endif
