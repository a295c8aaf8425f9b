# validate loads the scenario with its plugins; env errors exit 1 with "polis: " + message.
. "$(dirname "$0")/lib.sh"

polis 0 validate "$GATHER"
out_line "ok: gather: 4 agents, 5 actions, 64 obs bytes"
out_lines 1
err_empty

# The example plugin lives in a directory the engine does not search by default.
polis 1 validate "$POTATO"
err_has "polis: "
err_has "cannot find plugin \"hot_potato\""
out_empty
polis 0 validate "$POTATO" --plugin-path "$PLUGDIR"
out_line "ok: hot_potato: 3 agents, 2 actions, 16 obs bytes"
polis 0 validate --plugin-path="$PLUGDIR" -- "$POTATO"
out_line "ok: hot_potato: 3 agents, 2 actions, 16 obs bytes"
# POLIS_PLUGIN_PATH works as well.
checks=$((checks + 1))
POLIS_PLUGIN_PATH=$PLUGDIR "$POLIS" validate "$POTATO" >"$TMP/out" 2>&1 ||
    fail "POLIS_PLUGIN_PATH=... polis validate $POTATO failed: $(cat "$TMP/out")"

polis 1 validate "$TMP/does_not_exist.json"
err_has "polis: "
err_has "does_not_exist.json"
out_empty

polis 1 validate "$SCN/bad_param.json"
checks=$((checks + 1))
head -c 7 "$TMP/err" | grep -qxF "polis: " || fail "$LAST: stderr does not start with 'polis: '"
err_has "coins"
out_empty

polis 1 validate "$SCN/not_json.json"
err_has "polis: "
err_has "not_json.json"

# Scenario overrides on the command line (--set PATH=JSON, --agents N), in order; the engine
# applies them (polis_options.overrides) and reports bad values at their JSON path.
polis 0 validate "$GATHER" --agents 2 --set plugins.gather.params.view=1 --set 'name="tiny"'
out_line "ok: tiny: 2 agents, 5 actions, 32 obs bytes"
polis 0 validate "$GATHER" --agents=3 --set agents=5
out_line "ok: gather: 5 agents, 5 actions, 64 obs bytes"
polis 1 validate "$GATHER" --set plugins.gather.params.coins=-1
err_line "polis: $GATHER: plugins[0].params.coins: expected integer in [0, 1000000], got -1 (scenario with overrides)"
polis 1 validate "$GATHER" --set plugins.nope.params.coins=1
err_line 'polis: overrides: "plugins.nope.params.coins": no element of plugins is named "nope"'
polis 2 validate "$GATHER" --set coins
err_has "polis: validate: --set: 'coins' is not PATH=JSON (e.g. grid.width=64)"
polis 2 validate "$GATHER" --set 'name=tiny'
err_has "polis: validate: --set: 'name=tiny': the value is not JSON (quote strings: name='\"text\"')"
polis 2 validate "$GATHER" --agents 0
err_has "polis: validate: --agents: '0' is not an integer in [1, 2147483647]"
polis 0 run "$GATHER" --agents 2 --set max_steps=7 --quiet
out_has "gather: 1 episode, policy random, 7 steps,"
polis 0 describe "$GATHER" --set plugins.gather.params.coins=3
out_has "    coins       int     3      8 "

# A script that cannot be read: the error names the scenario entry (JSON path) and the reason.
printf '{"polis": 1, "agents": 1, "grid": {"width": 4, "height": 4}, "plugins": ["gather"], "scripts": ["nope.lua"]}' >"$TMP/missing_script.json"
polis 1 validate "$TMP/missing_script.json"
err_has "$TMP/missing_script.json: scripts[0]: cannot read $TMP/nope.lua: No such file or directory"
printf '{"polis": 1, "agents": 1, "grid": {"width": 4, "height": 4}, "plugins": ["gather"], "scripts": [{"path": "/dev/zero"}]}' >"$TMP/zero_script.json"
polis 1 validate "$TMP/zero_script.json"
err_has "$TMP/zero_script.json: scripts[0]: cannot read /dev/zero: not a regular file (a character device)"

finish
