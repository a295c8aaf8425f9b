"""An LLM in a seat: ``py:polis.rl.llm_seat:make?model=NAME&base_url=URL`` in ``polis eval
--seat``, ``--focal``/``--background``, a population's ``{"python": ...}`` member, ``polis
sweep`` or ``polis serve --http --seat`` (docs/policies.md).

The policy asks for the seats' text views (the seat protocol's ``"text"`` view: what ``polis
render --format text`` shows, ending with the legal actions), sends one prompt per seat —
the game's action names, the view, and "answer with Action: <name>" — to an
OpenAI-compatible endpoint through ``polis.llm.ChatClient`` (every seat of a tick at once,
with its deadlines, retries and optional cache), and maps each answer to an action: the
named action when it is legal now, else the first legal action (counted in ``fallbacks``,
printed to stderr when the process ends).

Options (``?key=value&...``): ``model``, ``base_url`` (default ``$POLIS_LLM_BASE_URL``,
``$POLIS_LLM_MODEL``), ``cache`` (a directory), ``timeout`` (seconds), ``mock=1`` (polis.llm's
local mock model, no network: for tests and trying it out), and the user's prices (dollars
per million tokens, docs/llm.md "Costs"): ``prices=FILE`` (a price table) or
``price_prompt=P&price_completion=C`` for ``model``.

What each episode cost is reported through the seat protocol's ``end`` request
(docs/policies.md), so ``polis eval`` and ``polis sweep`` add it to the episode's metrics, in
total and per seat: ``llm.calls``, ``llm.cached``, ``llm.errors``, ``llm.fallbacks``,
``llm.prompt_tokens``, ``llm.completion_tokens`` (the API's usage, else counted),
``llm.latency_s`` (seconds waited for the model) and, with prices, ``llm.cost`` (dollars;
null when the model has no price in the table).
"""

from __future__ import annotations

import atexit
import re
import sys

import numpy as np

from .policy import Policy

_ACTION = re.compile(r"Action:\s*([^\n]+)", re.IGNORECASE)

SYSTEM = ("You play one agent of a multi-agent game. Each turn you see your view of the game; "
          "its last line lists the actions legal now. Answer with one line: "
          "Action: <an action name>.")


class LLMPolicy(Policy):
    views = ("text",)
    wants_seats = True

    def __init__(self, client, mock=None, priced=False):
        from ..llm import CostMeter
        self.client = client
        self.mock = mock
        self.priced = priced
        self.name = f"llm:{client.model}"
        self.actions = ()
        self.fallbacks = 0
        self.asked = 0
        if client.meter is None:
            client.meter = CostMeter()
        self.episode_fallbacks = {}
        atexit.register(self._report)

    def reset(self, seats):
        self.client.meter.reset()
        self.episode_fallbacks = {}

    def _figures(self, row, fallbacks):
        from ..llm.cost import figures
        return figures(row, fallbacks, self.priced)

    def episode_stats(self, seats):
        """The episode's figures: the totals over its seats, and each seat's."""
        totals = self.client.meter.totals()
        zero = {k: 0 for k in totals["total"]}
        per_seat = {s: self._figures(totals.get(str(s), zero), self.episode_fallbacks.get(s, 0))
                    for s in seats}
        return (self._figures(totals["total"], sum(self.episode_fallbacks.values())),
                per_seat)

    def _report(self):
        if self.asked:
            print(f"polis.rl.llm_seat: {self.asked} answers, {self.fallbacks} not a legal "
                  f"action (the first legal one was taken)", file=sys.stderr)
        if self.mock is not None:
            self.mock.stop()

    def check(self, spec):
        self.actions = tuple(spec.actions)

    def act(self, obs, mask, text=None, seats=None):
        mask = np.asarray(mask)
        texts = list(text or [""] * len(mask))
        seats = list(seats) if seats is not None else list(range(len(mask)))
        reqs = [([{"role": "system", "content": SYSTEM},
                  {"role": "user", "content": f"{t}\n\nAction:"}], {"agent": str(seats[i])})
                for i, t in enumerate(texts)]
        replies = self.client.chat_many(reqs)
        out = []
        for i, rep in enumerate(replies):
            self.asked += 1
            legal = [a for a in range(len(mask[i])) if mask[i][a]]
            content = getattr(rep, "text", "") if not isinstance(rep, Exception) else ""
            m = _ACTION.search(content or "")
            name = m.group(1).strip().strip(".`'\"").split()[0] if m and m.group(1).strip() else ""
            if name in self.actions and self.actions.index(name) in legal:
                out.append(self.actions.index(name))
            else:
                self.fallbacks += 1
                self.episode_fallbacks[seats[i]] = self.episode_fallbacks.get(seats[i], 0) + 1
                out.append(legal[0] if legal else 0)
        return out


def make(model=None, base_url=None, cache=None, timeout="60", mock="0", prices=None,
         price_prompt=None, price_completion=None):
    from ..llm import ChatClient, CostMeter, PriceTable
    from .policy import PolicyError
    try:
        table = PriceTable.load(prices) if prices else PriceTable()
        pp = None if price_prompt is None else float(price_prompt)
        pc = None if price_completion is None else float(price_completion)
    except ValueError as e:
        raise PolicyError(f"polis.rl.llm_seat: prices: {e}") from None
    server = None
    if str(mock).lower() in ("1", "true", "yes"):
        from ..llm.mock import MockServer
        server = MockServer()
        server.start()
        base_url, model = server.url, model or "mock"
    try:
        client = ChatClient.from_env(base_url=base_url, model=model, timeout=float(timeout),
                                     cache_dir=cache)
        if pp is not None or pc is not None:
            table = PriceTable(dict(table.prices, **{client.model: {
                "prompt": pp or 0.0, "completion": pc or 0.0}}))
    except ValueError as e:
        if server is not None:
            server.stop()
        raise PolicyError(f"polis.rl.llm_seat: {e}") from None
    client.meter = CostMeter(table)
    return LLMPolicy(client, server, priced=bool(prices) or pp is not None or pc is not None)
