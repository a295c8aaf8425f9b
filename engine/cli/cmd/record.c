/*
 * engine/cli/cmd/record.c — `polis record SCENARIO`: episodes played exactly like `polis run`
 * (run.c: the same seeds, policies and summary), written into a recording (--out) and/or a
 * video of every tick (--video).
 */
#include "cmd/commands.h"
#include "session/frames.h"

#define PIXELS CLI_BIT(CLI_OPT_VIDEO)

static const cli_use USES[] = {
    CLI_RUN_OPTIONS,
    {.id = CLI_OPT_OUT, .help = "the recording (gzip when FILE ends in .gz)"},
    {.id = CLI_OPT_KEYFRAME_EVERY, .needs = CLI_BIT(CLI_OPT_OUT)},
    {.id = CLI_OPT_VIDEO, .check = cli_check_video},
    {.id = CLI_OPT_AGENT,
     .help = "draw agent A's view (an id or a name; default the whole map)",
     .needs = PIXELS},
    {.id = CLI_OPT_CELL, .def = "16", .needs = PIXELS},
    {.id = CLI_OPT_FPS, .def = "8", .needs = PIXELS},
    {.id = CLI_OPT_GLYPHS, .needs = PIXELS},
};

static int record_main(cli_args *a)
{
    if (!cli_has(a, CLI_OPT_OUT) && !cli_has(a, CLI_OPT_VIDEO))
        return cli_usage(a->name, "nothing to write: give --out FILE.jsonl[.gz], --video OUT, "
                                  "or both");
    return cli_run_episodes(a);
}

const cli_command CLI_CMD_RECORD = {
    .name = "record",
    CLI_SCENARIO_AND(USES),
    .summary = "play episodes like run into a recording and/or a video",
    .usage = "record SCENARIO [options] (--out FILE.jsonl[.gz] | --video OUT.mp4|OUT.gif|DIR)",
    .about =
        "Plays episodes of SCENARIO exactly like `polis run` (same seeds, policies and summary)\n"
        "and writes what happened: --out the recording (docs/recording.md; check it with `polis\n"
        "replay FILE`, watch it with `polis view FILE`), --video the pixels of every tick, one\n"
        "frame after each reset and after each step of every episode played, drawn like the\n"
        "viewer draws the map (polis_pixels_draw). At least one of the two.\n",
    .run = record_main,
};
