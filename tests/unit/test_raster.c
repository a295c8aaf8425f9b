/* test_raster.c — pixels (polis_pixels_draw): frames of the look_probe scene checked pixel
 * by pixel against the scene (tiles in their kind's colour and shape, things, agents in
 * their own colours with the facing mark, the view window with off-map cells), every refused
 * argument with its message, and no allocation per frame; with POLIS_PIXELS_GLYPHS, ASCII
 * glyphs from the built-in font in place of the shapes. */
#include <stdlib.h>

#include "check.h"
#include "testutil.h"

static polis_env *probe_env(test_alloc *alloc)
{
    return test_env("{\"agents\": 2, \"max_steps\": 20, \"plugins\": [{\"name\": \"look_probe\"}]}",
                    NULL, alloc);
}

static const uint8_t SAND[3] = {0xe8, 0xd9, 0xa0}, ROCK[3] = {0x55, 0x55, 0x55},
                     EMPTY[3] = {0x0e, 0x0f, 0x12}, OFFMAP[3] = {0x05, 0x06, 0x0a},
                     BLACK[3] = {0, 0, 0};

/* Whether pixel (x, y) of a w-wide frame is rgb; reports the pixel when it is not. */
static bool px_is(const uint8_t *f, int32_t w, int32_t x, int32_t y, const uint8_t rgb[3])
{
    const uint8_t *p = f + ((size_t)y * (size_t)w + (size_t)x) * 3;
    if (p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2]) return true;
    fprintf(stderr, "pixel (%d, %d) is #%02x%02x%02x, want #%02x%02x%02x\n", (int)x, (int)y, p[0],
            p[1], p[2], rgb[0], rgb[1], rgb[2]);
    return false;
}

static void test_map(void)
{
    test_alloc alloc = {0};
    polis_env *env = probe_env(&alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    int32_t w = -1, h = -1;
    const int32_t c = 20;
    CHECK_EQ_INT(polis_pixels_size(env, -1, c, &w, &h), POLIS_OK);
    CHECK_EQ_INT(w, 6 * c);
    CHECK_EQ_INT(h, 4 * c);
    size_t cap = (size_t)w * (size_t)h * 3;
    uint8_t *f = malloc(cap), *g = malloc(cap);
    CHECK(f && g);
    if (!f || !g) return;
    CHECK_EQ_INT(polis_pixels_draw(env, -1, c, f, cap, &w, &h), POLIS_OK);
    /* (3, 2) is sand: a square filling the cell (its first row and column carry the grid) */
    CHECK(px_is(f, w, 3 * c + c / 2, 2 * c + c / 2, SAND));
    CHECK(px_is(f, w, 3 * c + 1, 2 * c + 1, SAND));
    CHECK(px_is(f, w, 3 * c + c - 1, 2 * c + c - 1, SAND));
    /* the grid: white at 6% (15/255, rounded down as the canvas does) over sand */
    const uint8_t sand_grid[3] = {0xe8 + 1, 0xd9 + 2, 0xa0 + 5};
    CHECK(px_is(f, w, 3 * c, 2 * c + 5, sand_grid));
    /* where a grid row and column cross: blended twice */
    uint8_t cross[3];
    for (int i = 0; i < 3; i++)
        cross[i] = (uint8_t)(sand_grid[i] + (255 - sand_grid[i]) * 15 / 255);
    CHECK(px_is(f, w, 3 * c, 2 * c, cross));
    /* (2, 2) is rock: a triangle, the cell's empty colour around it */
    CHECK(px_is(f, w, 2 * c + c / 2, 2 * c + c / 2, ROCK));
    CHECK(px_is(f, w, 2 * c + 2, 2 * c + 2, EMPTY));
    CHECK(px_is(f, w, 2 * c + c - 3, 2 * c + 3, EMPTY));
    CHECK(px_is(f, w, 2 * c + c / 2, 2 * c + 6, ROCK)); /* near the apex, inside its dark edge */
    /* things: a rock per agent at (agent, 0), drawn over the sand of (1, 0) */
    CHECK(px_is(f, w, 1 * c + c / 2, c / 2, ROCK));
    CHECK(px_is(f, w, 1 * c + 2, 2, SAND));
    /* agents at (agent, 1) in their own colours, facing right: the mark is on the right */
    for (int32_t a = 0; a < 2; a++) {
        const uint8_t *col = polis_pixels_agent_rgb(env, a);
        CHECK(px_is(f, w, a * c + c / 2, c + c / 2, col));
        CHECK(px_is(f, w, a * c + 3, c + c / 2, col));
        CHECK(px_is(f, w, a * c + 17, c + c / 2, BLACK));
    }
    CHECK(polis_pixels_palette(0)[0] == 0xff && polis_pixels_palette(1)[2] == 0xff);
    CHECK(polis_pixels_palette(-1) == NULL);
    CHECK(polis_pixels_palette(16) == polis_pixels_palette(0));
    /* the env's palette is the base list without colours near a kind's, so its agents keep
     * colours of the base list and never one closer than 120 to a kind */
    for (int32_t a = 0; a < 16; a++) {
        const uint8_t *col = polis_pixels_agent_rgb(env, a);
        bool base = false;
        for (int32_t b = 0; b < 16; b++) base = base || polis_pixels_palette(b) == col;
        CHECK(base);
    }
    CHECK(polis_pixels_agent_rgb(env, -1) == NULL && polis_pixels_agent_rgb(NULL, 0) == NULL);
    /* the same scene gives the same frame; no allocation per step and frame */
    CHECK_EQ_INT(polis_pixels_draw(env, -1, c, g, cap, NULL, NULL), POLIS_OK);
    CHECK(memcmp(f, g, cap) == 0);
    long before = alloc.calls;
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_pixels_draw(env, -1, c, f, cap, &w, &h), POLIS_OK);
        CHECK_EQ_INT(polis_pixels_draw(env, 1, 7, g, cap, &w, &h), POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, before);
    /* small cells: no grid, the shapes still at their centres */
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 4, f, cap, &w, &h), POLIS_OK);
    CHECK_EQ_INT(w, 24);
    CHECK(px_is(f, w, 3 * 4, 2 * 4, SAND));
    CHECK(px_is(f, w, 0 * 4 + 1, 1 * 4 + 1, polis_pixels_agent_rgb(env, 0)));
    free(f);
    free(g);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
}

/* Agent 1 at (1, 1) with a 1 x 2 view: cells x 0..2, y -1..3, the top row off the map. */
static void test_view(void)
{
    polis_env *env = probe_env(NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const int32_t c = 8;
    int32_t w = 0, h = 0;
    uint8_t f[3 * 8 * 5 * 8 * 3];
    CHECK_EQ_INT(polis_pixels_draw(env, 1, c, f, sizeof f, &w, &h), POLIS_OK);
    CHECK_EQ_INT(w, 3 * c);
    CHECK_EQ_INT(h, 5 * c);
    CHECK(px_is(f, w, 0, 0, OFFMAP));
    CHECK(px_is(f, w, 2 * c + 4, 4, OFFMAP));
    CHECK(px_is(f, w, 1 * c + 4, 2 * c + 4, polis_pixels_palette(1))); /* the centre: agent 1 */
    CHECK(px_is(f, w, 0 * c + 4, 2 * c + 4, polis_pixels_palette(0))); /* on its left: agent 0 */
    CHECK(px_is(f, w, 2 * c + 4, 3 * c + 4, ROCK));                    /* (2, 2) */
    CHECK(px_is(f, w, 0 * c + 4, 4 * c + 4, SAND));                    /* (0, 3) */
    polis_env_destroy(env);
}

/* swap_probe terminates agent 0 in the sixth step: from then on a black cross lies over its disc,
 * whose outline and colour stay, and agent 1 is unchanged. */
static void test_dead(void)
{
    polis_env *env = test_env("{\"agents\": 2, \"max_steps\": 20, \"plugins\": "
                              "[\"look_probe\", \"swap_probe\"]}",
                              NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const int32_t c = 20;
    uint8_t f[6 * 20 * 4 * 20 * 3];
    int32_t w = 0, h = 0;
    /* agent 0 at (0, 1): its centre and a point on the cross's diagonal, off the centre */
    int32_t cx = c / 2, cy = c + c / 2, dx = 6, dy = c + 6;
    for (int t = 0; t < 6; t++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, c, f, sizeof f, &w, &h), POLIS_OK);
    const polis_scene *sc = NULL;
    CHECK_EQ_INT(polis_env_scene_get(env, &sc), POLIS_OK);
    if (!sc) return;
    CHECK_EQ_INT(sc->agents[0].alive, 0);
    CHECK_EQ_INT(sc->agents[1].alive, 1);
    CHECK(px_is(f, w, cx, cy, BLACK));
    CHECK(px_is(f, w, dx, dy, BLACK));
    CHECK(px_is(f, w, c / 2, c + 3, polis_pixels_palette(0))); /* above the centre, off the cross */
    CHECK(px_is(f, w, c + c / 2, c + c / 2, polis_pixels_palette(1)));
    polis_env_destroy(env);
}

static void test_errors(void)
{
    polis_env *env = probe_env(NULL);
    CHECK(env != NULL);
    if (!env) return;
    uint8_t buf[64];
    int32_t w = -1, h = -1;
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 1, buf, sizeof buf, &w, &h), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "pixels: the buffer holds 64 bytes, a 6 x 4 frame needs 72");
    CHECK_EQ_INT(w, 6);
    CHECK_EQ_INT(h, 4);
    uint8_t big[6 * 4 * 3];
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 1, big, sizeof big, &w, &h), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "scene: no episode yet; call reset first");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 1, big, sizeof big, &w, &h), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 0, big, sizeof big, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels: cell_px 0 is not 1 to 64");
    CHECK_EQ_INT(w, 0);
    CHECK_EQ_INT(polis_pixels_size(env, -1, 65, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels: cell_px 65 is not 1 to 64");
    CHECK_EQ_INT(polis_pixels_draw(env, 2, 1, big, sizeof big, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels: agent 2 is not -1 (the map) or 0 to 1");
    CHECK_EQ_INT(polis_pixels_draw(env, -2, 1, big, sizeof big, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 1, NULL, 0, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels: out is NULL (72 bytes needed)");
    CHECK_EQ_INT(polis_pixels_draw(NULL, -1, 1, big, sizeof big, &w, &h), POLIS_ERR_INVALID);
    polis_env_destroy(env);

    /* a game without a scene map has nothing to draw */
    env = test_env("{\"agents\": 3, \"max_steps\": 5}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_size(env, -1, 8, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "pixels: the game registered no scene map (look_map), nothing to draw");
    polis_env_destroy(env);
}

/* POLIS_PIXELS_GLYPHS: sand's glyph "." is drawn from the font (cells of 16 px: font pixels
 * of 2 px, the 10 x 14 box at (3, 1) in the cell; "." is columns 1-2 of rows 5-6), on the
 * empty colour; rock's glyph is not ASCII ("\u25b2"), so rock keeps its triangle; cells
 * under 8 px keep every shape; an unknown flag is refused. */
static void test_glyphs(void)
{
    test_alloc alloc = {0};
    polis_env *env = probe_env(&alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const int32_t c = 16;
    enum { CAP = 6 * 16 * 4 * 16 * 3 };
    static uint8_t f[CAP], g[CAP];
    int32_t w = 0, h = 0;
    CHECK_EQ_INT(polis_pixels_draw_ex(env, -1, c, POLIS_PIXELS_GLYPHS, f, CAP, &w, &h), POLIS_OK);
    CHECK_EQ_INT(w, 6 * c);
    int32_t x0 = 3 * c, y0 = 2 * c; /* sand at (3, 2) */
    for (int32_t y = 1; y < c; y++)
        for (int32_t x = 1; x < c; x++) {
            bool ink = x >= 3 + 2 && x < 3 + 6 && y >= 1 + 10 && y < 1 + 14;
            if (!px_is(f, w, x0 + x, y0 + y, ink ? SAND : EMPTY)) {
                CHECK(false);
                y = c;
                break;
            }
        }
    CHECK(px_is(f, w, 2 * c + c / 2, 2 * c + c / 2, ROCK)); /* rock: the triangle */
    CHECK(px_is(f, w, 2 * c + 2, 2 * c + 2, EMPTY));
    CHECK(px_is(f, w, 0 * c + c / 2, c + c / 2, polis_pixels_palette(0))); /* agents unchanged */
    /* flags 0 is polis_pixels_draw */
    CHECK_EQ_INT(polis_pixels_draw_ex(env, -1, c, 0, f, CAP, &w, &h), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, c, g, CAP, &w, &h), POLIS_OK);
    CHECK(memcmp(f, g, CAP) == 0);
    CHECK(px_is(f, w, x0 + c / 2, y0 + c / 2, SAND));
    /* 7 px cells: too small for the font, the shapes stay */
    CHECK_EQ_INT(polis_pixels_draw_ex(env, -1, 7, POLIS_PIXELS_GLYPHS, f, CAP, &w, &h), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_draw(env, -1, 7, g, CAP, &w, &h), POLIS_OK);
    CHECK(memcmp(f, g, (size_t)w * (size_t)h * 3) == 0);
    /* no allocation per frame */
    long before = alloc.calls;
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_pixels_draw_ex(env, 1, c, POLIS_PIXELS_GLYPHS, f, CAP, &w, &h),
                     POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, before);
    CHECK_EQ_INT(polis_pixels_draw_ex(env, -1, c, 2, f, CAP, &w, &h), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "pixels: flags 0x2 has bits other than POLIS_PIXELS_GLYPHS (0x1)");
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);
}

/* Pixel observations (polis_pixels_obs) of the look_probe scene, agent 0 hidden from agent 1
 * by the scenario's visibility: each agent's view (3 x 5 cells) drawn as polis_pixels_draw
 * draws it, the hidden agent left out of agent 1's, and one row of stats under it ("tick",
 * unbounded: its value in pixels from the bottom left, the base agent colour 0 on black);
 * downscale and grey as block averages and luma of the full frame; every agent at once is
 * the agents' frames one after the other; no allocation per step; refused arguments. */
static void test_obs(void)
{
    test_alloc alloc = {0};
    polis_env *env = test_env("{\"agents\": 2, \"max_steps\": 20, \"plugins\": [{\"name\": "
                              "\"look_probe\"}], \"visibility\": [{\"observers\": [1], "
                              "\"hidden\": [0]}]}",
                              NULL, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    enum { C = 8, FW = 3 * C, FH = 6 * C, FULL = FW * FH * 3 };
    polis_pixels_obs_opts o = {.cell_px = C, .downscale = 1};
    int32_t w = 0, h = 0, ch = 0;
    size_t need = 0;
    uint8_t f[FULL], v[3 * C * 5 * C * 3], all[2 * FULL], small[FULL];
    CHECK_EQ_INT(polis_pixels_obs(env, 1, &o, f, sizeof f), POLIS_ERR_STATE);
    CHECK_EQ_STR(polis_env_error(env), "scene: no episode yet; call reset first");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_obs_size(env, 1, &o, &w, &h, &ch, &need), POLIS_OK);
    CHECK_EQ_INT(w, FW);
    CHECK_EQ_INT(h, FH);
    CHECK_EQ_INT(ch, 3);
    CHECK_EQ_INT((int)need, FULL);
    for (int step = 0; step < 3; step++) CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_obs(env, 1, &o, f, sizeof f), POLIS_OK);
    /* the view is polis_pixels_draw's frame of agent 1, which leaves agent 0 out: its cell
     * (0, 1) is vx 0, vy 2 of the view, plain sand; agent 1 at the view's centre */
    CHECK_EQ_INT(polis_pixels_draw(env, 1, C, v, sizeof v, &w, &h), POLIS_OK);
    CHECK(memcmp(f, v, sizeof v) == 0);
    CHECK(px_is(f, FW, C / 2, 2 * C + C / 2, SAND));
    CHECK(px_is(f, FW, C + C / 2, 2 * C + C / 2, polis_pixels_agent_rgb(env, 1)));
    CHECK(px_is(f, FW, C / 2, C / 2, OFFMAP));
    /* the stat row: tick 3 is 3 pixels of the first cell's bottom row, the rest black */
    int32_t lit = 0;
    for (int32_t y = 5 * C; y < FH; y++)
        for (int32_t x = 0; x < FW; x++) {
            bool on = y == FH - 1 && x < 3;
            CHECK(px_is(f, FW, x, y, on ? polis_pixels_palette(0) : BLACK));
            lit += on;
        }
    CHECK_EQ_INT(lit, 3);
    /* agent 0 sees agent 1, at (1, 1): vx 2, vy 2 of its view */
    uint8_t f0[FULL];
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &o, f0, sizeof f0), POLIS_OK);
    CHECK(px_is(f0, FW, 2 * C + C / 2, 2 * C + C / 2, polis_pixels_agent_rgb(env, 1)));
    CHECK(px_is(f0, FW, C + C / 2, 2 * C + C / 2, polis_pixels_agent_rgb(env, 0)));
    /* every agent: the two frames one after the other */
    CHECK_EQ_INT(polis_pixels_obs_size(env, POLIS_PIXELS_ALL_AGENTS, &o, &w, &h, &ch, &need),
                 POLIS_OK);
    CHECK_EQ_INT((int)need, 2 * FULL);
    CHECK_EQ_INT(polis_pixels_obs(env, POLIS_PIXELS_ALL_AGENTS, &o, all, sizeof all), POLIS_OK);
    CHECK(memcmp(all, f0, FULL) == 0 && memcmp(all + FULL, f, FULL) == 0);
    /* downscale 2 and grey: 2 x 2 blocks averaged (half up), then the luma */
    polis_pixels_obs_opts d = {.cell_px = C, .downscale = 2, .grey = true};
    CHECK_EQ_INT(polis_pixels_obs_size(env, 1, &d, &w, &h, &ch, &need), POLIS_OK);
    CHECK_EQ_INT(w, FW / 2);
    CHECK_EQ_INT(h, FH / 2);
    CHECK_EQ_INT(ch, 1);
    CHECK_EQ_INT((int)need, FULL);
    CHECK_EQ_INT(polis_pixels_obs(env, 1, &d, small, sizeof small), POLIS_OK);
    int bad = 0;
    for (int32_t y = 0; y < FH / 2; y++)
        for (int32_t x = 0; x < FW / 2; x++) {
            unsigned s[3] = {0, 0, 0};
            for (int i = 0; i < 4; i++)
                for (int k = 0; k < 3; k++)
                    s[k] += f[((size_t)(2 * y + i / 2) * FW + (size_t)(2 * x + i % 2)) * 3 + k];
            unsigned r = (s[0] + 2) / 4, g = (s[1] + 2) / 4, b = (s[2] + 2) / 4;
            bad += small[y * (FW / 2) + x] != (299 * r + 587 * g + 114 * b + 500) / 1000;
        }
    CHECK_EQ_INT(bad, 0);
    /* every agent, downscaled: (n - 1) observations and one full frame of room */
    CHECK_EQ_INT(polis_pixels_obs_size(env, POLIS_PIXELS_ALL_AGENTS, &d, &w, &h, &ch, &need),
                 POLIS_OK);
    CHECK_EQ_INT((int)need, FW / 2 * FH / 2 + FULL);
    CHECK_EQ_INT(polis_pixels_obs(env, POLIS_PIXELS_ALL_AGENTS, &d, all, need), POLIS_OK);
    CHECK(memcmp(all + FW / 2 * FH / 2, small, (size_t)(FW / 2 * FH / 2)) == 0);
    /* no stats: the view alone */
    polis_pixels_obs_opts ns = {.cell_px = C, .downscale = 1, .no_stats = true};
    CHECK_EQ_INT(polis_pixels_obs_size(env, 1, &ns, &w, &h, &ch, &need), POLIS_OK);
    CHECK_EQ_INT(h, 5 * C);
    /* the same state, the same bytes; nothing allocated per step */
    CHECK_EQ_INT(polis_pixels_obs(env, 1, &o, small, sizeof small), POLIS_OK);
    CHECK(memcmp(small, f, FULL) == 0);
    long before = alloc.calls;
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_pixels_obs(env, POLIS_PIXELS_ALL_AGENTS, &o, all, sizeof all), POLIS_OK);
        CHECK_EQ_INT(polis_pixels_obs(env, 0, &d, small, sizeof small), POLIS_OK);
    }
    CHECK_EQ_INT(alloc.calls, before);

    /* refused */
    CHECK_EQ_INT(polis_pixels_obs(env, 0, NULL, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: opts is NULL");
    CHECK_EQ_INT(polis_pixels_obs(env, 2, &o, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: agent 2 is not -1 (every agent) or 0 to 1");
    CHECK_EQ_INT(polis_pixels_obs(env, -2, &o, f, sizeof f), POLIS_ERR_INVALID);
    polis_pixels_obs_opts b = o;
    b.cell_px = 0;
    CHECK_EQ_INT(polis_pixels_obs_size(env, 0, &b, &w, &h, &ch, &need), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: cell_px 0 is not 1 to 64");
    CHECK(w == 0 && h == 0 && ch == 0 && need == 0);
    b = o;
    b.downscale = 3;
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &b, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: downscale 3 is not a divisor of cell_px 8");
    b.downscale = 0;
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &b, f, sizeof f), POLIS_ERR_INVALID);
    b = o;
    b.flags = 4;
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &b, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "pixels obs: flags 0x4 has bits other than POLIS_PIXELS_GLYPHS (0x1)");
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &o, NULL, 0), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: out is NULL (3456 bytes needed)");
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &d, f, 100), POLIS_ERR_LIMIT);
    CHECK_EQ_STR(polis_env_error(env), "pixels obs: the buffer holds 100 bytes, one agent needs "
                                       "3456 (24 x 12 x 1 observations, drawn at 48 x 24 x 3)");
    CHECK_EQ_INT(polis_pixels_obs(env, POLIS_PIXELS_ALL_AGENTS, &o, f, sizeof f), POLIS_ERR_LIMIT);
    CHECK_EQ_INT(polis_pixels_obs(NULL, 0, &o, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_pixels_obs_size(NULL, 0, &o, &w, &h, &ch, &need), POLIS_ERR_INVALID);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);

    /* a game without a scene map */
    env = test_env("{\"agents\": 1, \"max_steps\": 5}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_pixels_obs(env, 0, &o, f, sizeof f), POLIS_ERR_INVALID);
    CHECK_EQ_STR(polis_env_error(env),
                 "pixels: the game registered no scene map (look_map), nothing to draw");
    polis_env_destroy(env);
}

int main(void)
{
    test_obs();
    test_map();
    test_glyphs();
    test_view();
    test_dead();
    test_errors();
    CHECK_DONE();
}
