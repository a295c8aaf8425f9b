"""Seats played by policy processes and populations (engine/cli/session/seats.c, policyproc.c;
docs/policies.md): `polis eval --seat`, held-out evaluation (--focal, --background), `polis
sweep` policies and `polis serve --http` seats.

    seats.py POLIS SOURCE_TREE SCRATCH

The seat programs here are written against the protocol as docs/policies.md describes it,
with the standard library only (`cmd:` seats); `py:` seats run polis.rl.seat from the source
tree's SDK (numpy). Every failure a process can cause — not starting, refusing the hello,
exiting, answering nonsense, too many actions, an action out of range, silence past the
timeout — must end the command with exit 1 and a message naming the process and the tick.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import time

POLIS, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
GATHER = os.path.join(SRC, "rulesets", "gather", "gather.json")
CONTRACT = os.path.join(SRC, "rulesets", "contract", "contract.json")
COMMONS = os.path.join(SRC, "rulesets", "commons")
ENV = dict(os.environ, POLIS_PYTHON=sys.executable)
ENV.pop("LD_PRELOAD", None)  # a sanitizer build's python preload is not for the seat processes

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, rc=0, timeout=240):
    p = subprocess.run([POLIS, *args], capture_output=True, text=True, env=ENV, timeout=timeout)
    check(p.returncode == rc, f"polis {' '.join(args)}: exit {p.returncode}, expected {rc}\n"
                              f"  stdout: {p.stdout[-800:]}\n  stderr: {p.stderr[-1500:]}")
    return p


def serve_episode(*args):
    """polis serve ARGS... (a live game of --episodes 1): waits, at most 120 s, until it says
    all its episodes were played, then ends it. Returns (whether it did, its stderr lines)."""
    srv = subprocess.Popen([POLIS, "serve", *args], env=ENV, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    done, log = False, []
    t0 = time.time()
    while time.time() - t0 < 120:
        line = srv.stderr.readline()
        if not line:
            break
        log.append(line)
        if "all 1 episodes played" in line:
            done = True
            break
    # A SIGTERM that lands between the server's check of its flag and its next poll is only
    # seen at the poll's next wake-up (engine/cli/transport/http.c, cli_lws_run): send it
    # until it ends.
    for _ in range(15):
        srv.terminate()
        try:
            srv.wait(timeout=2)
            break
        except subprocess.TimeoutExpired:
            pass
    else:
        srv.kill()
        srv.wait()
        check(False, f"the live server (serve {' '.join(args)}) did not end on SIGTERM")
    return done, log


# A seat program with the standard library only. Modes: first (the first legal action),
# dump (also writes the first request's observation rows to DUMP as JSON), and misbehaviours.
PROG = os.path.join(TMP, "seat_prog.py")
with open(PROG, "w") as f:
    f.write(r'''
import json, struct, sys, time
mode = sys.argv[1]
dump = sys.argv[2] if len(sys.argv) > 2 else None
rd, wr = sys.stdin.buffer, sys.stdout.buffer
def reply(o):
    wr.write(json.dumps(o).encode() + b"\n"); wr.flush()
hello = json.loads(rd.readline())
assert hello["op"] == "hello" and hello["protocol"] == 1, hello
if mode == "refuse":
    reply({"ok": False, "error": "I only play chess"}); sys.exit(0)
if mode == "exit":
    sys.exit(3)
dim, na = hello["obs_dim"], hello["n_actions"]
assert dim == sum(eval("*".join(map(str, f["shape"])) or "1") for f in hello["obs_fields"])
hi = {"ok": True, "name": "first-legal (stdlib)", "views": ["flat"]}
if mode.startswith("stats"):
    hi["stats"] = True
reply(hi)
acts = 0
acts_at_end = 0
while True:
    line = rd.readline()
    if not line:
        break
    m = json.loads(line)
    if m["op"] == "close":
        break
    if m["op"] == "end":
        k = len(m["seats"])
        ends = {
            "stats": {"ok": True, "stats": {"bot.thoughts": 3, "bot.unknown": None},
                      "per_seat": [{"bot.thoughts": 1.5}] * k},
            "stats_neg": {"ok": True, "stats": {"bot.thoughts": -1}},
            "stats_str": {"ok": True, "stats": {}, "per_seat": [{"bot.thoughts": "many"}] * k},
            "stats_huge": {"ok": True, "stats": {"bot.thoughts": 1e300}},
            "stats_game": {"ok": True, "stats": {"steps": 1}},
            "stats_name": {"ok": True, "stats": {"9 lives": 1}},
            "stats_count": {"ok": True, "stats": {}, "per_seat": [{}] * (k + 1)},
            "stats_missing": {"ok": True},
            "stats_refuse": {"ok": False, "error": "no figures today"},
        }
        reply(ends[mode if acts_at_end else "stats"])  # the first episode's are good
        acts_at_end = acts; continue
    if m["op"] == "reset":
        reply({"ok": True}); continue
    k = len(m["seats"])
    assert m["obs_bytes"] == k * dim * 4 and m["mask_bytes"] == k * na, m
    obs = struct.unpack("<%df" % (k * dim), rd.read(m["obs_bytes"]))
    mask = rd.read(m["mask_bytes"])
    if dump and acts == 0:
        with open(dump, "w") as f:
            json.dump({"seats": m["seats"], "tick": m["tick"], "obs": obs}, f)
    acts += 1
    first = [next(a for a in range(na) if mask[i * na + a]) for i in range(k)]
    if mode == "garbage" and acts == 3:
        wr.write(b"not json\n"); wr.flush(); continue
    if mode == "count" and acts == 3:
        reply({"ok": True, "actions": first + [0]}); continue
    if mode == "range" and acts == 3:
        reply({"ok": True, "actions": [na + 7] * k}); continue
    if mode == "die" and acts == 3:
        sys.exit(5)
    if mode == "sleep" and acts == 3:
        time.sleep(30)
    if mode == "text":
        reply({"ok": True, "actions": ["noop"] * k}); continue
    reply({"ok": True, "actions": first})
''')
PY = sys.executable


def cmd(mode, *extra):
    return "cmd:" + " ".join([PY, PROG, mode, *extra])


# ---- a seat program and polis.rl.seat agree with each other ----------------------------------
dump = os.path.join(TMP, "dump.json")
a = run("eval", GATHER, "--episodes", "2", "--seed", "4", "--seat", "agent_1=" + cmd("dump", dump),
        "--json", os.path.join(TMP, "cmd.json"))
check("agent_1: cmd:" in a.stdout, "eval names the seat's player in its table")
b = run("eval", GATHER, "--episodes", "2", "--seed", "4", "--seat", "agent_1=py:first_legal",
        "--json", os.path.join(TMP, "py.json"))
with open(os.path.join(TMP, "cmd.json")) as f:
    ja = json.load(f)
with open(os.path.join(TMP, "py.json")) as f:
    jb = json.load(f)
check([e["metrics"] for e in ja["per_episode"]] == [e["metrics"] for e in jb["per_episode"]],
      "a stdlib seat program and polis.rl.seat's first_legal play the same episodes")

# the rows sent are the SDK's flatten=True layout, bit for bit
sys.path.insert(0, os.path.join(SRC, "sdk", "python"))
try:
    if os.environ.get("POLIS_SANITIZE") == "1":
        raise ImportError("an ASan-instrumented libpolis cannot be loaded into this python")
    import numpy as np
    import polis
    from polis.parallel import FlatLayout
    lib = os.environ.get("POLIS_LIBRARY") or os.path.join(os.path.dirname(POLIS), "libpolis.so")
    env = polis.Env(GATHER, polis.parallel.with_metrics(GATHER, {}, lib), library=lib)
    env.reset(4)
    lay = FlatLayout(env.obs_fields)
    flat = np.zeros((env.n_agents, lay.dim), np.float32)
    lay.fill(flat, env.fields)
    with open(dump) as f:
        d = json.load(f)
    check(d["seats"] == [1] and d["tick"] == 0, f"the first request: {d['seats']} {d['tick']}")
    check(np.array_equal(np.asarray(d["obs"], np.float32), flat[1]),
          "the observation row sent is the SDK's flat row of the agent")
    env.close()
except ImportError as e:
    print("skipped the layout check:", e)

# text actions are parsed by the scenario
run("eval", GATHER, "--episodes", "1", "--steps", "5", "--seat", "agent_0=" + cmd("text"))

# ---- failures of a process ------------------------------------------------------------------
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("refuse"), rc=1)
check("refused hello: I only play chess" in p.stderr and "--seat agent_0=" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("exit"), rc=1)
check("exited with status 3 without answering" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=cmd:/nonexistent/prog", rc=1)
check("cannot start /nonexistent/prog" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("garbage"), rc=1)
check("not a JSON object: \"not json\"" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("count"), rc=1)
check("another number of actions for 1 seats at tick 2" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("range"), rc=1)
check("sent agent 0 (agent_0) the action 12 at tick 2: not an action id (0..4)" in p.stderr,
      p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=" + cmd("die"), rc=1)
check("exited with status 5 without answering" in p.stderr, p.stderr)
t0 = time.time()
p = run("eval", GATHER, "--episodes", "1", "--policy-timeout", "1",
        "--seat", "agent_0=" + cmd("sleep"), rc=1)
check("did not answer within 1 s (the policy timeout)" in p.stderr, p.stderr)
check(time.time() - t0 < 25, "the timeout ended the wait")
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=py:", rc=1)
check("'py:' names no policy (py:SPEC)" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=py:/no/such.pt", rc=1)
check("refused hello: /no/such.pt: no such checkpoint" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_9=random", rc=2)
check("--seat agent_9=random: no agent named 'agent_9'" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0", rc=2)
check("'agent_0' is not AGENT=WHO" in p.stderr, p.stderr)
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=chess", rc=1)
check("'chess' is not a policy of this scenario (policies: noop, random, uniform)" in p.stderr,
      p.stderr)

# ---- figures a process reports of its episodes (the protocol's "end") --------------------------
# two processes (their texts differ by an argument: a file the program writes its first
# request to), one seat each: the totals add up, each
# seat's figures are its own, null stays unknown
p = run("eval", GATHER, "--episodes", "2", "--steps", "5", "--seat", "agent_0=" + cmd("stats"),
        "--seat", "agent_2=" + cmd("stats", os.path.join(TMP, "two.json")), "--json", "-")
j = json.loads(p.stdout)
ep = j["per_episode"][1]["metrics"]
check(ep.get("bot.thoughts") == 6 and ep.get("bot.thoughts.agent_0") == 1.5
      and ep.get("bot.thoughts.agent_2") == 1.5 and "bot.thoughts.agent_1" not in ep,
      f"figures summed over processes, per seat: {ep}")
check("bot.unknown" in ep and ep["bot.unknown"] is None, f"a null figure is undefined: {ep}")
check(j["summary"]["bot.thoughts"] == {"mean": 6, "std": 0, "n": 2}, j["summary"].get("bot.thoughts"))
check(list(ep)[-1] == "bot.thoughts.agent_2" and list(ep).index("bot.thoughts") > list(ep).index("steps"),
      f"the figures follow the game's metrics: {list(ep)}")
p = run("eval", GATHER, "--episodes", "1", "--steps", "5", "--seat", "agent_0=" + cmd("stats"))
check("bot.thoughts.agent_0" in p.stdout and "bot.unknown" in p.stdout, p.stdout)
seed_msg = "in the episode of seed 2"
bad_figures = [
    ("stats_neg", "reported bot.thoughts = -1 for its seat agent_0 " + seed_msg
     + ": not a number from 0 to 1e+15 (or null: unknown)"),
    ("stats_str", "reported bot.thoughts = \"many\" for agent 0 (agent_0) " + seed_msg),
    ("stats_huge", "reported bot.thoughts = 1e+300 for its seat agent_0 " + seed_msg),
    ("stats_game", "reported the figure steps for its seat agent_0 " + seed_msg
     + ", which is a metric of the game"),
    ("stats_name", "reported a figure named \"9 lives\" for its seat agent_0 " + seed_msg),
    ("stats_count", "answered end with a \"per_seat\" that is not an array of 1 objects, one "
     "for each of its seat agent_0 (the episode of seed 2)"),
    ("stats_missing", "answered end with a \"stats\" for its seat agent_0 that is not an object"),
    ("stats_refuse", "refused end: no figures today"),
]
for mode, want in bad_figures:
    p = run("eval", GATHER, "--episodes", "2", "--steps", "3", "--seat", "agent_0=" + cmd(mode), rc=1)
    check("polis: eval: episode 2 (seed 2): the policy process cmd:" in p.stderr and want in p.stderr,
          f"{mode}: {p.stderr}")
p = run("sweep", "--scenario", GATHER, "--policy", cmd("stats_neg"), "--episodes", "2",
        "--threads", "1", "--steps", "3", "--out", os.path.join(TMP, "sweep_bad"), "--quiet",
        rc=1)
check("job 1" in p.stderr and "reported bot.thoughts = -1 for its seats agent_0, agent_1, "
      "agent_2, agent_3 in the episode of seed 2" in p.stderr, p.stderr)

# ---- shared observation fields (seat protocol revision 1) -------------------------------------
# signal.lua shows every agent one number in its shared field "signal" and rewards saying it at
# the next step: a player that reads the field earns 1 per seat and step, 60 in 20 steps for 3.
SIGNAL = os.path.join(SRC, "tests", "cli", "scenarios", "signal.json")
SIG_PROG = os.path.join(TMP, "signal_prog.py")
with open(SIG_PROG, "w") as f:
    f.write(r"""
import json, sys
mode = sys.argv[1]
rd, wr = sys.stdin.buffer, sys.stdout.buffer
def reply(o):
    wr.write(json.dumps(o).encode() + b"\n"); wr.flush()
hello = json.loads(rd.readline())
assert hello["protocol"] == 1 and hello["revision"] >= 1, hello
(sig,) = [f for f in hello["shared_fields"] if f["name"] == "signal"]
assert sig["dtype"] == "u8" and sig["shape"] == [1] and hello["shared_size"] >= 1, hello
reply({"ok": True, "name": "signal " + mode, "views": ["shared"] if mode == "read" else ["flat"]})
while True:
    m = json.loads(rd.readline() or b'{"op": "close"}')
    if m["op"] == "close":
        break
    if m["op"] == "reset":
        reply({"ok": True}); continue
    k = len(m["seats"])
    assert m["obs_bytes"] == (0 if mode == "read" else 4 * k), m
    rd.read(m["obs_bytes"] + m["mask_bytes"])
    if mode == "read":
        assert m["shared_bytes"] == hello["shared_size"], m
        shared = rd.read(m["shared_bytes"])
        say = 1 + shared[sig["offset"]]
    else:
        assert "shared_bytes" not in m, m
        say = 1
    reply({"ok": True, "actions": [say] * k})
""")


def signal_eval(player, rc=0, seats=3):
    args = ["eval", SIGNAL, "--episodes", "2", "--seed", "7", "--json", "-"]
    for a in range(seats):
        args += ["--seat", f"agent_{a}={player}"]
    p = run(*args, rc=rc)
    return [e["metrics"] for e in json.loads(p.stdout)["per_episode"]] if p.returncode == 0 else []


sig_cmd = "cmd:" + " ".join([PY, SIG_PROG, "read"])
m = signal_eval(sig_cmd)
check([e["reward.total"] for e in m] == [60, 60] and [e["reward.min"] for e in m] == [20, 20],
      f"a stdlib program reading the shared field scores every step: {m}")
m = signal_eval("cmd:" + " ".join([PY, SIG_PROG, "blind"]))
check(len(m) == 2 and all(e["reward.total"] < 60 for e in m),
      f"a program without the field does not: {m}")
# polis.rl.seat hands a policy act(..., shared={name: array}); with "flat" too
with open(os.path.join(TMP, "signal_bots.py"), "w") as f:
    f.write("""
import numpy as np
from polis.rl.policy import Policy
class Reader(Policy):
    name = "signal reader"
    views = ("flat", "shared")
    needs_shared = ("signal",)
    def act(self, obs, mask, shared=None):
        assert obs.shape == (len(mask), 1) and shared["signal"].shape == (1,), (obs, shared)
        return np.full(len(mask), 1 + int(shared["signal"][0]))
def make():
    return Reader()
""")
ENV["PYTHONPATH"] = TMP + (os.pathsep + ENV["PYTHONPATH"] if ENV.get("PYTHONPATH") else "")
m = signal_eval("py:signal_bots:make")
check([e["reward.total"] for e in m] == [60, 60], f"polis.rl.seat's policy reads the field: {m}")
p = run("eval", GATHER, "--episodes", "1", "--seat", "agent_0=py:signal_bots:make", rc=1)
check("refused hello: the env gather has no shared observation field 'signal' (its shared "
      "fields: none)" in p.stderr, p.stderr)
# a sweep's policy process gets the field too
run("sweep", "--scenario", SIGNAL, "--policy", sig_cmd, "--episodes", "2", "--threads", "1",
    "--out", os.path.join(TMP, "sweep_signal"), "--quiet")
with open(os.path.join(TMP, "sweep_signal", "results.jsonl")) as f:
    rows = [r for r in map(json.loads, filter(str.strip, f)) if "job" in r]
check(len(rows) == 2 and all(r["metrics"]["reward.total"] == 60 for r in rows),
      f"a sweep's policy process reads the shared field: {rows}")

# ---- populations --------------------------------------------------------------------------------


def pop(name, doc):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


bad = [
    ("syntax.json", '{"polis_population": 1,\n "members": [}', "syntax.json:2: not valid JSON"),
    ("version.json", {"members": [{"policy": "noop"}]}, "polis_population: expected 1"),
    ("nomembers.json", {"polis_population": 1, "members": []}, "members: expected a non-empty array"),
    ("key.json", {"polis_population": 1, "members": [{"policy": "noop"}], "size": 3},
     "size: unknown key"),
    ("weight.json", {"polis_population": 1, "members": [{"policy": "noop", "weight": 0}]},
     "members[0].weight: expected a number above 0"),
    ("two.json", {"polis_population": 1, "members": [{"policy": "noop", "python": "random"}]},
     "members[0]: give one of policy, checkpoint, python and command, not policy and python"),
    ("unknown.json", {"polis_population": 1,
                      "members": [{"policy": "noop"}, {"policy": "chess"}]},
     "members[1]: 'chess' is not a policy of this scenario"),
    ("ckpt.json", {"polis_population": 1, "members": [{"checkpoint": "nowhere.pt"}]},
     "members[0].checkpoint: "),
    ("draw.json", {"polis_population": 1, "draw": "sometimes", "members": [{"policy": "noop"}]},
     "draw: expected \"per_seat\" or \"per_episode\""),
]
for name, doc, want in bad:
    p = run("eval", GATHER, "--episodes", "1", "--focal", "random", "--background",
            pop(name, doc), rc=1)
    check(want in p.stderr and name in p.stderr, f"{name}: {p.stderr}")
p = run("eval", GATHER, "--episodes", "1", "--background", os.path.join(TMP, "missing.json"),
        rc=1)
check("missing.json" in p.stderr, p.stderr)

# Commons' bots as a population: commons_open with the free bots on seats 2-6 is the visitor
# scenario whose game drives the same bots itself
p = run("eval", os.path.join(COMMONS, "commons_open_visitors.json"), "--policy", "noop",
        "--episodes", "2", "--seed", "3", "--json", "-")
game = json.loads(p.stdout)["summary"]
p = run("eval", os.path.join(COMMONS, "commons_open.json"), "--focal", "noop", "--background",
        os.path.join(COMMONS, "populations", "free_bots.json"), "--focal-seats", "0-1",
        "--episodes", "2", "--seed", "3", "--json", "-")
cell = json.loads(p.stdout)["cells"][0]
check(abs(cell["background_per_capita"]["mean"]
          - game["return.background_per_capita"]["mean"]) < 1e-9,
      f"the free-bot population scores as the game-driven bots: {cell['background_per_capita']}"
      f" vs {game['return.background_per_capita']}")
check(cell["metrics"]["steps"]["mean"] == game["steps"]["mean"], "same episode lengths")
check(all(e["players"][:2] == ["noop", "noop"] and set(e["players"][2:]) == {"commons_free"}
          for e in cell["per_episode"]), "the players of every seat are reported")

# a mixed population draws per seat, from the episode's seed: reproducible, and mixed
mixed = os.path.join(COMMONS, "populations", "mixed_bots.json")
args = ("eval", os.path.join(COMMONS, "commons_open.json"), "--focal", "noop", "--background",
        mixed, "--focal-seats", "0-1", "--episodes", "4", "--steps", "30", "--json", "-")
p1, p2 = run(*args), run(*args)
c1, c2 = json.loads(p1.stdout)["cells"][0], json.loads(p2.stdout)["cells"][0]
check(c1 == c2, "a population's draws are reproducible from the seeds")
seen = {x for e in c1["per_episode"] for x in e["players"][2:]}
check(seen == {"commons_free", "commons_pacifist"}, f"both members were drawn: {seen}")

# the cross-play matrix: 2 focal x 2 background, same seeds in every cell
p = run("eval", os.path.join(COMMONS, "commons_open.json"), "--focal", "noop", "--focal",
        "commons_pacifist", "--background", os.path.join(COMMONS, "populations", "free_bots.json"),
        "--background", os.path.join(COMMONS, "populations", "pacifist_bots.json"),
        "--focal-seats", "0,agent_1", "--episodes", "2", "--steps", "40", "--json",
        os.path.join(TMP, "matrix.json"))
check("rows: focal, columns: background" in p.stdout, p.stdout)
with open(os.path.join(TMP, "matrix.json")) as f:
    m = json.load(f)
check(len(m["cells"]) == 4 and m["focal_seats"] == ["agent_0", "agent_1"],
      f"{len(m['cells'])} cells, seats {m['focal_seats']}")
check([c["focal"] for c in m["cells"]] == ["noop", "noop", "commons_pacifist", "commons_pacifist"],
      "cells are focal-major")
check(m["cells"][0]["focal_per_capita"]["mean"] == 0, "noop focal players eat nothing")
check(m["cells"][2]["focal_per_capita"]["mean"] > 0, "pacifist focal players eat")
p = run("eval", GATHER, "--focal", "random", "--focal-seats", "agent_7", rc=2)
check("--focal-seats: 'agent_7' is not an agent" in p.stderr, p.stderr)
p = run("eval", GATHER, "--focal-seats", "0", rc=2)
check("--focal-seats" in p.stderr and "needs" in p.stderr, p.stderr)
p = run("eval", GATHER, "--focal", "random", "--seat", "agent_0=noop", rc=2)
check("held-out evaluation fills every seat" in p.stderr, p.stderr)

# an LLM client (polis.llm's local mock model) in a population's seat, through the protocol's
# text views
llm = pop("llm.json", {"polis_population": 1, "members": [
    {"python": "polis.rl.llm_seat:make?mock=1", "weight": 1}]})
p = run("eval", CONTRACT, "--focal", "scripted", "--background", llm, "--focal-seats", "0-1",
        "--episodes", "1", "--json", "-")
check("polis.rl.llm_seat: 240 answers" in p.stderr, p.stderr[-600:])
cell = json.loads(p.stdout)["cells"][0]
check(cell["per_episode"][0]["players"][2:] == ["py:polis.rl.llm_seat:make?mock=1"] * 2,
      f"the LLM plays the background seats: {cell['per_episode'][0]['players']}")
check(cell["metrics"].get("llm.calls", {}).get("mean") == 240
      and cell["metrics"]["llm.calls.miner_2"]["mean"] + cell["metrics"]["llm.calls.miner_3"]["mean"] == 240
      and "llm.cost" not in cell["metrics"],
      f"held-out evaluation reports the LLM's calls, no cost without prices: "
      f"{ {k: v for k, v in cell['metrics'].items() if k.startswith('llm.')} }")

# ---- what an LLM in a seat cost: polis.llm's mock server on 127.0.0.1, port 0 ----------------------
from polis.llm.mock import MockServer  # noqa: E402 (the SDK is on sys.path from above)


def mock_usage(srv, since):
    u = srv.usages[since:]
    return len(u), sum(x["prompt_tokens"] for x in u), sum(x["completion_tokens"] for x in u)


def table_rows(text):
    """The rows of eval's table: metric -> mean (text)."""
    return {w[0]: w[1] for w in (ln.split() for ln in text.splitlines()[2:]) if len(w) >= 2}


with MockServer() as srv:
    LLM = ("py:polis.rl.llm_seat:make?model=mock&base_url=" + srv.url
           + "&price_prompt=2.5&price_completion=10")
    # one episode: the table's rows are the episode's figures, exactly the mock's usage
    p = run("eval", GATHER, "--episodes", "1", "--steps", "6", "--seat", "agent_1=" + LLM)
    calls, pt, ct = mock_usage(srv, 0)
    rows = table_rows(p.stdout)
    check(calls == 6 and len(srv.chat_requests()) == 6, f"one call per tick: {calls}")
    for key in ("", ".agent_1"):
        check(rows.get("llm.calls" + key) == "6" and rows.get("llm.prompt_tokens" + key) == str(pt)
              and rows.get("llm.completion_tokens" + key) == str(ct)
              and rows.get("llm.errors" + key) == "0" and rows.get("llm.cached" + key) == "0",
              f"eval prints the mock's token counts ({pt} + {ct} in {calls} calls) as llm.*{key}: "
              f"{p.stdout}")
        cost = (pt * 2.5 + ct * 10) / 1e6
        check(abs(float(rows.get("llm.cost" + key, "nan")) - cost) <= 1e-5 * cost,
              f"llm.cost{key} is the price table's {cost}: {rows.get('llm.cost' + key)}")
        check(0 < float(rows.get("llm.latency_s" + key, "0")) < 60, f"latency: {p.stdout}")
    check("llm.calls.agent_0" not in rows, "seats the LLM did not play have no rows")
    # --json: every episode's figures, adding up to what the mock served
    before = len(srv.usages)
    p = run("eval", GATHER, "--episodes", "2", "--steps", "4", "--seat", "agent_0=" + LLM,
            "--json", "-")
    calls, pt, ct = mock_usage(srv, before)
    eps = [e["metrics"] for e in json.loads(p.stdout)["per_episode"]]
    check(all(e["llm.calls"] == e["steps"] == 4 for e in eps), f"calls per episode: {eps}")
    check(sum(e["llm.prompt_tokens"] for e in eps) == pt
          and sum(e["llm.completion_tokens.agent_0"] for e in eps) == ct,
          f"the episodes' tokens add up to the mock's {pt} + {ct}")
    # a sweep's results file: every agent an LLM seat of one process, figures per line
    before = len(srv.usages)
    out = os.path.join(TMP, "sweep_llm")
    run("sweep", "--scenario", GATHER, "--policy", LLM, "--episodes", "2", "--steps", "3",
        "--threads", "1", "--out", out, "--quiet")
    calls, pt, ct = mock_usage(srv, before)
    with open(os.path.join(out, "results.jsonl")) as f:
        lines = [json.loads(x)["metrics"] for x in list(f)[1:]]
    agents = ("agent_0", "agent_1", "agent_2", "agent_3")
    check(len(lines) == 2 and all(m["llm.calls"] == 12 for m in lines)
          and sum(m["llm.prompt_tokens"] for m in lines) == pt
          and sum(m["llm.completion_tokens"] for m in lines) == ct
          and all(sum(m["llm.prompt_tokens." + a] for a in agents) == m["llm.prompt_tokens"]
                  for m in lines)
          and all(abs(m["llm.cost"] - (m["llm.prompt_tokens"] * 2.5
                                       + m["llm.completion_tokens"] * 10) / 1e6) < 1e-12
                  for m in lines),
          f"the sweep's results carry the LLM's figures ({calls} calls, {pt} + {ct}): {lines}")
    with open(os.path.join(out, "summary.json")) as f:
        summ = json.load(f)
    check("llm.cost" in json.dumps(summ), "the sweep's summary has the cost")
    # eval --record: each end line carries the seat's figures as metrics.reported, which
    # replay --verify carries over (it cannot re-derive them) while it checks the game's
    before = len(srv.usages)
    erec = os.path.join(TMP, "eval_llm.jsonl")
    p = run("eval", GATHER, "--episodes", "2", "--steps", "5", "--seat", "agent_3=" + LLM,
            "--json", "-", "--record", erec)
    calls, pt, ct = mock_usage(srv, before)
    eps = [e["metrics"] for e in json.loads(p.stdout)["per_episode"]]
    with open(erec) as f:
        ends = [json.loads(x) for x in f if x.startswith('{"t":"end"')]
    reps = [e["metrics"].get("reported", {}) for e in ends]
    check(len(ends) == 2 and all(r["llm.calls"] == r["llm.calls.agent_3"] == 5 for r in reps)
          and sum(r["llm.prompt_tokens"] for r in reps) == pt
          and sum(r["llm.completion_tokens.agent_3"] for r in reps) == ct
          and all(r[k] == e[k] for r, e in zip(reps, eps) for k in r),
          f"eval's end lines carry the LLM's figures ({calls} calls, {pt} + {ct}), as its JSON "
          f"does: {reps}")
    check(all("fairness" in e["metrics"] and "steps" in e["metrics"] for e in ends),
          f"the game's metrics stay beside them: {ends}")
    run("replay", erec, "--verify")
    # a changed figure is not checked (free text, as messages); a changed game metric is
    with open(erec) as f:
        text = f.read()
    for name, old, new, rc in (("figure", '"llm.calls":5', '"llm.calls":7', 0),
                               ("game", '"reported"', '"reportedX"', 1)):
        bad = os.path.join(TMP, f"eval_llm_{name}.jsonl")
        with open(bad, "w") as f:
            f.write(text.replace(old, new, 1))
        check(old in text, f"{old} in the recording")
        p = run("replay", bad, "--verify", rc=rc)
        check(rc == 0 or "line" in p.stderr, f"replay of a changed {name}: {p.stderr}")
    # serve --http: at an episode's end the seat processes are asked for their figures too:
    # the end line carries them and stderr reports the totals
    before = len(srv.usages)
    lrec = os.path.join(TMP, "live_llm.jsonl")
    ldone, llog = serve_episode(GATHER, "--http", "0", "--seat", "agent_1=" + LLM,
                                "--episodes", "1", "--set", "max_steps=6", "--record", lrec)
    calls, pt, ct = mock_usage(srv, before)
    check(ldone and any(f"the seat processes report llm.calls 6, llm.cached 0, llm.errors 0, "
                        f"llm.prompt_tokens {pt}, llm.completion_tokens {ct}," in x for x in llog),
          f"serve reports the LLM seat's figures ({calls} calls, {pt} + {ct}): {''.join(llog)}")
    if ldone:
        with open(lrec) as f:
            rep = [json.loads(x) for x in f if x.startswith('{"t":"end"')][0]["metrics"]["reported"]
        check(rep["llm.calls.agent_1"] == calls == 6 and rep["llm.prompt_tokens"] == pt
              and abs(rep["llm.cost"] - (pt * 2.5 + ct * 10) / 1e6) < 1e-9,
              f"serve's end line carries the LLM seat's figures: {rep}")
        run("replay", lrec, "--verify")
    # a price option that is not a number is the process's refusal, named
    p = run("eval", GATHER, "--episodes", "1", "--seat",
            "agent_0=py:polis.rl.llm_seat:make?mock=1&price_prompt=cheap", rc=1)
    check("refused hello: polis.rl.llm_seat: prices: could not convert" in p.stderr, p.stderr)

    # ---- polis llm: python3 -m polis.llm, found as py: seats find it ----------------------------
    p = run("llm", "--help")
    check("{run,summary,mock}" in p.stdout, p.stdout)
    p = run("help")
    check("  llm ARGS..." in p.stdout, p.stdout)
    llm_out = os.path.join(TMP, "llm_run")
    if os.environ.get("POLIS_SANITIZE") == "1":
        # the runner loads libpolis into python: an ASan-instrumented one cannot be
        print("skipped polis llm run: an ASan-instrumented libpolis cannot be loaded into python")
    else:
        p = run("llm", "run", os.path.join(SRC, "sdk", "python", "polis", "llm", "scenarios",
                                           "llmc_negotiation_easy.json"),
                "--base-url", srv.url, "--model", "mock", "--out", llm_out, "--price-prompt", "1")
        check("llmc_negotiation_easy episode 0 (seed 0)" in p.stdout and "split_ratio" in p.stdout,
              p.stdout)
        with open(os.path.join(llm_out, "results.jsonl")) as f:
            res = json.loads(f.readline())
        check(isinstance(res["metrics"].get("split_ratio"), float)
              and res["costs"]["total"]["prompt_tokens"] > 0, f"{res['metrics']} {res['costs']}")
        run("replay", res["recording"], "--verify")
        p = run("llm", "summary", llm_out)
        check("split_ratio" in p.stdout and "calls" in p.stdout, p.stdout)
    p = run("llm", "summary", os.path.join(TMP, "no_run"), rc=1)
    check("no_run/results.jsonl: No such file" in p.stderr, p.stderr)
    p = run("llm", "run", "x.json", "--out", llm_out, "--episodes", "0", "--base-url", srv.url,
            "--model", "m", rc=2)
    check("--episodes must be at least 1" in p.stderr, p.stderr)

# no Python, no SDK: one line each, exit 1
p = subprocess.run([POLIS, "llm", "summary", TMP], capture_output=True, text=True,
                   env=dict(ENV, POLIS_PYTHON="/nonexistent/python3"), timeout=60)
check(p.returncode == 1 and "polis: llm: cannot start /nonexistent/python3: No such file"
      in p.stderr, f"{p.returncode} {p.stderr}")
isolated = os.path.join(TMP, "isolated_python")
with open(isolated, "w") as f:
    f.write("#!/bin/sh\nexec %s -I \"$@\"\n" % PY)  # -I: PYTHONPATH ignored, no SDK
os.chmod(isolated, 0o755)
p = subprocess.run([POLIS, "llm", "summary", TMP], capture_output=True, text=True,
                   env=dict(ENV, POLIS_PYTHON=isolated), timeout=60)
check(p.returncode == 1 and "cannot import polis.llm (No module named 'polis')" in p.stderr
      and "Traceback" not in p.stderr, f"{p.returncode} {p.stderr}")

# ---- sweep: a policy process or a population as a cell's policy ----------------------------------
out = os.path.join(TMP, "sweep")
p = run("sweep", "--scenario", GATHER, "--policy", "py:first_legal", "--policy",
        "pop:" + pop("firsts.json", {"polis_population": 1, "members": [{"python": "first_legal"}]}),
        "--episodes", "2", "--threads", "2", "--out", out, "--quiet", "--format", "json")
with open(os.path.join(out, "results.jsonl")) as f:
    lines = [json.loads(x) for x in f][1:]
by = {}
for r in lines:
    by.setdefault(r["seed"], []).append(r["hash"])
check(len(lines) == 4 and all(len(set(h)) == 1 for h in by.values()),
      "py:first_legal and a population of it play the same episodes in a sweep")
p = run("sweep", "--scenario", GATHER, "--policy", "cmd:" + PY + " " + PROG + " refuse",
        "--episodes", "1", "--out", os.path.join(TMP, "sweep2"), "--quiet", rc=1)
check("cell 0" in p.stderr and "refused hello: I only play chess" in p.stderr, p.stderr)

# ---- serve --http: a process in a live seat -------------------------------------------------------
rec = os.path.join(TMP, "live.jsonl")
done, log = serve_episode(GATHER, "--http", "0", "--seat", "agent_0=py:first_legal", "--seat",
                          "agent_2=" + cmd("first"), "--episodes", "1", "--set", "max_steps=25",
                          "--record", rec)
check(done, "the live game with process seats ran to its end: " + "".join(log)[-800:])
if done:
    with open(rec) as f:
        head = json.loads(f.readline())
    check(head.get("policies", [None])[0] == "py:first_legal" and
          head["policies"][2].startswith("cmd:"), f"the recording names the seats: {head.get('policies')}")
    run("replay", rec, "--verify")

# ---- the scenario's own "seats" (docs/scenario.md): polis eval plays them without flags ----------
SOLO = os.path.join(SRC, "rulesets", "survival", "survival_experts_solo.json")
with open(SOLO) as f:
    solo_doc = json.load(f)


def scenario_copy(name, **changes):
    """A copy of survival_experts_solo beside it (its plugin found the same way), changed."""
    doc = {k: v for k, v in solo_doc.items() if k not in changes or changes[k] is not None}
    doc.update({k: v for k, v in changes.items() if v is not None})
    path = os.path.join(os.path.dirname(SOLO), f".seats_test_{name}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


p = run("eval", SOLO, "--episodes", "2", "--steps", "120", "--json", "-")
by_scenario = json.loads(p.stdout)
check(by_scenario["policy"] == "random; expert_0: scripted, expert_1: scripted, expert_2: scripted",
      f"the scenario's seats play the experts: {by_scenario['policy']}")
bare = scenario_copy("bare", seats=None)
try:
    p = run("eval", bare, "--episodes", "2", "--steps", "120", "--json", "-",
            "--seat", "expert_0=scripted", "--seat", "expert_1=scripted", "--seat",
            "expert_2=scripted")
    by_flags = json.loads(p.stdout)
    check([e["metrics"] for e in by_scenario["per_episode"]]
          == [e["metrics"] for e in by_flags["per_episode"]],
          "the scenario's seats play the episodes --seat plays")
    p = run("eval", bare, "--episodes", "2", "--steps", "120", "--json", "-")
    check(json.loads(p.stdout)["policy"] == "random", "without seats every agent plays --policy")
finally:
    os.remove(bare)
ach = by_scenario["summary"]
check(ach["achievements_by_player.1"]["mean"] > ach["achievements_by_player.0"]["mean"],
      f"the scripted experts unlock more than the random learner: {ach.get('achievements_by_player.1')}"
      f" vs {ach.get('achievements_by_player.0')}")
# --seat wins over the scenario's seat of its agent, the others stay
p = run("eval", SOLO, "--episodes", "1", "--steps", "20", "--seat", "expert_1=noop")
check("expert_0: scripted, expert_1: noop, expert_2: scripted" in p.stdout, p.stdout[:300])
# bad seats name their JSON path
for name, seats, code, needle in [
    ("policy", {"expert_0": "scriptd"}, 1,
     "seats.expert_0: 'scriptd' is not a policy of this scenario (policies: noop, random, "
     "uniform, scripted)"),
    ("agent", {"expert_9": "scripted"}, 1, "seats.expert_9: no agent named \"expert_9\""),
    ("type", {"expert_0": 7}, 1, "seats.expert_0: expected non-empty string, got 7"),
]:
    path = scenario_copy(name, seats=seats)
    try:
        p = run("eval", path, "--episodes", "1", "--steps", "5", rc=code)
        check(needle in p.stderr, f"seats {seats}: {p.stderr}")
        p = run("serve", path, "--http", "0", rc=2 if name == "policy" else 1, timeout=30)
        check(needle.replace("is not a policy of this scenario", "is neither") in p.stderr
              if name != "policy" else "seats.expert_0: 'scriptd' is neither" in p.stderr,
              f"serve, seats {seats}: {p.stderr}")
    finally:
        os.remove(path)
p = run("eval", SOLO, "--episodes", "1", "--set", 'seats.expert_0="random"', rc=2)
check("--set seats.expert_0: give the scenario's seats with --seat AGENT=WHO" in p.stderr,
      p.stderr)

print(f"{checks} checks, {len(failures)} failed", file=sys.stderr)
sys.exit(1 if failures else 0)
