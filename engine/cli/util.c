/* engine/cli/util.c — the pieces every `polis` subcommand shares (util.h). */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("polis: ", stderr);
    if (cmd) fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'polis help %s'.\n", cmd);
    else
        fputs("\nTry 'polis --help'.\n", stderr);
    return EXIT_USAGE;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return false;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || *end) return false;
    *out = (uint64_t)v;
    return true;
}

bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > (uint64_t)hi || (int64_t)v < lo) return false;
    *out = (int64_t)v;
    return true;
}

/* Adds "path": value (which it owns) to the overrides. */
static bool add_override(cli_overrides *o, const char *path, cJSON *value)
{
    if (!o->obj && !(o->obj = cJSON_CreateObject())) {
        cJSON_Delete(value);
        return false;
    }
    if (!cJSON_AddItemToObject(o->obj, path, value)) {
        cJSON_Delete(value);
        return false;
    }
    return true;
}

int cli_overrides_set(cli_overrides *o, const char *cmd, const char *value)
{
    const char *sep = strchr(value, '=');
    if (!sep || sep == value)
        return cli_usage(cmd, "--set: '%s' is not PATH=JSON (e.g. grid.width=64)", value);
    char path[1024];
    if ((size_t)(sep - value) >= sizeof path)
        return cli_usage(cmd, "--set: the path is longer than %zu bytes", sizeof path - 1);
    cJSON *json = cJSON_Parse(sep + 1);
    if (!json)
        return cli_usage(cmd, "--set: '%s': the value is not JSON (quote strings: name='\"text\"')",
                         value);
    memcpy(path, value, (size_t)(sep - value));
    path[sep - value] = '\0';
    if (!add_override(o, path, json)) return cli_usage(cmd, "out of memory");
    return 0;
}

int cli_overrides_agents(cli_overrides *o, const char *cmd, const char *value)
{
    int64_t v;
    if (!cli_parse_int(value, 1, INT32_MAX, &v))
        return cli_usage(cmd, "--agents: '%s' is not a positive integer", value);
    cJSON *n = cJSON_CreateNumber((double)v);
    if (!n || !add_override(o, "agents", n)) return cli_usage(cmd, "out of memory");
    return 0;
}

char *cli_overrides_text(const cli_overrides *o, bool *oom)
{
    if (!o->obj) return NULL;
    char *text = cJSON_PrintUnformatted(o->obj);
    if (!text) *oom = true;
    return text;
}

void cli_overrides_free(cli_overrides *o)
{
    cJSON_Delete(o->obj);
    o->obj = NULL;
}

/* ---- AdaSociety's files given where a scenario belongs ---------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            if (cap > ((size_t)64 << 20)) break; /* a scenario is never this big */
            size_t ncap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, ncap);
            if (!nb) break;
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* Every member of the object is an object carrying `key` (a job, resource or event table). */
static bool table_of(const cJSON *j, const char *key)
{
    int n = 0;
    for (const cJSON *c = j->child; c; c = c->next) {
        if (c->string && strcmp(c->string, "__COMMENT__") == 0) continue;
        if (!cJSON_IsObject(c) || !cJSON_GetObjectItemCaseSensitive(c, key)) return false;
        n++;
    }
    return n > 0;
}

void cli_scenario_hint(const char *path)
{
    char *text = slurp(path);
    if (!text) return;
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(j) || cJSON_GetObjectItemCaseSensitive(j, "plugins") ||
        cJSON_GetObjectItemCaseSensitive(j, "polis")) {
        cJSON_Delete(j);
        return;
    }
    const char *importer = "python3 rulesets/society/import_adasociety.py";
    const char *where = "(the importer is rulesets/society/import_adasociety.py in the source "
                        "tree, share/polis/rulesets/society/ once installed)";
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "task"))) {
        fprintf(stderr,
                "polis: %s is AdaSociety's main.json, not a polis scenario. Import it (the "
                "task's mini-game, with its stages and parameters), then give polis the "
                "result:\n  %s %s > scenario.json\n  polis run scenario.json\n%s\n",
                path, importer, path, where);
    } else if (cJSON_GetObjectItemCaseSensitive(j, "base_map")) {
        fprintf(stderr,
                "polis: %s is an AdaSociety task file, not a polis scenario. AdaSociety reads "
                "it through a main.json naming it (\"task\") with the job, resource and event "
                "files; import that main.json:\n  %s main.json > scenario.json\n  polis run "
                "scenario.json\n%s\n",
                path, importer, where);
    } else if (table_of(j, "inventory") || table_of(j, "out") || table_of(j, "type")) {
        fprintf(stderr,
                "polis: %s looks like an AdaSociety %s table, not a polis scenario: AdaSociety's "
                "main.json names it (\"%s\"); import that main.json:\n  %s main.json > "
                "scenario.json\n",
                path,
                table_of(j, "inventory") ? "job"
                : table_of(j, "out")     ? "event"
                                         : "resource",
                table_of(j, "inventory") ? "job"
                : table_of(j, "out")     ? "event"
                                         : "resource",
                importer);
    }
    cJSON_Delete(j);
}
