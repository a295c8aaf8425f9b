/* bus.c: subscriber order by priority, events published during dispatch delivered after the
 * current one (FIFO, same tick), host subscribers last, queue overflow is an error, a failing
 * subscriber names the event and tick, field introspection. */
#include "check.h"
#include "testutil.h"

typedef struct seen {
    char text[4096];
    size_t len;
} seen;

static void host_any(void *ud, const polis_event *ev)
{
    seen *s = ud;
    s->len += (size_t)snprintf(s->text + s->len, sizeof s->text - s->len, "any:%d/%llu ", ev->type,
                               (unsigned long long)ev->seq);
}

static void host_b(void *ud, const polis_event *ev)
{
    seen *s = ud;
    s->len += (size_t)snprintf(s->text + s->len, sizeof s->text - s->len, "hostb:%d ",
                               *(const int32_t *)ev->data);
}

static const char *BUS = "{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                         "\"params\": {\"mode\": \"bus\"}}]}";

int main(void)
{
    test_log log = {0};
    polis_env *env = test_env(BUS, &log, NULL);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();

    int32_t a = polis_env_event_find(env, "probe.a"), b = polis_env_event_find(env, "probe.b");
    CHECK(a >= 0 && b >= 0);
    CHECK_EQ_INT(polis_env_n_event_types(env), 2);
    CHECK_EQ_STR(polis_env_event_name(env, a), "probe.a");
    CHECK_EQ_INT(polis_env_event_n_fields(env, a), 2);
    const char *fname;
    polis_ftype ft;
    size_t off;
    CHECK_EQ_INT(polis_env_event_field(env, a, 1, &fname, &ft, &off), POLIS_OK);
    CHECK_EQ_STR(fname, "v");
    CHECK_EQ_INT(ft, POLIS_FIELD_F64);
    CHECK_EQ_INT(off, 8); /* natural alignment after an i32 */
    CHECK_EQ_INT(polis_env_event_size(env, a), 16);
    CHECK_EQ_INT(polis_env_event_field(env, a, 2, &fname, &ft, &off), POLIS_ERR_INVALID);

    seen s = {{0}, 0};
    CHECK_EQ_INT(polis_env_subscribe(env, -1, host_any, &s), POLIS_OK);
    CHECK_EQ_INT(polis_env_subscribe(env, b, host_b, &s), POLIS_OK);
    CHECK_EQ_INT(polis_env_subscribe(env, 99, host_b, &s), POLIS_ERR_INVALID);

    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_subscribe(env, b, host_b, &s), POLIS_ERR_STATE);
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_EQ_STR(log.text, "[probe] a(-1) n=0 v=0.5 seq=0\n"
                           "[probe] a(5) n=0\n"
                           "[probe] a(5) done\n"
                           "[probe] b n=0\n"
                           "[probe] b n=1\n"
                           "[probe] post published, status 0\n");
    CHECK_EQ_STR(s.text, "any:0/0 hostb:0 any:1/1 hostb:1 any:1/2 ");
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
    CHECK_CONTAINS(log.text, "[probe] a(-1) n=1 v=0.5 seq=3\n");
    polis_env_destroy(env);

    /* 100 events published inside one dispatch overflow a 16-slot queue: an error, not a
     * silent drop. */
    env = test_env("{\"agents\": 1, \"event_queue\": 16, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"flood\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_LIMIT);
        CHECK_EQ_STR(polis_env_error(env),
                     "probe: publish probe.b: the event queue is full (16 events published "
                     "during one dispatch); raise \"event_queue\" in the scenario "
                     "[event probe.a, tick 0]");
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        polis_env_destroy(env);
    }
    /* The same flood fits a larger queue. */
    env = test_env("{\"agents\": 1, \"event_queue\": 128, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"flood\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        polis_env_destroy(env);
    }

    /* A subscriber failing at tick 1: placed at the event, not again at the hook. */
    env = test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", "
                   "\"params\": {\"mode\": \"fail_sub\"}}]}",
                   NULL, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        CHECK_EQ_INT(polis_env_step(env), POLIS_ERR_INVALID);
        CHECK_EQ_STR(polis_env_error(env), "probe: subscriber refuses n=1 [event probe.a, tick 1]");
        polis_env_destroy(env);
    }
    CHECK_DONE();
}
