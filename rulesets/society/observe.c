/*
 * observe.c — the tensor observation of each agent (spec §14), into the kernel's buffers:
 *
 *   grid       i16 [2 + 2R][A][B]  indexed [channel][x][y] (x first, as AdaSociety)
 *                0          agents: id + 1 on each visible agent's cell (own cell: own id + 1)
 *                1          blocks (1)
 *                2 + r      recipe stations: -amount for input r, +amount for output r
 *                2 + R + r  piles: units of resource r
 *   inventory  i32 [R]      own units per resource
 *   position   i32 [2]      own (x, y)
 *   time       i32 [1]      steps completed in the episode
 *
 * R and the channel order are fixed when the tables freeze (the canonical resource order,
 * README "Resources"), so the layout never changes while agents discover things.
 *
 * Every field is written in the dtype the buffer holds ("observations" host API version 2,
 * writes_stored): with compact observations the grid is u8 or i8 when its declared ranges
 * fit a byte (docs/scenario.md), and the painters below then store one byte an element
 * straight into the caller's buffer (a copy of each painter with w8_ true), so nothing is
 * narrowed after them; the values are the same numbers either way.
 *
 * view "window" (Contract-like): A x B = (2h+1) x (2v+1) for the largest fov among the
 * players' jobs, centred on the agent; an agent with a smaller fov sees zeros beyond it.
 * view "map" (Exploration, spec §14.3): A x B = W x H, egocentric with the agent at
 * (W/2, H/2), merged with the views of the agents sharing their map with it (social
 * service): each shared window is placed at its owner's true position and filtered by its
 * owner's requirements. Cells nobody sees are 0. Values beyond the i16 range saturate.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Distinct (resources, recipes) visibility pairs the column merge of shared maps handles;
 * more fall back to the per-cell merge. */
#define SOC_COV_GROUPS 4

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

static inline int32_t lowest_bit(uint64_t v) /* v != 0 */
{
#if defined(__GNUC__)
    return __builtin_ctzll(v);
#else
    int32_t n = 0;
    while (!(v & 1u)) {
        v >>= 1;
        n++;
    }
    return n;
#endif
}

static inline int32_t bit_count(uint64_t v)
{
#if defined(__GNUC__)
    return __builtin_popcountll(v);
#else
    int32_t n = 0;
    for (; v; v &= v - 1) n++;
    return n;
#endif
}

static inline int16_t sat16(int32_t v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
}

/* A pile's units as the grid shows them: at most cap (soc->pile_obs, <= 32767). */
static inline int16_t pile16(int32_t v, int32_t cap) { return (int16_t)(v > cap ? cap : v); }

int32_t soc_views(soc *s, int32_t agent)
{
    s->views[0] = agent;
    if (!s->social || s->n_agents < 2) return 1;
    int32_t n = s->social->sharers(s->social->self, agent, POLIS_SOCIAL_SHARE_MAP, s->views + 1,
                                   s->n_agents - 1);
    if (n > s->n_agents - 1) n = s->n_agents - 1;
    return n < 0 ? 1 : 1 + n;
}

/* ---- incremental writing -------------------------------------------------------------------
 *
 * The kernel never clears an observation record: each writer owns its bytes, and a client
 * must not write into them (docs/kernel.md). So an agent's grid still holds what write_grid
 * painted there at the previous write, and clearing only the elements painted then gives the
 * same all-zero start as clearing the whole record: a 5x5 window paints a few dozen elements
 * of a 262 KB map-sized record (64x64, 32 channels), and the clear was most of the cost of
 * the map view (docs/performance-log.md). The record is cleared whole when its content is not
 * known (the first write into it, a record at another address than last time, a list that
 * overflowed) or when that is cheaper (small records, long lists): see write_grid and
 * og_cap in soc_register_observations. */

/* What painting needs, copied into a local at the top of each painting function so the
 * compiler keeps it in registers: through a pointer, every store into the int32 offset list
 * could alias the soc's int32 fields and forced them to be reloaded per element. */
typedef struct painter {
    void *o;                     /* int16_t elements, or uint8_t ones when w8 */
    const int32_t *ag, *bl, *rc; /* the agents, blocks and recipes layers */
    const uint16_t *kinds;
    const int32_t *piles;
    const int32_t *pcap; /* soc->pile_obs */
    const soc_recipe *rec;
    const soc_amount *amounts;
    size_t plane;
    int32_t R;
    int32_t *list;  /* element offsets written */
    int32_t n, cap; /* n > cap: overflowed */
    bool w8;        /* the record holds one byte an element (s->grid_w8) */
} painter;

/* rec_ (a constant in each painting function): list the element; false when p.cap == 0
 * (the record is cleared whole every time). w8_: the record holds bytes (p.w8), the value's
 * low byte stored (u8 and i8 both: every value fits the byte's dtype by the field's ranges). */
#define PUT(p, off, v)                                                                             \
    do {                                                                                           \
        size_t off_ = (off);                                                                       \
        if (w8_)                                                                                   \
            ((uint8_t *)(p).o)[off_] = (uint8_t)(v);                                               \
        else                                                                                       \
            ((int16_t *)(p).o)[off_] = (v);                                                        \
        if (rec_) {                                                                                \
            if ((p).n < (p).cap) (p).list[(p).n] = (int32_t)off_;                                  \
            (p).n += (p).n <= (p).cap;                                                             \
        }                                                                                          \
    } while (0)

/* Writes map cell `cell` at grid position `at`: agents and blocks always, a station's
 * recipe if recipe_seen(k), a pile's units of r if res_seen(r); the two visibility tests
 * come as a byte row (one owner's seen) or as bit sets (the union of several owners'). */
#define PAINT_CELL(p, cell, at, recipe_seen, res_seen)                                             \
    do {                                                                                           \
        int32_t ag_ = (p).ag[cell];                                                                \
        if (ag_) PUT(p, (size_t)(at), sat16(ag_));                                                 \
        if ((p).bl[cell]) PUT(p, (p).plane + (size_t)(at), 1);                                     \
        int32_t k = (p).rc[cell] - 1;                                                              \
        if (k >= 0 && (recipe_seen)) {                                                             \
            const soc_recipe *rc_ = &(p).rec[k];                                                   \
            size_t base_ = 2 * (p).plane + (size_t)(at);                                           \
            for (int32_t q_ = 0; q_ < rc_->n_in; q_++) {                                           \
                const soc_amount *a_ = &(p).amounts[rc_->in + q_];                                 \
                PUT(p, base_ + (size_t)a_->res * (p).plane, sat16(-a_->n));                        \
            }                                                                                      \
            for (int32_t q_ = 0; q_ < rc_->n_out; q_++) {                                          \
                const soc_amount *a_ = &(p).amounts[rc_->out + q_];                                \
                PUT(p, base_ + (size_t)a_->res * (p).plane, sat16(a_->n));                         \
            }                                                                                      \
        }                                                                                          \
        if ((p).kinds[cell]) {                                                                     \
            const int32_t *pile_ = (p).piles + (size_t)(cell) * (size_t)(p).R;                     \
            size_t base_ = (size_t)(2 + (p).R) * (p).plane + (size_t)(at);                         \
            for (int32_t r = 0; r < (p).R; r++)                                                    \
                if (pile_[r] && (res_seen))                                                        \
                    PUT(p, base_ + (size_t)r * (p).plane, pile16(pile_[r], (p).pcap[r]));          \
        }                                                                                          \
    } while (0)

/* Paints owner's window into viewer's grid: torus (map view) puts the viewer's own cell at
 * (W/2, H/2), otherwise the window is centred on (hmax, vmax).
 * The map and grid coordinates are wrapped once per window and then stepped by one with a
 * compare: two soc_wrap divisions per cell were the hottest instructions of write_grid
 * (docs/performance-log.md). Stepping wraps exactly as soc_wrap(first + k) does. */
static ALWAYS_INLINE void paint_as(const soc *s, int32_t viewer, int32_t owner, bool torus,
                                   painter *pp, const bool rec_, const bool w8_)
{
    painter p = *pp;
    const soc_job *job = &s->jobs[s->agent_job[owner]];
    const int32_t W = s->W, H = s->H, B = s->B, R = s->R;
    /* what owner's inventory lets it see: vis[r] resources, vis[R + k] recipes */
    const uint8_t *vis = s->seen + (size_t)owner * (size_t)(R + s->K);
    const int32_t x0 = soc_wrap(s->ax[owner] - job->fov_h, W);
    const int32_t y0 = soc_wrap(s->ay[owner] - job->fov_v, H);
    const int32_t i0 = torus ? soc_wrap(x0 - s->ax[viewer] + W / 2, W) : s->hmax - job->fov_h;
    const int32_t j0 = torus ? soc_wrap(y0 - s->ay[viewer] + H / 2, H) : s->vmax - job->fov_v;
    int32_t x = x0, i = i0;
    for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++) {
        int32_t y = y0, j = j0;
        for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
            int32_t cell = y * W + x, at = i * B + j;
            PAINT_CELL(p, cell, at, vis[R + k], vis[r]);
            if (++y == H) y = 0;
            if (++j == H && torus) j = 0;
        }
        if (++x == W) x = 0;
        if (++i == W && torus) i = 0;
    }
    pp->n = p.n;
}

/* Painting without the list is a separate copy: small records (Contract's window) were
 * 10% slower with the listing's test in every store. Painting bytes is a copy of its own too. */
static void paint_listed(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, true, false);
}

static void paint_unlisted(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, false, false);
}

static void paint_listed8(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, true, true);
}

static void paint_unlisted8(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, false, true);
}

static void paint(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    if (pp->w8)
        (pp->cap ? paint_listed8 : paint_unlisted8)(s, viewer, owner, torus, pp);
    else
        (pp->cap ? paint_listed : paint_unlisted)(s, viewer, owner, torus, pp);
}

/* ---- merged views -----------------------------------------------------------------------
 *
 * An agent's map view merged with the maps shared with it is the union of its owners'
 * windows, each covered cell painted once with the union of what the owners covering it see
 * (an owner sees a station's recipe or a pile's resource by its own inventory; the values
 * written never depend on which owner saw a cell, only whether one did). Painting every
 * window in turn painted the same cells up to P times (docs/performance-log.md).
 *
 * The union depends only on the set of owners, not on the viewer: it is built in map
 * coordinates into one of SOC_MV_SLOTS slots and each viewer with the same owners (in the
 * Social Structure games a group shares its maps, so every member has the same set) only
 * shifts the slot's elements to its own position and stores them. The cells' elements come
 * from a table built once per observation pass that uses slots, shared by all of them:
 * adding a covered cell copies its few nonzero elements instead of reading the layers, the
 * recipe's amounts and the R pile counts. Everything here is valid for one pass: the OBSERVE
 * hook starts a new one, and the world does not change while the observations are written. */

#define SOC_MV_SLOTS 4
/* A changed cell's (x, y) as x << LV_Y_BITS | y (lv_dxy, and an LV_CELL event's id), divided
 * once per changed cell in lv_scan rather than once per viewer's event or slot (an idiv
 * showed in the samples). */
#define LV_Y_BITS 12
_Static_assert(SOC_MAX_MAP <= 1 << LV_Y_BITS, "a map row or column fits LV_Y_BITS");
#define SOC_PT_MAX (1 << 20) /* the most table elements (see soc_register_observations) */

/* One nonzero element of a cell: its offset in a grid whose own cell is the map's (0, 0)
 * (channel x plane + x B + y), its value and its cell's map coordinates. The table and the
 * merged views hold the same records, so building a view copies them whole. */
typedef struct soc_pel {
    int32_t at;
    int16_t val;
    int16_t x, y; /* SOC_MAX_MAP fits */
    int16_t res;  /* a pile's resource (what an owner must see), else -1 */
} soc_pel;

typedef struct soc_mview {
    uint32_t pass; /* the last pass a viewer looked it up in; 0: unused */
    int32_t n_owners;
    uint64_t hash;   /* of the owner set, order-independent */
    int32_t *owners; /* [n_agents] */
    int32_t n_el;
    soc_pel *el;      /* [pt_cap] the union, when el_pass is this pass */
    uint32_t el_pass; /* the pass el was built in */
    uint32_t gen;     /* changes whenever the slot is given another owner set */
    /* kept views (mk_on): the coverage at pass upass, each of ng vis pairs a bit set per
     * map column; ng 0: not known. dl: what changed from the pass before, when dpass is
     * this pass (mv_track). */
    uint32_t upass, dpass;
    int32_t ng;
    uint64_t gres[SOC_COV_GROUPS], grec[SOC_COV_GROUPS];
    uint64_t *cols; /* [SOC_COV_GROUPS][W] */
    int32_t n_dl;
    soc_pel *dl; /* [pt_cap] */
} soc_mview;

static void lv_pass_start(soc *s);
static void lv_scan(soc *s);

static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    soc *s = ud;
    if (++s->pt_pass == 0) { /* wrapped: no slot, table or live view may look current */
        for (int32_t i = 0; s->mv && i < SOC_MV_SLOTS; i++) {
            s->mv[i].pass = s->mv[i].el_pass = s->mv[i].upass = s->mv[i].dpass = 0;
            s->mv[i].ng = 0;
        }
        for (int32_t v = 0; s->mk_slot && v < s->n_agents; v++) s->mk_slot[v] = -1;
        s->pt_built = s->pf_built = 0;
        s->pt_pass = 1;
        s->lv_synced = false;
        s->lv_resume = 1;
        s->lv_cok = false;
    }
    /* The table and the slots pay when owner sets repeat within a pass (a group sharing its
     * maps); when they do not (Exploration's random sharing) building them costs more than
     * it saves and the pass paints each view directly. The last pass with merged views
     * decides (while painting directly, one pass in 16 looks): a slot is built once and
     * painted by every repeat, so at least one viewer in three repeating a set is where the
     * two cost about the same (docs/performance-log.md). */
    const bool merged = s->mv_viewers > 0;
    if (s->pt_cap) {
        if (s->mv_viewers) s->mv_use = s->mv_hits * 3 >= s->mv_viewers;
        s->mv_viewers = s->mv_hits = 0;
    }
    if (s->lv_on) lv_pass_start(s);
    if (s->mk_on) {
        /* kept slots need this pass's changes to the world (the live views, when active,
         * have compared already) and whether any map sharing changed */
        if (s->mv_use && merged && s->lv_cpass != s->pt_pass) lv_scan(s);
        if (s->lv_journal) {
            const uint64_t seq = s->social->share_seq(s->social->self);
            s->mk_same = s->mk_seq_ok && seq == s->mk_seq;
            s->mk_seq = seq;
            s->mk_seq_ok = true;
        } else { /* no social service: every agent's owners are itself */
            s->mk_same = !s->social;
        }
    }
    return POLIS_OK;
}

static void pt_build(soc *s)
{
    const int32_t *ag = soc_layer(s, s->L_agents, 0), *bl = soc_layer(s, s->L_blocks, 0),
                  *rc = soc_layer(s, s->L_recipes, 0);
    const int32_t R = s->R, W = s->W, H = s->H, B = s->B;
    const int32_t plane = s->A * s->B;
    soc_pel *el = s->pt_el;
    int32_t ne = 0;
    for (int32_t y = 0, cell = 0; y < H; y++)
        for (int32_t x = 0; x < W; x++, cell++) {
            s->pt_start[cell] = ne;
            const int32_t at = x * B + y;
            const int16_t x16 = (int16_t)x, y16 = (int16_t)y;
            uint64_t need_rec = 0, need_res = 0;
            if (ag[cell]) el[ne++] = (soc_pel){at, sat16(ag[cell]), x16, y16, -1};
            if (bl[cell]) el[ne++] = (soc_pel){plane + at, 1, x16, y16, -1};
            const int32_t first_rec = ne;
            const int32_t k = rc[cell] - 1;
            if (k >= 0) {
                const soc_recipe *rec = &s->rec[k];
                const soc_amount *a = &s->amounts[rec->in];
                for (int32_t q = 0; q < rec->n_in; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(-a->n), x16, y16, -1};
                a = &s->amounts[rec->out];
                for (int32_t q = 0; q < rec->n_out; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(a->n), x16, y16, -1};
                need_rec = (uint64_t)1 << k;
            }
            s->pt_part[2 * cell] = first_rec;
            s->pt_part[2 * cell + 1] = ne;
            s->pt_need[2 * cell] = need_rec & -(uint64_t)(ne > first_rec);
            if (s->kinds[cell]) {
                const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
                for (int32_t r = 0; r < R; r++)
                    if (pile[r]) {
                        el[ne++] = (soc_pel){(2 + R + r) * plane + at,
                                             pile16(pile[r], s->pile_obs[r]), x16, y16, (int16_t)r};
                        need_res |= (uint64_t)1 << r;
                    }
            }
            s->pt_need[2 * cell + 1] = need_res;
        }
    s->pt_start[s->cells] = ne;
    s->pt_built = s->pt_pass;
}

/* The table again, for owners that all see (vres, vrec): only the elements they paint, the
 * cells by column (x H + y), so the covered run of a column in a window's union is one
 * contiguous range, copied whole. In the Social Structure games a union's owners nearly
 * always see the same, and copying the cells' elements one cell at a time, each filtered,
 * was most of building a merged view (docs/performance-log.md). */
static void pf_build(soc *s, uint64_t vres, uint64_t vrec)
{
    const int32_t *ag = soc_layer(s, s->L_agents, 0), *bl = soc_layer(s, s->L_blocks, 0),
                  *rc = soc_layer(s, s->L_recipes, 0);
    const int32_t R = s->R, W = s->W, H = s->H, B = s->B;
    const int32_t plane = s->A * s->B;
    soc_pel *el = s->pf_el;
    int32_t ne = 0;
    for (int32_t x = 0, at0 = 0, col = 0; x < W; x++, at0 += B)
        for (int32_t y = 0, cell = x; y < H; y++, cell += W) {
            s->pf_start[col++] = ne;
            const int32_t at = at0 + y;
            const int16_t x16 = (int16_t)x, y16 = (int16_t)y;
            if (ag[cell]) el[ne++] = (soc_pel){at, sat16(ag[cell]), x16, y16, -1};
            if (bl[cell]) el[ne++] = (soc_pel){plane + at, 1, x16, y16, -1};
            const int32_t k = rc[cell] - 1;
            if (k >= 0 && ((vrec >> k) & 1u)) {
                const soc_recipe *rec = &s->rec[k];
                const soc_amount *a = &s->amounts[rec->in];
                for (int32_t q = 0; q < rec->n_in; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(-a->n), x16, y16, -1};
                a = &s->amounts[rec->out];
                for (int32_t q = 0; q < rec->n_out; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(a->n), x16, y16, -1};
            }
            if (s->kinds[cell]) {
                const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
                for (int32_t r = 0; r < R; r++)
                    if (pile[r] && ((vres >> r) & 1u))
                        el[ne++] = (soc_pel){(2 + R + r) * plane + at,
                                             pile16(pile[r], s->pile_obs[r]), x16, y16, (int16_t)r};
            }
        }
    s->pf_start[W * H] = ne;
    s->pf_built = s->pt_pass;
    s->pf_res = vres;
    s->pf_rec = vrec;
}

/* Appends the cell's elements that owners seeing (vres, vrec) paint: a cell's elements are
 * its agent and block (always painted), its recipe's amounts (painted together) and its
 * piles (each by its resource), in that order, so the first two parts are copied whole when
 * the recipe is seen and the piles one by one only when some are not. Each cell at most
 * once per slot, so the store ahead of the count stays inside el. */
static inline void mv_emit(const soc *s, soc_mview *mv, int32_t cell, uint64_t vres, uint64_t vrec)
{
    const int32_t b = s->pt_start[cell], e = s->pt_start[cell + 1];
    if (b == e) return;
    const int32_t piles = s->pt_part[2 * cell + 1];
    soc_pel *out = mv->el + mv->n_el;
    const soc_pel *in = s->pt_el + b;
    const int32_t n = (s->pt_need[2 * cell] & ~vrec) ? s->pt_part[2 * cell] - b : piles - b;
    for (int32_t q = 0; q < n; q++) out[q] = in[q];
    int32_t m = n;
    if (!(s->pt_need[2 * cell + 1] & ~vres)) {
        for (int32_t q = piles - b; q < e - b; q++) out[m++] = in[q];
    } else {
        for (int32_t q = piles - b; q < e - b; q++) {
            out[m] = in[q];
            m += (int32_t)((vres >> in[q].res) & 1u);
        }
    }
    mv->n_el += m;
}

/* Bits y0 .. y0 + len - 1 (mod h) of an h-bit column, h <= 64. */
static inline uint64_t column_bits(int32_t y0, int32_t len, int32_t h)
{
    const uint64_t full = h == 64 ? ~(uint64_t)0 : ((uint64_t)1 << h) - 1;
    if (len >= h) return full;
    uint64_t run = ((uint64_t)1 << len) - 1;
    return y0 == 0 ? run : ((run << y0) | (run >> (h - y0))) & full;
}

/* The coverage of the windows of the n owners in `owners` on a map at most 64 cells high,
 * into s->cov_cols: one bit set per map column for each distinct vis pair (gres, grec) of
 * the owners, so a window costs one OR per column instead of one update per cell. Returns
 * the number of pairs; -1 (cov_cols left zero) past SOC_COV_GROUPS. */
static int32_t mv_cover_columns(soc *s, const int32_t *owners, int32_t n, uint64_t *gres,
                                uint64_t *grec)
{
    const int32_t W = s->W, H = s->H;
    int32_t ng = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t owner = owners[v], g = 0;
        const uint64_t vres = s->vis_res[owner], vrec = s->vis_rec[owner];
        while (g < ng && (gres[g] != vres || grec[g] != vrec)) g++;
        if (g == ng) {
            if (ng == SOC_COV_GROUPS) {
                memset(s->cov_cols, 0, sizeof *s->cov_cols * (size_t)ng * (size_t)W);
                return -1;
            }
            gres[ng] = vres;
            grec[ng++] = vrec;
        }
        const soc_job *job = &s->jobs[s->agent_job[owner]];
        uint64_t *cols = s->cov_cols + (size_t)g * (size_t)W;
        const uint64_t bits =
            column_bits(soc_wrap(s->ay[owner] - job->fov_v, H), 2 * job->fov_v + 1, H);
        int32_t x = soc_wrap(s->ax[owner] - job->fov_h, W);
        const int32_t w = 2 * job->fov_h + 1 < W ? 2 * job->fov_h + 1 : W;
        for (int32_t dx = 0; dx < w; dx++) {
            cols[x] |= bits;
            if (++x == W) x = 0;
        }
    }
    return ng;
}

/* The union for maps at most 64 cells high when the owners' vis come in at most
 * SOC_COV_GROUPS distinct pairs (in Exploration every explorer starts seeing the same),
 * from the coverage by columns (mv_cover_columns). false: more groups, nothing built. */
static bool mv_build_columns(soc *s, int32_t n, soc_mview *mv)
{
    const int32_t W = s->W, H = s->H;
    uint64_t gres[SOC_COV_GROUPS], grec[SOC_COV_GROUPS];
    const int32_t ng = mv_cover_columns(s, s->views, n, gres, grec);
    if (ng < 0) return false;
    if (ng == 1) { /* one vis: each column's covered runs are ranges of the filtered table */
        if (s->pf_built != s->pt_pass || s->pt_pass == 0 || s->pf_res != gres[0] ||
            s->pf_rec != grec[0])
            pf_build(s, gres[0], grec[0]);
        const int32_t *start = s->pf_start;
        for (int32_t x = 0; x < W; x++) {
            uint64_t any = s->cov_cols[x];
            while (any) {
                const int32_t y = lowest_bit(any);
                const uint64_t from = any >> y;
                const int32_t len = ~from ? lowest_bit(~from) : 64;
                any = len + y >= 64 ? 0 : any & ~((((uint64_t)1 << len) - 1) << y);
                const int32_t b = start[x * H + y], e = start[x * H + y + len];
                memcpy(mv->el + mv->n_el, s->pf_el + b, sizeof *mv->el * (size_t)(e - b));
                mv->n_el += e - b;
            }
            s->cov_cols[x] = 0;
        }
        return true;
    }
    if (s->pt_built != s->pt_pass || s->pt_pass == 0) pt_build(s);
    for (int32_t x = 0; x < W; x++) {
        uint64_t any = 0;
        for (int32_t g = 0; g < ng; g++) any |= s->cov_cols[(size_t)g * (size_t)W + (size_t)x];
        while (any) {
            const int32_t y = lowest_bit(any);
            any &= any - 1;
            uint64_t vres = 0, vrec = 0;
            for (int32_t g = 0; g < ng; g++) { /* without a branch: it mispredicted */
                const uint64_t in = -((s->cov_cols[(size_t)g * (size_t)W + (size_t)x] >> y) & 1u);
                vres |= gres[g] & in;
                vrec |= grec[g] & in;
            }
            mv_emit(s, mv, y * W + x, vres, vrec);
        }
    }
    memset(s->cov_cols, 0, sizeof *s->cov_cols * (size_t)ng * (size_t)W);
    return true;
}

/* A new coverage stamp: cov_stamp[cell] == it marks the cells covered by the merge being
 * built (map view, where the grid's A x B is the map's W x H). */
static uint32_t cov_next(soc *s)
{
    if (++s->cov_now == 0) { /* the stamps wrapped: forget every old one */
        memset(s->cov_stamp, 0, sizeof *s->cov_stamp * (size_t)s->cells);
        s->cov_now = 1;
    }
    return s->cov_now;
}

/* The union for any map: one stamp per covered cell. Needs R, K <= 64. */
static void mv_build_cells(soc *s, int32_t n, soc_mview *mv)
{
    const int32_t W = s->W, H = s->H;
    const uint32_t now = cov_next(s);
    int32_t nc = 0;
    /* Windows as large as the map (Social Structure's Easy task: 7x7, fov 3) cover every
     * cell: their owners' vis is merged once, not cell by cell. */
    uint64_t all_res = 0, all_rec = 0;
    bool all = false;
    for (int32_t v = 0; v < n; v++) {
        int32_t owner = s->views[v];
        const soc_job *job = &s->jobs[s->agent_job[owner]];
        const uint64_t vres = s->vis_res[owner], vrec = s->vis_rec[owner];
        if (2 * job->fov_h + 1 >= W && 2 * job->fov_v + 1 >= H) {
            all = true;
            all_res |= vres;
            all_rec |= vrec;
            continue;
        }
        const int32_t x0 = soc_wrap(s->ax[owner] - job->fov_h, W);
        const int32_t y0 = soc_wrap(s->ay[owner] - job->fov_v, H);
        int32_t x = x0;
        for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++) {
            int32_t y = y0;
            for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
                const int32_t cell = y * W + x;
                if (s->cov_stamp[cell] != now) {
                    s->cov_stamp[cell] = now;
                    s->cov_res[cell] = vres;
                    s->cov_rec[cell] = vrec;
                    s->cov_cell[nc++] = cell;
                } else {
                    s->cov_res[cell] |= vres;
                    s->cov_rec[cell] |= vrec;
                }
                if (++y == H) y = 0;
            }
            if (++x == W) x = 0;
        }
    }
    if (all) {
        for (int32_t y = 0; y < H; y++)
            for (int32_t x = 0; x < W; x++) {
                const int32_t cell = y * W + x;
                uint64_t vres = all_res, vrec = all_rec;
                if (s->cov_stamp[cell] == now) {
                    vres |= s->cov_res[cell];
                    vrec |= s->cov_rec[cell];
                }
                mv_emit(s, mv, cell, vres, vrec);
            }
        return;
    }
    for (int32_t c = 0; c < nc; c++) {
        const int32_t cell = s->cov_cell[c];
        mv_emit(s, mv, cell, s->cov_res[cell], s->cov_rec[cell]);
    }
}

/* ---- the direct merge, for passes where owner sets do not repeat ----
 *
 * Each viewer's union is built in grid coordinates and painted straight into its record
 * from the layers. (Painting these from the pass's table as well was slower: with sets that
 * do not repeat, building the table costs more than reading the layers saves.) */

/* paint_merged for maps at most 64 cells high, when the owners' vis come in at most
 * SOC_COV_GROUPS distinct pairs (in Exploration every explorer starts seeing the same):
 * each group's coverage is a bit set per grid column, so a window costs one OR per column
 * instead of one update per cell. false: more groups, nothing painted. */
static bool paint_merged_columns(soc *s, int32_t viewer, int32_t n, painter *pp)
{
    painter p = *pp;
    const bool rec_ = p.cap != 0, w8_ = p.w8;
    const int32_t W = s->W, H = s->H;
    uint64_t gres[SOC_COV_GROUPS], grec[SOC_COV_GROUPS];
    int32_t ng = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t owner = s->views[v], g = 0;
        const uint64_t vres = s->vis_res[owner], vrec = s->vis_rec[owner];
        while (g < ng && (gres[g] != vres || grec[g] != vrec)) g++;
        if (g == ng) {
            if (ng == SOC_COV_GROUPS) {
                memset(s->cov_cols, 0, sizeof *s->cov_cols * (size_t)ng * (size_t)W);
                return false;
            }
            gres[ng] = vres;
            grec[ng++] = vrec;
        }
        const soc_job *job = &s->jobs[s->agent_job[owner]];
        uint64_t *cols = s->cov_cols + (size_t)g * (size_t)W;
        const int32_t y0 = soc_wrap(s->ay[owner] - job->fov_v, H);
        const uint64_t bits =
            column_bits(soc_wrap(y0 - s->ay[viewer] + H / 2, H), 2 * job->fov_v + 1, H);
        const int32_t x0 = soc_wrap(s->ax[owner] - job->fov_h, W);
        int32_t i = soc_wrap(x0 - s->ax[viewer] + W / 2, W);
        int32_t w = 2 * job->fov_h + 1 < W ? 2 * job->fov_h + 1 : W;
        for (int32_t dx = 0; dx < w; dx++) {
            cols[i] |= bits;
            if (++i == W) i = 0;
        }
    }
    /* grid column i is map column x = i + ax - W/2, grid row j is map row j + ay - H/2 */
    int32_t x = soc_wrap(s->ax[viewer] - W / 2, W);
    const int32_t ybase = soc_wrap(s->ay[viewer] - H / 2, H);
    for (int32_t i = 0; i < W; i++) {
        uint64_t any = 0;
        for (int32_t g = 0; g < ng; g++) any |= s->cov_cols[(size_t)g * (size_t)W + (size_t)i];
        while (any) {
            int32_t j = lowest_bit(any);
            any &= any - 1;
            uint64_t vres = 0, vrec = 0;
            for (int32_t g = 0; g < ng; g++)
                if ((s->cov_cols[(size_t)g * (size_t)W + (size_t)i] >> j) & 1u) {
                    vres |= gres[g];
                    vrec |= grec[g];
                }
            int32_t y = ybase + j;
            if (y >= H) y -= H;
            const int32_t at = i * s->B + j, cell = y * W + x;
            PAINT_CELL(p, cell, at, (vrec >> k) & 1u, (vres >> r) & 1u);
        }
        if (++x == W) x = 0;
    }
    memset(s->cov_cols, 0, sizeof *s->cov_cols * (size_t)ng * (size_t)W);
    pp->n = p.n;
    return true;
}

/* The map view merged with n - 1 shared maps, each covered cell painted once: first the
 * union of the windows, with per cell the union of what the owners covering it see (an owner
 * sees a station's recipe or a pile's resource by its own inventory), then one paint per
 * cell. The values written never depend on which owner saw a cell, only whether one did, so
 * this writes exactly what painting every window in turn writes; painting each window cost
 * O(sharers x window) strided writes per agent (docs/performance-log.md). Needs R, K <= 64. */
static void paint_merged(soc *s, int32_t viewer, int32_t n, painter *pp)
{
    painter p = *pp;
    const bool rec_ = p.cap != 0, w8_ = p.w8;
    const int32_t W = s->W, H = s->H;
    const uint32_t now = cov_next(s);
    int32_t nc = 0;
    /* Windows as large as the map (Social Structure's Easy task: 7x7, fov 3) cover every
     * cell: their owners' vis is merged once, not cell by cell. */
    uint64_t all_res = 0, all_rec = 0;
    bool all = false;
    for (int32_t v = 0; v < n; v++) {
        int32_t owner = s->views[v];
        const soc_job *job = &s->jobs[s->agent_job[owner]];
        const uint64_t vres = s->vis_res[owner], vrec = s->vis_rec[owner];
        if (2 * job->fov_h + 1 >= W && 2 * job->fov_v + 1 >= H) {
            all = true;
            all_res |= vres;
            all_rec |= vrec;
            continue;
        }
        const int32_t x0 = soc_wrap(s->ax[owner] - job->fov_h, W);
        const int32_t y0 = soc_wrap(s->ay[owner] - job->fov_v, H);
        const int32_t i0 = soc_wrap(x0 - s->ax[viewer] + W / 2, W);
        const int32_t j0 = soc_wrap(y0 - s->ay[viewer] + H / 2, H);
        int32_t x = x0, i = i0;
        for (int32_t dx = -job->fov_h; dx <= job->fov_h; dx++) {
            int32_t y = y0, j = j0;
            for (int32_t dy = -job->fov_v; dy <= job->fov_v; dy++) {
                int32_t at = i * s->B + j;
                if (s->cov_stamp[at] != now) {
                    s->cov_stamp[at] = now;
                    s->cov_res[at] = vres;
                    s->cov_rec[at] = vrec;
                    s->cov_at[nc] = at;
                    s->cov_cell[nc++] = y * W + x;
                } else {
                    s->cov_res[at] |= vres;
                    s->cov_rec[at] |= vrec;
                }
                if (++y == H) y = 0;
                if (++j == H) j = 0;
            }
            if (++x == W) x = 0;
            if (++i == W) i = 0;
        }
    }
    if (all) {
        /* every cell, at grid (i, j) = map (x, y) shifted by the viewer's position */
        int32_t x = soc_wrap(s->ax[viewer] - W / 2, W), y0 = soc_wrap(s->ay[viewer] - H / 2, H);
        for (int32_t i = 0; i < W; i++) {
            int32_t y = y0;
            for (int32_t j = 0; j < H; j++) {
                int32_t at = i * s->B + j, cell = y * W + x;
                uint64_t vres = all_res, vrec = all_rec;
                if (s->cov_stamp[at] == now) {
                    vres |= s->cov_res[at];
                    vrec |= s->cov_rec[at];
                }
                PAINT_CELL(p, cell, at, (vrec >> k) & 1u, (vres >> r) & 1u);
                if (++y == H) y = 0;
            }
            if (++x == W) x = 0;
        }
        pp->n = p.n;
        return;
    }
    for (int32_t c = 0; c < nc; c++) {
        int32_t at = s->cov_at[c], cell = s->cov_cell[c];
        const uint64_t vres = s->cov_res[at], vrec = s->cov_rec[at];
        PAINT_CELL(p, cell, at, (vrec >> k) & 1u, (vres >> r) & 1u);
    }
    pp->n = p.n;
}

/* ---- kept merged views ----
 *
 * A slot is kept from pass to pass (its owner set does not change while it holds it): at
 * its first use in a pass, mv_track brings its coverage up to date and lists in dl the
 * elements of its union that changed since the previous pass. A viewer whose record showed
 * the slot at the previous pass (mk_slot, mk_gen, mk_pass) then has its record shifted by
 * its own move (lv_shift: the record is egocentric) and stores those elements (mk_store),
 * where painting whole stored every element of the union (about 800 in the Social Structure
 * Hard games, where groups sharing their maps see most of the map): the cost follows what
 * changed, owners' windows moving and cells changing. What a cell shows depends only on the
 * world and on which vis pairs cover it, so listing the cells where either changed, each
 * with its old elements cleared and its new ones written in the painters' order, gives the
 * painters' record byte for byte (test_kept_views in tests/test_obs_incremental.c). */

/* Appends recipe k's amounts at cell offset at (map x, y) to out: their values, or zeros
 * (clear), in the painters' order (an input and an output of one resource: the output). */
static inline int32_t mk_recipe(const soc *s, soc_pel *out, int32_t nd, int32_t k, int32_t at,
                                int16_t x, int16_t y, bool clear)
{
    const int32_t plane = s->A * s->B;
    const soc_recipe *rec = &s->rec[k];
    const soc_amount *a = &s->amounts[rec->in];
    for (int32_t q = 0; q < rec->n_in; q++, a++)
        out[nd++] = (soc_pel){(2 + a->res) * plane + at, clear ? 0 : sat16(-a->n), x, y, -1};
    a = &s->amounts[rec->out];
    for (int32_t q = 0; q < rec->n_out; q++, a++)
        out[nd++] = (soc_pel){(2 + a->res) * plane + at, clear ? 0 : sat16(a->n), x, y, -1};
    return nd;
}

/* What listing a slot's changes reads, copied into a local at the top of mv_diff so the
 * compiler keeps it in registers: through the soc, every store into the list (int32
 * offsets) could alias its int32 fields, which were then reloaded per element. */
typedef struct mk_ctx {
    soc_pel *out;
    const int32_t *ag, *bl, *rc, *piles, *pcap, *roff, *rn;
    const int16_t *rval;
    const uint64_t *pb;
    int32_t W, B, R, plane, T, K;
} mk_ctx;

/* Appends everything cell (x, y) shows to owners seeing (vres, vrec), from the copies of
 * the world (lv_ag ...), or zeros there (clear): its agent, block, recipe's amounts (from
 * the recipe's template, mk_roff / mk_rval: every template entry is stored, the count
 * advanced by the recipe's, so the cell costs no branch on what it holds) and piles. At
 * most 2 + mk_tpl + R stores. */
static inline int32_t mk_cell(const mk_ctx *c, int32_t nd, int32_t x, int32_t y, uint64_t vres,
                              uint64_t vrec, bool clear)
{
    soc_pel *const out = c->out;
    const int32_t cell = y * c->W + x, at = x * c->B + y;
    const int16_t x16 = (int16_t)x, y16 = (int16_t)y;
    const int32_t ag = c->ag[cell], bl = c->bl[cell], k0 = c->rc[cell] - 1;
    const uint64_t pb = c->pb[cell] & vres;
    out[nd] = (soc_pel){at, clear ? 0 : sat16(ag), x16, y16, -1};
    nd += ag != 0;
    out[nd] = (soc_pel){c->plane + at, (int16_t)!clear, x16, y16, -1};
    nd += bl != 0;
    const int32_t k = k0 >= 0 && ((vrec >> k0) & 1u) ? k0 : c->K; /* K: the empty template */
    const int32_t *off = c->roff + (size_t)k * (size_t)c->T;
    const int16_t *val = c->rval + (size_t)k * (size_t)c->T;
    for (int32_t q = 0; q < c->T; q++)
        out[nd + q] = (soc_pel){off[q] + at, clear ? 0 : val[q], x16, y16, -1};
    nd += c->rn[k];
    if (pb) {
        const int32_t *pile = c->piles + (size_t)cell * (size_t)c->R;
        for (uint64_t q = pb; q; q &= q - 1) {
            const int32_t r = lowest_bit(q);
            out[nd++] = (soc_pel){(2 + c->R + r) * c->plane + at,
                                  clear ? 0 : pile16(pile[r], c->pcap[r]), x16, y16, -1};
        }
    }
    return nd;
}

/* mk_cell for the cells of column x in `cells`, each seen by the vis pairs covering it
 * (cols, ng pairs: with one, the pair). */
static inline int32_t mk_cells(const mk_ctx *c, int32_t nd, int32_t x, uint64_t cells,
                               const uint64_t *cols, int32_t ng, const uint64_t *gres,
                               const uint64_t *grec, bool clear)
{
    for (; cells; cells &= cells - 1) {
        const int32_t y = lowest_bit(cells);
        uint64_t vres = gres[0], vrec = grec[0];
        if (ng > 1) {
            vres = vrec = 0;
            for (int32_t g = 0; g < ng; g++)
                if ((cols[(size_t)g * (size_t)c->W + (size_t)x] >> y) & 1u) {
                    vres |= gres[g];
                    vrec |= grec[g];
                }
        }
        nd = mk_cell(c, nd, x, y, vres, vrec, clear);
    }
    return nd;
}

/* The changes of slot mv's union from its coverage at the previous pass (mv->cols) to this
 * pass's (s->cov_cols, ng pairs gres / grec) and the world's changes (lv_scan) into mv->dl.
 * Column by column: the cells that became covered, whose content did not change, write
 * everything they show (mk_cell); those no longer covered clear it; the others whose
 * content changed while covered (before or now), or where the coverage of some vis pair
 * changed while covered before and now, are compared one by one: what the cell showed is
 * its old content (lv_oag ... when it changed, else the current one) as the old vis saw
 * it, what it shows its content as the new vis sees it, and listed are the agent and the
 * block where they differ, the old recipe's amounts cleared and the new one's written
 * where the recipe shown differs, the piles no longer shown cleared and those newly shown
 * written (all shown, when the cell's piles changed). false when the list would not fit
 * (the slot's viewers paint whole). */
static bool mv_diff(soc *s, soc_mview *mv, int32_t ng, const uint64_t *gres, const uint64_t *grec)
{
    const int32_t W = s->W, B = s->B, R = s->R, og = mv->ng, plane = s->A * s->B;
    const uint32_t pass = s->pt_pass;
    const uint64_t *now = s->cov_cols, *was = mv->cols;
    int32_t match[SOC_COV_GROUPS];
    bool kept[SOC_COV_GROUPS] = {false};
    for (int32_t g = 0; g < ng; g++) { /* the pairs of a coverage are distinct */
        match[g] = -1;
        for (int32_t h = 0; h < og && match[g] < 0; h++)
            if (mv->gres[h] == gres[g] && mv->grec[h] == grec[g]) {
                match[g] = h;
                kept[h] = true;
            }
    }
    const bool one = ng == 1 && og == 1 && match[0] == 0; /* one vis pair, kept */
    /* a cell lists at most an agent, a block, two recipes and R piles, twice; a column at
     * most H cells */
    const int32_t most = 2 * (s->pt_cap / s->cells), column = s->H * most;
    const int32_t *rc = soc_layer(s, s->L_recipes, 0);
    const mk_ctx c = {.out = mv->dl,
                      .ag = s->lv_ag,
                      .bl = s->lv_bl,
                      .rc = s->lv_rc,
                      .piles = s->piles,
                      .pcap = s->pile_obs,
                      .roff = s->mk_roff,
                      .rn = s->mk_rn,
                      .rval = s->mk_rval,
                      .pb = s->lv_pb,
                      .W = W,
                      .B = B,
                      .R = R,
                      .plane = plane,
                      .T = s->mk_tpl,
                      .K = s->K};
    soc_pel *out = mv->dl;
    int32_t nd = 0;
    for (int32_t x = 0; x < W; x++) {
        if (nd + column > s->pt_cap) return false;
        uint64_t o = 0, n = 0, pair = 0; /* pair: a vis pair's coverage changed */
        if (one) {
            o = was[x];
            n = now[x];
        } else {
            for (int32_t g = 0; g < ng; g++) {
                const uint64_t cg = now[(size_t)g * (size_t)W + (size_t)x];
                n |= cg;
                pair |= cg ^ (match[g] >= 0 ? was[(size_t)match[g] * (size_t)W + (size_t)x] : 0);
            }
            for (int32_t h = 0; h < og; h++) {
                const uint64_t ch = was[(size_t)h * (size_t)W + (size_t)x];
                o |= ch;
                pair |= kept[h] ? 0 : ch;
            }
        }
        const uint64_t d = s->mk_dcol[x] & (o | n); /* content changed, covered */
        const uint64_t came = n & ~o & ~d, went = o & ~n & ~d, each = d | (o & n & pair);
        if (!(came | went | each)) continue;
        nd = mk_cells(&c, nd, x, came, now, ng, gres, grec, false);
        nd = mk_cells(&c, nd, x, went, was, og, mv->gres, mv->grec, true);
        for (uint64_t b = each; b; b &= b - 1) {
            const int32_t y = lowest_bit(b), cell = y * W + x, at = x * B + y;
            const int16_t x16 = (int16_t)x, y16 = (int16_t)y;
            const uint64_t bit = (uint64_t)1 << y;
            uint64_t ores = 0, orec = 0, nres = 0, nrec = 0;
            for (int32_t h = 0; h < og; h++)
                if (was[(size_t)h * (size_t)W + (size_t)x] & bit) {
                    ores |= mv->gres[h];
                    orec |= mv->grec[h];
                }
            for (int32_t g = 0; g < ng; g++)
                if (now[(size_t)g * (size_t)W + (size_t)x] & bit) {
                    nres |= gres[g];
                    nrec |= grec[g];
                }
            const bool ocov = (o & bit) != 0, ncov = (n & bit) != 0;
            const int32_t ag = s->lv_ag[cell], bl = s->lv_bl[cell], k = rc[cell] - 1;
            const uint64_t pb = s->lv_pb[cell];
            int32_t oag = ag, obl = bl, ok = k;
            uint64_t opb = pb;
            bool piles = false; /* the cell's piles changed: every pile shown is written */
            if (s->lv_cstamp[cell] == pass) {
                oag = s->lv_oag[cell];
                obl = s->lv_obl[cell];
                ok = s->lv_orc[cell] - 1;
                opb = s->lv_opb[cell];
                piles = s->mk_pstamp[cell] == pass;
            }
            const int32_t sag = ncov ? ag : 0, sbl = ncov ? bl : 0;
            if ((ocov ? oag : 0) != sag) out[nd++] = (soc_pel){at, sat16(sag), x16, y16, -1};
            if ((ocov ? obl : 0) != sbl)
                out[nd++] = (soc_pel){plane + at, (int16_t)(sbl != 0), x16, y16, -1};
            const int32_t ko = ocov && ok >= 0 && ((orec >> ok) & 1u) ? ok : -1;
            const int32_t kn = ncov && k >= 0 && ((nrec >> k) & 1u) ? k : -1;
            if (ko != kn) {
                if (ko >= 0) nd = mk_recipe(s, out, nd, ko, at, x16, y16, true);
                if (kn >= 0) nd = mk_recipe(s, out, nd, kn, at, x16, y16, false);
            }
            const uint64_t os = ocov ? opb & ores : 0, ns = ncov ? pb & nres : 0;
            const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
            for (uint64_t q = os & ~ns; q; q &= q - 1)
                out[nd++] = (soc_pel){(2 + R + lowest_bit(q)) * plane + at, 0, x16, y16, -1};
            for (uint64_t q = piles ? ns : ns & ~os; q; q &= q - 1) {
                const int32_t r = lowest_bit(q);
                out[nd++] = (soc_pel){(2 + R + r) * plane + at, pile16(pile[r], s->pile_obs[r]),
                                      x16, y16, -1};
            }
        }
    }
    mv->n_dl = nd;
    return true;
}

/* Brings slot mv's coverage to this pass (once per pass) and, when the slot held the
 * previous pass's and lv_scan compared the world with it, lists what changed (mv_diff,
 * dpass). More than SOC_COV_GROUPS vis pairs: the coverage is not kept (ng 0). */
static void mv_track(soc *s, soc_mview *mv)
{
    const uint32_t pass = s->pt_pass;
    if (mv->upass == pass) return;
    uint64_t gres[SOC_COV_GROUPS], grec[SOC_COV_GROUPS];
    const int32_t ng = mv_cover_columns(s, mv->owners, mv->n_owners, gres, grec);
    mv->dpass = 0;
    if (ng > 0 && mv->ng > 0 && mv->upass + 1 == pass && s->lv_cdiff == pass &&
        mv_diff(s, mv, ng, gres, grec))
        mv->dpass = pass;
    mv->ng = ng > 0 ? ng : 0;
    if (ng > 0) {
        const size_t words = (size_t)ng * (size_t)s->W;
        memcpy(mv->cols, s->cov_cols, sizeof *mv->cols * words);
        memset(s->cov_cols, 0, sizeof *s->cov_cols * words);
        memcpy(mv->gres, gres, sizeof *gres * (size_t)ng);
        memcpy(mv->grec, grec, sizeof *grec * (size_t)ng);
    }
    mv->upass = pass;
}

/* The slot's union, every element, for this pass (built at its first need in the pass). */
static void mv_fill(soc *s, soc_mview *mv)
{
    if (mv->el_pass == s->pt_pass) return;
    const int32_t n = mv->n_owners;
    memcpy(s->views, mv->owners, sizeof *s->views * (size_t)n);
    mv->n_el = 0;
    if (s->H > 64 || !mv_build_columns(s, n, mv)) {
        if (s->pt_built != s->pt_pass || s->pt_pass == 0) pt_build(s);
        mv_build_cells(s, n, mv);
    }
    mv->el_pass = s->pt_pass;
}

/* The slot for the owners in views[0 .. n-1]: the one holding that set (from this pass or
 * an earlier one), else the least recently used one given it; NULL when this pass paints
 * directly (mv_use), after noting whether the set repeated within the pass. Its union is
 * built by mv_fill; with kept views its coverage is brought to this pass (mv_track). */
static soc_mview *mv_find(soc *s, int32_t n)
{
    /* painting directly, one pass in 16 checks whether sets repeat again */
    if (!s->mv_use && (s->pt_pass & 15) != 0) return NULL;
    uint32_t now = ++s->mv_mark_now;
    if (now == 0) {
        memset(s->mv_mark, 0, sizeof *s->mv_mark * (size_t)s->n_agents);
        now = s->mv_mark_now = 1;
    }
    uint64_t hash = 0;
    bool dup = false;
    for (int32_t v = 0; v < n; v++) {
        const int32_t o = s->views[v];
        dup |= s->mv_mark[o] == now;
        s->mv_mark[o] = now;
        hash += ((uint64_t)o + 1) * 0x9e3779b97f4a7c15ULL; /* collisions only cost a compare */
    }
    s->mv_viewers++;
    /* both sets without repeats, the same size, and every owner of the slot marked: equal */
    soc_mview *mv = NULL;
    for (int32_t i = 0; i < SOC_MV_SLOTS && !dup && !mv; i++) {
        soc_mview *m = &s->mv[i];
        if (m->pass == 0 || m->n_owners != n || m->hash != hash) continue;
        int32_t v = 0;
        while (v < n && s->mv_mark[m->owners[v]] == now) v++;
        if (v == n) mv = m;
    }
    if (mv) {
        s->mv_hits += mv->pass == s->pt_pass;
    } else {
        mv = &s->mv[0];
        for (int32_t i = 1; i < SOC_MV_SLOTS; i++)
            if (s->mv[i].pass < mv->pass) mv = &s->mv[i];
        mv->gen++;
        mv->n_owners = n;
        mv->hash = hash;
        memcpy(mv->owners, s->views, sizeof *mv->owners * (size_t)n);
        mv->el_pass = mv->upass = mv->dpass = 0;
        mv->ng = 0;
    }
    /* a set with repeats is never matched: its slot is left unused */
    mv->pass = dup ? 0 : s->pt_pass;
    if (!s->mv_use) return NULL;
    if (s->mk_on) mv_track(s, mv);
    return mv;
}

/* Stores the slot's elements into viewer's grid: map (x, y) is grid
 * (x - ax + W/2, y - ay + H/2), wrapped; an element's offset is its `at` shifted by
 * (di B + dj), less W B past the last column and H past the last row. One flat loop
 * without a branch per element: the loop per cell mispredicted on the cells' lengths. */
static ALWAYS_INLINE void mv_paint_as(const soc *s, int32_t viewer, const soc_mview *mv,
                                      painter *pp, const bool rec_, const bool w8_)
{
    painter p = *pp;
    const int32_t W = s->W, H = s->H, B = s->B;
    const int32_t di = soc_wrap(W / 2 - s->ax[viewer], W), dj = soc_wrap(H / 2 - s->ay[viewer], H);
    const int32_t xlim = W - di, ylim = H - dj, shift = di * B + dj, wb = W * B;
    const soc_pel *el = mv->el;
    for (int32_t q = 0, n = mv->n_el; q < n; q++) { /* n: a byte store may alias mv->n_el */
        int32_t at = el[q].at + shift;
        at -= el[q].x >= xlim ? wb : 0;
        at -= el[q].y >= ylim ? H : 0;
        PUT(p, (size_t)at, el[q].val);
    }
    pp->n = p.n;
}

static ALWAYS_INLINE void mv_paint_w(const soc *s, int32_t viewer, const soc_mview *mv, painter *pp,
                                     const bool w8_)
{
    if (!pp->cap) {
        mv_paint_as(s, viewer, mv, pp, false, w8_);
    } else if (mv->n_el > pp->cap) { /* the list would overflow: the next write clears all */
        mv_paint_as(s, viewer, mv, pp, false, w8_);
        pp->n = pp->cap + 1;
    } else {
        mv_paint_as(s, viewer, mv, pp, true, w8_);
    }
}

static void mv_paint(const soc *s, int32_t viewer, const soc_mview *mv, painter *pp)
{
    if (pp->w8)
        mv_paint_w(s, viewer, mv, pp, true);
    else
        mv_paint_w(s, viewer, mv, pp, false);
}

/* ---- live merged views ------------------------------------------------------------------
 *
 * With the painters above, every pass repainted each agent's merged view whole: the union of
 * about half the other agents' windows once sharing is random, so a pass cost P x (covered
 * cells) and most of Exploration's step with social actions (docs/performance-log.md, "Live
 * merged views"). The record still holds the previous pass's view, and between two passes
 * little changes: a few owners start or stop sharing, a few agents move or see more, a few
 * cells change. So each record is brought up to date where something changed:
 *
 *   - lv_cover[cell] is the set of agents whose window covers the cell, kept as windows
 *     move; lv_member[v] the owners whose windows v's view merges (v itself and its map
 *     sharers), kept from the social service's sharing journal; lv_rev its transpose. A
 *     cell is in v's view when the two sets meet, and it shows what the owners in both see
 *     (the union of their vis: the painters' rule).
 *   - The OBSERVE hook (lv_prepare) compares the world with what the views show and queues
 *     events for the viewers they concern: a cell whose layers or piles changed, for every
 *     agent viewing an owner that covers it; an owner that moved or whose vis changed, for
 *     every viewer of it; an owner that started or stopped sharing, for that viewer.
 *   - write_grid replays the agent's events: each touched cell is written again from the
 *     world (lv_refresh), its old content's elements cleared first when it changed. An
 *     agent that moved one cell sees every cell one place further: its record is shifted
 *     (lv_shift) and then brought up to date, its own move one of its events. Painted whole
 *     are agents that moved further, records written anywhere else last time, the first
 *     pass after a reset, agents whose events overflowed the queue and agents whose events
 *     (and shift) would cost more (lv_current); where most records are painted whole anyway
 *     the views pause (lv_pass_start).
 *
 * What a cell shows depends only on the world and on the sets above, never on the order of
 * events, so the result is the painters' byte for byte (test_live_views in rulesets/society/
 * tests/test_obs_incremental.c checks it against records written whole at every step). */

enum { LV_CELL = 0, LV_OWNER = 1, LV_SHARE = 2 };

/* soc_wrap without a division for the values the live views wrap (within one map size of
 * the range): a division per window and event was a measurable part of their real time,
 * though not of their instruction count. */
static inline int32_t lv_wrap(int32_t v, int32_t n)
{
    if (v < 0)
        v += n;
    else if (v >= n)
        v -= n;
    return (uint32_t)v < (uint32_t)n ? v : soc_wrap(v, n);
}

/* Sets (on) or clears o's bit in the cover sets of its window's cells at (cx, cy). */
static void lv_cover_window(soc *s, int32_t o, int32_t cx, int32_t cy, bool on)
{
    const soc_job *job = &s->jobs[s->agent_job[o]];
    const int32_t W = s->W, H = s->H, nw = s->lv_words;
    const int32_t w = 2 * job->fov_h + 1 < W ? 2 * job->fov_h + 1 : W;
    const int32_t hh = 2 * job->fov_v + 1 < H ? 2 * job->fov_v + 1 : H;
    const uint64_t bit = (uint64_t)1 << (o & 63);
    uint64_t *base = s->lv_cover + (o >> 6);
    int32_t x = lv_wrap(cx - job->fov_h, W);
    const int32_t y0 = lv_wrap(cy - job->fov_v, H);
    for (int32_t dx = 0; dx < w; dx++) {
        int32_t y = y0;
        for (int32_t dy = 0; dy < hh; dy++) {
            uint64_t *c = base + (size_t)(y * W + x) * (size_t)nw;
            *c = on ? *c | bit : *c & ~bit;
            if (++y == H) y = 0;
        }
        if (++x == W) x = 0;
    }
}

/* The cells of o's window (wrapped onto itself at most once). */
static int32_t lv_window_cells(const soc *s, int32_t o)
{
    const soc_job *job = &s->jobs[s->agent_job[o]];
    const int32_t w = 2 * job->fov_h + 1 < s->W ? 2 * job->fov_h + 1 : s->W;
    const int32_t h = 2 * job->fov_v + 1 < s->H ? 2 * job->fov_v + 1 : s->H;
    return w * h;
}

/* Queues an event for viewer v, about `cells` cells to write again; when the queue is full
 * v is painted whole instead. */
static void lv_push(soc *s, int32_t v, int32_t id, int32_t kind, int32_t cells)
{
    if (s->lv_full[v] == s->pt_pass) return;
    s->lv_work[v] += cells;
    if (s->lv_nev == s->lv_cap) {
        s->lv_full[v] = s->pt_pass;
        return;
    }
    const int32_t e = s->lv_nev++;
    s->lv_ev[e] = id * 4 + kind;
    s->lv_next[e] = s->lv_head[v];
    s->lv_head[v] = e;
}

static uint64_t lv_pile_bits(const soc *s, int32_t cell)
{
    uint64_t b = 0;
    if (!s->kinds[cell]) return 0;
    const int32_t *pile = s->piles + (size_t)cell * (size_t)s->R;
    for (int32_t r = 0; r < s->R; r++) b |= (uint64_t)(pile[r] != 0) << r;
    return b;
}

/* Everything from the world and the social service: after a reset, a lost journal or a
 * wrapped pass counter. Every record of this pass is painted whole. */
static void lv_resync(soc *s)
{
    const int32_t n = s->n_agents, nw = s->lv_words;
    const size_t set = sizeof(uint64_t) * (size_t)nw;
    memset(s->lv_cover, 0, set * (size_t)s->cells);
    memset(s->lv_member, 0, set * (size_t)n);
    memset(s->lv_rev, 0, set * (size_t)n);
    if (s->lv_journal) s->lv_seq = s->social->share_seq(s->social->self);
    for (int32_t v = 0; v < n; v++) {
        const int32_t m = soc_views(s, v);
        for (int32_t i = 0; i < m; i++) {
            const int32_t o = s->views[i];
            s->lv_member[(size_t)v * (size_t)nw + (size_t)(o >> 6)] |= (uint64_t)1 << (o & 63);
            s->lv_rev[(size_t)o * (size_t)nw + (size_t)(v >> 6)] |= (uint64_t)1 << (v & 63);
        }
        const uint64_t *mv = s->lv_member + (size_t)v * (size_t)nw;
        s->lv_nown[v] = 0;
        for (int32_t w = 0; w < nw; w++) s->lv_nown[v] += bit_count(mv[w]);
    }
    s->lv_all_res = s->lv_all_rec = 0;
    s->lv_min_res = s->lv_min_rec = ~(uint64_t)0;
    for (int32_t o = 0; o < n; o++) {
        lv_cover_window(s, o, s->ax[o], s->ay[o], true);
        s->lv_x[o] = s->ax[o];
        s->lv_y[o] = s->ay[o];
        s->lv_vres[o] = s->vis_res[o];
        s->lv_vrec[o] = s->vis_rec[o];
        s->lv_all_res |= s->vis_res[o];
        s->lv_all_rec |= s->vis_rec[o];
        s->lv_min_res &= s->vis_res[o];
        s->lv_min_rec &= s->vis_rec[o];
    }
    /* the copies of the cells' content are lv_scan's, taken or brought up to date already */
    memset(s->lv_ostamp, 0, sizeof *s->lv_ostamp * (size_t)n);
    memset(s->lv_full, 0, sizeof *s->lv_full * (size_t)n);
    memset(s->lv_pass, 0, sizeof *s->lv_pass * (size_t)n);
    s->lv_sync_pass = s->pt_pass;
    s->lv_synced = true;
}

/* Notes that the cell's content changed this pass (keeping what the views showed). */
static void lv_touch(soc *s, int32_t cell, int32_t *nd)
{
    if (s->lv_cstamp[cell] == s->pt_pass) return;
    s->lv_cstamp[cell] = s->pt_pass;
    s->lv_oag[cell] = s->lv_ag[cell];
    s->lv_obl[cell] = s->lv_bl[cell];
    s->lv_orc[cell] = s->lv_rc[cell];
    s->lv_opb[cell] = s->lv_pb[cell];
    s->lv_dirty[(*nd)++] = cell;
}

/* Compares the copies of what the views show (lv_ag, lv_bl, lv_rc, lv_pb) with the world,
 * once per pass, for the live views and the kept slots: the cells changed since the
 * previous pass go to lv_dirty (their content before in lv_oag ..., their x, y in lv_dxy)
 * and lv_cdiff is this pass. Copies that do not hold the previous pass's world (the first
 * pass, after a reset, a pass that did not compare, a wrapped pass counter) are taken whole
 * instead, and nothing is listed: whoever relies on the list paints whole this pass. The
 * layers are compared 16 cells at a time: they rarely change. */
static void lv_scan(soc *s)
{
    const int32_t *ag = soc_layer(s, s->L_agents, 0), *bl = soc_layer(s, s->L_blocks, 0),
                  *rc = soc_layer(s, s->L_recipes, 0);
    const int32_t cells = s->cells;
    int32_t nd = 0;
    if (!s->lv_cok || s->lv_cpass + 1 != s->pt_pass) {
        memcpy(s->lv_ag, ag, sizeof *ag * (size_t)cells);
        memcpy(s->lv_bl, bl, sizeof *bl * (size_t)cells);
        memcpy(s->lv_rc, rc, sizeof *rc * (size_t)cells);
        for (int32_t c = 0; c < cells; c++) s->lv_pb[c] = lv_pile_bits(s, c);
        for (int32_t i = 0; i < s->lv_np; i++) s->lv_pmark[s->lv_plist[i]] = 0;
        s->lv_np = 0;
        memset(s->lv_cstamp, 0, sizeof *s->lv_cstamp * (size_t)cells);
        s->lv_cok = true;
        s->lv_cdiff = 0;
    } else {
        for (int32_t c0 = 0; c0 < cells; c0 += 16) {
            const int32_t e = c0 + 16 <= cells ? c0 + 16 : cells;
            uint32_t d = 0;
            if (e - c0 == 16) {
                for (int32_t k = 0; k < 16; k++)
                    d |= (uint32_t)((ag[c0 + k] ^ s->lv_ag[c0 + k]) |
                                    (bl[c0 + k] ^ s->lv_bl[c0 + k]) |
                                    (rc[c0 + k] ^ s->lv_rc[c0 + k]));
            } else {
                d = 1;
            }
            if (!d) continue;
            for (int32_t c = c0; c < e; c++) {
                if (ag[c] == s->lv_ag[c] && bl[c] == s->lv_bl[c] && rc[c] == s->lv_rc[c]) continue;
                lv_touch(s, c, &nd);
                s->lv_ag[c] = ag[c];
                s->lv_bl[c] = bl[c];
                s->lv_rc[c] = rc[c];
            }
        }
        for (int32_t i = 0; i < s->lv_np; i++) {
            const int32_t c = s->lv_plist[i];
            s->lv_pmark[c] = 0;
            lv_touch(s, c, &nd);
            s->lv_pb[c] = lv_pile_bits(s, c);
            if (s->mk_pstamp) s->mk_pstamp[c] = s->pt_pass;
        }
        s->lv_np = 0;
        s->lv_cdiff = s->pt_pass;
    }
    if (s->mk_dcol) /* the previous pass's, cleared */
        for (int32_t i = 0; i < s->lv_nd; i++) s->mk_dcol[s->lv_dxy[i] >> LV_Y_BITS] = 0;
    for (int32_t i = 0; i < nd; i++) {
        const int32_t c = s->lv_dirty[i], x = c % s->W, y = c / s->W;
        s->lv_dxy[i] = x << LV_Y_BITS | y;
        if (s->mk_dcol) s->mk_dcol[x] |= (uint64_t)1 << y;
    }
    s->lv_nd = nd;
    s->lv_cpass = s->pt_pass;
}

/* Applies the journal's map sharing changes; false when changes were lost. */
static bool lv_read_journal(soc *s)
{
    if (!s->lv_journal) return true;
    const polis_social_api *api = s->social;
    const uint64_t end = api->share_seq(api->self);
    const int32_t n = s->n_agents, nw = s->lv_words;
    for (uint64_t seq = s->lv_seq; seq < end; seq++) {
        polis_social_share what;
        int32_t from, to;
        bool on;
        if (!api->share_change(api->self, seq, &what, &from, &to, &on)) return false;
        if (what != POLIS_SOCIAL_SHARE_MAP || from < 0 || to < 0 || from >= n || to >= n ||
            from == to)
            continue;
        uint64_t *m = s->lv_member + (size_t)to * (size_t)nw + (size_t)(from >> 6);
        uint64_t *r = s->lv_rev + (size_t)from * (size_t)nw + (size_t)(to >> 6);
        const uint64_t mb = (uint64_t)1 << (from & 63), rb = (uint64_t)1 << (to & 63);
        if (((*m & mb) != 0) == on) continue;
        *m ^= mb;
        *r ^= rb;
        s->lv_nown[to] += on ? 1 : -1;
        lv_push(s, to, from, LV_SHARE, lv_window_cells(s, from));
    }
    s->lv_seq = end;
    return true;
}

/* The OBSERVE hook's part: what changed since the last pass, queued for the viewers. */
static void lv_prepare(soc *s)
{
    const int32_t n = s->n_agents, nw = s->lv_words;
    const uint32_t pass = s->pt_pass;
    s->lv_nev = 0;
    for (int32_t v = 0; v < n; v++) {
        s->lv_head[v] = -1;
        s->lv_work[v] = 0;
    }
    if (s->lv_synced && !lv_read_journal(s)) s->lv_synced = false;
    if (s->lv_cpass != pass) lv_scan(s);
    if (s->lv_cdiff != pass) s->lv_synced = false; /* the copies were taken whole */
    if (!s->lv_synced) {
        lv_resync(s);
        return;
    }
    /* owners that moved or see something else */
    uint64_t all_res = 0, all_rec = 0, min_res = ~(uint64_t)0, min_rec = ~(uint64_t)0;
    for (int32_t o = 0; o < n; o++) {
        all_res |= s->vis_res[o];
        all_rec |= s->vis_rec[o];
        min_res &= s->vis_res[o];
        min_rec &= s->vis_rec[o];
        const bool moved = s->ax[o] != s->lv_x[o] || s->ay[o] != s->lv_y[o];
        if (!moved && s->vis_res[o] == s->lv_vres[o] && s->vis_rec[o] == s->lv_vrec[o]) continue;
        s->lv_ostamp[o] = pass;
        s->lv_ox[o] = s->lv_x[o];
        s->lv_oy[o] = s->lv_y[o];
        s->lv_ovres[o] = s->lv_vres[o];
        s->lv_ovrec[o] = s->lv_vrec[o];
        if (moved) {
            lv_cover_window(s, o, s->lv_x[o], s->lv_y[o], false);
            lv_cover_window(s, o, s->ax[o], s->ay[o], true);
        }
        s->lv_x[o] = s->ax[o];
        s->lv_y[o] = s->ay[o];
        s->lv_vres[o] = s->vis_res[o];
        s->lv_vrec[o] = s->vis_rec[o];
        /* a move writes the cells entering and leaving the window, a new vis all of them */
        const soc_job *job = &s->jobs[s->agent_job[o]];
        const int32_t cells = s->lv_ostamp[o] == pass && (s->vis_res[o] != s->lv_ovres[o] ||
                                                          s->vis_rec[o] != s->lv_ovrec[o])
                                  ? 2 * lv_window_cells(s, o)
                                  : 2 * (2 * job->fov_h + 2 * job->fov_v + 2);
        const uint64_t *rev = s->lv_rev + (size_t)o * (size_t)nw;
        for (int32_t w = 0; w < nw; w++)
            for (uint64_t b = rev[w]; b; b &= b - 1) {
                const int32_t v = w * 64 + lowest_bit(b);
                lv_push(s, v, o, LV_OWNER, cells);
            }
    }
    s->lv_all_res = all_res;
    s->lv_all_rec = all_rec;
    s->lv_min_res = min_res;
    s->lv_min_rec = min_rec;
    /* each cell lv_scan found changed, for the viewers of the owners covering it */
    uint64_t *tmp = s->lv_tmp;
    for (int32_t i = 0; i < s->lv_nd; i++) {
        const int32_t c = s->lv_dirty[i];
        const uint64_t *cov = s->lv_cover + (size_t)c * (size_t)nw;
        memset(tmp, 0, sizeof *tmp * (size_t)nw);
        bool any = false;
        for (int32_t w = 0; w < nw; w++)
            for (uint64_t b = cov[w]; b; b &= b - 1) {
                const uint64_t *rev = s->lv_rev + (size_t)(w * 64 + lowest_bit(b)) * (size_t)nw;
                for (int32_t k = 0; k < nw; k++) tmp[k] |= rev[k];
                any = true;
            }
        if (!any) continue;
        const int32_t xy = s->lv_dxy[i];
        for (int32_t w = 0; w < nw; w++)
            for (uint64_t b = tmp[w]; b; b &= b - 1)
                lv_push(s, w * 64 + lowest_bit(b), xy, LV_CELL, 1);
    }
}

/* Live views pay when most records are brought up to date, not painted whole: when agents
 * move at nearly every step (a moved viewer sees every cell elsewhere) or every agent
 * shares with its whole group (the Social Structure games, where the pass's merged views
 * serve every member), keeping them costs more than it saves. When more than three records
 * in four were painted whole over LV_WINDOW passes (not counting a rebuild's, which paints
 * them all), they pause for LV_PAUSE passes, after which they are rebuilt (lv_resync) and
 * looked at again. */
#define LV_WINDOW 8
#define LV_PAUSE 256

static void lv_pass_start(soc *s)
{
    const uint32_t pass = s->pt_pass;
    if (s->lv_active && ++s->lv_passes > LV_WINDOW) {
        if (s->lv_n_full > 3 * s->lv_n_inc) {
            s->lv_active = false;
            s->lv_resume = pass + LV_PAUSE;
            s->lv_synced = false;
        }
        s->lv_n_inc = s->lv_n_full = s->lv_passes = 0;
    }
    if (!s->lv_active && (int32_t)(pass - s->lv_resume) >= 0) {
        s->lv_active = true;
        s->lv_n_inc = s->lv_n_full = s->lv_passes = 0;
    }
    if (s->lv_active) lv_prepare(s);
}

/* What live updates write with: the record, the layers, the painted-element list. */
typedef struct lv_painter {
    void *o; /* int16_t elements, or uint8_t ones (s->grid_w8) */
    const int32_t *ag, *bl, *rc;
    const uint64_t *member; /* the viewer's owners */
    const uint64_t *stable; /* those no event of the viewer names (lv_vmark[o] != tok) */
    size_t plane;
    int32_t W, H, B, vx, vy; /* the viewer's position */
    uint32_t tok;            /* lv_vmark[o] == tok: o changed for this viewer this pass */
    bool track;              /* list elements that become non-zero */
    int32_t *list;
    int32_t n, cap;
    /* lv_refresh8 when the record holds bytes, else lv_refresh16 */
    void (*refresh)(const struct soc *, struct lv_painter *, int32_t, int32_t);
} lv_painter;

/* Stores val at off (one byte when w8_, as PUT), listing the element when it becomes
 * non-zero (track); the record, the list and its count are locals of lv_refresh (through the
 * painter, each int32 store into the list could alias the count, which was then reloaded per
 * element). */
#define LV_PUT(off, val)                                                                           \
    do {                                                                                           \
        const size_t off_ = (off);                                                                 \
        const int16_t v_ = (val);                                                                  \
        if (track && v_ && !(w8_ ? o8[off_] : o16[off_])) {                                        \
            if (n < cap) list[n] = (int32_t)off_;                                                  \
            n += n <= cap;                                                                         \
        }                                                                                          \
        if (w8_)                                                                                   \
            o8[off_] = (uint8_t)v_;                                                                \
        else                                                                                       \
            o16[off_] = v_;                                                                        \
    } while (0)
/* Stores a zero: nothing for the painted-element list. */
#define LV_ZERO(off)                                                                               \
    do {                                                                                           \
        if (w8_)                                                                                   \
            o8[off] = 0;                                                                           \
        else                                                                                       \
            o16[off] = 0;                                                                          \
    } while (0)

/* Writes the cell at grid offset `at` from the world: what the viewer's owners covering it
 * see, zeros where none does, the elements of its content before this pass cleared first
 * when it changed. */
static ALWAYS_INLINE void lv_refresh_as(const soc *s, lv_painter *p, int32_t cell, int32_t at,
                                        const bool w8_)
{
    const int32_t nw = s->lv_words;
    const uint64_t *cw = s->lv_cover + (size_t)cell * (size_t)nw;
    uint64_t vres = 0, vrec = 0;
    bool cov = false;
    for (int32_t w = 0; w < nw; w++) {
        for (uint64_t m = cw[w] & p->member[w]; m; m &= m - 1) {
            const int32_t q = w * 64 + lowest_bit(m);
            cov = true;
            vres |= s->vis_res[q];
            vrec |= s->vis_rec[q];
            if (vres == s->lv_all_res && vrec == s->lv_all_rec) goto seen;
        }
    }
seen:;
    int16_t *const o16 = p->o;
    uint8_t *const o8 = p->o;
    int32_t *const list = p->list;
    const bool track = p->track;
    const int32_t cap = p->cap;
    int32_t n = p->n;
    const size_t plane = p->plane, a = (size_t)at;
    const int32_t R = s->R;
    const soc_amount *const amounts = s->amounts;
    if (s->lv_cstamp[cell] == s->pt_pass) {
        if (s->lv_oag[cell]) LV_ZERO(a);
        if (s->lv_obl[cell]) LV_ZERO(plane + a);
        const int32_t k = s->lv_orc[cell] - 1;
        if (k >= 0) {
            const soc_recipe *rc = &s->rec[k];
            const soc_amount *in = amounts + rc->in, *out = amounts + rc->out;
            for (int32_t q = 0, nq = rc->n_in; q < nq; q++)
                LV_ZERO((size_t)(2 + in[q].res) * plane + a);
            for (int32_t q = 0, nq = rc->n_out; q < nq; q++)
                LV_ZERO((size_t)(2 + out[q].res) * plane + a);
        }
        for (uint64_t b = s->lv_opb[cell]; b; b &= b - 1)
            LV_ZERO((size_t)(2 + R + lowest_bit(b)) * plane + a);
    }
    const int32_t ag = p->ag[cell];
    if (ag) LV_PUT(a, cov ? sat16(ag) : 0);
    if (p->bl[cell]) LV_PUT(plane + a, (int16_t)cov);
    const int32_t k = p->rc[cell] - 1;
    if (k >= 0) {
        const soc_recipe *rc = &s->rec[k];
        const size_t z = 2 * plane + a;
        const soc_amount *in = amounts + rc->in, *out = amounts + rc->out;
        const int32_t n_in = rc->n_in, n_out = rc->n_out; /* a byte store may alias them */
        if (cov && ((vrec >> k) & 1u)) {
            for (int32_t q = 0; q < n_in; q++)
                LV_PUT(z + (size_t)in[q].res * plane, sat16(-in[q].n));
            for (int32_t q = 0; q < n_out; q++)
                LV_PUT(z + (size_t)out[q].res * plane, sat16(out[q].n));
        } else { /* zeros: nothing for the painted-element list */
            for (int32_t q = 0; q < n_in; q++) LV_ZERO(z + (size_t)in[q].res * plane);
            for (int32_t q = 0; q < n_out; q++) LV_ZERO(z + (size_t)out[q].res * plane);
        }
    }
    const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
    for (uint64_t b = s->lv_pb[cell]; b; b &= b - 1) {
        const int32_t r = lowest_bit(b);
        LV_PUT((size_t)(2 + R + r) * plane + a,
               cov && ((vres >> r) & 1u) ? pile16(pile[r], s->pile_obs[r]) : 0);
    }
    p->n = n;
}
#undef LV_ZERO
#undef LV_PUT

/* Writing bytes (compact observations) is a copy of its own, like painting's, called through
 * p->refresh: when this copy listed changes for the kernel instead, a test in every store, or
 * both copies in one function, cost plain records 5-10% of the refresh. */
static void lv_refresh8(const soc *s, lv_painter *p, int32_t cell, int32_t at)
{
    lv_refresh_as(s, p, cell, at, true);
}

static void lv_refresh16(const soc *s, lv_painter *p, int32_t cell, int32_t at)
{
    lv_refresh_as(s, p, cell, at, false);
}

static ALWAYS_INLINE void lv_refresh(const soc *s, lv_painter *p, int32_t cell, int32_t at)
{
    p->refresh(s, p, cell, at);
}

/* Whether one of the viewer's owners that did not change this pass (no event of the viewer
 * names it: it has not moved, started or stopped sharing, or changed its vis) covers the
 * cell and sees at least (nres, nrec): then the changing owner o, which showed and shows
 * there at most that, changes nothing the cell shows. If every changing owner covering a
 * cell skips it this way, the cell shows what the unchanged owners show, before and after;
 * a cell whose content changed has its own event. `anyone`: every agent sees at least
 * (nres, nrec) (Exploration's agents all see the same), so any unchanged owner covering the
 * cell does, a test of whole words of the sets. */
static inline bool lv_shown_by_other(const soc *s, const lv_painter *p, int32_t cell, uint64_t nres,
                                     uint64_t nrec, bool anyone)
{
    const int32_t nw = s->lv_words;
    const uint64_t *cw = s->lv_cover + (size_t)cell * (size_t)nw;
    if (anyone) {
        for (int32_t w = 0; w < nw; w++)
            if (cw[w] & p->stable[w]) return true;
        return false;
    }
    for (int32_t w = 0; w < nw; w++)
        for (uint64_t m = cw[w] & p->member[w]; m; m &= m - 1) {
            const int32_t q = w * 64 + lowest_bit(m);
            if (s->lv_vmark[q] != p->tok && !(nres & ~s->vis_res[q]) && !(nrec & ~s->vis_rec[q]))
                return true;
        }
    return false;
}

/* Refreshes rows [a, b) of the window column at map column x (grid column i) whose first
 * row is map row y0 (grid row j0), except the cells lv_shown_by_other skips. */
static ALWAYS_INLINE void lv_column(const soc *s, lv_painter *p, int32_t x, int32_t i, int32_t y0,
                                    int32_t j0, int32_t a, int32_t b, uint64_t nres, uint64_t nrec,
                                    bool anyone)
{
    const int32_t W = p->W, H = p->H;
    int32_t y = y0 + a, j = j0 + a;
    if (y >= H) y -= H;
    if (j >= H) j -= H;
    const int32_t at0 = i * p->B;
    for (int32_t dy = a; dy < b; dy++) {
        const int32_t cell = y * W + x;
        if (!lv_shown_by_other(s, p, cell, nres, nrec, anyone)) lv_refresh(s, p, cell, at0 + j);
        if (++y == H) y = 0;
        if (++j == H) j = 0;
    }
}

/* Refreshes the cells of owner o's window at (cx, cy), except (skip) those also in o's
 * window at (sx, sy), and those another owner shows as o would (lv_shown_by_other with what
 * o sees and saw). With skip, a column inside the other window's columns has only the rows
 * outside its rows to write: one cyclic run of the window's rows ([ra, rb), found once),
 * so a one-cell move visits the cells that entered or left, not the whole window. */
static void lv_window(const soc *s, lv_painter *p, int32_t o, int32_t cx, int32_t cy, bool skip,
                      int32_t sx, int32_t sy)
{
    uint64_t nres = s->vis_res[o], nrec = s->vis_rec[o];
    if (s->lv_ostamp[o] == s->pt_pass) {
        nres |= s->lv_ovres[o];
        nrec |= s->lv_ovrec[o];
    }
    const bool anyone = !(nres & ~s->lv_min_res) && !(nrec & ~s->lv_min_rec);
    const soc_job *job = &s->jobs[s->agent_job[o]];
    const int32_t W = p->W, H = p->H, fh = job->fov_h, fv = job->fov_v;
    const bool allx = 2 * fh + 1 >= W, ally = 2 * fv + 1 >= H;
    const int32_t w = allx ? W : 2 * fh + 1, hh = ally ? H : 2 * fv + 1;
    const int32_t x0 = lv_wrap(cx - fh, W), y0 = lv_wrap(cy - fv, H);
    const int32_t j0 = lv_wrap(y0 - p->vy + H / 2, H);
    /* the rows outside the other window's rows (none when it spans every row); should
     * they not be one run, the rows between are refreshed too, which writes what they
     * show already */
    int32_t ra = 0, rb = 0;
    if (skip && !ally) {
        int32_t uy = lv_wrap(y0 - sy + fv, H);
        ra = -1;
        for (int32_t dy = 0; dy < hh; dy++) {
            if (uy > 2 * fv) {
                if (ra < 0) ra = dy;
                rb = dy + 1;
            }
            if (++uy == H) uy = 0;
        }
        if (ra < 0) ra = rb = 0;
    }
    int32_t x = x0, i = lv_wrap(x0 - p->vx + W / 2, W), ux = lv_wrap(x0 - sx + fh, W);
    for (int32_t dx = 0; dx < w; dx++) {
        if (skip && (allx || ux <= 2 * fh)) {
            if (ra < rb) lv_column(s, p, x, i, y0, j0, ra, rb, nres, nrec, anyone);
        } else {
            lv_column(s, p, x, i, y0, j0, 0, hh, nres, nrec, anyone);
        }
        if (++x == W) x = 0;
        if (++i == W) i = 0;
        if (++ux == W) ux = 0;
    }
}

static inline bool lv_moved(const soc *s, int32_t o)
{
    return s->lv_ostamp[o] == s->pt_pass && (s->lv_ox[o] != s->ax[o] || s->lv_oy[o] != s->ay[o]);
}

/* A viewer that moved by one cell sees every cell one place further: its record is shifted
 * whole (a rotation of each channel's W x H torus) and then brought up to date like any
 * other, its own move being one of its events. (dx, dy): the move from (fx, fy) to (tx,
 * ty), each -1, 0 or 1 after wrapping, and not both non-zero; false for any other move
 * (painted whole). lv_shift_of: v's move since the live views' last pass. */
static bool shift_between(const soc *s, int32_t fx, int32_t fy, int32_t tx, int32_t ty, int32_t *dx,
                          int32_t *dy)
{
    int32_t x = tx - fx, y = ty - fy;
    if (x == s->W - 1 || x == 1 - s->W) x = x > 0 ? -1 : 1;
    if (y == s->H - 1 || y == 1 - s->H) y = y > 0 ? -1 : 1;
    if (x < -1 || x > 1 || y < -1 || y > 1 || (x && y) || s->W < 3 || s->H < 3) return false;
    *dx = x;
    *dy = y;
    return true;
}

static bool lv_shift_of(const soc *s, int32_t v, int32_t *dx, int32_t *dy)
{
    return shift_between(s, s->lv_ox[v], s->lv_oy[v], s->ax[v], s->ay[v], dx, dy);
}

/* The shift's cost in the cells of lv_current: a memmove of the record (about 256 elements
 * in the time of writing a cell again) and, per channel, the wrapping column (x) or each
 * column's wrapping element (y). */
static int64_t lv_shift_cost(const soc *s, int32_t dy)
{
    const int64_t ch = 2 + 2 * (int64_t)s->R, elems = ch * s->W * s->H;
    return elems / 1024 + (dy ? ch * s->W / 32 : ch / 2);
}

/* new[i][j] = old[i + dx][j + dy] in every channel (i, j wrapped: the map view is a torus
 * centred on the viewer). The record moves by one column (dx) or one element (dy) with one
 * memmove; each channel's wrapping column (each column's wrapping element) then holds the
 * next channel's (column's) old first one, so those are passed along by one, in place, and
 * the first (last) comes from a copy. es: bytes an element (2, or 1 when s->grid_w8). */
static ALWAYS_INLINE void lv_shift_as(const soc *s, void *rec, int32_t dx, int32_t dy,
                                      const size_t es)
{
    const int32_t ch = 2 + 2 * s->R;
    const size_t h = (size_t)s->H, plane = (size_t)s->W * h, elems = (size_t)ch * plane;
    uint8_t *o = rec, *edge = (uint8_t *)s->lv_edge;
    /* element i */
#define E(i) (o + (i)*es)
    if (dx > 0) { /* plane c's last column gets plane c's old first one */
        memcpy(edge, o, es * h);
        memmove(o, E(h), es * (elems - h));
        for (int32_t c = ch - 1; c > 0; c--)
            memcpy(E((size_t)c * plane + plane - h), E((size_t)(c - 1) * plane + plane - h),
                   es * h);
        memcpy(E(plane - h), edge, es * h);
    } else if (dx < 0) { /* plane c's first column gets plane c's old last one */
        memcpy(edge, E(elems - h), es * h);
        memmove(E(h), o, es * (elems - h));
        for (int32_t c = 0; c + 1 < ch; c++)
            memcpy(E((size_t)c * plane), E((size_t)(c + 1) * plane), es * h);
        memcpy(E(elems - plane), edge, es * h);
    } else if (dy > 0) { /* column c's last element gets column c's old first one */
        memcpy(edge, o, es);
        memmove(o, E(1), es * (elems - 1));
        for (size_t e = elems - 1; e >= 2 * h - 1; e -= h) memcpy(E(e), E(e - h), es);
        memcpy(E(h - 1), edge, es);
    } else { /* column c's first element gets column c's old last one */
        memcpy(edge, E(elems - 1), es);
        memmove(E(1), o, es * (elems - 1));
        for (size_t e = 0; e + h < elems; e += h) memcpy(E(e), E(e + h), es);
        memcpy(E(elems - h), edge, es);
    }
#undef E
}

static void lv_shift(const soc *s, void *o, int32_t dx, int32_t dy)
{
    if (s->grid_w8)
        lv_shift_as(s, o, dx, dy, 1);
    else
        lv_shift_as(s, o, dx, dy, sizeof(int16_t));
}

/* Whether v's record (at o) can be brought up to date from its events, and that is
 * cheaper than painting it whole: writing a cell again (the union of the owners covering
 * it, its old elements cleared, the new written) costs about LV_CELL_COST times what
 * painting a covered cell does, and painting whole covers at most the owners' windows.
 * When every agent shares with its group and most move at every step (the Social
 * Structure games), painting whole, from the pass's merged views, is the cheaper. A
 * viewer that moved one cell is shifted first (lv_shift), when that is cheaper too. */
#define LV_CELL_COST 1

static bool lv_current(const soc *s, int32_t v, const void *o)
{
    const uint32_t pass = s->pt_pass;
    if (s->og_dst[v] != o || s->lv_pass[v] + 1 != pass || s->lv_sync_pass == pass ||
        s->lv_full[v] == pass)
        return false;
    int64_t cost = s->lv_work[v] * LV_CELL_COST;
    if (lv_moved(s, v)) {
        int32_t dx, dy;
        if (!lv_shift_of(s, v, &dx, &dy)) return false;
        cost += lv_shift_cost(s, dy);
    }
    const int64_t owners = s->lv_nown[v];
    const int64_t whole = (int64_t)(2 * s->hmax + 1) * (2 * s->vmax + 1) * owners;
    return cost <= (whole < s->cells ? whole : s->cells);
}

/* Replays v's events into its record. */
static void lv_update(soc *s, int32_t v, void *o)
{
    if (++s->lv_vtok == 0) {
        memset(s->lv_vmark, 0, sizeof *s->lv_vmark * (size_t)s->n_agents);
        s->lv_vtok = 1;
    }
    uint64_t *stable = s->lv_stable;
    /* every field named: with one left out the painter was cleared with a `rep stos` first,
     * whose start-up cost showed in the samples */
    lv_painter p = {.o = o,
                    .ag = soc_layer(s, s->L_agents, 0),
                    .bl = soc_layer(s, s->L_blocks, 0),
                    .rc = soc_layer(s, s->L_recipes, 0),
                    .member = s->lv_member + (size_t)v * (size_t)s->lv_words,
                    .stable = stable,
                    .plane = (size_t)s->A * (size_t)s->B,
                    .W = s->W,
                    .H = s->H,
                    .B = s->B,
                    .vx = s->ax[v],
                    .vy = s->ay[v],
                    .tok = s->lv_vtok,
                    .track = s->og_cap > 0 && s->og_n[v] >= 0,
                    .list = s->og_list + (size_t)v * (size_t)s->og_cap,
                    .n = s->og_n[v] > 0 ? s->og_n[v] : 0,
                    .cap = s->og_cap,
                    .refresh = s->grid_w8 ? lv_refresh8 : lv_refresh16};
    memcpy(stable, p.member, sizeof *stable * (size_t)s->lv_words);
    for (int32_t e = s->lv_head[v]; e >= 0; e = s->lv_next[e])
        if ((s->lv_ev[e] & 3) != LV_CELL) {
            const int32_t q = s->lv_ev[e] >> 2;
            s->lv_vmark[q] = p.tok;
            stable[q >> 6] &= ~((uint64_t)1 << (q & 63));
        }
    for (int32_t e = s->lv_head[v]; e >= 0; e = s->lv_next[e]) {
        const int32_t id = s->lv_ev[e] >> 2;
        switch (s->lv_ev[e] & 3) {
        case LV_CELL: {
            const int32_t x = id >> LV_Y_BITS, y = id & ((1 << LV_Y_BITS) - 1);
            lv_refresh(s, &p, y * s->W + x,
                       lv_wrap(x - p.vx + s->W / 2, s->W) * s->B +
                           lv_wrap(y - p.vy + s->H / 2, s->H));
            break;
        }
        case LV_OWNER:
            if (s->lv_ovres[id] != s->vis_res[id] || s->lv_ovrec[id] != s->vis_rec[id]) {
                /* it sees something else: its whole window, where it was and where it is */
                lv_window(s, &p, id, s->ax[id], s->ay[id], false, 0, 0);
                if (lv_moved(s, id))
                    lv_window(s, &p, id, s->lv_ox[id], s->lv_oy[id], true, s->ax[id], s->ay[id]);
            } else { /* it moved: the cells that entered or left its window */
                lv_window(s, &p, id, s->ax[id], s->ay[id], true, s->lv_ox[id], s->lv_oy[id]);
                lv_window(s, &p, id, s->lv_ox[id], s->lv_oy[id], true, s->ax[id], s->ay[id]);
            }
            break;
        default: /* LV_SHARE */
            lv_window(s, &p, id, s->ax[id], s->ay[id], false, 0, 0);
            if (lv_moved(s, id))
                lv_window(s, &p, id, s->lv_ox[id], s->lv_oy[id], true, s->ax[id], s->ay[id]);
            break;
        }
    }
    s->og_n[v] = p.track && p.n <= p.cap ? p.n : -1;
}

/* v's owners into s->views, v first: the sets live updates keep (soc_views asks the social
 * service). */
static int32_t lv_views(soc *s, int32_t v)
{
    const uint64_t *m = s->lv_member + (size_t)v * (size_t)s->lv_words;
    int32_t n = 0;
    s->views[n++] = v;
    for (int32_t w = 0; w < s->lv_words; w++)
        for (uint64_t b = m[w]; b; b &= b - 1) {
            const int32_t o = w * 64 + lowest_bit(b);
            if (o != v) s->views[n++] = o;
        }
    return n;
}

/* ---- kept merged views: the viewer's side (see "kept merged views" above) ---- */

/* v's record now shows slot mv at this pass, where v is. */
static void mk_note(soc *s, int32_t v, const soc_mview *mv)
{
    s->mk_slot[v] = (int32_t)(mv - s->mv);
    s->mk_gen[v] = mv->gen;
    s->mk_pass[v] = s->pt_pass;
    s->mk_x[v] = s->ax[v];
    s->mk_y[v] = s->ay[v];
}

/* v's slot for this pass, with its owner count in *n: when no map sharing changed since
 * the previous pass and v's record showed a slot then, that slot (its set is v's), without
 * asking for v's owners; else v's owners into s->views and mv_find (NULL when v's view
 * is not merged). */
static soc_mview *mk_lookup(soc *s, int32_t v, int32_t *n)
{
    const uint32_t pass = s->pt_pass;
    const int32_t k = s->mk_slot[v];
    if (s->mk_same && k >= 0 && s->mk_pass[v] + 1 == pass && s->mv[k].gen == s->mk_gen[v] &&
        s->mv[k].pass != 0) {
        soc_mview *mv = &s->mv[k];
        s->mv_viewers++;
        s->mv_hits += mv->pass == pass;
        mv->pass = pass;
        mv_track(s, mv);
        *n = mv->n_owners;
        return mv;
    }
    *n = s->lv_active ? lv_views(s, v) : soc_views(s, v);
    if (!s->vis_bits || (*n <= 1 && !s->self_overlap)) return NULL;
    return mv_find(s, *n);
}

/* Brings v's record (at o), which showed slot mv at the previous pass, to this pass: shifted
 * by v's move, then the slot's changes stored. false (nothing written) when the record is
 * not known to hold that, or v moved further than one cell. The record holds the grid's
 * stored dtype (bytes with compact observations, s->grid_w8): the shift and the stores
 * follow it. */
static bool mk_store(soc *s, int32_t v, void *o, const soc_mview *mv)
{
    const uint32_t pass = s->pt_pass;
    if (mv->dpass != pass || s->og_dst[v] != o || s->mk_slot[v] != (int32_t)(mv - s->mv) ||
        s->mk_gen[v] != mv->gen || s->mk_pass[v] + 1 != pass)
        return false;
    if (s->ax[v] != s->mk_x[v] || s->ay[v] != s->mk_y[v]) {
        int32_t dx, dy;
        if (!shift_between(s, s->mk_x[v], s->mk_y[v], s->ax[v], s->ay[v], &dx, &dy)) return false;
        lv_shift(s, o, dx, dy);
    }
    const soc_mview d = {.el = mv->dl, .n_el = mv->n_dl};
    painter p = {.o = o, .n = 0, .cap = 0, .w8 = s->grid_w8};
    mv_paint(s, v, &d, &p); /* cap 0: nothing listed */
    s->og_n[v] = -1;        /* the painted-element list is not kept */
    mk_note(s, v, mv);
    return true;
}

bool soc_sees(const soc *s, int32_t viewer, int32_t target)
{
    return viewer == target || !s->vis->active(s->ctx) || s->vis->visible(s->ctx, viewer, target);
}

/* Who sees whom: the agents the viewer may not see leave the agents channel, after the
 * painters (which know nothing of it) wrote the record. A record changed here is painted
 * whole next time: the incremental painters assume it holds what they wrote. The channel's
 * values are ids + 1 >= 0: a byte record's are read as u8 (ids up to 254 in u8, 126 in i8). */
static void hide_agents(soc *s, int32_t agent, void *rec)
{
    if (!s->vis->active(s->ctx)) return;
    const size_t plane = (size_t)s->A * (size_t)s->B;
    int16_t *o16 = rec;
    uint8_t *o8 = rec;
    bool changed = false;
    for (size_t i = 0; i < plane; i++) {
        int32_t q = (s->grid_w8 ? o8[i] : o16[i]) - 1;
        if (q >= 0 && q != agent && q < s->n_agents && !s->vis->visible(s->ctx, agent, q)) {
            if (s->grid_w8)
                o8[i] = 0;
            else
                o16[i] = 0;
            changed = true;
        }
    }
    if (changed) s->og_dst[agent] = NULL;
}

static void write_grid(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    void *o = dst;
    if (s->grid_dt < 0) { /* the first write: i16, or a byte when compact narrowed it */
        s->grid_dt = s->obs_api->stored(ctx, s->id_grid);
        s->grid_w8 = s->grid_dt == POLIS_DTYPE_U8 || s->grid_dt == POLIS_DTYPE_I8;
    }
    painter p = {.o = o,
                 .ag = soc_layer(s, s->L_agents, 0),
                 .bl = soc_layer(s, s->L_blocks, 0),
                 .rc = soc_layer(s, s->L_recipes, 0),
                 .kinds = s->kinds,
                 .piles = s->piles,
                 .pcap = s->pile_obs,
                 .rec = s->rec,
                 .amounts = s->amounts,
                 .plane = (size_t)s->A * (size_t)s->B,
                 .R = s->R,
                 .list = s->og_list + (size_t)agent * (size_t)s->og_cap,
                 .n = 0,
                 .cap = s->og_cap,
                 .w8 = s->grid_w8};
    soc_mview *mv = NULL; /* the slot, once looked up (kept views) */
    int32_t n = 0;        /* then its owner count (the owners in s->views when not kept) */
    if (s->mk_on && s->mv_use) {
        mv = mk_lookup(s, agent, &n);
        if (mv && mk_store(s, agent, o, mv)) {
            if (s->lv_active) { /* the record is current: for the live views, painted whole */
                s->lv_pass[agent] = s->pt_pass;
                s->lv_n_full++;
            }
            hide_agents(s, agent, o);
            return;
        }
    }
    if (s->lv_active) {
        const bool current = lv_current(s, agent, o);
        s->lv_pass[agent] = s->pt_pass;
        if (current) {
            int32_t dx, dy;
            if (lv_moved(s, agent) && lv_shift_of(s, agent, &dx, &dy)) {
                lv_shift(s, o, dx, dy);
                s->og_n[agent] = -1; /* the painted-element list no longer holds */
                /* for the pause, a shifted record counts as painted whole, as it was: where
                 * most viewers move at every step (the Social Structure games) their
                 * owners' moves make the events cost more than the pass's merged views */
                s->lv_n_full++;
            } else {
                s->lv_n_inc++;
            }
            lv_update(s, agent, o);
            hide_agents(s, agent, o);
            return;
        }
        s->lv_n_full += s->lv_sync_pass != s->pt_pass;
    }
    int32_t last = s->og_n[agent];
    const size_t elems = (size_t)(2 + 2 * s->R) * p.plane;
    /* memset clears about 16 elements in the time of one scattered store: past elems / 16
     * listed elements the whole clear is the cheaper one (the Hard mini-games' merged maps) */
    if (s->og_dst[agent] != o || last < 0 || (size_t)last > elems / 16) {
        memset(o, 0, (s->grid_w8 ? 1 : sizeof(int16_t)) * elems);
        s->og_dst[agent] = o;
    } else if (s->grid_w8) {
        for (int32_t i = 0; i < last; i++) ((uint8_t *)o)[p.list[i]] = 0;
    } else {
        for (int32_t i = 0; i < last; i++) ((int16_t *)o)[p.list[i]] = 0;
    }
    if (s->view == SOC_VIEW_WINDOW) {
        paint(s, agent, agent, false, &p);
    } else {
        const bool looked = n > 0; /* by mk_lookup: its slot, if any, is mv */
        if (!looked) n = s->lv_active ? lv_views(s, agent) : soc_views(s, agent);
        if (s->vis_bits && (n > 1 || s->self_overlap)) {
            if (!looked && s->pt_cap) mv = mv_find(s, n);
            if (mv) {
                mv_fill(s, mv);
                mv_paint(s, agent, mv, &p);
                if (s->mk_on) mk_note(s, agent, mv);
            } else if (s->H > 64 || !paint_merged_columns(s, agent, n, &p))
                paint_merged(s, agent, n, &p);
        } else {
            for (int32_t i = 0; i < n; i++) paint(s, agent, s->views[i], true, &p);
        }
    }
    s->og_n[agent] = p.n > p.cap || !p.cap ? -1 : p.n;
    hide_agents(s, agent, o);
}

void soc_seen_bits(soc *s, int32_t agent)
{
    if (!s->vis_bits) return;
    const uint8_t *row = s->seen + (size_t)agent * (size_t)(s->R + s->K);
    uint64_t res = 0, rec = 0;
    for (int32_t r = 0; r < s->R; r++) res |= (uint64_t)(row[r] != 0) << r;
    for (int32_t k = 0; k < s->K; k++) rec |= (uint64_t)(row[s->R + k] != 0) << k;
    s->vis_res[agent] = res;
    s->vis_rec[agent] = rec;
}

static void write_inventory(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    memcpy(dst, s->inv + (size_t)agent * (size_t)s->R, sizeof(int32_t) * (size_t)s->R);
}

/* Position and time: with compact observations they are stored as u8 / i16 (their ranges,
 * declare_ranges, hold by the rules and the kernel's truncation), and written so directly
 * (observations API version 2, writes_stored), the kernel narrowing nothing. */
static inline void put_stored(void *dst, int32_t dt, size_t i, int32_t v)
{
    switch (dt) {
    case POLIS_DTYPE_U8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case POLIS_DTYPE_I8: ((int8_t *)dst)[i] = (int8_t)v; break;
    case POLIS_DTYPE_I16: ((int16_t *)dst)[i] = (int16_t)v; break;
    default: ((int32_t *)dst)[i] = v; break;
    }
}

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    const int32_t xy[2] = {s->ax[agent], s->ay[agent]};
    if (s->pos_dt == POLIS_DTYPE_I32) { /* plain observations */
        memcpy(dst, xy, sizeof xy);
    } else if (s->pos_dt == POLIS_DTYPE_U8) { /* compact, maps up to 256 cells a side */
        ((uint8_t *)dst)[0] = (uint8_t)xy[0];
        ((uint8_t *)dst)[1] = (uint8_t)xy[1];
    } else {
        if (s->pos_dt < 0) s->pos_dt = s->obs_api->stored(ctx, s->id_pos);
        put_stored(dst, s->pos_dt, 0, xy[0]);
        put_stored(dst, s->pos_dt, 1, xy[1]);
    }
}

static void write_time(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    if (s->time_dt < 0) s->time_dt = s->obs_api->stored(ctx, s->id_time);
    put_stored(dst, s->time_dt, 0, (int32_t)s->h->tick(ctx));
}

/* "wood, stone, ..." into buf. */
static void names(const soc *s, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t r = 0; r < s->R; r++) {
        int w = snprintf(buf + used, cap - used, "%s%d %s", r ? ", " : "", (int)r, s->res[r].name);
        if (w < 0 || (size_t)w >= cap - used) return;
        used += (size_t)w;
    }
}

/* ---- ranges (plugin ABI 1.4) ---------------------------------------------------------------
 *
 * Declared from invariants the rules keep whatever scripts do: an inventory never exceeds
 * its job's capacity and size (give and every pick check them), a pile shows at most
 * pile_shown units (the grid saturates, as it always did at 32767), a recipe station shows
 * its recipes' amounts. Totals of what the world generates are no bound: a script's give or
 * set_pile may add units. */
static polis_status declare_ranges(soc *s, int32_t grid, int32_t inv, int32_t pos, int32_t time)
{
    const polis_host *h = s->h;
    const int32_t R = s->R, C = 2 + 2 * R;
    double lo[2 + 2 * SOC_MAX_RESOURCES] = {0}, hi[2 + 2 * SOC_MAX_RESOURCES] = {0};
    for (int32_t c = 0; c < C; c++) lo[c] = hi[c] = 0;
    hi[0] = s->n_agents < 32767 ? s->n_agents : 32767;
    hi[1] = 1;
    for (int32_t k = 0; k < s->K; k++) {
        const soc_recipe *rc = &s->rec[k];
        for (int32_t q = 0; q < rc->n_in; q++) {
            const soc_amount *a = &s->amounts[rc->in + q];
            if (a->res < 0) continue;
            double v = sat16(-a->n);
            if (v < lo[2 + a->res]) lo[2 + a->res] = v;
        }
        for (int32_t q = 0; q < rc->n_out; q++) {
            const soc_amount *a = &s->amounts[rc->out + q];
            if (a->res < 0) continue;
            double v = sat16(a->n);
            if (v > hi[2 + a->res]) hi[2 + a->res] = v;
        }
    }
    for (int32_t r = 0; r < R; r++) {
        s->pile_obs[r] = (int32_t)s->p.pile_shown;
        hi[2 + R + r] = s->pile_obs[r];
    }
    polis_status st = h->obs_range(s->ctx, grid, 0, C, lo, hi);
    if (st) return st;
    for (int32_t r = 0; r < R; r++) {
        int64_t most = 0;
        for (int32_t j = 0; j < s->J; j++) {
            int64_t c = s->cap[(size_t)j * (size_t)R + (size_t)r];
            if (c > s->jobs[j].size) c = s->jobs[j].size;
            if (c > most) most = c;
        }
        lo[r] = 0;
        hi[r] = (double)(most < INT32_MAX ? most : INT32_MAX);
    }
    if ((st = h->obs_range(s->ctx, inv, 0, R, lo, hi))) return st;
    const double plo[2] = {0, 0}, phi[2] = {s->W - 1, s->H - 1};
    if ((st = h->obs_range(s->ctx, pos, 0, 2, plo, phi))) return st;
    const double tlo = 0, thi = (double)(h->max_steps(s->ctx) < INT32_MAX ? h->max_steps(s->ctx)
                                                                          : INT32_MAX);
    return h->obs_range(s->ctx, time, -1, 1, &tlo, &thi);
}

static polis_status lv_on_reset(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    soc *s = ud;
    s->lv_synced = false;
    s->lv_cok = false;    /* a new world: the copies are taken whole */
    s->mk_seq_ok = false; /* and the sharing may be another */
    return POLIS_OK;
}

/* Live merged views need the sharing journal when there is a social plugin, and their sets
 * of agents (per cell and twice per agent) within LV_SET_BYTES. */
#define LV_SET_BYTES ((size_t)64 << 20)

static polis_status lv_setup(soc *s)
{
    const polis_social_api *api = s->social;
    s->lv_journal =
        api &&
        api->struct_size >= offsetof(polis_social_api, share_change) + sizeof api->share_change &&
        api->share_seq && api->share_change;
    if (api && !s->lv_journal) return POLIS_OK;
    const size_t n = (size_t)s->n_agents, cells = (size_t)s->cells;
    const size_t nw = (n + 63) / 64;
    if ((cells + 2 * n) * nw * sizeof(uint64_t) > LV_SET_BYTES) return POLIS_OK;
    s->lv_words = (int32_t)nw;
    /* events: a few per agent and cell and pass; more and the viewer is painted whole */
    s->lv_cap = (int32_t)(16 * n + 4 * cells);
#define LA(field, count) ((s->field = soc_alloc(s, sizeof *s->field * (size_t)(count))) == NULL)
    if (LA(lv_cover, cells * nw) || LA(lv_member, n * nw) || LA(lv_rev, n * nw) || LA(lv_tmp, nw) ||
        LA(lv_pass, n) || LA(lv_x, n) || LA(lv_y, n) || LA(lv_ox, n) || LA(lv_oy, n) ||
        LA(lv_vres, n) || LA(lv_vrec, n) || LA(lv_ovres, n) || LA(lv_ovrec, n) ||
        LA(lv_ostamp, n) || LA(lv_ag, cells) || LA(lv_bl, cells) || LA(lv_rc, cells) ||
        LA(lv_pb, cells) || LA(lv_oag, cells) || LA(lv_obl, cells) || LA(lv_orc, cells) ||
        LA(lv_opb, cells) || LA(lv_cstamp, cells) || LA(lv_pmark, cells) || LA(lv_plist, cells) ||
        LA(lv_dirty, cells) || LA(lv_dxy, cells) || LA(lv_head, n) || LA(lv_ev, s->lv_cap) ||
        LA(lv_next, s->lv_cap) || LA(lv_full, n) || LA(lv_vmark, n) || LA(lv_work, n) ||
        LA(lv_stable, nw) || LA(lv_nown, n) ||
        LA(lv_edge, (size_t)(2 + 2 * s->R) * (size_t)(s->W > s->H ? s->W : s->H)))
        return POLIS_ERR_NOMEM;
#undef LA
    s->lv_on = s->lv_active = true;
    s->lv_synced = false;
    return s->h->hook(s->ctx, POLIS_PHASE_RESET, SOC_LAST_PRIORITY, lv_on_reset, s);
}

polis_status soc_register_observations(soc *s)
{
    const polis_host *h = s->h;
    polis_status st;
    s->hmax = s->vmax = 0;
    for (int32_t a = 0; a < s->n_agents; a++) {
        const soc_job *j = &s->jobs[s->agent_job[a]];
        if (j->fov_h > s->hmax) s->hmax = j->fov_h;
        if (j->fov_v > s->vmax) s->vmax = j->fov_v;
    }
    if (s->view == SOC_VIEW_MAP) {
        s->A = s->W;
        s->B = s->H;
    } else {
        s->A = 2 * s->hmax + 1;
        s->B = 2 * s->vmax + 1;
    }
    int64_t elems = (int64_t)(2 + 2 * s->R) * s->A * s->B;
    if (elems > (1 << 26)) {
        h->error(s->ctx,
                 "the grid observation would have %lld elements per agent; use a "
                 "smaller map, fov or \"view\": \"window\"",
                 (long long)elems);
        return POLIS_ERR_CONFIG;
    }
    /* The painted-element lists. A record of up to 4 KB is cleared whole (no list): that is
     * as cheap as listing what was painted (Contract's window, the 7x7 mini-games). A larger
     * record lists up to one element in 16, past which clearing the whole record is about as
     * cheap as clearing the listed elements one by one (write_grid), so a longer list would
     * never be used (and the list stays 1/8 of the record's size). */
    int64_t og_cap = elems <= 2048 ? 0 : elems / 16;
    size_t n = (size_t)s->n_agents, plane = (size_t)s->A * (size_t)s->B;
    s->og_cap = (int32_t)og_cap;
    if (!(s->obs_api = h->host_api(s->ctx, POLIS_OBSERVATIONS_API, 2))) return POLIS_ERR_PLUGIN;
    s->vis_bits = s->R <= 64 && s->K <= 64;
    s->self_overlap = 2 * s->hmax + 1 > s->W || 2 * s->vmax + 1 > s->H;
    if (!(s->og_dst = soc_alloc(s, sizeof *s->og_dst * n)) ||
        !(s->og_n = soc_alloc(s, sizeof *s->og_n * n)) ||
        !(s->og_list = soc_alloc(s, sizeof *s->og_list * n * (size_t)og_cap)))
        return POLIS_ERR_NOMEM;
    if (s->vis_bits && s->view == SOC_VIEW_MAP &&
        (!(s->vis_res = soc_alloc(s, sizeof *s->vis_res * n)) ||
         !(s->vis_rec = soc_alloc(s, sizeof *s->vis_rec * n)) ||
         !(s->cov_stamp = soc_alloc(s, sizeof *s->cov_stamp * plane)) ||
         !(s->cov_res = soc_alloc(s, sizeof *s->cov_res * plane)) ||
         !(s->cov_rec = soc_alloc(s, sizeof *s->cov_rec * plane)) ||
         !(s->cov_at = soc_alloc(s, sizeof *s->cov_at * plane)) ||
         !(s->cov_cell = soc_alloc(s, sizeof *s->cov_cell * plane)) ||
         !(s->cov_cols = soc_alloc(s, sizeof *s->cov_cols * SOC_COV_GROUPS * (size_t)s->W))))
        return POLIS_ERR_NOMEM;
    if (s->vis_bits && s->view == SOC_VIEW_MAP) {
        /* a cell holds at most an agent, a block, one recipe's amounts and R piles */
        int32_t most = 0;
        for (int32_t k = 0; k < s->K; k++)
            if (s->rec[k].n_in + s->rec[k].n_out > most) most = s->rec[k].n_in + s->rec[k].n_out;
        int64_t pt_cap = (int64_t)s->cells * (2 + most + s->R);
        s->pt_cap = (int32_t)(pt_cap < SOC_PT_MAX ? pt_cap : 0);
    }
    /* Maps past SOC_PT_MAX table elements (a 256x256 map with 14 resources) paint every pass
     * directly: the table and the slots would be 12 bytes an element, five times over. */
    if (s->pt_cap) {
        s->mv_use = true;
        if (!(s->pt_start = soc_alloc(s, sizeof *s->pt_start * ((size_t)s->cells + 1))) ||
            !(s->pt_need = soc_alloc(s, sizeof *s->pt_need * 2 * (size_t)s->cells)) ||
            !(s->pt_part = soc_alloc(s, sizeof *s->pt_part * 2 * (size_t)s->cells)) ||
            !(s->pt_el = soc_alloc(s, sizeof *s->pt_el * (size_t)s->pt_cap)) ||
            !(s->pf_start = soc_alloc(s, sizeof *s->pf_start * ((size_t)s->cells + 1))) ||
            !(s->pf_el = soc_alloc(s, sizeof *s->pf_el * (size_t)s->pt_cap)) ||
            !(s->mv = soc_alloc(s, sizeof *s->mv * SOC_MV_SLOTS)) ||
            !(s->mv_mark = soc_alloc(s, sizeof *s->mv_mark * n)))
            return POLIS_ERR_NOMEM;
        for (int32_t i = 0; i < SOC_MV_SLOTS; i++) {
            soc_mview *mv = &s->mv[i];
            if (!(mv->owners = soc_alloc(s, sizeof *mv->owners * n)) ||
                !(mv->el = soc_alloc(s, sizeof *mv->el * (size_t)s->pt_cap)))
                return POLIS_ERR_NOMEM;
        }
    }
    if (s->vis_bits && s->view == SOC_VIEW_MAP && (st = lv_setup(s))) return st;
    /* kept merged views: the slots, the live views' copies of the world, the column sets */
    if (s->pt_cap && s->lv_on && s->H <= 64) {
        if (!(s->mk_slot = soc_alloc(s, sizeof *s->mk_slot * n)) ||
            !(s->mk_gen = soc_alloc(s, sizeof *s->mk_gen * n)) ||
            !(s->mk_pass = soc_alloc(s, sizeof *s->mk_pass * n)) ||
            !(s->mk_x = soc_alloc(s, sizeof *s->mk_x * n)) ||
            !(s->mk_y = soc_alloc(s, sizeof *s->mk_y * n)) ||
            !(s->mk_dcol = soc_alloc(s, sizeof *s->mk_dcol * (size_t)s->W)) ||
            !(s->mk_pstamp = soc_alloc(s, sizeof *s->mk_pstamp * (size_t)s->cells)))
            return POLIS_ERR_NOMEM;
        for (int32_t i = 0; i < SOC_MV_SLOTS; i++) {
            soc_mview *mv = &s->mv[i];
            if (!(mv->cols = soc_alloc(s, sizeof *mv->cols * SOC_COV_GROUPS * (size_t)s->W)) ||
                !(mv->dl = soc_alloc(s, sizeof *mv->dl * (size_t)s->pt_cap)))
                return POLIS_ERR_NOMEM;
        }
        for (size_t v = 0; v < n; v++) s->mk_slot[v] = -1;
        /* each recipe's amounts as a template (mk_cell), and an empty one (K) */
        int32_t T = 1;
        for (int32_t k = 0; k < s->K; k++)
            if (s->rec[k].n_in + s->rec[k].n_out > T) T = s->rec[k].n_in + s->rec[k].n_out;
        const size_t tpl = (size_t)(s->K + 1) * (size_t)T;
        if (!(s->mk_roff = soc_alloc(s, sizeof *s->mk_roff * tpl)) ||
            !(s->mk_rval = soc_alloc(s, sizeof *s->mk_rval * tpl)) ||
            !(s->mk_rn = soc_alloc(s, sizeof *s->mk_rn * (size_t)(s->K + 1))))
            return POLIS_ERR_NOMEM;
        for (int32_t k = 0; k < s->K; k++) {
            const soc_recipe *rec = &s->rec[k];
            int32_t q = 0;
            for (int32_t i = 0; i < rec->n_in; i++, q++) {
                const soc_amount *a = &s->amounts[rec->in + i];
                s->mk_roff[k * T + q] = (2 + a->res) * (int32_t)plane;
                s->mk_rval[k * T + q] = sat16(-a->n);
            }
            for (int32_t i = 0; i < rec->n_out; i++, q++) {
                const soc_amount *a = &s->amounts[rec->out + i];
                s->mk_roff[k * T + q] = (2 + a->res) * (int32_t)plane;
                s->mk_rval[k * T + q] = sat16(a->n);
            }
            s->mk_rn[k] = q;
        }
        s->mk_tpl = T;
        s->mk_on = true;
    }
    if ((s->pt_cap || s->lv_on) &&
        (st = h->hook(s->ctx, POLIS_PHASE_OBSERVE, SOC_LAST_PRIORITY, on_observe, s)))
        return st;
    if (s->view != SOC_VIEW_MAP) s->vis_bits = false;
    for (int32_t a = 0; a < s->n_agents; a++) soc_seen_bits(s, a);
    size_t cap = 4096 + (size_t)s->R * (SOC_NAME_MAX + 8);
    char *list = soc_alloc(s, cap), *doc = soc_alloc(s, cap * 2 + 1024);
    if (!list || !doc) return POLIS_ERR_NOMEM;
    names(s, list, cap);
    snprintf(doc, cap * 2 + 1024,
             "%s, indexed [channel][x][y]; channels: 0 agents (id+1), 1 blocks, 2..%d recipe "
             "stations (-input/+output units per resource), %d..%d piles (units per "
             "resource, at most pile_shown); resources: %s; unseen cells 0, values saturate at "
             "+-32767",
             s->view == SOC_VIEW_MAP
                 ? "map-sized egocentric view (own cell at [W/2][H/2]) merged with the maps "
                   "shared with the agent"
                 : "egocentric window of the largest fov among the jobs (own cell at the "
                   "centre)",
             (int)(1 + s->R), (int)(2 + s->R), (int)(1 + 2 * s->R), list);
    polis_obs_def grid = {.name = "grid",
                          .doc = doc,
                          .dtype = POLIS_DTYPE_I16,
                          .ndim = 3,
                          .shape = {2 + 2 * s->R, s->A, s->B},
                          .write = write_grid,
                          .ud = s};
    int32_t id_grid, id_inv, id_pos, id_time;
    if (!(s->pile_obs = soc_alloc(s, sizeof *s->pile_obs * (size_t)s->R + 1)))
        return POLIS_ERR_NOMEM;
    for (int32_t r = 0; r < s->R; r++) s->pile_obs[r] = (int32_t)s->p.pile_shown;
    if ((st = h->observation(s->ctx, &grid, &id_grid))) return st;
    s->id_grid = id_grid;
    snprintf(doc, cap * 2 + 1024, "own units per resource: %s", list);
    polis_obs_def inv = {.name = "inventory",
                         .doc = doc,
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {s->R},
                         .write = write_inventory,
                         .ud = s};
    if ((st = h->observation(s->ctx, &inv, &id_inv))) return st;
    polis_obs_def pos = {.name = "position",
                         .doc = "own (x, y)",
                         .dtype = POLIS_DTYPE_I32,
                         .ndim = 1,
                         .shape = {2},
                         .write = write_position,
                         .ud = s};
    if ((st = h->observation(s->ctx, &pos, &id_pos))) return st;
    polis_obs_def time = {.name = "time",
                          .doc = "steps completed in the episode",
                          .dtype = POLIS_DTYPE_I32,
                          .ndim = 1,
                          .shape = {1},
                          .write = write_time,
                          .ud = s};
    if ((st = h->observation(s->ctx, &time, &id_time))) return st;
    s->id_pos = id_pos;
    s->id_time = id_time;
    s->grid_dt = s->pos_dt = s->time_dt = -1;
    s->grid_w8 = false;
    if ((st = s->obs_api->writes_stored(s->ctx, id_grid)) ||
        (st = s->obs_api->writes_stored(s->ctx, id_pos)) ||
        (st = s->obs_api->writes_stored(s->ctx, id_time)))
        return st;
    return declare_ranges(s, id_grid, id_inv, id_pos, id_time);
}
