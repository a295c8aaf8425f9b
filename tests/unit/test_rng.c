/* PCG32: the reference sequence, bounded draws, doubles, stream independence. */
#include "check.h"
#include "polis/rng.h"

int main(void)
{
    /* The pcg32 reference generator seeded with (42, 54) produces this sequence. */
    polis_rng r;
    polis_rng_seed(&r, 42u, 54u);
    const uint32_t expect[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(polis_rng_next(&r), expect[i]);

    /* below(): always in range, every value hit, roughly uniform. */
    polis_rng_seed(&r, 7, 1);
    int hist[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint32_t v = polis_rng_below(&r, 6);
        CHECK(v < 6);
        if (v < 6) hist[v]++;
    }
    for (int i = 0; i < 6; i++) CHECK(hist[i] > 9500 && hist[i] < 10500);
    CHECK_EQ_INT(polis_rng_below(&r, 0), 0);
    CHECK_EQ_INT(polis_rng_below(&r, 1), 0);

    /* range(): inclusive bounds, negative ranges, the full 32-bit span. */
    int lo_seen = 0, hi_seen = 0;
    for (int i = 0; i < 10000; i++) {
        int32_t v = polis_rng_range(&r, -3, 3);
        CHECK(v >= -3 && v <= 3);
        lo_seen |= v == -3;
        hi_seen |= v == 3;
    }
    CHECK(lo_seen && hi_seen);
    (void)polis_rng_range(&r, INT32_MIN, INT32_MAX);
    CHECK_EQ_INT(polis_rng_range(&r, 5, 5), 5);

    /* double(): in [0, 1), mean near 1/2. */
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double d = polis_rng_double(&r);
        CHECK(d >= 0.0 && d < 1.0);
        sum += d;
    }
    CHECK(sum / 100000 > 0.49 && sum / 100000 < 0.51);

    /* Same seed, same sequence; different streams differ. */
    polis_rng a, b, c;
    polis_rng_seed(&a, 123, 9);
    polis_rng_seed(&b, 123, 9);
    polis_rng_seed(&c, 123, 10);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        uint32_t x = polis_rng_next(&a), y = polis_rng_next(&b), z = polis_rng_next(&c);
        same &= x == y;
        differ |= x != z;
    }
    CHECK(same);
    CHECK(differ);
    CHECK_DONE();
}
