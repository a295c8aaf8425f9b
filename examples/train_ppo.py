#!/usr/bin/env python3
"""PPO on any polis scenario, with checkpoints, curves, recorded episodes and curricula.

    python3 examples/train_ppo.py contract --agent-steps 2e6
    python3 examples/train_ppo.py negotiation --envs 32 --minutes 5 --out runs/negotiation
    python3 examples/train_ppo.py contract --curriculum rulesets/contract/curricula/contract_curriculum.json
    python3 examples/train_ppo.py contract --algo recppo    # an LSTM policy; mappo: a central critic

The trainer is ``polis.rl.ppo`` (sdk/python/polis/rl/ppo.py; ``python3 -m polis.rl.ppo`` runs
the same); this file only finds the SDK when polis is not installed. ``--help`` lists the
options; docs/python.md ("Training with PPO") and docs/policies.md describe the outputs and how
a checkpoint plays seats of ``polis eval``, ``sweep`` and ``serve``; docs/baselines.md gives the
commands for AdaSociety's PPO, RecPPO and MAPPO baselines.
"""

import sys

import _sdk

_sdk.need("torch", "train_ppo.py")

from polis.rl.ppo import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
