"""Scenarios: what ``scenario`` may be, where bare names are found, and overrides.

``scenario`` is one of

- a path to a scenario JSON file (``str`` or ``os.PathLike``);
- a bare ruleset scenario name such as ``"gather"`` or ``"gather_lua"``: ``<name>.json`` is
  looked up in ``$POLIS_SCENARIO_PATH`` (``:``-separated directories, each searched itself
  and one level down), then ``rulesets/*/`` of the source tree this package runs from, then
  ``share/polis/rulesets/*/`` beside an installed libpolis;
- a ``dict`` (the scenario object itself) or a JSON string starting with ``{``.

Overrides (``polis.parallel_env("gather", max_steps=50)``) change values of the scenario
without editing it. They are the engine's own (``polis_options.overrides``,
docs/scenario.md "Overrides"): a key is a path into the scenario object, a value what to put
there, applied in order before anything reads the scenario:

- ``max_steps=50``, ``agents=2``, ``seed=7``: top-level keys;
- ``grid={"width": 8}``: an object put where an object is merges into it (RFC 7386), so
  ``height`` stays; ``None`` removes a member, so its default applies;
- ``"grid.width": 8``: a member of an object (missing objects on the way are created);
- ``"plugins.0.params.coins": 3``: an array element by index;
- ``"plugins.gather.params.coins": 3`` or ``plugins__gather__params__coins=3``: an element of
  ``plugins`` or ``scripts`` by its name (``__`` separates path steps where a Python keyword
  argument cannot hold a ``.``).

The engine validates the result as usual, so a bad value fails with the engine's message at
its JSON path and `` (scenario with overrides)`` appended, and a path that cannot be applied
with ``overrides: "<path>": <what>``. A scenario file stays a file (relative plugin and script
paths keep working, and the env keeps the file's name).
"""

import glob
import json
import os

from .errors import ConfigError, PolisIOError

class Source:
    """What to hand the engine: a file (``kind == "file"``, ``path``) or a JSON string
    (``kind == "json"``, ``text``) with the ``base_dir`` its relative paths start from, and
    the overrides as the JSON text of ``polis_options.overrides`` (None: none)."""

    def __init__(self, kind, path=None, text=None, base_dir=None, overrides=None):
        self.kind = kind
        self.path = path
        self.text = text
        self.base_dir = base_dir
        self.overrides = overrides


def scenario_dirs(library_path=None):
    """Directories searched for bare scenario names, in order."""
    dirs = [d for d in os.environ.get("POLIS_SCENARIO_PATH", "").split(os.pathsep) if d]
    from ._lib import source_root
    root = source_root()
    if root:
        dirs.append(os.path.join(root, "rulesets"))
    if library_path and os.path.isabs(library_path):
        prefix = os.path.dirname(os.path.dirname(library_path))
        dirs.append(os.path.join(prefix, "share", "polis", "rulesets"))
    return dirs


def find_scenario(name, library_path=None):
    """The file of a bare scenario name, or raises PolisIOError listing where it looked."""
    dirs = scenario_dirs(library_path)
    for d in dirs:
        hits = [os.path.join(d, name + ".json")]
        hits += sorted(glob.glob(os.path.join(glob.escape(d), "*", name + ".json")))
        for h in hits:
            if os.path.isfile(h):
                return h
    where = ", ".join(dirs) if dirs else "nowhere (no $POLIS_SCENARIO_PATH, no source tree)"
    raise PolisIOError(f'scenario "{name}": no such file, and no {name}.json in {where}')


def _is_bare_name(s):
    return (os.sep not in s and "/" not in s and not s.endswith(".json")
            and not s.lstrip().startswith("{"))


def _json_default(v):
    # numpy scalars and arrays as override values
    if hasattr(v, "tolist"):
        return v.tolist()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def _dumps(doc, what):
    try:
        return json.dumps(doc, default=_json_default, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{what}: {e}") from None


def resolve(scenario, overrides=None, base_dir=None, library_path=None):
    """Turns a scenario argument and overrides into a Source (see the module docstring)."""
    text = overrides_json(overrides)
    if isinstance(scenario, dict):
        return Source("json", text=_dumps(scenario, "scenario"),
                      base_dir=base_dir or os.getcwd(), overrides=text)
    if isinstance(scenario, bytes):
        scenario = scenario.decode()
    if not isinstance(scenario, (str, os.PathLike)):
        raise ConfigError(
            f"scenario must be a path, a scenario name, a dict or a JSON string, "
            f"not {type(scenario).__name__}")
    s = os.fspath(scenario)
    if s.lstrip().startswith("{"):
        return Source("json", text=s, base_dir=base_dir or os.getcwd(), overrides=text)
    if not os.path.exists(s) and _is_bare_name(s):
        s = find_scenario(s, library_path)
    return Source("file", path=s, overrides=text)


# ---- overrides ------------------------------------------------------------------------------

def override_path(key):
    """An override key as the engine's path: ``"a.b"`` as it is, ``"a__b"`` as ``"a.b"``."""
    if not isinstance(key, str) or not key:
        raise ConfigError(f"override key {key!r}: expected a non-empty string")
    if "." not in key and "__" in key:
        return key.replace("__", ".")
    return key


def overrides_json(overrides):
    """The JSON object text of polis_options.overrides, or None for no overrides. Keys keep
    their order (a later override sees the result of the earlier ones)."""
    if not overrides:
        return None
    pairs = [(override_path(k), v) for k, v in dict(overrides).items()]
    try:
        members = [json.dumps(k) + ": " + json.dumps(v, default=_json_default, allow_nan=False)
                   for k, v in pairs]
    except (TypeError, ValueError) as e:
        raise ConfigError(f"overrides: {e}") from None
    return "{" + ", ".join(members) + "}"
