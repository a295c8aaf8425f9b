# Usage errors exit 2 with a precise message; help and version exit 0.
. "$(dirname "$0")/lib.sh"

polis 0 --version
out_line "polis 0.8.0"
err_empty

polis 2
err_has "usage: polis <command> [options]"
out_empty

polis 0 --help
out_has "usage: polis <command> [options]"
out_has "  run SCENARIO"
polis 0 -h
out_has "usage: polis <command> [options]"
polis 0 help
out_has "usage: polis <command> [options]"
for cmd in run validate describe render record parse bench eval serve sweep help; do
    polis 0 help $cmd
    out_has "usage: polis $cmd"
    polis 0 $cmd --help
    out_has "usage: polis $cmd"
done
polis 0 help run
out_has "--policy NAME"
polis 0 --help
out_has "  render SCENARIO"
out_has "  parse SCENARIO ACTION"
polis 0 help render
out_has "--format F"
polis 0 help parse
out_has "usage: polis parse SCENARIO [options] ACTION"

polis 2 frobnicate
err_line "polis: unknown command 'frobnicate' (commands: run, validate, describe, render, record, parse, bench, eval, serve, sweep, replay, view, llm, help)"
err_line "Try 'polis --help'."
out_empty
polis 2 --frob
err_line "polis: unknown option '--frob'"
polis 2 help frobnicate
err_line "polis: help: unknown command 'frobnicate' (commands: run, validate, describe, render, record, parse, bench, eval, serve, sweep, replay, view, llm, help)"
polis 2 --version extra
err_line "polis: --version takes no arguments"

polis 2 run
err_line "polis: run: missing SCENARIO (a scenario .json file)"
err_line "Try 'polis help run'."
polis 2 validate
err_line "polis: validate: missing SCENARIO (a scenario .json file)"
polis 2 describe
err_line "polis: describe: missing SCENARIO (a scenario .json file)"
polis 2 render
err_line "polis: render: missing SCENARIO (a scenario .json file)"
polis 2 parse
err_line "polis: parse: missing SCENARIO (a scenario .json file)"

polis 2 run "$GATHER" --seed abc
err_line "polis: run: --seed: 'abc' is not an integer in [0, 2^64)"
out_empty
polis 2 run "$GATHER" --seed -1
err_line "polis: run: --seed: '-1' is not an integer in [0, 2^64)"
polis 2 run "$GATHER" --seed 18446744073709551616
err_line "polis: run: --seed: '18446744073709551616' is not an integer in [0, 2^64)"
polis 2 run "$GATHER" --seed 0x10
err_line "polis: run: --seed: '0x10' is not an integer in [0, 2^64)"
polis 2 run "$GATHER" --seed=
err_line "polis: run: --seed: '' is not an integer in [0, 2^64)"
polis 2 run "$GATHER" --seed
err_line "polis: run: --seed needs a value"
polis 2 run "$GATHER" --steps -1
err_line "polis: run: --steps: '-1' is not a positive integer"
polis 2 run "$GATHER" --steps 0
err_line "polis: run: --steps: '0' is not a positive integer"
polis 2 run "$GATHER" --steps 1.5
err_line "polis: run: --steps: '1.5' is not a positive integer"
polis 2 run "$GATHER" --episodes x
err_line "polis: run: --episodes: 'x' is not a positive integer"
polis 2 run "$GATHER" --policy greedy
err_line "polis: run: --policy: 'greedy' is not a policy of this scenario (policies: noop, random, uniform)"
polis 2 run "$GATHER" --policy ""
err_line "polis: run: --policy: empty policy name"
polis 2 run "$GATHER" --bogus
err_line "polis: run: unknown option '--bogus'"
polis 2 run "$GATHER" --quiet=yes
err_line "polis: run: --quiet takes no value"
polis 2 run "$GATHER" other.json
err_line "polis: run: unexpected argument 'other.json' (SCENARIO is '$GATHER')"
polis 2 run "$GATHER" --plugin-path ""
err_line "polis: run: --plugin-path: empty directory list"
# Options of one command are unknown to another.
polis 2 validate "$GATHER" --json
err_line "polis: validate: unknown option '--json'"
polis 2 describe "$GATHER" --seed 1
err_line "polis: describe: unknown option '--seed'"

# ---- one option table: the same option, the same check and message in every command ----
for cmd in run render parse bench eval; do
    polis 2 $cmd "$GATHER" --seed x
    err_line "polis: $cmd: --seed: 'x' is not an integer in [0, 2^64)"
    err_line "Try 'polis help $cmd'."
done
for cmd in run validate describe render parse bench eval; do
    polis 2 $cmd "$GATHER" --plugin-path=
    err_line "polis: $cmd: --plugin-path: empty directory list"
    polis 2 $cmd "$GATHER" --set nonsense
    err_line "polis: $cmd: --set: 'nonsense' is not PATH=JSON (e.g. grid.width=64)"
    polis 2 $cmd "$GATHER" --agents 0
    err_line "polis: $cmd: --agents: '0' is not an integer in [1, 2147483647]"
    polis 2 $cmd "$GATHER" --agents 2 --agents 3
    err_line "polis: $cmd: --agents is given more than once"
done
polis 2 serve "$GATHER" --stdio --plugin-path=
err_line "polis: serve: --plugin-path: empty directory list"
polis 2 sweep --plugin-path ""
err_line "polis: sweep: --plugin-path: empty directory list"
polis 2 replay x.jsonl --plugin-path ""
err_line "polis: replay: --plugin-path: empty directory list"
# an option given twice is refused, a repeatable one is not
polis 2 run "$GATHER" --seed 1 --seed 2
err_line "polis: run: --seed is given more than once"
polis 2 run "$GATHER" --quiet --quiet
err_line "polis: run: --quiet is given more than once"
polis 2 eval "$GATHER" --episodes 2 --episodes=3
err_line "polis: eval: --episodes is given more than once"
polis 0 run "$GATHER" --steps 2 --quiet --set max_steps=50 --set max_steps=1
out_has "gather: 1 episode, policy random, 1 steps, "  # the later --set wins
polis 2 serve "$GATHER" --http 0 --seat agent_0=human --seat agent_0=noop --seed 1 --seed 2
err_line "polis: serve: --seed is given more than once"
# --name=value and a missing value, in every command
polis 2 serve "$GATHER" --tcp 0 --max-clients=0
err_line "polis: serve: --max-clients: '0' is not an integer in [1, 1024]"
polis 2 view x.jsonl --port=70000
err_line "polis: view: --port: '70000' is not an integer in [0, 65535] (a port number)"
polis 2 sweep --threads
err_line "polis: sweep: --threads needs a value"
polis 2 replay x.jsonl --verify=yes
err_line "polis: replay: --verify takes no value"
# what an option needs beside it, or refuses
polis 2 eval "$GATHER" --keyframe-every 5
err_line "polis: eval: --keyframe-every needs --record FILE"
polis 2 replay x.jsonl --agent 1
err_line "polis: replay: --agent needs --video OUT, --png OUT.png or --render FORMAT"
# live play lists its options when one is unknown
polis 2 serve "$GATHER" --http 0 --stdio
err_has "polis: serve: unknown option '--stdio' (with --http: --http, --seat, --policy, --tcp, --tick-ms,"
# help is printed from the same table: every option a command takes, with its value
polis 0 help eval
out_has "  --json FILE          also write every episode's metrics and the summary as JSON to"
out_has "  --keyframe-every K   a full keyframe every K ticks in the recording (default 100)"
polis 0 help bench
out_has "  --policy random|physical"
polis 0 serve "$GATHER" --http 0 --help
out_has "usage: polis serve SCENARIO --http [HOST:]PORT [options]"
out_has "  --seat AGENT=WHO     who plays AGENT: 'human' (a person on the page, or any client of"
polis 0 --help eval
out_has "usage: polis eval SCENARIO [options]"
polis 2 help run extra
err_line "polis: help: unexpected argument 'extra' (COMMAND is 'run')"
# every command's options, as its help lists them from the table: each once, each with a help
for cmd in run validate describe render record parse bench eval serve sweep replay view; do
    "$POLIS" help $cmd >"$TMP/help" 2>&1
    checks=$((checks + 1))
    twice=$(awk '/^options:/ { f = 1; next } f && /^  --/ { print $1 }' "$TMP/help" | sort | uniq -d)
    [ -z "$twice" ] || fail "polis help $cmd: $twice listed twice"
    checks=$((checks + 1))
    bare=$(awk '/^options:/ { f = 1; next }
                pending && !/^                       [^ ]/ { print pending }
                { pending = "" }
                f && /^  --[^ ]+( [^ ]+)?$/ { pending = $1 }
                END { if (pending) print pending }' "$TMP/help")
    [ -z "$bare" ] || fail "polis help $cmd: no help for $bare"
done
"$POLIS" serve "$GATHER" --http 0 --help >"$TMP/help" 2>&1
checks=$((checks + 1))
[ "$(grep -c '^  --' "$TMP/help")" -eq 18 ] || fail "serve --http --help: not its 18 options"

finish
