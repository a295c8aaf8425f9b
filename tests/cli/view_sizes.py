#!/usr/bin/python3
"""Measures the text views an LLM agent is sent: characters per agent per step, averaged
over the agents and over the states after 0, 10, ..., 50 steps of the random policy
(`polis render SCENARIO --steps K`, the scenario's seed). docs/clients.md has the table.

usage: view_sizes.py POLIS [SCENARIO ...]   (default: every shipped scenario with a text view)
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
STEPS = (0, 10, 20, 30, 40, 50)
HEADING = re.compile(r"^== .* ==$", re.M)


def sizes(polis, scenario):
    """Mean and max characters per agent view over STEPS."""
    views = []
    for k in STEPS:
        steps = ["--steps", str(k)] if k else []
        out = subprocess.run([polis, "render", scenario, *steps, "--format", "text"],
                             check=True, capture_output=True, text=True).stdout
        parts = HEADING.split(out)
        views += [p.strip("\n") + "\n" for p in parts if p.strip()]
    return sum(map(len, views)) / len(views), max(map(len, views))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    polis = sys.argv[1]
    scenarios = sys.argv[2:] or sorted(
        p for d in ("contract", "negotiation", "exploration", "social_structure", "survival",
                    "commons")
        for p in glob.glob(os.path.join(ROOT, "rulesets", d, "*.json")))
    for s in scenarios:
        mean, most = sizes(polis, s)
        print(f"{os.path.relpath(s, ROOT)}\t{mean:.0f}\t{most}")


if __name__ == "__main__":
    main()
