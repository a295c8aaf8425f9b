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

static inline int16_t sat16(int32_t v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
}

/* A pile's units as the grid shows them: at most cap (soc->pile_obs, <= 32767). */
static inline int16_t pile16(int32_t v, int32_t cap)
{
    return (int16_t)(v > cap ? cap : v);
}

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
 * the map view (docs/performance.md). The record is cleared whole when its content is not
 * known (the first write into it, a record at another address than last time, a list that
 * overflowed) or when that is cheaper (small records, long lists): see write_grid and
 * og_cap in soc_register_observations. */

/* What painting needs, copied into a local at the top of each painting function so the
 * compiler keeps it in registers: through a pointer, every store into the int32 offset list
 * could alias the soc's int32 fields and forced them to be reloaded per element. */
typedef struct painter {
    int16_t *o;
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
} painter;

/* rec_ (a constant in each painting function): list the element; false when p.cap == 0
 * (the record is cleared whole every time) */
#define PUT(p, off, v)                                                                           \
    do {                                                                                         \
        size_t off_ = (off);                                                                     \
        (p).o[off_] = (v);                                                                       \
        if (rec_) {                                                                              \
            if ((p).n < (p).cap) (p).list[(p).n] = (int32_t)off_;                                \
            (p).n += (p).n <= (p).cap;                                                           \
        }                                                                                        \
    } while (0)

/* Writes map cell `cell` at grid position `at`: agents and blocks always, a station's
 * recipe if recipe_seen(k), a pile's units of r if res_seen(r); the two visibility tests
 * come as a byte row (one owner's seen) or as bit sets (the union of several owners'). */
#define PAINT_CELL(p, cell, at, recipe_seen, res_seen)                                           \
    do {                                                                                         \
        int32_t ag_ = (p).ag[cell];                                                              \
        if (ag_) PUT(p, (size_t)(at), sat16(ag_));                                               \
        if ((p).bl[cell]) PUT(p, (p).plane + (size_t)(at), 1);                                   \
        int32_t k = (p).rc[cell] - 1;                                                            \
        if (k >= 0 && (recipe_seen)) {                                                           \
            const soc_recipe *rc_ = &(p).rec[k];                                                 \
            size_t base_ = 2 * (p).plane + (size_t)(at);                                         \
            for (int32_t q_ = 0; q_ < rc_->n_in; q_++) {                                         \
                const soc_amount *a_ = &(p).amounts[rc_->in + q_];                               \
                PUT(p, base_ + (size_t)a_->res * (p).plane, sat16(-a_->n));                      \
            }                                                                                    \
            for (int32_t q_ = 0; q_ < rc_->n_out; q_++) {                                        \
                const soc_amount *a_ = &(p).amounts[rc_->out + q_];                              \
                PUT(p, base_ + (size_t)a_->res * (p).plane, sat16(a_->n));                       \
            }                                                                                    \
        }                                                                                        \
        if ((p).kinds[cell]) {                                                                   \
            const int32_t *pile_ = (p).piles + (size_t)(cell) * (size_t)(p).R;                   \
            size_t base_ = (size_t)(2 + (p).R) * (p).plane + (size_t)(at);                       \
            for (int32_t r = 0; r < (p).R; r++)                                                  \
                if (pile_[r] && (res_seen))                                                      \
                    PUT(p, base_ + (size_t)r * (p).plane, pile16(pile_[r], (p).pcap[r]));        \
        }                                                                                        \
    } while (0)

/* Paints owner's window into viewer's grid: torus (map view) puts the viewer's own cell at
 * (W/2, H/2), otherwise the window is centred on (hmax, vmax).
 * The map and grid coordinates are wrapped once per window and then stepped by one with a
 * compare: two soc_wrap divisions per cell were the hottest instructions of write_grid
 * (docs/performance.md). Stepping wraps exactly as soc_wrap(first + k) does. */
static ALWAYS_INLINE void paint_as(const soc *s, int32_t viewer, int32_t owner, bool torus,
                                    painter *pp, const bool rec_)
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
 * 10% slower with the listing's test in every store. */
static void paint_listed(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, true);
}

static void paint_unlisted(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    paint_as(s, viewer, owner, torus, pp, false);
}

static void paint(const soc *s, int32_t viewer, int32_t owner, bool torus, painter *pp)
{
    if (pp->cap) paint_listed(s, viewer, owner, torus, pp);
    else paint_unlisted(s, viewer, owner, torus, pp);
}

/* ---- merged views -----------------------------------------------------------------------
 *
 * An agent's map view merged with the maps shared with it is the union of its owners'
 * windows, each covered cell painted once with the union of what the owners covering it see
 * (an owner sees a station's recipe or a pile's resource by its own inventory; the values
 * written never depend on which owner saw a cell, only whether one did). Painting every
 * window in turn painted the same cells up to P times (docs/performance.md).
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
    uint32_t pass; /* the pass it was built in; another: unused */
    int32_t n_owners;
    uint64_t hash;   /* of the owner set, order-independent */
    int32_t *owners; /* [n_agents] */
    int32_t n_el;
    soc_pel *el; /* [pt_cap] */
} soc_mview;

static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    soc *s = ud;
    if (++s->pt_pass == 0) { /* wrapped: no slot or table may look current */
        for (int32_t i = 0; i < SOC_MV_SLOTS; i++) s->mv[i].pass = 0;
        s->pt_built = s->pf_built = 0;
        s->pt_pass = 1;
    }
    /* The table and the slots pay when owner sets repeat within a pass (a group sharing its
     * maps); when they do not (Exploration's random sharing) building them costs more than
     * it saves and the pass paints each view directly. The last pass with merged views
     * decides (while painting directly, one pass in 16 looks): a slot is built once and
     * painted by every repeat, so at least one viewer in three repeating a set is where the
     * two cost about the same (docs/performance.md). */
    if (s->mv_viewers) s->mv_use = s->mv_hits * 3 >= s->mv_viewers;
    s->mv_viewers = s->mv_hits = 0;
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
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(-a->n), x16, y16,
                                         -1};
                a = &s->amounts[rec->out];
                for (int32_t q = 0; q < rec->n_out; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(a->n), x16, y16,
                                         -1};
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
                                             pile16(pile[r], s->pile_obs[r]), x16, y16,
                                             (int16_t)r};
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
 * was most of building a merged view (docs/performance.md). */
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
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(-a->n), x16, y16,
                                         -1};
                a = &s->amounts[rec->out];
                for (int32_t q = 0; q < rec->n_out; q++, a++)
                    el[ne++] = (soc_pel){(2 + a->res) * plane + at, sat16(a->n), x16, y16,
                                         -1};
            }
            if (s->kinds[cell]) {
                const int32_t *pile = s->piles + (size_t)cell * (size_t)R;
                for (int32_t r = 0; r < R; r++)
                    if (pile[r] && ((vres >> r) & 1u))
                        el[ne++] = (soc_pel){(2 + R + r) * plane + at,
                                             pile16(pile[r], s->pile_obs[r]), x16, y16,
                                             (int16_t)r};
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
static inline void mv_emit(const soc *s, soc_mview *mv, int32_t cell, uint64_t vres,
                           uint64_t vrec)
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

/* The union for maps at most 64 cells high when the owners' vis come in at most
 * SOC_COV_GROUPS distinct pairs (in Exploration every explorer starts seeing the same):
 * each group's coverage is a bit set per map column, so a window costs one OR per column
 * instead of one update per cell. false: more groups, nothing built. */
static bool mv_build_columns(soc *s, int32_t n, soc_mview *mv)
{
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
        const uint64_t bits =
            column_bits(soc_wrap(s->ay[owner] - job->fov_v, H), 2 * job->fov_v + 1, H);
        int32_t x = soc_wrap(s->ax[owner] - job->fov_h, W);
        const int32_t w = 2 * job->fov_h + 1 < W ? 2 * job->fov_h + 1 : W;
        for (int32_t dx = 0; dx < w; dx++) {
            cols[x] |= bits;
            if (++x == W) x = 0;
        }
    }
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
    const bool rec_ = p.cap != 0;
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
        const uint64_t bits = column_bits(soc_wrap(y0 - s->ay[viewer] + H / 2, H),
                                          2 * job->fov_v + 1, H);
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
 * O(sharers x window) strided writes per agent (docs/performance.md). Needs R, K <= 64. */
static void paint_merged(soc *s, int32_t viewer, int32_t n, painter *pp)
{
    painter p = *pp;
    const bool rec_ = p.cap != 0;
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

/* The slot holding this pass's union for the owners in views[0 .. n-1], built if none does;
 * NULL when this pass paints directly (mv_use), after noting whether the set repeated. */
static const soc_mview *mv_find(soc *s, int32_t n)
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
    for (int32_t i = 0; i < SOC_MV_SLOTS && !dup; i++) {
        const soc_mview *mv = &s->mv[i];
        if (mv->pass != s->pt_pass || s->pt_pass == 0 || mv->n_owners != n || mv->hash != hash)
            continue;
        int32_t v = 0;
        while (v < n && s->mv_mark[mv->owners[v]] == now) v++;
        if (v == n) {
            s->mv_hits++;
            return s->mv_use ? mv : NULL;
        }
    }
    soc_mview *mv = &s->mv[s->mv_next];
    s->mv_next = (s->mv_next + 1) % SOC_MV_SLOTS;
    /* a set with repeats is never matched: its slot is left unused */
    mv->pass = dup ? 0 : s->pt_pass;
    mv->n_owners = n;
    mv->hash = hash;
    memcpy(mv->owners, s->views, sizeof *mv->owners * (size_t)n);
    if (!s->mv_use) return NULL;
    mv->n_el = 0;
    if (s->H > 64 || !mv_build_columns(s, n, mv)) {
        if (s->pt_built != s->pt_pass || s->pt_pass == 0) pt_build(s);
        mv_build_cells(s, n, mv);
    }
    return mv;
}

/* Stores the slot's elements into viewer's grid: map (x, y) is grid
 * (x - ax + W/2, y - ay + H/2), wrapped; an element's offset is its `at` shifted by
 * (di B + dj), less W B past the last column and H past the last row. One flat loop
 * without a branch per element: the loop per cell mispredicted on the cells' lengths. */
static ALWAYS_INLINE void mv_paint_as(const soc *s, int32_t viewer, const soc_mview *mv,
                                      painter *pp, const bool rec_)
{
    painter p = *pp;
    const int32_t W = s->W, H = s->H, B = s->B;
    const int32_t di = soc_wrap(W / 2 - s->ax[viewer], W), dj = soc_wrap(H / 2 - s->ay[viewer], H);
    const int32_t xlim = W - di, ylim = H - dj, shift = di * B + dj, wb = W * B;
    const soc_pel *el = mv->el;
    for (int32_t q = 0; q < mv->n_el; q++) {
        int32_t at = el[q].at + shift;
        at -= el[q].x >= xlim ? wb : 0;
        at -= el[q].y >= ylim ? H : 0;
        PUT(p, (size_t)at, el[q].val);
    }
    pp->n = p.n;
}

static void mv_paint(const soc *s, int32_t viewer, const soc_mview *mv, painter *pp)
{
    if (!pp->cap) {
        mv_paint_as(s, viewer, mv, pp, false);
    } else if (mv->n_el > pp->cap) { /* the list would overflow: the next write clears all */
        mv_paint_as(s, viewer, mv, pp, false);
        pp->n = pp->cap + 1;
    } else {
        mv_paint_as(s, viewer, mv, pp, true);
    }
}

static void write_grid(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int16_t *o = dst;
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
                 .cap = s->og_cap};
    int32_t last = s->og_n[agent];
    const size_t elems = (size_t)(2 + 2 * s->R) * p.plane;
    /* memset clears about 16 elements in the time of one scattered store: past elems / 16
     * listed elements the whole clear is the cheaper one (the Hard mini-games' merged maps) */
    if (s->og_dst[agent] != o || last < 0 || (size_t)last > elems / 16) {
        memset(o, 0, sizeof *o * elems);
        s->og_dst[agent] = o;
    } else {
        for (int32_t i = 0; i < last; i++) o[p.list[i]] = 0;
    }
    if (s->view == SOC_VIEW_WINDOW) {
        paint(s, agent, agent, false, &p);
    } else {
        int32_t n = soc_views(s, agent);
        if (s->vis_bits && (n > 1 || s->self_overlap)) {
            const soc_mview *mv = s->pt_cap ? mv_find(s, n) : NULL;
            if (mv) mv_paint(s, agent, mv, &p);
            else if (s->H > 64 || !paint_merged_columns(s, agent, n, &p))
                paint_merged(s, agent, n, &p);
        } else {
            for (int32_t i = 0; i < n; i++) paint(s, agent, s->views[i], true, &p);
        }
    }
    s->og_n[agent] = p.n > p.cap || !p.cap ? -1 : p.n;
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

static void write_position(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int32_t xy[2] = {s->ax[agent], s->ay[agent]};
    memcpy(dst, xy, sizeof xy);
}

static void write_time(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    soc *s = ud;
    int32_t t = (int32_t)s->h->tick(ctx);
    memcpy(dst, &t, sizeof t);
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
    if (h->struct_size <= offsetof(polis_host, obs_range)) return POLIS_OK; /* engine < 1.4 */
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
        if ((st = h->hook(s->ctx, POLIS_PHASE_OBSERVE, SOC_LAST_PRIORITY, on_observe, s)))
            return st;
    }
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
    return declare_ranges(s, id_grid, id_inv, id_pos, id_time);
}
