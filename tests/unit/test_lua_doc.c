/* docs/lua-api.md is checked against the engine: every function in a script's `polis` table
 * is documented, and every `polis.<name>` the document mentions exists. */
#include <ctype.h>

#include "check.h"
#include "testutil.h"

#define DOC POLIS_SOURCE_DIR "/docs/lua-api.md"
#define SCRIPT POLIS_BINARY_DIR "/lua_doc_keys.lua"

static char doc_names[256][64];
static int n_doc;

static void add_doc_name(const char *s, size_t n)
{
    if (n == 0 || n >= 64) return;
    for (int i = 0; i < n_doc; i++)
        if (strlen(doc_names[i]) == n && strncmp(doc_names[i], s, n) == 0) return;
    if (n_doc < 256) {
        memcpy(doc_names[n_doc], s, n);
        doc_names[n_doc++][n] = '\0';
    }
}

static bool in_doc(const char *name)
{
    for (int i = 0; i < n_doc; i++)
        if (strcmp(doc_names[i], name) == 0) return true;
    return false;
}

int main(void)
{
    FILE *f = fopen(DOC, "r");
    CHECK(f != NULL);
    if (!f) CHECK_DONE();
    static char text[1 << 18];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    for (const char *p = text; (p = strstr(p, "polis.")) != NULL; p += 6) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        const char *s = p + 6, *e = s;
        while (isalnum((unsigned char)*e) || *e == '_') e++;
        add_doc_name(s, (size_t)(e - s));
    }
    CHECK(n_doc > 20);

    /* A script that logs every key of its `polis` table. */
    FILE *sf = fopen(SCRIPT, "w");
    CHECK(sf != NULL);
    if (!sf) CHECK_DONE();
    fputs("local keys = {}\n"
          "for k in pairs(polis) do keys[#keys + 1] = k end\n"
          "table.sort(keys)\n"
          "polis.on_start(function() for _, k in ipairs(keys) do polis.log(k) end end)\n",
          sf);
    fclose(sf);
    test_log log = {0};
    polis_env *env = test_env("{\"agents\": 1, \"scripts\": [\"" SCRIPT "\"]}", &log, NULL);
    CHECK(env != NULL);
    if (!env) CHECK_DONE();
    /* Every documented name is in the table. */
    for (int i = 0; i < n_doc; i++) {
        char want[80];
        snprintf(want, sizeof want, "] %.64s\n", doc_names[i]);
        if (!strstr(log.text, want)) {
            fprintf(stderr, "docs/lua-api.md documents polis.%s, which does not exist\n",
                    doc_names[i]);
            CHECK(strstr(log.text, want) != NULL);
        }
    }
    /* Every name in the table is documented. */
    int n_api = 0;
    char *save = NULL;
    for (char *line = strtok_r(log.text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *name = strchr(line, ']') ? strchr(line, ']') + 2 : line;
        n_api++;
        if (!in_doc(name)) {
            fprintf(stderr, "polis.%s exists but docs/lua-api.md does not document it\n", name);
            CHECK(in_doc(name));
        }
    }
    CHECK(n_api > 20);
    polis_env_destroy(env);
    remove(SCRIPT);
    CHECK_DONE();
}
