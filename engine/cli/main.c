/*
 * engine/cli/main.c — the `polis` command: run, validate and describe scenarios, render an
 * agent's view and parse a text action.
 *
 * The CLI is a client of the public embedding API only (polis.h): it sees what any host
 * program sees. Exit status: 0 success, 1 the env refused (its message, prefixed "polis: "),
 * 2 a usage error (unknown command or option, missing or malformed argument).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "frames.h"
#include "util.h"
#include "eval.h"
#include "serve.h"
#include "sweep.h"
#include "view.h"
#include "record.h"
#include "replay.h"
#include "polis/polis.h"
#include "polis/rng.h"

/* The policy's own generator stream, so a random policy never shares draws with the env. */
#define CLI_POLICY_STREAM 0x706f6c69637955ULL

/* ---- help ----------------------------------------------------------------------------- */

static const char USAGE[] =
    "usage: polis <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO        play episodes with a built-in policy and print what happened\n"
    "  validate SCENARIO   load the scenario, its plugins and scripts; report errors\n"
    "  describe SCENARIO   list everything the scenario registers\n"
    "  render SCENARIO     print agents' views (text or JSON) or draw a PNG after K steps\n"
    "  record SCENARIO     play episodes like run into a recording and/or a video\n"
    "  parse SCENARIO ACTION\n"
    "                      turn a text or JSON action into an action id\n"
    "  bench SCENARIO      measure steps per second (vectorised envs, threads)\n"
    "  eval SCENARIO       evaluate a policy: metrics over N episodes (mean and std)\n"
    "  serve SCENARIO      serve agents (LLM or any language) over JSON lines on stdio/TCP\n"
    "  sweep [SPEC]        play a grid of scenarios x overrides x policies x seeds (threads\n"
    "                      or MPI ranks), resumable; a summary per cell\n"
    "  view FILE           watch a recording in the browser viewer (served on 127.0.0.1)\n"
    "  replay FILE         check a recording (--record) by re-simulating it; show a tick\n"
    "  help [COMMAND]      show this help or a command's help\n"
    "\n"
    "options:\n"
    "  --help, -h          show help\n"
    "  --version           print the polis version\n"
    "\n"
    "Exit status: 0 ok, 1 the scenario or engine failed, 2 bad usage.\n";

static const char HELP_RUN[] =
    "usage: polis run SCENARIO [options]\n"
    "\n"
    "Plays episodes of SCENARIO and prints, per episode: steps, the return of each agent\n"
    "(sum of its rewards), its count of illegal actions, the count of each event type, the\n"
    "final state hash and the env's speed in steps per second.\n"
    "\n"
    "options:\n"
    "  --seed N             seed of the first episode; episode k uses N+k-1\n"
    "                       (default: the scenario's \"seed\")\n"
    "  --steps N            stop each episode after N steps (default: until it ends)\n"
    "  --episodes N         number of episodes (default 1)\n"
    "  --policy NAME        random: each agent picks uniformly among its legal actions,\n"
    "                       from a generator seeded by the episode seed (reproducible);\n"
    "                       noop: every agent takes action 0 (default random);\n"
    "                       uniform: uniform over all actions, ignoring the mask; any\n"
    "                       other name: a policy the scenario's plugins register\n"
    "                       (`polis describe` lists them, e.g. greedy, scripted)\n"
    "  --quiet              print only the closing summary line\n"
    "  --json               print one JSON object per episode (one per line)\n"
    CLI_OVERRIDES_HELP
    CLI_RECORD_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

static const char HELP_VALIDATE[] =
    "usage: polis validate SCENARIO [--set PATH=JSON]... [--agents N] [--plugin-path DIRS]\n"
    "\n"
    "Creates an env from SCENARIO: parses it, loads its plugins and scripts, validates every\n"
    "parameter and freezes registration. Prints\n"
    "  ok: <name>: N agents, M actions, K obs bytes\n"
    "or the error with its place (JSON path, file:line).\n"
    "\n"
    "options:\n"
    CLI_OVERRIDES_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

static const char HELP_DESCRIBE[] =
    "usage: polis describe SCENARIO [--json] [--set PATH=JSON]... [--plugin-path DIRS]\n"
    "\n"
    "Lists what SCENARIO registers: plugins and scripts with their parameters, actions, the\n"
    "observation layout, reward functions and transforms, event types, hooks per phase,\n"
    "components, services, exports, renderers, action parsers, policies and\n"
    "macros (plan commands).\n"
    "\n"
    "options:\n"
    "  --json               print the JSON document of polis_env_describe_json()\n"
    CLI_OVERRIDES_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

static const char HELP_RENDER[] =
    "usage: polis render SCENARIO [options]\n"
    "\n"
    "Resets SCENARIO, plays K steps with a built-in policy, then prints what the registered\n"
    "renderers make of the state: each agent's view, or one agent's. The policy and seeds are\n"
    "those of `polis run`, so `render --seed N --steps K` shows the state that\n"
    "`run --seed N --steps K` ends in (fewer steps if the episode ends first).\n"
    "\n"
    "options:\n"
    "  --seed N             episode seed (default: the scenario's \"seed\")\n"
    "  --steps K            steps to play before rendering (default 0: the reset state)\n"
    "  --agent A            only agent A (an id or an agent name; default: every agent, each\n"
    "                       under a \"== name ==\" heading, or one JSON object by name)\n"
    "  --format F           text (default), json, or another format a plugin renders\n"
    "  --policy NAME        as for `polis run` (default random)\n"
    "  --png OUT.png        draw the map (with --agent: that agent's view) into a PNG file\n"
    "                       instead of printing (docs/recording.md, \"Pixels\")\n"
    "  --cell PX            pixels per cell of --png (1 to 64, default 16)\n"
    "  --glyphs             with --png: draw kinds with an ASCII glyph as that glyph\n"
    CLI_OVERRIDES_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

static const char HELP_RECORD[] =
    "usage: polis record SCENARIO [options of run] [--out FILE.jsonl[.gz]]\n"
    "                    [--video OUT.mp4|OUT.gif|DIR] [--agent A] [--cell PX] [--fps N]\n"
    "                    [--glyphs]\n"
    "\n"
    "Plays episodes of SCENARIO exactly like `polis run` (same seeds, policies and summary)\n"
    "and writes what happened: --out the recording (docs/recording.md; check it with `polis\n"
    "replay FILE`, watch it with `polis view FILE`), --video the pixels of every tick, one\n"
    "frame after each reset and after each step of every episode played, drawn like the\n"
    "viewer draws the map (polis_pixels_draw). At least one of the two.\n"
    "\n"
    "options (and those of run, but --record):\n"
    "  --out FILE           the recording (gzip when FILE ends in .gz)\n"
    "  --keyframe-every K   a full keyframe every K ticks in the recording (default 100)\n"
    "  --video OUT          OUT.mp4 or OUT.gif through ffmpeg (without ffmpeg on PATH:\n"
    "                       numbered PNG files into OUT.frames/, said on stdout), or DIR (a\n"
    "                       name ending in '/' or without a '.'): numbered PNG files there\n"
    "  --agent A            draw agent A's view (an id or a name; default the whole map)\n"
    "  --cell PX            pixels per cell (1 to 64, default 16)\n"
    "  --fps N              frames per second of the video (1 to 120, default 8)\n"
    "  --glyphs             draw kinds with an ASCII glyph as that glyph (cells of 8 px on)\n";

static const char HELP_PARSE[] =
    "usage: polis parse SCENARIO [options] ACTION\n"
    "\n"
    "Resets SCENARIO and turns ACTION, an agent's text or JSON action (\"move north\",\n"
    "'{\"action\": \"move\", \"direction\": \"north\"}'), into an action id the way\n"
    "polis_env_parse_action does: an exact action name first, then the registered parsers in\n"
    "order. Prints \"<id> <name>\"; exits 1 with the reason when nothing accepts ACTION. The\n"
    "action mask is not consulted. Put ACTION after -- if it starts with '-'.\n"
    "\n"
    "options:\n"
    "  --agent A            the acting agent, an id or an agent name (default 0)\n"
    "  --seed N             seed of the reset (default: the scenario's \"seed\")\n"
    CLI_OVERRIDES_HELP
    "  --plugin-path DIRS   extra ':'-separated plugin directories, searched first\n";

static const char HELP_HELP[] =
    "usage: polis help [COMMAND]\n"
    "\n"
    "Shows the list of commands, or the help of COMMAND (run, validate, describe, render,\n"
    "record, parse, bench, eval, serve, sweep, replay, view, help).\n";

#define COMMAND_LIST                                                                           \
    "run, validate, describe, render, record, parse, bench, eval, serve, sweep, replay, view, " \
    "help"

static const char *command_help(const char *cmd)
{
    if (strcmp(cmd, "run") == 0) return HELP_RUN;
    if (strcmp(cmd, "validate") == 0) return HELP_VALIDATE;
    if (strcmp(cmd, "describe") == 0) return HELP_DESCRIBE;
    if (strcmp(cmd, "render") == 0) return HELP_RENDER;
    if (strcmp(cmd, "record") == 0) return HELP_RECORD;
    if (strcmp(cmd, "parse") == 0) return HELP_PARSE;
    if (strcmp(cmd, "bench") == 0) return CLI_BENCH_HELP;
    if (strcmp(cmd, "eval") == 0) return CLI_EVAL_HELP;
    if (strcmp(cmd, "serve") == 0) return CLI_SERVE_HELP;
    if (strcmp(cmd, "sweep") == 0) return CLI_SWEEP_HELP;
    if (strcmp(cmd, "view") == 0) return CLI_VIEW_HELP;
    if (strcmp(cmd, "replay") == 0) return cli_replay_help();
    if (strcmp(cmd, "help") == 0) return HELP_HELP;
    return NULL;
}

/* ---- options ------------------------------------------------------------------------------ */

/* random and noop are the CLI's own; any other name is a policy a plugin registered. */
typedef enum cli_policy { POLICY_RANDOM, POLICY_NOOP, POLICY_NAMED } cli_policy;

typedef struct cli_args {
    const char *cmd;
    const char *scenario;
    const char *action; /* parse: the second positional argument */
    bool wants_action;
    const char *plugin_path;
    const char *agent; /* as given; resolved against the env's agent names */
    const char *format;
    bool has_seed;
    uint64_t seed;
    int64_t steps; /* 0: until the episode ends */
    int64_t episodes;
    cli_policy policy;
    const char *policy_name; /* POLICY_NAMED */
    bool quiet;
    bool json;
    bool help;
    cli_overrides overrides; /* --set, --agents */
    const char *record;      /* --record FILE */
    int64_t keyframe_every;  /* --keyframe-every K; 0: the default */
    const char *video;       /* record --video OUT */
    const char *png;         /* render --png OUT */
    int64_t cell, fps;       /* --cell PX, --fps N; 0: the defaults */
    bool glyphs;             /* --glyphs */
} cli_args;

/* Which options each command takes. */
enum {
    OPT_SEED = 1 << 0,
    OPT_STEPS = 1 << 1,
    OPT_EPISODES = 1 << 2,
    OPT_POLICY = 1 << 3,
    OPT_QUIET = 1 << 4,
    OPT_JSON = 1 << 5,
    OPT_PLUGIN_PATH = 1 << 6,
    OPT_AGENT = 1 << 7,
    OPT_FORMAT = 1 << 8,
    OPT_SET = 1 << 9,    /* --set PATH=JSON */
    OPT_AGENTS = 1 << 10, /* --agents N */
    OPT_RECORD = 1 << 11, /* --record FILE */
    OPT_KEYFRAME = 1 << 12, /* --keyframe-every K */
    OPT_OUT = 1 << 13,      /* record --out FILE */
    OPT_VIDEO = 1 << 14,    /* record --video OUT */
    OPT_PNG = 1 << 15,      /* render --png OUT */
    OPT_CELL = 1 << 16,     /* --cell PX */
    OPT_FPS = 1 << 17,      /* --fps N */
    OPT_GLYPHS = 1 << 18    /* --glyphs */
};

typedef struct cli_option {
    const char *name;
    int flag;
    bool takes_value;
} cli_option;

static const cli_option OPTIONS[] = {
    {"--seed", OPT_SEED, true},
    {"--steps", OPT_STEPS, true},
    {"--episodes", OPT_EPISODES, true},
    {"--policy", OPT_POLICY, true},
    {"--quiet", OPT_QUIET, false},
    {"--json", OPT_JSON, false},
    {"--plugin-path", OPT_PLUGIN_PATH, true},
    {"--agent", OPT_AGENT, true},
    {"--format", OPT_FORMAT, true},
    {"--set", OPT_SET, true},
    {"--agents", OPT_AGENTS, true},
    {"--record", OPT_RECORD, true},
    {"--keyframe-every", OPT_KEYFRAME, true},
    {"--out", OPT_OUT, true},
    {"--video", OPT_VIDEO, true},
    {"--png", OPT_PNG, true},
    {"--cell", OPT_CELL, true},
    {"--fps", OPT_FPS, true},
    {"--glyphs", OPT_GLYPHS, false},
};

/* A format name as renderers register it: [a-z0-9_]+. */
static bool valid_format(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

/* Parses argv[2..] of a command that takes one SCENARIO (and ACTION if a->wants_action)
 * and the options in `allowed`. Returns 0 or EXIT_USAGE (message printed). */
static int parse_args(int argc, char **argv, int allowed, cli_args *a)
{
    a->episodes = 1;
    a->policy = POLICY_RANDOM;
    bool only_positional = false;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (!only_positional && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
            a->help = true;
            return 0;
        }
        if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (!a->scenario) {
                a->scenario = arg;
            } else if (a->wants_action && !a->action) {
                a->action = arg;
            } else if (a->wants_action) {
                return cli_usage(a->cmd,
                                 "unexpected argument '%s' (ACTION is '%s'; quote an "
                                 "action of several words)",
                                 arg, a->action);
            } else {
                return cli_usage(a->cmd, "unexpected argument '%s' (SCENARIO is '%s')", arg,
                                 a->scenario);
            }
            continue;
        }
        /* --name=value or --name value */
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const cli_option *opt = NULL;
        for (size_t k = 0; k < sizeof OPTIONS / sizeof OPTIONS[0]; k++) {
            if (strlen(OPTIONS[k].name) == name_len &&
                strncmp(OPTIONS[k].name, arg, name_len) == 0 && (OPTIONS[k].flag & allowed)) {
                opt = &OPTIONS[k];
                break;
            }
        }
        if (!opt) return cli_usage(a->cmd, "unknown option '%.*s'", (int)name_len, arg);
        const char *value = NULL;
        if (opt->takes_value) {
            if (eq) {
                value = eq + 1;
            } else {
                if (i + 1 >= argc) return cli_usage(a->cmd, "%s needs a value", opt->name);
                value = argv[++i];
            }
        } else if (eq) {
            return cli_usage(a->cmd, "%s takes no value", opt->name);
        }
        switch (opt->flag) {
        case OPT_SEED:
            if (!cli_parse_u64(value, &a->seed))
                return cli_usage(a->cmd, "--seed: '%s' is not an integer in [0, 2^64)", value);
            a->has_seed = true;
            break;
        case OPT_STEPS:
            if (!cli_parse_int(value, 1, INT64_MAX, &a->steps))
                return cli_usage(a->cmd, "--steps: '%s' is not a positive integer", value);
            break;
        case OPT_EPISODES:
            if (!cli_parse_int(value, 1, INT64_MAX, &a->episodes))
                return cli_usage(a->cmd, "--episodes: '%s' is not a positive integer", value);
            break;
        case OPT_POLICY:
            if (strcmp(value, "random") == 0)
                a->policy = POLICY_RANDOM;
            else if (strcmp(value, "noop") == 0)
                a->policy = POLICY_NOOP;
            else if (*value) {
                a->policy = POLICY_NAMED; /* resolved once the scenario is loaded */
                a->policy_name = value;
            } else
                return cli_usage(a->cmd, "--policy: the policy name is empty");
            break;
        case OPT_QUIET: a->quiet = true; break;
        case OPT_JSON: a->json = true; break;
        case OPT_PLUGIN_PATH:
            if (!*value) return cli_usage(a->cmd, "--plugin-path: empty directory list");
            a->plugin_path = value;
            break;
        case OPT_AGENT:
            if (!*value) return cli_usage(a->cmd, "--agent: empty value (an id or a name)");
            a->agent = value;
            break;
        case OPT_FORMAT:
            if (!valid_format(value))
                return cli_usage(a->cmd,
                                 "--format: '%s' is not a format name ([a-z0-9_]+, "
                                 "e.g. text or json)",
                                 value);
            a->format = value;
            break;
        case OPT_SET: {
            int rc = cli_overrides_set(&a->overrides, a->cmd, value);
            if (rc) return rc;
            break;
        }
        case OPT_AGENTS: {
            int rc = cli_overrides_agents(&a->overrides, a->cmd, value);
            if (rc) return rc;
            break;
        }
        case OPT_RECORD:
            if (!*value) return cli_usage(a->cmd, "--record: empty file name");
            a->record = value;
            break;
        case OPT_KEYFRAME:
            if (!cli_parse_int(value, 1, INT32_MAX, &a->keyframe_every))
                return cli_usage(a->cmd, "--keyframe-every: '%s' is not an integer in [1, %d]",
                                 value, INT32_MAX);
            break;
        case OPT_OUT:
            if (!*value) return cli_usage(a->cmd, "--out: empty file name");
            a->record = value;
            break;
        case OPT_VIDEO:
            if (!*value) return cli_usage(a->cmd, "--video: empty name");
            if (cli_video_kind(value) < 0)
                return cli_usage(a->cmd,
                                 "--video %s: the name must end in .mp4 or .gif, or name a "
                                 "directory (ending in '/' or without a '.')",
                                 value);
            a->video = value;
            break;
        case OPT_PNG:
            if (!*value) return cli_usage(a->cmd, "--png: empty file name");
            if (!cli_frames_have_png())
                return cli_usage(a->cmd, "--png: this polis was built without libpng (install "
                                         "libpng-dev and rebuild)");
            a->png = value;
            break;
        case OPT_CELL:
            if (!cli_parse_int(value, 1, 64, &a->cell))
                return cli_usage(a->cmd, "--cell: '%s' is not 1 to 64 (pixels per cell)", value);
            break;
        case OPT_FPS:
            if (!cli_parse_int(value, 1, 120, &a->fps))
                return cli_usage(a->cmd, "--fps: '%s' is not 1 to 120 (frames per second)",
                                 value);
            break;
        case OPT_GLYPHS: a->glyphs = true; break;
        }
    }
    if (!a->scenario) return cli_usage(a->cmd, "missing SCENARIO (a scenario .json file)");
    bool record_cmd = strcmp(a->cmd, "record") == 0;
    if (a->keyframe_every && !a->record)
        return cli_usage(a->cmd, "--keyframe-every needs %s FILE",
                         record_cmd ? "--out" : "--record");
    if (record_cmd && !a->record && !a->video)
        return cli_usage(a->cmd, "nothing to write: give --out FILE.jsonl[.gz], --video OUT, "
                                 "or both");
    const char *pixels = record_cmd ? "--video OUT" : "--png OUT";
    if ((a->cell || a->glyphs || (record_cmd && (a->fps || a->agent))) && !a->video && !a->png)
        return cli_usage(a->cmd, "%s needs %s",
                         a->cell ? "--cell" : a->glyphs ? "--glyphs" : a->fps ? "--fps" : "--agent",
                         pixels);
    if (a->png && a->format) return cli_usage(a->cmd, "--format and --png: choose one");
    if (a->wants_action && !a->action)
        return cli_usage(a->cmd, "missing ACTION (an action text, e.g. \"move north\")");
    if (!(a->scenario = cli_scenario(a->cmd, a->scenario))) return EXIT_ENV;
    return 0;
}

/* ---- env creation ------------------------------------------------------------------------ */

static void log_to_stderr(void *ud, const char *msg) { fprintf(stderr, "%s\n", msg); }

static polis_env *create_env(const cli_args *a, bool show_logs)
{
    polis_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.plugin_path = a->plugin_path;
    opts.log = show_logs ? log_to_stderr : NULL; /* NULL: the env discards log lines */
    bool oom = false;
    char *overrides = cli_overrides_text(&a->overrides, &oom);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return NULL;
    }
    opts.overrides = overrides; /* copied by the env */
    polis_env *env = NULL;
    polis_error err;
    memset(&err, 0, sizeof err);
    polis_status st = polis_env_create_file(a->scenario, &opts, &env, &err);
    cJSON_free(overrides);
    if (st != POLIS_OK) {
        fprintf(stderr, "polis: %s\n", err.message[0] ? err.message : polis_status_str(err.status));
        cli_scenario_hint(a->scenario);
        return NULL;
    }
    return env;
}

static int env_failure(polis_env *env)
{
    const char *msg = polis_env_error(env);
    fprintf(stderr, "polis: %s\n", msg && *msg ? msg : "unknown error");
    polis_env_destroy(env);
    return EXIT_ENV;
}

/* ---- run ------------------------------------------------------------------------------------ */

typedef struct episode_stats {
    int64_t steps;
    bool done;
    double *returns;  /* [n_agents] */
    int64_t *illegal; /* [n_agents] */
    uint64_t *events; /* [n_event_types], filled by the bus subscriber */
    int32_t n_events;
    double seconds; /* inside polis_env_step only */
} episode_stats;

static void count_event(void *ud, const polis_event *ev)
{
    episode_stats *st = ud;
    if (ev->type >= 0 && ev->type < st->n_events) st->events[ev->type]++;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The name of the policy that plays, as --policy gave it. */
static const char *policy_name(const cli_args *a)
{
    return a->policy == POLICY_NAMED ? a->policy_name
           : a->policy == POLICY_NOOP ? "noop"
                                      : "random";
}

/* The id of a --policy NAME in env, or -1 after printing what the scenario offers. */
static int32_t named_policy(polis_env *env, const cli_args *a)
{
    if (a->policy != POLICY_NAMED) return 0;
    int32_t id = polis_env_policy_find(env, a->policy_name);
    if (id >= 0) return id;
    fprintf(stderr, "polis: %s: --policy: the scenario has no policy named '%s' (policies:", a->cmd,
            a->policy_name);
    for (int32_t i = 0; i < polis_env_n_policies(env); i++)
        fprintf(stderr, " %s", polis_env_policy_name(env, i));
    fprintf(stderr, ")\n");
    return -1;
}

static polis_status choose_actions(polis_env *env, const polis_io *io, cli_policy policy,
                                   int32_t policy_id, polis_rng *rng)
{
    if (policy == POLICY_NAMED) return polis_env_policy_act(env, policy_id, NULL, 0);
    for (int32_t a = 0; a < io->n_agents; a++) {
        int32_t pick = 0;
        if (policy == POLICY_RANDOM) {
            const uint8_t *mask = io->masks + (size_t)a * (size_t)io->n_actions;
            uint32_t n_legal = 0;
            for (int32_t k = 0; k < io->n_actions; k++) n_legal += mask[k] != 0;
            if (n_legal > 0) {
                uint32_t r = polis_rng_below(rng, n_legal);
                for (int32_t k = 0; k < io->n_actions; k++) {
                    if (!mask[k]) continue;
                    if (r-- == 0) {
                        pick = k;
                        break;
                    }
                }
            }
        }
        io->actions[a] = pick;
    }
    return POLIS_OK;
}

/* Rewards are float32, so a return summed in double carries their representation error
 * (15 x 0.1f = 1.5000000223517418); six decimals print what the rewards meant. Returns false
 * for NaN and infinities, which JSON cannot carry. */
static bool format_return(double v, char *buf, size_t size)
{
    if (v != v || v > 1e300 || v < -1e300) {
        snprintf(buf, size, "%g", v);
        return false;
    }
    if (v >= 1e15 || v <= -1e15) {
        snprintf(buf, size, "%.17g", v);
        return true;
    }
    snprintf(buf, size, "%.6f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf) - 1;
        while (end > dot && *end == '0') *end-- = '\0';
        if (end == dot) *end = '\0';
    }
    if (strcmp(buf, "-0") == 0) snprintf(buf, size, "0");
    return true;
}

static double steps_per_second(int64_t steps, double seconds)
{
    return seconds > 0 ? (double)steps / seconds : 0.0;
}

static void print_episode_text(polis_env *env, int64_t episode, uint64_t seed,
                               const episode_stats *st, uint64_t hash)
{
    int32_t n = polis_env_n_agents(env);
    printf("episode %" PRId64 "  seed %" PRIu64 "  steps %" PRId64 "%s\n", episode, seed, st->steps,
           st->done ? "" : "  (stopped by --steps)");
    int width = 5;
    for (int32_t a = 0; a < n; a++) {
        int len = (int)strlen(polis_env_agent_name(env, a));
        if (len > width) width = len;
    }
    printf("  %-*s  %12s  %8s\n", width, "agent", "return", "illegal");
    for (int32_t a = 0; a < n; a++) {
        char ret[64];
        format_return(st->returns[a], ret, sizeof ret);
        printf("  %-*s  %12s  %8" PRId64 "\n", width, polis_env_agent_name(env, a), ret,
               st->illegal[a]);
    }
    int ewidth = 5;
    bool any = false;
    for (int32_t e = 0; e < st->n_events; e++) {
        if (!st->events[e]) continue;
        int len = (int)strlen(polis_env_event_name(env, e));
        if (len > ewidth) ewidth = len;
        any = true;
    }
    if (any) {
        printf("  %-*s  %12s\n", ewidth, "event", "count");
        for (int32_t e = 0; e < st->n_events; e++)
            if (st->events[e])
                printf("  %-*s  %12" PRIu64 "\n", ewidth, polis_env_event_name(env, e),
                       st->events[e]);
    } else {
        printf("  no events\n");
    }
    printf("  state hash 0x%016" PRIx64 "   %.0f steps/s\n", hash,
           steps_per_second(st->steps, st->seconds));
}

/* One line per episode; false on allocation failure. */
static bool print_episode_json(polis_env *env, const char *policy, int64_t episode,
                               uint64_t seed, const episode_stats *st, uint64_t hash)
{
    char buf[64];
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    ok = ok && cJSON_AddStringToObject(o, "scenario", polis_env_name(env));
    ok = ok && cJSON_AddStringToObject(o, "policy", policy);
    snprintf(buf, sizeof buf, "%" PRId64, episode);
    ok = ok && cJSON_AddRawToObject(o, "episode", buf);
    snprintf(buf, sizeof buf, "%" PRIu64, seed);
    ok = ok && cJSON_AddRawToObject(o, "seed", buf);
    snprintf(buf, sizeof buf, "%" PRId64, st->steps);
    ok = ok && cJSON_AddRawToObject(o, "steps", buf);
    ok = ok && cJSON_AddBoolToObject(o, "done", st->done);
    cJSON *ret = ok ? cJSON_AddObjectToObject(o, "returns") : NULL;
    cJSON *ill = ret ? cJSON_AddObjectToObject(o, "illegal") : NULL;
    cJSON *ev = ill ? cJSON_AddObjectToObject(o, "events") : NULL;
    ok = ev != NULL;
    for (int32_t a = 0; ok && a < polis_env_n_agents(env); a++) {
        const char *name = polis_env_agent_name(env, a);
        ok = cJSON_AddRawToObject(ret, name,
                                  format_return(st->returns[a], buf, sizeof buf) ? buf : "null");
        snprintf(buf, sizeof buf, "%" PRId64, st->illegal[a]);
        ok = ok && cJSON_AddRawToObject(ill, name, buf);
    }
    for (int32_t e = 0; ok && e < st->n_events; e++) {
        snprintf(buf, sizeof buf, "%" PRIu64, st->events[e]);
        ok = cJSON_AddRawToObject(ev, polis_env_event_name(env, e), buf) != NULL;
    }
    snprintf(buf, sizeof buf, "%016" PRIx64, hash);
    ok = ok && cJSON_AddStringToObject(o, "state_hash", buf);
    snprintf(buf, sizeof buf, "%.1f", steps_per_second(st->steps, st->seconds));
    ok = ok && cJSON_AddRawToObject(o, "steps_per_sec", buf);
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    if (text) puts(text);
    cJSON_free(text);
    cJSON_Delete(o);
    return text != NULL;
}

static int resolve_agent(polis_env *env, const cli_args *a, int32_t *out);

/* `polis record --video`: where the frames went. */
static void print_video(const cli_args *a, const cli_frames *fr)
{
    FILE *o = a->json ? stderr : stdout;
    if (fr->fallback)
        fprintf(o, "%s: ffmpeg not found on PATH: %" PRId64 " frames written as %s files into "
                   "%s/ (%d x %d pixels)\n",
                a->video, fr->v.frames, fr->v.ppm ? "PPM" : "PNG", fr->v.dir, (int)fr->w,
                (int)fr->h);
    else if (fr->v.dir[0])
        fprintf(o, "%s: %" PRId64 " frames written as %s files, %d x %d pixels\n", a->video,
                fr->v.frames, fr->v.ppm ? "PPM" : "PNG", (int)fr->w, (int)fr->h);
    else
        fprintf(o, "%s: %" PRId64 " frames, %d x %d pixels\n", a->video, fr->v.frames,
                (int)fr->w, (int)fr->h);
}

static int cmd_run(const cli_args *a)
{
    polis_env *env = create_env(a, !a->quiet && !a->json);
    if (!env) return EXIT_ENV;
    /* record --video: a frame after each reset and each step */
    cli_frames fr;
    memset(&fr, 0, sizeof fr);
    char ferr[1024] = "";
    fr.agent = -1;
    fr.cell = a->cell ? (int32_t)a->cell : 16;
    fr.fps = a->fps ? (int32_t)a->fps : 8;
    fr.flags = a->glyphs ? POLIS_PIXELS_GLYPHS : 0;
    fr.video = a->video;

    polis_recorder *rec = NULL;
    int32_t n_agents = polis_env_n_agents(env);
    episode_stats st;
    memset(&st, 0, sizeof st);
    st.n_events = polis_env_n_event_types(env);
    st.returns = calloc((size_t)n_agents + 1, sizeof *st.returns);
    st.illegal = calloc((size_t)n_agents + 1, sizeof *st.illegal);
    st.events = calloc((size_t)st.n_events + 1, sizeof *st.events);
    int rc = 0;
    if (!st.returns || !st.illegal || !st.events) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    if (polis_env_subscribe(env, -1, count_event, &st) != POLIS_OK) {
        rc = env_failure(env);
        env = NULL;
        goto out;
    }

    const polis_io *io = polis_env_io(env);
    int32_t policy_id = named_policy(env, a);
    if (policy_id < 0) {
        rc = EXIT_ENV;
        goto out;
    }
    if (a->video && a->agent && resolve_agent(env, a, &fr.agent)) {
        rc = EXIT_USAGE;
        goto out;
    }
    uint64_t seed0 = a->has_seed ? a->seed : polis_env_default_seed(env);
    if (a->record) {
        bool oom = false;
        char *ov = cli_overrides_text(&a->overrides, &oom);
        const char *pname = a->policy == POLICY_RANDOM ? "random"
                            : a->policy == POLICY_NOOP ? "noop"
                                                       : a->policy_name;
        cJSON *pol = cJSON_CreateArray();
        for (int32_t ag = 0; pol && ag < n_agents; ag++)
            cJSON_AddItemToArray(pol, cJSON_CreateString(pname));
        char *pol_text = pol ? cJSON_PrintUnformatted(pol) : NULL;
        cJSON_Delete(pol);
        if (!oom && pol_text)
            rec = cli_record_open(a->record, env, a->scenario, ov, seed0, a->keyframe_every,
                                  pol_text, a->cmd);
        else
            fprintf(stderr, "polis: out of memory\n");
        cJSON_free(ov);
        cJSON_free(pol_text);
        if (!rec) {
            rc = EXIT_ENV;
            goto out;
        }
    }
    int64_t total_steps = 0;
    double total_seconds = 0;
    for (int64_t ep = 1; ep <= a->episodes; ep++) {
        uint64_t seed = seed0 + (uint64_t)(ep - 1);
        memset(st.returns, 0, (size_t)n_agents * sizeof *st.returns);
        memset(st.illegal, 0, (size_t)n_agents * sizeof *st.illegal);
        memset(st.events, 0, (size_t)st.n_events * sizeof *st.events);
        st.steps = 0;
        st.seconds = 0;
        polis_rng rng;
        polis_rng_seed(&rng, seed, CLI_POLICY_STREAM);
        if (polis_env_reset(env, seed) != POLIS_OK) {
            rc = env_failure(env);
            env = NULL;
            goto out;
        }
        if (rec && polis_recorder_begin_episode(rec, seed) != POLIS_OK) goto rec_failed;
        if (a->video && cli_frames_add(&fr, env, ferr, sizeof ferr)) goto frames_failed;
        while (!polis_env_done(env) && (a->steps == 0 || st.steps < a->steps)) {
            if (choose_actions(env, io, a->policy, policy_id, &rng) != POLIS_OK) {
                rc = env_failure(env);
                env = NULL;
                goto out;
            }
            double t0 = now_seconds();
            polis_status s = polis_env_step(env);
            st.seconds += now_seconds() - t0;
            if (s != POLIS_OK) {
                rc = env_failure(env);
                env = NULL;
                goto out;
            }
            st.steps++;
            for (int32_t ag = 0; ag < n_agents; ag++) {
                st.returns[ag] += io->rewards[ag];
                st.illegal[ag] += io->illegal[ag] != 0;
            }
            if (rec && polis_recorder_step(rec) != POLIS_OK) goto rec_failed;
            if (a->video && cli_frames_add(&fr, env, ferr, sizeof ferr)) goto frames_failed;
        }
        if (rec && polis_recorder_end_episode(rec, NULL) != POLIS_OK) goto rec_failed;
        st.done = polis_env_done(env);
        uint64_t hash = polis_env_state_hash(env);
        total_steps += st.steps;
        total_seconds += st.seconds;
        if (a->json) {
            if (!print_episode_json(env, policy_name(a), ep, seed, &st, hash)) {
                fprintf(stderr, "polis: out of memory\n");
                rc = EXIT_ENV;
                goto out;
            }
        } else if (!a->quiet) {
            print_episode_text(env, ep, seed, &st, hash);
        }
    }
    if (!a->json)
        printf("%s: %" PRId64 " episode%s, policy %s, %" PRId64 " steps, %.0f steps/s\n",
               polis_env_name(env), a->episodes, a->episodes == 1 ? "" : "s", policy_name(a),
               total_steps, steps_per_second(total_steps, total_seconds));
    if (a->video) {
        if (cli_frames_finish(&fr, ferr, sizeof ferr)) goto frames_failed;
        print_video(a, &fr);
    }
    fflush(stdout);
    goto out;

rec_failed:
    fprintf(stderr, "polis: %s %s: %s\n", strcmp(a->cmd, "record") == 0 ? "--out" : "--record",
            a->record, polis_recorder_error(rec));
    rc = EXIT_ENV;
    goto out;
frames_failed:
    fprintf(stderr, "polis: --video %s: %s\n", a->video, ferr);
    rc = EXIT_ENV;
out:
    cli_frames_finish(&fr, ferr, sizeof ferr);
    if (rec && polis_recorder_close(rec) != POLIS_OK && rc == 0) {
        fprintf(stderr, "polis: %s %s: writing the recording failed\n",
                strcmp(a->cmd, "record") == 0 ? "--out" : "--record", a->record);
        rc = EXIT_ENV;
    }
    free(st.returns);
    free(st.illegal);
    free(st.events);
    if (env) polis_env_destroy(env);
    return rc;
}

/* ---- validate ------------------------------------------------------------------------------ */

static int cmd_validate(const cli_args *a)
{
    polis_env *env = create_env(a, false);
    if (!env) return EXIT_ENV;
    const polis_io *io = polis_env_io(env);
    printf("ok: %s: %d agent%s, %d action%s, %zu obs bytes\n", polis_env_name(env),
           (int)polis_env_n_agents(env), polis_env_n_agents(env) == 1 ? "" : "s",
           (int)polis_env_n_actions(env), polis_env_n_actions(env) == 1 ? "" : "s", io->obs_size);
    polis_env_destroy(env);
    return 0;
}

/* ---- render and parse ------------------------------------------------------------------- */

/* --agent: an agent name or an id. Returns 0 or EXIT_USAGE (message printed). */
static int resolve_agent(polis_env *env, const cli_args *a, int32_t *out)
{
    int32_t n = polis_env_n_agents(env);
    for (int32_t i = 0; i < n; i++) {
        if (strcmp(polis_env_agent_name(env, i), a->agent) == 0) {
            *out = i;
            return 0;
        }
    }
    uint64_t v;
    if (cli_parse_u64(a->agent, &v) && v < (uint64_t)n) {
        *out = (int32_t)v;
        return 0;
    }
    char names[256] = "";
    size_t len = 0;
    int32_t i = 0;
    for (; i < n; i++) {
        const char *name = polis_env_agent_name(env, i);
        if (len + strlen(name) + 8 > sizeof names) break;
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", name);
    }
    if (i < n) snprintf(names + len, sizeof names - len, ", ...");
    return cli_usage(a->cmd,
                     "--agent: '%s' is neither an agent id (0..%d) nor an agent "
                     "name (%s)",
                     a->agent, (int)n - 1, names);
}

/* Prints a rendering, ending it with a newline if it has none. */
static void print_rendering(const char *s)
{
    size_t n = strlen(s);
    fputs(s, stdout);
    if (n == 0 || s[n - 1] != '\n') putchar('\n');
}

static int cmd_render(const cli_args *a)
{
    polis_env *env = create_env(a, false);
    if (!env) return EXIT_ENV;
    int32_t only = -1;
    if (a->agent && resolve_agent(env, a, &only)) {
        polis_env_destroy(env);
        return EXIT_USAGE;
    }
    const char *format = a->format ? a->format : "text";
    int32_t policy_id = named_policy(env, a);
    if (policy_id < 0) {
        polis_env_destroy(env);
        return EXIT_ENV;
    }
    uint64_t seed = a->has_seed ? a->seed : polis_env_default_seed(env);
    polis_rng rng;
    polis_rng_seed(&rng, seed, CLI_POLICY_STREAM);
    if (polis_env_reset(env, seed) != POLIS_OK) return env_failure(env);
    const polis_io *io = polis_env_io(env);
    int64_t played = 0;
    for (; played < a->steps && !polis_env_done(env); played++) {
        if (choose_actions(env, io, a->policy, policy_id, &rng) != POLIS_OK ||
            polis_env_step(env) != POLIS_OK)
            return env_failure(env);
    }
    if (a->png) {
        /* the map, or the --agent's view, into a PNG */
        cli_frames fr;
        memset(&fr, 0, sizeof fr);
        fr.agent = only;
        fr.cell = a->cell ? (int32_t)a->cell : 16;
        fr.flags = a->glyphs ? POLIS_PIXELS_GLYPHS : 0;
        char err[1024];
        int rc = 0;
        if (cli_frames_draw(&fr, env, err, sizeof err) ||
            cli_frames_write_image(a->png, fr.rgb, fr.w, fr.h, false, err, sizeof err)) {
            fprintf(stderr, "polis: render --png %s: %s\n", a->png, err);
            rc = EXIT_ENV;
        } else {
            printf("%s: after %" PRId64 " step%s, %d x %d pixels\n", a->png, played,
                   played == 1 ? "" : "s", (int)fr.w, (int)fr.h);
        }
        cli_frames_finish(&fr, err, sizeof err);
        polis_env_destroy(env);
        return rc;
    }

    /* Everything is rendered before anything is printed, so a failing renderer leaves no
     * partial output behind. */
    int32_t first = only >= 0 ? only : 0, last = only >= 0 ? only : polis_env_n_agents(env) - 1;
    int32_t count = last - first + 1;
    char **views = calloc((size_t)count, sizeof *views);
    if (!views) {
        fprintf(stderr, "polis: out of memory\n");
        polis_env_destroy(env);
        return EXIT_ENV;
    }
    int rc = 0;
    for (int32_t i = 0; i < count && rc == 0; i++) {
        if (polis_env_render(env, first + i, format, &views[i]) != POLIS_OK) {
            fprintf(stderr, "polis: %s\n", polis_env_error(env));
            rc = EXIT_ENV;
        }
    }
    if (rc == 0 && strcmp(format, "json") == 0 && only < 0) {
        /* Every agent's JSON view goes into one object keyed by agent name, so the output
         * stays one JSON document. */
        cJSON *all = cJSON_CreateObject();
        bool ok = all != NULL;
        for (int32_t i = 0; ok && i < count; i++)
            ok = cJSON_AddRawToObject(all, polis_env_agent_name(env, first + i), views[i]) != NULL;
        char *text = ok ? cJSON_PrintUnformatted(all) : NULL;
        if (text) {
            puts(text);
            cJSON_free(text);
        } else {
            fprintf(stderr, "polis: out of memory\n");
            rc = EXIT_ENV;
        }
        cJSON_Delete(all);
    } else if (rc == 0) {
        for (int32_t i = 0; i < count; i++) {
            if (only < 0)
                printf("%s== %s ==\n", i ? "\n" : "", polis_env_agent_name(env, first + i));
            print_rendering(views[i]);
        }
    }
    for (int32_t i = 0; i < count; i++) polis_free(views[i]);
    free(views);
    fflush(stdout);
    polis_env_destroy(env);
    return rc;
}

static int cmd_parse(const cli_args *a)
{
    polis_env *env = create_env(a, false);
    if (!env) return EXIT_ENV;
    int32_t agent = 0;
    if (a->agent && resolve_agent(env, a, &agent)) {
        polis_env_destroy(env);
        return EXIT_USAGE;
    }
    /* Parsers may read the world (the nearest tree, the agent's inventory): give them one. */
    uint64_t seed = a->has_seed ? a->seed : polis_env_default_seed(env);
    if (polis_env_reset(env, seed) != POLIS_OK) return env_failure(env);
    int32_t id;
    if (polis_env_parse_action(env, agent, a->action, &id) != POLIS_OK) return env_failure(env);
    printf("%d %s\n", (int)id, polis_env_action_name(env, id));
    polis_env_destroy(env);
    return 0;
}

/* ---- describe -------------------------------------------------------------------------------- */

/* A text table: rows of cells, printed with columns padded to their widest cell. */
#define TABLE_MAXCOLS 8

typedef struct table {
    int ncols;
    char **cells; /* [nrows][ncols], heap strings */
    int nrows, cap;
    bool failed;
} table;

static void table_row(table *t, ...)
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
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        char *copy = strdup(s ? s : "");
        if (!copy) t->failed = true;
        t->cells[t->nrows * t->ncols + c] = copy;
    }
    va_end(ap);
    t->nrows++;
}

/* Prints with a two-space indent; the last column is not padded (it holds docs). */
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

static void table_free(table *t)
{
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
}

/* Prints (unless a row failed to allocate) and frees; false if the table is incomplete. */
static bool table_done(table *t, const char *indent)
{
    bool ok = !t->failed;
    if (ok) table_print(t, indent);
    table_free(t);
    return ok;
}

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

/* An observation field's declared range: "[lo, hi]", or "dim D: [lo, hi] ..." with one
 * range per index of dimension D (the first four, then the count); "-" when none. */
static void describe_range(const cJSON *r, char *buf, size_t size)
{
    if (!r) {
        snprintf(buf, size, "-");
        return;
    }
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(r, "lo");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(r, "hi");
    int dim = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "dim"));
    int n = cJSON_GetArraySize(lo);
    size_t used = 0;
    int w = dim >= 0 ? snprintf(buf, size, "dim %d:", dim) : 0;
    if (w > 0 && (size_t)w < size) used = (size_t)w;
    buf[used] = '\0';
    for (int k = 0; k < n && k < 4; k++) {
        char l[32], h[32];
        jtext(cJSON_GetArrayItem(lo, k), l, sizeof l);
        jtext(cJSON_GetArrayItem(hi, k), h, sizeof h);
        w = snprintf(buf + used, size - used, "%s[%s, %s]", used ? " " : "", l, h);
        if (w > 0 && (size_t)w < size - used) used += (size_t)w;
    }
    if (n > 4) snprintf(buf + used, size - used, " ... (%d)", n);
}

static void heading(const char *title, int count)
{
    if (count >= 0)
        printf("\n%s (%d)\n", title, count);
    else
        printf("\n%s\n", title);
}

static bool describe_text(const cJSON *d)
{
    bool ok = true;
    char b1[64], b2[64], b3[64], b4[64], b5[256];
    const cJSON *scn = cJSON_GetObjectItemCaseSensitive(d, "scenario");
    printf("scenario %s\n", jstr(scn, "name"));
    if (*jstr(scn, "doc")) printf("  %s\n", jstr(scn, "doc"));
    jkey_text(scn, "seed", b1, sizeof b1);
    jkey_text(scn, "max_steps", b2, sizeof b2);
    jkey_text(scn, "max_entities", b3, sizeof b3);
    jkey_text(scn, "event_queue", b4, sizeof b4);
    printf("  source %s\n  seed %s, max_steps %s, max_entities %s, event_queue %s\n",
           jstr(scn, "source"), b1, b2, b3, b4);

    const cJSON *agents = cJSON_GetObjectItemCaseSensitive(d, "agents");
    heading("agents", cJSON_GetArraySize(agents));
    const cJSON *it;
    fputs("  ", stdout);
    cJSON_ArrayForEach(it, agents)
        printf("%s%s", it == agents->child ? "" : " ", cJSON_IsString(it) ? it->valuestring : "?");
    putchar('\n');

    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(d, "grid");
    heading("grid", -1);
    if (cJSON_IsObject(grid)) {
        jkey_text(grid, "width", b1, sizeof b1);
        jkey_text(grid, "height", b2, sizeof b2);
        printf("  %s x %s, %s\n", b1, b2,
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(grid, "wrap")) ? "torus (wraps)"
                                                                            : "bounded");
        const cJSON *layers = cJSON_GetObjectItemCaseSensitive(grid, "layers");
        printf("  layers (%d):", cJSON_GetArraySize(layers));
        cJSON_ArrayForEach(it, layers) printf(" %s", cJSON_IsString(it) ? it->valuestring : "?");
        putchar('\n');
    } else {
        printf("  none\n");
    }

    const cJSON *plugins = cJSON_GetObjectItemCaseSensitive(d, "plugins");
    heading("plugins and scripts", cJSON_GetArraySize(plugins));
    const cJSON *p;
    cJSON_ArrayForEach(p, plugins) {
        printf("  %s (%s%s%s)\n", jstr(p, "name"), jstr(p, "kind"), *jstr(p, "version") ? " " : "",
               jstr(p, "version"));
        if (*jstr(p, "doc")) printf("    %s\n", jstr(p, "doc"));
        if (*jstr(p, "path")) printf("    path: %s\n", jstr(p, "path"));
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(p, "requires");
        if (cJSON_GetArraySize(req) > 0) {
            printf("    requires:");
            cJSON_ArrayForEach(it, req) printf(" %s", cJSON_IsString(it) ? it->valuestring : "?");
            putchar('\n');
        }
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(p, "params");
        if (cJSON_GetArraySize(params) > 0) {
            table t = {.ncols = 6};
            table_row(&t, "param", "type", "value", "default", "range", "doc");
            const cJSON *q;
            cJSON_ArrayForEach(q, params) {
                jkey_text(q, "value", b1, sizeof b1);
                jkey_text(q, "default", b2, sizeof b2);
                b5[0] = '\0';
                if (cJSON_GetObjectItemCaseSensitive(q, "min")) {
                    jkey_text(q, "min", b3, sizeof b3);
                    jkey_text(q, "max", b4, sizeof b4);
                    snprintf(b5, sizeof b5, "[%s, %s]", b3, b4);
                }
                char key[256];
                snprintf(key, sizeof key, "%s%s", jstr(q, "key"),
                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "required")) ? "*" : "");
                table_row(&t, key, jstr(q, "type"), b1, b2, b5, jstr(q, "doc"));
            }
            ok = table_done(&t, "    ") && ok;
        }
    }

    const cJSON *actions = cJSON_GetObjectItemCaseSensitive(d, "actions");
    heading("actions", cJSON_GetArraySize(actions));
    {
        table t = {.ncols = 4};
        table_row(&t, "id", "name", "owner", "doc");
        cJSON_ArrayForEach(it, actions) {
            jkey_text(it, "id", b1, sizeof b1);
            table_row(&t, b1, jstr(it, "name"), jstr(it, "owner"), jstr(it, "doc"));
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *obs = cJSON_GetObjectItemCaseSensitive(d, "observation");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(obs, "fields");
    jkey_text(obs, "obs_size", b1, sizeof b1);
    int n_fields = cJSON_GetArraySize(fields);
    printf("\nobservation (%d field%s, %s bytes per agent)\n", n_fields, n_fields == 1 ? "" : "s",
           b1);
    {
        table t = {.ncols = 8};
        table_row(&t, "name", "dtype", "shape", "offset", "bytes", "range", "owner", "doc");
        cJSON_ArrayForEach(it, fields) {
            char shape[64] = "";
            size_t used = 0;
            const cJSON *dim;
            cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(it, "shape")) {
                jtext(dim, b1, sizeof b1);
                int n = snprintf(shape + used, sizeof shape - used, "%s%s", used ? "x" : "", b1);
                if (n > 0 && (size_t)n < sizeof shape - used) used += (size_t)n;
            }
            jkey_text(it, "offset", b2, sizeof b2);
            jkey_text(it, "nbytes", b3, sizeof b3);
            char dtype[32], range[160];
            const char *written = jstr(it, "written_dtype");
            if (written && *written)
                snprintf(dtype, sizeof dtype, "%s (from %s)", jstr(it, "dtype"), written);
            else
                snprintf(dtype, sizeof dtype, "%s", jstr(it, "dtype"));
            describe_range(cJSON_GetObjectItemCaseSensitive(it, "range"), range, sizeof range);
            table_row(&t, jstr(it, "name"), dtype, shape, b2, b3, range, jstr(it, "owner"),
                      jstr(it, "doc"));
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *rewards = cJSON_GetObjectItemCaseSensitive(d, "rewards");
    heading("reward functions", cJSON_GetArraySize(rewards));
    if (cJSON_GetArraySize(rewards) > 0) {
        table t = {.ncols = 3};
        table_row(&t, "name", "weight", "owner");
        cJSON_ArrayForEach(it, rewards) {
            jkey_text(it, "weight", b1, sizeof b1);
            table_row(&t, jstr(it, "name"), b1, jstr(it, "owner"));
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *transforms = cJSON_GetObjectItemCaseSensitive(d, "reward_transforms");
    heading("reward transforms", cJSON_GetArraySize(transforms));
    if (cJSON_GetArraySize(transforms) > 0) {
        table t = {.ncols = 3};
        table_row(&t, "name", "priority", "owner");
        cJSON_ArrayForEach(it, transforms) {
            jkey_text(it, "priority", b1, sizeof b1);
            table_row(&t, jstr(it, "name"), b1, jstr(it, "owner"));
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *events = cJSON_GetObjectItemCaseSensitive(d, "events");
    heading("event types", cJSON_GetArraySize(events));
    if (cJSON_GetArraySize(events) > 0) {
        table t = {.ncols = 5};
        table_row(&t, "id", "name", "bytes", "owner", "fields (name:type@offset) / subscribers");
        cJSON_ArrayForEach(it, events) {
            char desc[1024] = "";
            size_t used = 0;
            const cJSON *f;
            cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(it, "fields")) {
                jkey_text(f, "offset", b1, sizeof b1);
                int n = snprintf(desc + used, sizeof desc - used, "%s%s:%s@%s", used ? " " : "",
                                 jstr(f, "name"), jstr(f, "type"), b1);
                if (n > 0 && (size_t)n < sizeof desc - used) used += (size_t)n;
            }
            const cJSON *subs = cJSON_GetObjectItemCaseSensitive(it, "subscribers");
            if (cJSON_GetArraySize(subs) > 0) {
                int n = snprintf(desc + used, sizeof desc - used, "%s/", used ? " " : "");
                if (n > 0 && (size_t)n < sizeof desc - used) used += (size_t)n;
                cJSON_ArrayForEach(f, subs) {
                    jkey_text(f, "priority", b1, sizeof b1);
                    n = snprintf(desc + used, sizeof desc - used, " %s(%s)", jstr(f, "owner"), b1);
                    if (n > 0 && (size_t)n < sizeof desc - used) used += (size_t)n;
                }
            }
            jkey_text(it, "id", b1, sizeof b1);
            jkey_text(it, "size", b2, sizeof b2);
            table_row(&t, b1, jstr(it, "name"), b2, jstr(it, "owner"), desc);
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(d, "hooks");
    heading("hooks (run order per phase: owner(priority))", -1);
    {
        table t = {.ncols = 2};
        const cJSON *phase;
        cJSON_ArrayForEach(phase, hooks) {
            char list[1024] = "";
            size_t used = 0;
            const cJSON *h;
            cJSON_ArrayForEach(h, phase) {
                jkey_text(h, "priority", b1, sizeof b1);
                int n = snprintf(list + used, sizeof list - used, "%s%s(%s)", used ? " " : "",
                                 jstr(h, "owner"), b1);
                if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
            }
            table_row(&t, phase->string ? phase->string : "?", used ? list : "-");
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *comps = cJSON_GetObjectItemCaseSensitive(d, "components");
    heading("components", cJSON_GetArraySize(comps));
    if (cJSON_GetArraySize(comps) > 0) {
        table t = {.ncols = 4};
        table_row(&t, "id", "name", "bytes", "owner");
        cJSON_ArrayForEach(it, comps) {
            jkey_text(it, "id", b1, sizeof b1);
            jkey_text(it, "elem_size", b2, sizeof b2);
            table_row(&t, b1, jstr(it, "name"), b2, jstr(it, "owner"));
        }
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *services = cJSON_GetObjectItemCaseSensitive(d, "services");
    heading("services", cJSON_GetArraySize(services));
    if (cJSON_GetArraySize(services) > 0) {
        table t = {.ncols = 2};
        table_row(&t, "name", "owner");
        cJSON_ArrayForEach(it, services) table_row(&t, jstr(it, "name"), jstr(it, "owner"));
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *exports = cJSON_GetObjectItemCaseSensitive(d, "exports");
    heading("exports", cJSON_GetArraySize(exports));
    if (cJSON_GetArraySize(exports) > 0) {
        table t = {.ncols = 3};
        table_row(&t, "name", "signature", "doc");
        cJSON_ArrayForEach(it, exports)
            table_row(&t, jstr(it, "name"), jstr(it, "signature"), jstr(it, "doc"));
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *renderers = cJSON_GetObjectItemCaseSensitive(d, "renderers");
    heading("renderers", cJSON_GetArraySize(renderers));
    if (cJSON_GetArraySize(renderers) > 0) {
        table t = {.ncols = 2};
        table_row(&t, "format", "owner");
        cJSON_ArrayForEach(it, renderers) table_row(&t, jstr(it, "format"), jstr(it, "owner"));
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *parsers = cJSON_GetObjectItemCaseSensitive(d, "action_parsers");
    heading("action parsers", cJSON_GetArraySize(parsers));
    if (cJSON_GetArraySize(parsers) > 0) {
        fputs("  ", stdout);
        cJSON_ArrayForEach(it, parsers)
            printf("%s%s", it == parsers->child ? "" : " ", jstr(it, "owner"));
        putchar('\n');
    }

    const cJSON *policies = cJSON_GetObjectItemCaseSensitive(d, "policies");
    heading("policies", cJSON_GetArraySize(policies));
    if (cJSON_GetArraySize(policies) > 0) {
        table t = {.ncols = 2};
        table_row(&t, "name", "owner");
        cJSON_ArrayForEach(it, policies) table_row(&t, jstr(it, "name"), jstr(it, "owner"));
        ok = table_done(&t, "  ") && ok;
    }

    const cJSON *macros = cJSON_GetObjectItemCaseSensitive(d, "macros");
    heading("macros", cJSON_GetArraySize(macros));
    if (cJSON_GetArraySize(macros) > 0) {
        table t = {.ncols = 3};
        table_row(&t, "usage", "owner", "doc");
        cJSON_ArrayForEach(it, macros)
            table_row(&t, jstr(it, "usage"), jstr(it, "owner"), jstr(it, "doc"));
        ok = table_done(&t, "  ") && ok;
    }
    return ok;
}

static int cmd_describe(const cli_args *a)
{
    polis_env *env = create_env(a, false);
    if (!env) return EXIT_ENV;
    char *json = polis_env_describe_json(env);
    polis_env_destroy(env);
    if (!json) {
        fprintf(stderr, "polis: out of memory while describing the scenario\n");
        return EXIT_ENV;
    }
    int rc = 0;
    if (a->json) {
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

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        if (argc > 2) return cli_usage(NULL, "--version takes no arguments");
        printf("polis %s\n", polis_version());
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 3) return cli_usage("help", "expected at most one COMMAND");
        if (argc == 3) {
            bool self = strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0;
            const char *text = command_help(self ? "help" : argv[2]);
            if (!text)
                return cli_usage("help", "unknown command '%s' (commands: " COMMAND_LIST ")",
                                 argv[2]);
            fputs(text, stdout);
            return 0;
        }
        fputs(USAGE, stdout);
        return 0;
    }

    if (strcmp(cmd, "bench") == 0) return cli_bench_main(argc, argv);
    if (strcmp(cmd, "eval") == 0) return cli_eval_main(argc, argv);
    if (strcmp(cmd, "serve") == 0) return cli_serve_main(argc, argv);
    if (strcmp(cmd, "sweep") == 0) return cli_sweep_main(argc, argv);
    if (strcmp(cmd, "view") == 0) return cli_view_main(argc, argv);
    if (strcmp(cmd, "replay") == 0) return cli_replay_main(argc, argv);

    cli_args a;
    memset(&a, 0, sizeof a);
    a.cmd = cmd;
    int allowed;
    int (*run)(const cli_args *);
    if (strcmp(cmd, "run") == 0) {
        allowed = OPT_SEED | OPT_STEPS | OPT_EPISODES | OPT_POLICY | OPT_QUIET | OPT_JSON |
                  OPT_PLUGIN_PATH | OPT_SET | OPT_AGENTS | OPT_RECORD | OPT_KEYFRAME;
        run = cmd_run;
    } else if (strcmp(cmd, "record") == 0) {
        allowed = OPT_SEED | OPT_STEPS | OPT_EPISODES | OPT_POLICY | OPT_QUIET | OPT_JSON |
                  OPT_PLUGIN_PATH | OPT_SET | OPT_AGENTS | OPT_OUT | OPT_KEYFRAME | OPT_VIDEO |
                  OPT_AGENT | OPT_CELL | OPT_FPS | OPT_GLYPHS;
        run = cmd_run;
    } else if (strcmp(cmd, "validate") == 0) {
        allowed = OPT_PLUGIN_PATH | OPT_SET | OPT_AGENTS;
        run = cmd_validate;
    } else if (strcmp(cmd, "describe") == 0) {
        allowed = OPT_JSON | OPT_PLUGIN_PATH | OPT_SET | OPT_AGENTS;
        run = cmd_describe;
    } else if (strcmp(cmd, "render") == 0) {
        allowed = OPT_SEED | OPT_STEPS | OPT_AGENT | OPT_FORMAT | OPT_POLICY | OPT_PLUGIN_PATH |
                  OPT_SET | OPT_AGENTS | OPT_PNG | OPT_CELL | OPT_GLYPHS;
        run = cmd_render;
    } else if (strcmp(cmd, "parse") == 0) {
        allowed = OPT_AGENT | OPT_SEED | OPT_PLUGIN_PATH | OPT_SET | OPT_AGENTS;
        a.wants_action = true;
        run = cmd_parse;
    } else if (cmd[0] == '-') {
        return cli_usage(NULL, "unknown option '%s'", cmd);
    } else {
        return cli_usage(NULL, "unknown command '%s' (commands: " COMMAND_LIST ")", cmd);
    }
    int rc = parse_args(argc, argv, allowed, &a);
    if (rc == 0 && a.help) fputs(command_help(cmd), stdout);
    if (rc == 0 && !a.help) rc = run(&a);
    cli_overrides_free(&a.overrides);
    return rc;
}
