#!/bin/sh
# tests/browser/run.sh POLIS SRCDIR TMPDIR [reader|live|raster|real] — the viewer's browser test
# (viewer.test.mjs): writes the fixture recordings, then runs node's test runner, which drives
# Debian's chromium headless with playwright-core against `polis view`. With "reader", the
# reader's test under node alone instead (recording.test.mjs: no browser, no npm package);
# with "live", live play through `polis serve --http` (live.test.mjs); with "raster", the
# viewer's canvas against the frames polis draws in C (raster.test.mjs); with "real", the
# viewer on recordings of real games that real.test.mjs makes with `polis run --record`; with
# "llm", the viewer's LLM panel on a recording of polis.llm's agents (llm.test.mjs).
# Exits 77 (CTest: skipped), saying why, only when chromium or node is not installed; a
# missing playwright-core is installed from package-lock.json (npm ci) and is a failure if
# that fails.
POLIS=$1
SRC=$2
TMP=$3
CHROMIUM=${POLIS_CHROMIUM:-/usr/bin/chromium}
if [ "${4:-}" = reader ]; then
    if ! command -v node >/dev/null 2>&1; then
        echo "SKIPPED: node is not installed (Debian: apt-get install nodejs)"
        exit 77
    fi
    rm -rf "$TMP" && mkdir -p "$TMP" || exit 1
    /usr/bin/python3 "$SRC/tests/browser/make_fixture.py" "$TMP" || exit 1
    cd "$SRC/tests/browser" || exit 1
    FIXTURES="$TMP" exec node --test recording.test.mjs
fi
if [ ! -x "$CHROMIUM" ]; then
    echo "SKIPPED: no chromium at $CHROMIUM (Debian: apt-get install chromium)"
    exit 77
fi
if ! command -v node >/dev/null 2>&1; then
    echo "SKIPPED: node is not installed (Debian: apt-get install nodejs npm)"
    exit 77
fi
cd "$SRC/tests/browser" || exit 1
if [ ! -f node_modules/playwright-core/package.json ]; then
    echo "tests/browser: npm ci (playwright-core, from package-lock.json)"
    npm ci --no-audit --no-fund || { echo "FAIL: npm ci in tests/browser"; exit 1; }
fi
if [ "${4:-}" = real ]; then
    # real.test.mjs records its games with `polis run --record` into $TMP
    rm -rf "$TMP" && mkdir -p "$TMP" || exit 1
    POLIS="$POLIS" SRC="$SRC" TMP="$TMP" CHROMIUM="$CHROMIUM" exec node --test --test-concurrency=1 real.test.mjs
fi
if [ "${4:-}" = live ]; then
    POLIS="$POLIS" SRC="$SRC" CHROMIUM="$CHROMIUM" exec node --test live.test.mjs
fi
if [ "${4:-}" = llm ]; then
    # llm.test.mjs: a recording of polis.llm's agents against the mock model
    rm -rf "$TMP" && mkdir -p "$TMP" || exit 1
    /usr/bin/python3 make_llm_fixture.py "$TMP" "$SRC" "$(dirname "$POLIS")/libpolis.so" || exit 1
    "$POLIS" run "$SRC/rulesets/gather/gather.json" --steps 5 --record "$TMP/plain.jsonl" >/dev/null || exit 1
    POLIS="$POLIS" FIXTURES="$TMP" CHROMIUM="$CHROMIUM" exec node --test --test-concurrency=1 llm.test.mjs
fi
if [ "${4:-}" = raster ]; then
    POLIS="$POLIS" SRC="$SRC" CHROMIUM="$CHROMIUM" exec node --test --test-concurrency=1 raster.test.mjs
fi
rm -rf "$TMP" && mkdir -p "$TMP" || exit 1
/usr/bin/python3 make_fixture.py "$TMP" || exit 1
POLIS="$POLIS" FIXTURES="$TMP" CHROMIUM="$CHROMIUM" SCREENSHOTS="${POLIS_SCREENSHOTS:-}" \
    exec node --test --test-concurrency=1 viewer.test.mjs
