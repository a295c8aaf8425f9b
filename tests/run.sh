#!/usr/bin/env bash
# tests/run.sh — the one test command: configure, build and run every test under CTest.
#
#   ./tests/run.sh                    build/ (RelWithDebInfo)
#   POLIS_SANITIZE=1 ./tests/run.sh   build-asan/ with AddressSanitizer (+LeakSanitizer) and
#                                     UndefinedBehaviorSanitizer
#   CC=clang ./tests/run.sh           the same with clang, in build-clang/ (build-clang-asan/
#                                     with POLIS_SANITIZE=1): clang's sanitizers and warnings
#                                     catch what gcc's do not
#   POLIS_ISAL=0 ./tests/run.sh       the recorder's .gz deflated with zlib even where ISA-L is
#                                     installed (-DPOLIS_ISAL=OFF): CI's clang pass tests that path
# With CI=true warnings are errors. Extra arguments go to ctest (e.g. -R cli).
set -euo pipefail
cd "$(dirname "$0")/.."

# A build tree keeps the compiler it was configured with: each compiler has its own.
dir=build
cmake_args=()
case "$(basename "${CC:-cc}")" in
clang*)
    dir=build-clang
    cmake_args+=(-DCMAKE_C_COMPILER="$CC")
    ;;
esac
if [ "${POLIS_SANITIZE:-0}" = 1 ]; then
    dir=$dir-asan
    cmake_args+=(-DPOLIS_SANITIZE=ON)
    # LeakSanitizer checks at exit. It cannot run under ptrace (gdb, strace): there it
    # stops with "LeakSanitizer has encountered a fatal error"; run those without it
    # (ASAN_OPTIONS=detect_leaks=0).
    export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
else
    cmake_args+=(-DPOLIS_SANITIZE=OFF)
fi
# Explicit either way: a build tree remembers its cache from the previous run.
if [ "${POLIS_ISAL:-1}" = 0 ]; then
    cmake_args+=(-DPOLIS_ISAL=OFF)
else
    cmake_args+=(-DPOLIS_ISAL=ON)
fi
if [ "${CI:-}" = true ]; then
    cmake_args+=(-DPOLIS_WERROR=ON)
else
    cmake_args+=(-DPOLIS_WERROR=OFF)
fi

cmake -S . -B "$dir" "${cmake_args[@]}"
cmake --build "$dir" -j2

# ctest prints "Total Test time" after its "N% tests passed, ..." line; hold both back so the
# pass/fail count is the last line, where CI reads it.
ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600 "$@" 2>&1 | awk '
    /tests passed, [0-9]+ tests? failed out of/ { summary = $0; next }
    /^Total Test time/ { total = $0; next }
    { print; fflush() }
    END {
        if (total != "") print total
        if (summary != "") print summary
    }'
