"""Pixel observations through the SDK (polis.pixels, polis_pixels_obs): the uint8 Box space,
frames equal to the C renderer's, determinism, the scenario's "pixels" key and pixels=,
the vector env's batch, no allocation per step, and the refused arguments."""

import os
import unittest

import polis
from common import GATHER, ROOT, needs_numpy, np

SURVIVAL_PIXELS = os.path.join(ROOT, "rulesets", "survival", "survival_pixels.json")
SURVIVAL_MAC = os.path.join(ROOT, "rulesets", "survival", "survival_mac.json")


def rollout(env, seed, steps):
    """Frames of agent_0 over a fixed action sequence (every agent moving in turn)."""
    obs, _ = env.reset(seed=seed)
    frames = [obs["agent_0"]["observation"].copy()]
    for t in range(steps):
        if not env.agents:
            break
        obs, *_ = env.step({a: 1 + (t + i) % 5 for i, a in enumerate(env.agents)})
        frames.append(obs["agent_0"]["observation"].copy())
    return frames


@needs_numpy
class TestParallelPixels(unittest.TestCase):
    def test_scenario_box_and_frame(self):
        # survival_pixels.json: Craftax-Classic-Pixels' 63 x 63 x 3 at 7 px cells
        with polis.parallel_env(SURVIVAL_PIXELS) as env:
            space = env.observation_space("agent_0")["observation"]
            self.assertEqual(space.shape, (63, 63, 3))
            self.assertEqual(space.dtype, np.uint8)
            self.assertEqual((int(space.low.min()), int(space.high.max())), (0, 255))
            obs, _ = env.reset(seed=5)
            self.assertEqual(len(obs), 4)
            for a in env.agents:
                frame = obs[a]["observation"]
                self.assertEqual((frame.shape, frame.dtype), ((63, 63, 3), np.uint8))
                self.assertTrue(env.observation_space(a).contains(obs[a]))
                # the view is the C renderer's frame of the agent's view window
                view = env.core.render_rgb(a, cell_px=7)
                self.assertEqual(view.shape, (49, 63, 3))
                np.testing.assert_array_equal(frame[:49], view)
            # the stat rows: health, food, drink and energy full at the start (9 of 9)
            strip = obs["agent_0"]["observation"][49:]
            for k in range(4):
                cell = strip[:7, 7 * k:7 * k + 7]
                self.assertTrue((cell == cell[6, 0]).all())
                self.assertGreater(int(cell.sum()), 0)

    def test_deterministic_and_changing(self):
        with polis.parallel_env(SURVIVAL_PIXELS) as a, polis.parallel_env(SURVIVAL_PIXELS) as b:
            fa, fb = rollout(a, 11, 30), rollout(b, 11, 30)
        self.assertEqual(len(fa), len(fb))
        for x, y in zip(fa, fb):
            np.testing.assert_array_equal(x, y)
        self.assertTrue(any(not np.array_equal(fa[0], f) for f in fa[1:]))

    def test_fresh_arrays_or_views(self):
        with polis.parallel_env(SURVIVAL_PIXELS) as env:
            o1, _ = env.reset(seed=1)
            o2, *_ = env.step({a: 2 for a in env.agents})
            self.assertIsNot(o1["agent_0"]["observation"], o2["agent_0"]["observation"])
            self.assertTrue(o1["agent_0"]["observation"].flags.writeable)
        with polis.parallel_env(SURVIVAL_PIXELS, copy_obs=False) as env:
            o1, _ = env.reset(seed=1)
            o2, *_ = env.step({a: 2 for a in env.agents})
            self.assertIs(o1["agent_0"]["observation"], o2["agent_0"]["observation"])

    def test_both_grey_downscale(self):
        with polis.parallel_env(SURVIVAL_PIXELS, pixels={"obs": "both"}) as env:
            space = env.observation_space("agent_0")["observation"]
            self.assertEqual(set(space.spaces), {"symbolic", "pixels"})
            self.assertEqual(space["pixels"].shape, (63, 63, 3))
            obs, _ = env.reset(seed=2)
            fields = obs["agent_0"]["observation"]
            self.assertEqual(set(fields), {f.name for f in env.core.obs_fields} | {"pixels"})
        with polis.parallel_env(SURVIVAL_PIXELS, pixels={"cell_px": 14}) as env:
            rgb14 = env.reset(seed=2)[0]["agent_0"]["observation"].astype(np.uint32)
            self.assertEqual(rgb14.shape, (126, 126, 3))
        spec = {"cell_px": 14, "downscale": 2, "grey": True}
        with polis.parallel_env(SURVIVAL_PIXELS, pixels=spec) as env:
            self.assertEqual(env.observation_space("agent_0")["observation"].shape, (63, 63, 1))
            grey = env.reset(seed=2)[0]["agent_0"]["observation"]
        # 2 x 2 blocks averaged (half up), then the luma (299 R + 587 G + 114 B) / 1000
        avg = (rgb14.reshape(63, 2, 63, 2, 3).sum(axis=(1, 3)) + 2) // 4
        luma = (299 * avg[..., 0] + 587 * avg[..., 1] + 114 * avg[..., 2] + 500) // 1000
        np.testing.assert_array_equal(grey[..., 0], luma)
        # the scenario's key with overrides: no stats, the view alone
        with polis.parallel_env(SURVIVAL_PIXELS, overrides={"pixels.stats": False}) as env:
            self.assertEqual(env.observation_space("agent_0")["observation"].shape, (49, 63, 3))

    def test_defaults_unchanged_and_opt_in(self):
        with polis.parallel_env(SURVIVAL_MAC) as env:
            self.assertEqual(set(env.observation_space("agent_0")["observation"].spaces),
                             {"symbolic"})
        with polis.parallel_env(SURVIVAL_PIXELS, pixels=False) as env:
            self.assertEqual(set(env.observation_space("agent_0")["observation"].spaces),
                             {"symbolic"})
        with polis.parallel_env(SURVIVAL_MAC, pixels=True, action_mask="info") as env:
            self.assertEqual(env.observation_space("agent_0").shape, (63, 63, 3))
        with polis.parallel_env(GATHER, pixels=8, action_mask=None) as env:
            obs, _ = env.reset(seed=1)
            self.assertEqual(obs["agent_0"].dtype, np.uint8)
            self.assertEqual(obs["agent_0"].shape[0] % 8, 0)

    def test_hidden_agents_are_not_drawn(self):
        # MAC's players start side by side: agent_1 is in agent_0's view. Hidden from agent_0
        # by the scenario's visibility, it is not drawn in agent_0's frame (the frame
        # render_rgb draws, which honours visibility too), but still in its own
        scn = {"polis": 1, "agents": 2, "max_steps": 50,
               "plugins": [{"name": "survival", "params": {"observation": "mac"}}],
               "pixels": {"cell_px": 7}}
        with polis.parallel_env(scn, action_mask=None) as env:
            seen = env.reset(seed=3)[0]
            self.assertTrue(env.core.visible(0, 1))
        hidden = dict(scn, visibility=[{"observers": [0], "hidden": [1]}])
        with polis.parallel_env(hidden, action_mask=None) as env:
            obs = env.reset(seed=3)[0]
            self.assertFalse(env.core.visible(0, 1))
            np.testing.assert_array_equal(obs["agent_0"][:49], env.core.render_rgb(0, cell_px=7))
        self.assertFalse(np.array_equal(seen["agent_0"], obs["agent_0"]))
        np.testing.assert_array_equal(seen["agent_1"], obs["agent_1"])

    def test_refused(self):
        with self.assertRaisesRegex(polis.InvalidArgumentError,
                                    "pixels obs: cell_px 0 is not 1 to 64"):
            polis.parallel_env(SURVIVAL_MAC, pixels={"cell_px": 0})
        with self.assertRaisesRegex(polis.InvalidArgumentError,
                                    "pixels obs: downscale 2 is not a divisor of cell_px 7"):
            polis.parallel_env(SURVIVAL_MAC, pixels={"downscale": 2})
        with self.assertRaisesRegex(polis.InvalidArgumentError, "unknown key 'cell'"):
            polis.parallel_env(SURVIVAL_MAC, pixels={"cell": 7})
        with self.assertRaisesRegex(polis.InvalidArgumentError, 'pixels.obs must be'):
            polis.parallel_env(SURVIVAL_MAC, pixels={"obs": "rgb"})
        with self.assertRaisesRegex(polis.InvalidArgumentError, "pixels must be None"):
            polis.parallel_env(SURVIVAL_MAC, pixels="7")
        with self.assertRaisesRegex(polis.InvalidArgumentError, "flatten=True"):
            polis.parallel_env(SURVIVAL_PIXELS, flatten=True)
        with self.assertRaisesRegex(polis.InvalidArgumentError, "no scene map"):
            polis.parallel_env({"polis": 1, "agents": 1, "max_steps": 3}, pixels=7)
        # the scenario key is checked by the engine when the scenario loads
        with self.assertRaisesRegex(polis.ConfigError, r"pixels\.grey: expected true or false"):
            polis.parallel_env(SURVIVAL_PIXELS, overrides={"pixels.grey": 1})


@needs_numpy
class TestVectorPixels(unittest.TestCase):
    def test_batch_matches_parallel_env(self):
        with polis.vector_env(SURVIVAL_PIXELS, num_envs=2, seed=7) as v:
            self.assertEqual(v.single_observation_space["observation"].shape, (63, 63, 3))
            self.assertEqual(v.observation_space["observation"].shape, (8, 63, 63, 3))
            obs, _ = v.reset(seed=7)
            batch = obs["observation"]
            self.assertEqual((batch.shape, batch.dtype), ((8, 63, 63, 3), np.uint8))
            for k in range(2):
                with polis.parallel_env(SURVIVAL_PIXELS) as env:
                    o, _ = env.reset(seed=v.env_seed(7, k, 0))
                    for a in range(4):
                        np.testing.assert_array_equal(batch[k * 4 + a],
                                                      o[f"agent_{a}"]["observation"])
            before = batch.copy()
            v.step(np.full(8, 3))
            self.assertIs(v.observations["observation"], batch)
            self.assertFalse(np.array_equal(before, batch))

    def test_grey_both(self):
        spec = {"cell_px": 14, "downscale": 2, "grey": True, "obs": "both"}
        with polis.vector_env(SURVIVAL_PIXELS, num_envs=3, pixels=spec) as v:
            obs, _ = v.reset(seed=1)
            self.assertEqual(obs["observation"]["pixels"].shape, (12, 63, 63, 1))
            self.assertEqual(set(obs["observation"]), {"symbolic", "pixels"})
            with polis.parallel_env(SURVIVAL_PIXELS, pixels=spec) as env:
                o, _ = env.reset(seed=v.env_seed(1, 2, 0))
                np.testing.assert_array_equal(obs["observation"]["pixels"][9],
                                              o["agent_1"]["observation"]["pixels"])

    def test_step_allocates_nothing(self):
        # as TestVectorStepAllocatesNothing: Python allocations traced over 200 steps with
        # pixels drawn (a scratch buffer and a copy per env with grey) stay below a row's
        # byte per row: no per-step array
        import tracemalloc
        for spec in (7, {"cell_px": 14, "downscale": 2, "grey": True}):
            with polis.vector_env(SURVIVAL_PIXELS, num_envs=4, pixels=spec,
                                  max_steps=30) as v:
                v.reset(seed=0)
                acts = np.random.default_rng(0).integers(1, 5, (8, v.num_rows))

                def steps(n):
                    for i in range(n):
                        v.actions[:] = acts[i & 7]
                        v.step()
                steps(20)
                tracemalloc.start()
                try:
                    base, _ = tracemalloc.get_traced_memory()
                    tracemalloc.reset_peak()
                    steps(200)
                    _, peak = tracemalloc.get_traced_memory()
                finally:
                    tracemalloc.stop()
                self.assertLess(peak - base, v.num_rows * 64, f"{peak - base} bytes at the peak")
                self.assertGreater(int(v.episode(0)), 3)  # auto-resets happened


class TestWithoutNumpyPixels(unittest.TestCase):
    @unittest.skipIf(np is not None, "numpy is importable in this run")
    def test_needs_numpy(self):
        with self.assertRaisesRegex(polis.InvalidArgumentError, "need numpy"):
            polis.parallel_env(SURVIVAL_PIXELS)
        with polis.parallel_env(SURVIVAL_PIXELS, pixels=False) as env:
            env.reset(seed=1)


if __name__ == "__main__":
    unittest.main()
