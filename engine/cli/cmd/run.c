/*
 * engine/cli/cmd/run.c — `polis run SCENARIO`: episodes played by a built-in policy, and what
 * happened in each (steps, returns, illegal actions, events, the final state hash, speed).
 * `polis record` (record.c) plays them the same way into a recording and/or a video.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cmd/commands.h"
#include "session/frames.h"
#include "session/play.h"
#include "session/record.h"

static const cli_use USES[] = {
    CLI_RUN_OPTIONS,
    {.id = CLI_OPT_RECORD},
    {.id = CLI_OPT_KEYFRAME_EVERY, .needs = CLI_BIT(CLI_OPT_RECORD)},
};

const cli_command CLI_CMD_RUN = {
    .name = "run",
    CLI_SCENARIO_AND(USES),
    .summary = "play episodes with a built-in policy and print what happened",
    .about =
        "Plays episodes of SCENARIO and prints, per episode: steps, the return of each agent\n"
        "(sum of its rewards), its count of illegal actions, the count of each event type, the\n"
        "final state hash and the env's speed in steps per second.\n",
    .run = cli_run_episodes,
};

/* ---- one episode's figures ----------------------------------------------------------------- */

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
    const char *task = polis_env_task(env); /* what the episode drew (the scenario's "vary") */
    if (task) printf("  task %s\n", task);
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
static bool print_episode_json(polis_env *env, const char *policy, int64_t episode, uint64_t seed,
                               const episode_stats *st, uint64_t hash)
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
    const char *task = polis_env_task(env); /* the task the episode drew ("vary") */
    cJSON *tj = ok && task ? cJSON_Parse(task) : NULL;
    if (tj && !cJSON_AddItemToObject(o, "task", tj)) cJSON_Delete(tj);
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

/* `polis record --video`: where the frames went. */
static void print_video(bool json, const char *video, const cli_frames *fr)
{
    FILE *o = json ? stderr : stdout;
    if (fr->fallback)
        fprintf(o,
                "%s: ffmpeg not found on PATH: %" PRId64 " frames written as %s files into "
                "%s/ (%d x %d pixels)\n",
                video, fr->v.frames, fr->v.ppm ? "PPM" : "PNG", fr->v.dir, (int)fr->w, (int)fr->h);
    else if (fr->v.dir[0])
        fprintf(o, "%s: %" PRId64 " frames written as %s files, %d x %d pixels\n", video,
                fr->v.frames, fr->v.ppm ? "PPM" : "PNG", (int)fr->w, (int)fr->h);
    else
        fprintf(o, "%s: %" PRId64 " frames, %d x %d pixels\n", video, fr->v.frames, (int)fr->w,
                (int)fr->h);
}

/* The recorder of --record (run) or --out (record) FILE; NULL after printing why. */
static polis_recorder *open_recording(const cli_args *a, polis_env *env, const char *scenario,
                                      const char *file, uint64_t seed0, const char *policy)
{
    bool oom = false;
    char *ov = cli_overrides_text(&a->overrides, &oom);
    char *pol_text = cli_record_policies(env, policy);
    polis_recorder *rec = NULL;
    if (!oom && pol_text)
        rec = cli_record_open(file, env, scenario, ov, seed0, cli_num(a, CLI_OPT_KEYFRAME_EVERY),
                              pol_text, a->name);
    else
        fprintf(stderr, "polis: out of memory\n");
    cJSON_free(ov);
    cJSON_free(pol_text);
    return rec;
}

/* ---- the episodes -------------------------------------------------------------------------- */

int cli_run_episodes(cli_args *a)
{
    bool record_cmd = a->cmd == &CLI_CMD_RECORD;
    const char *rec_opt = record_cmd ? "--out" : "--record";
    const char *record = cli_text(a, record_cmd ? CLI_OPT_OUT : CLI_OPT_RECORD);
    const char *video = cli_text(a, CLI_OPT_VIDEO);
    bool json = cli_has(a, CLI_OPT_JSON), quiet = cli_has(a, CLI_OPT_QUIET);
    int64_t steps_limit = cli_num(a, CLI_OPT_STEPS), episodes = cli_num(a, CLI_OPT_EPISODES);
    const char *scenario;
    polis_env *env = cli_env_of(a, !quiet && !json, &scenario);
    if (!env) return EXIT_ENV;
    /* record --video: a frame after each reset and each step */
    cli_frames fr;
    memset(&fr, 0, sizeof fr);
    char ferr[1024] = "";
    fr.agent = -1;
    fr.cell = (int32_t)cli_num(a, CLI_OPT_CELL);
    fr.fps = (int32_t)cli_num(a, CLI_OPT_FPS);
    fr.flags = cli_has(a, CLI_OPT_GLYPHS) ? POLIS_PIXELS_GLYPHS : 0;
    fr.video = video;

    polis_recorder *rec = NULL;
    int32_t n_agents = polis_env_n_agents(env);
    episode_stats st;
    memset(&st, 0, sizeof st);
    st.n_events = polis_env_n_event_types(env);
    st.returns = calloc((size_t)n_agents + 1, sizeof *st.returns);
    st.illegal = calloc((size_t)n_agents + 1, sizeof *st.illegal);
    st.events = calloc((size_t)st.n_events + 1, sizeof *st.events);
    int rc = 0;
    cli_play_policy policy;
    if (!st.returns || !st.illegal || !st.events) {
        fprintf(stderr, "polis: out of memory\n");
        rc = EXIT_ENV;
        goto out;
    }
    if (polis_env_subscribe(env, -1, count_event, &st) != POLIS_OK) {
        rc = cli_env_failure(env);
        env = NULL;
        goto out;
    }

    const polis_io *io = polis_env_io(env);
    if ((rc = cli_play_policy_init(&policy, env, a->name, cli_text(a, CLI_OPT_POLICY))) != 0)
        goto out;
    if (video && cli_has(a, CLI_OPT_AGENT) &&
        (rc = cli_resolve_agent(env, a->name, cli_text(a, CLI_OPT_AGENT), &fr.agent)) != 0)
        goto out;
    uint64_t seed0 =
        cli_has(a, CLI_OPT_SEED) ? a->v[CLI_OPT_SEED].u64 : polis_env_default_seed(env);
    if (record && !(rec = open_recording(a, env, scenario, record, seed0, policy.name))) {
        rc = EXIT_ENV;
        goto out;
    }
    int64_t total_steps = 0;
    double total_seconds = 0;
    for (int64_t ep = 1; ep <= episodes; ep++) {
        uint64_t seed = seed0 + (uint64_t)(ep - 1);
        memset(st.returns, 0, (size_t)n_agents * sizeof *st.returns);
        memset(st.illegal, 0, (size_t)n_agents * sizeof *st.illegal);
        memset(st.events, 0, (size_t)st.n_events * sizeof *st.events);
        st.steps = 0;
        st.seconds = 0;
        cli_play_policy_seed(&policy, seed);
        if (polis_env_reset(env, seed) != POLIS_OK) {
            rc = cli_env_failure(env);
            env = NULL;
            goto out;
        }
        if (rec && polis_recorder_begin_episode(rec, seed) != POLIS_OK) goto rec_failed;
        if (video && cli_frames_add(&fr, env, ferr, sizeof ferr)) goto frames_failed;
        while (!polis_env_done(env) && (steps_limit == 0 || st.steps < steps_limit)) {
            if (cli_play_policy_act(&policy, env) != POLIS_OK) {
                rc = cli_env_failure(env);
                env = NULL;
                goto out;
            }
            double t0 = cli_now();
            polis_status s = polis_env_step(env);
            st.seconds += cli_now() - t0;
            if (s != POLIS_OK) {
                rc = cli_env_failure(env);
                env = NULL;
                goto out;
            }
            st.steps++;
            for (int32_t ag = 0; ag < n_agents; ag++) {
                st.returns[ag] += io->rewards[ag];
                st.illegal[ag] += io->illegal[ag] != 0;
            }
            if (rec && polis_recorder_step(rec) != POLIS_OK) goto rec_failed;
            if (video && cli_frames_add(&fr, env, ferr, sizeof ferr)) goto frames_failed;
        }
        if (rec && polis_recorder_end_episode(rec, NULL) != POLIS_OK) goto rec_failed;
        st.done = polis_env_done(env);
        uint64_t hash = polis_env_state_hash(env);
        total_steps += st.steps;
        total_seconds += st.seconds;
        if (json) {
            if (!print_episode_json(env, policy.name, ep, seed, &st, hash)) {
                fprintf(stderr, "polis: out of memory\n");
                rc = EXIT_ENV;
                goto out;
            }
        } else if (!quiet) {
            print_episode_text(env, ep, seed, &st, hash);
        }
    }
    if (!json)
        printf("%s: %" PRId64 " episode%s, policy %s, %" PRId64 " steps, %.0f steps/s\n",
               polis_env_name(env), episodes, episodes == 1 ? "" : "s", policy.name, total_steps,
               steps_per_second(total_steps, total_seconds));
    if (video) {
        if (cli_frames_finish(&fr, ferr, sizeof ferr)) goto frames_failed;
        print_video(json, video, &fr);
    }
    fflush(stdout);
    goto out;

rec_failed:
    fprintf(stderr, "polis: %s %s: %s\n", rec_opt, record, polis_recorder_error(rec));
    rc = EXIT_ENV;
    goto out;
frames_failed:
    fprintf(stderr, "polis: --video %s: %s\n", video, ferr);
    rc = EXIT_ENV;
out:
    cli_frames_finish(&fr, ferr, sizeof ferr);
    if (rec && rc == 0 && polis_recorder_flush(rec) != POLIS_OK) {
        fprintf(stderr, "polis: %s %s: %s\n", rec_opt, record, polis_recorder_error(rec));
        rc = EXIT_ENV;
    }
    if (rec && polis_recorder_close(rec) != POLIS_OK && rc == 0) {
        fprintf(stderr, "polis: %s %s: writing the recording failed\n", rec_opt, record);
        rc = EXIT_ENV;
    }
    free(st.returns);
    free(st.illegal);
    free(st.events);
    if (env) polis_env_destroy(env);
    return rc;
}
