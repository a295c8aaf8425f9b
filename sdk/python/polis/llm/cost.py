"""What model calls cost: tokens, calls, latency and money, per agent and per episode.

A :class:`PriceTable` maps model names to prices in dollars per million tokens (prompt and
completion apart; embeddings priced as prompt tokens). The user sets it: a JSON file

    {"gpt-4o-mini": {"prompt": 0.15, "completion": 0.60},
     "text-embedding-3-small": {"prompt": 0.02},
     "*": {"prompt": 0, "completion": 0}}

(``"*"`` is any other model), or two flags for the one model of a run. polis ships no
prices: they change, and a local model's price is what its hardware costs you. Without a
price the dollar figures are ``null`` and the token counts are still there.

A :class:`CostMeter` adds calls up, thread-safely, under the agent each call was made for
(None: the run's own calls). Cached answers count as calls (``cached``) with their tokens
but cost nothing and take no time: a rerun from the cache is free.
"""
import json
import threading


class PriceTable:
    def __init__(self, prices=None):
        self.prices = {}
        for model, p in (prices or {}).items():
            if not isinstance(p, dict):
                raise ValueError("prices[%r]: expected {\"prompt\": $/1M tokens, "
                                 "\"completion\": $/1M tokens}" % model)
            entry = {}
            for k in ("prompt", "completion"):
                v = p.get(k, 0.0)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                    raise ValueError("prices[%r].%s: expected a number >= 0 (dollars per "
                                     "million tokens), got %r" % (model, k, v))
                entry[k] = float(v)
            unknown = set(p) - {"prompt", "completion"}
            if unknown:
                raise ValueError("prices[%r]: unknown member %s (prompt, completion)"
                                 % (model, ", ".join(sorted(unknown))))
            self.prices[model] = entry

    @classmethod
    def load(cls, path):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise ValueError("%s: %s" % (path, e.strerror or e)) from None
        except ValueError as e:
            raise ValueError("%s: not JSON: %s" % (path, e)) from None
        if not isinstance(data, dict):
            raise ValueError("%s: expected an object {model: {prompt, completion}}" % path)
        try:
            return cls(data)
        except ValueError as e:
            raise ValueError("%s: %s" % (path, e)) from None

    def price(self, model):
        return self.prices.get(model) or self.prices.get("*")

    def cost(self, model, prompt_tokens, completion_tokens):
        p = self.price(model)
        if p is None:
            return None
        return (prompt_tokens * p["prompt"] + completion_tokens * p["completion"]) / 1e6

    def to_json(self):
        return dict(self.prices)


FIELDS = ("calls", "cached", "errors", "attempts", "prompt_tokens", "completion_tokens",
          "estimated_calls", "embedding_calls", "embedding_tokens", "latency")


def _zero():
    d = {k: 0 for k in FIELDS}
    d["latency"] = 0.0
    d["cost"] = 0.0
    d["priced"] = True
    return d


class CostMeter:
    """Totals per agent. ``totals()`` is ``{agent: {calls, cached, errors, attempts,
    prompt_tokens, completion_tokens, estimated_calls, embedding_calls, embedding_tokens,
    latency, cost}}`` plus ``"total"``; ``cost`` is None when some call's model has no
    price."""

    def __init__(self, prices=None):
        self.prices = prices if isinstance(prices, PriceTable) else PriceTable(prices)
        self._lock = threading.Lock()
        self._by = {}

    def _row(self, agent):
        key = "_run" if agent is None else str(agent)
        row = self._by.get(key)
        if row is None:
            row = self._by[key] = _zero()
        return row

    def _charge(self, row, model, pt, ct, cached):
        if cached:
            return
        c = self.prices.cost(model, pt, ct)
        if c is None:
            row["priced"] = False
        else:
            row["cost"] += c

    def add(self, agent, completion, model):
        with self._lock:
            r = self._row(agent)
            r["calls"] += 1
            r["cached"] += 1 if completion.cached else 0
            r["attempts"] += completion.attempts
            r["prompt_tokens"] += completion.prompt_tokens
            r["completion_tokens"] += completion.completion_tokens
            r["estimated_calls"] += 1 if completion.estimated else 0
            if not completion.cached:
                r["latency"] += completion.latency
            self._charge(r, model, completion.prompt_tokens, completion.completion_tokens,
                         completion.cached)

    def add_error(self, agent, attempts):
        with self._lock:
            r = self._row(agent)
            r["errors"] += 1
            r["attempts"] += attempts

    def add_embedding(self, agent, tokens, estimated, latency, cached, model):
        with self._lock:
            r = self._row(agent)
            r["embedding_calls"] += 1
            r["embedding_tokens"] += tokens
            r["estimated_calls"] += 1 if estimated else 0
            r["latency"] += latency
            self._charge(r, model, tokens, 0, cached)

    def totals(self):
        with self._lock:
            out, total = {}, _zero()
            for k in sorted(self._by):
                row = dict(self._by[k])
                for f in FIELDS:
                    total[f] += row[f]
                total["cost"] += row["cost"]
                total["priced"] = total["priced"] and row["priced"]
                out[k] = _public(row)
            out["total"] = _public(total)
            return out

    def reset(self):
        with self._lock:
            self._by = {}


# what a CostMeter row is called among an episode's figures: the seat protocol's "end" reply
# (polis.rl.llm_seat: rows of polis eval and sweep) and the "reported" member of a recording's
# end line (the runner's and eval's recordings)
FIGURES = (("llm.calls", "calls"), ("llm.cached", "cached"), ("llm.errors", "errors"),
           ("llm.prompt_tokens", "prompt_tokens"), ("llm.completion_tokens", "completion_tokens"),
           ("llm.latency_s", "latency"))


def figures(row, fallbacks=None, priced=True):
    """One ``totals()`` row as flat figures: ``llm.calls``, ``llm.cached``, ``llm.errors``,
    ``llm.prompt_tokens``, ``llm.completion_tokens``, ``llm.latency_s``, then
    ``llm.fallbacks`` (when given) and ``llm.cost`` (when ``priced``; None: a call's model
    had no price)."""
    out = {name: row[key] for name, key in FIGURES}
    if fallbacks is not None:
        out["llm.fallbacks"] = fallbacks
    if priced:
        out["llm.cost"] = row["cost"]
    return out


def episode_figures(totals, agents, fallbacks=None):
    """An episode's figures from ``CostMeter.totals()``: the totals under their names, then
    each agent's under NAME.AGENT (agents that made no call count zero), as polis eval
    names a seat process's figures. ``fallbacks``: {agent: count}, or None."""
    zero = {k: 0 for k in totals["total"]}
    fb = fallbacks or {}
    out = figures(totals["total"], sum(fb.values()) if fallbacks is not None else None)
    for a in agents:
        for k, v in figures(totals.get(str(a), zero),
                            fb.get(a, 0) if fallbacks is not None else None).items():
            out["%s.%s" % (k, a)] = v
    return out


def _public(row):
    r = {k: row[k] for k in FIELDS}
    r["latency"] = round(r["latency"], 6)
    r["cost"] = round(row["cost"], 8) if row["priced"] else None
    return r
