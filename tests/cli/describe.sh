# describe lists what a scenario registers, as tables or as JSON.
. "$(dirname "$0")/lib.sh"

polis 0 describe "$GATHER"
err_empty
out_line "scenario gather"
out_has "agents (4)"
out_has "12 x 12, bounded"
out_has "layers (2): agents coins"
out_has "gather (plugin 1.0.0)"
out_has "actions (5)"
out_has "move_north"
out_has "noop"
out_has "observation (2 fields, 64 bytes per agent)"
out_has "coin.collected"
out_has "agent.moved"
out_has "gather.coins_left"
out_has "i32(ctx)"
out_has "gather.position"

polis 0 describe "$GATHER" --json
err_empty
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json: the document is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scenario"]["name"] == "gather", d["scenario"]
assert d["scenario"]["seed"] == 1 and d["scenario"]["max_steps"] == 200, d["scenario"]
assert d["agents"] == ["agent_0", "agent_1", "agent_2", "agent_3"], d["agents"]
assert d["grid"] == {"width": 12, "height": 12, "wrap": False, "layers": ["agents", "coins"]}, d["grid"]
names = [a["name"] for a in d["actions"]]
assert names == ["noop", "move_north", "move_south", "move_west", "move_east"], names
assert [a["id"] for a in d["actions"]] == list(range(5))
assert d["actions"][0]["owner"] == "polis" and d["actions"][1]["owner"] == "gather"
obs = d["observation"]
assert obs["obs_size"] == 64, obs
view, position = obs["fields"]
assert view["name"] == "view" and view["dtype"] == "i8" and view["shape"] == [2, 5, 5], view
assert view["offset"] == 0 and view["nbytes"] == 50, view
assert position["shape"] == [2] and position["offset"] == 56 and position["nbytes"] == 8, position
(plugin,) = d["plugins"]
assert plugin["kind"] == "plugin" and plugin["version"] == "1.0.0", plugin
assert plugin["path"].endswith("/gather.so"), plugin["path"]
params = {p["key"]: p for p in plugin["params"]}
assert params["coins"]["value"] == 10 and params["coins"]["default"] == 8, params["coins"]
assert params["coins"]["type"] == "int" and params["coins"]["min"] == 0, params["coins"]
assert params["coin_value"]["value"] == 1.0 and params["coin_value"]["type"] == "double"
assert params["view"]["value"] == 2 and params["respawn"]["value"] is True
assert d["rewards"] == [{"name": "coins", "weight": 1, "owner": "gather"}], d["rewards"]
ev = {e["name"]: e for e in d["events"]}
assert [f["name"] for f in ev["coin.collected"]["fields"]] == ["agent", "x", "y"]
assert ev["coin.collected"]["size"] == 12 and ev["agent.moved"]["size"] == 20, ev
assert ev["coin.collected"]["fields"][2] == {"name": "y", "type": "i32", "offset": 8}
for phase in ("reset", "begin", "resolve", "end"):
    assert {"owner": "gather", "priority": 0} in d["hooks"][phase], (phase, d["hooks"])
assert d["components"] == [{"id": 0, "name": "gather.position", "elem_size": 8, "owner": "gather"}], d["components"]
exports = {e["name"]: e for e in d["exports"]}
assert exports["gather.coins_left"]["signature"] == "i32(ctx)", exports
assert exports["gather.total"]["signature"] == "i32(ctx,i32)", exports
PY

# A script's parameters (polis.params) are listed like a plugin's, with the values in effect.
polis 0 describe "$SRC/rulesets/gather/gather_lua.json"
err_empty
out_line "plugins and scripts (2)"
out_line "  bonus (script)"
out_line "    param  type    value  default  range        doc"
out_line "    bonus  double  0.5    0.5      [-100, 100]  extra reward for an agent's first coin of the episode"

polis 0 describe "$SRC/rulesets/gather/gather_lua.json" --json
err_empty
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json gather_lua: the document is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(p["name"], p["kind"]) for p in d["plugins"]] == [("gather", "plugin"), ("bonus", "script")], d["plugins"]
script = d["plugins"][1]
assert script["path"].endswith("rulesets/gather/bonus.lua"), script["path"]
assert script["params"] == [{"key": "bonus", "type": "double", "default": 0.5, "min": -100, "max": 100,
                             "required": False,
                             "doc": "extra reward for an agent's first coin of the episode",
                             "value": 0.5}], script["params"]
assert [p["key"] for p in d["plugins"][0]["params"]] == ["coins", "coin_value", "view", "respawn"]
PY

# Each type, given values unlike the defaults, a required key, an unset string; a script that
# declares nothing lists no parameters.
polis 0 describe "$SCN/script_params.json"
err_empty
out_line "  tuned (script)"
out_line "    steps   int     7        3        [1, 9]  steps per move"
out_line "    rate    double  0.75     0.25     [0, 1]  a probability"
out_line "    label*  string  \"given\"  -                a name"
out_line "    title   string  -        -                left unset"
out_line "  script_plain (script)"

polis 0 describe "$SCN/script_params.json" --json
err_empty
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json script_params: the document is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
tuned, plain = d["plugins"]
assert tuned["name"] == "tuned" and tuned["kind"] == "script", tuned
params = {p["key"]: p for p in tuned["params"]}
assert list(params) == ["steps", "rate", "label", "title", "fast"], list(params)
assert params["steps"] == {"key": "steps", "type": "int", "default": 3, "min": 1, "max": 9,
                           "required": False, "doc": "steps per move", "value": 7}, params["steps"]
assert params["rate"]["value"] == 0.75 and params["rate"]["default"] == 0.25, params["rate"]
assert params["label"]["required"] is True and params["label"]["value"] == "given", params["label"]
assert params["label"]["default"] is None and "min" not in params["label"], params["label"]
assert params["title"]["value"] is None and params["title"]["doc"] == "left unset", params["title"]
assert params["fast"]["value"] is False and params["fast"]["default"] is True, params["fast"]
assert params["fast"]["doc"] is None, params["fast"]
assert plain["name"] == "script_plain" and plain["params"] == [], plain
PY

polis 0 describe "$POTATO" --plugin-path "$PLUGDIR" --json
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json hot_potato: the document is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["grid"] is None, d["grid"]
(plugin,) = d["plugins"]
params = {p["key"]: p for p in plugin["params"]}
assert params["fuse"]["value"] == 15 and params["fuse"]["default"] == 20, params["fuse"]
assert params["penalty"]["value"] == 5.0 and params["hold_cost"]["value"] == 0.1, params
assert [e["name"] for e in d["events"]] == ["potato.passed", "potato.exploded"], d["events"]
assert d["hooks"]["world"] == [{"owner": "hot_potato", "priority": 0}], d["hooks"]
assert d["exports"] == [] and d["services"] == [], d
PY

# Hooks, subscribers and transforms are listed in run order: priority, then registration.
polis 0 describe "$SCN/registry_order.json" --plugin-path "$TESTPLUG" --json
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json registry_order: the document is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["agents"] == ["red", "blue"], d["agents"]
hooks = {ph: [(h["owner"], h["priority"]) for h in d["hooks"][ph]] for ph in d["hooks"]}
assert list(hooks) == ["reset", "begin", "resolve", "world", "post", "end", "observe"], list(hooks)
assert hooks["begin"] == [("ffi_exports", -7), ("probe", -3), ("probe", 0)], hooks["begin"]
assert hooks["post"] == [("probe", -3), ("probe", 0), ("ffi_exports", 0), ("probe", 1)], hooks["post"]
assert [(t["name"], t["priority"]) for t in d["reward_transforms"]] == [("probe_double", -10), ("probe_add", 10)]
ev = {e["name"]: e for e in d["events"]}
assert ev["probe.a"]["subscribers"] == [{"owner": "probe", "priority": -1}, {"owner": "probe", "priority": 5}]
assert ev["probe.a"]["fields"][1] == {"name": "v", "type": "f64", "offset": 8} and ev["probe.a"]["size"] == 16
assert ev["ffi.ping"]["fields"][2] == {"name": "count", "type": "i64", "offset": 16}
assert {"name": "probe_r", "weight": 2.5, "owner": "probe"} in d["rewards"], d["rewards"]
params = {p["key"]: p for p in d["plugins"][0]["params"]}
assert params["mode"]["value"] == "trace" and params["mode"]["type"] == "string"
assert params["int_p"]["value"] == -4 and params["int_p"]["min"] == -5 and params["int_p"]["max"] == 5
assert params["name_p"]["value"] == "given" and params["name_p"]["default"] == "x"
assert params["flag"]["value"] is False and params["dbl_p"]["value"] == 0.5
assert params["extra"]["type"] == "json" and params["extra"]["value"] is None
assert d["services"] == [{"name": "ffi_exports.record", "owner": "ffi_exports"}], d["services"]
assert d["components"] == [{"id": 0, "name": "probe.value", "elem_size": 4, "owner": "probe"}]
PY

polis 1 describe "$SCN/bad_param.json"
err_has "polis: "
out_empty

finish
