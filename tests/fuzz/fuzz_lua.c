/* fuzz_lua — an arbitrary Lua source loaded as a scenario's rule. The bytes are written to
 * rule.lua in a private temporary directory and a small gather scenario names it in
 * "scripts"; loading must succeed or fail with a located error, and a script that loads is
 * reset, played a few ticks (its hooks, rewards, subscribers run) and rendered. The
 * scenario's Lua budget is small so a looping script ends quickly with its budget error.
 *
 * Oracles besides the sanitizers: a failed create names the script (file or name); every allocation
 * made through the env's allocator is returned at destroy. */
#include <unistd.h>

#include "fuzz.h"

static char dir[64];
static char path[96];

static void remove_dir(void)
{
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pin_plugins();
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/polis-fuzz-lua-XXXXXX", tmp && strlen(tmp) < 30 ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_lua: mkdtemp");
        abort();
    }
    snprintf(path, sizeof path, "%s/rule.lua", dir);
    atexit(remove_dir);
    return 0;
}

static const char SCENARIO[] =
    "{\"polis\": 1, \"name\": \"fuzz_lua\", \"max_steps\": 50, \"agents\": 3,"
    " \"grid\": {\"width\": 8, \"height\": 8},"
    " \"lua\": {\"instruction_limit\": 200000, \"memory_limit\": 16777216},"
    " \"plugins\": [{\"name\": \"gather\", \"params\": {\"coins\": 6}}],"
    " \"scripts\": [\"rule.lua\"]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror("fuzz_lua: writing rule.lua");
        abort();
    }
    fuzz_heap heap = {0, FUZZ_HEAP_CAP};
    polis_options opts = fuzz_options(&heap, dir);
    polis_env *env = NULL;
    polis_error err;
    if (polis_env_create_json(SCENARIO, sizeof SCENARIO - 1, &opts, &env, &err) != POLIS_OK) {
        FUZZ_ASSERT(env == NULL);
        FUZZ_ASSERT(strstr(err.message, "rule") != NULL); /* rule.lua, or the script "rule" */
        FUZZ_ASSERT(heap.used == 0);
        return 0;
    }
    if (polis_env_reset(env, 7) == POLIS_OK) {
        fuzz_play(env, 12);
        fuzz_render(env);
    }
    polis_env_destroy(env);
    FUZZ_ASSERT(heap.used == 0);
    return 0;
}
