"""polis.llm's model client against the local mock server (polis/llm/mock.py): answers,
retries on 429/5xx, timeouts, dropped connections, malformed and huge replies, the server's
reasons, the cache, the concurrency limit, embeddings, and the cost accounting."""

import json
import os
import shutil
import tempfile
import threading
import time
import unittest

from polis.llm.client import ChatClient, LLMError, count_tokens, messages_tokens
from polis.llm.cost import CostMeter, PriceTable
from polis.llm.mock import MockServer


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.srv = MockServer().start()
        self.waits = []
        self.tmp = tempfile.mkdtemp(prefix="polis_llm_")

    def tearDown(self):
        self.srv.stop()
        shutil.rmtree(self.tmp, True)

    def client(self, **kw):
        kw.setdefault("sleep", self.waits.append)
        kw.setdefault("timeout", 2.0)
        return ChatClient(self.srv.url, "mock-1", **kw)

    def test_answer_usage_and_request(self):
        c = self.client(temperature=0.3, max_tokens=50, seed=7, extra={"top_p": 0.9},
                        api_key="sk-test")
        self.srv.script("Plan: EXPLORE")
        r = c.chat([{"role": "system", "content": "be brief"},
                    {"role": "user", "content": "what now"}])
        self.assertEqual(r.text, "Plan: EXPLORE")
        self.assertFalse(r.cached)
        self.assertFalse(r.estimated)
        self.assertEqual(r.attempts, 1)
        self.assertEqual(r.completion_tokens, 2)  # the mock counts words
        self.assertGreater(r.prompt_tokens, 0)
        body = self.srv.chat_requests()[-1]
        self.assertEqual(body["model"], "mock-1")
        self.assertEqual(body["temperature"], 0.3)
        self.assertEqual(body["max_tokens"], 50)
        self.assertEqual(body["seed"], 7)
        self.assertEqual(body["top_p"], 0.9)
        self.assertEqual(body["messages"][1], {"role": "user", "content": "what now"})

    def test_retries_429_and_5xx_then_answer(self):
        c = self.client(retries=3, backoff=0.5)
        self.srv.script(429, 503, 500, "finally")
        r = c.chat("hi")
        self.assertEqual(r.text, "finally")
        self.assertEqual(r.attempts, 4)
        # exponential backoff (with up to 10% jitter), Retry-After 0 does not shorten it
        self.assertEqual(len(self.waits), 3)
        for w, base in zip(self.waits, (0.5, 1.0, 2.0)):
            self.assertGreaterEqual(w, base)
            self.assertLessEqual(w, base * 1.1)

    def test_gives_up_with_the_servers_reason(self):
        c = self.client(retries=2)
        self.srv.script({"status": 503, "message": "model is loading"},
                        {"status": 503, "message": "model is loading"},
                        {"status": 503, "message": "model is loading"}, "never reached")
        with self.assertRaises(LLMError) as cm:
            c.chat("hi")
        e = cm.exception
        self.assertEqual(e.status, 503)
        self.assertEqual(e.attempts, 3)
        self.assertIn("model is loading", e.reason)
        self.assertIn("after 3 attempts", e.reason)
        self.assertEqual(self.srv.pending(), 1)

    def test_no_retry_on_client_errors(self):
        c = self.client(retries=5)
        self.srv.script({"status": 401, "message": "invalid api key"}, "unused")
        with self.assertRaises(LLMError) as cm:
            c.chat("hi")
        self.assertEqual(cm.exception.status, 401)
        self.assertIn("invalid api key", cm.exception.reason)
        self.assertEqual(cm.exception.attempts, 1)
        self.assertEqual(self.waits, [])

    def test_timeout_is_retried_and_bounded(self):
        c = self.client(timeout=0.3, retries=1)
        self.srv.script({"sleep": 1.0, "text": "late"}, "in time")
        t = time.monotonic()
        self.assertEqual(c.chat("hi").text, "in time")
        self.assertLess(time.monotonic() - t, 1.0)
        self.srv.script({"sleep": 1.0, "text": "late"}, {"sleep": 1.0, "text": "late"})
        t = time.monotonic()
        with self.assertRaises(LLMError) as cm:
            c.chat("hi again")
        self.assertIn("timeout", cm.exception.reason)
        self.assertIsNone(cm.exception.status)
        self.assertLess(time.monotonic() - t, 1.5)  # two attempts of 0.3 s, not two of 1 s

    def test_malformed_dropped_and_huge_replies(self):
        c = self.client(retries=1, max_reply_bytes=10000)
        self.srv.script({"malformed": True}, "ok after malformed")
        self.assertEqual(c.chat("a").text, "ok after malformed")
        self.srv.script({"drop": True}, "ok after drop")
        self.assertEqual(c.chat("b").text, "ok after drop")
        self.srv.script({"huge": 50000}, {"huge": 50000})
        with self.assertRaises(LLMError) as cm:
            c.chat("c")
        self.assertIn("larger than 10000 bytes", cm.exception.reason)
        self.srv.script({"malformed": True}, {"malformed": True})
        with self.assertRaises(LLMError) as cm:
            c.chat("d")
        self.assertIn("not JSON", cm.exception.reason)

    def test_empty_answer_and_missing_usage(self):
        c = self.client()
        self.srv.script({"empty": True}, {"text": "two words", "usage": False})
        r = c.chat("x")
        self.assertEqual(r.text, "")
        r = c.chat([{"role": "user", "content": "count these tokens please"}])
        self.assertTrue(r.estimated)
        self.assertEqual(r.completion_tokens, count_tokens("two words"))
        self.assertEqual(r.prompt_tokens,
                         messages_tokens([{"content": "count these tokens please"}]))

    def test_max_failures_in_a_row(self):
        from polis.llm.client import ModelUnavailable
        c = self.client(retries=0, max_failures=3)
        self.srv.script(500, 500, "fine", 500, 500)
        for _ in range(2):
            with self.assertRaises(LLMError):
                c.chat("x")
        self.assertEqual(c.chat("x").text, "fine")     # a success resets the count
        for _ in range(2):
            with self.assertRaises(LLMError) as cm:
                c.chat("x")
            self.assertNotIsInstance(cm.exception, ModelUnavailable)
        self.srv.script(500)
        with self.assertRaises(ModelUnavailable) as cm:
            c.chat("x")
        self.assertIn("3 calls in a row failed (the last: HTTP 500", cm.exception.reason)
        # chat_many lets it through instead of returning it
        self.srv.script(500, 500)
        with self.assertRaises(ModelUnavailable):
            c.chat_many([("a", {}), ("b", {})])

    def test_unreachable_server(self):
        port = self.srv.httpd.server_address[1]
        self.srv.stop()
        c = ChatClient("http://127.0.0.1:%d/v1" % port, "m", retries=1, timeout=1,
                       sleep=self.waits.append)
        with self.assertRaises(LLMError) as cm:
            c.chat("hi")
        self.assertIn("cannot reach", cm.exception.reason)
        self.srv = MockServer().start()  # for tearDown

    def test_cache_makes_a_rerun_free_and_identical(self):
        meter = CostMeter({"mock-1": {"prompt": 1.0, "completion": 2.0}})
        c = self.client(cache_dir=os.path.join(self.tmp, "cache"), meter=meter)
        first = [c.chat("question %d" % i, agent="a").text for i in range(3)]
        n = len(self.srv.chat_requests())
        self.assertEqual(n, 3)
        # another client (a rerun) with the same cache: no request, same answers
        meter2 = CostMeter({"mock-1": {"prompt": 1.0, "completion": 2.0}})
        c2 = self.client(cache_dir=os.path.join(self.tmp, "cache"), meter=meter2)
        again = [c2.chat("question %d" % i, agent="a") for i in range(3)]
        self.assertEqual([r.text for r in again], first)
        self.assertTrue(all(r.cached and r.attempts == 0 for r in again))
        self.assertEqual(len(self.srv.chat_requests()), n)
        t1, t2 = meter.totals()["a"], meter2.totals()["a"]
        self.assertGreater(t1["cost"], 0)
        self.assertEqual(t2["cost"], 0.0)
        self.assertEqual(t2["cached"], 3)
        self.assertEqual(t2["prompt_tokens"], t1["prompt_tokens"])
        # any change of the request is another key
        c2.chat("question 0", temperature=0.9)
        self.assertEqual(len(self.srv.chat_requests()), n + 1)
        # failures are not cached
        self.srv.script({"status": 400, "message": "bad"})
        with self.assertRaises(LLMError):
            c2.chat("question 9")
        self.assertEqual(c2.chat("question 9").text, self.srv.responder(
            self.srv.chat_requests()[-1]))

    def test_concurrency_limit(self):
        active, peak, lock = [0], [0], threading.Lock()

        def slow(body):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.15)
            with lock:
                active[0] -= 1
            return "done " + body["messages"][0]["content"]
        self.srv.responder = slow
        c = self.client(concurrency=3)
        t = time.monotonic()
        out = c.chat_many([("agent %d" % i, {"agent": "agent_%d" % i}) for i in range(7)])
        dt = time.monotonic() - t
        self.assertEqual([o.text for o in out], ["done agent %d" % i for i in range(7)])
        self.assertEqual(peak[0], 3)
        self.assertGreaterEqual(dt, 0.15 * 3 * 0.9)  # ceil(7 / 3) rounds

    def test_chat_many_returns_errors_in_place(self):
        c = self.client(retries=0)
        # requests of one batch reach the server in any order: fail one by its content
        self.srv.responder = lambda b: "fine"
        self.srv.script()
        out = c.chat_many([("a", {}), ("b", {})])
        self.assertEqual([o.text for o in out], ["fine", "fine"])
        c2 = ChatClient("http://127.0.0.1:9/v1", "m", retries=0, timeout=0.5)
        out = c2.chat_many([("a", {}), ("b", {})])
        self.assertTrue(all(isinstance(o, LLMError) for o in out))

    def test_embeddings(self):
        meter = CostMeter({"emb": {"prompt": 0.1}})
        c = self.client(embed_model="emb", meter=meter,
                        cache_dir=os.path.join(self.tmp, "c2"))
        v = c.embed(["apple tree grows", "apple tree", "zap the bot"], agent="a")
        self.assertEqual(len(v), 3)
        self.assertEqual(len(v[0]), 64)
        dot = lambda x, y: sum(p * q for p, q in zip(x, y))  # noqa: E731
        self.assertGreater(dot(v[0], v[1]), dot(v[0], v[2]))
        self.assertEqual(self.srv.requests[-1][1]["model"], "emb")
        self.assertEqual(c.embed(["apple tree grows", "apple tree", "zap the bot"]), v)
        self.assertEqual(len([p for p, _ in self.srv.requests if p.endswith("/embeddings")]),
                         1)
        self.assertEqual(meter.totals()["a"]["embedding_calls"], 1)

    def test_from_env_and_bad_config(self):
        old = {k: os.environ.get(k) for k in ("POLIS_LLM_BASE_URL", "POLIS_LLM_MODEL",
                                              "POLIS_LLM_API_KEY", "OPENAI_API_KEY")}
        try:
            os.environ["POLIS_LLM_BASE_URL"] = self.srv.url
            os.environ["POLIS_LLM_MODEL"] = "from-env"
            os.environ["POLIS_LLM_API_KEY"] = "k"
            c = ChatClient.from_env()
            self.assertEqual((c.base_url, c.model, c.api_key), (self.srv.url, "from-env", "k"))
            self.assertEqual(ChatClient.from_env(model="flag").model, "flag")
            del os.environ["POLIS_LLM_MODEL"]
            with self.assertRaisesRegex(ValueError, "no model"):
                ChatClient.from_env()
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        with self.assertRaisesRegex(ValueError, "not http"):
            ChatClient("ftp://x", "m")
        with self.assertRaisesRegex(ValueError, "timeout"):
            ChatClient(self.srv.url, "m", timeout=0)


class CostTest(unittest.TestCase):
    def test_prices(self):
        p = PriceTable({"big": {"prompt": 10, "completion": 30}, "*": {"prompt": 1}})
        self.assertAlmostEqual(p.cost("big", 1000, 100), 0.013)
        self.assertAlmostEqual(p.cost("other", 1000, 100), 0.001)
        self.assertIsNone(PriceTable({}).cost("x", 1, 1))
        for bad, msg in (({"m": {"prompt": -1}}, "prompt: expected a number >= 0"),
                         ({"m": {"prmpt": 1}}, "unknown member prmpt"),
                         ({"m": 3}, "expected {")):
            with self.assertRaisesRegex(ValueError, msg):
                PriceTable(bad)
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "p.json")
            with open(path, "w") as f:
                f.write("{nope")
            with self.assertRaisesRegex(ValueError, "p.json: not JSON"):
                PriceTable.load(path)
            with open(path, "w") as f:
                json.dump({"m": {"completion": "x"}}, f)
            with self.assertRaisesRegex(ValueError, r"p.json: prices\['m'\].completion"):
                PriceTable.load(path)
        finally:
            shutil.rmtree(d)

    def test_unpriced_model_gives_null_cost(self):
        class C:  # a Completion's accounting fields
            cached, attempts, estimated, latency = False, 1, False, 0.5
            prompt_tokens, completion_tokens = 100, 10
        m = CostMeter({"known": {"prompt": 1, "completion": 1}})
        m.add("a", C(), "known")
        m.add("b", C(), "unknown")
        t = m.totals()
        self.assertAlmostEqual(t["a"]["cost"], 110 / 1e6)
        self.assertIsNone(t["b"]["cost"])
        self.assertIsNone(t["total"]["cost"])
        self.assertEqual(t["total"]["prompt_tokens"], 200)
        self.assertEqual(t["total"]["calls"], 2)

    def test_count_tokens(self):
        self.assertEqual(count_tokens(""), 0)
        self.assertEqual(count_tokens("apple"), 2)          # 5 letters: 2 tokens
        self.assertEqual(count_tokens("[14, 20]"), 7)       # [ 1 4 , 2 0 ]
        self.assertEqual(count_tokens("go to it"), 3)


if __name__ == "__main__":
    unittest.main()
