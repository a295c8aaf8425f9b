#!/usr/bin/env python3
"""tests/browser/live_limits.py POLIS SRCDIR TMPDIR PART — `polis serve SCENARIO --http` under
hostile clients (docs/security.md, "Live servers"), one PART per CTest test, each bounded in
time and count, on 127.0.0.1 only. The server's memory is read from /proc (VmRSS).

  stream   a game played flat out (every seat a policy) for a few seconds: the server's memory
           stays flat while a page follows every tick; a page that joins late is sent the
           header, the episode's reset line and the stream from its latest keyframe, not the
           history (the stream used to keep every line: ~27 MB/s)
  reader   a TCP client that sends requests and never reads its replies, and a page that never
           reads the stream: both dropped, the memory flat (it used to grow ~28 MB/s)
  conns    hundreds of idle connections on both ports, --max-clients and --max-pages: the
           memory stays small, the extra connections are refused, the game goes on
  timeouts --idle-timeout drops a TCP client that sends nothing (told "idle_timeout");
           --write-timeout drops a page that takes nothing
  access   Origin and Host on the WebSockets, the seat token, an HTTP request on the agent
           port, --http HOST forms (localhost, 127.1)
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wsclient import WS, serve_live, stop_live, take  # noqa: E402

POLIS, SRC, TMP, PART = sys.argv[1:5]
GATHER = os.path.join(SRC, "rulesets", "gather", "gather.json")
failures = []
# gcc's and clang's ASan keep freed memory in a quarantine (256 MiB by default), which a game
# that allocates per tick fills: a small one, so RSS shows what the server keeps
os.environ["ASAN_OPTIONS"] = (os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4").lstrip(":")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def rss_mb(p):
    with open("/proc/%d/status" % p.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def stop(p):
    rc, err = stop_live(p, 20)
    check(rc == 0, "polis serve --http exits 0 on SIGTERM (got %r): %s" % (rc, err[-800:]))
    return err


def lines_of(data):
    return [json.loads(l) for l in data.split(b"\n")[:-1]]


def read_until_closed(sock, timeout=10):
    """Everything the server sends on a plain socket until it closes (or timeout passes)."""
    sock.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionError):
        pass
    sock.close()
    return got


def read_for(ws, seconds):
    """What a page gets in that many seconds (b"" when the server closes)."""
    data = b""
    end = time.time() + seconds
    while time.time() < end:
        try:
            chunk = ws.recv(max(0.05, end - time.time()))
        except TimeoutError:
            continue
        except (EOFError, ConnectionError):
            break
        if chunk:
            data += chunk
    return data


os.makedirs(TMP, exist_ok=True)

if PART == "stream":
    # flat out: no human or client seat, so the game ticks as fast as it can; a keyframe every
    # 20 ticks, episodes long enough that a page joining late lands past tick 0
    p, port, _ = serve_live(POLIS, GATHER, "--set", "max_steps=100000", "--keyframe-every", "20",
                            "--record", os.path.join(TMP, "unused.jsonl.gz"))
    watch = WS(port, "polis-follow")
    data = read_for(watch, 1.5)
    r0 = rss_mb(p)
    samples = []
    for _ in range(10):
        data += read_for(watch, 0.5)
        samples.append(rss_mb(p))
    late = WS(port, "polis-follow")
    joined = b""
    deadline = time.time() + 10
    while joined.count(b"\n") < 4 and time.time() < deadline:
        try:
            joined += late.recv(1.0) or b""
        except TimeoutError:
            pass
    stream_bytes = len(data)
    ticks = [l["tick"] for l in lines_of(data) if l.get("t") == "step"]
    err = stop(p)
    print("stream: %d bytes followed in 6.5 s, %d steps; RSS %.1f MB -> %s MB%s"
          % (stream_bytes, len(ticks), r0, " ".join("%.1f" % s for s in samples),
             " (the page fell behind and was dropped)" if "fell too far behind" in err else ""))
    check(len(ticks) > 200, "the game runs flat out (%d steps seen)" % len(ticks))
    check(ticks == list(range(ticks[0], ticks[0] + len(ticks))) if ticks else False,
          "the page that follows gets every tick in order")
    check(max(samples) - r0 < 24, "the server's memory stays flat over 5 s of a flat-out game: "
          "%.1f MB -> %.1f MB (the stream used to keep every line)" % (r0, max(samples)))
    first = [l.get("t") for l in lines_of(joined)[:3]]
    key = lines_of(joined)[2] if len(lines_of(joined)) > 2 else {}
    check(first == ["header", "reset", "key"], "a late page starts with header, reset, key: %s" % first)
    check(key.get("tick", 0) > 0 and key.get("tick", 0) % 20 == 0,
          "a late page joins at the episode's latest keyframe, not at tick 0 (tick %s)" % key.get("tick"))
    head = joined.split(b"\n", 3)
    check(len(head[0]) + len(head[1]) < 64 * 1024,
          "what a late page is sent before the keyframe is the header and the reset line")

elif PART == "reader":
    p, port, tcp = serve_live(POLIS, GATHER, "--seat", "agent_0=client", "--tcp", "127.0.0.1:0",
                              "--write-timeout", "600")
    r0 = rss_mb(p)
    # a client that asks and asks and never reads: "describe" replies are a few KB each
    c = socket.create_connection(("127.0.0.1", tcp), timeout=10)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    req = (json.dumps({"op": "describe"}) + "\n").encode() * 200
    sent, peak = 0, r0
    # until the server drops it (a send fails), at most 30 s: a slow server (sanitizers, a
    # loaded machine) reads the requests more slowly, and a send that times out goes on
    end = time.time() + 30
    c.settimeout(0.5)
    while time.time() < end:
        try:
            c.sendall(req)
            sent += 200
        except socket.timeout:
            pass
        except (ConnectionError, BrokenPipeError):
            break
        peak = max(peak, rss_mb(p))
    peak = max(peak, rss_mb(p))
    c.close()
    # a page that never reads the stream of a game played flat out (no client seat here)
    q, qport, _ = serve_live(POLIS, GATHER, "--set", "max_steps=100000", "--write-timeout", "600")
    q0 = rss_mb(q)
    stuck = WS(qport, "polis-follow")
    stuck.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    qpeak = q0
    for _ in range(12):
        time.sleep(0.5)
        qpeak = max(qpeak, rss_mb(q))
    err = stop(p)
    qerr = stop(q)
    print("reader: %d requests sent unread; RSS %.1f -> peak %.1f MB; a page that does not read: "
          "%.1f -> peak %.1f MB" % (sent, r0, peak, q0, qpeak))
    check("dropped a TCP client: more than 1048576 bytes of replies it does not read" in err,
          "a client that does not read is dropped at the queue limit: %s" % err[-600:])
    check(peak - r0 < 24, "the server's memory stays flat under a client that never reads: "
          "%.1f -> %.1f MB" % (r0, peak))
    check("dropped a watching page: it fell too far behind the stream" in qerr,
          "a page that does not read is dropped once it falls behind: %s" % qerr[-600:])
    check(qpeak - q0 < 24, "the server's memory stays flat under a page that never reads: "
          "%.1f -> %.1f MB" % (q0, qpeak))

elif PART == "conns":
    p, port, tcp = serve_live(POLIS, GATHER, "--seat", "agent_0=client", "--tcp", "127.0.0.1:0",
                              "--tick-ms", "20", "--max-clients", "2", "--max-pages", "3")
    r0 = rss_mb(p)
    idle = []
    for i in range(400):
        idle.append(socket.create_connection(("127.0.0.1", port if i % 2 else tcp), timeout=10))
    time.sleep(1.0)
    r1 = rss_mb(p)
    pages = [WS(port, "polis-follow") for _ in range(2)]
    refused = 0
    for _ in range(3):
        try:
            pages.append(WS(port, "polis-follow"))
        except (RuntimeError, EOFError, ConnectionError, socket.timeout):
            refused += 1
    # the idle TCP connections took the two client places: the next one is told so
    reply = read_until_closed(socket.create_connection(("127.0.0.1", tcp), timeout=10), 5)
    # a page that follows still gets the game
    data = read_for(pages[0], 1.0)
    for s in idle:
        s.close()
    err = stop(p)
    print("conns: 400 idle connections: RSS %.1f -> %.1f MB; %d pages refused past --max-pages"
          % (r0, r1, refused))
    check(r1 - r0 < 24, "400 idle connections cost little: %.1f -> %.1f MB" % (r0, r1))
    check(refused == 2, "--max-pages 3: the 4th and 5th pages are refused (%d refused)" % refused)
    check(b'"server_full"' in reply, "--max-clients: a third client is told server_full: %r" % reply)
    check(b'"t":"step"' in data, "the game goes on for the page that follows")
    check("--max-pages" in err and "--max-clients" in err, "the refusals are logged: %s" % err[-600:])

elif PART == "timeouts":
    p, port, tcp = serve_live(POLIS, GATHER, "--seat", "agent_0=client", "--tcp", "127.0.0.1:0",
                              "--idle-timeout", "1", "--write-timeout", "1",
                              "--set", "max_steps=100000", "--seat", "agent_1=human")
    c = socket.create_connection(("127.0.0.1", tcp), timeout=10)
    t0 = time.time()
    got = read_until_closed(c)
    took = time.time() - t0
    # a page that holds a seat and never reads what it is sent: its queue waits, and after
    # --write-timeout it is dropped (its replies are small: the socket's buffer holds them, so
    # a page that asks much and reads nothing)
    seat = WS(port, "polis-seat")
    seat.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    for _ in range(20000):
        try:
            seat.send(json.dumps({"op": "seats"}))
        except (ConnectionError, BrokenPipeError, socket.timeout):
            break
    time.sleep(3)
    err = stop(p)
    print("timeouts: an idle client dropped after %.1f s" % took)
    check(b'"idle_timeout"' in got, "an idle client is told idle_timeout: %r" % got[:200])
    check(0.8 < took < 6, "an idle client is dropped after about 1 s (%.1f s)" % took)
    check("dropped a TCP client: no request in 1 s (--idle-timeout)" in err, "logged: %s" % err[-600:])
    check("dropped a seat page:" in err, "a seat page that reads nothing is dropped: %s" % err[-600:])

elif PART == "access":
    p, port, _ = serve_live(POLIS, GATHER, "--seat", "agent_0=human", "--seat", "agent_1=human")
    check(len(p.tokens.get("agent_0", "")) == 32 and p.tokens["agent_0"] != p.tokens["agent_1"],
          "each human seat has its own token: %s" % p.tokens)
    # another site's page, or a name that resolves here, gets no WebSocket
    for host, origin in [(None, "http://evil.example"), ("evil.example:%d" % port, None),
                         ("rebind.example:%d" % port, "http://rebind.example:%d" % port)]:
        for proto in ("polis-seat", "polis-follow"):
            try:
                WS(port, proto, host=host, origin=origin)
                ok = False
            except (RuntimeError, EOFError, ConnectionError):
                ok = True
            check(ok, "%s with Host %s, Origin %s is refused" % (proto, host, origin))
    # a WebSocket naming no protocol of the server (none, or "http") would land on the page
    # server's HTTP protocol: an idle connection past the Origin check and --max-pages
    for proto in (None, "http"):
        for origin in (None, "http://evil.example"):
            try:
                WS(port, proto, origin=origin)
                ok = False
            except (RuntimeError, EOFError, ConnectionError):
                ok = True
            check(ok, "a WebSocket with protocol %s, Origin %s is refused" % (proto, origin))
    own = WS(port, "polis-seat", origin="http://127.0.0.1:%d" % port)
    own.json()
    r = own.ask({"op": "take", "agent": "agent_0"})
    check(r.get("code") == "bad_token", "take without the token: %s" % r)
    r = own.ask(take("agent_0", "0" * 32))
    check(r.get("code") == "bad_token", "take with a wrong token: %s" % r)
    r = own.ask(take("agent_0", p.tokens["agent_1"]))
    check(r.get("code") == "bad_token", "take with another seat's token: %s" % r)
    r = own.ask(take("agent_0"))
    check(r.get("type") == "turn" and r.get("agent") == "agent_0", "take with the token: %s" % r)
    r = own.ask('{"op": "seats"} trailing')
    check(r.get("code") == "bad_json" and "unexpected text" in r.get("message", ""),
          "text after the message is refused: %s" % r)
    own.send_binary(b'{"op": "seats"}')
    r = own.json()
    check(r.get("code") == "bad_request" and "binary" in r.get("message", ""),
          "a binary message is refused: %s" % r)
    own.close()
    stop(p)
    # a web page making its browser POST to the agent port (a request line in the body): the
    # connection is closed before anything is played, by the live server and by `polis serve`
    def post_to(tcp):
        c = socket.create_connection(("127.0.0.1", tcp), timeout=10)
        body = json.dumps({"op": "reset"}) + "\n"
        c.sendall(("POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: text/plain\r\n"
                   "Content-Length: %d\r\n\r\n%s" % (tcp, len(body), body)).encode())
        return read_until_closed(c)

    p, port, tcp = serve_live(POLIS, GATHER, "--seat", "agent_0=client", "--tcp", "127.0.0.1:0")
    got = post_to(tcp)
    err = stop(p)
    check(b'"not_a_client"' in got and b'"op":"reset"' not in got and got.count(b"\n") == 1,
          "an HTTP request on the live agent port is answered not_a_client and closed: %r" % got[:300])
    check("its first line is an HTTP request" in err and "joined" not in err,
          "it is closed before any request is played: %s" % err[-600:])
    q = subprocess.Popen([POLIS, "serve", GATHER, "--tcp", "127.0.0.1:0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = q.stderr.readline()
    qtcp = int(line.strip().rsplit(":", 1)[1]) if "listening on" in line else 0
    got = post_to(qtcp) if qtcp else b""
    q.terminate()
    q.wait(20)
    check(b'"not_a_client"' in got and b'"op":"reset"' not in got and got.count(b"\n") == 1,
          "polis serve --tcp answers an HTTP request not_a_client and closes: %r %r" % (line, got[:300]))
    # --http HOST: an IPv4 address or localhost; anything else is refused, not listened nowhere
    q = subprocess.Popen([POLIS, "serve", GATHER, "--http", "localhost:0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    url = q.stdout.readline().strip()
    check(url.startswith("http://127.0.0.1:"), "--http localhost:0 listens on 127.0.0.1: %r" % url)
    if url.startswith("http://127.0.0.1:"):
        qport = int(url.split(":")[2].split("/")[0])
        s = socket.create_connection(("127.0.0.1", qport), timeout=10)
        s.close()
    stop(q)
    for bad in ("127.1:0", "localhost.:0", "::1:0", "example.com:0"):
        r = subprocess.run([POLIS, "serve", GATHER, "--http", bad], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 2 and "is not [HOST:]PORT (HOST an IPv4 address" in r.stderr,
              "--http %s: exit 2 naming the form: %d %s" % (bad, r.returncode, r.stderr.strip()))
else:
    raise SystemExit("unknown part " + PART)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("live_limits %s: all checks passed" % PART)
