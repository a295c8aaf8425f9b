"""Finding and binding libpolis with ctypes.

Discovery order (the first that loads wins; see ``find_library_candidates``):

1. an explicit path (``polis.load_library(path)`` or ``library=`` of every constructor);
2. ``$POLIS_LIBRARY``;
3. the build tree, when this package runs from the source tree: ``<repo>/build/libpolis.so``;
4. an installed polis: ``pkg-config --variable=libdir polis``, the prefix of the ``polis``
   program on ``$PATH``, the prefix Python is installed in (``installed_libdirs``);
5. the system loader (``libpolis.so.0``, then ``ctypes.util.find_library("polis")``), which
   finds an installed polis through ``ld.so``'s cache, ``LD_LIBRARY_PATH`` and the usual
   directories.

Recordings and frames are libraries of their own beside libpolis (docs/architecture.md):
``libpolis-record`` and ``libpolis-pixels`` are loaded from the directory libpolis was
loaded from (or by the system loader when libpolis was), the first time an env records or
draws a frame; an SDK that only steps envs never needs them.

Every function is declared with its C prototype (argtypes/restype) so ctypes never guesses
an ``int`` where the header says ``size_t`` or a pointer. A library that lacks a symbol the
SDK needs is refused with a ``LibraryError`` naming the symbol.
"""

import ctypes
import ctypes.util
import glob
import os
import shutil
import subprocess
import sys
import threading

from .errors import LibraryError

# ---- C types mirrored from include/polis/types.h and polis.h ------------------------------

c_status = ctypes.c_int
c_env_p = ctypes.c_void_p
c_vec_p = ctypes.c_void_p

POLIS_OK = 0

DTYPE_NAMES = {0: "u8", 1: "i8", 2: "i16", 3: "i32", 4: "f32"}
# struct/memoryview format, numpy dtype string, element size, lowest and highest value
DTYPE_INFO = {
    "u8": ("B", "uint8", 1, 0, 255),
    "i8": ("b", "int8", 1, -128, 127),
    "i16": ("h", "int16", 2, -32768, 32767),
    "i32": ("i", "int32", 4, -(2 ** 31), 2 ** 31 - 1),
    "f32": ("f", "float32", 4, float("-inf"), float("inf")),
}
FTYPE_NAMES = {0: "i32", 1: "i64", 2: "f32", 3: "f64"}
FTYPE_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float,
                "f64": ctypes.c_double}


class Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("alloc", ctypes.c_void_p),
        ("alloc_ud", ctypes.c_void_p),
        ("plugin_path", ctypes.c_char_p),
        ("base_dir", ctypes.c_char_p),
        ("log", ctypes.c_void_p),
        ("log_ud", ctypes.c_void_p),
        ("overrides", ctypes.c_char_p),
        ("no_observations", ctypes.c_bool),
    ]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class CreateError(ctypes.Structure):
    _fields_ = [("status", c_status), ("message", ctypes.c_char * 1024)]


class IO(ctypes.Structure):
    _fields_ = [
        ("n_agents", ctypes.c_int32),
        ("n_actions", ctypes.c_int32),
        ("obs_size", ctypes.c_size_t),
        ("obs", ctypes.c_void_p),
        ("masks", ctypes.c_void_p),
        ("actions", ctypes.c_void_p),
        ("rewards", ctypes.c_void_p),
        ("terminations", ctypes.c_void_p),
        ("truncations", ctypes.c_void_p),
        ("illegal", ctypes.c_void_p),
    ]


class VecEpisodes(ctypes.Structure):
    """polis_vec_episodes (polis.h, "vectorised envs"): per-row episode statistics."""
    _fields_ = [
        ("n_rows", ctypes.c_int32),
        ("n_envs", ctypes.c_int32),
        ("rows_ended", ctypes.c_int32),
        ("envs_ended", ctypes.c_int32),
        ("ended", ctypes.c_void_p),
        ("returns", ctypes.c_void_p),
        ("lengths", ctypes.c_void_p),
        ("env_ended", ctypes.c_void_p),
    ]


class ObsField(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("doc", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int32 * 4),
        ("offset", ctypes.c_size_t),
        ("nbytes", ctypes.c_size_t),
    ]


class Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("tick", ctypes.c_int64),
        ("seq", ctypes.c_uint64),
        ("data", ctypes.c_void_p),
    ]


EVENT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Event))


class RecordInfo(ctypes.Structure):
    """polis_record_info (polis.h, "recordings")."""
    _fields_ = [
        ("scenario_text", ctypes.c_char_p),
        ("scenario_len", ctypes.c_size_t),
        ("scenario_path", ctypes.c_char_p),
        ("base_dir", ctypes.c_char_p),
        ("overrides", ctypes.c_char_p),
        ("seed", ctypes.c_uint64),
        ("keyframe_every", ctypes.c_int32),
        ("policies", ctypes.c_char_p),
        ("source", ctypes.c_char_p),
    ]

_P = ctypes.POINTER
_cp = ctypes.c_char_p
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_u64 = ctypes.c_uint64
_sz = ctypes.c_size_t
_vp = ctypes.c_void_p

# name: (restype, argtypes). Strings the engine allocates (describe, render) come back as
# void* so the SDK can hand the same pointer to polis_free.
PROTOTYPES = {
    "polis_version": (_cp, []),
    "polis_status_str": (_cp, [c_status]),
    "polis_env_create_file": (c_status, [_cp, _P(Options), _P(c_env_p), _P(CreateError)]),
    "polis_env_create_json": (c_status, [_cp, _sz, _P(Options), _P(c_env_p), _P(CreateError)]),
    "polis_env_destroy": (None, [c_env_p]),
    "polis_env_reset": (c_status, [c_env_p, _u64]),
    "polis_env_step": (c_status, [c_env_p]),
    "polis_env_error": (_cp, [c_env_p]),
    "polis_env_default_seed": (_u64, [c_env_p]),
    "polis_env_tick": (_i64, [c_env_p]),
    "polis_env_visibility_set": (c_status, [c_env_p, _i32, _i32, _i32]),
    "polis_env_policy_find": (_i32, [c_env_p, _cp]),
    "polis_env_policy_act": (c_status, [c_env_p, _i32, _P(_i32), _i32]),
    "polis_env_visible": (ctypes.c_bool, [c_env_p, _i32, _i32]),
    "polis_env_visibility_active": (ctypes.c_bool, [c_env_p]),
    "polis_env_task": (_cp, [c_env_p]),
    "polis_env_reset_task": (c_status, [c_env_p, _u64, _cp]),
    "polis_env_n_varied": (_i32, [c_env_p]),
    "polis_env_varied_path": (_cp, [c_env_p, _i32]),
    "polis_env_varied_spec": (_cp, [c_env_p, _i32]),
    "polis_env_max_steps": (_i64, [c_env_p]),
    "polis_env_done": (ctypes.c_bool, [c_env_p]),
    "polis_env_name": (_cp, [c_env_p]),
    "polis_env_io": (_P(IO), [c_env_p]),
    "polis_env_n_agents": (_i32, [c_env_p]),
    "polis_env_agent_name": (_cp, [c_env_p, _i32]),
    "polis_env_n_actions": (_i32, [c_env_p]),
    "polis_env_action_name": (_cp, [c_env_p, _i32]),
    "polis_env_action_id": (_i32, [c_env_p, _cp]),
    "polis_env_n_obs_fields": (_i32, [c_env_p]),
    "polis_env_obs_field": (c_status, [c_env_p, _i32, _P(ObsField)]),
    "polis_env_obs_field_range": (c_status, [c_env_p, _i32, _P(_i32), _P(_i32),
                                             _P(_P(ctypes.c_double)), _P(_P(ctypes.c_double))]),
    "polis_env_n_shared_fields": (_i32, [c_env_p]),
    "polis_env_shared_field": (c_status, [c_env_p, _i32, _P(ObsField)]),
    "polis_env_shared_obs": (ctypes.c_void_p, [c_env_p, _P(_sz)]),
    "polis_dtype_name": (_cp, [ctypes.c_int]),
    "polis_env_n_reward_fns": (_i32, [c_env_p]),
    "polis_env_reward_fn_name": (_cp, [c_env_p, _i32]),
    "polis_env_reward_components": (_vp, [c_env_p]),
    "polis_env_n_event_types": (_i32, [c_env_p]),
    "polis_env_event_find": (_i32, [c_env_p, _cp]),
    "polis_env_event_name": (_cp, [c_env_p, _i32]),
    "polis_env_event_n_fields": (_i32, [c_env_p, _i32]),
    "polis_env_event_field": (c_status, [c_env_p, _i32, _i32, _P(_cp), _P(ctypes.c_int),
                                         _P(_sz)]),
    "polis_env_event_size": (_sz, [c_env_p, _i32]),
    "polis_env_subscribe": (c_status, [c_env_p, _i32, EVENT_FN, _vp]),
    "polis_env_describe_json": (_vp, [c_env_p]),
    "polis_free": (None, [_vp]),
    "polis_env_render": (c_status, [c_env_p, _i32, _cp, _P(_vp)]),
    "polis_env_render_formats": (_cp, [c_env_p]),
    "polis_env_scene_width": (_i32, [c_env_p]),
    "polis_env_parse_action": (c_status, [c_env_p, _i32, _cp, _P(_i32)]),
    "polis_env_state_hash": (_u64, [c_env_p]),
    # plans (macro actions); polis_plan_state is a C enum, passed as int
    "polis_env_n_macros": (_i32, [c_env_p]),
    "polis_env_macro_name": (_cp, [c_env_p, _i32]),
    "polis_env_macro_usage": (_cp, [c_env_p, _i32]),
    "polis_env_macro_doc": (_cp, [c_env_p, _i32]),
    "polis_env_plan_start": (c_status, [c_env_p, _i32, _cp]),
    "polis_env_plan_next": (c_status, [c_env_p, _i32, _P(ctypes.c_int), _P(_i32), _P(_cp)]),
    "polis_env_plan_cancel": (None, [c_env_p, _i32]),
    "polis_env_plan_command": (_cp, [c_env_p, _i32]),
    # vectorised envs (polis.vector): a polis_vec* is opaque like a polis_env*
    "polis_vec_create_file": (c_status, [_cp, _P(Options), _i32, _i32, _P(c_vec_p),
                                         _P(CreateError)]),
    "polis_vec_create_json": (c_status, [_cp, _sz, _P(Options), _i32, _i32, _P(c_vec_p),
                                         _P(CreateError)]),
    "polis_vec_destroy": (None, [c_vec_p]),
    "polis_vec_reset": (c_status, [c_vec_p, _u64]),
    "polis_vec_step": (c_status, [c_vec_p]),
    "polis_vec_error": (_cp, [c_vec_p]),
    "polis_vec_io": (_P(IO), [c_vec_p]),
    "polis_vec_autoreset": (_P(ctypes.c_uint8), [c_vec_p]),
    "polis_vec_episode_stats": (_P(VecEpisodes), [c_vec_p]),
    "polis_vec_n_envs": (_i32, [c_vec_p]),
    "polis_vec_n_threads": (_i32, [c_vec_p]),
    "polis_vec_agents_per_env": (_i32, [c_vec_p]),
    "polis_vec_env": (c_env_p, [c_vec_p, _i32]),
    "polis_vec_episode": (_i64, [c_vec_p, _i32]),
    "polis_vec_env_seed": (_u64, [_u64, _i32, _i64]),
}

class PixelsObsOpts(ctypes.Structure):
    """polis_pixels_obs_opts (polis/pixels.h)."""
    _fields_ = [("cell_px", ctypes.c_int32), ("downscale", ctypes.c_int32),
                ("grey", ctypes.c_bool), ("no_stats", ctypes.c_bool),
                ("flags", ctypes.c_uint32)]


# The libraries beside libpolis: name -> (file stem, what needs it, prototypes).
COMPANIONS = {
    # frames (polis/pixels.h)
    "pixels": ("libpolis-pixels", "frames (render_rgb) and pixel observations", {
        "polis_pixels_obs_size": (c_status, [c_env_p, _i32, _P(PixelsObsOpts), _P(_i32),
                                             _P(_i32), _P(_i32), _P(_sz)]),
        "polis_pixels_obs": (c_status, [c_env_p, _i32, _P(PixelsObsOpts), _vp, _sz]),
        "polis_pixels_size": (c_status, [c_env_p, _i32, _i32, _P(_i32), _P(_i32)]),
        "polis_pixels_draw": (c_status, [c_env_p, _i32, _i32, _vp, _sz, _P(_i32), _P(_i32)]),
        "polis_pixels_draw_ex": (c_status, [c_env_p, _i32, _i32, ctypes.c_uint32, _vp, _sz,
                                             _P(_i32), _P(_i32)]),
    }),
    # recordings (polis/record.h, docs/recording.md); a polis_recorder* is opaque
    "record": ("libpolis-record", "recordings (Env(record=...))", {
        "polis_recorder_open": (c_status, [_cp, c_env_p, _P(RecordInfo), _P(_vp),
                                           _P(CreateError)]),
        "polis_recorder_begin_episode": (c_status, [_vp, _u64]),
        "polis_recorder_step": (c_status, [_vp]),
        "polis_recorder_msg": (c_status, [_vp, _i32, _cp, _cp]),
        "polis_recorder_end_episode": (c_status, [_vp, _cp]),
        "polis_recorder_close": (c_status, [_vp]),
        "polis_recorder_error": (_cp, [_vp]),
    }),
}

SYSTEM_NAMES = ("libpolis.so.0", "libpolis.so")
# Each companion function's library, by the attribute name the SDK calls it by.
_COMPANION_OF = {name[len("polis_"):]: which for which, (_, _, protos) in COMPANIONS.items()
                 for name in protos}


def companion_candidates(libpolis_path, stem):
    """Where the companion library ``stem`` ("libpolis-record") is looked for: the directory
    of the libpolis in use (a build tree and an install keep them together), or the system
    loader when libpolis itself came from it by a bare name."""
    d = os.path.dirname(libpolis_path) if os.sep in libpolis_path else ""
    names = (stem + ".so", stem + ".so.0")
    if d:
        return [os.path.join(d, n) for n in names]
    return [stem + ".so.0", stem + ".so"]


def source_root():
    """The repository root when this package runs from the source tree, else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "polis", "polis.h")):
        return root
    return None


def find_library_candidates(explicit=None):
    """The places the SDK tries, in order, as (how, path-or-name) pairs."""
    out = []
    if explicit:
        out.append(("explicit path", os.fspath(explicit)))
        return out
    env = os.environ.get("POLIS_LIBRARY")
    if env:
        out.append(("$POLIS_LIBRARY", env))
        return out
    root = source_root()
    if root:
        out.append(("build tree", os.path.join(root, "build", "libpolis.so")))
    for how, libdir in installed_libdirs():
        for name in SYSTEM_NAMES:
            out.append((how, os.path.join(libdir, name)))
    for name in SYSTEM_NAMES:
        out.append(("system loader", name))
    found = ctypes.util.find_library("polis")
    if found and found not in SYSTEM_NAMES:
        out.append(("system loader", found))
    return out


def _pkg_config_libdir():
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "--variable=libdir", "polis"], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    d = r.stdout.strip()
    return os.path.normpath(d) if r.returncode == 0 and d else None


def _prefix_libdirs(prefix):
    """The library directories GNUInstallDirs may have used under an install prefix."""
    dirs = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    dirs += sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "*-linux-gnu*")))
    return [d for d in dirs if os.path.isdir(d)]


def installed_libdirs():
    """Where an installed polis keeps libpolis, in order: ``pkg-config --variable=libdir
    polis`` (honours ``$PKG_CONFIG_PATH``), the prefix of the ``polis`` program on
    ``$PATH``, then the prefix Python itself is installed in (a ``pip install`` beside
    ``cmake --install`` into one prefix or venv)."""
    out = []
    d = _pkg_config_libdir()
    if d:
        out.append(("pkg-config", d))
    exe = shutil.which("polis")
    if exe:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
        out += [("install prefix of " + exe, d) for d in _prefix_libdirs(prefix)]
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        out += [("Python's prefix", d) for d in _prefix_libdirs(prefix)
                if os.path.realpath(d) not in ("/usr/lib", "/usr/lib64")]
    seen, uniq = set(), []
    for how, d in out:
        if d not in seen:
            seen.add(d)
            uniq.append((how, d))
    return uniq


class Library:
    """A loaded libpolis with every prototype declared. One per path, shared by envs."""

    def __init__(self, cdll, path):
        self.cdll = cdll
        self.path = path
        for name, (restype, argtypes) in PROTOTYPES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                raise LibraryError(
                    f"{path}: missing symbol {name}; this libpolis is older than the SDK "
                    f"(SDK needs every function of include/polis/polis.h)") from None
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name[len("polis_"):], fn)
        self.version_string = self.version().decode()
        self._companions = {}
        self._companion_lock = threading.Lock()

    def __getattr__(self, attr):
        # Only reached for names not bound above: a function of libpolis-record or
        # libpolis-pixels, loaded and bound on first use.
        which = _COMPANION_OF.get(attr)
        if which is None:
            raise AttributeError(attr)
        self.companion(which)
        return self.__dict__[attr]

    def companion(self, which):
        """Loads (once) the library ``which`` ("record", "pixels") beside this libpolis and
        binds its functions; LibraryError naming what was tried when it cannot."""
        with self._companion_lock:
            if which in self._companions:
                return self._companions[which]
            stem, needed_for, protos = COMPANIONS[which]
            tried = []
            for cand in companion_candidates(self.path, stem):
                cdll, why = _load_path("beside libpolis", cand)
                if cdll is None:
                    tried.append(why)
                    continue
                for name, (restype, argtypes) in protos.items():
                    try:
                        fn = getattr(cdll, name)
                    except AttributeError:
                        raise LibraryError(f"{cand}: missing symbol {name}; this {stem} is "
                                           f"older than the SDK") from None
                    fn.restype = restype
                    fn.argtypes = argtypes
                    self.__dict__[name[len("polis_"):]] = fn
                self._companions[which] = cdll
                return cdll
            raise LibraryError(
                f"cannot load {stem}, which {needed_for} need; tried:\n  " +
                "\n  ".join(tried) + f"\nit is built and installed beside libpolis "
                f"({self.path})")

    def status_name(self, status):
        s = self.status_str(status)
        return s.decode() if s else "unknown status"


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loaded_path(cdll, name):
    """The file the dynamic loader picked for a bare name (dladdr), so an installed
    library's prefix is known (bare scenario names are looked up under it); the name itself
    where dladdr is unavailable."""
    if os.sep in name:
        return name
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return name
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    addr = ctypes.cast(cdll.polis_version, ctypes.c_void_p)
    if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
        return os.fsdecode(info.dli_fname)
    return name


_cache = {}
_lock = threading.Lock()
_default = None


def _load_path(how, path):
    # A path with a directory part must exist as a file; bare names go to the loader.
    if os.sep in path and not os.path.exists(path):
        return None, f"{how}: {path}: no such file"
    try:
        cdll = ctypes.CDLL(path)
    except OSError as e:
        return None, f"{how}: {e}"
    return cdll, None


def load_library(path=None):
    """Loads (once per path) and returns the libpolis the SDK uses.

    ``path=None`` follows the discovery order of this module's docstring; the first library
    found becomes the default for envs created without ``library=``.
    """
    global _default
    with _lock:
        if path is None and _default is not None:
            return _default
        key = os.path.abspath(os.fspath(path)) if path else None
        if key in _cache:
            return _cache[key]
        tried = []
        for how, cand in find_library_candidates(path):
            cdll, why = _load_path(how, cand)
            if cdll is None:
                tried.append(why)
                continue
            lib = Library(cdll, _loaded_path(cdll, cand) if how == "system loader" else cand)
            if path is None:
                _default = lib
            else:
                _cache[key] = lib
            return lib
        raise LibraryError(
            "cannot load libpolis; tried:\n  " + "\n  ".join(tried) +
            "\nbuild it (cmake -S . -B build && cmake --build build), install it, or set "
            "$POLIS_LIBRARY to the path of libpolis.so")
