"""The command line of polis.llm (docs/llm.md).

    python3 -m polis.llm run SCENARIO... --base-url URL --model NAME [--episodes N] --out DIR
    python3 -m polis.llm mock [--port P]

``run`` plays every LLM scenario file given (a directory: every LLM scenario in it, a
scenario set) ``--episodes`` times and writes a recording per episode and results.jsonl
under ``--out`` (polis/llm/runner.py). The endpoint comes from the flags, else from
``POLIS_LLM_BASE_URL`` / ``POLIS_LLM_MODEL`` / ``POLIS_LLM_API_KEY`` (``OPENAI_BASE_URL``,
``OPENAI_API_KEY`` also work). Exit status: 0 done, 1 a run failed (the message says where),
2 a usage error.

``mock`` serves :class:`polis.llm.mock.MockServer` until interrupted, printing its URL: a
model that plays polis's prompts in their formats, to try a run without a real one.
"""
import argparse
import json
import sys
import time

from .client import ChatClient, LLMError
from .cost import CostMeter, PriceTable


def _parser():
    ap = argparse.ArgumentParser(prog="python3 -m polis.llm",
                                 description="LLM agents for polis (docs/llm.md)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run LLM scenarios (files or scenario-set directories)")
    r.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    r.add_argument("--base-url", help="the endpoint, e.g. http://127.0.0.1:8000/v1 "
                   "(default: $POLIS_LLM_BASE_URL, else $OPENAI_BASE_URL)")
    r.add_argument("--model", help="the model name (default: $POLIS_LLM_MODEL)")
    r.add_argument("--api-key", help="sent as a Bearer token (default: $POLIS_LLM_API_KEY, "
                   "else $OPENAI_API_KEY; none for local servers)")
    r.add_argument("--embed-model", help="a model for /embeddings: memory retrieval by "
                   "embedding similarity (default: the lexical fallback, no embeddings)")
    r.add_argument("--episodes", type=int, default=1, help="episodes per scenario (default 1)")
    r.add_argument("--seed", type=int, help="the first episode's seed (default: the "
                   "scenario's); episode k uses seed + k")
    r.add_argument("--out", required=True, help="directory for recordings and results.jsonl")
    r.add_argument("--cache", help="a response cache directory: a rerun is answered from it "
                   "(free and identical)")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per request "
                   "(default 120)")
    r.add_argument("--retries", type=int, default=3, help="retries on 429/5xx/timeouts "
                   "(default 3)")
    r.add_argument("--concurrency", type=int, default=8,
                   help="requests in flight at once (default 8)")
    r.add_argument("--temperature", type=float, default=0.0)
    r.add_argument("--max-tokens", type=int)
    r.add_argument("--request-seed", type=int, help='sent as the request\'s "seed" (servers '
                   "that support it sample reproducibly)")
    r.add_argument("--prices", help='a JSON price table {model: {"prompt": $/1M, '
                   '"completion": $/1M}}')
    r.add_argument("--price-prompt", type=float, help="$ per million prompt tokens of --model")
    r.add_argument("--price-completion", type=float,
                   help="$ per million completion tokens of --model")
    r.add_argument("--quiet", action="store_true", help="no line per episode")
    m = sub.add_parser("mock", help="serve the mock model on 127.0.0.1")
    m.add_argument("--port", type=int, default=0, help="default 0: any free port")
    return ap


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)
    if args.cmd == "mock":
        from .mock import MockServer
        with MockServer(port=args.port) as srv:
            print("polis.llm mock: serving %s (Ctrl-C ends it)" % srv.url, flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
    if args.episodes < 1:
        ap.error("--episodes must be at least 1")
    try:
        prices = PriceTable.load(args.prices) if args.prices else PriceTable()
    except ValueError as e:
        ap.error("--prices: %s" % e)
    try:
        client = ChatClient.from_env(
            args.base_url, args.model, args.api_key, timeout=args.timeout,
            retries=args.retries, concurrency=args.concurrency, cache_dir=args.cache,
            temperature=args.temperature, max_tokens=args.max_tokens, seed=args.request_seed,
            embed_model=args.embed_model)
    except ValueError as e:
        ap.error(str(e))
    if args.price_prompt is not None or args.price_completion is not None:
        prices.prices[client.model] = {"prompt": args.price_prompt or 0.0,
                                       "completion": args.price_completion or 0.0}
    client.meter = CostMeter(prices)
    client.embed_enabled = bool(args.embed_model)
    from .runner import SpecError, run
    try:
        lines = run(args.scenarios, client, args.out, args.episodes, args.seed,
                    log=(lambda s: None) if args.quiet else print)
    except SpecError as e:
        print("polis.llm: %s" % e, file=sys.stderr)
        return 1
    except LLMError as e:
        print("polis.llm: the model failed: %s" % e, file=sys.stderr)
        return 1
    except Exception as e:  # the engine's errors name the place; say which run it was
        print("polis.llm: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    if not args.quiet:
        total = {}
        for ln in lines:
            for k, v in ln["costs"]["total"].items():
                if isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        print("%d episode%s: %s" % (len(lines), "" if len(lines) == 1 else "s",
                                    json.dumps({k: round(v, 6) for k, v in total.items()})))
    return 0
