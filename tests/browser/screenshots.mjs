// screenshots.mjs — PNG screenshots of the viewer for the docs (docs/img/viewer-*.png).
//
//   node screenshots.mjs POLIS OUTDIR RECORDING:NAME[:TICK[:AGENT]]...
//
// Serves each RECORDING with `polis view`, opens it in Debian's chromium (headless), seeks to
// TICK (default: the middle), shows AGENT's own view when given, and writes OUTDIR/NAME.png.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [POLIS, OUT, ...shots] = process.argv.slice(2);
if (!POLIS || !OUT || shots.length === 0) {
    console.error('usage: node screenshots.mjs POLIS OUTDIR RECORDING:NAME[:TICK[:AGENT]]...');
    process.exit(2);
}

function serve(file) {
    return new Promise((resolve, reject) => {
        const p = spawn(POLIS, ['view', file, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => {
            out += d;
            if (out.includes('\n')) resolve({ p, url: out.split('\n')[0] });
        });
        p.on('exit', (code) => reject(new Error(`polis view ${file} exited ${code}`)));
    });
}

const profile = mkdtempSync(path.join(tmpdir(), 'polis-shots-'));
const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
    for (const spec of shots) {
        const [file, name, tick, agent] = spec.split(':');
        const { p, url } = await serve(file);
        const page = await ctx.newPage();
        await page.goto(url);
        await page.waitForFunction(() => window.polisViewer && ['ok', 'truncated', 'error'].includes(polisViewer.status));
        const t = tick === undefined || tick === '' ? null : Number(tick);
        await page.evaluate((x) => polisViewer.seek(x === null ? Math.floor(polisViewer.lastTick / 2) : x), t);
        if (agent !== undefined) await page.evaluate((a) => polisViewer.view(a), Number(agent));
        const out = path.join(OUT, `${name}.png`);
        await page.screenshot({ path: out });
        console.log(`${out}: ${file} at tick ${await page.evaluate(() => polisViewer.tick)}`);
        await page.close();
        p.kill('SIGTERM');
    }
} finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
}
