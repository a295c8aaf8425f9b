# polis bench: argument errors (exit 2, exact messages), scenario and override errors
# (exit 1), and the report's shape on tiny runs. No timing is asserted anywhere.
. "$(dirname "$0")/lib.sh"

Q="--steps 3 --repeat 1 --warmup 0"

polis 0 help bench
out_has "usage: polis bench SCENARIO [options]"
out_has "--policy random|physical"
polis 0 bench --help
out_has "--exclude-actions LIST"

polis 2 bench
err_line "polis: bench: missing SCENARIO (a scenario .json file)"
err_line "Try 'polis help bench'."
out_empty
polis 2 bench "$GATHER" extra
err_line "polis: bench: unexpected argument 'extra' (SCENARIO is '$GATHER')"
polis 2 bench "$GATHER" --frob
err_line "polis: bench: unknown option '--frob'"
polis 2 bench "$GATHER" --episodes 3
err_line "polis: bench: unknown option '--episodes'"
polis 2 bench "$GATHER" --steps
err_line "polis: bench: --steps needs a value"
polis 2 bench "$GATHER" --json=1
err_line "polis: bench: --json takes no value"
polis 2 bench "$GATHER" --no-obs=yes
err_line "polis: bench: --no-obs takes no value"
polis 2 bench "$GATHER" --steps 0
err_line "polis: bench: --steps: '0' is not a positive integer"
polis 2 bench "$GATHER" --steps=1.5
err_line "polis: bench: --steps: '1.5' is not a positive integer"
polis 2 bench "$GATHER" --envs 0
err_line "polis: bench: --envs: '0' is not an integer in [1, 2147483647]"
polis 2 bench "$GATHER" --envs 2147483648
err_line "polis: bench: --envs: '2147483648' is not an integer in [1, 2147483647]"
polis 2 bench "$GATHER" --threads 0
err_line "polis: bench: --threads: '0' is not an integer in [1, 2147483647]"
polis 2 bench "$GATHER" --threads 3 --envs 2
err_line "polis: bench: --threads 3 is more than --envs 2 (a thread steps whole envs)"
polis 2 bench "$GATHER" --threads 2
err_line "polis: bench: --threads 2 is more than --envs 1 (a thread steps whole envs)"
polis 2 bench "$GATHER" --agents -4
err_line "polis: bench: --agents: '-4' is not an integer in [1, 2147483647]"
polis 2 bench "$GATHER" --agents 0
err_line "polis: bench: --agents: '0' is not an integer in [1, 2147483647]"
polis 2 bench "$GATHER" --repeat 0
err_line "polis: bench: --repeat: '0' is not an integer in [1, 1000000]"
polis 2 bench "$GATHER" --warmup -1
err_line "polis: bench: --warmup: '-1' is not a non-negative integer"
polis 2 bench "$GATHER" --seed x
err_line "polis: bench: --seed: 'x' is not an integer in [0, 2^64)"
polis 2 bench "$GATHER" --policy greedy
err_line "polis: bench: --policy: 'greedy' is not one of: random, physical"
polis 2 bench "$GATHER" --exclude-actions ""
err_line "polis: bench: --exclude-actions: empty list"
polis 2 bench "$GATHER" --exclude-actions move,,x
err_line "polis: bench: --exclude-actions: 'move,,x' has an empty item"
polis 2 bench "$GATHER" --exclude-actions move,
err_line "polis: bench: --exclude-actions: 'move,' has an empty item"
polis 2 bench "$GATHER" --exclude-actions @
err_line "polis: bench: --exclude-actions: '@' has an empty item"
polis 2 bench "$GATHER" $Q --exclude-actions move_up
err_line "polis: bench: --exclude-actions: 'move_up' matches no action of gather (noop is never excluded)"
out_empty
polis 2 bench "$GATHER" $Q --exclude-actions noop
err_line "polis: bench: --exclude-actions: 'noop' matches no action of gather (noop is never excluded)"
polis 2 bench "$GATHER" $Q --exclude-actions @social
err_line "polis: bench: --exclude-actions: '@social' matches no action of gather (noop is never excluded)"
polis 2 bench "$GATHER" --set grid.width
err_line "polis: bench: --set: 'grid.width' is not PATH=JSON (e.g. grid.width=64)"
polis 2 bench "$GATHER" --set =3
err_line "polis: bench: --set: '=3' is not PATH=JSON (e.g. grid.width=64)"
polis 2 bench "$GATHER" --set name=gather2
err_line "polis: bench: --set: 'name=gather2': the value is not JSON (quote strings: name='\"text\"')"
polis 2 bench "$GATHER" --plugin-path ""
err_line "polis: bench: --plugin-path: empty directory list"

# The scenario, the overrides and the vec refuse: exit 1 with the engine's message.
polis 1 bench "$TMP/nope.json"
err_line "polis: cannot read $TMP/nope.json: No such file or directory"
polis 1 bench "$GATHER" --agents 70000
err_line "polis: env 0: $GATHER: agents: expected integer in [1, 65536], got 70000 (scenario with overrides)"
polis 1 bench "$GATHER" --set plugins.gather.params.coins=-1
err_line "polis: env 0: $GATHER: plugins[0].params.coins: expected integer in [0, 1000000], got -1 (scenario with overrides)"
polis 1 bench "$GATHER" --set plugins.gahter.params.coins=1
err_line "polis: env 0: overrides: \"plugins.gahter.params.coins\": no element of plugins is named \"gahter\""
polis 1 bench "$GATHER" --set grid.width.x=1
err_line "polis: env 0: overrides: \"grid.width.x\": grid.width is a number, not an object or array"
polis 1 bench "$SCN/fail_step.json" --plugin-path "$TESTPLUG" $Q
err_line "polis: env 0: probe: deliberate failure [hook post, tick 2]"

# The report of tiny runs: what was run, never how fast.
polis 0 bench "$GATHER" $Q
out_line "bench gather: 4 agents x 1 env, 1 thread, policy random, observations on, seed 1"
out_line "timed: 1 repetition x 3 steps after 0 warm-up steps; 0 auto-resets"
out_has "env steps/s"
out_has "agent-steps/s"
out_has "ns/agent-step"
out_has "env steps/CPU-s"
out_has "agent-steps/CPU-s"
out_has "observations: 64 bytes/agent-step, 256 bytes/vec step, written at "
out_has "memset: "
out_has "policy: "
out_has "CPU time: "
out_has " agent-steps/CPU-s"
out_has "peak memory: "
out_lacks "pool: "   # one thread has nothing to hand off
err_empty
polis 0 bench "$GATHER" --steps 2 --repeat 2 --warmup 1 --agents 9 --envs 3 --threads 3 --seed 5 --no-obs
out_line "bench gather: 9 agents x 3 envs, 3 threads, policy random, observations off, seed 5"
out_line "timed: 2 repetitions x 2 steps after 1 warm-up steps; 0 auto-resets"
out_has "observations: 64 bytes/agent-step, 1728 bytes/vec step, not written (--no-obs)"
# what the pool decided over the 4 timed steps (which way each went depends on the timing)
out_has "pool: "
out_has " of 4 timed steps handed off to the threads ("
out_has " run on the calling thread alone; "
out_has " found handing off faster"
polis 0 bench "$GATHER" $Q --set max_steps=2 --set 'grid={"width": 20}'
out_line "timed: 1 repetition x 3 steps after 0 warm-up steps; 1 auto-reset"
polis 0 bench "$GATHER" $Q --policy physical
out_line "bench gather: 4 agents x 1 env, 1 thread, policy physical, observations on, seed 1"
polis 0 bench "$GATHER" $Q --exclude-actions move_n,move_s
out_line "bench gather: 4 agents x 1 env, 1 thread, policy random (2 of 5 actions excluded), observations on, seed 1"
polis 0 bench "$GATHER" $Q --policy physical --exclude-actions @gather
out_line "bench gather: 4 agents x 1 env, 1 thread, policy physical (4 of 5 actions excluded), observations on, seed 1"
polis 0 bench "$GATHER" $Q --envs 2 --threads 2 --json
out_lines 1
out_has '"scenario":"gather",'
out_has '"agents":4,"envs":2,"threads":2,"policy":"random","actions":5,"excluded_actions":0,"observations":true,"seed":1,"steps":3,"repeat":1,"warmup":0,"autoresets":0,'
out_has '"env_steps_per_s":{"median":'
out_has '"obs_bytes_per_agent_step":64,"obs_bytes_per_step":512,'
out_has '"agent_steps_per_cpu_s":{"median":'
out_has '"env_steps_per_cpu_s":{"median":'
out_has '"policy_cpu_ns_per_agent_step":'
out_has '"agent_steps_per_cpu_s_with_policy":'
out_has '"cpu_s_per_wall_s":'
out_has '"peak_rss_mib":'
out_has '"pool_serial_steps":'
out_has '"pool_parallel_steps":'
out_has '"pool_probes":'
out_has '"pool_parallel_verdicts":'
err_empty
polis 0 bench "$GATHER" $Q --no-obs --json
out_has '"obs_write_bytes_per_s":null,'
out_has '"compact":false,'

# --compact: integer fields in the narrowest dtype their declared range fits (Exploration's
# grid becomes i8 once piles show at most 127 units: 25,976 -> 13,176 bytes per agent)
EXPLORATION=$SRC/rulesets/exploration/exploration.json
polis 0 bench "$EXPLORATION" $Q --compact --set plugins.society.params.pile_shown=127
out_line "bench exploration: 8 agents x 1 env, 1 thread, policy random, observations on (compact), seed 0"
out_has "observations: 13176 bytes/agent-step, 105408 bytes/vec step, written at "
polis 0 bench "$EXPLORATION" $Q --set plugins.society.params.pile_shown=127 --json
out_has '"obs_bytes_per_agent_step":25976,'
out_has '"compact":false,'
polis 2 bench "$GATHER" --compact=yes
err_line "polis: bench: --compact takes no value"

# --pixels: every agent's pixel observation drawn after each step (polis_pixels_obs); survival
# at 7 px is Craftax-Classic-Pixels' 63 x 63 x 3 frame
SURVIVAL=$SRC/rulesets/survival/survival_mac.json
polis 0 bench "$SURVIVAL" $Q --pixels 7
out_has "pixels: 63 x 63 x 3 bytes/agent (cells of 7 px, downscale 1), drawn on the calling thread at "
out_has " frames/CPU-s; stepping and drawing "
polis 0 bench "$SURVIVAL" $Q --pixels 14/2,grey --json
out_has '"pixels":{"shape":[63,63,1],"cell_px":14,"downscale":2,"grey":true,"frames_per_s":{"median":'
polis 0 bench "$GATHER" $Q --json
out_has '"pixels":null'
polis 2 bench "$SURVIVAL" --pixels 7/2
err_line "polis: bench: --pixels: '7/2' is not CELL[/D][,grey] (CELL 1 to 64 pixels per cell, D a divisor of CELL)"
polis 2 bench "$SURVIVAL" --pixels 65
err_line "polis: bench: --pixels: '65' is not CELL[/D][,grey] (CELL 1 to 64 pixels per cell, D a divisor of CELL)"
polis 2 bench "$SURVIVAL" --pixels 7,gray
err_line "polis: bench: --pixels: '7,gray' is not CELL[/D][,grey] (CELL 1 to 64 pixels per cell, D a divisor of CELL)"
echo '{"agents": 2, "max_steps": 5}' > "$TMP/nomap.json"
polis 1 bench "$TMP/nomap.json" $Q --pixels 7
err_line "polis: bench: --pixels: pixels: the game registered no scene map (look_map), nothing to draw"

finish
