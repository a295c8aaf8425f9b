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

finish
