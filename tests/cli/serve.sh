# polis serve --stdio: every message of the agent protocol and every error reply
# (docs/clients.md). Replies are compact JSON (cJSON), so exact substrings are checked.
. "$(dirname "$0")/lib.sh"
EXPLORATION=$SRC/rulesets/exploration/exploration.json

# An episode of two steps, to reach the end.
cat >"$TMP/short.json" <<'EOF'
{"polis": 1, "name": "short", "seed": 5, "max_steps": 2, "agents": 2,
 "grid": {"width": 6, "height": 6, "wrap": false},
 "plugins": [{"name": "gather", "params": {"coins": 3, "view": 2}}]}
EOF

# ---- usage ----
polis 0 serve --help
out_has "usage: polis serve SCENARIO (--stdio | --tcp [HOST:]PORT) [options]"
out_has "--on-bad-action P"
out_has "--idle-timeout S     TCP: drop a client whose next request has not fully arrived"
out_has "--isolate            TCP: serve each client in its own process, so a plugin that"
polis 2 serve "$GATHER"
err_line "polis: serve: choose a transport: --stdio or --tcp [HOST:]PORT"
polis 2 serve --stdio
err_line "polis: serve: missing SCENARIO (a scenario .json file)"
polis 2 serve "$GATHER" --stdio --tcp 0
err_line "polis: serve: --stdio and --tcp exclude each other"
polis 2 serve "$GATHER" --stdio --on-bad-action retry
err_line "polis: serve: --on-bad-action: 'retry' is not one of: error, noop"
polis 2 serve "$GATHER" --tcp 0 --max-clients 0
err_line "polis: serve: --max-clients: '0' is not an integer in [1, 1024]"
polis 2 serve "$GATHER" --tcp 0 --idle-timeout 1.5
err_line "polis: serve: --idle-timeout: '1.5' is not an integer in [0, 86400] (seconds)"
polis 2 serve "$GATHER" --tcp 0 --write-timeout -1
err_line "polis: serve: --write-timeout: '-1' is not an integer in [0, 86400] (seconds)"
polis 2 serve "$GATHER" --tcp 0 --idle-timeout
err_line "polis: serve: --idle-timeout needs a value"
polis 2 serve "$GATHER" --isolate --stdio
err_line "polis: serve: --isolate is for --tcp (a --stdio server has one client, its parent)"
polis 2 serve "$GATHER" --stdio --write-timeout 5 --isolate
err_line "polis: serve: --write-timeout is for --tcp (a --stdio server has one client, its parent)"
polis 2 serve "$GATHER" --tcp 127.0.0.1:99999
err_line "polis: serve: --tcp: '127.0.0.1:99999' is not [HOST:]PORT with PORT in [0, 65535]"
polis 2 serve "$GATHER" --tcp 0.0.0.0:0
err_line "polis: serve: --tcp: '0.0.0.0' is not a loopback address; the protocol has no authentication, so pass --allow-remote to serve other machines"
polis 2 serve "$GATHER" --stdio --bogus
err_line "polis: serve: unknown option '--bogus'"
polis 1 serve "$SCN/not_json.json" --stdio </dev/null
err_has "polis: serve: "
out_empty

# ---- describe, reset, step, close on gather ----
polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "describe", "id": 7}
{"op": "reset", "seed": 3}
{"op": "step", "actions": {"agent_0": "move north", "agent_1": 2, "agent_2": {"action": "move", "direction": "west"}, "agent_3": "move_south"}}
{"op": "step", "actions": {}}
{"op": "step"}
{"op": "close"}
{"op": "describe"}
EOF
err_empty
out_lines 6
out_line '{"ok":true,"op":"describe","scenario":"gather","agents":["agent_0","agent_1","agent_2","agent_3"],"actions":["noop","move_north","move_south","move_west","move_east"],"action_docs":{"noop":"do nothing","move_north":"move to y-1","move_south":"move to y+1","move_west":"move to x-1","move_east":"move to x+1"},"formats":["json","metrics","text"],"default_seed":1,"max_steps":200,"on_bad_action":"error","in_episode":false,"macros":[],"id":7}'
# reset: the JSON view, the text view and the legal actions in mask order (agent_2 is
# at the east wall).
out_has '{"ok":true,"op":"reset","seed":3,"tick":0,"done":false,"agents":{"agent_0":{"observation":{"gather":{"position":[9,4],'
out_has '"text":"You are agent_0 at (9, 4) on the 12x12 grid'
out_has '"agent_2":{"observation":{"gather":{"position":[11,2],'
out_has '"legal_actions":["noop","move_north","move_south","move_west"]}'
out_has '"stats":{"steps":0,"bad_actions":{"agent_0":0,"agent_1":0,"agent_2":0,"agent_3":0}'
# step: every agent's reward and flags, then its new views.
out_has '{"ok":true,"op":"step","tick":1,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":{"gather":{"position":[9,3],'
out_has '"agent_2":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":{"gather":{"position":[10,2],'
out_has '"tick":2,'
out_has '"tick":3,'
out_has '"stats":{"steps":3,'
out_line '{"ok":true,"op":"close"}'
out_lacks '"in_episode":true'

# The same seed gives the same replies; the scenario's seed is the default.
printf '%s\n' '{"op":"reset","seed":3}' '{"op":"step","actions":{"agent_0":1}}' >"$TMP/req"
polis 0 serve "$GATHER" --stdio <"$TMP/req"
cp "$TMP/out" "$TMP/first"
polis 0 serve "$GATHER" --stdio <"$TMP/req"
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/first" || fail "serve: the same seed gave different replies"
polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "reset"}
{"op": "reset", "seed": "18446744073709551615"}
{"op": "reset", "seed": null}
EOF
out_has '{"ok":true,"op":"reset","seed":1,'
out_has '{"ok":true,"op":"reset","seed":18446744073709551615,'
out_lines 3

# ---- every error, each answered without ending the session ----
polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "step", "actions": {"agent_0": 1}}
not json
{"op": "describe"} trailing
[1, 2]
{"id": 1}
{"op": 5}
{"op": "fly"}
{"op": "reset", "seed": -1}
{"op": "reset", "seed": 1.5}
{"op": "reset", "seed": "12x"}
{"op": "reset", "seed": true}
{"op": "reset", "seed": 3}
{"op": "step", "actions": [1, 2]}
{"op": "step", "actions": {"bob": 1}}
{"op": "step", "actions": {"agent_0": [1]}}
{"op": "step", "actions": {"agent_0": true}}
{"op": "step", "actions": {"agent_0": "fly away"}}
{"op": "step", "actions": {"agent_0": "move"}}
{"op": "step", "actions": {"agent_0": 9}}
{"op": "step", "actions": {"agent_0": 1.5}}
{"op": "step", "actions": {"agent_0": ""}}
{"op": "step", "actions": {"agent_0": 1, "agent_2": "east"}}
{"op": "describe", "id": "after"}
EOF
err_empty
out_lines 23
out_line '{"ok":false,"error":{"code":"no_episode","message":"no episode: send {\"op\": \"reset\"} first","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_json","message":"malformed JSON at byte 0 of the request","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_json","message":"unexpected text at byte 19 after the request","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"a request is a JSON object with \"op\"","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"op\" is missing or not a string (ops: describe, reset, step, advance, close)","agent":null},"id":1}'
out_line '{"ok":false,"error":{"code":"unknown_op","message":"unknown op \"fly\" (ops: describe, reset, step, advance, close)","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"seed\": -1 is not an integer in [0, 2^53] (give larger seeds as a decimal string)","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"seed\": 1.5 is not an integer in [0, 2^53] (give larger seeds as a decimal string)","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"seed\": \"12x\" is not a decimal integer in [0, 2^64)","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"seed\" must be an integer or a decimal string","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"actions\" must be an object {agent name: action}","agent":null}}'
out_line '{"ok":false,"error":{"code":"unknown_agent","message":"\"actions\": no agent named \"bob\" (agents: agent_0, agent_1, agent_2, agent_3)","agent":"bob"}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"actions\".\"agent_0\": an action is an id, a name or text (a string), or a JSON action (an object)","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"bad_action","message":"agent 0 (agent_0): cannot parse action \"fly away\" (action names: noop, move_north, move_south, move_west, move_east; 1 parser tried)","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"bad_action","message":"gather: \"move\" needs a direction: north, south, west or east [parse \"move\", agent 0 (agent_0), tick 0]","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"bad_action","message":"agent agent_0: action 9 is not an action id (0..4)","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"bad_action","message":"agent agent_0: action 1.5 is not an action id (0..4)","agent":"agent_0"}}'
out_has '{"ok":false,"error":{"code":"bad_action","message":"agent 0 (agent_0): '
out_line '{"ok":false,"error":{"code":"illegal_action","message":"agent agent_2: action move_east is not legal at tick 0 (legal: noop, move_north, move_south, move_west)","agent":"agent_2"}}'
# The refused steps were not taken, and counted as bad actions.
out_has '"on_bad_action":"error","in_episode":true,"macros":[],"id":"after"}'
out_lacks '"op":"step"'

polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "reset", "seed": 3}
{"op": "step", "actions": {"agent_0": 1, "agent_2": "east"}}
{"op": "step", "actions": {"agent_0": 1}}
EOF
# After an illegal_action error the count shows in the next successful step's stats.
out_has '"stats":{"steps":1,"bad_actions":{"agent_0":0,"agent_1":0,"agent_2":1,"agent_3":0},"illegal_actions":{"agent_0":0,"agent_1":0,"agent_2":0,"agent_3":0}}'

# ---- --on-bad-action noop: the agent does noop, the reply says why, stats count it ----
polis 0 serve "$GATHER" --stdio --on-bad-action noop <<'EOF'
{"op": "reset", "seed": 3}
{"op": "step", "actions": {"agent_0": "fly away", "agent_1": 1, "agent_2": "east"}}
{"op": "step", "actions": {"agent_0": [1]}}
{"op": "step", "actions": {"nobody": 1}}
{"op": "describe"}
EOF
out_has '"on_bad_action":"noop"'
out_has '"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":"agent 0 (agent_0): cannot parse action \"fly away\" (action names: noop, move_north, move_south, move_west, move_east; 1 parser tried)","observation":{"gather":{"position":[9,4],'
out_has '"agent_2":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":"agent agent_2: action move_east is not legal at tick 0 (legal: noop, move_north, move_south, move_west)","observation":{"gather":{"position":[11,2],'
out_has '"stats":{"steps":1,"bad_actions":{"agent_0":1,"agent_1":0,"agent_2":1,"agent_3":0}'
# Wrong types and unknown agents stay errors under noop.
out_has '{"ok":false,"error":{"code":"bad_request","message":"\"actions\".\"agent_0\": an action'
out_has '{"ok":false,"error":{"code":"unknown_agent",'

# ---- the end of an episode ----
polis 0 serve "$TMP/short.json" --stdio <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {}}
{"op": "step", "actions": {"agent_0": 0}}
{"op": "step", "actions": {}}
{"op": "reset", "seed": 2}
EOF
out_has '"tick":2,"done":true,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":true,'
out_line '{"ok":false,"error":{"code":"episode_over","message":"the episode ended at tick 2: send {\"op\": \"reset\"}","agent":null}}'
out_has '{"ok":true,"op":"reset","seed":2,"tick":0,"done":false,'

# ---- engine failures: a failing step needs a reset; a failing renderer fails the reply ----
polis 0 serve "$SCN/fail_step.json" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {}}
{"op": "step", "actions": {}}
{"op": "step", "actions": {}}
{"op": "step", "actions": {}}
{"op": "reset"}
EOF
out_has '"agents":{"agent_0":{"observation":null,"text":null,"legal_actions":["noop"'
out_line '{"ok":false,"error":{"code":"engine_error","message":"probe: deliberate failure [hook post, tick 2] (send {\"op\": \"reset\"})","agent":null}}'
out_line '{"ok":false,"error":{"code":"no_episode","message":"no episode: send {\"op\": \"reset\"} first","agent":null}}'
out_has '{"ok":true,"op":"reset","seed":0,'
out_lines 6
polis 0 serve "$SCN/render_fail.json" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "describe"}
EOF
out_has '{"ok":false,"error":{"code":"engine_error","message":"'
out_has '"agent":"agent_1"}}'
out_has '"op":"describe"'

# ---- exploration (society): text and AdaSociety JSON actions ----
polis 0 serve "$EXPLORATION" --stdio <<'EOF'
{"op": "reset", "seed": 1}
{"op": "step", "actions": {"explorer_0": "move up", "explorer_1": {"action": "move_down"}, "explorer_2": "go left"}}
{"op": "step", "actions": {"explorer_0": "pick wood"}}
{"op": "step", "actions": {"explorer_0": "pick unobtainium"}}
EOF
out_has '"explorer_0":{"observation":{'
out_has '"text":"You are explorer_0 (agent 0, job explorer)'
out_has '"legal_actions":["noop","communicate_0",'
out_has '{"ok":true,"op":"step","tick":1,'
out_has '{"ok":false,"error":{"code":"illegal_action","message":"agent explorer_0: action pick_wood is not legal at tick 1'
out_has '{"ok":false,"error":{"code":"bad_action",'
out_has '"agent":"explorer_0"}}'
out_lines 4

# The reply that ends an episode (step or advance) carries the figures `polis eval` reports
# for it (the metrics plugin, added like eval adds it); earlier replies do not.
# --no-metrics leaves the scenario as it is.
polis 0 serve "$GATHER" --stdio --set max_steps=2 <<'EOF'
{"op": "reset", "seed": 3}
{"op": "step"}
{"op": "step", "actions": {"agent_0": "move north"}}
EOF
out_lines 3
checks=$((checks + 1))
[ "$(head -n 2 "$TMP/out" | grep -c '"metrics"')" = 0 ] || fail "metrics before the episode ended"
checks=$((checks + 1))
tail -n 1 "$TMP/out" | grep -qF '"done":true' || fail "the last step did not end the episode"
out_has ',"metrics":{"steps":2,"reward.mean":0,"reward.total":0,"reward.min":0,"reward.max":0,"fairness":null,"oracle":null,"total_reward_normalised":null,"mean_reward_normalised":null,"illegal_actions":0}}'
polis 0 serve "$GATHER" --stdio --set max_steps=1 --no-metrics <<'EOF'
{"op": "describe"}
{"op": "reset"}
{"op": "advance"}
EOF
out_has '"formats":["json","text"]'
out_has '"stopped":"episode_done"'
out_lacks '"metrics"'

# A client that closes stdin without "close" ends the session cleanly; blank lines are
# ignored; an overlong line is refused and the session goes on.
/usr/bin/python3 -c 'import sys; sys.stdout.write("\n" + "x" * 1048577 + "\n{\"op\":\"describe\"}\n")' >"$TMP/long"
polis 0 serve "$GATHER" --stdio <"$TMP/long"
out_line '{"ok":false,"error":{"code":"line_too_long","message":"the request is 1048577 bytes; the limit is 1048576","agent":null}}'
out_has '"op":"describe"'
out_lines 2

finish
