#!/bin/sh
# examples/bench_targets.sh [--quick] [--rows REGEX] [--passes N] [--craftax DIR] [POLIS] —
# measures every row of docs/performance.md's "The targets at a glance" on the current code and
# prints it as a markdown table (target | figure | command | verdict), one row as each finishes,
# then every command it ran. Run from the repository root after a Release build:
#   cmake -S . -B build-perf -DCMAKE_BUILD_TYPE=Release && cmake --build build-perf -j2
#   examples/bench_targets.sh --craftax /tmp/cx        # about 10-20 minutes on 2 cores
#   examples/bench_targets.sh --quick                  # every row once, short runs: a smoke test
#   examples/bench_targets.sh --rows '^compact$'       # only the rows whose id matches
# A figure is the median of PASSES passes (default 5; each `polis bench ... --repeat R` gives
# its median line) with their range, or the median of as many alternated pairs' ratios
# (A B A B ...) with their range; rates are per CPU-second of the process except the thread
# rows (wall: two threads' CPU time is the sum of both). The verdict compares the median with
# the target's threshold. Options:
#   --quick          short runs, one pass: checks every row runs, its figures mean nothing
#   --rows REGEX     only the rows whose id (the command column) matches REGEX (grep -E)
#   --passes N       passes, or pairs for the ratios (default 5; recording at least 3)
#   --craftax DIR    a checkout of craftax.cu (craftax_classic.c) for the Survival row,
#                    which is skipped without it (rulesets/survival/bench_craftax.sh)
#   POLIS            the polis program (default build-perf/polis); its directory's
#                    libpolis.so is the one the Python row loads
# Exit status 0 when every selected row was measured (missed targets included), 1 when a
# command failed, 2 on bad arguments.
set -eu
me=bench_targets.sh
usage="usage: examples/bench_targets.sh [--quick] [--rows REGEX] [--passes N] [--craftax DIR] [POLIS]"
P=build-perf/polis quick=0 rows=. passes=5 cx=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --rows | --passes | --craftax)
        [ $# -ge 2 ] || { echo "$me: $1 needs a value" >&2; exit 2; }
        case $1 in --rows) rows=$2 ;; --passes) passes=$2 ;; --craftax) cx=$2 ;; esac
        shift ;;
    -h | --help) echo "$usage"; exit 0 ;;
    -*) echo "$me: unknown option '$1'" >&2; echo "$usage" >&2; exit 2 ;;
    *) P=$1 ;;
    esac
    shift
done
case $passes in '' | *[!0-9]* | 0) echo "$me: --passes must be a positive integer" >&2; exit 2 ;; esac
[ -x "$P" ] || { echo "$me: $P is not an executable polis (build it first)" >&2; exit 2; }
[ -f rulesets/gather/gather.json ] || { echo "$me: run it from the repository root" >&2; exit 2; }
echo x | grep -Eq -- "$rows" 2>/dev/null || [ $? -eq 1 ] || { echo "$me: --rows: bad regex '$rows'" >&2; exit 2; }
[ "$quick" = 1 ] && passes=1
recpairs=$passes
[ "$quick" = 0 ] && [ "$recpairs" -lt 3 ] && recpairs=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/commands"

# ---- helpers ----------------------------------------------------------------------------------
st() { # N: N steps, or N/50 (at least 2) with --quick
    if [ "$quick" = 1 ]; then echo $(($1 / 50 > 2 ? $1 / 50 : 2)); else echo "$1"; fi
}
wq() { [ "$quick" = 1 ] && echo "--warmup 5" || true; } # --quick: a short warm-up
q() { # the arguments as one line a shell reads back as the same words
    out=
    for a in "$@"; do
        case $a in
        '' | *[!A-Za-z0-9_./=:,@+%-]*) a="'$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'" ;;
        esac
        out="$out${out:+ }$a"
    done
    printf '%s\n' "$out"
}
x() { # CMD...: logs the command, runs it with its output in $tmp/out
    q "$@" >>"$tmp/commands"
    if ! "$@" >"$tmp/out" 2>"$tmp/err"; then
        echo "$(q "$@"): failed: $(tail -n 1 "$tmp/err")" >"$tmp/why"
        return 1
    fi
}
pre= # a command run in front of polis (taskset)
b() { # KIND BENCH-ARGS...: polis bench's median line: cpu/envcpu (per CPU-second), wall
    kind=$1
    shift
    # shellcheck disable=SC2046,SC2086
    x $pre "$P" bench "$@" $(wq) || return 1
    v=$(awk -v k="$kind" '(k == "cpu" && /^agent-steps\/CPU-s/) || (k == "envcpu" && /^env steps\/CPU-s/) ||
                          (k == "wall" && /^agent-steps\/s/) { print $(k == "envcpu" ? 3 : 2); exit }' "$tmp/out")
    [ -n "$v" ] || { echo "$(q "$P" bench "$@"): no rate in its report" >"$tmp/why"; return 1; }
    echo "$v"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a / (b > 0 ? b : 0.005) }'; } # 0: under /usr/bin/time's 0.01 s
put() { # LABEL VALUE THRESHOLD ge|gt|le|info KIND(M|x|pct): one measured figure of the row
    printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$tmp/vals"
}
passes_of() { # LABEL THRESHOLD KIND(cpu|envcpu) BENCH-ARGS...: PASSES passes of a rate
    label=$1 thr=$2 kind=$3
    shift 3
    k=0
    while [ "$k" -lt "$passes" ]; do
        v=$(b "$kind" "$@") || return 1
        put "$label" "$v" "$thr" ge M
        k=$((k + 1))
    done
}
pairs_of() { # LABEL THRESHOLD DIR KIND "A-ARGS" "B-ARGS": PASSES alternated pairs, B ÷ A
    label=$1 thr=$2 dir=$3 kind=$4 A=$5 B=$6
    k=0
    while [ "$k" -lt "$passes" ]; do
        a=$(eval "b $kind $A") || return 1
        c=$(eval "b $kind $B") || return 1
        put "$label" "$(ratio "$c" "$a")" "$thr" "$dir" x
        k=$((k + 1))
    done
}
# the figures of a row (label median (min-max); ...) and its verdict, tab-separated
summary() {
    awk -F '\t' '
    function f(k, v) {
        if (k == "x") return sprintf("%.2f", v)
        if (k == "pct") return sprintf("%.0f", v)
        return v < 1e5 ? sprintf("%.0f k", v / 1e3) : sprintf("%.2f", v / 1e6)
    }
    function unit(k) { return k == "x" ? "×" : k == "pct" ? "%" : k == "M" ? " M" : "" }
    { l = $1; if (!(l in n)) { o[++m] = l; thr[l] = $3; dir[l] = $4; kind[l] = $5 }
      v[l, ++n[l]] = $2 + 0 }
    END {
        for (i = 1; i <= m; i++) {
            l = o[i]; c = n[l]; k = kind[l]
            for (a = 1; a <= c; a++) s[a] = v[l, a]
            for (a = 2; a <= c; a++) { t = s[a]; for (j = a - 1; j >= 1 && s[j] > t; j--) s[j + 1] = s[j]; s[j + 1] = t }
            med = c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
            u = (k == "M" && med < 1e5) ? "" : unit(k)
            fig = f(k, med) u
            if (c > 1) fig = fig " (" f(k, s[1]) "-" f(k, s[c]) ")"
            figs = figs (i > 1 ? "; " : "") l " " fig
            d = dir[l]
            if ((d == "ge" && med < thr[l]) || (d == "gt" && med <= thr[l]) || (d == "le" && med > thr[l]))
                miss = miss (miss == "" ? "" : ", ") l
            else if (d != "info") met++
        }
        print figs "\t" (miss != "" ? "**missed**: " miss : met ? "met" : "not measured")
    }' "$tmp/vals"
}

E=rulesets/exploration/exploration.json
M='plugins.society.params.map.size={"x":64,"y":64}'
G=rulesets/gather/gather.json
C=rulesets/contract/contract.json
N=rulesets/negotiation/negotiation.json
S=rulesets/survival/survival_classic.json
SS=rulesets/social_structure
ROOT=$(pwd)
BUILD=$(cd "$(dirname "$P")" && pwd)
PABS=$BUILD/$(basename "$P")

# ---- the rows: each sets $target (the table's first cell), puts its figures or sets $skip --------
r_exploration_physical() {
    target="Exploration, physical, 4 / 8 / 20 / 100 agents, ≥ 1 M agent-steps/CPU-s"
    for n in 4 8 20 100; do
        passes_of "$n agents" 1e6 cpu $E --policy physical --agents $n --steps "$(st 5000)" --repeat 5 || return 1
    done
}
r_exploration_physical_1000() {
    target="Exploration, physical, 1000 agents on 64×64, ≥ 0.5 M agent-steps/CPU-s"
    passes_of "1000 agents" 5e5 cpu $E --policy physical --agents 1000 --set "$M" --steps "$(st 20)" --repeat 5
}
r_exploration_social() {
    target="Exploration, random social actions, 8 / 20 / 100 agents, ≥ 1 M agent-steps/CPU-s"
    passes_of "8 agents" 1e6 cpu $E --agents 8 --steps "$(st 20000)" --repeat 5 &&
        passes_of "20 agents" 1e6 cpu $E --agents 20 --steps "$(st 8000)" --repeat 5 &&
        passes_of "100 agents" 1e6 cpu $E --agents 100 --steps "$(st 1000)" --repeat 5
}
r_exploration_social_1000() {
    target="Exploration, random social actions, 1000 agents on 64×64, \`social_state: \"shared\"\`, ≥ 0.5 M agent-steps/CPU-s (the per-agent default beside it)"
    passes_of '"shared"' 5e5 cpu $E --agents 1000 --set "$M" --set 'plugins.social.params.social_state="shared"' \
        --steps "$(st 20)" --repeat 3 || return 1
    k=0
    while [ "$k" -lt "$passes" ]; do
        v=$(b cpu $E --agents 1000 --set "$M" --steps "$(st 20)" --repeat 3) || return 1
        put "per-agent (\`true\`, not the target)" "$v" 0 info M
        k=$((k + 1))
    done
}
r_contract_negotiation() {
    target="Contract, Contract Hard, Negotiation, Negotiation Hard, ≥ 1 M agent-steps/CPU-s"
    for f in $C rulesets/contract/contract_hard.json $N rulesets/negotiation/negotiation_hard.json; do
        l=${f##*/}
        passes_of "${l%.json}" 1e6 cpu "$f" --steps "$(st 5000)" --repeat 5 || return 1
    done
}
ss() { # easy|hard
    for g in isolation ind_group inequality dynamic connection ovlp_group; do
        [ "$1" = hard ] && g=${g}_hard
        passes_of "$g" 1e6 cpu $SS/$g.json --steps "$(st 5000)" --repeat 5 || return 1
    done
}
r_social_structure_easy() {
    target="Social Structure, the 6 Easy games, ≥ 1 M agent-steps/CPU-s"
    ss easy
}
r_social_structure_hard() {
    target="Social Structure, the 6 Hard games, ≥ 1 M agent-steps/CPU-s"
    ss hard
}
r_survival_craftax() {
    target="Survival ahead of craftax.cu per core (env steps per CPU-second, polis ÷ craftax.cu > 1), 1 env and 64 envs on one thread"
    if [ -z "$cx" ]; then
        skip="skipped: no craftax.cu checkout given (--craftax DIR, github.com/Infatoshi/craftax.cu at 214f25c)"
        return 0
    fi
    if [ ! -f "$cx/craftax_classic.c" ]; then
        skip="skipped: $cx has no craftax_classic.c (a craftax.cu checkout)"
        return 0
    fi
    # bench_craftax.sh runs build-bench/polis from the repository root: a directory that links
    # both to this polis
    mkdir -p "$tmp/cxroot/build-bench"
    ln -sf "$ROOT/rulesets" "$tmp/cxroot/rulesets"
    ln -sf "$PABS" "$tmp/cxroot/build-bench/polis"
    cxa=$(cd "$cx" && pwd)
    r=6 s=2000000
    [ "$quick" = 1 ] && r=1 s=20000
    for envs in 1 64; do
        echo "(cd a directory with rulesets/ and build-bench/polis -> $P) $(q rulesets/survival/bench_craftax.sh "$cx" $envs $r $s)" >>"$tmp/commands"
        if ! (cd "$tmp/cxroot" && sh "$ROOT/rulesets/survival/bench_craftax.sh" "$cxa" $envs $r $s) >"$tmp/out" 2>"$tmp/err"; then
            echo "bench_craftax.sh $envs envs failed: $(tail -n 1 "$tmp/err")" >"$tmp/why"
            return 1
        fi
        [ $envs = 1 ] && l="1 env" || l="$envs envs"
        awk '/^polis [0-9]+ envs:/ { p = $4 } /^craftax.cu [0-9]+ envs:/ { printf "%.6f\n", p / $4 }' "$tmp/out" >"$tmp/r"
        [ -s "$tmp/r" ] || { echo "bench_craftax.sh $envs envs: no rates" >"$tmp/why"; return 1; }
        while read -r v; do put "$l" "$v" 1 gt x; done <"$tmp/r"
    done
}
r_threads_never_slower() {
    target="Two threads never slower than one (agent-steps per wall second, T = 2 ÷ T = 1 ≥ 0.95: within a run's noise), on two CPUs and pinned to one (\`taskset -c 0\`)"
    for p in "" "taskset -c 0"; do
        pre=$p
        [ -z "$p" ] && w="two CPUs" || w="one CPU"
        pairs_of "gather 2 × 4, $w" 0.95 ge wall "$G --envs 2 --threads 1 --steps $(st 30000) --repeat 3" \
            "$G --envs 2 --threads 2 --steps $(st 30000) --repeat 3" || { pre=; return 1; }
        pairs_of "gather 16 × 4, $w" 0.95 ge wall "$G --envs 16 --threads 1 --steps $(st 4000) --repeat 3" \
            "$G --envs 16 --threads 2 --steps $(st 4000) --repeat 3" || { pre=; return 1; }
    done
    pre=
}
r_threads_speedup() {
    target="Two threads × 2+ envs ≥ 1.8× one thread (agent-steps per wall second, T = 2 ÷ T = 1)"
    for t in "contract 16 envs|$C --envs 16 --steps $(st 2000) --repeat 3" \
        "Exploration 2 × 100, physical|$E --agents 100 --envs 2 --policy physical --steps $(st 300) --repeat 3" \
        "gather 16 × 4|$G --envs 16 --steps $(st 4000) --repeat 3" \
        "survival 16 × 1|$S --envs 16 --steps $(st 2000) --repeat 3"; do
        pairs_of "${t%%|*}" 1.8 ge wall "${t#*|} --threads 1" "${t#*|} --threads 2" || return 1
    done
}
r_compact() {
    target="Compact observations never slower than plain (per CPU-second, compact ÷ plain ≥ 0.95: within a run's noise)"
    for t in "Exploration 8, random social|cpu|$E --agents 8 --steps $(st 20000) --repeat 5" \
        "Exploration 100, random social|cpu|$E --agents 100 --steps $(st 1000) --repeat 5" \
        "contract|cpu|$C --steps $(st 5000) --repeat 5" \
        "negotiation|cpu|$N --steps $(st 5000) --repeat 5" \
        "survival|envcpu|$S --steps $(st 20000) --repeat 5"; do
        r=${t#*|}
        pairs_of "${t%%|*}" 0.95 ge "${r%%|*}" "${r#*|}" "${r#*|} --compact" || return 1
    done
}
timed() { # OUT N CMD...: /usr/bin/time's wall, user and system seconds of N runs of CMD in a row
    o=$1 n=$2
    shift 2
    if [ "$n" = 1 ]; then
        x /usr/bin/time -f '%e %U %S' -o "$o" "$@"
    else
        x /usr/bin/time -f '%e %U %S' -o "$o" sh -c "for i in $(seq -s ' ' "$n"); do \"\$0\" \"\$@\" || exit 1; done" "$@"
    fi
}
timed_rec() { # OUT N Z CMD...: as timed, each run recording to a file of its own, new: replacing an
    # old recording of the same name would add the filesystem's delete of it (about 0.1x on
    # survival's 70 MB) to a cost that is not the recorder's
    o=$1 n=$2 z=$3
    shift 3
    x /usr/bin/time -f '%e %U %S' -o "$o" sh -c "for i in $(seq -s ' ' "$n"); do \"\$0\" \"\$@\" --record \"$tmp/rec\$i.jsonl$z\" || exit 1; done" "$@"
}
r_recording() {
    target="Recording ≤ 1.3× a bare run (\`.gz\` ≤ 1.5×) by the whole run (\`polis run\`, wall time; user + system beside it)"
    [ -x /usr/bin/time ] || { skip="skipped: no /usr/bin/time (Debian: apt-get install time)"; return 0; }
    # GAME SCENARIO EPISODES RUNS QUICK-EPISODES: a sample is RUNS runs in a row (about a second
    # bare), so that the hundredths /usr/bin/time prints do not round the ratios
    for t in "survival_classic $S 2000 5 20" "exploration $E 100 3 2" "gather $G 300 20 5" "contract $C 300 10 5"; do
        set -- $t
        g=$1 f=$2 eps=$3 n=$4
        [ "$quick" = 1 ] && eps=$5 n=1
        for z in "" .gz; do
            [ -z "$z" ] && thr=1.3 w=plain || thr=1.5 w=.gz
            l="$g, $eps episodes$([ "$n" -gt 1 ] && echo " ($n runs a sample)" || true), $w"
            k=0
            while [ "$k" -lt "$recpairs" ]; do
                timed "$tmp/t0" "$n" "$P" run "$f" --episodes "$eps" --quiet || return 1
                timed_rec "$tmp/t1" "$n" "$z" "$P" run "$f" --episodes "$eps" --quiet || return 1
                rm -f "$tmp"/rec*.jsonl*
                # shellcheck disable=SC2046
                set -- $(tail -n 1 "$tmp/t0") $(tail -n 1 "$tmp/t1")
                put "$l" "$(ratio "$4" "$1")" $thr le x
                put "$g $w, CPU" "$(ratio "$(awk -v a="$5" -v b="$6" 'BEGIN { print a + b }')" \
                    "$(awk -v a="$2" -v b="$3" 'BEGIN { print a + b }')")" $thr info x
                k=$((k + 1))
            done
        done
    done
}
r_lua_hook() {
    target="A Lua reward and post-step hook ≥ 50% of pure C (exploration_lua ÷ exploration_physical, 8 agents, per CPU-second)"
    pairs_of "exploration_lua ÷ exploration_physical" 0.5 ge cpu \
        "rulesets/exploration/exploration_physical.json --steps $(st 3000) --repeat 5" \
        "rulesets/exploration/exploration_lua.json --steps $(st 3000) --repeat 5"
}
r_lua_commons() {
    target="Commons, a whole game in Lua, ≥ 0.6 M agent-steps/CPU-s with the default limits and with the deterministic instruction budget on"
    passes_of commons_open 6e5 cpu rulesets/commons/commons_open.json --steps "$(st 20000)" --repeat 5 || return 1
    passes_of "commons_open with the budget" 6e5 cpu rulesets/commons/commons_open.json \
        --steps "$(st 20000)" --repeat 5 --set lua.instruction_limit=100000000
}
r_python() {
    target="Python end to end ≥ 80% of C on every game (\`polis.vector_env\` and a numpy policy ÷ \`polis bench\`, 64 envs, per CPU-second, policy included)"
    py=/usr/bin/python3
    [ -x $py ] || { skip="skipped: no $py"; return 0; }
    $py -c 'import numpy' 2>/dev/null || { skip="skipped: $py has no numpy (Debian: python3-numpy)"; return 0; }
    lib=$(dirname "$P")/libpolis.so
    [ -f "$lib" ] || { skip="skipped: no $lib beside $P"; return 0; }
    PYTHONPATH=sdk/python POLIS_LIBRARY=$lib $py -c 'import polis; polis.load_library()' 2>/dev/null ||
        { skip="skipped: the Python module (sdk/python) does not load $lib"; return 0; }
    e=64 n=1
    [ "$quick" = 1 ] && e=4 n=0
    for t in gather contract negotiation exploration dynamic "$S" "commons_open --steps 300" \
        "rulesets/survival/survival_mac.json --steps 1000"; do
        set -- $t
        s=$1
        shift
        [ $# -gt 0 ] || set -- --steps 2000
        [ $n = 0 ] && set -- --steps 20
        x env POLIS="$P" POLIS_LIBRARY="$lib" PYTHONPATH=sdk/python $py examples/python_vec_throughput.py \
            "$s" --envs $e --threads 1 --compare --pairs "$passes" "$@" || return 1
        l=${s##*/}
        sed -n 's/.*(pairs: \(.*\))$/\1/p' "$tmp/out" | tr ',' '\n' | tr -d ' %' | grep . >"$tmp/r" ||
            { echo "python_vec_throughput.py $s: no pairs in its report" >"$tmp/why"; return 1; }
        while read -r v; do put "${l%.json}" "$v" 80 ge pct; done <"$tmp/r"
    done
}
r_no_alloc() {
    target="No allocation in the step loop"
    skip="not measured: tests/unit/test_vec.c (test_no_alloc) counts the allocator's calls over 10,000 vec steps of 3 envs, 1 and 2 threads, and fails on any (\`ctest -R '^test_vec$'\`)"
    verdict="checked by a test"
}

all="exploration-physical exploration-physical-1000 exploration-social exploration-social-1000
contract-negotiation social-structure-easy social-structure-hard survival-craftax
threads-never-slower threads-speedup compact recording lua-hook lua-commons python no-alloc"
sel=
for id in $all; do
    if printf '%s\n' "$id" | grep -Eq -- "$rows"; then sel="$sel $id"; fi
done
[ -n "$sel" ] || { echo "$me: --rows '$rows' matches no row (rows: $(echo $all))" >&2; exit 2; }

rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || rev="$rev (with uncommitted changes)"
cpu=$(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "bench_targets.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev, $P, ${cpu:-an unknown CPU}" \
    "× $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?'), load average $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')" \
    "at the start; $passes pass(es) or pair(s) a figure$([ "$quick" = 1 ] && echo ', --quick: short runs whose figures mean nothing')."
echo
echo "| target | figure on the current code | command | verdict |"
echo "|---|---|---|---|"
failed=0
for id in $sel; do
    target='' skip='' verdict=''
    : >"$tmp/vals"
    : >"$tmp/why"
    echo "$me: $id ..." >&2
    echo "# $id" >>"$tmp/commands"
    fn=r_$(echo "$id" | tr '-' '_')
    if $fn; then
        if [ -n "$skip" ]; then
            fig=$skip verdict=${verdict:-not measured}
        else
            s=$(summary)
            fig=${s%%"	"*} verdict=${s#*"	"}
        fi
    else
        failed=1
        fig="failed: $(cat "$tmp/why")" verdict="not measured"
    fi
    echo "| $target | $fig | \`examples/bench_targets.sh --rows '^$id\$'\` | $verdict |"
done
echo
echo "Load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?'). The commands, from the repository root (× N: run N times):"
echo
echo '```sh'
# each row's commands once, in the order first run; the scratch directory as $TMP
awk -v t="$tmp" '/^# / { r = $0 } { gsub(t, "$TMP"); k = r SUBSEP $0; if (!(k in n)) o[++m] = k; n[k]++ }
     END { for (i = 1; i <= m; i++) { split(o[i], f, SUBSEP); print f[2] (n[o[i]] > 1 ? "   # × " n[o[i]] : "") } }' "$tmp/commands"
echo '```'
exit $failed
