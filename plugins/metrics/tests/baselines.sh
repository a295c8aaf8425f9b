#!/bin/sh
# baselines.py: every mini-game's rows next to the paper's, written between the README's
# markers (into a copy here), and its errors.
#   baselines.sh POLIS SOURCE_DIR TMP_DIR
set -eu
polis=$1 src=$2 tmp=$3
mkdir -p "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }
script=$src/plugins/metrics/baselines.py
printf 'intro\n<!-- baselines:begin -->\nold table\n<!-- baselines:end -->\noutro\n' > "$tmp/README.md"
python3 "$script" --polis "$polis" --episodes 2 --write --readme "$tmp/README.md" > "$tmp/out" ||
    fail "baselines.py: $(cat "$tmp/out")"
r=$tmp/README.md
grep -q '^intro$' "$r" && grep -q '^outro$' "$r" || fail "the text around the markers changed"
! grep -q 'old table' "$r" || fail "the old table stayed"
# the paper's metric first, each mini-game's random row beside the paper's Random row
grep -q '| scenario | policy | \*\*normalised\*\* (Σ returns ÷ oracle: the paper.s) | paper, Random |' "$r" ||
    fail "header"
grep -q '^| Exploration | random | \*\*[0-9.e+-]* ± [0-9.e+-]*\*\* | 0.0001 ± 0.0000 |' "$r" || fail "exploration row"
grep -q '^| Exploration | greedy | ' "$r" || fail "exploration greedy"
for g in "Contract Easy:0.0046 ± 0.0002" "Contract Hard:0.0021 ± 0.0000" \
         "Negotiation Easy:0.0040 ± 0.0001" "Negotiation Hard:0.0020 ± 0.0001"; do
    name=${g%%:*} paper=${g#*:}
    grep -q "^| $name | random | \*\*.*\*\* | $paper |" "$r" || fail "$name random row"
    grep -q "^| $name | scripted | " "$r" || fail "$name scripted row"
    grep -q "^| $name | random, repository jobs | .* | $paper |" "$r" || fail "$name repository row"
done
for g in "Exploration:0.0001 ± 0.0000" "Contract Easy:0.0046 ± 0.0002" \
         "Contract Hard:0.0021 ± 0.0000" "Negotiation Easy:0.0040 ± 0.0001" \
         "Negotiation Hard:0.0020 ± 0.0001"; do
    name=${g%%:*} paper=${g#*:}
    grep -q "^| $name | random_ada | .* | $paper |" "$r" || fail "$name random_ada row"
done
for s in Isolation Connection "Independent groups" "Overlapping groups" Inequality Dynamic; do
    for l in Easy Hard; do
        grep -q "^| $s $l | random | " "$r" && grep -q "^| $s $l | greedy | " "$r" ||
            fail "$s $l rows"
    done
done
# Contract Easy's oracle is 200 and it has 4 agents: the total is 4 times the per-agent figure
python3 - "$r" <<'PY' || fail "total vs per agent"
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("| Contract Easy | scripted |"):
        cells = [c.strip() for c in line.split("|")]
        total = float(cells[3].strip("*").split(" ± ")[0])
        mean = float(cells[5].split(" ± ")[0])
        assert abs(total - 4 * mean) < 0.01 * total, (total, mean)
        break
else:
    raise SystemExit("no Contract Easy scripted row")
PY
# --random-ada: the random rows only, between their own markers
printf 'a\n<!-- random_ada:begin -->\nold\n<!-- random_ada:end -->\nb\n' > "$tmp/ada.md"
python3 "$script" --polis "$polis" --random-ada --episodes 2 --write --readme "$tmp/ada.md" \
    > "$tmp/out" || fail "--random-ada: $(cat "$tmp/out")"
a=$tmp/ada.md
grep -q '^a$' "$a" && grep -q '^b$' "$a" && ! grep -q '^old$' "$a" || fail "--random-ada markers"
grep -q '^| task | polis `random` | polis `random_ada` (± s.e.) | AdaSociety | paper, Random |' "$a" ||
    fail "--random-ada header"
grep -q '^| Negotiation Easy | .* | \*\*.*\*\* (± .*) | 0.00404 | 0.0040 ± 0.0001 | [0-9.]* |$' "$a" ||
    fail "--random-ada Negotiation Easy row"
grep -q '^| Exploration | .* | 5.87e-05 (180 episodes) | 0.0001 ± 0.0000 |' "$a" ||
    fail "--random-ada Exploration row"
grep -q '^| Contract Hard | .* | — | 0.0021 ± 0.0000 |' "$a" || fail "--random-ada Contract Hard row"
python3 "$script" --polis "$polis" --random-ada --episodes 2 --write --readme "$tmp/bad-ada.md" \
    2> "$tmp/err" && fail "a missing file was accepted"
grep -q "^baselines: $tmp/bad-ada.md: No such file or directory$" "$tmp/err" ||
    fail "message: $(cat "$tmp/err")"
# errors
printf 'no markers\n' > "$tmp/bad.md"
python3 "$script" --polis "$polis" --episodes 2 --write --readme "$tmp/bad.md" 2> "$tmp/err" &&
    fail "a file without markers was accepted"
grep -q "expected one <!-- baselines:begin --> line before one <!-- baselines:end --> line" "$tmp/err" ||
    fail "message: $(cat "$tmp/err")"
python3 "$script" --polis "$polis" --random-ada --episodes 2 --write --readme "$tmp/bad.md" \
    2> "$tmp/err" && fail "--random-ada: a file without markers was accepted"
grep -q "expected one <!-- random_ada:begin --> line before one <!-- random_ada:end --> line" \
    "$tmp/err" || fail "message: $(cat "$tmp/err")"
python3 "$script" --polis "$tmp/no-polis" 2> "$tmp/err" && fail "a missing polis was accepted"
grep -q "not an executable" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo "baselines: ok"
