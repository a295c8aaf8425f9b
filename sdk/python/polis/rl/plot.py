"""Curves of training runs: one run's ``curve.png`` (``polis.rl.ppo``) and several runs on
one figure (``python3 -m polis.rl.plot OUT.png RUN_DIR[=LABEL]...``), from their
``log.jsonl``. matplotlib is used when installed; without it nothing is drawn (and it says so).
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


def compare(runs, path, key="total_reward_normalised", title=None, hlines=()):
    """Several runs' ``key`` against agent-steps on one figure. ``runs``: (label, run_dir)
    pairs; ``hlines``: (label, value) reference levels (e.g. the paper's)."""
    if not have_matplotlib():
        print("matplotlib is not installed: no plot")
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, d in runs:
        rows = read_log(d)
        ax.plot([r["agent_steps"] for r in rows], [_num(r.get(key)) for r in rows], label=label)
    for i, (label, y) in enumerate(hlines):
        ax.axhline(y, linestyle=("--", ":", "-.")[i % 3], color=f"C{len(runs) + i}", label=label)
    ax.set_xlabel("agent-steps")
    ax.set_ylabel(key)
    ax.set_title(title or key)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print("usage: python3 -m polis.rl.plot OUT.png RUN_DIR[=LABEL]... "
              "[--key METRIC] [--hline LABEL=VALUE]...", file=sys.stderr)
        return 2
    out, key, runs, hl, i = argv[0], "total_reward_normalised", [], [], 1
    while i < len(argv):
        a = argv[i]
        if a == "--key":
            key, i = argv[i + 1], i + 2
            continue
        if a == "--hline":
            label, _, val = argv[i + 1].partition("=")
            hl.append((label, float(val)))
            i += 2
            continue
        d, _, label = a.partition("=")
        runs.append((label or os.path.basename(d.rstrip("/")), d))
        i += 1
    return 0 if compare(runs, out, key=key, hlines=hl) else 1


if __name__ == "__main__":
    sys.exit(main())
