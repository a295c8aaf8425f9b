/* The graph: the initial structure in AdaSociety's shapes, the flattening of attribute
 * values, group ids, bus events, the observations, the schedule's rebuild, service reads. */
#include "fixture.h"

/* AdaSociety's shapes: a named sharing relation, a weighted group, an empty group, a group
 * whose member joins with no attribute. */
static const char *STRUCTURE =
    "{\"social_state\": true, \"social\": {"
    "\"relations\": [{\"name\": \"share_obs\", \"attributes\": {\"sharing\": {\"Map\": true}},"
    "                 \"players\": [{\"from\": 0, \"to\": 1}, {\"from\": 2, \"to\": 1}],"
    "                 \"requests\": [], \"offers\": []}],"
    "\"groups\": [{\"name\": \"group_0\", \"players\": {\"ids\": [0, 1],"
    "              \"attributes\": {\"division_weight\": [0.85, 0.15]}}},"
    "            {\"name\": \"empty\", \"players\": {}},"
    "            {\"players\": {\"ids\": [3]}}]}}";

static void test_initial_structure(void)
{
    test_log log = {0};
    polis_env *env = sg_env(4, 100, STRUCTURE,
                            "{\"log_events\": true, \"watch\": 1, \"queries\": ["
                            "[0, 1, \"sharing.Map\"], [0, 1, \"name.share_obs\"],"
                            "[4, 0, \"division_weight\"], [4, 1, \"division_weight\"],"
                            "[6, 3, \"edge\"], [1, 0, \"sharing.Map\"], [0, 1, \"sharing\"]]}",
                            &log);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(log.text, "[social_probe] set a0->a1 name.share_obs=1\n"
                           "[social_probe] set a0->a1 sharing.Map=1\n"
                           "[social_probe] set a2->a1 name.share_obs=1\n"
                           "[social_probe] set a2->a1 sharing.Map=1\n"
                           "[social_probe] created g0\n"
                           "[social_probe] set g0->a0 division_weight=0.85\n"
                           "[social_probe] joined g0 a0\n"
                           "[social_probe] set g0->a1 division_weight=0.15\n"
                           "[social_probe] joined g0 a1\n"
                           "[social_probe] created g1\n"
                           "[social_probe] created g2\n"
                           "[social_probe] set g2->a3 edge=1\n"
                           "[social_probe] joined g2 a3\n");
    CHECK_NEAR(sg_q(env, 0), 1.0);
    CHECK_NEAR(sg_q(env, 1), 1.0);
    CHECK_NEAR(sg_q(env, 2), 0.85);
    CHECK_NEAR(sg_q(env, 3), 0.15);
    CHECK_NEAR(sg_q(env, 4), 1.0);
    CHECK_ABSENT(sg_q(env, 5));
    CHECK_ABSENT(sg_q(env, 6)); /* the dict itself is not an attribute, its members are */
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "2: 0 2");
    CHECK_EQ_STR(sg_list(env, "probe_groups"), "1: 0");
    CHECK_EQ_STR(sg_list(env, "probe_members"), "2: 0 1");
    CHECK_EQ_STR(sg_list(env, "probe_live"), "3: 0 1 2");
    const int32_t *deg = sg_obs(env, 0, "probe_degree");
    CHECK_EQ_INT(deg[0], 0); /* agent 1 sends nothing */
    CHECK_EQ_INT(deg[1], 3); /* from 0, 2 and group 0 */

    /* social_state[to][from], 4 agents + 3 groups */
    const int8_t *ss = sg_obs(env, 2, "social_state");
    int ones = 0;
    for (int i = 0; i < 49; i++) ones += ss[i];
    CHECK_EQ_INT(ones, 5);
    CHECK_EQ_INT(ss[1 * 7 + 0], 1);
    CHECK_EQ_INT(ss[1 * 7 + 2], 1);
    CHECK_EQ_INT(ss[0 * 7 + 4], 1);
    CHECK_EQ_INT(ss[1 * 7 + 4], 1);
    CHECK_EQ_INT(ss[3 * 7 + 6], 1);
    CHECK_EQ_INT(ss[0 * 7 + 1], 0);

    const int8_t *pid = sg_obs(env, 2, "player_id");
    for (int i = 0; i < 7; i++) CHECK_EQ_INT(pid[i], i == 2);

    /* a reset rebuilds the same graph (no events of the old one) */
    test_log_clear(&log);
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(log.lines, 13);
    CHECK_EQ_STR(sg_list(env, "probe_live"), "3: 0 1 2");
    polis_env_destroy(env);
}

/* Dicts, lists, strings, booleans and empty containers flatten under their key. */
static void test_value_mapping(void)
{
    test_log log = {0};
    polis_env *env = sg_env(
        2, 100,
        "{\"social\": {\"relations\": [{\"attributes\": {\"a\": [1, 2], \"b\": \"x\", "
        "\"c\": {\"d\": {\"e\": false}}, \"f\": {}, \"g\": [], \"h\": -3.5}, "
        "\"players\": [{\"from\": 1, \"to\": 0}]}, {\"players\": [{\"from\": 0, \"to\": 1}]}]}}",
        "{\"log_events\": true, \"queries\": [[1, 0, \"a.0\"], [1, 0, \"a.1\"], [1, 0, \"b.x\"],"
        "[1, 0, \"c.d.e\"], [1, 0, \"f\"], [1, 0, \"g\"], [1, 0, \"h\"], [0, 1, \"edge\"]]}",
        &log);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_NEAR(sg_q(env, 0), 1);
    CHECK_NEAR(sg_q(env, 1), 2);
    CHECK_NEAR(sg_q(env, 2), 1);
    CHECK_NEAR(sg_q(env, 3), 0);
    CHECK_NEAR(sg_q(env, 4), 0);
    CHECK_NEAR(sg_q(env, 5), 0);
    CHECK_NEAR(sg_q(env, 6), -3.5);
    CHECK_NEAR(sg_q(env, 7), 1); /* a relation without attributes still makes an edge */
    CHECK_CONTAINS(log.text, "set a1->a0 c.d.e=0\n");
    polis_env_destroy(env);
}

/* Group ids are sequential, never reused within a graph, and restart at 0 when a schedule
 * snapshot rebuilds the graph (old graph removed with events, then the snapshot built, then
 * social.schedule_applied). */
static void test_group_ids_and_schedule(void)
{
    test_log log = {0};
    polis_env *env = sg_env(
        3, 100,
        "{\"max_groups\": 4, \"social\": {\"groups\": [{\"players\": {\"ids\": [0], "
        "\"attributes\": {\"w\": [1]}}}, {}]},"
        " \"social_schedule\": {\"3\": {\"relations\": [{\"attributes\": {\"r\": 1}, "
        "\"players\": [{\"from\": 2, \"to\": 0}]}], \"groups\": [{\"players\": {\"ids\": [2], "
        "\"attributes\": {\"w\": [0.5]}}}]}}}",
        "{\"log_events\": true, \"ops\": [{\"tick\": 0, \"op\": \"group_delete\", \"group\": 1},"
        "{\"tick\": 1, \"op\": \"group_create\"}, {\"tick\": 1, \"op\": \"set\", \"from\": 1, "
        "\"to\": 2, \"attr\": \"x\", \"value\": 7}]}",
        &log);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_STR(sg_list(env, "probe_live"), "2: 0 1");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_live"), "1: 0");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_live"), "2: 0 2");
    test_log_clear(&log);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK); /* step 3 completes: the snapshot applies */
    CHECK_EQ_STR(log.text, "[social_probe] unset a1->a2 x=7\n"
                           "[social_probe] unset g0->a0 w=1\n"
                           "[social_probe] quit g0 a0\n"
                           "[social_probe] deleted g0\n"
                           "[social_probe] deleted g2\n"
                           "[social_probe] set a2->a0 r=1\n"
                           "[social_probe] created g0\n"
                           "[social_probe] set g0->a2 w=0.5\n"
                           "[social_probe] joined g0 a2\n"
                           "[social_probe] schedule step 3 snapshot 0\n");
    CHECK_EQ_STR(sg_list(env, "probe_live"), "1: 0");
    /* the next episode starts from the initial structure again */
    CHECK_EQ_INT(polis_env_reset(env, 5), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_live"), "2: 0 1");
    polis_env_destroy(env);
}

/* Service reads and writes through the probe: unset, unset_family, remove_edge, self-loops
 * (allowed, but not sharers), sharers of the player view. */
static void test_service_edges(void)
{
    polis_env *env = sg_env(
        3, 100, "{}",
        "{\"watch\": 0, \"ops\": ["
        "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Player\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 0},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 0, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 1},"
        "{\"tick\": 1, \"op\": \"unset_family\", \"from\": 1, \"to\": 0, \"attr\": \"sharing\"},"
        "{\"tick\": 1, \"op\": \"unset\", \"from\": 2, \"to\": 0, \"attr\": \"nothing\"},"
        "{\"tick\": 2, \"op\": \"remove_edge\", \"from\": 2, \"to\": 0},"
        "{\"tick\": 2, \"op\": \"remove_edge\", \"from\": 1, \"to\": 2}],"
        "\"queries\": [[0, 0, \"sharing.Map\"], [2, 0, \"sharing.Map\"]]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "1: 1"); /* 2 has Map = 0; 0 is self */
    CHECK_EQ_STR(sg_list(env, "probe_sharers_player"), "1: 1");
    CHECK_NEAR(sg_q(env, 0), 1);
    const int32_t *deg = sg_obs(env, 0, "probe_degree");
    CHECK_EQ_INT(deg[0], 1);
    CHECK_EQ_INT(deg[1], 3);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "0:");
    CHECK_EQ_STR(sg_list(env, "probe_sharers_player"), "0:");
    CHECK_EQ_INT(deg[1], 2);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_ABSENT(sg_q(env, 1));
    CHECK_EQ_INT(deg[1], 1);
    polis_env_destroy(env);
}

/* An agent's in-edges stay sorted by source however they arrive (probe_sharers walks them
 * in order), with the per-target source bitmaps (graph.c in_before) and, past SG_IN_SRC_MAX
 * nodes, without them (max_groups 8200: the walk back from the tail). */
static void test_in_list_order(const char *social)
{
    polis_env *env =
        sg_env(7, 100, social,
               "{\"ops\": ["
               "{\"tick\": 0, \"op\": \"set\", \"from\": 5, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 0, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 0, \"op\": \"set\", \"from\": 6, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 0, \"op\": \"set\", \"from\": 4, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 1, \"op\": \"remove_edge\", \"from\": 2, \"to\": 0},"
               "{\"tick\": 1, \"op\": \"set\", \"from\": 3, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 1, \"op\": \"remove_edge\", \"from\": 1, \"to\": 0},"
               "{\"tick\": 2, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 2, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 6, \"to\": 0},"
               "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 1, \"to\": 0},"
               "{\"tick\": 4, \"op\": \"set\", \"from\": 6, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1},"
               "{\"tick\": 4, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
               "\"value\": 1}]}",
               NULL);
    CHECK(env != NULL);
    if (!env) return;
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "5: 1 2 4 5 6");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "4: 3 4 5 6");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "6: 1 2 3 4 5 6");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "4: 2 3 4 5");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "6: 1 2 3 4 5 6");
    /* a reset wipes the graph, the bitmaps with it */
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(sg_list(env, "probe_sharers"), "5: 1 2 4 5 6");
    polis_env_destroy(env);
}

/* probe_journal as "n: what from to on ..." */
static const char *journal(polis_env *env)
{
    static char buf[512];
    const int32_t *l = sg_obs(env, 0, "probe_journal");
    if (!l) return "(none)";
    int n = snprintf(buf, sizeof buf, "%d:", l[0]);
    for (int32_t i = 0; i < 4 * (l[0] < 8 ? l[0] : 8); i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %d", l[1 + i]);
    return buf;
}

/* The sharing journal (service version 3) as the probe reads it after each step: a change
 * whenever a sharing attribute between two agents becomes non-zero or stops being so, none
 * for other values, self-loops or other attributes; everything before a reset is lost. */
static void test_share_journal(void)
{
    polis_env *env = sg_env(
        3, 100, "{}",
        "{\"ops\": ["
        "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Player\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 2},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 0},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 0, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": 1},"
        "{\"tick\": 0, \"op\": \"set\", \"from\": 0, \"to\": 2, \"attr\": \"edge\", "
        "\"value\": 1},"
        "{\"tick\": 1, \"op\": \"unset_family\", \"from\": 1, \"to\": 0, \"attr\": \"sharing\"},"
        "{\"tick\": 2, \"op\": \"set\", \"from\": 2, \"to\": 0, \"attr\": \"sharing.Map\", "
        "\"value\": -0.5},"
        "{\"tick\": 2, \"op\": \"set\", \"from\": 2, \"to\": 1, \"attr\": \"sharing.Map\", "
        "\"value\": 1},"
        "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 2, \"to\": 0},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 2, \"to\": 1, \"attr\": \"sharing.Map\", "
        "\"value\": 0}]}",
        NULL);
    CHECK(env != NULL);
    if (!env) return;
    /* what (0 map, 1 player), from, to, on; the reader started before the reset */
    CHECK_EQ_STR(journal(env), "-1:");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "2: 1 1 0 1 0 1 0 1");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "2: 1 1 0 0 0 1 0 0");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "2: 0 2 0 1 0 2 1 1");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "2: 0 2 0 0 0 2 1 0");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "0:");
    /* a reset wipes the graph without changes: the reader is told it lost track */
    CHECK_EQ_INT(polis_env_reset(env, 2), POLIS_OK);
    CHECK_EQ_STR(journal(env), "-1:");
    CHECK_EQ_INT(sg_noop(env), POLIS_OK);
    CHECK_EQ_STR(journal(env), "2: 1 1 0 1 0 1 0 1");
    polis_env_destroy(env);
}

/* The same scenario, seed and actions give the same episode. */
/* One step with a uniformly random legal action for every agent. */
static polis_status random_step(polis_env *env, polis_rng *rng)
{
    const polis_io *io = polis_env_io(env);
    for (int32_t a = 0; a < io->n_agents; a++) {
        int32_t k;
        do {
            k = (int32_t)polis_rng_below(rng, (uint32_t)io->n_actions);
        } while (!io->masks[(size_t)a * (size_t)io->n_actions + (size_t)k]);
        io->actions[a] = k;
    }
    return polis_env_step(env);
}

static void test_determinism(void)
{
    const char *social =
        "{\"social_state\": true, \"communication_length\": 2, \"social\": {\"groups\": [{}, {}]},"
        " \"pre_updates\": [{\"function\": \"clear_temporary_relation\", \"kwargs\": {\"attr\": "
        "\"communication\"}}],"
        " \"post_updates\": [[\"split_score_to_group\", {\"attribute\": \"division_weight\"}]],"
        " \"actions\": [{\"family\": \"communicate\"}, {\"family\": \"share_map\"},"
        "              {\"family\": \"switch_group\"}]}";
    uint64_t hashes[2][50];
    for (int run = 0; run < 2; run++) {
        polis_env *env = sg_env(5, 100, social, NULL, NULL);
        CHECK(env != NULL);
        if (!env) return;
        polis_rng rng;
        polis_rng_seed(&rng, 7, 3);
        for (int t = 0; t < 50; t++) {
            CHECK_EQ_INT(random_step(env, &rng), POLIS_OK);
            hashes[run][t] = polis_env_state_hash(env);
        }
        polis_env_destroy(env);
    }
    CHECK(memcmp(hashes[0], hashes[1], sizeof hashes[0]) == 0);
    CHECK(hashes[0][0] != hashes[0][49]);
}

/* Events nobody subscribes to take their sequence numbers all the same (the bus's path for
 * them, engine/core/bus.c): one env subscribed to every event and one to relation_unset
 * alone, the same scenario and actions, see the same (seq, from, to) for each unset. */
typedef struct unset_log {
    int32_t type, n;
    uint64_t seq[4096];
    int32_t from[4096], to[4096];
} unset_log;

static void log_unset(void *ud, const polis_event *ev)
{
    unset_log *l = ud;
    if (ev->type != l->type || l->n >= 4096) return;
    const int32_t *ft = ev->data;
    l->seq[l->n] = ev->seq;
    l->from[l->n] = ft[0];
    l->to[l->n++] = ft[1];
}

static void test_unsubscribed_events_numbered(void)
{
    static unset_log logs[2];
    const char *social =
        "{\"social_state\": true, \"communication_length\": 2,"
        " \"pre_updates\": [{\"function\": \"clear_temporary_relation\","
        " \"kwargs\": {\"attr\": \"communication\"}}],"
        " \"actions\": [{\"family\": \"communicate\"}, {\"family\": \"share_map\"}]}";
    for (int run = 0; run < 2; run++) {
        unset_log *l = &logs[run];
        memset(l, 0, sizeof *l);
        polis_env *env = test_env(sg_scenario(6, 100, social, NULL), NULL, NULL);
        CHECK(env != NULL);
        if (!env) return;
        l->type = polis_env_event_find(env, "social.relation_unset");
        CHECK_EQ_INT(polis_env_subscribe(env, run ? l->type : -1, log_unset, l), POLIS_OK);
        CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
        polis_rng rng;
        polis_rng_seed(&rng, 11, 3);
        for (int t = 0; t < 60; t++) CHECK_EQ_INT(random_step(env, &rng), POLIS_OK);
        polis_env_destroy(env);
    }
    CHECK(logs[0].n > 20 && logs[0].n < 4096);
    CHECK_EQ_INT(logs[1].n, logs[0].n);
    int gaps = 0;
    for (int32_t i = 0; i < logs[0].n && i < logs[1].n; i++) {
        CHECK(logs[1].seq[i] == logs[0].seq[i]);
        CHECK_EQ_INT(logs[1].from[i], logs[0].from[i]);
        CHECK_EQ_INT(logs[1].to[i], logs[0].to[i]);
        gaps += i > 0 && logs[1].seq[i] > logs[1].seq[i - 1] + 1;
    }
    CHECK(gaps > 0); /* relation_set and the others were numbered in between */
}

/* social_state against the graph the events describe: a host subscriber keeps the
 * attributes each (from, to) carries from relation_set / relation_unset (an edge is there
 * while it carries one), and after every reset and step each agent's record must be that
 * adjacency, transposed. The records stay where they are, so after the first write they
 * are brought up to date from the plugin's change list (social.c, on_observe). */
typedef struct rel_ev {
    int32_t from, to, attr;
    double value;
} rel_ev;

typedef struct pair_attrs {
    int32_t ev_set, ev_unset, n, bad_attr;
    uint64_t attrs[16][16]; /* [from][to] one bit per attribute id */
} pair_attrs;

static void track_rel(void *ud, const polis_event *ev)
{
    pair_attrs *t = ud;
    const rel_ev *r = ev->data;
    if (r->from < 0 || r->to < 0 || r->from >= t->n || r->to >= t->n || r->attr < 0 ||
        r->attr >= 64) {
        t->bad_attr++;
        return;
    }
    if (ev->type == t->ev_set) t->attrs[r->from][r->to] |= (uint64_t)1 << r->attr;
    if (ev->type == t->ev_unset) t->attrs[r->from][r->to] &= ~((uint64_t)1 << r->attr);
}

/* Entries of the agents' social_state records that differ from the tracked graph. */
static int state_mismatches(polis_env *env, const pair_attrs *t)
{
    int bad = 0;
    for (int32_t a = 0; a < polis_env_n_agents(env); a++) {
        const int8_t *ss = sg_obs(env, a, "social_state");
        for (int32_t to = 0; to < t->n; to++)
            for (int32_t from = 0; from < t->n; from++)
                bad += ss[to * t->n + from] != (t->attrs[from][to] != 0);
    }
    return bad;
}

/* Creates the scenario, subscribes the tracker and resets (the reset's structure is built
 * with events; the graph it replaces is wiped without). */
static polis_env *tracked_env(int agents, const char *social, const char *probe, pair_attrs *t)
{
    memset(t, 0, sizeof *t);
    polis_env *env = test_env(sg_scenario(agents, 40, social, probe), NULL, NULL);
    CHECK(env != NULL);
    if (!env) return NULL;
    polis_obs_field f;
    for (int32_t i = 0; i < polis_env_n_obs_fields(env); i++)
        if (polis_env_obs_field(env, i, &f) == POLIS_OK && !strcmp(f.name, "social_state"))
            t->n = f.shape[0];
    CHECK(t->n >= agents && t->n <= 16);
    t->ev_set = polis_env_event_find(env, "social.relation_set");
    t->ev_unset = polis_env_event_find(env, "social.relation_unset");
    CHECK_EQ_INT(polis_env_subscribe(env, t->ev_set, track_rel, t), POLIS_OK);
    CHECK_EQ_INT(polis_env_subscribe(env, t->ev_unset, track_rel, t), POLIS_OK);
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    return env;
}

static void test_social_state_follows_graph(void)
{
    /* random messages, map sharing toggles and group switches, episodes of 40 steps */
    const char *social =
        "{\"social_state\": true, \"communication_length\": 2, \"social\": {\"groups\": [{}, {},"
        " {}]}, \"pre_updates\": [{\"function\": \"clear_temporary_relation\", \"kwargs\": "
        "{\"attr\": \"communication\"}}], \"actions\": [{\"family\": \"communicate\"}, "
        "{\"family\": \"share_map\"}, {\"family\": \"switch_group\"}]}";
    pair_attrs t;
    polis_env *env = tracked_env(7, social, NULL, &t);
    if (!env) return;
    polis_rng rng;
    polis_rng_seed(&rng, 11, 0);
    int bad = state_mismatches(env, &t), edges = 0;
    for (int step = 0; step < 300; step++) {
        if (polis_env_done(env)) {
            memset(t.attrs, 0, sizeof t.attrs);
            CHECK_EQ_INT(polis_env_reset(env, (uint64_t)step), POLIS_OK);
        } else {
            CHECK_EQ_INT(random_step(env, &rng), POLIS_OK);
        }
        bad += state_mismatches(env, &t);
        for (int32_t i = 0; i < t.n * t.n; i++) edges += t.attrs[i / t.n][i % t.n] != 0;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(t.bad_attr, 0);
    CHECK(edges > 300); /* the graph was not empty */
    polis_env_destroy(env);

    /* One step changes a position several times: created, dropped and created again (1),
     * created and dropped (0), dropped and created again (1, unchanged), each change
     * logged; then, with max_edges 3 (a log of 6 changes), more changes than the log holds
     * in one step, so the matrix is rebuilt from the edges. */
    const char *probe =
        "{\"ops\": ["
        "{\"tick\": -1, \"op\": \"set\", \"from\": 2, \"to\": 3, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 1, \"op\": \"set\", \"from\": 0, \"to\": 1, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 1, \"op\": \"remove_edge\", \"from\": 0, \"to\": 1},"
        "{\"tick\": 1, \"op\": \"set\", \"from\": 0, \"to\": 1, \"attr\": \"y\", \"value\": 2},"
        "{\"tick\": 1, \"op\": \"set\", \"from\": 1, \"to\": 0, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 1, \"op\": \"unset\", \"from\": 1, \"to\": 0, \"attr\": \"x\"},"
        "{\"tick\": 1, \"op\": \"remove_edge\", \"from\": 2, \"to\": 3},"
        "{\"tick\": 1, \"op\": \"set\", \"from\": 2, \"to\": 3, \"attr\": \"x\", \"value\": 3},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 3, \"to\": 0, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 3, \"to\": 0},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 3, \"to\": 1, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 3, \"to\": 1},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 3, \"to\": 2, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 0, \"to\": 1},"
        "{\"tick\": 3, \"op\": \"remove_edge\", \"from\": 2, \"to\": 3},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 1, \"to\": 2, \"attr\": \"x\", \"value\": 1},"
        "{\"tick\": 3, \"op\": \"set\", \"from\": 0, \"to\": 3, \"attr\": \"x\", \"value\": 1}]}";
    env = tracked_env(4, "{\"social_state\": true, \"max_edges\": 3}", probe, &t);
    if (!env) return;
    bad = state_mismatches(env, &t);
    uint64_t expect[5][4][4] = {{{0}}};
    expect[0][2][3] = 1;                                     /* after the reset */
    expect[1][2][3] = expect[2][2][3] = 1;                   /* tick 0: nothing */
    expect[2][0][1] = 1;                                     /* tick 1 */
    expect[3][0][1] = expect[3][2][3] = 1;                   /* tick 2: nothing */
    expect[4][3][2] = expect[4][1][2] = expect[4][0][3] = 1; /* tick 3 */
    for (int step = 0; step < 4; step++) {
        CHECK_EQ_INT(sg_noop(env), POLIS_OK);
        bad += state_mismatches(env, &t);
        for (int32_t from = 0; from < 4; from++)
            for (int32_t to = 0; to < 4; to++)
                CHECK_EQ_INT(t.attrs[from][to] != 0, expect[step + 1][from][to] != 0);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(t.bad_attr, 0);
    polis_env_destroy(env);
}

int main(void)
{
    test_initial_structure();
    test_value_mapping();
    test_group_ids_and_schedule();
    test_service_edges();
    test_share_journal();
    test_in_list_order("{}");
    test_in_list_order("{\"max_groups\": 8200}");
    test_determinism();
    test_unsubscribed_events_numbered();
    test_social_state_follows_graph();
    CHECK_DONE();
}
