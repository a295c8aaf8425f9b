#!/usr/bin/env python3
"""How fast polis steps from Python: the raw buffers of ``polis.Env`` and the dict API of
``polis.parallel_env``, with random actions, on one core.

    python3 examples/python_throughput.py                    # gather, 2 s per mode
    python3 examples/python_throughput.py gather --seconds 5 --agents 16

Prints env steps/s and agent-steps/s for each mode. The raw mode writes action ids into the
``actions`` buffer (a numpy view of engine memory) and calls ``step()``: one Python->C call
per env step, no per-agent Python objects. The dict mode builds and reads PettingZoo-style
dicts every step. Actions are drawn from all ids, so moves off the map are flagged illegal
no-ops, as the engine defines them.
"""

import argparse
import array
import random
import sys
import time

import _sdk  # noqa: F401  (finds polis in a source checkout)
import polis


def bench_raw(scenario, overrides, seconds, seed):
    env = polis.Env(scenario, overrides)
    n, na = env.n_agents, env.n_actions
    if polis.HAVE_NUMPY:
        import numpy as np
        table = np.random.default_rng(seed).integers(0, na, size=(4096, n), dtype=np.int32)
    else:
        # rows as int32 arrays, so a memoryview slice assignment takes them whole
        rng = random.Random(seed)
        table = [array.array("i", [rng.randrange(na) for _ in range(n)]) for _ in range(4096)]
    acts = env.actions
    env.reset(seed)
    steps, episodes = 0, 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(256):
            acts[:] = table[steps & 4095]
            env.step()
            steps += 1
            if env.done:
                episodes += 1
                env.reset(seed + episodes)
        if time.perf_counter() >= deadline:
            break
    dt = time.perf_counter() - t0
    env.close()
    return steps, n, dt


def bench_dict(scenario, overrides, seconds, seed):
    env = polis.parallel_env(scenario, **overrides)
    na = env.core.n_actions
    rng = random.Random(seed)
    table = [[rng.randrange(na) for _ in env.possible_agents] for _ in range(4096)]
    names = env.possible_agents
    env.reset(seed=seed)
    steps = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(256):
            row = table[steps & 4095]
            env.step({a: row[i] for i, a in enumerate(names) if a in env.agents})
            steps += 1
            if not env.agents:
                env.reset()
        if time.perf_counter() >= deadline:
            break
    dt = time.perf_counter() - t0
    n = len(names)
    env.close()
    return steps, n, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="gather")
    ap.add_argument("--seconds", type=float, default=2.0, help="per mode (default 2)")
    ap.add_argument("--agents", type=int, help="override the scenario's agent count")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    overrides = {"agents": args.agents} if args.agents else {}
    print(f"polis {polis.library_version()} from {polis.load_library().path}; "
          f"numpy: {'yes' if polis.HAVE_NUMPY else 'no'}")
    for mode, fn in (("raw buffers (polis.Env)", bench_raw),
                     ("dict API (polis.parallel_env)", bench_dict)):
        steps, n, dt = fn(args.scenario, overrides, args.seconds, args.seed)
        print(f"{mode:32s} {steps / dt:12,.0f} env steps/s {steps * n / dt:14,.0f} "
              f"agent-steps/s  ({steps} steps x {n} agents in {dt:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
