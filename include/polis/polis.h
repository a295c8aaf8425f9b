/*
 * polis/polis.h — the whole public API of polis, one header per concern:
 *
 *   polis/env.h      the kernel: create, reset, step, buffers, registries, events, errors
 *   polis/views.h    text and JSON views, text and JSON actions
 *   polis/policy.h   scripted policies and plans (macro actions)
 *   polis/scene.h    looks and scenes
 *   polis/vec.h      vectorised envs
 *   polis/visibility.h  who sees whom
 *   polis/vary.h     task distributions: what a scenario draws anew at every reset
 *   polis/record.h   recordings           (libpolis-record)
 *   polis/pixels.h   frames as RGB pixels (libpolis-pixels)
 *
 * Everything but record.h and pixels.h is in libpolis; those two are libraries of their own
 * built on the rest (docs/architecture.md). Plugins include polis/plugin.h instead.
 */
#ifndef POLIS_POLIS_H
#define POLIS_POLIS_H

#include "polis/env.h"
#include "polis/pixels.h"
#include "polis/policy.h"
#include "polis/record.h"
#include "polis/scene.h"
#include "polis/vec.h"
#include "polis/views.h"
#include "polis/visibility.h"
#include "polis/vary.h"

#endif
