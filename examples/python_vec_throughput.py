#!/usr/bin/env python3
"""How fast polis steps M envs at once from Python: ``polis.vector_env`` (the C vector API,
``polis_vec``) with random actions, for each thread count asked for.

    python3 examples/python_vec_throughput.py                          # gather, 64 envs
    python3 examples/python_vec_throughput.py gather --envs 256 --threads 1 2 4 --steps 2000

Prints vec steps/s, env steps/s and agent-steps/s per thread count. Each vec step is one
Python->C call that steps every env (auto-resetting finished ones); the actions are a
precomputed table of random ids written into the ``actions`` view (moves off the map are
flagged illegal no-ops, as the engine defines them). Needs numpy.
"""

import argparse
import os
import sys
import time

try:
    import polis
except ImportError:  # running from the source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk",
                                    "python"))
    import polis


def bench(scenario, overrides, envs, threads, steps, seed):
    import numpy as np
    with polis.vector_env(scenario, num_envs=envs, threads=threads, **overrides) as v:
        table = np.random.default_rng(seed).integers(0, v.n_actions, size=(256, v.num_rows),
                                                     dtype=np.int32)
        acts = v.actions
        v.reset(seed=seed)
        autoresets = 0
        t0 = time.perf_counter()
        for i in range(steps):
            acts[:] = table[i & 255]
            v.step()
            autoresets += int(v.autoreset.sum())
        dt = time.perf_counter() - t0
        return v.num_rows, autoresets, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="gather")
    ap.add_argument("--envs", type=int, default=64, help="envs per vec (default 64)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="thread counts to run (default: 1 2)")
    ap.add_argument("--steps", type=int, default=2000, help="vec steps per run (default 2000)")
    ap.add_argument("--agents", type=int, help="override the scenario's agent count")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not polis.HAVE_NUMPY:
        print("python_vec_throughput.py needs numpy (install python3-numpy)")
        return 1
    overrides = {"agents": args.agents} if args.agents else {}
    print(f"polis {polis.library_version()} from {polis.load_library().path}; "
          f"{args.scenario}, {args.envs} envs, {args.steps} vec steps; {os.cpu_count()} CPUs")
    for t in args.threads:
        rows, autoresets, dt = bench(args.scenario, overrides, args.envs, t, args.steps,
                                     args.seed)
        print(f"threads {t:3d}: {args.steps / dt:10,.0f} vec steps/s "
              f"{args.steps * args.envs / dt:12,.0f} env steps/s "
              f"{args.steps * rows / dt:14,.0f} agent-steps/s  "
              f"({rows} rows, {autoresets} auto-resets, {dt:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
