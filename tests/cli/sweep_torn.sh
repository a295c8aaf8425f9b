# tests/cli/sweep_torn.sh — a sweep whose results file fails a write for a moment (a disk that
# fills and frees again: a short write, then ENOSPC, then writes succeed; the LD_PRELOAD shim
# fail_write.so) stops with an error, its file ending in a whole line — the line written in
# part is cut off and no other worker appends after it — and --resume then finishes it with
# the summary of an uninterrupted run. Before, the other workers appended after the half line
# and --resume refused the file.
. "$(dirname "$0")/lib.sh"
SPEC=$SRC/examples/sweep_minigames.json
SHIM=$PLUGDIR/fail_write.so

polis 0 sweep "$SPEC" --out "$TMP/whole" --threads 1 --seed 3 --episodes 6 --quiet

# write 1 is the header line, the others results
for n in 1 2 6 11; do
    export LD_PRELOAD="$SHIM" POLIS_TEST_FAIL_WRITE=$n
    # gcc's ASan wants its runtime first among the preloaded libraries
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
    polis 1 sweep "$SPEC" --out "$TMP/t$n" --threads 4 --seed 3 --episodes 6 --quiet
    unset LD_PRELOAD POLIS_TEST_FAIL_WRITE
    err_has "$TMP/t$n/results.jsonl: cannot write: No space left on device"
    checks=$((checks + 1))
    python3 - "$TMP/t$n/results.jsonl" <<'PY' || fail "write $n failed: the results file holds a torn line"
import json, sys
data = open(sys.argv[1], "rb").read()
assert data == b"" or data.endswith(b"\n"), "the file ends inside a line"
for i, line in enumerate(data.split(b"\n")[:-1]):
    json.loads(line)
PY
    polis 0 sweep "$SPEC" --out "$TMP/t$n" --resume --threads 2 --seed 3 --episodes 6 --quiet
    for f in summary.txt summary.csv summary.json; do
        checks=$((checks + 1))
        cmp -s "$TMP/whole/$f" "$TMP/t$n/$f" || fail "write $n failed, then --resume: $f differs from an uninterrupted run's"
    done
done

finish
