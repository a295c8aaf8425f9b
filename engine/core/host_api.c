/*
 * engine/core/host_api.c — host->host_api: the named, versioned tables of host functions that
 * ABI 1.7 and later add instead of growing polis_host (include/polis/plugin.h, "Host APIs").
 *
 * A table's version only grows, by appending functions, so a plugin that asks for version v
 * gets a table with every function of v (the engine's newest version, which may be later).
 * Asking for a version this engine does not have, or a name it does not know, sets the
 * plugin's error saying what it has and returns NULL: a plugin that needs the table fails its
 * init with that message. The kernel's own tables are listed here; a module offers one through
 * its descriptor (core/module.h).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "module.h"

static const polis_json_api json_api = {
    .version = POLIS_JSON_API_VERSION,
    .struct_size = sizeof(polis_json_api),
    .parse = polis__json_doc_parse,
    .free = polis__json_doc_free,
};

static const polis_observations_api observations_api = {
    .version = POLIS_OBSERVATIONS_API_VERSION,
    .struct_size = sizeof(polis_observations_api),
    .narrowed = polis__obs_narrowed,
    .changed = polis__obs_changed,
    .changed_run = polis__obs_changed_run,
    .writes_stored = polis__obs_writes_stored,
    .stored = polis__obs_stored,
};

static const polis_actions_api actions_api = {
    .version = POLIS_ACTIONS_API_VERSION,
    .struct_size = sizeof(polis_actions_api),
    .legal_rows = polis__legal_rows,
};

static const polis_shared_obs_api shared_obs_api = {
    .version = POLIS_SHARED_OBS_API_VERSION,
    .struct_size = sizeof(polis_shared_obs_api),
    .field = polis__shared_field,
};

typedef struct host_api_entry {
    const char *name;
    uint32_t version;
    const void *table;
} host_api_entry;

static const host_api_entry host_apis[] = {
    {POLIS_JSON_API, POLIS_JSON_API_VERSION, &json_api},
    {POLIS_OBSERVATIONS_API, POLIS_OBSERVATIONS_API_VERSION, &observations_api},
    {POLIS_ACTIONS_API, POLIS_ACTIONS_API_VERSION, &actions_api},
    {POLIS_SHARED_OBS_API, POLIS_SHARED_OBS_API_VERSION, &shared_obs_api},
};

#define N_HOST_APIS ((int32_t)(sizeof host_apis / sizeof host_apis[0]))

/* The table named `name`: the kernel's own, then the modules' (core/module.h). */
static bool find_api(const char *name, host_api_entry *out)
{
    for (int32_t i = 0; i < N_HOST_APIS; i++)
        if (strcmp(host_apis[i].name, name) == 0) {
            *out = host_apis[i];
            return true;
        }
    for (const polis__module *const *m = polis__modules; *m; m++)
        if ((*m)->api_name && strcmp((*m)->api_name, name) == 0) {
            *out = (host_api_entry){(*m)->api_name, (*m)->api_version, (*m)->api};
            return true;
        }
    return false;
}

const void *polis__host_api(polis_ctx *ctx, const char *name, uint32_t version)
{
    if (!ctx) return NULL;
    if (!name) {
        polis__ctx_error(ctx, "host_api: name is NULL");
        return NULL;
    }
    host_api_entry e;
    if (find_api(name, &e)) {
        if (version >= 1 && version <= e.version) return e.table;
        if (version == 0)
            polis__ctx_error(ctx, "host API \"%s\": version 0 is not a version (they start at 1)",
                             name);
        else
            polis__ctx_error(ctx,
                             "host API \"%s\" version %u is newer than this engine's (polis %s "
                             "has version %u; rebuild the plugin for it, or update polis)",
                             name, version, POLIS_VERSION_STRING, e.version);
        return NULL;
    }
    char names[256] = "";
    size_t len = 0;
    for (int32_t i = 0; i < N_HOST_APIS && len < sizeof names; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s\"%s\"", i ? ", " : "",
                                host_apis[i].name);
    for (const polis__module *const *m = polis__modules; *m && len < sizeof names; m++)
        if ((*m)->api_name)
            len += (size_t)snprintf(names + len, sizeof names - len, ", \"%s\"", (*m)->api_name);
    polis__ctx_error(ctx, "this engine (polis %s) has no host API \"%s\" (it has %s)",
                     POLIS_VERSION_STRING, name, names);
    return NULL;
}
