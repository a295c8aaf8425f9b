/*
 * engine/modules.c — the modules libpolis is built with, in the order the kernel runs their
 * lifecycle callbacks (core/module.h). The only file that names every module: the kernel
 * walks this table and names none of them; a module names only the modules
 * docs/architecture.md lets it use.
 *
 * Order matters where two modules act at the same step: the Lua host's `start` (the scripts'
 * on_start callbacks) runs before foreign calls bind the scenario's "bindings" (which may
 * name what a script registered), and a describe document lists the views before the
 * policies and macros. Vectorised envs (engine/vec) have one entry, the "reset_ahead" host
 * API's registrations (vec/ahead.c); recording and pixels are separate libraries on the public API
 * (engine/record, engine/pixels).
 */
#include "core/module.h"

POLIS_INTERNAL extern const polis__module polis__lua_module;    /* engine/lua: Lua scripts */
POLIS_INTERNAL extern const polis__module polis__ffi_module;    /* engine/ffi: exports, replace */
POLIS_INTERNAL extern const polis__module polis__scene_module;  /* engine/scene: looks, scenes */
POLIS_INTERNAL extern const polis__module polis__views_module;  /* engine/views: text, JSON */
POLIS_INTERNAL extern const polis__module polis__policy_module; /* engine/policy: policies, plans */
POLIS_INTERNAL extern const polis__module polis__visibility_module; /* engine/visibility */
POLIS_INTERNAL extern const polis__module polis__vary_module;       /* engine/vary: tasks */
POLIS_INTERNAL extern const polis__module polis__ahead_module;      /* engine/vec: reset_ahead */

const polis__module *const polis__modules[] = {
    &polis__lua_module,
    &polis__ffi_module,
    &polis__scene_module,
    &polis__views_module,
    &polis__policy_module,
    &polis__visibility_module,
    &polis__ahead_module,
    &polis__vary_module, /* last: its prereset may rebuild the env */
    NULL,
};
