/* registry.c: the host table, every refused registration and running-time host call, with its
 * message. */
#include "check.h"
#include "core/internal.h"
#include "testutil.h"

/* The host table is the kernel's slots plus every module's (engine/modules.c): each slot is
 * filled, so a module that forgets one is seen here, not in a plugin that calls it. */
static void host_table_complete(void)
{
    const polis_host *h = polis__host();
    CHECK(h == polis__host());
    CHECK_EQ_INT(h->abi_major, POLIS_ABI_MAJOR);
    CHECK_EQ_INT(h->struct_size, sizeof(polis_host));
    typedef void (*slot)(void);
    size_t first = offsetof(polis_host, error);
    for (size_t off = first; off + sizeof(slot) <= sizeof(polis_host); off += sizeof(slot)) {
        slot fn;
        memcpy(&fn, (const char *)h + off, sizeof fn);
        if (!fn) fprintf(stderr, "host table: the slot at byte %zu is NULL\n", off);
        CHECK(fn != NULL);
    }
    CHECK(h->renderer != NULL && h->policy != NULL && h->look_scene != NULL);
}

static const char *create_case(const char *which)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"grid\": {\"width\": 4, \"height\": 4}, \"plugins\": "
             "[{\"name\": \"registrar\", \"params\": {\"case\": \"%s\"}}]}",
             which);
    return test_env_error(json);
}

#define INIT_FAILED "<string>: plugins[0]: plugin \"registrar\" init failed: registrar: "

static const char *step_case(const char *which, polis_status expect)
{
    static char msg[1024];
    char json[512];
    snprintf(json, sizeof json,
             "{\"agents\": 2, \"plugins\": [{\"name\": \"registrar\", \"params\": "
             "{\"case\": \"%s\"}}]}",
             which);
    polis_env *env = test_env(json, NULL, NULL);
    if (!env) return "(create failed)";
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    CHECK_EQ_INT(polis_env_step(env), expect);
    snprintf(msg, sizeof msg, "%s", polis_env_error(env));
    /* every failure leaves an env that resets and steps again */
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    polis_env_destroy(env);
    return msg;
}

int main(void)
{
    host_table_complete();
    CHECK_EQ_STR(create_case("action_name_empty"), INIT_FAILED "action name is empty");
    CHECK_EQ_STR(create_case("action_name_space"),
                 INIT_FAILED "action name \"pick wood\" has a character that is not allowed at "
                             "4 (use letters, digits and punctuation without spaces or quotes)");
    CHECK_EQ_STR(create_case("action_no_handler"), INIT_FAILED "action x: handler is NULL");
    CHECK_EQ_STR(create_case("action_noop"),
                 INIT_FAILED "action \"noop\" is already registered by polis");
    CHECK_EQ_STR(create_case("obs_ndim"), INIT_FAILED "observation o: ndim 5 is outside [1, 4]");
    CHECK_EQ_STR(create_case("obs_shape"),
                 INIT_FAILED "observation o: shape[1] = 0 is outside [1, 16777216]");
    CHECK_EQ_STR(create_case("obs_dtype"), INIT_FAILED "observation o: unknown dtype 9");
    CHECK_EQ_STR(create_case("obs_no_writer"), INIT_FAILED "observation o: write function is NULL");
    CHECK_EQ_STR(create_case("obs_huge"),
                 INIT_FAILED "observation o: more than 2^28 elements per agent");
    CHECK_EQ_STR(create_case("event_dup_field"),
                 INIT_FAILED "event type reg.dup: duplicate field \"a\"");
    CHECK_EQ_STR(create_case("event_bad_type"),
                 INIT_FAILED "event type reg.bad: field a has unknown type 7");
    CHECK_EQ_STR(create_case("event_dup"),
                 INIT_FAILED "event type \"reg.ev\" is already registered by registrar");
    CHECK_EQ_STR(create_case("component_zero"),
                 INIT_FAILED "component c: element size 0 is outside [1, 1048576]");
    CHECK_EQ_STR(create_case("component_dup"),
                 INIT_FAILED "component \"c\" is already registered by registrar");
    CHECK_EQ_STR(create_case("service_dup"),
                 INIT_FAILED "service \"svc\" is already provided by registrar");
    CHECK_EQ_STR(create_case("reward_null"), INIT_FAILED "reward r: function is NULL");
    CHECK_EQ_STR(create_case("reward_dup"),
                 INIT_FAILED "reward function \"r\" is already registered by registrar");
    CHECK_EQ_STR(create_case("hook_phase"), INIT_FAILED "hook: unknown phase");
    CHECK_EQ_STR(create_case("grid_conflict"),
                 INIT_FAILED "grid is already 4x4 (bounded); cannot make it 3x3 (bounded)");
    CHECK_EQ_STR(create_case("order_in_init"),
                 INIT_FAILED "set_agent_order is only allowed in the begin phase");

    CHECK_EQ_STR(step_case("run_register", POLIS_ERR_STATE),
                 "registrar: action: registration is closed once the env is created (register "
                 "in init or start) [hook post, tick 0]");
    CHECK_EQ_STR(step_case("run_publish_size", POLIS_ERR_INVALID),
                 "registrar: publish reg.ev: payload is 4 bytes, the event's fields take 16 "
                 "[hook post, tick 0]");
    CHECK_EQ_STR(step_case("run_publish_type", POLIS_ERR_INVALID),
                 "registrar: publish: unknown event type id 42 [hook post, tick 0]");
    CHECK_EQ_STR(step_case("run_order", POLIS_ERR_STATE),
                 "registrar: set_agent_order is only allowed in the begin phase "
                 "[hook post, tick 0]");
    CHECK_EQ_STR(step_case("run_order_dup", POLIS_ERR_INVALID),
                 "registrar: set_agent_order: agent 1 appears twice [hook begin, tick 0]");
    CHECK_EQ_STR(step_case("run_order_range", POLIS_ERR_INVALID),
                 "registrar: set_agent_order: agents[0] = 7 is not an agent id (0..1) "
                 "[hook begin, tick 0]");
    const char *stale = step_case("run_destroy_stale", POLIS_ERR_INVALID);
    CHECK_CONTAINS(stale, "registrar: entity_destroy: entity 2 (generation ");
    CHECK_CONTAINS(stale, ") is not alive [hook post, tick 0]");
    CHECK_DONE();
}
