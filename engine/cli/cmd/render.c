/*
 * engine/cli/cmd/render.c — `polis render SCENARIO`: the state after K steps of a built-in
 * policy (those of `polis run`, so `render --seed N --steps K` shows where `run --seed N
 * --steps K` ends), as the registered renderers print it, or drawn into a PNG.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/commands.h"
#include "session/frames.h"
#include "session/play.h"

static const cli_use USES[] = {
    {.id = CLI_OPT_SEED, .help = "episode seed (default: the scenario's \"seed\")"},
    {.id = CLI_OPT_STEPS, .help = "steps to play before rendering (default 0: the reset state)"},
    {.id = CLI_OPT_AGENT,
     .help = "only agent A (an id or an agent name; default: every agent, each\n"
             "under a \"== name ==\" heading, or one JSON object by name)"},
    {.id = CLI_OPT_FORMAT, .excludes = CLI_BIT(CLI_OPT_PNG)},
    {.id = CLI_OPT_POLICY, .help = "as for `polis run` (default random)"},
    {.id = CLI_OPT_PNG,
     .help = "draw the map (with --agent: that agent's view) into a PNG file\n"
             "instead of printing (docs/recording.md, \"Pixels\")",
     .check = cli_check_png},
    {.id = CLI_OPT_CELL,
     .help = "pixels per cell of --png (1 to 64, default 16)",
     .def = "16",
     .needs = CLI_BIT(CLI_OPT_PNG)},
    {.id = CLI_OPT_GLYPHS,
     .help = "with --png: draw kinds with an ASCII glyph as that glyph",
     .needs = CLI_BIT(CLI_OPT_PNG)},
    CLI_SCENARIO_OPTIONS,
};

/* Prints a rendering, ending it with a newline if it has none. */
static void print_rendering(const char *s)
{
    size_t n = strlen(s);
    fputs(s, stdout);
    if (n == 0 || s[n - 1] != '\n') putchar('\n');
}

/* The map, or the agent's view, into the --png file. */
static int draw_png(polis_env *env, const cli_args *a, int32_t only, int64_t played)
{
    const char *png = cli_text(a, CLI_OPT_PNG);
    cli_frames fr;
    memset(&fr, 0, sizeof fr);
    fr.agent = only;
    fr.cell = (int32_t)cli_num(a, CLI_OPT_CELL);
    fr.flags = cli_has(a, CLI_OPT_GLYPHS) ? POLIS_PIXELS_GLYPHS : 0;
    char err[1024];
    int rc = 0;
    if (cli_frames_draw(&fr, env, err, sizeof err) ||
        cli_frames_write_image(png, fr.rgb, fr.w, fr.h, false, err, sizeof err)) {
        fprintf(stderr, "polis: render --png %s: %s\n", png, err);
        rc = EXIT_ENV;
    } else {
        printf("%s: after %" PRId64 " step%s, %d x %d pixels\n", png, played,
               played == 1 ? "" : "s", (int)fr.w, (int)fr.h);
    }
    cli_frames_finish(&fr, err, sizeof err);
    return rc;
}

/* Every agent's view (or one's) in `format`. Everything is rendered before anything is
 * printed, so a failing renderer leaves no partial output behind. */
static int print_views(polis_env *env, const char *format, int32_t only)
{
    int32_t first = only >= 0 ? only : 0, last = only >= 0 ? only : polis_env_n_agents(env) - 1;
    int32_t count = last - first + 1;
    char **views = calloc((size_t)count, sizeof *views);
    if (!views) {
        fprintf(stderr, "polis: out of memory\n");
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
    return rc;
}

static int render_main(cli_args *a)
{
    polis_env *env = cli_env_of(a, false, NULL);
    if (!env) return EXIT_ENV;
    int32_t only = -1;
    cli_play_policy policy;
    int rc = 0;
    if (cli_has(a, CLI_OPT_AGENT))
        rc = cli_resolve_agent(env, a->name, cli_text(a, CLI_OPT_AGENT), &only);
    if (!rc) rc = cli_play_policy_init(&policy, env, a->name, cli_text(a, CLI_OPT_POLICY));
    if (rc) {
        polis_env_destroy(env);
        return rc;
    }
    uint64_t seed = cli_has(a, CLI_OPT_SEED) ? a->v[CLI_OPT_SEED].u64 : polis_env_default_seed(env);
    cli_play_policy_seed(&policy, seed);
    if (polis_env_reset(env, seed) != POLIS_OK) return cli_env_failure(env);
    int64_t played = 0;
    for (; played < cli_num(a, CLI_OPT_STEPS) && !polis_env_done(env); played++) {
        if (cli_play_policy_act(&policy, env) != POLIS_OK || polis_env_step(env) != POLIS_OK)
            return cli_env_failure(env);
    }
    if (cli_has(a, CLI_OPT_PNG))
        rc = draw_png(env, a, only, played);
    else
        rc = print_views(env, cli_has(a, CLI_OPT_FORMAT) ? cli_text(a, CLI_OPT_FORMAT) : "text",
                         only);
    polis_env_destroy(env);
    return rc;
}

const cli_command CLI_CMD_RENDER = {
    .name = "render",
    CLI_SCENARIO_AND(USES),
    .summary = "print agents' views (text or JSON) or draw a PNG after K steps",
    .about =
        "Resets SCENARIO, plays K steps with a built-in policy, then prints what the registered\n"
        "renderers make of the state: each agent's view, or one agent's. The policy and seeds are\n"
        "those of `polis run`, so `render --seed N --steps K` shows the state that\n"
        "`run --seed N --steps K` ends in (fewer steps if the episode ends first).\n",
    .run = render_main,
};
