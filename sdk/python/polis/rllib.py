"""An adapter with RLlib's ``MultiAgentEnv`` shape, so polis runs in Ray's rollout workers.

``RLlibMultiAgentEnv`` derives from ``ray.rllib.env.multi_agent_env.MultiAgentEnv`` when
ray is importable and from ``object`` otherwise (ray is imported only by this module, and
only when it is installed). RLlib's conventions live here and nowhere else:

- the ``"__all__"`` key of ``terminateds`` / ``truncateds``: ``terminateds["__all__"]``
  when every agent is done and none was truncated, ``truncateds["__all__"]`` when every
  agent is done and at least one was truncated (the episode hit ``max_steps``);
- RLlib keeps observations in its episode buffers, so observations are copies here
  (``copy_obs`` defaults to True); the action mask is in the observation dict
  (``"action_mask"``), the layout RLlib's action-masking models read;
- spaces: ``observation_spaces`` / ``action_spaces`` dicts, ``get_observation_space(agent)``
  / ``get_action_space(agent)``, and ``observation_space`` / ``action_space`` as Dict
  spaces keyed by agent (the old API stack's "preferred format").

Register it with ``tune.register_env("polis", lambda cfg: RLlibMultiAgentEnv(cfg))`` and
pass ``env_config={"scenario": "gather", "max_steps": 100}``: ``scenario`` is required, the
other keys are ``polis.parallel_env`` options and scenario overrides.
"""

from . import spaces as _spaces
from .parallel import ParallelEnv

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv as _Base
    HAVE_RAY = True
except ImportError:
    _Base = object
    HAVE_RAY = False

ALL = "__all__"


class RLlibMultiAgentEnv(_Base):
    def __init__(self, config=None, **kwargs):
        if _Base is not object:
            super().__init__()
        cfg = dict(config or {})
        cfg.update(kwargs)
        if "scenario" not in cfg:
            raise ValueError('RLlibMultiAgentEnv: config needs "scenario" (a path, a '
                             'ruleset name, a dict or a JSON string)')
        scenario = cfg.pop("scenario")
        cfg.setdefault("copy_obs", True)
        cfg.setdefault("action_mask", "obs")
        self.par = ParallelEnv(scenario, **cfg)
        par = self.par
        self.possible_agents = list(par.possible_agents)
        self.agents = []
        self.observation_spaces = dict(par.observation_spaces)
        self.action_spaces = dict(par.action_spaces)
        self.observation_space = _spaces.dict_space(self.observation_spaces)
        self.action_space = _spaces.dict_space(self.action_spaces)
        self._obs_space_in_preferred_format = True
        self._action_space_in_preferred_format = True
        self.metadata = dict(par.metadata)
        self.render_mode = par.render_mode

    def get_observation_space(self, agent_id):
        return self.par.observation_space(agent_id)

    def get_action_space(self, agent_id):
        return self.par.action_space(agent_id)

    def get_agent_ids(self):
        return set(self.possible_agents)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.par.reset(seed=seed, options=options)
        self.agents = list(self.par.agents)
        return obs, infos

    def step(self, action_dict):
        obs, rewards, terms, truncs, infos = self.par.step(action_dict)
        self.agents = list(self.par.agents)
        done = not self.agents
        any_trunc = any(truncs.values()) or bool(
            done and any(self.par.core.truncations.tolist()))
        terminateds = dict(terms)
        truncateds = dict(truncs)
        terminateds[ALL] = done and not any_trunc
        truncateds[ALL] = done and any_trunc
        return obs, rewards, terminateds, truncateds, infos

    def render(self):
        return self.par.render()

    def close(self):
        self.par.close()
