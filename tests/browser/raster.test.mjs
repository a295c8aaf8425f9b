// raster.test.mjs — the frame polis draws in C (engine/pixels/raster.c: `polis replay --tick T --png`,
// `polis record --video`) is the map the viewer draws on its canvas (sdk/viewer/draw.js), in
// Debian's chromium, headless, driven by playwright-core on the page `polis view` serves.
//
// For real episodes (gather, exploration and survival, recorded with `polis record`), at
// several ticks: the viewer's canvas is read whole and compared with the PNG that `polis
// replay --tick T --png OUT --cell C` writes at the viewer's own cell size C, and with
// "glyphs" ticked, with frame T of `polis record --video DIR --glyphs --cell C`.
//
// Every cell's centre pixel must be equal exactly (tolerance 0: at a centre both draw a solid
// fill — a tile, a thing, an agent's disc, a dead agent's cross). Over the whole frame, a
// pixel may differ only where the C frame is not uniform around it (its 5 x 5 neighbourhood
// holds more than one colour: two anti-aliased edges two pixels apart, as where two agents'
// rings meet, bleed into the pixels between them), or by at most 4 per channel: the canvas anti-aliases the edges of circles, triangles and
// lines, while the C frame decides each pixel by its centre. Inside uniform regions nothing
// may differ, cells that hold only squares (or nothing) are equal pixel for pixel, with and
// without glyphs (the canvas draws them with integer rectangles), and the edge pixels stay a
// small share of the frame (measured 0.3% to 6%; bounded at 10%). The grid blends the same
// way on both sides, and glyphs come from the same 5 x 7 font (integer rectangles on the
// canvas), so they follow the same rules.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const POLIS = process.env.POLIS;
const SRC = process.env.SRC;
let browser;
let profile;
let work;
const servers = [];

before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'polis-raster-'));
    profile = mkdtempSync(path.join(tmpdir(), 'polis-raster-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        headless: true,
        viewport: { width: 1500, height: 950 },
        deviceScaleFactor: 1,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync',
               '--force-color-profile=srgb'],
    });
});

after(async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGTERM');
    if (browser) await browser.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
});

const polis = (...args) => execFileSync(POLIS, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// An 8-bit RGB PNG (what polis writes) as {w, h, px: Uint8Array of w * h * 3}.
function readPNG(file) {
    const data = readFileSync(file);
    assert.deepEqual([...data.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${file}: not a PNG`);
    let pos = 8, w = 0, h = 0;
    const idat = [];
    while (pos < data.length) {
        const n = data.readUInt32BE(pos), kind = data.toString('latin1', pos + 4, pos + 8);
        const body = data.subarray(pos + 8, pos + 8 + n);
        if (kind === 'IHDR') {
            w = body.readUInt32BE(0); h = body.readUInt32BE(4);
            assert.deepEqual([body[8], body[9], body[12]], [8, 2, 0], `${file}: not 8-bit RGB, not interlaced`);
        } else if (kind === 'IDAT') idat.push(body);
        pos += 12 + n;
    }
    const raw = inflateSync(Buffer.concat(idat)), stride = w * 3, px = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) {
        const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
        for (let i = 0; i < stride; i++) {
            const a = i >= 3 ? px[y * stride + i - 3] : 0, b = y ? px[(y - 1) * stride + i] : 0;
            const c = i >= 3 && y ? px[(y - 1) * stride + i - 3] : 0;
            let v = line[i];
            if (f === 1) v += a;
            else if (f === 2) v += b;
            else if (f === 3) v += (a + b) >> 1;
            else if (f === 4) {
                const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
                v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            }
            px[y * stride + i] = v & 255;
        }
    }
    return { w, h, px };
}

function serve(file) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['view', file, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
        servers.push(p);
        let out = '', err = '';
        const timer = setTimeout(() => reject(new Error(`polis view ${file}: no URL after 20 s (${err})`)), 20000);
        p.stdout.on('data', (d) => {
            out += d;
            const nl = out.indexOf('\n');
            if (nl >= 0) { clearTimeout(timer); resolve(out.slice(0, nl)); }
        });
        p.stderr.on('data', (d) => { err += d; });
        p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`polis view ${file} exited ${code}: ${err}`)); });
    });
}

// The viewer's map canvas as {w, h, px} (RGB), and its cell size and viewport. The pixels
// cross from the page as base64 (a JSON array of a million numbers is slow).
async function canvas(page) {
    const got = await page.evaluate(() => {
        const c = document.getElementById('map');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let s = '';
        for (let i = 0; i < d.length; i += 0x8000) s += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
        return { w: c.width, h: c.height, b64: btoa(s), cell: polisViewer.cell, vp: polisViewer.viewport };
    });
    const rgba = Buffer.from(got.b64, 'base64'), px = new Uint8Array(got.w * got.h * 3);
    for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) { px[j] = rgba[i]; px[j + 1] = rgba[i + 1]; px[j + 2] = rgba[i + 2]; }
    return { w: got.w, h: got.h, px, cell: got.cell, vp: got.vp };
}

const hex = (px, i) => '#' + [0, 1, 2].map((k) => px[i + k].toString(16).padStart(2, '0')).join('');

// The cells that hold nothing but a square (or nothing, or off-map): uniform in the plain
// C frame but for the grid's row and column. The canvas draws those and their glyphs with
// integer rectangles only, so there every pixel must be equal.
function squareCells(frame, c) {
    const { w, h, px } = frame, cells = [];
    for (let cy = 0; cy < h / c; cy++)
        for (let cx = 0; cx < w / c; cx++) {
            const i0 = ((cy * c + 1) * w + cx * c + 1) * 3;
            let uniform = true;
            for (let y = 1; y < c && uniform; y++)
                for (let x = 1; x < c; x++) {
                    const i = ((cy * c + y) * w + cx * c + x) * 3;
                    if (px[i] !== px[i0] || px[i + 1] !== px[i0 + 1] || px[i + 2] !== px[i0 + 2]) { uniform = false; break; }
                }
            if (uniform) cells.push([cx, cy]);
        }
    return cells;
}

// The comparison the header describes. Returns the share of pixels that differ.
function compare(view, frame, where, squares) {
    assert.deepEqual([view.w, view.h], [frame.w, frame.h], `${where}: frame size`);
    const { w, h } = frame, c = view.cell;
    for (const [cx, cy] of squares)
        for (let y = 0; y < c; y++)
            for (let x = 0; x < c; x++) {
                const i = ((cy * c + y) * w + cx * c + x) * 3;
                assert.equal(hex(view.px, i), hex(frame.px, i), `${where}: pixel (${x}, ${y}) of cell (${cx}, ${cy}), a square's cell`);
            }
    for (let cy = 0; cy < h / c; cy++)
        for (let cx = 0; cx < w / c; cx++) {
            const i = ((cy * c + Math.floor(c / 2)) * w + cx * c + Math.floor(c / 2)) * 3;
            assert.equal(hex(view.px, i), hex(frame.px, i), `${where}: the centre of cell (${cx}, ${cy}) of the view`);
        }
    let differ = 0;
    for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
            const i = (y * w + x) * 3;
            if (view.px[i] === frame.px[i] && view.px[i + 1] === frame.px[i + 1] && view.px[i + 2] === frame.px[i + 2]) continue;
            differ++;
            // the canvas's anti-aliasing bleeds a trace (at most 4 per channel) of a disc's edge
            // into pixels whose centres the edge misses by up to a pixel: tolerated anywhere
            if ([0, 1, 2].every((k) => Math.abs(view.px[i + k] - frame.px[i + k]) <= 4)) continue;
            let uniform = true;
            for (let dy = -2; dy <= 2 && uniform; dy++)
                for (let dx = -2; dx <= 2; dx++) {
                    const u = x + dx, v = y + dy;
                    // beyond the frame's edge counts as another colour: an agent's rings
                    // reach past it, and the canvas blends their edge into the last pixels
                    if (u < 0 || v < 0 || u >= w || v >= h) { uniform = false; break; }
                    const j = (v * w + u) * 3;
                    if (frame.px[j] !== frame.px[i] || frame.px[j + 1] !== frame.px[i + 1] || frame.px[j + 2] !== frame.px[i + 2]) {
                        uniform = false;
                        break;
                    }
                }
            assert.ok(!uniform, `${where}: pixel (${x}, ${y}) is ${hex(view.px, i)} on the canvas, ${hex(frame.px, i)} in the C frame, inside a region of one colour`);
        }
    return differ / (w * h);
}

async function check(name, scenario, steps, ticks, agent, hiddenAt) {
    const rec = path.join(work, `${name}.jsonl`);
    polis('record', scenario, '--steps', String(steps), '--out', rec, '--quiet');
    const url = await serve(rec);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => window.polisViewer && window.polisViewer.status === 'ok', null, { timeout: 20000 });
    if (agent !== undefined) await page.evaluate((i) => polisViewer.view(i), agent);
    const cell = await page.evaluate(() => polisViewer.cell);
    const extra = agent !== undefined ? ['--agent', String(agent)] : [];
    // the glyph frames: the same episode played again, frame k after tick k
    const dir = path.join(work, `${name}-glyphs`);
    polis('record', scenario, '--steps', String(steps), '--video', dir + '/', '--glyphs', '--cell', String(cell), '--quiet', ...extra);
    const shares = [], counts = [];
    for (const t of ticks) {
        assert.equal(await page.evaluate((u) => polisViewer.seek(u), t), t);
        await page.evaluate(() => { document.getElementById('glyphs').checked = false; polisViewer.seek(polisViewer.tick); });
        if (hiddenAt) {
            // who sees whom: the agents hidden from the viewing one at tick t, and one of them
            // standing inside its window (so the frames would differ if the viewer drew it)
            const got = await page.evaluate(() => ({ hidden: polisViewer.hidden(), agents: polisViewer.agents(), vp: polisViewer.viewport }));
            assert.deepEqual(got.hidden, hiddenAt(t), `${name} tick ${t}: hidden agents`);
            if (got.hidden.length) {
                const inside = got.agents.filter((a) => got.hidden.includes(a.index) && a.x >= got.vp.x0 && a.y >= got.vp.y0
                    && a.x < got.vp.x0 + got.vp.w && a.y < got.vp.y0 + got.vp.h);
                assert.ok(inside.length > 0, `${name} tick ${t}: no hidden agent inside the view`);
                assert.ok(inside.every((a) => a.px === null), `${name} tick ${t}: a hidden agent was placed`);
            }
        }
        const png = path.join(work, `${name}-${t}.png`);
        polis('replay', rec, '--tick', String(t), '--png', png, '--cell', String(cell), ...extra);
        // cells next to an agent's are left out of the squares: its rings reach into them,
        // with edges the canvas blends and the C frame draws by pixel centre
        const near = await page.evaluate(() => polisViewer.agents().filter((a) => a.px !== null)
            .map((a) => [Math.floor(a.px / polisViewer.cell), Math.floor(a.py / polisViewer.cell)]));
        const plain = readPNG(png), squares = squareCells(plain, cell)
            .filter(([x, y]) => !near.some(([ax, ay]) => Math.abs(ax - x) <= 1 && Math.abs(ay - y) <= 1));
        assert.ok(squares.length > 0, `${name} tick ${t}: no cell holds only a square`);
        shares.push(compare(await canvas(page), plain, `${name} tick ${t}`, squares));
        await page.evaluate(() => { document.getElementById('glyphs').checked = true; polisViewer.seek(polisViewer.tick); });
        const frame = readPNG(path.join(dir, `frame-${String(t).padStart(6, '0')}.png`));
        shares.push(compare(await canvas(page), frame, `${name} tick ${t}, glyphs`, squares));
        counts.push(squares.length);
    }
    assert.deepEqual(errors, []);
    await page.close();
    console.log(`${name}: cells of ${cell} px, ticks ${ticks.join(', ')}: cells of squares equal pixel for pixel: ${counts.join(', ')}; pixels that differ (edges), plain and glyphs: ${shares.map((s) => (100 * s).toFixed(2) + '%').join(' ')}`);
    for (const s of shares) assert.ok(s < 0.2, `${name}: ${(100 * s).toFixed(2)}% of the pixels differ`);
}

test('gather: the canvas is the C frame, with and without glyphs', async () => {
    await check('gather', path.join(SRC, 'rulesets/gather/gather.json'), 12, [0, 12]);
});

test('gather: an agent\'s view (off-map cells) is the C frame of that view', async () => {
    await check('gather-view', path.join(SRC, 'rulesets/gather/gather.json'), 8, [8], 1);
});

test('exploration: many kinds and shapes', async () => {
    await check('exploration', path.join(SRC, 'rulesets/exploration/exploration.json'), 10, [10]);
});

test('survival: a learner\'s view without the experts hidden from it from tick 50 (who sees whom)', async () => {
    await check('survival-experts', path.join(SRC, 'rulesets/survival/survival_experts_half.json'), 60, [10, 60], 0,
                (t) => (t >= 50 ? [1, 2, 3] : []));
});

test('survival: blocks, mobs, vitals', async () => {
    await check('survival', path.join(SRC, 'rulesets/survival/survival_classic.json'), 10, [10]);
});
