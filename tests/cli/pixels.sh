# pixels from a recording (docs/recording.md, "Pixels"): `polis replay --tick T --png` draws
# the map (or an agent's view) with each agent's colour at the centre of its cell, which a
# small stdlib PNG reader checks against the positions the text view states; `--video`
# writes a GIF and an MP4 through ffmpeg (skipped with a message without ffmpeg), and PNG
# frames into OUT.frames/ when ffmpeg is not on PATH; bad arguments are refused.
. "$(dirname "$0")/lib.sh"

R=$TMP/g.jsonl
polis 0 run "$GATHER" --steps 12 --record "$R" --quiet

# A PNG reader (zlib, the five filters) that prints the colour at pixel (x, y).
cp "$SRC/tests/cli/pngpx.py" "$TMP/px.py"

# A polis built without libpng refuses --png (and writes video frames as PPM): those checks
# are skipped, saying so.
png=png
if ! "$POLIS" replay "$R" --tick 0 --png "$TMP/probe.png" >/dev/null 2>"$TMP/err"; then
    png=ppm
    err_line "polis: replay: --png: this polis was built without libpng (install libpng-dev and rebuild)"
    echo "pixels.sh: polis was built without libpng: the --png checks are skipped"
fi

if [ $png = png ]; then
# The map at tick 5, cells of 16 px: each agent's colour at its cell's centre.
polis 0 replay "$R" --tick 5 --png "$TMP/map.png"
out_line "$TMP/map.png: tick 5 of episode 0, 192 x 192 pixels"
# (the base list without #ffd60a, which looks like a coin: docs/kernel.md, "Pixels")
colours="#ff3b30 #2f7bff #ff2fd0 #00e5ff"
if command -v python3 >/dev/null 2>&1; then
    a=0
    for want in $colours; do
        polis 0 replay "$R" --tick 5 --render text --agent $a
        xy=$(sed -n 's/^You are agent_[0-9]* at (\([0-9]*\), \([0-9]*\)).*/\1 \2/p' "$TMP/out")
        set -- $xy
        got=$(python3 "$TMP/px.py" "$TMP/map.png" $(($1 * 16 + 8)) $(($2 * 16 + 8)) $(($1 * 16 + 1)) $(($2 * 16 + 1)))
        checks=$((checks + 1))
        # the agent's colour at the centre, the floor (#2b2f36) at the cell's corner, outside
        # the agent's rings
        [ "$got" = "192x192 $want #2b2f36" ] || fail "agent $a at ($1, $2): got '$got', want '192x192 $want #2b2f36'"
        a=$((a + 1))
    done
    # agent 1's 5 x 5 view at 8 px: agent 1 in the centre cell
    polis 0 replay "$R" --tick 5 --png "$TMP/view.png" --agent agent_1 --cell 8
    out_line "$TMP/view.png: tick 5 of episode 0, 40 x 40 pixels"
    checks=$((checks + 1))
    got=$(python3 "$TMP/px.py" "$TMP/view.png" 20 20)
    [ "$got" = "40x40 #2f7bff" ] || fail "agent 1's view: got '$got', want '40x40 #2f7bff'"
else
    echo "pixels.sh: no python3: the PNG pixel checks are skipped"
fi
fi

# Videos: 13 frames (tick 0 to 12).
if command -v ffmpeg >/dev/null 2>&1; then
    polis 0 replay "$R" --video "$TMP/v.gif" --fps 4
    out_line "$TMP/v.gif: 13 frames of episode 0, 192 x 192 pixels at 4 fps"
    checks=$((checks + 1))
    [ "$(head -c 6 "$TMP/v.gif")" = GIF89a ] || fail "v.gif is not a GIF"
    polis 0 replay "$R" --video "$TMP/v.mp4" --agent 2 --cell 9
    out_line "$TMP/v.mp4: 13 frames of episode 0, 45 x 45 pixels at 8 fps"
    if command -v ffprobe >/dev/null 2>&1; then
        checks=$((checks + 1))
        got=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames,width,height \
              -of csv=p=0 "$TMP/v.mp4")
        # yuv420p needs even sizes: padded to 46 x 46
        [ "$got" = "46,46,13" ] || fail "v.mp4: ffprobe says '$got', want '46,46,13'"
    fi
else
    echo "pixels.sh: ffmpeg is not installed: the GIF and MP4 checks are skipped"
fi
# Without ffmpeg on PATH: PNG frames in a directory, and a message saying so.
checks=$((checks + 1))
PATH=/nonexistent "$POLIS" replay "$R" --video "$TMP/fb.mp4" >"$TMP/out" 2>"$TMP/err" ||
    fail "replay --video without ffmpeg failed"
LAST="replay --video without ffmpeg"
err_line "polis: replay: ffmpeg is not on PATH: writing the frames as images into $TMP/fb.mp4.frames/ instead of $TMP/fb.mp4"
out_line "$TMP/fb.mp4.frames/: 13 frames of episode 0, 192 x 192 pixels (no ffmpeg: images, not $TMP/fb.mp4)"
checks=$((checks + 1))
[ "$(ls "$TMP/fb.mp4.frames" | wc -l)" -eq 13 ] && [ -s "$TMP/fb.mp4.frames/frame-000012.$png" ] ||
    fail "fb.mp4.frames/ does not hold frame-000000.$png .. frame-000012.$png"
if [ $png = png ]; then
    checks=$((checks + 1))
    cmp -s "$TMP/fb.mp4.frames/frame-000005.png" "$TMP/map.png" ||
        fail "frame 5 of the video is not the --tick 5 --png picture"
fi

# Bad arguments.
polis 2 replay "$R" --png "$TMP/x.png"
err_line "polis: replay: --png needs --tick T"
polis 2 replay "$R" --video "$TMP/x.avi"
err_line "polis: replay: --video: '$TMP/x.avi' is not OUT.mp4 or OUT.gif"
polis 2 replay "$R" --video "$TMP/x.gif" --tick 3
err_line "polis: replay: --video and --tick: choose one (--video draws a whole episode)"
polis 2 replay "$R" --tick 3 --png "$TMP/x.png" --render text
err_line "polis: replay: --render and --png: choose one"
polis 2 replay "$R" --video "$TMP/x.gif" --fps 0
err_line "polis: replay: --fps: '0' is not an integer in [1, 120] (frames per second)"
polis 2 replay "$R" --tick 3 --png "$TMP/x.png" --cell 65
err_line "polis: replay: --cell: '65' is not an integer in [1, 64] (pixels per cell)"
polis 2 replay "$R" --cell 8
err_line "polis: replay: --cell needs --video OUT or --png OUT.png"
polis 2 replay "$R" --fps 8
err_line "polis: replay: --fps needs --video OUT"
polis 1 replay "$R" --video "$TMP/x.gif" --agent nobody
err_line "polis: replay $R: --agent nobody: no such agent (0..3 or a name)"
polis 1 replay "$R" --video "$TMP/x.gif" --episode 2
err_line "polis: replay $R: line 16: there is no episode 2 in this recording (1 episode)"
# a game without a scene map has nothing to draw
polis 0 run "$POTATO" --plugin-path "$PLUGDIR" --steps 3 --record "$TMP/hp.jsonl" --quiet
if [ $png = png ]; then
polis 1 replay "$R" --tick 13 --png "$TMP/x.png"
err_line "polis: replay $R: line 16: episode 0 has no tick 13 in this recording"
polis 1 replay "$R" --tick 3 --png "$TMP/no/such/dir/x.png"
err_has "polis: replay $R: cannot write $TMP/no/such/dir/x.png: "
polis 1 replay "$TMP/hp.jsonl" --plugin-path "$PLUGDIR" --tick 1 --png "$TMP/x.png"
err_line "polis: replay $TMP/hp.jsonl: pixels: the game registered no scene map (look_map), nothing to draw"
fi
polis 1 replay "$TMP/hp.jsonl" --plugin-path "$PLUGDIR" --video "$TMP/x.gif"
err_line "polis: replay $TMP/hp.jsonl: pixels: the game registered no scene map (look_map), nothing to draw"

finish
