"""Optional dependencies, decided once at import.

numpy gives ndarray observations and the engine's buffers as numpy views; without it every
path that needs no arrays (text and JSON views, action parsing, plain-list observations)
still works. gymnasium, when importable, supplies the spaces and the base classes
``gymnasium.Env`` and ``gymnasium.vector.VectorEnv``; pettingzoo, when importable, the base
class ``pettingzoo.ParallelEnv`` (so ``isinstance`` checks of wrappers and converters pass).
Without them polis has compatible classes of its own.
"""

try:
    import numpy as np
except ImportError:
    np = None

HAVE_NUMPY = np is not None


def gymnasium_spaces():
    """``gymnasium.spaces`` if gymnasium can be imported, else None (looked up on each call,
    so a test can add or hide the module)."""
    if not HAVE_NUMPY:
        return None
    try:
        from gymnasium import spaces
    except ImportError:
        return None
    return spaces


def _import(module, name):
    if not HAVE_NUMPY:
        return None
    try:
        mod = __import__(module, fromlist=[name])
        return getattr(mod, name)
    except (ImportError, AttributeError):
        return None


# Base classes, fixed when polis is imported (a class's bases cannot change afterwards).
PZ_PARALLEL_BASE = _import("pettingzoo", "ParallelEnv")
GYM_ENV_BASE = _import("gymnasium", "Env")
GYM_VECTOR_BASE = _import("gymnasium.vector", "VectorEnv")
GYM_AUTORESET = _import("gymnasium.vector", "AutoresetMode")


def bases(*candidates):
    """The tuple of the importable base classes among ``candidates`` (may be empty)."""
    return tuple(c for c in candidates if c is not None)
