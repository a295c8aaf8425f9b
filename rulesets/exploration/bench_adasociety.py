#!/usr/bin/env python3
"""bench_adasociety.py -- polis's Exploration beside AdaSociety's own, in one run.

    python3 rulesets/exploration/bench_adasociety.py ADASOCIETY_CHECKOUT POLIS
        [--agents 4,8,20,100] [--policy physical|random] [--steps 300] [--rounds 3]

For each agent count, ROUNDS rounds, each the original then polis, one after the other:

- AdaSociety (a checkout of github.com/bigai-ai/AdaSociety; adasociety_env.py loads it):
  its Environment and EnvHandler on its Exploration task with N explorers (20 x 20, or
  64 x 64 from 1000 agents on), each agent drawing uniformly from its `action_mask` (physical:
  among the move/no_act/produce/pick/dump ids only). Timed: `env.step` and the handler's
  `on_predict`/`on_update` (action ids to actions, raw observations to the tensors and masks
  a learner reads: what an RL rollout pays per step), in CPU seconds of the process; not
  timed: the draw, and resets (each episode's reset is outside the clock).
- polis: `POLIS bench rulesets/exploration/exploration.json --agents N --policy P` (the
  same map sizes), its `agent_steps_per_cpu_s` median (its own policy's CPU time is
  measured apart and not counted; its timed steps include auto-resets).

Prints one line per round and a summary per agent count: agent-steps per CPU-second of each
and their ratio (the median of the rounds' ratios). Per-CPU-second rates make the comparison
hold on a machine shared with other work; the rounds alternate so both sides see the same
load. Needs numpy and networkx.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "exploration.json")
BIG = 1000  # from this many agents on, both sides play on 64 x 64 (AdaSociety's paper setting)


def original(root, agents, policy, steps, seed):
    """Agent-steps per CPU-second of AdaSociety's step and handler over `steps` steps."""
    sys.path.insert(0, HERE)
    import adasociety_env
    import numpy as np
    env, handler = adasociety_env.load(root, agents, 64 if agents >= BIG else None,
                                       "bench_adasociety")
    random.seed(seed)
    np.random.seed(seed)
    cpu, done_steps = 0.0, 0
    while done_steps < steps:
        obs, infos = env.reset()
        handler.on_reset(obs, infos)
        states = handler.on_update(obs)[0]
        if len(states) != agents:
            sys.exit("bench_adasociety: AdaSociety's env has %d agents, not the %d asked for "
                     "(its config/task/exploration.json's random.players[0].repeat was not "
                     "taken)" % (len(states), agents))
        limit = {name: adasociety_env.physical_ids(handler, name) if policy == "physical"
                 else None for name in states}
        done = False
        while not done and done_steps < steps:
            choice = {name: int(np.random.choice(np.flatnonzero(s["action_mask"][:limit[name]])))
                      for name, s in states.items()}
            t0 = time.process_time()
            actions = handler.on_predict(choice)
            obs, rewards, terminated, truncated, infos = env.step(actions)
            states = handler.on_update(obs, rewards, terminated, truncated, infos)[0]
            cpu += time.process_time() - t0
            done_steps += 1
            done = terminated.get("__all__", False)
    return agents * done_steps / cpu


def polis_rate(polis, agents, policy, steps, seed):
    cmd = [polis, "bench", SCENARIO, "--agents", str(agents), "--policy", policy,
           "--steps", str(steps), "--repeat", "3", "--seed", str(seed), "--json"]
    if agents >= BIG:
        cmd += ["--set", 'plugins.society.params.map.size={"x":64,"y":64}', "--warmup", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("bench_adasociety: %s failed (exit %d): %s"
                 % (" ".join(cmd), out.returncode, out.stderr.strip()))
    return json.loads(out.stdout)["agent_steps_per_cpu_s"]["median"]


def counts(text):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("--agents: %r is not a comma-separated list of "
                                         "integers" % text)
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("--agents: %r: every count must be at least 1" % text)
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("adasociety", help="a checkout of github.com/bigai-ai/AdaSociety")
    ap.add_argument("polis", help="the polis program (a Release build for figures)")
    ap.add_argument("--agents", type=counts, default=[4, 8, 20, 100])
    ap.add_argument("--policy", choices=("physical", "random"), default="physical")
    ap.add_argument("--steps", type=int, default=300,
                    help="timed env steps of the original per round (polis: 100x as many, "
                         "a tenth of them from 1000 agents on)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--original-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps < 1 or args.rounds < 1:
        ap.error("--steps and --rounds must be at least 1")
    if args.original_only:  # one measurement in a fresh process (its own CPU clock)
        print(original(args.adasociety, args.agents[0], args.policy, args.steps, args.seed))
        return
    if not os.path.isfile(os.path.join(args.adasociety, "config", "task", "exploration.json")):
        sys.exit("bench_adasociety: %s: no config/task/exploration.json (not an AdaSociety "
                 "checkout)" % args.adasociety)
    if not os.access(args.polis, os.X_OK):
        sys.exit("bench_adasociety: %s: not an executable polis program" % args.polis)
    print("# agents policy round adasociety_agent_steps_per_cpu_s polis_agent_steps_per_cpu_s "
          "ratio", flush=True)
    for agents in args.agents:
        ratios, ada_rates, polis_rates = [], [], []
        psteps = args.steps * (10 if agents >= BIG else 100)
        for r in range(args.rounds):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), args.adasociety,
                                  args.polis, "--agents", str(agents), "--policy", args.policy,
                                  "--steps", str(args.steps), "--seed", str(args.seed + r),
                                  "--original-only"], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("bench_adasociety: AdaSociety at %d agents failed (exit %d): %s"
                         % (agents, out.returncode, out.stderr.strip()[-2000:]))
            ada = float(out.stdout.split()[-1])
            pol = polis_rate(args.polis, agents, args.policy, psteps, args.seed + r)
            ada_rates.append(ada)
            polis_rates.append(pol)
            ratios.append(pol / ada)
            print(agents, args.policy, r + 1, round(ada, 1), round(pol), round(pol / ada),
                  flush=True)
        print("# %d agents, %s: AdaSociety %.1f, polis %.0f agent-steps/CPU-s (medians); "
              "polis / AdaSociety %.0fx (median of %d rounds; range %.0f-%.0fx)"
              % (agents, args.policy, statistics.median(ada_rates),
                 statistics.median(polis_rates), statistics.median(ratios), args.rounds,
                 min(ratios), max(ratios)), flush=True)


if __name__ == "__main__":
    main()
