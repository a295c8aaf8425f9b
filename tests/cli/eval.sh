# polis eval: argument errors, the table, the JSON document's shape, determinism, policies,
# the metrics plugin added when the scenario lacks it.
. "$(dirname "$0")/lib.sh"

EXPLORATION=$SRC/rulesets/exploration/exploration.json

# ---- usage errors (exit 2) ----
polis 2 eval
err_line "polis: eval: missing SCENARIO (a scenario .json file)"
err_line "Try 'polis help eval'."
polis 2 eval "$GATHER" --episodes 0
err_line "polis: eval: --episodes: '0' is not an integer in [1, 1000000]"
polis 2 eval "$GATHER" --episodes ten
err_line "polis: eval: --episodes: 'ten' is not an integer in [1, 1000000]"
polis 2 eval "$GATHER" --seed -1
err_line "polis: eval: --seed: '-1' is not an integer in [0, 2^64)"
polis 2 eval "$GATHER" --steps 0
err_line "polis: eval: --steps: '0' is not a positive integer"
polis 2 eval "$GATHER" --json
err_line "polis: eval: --json needs a value"
polis 2 eval "$GATHER" --quiet=yes
err_line "polis: eval: --quiet takes no value"
polis 2 eval "$GATHER" --frob
err_line "polis: eval: unknown option '--frob'"
polis 2 eval "$GATHER" "$GATHER"
err_has "polis: eval: unexpected argument"
polis 2 eval "$GATHER" --policy greedy
err_line "polis: eval: --policy: 'greedy' is not a policy of this scenario (policies: noop, random, uniform)"
polis 0 help eval
out_has "usage: polis eval SCENARIO [options]"
out_has "--policy NAME"

# ---- env errors (exit 1) ----
polis 1 eval "$TMP/missing.json"
err_has "polis: cannot read $TMP/missing.json"
polis 1 eval "$SCN/fail_step.json" --episodes 1
err_has "polis: "

# ---- a scenario without metrics gets the plugin; the table ----
polis 0 eval "$GATHER" --episodes 3 --seed 5
err_empty
out_line "gather: 3 episodes, policy random, seeds 5..7, 600 steps"
out_has "  metric "
out_has "  steps    "
out_has "  reward.mean "
out_has "  fairness "
out_lacks "["  # no progress bar when stdout is not a terminal
# gather has no oracle: no oracle rows (they could only say "undefined"), no note about them
out_lacks "oracle"
out_lacks "normalised"
checks=$((checks + 1))
sed -n 3p "$TMP/out" | grep -q '^  steps ' || fail "eval: without an oracle, steps is not first"
# a game with an oracle: the paper's normalised reward (the sum of the returns over the
# oracle) is the first row, the per-agent figure the second, the oracle among the rest
polis 0 eval "$EXPLORATION" --episodes 2 --steps 20
out_has "  oracle "
checks=$((checks + 1))
sed -n 3p "$TMP/out" | grep -q '^  total_reward_normalised ' || fail "eval: the paper's metric is not first"
checks=$((checks + 1))
sed -n 4p "$TMP/out" | grep -q '^  mean_reward_normalised ' || fail "eval: the per-agent metric is not second"
out_has "total_reward_normalised: the paper's normalised reward (Tables 2, 3, 8): the sum of all agents'"
polis 0 eval "$GATHER" --episodes 2 --no-metrics
out_has "  reward.mean "
out_lacks "fairness"

# ---- JSON: shape, determinism, --json - ----
polis 0 eval "$EXPLORATION" --episodes 3 --seed 11 --policy greedy --steps 60 --json "$TMP/a.json"
out_has "exploration: 3 episodes, policy greedy, seeds 11..13, 180 steps"
polis 0 eval "$EXPLORATION" --episodes 3 --seed 11 --policy greedy --steps 60 --json "$TMP/b.json"
checks=$((checks + 1))
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "eval --json: two identical runs differ"
polis 0 eval "$EXPLORATION" --episodes 3 --seed 11 --policy greedy --steps 60 --json -
out_lacks "metric   "
checks=$((checks + 1))
cmp -s "$TMP/a.json" "$TMP/out" || fail "eval --json -: not the document --json FILE writes"
polis 0 eval "$EXPLORATION" --episodes 3 --seed 12 --policy greedy --steps 60 --json "$TMP/c.json"
checks=$((checks + 1))
python3 - "$TMP/a.json" "$TMP/c.json" <<'PY' || fail "eval --json: the document is wrong (see above)"
import json, sys
a = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
assert a["scenario"] == "exploration" and a["policy"] == "greedy", a
assert a["seed"] == 11 and a["episodes"] == 3 and a["steps_limit"] == 60, a
eps = a["per_episode"]
assert [e["episode"] for e in eps] == [1, 2, 3] and [e["seed"] for e in eps] == [11, 12, 13]
for e in eps:
    m = e["metrics"]
    assert m["steps"] == 60 and m["illegal_actions"] == 0, m
    assert m["oracle"] == 14878, m
    assert m["reward.mean"] > 0, m
    assert "completion.hammer_craft" in m and "degree.agent.in_mean" in m, m
    assert m["split_ratio"] is None, m
    p = e["plugin"]
    assert p["steps"] == 60 and len(p["per_agent"]) == 8, p
    assert abs(sum(x["reward"] for x in p["per_agent"]) - m["reward.total"]) < 1e-6
s = a["summary"]
assert s["steps"] == {"mean": 60, "std": 0, "n": 3}, s["steps"]
assert s["split_ratio"] == {"mean": None, "std": None, "n": 0}, s["split_ratio"]
vals = [e["metrics"]["reward.mean"] for e in eps]
mean = sum(vals) / 3
assert abs(s["reward.mean"]["mean"] - mean) < 1e-9
std = (sum((v - mean) ** 2 for v in vals) / 2) ** 0.5
assert abs(s["reward.mean"]["std"] - std) < 1e-9
# Episode 12 is the second episode of the first run and the first of the second.
assert c["per_episode"][0]["metrics"] == eps[1]["metrics"], (c["per_episode"][0], eps[1])
PY

# greedy earns clearly more than random on Exploration.
polis 0 eval "$EXPLORATION" --episodes 2 --policy random --steps 150 --json "$TMP/r.json"
polis 0 eval "$EXPLORATION" --episodes 2 --policy greedy --steps 150 --json "$TMP/g.json"
checks=$((checks + 1))
python3 - "$TMP/r.json" "$TMP/g.json" <<'PY' || fail "eval: greedy does not beat random"
import json, sys
r = json.load(open(sys.argv[1]))["summary"]["reward.mean"]["mean"]
g = json.load(open(sys.argv[2]))["summary"]["reward.mean"]["mean"]
assert g > 10 * max(r, 0.1), (g, r)
PY

# A game that renders its own "metrics" (commons, in Lua) shows them beside the metrics
# plugin's: every plugin's object is merged.
polis 0 eval "$SRC/rulesets/commons/commons_open.json" --episodes 1 --steps 50
out_has "  fairness "
out_has "  zaps.fired "
out_has "  return.focal_per_capita "

polis 1 eval "$GATHER" --episodes 1 --json "$TMP/no/such/dir/x.json"
err_has "polis: cannot write $TMP/no/such/dir/x.json"

# Overrides apply after the metrics plugin is added (its paths see the extended plugin list).
polis 0 eval "$EXPLORATION" --episodes 2 --agents 4 --set max_steps=50 --quiet
out_has "exploration: 2 episodes, policy random, seeds 0..1, 100 steps"
out_has "  degree.agent.in_mean "
polis 0 eval "$EXPLORATION" --episodes 1 --set max_steps=5 --set plugins.metrics.params.split_jobs='"explorer,explorer"' --quiet
out_has "1 episode"
polis 1 eval "$EXPLORATION" --episodes 1 --set plugins.society.params.nope=1 --quiet
err_has "plugins[0].params.nope: unknown key"
err_has "(scenario with overrides)"
polis 2 eval "$EXPLORATION" --set max_steps
err_line "polis: eval: --set: 'max_steps' is not PATH=JSON (e.g. grid.width=64)"

finish
