"""polis.Env: the C API mirror — buffers (zero-copy), fields, errors, events, lifetime."""

import ctypes
import gc
import json
import os
import tempfile
import unittest
import weakref

import polis
from common import GATHER, GATHER_LUA, needs_no_numpy, needs_numpy, np, tolist

BUFFERS = ("obs", "masks", "actions", "rewards", "terminations", "truncations", "illegal",
           "reward_components")


def address(view):
    return view.__array_interface__["data"][0]


class TestEnvBasics(unittest.TestCase):
    def setUp(self):
        self.env = polis.Env(GATHER)

    def tearDown(self):
        self.env.close()

    def test_introspection_matches_describe(self):
        env = self.env
        d = env.describe()
        self.assertEqual(env.name, "gather")
        self.assertEqual(env.agent_names, ("agent_0", "agent_1", "agent_2", "agent_3"))
        self.assertEqual(env.action_names,
                         ("noop", "move_north", "move_south", "move_west", "move_east"))
        self.assertEqual([a["name"] for a in d["actions"]], list(env.action_names))
        self.assertEqual(env.obs_size, d["observation"]["obs_size"])
        for f, g in zip(env.obs_fields, d["observation"]["fields"]):
            self.assertEqual((f.name, f.dtype, list(f.shape), f.offset, f.nbytes),
                             (g["name"], g["dtype"], g["shape"], g["offset"], g["nbytes"]))
        self.assertEqual(env.reward_fn_names, ("coins",))
        self.assertEqual(env.default_seed, 1)
        self.assertEqual(env.max_steps, 200)
        self.assertEqual(env.render_formats, ("json", "text"))
        self.assertEqual(env.event_types, ("agent.moved", "coin.collected"))
        self.assertEqual(env.action_id("move_east"), 4)
        self.assertEqual(env.action_id("fly"), -1)
        self.assertIn("gather", repr(env))

    def test_shapes_and_dtypes(self):
        env = self.env
        env.reset(5)
        n, na = env.n_agents, env.n_actions
        if np is not None:
            expect = {"obs": (np.uint8, (n, env.obs_size)), "masks": (np.uint8, (n, na)),
                      "actions": (np.int32, (n,)), "rewards": (np.float32, (n,)),
                      "terminations": (np.uint8, (n,)), "truncations": (np.uint8, (n,)),
                      "illegal": (np.uint8, (n,)), "reward_components": (np.float32, (1, n))}
            for name, (dt, shape) in expect.items():
                v = getattr(env, name)
                self.assertEqual((v.dtype, v.shape), (np.dtype(dt), shape), name)
            self.assertEqual((env.fields["view"].dtype, env.fields["view"].shape),
                             (np.dtype(np.int8), (n, 2, 5, 5)))
            self.assertEqual((env.fields["position"].dtype, env.fields["position"].shape),
                             (np.dtype(np.int32), (n, 2)))
            self.assertEqual(env.agent_masks[0].dtype, np.dtype(np.int8))
        else:
            expect = {"obs": ("B", (n, env.obs_size)), "masks": ("B", (n, na)),
                      "actions": ("i", (n,)), "rewards": ("f", (n,)),
                      "terminations": ("B", (n,)), "reward_components": ("f", (1, n))}
            for name, (fmt, shape) in expect.items():
                v = getattr(env, name)
                self.assertEqual((v.format, v.shape), (fmt, shape), name)
            self.assertIsNone(env.fields)
            self.assertEqual(env.agent_fields[0]["view"].format, "b")
            self.assertEqual(env.agent_fields[0]["view"].shape, (2, 5, 5))
            self.assertEqual(env.agent_fields[0]["position"].format, "i")

    def test_fields_agree_with_the_json_view(self):
        # The typed views are built from polis_env_obs_field offsets and dtypes; the JSON
        # renderer reads the game state another way. They must agree on every agent's position.
        env = self.env
        env.reset(11)
        for step in range(6):
            for a in range(env.n_agents):
                pos = tolist(env.agent_fields[a]["position"])
                self.assertEqual(pos, env.render_json(a)["gather"]["position"], (step, a))
                self.assertEqual(tolist(env.agent_fields[a]["view"])[0][2][2], 2)  # self
            env.step([1, 2, 3, 4])

    def test_mask_list_and_obs_dict(self):
        env = self.env
        env.reset(1)
        self.assertEqual(env.mask_list("agent_0"), [1, 1, 1, 1, 1])
        d = env.obs_dict("agent_0")
        self.assertEqual(set(d), {"view", "position"})
        self.assertEqual(tolist(d["position"]), [9, 7])

    def test_reset_seed_determinism_and_state_hash(self):
        env = self.env
        env.reset(42)
        h0 = env.state_hash()
        env.step([1, 2, 3, 4])
        env.reset(42)
        self.assertEqual(env.state_hash(), h0)
        env.reset(43)
        self.assertNotEqual(env.state_hash(), h0)
        env.reset()  # the scenario's seed (1)
        h1 = env.state_hash()
        env.reset(1)
        self.assertEqual(env.state_hash(), h1)

    def test_bad_seed(self):
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            self.env.reset(-1)
        self.assertIn("seed -1 is outside [0, 2^64)", str(cm.exception))
        with self.assertRaises(polis.InvalidArgumentError):
            self.env.reset(1.5)

    def test_step_actions_and_errors(self):
        env = self.env
        with self.assertRaises(polis.StateError) as cm:
            env.step([0, 0, 0, 0])
        self.assertEqual(str(cm.exception), "step: call reset before the first step")
        self.assertEqual(cm.exception.status, 6)
        self.assertEqual(cm.exception.status_name, "wrong state")
        env.reset(1)
        with self.assertRaises(polis.ActionError) as cm:
            env.step([0, 7, 0, 0])
        self.assertEqual(str(cm.exception),
                         "step: agent 1 (agent_1): action 7 is outside [0, 5) at tick 0")
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(env.tick, 0)  # nothing ran
        with self.assertRaises(polis.ActionError) as cm:
            env.step([0, 0, 2 ** 40, 0])
        self.assertEqual(str(cm.exception),
                         f"step: agent 2 (agent_2): action {2 ** 40} is outside [0, 5) at tick 0")
        with self.assertRaises(polis.ActionError):
            env.step([0, 0, 0, 1.0])
        with self.assertRaises(polis.ActionError):
            env.step([True, 0, 0, 0])
        with self.assertRaises(polis.InvalidArgumentError):
            env.step([0, 0])
        env.step([0, 0, 0, 0])
        self.assertEqual(env.tick, 1)

    @needs_numpy
    def test_step_with_an_array(self):
        env = self.env
        env.reset(1)
        env.step(np.array([1, 2, 3, 4], dtype=np.int64))
        self.assertEqual(env.actions.tolist(), [1, 2, 3, 4])
        with self.assertRaises(polis.ActionError) as cm:
            env.step(np.array([0, 9, 0, 0], dtype=np.int8))
        self.assertEqual(str(cm.exception),
                         "step: agent 1 (agent_1): action 9 is outside [0, 5) at tick 1")
        with self.assertRaises(polis.ActionError) as cm:
            env.step(np.array([0, 0, 0, -(2 ** 33)], dtype=np.int64))
        self.assertIn(f"agent 3 (agent_3): action {-(2 ** 33)} is outside", str(cm.exception))
        with self.assertRaises(polis.ActionError):
            env.step(np.array([0.0, 1.0, 0.0, 0.0]))
        self.assertEqual(env.tick, 1)

    def test_render_and_parse(self):
        env = self.env
        with self.assertRaises(polis.StateError):
            env.render(0)
        env.reset(1)
        text = env.render("agent_0")
        self.assertTrue(text.startswith("You are agent_0 at (9, 7) on the 12x12 grid"), text)
        self.assertIn("Legal actions: noop, move_north, move_south, move_west, move_east.\n", text)
        self.assertEqual(env.render_json(2), json.loads(env.render(2, "json")))
        with self.assertRaises(polis.InvalidArgumentError):
            env.render(0, "html")
        with self.assertRaises(polis.UnknownAgentError) as cm:
            env.render("agent_9")
        self.assertIsInstance(cm.exception, KeyError)
        self.assertIn('unknown agent "agent_9" (agents: agent_0, agent_1, agent_2, agent_3)',
                      str(cm.exception))
        with self.assertRaises(polis.UnknownAgentError):
            env.render(4)
        self.assertEqual(env.parse_action(0, "go north"), 1)
        self.assertEqual(env.parse_action(0, "  move_east "), 4)
        self.assertEqual(env.parse_action(0, '{"action": "move", "direction": "west"}'), 3)
        self.assertEqual(env.parse_action(0, "stay"), 0)
        with self.assertRaises(polis.ActionError) as cm:
            env.parse_action(0, "fly away")
        self.assertIn('agent 0 (agent_0): cannot parse action "fly away"', str(cm.exception))
        # a parser that takes the input but finds it malformed: its own status and message
        with self.assertRaises(polis.PolisError) as cm:
            env.parse_action(1, "move")
        self.assertEqual(str(cm.exception), 'gather: "move" needs a direction: north, south, '
                         'west or east [parse "move", agent 1 (agent_1), tick 0]')

    def test_parse_before_reset(self):
        self.assertEqual(self.env.parse_action(3, "south"), 2)


class TestZeroCopy(unittest.TestCase):
    @needs_numpy
    def test_every_buffer_is_a_view_of_engine_memory(self):
        env = polis.Env(GATHER)
        views = {name: getattr(env, name) for name in BUFFERS}
        for name in BUFFERS:
            self.assertEqual(address(views[name]), env.buffer_address(name), name)
        env.reset(3)
        for _ in range(5):
            env.step([1, 2, 3, 4])
            for name in BUFFERS:
                v = getattr(env, name)
                self.assertIs(v, views[name], name)  # the same object every step
                self.assertEqual(address(v), env.buffer_address(name), name)
        base = env.buffer_address("obs")
        for f in env.obs_fields:
            v = env.fields[f.name]
            self.assertEqual(address(v), base + f.offset)
            self.assertEqual(v.strides[0], env.obs_size)
            self.assertTrue(np.shares_memory(v, env.obs))
            for a in range(env.n_agents):
                self.assertEqual(address(env.agent_fields[a][f.name]),
                                 base + a * env.obs_size + f.offset)
        for a in range(env.n_agents):
            self.assertEqual(address(env.agent_masks[a]),
                             env.buffer_address("masks") + a * env.n_actions)
        env.close()

    @needs_numpy
    def test_views_see_the_engine_write(self):
        # The engine writes rewards and observations in place: a view taken before the step
        # shows the new values after it, with no re-read.
        env = polis.Env(GATHER)
        env.reset(1)
        pos = env.agent_fields[0]["position"]
        before = pos.copy()
        env.step([1, 0, 0, 0])  # agent_0 north, from (9, 7)
        self.assertEqual(pos.tolist(), [before[0], before[1] - 1])
        # the raw record bytes, read by ctypes at the engine's address, hold the same value
        raw = (ctypes.c_int32 * 2).from_address(env.buffer_address("obs") +
                                                env.obs_fields[1].offset)
        self.assertEqual(list(raw), pos.tolist())
        env.close()

    @needs_numpy
    def test_outputs_are_read_only_and_actions_writable(self):
        env = polis.Env(GATHER)
        env.reset(1)
        for name in BUFFERS:
            v = getattr(env, name)
            self.assertEqual(v.flags.writeable, name == "actions", name)
        with self.assertRaises(ValueError):
            env.fields["view"][0, 0, 0, 0] = 5
        env.actions[:] = [4, 4, 4, 4]
        env.step()
        raw = (ctypes.c_int32 * 4).from_address(env.buffer_address("actions"))
        self.assertEqual(list(raw), [4, 4, 4, 4])
        env.close()

    @needs_no_numpy
    def test_memoryviews_without_numpy(self):
        env = polis.Env(GATHER)
        env.reset(1)
        for name in BUFFERS:
            v = getattr(env, name)
            self.assertIsInstance(v, memoryview)
            self.assertEqual(ctypes.addressof(v.obj), env.buffer_address(name), name)
            self.assertEqual(v.readonly, name != "actions", name)
        pos = env.agent_fields[0]["position"]
        self.assertEqual(ctypes.addressof(pos.obj), env.buffer_address("obs"))
        before = pos.tolist()
        env.actions[0] = 1  # north, from (9, 7)
        env.step()
        self.assertIs(env.agent_fields[0]["position"], pos)
        self.assertEqual(pos.tolist(), [before[0], before[1] - 1])
        self.assertEqual(pos.tolist(), env.render_json(0)["gather"]["position"])
        env.close()


class TestLifetime(unittest.TestCase):
    def test_close_without_views_destroys_at_once(self):
        env = polis.Env(GATHER)
        env.reset(1)
        handle = weakref.ref(env._h)
        env.close()
        gc.collect()
        self.assertIsNone(handle())
        self.assertTrue(env.closed)
        with self.assertRaises(polis.StateError) as cm:
            env.reset(1)
        self.assertEqual(str(cm.exception), "gather: the env is closed")
        with self.assertRaises(polis.StateError):
            env.obs
        env.close()  # idempotent

    def test_a_held_view_keeps_the_memory_alive(self):
        env = polis.Env(GATHER)
        env.reset(1)
        pos = env.agent_fields[2]["position"]
        expect = tolist(pos)
        handle = weakref.ref(env._h)
        env.close()
        gc.collect()
        self.assertIsNotNone(handle())  # not destroyed: a view still points into it
        self.assertEqual(tolist(pos), expect)
        del pos
        gc.collect()
        self.assertIsNone(handle())

    def test_context_manager(self):
        with polis.Env(GATHER) as env:
            env.reset(1)
        self.assertTrue(env.closed)


class TestCreateErrors(unittest.TestCase):
    def test_missing_file(self):
        with self.assertRaises(polis.PolisIOError) as cm:
            polis.Env("/nonexistent/scenario.json")
        self.assertEqual(str(cm.exception),
                         "cannot read /nonexistent/scenario.json: No such file or directory")
        self.assertEqual(cm.exception.status, 7)
        self.assertIsInstance(cm.exception, OSError)

    def test_bad_parameter_has_the_json_path(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w") as f:
                json.dump({"agents": 2, "plugins": [{"name": "gather",
                                                     "params": {"coins": -1}}]}, f)
            with self.assertRaises(polis.ConfigError) as cm:
                polis.Env(path)
            self.assertEqual(str(cm.exception), f"{path}: plugins[0].params.coins: expected "
                             f"integer in [0, 1000000], got -1")
            self.assertEqual(cm.exception.status, 3)

    def test_bad_json_syntax(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "syntax.json")
            with open(path, "w") as f:
                f.write('{"agents": 2,}')
            with self.assertRaises(polis.ConfigError) as cm:
                polis.Env(path)
            self.assertTrue(str(cm.exception).startswith(path + ":"), str(cm.exception))
            # with overrides the engine reads the file as well, and says overrides were set
            with self.assertRaises(polis.ConfigError) as cm2:
                polis.Env(path, {"max_steps": 3})
            self.assertEqual(str(cm2.exception), str(cm.exception) + " (scenario with overrides)")

    def test_unknown_plugin_and_failing_script(self):
        with self.assertRaises(polis.PluginError) as cm:
            polis.Env('{"agents": 2, "plugins": ["nope"]}')
        self.assertIn('plugins[0]: cannot find plugin "nope"', str(cm.exception))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "boom.lua"), "w") as f:
                f.write('error("boom")\n')
            with self.assertRaises(polis.ScriptError) as cm:
                polis.Env({"agents": 2, "scripts": ["boom.lua"]}, base_dir=d)
            self.assertIn("boom.lua:1: boom", str(cm.exception))


class TestOptions(unittest.TestCase):
    def test_plugin_path_is_searched_first(self):
        import shutil
        env = polis.Env(GATHER)
        built = env.describe()["plugins"][0]["path"]
        env.close()
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(built, os.path.join(d, "gather.so"))
            env = polis.Env(GATHER, plugin_path=d)
            self.assertEqual(os.path.realpath(env.describe()["plugins"][0]["path"]),
                             os.path.realpath(os.path.join(d, "gather.so")))
            env.close()


class TestEventsAndLog(unittest.TestCase):
    def test_subscriber_sees_coins_as_rewards(self):
        env = polis.Env(GATHER, {"grid": {"width": 5, "height": 5}, "plugins.0.params.coins": 8})
        seen = []
        env.subscribe(seen.append, "coin.collected")
        moved = []
        env.subscribe(lambda ev: moved.append(ev.name))
        env.reset(2)
        total = [0.0] * env.n_agents
        for t in range(40):
            env.step([1 + (t + a) % 4 for a in range(env.n_agents)])
            for a, r in enumerate(tolist(env.rewards)):
                total[a] += r
        self.assertGreater(len(seen), 0)
        per_agent = [0] * env.n_agents
        for ev in seen:
            self.assertEqual(ev.name, "coin.collected")
            self.assertEqual(set(ev.data), {"agent", "x", "y"})
            per_agent[ev.data["agent"]] += 1
        self.assertEqual(per_agent, [int(t) for t in total])
        self.assertIn("agent.moved", moved)
        self.assertEqual(sorted(set(moved)), ["agent.moved", "coin.collected"])
        env.close()

    def test_subscriber_errors(self):
        env = polis.Env(GATHER)
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            env.subscribe(print, "coin.lost")
        self.assertIn('unknown event type "coin.lost" (types: agent.moved, coin.collected)',
                      str(cm.exception))

        def boom(ev):
            raise RuntimeError("subscriber failed")
        env.subscribe(boom, "agent.moved")
        env.reset(1)
        with self.assertRaises(polis.StateError):
            env.subscribe(print)  # only until the first reset
        with self.assertRaises(RuntimeError) as cm:
            env.step([1, 1, 1, 1])
        self.assertEqual(str(cm.exception), "subscriber failed")
        self.assertEqual(env.tick, 1)  # the step itself completed
        env.close()

    def test_log_lines_reach_python(self):
        lines = []
        env = polis.Env(GATHER_LUA, {"grid": {"width": 4, "height": 4}}, log=lines.append)
        env.reset(1)
        for t in range(30):
            env.step([1 + (t + a) % 4 for a in range(env.n_agents)])
        self.assertTrue(any(ln.startswith("[bonus] tick ") and "first coin" in ln
                            for ln in lines), lines)
        env.close()


class TestNoRewardFunctions(unittest.TestCase):
    """A scenario may register no reward function: reward_components is then empty (a
    [0, n] array with numpy, an empty one-dimensional memoryview without)."""

    def test_env_without_reward_functions(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "tick.lua"), "w") as f:
                f.write('polis.observation{name = "tick", dtype = "i32", shape = {1},\n'
                        '  write = function(agent, buf) buf[1] = polis.tick() end}\n')
            scenario = {"polis": 1, "name": "still", "max_steps": 3, "agents": 2,
                        "scripts": [{"path": "tick.lua"}]}
            with polis.Env(scenario, base_dir=d) as env:
                self.assertEqual(env.reward_fn_names, ())
                self.assertEqual(len(env.reward_components), 0)
                env.reset(1)
                env.step()
                self.assertEqual(tolist(env.rewards), [0.0, 0.0])
                self.assertEqual(env.obs_dict(1, copy=True)["tick"][0], 1)


if __name__ == "__main__":
    unittest.main()
