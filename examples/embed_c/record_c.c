/*
 * examples/embed_c/record_c.c — a host that records: play one episode with the kernel's
 * "random" policy, write it as a polis recording (libpolis-record), then draw its last
 * moment as an RGB frame (libpolis-pixels) into a PPM file.
 *
 *   record_c SCENARIO RECORDING.jsonl[.gz] FRAME.ppm
 *
 * `polis replay --verify RECORDING` re-simulates the recording; `polis view RECORDING`
 * shows it in the browser. Recording and pixels are libraries of their own beside libpolis,
 * built only on the public headers: link polis::record and polis::pixels (CMake) or
 * `pkg-config polis-record polis-pixels`.
 */
#include <stdio.h>
#include <stdlib.h>

#include <polis/env.h>
#include <polis/pixels.h>
#include <polis/policy.h>
#include <polis/record.h>
#include <polis/scene.h>

/* The scenario's text: the recording's header keeps it, so the file replays anywhere. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            *len = fread(buf, 1, (size_t)n, f);
            buf[*len] = '\0';
        }
    }
    fclose(f);
    return buf;
}

static int write_ppm(const char *path, const uint8_t *rgb, int32_t w, int32_t h)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fprintf(f, "P6\n%d %d\n255\n", (int)w, (int)h);
    size_t n = (size_t)w * (size_t)h * 3;
    int bad = fwrite(rgb, 1, n, f) != n;
    return fclose(f) != 0 || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s SCENARIO RECORDING.jsonl[.gz] FRAME.ppm\n", argv[0]);
        return 2;
    }
    size_t len = 0;
    char *text = read_file(argv[1], &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
        return 1;
    }
    polis_env *env = NULL;
    polis_recorder *rec = NULL;
    uint8_t *frame = NULL;
    polis_error err;
    int rc = 1;
    if (polis_env_create_file(argv[1], NULL, &env, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        goto out;
    }
    uint64_t seed = polis_env_default_seed(env);
    polis_record_info info = {.scenario_text = text,
                              .scenario_len = len,
                              .scenario_path = argv[1],
                              .seed = seed,
                              .source = "api"};
    if (polis_recorder_open(argv[2], env, &info, &rec, &err) != POLIS_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        goto out;
    }
    int32_t random = polis_env_policy_find(env, "random");
    long steps = 0;
    if (polis_env_reset(env, seed) != POLIS_OK) goto env_fail;
    if (polis_recorder_begin_episode(rec, seed) != POLIS_OK) goto rec_fail;
    while (!polis_env_done(env)) {
        if (polis_env_policy_act(env, random, NULL, 0) != POLIS_OK) goto env_fail;
        if (polis_env_step(env) != POLIS_OK) goto env_fail;
        if (polis_recorder_step(rec) != POLIS_OK) goto rec_fail;
        steps++;
    }
    if (polis_recorder_end_episode(rec, NULL) != POLIS_OK) goto rec_fail;
    polis_status st = polis_recorder_close(rec);
    rec = NULL;
    if (st != POLIS_OK) {
        fprintf(stderr, "%s: %s: cannot write the recording\n", argv[0], argv[2]);
        goto out;
    }
    printf("recorded %ld steps of %s to %s\n", steps, polis_env_name(env), argv[2]);

    if (polis_env_scene_width(env) == 0) {
        printf("no frame: %s registers no scene map\n", polis_env_name(env));
        rc = 0;
        goto out;
    }
    int32_t w = 0, h = 0;
    if (polis_pixels_size(env, -1, 8, &w, &h) != POLIS_OK) goto env_fail;
    size_t cap = (size_t)w * (size_t)h * 3;
    if (!(frame = malloc(cap))) goto out;
    if (polis_pixels_draw(env, -1, 8, frame, cap, &w, &h) != POLIS_OK) goto env_fail;
    if (write_ppm(argv[3], frame, w, h) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[3]);
        goto out;
    }
    printf("frame %dx%d to %s\n", (int)w, (int)h, argv[3]);
    rc = 0;
    goto out;

env_fail:
    fprintf(stderr, "%s: %s\n", argv[0], polis_env_error(env));
    goto out;
rec_fail:
    fprintf(stderr, "%s: %s\n", argv[0], polis_recorder_error(rec));
out:
    polis_recorder_close(rec);
    free(frame);
    polis_env_destroy(env);
    free(text);
    return rc;
}
