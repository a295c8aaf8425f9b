"""The policy interface: what plays a seat of ``polis eval``, ``polis sweep`` and ``polis serve
--http`` (through ``polis.rl.seat``'s pipe protocol, docs/policies.md), a Python evaluation
loop, or a population (``polis.rl.population``).

A policy maps a batch of observations to actions::

    class Policy:
        name: str
        def check(self, spec: EnvSpec) -> None     # raise PolicyMismatch when it cannot play
        def reset(self, seats: list[int]) -> None  # a new episode starts for these seats
        def act(self, obs, mask) -> actions        # obs float32 [k, D], mask uint8 [k, A]

``obs`` holds ``k`` rows, one per seat asked in this tick, in ``flatten=True``'s layout (every
observation field's elements in order, as float32; ``polis.parallel.FlatLayout``); ``mask``
the seats' action masks (1 = legal). ``act`` returns ``k`` action ids (any sequence of
integers). Seats are agent ids; a policy that keeps memory per seat keys it by them: one
whose ``stateful`` attribute is true is called ``act(obs, mask, seats=[ids])`` by the hosts
(``polis.rl.seat``, ``polis.rl.record``), and ``reset(seats)`` starts those seats afresh.

``load_policy(spec)`` makes one from text: a checkpoint file (``runs/contract/policy.pt``),
``random`` (uniform over the legal actions), ``noop``, ``first_legal``, or
``module:factory`` (a Python callable returning a Policy, e.g. ``mypkg.bots:make``), with
``?key=value&...`` options handed to it (``policy.pt?deterministic=1``).
"""

from __future__ import annotations

import importlib
import os
from collections import namedtuple
from urllib.parse import parse_qsl

import numpy as np

EnvSpec = namedtuple("EnvSpec", "scenario agents actions obs_fields obs_dim")
EnvSpec.__doc__ = """What a policy is asked to play: the scenario's name, the agent names, the
action names (in id order), the observation fields as (name, shape) pairs in layout order and
the flat dimension D."""


class PolicyMismatch(Exception):
    """A policy cannot play an env (another scenario's actions or observation layout)."""


class PolicyError(Exception):
    """A policy spec that does not load (missing file, unknown name, bad option)."""


def spec_of(env):
    """The EnvSpec of a ``polis.Env``, ``polis.VectorEnv``, ``ParallelEnv`` or
    ``polis.rl.tasks.TaskVectorEnv``."""
    core = getattr(env, "core", env)
    fields = tuple((f.name, tuple(f.shape)) for f in core.obs_fields)
    dim = sum(int(np.prod(s)) if s else 1 for _, s in fields)
    agents = getattr(core, "agent_names", ())
    return EnvSpec(core.name, tuple(agents), tuple(core.action_names), fields, dim)


def describe_mismatch(want, have, what="policy"):
    """None when ``have`` (an EnvSpec) has ``want``'s actions and observation layout, else a
    sentence naming the first difference."""
    if tuple(want.actions) != tuple(have.actions):
        if len(want.actions) != len(have.actions):
            return (f"{what} was made for {len(want.actions)} actions ({want.scenario}), the "
                    f"env {have.scenario} has {len(have.actions)}")
        for i, (a, b) in enumerate(zip(want.actions, have.actions)):
            if a != b:
                return (f"action {i} is {a!r} for the {what} ({want.scenario}) but {b!r} in "
                        f"the env {have.scenario}")
    wf = [(n, tuple(s)) for n, s in want.obs_fields]
    hf = [(n, tuple(s)) for n, s in have.obs_fields]
    if wf != hf:
        for i in range(max(len(wf), len(hf))):
            a = wf[i] if i < len(wf) else None
            b = hf[i] if i < len(hf) else None
            if a != b:
                fmt = lambda f: f"{f[0]} {list(f[1])}" if f else "nothing"
                return (f"observation field {i} is {fmt(a)} for the {what} ({want.scenario}) "
                        f"but {fmt(b)} in the env {have.scenario}")
    return None


class Policy:
    """Base class; see the module's doc. Subclasses override ``act`` (and, when they need to,
    ``check`` and ``reset``)."""

    name = "policy"

    def check(self, spec):
        pass

    def reset(self, seats):
        pass

    def act(self, obs, mask):
        raise NotImplementedError


class RandomPolicy(Policy):
    """Uniform over each row's legal actions, from a generator of its own."""

    def __init__(self, seed=None):
        self.name = "random"
        self.rng = np.random.default_rng(seed)

    def act(self, obs, mask):
        score = np.asarray(mask, np.float32) + self.rng.random(np.shape(mask), dtype=np.float32)
        return score.argmax(1)


class NoopPolicy(Policy):
    name = "noop"

    def act(self, obs, mask):
        return np.zeros(len(mask), np.int64)


class FirstLegalPolicy(Policy):
    """The legal action with the lowest id (a deterministic stand-in for tests)."""

    name = "first_legal"

    def act(self, obs, mask):
        return np.asarray(mask).argmax(1)


class FunctionPolicy(Policy):
    """A policy from a callable ``fn(obs, mask) -> actions``."""

    def __init__(self, fn, name=None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    def act(self, obs, mask):
        return self.fn(obs, mask)


def _truthy(v):
    return str(v).lower() in ("1", "true", "yes", "on")


def load_policy(spec, seed=None):
    """A Policy from text (see the module's doc). PolicyError says what is wrong."""
    if not isinstance(spec, str) or not spec:
        raise PolicyError(f"a policy spec is a non-empty string, got {spec!r}")
    base, _, query = spec.partition("?")
    opts = dict(parse_qsl(query, keep_blank_values=True))
    if base in ("random", "noop", "first_legal"):
        if opts and set(opts) - {"seed"}:
            raise PolicyError(f"{spec}: {base} takes no option but seed")
        if base == "random":
            return RandomPolicy(int(opts.get("seed", seed if seed is not None else 0)))
        return NoopPolicy() if base == "noop" else FirstLegalPolicy()
    if os.path.exists(base) or base.endswith((".pt", ".pth")):
        from .checkpoint import CheckpointPolicy  # needs torch
        unknown = set(opts) - {"deterministic", "seed"}
        if unknown:
            raise PolicyError(f"{spec}: unknown option {sorted(unknown)[0]!r} of a checkpoint "
                              f"(options: deterministic, seed)")
        return CheckpointPolicy(base, deterministic=_truthy(opts.get("deterministic", "0")),
                                seed=int(opts.get("seed", seed if seed is not None else 0)))
    if ":" in base:
        mod, _, attr = base.partition(":")
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise PolicyError(f"{spec}: cannot load {attr!r} from module {mod!r}: {e}") from None
        p = fn(**opts)
        if not hasattr(p, "act"):
            p = FunctionPolicy(p, name=base)
        return p
    raise PolicyError(f"{spec}: no such checkpoint file, and not random, noop, first_legal "
                      f"or module:factory")
