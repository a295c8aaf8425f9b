/*
 * internal.h — the society ruleset's internal state and the functions its files share.
 *
 *   society.c   plugin descriptor, parameters, init/start/destroy, exports, the service
 *   cfg.c       config nodes over two backends (scenario JSON, AdaSociety files), file loading
 *   content.c   resources, recipes and jobs: built-ins, definitions, freezing the tables
 *   setup.c     the world description (map, static and random content) from the config
 *   world.c     world generation at every reset
 *   rules.c     actions, legality, collision resolution, rewards, events
 *   observe.c   tensor observation fields
 *   render.c    JSON and text views, the action parser
 *
 * Geometry (README "Geometry"): positions are (x, y) with 0 <= x < W, 0 <= y < H on a torus;
 * x is the vertical axis (move_up is x-1) as in AdaSociety, and tensors are indexed [x][y].
 *
 * Names shared between the files start with soc_ / SOC_ (the social plugin's are sg_).
 */
#ifndef SOCIETY_INTERNAL_H
#define SOCIETY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "polis/plugin.h"
#include "polis/social.h"
#include "polis/society.h"

#define SOC_NAME_MAX 64 /* names are [a-z0-9_], 1 to 63 characters */
#define SOC_MAX_RESOURCES 256
#define SOC_MAX_RECIPES 1024
#define SOC_MAX_JOBS 256
#define SOC_MAX_FOV 1024
#define SOC_MAX_MAP 4096 /* largest width or height */
#define SOC_MAX_AMOUNT 1000000000
#define SOC_UNLIMITED INT32_MAX /* a capacity without limit */

/* ---- parameters --------------------------------------------------------------------------- */

typedef struct soc_params {
    const char *adasociety;
    bool builtin;
    const polis_json *resources;
    const polis_json *recipes;
    const polis_json *jobs;
    const polis_json *map;
    const polis_json *static_;
    const polis_json *random;
    int64_t max_length;
    const char *resources_in_play;
    const char *view;
    bool terminate_at_limit;
    int64_t pile_shown; /* the most units the grid shows on one pile (observe.c) */
    /* plans (plan.c) */
    int64_t plan_patience;      /* ticks in a row without progress before a plan gives up */
    int64_t plan_explore_ticks; /* EXPLORE's default length */
} soc_params;

enum { SOC_VIEW_WINDOW = 0, SOC_VIEW_MAP = 1 };

/* ---- config nodes --------------------------------------------------------------------------- */

/* A value of either the scenario's parameters (pj) or an AdaSociety file (cj). An absent
 * value still knows its path, so a chain of lookups is checked once at the end. */
typedef struct soc_node {
    const polis_json *pj;
    const cJSON *cj;
    const char *file; /* AdaSociety backend: the file, for messages */
    bool ada;         /* AdaSociety dialect: "__COMMENT__" keys, unknown keys tolerated */
    char path[200];
} soc_node;

/* ---- definitions (until start) --------------------------------------------------------------- */

typedef struct soc_ref {
    const char *name;
    int32_t n;
} soc_ref;

enum {
    SOC_LEVEL_BUILTIN = 0,
    SOC_LEVEL_ADASOCIETY = 1,
    SOC_LEVEL_SCENARIO = 2,
    SOC_LEVEL_RUNTIME = 3,
    SOC_LEVELS = 4
};
enum { SOC_DEF_RESOURCE = 0, SOC_DEF_RECIPE = 1 };

typedef struct soc_def {
    struct soc_def *next;
    int kind;
    int level;
    const char *name;
    double score;
    int synthetic; /* 0 or 1; -1: derived (some recipe outputs it) */
    soc_ref *req, *in, *out;
    int32_t n_req, n_in, n_out;
    const char *origin; /* where it was defined, for messages */
} soc_def;

typedef struct soc_block soc_block;

/* ---- frozen content ----------------------------------------------------------------------------
 */

typedef struct soc_amount {
    int32_t res; /* -1: a resource that is not in play (a requirement nobody can meet) */
    int32_t n;
} soc_amount;

typedef struct soc_resource {
    const char *name;
    double score;
    bool synthetic;
    int32_t req, n_req; /* into amounts */
} soc_resource;

typedef struct soc_recipe {
    const char *name;
    int32_t in, n_in, out, n_out, req, n_req; /* into amounts */
} soc_recipe;

typedef struct soc_job {
    const char *name;
    int32_t fov_h, fov_v; /* half-widths along x and y */
    int64_t size;         /* total units held; INT64_MAX without limit */
} soc_job;

/* ---- the world description ---------------------------------------------------------------------
 */

typedef struct soc_num {
    int32_t lo, hi; /* a uniform integer in [lo, hi] */
} soc_num;

typedef struct soc_place {
    int32_t what; /* resource, recipe or job */
    int32_t x, y; /* static entries */
    soc_num num;  /* piles */
} soc_place;

typedef struct soc_list {
    soc_place *v;
    int32_t n, cap;
} soc_list;

enum {
    SOC_RESERVED_PILE = 1,
    SOC_RESERVED_STATION = 2,
    SOC_RESERVED_PLAYER = 4,
    SOC_RESERVED_BLOCK = 8
};

/* ---- event payloads (fields in schema order) ------------------------------------------------ */

typedef struct soc_ev_moved {
    int32_t agent, from_x, from_y, x, y;
} soc_ev_moved;
typedef struct soc_ev_blocked {
    int32_t agent, x, y, to_x, to_y, reason;
} soc_ev_blocked;
typedef struct soc_ev_picked {
    int32_t agent, resource, x, y, amount, left;
} soc_ev_picked;
typedef struct soc_ev_dumped {
    int32_t agent, resource, x, y, amount, pile;
} soc_ev_dumped;
typedef struct soc_ev_produced {
    int32_t agent, recipe, x, y;
} soc_ev_produced;
typedef struct soc_ev_inventory {
    int32_t agent, resource, delta, amount;
} soc_ev_inventory;
typedef struct soc_ev_pile {
    int32_t x, y, resource, amount;
} soc_ev_pile;
typedef struct soc_ev_generated {
    int32_t blocks, piles, units, stations, agents;
} soc_ev_generated;

enum { SOC_BLOCKED_TERRAIN = 1, SOC_BLOCKED_OCCUPIED = 2, SOC_BLOCKED_CONTEST = 3 };

/* ---- the state
 * ----------------------------------------------------------------------------------- */

/* Cells marked once each: mark[cell] set while cell is in list[0 .. n) ([cells] each). */
typedef struct soc_marks {
    uint8_t *mark;
    int32_t *list, n;
} soc_marks;

typedef struct soc {
    const polis_host *h;
    polis_ctx *ctx;
    const polis_visibility_api *vis; /* who sees whom (docs/visibility.md) */
    soc_params p;
    int32_t n_agents;
    soc_block *arena;

    /* definitions, until start */
    soc_def *defs, *defs_tail;
    int32_t n_runtime_calls;
    polis_status def_status; /* the first failed runtime definition */
    char def_error[512];
    bool frozen;

    /* AdaSociety files, from init to start */
    cJSON *ada_main, *ada_task, *ada_job, *ada_resource, *ada_event;
    const char *ada_main_path, *ada_task_path, *ada_job_path, *ada_resource_path, *ada_event_path;
    /* an AdaSociety job.json named by the "jobs" parameter (a path) */
    cJSON *jobs_file;
    const char *jobs_file_path;

    /* content */
    int32_t R, K, J;
    soc_resource *res;
    soc_recipe *rec;
    soc_job *jobs;
    soc_amount *amounts;
    int32_t n_amounts, cap_amounts;
    int32_t *cap;  /* [J][R] capacity, SOC_UNLIMITED without limit */
    double *value; /* [J][R] unit value h * r̄ */
    int32_t *init; /* [J][R] initial inventory */

    /* the world description */
    int32_t W, H, cells;
    uint8_t *base;     /* [cells] base-map blocks */
    uint8_t *reserved; /* [cells] SOC_RESERVED_* of static content */
    int32_t n_base_blocks;
    soc_list st_blocks, st_piles, rnd_piles, st_stations, rnd_stations, st_players, rnd_players;
    int32_t random_blocks;
    int32_t n_st_pile_cells, n_st_station_cells, n_st_player_cells;
    int64_t max_length;
    int view;

    /* agents */
    int32_t *agent_job;
    int32_t *ax, *ay;
    int32_t *inv;       /* [n][R] */
    int64_t *inv_total; /* [n] */
    double *pending;    /* [n] value gained this step */

    /* grid */
    int32_t L_blocks, L_agents, L_recipes;
    int32_t *gcells; /* the kernel grid's cells, cached at reset */
    int32_t *piles;  /* [cells][R] */
    /* The most units of each resource the grid observation shows on one pile (observe.c;
     * params pile_shown): larger piles saturate. */
    int32_t *pile_obs; /* [R] */
    uint16_t *kinds;   /* [cells] resources with a pile on the cell */
    int32_t *scratch;  /* [cells] world generation */

    /* collision resolution */
    int32_t *tgt;    /* [n] target cell */
    uint8_t *moving; /* [n] */
    uint8_t *wants;  /* [n] asked to move this step */
    uint8_t *why;    /* [n] SOC_BLOCKED_* */
    uint8_t *dir;    /* [n] the direction asked */
    int32_t *losers; /* [n] */
    int32_t n_claim_keys;
    uint32_t epoch;
    uint32_t *blk_epoch, *claim_epoch;            /* [cells] */
    int32_t *claim_head, *claim_tail, *claim_len; /* [cells] */
    int32_t *claim_next;                          /* [n] */
    int32_t *claim_keys;                          /* [n] */
    int32_t *stack;                               /* [n + 1] */

    /* observations */
    int32_t A, B; /* grid field extent along x and y */
    int32_t hmax, vmax;
    int32_t *views; /* [n] self and sharers */
    uint8_t *seen;  /* [n][R + K] what each inventory lets its agent see (resources, then
                       recipes), refreshed whenever the inventory changes */
    const polis_social_api *social;

    /* ---- incremental observation writing (observe.c) ----
     * Each agent's grid record keeps what write_grid painted there last; the next write
     * clears only those elements (docs/performance-log.md, "Incremental observations"). */
    void **og_dst;    /* [n] the record the agent's last painting went into, NULL: none */
    int32_t *og_n;    /* [n] offsets listed in og_list; -1: too many, clear the record */
    int32_t *og_list; /* [n][og_cap] the elements painted (element offsets in the record) */
    int32_t og_cap;
    /* Every field is written in the dtype the buffer holds (host API "observations" version
     * 2, writes_stored): the grid i16, or one byte an element (u8 or i8) when compact
     * observations narrowed it (grid_w8); position and time i32, u8 or i16. Their ids, and
     * that dtype once asked (-1: not yet). */
    const polis_observations_api *obs_api;
    int32_t id_grid, id_pos, id_time, grid_dt, pos_dt, time_dt;
    bool grid_w8;
    bool self_overlap; /* a map-view window wraps onto itself (2 fov + 1 > W or H) */
    /* merged shared maps, when R, K <= 64 and the view is "map" */
    bool vis_bits;
    uint64_t *vis_res, *vis_rec; /* [n] seen as bit sets: resources, recipes */
    uint32_t *cov_stamp;         /* [A*B] cov_now: the cell is covered in this merge */
    uint32_t cov_now;
    uint64_t *cov_res, *cov_rec; /* [A*B] union of the covering owners' vis_res / vis_rec */
    int32_t *cov_at, *cov_cell;  /* [A*B] the covered cells in first-cover order */
    uint64_t *cov_cols;          /* [SOC_COV_GROUPS][W] coverage bits per grid column (H <= 64) */
    /* ---- merged views from per-pass caches (observe.c) ----
     * When owner sets repeat within a pass (a group sharing its maps), the union of a set's
     * windows is built once, in map coordinates, from a table of each cell's nonzero
     * elements, and every viewer with that set only shifts and stores it. Both are valid for
     * one observation pass (the OBSERVE hook starts the next): the world changes only
     * between passes. */
    uint32_t pt_pass;      /* observation passes so far */
    uint32_t pt_built;     /* the pass the table was built in (0: never) */
    int32_t *pt_start;     /* [cells + 1] each cell's elements in pt_el */
    struct soc_pel *pt_el; /* [pt_cap] */
    uint64_t *pt_need;     /* [cells][2] the cell's recipe and piled resources, as bits */
    int32_t *pt_part;      /* [cells][2] where the cell's recipe and pile elements start */
    int32_t pt_cap;        /* the most elements the map can hold; 0: no table, no slots
                              (view "window", or a map too large: observe.c) */
    uint32_t pf_built;     /* the pass the filtered table was built in (0: never) */
    uint64_t pf_res;       /* the vis it was filtered by: resources (bits) */
    uint64_t pf_rec;       /* and recipes (bits) */
    int32_t *pf_start;     /* [W*H + 1] by column (x H + y): each cell's elements in pf_el */
    struct soc_pel *pf_el; /* [pt_cap] the elements owners with that vis paint */
    struct soc_mview *mv;  /* [SOC_MV_SLOTS] merged views of this pass */
    uint32_t *mv_mark;     /* [n] owner marks for comparing owner sets */
    uint32_t mv_mark_now;
    bool mv_use;                 /* this pass paints from slots (else directly, as above) */
    int32_t mv_viewers, mv_hits; /* merged views in this pass; those repeating an owner set */
    /* ---- kept merged views (observe.c, "Kept merged views") ----
     * A slot outlives its pass: its coverage (per vis pair, a bit set per map column) is
     * brought to the next pass with the list of elements that changed (mv_track), and a
     * record that showed the slot at the previous pass is shifted by its viewer's move and
     * given those elements, not painted whole. Set up when the live views' copies of the
     * world are (lv_on), the map is at most 64 high and the slots exist. */
    bool mk_on;
    bool mk_same;         /* this pass: no map sharing changed since the previous one */
    bool mk_seq_ok;       /* mk_seq holds the sharing journal's position at the last pass */
    uint64_t mk_seq;      /* the journal's position at the last pass */
    int32_t *mk_slot;     /* [n] the slot v's record showed at mk_pass, -1: none */
    uint32_t *mk_gen;     /* [n] that slot's generation (a slot given another set changes it) */
    uint32_t *mk_pass;    /* [n] the pass v's record was written from the slot */
    int32_t *mk_x, *mk_y; /* [n] v's position then */
    uint64_t *mk_dcol;    /* [W] this pass: the cells whose content changed, per column */
    int32_t mk_tpl;       /* entries of a recipe template: the most amounts of a recipe */
    int32_t *mk_roff;     /* [K + 1][mk_tpl] each recipe's amounts: channel offsets */
    int16_t *mk_rval;     /* [K + 1][mk_tpl] and values (recipe K: none) */
    int32_t *mk_rn;       /* [K + 1] the recipe's amounts */
    uint32_t *mk_pstamp;  /* [cells] this pass: the cell's piles changed (lv_scan) */
    /* the live views' copies of what the world showed (lv_ag ... lv_pb) are compared with
     * the world once per pass (lv_scan), for the live views and the kept slots alike */
    bool lv_cok;       /* the copies held the world at pass lv_cpass */
    uint32_t lv_cpass; /* the pass of the last comparison */
    uint32_t lv_cdiff; /* == the pass: lv_dirty lists every cell changed since the previous */
    int32_t lv_nd;     /* cells in lv_dirty */
    int32_t *lv_dxy;   /* [cells] lv_dirty's cells as x << LV_Y_BITS | y */
    /* ---- live merged views (observe.c, "Live merged views") ----
     * Each agent's merged map view is kept up to date with what changed since the previous
     * observation pass: cells whose content changed, windows that moved or whose owner's
     * vis changed, owners that started or stopped sharing (the social service's sharing
     * journal). Set up when the view is "map", R, K <= 64 and the bit sets below fit. */
    bool lv_on;
    bool lv_active;              /* this pass keeps them (else paused: observe.c, lv_pass_start) */
    uint32_t lv_resume;          /* while paused: the pass they resume at */
    int32_t lv_n_inc, lv_n_full; /* records brought up to date, and painted whole, in */
    int32_t lv_passes;           /* the passes looked at so far */
    bool lv_synced;         /* false: rebuild everything at the next pass (reset, lost journal) */
    bool lv_journal;        /* the social service has the sharing journal (else no sharing) */
    uint32_t lv_sync_pass;  /* the pass of the last rebuild: every record is written whole */
    int32_t lv_words;       /* 64-bit words in a set of agents */
    uint64_t *lv_cover;     /* [cells][lv_words] the agents whose window covers the cell */
    uint64_t *lv_member;    /* [n][lv_words] v's owners: v and the agents sharing maps with v */
    uint64_t *lv_rev;       /* [n][lv_words] o's viewers: transposed lv_member */
    uint64_t *lv_tmp;       /* [lv_words] */
    uint64_t lv_seq;        /* the sharing journal's next change to read */
    uint32_t *lv_pass;      /* [n] the pass v's record was last brought up to date in */
    int32_t *lv_x, *lv_y;   /* [n] positions the views show (last pass) */
    int32_t *lv_ox, *lv_oy; /* [n] positions before this pass (when lv_ostamp is this pass) */
    uint64_t *lv_vres, *lv_vrec; /* [n] vis the views show; before this pass: lv_ovres/_ovrec */
    uint64_t *lv_ovres, *lv_ovrec;
    uint32_t *lv_ostamp;               /* [n] this pass: the agent moved or its vis changed */
    uint64_t lv_all_res, lv_all_rec;   /* every agent's vis together: a union stops growing there */
    uint64_t lv_min_res, lv_min_rec;   /* what every agent sees (vis in common) */
    int32_t *lv_ag, *lv_bl, *lv_rc;    /* [cells] the layers the views show */
    uint64_t *lv_pb;                   /* [cells] the piled resources the views show, as bits */
    int32_t *lv_oag, *lv_obl, *lv_orc; /* [cells] content before this pass (lv_cstamp) */
    uint64_t *lv_opb;
    uint32_t *lv_cstamp;      /* [cells] this pass: the cell's content changed */
    uint8_t *lv_pmark;        /* [cells] a pile changed since the last pass (soc_pile_add) */
    int32_t *lv_plist, lv_np; /* [cells] the marked cells */
    int32_t *lv_dirty;        /* [cells] the cells whose content changed this pass */
    int32_t *lv_head;         /* [n] v's first event this pass, -1: none */
    int32_t *lv_ev, *lv_next; /* [lv_cap] events: id * 4 + kind, and the next of the viewer */
    int32_t lv_cap, lv_nev;
    uint32_t *lv_full;           /* [n] this pass: v's events did not fit, repaint it whole */
    int64_t *lv_work;            /* [n] cells v's events this pass would write again */
    uint32_t *lv_vmark, lv_vtok; /* [n] == lv_vtok: an event of the viewer being written names o */
    uint64_t *lv_stable;         /* [lv_words] the viewer's owners no event of it names */
    int32_t *lv_nown;            /* [n] the owners in lv_member[v] */
    int16_t *lv_edge; /* [(2 + 2R) * max(W, H)] a shifted record's wrapping row or column */

    /* actions and events */
    int32_t act_move[4], act_produce;
    int32_t *act_pick, *act_dump; /* [R] */
    int32_t ev_moved, ev_blocked, ev_picked, ev_dumped, ev_produced, ev_inventory, ev_pile,
        ev_generated;

    /* the greedy baseline (policy.c) */
    double *g_gain;    /* [J][K] value of a recipe's outputs minus its inputs for the job */
    uint8_t *g_useful; /* [J][R] worth picking: valued, or an input of a gainful recipe */
    int8_t *g_heading; /* [n] exploration direction, -1: none */
    int16_t *g_left;   /* [n] steps before the heading is drawn again */
    int32_t *g_dist;   /* [window] BFS distance, -1 unseen */
    int8_t *g_first;   /* [window] first move of the shortest path */
    int32_t *g_queue;  /* [window] */
    int32_t g_win_h, g_win_v;
    /* greedy_shared and greedy_map: their searches cover the whole map */
    int32_t *g_mdist;     /* [cells] BFS distance, -1 unseen */
    int8_t *g_mfirst;     /* [cells] first move of the shortest path */
    int32_t *g_mqueue;    /* [cells] */
    int32_t *g_owners;    /* [n] the agent and those sharing their map with it */
    int32_t *g_cover;     /* [n] the owners whose windows hold the cell being looked at */
    int32_t *g_share_act; /* [n] share_map_<j>'s action id, -1: none (read at reset) */
    int32_t g_share_attr; /* the social graph's "sharing.Map" attribute, -1: no social plugin */

    /* AdaSociety's random baseline ("random_ada", policy.c) */
    int32_t ada_lo, ada_n; /* society's action ids are within [ada_lo, ada_lo + ada_n) */
    int32_t *ada_what;     /* [ada_n] soc_ada_legal's `what` of each id; -1: not society's */

    /* ---- plans (plan.c): the macro actions; full-map search arrays, sized at start ---- */
    int32_t *p_dist;  /* [cells] BFS distance, -1 not reached */
    int8_t *p_first;  /* [cells] first move of the shortest path */
    int32_t *p_queue; /* [cells] */

    polis_society_api api;

    /* looks (looks.c, ABI 1.5): kind ids, scene layers, the first inventory stat */
    int32_t kind_floor, kind_block, kind_res0, kind_station0, look_ground, look_stations, stat_res0;
    /* looks.c: the blocks and recipes the kept ground and station layers show, so a scene that
     * changed neither says so (the "scene" host API) instead of rewriting them */
    int32_t *shown_blocks, *shown_recipes;
    int32_t *shown_piles; /* [cells][R] what the kept piles show (looks.c); NULL: not kept */
    /* the cells whose piles changed (soc_pile_add) since either reader of the piles (the
     * env's scene, soc_scene; the copy's take, looks.c) read them, each once (kept piles only):
     * a reader that is not fresh looks only at these and at the cells the other reader left in
     * its own list (scene_own, take_own), for the rules mark only pile_marks */
    soc_marks pile_marks, scene_own, take_own;
    /* looks.c: the blocks and recipes the copy's take last sent ([cells] each; NULL: no copy) */
    int32_t *take_blocks, *take_recipes;
    const polis_scene_api *scene_api;
} soc;

/* ---- society.c ---------------------------------------------------------------------------------
 */

void *soc_alloc(soc *s, size_t size); /* arena memory, zeroed, freed at destroy */
char *soc_strdup(soc *s, const char *str);
/* A file name from the scenario's parameters, resolved against the scenario's directory
 * (absolute names are kept); arena memory. */
const char *soc_scenario_path(soc *s, const char *p);
void *soc_heap(soc *s, size_t size); /* env allocator, zeroed; freed by soc_heap_free */
void soc_heap_free(soc *s, void *p, size_t size);
bool soc_valid_name(const char *name);
polis_status soc_list_push(soc *s, soc_list *l, soc_place item);

/* ---- cfg.c ----------------------------------------------------------------------------------- */

soc_node soc_node_params(soc *s, const polis_json *pj);
soc_node soc_node_file(const cJSON *cj, const char *file);
int soc_kind(soc *s, const soc_node *n); /* -1 absent, 0 null, 1 bool, 2 number, 3 string,
                                            4 array, 5 object */
int32_t soc_len(soc *s, const soc_node *n);
soc_node soc_at(soc *s, const soc_node *n, int32_t i);
soc_node soc_get(soc *s, const soc_node *n, const char *key);
const char *soc_key(soc *s, const soc_node *n, int32_t i);
polis_status soc_int(soc *s, const soc_node *n, int64_t lo, int64_t hi, int64_t *out);
polis_status soc_double(soc *s, const soc_node *n, double lo, double hi, double *out);
polis_status soc_string(soc *s, const soc_node *n, const char **out);
polis_status soc_bool(soc *s, const soc_node *n, bool *out);
polis_status soc_fail(soc *s, const soc_node *n, const char *fmt, ...) POLIS_PRINTF(3, 4);
/* Refuses members not in `keys` (NULL-terminated) in the scenario dialect; the AdaSociety
 * dialect logs and ignores them. */
polis_status soc_check_keys(soc *s, const soc_node *n, const char *const *keys);
polis_status soc_want_object(soc *s, const soc_node *n);
polis_status soc_load_adasociety(soc *s, const char *main_path);
void soc_free_adasociety(soc *s);
/* Reads and parses a JSON file in AdaSociety's dialect (repeated keys allowed); errors name
 * the file (and line:column for bad JSON). */
polis_status soc_parse_json_file(soc *s, const char *path, cJSON **out);
/* Reads a whole regular file of at most SOC_FILE_MAX bytes into the env heap (NUL-terminated,
 * len + 1 bytes). POLIS_ERR_IO with *why set (a short reason) when the file is missing, is
 * not a regular file (a FIFO is never waited on, a device never read) or is too large. */
#define SOC_FILE_MAX ((size_t)64 << 20)
polis_status soc_read_file(soc *s, const char *path, char **out, size_t *len, const char **why);
/* A path named by an AdaSociety file, resolved like the files main.json names. */
const char *soc_resolve_ada_path(soc *s, const char *p);

/* ---- content.c ----------------------------------------------------------------------------------
 */

polis_status soc_define(soc *s, int kind, int level, const char *name, double score,
                        const char *req, const char *in, const char *out, const char *origin,
                        char *err, size_t err_size);
polis_status soc_content_build(soc *s);
int32_t soc_resource_find(const soc *s, const char *name);
int32_t soc_recipe_find(const soc *s, const char *name);
int32_t soc_job_find(const soc *s, const char *name);
/* Marks the resources in play and compacts the tables (resources_in_play "used"). */
polis_status soc_content_compact(soc *s, const uint8_t *used_res, const uint8_t *used_rec);
polis_status soc_jobs_build(soc *s);

/* ---- setup.c ------------------------------------------------------------------------------------
 */

polis_status soc_map_setup(soc *s);   /* init: size and base map */
polis_status soc_world_setup(soc *s); /* start: static and random content */

/* ---- world.c -----------------------------------------------------------------------------------
 */

polis_status soc_on_reset(polis_ctx *ctx, void *ud);
polis_status soc_on_reset_done(polis_ctx *ctx, void *ud);
#define SOC_LAST_PRIORITY 1000000000

/* ---- rules.c ------------------------------------------------------------------------------------
 */

bool soc_meets(const soc *s, int32_t agent, int32_t req, int32_t n_req);
void soc_refresh_seen(soc *s, int32_t agent);
bool soc_resource_visible(const soc *s, int32_t agent, int32_t r);
bool soc_recipe_visible(const soc *s, int32_t agent, int32_t k);
double soc_unit_value(const soc *s, int32_t agent, int32_t r);
polis_status soc_register_actions(soc *s);
polis_status soc_register_events(soc *s);
polis_status soc_on_begin(polis_ctx *ctx, void *ud);
polis_status soc_on_resolve(polis_ctx *ctx, void *ud);
polis_status soc_on_end(polis_ctx *ctx, void *ud);
polis_status soc_reward(polis_ctx *ctx, void *ud, float *out);
polis_status soc_give(soc *s, int32_t agent, int32_t r, int32_t delta, char *err, size_t n);
polis_status soc_set_pile(soc *s, int32_t x, int32_t y, int32_t r, int32_t amount, char *err,
                          size_t n);
void soc_pile_add(soc *s, int32_t cell, int32_t r, int32_t delta);
bool soc_action_legal(soc *s, int32_t agent, int32_t action_id);
/* Whether the agent could pick one more r (visible to it, within its capacities), wherever
 * the pile is; and whether it could run recipe k (visible, inputs held, results fit). */
bool soc_can_pick(const soc *s, int32_t agent, int32_t r);
bool soc_can_run(const soc *s, int32_t agent, int32_t k);
/* AdaSociety's mask of one of society's actions (spec §14.3), which the random_ada policy
 * plays: `what` is SOC_ADA_MOVE, SOC_ADA_PRODUCE, SOC_ADA_PICK + r or SOC_ADA_PICK + R + r
 * (dump r). */
enum { SOC_ADA_MOVE = 0, SOC_ADA_PRODUCE = 1, SOC_ADA_PICK = 2 };
bool soc_ada_legal(const soc *s, int32_t agent, int32_t what);

static inline int32_t soc_wrap(int32_t v, int32_t n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* observe.c: whether viewer may see agent target now (docs/visibility.md); every view of
 * another agent (the grid's agents channel, the text and JSON views, a plan's obstacles)
 * asks it. */
bool soc_sees(const soc *s, int32_t viewer, int32_t target);

static inline int32_t *soc_layer(const soc *s, int32_t layer, int32_t cell)
{
    return s->gcells + (size_t)layer * (size_t)s->cells + (size_t)cell;
}

/* ---- observe.c ---------------------------------------------------------------------------------
 */

polis_status soc_register_observations(soc *s);
/* Self and the agents sharing their map with `agent` (social service), self first. */
int32_t soc_views(soc *s, int32_t agent);
/* Refreshes agent's vis_res / vis_rec from its seen row (after soc_refresh_seen). */
void soc_seen_bits(soc *s, int32_t agent);
/* A pile of cell changed (soc_pile_add): the live merged views show it at the next pass. */
static inline void soc_obs_pile_changed(soc *s, int32_t cell)
{
    if (s->lv_pmark && !s->lv_pmark[cell]) {
        s->lv_pmark[cell] = 1;
        s->lv_plist[s->lv_np++] = cell;
    }
}

/* A pile of cell changed (soc_pile_add): the next scene and take put or clear its slots. */
static inline void soc_scene_pile_changed(soc *s, int32_t cell)
{
    soc_marks *m = &s->pile_marks;
    if (m->mark && !m->mark[cell]) {
        m->mark[cell] = 1;
        m->list[m->n++] = cell;
    }
}

/* ---- render.c ---------------------------------------------------------------------------------
 */

polis_status soc_register_renderers(soc *s);

/* ---- policy.c --------------------------------------------------------------------------------
 */

/* Sizes the greedy baseline's tables and registers the "greedy" policy (start, after the
 * observations, when the jobs and their fields of view are known). */
polis_status soc_register_policy(soc *s);
polis_status soc_greedy_action(soc *s, int32_t agent, int32_t *out_action);
/* Registers "random_ada", AdaSociety's random baseline (start, after the actions). */
polis_status soc_register_random_ada(soc *s);

/* A breadth-first search over nodes the caller numbers (the cells of a window for the
 * greedy baseline, of the whole map for plans). Nodes leave the queue nearest first; moves
 * are tried in rules.c's order (up, down, left, right), so ties go to the earlier move. */
typedef struct soc_bfs {
    int32_t *dist;  /* [nodes] -1: not reached; the caller sets -1 on every node it can reach */
    int8_t *first;  /* [nodes] the first move of the path found (0..3), -1 at the start */
    int32_t *queue; /* [nodes] */
    int32_t (*step)(void *ud, int32_t node, int32_t dir); /* the neighbour, -1: none/blocked */
    bool (*visit)(void *ud, int32_t node, int32_t dist, int32_t first); /* true stops; NULL */
    void *ud;
} soc_bfs;
void soc_bfs_run(const soc_bfs *b, int32_t start);

/* ---- plan.c ------------------------------------------------------------------------------------
 */

/* Registers the macros GATHER, CRAFT, EXPLORE, DUMP and GOTO (host->macro, ABI 1.2) and sizes
 * their search arrays; nothing on an older host. Start, after soc_register_policy. */
polis_status soc_register_plans(soc *s);
/* looks.c: kinds, layers, inventory stats and the scene (ABI 1.5; nothing on an older host).
 * Start, once the content is frozen. */
polis_status soc_register_looks(soc *s);

#endif
