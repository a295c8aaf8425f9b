"""A local stand-in for an OpenAI-compatible server (stdlib HTTP on 127.0.0.1), for tests and
for trying the LLM runner without a model.

    with MockServer() as srv:                  # port 0: any free port
        client = ChatClient(srv.url, "mock")
        srv.script(429, "Plan: EXPLORE", {"malformed": True}, "Action: noop")

Each chat request takes the next entry of the script; when the script is empty the
``responder`` answers (default :func:`play`, a deterministic player that reads polis's
prompts and answers in their format). Script entries:

| entry | the server |
|---|---|
| a string | answers it as the message content |
| an int (429, 500, 503, ...) | answers that status with an OpenAI-style error body (429 with ``Retry-After: 0``) |
| ``{"text": s, "usage": False}`` | answers s without a ``usage`` member |
| ``{"malformed": True}`` | answers 200 with a body that is not JSON |
| ``{"empty": True}`` | answers an empty message content |
| ``{"sleep": s, ...}`` | waits s seconds first (a timeout when s exceeds the client's) |
| ``{"huge": n}`` | answers a content of n bytes |
| ``{"drop": True}`` | closes the connection without answering |
| ``{"status": n, "message": m}`` | answers status n with error message m |

``/embeddings`` answers deterministic unit vectors (hashed bags of words, ``dim``
dimensions), so texts that share words are near. ``requests`` lists every request body
received, in order; ``usages`` the ``usage`` of every chat answer sent with one (what a
client's cost accounting must add up to). ``python3 -m polis.llm mock --port 8000`` serves one from the command
line.
"""
import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class MockServer:
    def __init__(self, responder=None, *, host="127.0.0.1", port=0, dim=64, model="mock"):
        self.responder = responder or play
        self.dim = dim
        self.model = model
        self.requests = []
        self.usages = []
        self._script = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                outer._handle(self)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self._thread = None

    @property
    def url(self):
        host, port = self.httpd.server_address[:2]
        return "http://%s:%d/v1" % (host, port)

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def script(self, *entries):
        with self._lock:
            self._script.extend(entries)

    def pending(self):
        with self._lock:
            return len(self._script)

    def chat_requests(self):
        with self._lock:
            return [b for p, b in self.requests if p.endswith("/chat/completions")]

    # ---- serving ----------------------------------------------------------------------------

    def _handle(self, h):
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(n) if n else b""
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            return _send(h, 400, {"error": {"message": "the request is not JSON",
                                            "type": "invalid_request_error"}})
        with self._lock:
            self.requests.append((h.path, body))
        if h.path.endswith("/embeddings"):
            inputs = body.get("input")
            if isinstance(inputs, str):
                inputs = [inputs]
            data = [{"object": "embedding", "index": i, "embedding": embed(t, self.dim)}
                    for i, t in enumerate(inputs or [])]
            return _send(h, 200, {"object": "list", "data": data, "model": body.get("model"),
                                  "usage": {"prompt_tokens": sum(len(str(t).split())
                                                                 for t in inputs or []),
                                            "total_tokens": 0}})
        if not h.path.endswith("/chat/completions"):
            return _send(h, 404, {"error": {"message": "no route %s" % h.path}})
        with self._lock:
            entry = self._script.pop(0) if self._script else None
        if entry is None:
            return self._answer(h, body, self.responder(body), True)
        if isinstance(entry, int):
            entry = {"status": entry}
        if isinstance(entry, str):
            return self._answer(h, body, entry, True)
        if entry.get("sleep"):
            time.sleep(entry["sleep"])
        if entry.get("drop"):
            h.close_connection = True
            try:
                h.connection.shutdown(2)
            except OSError:
                pass
            return
        if "status" in entry:
            extra = {"Retry-After": "0"} if entry["status"] == 429 else {}
            return _send(h, entry["status"],
                         {"error": {"message": entry.get("message") or
                                    "mock error %d" % entry["status"],
                                    "type": "mock"}}, extra)
        if entry.get("malformed"):
            return _send_raw(h, 200, b'{"choices": [{"message": {"content": "half')
        if entry.get("empty"):
            return self._answer(h, body, "", True)
        if entry.get("huge"):
            return self._answer(h, body, "x" * int(entry["huge"]), True)
        text = entry["text"] if "text" in entry else self.responder(body)
        return self._answer(h, body, text, entry.get("usage", True))

    def _answer(self, h, body, text, usage):
        reply = {"id": "mock-%d" % len(self.requests), "object": "chat.completion",
                 "model": body.get("model", self.model),
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": text}}]}
        if usage:
            pt = sum(len(str(m.get("content", "")).split()) + 4
                     for m in body.get("messages") or [])
            reply["usage"] = {"prompt_tokens": pt, "completion_tokens": len(text.split()),
                              "total_tokens": pt + len(text.split())}
            with self._lock:
                self.usages.append(reply["usage"])
        _send(h, 200, reply)


def _send(h, status, obj, headers=None):
    _send_raw(h, status, json.dumps(obj).encode("utf-8"), headers)


def _send_raw(h, status, data, headers=None):
    try:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
    except OSError:
        pass


_WORD = re.compile(r"[a-z0-9]+")


def embed(text, dim=64):
    """A deterministic unit vector of a text: its words hashed into ``dim`` buckets."""
    v = [0.0] * dim
    for w in _WORD.findall(str(text).lower()):
        d = hashlib.sha256(w.encode()).digest()
        v[d[0] % dim] += 1.0 if d[1] & 1 else -1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


# ---- a player that reads polis's prompts ------------------------------------------------------

def _pick(options, prompt, salt=""):
    """A choice among options fixed by the prompt's text (same prompt, same choice)."""
    if not options:
        return None
    h = hashlib.sha256((salt + prompt).encode("utf-8")).digest()
    return options[int.from_bytes(h[:4], "big") % len(options)]


_POS = re.compile(r"position \[(\d+), (\d+)\]")
_AGENT_AT = re.compile(r"Observed agent (\S+) at position \[(\d+), (\d+)\]")


def _fill(usage, prompt):
    """A usage line ("GOTO <row> <column>") with its placeholders filled from the prompt."""
    words = usage.split()
    out = [words[0]]
    agents = _AGENT_AT.findall(prompt)
    positions = _POS.findall(prompt)
    i = 1
    while i < len(words):
        w = words[i].strip("[]")
        if words[i].startswith("[") and not w.startswith("<"):
            i += 1
            continue
        t = w.strip("<>").lower()
        if t in ("player", "agent", "name", "player_name"):
            if not agents:
                return None
            name, r, c = _pick(agents, prompt, usage)
            out.append(name)
            if i + 2 < len(words) and words[i + 1].strip("[]<>").lower() == "row":
                out += [r, c]
                i += 3
                continue
        elif t == "row":
            if not positions:
                return None
            r, c = _pick(positions, prompt, usage)
            out += [r, c]
            i += 2
            continue
        elif t in ("n", "num", "count", "ticks"):
            out.append("2")
        elif t in ("resource", "item", "tool"):
            state = prompt.rsplit("###", 1)[-1]
            names = [w for w in ("wood", "stone", "coal", "iron", "hammer", "torch")
                     if w in state]
            if not names:
                return None
            out.append(_pick(names, prompt, usage + t))
        elif t in ("x", "y"):
            out.append(str(int(hashlib.sha256((prompt + t).encode()).hexdigest(), 16) % 7))
        elif not w.startswith("<"):
            out.append(w)
        else:
            return None
        i += 1
    return " ".join(out)


def _options(prompt, header):
    """The lines of the block that starts after ``header`` and ends at a blank line."""
    i = prompt.rfind(header)
    if i < 0:
        return []
    block = prompt[i + len(header):].lstrip("\n").split("\n\n")[0]
    return [ln.strip().lstrip("-* ").split(":")[0].strip() for ln in block.splitlines()
            if ln.strip()]


def play(body):
    """The default responder: answers polis's prompts (polis/llm/prompts) in the format each
    asks for — the generative agent's JSON blocks (react, plan, reflection questions and
    insights, act) and LLM-C's "Thoughts:/Plan:" lines — choosing among the valid actions
    the prompt lists, deterministically from the prompt's text. Anything else gets "OK"."""
    msgs = body.get("messages") or []
    prompt = "\n".join(str(m.get("content", "")) for m in msgs)
    if '"Question_1"' in prompt:
        return "```json\n" + json.dumps({"Question_%d" % k: {
            "Reasoning": "recent events", "Question": q} for k, q in enumerate(
                ["Where are the apples?", "Who took apples near me?",
                 "Is any tree close to running out?"], 1)}, indent=1) + "\n```"
    if '"Insight_1"' in prompt:
        return "```json\n" + json.dumps({"Insight_%d" % k: {
            "Reasoning": "memories", "Insight": s} for k, s in enumerate(
                ["Apples regrow near other apples.", "Others harvest the same trees.",
                 "Leaving the last apple keeps a tree alive."], 1)}, indent=1) + "\n```"
    if '"Goals"' in prompt and '"Plan"' in prompt:
        return "```json\n" + json.dumps({"Reasoning": "I want apples that last.",
                                         "Goals": "Eat apples without emptying trees.",
                                         "Plan": "Harvest where apples are many; explore "
                                                 "when none are seen."}) + "\n```"
    if '"Answer"' in prompt and "continue with its plan" in prompt:
        return "```json\n" + json.dumps({"Reasoning": "Nothing important changed.",
                                         "Answer": _pick([True, False, True], prompt) is
                                         False}) + "\n```"
    if '"Answer"' in prompt and "Valid actions:" in prompt:
        choices = [c for c in (_fill(u, prompt) for u in _options(prompt, "Valid actions:"))
                   if c]
        ans = _pick(choices, prompt) or "STAY"
        return "```json\n" + json.dumps({"Opportunities": "apples nearby", "Threats": "none",
                                         "Options": ", ".join(choices[:3]),
                                         "Consequences": "more apples",
                                         "Final analysis": "take the best option",
                                         "Answer": ans}) + "\n```"
    if "Plan:" in prompt and ("options" in prompt.lower() or "one of:" in prompt):
        usages = _options(prompt, "Plans:") or _options(prompt, "one of:")
        plans = [c for c in (_fill(u, prompt) for u in usages) if c]
        return "Thoughts: I follow the rules.\nPlan: %s" % (_pick(plans, prompt) or "EXPLORE")
    if "Action:" in prompt:
        acts = _options(prompt, "Actions:")
        if not acts:  # a text view's last line: "Legal actions: noop, move_up, ..."
            i = prompt.rfind("Legal actions:")
            if i >= 0:
                line = prompt[i + len("Legal actions:"):].split("\n")[0].strip().rstrip(".")
                acts = [a.strip().split(" ")[0] for a in line.split(",") if a.strip()]
        return "Thoughts: my turn.\nAction: %s" % (_pick(acts, prompt) or "noop")
    return "OK"
