"""The text views an LLM agent reads, on every shipped scenario with a text view: the legal
actions they list are exactly the mask's (the kernel's one line, families as ranges), and
the society view's grouped form still states every resource pile, station, block and agent
that the JSON view (the agent's window and the windows shared with it) shows."""

import glob
import json
import os
import random
import re
import unittest

import polis
from common import ROOT, legal_ids

TEXT_SCENARIOS = sorted(
    p for d in ("gather", "contract", "negotiation", "exploration", "social_structure",
                "survival", "commons")
    for p in glob.glob(os.path.join(ROOT, "rulesets", d, "*.json")))
SOCIETY_SCENARIOS = [p for p in TEXT_SCENARIOS
                     if re.search(r"/(contract|negotiation|exploration|social_structure)/", p)]

LEGAL = re.compile(r"^Legal actions: (.*?)( \(x_i\.\.j: each of x_i to x_j\))?\.$")
RANGE = re.compile(r"^(.*)_(\d+)\.\.(\d+)$")


def legal_from_text(text):
    """The action names the text's "Legal actions" line lists, ranges expanded. Fails the
    calling test (AssertionError) unless there is exactly one such line and it is last."""
    lines = text.rstrip("\n").split("\n")
    found = [i for i, l in enumerate(lines) if "legal actions" in l.lower()]
    assert found == [len(lines) - 1], f"one 'Legal actions' line, last: {found} in\n{text}"
    m = LEGAL.match(lines[-1])
    assert m, lines[-1]
    names = []
    for item in m.group(1).split(", "):
        r = RANGE.match(item)
        if r:
            names += [f"{r.group(1)}_{i}" for i in range(int(r.group(2)), int(r.group(3)) + 1)]
        else:
            names.append(item)
    assert bool(m.group(2)) == any(RANGE.match(i) for i in m.group(1).split(", ")), lines[-1]
    return names


def play(env, steps, seed, each):
    """Resets, then `steps` ticks of a seeded uniform policy over the legal actions, calling
    each(tick) after the reset and after every tick."""
    rng = random.Random(seed)
    env.reset(seed)
    each(0)
    for t in range(steps):
        if env.done:
            break
        env.step([rng.choice(legal_ids(env.mask_list(a))) for a in range(env.n_agents)])
        each(t + 1)


class TestLegalActions(unittest.TestCase):
    def test_every_text_view_lists_exactly_the_mask(self):
        for path in TEXT_SCENARIOS:
            with self.subTest(scenario=os.path.relpath(path, ROOT)):
                env = polis.Env(path)
                try:
                    if "text" not in env.render_formats:
                        continue

                    def check(tick):
                        for a in range(env.n_agents):
                            want = [env.action_names[i] for i in legal_ids(env.mask_list(a))]
                            got = legal_from_text(env.render(a, "text"))
                            self.assertEqual(got, want, f"agent {a}, tick {tick}")

                    play(env, 12, 5, check)
                finally:
                    env.close()

    def test_a_forbidden_action_is_never_listed(self):
        # Contract's formation stage: the agent whose turn it is may choose a group, the
        # others only wait; nobody may move.
        env = polis.Env(os.path.join(ROOT, "rulesets", "contract", "contract.json"))
        try:
            env.reset(1)
            turns = 0
            for a in range(env.n_agents):
                text = env.render(a, "text")
                self.assertNotIn("move_up", legal_from_text(text))
                if "It is your turn" in text:
                    turns += 1
                    self.assertTrue(text.endswith("Legal actions: noop, choose_group_0..3 "
                                                  "(x_i..j: each of x_i to x_j).\n"), text)
                else:
                    self.assertTrue(text.endswith("\nLegal actions: noop.\n"), text)
            self.assertEqual(turns, 1)
        finally:
            env.close()

    def test_the_parser_accepts_every_listed_name(self):
        env = polis.Env(os.path.join(ROOT, "rulesets", "exploration", "exploration.json"))
        try:
            env.reset(2)
            for name in legal_from_text(env.render(0, "text")):
                self.assertEqual(env.action_names[env.parse_action(0, name)], name)
        finally:
            env.close()


# "- wood piles: 5 at (5, 5) 2 right; 3 at (0, 0) 3 down"
GROUP = re.compile(r"^- (blocks|agents|station (\S+) \(.*?\)|(\S+) piles):"
                   r"( on every visible cell( except)?)?(.*)$")
POS = re.compile(r"\((\d+), (\d+)\)")


def society_text_facts(text):
    """What the grouped society text states: {("pile", name, x, y): amount,
    ("station", name, x, y): 1, ("agent", name, x, y): 1, ("block", x, y): 1}, with "every
    visible cell [except ...]" lines kept apart as (kind, name, inverse set)."""
    facts, inverse = {}, []
    for line in text.split("\n"):
        m = GROUP.match(line)
        if not m:
            continue
        label, station, res, every, _, rest = m.groups()
        items = [i for i in rest.strip().split("; ") if i]
        if every:
            inverse.append((label, station, {tuple(map(int, POS.search(i).groups()))
                                             for i in items}))
            continue
        for item in items:
            x, y = map(int, POS.search(item).groups())
            if res:
                facts[("pile", res, x, y)] = int(item.split(" at ")[0])
            elif station:
                facts[("station", station, x, y)] = 1
            elif label == "agents":
                facts[("agent", item.split(" at ")[0], x, y)] = 1
            else:
                facts[("block", x, y)] = 1
    return facts, inverse


def json_facts(view, agent_names):
    """The same facts from the society JSON view (the agent's map and every shared map),
    and those maps."""
    maps = [view["Map"]] + [s["Map"] for s in view["Social"]["sharings"].values() if "Map" in s]
    facts = {}
    for m in maps:
        for r in m["resources"]:
            facts[("pile", r["name"], *r["position"])] = r["amount"]
        for e in m["events"]:
            facts[("station", e["name"], *e["position"])] = 1
        for p in m["players"]:
            facts[("agent", agent_names[p["id"]], *p["position"])] = 1
    return facts, maps


class TestSocietyTextKeepsEverything(unittest.TestCase):
    def test_text_states_what_the_json_shows(self):
        for path in SOCIETY_SCENARIOS:
            with self.subTest(scenario=os.path.relpath(path, ROOT)):
                env = polis.Env(path)
                try:
                    def check(tick):
                        for a in range(env.n_agents):
                            self._compare(env, a, tick)

                    play(env, 8, 3, check)
                finally:
                    env.close()

    def _compare(self, env, a, tick):
        text = env.render(a, "text")
        view = json.loads(env.render(a, "json"))["society"]
        facts, inverse = society_text_facts(text)
        want, maps = json_facts(view, env.agent_names)
        # every visible cell of the merged windows: from the block grids' extents
        cells = set()
        W, H = self._size(text)
        for m in maps:
            cx, cy = m.get("center", view["Player"]["position"])
            g = m["block_grids"]
            fh, fv = (len(g) - 1) // 2, (len(g[0]) - 1) // 2
            for i, col in enumerate(g):
                for j, b in enumerate(col):
                    x, y = (cx + i - fh) % W, (cy + j - fv) % H
                    cells.add((x, y))
                    if b:
                        want[("block", x, y)] = 1
        for label, station, excluded in inverse:
            for x, y in cells - excluded:
                if station:
                    facts[("station", station, x, y)] = 1
                else:
                    facts[("block", x, y)] = 1
        # The sharers are agents in the merged windows too (the JSON names them under
        # Player); the viewer itself is never listed.
        me = env.agent_names[view["Player"]["id"]]
        for k, s in view["Social"]["sharings"].items():
            if "Map" in s:
                x, y = s["Map"]["center"]
                want[("agent", env.agent_names[int(k)], x, y)] = 1
        want = {k: v for k, v in want.items() if not (k[0] == "agent" and k[1] == me)}
        self.assertEqual(facts, want, f"agent {a}, tick {tick}:\n{text}")

    @staticmethod
    def _size(text):
        m = re.search(r"The map is (\d+) x (\d+)", text)
        return int(m.group(1)), int(m.group(2))


if __name__ == "__main__":
    unittest.main()
