"""Plans (macro actions) through ctypes: Env.macros, plan, plan_next, plan_cancel,
plan_command and plan_actions, with the kernel's test plugin macro_probe (agents walk on a
line; WALK n, BACK n, WANDER n, BAD how)."""

import os
import unittest

import polis

PLUGINS = os.environ.get("POLIS_TEST_PLUGIN_DIR", "")
LINE = {"polis": 1, "name": "line", "seed": 1, "max_steps": 30, "agents": 2,
        "plugins": [{"name": "macro_probe", "params": {"finish_at": 6}}]}


@unittest.skipUnless(PLUGINS and os.path.isdir(PLUGINS),
                     "POLIS_TEST_PLUGIN_DIR (the kernel's test plugins) is not set")
class TestPlans(unittest.TestCase):
    def setUp(self):
        self.env = polis.Env(LINE, plugin_path=PLUGINS)

    def tearDown(self):
        self.env.close()

    def pos(self, agent):
        return int(self.env.obs_dict(agent, copy=True)["pos"][0])

    def test_macros(self):
        self.assertEqual([m.name for m in self.env.macros], ["WALK", "BACK", "WANDER", "BAD"])
        self.assertEqual(self.env.macros[0],
                         polis.MacroInfo("WALK", "WALK <n>",
                                         "Steps forward n times (1..100); done when walked."))
        self.assertEqual([m["usage"] for m in self.env.describe()["macros"]],
                         ["WALK <n>", "BACK <n>", "WANDER <n>", "BAD <how>"])
        with polis.Env(os.path.join(os.path.dirname(__file__), "..", "..", "rulesets",
                                    "gather", "gather.json")) as g:
            self.assertEqual(g.macros, ())

    def test_run_to_done_and_impossible(self):
        env = self.env
        with self.assertRaises(polis.StateError):
            env.plan(0, "WALK 1")
        env.reset(1)
        env.plan("agent_0", "walk 2")
        self.assertEqual(env.plan_command(0), "walk 2")
        self.assertIsNone(env.plan_command("agent_1"))
        fwd = env.action_id("fwd")
        for _ in range(2):
            step = env.plan_next(0)
            self.assertEqual(step, polis.PlanStep("running", fwd, None))
            self.assertEqual(env.plan_next(0), step)  # the same answer within a tick
            env.step([step.action, 0])
        self.assertEqual(self.pos(0), 2)
        self.assertEqual(env.plan_next(0),
                         polis.PlanStep("done", None, "walked 2 steps, now at 2"))
        self.assertIsNone(env.plan_command(0))
        with self.assertRaises(polis.InvalidArgumentError) as cm:
            env.plan_next(0)
        self.assertEqual(str(cm.exception), "plan_next: agent 0 (agent_0) has no plan")

        env.plan(1, "BACK 2")
        self.assertEqual(env.plan_next(1),
                         polis.PlanStep("impossible", None, "hit the wall at 0 with 2 steps to go"))

        env.plan(1, "WALK 5")
        env.plan_cancel(1)
        self.assertIsNone(env.plan_command(1))
        env.plan(1, "WALK 5")
        env.reset(2)
        self.assertIsNone(env.plan_command(1))

    def test_plan_actions_loop(self):
        """The plan-level loop: both agents walk until agent_0 finishes at 6."""
        env = self.env
        env.reset(3)
        env.plan(0, "WALK 9")
        env.plan(1, "WALK 2")
        ended_at = {}
        for _ in range(10):
            for a in range(2):
                env.actions[a] = 0
            for name, r in env.plan_actions().items():
                ended_at[name] = (env.tick, r.status, r.why)
            env.step()
        self.assertEqual(ended_at["agent_1"], (2, "done", "walked 2 steps, now at 2"))
        self.assertEqual(ended_at["agent_0"], (6, "impossible", "agent finished"))
        self.assertEqual(self.pos(0), 6)
        self.assertEqual(self.pos(1), 2)
        with self.assertRaises(polis.StateError) as cm:
            env.plan(0, "WALK 1")
        self.assertEqual(str(cm.exception),
                         "plan_start: agent 0 (agent_0) has finished the episode (tick 10)")

    def test_errors(self):
        env = self.env
        env.reset(1)
        with self.assertRaises(polis.ActionError) as cm:
            env.plan(0, "FLY 3")
        self.assertEqual(str(cm.exception), 'plan_start: agent 0 (agent_0): unknown macro "FLY" '
                                            '(macros: WALK, BACK, WANDER, BAD)')
        with self.assertRaises(polis.ActionError) as cm:
            env.plan(1, "WALK lots")
        self.assertIn('the step count must be 1 to 100, got "lots"', str(cm.exception))
        self.assertIsNone(env.plan_command(1))
        with self.assertRaises(polis.InvalidArgumentError):
            env.plan(0, 3)
        with self.assertRaises(polis.UnknownAgentError):
            env.plan("bob", "WALK 1")
        env.plan(0, "BAD illegal")
        with self.assertRaises(polis.ActionError) as cm:
            env.plan_next(0)
        self.assertEqual(str(cm.exception), "plan_next: macro BAD: agent 0 (agent_0): action 2 "
                                            "(back) is not legal at tick 0")
        self.assertIsNone(env.plan_command(0))

    def test_determinism(self):
        def trace(seed):
            with polis.Env(LINE, {"plugins.macro_probe.params.finish_at": 0},
                           plugin_path=PLUGINS) as env:
                env.reset(seed)
                env.plan(0, "WANDER 20")
                env.plan(1, "WANDER 20")
                out = []
                for _ in range(20):
                    env.plan_actions()
                    env.step()
                    out.append((self.pos_of(env, 0), self.pos_of(env, 1)))
                return out
        self.assertEqual(trace(5), trace(5))
        self.assertNotEqual(trace(5), trace(6))

    @staticmethod
    def pos_of(env, agent):
        return int(env.obs_dict(agent, copy=True)["pos"][0])


@unittest.skipUnless(PLUGINS and os.path.isdir(PLUGINS),
                     "POLIS_TEST_PLUGIN_DIR (the kernel's test plugins) is not set")
class TestParallelPlans(unittest.TestCase):
    """Plans through the PettingZoo-shaped env: plan commands as actions, agents left out
    following their plans, infos[agent]["plan"]."""

    def setUp(self):
        self.env = polis.parallel_env(LINE, plugin_path=PLUGINS, action_mask=None)

    def tearDown(self):
        self.env.close()

    def pos(self, agent):
        return int(self.env.core.obs_dict(agent, copy=True)["pos"][0])

    def test_plan_runs_until_done(self):
        env = self.env
        env.reset(seed=1)
        _, _, _, _, infos = env.step({"agent_0": "walk 3", "agent_1": {"plan": "WALK 1"}})
        self.assertEqual(infos["agent_0"]["plan"],
                         {"command": "walk 3", "status": "running", "why": None})
        self.assertEqual(infos["agent_1"]["plan"],
                         {"command": "WALK 1", "status": "done",
                          "why": "walked 1 steps, now at 1"})
        self.assertEqual((self.pos(0), self.pos(1)), (1, 1))
        _, _, _, _, infos = env.step({})
        self.assertEqual(infos["agent_0"]["plan"]["status"], "running")
        self.assertNotIn("plan", infos["agent_1"])  # its plan ended in the step before
        _, _, _, _, infos = env.step({})
        self.assertEqual(infos["agent_0"]["plan"],
                         {"command": "walk 3", "status": "done",
                          "why": "walked 3 steps, now at 3"})
        self.assertEqual((self.pos(0), self.pos(1)), (3, 1))
        _, _, _, _, infos = env.step({})
        self.assertNotIn("plan", infos["agent_0"])
        self.assertEqual(self.pos(0), 3)  # no plan: noop

    def test_explicit_action_cancels(self):
        env = self.env
        env.reset(seed=1)
        env.step({"agent_0": "WALK 5"})
        _, _, _, _, infos = env.step({"agent_0": "back"})  # an action name, not the macro
        self.assertEqual(infos["agent_0"]["plan"],
                         {"command": "WALK 5", "status": "cancelled",
                          "why": "an action was given instead"})
        self.assertEqual(self.pos(0), 0)
        self.assertIsNone(env.core.plan_command(0))

    def test_impossible_and_refused(self):
        env = self.env
        env.reset(seed=1)
        _, _, _, _, infos = env.step({"agent_1": "BACK 2"})
        self.assertEqual(infos["agent_1"]["plan"],
                         {"command": "BACK 2", "status": "impossible",
                          "why": "hit the wall at 0 with 2 steps to go"})
        env.step({"agent_0": "WALK 4"})
        tick = env.core.tick
        with self.assertRaises(polis.ActionError) as cm:
            env.step({"agent_0": "WALK 2", "agent_1": "WALK many"})
        self.assertIn('the step count must be 1 to 100, got "many"', str(cm.exception))
        self.assertEqual(env.core.tick, tick)  # the step was not taken
        self.assertIsNone(env.core.plan_command(0))
        self.assertIsNone(env.core.plan_command(1))
        with self.assertRaises(polis.InvalidArgumentError):
            env.step({"agent_0": {"plan": 7}})

    def test_finished_agent(self):
        env = polis.parallel_env(LINE, plugin_path=PLUGINS, action_mask=None,
                                 overrides={"plugins.macro_probe.params.finish_at": 2})
        with env:
            env.reset(seed=1)
            env.step({"agent_0": "WALK 9"})
            _, _, term, _, infos = env.step({})
            self.assertTrue(term["agent_0"])
            self.assertEqual(infos["agent_0"]["plan"],
                             {"command": "WALK 9", "status": "impossible",
                              "why": "agent finished"})
            self.assertEqual(env.agents, ["agent_1"])


if __name__ == "__main__":
    unittest.main()
