// recording.test.mjs — the viewer's reader (sdk/viewer/recording.js) under node, no browser:
// every tick of the fixture recordings rebuilt from keyframes and steps against the truth of
// make_fixture.py, in order and in random order; gzip; truncated files; and every kind of bad
// line, each named by its line number. Last, the reading and seeking speed on a long
// recording (printed; bounded loosely so a loaded machine does not fail it).
//
//   FIXTURES=DIR node --test recording.test.mjs      (run.sh writes DIR with make_fixture.py)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { readRecording, sceneAt } from '../../sdk/viewer/recording.js';

const FIX = process.env.FIXTURES;
const expected = JSON.parse(readFileSync(path.join(FIX, 'expected.json'), 'utf8'));
const bytes = (name) => readFileSync(path.join(FIX, name));
const read = (buf, name = 'x.jsonl') => readRecording(new Blob([buf]).stream(), name);
const lines = (name) => bytes(name).toString('utf8').split('\n').filter((l) => l !== '');
const join = (ls) => Buffer.from(ls.join('\n') + '\n');

function checkEpisode(rec, ep, truth, order) {
    let scene = null;
    for (const t of order) {
        scene = sceneAt(rec.header, ep, t, scene && scene.tick <= t ? scene : null);
        assert.equal(scene.tick, t);
        assert.deepEqual(scene.agents.map((a) => [a.x, a.y]), truth.positions[t], `tick ${t}: cells`);
        const edges = [...scene.edges.values()].map((e) => [e.from, e.to, e.kind, e.weight]).sort();
        assert.deepEqual(edges, truth.edges[t].slice().sort(), `tick ${t}: edges`);
        if (truth.things.length) {
            const things = [...scene.things.values()].map((o) => [o.id, o.kind, o.x, o.y, o.label]).sort((a, b) => a[0] - b[0]);
            assert.deepEqual(things, truth.things[t], `tick ${t}: things`);
        }
    }
}

function shuffled(n, seed) {
    const a = Array.from({ length: n }, (_, i) => i);
    let s = seed;
    for (let i = n - 1; i > 0; i--) {
        s = (s * 1103515245 + 12345) % 2147483648;
        const j = s % (i + 1);
        [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
}

test('every tick of every fixture episode, in order and shuffled', async () => {
    for (const [file, key] of [['society.jsonl', 'society'], ['society.jsonl.gz', 'society'], ['survival.jsonl', 'survival']]) {
        const rec = await read(bytes(file), file);
        assert.equal(rec.error, null, `${file}: ${rec.error}`);
        assert.equal(rec.truncated, null);
        const truth = expected[key];
        assert.equal(rec.episodes.length, truth.episodes.length);
        rec.episodes.forEach((ep, i) => {
            const tr = truth.episodes[i];
            assert.equal(ep.lastTick, tr.lastTick);
            checkEpisode(rec, ep, tr, Array.from({ length: tr.lastTick + 1 }, (_, t) => t));
            checkEpisode(rec, ep, tr, shuffled(tr.lastTick + 1, 17 + i));
        });
        // the events of episode 0, in order, with their ticks
        const events = rec.episodes[0].steps.flatMap((s) => (s.events || []).map((e) => ({ tick: s.tick, ...e })));
        assert.deepEqual(events, truth.episodes[0].events);
    }
});

test('the return curves follow the rewards and end at the end line', async () => {
    const rec = await read(bytes('society.jsonl'));
    const ep = rec.episodes[0];
    ep.returns.forEach((c, a) => {
        let sum = 0;
        for (const s of ep.steps) {
            sum += s.rewards[a];
            assert.ok(Math.abs(c[s.tick] - sum) < 1e-9);
        }
        assert.ok(Math.abs(c[ep.lastTick] - ep.end.returns[a]) < 1e-9);
    });
});

test('truncated files: marked, with the line, and what is there is kept', async () => {
    let rec = await read(bytes('truncated.jsonl'));
    assert.equal(rec.error, null);
    assert.deepEqual(rec.truncated, { line: 30, why: 'the last line is cut off' });
    assert.equal(rec.episodes[0].lastTick, expected.truncated.lastTick);
    rec = await read(bytes('truncated.jsonl.gz'), 'truncated.jsonl.gz');
    assert.equal(rec.error, null);
    assert.match(rec.truncated.why, /gzip stream ends early|cut off|no end line/);
    assert.ok(rec.episodes[0].lastTick > 0);
    // whole lines, but no end line
    const ls = lines('society.jsonl');
    rec = await read(join(ls.slice(0, 20)));
    assert.deepEqual(rec.truncated, { line: 20, why: 'episode 0 has no end line' });
    // a header alone
    rec = await read(join(ls.slice(0, 1)));
    assert.deepEqual(rec.truncated, { line: 1, why: 'no episode after the header' });
});

test('bad input: each error names its line', async () => {
    const ls = lines('society.jsonl');
    const obj = ls.map((l) => JSON.parse(l));
    const stepAt = (tick) => obj.findIndex((o) => o.t === 'step' && o.tick === tick);
    const edit = (i, f) => ls.map((l, j) => (j === i ? JSON.stringify(f(JSON.parse(l))) : l));
    const cases = [
        [['{"t":"reset","episode":0}'], 1, 'the first line is "reset", expected "header"'],
        [edit(0, (h) => ({ ...h, version: 2 })), 1, '"version" 2 is not one this viewer reads (1)'],
        [edit(0, (h) => ({ ...h, format: 'other' })), 1, '"format" is "other", expected "polis-recording"'],
        [edit(0, (h) => ({ ...h, map: { width: 'x' } })), 1, '"map" needs integer "width" and "height"'],
        [ls.filter((_, j) => j !== stepAt(4)), stepAt(4) + 1, 'step of tick 5, expected tick 4'],
        [edit(stepAt(6), (s) => ({ ...s, actions: [0] })), stepAt(6) + 1, 'step "actions" has 1 entries, the header names 4 agents'],
        [edit(stepAt(6), (s) => ({ ...s, agents: [[9, { x: 1 }]] })), stepAt(6) + 1, 'step agents[0] is not [agent_index, {changes}]'],
        [edit(stepAt(6), (s) => ({ ...s, tiles: [[0, 99, 0, 1]] })), stepAt(6) + 1, 'step tiles[0] is not [layer, x, y, kind] on the map'],
        [edit(2, (k) => ({ ...k, tiles: [[0, 5]] })), 3, 'tiles[0] covers 5 cells, the map has 108'],
        [edit(2, (k) => ({ ...k, tiles: [[42, 108]] })), 3, 'tiles[0][0]: kind 42 is not in the header\'s kinds'],
        [edit(2, (k) => ({ ...k, agents: [] })), 3, 'keyframe "agents" has 0 entries, the header names 4'],
        [edit(2, (k) => ({ ...k, tick: 3 })), 3, 'keyframe at tick 3, expected tick 0'],
        [[...ls.slice(0, 2), ...ls.slice(3)], 3, 'a step before the episode\'s first keyframe'],
        [[...ls.slice(0, 5), '', ...ls.slice(5)], 6, 'empty line'],
        [[...ls.slice(0, 5), '[1,2]', ...ls.slice(5)], 6, 'not a JSON object'],
        [[...ls.slice(0, 5), '{"x":1}', ...ls.slice(5)], 6, 'no "t" member (the line type)'],
        [[...ls.slice(0, 5), ls[0], ...ls.slice(5)], 6, 'a second header'],
        [[...ls.slice(0, 5), '{"t":"reset","episode":1}', ...ls.slice(5)], 6, 'reset before the end of episode 0'],
        [[ls[0], ls[2]], 2, 'a keyframe outside an episode'],
        [edit(obj.findIndex((o) => o.t === 'end'), (e) => ({ ...e, tick: 3 })), obj.findIndex((o) => o.t === 'end') + 1, 'end at tick 3, the last step is tick 45'],
    ];
    for (const [ls2, line, msg] of cases) {
        const rec = await read(join(ls2));
        assert.equal(rec.error, `line ${line}: ${msg}`, `expected line ${line}: ${msg}`);
        assert.equal(rec.errorLine, line);
    }
    const bad = await read(bytes('badline.jsonl'), 'badline.jsonl');
    assert.match(bad.error, /^line 7: not JSON \(/);
    assert.equal(bad.episodes[0].lastTick, 3, 'the steps before the bad line are kept');
    // not UTF-8
    const raw = Buffer.concat([Buffer.from(ls.slice(0, 3).join('\n') + '\n'), Buffer.from([0xff, 0xfe, 0x0a])]);
    assert.equal((await read(raw)).error, 'line 4: not UTF-8 text');
    assert.equal((await read(Buffer.alloc(0))).error, 'the file is empty');
    // gzip that is not gzip after its magic
    const fake = Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const r = await read(fake, 'fake.jsonl.gz');
    assert.ok(r.truncated || r.error, 'a damaged gzip stream is reported');
});

// Reading ends — with an error or a truncation for the banner — whatever the input. A gzip
// recording whose bad line comes early, with much more after it, used to leave the page waiting
// forever: the decompressor waited for room that the stopped reader never made.
test('a bad line in a long gzip recording ends the reading, naming the line', { timeout: 30000 }, async () => {
    const ls = lines('society.jsonl');
    const filler = JSON.stringify({ t: 'note', text: 'x'.repeat(4000) });
    const body = [ls[0], 'not json', ...Array(4000).fill(filler)];
    const rec = await read(gzipSync(join(body)), 'bad.jsonl.gz');
    assert.match(rec.error, /^line 2: not JSON/);
    // damage inside the gzip stream after a good start, with much more after it
    const gz = gzipSync(join([...ls, ...Array(4000).fill(filler)]));
    gz.fill(0x55, 2000, 2100);
    const r2 = await read(gz, 'damaged.jsonl.gz');
    assert.ok(r2.error || r2.truncated, 'a damaged gzip stream is reported');
});

test('what the reader allocates is bounded: huge maps and lines are refused at their line', { timeout: 60000 }, async () => {
    const ls = lines('society.jsonl');
    const h = JSON.parse(ls[0]);
    // a header of a few hundred bytes declaring a 20000 x 20000 map
    const big = { ...h, map: { ...h.map, width: 20000, height: 20000 } };
    let rec = await read(join([JSON.stringify(big), ...ls.slice(1)]));
    assert.match(rec.error, /^line 1: the map \(20000 x 20000, \d+ layers\) is over the viewer's limit of 16777216 cells/);
    // a keyframe whose runs claim more cells than the map has is refused as before
    // one line of 65 MiB in a small gzip file (a gzip bomb)
    const bomb = Buffer.alloc(65 * 1024 * 1024 + 10, 0x61);
    bomb[0] = 0x7b;
    rec = await read(gzipSync(Buffer.concat([Buffer.from(ls[0] + '\n'), bomb, Buffer.from('\n')])), 'bomb.jsonl.gz');
    assert.equal(rec.error, 'line 2: the line is longer than the limit of 64 MiB (a damaged file, or a gzip bomb)');
    // the same without a newline at all
    rec = await read(Buffer.concat([Buffer.from(ls[0] + '\n'), bomb]));
    assert.equal(rec.error, 'line 2: the line is longer than the limit of 64 MiB (a damaged file, or a gzip bomb)');
});

// `polis serve --http` sends a page that joins late the header, the episode's reset line and
// the stream from its latest keyframe: the episode starts at that keyframe's tick.
test('a live stream joined late starts its episode at its latest keyframe', async () => {
    const ls = lines('society.jsonl');
    const obj = ls.map((l) => JSON.parse(l));
    const keyAt = obj.findIndex((o, i) => i > 2 && o.t === 'key');
    assert.ok(keyAt > 0, 'the fixture has a keyframe past tick 0');
    const k = obj[keyAt].tick;
    const joined = [ls[0], ls[1], ...ls.slice(keyAt)];
    const rec = await readRecording(new Blob([join(joined)]).stream(), 'live', null, { join: true });
    assert.equal(rec.error, null, rec.error);
    const ep = rec.episodes[0];
    assert.equal(ep.firstTick, k);
    const truth = expected.society.episodes[0];
    assert.equal(ep.lastTick, truth.lastTick);
    checkEpisode(rec, ep, truth, Array.from({ length: truth.lastTick - k + 1 }, (_, t) => k + t));
    // a file is not a late join: its first keyframe must be at tick 0
    const file = await read(join(joined));
    assert.equal(file.error, `line 3: keyframe at tick ${k}, expected tick 0`);
});

test('unknown members and line types are ignored; CRLF lines read', async () => {
    const ls = lines('society.jsonl').map((l, i) => {
        const o = JSON.parse(l);
        o.future_member = { i };
        return JSON.stringify(o);
    });
    ls.splice(4, 0, '{"t":"annotation","text":"added by a later writer"}');
    const rec = await read(Buffer.from(ls.join('\r\n') + '\r\n'));
    assert.equal(rec.error, null);
    assert.equal(rec.truncated, null);
    checkEpisode(rec, rec.episodes[0], expected.society.episodes[0], [0, 45, 17]);
    const gz = await read(gzipSync(join(lines('society.jsonl'))), 'no-suffix');
    assert.equal(gz.error, null, 'gzip is recognised by its magic bytes, not its name');
    assert.equal(gz.episodes.length, 2);
});

test('speed: a long recording reads and seeks quickly', async () => {
    // 32 agents on 64x64, 5000 ticks, a keyframe every 100: what a long run records
    const W = 64, H = 64, NA = 32, T = 5000, K = 100;
    const hdr = { t: 'header', format: 'polis-recording', version: 1, seed: 1, keyframe_every: K,
                  agents: Array.from({ length: NA }, (_, i) => `agent_${i}`), actions: [{ name: 'noop' }],
                  map: { width: W, height: H, layers: ['terrain'] }, kinds: [{ name: 'grass', color: '#00ff00' }],
                  stats: [{ name: 'hp', group: 'vitals', max: 9 }], view: null };
    const pos = Array.from({ length: NA }, (_, i) => [i, i]);
    const key = (tick) => JSON.stringify({ t: 'key', tick, hash: '0', tiles: [[0, W * H]], things: [],
                                           agents: pos.map(([x, y]) => ({ x, y, facing: 1, alive: 1, stats: [9], return: 0 })),
                                           nodes: [], edges: [] });
    const out = [JSON.stringify(hdr), '{"t":"reset","episode":0,"seed":1}', key(0)];
    for (let t = 1; t <= T; t++) {
        const ch = [];
        for (let a = 0; a < NA; a++) {
            pos[a][0] = (pos[a][0] + 1) % W;
            ch.push([a, { x: pos[a][0] }]);
        }
        out.push(JSON.stringify({ t: 'step', tick: t, actions: new Array(NA).fill(0), rewards: new Array(NA).fill(0.01),
                                  agents: ch, events: [{ type: 'tick', agent: t % NA }] }));
        if (t % K === 0) out.push(key(t));
    }
    out.push(JSON.stringify({ t: 'end', tick: T, returns: new Array(NA).fill(T * 0.01), hash: '0' }));
    const buf = join(out);
    let t0 = performance.now();
    const rec = await read(buf);
    const readMs = performance.now() - t0;
    assert.equal(rec.error, null);
    assert.equal(rec.episodes[0].lastTick, T);
    const ep = rec.episodes[0];
    t0 = performance.now();
    const seeks = shuffled(T + 1, 5).slice(0, 500);
    for (const t of seeks) {
        const s = sceneAt(rec.header, ep, t, null);
        assert.equal(s.agents[0].x, t % W);
    }
    const seekMs = (performance.now() - t0) / seeks.length;
    console.log(`# ${(buf.length / 1e6).toFixed(1)} MB, ${out.length} lines: read in ${readMs.toFixed(0)} ms, ` +
                `a random seek in ${seekMs.toFixed(2)} ms`);
    assert.ok(seekMs < 100, `a seek took ${seekMs} ms`);
});
