/* bus.c: subscriber order by priority, events published during dispatch delivered after the
 * current one (FIFO, same tick), host subscribers last, queue overflow is an error, a failing
 * subscriber names the event and tick, field introspection; an event no plugin subscribes to
 * reaches the host subscribers of every event as one with subscribers does. */
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

/* Every event a host subscriber of every event saw: type, seq, tick and its fields' bytes (not
 * the padding between them, which the publisher need not have set). */
typedef struct trace {
    const polis_env *env;
    char *text;
    size_t len, cap;
} trace;

static void host_trace(void *ud, const polis_event *ev)
{
    trace *t = ud;
    size_t n = polis_env_event_size(t->env, ev->type);
    int32_t nf = polis_env_event_n_fields(t->env, ev->type);
    if (t->len + 64 + 2 * n + (size_t)nf > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1 << 16;
        while (cap < t->len + 64 + 2 * n + (size_t)nf) cap *= 2;
        char *p = realloc(t->text, cap);
        if (!p) return;
        t->text = p;
        t->cap = cap;
    }
    t->len += (size_t)snprintf(t->text + t->len, t->cap - t->len, "%d/%llu/%lld/", ev->type,
                               (unsigned long long)ev->seq, (long long)ev->tick);
    for (int32_t f = 0; f < nf; f++) {
        const char *name;
        polis_ftype ft;
        size_t off;
        if (polis_env_event_field(t->env, ev->type, f, &name, &ft, &off) != POLIS_OK) continue;
        size_t size = ft == POLIS_FIELD_I64 || ft == POLIS_FIELD_F64 ? 8 : 4;
        for (size_t i = off; i < off + size && i < n; i++)
            t->len += (size_t)snprintf(t->text + t->len, t->cap - t->len, "%02x",
                                       ((const unsigned char *)ev->data)[i]);
        t->text[t->len++] = ' ';
    }
    t->text[t->len++] = '\n';
}

static void host_none(void *ud, const polis_event *ev)
{
    (void)ud;
    (void)ev;
}

/* Exploration with social actions (social events no plugin subscribes to: the bus hands them
 * straight to the host subscribers of every event) against the same run with a host
 * subscriber of each type too (every event through the whole publish): the same events, in
 * the same order, with the same numbers and data. */
static void test_host_only(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rulesets/exploration/exploration.json", POLIS_SOURCE_DIR);
    trace t[2] = {{0}, {0}};
    for (int k = 0; k < 2; k++) {
        polis_env *env = test_env_file(path, NULL);
        CHECK(env != NULL);
        if (!env) return;
        t[k].env = env;
        CHECK_EQ_INT(polis_env_subscribe(env, -1, host_trace, &t[k]), POLIS_OK);
        for (int32_t ty = 0; k == 1 && ty < polis_env_n_event_types(env); ty++)
            CHECK_EQ_INT(polis_env_subscribe(env, ty, host_none, NULL), POLIS_OK);
        const polis_io *io = polis_env_io(env);
        CHECK_EQ_INT(polis_env_reset(env, 7), POLIS_OK);
        for (int step = 0; step < 200; step++) {
            for (int32_t a = 0; a < io->n_agents; a++)
                io->actions[a] = (int32_t)((step * 13 + a * 7) % io->n_actions);
            CHECK_EQ_INT(polis_env_step(env), POLIS_OK);
        }
        polis_env_destroy(env);
    }
    CHECK(t[0].len > 10000 && strstr(t[0].text ? t[0].text : "", "\n") != NULL);
    CHECK_EQ_INT((long long)t[0].len, (long long)t[1].len);
    CHECK(t[0].text && t[1].text && t[0].len == t[1].len &&
          memcmp(t[0].text, t[1].text, t[0].len) == 0);
    free(t[0].text);
    free(t[1].text);
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
    test_host_only();
    CHECK_DONE();
}
