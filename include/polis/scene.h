/*
 * polis/scene.h — looks and scenes (plugin ABI 1.5; docs/kernel.md, "Looks and scenes"):
 * what a game registered about how it looks, and the current scene in the env's buffers.
 * Recordings, frames and the viewer read only this. The engine/scene module implements it
 * in libpolis.
 */
#ifndef POLIS_SCENE_H
#define POLIS_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"

POLIS_API_BEGIN

/* What the game registered about how it looks: the scene map's size (0 x 0 when the game has
 * none), its tile layers, the kind table shared by tiles and things, per-agent stats, and an
 * agent's view half-extent. Names are borrowed, valid until polis_env_destroy. */
int32_t polis_env_scene_width(const polis_env *env);
int32_t polis_env_scene_height(const polis_env *env);
int32_t polis_env_scene_n_layers(const polis_env *env);
const char *polis_env_scene_layer_name(const polis_env *env, int32_t layer); /* NULL if bad */
int32_t polis_env_scene_n_kinds(const polis_env *env);
typedef struct polis_kind_info {
    const char *name;
    const char *glyph; /* one UTF-8 character */
    const char *color; /* "#rrggbb" */
    polis_shape shape;
    const char *plugin; /* who registered it */
} polis_kind_info;
polis_status polis_env_scene_kind(const polis_env *env, int32_t kind, polis_kind_info *out);
int32_t polis_env_scene_kind_find(const polis_env *env, const char *name); /* -1 if unknown */
int32_t polis_env_scene_n_stats(const polis_env *env);
/* Stat i: name, group ("vitals", "inventory", ...), largest value (0: unbounded). */
polis_status polis_env_scene_stat(const polis_env *env, int32_t stat, const char **name,
                                  const char **group, int32_t *max);
/* true and the half-extent when the game registered an agent's view. */
bool polis_env_scene_view(const polis_env *env, int32_t *rx, int32_t *ry);
/* "square", "circle", ...; NULL for a value outside polis_shape. */
const char *polis_shape_name(polis_shape shape);
/* Writes the current scene (every plugin's scene callback, in registration order) into the
 * env's scene buffers and points *out at them (borrowed; overwritten by the next call, valid
 * until polis_env_destroy). Allowed after a successful reset, also when the episode ended;
 * POLIS_ERR_STATE otherwise. The first call allocates the buffers; later calls allocate
 * nothing. A failing callback fails the call with its message placed
 * ("<plugin>: ... [scene, tick 5]"); the env is unchanged. */
polis_status polis_env_scene_get(polis_env *env, const polis_scene **out);

/* A number that names what tile layer `layer` of the scene last written holds: every
 * polis_env_scene_get gives each layer a new one, except a kept layer that every callback left
 * as it was (the "scene" host API's layer_same, polis/plugin.h) — equal numbers, equal cells,
 * so a reader with a copy of the layer as it was at number v need not compare it again. Never
 * 0 for a layer of a scene written; 0 for a bad env or layer, or before the first scene. */
uint64_t polis_env_scene_layer_version(const polis_env *env, int32_t layer);

/* The rows of kept layer `layer` that the callbacks of the scene last written said they
 * rewrote (the "scene" host API's layer_rows, polis/plugin.h): a bitmap, row y at bit y % 64 of
 * word y / 64, (height + 63) / 64 words (borrowed, rewritten by polis_env_scene_get, valid until
 * polis_env_destroy), with *since set to the layer's version (polis_env_scene_layer_version)
 * before that scene — a reader with a copy of the layer as it was at version *since finds
 * every changed cell in those rows. NULL and *since 0 when no callback said (any row may have
 * changed), when the scene was fresh or failed, when the layer stayed the same (its version
 * did not change), for a bad env or layer, or before the first scene. since may be NULL. */
const uint64_t *polis_env_scene_layer_rows(const polis_env *env, int32_t layer, uint64_t *since);

/* The number of the scene last written by polis_env_scene_get: 1, 2, ... (every call, also
 * one that failed, takes the next); 0 for a bad env or before the first call. */
uint64_t polis_env_scene_number(const polis_env *env);

/* A list's kept slots (the "scene" host API's kept lists, polis/plugin.h), over every plugin
 * that keeps it, numbered from 0 in the plugins' registration order. `where` (borrowed,
 * [slots], valid until polis_env_destroy, rewritten by polis_env_scene_get) gives each slot's
 * element as its index in the scene's array (things or edges), -1 for an empty slot; `whole`
 * is true when every element of the list in the last scene is in a slot (no plugin appended
 * to it). slots 0 and where NULL when no plugin keeps the list. POLIS_ERR_INVALID for a bad
 * env, out or list; POLIS_ERR_STATE before the first scene. */
typedef struct polis_scene_kept {
    int32_t slots;
    bool whole;
    const int32_t *where;
} polis_scene_kept;
polis_status polis_env_scene_kept(const polis_env *env, int32_t list, polis_scene_kept *out);

/* The kept slots of `list` whose element a scene numbered after `since` put or cleared (so
 * every other slot holds what it held in scene `since`), each once, in no particular order,
 * into out[0 .. cap); returns how many, or -1 when there are more than cap (cap >= slots
 * always suffices), for a bad env or list. A slot put again with an equal element is listed
 * too. Allocates nothing; the cost grows with the slots listed when `since` is the scene
 * before the last (a reader of every scene), else also with the slots / 64. */
int32_t polis_env_scene_kept_changes(const polis_env *env, int32_t list, uint64_t since,
                                     int32_t *out, int32_t cap);

/* What the scene last written says of itself, for a reader that looks at every scene (the
 * recorder) without a call each: its number (polis_env_scene_number), each layer's version
 * (polis_env_scene_layer_version; [scene.n_layers], NULL without layers), and per list
 * (POLIS_SCENE_THINGS, _NODES, _EDGES) whether it is whole (polis_scene_kept.whole) and the kept
 * slots this scene put or cleared, each once (polis_env_scene_kept_changes with since the scene
 * before: n_changed of them in changed; changed NULL and n_changed 0 when no plugin keeps the
 * list). Borrowed, rewritten by polis_env_scene_get, valid until polis_env_destroy; NULL for a
 * bad env or before the first scene. */
typedef struct polis_scene_said {
    uint64_t number;
    const uint64_t *layer_ver;
    bool kept_whole[3];
    int32_t n_changed[3];
    const int32_t *changed[3];
} polis_scene_said;
const polis_scene_said *polis_env_scene_said(const polis_env *env);

/* Scenes drawn from copies (docs/kernel.md, "Scenes drawn from copies"): a reader that wants
 * every scene without drawing it on the env's thread (the recorder's writer thread) takes, on
 * the env's thread after each reset and step, a copy of what changed, and draws the scene from
 * it on a thread of its own, later, with scene buffers of its own: the scene polis_env_scene_get
 * would have given at the take, with the same kept layers and lists and what the scene says of
 * itself. Possible when every plugin with a scene callback registered a copy ("scene" host API
 * version 5, scene_copy, polis/plugin.h). */
typedef struct polis_scene_copy polis_scene_copy;

/* true when the env's scenes can be drawn from copies (every scene callback has one; a game
 * with no scene callback has nothing to copy: true). */
bool polis_env_scene_copyable(const polis_env *env);

/* A reader of copies, with its own scene buffers (allocated here), at most one open per env.
 * POLIS_ERR_STATE (env's error set) when not copyable or one is open; the env's thread. */
polis_status polis_scene_copy_open(polis_env *env, polis_scene_copy **out);
/* The env's thread, once no draw runs; NULL is a no-op. polis_env_destroy frees a reader left
 * open (the pointer is then dangling). */
void polis_scene_copy_close(polis_scene_copy *c);

/* The most bytes one take writes. */
size_t polis_scene_copy_max(const polis_scene_copy *c);

/* On the env's thread, after a reset or step (when polis_env_scene_get is allowed): what the
 * plugins' draws need, into buf[0 .. polis_scene_copy_max) (8-byte aligned, else
 * POLIS_ERR_INVALID), its bytes to *len (0 on failure); fresh (the
 * scene drawn from it starts over) at the first take of an episode and after a failed take.
 * A failing take fails the call with the env's error set ("<plugin>: ... [scene copy, tick 5]").
 * Allocates nothing. */
polis_status polis_scene_copy_take(polis_scene_copy *c, void *buf, size_t *len);

/* On any one thread at a time, each take once, in the order taken: the scene drawn from it into
 * the reader's buffers, *out pointed at them (borrowed until the next draw or close). A failing
 * draw fails this and every later call (POLIS_ERR_STATE) with the message at
 * polis_scene_copy_error; a take that is not one of this reader's (or not 8-byte aligned, or
 * its parts cut short) or one out of order, POLIS_ERR_INVALID with the message there, nothing
 * drawn. Allocates nothing; touches nothing the env's thread changes. */
polis_status polis_scene_copy_draw(polis_scene_copy *c, const void *take, size_t len,
                                   const polis_scene **out);
/* The last draw's failure ("" when none): "<plugin>: ... [scene copy, tick 5]". */
const char *polis_scene_copy_error(const polis_scene_copy *c);

/* As polis_env_scene_said, polis_env_scene_layer_rows and polis_env_scene_kept, of the scene
 * last drawn (on the drawing thread). */
const polis_scene_said *polis_scene_copy_said(const polis_scene_copy *c);
const uint64_t *polis_scene_copy_layer_rows(const polis_scene_copy *c, int32_t layer,
                                            uint64_t *since);
polis_status polis_scene_copy_kept(const polis_scene_copy *c, int32_t list, polis_scene_kept *out);

POLIS_API_END
#endif
