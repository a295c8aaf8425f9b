"""Episodes of LLM agents from LLM scenario files, recorded and scored (docs/llm.md).

An **LLM scenario** is a JSON file that names a polis scenario and says who the model plays
and how:

    {"llm": 1, "name": "personalities_none", "doc": "...",
     "scenario": "../commons_llm.json",        # a polis scenario, relative to this file
     "overrides": {"max_steps": 3000},          # optional, as `polis run --set`
     "architecture": "generative",              # or "llmc"
     "turns": "sequential",                     # or "simultaneous"
     "rounds": 100,                             # the round limit
     "max_turn_ticks": 60,                      # a turn's plan is cut after this many ticks
     "seed": 1,                                 # the first episode's seed (then +1, +2, ...)
     "agents": ["Laura", "Juan", "Pedro"],      # the model's seats (default: every focal one)
     "personality": "",                         # for every agent, unless it has its own:
     "personalities": {"Pedro": "You are selfish ..."},
     "world": "@world_commons.txt",             # text, or @file relative to this file
     "knowledge": "",                           # added to the world knowledge of every agent
     "commands": ["IMMOBILIZE", "GOTO", "STAY", "EXPLORE"],   # default: every plan command
     "fallback": "STAY",
     "agent": {"attention_bandwidth": 10, "reflect_every": 30, "questions": 3,
               "insights": 3, "retrieve_k": 10, "max_reasks": 2},
     "prompts": "prompts/"}                     # optional: a directory of prompt overrides

**Turns.** ``sequential`` is the Melting Pot study's protocol (§3.1.2): in each round every
LLM agent in turn is asked for a high-level action (a plan command), which then runs tick by
tick until it ends while the other LLM agents wait; the game's own bots move meanwhile
(Commons' ``bot_every`` = 2: once per two moves). ``simultaneous`` is the agent protocol's
convention and LLM-C's: every agent without a running plan is asked at once (concurrently,
up to the client's ``concurrency``), and the env steps until a plan ends. A round there is
one such decision point. An episode ends at the round limit, when the env is done (Commons
with ``end_when_no_apples``: when the apples run out), or at ``max_steps``.

**What is written** under ``--out DIR``: ``DIR/<name>-<episode>.jsonl.gz``, a polis
recording of each episode whose step lines carry, per agent, every model call (kind
``"llm"``: module, prompt, answer, usage, latency, error), every memory, plan, reflection
and fallback (kind ``"note"``), and the command or action played (kinds ``"plan"`` and
``"action"``, which ``polis replay --verify`` re-derives the actions from, without a model);
its end line has the game's metrics. ``DIR/results.jsonl`` gets one line per episode: the
scenario, seed, model, rounds, ticks, why it ended, the game's metrics (flattened as `polis
eval` does), the returns, the refusals and fallbacks, and the costs per agent and in total.
"""
import json
import os
import time

from .agent import Command, GenerativeAgent, Prompts
from .cost import CostMeter, episode_figures
from .llmc import LLMCAgent, instructions_for

SPEC_KEYS = {"llm", "name", "doc", "scenario", "overrides", "architecture", "turns", "rounds",
             "max_turn_ticks", "seed", "agents", "personality", "personalities", "world",
             "knowledge", "commands", "fallback", "agent", "prompts", "instructions",
             "examples"}
AGENT_KEYS = {"attention_bandwidth", "reflect_every", "questions", "insights", "retrieve_k",
              "max_reasks", "importance", "recency_decay", "temperature"}


class SpecError(ValueError):
    pass


def _text_or_file(value, base, where):
    if not isinstance(value, str):
        raise SpecError("%s: expected a string (text, or @file)" % where)
    if value.startswith("@"):
        path = os.path.join(base, value[1:])
        try:
            with open(path, encoding="utf-8") as f:
                return f.read().strip()
        except OSError as e:
            raise SpecError("%s: %s: %s" % (where, path, e.strerror or e)) from None
    return value


def load_spec(path):
    """An LLM scenario file, checked; SpecError naming the file and the member otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except OSError as e:
        raise SpecError("%s: %s" % (path, e.strerror or e)) from None
    except ValueError as e:
        raise SpecError("%s: not JSON: %s" % (path, e)) from None
    where = path
    if not isinstance(spec, dict):
        raise SpecError("%s: expected a JSON object" % where)
    if spec.get("llm") != 1:
        raise SpecError('%s: "llm": 1 is missing (this is not an LLM scenario file; a polis '
                        'scenario goes in its "scenario" member)' % where)
    unknown = sorted(set(spec) - SPEC_KEYS)
    if unknown:
        raise SpecError("%s: unknown member %s (members: %s)"
                        % (where, ", ".join(unknown), ", ".join(sorted(SPEC_KEYS))))
    base = os.path.dirname(os.path.abspath(path))
    s = {"path": os.path.abspath(path), "base": base,
         "name": spec.get("name") or os.path.splitext(os.path.basename(path))[0],
         "doc": spec.get("doc", "")}
    sc = spec.get("scenario")
    if isinstance(sc, str) and "/" not in sc and not sc.endswith(".json"):
        from ..scenario import find_scenario  # a bare name: rulesets/*/NAME.json
        try:
            s["scenario"] = find_scenario(sc)
        except Exception as e:
            raise SpecError("%s: scenario: %s" % (where, e)) from None
    elif isinstance(sc, str):
        s["scenario"] = os.path.normpath(os.path.join(base, sc))
        if not os.path.exists(s["scenario"]):
            raise SpecError("%s: scenario: no file %s" % (where, s["scenario"]))
    elif isinstance(sc, dict):
        s["scenario"] = sc
    else:
        raise SpecError("%s: scenario: expected a polis scenario file (a path) or object" % where)
    ov = spec.get("overrides") or {}
    if not isinstance(ov, dict):
        raise SpecError("%s: overrides: expected an object {path: value}" % where)
    s["overrides"] = ov
    arch = spec.get("architecture", "generative")
    if arch not in ("generative", "llmc"):
        raise SpecError("%s: architecture: '%s' is not generative or llmc" % (where, arch))
    s["architecture"] = arch
    turns = spec.get("turns", "sequential" if arch == "generative" else "simultaneous")
    if turns not in ("sequential", "simultaneous"):
        raise SpecError("%s: turns: '%s' is not sequential or simultaneous" % (where, turns))
    s["turns"] = turns
    for key, default, lo in (("rounds", 100, 1), ("max_turn_ticks", 60, 1), ("seed", None, 0)):
        v = spec.get(key, default)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
            raise SpecError("%s: %s: expected an integer >= %d, got %r" % (where, key, lo, v))
        s[key] = v
    agents = spec.get("agents")
    if agents is not None and (not isinstance(agents, list) or
                               not all(isinstance(a, str) for a in agents)):
        raise SpecError("%s: agents: expected a list of agent names" % where)
    s["agents"] = agents
    s["personality"] = _text_or_file(spec.get("personality", ""), base, where + ": personality")
    pers = spec.get("personalities") or {}
    if not isinstance(pers, dict):
        raise SpecError("%s: personalities: expected an object {agent: text}" % where)
    s["personalities"] = {k: _text_or_file(v, base, "%s: personalities.%s" % (where, k))
                          for k, v in pers.items()}
    s["world"] = _text_or_file(spec.get("world", ""), base, where + ": world")
    s["knowledge"] = _text_or_file(spec.get("knowledge", ""), base, where + ": knowledge")
    cmds = spec.get("commands")
    if cmds is not None and (not isinstance(cmds, list) or
                             not all(isinstance(c, str) for c in cmds)):
        raise SpecError("%s: commands: expected a list of plan command names" % where)
    s["commands"] = cmds
    s["fallback"] = spec.get("fallback")
    ap = spec.get("agent") or {}
    if not isinstance(ap, dict) or set(ap) - AGENT_KEYS:
        raise SpecError("%s: agent: unknown member %s (members: %s)"
                        % (where, ", ".join(sorted(set(ap) - AGENT_KEYS)) if isinstance(ap, dict)
                           else "?", ", ".join(sorted(AGENT_KEYS))))
    s["agent"] = ap
    pr = spec.get("prompts")
    s["prompts"] = os.path.join(base, pr) if isinstance(pr, str) else None
    s["instructions"] = (_text_or_file(spec["instructions"], base, where + ": instructions")
                         if "instructions" in spec else None)
    s["examples"] = (_text_or_file(spec["examples"], base, where + ": examples")
                     if "examples" in spec else None)
    return s


def expand(paths):
    """Scenario arguments: files, and directories (a scenario set: every *.json in it that
    is an LLM scenario, in name order)."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for f in sorted(os.listdir(p)):
                if f.endswith(".json"):
                    fp = os.path.join(p, f)
                    try:
                        with open(fp, encoding="utf-8") as fh:
                            if json.load(fh).get("llm") == 1:
                                out.append(fp)
                    except (OSError, ValueError, AttributeError):
                        continue
        else:
            out.append(p)
    return out


def flatten(metrics, prefix=""):
    """Every number of a nested metrics object under dotted keys (arrays left out), None
    kept: the shape `polis eval` prints."""
    out = {}
    for k, v in (metrics or {}).items():
        key = prefix + str(k)
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, bool):
            out[key] = int(v)
        elif isinstance(v, (int, float)) or v is None:
            out[key] = v
    return out


class Episode:
    """One episode of one LLM scenario: the env, the agents, the loop."""

    def __init__(self, spec, client, seed, record, *, polis_env=None):
        from ..core import Env
        self.spec = spec
        self.client = client
        self.seed = seed
        overrides = dict(spec["overrides"])
        if spec["architecture"] == "llmc":
            overrides.update(_metrics_override(spec))
        self.env = (polis_env or Env)(spec["scenario"], overrides or None, record=record)
        env = self.env
        self.macros = {m["name"].upper(): m for m in env.describe().get("macros", [])}
        names = env.agent_names
        if spec["agents"] is None:
            seats = [a for a in names if self._is_focal(a)]
        else:
            unknown = [a for a in spec["agents"] if a not in names]
            if unknown:
                raise SpecError("%s: agents: no agent named %s (agents: %s)"
                                % (spec["path"], ", ".join(unknown), ", ".join(names)))
            seats = list(spec["agents"])
        self.seats = seats
        cmds = spec["commands"]
        if cmds is None:
            cmds = list(self.macros)
        bad = [c for c in cmds if c.upper() not in self.macros]
        if bad:
            raise SpecError("%s: commands: %s %s not a plan command of %s (commands: %s)"
                            % (spec["path"], ", ".join(bad), "is" if len(bad) == 1 else "are",
                               env.name, ", ".join(self.macros) or "none"))
        self.commands = [Command(self.macros[c.upper()]["name"], self.macros[c.upper()]["usage"],
                                 self.macros[c.upper()]["doc"]) for c in cmds]
        self.agents = {a: self._make_agent(a) for a in seats}
        for ag in self.agents.values():
            ag.module_models = dict(getattr(client, "module_models", None) or {})
        self.refusals = 0
        self.fallbacks = 0
        self.fallbacks_of = {}  # per agent
        self.pending_noop = set()
        self.explicit = {}
        self.last_cmd = {}
        self.unrecorded = False  # messages wait for the next step line
        self.returns = [0.0] * env.n_agents

    def _is_focal(self, name):
        env = self.env
        try:
            js = json.loads(env.render(name, "json"))
        except Exception:
            return True
        for part in js.values() if isinstance(js, dict) else ():
            if isinstance(part, dict) and part.get("role") == "background":
                return False
        return True

    def _make_agent(self, name):
        spec = self.spec
        pers = spec["personalities"].get(name, spec["personality"])
        world = "\n".join(x for x in (spec["world"], spec["knowledge"]) if x)
        ap = dict(spec["agent"])
        if spec["architecture"] == "generative":
            embedder = None
            if getattr(self.client, "embed_enabled", False):
                embedder = (lambda texts, _n=name: self.client.embed(texts, agent=_n))
            fb = spec["fallback"] or ("STAY" if "STAY" in self.macros else "noop")
            return GenerativeAgent(name, self.client, self.commands, personality=pers,
                                   world=world, prompts=Prompts("generative", spec["prompts"]),
                                   embedder=embedder, fallback=fb, **ap)
        instr = spec["instructions"] or instructions_for(self.env, name)
        return LLMCAgent(name, self.client, self.commands, instructions=instr,
                         examples=spec["examples"], personality=pers,
                         prompts=Prompts("llmc", spec["prompts"]),
                         fallback=spec["fallback"] or "noop",
                         max_reasks=ap.get("max_reasks", 2),
                         temperature=ap.get("temperature"))

    # ---- talking to the env -----------------------------------------------------------------

    def view(self, name):
        env = self.env
        a = env.agent_id(name)
        text = env.render(a, "text") if "text" in env.render_formats else ""
        legal = [env.action_names[i] for i, m in enumerate(env.mask_list(a)) if m]
        return {"text": text, "legal_actions": legal}

    def record(self, agent, kind, text):
        self.env.record_msg(agent, kind, text)
        self.unrecorded = True

    def flush(self, name):
        """Writes the agent's log (model calls, notes) into the recording's next step."""
        for kind, entry in self.agents[name].drain():
            if kind == "note" and entry["type"] == "fallback":
                self.fallbacks += 1
                self.fallbacks_of[name] = self.fallbacks_of.get(name, 0) + 1
            self.record(name, kind, json.dumps(entry, ensure_ascii=False,
                                               separators=(",", ":")))

    def is_command(self, text):
        return bool(text.split()) and text.split()[0].upper() in self.macros

    def try_start(self, name, text):
        """Plays ``text`` for ``name`` from the next step: a plan command starts its plan, an
        action is checked (parsed, legal). Returns None, or the game's reason for refusing."""
        env = self.env
        a = env.agent_id(name)
        if any(ord(c) < 32 for c in text):
            return "the answer has control characters (%r)" % text[:80]
        if self.is_command(text):
            try:
                env.plan(a, text)
            except Exception as e:  # the engine's ActionError / StateError, with the reason
                return str(e)
            # only a command the game takes is recorded as "plan" (replay plays a refused
            # one as noop); refusals are notes. Agents are asked with no plan running, so
            # a refused start ended nothing.
            self.flush(name)
            self.record(a, "plan", text)
            self.last_cmd[name] = text
            return None
        try:
            act = env.parse_action(a, text)
        except Exception as e:
            return str(e)
        if not env.mask_list(a)[act]:
            return "action %s is not legal now (legal: %s)" % (
                env.action_names[act], ", ".join(self.view(name)["legal_actions"]))
        env.plan_cancel(a)
        self.flush(name)
        self.record(a, "action", text)
        self.explicit[a] = act
        self.last_cmd[name] = text
        return None

    def settle(self, names, first):
        """Starts what each agent of ``names`` decided (``first``: {name: text}), re-asking
        those the game refuses, concurrently, with the reason; after the agent's re-asks
        its fallback, and if even that is refused, noop."""
        todo = dict(first)
        tries = {n: 0 for n in names}
        while todo:
            refused = {}
            for n, text in todo.items():
                why = self.try_start(n, text)
                if why is not None:
                    self.refusals += 1
                    self.agents[n].note("refused", "%s: %s" % (text, why))
                    refused[n] = why
            todo = {}
            ask = [n for n in refused if tries[n] < self.agents[n].max_reasks]
            for n in refused:
                if n not in ask:
                    fb = self.agents[n].fallback
                    self.agents[n].note("fallback", "refused %d times; playing %s"
                                        % (tries[n] + 1, fb))
                    why = self.try_start(n, fb)
                    if why is not None:
                        self.agents[n].note("fallback", "the fallback %r is refused too (%s); "
                                            "noop" % (fb, why))
                        self.try_start(n, "noop")
            for n, cmd in zip(ask, self.parallel([(lambda n=n: self.agents[n].reask(
                    refused[n])) for n in ask])):
                tries[n] += 1
                todo[n] = cmd
        for n in names:
            self.flush(n)

    def parallel(self, jobs):
        if len(jobs) <= 1:
            return [j() for j in jobs]
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=min(len(jobs),
                                                getattr(self.client, "concurrency", 8))) as ex:
            return list(ex.map(lambda j: j(), jobs))

    def finished(self, name):
        a = self.env.agent_id(name)
        return bool(self.env.terminations[a] or self.env.truncations[a])

    def step(self):
        """One tick: explicit actions, plan actions (every agent with a plan, as `polis
        replay` asks them), noop for the rest. Returns {name: ended PlanStep}."""
        env = self.env
        acts = [0] * env.n_agents
        ended = {}
        for a in range(env.n_agents):
            if a in self.explicit:
                acts[a] = self.explicit[a]
            elif env.plan_command(a) is not None:
                r = env.plan_next(a)
                if r.status == "running":
                    acts[a] = r.action
                else:
                    ended[env.agent_names[a]] = r
        self.explicit = {}
        env.step(acts)
        self.unrecorded = False
        for a in range(env.n_agents):
            self.returns[a] += float(env.rewards[a])
        return ended

    def plan_status(self, name):
        """None while the agent's plan runs (or it has none), else its ending PlanStep."""
        env = self.env
        a = env.agent_id(name)
        if env.plan_command(a) is None:
            return None
        r = env.plan_next(a)
        return None if r.status == "running" else r

    # ---- the loops --------------------------------------------------------------------------

    def run(self):
        env = self.env
        env.reset(self.seed)
        self.explicit = {}
        self.returns = [0.0] * env.n_agents
        t0 = time.monotonic()
        if self.spec["turns"] == "sequential":
            rounds, why = self.run_sequential()
        else:
            rounds, why = self.run_simultaneous()
        metrics = env.episode_metrics()
        # the end line: the game's metrics (re-derived by polis replay --verify) and, as
        # "reported" (carried over unchecked), what the model calls cost, as polis eval
        # records an LLM seat's figures
        meter = getattr(self.client, "meter", None)
        if meter is None:
            env.record_end(metrics)
        else:
            reported = episode_figures(meter.totals(), self.seats,
                                       {a: self.fallbacks_of.get(a, 0) for a in self.seats})
            env.record_end(dict(metrics or {}, reported=reported))
        return rounds, why, metrics, time.monotonic() - t0

    def done(self):
        return bool(self.env.done) or self.env.tick >= self.env.max_steps

    def run_sequential(self):
        env = self.env
        rounds = 0
        while rounds < self.spec["rounds"]:
            for name in self.seats:
                if self.done():
                    return rounds, "env_done"
                if self.finished(name):
                    continue
                a = env.agent_id(name)
                cmd = self.agents[name].decide(self.view(name), env.tick)
                for other in self.pending_noop:
                    self.record(other, "action", "noop")
                    self.explicit[env.agent_id(other)] = 0
                self.pending_noop = set()
                self.settle([name], {name: cmd})
                if env.plan_command(a) is None:
                    self.step()  # an action, not a plan: one tick
                    continue
                ticks = 0
                while not self.done():
                    r = self.plan_status(name)
                    if r is not None:
                        self.agents[name].outcome("%s: %s (%s)" % (self.last_cmd.get(name),
                                                                   r.status, r.why))
                        break
                    if ticks >= self.spec["max_turn_ticks"]:
                        # cut: the plan is cancelled by a noop action in the next step,
                        # which the recording says (so replay cancels it too)
                        env.plan_cancel(a)
                        self.pending_noop.add(name)
                        self.agents[name].outcome("%s: cut after %d ticks (the turn's limit)"
                                                  % (self.last_cmd.get(name), ticks))
                        break
                    self.step()
                    ticks += 1
            rounds += 1
        if self.unrecorded and not self.done():
            # the last turns took no tick (their plans ended at once): one closing tick, in
            # which every LLM agent does noop, carries their calls and notes into the
            # recording (messages are written with a step line)
            for name in self.seats:
                if not self.finished(name):
                    self.try_start(name, "noop")
            self.step()
        return rounds, "rounds"

    def run_simultaneous(self):
        """The agent protocol's loop: before each tick every agent without a plan (and with
        more than noop to choose from) is asked, all at once; then every plan gives its
        action in agent order, as `polis replay` asks them. An agent whose plan ends does
        noop in that tick and is asked before the next one (starting its new plan in the
        same tick would ask the plans in another order than the replay, and macros that
        draw from the policy generator, such as society's EXPLORE, would then differ)."""
        env = self.env
        rounds = 0
        while not self.done():
            idle = [n for n in self.seats
                    if not self.finished(n) and env.plan_command(n) is None
                    and self.view(n)["legal_actions"] != ["noop"]]
            if idle:
                if rounds >= self.spec["rounds"]:
                    return rounds, "rounds"
                rounds += 1
                tick = env.tick
                views = {n: self.view(n) for n in idle}
                cmds = self.parallel([(lambda n=n: self.agents[n].decide(views[n], tick))
                                      for n in idle])
                self.settle(idle, dict(zip(idle, cmds)))
            for n, r in self.step().items():
                if n in self.agents:
                    self.agents[n].outcome("%s: %s (%s)" % (self.last_cmd.get(n), r.status,
                                                            r.why))
        return rounds, "env_done"


def _metrics_override(spec):
    """{"plugins": [..., "metrics"]} when the scenario lacks the metrics plugin (as `polis
    eval` adds it), so LLM-C episodes report fairness, completion rates and degrees."""
    sc = spec["scenario"]
    if isinstance(sc, str):
        with open(sc, encoding="utf-8") as f:
            sc = json.load(f)
    plugins = list(sc.get("plugins") or [])
    if "plugins" in spec["overrides"]:
        plugins = list(spec["overrides"]["plugins"])

    def is_metrics(e):
        s = e if isinstance(e, str) else (e.get("name") or e.get("path") or "") \
            if isinstance(e, dict) else ""
        return os.path.basename(s) in ("metrics", "metrics.so")
    if any(is_metrics(e) for e in plugins):
        return {}
    return {"plugins": plugins + ["metrics"]}


def run(spec_paths, client, out_dir, episodes=1, seed=None, log=print):
    """Runs every scenario ``episodes`` times; writes the recordings and results.jsonl
    under ``out_dir``; returns the result lines."""
    os.makedirs(out_dir, exist_ok=True)
    results_path = os.path.join(out_dir, "results.jsonl")
    specs = [load_spec(p) for p in expand(spec_paths)]
    if not specs:
        raise SpecError("no LLM scenario among %s" % ", ".join(spec_paths))
    out = []
    for spec in specs:
        first = seed if seed is not None else spec["seed"]
        for k in range(episodes):
            meter = CostMeter(client.meter.prices if client.meter else None)
            client.meter = meter
            rec = os.path.join(out_dir, "%s-%d.jsonl.gz" % (spec["name"], k))
            ep = Episode(spec, client, None, rec)
            s = (first if first is not None else ep.env.default_seed) + k
            ep.seed = s
            try:
                rounds, why, metrics, secs = ep.run()
                returns = {n: ep.returns[i] for i, n in enumerate(ep.env.agent_names)}
                line = {"scenario": spec["name"], "file": spec["path"], "episode": k,
                        "seed": s, "model": client.model, "architecture": spec["architecture"],
                        "turns": spec["turns"], "agents": ep.seats,
                        "recording": os.path.abspath(rec), "rounds": rounds,
                        "ticks": ep.env.tick, "ended": why,
                        "metrics": flatten(metrics), "per_agent": (metrics or {}).get(
                            "per_agent"),
                        "returns": returns, "refusals": ep.refusals,
                        "fallbacks": ep.fallbacks, "costs": meter.totals(),
                        "seconds": round(secs, 3)}
            finally:
                ep.env.close()
            with open(results_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line, sort_keys=True) + "\n")
            out.append(line)
            t = line["costs"]["total"]
            log("%s episode %d (seed %d): %d rounds, %d ticks, ended: %s; %s; %d calls "
                "(%d cached), %d+%d tokens, cost %s" % (
                    spec["name"], k, s, rounds, line["ticks"], why, _score(line["metrics"]),
                    t["calls"], t["cached"], t["prompt_tokens"], t["completion_tokens"],
                    "n/a" if t["cost"] is None else "$%.4f" % t["cost"]))
    return out


def _score(m):
    for k in ("return.focal_per_capita", "reward.mean"):
        if m.get(k) is not None:
            # Negotiation: the Carpenters/Miners split its agents agreed (seeds/000 Fig. 8e)
            split = m.get("split_ratio")
            return "%s %.3f%s" % (k, m[k], "" if split is None else ", split_ratio %.3f" % split)
    return "no score"
