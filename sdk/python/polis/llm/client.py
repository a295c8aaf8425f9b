"""A client for OpenAI-compatible chat-completion and embedding endpoints (stdlib only).

Any server that speaks ``POST {base_url}/chat/completions`` and ``POST {base_url}/embeddings``
works the same way: OpenAI, vLLM (``--api-key`` optional), llama.cpp's ``llama-server``,
Ollama (``http://localhost:11434/v1``), LM Studio, a proxy. docs/llm.md has the details.

What it guarantees, so that an experiment of thousands of calls neither hangs nor silently
changes:

- **Deadlines.** Every attempt has a deadline: each socket operation waits at most
  ``timeout`` seconds, and the reply is abandoned once ``timeout`` seconds have passed since
  the request was sent, so a server that dribbles bytes holds a call for at most about twice
  ``timeout``. A reply larger than ``max_reply_bytes`` is cut off and counts as a failed
  attempt.
- **Retries.** 429, 500, 502, 503, 504, timeouts, refused or dropped connections and replies
  that are not the API's JSON are retried, at most ``retries`` more times, after
  ``backoff * 2**k`` seconds (capped at ``max_backoff``; a ``Retry-After`` header is honoured
  up to that cap). Other statuses (400, 401, 404, ...) are not retried. The last failure is
  raised as :class:`LLMError` with the server's own reason (``error.message`` of its body).
- **Concurrency.** At most ``concurrency`` requests are in flight at once, across threads;
  :meth:`ChatClient.chat_many` asks a batch (every agent of a step) at once.
- **Cache.** With ``cache_dir``, every successful reply is stored under the SHA-256 of the
  full request (endpoint and JSON body: model, messages, temperature, seed, ...; never the
  key). Asking the same again answers from disk: free, instant and identical, so a rerun of
  an experiment reproduces it exactly.
- **Accounting.** Every call returns its token usage (the API's ``usage``; when a server
  sends none, a documented estimate, :func:`count_tokens`), latency and attempts; a
  :class:`polis.llm.cost.CostMeter` given as ``meter`` adds them up per agent.
"""
import hashlib
import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

RETRY_STATUS = (429, 500, 502, 503, 504)

ENV_BASE_URL = ("POLIS_LLM_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("POLIS_LLM_MODEL",)
ENV_API_KEY = ("POLIS_LLM_API_KEY", "OPENAI_API_KEY")
ENV_EMBED_MODEL = ("POLIS_LLM_EMBED_MODEL",)


class LLMError(Exception):
    """A call that failed for good: ``reason`` says why in one line (the server's message
    when it gave one), ``status`` is the last HTTP status (None for a timeout or a dropped
    connection), ``attempts`` how many requests were made."""

    def __init__(self, reason, status=None, attempts=1):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.attempts = attempts


class ModelUnavailable(LLMError):
    """``max_failures`` calls in a row failed for good: the endpoint is down or refuses
    everything, and an experiment should stop rather than play fallbacks for hours. Agents
    do not catch it (they catch other LLMErrors and fall back)."""


class _Retryable(Exception):
    def __init__(self, reason, status=None, retry_after=None):
        super().__init__(reason)
        self.reason, self.status, self.retry_after = reason, status, retry_after


_TOKEN = re.compile(r"[A-Za-z]+|\d|[^\sA-Za-z\d]")


def count_tokens(text):
    """An estimate of a text's token count for servers that report no ``usage``: every run
    of letters counts one token per 4 letters (rounded up), every digit and every other
    non-space character one token. Within about 20% of BPE tokenisers on English prose and
    on polis's views (more on long numbers); the results mark such counts as estimated."""
    n = 0
    for m in _TOKEN.finditer(text or ""):
        s = m.group(0)
        n += (len(s) + 3) // 4 if s[0].isalpha() else 1
    return n


def messages_tokens(messages):
    """:func:`count_tokens` over a chat request's messages, plus 4 per message (the role and
    separators the chat template adds)."""
    return sum(4 + count_tokens(m.get("content") or "") for m in messages)


class Completion:
    """One answer. ``text`` is the message content ("" when the server sent none);
    ``prompt_tokens``, ``completion_tokens`` from the API's ``usage`` (``estimated`` True
    when counted by :func:`count_tokens` instead); ``latency`` seconds of the call that
    produced it (for a cached answer, of the original call), ``cached`` whether it came
    from the cache (free), ``attempts`` the requests made (0 when cached), ``finish_reason``
    as the server gave it."""

    __slots__ = ("text", "prompt_tokens", "completion_tokens", "estimated", "latency",
                 "cached", "attempts", "model", "finish_reason")

    def __init__(self, text, prompt_tokens, completion_tokens, estimated, latency, cached,
                 attempts, model, finish_reason=None):
        self.text = text
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.estimated = estimated
        self.latency = latency
        self.cached = cached
        self.attempts = attempts
        self.model = model
        self.finish_reason = finish_reason

    def usage(self):
        return {"prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "estimated": self.estimated, "latency": round(self.latency, 6),
                "cached": self.cached, "attempts": self.attempts}


def _first_env(names):
    for n in names:
        v = os.environ.get(n)
        if v:
            return v
    return None


class ResponseCache:
    """Replies on disk, one JSON file per request under ``DIR/ab/<sha256>.json``, written
    atomically (a crash never leaves half a file). Safe to share between threads and
    between processes running the same experiment."""

    def __init__(self, directory):
        self.dir = os.fspath(directory)
        os.makedirs(self.dir, exist_ok=True)

    @staticmethod
    def key(endpoint, body):
        text = json.dumps({"endpoint": endpoint, "body": body}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _path(self, key):
        return os.path.join(self.dir, key[:2], key + ".json")

    def get(self, key):
        try:
            with open(self._path(key), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def put(self, key, entry):
        path = self._path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.%d.%d.tmp" % (path, os.getpid(), threading.get_ident())
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entry, f, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, path)


class ChatClient:
    """An OpenAI-compatible endpoint. ``base_url`` ends before ``/chat/completions``
    (``http://127.0.0.1:8000/v1``); ``api_key`` is sent as ``Authorization: Bearer`` when
    given. ``temperature``, ``max_tokens``, ``seed`` and ``extra`` (any other body members,
    e.g. ``{"top_p": 1}``) go into every chat request. ``embed_model``: the model of
    :meth:`embed` (default: ``model``). ``meter``: a CostMeter that every call is added to.
    ``sleep`` is the function backoffs wait with (tests pass a recorder)."""

    def __init__(self, base_url, model, api_key=None, *, timeout=60.0, retries=3, backoff=0.5,
                 max_backoff=8.0, concurrency=8, cache_dir=None, temperature=0.0,
                 max_tokens=None, seed=None, extra=None, embed_model=None,
                 max_reply_bytes=4 << 20, meter=None, max_failures=None, sleep=time.sleep):
        if not base_url:
            raise ValueError("no base URL: give --base-url or set POLIS_LLM_BASE_URL")
        if not model:
            raise ValueError("no model: give --model or set POLIS_LLM_MODEL")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("base URL %r is not http(s)://HOST[:PORT]/PATH" % base_url)
        if timeout <= 0 or retries < 0 or concurrency < 1 or backoff < 0:
            raise ValueError("timeout must be > 0, retries >= 0, concurrency >= 1, "
                             "backoff >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.concurrency = int(concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.extra = dict(extra or {})
        self.embed_model = embed_model or model
        self.max_reply_bytes = int(max_reply_bytes)
        self.cache = ResponseCache(cache_dir) if cache_dir else None
        self.meter = meter
        self.max_failures = max_failures
        self._streak = 0  # calls failed for good in a row (successes and cache hits reset it)
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._jitter = random.Random(0)
        self._jitter_lock = threading.Lock()

    @classmethod
    def from_env(cls, base_url=None, model=None, api_key=None, **kw):
        """Fills what is not given from the environment: ``POLIS_LLM_BASE_URL`` (else
        ``OPENAI_BASE_URL``), ``POLIS_LLM_MODEL``, ``POLIS_LLM_API_KEY`` (else
        ``OPENAI_API_KEY``), ``POLIS_LLM_EMBED_MODEL``."""
        if not kw.get("embed_model"):
            kw["embed_model"] = _first_env(ENV_EMBED_MODEL)
        return cls(base_url or _first_env(ENV_BASE_URL), model or _first_env(ENV_MODEL),
                   api_key or _first_env(ENV_API_KEY), **kw)

    # ---- the wire -------------------------------------------------------------------------

    def _post(self, endpoint, body):
        """One attempt: the parsed JSON reply, or _Retryable / LLMError."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        req = urllib.request.Request(self.base_url + endpoint, data=data, headers=headers,
                                     method="POST")
        deadline = time.monotonic() + self.timeout
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = self._read(resp, deadline)
                status = resp.status
        except urllib.error.HTTPError as e:
            try:
                raw = self._read(e, deadline)
            except _Retryable:
                raw = b""
            finally:
                e.close()
            reason = _server_reason(raw) or e.reason or "no reason given"
            msg = "HTTP %d from %s: %s" % (e.code, endpoint, reason)
            if e.code in RETRY_STATUS:
                raise _Retryable(msg, e.code, _retry_after(e.headers)) from None
            raise LLMError(msg, e.code) from None
        except (socket.timeout, TimeoutError):
            raise _Retryable("no reply within %gs (timeout)" % self.timeout) from None
        except urllib.error.URLError as e:
            r = e.reason
            if isinstance(r, (socket.timeout, TimeoutError)):
                raise _Retryable("no reply within %gs (timeout)" % self.timeout) from None
            raise _Retryable("cannot reach %s: %s" % (self.base_url, r)) from None
        except (http.client.HTTPException, ConnectionError, OSError) as e:
            raise _Retryable("the connection failed: %s" % (e or type(e).__name__)) from None
        try:
            reply = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _Retryable("HTTP %d from %s: the reply is not JSON (%d bytes: %r)"
                             % (status, endpoint, len(raw), raw[:80])) from None
        if not isinstance(reply, dict):
            raise _Retryable("the reply from %s is not a JSON object" % endpoint)
        if "error" in reply and reply["error"]:
            raise _Retryable("%s: %s" % (endpoint, _server_reason(raw)))
        return reply

    def _read(self, resp, deadline):
        chunks, n = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Retryable("the reply did not arrive within %gs (timeout)" % self.timeout)
            try:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
            except (socket.timeout, TimeoutError):
                raise _Retryable("the reply did not arrive within %gs (timeout)"
                                 % self.timeout) from None
            if not chunk:
                return b"".join(chunks)
            n += len(chunk)
            if n > self.max_reply_bytes:
                raise _Retryable("the reply is larger than %d bytes (max_reply_bytes)"
                                 % self.max_reply_bytes)
            chunks.append(chunk)

    def _request(self, endpoint, body):
        """The reply of ``body`` with retries: (reply, attempts, seconds)."""
        attempt = 0
        t0 = time.monotonic()
        while True:
            attempt += 1
            try:
                with self._slots:
                    reply = self._post(endpoint, body)
                return reply, attempt, time.monotonic() - t0
            except _Retryable as e:
                if attempt > self.retries:
                    raise LLMError("%s (after %d attempt%s)" % (e.reason, attempt,
                                                               "" if attempt == 1 else "s"),
                                   e.status, attempt) from None
                wait = min(self.backoff * (2 ** (attempt - 1)), self.max_backoff)
                if e.retry_after is not None:
                    wait = min(max(wait, e.retry_after), self.max_backoff)
                with self._jitter_lock:
                    wait *= 1 + 0.1 * self._jitter.random()
                self._sleep(wait)
            except LLMError as e:
                e.attempts = attempt
                raise

    # ---- chat -------------------------------------------------------------------------------

    def request_body(self, messages, **params):
        """The JSON body :meth:`chat` sends (and keys the cache with)."""
        body = {"model": params.pop("model", None) or self.model, "messages": messages}
        t = params.pop("temperature", self.temperature)
        if t is not None:
            body["temperature"] = t
        mt = params.pop("max_tokens", self.max_tokens)
        if mt is not None:
            body["max_tokens"] = mt
        seed = params.pop("seed", self.seed)
        if seed is not None:
            body["seed"] = seed
        body.update(self.extra)
        body.update(params)
        return body

    def chat(self, messages, *, agent=None, **params):
        """Asks for one completion of ``messages`` (a list of ``{"role", "content"}``, or a
        string: one user message). Returns a :class:`Completion`; raises :class:`LLMError`
        when every attempt failed. ``agent`` names whom the meter books it to."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        body = self.request_body(messages, **params)
        key = self.cache.key("/chat/completions", body) if self.cache else None
        entry = self.cache.get(key) if key else None
        if entry is not None:
            c = self._completion(entry["reply"], messages, entry.get("latency", 0.0), 0)
            c.cached = True
        else:
            try:
                reply, attempts, secs = self._request("/chat/completions", body)
                c = self._completion(reply, messages, secs, attempts)
            except LLMError as e:
                if self.meter is not None:
                    self.meter.add_error(agent, e.attempts)
                self._failed(e)
                raise
            if key:
                self.cache.put(key, {"request": body, "reply": reply, "latency": secs})
        self._streak = 0
        if self.meter is not None:
            self.meter.add(agent, c, body["model"])
        return c

    def _completion(self, reply, messages, latency, attempts):
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMError("the reply has no choices: %s" % json.dumps(reply)[:200], None,
                           attempts)
        ch = choices[0]
        msg = ch.get("message") or {}
        text = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(text, str):
            text = ch.get("text") if isinstance(ch.get("text"), str) else ""
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
        estimated = not (isinstance(pt, int) and isinstance(ct, int))
        if estimated:
            pt, ct = messages_tokens(messages), count_tokens(text)
        return Completion(text, pt, ct, estimated, latency, False, attempts,
                          reply.get("model") or self.model, ch.get("finish_reason"))

    def _failed(self, e):
        with self._jitter_lock:
            self._streak += 1
            streak = self._streak
        if self.max_failures is not None and streak >= self.max_failures:
            raise ModelUnavailable("%d calls in a row failed (the last: %s); giving up "
                                   "(max_failures)" % (streak, e.reason), e.status,
                                   e.attempts) from None

    def chat_many(self, requests):
        """Asks every request at once (at most ``concurrency`` in flight): ``requests`` is a
        list of ``(messages, kwargs)``; returns, in the same order, a Completion or the
        LLMError of each."""
        def one(r):
            messages, kw = r
            try:
                return self.chat(messages, **kw)
            except ModelUnavailable:
                raise
            except LLMError as e:
                return e
        if len(requests) <= 1:
            return [one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as ex:
            return list(ex.map(one, requests))

    # ---- embeddings -------------------------------------------------------------------------

    def embed(self, texts, *, agent=None):
        """Embedding vectors of ``texts`` (a list of strings) from ``/embeddings`` with
        ``embed_model``, cached like chat replies. LLMError on failure."""
        body = {"model": self.embed_model, "input": list(texts)}
        key = self.cache.key("/embeddings", body) if self.cache else None
        entry = self.cache.get(key) if key else None
        cached = entry is not None
        if cached:
            reply = entry["reply"]
        else:
            try:
                reply, attempts, secs = self._request("/embeddings", body)
            except LLMError as e:
                if self.meter is not None:
                    self.meter.add_error(agent, e.attempts)
                self._failed(e)
                raise
        data = reply.get("data")
        if not isinstance(data, list) or len(data) != len(body["input"]):
            raise LLMError("the embeddings reply has %s vectors for %d inputs"
                           % (len(data) if isinstance(data, list) else "no",
                              len(body["input"])))
        data = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
        vecs = []
        for d in data:
            v = d.get("embedding") if isinstance(d, dict) else None
            if not isinstance(v, list) or not all(isinstance(x, (int, float)) for x in v):
                raise LLMError("an embedding is not a list of numbers")
            vecs.append([float(x) for x in v])
        if not cached and key:
            self.cache.put(key, {"request": body, "reply": reply, "latency": secs})
        if self.meter is not None:
            usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
            pt = usage.get("prompt_tokens")
            est = not isinstance(pt, int)
            if est:
                pt = sum(count_tokens(t) for t in body["input"])
            self.meter.add_embedding(agent, pt, est, 0 if cached else secs, cached,
                                     self.embed_model)
        return vecs


def _server_reason(raw):
    """The message of an OpenAI-style error body, else its text (cut), else None."""
    if not raw:
        return None
    try:
        j = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return raw.decode("utf-8", "replace").strip()[:200] or None
    if isinstance(j, dict):
        err = j.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if isinstance(err, str):
            return err[:500]
        if j.get("message"):
            return str(j["message"])[:500]
    return None


def _retry_after(headers):
    v = headers.get("Retry-After") if headers else None
    try:
        return max(0.0, float(v)) if v is not None else None
    except ValueError:
        return None
