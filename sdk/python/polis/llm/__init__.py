"""polis.llm: LLM agents for polis (stdlib only; docs/llm.md).

- :mod:`polis.llm.client` -- an OpenAI-compatible chat/embeddings client with deadlines,
  retries, a concurrency limit and an on-disk response cache;
- :mod:`polis.llm.cost` -- token, latency and price accounting per agent;
- :mod:`polis.llm.memory` -- long-term memory with retrieval by similarity, recency and
  importance (embeddings or a lexical fallback), short-term and spatial memory;
- :mod:`polis.llm.agent` -- the generative-agent architecture (perceive, react, plan,
  reflect, act) for any game with text views and plan commands;
- :mod:`polis.llm.llmc` -- AdaSociety's LLM-C: an LLM asked for plans that the game's plan
  macros execute;
- :mod:`polis.llm.runner` -- episodes from LLM scenario files, recorded and scored;
  ``python3 -m polis.llm run ...``;
- :mod:`polis.llm.mock` -- a local OpenAI-compatible server for tests.
"""
from .client import ChatClient, Completion, LLMError, count_tokens
from .cost import CostMeter, PriceTable

__all__ = ["ChatClient", "Completion", "LLMError", "count_tokens", "CostMeter", "PriceTable"]
