"""Probes of Exploration's baselines without training (docs/baselines.md, "Exploration: where
the gap comes from"): a scripted player made of society's plans, and the social actions a
recorded policy took.

    python3 -m polis.rl.probe steel [SCENARIO] --episodes 200 --seed 1001
    python3 -m polis.rl.probe social runs/ex-ppo/episodes.jsonl.gz

``steel``: every agent plays ``steel_command``'s plans (``GATHER`` and ``CRAFT``, society's
macros, docs/clients.md): a hammer (coal is seen with one), a torch (iron is seen with one),
then steel for the rest of the episode; a plan that ends without success (nothing found
within its patience) sends the agent back to hammers for ``FALLBACK`` ticks. It plays no
social action and reads no shared map: its information is its own window and the plans'
memory of up to 16 cells where they saw a target (rulesets/society/README.md, "Plans").
Prints the paper's normalised reward (mean and standard error) and the recipes' executions
per episode.

``social``: per agent-step, the share of the recording's actions in each family (by action
name: ``noop``, ``communicate_*``, ``share_map_*``, ``switch_group_*``, the moves, the rest),
the mean number of map shares switched on (agent pairs, oneself excluded) and of agents in a
group with another agent, over the recorded ticks.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys

import polis
from ..parallel import with_metrics

EXPLORATION = "rulesets/exploration/exploration.json"
FALLBACK = 40


def steel_command(inv, fallback=False):
    """The next plan for an agent holding ``inv`` ({resource name: units}); ``fallback``:
    make hammers (after a plan that found nothing)."""
    if not inv.get("hammer") or fallback:
        return ("GATHER 1 wood" if not inv.get("wood") else
                "GATHER 1 stone" if not inv.get("stone") else "CRAFT 1 hammer")
    if not inv.get("torch"):
        return ("GATHER 1 coal" if not inv.get("coal") else
                "GATHER 1 wood" if not inv.get("wood") else "CRAFT 1 torch")
    return ("GATHER 1 iron" if not inv.get("iron") else
            "GATHER 1 coal" if not inv.get("coal") else "CRAFT 1 steel")


def _mean_se(v):
    m = sum(v) / len(v)
    se = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v)) if len(v) > 1 else 0.0
    return m, se


def play_steel(scenario=EXPLORATION, episodes=1, seed=1001):
    """Plays ``episodes`` episodes (seeds ``seed``, ``seed + 1`` ...) with every agent on
    ``steel_command``; returns {"mean", "se", "per_episode": [normalised rewards],
    "executions": {recipe: mean per episode}}."""
    env = polis.Env(scenario, with_metrics(scenario, {}))
    try:
        # the inventory's resources are in the order of the pick_<r> actions
        names = [n[5:] for n in env.action_names if n.startswith("pick_")]
        if "iron" not in names or "steel" not in names:
            raise ValueError(f"{scenario}: no iron or steel in play (society's Exploration "
                             "resources are needed)")
        per, ex = [], {}
        for e in range(episodes):
            env.reset(seed + e)
            until = [0] * env.n_agents
            while not env.done:
                for a in range(env.n_agents):
                    env.actions[a] = _plan_action(env, a, until, names)
                env.step()
            m = env.episode_metrics() or {}
            if m.get("total_reward_normalised") is None:
                raise ValueError(f"{scenario}: no normalised reward (no oracle in its metrics)")
            per.append(m["total_reward_normalised"])
            for r in m.get("recipes", []):
                ex[r["name"]] = ex.get(r["name"], 0) + r["executions"] / episodes
    finally:
        env.close()
    mean, se = _mean_se(per)
    return {"mean": mean, "se": se, "per_episode": per, "executions": ex}


def _inventory(env, agent, names):
    inv = env.obs_dict(agent)["inventory"]
    return {n: int(inv[i]) for i, n in enumerate(names)}


def _plan_action(env, a, until, names):
    """This tick's action of agent a: its running plan's, or a new plan's (a few tries: a
    plan may end at once), else noop."""
    for _ in range(4):
        if env.plan_command(a) is None:
            env.plan(a, steel_command(_inventory(env, a, names), env.tick < until[a]))
        step = env.plan_next(a)
        if step.status == "running":
            return step.action
        if step.status != "done":
            until[a] = env.tick + FALLBACK
    return 0


FAMILIES = ("noop", "communicate", "share_map", "switch_group", "move", "other")


def family_of(name):
    for f in FAMILIES[:5]:
        if name == f or name.startswith(f + "_"):
            return f
    return "other"


def social_stats(path):
    """Reads a recording (docs/recording.md) of a game with the social plugin's families;
    returns {"episodes", "agent_steps", "share": {family: share of the actions},
    "maps_shared": mean shares on, "grouped": mean agents in a group with another}."""
    opener = gzip.open if path.endswith(".gz") else open
    names, counts, steps, ticks, episodes = None, {f: 0 for f in FAMILIES}, 0, 0, 0
    on_sum = grouped_sum = 0
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            t = rec.get("t")
            if t == "header":
                with polis.Env(rec["scenario"]) as env:
                    names = list(env.action_names)
            elif t == "reset":
                episodes += 1
                shares, group = set(), {}
            elif t == "step":
                if names is None or episodes == 0:
                    raise ValueError(f"{path}: a step before the header and a reset")
                for i, act in enumerate(rec["actions"]):
                    name = names[act]
                    fam = family_of(name)
                    counts[fam] += 1
                    steps += 1
                    if fam == "share_map":
                        j = int(name.rsplit("_", 1)[1])
                        if j != i:
                            shares ^= {(i, j)}
                    elif fam == "switch_group":
                        group[i] = int(name.rsplit("_", 1)[1])
                ticks += 1
                on_sum += len(shares)
                sizes = {}
                for g in group.values():
                    sizes[g] = sizes.get(g, 0) + 1
                grouped_sum += sum(1 for g in group.values() if sizes[g] > 1)
    if not steps:
        raise ValueError(f"{path}: no recorded steps")
    return {"episodes": episodes, "agent_steps": steps,
            "share": {k: v / steps for k, v in counts.items()},
            "maps_shared": on_sum / ticks, "grouped": grouped_sum / ticks}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m polis.rl.probe", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("steel", help="the scripted steel maker's normalised reward")
    s.add_argument("scenario", nargs="?", default=EXPLORATION)
    s.add_argument("--episodes", type=int, default=200)
    s.add_argument("--seed", type=int, default=1001)
    c = sub.add_parser("social", help="the social actions of recordings")
    c.add_argument("recordings", nargs="+")
    args = ap.parse_args(argv)
    if args.cmd == "steel":
        if args.episodes < 1:
            ap.error("--episodes must be at least 1")
        r = play_steel(args.scenario, args.episodes, args.seed)
        ex = ", ".join(f"{k} {v:.1f}" for k, v in r["executions"].items() if v >= 0.05)
        print(f"steel script, {args.episodes} episodes from seed {args.seed}: normalised reward "
              f"{r['mean']:.4f} +- {r['se']:.4f}; executions per episode: {ex}")
        return 0
    for p in args.recordings:
        r = social_stats(p)
        share = " ".join(f"{k} {v:.3f}" for k, v in r["share"].items())
        print(f"{p}: {r['episodes']} episodes, {r['agent_steps']} agent-steps; per agent-step: "
              f"{share}; map shares on {r['maps_shared']:.2f}; agents grouped {r['grouped']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
