/*
 * polis/types.h — types shared by the embedding API (polis.h and the headers it includes) and
 * the plugin ABI (plugin.h).
 *
 * Everything here is part of plugin ABI major version 1. Enumerations only ever grow at the
 * end; existing values never change meaning.
 */
#ifndef POLIS_TYPES_H
#define POLIS_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Around the declarations of a public header of a polis library (polis/env.h, vec.h, ...):
 * C linkage from C++, and default visibility, since libpolis, libpolis-record and
 * libpolis-pixels are built with hidden visibility and export exactly what their headers
 * declare. */
#if defined(__GNUC__)
#define POLIS_VISIBLE_BEGIN _Pragma("GCC visibility push(default)")
#define POLIS_VISIBLE_END _Pragma("GCC visibility pop")
#else
#define POLIS_VISIBLE_BEGIN
#define POLIS_VISIBLE_END
#endif
#ifdef __cplusplus
#define POLIS_API_BEGIN                                                                            \
    extern "C" {                                                                                   \
    POLIS_VISIBLE_BEGIN
#define POLIS_API_END                                                                              \
    POLIS_VISIBLE_END                                                                              \
    }
#else
#define POLIS_API_BEGIN POLIS_VISIBLE_BEGIN
#define POLIS_API_END POLIS_VISIBLE_END
#endif

/* printf-style checking of a function's format (argument a) and its arguments (from b);
 * plugin.h defines the same. */
#ifndef POLIS_PRINTF
#if defined(__GNUC__)
#define POLIS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define POLIS_PRINTF(a, b)
#endif
#endif

/* Status codes. Every fallible call returns one; the env keeps the message. */
typedef enum polis_status {
    POLIS_OK = 0,
    POLIS_ERR_INVALID = 1, /* a bad argument from the caller (NULL, out of range, wrong name) */
    POLIS_ERR_NOMEM = 2,   /* the allocator returned NULL */
    POLIS_ERR_CONFIG = 3,  /* the scenario (or a parameter) is wrong; message has the JSON path */
    POLIS_ERR_PLUGIN = 4,  /* a .so plugin could not be loaded or its init failed */
    POLIS_ERR_SCRIPT = 5,  /* a Lua script failed: error, instruction budget, memory cap */
    POLIS_ERR_STATE = 6,   /* wrong lifecycle: step before reset, step after the episode ended */
    POLIS_ERR_IO = 7,      /* a file could not be read */
    POLIS_ERR_LIMIT = 8,   /* a preallocated capacity was exceeded (entities, event queue), or
                            * a scenario needs more memory than its cap */
    POLIS_ERR_ACTION = 9,  /* an action id outside [0, n_actions) */
    POLIS_ERR_FFI = 10     /* a foreign call or signature was refused */
} polis_status;

/* Element types of observation fields. */
typedef enum polis_dtype {
    POLIS_DTYPE_U8 = 0,
    POLIS_DTYPE_I8 = 1,
    POLIS_DTYPE_I16 = 2,
    POLIS_DTYPE_I32 = 3,
    POLIS_DTYPE_F32 = 4
} polis_dtype;

/* Field types of bus events (and of foreign-call signatures, see plugin.h). */
typedef enum polis_ftype {
    POLIS_FIELD_I32 = 0,
    POLIS_FIELD_I64 = 1,
    POLIS_FIELD_F32 = 2,
    POLIS_FIELD_F64 = 3
} polis_ftype;

/* Tick phases, in the order one step runs them (DESIGN.md "ticks"). RESET runs once per
 * reset, after the kernel cleared entities and the grid, before the first observation. */
typedef enum polis_phase {
    POLIS_PHASE_RESET = 0,   /* world generation */
    POLIS_PHASE_BEGIN = 1,   /* pre-step hooks; may choose the acting agents and their order */
    POLIS_PHASE_RESOLVE = 2, /* after every action handler ran: conflict resolution (moves) */
    POLIS_PHASE_WORLD = 3,   /* world update systems: regrowth, mobs, day/night */
    POLIS_PHASE_POST = 4,    /* post-step hooks */
    POLIS_PHASE_END = 5,     /* after rewards: termination and truncation decisions */
    POLIS_PHASE_OBSERVE = 6, /* just before observations and masks are written */
    POLIS_PHASE_COUNT = 7
} polis_phase;

/* An entity id: generation in the high 32 bits, slot index in the low 32 bits. 0 is never a
 * valid entity. An id goes stale when its entity is destroyed or the env is reset. */
typedef uint64_t polis_entity;
#define POLIS_ENTITY_NONE ((polis_entity)0)
#define POLIS_ENTITY_INDEX(e) ((uint32_t)((e)&0xffffffffu))
#define POLIS_ENTITY_GEN(e) ((uint32_t)((e) >> 32))

/* A bus event as subscribers see it. `data` points at the payload laid out as the C struct
 * of the event's fields (natural alignment, in schema order); it is borrowed for the call. */
typedef struct polis_event {
    int32_t type;     /* event type id */
    int32_t reserved; /* 0 */
    int64_t tick;     /* the env tick at publication */
    uint64_t seq;     /* publication sequence number within the env, from 0 at create */
    const void *data;
} polis_event;

/* A bus field as declared by a publisher. */
typedef struct polis_field_def {
    const char *name;
    polis_ftype type;
} polis_field_def;

/* The env's per-agent arrays, rows in agent order. Valid after create until destroy. */
typedef struct polis_io {
    int32_t n_agents;
    int32_t n_actions;
    size_t obs_size;       /* bytes of one agent's observation record */
    uint8_t *obs;          /* [n_agents][obs_size] */
    uint8_t *masks;        /* [n_agents][n_actions], 1 = legal */
    int32_t *actions;      /* [n_agents], read by step */
    float *rewards;        /* [n_agents] */
    uint8_t *terminations; /* [n_agents] */
    uint8_t *truncations;  /* [n_agents] */
    uint8_t *illegal;      /* [n_agents], 1 = last action was illegal (a no-op) */
} polis_io;

/* Where a plan (macro action, polis_env_plan_next / polis_macro_def) stands after a tick. */
typedef enum polis_plan_state {
    POLIS_PLAN_RUNNING = 0,    /* the plan chose the agent's action for this tick */
    POLIS_PLAN_DONE = 1,       /* the goal is reached; the reason says what was achieved */
    POLIS_PLAN_IMPOSSIBLE = 2, /* the goal cannot be reached (any more); the reason says why */
} polis_plan_state;

/* ---- looks and scenes (plugin ABI 1.5, docs/kernel.md "Looks and scenes") -------------------- */

/* How the viewer and the renderer draw a kind of tile or thing. */
typedef enum polis_shape {
    POLIS_SHAPE_SQUARE = 0, /* fills the cell */
    POLIS_SHAPE_CIRCLE = 1,
    POLIS_SHAPE_TRIANGLE = 2,
    POLIS_SHAPE_DIAMOND = 3,
    POLIS_SHAPE_CROSS = 4,
    POLIS_SHAPE_DOT = 5,
    POLIS_SHAPE_AGENT = 6 /* a circle with a facing mark */
} polis_shape;

/* Fixed sizes of a scene's strings, NUL included. A longer string is refused (POLIS_ERR_LIMIT
 * naming it), never cut. A string the kernel wrote (host->scene_thing, scene_node,
 * scene_edge) has NUL bytes after it to the end of its array, so memcmp over the arrays orders
 * and compares them as strcmp does the strings (the recorder relies on it). */
#define POLIS_SCENE_ID_MAX 48
#define POLIS_SCENE_KIND_MAX 64
#define POLIS_SCENE_LABEL_MAX 48

/* A scene's lists, as the "scene" host API's kept lists (version 2) and polis_env_scene_kept
 * name them. */
enum { POLIS_SCENE_THINGS = 0, POLIS_SCENE_NODES = 1, POLIS_SCENE_EDGES = 2 };

/* A thing on the map: a mob, an arrow, a pile. `id` is stable for the thing's life within an
 * episode (the viewer follows it from tick to tick); `kind` indexes the kind table. */
typedef struct polis_scene_thing {
    int32_t id, kind, x, y;
    char label[POLIS_SCENE_LABEL_MAX];
} polis_scene_thing;

/* Facing of an agent in a scene. */
enum {
    POLIS_FACING_NONE = 0,
    POLIS_FACING_UP = 1,
    POLIS_FACING_RIGHT = 2,
    POLIS_FACING_DOWN = 3,
    POLIS_FACING_LEFT = 4
};

typedef struct polis_scene_agent {
    int32_t x, y;   /* -1, -1 when the agent is not on the map */
    int32_t facing; /* POLIS_FACING_* */
    int32_t alive;  /* 1 or 0 */
} polis_scene_agent;

/* A social node other than an agent (agents are nodes "agent_0", ... implicitly). */
typedef struct polis_scene_node {
    char id[POLIS_SCENE_ID_MAX];
    char kind[POLIS_SCENE_KIND_MAX];
    char label[POLIS_SCENE_LABEL_MAX];
} polis_scene_node;

typedef struct polis_scene_edge {
    char from[POLIS_SCENE_ID_MAX], to[POLIS_SCENE_ID_MAX];
    char kind[POLIS_SCENE_KIND_MAX];
    float weight;
} polis_scene_edge;

/* What the world looks like at one moment, in buffers the kernel allocates once. Before the
 * scene callbacks run, the kernel sets every tile to -1 (empty; a kept layer, plugin ABI 1.6,
 * only at the first scene of an episode), every agent to x = y = -1,
 * facing 0, alive 1 (0 once it terminated), every stat to 0 and the counts to 0. Map
 * coordinates: x to the right, y down; tiles are [layer][y][x]. */
typedef struct polis_scene {
    int32_t width, height, n_layers;
    int32_t *tiles; /* [n_layers][height][width], kind id or -1 */
    int32_t n_agents, n_stats;
    polis_scene_agent *agents; /* [n_agents] */
    int32_t *stats;            /* [n_agents][n_stats], in the stat table's order */
    int32_t n_things, cap_things;
    polis_scene_thing *things; /* [cap_things], the first n_things used */
    int32_t n_nodes, cap_nodes;
    polis_scene_node *nodes;
    int32_t n_edges, cap_edges;
    polis_scene_edge *edges;
} polis_scene;

#ifdef __cplusplus
}
#endif
#endif
