/*
 * polis/record.h — recordings (docs/recording.md): every episode of any game written as a
 * polis recording. Built only on the public API: link libpolis-record (pkg-config
 * polis-record, CMake polis::record) beside libpolis; it needs zlib, libpolis does not.
 */
#ifndef POLIS_RECORD_H
#define POLIS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "polis/env.h"

POLIS_API_BEGIN

/*
 * A recorder writes the episodes of one env as a polis recording: a header (scenario, its
 * hash, seed, plugins, agents, actions and their docs, the looks), then per episode a reset
 * line, a keyframe at tick 0, one step line per tick (actions, rewards, flags, every bus
 * event, what changed in the scene, messages) with a keyframe every keyframe_every ticks,
 * and an end line (returns, metrics, state hash). Nothing in it is game-specific.
 *
 * Use: open it after polis_env_create and before the first polis_env_reset (it subscribes
 * to every event); after each polis_env_reset call polis_recorder_begin_episode, after each
 * polis_env_step polis_recorder_step, when the episode is over polis_recorder_end_episode;
 * polis_recorder_close at the end (it flushes; the env may be destroyed after). Failures
 * return a status with the reason in polis_recorder_error. The recorder allocates while it
 * builds lines (amortised: its buffers only grow); the env's step allocates nothing more.
 */
#define POLIS_RECORDING_VERSION 1
typedef struct polis_recorder polis_recorder;
typedef struct polis_record_info {
    const char *scenario_text; /* the scenario JSON as read (required): header and hash */
    size_t scenario_len;
    const char *scenario_path; /* the file it came from, or NULL */
    const char *base_dir;      /* where its relative paths resolve (replay uses it), or NULL */
    const char *overrides;     /* polis_options.overrides text, or NULL */
    uint64_t seed;             /* the first episode's seed */
    int32_t keyframe_every;    /* 0: 100 */
    const char *policies;      /* a JSON array of per-agent policy names, or NULL */
    const char *source;        /* "run", "eval", "serve", "python"; NULL: "api" */
} polis_record_info;

/* Creates FILE (gzip-compressed when the name ends in ".gz") and writes the header.
 * POLIS_ERR_IO when the file cannot be created, POLIS_ERR_INVALID for bad info, with err
 * (if not NULL) saying why. */
polis_status polis_recorder_open(const char *path, polis_env *env, const polis_record_info *info,
                                 polis_recorder **out, polis_error *err);
/* The same, handing every line (with its '\n') to sink instead of a file. */
polis_status polis_recorder_open_sink(void (*sink)(void *ud, const char *line, size_t len),
                                      void *ud, polis_env *env, const polis_record_info *info,
                                      polis_recorder **out, polis_error *err);
polis_status polis_recorder_begin_episode(polis_recorder *rec, uint64_t seed);
polis_status polis_recorder_step(polis_recorder *rec);
/* A message of a protocol client ("text", "plan", "action") written into the next step
 * line's "msgs". */
polis_status polis_recorder_msg(polis_recorder *rec, int32_t agent, const char *kind,
                                const char *text);
/* metrics_json: a JSON object text (what `polis eval` prints for the episode) or NULL. */
polis_status polis_recorder_end_episode(polis_recorder *rec, const char *metrics_json);
/* Waits until every line so far is written (handed to the file: a plain file's buffer flushed;
 * a .gz file's deflate keeps what its next block needs until close) and reports what failed
 * on the way, with the reason in polis_recorder_error: a write (POLIS_ERR_IO, "recorder:
 * cannot write the recording") or a scene the writer thread could not draw from its copy
 * (the plugin's status; docs/recording.md, "Scenes on the writer thread"). Failures are
 * reported by a later step, end or close call anyway; this one says which line they stopped
 * at before the close frees the recorder. POLIS_ERR_INVALID for NULL. */
polis_status polis_recorder_flush(polis_recorder *rec);
/* Flushes and closes; POLIS_ERR_IO if any write failed (the status of a scene the writer thread
 * could not draw, when that failed first). NULL is a no-op. */
polis_status polis_recorder_close(polis_recorder *rec);
const char *polis_recorder_error(const polis_recorder *rec);
/* How many allocations the recorder made so far (its line buffers only grow, scenes are
 * copied into buffers it keeps): once the first lines of an episode are written, recording a
 * tick allocates nothing, which a caller can check by comparing this count. 0 for NULL. */
int64_t polis_recorder_allocs(const polis_recorder *rec);

POLIS_API_END
#endif
