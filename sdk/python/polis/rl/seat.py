"""``python3 -m polis.rl.seat SPEC``: a policy process speaking polis's seat protocol on stdin
and stdout (docs/policies.md), so a checkpoint or any Python policy plays seats of ``polis eval``,
``polis sweep`` and ``polis serve --http`` (``--seat AGENT=py:SPEC``).

SPEC is ``polis.rl.policy.load_policy``'s: a checkpoint file, ``random``, ``noop``,
``first_legal`` or ``module:factory``, with ``?key=value`` options.

The protocol, in short (the host speaks first; every message is one JSON line, an ``act``
line followed by the binary rows it announces; every reply is one JSON line):

    hello  {"op":"hello","protocol":1,"revision":1,"scenario","agents","actions","obs_fields",
            "obs_dim","n_actions","shared_fields","shared_size"}
                                                        -> {"ok":true,"name":...,"views":["flat"]}
    reset  {"op":"reset","episode":E,"seed":S,"seats":[...]}            -> {"ok":true}
    act    {"op":"act","tick":T,"seats":[...],"obs_bytes":N,"mask_bytes":M[,"shared_bytes":S]}
           + N bytes: float32 little-endian [k][obs_dim] + M bytes: uint8 [k][n_actions]
           + S bytes: the env's shared fields (view "shared", revision 1)
                                                        -> {"ok":true,"actions":[...]}
    end    {"op":"end","episode":E,"seed":S,"seats":[...]}    (only when hello said "stats")
                            -> {"ok":true,"stats":{NAME: number|null},"per_seat":[{...}, ...]}
    close  {"op":"close"}                                -> {"ok":true}, and the process exits

A policy with an ``episode_stats(seats)`` method reports figures of each episode (an LLM's
tokens, calls, seconds and dollars): its hello reply says ``"stats": true`` and ``polis eval``
and ``polis sweep`` send ``end`` after every episode it played, adding the figures to the
episode's metrics. A policy whose ``wants_seats`` or ``stateful`` is true (a RecPPO checkpoint
keeps an LSTM state per seat) is called ``act(..., seats=[ids])`` with the agent ids of the rows.

A policy whose ``views`` holds ``"shared"`` is called ``act(..., shared={name: array})`` with
the env's shared observation fields (values every agent sees alike, held once per env: a
Lua game's ``polis.shared_observation``, the social plugin's ``social_state: "shared"``), each
an array of the field's shape and dtype; its ``needs_shared`` (names) are checked at hello, and a
host of revision 0 (polis 0.8), which cannot send them, is refused by name.

A failure is ``{"ok":false,"error":"..."}``; the host stops and prints it.
"""

from __future__ import annotations

import json
import sys
import traceback

import numpy as np

PROTOCOL = 1
REVISION = 1  # revision 1: shared observation fields (docs/policies.md, "The seat protocol")
_DTYPES = {"u8": "u1", "i8": "i1", "i16": "<i2", "i32": "<i4", "f32": "<f4"}


class SeatServer:
    """Serves one host over two binary streams."""

    def __init__(self, policy, rd, wr):
        self.policy, self.rd, self.wr = policy, rd, wr
        self.spec = None
        self.views = ["flat"]
        self.shared_fields = ()  # (name, dtype, shape, offset) of hello's shared_fields
        self.shared_size = 0

    def reply(self, obj):
        self.wr.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        self.wr.flush()

    def read_exact(self, n):
        chunks, got = [], 0
        while got < n:
            b = self.rd.read(n - got)
            if not b:
                raise EOFError(f"the host closed the stream {n - got} bytes into a payload")
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)

    def hello(self, msg):
        from .policy import EnvSpec, PolicyMismatch
        if msg.get("protocol") != PROTOCOL:
            return {"ok": False, "error": f"seat protocol {msg.get('protocol')!r}; this "
                                          f"polis.rl.seat speaks {PROTOCOL}"}
        try:
            fields = tuple((f["name"], tuple(f["shape"])) for f in msg["obs_fields"])
            self.spec = EnvSpec(msg["scenario"], tuple(msg["agents"]), tuple(msg["actions"]),
                                fields, int(msg["obs_dim"]))
        except (KeyError, TypeError, ValueError) as e:
            return {"ok": False, "error": f"hello: malformed ({e})"}
        try:
            self.policy.check(self.spec)
        except PolicyMismatch as e:
            return {"ok": False, "error": str(e)}
        self.views = list(getattr(self.policy, "views", ("flat",)))
        if "shared" in self.views:
            why = self._shared_hello(msg)
            if why:
                return {"ok": False, "error": why}
        hi = {"ok": True, "name": getattr(self.policy, "name", "policy"), "views": self.views}
        if callable(getattr(self.policy, "episode_stats", None)):
            hi["stats"] = True
        return hi

    def _shared_hello(self, msg):
        """Reads hello's shared fields for a policy that asked for them; the reason to refuse
        the env, or None."""
        rev = msg.get("revision", 0)
        if not isinstance(rev, int) or rev < 1:
            return (f"this policy reads shared observation fields, which the host cannot send "
                    f"(seat protocol {PROTOCOL} revision {rev!r}; they came in revision 1, "
                    f"polis 0.9)")
        try:
            self.shared_fields = tuple((f["name"], np.dtype(_DTYPES[f["dtype"]]),
                                        tuple(int(d) for d in f["shape"]), int(f["offset"]))
                                       for f in msg["shared_fields"])
            self.shared_size = int(msg["shared_size"])
        except (KeyError, TypeError, ValueError) as e:
            return f"hello: malformed shared_fields ({e!r})"
        have = [f[0] for f in self.shared_fields]
        for name in getattr(self.policy, "needs_shared", ()):
            if name not in have:
                return (f"the env {self.spec.scenario} has no shared observation field "
                        f"{name!r} (its shared fields: {', '.join(have) or 'none'})")
        return None

    def _shared_views(self, raw):
        """{name: array of the field's shape} over the shared bytes of an act."""
        out = {}
        for name, dt, shape, off in self.shared_fields:
            n = int(np.prod(shape))
            out[name] = np.frombuffer(raw, dtype=dt, count=n, offset=off).reshape(shape)
        return out

    def end(self, msg):
        """The figures of the episode that ended: the policy's totals, and each seat's in the
        order of the request's seats."""
        seats = [int(x) for x in msg.get("seats", [])]
        stats = getattr(self.policy, "episode_stats", None)
        if not callable(stats):
            return {"ok": False, "error": "end: this policy reports no figures"}
        totals, per_seat = stats(seats)
        per_seat = per_seat or {}
        return {"ok": True, "stats": _plain(totals),
                "per_seat": [_plain(per_seat.get(s, {})) for s in seats]}

    def act(self, msg):
        seats = msg["seats"]
        k, a = len(seats), len(self.spec.actions)
        d = self.spec.obs_dim if "flat" in self.views else 0
        nb, mb = int(msg["obs_bytes"]), int(msg["mask_bytes"])
        sb = int(msg.get("shared_bytes", 0))
        want_sb = self.shared_size if "shared" in self.views else 0
        if nb != k * d * 4 or mb != k * a or sb != want_sb:
            # the payload is read anyway, so the stream stays in step
            self.read_exact(nb + mb + sb)
            if not sb and not want_sb:
                return {"ok": False, "error": f"act: {nb} observation bytes and {mb} mask bytes "
                                              f"for {k} seats; expected {k * d * 4} and {k * a}"}
            return {"ok": False, "error": f"act: {nb} observation bytes, {mb} mask bytes and "
                                          f"{sb} shared bytes for {k} seats; expected "
                                          f"{k * d * 4}, {k * a} and {want_sb}"}
        raw = self.read_exact(nb + mb + sb)
        obs = np.frombuffer(raw, dtype="<f4", count=k * d).reshape(k, d)
        mask = np.frombuffer(raw, dtype=np.uint8, count=k * a, offset=nb).reshape(k, a)
        kw = {}
        if "shared" in self.views:
            kw["shared"] = self._shared_views(raw[nb + mb:])
        if "text" in self.views:
            kw["text"] = msg.get("text")
        # a policy with memory per seat (a RecPPO checkpoint) or one that books per seat (an
        # LLM's costs) is told whose rows these are
        if getattr(self.policy, "wants_seats", False) or getattr(self.policy, "stateful", False):
            kw["seats"] = [int(x) for x in seats]
        acts = self.policy.act(obs if d or "text" not in self.views else None, mask, **kw)
        return {"ok": True, "actions": [int(x) for x in acts]}

    def serve(self):
        while True:
            line = self.rd.readline()
            if not line:
                return 0
            if not line.strip():
                continue
            try:
                msg = json.loads(line.decode("utf-8"))
                op = msg.get("op")
                if op == "hello":
                    r = self.hello(msg)
                elif self.spec is None:
                    if op == "act":  # keep the stream in step: its payload follows
                        self.read_exact(sum(int(msg.get(key, 0)) for key in
                                            ("obs_bytes", "mask_bytes", "shared_bytes")))
                    r = {"ok": False, "error": f"{op}: send hello first"}
                elif op == "act":
                    r = self.act(msg)
                elif op == "end":
                    r = self.end(msg)
                elif op == "reset":
                    self.policy.reset(list(msg.get("seats", [])))
                    r = {"ok": True}
                elif op == "close":
                    try:
                        self.reply({"ok": True})
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the host need not read the reply to close
                    return 0
                else:
                    r = {"ok": False, "error": f"unknown op {op!r} (hello, reset, act, end, close)"}
            except (EOFError, BrokenPipeError, ConnectionResetError):
                return 0
            except Exception as e:  # the host shows it and stops: say what failed
                traceback.print_exc(file=sys.stderr)
                r = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            try:
                self.reply(r)
            except (BrokenPipeError, ConnectionResetError):
                return 0  # the host is gone


def _plain(figures):
    """A dict of figures with numpy scalars made plain numbers, for json (the host checks
    the values)."""
    return {str(k): v.item() if hasattr(v, "item") else v for k, v in dict(figures or {}).items()}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    from .policy import PolicyError, load_policy
    rd, wr = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed by a policy can corrupt the protocol stream
    try:
        policy = load_policy(argv[0])
    except PolicyError as e:
        # answer the hello with the reason, so the host names it
        line = rd.readline()
        if line:
            wr.write(json.dumps({"ok": False, "error": str(e)}).encode() + b"\n")
            wr.flush()
        print(f"polis.rl.seat: {e}", file=sys.stderr)
        return 1
    return SeatServer(policy, rd, wr).serve()


if __name__ == "__main__":
    sys.exit(main())
