/* engine/cli/util/options.c — the option table of the `polis` program and the one parser every
 * command goes through (options.h). */
#define _DEFAULT_SOURCE /* strndup */
#include "util/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checks of text values --------------------------------------------------------------- */

/* A format name as renderers register it: [a-z0-9_]+. */
static bool check_format(const char *s, char *why, size_t cap)
{
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
            snprintf(why, cap, "'%s' is not a format name ([a-z0-9_]+, e.g. text or json)", s);
            return false;
        }
    return true;
}

static bool check_seat(const char *s, char *why, size_t cap)
{
    const char *eq = strchr(s, '=');
    if (eq && eq != s && eq[1]) return true;
    snprintf(why, cap, "'%s' is not AGENT=human|client|POLICY", s);
    return false;
}

/* A comma-separated list of action name prefixes and @PLUGIN names, none empty. */
static bool check_exclude(const char *s, char *why, size_t cap)
{
    for (const char *p = s; *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        bool empty = n == 0 || (n == 1 && *p == '@');
        p += n + (c != NULL);
        if (empty || (c && !*p)) {
            snprintf(why, cap, "'%s' has an empty item", s);
            return false;
        }
    }
    return true;
}

/* A pixel observation: CELL, then optionally /D (downscale) and ",grey" (cli_pixels_spec). */
static bool check_pixels(const char *s, char *why, size_t cap)
{
    polis_pixels_obs_opts o;
    if (cli_pixels_spec(s, &o)) return true;
    snprintf(why, cap,
             "'%s' is not CELL[/D][,grey] (CELL 1 to 64 pixels per cell, D a divisor of CELL)", s);
    return false;
}

bool cli_pixels_spec(const char *s, polis_pixels_obs_opts *o)
{
    memset(o, 0, sizeof *o);
    char *end = NULL;
    long c = strtol(s, &end, 10), d = 1;
    if (end == s || c < 1 || c > 64) return false;
    if (*end == '/') {
        const char *at = end + 1;
        d = strtol(at, &end, 10);
        if (end == at || d < 1 || c % d != 0) return false;
    }
    if (strcmp(end, ",grey") == 0)
        o->grey = true;
    else if (*end)
        return false;
    o->cell_px = (int32_t)c;
    o->downscale = (int32_t)d;
    return true;
}

/* ---- values stored elsewhere ---------------------------------------------------------------- */

static int apply_set(cli_args *a, const char *value)
{
    return cli_overrides_set(&a->overrides, a->name, value);
}

static int apply_agents(cli_args *a, const char *value)
{
    return cli_overrides_agents(&a->overrides, a->name, value);
}

static int apply_grid(cli_args *a, const char *value)
{
    return cli_overrides_grid(&a->grid, a->name, value);
}

/* ---- the table ---------------------------------------------------------------------------- */

/* one initializer per macro, as the table below reads them */
/* clang-format off */
#define TEXT(name_, meta_, noun_, check_, help_)                                               \
    {.name = name_, .metavar = meta_, .kind = CLI_TEXT, .noun = noun_, .check = check_,        \
     .help = help_}
#define INT(name_, meta_, lo_, hi_, unit_, help_)                                              \
    {.name = name_, .metavar = meta_, .kind = CLI_INT, .lo = lo_, .hi = hi_, .unit = unit_,    \
     .help = help_}
#define FLAG(name_, help_) {.name = name_, .kind = CLI_FLAG, .help = help_}
/* clang-format on */

/* needs and excludes are bit sets of option ids */
_Static_assert(CLI_OPT_COUNT <= 64, "cli_use.needs holds 64 options");

const cli_option CLI_OPTIONS[CLI_OPT_COUNT] = {
    [CLI_OPT_SEED] = {.name = "--seed",
                      .metavar = "N",
                      .kind = CLI_U64,
                      .help = "seed of the first episode; episode k uses N+k-1\n"
                              "(default: the scenario's \"seed\")"},
    [CLI_OPT_STEPS] = INT("--steps", "N", 1, INT64_MAX, NULL,
                          "stop each episode after N steps (default: until it ends)"),
    [CLI_OPT_EPISODES] =
        INT("--episodes", "N", 1, INT64_MAX, NULL, "number of episodes (default 1)"),
    [CLI_OPT_POLICY] = TEXT("--policy", "NAME", "policy name", NULL,
                            "random: each agent picks uniformly among its legal actions,\n"
                            "from a generator seeded by the episode seed (reproducible);\n"
                            "noop: every agent takes action 0 (default random);\n"
                            "uniform: uniform over all actions, ignoring the mask; any\n"
                            "other name: a policy the scenario's plugins register\n"
                            "(`polis describe` lists them, e.g. greedy, scripted)"),
    [CLI_OPT_AGENT] =
        TEXT("--agent", "A", "value (an id or a name)", NULL, "the agent, an id or an agent name"),
    [CLI_OPT_SET] = {.name = "--set",
                     .metavar = "PATH=JSON",
                     .kind = CLI_APPLY,
                     .apply = apply_set,
                     .flags = CLI_MANY,
                     .help = "override a value of the scenario (repeatable; docs/scenario.md,\n"
                             "\"Overrides\"): --set max_steps=50, --set grid.width=64,\n"
                             "--set plugins.gather.params.coins=3, --set 'name=\"x\"'"},
    [CLI_OPT_AGENTS] = {.name = "--agents",
                        .metavar = "N",
                        .kind = CLI_APPLY,
                        .apply = apply_agents,
                        .help = "the scenario's agent count (as --set agents=N)"},
    [CLI_OPT_PLUGIN_PATH] = TEXT("--plugin-path", "DIRS", "directory list", NULL,
                                 "extra ':'-separated plugin directories, searched first"),
    [CLI_OPT_NO_METRICS] =
        FLAG("--no-metrics", "do not add the metrics plugin when the scenario lacks it"),
    [CLI_OPT_QUIET] = FLAG("--quiet", "print only the closing summary line"),
    [CLI_OPT_JSON] = FLAG("--json", "print one JSON object per episode (one per line)"),
    [CLI_OPT_JSON_FILE] = TEXT("--json", "FILE", "file name", NULL,
                               "also write the results as JSON to FILE ('-': stdout)"),
    [CLI_OPT_FORMAT] = TEXT("--format", "F", "format name", check_format,
                            "text (default), json, or another format a plugin renders"),
    [CLI_OPT_RECORD] = TEXT("--record", "FILE", "file name", NULL,
                            "record every episode to FILE (docs/recording.md; gzip when it\n"
                            "ends in .gz); check it with `polis replay FILE --verify`"),
    [CLI_OPT_KEYFRAME_EVERY] = INT("--keyframe-every", "K", 1, INT32_MAX, NULL,
                                   "a full keyframe every K ticks in the recording (default 100)"),
    [CLI_OPT_OUT] = TEXT("--out", "FILE", "name", NULL, "where the output goes"),
    [CLI_OPT_VIDEO] = TEXT("--video", "OUT", "name", NULL,
                           "OUT.mp4 or OUT.gif through ffmpeg (without ffmpeg on PATH:\n"
                           "numbered PNG files into OUT.frames/, said on stdout), or DIR (a\n"
                           "name ending in '/' or without a '.'): numbered PNG files there"),
    [CLI_OPT_PNG] = TEXT("--png", "OUT.png", "file name", NULL, "draw the scene into a PNG file"),
    [CLI_OPT_CELL] =
        INT("--cell", "PX", 1, 64, "pixels per cell", "pixels per cell (1 to 64, default 16)"),
    [CLI_OPT_FPS] = INT("--fps", "N", 1, 120, "frames per second",
                        "frames per second of the video (1 to 120, default 8)"),
    [CLI_OPT_GLYPHS] =
        FLAG("--glyphs", "draw kinds with an ASCII glyph as that glyph (cells of 8 px on)"),
    [CLI_OPT_ENVS] = INT("--envs", "M", 1, INT32_MAX, NULL, "envs stepped together (default 1)"),
    [CLI_OPT_THREADS] = INT("--threads", "T", 1, INT32_MAX, NULL, "threads"),
    [CLI_OPT_EXCLUDE_ACTIONS] =
        TEXT("--exclude-actions", "LIST", "list", check_exclude,
             "comma-separated: NAME excludes the actions whose names start\n"
             "with NAME, @PLUGIN the actions PLUGIN registered; an agent with no\n"
             "other legal action takes noop"),
    [CLI_OPT_NO_OBS] = FLAG("--no-obs", "do not write observation fields (masks are still "
                                        "written)"),
    [CLI_OPT_COMPACT] =
        FLAG("--compact", "compact observations (polis_options.compact_observations)"),
    [CLI_OPT_PIXELS] = TEXT("--pixels", "CELL[/D][,grey]", "pixel observation", check_pixels,
                            "also draw every agent's pixel observation after each step\n"
                            "(polis_pixels_obs: CELL pixels per cell, downscaled by D, grey)"),
    [CLI_OPT_REPEAT] = INT("--repeat", "R", 1, 1000000, NULL, "timed repetitions (default 5)"),
    [CLI_OPT_WARMUP] = INT("--warmup", "W", 0, INT64_MAX, NULL,
                           "untimed vec steps before them (default 200; 0 for none)"),
    [CLI_OPT_STDIO] = FLAG("--stdio", "serve one client on stdin/stdout; exit when it closes"),
    [CLI_OPT_TCP] = TEXT("--tcp", "[HOST:]PORT", "address", NULL,
                         "listen on HOST (default 127.0.0.1) and PORT (0: any free port)"),
    [CLI_OPT_HTTP] = TEXT("--http", "[HOST:]PORT", "address", NULL,
                          "serve the viewer and play live on HOST and PORT"),
    [CLI_OPT_ALLOW_REMOTE] =
        FLAG("--allow-remote", "allow a HOST that is not a loopback address (the protocol "
                               "has\nno authentication: anyone who can connect can play)"),
    [CLI_OPT_MAX_CLIENTS] = INT("--max-clients", "N", 1, 1024, NULL,
                                "TCP connections served at once (default 8); others are told\n"
                                "'server_full' and closed"),
    [CLI_OPT_IDLE_TIMEOUT] = INT("--idle-timeout", "S", 0, 86400, "seconds",
                                 "TCP: drop a client whose next request has not fully arrived\n"
                                 "S seconds after the last reply (default 600; 0: never)"),
    [CLI_OPT_WRITE_TIMEOUT] = INT("--write-timeout", "S", 0, 86400, "seconds",
                                  "TCP: drop a client that has not taken a reply within S\n"
                                  "seconds (default 60; 0: never)"),
    [CLI_OPT_ISOLATE] =
        FLAG("--isolate", "TCP: serve each client in its own process, so a plugin that\n"
                          "crashes ends that client's session only (and is reported)"),
    [CLI_OPT_ON_BAD_ACTION] =
        TEXT("--on-bad-action", "P", "value", NULL,
             "what an unparseable or illegal action becomes: 'error' (default;\n"
             "the step is refused and the client asked again) or 'noop' (the\n"
             "agent does noop and the episode's stats count it)"),
    [CLI_OPT_SEAT] = {.name = "--seat",
                      .metavar = "AGENT=WHO",
                      .kind = CLI_TEXT,
                      .noun = "value",
                      .check = check_seat,
                      .flags = CLI_MANY,
                      .help = "who plays AGENT (repeatable)"},
    [CLI_OPT_TICK_MS] = INT("--tick-ms", "N", 0, 3600000, NULL, "tick every N ms"),
    [CLI_OPT_SCENARIO] = {.name = "--scenario",
                          .metavar = "FILE",
                          .kind = CLI_TEXT,
                          .noun = "file name",
                          .flags = CLI_MANY,
                          .help = "a scenario (repeatable)"},
    [CLI_OPT_GRID] = {.name = "--grid",
                      .metavar = "PATH=ARRAY",
                      .kind = CLI_APPLY,
                      .apply = apply_grid,
                      .flags = CLI_MANY,
                      .help = "an override path and its values (repeatable)"},
    [CLI_OPT_RESUME] = FLAG("--resume", "finish the sweep the output holds"),
    [CLI_OPT_RECORD_ALL] = FLAG("--record", "record every episode"),
    [CLI_OPT_PORT] = INT("--port", "P", 0, 65535, "a port number",
                         "the TCP port on 127.0.0.1 (default 0: any free port)"),
    [CLI_OPT_FOLLOW] = FLAG("--follow", "stream FILE to the page as it grows"),
    [CLI_OPT_VERIFY] = FLAG("--verify", "check the whole file (the default without --tick)"),
    [CLI_OPT_TICK] = INT("--tick", "T", 0, INT64_MAX, "a tick",
                         "stop at tick T of the episode (checking everything before it)"),
    [CLI_OPT_RENDER] = TEXT("--render", "FORMAT", "format name", check_format,
                            "with --tick: print the agent's view in FORMAT (text, json, ...)"),
    [CLI_OPT_EPISODE] = INT("--episode", "E", 0, INT64_MAX, "an episode",
                            "the episode of --tick or --video, from 0 (default 0)"),
    [CLI_OPT_TRUST] =
        FLAG("--trust", "load the plugin files the recording names by path (native code\n"
                        "of whoever wrote it); without it they are loaded by name from\n"
                        "the plugin path, and the paths refused are said"),
    [CLI_OPT_ALLOW_ORIGIN] = {.name = "--allow-origin",
                              .metavar = "ORIGIN",
                              .kind = CLI_TEXT,
                              .noun = "origin",
                              .check = cli_check_origin,
                              .flags = CLI_MANY,
                              .help =
                                  "also serve pages of ORIGIN (http://HOST[:PORT]) and requests\n"
                                  "that name HOST; repeatable; '*' allows every origin and host\n"
                                  "(any web page a viewer opens may then use the server)"},
    [CLI_OPT_MAX_PAGES] = INT("--max-pages", "N", 1, 100000, NULL,
                              "WebSocket connections (pages watching or holding seats) served\n"
                              "at once (default 64); more are refused"),
    [CLI_OPT_FOCAL] = {.name = "--focal",
                       .metavar = "WHO",
                       .kind = CLI_TEXT,
                       .noun = "player",
                       .flags = CLI_MANY,
                       .help = "who plays the focal seats: a policy, py:SPEC, cmd:PROGRAM,\n"
                               "or a population file (repeatable: the rows of the matrix)"},
    [CLI_OPT_FOCAL_SEATS] = TEXT("--focal-seats", "AGENTS", "agent list", NULL,
                                 "the focal seats: agent names or ids, and ranges of ids,\n"
                                 "comma-separated (0-1,miner_3; default 0)"),
    [CLI_OPT_BACKGROUND] = {.name = "--background",
                            .metavar = "WHO",
                            .kind = CLI_TEXT,
                            .noun = "player",
                            .flags = CLI_MANY,
                            .help = "who plays every other seat: a population file, a policy,\n"
                                    "py:SPEC or cmd:PROGRAM (repeatable: the columns)"},
    [CLI_OPT_POLICY_TIMEOUT] = INT("--policy-timeout", "S", 1, 86400, "seconds",
                                   "the longest a policy process may take to answer\n"
                                   "(default 600)"),
};

/* ---- help ---------------------------------------------------------------------------------- */

/* "  --name META          first line" and the help's further lines under the first. */
static void print_option(const char *left, const char *help)
{
    if (strlen(left) <= 20)
        printf("  %-20s ", left);
    else
        printf("  %s\n%23s", left, "");
    for (const char *p = help; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        printf("%.*s\n", n, p);
        if (!nl) break;
        p = nl + 1;
        printf("%23s", "");
    }
}

void cli_command_help(const cli_command *c)
{
    if (c->usage)
        printf("usage: polis %s\n", c->usage);
    else
        printf("usage: polis %s %s [options]\n", c->name, c->args);
    if (c->about) printf("\n%s", c->about);
    if (c->n_uses > 0) printf("\noptions:\n");
    for (int i = 0; i < c->n_uses; i++) {
        const cli_use *u = &c->uses[i];
        const cli_option *o = &CLI_OPTIONS[u->id];
        char left[64];
        const char *meta = u->metavar ? u->metavar : o->metavar;
        snprintf(left, sizeof left, "%s%s%s", o->name, meta ? " " : "", meta ? meta : "");
        print_option(left, u->help ? u->help : o->help);
    }
    if (c->notes) printf("\n%s", c->notes);
}

/* ---- parsing ------------------------------------------------------------------------------- */

static const cli_use *find_use(const cli_command *c, const char *arg, size_t len)
{
    for (int i = 0; i < c->n_uses; i++) {
        const char *name = CLI_OPTIONS[c->uses[i].id].name;
        if (strlen(name) == len && strncmp(name, arg, len) == 0) return &c->uses[i];
    }
    return NULL;
}

static int unknown_option(const cli_command *c, const char *name, const char *arg, size_t len)
{
    if (!c->unknown_lists) return cli_usage(name, "unknown option '%.*s'", (int)len, arg);
    char list[1024] = "";
    size_t used = 0;
    for (int i = 0; i < c->n_uses; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                         CLI_OPTIONS[c->uses[i].id].name);
        if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
    }
    return cli_usage(name, "unknown option '%.*s' (%s: %s)", (int)len, arg, c->unknown_lists, list);
}

/* Reads one value of the option `u` into a. */
static int take(cli_args *a, const cli_use *u, const char *value)
{
    const cli_option *o = &CLI_OPTIONS[u->id];
    cli_value *v = &a->v[u->id];
    const char *cmd = a->name;
    switch (o->kind) {
    case CLI_FLAG: return 0;
    case CLI_INT: {
        int64_t lo = u->hi > 0 ? u->lo : o->lo, hi = u->hi > 0 ? u->hi : o->hi;
        if (!cli_parse_int(value, lo, hi, &v->num))
            return cli_int_error(cmd, o->name, value, lo, hi, o->unit);
        return 0;
    }
    case CLI_U64:
        if (!cli_parse_u64(value, &v->u64) || (u->hi > 0 && v->u64 > (uint64_t)u->hi)) {
            if (u->hi > 0) return cli_int_error(cmd, o->name, value, 0, u->hi, NULL);
            return cli_usage(cmd, "%s: '%s' is not an integer in [0, 2^64)", o->name, value);
        }
        return 0;
    case CLI_TEXT: {
        if (!*value) return cli_usage(cmd, "%s: empty %s", o->name, o->noun ? o->noun : "value");
        if (u->choices) {
            bool ok = false;
            for (const char *const *c = u->choices; *c && !ok; c++) ok = strcmp(*c, value) == 0;
            if (!ok) {
                char list[256] = "";
                size_t used = 0;
                for (const char *const *c = u->choices; *c; c++) {
                    int n = snprintf(list + used, sizeof list - used, "%s%s",
                                     c == u->choices ? "" : ", ", *c);
                    if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
                }
                return cli_usage(cmd, "%s: '%s' is not one of: %s", o->name, value, list);
            }
        } else if (u->check || o->check) {
            char why[512];
            if (!(u->check ? u->check : o->check)(value, why, sizeof why))
                return cli_usage(cmd, "%s: %s", o->name, why);
        }
        v->text = value;
        if ((o->flags | u->flags) & CLI_MANY) {
            const char **l = realloc(v->list, sizeof *l * (size_t)(v->n + 1));
            if (!l) return cli_usage(cmd, "out of memory");
            l[v->n] = value;
            v->list = l;
        }
        return 0;
    }
    case CLI_APPLY: return o->apply(a, value);
    }
    return 0;
}

/* "--format and --png: choose one" (`excludes`), or else "--cell needs --png OUT.png or
 * --video OUT" (`needs`), for an option given. */
static int relation(const cli_args *a, const cli_use *u, bool excludes)
{
    const char *name = CLI_OPTIONS[u->id].name;
    if (excludes) {
        for (int k = 0; k < CLI_OPT_COUNT; k++)
            if ((u->excludes & CLI_BIT(k)) && a->v[k].n > 0)
                return cli_usage(a->name, "%s and %s: choose one%s%s%s", name, CLI_OPTIONS[k].name,
                                 u->why ? " (" : "", u->why ? u->why : "", u->why ? ")" : "");
        return 0;
    }
    int left = 0;
    for (int k = 0; k < CLI_OPT_COUNT; k++) {
        if (!(u->needs & CLI_BIT(k))) continue;
        if (a->v[k].n > 0) return 0;
        left++;
    }
    if (left == 0) return 0;
    char list[256] = "";
    size_t used = 0;
    for (int k = 0; k < CLI_OPT_COUNT; k++) {
        if (!(u->needs & CLI_BIT(k))) continue;
        left--;
        const cli_option *o = &CLI_OPTIONS[k];
        int n = snprintf(list + used, sizeof list - used, "%s%s%s%s", o->name,
                         o->metavar ? " " : "", o->metavar ? o->metavar : "",
                         left > 1    ? ", "
                         : left == 1 ? " or "
                                     : "");
        if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
    }
    return cli_usage(a->name, "%s needs %s", name, list);
}

static void args_free(cli_args *a)
{
    for (int i = 0; i < CLI_OPT_COUNT; i++) free(a->v[i].list);
    cli_overrides_free(&a->overrides);
    cli_overrides_free(&a->grid);
}

/* Parses argv[2..]; 0, -1 for --help, or EXIT_USAGE (printed). */
static int parse(const cli_command *c, int argc, char **argv, cli_args *a)
{
    bool only_positional = false;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!only_positional && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) return -1;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (a->n_pos < c->n_pos) {
                a->pos[a->n_pos++] = arg;
                continue;
            }
            if (c->n_pos == 0) return cli_usage(a->name, "unexpected argument '%s'", arg);
            return cli_usage(a->name, "unexpected argument '%s' (%s is '%s'%s%s)", arg,
                             c->pos_name[c->n_pos - 1], a->pos[c->n_pos - 1],
                             c->extra_note ? "; " : "", c->extra_note ? c->extra_note : "");
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const cli_use *u = find_use(c, arg, len);
        if (!u) return unknown_option(c, a->name, arg, len);
        const cli_option *o = &CLI_OPTIONS[u->id];
        const char *value = "";
        if (o->kind == CLI_FLAG) {
            if (eq) return cli_usage(a->name, "%s takes no value", o->name);
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return cli_usage(a->name, "%s needs a value", o->name);
        }
        if (a->v[u->id].n > 0 && !((o->flags | u->flags) & CLI_MANY))
            return cli_usage(a->name, "%s is given more than once", o->name);
        int rc = take(a, u, value);
        if (rc) return rc;
        if (a->v[u->id].n++ == 0) a->v[u->id].at = i;
    }
    if (a->n_pos < c->n_required)
        return cli_usage(a->name, "missing %s (%s)", c->pos_name[a->n_pos], c->pos_what[a->n_pos]);
    /* what an option refuses beside it, then what it needs */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->n_uses; i++) {
            if (a->v[c->uses[i].id].n == 0) continue;
            int rc = relation(a, &c->uses[i], pass == 0);
            if (rc) return rc;
        }
    /* the defaults of the options not given */
    for (int i = 0; i < c->n_uses; i++) {
        const cli_use *u = &c->uses[i];
        if (u->def && a->v[u->id].n == 0) {
            int rc = take(a, u, u->def);
            if (rc) return rc;
        }
    }
    return 0;
}

int cli_command_main(const cli_command *c, int argc, char **argv)
{
    cli_args a;
    memset(&a, 0, sizeof a);
    a.cmd = c;
    a.name = c->name;
    int rc = parse(c, argc, argv, &a);
    if (rc < 0) {
        cli_command_help(c);
        rc = 0;
    } else if (rc == 0) {
        rc = c->run(&a);
    }
    args_free(&a);
    return rc;
}
