"""The exception hierarchy: one class per ``polis_status``, all under ``PolisError``.

Each carries ``status`` (the C status code), ``status_name`` (``polis_status_str``) and
``message`` (the env's message, with its place: JSON path, agent, tick). ``str(e)`` is the
message. Classes also derive from the built-in exception a Python caller would catch for
that kind of failure (``ValueError`` for bad arguments and actions, ``RuntimeError`` for
lifecycle errors, ``OSError`` for unreadable files, ``MemoryError``, ``KeyError`` for an
unknown agent), so generic handlers keep working.
"""

OK = 0
INVALID = 1
NOMEM = 2
CONFIG = 3
PLUGIN = 4
SCRIPT = 5
STATE = 6
IO = 7
LIMIT = 8
ACTION = 9
FFI = 10

STATUS_NAMES = {
    OK: "ok", INVALID: "invalid argument", NOMEM: "out of memory", CONFIG: "config error",
    PLUGIN: "plugin error", SCRIPT: "script error", STATE: "wrong state", IO: "i/o error",
    LIMIT: "limit exceeded", ACTION: "bad action", FFI: "foreign call error",
}


class PolisError(Exception):
    """Base class. ``status`` is the ``polis_status`` value (None for SDK-side failures with
    no C status, such as a missing library)."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message

    @property
    def status_name(self):
        return STATUS_NAMES.get(self.status, "unknown status")

    def __str__(self):
        return self.message


class InvalidArgumentError(PolisError, ValueError):
    status = INVALID


class OutOfMemoryError(PolisError, MemoryError):
    status = NOMEM


class ConfigError(PolisError, ValueError):
    status = CONFIG


class PluginError(PolisError):
    status = PLUGIN


class ScriptError(PolisError):
    status = SCRIPT


class StateError(PolisError, RuntimeError):
    status = STATE


class PolisIOError(PolisError, OSError):
    status = IO

    def __init__(self, message, status=None):
        # OSError's own constructor would reinterpret (errno, strerror) argument pairs.
        PolisError.__init__(self, message, status)


class LimitError(PolisError):
    status = LIMIT


class ActionError(PolisError, ValueError):
    status = ACTION


class FFIError(PolisError):
    status = FFI


class UnknownAgentError(InvalidArgumentError, KeyError):
    """An agent name (or id) the env does not have. Also a ``KeyError``."""


class LibraryError(PolisError, OSError):
    """libpolis could not be found or loaded, or lacks a symbol the SDK needs."""

    def __init__(self, message):
        PolisError.__init__(self, message)


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, ConfigError, PluginError, ScriptError, StateError,
    PolisIOError, LimitError, ActionError, FFIError)}


def error_for(status, message):
    """The exception for a non-OK status with the env's message."""
    cls = _BY_STATUS.get(status, PolisError)
    return cls(message or STATUS_NAMES.get(status, f"status {status}"), status)
