#!/usr/bin/env python3
"""Random agents on a polis scenario through the PettingZoo-style API, using action masks.

    python3 examples/python_random.py                       # gather, 3 episodes
    python3 examples/python_random.py gather_lua --episodes 5 --max-steps 50 --render

Each agent samples a legal action from its mask (``action_space(agent).sample(mask=...)``),
and the loop runs until ``env.agents`` is empty, so agents that finish early drop out the
PettingZoo way. Runs with or without numpy.
"""

import argparse
import sys

import _sdk  # noqa: F401  (finds polis in a source checkout)
import polis


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="gather",
                    help="a scenario file or ruleset name (default: gather)")
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, help="override the scenario's max_steps")
    ap.add_argument("--render", action="store_true", help="print the text views at the end")
    args = ap.parse_args(argv)

    overrides = {"max_steps": args.max_steps} if args.max_steps else {}
    env = polis.parallel_env(args.scenario, **overrides)
    print(f"{env.metadata['name']}: {len(env.possible_agents)} agents, "
          f"{env.core.n_actions} actions ({', '.join(env.core.action_names)}), "
          f"numpy: {'yes' if polis.HAVE_NUMPY else 'no'}")
    for ep in range(args.episodes):
        obs, infos = env.reset(seed=args.seed + ep)
        returns = {a: 0.0 for a in env.possible_agents}
        illegal = steps = 0
        while env.agents:
            actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"])
                       for a in env.agents}
            obs, rewards, terminations, truncations, infos = env.step(actions)
            steps += 1
            for a, r in rewards.items():
                returns[a] += r
            illegal += sum(info["illegal_action"] for info in infos.values())
        how = "terminated" if any(terminations.values()) else "truncated"
        ret = ", ".join(f"{a} {r:g}" for a, r in returns.items())
        print(f"episode {ep} (seed {env.last_seed}): {steps} steps, last agents {how}; "
              f"returns: {ret}; illegal actions: {illegal}")
    if args.render:
        print(env.render(), end="")
    env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
