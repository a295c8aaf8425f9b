/*
 * sv_obs.c — observations and action masks (README "Observations", "Masks";
 * specs/survival.md §9.1, §11.8).
 */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core.h"

static const int32_t DR[5] = {0, 0, 0, -1, 1};
static const int32_t DC[5] = {0, -1, 1, 0, 0};

int32_t sv_obs_channels(int32_t layout) { return layout == SV_OBS_MAC ? 22 : 21; }

int32_t sv_obs_len(int32_t layout)
{
    int32_t ch = sv_obs_channels(layout);
    return SV_VIEW_CELLS * ch + 22 + (layout != SV_OBS_CLASSIC);
}

int32_t sv_others_len(int32_t n_players) { return (n_players - 1) * 84; }

/* k/10 as the reference computes it: in half precision, then widened (§9.1). */
static float tenth(int32_t k)
{
    static const float T[10] = {
        0.0f, 0.0999755859375f, 0.199951171875f, 0.300048828125f, 0.39990234375f,
        0.5f, 0.60009765625f,   0.7001953125f,   0.7998046875f,   0.89990234375f};
    if (k >= 0 && k < 10) return T[k];
    /* other values (health below 0 when unclamped): round k/10 to 11 significant bits */
    double x = (double)k / 10.0;
    int e;
    frexp(x, &e);
    double scale = ldexp(1.0, 11 - e);
    return (float)(nearbyint(x * scale) / scale);
}

/* Whether the inventory and the four vitals are those last written (pl->obs_scal): they
 * change on a few steps in a hundred, so an unchanged buffer keeps them. */
static bool scalars_kept(const sv_player *pl)
{
#if defined(__SSE2__)
    const __m128i *s = (const __m128i *)(const void *)pl->obs_scal;
    __m128i e = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)pl->inv),
                                      _mm_loadu_si128(s)),
                      _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(pl->inv + 4)),
                                      _mm_loadu_si128(s + 1))),
        _mm_and_si128(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(pl->inv + 8)),
                                      _mm_loadu_si128(s + 2)),
                      _mm_cmpeq_epi32(_mm_setr_epi32(pl->health, pl->food, pl->drink, pl->energy),
                                      _mm_loadu_si128(s + 3))));
    return _mm_movemask_epi8(e) == 0xffff;
#else
    return memcmp(pl->inv, pl->obs_scal, sizeof pl->inv) == 0 && pl->health == pl->obs_scal[12] &&
           pl->food == pl->obs_scal[13] && pl->drink == pl->obs_scal[14] &&
           pl->energy == pl->obs_scal[15];
#endif
}

/* fresh: v was not written by this player last time, so every value is written */
static void write_scalars(const sv_world *w, sv_player *pl, float *v, bool alive_flag, bool fresh)
{
    if (fresh || !scalars_kept(pl)) {
        for (int32_t k = 0; k < SV_N_ITEMS; k++) v[k] = tenth(pl->inv[k]);
        v[12] = tenth(pl->health);
        v[13] = tenth(pl->food);
        v[14] = tenth(pl->drink);
        v[15] = tenth(pl->energy);
        memcpy(pl->obs_scal, pl->inv, sizeof pl->inv);
        pl->obs_scal[12] = pl->health;
        pl->obs_scal[13] = pl->food;
        pl->obs_scal[14] = pl->drink;
        pl->obs_scal[15] = pl->energy;
    }
    v += 16;
    for (int32_t d = 1; d <= 4; d++) *v++ = pl->dir == d ? 1.0f : 0.0f;
    *v++ = w->light;
    *v++ = pl->sleeping ? 1.0f : 0.0f;
    if (alive_flag) *v++ = pl->alive ? 1.0f : 0.0f;
}

/* Incremental: only view cells whose block changed since the last write into the same
 * buffer are rewritten (most do not, even when the player moves: grass next to grass), and
 * the few mob and player marks are cleared and set again. `seen` (NULL: every player) says
 * which players this one may see (seen[j] != 0): the others are not drawn, wherever they
 * stand (who sees whom, docs/visibility.md). */
void sv_write_obs(sv_world *w, int32_t agent, float *dst, const uint8_t *seen)
{
    sv_player *pl = &w->players[agent];
    int32_t layout = w->p.obs_layout, ch = sv_obs_channels(layout);
    int32_t block = SV_VIEW_CELLS * ch;
    uint8_t *view = pl->obs_view;
    bool fresh = pl->obs_dst != dst;
    if (fresh) {
        memset(dst, 0, sizeof(float) * (size_t)block);
        pl->obs_dst = dst;
    } else {
        for (int32_t k = 0; k < pl->obs_n; k++) dst[pl->obs_set[k]] = 0.0f;
    }
    uint8_t now[64];
    now[63] = view[63] = 0;
    int32_t r0 = pl->r - 3, c0 = pl->c - 4;
    bool cols_in = c0 >= 0 && c0 + SV_VIEW_COLS <= SV_MAP;
    bool rows_in = r0 >= 0 && r0 + SV_VIEW_ROWS <= SV_MAP;
    if (cols_in && rows_in) {
        /* the window inside the map (most steps): seven row copies, no test per row */
        for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++)
            memcpy(now + vr * SV_VIEW_COLS, &w->map[r0 + vr][c0], SV_VIEW_COLS);
    } else {
        for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++) {
            int32_t r = r0 + vr;
            uint8_t *out = now + vr * SV_VIEW_COLS;
            if ((uint32_t)r >= SV_MAP) {
                memset(out, SV_OUT_OF_BOUNDS, SV_VIEW_COLS);
            } else if (cols_in) {
                memcpy(out, w->map[r] + c0, SV_VIEW_COLS);
            } else {
                for (int32_t vc = 0; vc < SV_VIEW_COLS; vc++) {
                    int32_t c = c0 + vc;
                    out[vc] = (uint32_t)c < SV_MAP ? w->map[r][c] : SV_OUT_OF_BOUNDS;
                }
            }
        }
    }
    if (fresh) {
        for (int32_t i = 0; i < SV_VIEW_CELLS; i++) dst[i * ch + now[i]] = 1.0f;
    } else {
        /* the cells whose block changed, as bits, visited in order: no branch per cell (which
         * block a cell shows is as good as random to the branch predictor) */
        for (uint64_t diff = sv_bytes_differ(now, view); diff; diff &= diff - 1) {
            int32_t i = __builtin_ctzll(diff);
            dst[i * ch + view[i]] = 0.0f;
            dst[i * ch + now[i]] = 1.0f;
        }
    }
    memcpy(view, now, 64);
    uint16_t *set = pl->obs_set;
    int32_t n = 0;
    if (layout == SV_OBS_MAC && seen) {
        /* some players may be hidden: look at each, marking a cell once */
        for (int32_t j = 0; j < w->p.n_players; j++) {
            const sv_player *o = &w->players[j];
            if (j == agent || !o->alive || !seen[j]) continue;
            int32_t vr = o->r - r0, vc = o->c - c0;
            if ((uint32_t)vr >= SV_VIEW_ROWS || (uint32_t)vc >= SV_VIEW_COLS) continue;
            uint16_t at = (uint16_t)((vr * SV_VIEW_COLS + vc) * ch + 21);
            if (dst[at] == 0.0f) {
                dst[at] = 1.0f;
                set[n++] = at;
            }
        }
    } else if (layout == SV_OBS_MAC && w->p.n_players - 1 < SV_VIEW_CELLS) {
        /* fewer others than view cells: look at each of them */
        for (int32_t j = 0; j < w->p.n_players; j++) {
            const sv_player *o = &w->players[j];
            if (j == agent || !o->alive) continue;
            int32_t vr = o->r - r0, vc = o->c - c0;
            if ((uint32_t)vr < SV_VIEW_ROWS && (uint32_t)vc < SV_VIEW_COLS)
                set[n++] = (uint16_t)((vr * SV_VIEW_COLS + vc) * ch + 21);
        }
    } else if (layout == SV_OBS_MAC) {
        for (int32_t vr = 0; vr < SV_VIEW_ROWS; vr++) {
            int32_t r = r0 + vr;
            if ((uint32_t)r >= SV_MAP) continue;
            const uint8_t *pm = w->player_map[r];
            for (int32_t vc = 0; vc < SV_VIEW_COLS; vc++) {
                int32_t c = c0 + vc;
                if ((uint32_t)c >= SV_MAP || !pm[c]) continue;
                int32_t others = pm[c] - (pl->alive && r == pl->r && c == pl->c);
                if (others > 0) set[n++] = (uint16_t)((vr * SV_VIEW_COLS + vc) * ch + 21);
            }
        }
    }
    for (int32_t kind = 0; kind < SV_N_MOB_KINDS; kind++) {
        if (!w->n_active[kind]) continue;
        const sv_mob *ms = w->mobs[kind];
        /* without a branch on where a mob is: the slot is written, and kept when in view */
        for (int32_t s = 0; s < w->p.max_mobs[kind]; s++) {
            int32_t vr = ms[s].r - r0, vc = ms[s].c - c0;
            set[n] = (uint16_t)((vr * SV_VIEW_COLS + vc) * ch + 17 + kind);
            n += ms[s].active & ((uint32_t)vr < SV_VIEW_ROWS) & ((uint32_t)vc < SV_VIEW_COLS);
        }
    }
    for (int32_t k = 0; k < n; k++) dst[set[k]] = 1.0f;
    pl->obs_n = n;
    write_scalars(w, pl, dst + block, layout != SV_OBS_CLASSIC, fresh);
}

/* ShareStats: per other player (index order, self left out) a one-hot of its view cell, 12
 * inventory values, health, food, drink, energy, sleeping (all /10), and its facing; zeros
 * when it is dead, out of view or hidden from this player (`seen` as sv_write_obs's). */
void sv_write_others(const sv_world *w, int32_t agent, float *dst, const uint8_t *seen)
{
    const sv_player *me = &w->players[agent];
    memset(dst, 0, sizeof(float) * (size_t)sv_others_len(w->p.n_players));
    float *row = dst;
    for (int32_t j = 0; j < w->p.n_players; j++) {
        if (j == agent) continue;
        const sv_player *o = &w->players[j];
        int32_t vr = o->r - me->r + 3, vc = o->c - me->c + 4;
        if (o->alive && (!seen || seen[j]) && (uint32_t)vr < SV_VIEW_ROWS &&
            (uint32_t)vc < SV_VIEW_COLS) {
            row[vr * SV_VIEW_COLS + vc] = 1.0f;
            float *v = row + SV_VIEW_CELLS;
            for (int32_t k = 0; k < SV_N_ITEMS; k++) *v++ = tenth(o->inv[k]);
            *v++ = tenth(o->health);
            *v++ = tenth(o->food);
            *v++ = tenth(o->drink);
            *v++ = tenth(o->energy);
            *v++ = o->sleeping ? tenth(1) : 0.0f;
            v[o->dir - 1] = 1.0f;
        }
        row += 84;
    }
}

/* ---- masks ---------------------------------------------------------------------------------- */

uint32_t sv_legal(const sv_world *w, int32_t agent) { return sv_legal_seen(w, agent, NULL); }

uint32_t sv_legal_seen(const sv_world *w, int32_t agent, const uint8_t *seen)
{
    const sv_player *pl = &w->players[agent];
    uint32_t m = 1u;
    if (!pl->alive || pl->sleeping) return m;
    const int32_t *inv = pl->inv;
    /* the four moves, less the one facing where the player cannot go (only that one can
     * fail: a move the other way turns); then `do` on the facing tile, by block bits rather
     * than a jump on the block (which the predictor cannot learn) */
    m |= 1u << SV_LEFT | 1u << SV_RIGHT | 1u << SV_UP | 1u << SV_DOWN;
    int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir];
    if (sv_in_map(r, c)) {
        uint32_t b = 1u << w->map[r][c];
        bool mob = w->mob_map[r][c] != 0;
        bool go = !sv_solid(w->map[r][c]) && !mob;
        m &= ~((uint32_t)!go << pl->dir);
        bool ok = mob;
        if (!ok && w->p.pvp && sv_player_on(w, r, c, seen)) ok = true;
        ok |= (b & (1u << SV_TREE | 1u << SV_GRASS | 1u << SV_WATER | 1u << SV_RIPE_PLANT)) != 0;
        ok |= (b & (1u << SV_STONE | 1u << SV_COAL)) != 0 && inv[SV_INV_WOOD_PICKAXE] > 0;
        ok |= (b & 1u << SV_IRON) != 0 && inv[SV_INV_STONE_PICKAXE] > 0;
        ok |= (b & 1u << SV_DIAMOND) != 0 && inv[SV_INV_IRON_PICKAXE] > 0;
        m |= (uint32_t)ok << SV_DO;
    } else {
        m &= ~(1u << pl->dir);
    }
    m |= 1u; /* noop, also if the facing were 0 */
    if (pl->energy < 9) m |= 1u << SV_SLEEP;
    m |= sv_place_bits(w, pl, seen);
    /* the blocks of the eight tiles around, as bits */
    uint32_t around = 0;
    if (pl->r >= 1 && pl->r < SV_MAP - 1 && pl->c >= 1 && pl->c < SV_MAP - 1) {
        const uint8_t *up = &w->map[pl->r - 1][pl->c - 1], *mid = up + SV_MAP, *dn = mid + SV_MAP;
        around = 1u << up[0] | 1u << up[1] | 1u << up[2] | 1u << mid[0] | 1u << mid[2] |
                 1u << dn[0] | 1u << dn[1] | 1u << dn[2];
    } else {
        for (int32_t dr = -1; dr <= 1; dr++)
            for (int32_t dc = -1; dc <= 1; dc++) {
                int32_t rr = pl->r + dr, cc = pl->c + dc;
                if ((dr || dc) && sv_in_map(rr, cc)) around |= 1u << w->map[rr][cc];
            }
    }
    bool table = (around >> SV_TABLE) & 1u, furnace = (around >> SV_FURNACE) & 1u;
    if (table && inv[SV_INV_WOOD] >= 1) {
        m |= 1u << SV_MAKE_WOOD_PICKAXE | 1u << SV_MAKE_WOOD_SWORD;
        if (inv[SV_INV_STONE] >= 1) {
            m |= 1u << SV_MAKE_STONE_PICKAXE | 1u << SV_MAKE_STONE_SWORD;
            if (furnace && inv[SV_INV_IRON] >= 1 && inv[SV_INV_COAL] >= 1)
                m |= 1u << SV_MAKE_IRON_PICKAXE | 1u << SV_MAKE_IRON_SWORD;
        }
    }
    return m;
}
