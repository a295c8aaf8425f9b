# polis eval and polis sweep on survival_proximity.json (the MAC paper's proximity-bonus setup):
# the proximity rows (tests/cli/lib.sh's helpers; arguments as the CLI tests take them).
. "$2/tests/cli/lib.sh"

PROX=$SRC/rulesets/survival/survival_proximity.json

polis 0 eval "$PROX" --episodes 2 --seed 3 --steps 200
err_empty
out_line "survival_proximity: 2 episodes, policy random, seeds 3..4, 400 steps"
out_has "  proximity    "
for pair in 0-1 0-2 0-3 1-2 1-3 2-3; do
    out_has "  proximity_by_pair.$pair "
done
out_has "  proximity_bonus    "
# every share is in [0, 1] and the bonus is positive (the players start on one tile)
awk '$1 ~ /^proximity/ && ($2 < 0 || ($1 != "proximity_bonus" && $2 > 1)) { bad = 1 }
     $1 == "proximity_bonus" && $2 <= 0 { bad = 1 }
     END { exit bad }' "$TMP/out" || fail "a proximity row out of range: $(grep proximity "$TMP/out")"

# the JSON document has them per episode, the same on a second run (deterministic)
polis 0 eval "$PROX" --episodes 2 --seed 3 --steps 200 --json "$TMP/a.json"
polis 0 eval "$PROX" --episodes 2 --seed 3 --steps 200 --json "$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "two evals of the same seeds differ"
grep -q '"proximity_by_pair.2-3"' "$TMP/a.json" || fail "eval --json lacks proximity_by_pair.2-3"

# without the bonus (survival_mac) the statistic is there, the bonus row is not
polis 0 eval "$SRC/rulesets/survival/survival_mac.json" --episodes 1 --steps 50
out_has "  proximity    "
out_has "  proximity_by_pair.1-2 "
out_lacks "proximity_bonus"

# polis sweep: the rows per cell, over the bonus's weight
polis 0 sweep --scenario "$PROX" --grid 'plugins.0.params.proximity_bonus=[0,0.05]' \
    --episodes 2 --steps 100 --threads 1 --quiet --out "$TMP/sweep"
out_has "plugins.0.params.proximity_bonus=0.05"
out_has "  proximity    "
out_has "  proximity_bonus    "
grep -q '"proximity":' "$TMP/sweep/results.jsonl" || fail "sweep results lack proximity"

# a bad weight: refused before anything runs, naming the parameter
polis 1 eval "$PROX" --set 'plugins.0.params.proximity_bonus=500'
err_has "plugins[0].params.proximity_bonus: expected number in [-100, 100], got 500"
polis 1 eval "$PROX" --set agents=1
err_has "params.proximity_bonus: needs at least 2 players, the scenario has 1"

finish
