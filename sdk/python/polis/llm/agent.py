"""The generative-agent architecture of the Melting Pot LLM study (seeds/004, §4), for any
polis game with text views and plan commands (docs/llm.md, "The generative agent").

Every time the agent is asked (its turn, or its plan ended) it runs the study's cognitive
sequence:

1. **perceive** -- the text view is split into the agent's own state, its observations and
   the changes since the last step; the observations, sorted nearest first by the distance
   of their ``[row, column]`` to the agent, are cut to ``attention_bandwidth`` (10) and
   stored, with the changes and the last action's outcome, as one long-term memory;
2. **react** -- with a plan already made, the model decides whether the new observations
   call for a new one (the study's react prompt, Appendix C);
3. **plan** -- without a plan, or when it reacts, the model writes goals and a long-term plan
   (Appendix D);
4. **reflect** -- after every ``reflect_every`` (30) observations, the model asks
   ``questions`` (3) questions about them; the memories retrieved for each question are
   turned into ``insights`` (3) insights, stored as reflections (Appendix E);
5. **act** -- the model picks one of the valid actions (the game's plan commands, or the
   subset a scenario allows) with its placeholders filled in (Appendix F). The answer is
   validated: a command that is not among the valid ones, and one the game refuses (the
   runner passes the game's reason to :meth:`GenerativeAgent.reask`), is re-asked with the
   reason, at most ``max_reasks`` times; then the **fallback** command is played.

Every model answer goes through the same bounded re-ask: a failed call (the client's
:class:`~polis.llm.client.LLMError`), an empty answer or one without the JSON block asked
for is re-asked with the reason; after ``max_reasks`` the module's fallback applies: react
continues the plan, plan keeps the old plan (or a neutral one), reflection is skipped, act
plays ``fallback``. Each call, memory, plan and reflection is appended to ``log`` for the
recording (the runner drains it).

Prompts are files (``polis/llm/prompts/generative/*.txt``, ``string.Template`` syntax with
``$name`` placeholders); a scenario or ``--prompts DIR`` replaces any of them.
"""
import json
import os
import re
import string

from .client import LLMError, ModelUnavailable
from .memory import LongTermMemory, ShortTermMemory, SpatialMemory

PROMPT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prompts")


class Prompts:
    """Prompt templates of one family (``generative``, ``llmc``) by name, read from the
    package's files, overridden by files of the same name in ``override_dir``."""

    def __init__(self, family, override_dir=None):
        self.family = family
        self.override_dir = override_dir
        self._cache = {}

    def path(self, name):
        if self.override_dir:
            p = os.path.join(self.override_dir, name + ".txt")
            if os.path.exists(p):
                return p
        return os.path.join(PROMPT_DIR, self.family, name + ".txt")

    def render(self, template, **values):
        """The template with every ``$placeholder`` replaced (ValueError naming the file and
        the placeholder when a value is missing)."""
        if template not in self._cache:
            p = self.path(template)
            try:
                with open(p, encoding="utf-8") as f:
                    self._cache[template] = (p, string.Template(f.read()))
            except OSError as e:
                raise ValueError("prompt %s: %s" % (p, e.strerror or e)) from None
        p, t = self._cache[template]
        try:
            return t.substitute(**{k: "" if v is None else str(v) for k, v in values.items()})
        except KeyError as e:
            raise ValueError("prompt %s: no value for $%s (values: %s)"
                             % (p, e.args[0], ", ".join(sorted(values)))) from None
        except ValueError as e:
            raise ValueError("prompt %s: %s" % (p, e)) from None


def parse_json_block(text):
    """The JSON object of an answer: inside a ```json fence if there is one, else from the
    first '{' to the last '}'. Trailing commas and ``\\\\`` comments (the prompts' schema
    style, which models copy) are tolerated. ValueError with the reason otherwise."""
    if not text or not text.strip():
        raise ValueError("the answer is empty")
    m = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    body = m.group(1) if m else text
    i, j = body.find("{"), body.rfind("}")
    if i < 0 or j < i:
        raise ValueError("the answer has no JSON object ({...})")
    s = body[i:j + 1]
    try:
        obj = json.loads(s)
    except ValueError:
        s2 = re.sub(r"\s\\\\[^\n]*", "", s)
        s2 = re.sub(r",(\s*[}\]])", r"\1", s2)
        try:
            obj = json.loads(s2)
        except ValueError as e:
            raise ValueError("the JSON block does not parse: %s" % e) from None
    if not isinstance(obj, dict):
        raise ValueError("the JSON block is not an object")
    return obj


def split_view(text):
    """A text view as (state lines, observations, changes): lines of the section "Changes
    since ..." are changes; "Observed ..." lines elsewhere are observations; the others
    (position, status, "You took ...") are the agent's state. The "Legal actions:" line is
    dropped (the act prompt lists the valid actions)."""
    state, obs, changes = [], [], []
    section = None
    for line in (text or "").splitlines():
        s = line.strip()
        if not s or s.startswith("Legal actions:"):
            continue
        low = s.lower()
        if low.startswith("changes since"):
            section = "changes"
            continue
        if low.startswith("current observations"):
            section = "obs"
            continue
        if section == "changes" and s.startswith("Observed"):
            changes.append(s)
        elif s.startswith("Observed"):
            obs.append(s)
        else:
            state.append(s)
    return state, obs, changes


_POSITION = re.compile(r"\[(\d+), (\d+)\]")


def by_distance(lines, position):
    """Observation lines nearest first (the study sorts every observation by its distance to
    the agent before the attention bandwidth cuts them): by the Euclidean distance of a
    line's first ``[row, column]`` to ``position``; lines without one keep their order after
    the others. Unchanged when the position is unknown. Ties keep the view's order."""
    if position is None:
        return list(lines)
    r0, c0 = position

    def key(item):
        i, line = item
        m = _POSITION.search(line)
        if not m:
            return (1, 0, i)
        dr, dc = int(m.group(1)) - r0, int(m.group(2)) - c0
        return (0, dr * dr + dc * dc, i)
    return [line for _, line in sorted(enumerate(lines), key=key)]


def get_key(obj, key):
    """obj[key], case- and space-insensitively ("final analysis" finds "Final analysis")."""
    if key in obj:
        return obj[key]
    k = key.lower().replace(" ", "").replace("_", "")
    for kk, v in obj.items():
        if str(kk).lower().replace(" ", "").replace("_", "") == k:
            return v
    return None


def numbered(obj, key, n):
    """The texts of ``{"<key>_1": {"<key>": text, ...}, ...}`` (or ``"<key>_1": text``), at
    most n, in order; ValueError when there is none."""
    out = []
    for k in range(1, max(n, len(obj)) + 1):
        v = get_key(obj, "%s_%d" % (key, k))
        if isinstance(v, dict):
            v = get_key(v, key)
        if isinstance(v, str) and v.strip():
            out.append(v.strip())
    if not out:
        raise ValueError('no %s_1 .. %s_%d with a "%s"' % (key, key, n, key))
    return out[:n]


class Command:
    """A plan command the agent may give: name (``GOTO``), usage, doc."""

    def __init__(self, name, usage, doc):
        self.name, self.usage, self.doc = name, usage, doc

    def line(self):
        return "%s: %s" % (self.usage, self.doc) if self.doc else self.usage


class BaseAgent:
    """What the generative agent and LLM-C share: the model, the log, the bounded re-ask."""

    def __init__(self, name, llm, *, max_reasks=2, fallback="noop", temperature=None):
        self.name = name
        self.llm = llm
        self.max_reasks = int(max_reasks)
        self.fallback = fallback
        self.temperature = temperature
        self.log = []
        self.tick = 0
        # {module: model}: a module asked of another model than the client's (the study
        # asked GPT-4 for act and GPT-3.5 for the rest)
        self.module_models = {}

    def note(self, kind, text, **extra):
        entry = {"type": kind, "tick": self.tick, "text": text}
        entry.update(extra)
        self.log.append(("note", entry))

    def ask(self, module, prompt, parse):
        """Asks ``prompt``; ``parse(answer)`` returns the value or raises ValueError with
        the reason. A failed call or a refused answer is re-asked with the reason appended,
        at most max_reasks times. Returns (value, ok)."""
        feedback = ""
        for attempt in range(self.max_reasks + 1):
            full = prompt + feedback
            model = self.module_models.get(module) or self.llm.model
            kw = {"agent": self.name, "model": model}
            if self.temperature is not None:
                kw["temperature"] = self.temperature
            entry = {"module": module, "tick": self.tick, "attempt": attempt, "prompt": full}
            try:
                c = self.llm.chat(full, **kw)
            except ModelUnavailable:
                raise
            except LLMError as e:
                entry.update(answer=None, error=e.reason)
                self.log.append(("llm", entry))
                feedback = ("\n\nThe previous request failed (%s). Answer in the format "
                            "asked." % e.reason)
                continue
            usage = c.usage()
            meter = getattr(self.llm, "meter", None)
            if meter is not None:  # the call's price, as the meter booked it (None: unpriced)
                usage["cost"] = 0.0 if c.cached else meter.prices.cost(
                    model, c.prompt_tokens, c.completion_tokens)
            entry.update(answer=c.text, usage=usage, model=c.model)
            try:
                value = parse(c.text)
            except ValueError as e:
                entry["error"] = str(e)
                self.log.append(("llm", entry))
                feedback = ("\n\nYour previous answer could not be used: %s. Answer again, "
                            "exactly in the format asked." % e)
                continue
            self.log.append(("llm", entry))
            return value, True
        return None, False

    def drain(self):
        out, self.log = self.log, []
        return out


class GenerativeAgent(BaseAgent):
    """The study's agent. ``llm``: a ChatClient; ``commands``: the valid actions (a list of
    :class:`Command`); ``personality``: the text put where the study puts it (may be "");
    ``world``: the world knowledge (the study's Appendix B); ``embedder``: a function texts
    -> vectors for memory retrieval (None: the lexical fallback)."""

    def __init__(self, name, llm, commands, *, personality="", world="", prompts=None,
                 embedder=None, attention_bandwidth=10, reflect_every=30, questions=3,
                 insights=3, retrieve_k=10, importance=10.0, recency_decay=0.99,
                 max_reasks=2, fallback="STAY", temperature=None):
        super().__init__(name, llm, max_reasks=max_reasks, fallback=fallback,
                         temperature=temperature)
        self.commands = list(commands)
        self.personality = personality or ""
        self.world = world or ""
        self.prompts = prompts or Prompts("generative")
        self.attention_bandwidth = int(attention_bandwidth)
        self.reflect_every = int(reflect_every)
        self.questions = int(questions)
        self.insights = int(insights)
        self.retrieve_k = int(retrieve_k)
        self.importance = float(importance)
        self.ltm = LongTermMemory(embedder, decay=recency_decay)
        self.stm = ShortTermMemory(name=name, plan=None, goals=None, last_action=None,
                                   outcome=None)
        self.spatial = SpatialMemory()
        self.pending_obs = []     # observations since the last reflection
        self.reflections = []

    # ---- the sequence ---------------------------------------------------------------------

    def decide(self, view, tick):
        """The whole sequence for one turn; returns the command to play."""
        self.tick = tick
        text = view.get("text") or ""
        obs, changes = self.perceive(text)
        if self.stm.get("plan") is None:
            self.plan("there is no plan yet")
        else:
            react, why = self.react(obs, changes)
            if react:
                self.plan(why)
        if len(self.pending_obs) >= self.reflect_every:
            self.reflect()
        return self.act(None)

    def reask(self, reason):
        """The command the agent gives instead of one the game refused (``reason``)."""
        return self.act(reason)

    def outcome(self, text):
        """What became of the last command ("GOTO 3 4: done (arrived at [3, 4])")."""
        self.stm["outcome"] = text

    def perceive(self, text):
        state, obs, changes = split_view(text)
        self.spatial.update(text)
        obs = by_distance(obs, self.spatial.position)[:self.attention_bandwidth]
        self.stm["state"] = state
        self.stm["observations"] = obs
        self.stm["changes"] = changes
        mem = self.prompts.render(
            "memory_perception", last_action=self.stm.text("last_action", "nothing"),
            outcome=self.stm.text("outcome", "no outcome yet"),
            changes="\n".join(changes) or "None", observations="\n".join(obs) or "Nothing")
        self.ltm.add(mem.strip(), "perception", self.tick, self.importance)
        self.pending_obs.extend(obs)
        self.note("memory", mem.strip())
        return obs, changes

    def _common(self):
        return {"name": self.name, "personality": self.personality, "world": self.world}

    def _position(self):
        p = self.spatial.position
        return "[%d, %d]" % p if p else "an unknown position"

    def _obs_text(self):
        lines = list(self.stm.get("state") or []) + list(self.stm.get("observations") or [])
        return "\n".join(lines) or "Nothing."

    def react(self, obs, changes):
        prompt = self.prompts.render(
            "react", time="step %d" % self.tick, observations=self._obs_text(),
            changes="\n".join(changes) or "None", plan=self.stm.text("plan"),
            actions=self.stm.text("last_action"), **self._common())

        def parse(answer):
            j = parse_json_block(answer)
            a = get_key(j, "Answer")
            if isinstance(a, str) and a.strip().lower() in ("true", "false", "yes", "no"):
                a = a.strip().lower() in ("true", "yes")
            if not isinstance(a, bool):
                raise ValueError('"Answer" must be true or false')
            return a, str(get_key(j, "Reasoning") or "")
        v, ok = self.ask("react", prompt, parse)
        if not ok:
            self.note("fallback", "react: no usable answer; the plan goes on")
            return False, ""
        return v

    def plan(self, reason):
        refl = "\n".join(r.text for r in self.ltm.recent(self.insights * 3, {"reflection"}))
        prompt = self.prompts.render(
            "plan", reflections=refl or "None", changes="\n".join(self.stm.get("changes") or [])
            or "None", observations=self._obs_text(), plan=self.stm.text("plan"),
            reason=reason or "None", **self._common())

        def parse(answer):
            j = parse_json_block(answer)
            plan, goals = get_key(j, "Plan"), get_key(j, "Goals")
            if not isinstance(plan, str) or not plan.strip():
                raise ValueError('"Plan" must be a non-empty string')
            return plan.strip(), str(goals or "").strip()
        v, ok = self.ask("plan", prompt, parse)
        if not ok:
            if self.stm.get("plan") is None:
                self.stm["plan"] = "Gather resources and avoid harm."
                self.stm["goals"] = "Maximise my long-term reward."
            self.note("fallback", "plan: no usable answer; the plan stays: %s"
                      % self.stm["plan"])
            return
        self.stm["plan"], self.stm["goals"] = v
        self.ltm.add("My plan: %s My goals: %s" % v, "plan", self.tick, self.importance)
        self.note("plan", v[0], goals=v[1])

    def reflect(self):
        statements = "\n".join(self.pending_obs)
        self.pending_obs = []
        n = self.questions
        prompt = self.prompts.render("reflect_questions", statements=statements, n=n,
                                     **self._common())

        def parse_q(answer):
            return numbered(parse_json_block(answer), "Question", n)
        qs, ok = self.ask("reflect_questions", prompt, parse_q)
        if not ok:
            self.note("fallback", "reflection skipped: no usable questions")
            return
        groups = []
        for k, q in enumerate(qs, 1):
            mems = self.ltm.retrieve(q, self.tick, self.retrieve_k)
            groups.append("Group %d (%s):\n%s" % (k, q, "\n".join("- " + m.text.replace(
                "\n", " ") for m in mems)))
        m = self.insights
        prompt = self.prompts.render("reflect_insights", groups="\n\n".join(groups), n=m,
                                     **self._common())

        def parse_i(answer):
            return numbered(parse_json_block(answer), "Insight", m)
        ins, ok = self.ask("reflect_insights", prompt, parse_i)
        if not ok:
            self.note("fallback", "reflection skipped: no usable insights")
            return
        for s in ins:
            self.ltm.add(s, "reflection", self.tick, self.importance)
            self.reflections.append(s)
        self.note("reflection", "\n".join(ins), questions=qs)

    def act(self, refused):
        names = {c.name.upper(): c for c in self.commands}
        refl = [r.text for r in self.ltm.recent(10, {"reflection"})]
        feedback = ""
        if refused:
            feedback = ("\nYour previous action %r was refused by the game: %s. Choose a "
                        "valid action.\n" % (self.stm.get("last_action"), refused))
        prompt = self.prompts.render(
            "act", goals=self.stm.text("goals"), plan=self.stm.text("plan"),
            reflections="\n".join(refl) or "None", known=self.spatial.known(),
            explored=self.spatial.explored(), last_action=self.stm.text("last_action"),
            changes="\n".join(self.stm.get("changes") or []) or "None",
            position=self._position(), observations=self._obs_text(),
            valid_actions="\n".join(c.line() for c in self.commands), feedback=feedback,
            **self._common())

        def parse(answer):
            j = parse_json_block(answer)
            a = get_key(j, "Answer")
            if not isinstance(a, str) or not a.strip():
                raise ValueError('"Answer" must be one of the valid actions')
            a = " ".join(a.replace(",", " ").replace("(", " ").replace(")", " ")
                         .replace("[", " ").replace("]", " ").split())
            head = a.split()[0].upper()
            if head not in names:
                raise ValueError("%r is not one of the valid actions (%s)"
                                 % (a, ", ".join(c.usage for c in self.commands)))
            return a
        cmd, ok = self.ask("act", prompt, parse)
        if not ok:
            cmd = self.fallback
            self.note("fallback", "act: no usable answer; playing %s" % cmd)
        self.stm["last_action"] = cmd
        return cmd
