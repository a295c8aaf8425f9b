"""polis.protocol against a real `polis serve` ($POLIS_BIN, set by CTest, else the build
tree or PATH): describe with action docs, episodes to their end with the metrics `polis
eval` reports, error replies as ProtocolError, TCP, and finding the binary."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from polis import protocol
from polis.protocol import Client, ProtocolError, find_polis
from common import GATHER, ROOT

CONTRACT = os.path.join(ROOT, "rulesets", "contract", "contract.json")


class TestClient(unittest.TestCase):
    def test_describe_sends_every_action_doc(self):
        with Client.spawn(GATHER) as c:
            info = c.describe()
        doc = json.loads(subprocess.run([find_polis(), "describe", GATHER, "--json"],
                                        check=True, capture_output=True, text=True).stdout)
        want = {a["name"]: a["doc"] for a in doc["actions"]}
        self.assertEqual(info["action_docs"], want)
        self.assertEqual(list(info["action_docs"]), info["actions"])
        self.assertEqual(info["action_docs"]["move_north"], "move to y-1")

    def test_episode_end_reports_evals_metrics(self):
        # Every agent does noop (left out of "actions") until the end; `polis eval --policy
        # noop` plays the same episode and must report the same figures.
        sets = ["max_steps=25"]
        with Client.spawn(CONTRACT, sets=sets) as c:
            reply = c.reset(seed=4)
            self.assertNotIn("metrics", reply)
            while not reply["done"]:
                reply = c.step()
                if not reply["done"]:
                    self.assertNotIn("metrics", reply)
            served = reply["metrics"]
        out = subprocess.run([find_polis(), "eval", CONTRACT, "--policy", "noop", "--episodes",
                              "1", "--seed", "4", "--set", sets[0], "--json", "-"],
                             check=True, capture_output=True, text=True).stdout
        evald = json.loads(out)["per_episode"][0]["metrics"]
        self.assertEqual(served, evald)
        self.assertEqual(served["steps"], 25)
        self.assertIn("total_reward_normalised", served)
        self.assertGreater(served["oracle"], 0)

    def test_no_metrics(self):
        with Client.spawn(GATHER, metrics=False, sets=["max_steps=2"]) as c:
            self.assertNotIn("metrics", c.describe()["formats"])
            c.reset()
            c.step()
            last = c.step()
            self.assertTrue(last["done"])
            self.assertNotIn("metrics", last)

    def test_errors_raise_with_code_and_agent(self):
        with Client.spawn(GATHER) as c:
            with self.assertRaises(ProtocolError) as cm:
                c.step()
            self.assertEqual(cm.exception.code, "no_episode")
            c.reset(seed=1)
            with self.assertRaises(ProtocolError) as cm:
                c.step({"agent_1": "dance wildly"})
            self.assertEqual(cm.exception.code, "bad_action")
            self.assertEqual(cm.exception.agent, "agent_1")
            self.assertIn("dance wildly", cm.exception.message)
            # request returns the error reply itself
            raw = c.request("step", actions={"nobody": 1})
            self.assertFalse(raw["ok"])
            self.assertEqual(raw["error"]["code"], "unknown_agent")
            self.assertEqual(c.step({"agent_0": "move north"})["tick"], 1)
        self.assertTrue(c.closed)
        c.close()  # idempotent
        with self.assertRaises(ProtocolError) as cm:
            c.describe()
        self.assertEqual(cm.exception.code, "closed")

    def test_a_server_that_dies_is_reported(self):
        c = Client.spawn(os.path.join(ROOT, "no", "such.json"), stderr=subprocess.DEVNULL)
        with self.assertRaises(ProtocolError) as cm:
            c.describe()
        self.assertEqual(cm.exception.code, "disconnected")
        self.assertIn("exit status 1", cm.exception.message)
        c.close()

    def test_tcp(self):
        proc = subprocess.Popen([find_polis(), "serve", GATHER, "--tcp", "127.0.0.1:0"],
                                stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stderr.readline()
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            self.assertIsNotNone(m, line)
            with Client.connect("127.0.0.1", int(m.group(1)), timeout=30) as c:
                self.assertEqual(c.describe()["scenario"], "gather")
                reply = c.reset(seed=3)
                self.assertEqual(sorted(reply["agents"]), ["agent_0", "agent_1", "agent_2",
                                                           "agent_3"])
                self.assertEqual(c.step({"agent_0": 1})["tick"], 1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            proc.stderr.close()


class TestLLMExample(unittest.TestCase):
    EXAMPLE = os.path.join(ROOT, "examples", "llm_agent.py")

    def test_every_option_it_names_exists(self):
        with open(self.EXAMPLE) as f:
            named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", f.read()))
        self.assertIn("--llm", named)
        own = subprocess.run([sys.executable, self.EXAMPLE, "--help"], check=True,
                             capture_output=True, text=True).stdout
        serve = subprocess.run([find_polis(), "help", "serve"], check=True,
                               capture_output=True, text=True).stdout
        for opt in sorted(named):
            self.assertTrue(re.search(re.escape(opt) + r"\b", own + serve),
                            f"{opt} is named in llm_agent.py but is neither its option nor "
                            f"polis serve's")

    def test_it_says_how_when_polis_is_missing(self):
        env = dict(os.environ, PATH="/nonexistent", POLIS_BIN="/nonexistent/polis")
        r = subprocess.run([sys.executable, self.EXAMPLE, GATHER, "--polis", "/no/polis"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("polis binary '/no/polis' not found", r.stderr)

    def test_it_plays_and_prints_the_metrics(self):
        r = subprocess.run([sys.executable, self.EXAMPLE, GATHER, "--polis", find_polis(),
                            "--steps", "200", "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("metrics: steps 200, reward.mean ", r.stdout)


class TestFindPolis(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("POLIS_BIN", "PATH")}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_explicit_env_and_near(self):
        exe = find_polis()
        self.assertEqual(find_polis(exe), exe)
        with self.assertRaises(FileNotFoundError) as cm:
            find_polis("/no/such/polis")
        self.assertIn("/no/such/polis", str(cm.exception))
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "build"))
            fake = os.path.join(d, "build", "polis")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(fake, 0o755)
            os.environ.pop("POLIS_BIN", None)
            self.assertEqual(find_polis(near=[d]), fake)  # DIR/build/polis
            self.assertEqual(find_polis(near=[os.path.join(d, "examples")]), fake)  # ../build
            os.environ["POLIS_BIN"] = exe
            self.assertEqual(find_polis(near=[d]), exe)  # $POLIS_BIN first

    def test_not_found_says_how(self):
        os.environ.pop("POLIS_BIN", None)
        os.environ["PATH"] = ""
        saved = protocol._HERE
        protocol._HERE = "/nonexistent/sdk/python/polis"  # no build tree beside the SDK
        try:
            with self.assertRaises(FileNotFoundError) as cm:
                find_polis(near=["/nonexistent/examples"])
        finally:
            protocol._HERE = saved
        msg = str(cm.exception)
        for part in ("/nonexistent/examples/polis", "/nonexistent/build/polis", "PATH",
                     "--polis PATH", "POLIS_BIN", "cmake --build build"):
            self.assertIn(part, msg)


if __name__ == "__main__":
    unittest.main()
