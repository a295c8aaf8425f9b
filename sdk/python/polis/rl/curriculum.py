"""Curricula and task samplers: what each env of a ``TaskVectorEnv`` plays at its next reset.

A *task* is a set of scenario overrides (docs/scenario.md, "Overrides"): fixed ones
(``"set"``) and drawn ones (``"vary"``, drawn anew for every episode from a generator seeded
by the env's seed and episode number). A *task source* hands out tasks and learns from the
episodes they produced:

    source.sample(rng) -> Task          # at an env's reset
    source.report(task, result)         # when its episode ended: {"return", metrics...}
    source.state() -> dict              # logged with every update

Two sources (docs/curricula.md has the file formats):

- ``Curriculum``: stages played in order; a stage ends when a metric averaged over its last
  N episodes crosses a threshold (``"until": {"metric", "over", "at_least" | "at_most"}``), or
  when its budget (``max_episodes``, ``max_agent_steps``) is spent. The last stage never ends.
- ``LearningProgress``: a pool of tasks sampled in proportion to their learning progress,
  the distance between a fast and a slow moving average of each task's score (tasks being
  learned, or forgotten, are played most; mastered and hopeless ones less), with a share of
  uniform exploration.

Draws (the ``"vary"`` values, also accepted by the kernel's task distributions):

| draw | value |
|---|---|
| ``{"choice": [v, ...]}`` | one of the values, uniformly |
| ``{"choice": [v, ...], "weights": [w, ...]}`` | one of the values with those weights |
| ``{"range": [lo, hi]}`` | a real number uniform in [lo, hi) |
| ``{"range": [lo, hi], "int": true}`` | an integer uniform in lo..hi (both included) |
| ``{"groups": {"agents": N, "groups": G, "home": [g, ...], "p_home": P, "attribute": "division_weight"}}`` | a social structure for ``plugins.social.params.social.groups``: each agent joins its home group with probability P, else a group drawn uniformly (AdaSociety's CL, stage 2) |

Any number in a draw may be a schedule ``{"from": a, "to": b, "episodes": n}``: a at the
stage's first episode, moving linearly to b over its first n episodes (then b).
"""

from __future__ import annotations

import collections
import json
import math
import os

import numpy as np

DRAW_KINDS = ("choice", "range", "groups")
BUILTIN_METRICS = ("return", "length")


class CurriculumError(ValueError):
    """A curriculum or task file that is wrong; the message names the file and the JSON path."""


class Task:
    """A task: its name, the stage it belongs to (or None), and its override values."""

    __slots__ = ("name", "stage", "overrides", "index")

    def __init__(self, name, overrides, stage=None, index=None):
        self.name, self.overrides, self.stage, self.index = name, overrides, stage, index

    def key(self):
        return json.dumps(self.overrides, sort_keys=True, separators=(",", ":"))

    def __repr__(self):
        return f"<Task {self.name} {self.overrides}>"


def flatten_metrics(obj, prefix="", out=None):
    """A nested metrics object as ``polis eval`` flattens it: numbers (and null) under dotted
    keys; arrays and the top-level ``episode`` left out."""
    out = {} if out is None else out
    for k, v in obj.items():
        if not prefix and k == "episode":
            continue
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            flatten_metrics(v, key + ".", out)
        elif v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)):
            out[key] = None if v is None else float(v)
    return out


# ---- validation helpers ------------------------------------------------------------------

def _err(where, path, msg):
    return CurriculumError(f"{where}: {path}: {msg}")


def _check_keys(obj, allowed, where, path):
    if not isinstance(obj, dict):
        raise _err(where, path, f"expected an object, got {type(obj).__name__}")
    for k in obj:
        if k.startswith("_") or k == "doc":
            continue
        if k not in allowed:
            raise _err(where, path, f"unknown key {k!r} (keys: {', '.join(allowed)})")


def _number(v, where, path, lo=-math.inf, hi=math.inf, schedule=True):
    if schedule and isinstance(v, dict):
        _check_keys(v, ("from", "to", "episodes"), where, path)
        for k in ("from", "to", "episodes"):
            if k not in v:
                raise _err(where, path, f"a schedule needs \"{k}\" (from, to, episodes)")
        _number(v["from"], where, f"{path}.from", lo, hi, False)
        _number(v["to"], where, f"{path}.to", lo, hi, False)
        _number(v["episodes"], where, f"{path}.episodes", 1, math.inf, False)
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
        rng = f" in [{lo}, {hi}]" if (lo, hi) != (-math.inf, math.inf) else ""
        raise _err(where, path, f"expected a number{rng}" + (" or a schedule {\"from\", \"to\", "
                                                            "\"episodes\"}" if schedule else "")
                   + f", got {json.dumps(v)}")


def value_at(v, episode):
    """A number or schedule at the stage's ``episode`` (counted from 0)."""
    if isinstance(v, dict):
        f = min(1.0, episode / float(v["episodes"]))
        return v["from"] + (v["to"] - v["from"]) * f
    return v


def check_draw(d, where, path):
    """Refuses a malformed draw with the file and the JSON path."""
    if not isinstance(d, dict) or len([k for k in d if k in DRAW_KINDS]) != 1:
        raise _err(where, path, f"a draw is an object with one of {', '.join(DRAW_KINDS)}, got "
                                f"{json.dumps(d)[:80]}")
    if "choice" in d:
        _check_keys(d, ("choice", "weights"), where, path)
        c = d["choice"]
        if not isinstance(c, list) or not c:
            raise _err(where, f"{path}.choice", "expected a non-empty array of values")
        if "weights" in d:
            w = d["weights"]
            if not isinstance(w, list) or len(w) != len(c):
                raise _err(where, f"{path}.weights", f"expected {len(c)} weights (one per choice)")
            for i, x in enumerate(w):
                _number(x, where, f"{path}.weights[{i}]", 0)
    elif "range" in d:
        _check_keys(d, ("range", "int"), where, path)
        r = d["range"]
        if not isinstance(r, list) or len(r) != 2:
            raise _err(where, f"{path}.range", "expected [low, high]")
        for i in range(2):
            _number(r[i], where, f"{path}.range[{i}]")
        if not isinstance(d.get("int", False), bool):
            raise _err(where, f"{path}.int", "expected true or false")
        if all(not isinstance(x, dict) for x in r) and r[0] > r[1]:
            raise _err(where, f"{path}.range", f"low {r[0]} is above high {r[1]}")
        if d.get("int") and any(isinstance(x, float) and not x.is_integer() for x in r):
            raise _err(where, f"{path}.range", "an integer range needs integer bounds")
    else:
        g = d["groups"]
        _check_keys(d, ("groups",), where, path)
        _check_keys(g, ("agents", "groups", "home", "p_home", "attribute"), where,
                    f"{path}.groups")
        for k in ("agents", "groups"):
            if k not in g:
                raise _err(where, f"{path}.groups", f"needs \"{k}\"")
            _number(g[k], where, f"{path}.groups.{k}", 1, 65536, False)
        home = g.get("home", [0] * int(g["agents"]))
        if not isinstance(home, list) or len(home) != g["agents"]:
            raise _err(where, f"{path}.groups.home", f"expected {g['agents']} group ids (one "
                                                      f"per agent)")
        for i, h in enumerate(home):
            _number(h, where, f"{path}.groups.home[{i}]", 0, g["groups"] - 1, False)
        _number(g.get("p_home", 1.0), where, f"{path}.groups.p_home", 0, 1)
        if not isinstance(g.get("attribute", "division_weight"), str):
            raise _err(where, f"{path}.groups.attribute", "expected an attribute name")


def draw(d, rng, episode=0):
    """One value of a (checked) draw, from the numpy Generator ``rng``."""
    if "choice" in d:
        c = d["choice"]
        if "weights" in d:
            w = np.array([value_at(x, episode) for x in d["weights"]], np.float64)
            if w.sum() <= 0:
                raise CurriculumError(f"weights {d['weights']} sum to 0 at episode {episode}")
            return c[int(rng.choice(len(c), p=w / w.sum()))]
        return c[int(rng.integers(len(c)))]
    if "range" in d:
        lo, hi = (value_at(x, episode) for x in d["range"])
        if d.get("int"):
            return int(rng.integers(int(lo), int(hi) + 1))
        return float(lo + (hi - lo) * rng.random())
    g = d["groups"]
    n, n_groups = int(g["agents"]), int(g["groups"])
    home = g.get("home", [0] * n)
    p = value_at(g.get("p_home", 1.0), episode)
    attr = g.get("attribute", "division_weight")
    members = [[] for _ in range(n_groups)]
    for a in range(n):
        grp = int(home[a]) if rng.random() < p else int(rng.integers(n_groups))
        members[grp].append(a)
    return [{"players": {"ids": m, "attributes": {attr: [1] * len(m)}}} if m
            else {"players": {}} for m in members]


class TaskSpec:
    """A task's fixed overrides and its draws."""

    def __init__(self, name, set_, vary, where, path):
        self.name = name
        if not isinstance(set_, dict):
            raise _err(where, f"{path}.set", "expected an object of override paths and values")
        if not isinstance(vary, dict):
            raise _err(where, f"{path}.vary", "expected an object of override paths and draws")
        for k, d in vary.items():
            check_draw(d, where, f"{path}.vary[{json.dumps(k)}]")
        self.set, self.vary = set_, vary

    def make(self, rng, episode, stage=None, index=None):
        ov = dict(self.set)
        for k, d in self.vary.items():
            ov[k] = draw(d, rng, episode)
        return Task(self.name, ov, stage=stage, index=index)


def _read(path, tag):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise CurriculumError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise CurriculumError(f"{path}: not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise CurriculumError(f"{path}: expected a JSON object")
    if doc.get(tag) != 1:
        raise CurriculumError(f"{path}: {tag}: expected 1 (the format's version), got "
                              f"{json.dumps(doc.get(tag))}")
    return doc


def _metric_name(v, where, path):
    if not isinstance(v, str) or not v:
        raise _err(where, path, "expected a metric name (return, length, or a metrics "
                                "plugin key such as total_reward_normalised)")
    return v


class Curriculum:
    """Stages in order with promotion rules; see the module's doc."""

    def __init__(self, doc, where="curriculum"):
        _check_keys(doc, ("polis_curriculum", "scenario", "metric", "stages"), where, "$")
        self.where = where
        self.scenario = doc.get("scenario")
        stages = doc.get("stages")
        if not isinstance(stages, list) or not stages:
            raise _err(where, "stages", "expected a non-empty array of stages")
        default_metric = _metric_name(doc.get("metric", "return"), where, "metric")
        self.stages = []
        for i, s in enumerate(stages):
            p = f"stages[{i}]"
            _check_keys(s, ("name", "set", "vary", "until"), where, p)
            name = s.get("name", f"stage_{i + 1}")
            if not isinstance(name, str):
                raise _err(where, f"{p}.name", "expected a string")
            until = s.get("until")
            last = i == len(stages) - 1
            if until is not None:
                _check_keys(until, ("metric", "over", "at_least", "at_most", "max_episodes",
                                    "max_agent_steps"), where, f"{p}.until")
                until = dict(until)
                until["metric"] = _metric_name(until.get("metric", default_metric), where,
                                               f"{p}.until.metric")
                _number(until.get("over", 100), where, f"{p}.until.over", 1, 1e9, False)
                until["over"] = int(until.get("over", 100))
                if "at_least" in until and "at_most" in until:
                    raise _err(where, f"{p}.until", "at_least and at_most exclude each other")
                for k in ("at_least", "at_most"):
                    if k in until:
                        _number(until[k], where, f"{p}.until.{k}", schedule=False)
                for k in ("max_episodes", "max_agent_steps"):
                    if k in until:
                        _number(until[k], where, f"{p}.until.{k}", 1, math.inf, False)
                if not any(k in until for k in ("at_least", "at_most", "max_episodes",
                                                 "max_agent_steps")):
                    raise _err(where, f"{p}.until", "needs at_least, at_most, max_episodes or "
                                                    "max_agent_steps")
            elif not last:
                raise _err(where, f"{p}", "every stage but the last needs \"until\"")
            self.stages.append((name, TaskSpec(name, s.get("set", {}), s.get("vary", {}),
                                               where, p), until))
        self.stage = 0
        self._reset_stage()
        self.history = []  # (stage name, episodes, agent-steps at promotion, window mean)

    def _reset_stage(self):
        until = self.stages[self.stage][2]
        self.window = collections.deque(maxlen=until["over"] if until else 1)
        self.stage_episodes = 0
        self.stage_steps = 0
        self.issued = 0

    def metrics_used(self):
        return [(f"stages[{i}].until.metric", u["metric"]) for i, (_, _, u)
                in enumerate(self.stages) if u]

    def check_metrics(self, available):
        """Refuses a promotion metric the episodes do not report, naming the place."""
        for path, m in self.metrics_used():
            if m not in available:
                raise _err(self.where, path, f"no metric {m!r} in this scenario's episodes "
                                             f"(metrics: {', '.join(sorted(available))})")

    def sample(self, rng):
        name, spec, _ = self.stages[self.stage]
        t = spec.make(rng, self.issued, stage=self.stage)
        self.issued += 1
        return t

    def report(self, task, result):
        if task.stage != self.stage:
            return  # an episode begun under an earlier stage
        until = self.stages[self.stage][2]
        self.stage_episodes += 1
        self.stage_steps += int(result.get("agent_steps", 0))
        if until is None:
            return
        v = result.get(until["metric"])
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            self.window.append(float(v))
        full = len(self.window) == until["over"]
        mean = float(np.mean(self.window)) if self.window else None
        done = (full and "at_least" in until and mean >= until["at_least"]) or \
               (full and "at_most" in until and mean <= until["at_most"]) or \
               self.stage_episodes >= until.get("max_episodes", math.inf) or \
               self.stage_steps >= until.get("max_agent_steps", math.inf)
        if done and self.stage < len(self.stages) - 1:
            self.history.append({"stage": self.stages[self.stage][0],
                                 "episodes": self.stage_episodes,
                                 "agent_steps": self.stage_steps, "window_mean": mean})
            self.stage += 1
            self._reset_stage()

    def state(self):
        until = self.stages[self.stage][2]
        return {"stage": self.stages[self.stage][0], "stage_index": self.stage,
                "stage_episodes": self.stage_episodes, "stage_agent_steps": self.stage_steps,
                "window_mean": float(np.mean(self.window)) if self.window and until else None,
                "promotions": list(self.history)}


class LearningProgress:
    """A task pool sampled by learning progress; see the module's doc."""

    def __init__(self, doc, where="tasks"):
        _check_keys(doc, ("polis_tasks", "scenario", "metric", "tasks", "sampler"), where, "$")
        self.where = where
        self.scenario = doc.get("scenario")
        self.metric = _metric_name(doc.get("metric", "return"), where, "metric")
        tasks = doc.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            raise _err(where, "tasks", "expected a non-empty array of tasks")
        self.specs = []
        for i, t in enumerate(tasks):
            _check_keys(t, ("name", "set", "vary"), where, f"tasks[{i}]")
            self.specs.append(TaskSpec(t.get("name", f"task_{i}"), t.get("set", {}),
                                       t.get("vary", {}), where, f"tasks[{i}]"))
        s = doc.get("sampler", {})
        _check_keys(s, ("fast", "slow", "explore"), where, "sampler")
        self.fast_rate = s.get("fast", 0.1)
        self.slow_rate = s.get("slow", 0.02)
        self.explore = s.get("explore", 0.2)
        _number(self.fast_rate, where, "sampler.fast", 0, 1, False)
        _number(self.slow_rate, where, "sampler.slow", 0, 1, False)
        _number(self.explore, where, "sampler.explore", 0, 1, False)
        n = len(self.specs)
        self.fast = np.zeros(n)
        self.slow = np.zeros(n)
        self.count = np.zeros(n, np.int64)
        self.lo, self.hi = math.inf, -math.inf
        self.issued = np.zeros(n, np.int64)

    def check_metrics(self, available):
        if self.metric not in available:
            raise _err(self.where, "metric", f"no metric {self.metric!r} in this scenario's "
                                             f"episodes (metrics: {', '.join(sorted(available))})")

    def probabilities(self):
        n = len(self.specs)
        # every task is played once before progress decides: first those never handed out,
        # then those handed out whose episodes have not ended yet
        for unseen in (self.issued == 0, self.count == 0):
            if unseen.any():
                return unseen / unseen.sum()
        lp = np.abs(self.fast - self.slow)
        if lp.sum() <= 0:
            return np.full(n, 1.0 / n)
        return (1 - self.explore) * lp / lp.sum() + self.explore / n

    def sample(self, rng):
        i = int(rng.choice(len(self.specs), p=self.probabilities()))
        t = self.specs[i].make(rng, int(self.issued[i]), index=i)
        self.issued[i] += 1
        return t

    def report(self, task, result):
        v = result.get(self.metric)
        if v is None or task.index is None:
            return
        v = float(v)
        # scores are rescaled into [0, 1] by the range seen so far, so that tasks of
        # different scales compare
        self.lo, self.hi = min(self.lo, v), max(self.hi, v)
        x = (v - self.lo) / (self.hi - self.lo) if self.hi > self.lo else 0.0
        i = task.index
        if self.count[i] == 0:
            self.fast[i] = self.slow[i] = x
        else:
            self.fast[i] += self.fast_rate * (x - self.fast[i])
            self.slow[i] += self.slow_rate * (x - self.slow[i])
        self.count[i] += 1

    def state(self):
        p = self.probabilities()
        return {"stage": None, "tasks": {s.name: {"p": round(float(p[i]), 4),
                                                  "episodes": int(self.count[i])}
                                         for i, s in enumerate(self.specs)}}


class FixedTask:
    """One task, always (a scenario's own episodes, with optional draws)."""

    def __init__(self, set_=None, vary=None, where="task"):
        self.spec = TaskSpec("task", set_ or {}, vary or {}, where, "$")
        self.issued = 0

    def check_metrics(self, available):
        pass

    def sample(self, rng):
        self.issued += 1
        return self.spec.make(rng, self.issued - 1)

    def report(self, task, result):
        pass

    def state(self):
        return {"stage": None}


def _relative_scenario(doc, path):
    s = doc.get("scenario")
    if isinstance(s, str) and not os.path.isabs(s) and ("/" in s or s.endswith(".json")):
        return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), s))
    return s


def load_curriculum(path):
    doc = _read(path, "polis_curriculum")
    c = Curriculum(doc, where=path)
    c.scenario = _relative_scenario(doc, path)
    return c


def load_task_pool(path):
    doc = _read(path, "polis_tasks")
    lp = LearningProgress(doc, where=path)
    lp.scenario = _relative_scenario(doc, path)
    return lp
