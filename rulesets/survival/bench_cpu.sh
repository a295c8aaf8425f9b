#!/bin/sh
# rulesets/survival/bench_cpu.sh — CPU time per agent-step of polis bench for 1, 3, 8 and 16
# players (the machine is shared, so wall time is not ours). Run from the repository root
# after building build-bench/ (Release). EXTRA="--no-obs" or EXTRA="--set ..." adds options.
B=build-bench/polis; S=rulesets/survival/survival_mac.json
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'; }
base=$(cpu $B bench $S --steps 2 --repeat 1 --warmup 0 $EXTRA)
for n in 1 3 8 16; do
  steps=$((2000000 / n))
  t=$(cpu $B bench $S --agents $n --steps $steps --repeat 1 --warmup 0 $EXTRA)
  echo "$n $steps $t $base" | awk '{as=$1*$2; c=$3-$4; printf "agents %2d: %8d agent-steps in %.2f s CPU: %.0f ns/agent-step, %.2f M agent-steps/s per core\n", $1, as, c, c/as*1e9, as/c/1e6}'
done
