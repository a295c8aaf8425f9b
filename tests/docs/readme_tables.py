#!/usr/bin/env python3
"""The parameter and action tables of the games' READMEs, checked against the registries.

Every rulesets/*/README.md, plugins/*/README.md and examples/*/README.md table that lists a
plugin's (or a Lua script's) parameters or actions is generated from `polis describe --json`,
between a marker naming what to describe and an end marker:

    <!-- polis describe: params gather gather.json -->
    | key | type | default | range | meaning |
    |---|---|---|---|---|
    | `coins` | int | 8 | 0..1000000 | coins on the map at reset |
    <!-- end -->

(`actions <name> <scenario>` lists the actions that plugin registers.) The scenario path is
relative to the README. A README with a "Parameters" heading must have a params table. The
examples' plugins are not installed: $POLIS_PLUGIN_PATH says where they were built (CTest
sets it).

usage: readme_tables.py POLIS ROOT [--fix]
Without --fix, prints every README and row that differs from what describe says (README
path:line) and exits 1; with --fix, rewrites the tables.
"""
import glob
import json
import os
import re
import subprocess
import sys

MARK = re.compile(r"^<!-- polis describe: (params|actions) ([a-z0-9_]+) (\S+) -->$")
END = "<!-- end -->"


def fmt_num(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return str(v)


def cell(s):
    return s.replace("|", "\\|")


def param_rows(p):
    rows = []
    for q in p["params"]:
        t = q["type"]
        d = q.get("default")
        if q.get("required"):
            default = "required"
        elif d is None or t == "json":
            default = ""
        elif t == "string":
            default = "`" + json.dumps(d) + "`"
        else:
            default = fmt_num(d)
        rng = ""
        if t in ("int", "double") and "min" in q and "max" in q:
            rng = fmt_num(q["min"]) + ".." + fmt_num(q["max"])
        rows.append("| `%s` | %s | %s | %s | %s |" % (q["key"], t, default, rng, cell(q.get("doc") or "")))
    return ["| key | type | default | range | meaning |", "|---|---|---|---|---|"] + rows


def action_rows(d, name):
    rows = ["| action | meaning |", "|---|---|"]
    for a in d["actions"]:
        if a.get("owner") == name:
            rows.append("| `%s` | %s |" % (a["name"], cell(a.get("doc") or "")))
    return rows


def describe(polis, scenario, cache):
    if scenario not in cache:
        out = subprocess.run([polis, "describe", scenario, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError("polis describe %s failed: %s" % (scenario, out.stderr.strip()))
        cache[scenario] = json.loads(out.stdout)
    return cache[scenario]


def check(polis, readme, fix, cache):
    """Returns the list of problems in one README (empty when it agrees)."""
    with open(readme) as f:
        lines = f.read().split("\n")
    problems, out, i, n_params = [], [], 0, 0
    rel = os.path.relpath(readme)
    while i < len(lines):
        m = MARK.match(lines[i])
        out.append(lines[i])
        if not m:
            i += 1
            continue
        kind, name, scn = m.groups()
        start = i + 1
        j = start
        while j < len(lines) and lines[j] != END:
            j += 1
        if j == len(lines):
            problems.append("%s:%d: no %r after the marker" % (rel, i + 1, END))
            break
        d = describe(polis, os.path.join(os.path.dirname(readme), scn), cache)
        if kind == "params":
            n_params += 1
            found = [p for p in d["plugins"] if p["name"] == name]
            if not found:
                problems.append("%s:%d: %s loads no plugin or script named %r" % (rel, i + 1, scn, name))
                want = lines[start:j]
            else:
                want = param_rows(found[0])
        else:
            want = action_rows(d, name)
        have = lines[start:j]
        if have != want:
            for k in range(max(len(have), len(want))):
                h = have[k] if k < len(have) else None
                w = want[k] if k < len(want) else None
                if h != w:
                    where = "%s:%d" % (rel, start + k + 1)
                    if h is None:
                        problems.append("%s: row missing, describe has: %s" % (where, w))
                    elif w is None:
                        problems.append("%s: row not in describe: %s" % (where, h))
                    else:
                        problems.append("%s: row differs\n    README:   %s\n    describe: %s" % (where, h, w))
        out.extend(want)
        out.append(END)
        i = j + 1
    text = "\n".join(lines)
    if re.search(r"^#+ Parameters", text, re.M) and n_params == 0:
        problems.append("%s: has a Parameters section but no generated params table (%s)"
                        % (rel, "<!-- polis describe: params NAME SCENARIO -->"))
    if fix and problems:
        with open(readme, "w") as f:
            f.write("\n".join(out))
    return problems


def main():
    args = [a for a in sys.argv[1:] if a != "--fix"]
    fix = "--fix" in sys.argv[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    polis, root = os.path.abspath(args[0]), args[1]
    os.chdir(root)
    readmes = sorted(glob.glob("rulesets/*/README.md") + glob.glob("plugins/*/README.md") +
                     glob.glob("examples/*/README.md"))
    cache, problems = {}, []
    for r in readmes:
        problems += check(polis, r, fix, cache)
    for p in problems:
        print(p)
    if problems and not fix:
        print("%d difference(s); `%s %s %s --fix` regenerates the tables"
              % (len(problems), sys.argv[0], args[0], args[1]))
        sys.exit(1)
    print("%d READMEs, %s" % (len(readmes), "fixed" if problems else "tables agree with polis describe"))


if __name__ == "__main__":
    main()
