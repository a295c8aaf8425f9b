"""polis.llm's agents and runner against the mock server: memories, the generative agent's
modules and its bounded re-asks and fallbacks, Commons episodes of the study's protocol
(recorded, replayed with `polis replay --verify` without a model, rerun from the cache for
free), LLM-C on Contract, hostile answers in whole episodes, and bad scenario files."""

import gzip
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stdout, redirect_stderr

from common import POLIS_CLI, ROOT

from polis.llm import cli
from polis.llm.agent import (Command, GenerativeAgent, Prompts, get_key, parse_json_block,
                             split_view)
from polis.llm.client import ChatClient
from polis.llm.cost import CostMeter
from polis.llm.memory import LongTermMemory, SpatialMemory
from polis.llm.mock import MockServer, embed
from polis.llm.runner import SpecError, load_spec, run

COMMONS_LLM = os.path.join(ROOT, "rulesets", "commons", "llm")
LLMC = os.path.join(ROOT, "sdk", "python", "polis", "llm", "scenarios")

VIEW = """You are agent Laura. Step 12. Positions are [row, column]; [0, 0] is the top-left corner of the 9 x 13 map (rows x columns).
You are at position [6, 6], facing north. Your zapping beam is ready.
Current observations (nearest first):
Observed agent Juan at position [5, 6].
Observed an apple at position [4, 6]. This apple belongs to tree 1.
Observed tree 1 at position [3, 6]. This tree has 9 apples remaining and 0 grass for apples growing on the observed map. The tree might have more apples and grass on the global map.
Changes since the last step:
Observed that agent Juan took an apple from position [5, 6].
You took 1 apple in the last step.
Legal actions: noop, forward, backward.
"""

CMDS = [Command("GOTO", "GOTO <row> <column>", "walk there"),
        Command("STAY", "STAY [<ticks>]", "stay put"),
        Command("IMMOBILIZE", "IMMOBILIZE <player> [<row> <column>]", "zap a player")]


def jblock(obj):
    return "```json\n" + json.dumps(obj) + "\n```"


def read_recording(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def msgs(lines, kind=None):
    out = []
    for ln in lines:
        for m in ln.get("msgs", []):
            if kind is None or m["kind"] == kind:
                out.append((ln["tick"], m))
    return out


class PartsTest(unittest.TestCase):
    def test_parse_json_block(self):
        self.assertEqual(parse_json_block('x ```json\n{"a": 1}\n``` y'), {"a": 1})
        self.assertEqual(parse_json_block('Sure! {"a": [1, 2,], }'), {"a": [1, 2]})
        self.assertEqual(parse_json_block('{"Answer": true \\\\ my comment\n}'), {"Answer": True})
        for bad, why in (("", "empty"), ("no json here", "no JSON object"),
                         ("{oops}", "does not parse"), ("[1, 2]", "no JSON object")):
            with self.assertRaisesRegex(ValueError, why):
                parse_json_block(bad)
        self.assertEqual(get_key({"Final analysis": 3}, "final_analysis"), 3)

    def test_split_view_and_spatial_memory(self):
        state, obs, changes = split_view(VIEW)
        self.assertEqual(len(obs), 3)
        self.assertTrue(obs[0].startswith("Observed agent Juan"))
        self.assertEqual(changes, ["Observed that agent Juan took an apple from position "
                                   "[5, 6]."])
        self.assertIn("You took 1 apple in the last step.", state)
        self.assertFalse(any("Legal actions" in s for s in state + obs))
        sp = SpatialMemory()
        sp.update(VIEW)
        self.assertEqual(sp.position, (6, 6))
        self.assertEqual(sp.facing, "north")
        self.assertEqual((sp.rows, sp.cols), (9, 13))
        self.assertEqual(sp.landmarks, {"tree 1": (3, 6)})
        self.assertIn("of the 9 x 13 map", sp.explored())

    def test_observations_nearest_first(self):
        from polis.llm.agent import by_distance
        lines = ["Observed agent Juan at position [1, 1].",
                 "Observed an apple at position [6, 7].",
                 "Observed tree 1 at position [6, 5].",
                 "Observed something far away."]
        self.assertEqual(by_distance(lines, (6, 6)), [lines[1], lines[2], lines[0], lines[3]])
        self.assertEqual(by_distance(lines, None), lines)
        a = GenerativeAgent("Laura", None, CMDS, attention_bandwidth=2)
        obs, _ = a.perceive(VIEW)  # Laura at [6, 6]: the apple [4, 6] after Juan [5, 6]
        self.assertEqual([o.split(" at ")[0] for o in obs],
                         ["Observed agent Juan", "Observed an apple"])
        far = VIEW.replace("Observed agent Juan at position [5, 6].",
                           "Observed agent Juan at position [1, 1].")
        obs, _ = a.perceive(far)   # now the apple and the tree are nearer than Juan
        self.assertEqual([o.split(" at ")[0] for o in obs],
                         ["Observed an apple", "Observed tree 1"])

    def test_retrieval_lexical_recency_importance(self):
        m = LongTermMemory()
        m.add("Juan took an apple from tree 2", "perception", 0)
        m.add("the wall is grey", "perception", 1)
        m.add("Pedro zapped me near tree 5", "perception", 2)
        m.add("nothing happened", "perception", 3)
        best = m.retrieve("who zapped me?", now=4, k=1)
        self.assertEqual(best[0].text, "Pedro zapped me near tree 5")
        # recency decides between equally similar records, and retrieval refreshes it
        m2 = LongTermMemory(weights=(1, 1, 0), decay=0.5)
        m2.add("apple at tree 1", "perception", 0)
        m2.add("apple at tree 1", "perception", 10)
        self.assertEqual(m2.retrieve("apple", now=10, k=1)[0].id, 1)
        # importance decides when the rest is equal
        m3 = LongTermMemory(weights=(0, 0, 1))
        m3.add("a", "perception", 0, importance=2)
        m3.add("b", "perception", 0, importance=9)
        self.assertEqual(m3.retrieve("x", now=0, k=1)[0].text, "b")
        self.assertEqual([r.text for r in m3.retrieve("x", now=0, k=5, kinds={"plan"})], [])

    def test_retrieval_by_embeddings(self):
        calls = []

        def embedder(texts):
            calls.append(list(texts))
            return [embed(t) for t in texts]
        m = LongTermMemory(embedder, weights=(1, 0, 0))
        for t in ("the red apple tree", "a grey wall", "bots zap players"):
            m.add(t, "perception", 0)
        self.assertEqual(m.retrieve("apple tree", now=0, k=1)[0].text, "the red apple tree")
        self.assertEqual(len(calls), 4)  # three records and the query

    def test_failing_embeddings_fall_back_to_lexical(self):
        from polis.llm.client import LLMError
        calls = []

        def embedder(texts):
            calls.append(texts)
            if len(calls) > 2:
                raise LLMError("HTTP 503 from /embeddings: down (after 4 attempts)", 503)
            return [embed(t) for t in texts]
        m = LongTermMemory(embedder, weights=(1, 0, 0))
        m.add("the red apple tree", "perception", 0)
        m.add("a grey wall", "perception", 0)
        m.add("bots zap players", "perception", 0)       # the endpoint fails here
        self.assertIn("HTTP 503", m.fell_back)
        self.assertEqual(m.retrieve("zap players", now=0, k=1)[0].text, "bots zap players")
        self.assertEqual(len(calls), 3)                  # not asked again

    def test_prompts_override_and_missing_value(self):
        d = tempfile.mkdtemp()
        try:
            with open(os.path.join(d, "react.txt"), "w") as f:
                f.write("custom $name $nope")
            p = Prompts("generative", d)
            with self.assertRaisesRegex(ValueError, r"react.txt: no value for \$nope"):
                p.render("react", name="x")
            self.assertEqual(Prompts("generative", d).render("react", name="L", nope="y"),
                             "custom L y")
            with open(Prompts("generative", d).path("plan")) as f:  # not overridden
                self.assertIn('"Goals"', f.read())
        finally:
            shutil.rmtree(d)


class GenerativeAgentTest(unittest.TestCase):
    def setUp(self):
        self.srv = MockServer().start()
        self.meter = CostMeter()
        self.llm = ChatClient(self.srv.url, "mock", retries=1, timeout=2, meter=self.meter,
                              sleep=lambda s: None)

    def tearDown(self):
        self.srv.stop()

    def agent(self, **kw):
        return GenerativeAgent("Laura", self.llm, CMDS, world="a grid world", **kw)

    def test_one_turn_and_reflection_every_n_observations(self):
        a = self.agent(reflect_every=5, attention_bandwidth=2)
        cmd = a.decide({"text": VIEW}, 12)
        self.assertIn(cmd.split()[0], ("GOTO", "STAY", "IMMOBILIZE"))
        mods = [e["module"] for k, e in a.drain() if k == "llm"]
        self.assertEqual(mods, ["plan", "act"])  # no plan yet: plan, then act
        self.assertEqual(len(a.pending_obs), 2)   # attention bandwidth 2
        a.decide({"text": VIEW}, 13)
        a.decide({"text": VIEW}, 14)              # 6 observations >= 5: reflect
        mods = [e["module"] for k, e in a.drain() if k == "llm"]
        self.assertIn("reflect_questions", mods)
        self.assertIn("reflect_insights", mods)
        self.assertEqual(len(a.reflections), 3)
        self.assertEqual(a.pending_obs, [])
        self.assertEqual(len([r for r in a.ltm.records if r.kind == "reflection"]), 3)
        # the insights prompt carried the memories retrieved for each question
        ins = [b for b in self.srv.chat_requests()
               if '"Insight_1"' in b["messages"][0]["content"]][0]["messages"][0]["content"]
        self.assertIn("Group 1 (Where are the apples?)", ins)
        self.assertEqual(self.meter.totals()["Laura"]["calls"],
                         len(self.srv.chat_requests()))

    def test_bad_answers_are_reasked_with_the_reason_then_fallback(self):
        a = self.agent(max_reasks=2)
        self.srv.script(jblock({"Reasoning": "r", "Goals": "g", "Plan": "p"}),
                        "no json at all",
                        jblock({"Answer": "FLY away"}),
                        jblock({"Answer": "GOTO 4 6"}))
        self.assertEqual(a.decide({"text": VIEW}, 1), "GOTO 4 6")
        acts = [e for k, e in a.drain() if k == "llm" and e["module"] == "act"]
        self.assertEqual([e["attempt"] for e in acts], [0, 1, 2])
        self.assertIn("no JSON object", acts[0]["error"])
        self.assertIn("'FLY away' is not one of the valid actions", acts[1]["error"])
        self.assertIn("could not be used: 'FLY away' is not one of the valid actions",
                      acts[2]["prompt"])
        # a refusal by the game: re-asked with the game's reason
        self.srv.script(jblock({"Answer": "STAY 3"}))
        self.assertEqual(a.reask("position [0, 0] is a wall"), "STAY 3")
        last = self.srv.chat_requests()[-1]["messages"][0]["content"]
        self.assertIn("'GOTO 4 6' was refused by the game: position [0, 0] is a wall", last)
        a.drain()
        # nothing usable: the fallback, noted
        self.srv.script({"empty": True}, {"malformed": True}, {"malformed": True}, 500, 500,
                        "{}")
        self.assertEqual(a.act(None), "STAY")
        log = a.drain()
        self.assertEqual([e["type"] for k, e in log if k == "note"], ["fallback"])
        errs = [e.get("error") for k, e in log if k == "llm"]
        self.assertIn("the answer is empty", errs[0])
        self.assertIn("not JSON", errs[1])
        self.assertIn("HTTP 500", errs[2])

    def test_react_and_plan_fallbacks(self):
        a = self.agent(max_reasks=0)
        self.srv.script(jblock({"Plan": ""}), jblock({"Answer": "STAY"}))
        a.decide({"text": VIEW}, 1)
        self.assertEqual(a.stm["plan"], "Gather resources and avoid harm.")
        self.srv.script(jblock({"Answer": "maybe"}), jblock({"Answer": "STAY"}))
        a.decide({"text": VIEW}, 2)
        notes = [e["text"] for k, e in a.drain() if k == "note" and e["type"] == "fallback"]
        self.assertEqual(len(notes), 2)
        self.assertIn("react: no usable answer", notes[1])


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.srv = MockServer().start()
        self.tmp = tempfile.mkdtemp(prefix="polis_llm_run_")

    def tearDown(self):
        self.srv.stop()
        shutil.rmtree(self.tmp, True)

    def spec(self, base, **changes):
        with open(base) as f:
            s = json.load(f)
        s.update(changes)
        for k in ("scenario", "world"):
            v = s.get(k)
            if isinstance(v, str) and (v.startswith("../") or v.startswith("@")):
                path = os.path.join(os.path.dirname(base), v.lstrip("@"))
                s[k] = ("@" if v.startswith("@") else "") + os.path.abspath(path)
        path = os.path.join(self.tmp, s["name"] + ".json")
        with open(path, "w") as f:
            json.dump(s, f)
        return path

    def client(self, **kw):
        kw.setdefault("sleep", lambda s: None)
        c = ChatClient(self.srv.url, "mock", meter=CostMeter({"mock": {"prompt": 1.0,
                                                                       "completion": 2.0}}),
                       **kw)
        return c

    def verify(self, rec):
        p = subprocess.run([POLIS_CLI, "replay", rec, "--verify"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertIn("replay matches", p.stdout)

    def test_commons_single_tree_recorded_replayed_and_rerun_free(self):
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_single_tree_none.json"), rounds=6,
                         agent={"reflect_every": 10})
        out = os.path.join(self.tmp, "out")
        cache = os.path.join(self.tmp, "cache")
        lines = run([spec], self.client(cache_dir=cache), out, episodes=2, log=lambda s: None)
        self.assertEqual(len(lines), 2)
        ln = lines[0]
        self.assertEqual((ln["rounds"], ln["ended"], ln["seed"]), (6, "rounds", 1))
        self.assertEqual(lines[1]["seed"], 2)
        self.assertEqual(ln["agents"], ["Laura", "Juan", "Pedro"])
        self.assertIn("return.focal_per_capita", ln["metrics"])
        self.assertIn("welfare.apples_mean", ln["metrics"])
        self.assertIn("welfare.focal.last_apple_near", ln["metrics"])  # study_metrics on
        self.assertEqual(sum(ln["returns"].values()) / 3, ln["metrics"]["return.focal_per_capita"])
        self.assertEqual({p["agent"] for p in ln["per_agent"]}, {"Laura", "Juan", "Pedro"})
        with open(os.path.join(out, "results.jsonl")) as f:
            self.assertEqual([json.loads(x) for x in f], lines)
        rec = ln["recording"]
        self.verify(rec)
        rl = read_recording(rec)
        calls = [json.loads(m["text"]) for _, m in msgs(rl, "llm")]
        mods = {c["module"] for c in calls}
        self.assertTrue({"plan", "act", "react", "reflect_questions",
                         "reflect_insights"} <= mods, mods)
        notes = {json.loads(m["text"])["type"] for _, m in msgs(rl, "note")}
        self.assertTrue({"memory", "plan", "reflection"} <= notes, notes)
        # every turn is in the recording (6 rounds of 3 agents), even one that took no tick
        kinds = [json.loads(m["text"])["type"] for _, m in msgs(rl, "note")]
        self.assertEqual(kinds.count("memory"), 18)
        plays = msgs(rl, "plan")
        self.assertGreaterEqual(len(plays), 6 * 3)
        # the sequential protocol: one LLM agent acts per tick, the others noop
        for step in rl:
            if step["t"] == "step":
                self.assertLessEqual(sum(1 for x in step["actions"] if x), 1, step["tick"])
        # costs: the results' totals are the recording's calls
        costs = ln["costs"]
        self.assertEqual(costs["total"]["calls"], len(calls))
        self.assertEqual(costs["total"]["prompt_tokens"],
                         sum(c["usage"]["prompt_tokens"] for c in calls))
        self.assertAlmostEqual(costs["total"]["cost"], sum(
            c["usage"]["prompt_tokens"] + 2 * c["usage"]["completion_tokens"]
            for c in calls) / 1e6)
        self.assertEqual(sum(costs[a]["calls"] for a in ("Laura", "Juan", "Pedro")),
                         len(calls))
        self.assertEqual(rl[-1]["t"], "end")
        self.assertIn("welfare", rl[-1]["metrics"])
        # the end line's "reported": the episode's costs in polis eval's names, per agent too
        rep = rl[-1]["metrics"]["reported"]
        for a, row in [("", costs["total"])] + [("." + a, costs[a]) for a in ln["agents"]]:
            self.assertEqual((rep["llm.calls" + a], rep["llm.prompt_tokens" + a],
                              rep["llm.completion_tokens" + a], rep["llm.cost" + a]),
                             (row["calls"], row["prompt_tokens"], row["completion_tokens"],
                              row["cost"]), a)
        self.assertEqual(rep["llm.fallbacks"], ln["fallbacks"])
        # a rerun from the cache: no request, the same episode, free
        n = len(self.srv.chat_requests())
        out2 = os.path.join(self.tmp, "out2")
        lines2 = run([spec], self.client(cache_dir=cache), out2, episodes=1,
                     log=lambda s: None)
        self.assertEqual(len(self.srv.chat_requests()), n)
        self.assertEqual(lines2[0]["costs"]["total"]["cached"],
                         lines2[0]["costs"]["total"]["calls"])
        self.assertEqual(lines2[0]["costs"]["total"]["cost"], 0.0)
        rl2 = read_recording(lines2[0]["recording"])

        def strip(lines):
            out = []
            for x in lines:
                x = dict(x)
                if x["t"] == "header":
                    continue
                ms = []
                for m in x.pop("msgs", []):
                    t = json.loads(m["text"]) if m["kind"] in ("llm",) else m["text"]
                    if isinstance(t, dict):
                        t.pop("usage", None)
                    ms.append((m["agent"], m["kind"], t))
                x["msgs"] = ms
                if x["t"] == "end":  # what the calls cost differs: cached now
                    x["metrics"] = dict(x["metrics"])
                    x["metrics"].pop("reported")
                out.append(x)
            return out
        self.assertEqual(strip(rl2), strip(rl))
        rep2 = rl2[-1]["metrics"]["reported"]
        self.assertEqual((rep2["llm.cached"], rep2["llm.cost"], rep2["llm.latency_s"]),
                         (rep["llm.calls"], 0.0, 0.0))

    def test_hostile_answers_in_a_whole_episode(self):
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_single_tree_none.json"), rounds=2)
        # Laura's first turn: plan, then an act refused by the game (a wall), a malformed
        # reply, a 429, an illegal command, an empty answer... then the mock plays
        self.srv.script(jblock({"Reasoning": "r", "Goals": "g", "Plan": "p"}),
                        jblock({"Answer": "GOTO 0 0"}),             # a wall: refused
                        {"malformed": True}, 429,                    # retried by the client
                        jblock({"Answer": "DANCE 3"}),               # not a valid action
                        {"empty": True},                             # empty: re-asked
                        {"huge": 100000})                            # not JSON: re-asked
        out = os.path.join(self.tmp, "out")
        lines = run([spec], self.client(retries=2), out, log=lambda s: None)
        ln = lines[0]
        self.assertGreaterEqual(ln["refusals"], 1)
        self.assertGreaterEqual(ln["fallbacks"], 1)
        rec = ln["recording"]
        self.verify(rec)
        rl = read_recording(rec)
        notes = [json.loads(m["text"]) for _, m in msgs(rl, "note")]
        refused = [n for n in notes if n["type"] == "refused"]
        self.assertIn("GOTO 0 0: plan_start: agent 0 (Laura): GOTO: commons: position [0, 0] is a "
                      "wall",
                      refused[0]["text"])
        calls = [json.loads(m["text"]) for _, m in msgs(rl, "llm")]
        errors = [c.get("error") for c in calls if c.get("error")]
        self.assertTrue(any("not one of the valid actions" in e for e in errors), errors)
        self.assertTrue(any("empty" in e for e in errors), errors)
        # Laura played the fallback (STAY) in her first turn, recorded as her plan
        first = [m for _, m in msgs(rl, "plan") if m["agent"] == 0][0]
        self.assertEqual(first["text"], "STAY")
        self.assertEqual(ln["costs"]["Laura"]["attempts"] - ln["costs"]["Laura"]["calls"], 2)

    def test_a_dead_model_does_not_hang_the_episode(self):
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_single_tree_none.json"), rounds=1,
                         agent={"max_reasks": 1})
        self.srv.script(*([{"sleep": 0.6, "text": "late"}] * 40))
        out = os.path.join(self.tmp, "out")
        ln = run([spec], self.client(timeout=0.2, retries=0), out, log=lambda s: None)[0]
        self.assertEqual(ln["rounds"], 1)
        self.assertEqual(ln["costs"]["total"]["calls"], 0)
        self.assertGreaterEqual(ln["costs"]["total"]["errors"], 6)
        plays = [m["text"] for _, m in msgs(read_recording(ln["recording"]), "plan")]
        self.assertEqual(plays, ["STAY", "STAY", "STAY"])
        self.verify(ln["recording"])

    def test_memory_by_embeddings_in_a_run(self):
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_single_tree_none.json"), rounds=4,
                         agent={"reflect_every": 10})
        c = self.client(embed_model="mock-embed")
        c.embed_enabled = True
        ln = run([spec], c, os.path.join(self.tmp, "out"), log=lambda s: None)[0]
        emb = [b for p, b in self.srv.requests if p.endswith("/embeddings")]
        self.assertTrue(emb)
        self.assertTrue(all(b["model"] == "mock-embed" for b in emb))
        self.assertEqual(ln["costs"]["total"]["embedding_calls"], len(emb))
        # every memory is embedded once, and each reflection question is a query
        rl = read_recording(ln["recording"])
        notes = [json.loads(m["text"])["type"] for _, m in msgs(rl, "note")]
        questions = sum(len(json.loads(m["text"]).get("questions", []))
                        for _, m in msgs(rl, "note") if json.loads(m["text"])["type"] ==
                        "reflection")
        mems = notes.count("memory") + notes.count("plan") + 3 * notes.count("reflection")
        self.assertEqual(len(emb), mems + questions)
        self.verify(ln["recording"])

    def test_llmc_contract(self):
        spec = self.spec(os.path.join(LLMC, "llmc_contract_easy.json"),
                         overrides={"max_steps": 40})
        out = os.path.join(self.tmp, "out")
        ln = run([spec], self.client(), out, log=lambda s: None)[0]
        self.assertEqual(ln["ended"], "env_done")
        self.assertEqual(ln["ticks"], 40)
        for k in ("fairness", "reward.mean", "completion.hammer_craft",
                  "degree.group.out_mean"):
            self.assertIn(k, ln["metrics"])
        rl = read_recording(ln["recording"])
        self.verify(ln["recording"])
        acts = [m for _, m in msgs(rl, "action")]
        plans = [m for _, m in msgs(rl, "plan")]
        self.assertTrue(any(a["text"].startswith("choose_group_") for a in acts))
        self.assertTrue(plans)
        calls = [json.loads(m["text"]) for _, m in msgs(rl, "llm")]
        social = [c for c in calls if c["module"] == "social"]
        physical = [c for c in calls if c["module"] == "plan"]
        self.assertIn("Suppose you are a player named <", social[0]["prompt"])
        self.assertIn("Action: (What you do now)", social[0]["prompt"])
        self.assertIn("Plan: (The plan you will carry out)", physical[0]["prompt"])
        self.assertIn("- GATHER [<n>] <resource>", physical[0]["prompt"])
        # the formation stage asks only the agent whose turn it is
        formation = [c for c in social if c["tick"] < 20]
        self.assertEqual(len({c["tick"] for c in formation}), len(formation))

    def test_llmc_social_structure(self):
        spec = self.spec(os.path.join(LLMC, "llmc_social_structure_hard.json"),
                         overrides={"max_steps": 30})
        ln = run([spec], self.client(), os.path.join(self.tmp, "out"), log=lambda s: None)[0]
        self.assertEqual((ln["ended"], ln["ticks"]), ("env_done", 30))
        for k in ("fairness", "reward.mean", "total_reward_normalised",
                  "completion.hammer_craft", "completion.torch_craft",
                  "degree.group.out_max", "degree.group.out_mean"):
            self.assertIn(k, ln["metrics"])
        rl = read_recording(ln["recording"])
        calls = [json.loads(m["text"]) for _, m in msgs(rl, "llm")]
        self.assertTrue(calls and all(c["module"] == "plan" for c in calls),
                        {c["module"] for c in calls})
        self.assertTrue(msgs(rl, "plan"))
        self.assertEqual(rl[-1]["metrics"]["reported"]["llm.calls"], len(calls))
        self.verify(ln["recording"])

    def test_every_commons_scenario_set_plays_and_replays(self):
        """Each scenario of the study's sets, two rounds: its personalities reach their
        agents' prompts, its knowledge every LLM agent's, the bots are not asked, and the
        recording replays."""
        for f in sorted(os.listdir(COMMONS_LLM)):
            if not f.endswith(".json"):
                continue
            with self.subTest(scenario=f):
                with open(os.path.join(COMMONS_LLM, f)) as fh:
                    doc = json.load(fh)
                spec = self.spec(os.path.join(COMMONS_LLM, f), rounds=2)
                ln = run([spec], self.client(), os.path.join(self.tmp, "out_" + f[:-5]),
                         log=lambda s: None)[0]
                self.assertEqual(ln["rounds"], 2)
                rl = read_recording(ln["recording"])
                names = rl[0]["agents"]
                prompts = {}
                for _, m in msgs(rl, "llm"):
                    prompts.setdefault(names[m["agent"]], []).append(
                        json.loads(m["text"])["prompt"])
                self.assertEqual(sorted(prompts), sorted(ln["agents"]))
                self.assertEqual(sorted(ln["agents"]), sorted(doc.get("agents", names)))
                for a in ln["agents"]:
                    who = doc.get("personalities", {}).get(a) or doc.get("personality")
                    for text in filter(None, (who, doc.get("knowledge"))):
                        self.assertTrue(any(text in p for p in prompts[a]), (a, text))
                self.verify(ln["recording"])

    def test_llmc_negotiation_split_ratio(self):
        """Negotiation's own figure (seeds/000 §5.3.3, Fig. 8e): the Carpenters/Miners split
        ratio the agents agreed, in the results line, the log line and the summary, and the
        one the recording's social graph gives (groups' "score" edges to their members)."""
        spec = self.spec(os.path.join(LLMC, "llmc_negotiation_easy.json"))
        out = os.path.join(self.tmp, "out")
        logs = []
        ln = run([spec], self.client(), out, log=logs.append)[0]
        self.assertEqual(ln["ended"], "env_done")
        split = ln["metrics"]["split_ratio"]
        edges = {}
        for rl in read_recording(ln["recording"]):
            g = rl.get("edges")
            if isinstance(g, list):  # a keyframe: the whole graph
                edges = {(a, b, k): v for a, b, k, v in g}
            elif isinstance(g, dict):  # a tick's changes
                for a, b, k in g.get("del", []):
                    edges.pop((a, b, k), None)
                for a, b, k, v in g.get("add", []):
                    edges[(a, b, k)] = v
        shares = {}
        for (a, b, k), v in edges.items():
            if k == "score" and a.startswith("group_"):
                shares[b] = shares.get(b, 0.0) + v
        self.assertTrue(shares, "the mock's agents agreed no split: the check is empty")
        names = ln["returns"].keys()
        weight = lambda side: sum(shares.get(n, 1.0) for n in names if n.startswith(side))
        self.assertAlmostEqual(split, weight("carpenter") / weight("miner"), places=6)
        self.assertNotEqual(split, 1.0)
        self.assertIn("split_ratio %.3f" % split, logs[0])
        self.verify(ln["recording"])
        summ, err = io.StringIO(), io.StringIO()
        with redirect_stdout(summ), redirect_stderr(err):
            self.assertEqual(cli.main(["summary", out, "--json"]), 0)
        table = json.loads(summ.getvalue())["llmc_negotiation_easy"]
        self.assertEqual(table["split_ratio"]["mean"], split)
        self.assertEqual(table["total_reward_normalised"]["mean"],
                         ln["metrics"]["total_reward_normalised"])
        with redirect_stdout(summ), redirect_stderr(err):
            self.assertEqual(cli.main(["summary", out]), 0)
        self.assertIn("split_ratio", summ.getvalue())

    def test_commands_the_game_cannot_take(self):
        from polis.llm.runner import Episode
        spec = load_spec(self.spec(os.path.join(COMMONS_LLM, "set1_none.json")))
        ep = Episode(spec, self.client(), 1, os.path.join(self.tmp, "r.jsonl"))
        try:
            ep.env.reset(1)
            self.assertIn("control characters", ep.try_start("Laura", "GOTO 3\x00 4"))
            self.assertIn("is a wall", ep.try_start("Laura", "GOTO 0 0"))
            self.assertIn('cannot parse action "fly away"', ep.try_start("Laura", "fly away"))
            self.assertIsNone(ep.try_start("Laura", "STAY 2"))
            self.assertEqual(ep.env.plan_command("Laura"), "STAY 2")
        finally:
            ep.env.close()

    def test_bad_scenario_files(self):
        good = os.path.join(COMMONS_LLM, "set1_none.json")
        cases = [({"llm": 2}, '"llm": 1 is missing'),
                 ({"colour": "red"}, "unknown member colour"),
                 ({"architecture": "swarm"}, "architecture: 'swarm' is not generative or llmc"),
                 ({"rounds": 0}, "rounds: expected an integer >= 1, got 0"),
                 ({"scenario": "nowhere.json"}, "scenario: no file"),
                 ({"agent": {"bandwidth": 3}}, "agent: unknown member bandwidth"),
                 ({"world": "@missing.txt"}, "world: ")]
        for change, msg in cases:
            with self.assertRaisesRegex(SpecError, msg):
                load_spec(self.spec(good, **change))
        bad_agent = self.spec(good, agents=["Laura", "Zed"])
        with self.assertRaisesRegex(SpecError, "agents: no agent named Zed"):
            run([bad_agent], self.client(), os.path.join(self.tmp, "o"), log=lambda s: None)
        bad_cmd = self.spec(good, commands=["GOTO", "TELEPORT"])
        with self.assertRaisesRegex(SpecError, "commands: TELEPORT is not a plan command"):
            run([bad_cmd], self.client(), os.path.join(self.tmp, "o"), log=lambda s: None)

    def test_cli(self):
        err, outp = io.StringIO(), io.StringIO()
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_agents_vs_bots.json"), rounds=2)
        with redirect_stdout(outp), redirect_stderr(err):
            rc = cli.main(["run", spec, "--base-url", self.srv.url, "--model", "mock",
                           "--out", os.path.join(self.tmp, "o"), "--price-prompt", "1",
                           "--price-completion", "2"])
        self.assertEqual(rc, 0, err.getvalue())
        self.assertIn("set2_agents_vs_bots episode 0 (seed 1): 2 rounds", outp.getvalue())
        self.assertIn("cost $", outp.getvalue())
        # --module-model: the act module asked of another model, priced as that model
        with redirect_stdout(outp), redirect_stderr(err):
            rc = cli.main(["run", spec, "--base-url", self.srv.url, "--model", "small",
                           "--module-model", "act=big", "--out", os.path.join(self.tmp, "o2")])
        self.assertEqual(rc, 0, err.getvalue())
        asked = {(("act" if "Valid actions:" in b["messages"][0]["content"] else "other"),
                  b["model"]) for b in self.srv.chat_requests()[-20:]}
        self.assertIn(("act", "big"), asked)
        self.assertNotIn(("act", "small"), asked)
        self.assertIn(("other", "small"), asked)
        with redirect_stdout(outp), redirect_stderr(err), self.assertRaises(SystemExit):
            cli.main(["run", spec, "--out", "x", "--base-url", self.srv.url, "--model", "m",
                      "--module-model", "dance=big"])
        self.assertIn("--module-model: 'dance=big' is not MODULE=MODEL", err.getvalue())
        with open(os.path.join(self.tmp, "o", "results.jsonl")) as f:
            ln = json.loads(f.readline())
        self.assertEqual(ln["agents"], ["Laura", "Juan"])
        self.assertEqual(ln["metrics"]["population.background"], 2)
        summ = io.StringIO()
        with redirect_stdout(summ), redirect_stderr(err):
            self.assertEqual(cli.main(["summary", os.path.join(self.tmp, "o"), "--json"]), 0)
        table = json.loads(summ.getvalue())["set2_agents_vs_bots"]
        self.assertEqual(table["episodes"], 1)
        self.assertEqual(table["return.focal_per_capita"]["mean"],
                         ln["metrics"]["return.focal_per_capita"])
        self.assertEqual(table["cost"]["mean"], ln["costs"]["total"]["cost"])
        self.assertIn("welfare.background.zaps", table)
        with redirect_stdout(outp), redirect_stderr(err):
            self.assertEqual(cli.main(["summary", os.path.join(self.tmp, "none")]), 1)
        self.assertIn("results.jsonl: No such file", err.getvalue())
        with redirect_stdout(outp), redirect_stderr(err):
            rc = cli.main(["run", os.path.join(self.tmp, "nope.json"), "--base-url",
                           self.srv.url, "--model", "m", "--out", os.path.join(self.tmp, "o")])
        self.assertEqual(rc, 1)
        self.assertIn("nope.json: No such file", err.getvalue())
        with redirect_stdout(outp), redirect_stderr(err), self.assertRaises(SystemExit) as cm:
            cli.main(["run", spec, "--out", "x", "--base-url", "ftp://h", "--model", "m"])
        self.assertEqual(cm.exception.code, 2)

    def test_a_dead_endpoint_stops_the_run(self):
        port = self.srv.httpd.server_address[1]
        self.srv.stop()
        spec = self.spec(os.path.join(COMMONS_LLM, "set2_single_tree_none.json"), rounds=50)
        err, outp = io.StringIO(), io.StringIO()
        with redirect_stdout(outp), redirect_stderr(err):
            rc = cli.main(["run", spec, "--base-url", "http://127.0.0.1:%d/v1" % port,
                           "--model", "m", "--out", os.path.join(self.tmp, "o"),
                           "--retries", "0", "--max-failures", "4"])
        self.assertEqual(rc, 1)
        self.assertIn("4 calls in a row failed (the last: cannot reach", err.getvalue())
        self.srv = MockServer().start()

    def test_every_shipped_scenario_loads(self):
        for d in (COMMONS_LLM, LLMC):
            for f in sorted(os.listdir(d)):
                if f.endswith(".json"):
                    s = load_spec(os.path.join(d, f))
                    self.assertTrue(s["doc"], f)


if __name__ == "__main__":
    unittest.main()
