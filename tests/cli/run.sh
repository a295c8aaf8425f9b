# run plays episodes: reproducible per seed, counts events, honours --steps/--episodes/--policy.
. "$(dirname "$0")/lib.sh"

# Strips the timing, the only field allowed to differ between identical runs.
strip_speed() { sed 's/,"steps_per_sec":[^,}]*//' "$TMP/out"; }

polis 0 run "$GATHER" --seed 1 --json
out_lines 1
out_has '"scenario":"gather","policy":"random","episode":1,"seed":1,"steps":200,"done":true,'
out_has '"illegal":{"agent_0":0,"agent_1":0,"agent_2":0,"agent_3":0}'
out_has '"events":{"agent.moved":'
out_has '"state_hash":"'
err_empty
strip_speed >"$TMP/first"
polis 0 run "$GATHER" --seed 1 --json
strip_speed >"$TMP/second"
checks=$((checks + 1))
cmp -s "$TMP/first" "$TMP/second" || fail "two runs with --seed 1 differ: $(cat "$TMP/first") / $(cat "$TMP/second")"
polis 0 run "$GATHER" --seed 2 --json
strip_speed >"$TMP/third"
checks=$((checks + 1))
if cmp -s "$TMP/first" "$TMP/third"; then fail "--seed 1 and --seed 2 gave the same episode"; fi
# Without --seed the scenario's seed (1) is used.
polis 0 run "$GATHER" --json
strip_speed >"$TMP/default"
checks=$((checks + 1))
cmp -s "$TMP/first" "$TMP/default" || fail "the default seed is not the scenario's seed 1"

# The noop policy never moves: nothing is collected and nothing is illegal.
polis 0 run "$GATHER" --policy noop --steps 20 --json
out_has '"steps":20,"done":false,'
out_has '"returns":{"agent_0":0,"agent_1":0,"agent_2":0,"agent_3":0}'
out_has '"events":{"agent.moved":0,"coin.collected":0}'

polis 0 run "$GATHER" --episodes 3 --seed 5 --steps 10 --json
out_lines 3
out_has '"episode":1,"seed":5,"steps":10,"done":false'
out_has '"episode":2,"seed":6,"steps":10,"done":false'
out_has '"episode":3,"seed":7,"steps":10,"done":false'

# Human-readable output: one block per episode and a closing summary.
polis 0 run "$GATHER" --seed 3 --steps 50
out_has "episode 1  seed 3  steps 50  (stopped by --steps)"
out_has "agent_3"
out_has "agent.moved"
out_has "state hash 0x"
out_has "gather: 1 episode, policy random, 50 steps, "
polis 0 run "$GATHER" --seed 3 --episodes 2 --quiet
out_lines 1
out_has "gather: 2 episodes, policy random, 400 steps, "

# The example plugin: the potato explodes after its fuse of 15 steps and ends the episode.
polis 0 run "$POTATO" --plugin-path "$PLUGDIR" --json
out_has '"scenario":"hot_potato","policy":"random","episode":1,"seed":7,"steps":15,"done":true,'
out_has '"potato.exploded":1'
for seed in 1 2 3 4; do
    polis 0 run "$POTATO" --plugin-path "$PLUGDIR" --seed $seed --policy noop --json
    out_has '"policy":"noop",'
    # Nobody passes: the first holder pays 0.1 for 15 steps and the 5.0 penalty.
    out_has '"potato.passed":0,"potato.exploded":1'
    out_has ':-6.5'
done

# The kernel's uniform policy (all actions, mask ignored) and a plugin's policy are named.
polis 0 run "$GATHER" --policy uniform --seed 3 --steps 40
out_has "gather: 1 episode, policy uniform, 40 steps, "
out_has "episode 1  seed 3  steps 40  (stopped by --steps)"
polis 0 run "$GATHER" --policy uniform --seed 3 --steps 40 --json
out_has '"policy":"uniform",'
out_has '"illegal":{"agent_0":0,"agent_1":0,"agent_2":0,"agent_3":0}'
polis 0 run "$SRC/rulesets/exploration/exploration.json" --policy greedy --steps 5 --quiet
out_has "exploration: 1 episode, policy greedy, 5 steps, "

# A bare scenario name is looked up among the shipped scenarios, as the Python SDK does.
polis 0 run exploration --steps 5 --quiet
out_has "exploration: 1 episode, policy random, 5 steps, "
# Every shipped scenario resolves by its name, to its own file (the same as by path).
for f in "$SRC"/rulesets/*/*.json; do
    name=$(basename "$f" .json)
    polis 0 validate "$f"
    cp "$TMP/out" "$TMP/by_path"
    polis 0 validate "$name"
    checks=$((checks + 1))
    cmp -s "$TMP/out" "$TMP/by_path" || fail "validate $name: $(cat "$TMP/out") / by path: $(cat "$TMP/by_path")"
done
polis 1 run explorashun --steps 5
err_has "polis: run: 'explorashun' is neither a file nor a scenario name; scenario names: "
err_has " exploration exploration_lua exploration_physical "
err_has " gather gather_lua "
out_empty
# A name that is a file in the current directory stays that file; a path is never a name.
mkdir -p "$TMP/cwd"
cp "$GATHER" "$TMP/cwd/exploration"
(cd "$TMP/cwd" && "$POLIS" validate exploration) >"$TMP/out" 2>&1
checks=$((checks + 1))
grep -qxF "ok: gather: 4 agents, 5 actions, 64 obs bytes" "$TMP/out" || fail "a file named like a scenario: $(cat "$TMP/out")"
polis 1 run ./exploration --steps 5
err_has "cannot read ./exploration"
# POLIS_SCENARIO_PATH comes first.
mkdir -p "$TMP/scn/mine"
sed '0,/"name": *"gather"/s//"name": "gather_mine"/' "$GATHER" >"$TMP/scn/mine/gather.json"
POLIS_SCENARIO_PATH=$TMP/scn polis 0 validate gather
out_has "ok: gather_mine: "
for cmd in "eval --episodes 1 --steps 5" "bench --steps 5" "render"; do
    # shellcheck disable=SC2086
    polis 0 $cmd gather
done

# A step that fails ends the run with exit 1 and the env's message, placed.
polis 1 run "$SCN/fail_step.json" --plugin-path "$TESTPLUG" --json
err_line "polis: probe: deliberate failure [hook post, tick 2]"
out_empty

# A missing plugin is an env error: exit 1, nothing on stdout.
polis 1 run "$POTATO" --seed 1
err_has "polis: "
err_has "hot_potato"
out_empty

finish
