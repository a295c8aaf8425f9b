"""``TaskVectorEnv``: M envs of one scenario whose task (scenario overrides) each env draws
anew at every reset from a task source — a ``Curriculum``, a ``LearningProgress`` pool or a
``FixedTask`` (``polis.rl.curriculum``) — and reports back when the episode ends.

It has the interface of ``polis.vector_env(..., flatten=True, metrics=...)`` that trainers use:
one row per agent of every env, ``reset(seed)`` and ``step(actions)`` returning
``({"observation": float32 [rows, D], "action_mask": int8 [rows, A]}, rewards, terminations,
truncations, infos)`` with ``infos["episode"]``, ``infos["_episode"]``, ``infos["metrics"]``
and ``infos["_metrics"]``, and next-step auto-reset. Every task must keep the observation
layout and the actions of the first (tasks change values, not shapes): a task that changes
them is refused naming it and the difference.

Env k's episode e is reset with ``polis.vector.env_seed(seed, k, e)`` (as ``polis_vec`` does)
and its task is drawn from ``numpy.random.default_rng([seed, k, e])``, so given the same
task source state an episode is reproduced from its seed. An env is re-created only when its
task's overrides change.
"""

from __future__ import annotations

import numpy as np

import polis
from ..parallel import FlatLayout, with_metrics
from ..vector import env_seed
from .curriculum import BUILTIN_METRICS, CurriculumError, flatten_metrics
from .policy import EnvSpec, describe_mismatch, spec_of


class TaskVectorEnv:
    def __init__(self, scenario, source, num_envs=1, *, overrides=None, metrics=True,
                 library=None, plugin_path=None):
        if num_envs < 1:
            raise polis.InvalidArgumentError(f"num_envs must be at least 1, got {num_envs}")
        self.scenario = scenario
        self.source = source
        self.base = dict(overrides or {})
        self.metrics = metrics
        self._lib_arg, self._plugin_path = library, plugin_path
        self.num_envs = num_envs
        self.envs = [None] * num_envs
        self.tasks = [None] * num_envs
        self.episode = np.zeros(num_envs, np.int64)
        self._seed = 0
        # the first env fixes the layout every task must keep
        first = source.sample(np.random.default_rng([0, 0, 0]))
        env = self._create(first, check=False)
        self._spec = spec_of(env)
        self.name = env.name
        self.agent_names = env.agent_names
        self.action_names = env.action_names
        self.obs_fields = env.obs_fields
        self.n_actions = env.n_actions
        self.agents_per_env = env.n_agents
        self.num_rows = num_envs * env.n_agents
        self.layout = FlatLayout(env.obs_fields)
        env.reset(0)
        available = set(BUILTIN_METRICS) | set(flatten_metrics(env.episode_metrics() or {}))
        env.close()
        source.check_metrics(available)
        rows, n = self.num_rows, self.agents_per_env
        self.flat = np.zeros((rows, self.layout.dim), np.float32)
        self.masks = np.zeros((rows, self.n_actions), np.int8)
        self.rewards = np.zeros(rows, np.float32)
        self.terminations = np.zeros(rows, bool)
        self.truncations = np.zeros(rows, bool)
        self.autoreset = np.zeros(num_envs, bool)
        self._ep_ret = np.zeros(rows, np.float64)
        self._ep_len = np.zeros(rows, np.int64)
        self._ended = np.zeros(rows, bool)
        self._ep_r = np.zeros(rows, np.float32)
        self._ep_l = np.zeros(rows, np.int64)
        self._metrics_list = [None] * num_envs
        self._metrics_mask = np.zeros(num_envs, bool)
        self.observations = {"observation": self.flat, "action_mask": self.masks}
        self.infos = {"episode": {"r": self._ep_r, "l": self._ep_l}, "_episode": self._ended,
                      "autoreset": self.autoreset, "action_mask": self.masks,
                      "task": self.tasks}
        if metrics:
            self.infos["metrics"] = self._metrics_list
            self.infos["_metrics"] = self._metrics_mask
        self._n = n

    # ---- envs ----------------------------------------------------------------------------

    def _create(self, task, check=True):
        ov = {**self.base, **task.overrides}
        if self.metrics:
            ov = with_metrics(self.scenario, ov, self._lib_arg)
        try:
            env = polis.Env(self.scenario, ov, library=self._lib_arg,
                            plugin_path=self._plugin_path)
        except polis.PolisError as e:
            raise CurriculumError(f"task {task.name!r} ({task.overrides}): {e}") from None
        if check:
            why = describe_mismatch(self._spec, spec_of(env), what="first task")
            if why is None and env.n_agents != self.agents_per_env:
                why = (f"{env.n_agents} agents, the first task has {self.agents_per_env} (the "
                       f"vector env's rows)")
            if why:
                env.close()
                raise CurriculumError(f"task {task.name!r} changes the env's layout: {why}; "
                                      f"a task may change values, not the observation "
                                      f"layout or the actions")
        return env

    def _start(self, k):
        """Env k's next episode: draw its task, (re)create the env if the task changed,
        reset it, and write its first observation."""
        e = int(self.episode[k])
        task = self.source.sample(np.random.default_rng([self._seed, k, e]))
        old = self.tasks[k]
        if self.envs[k] is None or old is None or old.key() != task.key():
            if self.envs[k] is not None:
                self.envs[k].close()
            self.envs[k] = self._create(task)
        self.tasks[k] = task
        self.envs[k].reset(env_seed(self._seed, k, e))
        self._write(k)

    def _write(self, k):
        env, n = self.envs[k], self._n
        rows = slice(k * n, (k + 1) * n)
        self.layout.fill(self.flat[rows], env.fields)
        self.masks[rows] = env.masks
        self.rewards[rows] = env.rewards
        self.terminations[rows] = env.terminations.astype(bool)
        self.truncations[rows] = env.truncations.astype(bool)

    # ---- the vector env API --------------------------------------------------------------

    def reset(self, seed=None, options=None):
        self._seed = int(seed) if seed is not None else 0
        self.episode[:] = 0
        self.autoreset[:] = False
        self._ep_ret[:] = 0
        self._ep_len[:] = 0
        for k in range(self.num_envs):
            self._start(k)
        self.rewards[:] = 0
        self._ended[:] = False
        self._metrics_mask[:] = False
        return self.observations, self.infos

    def step(self, actions):
        actions = np.asarray(actions)
        n = self._n
        self._ended[:] = False
        self._metrics_mask[:] = False
        for k in range(self.num_envs):
            rows = slice(k * n, (k + 1) * n)
            env = self.envs[k]
            if self.autoreset[k]:
                self.autoreset[k] = False
                self.episode[k] += 1
                self._start(k)
                self.rewards[rows] = 0
                self.terminations[rows] = False
                self.truncations[rows] = False
                self._ep_ret[rows] = 0
                self._ep_len[rows] = 0
                continue
            live = ~(env.terminations.astype(bool) | env.truncations.astype(bool))
            env.step(actions[rows].astype(np.int32))
            self._write(k)
            self._ep_ret[rows] += self.rewards[rows]
            self._ep_len[rows] += live
            if env.done:
                self.autoreset[k] = True
                self._ended[rows] = True
                self._ep_r[rows] = self._ep_ret[rows]
                self._ep_l[rows] = self._ep_len[rows]
                m = env.episode_metrics() or {}
                self._metrics_list[k] = m
                self._metrics_mask[k] = True
                result = flatten_metrics(m)
                result["return"] = float(self._ep_ret[rows].mean())
                result["length"] = int(env.tick)
                result["agent_steps"] = int(self._ep_len[rows].sum())
                self.source.report(self.tasks[k], result)
        return self.observations, self.rewards, self.terminations, self.truncations, self.infos

    def close(self):
        for k, env in enumerate(self.envs):
            if env is not None:
                env.close()
                self.envs[k] = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
