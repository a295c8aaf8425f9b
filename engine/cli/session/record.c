/* engine/cli/session/record.c — `--record FILE` for run, eval and serve (record.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "session/record.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/episode.h"

polis_recorder *cli_record_open(const char *file, polis_env *env, const char *scenario_path,
                                const char *overrides, uint64_t seed, int64_t keyframe_every,
                                const char *policies, const char *source)
{
    size_t len = 0;
    char *text = cli_read_file(scenario_path, &len);
    if (!text) {
        if (errno == ENOMEM)
            fprintf(stderr, "polis: out of memory\n");
        else
            fprintf(stderr, "polis: --record: cannot read %s again for the header: %s\n",
                    scenario_path, strerror(errno));
        return NULL;
    }
    /* the directory relative plugin and script paths resolve against, absolute, so a replay
     * from another working directory finds them */
    char dir[PATH_MAX + 1];
    const char *slash = strrchr(scenario_path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - scenario_path), scenario_path);
    else
        snprintf(dir, sizeof dir, ".");
    if (slash == scenario_path) snprintf(dir, sizeof dir, "/");
    char abs_dir[PATH_MAX];
    const char *base = realpath(dir, abs_dir) ? abs_dir : dir;
    polis_record_info info = {.scenario_text = text,
                              .scenario_len = len,
                              .scenario_path = scenario_path,
                              .base_dir = base,
                              .overrides = overrides,
                              .seed = seed,
                              .keyframe_every = (int32_t)keyframe_every,
                              .policies = policies,
                              .source = source};
    polis_recorder *rec = NULL;
    polis_error err;
    memset(&err, 0, sizeof err);
    if (polis_recorder_open(file, env, &info, &rec, &err) != POLIS_OK) {
        fprintf(stderr, "polis: --record %s: %s\n", file, err.message);
        rec = NULL;
    }
    free(text);
    return rec;
}
