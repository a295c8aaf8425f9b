"""polis serve --tcp cannot be starved: idle and trickling clients are dropped after
--idle-timeout, a client that does not read is dropped after --write-timeout, a request line
without end is refused with the server's memory bounded, and under --isolate a plugin crash
ends one session while the others go on (without --isolate it ends the server: plugins are
trusted code).

usage: serve_limits.py POLIS SOURCE_DIR TEST_PLUGIN_DIR TMP_DIR   (stdlib only)

Every client is on 127.0.0.1, every loop is bounded in count and time, and every server is
killed at the end of its part.
"""
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time

TIMEOUT = 20.0  # any single wait; a part never takes this long when polis is right


def check(cond, what):
    if not cond:
        raise AssertionError(what)


class Server:
    """A `polis serve --tcp 127.0.0.1:0` process whose log (stderr) is collected."""

    def __init__(self, polis, scenario, *options):
        self.proc = subprocess.Popen([polis, "serve", scenario, "--tcp", "127.0.0.1:0"]
                                     + list(options),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        line = self.proc.stderr.readline().decode()
        prefix = "polis serve: listening on 127.0.0.1:"
        check(line.startswith(prefix), "server said %r" % line)
        self.port = int(line[len(prefix):])
        self.log = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._collect, daemon=True)
        self.reader.start()

    def _collect(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.log.append(raw.decode(errors="replace").rstrip("\n"))

    def wait_log(self, *parts):
        """The first log line holding every part, waiting a bounded time for it."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            with self.lock:
                for line in self.log:
                    if all(p in line for p in parts):
                        return line
            time.sleep(0.05)
        with self.lock:
            raise AssertionError("no log line with %r; the log: %r" % (parts, self.log))

    def memory_kib(self, field):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise AssertionError("no %s in /proc/%d/status" % (field, self.proc.pid))

    def children(self):
        path = "/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return [int(p) for p in f.read().split()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        self.reader.join(timeout=TIMEOUT)
        self.proc.stderr.close()


class Client:
    def __init__(self, port, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def send_raw(self, data):
        self.sock.sendall(data)

    def read(self):
        """The next reply, or None when the server closed (or reset) the connection."""
        try:
            line = self.file.readline()
        except ConnectionResetError:
            return None
        return json.loads(line) if line else None

    def ask(self, request):
        self.send_raw((json.dumps(request) + "\n").encode())
        reply = self.read()
        check(reply is not None, "the server closed the connection on %r" % (request,))
        return reply

    def close(self):
        self.file.close()
        self.sock.close()


def served(port):
    """A new client that the server serves (not refused as full)."""
    c = Client(port)
    r = c.ask({"op": "describe"})
    check(r["ok"], "a new client is not served: %r" % (r,))
    return c


def served_once_freed(port):
    """A new client served once a dropped client's seat is free. The server logs a drop just
    before it frees the seat, so a client that connects right after the log line may still be
    refused as full: retry that (and only that) until TIMEOUT."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        c = Client(port)
        try:
            r = c.ask({"op": "describe"})
        except (ConnectionResetError, BrokenPipeError, AssertionError):
            r = None  # refused and closed before our request was read
        if r is not None and r.get("ok"):
            return c
        c.close()
        check(r is None or r["error"]["code"] == "server_full",
              "a new client is not served: %r" % (r,))
        check(time.monotonic() < deadline, "a dropped client's seat was not freed in %g s" % TIMEOUT)
        time.sleep(0.05)


def refused_full(port):
    c = Client(port)
    r = c.read()
    check(r is not None and r["error"]["code"] == "server_full", "not refused as full: %r" % (r,))
    check(c.read() is None, "a refused client is disconnected")
    c.close()


# ---- 1. idle and trickling clients are dropped; an active client is not -----------------------

def idle_clients(polis, gather):
    srv = Server(polis, gather, "--max-clients", "3", "--idle-timeout", "2")
    try:
        connected = time.monotonic()
        silent = Client(srv.port)          # connects and sends nothing
        trickle = Client(srv.port)         # sends a byte now and then, never a newline
        busy = Client(srv.port)            # a request every 0.25 s: never idle for 2 s
        check(busy.ask({"op": "reset", "seed": 2})["ok"], "busy reset")
        refused_full(srv.port)             # the three fill the server
        trickle_open = True
        for i in range(20):                # 5 s
            if trickle_open:
                try:
                    trickle.send_raw(b'{"op": "describe"'[i % 17:i % 17 + 1])
                except OSError:
                    trickle_open = False
            r = busy.ask({"op": "step", "actions": {}})
            check(r["ok"] and r["tick"] == i + 1, "the busy client was disturbed: %r" % (r,))
            if time.monotonic() - connected < 1.5:
                # not dropped before its time: nothing to read yet
                readable = select.select([silent.sock], [], [], 0)[0]
                check(not readable, "the silent client was dropped before 2 s")
            time.sleep(0.25)
        # the silent and the trickling client were told and dropped after about 2 s
        for c in (silent, trickle):
            r = c.read()
            check(r is not None and r["error"]["code"] == "idle_timeout" and
                  "no complete request in 2 s" in r["error"]["message"],
                  "an idle client was not told: %r" % (r,))
            check(c.read() is None, "an idle client is disconnected")
            c.close()
        line = srv.wait_log("client 1 (127.0.0.1:", "dropped: no complete request in 2 s",
                            "(--idle-timeout)")
        srv.wait_log("client 2 (127.0.0.1:", "dropped: no complete request in 2 s")
        with srv.lock:
            check(not any("client 3 " in l for l in srv.log), "the busy client was dropped")
        # their seats are free: new clients are served, the busy one still is
        d = served_once_freed(srv.port)
        e = served_once_freed(srv.port)
        check(busy.ask({"op": "step", "actions": {}})["tick"] == 21, "busy after")
        for c in (busy, d, e):
            c.close()
        check(srv.proc.poll() is None, "the server exited")
        print("idle clients: dropped after the idle timeout (%s); new clients served" % line)
    finally:
        srv.stop()


# ---- 2. a client that does not read is dropped after the write timeout ------------------------

def non_reading_client(polis, gather):
    srv = Server(polis, gather, "--max-clients", "2", "--write-timeout", "2")
    try:
        reader = served(srv.port)
        check(reader.ask({"op": "reset", "seed": 4})["ok"], "reader reset")
        # Requests whose replies are large (the id is echoed), sent without ever reading, to
        # a client with a small receive buffer: the server's write stalls, it stops reading,
        # and our sends stall too. That is the state the write timeout ends.
        stuck = Client(srv.port, rcvbuf=4096)
        stuck.sock.settimeout(1.0)
        request = (json.dumps({"op": "describe", "id": "x" * (256 << 10)}) + "\n").encode()
        sent = 0
        for _ in range(400):               # at most 100 MiB; it stalls after a few MiB
            try:
                stuck.sock.sendall(request)
            except socket.timeout:
                break
            sent += 1
        else:
            raise AssertionError("the server read %d large requests without a reply taken" % sent)
        # stalled in a write: the other client is served meanwhile
        for t in range(1, 4):
            check(reader.ask({"op": "step", "actions": {}})["tick"] == t, "reader step")
        line = srv.wait_log("client 2 (127.0.0.1:",
                            "dropped: a reply was not taken within 2 s (--write-timeout)")
        # its seat is free: a new client is served while the reader still is
        third = served_once_freed(srv.port)
        check(reader.ask({"op": "step", "actions": {}})["tick"] == 4, "reader after")
        # the dropped client's connection is gone (reset, or closed after what was sent)
        stuck.sock.settimeout(TIMEOUT)
        try:
            while stuck.sock.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
        stuck.close()
        for c in (reader, third):
            c.close()
        check(srv.proc.poll() is None, "the server exited")
        print("non-reading client: dropped after %d requests (%s)" % (sent, line))
    finally:
        srv.stop()


# ---- 3. a line without end: refused, the server's memory bounded ------------------------------

def endless_line(polis, gather):
    srv = Server(polis, gather)
    try:
        c = served(srv.port)
        before = srv.memory_kib("VmRSS")
        chunk = b"x" * (1 << 20)
        total = 256 << 20                 # 256 MiB without a newline
        for _ in range(total // len(chunk)):
            c.send_raw(chunk)
        # once the server has read it all, its peak memory is what it is going to be
        r = c.ask({"op": "describe"})     # completes the line: "x...x{...}"
        check(not r["ok"] and r["error"]["code"] == "line_too_long", "huge line: %r" % (r,))
        n = total + len(json.dumps({"op": "describe"}))
        check(r["error"]["message"] == "the request is %d bytes; the limit is 1048576" % n,
              "huge line message: %r" % (r["error"]["message"],))
        peak = srv.memory_kib("VmHWM")
        grew = (peak - before) / 1024.0
        check(grew < 16, "the server grew by %.1f MiB reading a 256 MiB line" % grew)
        # the connection goes on
        check(c.ask({"op": "reset", "seed": 1})["ok"], "after the huge line")
        c.close()
        print("endless line: 256 MiB refused, server peak memory +%.1f MiB" % grew)
    finally:
        srv.stop()


def endless_line_stdio(polis, gather):
    """The same limit over --stdio, with the edges: a line of exactly the limit before
    "\r\n" is parsed, one byte more is refused; a last line without a newline counts."""
    proc = subprocess.Popen([polis, "serve", gather, "--stdio"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def reply():
            line = proc.stdout.readline()
            check(line, "no reply")
            return json.loads(line)

        def memory_kib(field):
            with open("/proc/%d/status" % proc.pid) as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
            raise AssertionError("no %s" % field)

        proc.stdin.write(b'{"op": "describe"}\n')
        proc.stdin.flush()
        check(reply()["ok"], "describe")
        before = memory_kib("VmRSS")
        proc.stdin.write(b"x" * (1 << 20) + b"\r\n")
        proc.stdin.flush()
        r = reply()
        check(r["error"]["code"] == "bad_json", "a line at the limit is parsed: %r" % (r,))
        proc.stdin.write(b"x" * ((1 << 20) + 1) + b"\r\n")
        proc.stdin.flush()
        r = reply()
        check(r["error"]["message"] == "the request is 1048577 bytes; the limit is 1048576",
              "one byte over: %r" % (r,))
        chunk = b"y" * (1 << 20)
        for _ in range(256):
            proc.stdin.write(chunk)
        proc.stdin.write(b"\n")
        proc.stdin.flush()
        r = reply()
        check(r["error"]["message"] == "the request is %d bytes; the limit is 1048576"
              % (256 << 20), "huge line: %r" % (r,))
        grew = (memory_kib("VmHWM") - before) / 1024.0
        proc.stdin.write(b'{"op": "describe"}')
        proc.stdin.close()  # the end of the input ends the last line
        check(reply()["op"] == "describe", "the last line without a newline")
        check(proc.stdout.readline() == b"", "a reply after the end")
        check(proc.wait(timeout=TIMEOUT) == 0, "exit status %r" % proc.returncode)
        check(grew < 16, "the server grew by %.1f MiB reading a 256 MiB line" % grew)
        check(proc.stderr.read() == b"", "stderr")
        print("endless line over stdio: refused, server peak memory +%.1f MiB" % grew)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
        proc.stdout.close()
        proc.stderr.close()


# ---- 4. a plugin crash: one session under --isolate, the whole server without -----------------

def crash_scenario(tmp):
    path = os.path.join(tmp, "crash.json")
    with open(path, "w") as f:
        json.dump({"polis": 1, "name": "crash", "seed": 1, "max_steps": 20, "agents": 2,
                   "plugins": ["crasher"]}, f)
    return path


def isolated_crash(polis, scenario, plugins):
    srv = Server(polis, scenario, "--plugin-path", plugins, "--isolate", "--max-clients", "2")
    try:
        a = served(srv.port)
        b = served(srv.port)
        refused_full(srv.port)
        check(a.ask({"op": "reset"})["ok"] and b.ask({"op": "reset"})["ok"], "resets")
        check(a.ask({"op": "step", "actions": {"agent_0": "count"}})["tick"] == 1, "a 1")
        # b's plugin crashes: b is told in place of the reply, then disconnected
        r = b.ask({"op": "step", "actions": {"agent_1": "crash"}})
        check(not r["ok"] and r["error"]["code"] == "session_crashed", "crash reply: %r" % (r,))
        check("was killed by signal 11" in r["error"]["message"], "crash message: %r" % (r,))
        check(b.read() is None, "the crashed session's connection is closed")
        b.close()
        line = srv.wait_log("client 2 (127.0.0.1:", "was killed by signal 11",
                            "the other clients go on")
        # a's session goes on to the end of its episode and closes normally
        r = a.ask({"op": "advance", "max_ticks": 100})
        check(r["ok"] and r["done"] and r["tick"] == 20 and r["stopped"] == "episode_done",
              "a's episode: %r" % (r,))
        check(a.ask({"op": "close"}) == {"ok": True, "op": "close"}, "a close")
        check(a.read() is None, "closed after close")
        a.close()
        # both seats are free again (a's once its session process is reaped: retried while
        # the server still counts it, as after any drop)
        c = served_once_freed(srv.port)
        d = served_once_freed(srv.port)
        check(c.ask({"op": "reset"})["tick"] == 0, "c reset")
        kids = srv.children()
        check(kids is None or len(kids) == 2, "session processes: %r" % (kids,))
        check(srv.proc.poll() is None, "the server exited")
        with srv.lock:
            check(not any("client 1 " in l for l in srv.log), "client 1 was reported")
        srv.stop()
        # the sessions end with the server
        deadline = time.monotonic() + TIMEOUT
        while kids and any(os.path.exists("/proc/%d" % k) for k in kids):
            check(time.monotonic() < deadline, "session processes outlive the server")
            time.sleep(0.05)
        for x in (c, d):
            check(x.read() is None, "a session outlived the server")
            x.close()
        print("isolated crash: %s" % line)
    finally:
        srv.stop()


def threaded_crash(polis, scenario, plugins):
    srv = Server(polis, scenario, "--plugin-path", plugins)
    try:
        a = served(srv.port)
        b = served(srv.port)
        check(a.ask({"op": "reset"})["ok"] and b.ask({"op": "reset"})["ok"], "resets")
        b.send_raw(b'{"op": "step", "actions": {"agent_0": "crash"}}\n')
        srv.proc.wait(timeout=TIMEOUT)
        check(srv.proc.returncode == -11, "the server ended with %r" % srv.proc.returncode)
        check(a.read() is None and b.read() is None, "sessions outlived the server")
        a.close()
        b.close()
        print("threaded crash: the server died of signal 11, as documented")
    finally:
        srv.stop()


def main():
    polis, src, plugins, tmp = sys.argv[1:5]
    os.makedirs(tmp, exist_ok=True)
    gather = os.path.join(src, "rulesets", "gather", "gather.json")
    parts = sys.argv[5:] or ["idle", "write", "line", "isolate", "threads"]
    if "idle" in parts:
        idle_clients(polis, gather)
    if "write" in parts:
        non_reading_client(polis, gather)
    if "line" in parts:
        endless_line(polis, gather)
        endless_line_stdio(polis, gather)
    if "isolate" in parts:
        isolated_crash(polis, crash_scenario(tmp), plugins)
    if "threads" in parts:
        threaded_crash(polis, crash_scenario(tmp), plugins)
    print("serve_limits: ok")


if __name__ == "__main__":
    main()
