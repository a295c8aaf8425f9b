# `polis record` (docs/recording.md, "polis record"): plays like `polis run` and writes the
# recording (--out) and/or the pixels of every tick (--video: GIF/MP4 through ffmpeg, PNG
# files into a directory, or into OUT.frames/ without ffmpeg), with the frame count and size
# checked by ffprobe and frames compared with `polis replay --png` and `polis render --png`
# of the same tick; --glyphs draws the kinds' glyphs; bad arguments exit 2 naming them.
. "$(dirname "$0")/lib.sh"

png=png
if ! "$POLIS" render "$GATHER" --png "$TMP/probe.png" >/dev/null 2>&1; then
    png=ppm
    echo "video.sh: polis was built without libpng: frames are PPM, the PNG checks are skipped"
fi

# The recording is the one `polis run --record` writes (but for its "source").
polis 0 record "$GATHER" --steps 12 --out "$TMP/r.jsonl" --quiet
checks=$((checks + 1))
grep -q "^gather: 1 episode, policy random, 12 steps, [0-9]* steps/s$" "$TMP/out" ||
    fail "record: no run summary line"
polis 0 run "$GATHER" --steps 12 --record "$TMP/run.jsonl" --quiet
checks=$((checks + 1))
sed 's/"source":"record"/"source":"run"/' "$TMP/r.jsonl" | cmp -s - "$TMP/run.jsonl" ||
    fail "record --out differs from run --record beyond the source"
polis 0 replay "$TMP/r.jsonl"

# --video DIR: a PNG per tick (13: tick 0 and 12 steps), frame k the picture that
# `polis replay --tick k --png` and `polis render --steps k --png` draw.
polis 0 record "$GATHER" --steps 12 --out "$TMP/r2.jsonl.gz" --video "$TMP/frames/" --quiet
out_line "$TMP/frames/: 13 frames written as $(echo $png | tr a-z A-Z) files, 192 x 192 pixels"
checks=$((checks + 1))
[ "$(ls "$TMP/frames" | wc -l)" -eq 13 ] && [ -s "$TMP/frames/frame-000012.$png" ] ||
    fail "frames/ does not hold frame-000000.$png .. frame-000012.$png"
polis 0 replay "$TMP/r2.jsonl.gz"
if [ $png = png ]; then
    polis 0 replay "$TMP/r2.jsonl.gz" --tick 5 --png "$TMP/t5.png"
    checks=$((checks + 1))
    cmp -s "$TMP/frames/frame-000005.png" "$TMP/t5.png" ||
        fail "record's frame 5 is not replay's --tick 5 --png"
    polis 0 render "$GATHER" --steps 5 --png "$TMP/s5.png"
    out_line "$TMP/s5.png: after 5 steps, 192 x 192 pixels"
    checks=$((checks + 1))
    cmp -s "$TMP/frames/frame-000005.png" "$TMP/s5.png" ||
        fail "record's frame 5 is not render --steps 5 --png"
    # an agent's view at 8 px: 5 x 5 cells, the agent's colour in the centre
    polis 0 render "$GATHER" --steps 3 --png "$TMP/v1.png" --agent agent_1 --cell 8
    out_line "$TMP/v1.png: after 3 steps, 40 x 40 pixels"
    if command -v python3 >/dev/null 2>&1; then
        checks=$((checks + 1))
        got=$(python3 "$SRC/tests/cli/pngpx.py" "$TMP/v1.png" 20 20)
        [ "$got" = "40x40 #2f7bff" ] || fail "agent_1's view: got '$got', want '40x40 #2f7bff'"
        # --glyphs: a floor cell ('.', #2b2f36) is the empty colour but for the dot's pixels
        # (cells of 16 px: font pixels of 2 px, the dot at x 5-8, y 11-14 of the cell)
        polis 0 render "$GATHER" --png "$TMP/p.png"
        polis 0 render "$GATHER" --png "$TMP/g.png" --glyphs
        checks=$((checks + 1))
        python3 -B - "$TMP/p.png" "$TMP/g.png" "$SRC/tests/cli" <<'PY' || fail "--glyphs: see above"
import sys
sys.path.insert(0, sys.argv[3])
import pngpx
w, h, plain = pngpx.read(sys.argv[1])
_, _, glyph = pngpx.read(sys.argv[2])
floors = 0
for cy in range(h // 16):
    for cx in range(w // 16):
        x0, y0 = cx * 16, cy * 16
        if pngpx.colour(plain, x0 + 8, y0 + 8) != "#2b2f36":
            continue  # an agent's or a coin's cell
        got = [pngpx.colour(glyph, x0 + x, y0 + y) for x, y in ((8, 8), (2, 2), (6, 12), (5, 11), (8, 14), (9, 12))]
        want = ["#0e0f12", "#0e0f12", "#2b2f36", "#2b2f36", "#2b2f36", "#0e0f12"]
        if got != want:
            sys.exit(f"floor cell ({cx}, {cy}) with --glyphs: {got}, want {want}")
        floors += 1
assert floors > 50, f"only {floors} floor cells"
PY
    fi
fi

# GIF and MP4 through ffmpeg; ffprobe counts the frames.
if command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1; then
    polis 0 record "$GATHER" --steps 12 --video "$TMP/v.gif" --fps 4 --quiet
    out_line "$TMP/v.gif: 13 frames, 192 x 192 pixels"
    checks=$((checks + 1))
    got=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames,width,height \
          -of csv=p=0 "$TMP/v.gif")
    [ "$got" = "192,192,13" ] || fail "v.gif: ffprobe says '$got', want '192,192,13'"
    # two episodes of 5 steps: 2 x 6 frames; agent 2's view at 9 px, padded to even sizes
    polis 0 record "$GATHER" --episodes 2 --steps 5 --video "$TMP/v.mp4" --agent 2 --cell 9 \
        --out "$TMP/two.jsonl" --json
    err_line "$TMP/v.mp4: 12 frames, 45 x 45 pixels"
    out_lines 2
    checks=$((checks + 1))
    got=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames,width,height \
          -of csv=p=0 "$TMP/v.mp4")
    [ "$got" = "46,46,12" ] || fail "v.mp4: ffprobe says '$got', want '46,46,12'"
    polis 0 replay "$TMP/two.jsonl"
else
    echo "video.sh: ffmpeg or ffprobe is not installed: the GIF and MP4 checks are skipped"
fi

# Without ffmpeg on PATH: the frames go to OUT.frames/, and stdout says so.
checks=$((checks + 1))
PATH=/nonexistent "$POLIS" record "$GATHER" --steps 4 --video "$TMP/fb.mp4" --quiet \
    >"$TMP/out" 2>"$TMP/err" || fail "record --video without ffmpeg failed"
LAST="record --video without ffmpeg"
out_line "$TMP/fb.mp4: ffmpeg not found on PATH: 5 frames written as $(echo $png | tr a-z A-Z) files into $TMP/fb.mp4.frames/ (192 x 192 pixels)"
checks=$((checks + 1))
[ "$(ls "$TMP/fb.mp4.frames" | wc -l)" -eq 5 ] || fail "fb.mp4.frames/ does not hold 5 frames"
checks=$((checks + 1))
[ ! -e "$TMP/fb.mp4" ] || fail "fb.mp4 exists without ffmpeg"

# Bad arguments: exit 2 naming them.
polis 2 record "$GATHER" --steps 3
err_line "polis: record: nothing to write: give --out FILE.jsonl[.gz], --video OUT, or both"
polis 2 record "$GATHER" --video "$TMP/x.avi"
err_line "polis: record: --video: '$TMP/x.avi' is not OUT.mp4, OUT.gif or a directory (a name ending in '/' or without a '.')"
polis 2 record "$GATHER" --out "$TMP/x.jsonl" --fps 4
err_line "polis: record: --fps needs --video OUT"
polis 2 record "$GATHER" --out "$TMP/x.jsonl" --agent 1
err_line "polis: record: --agent needs --video OUT"
polis 2 record "$GATHER" --video "$TMP/x.gif" --cell 0
err_line "polis: record: --cell: '0' is not an integer in [1, 64] (pixels per cell)"
polis 2 record "$GATHER" --video "$TMP/x.gif" --fps 121
err_line "polis: record: --fps: '121' is not an integer in [1, 120] (frames per second)"
polis 2 record "$GATHER" --record "$TMP/x.jsonl"
err_line "polis: record: unknown option '--record'"
polis 2 record "$GATHER" --video "$TMP/x.gif" --keyframe-every 5
err_line "polis: record: --keyframe-every needs --out FILE"
polis 2 record "$GATHER" --video "$TMP/x.gif" --agent nobody
err_has "polis: record: --agent: 'nobody' is neither an agent id (0..3) nor an agent name"
checks=$((checks + 1))
[ ! -e "$TMP/x.gif" ] || fail "a refused record left x.gif behind"
polis 2 record "$GATHER" --video "$TMP/x.gif" --glyphs=1
err_line "polis: record: --glyphs takes no value"
polis 2 run "$GATHER" --video "$TMP/x.gif"
err_line "polis: run: unknown option '--video'"
polis 2 render "$GATHER" --cell 8
err_line "polis: render: --cell needs --png OUT.png"
polis 2 render "$GATHER" --glyphs
err_line "polis: render: --glyphs needs --png OUT.png"
if [ $png = png ]; then
polis 2 render "$GATHER" --png "$TMP/x.png" --format json
err_line "polis: render: --format and --png: choose one"
polis 1 render "$GATHER" --png "$TMP/no/such/dir/x.png"
err_has "polis: render --png $TMP/no/such/dir/x.png: cannot write $TMP/no/such/dir/x.png: "
polis 1 render "$POTATO" --plugin-path "$PLUGDIR" --png "$TMP/x.png"
err_line "polis: render --png $TMP/x.png: pixels: the game registered no scene map (look_map), nothing to draw"
fi
# a game without a scene map has nothing to draw: exit 1 at the first frame
polis 1 record "$POTATO" --plugin-path "$PLUGDIR" --steps 3 --video "$TMP/hp.gif" --quiet
err_line "polis: --video $TMP/hp.gif: pixels: the game registered no scene map (look_map), nothing to draw"
# ffmpeg failing (an unwritable place): exit 1
if command -v ffmpeg >/dev/null 2>&1; then
    polis 1 record "$GATHER" --steps 2 --video "$TMP/no/such/dir/x.mp4" --quiet
    err_has "polis: --video $TMP/no/such/dir/x.mp4: ffmpeg failed "
fi

# help
polis 0 help record
out_has "usage: polis record SCENARIO [options] (--out FILE.jsonl[.gz] | --video OUT.mp4|OUT.gif|DIR)"

finish
