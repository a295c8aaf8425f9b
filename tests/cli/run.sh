# run plays episodes: reproducible per seed, counts events, honours --steps/--episodes/--policy.
. "$(dirname "$0")/lib.sh"

# Strips the timing, the only field allowed to differ between identical runs.
strip_speed() { sed 's/,"steps_per_sec":[^,}]*//' "$TMP/out"; }

polis 0 run "$GATHER" --seed 1 --json
out_lines 1
out_has '"scenario":"gather","episode":1,"seed":1,"steps":200,"done":true,'
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
out_has "gather: 1 episode, 50 steps, "
polis 0 run "$GATHER" --seed 3 --episodes 2 --quiet
out_lines 1
out_has "gather: 2 episodes, 400 steps, "

# The example plugin: the potato explodes after its fuse of 15 steps and ends the episode.
polis 0 run "$POTATO" --plugin-path "$PLUGDIR" --json
out_has '"scenario":"hot_potato","episode":1,"seed":7,"steps":15,"done":true,'
out_has '"potato.exploded":1'
for seed in 1 2 3 4; do
    polis 0 run "$POTATO" --plugin-path "$PLUGDIR" --seed $seed --policy noop --json
    # Nobody passes: the first holder pays 0.1 for 15 steps and the 5.0 penalty.
    out_has '"potato.passed":0,"potato.exploded":1'
    out_has ':-6.5'
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
