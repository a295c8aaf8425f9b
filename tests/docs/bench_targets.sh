#!/bin/sh
# tests/docs/bench_targets.sh POLIS SRC — examples/bench_targets.sh, the script behind
# docs/performance.md's targets table: --quick on two cheap rows and one it skips, the table's
# shape (a header, one row per selected target with four cells, its command and a verdict, then
# the commands it ran), its argument errors, and that docs/performance.md's targets table has
# the script's rows, one to one. No figure or speed is asserted.
set -u
POLIS=$1
cd "$2" || exit 1
S=examples/bench_targets.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
    failures=$((failures + 1))
    printf 'FAIL: %s\n' "$*" >&2
}
has() { grep -Fqx -- "$1" "$tmp/out" || fail "no line '$1' in the output"; }

sh $S --quick --rows '^(contract-negotiation|survival-craftax|no-alloc)$' --craftax "$tmp/none" "$POLIS" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { fail "--quick: exit status $rc"; sed 's/^/  stderr: /' "$tmp/err" >&2; }
head -n 1 "$tmp/out" | grep -q "^bench_targets.sh: .*, commit .*, $POLIS, .*--quick" ||
    fail "first line: $(head -n 1 "$tmp/out")"
has "| target | figure on the current code | command | verdict |"
has "|---|---|---|---|"
# the rows: four cells each, in the order of the script, with their ids
grep '^| ' "$tmp/out" | sed 1d >"$tmp/rows"
[ "$(wc -l <"$tmp/rows")" -eq 3 ] || fail "3 rows expected: $(cat "$tmp/rows")"
[ -z "$(awk -F ' [|] ' 'NF != 4' "$tmp/rows")" ] || fail "a row without four cells"
n=0
for id in contract-negotiation survival-craftax no-alloc; do
    n=$((n + 1))
    row=$(sed -n "${n}p" "$tmp/rows")
    case $row in
    *" | \`examples/bench_targets.sh --rows '^$id\$'\` | "*) ;;
    *) fail "row $n is not $id's: $row" ;;
    esac
done
# contract-negotiation measured: four games, each a rate in M (or k), and a verdict
row=$(sed -n 1p "$tmp/rows")
for g in contract contract_hard negotiation negotiation_hard; do
    printf '%s\n' "$row" | grep -Eq "(\| |; )$g [0-9]+(\.[0-9]+ M| k)" || fail "no $g rate in: $row"
done
printf '%s\n' "$row" | grep -Eq ' \| (met|\*\*missed\*\*: .*) \|$' || fail "no verdict in: $row"
# survival-craftax without a craftax.cu checkout: skipped, said why
row=$(sed -n 2p "$tmp/rows")
printf '%s\n' "$row" | grep -Fq "| skipped: $tmp/none has no craftax_classic.c" || fail "survival-craftax: $row"
printf '%s\n' "$row" | grep -Fq '| not measured |' || fail "survival-craftax's verdict: $row"
row=$(sed -n 3p "$tmp/rows")
printf '%s\n' "$row" | grep -Fq 'tests/unit/test_vec.c' || fail "no-alloc names no test: $row"
# the commands: a sh block, each row's under its id
has '```sh'
has '# contract-negotiation'
has '# no-alloc'
grep -Eq "^$POLIS bench rulesets/contract/contract_hard.json --steps [0-9]+ --repeat 5 --warmup 5\$" "$tmp/out" ||
    fail "no contract_hard command in the output"
[ "$(tail -n 1 "$tmp/out")" = '```' ] || fail "the output does not end the commands' block"

# a polis whose runs fail: the row says which command and why, the table keeps its shape, exit 1
printf '#!/bin/sh\necho "no luck" >&2\nexit 3\n' >"$tmp/polis"
chmod +x "$tmp/polis"
sh $S --quick --rows '^lua-commons$' "$tmp/polis" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "a failing polis: exit status $rc, expected 1"
grep -Fqx "| Commons, a whole game in Lua, ≥ 0.6 M agent-steps/CPU-s with the default limits and with the \
deterministic instruction budget on | failed: $tmp/polis bench \
rulesets/commons/commons_open.json --steps 400 --repeat 5 --warmup 5: failed: no luck | \`examples/bench_targets.sh --rows \
'^lua-commons\$'\` | not measured |" "$tmp/out" || fail "a failing polis: $(grep '^| C' "$tmp/out")"

# bad arguments: exit 2 and a message, before anything runs
bad() { # MESSAGE ARGS...
    m=$1
    shift
    sh $S "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$*: exit status $rc, expected 2"
    grep -Fq -- "$m" "$tmp/err" || fail "$*: stderr has no '$m': $(cat "$tmp/err")"
    [ ! -s "$tmp/out" ] || fail "$*: wrote to stdout"
}
bad "--rows 'nothing' matches no row (rows: exploration-physical" --rows nothing "$POLIS"
cp "$tmp/err" "$tmp/err0"
bad "--passes must be a positive integer" --passes 0 "$POLIS"
bad "--rows needs a value" "$POLIS" --rows
bad "unknown option '--frob'" --frob "$POLIS"
bad "$tmp/none is not an executable polis" "$tmp/none"
# docs/performance.md's targets table has the script's rows, one to one and in its order
ids=$(sed -n "s/^.*(rows: \(.*\))\$/\1/p" "$tmp/err0")
doc=$(sed -n "s/^| .* | \`examples\/bench_targets.sh --rows '^\([a-z0-9-]*\)\\$'\` | .* |\$/\1/p" docs/performance.md | tr '\n' ' ')
[ -n "$ids" ] && [ "$ids " = "$doc" ] || fail "docs/performance.md's table rows '$doc' are not the script's '$ids'"
[ "$failures" -eq 0 ] && echo "bench_targets: ok" && exit 0
exit 1
