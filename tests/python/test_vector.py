"""polis.vector_env: the C vector API (polis_vec) — batched zero-copy buffers, determinism
across thread counts, next-step auto-reset, errors. numpy only (skipped, with the reason,
in the no-numpy run, which checks the error instead)."""

import gc
import importlib.util
import unittest

import polis
from common import GATHER, STAGGERED, needs_no_numpy, needs_numpy, np

M, N_AGENTS, N_ACTIONS = 3, 4, 5  # gather: 4 agents, 5 actions


def address(view):
    return view.__array_interface__["data"][0]


def snapshot(v):
    """Every buffer of a vector env, copied, so runs can be compared after it moved on."""
    out = {k: a.copy() for k, a in v.fields.items()}
    for k in ("masks", "rewards", "terminations", "truncations", "illegal", "autoreset"):
        out[k] = getattr(v, k).copy()
    return out


def assert_same(tc, a, b, what):
    tc.assertEqual(sorted(a), sorted(b))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"{what}: {k}")


@needs_numpy
class TestShapes(unittest.TestCase):
    def setUp(self):
        self.v = polis.vector_env(GATHER, num_envs=M, threads=2, seed=11)

    def tearDown(self):
        self.v.close()

    def test_counts_and_names(self):
        v = self.v
        self.assertEqual((v.num_envs, v.num_threads, v.agents_per_env, v.num_rows),
                         (M, 2, N_AGENTS, M * N_AGENTS))
        self.assertEqual(v.name, "gather")
        self.assertEqual(v.agent_names, ("agent_0", "agent_1", "agent_2", "agent_3"))
        self.assertEqual(v.n_actions, N_ACTIONS)
        mode = v.metadata["autoreset_mode"]
        if importlib.util.find_spec("gymnasium") is not None:
            from gymnasium.vector import AutoresetMode
            self.assertIs(mode, AutoresetMode.NEXT_STEP)
        else:
            self.assertEqual(mode, "NextStep")
        np.testing.assert_array_equal(v.row_env, [0] * 4 + [1] * 4 + [2] * 4)
        np.testing.assert_array_equal(v.row_agent, [0, 1, 2, 3] * 3)
        self.assertEqual(v.rows(1), slice(4, 8))

    def test_buffer_shapes_and_dtypes(self):
        v, rows = self.v, M * N_AGENTS
        expect = {
            "masks": ((rows, N_ACTIONS), np.int8),
            "actions": ((rows,), np.int32),
            "rewards": ((rows,), np.float32),
            "terminations": ((rows,), np.bool_),
            "truncations": ((rows,), np.bool_),
            "illegal": ((rows,), np.bool_),
            "autoreset": ((M,), np.bool_),
        }
        for name, (shape, dtype) in expect.items():
            a = getattr(v, name)
            self.assertEqual((a.shape, a.dtype), (shape, np.dtype(dtype)), name)
            self.assertEqual(a.flags.writeable, name == "actions", name)
        self.assertEqual(v.fields["view"].shape, (rows, 2, 5, 5))
        self.assertEqual(v.fields["view"].dtype, np.int8)
        self.assertEqual(v.fields["position"].shape, (rows, 2))
        self.assertEqual(v.fields["position"].dtype, np.int32)
        self.assertEqual(v.single_action_space.n, N_ACTIONS)
        so, bo = v.single_observation_space, v.observation_space
        self.assertEqual(so["observation"]["view"].shape, (2, 5, 5))
        self.assertEqual(so["action_mask"].shape, (N_ACTIONS,))
        self.assertEqual(bo["observation"]["position"].shape, (rows, 2))
        self.assertEqual(bo["action_mask"].shape, (rows, N_ACTIONS))
        self.assertEqual(tuple(v.action_space.shape), (rows,))
        self.assertEqual(v.action_space.nvec.tolist(), [N_ACTIONS] * rows)
        self.assertTrue(v.action_space.contains(v.action_space.sample()))
        self.assertEqual(getattr(v.metadata["autoreset_mode"], "value",
                                 v.metadata["autoreset_mode"]), "NextStep")
        obs, _ = v.reset(seed=0)
        self.assertTrue(bo.contains(obs))

    def test_rows_match_a_lone_env_layout(self):
        # Each env's rows hold the same observation a lone env of that seed shows.
        v = self.v
        obs, _ = v.reset(seed=4)
        obs = obs["observation"]
        for k in range(M):
            with polis.Env(GATHER) as e:
                e.reset(v.env_seed(4, k, 0))
                for name in obs:
                    np.testing.assert_array_equal(obs[name][v.rows(k)], e.fields[name],
                                                  err_msg=f"env {k} {name}")
                np.testing.assert_array_equal(v.masks[v.rows(k)], e.masks)


@needs_numpy
class TestZeroCopy(unittest.TestCase):
    def test_views_are_the_engine_buffers(self):
        with polis.vector_env(GATHER, num_envs=M) as v:
            for name in ("obs", "masks", "actions", "rewards", "terminations", "truncations",
                         "illegal", "autoreset"):
                self.assertEqual(address(getattr(v, name)), v.buffer_address(name), name)
            base = v.buffer_address("obs")
            for f in v.obs_fields:
                fv = v.fields[f.name]
                self.assertEqual(address(fv), base + f.offset, f.name)
                self.assertEqual(fv.strides[0], v.obs_size)
                # row r of the field is at the record of row r (all envs, env-major)
                self.assertEqual(address(fv[M * N_AGENTS - 1]),
                                 base + (M * N_AGENTS - 1) * v.obs_size + f.offset)

    def test_same_objects_every_call_and_engine_writes_show(self):
        with polis.vector_env(GATHER, num_envs=M, threads=M, max_steps=5) as v:
            full, infos = v.reset(seed=1)
            obs = full["observation"]
            self.assertIs(obs, v.fields)
            self.assertIs(full["action_mask"], v.masks)
            self.assertIs(infos["autoreset"], v.autoreset)
            self.assertIs(infos["action_mask"], v.masks)
            pos_before = obs["position"].copy()
            moved = False
            for _ in range(12):  # crosses two auto-resets
                out = v.step(np.full(v.num_rows, 4, np.int32))  # move_east
                self.assertIs(out[0], full)
                self.assertIs(out[1], v.rewards)
                self.assertIs(out[2], v.terminations)
                self.assertIs(out[3], v.truncations)
                self.assertIs(out[4], infos)
                self.assertIs(out[0]["observation"]["position"], obs["position"])
                moved = moved or not np.array_equal(obs["position"], pos_before)
            self.assertTrue(moved, "the views never changed: not the engine's memory")

    def test_actions_buffer_is_what_the_engine_reads(self):
        with polis.vector_env(GATHER, num_envs=2) as v:
            v.reset(seed=0)
            v.actions[:] = 0
            v.actions[5] = 99  # written through the view, no step(actions) copy
            with self.assertRaisesRegex(polis.ActionError, r"env 1: .*action 99.*\(row 5\)"):
                v.step()

    def test_view_outlives_close(self):
        v = polis.vector_env(GATHER, num_envs=2)
        v.reset(seed=3)
        pos = v.fields["position"]
        kept = pos.copy()
        v.close()
        self.assertTrue(v.closed)
        with self.assertRaisesRegex(polis.StateError, r"^gather: the vector env is closed$"):
            v.step()
        with self.assertRaises(polis.StateError):
            v.rewards
        gc.collect()
        np.testing.assert_array_equal(pos, kept)  # memory still alive through the view
        del pos
        gc.collect()


@needs_numpy
class TestDeterminism(unittest.TestCase):
    def run_vec(self, threads, steps=40, seed=7, scenario=GATHER, m=4):
        rng = np.random.default_rng(123)
        trace = []
        with polis.vector_env(scenario, num_envs=m, threads=threads, max_steps=9) as v:
            v.reset(seed=seed)
            trace.append(snapshot(v))
            for _ in range(steps):
                v.step(rng.integers(0, v.n_actions, size=v.num_rows))
                trace.append(snapshot(v))
            hashes = [v.state_hash(k) for k in range(m)]
        return trace, hashes

    def test_threads_1_and_2_and_4_agree(self):
        t1, h1 = self.run_vec(1)
        for threads in (2, 4):
            tt, ht = self.run_vec(threads)
            self.assertEqual(h1, ht)
            for i, (a, b) in enumerate(zip(t1, tt)):
                assert_same(self, a, b, f"threads {threads} step {i}")
        # the run crossed episode boundaries, so auto-reset is covered too
        self.assertTrue(any(s["autoreset"].any() for s in t1))

    def test_env_k_is_a_lone_env(self):
        seed, m = 5, 3
        rng = np.random.default_rng(9)
        acts = rng.integers(0, N_ACTIONS, size=(8, m * N_AGENTS))
        with polis.vector_env(GATHER, num_envs=m, threads=2, max_steps=9) as v:
            v.reset(seed=seed)
            lones = [polis.Env(GATHER, {"max_steps": 9}) for _ in range(m)]
            for k, e in enumerate(lones):
                e.reset(polis.vector.env_seed(seed, k, 0))
            for t in range(8):
                v.step(acts[t])
                for k, e in enumerate(lones):
                    e.step(acts[t][v.rows(k)])
                    np.testing.assert_array_equal(v.obs[v.rows(k)], e.obs, f"t{t} env {k}")
                    np.testing.assert_array_equal(v.rewards[v.rows(k)], e.rewards)
                    self.assertEqual(v.state_hash(k), e.state_hash())
            for e in lones:
                e.close()

    def test_unseeded_resets_are_reproducible(self):
        def firsts():
            with polis.vector_env(GATHER, num_envs=2, seed=21) as v:
                out = []
                for _ in range(3):
                    v.reset()
                    out.append((v.last_seed, v.obs.copy()))
                return out
        a, b = firsts(), firsts()
        self.assertEqual(a[0][0], 21)
        self.assertEqual([s for s, _ in a], [s for s, _ in b])
        self.assertEqual(len({s for s, _ in a}), 3)
        for (_, x), (_, y) in zip(a, b):
            np.testing.assert_array_equal(x, y)


@needs_numpy
class TestAutoreset(unittest.TestCase):
    def test_next_step_autoreset_on_the_boundary(self):
        seed = 13
        with polis.vector_env(GATHER, num_envs=2, threads=2, max_steps=3) as v:
            v.reset(seed=seed)
            self.assertFalse(v.autoreset.any())
            for t in range(3):
                _, rew, term, trunc, info = v.step(np.zeros(v.num_rows, np.int32))
                self.assertFalse(info["autoreset"].any(), f"step {t}")
            # the ending step shows the final state: truncated by the time limit
            self.assertTrue(trunc.all())
            self.assertFalse(term.any())
            self.assertEqual([v.tick(k) for k in range(2)], [3, 3])
            final = v.obs.copy()
            self.assertTrue((v.masks[:, 1:] == 0).all(), "finished agents may only noop")
            # The next step resets instead of stepping; its actions are ignored, not even
            # validated (99 would be refused otherwise).
            _, rew, term, trunc, info = v.step(np.full(v.num_rows, 99, np.int32))
            np.testing.assert_array_equal(info["autoreset"], [True, True])
            self.assertFalse(term.any() or trunc.any() or rew.any())
            self.assertEqual([v.tick(k) for k in range(2)], [0, 0])
            self.assertEqual([v.episode(k) for k in range(2)], [1, 1])
            self.assertFalse(np.array_equal(v.obs, final))
            for k in range(2):
                with polis.Env(GATHER, {"max_steps": 3}) as e:
                    e.reset(v.env_seed(seed, k, 1))
                    np.testing.assert_array_equal(v.obs[v.rows(k)], e.obs, f"env {k}")
                    np.testing.assert_array_equal(v.masks[v.rows(k)], e.masks.view(np.int8))
            # and the step after that is a normal step again
            _, _, _, _, info = v.step(np.zeros(v.num_rows, np.int32))
            self.assertFalse(info["autoreset"].any())
            self.assertEqual(v.tick(0), 1)
            # reset() restarts the episode counts
            v.reset(seed=seed)
            self.assertEqual(v.episode(1), 0)

    def test_one_agent_done_is_not_an_env_done(self):
        # staggered.lua: agent_1 terminates after step 3, agent_2 truncated after step 5,
        # the rest at max_steps 8.
        with polis.vector_env(STAGGERED, num_envs=2) as v:
            v.reset()
            for t in range(1, 9):
                _, _, term, trunc, info = v.step(np.zeros(v.num_rows, np.int32))
                self.assertFalse(info["autoreset"].any(), f"step {t}")
                if t == 3:
                    np.testing.assert_array_equal(term, [0, 1, 0, 0] * 2)
            np.testing.assert_array_equal(term, [0, 1, 0, 0] * 2)
            np.testing.assert_array_equal(trunc, [1, 0, 1, 1] * 2)
            v.step()
            np.testing.assert_array_equal(v.autoreset, [True, True])
            self.assertFalse(v.terminations.any() or v.truncations.any())


@needs_numpy
class TestErrors(unittest.TestCase):
    def test_bad_counts(self):
        with self.assertRaisesRegex(polis.InvalidArgumentError, r"n_envs is 0, expected"):
            polis.vector_env(GATHER, num_envs=0)
        with self.assertRaisesRegex(polis.InvalidArgumentError,
                                    r"n_threads is 3, expected 1 to n_envs \(2\)"):
            polis.vector_env(GATHER, num_envs=2, threads=3)
        with self.assertRaisesRegex(polis.InvalidArgumentError, r"n_threads is 0"):
            polis.vector_env(GATHER, num_envs=2, threads=0)
        # would wrap to 1 as an int32 argument
        with self.assertRaisesRegex(polis.InvalidArgumentError, r"n_envs is 4294967297"):
            polis.vector_env(GATHER, num_envs=2 ** 32 + 1)
        with self.assertRaisesRegex(polis.InvalidArgumentError, r"must be an integer"):
            polis.vector_env(GATHER, num_envs=2.0)

    def test_bad_action_names_env_and_row_and_runs_nothing(self):
        with polis.vector_env(GATHER, num_envs=3, threads=3) as v:
            v.reset(seed=2)
            before = snapshot(v)
            acts = np.zeros(v.num_rows, np.int64)
            acts[9] = 7
            acts[10] = -1
            with self.assertRaises(polis.ActionError) as cm:
                v.step(acts)
            msg = str(cm.exception)
            self.assertRegex(msg, r"^env 2: step: agent 1 \(agent_1\): action 7 is outside "
                                  r"\[0, 5\) at tick 0 \(row 9\)$")
            assert_same(self, snapshot(v), before, "after a refused step")
            self.assertEqual(v.tick(2), 0)
            acts[3] = 2 ** 40  # beyond int32: refused by the SDK in the same wording
            with self.assertRaisesRegex(polis.ActionError,
                                        r"^env 0: step: agent 3 \(agent_3\): action "
                                        r"1099511627776 is outside \[0, 5\) at tick 0 "
                                        r"\(row 3\)$"):
                v.step(acts)
            with self.assertRaisesRegex(polis.ActionError, r"integer ids, got dtype float"):
                v.step(np.zeros(v.num_rows))
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"shape \(5,\)"):
                v.step(np.zeros(5, np.int32))
            # the vec is unharmed: [M, n] actions work
            v.step(np.zeros((3, N_AGENTS), np.int32))
            self.assertEqual(v.tick(2), 1)

    def test_state_errors(self):
        with polis.vector_env(GATHER, num_envs=2) as v:
            with self.assertRaisesRegex(polis.StateError, r"reset"):
                v.step()
            with self.assertWarnsRegex(UserWarning, r"polis reads no reset option \['x'\]"):
                v.reset(options={"x": 1})
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"options must be a dict"):
                v.reset(options=3)
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"outside \[0, 2\^64\)"):
                v.reset(seed=-1)
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"env 2 is outside"):
                v.tick(2)

    def test_overrides_go_through_resolve(self):
        with polis.vector_env(GATHER, num_envs=2, agents=2,
                              overrides={"plugins.gather.params.coins": 0}) as v:
            self.assertEqual((v.agents_per_env, v.num_rows), (2, 4))
        with self.assertRaisesRegex(polis.ConfigError,
                                    r"^env 0: .*gather\.json: plugins\[0\]\.params\.coins: "
                                    r".*\(scenario with overrides\)$"):
            polis.vector_env(GATHER, num_envs=2, plugins__gather__params__coins=-1)
        with self.assertRaisesRegex(polis.ConfigError, r'no element of plugins is named "nope"'):
            polis.vector_env(GATHER, num_envs=2, **{"plugins.nope.params.coins": 1})


@needs_numpy
class TestRender(unittest.TestCase):
    """render_mode (docs/python.md, "Render modes"): frames of every env from the C
    renderer, each the frame a single env reset with that env's seed draws; the text views;
    refused modes and games without a scene map."""

    # the agents' palette in gather: the base list without #ffd60a, which looks like a coin
    COLOURS = [(0xff, 0x3b, 0x30), (0x2f, 0x7b, 0xff), (0xff, 0x2f, 0xd0), (0x00, 0xe5, 0xff)]

    def test_rgb_array(self):
        import pickle
        import re
        c = polis.parallel.RGB_CELL_PX
        with polis.vector_env(GATHER, num_envs=M, seed=5, render_mode="rgb_array") as v:
            self.assertEqual(v.metadata["render_modes"], ["ansi", "human", "rgb_array"])
            with self.assertRaisesRegex(polis.StateError, r"^env 0: .*no episode yet"):
                v.render()
            v.reset()
            v.step(np.zeros(v.num_rows, np.int32))
            frames = v.render()
            self.assertIsInstance(frames, tuple)
            self.assertEqual(len(frames), M)
            batch = v.render_rgb()
            self.assertEqual(batch.shape, (M, 12 * c, 12 * c, 3))
            self.assertEqual(batch.dtype, np.uint8)
            for k in range(M):
                self.assertEqual(frames[k].shape, (12 * c, 12 * c, 3))
                np.testing.assert_array_equal(frames[k], batch[k])
                # the frame of a single env at the same moment, each agent's colour at the
                # centre of the cell its text view names
                with polis.Env(GATHER) as e:
                    e.reset(v.env_seed(5, k, 0))
                    e.step([0] * N_AGENTS)
                    np.testing.assert_array_equal(frames[k], e.render_rgb(None, c), f"env {k}")
                    for a in range(N_AGENTS):
                        x, y = map(int, re.search(r"at \((\d+), (\d+)\)", e.render(a)).groups())
                        self.assertEqual(tuple(frames[k][y * c + c // 2, x * c + c // 2]),
                                         self.COLOURS[a], (k, a))
            self.assertFalse((batch[0] == batch[1]).all(), "two envs, two seeds, one frame")
            # agents' views: agent_1 at the centre of each env's 5 x 5 window
            views = v.render_rgb("agent_1", 4)
            self.assertEqual(views.shape, (M, 20, 20, 3))
            for k in range(M):
                self.assertEqual(tuple(views[k, 10, 10]), self.COLOURS[1])
            np.testing.assert_array_equal(v.render_rgb(1, 4), views)
            # into a caller's array; bad arguments
            out = np.zeros_like(batch)
            self.assertIs(v.render_rgb(out=out), out)
            np.testing.assert_array_equal(out, batch)
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"out must be"):
                v.render_rgb(out=np.zeros((M, 3, 3, 3), np.uint8))
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"cell_px 65 is not 1 to 64"):
                v.render_rgb(cell_px=65)
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"no agent named 'x'"):
                v.render_rgb("x")
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"agent 4 is not -1"):
                v.render_rgb(4)
            # glyphs: gather's floor "." leaves the cell's centre empty (#0e0f12)
            g = v.render_rgb(glyphs=True)
            floor = (batch[:, c // 2::c, c // 2::c] == (0x2b, 0x2f, 0x36)).all(axis=-1)
            self.assertTrue(floor.sum() > 50)
            centres = g[:, c // 2::c, c // 2::c][floor]
            self.assertTrue((centres == (0x0e, 0x0f, 0x12)).all())
            # the pickled copy renders the same way
            v2 = pickle.loads(pickle.dumps(v))
            self.assertEqual(v2.render_mode, "rgb_array")
            v2.close()
        with self.assertRaisesRegex(polis.StateError, r"closed"):
            v.render()

    def test_text_modes(self):
        import contextlib
        import io
        for mode in (None, "ansi"):
            with polis.vector_env(GATHER, num_envs=2, seed=1, render_mode=mode) as v:
                v.reset()
                texts = v.render()
                self.assertEqual(len(texts), 2)
                for k, t in enumerate(texts):
                    self.assertTrue(t.startswith("== agent_0 ==\nYou are agent_0 at"), t)
                    self.assertIn("== agent_3 ==\nYou are agent_3 at", t)
                    with polis.Env(GATHER) as e:
                        e.reset(v.env_seed(1, k, 0))
                        self.assertIn(e.render(2), t)
        with polis.vector_env(GATHER, num_envs=2, seed=1, agents=1, render_mode="human") as v:
            v.reset()
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                self.assertIsNone(v.render())
            out = buf.getvalue()
            self.assertTrue(out.startswith("=== env 0 ===\nYou are agent_0 at"), out)
            self.assertIn("=== env 1 ===\nYou are agent_0 at", out)

    def test_refused(self):
        with self.assertRaisesRegex(polis.InvalidArgumentError, r'render_mode must be None'):
            polis.vector_env(GATHER, num_envs=2, render_mode="rgb")
        with self.assertRaisesRegex(polis.InvalidArgumentError,
                                    r'render_mode="rgb_array": .* registers no scene map'):
            polis.vector_env({"agents": 2, "max_steps": 5}, num_envs=2, render_mode="rgb_array")
        with polis.vector_env({"agents": 2, "max_steps": 5}, num_envs=2) as v:
            self.assertEqual(v.metadata["render_modes"], ["ansi", "human"])
            v.reset()
            with self.assertRaisesRegex(polis.InvalidArgumentError, r"no scene map"):
                v.render_rgb()


@needs_no_numpy
class TestWithoutNumpy(unittest.TestCase):
    def test_needs_numpy(self):
        with self.assertRaisesRegex(ImportError, r"needs numpy"):
            polis.vector_env(GATHER, num_envs=2)


if __name__ == "__main__":
    unittest.main()
