"""Seats of a vector env played by a registered policy, beside the rows a trainer learns.

A scenario's ``"seats"`` (docs/scenario.md) names who plays chosen agents wherever the
scenario is played: ``survival_experts_solo.json`` gives its three experts to survival's
``scripted`` policy. ``ScriptedSeats`` reads those seats (and ``--seat AGENT=POLICY``
additions), and before every step writes the policies' actions into the vector env's
``actions`` buffer for those agents of every env (``polis_env_policy_act``, in C); the trainer
fills the other rows, its ``learn`` rows, and steps with the buffer as it is::

    seats = ScriptedSeats(v, scenario_seats("survival_experts_solo.json"))
    obs, _ = v.reset(seed=1)
    while ...:
        seats.act()                                  # the experts' actions
        v.actions[seats.learn] = my_policy(obs["observation"][seats.learn])
        obs, rew, term, trunc, infos = v.step()       # the buffer as it is

Only policy names are played here (the kernel's ``random``, ``noop``, ``uniform``, a game's
``scripted`` ...); a seat naming a checkpoint or a program (``py:``, ``cmd:``, ``pop:``) is for
``polis eval`` and ``polis serve`` and is refused, naming it.
"""

from __future__ import annotations

import ctypes
import json
import os

import numpy as np

import polis


def scenario_seats(scenario, overrides=None):
    """The ``"seats"`` object of a scenario file (agent name -> who), ``{}`` without one.
    ``scenario``: a file or a scenario name. An override of ``seats`` is refused: seats are
    given with ``--seat`` (as ``polis eval`` does)."""
    for key in overrides or {}:
        if key == "seats" or key.startswith("seats."):
            raise ValueError(f"--set {key}: give the scenario's seats with --seat AGENT=POLICY")
    path = scenario
    if isinstance(scenario, str) and not os.path.exists(scenario):
        try:
            path = polis.find_scenario(scenario)
        except polis.PolisError:
            return {}
    if not isinstance(path, str) or not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    seats = doc.get("seats", {}) if isinstance(doc, dict) else {}
    return {k: v for k, v in seats.items() if not k.startswith("_")}


def seats_of(pairs):
    """``--seat AGENT=POLICY`` arguments as a dict."""
    out = {}
    for p in pairs:
        agent, sep, who = p.partition("=")
        if not sep or not agent or not who:
            raise ValueError(f"--seat {p!r}: expected AGENT=POLICY")
        out[agent] = who
    return out


class ScriptedSeats:
    """The agents of ``seats`` (name -> policy name) in every env of vector env ``v``, played
    by their policies; ``learn``: the rows of the other agents (an int array), ``learn_agents``
    their agent ids."""

    def __init__(self, v, seats, where="seats"):
        names = list(v.agent_names)
        self.v = v
        self.by_policy = {}
        for agent, who in seats.items():
            if agent not in names:
                raise ValueError(f"{where}.{agent}: no agent named {agent!r} (agents: "
                                 f"{', '.join(names)})")
            if not isinstance(who, str) or who.startswith(("py:", "cmd:", "pop:")):
                raise ValueError(f"{where}.{agent}: {who!r}: a trainer plays only policies the "
                                 f"scenario registers here (polis eval plays checkpoints and "
                                 f"programs)")
            self.by_policy.setdefault(who, []).append(names.index(agent))
        lib, e0 = v._lib, v._env(0)
        self.policies = []
        for who, ids in self.by_policy.items():
            pid = lib.env_policy_find(e0, who.encode())
            if pid < 0:
                raise ValueError(f"{where}: no policy {who!r} in this scenario (seated: "
                                 f"{', '.join(names[i] for i in ids)})")
            self.policies.append((pid, (ctypes.c_int32 * len(ids))(*ids), len(ids)))
        seated = {i for ids in self.by_policy.values() for i in ids}
        self.learn_agents = [i for i in range(len(names)) if i not in seated]
        if not self.learn_agents:
            raise ValueError(f"{where}: every agent is seated; nobody is left to learn")
        per = v.agents_per_env
        self.learn = np.array([k * per + i for k in range(v.num_envs)
                               for i in self.learn_agents], np.int64)
        self.envs = [v._env(k) for k in range(v.num_envs)]

    def act(self):
        """Writes the seated agents' actions of every env into ``v.actions``."""
        lib = self.v._lib
        for e in self.envs:
            for pid, ids, n in self.policies:
                st = lib.env_policy_act(e, pid, ids, n)
                if st:
                    raise polis.PolisError(lib.env_error(e).decode(errors="replace"))
