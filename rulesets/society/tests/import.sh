#!/bin/sh
# AdaSociety configs turned into polis scenarios by import_adasociety.py, then validated and
# run by the polis CLI from the repository root (the main files' paths are relative to it).
#   import.sh POLIS SOURCE_DIR TMP_DIR
set -eu
polis=$1 src=$2 tmp=$3
mkdir -p "$tmp"
cd "$src"
fail() { echo "FAIL: $*" >&2; exit 1; }
for main in main main_static main_exploration; do
    out="$tmp/$main.json"
    python3 rulesets/society/import_adasociety.py \
        "rulesets/society/tests/adasociety/config/$main.json" > "$out" || fail "import $main"
    "$polis" validate "$out" > "$tmp/$main.validate" 2>&1 || { cat "$tmp/$main.validate"; fail "validate $main"; }
    "$polis" run "$out" --quiet > "$tmp/$main.run" 2>&1 || { cat "$tmp/$main.run"; fail "run $main"; }
done
grep -q '"carpenter_0"' "$tmp/main.json" || fail "agent names"
grep -q '"miner_3"' "$tmp/main.json" || fail "agent names"
grep -q 'contract_like: 1 episode, policy random, 120 steps' "$tmp/main.run" || fail "max_length: $(cat "$tmp/main.run")"
grep -q 'static_map: 1 episode, policy random, 10 steps' "$tmp/main_static.run" || fail "static_map run"
grep -q '"view": "map"' "$tmp/main_exploration.json" || fail "exploration view"
grep -q '"family": "share_map"' "$tmp/main_exploration.json" || fail "exploration actions"
grep -q 'ok: exploration_small: 4 agents, 26 actions' "$tmp/main_exploration.validate" ||
    fail "exploration layout: $(cat "$tmp/main_exploration.validate")"
grep -q 'exploration_small: 1 episode, policy random, 60 steps' "$tmp/main_exploration.run" || fail "exploration run"
python3 rulesets/society/import_adasociety.py no/such/main.json > /dev/null 2> "$tmp/err" &&
    fail "a missing file was accepted"
grep -q 'import_adasociety: no/such/main.json: No such file or directory' "$tmp/err" ||
    fail "message: $(cat "$tmp/err")"
echo "import: ok"
