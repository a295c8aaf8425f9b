"""Runs the Python SDK tests (stdlib unittest) in one of two modes.

    run_tests.py                 with numpy (fails when numpy cannot be imported; CMake
                                 registers this run only where numpy is importable)
    run_tests.py --no-numpy      numpy (and gymnasium, ray) made unimportable before the SDK
                                 is imported, as on a machine without them

The SDK comes from $POLIS_SDK_PATH (default: sdk/python of this source tree); the library
from $POLIS_LIBRARY (CTest sets both). Extra arguments select tests by name
(``-k zero_copy``). Exits 0 when every test passed, 1 otherwise.
"""

import importlib
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HIDDEN = ("numpy", "gymnasium", "pettingzoo", "ray", "cloudpickle")


class _CountingResult(unittest.TextTestResult):
    # counted here because what testsRun includes changed across Python versions
    passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main(argv):
    no_numpy = "--no-numpy" in argv
    rest = [a for a in argv if a != "--no-numpy"]
    if no_numpy:
        # None in sys.modules is Python's own "not importable" marker: `import numpy`
        # raises ModuleNotFoundError and importlib.util.find_spec("numpy") returns None,
        # exactly as on a machine without numpy.
        for name in list(sys.modules):
            if name.split(".")[0] in HIDDEN:
                del sys.modules[name]
        for name in HIDDEN:
            sys.modules[name] = None
        os.environ["POLIS_TEST_NO_NUMPY"] = "1"
    else:
        try:
            importlib.import_module("numpy")
        except ImportError:
            print(f"run_tests.py: numpy is not importable by {sys.executable}; install "
                  f"python3-numpy (the no-numpy run still tests the SDK without it)")
            return 1
        os.environ.pop("POLIS_TEST_NO_NUMPY", None)
    sdk = os.environ.get("POLIS_SDK_PATH",
                         os.path.normpath(os.path.join(HERE, "..", "..", "sdk", "python")))
    sys.path.insert(0, sdk)
    sys.path.insert(0, HERE)
    import polis
    print(f"python {sys.version.split()[0]} ({sys.executable}); polis SDK {polis.__version__} "
          f"from {os.path.dirname(polis.__file__)}; numpy: "
          f"{'yes' if polis.HAVE_NUMPY else 'no'}; spaces: {polis.spaces.backend()}; "
          f"library: {polis.load_library().path} ({polis.library_version()})")
    if no_numpy and polis.HAVE_NUMPY:
        print("run_tests.py: the import blocker did not hide numpy")
        return 1
    loader = unittest.TestLoader()
    if "-k" in rest and rest.index("-k") + 1 < len(rest):
        loader.testNamePatterns = ["*" + rest[rest.index("-k") + 1] + "*"]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     resultclass=_CountingResult).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{result.passed} passed, {failed} failed, {len(result.skipped)} skipped")
    if result.passed + failed == 0:
        print("run_tests.py: no test ran")
        return 1
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
