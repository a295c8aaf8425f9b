#!/usr/bin/env python3
"""An LLM-agent driver for polis over the agent protocol (docs/clients.md). Stdlib only.

It starts `polis serve SCENARIO --stdio`, resets, and every step asks each agent's "model"
for an action given the agent's text observation and its legal actions. The model here is
a scripted stand-in (choose_action_offline) so the example runs offline; replace it with
a real LLM call in choose_action_llm. An action the server refuses (code "bad_action" or
"illegal_action") is re-asked with the server's message, TextArena style, up to a bounded
number of times; after that the agent is left out of the step, which makes it do noop.

    python3 examples/llm_agent.py rulesets/gather/gather.json --steps 20 --sloppy 0.2
    python3 examples/llm_agent.py rulesets/exploration/exploration.json --polis build/polis
"""
import argparse
import json
import random
import subprocess
import sys

SYSTEM_PROMPT = (
    "You are {agent} in a grid world. Each turn you get what you see and the list of "
    "legal actions. Answer with one line 'Action: <action>', where <action> is one of the "
    "legal actions or a text action such as 'move north'."
)


class PolisServer:
    """One `polis serve --stdio` process: one request line in, one reply line out."""

    def __init__(self, polis, scenario, on_bad_action="error"):
        self.proc = subprocess.Popen(
            [polis, "serve", scenario, "--stdio", "--on-bad-action", on_bad_action],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def request(self, **msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("polis serve exited (see its stderr)")
        return json.loads(line)

    def close(self):
        try:
            self.request(op="close")
        finally:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc.stdout.close()


def build_prompt(agent, view, feedback):
    """What an LLM would be sent: the rules, the text view, the legal actions, and the
    server's reason when the previous answer was refused."""
    parts = [SYSTEM_PROMPT.format(agent=agent), "", view["text"] or json.dumps(
        view["observation"]), "", "Legal actions: " + ", ".join(view["legal_actions"])]
    if feedback:
        parts += ["", "Your previous action was refused: " + feedback + " Try again."]
    return "\n".join(parts)


def choose_action_llm(prompt):
    """Where the LLM call goes: send `prompt` to your model and return its answer text,
    e.g. with an OpenAI-compatible client:
        reply = client.chat.completions.create(model=..., messages=[
            {"role": "user", "content": prompt}])
        return reply.choices[0].message.content
    """
    raise NotImplementedError("plug your model in here, or run with --offline (default)")


def choose_action_offline(prompt, legal, rng):
    """The scripted stand-in: answers like a model would ('Action: ...'), preferring to
    move, and picking among the legal actions it was shown."""
    moves = [a for a in legal if a.startswith("move_")] or legal
    return "Thoughts: I will keep exploring.\nAction: " + rng.choice(moves).replace("_", " ")


def ask_model(agent, view, feedback, args, rng):
    prompt = build_prompt(agent, view, feedback)
    if args.llm:
        return parse_answer(choose_action_llm(prompt))
    if not feedback and rng.random() < args.sloppy:
        return "dance wildly"  # what a model gets wrong now and then
    return parse_answer(choose_action_offline(prompt, view["legal_actions"], rng))


def parse_answer(text):
    """The text after 'Action:', as the server's parser expects it."""
    for line in text.splitlines():
        if line.strip().lower().startswith("action:"):
            return line.split(":", 1)[1].strip()
    return text.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--polis", default="polis", help="the polis binary (default: in PATH)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--retries", type=int, default=2, help="re-asks after a refused action")
    ap.add_argument("--llm", action="store_true", help="call choose_action_llm")
    ap.add_argument("--sloppy", type=float, default=0.0,
                    help="how often the offline stand-in answers nonsense (0..1), to show "
                         "the re-ask path")
    ap.add_argument("--check", action="store_true",
                    help="fail unless every step ran (and, with --sloppy, some action was "
                         "refused and re-asked)")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    server = PolisServer(args.polis, args.scenario)
    info = server.request(op="describe")
    print("scenario %s: agents %s, %d actions" % (info["scenario"], ", ".join(info["agents"]),
                                                 len(info["actions"])))
    reply = server.request(op="reset", seed=args.seed)
    totals = {agent: 0.0 for agent in info["agents"]}
    refused = 0
    for _ in range(args.steps):
        if reply["done"]:
            break
        views = reply["agents"]
        live = [a for a in info["agents"]
                if not views[a].get("terminated") and not views[a].get("truncated")]
        actions, tries = {}, {}
        for agent in live:
            actions[agent] = ask_model(agent, views[agent], None, args, rng)
        while True:
            step = server.request(op="step", actions=actions)
            if step["ok"]:
                break
            err = step["error"]
            agent = err["agent"]
            if err["code"] not in ("bad_action", "illegal_action") or agent not in actions:
                raise RuntimeError("server refused the step: %s" % err["message"])
            # Re-ask only the agent the server named, with its reason; after --retries
            # refusals that agent is left out of the step (it does noop).
            refused += 1
            tries[agent] = tries.get(agent, 0) + 1
            if tries[agent] > args.retries:
                del actions[agent]
            else:
                actions[agent] = ask_model(agent, views[agent], err["message"], args, rng)
        reply = step
        for agent, res in reply["agents"].items():
            totals[agent] += res["reward"]
        print("tick %d: %s" % (reply["tick"], ", ".join(
            "%s %s" % (a, actions.get(a, "noop")) for a in info["agents"])))
    print("returns: " + ", ".join("%s %g" % (a, r) for a, r in totals.items()))
    print("refused actions re-asked: %d" % refused)
    server.close()
    if args.check and (reply.get("tick") != args.steps or (args.sloppy > 0 and refused == 0)):
        print("check failed: tick %s of %d, %d refused" % (reply.get("tick"), args.steps,
                                                           refused), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
