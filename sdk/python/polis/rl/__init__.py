"""polis.rl: training and playing policies on polis envs.

- ``polis.rl.ppo``: the PPO trainer (``python3 -m polis.rl.ppo SCENARIO``; needs PyTorch):
  checkpoints, JSON-lines logs, plotted curves, recorded episodes, curricula.
- ``polis.rl.policy``: the policy interface (``Policy.act(obs, mask)``) and ``load_policy``.
- ``polis.rl.checkpoint``: the checkpoint format; ``CheckpointPolicy`` plays one.
- ``polis.rl.seat``: ``python3 -m polis.rl.seat SPEC``, a policy process for the CLI's seats
  (``polis eval --seat AGENT=py:SPEC``; docs/policies.md).
- ``polis.rl.curriculum``: curricula, learning-progress task pools, task draws.
- ``polis.rl.tasks``: ``TaskVectorEnv``, a vector env whose envs draw their task at reset.
- ``polis.rl.population``: populations and held-out evaluation in Python.

Only ``policy`` and ``curriculum`` are imported here (numpy only); the rest import on demand.
"""

from .curriculum import (Curriculum, CurriculumError, FixedTask, LearningProgress, Task,
                         load_curriculum, load_task_pool)
from .policy import (EnvSpec, FirstLegalPolicy, FunctionPolicy, NoopPolicy, Policy,
                     PolicyError, PolicyMismatch, RandomPolicy, load_policy, spec_of)

__all__ = ["Curriculum", "CurriculumError", "EnvSpec", "FirstLegalPolicy", "FixedTask",
           "FunctionPolicy", "LearningProgress", "NoopPolicy", "Policy", "PolicyError",
           "PolicyMismatch", "RandomPolicy", "Task", "load_curriculum", "load_policy",
           "load_task_pool", "spec_of"]
