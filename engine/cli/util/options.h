/* engine/cli/util/options.h — the `polis` program's one option table and its parser.
 *
 * Every option any command takes is declared once in CLI_OPTIONS (options.c): its name, the
 * kind of its value, its range and its help. A command (cli_command) lists the options it takes
 * (cli_use), optionally with a help text, a default, a narrower range or a set of choices of
 * its own, and cli_command_main parses its command line against that list: unknown options,
 * missing values, values out of range and options given twice get the same messages whatever
 * the command. The same table prints `polis help COMMAND` and the list of `polis help`. Part
 * of the CLI, not of libpolis. */
#ifndef POLIS_CLI_OPTIONS_H
#define POLIS_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/pixels.h"
#include "util/util.h"

/* Every option of every command, by the meaning of its value. Two options may share a name
 * when they mean different things (`--json` of run is a switch, of eval a FILE); a command
 * takes at most one of them. */
typedef enum cli_opt_id {
    /* the episodes played */
    CLI_OPT_SEED,
    CLI_OPT_STEPS,
    CLI_OPT_EPISODES,
    CLI_OPT_POLICY,
    CLI_OPT_AGENT,
    /* the scenario */
    CLI_OPT_SET,
    CLI_OPT_AGENTS,
    CLI_OPT_PLUGIN_PATH,
    CLI_OPT_NO_METRICS,
    /* output */
    CLI_OPT_QUIET,
    CLI_OPT_JSON,
    CLI_OPT_JSON_FILE,
    CLI_OPT_FORMAT,
    CLI_OPT_RECORD,
    CLI_OPT_KEYFRAME_EVERY,
    CLI_OPT_OUT,
    /* pixels */
    CLI_OPT_VIDEO,
    CLI_OPT_PNG,
    CLI_OPT_CELL,
    CLI_OPT_FPS,
    CLI_OPT_GLYPHS,
    /* bench */
    CLI_OPT_ENVS,
    CLI_OPT_THREADS,
    CLI_OPT_EXCLUDE_ACTIONS,
    CLI_OPT_NO_OBS,
    CLI_OPT_COMPACT,
    CLI_OPT_REPEAT,
    CLI_OPT_WARMUP,
    CLI_OPT_PIXELS,
    /* serve */
    CLI_OPT_STDIO,
    CLI_OPT_TCP,
    CLI_OPT_HTTP,
    CLI_OPT_ALLOW_REMOTE,
    CLI_OPT_MAX_CLIENTS,
    CLI_OPT_IDLE_TIMEOUT,
    CLI_OPT_WRITE_TIMEOUT,
    CLI_OPT_ISOLATE,
    CLI_OPT_ON_BAD_ACTION,
    CLI_OPT_SEAT,
    CLI_OPT_TICK_MS,
    /* sweep */
    CLI_OPT_SCENARIO,
    CLI_OPT_GRID,
    CLI_OPT_RESUME,
    CLI_OPT_RECORD_ALL,
    /* view and replay */
    CLI_OPT_PORT,
    CLI_OPT_FOLLOW,
    CLI_OPT_VERIFY,
    CLI_OPT_TICK,
    CLI_OPT_RENDER,
    CLI_OPT_EPISODE,
    CLI_OPT_TRUST,
    CLI_OPT_ALLOW_ORIGIN,
    CLI_OPT_MAX_PAGES,
    /* seats played by policy processes and populations (session/seats.h) */
    CLI_OPT_FOCAL,
    CLI_OPT_FOCAL_SEATS,
    CLI_OPT_BACKGROUND,
    CLI_OPT_POLICY_TIMEOUT,
    CLI_OPT_COUNT
} cli_opt_id;

/* How an option's value is read. */
typedef enum cli_kind {
    CLI_FLAG, /* no value */
    CLI_INT,  /* a decimal integer in [lo, hi] (lo >= 0) */
    CLI_U64,  /* a decimal integer in [0, 2^64), or in [lo, hi] when a use narrows it */
    CLI_TEXT, /* a non-empty string, checked by `check` when there is one */
    CLI_APPLY /* handed to `apply` (scenario overrides, the sweep's grid) */
} cli_kind;

/* May be given more than once (each value kept, in order). */
#define CLI_MANY 1u

struct cli_args;

typedef struct cli_option {
    const char *name;    /* "--seed" */
    const char *metavar; /* "N"; NULL for a flag */
    cli_kind kind;
    int64_t lo, hi;   /* CLI_INT: the range */
    const char *unit; /* CLI_INT: what the number counts, said in errors ("pixels per cell") */
    const char *noun; /* CLI_TEXT: what an empty value lacks ("file name") */
    /* CLI_TEXT: false with the reason in why ("is not a format name ...", said after the
     * option's name and its value) when the value is refused. */
    bool (*check)(const char *value, char *why, size_t cap);
    /* CLI_APPLY: stores the value; 0, or EXIT_USAGE after printing the problem. */
    int (*apply)(struct cli_args *a, const char *value);
    unsigned flags;   /* CLI_MANY */
    const char *help; /* lines separated by '\n', without indent */
} cli_option;

extern const cli_option CLI_OPTIONS[CLI_OPT_COUNT];

/* An option as one command takes it. */
typedef struct cli_use {
    cli_opt_id id;
    const char *help;           /* NULL: the option's own */
    const char *metavar;        /* NULL: the option's own */
    const char *def;            /* the value when it is not given (parsed like one), or NULL */
    int64_t lo, hi;             /* an integer's range here, when not the option's (hi > 0) */
    const char *const *choices; /* NULL-terminated values allowed here, or NULL */
    bool (*check)(const char *value, char *why, size_t cap); /* NULL: the option's */
    unsigned flags;                                          /* CLI_MANY here */
    uint64_t needs;    /* CLI_BIT()s: given, it needs one of these given too */
    uint64_t excludes; /* CLI_BIT()s: given, none of these may be */
    const char *why;   /* said after a refused `excludes`, or NULL */
} cli_use;

#define CLI_BIT(id) ((uint64_t)1 << (id))

/* What the command line gave an option (or its use's default). */
typedef struct cli_value {
    int n;             /* times given on the command line (0: not given) */
    int at;            /* where it was first given (its index in argv) */
    const char *text;  /* CLI_TEXT: the value (the last one) */
    int64_t num;       /* CLI_INT */
    uint64_t u64;      /* CLI_U64 */
    const char **list; /* CLI_TEXT given more than once (CLI_MANY): every value, in order */
} cli_value;

typedef struct cli_command cli_command;

/* One parsed command line. */
typedef struct cli_args {
    const cli_command *cmd;
    const char *name; /* the command's name, for messages ("run") */
    const char *pos[2];
    int n_pos;
    cli_value v[CLI_OPT_COUNT];
    cli_overrides overrides; /* --set and --agents, in command-line order */
    cli_overrides grid;      /* sweep's --grid */
} cli_args;

/* A command: its help, the arguments it takes and what runs it. */
struct cli_command {
    const char *name;    /* "run" */
    const char *args;    /* its arguments in `polis help`'s list: "SCENARIO", "[SPEC]" */
    const char *summary; /* `polis help`'s line ('\n' continues it) */
    const char *usage;   /* the usage lines after "usage: polis "; NULL: "NAME ARGS [options]" */
    const char *about;   /* the paragraphs between the usage and the options */
    const cli_use *uses;
    int n_uses;
    const char *notes; /* after the options, or NULL */
    /* the positional arguments: their names ("SCENARIO", "ACTION"), what each is (said when
     * missing), how many are required, and a note for an argument too many */
    const char *pos_name[2];
    const char *pos_what[2];
    int n_pos, n_required;
    const char *extra_note;
    /* when not NULL, an unknown option's message lists the command's options after it
     * ("with --http" gives "(with --http: --seat, --policy, ...)") */
    const char *unknown_lists;
    /* the command itself; returns the exit status */
    int (*run)(cli_args *a);
};

/* The fields of a cli_command that name its options, and those of a command that takes one
 * SCENARIO and its options. */
#define CLI_USES(uses_) .uses = (uses_), .n_uses = (int)(sizeof(uses_) / sizeof((uses_)[0]))
#define CLI_SCENARIO_AND(uses_)                                                                    \
    .args = "SCENARIO", CLI_USES(uses_), .pos_name = {"SCENARIO"},                                 \
    .pos_what = {"a scenario .json file"}, .n_pos = 1, .n_required = 1

/* The options of the scenario every command that loads one takes. */
#define CLI_SCENARIO_OPTIONS                                                                       \
    {.id = CLI_OPT_SET}, {.id = CLI_OPT_AGENTS}, { .id = CLI_OPT_PLUGIN_PATH }

/* Parses argv[2..] against cmd's options and runs it (or prints its help for --help/-h).
 * Returns the exit status: 0, EXIT_ENV or EXIT_USAGE (after printing "polis: CMD: ..." and
 * "Try 'polis help CMD'." to stderr). */
int cli_command_main(const cli_command *cmd, int argc, char **argv);

/* Prints the help of cmd (usage, about, every option it takes, notes) to stdout. */
void cli_command_help(const cli_command *cmd);

/* Whether the option was given on the command line. */
/* Reads a --pixels value, CELL[/D][,grey], into o (no_stats false, no flags); false when it
 * is not one. */
bool cli_pixels_spec(const char *s, polis_pixels_obs_opts *o);

static inline bool cli_has(const cli_args *a, cli_opt_id id) { return a->v[id].n > 0; }
/* A text option's value, or NULL when neither given nor defaulted. */
static inline const char *cli_text(const cli_args *a, cli_opt_id id) { return a->v[id].text; }
/* An integer option's value (the use's default when not given; 0 without one). */
static inline int64_t cli_num(const cli_args *a, cli_opt_id id) { return a->v[id].num; }

#endif
