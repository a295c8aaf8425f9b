# record and replay: --record on run and eval writes a recording (docs/recording.md) of every
# shipped game that `polis replay --verify` re-simulates and matches; a tampered recording
# fails naming the line, tick and member; truncated and corrupt files fail naming the line.
. "$(dirname "$0")/lib.sh"

R=$TMP/g.jsonl

# gather, 30 steps, a keyframe every 10 ticks: header, reset, key, 30 steps, 3 keys, end.
polis 0 run "$GATHER" --steps 30 --keyframe-every 10 --record "$R" --quiet
checks=$((checks + 1))
[ "$(wc -l <"$R")" -eq 37 ] || fail "gather recording has $(wc -l <"$R") lines, expected 37"
checks=$((checks + 1))
head -n 1 "$R" | grep -qF '"kinds":[{"name":"floor","glyph":".","color":"#2b2f36","shape":"square","plugin":"gather"},{"name":"coin","glyph":"o"' ||
    fail "gather header lacks its kinds"
checks=$((checks + 1))
sed -n 3p "$R" | grep -qF '{"t":"key","tick":0,' || fail "line 3 is not the tick-0 keyframe"
checks=$((checks + 1))
sed -n 5p "$R" | grep -qF '[1,{"x":7,"y":1,"stats":{"0":1}}]' ||
    fail "tick 2 does not record agent 1 picking a coin at (7, 1)"
polis 0 replay "$R" --verify
out_line "$R: replay matches: 1 episode, 30 steps, every keyframe and final hash checked"

# A moment of the recording is the moment `polis render` shows (same seed, same policy).
polis 0 replay "$R" --tick 2 --render text --agent agent_1
cp "$TMP/out" "$TMP/replayed"
polis 0 render "$GATHER" --steps 2 --agent agent_1
checks=$((checks + 1))
cmp -s "$TMP/replayed" "$TMP/out" || fail "replay --tick 2 and render --steps 2 differ"
polis 0 replay "$R" --tick 0 --render json
out_has '"gather":'
polis 1 replay "$R" --tick 31 --render text
err_line "polis: replay $R: line 37: episode 0 has no tick 31 in this recording"
polis 1 replay "$R" --tick 3 --render text --agent nobody
err_line "polis: replay $R: --agent nobody: no such agent (0..3 or a name)"

# Tampered: a stat in a step line, a keyframe's hash, an end line's return.
sed '5s/"stats":{"0":1}/"stats":{"0":4}/' "$R" >"$TMP/t1.jsonl"
polis 1 replay "$TMP/t1.jsonl" --verify
err_line "polis: replay $TMP/t1.jsonl: line 5: tick 2: agents[1].stats.coins: recorded 4, replayed 1"
sed '14s/"hash":"[0-9a-f]*"/"hash":"0000000000000000"/' "$R" >"$TMP/t2.jsonl"
polis 1 replay "$TMP/t2.jsonl"
err_has "polis: replay $TMP/t2.jsonl: line 14: tick 10: hash: recorded \"0000000000000000\", replayed \""
sed '37s/"returns":\[0,/"returns":[5,/' "$R" >"$TMP/t3.jsonl"
polis 1 replay "$TMP/t3.jsonl"
err_line "polis: replay $TMP/t3.jsonl: line 37: tick 30: returns[0]: recorded 5, replayed 0"
# the header's scenario_hash, and the scenario it pins (the replay loads the changed one)
sed '1s/"scenario_hash":"[0-9a-f]*"/"scenario_hash":"0000000000000000"/' "$R" >"$TMP/t5.jsonl"
polis 1 replay "$TMP/t5.jsonl" --verify
err_has "polis: replay $TMP/t5.jsonl: line 1: header line: scenario_hash: recorded \"0000000000000000\", replayed \""
sed '1s/"max_steps":200/"max_steps":201/' "$R" >"$TMP/t6.jsonl"
polis 1 replay "$TMP/t6.jsonl" --verify
err_has "polis: replay $TMP/t6.jsonl: line 1: header line: scenario_hash: recorded \""
# an action changed: the replay diverges at that tick
sed '4s/"actions":\[0,4,0,4\]/"actions":[0,3,0,4]/' "$R" >"$TMP/t4.jsonl"
polis 1 replay "$TMP/t4.jsonl"
err_has "polis: replay $TMP/t4.jsonl: line 4: tick 1: "

# Truncated and corrupt files.
head -n 20 "$R" >"$TMP/trunc.jsonl"
polis 1 replay "$TMP/trunc.jsonl" --verify
err_line "polis: replay $TMP/trunc.jsonl: line 20: the file ends here, inside episode 0 (no end line): it is truncated"
# cut inside line 6 (a byte count would depend on the header, which names the build tree)
{ head -n 5 "$R"; sed -n 6p "$R" | head -c 10; } >"$TMP/cut.jsonl"
polis 1 replay "$TMP/cut.jsonl"
err_has "the line is cut off (no newline at its end): the file is truncated"
sed '6s/.*/{"t":"step","tick":3,"actions":[0,/' "$R" >"$TMP/bad.jsonl"
polis 1 replay "$TMP/bad.jsonl"
err_has "polis: replay $TMP/bad.jsonl: line 6: not a JSON object (bad JSON at column"
sed '1s/"version":1/"version":2/' "$R" >"$TMP/v2.jsonl"
polis 1 replay "$TMP/v2.jsonl"
err_line "polis: replay $TMP/v2.jsonl: line 1: version 2 is not supported (this polis reads version 1)"
sed '5d' "$R" >"$TMP/order.jsonl"
polis 1 replay "$TMP/order.jsonl"
err_line "polis: replay $TMP/order.jsonl: line 5: step tick 3 is out of order (expected tick 2)"
sed '14d' "$R" >"$TMP/nokey.jsonl"
polis 1 replay "$TMP/nokey.jsonl"
err_line "polis: replay $TMP/nokey.jsonl: line 14: a \"step\" line where the replay wrote a \"key\" line (a keyframe is missing)"
sed '7s/"t":"step"/"t":"stop"/' "$R" >"$TMP/type.jsonl"
polis 1 replay "$TMP/type.jsonl"
err_line "polis: replay $TMP/type.jsonl: line 7: unknown line type \"stop\""
sed '2d' "$R" >"$TMP/noreset.jsonl"
polis 1 replay "$TMP/noreset.jsonl"
err_line "polis: replay $TMP/noreset.jsonl: line 2: a \"key\" line outside an episode (no reset line before it)"
: >"$TMP/empty.jsonl"
polis 1 replay "$TMP/empty.jsonl"
err_line "polis: replay $TMP/empty.jsonl: line 0: the file is empty (no header)"
polis 1 replay "$TMP/missing.jsonl"
err_line "polis: replay: $TMP/missing.jsonl: No such file or directory"

# gzip: written by the name, read either way; a damaged stream is an error.
polis 0 run "$GATHER" --steps 30 --record "$TMP/g.jsonl.gz" --quiet
checks=$((checks + 1))
gzip -dc "$TMP/g.jsonl.gz" | head -n 1 | grep -qF '"format":"polis-recording"' || fail "the .gz recording is not gzip"
polis 0 replay "$TMP/g.jsonl.gz"
head -c 2000 "$TMP/g.jsonl.gz" >"$TMP/cut.jsonl.gz"
polis 1 replay "$TMP/cut.jsonl.gz"
# A .gz of many chunks (Survival, 40 episodes: 1.4 MB of lines in a dozen chunks, keyframes
# with their state hashes): one gzip member (the browser viewer's DecompressionStream reads
# one), its lines those of the plain recording, read by Python's gzip and replayed; a byte
# changed in its middle, or a disk that is full, is an error.
SURV=$SRC/rulesets/survival/survival_classic.json
polis 0 run "$SURV" --episodes 40 --record "$TMP/s40.jsonl.gz" --quiet
polis 0 run "$SURV" --episodes 40 --record "$TMP/s40.jsonl" --quiet
checks=$((checks + 1))
/usr/bin/python3 - "$TMP/s40.jsonl.gz" "$TMP/s40.jsonl" <<'EOF' || fail "the Survival .gz is not one gzip member of the plain recording's lines"
import gzip, sys, zlib
raw = open(sys.argv[1], "rb").read()
d = zlib.decompressobj(16 + 15)
text = d.decompress(raw) + d.flush()
assert d.eof and not d.unused_data, "more than one gzip member, or bytes after it"
plain = open(sys.argv[2], "rb").read()
assert text == plain and len(plain) > 1 << 20, (len(text), len(plain))
assert gzip.open(sys.argv[1]).read() == plain
EOF
polis 0 replay "$TMP/s40.jsonl.gz"
out_line "$TMP/s40.jsonl.gz: replay matches: 40 episodes, $(grep -c '"t":"step"' "$TMP/s40.jsonl") steps, every keyframe and final hash checked"
# Survival's scenes are drawn by the writer thread from copies (docs/recording.md, "Scenes on
# the writer thread"): the same bytes as the env's scenes give (POLIS_RECORD_COPIES=0), with
# one player and with four (survival_tribes: teams, more mobs).
export POLIS_RECORD_COPIES=0
polis 0 run "$SURV" --episodes 40 --record "$TMP/s40env.jsonl" --quiet
polis 0 run "$SRC/rulesets/survival/survival_tribes.json" --episodes 3 --record "$TMP/t3env.jsonl" --quiet
unset POLIS_RECORD_COPIES
checks=$((checks + 1))
cmp -s "$TMP/s40.jsonl" "$TMP/s40env.jsonl" || fail "Survival recorded from copies differs from the env's scenes"
polis 0 run "$SRC/rulesets/survival/survival_tribes.json" --episodes 3 --record "$TMP/t3.jsonl" --quiet
checks=$((checks + 1))
cmp -s "$TMP/t3.jsonl" "$TMP/t3env.jsonl" || fail "survival_tribes recorded from copies differs from the env's scenes"
# A scenario recorded (episodes $2) from copies and from the env's scenes (POLIS_RECORD_COPIES=0):
# the same bytes.
copies_equal() {
    polis 0 run "$1" --episodes "$2" --record "$TMP/copies.jsonl" --quiet
    export POLIS_RECORD_COPIES=0
    polis 0 run "$1" --episodes "$2" --record "$TMP/env.jsonl" --quiet
    unset POLIS_RECORD_COPIES
    checks=$((checks + 1))
    cmp -s "$TMP/copies.jsonl" "$TMP/env.jsonl" || fail "$1 recorded from copies differs from the env's scenes"
}
# gather's too (its coin rows taken on the stepping thread, drawn on the writer's), and
# society's (its piles, blocks and stations)
copies_equal "$SRC/rulesets/gather/gather.json" 3
copies_equal "$SRC/rulesets/exploration/exploration_physical.json" 2
# and the social graph's (groups, edges) beside society's: Exploration, Contract, Negotiation
copies_equal "$SRC/rulesets/exploration/exploration.json" 2
copies_equal "$SRC/rulesets/contract/contract.json" 3
copies_equal "$SRC/rulesets/negotiation/negotiation.json" 3
/usr/bin/python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x55; open(sys.argv[2], "wb").write(b)' \
    "$TMP/s40.jsonl.gz" "$TMP/bad.jsonl.gz"
polis 1 replay "$TMP/bad.jsonl.gz"
ln -sf /dev/full "$TMP/full.jsonl.gz"
polis 1 run "$SURV" --episodes 40 --record "$TMP/full.jsonl.gz" --quiet
err_has "cannot write the recording"

# eval: every episode in one file, each end line with the episode's metrics.
polis 0 eval "$SRC/rulesets/exploration/exploration.json" --episodes 2 --steps 40 --quiet \
    --record "$TMP/ev.jsonl" --keyframe-every 15
checks=$((checks + 1))
[ "$(grep -c '"t":"end".*"metrics":{.*"total_reward_normalised"' "$TMP/ev.jsonl")" -eq 2 ] ||
    fail "eval recording lacks two end lines with metrics"
polis 0 replay "$TMP/ev.jsonl"
out_line "$TMP/ev.jsonl: replay matches: 2 episodes, 80 steps, every keyframe and final hash checked"
polis 0 replay "$TMP/ev.jsonl" --tick 5 --episode 1 --render text --agent 0
# the end lines' metrics are re-derived from the replayed episode
end1=$(grep -n '"t":"end"' "$TMP/ev.jsonl" | head -n 1 | cut -d: -f1)
sed "${end1}s/\"reward\":{\"mean\":[-0-9.e]*,/\"reward\":{\"mean\":7,/" "$TMP/ev.jsonl" >"$TMP/t7.jsonl"
polis 1 replay "$TMP/t7.jsonl"
err_has "polis: replay $TMP/t7.jsonl: line $end1: tick 40: metrics.reward.mean: recorded 7, replayed "
sed '$s/"metrics":null/"metrics":{"coins":1}/' "$R" >"$TMP/t8.jsonl"
polis 1 replay "$TMP/t8.jsonl"
err_line "polis: replay $TMP/t8.jsonl: line 37: tick 30: metrics: recorded {\"coins\":1}, replayed null"

# serve --stdio --record: the clients' text actions and plan commands in "msgs"; a second
# reset ends the first episode.
printf '%s\n' '{"op":"reset","seed":5}' \
    '{"op":"step","actions":{"agent_0":"move north","agent_1":"east"}}' \
    '{"op":"step","actions":{"agent_0":"bogus"}}' '{"op":"step","actions":{"agent_2":2}}' \
    '{"op":"reset","seed":6}' '{"op":"step"}' '{"op":"close"}' |
    "$POLIS" serve "$GATHER" --stdio --record "$TMP/sv.jsonl" >/dev/null 2>"$TMP/err"
checks=$((checks + 1))
grep -qF '"msgs":[{"agent":0,"kind":"action","text":"move north"},{"agent":1,"kind":"action","text":"east"}]' \
    "$TMP/sv.jsonl" || fail "serve recording lacks the clients' text actions"
checks=$((checks + 1))
grep -qF '"msgs":[{"agent":2,"kind":"action","text":"move_south"}]' "$TMP/sv.jsonl" ||
    fail "serve recording lacks agent_2's action id (by name)"
polis 0 replay "$TMP/sv.jsonl"
out_line "$TMP/sv.jsonl: replay matches: 2 episodes, 3 steps, every keyframe and final hash checked"
# the messages are checked against the actions: text that is another action, or no action
sed '4s/"text":"move north"/"text":"move south"/' "$TMP/sv.jsonl" >"$TMP/m1.jsonl"
polis 1 replay "$TMP/m1.jsonl"
err_line "polis: replay $TMP/m1.jsonl: line 4: tick 1: msgs[0]: agent 0 sent \"move south\", which is action 2 (move_south), but actions[0] is 1 (move_north)"
sed '4s/"text":"east"/"text":"bogus"/' "$TMP/sv.jsonl" >"$TMP/m2.jsonl"
polis 1 replay "$TMP/m2.jsonl"
err_line "polis: replay $TMP/m2.jsonl: line 4: tick 1: msgs[1]: agent 1 sent \"bogus\", which is not an action (played as noop), but actions[1] is 4 (move_east)"
sed '4s/"msgs":\[{"agent":0,/"msgs":[{"agent":9,/' "$TMP/sv.jsonl" >"$TMP/m3.jsonl"
polis 1 replay "$TMP/m3.jsonl"
err_line "polis: replay $TMP/m3.jsonl: line 4: tick 1: msgs[0]: not {\"agent\": 0..3, \"kind\": string, \"text\": string}"
# A JSON action is recorded as its compact text; a bad one (played as noop) too.
printf '%s\n' '{"op":"reset","seed":5}' \
    '{"op":"step","actions":{"agent_0":{"action": "move", "direction": "north"}}}' \
    '{"op":"step","actions":{"agent_1":{"action": "fly"}}}' |
    "$POLIS" serve "$GATHER" --stdio --on-bad-action noop --record "$TMP/sj.jsonl" \
    >/dev/null 2>"$TMP/err"
checks=$((checks + 1))
grep -qF '"msgs":[{"agent":0,"kind":"action","text":"{\"action\":\"move\",\"direction\":\"north\"}"}]' \
    "$TMP/sj.jsonl" || fail "serve recording lacks the JSON action"
checks=$((checks + 1))
grep -qF '"msgs":[{"agent":1,"kind":"action","text":"{\"action\":\"fly\"}"}]' "$TMP/sj.jsonl" ||
    fail "serve recording lacks the bad JSON action"
polis 0 replay "$TMP/sj.jsonl"
sed '4s/north/south/' "$TMP/sj.jsonl" >"$TMP/m4.jsonl"
polis 1 replay "$TMP/m4.jsonl"
err_line "polis: replay $TMP/m4.jsonl: line 4: tick 1: msgs[0]: agent 0 sent \"{\"action\":\"move\",\"direction\":\"south\"}\", which is action 2 (move_south), but actions[0] is 1 (move_north)"
printf '%s\n' '{"op":"reset"}' '{"op":"step","actions":{"explorer_0":"GATHER 2 wood"}}' \
    '{"op":"advance","max_ticks":5}' |
    "$POLIS" serve "$SRC/rulesets/exploration/exploration.json" --stdio --record "$TMP/sv2.jsonl" \
    >/dev/null 2>"$TMP/err"
checks=$((checks + 1))
[ "$(grep -c '"kind":"plan","text":"GATHER 2 wood"' "$TMP/sv2.jsonl")" -eq 1 ] ||
    fail "serve recording lacks the plan command once"
polis 0 replay "$TMP/sv2.jsonl"
# Plans re-run in the replay: each tick's action is the plan's; an action id ends the plan (it
# is recorded by name), and so does a plan command the game refuses (played as noop).
printf '%s\n' '{"op":"reset"}' '{"op":"step","actions":{"explorer_0":"GATHER 2 wood"}}' \
    '{"op":"advance","max_ticks":3}' '{"op":"step","actions":{"explorer_0":1}}' \
    '{"op":"step","actions":{"explorer_0":"GATHER 1 stone"}}' \
    '{"op":"step","actions":{"explorer_0":"GATHER 1 bogus"}}' '{"op":"advance","max_ticks":2}' |
    "$POLIS" serve "$SRC/rulesets/exploration/exploration.json" --stdio --on-bad-action noop \
    --record "$TMP/sv3.jsonl" >/dev/null 2>"$TMP/err"
polis 0 replay "$TMP/sv3.jsonl"
out_line "$TMP/sv3.jsonl: replay matches: 1 episode, 9 steps, every keyframe and final hash checked"
checks=$((checks + 1))
grep -qF '"msgs":[{"agent":0,"kind":"plan","text":"GATHER 1 bogus"}]' "$TMP/sv3.jsonl" ||
    fail "serve recording lacks the refused plan command"
sed 's/"GATHER 2 wood"/"GATHER 2 stone"/' "$TMP/sv3.jsonl" >"$TMP/p1.jsonl"
polis 1 replay "$TMP/p1.jsonl"
err_has "polis: replay $TMP/p1.jsonl: line 6: tick 3: actions[0]: recorded 27 (move_left), agent 0's plan \"GATHER 2 stone\" chose "
sed 's/"GATHER 2 wood"/"GATHER x wood"/' "$TMP/sv3.jsonl" >"$TMP/p2.jsonl"
polis 1 replay "$TMP/p2.jsonl"
err_has "polis: replay $TMP/p2.jsonl: line 4: tick 1: msgs[0]: agent 0's plan \"GATHER x wood\" does not start ("
polis 2 serve "$GATHER" --tcp 0 --keyframe-every 5
err_line "polis: serve: --keyframe-every needs --record FILE"

# Every shipped game records and replays (society games, Commons, gather, Survival).
for scn in "$SRC"/rulesets/*/*.json; do
    name=$(basename "$scn" .json)
    polis 0 run "$scn" --steps 60 --keyframe-every 25 --record "$TMP/game.jsonl" --quiet
    polis 0 replay "$TMP/game.jsonl" --verify
    out_has "replay matches: 1 episode"
done
# ... and their looks are in the header: Commons (Lua), Survival, the social graph.
polis 0 run "$SRC/rulesets/commons/commons_open.json" --steps 5 --record "$TMP/c.jsonl" --quiet
checks=$((checks + 1))
head -n 1 "$TMP/c.jsonl" | grep -qF '{"name":"apple","glyph":"@","color":"#d83a3a","shape":"circle","plugin":"commons"}' ||
    fail "Commons header lacks the apple kind"
checks=$((checks + 1))
sed -n 3p "$TMP/c.jsonl" | grep -qF '"tiles":[[1,25,0,22,1,2,0,22,' || fail "Commons keyframe lacks its walls"
polis 0 run "$SRC/rulesets/survival/survival_tribes.json" --steps 30 --record "$TMP/s.jsonl" --quiet
checks=$((checks + 1))
head -n 1 "$TMP/s.jsonl" | grep -qF '"stats":[{"name":"health","group":"vitals","max":9}' ||
    fail "Survival header lacks the vitals"
checks=$((checks + 1))
grep -qF '"things":{"add":[[1,' "$TMP/s.jsonl" || fail "no mob appears in Survival"
# Survival's mobs have ids never reused in an episode: a new mob in a dead one's slot is a new
# thing, not the old one moving (300 ticks: mobs die, despawn and spawn again).
polis 0 run "$SRC/rulesets/survival/survival_tribes.json" --steps 300 --record "$TMP/s300.jsonl" --quiet
polis 0 replay "$TMP/s300.jsonl"
checks=$((checks + 1))
/usr/bin/python3 - "$TMP/s300.jsonl" <<'EOF' || fail "Survival reuses a thing id"
import json, sys
gone, added = set(), 0
for text in open(sys.argv[1]):
    line = json.loads(text)
    things = line.get("things", {}) if line["t"] == "step" else {}
    for t in things.get("add", []):
        assert t[0] not in gone, "thing %d added again at tick %d" % (t[0], line["tick"])
        added += 1
    gone.update(things.get("del", []))
assert len(gone) > 10 and added > len(gone), (len(gone), added)
EOF
polis 0 run "$SRC/rulesets/social_structure/ovlp_group.json" --steps 5 --record "$TMP/o.jsonl" --quiet
checks=$((checks + 1))
sed -n 3p "$TMP/o.jsonl" | grep -qF '"nodes":[["group_0","group","Group 0"]' || fail "no group nodes"

# A step line whose every cell changed: 146 tiles (the first ones kept as raw values and
# formatted on the writer thread, the rest formatted beside the step), plain and .gz, the same
# lines; the replay reads every one of them back, and a changed value past the first 64 fails it.
polis 0 run "$SCN/checkers.json" --record "$TMP/ck.jsonl" --quiet
polis 0 run "$SCN/checkers.json" --record "$TMP/ck.jsonl.gz" --quiet
checks=$((checks + 1))
gzip -dc "$TMP/ck.jsonl.gz" | cmp -s - "$TMP/ck.jsonl" || fail "checkers: .gz and plain differ"
checks=$((checks + 1))
[ "$(sed -n 4p "$TMP/ck.jsonl" | grep -o '\],\[' | wc -l)" -eq 145 ] ||
    fail "checkers: the tick-1 line does not hold 146 tiles"
checks=$((checks + 1))
sed -n 4p "$TMP/ck.jsonl" | grep -qF '"illegal":[0,0],"tiles":[[0,0,0,-1],[0,1,0,0],' ||
    fail "checkers: the tick-1 line's tiles do not start at (0, 0)"
checks=$((checks + 1))
sed -n 4p "$TMP/ck.jsonl" | grep -qF '[0,10,11,0],[0,11,11,-1],[1,0,0,-1],[1,1,0,1]]}' ||
    fail "checkers: the tick-1 line's tiles do not end with the marks"
polis 0 replay "$TMP/ck.jsonl" --verify
sed '4s/\[0,4,10,-1\]/[0,4,10,0]/' "$TMP/ck.jsonl" >"$TMP/ck1.jsonl"
polis 1 replay "$TMP/ck1.jsonl" --verify
err_line "polis: replay $TMP/ck1.jsonl: line 4: tick 1: tiles[124][3]: recorded 0, replayed -1"

# Usage.
polis 2 replay
err_line "polis: replay: missing FILE (a recording made with --record)"
polis 2 replay "$R" --render text
err_line "polis: replay: --render needs --tick T"
polis 2 replay "$R" --tick x --render text
err_line "polis: replay: --tick: 'x' is not a non-negative integer (a tick)"
polis 2 run "$GATHER" --keyframe-every 5
err_line "polis: run: --keyframe-every needs --record FILE"
polis 2 run "$GATHER" --record "$R" --keyframe-every 0
err_line "polis: run: --keyframe-every: '0' is not an integer in [1, 2147483647]"
polis 1 run "$GATHER" --record "$TMP/no/such/dir/r.jsonl" --quiet
err_has "polis: --record $TMP/no/such/dir/r.jsonl: recorder: cannot create $TMP/no/such/dir/r.jsonl: No such file or directory"

finish
