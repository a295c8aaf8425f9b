"""Finding libpolis: explicit path, $POLIS_LIBRARY, refusals. Fresh interpreters, so the
library the test run already loaded does not answer for them."""

import os
import subprocess
import sys
import tempfile
import unittest

import polis
from common import GATHER

LIB = polis.load_library().path
SDK = os.path.dirname(os.path.dirname(os.path.abspath(polis.__file__)))


def run(code, env_overrides):
    env = dict(os.environ)
    env.pop("POLIS_LIBRARY", None)
    env.update(env_overrides)
    env["PYTHONPATH"] = SDK
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


class TestLibrary(unittest.TestCase):
    def test_version(self):
        v = polis.library_version()
        self.assertRegex(v, r"^\d+\.\d+\.\d+")

    def test_explicit_path(self):
        env = polis.Env(GATHER, library=LIB)
        self.assertEqual(env.n_agents, 4)
        env.close()
        env = polis.parallel_env(GATHER, library=polis.load_library(LIB))
        env.close()

    def test_explicit_path_that_does_not_exist(self):
        with self.assertRaises(polis.LibraryError) as cm:
            polis.Env(GATHER, library="/nonexistent/libpolis.so")
        self.assertIn("explicit path: /nonexistent/libpolis.so: no such file", str(cm.exception))
        self.assertIn("$POLIS_LIBRARY", str(cm.exception))

    def test_environment_variable(self):
        r = run("import polis; print(polis.load_library().path)", {"POLIS_LIBRARY": LIB})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), LIB)
        r = run("import polis; polis.Env('gather')",
                {"POLIS_LIBRARY": "/nonexistent/libpolis.so"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("polis.errors.LibraryError: cannot load libpolis; tried:\n"
                      "  $POLIS_LIBRARY: /nonexistent/libpolis.so: no such file", r.stderr)

    def test_not_a_library(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file")
            f.flush()
            with self.assertRaises(polis.LibraryError) as cm:
                polis.load_library(f.name)
            self.assertIn(f"explicit path: {f.name}", str(cm.exception))

    def test_a_library_without_the_api(self):
        # libc loads fine but has no polis_* symbol: refused by name
        import ctypes.util
        libc = ctypes.util.find_library("c")
        if not libc:
            self.skipTest("no libc found by ctypes.util")
        with self.assertRaises(polis.LibraryError) as cm:
            polis.load_library(libc)
        self.assertIn("missing symbol polis_version", str(cm.exception))

    def test_companion_libraries(self):
        # Recordings and frames load libpolis-record and libpolis-pixels from libpolis's own
        # directory, on first use; without them the env steps and the error names them.
        with tempfile.TemporaryDirectory() as d:
            lone = os.path.join(d, "libpolis.so")
            os.symlink(os.path.realpath(LIB), lone)
            lib = polis.load_library(lone)
            env = polis.Env(GATHER, library=lib)
            env.reset(1)
            env.step()
            with self.assertRaises(polis.LibraryError) as cm:
                lib.pixels_size  # what Env.render_rgb calls first
            self.assertIn("cannot load libpolis-pixels, which frames (render_rgb) and pixel "
                          "observations need; tried:\n"
                          f"  beside libpolis: {d}/libpolis-pixels.so: no such file", str(cm.exception))
            env.close()
            rec = os.path.join(d, "r.jsonl")
            with self.assertRaises(polis.LibraryError) as cm:
                polis.Env(GATHER, library=lib, record=rec)
            self.assertIn("cannot load libpolis-record, which recordings (Env(record=...)) need",
                          str(cm.exception))
            # Put them beside it: the same library object now records and draws.
            for stem in ("libpolis-record", "libpolis-pixels"):
                src = os.path.join(os.path.dirname(LIB), stem + ".so")
                os.symlink(os.path.realpath(src), os.path.join(d, stem + ".so"))
            env = polis.Env(GATHER, library=lib, record=rec)
            env.reset(1)
            env.step()
            self.assertTrue(callable(lib.pixels_draw_ex))
            try:
                import numpy  # noqa: F401
            except ImportError:
                pass
            else:
                self.assertEqual(len(env.render_rgb(None, 4)), 48)
            env.close()
            with open(rec) as f:
                self.assertTrue(f.readline().startswith('{"t":"header"'))

    def test_import_needs_no_library(self):
        # importing the package and reading its docs must work before any library exists
        r = run("import polis, polis.rllib; print(polis.__version__)",
                {"POLIS_LIBRARY": "/nonexistent/libpolis.so"})
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
