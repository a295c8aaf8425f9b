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
reply({"ok": True, "name": "first-legal (stdlib)", "views": ["flat"]})
acts = 0
while True:
    line = rd.readline()
    if not line:
        break
    m = json.loads(line)
    if m["op"] == "close":
        break
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
srv = subprocess.Popen([POLIS, "serve", GATHER, "--http", "0", "--seat", "agent_0=py:first_legal",
                        "--seat", "agent_2=" + cmd("first"), "--episodes", "1", "--set",
                        "max_steps=25", "--record", rec], env=ENV, stdout=subprocess.DEVNULL,
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
# A SIGTERM that lands between the server's check of its flag and its next poll is only seen
# at the poll's next wake-up (engine/cli/transport/http.c, cli_lws_run): send it until it ends.
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
    check(False, "the live server did not end on SIGTERM")
check(done, "the live game with process seats ran to its end: " + "".join(log)[-800:])
if done:
    with open(rec) as f:
        head = json.loads(f.readline())
    check(head.get("policies", [None])[0] == "py:first_legal" and
          head["policies"][2].startswith("cmd:"), f"the recording names the seats: {head.get('policies')}")
    run("replay", rec, "--verify")

print(f"{checks} checks, {len(failures)} failed", file=sys.stderr)
sys.exit(1 if failures else 0)
