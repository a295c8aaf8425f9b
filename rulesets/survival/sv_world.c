/*
 * sv_world.c — the survival world's memory layout, defaults, names and generation
 * (README "World generation"; specs/survival.md §2).
 */
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "core.h"

const char *const sv_action_names[SV_N_ACTIONS] = {"noop",
                                                   "left",
                                                   "right",
                                                   "up",
                                                   "down",
                                                   "do",
                                                   "sleep",
                                                   "place_stone",
                                                   "place_table",
                                                   "place_furnace",
                                                   "place_plant",
                                                   "make_wood_pickaxe",
                                                   "make_stone_pickaxe",
                                                   "make_iron_pickaxe",
                                                   "make_wood_sword",
                                                   "make_stone_sword",
                                                   "make_iron_sword"};

const char *const sv_achievement_names[SV_N_ACHIEVEMENTS] = {
    "collect_wood",      "place_table",        "eat_cow",          "collect_sapling",
    "collect_drink",     "make_wood_pickaxe",  "make_wood_sword",  "place_plant",
    "defeat_zombie",     "collect_stone",      "place_stone",      "eat_plant",
    "defeat_skeleton",   "make_stone_pickaxe", "make_stone_sword", "wake_up",
    "place_furnace",     "collect_coal",       "collect_iron",     "collect_diamond",
    "make_iron_pickaxe", "make_iron_sword"};

const char *const sv_block_names[SV_N_BLOCKS] = {
    "invalid", "out_of_bounds", "grass", "water",   "stone", "tree", "wood",  "path",      "coal",
    "iron",    "diamond",       "table", "furnace", "sand",  "lava", "plant", "ripe_plant"};

const char *const sv_item_names[SV_N_ITEMS] = {
    "wood",         "stone",         "coal",         "iron",       "diamond",     "sapling",
    "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword"};

const char *const sv_cause_names[SV_N_CAUSES] = {"none", "zombie", "arrow",
                                                 "lava", "needs",  "player"};

const char *const sv_mob_names[SV_N_MOB_KINDS] = {"zombie", "cow", "skeleton", "arrow"};

void sv_params_default(sv_params *p, int32_t n_players)
{
    memset(p, 0, sizeof *p);
    p->n_players = n_players;
    p->day_length = 300;
    p->always_diamond = true;
    p->zombie_health = 5;
    p->cow_health = 3;
    p->skeleton_health = 3;
    p->despawn_distance = 14;
    p->spawn_cow_chance = 0.1f;
    p->spawn_zombie_base_chance = 0.02f;
    p->spawn_zombie_night_chance = 0.1f;
    p->spawn_skeleton_chance = 0.05f;
    p->max_mobs[SV_ZOMBIE] = 3;
    p->max_mobs[SV_COW] = 3;
    p->max_mobs[SV_SKELETON] = 2;
    p->max_mobs[SV_ARROW] = 3;
    p->max_plants = 10;
    p->count_scaled_damage = true;
    p->tie_break = SV_TIE_INTENDED;
    p->obs_layout = n_players > 1 ? SV_OBS_MAC : SV_OBS_CLASSIC;
    p->pvp_damage = 1;
    p->pvp_heal_halves = 1;
    p->pvp_attack_reward = 1.0f;
    p->pvp_attacked_penalty = -0.5f;
    p->prox_radius = -1;
    for (int k = 0; k < SV_N_ACHIEVEMENTS; k++) p->weights[k] = 1.0f;
}

/* ---- memory: one block, arrays after the struct --------------------------------------- */

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

static size_t note_cap(const sv_params *p) { return (size_t)p->n_players * 32 + 64; }
/* the proximity counters: a padded row per player (core.h, sv_pair) */
static size_t n_pairs(const sv_params *p)
{
    return (size_t)p->n_players * (size_t)sv_pad8(p->n_players);
}

static int32_t light_table(const sv_params *p)
{
    return p->day_length > 0 && p->day_length <= SV_LIGHT_TABLE ? p->day_length : 0;
}

size_t sv_world_bytes(const sv_params *p)
{
    size_t n = ALIGN16(sizeof(sv_world));
    for (int k = 0; k < SV_N_MOB_KINDS; k++)
        n += ALIGN16(sizeof(sv_mob) * (size_t)(p->max_mobs[k] + 1));
    n += ALIGN16(sizeof(sv_plant) * (size_t)(p->max_plants + 1));
    n += ALIGN16(sizeof(sv_player) * (size_t)p->n_players);
    n += ALIGN16(sizeof(uint16_t) * (size_t)p->n_players * SV_VIEW_CELLS * 8);
    n += 2 * ALIGN16(sizeof(int32_t) * (size_t)p->n_players);
    n += ALIGN16(sizeof(sv_note) * note_cap(p));
    n += ALIGN16(sizeof(int32_t) * n_pairs(p));
    n += 2 * ALIGN16(sizeof(int32_t) * (size_t)sv_pad8(p->n_players));
    n += ALIGN16(sizeof(float) * (size_t)light_table(p));
    return n;
}

sv_world *sv_layout(void *mem, const sv_params *p)
{
    uint8_t *b = mem;
    sv_world *w = (sv_world *)(void *)b;
    b += ALIGN16(sizeof(sv_world));
    w->p = *p;
    for (int k = 0; k < SV_N_MOB_KINDS; k++) {
        w->mobs[k] = (sv_mob *)(void *)b;
        b += ALIGN16(sizeof(sv_mob) * (size_t)(p->max_mobs[k] + 1));
    }
    w->plants = (sv_plant *)(void *)b;
    b += ALIGN16(sizeof(sv_plant) * (size_t)(p->max_plants + 1));
    w->players = (sv_player *)(void *)b;
    b += ALIGN16(sizeof(sv_player) * (size_t)p->n_players);
    for (int32_t i = 0; i < p->n_players; i++)
        w->players[i].obs_set = (uint16_t *)(void *)b + (size_t)i * SV_VIEW_CELLS * 8;
    b += ALIGN16(sizeof(uint16_t) * (size_t)p->n_players * SV_VIEW_CELLS * 8);
    w->order = (int32_t *)(void *)b;
    b += ALIGN16(sizeof(int32_t) * (size_t)p->n_players);
    w->saved = (int32_t *)(void *)b;
    b += ALIGN16(sizeof(int32_t) * (size_t)p->n_players);
    w->notes = (sv_note *)(void *)b;
    w->note_cap = (int32_t)note_cap(p);
    b += ALIGN16(sizeof(sv_note) * note_cap(p));
    w->prox_pairs = (int32_t *)(void *)b;
    b += ALIGN16(sizeof(int32_t) * n_pairs(p));
    w->prox_r = (int32_t *)(void *)b;
    b += ALIGN16(sizeof(int32_t) * (size_t)sv_pad8(p->n_players));
    w->prox_c = (int32_t *)(void *)b;
    b += ALIGN16(sizeof(int32_t) * (size_t)sv_pad8(p->n_players));
    for (int32_t i = p->n_players; i < sv_pad8(p->n_players); i++) w->prox_r[i] = -1000;
    w->light_of = (float *)(void *)b;
    w->n_light = light_table(p);
    for (int32_t t = 0; t < w->n_light; t++) w->light_of[t] = sv_light(t, p->day_length);
    return w;
}

/* ---- small shared helpers --------------------------------------------------------------- */

float sv_light(int32_t t, int32_t day_length)
{
    double phase = (double)(t % day_length) / (double)day_length + 0.3;
    double c = fabs(cos(3.14159265358979323846 * phase));
    return (float)(1.0 - c * c * c);
}

double sv_proximity(const sv_world *w, int32_t i, int32_t j)
{
    int32_t n = w->p.n_players;
    if (i == j || i < 0 || j < 0 || i >= n || j >= n || w->timestep < 1) return -1.0;
    int32_t k = i < j ? sv_pair(i, j, n) : sv_pair(j, i, n);
    return (double)w->prox_pairs[k] / (double)w->timestep;
}

double sv_proximity_mean(const sv_world *w)
{
    int32_t n = w->p.n_players;
    if (n < 2 || w->timestep < 1) return -1.0;
    return (double)w->prox_sum / ((double)n * (n - 1) / 2.0 * (double)w->timestep);
}

/* ---- noise ------------------------------------------------------------------------------- */

static inline float uniform(polis_rng *rng)
{
    return (float)(polis_rng_next(rng) >> 8) * (1.0f / 16777216.0f);
}

/* uniform(rng) < t and uniform(rng) > t as integer compares of the draw's top 24 bits (a
 * 24-bit integer times 2^-24 is exact in a float, so the answers are the same). The bounds
 * fold to constants for a constant t. */
static inline bool draw_below(polis_rng *rng, float t)
{
    return (polis_rng_next(rng) >> 8) < (uint32_t)ceilf(t * 16777216.0f);
}

static inline bool draw_above(polis_rng *rng, float t)
{
    return (polis_rng_next(rng) >> 8) > (uint32_t)floorf(t * 16777216.0f);
}

static inline float fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }

/* The smallest and largest value of a map-sized field (GCC does not vectorise a float
 * min/max reduction on its own, and this runs four times per reset). */
static void field_range(const float *f, float *out_lo, float *out_hi)
{
#if defined(__SSE2__)
    /* four independent chains: one chain waits on each min/max's latency */
    __m128 lo = _mm_loadu_ps(f), hi = lo, lo1 = lo, hi1 = lo, lo2 = lo, hi2 = lo, lo3 = lo,
           hi3 = lo;
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k += 16) {
        __m128 x0 = _mm_loadu_ps(f + k), x1 = _mm_loadu_ps(f + k + 4), x2 = _mm_loadu_ps(f + k + 8),
               x3 = _mm_loadu_ps(f + k + 12);
        lo = _mm_min_ps(lo, x0);
        hi = _mm_max_ps(hi, x0);
        lo1 = _mm_min_ps(lo1, x1);
        hi1 = _mm_max_ps(hi1, x1);
        lo2 = _mm_min_ps(lo2, x2);
        hi2 = _mm_max_ps(hi2, x2);
        lo3 = _mm_min_ps(lo3, x3);
        hi3 = _mm_max_ps(hi3, x3);
    }
    lo = _mm_min_ps(_mm_min_ps(lo, lo1), _mm_min_ps(lo2, lo3));
    hi = _mm_max_ps(_mm_max_ps(hi, hi1), _mm_max_ps(hi2, hi3));
    float l[4], h[4];
    _mm_storeu_ps(l, lo);
    _mm_storeu_ps(h, hi);
#else
    float l[4] = {f[0], f[0], f[0], f[0]}, h[4] = {f[0], f[0], f[0], f[0]};
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k += 4)
        for (int32_t q = 0; q < 4; q++) {
            l[q] = f[k + q] < l[q] ? f[k + q] : l[q];
            h[q] = f[k + q] > h[q] ? f[k + q] : h[q];
        }
#endif
    *out_lo = l[0];
    *out_hi = h[0];
    for (int32_t q = 1; q < 4; q++) {
        *out_lo = l[q] < *out_lo ? l[q] : *out_lo;
        *out_hi = h[q] > *out_hi ? h[q] : *out_hi;
    }
}

/* One octave of Perlin noise at resolution (rr, rc) over the map. The field is left as
 * computed; (v - *lo) * *scale rescales a value to [0, 1], which the passes that read the
 * field do as they read it (a pass over the field less than rescaling it here).
 * Along a row the fraction fx is fixed, so each lattice column b contributes a line in fy:
 * x0 = A[b] + B[b] * fy and x1 = A[b+1] + B[b+1] * (fy - 1), the blends of the corner dot
 * products across the row's two lattice rows; the inner loop is then a few flops per cell
 * with loop-invariant coefficients, which the compiler vectorises. */
typedef struct sv_scale {
    float lo, scale;
} sv_scale;

static void perlin(polis_rng *rng, int32_t rr, int32_t rc, float *out, sv_scale *sc)
{
    float gc[17 * 33], gs[17 * 33], A[33], B[33], fys[SV_MAP], vs[SV_MAP];
    int32_t nc = rc + 1;
    for (int32_t i = 0; i < (rr + 1) * nc; i++) {
        float th = 6.28318530717958647692f * uniform(rng);
        gc[i] = cosf(th);
        gs[i] = sinf(th);
    }
    int32_t dr = SV_MAP / rr, dc = SV_MAP / rc;
    for (int32_t j = 0; j < dc; j++) {
        fys[j] = (float)j / (float)dc;
        vs[j] = fade(fys[j]);
    }
    for (int32_t i = 0; i < SV_MAP; i++) {
        int32_t a = i / dr;
        float fx = (float)(i % dr) / (float)dr, u = fade(fx);
        const float *c0 = gc + a * nc, *c1 = c0 + nc, *s0 = gs + a * nc, *s1 = s0 + nc;
        for (int32_t b = 0; b < nc; b++) {
            A[b] = c0[b] * fx * (1.0f - u) + c1[b] * (fx - 1.0f) * u;
            B[b] = s0[b] * (1.0f - u) + s1[b] * u;
        }
        float *row = out + i * SV_MAP;
        for (int32_t b = 0; b < rc; b++) {
            float a0 = A[b], b0 = B[b], a1 = A[b + 1], b1 = B[b + 1];
            float *cell = row + b * dc;
            for (int32_t j = 0; j < dc; j++) {
                float fy = fys[j];
                float x0 = a0 + b0 * fy, x1 = a1 + b1 * (fy - 1.0f);
                cell[j] = 1.41421356237f * (x0 + vs[j] * (x1 - x0));
            }
        }
    }
    float hi;
    field_range(out, &sc->lo, &hi);
    sc->scale = hi > sc->lo ? 1.0f / (hi - sc->lo) : 0.0f;
}

static inline float rescaled(float v, sv_scale sc) { return (v - sc.lo) * sc.scale; }

/* ---- generation --------------------------------------------------------------------------- */

/* Bit j set when row[j] is `block` / when f[j] > t / when the mob slot row[j] is empty, for a
 * row of SV_MAP tiles: the passes that draw only on some tiles visit those bits in order
 * instead of branching on every tile (a branch on noise mispredicts about half the time). */
uint64_t sv_row_is(const uint8_t *row, uint8_t block)
{
    uint64_t bits = 0;
#if defined(__SSE2__)
    __m128i b = _mm_set1_epi8((char)block);
    for (int32_t q = 0; q < SV_MAP; q += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(row + q));
        bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, b)) << q;
    }
#else
    for (int32_t j = 0; j < SV_MAP; j++) bits |= (uint64_t)(row[j] == block) << j;
#endif
    return bits;
}

uint64_t sv_row_free(const uint16_t *row)
{
    uint64_t bits = 0;
#if defined(__SSE2__)
    __m128i z = _mm_setzero_si128();
    for (int32_t q = 0; q < SV_MAP; q += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(row + q));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(row + q + 8));
        __m128i e = _mm_packs_epi16(_mm_cmpeq_epi16(a, z), _mm_cmpeq_epi16(b, z));
        bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(e) << q;
    }
#else
    for (int32_t j = 0; j < SV_MAP; j++) bits |= (uint64_t)(row[j] == 0) << j;
#endif
    return bits;
}

uint64_t sv_bytes_differ(const uint8_t *a, const uint8_t *b)
{
    uint64_t same = 0;
#if defined(__SSE2__)
    for (int32_t q = 0; q < 64; q += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + q));
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + q));
        same |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) << q;
    }
#else
    for (int32_t j = 0; j < 64; j++) same |= (uint64_t)(a[j] == b[j]) << j;
#endif
    return ~same;
}

/* bit j: f[j] rescaled is above t */
static uint64_t row_above(const float *f, sv_scale sc, float t)
{
    uint64_t bits = 0;
#if defined(__SSE2__)
    __m128 tv = _mm_set1_ps(t), lo = _mm_set1_ps(sc.lo), scale = _mm_set1_ps(sc.scale);
    for (int32_t q = 0; q < SV_MAP; q += 4) {
        __m128 v = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(f + q), lo), scale);
        bits |= (uint64_t)(uint32_t)_mm_movemask_ps(_mm_cmpgt_ps(v, tv)) << q;
    }
#else
    for (int32_t j = 0; j < SV_MAP; j++) bits |= (uint64_t)(rescaled(f[j], sc) > t) << j;
#endif
    return bits;
}

/* out = the transpose of the map-sized field f, in 4 x 4 blocks. */
static void transpose(const float *f, float *out)
{
#if defined(__SSE2__)
    for (int32_t i = 0; i < SV_MAP; i += 4)
        for (int32_t j = 0; j < SV_MAP; j += 4) {
            __m128 r0 = _mm_loadu_ps(f + (j + 0) * SV_MAP + i),
                   r1 = _mm_loadu_ps(f + (j + 1) * SV_MAP + i),
                   r2 = _mm_loadu_ps(f + (j + 2) * SV_MAP + i),
                   r3 = _mm_loadu_ps(f + (j + 3) * SV_MAP + i);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(out + (i + 0) * SV_MAP + j, r0);
            _mm_storeu_ps(out + (i + 1) * SV_MAP + j, r1);
            _mm_storeu_ps(out + (i + 2) * SV_MAP + j, r2);
            _mm_storeu_ps(out + (i + 3) * SV_MAP + j, r3);
        }
#else
    for (int32_t i = 0; i < SV_MAP; i++)
        for (int32_t j = 0; j < SV_MAP; j++) out[i * SV_MAP + j] = f[j * SV_MAP + i];
#endif
}

#if defined(__SSE2__)
/* 16 cells of the layer passes at a time: a comparison of 16 floats gives a byte mask
 * (0xff where true), the same comparison as the scalar code's, so the same map. */
typedef struct f16 {
    __m128 v[4];
} f16;

static inline f16 load16(const float *f)
{
    f16 x = {{_mm_loadu_ps(f), _mm_loadu_ps(f + 4), _mm_loadu_ps(f + 8), _mm_loadu_ps(f + 12)}};
    return x;
}

/* 16 values of a field rescaled as they are loaded */
static inline f16 load16_rescaled(const float *f, sv_scale sc)
{
    __m128 lo = _mm_set1_ps(sc.lo), scale = _mm_set1_ps(sc.scale);
    f16 x = load16(f);
    for (int q = 0; q < 4; q++) x.v[q] = _mm_mul_ps(_mm_sub_ps(x.v[q], lo), scale);
    return x;
}

static inline void store16(float *f, f16 x)
{
    for (int q = 0; q < 4; q++) _mm_storeu_ps(f + 4 * q, x.v[q]);
}

static inline __m128i pack16(__m128 a, __m128 b, __m128 c, __m128 d)
{
    return _mm_packs_epi16(_mm_packs_epi32(_mm_castps_si128(a), _mm_castps_si128(b)),
                           _mm_packs_epi32(_mm_castps_si128(c), _mm_castps_si128(d)));
}

static inline __m128i gt16(f16 x, float t)
{
    __m128 tv = _mm_set1_ps(t);
    return pack16(_mm_cmpgt_ps(x.v[0], tv), _mm_cmpgt_ps(x.v[1], tv), _mm_cmpgt_ps(x.v[2], tv),
                  _mm_cmpgt_ps(x.v[3], tv));
}

static inline __m128i lt16(f16 x, float t)
{
    __m128 tv = _mm_set1_ps(t);
    return pack16(_mm_cmplt_ps(x.v[0], tv), _mm_cmplt_ps(x.v[1], tv), _mm_cmplt_ps(x.v[2], tv),
                  _mm_cmplt_ps(x.v[3], tv));
}

/* the block `block` where mask is set, else b */
static inline __m128i put16(__m128i mask, uint8_t block, __m128i b)
{
    return _mm_or_si128(_mm_and_si128(mask, _mm_set1_epi8((char)block)), _mm_andnot_si128(mask, b));
}
#endif

/* The layer passes: water and sand from the water field; stone, tunnels and caves from the
 * mountain and tunnel fields; lava from the mountain and tree fields. The water and mountain
 * fields are stored rescaled by the pass that reads them first (the ores and the lava read
 * them again), the tunnel and tree fields rescaled as they are read. One tile's blocks: */
static inline uint8_t water_tile(float w)
{
    uint8_t sand = (uint8_t)(w > 0.6f && w < 0.75f ? SV_SAND : SV_GRASS);
    return (uint8_t)(w > 0.7f ? SV_WATER : sand);
}

/* b: the tile's block so far; mv, t, tt, w: the mountain, tunnel, transposed tunnel and
 * water fields there */
static inline uint8_t stone_tile(uint8_t b, float mv, float t, float tt, float w)
{
    b = mv > 0.7f ? SV_STONE : b;
    b = mv > 0.7f && (t > 0.8f || tt > 0.8f) ? SV_PATH : b;
    return mv > 0.85f && w > 0.4f ? SV_PATH : b; /* caves */
}

static void layer_water(float *water, sv_scale sc, uint8_t *m)
{
#if defined(__SSE2__)
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k += 16) {
        f16 v = load16_rescaled(water + k, sc);
        store16(water + k, v);
        __m128i b =
            put16(_mm_and_si128(gt16(v, 0.6f), lt16(v, 0.75f)), SV_SAND, _mm_set1_epi8(SV_GRASS));
        _mm_storeu_si128((__m128i *)(void *)(m + k), put16(gt16(v, 0.7f), SV_WATER, b));
    }
#else
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k++) {
        water[k] = rescaled(water[k], sc);
        m[k] = water_tile(water[k]);
    }
#endif
}

/* the mountain field is rescaled and raised by 0.05 (two roundings, as two passes would) */
static void layer_stone(const float *water, float *mountain, sv_scale msc, const float *tunnel,
                        const float *ttunnel, sv_scale tsc, uint8_t *m)
{
#if defined(__SSE2__)
    const __m128 up = _mm_set1_ps(0.05f), lo = _mm_set1_ps(tsc.lo), scale = _mm_set1_ps(tsc.scale);
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k += 16) {
        f16 mv = load16_rescaled(mountain + k, msc);
        for (int q = 0; q < 4; q++) mv.v[q] = _mm_add_ps(mv.v[q], up);
        store16(mountain + k, mv);
        __m128i stone = gt16(mv, 0.7f);
        __m128i b = put16(stone, SV_STONE, _mm_loadu_si128((const __m128i *)(const void *)(m + k)));
        /* either tunnel field above 0.8 is their larger one above it (rescaling is monotone) */
        f16 t = load16(tunnel + k), tt = load16(ttunnel + k);
        for (int q = 0; q < 4; q++)
            t.v[q] = _mm_mul_ps(_mm_sub_ps(_mm_max_ps(t.v[q], tt.v[q]), lo), scale);
        __m128i path = gt16(t, 0.8f);
        b = put16(_mm_and_si128(stone, path), SV_PATH, b);
        __m128i cave = _mm_and_si128(gt16(mv, 0.85f), gt16(load16(water + k), 0.4f));
        _mm_storeu_si128((__m128i *)(void *)(m + k), put16(cave, SV_PATH, b));
    }
#else
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k++) {
        float mv = rescaled(mountain[k], msc);
        mountain[k] = mv + 0.05f;
        m[k] = stone_tile(m[k], mountain[k], rescaled(tunnel[k], tsc), rescaled(ttunnel[k], tsc),
                          water[k]);
    }
#endif
}

static void layer_lava(const float *mountain, const float *tree, sv_scale tsc, uint8_t *m)
{
#if defined(__SSE2__)
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k += 16) {
        __m128i lava = _mm_and_si128(gt16(load16(mountain + k), 0.85f),
                                     gt16(load16_rescaled(tree + k, tsc), 0.7f));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(m + k));
        _mm_storeu_si128((__m128i *)(void *)(m + k), put16(lava, SV_LAVA, b));
    }
#else
    for (int32_t k = 0; k < SV_MAP * SV_MAP; k++)
        m[k] = mountain[k] > 0.85f && rescaled(tree[k], tsc) > 0.7f ? SV_LAVA : m[k];
#endif
}

/* The start-area term of the rescaled water and mountain fields: prox - 1 is 0 at distance
 * 5 or more from the start, so only the 41 tiles nearer than that change. Their tiles
 * (k[]) and terms; the count. */
enum { START_TILES = 41 };
static int32_t start_area(int32_t *k, float *term)
{
    int32_t n = 0;
    for (int32_t dr = -4; dr <= 4; dr++)
        for (int32_t dc = -4; dc <= 4; dc++) {
            int32_t d = abs(dr) + abs(dc);
            if (d < 5) {
                k[n] = (SV_MAP / 2 + dr) * SV_MAP + SV_MAP / 2 + dc;
                term[n++] = (float)d / 5.0f - 1.0f;
            }
        }
    return n;
}

/* Each layer is one pass over the map without branches where possible, so the compiler
 * vectorises it; random draws happen only on the tiles they can change. */
void sv_generate(sv_world *w, polis_rng *rng)
{
    enum { N = SV_MAP * SV_MAP };
    float water[N], mountain[N], field[N], tfield[N];
    uint8_t *m = &w->map[0][0];

    sv_scale wsc, msc, tsc;
    int32_t start[START_TILES];
    float term[START_TILES];
    int32_t n_start = start_area(start, term);

    /* each pass decides every tile from the fields as rescaled, then the start area's tiles
     * again from their fields with the start term added (as adding it first would) */
    perlin(rng, 4, 4, water, &wsc);
    layer_water(water, wsc, m);
    for (int32_t q = 0; q < n_start; q++) {
        water[start[q]] += term[q];
        m[start[q]] = water_tile(water[start[q]]);
    }
    perlin(rng, 4, 4, mountain, &msc);
    /* tunnels: one (8, 32) field and its transpose */
    perlin(rng, 8, 32, field, &tsc);
    transpose(field, tfield);
    layer_stone(water, mountain, msc, field, tfield, tsc, m);
    for (int32_t q = 0; q < n_start; q++) {
        int32_t k = start[q];
        mountain[k] += term[q];
        m[k] = stone_tile(water_tile(water[k]), mountain[k], rescaled(field[k], tsc),
                          rescaled(tfield[k], tsc), water[k]);
    }
    /* ores, with independent draws on stone tiles only, in map order */
    for (int32_t i = 0; i < SV_MAP; i++)
        for (uint64_t bits = sv_row_is(m + i * SV_MAP, SV_STONE); bits; bits &= bits - 1) {
            int32_t k = i * SV_MAP + __builtin_ctzll(bits);
            if (draw_below(rng, 0.04f))
                m[k] = SV_COAL;
            else if (draw_below(rng, 0.03f))
                m[k] = SV_IRON;
            else if (mountain[k] > 0.8f && draw_below(rng, 0.005f))
                m[k] = SV_DIAMOND;
        }
    /* trees (a draw on each grass tile where the field is above 0.5), then lava over
     * everything */
    perlin(rng, 16, 16, field, &tsc);
    for (int32_t i = 0; i < SV_MAP; i++)
        for (uint64_t bits =
                 sv_row_is(m + i * SV_MAP, SV_GRASS) & row_above(field + i * SV_MAP, tsc, 0.5f);
             bits; bits &= bits - 1) {
            int32_t k = i * SV_MAP + __builtin_ctzll(bits);
            /* arithmetic, not a branch (GCC turns the choice into one; it is random) */
            m[k] = (uint8_t)(SV_GRASS + (SV_TREE - SV_GRASS) * draw_above(rng, 0.8f));
        }
    layer_lava(mountain, field, tsc, m);
    m[(SV_MAP / 2) * SV_MAP + SV_MAP / 2] = SV_GRASS;
    if (w->p.always_diamond) {
        /* one stone, drawn uniformly by its rank in map order, becomes a diamond */
        uint64_t stone[SV_MAP];
        int32_t stones = 0;
        for (int32_t i = 0; i < SV_MAP; i++) {
            stone[i] = sv_row_is(m + i * SV_MAP, SV_STONE);
            stones += sv_popcount(stone[i]);
        }
        if (stones > 0) {
            int32_t pick = (int32_t)polis_rng_below(rng, (uint32_t)stones);
            for (int32_t i = 0; i < SV_MAP; i++) {
                int32_t in_row = sv_popcount(stone[i]);
                if (pick >= in_row) {
                    pick -= in_row;
                    continue;
                }
                uint64_t bits = stone[i];
                while (pick-- > 0) bits &= bits - 1;
                m[i * SV_MAP + __builtin_ctzll(bits)] = SV_DIAMOND;
                break;
            }
        }
    }

    memset(w->mob_map, 0, sizeof w->mob_map);
    memset(w->player_map, 0, sizeof w->player_map);
    memset(w->placed_by, 0xff, sizeof w->placed_by);
    for (int k = 0; k < SV_N_MOB_KINDS; k++) {
        memset(w->mobs[k], 0, sizeof(sv_mob) * (size_t)w->p.max_mobs[k]);
        w->n_active[k] = 0;
    }
    w->next_uid = 1;
    w->map_rows = ~UINT64_C(0); /* a new map: every row for the scene to draw */
    if (w->p.ghost_mobs != SV_GHOST_OFF) {
        /* the reference's initial slots (spec §2.2): unused zombies hold 1 health and cows a
         * cow's, at (0, 0); they matter only to the ghost-mob quirk */
        for (int32_t q = 0; q < w->p.max_mobs[SV_ZOMBIE]; q++) w->mobs[SV_ZOMBIE][q].health = 1;
        for (int32_t q = 0; q < w->p.max_mobs[SV_COW]; q++)
            w->mobs[SV_COW][q].health = w->p.cow_health;
    }
    w->n_plants = 0;
    memset(w->prox_pairs, 0, sizeof(int32_t) * n_pairs(&w->p));
    w->prox_sum = 0;
    w->timestep = 0;
    w->light = sv_light(0, w->p.day_length);
    w->n_notes = 0;
    for (int32_t i = 0; i < w->p.n_players; i++) {
        sv_player *pl = &w->players[i];
        /* keep what the incremental observation writer knows about its buffer */
        uint16_t *keep_set = pl->obs_set;
        void *keep_dst = pl->obs_dst;
        int32_t keep_n = pl->obs_n;
        uint8_t keep_view[64];
        memcpy(keep_view, pl->obs_view, sizeof keep_view);
        memset(pl, 0, sizeof *pl);
        pl->obs_set = keep_set;
        pl->obs_dst = keep_dst;
        pl->obs_n = keep_n;
        memcpy(pl->obs_view, keep_view, sizeof keep_view);
        pl->r = SV_MAP / 2;
        pl->c = SV_MAP / 2;
        pl->dir = SV_UP;
        pl->alive = true;
        pl->health = pl->food = pl->drink = pl->energy = 9;
        w->player_map[SV_MAP / 2][SV_MAP / 2]++;
    }
}
