"""Task distributions from Python (docs/scenario.md "Task distributions"): ``polis.Env.task``
says what the episode drew from the scenario's ``"vary"``, ``Env.varies`` what it draws,
``Env.reset(seed, task=...)`` plays a given task; the mapped buffers stay valid across the
rebuilds a draw makes; every env of ``polis.vector_env`` draws anew at each of its resets,
auto-resets included, exactly what a single env reset with that episode's seed draws."""

import json
import os
import unittest

import polis
from common import GATHER, ROOT, needs_numpy, np

CONTRACT_VARY = os.path.join(ROOT, "rulesets", "contract", "contract_vary.json")
GATHER_VARY = json.dumps({
    "polis": 1, "name": "gather_vary", "seed": 1, "max_steps": 30, "agents": 4,
    "grid": {"width": 12, "height": 12},
    "plugins": [{"name": "gather", "params": {"coins": 10}}],
    "vary": {"plugins.gather.params.coins": {"range": [2, 40], "int": True},
             "max_steps": {"choice": [20, 30], "weights": [1, 1]}},
})
WOOD = "plugins.society.params.random.resources.wood.repeat"


def play(env, seed, steps=20, task=None):
    env.reset(seed, task=task)
    for t in range(steps):
        if env.done:
            break
        env.step([(t + a) % env.n_actions for a in range(env.n_agents)])
    return env.state_hash()


class TestEnvTask(unittest.TestCase):
    def test_no_vary(self):
        with polis.Env(GATHER) as env:
            self.assertIsNone(env.task)
            self.assertEqual(env.varies, {})
            env.reset(1)
            self.assertIsNone(env.task)
            with self.assertRaises(polis.StateError) as cm:
                env.reset(1, task={})
            self.assertIn('the scenario has no "vary"', str(cm.exception))

    def test_draws(self):
        with polis.Env(CONTRACT_VARY) as env:
            self.assertEqual(env.task, {})
            self.assertEqual(env.varies[WOOD], {"range": [3, 5], "int": True})
            h5 = play(env, 5)
            t5 = env.task
            woods = set()
            for s in range(12):
                play(env, s, 2)
                woods.add(env.task[WOOD])
                self.assertEqual(len(env.task["plugins.social.params.social.groups"]), 4)
            self.assertEqual(woods, {3, 4, 5})
            self.assertEqual(play(env, 5), h5)
            self.assertEqual(env.task, t5)
            self.assertEqual(play(env, 99, task=t5), play(env, 99, task=t5))
            self.assertEqual(env.task, t5)
            with self.assertRaises(polis.InvalidArgumentError):
                env.reset(1, task=[1])
            with self.assertRaises(polis.ConfigError) as cm:
                env.reset(1, task={"max_steps": 3})
            self.assertIn("reset_task: the task's member 0", str(cm.exception))

    def test_bad_vary_is_refused_at_create(self):
        bad = json.loads(GATHER_VARY)
        bad["vary"]["max_steps"] = {"choice": [20, 30], "weights": [1, -1]}
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(json.dumps(bad))
        self.assertIn('vary["max_steps"].weights[1]: expected a number in [0, ', str(cm.exception))


@needs_numpy
class TestBuffersAcrossRebuilds(unittest.TestCase):
    def test_views_stay(self):
        with polis.Env(GATHER_VARY) as env:
            obs, rc = env.obs, env.reward_components
            addr = obs.__array_interface__["data"][0]
            for s in range(6):
                play(env, s, 5)
                self.assertEqual(env.obs.__array_interface__["data"][0], addr)
                self.assertIs(env.obs, obs)
            total = 0.0
            env.reset(3)
            for t in range(30):
                if env.done:
                    break
                env.step([(t + a) % env.n_actions for a in range(env.n_agents)])
                total += float(rc.sum())
            self.assertTrue(np.isfinite(total))


@needs_numpy
class TestVectorEnv(unittest.TestCase):
    def test_each_env_draws_at_each_reset(self):
        v = polis.vector_env(GATHER_VARY, num_envs=3, threads=2, seed=4)
        try:
            v.reset(seed=4)
            seen = {}
            for _ in range(200):
                v.step(np.zeros(v.num_rows, np.int32))
                for k in range(3):
                    seen[(k, v.episode(k))] = v.task(k)
            self.assertGreater(len(seen), 6)
            with polis.Env(GATHER_VARY) as env:
                for (k, e), task in sorted(seen.items())[:8]:
                    env.reset(v.env_seed(4, k, e))
                    self.assertEqual(env.task, task, (k, e))
            self.assertGreater(len({json.dumps(t, sort_keys=True) for t in seen.values()}), 3)
        finally:
            v.close()


if __name__ == "__main__":
    unittest.main()
