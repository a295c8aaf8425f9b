/* engine/cli/util/util.c — the pieces every `polis` command shares (util.h). */
#define _DEFAULT_SOURCE /* readlink, realpath, strdup */
#include "util/file.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Where shipped scenarios are (CMakeLists.txt): share/polis/rulesets relative to the
 * installed program, the install prefix's, and the source tree's (searched only by a polis
 * running from its build tree). */
#ifndef POLIS_CLI_RULESETS_REL_BINDIR
#define POLIS_CLI_RULESETS_REL_BINDIR "../share/polis/rulesets"
#endif
#ifndef POLIS_CLI_RULESETS_INSTALL_DIR
#define POLIS_CLI_RULESETS_INSTALL_DIR ""
#endif
#ifndef POLIS_CLI_SOURCE_RULESETS
#define POLIS_CLI_SOURCE_RULESETS ""
#endif
#ifndef POLIS_CLI_BUILD_ROOT
#define POLIS_CLI_BUILD_ROOT ""
#endif

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

bool cli_exe_dir(char *out)
{
    ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
    if (n <= 0) return false;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash) return false;
    *slash = '\0';
    return true;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_int_error(const char *cmd, const char *name, const char *value, int64_t lo, int64_t hi,
                  const char *unit)
{
    char range[96];
    if (hi == INT64_MAX && lo <= 1)
        snprintf(range, sizeof range, "%s",
                 lo == 1 ? "a positive integer" : "a non-negative integer");
    else if (hi == ((int64_t)1 << 53))
        snprintf(range, sizeof range, "an integer in [%" PRId64 ", 2^53]", lo);
    else
        snprintf(range, sizeof range, "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    return cli_usage(cmd, "%s: '%s' is not %s%s%s%s", name, value, range, unit ? " (" : "",
                     unit ? unit : "", unit ? ")" : "");
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
        return cli_int_error(cmd, "--agents", value, 1, INT32_MAX, NULL);
    cJSON *n = cJSON_CreateNumber((double)v);
    if (!n || !add_override(o, "agents", n)) return cli_usage(cmd, "out of memory");
    return 0;
}

int cli_overrides_grid(cli_overrides *o, const char *cmd, const char *value)
{
    const char *sep = strchr(value, '=');
    if (!sep || sep == value)
        return cli_usage(cmd, "--grid: '%s' is not PATH=ARRAY (e.g. 'max_steps=[50,100]')", value);
    cJSON *values = cJSON_Parse(sep + 1);
    if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) == 0) {
        cJSON_Delete(values);
        return cli_usage(cmd, "--grid: '%s': the values are not a non-empty JSON array", value);
    }
    char *path = strndup(value, (size_t)(sep - value));
    if (!path) cJSON_Delete(values);
    bool ok = path && add_override(o, path, values);
    free(path);
    return ok ? 0 : cli_usage(cmd, "out of memory");
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

bool cli_origin_host(const char *v, char *out, size_t cap)
{
    const char *h = strstr(v, "://");
    h = h ? h + 3 : v;
    size_t n;
    if (*h == '[') {
        const char *e = strchr(h, ']');
        if (!e) return false;
        n = (size_t)(e - h) + 1;
    } else {
        n = strcspn(h, ":/");
    }
    if (n == 0 || n >= cap) return false;
    memcpy(out, h, n);
    out[n] = '\0';
    return true;
}

bool cli_check_origin(const char *value, char *why, size_t cap)
{
    if (strcmp(value, "*") == 0) return true;
    char host[256];
    bool scheme = strncmp(value, "http://", 7) == 0 || strncmp(value, "https://", 8) == 0;
    const char *rest = scheme ? strstr(value, "://") + 3 : value;
    if (!scheme || !cli_origin_host(value, host, sizeof host) || strchr(rest, '/')) {
        snprintf(why, cap, "'%s' is not an origin (http://HOST or http://HOST:PORT, no path; or *)",
                 value);
        return false;
    }
    return true;
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
    char why[256];
    char *text = cli_file_read(path, CLI_FILE_TEXT_MAX, NULL, why, sizeof why);
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

/* ---- scenario names ------------------------------------------------------------------------ */

enum { MAX_SCENARIO_DIRS = 24 };

/* The directories searched for bare scenario names, in order (see util.h); returns how many. */
static int scenario_dirs(char dirs[][PATH_MAX])
{
    int n = 0;
    const char *env = getenv("POLIS_SCENARIO_PATH");
    for (const char *p = env ? env : ""; *p && n < MAX_SCENARIO_DIRS - 3;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0 && len < PATH_MAX) snprintf(dirs[n++], PATH_MAX, "%.*s", (int)len, p);
        if (!end) break;
        p = end + 1;
    }
    char exe[PATH_MAX];
    if (cli_exe_dir(exe)) {
        if ((size_t)snprintf(dirs[n], PATH_MAX, "%s/%s", exe, POLIS_CLI_RULESETS_REL_BINDIR) <
            PATH_MAX)
            n++;
        char root[PATH_MAX];
        size_t rl = 0;
        if (POLIS_CLI_BUILD_ROOT[0] != '\0' && realpath(POLIS_CLI_BUILD_ROOT, root))
            rl = strlen(root);
        if (rl && strncmp(exe, root, rl) == 0 && (exe[rl] == '\0' || exe[rl] == '/') &&
            POLIS_CLI_SOURCE_RULESETS[0] != '\0')
            snprintf(dirs[n++], PATH_MAX, "%s", POLIS_CLI_SOURCE_RULESETS);
    }
    if (POLIS_CLI_RULESETS_INSTALL_DIR[0])
        snprintf(dirs[n++], PATH_MAX, "%s", POLIS_CLI_RULESETS_INSTALL_DIR);
    return n;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Subdirectories of dir, sorted (so a name found in two rulesets resolves the same way on
 * every machine). Returns the count; *out is a malloc'ed array of malloc'ed names. */
static int subdirs(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[PATH_MAX];
        if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= sizeof sub ||
            !is_dir(sub))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **w = realloc(v, sizeof *v * (size_t)cap);
            if (!w) break;
            v = w;
        }
        if ((v[n] = strdup(e->d_name))) n++;
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *out = v;
    return n;
}

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* Adds the scenario names (<name>.json) of dir to the sorted, distinct list. */
static void add_names(const char *dir, char ***names, int *n, int *cap)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            !is_file(path))
            continue;
        char *name = strndup(e->d_name, len - 5);
        if (!name) continue;
        int at = 0;
        while (at < *n && strcmp((*names)[at], name) < 0) at++;
        if (at < *n && strcmp((*names)[at], name) == 0) {
            free(name);
            continue;
        }
        if (*n == *cap) {
            int nc = *cap ? 2 * *cap : 32;
            char **w = realloc(*names, sizeof **names * (size_t)nc);
            if (!w) {
                free(name);
                continue;
            }
            *names = w;
            *cap = nc;
        }
        memmove(*names + at + 1, *names + at, sizeof **names * (size_t)(*n - at));
        (*names)[at] = name;
        (*n)++;
    }
    closedir(d);
}

const char *cli_scenario(const char *cmd, const char *arg)
{
    static char found[PATH_MAX];
    size_t len = strlen(arg);
    bool bare = !strchr(arg, '/') && !(len >= 5 && strcmp(arg + len - 5, ".json") == 0) &&
                arg[0] != '{' && arg[0] != '\0';
    if (!bare || access(arg, F_OK) == 0) return arg;
    static char dirs[MAX_SCENARIO_DIRS][PATH_MAX];
    int nd = scenario_dirs(dirs);
    for (int i = 0; i < nd; i++) {
        if ((size_t)snprintf(found, sizeof found, "%s/%s.json", dirs[i], arg) < sizeof found &&
            is_file(found))
            return found;
        char **subs;
        int ns = subdirs(dirs[i], &subs);
        for (int k = 0; k < ns; k++)
            if ((size_t)snprintf(found, sizeof found, "%s/%s/%s.json", dirs[i], subs[k], arg) <
                    sizeof found &&
                is_file(found)) {
                free_names(subs, ns);
                return found;
            }
        free_names(subs, ns);
    }
    /* Not found: say where we looked and which names there are. */
    char **names = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < nd; i++) {
        add_names(dirs[i], &names, &n, &cap);
        char **subs;
        int ns = subdirs(dirs[i], &subs);
        for (int k = 0; k < ns; k++) {
            char sub[PATH_MAX];
            if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dirs[i], subs[k]) < sizeof sub)
                add_names(sub, &names, &n, &cap);
        }
        free_names(subs, ns);
    }
    fprintf(stderr, "polis: %s: '%s' is neither a file nor a scenario name; ", cmd, arg);
    if (n == 0) {
        fprintf(stderr, "no scenarios found (looked in");
        for (int i = 0; i < nd; i++) fprintf(stderr, "%s %s", i ? "," : "", dirs[i]);
        fprintf(stderr, "%s; set POLIS_SCENARIO_PATH)\n", nd ? "" : " nothing");
    } else {
        fprintf(stderr, "scenario names:");
        for (int i = 0; i < n; i++) fprintf(stderr, " %s", names[i]);
        fprintf(stderr, "\n");
    }
    free_names(names, n);
    return NULL;
}
