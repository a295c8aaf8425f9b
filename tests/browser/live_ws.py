#!/usr/bin/env python3
"""tests/browser/live_ws.py POLIS SRCDIR TMPDIR — `polis serve SCENARIO --http`: the live
episode's WebSocket protocols, driven by a small WebSocket client written here on Python's
standard library (the handshake and frames of RFC 6455, client side only).

Checks: the page is served; the seat protocol ("polis-seat") answers every bad message with a
clear error and stays up (bad JSON, not an object, unknown op, unknown seat, a policy's seat,
acting without a seat, a taken seat, a bad action, an action id out of range, an illegal
action); a person takes a free human seat, gets the legal actions with their docs, and a move
they send is the action of the streamed step line, which moves the agent in the engine; the
game waits for the human seat (waiting mode); and with --tick-ms and --record two watchers
("polis-follow") get identical bytes, equal to the recording, which `polis replay --verify`
accepts; bad command lines exit 2 naming the problem."""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wsclient import WS, serve_live, stop_live, take  # noqa: E402

POLIS, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
SCENARIO = os.path.join(SRC, "rulesets", "gather", "gather.json")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def start(*extra):
    p, port, _ = serve_live(POLIS, SCENARIO, *extra)
    return p, port, p.url


def stop(p):
    rc, err = stop_live(p, 10)
    check(rc == 0, "polis serve --http exits 0 on SIGTERM (got %r)" % rc)
    return err


def lines_until(ws, pred, timeout=10):
    """Reads the record stream until pred(lines) holds; returns (bytes, lines)."""
    data = b""
    deadline = time.time() + timeout
    while True:
        lines = [json.loads(l) for l in data.split(b"\n")[:-1]]
        if pred(lines):
            return data, lines
        chunk = ws.recv(max(0.1, deadline - time.time()))
        if chunk is None:
            return data, [json.loads(l) for l in data.split(b"\n")[:-1]]
        data += chunk


os.makedirs(TMP, exist_ok=True)

# ---- bad command lines -----------------------------------------------------------------------
for args, needle in [
    (["--http", "nope"], "--http: 'nope' is not [HOST:]PORT"),
    (["--http", "0", "--seat", "agent_9=human"], "no agent named 'agent_9'"),
    (["--http", "0", "--seat", "agent_0=wizard"], "'wizard' is neither 'human', 'client' nor a policy"),
    (["--http", "0", "--seat", "agent_0"], "is not AGENT=human|client|POLICY"),
    (["--http", "0", "--tick-ms", "-1"], "--tick-ms: '-1'"),
    (["--http", "0", "--policy", "psychic"], "no policy 'psychic'"),
    (["--http", "10.1.2.3:0"], "not a loopback address"),
    (["--http", "0", "--bogus"], "unknown option '--bogus'"),
]:
    r = subprocess.run([POLIS, "serve", SCENARIO, *args], capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and needle in r.stderr,
          "%s: exit 2 with %r (got %d: %s)" % (args, needle, r.returncode, r.stderr.strip()))

# a scenario that does not load, a port in use: exit 1 with the reason
bad = os.path.join(TMP, "bad.json")
with open(bad, "w") as f:
    f.write('{"polis": 1, "name": "bad", "agents": 2, "plugins": [{"name": "no_such_plugin"}]}')
r = subprocess.run([POLIS, "serve", bad, "--http", "0"], capture_output=True, text=True, timeout=30)
check(r.returncode == 1 and "no_such_plugin" in r.stderr, "a bad scenario: exit 1 (%d: %s)" % (r.returncode, r.stderr))
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
r = subprocess.run([POLIS, "serve", SCENARIO, "--http", "127.0.0.1:%d" % busy.getsockname()[1]],
                   capture_output=True, text=True, timeout=30)
check(r.returncode == 1 and "cannot listen on 127.0.0.1:" in r.stderr,
      "a busy port: exit 1 (%d: %s)" % (r.returncode, r.stderr))
busy.close()

# ---- waiting mode: a human seat, the seat protocol's errors ------------------------------------
p, port, url = start("--seat", "agent_0=human", "--seed", "3")
check(url.endswith("/?live=1"), "the URL opens the page in live mode: " + url)
def get_page(host, origin=None):
    page = socket.create_connection(("127.0.0.1", port), timeout=10)
    req = "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n" % host
    if origin:
        req += "Origin: %s\r\n" % origin
    page.sendall((req + "\r\n").encode())
    body = b""
    while True:
        try:
            c = page.recv(65536)
        except ConnectionError:
            break
        if not c:
            break
        body += c
    page.close()
    return body


body = get_page("127.0.0.1:%d" % port)
check(body.startswith(b"HTTP/1.1 200") and b"polis viewer" in body, "the page is served")
# a name that resolves to the server (DNS rebinding) and another site's page are refused
for host, origin in [("x", None), ("evil.example:%d" % port, "http://evil.example:%d" % port),
                     ("127.0.0.1:%d" % port, "http://evil.example")]:
    body = get_page(host, origin)
    check(body.startswith(b"HTTP/1.1 403") and b"polis viewer" not in body,
          "Host %s, Origin %s: refused (got %r)" % (host, origin, body[:40]))

watch = WS(port, "polis-follow")
_, lines = lines_until(watch, lambda ls: len(ls) >= 3)
check([l.get("t") for l in lines[:3]] == ["header", "reset", "key"],
      "the stream starts with header, reset, key: %s" % [l.get("t") for l in lines[:3]])
check(lines[0].get("policies") == ["human", "random", "random", "random"],
      "the header names who plays each seat: %s" % lines[0].get("policies"))
x0, y0 = lines[2]["agents"][0]["x"], lines[2]["agents"][0]["y"]

seat = WS(port, "polis-seat")
hello = seat.json()
check(hello["type"] == "seats" and [s["agent"] for s in hello["seats"] if s["free"]] == ["agent_0"],
      "on connecting, the seats: only agent_0 is free: %s" % hello)
check(hello["mode"] == "wait" and hello["tick"] == 0, "waiting mode at tick 0: %s" % hello)

for msg, code, needle in [
    ("{not json", "bad_json", "malformed JSON at byte"),
    ("[1, 2]", "bad_request", "a message is a JSON object with \"op\""),
    ({"op": "dance"}, "bad_request", "unknown op \"dance\""),
    ({"op": "act", "action": "move_north"}, "no_seat", "take a seat first"),
    ({"op": "take"}, "bad_request", "needs \"agent\""),
    (take("agent_9"), "unknown_seat", "no agent named \"agent_9\""),
    (take("agent_1"), "not_human", "played by the policy random"),
]:
    r = seat.ask(msg)
    check(r.get("type") == "error" and r.get("code") == code and needle in r.get("message", ""),
          "%r -> %s (%r): got %s" % (msg, code, needle, r))

other = WS(port, "polis-seat")
other.json()
turn = seat.ask(take("agent_0"))
check(turn.get("type") == "turn" and turn.get("agent") == "agent_0" and turn.get("tick") == 0,
      "taking agent_0's seat answers with its turn: %s" % turn)
legal = {a["name"]: a for a in turn.get("legal", [])}
check("noop" in legal and all("doc" in a for a in legal.values()) and
      legal.get("move_east", {}).get("doc") == "move to x+1" or "move_east" not in legal,
      "the legal actions come with their docs: %s" % list(legal.values())[:2])

r = other.json()
check(r.get("type") == "seats" and r.get("changed") and not r["seats"][0]["free"],
      "the other page is told the seat was taken: %s" % r)
r = other.ask(take("agent_0"))
check(r.get("code") == "seat_taken", "a second page cannot take a taken seat: %s" % r)
r = other.ask({"op": "seats"})
check([s["free"] for s in r["seats"]] == [False, False, False, False] and
      not any(s["yours"] for s in r["seats"]), "the seats show agent_0 taken: %s" % r)

for msg, code, needle in [
    ({"op": "act", "action": "fly"}, "bad_action", "fly"),
    ({"op": "act", "action": 99}, "bad_action", "99 is not an action id (0..4)"),
    ({"op": "act", "action": 1.5}, "bad_action", "not an action id"),
    ({"op": "act"}, "bad_request", "needs \"action\""),
    ({"op": "act", "plan": 7}, "bad_request", "\"plan\" must be a plan command"),
    ({"op": "act", "plan": "GATHER 3 wood"}, "bad_plan", "agent_0"),
    (take("agent_1"), "not_human", "agent_1"),
]:
    r = seat.ask(msg)
    check(r.get("type") == "error" and r.get("code") == code and needle in r.get("message", ""),
          "%r -> %s (%r): got %s" % (msg, code, needle, r))
illegal = [n for n in ("move_north", "move_south", "move_west", "move_east") if n not in legal]
for name in illegal:
    r = seat.ask({"op": "act", "action": name})
    check(r.get("code") == "illegal_action" and "not legal at tick 0" in r.get("message", ""),
          "%s (masked at tick 0) is refused as illegal: %s" % (name, r))

# nothing moves while the human has not acted
time.sleep(0.5)
watch.s.settimeout(0.01)
try:
    extra = watch.recv(0.3)
except TimeoutError:
    extra = b""
check(not extra, "waiting mode: no tick before the human acts (got %r)" % extra[:80])

# a legal move: the step line carries it, and the agent is where the move takes it
moves = {"move_north": (0, -1), "move_south": (0, 1), "move_west": (-1, 0), "move_east": (1, 0)}
move = next(n for n in moves if n in legal)
r = seat.ask({"op": "act", "action": move})
check(r.get("type") == "accepted" and r.get("action") == move and r.get("tick") == 0,
      "the move is accepted: %s" % r)
turn = seat.json()
check(turn.get("type") == "turn" and turn.get("tick") == 1 and not turn.get("acted"),
      "after the tick the seat gets its next turn: %s" % turn)
_, lines = lines_until(watch, lambda ls: any(l.get("t") == "step" for l in ls))
step = next(l for l in lines if l.get("t") == "step")
check(step["tick"] == 1 and step["actions"][0] == list(moves).index(move) + 1 and
      step["illegal"][0] == 0, "the step line has agent_0's %s: %s" % (move, step["actions"]))
pos = dict(step.get("agents", []))
dx, dy = moves[move]
check(0 in pos and (pos[0]["x"], pos[0]["y"]) == (x0 + dx, y0 + dy),
      "agent_0 moved from (%d, %d) by %s in the engine: %s" % (x0, y0, move, pos.get(0)))
check({"agent": 0, "kind": "action", "text": move} in step.get("msgs", []),
      "the step line's msgs say what the person sent: %s" % step.get("msgs"))

# a text action through the scenario's parser, by id, and leaving the seat
r = seat.ask({"op": "act", "action": 0})
check(r.get("type") == "accepted" and r.get("action") == "noop", "an action id: %s" % r)
check(seat.json().get("tick") == 2, "tick 2 after the second action")
r = seat.ask({"op": "leave"})
check(r.get("type") == "seats" and r["seats"][0]["free"], "leave frees the seat: %s" % r)
r = other.json()
check(r.get("changed") and r["seats"][0]["free"], "the other page is told the seat is free: %s" % r)
r = other.ask(take("agent_0"))
check(r.get("type") == "turn" and r.get("tick") == 2, "another page takes the freed seat: %s" % r)
other.close()  # a page that goes away frees its seat too
time.sleep(0.2)
r = seat.ask(take("agent_0"))
check(r.get("type") == "turn", "the seat of a closed page is free again: %s" % r)
check(seat.changes == 2, "the seat page was told of the other's take and close (%d)" % seat.changes)
# a long message is refused, the server stays up
r = seat.ask(json.dumps({"op": "seats", "pad": "x" * 70000}))
check(r.get("code") == "too_long", "a message over 64 KiB is refused: %s" % r)
check(seat.ask({"op": "seats"}).get("type") == "seats", "the seat socket still answers")
seat.close()
watch.close()
err = stop(p)
check("agent agent_0's seat taken" in err, "the server logs the seat: %s" % err)

# ---- fixed rate: two watchers, the recording, replay ------------------------------------------
rec = os.path.join(TMP, "live.jsonl")
if os.path.exists(rec):
    os.remove(rec)
p, port, _ = start("--seat", "agent_2=human", "--tick-ms", "2", "--record", rec, "--seed", "5",
                   "--policy", "random", "--episodes", "1")
w1 = WS(port, "polis-follow")
w2 = WS(port, "polis-follow")
done = lambda ls: any(l.get("t") == "end" for l in ls)
b1, l1 = lines_until(w1, done, 60)
b2, l2 = lines_until(w2, done, 60)
check(done(l1) and b1 == b2, "two watchers get identical lines (%d and %d bytes)" % (len(b1), len(b2)))
steps = [l for l in l1 if l.get("t") == "step"]
check(len(steps) == 200 and all(s["actions"][2] == 0 for s in steps),
      "fixed rate: 200 ticks, the absent human's agent does noop (%d steps)" % len(steps))
err = stop(p)
with open(rec, "rb") as f:
    check(f.read() == b1, "--record writes the same lines as the stream")
r = subprocess.run([POLIS, "replay", rec, "--verify"], capture_output=True, text=True, timeout=60)
check(r.returncode == 0, "polis replay --verify accepts the live recording: %s%s" % (r.stdout, r.stderr))

# ---- a game with masks and plans (survival): illegal actions, plan commands ---------------------
surv = os.path.join(SRC, "rulesets", "survival", "survival_classic.json")
p, port, _ = serve_live(POLIS, surv, "--seat", "agent_0=human")
watch = WS(port, "polis-follow")
seat = WS(port, "polis-seat")
seat.json()
turn = seat.ask(take("agent_0"))
names = [a["name"] for a in turn.get("legal", [])]
usages = [q["usage"] for q in turn.get("plans", [])]
check(any(u.startswith("COLLECT") for u in usages) and all(q["doc"] for q in turn["plans"]),
      "the turn lists the game's plan commands with their docs: %s" % usages)
check("place_table" not in names and "noop" in names,
      "crafting is not legal at the start: %s" % names)
r = seat.ask({"op": "act", "action": "place_table"})
check(r.get("code") == "illegal_action" and "agent_0: action place_table is not legal at tick 0"
      in r.get("message", ""), "a masked action is refused as illegal: %s" % r)
r = seat.ask({"op": "act", "plan": "COLLECT 3 unobtainium"})
check(r.get("code") == "bad_plan" and "COLLECT" in r.get("message", ""),
      "a plan command the macro refuses: %s" % r)
r = seat.ask({"op": "act", "plan": "COLLECT 1 wood"})
check(r.get("type") == "accepted" and r.get("plan") == "COLLECT 1 wood", "a plan is accepted: %s" % r)
# waiting mode: an agent following a plan has acted, so the game runs on by itself until the
# plan ends (here after two ticks: a tree is next to the start)
_, lines = lines_until(watch, lambda ls: sum(l.get("t") == "step" for l in ls) >= 2, 30)
steps = [l for l in lines if l.get("t") == "step"]
check(len(steps) >= 2 and {"agent": 0, "kind": "plan", "text": "COLLECT 1 wood"} in steps[0].get("msgs", []),
      "the plan drives the agent tick after tick, its command in the first step's msgs: %s"
      % (steps[0].get("msgs") if steps else None))
check(any(s["actions"][0] != 0 for s in steps), "the plan's actions are not all noop")
seat.close()
watch.close()
stop(p)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("live_ws: all checks passed")
