"""polis.rllib.RLlibMultiAgentEnv: RLlib's MultiAgentEnv shape, "__all__" kept inside."""

import importlib.util
import unittest

import polis
from polis.rllib import ALL, HAVE_RAY, RLlibMultiAgentEnv
from common import GATHER, STAGGERED, np, tolist


class TestRLlibAdapter(unittest.TestCase):
    def test_base_class(self):
        if importlib.util.find_spec("ray") is None:
            self.assertFalse(HAVE_RAY)
            self.assertEqual(RLlibMultiAgentEnv.__mro__[1], object)
        else:
            from ray.rllib.env.multi_agent_env import MultiAgentEnv
            self.assertTrue(issubclass(RLlibMultiAgentEnv, MultiAgentEnv))

    def test_config_and_spaces(self):
        env = RLlibMultiAgentEnv({"scenario": GATHER, "max_steps": 12})
        self.assertEqual(env.possible_agents, ["agent_0", "agent_1", "agent_2", "agent_3"])
        self.assertEqual(env.get_agent_ids(), set(env.possible_agents))
        for a in env.possible_agents:
            self.assertIs(env.get_observation_space(a), env.observation_spaces[a])
            self.assertIs(env.get_action_space(a), env.action_spaces[a])
            self.assertIs(env.observation_space[a], env.observation_spaces[a])
            self.assertIs(env.action_space[a], env.action_spaces[a])
        self.assertEqual(env.par.core.max_steps, 12)
        env.close()
        with self.assertRaises(ValueError):
            RLlibMultiAgentEnv({"max_steps": 3})
        env = RLlibMultiAgentEnv(scenario="gather", agents=2)
        self.assertEqual(len(env.possible_agents), 2)
        env.close()

    def test_all_key_on_truncation(self):
        env = RLlibMultiAgentEnv({"scenario": GATHER, "max_steps": 4})
        obs, infos = env.reset(seed=1)
        self.assertNotIn(ALL, obs)
        self.assertEqual(set(obs), set(env.possible_agents))
        for t in range(4):
            obs, rew, terms, truncs, infos = env.step(
                {a: env.action_space[a].sample(mask=obs[a]["action_mask"]) for a in obs})
            self.assertIn(ALL, terms)
            self.assertIn(ALL, truncs)
            self.assertNotIn(ALL, obs)
            self.assertNotIn(ALL, rew)
            self.assertNotIn(ALL, infos)
            if t < 3:
                self.assertFalse(terms[ALL] or truncs[ALL])
        self.assertFalse(terms[ALL])
        self.assertTrue(truncs[ALL])
        self.assertEqual(env.agents, [])
        env.close()

    def test_all_key_on_termination(self):
        env = RLlibMultiAgentEnv({"scenario": GATHER, "grid": {"width": 3, "height": 3},
                                  "plugins.gather.params.respawn": False,
                                  "plugins.gather.params.coins": 1})
        obs, _ = env.reset(seed=2)
        while env.agents:
            obs, rew, terms, truncs, _ = env.step(
                {a: env.action_space[a].sample(mask=obs[a]["action_mask"]) for a in obs})
        self.assertTrue(terms[ALL])
        self.assertFalse(truncs[ALL])
        env.close()

    def test_staggered_exits_end_as_truncated(self):
        # agent_1 terminates early, the rest are truncated: the episode ended by truncation
        env = RLlibMultiAgentEnv({"scenario": STAGGERED})
        obs, _ = env.reset()
        n = 0
        while env.agents:
            obs, rew, terms, truncs, _ = env.step({a: 0 for a in env.agents})
            n += 1
            if n == 3:
                self.assertTrue(terms["agent_1"])
                self.assertFalse(terms[ALL])
            if n == 4:
                self.assertNotIn("agent_1", obs)
        self.assertEqual(n, 8)
        self.assertTrue(truncs[ALL])
        self.assertFalse(terms[ALL])
        env.close()

    def test_observations_are_copies(self):
        # RLlib keeps observations in its episode buffers: they must not change under it.
        env = RLlibMultiAgentEnv({"scenario": GATHER})
        obs0, _ = env.reset(seed=3)
        kept = tolist(obs0["agent_0"]["observation"]["position"])
        held = obs0["agent_0"]["observation"]["position"]
        obs1, *_ = env.step({"agent_0": 1})
        self.assertEqual(tolist(held), kept)
        self.assertNotEqual(tolist(obs1["agent_0"]["observation"]["position"]), kept)
        if np is not None:
            self.assertFalse(np.shares_memory(held, env.par.core.obs))
        env.close()

    def test_parallel_env_has_no_all_key(self):
        env = polis.parallel_env(GATHER, max_steps=2)
        env.reset(seed=0)
        out = env.step({})
        out = env.step({})
        for d in out:
            self.assertNotIn(ALL, d)
        env.close()


if __name__ == "__main__":
    unittest.main()
