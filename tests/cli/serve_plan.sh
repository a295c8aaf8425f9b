# polis serve --stdio: plans (macro actions) in the agent protocol — plan commands in
# "actions", the per-agent "plan" report, "advance", and every plan error (docs/clients.md).
# The macros come from the test plugin macro_probe (tests/plugins/macro_probe.c): agents walk
# on a line with "fwd" and "back"; WALK n, BACK n, WANDER n and the broken BAD.
. "$(dirname "$0")/lib.sh"
EXPLORATION=$SRC/rulesets/exploration/exploration.json

cat >"$TMP/line.json" <<'EOF'
{"polis": 1, "name": "line", "seed": 1, "max_steps": 12, "agents": 2,
 "plugins": [{"name": "macro_probe", "params": {"finish_at": 5}}]}
EOF
LINE="$TMP/line.json"

# ---- polis describe lists the macros (text and JSON) ----
polis 0 describe "$LINE" --plugin-path "$TESTPLUG"
out_line 'macros (4)'
out_line '  usage       owner        doc'
out_line '  WALK <n>    macro_probe  Steps forward n times (1..100); done when walked.'
out_line '  BAD <how>   macro_probe  A broken macro.'
polis 0 describe "$LINE" --plugin-path "$TESTPLUG" --json
out_has '"macros":	[{'
out_has '"usage":	"BACK <n>",'

# ---- the describe reply lists the macros ----
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "describe"}
EOF
err_empty
out_line '{"ok":true,"op":"describe","scenario":"line","agents":["agent_0","agent_1"],"actions":["noop","fwd","back"],"action_docs":{"noop":"do nothing","fwd":"one step forward","back":"one step back"},"formats":["metrics"],"default_seed":1,"max_steps":12,"on_bad_action":"error","in_episode":false,"macros":[{"name":"WALK","usage":"WALK <n>","doc":"Steps forward n times (1..100); done when walked."},{"name":"BACK","usage":"BACK <n>","doc":"Steps back n times; impossible at the wall (0)."},{"name":"WANDER","usage":"WANDER <n>","doc":"n ticks of random steps forward or pauses."},{"name":"BAD","usage":"BAD <how>","doc":"A broken macro."}]}'

# ---- a plan runs to done, one is impossible at once, an action cancels one, reset ends one ----
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {"agent_0": "walk 2"}}
{"op": "step", "actions": {}}
{"op": "step", "actions": {"agent_1": {"plan": "BACK 1"}}}
{"op": "step", "actions": {"agent_0": " WALK 50 "}}
{"op": "step", "actions": {"agent_0": "back"}}
{"op": "step", "actions": {"agent_1": "WANDER 9"}}
{"op": "reset"}
{"op": "step"}
EOF
err_empty
out_lines 9
# the plan's first action is taken in the step that starts it (agent_0 can go back after it)
out_line '{"ok":true,"op":"step","tick":1,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"walk 2","status":"running","why":null},"observation":null,"text":null,"legal_actions":["noop","fwd","back"]},"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,"text":null,"legal_actions":["noop","fwd"]}},"stats":{"steps":1,"bad_actions":{"agent_0":0,"agent_1":0},"illegal_actions":{"agent_0":0,"agent_1":0}}}'
# the reply of the tick that reaches the goal reports it
out_has '"tick":2,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"walk 2","status":"done","why":"walked 2 steps, now at 2"},'
out_has '"tick":3,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"BACK 1","status":"impossible","why":"hit the wall at 0 with 1 steps to go"},'
# the command is reported trimmed, as the kernel keeps it
out_has '"tick":4,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WALK 50","status":"running","why":null},'
# "back" is an action's exact name, so it is that action even though BACK is a macro
out_has '"tick":5,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WALK 50","status":"cancelled","why":"an action was given instead"},'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WANDER 9","status":"running","why":null},'
out_has '{"ok":true,"op":"reset","seed":1,"tick":0,"done":false,"agents":{"agent_0":{"observation":null,"text":null,"legal_actions":["noop","fwd"]},"agent_1":{"plan":{"command":"WANDER 9","status":"cancelled","why":"reset"},'
out_line '{"ok":true,"op":"step","tick":1,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,"text":null,"legal_actions":["noop","fwd"]},"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,"text":null,"legal_actions":["noop","fwd"]}},"stats":{"steps":1,"bad_actions":{"agent_0":0,"agent_1":0},"illegal_actions":{"agent_0":0,"agent_1":0}}}'

# ---- advance: until a plan ends, for max_ticks, until the episode ends ----
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "advance", "actions": {"agent_0": "WALK 3", "agent_1": "WANDER 100"}, "max_ticks": 50}
{"op": "advance", "max_ticks": 2}
{"op": "advance", "actions": {"agent_1": "fwd"}, "max_ticks": 1}
{"op": "advance", "actions": {"agent_0": "WALK 9"}}
EOF
err_empty
out_lines 5
out_has '{"ok":true,"op":"advance","ticks":3,"stopped":"plan_ended","tick":3,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WALK 3","status":"done","why":"walked 3 steps, now at 3"},'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WANDER 100","status":"running","why":null},'
# agents without a plan do noop
out_has '{"ok":true,"op":"advance","ticks":2,"stopped":"max_ticks","tick":5,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,'
# an explicit action in the first tick cancels the plan
out_has '{"ok":true,"op":"advance","ticks":1,"stopped":"max_ticks","tick":6,'
out_has '"plan":{"command":"WANDER 100","status":"cancelled","why":"an action was given instead"}'
# agent_0 reaches 5 and finishes: its plan ends as impossible
out_has '{"ok":true,"op":"advance","ticks":2,"stopped":"plan_ended","tick":8,"done":false,"agents":{"agent_0":{"reward":0,"terminated":true,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WALK 9","status":"impossible","why":"agent finished"},'
# the end of the episode stops an advance (nobody finishes on this line)
sed 's/"finish_at": 5/"finish_at": 0/' "$LINE" >"$TMP/endless.json"
polis 0 serve "$TMP/endless.json" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset", "seed": 4}
{"op": "advance", "actions": {"agent_1": "WANDER 100"}}
EOF
out_has '{"ok":true,"op":"advance","ticks":12,"stopped":"episode_done","tick":12,"done":true,'
out_has '"plan":{"command":"WANDER 100","status":"impossible","why":"agent finished"}'
out_has '"truncated":true,'

# The same requests give the same replies (WANDER draws from the policy generator).
printf '%s\n' '{"op":"reset","seed":9}' '{"op":"advance","actions":{"agent_0":"WANDER 7","agent_1":"WANDER 11"},"max_ticks":30}' '{"op":"advance"}' >"$TMP/req"
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <"$TMP/req"
cp "$TMP/out" "$TMP/first"
out_has '"stopped":"plan_ended","tick":7,'
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <"$TMP/req"
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/first" || fail "serve: the same plans gave different replies"

# ---- errors ----
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "advance"}
{"op": "reset"}
{"op": "step", "actions": {"agent_0": {"plan": "FLY 2"}}}
{"op": "step", "actions": {"agent_0": "FLY 2"}}
{"op": "step", "actions": {"agent_0": {"plan": 3}}}
{"op": "step", "actions": {"bob": "WALK 1"}}
{"op": "step", "actions": {"agent_0": "WALK 5", "agent_1": "WALK x"}}
{"op": "step", "actions": {}}
{"op": "advance", "max_ticks": 0}
{"op": "advance", "max_ticks": 10001}
{"op": "advance", "max_ticks": "5"}
{"op": "advance", "max_ticks": 1.5}
{"op": "advance", "actions": {"agent_0": "WALK 0"}}
{"op": "step", "actions": {"agent_0": "BAD illegal", "agent_1": "BAD fail"}}
{"op": "advance", "actions": {"agent_0": "WALK 9"}}
{"op": "step", "actions": {"agent_0": "WALK 1"}}
EOF
err_empty
out_lines 16
out_line '{"ok":false,"error":{"code":"no_episode","message":"no episode: send {\"op\": \"reset\"} first","agent":null}}'
out_line '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (agent_0): unknown macro \"FLY\" (macros: WALK, BACK, WANDER, BAD)","agent":"agent_0"}}'
# a string whose first word is no macro is an ordinary (here unparseable) action
out_line '{"ok":false,"error":{"code":"bad_action","message":"agent 0 (agent_0): cannot parse action \"FLY 2\" (action names: noop, fwd, back; 0 parsers tried); plan commands: WALK <n>, BACK <n>, WANDER <n>, BAD <how>","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"actions\".\"agent_0\".\"plan\" must be a plan command (a string such as \"GATHER 3 wood\")","agent":"agent_0"}}'
out_line '{"ok":false,"error":{"code":"unknown_agent","message":"\"actions\": no agent named \"bob\" (agents: agent_0, agent_1)","agent":"bob"}}'
out_line '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 1 (agent_1): WALK: macro_probe: WALK: the step count must be 1 to 100, got \"x\"","agent":"agent_1"}}'
# the refused request started no plan (agent_0's WALK 5 is gone) and was counted
out_line '{"ok":true,"op":"step","tick":1,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,"text":null,"legal_actions":["noop","fwd"]},"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,"text":null,"legal_actions":["noop","fwd"]}},"stats":{"steps":1,"bad_actions":{"agent_0":2,"agent_1":1},"illegal_actions":{"agent_0":0,"agent_1":0}}}'
out_line '{"ok":false,"error":{"code":"bad_request","message":"\"max_ticks\" must be an integer in [1, 10000] (default 100)","agent":null}}'
out_has '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (agent_0): WALK: macro_probe: WALK: the step count must be 1 to 100, got \"0\"","agent":"agent_0"}}'
# a macro that misbehaves ends its plan as impossible with the engine's message; the
# episode goes on
out_has '"plan":{"command":"BAD illegal","status":"impossible","why":"macro error: plan_next: macro BAD: agent 0 (agent_0): action 2 (back) is not legal at tick 1"}'
out_has '"plan":{"command":"BAD fail","status":"impossible","why":"macro error: macro_probe: bad plan failed for agent 1 [macro BAD, agent 1 (agent_1), tick 1]"}'
# a finished agent takes no plan
out_has '"stopped":"plan_ended","tick":7,'
out_line '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (agent_0) has finished the episode (tick 7)","agent":"agent_0"}}'
checks=$((checks + 1))
[ "$(grep -c '"bad_request","message":"\\"max_ticks\\"' "$TMP/out")" -eq 4 ] ||
    fail "serve: expected 4 max_ticks errors"

# A refused request leaves every agent given a plan command in it without a plan, also one
# after the refused agent; an agent given no command keeps its plan.
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {"agent_0": "WANDER 50", "agent_1": "WALK 50"}}
{"op": "step", "actions": {"agent_0": "WALK nope", "agent_1": "WALK 3"}}
{"op": "step", "actions": {"agent_0": "BACK nope"}}
{"op": "step"}
EOF
out_lines 5
out_line '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (agent_0): WALK: macro_probe: WALK: the step count must be 1 to 100, got \"nope\"","agent":"agent_0"}}'
out_has '"tick":2,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,'
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {"agent_0": "WANDER 50", "agent_1": "WALK 50"}}
{"op": "step", "actions": {"agent_0": "BACK nope"}}
{"op": "step"}
EOF
out_has '"tick":2,"done":false,"agents":{"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"observation":null,'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"WALK 50","status":"running","why":null},'

# ---- --on-bad-action noop: a refused plan command is a noop with the reason ----
polis 0 serve "$LINE" --plugin-path "$TESTPLUG" --stdio --on-bad-action noop <<'EOF'
{"op": "reset"}
{"op": "step", "actions": {"agent_0": "WALK lots", "agent_1": "walk 1"}}
EOF
out_has '"agent_0":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":"plan_start: agent 0 (agent_0): WALK: macro_probe: WALK: the step count must be 1 to 100, got \"lots\"","observation":null,'
out_has '"agent_1":{"reward":0,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"walk 1","status":"done","why":"walked 1 steps, now at 1"},'
out_has '"stats":{"steps":1,"bad_actions":{"agent_0":1,"agent_1":0}'

# ---- a scenario without macros: macro words are ordinary actions ----
polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "reset", "seed": 3}
{"op": "step", "actions": {"agent_0": "GATHER 3 wood", "agent_1": {"plan": "GOTO 1 1"}}}
{"op": "advance", "max_ticks": 3}
EOF
out_has '{"ok":false,"error":{"code":"bad_action","message":"agent 0 (agent_0): cannot parse action \"GATHER 3 wood\"'
out_has '"stopped":"max_ticks","tick":3,'
polis 0 serve "$GATHER" --stdio <<'EOF'
{"op": "reset", "seed": 3}
{"op": "step", "actions": {"agent_1": {"plan": "GOTO 1 1"}}}
EOF
out_line '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 1 (agent_1): the scenario has no macros","agent":"agent_1"}}'

# ---- the society macros on the exploration scenario (rulesets/society/plan.c) ----
polis 0 serve "$EXPLORATION" --stdio <<'EOF'
{"op": "describe"}
{"op": "reset", "seed": 1}
{"op": "advance", "actions": {"explorer_0": "EXPLORE", "explorer_1": "GOTO 1 1", "explorer_2": "gather 1 wood"}, "max_ticks": 200}
{"op": "advance", "actions": {"explorer_0": "noop"}, "max_ticks": 200}
{"op": "step", "actions": {"explorer_0": "GATHER 1 unobtainium"}}
{"op": "step", "actions": {"explorer_0": {"plan": "GOTO 1"}}}
EOF
err_empty
out_lines 6
out_has '"macros":[{"name":"GATHER","usage":"GATHER [<n>] <resource>","doc":"'
out_has '{"name":"EXPLORE","usage":"EXPLORE'
out_has '{"name":"GOTO","usage":"GOTO <x> <y>","doc":"'
out_has '"plan":{"command":"EXPLORE","status":"done","why":"found a '
out_has '"plan":{"command":"gather 1 wood","status":"running","why":null}'
out_has '"plan":{"command":"GOTO 1 1","status":"done","why":"arrived at (1, 1)"}'
# the wording of the refusals is society's (rulesets/society/tests test it); here they must
# arrive as bad_plan errors naming the agent and the macro
out_has '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (explorer_0): GATHER: society: \"unobtainium\" '
out_has '"agent":"explorer_0"}}'
out_has '{"ok":false,"error":{"code":"bad_plan","message":"plan_start: agent 0 (explorer_0): GOTO: society: '


# ---- Survival through the protocol: primitive text actions, a plan that ends, advance ----
SURVIVAL=$SRC/rulesets/survival/survival_mac.json
polis 0 serve "$SURVIVAL" --stdio <<'EOF2'
{"op":"reset","seed":1}
{"op":"step","actions":{"agent_0":"do","agent_1":"move left"}}
{"op":"step","actions":{"agent_0":"COLLECT wood"}}
{"op":"advance","max_ticks":30}
{"op":"step","actions":{"agent_2":"fly away"}}
EOF2
out_has '"op":"reset","seed":1,"tick":0,"done":false,"agents":{"agent_0":{"observation":{"survival":{"player":0,"alive":true'
out_has '"plan":{"command":"COLLECT wood","status":"running","why":null}'
out_has '"op":"advance","ticks":1,"stopped":"plan_ended","tick":3'
out_has '"reward":1,"terminated":false,"truncated":false,"illegal":false,"bad_action":null,"plan":{"command":"COLLECT wood","status":"done","why":"holding 1 wood"}'
out_has '"code":"bad_action","message":"agent 2 (agent_2): cannot parse action \"fly away\"'
out_has 'plan commands: COLLECT [<n>] <wood|stone|coal|iron|diamond|sapling>, DRINK, EAT, SLEEP'

finish
