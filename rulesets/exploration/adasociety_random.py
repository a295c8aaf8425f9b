#!/usr/bin/env python3
"""adasociety_random.py -- AdaSociety's own Exploration with its random agent, per episode.

    python3 rulesets/exploration/adasociety_random.py ADASOCIETY_CHECKOUT [--first 1000] [--episodes 60]

Runs AdaSociety's code itself (its Environment, EnvHandler and ExplorationAgent, its config/ with
config/task/exploration.json) -- nothing of polis -- and the random agent of its baselines:
each agent picks uniformly among the actions of its `action_mask`, as AdaSociety's
RandomPolicy.compute_actions samples. Episode k seeds Python's and numpy's generators with k.
Prints one line per episode:

    seed steps sum_of_returns produce_tries pick_tries dump_tries seconds

for comparison with `polis run rulesets/exploration/exploration.json --policy random_ada --json`
(rulesets/society/README.md, "AdaSociety's random baseline"). Needs numpy and networkx; the
packages AdaSociety imports only for rendering and training (pygame, cv2, ray, gymnasium) are
replaced by small stand-ins written to a temporary directory, since no episode uses them.
About 15-30 s per episode.
"""
import argparse
import builtins
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adasociety_env  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("adasociety", help="a checkout of github.com/bigai-ai/AdaSociety")
    ap.add_argument("--first", type=int, default=1000, help="seed of the first episode")
    ap.add_argument("--episodes", type=int, default=60)
    args = ap.parse_args()
    env, handler = adasociety_env.load(args.adasociety, prog="adasociety_random")
    import numpy as np
    say = builtins.print
    for seed in range(args.first, args.first + args.episodes):
        random.seed(seed)
        np.random.seed(seed)
        t0 = time.time()
        obs, infos = env.reset()
        handler.on_reset(obs, infos)
        states = handler.on_update(obs)[0]
        total, tries, steps, done = 0.0, {}, 0, False
        while not done:
            choice = {name: int(np.random.choice(np.flatnonzero(s["action_mask"])))
                      for name, s in states.items()}
            actions = handler.on_predict(choice)
            for acts in actions.values():
                kind = acts[0] if isinstance(acts[0], str) else acts[0][0]
                tries[kind] = tries.get(kind, 0) + 1
            obs, rewards, terminated, truncated, infos = env.step(actions)
            states = handler.on_update(obs, rewards, terminated, truncated, infos)[0]
            total += sum(rewards.values())
            steps += 1
            done = terminated.get("__all__", False)
        say(seed, steps, round(total, 6), tries.get("produce", 0), tries.get("pick_by_name", 0),
            tries.get("dump_by_name", 0), round(time.time() - t0, 1), flush=True)


if __name__ == "__main__":
    main()
