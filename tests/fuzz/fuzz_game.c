/* fuzz_game — one shipped game driven by arbitrary bytes. Built once per game with
 * FUZZ_SCENARIO set to its scenario (tests/fuzz/CMakeLists.txt). The env is created once;
 * every input resets it and runs a little program read from the bytes:
 *
 *   first 8 bytes   the reset seed
 *   then, per op (a byte, taken mod 8):
 *     0..3  step: one byte per agent picks its action — mostly any id below n_actions,
 *           legal or not (an illegal one is a no-op the env must flag), sometimes an id
 *           out of range (-1, n_actions, INT32_MIN, INT32_MAX) the step must refuse — or
 *           the agent's plan chooses, when it has one
 *     4     a text or JSON action for an agent (a length byte, then the text), through the
 *           kernel's parse entry point and the game's parsers
 *     5     a plan command for an agent ("GATHER 3 wood"), when the game has macros
 *     6     a registered policy acts for every agent, then a step
 *     7     render an agent's text and JSON views
 *
 * Oracles besides the sanitizers: every id the env hands back (parsed, chosen by a policy
 * or a plan) is below n_actions; an out-of-range id is refused with POLIS_ERR_ACTION and
 * the env then needs a reset; a successful step advances the tick by one. A failed step
 * or a finished episode resets with the next seed. */
#include <limits.h>

#include "fuzz.h"

static polis_env *env;
static fuzz_heap heap = {0, FUZZ_HEAP_CAP};
static int32_t n_agents, n_actions, n_policies, n_macros;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pin_plugins();
    polis_options opts = fuzz_options(&heap, NULL);
    polis_error err;
    if (polis_env_create_file(FUZZ_SCENARIO, &opts, &env, &err) != POLIS_OK) {
        fprintf(stderr, "fuzz_game: %s: %s\n", FUZZ_SCENARIO, err.message);
        abort();
    }
    n_agents = polis_env_n_agents(env);
    n_actions = polis_env_n_actions(env);
    n_policies = polis_env_n_policies(env);
    n_macros = polis_env_n_macros(env);
    return 0;
}

typedef struct reader {
    const uint8_t *p, *end;
} reader;

static uint8_t next(reader *r) { return r->p < r->end ? *r->p++ : 0; }

/* A length byte, then up to that many bytes as a C string in an exact-size block. */
static char *next_text(reader *r)
{
    size_t len = next(r);
    if (len > (size_t)(r->end - r->p)) len = (size_t)(r->end - r->p);
    char *s = fuzz_cstring(r->p, len);
    r->p += len;
    return s;
}

static void must_reset(uint64_t seed)
{
    polis_status st = polis_env_reset(env, seed);
    if (st != POLIS_OK) {
        fprintf(stderr, "fuzz_game: reset %llu: %s\n", (unsigned long long)seed,
                polis_env_error(env));
        abort();
    }
}

static int32_t plan_action(int32_t agent)
{
    if (!polis_env_plan_command(env, agent)) return -2;
    polis_plan_state state;
    int32_t id = -1;
    const char *why = NULL;
    if (polis_env_plan_next(env, agent, &state, &id, &why) != POLIS_OK) return -2;
    if (state != POLIS_PLAN_RUNNING) {
        FUZZ_ASSERT(why != NULL);
        return -2;
    }
    FUZZ_ASSERT(id >= 0 && id < n_actions);
    return id;
}

/* Steps with the actions in io; on a refused step resets with the next seed. */
static void step(uint64_t *seed, int bad_id)
{
    int64_t tick = polis_env_tick(env);
    polis_status st = polis_env_step(env);
    if (bad_id) FUZZ_ASSERT(st == POLIS_ERR_ACTION);
    if (st == POLIS_OK) FUZZ_ASSERT(polis_env_tick(env) == tick + 1);
    if (st != POLIS_OK || polis_env_done(env)) must_reset(++*seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, data + size};
    uint64_t seed = 0;
    for (int i = 0; i < 8; i++) seed = seed << 8 | next(&r);
    must_reset(seed);
    const polis_io *io = polis_env_io(env);
    for (int ops = 0; r.p < r.end && ops < 256; ops++) {
        uint8_t op = next(&r) % 8;
        if (op <= 3) {
            int bad = 0;
            for (int32_t a = 0; a < n_agents; a++) {
                uint8_t b = next(&r);
                int32_t id = b < 248 ? b % n_actions : -2;
                if (b == 248) id = -1;
                if (b == 249) id = n_actions;
                if (b == 250) id = INT32_MIN;
                if (b == 251) id = INT32_MAX;
                if (id == -2) id = plan_action(a);
                if (id == -2) id = 0;
                bad |= id < 0 || id >= n_actions;
                io->actions[a] = id;
            }
            step(&seed, bad);
        } else if (op == 4) {
            int32_t agent = next(&r) % n_agents;
            char *text = next_text(&r);
            int32_t id = 12345;
            polis_status st = polis_env_parse_action(env, agent, text, &id);
            if (st == POLIS_OK)
                FUZZ_ASSERT(id >= 0 && id < n_actions);
            else
                FUZZ_ASSERT(id == -1 && polis_env_error(env)[0] != '\0');
            free(text);
        } else if (op == 5) {
            int32_t agent = next(&r) % n_agents;
            char *text = next_text(&r);
            if (n_macros > 0) polis_env_plan_start(env, agent, text);
            free(text);
        } else if (op == 6) {
            int32_t policy = next(&r) % n_policies;
            if (polis_env_policy_act(env, policy, NULL, 0) == POLIS_OK) {
                for (int32_t a = 0; a < n_agents; a++)
                    FUZZ_ASSERT(io->actions[a] >= 0 && io->actions[a] < n_actions);
                step(&seed, 0);
            }
        } else {
            int32_t agent = next(&r) % n_agents;
            static const char *const formats[] = {"text", "json"};
            for (int f = 0; f < 2; f++) {
                char *out = NULL;
                if (polis_env_render(env, agent, formats[f], &out) == POLIS_OK)
                    FUZZ_ASSERT(out != NULL);
                polis_free(out);
            }
        }
    }
    return 0;
}
