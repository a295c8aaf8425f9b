# tests/cli/files.sh — the files the CLI reads (docs/security.md, "Files" and "Recordings"):
# special files refused at once by every command (a FIFO used to block validate, run, eval,
# serve, describe, render and sweep forever, /dev/zero to be read for gigabytes); recordings
# with a gzip bomb, bytes after the gzip stream, a cut-off stream, a NUL byte, numbers beyond
# every integer type; and a recording that names a plugin file, which `polis replay` must not
# load without --trust (its constructor would leave a marker file).
. "$(dirname "$0")/lib.sh"

mkfifo "$TMP/fifo"
# Each command must give up on the FIFO at once (exit 1, naming it), not wait for a writer.
for cmd in "validate" "run" "eval" "describe" "render" "serve --stdio" "replay" "view"; do
    # shellcheck disable=SC2086
    polis 1 $cmd "$TMP/fifo"
    err_has "not a regular file (a FIFO)"
done
polis 1 sweep --scenario "$TMP/fifo" --out "$TMP/sw"
err_has "cannot read $TMP/fifo: not a regular file (a FIFO)"
for cmd in "validate" "run" "eval" "describe" "render" "serve --stdio" "replay" "view"; do
    # shellcheck disable=SC2086
    polis 1 $cmd /dev/zero
    err_has "not a regular file (a character device)"
done
printf '{"scenarios": ["%s"]}' /dev/zero >"$TMP/spec.json"
polis 1 sweep "$TMP/spec.json" --out "$TMP/sw"
err_has "cannot read /dev/zero: not a regular file (a character device)"
printf '{}' >"$TMP/big.json"
truncate -s 70M "$TMP/big.json"
polis 1 eval "$TMP/big.json"
err_has "73400320 bytes, more than the limit of 67108864 bytes"
polis 1 sweep "$TMP/big.json" --out "$TMP/sw"
err_has "cannot read $TMP/big.json: 70 MiB is over the limit of 64 MiB"

# ---- recordings ------------------------------------------------------------------------------
polis 0 run "$GATHER" --steps 4 --record "$TMP/r.jsonl.gz"
polis 0 replay "$TMP/r.jsonl.gz"
# garbage after the gzip stream (gzread ignores it; a recording polis wrote has none)
{ cat "$TMP/r.jsonl.gz"; printf 'garbage'; } >"$TMP/tail.jsonl.gz"
polis 1 replay "$TMP/tail.jsonl.gz"
err_has "bytes after the end of the gzip stream (trailing garbage)"
polis 1 replay --verify "$TMP/tail.jsonl.gz"
err_has "line 9: bytes after the end of the gzip stream (trailing garbage)"
# a stream cut off in the middle
head -c 700 "$TMP/r.jsonl.gz" >"$TMP/cut.jsonl.gz"
polis 1 replay "$TMP/cut.jsonl.gz"
err_has "the gzip stream ends early: the file is cut off"
# One line of 1 GiB in a file of about 1 MiB (a gzip bomb: one MiB of "a" deflated once, its
# bytes repeated 1024 times, each piece ending at a full flush): refused at the limit, not read
# whole. It used to cost the whole gigabyte; the peak resident memory of the replay is
# checked (well under 1 GiB also with the sanitizers' shadow memory and quarantine).
python3 -c "
import sys, zlib
c = zlib.compressobj(9, zlib.DEFLATED, 31)
head = c.compress(b'{\"t\":\"header\",\"x\":\"') + c.flush(zlib.Z_FULL_FLUSH)
piece = c.compress(b'a' * (1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
with open(sys.argv[1], 'wb') as f:
    f.write(head + piece * 1024 + c.compress(b'\"}\n') + c.flush())" "$TMP/bomb.jsonl.gz"
checks=$((checks + 1))
[ "$(wc -c <"$TMP/bomb.jsonl.gz")" -lt 2000000 ] || fail "the gzip bomb is not small"
checks=$((checks + 1))
python3 - "$POLIS" "$TMP/bomb.jsonl.gz" <<'PY' || fail "a 1 GiB line in a gzip recording: the replay's memory is not bounded"
import os, resource, subprocess, sys
# ASan's quarantine would keep the freed buffers of the line's growth: a small one
env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16").lstrip(":"))
r = subprocess.run([sys.argv[1], "replay", sys.argv[2]], capture_output=True, text=True, timeout=120, env=env)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print("replay of a 1 GiB line: exit %d, peak %d MB" % (r.returncode, peak))
want = "line 1: the line is longer than the limit of 64 MiB (a damaged file, or a gzip bomb)"
assert r.returncode == 1 and want in r.stderr, r.stderr[-400:]
assert peak < 512, "peak resident memory %d MB" % peak
PY
# a NUL byte inside a line
gzip -dc "$TMP/r.jsonl.gz" >"$TMP/r.jsonl"
{ head -n 1 "$TMP/r.jsonl"; printf '{"t":"reset",\000"episode":0}\n'; } >"$TMP/nul.jsonl"
polis 1 replay "$TMP/nul.jsonl"
err_has "line 2: a NUL byte inside the line"

# Numbers beyond every integer type are refused as out of range, never converted first
# (clang's UBSan reported the conversions: the header's keyframe_every, a step's tick, an
# action, a message's agent, and a reset line's visibility entries).
sed -e '1s/"keyframe_every":100/"keyframe_every":1e300/' "$TMP/r.jsonl" >"$TMP/kf.jsonl"
polis 1 replay "$TMP/kf.jsonl"
err_has "line 1: the header needs \"seed\" and a positive \"keyframe_every\""
sed -e '4s/"tick":1,/"tick":1e300,/' "$TMP/r.jsonl" >"$TMP/tick.jsonl"
polis 1 replay "$TMP/tick.jsonl"
err_has "line 4: step tick 1e+300 is out of order (expected tick 1)"
sed -e '4s/"actions":\[[0-9]*,/"actions":[-1e300,/' "$TMP/r.jsonl" >"$TMP/act.jsonl"
polis 1 replay "$TMP/act.jsonl"
err_has "line 4: tick 1: actions[0] is not an action id (0..4)"
sed -e '4s/"actions":\[/"msgs":[{"agent":1e300,"kind":"action","text":"noop"}],"actions":[/' \
    "$TMP/r.jsonl" >"$TMP/msg.jsonl"
polis 1 replay "$TMP/msg.jsonl"
err_has "line 4: tick 1: msgs[0]: not {\"agent\": 0..3"
sed -e '2s/"seed":1}/"seed":1,"visibility":[[0,1e300,0]]}/' "$TMP/r.jsonl" >"$TMP/vis.jsonl"
polis 1 replay "$TMP/vis.jsonl"
err_has "line 2: visibility[0]: not [observer, target, state] (integers)"

# ---- a recording names a plugin file -------------------------------------------------------
# A scenario that loads gather by path, recorded; then the header is made to name the hostile
# shared object instead, as a recording someone sends might.
polis 0 run "$GATHER" --steps 3 --record "$TMP/plain.jsonl"
HOSTILE=$PLUGDIR/hostile.so
python3 -c "
import json, sys
src, dst, so = sys.argv[1:4]
lines = open(src).read().splitlines()
h = json.loads(lines[0])
h['scenario']['plugins'][0]['path'] = so
# the hash a writer computes: FNV-1a 64 of the scenario's compact text
text = json.dumps(h['scenario'], separators=(',', ':'), ensure_ascii=False).encode()
v = 0xcbf29ce484222325
for b in text:
    v = ((v ^ b) * 0x100000001b3) & 0xffffffffffffffff
h['scenario_hash'] = '%016x' % v
lines[0] = json.dumps(h, separators=(',', ':'))
open(dst, 'w').write('\n'.join(lines) + '\n')" "$TMP/plain.jsonl" "$TMP/hostile.jsonl" "$HOSTILE"
export POLIS_TEST_MARKER="$TMP/marker"
rm -f "$POLIS_TEST_MARKER"
# Without --trust the file is not loaded: gather comes from the plugin path, and the replay
# says what it refused. The header still compares (it is the recorded one).
polis 0 replay "$TMP/hostile.jsonl"
err_line "polis: replay $TMP/hostile.jsonl: plugins[0]: not loading \"$HOSTILE\", the file the recording names (a recording is data: --trust loads it); looking for 'gather' on the plugin path instead"
out_has "replay matches: 1 episode, 3 steps"
checks=$((checks + 1))
[ ! -e "$POLIS_TEST_MARKER" ] || fail "polis replay ran the constructor of the plugin file a recording names"
# --tick and --video read the header the same way
polis 0 replay "$TMP/hostile.jsonl" --tick 1 --render text
checks=$((checks + 1))
[ ! -e "$POLIS_TEST_MARKER" ] || fail "polis replay --tick ran the plugin file a recording names"
# refused NAME LINE PY MESSAGE: plain.jsonl with its line LINE (1: the header) as the JSON
# object o changed by the Python statement PY (so: the hostile file) is refused with MESSAGE,
# and the hostile file's constructor does not run.
refused() {
    python3 -c "
import json, sys
src, dst, n, so = sys.argv[1], sys.argv[2], int(sys.argv[3]) - 1, sys.argv[4]
lines = open(src).read().splitlines()
o = json.loads(lines[n])
exec(sys.argv[5])
lines[n] = json.dumps(o, separators=(',', ':'))
open(dst, 'w').write('\\n'.join(lines) + '\\n')" "$TMP/plain.jsonl" "$TMP/$1.jsonl" "$2" "$HOSTILE" "$3"
    polis 1 replay "$TMP/$1.jsonl"
    err_has "$4"
    checks=$((checks + 1))
    [ ! -e "$POLIS_TEST_MARKER" ] || fail "polis replay ran the plugin file $1.jsonl names"
}
# Overrides that would set a plugin's path are refused.
refused hostile_ov 1 "o['overrides'] = {'plugins[0]': {'name': 'gather', 'path': so}}" \
    "line 1: the header's overrides set a plugin's path (\"plugins[0]\")"
# A task distribution ("vary") in the recorded scenario is a list of overrides too, played at
# create (its probe envs): one that draws a plugin's path is refused, and so is a reset line
# whose task sets one. (Before, the vary's first value was dlopen'ed without --trust.)
refused hostile_vary 1 "o['scenario']['vary'] = {'plugins.gather.path': {'choice': [so]}}" \
    "line 1: the recorded scenario's \"vary\" draws a plugin's path (\"plugins.gather.path\")"
refused hostile_task 2 "o['task'] = {'plugins[0]': {'name': 'gather', 'path': so}}" \
    "line 2: the reset line's \"task\" sets a plugin's path (\"plugins[0]\")"
# With --trust the named file is loaded (it is not a plugin: refused after its constructor ran).
polis 1 replay "$TMP/hostile.jsonl" --trust
err_has "the recorded scenario does not load"
checks=$((checks + 1))
[ -e "$POLIS_TEST_MARKER" ] || fail "polis replay --trust did not load the file the recording names"
unset POLIS_TEST_MARKER

finish
