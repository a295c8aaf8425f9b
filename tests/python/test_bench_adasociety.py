#!/usr/bin/env python3
"""rulesets/exploration/bench_adasociety.py against a stand-in AdaSociety checkout.

The real AdaSociety repository is not available in CI, so this writes a small package with its
layout and interfaces (config/task/exploration.json, project.env.environment.Environment,
project.agent.env_handler.EnvHandler) and runs the side-by-side script on it with this build's
polis: the round lines and the summary come out, the players override reaches the stand-in's
config, the physical policy draws only physical ids, and bad input (not a checkout, a bad
--agents, an env that ignores the agent count) stops with a message and a non-zero exit.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import common

SCRIPT = os.path.join(common.ROOT, "rulesets", "exploration", "bench_adasociety.py")

TASK = '{"base_map": {"size": {"x": 20, "y": 20}}, ' \
       '"random": {"players": [{"job": "explorer", "repeat": 8}]}}'

ENVIRONMENT = '''
import json, os
class Environment:
    def __init__(self, main_json):
        with open(main_json) as f:
            cfg = json.load(f)
        with open(cfg["task"]) as f:
            task = json.load(f)
        self.n = task["random"]["players"][0]["repeat"]
        if os.environ.get("STAND_IN_IGNORE_PLAYERS"):
            self.n = 8
        self.size = task["base_map"]["size"]["x"]
        self.t = 0
    def reset(self):
        self.t = 0
        names = ["p%d" % i for i in range(self.n)]
        return {n: {} for n in names}, {n: {} for n in names}
    def step(self, actions):
        self.t += 1
        sum(i * i for i in range(2000))  # some work, so the CPU clock moves
        obs = {n: {} for n in actions}
        return obs, {n: 0.0 for n in actions}, {"__all__": self.t >= 7}, {}, {}
'''

HANDLER = '''
import numpy as np
class _State:
    resource_num = 2
class _Agent:
    def __init__(self):
        self.state = _State()
class EnvHandler:
    def __init__(self, main_json):
        self.agent_dict = {}
    def on_reset(self, obs, infos):
        self.agent_dict = {n: _Agent() for n in obs}
    def on_update(self, obs, rewards={}, terminateds={}, truncateds={}, infos={}):
        # ids 0-9 physical (6 + 2 x 2 resources), 10-13 social; all legal
        return {n: {"action_mask": np.ones(14, dtype=np.int8)} for n in obs}, rewards, {}, {}, {}
    def on_predict(self, choice):
        if __import__("os").environ.get("STAND_IN_PHYSICAL"):
            for n, a in choice.items():
                if a >= 10:
                    raise SystemExit("stand-in: agent %s drew social id %d" % (n, a))
        return {n: ["move", a] for n, a in choice.items()}
'''


def stand_in(root):
    files = {"config/task/exploration.json": TASK,
             "project/__init__.py": "", "project/env/__init__.py": "",
             "project/env/environment.py": ENVIRONMENT,
             "project/agent/__init__.py": "", "project/agent/env_handler.py": HANDLER}
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


@unittest.skipIf(common.NO_NUMPY, "the script draws with numpy")
class BenchAdaSociety(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="bench_ada_")
        cls.root = os.path.join(cls.tmp.name, "AdaSociety")
        stand_in(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_bench(self, *args, env=None):
        full = dict(os.environ)
        full.update(env or {})
        return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True,
                              text=True, env=full, timeout=240)

    def test_rounds_and_summary(self):
        for policy, extra in (("physical", {"STAND_IN_PHYSICAL": "1"}), ("random", {})):
            out = self.run_bench(self.root, common.POLIS_CLI, "--agents", "3,5", "--steps",
                                 "20", "--rounds", "2", "--policy", policy, env=extra)
            self.assertEqual(out.returncode, 0, out.stderr)
            rounds = [l.split() for l in out.stdout.splitlines() if not l.startswith("#")]
            self.assertEqual([(r[0], r[1], r[2]) for r in rounds],
                             [("3", policy, "1"), ("3", policy, "2"),
                              ("5", policy, "1"), ("5", policy, "2")])
            for r in rounds:
                ada, pol, ratio = float(r[3]), float(r[4]), float(r[5])
                self.assertGreater(ada, 0)
                self.assertGreater(pol, 0)
                self.assertAlmostEqual(ratio, round(pol / ada), delta=1)
            self.assertEqual(len(re.findall(r"^# [35] agents, %s: AdaSociety [0-9.]+, polis "
                                            r"[0-9]+ agent-steps/CPU-s" % policy, out.stdout,
                                            re.M)), 2)

    def test_social_ids_reach_random_policy(self):
        # Without the physical limit the stand-in's social ids are drawn: its check trips.
        out = self.run_bench(self.root, common.POLIS_CLI, "--agents", "4", "--steps", "30",
                             "--rounds", "1", "--policy", "random",
                             env={"STAND_IN_PHYSICAL": "1"})
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("drew social id", out.stderr)

    def test_bad_input(self):
        out = self.run_bench(self.tmp.name, common.POLIS_CLI)
        self.assertEqual(out.returncode, 1)
        self.assertIn("not an AdaSociety checkout", out.stderr)
        out = self.run_bench(self.root, common.POLIS_CLI, "--agents", "4,x")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--agents: '4,x' is not a comma-separated list", out.stderr)
        out = self.run_bench(self.root, common.POLIS_CLI, "--agents", "0")
        self.assertEqual(out.returncode, 2)
        out = self.run_bench(self.root, os.path.join(self.tmp.name, "no_polis"))
        self.assertEqual(out.returncode, 1)
        self.assertIn("not an executable polis program", out.stderr)
        out = self.run_bench(self.root, common.POLIS_CLI, "--agents", "3", "--steps", "5",
                             "--rounds", "1", env={"STAND_IN_IGNORE_PLAYERS": "1"})
        self.assertEqual(out.returncode, 1)
        self.assertIn("has 8 agents, not the 3 asked for", out.stderr)


if __name__ == "__main__":
    unittest.main()
