#!/usr/bin/env python3
"""`polis view` over HTTP, without a browser: what it serves and what it refuses.

    view_http.py POLIS SRCDIR TMPDIR

Starts `polis view` on a fixture recording (make_fixture.py) at port 0, reads the URL it
prints, and checks: the viewer's page and modules are served with their types, the recording
is served byte for byte under the printed URL, and nothing else is — not a file beside the
recording, not the source tree, not /etc/passwd, through "..", encoded "..", or another name
under /recording. Every request and WebSocket handshake is checked for its Host and Origin:
another site's page (Origin) and a name that resolves to the server (Host: DNS rebinding)
are refused, unless --allow-origin allows them. Then usage errors, a missing file, a busy port
and SIGTERM. Every request goes to 127.0.0.1; the server is stopped at the end whatever
happens.
"""
import http.client
import os
import signal
import socket
import subprocess
import sys
import time

POLIS, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
TIMEOUT = 20
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def start(path, *extra):
    p = subprocess.Popen([POLIS, "view", path, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    return p, line


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    c.putrequest("GET", path, skip_accept_encoding=True)  # the path is sent as written
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("Content-Type") or "", body


def get_as(port, path, host=None, origin=None):
    """GET with the Host (None: 127.0.0.1:PORT) and Origin (None: none) given: (status, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    c.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    c.putheader("Host", host or "127.0.0.1:%d" % port)
    if origin:
        c.putheader("Origin", origin)
    c.endheaders()
    try:
        r = c.getresponse()
        return r.status, r.read()
    except (http.client.HTTPException, ConnectionError):
        return -1, b""
    finally:
        c.close()


def ws_handshake(port, protocol, host=None, origin=None):
    """The status line of a WebSocket handshake with that Host and Origin ("" when closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    req = ("GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
           % (host or "127.0.0.1:%d" % port))
    if protocol is not None:
        req += "Sec-WebSocket-Protocol: %s\r\n" % protocol
    if origin:
        req += "Origin: %s\r\n" % origin
    s.sendall((req + "\r\n").encode())
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionError, socket.timeout):
        pass
    s.close()
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def origin_checks(rec, recbytes):
    """Host and Origin on HTTP and on the follow WebSocket, with and without --allow-origin."""
    p, url = start(rec, "--follow")
    try:
        port = int(url.split(":")[2].split("/")[0])
        own = "http://127.0.0.1:%d" % port
        st, body = get_as(port, "/recording/society.jsonl", origin=own)
        check(st == 200 and body == recbytes, f"own origin served: {st}")
        st, body = get_as(port, "/recording/society.jsonl", host="localhost:%d" % port,
                          origin="http://localhost:%d" % port)
        check(st == 200, f"localhost served: {st}")
        for host, origin, what in [
            ("127.0.0.1:%d" % port, "http://evil.example", "another site's page"),
            ("127.0.0.1:%d" % port, "null", "an opaque origin"),
            ("evil.example:%d" % port, "http://evil.example:%d" % port, "DNS rebinding"),
            ("evil.example:%d" % port, None, "a name that resolves here"),
        ]:
            for path in ("/recording/society.jsonl", "/", "/viewer.js"):
                st, body = get_as(port, path, host=host, origin=origin)
                check(st == 403 and b'"t":"header"' not in body, f"{what}: {path} -> {st} (must be 403)")
            line = ws_handshake(port, "polis-follow", host=host, origin=origin)
            check(" 101 " not in line, f"{what}: the WebSocket is refused (got {line!r})")
        line = ws_handshake(port, "polis-follow", origin=own)
        check(" 101 " in line, f"own page: the WebSocket is accepted (got {line!r})")
        # one naming no protocol of the server would land on its HTTP protocol: an idle
        # connection past every check
        for proto in (None, "http"):
            for origin in (own, "http://evil.example"):
                line = ws_handshake(port, proto, origin=origin)
                check(" 101 " not in line, f"a WebSocket with protocol {proto}, Origin {origin} "
                                           f"is refused (got {line!r})")
    finally:
        stop(p)
    err = p.stderr.read()
    check("Origin http://evil.example is not this server's page" in err, f"the refusal is logged: {err[-400:]!r}")
    p, url = start(rec, "--follow", "--allow-origin", "http://lab.example:8000")
    try:
        port = int(url.split(":")[2].split("/")[0])
        st, body = get_as(port, "/recording/society.jsonl", origin="http://lab.example:8000")
        check(st == 200 and body == recbytes, f"--allow-origin: that origin is served: {st}")
        st, body = get_as(port, "/recording/society.jsonl", host="lab.example:%d" % port)
        check(st == 200, f"--allow-origin: its host is served: {st}")
        line = ws_handshake(port, "polis-follow", origin="http://lab.example:8000")
        check(" 101 " in line, f"--allow-origin: its WebSocket is accepted (got {line!r})")
        st, body = get_as(port, "/recording/society.jsonl", origin="http://evil.example")
        check(st == 403, f"--allow-origin: others are still refused: {st}")
    finally:
        stop(p)
    r = subprocess.run([POLIS, "view", rec, "--allow-origin", "lab.example"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    check(r.returncode == 2 and "--allow-origin: 'lab.example' is not an origin" in r.stderr,
          f"--allow-origin without a scheme: {r.returncode} {r.stderr!r}")


def main():
    os.makedirs(TMP, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(SRC, "tests/browser/make_fixture.py"), TMP], check=True)
    rec = os.path.join(TMP, "society.jsonl")
    secret = os.path.join(TMP, "secret.txt")
    with open(secret, "w") as f:
        f.write("NOT-TO-BE-SERVED\n")
    recbytes = open(rec, "rb").read()
    viewer_index = open(os.path.join(SRC, "sdk/viewer/index.html"), "rb").read()

    p, url = start(rec, "--port", "0")
    try:
        check(url.startswith("http://127.0.0.1:") and url.endswith("/?file=/recording/society.jsonl"),
              f"printed URL {url!r}")
        port = int(url.split(":")[2].split("/")[0])
        check(port > 0, "a port was chosen")

        st, ct, body = get(port, "/")
        check(st == 200 and body == viewer_index and ct.startswith("text/html"), f"/ -> {st} {ct}")
        st, ct, body = get(port, "/?file=/recording/society.jsonl")
        check(st == 200 and body == viewer_index, f"/?file=... -> {st}")
        for js in ("viewer.js", "recording.js", "draw.js", "font.js"):
            st, ct, body = get(port, "/" + js)
            check(st == 200 and "javascript" in ct and body == open(os.path.join(SRC, "sdk/viewer", js), "rb").read(),
                  f"/{js} -> {st} {ct}")
        st, ct, body = get(port, "/viewer.css")
        check(st == 200 and ct.startswith("text/css"), f"/viewer.css -> {st} {ct}")
        st, ct, body = get(port, "/recording/society.jsonl")
        check(st == 200 and body == recbytes, f"/recording/society.jsonl -> {st}, {len(body)} bytes of {len(recbytes)}")

        refused = [
            "/recording/secret.txt", "/recording/expected.json", "/recording/", "/recording",
            "/recording/society.jsonl/", "/recording/society.jsonl.gz", "/recording/SOCIETY.JSONL",
            "/recording/../secret.txt", "/recording/%2e%2e/secret.txt", "/recording/..%2fsecret.txt",
            "/recording/society.jsonl/../secret.txt", "/recording/./secret.txt",
            "/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
            "/..%2f..%2f..%2f..%2fetc%2fpasswd", "/....//....//etc/passwd",
            "/../CMakeLists.txt", "/../../CMakeLists.txt", "/%2e%2e/%2e%2e/CMakeLists.txt",
            "/../viewer/../../../CMakeLists.txt", "//etc/passwd", "/etc/passwd",
            "/" + secret, "/recording/" + secret, "/recording//" + rec, "/recording/%00society.jsonl",
        ]
        for path in refused:
            try:
                st, ct, body = get(port, path)
            except (http.client.HTTPException, ConnectionError) as e:
                # a request the library rejects outright (closing the connection) is refused too
                st, body = -1, b""
                print(f"  {path}: connection closed ({e.__class__.__name__})")
            served = st == 200 and (b"root:" in body or b"NOT-TO-BE-SERVED" in body or b"cmake_minimum_required" in body
                                    or b'"t":"header"' in body)
            check(not served and st != 200, f"{path} -> {st} (must be refused)")
        # without --follow there is no WebSocket at all: one naming no protocol (or "http")
        # would be an idle connection past every check
        for proto in (None, "http", "polis-follow"):
            line = ws_handshake(port, proto)
            check(" 101 " not in line, f"no --follow: a WebSocket with protocol {proto} is "
                                       f"refused (got {line!r})")
        # still serving after all that
        st, ct, body = get(port, "/recording/society.jsonl")
        check(st == 200 and body == recbytes, "the recording is still served after the refusals")

        # a busy port
        p2 = subprocess.run([POLIS, "view", rec, "--port", str(port)], capture_output=True, text=True, timeout=TIMEOUT)
        check(p2.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in p2.stderr,
              f"busy port: exit {p2.returncode}, stderr {p2.stderr!r}")
    finally:
        rc = stop(p)
    check(rc == 0, f"SIGTERM: exit status {rc}")
    err = p.stderr.read()
    check("serving" in err, f"stderr says what is served: {err!r}")

    origin_checks(rec, recbytes)

    # a gzip recording is served as gzip (bytes unchanged, no Content-Encoding)
    gz = os.path.join(TMP, "society.jsonl.gz")
    p, url = start(gz)
    try:
        port = int(url.split(":")[2].split("/")[0])
        check(url.endswith("/?file=/recording/society.jsonl.gz"), f"gz URL {url!r}")
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        c.request("GET", "/recording/society.jsonl.gz")
        r = c.getresponse()
        body = r.read()
        check(r.status == 200 and body == open(gz, "rb").read() and r.getheader("Content-Encoding") is None,
              f"gz served as is: {r.status} {r.getheader('Content-Type')} {r.getheader('Content-Encoding')}")
        c.close()
    finally:
        stop(p)

    # a name with characters a URL would need to escape is served under a plain one
    odd = os.path.join(TMP, "my run #1?.jsonl")
    with open(odd, "wb") as f:
        f.write(recbytes)
    p, url = start(odd)
    try:
        check(url.endswith("/?file=/recording/my_run__1_.jsonl"), f"odd name URL {url!r}")
        port = int(url.split(":")[2].split("/")[0])
        st, _, body = get(port, "/recording/my_run__1_.jsonl")
        check(st == 200 and body == recbytes, f"odd name served: {st}")
    finally:
        stop(p)

    # --follow: the URL asks the page to follow (the WebSocket itself: viewer.test.mjs)
    p, url = start(rec, "--follow")
    try:
        check(url.startswith("http://127.0.0.1:") and url.endswith("/?file=/recording/society.jsonl&follow=1"),
              f"--follow URL {url!r}")
        port = int(url.split(":")[2].split("/")[0])
        st, _, body = get(port, "/recording/society.jsonl")
        check(st == 200 and body == recbytes, f"--follow still serves the file: {st}")
    finally:
        check(stop(p) == 0, "--follow: SIGTERM")

    def run(*args):
        return subprocess.run([POLIS, *args], capture_output=True, text=True, timeout=TIMEOUT)

    r = run("view")
    check(r.returncode == 2 and "polis: view: missing FILE" in r.stderr, f"no FILE: {r.returncode} {r.stderr!r}")
    r = run("view", rec, "--port", "http")
    check(r.returncode == 2 and "--port: 'http' is not an integer in [0, 65535] (a port number)" in r.stderr, f"bad port: {r.stderr!r}")
    r = run("view", rec, "--port", "70000")
    check(r.returncode == 2 and "--port: '70000'" in r.stderr, f"port out of range: {r.stderr!r}")
    r = run("view", rec, "--port")
    check(r.returncode == 2 and "--port needs a value" in r.stderr, f"--port alone: {r.stderr!r}")
    r = run("view", rec, "--frobnicate")
    check(r.returncode == 2 and "unknown option '--frobnicate'" in r.stderr, f"unknown option: {r.stderr!r}")
    r = run("view", rec, rec)
    check(r.returncode == 2 and "unexpected argument" in r.stderr, f"two files: {r.stderr!r}")
    r = run("view", os.path.join(TMP, "missing.jsonl"))
    check(r.returncode == 1 and "missing.jsonl: No such file or directory" in r.stderr, f"missing file: {r.stderr!r}")
    r = run("view", TMP)
    check(r.returncode == 1 and "not a regular file" in r.stderr, f"a directory: {r.stderr!r}")
    r = run("view", "--help")
    check(r.returncode == 0 and r.stdout.startswith("usage: polis view FILE"), "view --help")
    r = run("help", "view")
    check(r.returncode == 0 and r.stdout.startswith("usage: polis view FILE"), "help view")
    env = dict(os.environ, POLIS_VIEWER_DIR=TMP)
    r = subprocess.run([POLIS, "view", rec], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    check(r.returncode == 1 and "are not in $POLIS_VIEWER_DIR" in r.stderr, f"no viewer: {r.stderr!r}")

    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
