/*
 * core.h — the survival game's core: Craftax-Classic's world and rules with MAC's many players
 * (README.md is the reference of the rules; specs/survival.md the source of every number).
 *
 * The core knows nothing of the kernel: a sv_world is one game (map, mobs, plants, players),
 * sv_generate() makes a new world, sv_step() runs one step for the actions in
 * players[i].act, sv_write_obs() and sv_legal() give an agent's observation and action mask.
 * Every random draw comes from the polis_rng passed in. survival.c wraps this as a polis
 * plugin; the tests drive it directly to check the rules on crafted states.
 *
 * Positions are (row, col), both 0..63: UP decreases the row, LEFT decreases the column.
 */
#ifndef SURVIVAL_CORE_H
#define SURVIVAL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "polis/rng.h"

#define SV_MAP 64
#define SV_VIEW_ROWS 7
#define SV_VIEW_COLS 9
#define SV_VIEW_CELLS (SV_VIEW_ROWS * SV_VIEW_COLS)
#define SV_MAX_PLAYERS 256
#define SV_MAX_MOBS 64 /* per kind */
#define SV_MAX_PLANTS 1024
#define SV_LIGHT_TABLE 1024 /* longest day whose light levels are tabulated */

enum sv_block {
    SV_INVALID = 0,
    SV_OUT_OF_BOUNDS = 1,
    SV_GRASS = 2,
    SV_WATER = 3,
    SV_STONE = 4,
    SV_TREE = 5,
    SV_WOOD = 6,
    SV_PATH = 7,
    SV_COAL = 8,
    SV_IRON = 9,
    SV_DIAMOND = 10,
    SV_TABLE = 11,
    SV_FURNACE = 12,
    SV_SAND = 13,
    SV_LAVA = 14,
    SV_PLANT = 15,
    SV_RIPE_PLANT = 16,
    SV_N_BLOCKS = 17
};

enum sv_action {
    SV_NOOP = 0,
    SV_LEFT = 1,
    SV_RIGHT = 2,
    SV_UP = 3,
    SV_DOWN = 4,
    SV_DO = 5,
    SV_SLEEP = 6,
    SV_PLACE_STONE = 7,
    SV_PLACE_TABLE = 8,
    SV_PLACE_FURNACE = 9,
    SV_PLACE_PLANT = 10,
    SV_MAKE_WOOD_PICKAXE = 11,
    SV_MAKE_STONE_PICKAXE = 12,
    SV_MAKE_IRON_PICKAXE = 13,
    SV_MAKE_WOOD_SWORD = 14,
    SV_MAKE_STONE_SWORD = 15,
    SV_MAKE_IRON_SWORD = 16,
    SV_N_ACTIONS = 17
};

enum sv_achievement {
    SV_ACH_COLLECT_WOOD = 0,
    SV_ACH_PLACE_TABLE,
    SV_ACH_EAT_COW,
    SV_ACH_COLLECT_SAPLING,
    SV_ACH_COLLECT_DRINK,
    SV_ACH_MAKE_WOOD_PICKAXE,
    SV_ACH_MAKE_WOOD_SWORD,
    SV_ACH_PLACE_PLANT,
    SV_ACH_DEFEAT_ZOMBIE,
    SV_ACH_COLLECT_STONE,
    SV_ACH_PLACE_STONE,
    SV_ACH_EAT_PLANT,
    SV_ACH_DEFEAT_SKELETON,
    SV_ACH_MAKE_STONE_PICKAXE,
    SV_ACH_MAKE_STONE_SWORD,
    SV_ACH_WAKE_UP,
    SV_ACH_PLACE_FURNACE,
    SV_ACH_COLLECT_COAL,
    SV_ACH_COLLECT_IRON,
    SV_ACH_COLLECT_DIAMOND,
    SV_ACH_MAKE_IRON_PICKAXE,
    SV_ACH_MAKE_IRON_SWORD,
    SV_N_ACHIEVEMENTS = 22
};

enum sv_item {
    SV_INV_WOOD = 0,
    SV_INV_STONE,
    SV_INV_COAL,
    SV_INV_IRON,
    SV_INV_DIAMOND,
    SV_INV_SAPLING,
    SV_INV_WOOD_PICKAXE,
    SV_INV_STONE_PICKAXE,
    SV_INV_IRON_PICKAXE,
    SV_INV_WOOD_SWORD,
    SV_INV_STONE_SWORD,
    SV_INV_IRON_SWORD,
    SV_N_ITEMS = 12
};

enum sv_mob_kind { SV_ZOMBIE = 0, SV_COW = 1, SV_SKELETON = 2, SV_ARROW = 3, SV_N_MOB_KINDS = 4 };

/* Why a player died (the last harm before health reached 0). */
enum sv_cause {
    SV_CAUSE_NONE = 0,
    SV_CAUSE_ZOMBIE,
    SV_CAUSE_ARROW,
    SV_CAUSE_LAVA,
    SV_CAUSE_NEEDS, /* starving, thirsty or exhausted */
    SV_CAUSE_PLAYER,
    SV_N_CAUSES
};

/* How contested tiles are settled when several players DO or place on one tile. */
enum sv_tie_break { SV_TIE_INTENDED = 0, SV_TIE_REFERENCE = 1 };
/* Quirk Q1 (spec §5.3, §11.6): inactive mob slots with health left drift and come back */
enum sv_ghost { SV_GHOST_OFF = 0, SV_GHOST_ON_DO = 1, SV_GHOST_EVERY_STEP = 2 };

/* Observation layouts (README "Observations"). */
enum sv_obs_layout { SV_OBS_CLASSIC = 0, SV_OBS_MAC = 1, SV_OBS_SHARE_STATS = 2 };

enum sv_reward_mode { SV_REWARD_INDIVIDUAL = 0, SV_REWARD_SHARED_MEAN, SV_REWARD_SHARED_SUM };

/* Which axis a skeleton heads along: its target's major axis, or MAC's code (the target's
 * |d| compared with the largest |d| over every player: the row axis when another player is
 * farther). */
enum sv_skeleton_axis { SV_AXIS_TARGET = 0, SV_AXIS_ALL_PLAYERS = 1 };
/* How placed saplings take growing-plant slots: the next free slot in player order, or MAC's
 * code (the first free slot + the player's index, over a used slot if so; the last player's
 * sapling takes every slot from there to the end). */
enum sv_plant_slots { SV_SLOTS_NEXT_FREE = 0, SV_SLOTS_REFERENCE = 1 };

typedef struct sv_params {
    int32_t n_players;
    int32_t day_length;
    bool always_diamond;
    int32_t zombie_health, cow_health, skeleton_health;
    int32_t despawn_distance;
    float spawn_cow_chance, spawn_zombie_base_chance, spawn_zombie_night_chance,
        spawn_skeleton_chance;
    int32_t max_mobs[SV_N_MOB_KINDS]; /* zombies, cows, skeletons, arrows */
    int32_t max_plants;
    bool god_mode;
    bool count_scaled_damage;    /* damage from sword counts (Craftax) or from the best tier */
    int32_t tie_break;           /* sv_tie_break */
    bool place_on_players;       /* placement may cover a living player's tile (MAC quirk) */
    bool unclamped_health;       /* MAC: no lava rule, health may go negative */
    int32_t ghost_mobs;          /* sv_ghost */
    int32_t skeleton_axis;       /* sv_skeleton_axis */
    int32_t plant_slots;         /* sv_plant_slots */
    bool faced_sapling_resets;   /* MAC: a growing plant any player faces (unless it hit a mob)
                                    starts its 600 steps again, every step */
    bool eaten_plant_stays_ripe; /* MAC: eating a ripe plant leaves it ripe */
    bool shared_sapling_draw;    /* MAC (older code): one draw per step for every DO on grass */
    bool edge_wraps;             /* Craftax: lava across the top/left edge kills a player moving
                                    off the map there */
    bool slot0_kill_credit;      /* MAC: when the mob in slot 0 of a kind dies, every player that
                                    hit no mob of that kind this step is credited with the kill */
    int32_t obs_layout;          /* sv_obs_layout */
    int32_t reward_mode;         /* sv_reward_mode */
    bool pvp;                    /* DO on another living player attacks it (seeds/003) */
    int32_t pvp_damage;          /* health the victim loses per hit */
    int32_t pvp_heal_halves;     /* attacker's health gain per hit, in half points */
    float pvp_attack_reward, pvp_attacked_penalty;
    float prox_bonus;    /* proximity bonus weight (seeds/003 Fig. 7b); 0: off */
    int32_t prox_radius; /* who counts as near for the bonus: -1 the view window (as the
                            proximity statistic), r >= 0 max(|dr|, |dc|) <= r */
    float weights[SV_N_ACHIEVEMENTS];
} sv_params;

typedef struct sv_mob {
    int32_t r, c;
    int32_t health;
    int32_t cooldown;
    int32_t dr, dc; /* arrows: direction */
    bool active;
    int32_t uid; /* from w->next_uid when the slot last became active: never reused in an
                    episode, so a new mob in a dead one's slot is told apart (looks.c) */
} sv_mob;

typedef struct sv_plant {
    int32_t r, c; /* r = -1: a slot not used (only with plant_slots "reference") */
    int32_t age;
} sv_plant;

/* The tables and furnaces among a crafter's 8 neighbours (row by row: NW, N, NE, W, E, SW, S,
 * SE), each by the player who placed it (-1: nobody, e.g. a script). */
typedef struct sv_stations {
    int16_t tables[8], furnaces[8];
    int8_t n_tables, n_furnaces;
} sv_stations;

typedef struct sv_player {
    int32_t r, c;
    int32_t dir; /* SV_LEFT..SV_DOWN */
    bool sleeping;
    bool alive;
    int32_t health, food, drink, energy;
    float recover, hunger, thirst, fatigue;
    int32_t heal_halves; /* PvP half points of health not yet whole */
    int32_t inv[SV_N_ITEMS];
    uint32_t ach; /* bit k: achievement k unlocked this episode */
    /* per step */
    int32_t act;                /* chosen action, SV_NOOP..; the plugin's handlers write it */
    int32_t health0;            /* health at step start */
    uint32_t ach0;              /* achievements at step start */
    bool alive0;                /* alive at step start */
    int32_t pvp_hits, pvp_hurt; /* successful PvP hits given / taken this step */
    uint32_t hit_kinds;         /* bit k: its DO hit a mob of kind k this step */
    bool off_edge;              /* edge_wraps: it stepped off the map into wrapped lava this step */
    sv_stations near;           /* its craft this step (SV_NOTE_CRAFT): every station beside it */
    int32_t cause;              /* sv_cause of the last harm */
    float reward;               /* this step's reward (after the reward mode) */
    /* counters for metrics (this episode). Every craft needs a table; the iron tools also a
     * furnace. A craft counts as "own" when a station of that kind among the crafter's 8
     * neighbours was placed by the crafter (MAC's tracker), as "other" when one was placed by
     * another player; with both beside it, it counts as both. */
    int32_t crafts, crafts_others; /* crafts, and those with another player's station beside */
    int32_t crafts_own_table, crafts_other_table;
    int32_t crafts_furnace, crafts_own_furnace, crafts_other_furnace;
    int32_t pvp_hits_total; /* PvP hits given this episode */
    int32_t n_near;         /* prox_bonus on: other living players near it after this step */
    float prox_bonus_total; /* proximity bonus received this episode (before reward_mode) */
    /* incremental observation: the buffer written last (NULL: none), its view cells' block
     * ids and the mob and player marks it set */
    void *obs_dst;
    uint8_t obs_view[64]; /* SV_VIEW_CELLS used, padded for word compares */
    int32_t obs_scal[16]; /* the inventory and health, food, drink, energy it wrote */
    int32_t obs_n;
    uint16_t *obs_set;
} sv_player;

/* Something a step did that the plugin turns into bus events. */
typedef enum sv_note_kind {
    SV_NOTE_ACHIEVEMENT = 0, /* a = achievement */
    SV_NOTE_CRAFT,           /* a = action, b = table owner, c = furnace owner (-1 none; another
                                player's station when there is one); the player's `near` has
                                every station */
    SV_NOTE_KILL,            /* a = mob kind */
    SV_NOTE_DEATH,           /* a = cause */
    SV_NOTE_ATTACK,          /* a = victim player */
    SV_NOTE_PLACE,           /* a = block, b = row, c = col */
} sv_note_kind;

typedef struct sv_note {
    int32_t kind, player, a, b, c;
} sv_note;

typedef struct sv_world {
    sv_params p;
    int32_t timestep;
    float light;
    uint8_t map[SV_MAP][SV_MAP];
    uint64_t map_rows; /* bit r: row r of map written (sv_set_block) since the scene or the scene
                          copy's take last read it (looks.c clears it); all set by sv_generate */
    uint16_t mob_map[SV_MAP][SV_MAP];   /* 0, or (kind << 8 | slot) + 1 for zombie/cow/skeleton */
    uint8_t player_map[SV_MAP][SV_MAP]; /* living players on the tile */
    int16_t placed_by[SV_MAP][SV_MAP];  /* table/furnace owner, -1 none */
    sv_mob *mobs[SV_N_MOB_KINDS];       /* [max_mobs[kind]] each */
    int32_t n_active[SV_N_MOB_KINDS];
    /* bit q of [kind]: mob slot q appeared, moved or went (sv_mark_mob) since the scene or the
     * take last read it (looks.c visits only these, and clears them); all set by
     * sv_generate_rest */
    uint64_t mob_marks[SV_N_MOB_KINDS];
    /* looks.c's: the marks above that the take read and the scene has not (scene_*), and the
     * marks the scene read and the take has not (take_*); the rules never touch them */
    uint64_t scene_rows, take_rows;
    uint64_t scene_mob_marks[SV_N_MOB_KINDS], take_mob_marks[SV_N_MOB_KINDS];
    int32_t next_uid; /* the next mob's uid: 1 after the reset, counting every kind */
    sv_plant *plants; /* [max_plants] */
    int32_t n_plants; /* slots 0..n_plants-1 are (or, with plant_slots "reference", may be) used */
    float sapling_draw;    /* shared_sapling_draw: this step's draw, < 0 before it is made */
    int32_t free_slot;     /* plant_slots "reference": the first free slot as placements start */
    uint32_t slot0_killed; /* bit k: the mob in slot 0 of kind k was killed this step */
    sv_player *players;
    /* proximity (seeds/003 Fig. 7a): for each pair i < j, at [sv_pair(i, j, n)], the steps of
     * this episode after which both were alive and in each other's view (sv_in_view); their
     * sum. Row i has sv_pad8(n) entries; those at j <= i stay 0. */
    int32_t *prox_pairs; /* [n x sv_pad8(n)] */
    int64_t prox_sum;
    int32_t *prox_r, *prox_c; /* [sv_pad8(n)] scratch: rows (far off when dead or padding) and
                                 columns of the players */
    /* scratch */
    int32_t *order; /* [n_players] */
    int32_t *saved; /* [n_players] */
    sv_note *notes; /* [note_cap] */
    int32_t n_notes, note_cap;
    float *light_of; /* [n_light]: sv_light(t) for t in 0..day_length-1, when day_length is at
                        most SV_LIGHT_TABLE (one cosine a step otherwise) */
    int32_t n_light;
    int64_t gen_ns; /* not used by the core; the plugin may time generation */
    /* who sees whom (docs/visibility.md), set by the plugin before a step: NULL while nothing
     * is hidden, else whether player o sees player t now. A player's DO never attacks (PvP)
     * a player it does not see: it acts on the tile as if nobody stood there. */
    bool (*sees)(void *ud, int32_t o, int32_t t);
    void *sees_ud;
} sv_world;

/* Bytes the world needs beyond its struct, for one allocation: sv_layout() places the
 * arrays in `mem` (sv_world_bytes(p) bytes, zeroed) and returns the world. */
size_t sv_world_bytes(const sv_params *p);
sv_world *sv_layout(void *mem, const sv_params *p);

void sv_params_default(sv_params *p, int32_t n_players);

/* A new world: terrain from noise, players at the centre, no mobs. */
void sv_generate(sv_world *w, polis_rng *rng);
/* sv_generate in two halves: the terrain into m (the one that draws from rng: what a reset
 * made ahead prepares, survival.c), and everything else on a world whose map is set. */
void sv_generate_terrain(const sv_world *w, uint8_t *m, polis_rng *rng);
void sv_generate_rest(sv_world *w);
/* The terrain alone (sv_terrain.c): the blocks of a new map into m[SV_MAP * SV_MAP]. The
 * AVX2 build of the same code (sv_terrain_avx2.c) gives the same map and the same draws;
 * sv_terrain_avx2_ok() says whether this build has it and this CPU runs it (otherwise
 * sv_terrain_avx2 is sv_terrain). sv_generate takes the AVX2 one when it can. */
void sv_terrain(uint8_t *m, polis_rng *rng, bool always_diamond);
void sv_terrain_avx2(uint8_t *m, polis_rng *rng, bool always_diamond);
bool sv_terrain_avx2_ok(void);
/* One step for the actions in players[].act (any value outside 0..16 is NOOP). */
void sv_step(sv_world *w, polis_rng *rng);

float sv_light(int32_t t, int32_t day_length);

/* Proximity. Two players are in each other's view when both are alive and each stands in the
 * other's 7 x 9 view window: |dr| <= 3 and |dc| <= 4 (the window is symmetric, so one test
 * serves both ways). This is where MAC's code draws another player in the other-players
 * channel and in ShareStats' others: its view cell (dr + 3, dc + 4) is inside the window and
 * the player is alive. It is geometry only: what an observation form leaves out does not
 * change it. */
static inline bool sv_in_view(const sv_player *a, const sv_player *b)
{
    int32_t dr = a->r - b->r, dc = a->c - b->c;
    return a->alive && b->alive && dr >= -SV_VIEW_ROWS / 2 && dr <= SV_VIEW_ROWS / 2 &&
           dc >= -SV_VIEW_COLS / 2 && dc <= SV_VIEW_COLS / 2;
}
/* n rounded up to a multiple of 8, and the index of pair i < j of n players in prox_pairs. */
static inline int32_t sv_pad8(int32_t n) { return (n + 7) & ~7; }
static inline int32_t sv_pair(int32_t i, int32_t j, int32_t n) { return i * sv_pad8(n) + j; }
/* The share of this episode's steps after which players i != j were in each other's view, and
 * the mean of that share over every pair; -1 before the first step or with one player. */
double sv_proximity(const sv_world *w, int32_t i, int32_t j);
double sv_proximity_mean(const sv_world *w);
static inline bool sv_in_map(int32_t r, int32_t c)
{
    return (uint32_t)r < SV_MAP && (uint32_t)c < SV_MAP;
}

/* WATER STONE TREE COAL IRON DIAMOND TABLE FURNACE PLANT RIPE_PLANT block movement */
/* Every write of a block after generation: the block, and its row noted for the scene, which
 * redraws only the rows noted (w->map_rows). */
static inline void sv_set_block(sv_world *w, int32_t r, int32_t c, int32_t block)
{
    _Static_assert(SV_MAP <= 64, "a row per bit of map_rows");
    w->map[r][c] = (uint8_t)block;
    w->map_rows |= UINT64_C(1) << r;
}

/* Every change of a mob slot's activity, uid or place: noted for the scene, which visits
 * only the slots noted (w->mob_marks). */
static inline void sv_mark_mob(sv_world *w, int32_t kind, int32_t slot)
{
    _Static_assert(SV_MAX_MOBS <= 64, "a mob slot per bit of mob_marks");
    w->mob_marks[kind] |= UINT64_C(1) << slot;
}

static inline bool sv_solid(int32_t block) { return (0x19F38u >> block) & 1u; }

int32_t sv_damage(const sv_world *w, const sv_player *pl);

/* Bit j set when row[j] == block / when the mob slot row[j] is 0, over a row of SV_MAP; bit j
 * set when a[j] != b[j], over 64 bytes. The passes that draw only on some tiles (generation,
 * spawning) and the observation writer visit these bits in order instead of branching on
 * every tile (a branch on the map's content mispredicts often). Inline: the step calls them
 * a few times, and each is a few instructions. */
static inline uint64_t sv_row_is(const uint8_t *row, uint8_t block)
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

static inline uint64_t sv_row_free(const uint16_t *row)
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

static inline uint64_t sv_bytes_differ(const uint8_t *a, const uint8_t *b)
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
/* The set bits of x. The build targets any x86-64, without the POPCNT instruction, where
 * __builtin_popcountll is a call into libgcc's table-driven routine. */
static inline int32_t sv_popcount(uint64_t x)
{
#if defined(__POPCNT__) || !defined(__x86_64__)
    return __builtin_popcountll(x);
#else
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int32_t)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* Observation floats per agent for a layout: the main vector, and ShareStats' others block. */
int32_t sv_obs_len(int32_t layout);
int32_t sv_obs_channels(int32_t layout);
int32_t sv_others_len(int32_t n_players);
/* Writes the agent's main vector into dst (sv_obs_len floats); incremental when dst is the
 * buffer it wrote last time. */
/* seen: NULL, or [n_players] flags of the players `agent` may see (docs/visibility.md) */
void sv_write_obs(sv_world *w, int32_t agent, float *dst, const uint8_t *seen);
void sv_write_others(const sv_world *w, int32_t agent, float *dst, const uint8_t *seen);
/* The action mask as bits (bit a = action a can apply now; bit 0 always set). */
uint32_t sv_legal(const sv_world *w, int32_t agent);
/* The mask as `agent` may know it (docs/visibility.md): players it does not see (seen[j] == 0;
 * seen NULL: it sees every player) neither make DO legal (PvP) nor block a placement. The
 * world still has them: a placement onto a hidden player's tile does nothing. */
uint32_t sv_legal_seen(const sv_world *w, int32_t agent, const uint8_t *seen);
/* Whether a living player stands on (r, c) among those flagged in seen (NULL: any). */
bool sv_player_on(const sv_world *w, int32_t r, int32_t c, const uint8_t *seen);
/* Whether placement action a can be done by pl now; seen as sv_legal_seen's (NULL: the
 * world's own test). */
bool sv_place_ok(const sv_world *w, const sv_player *pl, int32_t a, const uint8_t *seen);
/* The placement actions pl can do now, as bits 1 << action (sv_place_ok for all four). */
uint32_t sv_place_bits(const sv_world *w, const sv_player *pl, const uint8_t *seen);

extern const char *const sv_action_names[SV_N_ACTIONS];
extern const char *const sv_achievement_names[SV_N_ACHIEVEMENTS];
extern const char *const sv_block_names[SV_N_BLOCKS];
extern const char *const sv_item_names[SV_N_ITEMS];
extern const char *const sv_cause_names[SV_N_CAUSES];
extern const char *const sv_mob_names[SV_N_MOB_KINDS];

#endif
