#!/usr/bin/env python3
"""Writes the fourteen Social Structure scenarios of this directory (six structures and the
task distribution over the five static ones, x the paper's Easy and Hard physical tasks)
from the tables below, so the structures are written once. `python3 make_scenarios.py` rewrites the files; `--check` (run by CTest) fails when a
file differs from what this script writes.

The structures are AdaSociety's social_structure_*.json (specs/adasociety.md §15.3); the
physical tasks are the paper's (seeds/000 Table 7). README.md lists every difference.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CARPENTERS = [0, 1, 2, 3]
MINERS = [4, 5, 6, 7]
NAMES = [f"carpenter_{i}" for i in CARPENTERS] + [f"miner_{i}" for i in MINERS]

# The four sets of AdaSociety's structures: two mixed teams, then the two trades.
TEAM_A, TEAM_B = [0, 1, 4, 5], [2, 3, 6, 7]
TRADE_C, TRADE_M = [0, 1, 2, 3], [4, 5, 6, 7]


def share(pairs):
    return {"name": "share_obs", "attributes": {"sharing": {"Map": True}},
            "players": [{"from": a, "to": b} for a, b in pairs]}


def within(*sets):
    """Ordered pairs (i, j), i != j, that are together in one of the sets."""
    return [(i, j) for i in range(8) for j in range(8)
            if i != j and any(i in s and j in s for s in sets)]


def group(ids, weights=None):
    if ids is None:
        return {"players": {}}
    w = weights if weights is not None else [1] * len(ids)
    return {"players": {"ids": ids, "attributes": {"division_weight": w}}}


ALL_PAIRS = within(range(8))
CONNECTION = within(TEAM_A, TEAM_B, TRADE_C, TRADE_M)
TEAMS = within(TEAM_A, TEAM_B)

STRUCTURES = {
    "isolation": {"relations": [], "groups": []},
    "connection": {"relations": [share(CONNECTION)], "groups": []},
    "ind_group": {"relations": [share(ALL_PAIRS)],
                  "groups": [group(TEAM_B), group(TEAM_A)]},
    "ovlp_group": {"relations": [share(CONNECTION)],
                   "groups": [group(TEAM_A), group(TEAM_B), group(TRADE_C), group(TRADE_M)]},
    "inequality": {"relations": [share(TEAMS)],
                   "groups": [group(TEAM_A, [0.85, 0.05, 0.05, 0.05]),
                              group(TEAM_B, [0.05, 0.05, 0.85, 0.05])]},
}

DYNAMIC = {
    "social": {"relations": [share(TEAMS)],
               "groups": [group(TEAM_A, [0.85, 0.05, 0.05, 0.05]),
                          group(TEAM_B, [0.05, 0.05, 0.85, 0.05]), group(None), group(None)]},
    "social_schedule": {
        "30": {"relations": [share(ALL_PAIRS)],
               "groups": [group(TEAM_A), group(TEAM_B), group(None), group(None)]},
        "60": {"relations": [share(CONNECTION)],
               "groups": [group(TEAM_A), group(TEAM_B), group(TRADE_C), group(TRADE_M)]},
    },
}

DOCS = {
    "isolation": "no edges, no groups",
    "connection": "shared maps inside four overlapping sets, no groups",
    "ind_group": "everyone shares maps; two disjoint mixed groups with equal weights",
    "ovlp_group": "shared maps inside four sets; four overlapping groups, equal weights",
    "inequality": "shared maps inside two mixed teams; two groups weighted 0.85/0.05/0.05/0.05",
    "dynamic": "Inequality, then Independent groups at step 30, then Overlapping groups at "
               "step 60",
}

# The paper's physical tasks (seeds/000 Table 7; piles from AdaSociety's configs).
TASKS = {
    "easy": {
        "size": 7,
        "resources": [("wood", 5, 4), ("stone", 5, 4)],
        "recipes": [("hammer_craft", 41)],
        "jobs": {
            "carpenter": {"fov": 3, "capacity": {"hammer": 1}},
            "miner": {"fov": 3, "capacity": {"wood": 0, "stone": 0},
                      "preference": {"hammer": 2}},
        },
    },
    "hard": {
        "size": 15,
        "resources": [("wood", 3, 20), ("stone", 2, 20), ("coal", 5, 4), ("iron", 2, 5)],
        "recipes": [("hammer_craft", 98), ("torch_craft", 98)],
        "jobs": {
            "carpenter": {"fov": 2, "capacity": {"hammer": 1, "coal": 0},
                          "score": {"coal": 10, "torch": 30, "iron": 20}},
            "miner": {"fov": 2, "capacity": {"stone": 0, "torch": 1, "iron": 0},
                      "score": {"coal": 10, "torch": 30, "iron": 20}},
        },
    },
}


def scenario(structure, task):
    t = TASKS[task]
    social = {"social_state": True}
    if structure == "dynamic":
        social.update(DYNAMIC)
    else:
        social["social"] = STRUCTURES[structure]
    social["post_updates"] = [{"function": "split_score_to_group",
                               "kwargs": {"attribute": "division_weight"}}]
    suffix = "" if task == "easy" else "_hard"
    return {
        "polis": 1,
        "name": f"social_structure_{structure}{suffix}",
        "doc": f"AdaSociety's Social Structure, {structure} ({DOCS[structure]}), on the "
               f"paper's {task.capitalize()} task: 4 carpenters and 4 miners, "
               f"{t['size']}x{t['size']} map, 200 steps, physical actions only.",
        "seed": 0,
        "max_steps": 200,
        "agents": {"count": 8, "names": NAMES},
        "plugins": [
            {"name": "society", "params": {
                "view": "map",
                "map": {"init_rule": "blank", "size": {"x": t["size"], "y": t["size"]}},
                "jobs": t["jobs"],
                "random": {
                    "resources": [{"name": n, "num": k, "repeat": r}
                                  for n, k, r in t["resources"]],
                    "recipes": [{"name": n, "repeat": r} for n, r in t["recipes"]],
                    "players": [{"job": "carpenter", "repeat": 4}, {"job": "miner", "repeat": 4}],
                },
            }},
            {"name": "social", "params": social},
        ],
    }


def varied(task):
    """The task distribution over the five static structures: every episode draws one of
    them (uniformly) and the number of wood and stone piles from its seed; `max_groups` 4
    keeps the social graph's 12 nodes (and so the observation layout) whatever is drawn."""
    scn = scenario("isolation", task)
    suffix = "" if task == "easy" else "_hard"
    t = TASKS[task]
    scn["name"] = f"social_structure_vary{suffix}"
    scn["doc"] = (f"AdaSociety's Social Structure as a task distribution, on the paper's "
                  f"{task.capitalize()} task: every episode draws one of the five static "
                  f"structures (isolation, connection, ind_group, ovlp_group, inequality) and "
                  f"the number of wood and stone piles from its seed (docs/scenario.md, \"Task "
                  f"distributions\"); 4 carpenters and 4 miners, {t['size']}x{t['size']} map, "
                  f"200 steps, physical actions only.")
    scn["plugins"][1]["params"]["max_groups"] = 4
    piles = {n: r for n, _, r in t["resources"]}
    scn["vary"] = {
        "plugins.social.params.social": {"choice": [STRUCTURES[k] for k in STRUCTURES]},
        "plugins.society.params.random.resources.wood.repeat": {
            "range": [max(1, piles["wood"] - 2), piles["wood"] + 2], "int": True},
        "plugins.society.params.random.resources.stone.repeat": {
            "range": [max(1, piles["stone"] - 2), piles["stone"] + 2], "int": True},
    }
    return scn


def dumps(value, indent=0, lead=0):
    """JSON with small values on one line (edge lists stay readable); `lead` is the width of
    what precedes the value on its first line."""
    flat = json.dumps(value)
    if len(flat) + indent + lead <= 96 or not isinstance(value, (dict, list)):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 2, len(json.dumps(k)) + 2)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    # lists of short items: several per line
    parts = [dumps(v, indent + 2) for v in value]
    if all("\n" not in p for p in parts):
        lines, line = [], ""
        for p in parts:
            if line and len(line) + len(p) + 2 + indent + 2 > 96:
                lines.append(line)
                line = ""
            line = f"{line}, {p}" if line else p
        lines.append(line)
        return "[\n" + ",\n".join(pad + ln for ln in lines) + "\n" + " " * indent + "]"
    return "[\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * indent + "]"


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for task in TASKS:
        for structure in list(STRUCTURES) + ["dynamic", "vary_structure"]:
            name = structure + ("" if task == "easy" else "_hard") + ".json"
            scn = varied(task) if structure == "vary_structure" else scenario(structure, task)
            text = dumps(scn) + "\n"
            path = os.path.join(HERE, name)
            if check:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if stale:
        print("out of date (run make_scenarios.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
