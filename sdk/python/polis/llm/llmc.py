"""AdaSociety's LLM-C (seeds/000, §5.3.4 and Appendix D.2): "a Large Language Model +
controller framework, which converts environmental information into prompts to query an LLM
for high-level plans and then calls a rule-based controller to execute actions based on the
generated plan" (docs/llm.md, "LLM-C").

- **observation**: the game's text view (what the agent sees with distances, its inventory,
  values and capacities, its groups, the stage) under the paper's prompt structure: the
  game's instructions, "Suppose you are a player named <name>", the state, the plan options
  with their explanations, few-shot examples, and the "Thoughts: ... / Plan: ..." answer
  format (Appendix D, listings 1-5);
- **reasoning**: in the physical stage the model answers a plan among the game's plan
  commands (society's GATHER, CRAFT, EXPLORE, DUMP, GOTO); in a social stage (Contract's
  group choice, Negotiation's bargaining) an action among the legal ones, with the game's
  view of whose turn it is and what was proposed;
- **execution**: the plan macros are the rule-based controller (rulesets/society, "Plans"):
  they walk, pick, craft and dump tick by tick until the plan is done or impossible;
- **monitoring**: a plan the game refuses is re-asked with the game's reason (bounded, then
  the fallback), and an impossible plan is reported in the next prompt ("Your last plan:
  GATHER 3 coal: impossible (...)").

Prompts: ``polis/llm/prompts/llmc/`` (``physical.txt``, ``social.txt``, the instructions and
the examples), replaceable per scenario (``"instructions"``, ``"examples"``) or with
``--prompts DIR``.
"""
import os
import re

from .agent import PROMPT_DIR, BaseAgent


def instructions_for(env, name):
    """The game instructions of the paper's prompts, common to the three mini-games."""
    with open(os.path.join(PROMPT_DIR, "llmc", "instructions_adasociety.txt"),
              encoding="utf-8") as f:
        return f.read().strip()


def _load(name):
    with open(os.path.join(PROMPT_DIR, "llmc", name + ".txt"), encoding="utf-8") as f:
        return f.read().strip()


def answer_line(text, key):
    """The text after the last "<key>:" line of an answer (bold or bulleted too), stripped
    of quotes and a final period; ValueError when there is none."""
    found = None
    for line in (text or "").splitlines():
        s = line.strip().lstrip("-*# ").replace("**", "")
        if s.lower().startswith(key.lower() + ":"):
            found = s.split(":", 1)[1].strip()
    if found is None:
        if not text or not text.strip():
            raise ValueError("the answer is empty")
        raise ValueError('the answer has no "%s: ..." line' % key)
    found = found.strip().strip("`\"'").rstrip(".").strip()
    if not found:
        raise ValueError('the "%s:" line is empty' % key)
    return found


class LLMCAgent(BaseAgent):
    def __init__(self, name, llm, commands, *, instructions, examples=None, personality="",
                 prompts=None, fallback="noop", max_reasks=2, temperature=None):
        super().__init__(name, llm, max_reasks=max_reasks, fallback=fallback,
                         temperature=temperature)
        self.commands = list(commands)
        self.instructions = instructions
        self.examples = examples
        self.personality = personality or ""
        self.prompts = prompts
        self.view = None
        self.outcome_text = None
        self.stm = {"last_action": None}

    def outcome(self, text):
        self.outcome_text = text

    def _physical(self, view):
        legal = view.get("legal_actions") or []
        return any(a.startswith("move") for a in legal) and bool(self.commands)

    def decide(self, view, tick):
        self.tick = tick
        self.view = view
        return self._ask(None)

    def reask(self, reason):
        return self._ask(reason)

    def _state(self, view):
        lines = [ln for ln in (view.get("text") or "").splitlines()
                 if not ln.startswith("Legal actions:")]
        return "\n".join(lines)

    def _ask(self, refused):
        view = self.view
        feedback = ""
        if refused:
            feedback = ("Your previous answer %r was refused by the game: %s. Choose again.\n"
                        % (self.stm["last_action"], refused))
        if self._physical(view):
            names = {c.name.upper() for c in self.commands}
            prompt = self.prompts.render(
                "physical", instructions=self.instructions, name=self.name,
                personality=self.personality, step=self.tick, state=self._state(view),
                plans="\n".join("- " + c.line() for c in self.commands),
                examples=self.examples if self.examples is not None
                else _load("examples_physical"),
                outcome=self.outcome_text or "none yet", feedback=feedback)

            def parse(answer):
                plan = answer_line(answer, "Plan")
                plan = re.sub(r"\s+", " ", plan)
                if plan.split()[0].upper() not in names:
                    raise ValueError("%r is not one of the plans (%s)" % (
                        plan, ", ".join(c.usage for c in self.commands)))
                return plan
            module = "plan"
        else:
            legal = view.get("legal_actions") or ["noop"]
            text = view.get("text") or ""
            phase = ("negotiation" if "bargain" in text.lower() or "negotiat" in text.lower()
                     else "contract" if "contract" in text.lower() else "action")
            prompt = self.prompts.render(
                "social", instructions=self.instructions, name=self.name, phase=phase,
                personality=self.personality, step=self.tick, state=self._state(view),
                actions="\n".join(legal), examples=self.examples if self.examples is not None
                else _load("examples_social"), feedback=feedback)

            def parse(answer):
                return answer_line(answer, "Action")
            module = "social"
        value, ok = self.ask(module, prompt, parse)
        if not ok:
            value = self.fallback
            self.note("fallback", "%s: no usable answer; playing %s" % (module, value))
        self.stm["last_action"] = value
        return value
