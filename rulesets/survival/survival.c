/*
 * survival — Craftax-Classic with MAC's many players as a polis ruleset (README.md has the
 * rules; specs/survival.md every number).
 *
 * The game itself is the core in sv_world.c, sv_rules.c and sv_obs.c (core.h); this file
 * makes it a plugin:
 *   init():  parameters into sv_params, one allocation for the world, the 16 actions (their
 *            handlers only record the choice: the game resolves all players at once), the
 *            observation fields, the reward function, event types, hooks, renderers,
 *            policies and exports.
 *   reset:   sv_generate() makes a new world from the env's RNG (its terrain possibly made
 *            ahead on an idle thread of a vec's pool: on_reset).
 *   step:    BEGIN clears the choices, the action handlers record them, WORLD runs
 *            sv_step() and publishes what happened on the bus, the reward function hands out
 *            sv_step's rewards, END terminates the players who died (the kernel then skips
 *            them and the episode ends when every player is done), OBSERVE computes the
 *            masks the legality callbacks read.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "polis/kit.h"

/* ---- actions and masks ------------------------------------------------------------------ */

static polis_status act(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx;
    survival *s = ud;
    s->w->players[agent].act = arg;
    return POLIS_OK;
}

static bool legal(polis_ctx *ctx, void *ud, int32_t agent, int32_t arg)
{
    (void)ctx;
    survival *s = ud;
    return !s->legal_mask || ((s->legal[agent] >> arg) & 1u);
}

/* The mask bytes of actions 1..16 from one agent's bits, in one call (a legality group,
 * the "actions" host API): each byte is what `legal` returns for its action. */
static void legal_row(polis_ctx *ctx, void *ud, int32_t agent, uint8_t *row)
{
    (void)ctx;
    const survival *s = ud;
    uint32_t m = s->legal_mask ? s->legal[agent] >> 1 : 0xffffu;
#if defined(__SSE2__)
    /* bytes 0-7 test bits 0-7 of m, bytes 8-15 bits 8-15 */
    const __m128i bit = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    __m128i v = _mm_unpacklo_epi64(_mm_set1_epi8((char)(m & 0xffu)),
                                   _mm_set1_epi8((char)((m >> 8) & 0xffu)));
    v = _mm_cmpeq_epi8(_mm_and_si128(v, bit), bit);
    _mm_storeu_si128((__m128i *)(void *)row, _mm_and_si128(v, _mm_set1_epi8(1)));
#else
    for (int32_t k = 0; k < SV_N_ACTIONS - 1; k++) row[k] = (uint8_t)((m >> k) & 1u);
#endif
}

static polis_status on_observe(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    survival *s = ud;
    for (int32_t a = 0; a < s->n; a++) s->legal[a] = sv_legal_seen(s->w, a, sv_seen(s, a));
    return POLIS_OK;
}

/* ---- lifecycle hooks ---------------------------------------------------------------------- */

/* Resets made ahead (docs/kernel.md, "Resets made ahead"): the terrain, nearly all of a
 * reset's time, drawn on an idle thread of a vec's pool from the generator the next reset will
 * start with; the reset takes it when the generator is in exactly that state (then also the
 * state after the draws) and draws its own otherwise, so the world is the same either way.
 * After AHEAD_MISSES resets in a row found a terrain drawn for another state (something drew
 * before this hook), prepare stops: its work would be lost every time. */
#define AHEAD_MISSES 3

static void prepare_terrain(void *ud, const polis_rng *rng)
{
    survival *s = ud;
    sv_ahead *a = s->ahead;
    if (a->off) return;
    polis_rng r = *rng;
    sv_generate_terrain(s->w, a->map, &r);
    a->key = *rng;
    a->after = r;
    a->ready = true;
}

static bool same_rng(const polis_rng *x, const polis_rng *y)
{
    return x->state == y->state && x->inc == y->inc;
}

static polis_status on_reset(polis_ctx *ctx, void *ud)
{
    survival *s = ud;
    polis_rng *rng = s->h->rng(ctx);
    sv_ahead *ah = s->ahead;
    if (ah->ready && same_rng(&ah->key, rng)) {
        memcpy(&s->w->map[0][0], ah->map, sizeof ah->map);
        *rng = ah->after;
        sv_generate_rest(s->w);
        ah->misses = 0;
    } else {
        if (ah->ready && ++ah->misses >= AHEAD_MISSES) ah->off = true;
        sv_generate(s->w, rng);
    }
    ah->ready = false;
    for (int32_t a = 0; a < s->n; a++) s->w->players[a].act = SV_NOOP;
    return POLIS_OK;
}

static polis_status on_begin(polis_ctx *ctx, void *ud)
{
    (void)ctx;
    survival *s = ud;
    for (int32_t a = 0; a < s->n; a++) s->w->players[a].act = SV_NOOP;
    return POLIS_OK;
}

static polis_status publish_notes(survival *s)
{
    const polis_host *h = s->h;
    for (int32_t k = 0; k < s->w->n_notes; k++) {
        const sv_note *nt = &s->w->notes[k];
        polis_status st = POLIS_OK;
        switch (nt->kind) {
        case SV_NOTE_ACHIEVEMENT: {
            int32_t ev[2] = {nt->player, nt->a};
            st = h->publish(s->ctx, s->ev_achievement, ev, sizeof ev);
            break;
        }
        case SV_NOTE_CRAFT: {
            /* agent, action, table_owner, furnace_owner, tables, furnaces, table_1..8,
             * furnace_1..8 (-2 past the count) */
            const sv_stations *near = &s->w->players[nt->player].near;
            int32_t ev[6 + 16] = {nt->player, nt->a,          nt->b,
                                  nt->c,      near->n_tables, near->n_furnaces};
            for (int32_t q = 0; q < 8; q++) {
                ev[6 + q] = q < near->n_tables ? near->tables[q] : -2;
                ev[14 + q] = q < near->n_furnaces ? near->furnaces[q] : -2;
            }
            st = h->publish(s->ctx, s->ev_crafted, ev, sizeof ev);
            break;
        }
        case SV_NOTE_KILL: {
            int32_t ev[4] = {nt->player, nt->a, nt->b, nt->c};
            st = h->publish(s->ctx, s->ev_killed, ev, sizeof ev);
            break;
        }
        case SV_NOTE_DEATH: {
            int32_t ev[4] = {nt->player, nt->a, nt->b, nt->c};
            s->deaths[nt->a]++;
            st = h->publish(s->ctx, s->ev_death, ev, sizeof ev);
            break;
        }
        case SV_NOTE_ATTACK: {
            int32_t ev[2] = {nt->player, nt->a};
            st = h->publish(s->ctx, s->ev_attack, ev, sizeof ev);
            break;
        }
        case SV_NOTE_PLACE: {
            int32_t ev[4] = {nt->player, nt->a, nt->b, nt->c};
            st = h->publish(s->ctx, s->ev_placed, ev, sizeof ev);
            break;
        }
        default: break;
        }
        if (st) return st;
    }
    return POLIS_OK;
}

/* sv_world.sees: whether o sees t (docs/visibility.md) */
static bool sees(void *ud, int32_t o, int32_t t)
{
    survival *s = ud;
    return s->vis->visible(s->ctx, o, t);
}

static polis_status on_world(polis_ctx *ctx, void *ud)
{
    survival *s = ud;
    /* the players acted on what they saw: nobody attacks a player hidden from it */
    s->w->sees = s->vis->active(ctx) ? sees : NULL;
    s->w->sees_ud = s;
    sv_step(s->w, s->h->rng(ctx));
    return s->w->n_notes ? publish_notes(s) : POLIS_OK;
}

static polis_status reward_fn(polis_ctx *ctx, void *ud, float *out)
{
    (void)ctx;
    survival *s = ud;
    for (int32_t a = 0; a < s->n; a++) out[a] = s->w->players[a].reward;
    return POLIS_OK;
}

static polis_status on_end(polis_ctx *ctx, void *ud)
{
    survival *s = ud;
    const polis_io *io = s->h->io(ctx);
    for (int32_t a = 0; a < s->n; a++)
        if (!s->w->players[a].alive) io->terminations[a] = 1;
    return POLIS_OK;
}

/* ---- observations ------------------------------------------------------------------------ */

/* Who sees whom (docs/visibility.md): NULL while nothing is hidden, else the players
 * `agent` may see now, in s->seen. */
const uint8_t *sv_seen(survival *s, int32_t agent)
{
    if (!s->vis->active(s->ctx)) return NULL;
    for (int32_t j = 0; j < s->n; j++) s->seen[j] = s->vis->visible(s->ctx, agent, j);
    return s->seen;
}

static void write_symbolic(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)ctx;
    survival *s = ud;
    sv_write_obs(s->w, agent, dst, sv_seen(s, agent));
}

static void write_others(polis_ctx *ctx, void *ud, int32_t agent, void *dst)
{
    (void)ctx;
    survival *s = ud;
    sv_write_others(s->w, agent, dst, sv_seen(s, agent));
}

/* ---- parameters -------------------------------------------------------------------------- */

typedef struct sv_cfg {
    int64_t day_length;
    bool always_diamond;
    int64_t zombie_health, cow_health, skeleton_health, despawn_distance;
    double spawn_cow_chance, spawn_zombie_base_chance, spawn_zombie_night_chance,
        spawn_skeleton_chance;
    int64_t max_zombies, max_cows, max_skeletons, max_arrows, max_plants;
    bool god_mode, count_scaled_damage, place_on_players, unclamped_health, pvp;
    bool legal_mask, faced_sapling_resets, eaten_plant_stays_ripe, shared_sapling_draw, edge_wraps,
        slot0_kill_credit;
    const char *observation, *tie_break, *reward_mode, *ghost_mobs, *skeleton_axis, *plant_slots;
    int64_t pvp_damage;
    double pvp_heal, pvp_attack_reward, pvp_attacked_penalty;
    double proximity_bonus;
    int64_t proximity_radius;
    const polis_json *achievement_weights;
} sv_cfg;

static const polis_param_def PARAMS[] = {
    POLIS_P_INT(sv_cfg, "day_length", day_length, 1, 1e6, 300, "steps of one day-night cycle"),
    POLIS_P_BOOL(sv_cfg, "always_diamond", always_diamond, true,
                 "world generation turns one random stone tile into a diamond"),
    POLIS_P_INT(sv_cfg, "zombie_health", zombie_health, 1, 100, 5, "health of a new zombie"),
    POLIS_P_INT(sv_cfg, "cow_health", cow_health, 1, 100, 3, "health of a new cow"),
    POLIS_P_INT(sv_cfg, "skeleton_health", skeleton_health, 1, 100, 3, "health of a new skeleton"),
    POLIS_P_INT(sv_cfg, "mob_despawn_distance", despawn_distance, 4, 64, 14,
                "a mob at this L1 distance or more from every living player despawns; spawns "
                "happen below it"),
    POLIS_P_DOUBLE(sv_cfg, "spawn_cow_chance", spawn_cow_chance, 0, 1, 0.1,
                   "chance per step that a cow spawns (MAC: 0.3)"),
    POLIS_P_DOUBLE(sv_cfg, "spawn_zombie_base_chance", spawn_zombie_base_chance, 0, 1, 0.02,
                   "chance per step that a zombie spawns in full daylight"),
    POLIS_P_DOUBLE(sv_cfg, "spawn_zombie_night_chance", spawn_zombie_night_chance, 0, 1, 0.1,
                   "added to the zombie chance times (1 - light)^2"),
    POLIS_P_DOUBLE(sv_cfg, "spawn_skeleton_chance", spawn_skeleton_chance, 0, 1, 0.05,
                   "chance per step that a skeleton spawns on a path tile"),
    POLIS_P_INT(sv_cfg, "max_zombies", max_zombies, 0, SV_MAX_MOBS, 3, "zombies alive at once"),
    POLIS_P_INT(sv_cfg, "max_cows", max_cows, 0, SV_MAX_MOBS, 3, "cows alive at once (MAC: 10)"),
    POLIS_P_INT(sv_cfg, "max_skeletons", max_skeletons, 0, SV_MAX_MOBS, 2,
                "skeletons alive at once"),
    POLIS_P_INT(sv_cfg, "max_arrows", max_arrows, 0, SV_MAX_MOBS, 3, "arrows in flight at once"),
    POLIS_P_INT(sv_cfg, "max_growing_plants", max_plants, 0, SV_MAX_PLANTS, 10,
                "saplings that can ripen per episode; later ones never do"),
    POLIS_P_BOOL(sv_cfg, "god_mode", god_mode, false,
                 "health, food, drink and energy never change and nobody dies"),
    POLIS_P_BOOL(
        sv_cfg, "count_scaled_damage", count_scaled_damage, true,
        "damage = max(1, 2 x wood swords, 3 x stone swords, 5 x iron swords) counting every sword "
        "held (Craftax); false: 1, 2, 3 or 5 by the best sword held (Crafter)"),
    POLIS_P_BOOL(
        sv_cfg, "place_on_players", place_on_players, false,
        "a player may place a block on a tile where another living player stands (MAC's code)"),
    POLIS_P_BOOL(sv_cfg, "unclamped_health", unclamped_health, false,
                 "MAC's code: lava does not set health to 0 and health may go below 0 (only the "
                 "reward differs)"),
    POLIS_P_BOOL(sv_cfg, "pvp", pvp, false,
                 "DO on a tile with another living player attacks it (MAC paper)"),
    POLIS_P_INT(sv_cfg, "pvp_damage", pvp_damage, 0, 9, 1,
                "health the attacked player loses per hit"),
    POLIS_P_DOUBLE(sv_cfg, "pvp_heal", pvp_heal, 0, 9, 0.5,
                   "health the attacker gains per hit, in steps of 0.5 (half points carry over)"),
    POLIS_P_DOUBLE(sv_cfg, "pvp_attack_reward", pvp_attack_reward, -100, 100, 1.0,
                   "reward to the attacker per hit"),
    POLIS_P_DOUBLE(sv_cfg, "pvp_attacked_penalty", pvp_attacked_penalty, -100, 100, -0.5,
                   "reward to the attacked player per hit"),
    POLIS_P_DOUBLE(sv_cfg, "proximity_bonus", proximity_bonus, -100, 100, 0,
                   "reward per step to every living player: this weight x the share of the other "
                   "players near it (MAC paper Fig. 7b); 0: off"),
    POLIS_P_INT(sv_cfg, "proximity_radius", proximity_radius, -1, 63, -1,
                "who is near for proximity_bonus: -1 in view (the 7 x 9 window, as the proximity "
                "metric), r >= 0 within r rows and r columns"),
    POLIS_P_STRING(sv_cfg, "observation", observation, "auto",
                   "\"classic\" (1345 floats), \"mac\" (1409: other-players channel and is_alive), "
                   "\"share_stats\" (1346 plus an (n-1) x 84 \"others\" field), \"auto\" (classic "
                   "for one player, mac otherwise)"),
    POLIS_P_STRING(sv_cfg, "tie_break", tie_break, "intended",
                   "contested DO and placement tiles: \"intended\" (one random actor per tile) or "
                   "\"reference\" (MAC's code, asymmetric)"),
    POLIS_P_STRING(
        sv_cfg, "ghost_mobs", ghost_mobs, "off",
        "quirk Q1 of the reference: \"off\" (inactive mob slots stay put and dead), \"on_do\" "
        "(Craftax-Classic: they drift, and every slot with health left revives at its stored "
        "position on a step where a player does DO) or \"every_step\" (MAC: revives every step)"),
    POLIS_P_STRING(sv_cfg, "skeleton_axis", skeleton_axis, "target",
                   "\"target\": a skeleton heads along its target's major axis; \"all_players\" "
                   "(MAC's code): along an axis where the target's distance equals the largest of "
                   "any player's, else the row axis"),
    POLIS_P_STRING(sv_cfg, "plant_slots", plant_slots, "next_free",
                   "growing-plant slots of new saplings: \"next_free\" in player order, or "
                   "\"reference\" (MAC's code: the first free slot + the player's index, over a "
                   "used slot if so, the last player's sapling taking every slot from there on)"),
    POLIS_P_BOOL(sv_cfg, "faced_sapling_resets", faced_sapling_resets, false,
                 "MAC's code: every step, a growing plant that any player faces (whatever its "
                 "action, unless it hit a mob) starts its 600 steps again"),
    POLIS_P_BOOL(sv_cfg, "eaten_plant_stays_ripe", eaten_plant_stays_ripe, false,
                 "MAC's code: eating a ripe plant leaves it ripe"),
    POLIS_P_BOOL(sv_cfg, "shared_sapling_draw", shared_sapling_draw, false,
                 "MAC's code of the paper: one chance draw per step for every player's DO on grass "
                 "(a sapling for all or for none)"),
    POLIS_P_BOOL(
        sv_cfg, "edge_wraps", edge_wraps, false,
        "the reference's code: a move off the top (left) edge reads the tile from the bottom "
        "(right) edge, and when that is lava the player steps off the map and dies"),
    POLIS_P_BOOL(sv_cfg, "slot0_kill_credit", slot0_kill_credit, false,
                 "MAC's code: when the mob in slot 0 of a kind dies, every player that hit no mob "
                 "of that kind in the step is credited too (defeat_zombie, defeat_skeleton, or "
                 "eat_cow with its food)"),
    POLIS_P_BOOL(
        sv_cfg, "legal_mask", legal_mask, true,
        "false: every action is legal at every step, as in Craftax (which has no mask); one that "
        "cannot apply does nothing but still contests its tile under tie_break \"reference\""),
    POLIS_P_STRING(sv_cfg, "reward_mode", reward_mode, "individual",
                   "\"individual\", \"shared_mean\" or \"shared_sum\" of every player's reward"),
    POLIS_P_JSON(
        sv_cfg, "achievement_weights", achievement_weights,
        "reward per achievement: an object {name: weight} (others stay 1) or an array of 22"),
};

static bool pick(const char *v, const char *const *names, int32_t n, int32_t *out)
{
    for (int32_t i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return true;
        }
    return false;
}

static polis_status read_weights(survival *s, const polis_json *j, float *weights)
{
    const polis_host *h = s->h;
    int kind = h->json_kind(j);
    if (kind == -1 || kind == 0) return POLIS_OK;
    if (kind == -2) return POLIS_ERR_NOMEM;
    if (kind == 4) {
        if (h->json_len(j) != SV_N_ACHIEVEMENTS) {
            h->error(s->ctx, "%s: expected 22 weights (one per achievement), got %d",
                     h->json_path(j), h->json_len(j));
            return POLIS_ERR_CONFIG;
        }
        for (int32_t k = 0; k < SV_N_ACHIEVEMENTS; k++) {
            double v;
            polis_status st = h->json_double(s->ctx, h->json_at(s->ctx, j, k), -1e6, 1e6, &v);
            if (st) return st;
            weights[k] = (float)v;
        }
        return POLIS_OK;
    }
    if (kind != 5) {
        h->error(s->ctx, "%s: expected an object {achievement: weight} or an array of 22",
                 h->json_path(j));
        return POLIS_ERR_CONFIG;
    }
    for (int32_t i = 0; i < h->json_len(j); i++) {
        const char *key = h->json_key(j, i);
        const polis_json *v = h->json_at(s->ctx, j, i);
        int32_t k;
        if (!pick(key, sv_achievement_names, SV_N_ACHIEVEMENTS, &k)) {
            h->error(s->ctx,
                     "%s: unknown achievement \"%s\" (collect_wood, place_table, ...; "
                     "README \"Achievements\")",
                     h->json_path(v), key);
            return POLIS_ERR_CONFIG;
        }
        double d;
        polis_status st = h->json_double(s->ctx, v, -1e6, 1e6, &d);
        if (st) return st;
        weights[k] = (float)d;
    }
    return POLIS_OK;
}

static polis_status read_params(survival *s, const sv_cfg *c, sv_params *p)
{
    const polis_host *h = s->h;
    sv_params_default(p, s->n);
    p->day_length = (int32_t)c->day_length;
    p->always_diamond = c->always_diamond;
    p->zombie_health = (int32_t)c->zombie_health;
    p->cow_health = (int32_t)c->cow_health;
    p->skeleton_health = (int32_t)c->skeleton_health;
    p->despawn_distance = (int32_t)c->despawn_distance;
    p->spawn_cow_chance = (float)c->spawn_cow_chance;
    p->spawn_zombie_base_chance = (float)c->spawn_zombie_base_chance;
    p->spawn_zombie_night_chance = (float)c->spawn_zombie_night_chance;
    p->spawn_skeleton_chance = (float)c->spawn_skeleton_chance;
    p->max_mobs[SV_ZOMBIE] = (int32_t)c->max_zombies;
    p->max_mobs[SV_COW] = (int32_t)c->max_cows;
    p->max_mobs[SV_SKELETON] = (int32_t)c->max_skeletons;
    p->max_mobs[SV_ARROW] = (int32_t)c->max_arrows;
    p->max_plants = (int32_t)c->max_plants;
    p->god_mode = c->god_mode;
    p->count_scaled_damage = c->count_scaled_damage;
    p->place_on_players = c->place_on_players;
    p->unclamped_health = c->unclamped_health;
    p->pvp = c->pvp;
    p->pvp_damage = (int32_t)c->pvp_damage;
    p->pvp_attack_reward = (float)c->pvp_attack_reward;
    p->pvp_attacked_penalty = (float)c->pvp_attacked_penalty;
    double halves = c->pvp_heal * 2.0;
    if (halves != (double)(int32_t)halves) {
        h->error(s->ctx, "params.pvp_heal: expected a multiple of 0.5, got %g", c->pvp_heal);
        return POLIS_ERR_CONFIG;
    }
    p->pvp_heal_halves = (int32_t)halves;
    p->prox_bonus = (float)c->proximity_bonus;
    p->prox_radius = (int32_t)c->proximity_radius;
    if (p->prox_bonus != 0.0f && s->n < 2) {
        h->error(s->ctx, "params.proximity_bonus: needs at least 2 players, the scenario has 1");
        return POLIS_ERR_CONFIG;
    }

    static const char *const OBS[4] = {"classic", "mac", "share_stats", "auto"};
    static const char *const TIE[2] = {"intended", "reference"};
    static const char *const GHOST[3] = {"off", "on_do", "every_step"};
    static const char *const REW[3] = {"individual", "shared_mean", "shared_sum"};
    static const char *const AXIS[2] = {"target", "all_players"};
    static const char *const SLOTS[2] = {"next_free", "reference"};
    p->faced_sapling_resets = c->faced_sapling_resets;
    p->eaten_plant_stays_ripe = c->eaten_plant_stays_ripe;
    p->shared_sapling_draw = c->shared_sapling_draw;
    p->edge_wraps = c->edge_wraps;
    p->slot0_kill_credit = c->slot0_kill_credit;
    s->legal_mask = c->legal_mask;
    if (!pick(c->skeleton_axis, AXIS, 2, &p->skeleton_axis)) {
        h->error(s->ctx,
                 "params.skeleton_axis: expected \"target\" or \"all_players\", got "
                 "\"%s\"",
                 c->skeleton_axis);
        return POLIS_ERR_CONFIG;
    }
    if (!pick(c->plant_slots, SLOTS, 2, &p->plant_slots)) {
        h->error(s->ctx,
                 "params.plant_slots: expected \"next_free\" or \"reference\", got "
                 "\"%s\"",
                 c->plant_slots);
        return POLIS_ERR_CONFIG;
    }
    int32_t v;
    if (!pick(c->observation, OBS, 4, &v)) {
        h->error(s->ctx,
                 "params.observation: expected \"classic\", \"mac\", \"share_stats\" or "
                 "\"auto\", got \"%s\"",
                 c->observation);
        return POLIS_ERR_CONFIG;
    }
    p->obs_layout = v == 3 ? (s->n > 1 ? SV_OBS_MAC : SV_OBS_CLASSIC) : v;
    if (p->obs_layout == SV_OBS_SHARE_STATS && s->n < 2) {
        h->error(s->ctx, "params.observation: \"share_stats\" needs at least 2 players, the "
                         "scenario has 1");
        return POLIS_ERR_CONFIG;
    }
    if (!pick(c->tie_break, TIE, 2, &p->tie_break)) {
        h->error(s->ctx, "params.tie_break: expected \"intended\" or \"reference\", got \"%s\"",
                 c->tie_break);
        return POLIS_ERR_CONFIG;
    }
    if (!pick(c->ghost_mobs, GHOST, 3, &p->ghost_mobs)) {
        h->error(s->ctx,
                 "params.ghost_mobs: expected \"off\", \"on_do\" or \"every_step\", "
                 "got \"%s\"",
                 c->ghost_mobs);
        return POLIS_ERR_CONFIG;
    }
    if (!pick(c->reward_mode, REW, 3, &p->reward_mode)) {
        h->error(s->ctx,
                 "params.reward_mode: expected \"individual\", \"shared_mean\" or "
                 "\"shared_sum\", got \"%s\"",
                 c->reward_mode);
        return POLIS_ERR_CONFIG;
    }
    return read_weights(s, c->achievement_weights, p->weights);
}

/* ---- init / destroy ---------------------------------------------------------------------- */

/* The observation's ranges (plugin ABI 1.4): every value is a one-hot, a flag, the light
 * level or a count /10 of at most 9, so [0, 1] — except the player's own health with
 * unclamped_health (MAC), which a dead player keeps below 0: at worst what one step can take
 * from 1 point (every zombie hitting a sleeper, every arrow, every other player, starving). */
static polis_status declare_ranges(survival *s, polis_ctx *ctx, int32_t id_sym, int32_t id_others)
{
    const polis_host *h = s->h;
    const sv_params *p = &s->w->p;
    int32_t len = sv_obs_len(p->obs_layout);
    double *lo = h->alloc(ctx, sizeof *lo * (size_t)len),
           *hi = h->alloc(ctx, sizeof *hi * (size_t)len);
    polis_status st = POLIS_ERR_NOMEM;
    if (lo && hi) {
        for (int32_t i = 0; i < len; i++) lo[i] = 0, hi[i] = 1;
        if (p->unclamped_health) {
            int64_t worst = 7 * (int64_t)p->max_mobs[0] + 2 * (int64_t)p->max_mobs[3] + 3 +
                            (p->pvp ? (int64_t)p->pvp_damage * (p->n_players - 1) : 0);
            /* health is the 13th value after the view block (12 inventory counts first) */
            lo[SV_VIEW_CELLS * sv_obs_channels(p->obs_layout) + SV_N_ITEMS] =
                -(double)worst / 10.0 - 0.01;
        }
        st = h->obs_range(ctx, id_sym, 0, len, lo, hi);
        double zero = 0, one = 1;
        if (!st && id_others >= 0) st = h->obs_range(ctx, id_others, -1, 1, &zero, &one);
    }
    if (lo) h->free(ctx, lo, sizeof *lo * (size_t)len);
    if (hi) h->free(ctx, hi, sizeof *hi * (size_t)len);
    return st;
}

static polis_status register_all(survival *s)
{
    const polis_host *h = s->h;
    polis_ctx *ctx = s->ctx;
    polis_status st;
    static const char *const DOCS[SV_N_ACTIONS] = {
        "do nothing",
        "face left (column - 1) and step there if it is free",
        "face right (column + 1) and step there if it is free",
        "face up (row - 1) and step there if it is free",
        "face down (row + 1) and step there if it is free",
        "interact with the facing tile: attack a mob, collect, drink, eat",
        "fall asleep (energy below 9); wakes when energy is back to 9 or when hurt",
        "place stone (1 stone) on the facing tile: grass, sand, path, water or lava",
        "place a crafting table (2 wood) on the facing tile: grass, sand, path or lava",
        "place a furnace (1 stone) on the facing tile: grass, sand, path or lava",
        "plant a sapling (1 sapling) on the facing grass tile",
        "make a wood pickaxe next to a table (1 wood)",
        "make a stone pickaxe next to a table (1 wood, 1 stone)",
        "make an iron pickaxe next to a table and a furnace (1 wood, stone, iron, coal)",
        "make a wood sword next to a table (1 wood)",
        "make a stone sword next to a table (1 wood, 1 stone)",
        "make an iron sword next to a table and a furnace (1 wood, stone, iron, coal)"};
    for (int32_t a = 1; a < SV_N_ACTIONS; a++) {
        polis_action_def def = {.name = sv_action_names[a],
                                .doc = DOCS[a],
                                .handler = act,
                                .legal = legal,
                                .arg = a,
                                .ud = s};
        if ((st = h->action(ctx, &def, &s->action_id[a]))) return st;
    }
    /* the 16 masks from one call per agent when their ids follow each other (they do:
     * nothing registers in between), else one `legal` call each */
    bool follow = true;
    for (int32_t a = 2; a < SV_N_ACTIONS; a++) follow &= s->action_id[a] == s->action_id[1] + a - 1;
    if (follow) {
        const polis_actions_api *acts = h->host_api(ctx, POLIS_ACTIONS_API, 1);
        if (!acts) return POLIS_ERR_PLUGIN;
        if ((st = acts->legal_rows(ctx, s->action_id[1], SV_N_ACTIONS - 1, legal_row, s)))
            return st;
    }
    int32_t len = sv_obs_len(s->w->p.obs_layout);
    polis_obs_def sym = {.name = "symbolic",
                         .doc = "Craftax symbolic vector: 7x9 view x (17 block one-hots, zombie, "
                                "cow, skeleton, arrow[, other players]), inventory/10, health, "
                                "food, drink, energy /10, facing one-hot, light, sleeping[, "
                                "alive]",
                         .dtype = POLIS_DTYPE_F32,
                         .ndim = 1,
                         .shape = {len},
                         .write = write_symbolic,
                         .ud = s};
    int32_t id_sym, id_others = -1;
    if ((st = h->observation(ctx, &sym, &id_sym))) return st;
    if (s->w->p.obs_layout == SV_OBS_SHARE_STATS) {
        polis_obs_def others = {.name = "others",
                                .doc = "per other player: view-cell one-hot (63), inventory, "
                                       "health, food, drink, energy, sleeping /10 (17), facing "
                                       "(4); zeros when dead or out of view",
                                .dtype = POLIS_DTYPE_F32,
                                .ndim = 2,
                                .shape = {s->n - 1, 84},
                                .write = write_others,
                                .ud = s};
        if ((st = h->observation(ctx, &others, &id_others))) return st;
    }
    if ((st = declare_ranges(s, ctx, id_sym, id_others))) return st;
    if ((st = h->reward(ctx, "survival", reward_fn, s))) return st;

    static const polis_field_def ACH[2] = {{"agent", POLIS_FIELD_I32},
                                           {"achievement", POLIS_FIELD_I32}};
    static const polis_field_def CRAFT[22] = {
        {"agent", POLIS_FIELD_I32},       {"action", POLIS_FIELD_I32},
        {"table_owner", POLIS_FIELD_I32}, {"furnace_owner", POLIS_FIELD_I32},
        {"tables", POLIS_FIELD_I32},      {"furnaces", POLIS_FIELD_I32},
        {"table_1", POLIS_FIELD_I32},     {"table_2", POLIS_FIELD_I32},
        {"table_3", POLIS_FIELD_I32},     {"table_4", POLIS_FIELD_I32},
        {"table_5", POLIS_FIELD_I32},     {"table_6", POLIS_FIELD_I32},
        {"table_7", POLIS_FIELD_I32},     {"table_8", POLIS_FIELD_I32},
        {"furnace_1", POLIS_FIELD_I32},   {"furnace_2", POLIS_FIELD_I32},
        {"furnace_3", POLIS_FIELD_I32},   {"furnace_4", POLIS_FIELD_I32},
        {"furnace_5", POLIS_FIELD_I32},   {"furnace_6", POLIS_FIELD_I32},
        {"furnace_7", POLIS_FIELD_I32},   {"furnace_8", POLIS_FIELD_I32}};
    static const polis_field_def KILL[4] = {{"agent", POLIS_FIELD_I32},
                                            {"mob", POLIS_FIELD_I32},
                                            {"row", POLIS_FIELD_I32},
                                            {"col", POLIS_FIELD_I32}};
    static const polis_field_def DEATH[4] = {{"agent", POLIS_FIELD_I32},
                                             {"cause", POLIS_FIELD_I32},
                                             {"row", POLIS_FIELD_I32},
                                             {"col", POLIS_FIELD_I32}};
    static const polis_field_def ATTACK[2] = {{"agent", POLIS_FIELD_I32},
                                              {"victim", POLIS_FIELD_I32}};
    static const polis_field_def PLACE[4] = {{"agent", POLIS_FIELD_I32},
                                             {"block", POLIS_FIELD_I32},
                                             {"row", POLIS_FIELD_I32},
                                             {"col", POLIS_FIELD_I32}};
    if ((st = h->event_type(ctx, "survival.achievement", ACH, 2, &s->ev_achievement)) ||
        (st = h->event_type(ctx, "survival.crafted", CRAFT, 22, &s->ev_crafted)) ||
        (st = h->event_type(ctx, "survival.mob_killed", KILL, 4, &s->ev_killed)) ||
        (st = h->event_type(ctx, "survival.death", DEATH, 4, &s->ev_death)) ||
        (st = h->event_type(ctx, "survival.attack", ATTACK, 2, &s->ev_attack)) ||
        (st = h->event_type(ctx, "survival.placed", PLACE, 4, &s->ev_placed)))
        return st;

    if ((st = h->hook(ctx, POLIS_PHASE_RESET, 0, on_reset, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_BEGIN, 0, on_begin, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_WORLD, 0, on_world, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_END, 0, on_end, s)) ||
        (st = h->hook(ctx, POLIS_PHASE_OBSERVE, 0, on_observe, s)))
        return st;
    if ((st = sv_register_looks(s))) return st;
    return sv_register_views(s);
}

static polis_status survival_init(const polis_host *h, polis_ctx *ctx, const void *params,
                                  void **state)
{
    survival *s = h->alloc(ctx, sizeof *s);
    if (!s) return POLIS_ERR_NOMEM;
    *state = s;
    s->h = h;
    s->ctx = ctx;
    s->n = h->n_agents(ctx);
    if (s->n < 1 || s->n > SV_MAX_PLAYERS) {
        h->error(ctx, "needs 1 to %d players (agents), the scenario has %d", SV_MAX_PLAYERS, s->n);
        return POLIS_ERR_CONFIG;
    }
    sv_params p;
    polis_status st = read_params(s, params, &p);
    if (st) return st;
    s->w_bytes = sv_world_bytes(&p);
    void *mem = h->alloc(ctx, s->w_bytes);
    s->legal = h->alloc(ctx, sizeof(uint32_t) * (size_t)s->n);
    s->seen = h->alloc(ctx, (size_t)s->n);
    s->ahead = h->alloc(ctx, sizeof *s->ahead);
    if (!mem || !s->legal || !s->seen || !s->ahead) {
        if (mem) h->free(ctx, mem, s->w_bytes);
        return POLIS_ERR_NOMEM;
    }
    s->w = sv_layout(mem, &p);
    if (!(s->vis = h->host_api(ctx, POLIS_VISIBILITY_API, 1))) return POLIS_ERR_PLUGIN;
    const polis_reset_ahead_api *ahead = h->host_api(ctx, POLIS_RESET_AHEAD_API, 1);
    if (!ahead) return POLIS_ERR_PLUGIN;
    if ((st = ahead->prepare(ctx, prepare_terrain, s))) return st;
    return register_all(s);
}

static void survival_destroy(polis_ctx *ctx, void *state)
{
    survival *s = state;
    if (!s) return;
    if (s->w) s->h->free(ctx, s->w, s->w_bytes);
    if (s->legal) s->h->free(ctx, s->legal, sizeof(uint32_t) * (size_t)s->n);
    if (s->seen) s->h->free(ctx, s->seen, (size_t)s->n);
    if (s->ahead) s->h->free(ctx, s->ahead, sizeof *s->ahead);
    sv_free_policies(s);
    sv_free_looks(s);
    s->h->free(ctx, s, sizeof *s);
}

/* ---- exports (scenarios and Lua: polis.call("survival.stat", agent, "health")) ----------- */

static int32_t stat_of(const sv_world *w, int32_t agent, const char *name)
{
    if (!w || agent < 0 || agent >= w->p.n_players || !name) return -1;
    const sv_player *pl = &w->players[agent];
    int32_t k;
    if (pick(name, sv_item_names, SV_N_ITEMS, &k)) return pl->inv[k];
    if (strcmp(name, "health") == 0) return pl->health;
    if (strcmp(name, "food") == 0) return pl->food;
    if (strcmp(name, "drink") == 0) return pl->drink;
    if (strcmp(name, "energy") == 0) return pl->energy;
    if (strcmp(name, "row") == 0) return pl->r;
    if (strcmp(name, "col") == 0) return pl->c;
    if (strcmp(name, "facing") == 0) return pl->dir;
    if (strcmp(name, "alive") == 0) return pl->alive;
    if (strcmp(name, "sleeping") == 0) return pl->sleeping;
    if (strcmp(name, "achievements") == 0) return (int32_t)pl->ach;
    if (strcmp(name, "crafts") == 0) return pl->crafts;
    if (strcmp(name, "crafts_with_others") == 0) return pl->crafts_others;
    if (strcmp(name, "crafts_own_table") == 0) return pl->crafts_own_table;
    if (strcmp(name, "crafts_other_table") == 0) return pl->crafts_other_table;
    if (strcmp(name, "crafts_furnace") == 0) return pl->crafts_furnace;
    if (strcmp(name, "crafts_own_furnace") == 0) return pl->crafts_own_furnace;
    if (strcmp(name, "crafts_other_furnace") == 0) return pl->crafts_other_furnace;
    return -1;
}

static int32_t ex_stat(polis_ctx *ctx, int32_t agent, const char *name)
{
    survival *s = polis_ctx_state(ctx);
    return stat_of(s->w, agent, name);
}

static int32_t ex_give(polis_ctx *ctx, int32_t agent, const char *item, int32_t amount)
{
    survival *s = polis_ctx_state(ctx);
    int32_t k;
    if (agent < 0 || agent >= s->n || !item || !pick(item, sv_item_names, SV_N_ITEMS, &k))
        return -1;
    int32_t *inv = &s->w->players[agent].inv[k];
    int64_t v = (int64_t)*inv + amount;
    *inv = v < 0 ? 0 : v > 9 ? 9 : (int32_t)v;
    return *inv;
}

static int32_t ex_block(polis_ctx *ctx, int32_t row, int32_t col)
{
    survival *s = polis_ctx_state(ctx);
    return sv_in_map(row, col) ? s->w->map[row][col] : SV_OUT_OF_BOUNDS;
}

static int32_t ex_active(polis_ctx *ctx, int32_t kind)
{
    survival *s = polis_ctx_state(ctx);
    return kind >= 0 && kind < SV_N_MOB_KINDS ? s->w->n_active[kind] : -1;
}

static const polis_export EXPORTS[] = {
    POLIS_EXPORT_FN(
        "stat", "i32(ctx,i32,str)", ex_stat,
        "a player's value by name: an item (wood, ..., iron_sword), health, food, drink, energy, "
        "row, col, facing, alive, sleeping, achievements (bit mask), crafts, crafts_with_others, "
        "crafts_own_table, crafts_other_table, crafts_furnace, crafts_own_furnace, "
        "crafts_other_furnace; -1 for a bad agent or name"),
    POLIS_EXPORT_FN(
        "give", "i32(ctx,i32,str,i32)", ex_give,
        "adds amount (may be negative) of an item to a player, kept in 0..9; the new count or -1"),
    POLIS_EXPORT_FN("block", "i32(ctx,i32,i32)", ex_block,
                    "the block id at (row, col); 1 (out of bounds) outside the map"),
    POLIS_EXPORT_FN(
        "active_mobs", "i32(ctx,i32)", ex_active,
        "active mobs of a kind (0 zombie, 1 cow, 2 skeleton, 3 arrow); -1 for a bad kind"),
};

static const polis_plugin_desc survival_desc = {
    POLIS_DESC_HEAD("survival", 7),
    .version = "1.0.0",
    .doc = "Craftax-Classic survival with many players (Multi-Agent Craftax)",
    POLIS_DESC_PARAMS(PARAMS, sv_cfg),
    .init = survival_init,
    .destroy = survival_destroy,
    POLIS_DESC_EXPORTS(EXPORTS),
};

POLIS_PLUGIN(survival_desc)
