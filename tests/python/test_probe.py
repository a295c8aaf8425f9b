"""polis.rl.probe: the scripted steel maker on Exploration (it must reach steel and a
normalised reward well above society's greedy), its plan choice, the social-action counts of
a recording with known actions, greedy with noops (none: polis eval's figure; all: nothing),
the wrapper that masks social actions, and bad input."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import polis
from common import GATHER, ROOT, needs_numpy

EXPLORATION = os.path.join(ROOT, "rulesets", "exploration", "exploration.json")


@needs_numpy
class TestProbe(unittest.TestCase):
    def test_steel_command(self):
        from polis.rl.probe import steel_command as c
        self.assertEqual(c({}), "GATHER 1 wood")
        self.assertEqual(c({"wood": 1}), "GATHER 1 stone")
        self.assertEqual(c({"wood": 1, "stone": 2}), "CRAFT 1 hammer")
        self.assertEqual(c({"hammer": 1}), "GATHER 1 coal")
        self.assertEqual(c({"hammer": 1, "coal": 1}), "GATHER 1 wood")
        self.assertEqual(c({"hammer": 1, "coal": 1, "wood": 1}), "CRAFT 1 torch")
        self.assertEqual(c({"hammer": 1, "torch": 1}), "GATHER 1 iron")
        self.assertEqual(c({"hammer": 1, "torch": 1, "iron": 1}), "GATHER 1 coal")
        self.assertEqual(c({"hammer": 1, "torch": 1, "iron": 1, "coal": 1}), "CRAFT 1 steel")
        self.assertEqual(c({"hammer": 1, "torch": 1, "wood": 1}, fallback=True), "GATHER 1 stone")

    def test_steel_episode(self):
        from polis.rl.probe import play_steel
        r = play_steel(EXPLORATION, episodes=1, seed=1001)
        # greedy reads about 0.10 on these seeds; the script makes steel from most of the iron
        self.assertGreater(r["mean"], 0.15)
        self.assertGreater(r["executions"]["steelmaking"], 40)
        self.assertEqual(r["per_episode"], play_steel(EXPLORATION, 1, 1001)["per_episode"])

    def test_steel_refuses_a_game_without_steel(self):
        from polis.rl.probe import play_steel
        with self.assertRaisesRegex(ValueError, "gather.json: no iron or steel"):
            play_steel(GATHER, episodes=1)

    def test_social_stats(self):
        from polis.rl.probe import social_stats
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ep.jsonl.gz")
            env = polis.Env(EXPLORATION, record=path)
            a = env.action_id
            env.reset(3)
            # tick 1: 0 shares with 1, 4 "shares" with itself, 1 and 2 join group 2
            env.step([a("share_map_1"), a("switch_group_2"), a("switch_group_2"), 0,
                      a("share_map_4"), a("move_up"), 0, 0])
            # tick 2: 0 stops sharing with 1, 3 sends a message, 5 shares with 6
            env.step([a("share_map_1"), 0, 0, a("communicate_0"), 0, a("share_map_6"), 0,
                      a("pick_wood") if env.masks[6][a("pick_wood")] else 0])
            env.record_end({})
            env.close()
            r = social_stats(path)
        self.assertEqual((r["episodes"], r["agent_steps"]), (1, 16))
        self.assertAlmostEqual(r["share"]["share_map"], 4 / 16)
        self.assertAlmostEqual(r["share"]["switch_group"], 2 / 16)
        self.assertAlmostEqual(r["share"]["communicate"], 1 / 16)
        self.assertAlmostEqual(r["share"]["move"], 1 / 16)
        self.assertAlmostEqual(sum(r["share"].values()), 1.0)
        self.assertAlmostEqual(r["maps_shared"], (1 + 1) / 2)  # (0->1), then (5->6)
        self.assertAlmostEqual(r["grouped"], 2.0)

    def test_social_stats_bad_input(self):
        from polis.rl.probe import social_stats
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "empty.jsonl")
            with open(path, "w") as f:
                f.write('{"t":"step","tick":1,"actions":[0]}\n')
            with self.assertRaisesRegex(ValueError, "empty.jsonl: a step before the header"):
                social_stats(path)

    def test_recipe_stats(self):
        from polis.rl.probe import recipe_stats
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ep.jsonl.gz")
            env = polis.Env(EXPLORATION, record=path)
            for steel, norm in ((3, 0.1), (5, 0.3)):
                env.reset(3)
                env.step([0] * env.n_agents)
                env.record_end({"total_reward_normalised": norm, "recipes": [
                    {"name": "steelmaking", "executions": steel},
                    {"name": "hammer_craft", "executions": 10}]})
            env.close()
            r = recipe_stats(path)
            self.assertEqual(r["episodes"], 2)
            self.assertAlmostEqual(r["normalised"], 0.2)
            self.assertEqual(r["executions"], {"steelmaking": 4.0, "hammer_craft": 10.0})
            empty = os.path.join(d, "empty.jsonl")
            with open(empty, "w") as f:
                f.write('{"t":"end","tick":1,"returns":[0],"metrics":null}\n')
            with self.assertRaisesRegex(ValueError, "empty.jsonl: no episode ends with metrics"):
                recipe_stats(empty)

    def test_noop(self):
        from polis.rl.probe import play_noop
        full = play_noop(EXPLORATION, 0.0, episodes=1, seed=1001)
        self.assertGreater(full["mean"], 0.05)
        # the same as polis eval --policy greedy on that seed
        out = subprocess.run([os.environ.get("POLIS_BIN", os.path.join(ROOT, "build", "polis")),
                              "eval", EXPLORATION, "--policy", "greedy", "--episodes", "1",
                              "--seed", "1001", "--quiet", "--json", "-"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        ref = json.loads(out.stdout)["per_episode"][0]["metrics"]["total_reward_normalised"]
        self.assertAlmostEqual(full["mean"], ref, places=9)
        self.assertEqual(play_noop(EXPLORATION, 1.0, episodes=1)["mean"], 0.0)
        with self.assertRaisesRegex(ValueError, "noop fraction 1.5"):
            play_noop(EXPLORATION, 1.5)

    def test_no_social_wrapper(self):
        import numpy as np
        from polis.rl.policy import FirstLegalPolicy
        from polis.rl.probe import NoSocial
        mask = np.zeros((3, 10), np.uint8)
        mask[:, 2] = mask[:, 5] = 1
        mask[2, 1] = 1
        pol = NoSocial(FirstLegalPolicy(), blocked=[1, 2], social=[1, 2, 3])
        self.assertEqual(list(pol.act(None, mask)), [5, 5, 5])
        self.assertEqual(mask[2, 1], 1)  # the caller's mask is untouched
        self.assertEqual((pol.chosen, pol.social_chosen), (3, 0))
        asis = NoSocial(FirstLegalPolicy(), blocked=[], social=[1, 2, 3])
        self.assertEqual(list(asis.act(None, mask)), [2, 2, 1])
        self.assertEqual((asis.chosen, asis.social_chosen), (3, 3))

    def test_cli(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "sdk", "python"))
        p = subprocess.run([sys.executable, "-m", "polis.rl.probe", "steel", EXPLORATION,
                            "--episodes", "0"], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--episodes must be at least 1", p.stderr)


if __name__ == "__main__":
    unittest.main()
