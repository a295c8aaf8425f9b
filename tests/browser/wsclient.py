"""tests/browser/wsclient.py — a small WebSocket client on Python's standard library (the
handshake and frames of RFC 6455, client side only), for the tests of `polis serve --http`
(live_ws.py, live_seats.py)."""
import base64
import json
import os
import select
import signal
import socket
import struct
import subprocess
import time


TOKENS = {}  # the seats' tokens of the server serve_live started last


def serve_live(polis, scenario, *extra):
    """Starts `polis serve SCENARIO --http 127.0.0.1:0 EXTRA...`: (process, http port, the
    --tcp port or None); p.url is the page's URL as printed, p.tokens (and TOKENS) each human
    seat's token from its printed link. Exits the test, with the server's stderr, when no URL
    comes."""
    p = subprocess.Popen([polis, "serve", scenario, "--http", "127.0.0.1:0", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    TOKENS.clear()
    url = p.stdout.readline().strip()
    while url.startswith("seat "):  # "seat AGENT: http://HOST:PORT/?live=1&token=T"
        agent, link = url[5:].split(": ", 1)
        TOKENS[agent] = link.split("token=", 1)[1]
        url = p.stdout.readline().strip()
    tcp = p.stdout.readline().strip() if "--tcp" in extra else ""
    if not url.startswith("http://127.0.0.1:") or ("--tcp" in extra and not tcp.startswith("tcp://")):
        p.kill()
        print(p.stderr.read())
        raise SystemExit("FAIL: no address from polis serve --http: %r %r" % (url, tcp))
    p.url = url
    p.tokens = dict(TOKENS)
    return p, int(url.split(":")[2].split("/")[0]), int(tcp.rsplit(":", 1)[1]) if tcp else None


def take(agent, token=None):
    """The "take" message for agent's seat, with its token (from the last server started)."""
    return {"op": "take", "agent": agent, "token": TOKENS.get(agent, "") if token is None else token}


def stop_live(p, timeout=20):
    """SIGTERM, then the exit status ("hung" if it did not exit) and the server's stderr."""
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    return rc, p.stderr.read()


class WS:
    """A WebSocket client: connect with a subprotocol, send text, read messages."""

    def __init__(self, port, protocol, host=None, origin=None):
        """protocol: the subprotocol asked for (None: no Sec-WebSocket-Protocol header); host:
        the Host header (default 127.0.0.1:PORT); origin: an Origin header, as a browser sends
        (default none)."""
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "Origin: %s\r\n" % origin if origin else ""
        if protocol is not None:
            extra += "Sec-WebSocket-Protocol: %s\r\n" % protocol
        self.s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n%s\r\n"
                        % (host or "127.0.0.1:%d" % port, key, extra)).encode())
        self.buf = b""
        self.changes = 0
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("the server closed during the handshake")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError("handshake refused: %r" % head[:80])

    def send(self, text, opcode=1):
        data = text.encode() if isinstance(text, str) else text
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            hdr = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            hdr = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            hdr = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def send_binary(self, data):
        self.send(data, opcode=2)

    def _need(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.time()
            poller = select.poll()  # not select(): a soak's sockets go past FD_SETSIZE
            poller.register(self.s, select.POLLIN)
            if left <= 0 or not poller.poll(left * 1000):
                raise TimeoutError("no message in time")
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buf += chunk

    def recv(self, timeout=10):
        """The next whole message's payload (bytes); None when the server closed."""
        deadline = time.time() + timeout
        payload = b""
        while True:
            self._need(2, deadline)
            b0, b1 = self.buf[0], self.buf[1]
            n, at = b1 & 0x7F, 2
            if n == 126:
                self._need(4, deadline)
                n, at = struct.unpack("!H", self.buf[2:4])[0], 4
            elif n == 127:
                self._need(10, deadline)
                n, at = struct.unpack("!Q", self.buf[2:10])[0], 10
            self._need(at + n, deadline)
            data, self.buf = self.buf[at:at + n], self.buf[at + n:]
            op = b0 & 0x0F
            if op == 8:
                return None
            if op in (9, 10):
                continue
            payload += data
            if b0 & 0x80:
                return payload

    def json(self, timeout=10):
        return json.loads(self.recv(timeout))

    def ask(self, msg):
        """Sends msg and returns the answer, counting the seat changes other pages caused."""
        self.send(msg if isinstance(msg, str) else json.dumps(msg))
        while True:
            r = self.json()
            if not r.get("changed"):
                return r
            self.changes += 1

    def close(self):
        self.s.close()
