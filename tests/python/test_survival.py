"""Survival (rulesets/survival) through the SDK: MAC's layout, masks, whole episodes, the views."""

import os
import random
import subprocess
import tempfile
import unittest

import polis
from common import ROOT, legal_ids, tolist

SURVIVAL_MAC = os.path.join(ROOT, "rulesets", "survival", "survival_mac.json")


def play(env, seed):
    """One whole episode with a seeded random legal policy; per-step rewards as plain data."""
    rng = random.Random(seed)
    obs, _ = env.reset(seed=seed)
    trace = []
    for _ in range(10000):
        if not env.agents:
            break
        acts = {a: rng.choice(legal_ids(obs[a]["action_mask"])) for a in env.agents}
        obs, rewards, _, _, _ = env.step(acts)
        trace.append(sorted(rewards.items()))
    return trace


class TestSurvival(unittest.TestCase):
    def test_mac_layout_by_name_and_path(self):
        for scenario in ("survival_mac", SURVIVAL_MAC):
            env = polis.parallel_env(scenario)
            try:
                self.assertEqual(env.possible_agents, ["agent_0", "agent_1", "agent_2"])
                obs, _ = env.reset(seed=3)
                for a in env.possible_agents:
                    sym = tolist(obs[a]["observation"]["symbolic"])
                    self.assertEqual(len(sym), 1409)  # MAC's per-player layout (spec §11)
                    mask = tolist(obs[a]["action_mask"])
                    self.assertEqual(len(mask), 17)
                    self.assertEqual(mask[0], 1)  # noop
            finally:
                env.close()

    def test_episodes_end_and_repeat(self):
        env = polis.parallel_env("survival_mac")
        try:
            first = play(env, 7)
            self.assertGreater(len(first), 0)
            self.assertLess(len(first), 10000)  # every player died or the limit came
            self.assertEqual(env.agents, [])
            self.assertEqual(play(env, 7), first)
            self.assertNotEqual(play(env, 8), first)
        finally:
            env.close()

    def test_text_view_and_text_actions(self):
        env = polis.Env("survival_mac")
        try:
            env.reset(seed=1)
            text = env.render(0, "text")
            self.assertIn("Health 9/9, food 9/9, drink 9/9, energy 9/9.", text)
            self.assertIn("Legal actions: noop, left, right, up, down, do.", text)
            self.assertEqual(env.parse_action(0, "do"), env.action_names.index("do"))
            with self.assertRaises(polis.PolisError):
                env.parse_action(0, "fly away")
        finally:
            env.close()

    def test_visibility(self):
        """Who sees whom from Python (docs/visibility.md): Env.set_visible hides player 1
        from player 0 from the next step on (MAC's other-players channel), None gives the pair
        back to the scenario's rules; a recording keeps the changes and replays."""
        from common import POLIS_CLI
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "v.jsonl")
        env = polis.Env(SURVIVAL_MAC, {"agents": 2}, record=path)

        def others(agent):
            sym = tolist(env.obs_dict(agent)["symbolic"])
            return sum(sym[cell * 22 + 21] for cell in range(63))
        try:
            env.reset(seed=4)
            self.assertEqual(others(0), 1)  # both start on the centre cell
            env.set_visible("agent_0", ["agent_1"], False)
            self.assertFalse(env.visible(0, 1))
            self.assertTrue(env.visible(1, 0))
            env.step([0, 2])
            self.assertEqual(others(0), 0)
            self.assertEqual(others(1), 1)
            env.set_visible(None, None, None)
            env.step([0, 0])
            self.assertEqual(others(0), 1)
            with self.assertRaises(polis.UnknownAgentError):
                env.set_visible("agent_0", "nobody", False)
            with self.assertRaises(polis.InvalidArgumentError):
                env.set_visible(0, 1, "hidden")
        finally:
            env.close()
        with open(path) as f:
            text = f.read()
        self.assertIn('"visibility":[[0,1,0]]', text)
        self.assertIn('"visibility":[[-1,-1,-1]]', text)
        if os.path.exists(POLIS_CLI):
            r = subprocess.run([POLIS_CLI, "replay", path, "--verify"], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
        tmp.cleanup()


if __name__ == "__main__":
    unittest.main()
