// viewer.test.mjs — the polis viewer in a real browser: Debian's chromium, headless, driven by
// playwright-core, on pages served by `polis view`. The recordings and the truth they are
// checked against come from make_fixture.py (run.sh writes them to $FIXTURES): the agents'
// cells at every tick, the social edges at every tick and every event.
//
// Checked: agents are drawn at their recorded cells (the pixel at each cell's centre is the
// agent's colour, read from the canvas), the social panel lists the recorded edges, scrubbing
// (slider, step buttons, backwards across keyframes) gives the state of that tick, playing
// advances, the event filters, an agent's own view, gzip, truncated files (plain and gzip)
// with their banner, a bad line with its line number, the survival-like file's mobs, and
// `polis view --follow` showing a recording while it is written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const POLIS = process.env.POLIS;
const FIX = process.env.FIXTURES;
const expected = JSON.parse(readFileSync(path.join(FIX, 'expected.json'), 'utf8'));
let browser;
let profile;
const servers = [];

before(async () => {
    profile = mkdtempSync(path.join(tmpdir(), 'polis-viewer-chromium-'));
    // A fresh profile: launchPersistentContext gives chromium its own --user-data-dir.
    browser = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        headless: true,
        viewport: { width: 1500, height: 950 },
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
});

after(async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGTERM');
    if (browser) await browser.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
});

// Starts `polis view FILE --port 0`; resolves with the URL it prints.
function serve(file, ...extra) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['view', path.join(FIX, file), '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
        servers.push(p);
        let out = '';
        let err = '';
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

// Opens a recording in a new page through `polis view`; waits until it is read.
async function open(file, ...extra) {
    const url = await serve(file, ...extra);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(url);
    await page.waitForFunction(() => window.polisViewer && ['ok', 'truncated', 'error', 'live'].includes(window.polisViewer.status),
                               null, { timeout: 20000 });
    page.errors = errors;
    return page;
}

const hook = (page, expr, arg) => page.evaluate(expr, arg);
const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// The page shows tick t of episode ep: the tick read-out, each agent's cell (hook) and the
// pixel at the centre of its recorded cell (canvas), the listed edges.
async function checkTick(page, truth, t, where) {
    const got = await hook(page, () => ({
        tick: polisViewer.tick, agents: polisViewer.agents(), cell: polisViewer.cell, vp: polisViewer.viewport,
        listed: polisViewer.listedEdges(), readout: document.getElementById('tick').textContent,
    }));
    assert.equal(got.tick, t, `${where}: tick`);
    assert.equal(got.readout, `tick ${t} / ${truth.lastTick}`, `${where}: tick read-out`);
    const pos = truth.positions[t];
    const cells = new Map();
    pos.forEach(([x, y]) => cells.set(`${x},${y}`, (cells.get(`${x},${y}`) || 0) + 1));
    for (const a of got.agents) {
        const [x, y] = pos[a.index];
        assert.deepEqual([a.x, a.y], [x, y], `${where}: ${a.name}'s cell`);
        if (x < 0) continue;
        // where the recording puts it, in pixels: the centre of cell (x, y) of the viewport
        const px = (x - got.vp.x0) * got.cell + got.cell / 2, py = (y - got.vp.y0) * got.cell + got.cell / 2;
        const inside = x >= got.vp.x0 && y >= got.vp.y0 && x < got.vp.x0 + got.vp.w && y < got.vp.y0 + got.vp.h;
        if (!inside) {
            assert.deepEqual([a.px, a.py], [null, null], `${where}: ${a.name} is outside the view`);
            continue;
        }
        assert.deepEqual([a.px, a.py], [px, py], `${where}: ${a.name}'s pixel position`);
        if (!a.alive || cells.get(`${x},${y}`) > 1) continue;
        const pixel = await hook(page, ([u, v]) => polisViewer.pixel(u, v), [px, py]);
        assert.deepEqual(pixel, rgb(a.color), `${where}: the pixel at ${a.name}'s cell (${x},${y}) is its colour`);
    }
    const edges = truth.edges[t].map(([f, to, k, w]) => [f, to, k, String(w)]).sort();
    const listed = got.listed.map(([f, to, k, w]) => [f, to, k, String(Number(w))]).sort();
    assert.deepEqual(listed, edges.map(([f, to, k, w]) => [f, to, k, String(Number(w))]), `${where}: listed edges`);
}

test('society: agents drawn at their recorded cells, edges listed, scrubbing both ways', async () => {
    const page = await open('society.jsonl');
    const truth = expected.society.episodes[0];
    assert.equal(await hook(page, () => polisViewer.status), 'ok');
    assert.equal(await hook(page, () => polisViewer.banner), '');
    assert.equal(await hook(page, () => polisViewer.lastTick), truth.lastTick);
    await checkTick(page, truth, 0, 'tick 0');
    // seeks forwards and backwards, across keyframes (every 10 ticks) and between them
    for (const t of [37, 12, 5, 45, 23, 10, 9, 31, 0, 17]) {
        await hook(page, (x) => polisViewer.seek(x), t);
        await checkTick(page, truth, t, `seek ${t}`);
    }
    // the slider, as a person drags it
    for (const t of [28, 3, 44]) {
        await page.locator('#scrub').fill(String(t));
        await checkTick(page, truth, t, `slider ${t}`);
    }
    // the step buttons
    await page.locator('#scrub').fill('8');
    for (let i = 1; i <= 4; i++) {
        await page.click('#fwd');
        await checkTick(page, truth, 8 + i, `step forward to ${8 + i}`);
    }
    await page.click('#back');
    await checkTick(page, truth, 11, 'step back to 11');
    // the keyboard
    await page.locator('#scrub').focus();
    await page.keyboard.press('End');
    await checkTick(page, truth, truth.lastTick, 'End key');
    // the returns at the end are the end line's
    const ret = await hook(page, () => polisViewer.agents().map((a) => a.return));
    const endLine = readFileSync(path.join(FIX, 'society.jsonl'), 'utf8').split('\n').map((l) => l && JSON.parse(l))
        .find((o) => o && o.t === 'end');
    assert.deepEqual(ret, endLine.returns);
    assert.deepEqual(page.errors, []);
    await page.close();
});

test('society: the social panel lists the recorded edges at a given tick, with their weights', async () => {
    const page = await open('society.jsonl');
    await hook(page, () => polisViewer.seek(20));
    const rows = await hook(page, () => polisViewer.listedEdges());
    assert.deepEqual(rows.sort(), [
        ['agent_0', 'agent_1', 'trust', '2'], ['agent_0', 'group_0', 'member', '1'],
        ['agent_1', 'group_1', 'member', '1'], ['agent_2', 'group_0', 'member', '1'],
        ['agent_3', 'group_2', 'member', '1'],
    ]);
    await hook(page, () => polisViewer.seek(14));
    assert.ok((await hook(page, () => polisViewer.listedEdges())).some((r) => r.join() === 'agent_0,agent_1,trust,0.5'),
              'the trust edge has its weight of tick 12..16');
    const nodes = await page.textContent('#nodes');
    assert.match(nodes, /Group 2/);
    await hook(page, () => polisViewer.seek(31));
    assert.doesNotMatch(await page.textContent('#nodes'), /Group 1/, 'group_1 is gone at tick 31');
    await page.close();
});

test('society: play advances the ticks and pauses', async () => {
    const page = await open('society.jsonl');
    const truth = expected.society.episodes[0];
    // 10 ticks/s: the 45-tick episode takes 4.5 s, so on a loaded machine the pause below
    // still lands mid-episode (at the end, play stops by itself and a click would restart).
    await page.selectOption('#speed', '10');
    await page.click('#play');
    await page.waitForFunction(() => polisViewer.tick >= 3, null, { timeout: 10000 });
    await page.click('#play');
    const t = await hook(page, () => polisViewer.tick);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await hook(page, () => polisViewer.tick), t, 'paused');
    await checkTick(page, truth, t, `played to ${t}`);
    await page.close();
});

test('society: the event filter by type and by agent', async () => {
    const page = await open('society.jsonl');
    const truth = expected.society.episodes[0];
    await hook(page, () => polisViewer.seek(30));
    const upTo = truth.events.filter((e) => e.tick <= 30);
    assert.equal((await hook(page, () => polisViewer.listedEvents())).length, upTo.length, 'all events up to tick 30');
    await page.selectOption('#evtype', 'resource.picked');
    let listed = await hook(page, () => polisViewer.listedEvents());
    const picked = upTo.filter((e) => e.type === 'resource.picked');
    assert.ok(picked.length > 2);
    assert.equal(listed.length, picked.length);
    assert.ok(listed.every((e) => e.text.includes('resource.picked')));
    await page.selectOption('#evagent', '1');
    listed = await hook(page, () => polisViewer.listedEvents());
    const mine = picked.filter((e) => e.agent === 1);
    assert.equal(listed.length, mine.length);
    assert.deepEqual(listed.map((e) => e.tick), mine.map((e) => e.tick).reverse());
    assert.ok(listed.every((e) => e.text.includes('agent=agent_1')));
    await page.selectOption('#evtype', '');
    await page.check('#evnow');
    listed = await hook(page, () => polisViewer.listedEvents());
    assert.deepEqual(listed.map((e) => e.tick), upTo.filter((e) => e.tick === 30 && e.agent === 1).map(() => 30));
    // clicking an event jumps to its tick
    await page.uncheck('#evnow');
    await page.selectOption('#evagent', '');
    await page.selectOption('#evtype', 'social.edge_added');
    await page.click('#events li.event >> nth=-1');
    assert.equal(await hook(page, () => polisViewer.tick), 5);
    await page.close();
});

test("society: an agent's own view is the crop around it", async () => {
    const page = await open('society.jsonl');
    const truth = expected.society.episodes[0];
    await hook(page, () => polisViewer.seek(15));
    await page.selectOption('#viewof', '2');
    const vp = await hook(page, () => polisViewer.viewport);
    const [x, y] = truth.positions[15][2];
    assert.deepEqual(vp, { x0: x - 2, y0: y - 2, w: 5, h: 5 });
    const size = await hook(page, () => [document.getElementById('map').width, polisViewer.cell]);
    assert.equal(size[0], 5 * size[1]);
    await checkTick(page, truth, 15, "agent_2's view at 15");
    const a = (await hook(page, () => polisViewer.agents()))[2];
    assert.deepEqual([a.px, a.py], [2.5 * size[1], 2.5 * size[1]], 'the agent is at the centre of its view');
    await hook(page, () => polisViewer.seek(40));
    await checkTick(page, truth, 40, "agent_2's view at 40");
    await page.close();
});

test('society: the second episode', async () => {
    const page = await open('society.jsonl');
    const truth = expected.society.episodes[1];
    await page.selectOption('#episode', '1');
    assert.equal(await hook(page, () => polisViewer.episode), 1);
    assert.equal(await hook(page, () => polisViewer.lastTick), truth.lastTick);
    for (const t of [0, 13, 7, 20]) {
        await hook(page, (x) => polisViewer.seek(x), t);
        await checkTick(page, truth, t, `episode 1 tick ${t}`);
    }
    await page.close();
});

test('gzip: society.jsonl.gz shows the same episode', async () => {
    const page = await open('society.jsonl.gz');
    const truth = expected.society.episodes[0];
    assert.equal(await hook(page, () => polisViewer.status), 'ok');
    for (const t of [0, 30, 19]) {
        await hook(page, (x) => polisViewer.seek(x), t);
        await checkTick(page, truth, t, `gz tick ${t}`);
    }
    await page.close();
});

test('truncated: the banner names it, what is there is shown', async () => {
    const page = await open('truncated.jsonl');
    assert.equal(await hook(page, () => polisViewer.status), 'truncated');
    const banner = await hook(page, () => polisViewer.banner);
    assert.match(banner, /^Truncated recording: the last line is cut off \(the file ends at line 30\)/);
    assert.ok(await page.isVisible('#banner'));
    assert.equal(await hook(page, () => polisViewer.lastTick), expected.truncated.lastTick);
    const truth = expected.society.episodes[0];
    await hook(page, (x) => polisViewer.seek(x), expected.truncated.lastTick);
    await checkTick(page, { ...truth, lastTick: expected.truncated.lastTick }, expected.truncated.lastTick, 'truncated, last tick');
    await page.close();

    const gz = await open('truncated.jsonl.gz');
    assert.equal(await hook(gz, () => polisViewer.status), 'truncated');
    assert.match(await hook(gz, () => polisViewer.banner), /^Truncated recording: /);
    assert.ok(await hook(gz, () => polisViewer.lastTick) > 0, 'the ticks before the cut are shown');
    await gz.close();
});

test('a bad line: the banner names its line number', async () => {
    const page = await open('badline.jsonl');
    assert.equal(await hook(page, () => polisViewer.status), 'error');
    const banner = await hook(page, () => polisViewer.banner);
    assert.match(banner, /^badline\.jsonl: line 7: not JSON/);
    assert.equal(await hook(page, () => polisViewer.lastTick), 3, 'the ticks before it are shown');
    await page.close();
});

test('survival: mobs appear, move and go; vitals; a death', async () => {
    const page = await open('survival.jsonl');
    const truth = expected.survival.episodes[0];
    assert.equal(await hook(page, () => polisViewer.status), 'ok');
    for (const t of [0, 1, 9, 18, 27, 33, 40, 6]) {
        await hook(page, (x) => polisViewer.seek(x), t);
        await checkTick(page, truth, t, `survival tick ${t}`);
        const things = (await hook(page, () => polisViewer.things())).map((o) => [o.id, o.kind, o.x, o.y, o.label]);
        assert.deepEqual(things.sort((a, b) => a[0] - b[0]), truth.things[t], `survival tick ${t}: things`);
    }
    await hook(page, () => polisViewer.seek(polisViewer.lastTick));
    const agents = await hook(page, () => polisViewer.agents());
    assert.equal(agents[1].alive, 0, 'player_1 died');
    assert.match(await page.textContent('#agents'), /vitals:.*health/s);
    if (process.env.SCREENSHOTS) await page.screenshot({ path: path.join(process.env.SCREENSHOTS, 'viewer-survival-fixture.png') });
    await page.close();
});

test('follow: a recording being written is shown as it grows (polis view --follow, WebSocket)', async () => {
    const all = readFileSync(path.join(FIX, 'society.jsonl'), 'utf8').split('\n').filter((l) => l);
    const upTo = (tick) => all.findIndex((l) => l.startsWith(`{"t":"step","tick":${tick},`)) + 1;
    const truth = expected.society.episodes[0];
    const live = path.join(FIX, 'live.jsonl');
    writeFileSync(live, all.slice(0, upTo(12)).join('\n') + '\n');
    const page = await open('live.jsonl', '--follow');
    await page.waitForFunction(() => polisViewer.status === 'live' && polisViewer.tick === 12, null, { timeout: 10000 });
    assert.match(await hook(page, () => polisViewer.banner), /^Live: following live\.jsonl/);
    await checkTick(page, { ...truth, lastTick: 12 }, 12, 'live at 12');
    // more ticks, the last of them cut in the middle of its line
    const next = all.slice(upTo(12), upTo(30));
    const half = Math.floor(all[upTo(30)].length / 2);
    appendFileSync(live, next.join('\n') + '\n' + all[upTo(30)].slice(0, half));
    await page.waitForFunction(() => polisViewer.tick === 30, null, { timeout: 10000 });
    await checkTick(page, { ...truth, lastTick: 30 }, 30, 'live at 30 (the page follows the last tick)');
    // the rest of the line and of the file: both episodes, to their end lines
    appendFileSync(live, all[upTo(30)].slice(half) + '\n' + all.slice(upTo(30) + 1).join('\n') + '\n');
    await page.waitForFunction(() => document.getElementById('episode').options.length === 2 &&
                               /episode 1 ended at tick 20/.test(polisViewer.banner), null, { timeout: 10000 });
    assert.equal(await hook(page, () => polisViewer.lastTick), truth.lastTick);
    for (const t of [45, 7, 33]) {
        await hook(page, (x) => polisViewer.seek(x), t);
        await checkTick(page, truth, t, `live, complete, tick ${t}`);
    }
    assert.deepEqual(page.errors, []);
    await page.close();
});
