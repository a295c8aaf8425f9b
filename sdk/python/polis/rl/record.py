"""Recording episodes of a policy (``polis.rl.policy.Policy``, e.g. a checkpoint) with the
SDK's recorder (``polis.Env(record=FILE)``, docs/recording.md): ``polis view FILE`` shows
them, ``polis replay FILE --verify`` re-simulates and checks them. Every agent is played by
the policy unless ``seats`` names other policies for some agents.
"""

from __future__ import annotations

import numpy as np

import polis
from ..parallel import FlatLayout, with_metrics
from .policy import spec_of


def play_episodes(policy, scenario, *, overrides=None, episodes=1, seed=0, record=None,
                  seats=None, max_steps=None):
    """Plays ``episodes`` episodes (seeds ``seed``, ``seed + 1``, ...) and returns
    ``{"episodes", "return", "total_reward_normalised", "per_episode": [...]}``; with
    ``record`` a file, records them. ``seats``: {agent name or id: Policy} for agents the
    main policy does not play."""
    ov = with_metrics(scenario, dict(overrides or {}))
    env = polis.Env(scenario, ov, record=record)
    try:
        spec = spec_of(env)
        layout = FlatLayout(env.obs_fields)
        flat = np.zeros((env.n_agents, layout.dim), np.float32)
        players = {}
        for who, pol in (seats or {}).items():
            players[env.agent_id(who)] = pol
        for pol in {id(p): p for p in [policy, *players.values()]}.values():
            pol.check(spec)
        mine = [a for a in range(env.n_agents) if a not in players]
        groups = [(policy, mine)] + [(p, [a]) for a, p in players.items()]
        per, acts = [], np.zeros(env.n_agents, np.int32)
        for e in range(episodes):
            env.reset(seed + e)
            for pol, agents in groups:
                if agents:
                    pol.reset(agents)
            ret = np.zeros(env.n_agents)
            steps = 0
            while not env.done and (max_steps is None or steps < max_steps):
                layout.fill(flat, env.fields)
                for pol, agents in groups:
                    if agents:
                        kw = {"seats": agents} if getattr(pol, "stateful", False) else {}
                        if "shared" in getattr(pol, "views", ()):  # as polis.rl.seat does
                            kw["shared"] = env.shared_dict()
                        acts[agents] = np.asarray(pol.act(flat[agents], env.masks[agents],
                                                          **kw))
                env.step(acts)
                ret += env.rewards
                steps += 1
            m = env.episode_metrics() or {}
            env.record_end(m)
            per.append({"seed": seed + e, "steps": steps, "returns": ret.tolist(),
                        "total_reward_normalised": m.get("total_reward_normalised")})
    finally:
        env.close()
    norms = [p["total_reward_normalised"] for p in per if p["total_reward_normalised"] is not None]
    return {"episodes": episodes,
            "return": float(np.mean([np.mean(p["returns"]) for p in per])) if per else None,
            "total_reward_normalised": float(np.mean(norms)) if norms else None,
            "per_episode": per}


def record_policy(policy, scenario, path, *, overrides=None, episodes=1, seed=0):
    """Records ``episodes`` episodes of ``policy`` in every seat to ``path``; returns
    ``play_episodes``'s figures."""
    return play_episodes(policy, scenario, overrides=overrides, episodes=episodes, seed=seed,
                         record=path)
