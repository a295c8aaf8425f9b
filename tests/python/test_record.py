"""Recording from Python: Env(record=...) and parallel_env(record=...) write a recording
(docs/recording.md) of every episode, gzip by the name, complete at close(); the CLI's
`polis replay --verify` (beside the tested libpolis) re-simulates it and matches."""

import gzip
import json
import os
import subprocess
import tempfile
import unittest

import polis
from common import POLIS_CLI as CLI

HERE = os.path.dirname(os.path.abspath(__file__))
GATHER = os.path.join(HERE, "..", "..", "rulesets", "gather", "gather.json")


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


class TestRecord(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def replay(self, path, episodes):
        if not os.path.exists(CLI):
            return
        r = subprocess.run([CLI, "replay", path, "--verify"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"replay matches: {episodes} episode", r.stdout)

    def test_env_record(self):
        path = os.path.join(self.tmp.name, "g.jsonl.gz")
        env = polis.Env(GATHER, {"plugins.gather.params.coins": 4}, record=path,
                        keyframe_every=5)
        for seed in (3, 4):
            env.reset(seed)
            for t in range(12):
                env.step([(t + a) % 5 for a in range(env.n_agents)])
        env.close()
        recs = lines(path)
        self.assertEqual(recs[0]["t"], "header")
        self.assertEqual(recs[0]["source"], "python")
        self.assertEqual(recs[0]["overrides"], {"plugins.gather.params.coins": 4})
        self.assertEqual([r["seed"] for r in recs if r["t"] == "reset"], [3, 4])
        ends = [r for r in recs if r["t"] == "end"]
        self.assertEqual([e["tick"] for e in ends], [12, 12])
        self.assertEqual([r["tick"] for r in recs if r["t"] == "key"], [0, 5, 10, 0, 5, 10])
        self.replay(path, 2)

    def test_parallel_record(self):
        path = os.path.join(self.tmp.name, "p.jsonl")
        env = polis.parallel_env(GATHER, record=path)
        env.reset(seed=9)
        for _ in range(5):
            env.step({a: "move east" for a in env.agents})
        env.close()
        recs = lines(path)
        self.assertEqual(recs[-1]["t"], "end")
        self.assertEqual(recs[-1]["tick"], 5)
        self.replay(path, 1)

    def test_bad_path(self):
        with self.assertRaises(polis.PolisError) as cm:
            polis.Env(GATHER, record=os.path.join(self.tmp.name, "no", "such", "r.jsonl"))
        self.assertIn("cannot create", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
