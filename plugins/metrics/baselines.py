#!/usr/bin/env python3
"""baselines.py -- polis's baselines on the paper's mini-games, next to the paper's rows.

    python3 plugins/metrics/baselines.py            # print the tables (Markdown)
    python3 plugins/metrics/baselines.py --write    # and replace them in README.md
    python3 plugins/metrics/baselines.py --random-ada --write   # the random rows, 1000 episodes,
                                                    # into rulesets/society/README.md

Runs `polis eval` (20 episodes, seeds 0..19) on every shipped mini-game scenario with the
random policy and the mini-game's baseline (Contract, Negotiation: `scripted`; Exploration,
Social Structure: society's `greedy`; Exploration, Contract and Negotiation also `random_ada`,
AdaSociety's random agent: AdaSociety's masks, which offer produce without the inputs and no
pass in a stage while something else is legal), and Contract and Negotiation once more under the
repository's job tables (rulesets/society/jobs/), then writes one table per mini-game with
the paper's Random rows (seeds/000 Table 2: Contract, Negotiation; Table 8: Exploration)
beside polis's. The paper's normalised reward is the sum of all agents' returns over the
oracle (`total_reward_normalised`); the per-agent mean over the oracle is shown too.

--write replaces the text between the `<!-- baselines:begin -->` and `<!-- baselines:end -->`
lines of README.md (--readme FILE: another file). --polis PATH names the binary (default
build/polis), --episodes N the number of episodes. Exit status 1 when an evaluation fails.

--random-ada writes instead the random rows only (default 1000 episodes): polis's `random` and
`random_ada` beside AdaSociety's own random agent and the paper's Random row, for Contract and
Negotiation (Easy, Hard) and Exploration, between `<!-- random_ada:begin -->` and
`<!-- random_ada:end -->` of rulesets/society/README.md.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = "<!-- baselines:begin -->", "<!-- baselines:end -->"
ADA_BEGIN, ADA_END = "<!-- random_ada:begin -->", "<!-- random_ada:end -->"

# The paper's Random rows: mean, std (seeds/000 Table 2 and Table 8).
PAPER = {
    "contract": (0.0046, 0.0002), "contract_hard": (0.0021, 0.0000),
    "negotiation": (0.0040, 0.0001), "negotiation_hard": (0.0020, 0.0001),
    "exploration": (0.0001, 0.0000),
}

# AdaSociety's own random agent (its code, its masks), measured beside polis: mean, std,
# episodes. Only these two were measured; the others are left blank. Exploration: rulesets/
# exploration/adasociety_random.py, two runs pooled (rulesets/society/README.md).
ADASOCIETY = {
    "negotiation": (0.00404, None, None),
    "exploration": (5.87e-5, None, 180),  # 120 episodes at 5.2e-5 and 60 at 7.2e-5, pooled
}

STRUCTURES = [("isolation", "Isolation"), ("connection", "Connection"),
              ("ind_group", "Independent groups"), ("ovlp_group", "Overlapping groups"),
              ("inequality", "Inequality"), ("dynamic", "Dynamic")]


def fail(msg):
    sys.stderr.write("baselines: %s\n" % msg)
    sys.exit(1)


def evaluate(polis, scenario, policy, episodes, sets=()):
    cmd = [polis, "eval", os.path.join(ROOT, scenario), "--episodes", str(episodes),
           "--seed", "0", "--policy", policy, "--quiet", "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        fail("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return json.loads(r.stdout)["summary"]


def g(x):
    """A number in 3 significant digits, without exponents for the paper's range."""
    if x == 0:
        return "0"
    if abs(x) >= 0.0001:
        s = "%.3g" % x
        if "e" not in s:
            return s
    return "%.2e" % x


def pm(summary, key):
    v = summary.get(key) or {}
    if not v.get("n"):
        return "undefined"
    return "%s ± %s" % (g(v["mean"]), g(v["std"]))


def fairness(summary, episodes):
    v = summary.get("fairness") or {}
    n = v.get("n", 0)
    if not n:
        return "undefined in every episode"
    text = "%.2f ± %.2f" % (v["mean"], v["std"])
    if n < episodes:
        text += " in %d episodes; undefined in %d" % (n, episodes - n)
    return text


def paper(key):
    if key not in PAPER:
        return "—"
    return "%.4f ± %.4f" % PAPER[key]


def row(label, policy, summary, episodes, paper_cell):
    illegal = (summary.get("illegal_actions") or {}).get("mean", 0)
    return "| %s | %s | **%s** | %s | %s | %s | %s | %s |" % (
        label, policy, pm(summary, "total_reward_normalised"), paper_cell,
        pm(summary, "mean_reward_normalised"), pm(summary, "reward.mean"),
        fairness(summary, episodes), g(illegal))


HEADER = ("| scenario | policy | **normalised** (Σ returns ÷ oracle: the paper's) | paper, Random "
          "| per agent (mean ÷ oracle) | reward (mean per agent) | fairness | illegal actions |\n"
          "|---|---|---|---|---|---|---|---|")


def tables(polis, episodes):
    out = []
    say = out.append
    say("Generated by `python3 plugins/metrics/baselines.py --write` (%d episodes, seeds 0–%d; "
        "`polis eval`). **normalised** is the paper's normalised reward: the sum of all agents' "
        "returns divided by the oracle (`total_reward_normalised`; the paper's Table 12 "
        "\"group rewards\" equal its Table 2 rows). *per agent* divides the mean return instead "
        "(`mean_reward_normalised`, N times smaller). *paper, Random* is the paper's Random "
        "row (seeds/000 Table 2, Table 8); the paper reports no random row for Social "
        "Structure." % (episodes, episodes - 1))
    say("")
    say("**Exploration** (8 explorers, 500 steps, oracle 14878):")
    say("")
    say(HEADER)
    for policy in ("random", "random_ada", "greedy"):
        s = evaluate(polis, "rulesets/exploration/exploration.json", policy, episodes)
        say(row("Exploration", policy, s, episodes, paper("exploration")
                if policy.startswith("random") else "—"))
    say("")
    say("**Contract and Negotiation** (Easy: 4 agents, 20 + 100 steps, oracle 200; Hard: 8 "
        "agents, 40 + 200 steps, oracle 940). The shipped scenarios use the paper's Table 7 "
        "jobs; *repository jobs* runs them with AdaSociety's repository job tables "
        "(`--set 'plugins.society.params.jobs=\"../society/jobs/repository[_hard].json\"'`), "
        "whose Hard miner cannot hold wood. `random_ada` is AdaSociety's random agent: it "
        "plays AdaSociety's masks, which offer `produce` on a station without the inputs "
        "(flagged illegal in polis: the *illegal actions* column) and no pass in a stage "
        "while something else is legal (rulesets/society/README.md):")
    say("")
    say(HEADER)
    for game, title in (("contract", "Contract"), ("negotiation", "Negotiation")):
        for level, suffix in (("Easy", ""), ("Hard", "_hard")):
            scen = "rulesets/%s/%s%s.json" % (game, game, suffix)
            key = game + suffix
            for policy in ("random", "random_ada", "scripted"):
                s = evaluate(polis, scen, policy, episodes)
                say(row("%s %s" % (title, level), policy, s, episodes,
                        paper(key) if policy.startswith("random") else "—"))
            jobs = '"../society/jobs/repository%s.json"' % suffix
            s = evaluate(polis, scen, "random", episodes,
                         ["plugins.society.params.jobs=" + jobs])
            say(row("%s %s" % (title, level), "random, repository jobs", s, episodes,
                    paper(key)))
    say("")
    say("**Social Structure** (8 agents, 200 steps; Easy: Contract's physical task, oracle 200; "
        "Hard: the paper's, oracle 1000). Sharing inside groups moves reward between agents "
        "only, so within a task the normalised rewards agree across structures and fairness "
        "tells them apart:")
    say("")
    say(HEADER)
    for name, title in STRUCTURES:
        for level, suffix in (("Easy", ""), ("Hard", "_hard")):
            for policy in ("random", "greedy"):
                s = evaluate(polis, "rulesets/social_structure/%s%s.json" % (name, suffix),
                             policy, episodes)
                say(row("%s %s" % (title, level), policy, s, episodes, "—"))
    return "\n".join(out) + "\n"


GAMES = [("Contract Easy", "contract/contract", "contract"),
         ("Contract Hard", "contract/contract_hard", "contract_hard"),
         ("Negotiation Easy", "negotiation/negotiation", "negotiation"),
         ("Negotiation Hard", "negotiation/negotiation_hard", "negotiation_hard"),
         ("Exploration", "exploration/exploration", "exploration")]


def ada_cell(key):
    if key not in ADASOCIETY:
        return "—"
    mean, std, n = ADASOCIETY[key]
    text = g(mean) if std is None else "%s ± %s" % (g(mean), g(std))
    return text + (" (%d episodes)" % n if n else "")


def random_tables(polis, episodes):
    out = []
    say = out.append
    say("Generated by `python3 plugins/metrics/baselines.py --random-ada --write` (%d episodes "
        "each, seeds 0–%d; `polis eval --policy random` and `--policy random_ada`). The paper's "
        "normalised reward (the sum of all agents' returns over the oracle), mean ± standard "
        "deviation over the episodes; ± s.e. is the standard error of the mean. *AdaSociety* "
        "is AdaSociety's own random agent run on its own code, where it was measured. "
        "*illegal* counts random_ada's actions per episode that polis flags: its produces "
        "without the inputs, which AdaSociety's env ignored." % (episodes, episodes - 1))
    say("")
    say("| task | polis `random` | polis `random_ada` (± s.e.) | AdaSociety | paper, Random "
        "| illegal (random_ada) |")
    say("|---|---|---|---|---|---|")
    for title, scen, key in GAMES:
        path = "rulesets/%s.json" % scen
        r = evaluate(polis, path, "random", episodes)
        a = evaluate(polis, path, "random_ada", episodes)
        v = a.get("total_reward_normalised") or {}
        se = "" if not v.get("n") else " (± %s)" % g(v["std"] / v["n"] ** 0.5)
        illegal = (a.get("illegal_actions") or {}).get("mean", 0)
        say("| %s | %s | **%s**%s | %s | %s | %s |" % (
            title, pm(r, "total_reward_normalised"), pm(a, "total_reward_normalised"), se,
            ada_cell(key), paper(key), g(illegal)))
    return "\n".join(out) + "\n"


def replace_between(path, begin, end, text):
    try:
        with open(path) as f:
            doc = f.read()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    if doc.count(begin) != 1 or doc.count(end) != 1 or doc.index(begin) > doc.index(end):
        fail("%s: expected one %s line before one %s line" % (path, begin, end))
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
    print("baselines: %s updated" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="replace the tables in README.md")
    ap.add_argument("--polis", default=os.path.join(ROOT, "build", "polis"))
    ap.add_argument("--episodes", type=int,
                    help="episodes per row (default 20; 1000 with --random-ada)")
    ap.add_argument("--random-ada", action="store_true",
                    help="only the random rows (random, random_ada, AdaSociety's, the paper's)")
    ap.add_argument("--readme", help="the file --write updates (default: the top-level "
                    "README.md; rulesets/society/README.md with --random-ada)")
    a = ap.parse_args()
    episodes = a.episodes if a.episodes is not None else 1000 if a.random_ada else 20
    if episodes < 2:
        fail("--episodes: at least 2 (a standard deviation needs two)")
    if not os.access(a.polis, os.X_OK):
        fail("%s: not an executable (build polis first, or give --polis)" % a.polis)
    if a.random_ada:
        text = random_tables(a.polis, episodes)
        readme = a.readme or os.path.join(ROOT, "rulesets", "society", "README.md")
        begin, end = ADA_BEGIN, ADA_END
    else:
        text = tables(a.polis, episodes)
        readme = a.readme or os.path.join(ROOT, "README.md")
        begin, end = BEGIN, END
    if not a.write:
        sys.stdout.write(text)
        return 0
    replace_between(readme, begin, end, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
