"""Probes of Exploration's baselines without training (docs/baselines.md, "Exploration: where
the gap comes from"): a scripted player made of society's plans, and the social actions a
recorded policy took.

    python3 -m polis.rl.probe steel [SCENARIO] --episodes 200 --seed 1001
    python3 -m polis.rl.probe social runs/ex-ppo/episodes.jsonl.gz
    python3 -m polis.rl.probe noop --fraction 0.3 --episodes 200 --seed 1001
    python3 -m polis.rl.probe checkpoint runs/ex-ppo/policy.pt --no-social --episodes 64
    python3 -m polis.rl.probe recipes runs/ex-ppo/episodes.jsonl.gz

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

``noop``: a registered policy (``--policy``, default society's ``greedy``) with a fraction of
its actions, drawn at random per agent and step, replaced by ``noop``: what steps spent on
actions without effect cost it.

``checkpoint``: a trained checkpoint played on every seat (sampling, as ``--record-episodes``
does), as it is or with ``--no-social``: its social actions (the ``communicate``, ``share_map``
and ``switch_group`` families) masked off, its probabilities renormalised over the rest.
Prints the normalised reward and the share of social actions it took; ``--record FILE``
records the episodes.

``recipes``: the recipes' executions per episode and the normalised reward of a recording's
episodes (the metrics plugin's figures in each episode's ``end`` line).
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
    env, names = steel_env(scenario)
    try:
        per, ex = [], {}
        for e in range(episodes):
            env.reset(seed + e)
            until = [0] * env.n_agents
            while not env.done:
                steel_actions(env, until, names)
                env.step()
            per.append(_normalised(env, scenario))
            for r in (env.episode_metrics() or {}).get("recipes", []):
                ex[r["name"]] = ex.get(r["name"], 0) + r["executions"] / episodes
    finally:
        env.close()
    mean, se = _mean_se(per)
    return {"mean": mean, "se": se, "per_episode": per, "executions": ex}


def steel_env(scenario=EXPLORATION):
    """(env, resource names) for the steel script: a ``polis.Env`` with the metrics plugin
    and the inventory's resource names (in the order of the ``pick_<r>`` actions); ValueError
    when the game has no iron or steel."""
    env = polis.Env(scenario, with_metrics(scenario, {}))
    names = [n[5:] for n in env.action_names if n.startswith("pick_")]
    if "iron" not in names or "steel" not in names:
        env.close()
        raise ValueError(f"{scenario}: no iron or steel in play (society's Exploration "
                         "resources are needed)")
    return env, names


def steel_actions(env, until, names):
    """Sets ``env.actions`` to this tick's steel-script actions of every agent (``until``:
    each agent's end of fallback, [0] * agents at reset) and returns them."""
    for a in range(env.n_agents):
        env.actions[a] = _plan_action(env, a, until, names)
    return env.actions


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


def recipe_stats(path):
    """{"episodes", "normalised": mean, "executions": {recipe: mean per episode}} of the
    episodes a recording ends with metrics (docs/recording.md's ``end`` lines)."""
    opener = gzip.open if path.endswith(".gz") else open
    ex, norms = {}, []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("t") == "end" and rec.get("metrics"):
                m = rec["metrics"]
                norms.append(m.get("total_reward_normalised") or 0.0)
                for r in m.get("recipes", []):
                    ex[r["name"]] = ex.get(r["name"], 0) + r["executions"]
    if not norms:
        raise ValueError(f"{path}: no episode ends with metrics")
    return {"episodes": len(norms), "normalised": sum(norms) / len(norms),
            "executions": {k: v / len(norms) for k, v in ex.items()}}


def _normalised(env, scenario):
    m = env.episode_metrics() or {}
    if m.get("total_reward_normalised") is None:
        raise ValueError(f"{scenario}: no normalised reward (no oracle in its metrics)")
    return m["total_reward_normalised"]


def play_noop(scenario=EXPLORATION, fraction=0.0, episodes=1, seed=1001, policy="greedy"):
    """``policy`` (a registered policy) with ``fraction`` of its actions replaced by noop;
    returns {"mean", "se", "per_episode"}."""
    import numpy as np
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"noop fraction {fraction}: expected a number in [0, 1]")
    rng = np.random.default_rng(seed)
    env = polis.Env(scenario, with_metrics(scenario, {}))
    try:
        per = []
        for e in range(episodes):
            env.reset(seed + e)
            while not env.done:
                env.policy_act(policy)
                acts = np.array(env.actions, np.int32)
                acts[rng.random(env.n_agents) < fraction] = 0
                env.step(acts)
            per.append(_normalised(env, scenario))
    finally:
        env.close()
    mean, se = _mean_se(per)
    return {"mean": mean, "se": se, "per_episode": per}


class NoSocial:
    """Wraps a Policy: the actions of ``blocked`` (ids) are masked before it chooses; counts
    the social actions (``social``, ids) of what it chose."""

    def __init__(self, base, blocked, social):
        import numpy as np
        self.base, self.blocked, self.social = base, np.asarray(blocked, int), np.asarray(social, int)
        self.stateful = getattr(base, "stateful", False)
        self.name = f"{getattr(base, 'name', 'policy')}, no social"
        self.chosen = self.social_chosen = 0

    def check(self, spec):
        self.base.check(spec)

    def reset(self, seats):
        self.base.reset(seats)

    def act(self, obs, mask, seats=None):
        import numpy as np
        if len(self.blocked):
            mask = np.array(mask, copy=True)
            mask[:, self.blocked] = 0
        kw = {"seats": seats} if self.stateful else {}
        acts = np.asarray(self.base.act(obs, mask, **kw))
        self.chosen += len(acts)
        self.social_chosen += int(np.isin(acts, self.social).sum())
        return acts


SOCIAL = ("communicate", "share_map", "switch_group")


def play_checkpoint(path, scenario=EXPLORATION, episodes=1, seed=1001, no_social=False,
                    record=None):
    """A checkpoint on every seat (``record``: a file the episodes are recorded to); returns
    {"mean", "se", "per_episode", "social_share"}."""
    from .checkpoint import CheckpointPolicy
    from .record import play_episodes
    with polis.Env(scenario) as env:
        social = [i for i, n in enumerate(env.action_names) if family_of(n) in SOCIAL]
    pol = NoSocial(CheckpointPolicy(path, seed=1), social if no_social else [], social)
    r = play_episodes(pol, scenario, episodes=episodes, seed=seed, record=record)
    per = [e["total_reward_normalised"] for e in r["per_episode"]]
    if any(v is None for v in per):
        raise ValueError(f"{scenario}: no normalised reward (no oracle in its metrics)")
    mean, se = _mean_se(per)
    return {"mean": mean, "se": se, "per_episode": per,
            "social_share": pol.social_chosen / max(pol.chosen, 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m polis.rl.probe", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("steel", help="the scripted steel maker's normalised reward")
    s.add_argument("scenario", nargs="?", default=EXPLORATION)
    c = sub.add_parser("social", help="the social actions of recordings")
    c.add_argument("recordings", nargs="+")
    n = sub.add_parser("noop", help="a registered policy with a fraction of noops")
    n.add_argument("scenario", nargs="?", default=EXPLORATION)
    n.add_argument("--policy", default="greedy")
    n.add_argument("--fraction", type=float, default=0.3)
    k = sub.add_parser("checkpoint", help="a checkpoint, as it is or without social actions")
    k.add_argument("checkpoint")
    k.add_argument("scenario", nargs="?", default=EXPLORATION)
    k.add_argument("--no-social", action="store_true")
    k.add_argument("--record", default=None, metavar="FILE",
                   help="record the episodes (probe recipes FILE counts their recipes)")
    rc = sub.add_parser("recipes", help="the recipes' executions of recordings")
    rc.add_argument("recordings", nargs="+")
    for q in (s, n, k):
        q.add_argument("--episodes", type=int, default=200)
        q.add_argument("--seed", type=int, default=1001)
    args = ap.parse_args(argv)
    if args.cmd not in ("social", "recipes") and args.episodes < 1:
        ap.error("--episodes must be at least 1")
    if args.cmd == "noop":
        if not 0.0 <= args.fraction <= 1.0:
            ap.error(f"--fraction {args.fraction}: expected a number in [0, 1]")
        r = play_noop(args.scenario, args.fraction, args.episodes, args.seed, args.policy)
        print(f"{args.policy}, {args.fraction:.2f} of its actions noop, {args.episodes} episodes "
              f"from seed {args.seed}: normalised reward {r['mean']:.4f} +- {r['se']:.4f}")
        return 0
    if args.cmd == "checkpoint":
        r = play_checkpoint(args.checkpoint, args.scenario, args.episodes, args.seed,
                            args.no_social, args.record)
        how = "social actions masked" if args.no_social else "as it is"
        print(f"{args.checkpoint}, {how}, {args.episodes} episodes from seed {args.seed}: "
              f"normalised reward {r['mean']:.4f} +- {r['se']:.4f}; social actions "
              f"{r['social_share']:.3f} of its actions")
        return 0
    if args.cmd == "steel":
        r = play_steel(args.scenario, args.episodes, args.seed)
        ex = ", ".join(f"{k} {v:.1f}" for k, v in r["executions"].items() if v >= 0.05)
        print(f"steel script, {args.episodes} episodes from seed {args.seed}: normalised reward "
              f"{r['mean']:.4f} +- {r['se']:.4f}; executions per episode: {ex}")
        return 0
    for p in args.recordings:
        if args.cmd == "recipes":
            r = recipe_stats(p)
            ex = ", ".join(f"{k} {v:.1f}" for k, v in r["executions"].items())
            print(f"{p}: {r['episodes']} episodes, normalised reward {r['normalised']:.4f}; "
                  f"executions per episode: {ex}")
            continue
        r = social_stats(p)
        share = " ".join(f"{k} {v:.3f}" for k, v in r["share"].items())
        print(f"{p}: {r['episodes']} episodes, {r['agent_steps']} agent-steps; per agent-step: "
              f"{share}; map shares on {r['maps_shared']:.2f}; agents grouped {r['grouped']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
