/* tests/fuzz/fuzz.h — what the fuzz harnesses share: options that find the built plugins, an
 * allocator with a hard cap (a hostile scenario may ask for gigabytes; past the cap the env
 * must fail cleanly with "out of memory", which is itself under test), and the oracle
 * FUZZ_ASSERT, which stops the run like a crash so libFuzzer keeps the input.
 *
 * Every harness is one LLVMFuzzerTestOneInput. Built with -DPOLIS_FUZZ=ON (clang) it links
 * libFuzzer; in every other build it links replay.c, a main that runs it once per file, so
 * CTest replays the corpora under gcc and its sanitizers too (tests/fuzz/CMakeLists.txt). */
#ifndef POLIS_FUZZ_H
#define POLIS_FUZZ_H

#include <dirent.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polis/polis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz oracle failed: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* libFuzzer counts coverage in every instrumented module, plugins included, through counters
 * registered when a module loads; a plugin unloaded after an input leaves them dangling. So
 * harnesses that create and destroy envs per input load every built plugin once, for good
 * (RTLD_NODELETE): polis's own dlopen and dlclose of them then only count references. */
static inline void fuzz_pin_plugins(void)
{
    DIR *d = opendir(POLIS_PLUGIN_DIR);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".so") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", POLIS_PLUGIN_DIR, e->d_name);
        if (!dlopen(path, RTLD_NOW | RTLD_NODELETE)) fprintf(stderr, "fuzz: %s\n", dlerror());
    }
    closedir(d);
}

/* ---- a capped allocator ------------------------------------------------------------------ */

/* Each block carries its size in a 16-byte header, so the count is exact whatever osize the
 * caller passes. */
typedef struct fuzz_heap {
    size_t used, cap;
} fuzz_heap;

static inline void *fuzz_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)osize;
    fuzz_heap *h = ud;
    unsigned char *block = ptr ? (unsigned char *)ptr - 16 : NULL;
    size_t old = 0;
    if (block) memcpy(&old, block, sizeof old);
    if (nsize == 0) {
        free(block);
        h->used -= old;
        return NULL;
    }
    if (nsize > h->cap || h->used - old > h->cap - nsize) return NULL;
    unsigned char *b = realloc(block, nsize + 16);
    if (!b) return NULL;
    memcpy(b, &nsize, sizeof nsize);
    h->used = h->used - old + nsize;
    return b + 16;
}

/* Options for an env: the built plugins, scripts relative to base_dir (NULL: the current
 * directory), the capped allocator on `heap`. */
static inline polis_options fuzz_options(fuzz_heap *heap, const char *base_dir)
{
    polis_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.plugin_path = POLIS_PLUGIN_DIR;
    o.base_dir = base_dir;
    o.alloc = fuzz_alloc;
    o.alloc_ud = heap;
    return o;
}

/* The env memory one fuzz input may use: well above any shipped scenario, well below what
 * would stop the fuzzer (-rss_limit_mb). */
#define FUZZ_HEAP_CAP ((size_t)256 << 20)

/* A NUL-terminated copy of data in a block of exactly size + 1 bytes, so AddressSanitizer
 * sees a read one byte past the NUL. Caller frees. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Runs the random policy for every unfinished agent and steps, at most `ticks` times or
 * until the episode ends; a failed step ends it too. Returns the ticks stepped. */
static inline int fuzz_play(polis_env *env, int ticks)
{
    int32_t random = polis_env_policy_find(env, "random");
    FUZZ_ASSERT(random >= 0);
    int t = 0;
    for (; t < ticks && !polis_env_done(env); t++) {
        if (polis_env_policy_act(env, random, NULL, 0) != POLIS_OK) break;
        const polis_io *io = polis_env_io(env);
        for (int32_t a = 0; a < io->n_agents; a++)
            FUZZ_ASSERT(io->actions[a] >= 0 && io->actions[a] < polis_env_n_actions(env));
        if (polis_env_step(env) != POLIS_OK) break;
    }
    return t;
}

/* Renders every format the env has for agent 0 and frees the result: a view may fail (its
 * message placed), never crash. */
static inline void fuzz_render(polis_env *env)
{
    if (polis_env_n_agents(env) < 1) return;
    static const char *const formats[] = {"text", "json"};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char *out = NULL;
        if (polis_env_render(env, 0, formats[i], &out) == POLIS_OK) FUZZ_ASSERT(out != NULL);
        polis_free(out);
    }
}

#endif
