"""polis.parallel_env: PettingZoo ParallelEnv semantics."""

import gc
import importlib.util
import os
import unittest
import weakref

import polis
from common import (GATHER, ROOT, STAGGERED, legal_ids, needs_no_numpy, needs_numpy, np,
                    run_episode, tolist)


def address(view):
    return view.__array_interface__["data"][0]


class TestApiShape(unittest.TestCase):
    def setUp(self):
        self.env = polis.parallel_env("gather", max_steps=20)

    def tearDown(self):
        self.env.close()

    def test_attributes(self):
        env = self.env
        self.assertEqual(env.possible_agents, ["agent_0", "agent_1", "agent_2", "agent_3"])
        self.assertEqual(env.agents, [])  # until reset
        self.assertEqual(env.max_num_agents, 4)
        self.assertEqual(env.metadata["name"], "gather")
        self.assertIn("ansi", env.metadata["render_modes"])
        self.assertIs(env.unwrapped, env)
        self.assertEqual(set(env.observation_spaces), set(env.possible_agents))
        self.assertEqual(set(env.action_spaces), set(env.possible_agents))
        env.reset(seed=0)
        self.assertEqual(env.agents, env.possible_agents)
        self.assertIsNot(env.agents, env.possible_agents)
        self.assertEqual(env.num_agents, 4)

    def test_spaces_are_the_same_object_every_call(self):
        env = self.env
        for a in env.possible_agents:
            self.assertIs(env.observation_space(a), env.observation_space(a))
            self.assertIs(env.action_space(a), env.action_space(a))
            self.assertIs(env.observation_space(a), env.observation_spaces[a])
        env.reset(seed=1)
        env.step({})
        for a in env.possible_agents:
            self.assertIs(env.action_space(a), env.action_spaces[a])
        # one object per agent, so seeding one agent's space leaves the others alone
        self.assertIsNot(env.action_space("agent_0"), env.action_space("agent_1"))

    def test_space_layout(self):
        env = self.env
        sp = env.observation_space("agent_0")
        self.assertEqual(set(sp.spaces), {"observation", "action_mask"})
        self.assertEqual(tuple(sp["observation"]["view"].shape), (2, 5, 5))
        self.assertEqual(tuple(sp["observation"]["position"].shape), (2,))
        self.assertEqual(str(sp["observation"]["view"].dtype), "int8")
        self.assertEqual(str(sp["observation"]["position"].dtype), "int32")
        self.assertEqual(tuple(sp["action_mask"].shape), (5,))
        self.assertEqual(str(sp["action_mask"].dtype), "int8")
        asp = env.action_space("agent_0")
        self.assertEqual(asp.n, 5)
        self.assertEqual(tuple(asp.shape), ())
        # state: every agent's fields flattened (view 2*5*5, position 2), float32
        self.assertEqual(str(env.state_space.dtype), "float32")
        self.assertEqual(tuple(env.state_space.shape), (4, 52))

    def test_unknown_agent(self):
        with self.assertRaises(polis.UnknownAgentError) as cm:
            self.env.observation_space("agent_7")
        self.assertIn("unknown agent 'agent_7' (agents: agent_0, agent_1, agent_2, agent_3)",
                      str(cm.exception))
        with self.assertRaises(KeyError):
            self.env.action_space("nobody")

    def test_reset_and_step_return_shapes(self):
        env = self.env
        obs, infos = env.reset(seed=4)
        self.assertEqual(set(obs), set(env.agents))
        self.assertEqual(set(infos), set(env.agents))
        for a in env.agents:
            self.assertTrue(env.observation_space(a).contains(obs[a]), a)
            self.assertEqual(set(infos[a]), {"illegal_action", "action_mask"})
            self.assertFalse(infos[a]["illegal_action"])
            # the default ("both"): the same mask in the observation and in the infos
            if np is not None:
                self.assertIs(infos[a]["action_mask"], obs[a]["action_mask"])
            self.assertEqual(tolist(infos[a]["action_mask"]), tolist(obs[a]["action_mask"]))
        out = env.step({a: 0 for a in env.agents})
        self.assertEqual(len(out), 5)
        obs, rewards, terms, truncs, infos = out
        for d in out:
            self.assertIsInstance(d, dict)
            self.assertEqual(set(d), set(env.possible_agents))
        for a in env.agents:
            self.assertTrue(env.observation_space(a).contains(obs[a]), a)
            self.assertIs(type(rewards[a]), float)
            self.assertIs(type(terms[a]), bool)
            self.assertIs(type(truncs[a]), bool)
            self.assertIn("illegal_action", infos[a])
        if np is not None:
            ob = obs["agent_0"]
            self.assertEqual(ob["observation"]["view"].dtype, np.int8)
            self.assertEqual(ob["observation"]["view"].shape, (2, 5, 5))
            self.assertEqual(ob["observation"]["position"].dtype, np.int32)
            self.assertEqual(ob["action_mask"].dtype, np.int8)
        else:
            ob = obs["agent_0"]
            self.assertIsInstance(ob["observation"]["view"], list)
            self.assertEqual(len(ob["observation"]["view"]), 2)
            self.assertEqual(len(ob["observation"]["view"][0][0]), 5)
            self.assertIsInstance(ob["action_mask"], list)

    def test_reset_options(self):
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.env.reset(seed=1, options={})
            self.env.reset(seed=1, options=None)
            self.assertEqual(w, [])
            # unknown keys (PettingZoo's own test passes {"options": 1}) are accepted with
            # one warning per env
            obs, _ = self.env.reset(seed=1, options={"map": "small"})
            self.env.reset(seed=1, options={"other": 2})
            self.assertEqual(len(w), 1)
            self.assertIs(w[0].category, UserWarning)
            self.assertIn("polis reads no reset option ['map']", str(w[0].message))
        self.assertEqual(tolist(obs), tolist(self.env.reset(seed=1)[0]))
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            self.env.reset(options=["map"])
        self.assertEqual(str(cm.exception), "reset: options must be a dict or None, got list")

    def test_max_cycles(self):
        env = polis.parallel_env(GATHER, max_cycles=4)
        self.assertEqual(env.core.max_steps, 4)
        env.reset(seed=0)
        steps = 0
        while env.agents:
            _, _, _, trunc, _ = env.step({})
            steps += 1
        self.assertEqual(steps, 4)
        self.assertTrue(all(trunc.values()))
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            polis.parallel_env(GATHER, max_cycles=4, max_steps=5)
        self.assertIn("max_cycles=4 and max_steps=5 disagree", str(cm.exception))

    def test_state(self):
        env = self.env
        env.reset(seed=2)
        st = env.state()
        self.assertTrue(env.state_space.contains(st))
        for i, a in enumerate(env.possible_agents):
            # the last two entries of each row are the position field
            self.assertEqual([int(x) for x in tolist(st)[i][-2:]],
                             env.render_agent(a, "json")["gather"]["position"])
        fields = env.state_fields()
        self.assertEqual(set(fields), {"view", "position"})
        if np is not None:
            self.assertIsInstance(st, np.ndarray)
            self.assertEqual(st.dtype, np.float32)
            self.assertTrue(st.flags.writeable)
            np.testing.assert_array_equal(st[:, :50], fields["view"].reshape(4, 50))


class TestZeroCopyObservations(unittest.TestCase):
    @needs_numpy
    def test_observations_are_engine_memory_and_the_same_objects(self):
        env = polis.parallel_env(GATHER, copy_obs=False)
        core = env.core
        obs, _ = env.reset(seed=3)
        first = {a: obs[a] for a in env.agents}
        base, masks = core.buffer_address("obs"), core.buffer_address("masks")
        for _ in range(10):
            obs, *_ = env.step({a: 1 for a in env.agents})
            for i, a in enumerate(env.possible_agents):
                self.assertIs(obs[a], first[a])
                for f in core.obs_fields:
                    v = obs[a]["observation"][f.name]
                    self.assertIs(v, first[a]["observation"][f.name])
                    self.assertEqual(address(v), base + i * core.obs_size + f.offset)
                    self.assertFalse(v.flags.writeable)
                self.assertEqual(address(obs[a]["action_mask"]), masks + i * core.n_actions)
                self.assertEqual(obs[a]["observation"]["position"].tolist(),
                                 env.render_agent(a, "json")["gather"]["position"])
        st = env.state_fields()
        for name, v in st.items():
            self.assertTrue(np.shares_memory(v, core.obs), name)
        env.close()

    @needs_numpy
    def test_info_masks_are_views_too(self):
        env = polis.parallel_env(GATHER, action_mask="info", copy_obs=False)
        obs, infos = env.reset(seed=3)
        m = infos["agent_1"]["action_mask"]
        self.assertEqual(address(m), env.core.buffer_address("masks") + env.core.n_actions)
        self.assertEqual(m.dtype, np.int8)
        _, _, _, _, infos = env.step({})
        self.assertIs(infos["agent_1"]["action_mask"], m)
        env.close()

    @needs_numpy
    def test_fresh_arrays_by_default(self):
        env = polis.parallel_env(GATHER)
        self.assertTrue(env.copy_obs)
        obs0, infos0 = env.reset(seed=3)
        kept = obs0["agent_0"]["observation"]["position"]
        self.assertTrue(kept.flags.writeable)
        self.assertFalse(np.shares_memory(kept, env.core.obs))
        before = kept.tolist()
        # a rollout buffer keeps 5 steps: each entry stays what it was
        buffer, seen = [obs0], [env.core.agent_fields[0]["view"].tolist()]
        for i in range(4):
            obs1, *_ = env.step({"agent_0": 1 + i % 4})
            buffer.append(obs1)
            seen.append(env.core.agent_fields[0]["view"].tolist())
        self.assertEqual(kept.tolist(), before)  # a copy does not follow the engine
        self.assertEqual([b["agent_0"]["observation"]["view"].tolist() for b in buffer], seen)
        self.assertGreater(len({str(v) for v in seen}), 1)
        # in-place normalisation works and touches nothing else
        v = buffer[-1]["agent_0"]["observation"]["view"]
        v //= 2
        self.assertTrue(np.array_equal(buffer[-1]["agent_1"]["observation"]["position"],
                                       env.core.agent_fields[1]["position"]))
        m = buffer[-1]["agent_0"]["action_mask"]
        self.assertTrue(m.flags.writeable)
        self.assertEqual(m.dtype, np.int8)
        self.assertFalse(np.shares_memory(env.state_fields()["view"], env.core.obs))
        self.assertFalse(np.shares_memory(env.state(), env.core.obs))
        env.close()

    @needs_numpy
    def test_flatten(self):
        env = polis.parallel_env(GATHER, flatten=True)
        sp = env.observation_space("agent_0")
        flat = sp["observation"]
        self.assertEqual(tuple(flat.shape), (52,))
        self.assertEqual(flat.dtype, np.float32)
        # the declared ranges, not the dtypes': view agents [-1, 2], coins [0, 1]; position
        # [0, 11] on the 12x12 grid
        self.assertEqual((flat.low[0], flat.high[0]), (-1, 2))
        self.assertEqual((flat.low[49], flat.high[49]), (0, 1))
        self.assertEqual((flat.low[50], flat.high[51]), (0, 11))
        self.assertTrue(np.isfinite(flat.low).all() and np.isfinite(flat.high).all())
        obs, _ = env.reset(seed=4)
        o = obs["agent_1"]["observation"]
        self.assertIsInstance(o, np.ndarray)
        self.assertTrue(sp.contains(obs["agent_1"]))
        self.assertEqual(o[:50].tolist(),
                         env.core.agent_fields[1]["view"].ravel().astype(float).tolist())
        self.assertEqual(o[50:].tolist(), env.core.agent_fields[1]["position"].tolist())
        obs2, *_ = env.step({"agent_1": 1})
        self.assertEqual(o[50:].tolist(), obs["agent_1"]["observation"][50:].tolist())
        self.assertNotEqual(o[50:].tolist(), obs2["agent_1"]["observation"][50:].tolist())
        # no mask in the observation: the box alone
        env2 = polis.parallel_env(GATHER, flatten=True, action_mask="info")
        obs, infos = env2.reset(seed=4)
        self.assertEqual(obs["agent_0"].shape, (52,))
        self.assertEqual(tuple(env2.observation_space("agent_0").shape), (52,))
        self.assertIn("action_mask", infos["agent_0"])
        # zero-copy opt-in: the same flat buffer rows every step
        env3 = polis.parallel_env(GATHER, flatten=True, copy_obs=False)
        o1, _ = env3.reset(seed=4)
        o2, *_ = env3.step({})
        self.assertIs(o1["agent_0"]["observation"], o2["agent_0"]["observation"])
        self.assertEqual(o2["agent_0"]["observation"].tolist(),
                         env.layout.fill(np.zeros((4, 52), np.float32),
                                         env3.core.fields)[0].tolist())
        for e in (env, env2, env3):
            e.close()

    def test_close_releases_the_env_when_nothing_is_held(self):
        env = polis.parallel_env(GATHER)
        obs, _ = env.reset(seed=0)
        env.step({})
        handle = weakref.ref(env.core._h)
        del obs
        env.close()
        gc.collect()
        self.assertIsNone(handle())
        self.assertEqual(env.agents, [])
        with self.assertRaises(polis.StateError):
            env.reset(seed=0)


class TestMasks(unittest.TestCase):
    def test_mask_placements(self):
        for mode in ("obs", "info", "both", None):
            env = polis.parallel_env(GATHER, action_mask=mode)
            obs, infos = env.reset(seed=5)
            ob, info = obs["agent_0"], infos["agent_0"]
            sp = env.observation_space("agent_0")
            if mode in ("obs", "both"):
                self.assertEqual(set(ob), {"observation", "action_mask"}, mode)
                self.assertEqual(set(sp.spaces), {"observation", "action_mask"}, mode)
            else:
                self.assertEqual(set(ob), {"view", "position"}, mode)
                self.assertEqual(set(sp.spaces), {"view", "position"}, mode)
            self.assertEqual("action_mask" in info, mode in ("info", "both"), mode)
            self.assertTrue(sp.contains(ob), mode)
            env.close()
        with self.assertRaises(polis.InvalidArgumentError):
            polis.parallel_env(GATHER, action_mask="yes")

    def test_masks_match_the_engine_and_sampling_respects_them(self):
        # On a 3x3 bounded grid agents sit on the border, so moves off it are masked.
        env = polis.parallel_env(GATHER, grid={"width": 3, "height": 3}, max_steps=60,
                                 plugins__gather__params__coins=2)
        obs, _ = env.reset(seed=9)
        saw_masked = False
        while env.agents:
            actions = {}
            for a in env.agents:
                mask = obs[a]["action_mask"]
                legal = legal_ids(mask)
                self.assertEqual(legal[0], 0)  # noop is always legal
                self.assertEqual(env.legal_actions(a),
                                 [env.core.action_names[i] for i in legal])
                saw_masked |= len(legal) < 5
                act = env.action_space(a).sample(mask=mask)
                self.assertIn(int(act), legal)
                actions[a] = act
            obs, _, _, _, infos = env.step(actions)
            for a in infos:
                self.assertFalse(infos[a]["illegal_action"])
        self.assertTrue(saw_masked)
        env.close()

    def test_illegal_action_is_a_flagged_noop(self):
        env = polis.parallel_env(GATHER, grid={"width": 3, "height": 3},
                                 plugins__gather__params__coins=2)
        obs, _ = env.reset(seed=9)
        agent, act = next((a, i) for a in env.agents
                          for i, v in enumerate(tolist(obs[a]["action_mask"])) if not v)
        before = tolist(obs[agent]["observation"]["position"])
        obs, _, _, _, infos = env.step({agent: act})
        self.assertTrue(infos[agent]["illegal_action"])
        self.assertEqual(tolist(obs[agent]["observation"]["position"]), before)
        others = [a for a in infos if a != agent]
        self.assertFalse(any(infos[a]["illegal_action"] for a in others))
        obs, _, _, _, infos = env.step({})
        self.assertFalse(infos[agent]["illegal_action"])
        env.close()

    def test_all_zero_mask_samples_start(self):
        sp = polis.parallel_env(GATHER).action_space("agent_0")
        zero = np.zeros(5, np.int8) if np is not None else [0] * 5
        self.assertEqual(int(sp.sample(mask=zero)), 0)


class TestActions(unittest.TestCase):
    def setUp(self):
        self.env = polis.parallel_env(GATHER)
        self.env.reset(seed=1)

    def tearDown(self):
        self.env.close()

    def test_text_actions_equal_ids(self):
        other = polis.parallel_env(GATHER)
        other.reset(seed=1)
        self.env.step({"agent_0": "go north", "agent_1": '{"action": "move", "direction": '
                       '"east"}', "agent_2": "west"})
        other.step({"agent_0": 1, "agent_1": 4, "agent_2": 3})
        self.assertEqual(self.env.core.state_hash(), other.core.state_hash())
        other.close()

    def test_numpy_integers(self):
        if np is None:
            self.skipTest("numpy is hidden in this run")
        self.env.step({"agent_0": np.int64(1), "agent_1": np.int32(2), "agent_2": np.array(3)})
        self.assertEqual(self.env.core.actions.tolist(), [1, 2, 3, 0])

    def test_missing_agents_do_noop(self):
        self.env.step({"agent_2": 1})
        self.assertEqual(tolist(self.env.core.actions), [0, 0, 1, 0])

    def test_bad_actions(self):
        env = self.env
        with self.assertRaises(polis.ActionError) as cm:
            env.step({"agent_3": 5})
        self.assertEqual(str(cm.exception),
                         "step: agent 3 (agent_3): action 5 is outside [0, 5) at tick 0")
        with self.assertRaises(polis.ActionError) as cm:
            env.step({"agent_0": -1})
        self.assertEqual(str(cm.exception),
                         "step: agent 0 (agent_0): action -1 is outside [0, 5) at tick 0")
        with self.assertRaises(polis.ActionError) as cm:
            env.step({"agent_1": "fly away"})
        self.assertIn('agent 1 (agent_1): cannot parse action "fly away" (action names: '
                      'noop, move_north', str(cm.exception))
        with self.assertRaises(polis.ActionError) as cm:
            env.step({"agent_1": 0.5})
        self.assertIn("action must be an integer id, got float 0.5", str(cm.exception))
        with self.assertRaises(polis.ActionError):
            env.step({"agent_1": None})
        with self.assertRaises(polis.UnknownAgentError) as cm:
            env.step({"agent_9": 0})
        self.assertIn("unknown agent 'agent_9' (agents: agent_0, agent_1, agent_2, agent_3)",
                      str(cm.exception))
        with self.assertRaises(polis.InvalidArgumentError):
            env.step([0, 0, 0, 0])
        # none of it ran: the env is where it was and steps normally
        self.assertEqual(env.core.tick, 0)
        env.step({"agent_0": 1})
        self.assertEqual(env.core.tick, 1)


class TestEpisodeEnd(unittest.TestCase):
    def test_truncation_at_max_steps(self):
        env = polis.parallel_env(GATHER, max_steps=5)
        env.reset(seed=0)
        for t in range(5):
            self.assertEqual(env.agents, env.possible_agents)
            obs, rew, term, trunc, infos = env.step({})
            self.assertEqual(set(obs), set(env.possible_agents))
        self.assertTrue(all(trunc.values()))
        self.assertFalse(any(term.values()))
        self.assertEqual(env.agents, [])
        with self.assertRaises(polis.StateError) as cm:
            env.step({})
        self.assertEqual(str(cm.exception), "step: the episode is over (tick 5); call reset")
        env.reset(seed=0)
        self.assertEqual(env.agents, env.possible_agents)
        env.close()

    def test_termination_when_every_coin_is_taken(self):
        env = polis.parallel_env(GATHER, grid={"width": 3, "height": 3}, max_steps=500,
                                 plugins__gather__params__respawn=False,
                                 plugins__gather__params__coins=2)
        obs, _ = env.reset(seed=4)
        steps, got = 0, 0.0
        while env.agents:
            obs, rew, term, trunc, _ = env.step(
                {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents})
            got += sum(rew.values())
            steps += 1
        self.assertLess(steps, 500)
        self.assertTrue(all(term.values()))
        self.assertFalse(any(trunc.values()))
        self.assertEqual(got, 2.0)
        env.close()

    def test_agents_leave_one_by_one(self):
        env = polis.parallel_env(STAGGERED)
        self.assertEqual(env.metadata["name"], "staggered")
        env.reset()
        seen = []
        for step in range(1, 9):
            live = list(env.agents)
            obs, rew, term, trunc, infos = env.step({a: 0 for a in env.agents})
            for d in (obs, rew, term, trunc, infos):
                self.assertEqual(list(d), live)  # keyed by the agents live before the step
            seen.append((step, live, [a for a in live if term[a]],
                         [a for a in live if trunc[a]]))
            if step == 3:
                self.assertEqual(rew["agent_1"], 5.0)  # the final reward arrives with the flag
        self.assertEqual(seen, [
            (1, ["agent_0", "agent_1", "agent_2", "agent_3"], [], []),
            (2, ["agent_0", "agent_1", "agent_2", "agent_3"], [], []),
            (3, ["agent_0", "agent_1", "agent_2", "agent_3"], ["agent_1"], []),
            (4, ["agent_0", "agent_2", "agent_3"], [], []),
            (5, ["agent_0", "agent_2", "agent_3"], [], ["agent_2"]),
            (6, ["agent_0", "agent_3"], [], []),
            (7, ["agent_0", "agent_3"], [], []),
            (8, ["agent_0", "agent_3"], [], ["agent_0", "agent_3"]),
        ])
        self.assertEqual(env.agents, [])
        env.close()

    def test_a_finished_agent_takes_no_actions(self):
        env = polis.parallel_env(STAGGERED)
        env.reset()
        for _ in range(3):
            env.step({})
        self.assertNotIn("agent_1", env.agents)
        with self.assertRaises(polis.StateError) as cm:
            env.step({"agent_1": 0})
        self.assertEqual(str(cm.exception), "step: agent_1 is done (terminated); it takes no "
                         "more actions this episode (live agents: agent_0, agent_2, agent_3)")
        env.close()

    def test_step_before_reset(self):
        env = polis.parallel_env(GATHER)
        with self.assertRaises(polis.StateError) as cm:
            env.step({})
        self.assertEqual(str(cm.exception), "step: call reset before the first step")
        env.close()


class TestDeterminism(unittest.TestCase):
    def test_same_seed_same_episode_across_envs(self):
        a = polis.parallel_env(GATHER, max_steps=40)
        b = polis.parallel_env(GATHER, max_steps=40)
        ta, tb = run_episode(a, 123), run_episode(b, 123)
        self.assertEqual(ta, tb)
        self.assertEqual(len(ta), 41)
        self.assertNotEqual(run_episode(a, 124), ta)
        self.assertEqual(run_episode(a, 123), ta)  # the same env, re-seeded
        a.close()
        b.close()

    def test_unseeded_resets_are_reproducible(self):
        a = polis.parallel_env(GATHER)
        b = polis.parallel_env(GATHER)
        hashes = []
        for env in (a, b):
            hs = []
            env.reset()
            self.assertEqual(env.last_seed, 1)  # the scenario's seed first
            hs.append(env.core.state_hash())
            for _ in range(3):
                env.reset()
                hs.append(env.core.state_hash())
            hashes.append(hs)
        self.assertEqual(hashes[0], hashes[1])
        self.assertEqual(len(set(hashes[0])), 4)  # each unseeded reset is a new episode
        a.close()
        b.close()

    def test_seeded_reset_seeds_the_action_spaces(self):
        env = polis.parallel_env(GATHER)
        env.reset(seed=77)
        first = [int(env.action_space("agent_2").sample()) for _ in range(20)]
        env.reset(seed=77)
        self.assertEqual([int(env.action_space("agent_2").sample()) for _ in range(20)], first)
        env.close()


class TestRender(unittest.TestCase):
    def test_render_all_agents(self):
        env = polis.parallel_env(GATHER)
        env.reset(seed=1)
        text = env.render()
        self.assertTrue(text.startswith("== agent_0 ==\nYou are agent_0 at (9, 7)"), text)
        for a in env.possible_agents:
            self.assertIn(f"== {a} ==\nYou are {a} at ", text)
        self.assertEqual(env.render_agent("agent_1"), env.core.render(1))
        self.assertEqual(env.render_agent("agent_1", "json"), env.core.render_json(1))
        self.assertEqual(env.parse_action("agent_0", "move south"), 2)
        env.close()

    def test_render_modes(self):
        import contextlib
        import io
        env = polis.parallel_env(GATHER, render_mode="human", agents=1)
        env.reset(seed=1)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            self.assertIsNone(env.render())
        self.assertTrue(buf.getvalue().startswith("You are agent_0 at"))  # one agent: no heading
        env.close()
        with self.assertRaises(polis.InvalidArgumentError):
            polis.parallel_env(GATHER, render_mode="rgb")
        with self.assertRaises(polis.InvalidArgumentError):
            polis.parallel_env({"agents": 2, "max_steps": 5}, render_mode="rgb_array")

    @needs_no_numpy
    def test_rgb_array_needs_numpy(self):
        with self.assertRaises(polis.InvalidArgumentError):
            polis.parallel_env(GATHER, render_mode="rgb_array")
        env = polis.parallel_env(GATHER)
        self.assertNotIn("rgb_array", env.metadata["render_modes"])
        env.close()

    @needs_numpy
    def test_rgb_array(self):
        """Frames from the C renderer: the whole map for the parallel env, the agent's 5 x 5
        view for the gym env, each agent's colour at the centre of its cell, every cell's
        corner in the floor's colour and the coins' colour at the centre of some cells."""
        import re
        env = polis.parallel_env(GATHER, render_mode="rgb_array")
        self.assertIn("rgb_array", env.metadata["render_modes"])
        with self.assertRaisesRegex(polis.StateError, "no episode yet"):
            env.render()
        env.reset(seed=3)
        env.step({a: 0 for a in env.agents})
        frame = env.render()
        c = polis.parallel.RGB_CELL_PX
        self.assertEqual(frame.shape, (12 * c, 12 * c, 3))
        self.assertEqual(frame.dtype, np.uint8)
        # the agents' palette: the base list without #ffd60a, which looks like a coin
        colours = [(0xff, 0x3b, 0x30), (0x2f, 0x7b, 0xff), (0xff, 0x2f, 0xd0), (0x00, 0xe5, 0xff)]
        at = {}
        for a, name in enumerate(env.possible_agents):
            m = re.search(r"at \((\d+), (\d+)\)", env.render_agent(name))
            x, y = int(m.group(1)), int(m.group(2))
            at[(x, y)] = a
            self.assertEqual(tuple(frame[y * c + c // 2, x * c + c // 2]), colours[a], name)
        coins = 0
        for y in range(12):
            for x in range(12):
                if (x, y) in at:
                    continue
                # an agent's rings reach into the cells next to it
                if not any(abs(x - ax) <= 1 and abs(y - ay) <= 1 for ax, ay in at):
                    self.assertEqual(tuple(frame[y * c + 2, x * c + 2]), (0x2b, 0x2f, 0x36))
                centre = tuple(frame[y * c + c // 2, x * c + c // 2])
                self.assertIn(centre, [(0x2b, 0x2f, 0x36), (0xf2, 0xc9, 0x4c)])
                coins += centre == (0xf2, 0xc9, 0x4c)
        self.assertGreater(coins, 0)
        # the same moment drawn into a caller's array; a wrong array is refused
        out = np.zeros_like(frame)
        self.assertIs(env.core.render_rgb(None, c, out=out), out)
        self.assertTrue((out == frame).all())
        with self.assertRaises(polis.InvalidArgumentError):
            env.core.render_rgb(None, c, out=np.zeros((3, 3, 3), np.uint8))
        with self.assertRaisesRegex(polis.InvalidArgumentError, "cell_px 0 is not 1 to 64"):
            env.core.render_rgb(None, 0)
        with self.assertRaises(polis.UnknownAgentError):
            env.core.render_rgb("agent_9")
        view = env.core.render_rgb("agent_1", 4)
        self.assertEqual(view.shape, (20, 20, 3))
        self.assertEqual(tuple(view[10, 10]), colours[1])
        env.close()
        g = polis.gym_env(GATHER, render_mode="rgb_array")
        self.assertIn("rgb_array", g.metadata["render_modes"])
        g.reset(seed=3)
        f = g.render()
        self.assertEqual(f.shape, (5 * c, 5 * c, 3))
        self.assertEqual(tuple(f[2 * c + c // 2, 2 * c + c // 2]), colours[0])
        g.close()


class TestPettingZooHarness(unittest.TestCase):
    """The checks of PettingZoo's parallel_api_test / parallel_seed_test: the real ones when
    pettingzoo is installed, their core loop otherwise."""

    def api_loop(self, env, cycles=300):
        # parallel_api_test's loop: unmasked samples, agents never revived, every agent
        # finishes exactly once, return dicts keyed by the agents live before the step.
        for _ in range(2):
            obs, infos = env.reset()
            self.assertTrue(set(env.agents) <= set(obs) and set(env.agents) <= set(infos))
            live, finished = set(env.agents), set()
            for _ in range(cycles):
                actions = {a: env.action_space(a).sample() for a in env.agents}
                obs, rew, term, trunc, info = env.step(actions)
                for d in (obs, rew, term, trunc, info):
                    self.assertEqual(set(d), live)
                for a in env.agents:
                    self.assertNotIn(a, finished, "agent cannot be revived once dead")
                for a, o in obs.items():
                    self.assertTrue(env.observation_space(a).contains(o), a)
                done = {a for a in live if term[a] or trunc[a]}
                self.assertFalse(any(term[a] and trunc[a] for a in live))
                live -= done
                finished |= done
                self.assertEqual(live, set(env.agents))
                if not env.agents:
                    self.assertEqual(finished, set(env.possible_agents))
                    break
            self.assertEqual(env.agents, [])

    def test_api_loop(self):
        for scenario, kw in ((STAGGERED, {}), (GATHER, {"max_steps": 50})):
            env = polis.parallel_env(scenario, **kw)
            self.api_loop(env)
            env.close()

    def test_seed_loop(self):
        # parallel_seed_test: two envs, reset(seed=42), action spaces seeded with 42
        envs = [polis.parallel_env(GATHER, max_steps=60) for _ in range(2)]
        for env in envs:
            env.reset(seed=42)
            for a in env.agents:
                env.action_space(a).seed(42)
        e1, e2 = envs
        while e1.agents:
            a1 = {a: e1.action_space(a).sample() for a in e1.agents}
            a2 = {a: e2.action_space(a).sample() for a in e2.agents}
            self.assertEqual(tolist(a1), tolist(a2))
            self.assertEqual(tolist(e1.step(a1)), tolist(e2.step(a2)))
        self.assertEqual(e2.agents, [])
        for env in envs:
            env.close()

    @unittest.skipUnless(np is not None and importlib.util.find_spec("pettingzoo"),
                         "pettingzoo is not installed: its own test functions cannot run here "
                         "(the loops above replicate them)")
    def test_real_pettingzoo_harness(self):
        from pettingzoo.test import parallel_api_test, parallel_seed_test
        parallel_api_test(polis.parallel_env(STAGGERED), num_cycles=100)
        parallel_api_test(polis.parallel_env(GATHER, max_steps=50), num_cycles=100)
        parallel_seed_test(lambda: polis.parallel_env(GATHER, max_steps=60))


class TestRangesAndCompact(unittest.TestCase):
    """Spaces from the ranges games declare (plugin ABI 1.4) and compact=True."""

    def test_field_ranges(self):
        env = polis.parallel_env(GATHER)
        view, pos = env.core.obs_fields
        self.assertEqual((view.range_dim, view.low, view.high), (0, (-1.0, 0.0), (2.0, 1.0)))
        self.assertEqual((pos.range_dim, pos.low, pos.high), (0, (0.0, 0.0), (11.0, 11.0)))
        env.close()

    @needs_numpy
    def test_spaces_contain_every_observation(self):
        # exploration: grid ranges per channel, inventories, time; social fields
        for path in (GATHER, os.path.join(ROOT, "rulesets", "exploration", "exploration.json"),
                     os.path.join(ROOT, "rulesets", "commons", "commons_open.json")):
            for flatten in (False, True):
                env = polis.parallel_env(path, flatten=flatten, max_steps=25)
                rng = np.random.default_rng(1)
                obs, _ = env.reset(seed=2)
                while env.agents:
                    for a in env.agents:
                        self.assertTrue(env.observation_space(a).contains(obs[a]), (path, a))
                    obs, *_ = env.step({a: int(rng.choice(legal_ids(obs[a]["action_mask"])))
                                        for a in env.agents})
                env.close()

    @needs_numpy
    def test_compact(self):
        plain = polis.parallel_env(GATHER, max_steps=15)
        small = polis.parallel_env(GATHER, max_steps=15, compact=True)
        self.assertEqual([f.dtype for f in small.core.obs_fields], ["i8", "u8"])
        sp = small.observation_space("agent_0")["observation"]["position"]
        self.assertEqual((sp.dtype, sp.low.tolist(), sp.high.tolist()),
                         (np.dtype(np.uint8), [0, 0], [11, 11]))
        o1, _ = plain.reset(seed=5)
        o2, _ = small.reset(seed=5)
        rng = np.random.default_rng(3)
        while plain.agents:
            for a in plain.agents:
                self.assertEqual(o2[a]["observation"]["position"].dtype, np.uint8)
                self.assertEqual(o1[a]["observation"]["position"].tolist(),
                                 o2[a]["observation"]["position"].tolist())
                self.assertTrue(small.observation_space(a).contains(o2[a]))
            acts = {a: int(rng.choice(legal_ids(o1[a]["action_mask"]))) for a in plain.agents}
            o1, *_ = plain.step(acts)
            o2, *_ = small.step(acts)
        # the scenario key is what compact= sets; False overrides a scenario that asks for it
        env = polis.parallel_env(GATHER, compact_observations=True)
        self.assertEqual(env.core.obs_fields[1].dtype, "u8")
        env.close()
        env = polis.parallel_env(GATHER, compact_observations=True, compact=False)
        self.assertEqual(env.core.obs_fields[1].dtype, "i32")
        env.close()
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            polis.parallel_env(GATHER, compact="yes")
        self.assertIn("compact must be True, False or None, got 'yes'", str(cm.exception))
        # survives pickling (the option travels in the overrides)
        import pickle
        again = pickle.loads(pickle.dumps(small))
        self.assertEqual(again.core.obs_fields[1].dtype, "u8")
        again.close()
        plain.close()
        small.close()

    @needs_numpy
    def test_vector_compact(self):
        with polis.vector_env(GATHER, num_envs=2, compact=True) as v:
            self.assertEqual(v.single_observation_space["observation"]["position"].dtype,
                             np.uint8)
            obs, _ = v.reset(seed=1)
            self.assertEqual(obs["observation"]["position"].dtype, np.uint8)
            self.assertTrue(v.observation_space.contains(obs))


class TestNoNumpy(unittest.TestCase):
    @needs_no_numpy
    def test_plain_python_everywhere(self):
        self.assertFalse(polis.HAVE_NUMPY)
        self.assertEqual(polis.spaces.backend(), "polis")
        env = polis.parallel_env(GATHER, max_steps=10)
        obs, infos = env.reset(seed=3)
        ob = obs["agent_0"]
        self.assertIsInstance(ob["action_mask"], list)
        self.assertIsInstance(ob["observation"]["position"], list)
        self.assertTrue(all(isinstance(v, int) for v in ob["observation"]["position"]))
        a = env.action_space("agent_0").sample(mask=ob["action_mask"])
        self.assertIs(type(a), int)
        obs, rew, term, trunc, infos = env.step({"agent_0": a, "agent_1": "north"})
        self.assertIs(type(rew["agent_0"]), float)
        self.assertEqual(obs["agent_0"]["observation"]["position"],
                         env.render_agent("agent_0", "json")["gather"]["position"])
        st = env.state()
        self.assertEqual(len(st), 4)
        self.assertEqual(len(st[0]), 52)
        self.assertTrue(env.state_space.contains(st))
        env.close()


if __name__ == "__main__":
    unittest.main()
