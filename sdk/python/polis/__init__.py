"""polis: Python SDK for the polis multi-agent engine (pure Python over libpolis, ctypes).

    import polis
    env = polis.parallel_env("gather", max_steps=100)
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

- ``polis.parallel_env(scenario, **overrides)``: PettingZoo's ParallelEnv shape
  (``polis.parallel``).
- ``polis.Env``: the C embedding API with zero-copy buffer views (``polis.core``).
- ``polis.rllib.RLlibMultiAgentEnv``: RLlib's MultiAgentEnv shape (imported on demand).
- ``polis.spaces``: gymnasium spaces when installed, compatible classes otherwise.
- Errors: ``polis.PolisError`` and one subclass per engine status (``polis.errors``).
- ``polis.vector_env(scenario, num_envs=M, threads=T, seed=S, **overrides)``: M envs
  stepped together by the C vector API (``polis_vec``), batched zero-copy numpy buffers
  with one row per agent of every env, next-step auto-reset (``polis.vector``).
- ``polis.make("Contract-v0", **overrides)``: PettingZoo's Parallel API on a shipped scenario
  by id; with gymnasium importable, ``gymnasium.make("polis/Contract-v0")`` too
  (``polis.registry``).
- ``polis.rl``: the PPO trainer, checkpoints, the policy interface and seat processes,
  curricula and task pools (imported on demand; needs numpy, the trainer PyTorch).
- ``polis.sweep(spec, out=DIR, ...)``: a grid of scenarios x overrides x policies x seeds
  played by ``polis sweep`` (threads or MPI ranks), resumable, as records or a numpy
  structured array; ``polis.sweep_summary(DIR)`` its per-cell summary.

docs/python.md is the guide.
"""

from . import errors, spaces
from ._version import __version__
from ._compat import HAVE_NUMPY
from ._lib import load_library
from .core import Env, EventInfo, MacroInfo, ObsFieldInfo, PlanStep
from .errors import (ActionError, ConfigError, FFIError, InvalidArgumentError, LibraryError,
                     LimitError, OutOfMemoryError, PluginError, PolisError, PolisIOError,
                     ScriptError, StateError, UnknownAgentError)
from .gym import GymEnv, aec_env, gym_env
from .parallel import ParallelEnv, parallel_env
from .scenario import find_scenario
from ._sweep import SweepError, read_results, sweep, sweep_summary
from .vector import VectorEnv, vector_env
from .registry import make, make_aec
from . import registry



def library_version(library=None) -> str:
    """The version string of the libpolis the SDK loads (``polis_version()``)."""
    return load_library(library).version_string


__all__ = [
    "ActionError", "ConfigError", "Env", "GymEnv", "aec_env", "gym_env", "EventInfo", "FFIError", "HAVE_NUMPY",
    "InvalidArgumentError", "LibraryError", "LimitError", "MacroInfo", "ObsFieldInfo",
    "OutOfMemoryError", "ParallelEnv", "PlanStep", "PluginError", "PolisError", "PolisIOError",
    "ScriptError", "StateError", "SweepError", "read_results", "sweep", "sweep_summary",
    "UnknownAgentError", "errors", "find_scenario", "library_version",
    "load_library", "parallel_env", "spaces", "VectorEnv", "vector_env", "make", "make_aec",
    "registry",
]

# gymnasium.make("polis/<Game>-v0") for every shipped scenario, when gymnasium is importable
# (and numpy, which gymnasium needs; polis hides both together in its no-numpy mode)
if HAVE_NUMPY:
    try:
        registry.register_gymnasium()
    except Exception as _e:  # a registry that refuses must not break `import polis`
        import warnings as _warnings
        _warnings.warn(f"polis: registering the scenarios with gymnasium failed: {_e}")
