# Task distributions (a scenario's "vary", docs/scenario.md "Task distributions") in the CLI:
# describe lists the draws; run, eval --json and sweep name each episode's task; an episode is
# reproduced from its seed; a recording's reset line carries the task and replay --verify
# plays it again (a tampered task is caught); bad draws exit 1 naming vary["path"].
. "$(dirname "$0")/lib.sh"
CONTRACT_VARY=$SRC/rulesets/contract/contract_vary.json
EXPLORATION_VARY=$SRC/rulesets/exploration/exploration_vary.json
STRUCT=$SRC/rulesets/social_structure/vary_structure.json

polis 0 describe "$CONTRACT_VARY"
err_empty
out_line "vary (drawn anew at every reset from its seed; docs/scenario.md) (3)"
out_has '  plugins.society.params.random.resources.wood.repeat   {"range":[3,5],"int":true}'
polis 0 describe "$GATHER"
out_lacks "vary (drawn"
polis 0 describe "$STRUCT" --json
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json: the vary list is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["vary"]
assert [x["path"] for x in v] == ["plugins.social.params.social",
                                  "plugins.society.params.random.resources.wood.repeat",
                                  "plugins.society.params.random.resources.stone.repeat"], v
assert len(v[0]["draw"]["choice"]) == 5, v[0]
PY

# run: the task in the text and JSON lines; the same seed draws the same task and plays the
# same episode, whatever episodes came before it
polis 0 run "$CONTRACT_VARY" --steps 3
out_has '  task {"plugins.social.params.social.groups":[{"players":'
polis 0 run "$STRUCT" --json --seed 4 --episodes 3 --steps 30
cp "$TMP/out" "$TMP/three.jsonl"
polis 0 run "$STRUCT" --json --seed 6 --episodes 1 --steps 30
cp "$TMP/out" "$TMP/one.jsonl"
checks=$((checks + 1))
python3 - "$TMP/three.jsonl" "$TMP/one.jsonl" <<'PY' || fail "run --json: seed 6 is not reproduced"
import json, sys
three = [json.loads(l) for l in open(sys.argv[1])]
one = json.loads(open(sys.argv[2]).read())
assert three[2]["seed"] == one["seed"] == 6
assert three[2]["task"] == one["task"] and three[2]["state_hash"] == one["state_hash"]
assert len({json.dumps(e["task"], sort_keys=True) for e in three}) > 1, "every seed drew the same"
PY

# eval --json and sweep name each episode's task
polis 0 eval "$CONTRACT_VARY" --episodes 3 --policy scripted --json "$TMP/eval.json"
checks=$((checks + 1))
python3 - "$TMP/eval.json" <<'PY' || fail "eval --json: no task per episode"
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["per_episode"]:
    g = e["task"]["plugins.social.params.social.groups"]
    assert len(g) == 4 and 3 <= e["task"]["plugins.society.params.random.resources.wood.repeat"] <= 5
PY
polis 0 eval "$GATHER" --episodes 1 --json "$TMP/eval_gather.json"
checks=$((checks + 1))
grep -q '"task"' "$TMP/eval_gather.json" && fail "eval --json: a task where the scenario varies nothing"
polis 0 sweep --scenario "$CONTRACT_VARY" --out "$TMP/sweep" --threads 2 --seed 1 --episodes 3
checks=$((checks + 1))
python3 - "$TMP/sweep/results.jsonl" <<'PY' || fail "sweep: no task per episode"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "polis_sweep" in r:
        continue
    assert "plugins.social.params.social.groups" in r["task"], r
PY

# recordings: the reset line carries the task; replay plays it again; a changed task is caught
polis 0 run "$STRUCT" --episodes 3 --steps 15 --record "$TMP/v.rec" --quiet
polis 0 replay "$TMP/v.rec" --verify
out_has "replay matches: 3 episodes"
checks=$((checks + 1))
python3 - "$TMP/v.rec" "$TMP/v2.rec" <<'PY' || fail "the recording has no task in its reset lines"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
resets = [i for i, l in enumerate(lines) if json.loads(l).get("t") == "reset"]
assert len(resets) == 3
for i in resets:
    assert "plugins.social.params.social" in json.loads(lines[i])["task"]
# another structure in the second episode's task
d = json.loads(lines[resets[1]])
d["task"]["plugins.social.params.social"] = {"relations": [], "groups": [{"players": {"ids": [0, 1], "attributes": {"division_weight": [1, 1]}}}]}
lines[resets[1]] = json.dumps(d, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
polis 1 replay "$TMP/v2.rec" --verify
err_has "line "
# a task that changes the map cannot go into the same recording: refused, not overrun
polis 1 run "$EXPLORATION_VARY" --episodes 4 --steps 3 --record "$TMP/maps.rec" --quiet
err_has "cannot be recorded into the same file"

# bad draws: exit 1 naming the JSON path
polis 1 run "$CONTRACT_VARY" --set 'vary={"max_steps":{"range":[50,10]}}'
err_line 'polis: vary["max_steps"].range: low 50 is above high 10 (scenario with overrides)'
polis 1 validate "$CONTRACT_VARY" --set 'vary.max_steps={"choice":[]}'
err_line 'polis: vary["max_steps"].choice: expected a non-empty array of values, got an empty array (scenario with overrides)'
polis 1 validate "$CONTRACT_VARY" --set 'vary.max_steps={"choice":[1,2],"weights":[1,-2]}'
err_has 'polis: vary["max_steps"].weights[1]: expected a number in [0, '
polis 1 validate "$CONTRACT_VARY" --set 'vary.max_steps={"choice":[1,2],"weights":["a",1]}'
err_has 'polis: vary["max_steps"].weights[0]: expected a number, got a string'
polis 1 validate "$CONTRACT_VARY" --set 'vary={"plugins.contract.params.roundz":{"range":[1,3],"int":true}}'
err_has 'polis: vary["plugins.contract.params.roundz"]: its first value {"plugins.contract.params.roundz":1} cannot be played: '
err_has 'roundz'
polis 1 validate "$CONTRACT_VARY" --set 'vary={"plugins.social.params.social_state":{"choice":[true,false]}}'
err_has "polis: vary[\"plugins.social.params.social_state\"]: its last value {\"plugins.social.params.social_state\":false} cannot be played: it changes the env's layout: observation "
checks=$((checks + 1))
grep -qF "(scenario with overrides) (scenario with overrides)" "$TMP/err" &&
    fail "$LAST: the suffix twice"

finish
