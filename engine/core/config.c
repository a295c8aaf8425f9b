/*
 * engine/core/config.c — the scenario schema: the top-level keys, agents, grid, lua limits,
 * plugins, scripts, rewards and bindings, read from the tree json.c parsed into
 * env->scn; and the engine's file reading.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"

#define NAME_MAX_LEN 63

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > NAME_MAX_LEN) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
    return true;
}

#define NAME_RULE "1 to 63 characters from a-z, 0-9 and _"

/* The file name without directories and without its last extension (or only `.so`). */
static char *stem_dup(polis_env *env, const char *path, bool only_so)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (only_so) {
        if (n > 3 && strcmp(base + n - 3, ".so") == 0) n -= 3;
    } else {
        const char *dot = strrchr(base, '.');
        if (dot && dot != base) n = (size_t)(dot - base);
    }
    char *s = polis__alloc(env, n + 1);
    if (!s) return NULL;
    memcpy(s, base, n);
    s[n] = '\0';
    return s;
}

/* ---- the scenario schema ------------------------------------------------------------------ */

static const char *const top_keys[] = {
    "polis",
    "name",
    "doc",
    "seed",
    "max_steps",
    "agents",
    "max_entities",
    "grid",
    "event_queue",
    "max_memory",
    "lua",
    "plugins",
    "scripts",
    "rewards",
    "bindings",
    "compact_observations",
    "replace" /* read by swap.c when registration freezes */,
    "live",
    "seats",
    "pixels",
    "visibility" /* read by engine/visibility after the plugins' init */,
    "vary" /* read by engine/vary after the plugins' init */};

/* "live": who plays each seat in `polis serve --http` and how the game ticks
 * (docs/scenario.md, "Live play"). The engine checks its shape; the live server reads it
 * and checks the agent and policy names. */
static polis_status read_live(polis_env *env, const cJSON *root)
{
    const cJSON *l = member(root, "live");
    if (!l) return POLIS_OK;
    static const char *const keys[] = {"seats", "tick_ms", "episodes"};
    polis_status st;
    if ((st = want_type(env, l, "live", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, l, "live", keys)) != POLIS_OK) return st;
    if ((st = opt_int(env, l, "live", "tick_ms", 0, 3600000, NULL, NULL)) != POLIS_OK ||
        (st = opt_int(env, l, "live", "episodes", 0, INT32_MAX, NULL, NULL)) != POLIS_OK)
        return st;
    const cJSON *seats = member(l, "seats");
    if (!seats) return POLIS_OK;
    if ((st = want_type(env, seats, "live.seats", cJSON_Object)) != POLIS_OK) return st;
    const cJSON *s;
    cJSON_ArrayForEach(s, seats) {
        if (is_comment_key(s->string)) continue;
        char path[192];
        snprintf(path, sizeof path, "live.seats.%.128s", s->string);
        const char *who = NULL;
        if ((st = want_string(env, s, path, true, &who)) != POLIS_OK) return st;
    }
    return POLIS_OK;
}

/* "seats": who plays chosen agents wherever the scenario is played by the CLI (polis eval,
 * polis serve) or trained (polis.rl.ppo): agent name -> a policy name or a seat spec
 * (docs/scenario.md, "seats"). The engine checks the shape and the agents; the players read
 * it and check the policies, which the plugins register later. */
static polis_status read_seats(polis_env *env, const cJSON *root)
{
    const cJSON *seats = member(root, "seats");
    if (!seats) return POLIS_OK;
    polis_status st;
    if ((st = want_type(env, seats, "seats", cJSON_Object)) != POLIS_OK) return st;
    const polis__scenario *sc = &env->scn;
    const cJSON *s;
    cJSON_ArrayForEach(s, seats) {
        if (is_comment_key(s->string)) continue;
        char path[192];
        snprintf(path, sizeof path, "seats.%.128s", s->string);
        const char *who = NULL;
        if ((st = want_string(env, s, path, true, &who)) != POLIS_OK) return st;
        int32_t i = 0;
        while (i < sc->n_agents && strcmp(sc->agent_names[i], s->string) != 0) i++;
        if (i == sc->n_agents)
            return cfg_fail(env, path, "no agent named \"%.128s\" (agents are %s .. %s)", s->string,
                            sc->agent_names[0], sc->agent_names[sc->n_agents - 1]);
    }
    return POLIS_OK;
}

/* "pixels": the pixel observation a client gives this scenario's agents (docs/scenario.md,
 * "Pixel observations"; polis/pixels.h draws it). The engine checks its shape; the Python
 * SDK reads it. */
static polis_status read_pixels(polis_env *env, const cJSON *root)
{
    const cJSON *p = member(root, "pixels");
    if (!p) return POLIS_OK;
    static const char *const keys[] = {"cell_px", "downscale", "grey", "stats", "obs"};
    polis_status st;
    if ((st = want_type(env, p, "pixels", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, p, "pixels", keys)) != POLIS_OK) return st;
    int32_t cell = 7, down = 1;
    if ((st = opt_int(env, p, "pixels", "cell_px", 1, 64, NULL, &cell)) != POLIS_OK ||
        (st = opt_int(env, p, "pixels", "downscale", 1, 64, NULL, &down)) != POLIS_OK)
        return st;
    if (cell % down != 0)
        return cfg_fail(env, "pixels.downscale", "%d is not a divisor of cell_px %d", (int)down,
                        (int)cell);
    bool flag;
    static const char *const bools[] = {"grey", "stats"};
    for (int i = 0; i < 2; i++) {
        const cJSON *b = member(p, bools[i]);
        char path[PATH_CAP];
        if (b && (st = want_bool(env, b, path_step(path, "pixels", bools[i], 0), &flag))) return st;
    }
    const cJSON *o = member(p, "obs");
    const char *obs = NULL;
    if (o && (st = want_string(env, o, "pixels.obs", true, &obs)) != POLIS_OK) return st;
    if (obs && strcmp(obs, "pixels") != 0 && strcmp(obs, "both") != 0)
        return mismatch(env, "pixels.obs", o, "\"pixels\" or \"both\"");
    return POLIS_OK;
}

static polis_status read_agents(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *a = member(root, "agents");
    const cJSON *names = NULL;
    polis_status st;
    if (!a) return missing(env, TOP, "agents");
    if ((a->type & 0xFF) == cJSON_Object) {
        static const char *const keys[] = {"count", "names"};
        if ((st = REFUSE_UNKNOWN(env, a, "agents", keys)) != POLIS_OK) return st;
        if (!member(a, "count")) return missing(env, "agents", "count");
        if ((st = opt_int(env, a, "agents", "count", 1, 65536, NULL, &s->n_agents)) != POLIS_OK)
            return st;
        names = member(a, "names");
    } else if ((a->type & 0xFF) == cJSON_Number) {
        if ((st = opt_int(env, root, "", "agents", 1, 65536, NULL, &s->n_agents)) != POLIS_OK)
            return st;
    } else {
        return mismatch(env, "agents", a, "integer in [1, 65536] or object");
    }
    if (names) {
        if ((st = want_type(env, names, "agents.names", cJSON_Array)) != POLIS_OK) return st;
        int32_t k = cJSON_GetArraySize(names);
        if (k != s->n_agents)
            return cfg_fail(env, "agents.names", "expected %d names (agents.count), got %d",
                            (int)s->n_agents, (int)k);
    }
    int32_t n = s->n_agents;
    /* The count of the array is what the free path trusts; set both together. */
    s->agent_names = polis__alloc(env, sizeof(char *) * (size_t)n);
    if (!s->agent_names) {
        s->n_agents = 0;
        return nomem(env);
    }
    const cJSON *e = names ? names->child : NULL;
    for (int32_t i = 0; i < n; i++, e = e ? e->next : NULL) {
        if (!e) {
            char nm[32];
            snprintf(nm, sizeof nm, "agent_%d", (int)i);
            if (!(s->agent_names[i] = polis__strdup(env, nm))) return nomem(env);
            continue;
        }
        char ip[PATH_CAP];
        path_step(ip, "agents.names", NULL, i);
        const char *v = NULL;
        if ((st = want_string(env, e, ip, true, &v)) != POLIS_OK) return st;
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
            if (*p < 0x20 || *p == 0x7f) {
                char g[GOT_CAP + 8];
                return cfg_fail(env, ip, "agent name must not contain control characters, got %s",
                                got(g, e));
            }
        if (!(s->agent_names[i] = polis__strdup(env, v))) return nomem(env);
    }
    int32_t at = names ? first_repeat(env, NULL, s->agent_names, n) : -1;
    if (at == -2) return nomem(env);
    if (at < 0) return POLIS_OK;
    char ip[PATH_CAP];
    return cfg_fail(env, path_step(ip, "agents.names", NULL, at), "duplicate agent name \"%s\"",
                    s->agent_names[at]);
}

static polis_status read_grid(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *g = member(root, "grid");
    if (!g) return POLIS_OK;
    static const char *const keys[] = {"width", "height", "wrap"};
    polis_status st;
    if ((st = want_type(env, g, "grid", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, g, "grid", keys)) != POLIS_OK) return st;
    if (!member(g, "width")) return missing(env, "grid", "width");
    if (!member(g, "height")) return missing(env, "grid", "height");
    if ((st = opt_int(env, g, "grid", "width", 1, 65536, NULL, &s->grid_width)) != POLIS_OK ||
        (st = opt_int(env, g, "grid", "height", 1, 65536, NULL, &s->grid_height)) != POLIS_OK)
        return st;
    /* The kernel's bound on cells (grid.c), checked here to name the keys. */
    int64_t cells = (int64_t)s->grid_width * s->grid_height;
    if (cells > ((int64_t)1 << 28))
        return cfg_fail(env, "grid",
                        "width %d x height %d is %" PRId64 " cells, more than 2^28 (268435456)",
                        (int)s->grid_width, (int)s->grid_height, cells);
    const cJSON *wrap = member(g, "wrap");
    s->grid_wrap = false;
    if (wrap && (st = want_bool(env, wrap, "grid.wrap", &s->grid_wrap)) != POLIS_OK) return st;
    s->has_grid = true;
    return POLIS_OK;
}

static polis_status read_lua(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    s->lua_instruction_limit = 0; /* the budget costs every instruction: opt-in (docs/lua-api.md) */
    s->lua_memory_limit = 67108864;
    s->lua_time_limit_ms = 5000;
    const cJSON *l = member(root, "lua");
    if (!l) return POLIS_OK;
    static const char *const keys[] = {"instruction_limit", "memory_limit", "time_limit_ms"};
    polis_status st;
    if ((st = want_type(env, l, "lua", cJSON_Object)) != POLIS_OK) return st;
    if ((st = REFUSE_UNKNOWN(env, l, "lua", keys)) != POLIS_OK) return st;
    if ((st = opt_int(env, l, "lua", "instruction_limit", 0, INT64_C(1000000000000),
                      &s->lua_instruction_limit, NULL)) != POLIS_OK)
        return st;
    if ((st = opt_int(env, l, "lua", "time_limit_ms", 0, INT64_C(86400000), &s->lua_time_limit_ms,
                      NULL)) != POLIS_OK)
        return st;
    return opt_int(env, l, "lua", "memory_limit", 0, INT64_C(1099511627776), &s->lua_memory_limit,
                   NULL);
}

/* A plugin or script name must be unique across both lists; `path` names where it came
 * from. */
static polis_status check_unique_name(polis_env *env, const char *name, const char *path,
                                      int32_t n_plugins, int32_t n_scripts)
{
    const polis__scenario *s = &env->scn;
    for (int32_t i = 0; i < n_plugins + n_scripts; i++) {
        bool p = i < n_plugins;
        const char *other = p ? s->plugins[i].name : s->scripts[i - n_plugins].name;
        if (other && strcmp(other, name) == 0)
            return cfg_fail(env, path, "name \"%s\" is already used by %s", name,
                            p ? s->plugins[i].jpath : s->scripts[i - n_plugins].jpath);
    }
    return POLIS_OK;
}

static const char *const plugin_keys[] = {"name", "path", "params"};
static const char *const script_keys[] = {"path", "name", "params"};

/* A plugins[] or scripts[] entry: a string (a plugin's name, a script's path) or an object
 * with name, path and params. The name defaults to the file's stem. */
static polis_status read_entry(polis_env *env, const cJSON *e, int32_t i, bool plugin)
{
    polis__scenario *s = &env->scn;
    const char *what = plugin ? "plugin" : "script";
    char **name_out = plugin ? &s->plugins[i].name : &s->scripts[i].name;
    char **path_out = plugin ? &s->plugins[i].path : &s->scripts[i].path;
    char **jpath_out = plugin ? &s->plugins[i].jpath : &s->scripts[i].jpath;
    const cJSON **params_out = plugin ? &s->plugins[i].params : &s->scripts[i].params;
    char ip[PATH_CAP], kp[PATH_CAP], pp[PATH_CAP];
    path_step(ip, plugin ? "plugins" : "scripts", NULL, i);
    if (!(*jpath_out = polis__strdup(env, ip))) return nomem(env);
    polis_status st;
    const char *name = NULL, *path = NULL, *name_at = ip;
    int t = e->type & 0xFF;
    if (t == cJSON_String && plugin) {
        name = e->valuestring;
    } else if (t == cJSON_String) {
        if (!e->valuestring[0]) return cfg_fail(env, ip, "expected non-empty string, got \"\"");
        path = e->valuestring;
    } else if (t == cJSON_Object) {
        st = check_keys(env, e, ip, plugin ? plugin_keys : script_keys, sizeof(char *), 3);
        if (st != POLIS_OK) return st;
        const cJSON *n = member(e, "name"), *pa = member(e, "path"), *pr = member(e, "params");
        if (!plugin && !pa) return missing(env, ip, "path");
        if (!n && !pa) return cfg_fail(env, ip, "expected \"name\" or \"path\" (or both)");
        if (pa && (st = want_string(env, pa, path_step(pp, ip, "path", 0), true, &path))) return st;
        name_at = n ? path_step(kp, ip, "name", 0) : path_step(kp, ip, "path", 0);
        if (n && (st = want_string(env, n, name_at, true, &name)) != POLIS_OK) return st;
        if (pr && (st = want_type(env, pr, path_step(pp, ip, "params", 0), cJSON_Object)))
            return st;
        *params_out = pr;
    } else {
        return mismatch(env, ip, e, "%s",
                        plugin ? "plugin name or object" : "script path or object");
    }
    if (path && !(*path_out = polis__path_join(env, s->base_dir, path))) return nomem(env);
    if (name) {
        if (!valid_name(name))
            return cfg_fail(env, name_at, "invalid %s name \"%s\" (expected " NAME_RULE ")", what,
                            name);
        if (!(*name_out = polis__strdup(env, name))) return nomem(env);
    } else {
        if (!(*name_out = stem_dup(env, path, plugin))) return nomem(env);
        if (!valid_name(*name_out))
            return cfg_fail(env, name_at,
                            "the file name gives the %s name \"%s\", which is invalid "
                            "(expected " NAME_RULE "); set \"name\"",
                            what, *name_out);
    }
    return check_unique_name(env, *name_out, name_at, plugin ? i : s->n_plugins, plugin ? 0 : i);
}

static polis_status read_rewards(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    const cJSON *r = member(root, "rewards");
    if (!r) return POLIS_OK;
    polis_status st;
    if ((st = want_type(env, r, "rewards", cJSON_Object)) != POLIS_OK) return st;
    int32_t n = 0;
    for (const cJSON *c = r->child; c; c = c->next) n += !is_comment_key(c->string);
    if (n == 0) return POLIS_OK;
    if (!(s->weights = polis__alloc(env, sizeof *s->weights * (size_t)n))) return nomem(env);
    s->n_weights = n;
    int32_t i = 0;
    for (const cJSON *c = r->child; c; c = c->next) {
        if (is_comment_key(c->string)) continue;
        polis__scn_reward_weight *w = &s->weights[i++];
        char kp[PATH_CAP];
        path_step(kp, "rewards", c->string, 0);
        if (!c->string[0]) return cfg_fail(env, kp, "empty reward function name");
        /* The engine keeps weights as float; this range keeps a weighted sum far from its
         * limits. */
        if (!cJSON_IsNumber(c) || !(fabs(c->valuedouble) <= 1e9))
            return mismatch(env, kp, c, "number in [-1e9, 1e9]");
        w->weight = c->valuedouble;
        if (!(w->name = polis__strdup(env, c->string))) return nomem(env);
        if (!(w->jpath = polis__strdup(env, kp))) return nomem(env);
    }
    return POLIS_OK;
}

static polis_status phase_fail(polis_env *env, const char *path, const cJSON *v)
{
    char list[256];
    strbuf b = {list, sizeof list, 0};
    list[0] = '\0';
    for (int32_t p = 0; p < POLIS_PHASE_COUNT; p++) {
        if (p) sb_puts(&b, ", ");
        sb_puts(&b, polis__phase_name((polis_phase)p));
    }
    return mismatch(env, path, v, "one of %s", list);
}

static polis_status read_binding(polis_env *env, const cJSON *e, int32_t i)
{
    polis__scn_binding *b = &env->scn.bindings[i];
    b->phase = -1;
    char ip[PATH_CAP], kp[PATH_CAP];
    path_step(ip, "bindings", NULL, i);
    if (!(b->jpath = polis__strdup(env, ip))) return nomem(env);
    polis_status st;
    if ((st = want_type(env, e, ip, cJSON_Object)) != POLIS_OK) return st;
    static const char *const keys[] = {"call", "event", "phase", "priority"};
    if ((st = REFUSE_UNKNOWN(env, e, ip, keys)) != POLIS_OK) return st;
    const cJSON *call = member(e, "call"), *ev = member(e, "event"), *ph = member(e, "phase");
    if (!call) return missing(env, ip, "call");
    const char *v = NULL;
    path_step(kp, ip, "call", 0);
    if ((st = want_string(env, call, kp, true, &v)) != POLIS_OK) return st;
    /* The "plugin.export" shape and the export itself are checked by ffi.c when it binds. */
    if (!(b->call = polis__strdup(env, v))) return nomem(env);
    if (!ev == !ph)
        return cfg_fail(env, ip, "expected exactly one of \"event\" and \"phase\", got %s",
                        ev ? "both" : "neither");
    if (ev) {
        if ((st = want_string(env, ev, path_step(kp, ip, "event", 0), true, &v)) != POLIS_OK)
            return st;
        if (!(b->event = polis__strdup(env, v))) return nomem(env);
    } else {
        path_step(kp, ip, "phase", 0);
        if ((ph->type & 0xFF) != cJSON_String) return phase_fail(env, kp, ph);
        b->phase = polis__phase_parse(ph->valuestring);
        if (b->phase < 0) return phase_fail(env, kp, ph);
    }
    b->priority = 0;
    return opt_int(env, e, ip, "priority", -1000000, 1000000, NULL, &b->priority);
}

enum { LIST_PLUGINS, LIST_SCRIPTS, LIST_BINDINGS };

static polis_status read_list(polis_env *env, const cJSON *root, const char *key, int kind)
{
    polis__scenario *s = &env->scn;
    const cJSON *list = member(root, key);
    if (!list) return POLIS_OK;
    polis_status st;
    if ((st = want_type(env, list, key, cJSON_Array)) != POLIS_OK) return st;
    int32_t n = cJSON_GetArraySize(list);
    if (n == 0) return POLIS_OK;
    static const size_t elem[] = {sizeof(polis__scn_plugin), sizeof(polis__scn_script),
                                  sizeof(polis__scn_binding)};
    void *arr = polis__alloc(env, elem[kind] * (size_t)n);
    if (!arr) return nomem(env);
    /* The free path trusts the counts; set each with its array. */
    if (kind == LIST_PLUGINS) {
        s->plugins = arr;
        s->n_plugins = n;
    } else if (kind == LIST_SCRIPTS) {
        s->scripts = arr;
        s->n_scripts = n;
    } else {
        s->bindings = arr;
        s->n_bindings = n;
    }
    int32_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        st = kind == LIST_BINDINGS ? read_binding(env, e, i)
                                   : read_entry(env, e, i, kind == LIST_PLUGINS);
        if (st != POLIS_OK) return st;
    }
    return POLIS_OK;
}

static polis_status read_scenario(polis_env *env, const cJSON *root)
{
    polis__scenario *s = &env->scn;
    polis_status st;
    const cJSON *n;
    if (!cJSON_IsObject(root)) return mismatch(env, TOP, root, "object");
    /* Top-level keys are paths of their own: "max_steps", not "top level.max_steps". */
    if ((st = REFUSE_UNKNOWN(env, root, "", top_keys)) != POLIS_OK) return st;

    if ((n = member(root, "polis"))) {
        int64_t v;
        if (!as_int64(n, &v)) return mismatch(env, "polis", n, "format version 1");
        if (v != 1)
            return cfg_fail(env, "polis",
                            "unsupported format version %" PRId64 " (this engine reads 1)", v);
    }

    const char *str = NULL;
    if ((n = member(root, "name"))) {
        if ((st = want_string(env, n, "name", true, &str)) != POLIS_OK) return st;
        s->name = polis__strdup(env, str);
    } else if (strcmp(s->source, "<string>") == 0) {
        s->name = polis__strdup(env, "scenario");
    } else {
        s->name = stem_dup(env, s->source, false);
    }
    if (!s->name) return nomem(env);

    if ((n = member(root, "doc"))) {
        if ((st = want_string(env, n, "doc", false, &str)) != POLIS_OK) return st;
        if (!(s->doc = polis__strdup(env, str))) return nomem(env);
    }

    int64_t seed = 0;
    s->max_steps = 1000;
    if ((st = opt_int(env, root, "", "seed", 0, INT64_C(9007199254740992), &seed, NULL)) ||
        (st = opt_int(env, root, "", "max_steps", 1, 1000000000, &s->max_steps, NULL)) ||
        (st = read_agents(env, root)) != POLIS_OK)
        return st;
    s->seed = (uint64_t)seed;
    s->max_entities = s->n_agents + 4096;
    s->event_queue = 4096;
    if ((st = opt_int(env, root, "", "max_entities", s->n_agents, 16777216, NULL,
                      &s->max_entities)) ||
        (st = read_grid(env, root)) ||
        (st = opt_int(env, root, "", "event_queue", 16, 1048576, NULL, &s->event_queue)) ||
        (st = opt_int(env, root, "", "max_memory", INT64_C(1048576), INT64_C(9007199254740992),
                      &s->max_memory, NULL)))
        return st;

    s->compact_observations = false;
    if ((n = member(root, "compact_observations")) &&
        (st = want_bool(env, n, "compact_observations", &s->compact_observations)) != POLIS_OK)
        return st;

    if ((st = read_lua(env, root)) != POLIS_OK) return st;
    if ((st = read_live(env, root)) != POLIS_OK) return st;
    if ((st = read_seats(env, root)) != POLIS_OK) return st;
    if ((st = read_pixels(env, root)) != POLIS_OK) return st;
    if ((st = read_list(env, root, "plugins", LIST_PLUGINS)) != POLIS_OK) return st;
    if ((st = read_list(env, root, "scripts", LIST_SCRIPTS)) != POLIS_OK) return st;
    if ((st = read_rewards(env, root)) != POLIS_OK) return st;
    return read_list(env, root, "bindings", LIST_BINDINGS);
}

polis_status polis__scenario_parse(polis_env *env, const char *text, size_t len, const char *source,
                                   const char *base_dir)
{
    polis__scenario_release_json(env);
    polis__scenario_free(env);
    polis__scenario *s = &env->scn;
    polis_status st;
    if (!(s->source = polis__strdup(env, source ? source : "<string>")) ||
        !(s->base_dir = polis__strdup(env, base_dir ? base_dir : "."))) {
        st = nomem(env);
        goto done;
    }
    if (!text) {
        st = polis__fail(env, POLIS_ERR_INVALID, "%s: no scenario text", s->source);
        goto done;
    }
    if ((st = json_parse(env, text, len, &s->root)) != POLIS_OK) goto done;
    if (env->overrides && (st = polis__overrides_apply(env, s->root)) != POLIS_OK) goto done;
    st = read_scenario(env, s->root);
done:
    if (st != POLIS_OK) {
        polis__scenario_release_json(env);
        polis__scenario_free(env);
    }
    return st;
}

static void free3(polis_env *env, char *a, char *b, char *c)
{
    polis__strfree(env, a);
    polis__strfree(env, b);
    polis__strfree(env, c);
}

void polis__scenario_free(polis_env *env)
{
    polis__scenario *s = &env->scn;
    cJSON_Delete(s->root);
    free3(env, s->source, s->base_dir, s->name);
    polis__strfree(env, s->doc);
    for (int32_t i = 0; s->agent_names && i < s->n_agents; i++)
        polis__strfree(env, s->agent_names[i]);
    polis__free(env, s->agent_names, sizeof(char *) * (size_t)s->n_agents);
    for (int32_t i = 0; i < s->n_plugins; i++)
        free3(env, s->plugins[i].name, s->plugins[i].path, s->plugins[i].jpath);
    polis__free(env, s->plugins, sizeof *s->plugins * (size_t)s->n_plugins);
    for (int32_t i = 0; i < s->n_scripts; i++)
        free3(env, s->scripts[i].name, s->scripts[i].path, s->scripts[i].jpath);
    polis__free(env, s->scripts, sizeof *s->scripts * (size_t)s->n_scripts);
    for (int32_t i = 0; i < s->n_weights; i++)
        free3(env, s->weights[i].name, s->weights[i].jpath, NULL);
    polis__free(env, s->weights, sizeof *s->weights * (size_t)s->n_weights);
    for (int32_t i = 0; i < s->n_bindings; i++)
        free3(env, s->bindings[i].call, s->bindings[i].event, s->bindings[i].jpath);
    polis__free(env, s->bindings, sizeof *s->bindings * (size_t)s->n_bindings);
    memset(s, 0, sizeof *s);
}

void polis__scenario_release_json(polis_env *env)
{
    polis__json_arena_free(env);
    cJSON_Delete(env->scn.root);
    env->scn.root = NULL;
    for (int32_t i = 0; i < env->scn.n_plugins; i++) env->scn.plugins[i].params = NULL;
    for (int32_t i = 0; i < env->scn.n_scripts; i++) env->scn.scripts[i].params = NULL;
}

/* ---- files -------------------------------------------------------------------------------- */

static polis_status io_fail(polis_env *env, const char *path, int err)
{
    char msg[256];
    if (strerror_r(err, msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "error %d", err);
    return polis__fail(env, POLIS_ERR_IO, "cannot read %s: %s", path, msg);
}

polis_status polis__read_file(polis_env *env, const char *path, char **out, size_t *len)
{
    if (!out || !path) return polis__fail(env, POLIS_ERR_INVALID, "read_file: NULL argument");
    *out = NULL;
    if (len) *len = 0;
    char why[160];
    FILE *f = NULL;
    int oerr = polis__file_open(path, POLIS__FILE_MAX, &f, why, sizeof why);
    if (oerr > 0) return io_fail(env, path, oerr);
    if (oerr < 0) return polis__fail(env, POLIS_ERR_IO, "cannot read %s: %s", path, why);
    size_t cap = 4096, n = 0;
    char *buf = polis__realloc(env, NULL, 0, cap);
    int err = 0;
    while (buf) {
        if (cap - n < 2) {
            char *nb = cap <= SIZE_MAX / 2 ? polis__realloc(env, buf, cap, cap * 2) : NULL;
            if (!nb) {
                polis__free(env, buf, cap);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        errno = 0;
        size_t got_n = fread(buf + n, 1, cap - 1 - n, f);
        n += got_n;
        if (got_n == 0) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (!buf) return nomem(env);
    if (err) {
        polis__free(env, buf, cap);
        return io_fail(env, path, err);
    }
    /* Shrink to the exact size the caller frees: *len + 1. */
    char *exact = polis__realloc(env, buf, cap, n + 1);
    if (!exact) {
        polis__free(env, buf, cap);
        return nomem(env);
    }
    exact[n] = '\0';
    *out = exact;
    if (len) *len = n;
    return POLIS_OK;
}

int polis__file_open(const char *path, size_t max, FILE **out, char *why, size_t why_cap)
{
    *out = NULL;
    why[0] = '\0';
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer; the type check
     * below refuses it before anything is read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISREG(st.st_mode)  ? NULL
                                              : "not a regular file";
    if (kind) {
        snprintf(why, why_cap, "not a regular file (%s)", kind);
    } else if ((uintmax_t)st.st_size > max) {
        snprintf(why, why_cap, "%jd bytes, more than the limit of %zu bytes", (intmax_t)st.st_size,
                 max);
    } else {
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        if (!(*out = fdopen(fd, "rb"))) {
            int e = errno;
            close(fd);
            return e;
        }
        return 0;
    }
    close(fd);
    return -1;
}

char *polis__path_join(polis_env *env, const char *base, const char *rel)
{
    if (!rel) return NULL;
    char *s;
    if (rel[0] == '/' || !base || !base[0]) {
        s = polis__strdup(env, rel);
    } else {
        size_t bl = strlen(base), rl = strlen(rel);
        bool slash = base[bl - 1] == '/';
        s = polis__alloc(env, bl + !slash + rl + 1);
        if (s) {
            memcpy(s, base, bl);
            if (!slash) s[bl] = '/';
            memcpy(s + bl + !slash, rel, rl + 1);
        }
    }
    if (!s) nomem(env);
    return s;
}
