/*
 * polis/version.h — the release of polis these headers belong to.
 *
 * One number for the engine, the `polis` program, the CMake and pkg-config packages and the
 * Python SDK (the top-level CMakeLists.txt refuses to configure when its project() version
 * differs from this one). A release that changes the plugin ABI or the embedding API bumps
 * the minor (0.x: nothing is promised beyond what CHANGELOG.md says); the plugin ABI's own
 * version is POLIS_ABI_MAJOR.POLIS_ABI_MINOR in polis/plugin.h, and CHANGELOG.md lists which
 * release brought which ABI version.
 */
#ifndef POLIS_VERSION_H
#define POLIS_VERSION_H

#define POLIS_VERSION_MAJOR 0
#define POLIS_VERSION_MINOR 8
#define POLIS_VERSION_PATCH 0
#define POLIS_VERSION_STRING "0.8.0"

/* A version as one comparable number: POLIS_VERSION_NUMBER >= POLIS_VERSION_AT(0, 8, 0). */
#define POLIS_VERSION_AT(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define POLIS_VERSION_NUMBER                                                                       \
    POLIS_VERSION_AT(POLIS_VERSION_MAJOR, POLIS_VERSION_MINOR, POLIS_VERSION_PATCH)

#endif
