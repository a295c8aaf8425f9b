/*
 * engine/pixels/raster.c — pixels: polis_pixels_draw draws the current scene (docs/kernel.md,
 * "Looks and scenes") as an RGB frame, the whole map or one agent's view window, with the
 * look of the browser viewer (sdk/viewer/draw.js): the same background and empty-cell
 * colours, the same shapes at the same proportions, the same agent colours, the facing mark
 * and the cross over a dead agent. With POLIS_PIXELS_GLYPHS a kind whose glyph is printable
 * ASCII is drawn as that glyph, from the 5 x 7 pixel font below, which draw.js draws from too.
 *
 * Every pixel is decided by whether its centre lies inside a shape (no anti-aliasing), so a
 * frame is exact and the same on every machine. Nothing is allocated: the caller owns the
 * buffer and the scene buffers exist after the first polis_env_scene_get.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "polis/pixels.h"
#include "polis/visibility.h"

/* The viewer's colours (draw.js): AGENT_COLORS, the off-map background, an empty cell. A
 * frame takes the agent colours in this order, except those that look like one of the game's
 * kinds (agent_palette). */
static const uint8_t agent_rgb[][3] = {
    {0xff, 0x3b, 0x30}, {0x2f, 0x7b, 0xff}, {0xff, 0xd6, 0x0a}, {0xff, 0x2f, 0xd0},
    {0x00, 0xe5, 0xff}, {0xff, 0x8a, 0x00}, {0xa0, 0x5b, 0xff}, {0x7d, 0xff, 0x3b},
    {0xff, 0xff, 0xff}, {0xb3, 0x6b, 0x00}, {0x00, 0xff, 0xa8}, {0xff, 0x7a, 0xa8},
    {0x5d, 0x5d, 0xff}, {0xd4, 0xff, 0x00}, {0x00, 0xa0, 0xa0}, {0xff, 0xb3, 0x8a}};
#define N_AGENT_RGB ((int32_t)(sizeof agent_rgb / sizeof agent_rgb[0]))
static const uint8_t offmap_rgb[3] = {0x05, 0x06, 0x0a};
static const uint8_t empty_rgb[3] = {0x0e, 0x0f, 0x12};
static const uint8_t black_rgb[3] = {0, 0, 0};
static const uint8_t white_rgb[3] = {0xff, 0xff, 0xff};
#define CELL_PX_MAX 64

#define N_SHAPES (POLIS_SHAPE_AGENT + 1)

/* The glyphs of printable ASCII, ' ' (0x20) to '~' (0x7e), 5 x 7 pixels: a byte per row, top
 * row first, bit 4 the leftmost column. sdk/viewer/font.js holds the same table (the viewer
 * draws glyphs from it; tests/cli/font_same.py checks that the two agree). */
#define FONT_W 5
#define FONT_H 7
static const uint8_t font5x7[95][FONT_H] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /*   */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04}, /* ! */
    {0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00}, /* " */
    {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a}, /* # */
    {0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04}, /* $ */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, /* % */
    {0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d}, /* & */
    {0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, /* ( */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, /* ) */
    {0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00}, /* * */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* + */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08}, /* , */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* - */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* . */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, /* / */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* 0 */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* 2 */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* 3 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* 4 */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* 5 */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* 6 */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 7 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* 8 */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* 9 */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}, /* : */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08}, /* ; */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}, /* < */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00}, /* = */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}, /* > */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* ? */
    {0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e}, /* @ */
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* A */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}, /* B */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* C */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c}, /* D */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}, /* E */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}, /* F */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* G */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* H */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* I */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* K */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}, /* L */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}, /* M */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* N */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* O */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}, /* P */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}, /* Q */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}, /* R */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* S */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* U */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* W */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}, /* X */
    {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}, /* Y */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}, /* Z */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}, /* [ */
    {0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00}, /* \ */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}, /* ] */
    {0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00}, /* ^ */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* _ */
    {0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ` */
    {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f}, /* a */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e}, /* b */
    {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e}, /* c */
    {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f}, /* d */
    {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e}, /* e */
    {0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08}, /* f */
    {0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* g */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11}, /* h */
    {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e}, /* i */
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c}, /* j */
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}, /* k */
    {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* l */
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}, /* m */
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}, /* n */
    {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e}, /* o */
    {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10}, /* p */
    {0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01}, /* q */
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10}, /* r */
    {0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e}, /* s */
    {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06}, /* t */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d}, /* u */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* v */
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a}, /* w */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11}, /* x */
    {0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* y */
    {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f}, /* z */
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02}, /* { */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* | */
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08}, /* } */
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00}, /* ~ */
};
/* Glyphs need cells of at least 8 px: the font's pixels are cell_px / 8 pixels square. */
#define GLYPH_MIN_PX 8

#define KIND_CACHE 256

typedef struct frame {
    uint8_t *px;
    int32_t w, h, c;              /* pixels, cell size */
    bool glyphs;                  /* POLIS_PIXELS_GLYPHS */
    uint8_t palette[N_AGENT_RGB]; /* agent i's colour: agent_rgb[palette[i % N_AGENT_RGB]] */
    /* per shape, which pixels of a cell it covers, and which its dark edge darkens (computed
     * once per frame) */
    uint8_t mask[N_SHAPES][CELL_PX_MAX * CELL_PX_MAX];
    uint8_t edge[N_SHAPES][CELL_PX_MAX * CELL_PX_MAX];
    /* the first KIND_CACHE kinds' looks, read once per frame setup (frame_init) */
    int32_t n_cached;
    struct {
        uint8_t rgb[3], shape;
        const uint8_t *rows; /* the glyph's font rows when drawn as a glyph, else NULL */
    } kinds[KIND_CACHE];
} frame;

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9'   ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : 0;
}

static void parse_color(const char *s, uint8_t rgb[3])
{
    for (int i = 0; i < 3; i++)
        rgb[i] = (uint8_t)(hexval(s[1 + 2 * i]) * 16 + hexval(s[2 + 2 * i]));
}

static void put(frame *f, int32_t x, int32_t y, const uint8_t rgb[3])
{
    if (x < 0 || y < 0 || x >= f->w || y >= f->h) return;
    uint8_t *p = f->px + ((size_t)y * (size_t)f->w + (size_t)x) * 3;
    p[0] = rgb[0];
    p[1] = rgb[1];
    p[2] = rgb[2];
}

/* The cell's first row pixel by pixel, the other rows copied from it; nothing for a cell not
 * wholly inside the frame (every caller's cells are). */
static void fill_cell(frame *f, int32_t vx, int32_t vy, const uint8_t rgb[3])
{
    int32_t c = f->c, x0 = vx * c, y0 = vy * c;
    if (x0 < 0 || y0 < 0 || x0 + c > f->w || y0 + c > f->h) return;
    size_t w3 = (size_t)f->w * 3;
    uint8_t *row = f->px + (size_t)y0 * w3 + (size_t)x0 * 3;
    for (int32_t x = 0; x < c; x++) memcpy(row + 3 * x, rgb, 3);
    for (int32_t y = 1; y < c; y++) memcpy(row + (size_t)y * w3, row, (size_t)c * 3);
}

/* Which side of the line a->b the point p is on (the sign of the cross product). */
static double edge(double ax, double ay, double bx, double by, double px, double py)
{
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax);
}

static bool in_triangle(double ax, double ay, double bx, double by, double cx, double cy, double px,
                        double py)
{
    double e0 = edge(ax, ay, bx, by, px, py), e1 = edge(bx, by, cx, cy, px, py),
           e2 = edge(cx, cy, ax, ay, px, py);
    return (e0 >= 0 && e1 >= 0 && e2 >= 0) || (e0 <= 0 && e1 <= 0 && e2 <= 0);
}

/* The distance from p to the segment a-b. */
static double seg_dist(double ax, double ay, double bx, double by, double px, double py)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double qx = ax + t * dx - px, qy = ay + t * dy - py;
    return sqrt(qx * qx + qy * qy);
}

/* Whether the point (x, y), relative to the cell's corner, is inside `shape` in a cell of c
 * pixels: the proportions of draw.js's shapePath. */
static bool in_shape(polis_shape shape, double x, double y, double c)
{
    double m = c / 2, dx = x - m, dy = y - m;
    switch (shape) {
    case POLIS_SHAPE_CIRCLE:
    case POLIS_SHAPE_AGENT: return dx * dx + dy * dy <= (c * 0.38) * (c * 0.38);
    case POLIS_SHAPE_TRIANGLE:
        return in_triangle(m, c * 0.12, c * 0.88, c * 0.85, c * 0.12, c * 0.85, x, y);
    case POLIS_SHAPE_DIAMOND: return fabs(dx) + fabs(dy) <= c * 0.4;
    case POLIS_SHAPE_CROSS: {
        double a = c * 0.15, b = c * 0.35;
        return (fabs(dx) <= a && fabs(dy) <= b) || (fabs(dx) <= b && fabs(dy) <= a);
    }
    case POLIS_SHAPE_DOT: return dx * dx + dy * dy <= (c * 0.16) * (c * 0.16);
    case POLIS_SHAPE_SQUARE:
    default: return true;
    }
}

/* The distance from p to the closed polygon of n vertices xy. */
static double poly_dist(const double *xy, int n, double px, double py)
{
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        double d = seg_dist(xy[2 * i], xy[2 * i + 1], xy[2 * j], xy[2 * j + 1], px, py);
        if (d < best) best = d;
    }
    return best;
}

/* Whether draw.js's dark edge of `shape` (a stroke of its path, max(1, c / 18) wide; none on
 * squares, nor on dots in cells under 20 px, nor on any shape under 8 px) covers the pixel
 * centre (x, y). The cross's path is its two rectangles, stroked both. */
static bool on_edge(polis_shape shape, double x, double y, double c)
{
    if (shape == POLIS_SHAPE_SQUARE || c < (shape == POLIS_SHAPE_DOT ? 20 : 8)) return false;
    double half = (c / 18 > 1 ? c / 18 : 1) / 2, m = c / 2, dx = x - m, dy = y - m;
    double r = sqrt(dx * dx + dy * dy);
    switch (shape) {
    case POLIS_SHAPE_CIRCLE:
    case POLIS_SHAPE_AGENT: return fabs(r - c * 0.38) <= half;
    case POLIS_SHAPE_DOT: return fabs(r - c * 0.16) <= half;
    case POLIS_SHAPE_TRIANGLE: {
        const double t[] = {m, c * 0.12, c * 0.88, c * 0.85, c * 0.12, c * 0.85};
        return poly_dist(t, 3, x, y) <= half;
    }
    case POLIS_SHAPE_DIAMOND: {
        const double d[] = {m, c * 0.1, c * 0.9, m, m, c * 0.9, c * 0.1, m};
        return poly_dist(d, 4, x, y) <= half;
    }
    case POLIS_SHAPE_CROSS: {
        double a = c * 0.15, b = c * 0.35;
        const double v[] = {m - a, m - b, m + a, m - b, m + a, m + b, m - a, m + b};
        const double h[] = {m - b, m - a, m + b, m - a, m + b, m + a, m - b, m + a};
        return poly_dist(v, 4, x, y) <= half || poly_dist(h, 4, x, y) <= half;
    }
    default: return false;
    }
}

/* The canvas's rgba(0,0,0,0.55) over a pixel: p * 116 >> 8 per channel (measured in
 * chromium for every p: the same). */
static void darken(frame *f, int32_t x, int32_t y)
{
    if (x < 0 || y < 0 || x >= f->w || y >= f->h) return;
    uint8_t *p = f->px + ((size_t)y * (size_t)f->w + (size_t)x) * 3;
    for (int i = 0; i < 3; i++) p[i] = (uint8_t)((p[i] * 116) >> 8);
}

/* draw.js's colorDistance: the "redmean" weighted RGB distance, in the same operations. */
static double color_distance(const uint8_t a[3], const uint8_t b[3])
{
    double rm = (a[0] + b[0]) / 2.0, dr = a[0] - b[0], dg = a[1] - b[1], db = a[2] - b[2];
    return sqrt((2 + rm / 256) * dr * dr + 4 * dg * dg + (2 + (255 - rm) / 256) * db * db);
}

/* draw.js's setPalette: the agent colours in order, without those closer than 120 to a kind's
 * colour, which follow, the farthest first (a stable sort, as the browser's). */
static void agent_palette(const polis_env *env, uint8_t pal[N_AGENT_RGB])
{
    double dist[N_AGENT_RGB];
    int32_t nk = polis_env_scene_n_kinds(env), n = 0;
    for (int32_t i = 0; i < N_AGENT_RGB; i++) {
        dist[i] = INFINITY;
        for (int32_t k = 0; k < nk; k++) {
            polis_kind_info info;
            uint8_t rgb[3] = {0x88, 0x88, 0x88};
            if (polis_env_scene_kind(env, k, &info) != POLIS_OK) continue;
            if (info.color && info.color[0]) parse_color(info.color, rgb);
            double d = color_distance(agent_rgb[i], rgb);
            if (d < dist[i]) dist[i] = d;
        }
        if (dist[i] >= 120) pal[n++] = (uint8_t)i;
    }
    int32_t first_close = n;
    for (int32_t i = 0; i < N_AGENT_RGB; i++) {
        if (dist[i] >= 120) continue;
        int32_t at = n++;
        while (at > first_close && dist[pal[at - 1]] < dist[i]) {
            pal[at] = pal[at - 1];
            at--;
        }
        pal[at] = (uint8_t)i;
    }
}

/* The glyph's font rows, or NULL when it is not one printable ASCII character. */
static const uint8_t *font_rows(const char *glyph)
{
    unsigned char ch = (unsigned char)glyph[0];
    if (ch < 0x20 || ch > 0x7e || glyph[1]) return NULL;
    return font5x7[ch - 0x20];
}

/* A glyph in the kind's colour over whatever the cell holds: font pixels of p = c / 8 pixels
 * square, the 5p x 7p box centred in the cell (rounded towards the top left). */
static void draw_glyph(frame *f, const uint8_t *rows, int32_t vx, int32_t vy, const uint8_t rgb[3])
{
    int32_t p = f->c / GLYPH_MIN_PX, ox = (f->c - FONT_W * p) / 2, oy = (f->c - FONT_H * p) / 2;
    for (int32_t r = 0; r < FONT_H; r++)
        for (int32_t col = 0; col < FONT_W; col++) {
            if (!(rows[r] >> (FONT_W - 1 - col) & 1)) continue;
            for (int32_t y = 0; y < p; y++)
                for (int32_t x = 0; x < p; x++)
                    put(f, vx * f->c + ox + col * p + x, vy * f->c + oy + r * p + y, rgb);
        }
}

/* Reads kind's colour, shape and (with glyphs) font rows; false for an unknown kind. */
static bool kind_look(const frame *f, const polis_env *env, int32_t kind, uint8_t rgb[3],
                      polis_shape *shape, const uint8_t **rows)
{
    polis_kind_info k;
    if (polis_env_scene_kind(env, kind, &k) != POLIS_OK) return false;
    parse_color(k.color, rgb);
    *shape = k.shape;
    *rows = f->glyphs && f->c >= GLYPH_MIN_PX ? font_rows(k.glyph) : NULL;
    return true;
}

static void draw_kind(frame *f, const polis_env *env, int32_t kind, int32_t vx, int32_t vy)
{
    uint8_t rgb[3];
    polis_shape shape;
    const uint8_t *rows;
    if (kind >= 0 && kind < f->n_cached) {
        memcpy(rgb, f->kinds[kind].rgb, 3);
        shape = (polis_shape)f->kinds[kind].shape;
        rows = f->kinds[kind].rows;
    } else if (!kind_look(f, env, kind, rgb, &shape, &rows)) {
        return;
    }
    if (rows) {
        draw_glyph(f, rows, vx, vy, rgb);
        return;
    }
    if (shape == POLIS_SHAPE_SQUARE) {
        fill_cell(f, vx, vy, rgb);
        return;
    }
    int sh = (unsigned)shape < N_SHAPES ? (int)shape : POLIS_SHAPE_SQUARE;
    const uint8_t *m = f->mask[sh], *e = f->edge[sh];
    for (int32_t y = 0; y < f->c; y++)
        for (int32_t x = 0; x < f->c; x++) {
            if (m[y * f->c + x]) put(f, vx * f->c + x, vy * f->c + y, rgb);
            if (e[y * f->c + x]) darken(f, vx * f->c + x, vy * f->c + y);
        }
}

/* An agent as draw.js draws it: a disc of radius 0.4c in its colour inside a white and a black
 * ring (reaching into the neighbouring cells), a black triangle on its edge pointing where it
 * faces, a black cross over a dead one; `stacked` > 1 agents on its cell give it a badge. */
static void draw_agent(frame *f, int32_t i, const polis_scene_agent *a, int32_t vx, int32_t vy,
                       int32_t stacked)
{
    double c = f->c, m = c / 2, r = c * 0.4;
    /* the rings are at least a pixel wide from cells of 8 px on; below, c / 16 and c / 14, so
     * that an agent never covers the centre of the next cell */
    double r1 = r + (c >= 8 && c / 16 < 1 ? 1 : c / 16);
    double r2 = r1 + (c >= 8 && c / 14 < 1 ? 1 : c / 14);
    double xw = c / 8 > 1 ? c / 8 : 1;
    static const int dirs[5][2] = {{0, 0}, {0, -1}, {1, 0}, {0, 1}, {-1, 0}};
    bool facing = a->facing >= POLIS_FACING_UP && a->facing <= POLIS_FACING_LEFT;
    double fdx = facing ? dirs[a->facing][0] : 0, fdy = facing ? dirs[a->facing][1] : 0;
    double tip = c * 0.5, base = c * 0.24, half = c * 0.15;
    const uint8_t *own = agent_rgb[f->palette[i % N_AGENT_RGB]];
    int32_t reach = (int32_t)ceil(r2 - m) + 1;
    for (int32_t y = -reach; y < f->c + reach; y++)
        for (int32_t x = -reach; x < f->c + reach; x++) {
            double px = x + 0.5, py = y + 0.5, dx = px - m, dy = py - m;
            double d2 = dx * dx + dy * dy;
            if (d2 > r2 * r2) continue;
            const uint8_t *rgb = d2 <= r * r ? own : d2 <= r1 * r1 ? white_rgb : black_rgb;
            if (facing && in_triangle(m + fdx * tip, m + fdy * tip, m + fdx * base - fdy * half,
                                      m + fdy * base + fdx * half, m + fdx * base + fdy * half,
                                      m + fdy * base - fdx * half, px, py))
                rgb = black_rgb;
            if (!a->alive && (seg_dist(c * 0.2, c * 0.2, c * 0.8, c * 0.8, px, py) <= xw / 2 ||
                              seg_dist(c * 0.8, c * 0.2, c * 0.2, c * 0.8, px, py) <= xw / 2))
                rgb = black_rgb;
            put(f, vx * f->c + x, vy * f->c + y, rgb);
        }
    if (stacked < 2) return;
    if (f->c < 14) { /* too small for a number: a white dot in the corner */
        for (int32_t y = 0; y < 4; y++)
            for (int32_t x = f->c - 4; x < f->c; x++) {
                double dx = x + 0.5 - (c - 2), dy = y + 0.5 - 2;
                if (dx * dx + dy * dy <= 1.6 * 1.6) put(f, vx * f->c + x, vy * f->c + y, white_rgb);
            }
        return;
    }
    /* the badge: a white disc with a black outline at the cell's top right corner, the count
     * in the font (pixels of floor(2 br / 9)) when it fits */
    double br = c * 0.2, bx = c - br * 0.8, by = br * 0.8;
    for (int32_t y = (int32_t)floor(by - br - 1); y <= (int32_t)ceil(by + br + 1); y++)
        for (int32_t x = (int32_t)floor(bx - br - 1); x <= (int32_t)ceil(bx + br + 1); x++) {
            double dx = x + 0.5 - bx, dy = y + 0.5 - by, d = sqrt(dx * dx + dy * dy);
            if (d <= br + 0.5)
                put(f, vx * f->c + x, vy * f->c + y, fabs(d - br) <= 0.5 ? black_rgb : white_rgb);
        }
    int32_t p = (int32_t)floor(2 * br / 9);
    if (p < 1) return;
    char digits[12];
    int n = snprintf(digits, sizeof digits, "%d", (int)stacked);
    int32_t ox = (int32_t)floor(bx - (n * (FONT_W + 1) * p - p) / 2.0);
    int32_t oy = (int32_t)floor(by - FONT_H * p / 2.0);
    for (int k = 0; k < n; k++) {
        const uint8_t *rows = font5x7[digits[k] - 0x20];
        for (int32_t row = 0; row < FONT_H; row++)
            for (int32_t col = 0; col < FONT_W; col++) {
                if (!(rows[row] >> (FONT_W - 1 - col) & 1)) continue;
                for (int32_t y = 0; y < p; y++)
                    for (int32_t x = 0; x < p; x++)
                        put(f, vx * f->c + ox + (k * (FONT_W + 1) + col) * p + x,
                            vy * f->c + oy + row * p + y, black_rgb);
            }
    }
}

/* The faint grid of draw.js (white at 6% over whatever is below), cells of 10 px and more:
 * the first pixel row and column of every cell. 6% is an alpha of 15/255 on the canvas, which
 * blends it as p + floor((255 - p) * 15 / 255) (measured in chromium for every p: the same). */
static void blend_grid(uint8_t *p)
{
    for (int i = 0; i < 3; i++) p[i] = (uint8_t)(p[i] + (255 - p[i]) * 15 / 255);
}

/* Where a row and a column cross, the pixel is blended twice (the canvas strokes the lines
 * one over the other). */
static void draw_grid(frame *f)
{
    for (int32_t y = 0; y < f->h; y++) {
        uint8_t *row = f->px + (size_t)y * (size_t)f->w * 3;
        if (y % f->c == 0)
            for (int32_t x = 0; x < f->w; x++) blend_grid(row + (size_t)x * 3);
        for (int32_t x = 0; x < f->w; x += f->c) blend_grid(row + (size_t)x * 3);
    }
}

/* What every frame of env at cell_px with flags shares: the shapes' masks, the agent colours
 * and the kinds' looks. */
static void frame_init(frame *f, const polis_env *env, int32_t cell_px, uint32_t flags)
{
    f->c = cell_px;
    f->glyphs = (flags & POLIS_PIXELS_GLYPHS) != 0;
    for (int sh = 0; sh < N_SHAPES; sh++)
        for (int32_t y = 0; y < cell_px; y++)
            for (int32_t x = 0; x < cell_px; x++) {
                f->mask[sh][y * cell_px + x] = in_shape((polis_shape)sh, x + 0.5, y + 0.5, cell_px);
                f->edge[sh][y * cell_px + x] = on_edge((polis_shape)sh, x + 0.5, y + 0.5, cell_px);
            }
    agent_palette(env, f->palette);
    int32_t nk = polis_env_scene_n_kinds(env);
    f->n_cached = 0;
    for (int32_t k = 0; k < nk && k < KIND_CACHE; k++) {
        polis_shape shape = POLIS_SHAPE_SQUARE;
        if (!kind_look(f, env, k, f->kinds[k].rgb, &shape, &f->kinds[k].rows)) break;
        f->kinds[k].shape = (uint8_t)shape;
        f->n_cached = k + 1;
    }
}

/* Draws the w x h frame (checked by the caller) of `agent`'s view (-1: the whole map) of the
 * scene s into out, with the looks of f (frame_init). */
static void draw_frame(frame *f, polis_env *env, const polis_scene *s, int32_t agent, uint8_t *out,
                       int32_t w, int32_t h)
{
    f->px = out;
    f->w = w;
    f->h = h;
    int32_t cell_px = f->c;
    int32_t vw = w / cell_px, vh = h / cell_px, x0 = 0, y0 = 0, rx = 0, ry = 0;
    if (agent >= 0 && polis_env_scene_view(env, &rx, &ry)) {
        const polis_scene_agent *a = &s->agents[agent];
        x0 = (a->x >= 0 ? a->x : 0) - rx;
        y0 = (a->y >= 0 ? a->y : 0) - ry;
    }
    for (int32_t vy = 0; vy < vh; vy++)
        for (int32_t vx = 0; vx < vw; vx++) {
            int32_t x = x0 + vx, y = y0 + vy;
            if (x < 0 || y < 0 || x >= s->width || y >= s->height) {
                fill_cell(f, vx, vy, offmap_rgb);
                continue;
            }
            /* the empty colour, unless the first layer fills the cell anyway */
            int32_t k0 = s->n_layers > 0 ? s->tiles[(size_t)y * (size_t)s->width + (size_t)x] : -1;
            if (k0 < 0 || k0 >= f->n_cached || f->kinds[k0].shape != POLIS_SHAPE_SQUARE ||
                f->kinds[k0].rows)
                fill_cell(f, vx, vy, empty_rgb);
            for (int32_t l = 0; l < s->n_layers; l++) {
                size_t at = ((size_t)l * (size_t)s->height + (size_t)y) * (size_t)s->width;
                int32_t k = s->tiles[at + (size_t)x];
                if (k >= 0) draw_kind(f, env, k, vx, vy);
            }
        }
    if (cell_px >= 10) draw_grid(f);
    for (int32_t i = 0; i < s->n_things; i++) {
        const polis_scene_thing *t = &s->things[i];
        int32_t vx = t->x - x0, vy = t->y - y0;
        if (vx < 0 || vy < 0 || vx >= vw || vy >= vh) continue;
        draw_kind(f, env, t->kind, vx, vy);
    }
    /* On small cells a wide white ring (1.5 px, radius 0.66c) around each living agent keeps
     * it visible; then the agents, dead ones first so a living one on the same cell is drawn
     * on top, the last one drawn on a cell with a badge counting the agents there. An agent's
     * view leaves out the agents it may not see (polis/visibility.h). */
#define SEEN(i) (agent < 0 || polis_env_visible(env, agent, (i)))
    if (cell_px < 16)
        for (int32_t i = 0; i < s->n_agents; i++) {
            const polis_scene_agent *a = &s->agents[i];
            int32_t vx = a->x - x0, vy = a->y - y0;
            if (!a->alive || !SEEN(i) || a->x < 0 || a->y < 0 || vx < 0 || vy < 0 || vx >= vw ||
                vy >= vh)
                continue;
            double c = cell_px, ring = c * 0.66, mx = vx * c + c / 2, my = vy * c + c / 2;
            for (int32_t y = (int32_t)floor(my - ring - 1); y <= (int32_t)ceil(my + ring + 1); y++)
                for (int32_t x = (int32_t)floor(mx - ring - 1); x <= (int32_t)ceil(mx + ring + 1);
                     x++) {
                    double dx = x + 0.5 - mx, dy = y + 0.5 - my;
                    if (fabs(sqrt(dx * dx + dy * dy) - ring) <= 0.75) put(f, x, y, white_rgb);
                }
        }
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < s->n_agents; i++) {
            const polis_scene_agent *a = &s->agents[i];
            if ((a->alive != 0) != (pass == 1) || !SEEN(i)) continue;
            int32_t vx = a->x - x0, vy = a->y - y0;
            if (a->x < 0 || a->y < 0 || vx < 0 || vy < 0 || vx >= vw || vy >= vh) continue;
            /* the agents on this cell, and whether i is the last one drawn there */
            int32_t here = 0, after = 0;
            for (int32_t j = 0; j < s->n_agents; j++) {
                const polis_scene_agent *b = &s->agents[j];
                if (b->x != a->x || b->y != a->y || !SEEN(j)) continue;
                here++;
                int pj = b->alive != 0, pi = a->alive != 0;
                if (pj > pi || (pj == pi && j > i)) after++;
            }
            draw_agent(f, i, a, vx, vy, after == 0 ? here : 1);
        }
#undef SEEN
}

polis_status polis_pixels_size(polis_env *env, int32_t agent, int32_t cell_px, int32_t *w,
                               int32_t *h)
{
    if (w) *w = 0;
    if (h) *h = 0;
    if (!env) return POLIS_ERR_INVALID;
    polis_env_clear_error(env);
    if (cell_px < 1 || cell_px > CELL_PX_MAX)
        return polis_env_set_error(env, POLIS_ERR_INVALID, "pixels: cell_px %d is not 1 to %d",
                                   (int)cell_px, CELL_PX_MAX);
    if (agent < -1 || agent >= polis_env_n_agents(env))
        return polis_env_set_error(env, POLIS_ERR_INVALID,
                                   "pixels: agent %d is not -1 (the map) or 0 to %d", (int)agent,
                                   (int)polis_env_n_agents(env) - 1);
    int32_t mw = polis_env_scene_width(env), mh = polis_env_scene_height(env), rx = 0, ry = 0;
    if (mw <= 0 || mh <= 0)
        return polis_env_set_error(env, POLIS_ERR_INVALID,
                                   "pixels: the game registered no scene map (look_map), nothing "
                                   "to draw");
    int32_t cw = mw, ch = mh;
    if (agent >= 0 && polis_env_scene_view(env, &rx, &ry)) {
        cw = 2 * rx + 1;
        ch = 2 * ry + 1;
    }
    if ((int64_t)cw * cell_px > INT32_MAX / 4 || (int64_t)ch * cell_px > INT32_MAX / 4 ||
        (int64_t)cw * cell_px * ch * cell_px > INT32_MAX / 4)
        return polis_env_set_error(env, POLIS_ERR_LIMIT,
                                   "pixels: a frame of %d x %d cells at %d px is too large",
                                   (int)cw, (int)ch, (int)cell_px);
    if (w) *w = cw * cell_px;
    if (h) *h = ch * cell_px;
    return POLIS_OK;
}

polis_status polis_pixels_draw(polis_env *env, int32_t agent, int32_t cell_px, uint8_t *out,
                               size_t cap, int32_t *out_w, int32_t *out_h)
{
    return polis_pixels_draw_ex(env, agent, cell_px, 0, out, cap, out_w, out_h);
}

polis_status polis_pixels_draw_ex(polis_env *env, int32_t agent, int32_t cell_px, uint32_t flags,
                                  uint8_t *out, size_t cap, int32_t *out_w, int32_t *out_h)
{
    int32_t w = 0, h = 0;
    polis_status st = polis_pixels_size(env, agent, cell_px, &w, &h);
    if (out_w) *out_w = w;
    if (out_h) *out_h = h;
    if (st) return st;
    if (flags & ~(uint32_t)POLIS_PIXELS_GLYPHS)
        return polis_env_set_error(
            env, POLIS_ERR_INVALID,
            "pixels: flags 0x%x has bits other than POLIS_PIXELS_GLYPHS (0x%x)", (unsigned)flags,
            (unsigned)POLIS_PIXELS_GLYPHS);
    size_t need = (size_t)w * (size_t)h * 3;
    if (!out)
        return polis_env_set_error(env, POLIS_ERR_INVALID, "pixels: out is NULL (%zu bytes needed)",
                                   need);
    if (cap < need)
        return polis_env_set_error(env, POLIS_ERR_LIMIT,
                                   "pixels: the buffer holds %zu bytes, a %d x %d frame needs %zu",
                                   cap, (int)w, (int)h, need);
    const polis_scene *s = NULL;
    if ((st = polis_env_scene_get(env, &s))) return st;
    frame f;
    frame_init(&f, env, cell_px, flags);
    draw_frame(&f, env, s, agent, out, w, h);
    return POLIS_OK;
}

const uint8_t *polis_pixels_palette(int32_t agent)
{
    return agent >= 0 ? agent_rgb[agent % N_AGENT_RGB] : NULL;
}

const uint8_t *polis_pixels_agent_rgb(const polis_env *env, int32_t agent)
{
    if (!env || agent < 0) return NULL;
    uint8_t pal[N_AGENT_RGB];
    agent_palette(env, pal);
    return agent_rgb[pal[agent % N_AGENT_RGB]];
}

/* ---- pixel observations ------------------------------------------------------------------ */

/* The stat strip's background. */
static const uint8_t strip_rgb[3] = {0, 0, 0};

/* The layout of an observation frame: the view (vw x vh cells) and the stat rows under it,
 * drawn at cell_px (fw x fh pixels, 3 channels), then reduced to w x h x ch. */
typedef struct obs_layout {
    int32_t vw, vh, rows, fw, fh, w, h, ch;
    size_t full, bytes; /* the drawn frame's bytes, the observation's */
} obs_layout;

static polis_status obs_layout_of(polis_env *env, int32_t agent, const polis_pixels_obs_opts *o,
                                  obs_layout *l)
{
    memset(l, 0, sizeof *l);
    if (!env) return POLIS_ERR_INVALID;
    polis_env_clear_error(env);
    if (!o) return polis_env_set_error(env, POLIS_ERR_INVALID, "pixels obs: opts is NULL");
    int32_t n = polis_env_n_agents(env);
    if (agent < POLIS_PIXELS_ALL_AGENTS || agent >= n)
        return polis_env_set_error(env, POLIS_ERR_INVALID,
                                   "pixels obs: agent %d is not %d (every agent) or 0 to %d",
                                   (int)agent, POLIS_PIXELS_ALL_AGENTS, (int)n - 1);
    if (o->cell_px < 1 || o->cell_px > CELL_PX_MAX)
        return polis_env_set_error(env, POLIS_ERR_INVALID, "pixels obs: cell_px %d is not 1 to %d",
                                   (int)o->cell_px, CELL_PX_MAX);
    if (o->downscale < 1 || o->cell_px % o->downscale != 0)
        return polis_env_set_error(env, POLIS_ERR_INVALID,
                                   "pixels obs: downscale %d is not a divisor of cell_px %d",
                                   (int)o->downscale, (int)o->cell_px);
    if (o->flags & ~(uint32_t)POLIS_PIXELS_GLYPHS)
        return polis_env_set_error(
            env, POLIS_ERR_INVALID,
            "pixels obs: flags 0x%x has bits other than POLIS_PIXELS_GLYPHS (0x%x)",
            (unsigned)o->flags, (unsigned)POLIS_PIXELS_GLYPHS);
    int32_t fw = 0, fh = 0;
    polis_status st = polis_pixels_size(env, 0, o->cell_px, &fw, &fh);
    if (st) return st;
    int32_t c = o->cell_px, ns = o->no_stats ? 0 : polis_env_scene_n_stats(env);
    l->vw = fw / c;
    l->vh = fh / c;
    l->rows = ns > 0 ? (ns + l->vw - 1) / l->vw : 0;
    if ((int64_t)(l->vh + l->rows) * c * fw > INT32_MAX / 4)
        return polis_env_set_error(env, POLIS_ERR_LIMIT,
                                   "pixels obs: a frame of %d x %d cells at %d px is too large",
                                   (int)l->vw, (int)(l->vh + l->rows), (int)c);
    l->fw = fw;
    l->fh = fh + l->rows * c;
    l->w = l->fw / o->downscale;
    l->h = l->fh / o->downscale;
    l->ch = o->grey ? 1 : 3;
    l->full = (size_t)l->fw * (size_t)l->fh * 3;
    l->bytes = (size_t)l->w * (size_t)l->h * (size_t)l->ch;
    return POLIS_OK;
}

/* The bytes a call for `agent` needs in out: one frame drawn at full size, after the
 * observations of the agents before it. */
static size_t obs_need(const obs_layout *l, int32_t agent, int32_t n)
{
    return agent == POLIS_PIXELS_ALL_AGENTS && n > 1 ? (size_t)(n - 1) * l->bytes + l->full
                                                     : l->full;
}

polis_status polis_pixels_obs_size(polis_env *env, int32_t agent, const polis_pixels_obs_opts *opts,
                                   int32_t *w, int32_t *h, int32_t *channels, size_t *need)
{
    obs_layout l;
    polis_status st = obs_layout_of(env, agent, opts, &l);
    if (w) *w = l.w;
    if (h) *h = l.h;
    if (channels) *channels = l.ch;
    if (need) *need = st ? 0 : obs_need(&l, agent, polis_env_n_agents(env));
    return st;
}

/* The stat strip of agent a under the view: stat k in cell (k % vw, vh + k / vw), its value v
 * of max m filling ceil(v * c^2 / m) of the cell's pixels (min(v, c^2) when m is 0), from the
 * bottom row up, each row from the left, in the colour of the kind with the stat's name or
 * else the base agent colour k. */
static void draw_stats(polis_env *env, const polis_scene *s, int32_t a, const obs_layout *l,
                       int32_t c, uint8_t *px)
{
    uint8_t *strip = px + (size_t)l->vh * (size_t)c * (size_t)l->fw * 3;
    for (size_t i = 0; i < (size_t)l->rows * (size_t)c * (size_t)l->fw; i++)
        memcpy(strip + i * 3, strip_rgb, 3);
    int64_t area = (int64_t)c * c;
    for (int32_t k = 0; k < s->n_stats; k++) {
        const char *name = NULL, *group = NULL;
        int32_t max = 0;
        if (polis_env_scene_stat(env, k, &name, &group, &max) != POLIS_OK) continue;
        uint8_t rgb[3];
        memcpy(rgb, agent_rgb[k % N_AGENT_RGB], 3);
        int32_t kind = name ? polis_env_scene_kind_find(env, name) : -1;
        polis_kind_info info;
        if (kind >= 0 && polis_env_scene_kind(env, kind, &info) == POLIS_OK && info.color)
            parse_color(info.color, rgb);
        int64_t v = s->stats[(size_t)a * (size_t)s->n_stats + (size_t)k];
        int64_t fill = v <= 0    ? 0
                       : max > 0 ? ((v < max ? v : max) * area + max - 1) / max
                                 : (v < area ? v : area);
        int32_t x0 = (k % l->vw) * c, y0 = (l->vh + k / l->vw) * c;
        for (int64_t i = 0; i < fill; i++) {
            size_t x = (size_t)(x0 + (int32_t)(i % c)), y = (size_t)(y0 + c - 1 - (int32_t)(i / c));
            memcpy(px + (y * (size_t)l->fw + x) * 3, rgb, 3);
        }
    }
}

/* The luma of an RGB pixel, rounded: (299 R + 587 G + 114 B) / 1000. */
static uint8_t luma(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((299 * r + 587 * g + 114 * b + 500) / 1000);
}

/* Reduces the fw x fh RGB frame at px in place: d x d blocks averaged (rounded half up), then
 * with grey the luma. Every output pixel is written at or before the first byte it reads, so
 * nothing is read after it was overwritten. The average divides by d^2 as a multiplication by
 * ceil(2^32 / d^2), exact because every sum is below 2^32 / d^2 (sums stay under 2^20, d^2 at
 * most 2^12). */
static void reduce(const obs_layout *l, int32_t d, uint8_t *px)
{
    size_t npx = (size_t)l->w * (size_t)l->h;
    if (d == 1) { /* grey alone */
        for (size_t i = 0; i < npx; i++) px[i] = luma(px[3 * i], px[3 * i + 1], px[3 * i + 2]);
        return;
    }
    uint32_t n = (uint32_t)(d * d);
    uint64_t inv = ((UINT64_C(1) << 32) + n - 1) / n;
    size_t fw3 = (size_t)l->fw * 3;
    for (int32_t oy = 0; oy < l->h; oy++)
        for (int32_t ox = 0; ox < l->w; ox++) {
            uint32_t sum[3] = {n / 2, n / 2, n / 2};
            const uint8_t *p0 = px + (size_t)oy * (size_t)d * fw3 + (size_t)ox * (size_t)d * 3;
            for (int32_t y = 0; y < d; y++) {
                const uint8_t *p = p0 + (size_t)y * fw3;
                for (int32_t x = 0; x < d; x++, p += 3) {
                    sum[0] += p[0];
                    sum[1] += p[1];
                    sum[2] += p[2];
                }
            }
            uint32_t r = (uint32_t)((sum[0] * inv) >> 32), g = (uint32_t)((sum[1] * inv) >> 32),
                     b = (uint32_t)((sum[2] * inv) >> 32);
            uint8_t *q = px + ((size_t)oy * (size_t)l->w + (size_t)ox) * (size_t)l->ch;
            if (l->ch == 1) {
                q[0] = luma(r, g, b);
            } else {
                q[0] = (uint8_t)r;
                q[1] = (uint8_t)g;
                q[2] = (uint8_t)b;
            }
        }
}

polis_status polis_pixels_obs(polis_env *env, int32_t agent, const polis_pixels_obs_opts *opts,
                              uint8_t *out, size_t cap)
{
    obs_layout l;
    polis_status st = obs_layout_of(env, agent, opts, &l);
    if (st) return st;
    int32_t n = polis_env_n_agents(env);
    size_t need = obs_need(&l, agent, n);
    if (!out)
        return polis_env_set_error(env, POLIS_ERR_INVALID,
                                   "pixels obs: out is NULL (%zu bytes needed)", need);
    if (cap < need)
        return polis_env_set_error(env, POLIS_ERR_LIMIT,
                                   "pixels obs: the buffer holds %zu bytes, %s needs %zu (%d x %d "
                                   "x %d observations, drawn at %d x %d x 3)",
                                   cap, agent < 0 ? "every agent" : "one agent", need, (int)l.h,
                                   (int)l.w, (int)l.ch, (int)l.fh, (int)l.fw);
    const polis_scene *s = NULL;
    if ((st = polis_env_scene_get(env, &s))) return st;
    frame f;
    frame_init(&f, env, opts->cell_px, opts->flags);
    int32_t first = agent < 0 ? 0 : agent, last = agent < 0 ? n - 1 : agent;
    for (int32_t a = first; a <= last; a++) {
        uint8_t *px = out + (size_t)(a - first) * l.bytes;
        draw_frame(&f, env, s, a, px, l.fw, l.vh * opts->cell_px);
        if (l.rows) draw_stats(env, s, a, &l, opts->cell_px, px);
        if (opts->downscale > 1 || opts->grey) reduce(&l, opts->downscale, px);
    }
    return POLIS_OK;
}
