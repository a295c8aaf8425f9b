/* fuzz_scenario — a scenario from arbitrary text: polis_env_create_json must either build an
 * env or fail with a message, never crash, leak or read out of bounds. An env that builds is
 * reset, rendered and played a few ticks with the random policy, so what the text set up
 * (grids, plugins and their parameters, scripts, rewards, overrides of shipped values) is
 * exercised too.
 *
 * Scripts and plugin paths in the text are relative to FUZZ_BASE_DIR, a build directory
 * holding links to every shipped script, so the shipped scenarios are seeds as they are. */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pin_plugins();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_heap heap = {0, FUZZ_HEAP_CAP};
    polis_options opts = fuzz_options(&heap, FUZZ_BASE_DIR);
    polis_env *env = NULL;
    polis_error err;
    polis_status st = polis_env_create_json((const char *)data, size, &opts, &env, &err);
    if (st != POLIS_OK) {
        FUZZ_ASSERT(env == NULL);
        FUZZ_ASSERT(err.message[0] != '\0');
        FUZZ_ASSERT(heap.used == 0);
        return 0;
    }
    if (polis_env_reset(env, polis_env_default_seed(env)) == POLIS_OK) {
        fuzz_render(env);
        fuzz_play(env, 8);
        fuzz_render(env);
    } else {
        FUZZ_ASSERT(polis_env_error(env)[0] != '\0');
    }
    polis_env_destroy(env);
    FUZZ_ASSERT(heap.used == 0);
    return 0;
}
