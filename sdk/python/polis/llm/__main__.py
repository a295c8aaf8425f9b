"""python3 -m polis.llm: run LLM scenarios, or serve the mock model (docs/llm.md)."""
import sys

from .cli import main

sys.exit(main())
