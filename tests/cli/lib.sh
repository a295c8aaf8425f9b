# tests/cli/lib.sh — helpers for the CLI test scripts (POSIX sh).
#   $1 the polis binary, $2 the source tree, $3 the directory of hot_potato.so, $4 scratch dir,
#   $5 the directory of the kernel's test plugins (tests/plugins)
POLIS=$1
SRC=$2
PLUGDIR=$3
TMP=$4
TESTPLUG=$5
GATHER=$SRC/rulesets/gather/gather.json
POTATO=$SRC/examples/out_of_tree_plugin/hot_potato.json
SCN=$SRC/tests/cli/scenarios
# The engine also searches $POLIS_PLUGIN_PATH; the tests must not depend on the caller's.
unset POLIS_PLUGIN_PATH
rm -rf "$TMP" && mkdir -p "$TMP"

failures=0
checks=0

fail() {
    failures=$((failures + 1))
    printf 'FAIL: %s\n' "$*" >&2
}

# polis EXPECTED_EXIT ARGS...: runs polis, keeps stdout in $TMP/out and stderr in $TMP/err.
polis() {
    expected=$1
    shift
    checks=$((checks + 1))
    LAST="polis $*"
    "$POLIS" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -ne "$expected" ]; then
        fail "$LAST: exit status $rc, expected $expected"
        sed 's/^/  stdout: /' "$TMP/out" >&2
        sed 's/^/  stderr: /' "$TMP/err" >&2
    fi
}

# A line of stdout/stderr equals the text exactly.
out_line() {
    checks=$((checks + 1))
    grep -qxF -- "$1" "$TMP/out" || { fail "$LAST: no stdout line '$1'"; sed 's/^/  stdout: /' "$TMP/out" >&2; }
}
err_line() {
    checks=$((checks + 1))
    grep -qxF -- "$1" "$TMP/err" || { fail "$LAST: no stderr line '$1'"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}
# stdout/stderr contains the text.
out_has() {
    checks=$((checks + 1))
    grep -qF -- "$1" "$TMP/out" || { fail "$LAST: stdout lacks '$1'"; sed 's/^/  stdout: /' "$TMP/out" >&2; }
}
err_has() {
    checks=$((checks + 1))
    grep -qF -- "$1" "$TMP/err" || { fail "$LAST: stderr lacks '$1'"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}
out_lacks() {
    checks=$((checks + 1))
    if grep -qF -- "$1" "$TMP/out"; then fail "$LAST: stdout has '$1'"; fi
}
out_empty() {
    checks=$((checks + 1))
    [ ! -s "$TMP/out" ] || { fail "$LAST: stdout is not empty"; sed 's/^/  stdout: /' "$TMP/out" >&2; }
}
err_empty() {
    checks=$((checks + 1))
    [ ! -s "$TMP/err" ] || { fail "$LAST: stderr is not empty"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}
out_lines() {
    checks=$((checks + 1))
    n=$(wc -l <"$TMP/out")
    [ "$n" -eq "$1" ] || fail "$LAST: $n stdout lines, expected $1"
}

finish() {
    printf '%d checks, %d failed\n' "$checks" "$failures" >&2
    [ "$failures" -eq 0 ]
    exit $?
}
