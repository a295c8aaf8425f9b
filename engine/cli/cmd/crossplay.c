/*
 * engine/cli/cmd/crossplay.c — held-out evaluation, `polis eval SCENARIO --focal WHO
 * --background WHO [--focal-seats AGENTS]`: the focal seats are played by a focal player, every
 * other seat by a background population, and the score is Melting Pot's: the focal per-capita
 * return (the mean over the focal seats of their episode returns), beside the background's.
 *
 * Several --focal and --background values make a cross-play matrix: every focal player
 * against every background, each cell over the same seeds (so the cells differ by the
 * players alone). The seats are session/seats.c's: policies of the scenario, policy
 * processes (py:, cmd:) and population files, drawn per seat at every episode from the
 * episode's seed.
 */
#define _GNU_SOURCE /* strdup */
#include "cmd/crossplay.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "polis/polis.h"
#include "session/episode.h"
#include "session/play.h"
#include "session/proto.h"
#include "session/seats.h"

const char *cli_player_text(const char *value, char *buf, size_t cap)
{
    size_t n = strlen(value);
    struct stat st;
    if (n > 5 && strcmp(value + n - 5, ".json") == 0 && stat(value, &st) == 0 &&
        S_ISREG(st.st_mode)) {
        snprintf(buf, cap, "pop:%s", value);
        return buf;
    }
    snprintf(buf, cap, "%s", value);
    return buf;
}

/* The focal seats of "0-1,miner_3" into focal[n]. Returns 0, or EXIT_USAGE after saying why. */
static int parse_focal_seats(polis_env *env, const char *list, bool *focal)
{
    int32_t n = polis_env_n_agents(env);
    char names[512];
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char item[256];
        if (len == 0 || len >= sizeof item)
            return cli_usage("eval", "--focal-seats %s: an empty or overlong item", list);
        memcpy(item, p, len);
        item[len] = '\0';
        int64_t lo, hi;
        char *dash = strchr(item, '-');
        int32_t id = cli_agent_find(env, item);
        if (id >= 0) {
            focal[id] = true;
        } else if (dash && dash != item && (*dash = '\0', cli_parse_int(item, 0, n - 1, &lo)) &&
                   cli_parse_int(dash + 1, 0, n - 1, &hi) && lo <= hi) {
            for (int64_t k = lo; k <= hi; k++) focal[k] = true;
        } else if (!dash && cli_parse_int(item, 0, n - 1, &lo)) {
            focal[lo] = true;
        } else {
            if (dash) *dash = '-';
            cli_agent_names(env, names, sizeof names);
            return cli_usage("eval",
                             "--focal-seats: '%s' is not an agent (agents: %s; ids 0..%d; "
                             "ranges such as 0-1)",
                             item, names, n - 1);
        }
        p += len + (c != NULL);
    }
    return 0;
}

bool cli_check_seat(const char *s, char *why, size_t cap)
{
    const char *eq = strchr(s, '=');
    if (eq && eq != s && eq[1]) return true;
    snprintf(why, cap, "'%s' is not AGENT=WHO (a policy, py:SPEC, cmd:PROGRAM or pop:FILE)", s);
    return false;
}

int cli_policy_timeout_ms(const cli_args *a)
{
    return (int)(cli_has(a, CLI_OPT_POLICY_TIMEOUT) ? cli_num(a, CLI_OPT_POLICY_TIMEOUT) : 600) *
           1000;
}

/* One cell: its players, per-episode figures and metrics. */
typedef struct cell {
    const char *focal, *background;   /* as given */
    double *focal_pc, *background_pc; /* [episodes] */
    char **players;                   /* [episodes][n agents]: who played each seat */
    cli_table metrics;
} cell;

static cJSON *stat_json(const double *v, int64_t n)
{
    cli_stat s = cli_stat_of(v, n, 1);
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (s.n) {
        cJSON_AddNumberToObject(o, "mean", s.mean);
        cJSON_AddNumberToObject(o, "sd", s.sd);
        cJSON_AddNumberToObject(o, "ci95", s.ci95);
    } else {
        cJSON_AddNullToObject(o, "mean");
        cJSON_AddNullToObject(o, "sd");
        cJSON_AddNullToObject(o, "ci95");
    }
    cJSON_AddNumberToObject(o, "n", (double)s.n);
    return o;
}

static char *json_doc(polis_env *env, const char *file, const cell *cells, int nf, int nb,
                      int64_t episodes, uint64_t seed0, const bool *focal)
{
    int32_t n = polis_env_n_agents(env);
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "scenario", polis_env_name(env));
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddNumberToObject(o, "episodes", (double)episodes);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, seed0);
    cJSON_AddRawToObject(o, "seed", buf);
    cJSON *fs = cJSON_AddArrayToObject(o, "focal_seats");
    for (int32_t a = 0; fs && a < polis_env_n_agents(env); a++)
        if (focal[a]) cJSON_AddItemToArray(fs, cJSON_CreateString(polis_env_agent_name(env, a)));
    cJSON *fl = cJSON_AddArrayToObject(o, "focal");
    for (int i = 0; fl && i < nf; i++)
        cJSON_AddItemToArray(fl, cJSON_CreateString(cells[i * nb].focal));
    cJSON *bl = cJSON_AddArrayToObject(o, "background");
    for (int j = 0; bl && j < nb; j++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(cells[j].background));
    cJSON *arr = cJSON_AddArrayToObject(o, "cells");
    for (int k = 0; arr && k < nf * nb; k++) {
        const cell *c = &cells[k];
        cJSON *co = cJSON_CreateObject();
        if (!co) break;
        cJSON_AddItemToArray(arr, co);
        cJSON_AddStringToObject(co, "focal", c->focal);
        cJSON_AddStringToObject(co, "background", c->background);
        cJSON_AddItemToObject(co, "focal_per_capita", stat_json(c->focal_pc, episodes));
        cJSON_AddItemToObject(co, "background_per_capita", stat_json(c->background_pc, episodes));
        cJSON *pe = cJSON_AddArrayToObject(co, "per_episode");
        for (int64_t e = 0; pe && e < episodes; e++) {
            cJSON *eo = cJSON_CreateObject();
            if (!eo) break;
            cJSON_AddItemToArray(pe, eo);
            char b[32];
            snprintf(b, sizeof b, "%" PRIu64, seed0 + (uint64_t)e);
            cJSON_AddRawToObject(eo, "seed", b);
            cJSON_AddNumberToObject(eo, "focal_per_capita", c->focal_pc[e]);
            if (isfinite(c->background_pc[e]))
                cJSON_AddNumberToObject(eo, "background_per_capita", c->background_pc[e]);
            else
                cJSON_AddNullToObject(eo, "background_per_capita");
            cJSON *pl = cJSON_AddArrayToObject(eo, "players");
            for (int32_t a = 0; pl && a < n; a++)
                cJSON_AddItemToArray(
                    pl, cJSON_CreateString(c->players[e * n + a] ? c->players[e * n + a] : ""));
        }
        cJSON *m = cJSON_AddObjectToObject(co, "metrics");
        for (int32_t i = 0; m && i < c->metrics.n_keys; i++) {
            cli_stat s = cli_table_stat(&c->metrics, i);
            cJSON *mo = cJSON_CreateObject();
            if (!mo) break;
            cJSON_AddItemToObject(m, c->metrics.keys[i], mo);
            if (s.n) {
                cJSON_AddNumberToObject(mo, "mean", s.mean);
                cJSON_AddNumberToObject(mo, "sd", s.sd);
            } else {
                cJSON_AddNullToObject(mo, "mean");
                cJSON_AddNullToObject(mo, "sd");
            }
            cJSON_AddNumberToObject(mo, "n", (double)s.n);
        }
    }
    char *t = cJSON_Print(o);
    cJSON_Delete(o);
    return t;
}

/* A player's text for a narrow column: a path's last component ("free_bots.json",
 * "py:policy.pt"). */
static const char *short_label(const char *text, char *buf, size_t cap)
{
    const char *slash = strrchr(text, '/');
    const char *colon = strchr(text, ':');
    if (!slash) return text;
    if (colon && colon < slash && colon - text < 8)
        snprintf(buf, cap, "%.*s%s", (int)(colon - text + 1), text, slash + 1);
    else
        snprintf(buf, cap, "%s", slash + 1);
    return buf;
}

static void print_cell_line(const char *label, const double *v, int64_t n)
{
    cli_stat s = cli_stat_of(v, n, 1);
    if (s.n)
        printf("  %-30s %12.6g  ± %-10.4g (95%% CI; sd %.4g, %" PRId64 " episodes)\n", label,
               s.mean, s.ci95, s.sd, s.n);
    else
        printf("  %-30s %12s\n", label, "undefined");
}

int cli_crossplay_main(cli_args *args)
{
    const char *scenario = cli_scenario(args->name, args->pos[0]);
    if (!scenario) return EXIT_ENV;
    int64_t episodes = cli_num(args, CLI_OPT_EPISODES), steps = cli_num(args, CLI_OPT_STEPS);
    int timeout_ms = cli_policy_timeout_ms(args);
    const char *json = cli_text(args, CLI_OPT_JSON_FILE);
    bool to_stdout = json && strcmp(json, "-") == 0;
    bool oom = false;
    char *overrides =
        cli_eval_overrides(scenario, args->overrides.obj, !cli_has(args, CLI_OPT_NO_METRICS), &oom);
    if (oom) {
        fprintf(stderr, "polis: out of memory\n");
        return EXIT_ENV;
    }
    polis_env *env = cli_env_open(scenario, cli_text(args, CLI_OPT_PLUGIN_PATH), overrides, false);
    cJSON_free(overrides);
    if (!env) return EXIT_ENV;
    int32_t n = polis_env_n_agents(env);
    bool *focal = calloc((size_t)n + 1, sizeof *focal);
    double *returns = calloc((size_t)n + 1, sizeof *returns);
    const char *def = cli_text(args, CLI_OPT_POLICY);
    const char *const *fl = args->v[CLI_OPT_FOCAL].list;
    const char *const *bl = args->v[CLI_OPT_BACKGROUND].list;
    int nf = args->v[CLI_OPT_FOCAL].n ? args->v[CLI_OPT_FOCAL].n : 1;
    int nb = args->v[CLI_OPT_BACKGROUND].n ? args->v[CLI_OPT_BACKGROUND].n : 1;
    const char *f1 = cli_text(args, CLI_OPT_FOCAL), *b1 = cli_text(args, CLI_OPT_BACKGROUND);
    cell *cells = calloc((size_t)(nf * nb), sizeof *cells);
    int rc = 0;
    if (!focal || !returns || !cells) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    const char *seats_text = cli_text(args, CLI_OPT_FOCAL_SEATS);
    if ((rc = parse_focal_seats(env, seats_text ? seats_text : "0", focal))) goto out;
    bool has_metrics = cli_has_metrics(env);
    uint64_t seed0 =
        cli_has(args, CLI_OPT_SEED) ? args->v[CLI_OPT_SEED].u64 : polis_env_default_seed(env);
    int32_t n_focal = 0;
    for (int32_t a = 0; a < n; a++) n_focal += focal[a];
    for (int i = 0; i < nf && !rc; i++) {
        for (int j = 0; j < nb && !rc; j++) {
            cell *c = &cells[i * nb + j];
            c->focal = args->v[CLI_OPT_FOCAL].n ? (fl ? fl[i] : f1) : def;
            c->background = args->v[CLI_OPT_BACKGROUND].n ? (bl ? bl[j] : b1) : def;
            c->metrics.episodes = episodes;
            c->focal_pc = calloc((size_t)episodes, sizeof(double));
            c->background_pc = calloc((size_t)episodes, sizeof(double));
            c->players = calloc((size_t)episodes * (size_t)n, sizeof *c->players);
            if (!c->focal_pc || !c->background_pc || !c->players) {
                fprintf(stderr, "polis: out of memory\n");
                rc = EXIT_ENV;
                break;
            }
            char ftext[4200], btext[4200], where[4300], err[2048];
            cli_player_text(c->focal, ftext, sizeof ftext);
            cli_player_text(c->background, btext, sizeof btext);
            snprintf(where, sizeof where, "--background %s", c->background);
            cli_seats *seats =
                cli_seats_new(env, scenario, btext, where, timeout_ms, err, sizeof err);
            if (seats) {
                snprintf(where, sizeof where, "--focal %s", c->focal);
                for (int32_t a = 0; a < n && seats; a++)
                    if (focal[a] && !cli_seats_assign(seats, a, ftext, where, err, sizeof err)) {
                        cli_seats_free(seats);
                        seats = NULL;
                    }
            }
            if (!seats) {
                fprintf(stderr, "polis: eval: %s\n", err);
                rc = EXIT_ENV;
                break;
            }
            cli_actor actor = cli_seats_actor(seats);
            if (has_metrics) {
                cli_table_key(&c->metrics, "total_reward_normalised");
                cli_table_key(&c->metrics, "mean_reward_normalised");
            }
            for (int64_t ep = 0; ep < episodes; ep++) {
                cli_episode e;
                bool played =
                    cli_play_episode_by(env, &actor, seed0 + (uint64_t)ep, steps, has_metrics,
                                        false, returns, NULL, &e, err, sizeof err);
                if (!played) {
                    fprintf(stderr,
                            "polis: eval: focal %s, background %s, episode %" PRId64
                            " (seed %" PRIu64 "): %s\n",
                            c->focal, c->background, ep + 1, seed0 + (uint64_t)ep, err);
                    rc = EXIT_ENV;
                    break;
                }
                double fs = 0, bs = 0;
                for (int32_t a = 0; a < n; a++) {
                    c->players[ep * n + a] = strdup(cli_seats_player(seats, a));
                    if (focal[a])
                        fs += returns[a];
                    else
                        bs += returns[a];
                }
                c->focal_pc[ep] = fs / n_focal;
                c->background_pc[ep] = n - n_focal ? bs / (n - n_focal) : NAN;
                cli_table_add(&c->metrics, ep, e.metrics);
                cli_episode_free(&e);
            }
            cli_seats_free(seats);
            if (!rc && c->metrics.oom) {
                fprintf(stderr, "polis: out of memory\n");
                rc = EXIT_ENV;
            }
        }
    }
    if (rc) goto out;
    if (!to_stdout) {
        char names[512] = "";
        size_t len = 0;
        for (int32_t a = 0; a < n && len < sizeof names; a++)
            if (focal[a])
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                        polis_env_agent_name(env, a));
        printf("%s: %" PRId64 " episode%s per cell, seeds %" PRIu64 "..%" PRIu64
               ", focal seats %s (%d of %d)\n",
               polis_env_name(env), episodes, episodes == 1 ? "" : "s", seed0,
               seed0 + (uint64_t)(episodes - 1), names, n_focal, n);
        if (nf * nb == 1) {
            printf("focal %s against background %s\n", cells[0].focal, cells[0].background);
            print_cell_line("focal per-capita return", cells[0].focal_pc, episodes);
            print_cell_line("background per-capita return", cells[0].background_pc, episodes);
            for (int32_t k = 0; k < cells[0].metrics.n_keys; k++) {
                cli_stat s = cli_table_stat(&cells[0].metrics, k);
                if (s.n)
                    printf("  %-30s %12.6g  (sd %.4g, %" PRId64 " episodes)\n",
                           cells[0].metrics.keys[k], s.mean, s.sd, s.n);
            }
        } else {
            printf("focal per-capita return (background per-capita) — rows: focal, columns: "
                   "background\n");
            char lab[256];
            printf("  %-28s", "");
            for (int j = 0; j < nb; j++)
                printf(" %26.26s", short_label(cells[j].background, lab, sizeof lab));
            printf("\n");
            for (int i = 0; i < nf; i++) {
                printf("  %-28.28s", short_label(cells[i * nb].focal, lab, sizeof lab));
                for (int j = 0; j < nb; j++) {
                    cli_stat f = cli_stat_of(cells[i * nb + j].focal_pc, episodes, 1);
                    cli_stat b = cli_stat_of(cells[i * nb + j].background_pc, episodes, 1);
                    char txt[64];
                    if (b.n)
                        snprintf(txt, sizeof txt, "%.4g (%.4g)", f.mean, b.mean);
                    else
                        snprintf(txt, sizeof txt, "%.4g (-)", f.mean);
                    printf(" %26s", txt);
                }
                printf("\n");
            }
        }
        fflush(stdout);
    }
    if (json) {
        char *doc = json_doc(env, scenario, cells, nf, nb, episodes, seed0, focal);
        FILE *f = !doc ? NULL : to_stdout ? stdout : fopen(json, "w");
        bool written = f && fputs(doc, f) >= 0 && fputc('\n', f) != EOF;
        if (f && !to_stdout && fclose(f) != 0) written = false;
        if (!written) {
            fprintf(stderr, "polis: cannot write %s: %s\n", json,
                    doc ? strerror(errno) : "out of memory");
            rc = EXIT_ENV;
        }
        cJSON_free(doc);
    }
out:
    for (int k = 0; cells && k < nf * nb; k++) {
        free(cells[k].focal_pc);
        free(cells[k].background_pc);
        for (int64_t e = 0; cells[k].players && e < episodes * n; e++) free(cells[k].players[e]);
        free(cells[k].players);
        cli_table_free(&cells[k].metrics);
    }
    free(cells);
    free(focal);
    free(returns);
    polis_env_destroy(env);
    return rc;
}
