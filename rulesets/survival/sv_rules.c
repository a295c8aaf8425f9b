/*
 * sv_rules.c — one step of the survival game (README "A step"; specs/survival.md §4–§8,
 * §11): contested tiles, crafting, DO, placement, movement, mobs, spawning, plants,
 * intrinsics, health, reward.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const int32_t DR[5] = {0, 0, 0, -1, 1}; /* by action id 0..4 */
static const int32_t DC[5] = {0, -1, 1, 0, 0};

static inline float uniform(polis_rng *rng)
{
    return (float)(polis_rng_next(rng) >> 8) * (1.0f / 16777216.0f);
}

static inline int32_t iabs(int32_t v) { return v < 0 ? -v : v; }

static void note(sv_world *w, int32_t kind, int32_t player, int32_t a, int32_t b, int32_t c)
{
    if (w->n_notes < w->note_cap) w->notes[w->n_notes++] = (sv_note){kind, player, a, b, c};
}

static void unlock(sv_world *w, int32_t player, int32_t ach)
{
    sv_player *pl = &w->players[player];
    if (pl->ach & (1u << ach)) return;
    pl->ach |= 1u << ach;
    note(w, SV_NOTE_ACHIEVEMENT, player, ach, 0, 0);
}

static inline int32_t mini(int32_t a, int32_t b) { return a < b ? a : b; }

int32_t sv_damage(const sv_world *w, const sv_player *pl)
{
    const int32_t *inv = pl->inv;
    if (w->p.count_scaled_damage) {
        int32_t d = 1;
        if (2 * inv[SV_INV_WOOD_SWORD] > d) d = 2 * inv[SV_INV_WOOD_SWORD];
        if (3 * inv[SV_INV_STONE_SWORD] > d) d = 3 * inv[SV_INV_STONE_SWORD];
        if (5 * inv[SV_INV_IRON_SWORD] > d) d = 5 * inv[SV_INV_IRON_SWORD];
        return d;
    }
    if (inv[SV_INV_IRON_SWORD] > 0) return 5;
    if (inv[SV_INV_STONE_SWORD] > 0) return 3;
    if (inv[SV_INV_WOOD_SWORD] > 0) return 2;
    return 1;
}

/* ---- contested tiles (§11.4) ----------------------------------------------------------- */

static bool is_place(int32_t a) { return a >= SV_PLACE_STONE && a <= SV_PLACE_PLANT; }

static inline int32_t facing_key(const sv_player *pl)
{
    return (pl->r + DR[pl->dir] + 1) * (SV_MAP + 2) + (pl->c + DC[pl->dir] + 1);
}

/* Intended rule: among the players doing DO (then: any placement) on one facing tile, one
 * chosen uniformly keeps its action, the others do nothing. */
static void settle_intended(sv_world *w, polis_rng *rng, bool placing)
{
    sv_player *ps = w->players;
    int32_t n = w->p.n_players, m = 0;
    for (int32_t i = 0; i < n; i++)
        if (placing ? is_place(ps[i].act) : ps[i].act == SV_DO) w->order[m++] = i;
    for (int32_t x = 0; x < m; x++) {
        int32_t i = w->order[x];
        if (i < 0) continue;
        int32_t key = facing_key(&ps[i]), k = 0;
        for (int32_t y = x; y < m; y++)
            if (w->order[y] >= 0 && facing_key(&ps[w->order[y]]) == key) w->saved[k++] = y;
        if (k == 1) continue;
        int32_t win = (int32_t)polis_rng_below(rng, (uint32_t)k);
        for (int32_t z = 0; z < k; z++) {
            int32_t j = w->order[w->saved[z]];
            if (z != win) ps[j].act = SV_NOOP;
            w->order[w->saved[z]] = -1;
        }
    }
}

/* The reference's rule, kept for parity studies (README "Contested tiles"): a pass for DO,
 * then one pass for the four placements together (MAC's code groups them as one kind; going
 * through them one kind after another settles three or more contenders differently). */
static void settle_reference(sv_world *w, polis_rng *rng)
{
    sv_player *ps = w->players;
    int32_t n = w->p.n_players;
    for (int32_t t = 0; t < 2; t++)
        for (int32_t i = 0; i < n; i++) {
            if (t == 0 ? ps[i].act != SV_DO : !is_place(ps[i].act)) continue;
            int32_t key = facing_key(&ps[i]), k = 0;
            for (int32_t j = i; j < n; j++)
                if (facing_key(&ps[j]) == key) w->order[k++] = j;
            if (k == 1) continue;
            int32_t win = w->order[polis_rng_below(rng, (uint32_t)k)];
            int32_t keep = ps[win].act;
            for (int32_t z = 0; z < k; z++) ps[w->order[z]].act = SV_NOOP;
            ps[win].act = keep;
        }
}

/* ---- crafting (§5.2) ------------------------------------------------------------------------ */

/* The tables and furnaces among the player's 8 in-map neighbours, with their owners. */
static void stations_near(const sv_world *w, const sv_player *pl, sv_stations *st)
{
    st->n_tables = st->n_furnaces = 0;
    for (int32_t dr = -1; dr <= 1; dr++)
        for (int32_t dc = -1; dc <= 1; dc++) {
            int32_t r = pl->r + dr, c = pl->c + dc;
            if ((dr == 0 && dc == 0) || !sv_in_map(r, c)) continue;
            if (w->map[r][c] == SV_TABLE) st->tables[st->n_tables++] = w->placed_by[r][c];
            if (w->map[r][c] == SV_FURNACE) st->furnaces[st->n_furnaces++] = w->placed_by[r][c];
        }
}

/* One owner standing for a list (the event's table_owner and furnace_owner): the first
 * station another player placed, else the last one; -1 for none. */
static int32_t summary_owner(const int16_t *owners, int32_t n, int32_t me)
{
    int32_t o = -1;
    for (int32_t k = 0; k < n; k++)
        if (k == 0 || o == me || o < 0) o = owners[k];
    return o;
}

/* Whether the crafter's own station is in the list, and another player's. */
static void owners_of(const int16_t *owners, int32_t n, int32_t me, int32_t *own, int32_t *other)
{
    bool mine = false, theirs = false;
    for (int32_t k = 0; k < n; k++) {
        mine |= owners[k] == me;
        theirs |= owners[k] >= 0 && owners[k] != me;
    }
    *own += mine;
    *other += theirs;
}

static void craft(sv_world *w, int32_t i)
{
    sv_player *pl = &w->players[i];
    int32_t a = pl->act, *inv = pl->inv;
    if (a < SV_MAKE_WOOD_PICKAXE) return;
    sv_stations st;
    stations_near(w, pl, &st);
    if (st.n_tables == 0) return;
    bool iron = a == SV_MAKE_IRON_PICKAXE || a == SV_MAKE_IRON_SWORD;
    bool stone = a == SV_MAKE_STONE_PICKAXE || a == SV_MAKE_STONE_SWORD;
    if (iron && st.n_furnaces == 0) return;
    if (inv[SV_INV_WOOD] < 1) return;
    if ((stone || iron) && inv[SV_INV_STONE] < 1) return;
    if (iron && (inv[SV_INV_IRON] < 1 || inv[SV_INV_COAL] < 1)) return;
    inv[SV_INV_WOOD]--;
    if (stone || iron) inv[SV_INV_STONE]--;
    if (iron) {
        inv[SV_INV_IRON]--;
        inv[SV_INV_COAL]--;
    }
    static const int32_t ITEM[6] = {SV_INV_WOOD_PICKAXE, SV_INV_STONE_PICKAXE, SV_INV_IRON_PICKAXE,
                                    SV_INV_WOOD_SWORD,   SV_INV_STONE_SWORD,   SV_INV_IRON_SWORD};
    static const int32_t ACH[6] = {SV_ACH_MAKE_WOOD_PICKAXE, SV_ACH_MAKE_STONE_PICKAXE,
                                   SV_ACH_MAKE_IRON_PICKAXE, SV_ACH_MAKE_WOOD_SWORD,
                                   SV_ACH_MAKE_STONE_SWORD,  SV_ACH_MAKE_IRON_SWORD};
    inv[ITEM[a - SV_MAKE_WOOD_PICKAXE]]++;
    unlock(w, i, ACH[a - SV_MAKE_WOOD_PICKAXE]);
    /* a furnace counts only for the iron tools (a wood tool beside one used no furnace); the
     * note still lists it */
    int32_t table = summary_owner(st.tables, st.n_tables, i);
    int32_t furnace = iron ? summary_owner(st.furnaces, st.n_furnaces, i) : -1;
    pl->crafts++;
    if ((table >= 0 && table != i) || (furnace >= 0 && furnace != i)) pl->crafts_others++;
    owners_of(st.tables, st.n_tables, i, &pl->crafts_own_table, &pl->crafts_other_table);
    if (iron) {
        pl->crafts_furnace++;
        owners_of(st.furnaces, st.n_furnaces, i, &pl->crafts_own_furnace,
                  &pl->crafts_other_furnace);
    }
    pl->near = st;
    note(w, SV_NOTE_CRAFT, i, a, table, furnace);
}

/* ---- DO (§5.3) ------------------------------------------------------------------------------ */

static void kill_mob(sv_world *w, int32_t kind, int32_t slot)
{
    if (slot == 0) w->slot0_killed |= 1u << kind;
    sv_mob *mb = &w->mobs[kind][slot];
    mb->active = false;
    w->n_active[kind]--;
    w->mob_map[mb->r][mb->c] = 0;
    sv_mark_mob(w, kind, slot);
}

/* A living player other than `me` on (r, c) that `me` sees (w->sees), lowest index first; -1
 * if none. */
static int32_t player_at(const sv_world *w, int32_t r, int32_t c, int32_t me)
{
    if (!w->player_map[r][c]) return -1;
    for (int32_t j = 0; j < w->p.n_players; j++)
        if (j != me && w->players[j].alive && w->players[j].r == r && w->players[j].c == c &&
            (!w->sees || w->sees(w->sees_ud, me, j)))
            return j;
    return -1;
}

bool sv_player_on(const sv_world *w, int32_t r, int32_t c, const uint8_t *seen)
{
    if (!w->player_map[r][c]) return false;
    if (!seen) return true;
    for (int32_t j = 0; j < w->p.n_players; j++)
        if (seen[j] && w->players[j].alive && w->players[j].r == r && w->players[j].c == c)
            return true;
    return false;
}

static void do_action(sv_world *w, polis_rng *rng, int32_t i)
{
    sv_player *pl = &w->players[i];
    int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir];
    if (!sv_in_map(r, c)) return;
    uint16_t mm = w->mob_map[r][c];
    if (mm) {
        int32_t kind = (mm - 1) >> 8, slot = (mm - 1) & 0xff;
        sv_mob *mb = &w->mobs[kind][slot];
        pl->hit_kinds |= 1u << kind;
        mb->health -= sv_damage(w, pl);
        if (mb->health <= 0) {
            kill_mob(w, kind, slot);
            note(w, SV_NOTE_KILL, i, kind, r, c);
            if (kind == SV_ZOMBIE) unlock(w, i, SV_ACH_DEFEAT_ZOMBIE);
            if (kind == SV_SKELETON) unlock(w, i, SV_ACH_DEFEAT_SKELETON);
            if (kind == SV_COW) {
                unlock(w, i, SV_ACH_EAT_COW);
                pl->food = mini(9, pl->food + 6);
                pl->hunger = 0.0f;
            }
        }
        return;
    }
    if (w->p.pvp) {
        int32_t v = player_at(w, r, c, i);
        if (v >= 0) {
            sv_player *vi = &w->players[v];
            vi->health -= w->p.pvp_damage;
            vi->sleeping = false;
            vi->cause = SV_CAUSE_PLAYER;
            vi->pvp_hurt++;
            pl->pvp_hits++;
            pl->pvp_hits_total++;
            pl->heal_halves += w->p.pvp_heal_halves;
            pl->health = mini(9, pl->health + pl->heal_halves / 2);
            pl->heal_halves %= 2;
            note(w, SV_NOTE_ATTACK, i, v, r, c);
            return;
        }
    }
    int32_t *inv = pl->inv;
    switch (w->map[r][c]) {
    case SV_TREE:
        inv[SV_INV_WOOD]++;
        sv_set_block(w, r, c, SV_GRASS);
        unlock(w, i, SV_ACH_COLLECT_WOOD);
        break;
    case SV_STONE:
        if (inv[SV_INV_WOOD_PICKAXE] < 1) break;
        inv[SV_INV_STONE]++;
        sv_set_block(w, r, c, SV_PATH);
        unlock(w, i, SV_ACH_COLLECT_STONE);
        break;
    case SV_COAL:
        if (inv[SV_INV_WOOD_PICKAXE] < 1) break;
        inv[SV_INV_COAL]++;
        sv_set_block(w, r, c, SV_PATH);
        unlock(w, i, SV_ACH_COLLECT_COAL);
        break;
    case SV_IRON:
        if (inv[SV_INV_STONE_PICKAXE] < 1) break;
        inv[SV_INV_IRON]++;
        sv_set_block(w, r, c, SV_PATH);
        unlock(w, i, SV_ACH_COLLECT_IRON);
        break;
    case SV_DIAMOND:
        if (inv[SV_INV_IRON_PICKAXE] < 1) break;
        inv[SV_INV_DIAMOND]++;
        sv_set_block(w, r, c, SV_PATH);
        unlock(w, i, SV_ACH_COLLECT_DIAMOND);
        break;
    case SV_GRASS:
        if (w->p.shared_sapling_draw && w->sapling_draw < 0.0f) w->sapling_draw = uniform(rng);
        if ((w->p.shared_sapling_draw ? w->sapling_draw : uniform(rng)) < 0.1f) {
            inv[SV_INV_SAPLING]++;
            unlock(w, i, SV_ACH_COLLECT_SAPLING);
        }
        break;
    case SV_WATER:
        pl->drink = mini(9, pl->drink + 1);
        pl->thirst = 0.0f;
        unlock(w, i, SV_ACH_COLLECT_DRINK);
        break;
    case SV_RIPE_PLANT:
        pl->food = mini(9, pl->food + 4);
        pl->hunger = 0.0f;
        if (!w->p.eaten_plant_stays_ripe) sv_set_block(w, r, c, SV_PLANT);
        for (int32_t k = 0; k < w->n_plants; k++)
            if (w->plants[k].r == r && w->plants[k].c == c) w->plants[k].age = 0;
        unlock(w, i, SV_ACH_EAT_PLANT);
        break;
    default: break;
    }
}

/* MAC's code (slot0_kill_credit): a player that hit no mob of a kind reads "its" target as
 * slot 0 of that kind, so when slot 0 died in this DO phase every such player — dead, asleep
 * or busy elsewhere — is credited with the kill: DEFEAT_ZOMBIE, DEFEAT_SKELETON, or EAT_COW
 * with its food (a dead player's vitals stay frozen, so it gets the achievement alone). */
static void credit_slot0(sv_world *w)
{
    for (int32_t i = 0; i < w->p.n_players; i++) {
        sv_player *pl = &w->players[i];
        for (int32_t kind = SV_ZOMBIE; kind <= SV_SKELETON; kind++) {
            if (!(w->slot0_killed >> kind & 1u) || (pl->hit_kinds >> kind & 1u)) continue;
            if (kind == SV_ZOMBIE) unlock(w, i, SV_ACH_DEFEAT_ZOMBIE);
            if (kind == SV_SKELETON) unlock(w, i, SV_ACH_DEFEAT_SKELETON);
            if (kind == SV_COW) {
                unlock(w, i, SV_ACH_EAT_COW);
                if (pl->alive) {
                    pl->food = mini(9, pl->food + 6);
                    pl->hunger = 0.0f;
                }
            }
        }
    }
}

/* MAC's code (faced_sapling_resets): every player — dead, asleep or acting — whose facing
 * tile is in the map and who did not hit a mob this step restarts the growth of the plants
 * on that tile, whatever its action. */
static void reset_faced_plants(sv_world *w)
{
    for (int32_t i = 0; i < w->p.n_players; i++) {
        const sv_player *pl = &w->players[i];
        int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir];
        if (!sv_in_map(r, c) || pl->hit_kinds) continue;
        for (int32_t k = 0; k < w->n_plants; k++)
            if (w->plants[k].r == r && w->plants[k].c == c) w->plants[k].age = 0;
    }
}

/* ---- placement (§5.4) ---------------------------------------------------------------------- */

uint32_t sv_place_bits(const sv_world *w, const sv_player *pl, const uint8_t *seen)
{
    int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir];
    if (!sv_in_map(r, c) || w->mob_map[r][c]) return 0;
    if (!w->p.place_on_players && sv_player_on(w, r, c, seen)) return 0;
    int32_t b = w->map[r][c];
    const int32_t *inv = pl->inv;
    bool open = !sv_solid(b);
    return (uint32_t)(inv[SV_INV_STONE] >= 1 && (open || b == SV_WATER)) << SV_PLACE_STONE |
           (uint32_t)(inv[SV_INV_WOOD] >= 2 && open) << SV_PLACE_TABLE |
           (uint32_t)(inv[SV_INV_STONE] >= 1 && open) << SV_PLACE_FURNACE |
           (uint32_t)(inv[SV_INV_SAPLING] >= 1 && b == SV_GRASS) << SV_PLACE_PLANT;
}

bool sv_place_ok(const sv_world *w, const sv_player *pl, int32_t a, const uint8_t *seen)
{
    return a >= SV_PLACE_STONE && a <= SV_PLACE_PLANT && ((sv_place_bits(w, pl, seen) >> a) & 1u);
}

/* MAC's slot assignment (plant_slots "reference"): slot `free` + k for k = 0 .. max_plants-1
 * goes to player min(k, n-1) when it plants this step, `free` being the first free slot
 * before this step's placements (w->free_slot); slots past the end are dropped. So player i
 * takes slot free + i (over a used one if so) and the last player every slot from free + n-1
 * on. Players are placed in index order, so the slots a later player overwrites are the same
 * as when the reference writes them all at once. */
static void plant_reference(sv_world *w, int32_t i, int32_t r, int32_t c)
{
    int32_t n = w->p.n_players, cap = w->p.max_plants, free = w->free_slot;
    if (free < 0) return; /* no free slot at the step's start: the sapling never ripens */
    int32_t k0 = i, k1 = i == n - 1 ? cap - 1 : i;
    for (int32_t k = k0; k <= k1 && k < cap; k++) {
        int32_t slot = free + k;
        if (slot >= cap) break;
        for (int32_t g = w->n_plants; g < slot; g++) w->plants[g].r = -1;
        if (slot >= w->n_plants) w->n_plants = slot + 1;
        w->plants[slot] = (sv_plant){r, c, 0};
    }
}

static void place(sv_world *w, int32_t i)
{
    sv_player *pl = &w->players[i];
    int32_t a = pl->act;
    if (!is_place(a) || !sv_place_ok(w, pl, a, NULL)) return;
    int32_t r = pl->r + DR[pl->dir], c = pl->c + DC[pl->dir], b = SV_STONE;
    switch (a) {
    case SV_PLACE_STONE:
        pl->inv[SV_INV_STONE]--;
        unlock(w, i, SV_ACH_PLACE_STONE);
        break;
    case SV_PLACE_TABLE:
        pl->inv[SV_INV_WOOD] -= 2;
        b = SV_TABLE;
        unlock(w, i, SV_ACH_PLACE_TABLE);
        break;
    case SV_PLACE_FURNACE:
        pl->inv[SV_INV_STONE]--;
        b = SV_FURNACE;
        unlock(w, i, SV_ACH_PLACE_FURNACE);
        break;
    default:
        pl->inv[SV_INV_SAPLING]--;
        b = SV_PLANT;
        /* the next free slot in player order; with every slot used it never ripens */
        if (w->p.plant_slots == SV_SLOTS_REFERENCE)
            plant_reference(w, i, r, c);
        else if (w->n_plants < w->p.max_plants)
            w->plants[w->n_plants++] = (sv_plant){r, c, 0};
        unlock(w, i, SV_ACH_PLACE_PLANT);
        break;
    }
    sv_set_block(w, r, c, b);
    w->placed_by[r][c] = (int16_t)(b == SV_TABLE || b == SV_FURNACE ? i : -1);
    note(w, SV_NOTE_PLACE, i, b, r, c);
}

/* ---- movement (§5.5) ------------------------------------------------------------------------ */

static bool walkable(const sv_world *w, int32_t r, int32_t c)
{
    return sv_in_map(r, c) && (!sv_solid(w->map[r][c]) && !w->mob_map[r][c]);
}

static void move(sv_world *w, int32_t i)
{
    sv_player *pl = &w->players[i];
    int32_t a = pl->act;
    if (a < SV_LEFT || a > SV_DOWN) return;
    pl->dir = a;
    int32_t r = pl->r + DR[a], c = pl->c + DC[a];
    if (!walkable(w, r, c)) {
        /* edge_wraps (the reference's code): the tile past the top or left edge is read from
         * the opposite edge, and lava there lets the player step off the map and die */
        if (w->p.edge_wraps && (r < 0 || c < 0) &&
            w->map[(r + SV_MAP) % SV_MAP][(c + SV_MAP) % SV_MAP] == SV_LAVA)
            pl->off_edge = true;
        return;
    }
    w->player_map[pl->r][pl->c]--;
    w->player_map[r][c]++;
    pl->r = r;
    pl->c = c;
}

/* ---- mobs (§6, §11.6) ------------------------------------------------------------------- */

/* The nearest living player (ties: lowest index) and its distance; 999 when none. */
static int32_t nearest(const sv_world *w, int32_t r, int32_t c, int32_t *who)
{
    int32_t best = 999;
    *who = -1;
    if (w->p.n_players == 1) { /* the single-player game: no loop */
        const sv_player *pl = &w->players[0];
        if (!pl->alive) return best;
        *who = 0;
        return iabs(pl->r - r) + iabs(pl->c - c);
    }
    for (int32_t j = 0; j < w->p.n_players; j++) {
        const sv_player *pl = &w->players[j];
        if (!pl->alive) continue;
        int32_t d = iabs(pl->r - r) + iabs(pl->c - c);
        if (d < best) {
            best = d;
            *who = j;
        }
    }
    return best;
}

static bool mob_can_enter(const sv_world *w, int32_t r, int32_t c)
{
    return sv_in_map(r, c) && !sv_solid(w->map[r][c]) && w->map[r][c] != SV_LAVA &&
           !w->mob_map[r][c] && !w->player_map[r][c];
}

/* One step toward (dr, dc) along its major axis, ties 50/50. */
static void toward(polis_rng *rng, int32_t dr, int32_t dc, int32_t *sr, int32_t *sc)
{
    bool row = iabs(dr) > iabs(dc) || (iabs(dr) == iabs(dc) && (polis_rng_next(rng) & 1u));
    *sr = row ? (dr > 0) - (dr < 0) : 0;
    *sc = row ? 0 : (dc > 0) - (dc < 0);
}

/* MAC's skeleton (skeleton_axis "all_players"): an axis is a candidate when the target's |d|
 * along it equals the largest |d| of any player (dead ones too) along either axis; two
 * candidates split 50/50, none means the row axis; the step is the sign of the target's d
 * along the axis chosen (0 when the target is level on it). */
static void toward_all(const sv_world *w, polis_rng *rng, int32_t who, int32_t r, int32_t c,
                       int32_t *sr, int32_t *sc)
{
    int32_t big = 0;
    for (int32_t j = 0; j < w->p.n_players; j++) {
        int32_t a = iabs(w->players[j].r - r), b = iabs(w->players[j].c - c);
        big = a > big ? a : big;
        big = b > big ? b : big;
    }
    int32_t dr = w->players[who].r - r, dc = w->players[who].c - c;
    bool row_ok = iabs(dr) == big, col_ok = iabs(dc) == big;
    bool row = !col_ok || (row_ok && (polis_rng_next(rng) & 1u));
    *sr = row ? (dr > 0) - (dr < 0) : 0;
    *sc = row ? 0 : (dc > 0) - (dc < 0);
}

/* Moves a zombie/cow/skeleton by (sr, sc) when it can, then applies the despawn rule from
 * its old distance `dist`. */
static inline void mob_move(sv_world *w, int32_t kind, int32_t slot, int32_t sr, int32_t sc,
                            int32_t dist)
{
    sv_mob *mb = &w->mobs[kind][slot];
    int32_t r = mb->r + sr, c = mb->c + sc;
    w->mob_map[mb->r][mb->c] = 0;
    if ((sr || sc) && mob_can_enter(w, r, c)) {
        mb->r = r;
        mb->c = c;
        sv_mark_mob(w, kind, slot);
    }
    if (dist >= w->p.despawn_distance) {
        mb->active = false;
        w->n_active[kind]--;
        sv_mark_mob(w, kind, slot);
        return;
    }
    w->mob_map[mb->r][mb->c] = (uint16_t)(((kind << 8) | slot) + 1);
}

/* Quirk Q1: an inactive slot still moves (with the draws an active one makes) but never
 * enters the mob map, attacks or despawns. */
static void ghost_move(sv_world *w, sv_mob *mb, int32_t sr, int32_t sc)
{
    int32_t r = mb->r + sr, c = mb->c + sc;
    if ((sr || sc) && mob_can_enter(w, r, c)) {
        mb->r = r;
        mb->c = c;
    }
}

/* Quirk Q1: every inactive zombie, cow and skeleton slot with health left becomes active at
 * its stored position. One whose tile already holds a mob stays inactive (the reference
 * would put two mobs on one tile under a single mark). */
static void revive_ghosts(sv_world *w)
{
    for (int32_t kind = SV_ZOMBIE; kind <= SV_SKELETON; kind++)
        for (int32_t q = 0; q < w->p.max_mobs[kind]; q++) {
            sv_mob *mb = &w->mobs[kind][q];
            if (mb->active || mb->health <= 0 || w->mob_map[mb->r][mb->c]) continue;
            mb->active = true;
            mb->uid = w->next_uid++;
            w->n_active[kind]++;
            w->mob_map[mb->r][mb->c] = (uint16_t)(((kind << 8) | q) + 1);
            sv_mark_mob(w, kind, q);
        }
}

static void hurt(sv_world *w, int32_t j, int32_t amount, int32_t cause)
{
    sv_player *pl = &w->players[j];
    pl->health -= amount;
    pl->cause = cause;
}

static void zombies(sv_world *w, polis_rng *rng)
{
    sv_mob *zs = w->mobs[SV_ZOMBIE];
    bool ghosts = w->p.ghost_mobs != SV_GHOST_OFF;
    for (int32_t s = 0; s < w->p.max_mobs[SV_ZOMBIE]; s++) {
        sv_mob *z = &zs[s];
        if (!z->active && !ghosts) continue;
        int32_t who, dist = nearest(w, z->r, z->c, &who), sr = 0, sc = 0;
        if (z->active && who >= 0 && dist == 1 && z->cooldown <= 0) {
            sv_player *t = &w->players[who];
            hurt(w, who, t->sleeping ? 7 : 2, SV_CAUSE_ZOMBIE);
            z->cooldown = 5;
            if (t->sleeping) {
                t->sleeping = false;
                unlock(w, who, SV_ACH_WAKE_UP);
            }
            continue;
        }
        z->cooldown--;
        if (who >= 0 && dist < 10 && uniform(rng) < 0.75f) {
            toward(rng, w->players[who].r - z->r, w->players[who].c - z->c, &sr, &sc);
        } else {
            int32_t d = 1 + (int32_t)polis_rng_below(rng, 4);
            sr = DR[d];
            sc = DC[d];
        }
        if (z->active)
            mob_move(w, SV_ZOMBIE, s, sr, sc, dist);
        else
            ghost_move(w, z, sr, sc);
    }
}

static void cows(sv_world *w, polis_rng *rng)
{
    sv_mob *cs = w->mobs[SV_COW];
    bool ghosts = w->p.ghost_mobs != SV_GHOST_OFF;
    for (int32_t s = 0; s < w->p.max_mobs[SV_COW]; s++) {
        sv_mob *cw = &cs[s];
        if (!cw->active && !ghosts) continue;
        int32_t who, dist = nearest(w, cw->r, cw->c, &who);
        /* d < 4: the move d + 1, else stay (tables: GCC branches on the random d otherwise) */
        static const int8_t COW_DR[8] = {0, 0, -1, 1, 0, 0, 0, 0};
        static const int8_t COW_DC[8] = {-1, 1, 0, 0, 0, 0, 0, 0};
        int32_t d = (int32_t)polis_rng_below(rng, 8);
        int32_t sr = COW_DR[d], sc = COW_DC[d];
        if (cw->active)
            mob_move(w, SV_COW, s, sr, sc, dist);
        else
            ghost_move(w, cw, sr, sc);
    }
}

static void skeletons(sv_world *w, polis_rng *rng)
{
    sv_mob *ks = w->mobs[SV_SKELETON];
    bool ghosts = w->p.ghost_mobs != SV_GHOST_OFF;
    for (int32_t s = 0; s < w->p.max_mobs[SV_SKELETON]; s++) {
        sv_mob *k = &ks[s];
        if (!k->active && !ghosts) continue;
        int32_t who, dist = nearest(w, k->r, k->c, &who);
        int32_t d = 1 + (int32_t)polis_rng_below(rng, 4), rr = DR[d], rc = DC[d], tr = 0, tc = 0;
        if (who >= 0 && w->p.skeleton_axis == SV_AXIS_ALL_PLAYERS)
            toward_all(w, rng, who, k->r, k->c, &tr, &tc);
        else if (who >= 0)
            toward(rng, w->players[who].r - k->r, w->players[who].c - k->c, &tr, &tc);
        int32_t mr = rr, mc = rc;
        if (who >= 0 && dist >= 10) {
            mr = tr;
            mc = tc;
        } else if (who >= 0 && dist <= 3) {
            mr = -tr;
            mc = -tc;
        }
        if (uniform(rng) < 0.85f) {
            mr = rr;
            mc = rc;
        }
        bool blocked = !mob_can_enter(w, k->r + mr, k->c + mc);
        if (k->active && who >= 0 && k->cooldown <= 0 &&
            (dist == 4 || dist == 5 || (dist <= 3 && blocked))) {
            k->cooldown = 4;
            if (w->n_active[SV_ARROW] < w->p.max_mobs[SV_ARROW]) {
                sv_mob *as = w->mobs[SV_ARROW];
                for (int32_t q = 0; q < w->p.max_mobs[SV_ARROW]; q++)
                    if (!as[q].active) {
                        as[q] = (sv_mob){k->r, k->c, 1, 0, tr, tc, true, w->next_uid++};
                        w->n_active[SV_ARROW]++;
                        sv_mark_mob(w, SV_ARROW, q);
                        break;
                    }
            }
            continue;
        }
        k->cooldown--;
        if (k->active)
            mob_move(w, SV_SKELETON, s, mr, mc, dist);
        else
            ghost_move(w, k, mr, mc);
    }
}

static void arrows(sv_world *w)
{
    sv_mob *as = w->mobs[SV_ARROW];
    for (int32_t q = 0; q < w->p.max_mobs[SV_ARROW]; q++) {
        sv_mob *a = &as[q];
        if (!a->active) continue;
        int32_t r = a->r + a->dr, c = a->c + a->dc;
        bool in = sv_in_map(r, c), hit = in && w->player_map[r][c];
        if (hit)
            for (int32_t j = 0; j < w->p.n_players; j++) {
                sv_player *pl = &w->players[j];
                if (pl->alive && pl->r == r && pl->c == c) {
                    hurt(w, j, 2, SV_CAUSE_ARROW);
                    pl->sleeping = false;
                }
            }
        int32_t b = in ? w->map[r][c] : SV_OUT_OF_BOUNDS;
        bool stays = in && (!sv_solid(b) || b == SV_WATER) && !w->mob_map[r][c] && !hit;
        if (in && (b == SV_TABLE || b == SV_FURNACE)) {
            sv_set_block(w, r, c, SV_PATH);
            w->placed_by[r][c] = -1;
        }
        a->r = r;
        a->c = c;
        sv_mark_mob(w, SV_ARROW, q);
        if (!stays) {
            a->active = false;
            w->n_active[SV_ARROW]--;
        }
    }
}

/* ---- spawning (§6.5) --------------------------------------------------------------------- */

static bool spawn_tile_ok(int32_t kind, int32_t b)
{
    return kind == SV_COW      ? b == SV_GRASS
           : kind == SV_ZOMBIE ? (b == SV_GRASS || b == SV_PATH)
                               : b == SV_PATH;
}

/* The columns c of the map with |c - at| <= half, as bits (none when half < 0). */
static uint64_t cols_within(int32_t at, int32_t half)
{
    if (half < 0) return 0;
    int32_t a = at - half < 0 ? 0 : at - half, b = at + half >= SV_MAP ? SV_MAP - 1 : at + half;
    return a > b ? 0 : (~0ULL >> (SV_MAP - 1 - (b - a))) << a;
}

/* A uniformly random candidate tile for a mob of `kind` (its block, free of mobs, its
 * distance d to the nearest living player with lo < d < despawn distance), or -1. Every
 * candidate lies in the box around the living players widened by despawn distance - 1:
 * rejection sampling from that box first (each candidate equally likely), and when that
 * keeps failing (few or no candidates) an exact scan of the box decides. */
static int32_t spawn_tile(sv_world *w, polis_rng *rng, int32_t kind, int32_t lo)
{
    int32_t hi = w->p.despawn_distance, n_players = w->p.n_players;
    const sv_player *ps = w->players;
    int32_t lo_r = SV_MAP, hi_r = -1, lo_c = SV_MAP, hi_c = -1;
    for (int32_t j = 0; j < n_players; j++) {
        if (!ps[j].alive) continue;
        lo_r = ps[j].r < lo_r ? ps[j].r : lo_r;
        hi_r = ps[j].r > hi_r ? ps[j].r : hi_r;
        lo_c = ps[j].c < lo_c ? ps[j].c : lo_c;
        hi_c = ps[j].c > hi_c ? ps[j].c : hi_c;
    }
    if (hi_r < 0) return -1;
    int32_t r0 = lo_r - hi + 1 < 0 ? 0 : lo_r - hi + 1;
    int32_t r1 = hi_r + hi - 1 >= SV_MAP ? SV_MAP - 1 : hi_r + hi - 1;
    int32_t c0 = lo_c - hi + 1 < 0 ? 0 : lo_c - hi + 1;
    int32_t c1 = hi_c + hi - 1 >= SV_MAP ? SV_MAP - 1 : hi_c + hi - 1;
    int32_t rows = r1 - r0 + 1, cols = c1 - c0 + 1;
    for (int32_t tries = 0; tries < 16; tries++) {
        int32_t off = (int32_t)polis_rng_below(rng, (uint32_t)(rows * cols));
        int32_t r = r0 + off / cols, c = c0 + off % cols;
        if (w->mob_map[r][c] || !spawn_tile_ok(kind, w->map[r][c])) continue;
        int32_t best = 999;
        for (int32_t j = 0; j < n_players; j++) {
            if (!ps[j].alive) continue;
            int32_t d = iabs(ps[j].r - r) + iabs(ps[j].c - c);
            best = d < best ? d : best;
        }
        if (best > lo && best < hi) return r * SV_MAP + c;
    }
    /* The box's fitting tiles in map order, a row at a time as bit masks. The nearest living
     * player's distance d is in (lo, hi) when some player is nearer than hi and none is at
     * lo or nearer: in row r a player at (pr, pc) covers the columns |c - pc| < hi - |r - pr|
     * and |c - pc| <= lo - |r - pr|, two intervals, so no candidate tile is looked at alone. */
    uint64_t rows_ok[SV_MAP];
    int32_t in_row[SV_MAP], keep = 0;
    uint64_t span = cols == SV_MAP ? ~0ULL : ((1ULL << cols) - 1) << c0;
    for (int32_t r = r0; r <= r1; r++) {
        const uint8_t *row = w->map[r];
        /* spawn_tile_ok as masks */
        uint64_t ok = kind == SV_COW      ? sv_row_is(row, SV_GRASS)
                      : kind == SV_ZOMBIE ? sv_row_is(row, SV_GRASS) | sv_row_is(row, SV_PATH)
                                          : sv_row_is(row, SV_PATH);
        ok &= span;
        if (!ok) { /* often so for skeletons: no path in the row */
            rows_ok[r] = 0;
            in_row[r] = 0;
            continue;
        }
        uint64_t near = 0, close = 0;
        for (int32_t j = 0; j < n_players; j++) {
            if (!ps[j].alive) continue;
            int32_t dr = iabs(ps[j].r - r);
            near |= cols_within(ps[j].c, hi - 1 - dr);
            close |= cols_within(ps[j].c, lo - dr);
        }
        rows_ok[r] = ok & near & ~close & sv_row_free(w->mob_map[r]);
        in_row[r] = sv_popcount(rows_ok[r]);
        keep += in_row[r];
    }
    if (!keep) return -1;
    int32_t pick = (int32_t)polis_rng_below(rng, (uint32_t)keep);
    for (int32_t r = r0;; r++) {
        if (pick >= in_row[r]) {
            pick -= in_row[r];
            continue;
        }
        uint64_t bits = rows_ok[r];
        while (pick-- > 0) bits &= bits - 1;
        return r * SV_MAP + __builtin_ctzll(bits);
    }
}

/* A mob of `kind` on a tile spawn_tile picks (after the chance was drawn and passed). */
static void spawn_mob(sv_world *w, polis_rng *rng, int32_t kind)
{
    int32_t t = spawn_tile(w, rng, kind, kind == SV_COW ? 3 : 9);
    if (t < 0) return;
    sv_mob *ms = w->mobs[kind];
    int32_t health = kind == SV_COW      ? w->p.cow_health
                     : kind == SV_ZOMBIE ? w->p.zombie_health
                                         : w->p.skeleton_health;
    for (int32_t s = 0; s < w->p.max_mobs[kind]; s++)
        if (!ms[s].active) {
            ms[s].r = t / SV_MAP;
            ms[s].c = t % SV_MAP;
            ms[s].health = health;
            ms[s].active = true;
            ms[s].uid = w->next_uid++;
            w->n_active[kind]++;
            sv_mark_mob(w, kind, s);
            w->mob_map[ms[s].r][ms[s].c] = (uint16_t)(((kind << 8) | s) + 1);
            return;
        }
}

/* The chance is drawn every step (most steps end here: inline, no call) */
static inline void spawn(sv_world *w, polis_rng *rng, int32_t kind, float chance, int32_t n_alive)
{
    if (n_alive == 0 || w->n_active[kind] >= w->p.max_mobs[kind] || uniform(rng) >= chance) return;
    spawn_mob(w, rng, kind);
}

/* ---- intrinsics (§7) --------------------------------------------------------------------- */

static void intrinsics(sv_world *w, int32_t i)
{
    sv_player *pl = &w->players[i];
    if (pl->act == SV_SLEEP && pl->energy < 9) pl->sleeping = true;
    if (pl->sleeping && pl->energy >= 9) {
        pl->sleeping = false;
        unlock(w, i, SV_ACH_WAKE_UP);
    }
    bool sl = pl->sleeping;
    pl->hunger += sl ? 0.5f : 1.0f;
    if (pl->hunger > 25.0f) {
        pl->food = pl->food > 0 ? pl->food - 1 : 0;
        pl->hunger = 0.0f;
    }
    pl->thirst += sl ? 0.5f : 1.0f;
    if (pl->thirst > 20.0f) {
        pl->drink = pl->drink > 0 ? pl->drink - 1 : 0;
        pl->thirst = 0.0f;
    }
    if (sl)
        pl->fatigue = pl->fatigue - 1.0f < 0.0f ? pl->fatigue - 1.0f : 0.0f;
    else
        pl->fatigue += 1.0f;
    if (pl->fatigue > 30.0f) {
        pl->energy = pl->energy > 0 ? pl->energy - 1 : 0;
        pl->fatigue = 0.0f;
    }
    if (pl->fatigue < -10.0f) {
        pl->energy = mini(9, pl->energy + 1);
        pl->fatigue = 0.0f;
    }
    bool met = pl->food > 0 && pl->drink > 0 && (pl->energy > 0 || sl);
    if (met)
        pl->recover += sl ? 2.0f : 1.0f;
    else
        pl->recover -= sl ? 0.5f : 1.0f;
    if (pl->recover > 25.0f) {
        pl->health = mini(9, pl->health + 1);
        pl->recover = 0.0f;
    }
    if (pl->recover < -15.0f) {
        pl->health--;
        pl->recover = 0.0f;
        pl->cause = SV_CAUSE_NEEDS;
    }
}

/* ---- the step ------------------------------------------------------------------------------ */

/* Part of a row of the pair counts: +1 at every j > i (of the m from the part's start, m a
 * multiple of 8) in view of (ri, ci); returns how many. */
static int32_t view_row(int32_t *restrict row, const int32_t *restrict rr,
                        const int32_t *restrict cc, int32_t m, int32_t i, int32_t ri, int32_t ci)
{
    const uint32_t VR = SV_VIEW_ROWS / 2, VC = SV_VIEW_COLS / 2;
    int32_t count = 0;
    for (int32_t j = 0; j < (m & ~7); j++) {
        int32_t in = (j > i) & ((uint32_t)(rr[j] - ri + (int32_t)VR) <= 2 * VR) &
                     ((uint32_t)(cc[j] - ci + (int32_t)VC) <= 2 * VC);
        row[j] += in;
        count += in;
    }
    return count;
}

/* Proximity after the step, on the positions and lives the step's observations show: every
 * pair in each other's view adds a step to its count (sv_in_view); with prox_bonus on, every
 * living player gets prox_bonus x the share of the other players near it (in view, or within
 * prox_radius by max(|dr|, |dc|)). Returns the bonus handed out.
 *
 * The players' rows and columns are first copied to two arrays padded to a multiple of 8 (a
 * dead player's row, and the padding's, far from every other), so the loops below run over
 * whole rows of contiguous ints without branches — |d| <= h is (unsigned)(d + h) <= 2h — and
 * the compiler vectorises them at -O2. */
static float proximity(sv_world *w)
{
    int32_t n = w->p.n_players, pad = sv_pad8(n);
    sv_player *ps = w->players;
    int32_t *rr = w->prox_r, *cc = w->prox_c;
    for (int32_t i = 0; i < n; i++) {
        rr[i] = ps[i].alive ? ps[i].r : -1000;
        cc[i] = ps[i].c;
    }
    int64_t sum = 0;
    for (int32_t i = 0; i < n - 1; i++) {
        if (!ps[i].alive) continue;
        int32_t from = (i + 1) & ~7; /* the first block of 8 with a j > i */
        sum += view_row(w->prox_pairs + (size_t)i * (size_t)pad + from, rr + from, cc + from,
                        pad - from, i - from, rr[i], cc[i]);
    }
    w->prox_sum += sum;
    if (w->p.prox_bonus == 0.0f) return 0.0f;

    const uint32_t VR = SV_VIEW_ROWS / 2, VC = SV_VIEW_COLS / 2;
    int32_t rad = w->p.prox_radius;
    uint32_t hr = rad < 0 ? VR : (uint32_t)rad, hc = rad < 0 ? VC : (uint32_t)rad;
    float total = 0.0f;
    for (int32_t i = 0; i < n; i++) {
        sv_player *pl = &ps[i];
        pl->n_near = 0;
        if (!pl->alive) continue;
        int32_t ri = rr[i], ci = cc[i], near = 0;
        for (int32_t j = 0; j < (pad & ~7); j++)
            near += ((uint32_t)(rr[j] - ri + (int32_t)hr) <= 2 * hr) &
                    ((uint32_t)(cc[j] - ci + (int32_t)hc) <= 2 * hc);
        pl->n_near = near - 1; /* not itself */
        float v = w->p.prox_bonus * (float)pl->n_near / (float)(n - 1);
        pl->reward += v;
        pl->prox_bonus_total += v;
        total += v;
    }
    return total;
}

void sv_step(sv_world *w, polis_rng *rng)
{
    int32_t n = w->p.n_players;
    sv_player *ps = w->players;
    w->n_notes = 0;
    w->sapling_draw = -1.0f;
    w->slot0_killed = 0;
    for (int32_t i = 0; i < n; i++) {
        sv_player *pl = &ps[i];
        pl->health0 = pl->health;
        pl->ach0 = pl->ach;
        pl->alive0 = pl->alive;
        pl->pvp_hits = pl->pvp_hurt = 0;
        pl->hit_kinds = 0;
        pl->off_edge = false;
        if ((uint32_t)pl->act >= SV_N_ACTIONS || !pl->alive || pl->sleeping) pl->act = SV_NOOP;
        /* god mode restores these at the end; the others use w->saved for health only */
        w->saved[i] = pl->food | pl->drink << 8 | pl->energy << 16;
    }
    if (n > 1) {
        if (w->p.tie_break == SV_TIE_REFERENCE) {
            settle_reference(w, rng);
        } else {
            settle_intended(w, rng, false);
            settle_intended(w, rng, true);
        }
    }
    for (int32_t i = 0; i < n; i++) craft(w, i);
    bool any_do = false;
    for (int32_t i = 0; i < n; i++)
        if (ps[i].act == SV_DO) {
            do_action(w, rng, i);
            any_do = true;
        }
    if (w->p.slot0_kill_credit && w->slot0_killed) credit_slot0(w);
    if (w->p.faced_sapling_resets) reset_faced_plants(w);
    if (w->p.ghost_mobs == SV_GHOST_EVERY_STEP || (w->p.ghost_mobs == SV_GHOST_ON_DO && any_do))
        revive_ghosts(w);
    if (w->p.plant_slots == SV_SLOTS_REFERENCE) {
        w->free_slot = w->n_plants < w->p.max_plants ? w->n_plants : -1;
        for (int32_t k = 0; k < w->n_plants; k++)
            if (w->plants[k].r < 0) {
                w->free_slot = k;
                break;
            }
    }
    for (int32_t i = 0; i < n; i++) place(w, i);
    for (int32_t i = 0; i < n; i++) move(w, i);

    /* a kind with no active mob does nothing (every slot would be skipped), unless inactive
     * slots move (ghost mobs) */
    bool ghosts = w->p.ghost_mobs != SV_GHOST_OFF;
    if (ghosts || w->n_active[SV_ZOMBIE]) zombies(w, rng);
    if (ghosts || w->n_active[SV_COW]) cows(w, rng);
    if (ghosts || w->n_active[SV_SKELETON]) skeletons(w, rng);
    if (w->n_active[SV_ARROW]) arrows(w);

    int32_t n_alive = 0;
    for (int32_t i = 0; i < n; i++) n_alive += ps[i].alive;
    float dark = 1.0f - w->light;
    spawn(w, rng, SV_COW, w->p.spawn_cow_chance, n_alive);
    spawn(w, rng, SV_ZOMBIE,
          w->p.spawn_zombie_base_chance + w->p.spawn_zombie_night_chance * dark * dark, n_alive);
    spawn(w, rng, SV_SKELETON, w->p.spawn_skeleton_chance, n_alive);

    for (int32_t k = 0; k < w->n_plants; k++) {
        sv_plant *pt = &w->plants[k];
        if (pt->r < 0) continue;
        pt->age++;
        if (pt->age >= 600 && w->map[pt->r][pt->c] == SV_PLANT)
            sv_set_block(w, pt->r, pt->c, SV_RIPE_PLANT);
    }

    float total = 0.0f;
    for (int32_t i = 0; i < n; i++) {
        sv_player *pl = &ps[i];
        if (!pl->alive0) {
            pl->reward = 0.0f;
            continue;
        }
        intrinsics(w, i);
#if defined(__SSE2__)
        /* at most 9 of each item: a min of four ints at a time (SSE2 has no pminsd) */
        for (int32_t k = 0; k < SV_N_ITEMS; k += 4) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(pl->inv + k));
            __m128i nine = _mm_set1_epi32(9), big = _mm_cmpgt_epi32(v, nine);
            v = _mm_or_si128(_mm_andnot_si128(big, v), _mm_and_si128(big, nine));
            _mm_storeu_si128((__m128i *)(void *)(pl->inv + k), v);
        }
#else
        for (int32_t k = 0; k < SV_N_ITEMS; k++) pl->inv[k] = pl->inv[k] > 9 ? 9 : pl->inv[k];
#endif
        bool lava = w->map[pl->r][pl->c] == SV_LAVA || pl->off_edge;
        if (!w->p.unclamped_health) {
            if (lava) {
                pl->health = 0;
                pl->cause = SV_CAUSE_LAVA;
            }
            if (pl->health < 0) pl->health = 0;
        }
        if (w->p.god_mode) {
            pl->health = pl->health0;
            pl->food = w->saved[i] & 0xff;
            pl->drink = (w->saved[i] >> 8) & 0xff;
            pl->energy = (w->saved[i] >> 16) & 0xff;
        } else if (pl->health <= 0 || lava) {
            if (lava) pl->cause = SV_CAUSE_LAVA;
            pl->alive = false;
            pl->sleeping = false;
            w->player_map[pl->r][pl->c]--;
            note(w, SV_NOTE_DEATH, i, pl->cause, pl->r, pl->c);
        }
        uint32_t gained = pl->ach & ~pl->ach0;
        float r = 0.1f * (float)(pl->health - pl->health0);
        while (gained) {
            int k = __builtin_ctz(gained);
            r += w->p.weights[k];
            gained &= gained - 1;
        }
        r += w->p.pvp_attack_reward * (float)pl->pvp_hits +
             w->p.pvp_attacked_penalty * (float)pl->pvp_hurt;
        pl->reward = r;
        total += r;
    }
    if (n > 1) total += proximity(w);
    if (w->p.reward_mode != SV_REWARD_INDIVIDUAL) {
        float v = w->p.reward_mode == SV_REWARD_SHARED_SUM ? total : total / (float)n;
        for (int32_t i = 0; i < n; i++) ps[i].reward = v;
    }
    w->timestep++;
    w->light = w->n_light == w->p.day_length ? w->light_of[w->timestep % w->n_light]
                                             : sv_light(w->timestep, w->p.day_length);
}
