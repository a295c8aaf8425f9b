#!/usr/bin/env bash
# tests/fuzz/run.sh — build the libFuzzer harnesses with clang (build-fuzz/) and run each for a
# while from its seeds (docs/fuzzing.md). Exit status 1 if any harness found a crash, a leak,
# a timeout or a failed oracle; the input is then in build-fuzz/fuzz-artifacts/.
#
#   ./tests/fuzz/run.sh                    every harness, FUZZ_SECONDS (default 20) each
#   FUZZ_SECONDS=600 ./tests/fuzz/run.sh   a longer campaign
#   ./tests/fuzz/run.sh fuzz_parse ...     only these harnesses
#
# New inputs libFuzzer finds go to build-fuzz/fuzz-corpus/<harness>/, kept between runs; the
# committed seeds and regressions (tests/fuzz/corpus/) and the shipped scenarios and
# scripts are read, never written. With CI=true warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=build-fuzz
seconds=${FUZZ_SECONDS:-20}
cc=${CC:-clang}
werror=OFF
[ "${CI:-}" = true ] && werror=ON

CC=$cc cmake -S . -B "$dir" -DPOLIS_FUZZ=ON -DPOLIS_BUILD_TESTS=OFF -DPOLIS_SANITIZE=OFF \
    -DPOLIS_WERROR=$werror >/dev/null
cmake --build "$dir" -j2

# Seeds from the shipped files, copied fresh each run (libFuzzer wants directories).
seeds=$dir/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds/scenario" "$seeds/lua"
for f in rulesets/*/*.json tests/scenarios/*/*.json tests/cli/scenarios/*.json examples/*/*.json; do
    [ -f "$f" ] && cp "$f" "$seeds/scenario/$(echo "$f" | tr / _)"
done
for f in rulesets/*/*.lua lua/polis/*.lua tests/lua/scripts/*.lua tests/cli/scenarios/*.lua \
         tests/scenarios/*.lua examples/*/*.lua; do
    [ -f "$f" ] && cp "$f" "$seeds/lua/$(echo "$f" | tr / _)"
done

corpus_of() {
    case $1 in
    fuzz_scenario) echo "tests/fuzz/corpus/scenario $seeds/scenario" ;;
    fuzz_lua) echo "tests/fuzz/corpus/lua $seeds/lua" ;;
    fuzz_parse) echo tests/fuzz/corpus/parse ;;
    fuzz_protocol) echo tests/fuzz/corpus/protocol ;;
    fuzz_recording) echo tests/fuzz/corpus/recording ;;
    fuzz_game_*) echo tests/fuzz/corpus/game ;;
    esac
}
dict_of() {
    case $1 in
    fuzz_scenario | fuzz_protocol | fuzz_recording) echo "-dict=tests/fuzz/json.dict" ;;
    fuzz_lua) echo "-dict=tests/fuzz/lua.dict" ;;
    esac
}

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
    harnesses=(fuzz_scenario fuzz_parse fuzz_protocol fuzz_recording fuzz_lua fuzz_game_gather
               fuzz_game_exploration fuzz_game_contract fuzz_game_negotiation
               fuzz_game_social_structure fuzz_game_commons)
fi

mkdir -p "$dir/fuzz-artifacts" "$dir/fuzz-logs"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=()
printf '%-28s %10s %8s %8s %8s  %s\n' harness execs exec/s cov ft result
for h in "${harnesses[@]}"; do
    work=$dir/fuzz-corpus/$h
    log=$dir/fuzz-logs/$h.log
    mkdir -p "$work"
    # shellcheck disable=SC2046
    if "$dir/tests/fuzz/$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 \
        -print_final_stats=1 -artifact_prefix="$dir/fuzz-artifacts/$h-" $(dict_of "$h") \
        "$work" $(corpus_of "$h") >"$log" 2>&1; then
        result=ok
    else
        result=FAILED
        failed+=("$h")
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    printf '%-28s %10s %8s %8s %8s  %s\n' "$h" "${execs:--}" "${rate:--}" "${cov:--}" \
        "${ft:--}" "$result"
done

for h in "${failed[@]}"; do
    echo "---- $h ($dir/fuzz-logs/$h.log) ----"
    grep -E -A40 'ERROR: |fuzz oracle failed|runtime error|==[0-9]+==' "$dir/fuzz-logs/$h.log" | head -80
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} harness(es) failed: ${failed[*]}; inputs in $dir/fuzz-artifacts/"
    exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses, ${seconds}s each, no crash"
