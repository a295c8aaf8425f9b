# A shared observation field (the social plugin's social_state "shared", held once per env):
# describe lists it apart from the per-agent record; run, record, replay --verify, the text
# and JSON views and visibility settings work with it present.
. "$(dirname "$0")/lib.sh"

EXPL=$SRC/rulesets/exploration/exploration.json
SHARED='plugins.social.params.social_state="shared"'

polis 0 describe "$EXPL" --set "$SHARED"
err_empty
out_has "shared observation (1 field, 256 bytes per env, the same for every agent)"
out_has "social_state  i8     16x16  0       256"
out_lacks "social_state  i8     16x16  0       256    [0, 1]"

polis 0 describe "$EXPL" --set "$SHARED" --json
err_empty
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "describe --json: shared_fields is wrong (see above)"
import json, sys
obs = json.load(open(sys.argv[1]))["observation"]
assert "social_state" not in [f["name"] for f in obs["fields"]], obs["fields"]
assert obs["shared_size"] == 256, obs
(f,) = obs["shared_fields"]
assert f["name"] == "social_state" and f["dtype"] == "i8" and f["shape"] == [16, 16], f
assert f["offset"] == 0 and f["nbytes"] == 256 and f["owner"] == "social", f
PY

# without a shared field, describe has no shared_fields member
polis 0 describe "$EXPL" --json
checks=$((checks + 1))
python3 -c 'import json, sys; assert "shared_fields" not in json.load(open(sys.argv[1]))["observation"]' \
    "$TMP/out" || fail "describe --json: shared_fields without a shared field"
out_lacks "shared observation"

# recorded with random social actions, replayed and verified
R=$TMP/shared.jsonl
polis 0 run "$EXPL" --set "$SHARED" --set agents=10 --steps 150 --record "$R" --quiet
polis 0 replay --verify "$R"
out_has "replay matches: 1 episode, 150 steps, every keyframe and final hash checked"
polis 0 replay "$R" --tick 40 --render text
out_has "Your relations:"

# text and JSON views, with an agent hidden from another (visibility)
polis 0 render "$EXPL" --set "$SHARED" --steps 20
out_has "Legal actions:"
polis 0 run "$EXPL" --set "$SHARED" \
    --set 'visibility=[{"observers": ["explorer_1"], "hidden": [0]}]' --steps 50 --quiet

# a Lua game's shared field (polis.shared_observation): described with its script as owner,
# recorded, replayed and verified (the keyframe hashes cover the shared buffer)
SIG=$SRC/tests/cli/scenarios/signal.json
polis 0 describe "$SIG"
out_has "shared observation (1 field, 8 bytes per env, the same for every agent)"
out_has "signal  u8     1      0       1      -      signal  the number to say at the next step"
mkdir -p "$TMP/sig"
cp "$SRC/tests/cli/scenarios/signal.json" "$SRC/tests/cli/scenarios/signal.lua" "$TMP/sig/"
R=$TMP/signal.jsonl
polis 0 run "$TMP/sig/signal.json" --episodes 2 --record "$R" --keyframe-every 5 --quiet
polis 0 replay --verify "$R"
out_has "replay matches: 2 episodes, 40 steps, every keyframe and final hash checked"
# the state hashes hold the shared field: a script that shows every agent 3 (and still
# rewards the number it drew, so nothing else changes) no longer verifies
sed -i 's/shape = {1}, values = signal}/shape = {1}, values = {3}}/' "$TMP/sig/signal.lua"
checks=$((checks + 1))
grep -q 'values = {3}}' "$TMP/sig/signal.lua" || fail "the sed changed nothing"
polis 1 replay --verify "$R"
err_has ": hash: recorded"

polis 1 run "$EXPL" --set 'plugins.social.params.social_state="yes"' --steps 1
err_has 'plugins[1].params.social_state: expected true, false or "shared", got "yes"'

finish
