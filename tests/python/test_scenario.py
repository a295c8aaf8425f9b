"""Scenario arguments, ruleset names and overrides."""

import json
import os
import tempfile
import unittest

import polis
from polis.scenario import overrides_json, resolve
from common import GATHER, GATHER_LUA, STAGGERED, tolist


def params_of(env, plugin="gather"):
    d = env.describe()
    p = next(p for p in d["plugins"] if p["name"] == plugin)
    return {q["key"]: q["value"] for q in p["params"]}


class TestScenarioArguments(unittest.TestCase):
    def test_ruleset_names(self):
        self.assertEqual(os.path.realpath(polis.find_scenario("gather")),
                         os.path.realpath(GATHER))
        env = polis.Env("gather_lua")
        self.assertEqual(env.name, "gather_lua")
        self.assertEqual(env.reward_fn_names, ("coins", "first_coin"))
        env.close()
        with self.assertRaises(polis.PolisIOError) as cm:
            polis.Env("no_such_game")
        self.assertIn('scenario "no_such_game": no such file, and no no_such_game.json in ',
                      str(cm.exception))
        self.assertIn("rulesets", str(cm.exception))

    def test_scenario_path_variable(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "mine"))
            with open(os.path.join(d, "mine", "tiny.json"), "w") as f:
                json.dump({"agents": 1, "plugins": [{"name": "gather",
                                                     "params": {"coins": 1}}],
                           "grid": {"width": 4, "height": 4}}, f)
            old = os.environ.get("POLIS_SCENARIO_PATH")
            os.environ["POLIS_SCENARIO_PATH"] = d
            try:
                env = polis.Env("tiny")
                self.assertEqual(env.name, "tiny")
                self.assertEqual(env.n_agents, 1)
                env.close()
            finally:
                if old is None:
                    del os.environ["POLIS_SCENARIO_PATH"]
                else:
                    os.environ["POLIS_SCENARIO_PATH"] = old

    def test_dict_and_json_string(self):
        doc = {"agents": 2, "grid": {"width": 5, "height": 5},
               "plugins": [{"name": "gather", "params": {"coins": 3}}]}
        env = polis.Env(doc)
        self.assertEqual((env.name, env.n_agents), ("scenario", 2))
        env.close()
        self.assertEqual(doc["agents"], 2)  # the caller's dict is not changed by overrides
        env = polis.Env(doc, {"agents": 3})
        self.assertEqual(env.n_agents, 3)
        self.assertEqual(doc["agents"], 2)
        env.close()
        env = polis.Env(json.dumps(doc), {"max_steps": 9})
        self.assertEqual(env.max_steps, 9)
        env.close()
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(json.dumps(doc), {"plugins.gather.params.coins": -2})
        self.assertEqual(str(cm.exception), "<string>: plugins[0].params.coins: expected integer "
                         "in [0, 1000000], got -2 (scenario with overrides)")
        with self.assertRaises(polis.ConfigError):
            polis.Env(42)

    def test_dict_base_dir_for_scripts(self):
        doc = {"agents": 2, "grid": {"width": 5, "height": 5},
               "plugins": [{"name": "gather", "params": {"coins": 2}}],
               "scripts": [{"path": "bonus.lua"}]}
        with self.assertRaises(polis.PolisIOError):
            polis.Env(doc, base_dir=os.path.dirname(STAGGERED))
        env = polis.Env(doc, base_dir=os.path.dirname(GATHER_LUA))
        self.assertEqual(env.reward_fn_names, ("coins", "first_coin"))
        env.close()


class TestOverrides(unittest.TestCase):
    def test_top_level_and_paths(self):
        env = polis.Env(GATHER, {"max_steps": 7, "agents": 2, "seed": 5,
                                 "plugins.gather.params.coins": 4,
                                 "plugins__gather__params__view": 1,
                                 "grid.width": 9})
        self.assertEqual((env.max_steps, env.n_agents, env.default_seed), (7, 2, 5))
        self.assertEqual(params_of(env)["coins"], 4)
        self.assertEqual(env.obs_fields[0].shape, (2, 3, 3))
        self.assertEqual(env.describe()["grid"]["width"], 9)
        self.assertEqual(env.name, "gather")
        env.close()

    def test_by_index_and_scripts_by_name(self):
        env = polis.Env(GATHER_LUA, {"plugins.0.params.coin_value": 2.5,
                                     "scripts.bonus.params.bonus": 3})
        self.assertEqual(params_of(env)["coin_value"], 2.5)
        self.assertEqual(params_of(env, "bonus")["bonus"], 3)
        env.close()

    def test_relative_script_paths_survive_overrides(self):
        env = polis.Env(STAGGERED, {"max_steps": 4})
        self.assertEqual(env.name, "staggered")  # named after the file, as without overrides
        self.assertIn("final", env.reward_fn_names)
        env.close()

    def test_parallel_env_keywords(self):
        env = polis.parallel_env("gather", max_steps=3, agents=2,
                                 overrides={"plugins.gather.params.coins": 1})
        self.assertEqual(env.possible_agents, ["agent_0", "agent_1"])
        self.assertEqual(params_of(env.core)["coins"], 1)
        env.reset(seed=0)
        for _ in range(3):
            _, _, _, trunc, _ = env.step({})
        self.assertTrue(all(trunc.values()))
        env.close()

    def test_engine_message_for_a_bad_value(self):
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(GATHER, {"plugins.gather.params.coins": -1})
        self.assertEqual(str(cm.exception), f"{GATHER}: plugins[0].params.coins: expected integer "
                         f"in [0, 1000000], got -1 (scenario with overrides)")
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(GATHER, {"max_steps": 0})
        self.assertIn("max_steps: expected integer in [1, 1000000000], got 0", str(cm.exception))
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(GATHER, {"plugins.gather.params.speed": 2})
        self.assertIn("plugins[0].params", str(cm.exception))
        self.assertIn("speed", str(cm.exception))

    def test_override_path_errors(self):
        cases = {
            "plugins.3.params.coins": 'overrides: "plugins.3.params.coins": plugins has 1 '
                                      'element (indices 0 to 0)',
            "plugins.nope.params.coins": 'overrides: "plugins.nope.params.coins": no element of '
                                         'plugins is named "nope"',
            "max_steps.x": 'overrides: "max_steps.x": max_steps is a number, not an object or '
                           'array',
            "grid..width": 'overrides: "grid..width": empty key in the path',
        }
        for key, msg in cases.items():
            with self.assertRaises(polis.ConfigError) as cm:
                polis.Env(GATHER, {key: 1})
            self.assertEqual(str(cm.exception), msg)
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(GATHER, {"seed": float("nan")})
        self.assertIn("Out of range float values are not JSON compliant", str(cm.exception))
        with self.assertRaises(polis.ConfigError) as cm:
            polis.Env(GATHER, {"": 1})
        self.assertEqual(str(cm.exception), "override key '': expected a non-empty string")

    def test_objects_merge_and_none_removes(self):
        """The engine's rules: an object merges into an object; None restores a default."""
        env = polis.Env(GATHER, {"grid": {"width": 9}})
        grid = env.describe()["grid"]
        self.assertEqual((grid["width"], grid["height"]), (9, 12))  # height kept from the file
        env.close()
        env = polis.Env(GATHER, {"plugins.gather.params.coins": None})
        self.assertEqual(params_of(env)["coins"], 8)  # gather's default
        env.close()
        env = polis.Env(GATHER_LUA, {"scripts.bonus.params.bonus": 3, "lua.memory_limit": 0})
        self.assertEqual(params_of(env, "bonus")["bonus"], 3)
        env.close()

    def test_override_keys(self):
        self.assertIsNone(overrides_json({}))
        self.assertEqual(overrides_json({"plugins__gather__params__coins": 3, "grid.width": 8,
                                         "max_steps": 5}),
                         '{"plugins.gather.params.coins": 3, "grid.width": 8, "max_steps": 5}')

    def test_numpy_values(self):
        from common import np
        if np is None:
            self.skipTest("numpy is hidden in this run")
        env = polis.Env(GATHER, {"max_steps": np.int64(6), "grid.width": np.int32(8)})
        self.assertEqual(env.max_steps, 6)
        env.close()

    def test_resolve_hands_the_file_and_the_overrides_to_the_engine(self):
        src = resolve(GATHER)
        self.assertEqual((src.kind, src.path, src.overrides), ("file", GATHER, None))
        src = resolve(GATHER, {"max_steps": 3})
        self.assertEqual((src.kind, src.path), ("file", GATHER))
        self.assertEqual(json.loads(src.overrides), {"max_steps": 3})


if __name__ == "__main__":
    unittest.main()
