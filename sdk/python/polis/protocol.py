"""A client of the agent protocol, `polis serve` (docs/clients.md): JSON lines, one request
per line, one reply per line. Pure stdlib; it does not load libpolis.

    from polis.protocol import Client
    with Client.spawn("rulesets/gather/gather.json") as c:
        info = c.describe()                  # agents, actions, action_docs, macros, ...
        reply = c.reset(seed=3)
        while not reply["done"]:
            reply = c.step({"agent_0": "move north"})
        print(reply["metrics"])              # the figures `polis eval` reports

``Client.spawn`` starts ``polis serve SCENARIO --stdio`` (the binary from ``find_polis``);
``Client.connect`` talks to a ``polis serve --tcp`` server, or joins a live game's client
seats (``polis serve SCENARIO --http PORT --tcp PORT2 --seat AGENT=client``). A reply with ``"ok": false``
raises ``ProtocolError`` (its ``code``, ``message`` and ``agent``), except through
``request``, which returns every reply as it came.
"""

import json
import os
import shutil
import socket
import subprocess

__all__ = ["Client", "ProtocolError", "find_polis"]

_HERE = os.path.dirname(os.path.abspath(__file__))


class ProtocolError(Exception):
    """An error reply of the server: ``code`` ("bad_action", "illegal_action", "no_episode",
    ...; docs/clients.md lists them), ``message``, and ``agent`` (the agent it concerns, or
    None)."""

    def __init__(self, code, message, agent=None, reply=None):
        super().__init__(f"{code}: {message}" + (f" (agent {agent})" if agent else ""))
        self.code = code
        self.message = message
        self.agent = agent
        self.reply = reply


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_polis(polis=None, near=()):
    """The path of the `polis` binary. `polis` (a path, or a name looked up in PATH) wins;
    otherwise the first of: $POLIS_BIN; `polis` in each directory of `near` and in its
    build/ and ../build/ (an example run from the source tree); the build tree of the source
    checkout this SDK is in (build/polis); `polis` in PATH. Raises FileNotFoundError saying
    where it looked and how to fix it."""
    if polis:
        found = polis if os.sep in polis else shutil.which(polis)
        if found and _executable(found):
            return found
        raise FileNotFoundError(f"polis binary {polis!r} not found or not executable")
    looked = []
    env = os.environ.get("POLIS_BIN")
    if env:
        if _executable(env):
            return env
        looked.append(f"$POLIS_BIN={env}")
    root = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))
    candidates = []
    for d in near:
        candidates += [os.path.join(d, "polis"), os.path.join(d, "build", "polis"),
                       os.path.join(d, "..", "build", "polis")]
    candidates.append(os.path.join(root, "build", "polis"))
    for c in candidates:
        c = os.path.normpath(c)
        if _executable(c):
            return c
        if c not in looked:
            looked.append(c)
    found = shutil.which("polis")
    if found:
        return found
    looked.append("PATH")
    raise FileNotFoundError(
        "cannot find the polis binary (looked in: " + ", ".join(looked) + "). Build it "
        "(cmake -S . -B build && cmake --build build, which makes build/polis), then pass "
        "its path (--polis PATH in the examples, Client.spawn(..., polis=PATH)), set "
        "POLIS_BIN, or put it in PATH.")


class Client:
    """One session of the agent protocol. Use ``spawn`` or ``connect`` to make one."""

    def __init__(self, reader, writer, closer):
        self._reader, self._writer, self._closer = reader, writer, closer
        self.closed = False

    # ---- making one ----------------------------------------------------------------------

    @classmethod
    def spawn(cls, scenario, polis=None, on_bad_action="error", metrics=True,
              plugin_path=None, sets=(), near=(), stderr=None):
        """Starts ``polis serve SCENARIO --stdio`` and talks to it over its stdin/stdout.
        `sets` are --set overrides ("max_steps=50"); `metrics=False` passes --no-metrics;
        `stderr` goes to subprocess.Popen (default: inherited)."""
        exe = find_polis(polis, near)
        argv = [exe, "serve", str(scenario), "--stdio", "--on-bad-action", on_bad_action]
        if not metrics:
            argv.append("--no-metrics")
        if plugin_path:
            argv += ["--plugin-path", plugin_path]
        for s in sets:
            argv += ["--set", s]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, text=True, encoding="utf-8")

        def closer():
            try:
                proc.stdin.close()
            except OSError:
                pass  # the server is gone already
            try:
                proc.wait(timeout=30)
            finally:
                proc.stdout.close()

        c = cls(proc.stdout.readline, lambda s: (proc.stdin.write(s), proc.stdin.flush()),
                closer)
        c.process = proc
        return c

    @classmethod
    def connect(cls, host, port, timeout=None):
        """Connects to ``polis serve --tcp HOST:PORT`` (also with ``--http``: a live game,
        where ``reset`` takes the client seats)."""
        sock = socket.create_connection((host, port), timeout=timeout)
        rf = sock.makefile("r", encoding="utf-8", newline="\n")
        wf = sock.makefile("w", encoding="utf-8", newline="\n")

        def closer():
            try:
                wf.close()
                rf.close()
            finally:
                sock.close()

        return cls(rf.readline, lambda s: (wf.write(s), wf.flush()), closer)

    # ---- requests ------------------------------------------------------------------------

    def request(self, op, **members):
        """Sends {"op": op, **members} and returns the reply as it came (ok or not)."""
        if self.closed:
            raise ProtocolError("closed", "the client is closed")
        msg = dict(members, op=op)
        try:
            self._writer(json.dumps(msg) + "\n")
            line = self._reader()
        except (BrokenPipeError, ConnectionError, OSError) as e:
            raise ProtocolError("disconnected",
                                f"the server went away ({e}){self._exit_status()}") from e
        if not line:
            raise ProtocolError("disconnected", "the server closed the connection" +
                                self._exit_status())
        return json.loads(line)

    def _exit_status(self):
        """" (exit status N)" for a spawned server that ended (its stderr says why)."""
        proc = getattr(self, "process", None)
        if proc is None:
            return ""
        try:
            return f" (exit status {proc.wait(timeout=5)})"
        except subprocess.TimeoutExpired:
            return ""

    def call(self, op, **members):
        """Like request, but an error reply raises ProtocolError."""
        reply = self.request(op, **members)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            raise ProtocolError(err.get("code", "error"), err.get("message", ""),
                                err.get("agent"), reply)
        return reply

    def describe(self):
        """The scenario: agents, actions (names in id order) and action_docs (name: one-line
        doc), formats, default_seed, max_steps, on_bad_action, in_episode, macros."""
        return self.call("describe")

    def reset(self, seed=None, agents=None):
        """Starts an episode; the reply has each agent's observation, text and
        legal_actions. In a live game (``polis serve SCENARIO --http ... --tcp``) it joins
        the episode being played instead, taking the client seats named by `agents` (default:
        every free one) — the reply's "agents" are this client's; `seed` is the server's to
        choose there (docs/clients.md, "Live games")."""
        members = {} if seed is None else {"seed": seed}
        if agents is not None:
            members["agents"] = list(agents)
        return self.call("reset", **members)

    def step(self, actions=None):
        """One tick: `actions` maps agent names to an action id, name, text, JSON action or
        plan command; agents left out do noop (or follow their plan). The reply that ends
        the episode carries "metrics"."""
        return self.call("step", actions=actions or {})

    def advance(self, actions=None, max_ticks=None):
        """Ticks until a plan ends, the episode ends, or max_ticks (docs/clients.md,
        "Plans")."""
        extra = {} if max_ticks is None else {"max_ticks": max_ticks}
        return self.call("advance", actions=actions or {}, **extra)

    def close(self):
        """Sends "close" (when still connected) and ends the session. Idempotent."""
        if self.closed:
            return
        try:
            self.request("close")
        except (ProtocolError, ValueError):
            pass
        finally:
            self.closed = True
            self._closer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
