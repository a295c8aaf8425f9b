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
err_line "polis: unknown command 'frobnicate' (commands: run, validate, describe, render, record, parse, bench, eval, serve, sweep, replay, view, help)"
err_line "Try 'polis --help'."
out_empty
polis 2 --frob
err_line "polis: unknown option '--frob'"
polis 2 help frobnicate
err_line "polis: help: unknown command 'frobnicate' (commands: run, validate, describe, render, record, parse, bench, eval, serve, sweep, replay, view, help)"
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
polis 1 run "$GATHER" --policy greedy
err_line "polis: run: --policy: the scenario has no policy named 'greedy' (policies: noop random uniform)"
polis 2 run "$GATHER" --policy ""
err_line "polis: run: --policy: the policy name is empty"
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

finish
