/* plugin.c: every refusal of the loader, with its exact message, and dependency order. */
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define DIR POLIS_TEST_PLUGIN_DIR

static const char *load(const char *plugins)
{
    char json[1024];
    snprintf(json, sizeof json, "{\"agents\": 1, \"plugins\": %s}", plugins);
    return test_env_error(json);
}

int main(void)
{
    CHECK_CONTAINS(load("[\"nope\"]"), "<string>: plugins[0]: cannot find plugin \"nope\" (tried ");
    CHECK_CONTAINS(load("[\"nope\"]"), DIR "/nope.so");
    CHECK_EQ_STR(load("[{\"path\": \"/nonexistent/x.so\"}]"),
                 "<string>: plugins[0]: cannot load /nonexistent/x.so: /nonexistent/x.so: cannot "
                 "open shared object file: No such file or directory");
    CHECK_CONTAINS(load("[{\"path\": \"" POLIS_TEST_SOURCE_DIR "/scenarios/not_a_plugin.so\"}]"),
                   "<string>: plugins[0]: cannot load " POLIS_TEST_SOURCE_DIR
                   "/scenarios/not_a_plugin.so: ");
    CHECK_EQ_STR(load("[\"broken_nosym\"]"),
                 "<string>: plugins[0]: " DIR "/broken_nosym.so: no entry symbol "
                 "\"polis_plugin_entry\" (is it a polis plugin?)");
    CHECK_EQ_STR(load("[\"broken_null\"]"),
                 "<string>: plugins[0]: " DIR "/broken_null.so: polis_plugin_entry returned NULL");
    CHECK_EQ_STR(load("[\"broken_abi\"]"),
                 "<string>: plugins[0]: " DIR "/broken_abi.so: plugin ABI major version 2, this "
                 "engine supports 1");
    char msg[512];
    snprintf(msg, sizeof msg,
             "<string>: plugins[0]: " DIR "/broken_size.so: descriptor struct_size 16 is smaller "
             "than the ABI 1.0 descriptor (%zu bytes)",
             offsetof(polis_plugin_desc, n_exports) + sizeof(int32_t));
    CHECK_EQ_STR(load("[\"broken_size\"]"), msg);
    snprintf(msg, sizeof msg,
             "<string>: plugins[0]: " DIR "/broken_minor.so: the plugin needs plugin ABI "
             "%u.%u or newer (its abi_minor), this engine (polis %s) has ABI %u.%u: update "
             "polis",
             POLIS_ABI_MAJOR, POLIS_ABI_MINOR + 1, POLIS_VERSION_STRING, POLIS_ABI_MAJOR,
             POLIS_ABI_MINOR);
    CHECK_EQ_STR(load("[\"broken_minor\"]"), msg);
    snprintf(msg, sizeof msg,
             "<string>: plugins[0]: " DIR "/broken_bigsize.so: descriptor struct_size 1048576 is "
             "larger than the ABI %u.%u descriptor (%zu bytes)",
             POLIS_ABI_MAJOR, POLIS_ABI_MINOR, sizeof(polis_plugin_desc));
    CHECK_EQ_STR(load("[\"broken_bigsize\"]"), msg);
    CHECK_EQ_STR(load("[\"broken_name\"]"),
                 "<string>: plugins[0]: " DIR "/broken_name.so: plugin name \"Bad Name\" is not "
                 "1-63 characters of [a-z0-9_]");
    CHECK_EQ_STR(load("[\"broken_params\"]"),
                 "<string>: plugins[0]: " DIR "/broken_params.so: plugin \"broken_params\": "
                 "parameter \"speed\" at offset 16 does not fit params_size 8");
    CHECK_EQ_STR(load("[\"probe\", \"probe\"]"),
                 "<string>: plugins[1]: name \"probe\" is already used by plugins[0]");
    /* The same plugin under another file name is still the same plugin. */
    unlink(POLIS_BINARY_DIR "/probe_alias.so");
    CHECK_EQ_INT(symlink(DIR "/probe.so", POLIS_BINARY_DIR "/probe_alias.so"), 0);
    CHECK_EQ_STR(load("[{\"path\": \"" POLIS_BINARY_DIR "/probe_alias.so\"}, \"probe\"]"),
                 "<string>: plugins[1]: duplicate plugin name \"probe\" (also plugins[0])");
    CHECK_EQ_STR(load("[{\"name\": \"probe\", \"params\": {\"mode\": \"fail_init\"}}]"),
                 "<string>: plugins[0]: plugin \"probe\" init failed: probe: refusing to start: "
                 "mode fail_init");
    CHECK_EQ_STR(load("[\"needs_dep\"]"),
                 "<string>: plugins[0]: plugin \"needs_dep\" requires plugin \"probe\", which the "
                 "scenario does not load (add it to \"plugins\")");
    CHECK_EQ_STR(load("[\"cycle_a\", \"cycle_b\"]"),
                 "<string>: plugins[0]: plugin \"cycle_a\" is part of a requirement cycle");
    /* A bad parameter is reported with the JSON path into the plugin's params. */
    CHECK_EQ_STR(load("[{\"name\": \"probe\", \"params\": {\"int_p\": \"ten\"}}]"),
                 "<string>: plugins[0].params.int_p: expected integer in [-5, 5], got \"ten\"");
    CHECK_EQ_STR(load("[{\"name\": \"probe\", \"params\": {\"mode\": \"json\", \"extra\": "
                      "{\"list\": [1, 12]}}}]"),
                 "<string>: plugins[0]: plugin \"probe\" init failed: <string>: "
                 "plugins[0].params.extra.list[1]: expected integer in [0, 9], got 12");

    /* A bare name is never looked up beside the scenario (nor in the current directory for
     * a string scenario): a downloaded folder's probe.so (here the broken_null plugin) runs
     * only when the scenario names its path. */
    {
        const char *local = POLIS_BINARY_DIR "/local_plugin";
        mkdir(local, 0755);
        unlink(POLIS_BINARY_DIR "/local_plugin/probe.so");
        unlink(POLIS_BINARY_DIR "/local_plugin/localonly.so");
        CHECK_EQ_INT(symlink(DIR "/broken_null.so", POLIS_BINARY_DIR "/local_plugin/probe.so"), 0);
        CHECK_EQ_INT(symlink(DIR "/broken_null.so", POLIS_BINARY_DIR "/local_plugin/localonly.so"),
                     0);
        FILE *f = fopen(POLIS_BINARY_DIR "/local_plugin/s.json", "w");
        CHECK(f != NULL);
        if (f) {
            fputs("{\"agents\": 1, \"plugins\": [\"probe\"]}", f);
            fclose(f);
        }
        polis_options o = test_options(NULL, NULL);
        o.plugin_path = NULL; /* the built-in directories beside the program hold probe.so */
        polis_env *e = NULL;
        polis_error err;
        CHECK_EQ_INT(polis_env_create_file(POLIS_BINARY_DIR "/local_plugin/s.json", &o, &e, &err),
                     POLIS_OK);
        polis_env_destroy(e);
        e = NULL;
        const char *json = "{\"agents\": 1, \"plugins\": [\"localonly\"]}";
        o.base_dir = local;
        CHECK_EQ_INT(polis_env_create_json(json, strlen(json), &o, &e, &err), POLIS_ERR_PLUGIN);
        CHECK_CONTAINS(err.message,
                       "<string>: plugins[0]: cannot find plugin \"localonly\"; " POLIS_BINARY_DIR
                       "/local_plugin/localonly.so is not searched "
                       "by name, write {\"path\": \"./localonly.so\"} to load it "
                       "(tried ");
        json = "{\"agents\": 1, \"plugins\": [{\"path\": \"./localonly.so\"}]}";
        CHECK_EQ_INT(polis_env_create_json(json, strlen(json), &o, &e, &err), POLIS_ERR_PLUGIN);
        CHECK_EQ_STR(err.message, "<string>: plugins[0]: " POLIS_BINARY_DIR
                                  "/local_plugin/./localonly.so: polis_plugin_entry returned NULL");
    }

    /* Dependencies init first even when listed later. */
    test_log log = {0};
    polis_env *env =
        test_env("{\"agents\": 1, \"plugins\": [\"needs_dep\", \"probe\"]}", &log, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_STR(log.text, "[probe] params mode= int_p=1 dbl_p=0.5 flag=0 name_p=x extra=-1\n"
                               "[needs_dep] needs_dep sees probe\n");
        polis_env_destroy(env);
    }
    /* Parameters reach the plugin validated and typed; JSON parameters are walkable. */
    test_log_clear(&log);
    env = test_env("{\"agents\": 1, \"plugins\": [{\"name\": \"probe\", \"params\": {\"mode\": "
                   "\"json\", \"int_p\": -5, \"dbl_p\": 1, \"flag\": true, \"name_p\": \"zed\", "
                   "\"extra\": {\"list\": [3, 0, 9]}}}]}",
                   &log, NULL);
    CHECK(env != NULL);
    if (env) {
        CHECK_EQ_STR(log.text,
                     "[probe] params mode=json int_p=-5 dbl_p=1 flag=1 name_p=zed extra=5\n"
                     "[probe] list[0]=3 at plugins[0].params.extra.list[0]\n"
                     "[probe] list[1]=0 at plugins[0].params.extra.list[1]\n"
                     "[probe] list[2]=9 at plugins[0].params.extra.list[2]\n");
        polis_env_destroy(env);
    }
    CHECK_DONE();
}
