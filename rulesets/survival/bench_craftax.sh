#!/bin/sh
# rulesets/survival/bench_craftax.sh CRAFTAX_DIR [ENVS] [ROUNDS] [STEPS] — survival against the
# single-agent Craftax-Classic port craftax.cu (github.com/Infatoshi/craftax.cu, commit 214f25c,
# checked out in CRAFTAX_DIR), side by side on one thread: ROUNDS rounds (default 5), each
# polis then the port, so both see the same machine. Each prints env steps per CPU-second of
# its stepping loop: polis its bench's figure (one player, observations and masks on, a random
# legal action, auto-resets); the port a driver written here that steps ENVS envs (default 1)
# in turn with a random action, its 1345-float observation after every step and a reset on
# done. Built in a temporary directory with the port's own flags. Each side runs STEPS env
# steps a round (default 1,000,000, about a second each; more steps make a round less
# sensitive to other processes). The last line is the median of the rounds' ratios polis /
# craftax.cu and their range. Run from the repository root after building build-bench/
# (Release).
set -eu
usage='usage: bench_craftax.sh CRAFTAX_DIR [ENVS] [ROUNDS] [STEPS]'
cx=${1:?$usage}; envs=${2:-1}; rounds=${3:-5}; steps=${4:-1000000}
case "$envs$rounds$steps" in *[!0-9]*) echo "$usage (ENVS, ROUNDS, STEPS: counts)" >&2; exit 2 ;; esac
if [ "$envs" -lt 1 ] || [ "$rounds" -lt 1 ] || [ "$steps" -lt "$envs" ]; then
    echo "bench_craftax.sh: ENVS and ROUNDS must be at least 1 and STEPS at least ENVS" >&2
    exit 2
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/drv.c" <<'C'
#include "craftax_classic.c"
int main(int argc, char **argv)
{
    int ne = atoi(argv[1]);
    long iters = atol(argv[2]) / ne;
    EnvState *st = aligned_alloc(64, sizeof(EnvState) * (size_t)ne);
    float *ob = aligned_alloc(64, sizeof(float) * OBS_DIM * (size_t)ne);
    pcg32_t r;
    pcg32_seed(&r, 7, 3);
    uint64_t seed = 1;
    for (int i = 0; i < ne; i++) craftax_reset(&st[i], seed++, (uint64_t)i);
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long k = 0; k < iters; k++)
        for (int i = 0; i < ne; i++) {
            float rw;
            int d;
            craftax_step(&st[i], (int)pcg32_range(&r, NUM_ACTIONS), &rw, &d);
            if (d) craftax_reset(&st[i], seed++, (uint64_t)i);
            craftax_build_obs(&st[i], ob + (size_t)i * OBS_DIM);
        }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double cpu = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("craftax.cu %d envs: %.0f env steps/CPU-s (%llu resets)\n", ne, (double)(iters * ne) / cpu,
           (unsigned long long)seed - (uint64_t)ne - 1);
    return ob[0] == 12345.0f;
}
C
gcc -O3 -march=native -mtune=native -ffast-math -fno-math-errno -funroll-loops -fopenmp \
    -I"$cx" "$tmp/drv.c" -o "$tmp/drv" -lpthread -lm
S=rulesets/survival/survival_classic.json
for k in $(seq "$rounds"); do
    p=$(build-bench/polis bench $S --envs "$envs" --steps $((steps / envs)) --repeat 1 --warmup 0 |
        awk '/^env steps\/CPU-s/ {print $3}')
    echo "polis $envs envs: $p env steps/CPU-s"
    c=$("$tmp/drv" "$envs" "$steps")
    echo "$c"
    echo "$p ${c#*: }" | awk '{printf "%.4f\n", $1 / $2}' >>"$tmp/ratios"
done
sort -n "$tmp/ratios" | awk -v n="$envs" '{r[NR] = $1} END {
    m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "polis / craftax.cu, %d envs, %d rounds: median %.2f (%.2f-%.2f)\n", n, NR, m, r[1], r[NR]}'
