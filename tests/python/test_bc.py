"""polis.rl.bc: a tiny behaviour-cloning run of the steel script on Exploration (two episodes,
two epochs) whose loss goes down and whose checkpoint the probe plays and the PPO trainer
starts from (--init); the trainer's input preparation split in two (select, finish) gives
what it gave whole; bad input (a missing scenario, no episodes, a game without steel)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from common import GATHER, ROOT

EXPLORATION = os.path.join(ROOT, "rulesets", "exploration", "exploration.json")

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
    HAVE_TORCH = "asan" not in os.environ.get("LD_PRELOAD", "")
except ImportError:
    HAVE_TORCH = False
needs_torch = unittest.skipUnless(HAVE_TORCH, "PyTorch and numpy not importable (or under ASan)")


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "sdk", "python"))
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)


@needs_torch
class TestBC(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "bc")
        cls.p = run("polis.rl.bc", EXPLORATION, "--episodes", "2", "--epochs", "2",
                    "--out", cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_clone_trains_and_saves(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        with open(os.path.join(self.out, "bc.json")) as f:
            rep = json.load(f)
        self.assertEqual(rep["samples"], {"train": 4000, "held_out": 4000, "illegal_dropped": 0})
        self.assertGreater(rep["script_normalised"]["mean"], 0.15)  # the steel script's level
        first, last = rep["epochs"][0], rep["epochs"][-1]
        self.assertLess(last["loss"], first["loss"])
        self.assertLess(last["held_out"]["loss"], first["held_out"]["loss"])

    def test_probe_plays_the_checkpoint(self):
        from polis.rl.probe import play_checkpoint
        r = play_checkpoint(os.path.join(self.out, "policy.pt"), EXPLORATION, episodes=1)
        self.assertEqual(len(r["per_episode"]), 1)
        self.assertGreaterEqual(r["mean"], 0.0)

    def test_trainer_starts_from_it(self):
        out = os.path.join(self.tmp.name, "ppo")
        p = run("polis.rl.ppo", EXPLORATION, "--algo", "ppo", "--encoder", "conv", "--init",
                os.path.join(self.out, "policy.pt"), "--agent-steps", "512", "--envs", "1",
                "--rollout", "64", "--random-episodes", "0", "--quiet", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("148,013 parameters", p.stdout)

    def test_bad_input(self):
        p = run("polis.rl.bc", os.path.join(ROOT, "no_such.json"), "--episodes", "1",
                "--out", os.path.join(self.tmp.name, "x"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("no_such.json", p.stderr)
        p = run("polis.rl.bc", EXPLORATION, "--episodes", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--episodes must be at least 1", p.stderr)
        g = os.path.join(self.tmp.name, "g")
        p = run("polis.rl.bc", GATHER, "--episodes", "1", "--out", g)  # no map for conv
        self.assertEqual(p.returncode, 1)
        self.assertIn("--encoder conv needs an observation field", p.stderr)
        p = run("polis.rl.bc", GATHER, "--episodes", "1", "--encoder", "mlp", "--out", g)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no iron or steel", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x", "policy.pt")))


@needs_torch
class TestPrepSplit(unittest.TestCase):
    def test_select_finish_is_the_whole(self):
        import numpy as np
        import polis
        from polis.parallel import FlatLayout
        from polis.rl import nets
        with polis.Env(EXPLORATION) as env:
            env.reset(5)
            lay = FlatLayout(env.obs_fields)
            x = np.zeros((env.n_agents, lay.dim), np.float32)
            lay.fill(x, env.fields)
            maps = nets.map_fields(env.obs_fields, lay.parts)
        a, b = nets.Prep(lay.dim, maps, 9), nets.Prep(lay.dim, maps, 9)
        whole = a(x.copy())
        split = b.finish(b.select(x.copy()))
        np.testing.assert_array_equal(whole, split)
        np.testing.assert_array_equal(a.norm.mean, b.norm.mean)


if __name__ == "__main__":
    unittest.main()
