"""Survival (rulesets/survival) through the SDK: MAC's layout, masks, whole episodes, the views."""

import os
import random
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


if __name__ == "__main__":
    unittest.main()
