"""Packaging: one version for engine and SDK, py.typed, and how an installed libpolis is
found (the install test, tests/install, checks a real install without LD_LIBRARY_PATH)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import polis
from polis import _lib
from common import ROOT


class TestVersion(unittest.TestCase):
    def test_one_version(self):
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            m = re.search(r"project\(polis VERSION (\d+\.\d+\.\d+)", f.read())
        self.assertIsNotNone(m)
        self.assertEqual(polis.__version__, m.group(1))
        self.assertEqual(polis.library_version(), m.group(1))
        with open(os.path.join(ROOT, "sdk", "python", "pyproject.toml")) as f:
            text = f.read()
        self.assertIn('dynamic = ["version"]', text)
        self.assertIn('version = {attr = "polis._version.__version__"}', text)

    def test_typed(self):
        pkg = os.path.dirname(polis.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))
        with open(os.path.join(ROOT, "sdk", "python", "pyproject.toml")) as f:
            self.assertIn('polis = ["py.typed"]', f.read())
        ann = polis.parallel.ParallelEnv.reset.__annotations__
        self.assertEqual(set(ann), {"seed", "options", "return"})


class TestInstalledDiscovery(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("PATH", "PKG_CONFIG_PATH",
                                                      "POLIS_LIBRARY")}
        os.environ.pop("POLIS_LIBRARY", None)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def fake_prefix(self, d, libdir="lib"):
        os.makedirs(os.path.join(d, "bin"))
        os.makedirs(os.path.join(d, libdir))
        exe = os.path.join(d, "bin", "polis")
        with open(exe, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(exe, 0o755)
        lib = os.path.join(d, libdir, "libpolis.so.0")
        shutil.copy(polis.load_library().path, lib)
        return lib

    def test_prefix_of_the_polis_program(self):
        with tempfile.TemporaryDirectory() as d:
            lib = self.fake_prefix(d, "lib64")
            os.environ["PATH"] = os.path.join(d, "bin") + os.pathsep + os.environ["PATH"]
            os.environ["PKG_CONFIG_PATH"] = d  # no polis.pc there
            dirs = _lib.installed_libdirs()
            self.assertIn((f"install prefix of {d}/bin/polis", os.path.dirname(lib)), dirs)
            cands = _lib.find_library_candidates()
            self.assertIn(lib, [p for _, p in cands])

    @unittest.skipUnless(shutil.which("pkg-config"), "pkg-config is not installed")
    def test_pkg_config(self):
        with tempfile.TemporaryDirectory() as d:
            pc = os.path.join(d, "pc")
            os.makedirs(pc)
            libdir = os.path.join(d, "somewhere", "lib")
            with open(os.path.join(pc, "polis.pc"), "w") as f:
                f.write(f"libdir={libdir}\nName: polis\nDescription: x\nVersion: 0\n")
            os.environ["PKG_CONFIG_PATH"] = pc
            self.assertEqual(_lib.installed_libdirs()[0], ("pkg-config", libdir))

    def test_an_installed_library_loads_without_ld_library_path(self):
        # A fresh interpreter outside the source tree, with only the fake prefix's polis on
        # PATH: the SDK (copied out of the tree) loads the prefix's library.
        with tempfile.TemporaryDirectory() as d:
            lib = self.fake_prefix(os.path.join(d, "prefix"))
            shutil.copytree(os.path.dirname(polis.__file__), os.path.join(d, "sdk", "polis"))
            env = {k: v for k, v in os.environ.items()
                   if k not in ("POLIS_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
            env["PATH"] = os.path.join(d, "prefix", "bin") + os.pathsep + env["PATH"]
            env["PKG_CONFIG_PATH"] = d
            env["PYTHONPATH"] = os.path.join(d, "sdk")
            out = subprocess.run([sys.executable, "-c",
                                  "import polis; print(polis.load_library().path)"],
                                 capture_output=True, text=True, env=env, cwd=d)
            self.assertEqual(out.stdout.strip(), lib, out.stderr)


if __name__ == "__main__":
    unittest.main()
