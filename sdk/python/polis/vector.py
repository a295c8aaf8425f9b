"""``polis.vector_env``: M envs of one scenario stepped together through the C vector API
(``polis_vec_*`` in include/polis/polis.h; semantics in docs/kernel.md, "Vectorised envs").

Rows are agents: the batched buffers have one row per agent of every env, env-major (env
k's agent a is row ``k * agents_per_env + a``), so this is a *multi-agent* vector env.
Every buffer is mapped once, at create, as a numpy view of the engine's memory; ``reset``
and ``step`` copy nothing and return the same objects every call.

Observations (``action_mask="obs"``, the default) are ``{"observation": {field: [rows,
*shape]}, "action_mask": int8 [rows, n_actions]}`` — PettingZoo's place for the mask, as
``parallel_env`` — or with ``flatten=True`` ``{"observation": float32 [rows, D], ...}``;
``action_mask="info"`` returns the fields alone. ``infos["action_mask"]`` always has the
masks. The batched buffers are reused every step (Gymnasium's vector convention): copy what
you keep across steps.

Pixel observations (``pixels=``, ``polis.pixels``; by default the scenario's ``"pixels"``
key, else none): every row's view drawn by the C renderer, ``uint8 [rows, H, W, C]``, in
place of the fields (``obs: "pixels"``) or beside them as ``"pixels"`` (``"both"``), drawn on
the calling thread after every reset and step (auto-resets too) into one batch array.

At the step a row's episode ends, ``infos["episode"]`` holds ``{"r": returns, "l":
lengths}`` per row and ``infos["_episode"]`` marks the rows that ended then
(``RecordEpisodeStatistics``'s keys; the engine keeps them, polis_vec_episode_stats); with
the metrics plugin (the scenario lists it, or ``metrics=True`` adds it),
``infos["metrics"]`` is a list with each env's last figures — the whole ``"metrics"``
rendering, every plugin's (e.g. Survival's achievements) — and ``infos["_metrics"]`` marks
the envs whose episode ended in the step. Without the plugin there is no rendering and no
parsing at episode ends.

With gymnasium importable the class is a ``gymnasium.vector.VectorEnv`` subclass
(``single_observation_space``, ``single_action_space``, a batched ``MultiDiscrete``
``action_space``, ``metadata["autoreset_mode"]`` the ``AutoresetMode`` enum). Note that
``num_envs`` counts games; the batch dimension is ``num_rows`` (agents of every game).

Auto-reset is Gymnasium's ``"NextStep"`` mode (``metadata["autoreset_mode"]``): the step
that ends env k's episode shows its final observation, rewards and flags; the next step
resets env k instead of stepping it (its actions are ignored), shows the new episode's
first observation with rewards and flags 0, and sets ``autoreset[k]``.

Rendering (``render_mode``, docs/python.md "Render modes"): ``"rgb_array"`` returns a tuple
of ``num_envs`` frames, each env's whole scene map as an ``(H, W, 3)`` uint8 array drawn by
the C renderer (as ``SyncVectorEnv`` returns its sub-envs' frames; ``render_rgb`` gives the
``(num_envs, H, W, 3)`` batch and agents' views); ``None`` and ``"ansi"`` a tuple of each
env's text view; ``"human"`` prints the text views, one heading per env.

numpy is required here (the whole point is batched arrays).
"""

from __future__ import annotations

import ctypes
import json
from collections.abc import Mapping
from typing import Any
import operator
import os

from . import _lib
from . import spaces as _spaces
from ._compat import GYM_AUTORESET, GYM_VECTOR_BASE, bases, np
from .core import (U64, I32_MAX, I32_MIN, _BufferOwner, _create_options, _decode, _index,
                   ObsFieldInfo, read_obs_fields, read_shared_fields, shared_views)
from .errors import ActionError, InvalidArgumentError, StateError, error_for
from .pixels import PixelObs, pixel_spec
from .parallel import (RENDER_MODES, RGB_CELL_PX, FlatLayout, _abs, _field_space,
                       _merge_overrides, _picklable_scenario,
                       _rebuild, _splitmix64, check_reset_options, parse_metrics, with_compact,
                       with_metrics)
from .scenario import resolve

# gymnasium.vector.AutoresetMode.NEXT_STEP when gymnasium is importable, else its value
AUTORESET_MODE = GYM_AUTORESET.NEXT_STEP if GYM_AUTORESET is not None else "NextStep"

_BUFFER_ATTRS = ("obs", "masks", "actions", "rewards", "terminations", "truncations",
                 "illegal", "autoreset", "fields", "infos", "observations",
                 "_stats", "_ended", "_ep_r", "_ep_l", "_env_ended", "_step_result")


class _VecHandle:
    """Owns the polis_vec pointer; every buffer view holds a reference to it, so the vec is
    destroyed only once it was closed and no view remains (as ``polis.Env``'s handle)."""

    __slots__ = ("lib", "ptr", "closed", "callbacks", "pending", "__weakref__")

    def __init__(self, lib):
        self.lib = lib
        self.ptr = None
        self.closed = False
        self.callbacks = []
        self.pending = [None]

    def destroy(self):
        if self.ptr is not None:
            ptr, self.ptr = self.ptr, None
            self.lib.vec_destroy(ptr)

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass


def env_seed(seed, k, episode, library=None):
    """The reset seed of env ``k``'s episode ``episode`` after ``reset(seed)``
    (``polis_vec_env_seed``): env k of a vec is bit for bit a lone ``polis.Env`` reset with
    this seed and given the same actions."""
    lib = library if isinstance(library, _lib.Library) else _lib.load_library(library)
    return lib.vec_env_seed(seed % U64, k, episode)


def _has_metrics_plugin(lib, env):
    """Whether the env loaded the metrics plugin (plugins/metrics), from its description."""
    raw = lib.env_describe_json(env)
    if not raw:
        raise error_for(2, "describe: out of memory")
    try:
        plugins = json.loads(_decode(ctypes.string_at(raw))).get("plugins", [])
    finally:
        lib.free(raw)
    return any(p.get("name") == "metrics" for p in plugins)


def _count(v, what):
    v = _index(v, what)
    if not I32_MIN <= v <= I32_MAX:
        # the C argument is int32; refuse here rather than let ctypes wrap it
        raise InvalidArgumentError(f"polis_vec: {what} is {v}, outside int32")
    return v


class VectorEnv(_BufferOwner, *bases(GYM_VECTOR_BASE)):
    """M envs of one scenario in one set of contiguous buffers (``polis_vec``).

    ``vector_env(scenario, num_envs=M, threads=T, seed=S, **overrides)``; see docs/python.md
    ("Vectorised env") for the attributes and the Gymnasium mapping.
    """

    metadata = {"autoreset_mode": AUTORESET_MODE, "render_modes": []}
    render_mode = None
    spec = None

    _BUFFER_ATTRS = _BUFFER_ATTRS
    _KIND = "vector env"
    _ERROR_FN = "vec_error"

    def __init__(self, scenario, num_envs=1, threads=1, seed=None, *, overrides=None,
                 action_mask="obs", flatten=False, metrics=False, max_cycles=None,
                 library=None, plugin_path=None, base_dir=None, log=None, compact=None,
                 render_mode=None, pixels=None, **kw_overrides):
        if np is None:
            raise ImportError("polis.vector_env needs numpy (install python3-numpy): its "
                              "buffers are numpy views of the engine's memory")
        if action_mask not in ("obs", "info"):
            raise InvalidArgumentError(f'action_mask must be "obs" or "info" for a vector '
                                       f'env, got {action_mask!r}')
        if render_mode not in RENDER_MODES:
            raise InvalidArgumentError(f'render_mode must be None, "ansi", "human" or '
                                       f'"rgb_array", got {render_mode!r}')
        merged = with_compact(_merge_overrides(overrides, kw_overrides, max_cycles), compact)
        lib = library if isinstance(library, _lib.Library) else _lib.load_library(library)
        if metrics:
            merged = with_metrics(scenario, merged, lib)
        self._init_kwargs = dict(
            scenario=_picklable_scenario(scenario), num_envs=num_envs, threads=threads,
            seed=seed, overrides=merged, action_mask=action_mask, flatten=flatten,
            library=_abs(lib.path), plugin_path=_abs(plugin_path),
            base_dir=_abs(base_dir) if base_dir is not None or not isinstance(scenario, dict)
            else os.getcwd(), log=log, render_mode=render_mode, pixels=pixels)
        self.action_mask_mode = action_mask
        self.flatten = bool(flatten)
        self._lib = lib
        self._h = _VecHandle(lib)
        self.name = "polis_vec"
        m = _count(num_envs, "n_envs")
        t = _count(threads, "n_threads")
        self.source = resolve(scenario, merged, base_dir, lib.path)
        self._create(m, t, plugin_path, log)
        try:
            spec = pixel_spec(pixels, self.source)
            if spec is not None and flatten:
                raise InvalidArgumentError("flatten=True flattens the observation fields; it "
                                           "does not take pixel observations (pixels=False)")
            v = self._h.ptr
            self._pix = None if spec is None else PixelObs(
                lib, [lib.vec_env(v, k) for k in range(lib.vec_n_envs(v))],
                lib.vec_agents_per_env(v), spec)
        except Exception:
            self.close()
            raise
        self._pix_both = spec is not None and spec["obs"] == "both"
        self._init_kwargs["pixels"] = spec
        self._introspect()
        self.render_mode = render_mode
        has_map = lib.env_scene_width(lib.vec_env(self._h.ptr, 0)) > 0
        if render_mode == "rgb_array" and not has_map:
            name = self.name
            self.close()
            raise InvalidArgumentError(f'render_mode="rgb_array": {name} registers no scene '
                                       f'map to draw (look_map)')
        self.metadata = {"autoreset_mode": AUTORESET_MODE,
                         "render_modes": ["ansi", "human"] + (["rgb_array"] if has_map else [])}
        if seed is not None:
            seed = _index(seed, "seed")
            if not 0 <= seed < U64:
                raise InvalidArgumentError(f"seed {seed} is outside [0, 2^64)")
        self._first_seed = seed
        self._next_seed = None
        self.last_seed = None
        self._map_buffers()

    # ---- pickling ------------------------------------------------------------------------

    def __reduce__(self):
        return (_rebuild, (type(self), self._init_kwargs, (self.last_seed, self._next_seed)))

    def _restore_seeds(self, seeds):
        self.last_seed, self._next_seed = seeds

    # ---- creation ------------------------------------------------------------------------

    def _create(self, m, t, plugin_path, log):
        lib, src = self._lib, self.source
        opts = _create_options(src, plugin_path, log, self._h)
        out = ctypes.c_void_p()
        err = _lib.CreateError()
        if src.kind == "file":
            st = lib.vec_create_file(os.fsencode(src.path), ctypes.byref(opts), m, t,
                                     ctypes.byref(out), ctypes.byref(err))
        else:
            text = src.text.encode()
            st = lib.vec_create_json(text, len(text), ctypes.byref(opts), m, t,
                                     ctypes.byref(out), ctypes.byref(err))
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(err.message) or lib.status_name(st))
        self._h.ptr = out.value
        self._raise_pending()

    def _introspect(self):
        lib, v = self._lib, self._h.ptr
        self.num_envs = lib.vec_n_envs(v)
        self.num_threads = lib.vec_n_threads(v)
        self.agents_per_env = lib.vec_agents_per_env(v)
        self.num_rows = self.num_envs * self.agents_per_env
        e0 = lib.vec_env(v, 0)
        self.name = _decode(lib.env_name(e0))
        self.n_actions = lib.env_n_actions(e0)
        self.agent_names = tuple(_decode(lib.env_agent_name(e0, a))
                                 for a in range(self.agents_per_env))
        self.action_names = tuple(_decode(lib.env_action_name(e0, i))
                                  for i in range(self.n_actions))
        fields = read_obs_fields(lib, e0)
        self.obs_fields = fields
        self.shared_fields = read_shared_fields(lib, e0)
        self.default_seed = lib.env_default_seed(e0)
        self.max_steps = lib.env_max_steps(e0)
        self.layout = FlatLayout(fields)
        # infos["metrics"] with the metrics plugin only (metrics=True adds it): rendering and
        # parsing a game's figures at every episode's end is work a rollout asks for.
        self._metrics = ("metrics" in (_decode(lib.env_render_formats(e0)) or "").split()
                         and _has_metrics_plugin(lib, e0))

        # Gymnasium's VectorEnv attributes, per row (an agent of an env).
        def obs_space(leading):
            if self._pix is not None and not self._pix_both:
                o = self._pix.space(leading)
            elif self._pix is not None:
                spaces = {fi.name: _field_space(fi, leading) for fi in fields}
                spaces["pixels"] = self._pix.space(leading)
                o = _spaces.dict_space(spaces)
            elif self.flatten:
                o = self.layout.space(leading)
            else:
                o = _spaces.dict_space({fi.name: _field_space(fi, leading) for fi in fields})
            if self.action_mask_mode == "obs":
                mask = _spaces.box(0, 1, tuple(leading) + (self.n_actions,), "int8")
                return _spaces.dict_space({"observation": o, "action_mask": mask})
            return o
        self.single_observation_space = obs_space(())
        self.single_action_space = _spaces.discrete(self.n_actions)
        self.observation_space = obs_space((self.num_rows,))
        self.action_space = _spaces.multi_discrete([self.n_actions] * self.num_rows)
        # Rows of this (constant) array say which env a row belongs to.
        self.row_env = np.repeat(np.arange(self.num_envs, dtype=np.int32), self.agents_per_env)
        self.row_env.flags.writeable = False
        self.row_agent = np.tile(np.arange(self.agents_per_env, dtype=np.int32), self.num_envs)
        self.row_agent.flags.writeable = False

    def _raw(self, addr, ctype, count):
        arr = (ctype * count).from_address(addr)
        arr._polis_handle = self._h
        return arr

    def _map_buffers(self):
        lib, v = self._lib, self._h.ptr
        io = lib.vec_io(v).contents
        n, na, m = io.n_agents, io.n_actions, self.num_envs
        self.obs_size = io.obs_size
        u8 = ctypes.c_uint8
        autoreset_addr = ctypes.cast(lib.vec_autoreset(v), ctypes.c_void_p).value
        # name: (address, ctype, count, numpy dtype of the view, shape)
        raw = {
            "obs": (io.obs, u8, n * io.obs_size, np.uint8, (n, io.obs_size)),
            # int8 because gymnasium's Discrete.sample(mask=) wants int8 (same 0/1 bytes)
            "masks": (io.masks, u8, n * na, np.int8, (n, na)),
            "actions": (io.actions, ctypes.c_int32, n, np.int32, (n,)),
            "rewards": (io.rewards, ctypes.c_float, n, np.float32, (n,)),
            # the engine's flags are 0/1 bytes, so a bool view reads them as they are
            "terminations": (io.terminations, u8, n, np.bool_, (n,)),
            "truncations": (io.truncations, u8, n, np.bool_, (n,)),
            "illegal": (io.illegal, u8, n, np.bool_, (n,)),
            "autoreset": (autoreset_addr, u8, m, np.bool_, (m,)),
        }
        # the engine's episode statistics (polis_vec_episode_stats), kept as it steps
        self._stats = lib.vec_episode_stats(v).contents
        self._stats._polis_handle = self._h
        st = self._stats
        raw["_ended"] = (st.ended, u8, n, np.bool_, (n,))
        raw["_ep_r"] = (st.returns, ctypes.c_float, n, np.float32, (n,))
        raw["_ep_l"] = (st.lengths, ctypes.c_int64, n, np.int64, (n,))
        raw["_env_ended"] = (st.env_ended, u8, m, np.bool_, (m,))
        self._addresses = {k: r[0] for k, r in raw.items() if not k.startswith("_")}
        raws = {}
        for key, (addr, ctype, count, dtype, shape) in raw.items():
            arr = raws[key] = self._raw(addr, ctype, count)
            view = np.frombuffer(arr, dtype=dtype).reshape(shape)
            if key != "actions":
                view.flags.writeable = False
            setattr(self, key, view)
        base = np.frombuffer(raws["obs"], dtype=np.uint8)
        self.fields = {}
        for f in self.obs_fields:
            dt = np.dtype(_lib.DTYPE_INFO[f.dtype][1])
            strides = [dt.itemsize]
            for d in reversed(f.shape[1:]):
                strides.insert(0, strides[0] * d)
            fv = np.ndarray((n,) + f.shape, dtype=dt, buffer=base, offset=f.offset,
                            strides=(io.obs_size,) + tuple(strides))
            fv.flags.writeable = False
            self.fields[f.name] = fv
        # What reset/step return: the same dict objects every call (nothing is rebuilt).
        rows = self.num_rows
        self.flat = np.zeros((rows, self.layout.dim), np.float32) if self.flatten else None
        inner = self.flat if self.flatten else self.fields
        if self._pix is not None:
            inner = dict(self.fields, pixels=self._pix.obs) if self._pix_both else self._pix.obs
        if self.action_mask_mode == "obs":
            self.observations = {"observation": inner, "action_mask": self.masks}
        else:
            self.observations = inner
        # Episode statistics: views of the engine's (above); the metrics of ended episodes.
        self._metrics_any = False
        self._metrics_list = [None] * m
        self._metrics_mask = np.zeros(m, np.bool_)
        self.infos = {"autoreset": self.autoreset, "illegal_action": self.illegal,
                      "action_mask": self.masks,
                      "episode": {"r": self._ep_r, "l": self._ep_l}, "_episode": self._ended}
        if self._metrics:
            self.infos["metrics"] = self._metrics_list
            self.infos["_metrics"] = self._metrics_mask
        self._vec_step = lib.vec_step
        self._step_result = (self.observations, self.rewards, self.terminations,
                             self.truncations, self.infos)

    # ---- status and lifecycle ------------------------------------------------------------

    def __repr__(self):
        state = "closed" if self.closed else f"{self.num_threads} threads"
        return (f"<polis.VectorEnv {self.name!r}: {self.num_envs} envs x "
                f"{self.agents_per_env} agents, {state}>")

    # ---- episodes ------------------------------------------------------------------------

    def reset(self, seed: int | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict, dict]:
        """Resets every env (env k with ``env_seed(seed, k, 0)``); returns ``(observations,
        infos)``. ``seed=None``: the ``seed`` given at creation (else the scenario's) the
        first time, then a seed derived from the previous one (splitmix64), as
        ``parallel_env`` does."""
        v = self._ptr()
        check_reset_options(self, options)
        if seed is None:
            if self._next_seed is not None:
                seed = self._next_seed
            elif self._first_seed is not None:
                seed = self._first_seed
            else:
                seed = self.default_seed
        else:
            seed = _index(seed, "seed")
            if not 0 <= seed < U64:
                raise InvalidArgumentError(f"reset: seed {seed} is outside [0, 2^64)")
        self._check(self._lib.vec_reset(v, seed))
        self._raise_pending()
        self.last_seed = seed
        self._next_seed = _splitmix64(seed)
        self._metrics_mask[:] = False
        self._metrics_any = False
        if self.flatten:
            self.layout.fill(self.flat, self.fields)
        if self._pix is not None:
            self._pix.draw()
        return self.observations, self.infos

    def step(self, actions: Any = None) -> tuple[Any, Any, Any, Any, dict]:
        """Steps every env with its rows of ``actions`` (``[num_rows]`` or ``[num_envs,
        agents_per_env]`` integer ids; ``None``: the ``actions`` buffer as it is). Returns
        ``(observations, rewards, terminations, truncations, infos)``, all views."""
        # One C call: the engine steps the envs and keeps the episode statistics the infos
        # show (views of its buffers); Python does nothing per row.
        if self._h.closed:
            self._ptr()  # raises
        if actions is not None and actions is not self.actions:
            self._set_actions(actions)
        st = self._vec_step(self._h.ptr)
        if st:
            self._check(st)
        if self._h.pending[0] is not None:
            self._raise_pending()
        if self._metrics:
            self._account_metrics()
        if self.flatten:
            self.layout.fill(self.flat, self.fields)
        if self._pix is not None:
            self._pix.draw()
        return self._step_result

    def _account_metrics(self):
        """Each env whose episode ended in this step: its metrics, parsed, in
        ``infos["metrics"]`` and marked in ``infos["_metrics"]``."""
        if self._metrics_any:  # last step's marks
            self._metrics_mask[:] = False
            self._metrics_any = False
        if self._stats.envs_ended:
            for e in np.flatnonzero(self._env_ended):
                self._metrics_list[e] = self._env_metrics(int(e))
                self._metrics_mask[e] = True
                self._metrics_any = True

    def _env_metrics(self, k):
        """Env k's metrics rendering, parsed."""
        lib, e = self._lib, self._lib.vec_env(self._h.ptr, k)
        out = ctypes.c_void_p()
        st = lib.env_render(e, 0, b"metrics", ctypes.byref(out))
        try:
            if st != _lib.POLIS_OK:
                raise error_for(st, _decode(lib.env_error(e)))
            return parse_metrics(_decode(ctypes.string_at(out.value)))
        finally:
            if out.value:
                lib.free(out)

    def shared_observations(self, copy: bool = True) -> dict:
        """Every env's shared observation fields (``shared_fields``: values all agents of an
        env see alike, held once per env instead of in each row's observation, such as the
        social plugin's ``social_state: "shared"``; docs/python.md, "Shared observation
        fields"): ``{field: array [num_envs, *shape]}``, a fresh copy stacked in env order
        (``copy=True``), or ``{field: [each env's read-only view]}`` over the engine's
        buffers (``copy=False``; read them again after a reset of a scenario with a task
        distribution, which may move them). {} when the scenario has none. They are in no
        row's observation."""
        lib, v = self._lib, self._ptr()
        per_env = [shared_views(lib, lib.vec_env(v, k), self.shared_fields, self._h)[1]
                   for k in range(self.num_envs)]
        if copy:
            return {f.name: np.stack([views[f.name] for views in per_env])
                    for f in self.shared_fields}
        return {f.name: [views[f.name] for views in per_env] for f in self.shared_fields}

    def _set_actions(self, actions):
        a = np.asarray(actions)
        if a.shape not in ((self.num_rows,), (self.num_envs, self.agents_per_env)):
            raise InvalidArgumentError(
                f"step: actions have shape {a.shape}, expected ({self.num_rows},) or "
                f"({self.num_envs}, {self.agents_per_env})")
        a = a.reshape(self.num_rows)
        if a.dtype.kind not in "iu":
            raise ActionError(f"step: actions must be integer ids, got dtype {a.dtype}")
        if a.size and (a.min() < I32_MIN or a.max() > I32_MAX):
            # Would wrap in the int32 buffer; refused in the engine's wording, for the
            # lowest offending row (the engine checks [0, n_actions) itself).
            r = int(np.flatnonzero((a < I32_MIN) | (a > I32_MAX))[0])
            k, ag = divmod(r, self.agents_per_env)
            raise ActionError(
                f"env {k}: step: agent {ag} ({self.agent_names[ag]}): action {int(a[r])} is "
                f"outside [0, {self.n_actions}) at tick {self.tick(k)} (row {r})")
        self.actions[:] = a

    # ---- per-env introspection -----------------------------------------------------------

    def _env(self, k):
        v = self._ptr()
        k = _index(k, "env")
        if not 0 <= k < self.num_envs:
            raise InvalidArgumentError(f"env {k} is outside [0, {self.num_envs})")
        return self._lib.vec_env(v, k)

    def tick(self, k):
        """Env k's tick in its current episode."""
        return self._lib.env_tick(self._env(k))

    def episode(self, k):
        """Episodes env k started since the last reset, minus one (``polis_vec_episode``)."""
        self._env(k)
        return self._lib.vec_episode(self._h.ptr, k)

    def task(self, k):
        """The task env k's current episode drew from the scenario's ``"vary"`` (as
        ``polis.Env.task``: a dict of override paths and values; ``None`` when the scenario
        varies nothing). Each env draws anew at each of its resets, auto-resets included,
        from that episode's seed."""
        t = self._lib.env_task(self._env(k))
        return None if t is None else json.loads(t.decode())

    def state_hash(self, k):
        """Env k's 64-bit state hash (as ``polis.Env.state_hash``)."""
        return self._lib.env_state_hash(self._env(k))

    def env_seed(self, seed, k, episode):
        """See the module function ``env_seed``."""
        return self._lib.vec_env_seed(operator.index(seed) % U64, k, episode)

    def rows(self, k):
        """The slice of rows of env k."""
        self._env(k)
        return slice(k * self.agents_per_env, (k + 1) * self.agents_per_env)

    # ---- rendering -------------------------------------------------------------------------

    def _text(self, k):
        """Env k's text views, each agent's under ``== agent ==`` when there are several (as
        ``ParallelEnv.render``)."""
        lib, e = self._lib, self._env(k)
        views = []
        for a in range(self.agents_per_env):
            out = ctypes.c_void_p()
            st = lib.env_render(e, a, b"text", ctypes.byref(out))
            try:
                if st != _lib.POLIS_OK:
                    raise error_for(st, f"env {k}: {_decode(lib.env_error(e))}")
                views.append(_decode(ctypes.string_at(out.value)))
            finally:
                if out.value:
                    lib.free(out)
        if self.agents_per_env == 1:
            return views[0]
        return "".join(f"== {name} ==\n{v}" for name, v in zip(self.agent_names, views))

    def render_rgb(self, agent: int | str | None = None, cell_px: int = RGB_CELL_PX, out=None,
                   glyphs: bool = False):
        """Every env's current scene as pixels, drawn by the C renderer
        (``polis_pixels_draw``): a ``(num_envs, H, W, 3)`` uint8 array, each env's whole
        scene map (``agent`` None) or that agent's view window (an id or a name), cells of
        ``cell_px`` pixels (1 to 64); ``glyphs`` draws kinds with an ASCII glyph as that
        glyph. ``out``: an array of that shape to draw into (C-contiguous uint8), returned;
        else a new one. Needs a reset first (StateError) and a game with a scene map."""
        lib, v = self._lib, self._ptr()
        if agent is None:
            a = -1
        elif isinstance(agent, str):
            if agent not in self.agent_names:
                raise InvalidArgumentError(f"render_rgb: no agent named {agent!r} (agents: "
                                           f"{', '.join(self.agent_names)})")
            a = self.agent_names.index(agent)
        else:
            a = _index(agent, "agent")
        if isinstance(cell_px, bool) or not isinstance(cell_px, int):
            raise InvalidArgumentError(f"cell_px must be an int, got {cell_px!r}")
        e0 = lib.vec_env(v, 0)
        w, h = ctypes.c_int32(), ctypes.c_int32()
        st = lib.pixels_size(e0, a, cell_px, ctypes.byref(w), ctypes.byref(h))
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(lib.env_error(e0)))
        shape = (self.num_envs, h.value, w.value, 3)
        if out is None:
            out = np.empty(shape, np.uint8)
        elif (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise InvalidArgumentError(f"out must be a writeable C-contiguous uint8 array of "
                                       f"shape {shape}")
        size = h.value * w.value * 3
        for k in range(self.num_envs):
            e = lib.vec_env(v, k)
            st = lib.pixels_draw_ex(e, a, cell_px, 1 if glyphs else 0,
                                       out.ctypes.data + k * size, size, ctypes.byref(w),
                                       ctypes.byref(h))
            if st != _lib.POLIS_OK:
                raise error_for(st, f"env {k}: {_decode(lib.env_error(e))}")
        return out

    def render(self) -> Any:
        """The envs as ``render_mode`` says (Gymnasium's vector API: one frame per env):
        ``"rgb_array"``: a tuple of ``num_envs`` ``(H, W, 3)`` uint8 frames, each env's whole
        scene map (cells of ``RGB_CELL_PX`` pixels; ``render_rgb`` for the stacked batch or
        agents' views); ``None`` / ``"ansi"``: a tuple of each env's text views;
        ``"human"``: prints them, each under ``=== env k ===``, and returns None."""
        if self.render_mode == "rgb_array":
            return tuple(self.render_rgb())
        self._ptr()
        texts = tuple(self._text(k) for k in range(self.num_envs))
        if self.render_mode == "human":
            print("".join(f"=== env {k} ===\n{t}" for k, t in enumerate(texts)), end="")
            return None
        return texts

    def buffer_address(self, name):
        """The engine address of a buffer (``"obs"``, ..., ``"autoreset"``), as
        ``polis_vec_io`` / ``polis_vec_autoreset`` give it."""
        self._ptr()
        return self._addresses[name]


def vector_env(scenario: Any, num_envs: int = 1, threads: int = 1, seed: int | None = None,
               **kwargs: Any) -> VectorEnv:
    """A ``VectorEnv``: ``num_envs`` envs of ``scenario`` on ``threads`` threads; every
    keyword that is not an option (``overrides``, ``action_mask``, ``flatten``,
    ``metrics``, ``max_cycles``, ``library``, ``plugin_path``, ``base_dir``, ``log``,
    ``compact``, ``render_mode``) is a scenario override, as for ``parallel_env``."""
    return VectorEnv(scenario, num_envs, threads, seed, **kwargs)
