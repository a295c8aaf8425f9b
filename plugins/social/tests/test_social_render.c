/* The "json" and "text" views (ABI 1.1 renderers): AdaSociety's Social object (global graph,
 * communications) and the prose view of one agent; both deterministic. */
#include "fixture.h"

static const char *SCENARIO =
    "{\"agents\": {\"count\": 3, \"names\": [\"ada\", \"bo\", \"cy\"]}, \"plugins\": [{\"name\": "
    "\"social\", \"params\": {\"communication_length\": 2, \"social\": {\"relations\": ["
    "{\"attributes\": {\"sharing\": {\"Map\": true}}, \"players\": [{\"from\": 1, \"to\": 0}]},"
    "{\"attributes\": {\"sharing\": {\"Player\": true}}, \"players\": [{\"from\": 2, \"to\": 0}]},"
    "{\"attributes\": {\"trust\": 0.5}, \"players\": [{\"from\": 0, \"to\": 2}]}],"
    "\"groups\": [{\"players\": {\"ids\": [0, 1], \"attributes\": {\"division_weight\": [0.85, "
    "0.15]}}}, {}]}, \"actions\": [{\"family\": \"communicate\", \"word\": 3}]}}]}";

static char *render(polis_env *env, int32_t agent, const char *format)
{
    char *out = NULL;
    polis_status st = polis_env_render(env, agent, format, &out);
    if (st) fprintf(stderr, "render: %s\n", polis_env_error(env));
    return out;
}

int main(void)
{
    polis_env *env = test_env(SCENARIO, NULL, NULL);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();
    CHECK_EQ_STR(polis_env_render_formats(env), "json text");
    CHECK_EQ_INT(polis_env_reset(env, 1), POLIS_OK);
    const char *s[] = {NULL, NULL, "communicate_0"};
    CHECK_EQ_INT(sg_step(env, 3, s), POLIS_OK);

    char *json = render(env, 0, "json");
    CHECK_EQ_STR(json,
                 "{\"social\":{\"global\": {\"nodes\": ["
                 "{\"type\": \"player\", \"player\": {\"id\": 0}}, "
                 "{\"type\": \"player\", \"player\": {\"id\": 1}}, "
                 "{\"type\": \"player\", \"player\": {\"id\": 2}}, "
                 "{\"type\": \"group\", \"group\": {\"id\": 0}}, "
                 "{\"type\": \"group\", \"group\": {\"id\": 1}}], \"edges\": ["
                 "{\"from\": {\"type\": \"player\", \"id\": 0}, \"to\": {\"type\": \"player\", "
                 "\"id\": 2}, \"attributes\": {\"trust\": 0.5}}, "
                 "{\"from\": {\"type\": \"player\", \"id\": 1}, \"to\": {\"type\": \"player\", "
                 "\"id\": 0}, \"attributes\": {\"sharing.Map\": 1}}, "
                 "{\"from\": {\"type\": \"player\", \"id\": 2}, \"to\": {\"type\": \"player\", "
                 "\"id\": 0}, \"attributes\": {\"sharing.Player\": 1, \"communication.0\": 3, "
                 "\"communication.1\": 3}}, "
                 "{\"from\": {\"type\": \"group\", \"id\": 0}, \"to\": {\"type\": \"player\", "
                 "\"id\": 0}, \"attributes\": {\"division_weight\": 0.85}}, "
                 "{\"from\": {\"type\": \"group\", \"id\": 0}, \"to\": {\"type\": \"player\", "
                 "\"id\": 1}, \"attributes\": {\"division_weight\": 0.15}}]}, "
                 "\"communications\": [{\"from\": 2, \"to\": 0, \"words\": [3, 3]}]}}");
    char *again = render(env, 0, "json");
    CHECK_EQ_STR(again, json);
    polis_free(json);
    polis_free(again);

    char *text = render(env, 0, "text");
    CHECK_EQ_STR(text,
                 "Social: you are ada (agent 0).\n"
                 "Your groups: group 0 (division_weight 0.85) with bo (division_weight 0.15)\n"
                 "Your relations: to cy (trust 0.5)\n"
                 "Relations to you: from bo (shares map); from cy (shares inventory, "
                 "communication.0 3, communication.1 3)\n"
                 "Messages: cy says [3, 3]\n"
                 "Legal actions: noop, communicate_0..2 (x_i..j: each of x_i to x_j).\n");
    polis_free(text);
    text = render(env, 2, "text");
    CHECK_EQ_STR(text,
                 "Social: you are cy (agent 2).\n"
                 "Your groups: none\n"
                 "Your relations: to ada (shares inventory, communication.0 3, communication.1 3)\n"
                 "Relations to you: from ada (trust 0.5)\n"
                 "Legal actions: noop, communicate_0..2 (x_i..j: each of x_i to x_j).\n");
    polis_free(text);
    json = render(env, 2, "json");
    CHECK_CONTAINS(json, "\"communications\": []}}");
    polis_free(json);
    polis_env_destroy(env);
    CHECK_DONE();
}
