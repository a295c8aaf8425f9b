"""``polis.gym_env``: one agent of a polis scenario as a single-agent Gymnasium env.

The learner controls ``agent`` (default: the first); every other agent plays ``others``:
``"noop"`` (action 0, always legal) or ``"random"`` (a uniformly random legal action, drawn
from the env's ``np_random``, so an episode is fixed by the seed and the learner's actions).
The episode ends when the controlled agent is terminated (the game's end) or truncated
(``max_steps``). Observations, masks, options and flags are those of ``parallel_env`` for
that agent (``action_mask="obs"``: ``{"observation": ..., "action_mask": ...}``;
``flatten=True``: a float32 vector beside the mask).

With gymnasium importable the class is a ``gymnasium.Env`` subclass and ``reset(seed=)``
seeds ``np_random`` through ``gymnasium.Env.reset``. Envs pickle as ``parallel_env`` does.
"""

from __future__ import annotations

import random as _random
from collections.abc import Mapping
from typing import Any

from ._compat import GYM_ENV_BASE, bases, np
from .core import U64
from .errors import InvalidArgumentError
from .parallel import RGB_CELL_PX, ParallelEnv, _rebuild

OTHERS = ("noop", "random")


class GymEnv(*bases(GYM_ENV_BASE)):
    """A single-agent view of a polis scenario; build it with ``polis.gym_env``."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"]}

    def __init__(self, scenario, *, agent=None, others="noop", render_mode=None, **kwargs):
        if others not in OTHERS:
            raise InvalidArgumentError(f"others must be one of {OTHERS}, got {others!r}")
        self.parallel = ParallelEnv(scenario, render_mode=render_mode, **kwargs)
        par = self.parallel
        self._init_kwargs = dict(par._init_kwargs, agent=agent, others=others)
        if agent is None:
            agent = par.possible_agents[0]
        par._id(agent)
        self.agent = agent
        self.others = others
        self.render_mode = render_mode
        self.observation_space = par.observation_space(agent)
        self.action_space = par.action_space(agent)
        self.metadata = dict(self.metadata, name=par.metadata["name"],
                             render_modes=par.metadata["render_modes"])
        if GYM_ENV_BASE is None:
            self._np_random = None
        self._names = par.possible_agents
        self._mask_of = {}

    def __reduce__(self):
        return (_rebuild, (type(self), self._init_kwargs,
                           (self.parallel.last_seed, self.parallel._next_seed)))

    def _restore_seeds(self, seeds):
        self.parallel._restore_seeds(seeds)

    # gymnasium.Env provides np_random; without gymnasium, the same contract here
    if GYM_ENV_BASE is None:
        @property
        def np_random(self):
            if self._np_random is None:
                self._np_random = (np.random.default_rng() if np is not None
                                   else _random.Random())
            return self._np_random

        @property
        def unwrapped(self):
            return self

    def reset(self, seed: int | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[Any, dict]:
        """Starts an episode; returns ``(observation, info)`` of the controlled agent."""
        if GYM_ENV_BASE is not None:
            super().reset(seed=seed)
        elif seed is not None:
            self._np_random = (np.random.default_rng(seed % U64) if np is not None
                               else _random.Random(seed % U64))
        obs, infos = self.parallel.reset(seed=seed, options=options)
        self._last_obs = obs
        return obs[self.agent], infos[self.agent]

    def _other_actions(self, obs):
        par = self.parallel
        if self.others == "noop":
            return {}
        rng = self.np_random
        actions = {}
        for name in par.agents:
            if name == self.agent:
                continue
            o = obs[name]
            mask = o["action_mask"] if isinstance(o, dict) and "action_mask" in o \
                else par.action_mask(name)
            legal = [i for i, v in enumerate(mask.tolist() if hasattr(mask, "tolist")
                                             else mask) if v]
            if not legal:
                actions[name] = 0
            elif np is not None:
                actions[name] = legal[int(rng.integers(len(legal)))]
            else:
                actions[name] = legal[rng.randrange(len(legal))]
        return actions

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One tick: the controlled agent plays ``action``, the others ``others``. Returns
        ``(observation, reward, terminated, truncated, info)``."""
        actions = self._other_actions(self._last_obs)
        actions[self.agent] = action
        obs, rew, term, trunc, infos = self.parallel.step(actions)
        self._last_obs = obs
        a = self.agent
        return obs[a], float(rew[a]), bool(term[a]), bool(trunc[a]), infos[a]

    def render(self):
        """The controlled agent's text view: returned (``render_mode`` None or "ansi") or
        printed ("human"); with ``render_mode="rgb_array"`` its view window as an
        ``(H, W, 3)`` uint8 array (the whole map when the game registered no view)."""
        if self.render_mode == "rgb_array":
            p = self.parallel
            return p.core.render_rgb(p._id(self.agent), RGB_CELL_PX)
        text = self.parallel.render_agent(self.agent)
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def close(self) -> None:
        self.parallel.close()

    def __repr__(self):
        return f"<polis.GymEnv {self.metadata['name']!r}: agent {self.agent}>"


def gym_env(scenario: Any, **kwargs: Any) -> GymEnv:
    """A ``GymEnv``: ``agent`` (name; default the first), ``others`` ("noop" or "random"),
    and every ``parallel_env`` option and override."""
    return GymEnv(scenario, **kwargs)


def aec_env(scenario: Any, **kwargs: Any) -> Any:
    """PettingZoo's AEC form of ``parallel_env(scenario, **kwargs)``
    (``pettingzoo.utils.parallel_to_aec``); needs pettingzoo."""
    try:
        from pettingzoo.utils.conversions import parallel_to_aec
    except ImportError:
        raise ImportError("polis.aec_env needs pettingzoo (its parallel_to_aec wrapper)") \
            from None
    return parallel_to_aec(ParallelEnv(scenario, **kwargs))
