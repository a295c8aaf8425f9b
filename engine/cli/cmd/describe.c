/*
 * engine/cli/cmd/describe.c — `polis describe SCENARIO`: everything the scenario registers, as
 * the JSON document of polis_env_describe_json or as text. The text is one section per list of
 * that document, most of them a table declared in SECTIONS (a title, the list's key and its
 * columns); the few of another shape have a printer of their own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/commands.h"
#include "session/play.h"

/* ---- text tables ---------------------------------------------------------------------------- */

/* A text table: rows of cells, printed with columns padded to their widest cell. */
#define TABLE_MAXCOLS 8

typedef struct table {
    int ncols;
    char **cells; /* [nrows][ncols], heap strings */
    int nrows, cap;
    bool failed;
} table;

static void table_add(table *t, const char *const *row)
{
    if (t->failed) return;
    if (t->nrows == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        char **cells = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *cells);
        if (!cells) {
            t->failed = true;
            return;
        }
        t->cells = cells;
        t->cap = cap;
    }
    for (int c = 0; c < t->ncols; c++) {
        char *copy = strdup(row[c] ? row[c] : "");
        if (!copy) t->failed = true;
        t->cells[t->nrows * t->ncols + c] = copy;
    }
    t->nrows++;
}

static void table_row(table *t, ...)
{
    const char *row[TABLE_MAXCOLS];
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) row[c] = va_arg(ap, const char *);
    va_end(ap);
    table_add(t, row);
}

/* Prints with the indent; the last column is not padded (it holds docs). */
static void table_print(const table *t, const char *indent)
{
    int width[TABLE_MAXCOLS] = {0};
    for (int r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            int len = s ? (int)strlen(s) : 0;
            if (len > width[c]) width[c] = len;
        }
    for (int r = 0; r < t->nrows; r++) {
        fputs(indent, stdout);
        int last = t->ncols - 1;
        while (last > 0 && !*t->cells[r * t->ncols + last]) last--;
        for (int c = 0; c <= last; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c == last)
                printf("%s", s);
            else
                printf("%-*s  ", width[c], s);
        }
        putchar('\n');
    }
}

/* Prints (unless a row failed to allocate) and frees; false if the table is incomplete. */
static bool table_done(table *t, const char *indent)
{
    bool ok = !t->failed;
    if (ok) table_print(t, indent);
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    return ok;
}

/* ---- members as text --------------------------------------------------------------------------
 */

static const char *jstr(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Any scalar as text (numbers keep the exact digits describe wrote). */
static void jtext(const cJSON *v, char *buf, size_t size)
{
    if (!v || cJSON_IsNull(v)) {
        snprintf(buf, size, "-");
    } else if (cJSON_IsString(v)) {
        snprintf(buf, size, "\"%s\"", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsRaw(v)) {
        snprintf(buf, size, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        /* cJSON stores every number as a double; integers up to 2^53 print exactly. */
        if (v->valuedouble == (double)(long long)v->valuedouble &&
            v->valuedouble > -9007199254740992.0 && v->valuedouble < 9007199254740992.0)
            snprintf(buf, size, "%lld", (long long)v->valuedouble);
        else
            snprintf(buf, size, "%g", v->valuedouble);
    } else {
        snprintf(buf, size, "?");
    }
}

static void jkey_text(const cJSON *obj, const char *key, char *buf, size_t size)
{
    jtext(cJSON_GetObjectItemCaseSensitive(obj, key), buf, size);
}

/* Appends to buf (cap bytes, `*used` of them taken) unless it would not fit. */
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *used, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < cap - *used)
        *used += (size_t)n;
    else
        buf[*used] = '\0';
}

static void heading(const char *title, int count)
{
    if (count >= 0)
        printf("\n%s (%d)\n", title, count);
    else
        printf("\n%s\n", title);
}

/* ---- cells computed from a row ------------------------------------------------------------- */

/* An observation field's declared range: "[lo, hi]", or "dim D: [lo, hi] ..." with one
 * range per index of dimension D (the first four, then the count); "-" when none. */
static void cell_range(const cJSON *field, char *buf, size_t size)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(field, "range");
    if (!r) {
        snprintf(buf, size, "-");
        return;
    }
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(r, "lo");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(r, "hi");
    int dim = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "dim"));
    int n = cJSON_GetArraySize(lo);
    size_t used = 0;
    buf[0] = '\0';
    if (dim >= 0) append(buf, size, &used, "dim %d:", dim);
    for (int k = 0; k < n && k < 4; k++) {
        char l[32], h[32];
        jtext(cJSON_GetArrayItem(lo, k), l, sizeof l);
        jtext(cJSON_GetArrayItem(hi, k), h, sizeof h);
        append(buf, size, &used, "%s[%s, %s]", used ? " " : "", l, h);
    }
    if (n > 4) append(buf, size, &used, " ... (%d)", n);
}

static void cell_shape(const cJSON *field, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    const cJSON *dim;
    cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(field, "shape")) {
        char b[64];
        jtext(dim, b, sizeof b);
        append(buf, size, &used, "%s%s", used ? "x" : "", b);
    }
}

static void cell_dtype(const cJSON *field, char *buf, size_t size)
{
    const char *written = jstr(field, "written_dtype");
    if (*written)
        snprintf(buf, size, "%s (from %s)", jstr(field, "dtype"), written);
    else
        snprintf(buf, size, "%s", jstr(field, "dtype"));
}

/* An event type's fields (name:type@offset), then "/" and its subscribers (owner(priority)). */
static void cell_event(const cJSON *ev, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    char b[64];
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ev, "fields")) {
        jkey_text(f, "offset", b, sizeof b);
        append(buf, size, &used, "%s%s:%s@%s", used ? " " : "", jstr(f, "name"), jstr(f, "type"),
               b);
    }
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(ev, "subscribers");
    if (cJSON_GetArraySize(subs) > 0) {
        append(buf, size, &used, "%s/", used ? " " : "");
        cJSON_ArrayForEach(f, subs) {
            jkey_text(f, "priority", b, sizeof b);
            append(buf, size, &used, " %s(%s)", jstr(f, "owner"), b);
        }
    }
}

/* ---- the sections ---------------------------------------------------------------------------- */

typedef struct column {
    const char *header;
    const char *key; /* a string member, or, after '#', any scalar (numbers) */
    void (*cell)(const cJSON *row, char *buf, size_t size); /* instead of a member */
} column;

typedef struct section {
    const char *title; /* NULL: `print` makes the whole section */
    const char *key;   /* the list in the describe document */
    bool always;       /* the table's header even when the list is empty */
    column cols[TABLE_MAXCOLS];
    bool (*print)(const cJSON *d);
} section;

/* The list's rows under the columns' headers, indented by two spaces. */
static bool print_rows(const cJSON *list, const column *cols)
{
    int ncols = 0;
    while (ncols < TABLE_MAXCOLS && cols[ncols].header) ncols++;
    table t = {.ncols = ncols};
    const char *row[TABLE_MAXCOLS];
    for (int c = 0; c < ncols; c++) row[c] = cols[c].header;
    table_add(&t, row);
    char cells[TABLE_MAXCOLS][1024];
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        for (int c = 0; c < ncols; c++) {
            const column *col = &cols[c];
            if (col->cell)
                col->cell(it, cells[c], sizeof cells[c]);
            else if (col->key[0] == '#')
                jkey_text(it, col->key + 1, cells[c], sizeof cells[c]);
            else
                snprintf(cells[c], sizeof cells[c], "%s", jstr(it, col->key));
            row[c] = cells[c];
        }
        table_add(&t, row);
    }
    return table_done(&t, "  ");
}

static bool print_scenario(const cJSON *d)
{
    char b1[64], b2[64], b3[64], b4[64];
    const cJSON *scn = cJSON_GetObjectItemCaseSensitive(d, "scenario");
    printf("scenario %s\n", jstr(scn, "name"));
    if (*jstr(scn, "doc")) printf("  %s\n", jstr(scn, "doc"));
    jkey_text(scn, "seed", b1, sizeof b1);
    jkey_text(scn, "max_steps", b2, sizeof b2);
    jkey_text(scn, "max_entities", b3, sizeof b3);
    jkey_text(scn, "event_queue", b4, sizeof b4);
    printf("  source %s\n  seed %s, max_steps %s, max_entities %s, event_queue %s\n",
           jstr(scn, "source"), b1, b2, b3, b4);
    return true;
}

/* The strings of a list (or a member of each of its objects) on one line after `lead`,
 * space-separated (a lead that ends in ':' is followed by a space too). */
static void print_words(const cJSON *list, const char *key, const char *lead)
{
    const cJSON *it;
    size_t n = strlen(lead);
    fputs(lead, stdout);
    cJSON_ArrayForEach(it, list) {
        const char *s = key ? jstr(it, key) : cJSON_IsString(it) ? it->valuestring : "?";
        printf("%s%s", it != list->child || (n && lead[n - 1] == ':') ? " " : "", s);
    }
    putchar('\n');
}

static bool print_agents(const cJSON *d)
{
    const cJSON *agents = cJSON_GetObjectItemCaseSensitive(d, "agents");
    heading("agents", cJSON_GetArraySize(agents));
    print_words(agents, NULL, "  ");
    return true;
}

static bool print_grid(const cJSON *d)
{
    char b1[64], b2[64];
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(d, "grid");
    heading("grid", -1);
    if (!cJSON_IsObject(grid)) {
        printf("  none\n");
        return true;
    }
    jkey_text(grid, "width", b1, sizeof b1);
    jkey_text(grid, "height", b2, sizeof b2);
    printf("  %s x %s, %s\n", b1, b2,
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(grid, "wrap")) ? "torus (wraps)"
                                                                        : "bounded");
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(grid, "layers");
    char lead[32];
    snprintf(lead, sizeof lead, "  layers (%d):", cJSON_GetArraySize(layers));
    print_words(layers, NULL, lead);
    return true;
}

static bool print_plugins(const cJSON *d)
{
    bool ok = true;
    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(d, "plugins");
    heading("plugins and scripts", cJSON_GetArraySize(plugins));
    const cJSON *p;
    cJSON_ArrayForEach(p, plugins) {
        printf("  %s (%s%s%s)\n", jstr(p, "name"), jstr(p, "kind"), *jstr(p, "version") ? " " : "",
               jstr(p, "version"));
        if (*jstr(p, "doc")) printf("    %s\n", jstr(p, "doc"));
        if (*jstr(p, "path")) printf("    path: %s\n", jstr(p, "path"));
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(p, "requires");
        if (cJSON_GetArraySize(req) > 0) print_words(req, NULL, "    requires:");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(p, "params");
        if (cJSON_GetArraySize(params) == 0) continue;
        table t = {.ncols = 6};
        table_row(&t, "param", "type", "value", "default", "range", "doc");
        const cJSON *q;
        cJSON_ArrayForEach(q, params) {
            char value[64], def[64], lo[64], hi[64], range[160] = "", key[256];
            jkey_text(q, "value", value, sizeof value);
            jkey_text(q, "default", def, sizeof def);
            if (cJSON_GetObjectItemCaseSensitive(q, "min")) {
                jkey_text(q, "min", lo, sizeof lo);
                jkey_text(q, "max", hi, sizeof hi);
                snprintf(range, sizeof range, "[%s, %s]", lo, hi);
            }
            snprintf(key, sizeof key, "%s%s", jstr(q, "key"),
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "required")) ? "*" : "");
            table_row(&t, key, jstr(q, "type"), value, def, range, jstr(q, "doc"));
        }
        ok = table_done(&t, "    ") && ok;
    }
    return ok;
}

static bool print_observation(const cJSON *d)
{
    static const column cols[] = {
        {"name", "name", NULL},      {"dtype", NULL, cell_dtype}, {"shape", NULL, cell_shape},
        {"offset", "#offset", NULL}, {"bytes", "#nbytes", NULL},  {"range", NULL, cell_range},
        {"owner", "owner", NULL},    {"doc", "doc", NULL},
    };
    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(d, "observation");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(obs, "fields");
    char size[64];
    jkey_text(obs, "obs_size", size, sizeof size);
    int n = cJSON_GetArraySize(fields);
    printf("\nobservation (%d field%s, %s bytes per agent)\n", n, n == 1 ? "" : "s", size);
    bool ok = print_rows(fields, cols);
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(obs, "shared_fields");
    if (cJSON_GetArraySize(shared) == 0) return ok;
    jkey_text(obs, "shared_size", size, sizeof size);
    n = cJSON_GetArraySize(shared);
    printf("\nshared observation (%d field%s, %s bytes per env, the same for every agent)\n", n,
           n == 1 ? "" : "s", size);
    return print_rows(shared, cols) && ok;
}

/* Hooks per phase: "phase  owner(priority) ...", no header. */
static bool print_hooks(const cJSON *d)
{
    heading("hooks (run order per phase: owner(priority))", -1);
    table t = {.ncols = 2};
    const cJSON *phase;
    cJSON_ArrayForEach(phase, cJSON_GetObjectItemCaseSensitive(d, "hooks")) {
        char list[1024] = "", b[64];
        size_t used = 0;
        const cJSON *h;
        cJSON_ArrayForEach(h, phase) {
            jkey_text(h, "priority", b, sizeof b);
            append(list, sizeof list, &used, "%s%s(%s)", used ? " " : "", jstr(h, "owner"), b);
        }
        table_row(&t, phase->string ? phase->string : "?", used ? list : "-");
    }
    return table_done(&t, "  ");
}

static bool print_parsers(const cJSON *d)
{
    const cJSON *parsers = cJSON_GetObjectItemCaseSensitive(d, "action_parsers");
    heading("action parsers", cJSON_GetArraySize(parsers));
    if (cJSON_GetArraySize(parsers) > 0) print_words(parsers, "owner", "  ");
    return true;
}

/* A draw of the scenario's "vary" as its JSON, cut to the cell. */
static void cell_draw(const cJSON *v, char *buf, size_t size)
{
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(v, "draw"));
    if (text && strlen(text) > 160) memcpy(text + 157, "...", 4);
    snprintf(buf, size, "%s", text ? text : "?");
    cJSON_free(text);
}

/* The scenario's "vary", only when it has one (most scenarios vary nothing). */
static bool print_vary(const cJSON *d)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(d, "vary");
    if (cJSON_GetArraySize(list) == 0) return true;
    heading("vary (drawn anew at every reset from its seed; docs/scenario.md)",
            cJSON_GetArraySize(list));
    static const column cols[TABLE_MAXCOLS] = {{"path", "path", NULL}, {"draw", NULL, cell_draw}};
    return print_rows(list, cols);
}

static const section SECTIONS[] = {
    {.print = print_scenario},
    {.print = print_agents},
    {.print = print_grid},
    {.print = print_plugins},
    {.print = print_vary},
    {.title = "actions",
     .key = "actions",
     .always = true,
     .cols = {{"id", "#id", NULL},
              {"name", "name", NULL},
              {"owner", "owner", NULL},
              {"doc", "doc", NULL}}},
    {.print = print_observation},
    {.title = "reward functions",
     .key = "rewards",
     .always = false,
     .cols = {{"name", "name", NULL}, {"weight", "#weight", NULL}, {"owner", "owner", NULL}}},
    {.title = "reward transforms",
     .key = "reward_transforms",
     .always = false,
     .cols = {{"name", "name", NULL}, {"priority", "#priority", NULL}, {"owner", "owner", NULL}}},
    {.title = "event types",
     .key = "events",
     .always = false,
     .cols = {{"id", "#id", NULL},
              {"name", "name", NULL},
              {"bytes", "#size", NULL},
              {"owner", "owner", NULL},
              {"fields (name:type@offset) / subscribers", NULL, cell_event}}},
    {.print = print_hooks},
    {.title = "components",
     .key = "components",
     .always = false,
     .cols = {{"id", "#id", NULL},
              {"name", "name", NULL},
              {"bytes", "#elem_size", NULL},
              {"owner", "owner", NULL}}},
    {.title = "services",
     .key = "services",
     .always = false,
     .cols = {{"name", "name", NULL}, {"owner", "owner", NULL}}},
    {.title = "exports",
     .key = "exports",
     .always = false,
     .cols = {{"name", "name", NULL}, {"signature", "signature", NULL}, {"doc", "doc", NULL}}},
    {.title = "renderers",
     .key = "renderers",
     .always = false,
     .cols = {{"format", "format", NULL}, {"owner", "owner", NULL}}},
    {.print = print_parsers},
    {.title = "policies",
     .key = "policies",
     .always = false,
     .cols = {{"name", "name", NULL}, {"owner", "owner", NULL}}},
    {.title = "macros",
     .key = "macros",
     .always = false,
     .cols = {{"usage", "usage", NULL}, {"owner", "owner", NULL}, {"doc", "doc", NULL}}},
};

static bool describe_text(const cJSON *d)
{
    bool ok = true;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++) {
        const section *s = &SECTIONS[i];
        if (s->print) {
            ok = s->print(d) && ok;
            continue;
        }
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(d, s->key);
        heading(s->title, cJSON_GetArraySize(list));
        if (s->always || cJSON_GetArraySize(list) > 0) ok = print_rows(list, s->cols) && ok;
    }
    return ok;
}

/* ---- the command ------------------------------------------------------------------------------
 */

static const cli_use USES[] = {
    {.id = CLI_OPT_JSON, .help = "print the JSON document of polis_env_describe_json()"},
    CLI_SCENARIO_OPTIONS,
};

static int describe_main(cli_args *a)
{
    polis_env *env = cli_env_of(a, false, NULL);
    if (!env) return EXIT_ENV;
    char *json = polis_env_describe_json(env);
    polis_env_destroy(env);
    if (!json) {
        fprintf(stderr, "polis: out of memory while describing the scenario\n");
        return EXIT_ENV;
    }
    int rc = 0;
    if (cli_has(a, CLI_OPT_JSON)) {
        fputs(json, stdout);
    } else {
        cJSON *doc = cJSON_Parse(json);
        if (!doc || !describe_text(doc)) {
            fprintf(stderr, "polis: out of memory while describing the scenario\n");
            rc = EXIT_ENV;
        }
        cJSON_Delete(doc);
    }
    polis_free(json);
    return rc;
}

const cli_command CLI_CMD_DESCRIBE = {
    .name = "describe",
    CLI_SCENARIO_AND(USES),
    .summary = "list everything the scenario registers",
    .about = "Lists what SCENARIO registers: plugins and scripts with their parameters, what it\n"
             "varies between episodes (\"vary\"), actions, the\n"
             "observation layout, reward functions and transforms, event types, hooks per phase,\n"
             "components, services, exports, renderers, action parsers, policies and\n"
             "macros (plan commands).\n",
    .run = describe_main,
};
