"""What every Python example starts with, so each runs from a source checkout as well.

``import _sdk`` (this folder is on ``sys.path`` when an example runs) makes ``import polis``
work: the installed package when there is one, else ``sdk/python`` beside this folder.
``_sdk.need("torch", "train_ppo.py")`` returns the module, or says which Debian package to
install and exits 77, the status CTest reads as "skipped".
"""

import importlib
import os
import sys

try:
    import polis  # noqa: F401
except ImportError:  # running from the source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk",
                                    "python"))

DEBIAN = {"torch": "python3-torch", "numpy": "python3-numpy",
          "matplotlib": "python3-matplotlib"}


def need(module, script):
    """Import ``module`` or exit 77 naming the package that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = DEBIAN.get(module, "python3-" + module)
        print(f"{script} needs {module} (Debian: apt-get install {package})")
        sys.exit(77)
