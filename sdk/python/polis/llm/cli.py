"""The command line of polis.llm (docs/llm.md).

    python3 -m polis.llm run SCENARIO... --base-url URL --model NAME [--episodes N] --out DIR
    python3 -m polis.llm summary DIR [--metric KEY]...
    python3 -m polis.llm mock [--port P]

``run`` plays every LLM scenario file given (a directory: every LLM scenario in it, a
scenario set) ``--episodes`` times and writes a recording per episode and results.jsonl
under ``--out`` (polis/llm/runner.py). The endpoint comes from the flags, else from
``POLIS_LLM_BASE_URL`` / ``POLIS_LLM_MODEL`` / ``POLIS_LLM_API_KEY`` (``OPENAI_BASE_URL``,
``OPENAI_API_KEY`` also work). Exit status: 0 done, 1 a run failed (the message says where),
2 a usage error.

``summary`` reads DIR/results.jsonl and prints, per scenario, the mean (standard deviation)
over its episodes of the score and welfare figures (default: the Melting Pot study's and
AdaSociety's LLM-C figures, Negotiation's split ratio among them; any flattened metric with
``--metric``), the cost and the minutes per episode: the study's figures and its Appendix G
table, from one's own runs.

``mock`` serves :class:`polis.llm.mock.MockServer` until interrupted, printing its URL: a
model that plays polis's prompts in their formats, to try a run without a real one.
"""
import argparse
import json
import sys
import time

from .client import ChatClient, LLMError
from .cost import CostMeter, PriceTable


MODULES = ("react", "plan", "reflect_questions", "reflect_insights", "act", "social")


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
    r.add_argument("--module-model", action="append", default=[], metavar="MODULE=MODEL",
                   help="ask one module of another model on the same endpoint, e.g. "
                        "act=gpt-4o (the study asked GPT-4 for act, GPT-3.5 for the rest); "
                        "modules: react, plan, reflect_questions, reflect_insights, act, "
                        "social (repeatable)")
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
    r.add_argument("--max-failures", type=int, default=20,
                   help="stop the run after this many model calls in a row failed for good "
                        "(after their retries; default 20; 0: never stop)")
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
    sm = sub.add_parser("summary", help="mean (sd) per scenario of a results.jsonl")
    sm.add_argument("dir", metavar="DIR", help="a --out directory of run (or its results.jsonl)")
    sm.add_argument("--metric", action="append", default=None,
                    help="a metric key of the results (repeatable; default: the study's)")
    sm.add_argument("--json", action="store_true", help="print the table as JSON")
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
    if args.cmd == "summary":
        return summary(args)
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
            embed_model=args.embed_model, max_failures=args.max_failures or None)
    except ValueError as e:
        ap.error(str(e))
    if args.price_prompt is not None or args.price_completion is not None:
        prices.prices[client.model] = {"prompt": args.price_prompt or 0.0,
                                       "completion": args.price_completion or 0.0}
    client.meter = CostMeter(prices)
    client.module_models = {}
    for mm in args.module_model:
        mod, _, model = mm.partition("=")
        if mod not in MODULES or not model:
            ap.error("--module-model: %r is not MODULE=MODEL (modules: %s)"
                     % (mm, ", ".join(MODULES)))
        client.module_models[mod] = model
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


STUDY_METRICS = ("return.focal_per_capita", "return.background_per_capita",
                 "welfare.apples_mean", "welfare.focal.zaps", "welfare.focal.zaps_landed",
                 "welfare.focal.last_apples", "welfare.focal.last_apple_ratio",
                 "welfare.background.zaps", "welfare.background.zaps_landed",
                 "welfare.background.last_apples", "welfare.background.last_apple_ratio",
                 "fairness", "reward.mean", "total_reward_normalised",
                 "completion.hammer_craft", "completion.torch_craft",
                 "degree.group.out_max", "degree.group.out_mean", "split_ratio")
# (the last seven are AdaSociety's for LLM-C, seeds/000 Tables 3 and 9; split_ratio is
# Negotiation's Carpenters/Miners split agreed in its negotiation stage, Fig. 8e)


def _mean_sd(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    if not xs:
        return None
    m = sum(xs) / len(xs)
    sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return m, sd, len(xs)


def summary(args):
    import os
    path = args.dir if args.dir.endswith(".jsonl") else os.path.join(args.dir, "results.jsonl")
    rows = {}
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    rows.setdefault(r["scenario"], []).append(r)
                except (ValueError, KeyError, TypeError):
                    print("polis.llm: %s:%d: not a result line" % (path, n), file=sys.stderr)
                    return 1
    except OSError as e:
        print("polis.llm: %s: %s" % (path, e.strerror or e), file=sys.stderr)
        return 1
    keys = args.metric or [k for k in STUDY_METRICS
                           if any(k in r["metrics"] for rs in rows.values() for r in rs)]
    table = {}
    for scen, rs in rows.items():
        t = {"episodes": len(rs)}
        for k in keys:
            ms = _mean_sd([r["metrics"].get(k) for r in rs])
            t[k] = None if ms is None else {"mean": ms[0], "sd": ms[1]}
        for k, xs in (("cost", [r["costs"]["total"]["cost"] for r in rs]),
                      ("minutes", [r["seconds"] / 60.0 for r in rs]),
                      ("calls", [r["costs"]["total"]["calls"] for r in rs])):
            ms = _mean_sd(xs)
            t[k] = None if ms is None else {"mean": ms[0], "sd": ms[1]}
        table[scen] = t
    if args.json:
        print(json.dumps(table, indent=1, sort_keys=True))
        return 0
    cols = list(keys) + ["cost", "minutes", "calls"]
    for scen, t in table.items():
        print("%s (%d episode%s)" % (scen, t["episodes"], "" if t["episodes"] == 1 else "s"))
        for k in cols:
            v = t[k]
            print("  %-34s %s" % (k, "undefined" if v is None else "%.4g (%.3g)"
                                  % (v["mean"], v["sd"])))
    return 0
