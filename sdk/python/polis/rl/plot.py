"""Curves of training runs: one run's ``curve.png`` (``polis.rl.ppo``) and several runs on
one figure (``python3 -m polis.rl.plot OUT.png RUN_DIR[=LABEL]...``), from their
``log.jsonl`` (``RUN_A+RUN_B``: B, started from A's checkpoint by ``--init``, drawn after A), with ``--eval RUN_DIR=SWEEP_DIR`` the run's checkpoints as a ``polis sweep``
scored them (points with their 95% intervals) and ``--hline LABEL=VALUE`` reference levels. matplotlib is used when installed; without it nothing is drawn (and it says so).
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def read_log(run_dir):
    """The rows of a run: ``log.jsonl`` when present, else ``log.csv`` (older runs)."""
    path = os.path.join(run_dir, "log.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(run_dir, "log.csv")) as f:
        return [{k: (float(v) if v not in ("", None) else None) for k, v in r.items()}
                for r in csv.DictReader(f)]


def read_joined(spec):
    """The rows of a run, or of runs joined with ``+`` (``runs/a+runs/b``): a run started
    from another's checkpoint with ``--init`` logs from 0 agent-steps; joined, its
    agent-steps and seconds go on from the last row of the run before it."""
    rows, steps, seconds = [], 0, 0.0
    for d in spec.split("+"):
        part = read_log(d)
        rows.extend({**r, "agent_steps": r["agent_steps"] + steps,
                     "seconds": float(r.get("seconds") or 0.0) + seconds} for r in part)
        if part:
            steps, seconds = rows[-1]["agent_steps"], rows[-1]["seconds"]
    return rows


def _num(v):
    return float(v) if v is not None else math.nan


def curve(history, summary, path, name, log_fn=print):
    """One run: mean episode return per agent and the normalised reward against
    agent-steps, with the random level and any baselines; curriculum stage changes as
    vertical lines."""
    if not have_matplotlib():
        log_fn("matplotlib is not installed: no plot (apt-get install python3-matplotlib)")
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [r["agent_steps"] for r in history]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    stages = [(r["agent_steps"], r.get("stage")) for r in history]
    for ax, key, label in ((axes[0], "return", "mean episode return per agent"),
                           (axes[1], "total_reward_normalised",
                            "normalised reward (total_reward_normalised)")):
        ys = [_num(r.get(key)) for r in history]
        if key != "return" and all(math.isnan(y) for y in ys):
            ax.text(0.5, 0.5, "no oracle in this scenario:\nno normalised reward",
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(label)
            continue
        ax.plot(xs, ys, label="PPO" if not summary.get("curriculum") else "PPO + curriculum")
        styles = ("--", ":", "-.")
        others = [("random", summary.get("random") or {})] + list(
            summary.get("baselines", {}).items())
        for i, (who, b) in enumerate(others):
            if b.get(key) is not None:
                ax.axhline(b[key], color=f"C{i + 1}", linestyle=styles[i % 3], label=who)
        for (x0, s0), (x1, s1) in zip(stages, stages[1:]):
            if s1 != s0 and s1 is not None:
                ax.axvline(x1, color="grey", linewidth=0.8)
                ax.text(x1, 0.98, f" {s1}", transform=ax.get_xaxis_transform(),
                        fontsize=7, va="top", color="grey")
        ax.set_xlabel("agent-steps")
        ax.set_title(label)
        ax.legend(fontsize=8)
    fig.suptitle(f"{name}: PPO, {summary.get('encoder', 'mlp')} encoder")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    log_fn(f"plot: {path}")
    return True


def checkpoint_scores(run_dir, sweep_dir, key="total_reward_normalised"):
    """[(agent_steps, mean, low, high)] of a run's checkpoints as a ``polis sweep`` with
    ``--policy py:RUN/checkpoints/policy-<steps>.pt`` (and ``py:RUN/policy.pt``, at the run's
    final agent-steps) scored them, in agent-steps order."""
    with open(os.path.join(sweep_dir, "summary.json")) as f:
        cells = json.load(f)["cells"]
    final = None
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            final = json.load(f).get("agent_steps")
    except OSError:
        pass
    run = os.path.abspath(run_dir)
    out = []
    for c in cells:
        pol = c.get("policy", "")
        if not pol.startswith("py:"):
            continue
        path = os.path.abspath(pol[3:].split("?")[0])
        name = os.path.basename(path)
        steps = None
        if os.path.dirname(path) == os.path.join(run, "checkpoints") and name.startswith("policy-"):
            steps = int(name[len("policy-"):-len(".pt")])
        elif path == os.path.join(run, "policy.pt"):
            steps = final
        m = c["metrics"].get(key)
        if steps is not None and m and m.get("mean") is not None:
            lo, hi = m.get("ci95") or [m["mean"], m["mean"]]
            out.append((steps, m["mean"], lo, hi))
    return sorted(out)


def compare(runs, path, key="total_reward_normalised", title=None, hlines=(), evals=()):
    """Several runs' ``key`` against agent-steps on one figure. ``runs``: (label, run_dir)
    pairs; ``hlines``: (label, value) reference levels (e.g. the paper's); ``evals``:
    (run_dir, sweep_dir) pairs whose checkpoint scores (``checkpoint_scores``) are drawn as
    points with their 95% intervals in the run's colour."""
    if not have_matplotlib():
        print("matplotlib is not installed: no plot")
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.8))
    colours = {}
    for i, (label, d) in enumerate(runs):
        rows = read_joined(d)
        colours[os.path.abspath(d)] = f"C{i}"
        ax.plot([r["agent_steps"] for r in rows], [_num(r.get(key)) for r in rows], label=label,
                color=f"C{i}", alpha=0.8)
        for r0, r1 in zip(rows, rows[1:]):  # a curriculum's stage changes
            if r1.get("stage") != r0.get("stage") and r1.get("stage") is not None:
                ax.axvline(r1["agent_steps"], color=f"C{i}", linestyle=":", linewidth=0.8)
                ax.text(r1["agent_steps"], 0.01, f" {r1['stage']}", color=f"C{i}", fontsize=7,
                        rotation=90, va="bottom", transform=ax.get_xaxis_transform())
    for run_dir, sweep_dir in evals:
        pts = checkpoint_scores(run_dir, sweep_dir, key)
        if pts:
            xs, ys, lo, hi = zip(*pts)
            ax.errorbar(xs, ys, yerr=[[y - a for y, a in zip(ys, lo)], [b - y for y, b in zip(ys, hi)]],
                        fmt="o", ms=4, capsize=2, color=colours.get(os.path.abspath(run_dir), "k"))
    for i, (label, y) in enumerate(hlines):
        ax.axhline(y, linestyle=("--", ":", "-.")[i % 3], color=f"C{len(runs) + i}", label=label)
    ax.set_xlabel("agent-steps")
    ax.set_ylabel(key)
    ax.set_title(title or key, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print("usage: python3 -m polis.rl.plot OUT.png RUN_DIR[+RUN_DIR...][=LABEL]... "
              "[--key METRIC] "
              "[--hline LABEL=VALUE]... [--eval RUN_DIR=SWEEP_DIR]... [--title T]",
              file=sys.stderr)
        return 2
    title = None
    out, key, runs, hl, evals, i = argv[0], "total_reward_normalised", [], [], [], 1
    while i < len(argv):
        a = argv[i]
        if a == "--title":
            title, i = argv[i + 1], i + 2
            continue
        if a == "--key":
            key, i = argv[i + 1], i + 2
            continue
        if a == "--eval":
            run, _, sweep = argv[i + 1].partition("=")
            evals.append((run, sweep))
            i += 2
            continue
        if a == "--hline":
            label, _, val = argv[i + 1].partition("=")
            hl.append((label, float(val)))
            i += 2
            continue
        d, _, label = a.partition("=")
        runs.append((label or os.path.basename(d.rstrip("/")), d))
        i += 1
    return 0 if compare(runs, out, key=key, title=title, hlines=hl, evals=evals) else 1


if __name__ == "__main__":
    sys.exit(main())
