/*
 * engine/cli/session/seats.c — who plays each seat of an env (seats.h): the env's policies,
 * policy processes and populations.
 *
 * Players are kept once per distinct text (two seats played by "py:a.pt" share one process,
 * asked for both seats in one request per tick). Each tick the processes are sent their
 * seats' observations first, then the env's policies act, then the processes' replies are
 * read, so processes think while the others work. The per-tick lists are allocated with the
 * table.
 */
#define _GNU_SOURCE /* realpath, strdup */
#include "session/seats.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "polis/rng.h"
#include "session/episode.h"
#include "session/policyproc.h"
#include "session/proto.h"
#include "util/file.h"

enum { PLAYER_POLICY, PLAYER_PROC };

typedef struct player {
    char *text; /* "random", "py:/abs/policy.pt", "cmd:prog arg" */
    int kind;
    int32_t policy;       /* PLAYER_POLICY */
    cli_policyproc *proc; /* PLAYER_PROC */
    int32_t *agents;      /* this tick's agents: [n_agents] */
    int32_t n;
    int32_t *played; /* this episode's agents: [n_agents] */
    int32_t n_played;
} player;

typedef struct member {
    int32_t player;
    double weight;
} member;

typedef struct population {
    char *text; /* "pop:FILE" */
    char *name;
    bool per_episode;
    member *members;
    int32_t n_members;
    double total;
    int32_t now; /* per_episode: this episode's member */
} population;

typedef struct seat {
    int32_t player;     /* a fixed player, or -1 */
    int32_t population; /* or a population's index */
    int32_t now;        /* the player of this episode */
} seat;

struct cli_seats {
    polis_env *env;
    const polis_io *io;
    char *file;
    int timeout_ms;
    int32_t n_agents;
    seat *seats;
    player *players;
    int32_t n_players, cap_players;
    population *pops;
    int32_t n_pops, cap_pops;
    int64_t played;  /* episodes begun through the actor */
    int64_t episode; /* the episode begun last, and its seed */
    uint64_t seed;
};

static bool oom(char *err, size_t cap)
{
    snprintf(err, cap, "out of memory");
    return false;
}

/* ---- players ------------------------------------------------------------------------------ */

/* argv of a player's process (free the array and argv[0..]), or NULL on out of memory. */
static char **proc_argv(const char *text)
{
    char **argv = NULL;
    if (strncmp(text, "py:", 3) == 0) {
        argv = calloc(5, sizeof *argv);
        if (!argv) return NULL;
        argv[0] = strdup(cli_python());
        argv[1] = strdup("-m");
        argv[2] = strdup("polis.rl.seat");
        argv[3] = strdup(text + 3);
        if (!argv[0] || !argv[1] || !argv[2] || !argv[3]) goto fail;
        return argv;
    }
    /* cmd: words split at spaces */
    const char *s = text + 4;
    size_t words = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        words++;
        while (*p && *p != ' ') p++;
    }
    argv = calloc(words + 1, sizeof *argv);
    if (!argv) return NULL;
    size_t k = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if (!(argv[k++] = strndup(p, (size_t)(e - p)))) goto fail;
        p = e;
    }
    return argv;
fail:
    for (size_t i = 0; argv && argv[i]; i++) free(argv[i]);
    free(argv);
    return NULL;
}

static void free_argv(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++) free(argv[i]);
    free(argv);
}

/* Frees what a player being added holds; -1. */
static int32_t drop_player(player *p)
{
    free(p->text);
    free(p->agents);
    free(p->played);
    return -1;
}

/* The index of the player `text` (added, and its process started, when new), or -1 with the
 * reason in err. */
static int32_t player_of(cli_seats *s, const char *text, const char *where, char *err, size_t cap)
{
    for (int32_t i = 0; i < s->n_players; i++)
        if (strcmp(s->players[i].text, text) == 0) return i;
    if (s->n_players == s->cap_players) {
        int32_t nc = s->cap_players ? 2 * s->cap_players : 4;
        player *np = realloc(s->players, (size_t)nc * sizeof *np);
        if (!np) {
            oom(err, cap);
            return -1;
        }
        s->players = np;
        s->cap_players = nc;
    }
    player *p = &s->players[s->n_players];
    memset(p, 0, sizeof *p);
    p->text = strdup(text);
    p->agents = calloc((size_t)s->n_agents + 1, sizeof *p->agents);
    p->played = calloc((size_t)s->n_agents + 1, sizeof *p->played);
    if (!p->text || !p->agents || !p->played) {
        oom(err, cap);
        return drop_player(p);
    }
    bool is_proc = strncmp(text, "py:", 3) == 0 || strncmp(text, "cmd:", 4) == 0;
    if (!is_proc) {
        p->kind = PLAYER_POLICY;
        p->policy = polis_env_policy_find(s->env, text);
        if (p->policy < 0) {
            char names[512];
            cli_policy_names(s->env, names, sizeof names);
            snprintf(err, cap,
                     "%s: '%s' is not a policy of this scenario (policies: %s), nor py:SPEC, "
                     "cmd:PROGRAM or pop:FILE",
                     where, text, names);
            return drop_player(p);
        }
    } else {
        p->kind = PLAYER_PROC;
        if ((is_proc && strncmp(text, "py:", 3) == 0 && !text[3]) ||
            (strncmp(text, "cmd:", 4) == 0 && !text[4 + strspn(text + 4, " ")])) {
            snprintf(err, cap, "%s: '%s' names no %s", where, text,
                     text[0] == 'p' ? "policy (py:SPEC)" : "program (cmd:PROGRAM [ARGS])");
            return drop_player(p);
        }
        char **argv = proc_argv(text);
        if (!argv) {
            oom(err, cap);
            return drop_player(p);
        }
        char why[1536];
        p->proc = cli_policyproc_start(argv, text, s->env, s->file, s->timeout_ms, why, sizeof why);
        free_argv(argv);
        if (!p->proc) {
            snprintf(err, cap, "%s: %s", where, why);
            return drop_player(p);
        }
    }
    return s->n_players++;
}

/* ---- populations --------------------------------------------------------------------------- */

/* A member's player text from its entry, into out. False with the reason in err. */
static bool member_text(const cJSON *m, const char *dir, const char *where, char *out, size_t cap,
                        char *err, size_t ecap)
{
    static const char *const kinds[] = {"policy", "checkpoint", "python", "command"};
    const cJSON *which = NULL;
    int kind = -1;
    for (int k = 0; k < 4; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, kinds[k]);
        if (!v) continue;
        if (which) {
            snprintf(err, ecap,
                     "%s: give one of policy, checkpoint, python and command, not %s and %s", where,
                     kinds[kind], kinds[k]);
            return false;
        }
        which = v;
        kind = k;
    }
    if (!which) {
        snprintf(err, ecap, "%s: needs one of policy, checkpoint, python, command", where);
        return false;
    }
    if (kind == 3) {
        if (!cJSON_IsArray(which) || cJSON_GetArraySize(which) == 0) {
            snprintf(err, ecap,
                     "%s.command: expected a non-empty array of strings (the program "
                     "and its arguments)",
                     where);
            return false;
        }
        size_t len = (size_t)snprintf(out, cap, "cmd:");
        const cJSON *w;
        int i = 0;
        cJSON_ArrayForEach(w, which) {
            if (!cJSON_IsString(w) || !w->valuestring[0] || strchr(w->valuestring, ' ')) {
                snprintf(err, ecap, "%s.command[%d]: expected a non-empty string without spaces",
                         where, i);
                return false;
            }
            len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s", i ? " " : "",
                                    w->valuestring);
            i++;
        }
        if (len >= cap) {
            snprintf(err, ecap, "%s.command: too long", where);
            return false;
        }
        return true;
    }
    if (!cJSON_IsString(which) || !which->valuestring[0]) {
        snprintf(err, ecap, "%s.%s: expected a non-empty string", where, kinds[kind]);
        return false;
    }
    const char *v = which->valuestring;
    if (kind == 0) {
        snprintf(out, cap, "%s", v);
        return true;
    }
    if (kind == 2) {
        snprintf(out, cap, "py:%s", v);
        return true;
    }
    /* a checkpoint: a file relative to the population, made absolute; options after '?' */
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(m, "options");
    if (opt && (!cJSON_IsString(opt) || !opt->valuestring[0])) {
        snprintf(err, ecap, "%s.options: expected a string such as \"deterministic=1\"", where);
        return false;
    }
    char path[2 * PATH_MAX + 2], abs[PATH_MAX];
    if (v[0] == '/')
        snprintf(path, sizeof path, "%s", v);
    else
        snprintf(path, sizeof path, "%.*s/%s", PATH_MAX, dir, v);
    if (!realpath(path, abs)) {
        snprintf(err, ecap, "%s.checkpoint: %s: %s", where, path, strerror(errno));
        return false;
    }
    if ((size_t)snprintf(out, cap, "py:%s%s%s", abs, opt ? "?" : "", opt ? opt->valuestring : "") >=
        cap) {
        snprintf(err, ecap, "%s.checkpoint: the path is too long", where);
        return false;
    }
    return true;
}

/* The index of the population in FILE (read, checked and its players started when new), or
 * -1 with the reason in err. */
static int32_t population_of(cli_seats *s, const char *file, const char *where, char *err,
                             size_t cap)
{
    char abs[PATH_MAX];
    if (!realpath(file, abs)) {
        snprintf(err, cap, "%s: population file %s: %s", where, file, strerror(errno));
        return -1;
    }
    char text[PATH_MAX + 8];
    snprintf(text, sizeof text, "pop:%s", abs);
    for (int32_t i = 0; i < s->n_pops; i++)
        if (strcmp(s->pops[i].text, text) == 0) return i;
    size_t len;
    char why[256];
    char *json = cli_file_read(abs, CLI_FILE_TEXT_MAX, &len, why, sizeof why);
    if (!json) {
        snprintf(err, cap, "%s: population file %s: %s", where, file, why);
        return -1;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(json, len, &end, false);
    if (!doc) {
        size_t at = end ? (size_t)(end - json) : 0;
        int line = 1;
        for (size_t i = 0; i < at && i < len; i++) line += json[i] == '\n';
        snprintf(err, cap, "%s:%d: not valid JSON (at byte %zu)", file, line, at);
        free(json);
        return -1;
    }
    free(json);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", abs);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    population pop = {0};
    int32_t idx = -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "polis_population");
    const cJSON *k;
    if (!cJSON_IsObject(doc)) {
        snprintf(err, cap, "%s: a population file is a JSON object", file);
        goto out;
    }
    cJSON_ArrayForEach(k, doc) {
        static const char *const keys[] = {"polis_population", "name", "doc", "draw", "members"};
        bool known = k->string[0] == '_';
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            known |= strcmp(k->string, keys[i]) == 0;
        if (!known) {
            snprintf(err, cap,
                     "%s: %s: unknown key (keys: polis_population, name, doc, draw, "
                     "members)",
                     file, k->string);
            goto out;
        }
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
        snprintf(err, cap, "%s: polis_population: expected 1 (the format's version)", file);
        goto out;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
    if (name && !cJSON_IsString(name)) {
        snprintf(err, cap, "%s: name: expected a string", file);
        goto out;
    }
    const cJSON *draw = cJSON_GetObjectItemCaseSensitive(doc, "draw");
    if (draw && (!cJSON_IsString(draw) || (strcmp(draw->valuestring, "per_seat") != 0 &&
                                           strcmp(draw->valuestring, "per_episode") != 0))) {
        snprintf(err, cap, "%s: draw: expected \"per_seat\" or \"per_episode\"", file);
        goto out;
    }
    pop.per_episode = draw && strcmp(draw->valuestring, "per_episode") == 0;
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(doc, "members");
    int n = cJSON_IsArray(members) ? cJSON_GetArraySize(members) : 0;
    if (n == 0) {
        snprintf(err, cap, "%s: members: expected a non-empty array of members", file);
        goto out;
    }
    pop.members = calloc((size_t)n, sizeof *pop.members);
    pop.text = strdup(text);
    pop.name = strdup(name ? name->valuestring : file);
    if (!pop.members || !pop.text || !pop.name) {
        oom(err, cap);
        goto out;
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, members) {
        char mw[PATH_MAX + 64], ptext[PATH_MAX + 64];
        snprintf(mw, sizeof mw, "%s: members[%d]", file, pop.n_members);
        if (!cJSON_IsObject(m)) {
            snprintf(err, cap, "%s: expected an object", mw);
            goto out;
        }
        cJSON_ArrayForEach(k, m) {
            static const char *const keys[] = {"policy", "checkpoint", "python", "command",
                                               "weight", "options",    "name",   "doc"};
            bool known = k->string[0] == '_';
            for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
                known |= strcmp(k->string, keys[i]) == 0;
            if (!known) {
                snprintf(err, cap,
                         "%s: %s: unknown key (keys: policy, checkpoint, python, "
                         "command, weight, options, name, doc)",
                         mw, k->string);
                goto out;
            }
        }
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(m, "weight");
        double weight = 1.0;
        if (w) {
            if (!cJSON_IsNumber(w) || !(w->valuedouble > 0) || w->valuedouble > 1e12) {
                snprintf(err, cap, "%s.weight: expected a number above 0", mw);
                goto out;
            }
            weight = w->valuedouble;
        }
        if (!member_text(m, dir, mw, ptext, sizeof ptext, err, cap)) goto out;
        int32_t pl = player_of(s, ptext, mw, err, cap);
        if (pl < 0) goto out;
        pop.members[pop.n_members].player = pl;
        pop.members[pop.n_members].weight = weight;
        pop.total += weight;
        pop.n_members++;
    }
    if (s->n_pops == s->cap_pops) {
        int32_t nc = s->cap_pops ? 2 * s->cap_pops : 2;
        population *np = realloc(s->pops, (size_t)nc * sizeof *np);
        if (!np) {
            oom(err, cap);
            goto out;
        }
        s->pops = np;
        s->cap_pops = nc;
    }
    s->pops[s->n_pops] = pop;
    memset(&pop, 0, sizeof pop);
    idx = s->n_pops++;
out:
    free(pop.members);
    free(pop.text);
    free(pop.name);
    cJSON_Delete(doc);
    return idx;
}

/* ---- the table ---------------------------------------------------------------------------- */

cli_seats *cli_seats_new(polis_env *env, const char *file, const char *who, const char *where,
                         int timeout_ms, char *err, size_t cap)
{
    cli_seats *s = calloc(1, sizeof *s);
    if (!s) {
        oom(err, cap);
        return NULL;
    }
    s->env = env;
    s->io = polis_env_io(env);
    s->timeout_ms = timeout_ms;
    s->n_agents = polis_env_n_agents(env);
    s->file = file ? strdup(file) : NULL;
    s->seats = calloc((size_t)s->n_agents + 1, sizeof *s->seats);
    if ((file && !s->file) || !s->seats) {
        oom(err, cap);
        cli_seats_free(s);
        return NULL;
    }
    for (int32_t a = 0; a < s->n_agents; a++)
        if (!cli_seats_assign(s, a, who ? who : "random", where ? where : "--policy", err, cap)) {
            cli_seats_free(s);
            return NULL;
        }
    return s;
}

bool cli_seats_outside(const char *who)
{
    return strncmp(who, "py:", 3) == 0 || strncmp(who, "cmd:", 4) == 0 ||
           strncmp(who, "pop:", 4) == 0;
}

bool cli_seats_assign(cli_seats *s, int32_t agent, const char *who, const char *where, char *err,
                      size_t cap)
{
    seat *st = &s->seats[agent];
    if (strncmp(who, "pop:", 4) == 0) {
        if (!who[4]) {
            snprintf(err, cap, "%s: 'pop:' names no population file", where);
            return false;
        }
        int32_t p = population_of(s, who + 4, where, err, cap);
        if (p < 0) return false;
        st->player = -1;
        st->population = p;
        st->now = s->pops[p].members[0].player;
        return true;
    }
    int32_t p = player_of(s, who, where, err, cap);
    if (p < 0) return false;
    st->player = p;
    st->population = -1;
    st->now = p;
    return true;
}

cJSON *cli_scenario_seats(const char *file)
{
    char why[256];
    size_t len = 0;
    char *text = file ? cli_file_read(file, CLI_FILE_TEXT_MAX, &len, why, sizeof why) : NULL;
    cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    cJSON *seats = cJSON_DetachItemFromObjectCaseSensitive(root, "seats");
    cJSON_Delete(root);
    if (seats && !cJSON_IsObject(seats)) {
        cJSON_Delete(seats);
        return NULL;
    }
    return seats;
}

bool cli_seats_from_scenario(cli_seats *s, const char *file, char *err, size_t cap)
{
    cJSON *seats = cli_scenario_seats(file);
    const cJSON *it;
    bool ok = true;
    cJSON_ArrayForEach(it, seats) {
        if (it->string[0] == '_') continue; /* a comment, as everywhere in a scenario */
        char where[192];
        snprintf(where, sizeof where, "seats.%.128s", it->string);
        int32_t agent = cli_agent_find(s->env, it->string);
        if (!cJSON_IsString(it) || agent < 0) {
            /* the scenario reader refused these already; a file changed since says so */
            snprintf(err, cap, "%s: not a seat of this scenario", where);
            ok = false;
            break;
        }
        if (!(ok = cli_seats_assign(s, agent, it->valuestring, where, err, cap))) break;
    }
    cJSON_Delete(seats);
    return ok;
}

/* A member of pop drawn by weight. */
static int32_t draw_member(const population *pop, polis_rng *r)
{
    double x = polis_rng_double(r) * pop->total;
    for (int32_t i = 0; i < pop->n_members; i++) {
        x -= pop->members[i].weight;
        if (x < 0) return pop->members[i].player;
    }
    return pop->members[pop->n_members - 1].player;
}

bool cli_seats_begin(cli_seats *s, int64_t episode, uint64_t seed, char *err, size_t cap)
{
    /* one generator per episode seed: the same seed gives the same players */
    polis_rng r;
    polis_rng_seed(&r, seed, 0x7365617473ULL /* "seats" */);
    for (int32_t p = 0; p < s->n_pops; p++)
        if (s->pops[p].per_episode) s->pops[p].now = draw_member(&s->pops[p], &r);
    for (int32_t a = 0; a < s->n_agents; a++) {
        seat *st = &s->seats[a];
        if (st->population < 0) continue;
        const population *pop = &s->pops[st->population];
        st->now = pop->per_episode ? pop->now : draw_member(pop, &r);
    }
    s->episode = episode;
    s->seed = seed;
    for (int32_t i = 0; i < s->n_players; i++) {
        player *p = &s->players[i];
        p->n_played = 0;
        for (int32_t a = 0; a < s->n_agents; a++)
            if (s->seats[a].now == i) p->played[p->n_played++] = a;
        if (p->kind == PLAYER_PROC && p->n_played &&
            !cli_policyproc_reset(p->proc, episode, seed, p->played, p->n_played, err, cap))
            return false;
    }
    return true;
}

bool cli_seats_end(cli_seats *s, const cJSON *game, cJSON *figures, char *err, size_t cap)
{
    for (int32_t i = 0; i < s->n_players; i++) {
        player *p = &s->players[i];
        if (p->kind == PLAYER_PROC && p->n_played && cli_policyproc_reports(p->proc) &&
            !cli_policyproc_end(p->proc, s->episode, s->seed, p->played, p->n_played, game, figures,
                                err, cap))
            return false;
    }
    return true;
}

bool cli_seats_act(cli_seats *s, const bool *only, char *err, size_t cap)
{
    const polis_io *io = s->io;
    for (int32_t i = 0; i < s->n_players; i++) s->players[i].n = 0;
    for (int32_t a = 0; a < s->n_agents; a++) {
        if (io->terminations[a] || io->truncations[a] || (only && !only[a])) continue;
        player *p = &s->players[s->seats[a].now];
        p->agents[p->n++] = a;
    }
    for (int32_t i = 0; i < s->n_players; i++) {
        player *p = &s->players[i];
        if (p->kind == PLAYER_PROC && p->n &&
            !cli_policyproc_send(p->proc, p->agents, p->n, err, cap))
            return false;
    }
    bool ok = true;
    for (int32_t i = 0; ok && i < s->n_players; i++) {
        player *p = &s->players[i];
        if (p->kind == PLAYER_POLICY && p->n &&
            polis_env_policy_act(s->env, p->policy, p->agents, p->n) != POLIS_OK) {
            snprintf(err, cap, "%s", polis_env_error(s->env));
            ok = false;
        }
    }
    /* every reply is read, even after a failure, so the streams stay in step */
    for (int32_t i = 0; i < s->n_players; i++) {
        player *p = &s->players[i];
        if (p->kind != PLAYER_PROC || !p->n) continue;
        char why[1536];
        if (!cli_policyproc_recv(p->proc, why, sizeof why) && ok) {
            snprintf(err, cap, "%s", why);
            ok = false;
        }
    }
    return ok;
}

static bool actor_begin(void *ud, polis_env *env, uint64_t seed, char *err, size_t cap)
{
    (void)env;
    cli_seats *s = ud;
    return cli_seats_begin(s, s->played++, seed, err, cap);
}

static bool actor_end(void *ud, const cJSON *game, cJSON *figures, char *err, size_t cap)
{
    return cli_seats_end(ud, game, figures, err, cap);
}

static bool actor_act(void *ud, polis_env *env, char *err, size_t cap)
{
    (void)env;
    return cli_seats_act(ud, NULL, err, cap);
}

cli_actor cli_seats_actor(cli_seats *s)
{
    return (cli_actor){.begin = actor_begin, .act = actor_act, .end = actor_end, .ud = s};
}

const char *cli_seats_player(const cli_seats *s, int32_t agent)
{
    return s->players[s->seats[agent].now].text;
}

const char *cli_seats_assigned(const cli_seats *s, int32_t agent)
{
    const seat *st = &s->seats[agent];
    return st->population >= 0 ? s->pops[st->population].text : s->players[st->player].text;
}

bool cli_seats_external(const cli_seats *s, int32_t agent)
{
    const seat *st = &s->seats[agent];
    return st->population >= 0 || s->players[st->player].kind == PLAYER_PROC;
}

char *cli_seats_policies_json(const cli_seats *s)
{
    cJSON *arr = cJSON_CreateArray();
    for (int32_t a = 0; arr && a < s->n_agents; a++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(cli_seats_assigned(s, a)));
    char *t = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    return t;
}

void cli_seats_free(cli_seats *s)
{
    if (!s) return;
    for (int32_t i = 0; i < s->n_players; i++) {
        cli_policyproc_stop(s->players[i].proc);
        free(s->players[i].text);
        free(s->players[i].agents);
        free(s->players[i].played);
    }
    for (int32_t i = 0; i < s->n_pops; i++) {
        free(s->pops[i].members);
        free(s->pops[i].text);
        free(s->pops[i].name);
    }
    free(s->players);
    free(s->pops);
    free(s->seats);
    free(s->file);
    free(s);
}
