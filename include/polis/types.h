/*
 * polis/types.h — types shared by the embedding API (polis.h) and the plugin ABI (plugin.h).
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
#define POLIS_ENTITY_INDEX(e) ((uint32_t)((e) & 0xffffffffu))
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
    size_t obs_size;        /* bytes of one agent's observation record */
    uint8_t *obs;           /* [n_agents][obs_size] */
    uint8_t *masks;         /* [n_agents][n_actions], 1 = legal */
    int32_t *actions;       /* [n_agents], read by step */
    float *rewards;         /* [n_agents] */
    uint8_t *terminations;  /* [n_agents] */
    uint8_t *truncations;   /* [n_agents] */
    uint8_t *illegal;       /* [n_agents], 1 = last action was illegal (a no-op) */
} polis_io;

/* Where a plan (macro action, polis_env_plan_next / polis_macro_def) stands after a tick. */
typedef enum polis_plan_state {
    POLIS_PLAN_RUNNING = 0,    /* the plan chose the agent's action for this tick */
    POLIS_PLAN_DONE = 1,       /* the goal is reached; the reason says what was achieved */
    POLIS_PLAN_IMPOSSIBLE = 2, /* the goal cannot be reached (any more); the reason says why */
} polis_plan_state;

#ifdef __cplusplus
}
#endif
#endif
