"""Shared observation fields in the SDK: Env.shared_fields / Env.shared / Env.shared_dict,
ParallelEnv.shared_observations and VectorEnv.shared_observations, over Exploration with the
social plugin's social_state "shared": the shared matrix equals every agent's per-agent
social_state of a twin env given the same seed and actions, and no agent's observation or
state() holds it."""

import os
import random
import unittest

import polis
from common import GATHER, ROOT, legal_ids, needs_no_numpy, needs_numpy, np, tolist

EXPLORATION = os.path.join(ROOT, "rulesets", "exploration", "exploration.json")


def overrides(mode, agents=6):
    return {"agents": agents, "plugins.social.params.social_state": mode}


class TestEnv(unittest.TestCase):
    def test_equal_to_per_agent(self):
        with polis.Env(EXPLORATION, overrides(True)) as per, \
                polis.Env(EXPLORATION, overrides("shared")) as sh:
            self.assertEqual(per.shared_fields, ())
            self.assertEqual(per.shared, {})
            self.assertEqual([f.name for f in sh.shared_fields], ["social_state"])
            f = sh.shared_fields[0]
            self.assertEqual(f.dtype, "i8")
            self.assertEqual(len(f.shape), 2)
            self.assertEqual(f.shape[0], f.shape[1])
            self.assertNotIn("social_state", [g.name for g in sh.obs_fields])
            self.assertIn("social_state", [g.name for g in per.obs_fields])
            self.assertLess(sh.obs_size, per.obs_size)
            rng = random.Random(3)
            per.reset(11)
            sh.reset(11)
            ones = 0
            for _ in range(60):
                shared = tolist(sh.shared["social_state"])
                ones += sum(map(sum, shared))
                for a in range(per.n_agents):
                    self.assertEqual(tolist(per.agent_fields[a]["social_state"]), shared)
                    self.assertEqual(tolist(per.agent_masks[a]), tolist(sh.agent_masks[a]))
                acts = [rng.choice(legal_ids(per.agent_masks[a])) for a in range(per.n_agents)]
                per.step(acts)
                sh.step(acts)
            self.assertGreater(ones, 100)  # the graph was not empty
            self.assertEqual(tolist(sh.shared_dict()["social_state"]),
                             tolist(sh.shared["social_state"]))

    @needs_numpy
    def test_views(self):
        with polis.Env(EXPLORATION, overrides("shared")) as sh:
            sh.reset(1)
            v = sh.shared["social_state"]
            self.assertFalse(v.flags.writeable)
            self.assertEqual(v.dtype, np.int8)
            c = sh.shared_dict(copy=True)["social_state"]
            self.assertTrue(c.flags.writeable)
            self.assertTrue(np.array_equal(c, v))
            self.assertIs(sh.shared_dict()["social_state"], v)
            sh.reset(2)
            self.assertIs(sh.shared["social_state"], v)  # the same buffer after a reset

    @needs_no_numpy
    def test_without_numpy(self):
        with polis.Env(EXPLORATION, overrides("shared")) as sh:
            sh.reset(1)
            d = sh.shared_dict()["social_state"]
            self.assertIsInstance(d, list)
            self.assertEqual(len(d), sh.shared_fields[0].shape[0])

    def test_none(self):
        with polis.Env(GATHER) as env:
            env.reset(1)
            self.assertEqual(env.shared_fields, ())
            self.assertEqual(env.shared_dict(), {})

    def test_closed(self):
        env = polis.Env(EXPLORATION, overrides("shared"))
        env.close()
        with self.assertRaises(polis.StateError):
            env.shared_dict()

    def test_bad_value(self):
        with self.assertRaises(polis.PolisError) as cm:
            polis.Env(EXPLORATION, overrides("yes"))
        self.assertIn('params.social_state: expected true, false or "shared", got "yes"',
                      str(cm.exception))


class TestParallel(unittest.TestCase):
    def test_shared_observations(self):
        with polis.parallel_env(EXPLORATION, overrides=overrides("shared")) as env, \
                polis.parallel_env(EXPLORATION, overrides=overrides(True)) as twin:
            obs, _ = env.reset(seed=5)
            tobs, _ = twin.reset(seed=5)
            for a in env.agents:
                self.assertNotIn("social_state", obs[a]["observation"])
            so = env.shared_observations()
            self.assertEqual(list(so), ["social_state"])
            self.assertEqual(tolist(so["social_state"]),
                             tolist(tobs[twin.agents[0]]["observation"]["social_state"]))
            self.assertEqual(twin.shared_observations(), {})
            if np is not None:
                # state() is every agent's observation, without the shared field
                self.assertEqual(env.state().shape[0], env.num_agents)
                self.assertLess(env.state().shape[1], twin.state().shape[1])


@needs_numpy
class TestVector(unittest.TestCase):
    def test_shared_observations(self):
        with polis.vector_env(EXPLORATION, num_envs=3, seed=4,
                              overrides=overrides("shared", 4)) as vec:
            vec.reset(seed=4)
            rng = np.random.default_rng(2)
            for _ in range(20):
                legal = [np.flatnonzero(m) for m in vec.masks]
                vec.step(np.array([rng.choice(ids) for ids in legal], np.int32))
            so = vec.shared_observations()
            n = vec.shared_fields[0].shape[0]
            self.assertEqual(so["social_state"].shape, (3, n, n))
            views = vec.shared_observations(copy=False)["social_state"]
            self.assertEqual(len(views), 3)
            for k in range(3):
                self.assertFalse(views[k].flags.writeable)
                self.assertTrue(np.array_equal(views[k], so["social_state"][k]))
                self.assertGreater(int(views[k].sum()), 0)  # random social actions made edges
            self.assertNotIn("social_state", vec.fields)


if __name__ == "__main__":
    unittest.main()
