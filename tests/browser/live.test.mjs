// live.test.mjs — live play in a real browser: `polis serve gather --http 127.0.0.1:0` with a
// human seat, Debian's chromium headless (playwright-core). The page takes the seat with its
// "take" button, a person's keys (an arrow key, then WASD) and the legal-action menu play it,
// and the agent moves in the engine: the streamed step lines the page shows put the agent
// where the moves take it (and the map draws it there), and the recording the server wrote
// has the same actions. A second page sees the seat taken, and free again when the first leaves.
// Then two pages take two seats while an agent-protocol client (a plain TCP socket, as an LLM
// agent would use) plays a third: the game waits for both people, and one tick moves both
// agents, as both pages show; the recording names each seat's player and replays. Last, a page
// opened late follows a game of several episodes from one episode to the next.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const POLIS = process.env.POLIS;
const SRC = process.env.SRC;
let browser;
let profile;
let tmp;
const servers = [];

before(async () => {
    profile = mkdtempSync(path.join(tmpdir(), 'polis-live-chromium-'));
    tmp = mkdtempSync(path.join(tmpdir(), 'polis-live-'));
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
    if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// Starts `polis serve SCENARIO --http 127.0.0.1:0 ...`; resolves with [process, URL], with
// --tcp the agent clients' port third, and fourth each human seat's own link (its token takes
// the seat), by agent.
function serveLive(scenario, ...extra) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['serve', scenario, '--http', '127.0.0.1:0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
        servers.push(p);
        let out = '';
        let err = '';
        const timer = setTimeout(() => reject(new Error(`polis serve --http: no URL after 20 s (${err})`)), 20000);
        p.stdout.on('data', (d) => {
            out += d;
            const lines = out.split('\n');
            const seats = {};
            let k = 0;
            for (; k < lines.length - 1 && lines[k].startsWith('seat '); k++) {
                const [agent, link] = lines[k].slice(5).split(': ');
                seats[agent] = link;
            }
            const want = extra.includes('--tcp') ? 2 : 1;
            if (lines.length > k + want) {
                clearTimeout(timer);
                resolve([p, lines[k], want > 1 ? Number(lines[k + 1].split(':').pop()) : null, seats]);
            }
        });
        p.stderr.on('data', (d) => { err += d; });
        p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`polis serve --http exited ${code}: ${err}`)); });
    });
}

const stopped = (p) => new Promise((resolve) => { p.on('exit', (code) => resolve(code)); p.kill('SIGTERM'); });

// The agent's cell as the page shows it at the page's current tick.
const cellOf = (page, i) => page.evaluate((k) => {
    const a = window.polisViewer.agents().find((x) => x.index === k);
    return { x: a.x, y: a.y, px: a.px, py: a.py, color: a.color, tick: window.polisViewer.tick };
}, i);

const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const DELTA = { move_north: [0, -1], move_south: [0, 1], move_west: [-1, 0], move_east: [1, 0] };
const KEY_OF = { move_north: 'ArrowUp', move_south: 'ArrowDown', move_west: 'ArrowLeft', move_east: 'ArrowRight' };
const WASD_OF = { move_north: 'w', move_south: 's', move_west: 'a', move_east: 'd' };

test('a person takes a seat in the browser and moves the agent in the engine', async () => {
    const rec = path.join(tmp, 'live.jsonl');
    const [server, url, , seats] = await serveLive(path.join(SRC, 'rulesets/gather/gather.json'),
        '--seat', 'agent_0=human', '--seed', '3', '--record', rec);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?live=1$/);
    assert.match(seats.agent_0, /^http:\/\/127\.0\.0\.1:\d+\/\?live=1&token=[0-9a-f]{32}$/);
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(seats.agent_0);
    await page.waitForFunction(() => window.polisViewer.status === 'live' && window.polisViewer.play
        && window.polisViewer.play.seats.length === 4);
    assert.match(await page.evaluate(() => window.polisViewer.banner), /^Live/);
    assert.equal(await page.locator('#seats').innerText().then((t) => t.includes('agent_1: random')), true);

    // take the seat with the page's button
    await page.click('button[data-take="agent_0"]');
    await page.waitForFunction(() => window.polisViewer.play.turn && window.polisViewer.play.turn.tick === 0);
    assert.equal(await page.evaluate(() => window.polisViewer.play.seat), 'agent_0');
    assert.equal(await page.locator('button[data-take]').count(), 0, 'no take button once seated');
    const legal = await page.evaluate(() => window.polisViewer.play.turn.legal.map((a) => a.name));
    const menu = await page.locator('#legal option').allTextContents();
    assert.ok(menu.includes('move_east — move to x+1') || !legal.includes('move_east'), `the menu shows the docs: ${menu}`);

    // a second page sees the seat taken
    const other = await browser.newPage();
    await other.goto(url);
    await other.waitForFunction(() => window.polisViewer.play && window.polisViewer.play.seats.length === 4);
    assert.equal(await other.locator('button[data-take]').count(), 0, 'the taken seat has no take button elsewhere');
    assert.equal(await other.evaluate(() => window.polisViewer.play.seats[0].free), false);

    // the game waits for the person
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.polisViewer.lastTick), 0, 'no tick before the person acts');
    const start = await cellOf(page, 0);

    // an arrow key
    const first = Object.keys(KEY_OF).find((m) => legal.includes(m));
    await page.keyboard.press(KEY_OF[first]);
    await page.waitForFunction(() => window.polisViewer.lastTick === 1 && window.polisViewer.tick === 1);
    const after1 = await cellOf(page, 0);
    assert.deepEqual([after1.x, after1.y], [start.x + DELTA[first][0], start.y + DELTA[first][1]],
        `${first} moved agent_0 from ${start.x},${start.y}`);
    assert.deepEqual(await page.evaluate(([x, y]) => window.polisViewer.pixel(x, y), [after1.px, after1.py]),
        rgb(after1.color), 'the map draws agent_0 at its new cell');

    // WASD: the move back (legal: the agent just came from there)
    const back = { move_north: 'move_south', move_south: 'move_north', move_west: 'move_east', move_east: 'move_west' }[first];
    await page.waitForFunction(() => window.polisViewer.play.turn.tick === 1);
    await page.keyboard.press(WASD_OF[back]);
    await page.waitForFunction(() => window.polisViewer.lastTick === 2 && window.polisViewer.tick === 2);
    const after2 = await cellOf(page, 0);
    assert.deepEqual([after2.x, after2.y], [start.x, start.y], `${back} (WASD) moved agent_0 back`);

    // the legal-action menu: noop
    await page.waitForFunction(() => window.polisViewer.play.turn.tick === 2);
    await page.selectOption('#legal', 'noop');
    await page.click('#doact');
    await page.waitForFunction(() => window.polisViewer.lastTick === 3);
    const after3 = await cellOf(page, 0);
    assert.deepEqual([after3.x, after3.y], [start.x, start.y], 'noop from the menu leaves agent_0 in place');

    // a bad action from the page gets the server's error on the page; nothing ticks
    await page.evaluate(() => window.polisViewer.play.act('fly'));
    await page.waitForFunction(() => window.polisViewer.play.error.startsWith('bad_action'));
    assert.match(await page.locator('#playmsg').innerText(), /bad_action/);
    assert.equal(await page.evaluate(() => window.polisViewer.lastTick), 3);
    assert.deepEqual(pageErrors, []);

    // leaving frees the seat: the other page is told and offers it
    await page.click('button[data-leave="1"]');
    await other.waitForSelector('button[data-take="agent_0"]', { timeout: 10000 });
    // the other page may hear of the free seat before this page reads its own reply
    await page.waitForFunction(() => window.polisViewer.play.seat === null, null, { timeout: 10000 });

    assert.equal(await stopped(server), 0);
    // the recording: the same actions, and it replays
    const lines = readFileSync(rec, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const steps = lines.filter((l) => l.t === 'step');
    const ids = lines[0].actions.map((a) => a.name);
    assert.deepEqual(steps.map((s) => ids[s.actions[0]]), [first, back, 'noop']);
    // the server was stopped mid-episode: it ended the recording there, and it replays
    assert.equal(lines[lines.length - 1].t, 'end');
    const r = spawnSync(POLIS, ['replay', rec, '--verify'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `replay: ${r.stdout}${r.stderr}`);
    await page.close();
    await other.close();
});

// Who sees whom (docs/visibility.md): a person in the learner's seat of the experts scenario
// (the experts are the scenario's scripted seats) sees the learner's view. Here the experts
// are hidden from the learner from tick 2: before, the page shows them; from tick 2 the turn
// names them hidden, and the map, the agents panel and the tick's actions leave them out,
// the view menu locked on the seat. A page without a seat still sees the whole world.
test('a seat whose agent may not see the experts shows its agent\'s view without them', async () => {
    const rules = JSON.stringify([{ observers: ['learner'], hidden: ['expert_0', 'expert_1', 'expert_2'], from: 2 }]);
    const [server, url, , seats] = await serveLive(path.join(SRC, 'rulesets/survival/survival_experts_solo.json'),
        '--seat', 'learner=human', '--seed', '3', '--set', `visibility=${rules}`);
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(seats.learner);
    await page.waitForFunction(() => window.polisViewer.status === 'live' && window.polisViewer.play
        && window.polisViewer.play.seats.length === 4);
    const players = await page.evaluate(() => window.polisViewer.play.seats.map((s) => s.player));
    assert.deepEqual(players, ['human', 'scripted', 'scripted', 'scripted'], 'the scenario seats the experts');
    await page.click('button[data-take="learner"]');
    await page.waitForFunction(() => window.polisViewer.play.turn && window.polisViewer.play.turn.tick === 0
        && window.polisViewer.seat === 0);
    const seen = () => page.evaluate(() => ({
        turn: window.polisViewer.play.turn.hidden, hidden: window.polisViewer.hidden(),
        drawn: window.polisViewer.agents().filter((a) => a.px !== null).map((a) => a.name).sort(),
        panel: document.querySelectorAll('#agents .agent').length,
        actions: document.querySelectorAll('#actions tr').length - 1,
        locked: document.getElementById('viewof').disabled, view: document.getElementById('viewof').value,
    }));
    let s = await seen();
    assert.deepEqual(s.turn, []);
    assert.deepEqual(s.hidden, []);
    assert.equal(s.panel, 4);
    assert.equal(s.locked, true);
    assert.equal(s.view, '0', 'the page shows the learner\'s view');
    for (const t of [1, 2]) {
        await page.selectOption('#legal', 'noop');
        await page.click('#doact');
        await page.waitForFunction((k) => window.polisViewer.play.turn.tick === k && window.polisViewer.tick === k, t);
    }
    s = await seen();
    assert.deepEqual(s.turn, ['expert_0', 'expert_1', 'expert_2'], 'the turn names the agents hidden from the seat');
    assert.deepEqual(s.hidden, [1, 2, 3]);
    assert.deepEqual(s.drawn.filter((n) => n !== 'learner'), [], `the map draws no expert: ${s.drawn}`);
    assert.equal(s.panel, 1, 'the agents panel shows the learner only');
    assert.equal(s.actions, 1, 'the tick\'s actions show the learner\'s only');
    // a page without a seat: the world, every agent
    const other = await browser.newPage();
    await other.goto(url);
    await other.waitForFunction(() => window.polisViewer.status === 'live' && window.polisViewer.tick >= 2);
    const o = await other.evaluate(() => ({ hidden: window.polisViewer.hidden(),
        panel: document.querySelectorAll('#agents .agent').length,
        locked: document.getElementById('viewof').disabled }));
    assert.deepEqual(o, { hidden: [], panel: 4, locked: false });
    // leaving the seat unlocks the view menu
    await page.click('button[data-leave="1"]');
    await page.waitForFunction(() => window.polisViewer.play.seat === null && !document.getElementById('viewof').disabled);
    assert.deepEqual(pageErrors, []);
    assert.equal(await stopped(server), 0);
    await page.close();
    await other.close();
});

// An agent-protocol client over --tcp (what an LLM agent runs): joins with "reset", then steps
// its agent with noop each time its last step was answered, until stopped.
function protocolClient(port) {
    const sock = net.connect(port, '127.0.0.1');
    const st = { replies: [], stopped: false, sock };
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
            const r = JSON.parse(buf.slice(0, nl));
            buf = buf.slice(nl + 1);
            st.replies.push(r);
            if (r.ok && !r.done && !st.stopped) sock.write(JSON.stringify({ op: 'step', actions: {} }) + '\n');
        }
    });
    sock.on('error', () => {});
    sock.write(JSON.stringify({ op: 'reset' }) + '\n');
    return st;
}

test('two people in two browsers and an agent-protocol client play one game; both people move their agents', async () => {
    const rec = path.join(tmp, 'two.jsonl');
    const [server, , tcp, seats] = await serveLive(path.join(SRC, 'rulesets/gather/gather.json'),
        '--seat', 'agent_0=human', '--seat', 'agent_1=human', '--seat', 'agent_2=client',
        '--tcp', '127.0.0.1:0', '--seed', '4', '--record', rec);
    const pages = [await browser.newPage(), await browser.newPage()];
    const pageErrors = [];
    for (const [k, pg] of pages.entries()) {
        pg.on('pageerror', (e) => pageErrors.push(String(e)));
        await pg.goto(seats[`agent_${k}`]); // each person's own seat link
        await pg.waitForFunction(() => window.polisViewer.status === 'live' && window.polisViewer.play
            && window.polisViewer.play.seats.length === 4);
    }
    // each page takes its own seat with its button; the other page's button goes
    await pages[0].click('button[data-take="agent_0"]');
    await pages[0].waitForFunction(() => window.polisViewer.play.seat === 'agent_0' && window.polisViewer.play.turn);
    await pages[1].waitForFunction(() => !window.polisViewer.play.seats[0].free);
    assert.equal(await pages[1].locator('button[data-take="agent_0"]').count(), 0);
    await pages[1].click('button[data-take="agent_1"]');
    await pages[1].waitForFunction(() => window.polisViewer.play.seat === 'agent_1' && window.polisViewer.play.turn);
    assert.match(await pages[0].locator('#seats').innerText(), /agent_2: client/);

    const client = protocolClient(tcp);
    const start = [await cellOf(pages[0], 0), await cellOf(pages[0], 1)];
    const moves = [];
    for (const k of [0, 1]) {
        const legal = await pages[k].evaluate(() => window.polisViewer.play.turn.legal.map((a) => a.name));
        moves.push(Object.keys(KEY_OF).find((m) => legal.includes(m)));
    }
    // the first person moves: the game waits for the second
    await pages[0].keyboard.press(KEY_OF[moves[0]]);
    await pages[0].waitForFunction(() => window.polisViewer.play.turn.acted);
    await pages[0].waitForTimeout(300);
    assert.equal(await pages[0].evaluate(() => window.polisViewer.lastTick), 0, 'no tick before both people act');
    // the second person moves (WASD): the tick comes, both agents moved in the engine
    await pages[1].keyboard.press(WASD_OF[moves[1]]);
    for (const pg of pages) await pg.waitForFunction(() => window.polisViewer.lastTick === 1 && window.polisViewer.tick === 1);
    for (const pg of pages) {
        for (const k of [0, 1]) {
            const c = await cellOf(pg, k);
            assert.deepEqual([c.x, c.y], [start[k].x + DELTA[moves[k]][0], start[k].y + DELTA[moves[k]][1]],
                `agent_${k} moved by ${moves[k]}, as both pages show`);
            assert.deepEqual(await pg.evaluate(([x, y]) => window.polisViewer.pixel(x, y), [c.px, c.py]), rgb(c.color));
        }
    }
    // the client's step was answered after that tick
    const deadline = Date.now() + 10000;
    while (!client.replies.some((r) => r.op === 'step') && Date.now() < deadline) await pages[0].waitForTimeout(50);
    const step = client.replies.find((r) => r.op === 'step');
    assert.ok(client.replies[0].ok && Object.keys(client.replies[0].agents).join() === 'agent_2', `the client joined: ${JSON.stringify(client.replies[0]).slice(0, 200)}`);
    assert.ok(step && step.ok && step.tick === 1, `the client's step is answered at tick 1: ${JSON.stringify(step).slice(0, 200)}`);
    client.stopped = true;
    client.sock.end();
    assert.deepEqual(pageErrors, []);

    assert.equal(await stopped(server), 0);
    const lines = readFileSync(rec, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines[0].policies, ['human', 'human', 'client', 'random']);
    const ids = lines[0].actions.map((a) => a.name);
    const s1 = lines.find((l) => l.t === 'step');
    assert.deepEqual([ids[s1.actions[0]], ids[s1.actions[1]], ids[s1.actions[2]]], [moves[0], moves[1], 'noop']);
    const r = spawnSync(POLIS, ['replay', rec, '--verify'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `replay: ${r.stdout}${r.stderr}`);
    for (const pg of pages) await pg.close();
});

test('a live page follows the game from episode to episode', async () => {
    const [server, url] = await serveLive(path.join(SRC, 'rulesets/gather/gather.json'),
        '--tick-ms', '30', '--set', 'max_steps=8', '--episodes', '4', '--seed', '7');
    await new Promise((r) => setTimeout(r, 600)); // the game is past its first episode
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForFunction(() => window.polisViewer.status === 'live' && window.polisViewer.play);
    const first = await page.evaluate(() => window.polisViewer.episode);
    assert.ok(first >= 1, `a page opened late starts at the newest episode (${first})`);
    // it moves on by itself to the last episode, and stays at its end
    await page.waitForFunction(() => window.polisViewer.episode === 3 && window.polisViewer.lastTick === 8
        && window.polisViewer.tick === 8, null, { timeout: 20000 });
    assert.match(await page.locator('#seats').innerText(), /agent_0: random/);
    assert.equal(await stopped(server), 0);
    await page.close();
});
