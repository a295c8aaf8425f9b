/* Shared observation fields (the "shared_observations" host API; polis_env_shared_*,
 * polis_vec_shared_obs), through the shared_probe test plugin: the layout beside the
 * per-agent record, one write per pass with agent -1, the state hash covering them, no
 * allocation in the step, no_observations and compact observations, every refused
 * registration with its message, vecs, and out-of-memory failures without a leak. */
#include "check.h"
#include "testutil.h"

#include "polis/vec.h"

#define PROBE(mode, value)                                                                         \
    "{\"agents\": 3, \"max_steps\": 5, \"plugins\": [{\"name\": \"shared_probe\", \"params\": "    \
    "{\"mode\": \"" mode "\", \"value\": " #value "}}]}"

static const int32_t *board(polis_env *env)
{
    size_t size = 0;
    const int32_t *b = polis_env_shared_obs(env, &size);
    CHECK_EQ_INT(size, 16);
    return b;
}

static void test_layout_and_writes(void)
{
    test_alloc alloc = {0};
    polis_env *env = test_env(PROBE("ok", 7), NULL, &alloc);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(polis_env_n_shared_fields(env), 1);
    CHECK_EQ_INT(polis_env_n_obs_fields(env), 1);
    CHECK_EQ_INT(polis_env_io(env)->obs_size, 8); /* "me" alone: the board is not in it */
    polis_obs_field f;
    CHECK_EQ_INT(polis_env_shared_field(env, 0, &f), POLIS_OK);
    CHECK_EQ_STR(f.name, "board");
    CHECK_EQ_STR(f.doc, "tick, calls, agent argument, value");
    CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I32);
    CHECK_EQ_INT(f.ndim, 2);
    CHECK_EQ_INT(f.shape[0], 2);
    CHECK_EQ_INT(f.shape[1], 2);
    CHECK_EQ_INT(f.shape[2], 0);
    CHECK_EQ_INT(f.offset, 0);
    CHECK_EQ_INT(f.nbytes, 16);
    CHECK_EQ_INT(polis_env_shared_field(env, 1, &f), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_shared_field(env, -1, &f), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_shared_field(env, 0, NULL), POLIS_ERR_INVALID);
    CHECK_EQ_INT(polis_env_shared_find(env, "board"), 0);
    CHECK_EQ_INT(polis_env_shared_find(env, "me"), -1);
    CHECK_EQ_INT(polis_env_shared_find(env, NULL), -1);
    const int32_t *b = board(env);
    CHECK(b != NULL);
    if (!b) {
        polis_env_destroy(env);
        return;
    }
    CHECK_EQ_INT(b[1], 0); /* not written before the first reset */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(b[0], 0);
    CHECK_EQ_INT(b[1], 1); /* one write for three agents */
    CHECK_EQ_INT(b[2], -1);
    CHECK_EQ_INT(b[3], 7);
    long calls = alloc.calls;
    for (int t = 1; t <= 3; t++) {
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(b[0], t);
        CHECK_EQ_INT(b[1], t + 1);
        CHECK_EQ_INT(b[2], -1);
        CHECK(board(env) == b); /* the same address for the env's life */
    }
    CHECK_EQ_INT(alloc.calls, calls); /* nothing allocated in the step */
    for (int a = 0; a < 3; a++)
        CHECK_EQ_INT(*(const int32_t *)test_obs_field(env, a, "me", NULL), a);
    polis_env_destroy(env);
    CHECK_EQ_INT(alloc.live, 0);

    /* an env without shared fields */
    env = test_env("{\"agents\": 2, \"plugins\": [\"probe\"]}", NULL, NULL);
    CHECK(env != NULL);
    if (!env) return;
    size_t size = 99;
    CHECK(polis_env_shared_obs(env, &size) == NULL);
    CHECK_EQ_INT(size, 0);
    CHECK_EQ_INT(polis_env_n_shared_fields(env), 0);
    polis_env_destroy(env);
    CHECK_EQ_INT(polis_env_n_shared_fields(NULL), 0);
    CHECK(polis_env_shared_obs(NULL, NULL) == NULL);
}

/* The hash covers the shared buffer: two envs differing only in it hash differently, and
 * the same env hashes the same. */
static void test_hash(void)
{
    polis_env *a = test_env(PROBE("ok", 1), NULL, NULL), *b = test_env(PROBE("ok", 2), NULL, NULL),
              *c = test_env(PROBE("ok", 1), NULL, NULL);
    CHECK(a && b && c);
    if (a && b && c) {
        CHECK_EQ_INT(polis_env_reset(a, 3), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(b, 3), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(c, 3), POLIS_OK);
        CHECK(polis_env_state_hash(a) != polis_env_state_hash(b));
        CHECK(polis_env_state_hash(a) == polis_env_state_hash(c));
        const void *ptr[POLIS_STATE_PARTS];
        size_t len[POLIS_STATE_PARTS];
        int32_t k = polis_env_state_parts(a, ptr, len);
        bool found = false;
        for (int32_t i = 0; i < k; i++) found |= ptr[i] == polis_env_shared_obs(a, NULL);
        CHECK(found);
    }
    polis_env_destroy(a);
    polis_env_destroy(b);
    polis_env_destroy(c);
}

static void test_options_apply(void)
{
    /* no_observations: the writer does not run, the buffer stays zero */
    polis_options o = test_options(NULL, NULL);
    o.no_observations = true;
    polis_env *env = NULL;
    polis_error err;
    const char *j = PROBE("ok", 7);
    CHECK_EQ_INT(polis_env_create_json(j, strlen(j), &o, &env, &err), POLIS_OK);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        const int32_t *b = board(env);
        CHECK(b && b[1] == 0 && b[3] == 0);
        polis_env_destroy(env);
    }
    /* compact observations leave shared fields in their registered dtype */
    o.no_observations = false;
    o.compact_observations = true;
    env = NULL;
    CHECK_EQ_INT(polis_env_create_json(j, strlen(j), &o, &env, &err), POLIS_OK);
    if (env) {
        polis_obs_field f;
        CHECK_EQ_INT(polis_env_shared_field(env, 0, &f), POLIS_OK);
        CHECK_EQ_INT(f.dtype, POLIS_DTYPE_I32);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(board(env)[3], 7);
        polis_env_destroy(env);
    }
}

static void test_refusals(void)
{
    const char *pre = "<string>: plugins[0]: plugin \"shared_probe\" init failed: shared_probe: ";
    char want[512];
#define REFUSED(mode, msg)                                                                         \
    snprintf(want, sizeof want, "%s%s", pre, msg);                                                 \
    CHECK_EQ_STR(test_env_error(PROBE(mode, 0)), want)
    REFUSED("dup_agent", "shared observation \"me\" is already registered (per agent) by "
                         "shared_probe");
    REFUSED("dup_shared", "observation \"board\" is already registered (shared) by shared_probe");
    REFUSED("twice", "shared observation \"board\" is already registered by shared_probe");
    REFUSED("badshape", "shared observation board: shape[1] = 0 is outside [1, 16777216]");
    REFUSED("ndim", "shared observation board: ndim 5 is outside [1, 4]");
    REFUSED("nowrite", "shared observation board: write function is NULL");
    REFUSED("null", "shared observation ?: definition is NULL");
#undef REFUSED
    snprintf(want, sizeof want,
             "%shost API \"shared_observations\" version %d is newer than this engine's (polis "
             "%s has version %d; rebuild the plugin for it, or update polis)",
             pre, POLIS_SHARED_OBS_API_VERSION + 1, POLIS_VERSION_STRING,
             POLIS_SHARED_OBS_API_VERSION);
    CHECK_EQ_STR(test_env_error(PROBE("future", 0)), want);
    /* after registration closed: the reset fails, placed */
    polis_env *env = test_env(PROBE("late", 0), NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_ERR_STATE);
        CHECK_CONTAINS(polis_env_error(env),
                       "shared_probe: shared observation: registration is closed once the env is "
                       "created (register in init or start)");
        polis_env_destroy(env);
    }
}

static void test_vec(void)
{
    polis_options o = test_options(NULL, NULL);
    polis_vec *v = NULL;
    polis_error err;
    const char *j = PROBE("ok", 4);
    CHECK_EQ_INT(polis_vec_create_json(j, strlen(j), &o, 3, 1, &v, &err), POLIS_OK);
    if (!v) return;
    CHECK_EQ_INT(polis_vec_reset(v, 9), POLIS_OK);
    CHECK_EQ_INT(polis_vec_step(v), POLIS_OK);
    const void *prev = NULL;
    for (int32_t k = 0; k < 3; k++) {
        size_t size = 0;
        const int32_t *b = polis_vec_shared_obs(v, k, &size);
        CHECK_EQ_INT(size, 16);
        CHECK(b != NULL && b != prev);
        CHECK(b == polis_env_shared_obs(polis_vec_env(v, k), NULL));
        if (b) CHECK(b[0] == 1 && b[1] == 2 && b[2] == -1 && b[3] == 4);
        prev = b;
    }
    size_t size = 5;
    CHECK(polis_vec_shared_obs(v, 3, &size) == NULL);
    CHECK_EQ_INT(size, 0);
    CHECK(polis_vec_shared_obs(v, -1, NULL) == NULL);
    CHECK(polis_vec_shared_obs(NULL, 0, NULL) == NULL);
    polis_vec_destroy(v);
}

/* Every allocation of create failing in turn: a clean NOMEM, nothing leaked. */
static void test_out_of_memory(void)
{
    const char *j = PROBE("ok", 1);
    test_alloc probe = {0};
    polis_env *env = test_env(j, NULL, &probe);
    CHECK(env != NULL);
    polis_env_destroy(env);
    for (long k = 1; k <= probe.calls; k++) {
        test_alloc al = {.fail_at = k};
        polis_options o = test_options(NULL, &al);
        polis_error err;
        env = NULL;
        polis_status st = polis_env_create_json(j, strlen(j), &o, &env, &err);
        if (st == POLIS_OK) {
            CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
            polis_env_destroy(env);
        } else if (st != POLIS_ERR_NOMEM && st != POLIS_ERR_PLUGIN) {
            fprintf(stderr, "allocation %ld failing: %s\n", k, err.message);
            CHECK(false);
        }
        CHECK_EQ_INT(al.live, 0);
    }
}

int main(void)
{
    test_layout_and_writes();
    test_hash();
    test_options_apply();
    test_refusals();
    test_vec();
    test_out_of_memory();
    CHECK_DONE();
}
