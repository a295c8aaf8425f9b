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

POLIS_API_END
#endif
