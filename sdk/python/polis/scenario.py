"""Scenarios: what ``scenario`` may be, where bare names are found, and overrides.

``scenario`` is one of

- a path to a scenario JSON file (``str`` or ``os.PathLike``);
- a bare ruleset scenario name such as ``"gather"`` or ``"gather_lua"``: ``<name>.json`` is
  looked up in ``$POLIS_SCENARIO_PATH`` (``:``-separated directories, each searched itself
  and one level down), then ``rulesets/*/`` of the source tree this package runs from, then
  ``share/polis/rulesets/*/`` beside an installed libpolis;
- a ``dict`` (the scenario object itself) or a JSON string starting with ``{``.

Overrides (``polis.parallel_env("gather", max_steps=50)``) replace values of the scenario
before the engine sees it. A key is a path into the scenario object, with segments separated
by ``.`` or ``__`` (the latter so it can be a Python keyword argument):

- ``max_steps=50``, ``agents=2``, ``seed=7``, ``grid={"width": 8, "height": 8}``: top-level
  keys, replaced whole;
- ``"grid.width": 8``: a member of an object (missing objects on the way are created);
- ``"plugins.0.params.coins": 3``: an array element by index;
- ``"plugins.gather.params.coins": 3`` or ``plugins__gather__params__coins=3``: an element of
  ``plugins`` or ``scripts`` by its name (the ``name`` member, or the file name without
  extension of its ``path``, or the string itself for ``"plugins": ["gather"]``).

The engine validates the result as usual, so a bad value fails with the engine's message and
JSON path; the scenario's label in that message is the file name followed by
``(with overrides)``. Relative plugin and script paths keep working: the scenario is handed
to the engine with ``base_dir`` set to the file's directory.

``resolve`` is the one place that turns (scenario, overrides) into what the engine loads, so
it can switch to a C override mechanism without changing any caller.
"""

import copy
import glob
import json
import os

from .errors import ConfigError, PolisIOError

STRING_LABEL = "<string>"  # the engine's name for a scenario given as a string


class Source:
    """What to hand the engine: a file (``kind == "file"``, ``path``) or a JSON string
    (``kind == "json"``, ``text``) with the ``base_dir`` its relative paths start from.
    ``label`` replaces the engine's ``<string>`` in messages."""

    def __init__(self, kind, path=None, text=None, base_dir=None, label=None):
        self.kind = kind
        self.path = path
        self.text = text
        self.base_dir = base_dir
        self.label = label

    def relabel(self, message):
        if self.label and message.startswith(STRING_LABEL):
            return self.label + message[len(STRING_LABEL):]
        return message


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


class _Duplicate(Exception):
    pass


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _loads(text):
    """Python's reading of a scenario, or None where the engine must report the problem
    itself (invalid JSON, duplicate keys): the engine's message has the exact place."""
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except (ValueError, _Duplicate):
        return None


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
    overrides = dict(overrides or {})
    if isinstance(scenario, dict):
        doc = copy.deepcopy(scenario)
        apply_overrides(doc, overrides)
        text = _dumps(doc, "scenario")
        return Source("json", text=text, base_dir=base_dir or os.getcwd())
    if isinstance(scenario, bytes):
        scenario = scenario.decode()
    if not isinstance(scenario, (str, os.PathLike)):
        raise ConfigError(
            f"scenario must be a path, a scenario name, a dict or a JSON string, "
            f"not {type(scenario).__name__}")
    s = os.fspath(scenario)
    if s.lstrip().startswith("{"):
        if not overrides:
            return Source("json", text=s, base_dir=base_dir or os.getcwd())
        doc = _loads(s)
        if doc is None:
            return Source("json", text=s, base_dir=base_dir or os.getcwd())
        apply_overrides(doc, overrides)
        return Source("json", text=_dumps(doc, "scenario"), base_dir=base_dir or os.getcwd(),
                      label=f"{STRING_LABEL} (with overrides)")
    if not os.path.exists(s) and _is_bare_name(s):
        s = find_scenario(s, library_path)
    if not overrides:
        return Source("file", path=s)
    try:
        with open(s, "rb") as f:
            raw = f.read()
        doc = _loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        doc = None
    if doc is None:
        # Unreadable or not JSON as Python reads it: the engine loads the file itself and
        # reports what is wrong with its own message.
        return Source("file", path=s)
    if not isinstance(doc, dict):
        return Source("file", path=s)
    apply_overrides(doc, overrides)
    if "name" not in doc:
        # The engine names a file scenario after the file; keep that name for the string.
        doc["name"] = os.path.splitext(os.path.basename(s))[0]
    return Source("json", text=_dumps(doc, s),
                  base_dir=os.path.dirname(os.path.abspath(s)),
                  label=f"{s} (with overrides)")


# ---- overrides ------------------------------------------------------------------------------

def split_key(key):
    if not isinstance(key, str) or not key:
        raise ConfigError(f"override key {key!r}: expected a non-empty string")
    if "." in key:
        segs = key.split(".")
    elif "__" in key:
        segs = key.split("__")
    else:
        segs = [key]
    if any(not s for s in segs):
        raise ConfigError(f'override "{key}": empty path segment')
    return segs


def _kind(v):
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, bool):
        return "a boolean"
    if v is None:
        return "null"
    return "a number"


def _element_name(el):
    if isinstance(el, str):
        return os.path.splitext(os.path.basename(el))[0] if ("/" in el or "." in el) else el
    if isinstance(el, dict):
        if isinstance(el.get("name"), str):
            return el["name"]
        if isinstance(el.get("path"), str):
            return os.path.splitext(os.path.basename(el["path"]))[0]
    return None


def _list_index(lst, seg, key, where):
    if seg.isdigit():
        i = int(seg)
        if i >= len(lst):
            raise ConfigError(f'override "{key}": {where} has {len(lst)} element'
                              f'{"" if len(lst) == 1 else "s"}, no [{i}]')
        return i
    hits = [i for i, el in enumerate(lst) if _element_name(el) == seg]
    if len(hits) == 1:
        return hits[0]
    names = ", ".join(n for n in (_element_name(el) for el in lst) if n) or "none"
    if not hits:
        raise ConfigError(f'override "{key}": {where} has no element named "{seg}" '
                          f"(names: {names})")
    raise ConfigError(f'override "{key}": {where} has {len(hits)} elements named "{seg}"')


def _path(where, seg, is_index):
    if is_index:
        return f"{where}[{seg}]"
    return f"{where}.{seg}" if where else seg


def apply_overrides(doc, overrides):
    """Applies overrides in place to a scenario object (see the module docstring)."""
    if not overrides:
        return doc
    if not isinstance(doc, dict):
        raise ConfigError(f"overrides need a scenario object, the scenario is {_kind(doc)}")
    for key, value in overrides.items():
        segs = split_key(key)
        cur, where = doc, ""
        for depth, seg in enumerate(segs):
            last = depth == len(segs) - 1
            if isinstance(cur, list):
                i = _list_index(cur, seg, key, where)
                if last:
                    cur[i] = copy.deepcopy(value)
                    break
                if isinstance(cur[i], str):
                    # the short forms: "plugins": ["gather"] is {"name": "gather"},
                    # "scripts": ["rules.lua"] is {"path": "rules.lua"}
                    cur[i] = {"path" if where == "scripts" else "name": cur[i]}
                where = _path(where, i, True)
                cur = cur[i]
            elif isinstance(cur, dict):
                if last:
                    cur[seg] = copy.deepcopy(value)
                    break
                if seg not in cur:
                    cur[seg] = {}
                where = _path(where, seg, False)
                cur = cur[seg]
            if not last and not isinstance(cur, (dict, list)):
                raise ConfigError(f'override "{key}": {where} is {_kind(cur)}, '
                                  f"not an object or array")
    return doc
