"""polis serve --tcp --record: each client's session is recorded to its own file (FILE with
-N before the first '.' of its name, or with {client} replaced by N), in threads and with
--isolate; every file replays (`polis replay --verify`) and holds that client's episodes and
messages only.

usage: serve_record.py POLIS SOURCE_DIR SCRATCH_DIR   (stdlib only; every wait is bounded)
"""
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys

TIMEOUT = 20.0


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.file = self.sock.makefile("rb")

    def ask(self, request):
        self.sock.sendall((json.dumps(request) + "\n").encode())
        line = self.file.readline()
        if not line:
            raise AssertionError("the server closed the connection on %r" % (request,))
        return json.loads(line)

    def close(self):
        """Sends close and waits for the end of the stream: the session, and its recording,
        are finished then."""
        check(self.ask({"op": "close"})["ok"], "close")
        check(self.file.readline() == b"", "the server closes the connection after close")
        self.file.close()
        self.sock.close()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(x) for x in f]


def msgs(recording):
    return [m for line in recording if line["t"] == "step" for m in line.get("msgs", [])]


def serve(polis, scenario, record, extra, stderr_path):
    err = open(stderr_path, "wb+")
    server = subprocess.Popen([polis, "serve", scenario, "--tcp", "127.0.0.1:0",
                               "--record", record, "--keyframe-every", "3"] + extra,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    return server, err


def port_of(err, server):
    prefix = b"polis serve: listening on 127.0.0.1:"
    for _ in range(int(TIMEOUT * 20)):
        err.seek(0)
        first = err.readline()
        if first.startswith(prefix) and first.endswith(b"\n"):
            return int(first[len(prefix):])
        check(server.poll() is None, "the server exited: %r" % err.read())
        subprocess.run(["sleep", "0.05"])
    raise AssertionError("the server did not say where it listens")


def two_clients(polis, scenario, record, extra, names, scratch):
    """Two interleaved clients; returns their recordings, client 1's first."""
    server, err = serve(polis, scenario, record, extra, os.path.join(scratch, "err"))
    try:
        port = port_of(err, server)
        a, b = Client(port), Client(port)
        check(a.ask({"op": "reset", "seed": 3})["ok"], "a reset")
        check(b.ask({"op": "reset", "seed": 4})["ok"], "b reset")
        check(a.ask({"op": "step", "actions": {"agent_0": "move north"}})["tick"] == 1, "a 1")
        check(b.ask({"op": "step", "actions": {"agent_1": {"action": "move",
                                                            "direction": "east"}}})["tick"] == 1,
              "b 1")
        check(a.ask({"op": "step", "actions": {"agent_2": 3}})["tick"] == 2, "a 2")
        check(a.ask({"op": "reset", "seed": 5})["ok"], "a's second episode")
        check(a.ask({"op": "step", "actions": {}})["tick"] == 1, "a 3")
        for t in range(2, 6):
            check(b.ask({"op": "step", "actions": {"agent_3": "south"}})["tick"] == t, "b %d" % t)
        a.close()
        b.close()
        check(server.poll() is None, "the server exited")
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
        err.seek(0)
        log = err.read().decode()
        err.close()
    for i, name in enumerate(names):
        check(os.path.exists(name), "no recording %s (server log: %s)" % (name, log))
        check("client %d (127.0.0.1:" % (i + 1) in log and "recording to %s" % name in log,
              "the log does not say where client %d is recorded: %s" % (i + 1, log))
        r = subprocess.run([polis, "replay", name, "--verify"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, "replay --verify %s: %s%s" % (name, r.stdout, r.stderr))
    ra, rb = lines(names[0]), lines(names[1])
    check([x["seed"] for x in ra if x["t"] == "reset"] == [3, 5], "client 1's episodes")
    check([x["seed"] for x in rb if x["t"] == "reset"] == [4], "client 2's episode")
    check(sum(x["t"] == "step" for x in ra) == 3 and sum(x["t"] == "step" for x in rb) == 5,
          "steps per client")
    check(msgs(ra) == [{"agent": 0, "kind": "action", "text": "move north"},
                       {"agent": 2, "kind": "action", "text": "move_west"}],
          "client 1's messages: %r" % msgs(ra))
    check(msgs(rb) == [{"agent": 1, "kind": "action",
                        "text": '{"action":"move","direction":"east"}'}] +
          [{"agent": 3, "kind": "action", "text": "south"}] * 4,
          "client 2's messages: %r" % msgs(rb))
    check(all(x["source"] == "serve" for x in (ra[0], rb[0])), "source")
    return ra, rb


def main():
    polis, src, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    scenario = os.path.join(src, "rulesets", "gather", "gather.json")

    # threads: -N before the first '.' of the name
    rec = os.path.join(scratch, "ep.jsonl.gz")
    two_clients(polis, scenario, rec, [],
                [os.path.join(scratch, "ep-1.jsonl.gz"), os.path.join(scratch, "ep-2.jsonl.gz")],
                scratch)
    check(not os.path.exists(rec), "the unnumbered file was written")

    # --isolate, with a {client} placeholder in a directory name
    os.makedirs(os.path.join(scratch, "c1"))
    os.makedirs(os.path.join(scratch, "c2"))
    rec = os.path.join(scratch, "c{client}", "run.jsonl")
    two_clients(polis, scenario, rec, ["--isolate"],
                [os.path.join(scratch, "c1", "run.jsonl"), os.path.join(scratch, "c2", "run.jsonl")],
                scratch)

    # a client whose file cannot be created is told so; the server goes on
    rec = os.path.join(scratch, "missing{client}", "x.jsonl")
    server, err = serve(polis, scenario, rec, [], os.path.join(scratch, "err3"))
    try:
        port = port_of(err, server)
        c = Client(port)
        c.sock.sendall(b'{"op": "describe"}\n')
        r = json.loads(c.file.readline())
        check(not r["ok"] and "--record %s: cannot record" % rec.replace("{client}", "1")
              in r["error"]["message"], "unwritable recording: %r" % r)
        check(server.poll() is None, "the server exited after a client's recording failed")
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
        err.close()
    # a numbered name that does not fit a path is refused to that client
    rec = os.path.join(scratch, "x" * 4200 + ".jsonl")
    server, err = serve(polis, scenario, rec, [], os.path.join(scratch, "err4"))
    try:
        port = port_of(err, server)
        c = Client(port)
        r = json.loads(c.file.readline())
        check(not r["ok"] and r["error"]["message"] ==
              "--record: the file name of client 1 is too long", "long name: %r" % r)
        check(server.poll() is None, "the server exited after a client's name was too long")
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
        err.close()
    print("serve_record: ok")


if __name__ == "__main__":
    main()
