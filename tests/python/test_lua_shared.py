"""A Lua game's shared observation field (polis.shared_observation) in the SDK, and the seat
protocol's shared fields (revision 1) at polis.rl.seat's end: tests/cli/scenarios/signal.lua
shows every agent one number in the shared field "signal" and rewards saying it at the next
step, so a player that reads the field scores every step."""

import io
import json
import os
import struct
import unittest

import polis
from common import ROOT, needs_numpy, tolist

SIGNAL = os.path.join(ROOT, "tests", "cli", "scenarios", "signal.json")


def signal_of(env):
    return tolist(env.shared["signal"])[0]


class TestLuaShared(unittest.TestCase):
    def test_layout_and_values(self):
        with polis.Env(SIGNAL) as env:
            self.assertEqual([(f.name, f.dtype, tuple(f.shape)) for f in env.shared_fields],
                             [("signal", "u8", (1,))])
            self.assertEqual([f.name for f in env.obs_fields], ["me"])
            env.reset(5)
            seen = []
            for _ in range(20):
                s = signal_of(env)
                self.assertIn(s, range(4))
                seen.append(s)
                env.step([1 + s] * env.n_agents)  # say_<s>
                self.assertEqual(tolist(env.rewards), [1.0] * env.n_agents)
            self.assertGreater(len(set(seen)), 1)
            # the same seed draws the same signals; another seed others
            env.reset(5)
            again = []
            for _ in range(20):
                again.append(signal_of(env))
                env.step([0] * env.n_agents)
                self.assertEqual(tolist(env.rewards), [0.0] * env.n_agents)
            self.assertEqual(again, seen)
            env.reset(6)
            other = []
            for _ in range(20):
                other.append(signal_of(env))
                env.step([0] * env.n_agents)
            self.assertNotEqual(other, seen)

    def test_parallel(self):
        from polis.parallel import ParallelEnv
        env = ParallelEnv(SIGNAL)
        try:
            env.reset(seed=2)
            total = 0.0
            for _ in range(10):
                s = int(tolist(env.shared_observations()["signal"])[0])
                _, rew, _, _, _ = env.step({a: 1 + s for a in env.agents})
                total += sum(rew.values())
            self.assertEqual(total, 10.0 * 3)
        finally:
            env.close()


@needs_numpy
class TestSeatServerShared(unittest.TestCase):
    """polis.rl.seat with a policy that reads the shared field, over in-memory streams."""

    def reader(self):
        import numpy as np
        from polis.rl.policy import Policy

        class Reader(Policy):
            name = "reader"
            views = ("shared",)
            needs_shared = ("signal",)

            def act(self, obs, mask, shared=None):
                self.got = shared
                return np.full(len(mask), 1 + int(shared["signal"][0]))
        return Reader()

    def serve(self, policy, requests):
        from polis.rl.seat import SeatServer
        rd, wr = io.BytesIO(b"".join(requests)), io.BytesIO()
        SeatServer(policy, rd, wr).serve()
        return [json.loads(x) for x in wr.getvalue().splitlines()]

    def hello(self, **kw):
        h = {"op": "hello", "protocol": 1, "revision": 1, "scenario": "signal",
             "agents": ["a", "b"], "actions": ["noop", "s0", "s1", "s2"],
             "obs_fields": [{"name": "me", "dtype": "u8", "shape": [1]}], "obs_dim": 1,
             "n_actions": 4,
             "shared_fields": [{"name": "signal", "dtype": "u8", "shape": [1], "offset": 0},
                               {"name": "board", "dtype": "i16", "shape": [2, 2], "offset": 8}],
             "shared_size": 16, **kw}
        return json.dumps(h).encode() + b"\n"

    def act(self, seats, signal, shared_bytes=16):
        shared = bytes([signal]) + bytes(7) + struct.pack("<4h", 1, -2, 300, -32768)
        head = {"op": "act", "tick": 3, "seats": seats, "obs_bytes": 0,
                "mask_bytes": 4 * len(seats), "shared_bytes": shared_bytes}
        return (json.dumps(head).encode() + b"\n" + bytes([1] * 4 * len(seats))
                + shared[:shared_bytes] + bytes(max(0, shared_bytes - 16)))

    def test_reads_shared(self):
        p = self.reader()
        r = self.serve(p, [self.hello(), self.act([0, 1], 2), self.act([1], 0)])
        self.assertEqual(r[0], {"ok": True, "name": "reader", "views": ["shared"]})
        self.assertEqual(r[1], {"ok": True, "actions": [3, 3]})
        self.assertEqual(r[2], {"ok": True, "actions": [1]})
        self.assertEqual(p.got["board"].tolist(), [[1, -2], [300, -32768]])
        self.assertEqual(str(p.got["board"].dtype), "int16")

    def test_refusals(self):
        r = self.serve(self.reader(), [self.hello(revision=None)])
        self.assertIn("cannot send (seat protocol 1 revision None; they came in revision 1",
                      r[0]["error"])
        h = self.hello()
        r = self.serve(self.reader(), [h.replace(b'"revision": 1, ', b"")])
        self.assertIn("seat protocol 1 revision 0;", r[0]["error"])
        r = self.serve(self.reader(), [self.hello(shared_fields=[], shared_size=0)])
        self.assertEqual(r[0]["error"], "the env signal has no shared observation field "
                                        "'signal' (its shared fields: none)")
        r = self.serve(self.reader(), [self.hello(shared_fields=[{"name": "x"}])])
        self.assertIn("hello: malformed shared_fields", r[0]["error"])
        # a wrong size is refused, and the stream stays in step
        r = self.serve(self.reader(), [self.hello(), self.act([0], 1, shared_bytes=20),
                                       self.act([0], 1)])
        self.assertIn("act: 0 observation bytes, 4 mask bytes and 20 shared bytes for 1 seats; "
                      "expected 0, 4 and 16", r[1]["error"])
        self.assertEqual(r[2], {"ok": True, "actions": [2]})

    def test_play_episodes(self):
        # polis.rl.record's loop hands the policy the shared fields too
        from polis.rl.record import play_episodes
        r = play_episodes(self.reader(), SIGNAL, episodes=2, seed=3)
        self.assertEqual([p["returns"] for p in r["per_episode"]], [[20.0] * 3] * 2)

    def test_without_shared_view(self):
        # a policy that does not ask is sent no shared bytes and called as before
        from polis.rl.policy import load_policy
        h = self.hello()
        act = json.dumps({"op": "act", "tick": 0, "seats": [0], "obs_bytes": 4,
                          "mask_bytes": 4}).encode() + b"\n" + struct.pack("<f", 0) + bytes([0, 0, 1, 0])
        r = self.serve(load_policy("first_legal"), [h, act])
        self.assertEqual(r, [{"ok": True, "name": "first_legal", "views": ["flat"]},
                             {"ok": True, "actions": [2]}])


if __name__ == "__main__":
    unittest.main()
