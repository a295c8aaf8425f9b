/* Task distributions (engine/vary, polis/vary.h, docs/scenario.md "Task distributions"): a
 * scenario's "vary" draws override values at every reset from the reset seed alone; a drawn
 * task rebuilds the env in place, which then plays exactly what an env created with those
 * overrides plays; the io buffers, host subscribers and the env stay; bad draws are refused
 * at create naming vary["path"]; polis_env_reset_task plays a given task again. */
#include <cjson/cJSON.h>

#include "check.h"
#include "testutil.h"

#define BASE                                                                                       \
    "{\"polis\": 1, \"name\": \"walker\", \"seed\": 1, \"max_steps\": 60, \"agents\": 4,"          \
    " \"grid\": {\"width\": 12, \"height\": 12, \"wrap\": false},"                                 \
    " \"plugins\": [{\"name\": \"walker\", \"params\": {\"items\": 10, \"item_value\": 1.0,"       \
    " \"view\": 2, \"respawn\": true}}]"

#define VARY                                                                                       \
    ", \"vary\": {\"plugins.walker.params.items\": {\"range\": [3, 30], \"int\": true},"           \
    " \"plugins.walker.params.item_value\": {\"range\": [0.5, 2.0]},"                              \
    " \"grid\": {\"choice\": [{\"width\": 12, \"height\": 12}, {\"width\": 20, \"height\": 9}],"   \
    " \"weights\": [1, 3]}}"

static polis_env *make(const char *json, const char *overrides, polis_error *err)
{
    polis_options o = test_options(NULL, NULL);
    o.overrides = overrides;
    polis_env *env = NULL;
    polis_error e;
    if (polis_env_create_json(json, strlen(json), &o, &env, err ? err : &e) != POLIS_OK)
        return NULL;
    return env;
}

/* The creation error of BASE with `vary` (", \"vary\": ..." text) appended. */
static const char *vary_error(const char *vary)
{
    static polis_error err;
    char json[4096];
    snprintf(json, sizeof json, "%s%s}", BASE, vary);
    polis_env *env = make(json, NULL, &err);
    if (env) {
        polis_env_destroy(env);
        return "(created successfully)";
    }
    return err.message;
}

/* Plays `steps` steps of a fixed action pattern and returns the final state hash. */
static uint64_t play(polis_env *env, uint64_t seed, int steps, const char *task)
{
    if ((task ? polis_env_reset_task(env, seed, task) : polis_env_reset(env, seed)) != POLIS_OK)
        return 0;
    const polis_io *io = polis_env_io(env);
    for (int t = 0; t < steps && !polis_env_done(env); t++) {
        for (int32_t a = 0; a < io->n_agents; a++)
            io->actions[a] = (int32_t)((t * 7 + a * 3) % io->n_actions);
        if (polis_env_step(env) != POLIS_OK) return 0;
    }
    return polis_env_state_hash(env);
}

static void count_event(void *ud, const polis_event *ev)
{
    (void)ev;
    (*(long *)ud)++;
}

static void test_draws_reproduce_from_the_seed(void)
{
    polis_env *env = make(BASE VARY "}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(polis_env_task(env), "{}");
    CHECK_EQ_INT(polis_env_n_varied(env), 3);
    CHECK_EQ_STR(polis_env_varied_path(env, 0), "plugins.walker.params.items");
    CHECK_EQ_STR(polis_env_varied_spec(env, 0), "{\"range\":[3,30],\"int\":true}");
    const polis_io *io = polis_env_io(env);
    const void *obs = io->obs, *masks = io->masks;
    long events = 0;
    CHECK_EQ_INT(polis_env_subscribe(env, -1, count_event, &events), POLIS_OK);

    /* an episode is a function of its seed, whatever was played before it */
    uint64_t h7 = play(env, 7, 40, NULL);
    char task7[2048];
    snprintf(task7, sizeof task7, "%s", polis_env_task(env));
    CHECK(h7 != 0);
    int widths = 0, items_lo = 99, items_hi = 0;
    for (uint64_t s = 0; s < 24; s++) {
        CHECK(play(env, s, 5, NULL) != 0);
        cJSON *t = cJSON_Parse(polis_env_task(env));
        int items =
            (int)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "plugins.walker.params.items"));
        double value =
            cJSON_GetNumberValue(cJSON_GetObjectItem(t, "plugins.walker.params.item_value"));
        int w =
            (int)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "grid"), "width"));
        CHECK(items >= 3 && items <= 30);
        CHECK(value >= 0.5 && value < 2.0);
        CHECK(w == 12 || w == 20);
        widths |= w == 20 ? 2 : 1;
        if (items < items_lo) items_lo = items;
        if (items > items_hi) items_hi = items;
        cJSON_Delete(t);
    }
    CHECK_EQ_INT(widths, 3);          /* both choices were drawn */
    CHECK(items_hi - items_lo >= 10); /* the range is spread */
    CHECK(play(env, 7, 40, NULL) == h7);
    CHECK_EQ_STR(polis_env_task(env), task7);
    /* the host's buffers and subscriber outlive every rebuild */
    CHECK(polis_env_io(env) == io && io->obs == obs && io->masks == masks);
    CHECK(events > 0);
    long before = events;
    CHECK(play(env, 3, 10, NULL) != 0);
    CHECK(events > before);

    /* the rebuilt env plays what an env created with the task as overrides plays */
    polis_env *fresh = make(BASE "}", task7, NULL);
    CHECK(fresh != NULL);
    if (fresh) {
        CHECK(play(fresh, 7, 40, NULL) == h7);
        polis_env_destroy(fresh);
    }
    /* reset_task plays a given task (a replay's), whatever the seed would draw */
    CHECK(play(env, 1234, 5, task7) != 0);
    CHECK_EQ_STR(polis_env_task(env), task7);
    CHECK(play(env, 7, 40, task7) == h7);
    CHECK_EQ_STR(polis_env_task(env), task7);
    polis_env_destroy(env);
}

/* Without "vary" nothing is drawn, and a draw whose only value is the scenario's own leaves
 * the game's stream untouched: the same hashes as the plain scenario. */
static void test_no_vary_changes_nothing(void)
{
    polis_env *plain = make(BASE "}", NULL, NULL);
    polis_env *same =
        make(BASE ", \"vary\": {\"plugins.walker.params.items\": {\"choice\": [10]}}}", NULL, NULL);
    CHECK(plain && same);
    if (plain && same) {
        CHECK(polis_env_task(plain) == NULL);
        CHECK_EQ_INT(polis_env_n_varied(plain), 0);
        for (uint64_t s = 0; s < 4; s++) CHECK(play(plain, s, 50, NULL) == play(same, s, 50, NULL));
        CHECK_EQ_STR(polis_env_task(same), "{\"plugins.walker.params.items\":10}");
        CHECK_EQ_INT(polis_env_reset_task(plain, 1, "{}"), POLIS_ERR_STATE);
        CHECK_CONTAINS(polis_env_error(plain), "reset_task: the scenario has no \"vary\"");
    }
    polis_env_destroy(plain);
    polis_env_destroy(same);
}

static void test_bad_tasks(void)
{
    polis_env *env = make(BASE VARY "}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset_task(env, 1, "[1]"), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(polis_env_error(env), "reset_task: the task is not a JSON object");
    CHECK_EQ_INT(polis_env_reset_task(env, 1, "{\"max_steps\": 3}"), POLIS_ERR_CONFIG);
    CHECK_CONTAINS(polis_env_error(env), "reset_task: the task's member 0 is \"max_steps\"; the "
                                         "scenario's vary draws vary[\"plugins.walker.params."
                                         "items\"] there");
    /* a value no reader accepts fails the reset naming it; the env is usable again after */
    CHECK_EQ_INT(polis_env_reset_task(env, 1,
                                      "{\"plugins.walker.params.items\": -5, "
                                      "\"plugins.walker.params.item_value\": 1, "
                                      "\"grid\": {\"width\": 12, \"height\": 12}}"),
                 POLIS_ERR_CONFIG);
    CHECK_CONTAINS(polis_env_error(env), "vary: the task drawn for seed 1");
    CHECK_CONTAINS(polis_env_error(env), "plugins[0].params.items");
    CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_STATE);
    CHECK(play(env, 2, 10, NULL) != 0);
    polis_env_destroy(env);
}

static void test_bad_specs(void)
{
    CHECK_CONTAINS(vary_error(", \"vary\": [1]"),
                   "vary: expected an object of override paths and draws, got an array");
    CHECK_CONTAINS(vary_error(", \"vary\": {}"), "vary: no draws (an empty object)");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": 5}"),
                   "vary[\"max_steps\"]: a draw is an object with one of choice, range, groups, "
                   "got a number");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"choice\": []}}"),
                   "vary[\"max_steps\"].choice: expected a non-empty array of values, got an "
                   "empty array");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"range\": [50, 10]}}"),
                   "vary[\"max_steps\"].range: low 50 is above high 10");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"range\": [1, \"x\"]}}"),
                   "vary[\"max_steps\"].range[1]: expected a number, got a string");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"range\": [1, 2.5], \"int\": true}}"),
                   "vary[\"max_steps\"].range[1]: expected an integer");
    CHECK_CONTAINS(
        vary_error(", \"vary\": {\"max_steps\": {\"choice\": [1, 2], \"weights\": [1, -1]}}"),
        "vary[\"max_steps\"].weights[1]: expected a number in [0, ");
    CHECK_CONTAINS(
        vary_error(", \"vary\": {\"max_steps\": {\"choice\": [1, 2], \"weights\": [1]}}"),
        "vary[\"max_steps\"].weights: expected 2 weights (one per choice)");
    CHECK_CONTAINS(
        vary_error(", \"vary\": {\"max_steps\": {\"choice\": [1, 2], \"weights\": [0, 0]}}"),
        "vary[\"max_steps\"].weights: the weights sum to 0");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"choice\": [1], \"range\": [1, 2]}}"),
                   "vary[\"max_steps\"]: a draw is an object with exactly one of choice, range, "
                   "groups");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"range\": [1, 2], \"step\": 1}}"),
                   "vary[\"max_steps\"]: unknown key \"step\" (expected range, int)");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"range\": [1, 2], \"int\": 1}}"),
                   "vary[\"max_steps\"].int: expected true or false, got a number");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"social\": {\"groups\": {\"home\": [0]}}}"),
                   "vary[\"social\"].groups: needs \"groups\"");
    CHECK_CONTAINS(
        vary_error(
            ", \"vary\": {\"social\": {\"groups\": {\"groups\": 2, \"home\": [0, 1, 2, 0]}}}"),
        "vary[\"social\"].groups.home[2]: expected an integer in [0, 1], got 2");
    CHECK_CONTAINS(
        vary_error(", \"vary\": {\"social\": {\"groups\": {\"groups\": 2, \"agents\": 3}}}"),
        "vary[\"social\"].groups.agents: 3, but the scenario has 4 agents");
    /* paths and values are checked by building the first and the last value of every draw */
    CHECK_CONTAINS(vary_error(", \"vary\": {\"plugins.walker.params.itemz\": {\"range\": [1, 5], "
                              "\"int\": true}}"),
                   "vary[\"plugins.walker.params.itemz\"]: its first value "
                   "{\"plugins.walker.params.itemz\":1} cannot be played: ");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"plugins.walker.params.itemz\": {\"range\": [1, 5], "
                              "\"int\": true}}"),
                   "itemz");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"max_steps\": {\"choice\": [10, 20]}, "
                              "\"plugins.walker.params.items\": {\"choice\": [5, -3]}}"),
                   "vary[\"plugins.walker.params.items\"]: its last value "
                   "{\"plugins.walker.params.items\":-3} cannot be played: ");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"plugins[3].params\": {\"choice\": [{}]}}"),
                   "vary[\"plugins[3].params\"]: its first value");
    /* a task may change values, not the layout */
    CHECK_CONTAINS(vary_error(", \"vary\": {\"agents\": {\"choice\": [4, 5]}}"),
                   "vary[\"agents\"]: its last value {\"agents\":5} cannot be played: it changes "
                   "the env's layout: 5 agents; the scenario has 4 agents");
    CHECK_CONTAINS(vary_error(", \"vary\": {\"plugins.walker.params.view\": {\"range\": [2, 3], "
                              "\"int\": true}}"),
                   "it changes the env's layout: observation");
    /* comments are allowed among the draws */
    CHECK_EQ_STR(vary_error(", \"vary\": {\"//\": \"why\", \"max_steps\": {\"range\": [10, 20], "
                            "\"int\": true}}"),
                 "(created successfully)");
}

/* Rebuilds allocate through the env's allocator and give everything back. */
static void test_rebuilds_leak_nothing(void)
{
    test_alloc al = {0};
    polis_options o = test_options(NULL, &al);
    polis_env *env = NULL;
    polis_error err;
    const char *json = BASE VARY "}";
    CHECK_EQ_INT(polis_env_create_json(json, strlen(json), &o, &env, &err), POLIS_OK);
    for (uint64_t s = 0; s < 10 && env; s++) CHECK(play(env, s, 5, NULL) != 0);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);
}

int main(void)
{
    test_draws_reproduce_from_the_seed();
    test_no_vary_changes_nothing();
    test_bad_tasks();
    test_bad_specs();
    test_rebuilds_leak_nothing();
    CHECK_DONE();
}
