"""``polis.Env``: the C embedding API (include/polis/polis.h), one method per call.

The env's buffers are mapped once, at creation, as views of the engine's memory:

============================  ==========================  =============================
attribute                     with numpy                  without numpy
============================  ==========================  =============================
``obs``                       uint8 ``[n_agents, obs_size]``   memoryview, same shape
``masks``                     uint8 ``[n_agents, n_actions]``  memoryview, same shape
``actions`` (writable)        int32 ``[n_agents]``            memoryview ``"i"``
``rewards``                   float32 ``[n_agents]``          memoryview ``"f"``
``terminations``,             uint8 ``[n_agents]``            memoryview ``"B"``
``truncations``, ``illegal``
``reward_components``         float32 ``[n_fns, n_agents]``   memoryview, same shape (empty 1-D if n_fns is 0)
``fields[name]``              typed ``[n_agents, *shape]``    (numpy only: strided)
``agent_fields[a][name]``     typed ``[*shape]``              memoryview, typed and shaped
============================  ==========================  =============================

They are the same objects, over the same addresses, for the life of the env: the engine
writes each step into them, nothing is copied. Everything but ``actions`` is read-only.

Lifetime: a view keeps the engine's memory alive. ``close()`` ends the env for the API (every
later call raises ``StateError``) and destroys it (plugins' ``destroy``, Lua states, buffers)
as soon as no view of its buffers remains, so a view held past ``close()`` is never
dangling; it simply stops changing.
"""

from __future__ import annotations

import ctypes
from typing import Any
import json
import operator
import os
from collections import namedtuple

from . import _lib
from ._compat import np
from .errors import (ActionError, InvalidArgumentError, StateError, UnknownAgentError,
                     error_for)
from .scenario import resolve

ObsFieldInfo = namedtuple("ObsFieldInfo", "name doc dtype shape offset nbytes range_dim low high",
                          defaults=(-1, None, None))
ObsFieldInfo.__doc__ = """One field of the per-agent observation record (polis_obs_field):
dtype is "u8", "i8", "i16", "i32" or "f32" (the buffer's: with compact observations, the
narrow dtype the engine stores the field in); shape a tuple; offset in bytes from the start of
the agent's record. ``low`` and ``high`` are the value range the game declared
(polis_env_obs_field_range): None when it declared none, else tuples of one bound
(``range_dim`` -1, the whole field) or one per index along dimension ``range_dim``."""


def read_obs_fields(lib, p):
    """The ObsFieldInfo of every observation field of env pointer ``p``, with its range."""
    fields = []
    f = _lib.ObsField()
    dim, n = ctypes.c_int32(), ctypes.c_int32()
    lo, hi = ctypes.POINTER(ctypes.c_double)(), ctypes.POINTER(ctypes.c_double)()
    for i in range(lib.env_n_obs_fields(p)):
        st = lib.env_obs_field(p, i, ctypes.byref(f))
        if st == _lib.POLIS_OK:
            st = lib.env_obs_field_range(p, i, ctypes.byref(dim), ctypes.byref(n),
                                         ctypes.byref(lo), ctypes.byref(hi))
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(lib.env_error(p)) or lib.status_name(st))
        low = tuple(lo[k] for k in range(n.value)) if n.value else None
        high = tuple(hi[k] for k in range(n.value)) if n.value else None
        fields.append(ObsFieldInfo(_decode(f.name), _decode(f.doc) or "",
                                   _lib.DTYPE_NAMES[f.dtype],
                                   tuple(f.shape[d] for d in range(f.ndim)), f.offset, f.nbytes,
                                   dim.value if n.value else -1, low, high))
    return tuple(fields)

def read_shared_fields(lib, p):
    """The ObsFieldInfo of every shared observation field of env pointer ``p``
    (polis_env_shared_field): values held once per env, not in the agents' records; offset
    in bytes from the start of the env's shared buffer; no declared range."""
    fields = []
    f = _lib.ObsField()
    for i in range(lib.env_n_shared_fields(p)):
        st = lib.env_shared_field(p, i, ctypes.byref(f))
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(lib.env_error(p)) or lib.status_name(st))
        fields.append(ObsFieldInfo(_decode(f.name), _decode(f.doc) or "",
                                   _lib.DTYPE_NAMES[f.dtype],
                                   tuple(f.shape[d] for d in range(f.ndim)), f.offset, f.nbytes))
    return tuple(fields)


def shared_views(lib, p, fields, keep):
    """(address, {name: read-only view}) over env pointer ``p``'s shared buffer
    (polis_env_shared_obs): numpy arrays of each field's shape, or memoryviews without numpy.
    ``keep`` (the handle) is kept alive by the views. Address 0 and {} without shared
    fields."""
    size = ctypes.c_size_t()
    addr = lib.env_shared_obs(p, ctypes.byref(size)) or 0
    if not fields or not addr:
        return 0, {}
    raw = (ctypes.c_uint8 * size.value).from_address(addr)
    raw._polis_handle = keep
    views = {}
    for f in fields:
        if np is not None:
            dt = np.dtype(_lib.DTYPE_INFO[f.dtype][1])
            v = np.frombuffer(raw, dtype=dt, count=f.nbytes // dt.itemsize,
                              offset=f.offset).reshape(f.shape)
        else:
            v = memoryview(raw).cast("B")[f.offset:f.offset + f.nbytes]
            v = v.cast(_lib.DTYPE_INFO[f.dtype][0], f.shape)
        views[f.name] = _readonly(v)
    return addr, views


MacroInfo = namedtuple("MacroInfo", "name usage doc")
MacroInfo.__doc__ = """A plan command the scenario offers (``polis_env_macro_*``): ``name``
("GATHER"), ``usage`` ("GATHER <n> <resource>") and a one- or two-sentence ``doc``."""

PlanStep = namedtuple("PlanStep", "status action why")
PlanStep.__doc__ = """What ``Env.plan_next`` answers: ``status`` "running" with the tick's
``action`` id (``why`` None), or "done" / "impossible" with the reason ``why`` (``action``
None): the plan has then ended."""

_PLAN_STATUS = ("running", "done", "impossible")

EventInfo = namedtuple("EventInfo", "type name tick seq data")
EventInfo.__doc__ = """An event as a host subscriber sees it: ``data`` is a dict of the
payload's fields by name."""

_BUFFER_ATTRS = ("obs", "masks", "actions", "rewards", "terminations", "truncations",
                 "illegal", "reward_components", "fields", "agent_fields", "agent_masks",
                 "shared")
U64 = 1 << 64
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1



def _create_options(src, plugin_path, log, handle):
    """The polis_options of a create (an env's or a vec's) from a resolved Source. The engine
    copies the strings at create; the log callback it keeps, so `handle` owns it until
    destroy, and an exception the callback raises waits in handle.pending (the callback may
    run on a vec's worker threads: ctypes takes the GIL for it)."""
    opts = _lib.Options()
    opts.struct_size = ctypes.sizeof(_lib.Options)
    if plugin_path:
        opts.plugin_path = os.fsencode(plugin_path)
    if src.base_dir:
        opts.base_dir = os.fsencode(src.base_dir)
    if src.overrides is not None:
        opts.overrides = src.overrides.encode()
    if log is not None:
        pending = handle.pending

        def on_log(_ud, msg):
            try:
                log(_decode(msg))
            except BaseException as e:  # never unwind through C
                if pending[0] is None:
                    pending[0] = e
        cb = _lib.LOG_FN(on_log)
        handle.callbacks.append(cb)
        opts.log = ctypes.cast(cb, ctypes.c_void_p)
    return opts

class _Handle:
    """Owns the polis_env pointer. Every buffer view holds a reference to it, so the env is
    destroyed only once it was closed and no view remains (see the module docstring)."""

    __slots__ = ("lib", "ptr", "closed", "callbacks", "pending", "rec", "rec_episode",
                 "__weakref__")

    def __init__(self, lib):
        self.lib = lib
        self.ptr = None
        self.rec = None          # a polis_recorder* (Env(record=...)), closed before the env
        self.rec_episode = False
        self.closed = False
        self.callbacks = []  # ctypes callbacks the engine may call until destroy
        # [the first exception raised inside a callback]; callbacks hold this list, not the
        # handle, so no reference cycle delays the env's destruction
        self.pending = [None]

    def finish_record(self):
        """Writes the running episode's end line and closes the recording, if any."""
        if self.rec is not None:
            rec, self.rec = self.rec, None
            if self.rec_episode:
                self.lib.recorder_end_episode(rec, None)
            self.rec_episode = False
            self.lib.recorder_close(rec)

    def destroy(self):
        self.finish_record()
        if self.ptr is not None:
            ptr, self.ptr = self.ptr, None
            self.lib.env_destroy(ptr)

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass


def _decode(b):
    return b.decode("utf-8", "replace") if b is not None else None


class _BufferOwner:
    """close() and the context-manager protocol shared by Env and VectorEnv: buffer views
    keep the engine memory alive, so close() drops this object's own references and the
    engine is destroyed once no view remains. Also the status helpers both share: the
    handle's state, its pointer (refused once closed) and its error message, read with the
    library function named by _ERROR_FN. Subclasses set _BUFFER_ATTRS, _KIND and
    _ERROR_FN."""

    _BUFFER_ATTRS = ()
    _KIND = "env"
    _ERROR_FN = "env_error"

    @property
    def closed(self):
        return self._h.closed

    def _ptr(self):
        if self._h.closed:
            raise StateError(f"{self.name}: the {self._KIND} is closed")
        return self._h.ptr

    def _check(self, st):
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(getattr(self._lib, self._ERROR_FN)(self._h.ptr)))

    def _raise_pending(self):
        pending = self._h.pending
        e, pending[0] = pending[0], None
        if e is not None:
            raise e

    def close(self):
        """Ends it (idempotent). Its memory is freed once no buffer view remains."""
        if self._h.closed:
            return
        self._h.closed = True
        for key in self._BUFFER_ATTRS:
            self.__dict__.pop(key, None)
        h = self._h
        self._h = _ClosedHandle(h.lib)
        # Drops the own reference; destroys now unless the caller still holds views.
        del h

    def __getattr__(self, name):
        # only reached when normal lookup fails: the buffers after close()
        if name in self._BUFFER_ATTRS and self.__dict__.get("_h") is not None and self.closed:
            raise StateError(f"{self.name}: the {self._KIND} is closed; its buffers are gone")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Env(_BufferOwner):
    """One polis env: a scenario loaded into libpolis.

    ``scenario``: a path, a ruleset name ("gather"), a dict or a JSON string (see
    ``polis.scenario``). ``overrides``: a dict of scenario overrides (``{"max_steps": 50,
    "plugins.gather.params.coins": 3}``). ``library``: a libpolis path or a loaded
    ``Library``; default: ``polis.load_library()``. ``plugin_path``: extra plugin
    directories, ``:``-separated. ``base_dir``: where a dict or JSON scenario's relative
    paths start (default: the current directory). ``log``: a callable receiving each plugin
    log line (``str``); default: discarded. ``record``: a file to record every episode to
    (docs/recording.md; gzip when it ends in ``.gz``; check it with ``polis replay FILE
    --verify``), a keyframe every ``keyframe_every`` ticks (default 100); an episode's end line
    is written at the next reset or at close.

    Raises the ``PolisError`` subclass of the engine's status with its message (JSON path,
    file:line) when the scenario does not load.
    """

    _BUFFER_ATTRS = _BUFFER_ATTRS

    def __init__(self, scenario, overrides=None, *, library=None, plugin_path=None,
                 base_dir=None, log=None, record=None, keyframe_every=0):
        if isinstance(library, _lib.Library):
            lib = library
        else:
            lib = _lib.load_library(library)
        self._lib = lib
        self._h = _Handle(lib)
        self.source = resolve(scenario, overrides, base_dir, lib.path)
        self._create(plugin_path, log)
        self._introspect()
        self._map_buffers()
        if record is not None:
            self._record(os.fspath(record), keyframe_every)

    # ---- creation ------------------------------------------------------------------------

    def _create(self, plugin_path, log):
        lib, src = self._lib, self.source
        opts = _create_options(src, plugin_path, log, self._h)
        out = ctypes.c_void_p()
        err = _lib.CreateError()
        if src.kind == "file":
            st = lib.env_create_file(os.fsencode(src.path), ctypes.byref(opts),
                                     ctypes.byref(out), ctypes.byref(err))
        else:
            text = src.text.encode()
            st = lib.env_create_json(text, len(text), ctypes.byref(opts), ctypes.byref(out),
                                     ctypes.byref(err))
        if st != _lib.POLIS_OK:
            msg = _decode(err.message) or lib.status_name(st)
            raise error_for(st, msg)
        self._h.ptr = out.value
        self._raise_pending()

    def _record(self, path, keyframe_every):
        keyframe_every = _index(keyframe_every, "keyframe_every")
        if not 0 <= keyframe_every <= I32_MAX:
            raise InvalidArgumentError(f"keyframe_every {keyframe_every} is outside [0, 2^31)")
        src = self.source
        if src.kind == "file":
            with open(src.path, "rb") as f:
                text = f.read()
            base = os.path.dirname(os.path.abspath(src.path))
        else:
            text, base = src.text.encode(), os.path.abspath(src.base_dir or os.getcwd())
        info = _lib.RecordInfo()
        info.scenario_text = text
        info.scenario_len = len(text)
        info.scenario_path = os.fsencode(src.path) if src.kind == "file" else None
        info.base_dir = os.fsencode(base)
        info.overrides = src.overrides.encode() if src.overrides is not None else None
        info.seed = self.default_seed
        info.keyframe_every = keyframe_every
        info.source = b"python"
        out = ctypes.c_void_p()
        err = _lib.CreateError()
        st = self._lib.recorder_open(os.fsencode(path), self._h.ptr, ctypes.byref(info),
                                     ctypes.byref(out), ctypes.byref(err))
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(err.message) or self._lib.status_name(st))
        self._h.rec = out.value

    def record_msg(self, agent, kind, text):
        """Adds a message to the recording's next step line (``"msgs"``, docs/recording.md):
        what ``agent`` was told, answered or decided before the next ``step``. ``polis replay
        --verify`` re-derives the step's actions from messages of kind ``"action"`` (a text
        action, parsed as the server parses it; it ends the agent's plan) and ``"plan"`` (a
        plan command, started before the step), exactly as `polis serve --record` writes
        them; other kinds (``"text"``, and the LLM runner's ``"llm"`` and ``"note"``) are kept
        as free text. StateError when the env records nothing."""
        h = self._h
        if h.rec is None:
            raise StateError("record_msg: this env has no recording (Env(..., record=FILE))")
        if not isinstance(kind, str) or not isinstance(text, str):
            raise InvalidArgumentError("record_msg: kind and text must be strings")
        self._record_check(self._lib.recorder_msg(h.rec, self.agent_id(agent), kind.encode(),
                                                  text.encode("utf-8")))

    def record_end(self, metrics=None):
        """Writes the running episode's end line now (instead of at the next ``reset`` or
        ``close``), with ``metrics`` (a dict) in it: the game's ``"metrics"`` rendering merged
        into one object, as `polis eval` writes it and `polis replay --verify` re-derives it
        (:meth:`episode_metrics`). No-op when nothing is being recorded."""
        h = self._h
        if h.rec is None or not h.rec_episode:
            return
        h.rec_episode = False
        text = json.dumps(metrics, separators=(",", ":")) if metrics is not None else None
        self._record_check(self._lib.recorder_end_episode(
            h.rec, text.encode("utf-8") if text is not None else None))

    def episode_metrics(self):
        """The game's ``"metrics"`` rendering (every plugin's object, merged; the first one
        wins a name two use) as a dict, or None when no plugin renders metrics."""
        if "metrics" not in (self.render_formats or ()):
            return None
        text = self.render(0, "metrics")
        dec, out, i = json.JSONDecoder(), {}, 0
        while True:
            while i < len(text) and text[i] in " \t\r\n":
                i += 1
            if i >= len(text):
                return out
            obj, i = dec.raw_decode(text, i)
            for k, v in obj.items():
                out.setdefault(k, v)

    def close(self):
        """Ends the env (idempotent); a recording is completed and closed now."""
        if not self._h.closed:
            self._h.finish_record()
        super().close()

    def _record_check(self, st):
        if st != _lib.POLIS_OK:
            raise error_for(st, _decode(self._lib.recorder_error(self._h.rec)))

    def _introspect(self):
        lib, p = self._lib, self._h.ptr
        self.name = _decode(lib.env_name(p))
        self.n_agents = lib.env_n_agents(p)
        self.n_actions = lib.env_n_actions(p)
        self.agent_names = tuple(_decode(lib.env_agent_name(p, a)) for a in range(self.n_agents))
        self.action_names = tuple(_decode(lib.env_action_name(p, i))
                                  for i in range(self.n_actions))
        self._agent_ids = {n: a for a, n in enumerate(self.agent_names)}
        self.obs_fields = read_obs_fields(lib, p)
        self.shared_fields = read_shared_fields(lib, p)
        self.reward_fn_names = tuple(_decode(lib.env_reward_fn_name(p, i))
                                     for i in range(lib.env_n_reward_fns(p)))
        self.default_seed = lib.env_default_seed(p)
        self.max_steps = lib.env_max_steps(p)
        self.render_formats = tuple((_decode(lib.env_render_formats(p)) or "").split())
        self.event_types = tuple(_decode(lib.env_event_name(p, t))
                                 for t in range(lib.env_n_event_types(p)))
        self.macros = tuple(MacroInfo(_decode(lib.env_macro_name(p, m)),
                                      _decode(lib.env_macro_usage(p, m)),
                                      _decode(lib.env_macro_doc(p, m)))
                            for m in range(lib.env_n_macros(p)))

    def _raw(self, addr, ctype, count):
        """A ctypes array over engine memory that keeps the handle (so the env) alive."""
        arr = (ctype * count).from_address(addr)
        arr._polis_handle = self._h
        return arr

    def _map_buffers(self):
        lib, p = self._lib, self._h.ptr
        io = lib.env_io(p).contents
        n, na = io.n_agents, io.n_actions
        self.obs_size = io.obs_size
        u8, n_fns = ctypes.c_uint8, len(self.reward_fn_names)
        raw = {
            "obs": (io.obs, u8, n * io.obs_size, "B", (n, io.obs_size)),
            "masks": (io.masks, u8, n * na, "B", (n, na)),
            "actions": (io.actions, ctypes.c_int32, n, "i", (n,)),
            "rewards": (io.rewards, ctypes.c_float, n, "f", (n,)),
            "terminations": (io.terminations, u8, n, "B", (n,)),
            "truncations": (io.truncations, u8, n, "B", (n,)),
            "illegal": (io.illegal, u8, n, "B", (n,)),
        }
        rc = lib.env_reward_components(p)
        if n_fns:
            raw["reward_components"] = (rc, ctypes.c_float, n_fns * n, "f", (n_fns, n))
        self._addresses = {k: v[0] for k, v in raw.items()}
        raws = {}
        for key, (addr, ctype, count, fmt, shape) in raw.items():
            arr = raws[key] = self._raw(addr, ctype, count)
            if np is not None:
                view = np.frombuffer(arr, dtype=np.dtype(ctype)).reshape(shape)
            else:
                view = memoryview(arr).cast("B").cast(fmt, shape)
            if key != "actions":
                view = _readonly(view)
            setattr(self, key, view)
        if not n_fns:
            # memoryview refuses a 0 in a shape, so without numpy an env without reward
            # functions has an empty one-dimensional view (len 0, like the [0, n] array).
            self.reward_components = (np.zeros((0, n), np.float32) if np is not None
                                      else memoryview(b"").cast("f"))
        # Each agent's mask row; int8 with numpy because gymnasium's Discrete.sample(mask=)
        # requires an int8 array (the values are the engine's 0/1 bytes, not a copy).
        if np is not None:
            m8 = self.masks.view(np.int8)
            self.agent_masks = [m8[a] for a in range(n)]
        else:
            whole = memoryview(raws["masks"]).cast("B")
            self.agent_masks = [whole[a * na:(a + 1) * na].toreadonly() for a in range(n)]
        # Shared fields (held once per env): one read-only view each over the env's shared
        # buffer, re-made by reset() when an env with a task distribution moved it.
        self._shared_addr, self.shared = shared_views(lib, p, self.shared_fields, self._h)
        # Per-field views. The record buffer [n_agents][obs_size] holds each field at its
        # offset; numpy gives one strided [n_agents, *shape] view per field, and each agent's
        # field is a row of it. memoryview cannot stride, so without numpy each agent's field
        # is a cast of its own contiguous bytes.
        self.fields = {} if np is not None else None
        self.agent_fields = [dict() for _ in range(n)]
        if np is not None:
            base = np.frombuffer(raws["obs"], dtype=np.uint8)
            for f in self.obs_fields:
                dt = np.dtype(_lib.DTYPE_INFO[f.dtype][1])
                strides = [dt.itemsize]
                for d in reversed(f.shape[1:]):
                    strides.insert(0, strides[0] * d)
                v = np.ndarray((n,) + f.shape, dtype=dt, buffer=base, offset=f.offset,
                               strides=(io.obs_size,) + tuple(strides))
                v = _readonly(v)
                self.fields[f.name] = v
                for a in range(n):
                    self.agent_fields[a][f.name] = v[a]
        else:
            whole = memoryview(raws["obs"]).cast("B")
            for f in self.obs_fields:
                fmt = _lib.DTYPE_INFO[f.dtype][0]
                for a in range(n):
                    start = a * io.obs_size + f.offset
                    mv = whole[start:start + f.nbytes].cast(fmt, f.shape)
                    self.agent_fields[a][f.name] = mv.toreadonly()

    # ---- status and lifecycle ------------------------------------------------------------

    def __repr__(self):
        state = "closed" if self.closed else f"tick {self.tick}"
        return (f"<polis.Env {self.name!r}: {self.n_agents} agents, {self.n_actions} actions, "
                f"{state}>")

    # ---- episode -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, task: dict | None = None) -> None:
        """Starts an episode from ``seed`` (default: the scenario's ``seed``). A scenario with
        ``"vary"`` draws its task from the seed (``Env.task`` says what was drawn); ``task``
        (a dict of override paths and values, as ``Env.task`` returns) plays that task
        instead of drawing one (docs/scenario.md, "Task distributions")."""
        p = self._ptr()
        if seed is None:
            seed = self.default_seed
        seed = _index(seed, "seed")
        if not 0 <= seed < U64:
            raise InvalidArgumentError(f"reset: seed {seed} is outside [0, 2^64)")
        h = self._h
        if h.rec is not None and h.rec_episode:
            h.rec_episode = False
            self._record_check(self._lib.recorder_end_episode(h.rec, None))
        if task is None:
            st = self._lib.env_reset(p, seed)
        else:
            if not isinstance(task, dict):
                raise InvalidArgumentError(f"reset: task must be a dict of override paths and "
                                           f"values, got {type(task).__name__}")
            st = self._lib.env_reset_task(p, seed, json.dumps(task).encode())
        self._check(st)
        if self.shared_fields and self._lib.env_shared_obs(p, None) != self._shared_addr:
            self._shared_addr, self.shared = shared_views(self._lib, p, self.shared_fields, h)
        self._raise_pending()
        if h.rec is not None:
            self._record_check(self._lib.recorder_begin_episode(h.rec, seed))
            h.rec_episode = True

    def step(self, actions: Any = None) -> None:
        """Runs one tick. ``actions``: a sequence of ``n_agents`` action ids written to the
        ``actions`` buffer first (default: use the buffer as it is)."""
        p = self._ptr()
        if actions is not None:
            self.set_actions(actions)
        st = self._lib.env_step(p)
        self._check(st)
        self._raise_pending()
        if self._h.rec is not None:
            self._record_check(self._lib.recorder_step(self._h.rec))

    def policy_act(self, policy: str, agents=None) -> None:
        """Writes a registered policy's action (``polis describe`` lists them: ``random``,
        ``noop``, a game's ``scripted`` ...) for each of ``agents`` (names or ids; ``None``:
        every agent not yet finished) into the ``actions`` buffer, leaving the other agents'
        entries as they are: scripted seats beside learners (``polis_env_policy_act``). Call
        it between ``reset``/``step`` and the next ``step()`` without actions."""
        p = self._ptr()
        pid = self._lib.env_policy_find(p, policy.encode())
        if pid < 0:
            raise InvalidArgumentError(f'policy_act: no policy "{policy}"')
        if agents is None:
            self._check(self._lib.env_policy_act(p, pid, None, 0))
            return
        ids = [self.agent_id(a) for a in agents]
        arr = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        self._check(self._lib.env_policy_act(p, pid, arr, len(ids)))

    def set_actions(self, actions):
        if len(actions) != self.n_agents:
            raise InvalidArgumentError(
                f"step: {len(actions)} actions for {self.n_agents} agents")
        buf = self.actions
        if (np is not None and isinstance(actions, np.ndarray) and actions.dtype.kind in "iu"
                and actions.size and I32_MIN <= actions.min() and actions.max() <= I32_MAX):
            buf[:] = actions  # the engine checks [0, n_actions) itself
            return
        for a, act in enumerate(actions):
            buf[a] = self._checked_action(a, act)

    def _checked_action(self, agent, act):
        """An int32 action id; ints outside int32 would wrap in the buffer, so they are
        refused here with the engine's wording (the engine checks [0, n_actions))."""
        if isinstance(act, (bool, float)) or (np is not None and isinstance(act, np.bool_)):
            raise ActionError(f"step: agent {agent} ({self.agent_names[agent]}): action "
                              f"must be an integer id, got {type(act).__name__} {act!r}")
        try:
            i = _index(act, "action")
        except InvalidArgumentError:
            raise ActionError(f"step: agent {agent} ({self.agent_names[agent]}): action "
                              f"must be an integer id, got {type(act).__name__} "
                              f"{act!r}") from None
        if not I32_MIN <= i <= I32_MAX:
            raise ActionError(f"step: agent {agent} ({self.agent_names[agent]}): action {i} "
                              f"is outside [0, {self.n_actions}) at tick {self.tick}")
        return i

    @property
    def task(self) -> dict | None:
        """The task the current episode drew from the scenario's ``"vary"``: a dict of
        override paths and values (``{}`` before the first reset); ``None`` when the scenario
        varies nothing (docs/scenario.md, "Task distributions")."""
        t = self._lib.env_task(self._ptr())
        return None if t is None else json.loads(t.decode())

    @property
    def varies(self) -> dict:
        """What the scenario's ``"vary"`` draws: {override path: draw spec} (``{}``: nothing)."""
        p = self._ptr()
        return {self._lib.env_varied_path(p, i).decode():
                json.loads(self._lib.env_varied_spec(p, i).decode())
                for i in range(self._lib.env_n_varied(p))}

    @property
    def tick(self):
        return self._lib.env_tick(self._ptr())

    @property
    def done(self):
        """True when every agent is terminated or truncated."""
        return bool(self._lib.env_done(self._ptr()))

    def state_hash(self) -> int:
        """The engine's 64-bit hash of observations, masks, rewards, flags and tick."""
        return self._lib.env_state_hash(self._ptr())

    # ---- names ---------------------------------------------------------------------------

    def agent_id(self, agent):
        """An agent's id from its name or id; UnknownAgentError otherwise."""
        if isinstance(agent, str):
            try:
                return self._agent_ids[agent]
            except KeyError:
                raise UnknownAgentError(
                    f'unknown agent "{agent}" (agents: {", ".join(self.agent_names)})'
                ) from None
        try:
            a = _index(agent, "agent")
        except InvalidArgumentError:
            raise UnknownAgentError(f"unknown agent {agent!r}: expected a name or an id") \
                from None
        if not 0 <= a < self.n_agents:
            raise UnknownAgentError(f"unknown agent {a}: ids are 0..{self.n_agents - 1}")
        return a

    # ---- who sees whom (docs/visibility.md) ----------------------------------------------

    def set_visible(self, observers, targets, visible: bool | None):
        """What ``observers`` see of ``targets`` from now on: ``False`` hides them, ``True``
        shows them (whatever the scenario's rules say), ``None`` gives the pairs back to the
        scenario's ``"visibility"`` rules. Each of ``observers``, ``targets`` is an agent (name
        or id), a list of agents, or ``None`` for every agent. The hidden agents still act;
        games leave them out of every observation the observers get from the next step on
        (views rendered now already). Settings last across resets; a recording keeps them
        (``polis_env_visibility_set``)."""
        state = {False: 0, True: 1, None: -1}.get(visible) if isinstance(
            visible, (bool, type(None))) else None
        if state is None:
            raise InvalidArgumentError(
                f"set_visible: visible must be True, False or None, got {visible!r}")
        p = self._ptr()

        def ids(x):
            if x is None:
                return [-1]
            if isinstance(x, (list, tuple)):
                return [self.agent_id(a) for a in x]
            return [self.agent_id(x)]
        for o in ids(observers):
            for t in ids(targets):
                self._check(self._lib.env_visibility_set(p, o, t, state))

    def visible(self, observer, target) -> bool:
        """True when ``observer`` sees ``target`` now (an agent always sees itself)."""
        return bool(self._lib.env_visible(self._ptr(), self.agent_id(observer),
                                          self.agent_id(target)))

    def action_id(self, name):
        """The id of an action name, or -1 (as polis_env_action_id)."""
        return self._lib.env_action_id(self._ptr(), name.encode())

    # ---- views and text actions ----------------------------------------------------------

    def render(self, agent: int | str, format: str = "text") -> str:
        """An agent's view as a string (``polis_env_render``); ``format`` is one of
        ``render_formats``. The ``"json"`` view is a JSON text: ``json.loads`` it, or use
        ``render_json``."""
        p = self._ptr()
        a = self.agent_id(agent)
        out = ctypes.c_void_p()
        st = self._lib.env_render(p, a, format.encode(), ctypes.byref(out))
        try:
            self._check(st)
            return _decode(ctypes.string_at(out.value))
        finally:
            if out.value:
                self._lib.free(out)

    def render_json(self, agent):
        """The ``"json"`` view parsed: ``{"<plugin>": {...}, ...}``."""
        return json.loads(self.render(agent, "json"))

    def render_rgb(self, agent: int | str | None = None, cell_px: int = 16, out=None,
                   glyphs: bool = False):
        """The current scene as pixels (``polis_pixels_draw``): an ``(H, W, 3)`` uint8
        array, the whole scene map (``agent`` None) or the agent's view window, cells of
        ``cell_px`` pixels (1 to 64), drawn like the browser viewer. ``out``: an array of that
        shape to draw into instead of a new one (C-contiguous uint8). ``glyphs``: kinds whose
        glyph is printable ASCII are drawn as that glyph (``POLIS_PIXELS_GLYPHS``; cells of
        8 px and more). Needs numpy; a game without a scene map raises
        InvalidArgumentError."""
        if np is None:
            raise InvalidArgumentError("render_rgb needs numpy (install python3-numpy)")
        p = self._ptr()
        a = -1 if agent is None else self.agent_id(agent)
        if isinstance(cell_px, bool) or not isinstance(cell_px, int):
            raise InvalidArgumentError(f"cell_px must be an int, got {cell_px!r}")
        w, h = ctypes.c_int32(), ctypes.c_int32()
        self._check(self._lib.pixels_size(p, a, cell_px, ctypes.byref(w),
                                                  ctypes.byref(h)))
        shape = (h.value, w.value, 3)
        if out is None:
            out = np.empty(shape, np.uint8)
        elif (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise InvalidArgumentError(f"out must be a writeable C-contiguous uint8 array of "
                                       f"shape {shape}")
        self._check(self._lib.pixels_draw_ex(p, a, cell_px, 1 if glyphs else 0,
                                                out.ctypes.data, out.nbytes, ctypes.byref(w),
                                                ctypes.byref(h)))
        return out

    def parse_action(self, agent: int | str, text: str) -> int:
        """A text or JSON action of an agent as an action id (``polis_env_parse_action``).
        The id is not checked against the mask. ActionError with the engine's message when
        nothing accepts the input."""
        p = self._ptr()
        a = self.agent_id(agent)
        if not isinstance(text, str):
            raise InvalidArgumentError(f"parse_action: expected a string, got "
                                       f"{type(text).__name__}")
        out = ctypes.c_int32(-1)
        self._check(self._lib.env_parse_action(p, a, text.encode(), ctypes.byref(out)))
        return out.value

    def describe(self) -> dict:
        """Everything the scenario registered, as the dict of ``polis describe --json``."""
        raw = self._lib.env_describe_json(self._ptr())
        if not raw:
            raise error_for(2, "describe: out of memory")
        try:
            return json.loads(_decode(ctypes.string_at(raw)))
        finally:
            self._lib.free(raw)

    # ---- plans (macro actions) -----------------------------------------------------------

    def plan(self, agent, command):
        """Starts a plan for ``agent`` from a command such as ``"GATHER 3 wood"`` (its first
        word names one of ``macros``, in any case), replacing the agent's plan if it had one
        (``polis_env_plan_start``). ActionError with the engine's reason for an unknown macro
        or arguments the macro refuses (the agent then has no plan); StateError for a
        finished agent or before ``reset``."""
        p = self._ptr()
        a = self.agent_id(agent)
        if not isinstance(command, str):
            raise InvalidArgumentError(f"plan: expected a command string, got "
                                       f"{type(command).__name__}")
        self._check(self._lib.env_plan_start(p, a, command.encode()))

    def plan_next(self, agent):
        """This tick's step of ``agent``'s plan, a ``PlanStep`` (``polis_env_plan_next``):
        write a running plan's ``action`` into ``actions`` before ``step``. A second call in
        the same tick answers the same. InvalidArgumentError when the agent has no plan;
        ActionError (or the macro's error) when the macro fails or picks an action the
        agent's mask forbids: the plan has then ended."""
        p = self._ptr()
        a = self.agent_id(agent)
        state = ctypes.c_int(0)
        action = ctypes.c_int32(0)
        why = ctypes.c_char_p()
        self._check(self._lib.env_plan_next(p, a, ctypes.byref(state), ctypes.byref(action),
                                            ctypes.byref(why)))
        self._raise_pending()
        status = _PLAN_STATUS[state.value]
        if status == "running":
            return PlanStep(status, action.value, None)
        return PlanStep(status, None, _decode(why.value))

    def plan_cancel(self, agent):
        """Ends ``agent``'s plan, if it has one. ``reset`` ends every plan."""
        self._lib.env_plan_cancel(self._ptr(), self.agent_id(agent))

    def plan_command(self, agent):
        """The command of ``agent``'s running plan as it was started (trimmed), or None."""
        return _decode(self._lib.env_plan_command(self._ptr(), self.agent_id(agent)))

    def plan_actions(self):
        """Writes the action of every running plan into ``actions`` (other agents' entries
        are left as they are) and returns ``{agent name: PlanStep}`` for the plans that
        ended now. The loop of a plan-level agent: ``ended = env.plan_actions()``,
        ``env.step()``, and give the agents in ``ended`` new plans."""
        ended = {}
        buf = self.actions
        for a, name in enumerate(self.agent_names):
            if self.plan_command(a) is None:
                continue
            r = self.plan_next(a)
            if r.status == "running":
                buf[a] = r.action
            else:
                ended[name] = r
        return ended

    # ---- masks and observations as plain Python ------------------------------------------

    def mask_list(self, agent):
        """An agent's action mask as a list of 0/1 ints (a copy)."""
        return self.agent_masks[self.agent_id(agent)].tolist()

    def obs_dict(self, agent, copy=False):
        """An agent's observation as {field: value}: numpy views (``copy=False``) or copies;
        without numpy, nested lists."""
        a = self.agent_id(agent)
        if np is None:
            return {k: v.tolist() for k, v in self.agent_fields[a].items()}
        if copy:
            return {k: v.copy() for k, v in self.agent_fields[a].items()}
        return self.agent_fields[a]

    def shared_dict(self, copy=False):
        """The env's shared observation fields as {field: value} (``shared_fields``; values
        every agent sees alike, held once per env instead of in each agent's record, such as
        the social plugin's ``social_state: "shared"``): read-only numpy views that follow
        the env (``copy=False``) or copies; without numpy, nested lists. {} when the scenario
        registers none."""
        self._ptr()
        if np is None:
            return {k: v.tolist() for k, v in self.shared.items()}
        if copy:
            return {k: v.copy() for k, v in self.shared.items()}
        return dict(self.shared)

    # ---- events --------------------------------------------------------------------------

    def subscribe(self, fn, event=None):
        """Calls ``fn(EventInfo)`` for each event of type ``event`` (a name; None = every
        type), after the plugin and script subscribers. Allowed until the first reset. An
        exception raised by ``fn`` cannot cross the engine: it is raised from the ``step``
        or ``reset`` that delivered the event, once the engine call has returned."""
        p = self._ptr()
        lib = self._lib
        if event is None:
            t = -1
        else:
            t = lib.env_event_find(p, event.encode())
            if t < 0:
                raise InvalidArgumentError(
                    f'subscribe: unknown event type "{event}" '
                    f'(types: {", ".join(self.event_types) or "none"})')
        layouts = [self._event_layout(i) for i in range(len(self.event_types))]
        names = self.event_types
        pending = self._h.pending

        def on_event(_ud, evp):
            if pending[0] is not None:
                return
            try:
                ev = evp.contents
                data = {}
                for fname, ctype, off in layouts[ev.type]:
                    data[fname] = ctype.from_address(ev.data + off).value
                fn(EventInfo(ev.type, names[ev.type], ev.tick, ev.seq, data))
            except BaseException as e:  # never unwind through C
                pending[0] = e

        cb = _lib.EVENT_FN(on_event)
        self._check(lib.env_subscribe(p, t, cb, None))
        self._h.callbacks.append(cb)

    def _event_layout(self, t):
        lib, p = self._lib, self._h.ptr
        out = []
        for i in range(lib.env_event_n_fields(p, t)):
            name = ctypes.c_char_p()
            ft = ctypes.c_int()
            off = ctypes.c_size_t()
            self._check(lib.env_event_field(p, t, i, ctypes.byref(name), ctypes.byref(ft),
                                            ctypes.byref(off)))
            out.append((_decode(name.value), _lib.FTYPE_CTYPES[_lib.FTYPE_NAMES[ft.value]],
                        off.value))
        return out

    # ---- zero-copy introspection (tests, debugging) --------------------------------------

    def buffer_address(self, name):
        """The engine address of a buffer (``"obs"``, ``"masks"``, ``"actions"``, ...), as
        polis_env_io gives it. A view of that buffer starts at exactly this address."""
        self._ptr()
        return self._addresses[name]


class _ClosedHandle:
    """Stands in for the handle after close(): no pointer, every call refused."""

    __slots__ = ("lib", "ptr", "closed", "pending")

    def __init__(self, lib):
        self.lib = lib
        self.ptr = None
        self.closed = True
        self.pending = [None]


def _readonly(view):
    if np is not None and isinstance(view, np.ndarray):
        view.flags.writeable = False
        return view
    return view.toreadonly()


def _index(v, what):
    try:
        return operator.index(v)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be an integer, got {type(v).__name__} "
                                   f"{v!r}") from None
