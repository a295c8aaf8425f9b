"""What learning code relies on: pickling, per-episode statistics in infos, the metrics
plugin's figures, the single-agent gym view, and the base classes of pettingzoo (a stand-in
here; tests/python/conformance.py runs the real PettingZoo and Gymnasium checks)."""

import os
import pickle
import subprocess
import sys
import tempfile
import textwrap
import unittest

import polis
from common import GATHER, STAGGERED, needs_numpy, np, tolist


class TestPickle(unittest.TestCase):
    def test_parallel_env_round_trip(self):
        env = polis.parallel_env(GATHER, max_steps=9, action_mask="both")
        env.reset(seed=3)
        copy = pickle.loads(pickle.dumps(env))
        self.assertIsInstance(copy, polis.ParallelEnv)
        self.assertEqual(copy.core.max_steps, 9)
        self.assertEqual(copy.action_mask_mode, "both")
        self.assertEqual(copy.agents, [])  # re-created, not yet reset
        # the seed sequence continues: an unseeded reset gives what the original's gives
        self.assertEqual(tolist(copy.reset()[0]), tolist(env.reset()[0]))
        self.assertEqual(tolist(copy.step({})[:4]), tolist(env.step({})[:4]))
        env.close()
        copy.close()

    def test_dict_scenario_and_relative_path(self):
        rel = os.path.relpath(GATHER)
        env = polis.parallel_env(rel, agents=2)
        old = os.getcwd()
        try:
            os.chdir(tempfile.gettempdir())
            copy = pickle.loads(pickle.dumps(env))
        finally:
            os.chdir(old)
        self.assertEqual(copy.possible_agents, ["agent_0", "agent_1"])
        copy.close()
        env.close()

    def test_unpicklable_log_is_refused_by_pickle(self):
        env = polis.parallel_env(GATHER, log=lambda line: None)
        with self.assertRaises((pickle.PicklingError, AttributeError, TypeError)):
            pickle.dumps(env)
        env.close()

    @needs_numpy
    def test_vector_env_round_trip(self):
        v = polis.vector_env(GATHER, num_envs=2, seed=4, max_steps=6, flatten=True)
        w = pickle.loads(pickle.dumps(v))
        self.assertEqual((w.num_envs, w.max_steps, w.flatten), (2, 6, True))
        o1, _ = v.reset()
        o2, _ = w.reset()
        np.testing.assert_array_equal(o1["observation"], o2["observation"])
        v.close()
        w.close()

    def test_gym_env_round_trip(self):
        g = polis.gym_env(GATHER, agent="agent_1", others="random")
        h = pickle.loads(pickle.dumps(g))
        self.assertEqual((h.agent, h.others), ("agent_1", "random"))
        self.assertEqual(tolist(h.reset(seed=2)[0]), tolist(g.reset(seed=2)[0]))
        g.close()
        h.close()


class TestEpisodeStatistics(unittest.TestCase):
    def test_parallel_infos_at_the_end(self):
        env = polis.parallel_env(GATHER, max_steps=6)
        obs, infos = env.reset(seed=1)
        self.assertNotIn("episode", infos["agent_0"])
        total = dict.fromkeys(env.possible_agents, 0.0)
        steps = 0
        while env.agents:
            actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
            obs, rew, term, trunc, infos = env.step(actions)
            steps += 1
            for a, r in rew.items():
                total[a] += r
            if env.agents:
                self.assertNotIn("episode", infos["agent_0"])
        for a in env.possible_agents:
            self.assertEqual(infos[a]["episode"]["l"], 6)
            self.assertAlmostEqual(infos[a]["episode"]["r"], total[a], places=5)
        env.close()

    def test_staggered_agents_end_at_their_own_step(self):
        env = polis.parallel_env(STAGGERED)
        env.reset(seed=0)
        ended = {}
        t = 0
        while env.agents:
            _, _, term, trunc, infos = env.step({})
            t += 1
            for a in term:
                if term[a] or trunc[a]:
                    ended[a] = infos[a]["episode"]["l"]
                    self.assertEqual(ended[a], t)
        self.assertEqual(set(ended), set(env.possible_agents))
        self.assertGreater(len(set(ended.values())), 1)
        env.close()

    def test_metrics_plugin_figures(self):
        env = polis.parallel_env(GATHER, max_steps=5, metrics=True)
        self.assertIn("metrics", env.core.render_formats)
        env.reset(seed=2)
        total = 0.0
        while env.agents:
            _, rew, _, _, infos = env.step({a: 1 for a in env.agents})
            total += sum(rew.values())
        m = infos["agent_0"]["metrics"]
        self.assertEqual(m["steps"], 5)
        self.assertAlmostEqual(m["reward"]["total"] if isinstance(m.get("reward"), dict)
                               else m["reward.total"], total, places=4)
        env.close()
        # a scenario that lists the plugin already is left as it is
        self.assertEqual(polis.parallel.metrics_overrides(
            GATHER, {"plugins": ["gather", "metrics"]}), {})

    @needs_numpy
    def test_vector_infos(self):
        m, steps = 3, 4
        with polis.vector_env(GATHER, num_envs=m, max_steps=steps, metrics=True) as v:
            obs, infos = v.reset(seed=5)
            rows = v.num_rows
            acc = np.zeros(rows)
            rng = np.random.default_rng(0)
            for t in range(1, 2 * steps + 3):
                actions = rng.integers(0, v.n_actions, rows)
                _, rew, term, trunc, infos = v.step(actions)
                if v.autoreset.any():  # the reset step: a new episode, nothing ended
                    self.assertTrue(v.autoreset.all())
                    acc[:] = 0
                    self.assertFalse(infos["_episode"].any())
                    continue
                acc += rew
                if (term | trunc).all():
                    self.assertTrue(infos["_episode"].all(), t)
                    np.testing.assert_allclose(infos["episode"]["r"], acc, rtol=1e-5)
                    self.assertEqual(infos["episode"]["l"].tolist(), [steps] * rows)
                    self.assertTrue(infos["_metrics"].all())
                    for k in range(m):
                        self.assertEqual(infos["metrics"][k]["steps"], steps)
                else:
                    self.assertFalse(infos["_episode"].any(), t)
                    self.assertFalse(infos["_metrics"].any(), t)

    @needs_numpy
    def test_vector_metrics_need_the_plugin(self):
        # Survival renders "metrics" itself; infos carry them only with the metrics plugin
        # (metrics=True), and then with the game's achievements in the same dicts.
        for metrics in (False, True):
            with polis.vector_env("survival_classic", num_envs=2, max_steps=3,
                                  metrics=metrics) as v:
                v.reset(seed=1)
                for _ in range(3):
                    _, _, _, _, infos = v.step(np.zeros(v.num_rows, np.int32))
                self.assertTrue(infos["_episode"].all())
                if not metrics:
                    self.assertNotIn("metrics", infos)
                    self.assertNotIn("_metrics", infos)
                    continue
                self.assertTrue(infos["_metrics"].all())
                for k in range(2):
                    self.assertEqual(infos["metrics"][k]["steps"], 3)
                    self.assertIn("collect_wood", infos["metrics"][k]["achievements"])

    @needs_numpy
    def test_vector_episodes_end_row_by_row(self):
        # Rows leave at different steps (staggered.lua: agent_1 terminated after 3 steps and
        # paid 5, agent_2 truncated after 5, the rest at max_steps 8); infos["episode"] and
        # infos["_episode"] (the engine's polis_vec_episode_stats) match sums kept here.
        with polis.vector_env(STAGGERED, num_envs=3) as v:
            v.reset(seed=1)
            rows = v.num_rows
            ret, length = np.zeros(rows), np.zeros(rows, np.int64)
            done = np.zeros(rows, bool)
            last_r, last_l = np.zeros(rows), np.zeros(rows, np.int64)
            seen = set()
            for t in range(30):
                _, rew, term, trunc, infos = v.step(np.zeros(rows, np.int32))
                reset = np.repeat(v.autoreset, v.agents_per_env)
                ret[reset], length[reset], done[reset] = 0, 0, False
                ret[~reset] += rew[~reset]
                length[~reset] += 1
                now = term | trunc
                ended = now & ~done
                done = now
                last_r[ended], last_l[ended] = ret[ended], length[ended]
                np.testing.assert_array_equal(infos["_episode"], ended, t)
                np.testing.assert_allclose(infos["episode"]["r"], last_r, err_msg=str(t))
                np.testing.assert_array_equal(infos["episode"]["l"], last_l, t)
                seen.update(zip(np.flatnonzero(ended) % 4, last_l[ended], last_r[ended]))
            self.assertEqual(sorted(seen), [(0, 8, 0.0), (1, 3, 5.0), (2, 5, 0.0), (3, 8, 0.0)])
            with self.assertRaises(ValueError):  # the engine's memory: read-only views
                infos["episode"]["r"][0] = 1
            v.reset(seed=2)
            self.assertFalse(infos["_episode"].any())
            self.assertEqual(infos["episode"]["l"].tolist(), [0] * rows)

    @needs_numpy
    def test_vector_flatten_and_info_masks(self):
        with polis.vector_env(GATHER, num_envs=2, flatten=True) as v:
            obs, infos = v.reset(seed=1)
            flat = obs["observation"]
            self.assertEqual(flat.shape, (v.num_rows, 52))
            self.assertEqual(v.single_observation_space["observation"].shape, (52,))
            np.testing.assert_array_equal(flat[:, 50:], v.fields["position"])
            v.step(np.ones(v.num_rows, np.int32))
            np.testing.assert_array_equal(flat[:, 50:], v.fields["position"])
            self.assertIs(obs["action_mask"], infos["action_mask"])
        with polis.vector_env(GATHER, num_envs=2, action_mask="info") as v:
            obs, infos = v.reset(seed=1)
            self.assertIs(obs, v.fields)
            self.assertNotIn("action_mask", v.single_observation_space)
        with self.assertRaises(polis.InvalidArgumentError):
            polis.vector_env(GATHER, action_mask="both")


@needs_numpy
class TestVectorStepAllocatesNothing(unittest.TestCase):
    def test_no_per_step_allocation(self):
        # A rollout loop's env side: a masked random policy into preallocated arrays, then
        # step (episode statistics, flat observations). Python-level allocations are traced
        # (numpy reports its buffers to tracemalloc): the peak over 300 steps, auto-resets
        # included, stays below one byte per row — no per-row array is made, only a few
        # small view objects of constant size.
        import tracemalloc
        with polis.vector_env(GATHER, num_envs=1024, max_steps=20, flatten=True) as v:
            rows, na = v.num_rows, v.n_actions
            noise = np.random.default_rng(0).random((8, rows, na), dtype=np.float32)
            score = np.empty((rows, na), np.float32)
            pick = np.empty(rows, np.intp)
            v.reset(seed=0)

            def steps(n):
                for i in range(n):
                    np.copyto(score, v.masks)  # a plain cast (mixed-type add would buffer)
                    np.add(score, noise[i & 7], out=score)
                    np.argmax(score, axis=1, out=pick)
                    v.actions[:] = pick
                    v.step()
            steps(50)
            tracemalloc.start()
            try:
                base, _ = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
                steps(300)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            self.assertLess(peak - base, rows, f"{peak - base} bytes at the peak")
            self.assertGreater(int(v.episode(0)), 10)  # auto-resets happened


class TestGymView(unittest.TestCase):
    def test_single_agent_episode(self):
        g = polis.gym_env(GATHER, max_steps=7)
        self.assertEqual(g.agent, "agent_0")
        obs, info = g.reset(seed=3)
        self.assertTrue(g.observation_space.contains(obs))
        self.assertEqual(set(obs), {"observation", "action_mask"})
        n = 0
        while True:
            obs, r, term, trunc, info = g.step(1)
            n += 1
            self.assertIs(type(r), float)
            self.assertIs(type(term), bool)
            if term or trunc:
                break
        self.assertEqual(n, 7)
        self.assertTrue(trunc)
        self.assertEqual(info["episode"]["l"], 7)
        self.assertTrue(g.render().startswith("You are agent_0 at"))
        g.close()

    def test_random_others_are_seeded(self):
        runs = []
        for _ in range(2):
            g = polis.gym_env(GATHER, others="random", max_steps=20)
            g.reset(seed=11)
            trace = [tolist(g.step(0)[0]) for _ in range(20)]
            runs.append(trace)
            g.close()
        self.assertEqual(runs[0], runs[1])
        g = polis.gym_env(GATHER, others="noop", max_steps=20)
        g.reset(seed=11)
        noop = [tolist(g.step(0)[0]) for _ in range(20)]
        if polis.HAVE_NUMPY:
            self.assertNotEqual(noop, runs[0])  # the others moved, and were seen

    def test_bad_arguments(self):
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            polis.gym_env(GATHER, others="greedy")
        self.assertIn("others must be one of ('noop', 'random'), got 'greedy'",
                      str(cm.exception))
        with self.assertRaises(polis.UnknownAgentError):
            polis.gym_env(GATHER, agent="agent_9")


class TestBaseClasses(unittest.TestCase):
    @needs_numpy
    def test_pettingzoo_stand_in_becomes_the_base(self):
        # A stand-in pettingzoo with the documented ParallelEnv class: imported before polis,
        # polis.ParallelEnv subclasses it (what SuperSuit's isinstance checks need).
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "pettingzoo"))
            with open(os.path.join(d, "pettingzoo", "__init__.py"), "w") as f:
                f.write("class ParallelEnv:\n    metadata = {}\n")
            code = textwrap.dedent(f"""
                import sys
                sys.modules.pop("gymnasium", None)
                import pettingzoo, polis
                env = polis.parallel_env({GATHER!r})
                assert isinstance(env, pettingzoo.ParallelEnv), type(env).__mro__
                env.reset(seed=0)
                env.step({{}})
                print("ok")
            """)
            path = os.pathsep.join([d] + sys.path)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=dict(os.environ, PYTHONPATH=path))
            self.assertEqual(out.stdout.strip(), "ok", out.stderr)


if __name__ == "__main__":
    unittest.main()
