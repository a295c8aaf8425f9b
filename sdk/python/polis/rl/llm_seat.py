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
local mock model, no network: for tests and trying it out).
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

    def __init__(self, client, mock=None):
        self.client = client
        self.mock = mock
        self.name = f"llm:{client.model}"
        self.actions = ()
        self.fallbacks = 0
        self.asked = 0
        atexit.register(self._report)

    def _report(self):
        if self.asked:
            print(f"polis.rl.llm_seat: {self.asked} answers, {self.fallbacks} not a legal "
                  f"action (the first legal one was taken)", file=sys.stderr)
        if self.mock is not None:
            self.mock.stop()

    def check(self, spec):
        self.actions = tuple(spec.actions)

    def act(self, obs, mask, text=None):
        mask = np.asarray(mask)
        texts = list(text or [""] * len(mask))
        reqs = [([{"role": "system", "content": SYSTEM},
                  {"role": "user", "content": f"{t}\n\nAction:"}], {"agent": f"seat{i}"})
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
                out.append(legal[0] if legal else 0)
        return out


def make(model=None, base_url=None, cache=None, timeout="60", mock="0"):
    from ..llm import ChatClient
    server = None
    if str(mock).lower() in ("1", "true", "yes"):
        from ..llm.mock import MockServer
        server = MockServer()
        server.start()
        base_url, model = server.url, model or "mock"
    try:
        client = ChatClient.from_env(base_url=base_url, model=model, timeout=float(timeout),
                                     cache_dir=cache)
    except ValueError as e:
        from .policy import PolicyError
        raise PolicyError(f"polis.rl.llm_seat: {e}") from None
    return LLMPolicy(client, server)
