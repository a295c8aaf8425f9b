"""font_same.py SRC — the glyph font is held twice, in engine/pixels/raster.c (frames drawn in C)
and in sdk/viewer/font.js (the browser viewer): the two tables must be the same 95 glyphs
of 7 rows of 5 bits, in the same order, or a frame and the viewer draw different glyphs."""
import re
import sys

SRC = sys.argv[1]


def table(path, start, end):
    text = open(f"{SRC}/{path}", encoding="utf-8").read()
    i = text.index(start)
    body = text[i + len(start):text.index(end, i)]
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", body)
    return [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]+", body)]


c = table("engine/pixels/raster.c", "font5x7[95][FONT_H] = {", "\n};")
js = table("sdk/viewer/font.js", "FONT5X7 = [", "\n];")
bad = []
if len(c) != 95 * 7:
    bad.append(f"engine/pixels/raster.c: {len(c)} rows, want {95 * 7}")
if len(js) != 95 * 7:
    bad.append(f"sdk/viewer/font.js: {len(js)} rows, want {95 * 7}")
if any(v > 0x1F for v in c + js):
    bad.append("a row wider than 5 bits")
for i, (a, b) in enumerate(zip(c, js)):
    if a != b:
        bad.append(f"glyph {chr(0x20 + i // 7)!r} row {i % 7}: raster.c 0x{a:02x}, font.js 0x{b:02x}")
        break
# a glyph has ink, except the space
blank = [chr(0x20 + g) for g in range(95) if not any(c[g * 7:g * 7 + 7])]
if blank != [" "]:
    bad.append(f"glyphs without ink: {blank!r}")
for line in bad:
    print("FAIL:", line)
print(f"font_same: {len(c) // 7} glyphs, {'differ' if bad else 'the same in C and JS'}")
sys.exit(1 if bad else 0)
