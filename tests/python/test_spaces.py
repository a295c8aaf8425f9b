"""polis.spaces: the fallback classes, and the choice between them and gymnasium."""

import importlib.util
import sys
import types
import unittest

import polis
from polis import spaces
from common import GATHER, needs_numpy, np, tolist

REAL_GYMNASIUM = np is not None and importlib.util.find_spec("gymnasium") is not None


class TestDiscrete(unittest.TestCase):
    def test_attributes_and_contains(self):
        d = spaces.Discrete(5)
        self.assertEqual((d.n, d.start, d.shape), (5, 0, ()))
        self.assertEqual(str(d.dtype), "int64")
        for x in (0, 4):
            self.assertTrue(d.contains(x))
            self.assertIn(x, d)
        for x in (-1, 5, 1.0, "1", None, True):
            self.assertFalse(d.contains(x), x)
        if np is not None:
            self.assertTrue(d.contains(np.int8(3)))
            self.assertTrue(d.contains(np.array(2)))
            self.assertFalse(d.contains(np.array([2])))
            self.assertFalse(d.contains(np.float32(2)))
        self.assertEqual(repr(d), "Discrete(5)")
        self.assertEqual(d, spaces.Discrete(5))
        self.assertNotEqual(d, spaces.Discrete(4))
        with self.assertRaises(ValueError):
            spaces.Discrete(0)

    def test_sample_is_seeded_and_in_range(self):
        d = spaces.Discrete(7, start=3)
        self.assertEqual(d.seed(5), [5])
        a = [d.sample() for _ in range(50)]
        d.seed(5)
        self.assertEqual([d.sample() for _ in range(50)], a)
        self.assertTrue(all(3 <= int(x) < 10 for x in a))
        self.assertGreater(len(set(int(x) for x in a)), 3)
        if np is not None:
            self.assertIsInstance(a[0], np.int64)
        else:
            self.assertIs(type(a[0]), int)

    def test_sample_with_mask(self):
        d = spaces.Discrete(5, seed=1)
        mask = [0, 1, 0, 1, 0]
        if np is not None:
            mask = np.array(mask, dtype=np.int8)
        got = {int(d.sample(mask=mask)) for _ in range(200)}
        self.assertEqual(got, {1, 3})
        self.assertEqual(int(d.sample(mask=[0, 0, 0, 0, 0])), 0)
        self.assertEqual(int(spaces.Discrete(3, start=2).sample(mask=[0, 0, 0])), 2)
        with self.assertRaises(ValueError):
            d.sample(mask=[1, 1])
        with self.assertRaises(ValueError):
            d.sample(mask=[0, 2, 0, 0, 0])

    def test_sample_with_probability(self):
        d = spaces.Discrete(3, seed=2)
        got = {int(d.sample(probability=[0.0, 0.0, 1.0])) for _ in range(20)}
        self.assertEqual(got, {2})
        with self.assertRaises(ValueError):
            d.sample(probability=[0.5, 0.6, 0.0])
        with self.assertRaises(ValueError):
            d.sample(mask=[1, 1, 1], probability=[1, 0, 0])


class TestBoxAndDict(unittest.TestCase):
    def test_box_int(self):
        b = spaces.Box(-128, 127, (2, 3), "int8", seed=3)
        self.assertEqual(b.shape, (2, 3))
        self.assertEqual(str(b.dtype), "int8")
        s = b.sample()
        self.assertEqual(len(tolist(s)), 2)
        self.assertEqual(len(tolist(s)[0]), 3)
        self.assertTrue(b.contains(s))
        self.assertTrue(b.contains([[1, 2, 3], [4, 5, -128]]))
        self.assertFalse(b.contains([[1, 2, 3]]))
        self.assertFalse(b.contains([[1, 2, 3], [4, 5, 128]]))
        if np is not None:
            self.assertTrue(b.contains(np.zeros((2, 3), np.int8)))
            self.assertFalse(b.contains(np.zeros((2, 3), np.int32)))  # cannot cast to int8
        else:
            self.assertFalse(b.contains([[1, 2, 3], [4, 5, 0.5]]))
        with self.assertRaises(ValueError):
            b.sample(mask=[1])

    def test_box_float_unbounded(self):
        b = spaces.Box(float("-inf"), float("inf"), (4,), "float32", seed=1)
        s = tolist(b.sample())
        self.assertEqual(len(s), 4)
        self.assertTrue(b.contains(s))

    def test_dict(self):
        d = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Box(0, 1, (2,), "int8")}, seed=9)
        self.assertEqual(list(d), ["a", "b"])
        self.assertEqual(len(d), 2)
        self.assertIsInstance(d["a"], spaces.Discrete)
        s = d.sample()
        self.assertTrue(d.contains(s))
        self.assertFalse(d.contains({"a": 0}))
        self.assertFalse(d.contains([0, [0, 1]]))
        d.seed(9)
        s2 = d.sample()
        self.assertEqual(tolist(s2), tolist(s))
        self.assertEqual(set(d.sample(mask={"a": [0, 0, 1], "b": None})), {"a", "b"})
        self.assertEqual(int(d.sample(mask={"a": [0, 0, 1], "b": None})["a"]), 2)


class _Recorder:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _fake_gymnasium():
    gym = types.ModuleType("gymnasium")
    sp = types.ModuleType("gymnasium.spaces")
    sp.Discrete = type("Discrete", (_Recorder,), {})
    sp.Box = type("Box", (_Recorder,), {})
    sp.Dict = type("Dict", (_Recorder,), {})
    gym.spaces = sp
    return gym, sp


class TestBackendChoice(unittest.TestCase):
    def test_fallback_when_gymnasium_is_absent(self):
        if REAL_GYMNASIUM:
            self.skipTest("gymnasium is installed")
        self.assertEqual(spaces.backend(), "polis")
        env = polis.parallel_env(GATHER)
        self.assertIsInstance(env.action_space("agent_0"), spaces.Discrete)
        self.assertIsInstance(env.observation_space("agent_0"), spaces.Dict)
        env.close()

    @needs_numpy
    def test_gymnasium_is_used_when_importable(self):
        # A stand-in gymnasium records how the SDK builds its spaces: the documented
        # signatures Discrete(n), Box(low=, high=, shape=, dtype=), Dict(mapping).
        saved = {k: sys.modules.get(k) for k in ("gymnasium", "gymnasium.spaces")}
        gym, sp = _fake_gymnasium()
        sys.modules["gymnasium"], sys.modules["gymnasium.spaces"] = gym, sp
        try:
            self.assertEqual(spaces.backend(), "gymnasium")
            env = polis.parallel_env(GATHER)
            a = env.action_space("agent_0")
            self.assertIsInstance(a, sp.Discrete)
            self.assertEqual(a.args, (5,))
            o = env.observation_space("agent_0")
            self.assertIsInstance(o, sp.Dict)
            (top,), _ = o.args, o.kwargs
            self.assertEqual(list(top), ["observation", "action_mask"])
            mask = top["action_mask"]
            self.assertEqual(mask.kwargs, {"low": 0, "high": 1, "shape": (5,),
                                           "dtype": np.dtype(np.int8)})
            # the view's declared range per channel: agents [-1, 2], coins [0, 1]
            view = top["observation"].args[0]["view"]
            self.assertEqual(set(view.kwargs), {"low", "high", "dtype"})
            self.assertEqual(view.kwargs["dtype"], np.dtype(np.int8))
            low, high = view.kwargs["low"], view.kwargs["high"]
            self.assertEqual((low.shape, low.dtype), ((2, 5, 5), np.dtype(np.int8)))
            self.assertEqual((low[0].min(), low[0].max(), high[0].min(), high[0].max()),
                             (-1, -1, 2, 2))
            self.assertEqual((low[1].min(), low[1].max(), high[1].min(), high[1].max()),
                             (0, 0, 1, 1))
            pos = top["observation"].args[0]["position"]
            self.assertEqual(pos.kwargs["high"].tolist(), [11, 11])  # a 12x12 grid
            self.assertIs(env.observation_space("agent_0"), o)
            env.close()
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertEqual(spaces.backend(), "gymnasium" if REAL_GYMNASIUM else "polis")

    @unittest.skipUnless(REAL_GYMNASIUM, "gymnasium is not installed: the real-gymnasium "
                         "check needs it (the stand-in test above covers the calls)")
    def test_real_gymnasium(self):
        import gymnasium
        env = polis.parallel_env(GATHER, max_steps=30)
        obs, _ = env.reset(seed=0)
        for a in env.possible_agents:
            self.assertIsInstance(env.action_space(a), gymnasium.spaces.Discrete)
            self.assertTrue(env.observation_space(a).contains(obs[a]))
        while env.agents:
            obs, *_ = env.step({a: env.action_space(a).sample(mask=obs[a]["action_mask"])
                                for a in env.agents})
            for a in obs:
                self.assertTrue(env.observation_space(a).contains(obs[a]))
        env.close()


if __name__ == "__main__":
    unittest.main()
