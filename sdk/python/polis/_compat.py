"""Optional dependencies, decided once at import.

numpy gives zero-copy ndarray views of the engine's buffers; without it every path that
needs no arrays (text and JSON views, action parsing, plain-list observations) still works.
gymnasium, when importable, supplies the spaces; otherwise ``polis.spaces`` has compatible
classes.
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
