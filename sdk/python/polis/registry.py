"""The shipped scenarios by id: ``gymnasium.make("polis/Contract-v0")`` and a PettingZoo-style
``polis.make("Contract-v0")``.

Every scenario file (a JSON object with ``"polis": 1``) under the scenario directories
(``polis.scenario.scenario_dirs``: ``$POLIS_SCENARIO_PATH``, the source tree's ``rulesets/*/``,
an installed ``share/polis/rulesets/*/``) gets an id: ``polis/`` and its file name in
CamelCase with ``-v0`` (``contract_hard.json`` -> ``polis/ContractHard-v0``,
``commons_open_visitors.json`` -> ``polis/CommonsOpenVisitors-v0``).

- When ``import polis`` finds gymnasium, every id is registered with ``gymnasium.register``
  (``register_gymnasium``): ``gymnasium.make("polis/Contract-v0", max_steps=60,
  agent="miner_2", others="random")`` is ``polis.gym_env`` on that scenario — one agent
  learns, the others play ``others`` — with every keyword argument that is not one of
  ``gym_env``'s or ``parallel_env``'s options taken as a scenario override.
- ``polis.make(id, **kwargs)`` is PettingZoo's Parallel API (``polis.parallel_env``) on the
  scenario, ``polis.make_aec(id)`` its AEC API; the id may omit ``polis/`` and ``-v0``
  (``polis.make("contract")``). ``polis.registry.ids()`` lists them.
"""

from __future__ import annotations

import glob
import json
import os
import re

from .errors import PolisIOError
from .scenario import scenario_dirs

NAMESPACE = "polis"
VERSION = 0
_cache = None


def game_name(stem):
    """``contract_hard`` -> ``ContractHard``."""
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[_\-\s]+", stem) if p)


def _is_scenario(path):
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
        if '"polis"' not in head:
            return False
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("polis") == 1


def scenarios(refresh=False):
    """{id: scenario file} of every shipped scenario found (the first file of a name wins,
    as bare scenario names resolve)."""
    global _cache
    if _cache is not None and not refresh:
        return dict(_cache)
    out = {}
    for d in scenario_dirs():
        for path in sorted(glob.glob(os.path.join(glob.escape(d), "*.json")) +
                           glob.glob(os.path.join(glob.escape(d), "*", "*.json"))):
            stem = os.path.splitext(os.path.basename(path))[0]
            env_id = f"{NAMESPACE}/{game_name(stem)}-v{VERSION}"
            if env_id not in out and _is_scenario(path):
                out[env_id] = os.path.abspath(path)
    _cache = out
    return dict(out)


def ids():
    """Every registered id, sorted."""
    return sorted(scenarios())


def scenario_of(env_id):
    """The scenario file of an id (``polis/Contract-v0``, ``Contract-v0``, ``Contract`` or
    ``contract``); PolisIOError naming the closest ids when there is none."""
    table = scenarios()
    s = str(env_id)
    if not s.startswith(NAMESPACE + "/"):
        s = f"{NAMESPACE}/{s}"
    if not re.search(r"-v\d+$", s):
        s = f"{s}-v{VERSION}"
    ns, _, rest = s.partition("/")
    name, _, ver = rest.rpartition("-v")
    for candidate in (s, f"{ns}/{game_name(name)}-v{ver}"):
        if candidate in table:
            return table[candidate]
    import difflib
    close = difflib.get_close_matches(s, list(table), n=3)
    raise PolisIOError(f"no polis scenario with the id {env_id!r}"
                       + (f" (did you mean {', '.join(close)}?)" if close else
                          f" ({len(table)} ids: polis.registry.ids())"))


def make(env_id, **kwargs):
    """PettingZoo's Parallel API on the scenario of ``env_id`` (``polis.parallel_env``);
    keyword arguments are its options and scenario overrides."""
    from .parallel import parallel_env
    return parallel_env(scenario_of(env_id), **kwargs)


def make_aec(env_id, **kwargs):
    """PettingZoo's AEC API on the scenario of ``env_id`` (``polis.aec_env``)."""
    from .gym import aec_env
    return aec_env(scenario_of(env_id), **kwargs)


def gym_entry(scenario, **kwargs):
    """``gymnasium.make``'s entry point: ``polis.gym_env(scenario, **kwargs)``."""
    from .gym import gym_env
    return gym_env(scenario, **kwargs)


def register_gymnasium(gymnasium=None):
    """Registers every id with gymnasium (the module given, else ``import gymnasium``); ids
    already registered are left alone. Returns the ids registered now ([] without
    gymnasium)."""
    if gymnasium is None:
        try:
            import gymnasium
        except ImportError:
            return []
    known = getattr(gymnasium, "registry", None)
    if known is None:
        known = getattr(getattr(getattr(gymnasium, "envs", None), "registration", None),
                        "registry", {})
    done = []
    for env_id, path in scenarios().items():
        if env_id in known:
            continue
        gymnasium.register(id=env_id, entry_point="polis.registry:gym_entry",
                           kwargs={"scenario": path})
        done.append(env_id)
    return done
