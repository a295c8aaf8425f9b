"""``polis.parallel_env``: a polis env with PettingZoo's ParallelEnv shape.

Conventions (docs/python.md has the full text):

- ``agents`` is empty until ``reset``; an agent that is terminated or truncated in a step
  gets its last observation, reward and flags from that step and is then removed from
  ``agents`` (it never comes back in the episode). ``while env.agents:`` runs one episode.
- ``terminations[agent]`` is the game's own end (no bootstrapping); ``truncations[agent]``
  is the kernel's time limit (``max_steps``): bootstrap from the value there.
- Actions: a dict agent -> action id (``int`` or numpy integer) or text (``"move north"``,
  parsed by the scenario's action parsers). A live agent missing from the dict does
  ``noop`` (id 0, always legal). A masked action is a no-op reported as
  ``infos[agent]["illegal_action"] = True``.
- Action masks (``action_mask=``): ``"both"`` (default) makes each observation
  ``{"observation": {field: array}, "action_mask": int8 array}``, the layout of
  PettingZoo's classic games, and puts the same mask in ``infos[agent]["action_mask"]``
  (as the vector env does); ``"obs"`` only the former; ``"info"`` keeps observations as
  ``{field: array}`` with the mask in the infos only; ``None`` neither.
- Observations are fresh, writable numpy arrays every step (``copy_obs=True``, the
  default): a rollout buffer can keep them and normalise them in place. ``copy_obs=False``
  is the zero-copy opt-in: read-only views of the engine's buffers, the same objects every
  step, changing in place when the env steps (copy what you keep).
- ``pixels=``: pixel observations, each agent's view drawn by the C renderer as a ``uint8``
  array ``(H, W, C)`` (``polis.pixels``; by default from the scenario's ``"pixels"`` key,
  else none): the observation itself (``obs: "pixels"``) or beside the fields as
  ``"pixels"`` (``"both"``).
- ``flatten=True``: each agent's observation fields are one float32 vector (a ``Box`` with
  the bounds of each field's dtype), still beside the mask in ``"obs"`` mode.
- ``state()``: every agent's flattened observation, a float32 ndarray ``[n_agents, D]``
  (``state_space``).
- ``reset(seed=None, options=None)``: ``options`` may be any dict; polis reads no reset
  option today, so every key is accepted and unknown keys give one ``UserWarning`` per env.
- ``max_cycles=N`` (PettingZoo's name) is ``max_steps=N``.
- At the step an agent finishes, ``infos[agent]["episode"]`` is ``{"r": return, "l":
  length}`` (``RecordEpisodeStatistics``'s keys) and, when the scenario has the metrics
  plugin (``metrics=True`` adds it), ``infos[agent]["metrics"]`` its figures.
- With pettingzoo importable the class is a ``pettingzoo.ParallelEnv`` subclass; envs
  pickle (also with cloudpickle) by re-creating themselves from scenario, overrides and
  options (the copy starts un-reset, continuing the seed sequence).
- Seeding: ``reset(seed=s)`` starts the episode from ``s`` and seeds the action spaces;
  ``reset()`` uses the scenario's ``seed`` the first time and then a new seed derived from
  the previous one, so a sequence of unseeded resets is reproducible too.
- There is no autoreset: a parallel env is reset by its caller.
- Plans (macro actions, docs/clients.md): in a scenario with macros, an action
  ``{"plan": "GATHER 3 wood"}``, or a string whose first word names a macro (and which is
  not an action's name), starts a plan for that agent; its first action is taken in the
  same step. A live agent missing from the dict follows its running plan (otherwise it does
  ``noop``); an explicit action cancels the plan. ``infos[agent]["plan"]`` is
  ``{"command", "status", "why"}`` while the agent has a plan and in the step it ends:
  ``status`` is ``"running"``, ``"done"``, ``"impossible"`` or ``"cancelled"``.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from typing import Any

from . import spaces as _spaces
from ._compat import PZ_PARALLEL_BASE, bases, np
from ._lib import DTYPE_INFO
from .core import U64, Env, _index
from .pixels import PixelObs, pixel_spec
from .errors import InvalidArgumentError, StateError, UnknownAgentError

MASK_MODES = ("obs", "info", "both", None)
RENDER_MODES = (None, "ansi", "human", "rgb_array")
# The cell size of render_mode="rgb_array" frames, in pixels.
RGB_CELL_PX = 16


def _splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) % U64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % U64
    return z ^ (z >> 31)


def _f32_outward(lo, hi):
    """float32 bounds that contain [lo, hi] (rounding a double to float32 may move it in)."""
    lo32, hi32 = np.float32(lo), np.float32(hi)
    lo32 = np.where(lo32 > lo, np.nextafter(lo32, np.float32(-np.inf)), lo32)
    hi32 = np.where(hi32 < hi, np.nextafter(hi32, np.float32(np.inf)), hi32)
    return lo32.astype(np.float32), hi32.astype(np.float32)


def field_bounds(f):
    """The bounds of field ``f``'s values: the range the game declared for it
    (``f.low``/``f.high``), else its dtype's. Scalars for one range over the field; with
    numpy, arrays of ``f.shape`` for one range per index along ``f.range_dim``; without
    numpy, the lowest and highest of those."""
    _, _, _, dlo, dhi = DTYPE_INFO[f.dtype]
    if f.low is None:
        return dlo, dhi
    if f.range_dim < 0 or np is None:
        return min(f.low), max(f.high)
    view = [1] * len(f.shape)
    view[f.range_dim] = f.shape[f.range_dim]
    lo = np.broadcast_to(np.asarray(f.low, np.float64).reshape(view), f.shape)
    hi = np.broadcast_to(np.asarray(f.high, np.float64).reshape(view), f.shape)
    return lo, hi


def _field_space(f, leading=()):
    _, dtype, _, _, _ = DTYPE_INFO[f.dtype]
    lo, hi = field_bounds(f)
    shape = tuple(leading) + f.shape
    if np is None or (np.ndim(lo) == 0 and dtype != "float32"):
        return _spaces.box(lo, hi, shape, dtype)
    if dtype == "float32":
        lo, hi = _f32_outward(lo, hi)
    return _spaces.box_bounds(np.broadcast_to(lo, shape), np.broadcast_to(hi, shape), dtype)


# Reset options polis reads ({key: what it does}); every other key is accepted and ignored
# with one warning per env (Gymnasium and PettingZoo treat options as env-specific).
RESET_OPTIONS = {}


def check_reset_options(owner, options, where="reset"):
    """Validates ``options`` of a reset: None or a mapping; warns once per ``owner`` about
    keys polis does not read."""
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise InvalidArgumentError(f"{where}: options must be a dict or None, got "
                                   f"{type(options).__name__}")
    unknown = sorted(str(k) for k in options if k not in RESET_OPTIONS)
    if unknown and not getattr(owner, "_warned_options", False):
        owner._warned_options = True
        warnings.warn(f"{where}: polis reads no reset option {unknown} (it reads "
                      f"{sorted(RESET_OPTIONS) or 'none'}); ignored", UserWarning,
                      stacklevel=3)


_DECODER = json.JSONDecoder()  # one for every episode's metrics, not one per call


def parse_metrics(text):
    """The metrics rendering (one JSON object per plugin that renders the format, concatenated)
    as one dict, the first object's value winning a name several use."""
    out, dec, i = {}, _DECODER, 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        if isinstance(obj, dict):
            for k, v in obj.items():
                out.setdefault(k, v)


def metrics_overrides(scenario, overrides=None, library_path=None):
    """Overrides that append the ``metrics`` plugin to a scenario file's plugins, or {} when it
    lists it already (or is not a file): what ``metrics=True`` adds."""
    from .scenario import resolve
    src = resolve(scenario, None, None, library_path)
    if src.kind == "file":
        with open(src.path, encoding="utf-8") as f:
            doc = json.load(f)
    else:
        doc = json.loads(src.text)
    plugins = list((overrides or {}).get("plugins", doc.get("plugins", [])))

    def name(p):
        n = p.get("name", "") if isinstance(p, dict) else str(p)
        return os.path.basename(n).split(".")[0]
    if any(name(p) == "metrics" for p in plugins):
        return {}
    return {"plugins": plugins + ["metrics"]}


def with_compact(overrides, compact):
    """``overrides`` with the scenario key ``compact_observations`` set when ``compact`` is
    True or False (None: the scenario decides, off by default). Compact observations store
    integer fields in the narrowest dtype their declared range fits (docs/python.md)."""
    if compact is None:
        return overrides
    if not isinstance(compact, bool):
        raise InvalidArgumentError(f"compact must be True, False or None, got {compact!r}")
    return {**(overrides or {}), "compact_observations": compact}


def with_metrics(scenario, overrides, library=None):
    """``overrides`` with the metrics plugin appended to the scenario's plugins (first, so
    later overrides of ``plugins.<name>...`` still apply)."""
    from ._lib import Library, load_library
    lib = library if isinstance(library, Library) else load_library(library)
    extra = metrics_overrides(scenario, overrides, lib.path)
    if not extra:
        return overrides
    return {**extra, **{k: v for k, v in overrides.items() if k != "plugins"}}


class FlatLayout:
    """How observation fields flatten into one float32 vector (``flatten=True``): each field's
    elements in order, bounded by the range the game declared for it (its dtype's range
    when it declared none)."""

    def __init__(self, obs_fields):
        self.parts = []
        lo, hi, off = [], [], 0
        for f in obs_fields:
            size = 1
            for d in f.shape:
                size *= d
            flo, fhi = field_bounds(f)
            self.parts.append((f.name, off, size))
            if np is not None:
                lo.append(np.broadcast_to(np.asarray(flo, np.float64), f.shape).ravel())
                hi.append(np.broadcast_to(np.asarray(fhi, np.float64), f.shape).ravel())
            else:
                lo += [flo] * size
                hi += [fhi] * size
            off += size
        self.dim = off
        if np is not None:
            lo = np.concatenate(lo) if lo else np.zeros(0)
            hi = np.concatenate(hi) if hi else np.zeros(0)
            self.low, self.high = _f32_outward(lo, hi)
        else:
            self.low, self.high = lo, hi

    def fill(self, out, fields):
        """Writes ``fields`` ({name: [rows, *shape]}) into ``out`` [rows, dim]: one numpy
        copy per field, no allocation."""
        rows = out.shape[0]
        for name, off, size in self.parts:
            out[:, off:off + size] = fields[name].reshape(rows, size)
        return out

    def space(self, leading=()):
        if np is None:
            return _spaces.box(min(self.low, default=0), max(self.high, default=0),
                               tuple(leading) + (self.dim,), "float32")
        shape = tuple(leading) + (self.dim,)
        return _spaces.box_bounds(np.broadcast_to(self.low, shape),
                                  np.broadcast_to(self.high, shape), "float32")


def _rebuild(cls, kwargs, seeds):
    env = cls(**kwargs)
    env._restore_seeds(seeds)
    return env


def _abs(path):
    """A path (or ``:``-separated paths) made absolute, so it means the same elsewhere."""
    if not path:
        return path
    parts = os.fspath(path).split(os.pathsep)
    return os.pathsep.join(os.path.abspath(p) if os.sep in p else p for p in parts)


def _picklable_scenario(scenario):
    """A scenario argument that means the same in another process (relative paths made
    absolute)."""
    if isinstance(scenario, (str, os.PathLike)) and not isinstance(scenario, bytes):
        s = os.fspath(scenario)
        if not s.lstrip().startswith("{") and os.path.exists(s):
            return os.path.abspath(s)
        return s
    return scenario


class ParallelEnv(*bases(PZ_PARALLEL_BASE)):
    """A polis env with PettingZoo's ParallelEnv API. Build it with ``polis.parallel_env``.

    ``core`` is the underlying ``polis.Env`` (buffers, render, parse_action, describe).
    """

    def __init__(self, scenario, *, overrides=None, action_mask="both", render_mode=None,
                 copy_obs=True, flatten=False, metrics=False, max_cycles=None, library=None,
                 plugin_path=None, base_dir=None, log=None, compact=None, record=None,
                 keyframe_every=0, pixels=None, **kw_overrides):
        if action_mask not in MASK_MODES:
            raise InvalidArgumentError(f"action_mask must be one of {MASK_MODES}, got "
                                       f"{action_mask!r}")
        if render_mode not in RENDER_MODES:
            raise InvalidArgumentError(f'render_mode must be None, "ansi", "human" or '
                                       f'"rgb_array", got {render_mode!r}')
        if render_mode == "rgb_array" and np is None:
            raise InvalidArgumentError('render_mode="rgb_array" needs numpy (install '
                                       'python3-numpy)')
        if flatten and np is None:
            raise InvalidArgumentError("flatten=True needs numpy (install python3-numpy)")
        merged = with_compact(_merge_overrides(overrides, kw_overrides, max_cycles), compact)
        if metrics:
            merged = with_metrics(scenario, merged, library)
        self.core = Env(scenario, merged, library=library, plugin_path=plugin_path,
                        base_dir=base_dir, log=log, record=record,
                        keyframe_every=keyframe_every)
        core = self.core
        try:
            spec = pixel_spec(pixels, core.source)
            if spec is not None and flatten:
                raise InvalidArgumentError("flatten=True flattens the observation fields; it "
                                           "does not take pixel observations (pixels=False)")
            self._pix = None if spec is None else PixelObs(core._lib, [core._ptr()],
                                                           core.n_agents, spec)
        except Exception:
            core.close()
            raise
        self._pix_both = spec is not None and spec["obs"] == "both"
        self._init_kwargs = dict(
            scenario=_picklable_scenario(scenario), overrides=merged, action_mask=action_mask,
            render_mode=render_mode, copy_obs=copy_obs, flatten=flatten, pixels=spec,
            library=_abs(core._lib.path), plugin_path=_abs(plugin_path),
            base_dir=_abs(base_dir) if base_dir is not None or not isinstance(scenario, dict)
            else os.getcwd(), log=log)
        self.flatten = bool(flatten)
        self.layout = FlatLayout(core.obs_fields)
        self._macro_words = frozenset(m.name.upper() for m in core.macros)
        self._action_names = frozenset(core.action_names)
        self.render_mode = render_mode
        self.action_mask_mode = action_mask
        self.copy_obs = bool(copy_obs)
        # frames need the game's scene map (docs/kernel.md, "Pixels") and numpy
        has_map = core._lib.env_scene_width(core._ptr()) > 0
        if render_mode == "rgb_array" and not has_map:
            core.close()
            raise InvalidArgumentError(f'render_mode="rgb_array": {core.name} registers no '
                                       f'scene map to draw (look_map)')
        modes = ["ansi", "human"] + (["rgb_array"] if has_map and np is not None else [])
        self.metadata = {"name": core.name, "render_modes": modes,
                         "is_parallelizable": True}
        self.possible_agents = list(core.agent_names)
        self.agents = []
        self._ids = {name: a for a, name in enumerate(self.possible_agents)}
        self.observation_spaces = {name: self._make_obs_space() for name in self.possible_agents}
        self.action_spaces = {name: _spaces.discrete(core.n_actions)
                              for name in self.possible_agents}
        n = core.n_agents
        self.state_space = self.layout.space((n,))
        self.last_seed = None
        self._next_seed = None
        self._obs_cache = None
        self._metrics = "metrics" in core.render_formats
        self._ret = np.zeros(n, np.float64) if np is not None else [0.0] * n
        self._t = 0
        if np is not None:
            # Records of one agent's observation as a structured dtype, so one copy of the
            # whole buffer gives every field of every agent (copy_obs=True).
            self._rec_dtype = np.dtype({
                "names": [f.name for f in core.obs_fields],
                "formats": [(np.dtype(DTYPE_INFO[f.dtype][1]), f.shape) if f.shape
                            else np.dtype(DTYPE_INFO[f.dtype][1]) for f in core.obs_fields],
                "offsets": [f.offset for f in core.obs_fields],
                "itemsize": core.obs_size})
            self._flat_buf = np.zeros((n, self.layout.dim), np.float32)
            # The per-agent observation objects, built once over the engine's buffers.
            if self._pix is not None:
                self._obs_cache = [self._wrap(self._pix_fields(dict(core.agent_fields[a]),
                                                               self._pix.obs[a]),
                                              core.agent_masks[a]) for a in range(n)]
            elif self.flatten:
                self._obs_cache = [self._wrap(self._flat_buf[a], core.agent_masks[a])
                                   for a in range(n)]
            else:
                self._obs_cache = [self._wrap(dict(core.agent_fields[a]), core.agent_masks[a])
                                   for a in range(n)]
        self._step_obs = None

    # ---- pickling ------------------------------------------------------------------------

    def __reduce__(self):
        return (_rebuild, (type(self), self._init_kwargs, (self.last_seed, self._next_seed)))

    def _restore_seeds(self, seeds):
        self.last_seed, self._next_seed = seeds

    # ---- spaces --------------------------------------------------------------------------

    def _make_obs_space(self):
        core = self.core
        if self._pix is not None and not self._pix_both:
            fields = self._pix.space()
        elif self._pix is not None:
            spaces = {f.name: _field_space(f) for f in core.obs_fields}
            spaces["pixels"] = self._pix.space()
            fields = _spaces.dict_space(spaces)
        elif self.flatten:
            fields = self.layout.space()
        else:
            fields = _spaces.dict_space({f.name: _field_space(f) for f in core.obs_fields})
        if self.action_mask_mode in ("obs", "both"):
            mask = _spaces.box(0, 1, (core.n_actions,), "int8")
            return _spaces.dict_space({"observation": fields, "action_mask": mask})
        return fields

    def _id(self, agent):
        try:
            return self._ids[agent]
        except (KeyError, TypeError):
            raise UnknownAgentError(f"unknown agent {agent!r} (agents: "
                                    f"{', '.join(self.possible_agents)})") from None

    def observation_space(self, agent: str) -> Any:
        """The observation space of an agent: the same object on every call."""
        self._id(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        """The action space of an agent (``Discrete(n_actions)``): the same object on every
        call."""
        self._id(agent)
        return self.action_spaces[agent]

    @property
    def num_agents(self):
        return len(self.agents)

    @property
    def max_num_agents(self):
        return len(self.possible_agents)

    @property
    def unwrapped(self):
        return self

    # ---- observations --------------------------------------------------------------------

    def _pix_fields(self, fields, pix):
        """An agent's observation with pixels: its frame, or its fields and the frame."""
        if not self._pix_both:
            return pix
        fields["pixels"] = pix
        return fields

    def _wrap(self, fields, mask):
        if self.action_mask_mode in ("obs", "both"):
            return {"observation": fields, "action_mask": mask}
        return fields

    def _snapshot(self):
        """This step's observations of every agent, taken once per reset/step: fresh arrays
        (one copy of the record buffer, one of the masks) or the zero-copy cache."""
        core = self.core
        if np is None:
            self._step_obs = None
            return
        if self._pix is not None:
            self._pix.draw()
        if not self.copy_obs:
            if self.flatten:
                self.layout.fill(self._flat_buf, core.fields)
            self._step_obs = (None, None)
            return
        masks = list(core.masks.view(np.int8).copy())  # one row view per agent, shared by
        if self.flatten:                               # the observation and the infos
            flat = self.layout.fill(np.empty((core.n_agents, self.layout.dim), np.float32),
                                    core.fields)
            self._step_obs = (flat, masks)
        else:
            rec = core.obs.copy().view(self._rec_dtype).reshape(core.n_agents)
            self._step_obs = ({f.name: rec[f.name] for f in core.obs_fields}, masks)
            if self._pix is not None:
                self._step_obs[0]["pixels"] = self._pix.obs.copy()

    def _obs(self, a):
        core = self.core
        if np is None:
            fields = {k: v.tolist() for k, v in core.agent_fields[a].items()}
            return self._wrap(fields, core.agent_masks[a].tolist())
        if not self.copy_obs:
            return self._obs_cache[a]
        fields, masks = self._step_obs
        if self.flatten:
            return self._wrap(fields[a], masks[a])
        if self._pix is not None and not self._pix_both:
            return self._wrap(fields["pixels"][a], masks[a])
        return self._wrap({k: v[a] for k, v in fields.items()}, masks[a])

    def _mask(self, a):
        core = self.core
        if np is None:
            return core.agent_masks[a].tolist()
        if self.copy_obs:
            return self._step_obs[1][a] if self._step_obs else core.agent_masks[a].copy()
        return core.agent_masks[a]

    def _info(self, a, illegal):
        info = {"illegal_action": bool(illegal)}
        if self.action_mask_mode in ("info", "both"):
            info["action_mask"] = self._mask(a)
        return info

    # ---- episode -------------------------------------------------------------------------

    def reset(self, seed: int | None = None,
              options: Mapping[str, Any] | None = None) -> tuple[dict, dict]:
        """Starts an episode; returns ``(observations, infos)`` for every agent. ``options``:
        any dict (see ``RESET_OPTIONS``; unknown keys warn once)."""
        check_reset_options(self, options)
        core = self.core
        if seed is None:
            seed = self._next_seed if self._next_seed is not None else core.default_seed
        else:
            seed = _index(seed, "seed")
            if not 0 <= seed < U64:
                raise InvalidArgumentError(f"reset: seed {seed} is outside [0, 2^64)")
            for i, name in enumerate(self.possible_agents):
                self.action_spaces[name].seed((seed + i) % U64)
        core.reset(seed)
        self.last_seed = seed
        self._next_seed = _splitmix64(seed)
        term, trunc = core.terminations, core.truncations
        self.agents = [name for a, name in enumerate(self.possible_agents)
                       if not term[a] and not trunc[a]]
        self._t = 0
        if np is not None:
            self._ret[:] = 0.0
        else:
            self._ret = [0.0] * core.n_agents
        self._snapshot()
        obs = {name: self._obs(self._ids[name]) for name in self.agents}
        infos = {name: self._info(self._ids[name], False) for name in self.agents}
        return obs, infos

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One tick. ``actions``: {agent: id or text}. Returns ``(observations, rewards,
        terminations, truncations, infos)``, each keyed by the agents that were live before
        the step."""
        core = self.core
        if not self.agents:
            # Before the first reset or after the episode: the engine refuses the step with
            # its own message ("call reset before the first step", "the episode is over").
            core.step()
        if not isinstance(actions, Mapping):
            raise InvalidArgumentError(f"step: actions must be a dict agent -> action, got "
                                       f"{type(actions).__name__}")
        live = self.agents
        ids = []
        for name in actions:
            a = self._id(name)
            if name not in live:
                why = "terminated" if core.terminations[a] else "truncated"
                raise StateError(f"step: {name} is done ({why}); it takes no more actions "
                                 f"this episode (live agents: {', '.join(live)})")
            ids.append(a)
        values, commands = [], {}
        for name, a in zip(actions, ids):
            act = actions[name]
            command = self._plan_command(name, act)
            if command is not None:
                commands[a] = command
                values.append(0)
            elif isinstance(act, str):
                values.append(core.parse_action(a, act))
            else:
                values.append(core._checked_action(a, act))
        plans = self._start_plans(live, ids, commands)
        buf = core.actions
        for a in range(core.n_agents):
            buf[a] = 0
        for a, v in zip(ids, values):
            buf[a] = v
        for a, (command, status, _) in list(plans.items()):
            if status == "running":
                r = core.plan_next(a)
                if r.status == "running":
                    buf[a] = r.action
                else:  # ended before acting (the agent does noop)
                    plans[a] = (command, r.status, r.why)
        core.step()
        self._t += 1
        rew = core.rewards.tolist()
        term = core.terminations.tolist()
        trunc = core.truncations.tolist()
        illegal = core.illegal.tolist()
        if np is not None:
            self._ret += core.rewards
        else:
            self._ret = [r + x for r, x in zip(self._ret, rew)]
        self._snapshot()
        obs, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        survivors = []
        metrics = None
        for name in live:
            a = self._ids[name]
            obs[name] = self._obs(a)
            rewards[name] = rew[a]
            terminations[name] = bool(term[a])
            truncations[name] = bool(trunc[a])
            infos[name] = info = self._info(a, illegal[a])
            if not term[a] and not trunc[a]:
                survivors.append(name)
            else:
                info["episode"] = {"r": float(self._ret[a]), "l": self._t}
                if self._metrics:
                    if metrics is None:
                        metrics = parse_metrics(core.render(0, "metrics"))
                    info["metrics"] = metrics
        # A plan is asked for its next action right after the tick, so one that ends is
        # reported in the step that ended it; a running plan's answer is kept for the next
        # step (the kernel answers the same within a tick).
        for a, (command, status, why) in plans.items():
            if status == "running" and core.plan_command(a) is not None:
                r = core.plan_next(a)
                status, why = r.status, r.why
            infos[self.possible_agents[a]]["plan"] = {"command": command, "status": status,
                                                     "why": why}
        self.agents = survivors
        return obs, rewards, terminations, truncations, infos

    def _plan_command(self, name, act):
        """The plan command in an action, or None when it is an ordinary action."""
        if isinstance(act, Mapping):
            if set(act) != {"plan"}:
                return None
            if not isinstance(act["plan"], str):
                raise InvalidArgumentError(f"step: {name}: \"plan\" must be a plan command "
                                           f"(a string such as \"GATHER 3 wood\"), got "
                                           f"{type(act['plan']).__name__}")
            return act["plan"]
        if isinstance(act, str) and self._macro_words:
            words = act.split(None, 1)
            if (words and words[0].upper() in self._macro_words
                    and act.strip() not in self._action_names):
                return act
        return None

    def _start_plans(self, live, ids, commands):
        """Starts the plans of this step and returns {agent id: (command, status, why)} for
        every agent whose plan runs in it or is cancelled by an explicit action. A refused
        command raises (ActionError with the macro's reason) and the step is not taken;
        every agent given a plan command in it is then left without a plan (as in
        ``polis serve``)."""
        core = self.core
        plans = {}
        if not self._macro_words:  # no macros: no plans, and no per-agent call on each step
            return plans
        explicit = set(ids)
        for name in live:
            a = self._ids[name]
            running = core.plan_command(a)
            if running is None:
                continue
            if a not in explicit:
                plans[a] = (running, "running", None)
            elif a not in commands:
                plans[a] = (running, "cancelled", "an action was given instead")
        try:
            for a, command in commands.items():
                core.plan(a, command)
                plans[a] = (core.plan_command(a), "running", None)
        except Exception:
            for a in commands:
                core.plan_cancel(a)
            raise
        for a, (command, status, _) in plans.items():
            if status == "cancelled":
                core.plan_cancel(a)
        return plans

    def state(self) -> Any:
        """The global state for centralised critics: every agent's observation flattened
        (``flatten=True``'s layout), a fresh float32 ndarray ``[n_agents, D]`` in agent
        order (``state_space``); without numpy, nested lists of numbers. Agents that are
        done keep their last observation. ``state_fields()`` has the fields unflattened.
        Shared observation fields (held once per env, ``shared_observations()``) are not in
        it: they are no agent's observation."""
        core = self.core
        if np is None:
            return [[float(x) for name, _, _ in self.layout.parts
                     for x in _flat_list(core.agent_fields[a][name].tolist())]
                    for a in range(core.n_agents)]
        return self.layout.fill(np.empty((core.n_agents, self.layout.dim), np.float32),
                                core.fields)

    def state_fields(self) -> dict:
        """Every agent's observation fields stacked, ``{field: array [n_agents, *shape]}``:
        fresh copies (zero-copy strided views with ``copy_obs=False``); without numpy,
        nested lists."""
        core = self.core
        if np is None:
            return {f.name: [core.agent_fields[a][f.name].tolist()
                             for a in range(core.n_agents)] for f in core.obs_fields}
        if self.copy_obs:
            return {k: v.copy() for k, v in core.fields.items()}
        return dict(core.fields)

    def shared_observations(self) -> dict:
        """The env's shared observation fields, ``{field: array of the field's shape}``:
        values every agent sees alike, held once per env instead of in each agent's
        observation (the social plugin's ``social_state: "shared"``; docs/python.md, "Shared
        observation fields"). They are in no agent's observation, ``observation_space`` or
        ``state()``; a policy that wants them reads them here. Fresh copies (read-only views
        that follow the env with ``copy_obs=False``); without numpy, nested lists; {} when
        the scenario has none. ``core.shared_fields`` describes them."""
        return self.core.shared_dict(copy=self.copy_obs)

    # ---- text ----------------------------------------------------------------------------

    def render(self) -> Any:
        """Every agent's text view (the ``"text"`` renderer), each under ``== agent ==``
        when there are several agents, as ``polis render`` prints them. Returns the string
        (``render_mode`` None or ``"ansi"``) or prints it (``"human"``). With
        ``render_mode="rgb_array"``: the whole scene map as an ``(H, W, 3)`` uint8 array
        (``Env.render_rgb``, cells of ``RGB_CELL_PX`` pixels)."""
        core = self.core
        if self.render_mode == "rgb_array":
            return core.render_rgb(None, RGB_CELL_PX)
        if core.n_agents == 1:
            text = core.render(0, "text")
        else:
            text = "".join(f"== {name} ==\n{core.render(a, 'text')}"
                           for a, name in enumerate(self.possible_agents))
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def render_agent(self, agent: str, format: str = "text") -> Any:
        """One agent's view: a string, or the parsed object for ``format="json"``."""
        a = self._id(agent)
        if format == "json":
            return self.core.render_json(a)
        return self.core.render(a, format)

    def parse_action(self, agent: str, text: str) -> int:
        """A text or JSON action as an action id (not checked against the mask)."""
        return self.core.parse_action(self._id(agent), text)

    def action_mask(self, agent):
        """An agent's current mask (int8 view with numpy, else a list)."""
        return self._mask(self._id(agent))

    def legal_actions(self, agent: str) -> list[str]:
        """The names of the actions the agent's mask allows now, in id order."""
        a = self._id(agent)
        names = self.core.action_names
        return [names[i] for i, v in enumerate(self.core.agent_masks[a].tolist()) if v]

    def close(self) -> None:
        """Ends the env; see ``polis.Env.close`` for what happens to held observations."""
        self._obs_cache = None
        self.agents = []
        self.core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<polis.ParallelEnv {self.metadata['name']!r}: {len(self.possible_agents)} " \
               f"agents>"


def _flat_list(v):
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(_flat_list(x))
        return out
    return [v]


def _merge_overrides(overrides, kw_overrides, max_cycles):
    merged = dict(overrides or {})
    merged.update(kw_overrides)
    if max_cycles is not None:
        max_cycles = _index(max_cycles, "max_cycles")
        if "max_steps" in merged and merged["max_steps"] != max_cycles:
            raise InvalidArgumentError(f"max_cycles={max_cycles} and max_steps="
                                       f"{merged['max_steps']} disagree: give one of them")
        merged["max_steps"] = max_cycles
    return merged


def parallel_env(scenario: Any, **kwargs: Any) -> ParallelEnv:
    """A ``ParallelEnv`` for ``scenario`` (a path, a ruleset name such as ``"gather"``, a
    dict or a JSON string).

    Keyword arguments are the env's options — ``action_mask`` ("both", "obs", "info" or
    None), ``render_mode`` (None, "ansi", "human", "rgb_array"), ``copy_obs`` (default
    True: fresh arrays; False: zero-copy views), ``flatten``, ``metrics``, ``max_cycles`` (=
    ``max_steps``), ``library``, ``plugin_path``, ``base_dir``, ``log``, ``overrides`` (a
    dict) — and otherwise scenario overrides: ``max_steps=50``, ``agents=2``, ``plugins__gather__params__coins=3`` or
    ``**{"plugins.gather.params.coins": 3}`` (see ``polis.scenario``).
    """
    return ParallelEnv(scenario, **kwargs)
