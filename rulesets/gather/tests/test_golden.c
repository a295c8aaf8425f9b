/* gather's golden trajectories: a seeded episode's state hashes under a uniform random
 * policy, for gather.json (C) and gather_lua.json (C + the Lua rule bonus.lua). Any change to
 * gather's behaviour, the RNG or the kernel's order of operations changes them: update them
 * only for an intended behaviour change, and say so. (These values were the kernel's golden
 * hashes before the kernel tests got a game of their own.) */
#include "check.h"
#include "testutil.h"

#define GATHER POLIS_SOURCE_DIR "/rulesets/gather/gather.json"
#define GATHER_LUA POLIS_SOURCE_DIR "/rulesets/gather/gather_lua.json"

int main(void)
{
    float ret = 0;
    uint64_t g1 = test_trajectory(GATHER, 1, 500, &ret);
    CHECK(g1 != 0);
    CHECK_EQ_INT(g1, test_trajectory(GATHER, 1, 500, NULL));
    CHECK(g1 != test_trajectory(GATHER, 2, 500, NULL));
    CHECK(ret > 0); /* coins are collected: the random policy earns something */
    fprintf(stderr, "gather golden: 0x%016llx (return %.1f)\n", (unsigned long long)g1, ret);
    CHECK_EQ_INT(g1, (long long)0x87fa45ee318626b4ULL);

    uint64_t l1 = test_trajectory(GATHER_LUA, 1, 300, &ret);
    CHECK(l1 != 0);
    CHECK_EQ_INT(l1, test_trajectory(GATHER_LUA, 1, 300, NULL));
    fprintf(stderr, "gather_lua golden: 0x%016llx (return %.1f)\n", (unsigned long long)l1, ret);
    CHECK_EQ_INT(l1, (long long)0xf70d688e3f3a0674ULL);
    CHECK_DONE();
}
