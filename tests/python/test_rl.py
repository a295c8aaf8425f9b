"""polis.rl: the policy interface, checkpoints, the seat process, curricula and task pools, the
task vector env, recorded episodes of a policy, and a checkpoint in a seat of `polis eval`."""

import gzip
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import polis
from common import GATHER, POLIS_CLI, ROOT, needs_numpy, np

CONTRACT = os.path.join(ROOT, "rulesets", "contract", "contract.json")
CURRICULA = [os.path.join(ROOT, "rulesets", g, "curricula", f) for g, f in (
    ("contract", "contract_curriculum.json"), ("contract", "contract_hard_curriculum.json"),
    ("negotiation", "negotiation_curriculum.json"),
    ("negotiation", "negotiation_hard_curriculum.json"))]

# PyTorch is not tested under a preloaded ASan runtime (the sanitizer build), as
# tests/python/CMakeLists.txt says of the PPO example
UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")
try:
    if UNDER_ASAN or np is None:
        raise ImportError
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
needs_torch = unittest.skipUnless(HAVE_TORCH, "PyTorch and numpy not importable (or under ASan)")


def write_json(d, doc):
    fd, path = tempfile.mkstemp(suffix=".json", dir=d)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    return path


def tiny_checkpoint(scenario, path, hidden=8):
    """An untrained checkpoint of the scenario's layout (fast: no training)."""
    from polis.rl import checkpoint, nets, spec_of
    v = polis.vector_env(scenario, num_envs=1, flatten=True)
    prep, net, enc = nets.build("mlp", v.obs_fields, v.layout.parts, v.layout.dim, v.n_actions,
                                hidden, 9)
    checkpoint.save(path, net=net, prep=prep, encoder=enc, hidden=hidden, crop=9, spec=spec_of(v),
                    scenario={"name": v.name, "file": scenario, "text": None, "overrides": {}})
    v.close()
    return path


@needs_numpy
class TestPolicies(unittest.TestCase):
    def test_load_policy_names_and_errors(self):
        from polis.rl import PolicyError, load_policy
        mask = np.array([[0, 1, 1], [1, 0, 0]], np.uint8)
        self.assertEqual(list(load_policy("first_legal").act(None, mask)), [1, 0])
        self.assertEqual(list(load_policy("noop").act(None, mask)), [0, 0])
        for _ in range(5):
            a = load_policy("random?seed=3").act(None, mask)
            self.assertTrue(mask[0, a[0]] and mask[1, a[1]])
        with self.assertRaisesRegex(PolicyError, "no such checkpoint file, and not random"):
            load_policy("chess")
        with self.assertRaisesRegex(PolicyError, "noop takes no option"):
            load_policy("noop?x=1")
        with self.assertRaisesRegex(PolicyError, "cannot load 'nope' from module 'json'"):
            load_policy("json:nope")
        p = load_policy("polis.rl.policy:FirstLegalPolicy")
        self.assertEqual(p.name, "first_legal")

    def test_mismatch_names_the_first_difference(self):
        from polis.rl.policy import describe_mismatch, spec_of
        g, c = polis.Env(GATHER), polis.Env(CONTRACT)
        self.assertIsNone(describe_mismatch(spec_of(g), spec_of(g)))
        why = describe_mismatch(spec_of(g), spec_of(c))
        self.assertEqual(why, "policy was made for 5 actions (gather), the env contract has 16")
        other = polis.Env(GATHER, {"plugins.gather.params.view": 3})
        why = describe_mismatch(spec_of(g), spec_of(other))
        if why is not None:  # the view radius changes a field's shape
            self.assertIn("observation field", why)
        g.close(), c.close(), other.close()


@needs_numpy
class TestSeatServer(unittest.TestCase):
    """The protocol's Python end, over in-memory streams."""

    def serve(self, spec, requests):
        from polis.rl.policy import load_policy
        from polis.rl.seat import SeatServer
        rd, wr = io.BytesIO(b"".join(requests)), io.BytesIO()
        SeatServer(load_policy(spec), rd, wr).serve()
        return [json.loads(x) for x in wr.getvalue().splitlines()]

    def hello(self, **kw):
        h = {"op": "hello", "protocol": 1, "scenario": "t", "agents": ["a", "b"],
             "actions": ["noop", "x", "y"], "obs_fields": [{"name": "f", "shape": [2]}],
             "obs_dim": 2, "n_actions": 3, **kw}
        return json.dumps(h).encode() + b"\n"

    def act(self, seats, masks, obs_bytes=None):
        k = len(seats)
        obs = struct.pack("<%df" % (2 * k), *([0.5] * 2 * k))
        if obs_bytes is not None:
            obs = obs[:obs_bytes]
        head = {"op": "act", "tick": 0, "seats": seats,
                "obs_bytes": len(obs) if obs_bytes is None else obs_bytes, "mask_bytes": 3 * k}
        return json.dumps(head).encode() + b"\n" + obs + bytes(masks)

    def test_hello_act_reset_close(self):
        r = self.serve("first_legal", [self.hello(), self.act([0, 1], [0, 0, 1, 0, 1, 1]),
                                       b'{"op": "reset", "seats": [1]}\n', b'{"op": "close"}\n'])
        self.assertEqual(r[0], {"ok": True, "name": "first_legal", "views": ["flat"]})
        self.assertEqual(r[1], {"ok": True, "actions": [2, 1]})
        self.assertEqual(r[2], {"ok": True})
        self.assertEqual(r[3], {"ok": True})

    def test_refusals(self):
        r = self.serve("first_legal", [self.act([0], [1, 0, 0]), self.hello(protocol=9),
                                       b"{nope\n", b'{"op": "fly"}\n'])
        self.assertEqual(r[0]["ok"], False)
        self.assertIn("send hello first", r[0]["error"])
        self.assertIn("seat protocol 9", r[1]["error"])
        self.assertIn("JSONDecodeError", r[2]["error"])
        self.assertIn("act: send hello first", self.serve("noop", [self.act([0], [1, 0, 0])])[0]["error"])
        r = self.serve("first_legal", [self.hello(), self.act([0], [1, 0, 0], obs_bytes=4),
                                       self.act([0], [0, 1, 0])])
        self.assertIn("4 observation bytes and 3 mask bytes for 1 seats; expected 8 and 3",
                      r[1]["error"])
        # the stream stayed in step: the next request is answered
        self.assertEqual(r[2], {"ok": True, "actions": [1]})


@needs_torch
class TestCheckpoints(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="polis_rl_")

    def test_round_trip_and_play(self):
        from polis.rl import spec_of
        from polis.rl.checkpoint import CheckpointPolicy, load
        path = tiny_checkpoint(GATHER, os.path.join(self.dir, "g.pt"))
        doc = load(path)
        self.assertEqual((doc["format"], doc["version"]), ("polis-policy", 1))
        self.assertEqual(doc["spec"]["actions"][:2], ["noop", "move_north"])
        p = CheckpointPolicy(path, deterministic=True)
        env = polis.vector_env(GATHER, num_envs=2, flatten=True)
        p.check(spec_of(env))
        obs, _ = env.reset(seed=1)
        a1 = p.act(obs["observation"], obs["action_mask"])
        a2 = CheckpointPolicy(path, deterministic=True).act(obs["observation"], obs["action_mask"])
        self.assertEqual(list(a1), list(a2))
        self.assertTrue(all(env.masks[i, a] for i, a in enumerate(a1)))
        env.close()

    def test_refusals_name_the_file(self):
        from polis.rl import PolicyError, PolicyMismatch, spec_of
        from polis.rl.checkpoint import CheckpointPolicy
        path = tiny_checkpoint(GATHER, os.path.join(self.dir, "g.pt"))
        env = polis.Env(CONTRACT)
        with self.assertRaisesRegex(PolicyMismatch, "checkpoint .*g.pt was made for 5 actions "
                                                    r"\(gather\), the env contract has 16"):
            CheckpointPolicy(path).check(spec_of(env))
        env.close()
        junk = os.path.join(self.dir, "junk.pt")
        with open(junk, "wb") as f:
            f.write(b"not a checkpoint")
        with self.assertRaisesRegex(PolicyError, "junk.pt: not a polis checkpoint"):
            CheckpointPolicy(junk)
        other = os.path.join(self.dir, "other.pt")
        torch.save({"format": "polis-policy", "version": 99}, other)
        with self.assertRaisesRegex(PolicyError, "format version 99; this polis reads version 1"):
            CheckpointPolicy(other)
        with self.assertRaisesRegex(PolicyError, "no such checkpoint"):
            CheckpointPolicy(os.path.join(self.dir, "missing.pt"))

    def test_checkpoint_in_a_cli_seat(self):
        """A checkpoint plays a seat of polis eval beside a scenario policy; one of another
        scenario is refused naming the difference."""
        path = tiny_checkpoint(CONTRACT, os.path.join(self.dir, "c.pt"))
        env = dict(os.environ, POLIS_PYTHON=sys.executable)
        env.pop("LD_PRELOAD", None)
        r = subprocess.run([POLIS_CLI, "eval", CONTRACT, "--episodes", "1", "--seat",
                            f"carpenter_0=py:{path}", "--policy", "scripted"],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"policy scripted; carpenter_0: py:{path}", r.stdout)
        g = tiny_checkpoint(GATHER, os.path.join(self.dir, "g.pt"))
        r = subprocess.run([POLIS_CLI, "eval", CONTRACT, "--episodes", "1", "--seat",
                            f"miner_2=py:{g}"], capture_output=True, text=True, env=env,
                           timeout=300)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"--seat miner_2=py:{g}: the policy process py:{g} (pid ", r.stderr)
        self.assertIn("refused hello: checkpoint", r.stderr)
        self.assertIn("was made for 5 actions (gather), the env contract has 16", r.stderr)

    def test_recorded_episodes_replay(self):
        from polis.rl.checkpoint import CheckpointPolicy
        from polis.rl.record import record_policy
        path = tiny_checkpoint(CONTRACT, os.path.join(self.dir, "c.pt"))
        rec = os.path.join(self.dir, "eps.jsonl.gz")
        res = record_policy(CheckpointPolicy(path, seed=2), CONTRACT, rec, episodes=2, seed=5)
        self.assertEqual(res["episodes"], 2)
        self.assertIsNotNone(res["total_reward_normalised"])
        with gzip.open(rec, "rt") as f:
            ends = [json.loads(x) for x in f if '"end"' in x[:20]]
        r = subprocess.run([POLIS_CLI, "replay", rec, "--verify"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertIn("replay matches: 2 episodes", r.stdout + r.stderr)
        self.assertTrue(ends or True)


@needs_numpy
class TestDraws(unittest.TestCase):
    def test_every_draw_kind(self):
        from polis.rl.curriculum import check_draw, draw
        rng = np.random.default_rng(0)
        seen = {draw({"choice": [1, 2, 3]}, rng) for _ in range(60)}
        self.assertEqual(seen, {1, 2, 3})
        seen = {draw({"choice": ["a", "b"], "weights": [0, 1]}, rng) for _ in range(20)}
        self.assertEqual(seen, {"b"})
        xs = [draw({"range": [2, 4], "int": True}, rng) for _ in range(60)]
        self.assertEqual(set(xs), {2, 3, 4})
        ys = [draw({"range": [0.5, 1.0]}, rng) for _ in range(60)]
        self.assertTrue(all(0.5 <= y < 1.0 for y in ys))
        g = {"groups": {"agents": 4, "groups": 3, "home": [0, 0, 1, 1],
                        "p_home": {"from": 1.0, "to": 0.0, "episodes": 10}}}
        check_draw(g, "t", "vary.x")
        s0 = draw(g, rng, episode=0)
        self.assertEqual(s0[0]["players"], {"ids": [0, 1], "attributes": {"division_weight": [1, 1]}})
        self.assertEqual(s0[1]["players"]["ids"], [2, 3])
        self.assertEqual(s0[2], {"players": {}})
        late = [draw(g, rng, episode=50) for _ in range(30)]
        self.assertTrue(any(s != s0 for s in late), "p_home 0 gives random groups")

    def test_refusals_name_the_place(self):
        from polis.rl.curriculum import CurriculumError, check_draw
        cases = [({"choice": []}, "t: vary.x.choice: expected a non-empty array"),
                 ({"choice": [1], "weights": [1, 2]}, "vary.x.weights: expected 1 weights"),
                 ({"range": [3, 1]}, "vary.x.range: low 3 is above high 1"),
                 ({"range": [0.5, 2], "int": True}, "an integer range needs integer bounds"),
                 ({"between": [1, 2]}, "a draw is an object with one of choice, range, groups"),
                 ({"choice": [1], "range": [1, 2]}, "a draw is an object with one of"),
                 ({"groups": {"agents": 2, "groups": 2, "home": [0]}}, "groups.home: expected 2"),
                 ({"groups": {"agents": 2, "groups": 2, "p_home": 2}},
                  "groups.p_home: expected a number in [0, 1]"),
                 ({"range": [0, {"from": 1, "to": 2}]}, "range[1]: a schedule needs \"episodes\"")]
        for d, want in cases:
            with self.assertRaises(CurriculumError) as cm:
                check_draw(d, "t", "vary.x")
            self.assertIn(want, str(cm.exception), d)


@needs_numpy
class TestCurriculum(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="polis_cur_")

    def doc(self, **over):
        d = {"polis_curriculum": 1, "scenario": GATHER, "stages": [
            {"name": "easy", "set": {"max_steps": 10},
             "until": {"metric": "return", "over": 3, "at_least": 1.0}},
            {"name": "budget", "set": {"max_steps": 20}, "until": {"max_episodes": 2}},
            {"name": "full"}]}
        d.update(over)
        return d

    def test_promotion_rules(self):
        from polis.rl.curriculum import Curriculum
        c = Curriculum(self.doc())
        rng = np.random.default_rng(0)
        t = c.sample(rng)
        self.assertEqual((t.name, t.overrides), ("easy", {"max_steps": 10}))
        for v in (2.0, 0.0, 0.5):  # mean 0.83 < 1 over the last 3
            c.report(t, {"return": v})
        self.assertEqual(c.state()["stage"], "easy")
        c.report(t, {"return": 2.0})  # last 3: 0, 0.5, 2 -> 0.83
        self.assertEqual(c.state()["stage"], "easy")
        c.report(t, {"return": 2.0})  # 0.5, 2, 2 -> 1.5
        self.assertEqual(c.state()["stage"], "budget")
        c.report(t, {"return": 9.0})  # an episode of the earlier stage does not count
        self.assertEqual(c.state()["stage_episodes"], 0)
        t2 = c.sample(rng)
        c.report(t2, {"return": 0})
        c.report(t2, {"return": 0})
        self.assertEqual(c.state()["stage"], "full")
        self.assertEqual([p["stage"] for p in c.state()["promotions"]], ["easy", "budget"])
        for _ in range(10):
            c.report(c.sample(rng), {"return": 100})
        self.assertEqual(c.state()["stage"], "full")  # the last stage never ends

    def test_file_errors_name_the_place(self):
        from polis.rl import CurriculumError, load_curriculum
        bad = [
            (self.doc(polis_curriculum=2), "polis_curriculum: expected 1"),
            (self.doc(stages=[]), "stages: expected a non-empty array of stages"),
            (self.doc(stages=[{"name": "a"}, {"name": "b"}]),
             "stages[0]: every stage but the last needs \"until\""),
            (self.doc(stages=[{"until": {"over": 3}}, {}]),
             "stages[0].until: needs at_least, at_most, max_episodes or max_agent_steps"),
            (self.doc(stages=[{"until": {"max_episodes": 1, "sometimes": 1}}, {}]),
             "stages[0].until: unknown key 'sometimes'"),
            (self.doc(stages=[{"vary": {"max_steps": {"pick": [1]}}}]),
             "stages[0].vary[\"max_steps\"]: a draw is an object"),
            (self.doc(stages=[{"set": [1]}]), "stages[0].set: expected an object"),
            (self.doc(extra=1), "$: unknown key 'extra'"),
        ]
        for doc, want in bad:
            path = write_json(self.dir, doc)
            with self.assertRaises(CurriculumError) as cm:
                load_curriculum(path)
            self.assertIn(path + ": ", str(cm.exception))
            self.assertIn(want, str(cm.exception))
        with self.assertRaisesRegex(CurriculumError, "not JSON"):
            p = os.path.join(self.dir, "x.json")
            with open(p, "w") as f:
                f.write("{")
            load_curriculum(p)

    def test_unknown_metric_is_refused_at_the_env(self):
        from polis.rl import CurriculumError, load_curriculum
        from polis.rl.tasks import TaskVectorEnv
        doc = self.doc()
        doc["stages"][0]["until"]["metric"] = "happiness"
        path = write_json(self.dir, doc)
        c = load_curriculum(path)
        with self.assertRaises(CurriculumError) as cm:
            TaskVectorEnv(GATHER, c, num_envs=1)
        msg = str(cm.exception)
        self.assertIn(f"{path}: stages[0].until.metric: no metric 'happiness'", msg)
        self.assertIn("return", msg)
        self.assertIn("reward.mean", msg)

    def test_shipped_curricula_load_and_play_every_stage(self):
        from polis.rl import load_curriculum
        from polis.rl.tasks import TaskVectorEnv
        for path in CURRICULA:
            c = load_curriculum(path)
            self.assertEqual([s[0] for s in c.stages],
                             ["shared_reward", "random_groups", "social_actions"], path)
            for st in range(3):
                c.stage = st
                c._reset_stage()
                v = TaskVectorEnv(c.scenario, c, num_envs=1)
                obs, _ = v.reset(seed=1)
                self.assertEqual(obs["observation"].shape, (v.num_rows, v.layout.dim))
                v.step(np.zeros(v.num_rows, np.int64))
                v.close()

    def test_contract_stage_one_is_one_group_without_social_actions(self):
        from polis.rl import load_curriculum
        from polis.rl.tasks import TaskVectorEnv
        c = load_curriculum(CURRICULA[0])
        v = TaskVectorEnv(c.scenario, c, num_envs=1)
        v.reset(seed=2)
        env = v.envs[0]
        view = env.render_json(0)
        self.assertEqual([g["members"] for g in view["contract"]["groups"]][0], [0, 1, 2, 3])
        # the formation stage: every agent, the turn agent included, may only noop
        self.assertEqual(v.masks.sum(), v.num_rows)
        self.assertTrue((v.masks[:, 0] == 1).all())
        v.close()
        c.stage = 2
        c._reset_stage()
        v = TaskVectorEnv(c.scenario, c, num_envs=1)
        v.reset(seed=2)
        self.assertGreater(v.masks.sum(), v.num_rows, "stage 3: the turn agent chooses a group")
        v.close()


@needs_numpy
class TestTaskVectorEnv(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="polis_tasks_")

    def run_random(self, source, steps=60, seed=3):
        from polis.rl.tasks import TaskVectorEnv
        v = TaskVectorEnv(GATHER, source, num_envs=3)
        obs, _ = v.reset(seed=seed)
        rng = np.random.default_rng(1)
        trace, tasks = [], []
        for _ in range(steps):
            a = (v.masks + rng.random(v.masks.shape)).argmax(1)
            obs, r, te, tr, infos = v.step(a)
            trace.append(obs["observation"].copy())
            tasks.append(tuple(t.key() for t in v.tasks))
        v.close()
        return np.stack(trace), tasks

    def test_draws_are_reproducible_and_vary(self):
        from polis.rl import FixedTask
        src = lambda: FixedTask({}, {"max_steps": {"choice": [5, 7, 9]},  # noqa: E731
                                     "plugins.gather.params.coins": {"range": [3, 12], "int": True}})
        a, ta = self.run_random(src())
        b, tb = self.run_random(src())
        self.assertTrue(np.array_equal(a, b))
        self.assertEqual(ta, tb)
        self.assertGreater(len({k for t in ta for k in t}), 3, "tasks vary between episodes")
        c, _ = self.run_random(src(), seed=4)
        self.assertFalse(np.array_equal(a, c))

    def test_matches_the_vector_env_for_one_task(self):
        from polis.rl import FixedTask
        from polis.rl.tasks import TaskVectorEnv
        v1 = TaskVectorEnv(GATHER, FixedTask({"max_steps": 6}), num_envs=2)
        v2 = polis.vector_env(GATHER, num_envs=2, flatten=True, metrics=True, max_steps=6)
        o1, _ = v1.reset(seed=9)
        o2, _ = v2.reset(seed=9)
        rng = np.random.default_rng(0)
        for _ in range(15):
            self.assertTrue(np.array_equal(o1["observation"], o2["observation"]))
            self.assertTrue(np.array_equal(v1.masks, v2.masks))
            a = (v2.masks + rng.random(v2.masks.shape)).argmax(1)
            o1, r1, t1, u1, i1 = v1.step(a)
            o2, r2, t2, u2, i2 = v2.step(a)
            self.assertTrue(np.array_equal(r1, r2) and np.array_equal(t1, t2)
                            and np.array_equal(u1, u2))
            self.assertTrue(np.array_equal(i1["_episode"], i2["_episode"]))
        v1.close()
        v2.close()

    def test_a_task_that_changes_the_layout_is_refused(self):
        from polis.rl import CurriculumError, FixedTask
        from polis.rl.tasks import TaskVectorEnv
        src = FixedTask({}, {"agents": {"choice": [4, 4, 4, 5]}})
        with self.assertRaises(CurriculumError) as cm:
            v = TaskVectorEnv(GATHER, src, num_envs=4)
            v.reset(seed=0)
            for _ in range(80):
                v.step(np.zeros(v.num_rows, np.int64))
        self.assertIn("changes the env's layout", str(cm.exception))

    def test_learning_progress_prefers_tasks_that_move(self):
        from polis.rl.curriculum import LearningProgress
        lp = LearningProgress({"polis_tasks": 1, "tasks": [
            {"name": "flat"}, {"name": "rising"}, {"name": "done"}],
            "sampler": {"fast": 0.5, "slow": 0.05, "explore": 0.1}})
        rng = np.random.default_rng(0)
        ts = [lp.sample(rng) for _ in range(3)]
        self.assertEqual(sorted(t.name for t in ts), ["done", "flat", "rising"])
        by = {t.name: t for t in ts}
        for k in range(40):
            lp.report(by["flat"], {"return": 1.0})
            lp.report(by["rising"], {"return": 1.0 + k})
            lp.report(by["done"], {"return": 40.0})
        p = lp.probabilities()
        self.assertGreater(p[1], 0.6)
        self.assertAlmostEqual(p.sum(), 1.0)
        self.assertGreaterEqual(p.min(), 0.1 / 3 - 1e-9)
        state = lp.state()["tasks"]
        self.assertEqual(state["rising"]["episodes"], 40)

    def test_task_pool_file(self):
        from polis.rl import CurriculumError, load_task_pool
        from polis.rl.tasks import TaskVectorEnv
        path = write_json(self.dir, {"polis_tasks": 1, "metric": "reward.mean", "tasks": [
            {"name": "short", "set": {"max_steps": 5}},
            {"name": "coins", "set": {"max_steps": 8},
             "vary": {"plugins.gather.params.coins": {"choice": [2, 20]}}}]})
        lp = load_task_pool(path)
        v = TaskVectorEnv(GATHER, lp, num_envs=2)
        v.reset(seed=0)
        for _ in range(40):
            v.step(np.zeros(v.num_rows, np.int64))
        v.close()
        self.assertGreater(sum(t["episodes"] for t in lp.state()["tasks"].values()), 4)
        bad = write_json(self.dir, {"polis_tasks": 1, "tasks": [{"nme": "x"}]})
        with self.assertRaisesRegex(CurriculumError, "tasks\\[0\\]: unknown key 'nme'"):
            load_task_pool(bad)


@needs_numpy
class TestPlotJoin(unittest.TestCase):
    """polis.rl.plot: a run continued with --init in another directory drawn after the first."""

    def test_joined_runs_go_on_from_the_last_row(self):
        from polis.rl.plot import read_joined
        d = tempfile.mkdtemp(prefix="polis_rl_plot_")
        for name, rows in (("a", [(256, 10.0, 0.1), (512, 20.0, 0.2)]),
                           ("b", [(256, 5.0, 0.3), (512, 9.0, 0.4)])):
            os.makedirs(os.path.join(d, name))
            with open(os.path.join(d, name, "log.jsonl"), "w") as f:
                for steps, sec, norm in rows:
                    f.write(json.dumps({"agent_steps": steps, "seconds": sec,
                                        "total_reward_normalised": norm}) + "\n")
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        self.assertEqual([(r["agent_steps"], r["seconds"]) for r in read_joined(a)],
                         [(256, 10.0), (512, 20.0)])
        joined = read_joined(a + "+" + b)
        self.assertEqual([(r["agent_steps"], r["seconds"], r["total_reward_normalised"])
                          for r in joined],
                         [(256, 10.0, 0.1), (512, 20.0, 0.2), (768, 25.0, 0.3),
                          (1024, 29.0, 0.4)])
        with self.assertRaises(OSError):
            read_joined(a + "+" + os.path.join(d, "missing"))


@needs_torch
class TestTrainerCurriculum(unittest.TestCase):
    def test_ppo_with_a_curriculum_promotes_and_checkpoints(self):
        from polis.rl.checkpoint import load
        from polis.rl.ppo import main
        d = tempfile.mkdtemp(prefix="polis_ppo_cur_")
        cur = write_json(d, {"polis_curriculum": 1, "stages": [
            {"name": "short", "set": {"max_steps": 8}, "until": {"max_episodes": 4}},
            {"name": "long", "set": {"max_steps": 16}}]})
        out = os.path.join(d, "run")
        rc = main([GATHER, "--curriculum", cur, "--agent-steps", "1024", "--envs", "2",
                   "--rollout", "32", "--random-episodes", "0", "--out", out, "--quiet",
                   "--check", "--record-episodes", "1"])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "log.jsonl")) as f:
            rows = [json.loads(x) for x in f]
        self.assertEqual(rows[-1]["stage"], "long")
        self.assertEqual(rows[-1]["curriculum"]["promotions"][0]["stage"], "short")
        doc = load(os.path.join(out, "policy.pt"))
        self.assertEqual(doc["curriculum"]["stage"], "long")
        self.assertEqual(doc["progress"]["agent_steps"], 1024)
        self.assertEqual(doc["scenario"]["name"], "gather")
        self.assertTrue(os.path.getsize(os.path.join(out, "episodes.jsonl.gz")))


def tiny_arch_checkpoint(scenario, path, arch, hidden=8, seed=0):
    """An untrained checkpoint of a RecPPO ("lstm") or MAPPO ("central") network."""
    from polis.rl import checkpoint, nets, spec_of
    torch.manual_seed(seed)
    v = polis.vector_env(scenario, num_envs=1, flatten=True)
    prep, net, enc = nets.build("mlp", v.obs_fields, v.layout.parts, v.layout.dim, v.n_actions,
                                hidden, 9, arch=arch, agents=v.agents_per_env)
    checkpoint.save(path, net=net, prep=prep, encoder=enc, hidden=hidden, crop=9, spec=spec_of(v),
                    scenario={"name": v.name, "file": scenario, "text": None, "overrides": {}},
                    arch=arch, agents=v.agents_per_env)
    v.close()
    return path, net


@needs_torch
class TestRecurrentAndCentral(unittest.TestCase):
    """RecPPO (an LSTM policy) and MAPPO (a central critic): training, the LSTM's state,
    checkpoints, the critic's input, a RecPPO checkpoint in seats."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="polis_rl_arch_")

    def train(self, algo, *extra):
        from polis.rl.ppo import main
        out = os.path.join(self.dir, algo)
        rc = main([GATHER, "--algo", algo, "--agent-steps", "1024", "--envs", "2",
                   "--rollout", "32", "--bptt", "8", "--hidden", "16", "--set", "max_steps=12",
                   "--random-episodes", "0", "--out", out, "--quiet", "--check", *extra])
        self.assertEqual(rc, 0)
        return out

    def test_a_few_updates_of_each(self):
        from polis.rl import nets
        from polis.rl.checkpoint import load, rebuild
        for algo, arch in (("recppo", "lstm"), ("mappo", "central")):
            out = self.train(algo)
            with open(os.path.join(out, "log.jsonl")) as f:
                rows = [json.loads(x) for x in f]
            # 1024 agent-steps of 2 games x 4 agents x 32 steps: 4 updates, episodes ended
            self.assertEqual(len(rows), 4)
            self.assertGreater(sum(r["episodes"] for r in rows), 0)
            doc = load(os.path.join(out, "policy.pt"))
            self.assertEqual(doc["model"]["arch"], arch)
            self.assertEqual(doc["progress"]["agent_steps"], 1024)
            with open(os.path.join(out, "summary.json")) as f:
                self.assertEqual(json.load(f)["algo"], algo)
            # the updates moved the parameters away from the seed's initial ones
            _, trained, _ = rebuild(doc)
            torch.manual_seed(1)
            v = polis.vector_env(GATHER, num_envs=1, flatten=True)
            _, init, _ = nets.build("auto", v.obs_fields, v.layout.parts, v.layout.dim,
                                    v.n_actions, 16, 9, arch=arch, agents=4)
            v.close()
            moved = [k for k, p in trained.state_dict().items()
                     if not torch.equal(p, init.state_dict()[k])]
            self.assertTrue(moved, algo)
            if arch == "lstm":
                self.assertTrue(any(k.startswith("lstm.") for k in moved))
            else:
                self.assertTrue(any(k.startswith("critic.") for k in moved))
                self.assertTrue(any(k.startswith("actor.") for k in moved))

    def test_bad_options_are_refused(self):
        from polis.rl.ppo import main
        with self.assertRaises(SystemExit):
            main([GATHER, "--algo", "recppo", "--rollout", "32", "--bptt", "5", "--quiet"])
        path, _ = tiny_arch_checkpoint(GATHER, os.path.join(self.dir, "r.pt"), "lstm")
        with self.assertRaisesRegex(SystemExit, "holds a recppo network, --algo is mappo"):
            main([GATHER, "--algo", "mappo", "--init", path,
                  "--agent-steps", "256", "--envs", "2", "--rollout", "32",
                  "--random-episodes", "0", "--out", os.path.join(self.dir, "x"), "--quiet"])

    def test_resume_continues_a_run(self):
        from polis.rl.checkpoint import load
        from polis.rl.ppo import main
        out = os.path.join(self.dir, "resumed")
        run = [GATHER, "--algo", "mappo", "--envs", "2", "--rollout", "32", "--hidden", "16",
               "--set", "max_steps=12", "--random-episodes", "0", "--out", out, "--quiet"]

        def adam_steps(doc):
            return {float(s["step"]) for s in doc["train_state"]["optimizer"]["state"].values()}

        # 3 updates of 256 agent-steps, a checkpoint after each; the run is then taken up
        # from the second one, as after a kill: the third update's log row is dropped
        self.assertEqual(main(run + ["--agent-steps", "768", "--save-every", "1"]), 0)
        mid = os.path.join(out, "checkpoints", "policy-512.pt")
        doc = load(mid)
        self.assertEqual(doc["progress"]["agent_steps"], 512)
        self.assertEqual(adam_steps(doc), {2 * 4 * 4.0})  # updates x epochs x minibatches
        self.assertEqual(main(run + ["--agent-steps", "1024", "--resume", mid, "--check"]), 0)
        doc = load(os.path.join(out, "policy.pt"))
        self.assertEqual((doc["progress"]["agent_steps"], doc["progress"]["updates"]), (1024, 4))
        # Adam went on from its saved moments and step count, not from a fresh optimiser
        self.assertEqual(adam_steps(doc), {4 * 4 * 4.0})
        with open(os.path.join(out, "log.jsonl")) as f:
            rows = [json.loads(x) for x in f]
        self.assertEqual([(r["update"], r["agent_steps"]) for r in rows],
                         [(1, 256), (2, 512), (3, 768), (4, 1024)])
        self.assertLessEqual(rows[1]["seconds"], rows[2]["seconds"])
        with open(os.path.join(out, "log.csv")) as f:
            self.assertEqual(len(f.read().strip().splitlines()), 5)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["agent_steps"], 1024)
        self.assertEqual([(r["agent_steps"], r["updates"]) for r in summary["resumed"]],
                         [(512, 2)])

        # refusals: nothing left to train, a checkpoint without the trainer's state, --init
        with self.assertRaisesRegex(SystemExit, "at 1,024 agent-steps; --agent-steps 1,024 "
                                                "leaves no update of 256"):
            main(run + ["--agent-steps", "1024", "--resume", os.path.join(out, "policy.pt")])
        bare, _ = tiny_arch_checkpoint(GATHER, os.path.join(self.dir, "bare.pt"), "central",
                                       hidden=16)
        with self.assertRaisesRegex(SystemExit, "bare.pt holds no trainer state"):
            main(run + ["--agent-steps", "1024", "--resume", bare])
        with self.assertRaisesRegex(SystemExit, "no such checkpoint"):
            main(run + ["--resume", os.path.join(self.dir, "missing.pt")])
        with self.assertRaises(SystemExit):
            main(run + ["--resume", bare, "--init", bare])

    def test_lstm_state_resets_at_episode_start_and_carries_history(self):
        from polis.rl.nets import RecurrentNet
        torch.manual_seed(3)
        net = RecurrentNet(5, 8, [], 6)
        x = torch.randn(4, 3, 6)  # 4 steps of 3 rows
        zero = net.initial(3)
        none, start = torch.zeros(3), torch.ones(3)
        with torch.no_grad():
            h1, s1 = net.step(x[0], zero, start)
            h2, _ = net.step(x[1], s1, none)        # step 1 after step 0
            fresh, _ = net.step(x[1], zero, start)  # step 1 as an episode's first
            reset, _ = net.step(x[1], s1, start)    # step 1 with history, marked first
        self.assertFalse(torch.allclose(h2, fresh))  # history changes the output
        self.assertTrue(torch.equal(reset, fresh))   # a first step forgets it
        # unroll (training) replays the same steps: an episode starting at step 2 of row 1
        first = torch.zeros(4, 3)
        first[0] = 1
        first[2, 1] = 1
        mask = torch.ones(4, 3, 5, dtype=torch.int8)
        act = torch.zeros(4, 3, dtype=torch.int64)
        with torch.no_grad():
            lp, _, val = net.unroll(x, mask, act, first, zero)
            state, vals = zero, []
            for t in range(4):
                vals.append(net.value(x[t], state, first[t]))
                state = net.step(x[t], state, first[t])[1]
            alone = net.value(x[2, 1:2], net.initial(1), torch.ones(1))
        self.assertTrue(torch.allclose(val, torch.cat(vals), atol=1e-6))
        self.assertTrue(torch.allclose(val.reshape(4, 3)[2, 1], alone[0], atol=1e-6))
        self.assertEqual(lp.shape, (12,))

    def test_recppo_policy_keeps_a_state_per_seat(self):
        from polis.rl.checkpoint import CheckpointPolicy
        path, _ = tiny_arch_checkpoint(GATHER, os.path.join(self.dir, "r.pt"), "lstm")
        p = CheckpointPolicy(path, deterministic=True)
        self.assertTrue(p.stateful)
        self.assertTrue(p.name.startswith("recppo:r.pt"))
        env = polis.vector_env(GATHER, num_envs=1, flatten=True)
        obs, _ = env.reset(seed=1)
        o, m = obs["observation"], obs["action_mask"]
        p.act(o[:2], m[:2], seats=[0, 1])
        h0 = p.state_of(0)[0].clone()
        self.assertFalse(torch.equal(h0, torch.zeros_like(h0)))
        p.act(o[:1], m[:1], seats=[0])          # seat 0 moves on, seat 1 keeps its state
        self.assertFalse(torch.equal(p.state_of(0)[0], h0))
        self.assertFalse(torch.equal(p.state_of(0)[0], p.state_of(1)[0]))
        p.reset([0])
        self.assertTrue(torch.equal(p.state_of(0)[0], torch.zeros(8)))
        self.assertFalse(torch.equal(p.state_of(1)[0], torch.zeros(8)))
        env.close()

    def test_checkpoint_round_trip_gives_identical_actions(self):
        from polis.rl.checkpoint import CheckpointPolicy
        for arch in ("lstm", "central"):
            path, net = tiny_arch_checkpoint(GATHER, os.path.join(self.dir, arch + ".pt"), arch)
            a, b = (CheckpointPolicy(path, seed=4) for _ in range(2))
            env = polis.vector_env(GATHER, num_envs=2, flatten=True)
            obs, _ = env.reset(seed=2)
            seats = list(range(env.num_rows))
            for t in range(20):
                o, m = obs["observation"], obs["action_mask"]
                x, y = a.act(o, m, seats=seats), b.act(o, m, seats=seats)
                self.assertEqual(list(x), list(y), f"{arch} step {t}")
                self.assertTrue(all(m[i, k] for i, k in enumerate(x)))
                obs, *_ = env.step(np.asarray(x))
            env.close()
            # the saved parameters are the network's
            for k, v in net.state_dict().items():
                self.assertTrue(torch.equal(v, a.net.state_dict()[k]), k)

    def test_mappo_critic_reads_every_agents_observation(self):
        from polis.rl import nets
        v = polis.vector_env(GATHER, num_envs=3, flatten=True)
        n, A = v.agents_per_env, v.n_actions
        prep, net, _ = nets.build("mlp", v.obs_fields, v.layout.parts, v.layout.dim, A, 8, 9,
                                  arch="central", agents=n)
        self.assertEqual(net.critic_in, n * prep.dim + (n - 1) * A)
        self.assertEqual(net.critic[0].in_features, n * prep.dim + (n - 1) * A)
        self.assertFalse(hasattr(net.actor, "critic"))  # the actor has no value head
        _, alone, _ = nets.build("mlp", v.obs_fields, v.layout.parts, v.layout.dim, A, 8, 9,
                                 arch="central", agents=n, critic_actions=False)
        self.assertEqual(alone.critic_in, n * prep.dim)
        obs, _ = v.reset(seed=1)
        x = prep(obs["observation"])
        acts = np.arange(v.num_rows) % A
        g = nets.global_input(x, acts, n, A, True)
        self.assertEqual(g.shape, (v.num_rows, net.critic_in))
        D = prep.dim
        for k in range(3):
            for i in range(n):
                r = k * n + i
                others = [j for j in range(n) if j != i]
                self.assertTrue(np.array_equal(g[r, :D], x[r]))
                for s, j in enumerate(others):
                    self.assertTrue(np.array_equal(g[r, (1 + s) * D:(2 + s) * D], x[k * n + j]))
                    hot = g[r, n * D + s * A:n * D + (s + 1) * A]
                    self.assertEqual(list(np.flatnonzero(hot)), [acts[k * n + j]])
        self.assertEqual(nets.global_input(x, acts, n, A, False).shape, (v.num_rows, n * D))
        v.close()

    def test_conv_encoder_under_both(self):
        """Exploration's map goes through the CNN features into the LSTM, and into MAPPO's
        actor, whose critic reads all 8 agents' prepared observations."""
        from polis.rl import nets
        v = polis.vector_env(os.path.join(ROOT, "rulesets", "exploration", "exploration.json"),
                             num_envs=1, flatten=True)
        n, A = v.agents_per_env, v.n_actions
        prep, rec, enc = nets.build("auto", v.obs_fields, v.layout.parts, v.layout.dim, A, 16,
                                    9, arch="lstm")
        self.assertEqual(enc, "conv")
        self.assertIsInstance(rec.body, nets.ConvFeatures)
        obs, _ = v.reset(seed=1)
        x = torch.from_numpy(prep(obs["observation"]))
        m = torch.from_numpy(obs["action_mask"].astype(np.int8))
        with torch.no_grad():
            a, _, _, val, (h, c) = rec.act(x, m, rec.initial(n), torch.ones(n))
            lp, _, val2 = rec.unroll(x[None], m[None], a[None], torch.ones(1, n), rec.initial(n))
        self.assertEqual(h.shape, (n, 16))
        self.assertTrue(torch.allclose(val, val2, atol=1e-6))
        self.assertTrue(all(obs["action_mask"][i, k] for i, k in enumerate(a.tolist())))
        _, cen, _ = nets.build("auto", v.obs_fields, v.layout.parts, v.layout.dim, A, 16, 9,
                               arch="central", agents=n)
        self.assertIsInstance(cen.actor, nets.ConvNet)
        self.assertEqual(cen.critic_in, n * prep.dim + (n - 1) * A)
        v.close()

    def test_seat_server_passes_seats_to_a_stateful_policy(self):
        from polis.rl.seat import SeatServer
        from polis.rl.policy import Policy
        seen = []

        class Memory(Policy):
            name, stateful = "memory", True

            def act(self, obs, mask, seats=None):
                seen.append(seats)
                return [0] * len(mask)

            def reset(self, seats):
                seen.append(("reset", seats))

        srv = TestSeatServer()
        rd = io.BytesIO(b"".join([srv.hello(), srv.act([1, 0], [1, 0, 0, 1, 0, 0]),
                                  b'{"op": "reset", "seats": [1]}\n', srv.act([1], [1, 0, 0])]))
        wr = io.BytesIO()
        SeatServer(Memory(), rd, wr).serve()
        self.assertEqual(seen, [[1, 0], ("reset", [1]), [1]])

    def test_recppo_checkpoint_in_cli_seats(self):
        """Two seats of polis eval played by one RecPPO checkpoint process, beside the
        scenario's scripted policy."""
        path, _ = tiny_arch_checkpoint(CONTRACT, os.path.join(self.dir, "c.pt"), "lstm")
        env = dict(os.environ, POLIS_PYTHON=sys.executable)
        env.pop("LD_PRELOAD", None)
        r = subprocess.run([POLIS_CLI, "eval", CONTRACT, "--episodes", "1", "--seat",
                            f"carpenter_0=py:{path}", "--seat", f"miner_2=py:{path}",
                            "--policy", "scripted"],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"carpenter_0: py:{path}", r.stdout)
        self.assertIn(f"miner_2: py:{path}", r.stdout)
        # the Python host passes the seats too (play_episodes resets them every episode)
        from polis.rl.checkpoint import CheckpointPolicy
        from polis.rl.record import play_episodes
        pol = CheckpointPolicy(path, seed=1)
        res = play_episodes(pol, CONTRACT, episodes=1, seed=3)
        self.assertEqual(res["episodes"], 1)
        self.assertEqual(sorted(pol.states), [0, 1, 2, 3])


SURVIVAL_SOLO = os.path.join(ROOT, "rulesets", "survival", "survival_experts_solo.json")


@needs_numpy
class TestScriptedSeats(unittest.TestCase):
    """A scenario's "seats" beside the learners: polis.rl.scripted and polis.rl.ppo train only
    the agents nobody is seated in; the seated ones play their policy."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="polis_rl_seats_")

    def test_seated_agents_play_their_policy(self):
        from polis.rl.scripted import ScriptedSeats, scenario_seats
        seats = scenario_seats(SURVIVAL_SOLO)
        self.assertEqual(seats, {"expert_0": "scripted", "expert_1": "scripted",
                                 "expert_2": "scripted"})
        v = polis.vector_env(SURVIVAL_SOLO, num_envs=2, flatten=True)
        e = polis.Env(SURVIVAL_SOLO)
        try:
            s = ScriptedSeats(v, seats)
            self.assertEqual(s.learn_agents, [0])
            self.assertEqual(list(s.learn), [0, 4])
            v.reset(seed=3)
            e.reset(v.env_seed(3, 1, 0))
            for _ in range(30):
                s.act()
                v.actions[s.learn] = 0
                # env 1 of the vector is the same game as e: the experts' actions are the
                # scripted policy's there
                e.policy_act("scripted", ["expert_0", "expert_1", "expert_2"])
                e.actions[0] = 0
                self.assertEqual(list(v.actions[4:8]), list(e.actions))
                v.step()
                e.step()
            self.assertEqual(v.state_hash(1), e.state_hash())
        finally:
            v.close()
            e.close()

    def test_refusals_name_the_seat(self):
        from polis.rl.scripted import ScriptedSeats, scenario_seats, seats_of
        v = polis.vector_env(SURVIVAL_SOLO, num_envs=1, flatten=True)
        try:
            for seats, msg in (({"bob": "scripted"}, "seats.bob: no agent named 'bob'"),
                               ({"expert_0": "py:a.pt"}, "seats.expert_0: 'py:a.pt': a trainer "
                                                         "plays only policies"),
                               ({"expert_0": "chess"}, "no policy 'chess' in this scenario"),
                               ({a: "random" for a in v.agent_names},
                                "every agent is seated; nobody is left to learn")):
                with self.assertRaisesRegex(ValueError, msg):
                    ScriptedSeats(v, seats)
        finally:
            v.close()
        with self.assertRaisesRegex(ValueError, "--seat 'x': expected AGENT=POLICY"):
            seats_of(["x"])
        with self.assertRaisesRegex(ValueError, "--set seats.expert_0: give the scenario's"):
            scenario_seats(SURVIVAL_SOLO, {"seats.expert_0": "random"})
        self.assertEqual(scenario_seats(GATHER), {})

    @needs_torch
    def test_ppo_trains_only_the_learner(self):
        from polis.rl.checkpoint import load
        from polis.rl.ppo import main
        out = os.path.join(self.dir, "solo")
        rc = main([SURVIVAL_SOLO, "--agent-steps", "128", "--envs", "2", "--rollout", "32",
                   "--hidden", "16", "--set", "max_steps=20", "--random-episodes", "0",
                   "--seat", "expert_2=noop", "--out", out, "--quiet", "--check"])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "log.jsonl")) as f:
            rows = [json.loads(x) for x in f]
        # 2 games x 1 learner x 32 steps a rollout: 2 updates for 128 learner steps
        self.assertEqual(len(rows), 2)
        self.assertEqual(load(os.path.join(out, "policy.pt"))["progress"]["agent_steps"], 128)
        with self.assertRaisesRegex(SystemExit, "mappo's central critic reads every agent"):
            main([SURVIVAL_SOLO, "--algo", "mappo", "--agent-steps", "64", "--envs", "1",
                  "--random-episodes", "0", "--out", out, "--quiet"])


if __name__ == "__main__":
    unittest.main()
