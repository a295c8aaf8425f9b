#!/usr/bin/env python3
"""An LLM-agent driver for polis over the agent protocol (docs/clients.md). Stdlib and the
SDK's protocol client (sdk/python/polis/protocol.py, found beside this file when polis is
not installed).

It starts `polis serve SCENARIO --stdio` (the binary given by --polis, else $POLIS_BIN,
else build/polis of this source tree, else polis in PATH) and resets. When the scenario offers plan
commands (macros such as GATHER <n> <resource> or EXPLORE, listed by "describe"), it plays
at that level: each agent's "model" is asked for a plan, the server runs every plan with
{"op": "advance"} until one of them ends, and only the agents whose plan ended are asked
again, with the outcome ("done: gathered 3 wood", "impossible: no wood in view").
Otherwise (or with --primitive) every step asks each agent for a primitive action. By
default the model is a scripted stand-in (choose_*_offline), so the example runs offline; with
--llm it asks an OpenAI-compatible endpoint through polis.llm (--base-url, --model,
--api-key, else $POLIS_LLM_BASE_URL, $POLIS_LLM_MODEL, $POLIS_LLM_API_KEY; an Ollama, vLLM or
llama.cpp server works the same), every agent of a step at once, with polis.llm's timeouts,
retries and (--cache DIR) response cache; --mock starts polis.llm's local mock model instead
of a real one. An answer the server refuses (code "bad_action",
"illegal_action" or "bad_plan") is re-asked with the server's message, TextArena style, up
to a bounded number of times; after that the agent is left out, which makes it do noop.
At the end it prints the episode's metrics as the server reports them (the figures `polis
eval` gives an RL policy), when the episode ended within --steps.

    python3 examples/llm_agent.py rulesets/gather/gather.json --steps 20 --sloppy 0.2
    python3 examples/llm_agent.py rulesets/exploration/exploration.json --polis build/polis
    python3 examples/llm_agent.py rulesets/contract/contract.json --steps 120 --primitive
    python3 examples/llm_agent.py rulesets/gather/gather.json --llm \
        --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b
    python3 examples/llm_agent.py rulesets/exploration/exploration.json --llm --mock --steps 40

For the generative-agent architecture, LLM-C and whole experiments with recordings and costs,
see `python3 -m polis.llm run` (docs/llm.md).

With --connect HOST:PORT it starts no server: it joins a live game that people may be playing
in their browsers (`polis serve SCENARIO --http 8080 --tcp 7000 --seat agent_1=client`,
docs/clients.md, "Live games") and plays the client seats it is given, the same way.

    python3 examples/llm_agent.py --connect 127.0.0.1:7000 --steps 50
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    from polis.protocol import Client, ProtocolError, find_polis
except ImportError:  # run from a source checkout: the SDK is in ../sdk/python
    sys.path.insert(0, os.path.join(HERE, "..", "sdk", "python"))
    from polis.protocol import Client, ProtocolError, find_polis
from polis.llm.client import ChatClient, LLMError

SYSTEM_PROMPT = (
    "You are {agent} in a grid world. Each turn you get what you see, ending with the list "
    "of legal actions. Answer with one line 'Action: <action>', where <action> is one of the "
    "legal actions or a text action such as 'move north'. The actions:\n{docs}"
)


PLAN_PROMPT = (
    "You are {agent} in a grid world. You act through plans that run over many ticks; you "
    "are asked again when your plan ends. Answer with one line 'Plan: <command>', where "
    "<command> is one of:\n{commands}"
)

REFUSED = ("bad_action", "illegal_action", "bad_plan")


def action_docs(info):
    """The actions with their docs from "describe", one line each; a family ("share_map_0"
    .. "share_map_7") as one line with its first doc."""
    lines, seen = [], set()
    for name in info["actions"]:
        m = re.fullmatch(r"(.*)_(\d+)", name)
        family = [n for n in info["actions"] if m and re.fullmatch(re.escape(m.group(1)) +
                                                                   r"_\d+", n)]
        if len(family) > 2:
            if m.group(1) in seen:
                continue
            seen.add(m.group(1))
            lines.append("  %s_0..%d: %s (..)" % (m.group(1), len(family) - 1,
                                                  info["action_docs"].get(name, "")))
        else:
            lines.append("  %s: %s" % (name, info["action_docs"].get(name, "")))
    return "\n".join(lines)


def build_prompt(agent, view, docs, feedback):
    """What an LLM would be sent: the rules with the action docs, the text view (its last
    line lists the legal actions, from the mask), and the server's reason when the previous
    answer was refused. Without a text view: the JSON view and the legal actions."""
    parts = [SYSTEM_PROMPT.format(agent=agent, docs=docs), ""]
    if view["text"]:
        parts.append(view["text"].rstrip("\n"))
    else:
        parts += [json.dumps(view["observation"]), "",
                  "Legal actions: " + ", ".join(view["legal_actions"])]
    if feedback:
        parts += ["", "Your previous action was refused: " + feedback + " Try again."]
    return "\n".join(parts)


def choose_action_llm(prompt, args, agent=None):
    """The model's answer to `prompt` (polis.llm's client: deadline, retries, cache). A call
    that fails for good answers "" (the server then refuses it and the agent is re-asked,
    or left out after --retries)."""
    try:
        return args.client.chat(prompt, agent=agent).text
    except LLMError as e:
        print("%s: the model failed: %s" % (agent, e), file=sys.stderr)
        return ""


def ask_all(asks, args):
    """{agent: answer} for {agent: prompt}: every agent at once (at most --concurrency calls
    in flight)."""
    agents = list(asks)
    out = args.client.chat_many([(asks[a], {"agent": a}) for a in agents])
    return {a: (r.text if not isinstance(r, LLMError) else "") for a, r in zip(agents, out)}


def choose_action_offline(prompt, legal, rng):
    """The scripted stand-in: answers like a model would ('Action: ...'), preferring to
    move, and picking among the legal actions it was shown."""
    moves = [a for a in legal if a.startswith("move_")] or legal
    return "Thoughts: I will keep exploring.\nAction: " + rng.choice(moves).replace("_", " ")


def build_plan_prompt(agent, view, macros, outcome, feedback):
    """The plan-level prompt: the commands with their docs, what the agent sees, how its
    last plan went, and the server's reason when the previous answer was refused."""
    commands = "\n".join("  %s: %s" % (m["usage"], m["doc"]) for m in macros)
    parts = [PLAN_PROMPT.format(agent=agent, commands=commands), "",
             view["text"] or json.dumps(view["observation"])]
    if outcome:
        parts += ["", "Your last plan: " + outcome]
    if feedback:
        parts += ["", "Your previous plan was refused: " + feedback + " Try again."]
    return "\n".join(parts)


def choose_plan_offline(macros, legal, feedback, rng):
    """The scripted stand-in at the plan level: picks a macro and fills in its usage's
    placeholders (counts 1..3, coordinates 0..7, names from the reason of a refusal when it
    lists them, else from the legal actions' names such as pick_wood; optional [parts] half
    of the time)."""
    names = []
    if feedback:
        for group in re.findall(r"\(([^()]*)\)", feedback):
            names += [w.strip() for w in group.split(",") if re.fullmatch(r"[a-z_]+", w.strip())]
    if not names:
        names = sorted({a.split("_", 1)[1] for a in legal
                        if "_" in a and not a.split("_", 1)[1][-1].isdigit()})
    m = rng.choice(macros)
    words = [m["name"]]
    for token in m["usage"].split()[1:]:
        inner = token.strip("[]")
        if token.startswith("[") and rng.random() < 0.5:
            continue  # an optional part, left out
        if not inner.startswith("<"):
            words.append(inner)  # a literal keyword
            continue
        t = inner.strip("<>").lower()
        if t in ("n", "count", "amount", "number", "ticks"):
            words.append(str(rng.randint(1, 3)))
        elif t in ("x", "y", "row", "col", "column"):
            words.append(str(rng.randint(0, 7)))
        else:
            words.append(rng.choice(names) if names else t)
    return "Thoughts: this looks useful now.\nPlan: " + " ".join(words)


def ask_plan(agent, view, macros, outcome, feedback, args, rng):
    prompt = build_plan_prompt(agent, view, macros, outcome, feedback)
    if args.llm:
        return parse_answer(choose_action_llm(prompt, args, agent), "plan")
    if not feedback and rng.random() < args.sloppy:
        return "FLY to the moon"  # what a model gets wrong now and then
    return parse_answer(choose_plan_offline(macros, view["legal_actions"], feedback, rng),
                        "plan")


def ask_model(agent, view, docs, feedback, args, rng):
    prompt = build_prompt(agent, view, docs, feedback)
    if args.llm:
        return parse_answer(choose_action_llm(prompt, args, agent))
    if not feedback and rng.random() < args.sloppy:
        return "dance wildly"  # what a model gets wrong now and then
    return parse_answer(choose_action_offline(prompt, view["legal_actions"], rng))


def parse_answer(text, key="action"):
    """The text after 'Action:' (or 'Plan:'), as the server expects it."""
    for line in text.splitlines():
        if line.strip().lower().startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return text.strip()


def send_with_retries(server, op, actions, ask, args, **extra):
    """Sends a step or advance; an answer the server refuses is re-asked (ask(agent,
    message)) up to --retries times, then that agent is left out. Returns the reply and
    the number of refusals."""
    tries, refused = {}, 0
    while True:
        reply = server.request(op, actions=actions, **extra)
        if reply["ok"]:
            return reply, refused
        err = reply["error"]
        agent = err["agent"]
        if err["code"] not in REFUSED or agent not in actions:
            raise RuntimeError("server refused the %s: %s" % (op, err["message"]))
        refused += 1
        tries[agent] = tries.get(agent, 0) + 1
        if tries[agent] > args.retries:
            del actions[agent]
        else:
            actions[agent] = ask(agent, err["message"])


def play_plans(server, info, mine, reply, args, rng):
    """The plan-level loop for the agents `mine`: ask those without a running plan for one,
    advance until a plan ends, repeat. Returns (final reply, returns, refusals, plans
    ended)."""
    macros = info["macros"]
    totals = {agent: 0.0 for agent in mine}
    outcome = {agent: None for agent in mine}
    refused = ended = 0
    while not reply["done"] and reply["tick"] < args.steps:
        views = reply["agents"]
        idle = [a for a in mine
                if not views[a].get("terminated") and not views[a].get("truncated")
                and (views[a].get("plan") or {}).get("status") != "running"]
        if args.llm:  # every idle agent at once
            answers = ask_all({a: build_plan_prompt(a, views[a], macros, outcome[a], None)
                               for a in idle}, args)
            plans = {a: {"plan": parse_answer(answers[a], "plan")} for a in idle}
        else:
            plans = {a: {"plan": ask_plan(a, views[a], macros, outcome[a], None, args, rng)}
                     for a in idle}

        def reask(agent, message):
            return {"plan": ask_plan(agent, views[agent], macros, outcome[agent], message,
                                     args, rng)}

        reply, n = send_with_retries(server, "advance", plans, reask, args,
                                     max_ticks=args.steps - reply["tick"])
        refused += n
        notes = []
        for agent, res in reply["agents"].items():
            totals[agent] += res["reward"]
            plan = res.get("plan")
            if plan and plan["status"] != "running":
                ended += 1
                outcome[agent] = "%s: %s (%s)" % (plan["command"], plan["status"], plan["why"])
                notes.append("%s %s" % (agent, outcome[agent]))
        print("tick %d (+%d, %s): %s" % (reply["tick"], reply["ticks"], reply["stopped"],
                                         "; ".join(notes) or "no plan ended"))
    return reply, totals, refused, ended


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?",
                    help="the scenario to serve (not with --connect)")
    ap.add_argument("--connect", metavar="HOST:PORT", default=None,
                    help="join a live game's client seats (polis serve SCENARIO --http ... "
                         "--tcp HOST:PORT) instead of starting a server")
    ap.add_argument("--polis", default=None,
                    help="the polis binary (default: $POLIS_BIN, else build/polis of this "
                         "source tree, else polis in PATH)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--retries", type=int, default=2, help="re-asks after a refused action")
    ap.add_argument("--llm", action="store_true",
                    help="ask an OpenAI-compatible model (--base-url, --model) instead of the "
                         "offline stand-in")
    ap.add_argument("--base-url", help="the model's endpoint, e.g. http://127.0.0.1:8000/v1 "
                    "(default: $POLIS_LLM_BASE_URL)")
    ap.add_argument("--model", help="the model name (default: $POLIS_LLM_MODEL)")
    ap.add_argument("--api-key", help="default: $POLIS_LLM_API_KEY (none for local servers)")
    ap.add_argument("--cache", help="a response cache directory (a rerun is free and identical)")
    ap.add_argument("--concurrency", type=int, default=8, help="model calls in flight at once")
    ap.add_argument("--mock", action="store_true",
                    help="with --llm: start polis.llm's local mock model and ask it")
    ap.add_argument("--primitive", action="store_true",
                    help="ask for primitive actions every step even when the scenario has "
                         "plan commands")
    ap.add_argument("--sloppy", type=float, default=0.0,
                    help="how often the offline stand-in answers nonsense (0..1), to show "
                         "the re-ask path")
    ap.add_argument("--check", action="store_true",
                    help="fail unless every step ran (and, with --sloppy, some action was "
                         "refused and re-asked; with plans, some plan ended)")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    mock = None
    if args.llm:
        if args.mock:
            from polis.llm.mock import MockServer
            mock = MockServer().start()
            args.base_url, args.model = mock.url, args.model or "mock"
        try:
            args.client = ChatClient.from_env(args.base_url, args.model, args.api_key,
                                              cache_dir=args.cache,
                                              concurrency=args.concurrency)
        except ValueError as e:
            ap.error(str(e))
    try:
        return run(ap, args, rng)
    finally:
        if mock:
            mock.stop()


def run(ap, args, rng):
    if args.connect:
        if args.scenario:
            ap.error("give either a scenario or --connect, not both")
        host, _, port = args.connect.rpartition(":")
        if not host or not port.isdigit():
            ap.error("--connect: %r is not HOST:PORT" % args.connect)
        try:
            server = Client.connect(host, int(port), timeout=600)
        except OSError as e:
            print("llm_agent.py: --connect %s: %s" % (args.connect, e), file=sys.stderr)
            return 1
    else:
        if not args.scenario:
            ap.error("a scenario is needed (or --connect HOST:PORT)")
        try:
            polis = find_polis(args.polis, near=[HERE])
        except FileNotFoundError as e:
            print("llm_agent.py: %s" % e, file=sys.stderr)
            return 2
        server = Client.spawn(args.scenario, polis=polis)
    try:
        return play(server, args, rng)
    except ProtocolError as e:
        print("llm_agent.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        server.close()


def print_metrics(reply):
    """The figures `polis eval` reports, which the server sends when the episode ends."""
    if "metrics" in reply:
        print("metrics: " + ", ".join("%s %s" % (k, "undefined" if v is None else "%g" % v)
                                      for k, v in reply["metrics"].items()))


def play(server, args, rng):
    info = server.describe()
    docs = action_docs(info)
    print("scenario %s: agents %s, %d actions" % (info["scenario"], ", ".join(info["agents"]),
                                                 len(info["actions"])))
    # a live game chooses the seed and gives this client its seats: the reply's agents
    reply = server.reset() if "live" in info else server.reset(seed=args.seed)
    mine = list(reply["agents"])
    if "live" in info:
        print("joined the live game at tick %d, episode %d: playing %s"
              % (reply["tick"], reply["episode"], ", ".join(mine)))
    if info.get("macros") and not args.primitive:
        print("plan commands: " + ", ".join(m["usage"] for m in info["macros"]))
        reply, totals, refused, ended = play_plans(server, info, mine, reply, args, rng)
        print("returns: " + ", ".join("%s %g" % (a, r) for a, r in totals.items()))
        print("plans ended: %d; refused answers re-asked: %d" % (ended, refused))
        print_metrics(reply)
        if args.check and ((reply["tick"] != args.steps and not reply["done"]) or ended == 0
                           or (args.sloppy > 0 and refused == 0)):
            print("check failed: tick %s of %d, %d plans ended, %d refused"
                  % (reply["tick"], args.steps, ended, refused), file=sys.stderr)
            return 1
        return 0
    totals = {agent: 0.0 for agent in mine}
    refused = 0
    for _ in range(args.steps):
        if reply["done"]:
            break
        views = reply["agents"]
        live = [a for a in mine
                if not views[a].get("terminated") and not views[a].get("truncated")]
        if args.llm:  # every agent at once
            answers = ask_all({a: build_prompt(a, views[a], docs, None) for a in live}, args)
            actions = {a: parse_answer(answers[a]) for a in live}
        else:
            actions = {agent: ask_model(agent, views[agent], docs, None, args, rng)
                       for agent in live}
        # Re-ask only the agent the server named, with its reason; after --retries
        # refusals that agent is left out of the step (it does noop).
        step, n = send_with_retries(
            server, "step", actions,
            lambda agent, message: ask_model(agent, views[agent], docs, message, args, rng),
            args)
        refused += n
        reply = step
        for agent, res in reply["agents"].items():
            totals[agent] += res["reward"]
        print("tick %d: %s" % (reply["tick"], ", ".join(
            "%s %s" % (a, actions.get(a, "noop")) for a in mine)))
    print("returns: " + ", ".join("%s %g" % (a, r) for a, r in totals.items()))
    print("refused actions re-asked: %d" % refused)
    print_metrics(reply)
    if args.check and (reply.get("tick") != args.steps or (args.sloppy > 0 and refused == 0)):
        print("check failed: tick %s of %d, %d refused" % (reply.get("tick"), args.steps,
                                                           refused), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
