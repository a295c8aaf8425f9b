"""polis serve --tcp: two clients with their own envs, the --max-clients bound, a client
that disconnects mid-episode, and a server that stays ready for the next one.

usage: serve_tcp.py POLIS SCENARIO   (stdlib only; every wait is bounded)
"""
import json
import socket
import subprocess
import sys
import time

TIMEOUT = 20.0


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.file = self.sock.makefile("rb")

    def send_raw(self, data):
        self.sock.sendall(data)

    def read(self):
        line = self.file.readline()
        if not line:
            return None
        return json.loads(line)

    def ask(self, request):
        self.send_raw((json.dumps(request) + "\n").encode())
        reply = self.read()
        if reply is None:
            raise AssertionError("the server closed the connection on %r" % (request,))
        return reply

    def close(self):
        self.file.close()
        self.sock.close()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def connect_when_free(port):
    """A slot frees when the server notices a disconnect; retry for a bounded time."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        c = Client(port)
        try:
            r = c.ask({"op": "describe"})
        except (ConnectionError, AssertionError):
            r = None  # refused and closed before the request was read
        if r is not None and r["ok"]:
            return c
        c.close()
        check(r is None or r["error"]["code"] == "server_full", "unexpected reply %r" % (r,))
        if time.monotonic() > deadline:
            raise AssertionError("no slot freed after a client disconnected")
        time.sleep(0.05)


def main():
    polis, scenario = sys.argv[1], sys.argv[2]
    server = subprocess.Popen([polis, "serve", scenario, "--tcp", "127.0.0.1:0",
                               "--max-clients", "2"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        line = server.stderr.readline().decode()
        prefix = "polis serve: listening on 127.0.0.1:"
        check(line.startswith(prefix), "server said %r" % line)
        port = int(line[len(prefix):])
        check(port > 0, "no port")

        a = Client(port)
        b = Client(port)
        ra = a.ask({"op": "reset", "seed": 3})
        rb = b.ask({"op": "reset", "seed": 3})
        check(ra["ok"] and ra == rb, "same seed, different first observations")
        check(ra["agents"]["agent_0"]["legal_actions"][0] == "noop", "legal actions")

        # Their envs are separate: a's steps do not move b's tick.
        check(a.ask({"op": "step", "actions": {"agent_0": "move north"}})["tick"] == 1, "a 1")
        check(a.ask({"op": "step", "actions": {}})["tick"] == 2, "a 2")
        sb = b.ask({"op": "step", "actions": {"agent_0": "north"}})
        check(sb["tick"] == 1, "b's env stepped with a's")
        check(sb["agents"]["agent_0"]["observation"]["gather"]["position"] == [9, 3],
              "b's move")

        # A third client is refused while two are served.
        c = Client(port)
        r = c.read()
        check(r is not None and not r["ok"] and r["error"]["code"] == "server_full",
              "third client: %r" % (r,))
        check(c.read() is None, "a refused client is disconnected")
        c.close()

        # a drops mid-episode, in the middle of a request line.
        a.send_raw(b'{"op": "step", "act')
        a.close()

        # The server is ready for the next client, which gets a fresh env.
        d = connect_when_free(port)
        rd = d.ask({"op": "reset", "seed": 3})
        check(rd == ra, "a new client's episode differs from the first one")
        check(d.ask({"op": "step", "actions": {}})["tick"] == 1, "d 1")
        bad = d.ask({"op": "step", "actions": {"nobody": 1}})
        check(bad["error"]["code"] == "unknown_agent", "d error")

        # b was not disturbed by any of this.
        check(b.ask({"op": "step", "actions": {}})["tick"] == 2, "b 2")
        check(b.ask({"op": "close"}) == {"ok": True, "op": "close"}, "close")
        check(b.read() is None, "the server closes the connection after close")
        b.close()
        d.close()
        check(server.poll() is None, "the server exited")
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
        server.stderr.close()
    print("serve_tcp: ok")


if __name__ == "__main__":
    main()
