#!/usr/bin/env python3
"""import_adasociety.py -- turn an AdaSociety main.json into a polis scenario.

    python3 rulesets/society/import_adasociety.py config/main.json > scenario.json
    build/polis run scenario.json

The scenario loads the `society` ruleset with {"adasociety": <main.json>} -- society reads
the task, job, resource and event files itself -- and, when the task has social content, the
`social` plugin with the task's `static.social`, `static.social_schedule`, `pre_updates`,
`post_updates` and `static.communication_length` (plugins/social/README.md). It also sets
what a polis scenario needs and AdaSociety derives elsewhere: the agents and their names
(`<job>_<id>`, static players first, then random ones in file order), `max_steps`
(`max_length`), the grid view of the task's agent class (map-sized for Exploration and Social
Structure, the fov window for Contract and Negotiation) and Exploration's social actions.

Paths: the main file is written into the scenario as given; society resolves it against the
working directory polis runs in, and the files main.json names as AdaSociety does (the
working directory, then main.json's directory and its parents). Exit status 1 with a message
on a file that cannot be read or is not JSON (AdaSociety's repeated keys are fine: the last
one wins, as in Python).
"""
import json
import os
import sys


def fail(msg):
    sys.stderr.write("import_adasociety: %s\n" % msg)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    except ValueError as e:
        fail("%s: invalid JSON: %s" % (path, e))


def resolve(main_path, p):
    """AdaSociety's paths are relative to its repository root; see society's cfg.c."""
    if os.path.isabs(p) or os.path.exists(p):
        return p
    d = os.path.dirname(main_path)
    while d:
        cand = os.path.join(d, p)
        if os.path.exists(cand):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return p


def as_list(v):
    return v if isinstance(v, list) else [v]


def players(task):
    names = []
    static = task.get("static", {}) or {}
    for entry in static.get("players", []) or []:
        pos = entry.get("positions", [])
        count = len(pos) if pos and isinstance(pos[0], list) else 1
        names += [entry["job"]] * count
    rnd = task.get("random", {}) or {}
    for entry in rnd.get("players", []) or []:
        names += [entry["job"]] * int(entry.get("repeat", 0))
    return ["%s_%d" % (job, i) for i, job in enumerate(names)]


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2 if len(argv) != 2 else 0
    main_path = argv[1]
    main_cfg = load(main_path)
    if "task" not in main_cfg:
        fail("%s: missing \"task\" (the task file)" % main_path)
    task_path = resolve(main_path, main_cfg["task"])
    task = load(task_path)
    names = players(task)
    if not names:
        fail("%s: the task places no players" % task_path)
    agent = str(task.get("agent", ""))
    view = "map" if ("Exploration" in agent or "SocialStructure" in agent) else "window"
    stem = os.path.splitext(os.path.basename(task_path))[0]
    max_length = task.get("max_length")
    scenario = {
        "polis": 1,
        "name": stem,
        "doc": "Imported from AdaSociety's %s (task %s)." % (main_path, task_path),
        "max_steps": max_length if isinstance(max_length, int) and max_length > 0 else 1000,
        "agents": {"count": len(names), "names": names},
        # Absolute, because polis resolves relative file names in a scenario against the
        # scenario's own directory, wherever the output is written.
        "plugins": [{"name": "society",
                     "params": {"adasociety": os.path.abspath(main_path), "view": view}}],
    }
    static = task.get("static", {}) or {}
    social = {}
    for key in ("social", "social_schedule"):
        if static.get(key):
            social[key] = static[key]
    for key in ("pre_updates", "post_updates"):
        if task.get(key):
            social[key] = task[key]
    if isinstance(static.get("communication_length"), int) and static["communication_length"] > 0:
        social["communication_length"] = static["communication_length"]
    if "Exploration" in agent:
        social["actions"] = [{"family": "communicate"}, {"family": "share_map"},
                             {"family": "switch_group"}]
        social["social_state"] = True
    elif "Contract" in agent or "Negotiation" in agent:
        scenario["_note"] = ("The %s's stage rules (turn order, negotiation phases) belong to "
                             "its polis mini-game; this scenario has the world and the social "
                             "structure only." % agent.rsplit(".", 1)[-1])
    if social:
        scenario["plugins"].append({"name": "social", "params": social})
    json.dump(scenario, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
