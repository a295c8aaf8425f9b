#!/usr/bin/env python3
"""How fast polis steps M envs at once from Python: ``polis.vector_env`` (the C vector API,
``polis_vec``) driven by a numpy random policy, for each thread count asked for, beside
``polis bench`` (the same envs stepped from C) with ``--compare``.

    python3 examples/python_vec_throughput.py                          # gather, 64 envs
    python3 examples/python_vec_throughput.py contract --envs 64 --threads 1 --compare
    python3 examples/python_vec_throughput.py gather --envs 256 --threads 1 2 4 --steps 2000

Prints vec steps/s, env steps/s and agent-steps/s per thread count, in wall-clock time and
per CPU-second of this process. The loop is what a learner's rollout does, minus the model:
read the batched observations and masks, pick an action for every row, step.
``--policy masked`` (default) picks a uniformly random *legal* action per row from the
mask — argmax of mask + uniform noise, written into preallocated arrays, so the loop
allocates nothing and has no per-agent Python; ``--policy table`` writes precomputed random
ids (illegal ones are flagged no-ops). ``--flatten`` also builds the float32 flat
observation each step. The step includes the SDK's episode statistics (infos["episode"],
kept by the engine) and, for games that render metrics, infos["metrics"]. Needs numpy.

``--compare`` runs ``polis bench`` with the same scenario, envs, threads, seed, warm-up and
timed steps, alternating with the Python loop (``--pairs``, default 3), and compares the
two whole loops — policy and step — in CPU time, which the machine's other work does not
bend: Python's agent-steps per CPU-second (``time.process_time`` over the timed steps)
against ``polis bench``'s ``agent_steps_per_cpu_s_with_policy`` (its random legal policy in
C, uniform over the mask like the numpy one). It prints each pair's ratio and the median.

``--overhead`` measures what the SDK adds on a machine too loaded for wall-clock figures:
the same loop, from the same seed (so the same episodes), once with ``VectorEnv.step`` and
once calling the engine's ``polis_vec_step`` directly, in CPU time of this process,
alternated five times; it prints the median of engine time / SDK time.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import _sdk  # noqa: F401  (finds polis in a source checkout)
import polis


def bench(scenario, overrides, envs, threads, steps, seed, policy, flatten, warmup=200):
    import numpy as np
    with polis.vector_env(scenario, num_envs=envs, threads=threads, flatten=flatten,
                          **overrides) as v:
        rng = np.random.default_rng(seed)
        rows, na = v.num_rows, v.n_actions
        table = rng.integers(0, na, size=(256, rows), dtype=np.int32)
        noise = rng.random((64, rows, na), dtype=np.float32)  # reused noise pages
        score = np.empty((rows, na), np.float32)
        pick = np.empty(rows, np.intp)
        acts = v.actions
        obs, _ = v.reset(seed=seed)
        masks = v.masks

        def one(i):
            if policy == "masked":
                np.copyto(score, masks)  # a plain cast: no buffer (an int8+float add makes one)
                np.add(score, noise[i & 63], out=score)
                np.argmax(score, axis=1, out=pick)
                acts[:] = pick
            else:
                acts[:] = table[i & 255]
            v.step()

        for i in range(warmup):
            one(i)
        before = sum(v.episode(k) for k in range(envs))
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(steps):
            one(i)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        autoresets = sum(v.episode(k) for k in range(envs)) - before
        return rows, autoresets, dt, cpu


def overhead(scenario, overrides, envs, steps, seed, reps=5):
    """CPU time of ``steps`` SDK steps and of as many direct ``polis_vec_step`` calls from
    the same seed (identical episodes), alternated ``reps`` times: the median ratio."""
    import numpy as np
    with polis.vector_env(scenario, num_envs=envs, threads=1, **overrides) as v:
        rng = np.random.default_rng(seed)
        noise = rng.random((64, v.num_rows, v.n_actions), dtype=np.float32)
        score = np.empty((v.num_rows, v.n_actions), np.float32)
        pick = np.empty(v.num_rows, np.intp)
        acts, masks = v.actions, v.masks
        lib, ptr = v._lib, v._h.ptr  # the engine's own call, without the SDK's work

        def run(direct):
            v.reset(seed=seed)
            t0 = time.process_time()
            for i in range(steps):
                np.copyto(score, masks)
                np.add(score, noise[i & 63], out=score)
                np.argmax(score, axis=1, out=pick)
                acts[:] = pick
                if direct:
                    lib.vec_step(ptr)
                else:
                    v.step()
            return time.process_time() - t0

        ratios = []
        for _ in range(reps):
            c, py = run(True), run(False)
            ratios.append(c / py)
        return sorted(ratios)[reps // 2], ratios, v.num_rows


def c_bench(scenario, overrides, envs, threads, steps, seed, warmup=200):
    """``polis bench --json``'s report of one repetition as bench() runs it, or None when
    polis is not found."""
    exe = os.environ.get("POLIS") or shutil.which("polis")
    if not exe:
        cand = os.path.join(os.path.dirname(polis.load_library().path), "polis")
        exe = cand if os.path.exists(cand) else None
    if not exe:
        return None
    path = polis.find_scenario(scenario) if not os.path.exists(scenario) else scenario
    cmd = [exe, "bench", path, "--envs", str(envs), "--threads", str(threads), "--steps",
           str(steps), "--seed", str(seed), "--warmup", str(warmup), "--repeat", "1", "--json"]
    for k, val in overrides.items():
        cmd += ["--set", f"{k}={json.dumps(val)}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", default="gather")
    ap.add_argument("--envs", type=int, default=64, help="envs per vec (default 64)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="thread counts to run (default: 1 2)")
    ap.add_argument("--steps", type=int, default=2000, help="vec steps per run (default 2000)")
    ap.add_argument("--agents", type=int, help="override the scenario's agent count")
    ap.add_argument("--policy", choices=("masked", "table"), default="masked")
    ap.add_argument("--flatten", action="store_true", help="flat float32 observations")
    ap.add_argument("--compare", action="store_true",
                    help="also run `polis bench` with the same settings, alternating, and "
                         "compare CPU time (above)")
    ap.add_argument("--pairs", type=int, default=3,
                    help="--compare: Python/C pairs per thread count (default 3)")
    ap.add_argument("--overhead", action="store_true",
                    help="CPU time of the SDK's step against the engine's own call (below)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not polis.HAVE_NUMPY:
        print("python_vec_throughput.py needs numpy (install python3-numpy)")
        return 1
    overrides = {"agents": args.agents} if args.agents else {}
    print(f"polis {polis.library_version()} from {polis.load_library().path}; "
          f"{args.scenario}, {args.envs} envs, {args.steps} vec steps, policy {args.policy}"
          f"{', flatten' if args.flatten else ''}; {os.cpu_count()} CPUs")
    if args.overhead:
        med, ratios, rows = overhead(args.scenario, overrides, args.envs, args.steps, args.seed)
        print(f"{rows} rows, 1 thread: the SDK's step runs at {med:.0%} of the engine's "
              f"speed (CPU time; the five runs: {', '.join(f'{r:.0%}' for r in ratios)})")
        return 0
    for t in args.threads:
        if not args.compare:
            rows, autoresets, dt, cpu = bench(args.scenario, overrides, args.envs, t,
                                              args.steps, args.seed, args.policy, args.flatten)
            print(f"threads {t:3d}: {args.steps / dt:10,.0f} vec steps/s "
                  f"{args.steps * args.envs / dt:12,.0f} env steps/s "
                  f"{args.steps * rows / dt:14,.0f} agent-steps/s "
                  f"{args.steps * rows / cpu:14,.0f} per CPU-second  ({rows} rows, "
                  f"{autoresets} auto-resets, {dt:.2f} s)", flush=True)
            continue
        ratios, py_rates, c_rates = [], [], []
        for _ in range(args.pairs):
            c = c_bench(args.scenario, overrides, args.envs, t, args.steps, args.seed)
            if c is None:
                print("polis bench: not found (set $POLIS)")
                return 1
            rows, _, _, cpu = bench(args.scenario, overrides, args.envs, t, args.steps,
                                    args.seed, args.policy, args.flatten)
            py = args.steps * rows / cpu
            cr = c["agent_steps_per_cpu_s_with_policy"]
            py_rates.append(py)
            c_rates.append(cr)
            ratios.append(py / cr)
        med = sorted(ratios)[len(ratios) // 2]
        print(f"threads {t:3d}: {rows} rows; agent-steps per CPU-second, policy and step: "
              f"Python {sorted(py_rates)[len(py_rates) // 2]:,.0f}, polis bench "
              f"{sorted(c_rates)[len(c_rates) // 2]:,.0f} (medians); Python is {med:.0%} of "
              f"C (pairs: {', '.join(f'{r:.0%}' for r in ratios)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
