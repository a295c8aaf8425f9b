"""The version of the SDK: the engine's own (``project(polis VERSION ...)`` in the top
CMakeLists.txt; tests/python/test_packaging.py checks that they agree)."""

__version__ = "0.8.0"
