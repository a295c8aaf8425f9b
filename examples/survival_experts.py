#!/usr/bin/env python3
"""Social learning in Multi-Agent Craftax (seeds/003 section 5, Table 1, Fig. 3): PPO learners
beside scripted experts, and the cultural-transmission score.

    python3 examples/survival_experts.py --agent-steps 1e6 --out runs/experts
    python3 examples/survival_experts.py --smoke --out /tmp/experts      # the CTest run

Three learners are trained, each from scratch with ``polis.rl.ppo``, in the three setups of the
paper; in each, one ``learner`` plays beside three experts (survival's ``scripted`` policy, the
scenario's ``"seats"``) that always act in the world (they harvest, fight, place tables and
furnaces anyone may use) and that the learner sees:

- ``full``: always (``survival_experts_solo.json`` with ``visibility=[]``, "w/ Expert");
- ``half``: for the first 50 steps of every episode (``survival_experts_half.json``);
- ``solo``: never (``survival_experts_solo.json``, the control).

Each trained learner then plays ``--eval-episodes`` episodes of the setup it was trained in,
its experts seated again, and the example reports per setup (the metrics of ``polis eval``,
rulesets/survival/README.md):

- A: the learner's achievements per episode (``achievements_by_player.0``), and E: the
  experts' (the mean of ``achievements_by_player.1..3``, over the three setups);
- the cultural-transmission score of the paper (Bhoopchand et al.'s, as seeds/003 adapts it):
  CT = 1/2 (A_full - A_solo) / E + 1/2 (A_half - A_solo) / E, with its standard error;
- tool use the paper's way (Fig. 4): the learner's crafts beside its own table and beside
  another's, and its iron crafts beside its own furnace and another's
  (``tool_use_by_player.0.*``);
- proximity (Fig. 7): the share of steps the learner and each expert were in each other's
  view (``proximity_by_pair.0-k``, geometric: hidden experts count when in the window), and
  the mean over all pairs;
- the learner's achievement probabilities (Fig. 3), from its view at the episode's end.

Outputs in ``--out``: ``<setup>/`` (each training's log, curve and ``policy.pt``),
``results.json`` and, with matplotlib, ``experts.png``. ``--smoke`` is a bounded run
(tiny budget, short episodes) that checks every number came out; ``--check`` exits 1 when
something is missing. ``polis eval rulesets/survival/survival_experts_half.json --seat
learner=py:OUT/half/policy.pt`` reproduces a setup's row from the command line.
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

import _sdk  # noqa: E402

_sdk.need("torch", "survival_experts.py")

import polis  # noqa: E402
import numpy as np  # noqa: E402

from polis.rl import ppo  # noqa: E402
from polis.parallel import FlatLayout  # noqa: E402
from polis.rl.checkpoint import CheckpointPolicy  # noqa: E402
from polis.rl.policy import spec_of  # noqa: E402
from polis.rl.scripted import scenario_seats  # noqa: E402

SURVIVAL = os.path.join(HERE, "..", "rulesets", "survival")
SETUPS = {
    "full": ("survival_experts_solo.json", {"visibility": []}),
    "half": ("survival_experts_half.json", {}),
    "solo": ("survival_experts_solo.json", {}),
}
LEARNER = 0  # the scenarios' agent 0, "learner"; agents 1..3 are the experts


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent-steps", type=float, default=1e6,
                    help="learner steps of training per setup (1e6)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop each setup's training after this much wall time as well")
    ap.add_argument("--envs", type=int, default=16, help="games stepped together (16)")
    ap.add_argument("--max-steps", type=int, default=1000,
                    help="steps per episode at most, in training and evaluation (1000; the "
                         "scenarios' own is Craftax's 10000)")
    ap.add_argument("--eval-episodes", type=int, default=30, help="episodes per setup (30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--setups", default="full,half,solo",
                    help="which setups to train, comma-separated (full,half,solo)")
    ap.add_argument("--out", default="runs/survival_experts")
    ap.add_argument("--smoke", action="store_true",
                    help="a bounded run: 2 envs, 2 updates of 32 steps, 2 episodes of 120 "
                         "steps per setup, then --check")
    ap.add_argument("--eval-only", action="store_true",
                    help="train nothing: evaluate the policies an earlier run left in --out")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every setup's figures and the score came out finite")
    args = ap.parse_args(argv)
    if args.smoke:
        args.envs, args.max_steps, args.eval_episodes = 2, 120, 2
        args.agent_steps = 2 * 32 * args.envs
        args.check = True
    names = [s for s in args.setups.split(",") if s]
    bad = [s for s in names if s not in SETUPS]
    if bad or not names:
        ap.error(f"--setups: {','.join(bad) or 'none'}: expected some of full, half, solo")
    args.setups = names
    return args


def overrides_of(setup, args):
    return {**SETUPS[setup][1], "max_steps": args.max_steps}


def train(setup, args):
    scenario = os.path.join(SURVIVAL, SETUPS[setup][0])
    sets = [f"{k}={json.dumps(v)}" for k, v in overrides_of(setup, args).items()]
    argv = [scenario, "--agent-steps", str(int(args.agent_steps)), "--envs", str(args.envs),
            "--seed", str(args.seed), "--random-episodes", "0", "--quiet",
            "--out", os.path.join(args.out, setup)]
    if args.smoke:
        argv += ["--rollout", "32", "--minibatches", "2", "--epochs", "1"]
    if args.minutes:
        argv += ["--minutes", str(args.minutes)]
    for s in sets:
        argv += ["--set", s]
    return ppo.train(ppo.parse_args(argv), log_fn=lambda s: print(f"[{setup}] {s}", flush=True))


def flat(d, prefix=""):
    """A nested metrics object as {"a.b.c": number} (as polis eval names them)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def evaluate(setup, policy_path, args):
    """The trained learner beside its experts (the scenario's seats, survival's scripted
    policy), ``--eval-episodes`` episodes of its setup: each episode's flat metrics and the
    learner's achievements."""
    scenario = os.path.join(SURVIVAL, SETUPS[setup][0])
    env = polis.Env(scenario, overrides_of(setup, args))
    pol = CheckpointPolicy(policy_path, seed=args.seed)
    pol.check(spec_of(env))
    experts = scenario_seats(scenario)
    layout = FlatLayout(env.obs_fields)
    obs = np.zeros((env.n_agents, layout.dim), np.float32)
    rows = []
    try:
        for ep in range(args.eval_episodes):
            env.reset(seed=args.seed + 1000 + ep)
            pol.reset([LEARNER])
            steps = 0
            while not env.done:
                for who in set(experts.values()):
                    env.policy_act(who, [a for a, w in experts.items() if w == who])
                layout.fill(obs, env.fields)
                act = pol.act(obs[[LEARNER]], env.masks[[LEARNER]])
                env.actions[LEARNER] = int(np.asarray(act)[0])
                env.step()
                steps += 1
            m = flat(env.episode_metrics() or {})
            m["steps"] = steps
            view = env.render_json(LEARNER)  # {"survival": {...}}: each plugin's view
            view = view.get("survival", view)
            if "achievements" not in view:
                raise RuntimeError(f"the learner's JSON view has no achievements: {list(view)}")
            rows.append({"metrics": m, "learner_achievements": view["achievements"]})
    finally:
        env.close()
    return rows


def mean_se(xs):
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def summarise(rows, n_agents):
    def col(key):
        return [r["metrics"].get(key) for r in rows]
    out = {"episodes": len(rows)}
    out["A"], out["A_se"] = mean_se(col(f"achievements_by_player.{LEARNER}"))
    per_expert = [[r["metrics"].get(f"achievements_by_player.{k}") for k in range(n_agents)
                   if k != LEARNER] for r in rows]
    out["E"], out["E_se"] = mean_se([sum(x) / len(x) for x in per_expert])
    for key in ("table_crafts", "table_own", "table_other", "furnace_crafts", "furnace_own",
                "furnace_other"):
        out[f"tool_use.{key}"], _ = mean_se(col(f"tool_use_by_player.{LEARNER}.{key}"))
    for k in range(n_agents):
        if k != LEARNER:
            out[f"proximity.learner-{k}"], _ = mean_se(col(f"proximity_by_pair.{LEARNER}-{k}"))
    out["proximity"], out["proximity_se"] = mean_se(col("proximity"))
    out["episode_steps"], _ = mean_se([r["metrics"].get("steps") for r in rows])
    names = sorted({a for r in rows for a in r["learner_achievements"]})
    out["learner_achievement_probability"] = {
        a: sum(a in r["learner_achievements"] for r in rows) / len(rows) for a in names}
    return out


def cultural_transmission(res):
    """CT = 1/2 (A_full - A_solo)/E + 1/2 (A_half - A_solo)/E = (A_full + A_half - 2 A_solo)
    / (2E), E the experts' mean over the setups; its standard error from the setups' (E's
    error neglected: E is the same fixed policy everywhere)."""
    if not all(s in res for s in ("full", "half", "solo")):
        return None, None
    E = sum(res[s]["E"] for s in ("full", "half", "solo")) / 3
    if not E:
        return None, None
    ct = (res["full"]["A"] + res["half"]["A"] - 2 * res["solo"]["A"]) / (2 * E)
    se = math.sqrt(res["full"]["A_se"] ** 2 + res["half"]["A_se"] ** 2
                   + 4 * res["solo"]["A_se"] ** 2) / (2 * E)
    return ct, se


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    setups = [s for s in ("full", "half", "solo") if s in res]
    fig, ax = plt.subplots(1, 2, figsize=(12, 4), gridspec_kw={"width_ratios": [1, 3]})
    ax[0].bar(setups, [res[s]["A"] for s in setups],
              yerr=[res[s]["A_se"] for s in setups], color="tab:blue", label="learner (A)")
    ax[0].axhline(sum(res[s]["E"] for s in setups) / len(setups), color="tab:red",
                  ls="--", label="experts (E)")
    ax[0].set_ylabel("achievements per episode")
    ax[0].legend(fontsize=8)
    names = sorted({a for s in setups for a in res[s]["learner_achievement_probability"]})
    w = 0.8 / max(1, len(setups))
    for i, s in enumerate(setups):
        p = res[s]["learner_achievement_probability"]
        ax[1].bar(np.arange(len(names)) + i * w, [p.get(a, 0.0) for a in names], w, label=s)
    ax[1].set_xticks(np.arange(len(names)) + w * (len(setups) - 1) / 2)
    ax[1].set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax[1].set_ylabel("learner's probability per episode")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(args.out, exist_ok=True)
    res = {}
    for setup in args.setups:
        if args.eval_only:
            with open(os.path.join(args.out, setup, "summary.json")) as f:
                summary = json.load(f)
        else:
            summary = train(setup, args)
        rows = evaluate(setup, summary["policy"], args)
        res[setup] = summarise(rows, 4)
        res[setup]["train"] = {"agent_steps": summary["agent_steps"],
                               "seconds": summary["train_seconds"],
                               "final_return": summary["final"]["return"]}
        r = res[setup]
        print(f"[{setup}] A {r['A']:.2f} ± {r['A_se']:.2f}, experts E {r['E']:.2f}, "
              f"tables own/other {r['tool_use.table_own']:.2f}/{r['tool_use.table_other']:.2f}, "
              f"furnaces own/other {r['tool_use.furnace_own']:.2f}/"
              f"{r['tool_use.furnace_other']:.2f}, proximity to experts "
              + "/".join(f"{r[f'proximity.learner-{k}']:.3f}" for k in (1, 2, 3)),
              flush=True)
    ct, se = cultural_transmission(res)
    doc = {"setups": res, "cultural_transmission": ct, "cultural_transmission_se": se,
           "args": vars(args)}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=2)
    if ct is not None:
        print(f"cultural transmission {ct:+.3f} ± {se:.3f} (seeds/003 Table 1: -0.056 ± 0.083)")
    png = os.path.join(args.out, "experts.png")
    plotted = plot(res, png)
    print(f"results: {os.path.join(args.out, 'results.json')}" + (f", {png}" if plotted else ""))
    if not args.check:
        return 0
    problems = []
    for s in args.setups:
        for k in ("A", "E", "proximity", "tool_use.table_own", "tool_use.table_other",
                  "proximity.learner-1"):
            v = res[s].get(k)
            if v is None or not math.isfinite(v):
                problems.append(f"{s}: {k} is {v}")
        if res[s]["E"] is not None and res[s]["E"] <= 0:
            problems.append(f"{s}: the scripted experts unlocked no achievement")
    if len(args.setups) == 3 and (ct is None or not math.isfinite(ct)):
        problems.append(f"cultural transmission is {ct}")
    for p in problems:
        print("check failed:", p)
    print("check:", "ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
