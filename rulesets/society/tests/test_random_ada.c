/* random_ada, AdaSociety's random baseline (policy.c), on every AdaSociety mini-game: it plays
 * only what AdaSociety's masks offered. In a physical stage that is polis's legal set plus
 * produce on a station the agent sees without the inputs (masked in polis: it plays as a
 * flagged no-op), noop included; in Contract's and Negotiation's stages it is the stage's
 * legal set, noop only when nothing else is legal. */
#include "fixture.h"

typedef struct tally {
    long steps, physical_noops, stage_noops, forced_noops, produce_unheld, produce_held;
} tally;

/* Whether the grid shows a station at the agent's own cell (the station channels 2..2+R-1
 * hold -in / +out there; own cell at the middle of the window or the egocentric map). */
static bool station_here(polis_env *env, int32_t agent)
{
    polis_obs_field f;
    memset(&f, 0, sizeof f);
    const int16_t *g = soc_field(env, agent, "grid", &f);
    if (!g) return false;
    int32_t C = f.shape[0], X = f.shape[1], Y = f.shape[2], R = (C - 2) / 2;
    for (int32_t c = 2; c < 2 + R; c++)
        if (g[((size_t)c * (size_t)X + (size_t)(X / 2)) * (size_t)Y + (size_t)(Y / 2)] != 0)
            return true;
    return false;
}

static void play(const char *file, int episodes, tally *t)
{
    polis_env *env = test_env_file(file, NULL);
    CHECK(env != NULL);
    if (!env) return;
    int32_t pol = polis_env_policy_find(env, "random_ada");
    CHECK(pol >= 0);
    const polis_io *io = polis_env_io(env);
    int32_t P = io->n_agents, A = io->n_actions;
    int32_t move_up = soc_action(env, "move_up"), produce = soc_action(env, "produce");
    uint8_t *was_legal = calloc((size_t)P, 1);
    for (int ep = 1; pol >= 0 && ep <= episodes; ep++) {
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep), POLIS_OK);
        while (!polis_env_done(env)) {
            CHECK_EQ_INT(polis_env_policy_act(env, pol, NULL, 0), POLIS_OK);
            for (int32_t a = 0; a < P; a++) {
                const uint8_t *row = io->masks + (size_t)a * (size_t)A;
                int32_t act = io->actions[a];
                CHECK(act >= 0 && act < A);
                was_legal[a] = row[act];
                if (row[move_up]) { /* a physical stage: noop is a choice */
                    if (act == 0) t->physical_noops++;
                    if (act == produce && row[act]) t->produce_held++;
                    if (!row[act]) {
                        /* the one action AdaSociety offered beyond polis's mask */
                        CHECK_EQ_INT(act, produce);
                        CHECK(station_here(env, a));
                        t->produce_unheld++;
                    }
                } else { /* a stage: its legal set, noop only when nothing else is legal */
                    CHECK(row[act]);
                    int others = 0;
                    for (int32_t k = 1; k < A; k++) others += row[k];
                    if (act == 0) {
                        t->stage_noops++;
                        if (others) t->forced_noops++;
                    }
                }
            }
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
            for (int32_t a = 0; a < P; a++) CHECK_EQ_INT(io->illegal[a], !was_legal[a]);
            t->steps++;
        }
    }
    free(was_legal);
    polis_env_destroy(env);
}

#define RS POLIS_SOURCE_DIR "/rulesets/"

int main(void)
{
    static const struct {
        const char *file;
        int episodes;
        bool stage; /* Contract and Negotiation open with a stage */
    } GAMES[] = {
        {RS "contract/contract.json", 6, true},
        {RS "contract/contract_hard.json", 3, true},
        {RS "negotiation/negotiation.json", 6, true},
        {RS "negotiation/negotiation_hard.json", 3, true},
        {RS "exploration/exploration.json", 2, false},
        {RS "social_structure/dynamic.json", 3, false},
    };
    for (size_t i = 0; i < sizeof GAMES / sizeof GAMES[0]; i++) {
        tally t = {0};
        play(GAMES[i].file, GAMES[i].episodes, &t);
        printf("%s: %ld steps, noops %ld physical %ld in stages, produce %ld without the "
               "inputs, %ld with\n",
               GAMES[i].file + sizeof RS - 1, t.steps, t.physical_noops, t.stage_noops,
               t.produce_unheld, t.produce_held);
        CHECK(t.steps > 0);
        CHECK(t.physical_noops > 0);
        CHECK(t.produce_unheld > 0); /* AdaSociety's random agent tries it; polis flags it */
        CHECK_EQ_INT(t.forced_noops, 0);
        if (GAMES[i].stage) CHECK(t.stage_noops > 0); /* waiting for the turn: noop only */
    }
    CHECK_DONE();
}
