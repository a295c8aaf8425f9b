"""The SDK's build backend (pyproject.toml): setuptools', run in a temporary copy of this
directory, so that `pip install ./sdk/python` leaves nothing behind in the checkout (no
build/, no polis.egg-info). Not part of the installed package.

PEP 517 runs these hooks with the source directory as the current directory. Wheels, sdists
and their metadata are built from the copy into the directories pip names; an editable
install (pip install -e) must point at this directory, so it runs setuptools here.
"""
import contextlib
import os
import shutil
import tempfile

from setuptools import build_meta as _setuptools

_LEFT_OUT = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")


@contextlib.contextmanager
def _in_copy():
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="polis-sdk-build-") as tmp:
        src = os.path.join(tmp, "src")
        shutil.copytree(here, src, ignore=_LEFT_OUT)
        os.chdir(src)
        try:
            yield
        finally:
            os.chdir(here)


def _abs(path):
    return None if path is None else os.path.abspath(path)


def get_requires_for_build_wheel(config_settings=None):
    with _in_copy():
        return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    with _in_copy():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    metadata_directory = _abs(metadata_directory)
    with _in_copy():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory, metadata_directory = _abs(wheel_directory), _abs(metadata_directory)
    with _in_copy():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = _abs(sdist_directory)
    with _in_copy():
        return _setuptools.build_sdist(sdist_directory, config_settings)


# Editable installs (setuptools 64 and later) build where the sources are.
for _hook in ("get_requires_for_build_editable", "prepare_metadata_for_build_editable",
              "build_editable"):
    if hasattr(_setuptools, _hook):
        globals()[_hook] = getattr(_setuptools, _hook)
del _hook
