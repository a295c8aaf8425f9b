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
(`max_length`, required) and the grid view of the task's agent class (map-sized for
Exploration and Social Structure, the fov window for Contract and Negotiation).

The task's kind selects its polis mini-game, with the task's own parameters:

    agent class (or task key)     polis mini-game
    ContractAgent ("contract")    society + social (groups, choose_group gated) + contract
                                  (rounds = contract.negotiation_round)
    NegotiationAgent              society + social (max_groups N/2) + negotiation
      ("negotiation")             (negotiation_steps, proposal_grid = claim_proposal_interval + 1)
    SocialStructureAgent          society + social (the task's structure and schedule)
    ExplorationAgent              society + social (communicate, share_map, switch_group)
    anything else                 the physical game (society, and social when the task has any)

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


KINDS = (("ContractAgent", "contract"), ("NegotiationAgent", "negotiation"),
         ("SocialStructureAgent", "social_structure"), ("ExplorationAgent", "exploration"))

# The rule functions of AdaSociety's Negotiation post_updates that the negotiation plugin
# performs itself (matching, merging and normalising at the accept, clearing requests).
NEGOTIATION_CHAIN = ("matching_edge", "merge_relation_to_group", "normalization",
                     "clear_temporary_relation")


def task_kind(task):
    agent = str(task.get("agent", ""))
    for cls, kind in KINDS:
        if agent.rsplit(".", 1)[-1] == cls or cls in agent:
            return kind
    for key in ("contract", "negotiation"):
        if isinstance(task.get(key), dict):
            return key
    return "physical"


def rule_name(rule):
    if isinstance(rule, str):
        return rule
    if isinstance(rule, dict):
        return rule.get("function")
    if isinstance(rule, list) and rule:
        return rule[0]
    return None


def int_param(where, obj, key, lo, default):
    v = obj.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        fail("%s.%s: expected an integer >= %d, got %s" % (where, key, lo, json.dumps(v)))
    return v


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2 if len(argv) != 2 else 0
    main_path = argv[1]
    main_cfg = load(main_path)
    if not isinstance(main_cfg, dict):
        fail("%s: expected an object (AdaSociety's main.json)" % main_path)
    if "task" not in main_cfg:
        if "base_map" in main_cfg:
            fail("%s: this is an AdaSociety task file; give the main.json that names it "
                 "(\"task\") with the job, resource and event files" % main_path)
        fail("%s: missing \"task\" (the task file)" % main_path)
    task_path = resolve(main_path, main_cfg["task"])
    task = load(task_path)
    if not isinstance(task, dict):
        fail("%s: expected an object (an AdaSociety task file)" % task_path)
    names = players(task)
    if not names:
        fail("%s: the task places no players" % task_path)
    max_length = task.get("max_length")
    if max_length is None:
        fail("%s: max_length: missing (AdaSociety needs it too: without it the episode "
             "fails at its first step); add the episode length, e.g. \"max_length\": 200"
             % task_path)
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        fail("%s: max_length: expected a positive integer, got %s"
             % (task_path, json.dumps(max_length)))
    kind = task_kind(task)
    agent = str(task.get("agent", ""))
    view = "map" if kind in ("exploration", "social_structure") else "window"
    stem = os.path.splitext(os.path.basename(task_path))[0]
    n = len(names)
    scenario = {
        "polis": 1,
        "name": stem,
        "doc": "Imported from AdaSociety's %s (task %s, %s)." % (
            main_path, task_path, kind.replace("_", " ") + (" mini-game" if kind != "physical"
                                                            else " game")),
        "max_steps": max_length,
        "agents": {"count": n, "names": names},
        # Absolute, because polis resolves relative file names in a scenario against the
        # scenario's own directory, wherever the output is written.
        "plugins": [{"name": "society",
                     "params": {"adasociety": os.path.abspath(main_path), "view": view}}],
    }
    static = task.get("static", {}) or {}
    social = {}
    structure = static.get("social") or {}
    has_structure = bool(structure.get("relations") or structure.get("groups"))
    for key in ("social", "social_schedule"):
        if static.get(key):
            social[key] = static[key]
    for key in ("pre_updates", "post_updates"):
        if task.get(key):
            social[key] = task[key]
    comm = static.get("communication_length")
    if isinstance(comm, int) and not isinstance(comm, bool) and comm > 0:
        social["communication_length"] = comm
    if kind in ("contract", "negotiation", "social_structure", "exploration"):
        social["social_state"] = True
    if kind == "exploration":
        social["actions"] = [{"family": "communicate"}, {"family": "share_map"},
                             {"family": "switch_group"}]
    elif kind == "contract":
        # The formation stage's group choice, opened turn by turn by the contract plugin.
        # No Contract action writes a message: communication_length would add a constant
        # observation, so it is left out (as in rulesets/contract).
        social.pop("communication_length", None)
        social["actions"] = [{"family": "choose_group", "enabled": False}]
        contract = task.get("contract", {}) or {}
        if not isinstance(contract, dict):
            fail("%s: contract: expected an object" % task_path)
        rounds = int_param(task_path + ": contract", contract, "negotiation_round", 1, 1)
        if rounds * n >= max_length:
            fail("%s: contract.negotiation_round: the formation stage (%d rounds x %d agents "
                 "= %d steps) leaves no physical stage: max_length is %d"
                 % (task_path, rounds, n, rounds * n, max_length))
        scenario["plugins"].append({"name": "contract", "params": {"rounds": rounds}})
    elif kind == "negotiation":
        social.pop("communication_length", None)
        nego = task.get("negotiation", {}) or {}
        if not isinstance(nego, dict):
            fail("%s: negotiation: expected an object" % task_path)
        where = task_path + ": negotiation"
        for key in ("negotiation_steps", "claim_proposal_interval"):
            if key not in nego:
                fail("%s.%s: missing (AdaSociety's Negotiation agent needs it)" % (where, key))
        steps = int_param(where, nego, "negotiation_steps", 1, None)
        interval = int_param(where, nego, "claim_proposal_interval", 1, None)
        if steps >= max_length:
            fail("%s.negotiation_steps: the negotiation stage (%d steps) leaves no physical "
                 "stage: max_length is %d" % (where, steps, max_length))
        # The negotiation plugin matches, merges, normalises and clears requests itself;
        # the rest of the task's rules stay (split_score_to_group on "score" among them).
        rest = [r for r in task.get("post_updates", []) or []
                if rule_name(r) not in NEGOTIATION_CHAIN]
        if not any(rule_name(r) == "split_score_to_group" for r in rest):
            rest.append({"function": "split_score_to_group", "kwargs": {"attribute": "score"}})
        social["post_updates"] = rest
        groups = len(structure.get("groups") or [])
        social["max_groups"] = groups + n // 2
        if not has_structure:
            social.pop("social", None)
        scenario["plugins"].append({"name": "negotiation", "params": {
            "negotiation_steps": steps, "proposal_grid": interval + 1}})
    if social:
        scenario["plugins"].insert(1, {"name": "social", "params": social})
    json.dump(scenario, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
