/*
 * sv_world.c — the survival world's memory layout, defaults, names and generation
 * (README "World generation"; specs/survival.md §2).
 */
#include <math.h>
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

/* ---- generation ---------------------------------------------------------------------------- */

/* The terrain from the widest code this machine runs (the same map either way), then
 * everything else back to a new episode's start. */
void sv_generate(sv_world *w, polis_rng *rng)
{
    sv_generate_terrain(w, &w->map[0][0], rng);
    sv_generate_rest(w);
}

void sv_generate_terrain(const sv_world *w, uint8_t *m, polis_rng *rng)
{
    if (sv_terrain_avx2_ok())
        sv_terrain_avx2(m, rng, w->p.always_diamond);
    else
        sv_terrain(m, rng, w->p.always_diamond);
}

void sv_generate_rest(sv_world *w)
{
    memset(w->mob_map, 0, sizeof w->mob_map);
    memset(w->player_map, 0, sizeof w->player_map);
    memset(w->placed_by, 0xff, sizeof w->placed_by);
    for (int k = 0; k < SV_N_MOB_KINDS; k++) {
        memset(w->mobs[k], 0, sizeof(sv_mob) * (size_t)w->p.max_mobs[k]);
        w->n_active[k] = 0;
    }
    w->next_uid = 1;
    w->map_rows = ~UINT64_C(0); /* a new map: every row for the scene to draw */
    for (int k = 0; k < SV_N_MOB_KINDS; k++) w->mob_marks[k] = ~UINT64_C(0); /* every slot */
    w->scene_rows = w->take_rows = 0; /* the marks above hold everything */
    memset(w->scene_mob_marks, 0, sizeof w->scene_mob_marks);
    memset(w->take_mob_marks, 0, sizeof w->take_mob_marks);
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
        int32_t keep_scal[16];
        memcpy(keep_view, pl->obs_view, sizeof keep_view);
        memcpy(keep_scal, pl->obs_scal, sizeof keep_scal);
        memset(pl, 0, sizeof *pl);
        pl->obs_set = keep_set;
        pl->obs_dst = keep_dst;
        pl->obs_n = keep_n;
        memcpy(pl->obs_view, keep_view, sizeof keep_view);
        memcpy(pl->obs_scal, keep_scal, sizeof keep_scal);
        pl->r = SV_MAP / 2;
        pl->c = SV_MAP / 2;
        pl->dir = SV_UP;
        pl->alive = true;
        pl->health = pl->food = pl->drink = pl->energy = 9;
        w->player_map[SV_MAP / 2][SV_MAP / 2]++;
    }
}
