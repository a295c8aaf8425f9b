"""Writes an LLM-agent recording for llm.test.mjs: three rounds of the study's single-tree
scenario played by polis.llm's generative agents against the mock model (with a price, one
hostile answer and a reflection every 10 observations), and what the viewer's LLM panel
must show at the last tick and at tick 1, computed here from the recording's messages.

    make_llm_fixture.py OUTDIR SRCDIR LIBPOLIS
"""
import gzip
import json
import os
import subprocess
import sys

out, src, lib = sys.argv[1:4]
os.environ["POLIS_LIBRARY"] = lib
sys.path.insert(0, os.path.join(src, "sdk", "python"))
from polis.llm.client import ChatClient  # noqa: E402
from polis.llm.cost import CostMeter  # noqa: E402
from polis.llm.mock import MockServer  # noqa: E402
from polis.llm.runner import run  # noqa: E402

base = os.path.join(src, "rulesets", "commons", "llm", "set2_single_tree_none.json")
with open(base) as f:
    spec = json.load(f)
spec.update(rounds=3, agent={"reflect_every": 5},
            scenario=os.path.join(src, "rulesets", "commons", "commons_llm_single_tree.json"),
            world="@" + os.path.join(src, "rulesets", "commons", "llm", "world_single_tree.txt"))
path = os.path.join(out, "spec.json")
with open(path, "w") as f:
    json.dump(spec, f)
with MockServer() as srv:
    srv.script("```json\n{\"Reasoning\": \"r\", \"Goals\": \"g\", \"Plan\": \"Stay near tree 1.\"}\n```",
               "no json here")
    client = ChatClient(srv.url, "mock", meter=CostMeter({"mock": {"prompt": 2.0,
                                                                   "completion": 8.0}}))
    line = run([path], client, out, log=lambda s: None)[0]
rec = line["recording"]
with gzip.open(rec, "rt") as f:
    lines = [json.loads(x) for x in f]
agents = lines[0]["agents"]
steps = [x for x in lines if x["t"] == "step"]


def totals(upto):
    t = {a: {"calls": 0, "errors": 0, "prompt": 0, "completion": 0, "cost": 0.0, "plan": None,
             "reflections": 0} for a in agents}
    for s in steps:
        if s["tick"] > upto:
            break
        for m in s.get("msgs", []):
            a = t[agents[m["agent"]]]
            if m["kind"] == "llm":
                j = json.loads(m["text"])
                if j.get("usage"):
                    a["calls"] += 1
                    a["prompt"] += j["usage"]["prompt_tokens"]
                    a["completion"] += j["usage"]["completion_tokens"]
                    a["cost"] += j["usage"]["cost"]
                if j.get("error"):
                    a["errors"] += 1
            elif m["kind"] == "note":
                j = json.loads(m["text"])
                if j["type"] == "plan":
                    a["plan"] = j["text"]
                elif j["type"] == "reflection":
                    a["reflections"] += 1
    return t


last = steps[-1]["tick"]
expected = {"file": os.path.basename(rec), "last": last, "at_last": totals(last),
            "at_1": totals(1), "agents": agents, "results_cost": line["costs"]["total"]["cost"]}
os.replace(rec, os.path.join(out, "llm.jsonl.gz"))
expected["file"] = "llm.jsonl.gz"
# the agent the test looks at for reflections: the one with most
expected["reflecting"] = max(range(len(agents)),
                             key=lambda i: expected["at_last"][agents[i]]["reflections"])
# an LLM in a seat of polis eval --record: no prompts in the recording, the end line's
# metrics.reported has the seat's figures, which the panel shows
polis = os.path.join(os.path.dirname(lib), "polis")
seat_rec = os.path.join(out, "seat.jsonl")
env = dict(os.environ, POLIS_PYTHON=sys.executable,
           PYTHONPATH=os.path.join(src, "sdk", "python"))
env.pop("LD_PRELOAD", None)
p = subprocess.run([polis, "eval", os.path.join(src, "rulesets", "gather", "gather.json"),
                    "--episodes", "1", "--steps", "5", "--record", seat_rec, "--seat",
                    "agent_2=py:polis.rl.llm_seat:make?mock=1&price_prompt=2&price_completion=8"],
                   capture_output=True, text=True, env=env, timeout=120)
if p.returncode != 0:
    sys.exit("polis eval with an LLM seat failed: " + p.stderr[-2000:])
with open(seat_rec) as f:
    rep = [json.loads(x) for x in f if x.startswith('{"t":"end"')][0]["metrics"]["reported"]
expected["seat"] = {"file": "seat.jsonl", "agent": "agent_2", "reported": rep}
with open(os.path.join(out, "expected_llm.json"), "w") as f:
    json.dump(expected, f)
print("llm fixture: %d ticks, %d calls" % (last, sum(v["calls"] for v in
                                                    expected["at_last"].values())))
