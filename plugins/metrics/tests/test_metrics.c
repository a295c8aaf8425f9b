/* The metrics plugin on small hand-computed episodes: returns, fairness (and its undefined
 * case), completion rates against the oracle, degrees, the split ratio, the rendering, the
 * service and export, errors, and no allocation while stepping.
 *
 * It runs in builds with and without GLPK: METRICS_HAVE_ORACLE (CMakeLists.txt) says which.
 * Without it the oracle's numbers are checked to be off (null, with the reason), everything
 * else as with it. */
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "polis/metrics.h"
#include "testutil.h"

/* 4 agents on a 3x3 map: carpenter_0 at (0, 0) on wood 3, stone 1 and a hammer station;
 * carpenter_1, miner_2, miner_3 elsewhere. Groups: 0 = {0: 0.7, 2: 0.3} and 1 = {1: 1} by
 * "score", an empty group 2; a sharing relation 0 -> 1. No reward sharing. */
#define SCN(extra_society, plugins_after)                                                          \
    "{\"agents\": {\"count\": 4, \"names\": [\"carpenter_0\", \"carpenter_1\", \"miner_2\", "      \
    "\"miner_3\"]}, \"max_steps\": 20, \"plugins\": [{\"name\": \"society\", \"params\": {"        \
    "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 3, \"y\": 3}},"                         \
    " \"jobs\": {\"carpenter\": {\"fov\": 1, \"score\": {\"wood\": 1, \"stone\": 1, "              \
    "\"hammer\": 5}}, \"miner\": {\"fov\": 1, \"score\": {\"hammer\": 10}}},"                      \
    " \"static\": {\"resources\": [{\"name\": [\"wood\", \"stone\"], \"positions\": [[0, 0], "     \
    "[0, 0]], \"num\": [3, 1]}], \"recipes\": [{\"name\": \"hammer_craft\", \"positions\": "       \
    "[0, 0]}], \"players\": [{\"job\": \"carpenter\", \"positions\": [[0, 0], [1, 1]]}, "          \
    "{\"job\": \"miner\", \"positions\": [[2, 2], [2, 0]]}]}" extra_society "}},"                  \
    " {\"name\": \"social\", \"params\": {\"social\": {\"relations\": [{\"attributes\": "          \
    "{\"sharing\": {\"Map\": true}}, \"players\": [{\"from\": 0, \"to\": 1}]}], \"groups\": "      \
    "[{\"players\": {\"ids\": [0, 2], \"attributes\": {\"score\": [0.7, 0.3]}}}, {\"players\": "   \
    "{\"ids\": [1], \"attributes\": {\"score\": [1]}}}, {\"players\": {}}]}}}" plugins_after "]}"

#define BASIC SCN("", ", \"metrics\"")

/* The oracle is on (a build with GLPK). */
static const bool ORACLE = METRICS_HAVE_ORACLE;

static cJSON *metrics_json(polis_env *env)
{
    char *text = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "metrics", &text), POLIS_OK);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    if (!j) fprintf(stderr, "not JSON: %s\n", text ? text : "(null)");
    CHECK(j != NULL);
    polis_free(text);
    return j;
}

static double jnum(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *it = j;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && it; k = strtok_r(NULL, ".", &save))
        it = cJSON_GetObjectItemCaseSensitive(it, k);
    if (!it) fprintf(stderr, "no %s\n", path);
    CHECK(it != NULL);
    return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

static bool jnull(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *it = j;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && it; k = strtok_r(NULL, ".", &save))
        it = cJSON_GetObjectItemCaseSensitive(it, k);
    return it && cJSON_IsNull(it);
}

static bool near(double a, double b) { return fabs(a - b) < 1e-9; }

static void step(polis_env *env, const char *a0)
{
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int32_t a = 0; a < 4; a++) io->actions[a] = 0;
    io->actions[0] = polis_env_action_id(env, a0);
    CHECK(io->actions[0] > 0);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_INT(io->illegal[0], 0);
}

static void test_episode(void)
{
    test_log log = {0};
    polis_env *env = test_env(BASIC, &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    /* The oracle: v = max over the jobs (hammer 10): 1 hammer + 2 wood = 12. */
    if (ORACLE) CHECK_CONTAINS(log.text, "[metrics] oracle: 12\n");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);

    cJSON *j = metrics_json(env);
    CHECK(jnum(j, "steps") == 0);
    CHECK(jnull(j, "fairness")); /* every return is 0: undefined, not divided by zero */
    if (ORACLE) {
        CHECK(jnum(j, "oracle") == 12);
        CHECK(jnum(j, "completion.hammer_craft") == 0);
    }
    /* Degrees of the initial graph: in-degrees 1 (g0 -> 0), 2 (g1 -> 1 and 0 -> 1), 1, 0;
     * out-degrees 1, 0, 0, 0; groups 0 and 1 have 2 and 1 members, group 2 is empty and not
     * counted. */
    CHECK(near(jnum(j, "degree.agent.in_mean"), 1.0));
    CHECK(jnum(j, "degree.agent.in_max") == 2);
    CHECK(near(jnum(j, "degree.agent.out_mean"), 0.25));
    CHECK(jnum(j, "degree.agent.out_max") == 1);
    CHECK(near(jnum(j, "degree.group.out_mean"), 1.5));
    CHECK(jnum(j, "degree.group.out_max") == 2);
    CHECK(jnum(j, "degree.group.in_max") == 0);
    /* Split: carpenters 0.7 + 1, miners 0.3 + 1 (miner_3 is in no group: weight 1). */
    CHECK(near(jnum(j, "split_ratio"), 1.7 / 1.3));
    cJSON_Delete(j);

    step(env, "pick_wood");
    step(env, "pick_wood");
    j = metrics_json(env);
    /* returns 2, 0, 0, 0: F = 1 - 12 / (2 * 4 * 2) = 0.25 */
    CHECK(jnum(j, "steps") == 2);
    CHECK(jnum(j, "reward.total") == 2);
    CHECK(near(jnum(j, "reward.mean"), 0.5));
    CHECK(near(jnum(j, "fairness"), 0.25));
    cJSON_Delete(j);

    step(env, "pick_stone");
    step(env, "produce");
    j = metrics_json(env);
    /* returns 6 (1 + 1 + 1 + 5 - 2), 0, 0, 0 */
    CHECK(jnum(j, "reward.total") == 6);
    CHECK(jnum(j, "reward.max") == 6 && jnum(j, "reward.min") == 0);
    CHECK(near(jnum(j, "fairness"), 0.25));
    const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "recipes"), 0);
    CHECK(rec && jnum(rec, "executions") == 1);
    if (ORACLE) {
        CHECK(near(jnum(j, "total_reward_normalised"), 0.5));
        CHECK(near(jnum(j, "mean_reward_normalised"), 1.5 / 12));
        CHECK(jnum(j, "completion.hammer_craft") == 1);
        CHECK(rec && jnum(rec, "oracle") == 1);
    }
    const cJSON *per = cJSON_GetObjectItem(j, "per_agent");
    CHECK_EQ_INT(cJSON_GetArraySize(per), 4);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(per, 2), "agent")),
                 "miner_2");
    cJSON_Delete(j);

    /* The service and the export see the same numbers. */
    double v = 0;
    polis_env_step(env); /* noop for everyone: nothing changes */
    char *text = NULL;
    CHECK_EQ_INT(polis_env_render(env, 3, "metrics", &text), POLIS_OK); /* agent ignored */
    CHECK_CONTAINS(text, "\"fairness\": 0.25,");
    if (ORACLE) CHECK_CONTAINS(text, "\"completion\": {\"hammer_craft\": 1}");
    polis_free(text);
    (void)v;

    /* A reset restarts the episode's numbers. */
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    j = metrics_json(env);
    CHECK(jnum(j, "reward.total") == 0 && jnum(j, "steps") == 0);
    CHECK(jnum(j, "episode") == 2);
    if (ORACLE) CHECK(jnum(j, "completion.hammer_craft") == 0);
    const cJSON *rec2 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "recipes"), 0);
    CHECK(rec2 && jnum(rec2, "executions") == 0);
    cJSON_Delete(j);
    polis_env_destroy(env);
}

/* The service and the Lua export, from a script. */
static void test_service_and_export(void)
{
    const char *script = POLIS_SOURCE_DIR "/plugins/metrics/tests/probe.lua";
    char json[8192];
    snprintf(json, sizeof json, "%.*s, \"scripts\": [\"%s\"]}", (int)strlen(BASIC) - 1, BASIC,
             script);
    test_log log = {0};
    polis_env *env = test_env(json, &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    step(env, "pick_wood");
    step(env, "pick_wood");
    /* probe.lua logs metrics.value of a few keys at every END (it runs before metrics' own
     * END hook, so it sees the previous step's numbers). */
    step(env, "pick_stone");
    if (ORACLE) {
        CHECK_CONTAINS(log.text, "fairness=0.25 total=2 oracle=12 split=1.3077 hammer=0 bogus=nan");
        /* the paper's metric (the total, 2, over the oracle, 12) and the per-agent one (4
         * agents); the old names answer too */
        CHECK_CONTAINS(log.text, "total_normalised=0.16667 mean_normalised=0.041667 "
                                 "old_total=0.16667 old_mean=0.041667");
    } else {
        CHECK_CONTAINS(log.text,
                       "fairness=0.25 total=2 oracle=nan split=1.3077 hammer=nan bogus=nan");
        CHECK_CONTAINS(log.text,
                       "total_normalised=nan mean_normalised=nan old_total=nan old_mean=nan");
    }
    CHECK_CONTAINS(log.text, "picked=nan"); /* not counted: count_events is empty */
    polis_env_destroy(env);
}

static void test_undefined(void)
{
    /* No social plugin: no degrees or split ratio; no society: no oracle or completion. */
    const char *only = "{\"agents\": 2, \"max_steps\": 5, \"plugins\": [\"metrics\"]}";
    polis_env *env = test_env(only, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    char *text = NULL;
    CHECK_EQ_INT(polis_env_render(env, 1, "metrics", &text), POLIS_OK);
    CHECK_EQ_STR(text, "{\"episode\": 1, \"steps\": 0, \"reward\": {\"mean\": 0, \"total\": 0, "
                       "\"min\": 0, \"max\": 0}, \"per_agent\": [{\"agent\": \"agent_0\", "
                       "\"reward\": 0}, {\"agent\": \"agent_1\", \"reward\": 0}], \"fairness\": "
                       "null, \"oracle\": null, \"total_reward_normalised\": null, "
                       "\"mean_reward_normalised\": null}");
    polis_free(text);
    polis_env_destroy(env);

    /* Random amounts count at their maximum: wood 2 piles of 1..4 = 8. */
    const char *rnd =
        "{\"agents\": 1, \"max_steps\": 5, \"plugins\": [{\"name\": \"society\", \"params\": {"
        "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 4, \"y\": 4}}, \"random\": "
        "{\"resources\": [{\"name\": \"wood\", \"num\": {\"rule\": \"random\", \"min\": 1, "
        "\"max\": 4}, \"repeat\": 2}], \"players\": [{\"job\": \"explorer\"}]}}}, \"metrics\"]}";
    test_log log = {0};
    env = test_env(rnd, &log, NULL);
    CHECK(env != NULL);
    if (env) polis_env_destroy(env);
    if (ORACLE) CHECK_CONTAINS(log.text, "[metrics] oracle: 8\n");

    /* oracle: false skips the solver. */
    const char *off =
        "{\"agents\": 1, \"max_steps\": 5, \"plugins\": [{\"name\": \"society\", \"params\": {"
        "\"map\": {\"init_rule\": \"blank\", \"size\": {\"x\": 4, \"y\": 4}}, \"random\": "
        "{\"resources\": [{\"name\": \"wood\", \"num\": 1, \"repeat\": 1}], \"players\": "
        "[{\"job\": "
        "\"explorer\"}]}}}, {\"name\": \"metrics\", \"params\": "
        "{\"oracle\": false}}]}";
    env = test_env(off, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_render(env, 0, "metrics", &text), POLIS_OK);
    CHECK_CONTAINS(text, "\"oracle\": null,");
    CHECK_CONTAINS(text, "\"completion\": {}, \"recipes\": []");
    polis_free(text);
    polis_env_destroy(env);
}

/* A build without GLPK: the oracle is off, says why (log and rendering), and the metrics that
 * need it are undefined; the others are as with it. */
static void test_oracle_off(void)
{
    if (ORACLE) return;
    test_log log = {0};
    polis_env *env = test_env(BASIC, &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_CONTAINS(log.text, "[metrics] oracle: off: polis was built without GLPK (install "
                             "libglpk-dev and reconfigure)\n");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    step(env, "pick_wood");
    step(env, "pick_wood");
    step(env, "pick_stone");
    step(env, "produce");
    cJSON *j = metrics_json(env);
    CHECK(jnum(j, "reward.total") == 6);
    CHECK(near(jnum(j, "fairness"), 0.25));
    CHECK(jnull(j, "oracle"));
    CHECK(jnull(j, "total_reward_normalised"));
    CHECK(jnull(j, "mean_reward_normalised"));
    CHECK(jnull(j, "completion.hammer_craft"));
    const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "recipes"), 0);
    CHECK(rec && jnum(rec, "executions") == 1 && jnull(rec, "oracle"));
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "oracle_status")),
                 "off: polis was built without GLPK (install libglpk-dev and reconfigure)");
    CHECK(near(jnum(j, "split_ratio"), 1.7 / 1.3));
    cJSON_Delete(j);
    polis_env_destroy(env);
}

/* count_events: how often each named event type was published this episode (the generic
 * part: any game's events). */
static void test_counts(void)
{
    const char *scn = SCN("", ", {\"name\": \"metrics\", \"params\": {\"count_events\": "
                              "\" resource.picked ,recipe.produced\"}}");
    test_alloc al = {0};
    polis_env *env = test_env(scn, NULL, &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    long before = al.calls;
    step(env, "pick_wood");
    step(env, "pick_wood");
    step(env, "pick_stone");
    step(env, "produce");
    CHECK_EQ_INT(al.calls, before); /* counting allocates nothing */
    cJSON *j = metrics_json(env);
    const cJSON *ev = cJSON_GetObjectItem(j, "events");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "resource.picked")) == 3);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(ev, "recipe.produced")) == 1);
    cJSON_Delete(j);
    char *text = NULL;
    CHECK_EQ_INT(polis_env_render(env, 0, "metrics", &text), POLIS_OK);
    CHECK_CONTAINS(text, ", \"events\": {\"resource.picked\": 3, \"recipe.produced\": 1}}");
    polis_free(text);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    j = metrics_json(env);
    CHECK(cJSON_GetNumberValue(
              cJSON_GetObjectItem(cJSON_GetObjectItem(j, "events"), "resource.picked")) == 0);
    cJSON_Delete(j);
    polis_env_destroy(env);

    /* The export answers "events.<name>" (probe.lua logs it at every END). */
    char json[8192];
    snprintf(json, sizeof json, "%.*s, \"scripts\": [\"%s\"]}", (int)strlen(scn) - 1, scn,
             POLIS_SOURCE_DIR "/plugins/metrics/tests/probe.lua");
    test_log log = {0};
    env = test_env(json, &log, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    step(env, "pick_wood");
    step(env, "pick_wood");
    CHECK_CONTAINS(log.text, "picked=2\n");
    polis_env_destroy(env);

    /* Without count_events the rendering has no "events" (test_undefined pins it whole). */
    env = test_env(BASIC, NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_render(env, 0, "metrics", &text), POLIS_OK);
    CHECK(strstr(text, "\"events\"") == NULL);
    polis_free(text);
    polis_env_destroy(env);

#define COUNT_ERROR(names)                                                                         \
    test_env_error(                                                                                \
        SCN("", ", {\"name\": \"metrics\", \"params\": {\"count_events\": \"" names "\"}}"))
    CHECK_CONTAINS(COUNT_ERROR("resource.picked,no.such"),
                   "metrics: params.count_events: no event type \"no.such\" in this scenario "
                   "(`polis describe` lists them)");
    CHECK_CONTAINS(COUNT_ERROR("resource.picked,,recipe.produced"),
                   "metrics: params.count_events: name 2 of \"resource.picked,,recipe.produced\" "
                   "is empty (event type names have 1 to 63 characters)");
    CHECK_CONTAINS(COUNT_ERROR("a234567890123456789012345678901234567890123456789012345678901234"),
                   "is too long");
    CHECK_CONTAINS(COUNT_ERROR("resource.picked, resource.picked"),
                   "metrics: params.count_events: \"resource.picked\" is named twice");
    CHECK_CONTAINS(COUNT_ERROR("a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a"),
                   "metrics: params.count_events: 33 names, at most 32");
#undef COUNT_ERROR
}

static void test_errors(void)
{
    CHECK_CONTAINS(
        test_env_error("{\"agents\": 1, \"plugins\": [\"metrics\", {\"name\": "
                       "\"society\", \"params\": {\"map\": {\"init_rule\": "
                       "\"blank\", \"size\": {\"x\": 4, \"y\": 4}}, \"random\": "
                       "{\"resources\": [{\"name\": \"wood\", \"num\": 1, \"repeat\": 1}], "
                       "\"players\": [{\"job\": \"explorer\"}]}}}]}"),
        "metrics: list \"metrics\" after \"society\" in the scenario's plugins: the "
        "oracle is computed from society's content when metrics starts");
    CHECK_CONTAINS(test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"metrics\", "
                                  "\"params\": {\"split_jobs\": \"carpenter\"}}]}"),
                   "metrics: params.split_jobs: expected two job-name prefixes "
                   "\"numerator,denominator\" of 1 to 63 characters, got \"carpenter\"");
    CHECK_CONTAINS(test_env_error("{\"agents\": 1, \"plugins\": [{\"name\": \"metrics\", "
                                  "\"params\": {\"oracle_time_limit\": 0}}]}"),
                   "oracle_time_limit");
}

/* Stepping with metrics allocates nothing; creation fails cleanly at every allocation. */
static void test_allocation(void)
{
    test_alloc al = {0};
    polis_env *env = test_env(BASIC, NULL, &al);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    long before = al.calls;
    polis_io *io = (polis_io *)polis_env_io(env);
    for (int ep = 0; ep < 20; ep++) {
        while (!polis_env_done(env)) {
            for (int32_t a = 0; a < 4; a++) io->actions[a] = (ep + a) % io->n_actions;
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        CHECK_EQ_INT(polis_env_reset(env, (uint64_t)ep), POLIS_OK);
    }
    CHECK_EQ_INT(al.calls, before);
    polis_env_destroy(env);
    CHECK_EQ_INT(al.live, 0);

    int failures = 0;
    for (long n = 1; n < 100000; n++) {
        test_alloc fa = {.fail_at = n};
        polis_options o = test_options(NULL, &fa);
        polis_env *e = NULL;
        polis_error err;
        polis_status st = polis_env_create_json(BASIC, strlen(BASIC), &o, &e, &err);
        if (st == POLIS_OK) {
            if (polis_env_reset(e, 1) != POLIS_OK) failures++;
            polis_env_destroy(e);
            CHECK_EQ_INT(fa.live, 0);
            if (!fa.failed) break;
            continue;
        }
        failures++;
        CHECK(st == POLIS_ERR_NOMEM || st == POLIS_ERR_PLUGIN || st == POLIS_ERR_CONFIG);
        CHECK_EQ_INT(fa.live, 0);
    }
    CHECK(failures > 20);
}

int main(void)
{
    test_episode();
    test_service_and_export();
    test_undefined();
    test_oracle_off();
    test_counts();
    test_errors();
    test_allocation();
    CHECK_DONE();
}
