"""Pixel observations: each agent's view drawn by the C renderer (``polis_pixels_obs``,
include/polis/pixels.h; docs/python.md, "Pixel observations").

``parallel_env`` and ``vector_env`` take ``pixels=``:

- ``None`` (the default): the scenario's ``"pixels"`` key (docs/scenario.md) when it has
  one, else no pixels — a scenario without the key keeps its observations unchanged;
- ``False``: no pixels, whatever the scenario says;
- ``True``: the scenario's ``"pixels"``, else the defaults below;
- an int: the cell size in pixels (the other keys as the defaults);
- a dict with the scenario key's members: ``cell_px`` (1 to 64, default 7), ``downscale``
  (a divisor of ``cell_px``, default 1), ``grey`` (default False), ``stats`` (the agent's
  stats in rows under its view, default True) and ``obs``: ``"pixels"`` (default: each
  observation is the ``uint8`` array ``(H, W, C)``) or ``"both"`` (the observation fields
  and the array as the field ``"pixels"``).

The observation space of the pixels is ``Box(0, 255, (H, W, C), uint8)``; survival at the
defaults is Craftax-Classic-Pixels' 63 x 63 x 3. The frames are drawn on the calling thread
after every reset and step, into one buffer made at create (the C call allocates nothing).
"""

from __future__ import annotations

import ctypes
import json

from . import _lib
from . import spaces as _spaces
from ._compat import np
from .core import _decode
from .errors import InvalidArgumentError, error_for
from .scenario import override_path

DEFAULTS = {"cell_px": 7, "downscale": 1, "grey": False, "stats": True, "obs": "pixels"}
OBS_MODES = ("pixels", "both")


def scenario_pixels(source):
    """The scenario's ``"pixels"`` value after its overrides, or None (a ``Source`` from
    ``polis.scenario.resolve``)."""
    if source.kind == "file":
        with open(source.path, encoding="utf-8") as f:
            doc = json.load(f)
    else:
        doc = json.loads(source.text)
    value = doc.get("pixels") if isinstance(doc, dict) else None
    for key, v in (json.loads(source.overrides) if source.overrides else {}).items():
        path = override_path(key)
        if path == "pixels":
            if isinstance(v, dict) and isinstance(value, dict):
                value = dict(value)
                for k, x in v.items():
                    if x is None:
                        value.pop(k, None)
                    else:
                        value[k] = x
            else:
                value = v
        elif path.startswith("pixels.") and isinstance(value, dict):
            value = dict(value)
            if v is None:
                value.pop(path[len("pixels."):], None)
            else:
                value[path[len("pixels."):]] = v
    return value


def pixel_spec(pixels, source):
    """The ``pixels=`` argument as a full dict of the keys above, or None for no pixels."""
    if pixels is False:
        return None
    if pixels is None or pixels is True:
        found = scenario_pixels(source)
        if found is None:
            return dict(DEFAULTS) if pixels is True else None
        pixels = found
    if isinstance(pixels, int) and not isinstance(pixels, bool):
        pixels = {"cell_px": pixels}
    if not isinstance(pixels, dict):
        raise InvalidArgumentError(f"pixels must be None, a bool, an int (cell_px) or a dict, "
                                   f"got {type(pixels).__name__} {pixels!r}")
    unknown = sorted(set(pixels) - set(DEFAULTS))
    if unknown:
        raise InvalidArgumentError(f"pixels: unknown key {unknown[0]!r} (expected one of "
                                   f"{', '.join(DEFAULTS)})")
    spec = dict(DEFAULTS, **pixels)
    for k in ("cell_px", "downscale"):
        if isinstance(spec[k], bool) or not isinstance(spec[k], int):
            raise InvalidArgumentError(f"pixels.{k} must be an int, got {spec[k]!r}")
    for k in ("grey", "stats"):
        if not isinstance(spec[k], bool):
            raise InvalidArgumentError(f"pixels.{k} must be true or false, got {spec[k]!r}")
    if spec["obs"] not in OBS_MODES:
        raise InvalidArgumentError(f'pixels.obs must be "pixels" or "both", got '
                                   f'{spec["obs"]!r}')
    if np is None:
        raise InvalidArgumentError("pixel observations need numpy (install python3-numpy)")
    return spec


class PixelObs:
    """The pixel observations of every agent of the envs ``envs`` (env pointers of one
    scenario), ``obs`` an ``[len(envs) * n_agents, H, W, C]`` uint8 array refreshed by
    ``draw``. The size is checked at create (a bad cell_px or downscale, a game without a
    scene map raise the engine's InvalidArgumentError)."""

    def __init__(self, lib, envs, n_agents, spec):
        self._lib, self._envs, self.n_agents, self.spec = lib, list(envs), n_agents, spec
        self._opts = _lib.PixelsObsOpts(spec["cell_px"], spec["downscale"], spec["grey"],
                                        not spec["stats"], 0)
        w, h, c, need = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32(), ctypes.c_size_t()
        e0 = self._envs[0]
        self._check(e0, lib.pixels_obs_size(e0, -1, ctypes.byref(self._opts), ctypes.byref(w),
                                             ctypes.byref(h), ctypes.byref(c),
                                             ctypes.byref(need)))
        self.shape = (h.value, w.value, c.value)
        self._need = need.value
        self.obs = np.zeros((len(self._envs) * n_agents,) + self.shape, np.uint8)
        per_env = n_agents * h.value * w.value * c.value
        # with downscale or grey the frame is drawn full size and reduced in place, which
        # needs more room than the observations: then a scratch buffer and one copy per env
        self._scratch = None if self._need == per_env else np.empty(self._need, np.uint8)
        # what draw() passes and copies, made once: it makes no Python object per step
        self._ref = ctypes.byref(self._opts)
        self._calls = []
        for k, e in enumerate(self._envs):
            dst = self.obs[k * n_agents:(k + 1) * n_agents]
            if self._scratch is None:
                self._calls.append((e, dst.ctypes.data, None))
            else:
                self._calls.append((e, self._scratch.ctypes.data, dst))
        self._src = (None if self._scratch is None else
                     self._scratch[:per_env].reshape((n_agents,) + self.shape))

    def _check(self, env, st):
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(self._lib.env_error(env)))

    def space(self, leading=()):
        return _spaces.box(0, 255, tuple(leading) + self.shape, "uint8")

    def draw(self):
        """Draws every agent's observation of every env into ``obs``; returns ``obs``."""
        fn, ref, need = self._lib.pixels_obs, self._ref, self._need
        for e, addr, dst in self._calls:
            st = fn(e, -1, ref, addr, need)
            if st:
                self._check(e, st)
            if dst is not None:
                np.copyto(dst, self._src)
        return self.obs
