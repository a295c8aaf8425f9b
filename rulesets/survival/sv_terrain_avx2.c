/*
 * sv_terrain_avx2.c — sv_terrain.c built a second time, with -mavx2 where the compiler takes
 * it (CMakeLists.txt), as sv_terrain_avx2(): the noise fields and layer passes in vectors of
 * eight floats. The polis build targets any x86-64 (SSE2); sv_generate takes this one when
 * the CPU runs AVX2. The map is the same bit for bit: AVX2 without FMA does the same IEEE
 * operations on each value, in the same order, as the SSE2 code (test_rules.c,
 * test_terrain_avx2, compares the two).
 */
#if defined(__AVX2__)
#if defined(__FMA__)
#error "sv_terrain_avx2.c must be built without FMA: a fused multiply-add rounds once, not twice"
#endif
#define SV_TERRAIN_FN sv_terrain_avx2
#include "sv_terrain.c"

bool sv_terrain_avx2_ok(void) { return __builtin_cpu_supports("avx2"); }
#else
#include "core.h"

/* built without -mavx2: the portable generator under this name, never chosen */
void sv_terrain_avx2(uint8_t *m, polis_rng *rng, bool always_diamond)
{
    sv_terrain(m, rng, always_diamond);
}

bool sv_terrain_avx2_ok(void) { return false; }
#endif
