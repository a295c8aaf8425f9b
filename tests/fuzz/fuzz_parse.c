/* fuzz_parse — text and JSON actions, and plan commands, of every shipped game. The first
 * byte picks the game, the second the agent; the rest is the text, passed in an exact-size
 * block (with trailing blanks the kernel makes its own exact-size copy) so a read past its
 * end is caught. The text goes through polis_env_parse_action (exact action names, then the
 * game's parsers in order) and, in games with macros, polis_env_plan_start and one
 * polis_env_plan_next.
 *
 * Oracles: an accepted text is an id below n_actions; a refused one leaves id -1 and a
 * message; a plan that starts either chooses an id below n_actions or ends with a reason. */
#include "fuzz.h"

static const char *const SCENARIOS[] = {
    POLIS_SOURCE_DIR "/rulesets/gather/gather.json",
    POLIS_SOURCE_DIR "/rulesets/exploration/exploration.json",
    POLIS_SOURCE_DIR "/rulesets/contract/contract.json",
    POLIS_SOURCE_DIR "/rulesets/negotiation/negotiation.json",
    POLIS_SOURCE_DIR "/rulesets/social_structure/dynamic.json",
    POLIS_SOURCE_DIR "/rulesets/commons/commons_open.json",
    POLIS_SOURCE_DIR "/rulesets/survival/survival_classic.json",
};
#define N_GAMES (sizeof SCENARIOS / sizeof *SCENARIOS)

static polis_env *envs[N_GAMES];
static fuzz_heap heaps[N_GAMES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pin_plugins();
    for (size_t g = 0; g < N_GAMES; g++) {
        heaps[g] = (fuzz_heap){0, FUZZ_HEAP_CAP};
        polis_options opts = fuzz_options(&heaps[g], NULL);
        polis_error err;
        if (polis_env_create_file(SCENARIOS[g], &opts, &envs[g], &err) != POLIS_OK ||
            polis_env_reset(envs[g], 1) != POLIS_OK) {
            fprintf(stderr, "fuzz_parse: %s: %s\n", SCENARIOS[g],
                    envs[g] ? polis_env_error(envs[g]) : err.message);
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    polis_env *env = envs[data[0] % N_GAMES];
    int32_t agent = data[1] % polis_env_n_agents(env);
    int32_t n_actions = polis_env_n_actions(env);
    char *text = fuzz_cstring(data + 2, size - 2);

    int32_t id = 12345;
    polis_status st = polis_env_parse_action(env, agent, text, &id);
    if (st == POLIS_OK)
        FUZZ_ASSERT(id >= 0 && id < n_actions);
    else
        FUZZ_ASSERT(id == -1 && polis_env_error(env)[0] != '\0');

    if (polis_env_n_macros(env) > 0 && polis_env_plan_start(env, agent, text) == POLIS_OK) {
        FUZZ_ASSERT(polis_env_plan_command(env, agent) != NULL);
        polis_plan_state state;
        const char *why = NULL;
        id = -1;
        if (polis_env_plan_next(env, agent, &state, &id, &why) == POLIS_OK) {
            if (state == POLIS_PLAN_RUNNING)
                FUZZ_ASSERT(id >= 0 && id < n_actions);
            else
                FUZZ_ASSERT(why != NULL);
        }
        polis_env_plan_cancel(env, agent);
    }
    free(text);
    return 0;
}
