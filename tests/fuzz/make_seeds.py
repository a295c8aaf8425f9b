#!/usr/bin/env python3
"""tests/fuzz/make_seeds.py — writes the generated seed inputs of tests/fuzz/corpus/:

  parse/seed_*      action words and JSON actions of every shipped game, and plan commands
                    (fuzz_parse: game byte, agent byte, text)
  protocol/seed_*   request lines of the agent protocol, taken from docs/clients.md and the
                    CLI tests (tests/cli/serve*.sh, serve_tcp.py), as whole sessions
                    (fuzz_protocol: scenario byte, lines)
  game/seed_*       short programs of steps, text actions, plans, policies and views
                    (fuzz_game, see fuzz_game.c for the byte format)

Scenarios and Lua scripts need no generated seeds: the harnesses read the shipped files.
Run it after changing a game's words or the protocol; regression inputs (crash-*, named
after what they found) sit beside the seeds and are never rewritten.

  /usr/bin/python3 tests/fuzz/make_seeds.py
"""
import json
import os
import random
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

# fuzz_parse's games, in its SCENARIOS order.
WORDS = [
    # gather
    ["north", "move north", "go  south", "Go West.", "MOVE_EAST", "stay", "wait", "noop",
     '{"action": "move", "direction": "north"}',
     '{"direction":"East","why":[1,{"a":null}],"action":"go"}',
     '{"action": "move", "direction": "\\u006eorth"}', '{"action": "stay"}', "move_north "],
    # exploration (society)
    ["move_up", "go left", "produce", "craft", "pick wood", "pick up stone", "dump wood",
     "drop coal", "no_act", '"pick wood"', '{"action": "move", "kwargs": {"dx": 1, "dy": 0}}',
     '{"action": "pick_by_name", "kwargs": {"resource_name": "wood"}}', '{"action": "pick"}',
     "GATHER 3 wood", "CRAFT 1 hammer", "EXPLORE MAP 20", "DUMP 2 stone", "GOTO 3 4"],
    # contract
    ["join group 1", "choose 0", "group 2", "JOIN_GROUP_3", "join group 99", "noop"],
    # negotiation
    ["propose 0.6", "propose 60%", "accept", "decline", "request 1", "reject", "request_2"],
    # social_structure (dynamic)
    ["noop", "move_up", "pick wood", "produce", "GATHER wood"],
    # commons (Lua)
    ["forward", "backward", "step left", "turn right", "zap", "fire_zap", "stay",
     "go to [3, 4]", "walk to position 2 5", '{"action": "forward"}',
     '{"action": "go_to", "direction": "x"}', "HARVEST 2", "GOTO 3 4"],
]

# fuzz_protocol's scenarios, in its SCENARIOS order.
N_PROTOCOL_SCENARIOS = 3


def write(sub, name, data):
    os.makedirs(os.path.join(CORPUS, sub), exist_ok=True)
    with open(os.path.join(CORPUS, sub, name), "wb") as f:
        f.write(data)


def clear(sub):
    d = os.path.join(CORPUS, sub)
    if os.path.isdir(d):
        for name in os.listdir(d):
            if name.startswith("seed_"):
                os.remove(os.path.join(d, name))


def requests(path):
    """Every JSON object with an "op" member written in the file, in order."""
    text = open(path, encoding="utf-8").read()
    dec = json.JSONDecoder()
    out = []
    for m in re.finditer(r'\{\s*"op"', text):
        try:
            obj, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("op"), str) and "ok" not in obj:
            out.append(json.dumps(obj, separators=(",", ":")))
    return out


def main():
    for sub in ("parse", "protocol", "game"):
        clear(sub)

    n = 0
    for game, words in enumerate(WORDS):
        for agent, w in enumerate(words):
            write("parse", "seed_%03d" % n, bytes([game, agent % 4]) + w.encode())
            n += 1

    sources = [os.path.join(ROOT, "docs", "clients.md")] + [
        os.path.join(ROOT, "tests", "cli", f)
        for f in ("serve.sh", "serve_plan.sh", "serve_tcp.py")]
    n = 0
    for src in sources:
        reqs = requests(src)
        if not reqs:
            continue
        for sc in range(N_PROTOCOL_SCENARIOS):
            # the file's requests as one session, then in chunks after a reset
            write("protocol", "seed_%03d" % n, bytes([sc]) + ("\n".join(reqs) + "\n").encode())
            n += 1
            for i in range(0, len(reqs), 6):
                chunk = ['{"op":"reset","seed":%d}' % i] + reqs[i:i + 6]
                # odd selector bytes choose --on-bad-action noop
                sel = sc + N_PROTOCOL_SCENARIOS * (i // 6 % 2)
                write("protocol", "seed_%03d" % n, bytes([sel]) + ("\n".join(chunk) + "\n").encode())
                n += 1

    rng = random.Random(13)
    for i in range(24):
        game = i % len(WORDS)
        out = bytearray(rng.getrandbits(8) for _ in range(8))
        for _ in range(rng.randint(4, 40)):
            op = rng.choice([0, 0, 1, 2, 3, 4, 5, 6, 7])
            out.append(op + 8 * rng.randint(0, 31))
            if op <= 3:
                out += bytes(rng.randint(0, 247) for _ in range(8))
            elif op in (4, 5):
                text = rng.choice(WORDS[game]).encode()
                out += bytes([rng.randint(0, 7), len(text)]) + text
            else:
                out.append(rng.getrandbits(8))
        write("game", "seed_%03d" % i, bytes(out))


if __name__ == "__main__":
    main()
