/* engine/cli/session/record.c — `--record FILE` for run, eval and serve (record.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "session/record.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "session/episode.h"
#include "util/file.h"

bool cli_record_scenario(polis_record_info *info, const char *scenario_path, char *dir,
                         const char *cmd)
{
    size_t len = 0;
    char why[256];
    char *text = cli_file_read(scenario_path, CLI_FILE_TEXT_MAX, &len, why, sizeof why);
    if (!text) {
        fprintf(stderr, "polis: %s: cannot read %s again for the header: %s\n", cmd, scenario_path,
                why);
        return false;
    }
    char parent[PATH_MAX];
    const char *slash = strrchr(scenario_path, '/');
    if (slash)
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - scenario_path), scenario_path);
    else
        snprintf(parent, sizeof parent, ".");
    if (slash == scenario_path) snprintf(parent, sizeof parent, "/");
    if (!realpath(parent, dir)) snprintf(dir, PATH_MAX, "%s", parent);
    info->scenario_text = text;
    info->scenario_len = len;
    info->scenario_path = scenario_path;
    info->base_dir = dir;
    return true;
}

char *cli_record_policies(polis_env *env, const char *policy)
{
    cJSON *pol = cJSON_CreateArray();
    for (int32_t ag = 0; pol && ag < polis_env_n_agents(env); ag++)
        if (!cJSON_AddItemToArray(pol, cJSON_CreateString(policy))) {
            cJSON_Delete(pol);
            pol = NULL;
        }
    char *text = pol ? cJSON_PrintUnformatted(pol) : NULL;
    cJSON_Delete(pol);
    return text;
}

polis_recorder *cli_record_open(const char *file, polis_env *env, const char *scenario_path,
                                const char *overrides, uint64_t seed, int64_t keyframe_every,
                                const char *policies, const char *source)
{
    char dir[PATH_MAX];
    polis_record_info info = {.overrides = overrides,
                              .seed = seed,
                              .keyframe_every = (int32_t)keyframe_every,
                              .policies = policies,
                              .source = source};
    if (!cli_record_scenario(&info, scenario_path, dir, "--record")) return NULL;
    polis_recorder *rec = NULL;
    polis_error err;
    memset(&err, 0, sizeof err);
    if (polis_recorder_open(file, env, &info, &rec, &err) != POLIS_OK) {
        fprintf(stderr, "polis: --record %s: %s\n", file, err.message);
        rec = NULL;
    }
    free((char *)info.scenario_text);
    return rec;
}
