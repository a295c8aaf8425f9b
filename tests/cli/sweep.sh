# polis sweep: argument and spec errors, the results file and the summaries, determinism
# across thread counts, --resume (finished, torn, different sweep), and a run killed midway
# and resumed whose summary equals an uninterrupted run's, byte for byte.
. "$(dirname "$0")/lib.sh"

SPEC=$SRC/examples/sweep_minigames.json
CONTRACT=$SRC/rulesets/contract/contract.json
NEGOTIATION=$SRC/rulesets/negotiation/negotiation.json

# ---- usage errors (exit 2) ----
polis 2 sweep --scenario "$CONTRACT"
err_line "polis: sweep: missing --out DIR (or \"out\" in the spec): where the results go"
err_line "Try 'polis help sweep'."
polis 2 sweep --scenario "$CONTRACT" --out "$TMP/x" --grid max_steps=50
err_line "polis: sweep: --grid: 'max_steps=50': the values are not a non-empty JSON array"
polis 2 sweep --scenario "$CONTRACT" --out "$TMP/x" --grid 'max_steps=[]'
err_line "polis: sweep: --grid: 'max_steps=[]': the values are not a non-empty JSON array"
polis 2 sweep --grid '=[1]'
err_line "polis: sweep: --grid: '=[1]' is not PATH=ARRAY (e.g. 'max_steps=[50,100]')"
polis 2 sweep --threads 0
err_line "polis: sweep: --threads: '0' is not an integer in [1, 1024]"
polis 2 sweep --format yaml
err_line "polis: sweep: --format: 'yaml' is not one of: table, json, csv"
polis 2 sweep --seed 9007199254740993
err_line "polis: sweep: --seed: '9007199254740993' is not an integer in [0, 2^53]"
polis 2 sweep --resume=yes
err_line "polis: sweep: --resume takes no value"
polis 2 sweep --frob
err_line "polis: sweep: unknown option '--frob'"
polis 2 sweep "$SPEC" "$SPEC"
err_has "polis: sweep: unexpected argument"
polis 0 help sweep
out_has "usage: polis sweep [SPEC] [options]"
out_has "--resume"
out_has "This polis is built with"

# ---- spec errors (exit 1), with the place ----
polis 1 sweep "$TMP/missing.json"
err_has "polis: sweep: cannot read $TMP/missing.json: "
printf '{\n  "scenarios": ["a.json"],\n  "grid": {"max_steps": [1, 2,]}\n}\n' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: 3: not valid JSON"
printf '{"scenarios": ["a.json"], "episode": 3}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: episode: unknown key (known: scenarios, set, grid, policies, seed, episodes, seeds, steps, metrics, out, doc)"
printf '{"scenarios": ["a.json"], "grid": {"max_steps": 50}}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: grid.max_steps: expected a non-empty array of values"
printf '{"scenarios": ["a.json"], "seeds": [1, -2]}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: seeds[1]: expected an integer in [0, 2^53]"
printf '{"scenarios": ["a.json"], "seeds": [1], "episodes": 4}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: seeds: give either \"seeds\" or \"seed\" and \"episodes\""
printf '{"scenarios": [""]}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: scenarios[0]: expected a non-empty string"
printf '{"policies": ["random"], "out": "o"}' >"$TMP/bad.json"
polis 1 sweep "$TMP/bad.json"
err_line "polis: $TMP/bad.json: no scenarios: give them in the spec's \"scenarios\" or with --scenario"
ten='[1,2,3,4,5,6,7,8,9,10]'
polis 1 sweep --scenario "$CONTRACT" --out "$TMP/huge" --episodes 1000 --grid "a=$ten" \
    --grid "b=$ten" --grid "c=$ten" --grid "d=$ten" --grid "e=$ten" --grid "f=$ten"
err_line "polis: sweep: the sweep has 1000000000 jobs, more than 100000000"
# a cell the engine refuses: nothing is played, the message names the cell
polis 1 sweep --scenario "$CONTRACT" --grid 'max_steps=[10,-1]' --out "$TMP/bad_cell" --episodes 2
err_has "polis: cell 1 (contract.json, policy random, max_steps=-1): "
err_has "max_steps"
checks=$((checks + 1))
[ ! -e "$TMP/bad_cell/results.jsonl" ] || fail "sweep: a refused cell still started the results"
polis 1 sweep --scenario "$CONTRACT" --scenario "$NEGOTIATION" --policy random --policy nope --out "$TMP/bad_policy"
err_has "polis: cell 1 (contract.json, policy nope): 'nope' is not a policy of this scenario (policies: "

# ---- a sweep on 1 and on 2 threads: the same jobs, hashes and summaries ----
polis 0 sweep "$SPEC" --out "$TMP/t1" --threads 1 --seed 3 --episodes 20
err_empty
out_line "sweep: 4 cells x 20 seeds = 80 episodes"
out_line "cell 0: contract, policy random, max_steps=60 (20 episodes)"
out_line "cell 3: negotiation, policy random, max_steps=120 (20 episodes)"
out_has "  metric "
out_has "95% interval"
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/t1/summary.txt" || fail "sweep: the table printed is not summary.txt"
polis 0 sweep "$SPEC" --out "$TMP/t2" --threads 2 --seed 3 --episodes 20 --format csv
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/t2/summary.csv" || fail "sweep --format csv: not summary.csv"
for f in summary.txt summary.csv summary.json; do
    checks=$((checks + 1))
    cmp -s "$TMP/t1/$f" "$TMP/t2/$f" || fail "sweep: $f differs between 1 and 2 threads"
done
polis 0 sweep "$SPEC" --out "$TMP/t3" --threads 2 --seed 3 --episodes 20 --format json
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/t1/summary.json" || fail "sweep --format json: not summary.json"
checks=$((checks + 1))
python3 - "$TMP/t1" "$TMP/t2" "$SRC" <<'PY' || fail "sweep: the results or the summary are wrong (see above)"
import csv, json, math, statistics, sys
t1, t2, src = sys.argv[1:4]
def results(d):
    lines = open(d + "/results.jsonl").read().splitlines()
    head = json.loads(lines[0])
    return head, [json.loads(l) for l in lines[1:]]
h1, r1 = results(t1)
h2, r2 = results(t2)
assert h1 == h2 and h1["polis_sweep"] == 1 and h1["jobs"] == 80, h1
spec = h1["spec"]
assert spec["grid"] == {"max_steps": [60, 120]} and spec["policies"] == ["random"], spec
assert spec["seeds"] == list(range(3, 23)) and spec["metrics"] is True, spec
assert spec["scenarios"][0].endswith("examples/../rulesets/contract/contract.json"), spec
# every job once, with its cell, seed and hash; the same whichever thread played it
assert sorted(r["job"] for r in r1) == list(range(80))
by1 = {r["job"]: r for r in r1}
by2 = {r["job"]: r for r in r2}
for j, r in by1.items():
    assert r["cell"] == j // 20 and r["seed"] == 3 + j % 20, r
    assert r["scenario"] == ("contract" if j < 40 else "negotiation"), r
    assert r["params"] == {"max_steps": 60 if (j // 20) % 2 == 0 else 120}, r
    assert len(r["hash"]) == 16 and r == by2[j], (r, by2[j])
    assert r["steps"] == r["metrics"]["steps"] <= r["params"]["max_steps"], r
assert len({r["hash"] for r in r1}) > 60, "hashes do not depend on the seed"
# the summary: mean, sample sd and the t interval of each metric, recomputed here
summary = json.load(open(t1 + "/summary.json"))
assert [c["cell"] for c in summary["cells"]] == [0, 1, 2, 3]
T19 = 2.0930240544
for c in summary["cells"]:
    rows = [by1[c["cell"] * 20 + k]["metrics"] for k in range(20)]
    assert c["episodes"] == 20 and c["params"] == by1[c["cell"] * 20]["params"], c
    for name, m in c["metrics"].items():
        vals = [r[name] for r in rows if r.get(name) is not None]
        assert m["n"] == len(vals), (name, m)
        if not vals:
            assert m["mean"] is None and m["ci95"] == [None, None]
            continue
        mean = math.fsum(vals) / len(vals)
        assert math.isclose(m["mean"], mean, rel_tol=1e-12, abs_tol=1e-12), (name, m, mean)
        if len(vals) > 1:
            sd = statistics.stdev(vals)
            assert math.isclose(m["sd"], sd, rel_tol=1e-9, abs_tol=1e-12), (name, m, sd)
        if len(vals) == 20:
            half = T19 * sd / math.sqrt(20)
            assert math.isclose(m["ci95"][1] - m["mean"], half, rel_tol=1e-5, abs_tol=1e-12), (name, m)
            assert math.isclose(m["mean"] - m["ci95"][0], half, rel_tol=1e-5, abs_tol=1e-12), (name, m)
# the CSV: one row per cell and metric, the grid path as a column
rows = list(csv.DictReader(open(t1 + "/summary.csv")))
assert list(rows[0].keys()) == ["cell", "scenario", "policy", "max_steps", "metric", "n",
                                "mean", "sd", "ci95_low", "ci95_high"], rows[0].keys()
assert len(rows) == sum(len(c["metrics"]) for c in summary["cells"])
for row in rows:
    m = summary["cells"][int(row["cell"])]["metrics"][row["metric"]]
    assert int(row["n"]) == m["n"]
    assert (row["mean"] == "") == (m["mean"] is None)
    if m["mean"] is not None:
        assert float(row["mean"]) == m["mean"] and float(row["ci95_low"]) == m["ci95"][0]
PY

# ---- --resume: a finished sweep, a torn file, another sweep's file ----
polis 1 sweep "$SPEC" --out "$TMP/t1" --threads 1 --seed 3 --episodes 20
err_line "polis: $TMP/t1/results.jsonl: already holds a sweep: --resume finishes it; remove it to start again"
cp "$TMP/t1/summary.txt" "$TMP/t1.txt"
polis 0 sweep "$SPEC" --out "$TMP/t1" --resume --threads 1 --seed 3 --episodes 20
err_line "polis: sweep: 80 of 80 jobs already in $TMP/t1/results.jsonl"
checks=$((checks + 1))
cmp -s "$TMP/t1.txt" "$TMP/t1/summary.txt" || fail "sweep --resume of a finished sweep: the summary changed"
checks=$((checks + 1))
[ "$(wc -l <"$TMP/t1/results.jsonl")" -eq 81 ] || fail "sweep --resume of a finished sweep played again"
# keep the header and 30 results, the last one cut in the middle: the torn line is dropped
mkdir -p "$TMP/torn"
head -n 31 "$TMP/t2/results.jsonl" >"$TMP/torn/results.jsonl"
sed -n 32p "$TMP/t2/results.jsonl" | head -c 50 >>"$TMP/torn/results.jsonl"
polis 0 sweep "$SPEC" --out "$TMP/torn" --resume --threads 2 --seed 3 --episodes 20
err_line "polis: sweep: 30 of 80 jobs already in $TMP/torn/results.jsonl"
for f in summary.txt summary.csv summary.json; do
    checks=$((checks + 1))
    cmp -s "$TMP/t1/$f" "$TMP/torn/$f" || fail "sweep --resume after a torn line: $f differs"
done
checks=$((checks + 1))
[ "$(wc -l <"$TMP/torn/results.jsonl")" -eq 81 ] || fail "sweep --resume: not 80 results"
polis 1 sweep "$SPEC" --out "$TMP/torn" --resume --seed 4 --episodes 20
err_line "polis: $TMP/torn/results.jsonl: 1: written by a different sweep (its spec differs from this one's); give another --out"
mkdir -p "$TMP/broken"
{ head -n 1 "$TMP/t1/results.jsonl"; echo '{"job": 5, "cell": 2, "seed": 8, "metrics": {}}'; } >"$TMP/broken/results.jsonl"
polis 1 sweep "$SPEC" --out "$TMP/broken" --resume --seed 3 --episodes 20
err_line "polis: $TMP/broken/results.jsonl: 2: job 5 is cell 0 seed 8 in this sweep, not cell 2 seed 8"
{ head -n 1 "$TMP/t1/results.jsonl"; echo 'not json'; } >"$TMP/broken/results.jsonl"
polis 1 sweep "$SPEC" --out "$TMP/broken" --resume --seed 3 --episodes 20
err_line "polis: $TMP/broken/results.jsonl: 2: not a JSON object"

# ---- a run killed midway (SIGKILL), then --resume: the summary of an uninterrupted run ----
polis 0 sweep "$SPEC" --out "$TMP/whole" --threads 2 --quiet
"$POLIS" sweep "$SPEC" --out "$TMP/killed" --threads 2 --quiet >/dev/null 2>&1 &
pid=$!
n=0
while [ "$n" -lt 10 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.01
    n=$(cat "$TMP/killed/results.jsonl" 2>/dev/null | wc -l)
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
n=$(wc -l <"$TMP/killed/results.jsonl")
checks=$((checks + 1))
[ "$n" -gt 1 ] && [ "$n" -lt 401 ] || fail "sweep: the run was not killed midway ($n lines)"
checks=$((checks + 1))
[ ! -e "$TMP/killed/summary.txt" ] || fail "sweep: a killed run wrote a summary"
polis 0 sweep "$SPEC" --out "$TMP/killed" --threads 2 --resume --quiet
err_has " of 400 jobs already in $TMP/killed/results.jsonl"
for f in summary.txt summary.csv summary.json; do
    checks=$((checks + 1))
    cmp -s "$TMP/whole/$f" "$TMP/killed/$f" || fail "sweep killed and resumed: $f differs from an uninterrupted run's"
done
checks=$((checks + 1))
[ "$(wc -l <"$TMP/killed/results.jsonl")" -eq 401 ] || fail "sweep killed and resumed: not 400 results"

# ---- --record: one recording per job, named in its result line, replayed and verified;
# the results are those of a sweep without recordings ----
GATHER=$SRC/rulesets/gather/gather.json
polis 0 sweep --scenario "$CONTRACT" --scenario "$GATHER" --episodes 3 --steps 40 --record \
    --out "$TMP/rec" --threads 2 --quiet
polis 0 sweep --scenario "$CONTRACT" --scenario "$GATHER" --episodes 3 --steps 40 \
    --out "$TMP/norec" --threads 1 --quiet
checks=$((checks + 1))
[ "$(ls "$TMP/rec/recordings" | wc -l)" -eq 6 ] || fail "sweep --record: not 6 recordings"
sed 's/,"recording":"[^"]*"//' "$TMP/rec/results.jsonl" | sort >"$TMP/rec.sorted"
sort "$TMP/norec/results.jsonl" >"$TMP/norec.sorted"
checks=$((checks + 1))
cmp -s "$TMP/rec.sorted" "$TMP/norec.sorted" || fail "sweep --record: results differ from a sweep without recordings"
for job in 0 1 2 3 4 5; do
    name=$(printf 'recordings/job-%06d.jsonl.gz' "$job")
    line=$(grep "^{\"job\":$job," "$TMP/rec/results.jsonl")
    checks=$((checks + 1))
    case "$line" in *"\"recording\":\"$name\""*) ;; *) fail "sweep --record: job $job does not name $name" ;; esac
    hash=$(printf '%s' "$line" | sed 's/.*"hash":"\([0-9a-f]*\)".*/\1/')
    checks=$((checks + 1))
    gzip -dc "$TMP/rec/$name" | tail -n 1 | grep -q "\"hash\":\"$hash\"" ||
        fail "sweep --record: job $job's recording does not end with the result's hash $hash"
    polis 0 replay "$TMP/rec/$name" --verify
    out_has "replay matches: 1 episode"
done
polis 1 sweep --scenario "$CONTRACT" --episodes 1 --record --out /proc/polis-no-such-dir --quiet
err_has "polis: /proc/polis-no-such-dir: cannot create the directory: "

# ---- the progress bar on a terminal (script(1) gives it one) ----
if command -v script >/dev/null 2>&1; then
    script -qec "'$POLIS' sweep --scenario '$CONTRACT' --episodes 30 --out '$TMP/bar' --threads 1 --format csv" /dev/null >"$TMP/bar.out" 2>&1
    checks=$((checks + 1))
    grep -q '/30 episodes' "$TMP/bar.out" || fail "sweep: no progress bar on a terminal"
    checks=$((checks + 1))
    grep -q 's left' "$TMP/bar.out" || fail "sweep: the progress bar has no time left"
fi

finish
