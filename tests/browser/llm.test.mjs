// llm.test.mjs — the viewer's LLM panel on a recording of polis.llm's generative agents
// (make_llm_fixture.py, played against the mock model): per-agent calls, errors, tokens and
// costs up to the current tick, the selected agent's plan, its reflections and its calls
// with prompt and answer; hidden for a recording without LLM messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const POLIS = process.env.POLIS;
const FIX = process.env.FIXTURES;
const want = JSON.parse(readFileSync(path.join(FIX, 'expected_llm.json'), 'utf8'));
let browser;
let profile;
const servers = [];

before(async () => {
    profile = mkdtempSync(path.join(tmpdir(), 'polis-llm-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
        viewport: { width: 1500, height: 950 },
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
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
        let out = '';
        const timer = setTimeout(() => reject(new Error(`polis view ${file}: no URL`)), 20000);
        p.stdout.on('data', (d) => {
            out += d;
            const nl = out.indexOf('\n');
            if (nl >= 0) { clearTimeout(timer); resolve(out.slice(0, nl)); }
        });
        p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`polis view exited ${code}`)); });
    });
}

async function open(file) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(await serve(file));
    await page.waitForFunction(() => window.polisViewer && window.polisViewer.status === 'ok', null, { timeout: 20000 });
    page.errors = errors;
    return page;
}

function checkRows(rows, truth, where) {
    const byName = new Map(rows.map((r) => [r[0], r]));
    let calls = 0;
    let cost = 0;
    for (const [name, t] of Object.entries(truth)) {
        if (!t.calls && !t.errors) { assert.ok(!byName.has(name), `${where}: ${name} has no row`); continue; }
        const r = byName.get(name);
        assert.ok(r, `${where}: a row for ${name}`);
        assert.equal(Number(r[1]), t.calls, `${where}: ${name}'s calls`);
        assert.equal(Number(r[3]), t.errors, `${where}: ${name}'s errors`);
        assert.equal(Number(r[4]), t.prompt, `${where}: ${name}'s prompt tokens`);
        assert.equal(Number(r[5]), t.completion, `${where}: ${name}'s completion tokens`);
        assert.equal(r[7], `$${t.cost.toFixed(4)}`, `${where}: ${name}'s cost`);
        calls += t.calls;
        cost += t.cost;
    }
    const total = byName.get('total');
    assert.equal(Number(total[1]), calls, `${where}: total calls`);
    assert.equal(total[7], `$${cost.toFixed(4)}`, `${where}: total cost`);
    return cost;
}

test('the LLM panel adds up calls, tokens and costs to the tick shown', async () => {
    const page = await open(path.join(FIX, want.file));
    assert.equal(await page.evaluate(() => polisViewer.llmShown), true);
    await page.evaluate((t) => polisViewer.seek(t), want.last);
    const cost = checkRows(await page.evaluate(() => polisViewer.llmRows()), want.at_last, 'last tick');
    assert.ok(Math.abs(cost - want.results_cost) < 1e-9, 'the panel\'s total is the results file\'s');
    await page.evaluate(() => polisViewer.seek(1));
    checkRows(await page.evaluate(() => polisViewer.llmRows()), want.at_1, 'tick 1');
    // the selected agent: its plan, a re-asked call with its error, prompt and answer
    await page.evaluate((t) => polisViewer.seek(t), want.last);
    await page.evaluate(() => polisViewer.select(0));
    assert.equal(await page.textContent('#llmplan'), want.at_last[want.agents[0]].plan);
    const log = await page.textContent('#llmlog');
    assert.match(log, /act/);
    assert.match(log, /re-ask 1/);
    assert.match(log, /the answer has no JSON object/);
    const prompt = await page.evaluate(() => document.querySelector('#llmlog pre.llmtext').textContent);
    assert.match(prompt, /You have this information about an agent called Laura/);
    // its last memory (a perception record, the study's listing 1)
    const memory = await page.textContent('#llmmemory');
    assert.match(memory, /\S/);
    assert.notEqual(memory.trim(), '—', 'the selected agent has a memory');
    // the agent with the most reflections: the last three are listed
    const r = want.reflecting;
    const nrefl = want.at_last[want.agents[r]].reflections;
    assert.ok(nrefl >= 1, 'the fixture has a reflection');
    await page.evaluate((i) => polisViewer.select(i), r);
    assert.equal((await page.$$('#llmreflections li')).length, Math.min(nrefl, 3), 'reflections listed');
    // another agent
    await page.click('#agents .agent[data-i="1"]');
    assert.match(await page.textContent('#llmagent'), new RegExp(want.agents[1]));
    // the tick's table shows one line per message, not the JSON
    const msgs = await page.textContent('#actions');
    assert.doesNotMatch(msgs, /"prompt":/);
    assert.deepEqual(page.errors, []);
});

test('an LLM seat of polis eval: the panel shows the figures of its end line', async () => {
    const page = await open(path.join(FIX, want.seat.file));
    assert.equal(await page.evaluate(() => polisViewer.llmShown), true);
    const rep = want.seat.reported;
    assert.ok(rep['llm.calls'] > 0, 'the seat made calls');
    for (const t of [1, await page.evaluate(() => polisViewer.lastTick)]) {
        await page.evaluate((x) => polisViewer.seek(x), t);
        const rows = await page.evaluate(() => polisViewer.llmRows());
        assert.deepEqual(rows.map((r) => r[0]), [want.seat.agent, 'total'], 'one row for the LLM seat, one total');
        for (const [r, sfx] of [[rows[0], `.${want.seat.agent}`], [rows[1], '']]) {
            assert.equal(Number(r[1]), rep[`llm.calls${sfx}`]);
            assert.equal(Number(r[4]), rep[`llm.prompt_tokens${sfx}`]);
            assert.equal(Number(r[5]), rep[`llm.completion_tokens${sfx}`]);
            assert.equal(r[7], `$${rep[`llm.cost${sfx}`].toFixed(4)}`);
        }
    }
    assert.match(await page.textContent('#llmreported'), /end line/);
    assert.deepEqual(page.errors, []);
});

test('a recording without LLM messages has no LLM panel', async () => {
    const page = await open(path.join(FIX, 'plain.jsonl'));
    assert.equal(await page.evaluate(() => polisViewer.llmShown), false);
    assert.deepEqual(page.errors, []);
});
