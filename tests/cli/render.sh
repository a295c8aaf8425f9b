# render and parse: an agent's view after K steps, a text action's id; bad input and exit codes.
. "$(dirname "$0")/lib.sh"

PAIR=$SCN/render_pair.json

# The reset state of gather's scenario (seed 1), every agent under a heading.
polis 0 render "$GATHER"
out_line "== agent_0 =="
out_line "You are agent_0 at (9, 7) on the 12x12 grid (bounded; x grows east, y grows south). Tick 0 of 200."
out_line "- coin at (11, 8): 1 south, 2 east (3 steps)"
out_line "- agent_3 at (10, 7): 1 east (1 step)"
out_line "== agent_3 =="
out_line "- agent_0 at (9, 7): 1 west (1 step)"
out_line "Legal actions: noop, move_north, move_west, move_east."
out_lines 32
err_empty

# One agent, by name or id: no heading.
polis 0 render "$GATHER" --agent agent_2 --policy noop --steps 2
out_line "You are agent_2 at (2, 11) on the 12x12 grid (bounded; x grows east, y grows south). Tick 2 of 200."
out_lacks "=="
out_lines 5
cp "$TMP/out" "$TMP/by_name"
polis 0 render "$GATHER" --agent 2 --policy noop --steps 2
checks=$((checks + 1))
cmp -s "$TMP/by_name" "$TMP/out" || fail "--agent 2 and --agent agent_2 differ"

# The random policy is run's: the same seed and steps give the same view, another seed not.
polis 0 render "$GATHER" --seed 4 --steps 30 --format json
cp "$TMP/out" "$TMP/first"
polis 0 render "$GATHER" --seed 4 --steps 30 --format json
checks=$((checks + 1))
cmp -s "$TMP/first" "$TMP/out" || fail "two renders with --seed 4 --steps 30 differ"
polis 0 render "$GATHER" --seed 5 --steps 30 --format json
checks=$((checks + 1))
if cmp -s "$TMP/first" "$TMP/out"; then fail "--seed 4 and --seed 5 rendered the same"; fi

# JSON: one agent's view as printed by the env; every agent's in one object by name.
polis 0 render "$GATHER" --agent 2 --format json --policy noop
out_line '{"gather":{"position":[2,11],"coins":[],"agents":[],"collected":0}}'
out_lines 1
polis 0 render "$GATHER" --format json
out_lines 1
checks=$((checks + 1))
python3 - "$TMP/out" <<'EOF' || fail "render --format json: not one object of the four agents' views"
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["agent_0", "agent_1", "agent_2", "agent_3"], list(d)
assert d["agent_0"]["gather"]["position"] == [9, 7], d["agent_0"]
assert d["agent_0"]["gather"]["agents"] == [{"id": 3, "name": "agent_3", "position": [10, 7]}]
EOF

# Past the end of the episode the view is of the last state.
polis 0 render "$GATHER" --agent 0 --steps 500
out_has "Tick 200 of 200."
out_line "Your episode is over (truncated)."

# Two plugins: text pieces concatenated, JSON members in registration order.
polis 0 render "$PAIR" --plugin-path "$TESTPLUG" --agent 1 --steps 3
out_line "renderer sees agent_1 at tick 3."
out_has "You are agent_1 at "
checks=$((checks + 1))
[ "$(tail -n 2 "$TMP/out" | head -n 1)" = "renderer sees agent_1 at tick 3." ] || fail "the renderer plugin's piece is not last"
checks=$((checks + 1))
case "$(tail -n 1 "$TMP/out")" in
"Legal actions: noop, "*wave*) ;;
*) fail "the kernel's legal actions (both plugins') are not the last line" ;;
esac
polis 0 render "$PAIR" --plugin-path "$TESTPLUG" --agent agent_0 --format json
checks=$((checks + 1))
python3 - "$TMP/out" <<'EOF' || fail "render_pair json: wrong members"
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["gather", "renderer"], list(d)
assert d["renderer"] == {"agent": 0, "tick": 0, "note": 'a "quoted" word'}, d
EOF
polis 0 render "$PAIR" --plugin-path "$TESTPLUG" --format ascii
out_line "== agent_1 =="
out_line "[#]"

# describe lists them.
polis 0 describe "$PAIR" --plugin-path "$TESTPLUG"
out_line "renderers (5)"
out_line "  ascii   renderer"
out_line "action parsers (2)"
out_line "  gather renderer"
polis 0 describe "$GATHER" --json
checks=$((checks + 1))
python3 - "$TMP/out" <<'EOF' || fail "describe --json: renderers and action_parsers"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["renderers"] == [{"format": "text", "owner": "gather"}, {"format": "json", "owner": "gather"}], d["renderers"]
assert d["action_parsers"] == [{"owner": "gather"}], d["action_parsers"]
EOF

# Refusals: exit 1 with the env's message, nothing on stdout.
polis 1 render "$GATHER" --format yaml
err_line 'polis: render: no renderer for format "yaml" (formats: json text)'
out_empty
polis 1 render "$SCN/render_fail.json" --plugin-path "$TESTPLUG"
err_line "polis: renderer: cannot see agent 1 [render text, agent 1 (agent_1), tick 0]"
out_empty
polis 0 render "$SCN/render_fail.json" --plugin-path "$TESTPLUG" --agent 2
out_line "renderer sees agent_2 at tick 0."
polis 1 render "$SCN/render_bad_json.json" --plugin-path "$TESTPLUG" --format json --steps 2
err_line 'polis: renderer: the json renderer wrote invalid JSON (error at byte 13 of 13: "{\"agent\": 0,}") [render json, agent 0 (agent_0), tick 2]'
out_empty
polis 1 render "$SCN/fail_step.json" --plugin-path "$TESTPLUG" --steps 5
err_line "polis: probe: deliberate failure [hook post, tick 2]"
out_empty

# Usage errors: exit 2.
polis 2 render "$GATHER" --format Text
err_line "polis: render: --format: 'Text' is not a format name ([a-z0-9_]+, e.g. text or json)"
err_line "Try 'polis help render'."
polis 2 render "$GATHER" --agent agent_9
err_line "polis: render: --agent: 'agent_9' is neither an agent id (0..3) nor an agent name (agent_0, agent_1, agent_2, agent_3)"
out_empty
polis 2 render "$GATHER" --agent 4
err_has "'4' is neither an agent id (0..3)"
polis 2 render "$GATHER" --agent ""
err_line "polis: render: --agent: empty value (an id or a name)"
polis 2 render "$GATHER" --steps 0
err_line "polis: render: --steps: '0' is not a positive integer"
polis 2 render "$GATHER" --episodes 2
err_line "polis: render: unknown option '--episodes'"
polis 2 render "$GATHER" --policy smart
err_line "polis: render: --policy: 'smart' is not a policy of this scenario (policies: noop, random, uniform)"

# parse: an action name, a phrase, JSON; the id and the name.
polis 0 parse "$GATHER" "move_west"
out_line "3 move_west"
err_empty
polis 0 parse "$GATHER" "  Go North. "
out_line "1 move_north"
polis 0 parse "$GATHER" --agent agent_3 '{"action": "move", "direction": "east"}'
out_line "4 move_east"
polis 0 parse "$GATHER" stay --agent 1
out_line "0 noop"
polis 0 parse "$PAIR" --plugin-path "$TESTPLUG" "wave hello"
out_line "5 wave"

polis 1 parse "$GATHER" --agent 2 "fly away"
err_line 'polis: agent 2 (agent_2): cannot parse action "fly away" (action names: noop, move_north, move_south, move_west, move_east; 1 parser tried)'
out_empty
polis 1 parse "$GATHER" "move"
err_line 'polis: gather: "move" needs a direction: north, south, west or east [parse "move", agent 0 (agent_0), tick 0]'
polis 1 parse "$GATHER" ""
err_line "polis: agent 0 (agent_0): empty action"
polis 1 parse "$GATHER" -- "-x"
err_has 'cannot parse action "-x"'
polis 1 parse "$PAIR" --plugin-path "$TESTPLUG" --agent 1 "bad wave"
err_line 'polis: renderer: malformed wave: bad wave [parse "bad wave", agent 1 (agent_1), tick 0]'

polis 2 parse "$GATHER"
err_line 'polis: parse: missing ACTION (an action text, e.g. "move north")'
err_line "Try 'polis help parse'."
polis 2 parse "$GATHER" go north
err_line "polis: parse: unexpected argument 'north' (ACTION is 'go'; quote an action of several words)"
polis 2 parse "$GATHER" --agent 12 north
err_has "polis: parse: --agent: '12' is neither an agent id (0..3)"
polis 2 parse "$GATHER" --steps 3 north
err_line "polis: parse: unknown option '--steps'"
polis 2 parse "$GATHER" --format json north
err_line "polis: parse: unknown option '--format'"

finish
