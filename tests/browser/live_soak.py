#!/usr/bin/env python3
"""tests/browser/live_soak.py POLIS SRCDIR SECONDS [IDLE] — the live server's soak, run by hand
(not under CTest: it takes minutes), whose figures docs/security.md ("Live servers") quotes.
`live_soak.py POLIS SRCDIR idle` measures idle connections alone instead: 5,000 on the --tcp
port, then 5,000 watchers, then 5,000 idle HTTP connections, and 10 s later.

One `polis serve gather --http 127.0.0.1:0 --tcp 127.0.0.1:0` plays flat out (every seat but
one a policy; the client seat's "advance" requests keep it going) for SECONDS while, all at
once:
  - a page follows the stream and a new page joins every 30 s (and reads what it is sent);
  - a TCP client sends requests and never reads a reply;
  - 60 pages open the stream and never read it;
  - IDLE (default 3000) connections are opened and left idle, half on each port;
and the server's resident memory (VmRSS) is printed every 10 s, with how many ticks were
played. Everything on 127.0.0.1. Prints a table; exits 1 only when the server dies.
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wsclient import WS  # noqa: E402

POLIS, SRC = sys.argv[1], sys.argv[2]
GATHER = os.path.join(SRC, "rulesets", "gather", "gather.json")


def idle_only():
    from wsclient import serve_live
    p, port, tcp = serve_live(POLIS, GATHER, "--seat", "agent_0=client", "--tcp", "127.0.0.1:0",
                              "--tick-ms", "100")
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    figures = [rss_mb(p.pid)]
    conns = [socket.create_connection(("127.0.0.1", tcp)) for _ in range(5000)]
    time.sleep(2)
    figures.append(rss_mb(p.pid))
    for c in conns:
        c.close()
    time.sleep(1)
    pages = []
    for _ in range(5000):
        try:
            pages.append(WS(port, "polis-follow"))
        except (EOFError, ConnectionError, RuntimeError):
            pass
    time.sleep(2)
    figures.append(rss_mb(p.pid))
    http = [socket.create_connection(("127.0.0.1", port)) for _ in range(5000)]
    time.sleep(2)
    figures.append(rss_mb(p.pid))
    time.sleep(10)
    figures.append(rss_mb(p.pid))
    print("%s: RSS MB: start %.1f; 5000 idle TCP clients %.1f; 5000 watchers (%d admitted) %.1f; "
          "5000 idle HTTP connections %.1f; 10 s later %.1f"
          % (POLIS, figures[0], figures[1], len(pages), figures[2], figures[3], figures[4]))
    p.terminate()
    p.wait()
    del http


IDLE = int(sys.argv[4]) if len(sys.argv) > 4 else 3000


def rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return -1.0


if sys.argv[3] == "idle":
    idle_only()
    sys.exit(0)
SECONDS = float(sys.argv[3])
# room for the 60 pages that do not read (a polis before the limits has no --max-pages)
helptext = subprocess.run([POLIS, "serve", GATHER, "--http", "0", "--help"], capture_output=True,
                          text=True).stdout
extra = ["--max-pages", "200"] if "--max-pages" in helptext else []
p = subprocess.Popen([POLIS, "serve", GATHER, "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0",
                      "--seat", "agent_0=client", "--set", "max_steps=100000", *extra],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
url = p.stdout.readline().strip()
tcp_line = p.stdout.readline().strip()
port = int(url.split(":")[2].split("/")[0])
tcp = int(tcp_line.rsplit(":", 1)[1])
errs = []
threading.Thread(target=lambda: errs.extend(p.stderr), daemon=True).start()
stop = threading.Event()
ticks = [0]


def player():
    """The client seat: "advance" over and over, so the game never waits for it."""
    s = socket.create_connection(("127.0.0.1", tcp))
    f = s.makefile("rwb")
    played = 0  # ticks of the episodes before this one
    op = b'{"op":"reset"}\n'
    while not stop.is_set():
        f.write(op)
        f.flush()
        line = f.readline()
        if not line:
            return
        r = json.loads(line)
        ticks[0] = played + r.get("tick", 0)
        # a new episode needs a reset to join it
        op = b'{"op":"reset"}\n' if r.get("done") or not r.get("ok") else \
            b'{"op":"advance","max_ticks":10000}\n'
        if r.get("done"):
            played = ticks[0]


def follower():
    """A page that follows and reads everything."""
    while not stop.is_set():
        try:
            w = WS(port, "polis-follow")
            while not stop.is_set():
                try:
                    if w.recv(1.0) is None:
                        break
                except TimeoutError:
                    pass
        except (EOFError, ConnectionError, RuntimeError):
            time.sleep(0.5)


def joiner():
    """A page that joins every 30 s and reads what it is sent for 5 s."""
    while not stop.wait(30):
        try:
            w = WS(port, "polis-follow")
            end = time.time() + 5
            while time.time() < end:
                try:
                    w.recv(1.0)
                except TimeoutError:
                    pass
            w.close()
        except (EOFError, ConnectionError, RuntimeError):
            pass


def deaf_client():
    """A TCP client that asks and never reads (reconnects when dropped)."""
    req = b'{"op":"describe"}\n' * 100
    while not stop.is_set():
        try:
            c = socket.create_connection(("127.0.0.1", tcp), timeout=2)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            while not stop.is_set():
                c.sendall(req)
        except OSError:
            time.sleep(0.2)


threads = [threading.Thread(target=t, daemon=True) for t in (player, follower, joiner, deaf_client)]
for t in threads:
    t.start()
deaf_pages = []
for _ in range(60):
    try:
        w = WS(port, "polis-follow")
        w.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf_pages.append(w)
    except (EOFError, ConnectionError, RuntimeError):
        pass
idle = []
for i in range(IDLE):
    try:
        idle.append(socket.create_connection(("127.0.0.1", port if i % 2 else tcp), timeout=5))
    except OSError:
        break
print("soak: %s, %d s: 1 page following, 1 joining every 30 s, 1 TCP client not reading, "
      "%d pages not reading, %d idle connections" % (POLIS, SECONDS, len(deaf_pages), len(idle)))
print("%6s %10s %10s" % ("time s", "RSS MB", "ticks"))
t0 = time.time()
while time.time() - t0 < SECONDS and p.poll() is None:
    print("%6.0f %10.1f %10d" % (time.time() - t0, rss_mb(p.pid), ticks[0]), flush=True)
    time.sleep(10)
print("%6.0f %10.1f %10d" % (time.time() - t0, rss_mb(p.pid), ticks[0]), flush=True)
alive = p.poll() is None
stop.set()
p.terminate()
try:
    p.wait(30)
except subprocess.TimeoutExpired:
    p.kill()
dropped = sum("dropped" in e for e in errs)
print("server %s; %d connections dropped (%d refused)" %
      ("alive to the end" if alive else "DIED", dropped, sum("refused" in e for e in errs)))
sys.exit(0 if alive else 1)
