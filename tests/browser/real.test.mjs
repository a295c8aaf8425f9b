// real.test.mjs — the viewer in a real browser on real recordings: each game is played by
// `polis run SCENARIO --record FILE` (the society games Exploration, Social Structure "dynamic"
// and Negotiation, Commons in Lua, Survival with three players, gather), served by
// `polis view`, and opened in Debian's chromium (headless, playwright-core; one browser for
// every game).
//
// The truth comes from the recording itself, read here by a reader of its own (readTruth:
// a few lines of JSON and diffs, not the viewer's code): every agent's cell, facing, life,
// stats and return, the things, the tiles, the social nodes and edges at every tick, and the
// events. At ticks reached by seeking, the slider, the step buttons and the keyboard, the test
// checks:
//   - the map: the pixel at the centre of EVERY cell is what the recording puts there — an
//     agent's legend colour where an agent stands (black where only a dead one lies), else a
//     thing's kind colour, else the top tile's kind colour, else the empty cell — so an agent,
//     a mob or a tile drawn one cell off fails twice (its own cell and the one it lands on);
//   - the Agents panel: each agent's cell, life, return and stats by group as recorded;
//   - the actions table: each agent's action name and reward at this tick;
//   - the social panel (society games): the edges listed at this tick, the nodes;
//   - the event filter by type, agent and tick; an agent's own view (games with a view).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const POLIS = process.env.POLIS;
const SRC = process.env.SRC;
const TMP = process.env.TMP;

// The games: the command that records each, and the ticks the test goes to (by seeking
// forwards and backwards across keyframes; the slider, the buttons and the keys come after).
const GAMES = {
    exploration: {
        run: ['rulesets/exploration/exploration.json', '--policy', 'greedy', '--steps', '50', '--keyframe-every', '16'],
        file: 'exploration.jsonl.gz', seeks: [0, 37, 12, 16, 49, 15, 33],
    },
    dynamic: {   // Social Structure: the edges change at ticks 30 and 60
        run: ['rulesets/social_structure/dynamic.json', '--policy', 'greedy', '--steps', '64', '--keyframe-every', '25'],
        file: 'dynamic.jsonl', seeks: [0, 30, 29, 60, 61, 26, 59, 45], social: true,
    },
    negotiation: {   // contracts (edges) and groups (nodes) made in the first ticks
        run: ['rulesets/negotiation/negotiation.json', '--policy', 'scripted', '--steps', '40', '--keyframe-every', '10'],
        file: 'negotiation.jsonl', seeks: [0, 1, 2, 3, 4, 31, 9, 20], social: true,
    },
    commons: {   // Lua: apples eaten and regrown, players zapped out and respawned
        run: ['rulesets/commons/commons_open.json', '--policy', 'commons_free', '--steps', '40', '--keyframe-every', '16'],
        file: 'commons.jsonl', seeks: [0, 19, 31, 8, 40, 16, 17, 25],
    },
    survival: {   // Multi-Agent Craftax, three players: mobs, vitals, inventories
        run: ['rulesets/survival/survival_mac.json', '--policy', 'scripted', '--steps', '60', '--keyframe-every', '16'],
        file: 'survival.jsonl.gz', seeks: [0, 50, 7, 33, 60, 16, 41], mobs: true,
    },
    gather: {
        run: ['rulesets/gather/gather.json', '--policy', 'random', '--steps', '40', '--keyframe-every', '10'],
        file: 'gather.jsonl', seeks: [0, 23, 10, 9, 40, 31],
    },
};

// ---- the truth, read from the recording (independently of sdk/viewer) -------------------

const edgeId = (e) => `${e[0]} ${e[1]} ${e[2]}`;

function stateOfKey(h, k) {
    const W = h.map.width, H = h.map.height;
    const tiles = h.map.layers.map((_, li) => {
        const layer = new Int32Array(W * H).fill(-1);
        const runs = (k.tiles || [])[li] || [];
        let p = 0;
        for (let i = 0; i < runs.length; i += 2) for (let n = 0; n < runs[i + 1]; n++) layer[p++] = runs[i];
        assert.equal(p, (k.tiles || [])[li] ? W * H : 0, `key ${k.tick}: layer ${li} covers the map`);
        return layer;
    });
    return {
        tiles,
        things: new Map((k.things || []).map((t) => [t[0], { kind: t[1], x: t[2], y: t[3], label: t[4] }])),
        agents: k.agents.map((a) => ({ x: a.x, y: a.y, facing: a.facing, alive: a.alive, stats: a.stats.slice(), ret: a.return })),
        nodes: new Map((k.nodes || []).map((n) => [n[0], n.slice()])),
        edges: new Map((k.edges || []).map((e) => [edgeId(e), e.slice()])),
    };
}

function copyState(s) {
    return {
        tiles: s.tiles.map((l) => l.slice()),
        things: new Map([...s.things].map(([id, t]) => [id, { ...t }])),
        agents: s.agents.map((a) => ({ ...a, stats: a.stats.slice() })),
        nodes: new Map(s.nodes),
        edges: new Map(s.edges),
    };
}

function applyStep(h, s, st) {
    for (const [l, x, y, k] of st.tiles || []) s.tiles[l][y * h.map.width + x] = k;
    const th = st.things || {};
    for (const t of th.add || []) s.things.set(t[0], { kind: t[1], x: t[2], y: t[3], label: t[4] });
    for (const [id, x, y] of th.move || []) Object.assign(s.things.get(id), { x, y });
    for (const id of th.del || []) s.things.delete(id);
    for (const [i, ch] of st.agents || []) {
        const a = s.agents[i];
        for (const m of ['x', 'y', 'facing', 'alive']) if (m in ch) a[m] = ch[m];
        for (const [si, v] of Object.entries(ch.stats || {})) a.stats[Number(si)] = v;
    }
    st.rewards.forEach((r, i) => { s.agents[i].ret += r; });
    for (const n of (st.nodes || {}).del || []) s.nodes.delete(n);
    for (const n of (st.nodes || {}).add || []) s.nodes.set(n[0], n.slice());
    for (const e of (st.edges || {}).del || []) s.edges.delete(edgeId(e));
    for (const e of (st.edges || {}).add || []) s.edges.set(edgeId(e), e.slice());
}

// {header, episodes: [{states[t], steps[t] (the step line of tick t), end}]}; a keyframe
// after tick 0 is checked against the state the steps before it built.
function readTruth(file) {
    let bytes = readFileSync(file);
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
    const lines = bytes.toString('utf8').split('\n');
    assert.equal(lines.pop(), '', `${file} ends with a newline`);
    const objs = lines.map((l) => JSON.parse(l));
    const h = objs[0];
    assert.equal(h.t, 'header');
    const episodes = [];
    let ep = null, cur = null;
    for (const o of objs.slice(1)) {
        if (o.t === 'reset') {
            ep = { states: [], steps: [null], end: null };
            episodes.push(ep);
        } else if (o.t === 'key' && o.tick === 0) {
            cur = stateOfKey(h, o);
            ep.states[0] = copyState(cur);
        } else if (o.t === 'key') {
            const k = stateOfKey(h, o);
            const pos = (s) => s.agents.map((a) => [a.x, a.y, a.alive, a.stats.join()]);
            assert.deepEqual(pos(k), pos(cur), `${file}: keyframe ${o.tick} agents`);
            assert.deepEqual([...k.edges.keys()].sort(), [...cur.edges.keys()].sort(), `${file}: keyframe ${o.tick} edges`);
            assert.deepEqual([...k.things].sort(), [...cur.things].sort(), `${file}: keyframe ${o.tick} things`);
        } else if (o.t === 'step') {
            assert.equal(o.tick, ep.states.length, `${file}: step ticks follow each other`);
            applyStep(h, cur, o);
            ep.states.push(copyState(cur));
            ep.steps.push(o);
        } else if (o.t === 'end') {
            ep.end = o;
        }
    }
    return { header: h, episodes };
}

// ---- the browser -------------------------------------------------------------------------

let browser;
let profile;
const servers = [];
const truths = {};

before(async () => {
    mkdirSync(TMP, { recursive: true });
    for (const [name, g] of Object.entries(GAMES)) {
        const file = path.join(TMP, g.file);
        const r = spawnSync(POLIS, ['run', ...g.run, '--record', file, '--quiet'], { cwd: SRC, encoding: 'utf8' });
        assert.equal(r.status, 0, `polis run ${g.run.join(' ')}: ${r.stderr}`);
        truths[name] = readTruth(file);
    }
    profile = mkdtempSync(path.join(tmpdir(), 'polis-real-chromium-'));
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

function serve(file) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['view', file, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
        servers.push(p);
        let out = '', err = '';
        const timer = setTimeout(() => reject(new Error(`polis view ${file}: no URL after 20 s (${err})`)), 20000);
        p.stdout.on('data', (d) => {
            out += d;
            if (out.includes('\n')) { clearTimeout(timer); resolve(out.slice(0, out.indexOf('\n'))); }
        });
        p.stderr.on('data', (d) => { err += d; });
        p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`polis view ${file} exited ${code}: ${err}`)); });
    });
}

async function open(name) {
    const url = await serve(path.join(TMP, GAMES[name].file));
    const page = await browser.newPage();
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
    await page.goto(url);
    await page.waitForFunction(() => window.polisViewer && ['ok', 'truncated', 'error'].includes(window.polisViewer.status),
                               null, { timeout: 20000 });
    assert.equal(await page.evaluate(() => polisViewer.status), 'ok', `${name}: read without a banner`);
    return page;
}

const hex = (c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)).join(',');
const EMPTY = hex('#0e0f12');     // a map cell with no tile, thing or agent
const OFF_MAP = hex('#05060a');   // a cell of an agent's view outside the map
const BLACK = '0,0,0';            // the cross over a dead agent

// Each agent's colour as the legend under the map shows it.
async function legendColours(page, h) {
    const got = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#legend [data-agent]')]
        .map((el) => [el.dataset.agent, getComputedStyle(el.querySelector('i')).backgroundColor])));
    return h.agents.map((a, i) => {
        const m = /rgb\((\d+), (\d+), (\d+)\)/.exec(got[i] || '');
        assert.ok(m, `the legend shows ${a}'s colour`);
        return `${m[1]},${m[2]},${m[3]}`;
    });
}

// What the centre of map cell (x, y) shows in state s: [colours allowed, what is there].
function expectedCell(h, s, colours, x, y) {
    const W = h.map.width, H = h.map.height;
    if (x < 0 || y < 0 || x >= W || y >= H) return [[OFF_MAP], 'off the map'];
    const here = s.agents.map((a, i) => [a, i]).filter(([a]) => a.x === x && a.y === y);
    const alive = here.filter(([a]) => a.alive);
    if (alive.length) return [alive.map(([, i]) => colours[i]), `agent ${alive.map(([, i]) => h.agents[i]).join('+')}`];
    if (here.length) return [[BLACK], `dead ${here.map(([, i]) => h.agents[i]).join('+')}`];
    const things = [...s.things.values()].filter((t) => t.x === x && t.y === y);
    if (things.length) return [things.map((t) => hex(h.kinds[t.kind].color)), `thing ${things.map((t) => h.kinds[t.kind].name).join('+')}`];
    for (let l = s.tiles.length - 1; l >= 0; l--) {
        const k = s.tiles[l][y * W + x];
        if (k >= 0) return [[hex(h.kinds[k].color)], `tile ${h.kinds[k].name}`];
    }
    return [[EMPTY], 'empty'];
}

// What the page shows, in one round trip: the tick, the pixel at the centre of every cell of
// the map canvas (w x hh cells), the Agents panel, the actions table, the edges and nodes.
function pageState(page, w, hh) {
    return page.evaluate(([w, hh]) => {
        const cv = document.getElementById('map');
        const c = cv.width / w;
        const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        const out = [];
        for (let y = 0; y < hh; y++) {
            for (let x = 0; x < w; x++) {
                const o = (Math.floor(y * c + c / 2) * cv.width + Math.floor(x * c + c / 2)) * 4;
                out.push(`${d[o]},${d[o + 1]},${d[o + 2]}`);
            }
        }
        return {
            tick: polisViewer.tick, width: cv.width, height: cv.height, out,
            readout: document.getElementById('tick').textContent,
            agents: [...document.querySelectorAll('#agents .agent')].map((el) => ({
                name: el.querySelector('.name').textContent,
                where: el.querySelector('.name + .stat').textContent,
                ret: el.querySelector('.ret').textContent,
                groups: [...el.querySelectorAll(':scope > div')].map((g) => [...g.querySelectorAll('.stat')].map((x) => x.textContent.trim())),
                bars: [...el.querySelectorAll('.stat')].filter((x) => x.querySelector('.bar i'))
                    .map((x) => [x.textContent.trim().split(' ')[0], parseFloat(x.querySelector('.bar i').style.width)]),
            })),
            actions: [...document.querySelectorAll('#actions tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent)),
            edges: [...document.querySelectorAll('#edges tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
            nodes: document.getElementById('nodes').textContent,
        };
    }, [w, hh]);
}

// The map canvas (got: pageState) shows cells w x hh from (x0, y0) of state s.
function checkMap(got, h, s, colours, x0, y0, w, hh, where) {
    const c = got.width / w;
    assert.ok(Number.isInteger(c) && c >= 4, `${where}: the map canvas is ${w} cells of ${c} px`);
    assert.equal(got.height, hh * c, `${where}: the map canvas is ${hh} cells high`);
    const bad = [];
    for (let vy = 0; vy < hh; vy++) {
        for (let vx = 0; vx < w; vx++) {
            const [ok, what] = expectedCell(h, s, colours, x0 + vx, y0 + vy);
            const px = got.out[vy * w + vx];
            if (!ok.includes(px)) bad.push(`(${x0 + vx},${y0 + vy}) ${what}: expected ${ok.join('|')}, drawn ${px}`);
        }
    }
    assert.deepEqual(bad.slice(0, 8), [], `${where}: cells drawn wrong (${bad.length})`);
}

const near = (a, b) => Math.abs(a - b) <= 5e-4 + 1e-6 * Math.abs(b);

// The side panels (got: pageState) at state s, tick t: agents, actions, edges and nodes.
function checkPanels(got, h, s, step, t, social, where) {
    assert.match(got.readout, new RegExp(`^tick ${t} / `), `${where}: tick read-out`);
    assert.equal(got.agents.length, h.agents.length, `${where}: one panel per agent`);
    s.agents.forEach((a, i) => {
        const p = got.agents[i];
        const who = `${where}: ${h.agents[i]}`;
        assert.equal(p.name, h.agents[i]);
        assert.ok(p.where.startsWith(`(${a.x}, ${a.y})`), `${who}: cell ${p.where}, recorded (${a.x}, ${a.y})`);
        assert.equal(/dead/.test(p.where), !a.alive, `${who}: alive ${a.alive}, shown "${p.where}"`);
        assert.ok(near(Number(p.ret), a.ret), `${who}: return shown ${p.ret}, recorded ${a.ret}`);
        const groups = [];
        h.stats.forEach((st, si) => {
            const g = st.group || 'stats';
            let e = groups.find((x) => x[0] === `${g}:`);
            if (!e) groups.push(e = [`${g}:`]);
            if (g === 'vitals' || a.stats[si] !== 0) e.push(`${st.name} ${a.stats[si]}`);
        });
        for (const e of groups) if (e.length === 1) e.push('—');
        assert.deepEqual(p.groups, groups, `${who}: stats by group`);
        // vitals with a maximum have a bar that long
        const bars = h.stats.map((st, si) => [st, a.stats[si]]).filter(([st]) => st.group === 'vitals' && st.max);
        assert.deepEqual(p.bars.map(([n]) => n), bars.map(([st]) => st.name), `${who}: vitals bars`);
        bars.forEach(([st, v], k) => assert.ok(Math.abs(p.bars[k][1] - Math.max(0, Math.min(100, 100 * v / st.max))) < 0.01,
                                               `${who}: ${st.name} bar ${p.bars[k][1]}% for ${v} of ${st.max}`));
    });
    if (step) {
        assert.deepEqual(got.actions.map((r) => [r[0], r[1].replace(/ \(illegal\)| term| trunc/g, ''), Number(r[2])]),
                         h.agents.map((a, i) => [a, h.actions[step.actions[i]].name, step.rewards[i]]), `${where}: actions and rewards`);
    }
    if (social) {
        const want = [...s.edges.values()].map(([f, to, k, w]) => [f, to, k, String(w)]).sort();
        const listed = got.edges.map(([f, to, k, w]) => [f, to, k, String(Number(w))]).sort();
        assert.deepEqual(listed, want, `${where}: the social panel's edges`);
        for (const [, kind, label] of s.nodes.values()) assert.ok(got.nodes.includes(`${label} ${kind}`), `${where}: node ${label} listed`);
    }
}

async function checkTick(page, name, colours, t, where) {
    const { header: h, episodes: [ep] } = truths[name];
    const s = ep.states[t];
    const got = await pageState(page, h.map.width, h.map.height);
    assert.equal(got.tick, t, `${where}: tick`);
    checkMap(got, h, s, colours, 0, 0, h.map.width, h.map.height, where);
    checkPanels(got, h, s, ep.steps[t], t, GAMES[name].social, where);
}

// Seeks (hook), the slider, the step buttons and the keys, each tick checked.
async function walk(page, name) {
    const { header: h, episodes: [ep] } = truths[name];
    const last = ep.states.length - 1;
    const colours = await legendColours(page, h);
    assert.equal(new Set(colours).size, colours.length, `${name}: every agent has a colour of its own`);
    for (const k of h.kinds) assert.ok(!colours.includes(hex(k.color)), `${name}: no agent has the colour of kind ${k.name}`);
    assert.equal(await page.evaluate(() => polisViewer.lastTick), last);
    await checkTick(page, name, colours, 0, 'opened');
    for (const t of GAMES[name].seeks) {
        await page.evaluate((x) => polisViewer.seek(x), t);
        await checkTick(page, name, colours, t, `seek ${t}`);
    }
    const mid = Math.floor(last / 2);
    for (const t of [mid + 3, 2, last - 1]) {
        await page.locator('#scrub').fill(String(t));
        await checkTick(page, name, colours, t, `slider ${t}`);
    }
    await page.locator('#scrub').fill(String(mid));
    await page.click('#fwd');
    await checkTick(page, name, colours, mid + 1, 'step forward');
    await page.click('#fwd');
    await checkTick(page, name, colours, mid + 2, 'step forward');
    await page.click('#back');
    await checkTick(page, name, colours, mid + 1, 'step back');
    await page.locator('#scrub').focus();
    await page.keyboard.press('End');
    await checkTick(page, name, colours, last, 'End key');
    await page.keyboard.press('ArrowLeft');
    await checkTick(page, name, colours, last - 1, 'left arrow');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await checkTick(page, name, colours, 1, 'Home, right arrow');
    // the end line's returns at the last tick
    await page.evaluate(() => polisViewer.seek(polisViewer.lastTick));
    const shown = await page.evaluate(() => [...document.querySelectorAll('#agents .ret')].map((r) => Number(r.textContent)));
    ep.end.returns.forEach((r, i) => assert.ok(near(shown[i], r), `${h.agents[i]}: final return ${shown[i]}, end line ${r}`));
    return colours;
}

// The event filter at tick t: by type (the commonest one with an agent), by agent, this tick.
async function checkEvents(page, name, t) {
    const { header: h, episodes: [ep] } = truths[name];
    await page.evaluate((x) => polisViewer.seek(x), t);
    const all = [];
    for (let k = 1; k <= t; k++) for (const e of ep.steps[k].events || []) all.push({ tick: k, ...e });
    const listed = () => page.evaluate(() => polisViewer.listedEvents());
    const newestFirst = (list) => list.map((e) => e.tick).reverse().slice(0, 300);
    assert.deepEqual((await listed()).map((e) => e.tick), newestFirst(all), `${name}: every event up to tick ${t}`);
    const count = new Map();
    for (const e of all) if (e.agent !== undefined) count.set(e.type, (count.get(e.type) || 0) + 1);
    const type = [...count].sort((a, b) => b[1] - a[1])[0][0];
    await page.selectOption('#evtype', type);
    const ofType = all.filter((e) => e.type === type);
    let got = await listed();
    assert.deepEqual(got.map((e) => e.tick), newestFirst(ofType), `${name}: events of type ${type}`);
    assert.ok(got.every((e) => e.text.includes(type)));
    const agent = ofType[ofType.length - 1].agent;
    await page.selectOption('#evagent', String(agent));
    const mine = ofType.filter((e) => e.agent === agent);
    got = await listed();
    assert.deepEqual(got.map((e) => e.tick), newestFirst(mine), `${name}: ${type} events of ${h.agents[agent]}`);
    assert.ok(got.every((e) => e.text.includes(`agent=${h.agents[agent]}`)));
    await page.check('#evnow');
    got = await listed();
    assert.deepEqual(got.map((e) => e.tick), mine.filter((e) => e.tick === t).map(() => t), `${name}: this tick only`);
    await page.uncheck('#evnow');
    await page.selectOption('#evtype', '');
    await page.selectOption('#evagent', '');
    // clicking the oldest event listed jumps to its tick
    const oldest = (await listed()).at(-1).tick;
    await page.click('#events li.event >> nth=-1');
    assert.equal(await page.evaluate(() => polisViewer.tick), oldest, `${name}: clicking an event jumps to its tick`);
}

// An agent's own view: the (2rx+1) x (2ry+1) cells around it, off-map cells dark.
async function checkView(page, name, colours, agent, ticks) {
    const { header: h, episodes: [ep] } = truths[name];
    const { rx, ry } = h.view;
    await page.selectOption('#viewof', String(agent));
    for (const t of ticks) {
        await page.evaluate((x) => polisViewer.seek(x), t);
        const a = ep.states[t].agents[agent];
        const got = await pageState(page, 2 * rx + 1, 2 * ry + 1);
        checkMap(got, h, ep.states[t], colours, a.x - rx, a.y - ry, 2 * rx + 1, 2 * ry + 1,
                 `${h.agents[agent]}'s view at tick ${t}`);
    }
    await page.selectOption('#viewof', '');
}

for (const name of Object.keys(GAMES)) {
    test(`${name}: the map, the agents, the actions${GAMES[name].social ? ', the social panel' : ''} at ticks reached every way`, async () => {
        const page = await open(name);
        const colours = await walk(page, name);
        const { header: h, episodes: [ep] } = truths[name];
        if (ep.steps.some((s) => s && (s.events || []).some((e) => e.agent !== undefined))) {
            await checkEvents(page, name, Math.floor((ep.states.length - 1) * 0.75));
        }
        if (h.view) {
            // an agent whose view crosses the map's edge at some tick, when there is one: two
            // such ticks and two of the ticks seeked to above
            const { rx, ry } = h.view;
            const crosses = (a) => a.alive && (a.x < rx || a.y < ry || a.x >= h.map.width - rx || a.y >= h.map.height - ry);
            const agent = Math.max(0, h.agents.findIndex((_, i) => ep.states.some((s) => crosses(s.agents[i]))));
            const ticks = [...ep.states.keys()].filter((t) => crosses(ep.states[t].agents[agent])).slice(0, 2)
                .concat(GAMES[name].seeks.filter((t) => ep.states[t].agents[agent].alive).slice(0, 2));
            await checkView(page, name, colours, agent, ticks);
        }
        assert.deepEqual(page.errors, [], `${name}: no errors on the page`);
        await page.close();
    });
}

test('the recordings hold what the tests above need', () => {
    // social games with edges that change, a Lua game where players die, mobs in survival
    const changes = (name) => truths[name].episodes[0].steps.filter((s) => s && s.edges).length;
    assert.ok(changes('dynamic') >= 2 && changes('negotiation') >= 2);
    assert.ok(truths.commons.episodes[0].states.some((s) => s.agents.some((a) => !a.alive)), 'a commons player is zapped');
    const h = truths.survival.header;
    const mobs = truths.survival.episodes[0].states.map((s) => [...s.things.values()].filter((t) => /cow|zombie|skeleton/.test(h.kinds[t.kind].name)).length);
    assert.ok(Math.max(...GAMES.survival.seeks.map((t) => mobs[t])) > 0, 'mobs at the ticks checked');
    assert.ok(h.agents.length >= 2);
    const g = truths.gather;
    assert.ok(g.episodes[0].states.some((s) => s.agents.some((a) => a.x < 2 || a.y < 2 || a.x > 9 || a.y > 9)),
              "a gather agent's view crosses the map's edge");
    assert.ok(truths.survival.header.stats.some((s) => s.group === 'vitals'));
});
