"""adasociety_env.py -- load AdaSociety's own Exploration env from a checkout of its repository.

Used by adasociety_random.py (its random agent's scores) and bench_adasociety.py (its speed
beside polis's). Nothing of polis runs here: AdaSociety's Environment and EnvHandler, with its
config/ files, built the way its main entry point builds them. The packages AdaSociety imports
only for rendering and training (pygame, cv2, ray, gymnasium) are replaced by small stand-ins
written to a temporary directory, since no episode uses them; numpy and networkx are real.
"""
import builtins
import json
import os
import sys
import tempfile

STAND_INS = {
    "pygame.py": "class Rect:\n    def __init__(self, *a, **k): pass\n"
                 "class sprite:\n    class Sprite:\n        def __init__(self, *a, **k): pass\n",
    "cv2.py": "",
    "ray/__init__.py": "",
    "ray/rllib/__init__.py": "",
    "ray/rllib/env/__init__.py": "",
    "ray/rllib/env/multi_agent_env.py":
        "class MultiAgentEnv:\n    def reset(self, *, seed=None, options=None): pass\n",
    "gymnasium/__init__.py": "",
    "gymnasium/spaces.py":
        "import numpy as np\n"
        "class Box:\n"
        "    def __init__(self, low, high, shape=None, dtype=np.float32):\n"
        "        self.shape, self.dtype = shape, dtype\n"
        "    def sample(self): return np.zeros(self.shape, dtype=self.dtype)\n"
        "class Discrete:\n    def __init__(self, n): self.n = n\n"
        "class Dict(dict):\n"
        "    def sample(self): return {k: v.sample() for k, v in self.items()}\n",
}

TASK = os.path.join("config", "task", "exploration.json")


def load(root, players=None, map_size=None, prog="adasociety"):
    """Returns (Environment, EnvHandler) of the checkout `root`, its Exploration task with
    `players` explorers (the task's one players entry repeated; None keeps its 8) on a
    `map_size` x `map_size` map (None keeps its 20 x 20). Changes the working directory to
    `root`: AdaSociety's config paths are relative to its checkout."""
    root = os.path.abspath(root)
    task_path = os.path.join(root, TASK)
    if not os.path.isfile(task_path):
        sys.exit("%s: %s: no %s (not an AdaSociety checkout)" % (prog, root, TASK))
    with open(task_path) as f:
        task = json.load(f)
    if players is not None:
        task["random"]["players"][0]["repeat"] = players
    if map_size is not None:
        task["base_map"]["size"] = {"x": map_size, "y": map_size}
    stand_ins = tempfile.mkdtemp(prefix="adasociety_stand_ins_")
    for name, text in STAND_INS.items():
        path = os.path.join(stand_ins, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    task_json = os.path.join(stand_ins, "exploration_task.json")
    with open(task_json, "w") as f:
        json.dump(task, f)
    main_json = os.path.join(stand_ins, "main_exploration.json")
    with open(main_json, "w") as f:
        json.dump({"task": task_json, "render": "./config/gui/render.json",
                   "job": "./config/common/job.json",
                   "resource": "./config/common/resource.json",
                   "event": "./config/common/event.json"}, f)
    sys.path[:0] = [stand_ins, root]
    os.chdir(root)
    say = builtins.print
    builtins.print = lambda *a, **k: None  # its ConfigLoader prints every path it reads
    try:
        from project.env.environment import Environment
        from project.agent.env_handler import EnvHandler
        env, handler = Environment(main_json), EnvHandler(main_json)
    finally:
        builtins.print = say
    return env, handler


def physical_ids(handler, name):
    """How many of agent `name`'s action ids are physical (move, no_act, produce, pick, dump):
    its ids below 6 + 2 x the resource count (AdaSociety's ExplorationAgent.update_policy)."""
    agent = handler.agent_dict[name]
    return 6 + 2 * agent.state.resource_num
