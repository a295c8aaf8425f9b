// screenshots.mjs — PNG screenshots of the viewer for the docs (docs/img/viewer-*.png). Not run
// by CTest: run it by hand after changing the viewer, look at the pictures, commit them.
//
//   node tests/browser/screenshots.mjs POLIS --docs [OUTDIR]
//       records the games of docs/viewer.md with `polis run ... --record` (the commands are in
//       DOCS below and in the captions), writes the fixtures with make_fixture.py, and takes
//       every screenshot of the page into OUTDIR (default: docs/img of this source tree).
//   node tests/browser/screenshots.mjs POLIS OUTDIR RECORDING:NAME[:TICK[:AGENT]]...
//       serves each RECORDING with `polis view`, seeks to TICK (default: the middle), shows
//       AGENT's own view when given, and writes OUTDIR/NAME.png.
//
// Debian's chromium headless (playwright-core, `npm ci` in tests/browser), 1440 x 900 pixels.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The screenshots in docs/viewer.md: [file, polis run arguments (null: a fixture), [name, tick, agent]...]
const DOCS = [
    ['exploration.jsonl.gz', ['rulesets/exploration/exploration.json', '--policy', 'greedy', '--steps', '120'],
     [['viewer-exploration', 60]]],
    ['commons.jsonl.gz', ['rulesets/commons/commons_open.json', '--policy', 'commons_free', '--steps', '200'],
     [['viewer-commons', 12]]],
    ['survival.jsonl.gz', ['rulesets/survival/survival_mac.json', '--policy', 'scripted', '--steps', '300'],
     [['viewer-survival', 200], ['viewer-survival-agent-view', 200, 1]]],
    ['dynamic.jsonl.gz', ['rulesets/social_structure/dynamic.json', '--policy', 'greedy', '--steps', '150'],
     [['viewer-social-dynamic', 100]]],
    ['gather.jsonl.gz', ['rulesets/gather/gather.json', '--steps', '60'],
     [['viewer-gather-agent-view', 30, 1]]],
    ['truncated.jsonl', null, [['viewer-truncated-fixture', null]]],
];

const args = process.argv.slice(2);
const POLIS = args[0] && path.resolve(args[0]);
let OUT;
const shots = [];   // [file, name, tick|null, agent|undefined]
let work = null;
if (args[1] === '--docs') {
    OUT = path.resolve(args[2] || path.join(SRC, 'docs', 'img'));
    work = mkdtempSync(path.join(tmpdir(), 'polis-shots-'));
    const fx = spawnSync('/usr/bin/python3', [path.join(SRC, 'tests', 'browser', 'make_fixture.py'), work], { encoding: 'utf8' });
    if (fx.status !== 0) throw new Error(`make_fixture.py: ${fx.stderr}`);
    for (const [file, run, list] of DOCS) {
        const rec = path.join(work, file);
        if (run) {
            const r = spawnSync(POLIS, ['run', ...run, '--record', rec, '--quiet'], { cwd: SRC, encoding: 'utf8' });
            if (r.status !== 0) throw new Error(`polis run ${run.join(' ')}: ${r.stderr}`);
            console.log(`recorded: polis run ${run.join(' ')} --record ${file}`);
        }
        for (const [name, tick, agent] of list) shots.push([rec, name, tick, agent]);
    }
} else if (POLIS && args[1] && args.length > 2) {
    OUT = args[1];
    for (const spec of args.slice(2)) {
        const [file, name, tick, agent] = spec.split(':');
        shots.push([file, name, tick === undefined || tick === '' ? null : Number(tick), agent === undefined ? undefined : Number(agent)]);
    }
} else {
    console.error('usage: node screenshots.mjs POLIS --docs [OUTDIR]\n' +
                  '       node screenshots.mjs POLIS OUTDIR RECORDING:NAME[:TICK[:AGENT]]...');
    process.exit(2);
}

function serve(file) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['view', file, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
        let out = '';
        p.stdout.on('data', (d) => {
            out += d;
            if (out.includes('\n')) resolve({ p, url: out.split('\n')[0] });
        });
        p.on('exit', (code) => reject(new Error(`polis view ${file} exited ${code}`)));
    });
}

const profile = mkdtempSync(path.join(tmpdir(), 'polis-shots-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
    for (const [file, name, tick, agent] of shots) {
        const { p, url } = await serve(file);
        const page = await ctx.newPage();
        await page.goto(url);
        await page.waitForFunction(() => window.polisViewer && ['ok', 'truncated', 'error'].includes(polisViewer.status));
        await page.evaluate((x) => polisViewer.seek(x === null ? Math.floor(polisViewer.lastTick / 2) : x), tick);
        if (agent !== undefined) await page.selectOption('#viewof', String(agent));
        const out = path.join(OUT, `${name}.png`);
        await page.screenshot({ path: out });
        console.log(`${out}: ${path.basename(file)} at tick ${await page.evaluate(() => polisViewer.tick)}` +
                    (agent !== undefined ? `, agent ${agent}'s view` : ''));
        await page.close();
        p.kill('SIGTERM');
    }
} finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
}
