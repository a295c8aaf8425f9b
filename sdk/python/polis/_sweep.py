"""``polis.sweep(...)``: a grid of scenarios x overrides x policies x seeds, played by
``polis sweep`` (threads, or MPI ranks under a launcher), read back as records or a numpy
structured array.

    import polis
    rows = polis.sweep(scenarios=["contract", "negotiation"], grid={"max_steps": [60, 120]},
                       episodes=100, out="results/minigames")
    arr = polis.sweep("examples/sweep_minigames.json", out="results/m", format="array")
    arr[arr["max_steps"] == 60]["total_reward_normalised"].mean()

The sweep itself is the CLI's (docs/sweep.md): the results file ``OUT/results.jsonl`` is
append-only and ``resume=True`` plays only the jobs missing from it, so a sweep that was
interrupted (in Python or anywhere else) is finished by calling the same thing again with
``resume=True``. ``mpi=["mpirun", "-np", "4"]`` runs it over MPI ranks (a polis built with
MPI). ``polis.sweep_summary(out)`` is the per-cell summary (mean, sd, 95% interval).
"""

import json
import os
import shutil
import subprocess

from ._compat import HAVE_NUMPY
from ._lib import load_library, source_root
from .errors import PolisError, PolisIOError
from .scenario import _is_bare_name, find_scenario

if HAVE_NUMPY:
    import numpy as np
else:
    np = None

SPEC_KEYS = ("scenarios", "set", "grid", "policies", "seed", "episodes", "seeds", "steps",
             "metrics")


class SweepError(PolisError):
    """``polis sweep`` failed: ``message`` is its error output (the place: spec key, cell,
    job, results line), ``returncode`` its exit status (1: the spec, a scenario or the
    engine; 2: bad usage)."""

    def __init__(self, message, returncode):
        super().__init__(message)
        self.returncode = returncode


def find_polis_program(polis=None, library=None):
    """The ``polis`` program to run: ``polis=``, ``$POLIS_BIN``, the one beside the loaded
    libpolis (a build tree holds both), ``PREFIX/bin/polis`` of an installed libpolis, then
    ``polis`` on ``$PATH``."""
    if polis:
        return os.fspath(polis)
    env = os.environ.get("POLIS_BIN")
    if env:
        return env
    tried = []
    try:
        lib_dir = os.path.dirname(os.path.realpath(load_library(library).path))
    except PolisError:
        lib_dir = None
    candidates = []
    if lib_dir:
        candidates.append(os.path.join(lib_dir, "polis"))
        up = os.path.dirname(lib_dir)
        candidates += [os.path.join(up, "bin", "polis"),
                       os.path.join(os.path.dirname(up), "bin", "polis")]
    root = source_root()
    if root:
        candidates.append(os.path.join(root, "build", "polis"))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
        tried.append(c)
    which = shutil.which("polis")
    if which:
        return which
    raise PolisIOError("cannot find the polis program; tried " + ", ".join(tried) +
                       " and $PATH; pass polis= or set $POLIS_BIN")


def _scenario_path(s):
    s = os.fspath(s)
    if _is_bare_name(s):
        return find_scenario(s)
    return os.path.abspath(s)


def _spec(spec, kwargs):
    if spec is None:
        doc = {}
        base = os.getcwd()
    elif isinstance(spec, dict):
        doc = dict(spec)
        base = os.getcwd()
    else:
        path = os.fspath(spec)
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        base = os.path.dirname(os.path.abspath(path))
    if not isinstance(doc, dict):
        raise SweepError(f"{spec}: expected a JSON object", 1)
    doc.pop("out", None)
    doc.pop("doc", None)
    # relative scenario paths of a spec file are relative to the file
    if "scenarios" in doc and isinstance(doc["scenarios"], list):
        doc["scenarios"] = [
            s if not isinstance(s, str) or _is_bare_name(s) or os.path.isabs(s)
            else os.path.join(base, s) for s in doc["scenarios"]]
    for k, v in kwargs.items():
        if v is None:
            continue
        if k in ("seed", "episodes"):
            doc.pop("seeds", None)
        if k == "seeds":
            doc.pop("seed", None)
            doc.pop("episodes", None)
        doc[k] = list(v) if k in ("scenarios", "policies", "seeds") else v
    if "scenarios" in doc and isinstance(doc["scenarios"], list):
        doc["scenarios"] = [_scenario_path(s) if isinstance(s, (str, os.PathLike)) else s
                            for s in doc["scenarios"]]
    return doc


def _json_default(v):
    if hasattr(v, "tolist"):
        return v.tolist()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def sweep(spec=None, *, out, scenarios=None, grid=None, set=None, policies=None, seed=None,
          episodes=None, seeds=None, steps=None, metrics=None, resume=False, threads=None,
          mpi=None, format="records", polis=None, library=None, plugin_path=None,
          timeout=None, record=False):
    """Plays a sweep with ``polis sweep`` and returns every job's result, in job order.

    ``spec`` is a spec file (docs/sweep.md) or a dict of its keys; the keywords ``scenarios``
    (paths or bare ruleset names), ``grid`` ({override path: [values]}), ``set`` ({override
    path: value}), ``policies``, ``seed`` + ``episodes`` or ``seeds``, ``steps`` and
    ``metrics`` replace the spec's. ``out`` is the results directory (the spec actually run
    is kept there as ``spec.json``). ``resume=True`` finishes the sweep ``out`` holds.
    ``threads``: threads of each process (default: the machine's cores); ``mpi``: a launcher
    command line (``["mpirun", "-np", "4"]``, ``["srun"]``) to run it over MPI ranks.
    ``record=True``: every episode is also recorded to ``out/recordings/job-<N>.jsonl.gz``
    (docs/recording.md), named by its record's ``recording``.

    ``format="records"``: a list of dicts, one per job, as the results file has them (job,
    cell, scenario, policy, params, seed, steps, hash, metrics). ``format="array"`` (numpy):
    a structured array with one row per job and flat fields: job, cell, scenario, policy,
    seed, hash, one field per grid path (float when every value is a number) and one
    float64 field per metric (NaN where undefined). Raises ``SweepError`` with polis's
    message when the sweep fails.
    """
    if format not in ("records", "array"):
        raise ValueError(f"format={format!r}: expected 'records' or 'array'")
    if format == "array" and np is None:
        raise ImportError("format='array' needs numpy")
    doc = _spec(spec, {"scenarios": scenarios, "grid": grid, "set": set, "policies": policies,
                       "seed": seed, "episodes": episodes, "seeds": seeds, "steps": steps,
                       "metrics": metrics})
    out = os.path.abspath(os.fspath(out))
    os.makedirs(out, exist_ok=True)
    spec_file = os.path.join(out, "spec.json")
    with open(spec_file, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, default=_json_default, allow_nan=False)
        f.write("\n")
    cmd = list(mpi or []) + [find_polis_program(polis, library), "sweep", spec_file, "--out",
                             out, "--quiet", "--format", "json"]
    if resume:
        cmd.append("--resume")
    if record:
        cmd.append("--record")
    if threads is not None:
        cmd += ["--threads", str(int(threads))]
    if plugin_path:
        cmd += ["--plugin-path", os.fspath(plugin_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        msg = r.stderr.strip() or f"{' '.join(cmd)} exited with status {r.returncode}"
        raise SweepError(msg, r.returncode)
    return read_results(out, format=format)


def read_results(out, format="records"):
    """The results of the sweep in ``out`` (``OUT/results.jsonl``), in job order; the first
    result of a job when the file holds it twice. See ``sweep`` for the formats."""
    path = os.path.join(os.fspath(out), "results.jsonl")
    by_job = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if n == 1 or not line.endswith("\n"):
                continue  # the header; a torn last line
            r = json.loads(line)
            by_job.setdefault(r["job"], r)
    records = [by_job[j] for j in sorted(by_job)]
    if format == "records":
        return records
    if format != "array":
        raise ValueError(f"format={format!r}: expected 'records' or 'array'")
    if np is None:
        raise ImportError("format='array' needs numpy")
    return _to_array(records)


def _to_array(records):
    params, metrics = [], []
    for r in records:
        for k in r["params"]:
            if k not in params:
                params.append(k)
        for k in r["metrics"]:
            if k not in metrics:
                metrics.append(k)
    fixed = ["job", "cell", "scenario", "policy", "seed", "hash"]
    clash = [k for k in params + metrics if k in fixed]
    if clash:
        raise SweepError(f"grid path or metric named like a fixed field: {clash}", 1)

    def width(values):
        return max([1] + [len(v) for v in values])

    numeric = {k: all(isinstance(r["params"].get(k), (int, float)) and
                      not isinstance(r["params"].get(k), bool) for r in records)
               for k in params}
    param_text = {k: [json.dumps(r["params"].get(k)) for r in records] for k in params}
    dtype = [("job", "i8"), ("cell", "i8"),
             ("scenario", f"U{width(r['scenario'] for r in records)}"),
             ("policy", f"U{width(r['policy'] for r in records)}"),
             ("seed", "u8"), ("hash", "U16")]
    dtype += [(k, "f8" if numeric[k] else f"U{width(param_text[k])}") for k in params]
    dtype += [(k, "f8") for k in metrics]
    arr = np.zeros(len(records), dtype=dtype)
    for i, r in enumerate(records):
        row = [r["job"], r["cell"], r["scenario"], r["policy"], r["seed"], r["hash"]]
        row += [r["params"][k] if numeric[k] else param_text[k][i] for k in params]
        row += [float("nan") if r["metrics"].get(k) is None else r["metrics"][k]
                for k in metrics]
        arr[i] = tuple(row)
    return arr


def sweep_summary(out):
    """The per-cell summary of a finished sweep (``OUT/summary.json``): a dict with
    ``"cells"``, each with its scenario, policy, params, episodes and, per metric, ``n``,
    ``mean``, ``sd`` and ``ci95`` ([low, high]; None where undefined)."""
    with open(os.path.join(os.fspath(out), "summary.json"), encoding="utf-8") as f:
        return json.load(f)
