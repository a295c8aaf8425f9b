#!/bin/sh
# examples/bench_readme.sh [POLIS] [PASSES] — the README's "Speed" figures: every game's
# agent-steps per CPU-second (`polis bench`, one thread, one env, random legal actions,
# observations and masks on; Survival in env steps with one player), PASSES passes (default
# 5) of each, printed as the median and range of the passes' medians. Run from the
# repository root after a Release build:
#   cmake -S . -B build-perf -DCMAKE_BUILD_TYPE=Release && cmake --build build-perf -j2
set -eu
P=${1:-build-perf/polis}
passes=${2:-5}
[ -x "$P" ] || { echo "bench_readme.sh: $P is not an executable polis (build it first)" >&2; exit 2; }
case $passes in '' | *[!0-9]* | 0) echo "bench_readme.sh: PASSES must be a positive integer" >&2; exit 2 ;; esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
E=rulesets/exploration/exploration.json
M='plugins.society.params.map.size={"x":64,"y":64}'
one() { # label, then polis bench arguments; the median line's figure (env steps for survival)
    label=$1
    shift
    v=$("$P" bench "$@" --repeat 5 2>/dev/null |
        awk -v k="$label" '(k ~ /^survival/ && /^env steps\/CPU-s/) || (k !~ /^survival/ && /^agent-steps\/CPU-s/) {print $(k ~ /^survival/ ? 3 : 2); exit}')
    [ -n "$v" ] || { echo "bench_readme.sh: $label: polis bench gave no rate" >&2; exit 1; }
    echo "$label $v" >>"$out"
}
k=0
while [ "$k" -lt "$passes" ]; do
    for n in 4 8 20 100; do one "exploration-physical-$n" $E --policy physical --agents $n --steps 5000; done
    one exploration-physical-1000 $E --policy physical --agents 1000 --set "$M" --steps 20
    one exploration-social-8 $E --agents 8 --steps 20000
    one exploration-social-20 $E --agents 20 --steps 8000
    one exploration-social-100 $E --agents 100 --steps 1000
    for f in contract/contract contract/contract_hard negotiation/negotiation negotiation/negotiation_hard; do
        one "${f#*/}" rulesets/$f.json --steps 5000
    done
    for g in isolation ind_group inequality dynamic connection ovlp_group; do
        one "$g" rulesets/social_structure/$g.json --steps 5000
        one "${g}_hard" rulesets/social_structure/${g}_hard.json --steps 5000
    done
    one survival-1-player rulesets/survival/survival_classic.json --steps 20000
    one commons rulesets/commons/commons_open.json --steps 20000
    k=$((k + 1))
done
# one line per label, in the order first seen: median (min-max) in millions
awk '{ if (!($1 in n)) order[++m] = $1; v[$1, ++n[$1]] = $2 }
     END { for (i = 1; i <= m; i++) { l = order[i]; c = n[l]
             for (a = 1; a <= c; a++) s[a] = v[l, a]
             for (a = 2; a <= c; a++) { x = s[a]; for (b = a - 1; b >= 1 && s[b] > x; b--) s[b + 1] = s[b]; s[b + 1] = x }
             printf "%-26s %.2f M (%.2f-%.2f, %d passes)\n", l, s[int((c + 1) / 2)] / 1e6, s[1] / 1e6, s[c] / 1e6, c } }' "$out"
