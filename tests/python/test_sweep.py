"""polis.sweep: the CLI's sweep from Python, read back as records or a numpy structured array;
resume; errors with polis's message."""

import json
import math
import os
import shutil
import tempfile
import unittest

import polis
from common import ROOT, needs_numpy, np

SPEC = os.path.join(ROOT, "examples", "sweep_minigames.json")
CONTRACT = os.path.join(ROOT, "rulesets", "contract", "contract.json")


class TestSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="polis_sweep_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_records_from_a_spec_file(self):
        out = os.path.join(self.tmp, "a")
        rows = polis.sweep(SPEC, out=out, episodes=4, seed=7, threads=2)
        self.assertEqual([r["job"] for r in rows], list(range(16)))
        self.assertEqual([r["seed"] for r in rows[:4]], [7, 8, 9, 10])
        self.assertEqual({r["scenario"] for r in rows}, {"contract", "negotiation"})
        self.assertEqual([r["params"]["max_steps"] for r in rows[::4]], [60, 120, 60, 120])
        for r in rows:
            self.assertEqual(len(r["hash"]), 16)
            self.assertIn("total_reward_normalised", r["metrics"])
        # the same sweep on one thread, named by bare scenario names, in a dict: same jobs
        again = polis.sweep({"scenarios": ["contract", "negotiation"],
                             "grid": {"max_steps": [60, 120]}},
                            out=os.path.join(self.tmp, "b"), seed=7, episodes=4, threads=1)
        self.assertEqual(again, rows)
        s = polis.sweep_summary(out)
        self.assertEqual(len(s["cells"]), 4)
        c0 = s["cells"][0]["metrics"]["reward.total"]
        vals = [r["metrics"]["reward.total"] for r in rows[:4]]
        self.assertAlmostEqual(c0["mean"], math.fsum(vals) / 4, places=12)
        self.assertEqual(c0["n"], 4)

    def test_record(self):
        out = os.path.join(self.tmp, "rec")
        rows = polis.sweep({"scenarios": [CONTRACT]}, out=out, episodes=2, seed=3, steps=30,
                           threads=1, record=True)
        plain = polis.sweep({"scenarios": [CONTRACT]}, out=os.path.join(self.tmp, "plain"),
                            episodes=2, seed=3, steps=30, threads=1)
        self.assertEqual([r["recording"] for r in rows],
                         ["recordings/job-000000.jsonl.gz", "recordings/job-000001.jsonl.gz"])
        self.assertEqual([{k: v for k, v in r.items() if k != "recording"} for r in rows], plain)
        import gzip
        for r in rows:
            with gzip.open(os.path.join(out, r["recording"]), "rt", encoding="utf-8") as f:
                lines = f.read().splitlines()
            self.assertEqual(json.loads(lines[0])["t"], "header")
            end = json.loads(lines[-1])
            self.assertEqual((end["t"], end["hash"]), ("end", r["hash"]))

    def test_resume_finishes_a_cut_sweep(self):
        out = os.path.join(self.tmp, "r")
        whole = polis.sweep(scenarios=[CONTRACT], grid={"max_steps": [20, 40]}, episodes=5,
                            out=os.path.join(self.tmp, "whole"))
        first = polis.sweep(scenarios=[CONTRACT], grid={"max_steps": [20, 40]}, episodes=5,
                            out=out)
        self.assertEqual(first, whole)
        # keep the header and three results, as a killed run would leave them
        path = os.path.join(out, "results.jsonl")
        with open(path) as f:
            lines = f.readlines()
        with open(path, "w") as f:
            f.writelines(lines[:4])
        with self.assertRaises(polis.SweepError) as cm:
            polis.sweep(scenarios=[CONTRACT], grid={"max_steps": [20, 40]}, episodes=5, out=out)
        self.assertIn("already holds a sweep: --resume finishes it", str(cm.exception))
        self.assertEqual(cm.exception.returncode, 1)
        resumed = polis.sweep(scenarios=[CONTRACT], grid={"max_steps": [20, 40]}, episodes=5,
                              out=out, resume=True)
        self.assertEqual(resumed, whole)
        with open(os.path.join(out, "summary.csv")) as a, \
                open(os.path.join(self.tmp, "whole", "summary.csv")) as b:
            self.assertEqual(a.read(), b.read())

    def test_errors(self):
        with self.assertRaises(polis.SweepError) as cm:
            polis.sweep(scenarios=[CONTRACT], grid={"max_steps": [10, -1]}, episodes=2,
                        out=os.path.join(self.tmp, "e"))
        self.assertIn("cell 1 (contract.json, policy random, max_steps=-1)", str(cm.exception))
        with self.assertRaises(polis.SweepError) as cm:
            polis.sweep(scenarios=[CONTRACT], grid={"max_steps": 5},
                        out=os.path.join(self.tmp, "e2"))
        self.assertIn("grid.max_steps: expected a non-empty array of values", str(cm.exception))
        with self.assertRaises(polis.PolisIOError):
            polis.sweep(scenarios=["no_such_scenario"], out=os.path.join(self.tmp, "e3"))
        with self.assertRaises(ValueError):
            polis.sweep(scenarios=[CONTRACT], out=os.path.join(self.tmp, "e4"), format="rows")

    @needs_numpy
    def test_structured_array(self):
        out = os.path.join(self.tmp, "arr")
        arr = polis.sweep(SPEC, out=out, episodes=3, format="array")
        rows = polis.read_results(out)
        self.assertEqual(arr.shape, (12,))
        names = arr.dtype.names
        self.assertEqual(names[:9], ("job", "cell", "scenario", "policy", "seed", "hash",
                                     "max_steps", "steps", "illegal_actions"))
        self.assertEqual(arr.dtype["max_steps"], np.dtype("f8"))
        self.assertEqual(arr.dtype["fairness"], np.dtype("f8"))
        self.assertEqual(arr["job"].tolist(), list(range(12)))
        self.assertEqual(arr["hash"].tolist(), [r["hash"] for r in rows])
        self.assertEqual(arr["max_steps"].tolist(), [r["params"]["max_steps"] for r in rows])
        for name in ("steps", "reward.total", "fairness"):
            want = [r["metrics"][name] for r in rows]
            got = arr[name].tolist()
            for g, w in zip(got, want):
                if w is None:
                    self.assertTrue(math.isnan(g))
                else:
                    self.assertEqual(g, w)
        summary = json.load(open(os.path.join(out, "summary.json")))
        m = summary["cells"][1]["metrics"]["reward.total"]
        self.assertAlmostEqual(m["mean"], float(arr[arr["cell"] == 1]["reward.total"].mean()),
                               places=12)


if __name__ == "__main__":
    unittest.main()
