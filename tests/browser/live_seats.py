#!/usr/bin/env python3
"""tests/browser/live_seats.py POLIS SRCDIR TMPDIR — `polis serve SCENARIO --http ... --tcp`:
people, agent-protocol clients and policies in one live game.

Checks: one gather game of two episodes where agent_0 is a person (a "polis-seat" WebSocket
client), agent_1 an agent-protocol client (polis.protocol.Client over --tcp) and the others a
policy: the game waits for both, the client's step is answered after its tick with the
person's and the client's actions in the step line's msgs, the episode's end carries the
metrics, the second episode (seed + 1) begins by itself and the client joins it with
"reset"; the recording holds both episodes, names each seat's player in its header, equals
the watchers' stream and passes `polis replay --verify`. Every bad client message is
answered with an error naming it and the session goes on. At a fixed tick rate a client that
is late does noop. The scenario's "live" key sets the seats and the rate, --seat and
--tick-ms win over it, and its mistakes are named by JSON path. Survival (plans over
"advance"), Exploration (a society game) and Commons (Lua) are played live by a client too,
each recording verified by replay. Bad command lines exit 2 naming the problem."""
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from wsclient import WS, serve_live, stop_live, take  # noqa: E402

POLIS, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SRC, "sdk", "python"))
from polis.protocol import Client, ProtocolError  # noqa: E402

GATHER = os.path.join(SRC, "rulesets", "gather", "gather.json")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def start(scenario, *extra):
    """polis serve SCENARIO --http 127.0.0.1:0 EXTRA...: (process, http port, tcp port)."""
    return serve_live(POLIS, scenario, *extra)


def stop(p):
    rc, err = stop_live(p)
    check(rc == 0, "polis serve --http exits 0 on SIGTERM (got %r)" % rc)
    return err


class Stream:
    """A "polis-follow" watcher that keeps every byte it got."""

    def __init__(self, port):
        self.ws = WS(port, "polis-follow")
        self.data = b""

    def lines(self):
        return [json.loads(l) for l in self.data.split(b"\n")[:-1]]

    def until(self, pred, timeout=20):
        """Reads until pred(lines) holds; returns the lines."""
        deadline = time.time() + timeout
        while not pred(self.lines()):
            if time.time() > deadline:
                raise TimeoutError("the stream did not get there: %d lines" % len(self.lines()))
            chunk = self.ws.recv(max(0.1, deadline - time.time()))
            if chunk is None:
                break
            self.data += chunk
        return self.lines()

    def quiet(self, what):
        """Nothing new on the stream for a moment."""
        try:
            extra = self.ws.recv(0.4)
        except TimeoutError:
            extra = b""
        self.data += extra or b""
        check(not extra, "%s: no tick (got %r)" % (what, (extra or b"")[:80]))

    def close(self):
        self.ws.close()


def verify(rec, what):
    r = subprocess.run([POLIS, "replay", rec, "--verify"], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "%s: polis replay --verify accepts the recording: %s%s"
          % (what, r.stdout, r.stderr))
    return r.stdout


class RawClient:
    """The agent protocol over a plain socket: one line out, one line back."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.f = self.s.makefile("r", encoding="utf-8", newline="\n")

    def ask(self, line):
        self.s.sendall((line + "\n").encode())
        return json.loads(self.f.readline())

    def close(self):
        self.f.close()  # the socket's file holds the connection open too
        self.s.close()


def error_code(reply):
    return None if reply.get("ok") else reply["error"]["code"]


os.makedirs(TMP, exist_ok=True)

# ---- bad command lines and scenario "live" keys ------------------------------------------------
with open(GATHER) as f:
    gather_doc = json.load(f)

for args, needle in [
    (["--http", "0", "--seat", "agent_1=client"], "a client seat needs --tcp"),
    (["--http", "0", "--tcp", "0"], "--tcp: no seat is played by a client"),
    (["--http", "0", "--tcp", "nope", "--seat", "agent_1=client"], "--tcp: 'nope' is not [HOST:]PORT"),
    (["--http", "0", "--tcp", "10.0.0.1:0", "--seat", "agent_1=client"], "--tcp: 10.0.0.1 is not a loopback"),
    (["--http", "0", "--episodes", "x"], "--episodes: 'x'"),
    (["--http", "0", "--set", "live.tick_ms=5"], "--set live.tick_ms: set the live game with --seat"),
    (["--http", "0", "--agents", "zero"], "--agents"),
]:
    r = subprocess.run([POLIS, "serve", GATHER, *args], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and needle in r.stderr,
          "%s: exit 2 with %r (got %d: %s)" % (args, needle, r.returncode, r.stderr.strip()))

gdir = os.path.dirname(GATHER)
for live, code, needle in [
    ({"seats": {"agent_9": "human"}}, 2, "live.seats.agent_9: no agent named 'agent_9'"),
    ({"seats": {"agent_0": "wizard"}}, 2, "live.seats.agent_0: 'wizard' is neither"),
    ({"seats": {"agent_0": 3}}, 1, "live.seats.agent_0"),
    ({"tick_ms": -4}, 1, "live.tick_ms"),
    ({"episodes": "two"}, 1, "live.episodes"),
    ({"seat": {}}, 1, "live"),
    ("fast", 1, "live"),
]:
    path = os.path.join(gdir, ".live_seats_test.json")
    with open(path, "w") as f:
        json.dump(dict(gather_doc, live=live), f)
    try:
        r = subprocess.run([POLIS, "serve", path, "--http", "0"], capture_output=True, text=True,
                           timeout=30)
    finally:
        os.remove(path)
    check(r.returncode == code and needle in r.stderr,
          "scenario live %s: exit %d with %r (got %d: %s)" % (live, code, needle, r.returncode,
                                                              r.stderr.strip()))

# ---- a person, a client and policies in one game of two episodes (waiting mode) ------------------
rec = os.path.join(TMP, "mixed.jsonl")
if os.path.exists(rec):
    os.remove(rec)
p, port, tcp = start(GATHER, "--seat", "agent_0=human", "--seat", "agent_1=client",
                     "--seat", "agent_3=uniform", "--tcp", "127.0.0.1:0", "--seed", "3",
                     "--episodes", "2", "--set", "max_steps=6", "--record", rec)
watch = Stream(port)
seat = WS(port, "polis-seat")
hello = seat.json()
watch.until(lambda ls: any(l.get("t") == "key" for l in ls))
check([s["player"] for s in hello["seats"]] == ["human", "client", "random", "uniform"],
      "the seats say who plays each: %s" % hello["seats"])
check([s["agent"] for s in hello["seats"] if s["free"]] == ["agent_0", "agent_1"],
      "the person's and the client's seats are free: %s" % hello["seats"])
turn = seat.ask(take("agent_0"))
check(turn.get("type") == "turn", "the person takes agent_0: %s" % turn)
r = seat.ask(take("agent_1"))
check(r.get("code") == "not_human" and "client" in r.get("message", ""),
      "a page cannot take a client seat: %s" % r)

# bad client messages (a raw socket, joined first): each named, nothing ticks, the session goes on
raw = RawClient(tcp)
r = raw.ask('{"op": "step"}')
check(error_code(r) == "no_episode", "a step before joining: %s" % r)
r = raw.ask('{"op": "reset", "agents": ["agent_1"], "id": [7]}')
check(r.get("ok") and list(r["agents"]) == ["agent_1"] and r["id"] == [7], "the raw client joins: %s" % str(r)[:200])
r = seat.json()
check(r.get("changed") and not r["seats"][1]["free"], "the page is told the client took its seat: %s" % r)
# bad client messages: each named, nothing ticks, the session goes on
surplus = "x" * ((1 << 20) + 10)
for line, code, needle in [
    ("{not json", "bad_json", "malformed JSON at byte"),
    ('{"op": "describe"} trailing', "bad_json", "unexpected text at byte"),
    ("[1, 2]", "bad_request", "a request is a JSON object"),
    ('{"id": 4}', "bad_request", "\"op\" is missing"),
    ('{"op": "fly"}', "unknown_op", "unknown op \"fly\" (ops: describe, reset, step, advance, close)"),
    ('{"op": "reset", "seed": 9}', "bad_request", "the live server chooses the seeds"),
    ('{"op": "reset", "agents": "agent_1"}', "bad_request", "\"agents\" must be a non-empty array"),
    ('{"op": "reset", "agents": ["bob"]}', "unknown_agent", "no agent named \"bob\""),
    ('{"op": "reset", "agents": ["agent_0"]}', "not_client", "agent agent_0 is played by a person"),
    ('{"op": "reset", "agents": ["agent_2"]}', "not_client", "played by random"),
    ('{"op": "step", "actions": [1]}', "bad_request", "\"actions\" must be an object"),
    ('{"op": "step", "actions": {"bob": 1}}', "unknown_agent", "no agent named \"bob\""),
    ('{"op": "step", "actions": {"agent_2": 1}}', "not_your_seat", "agent agent_2 is not one of your seats (random plays it)"),
    ('{"op": "step", "actions": {"agent_0": 1}}', "not_your_seat", "human plays it"),
    ('{"op": "step", "actions": {"agent_1": 9}}', "bad_action", "action 9 is not an action id (0..4)"),
    ('{"op": "step", "actions": {"agent_1": [1]}}', "bad_request", "an action is an id, a name or text"),
    ('{"op": "step", "actions": {"agent_1": "dance wildly"}}', "bad_action", "cannot parse action \"dance wildly\""),
    ('{"op": "step", "actions": {"agent_1": {"plan": 3}}}', "bad_request", "must be a plan command"),
    ('{"op": "step", "actions": {"agent_1": {"plan": "GATHER 3 wood"}}}', "bad_plan", "agent_1"),
    ('{"op": "advance", "max_ticks": 0}', "bad_request", "\"max_ticks\" must be an integer in [1, 10000]"),
    (surplus, "line_too_long", "the limit is 1048576"),
]:
    r = raw.ask(line)
    check(error_code(r) == code and needle in r["error"]["message"],
          "%r -> %s (%r): got %s" % (line[:60], code, needle, str(r)[:300]))
watch.quiet("after the refused client messages")
r = raw.ask('{"op": "describe"}')
check(r["live"]["yours"] == ["agent_1"], "the raw client still holds its seat: %s" % r.get("live"))
check(raw.ask('{"op": "close", "id": 1}') == {"ok": True, "op": "close", "id": 1}, "close is answered")
check(raw.f.readline() == "", "and the connection is closed")
r = seat.json()
check(r.get("changed") and r["seats"][1]["free"], "the page is told the closed client's seat is free: %s" % r)


client = Client.connect("127.0.0.1", tcp, timeout=20)
d = client.describe()
check(d["live"]["seats"] == {"agent_0": "human", "agent_1": "client", "agent_2": "random",
                             "agent_3": "uniform"} and d["live"]["free"] == ["agent_1"]
      and d["live"]["mode"] == "wait" and d["live"]["episodes"] == 2 and not d["in_episode"],
      "describe tells the client the live game: %s" % d.get("live"))
check(d["actions"] == ["noop", "move_north", "move_south", "move_west", "move_east"]
      and d["scenario"] == "gather", "describe has the scenario's actions")
r = client.request("step", actions={})
check(error_code(r) == "no_episode" and "reset" in r["error"]["message"],
      "a step before joining: %s" % r)
first = client.reset()
check(list(first["agents"]) == ["agent_1"] and first["tick"] == 0 and first["seed"] == 3
      and first["episode"] == 0, "reset joins: the client's seat, tick 0, seed 3: %s"
      % {k: first.get(k) for k in ("tick", "seed", "episode")})
check(first["agents"]["agent_1"]["text"].startswith("You are agent_1")
      and "legal_actions" in first["agents"]["agent_1"], "the client gets its agent's views")
r = seat.json()
check(r.get("changed") and not r["seats"][1]["free"], "the page is told the client took its seat: %s" % r)

# the game waits for the client as it waits for the person
seat.ask({"op": "act", "action": "noop"})
watch.quiet("the person acted, the client has not")

legal_moves = lambda a: [m for m in ("move_north", "move_south", "move_west", "move_east")
                         if m in a["legal_actions"]]
mine = first["agents"]["agent_1"]
x0, y0 = mine["observation"]["gather"]["position"]
move = legal_moves(mine)[0]
text = move.replace("_", " ")
step = client.request("step", actions={"agent_1": text}, id="s1")
check(step.get("ok") and step["tick"] == 1 and step["ticks"] == 1 and step["id"] == "s1",
      "the client's step is answered after its tick: %s" % {k: step.get(k) for k in ("ok", "tick", "ticks", "id")})
dx, dy = {"move_north": (0, -1), "move_south": (0, 1), "move_west": (-1, 0), "move_east": (1, 0)}[move]
check(step["agents"]["agent_1"]["observation"]["gather"]["position"] == [x0 + dx, y0 + dy],
      "the client's %s moved agent_1 in the engine" % text)
turn = seat.json()
check(turn.get("type") == "turn" and turn.get("tick") == 1, "the person's next turn: %s" % turn)
lines = watch.until(lambda ls: any(l.get("t") == "step" for l in ls))
s1 = next(l for l in lines if l.get("t") == "step")
check(s1["actions"][0] == 0 and s1["actions"][1] == d["actions"].index(move),
      "the step line has the person's noop and the client's move: %s" % s1["actions"])
check({"agent": 0, "kind": "action", "text": "noop"} in s1.get("msgs", []) and
      {"agent": 1, "kind": "action", "text": text} in s1.get("msgs", []),
      "the step line's msgs say what each player sent: %s" % s1.get("msgs"))

other = Client.connect("127.0.0.1", tcp, timeout=20)
r = other.request("reset")
check(error_code(r) == "no_free_seat", "a second client finds no free seat: %s" % r)
r = other.request("reset", agents=["agent_1"])
check(error_code(r) == "seat_taken", "nor can it take the first one's: %s" % r)
other.close()

# play the first episode out: each tick the person moves and the client steps
totals = 0.0
while True:
    seat.ask({"op": "act", "action": "noop"})
    step = client.step({})  # left out: noop
    totals += step["agents"]["agent_1"]["reward"]
    seat.json()  # the person's turn
    if step["done"]:
        break
check(step["tick"] == 6 and step["agents"]["agent_1"]["truncated"],
      "the episode ends at max_steps: %s" % {k: step.get(k) for k in ("tick", "done")})
check("metrics" in step and step["metrics"]["steps"] == 6 and "reward.mean" in step["metrics"],
      "the reply that ends the episode has the metrics: %s" % step.get("metrics"))
r = client.request("step", actions={})
check(error_code(r) == "episode_over" and "join the next one" in r["error"]["message"],
      "after the end, a step asks to join the next episode: %s" % r)
second = client.reset()
check(second["episode"] == 1 and second["seed"] == 4 and second["tick"] == 0
      and list(second["agents"]) == ["agent_1"], "reset joins episode 1, seed 4: %s"
      % {k: second.get(k) for k in ("episode", "seed", "tick")})
# plans are not in gather: advance runs until max_ticks while the person acts each tick
for _ in range(6):
    seat.ask({"op": "act", "action": "noop"})
    step = client.step({"agent_1": 0})
    seat.json()
    if step["done"]:
        break
check(step["done"] and step["tick"] == 6, "the second episode is played out too")
r = client.request("reset")
check(error_code(r) == "no_episode" and "every episode (--episodes) has been played" in r["error"]["message"],
      "after the last episode, reset says so: %s" % r)
r = seat.ask({"op": "seats"})
check(r.get("over") and r.get("episode") == 1, "the page is told the game is over: %s" % r)
lines = watch.until(lambda ls: sum(l.get("t") == "end" for l in ls) == 2)
data = watch.data
client.close()
seat.close()
watch.close()
err = stop(p)
check("client 1 takes agent agent_1's seat" in err and "all 2 episodes played" in err,
      "the server logs the client's seat and the episodes: %s" % err)
with open(rec, "rb") as f:
    recorded = f.read()
check(recorded == data, "the recording equals the watchers' stream (%d and %d bytes)"
      % (len(recorded), len(data)))
head = lines[0]
check(head.get("policies") == ["human", "client", "random", "uniform"],
      "the header names each seat's player: %s" % head.get("policies"))
check([l["seed"] for l in lines if l.get("t") == "reset"] == [3, 4],
      "two episodes, seeds 3 and 4: %s" % [l.get("seed") for l in lines if l.get("t") == "reset"])
ends = [l for l in lines if l.get("t") == "end"]
check(all(e.get("metrics") and e["metrics"].get("steps") == 6 for e in ends),
      "each end line has the episode's metrics: %s" % [e.get("metrics") for e in ends])
out = verify(rec, "the mixed game")
check("2 episodes" in out, "replay checks both episodes: %s" % out)

# ---- fixed rate: a late client does noop; "ticks" counts the ticks since its last reply ---------
p, port, tcp = start(GATHER, "--seat", "agent_1=client", "--seat", "agent_3=client", "--tcp",
                     "127.0.0.1:0", "--tick-ms", "40", "--seed", "5")
watch = Stream(port)
client = Client.connect("127.0.0.1", tcp, timeout=20)
j = client.reset(agents=["agent_1"])
check(list(j["agents"]) == ["agent_1"], "reset(agents=...) takes just the seats named: %s" % list(j["agents"]))
both = Client.connect("127.0.0.1", tcp, timeout=20)
check(list(both.reset()["agents"]) == ["agent_3"], "reset() takes the client seats still free")
both.close()
time.sleep(0.5)  # the client thinks for many ticks
step = client.step({"agent_1": "noop"})
check(step["ticks"] >= 5 and step["tick"] - j["tick"] == step["ticks"],
      "at a fixed rate the reply counts the ticks since the last one: joined at %d, now %d, "
      "ticks %d" % (j["tick"], step["tick"], step["ticks"]))
lines = watch.until(lambda ls: sum(l.get("t") == "step" for l in ls) >= step["tick"])
late = [l for l in lines if l.get("t") == "step" and j["tick"] < l["tick"] < step["tick"]]
check(late and all(l["actions"][1] == 0 for l in late) and
      all(not any(m["agent"] == 1 for m in l.get("msgs", [])) for l in late),
      "the late client's agent did noop in the ticks it missed (%d ticks)" % len(late))
check(client.describe()["live"]["mode"] == "fixed", "describe says the rate is fixed")
client.close()
time.sleep(0.2)
c2 = Client.connect("127.0.0.1", tcp, timeout=20)
check(list(c2.reset()["agents"]) == ["agent_1", "agent_3"],
      "the closed clients' seats are free for the next one, which takes both")
c2.close()
watch.close()
stop(p)

# ---- a client that goes away while its step waits: its seat and its action go with it ---------
p, port, tcp = start(GATHER, "--seat", "agent_0=human", "--seat", "agent_1=client", "--tcp",
                     "127.0.0.1:0", "--seed", "6")
watch = Stream(port)
watch.until(lambda ls: any(l.get("t") == "key" for l in ls))
seat = WS(port, "polis-seat")
seat.json()
seat.ask(take("agent_0"))
gone = RawClient(tcp)
check(gone.ask('{"op": "reset"}').get("ok"), "the first client joins")
gone.s.sendall(b'{"op": "step", "actions": {"agent_1": "move_north"}}\n')
time.sleep(0.2)
gone.close()
time.sleep(0.2)
seat.ask({"op": "act", "action": "noop"})
watch.quiet("the person acted, the client seat is free again")
nxt = Client.connect("127.0.0.1", tcp, timeout=20)
check(nxt.reset().get("tick") == 0, "another client takes the seat at tick 0")
step = nxt.step({})
lines = watch.until(lambda ls: any(l.get("t") == "step" for l in ls))
s1 = next(l for l in lines if l.get("t") == "step")
check(step["tick"] == 1 and s1["actions"][1] == 0 and not any(m["agent"] == 1 for m in s1.get("msgs", [])),
      "the gone client's move was dropped with its seat: %s %s" % (s1["actions"], s1.get("msgs")))
nxt.close()
seat.close()
watch.close()
err = stop(p)
check("client 1 left its seats" in err, "the server logs the client that left: %s" % err)

# ---- the scenario's "live" key: seats and rate from the file, the command line wins ------------
path = os.path.join(gdir, ".live_seats_key.json")
with open(path, "w") as f:
    json.dump(dict(gather_doc, live={"_doc": "a test", "seats": {"agent_2": "human", "agent_3": "uniform"},
                                     "tick_ms": 5, "episodes": 1}), f)
try:
    p, port, _ = start(path)
    seat = WS(port, "polis-seat")
    hello = seat.json()
    check([s["player"] for s in hello["seats"]] == ["random", "random", "human", "uniform"]
          and hello["mode"] == "fixed" and hello["tick_ms"] == 5,
          "the scenario's live key sets the seats and the rate: %s" % hello)
    seat.close()
    stop(p)
    p, port, _ = start(path, "--seat", "agent_3=human", "--tick-ms", "0")
    seat = WS(port, "polis-seat")
    hello = seat.json()
    check([s["player"] for s in hello["seats"]] == ["random", "random", "human", "human"]
          and hello["mode"] == "wait", "--seat and --tick-ms win over the key: %s" % hello)
    seat.close()
    stop(p)
finally:
    os.remove(path)

# ---- other games: a client plays each live, recorded and verified ------------------------------
for rel, sets, actions, what in [
    ("survival/survival_classic.json", ["max_steps=40"], None, "survival: plans over advance"),
    ("exploration/exploration.json", ["max_steps=30"], None, "exploration (society): plans"),
    ("commons/commons_closed.json", ["max_steps=20"], "text", "commons (Lua): actions by name"),
]:
    scen = os.path.join(SRC, "rulesets", rel)
    rec = os.path.join(TMP, os.path.basename(rel) + "l")
    if os.path.exists(rec):
        os.remove(rec)
    extra = []
    for s in sets:
        extra += ["--set", s]
    # the first agent's name differs between games: ask describe of a --stdio server
    with Client.spawn(scen, polis=POLIS, sets=sets) as probe:
        info = probe.describe()
    agent = info["agents"][0]
    p, port, tcp = start(scen, "--seat", agent + "=client", "--tcp", "127.0.0.1:0",
                         "--episodes", "1", "--record", rec, "--seed", "2", *extra)
    client = Client.connect("127.0.0.1", tcp, timeout=30)
    reply = client.reset()
    ticks = 0
    ended = 0
    try:
        while not reply["done"] and ticks < 60:
            view = reply["agents"][agent]
            if info["macros"] and actions is None:
                plan = (view.get("plan") or {}).get("status") == "running"
                cmd = {"survival": "COLLECT 1 wood", "exploration": "EXPLORE"}
                kind = "survival" if "survival" in rel else "exploration"
                acts = {} if plan else {agent: {"plan": cmd[kind]}}
                reply = client.advance(acts, max_ticks=10)
                check(reply["stopped"] in ("plan_ended", "max_ticks", "episode_done"),
                      "%s: advance says why it stopped: %s" % (what, reply.get("stopped")))
                p_ = reply["agents"][agent].get("plan")
                if p_ and p_["status"] in ("done", "impossible"):
                    ended += 1
            else:
                legal = view["legal_actions"]
                pick = [a for a in legal if a != "noop"] or legal
                reply = client.step({agent: pick[ticks % len(pick)]})
            ticks += reply.get("ticks", 1)
    except ProtocolError as e:
        check(False, "%s: %s" % (what, e))
    check(reply["done"], "%s: the client played the episode to its end (tick %s)"
          % (what, reply.get("tick")))
    if info["macros"] and actions is None:
        check(ended > 0, "%s: some plan ended and was reported (%d)" % (what, ended))
    client.close()
    time.sleep(0.3)
    stop(p)
    with open(rec) as f:
        lines = [json.loads(l) for l in f]
    check(lines[0]["policies"][0] == "client" and lines[-1].get("t") == "end",
          "%s: the recording names the client and ends: %s" % (what, lines[0]["policies"]))
    check(any(m["agent"] == 0 for l in lines if l.get("t") == "step" for m in l.get("msgs", [])),
          "%s: the client's messages are recorded" % what)
    verify(rec, what)

# ---- examples/llm_agent.py --connect: the LLM-agent example joins a live game ----------------
example = os.path.join(SRC, "examples", "llm_agent.py")
for rel, seat, steps, needle in [
    ("gather/gather.json", "agent_2", "6", "tick 6: agent_2 "),
    ("exploration/exploration.json", None, "12", "plans ended: "),
]:
    scen = os.path.join(SRC, "rulesets", rel)
    with Client.spawn(scen, polis=POLIS) as probe:
        agents = probe.describe()["agents"]
    seat = seat or agents[1]
    p, port, tcp = start(scen, "--seat", seat + "=client", "--tcp", "127.0.0.1:0", "--episodes", "1")
    r = subprocess.run([sys.executable, example, "--connect", "127.0.0.1:%d" % tcp, "--steps", steps,
                        "--check", "--sloppy", "0.3"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "joined the live game at tick 0, episode 0: playing " + seat in r.stdout
          and needle in r.stdout,
          "llm_agent.py --connect plays %s's client seat on %s: %d %s%s" % (seat, rel, r.returncode,
                                                                       r.stdout[-600:], r.stderr[-600:]))
    stop(p)
r = subprocess.run([sys.executable, example, GATHER, "--connect", "127.0.0.1:1"], capture_output=True,
                   text=True, timeout=60)
check(r.returncode == 2 and "either a scenario or --connect" in r.stderr,
      "the example refuses a scenario with --connect: %s" % r.stderr)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("live_seats: all checks passed")
