#!/usr/bin/env python3
"""Writes polis recordings (docs/recording.md, version 1) for the viewer's browser tests.

    make_fixture.py OUTDIR

Each recording comes from a small simulation kept here in full (not from diffs), written the
way the recorder writes one: a header, per episode a reset, a keyframe at tick 0, one step line
per tick with what changed, a keyframe every keyframe_every ticks, an end line. Beside them,
expected.json holds the truth the tests check the page against: every agent's cell at every
tick, the social edges at every tick, and every event with its tick.

  society.jsonl        a society-like map (terrain + resources), 4 agents moving and picking up
                       resources, groups and edges that change over the ticks, events, messages
                       and plans; two episodes
  society.jsonl.gz     the same, gzip-compressed
  survival.jsonl       a survival-like map: mobs (things) that appear, move and disappear,
                       vitals that fall, an agent that dies
  truncated.jsonl      society.jsonl cut in the middle of a line of the first episode
  truncated.jsonl.gz   society.jsonl.gz cut in the middle of the gzip stream
  badline.jsonl        society.jsonl with line 7 replaced by text that is not JSON
"""
import gzip
import json
import os
import random
import sys

KEY_EVERY = 10

SOCIETY_KINDS = [
    {"name": "grass", "glyph": ".", "color": "#2e5e1e", "shape": "square"},
    {"name": "water", "glyph": "~", "color": "#1d3f7a", "shape": "square"},
    {"name": "wall", "glyph": "#", "color": "#555555", "shape": "square"},
    {"name": "wood", "glyph": "w", "color": "#8b5a2b", "shape": "triangle"},
    {"name": "stone", "glyph": "s", "color": "#9a9a9a", "shape": "diamond"},
    {"name": "berry", "glyph": "b", "color": "#7a1fa0", "shape": "dot"},
]
SURVIVAL_KINDS = [
    {"name": "grass", "glyph": ".", "color": "#24401a", "shape": "square"},
    {"name": "tree", "glyph": "T", "color": "#0f5f2f", "shape": "triangle"},
    {"name": "lava", "glyph": "^", "color": "#6a2000", "shape": "square"},
    {"name": "zombie", "glyph": "Z", "color": "#b8ff3a", "shape": "cross"},
    {"name": "cow", "glyph": "C", "color": "#c8a080", "shape": "circle"},
]
ACTIONS = [
    {"name": "noop", "doc": "Do nothing."},
    {"name": "up", "doc": "Move one cell up."},
    {"name": "right", "doc": "Move one cell right."},
    {"name": "down", "doc": "Move one cell down."},
    {"name": "left", "doc": "Move one cell left."},
    {"name": "pick", "doc": "Pick up the resource on the agent's cell."},
]
DIRS = {1: (0, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 0)}


def rle(cells):
    out = []
    for k in cells:
        if out and out[-2] == k:
            out[-1] += 1
        else:
            out += [k, 1]
    return out


class World:
    """The full state of a small grid game; diffs are taken between snapshots."""

    def __init__(self, w, h, nlayers, nagents, nstats):
        self.w, self.h = w, h
        self.layers = [[-1] * (w * h) for _ in range(nlayers)]
        self.things = {}  # id -> [kind, x, y, label]
        self.agents = [{"x": -1, "y": -1, "facing": 0, "alive": 1, "stats": [0] * nstats, "return": 0.0}
                       for _ in range(nagents)]
        self.nodes = {}  # id -> [kind, label]
        self.edges = {}  # (from, to, kind) -> weight

    def snapshot(self):
        return json.loads(json.dumps({
            "layers": self.layers, "things": self.things, "agents": self.agents,
            "nodes": self.nodes, "edges": [[list(k), v] for k, v in self.edges.items()]}))

    def key(self, tick):
        return {"t": "key", "tick": tick, "hash": "%016x" % (hash_state(self) & (2**64 - 1)),
                "tiles": [rle(l) for l in self.layers],
                "things": [[i] + v for i, v in sorted(self.things.items())],
                "agents": json.loads(json.dumps(self.agents)),
                "nodes": [[i] + v for i, v in sorted(self.nodes.items())],
                "edges": [[f, t, k, w] for (f, t, k), w in sorted(self.edges.items())]}

    def diff(self, before):
        d = {}
        tiles = []
        for li, layer in enumerate(self.layers):
            for p, k in enumerate(layer):
                if before["layers"][li][p] != k:
                    tiles.append([li, p % self.w, p // self.w, k])
        if tiles:
            d["tiles"] = tiles
        bt = {int(k): v for k, v in before["things"].items()}
        th = {"add": [], "move": [], "del": []}
        for i, v in sorted(self.things.items()):
            if i not in bt:
                th["add"].append([i] + v)
            elif bt[i][1:3] != v[1:3]:
                th["move"].append([i, v[1], v[2]])
        th["del"] = [i for i in sorted(bt) if i not in self.things]
        th = {k: v for k, v in th.items() if v}
        if th:
            d["things"] = th
        agents = []
        for i, a in enumerate(self.agents):
            b = before["agents"][i]
            ch = {m: a[m] for m in ("x", "y", "facing", "alive") if a[m] != b[m]}
            st = {str(s): v for s, v in enumerate(a["stats"]) if b["stats"][s] != v}
            if st:
                ch["stats"] = st
            if ch:
                agents.append([i, ch])
        if agents:
            d["agents"] = agents
        # as the recorder writes them (docs/recording.md): a node whose kind or label changed and
        # an edge whose weight changed are a "del" and an "add" of the same key in one line
        bn = before["nodes"]
        nodes = {"add": [[i] + v for i, v in sorted(self.nodes.items()) if i not in bn or bn[i] != v],
                 "del": [i for i in sorted(bn) if i not in self.nodes or self.nodes[i] != bn[i]]}
        nodes = {k: v for k, v in nodes.items() if v}
        if nodes:
            d["nodes"] = nodes
        be = {tuple(k): v for k, v in before["edges"]}
        edges = {"add": [[f, t, k, w] for (f, t, k), w in sorted(self.edges.items()) if be.get((f, t, k)) != w],
                 "del": [list(k) for k in sorted(be) if self.edges.get(k) != be[k]]}
        edges = {k: v for k, v in edges.items() if v}
        if edges:
            d["edges"] = edges
        return d


def hash_state(world):
    h = 0xcbf29ce484222325
    for b in json.dumps(world.snapshot(), sort_keys=True).encode():
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    return h


def header(scenario, path, agents, kinds, layers, w, h, stats, view):
    return {"t": "header", "format": "polis-recording", "version": 1, "polis": "0.1.0", "abi": "1.5",
            "scenario": scenario, "scenario_path": path, "scenario_hash": "00c0ffee00c0ffee",
            "overrides": None, "seed": 7, "keyframe_every": KEY_EVERY,
            "plugins": [{"name": scenario["ruleset"], "version": "0.1.0", "kind": "so", "path": "fixture"}],
            "agents": agents, "actions": ACTIONS, "map": {"width": w, "height": h, "layers": layers},
            "kinds": kinds, "stats": stats, "view": view, "policies": ["scripted"] * len(agents),
            "source": "run"}


def society_episode(rng, episode, ticks, out, truth):
    W, H, NA = 12, 9, 4
    world = World(W, H, 2, NA, 4)
    for p in range(W * H):
        x, y = p % W, p // W
        world.layers[0][p] = 2 if x in (0, W - 1) or y in (0, H - 1) else (1 if (x, y) in ((5, 4), (6, 4)) else 0)
    for _ in range(14):
        x, y = rng.randrange(1, W - 1), rng.randrange(1, H - 1)
        if world.layers[0][y * W + x] == 0:
            world.layers[1][y * W + x] = rng.choice([3, 4, 5])
    starts = [(1, 1), (10, 1), (1, 7), (10, 7)]
    for i, (x, y) in enumerate(starts):
        world.agents[i].update(x=x, y=y, facing=3)
    world.nodes = {"group_0": ["group", "Group 0"], "group_1": ["group", "Group 1"]}
    world.edges = {("agent_0", "group_0", "member"): 1.0, ("agent_1", "group_1", "member"): 1.0}
    out.append({"t": "reset", "episode": episode, "seed": 7 + episode})
    out.append(world.key(0))
    ep_truth = {"positions": [], "edges": [], "events": [], "lastTick": ticks, "things": []}

    def record_truth():
        ep_truth["positions"].append([[a["x"], a["y"]] for a in world.agents])
        ep_truth["edges"].append(sorted([[f, t, k, w] for (f, t, k), w in world.edges.items()]))

    record_truth()
    for tick in range(1, ticks + 1):
        before = world.snapshot()
        actions, rewards, events, illegal, msgs = [], [], [], [], []
        for i, a in enumerate(world.agents):
            act = rng.choice([1, 2, 3, 4, 5, 5, 0])
            bad = 0
            r = 0.0
            if act in DIRS:
                dx, dy = DIRS[act]
                nx, ny = a["x"] + dx, a["y"] + dy
                a["facing"] = act
                if world.layers[0][ny * W + nx] == 0 and all((o["x"], o["y"]) != (nx, ny) for o in world.agents):
                    a["x"], a["y"] = nx, ny
                    events.append({"type": "agent.moved", "agent": i, "x": nx, "y": ny})
                else:
                    bad = 1
            elif act == 5:
                p = a["y"] * W + a["x"]
                k = world.layers[1][p]
                if k >= 0:
                    world.layers[1][p] = -1
                    a["stats"][k - 3] += 1
                    r = 0.5 if k != 5 else 0.25
                    events.append({"type": "resource.picked", "agent": i, "resource": k, "amount": 1,
                                   "x": a["x"], "y": a["y"]})
                else:
                    bad = 1
            actions.append(act)
            rewards.append(r)
            illegal.append(bad)
            a["return"] += r
        # the social structure changes on fixed ticks
        if tick == 5:
            world.edges[("agent_2", "group_0", "member")] = 1.0
            events.append({"type": "social.edge_added", "agent": 2, "to": "group_0", "kind": "member"})
        if tick == 12:
            world.nodes["group_2"] = ["group", "Group 2"]
            world.edges[("agent_3", "group_2", "member")] = 1.0
            world.edges[("agent_0", "agent_1", "trust")] = 0.5
            events.append({"type": "social.edge_added", "agent": 3, "to": "group_2", "kind": "member"})
        if tick == 17:
            world.edges[("agent_0", "agent_1", "trust")] = 2.0
        if tick == 23:
            del world.edges[("agent_1", "group_1", "member")]
            world.edges[("agent_1", "group_0", "member")] = 1.0
            events.append({"type": "social.edge_removed", "agent": 1, "to": "group_1", "kind": "member"})
        if tick == 31:
            del world.nodes["group_1"]
        if tick % 7 == 3:
            msgs.append({"agent": tick % NA, "kind": "text", "text": f"tick {tick}: I will gather wood near ({world.agents[tick % NA]['x']},{world.agents[tick % NA]['y']})"})
            msgs.append({"agent": tick % NA, "kind": "plan", "text": "GATHER 2 wood -> TRADE agent_0"})
        step = {"t": "step", "tick": tick, "actions": actions, "rewards": rewards, "term": [0] * NA,
                "trunc": [1 if tick == ticks else 0] * NA, "illegal": illegal}
        if events:
            step["events"] = events
        step.update(world.diff(before))
        if msgs:
            step["msgs"] = msgs
        out.append(step)
        ep_truth["events"] += [{"tick": tick, **e} for e in events]
        record_truth()
        if tick % KEY_EVERY == 0:
            out.append(world.key(tick))
    out.append({"t": "end", "tick": ticks, "returns": [a["return"] for a in world.agents],
                "metrics": {"total_reward": sum(a["return"] for a in world.agents)},
                "hash": "%016x" % hash_state(world)})
    truth["episodes"].append(ep_truth)


def survival_episode(rng, ticks, out, truth):
    W, H, NA = 10, 10, 2
    world = World(W, H, 1, NA, 5)
    for p in range(W * H):
        x, y = p % W, p // W
        world.layers[0][p] = 2 if (x, y) in ((7, 7), (7, 8)) else (1 if rng.random() < 0.12 else 0)
    world.agents[0].update(x=2, y=2, facing=2, stats=[9, 9, 9, 0, 0])
    world.agents[1].update(x=5, y=2, facing=4, stats=[9, 9, 9, 0, 0])
    for a in world.agents:
        world.layers[0][a["y"] * W + a["x"]] = 0
    out.append({"t": "reset", "episode": 0, "seed": 11})
    out.append(world.key(0))
    ep_truth = {"positions": [], "edges": [], "events": [], "lastTick": ticks, "things": []}
    next_id = 1

    def record_truth():
        ep_truth["positions"].append([[a["x"], a["y"]] for a in world.agents])
        ep_truth["edges"].append([])
        ep_truth["things"].append(sorted([[i] + v for i, v in world.things.items()]))

    record_truth()
    for tick in range(1, ticks + 1):
        before = world.snapshot()
        events = []
        if tick % 4 == 1 and len(world.things) < 4:
            x, y = rng.randrange(W), rng.randrange(H)
            kind = 3 if next_id % 2 else 4
            world.things[next_id] = [kind, x, y, "zombie" if kind == 3 else "cow"]
            events.append({"type": "mob.spawned", "id": next_id, "kind": kind, "x": x, "y": y})
            next_id += 1
        for i, t in list(world.things.items()):
            dx, dy = rng.choice([(0, 1), (1, 0), (0, -1), (-1, 0), (0, 0)])
            t[1] = min(W - 1, max(0, t[1] + dx))
            t[2] = min(H - 1, max(0, t[2] + dy))
        if tick % 9 == 0 and world.things:
            oldest = min(world.things)
            del world.things[oldest]
            events.append({"type": "mob.despawned", "id": oldest})
        actions, rewards = [], []
        for i, a in enumerate(world.agents):
            if not a["alive"]:
                actions.append(0)
                rewards.append(0.0)
                continue
            act = rng.choice([1, 2, 3, 4, 0])
            if act in DIRS:
                dx, dy = DIRS[act]
                a["facing"] = act
                nx, ny = a["x"] + dx, a["y"] + dy
                if 0 <= nx < W and 0 <= ny < H and world.layers[0][ny * W + nx] != 1:
                    a["x"], a["y"] = nx, ny
            if tick % 3 == 0:
                a["stats"][1] = max(0, a["stats"][1] - 1)  # food
            if i == 1 and tick % 2 == 0:
                a["stats"][0] = max(0, a["stats"][0] - 1)  # health
            r = 0.1
            if a["stats"][0] == 0:
                a["alive"] = 0
                r = -1.0
                events.append({"type": "agent.died", "agent": i, "cause": "starvation"})
            actions.append(act)
            rewards.append(r)
            a["return"] += r
        step = {"t": "step", "tick": tick, "actions": actions, "rewards": rewards,
                "term": [1 - a["alive"] for a in world.agents], "trunc": [0] * NA, "illegal": [0] * NA}
        if events:
            step["events"] = events
        step.update(world.diff(before))
        out.append(step)
        ep_truth["events"] += [{"tick": tick, **e} for e in events]
        record_truth()
        if tick % KEY_EVERY == 0:
            out.append(world.key(tick))
    out.append({"t": "end", "tick": ticks, "returns": [a["return"] for a in world.agents], "metrics": None,
                "hash": "%016x" % hash_state(world)})
    truth["episodes"].append(ep_truth)


def dump(lines):
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in lines).encode()


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    expected = {}

    rng = random.Random(7)
    agents = ["agent_0", "agent_1", "agent_2", "agent_3"]
    stats = [{"name": "wood", "group": "inventory", "max": 99}, {"name": "stone", "group": "inventory", "max": 99},
             {"name": "berry", "group": "inventory", "max": 99}, {"name": "coins", "group": "inventory", "max": 99}]
    lines = [header({"name": "fixture-society", "ruleset": "society"}, "rulesets/society/fixture.json", agents,
                    SOCIETY_KINDS, ["terrain", "resources"], 12, 9, stats, {"rx": 2, "ry": 2})]
    truth = {"agents": agents, "episodes": []}
    society_episode(rng, 0, 45, lines, truth)
    society_episode(rng, 1, 20, lines, truth)
    society = dump(lines)
    expected["society"] = truth
    with open(os.path.join(outdir, "society.jsonl"), "wb") as f:
        f.write(society)
    with open(os.path.join(outdir, "society.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(society, mtime=0))

    rng = random.Random(11)
    stats = [{"name": "health", "group": "vitals", "max": 9}, {"name": "food", "group": "vitals", "max": 9},
             {"name": "drink", "group": "vitals", "max": 9}, {"name": "wood", "group": "inventory", "max": 9},
             {"name": "stone", "group": "inventory", "max": 9}]
    lines = [header({"name": "fixture-survival", "ruleset": "survival"}, "rulesets/survival/fixture.json",
                    ["player_0", "player_1"], SURVIVAL_KINDS, ["terrain"], 10, 10, stats, {"rx": 3, "ry": 3})]
    truth = {"agents": ["player_0", "player_1"], "episodes": []}
    survival_episode(rng, 40, lines, truth)
    expected["survival"] = truth
    with open(os.path.join(outdir, "survival.jsonl"), "wb") as f:
        f.write(dump(lines))

    # Cut inside line 30 (a step of episode 0): no end line, the last line is incomplete.
    cut_lines = society.split(b"\n")
    partial = b"\n".join(cut_lines[:29]) + b"\n" + cut_lines[29][: len(cut_lines[29]) // 2]
    with open(os.path.join(outdir, "truncated.jsonl"), "wb") as f:
        f.write(partial)
    expected["truncated"] = {"lastTick": json.loads(cut_lines[28])["tick"], "line": 30}
    gz = gzip.compress(society, mtime=0)
    with open(os.path.join(outdir, "truncated.jsonl.gz"), "wb") as f:
        f.write(gz[: len(gz) // 2])

    bad = society.split(b"\n")
    bad[6] = b'{"t":"step","tick":5,"actions":[0,0,0,0],'
    with open(os.path.join(outdir, "badline.jsonl"), "wb") as f:
        f.write(b"\n".join(bad))
    expected["badline"] = {"line": 7}

    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main()
