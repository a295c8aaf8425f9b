"""Shared by the SDK tests: scenario paths, the numpy mode of this run, small helpers."""

import atexit
import os
import shutil
import tempfile
import unittest

import polis

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GATHER = os.path.join(ROOT, "rulesets", "gather", "gather.json")
GATHER_LUA = os.path.join(ROOT, "rulesets", "gather", "gather_lua.json")
STAGGERED = os.path.join(HERE, "scenarios", "staggered.json")

NO_NUMPY = os.environ.get("POLIS_TEST_NO_NUMPY") == "1"


def _polis_cli():
    """The `polis` program the tests start: $POLIS_BIN (set by CTest), else the one beside the
    tested libpolis. Under a sanitizer build CTest preloads the ASan runtime into python; a
    `polis` started from a test must not inherit that preload (clang links its own runtime
    into the program, and two runtimes refuse to start), so it is started through a wrapper
    that drops it, and $POLIS_BIN names the wrapper for the SDK's own lookups too."""
    real = os.environ.get("POLIS_BIN") or os.path.join(
        os.path.dirname(os.environ.get("POLIS_LIBRARY", "")), "polis")
    if "asan" not in os.environ.get("LD_PRELOAD", "") or not os.path.isfile(real):
        return real
    d = tempfile.mkdtemp(prefix="polis_cli_")
    atexit.register(shutil.rmtree, d, True)
    wrapper = os.path.join(d, "polis")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nunset LD_PRELOAD\nexec '%s' \"$@\"\n" % real.replace("'", "'\\''"))
    os.chmod(wrapper, 0o755)
    os.environ["POLIS_BIN"] = wrapper
    return wrapper


POLIS_CLI = _polis_cli()

if polis.HAVE_NUMPY:
    import numpy as np
else:
    np = None

needs_numpy = unittest.skipIf(np is None, "numpy is hidden in this run")
needs_no_numpy = unittest.skipUnless(np is None, "numpy is importable in this run")


def tolist(v):
    """Observation parts as plain nested lists, whatever the mode."""
    if isinstance(v, dict):
        return {k: tolist(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return [tolist(x) for x in v]
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def legal_ids(mask):
    return [i for i, v in enumerate(tolist(mask)) if v]


def random_actions(env, obs, rng):
    """A legal random action for every live agent, from the mask in the observation."""
    return {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}


def run_episode(env, seed, policy=None):
    """Plays one episode; returns the list of per-step (obs, rewards, terms, truncs) as plain
    data, so runs can be compared after the env moved on."""
    obs, _ = env.reset(seed=seed)
    trace = [tolist(obs)]
    while env.agents:
        actions = policy(env, obs) if policy else {
            a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rew, term, trunc, _ = env.step(actions)
        trace.append((tolist(obs), rew, term, trunc))
    return trace
