// recording.js — reading a polis recording (docs/recording.md) and rebuilding the scene at any
// tick. No DOM here: the viewer (viewer.js) and the tests use it alike.
//
// A recording is JSON Lines: a header, then per episode a reset, a keyframe at tick 0, one step
// line per tick (a keyframe after every keyframe_every-th step) and an end line. The reader
// keeps every line of every episode; the scene at tick T is the nearest keyframe at or before T
// with the steps after it applied, so scrubbing costs at most keyframe_every steps. A page that
// joins a live game late (`polis serve --http`) gets the episode from its latest keyframe: that
// episode starts at the keyframe's tick (ep.firstTick), not at 0.
//
// Whatever the input, reading ends — with the recording, or with .error or .truncated for the
// banner — and what it allocates is bounded: a line of at most MAX_LINE bytes, a map of at most
// MAX_CELLS cells in all its layers together.

export class RecordingError extends Error {
    constructor(line, message) {
        super(line ? `line ${line}: ${message}` : message);
        this.line = line;
    }
}

export const MAX_LINE = 64 * 1024 * 1024;
export const MAX_CELLS = 1 << 24;

// Whether an episode has the keyframe it starts from (tick 0, or a late join's first).
export const started = (ep) => ep.keys.has(ep.firstTick);

const FACINGS = ['none', 'up', 'right', 'down', 'left'];
export function facingName(f) { return FACINGS[f] || 'none'; }

// Is the byte stream gzip (magic 1f 8b) or is the name a .gz one?
function isGzip(name, firstBytes) {
    if (firstBytes && firstBytes.length >= 2) return firstBytes[0] === 0x1f && firstBytes[1] === 0x8b;
    return /\.gz$/i.test(name || '');
}

// Reads a whole recording from a ReadableStream of bytes (a File's or a fetch Response's body),
// gunzipping when it is gzip. Returns a Recording; a line that is not JSON or not in place
// stops the reading with .error set (the lines before it are kept); a file that ends inside an
// episode (no end line) or inside a gzip member is marked .truncated. onProgress(bytes, lines,
// rec) is called after every chunk: a page following a live stream shows rec as it grows
// (rec.refresh() brings its return curves up to date). With opts.join an episode may start at
// a keyframe past tick 0 (a live stream joined late); a file may not.
export async function readRecording(byteStream, name, onProgress, opts) {
    const reader = byteStream.getReader();
    // Peek the first chunk to tell gzip from plain text.
    let first = await reader.read();
    const chunks = (async function* () {
        if (!first.done) yield first.value;
        for (;;) {
            const r = await reader.read();
            if (r.done) return;
            yield r.value;
        }
    })();
    const gz = isGzip(name, first.done ? null : first.value);
    let bytes = chunks;
    if (gz) bytes = gunzip(chunks);
    const rec = new Recording(name);
    rec.join = !!(opts && opts.join);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const decode = (u8, n) => {
        try {
            return decoder.decode(u8);
        } catch (e) {
            throw new RecordingError(n, 'not UTF-8 text');
        }
    };
    let pending = [];   // the pieces of a line that spans chunks
    let pendingBytes = 0;
    let lineNo = 0;
    let total = 0;
    const tooLong = () => new RecordingError(lineNo + 1,
        `the line is longer than the limit of ${MAX_LINE / 1048576} MiB (a damaged file, or a gzip bomb)`);
    try {
        for await (const chunk of bytes) {
            total += chunk.length;
            let start = 0;
            for (;;) {
                const nl = chunk.indexOf(10, start);
                if (nl < 0) break;
                let piece = chunk.subarray(start, nl);
                if (pendingBytes + piece.length > MAX_LINE) throw tooLong();
                if (pending.length) {
                    pending.push(piece);
                    piece = concat(pending);
                    pending = [];
                    pendingBytes = 0;
                }
                lineNo++;
                rec.addLine(decode(piece, lineNo), lineNo);
                start = nl + 1;
            }
            if (start < chunk.length) {
                pendingBytes += chunk.length - start;
                if (pendingBytes > MAX_LINE) throw tooLong();
                pending.push(chunk.slice(start));
            }
            if (onProgress) onProgress(total, lineNo, rec);
        }
        if (pending.length) {
            // A last line without its newline: the writer stopped in the middle of it.
            lineNo++;
            const text = decode(concat(pending), lineNo);
            let whole = true;
            try {
                JSON.parse(text);
            } catch (e) {
                whole = false;
            }
            if (!whole) {
                rec.lineCount = lineNo;
                rec.markTruncated(lineNo, 'the last line is cut off');
                rec.finish();
                return rec;
            }
            rec.addLine(text, lineNo);
        }
    } catch (e) {
        rec.lineCount = lineNo;
        // stop the source too: nothing more is read (a stream left waiting would never end)
        try { await reader.cancel(); } catch (_) { /* already closed */ }
        if (e instanceof RecordingError) {
            rec.error = e.message;
            rec.errorLine = e.line;
        } else if (e instanceof GzipError) {
            // The gzip stream stops early or is damaged: what came before it is kept.
            rec.markTruncated(lineNo + 1, `the gzip stream ends early or is damaged (${e.message})`);
        } else {
            rec.error = `line ${lineNo + 1}: ${e && e.message ? e.message : e}`;
            rec.errorLine = lineNo + 1;
        }
        rec.finish();
        return rec;
    }
    rec.lineCount = lineNo;
    rec.finish();
    return rec;
}

function concat(parts) {
    let n = 0;
    for (const p of parts) n += p.length;
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of parts) {
        out.set(p, o);
        o += p.length;
    }
    return out;
}

class GzipError extends Error {}

async function* gunzip(chunks) {
    const ds = new DecompressionStream('gzip');
    const writer = ds.writable.getWriter();
    const pump = (async () => {
        try {
            for await (const c of chunks) await writer.write(c);
            await writer.close();
        } catch (e) {
            try { await writer.abort(e); } catch (_) { /* already errored */ }
        }
    })();
    const r = ds.readable.getReader();
    try {
        for (;;) {
            let got;
            try {
                got = await r.read();
            } catch (e) {
                throw new GzipError(e && e.message ? e.message : String(e));
            }
            if (got.done) break;
            yield got.value;
        }
    } finally {
        // The reader may stop early (a bad line): cancelling the output makes the pump's
        // pending write fail, so the pump ends instead of waiting forever for room.
        try { await r.cancel(); } catch (_) { /* already closed */ }
        await pump;
    }
}

function need(cond, line, msg) {
    if (!cond) throw new RecordingError(line, msg);
}
const isInt = Number.isInteger;

export class Recording {
    constructor(name) {
        this.name = name || 'recording';
        this.header = null;
        this.episodes = [];   // {index, seed, keys: Map tick->key, steps: [] (steps[t-1] = tick t), end, lastTick, line}
        this.truncated = null; // {line, why}
        this.error = null;
        this.errorLine = 0;
        this.lineCount = 0;
        this.join = false;    // an episode may start at a keyframe past tick 0 (readRecording)
    }

    markTruncated(line, why) { this.truncated = { line, why }; }

    addLine(text, n) {
        if (text.trim() === '') throw new RecordingError(n, 'empty line');
        let o;
        try {
            o = JSON.parse(text);
        } catch (e) {
            throw new RecordingError(n, `not JSON (${e.message})`);
        }
        need(o && typeof o === 'object' && !Array.isArray(o), n, 'not a JSON object');
        need(typeof o.t === 'string', n, 'no "t" member (the line type)');
        if (n === 1) {
            need(o.t === 'header', n, `the first line is "${o.t}", expected "header"`);
            this.setHeader(o, n);
            return;
        }
        const ep = this.episodes[this.episodes.length - 1];
        switch (o.t) {
        case 'header':
            throw new RecordingError(n, 'a second header');
        case 'reset':
            need(!ep || ep.end, n, `reset before the end of episode ${ep ? ep.index : 0}`);
            // index: its place in this.episodes; number: the episode's own (a live stream
            // joined late starts at the episode in play)
            this.episodes.push({ index: this.episodes.length,
                                 number: isInt(o.episode) ? o.episode : this.episodes.length,
                                 seed: o.seed, keys: new Map(),
                                 keyTicks: [], steps: [], end: null, firstTick: 0, lastTick: 0, line: n,
                                 visibility: Array.isArray(o.visibility) ? o.visibility : [] });
            return;
        case 'key':
            need(ep && !ep.end, n, 'a keyframe outside an episode');
            this.checkKey(o, n);
            if (this.join && ep.keys.size === 0 && o.tick > 0) {
                // a late join: the episode is shown from this keyframe on
                ep.firstTick = o.tick;
                ep.lastTick = o.tick;
            }
            need(o.tick === ep.lastTick, n,
                 `keyframe at tick ${o.tick}, expected tick ${ep.lastTick}`);
            ep.keys.set(o.tick, o);
            ep.keyTicks.push(o.tick);
            return;
        case 'step':
            need(ep && !ep.end, n, 'a step outside an episode');
            need(started(ep), n, 'a step before the episode\'s first keyframe');
            need(isInt(o.tick) && o.tick === ep.lastTick + 1, n,
                 `step of tick ${o.tick}, expected tick ${ep.lastTick + 1}`);
            this.checkStep(o, n);
            o.line = n;
            ep.steps.push(o);
            ep.lastTick = o.tick;
            return;
        case 'end':
            need(ep && !ep.end, n, 'an end line outside an episode');
            need(o.tick === ep.lastTick, n, `end at tick ${o.tick}, the last step is tick ${ep.lastTick}`);
            ep.end = o;
            return;
        default:
            // Unknown line types are later additions to the format: kept out of the scene.
            return;
        }
    }

    setHeader(h, n) {
        need(h.format === 'polis-recording', n, `"format" is ${JSON.stringify(h.format)}, expected "polis-recording"`);
        need(h.version === 1, n, `"version" ${JSON.stringify(h.version)} is not one this viewer reads (1)`);
        need(Array.isArray(h.agents), n, '"agents" is not an array');
        need(h.map && isInt(h.map.width) && isInt(h.map.height) && h.map.width >= 0 && h.map.height >= 0,
             n, '"map" needs integer "width" and "height"');
        need(Array.isArray(h.kinds), n, '"kinds" is not an array');
        h.map.layers = Array.isArray(h.map.layers) ? h.map.layers : [];
        const cells = h.map.width * h.map.height * Math.max(1, h.map.layers.length);
        need(cells <= MAX_CELLS, n, `the map (${h.map.width} x ${h.map.height}, ${h.map.layers.length} layers) `
             + `is over the viewer's limit of ${MAX_CELLS} cells`);
        h.actions = Array.isArray(h.actions) ? h.actions : [];
        h.stats = Array.isArray(h.stats) ? h.stats : [];
        this.header = h;
    }

    checkKey(k, n) {
        const h = this.header;
        need(isInt(k.tick), n, 'keyframe "tick" is not an integer');
        need(Array.isArray(k.agents) && k.agents.length === h.agents.length, n,
             `keyframe "agents" has ${Array.isArray(k.agents) ? k.agents.length : 'no'} entries, the header names ${h.agents.length}`);
        if (k.tiles !== undefined) {
            need(Array.isArray(k.tiles), n, 'keyframe "tiles" is not an array');
            const cells = h.map.width * h.map.height;
            k.tiles.forEach((runs, li) => {
                need(Array.isArray(runs) && runs.length % 2 === 0, n, `tiles[${li}] is not a list of (kind, run) pairs`);
                let sum = 0;
                for (let i = 0; i < runs.length; i += 2) {
                    need(isInt(runs[i]) && runs[i] >= -1 && runs[i] < h.kinds.length, n,
                         `tiles[${li}][${i}]: kind ${JSON.stringify(runs[i])} is not in the header's kinds`);
                    need(isInt(runs[i + 1]) && runs[i + 1] >= 0, n, `tiles[${li}][${i + 1}]: bad run length`);
                    sum += runs[i + 1];
                }
                need(sum === cells, n, `tiles[${li}] covers ${sum} cells, the map has ${cells}`);
            });
        }
    }

    checkStep(s, n) {
        const na = this.header.agents.length;
        for (const m of ['actions', 'rewards']) {
            need(Array.isArray(s[m]) && s[m].length === na, n,
                 `step "${m}" has ${Array.isArray(s[m]) ? s[m].length : 'no'} entries, the header names ${na} agents`);
        }
        if (s.agents !== undefined) {
            need(Array.isArray(s.agents), n, 'step "agents" is not an array');
            s.agents.forEach((e, i) => need(Array.isArray(e) && isInt(e[0]) && e[0] >= 0 && e[0] < na &&
                                                e[1] && typeof e[1] === 'object', n,
                                            `step agents[${i}] is not [agent_index, {changes}]`));
        }
        if (s.tiles !== undefined) {
            const h = this.header;
            need(Array.isArray(s.tiles), n, 'step "tiles" is not an array');
            s.tiles.forEach((c, i) => need(Array.isArray(c) && c.length === 4 && isInt(c[0]) &&
                                               c[0] >= 0 && c[0] < h.map.layers.length &&
                                               c[1] >= 0 && c[1] < h.map.width && c[2] >= 0 && c[2] < h.map.height,
                                           n, `step tiles[${i}] is not [layer, x, y, kind] on the map`));
        }
    }

    finish() {
        if (!this.header && !this.error) {
            this.error = this.lineCount === 0 ? 'the file is empty' : 'no header';
        }
        const last = this.episodes[this.episodes.length - 1];
        if (!this.truncated && !this.error && last && !last.end) {
            this.markTruncated(this.lineCount, `episode ${last.index} has no end line`);
        }
        if (!this.truncated && !this.error && this.header && this.episodes.length === 0) {
            this.markTruncated(this.lineCount, 'no episode after the header');
        }
        this.refresh();
    }

    // The return curves of every episode, for the lines read so far.
    refresh() {
        for (const ep of this.episodes) {
            if (!started(ep)) continue;
            if (!ep.returns || ep.returns[0] === undefined || ep.returns[0].length !== ep.lastTick + 1 || !ep.end) {
                ep.returns = returnCurves(this.header, ep);
            }
        }
    }
}

// Cumulative returns per agent after each tick: curves[a][t], t = 0..lastTick.
function returnCurves(h, ep) {
    const na = h.agents.length;
    const curves = [];
    const k0 = ep.keys.get(ep.firstTick);
    for (let a = 0; a < na; a++) {
        const c = new Float64Array(ep.lastTick + 1);
        c[ep.firstTick] = k0 && k0.agents[a] && typeof k0.agents[a].return === 'number' ? k0.agents[a].return : 0;
        curves.push(c);
    }
    for (const s of ep.steps) {
        const key = ep.keys.get(s.tick);
        for (let a = 0; a < na; a++) {
            const r = Number(s.rewards[a]) || 0;
            let v = curves[a][s.tick - 1] + r;
            if (key && key.agents[a] && typeof key.agents[a].return === 'number') v = key.agents[a].return;
            curves[a][s.tick] = v;
        }
    }
    return curves;
}

export function edgeKey(from, to, kind) { return `${from}\u0000${to}\u0000${kind}`; }

// The scene at one tick of one episode.
export class Scene {
    constructor(header) {
        this.header = header;
        this.tick = -1;
        const cells = header.map.width * header.map.height;
        this.tiles = header.map.layers.map(() => new Int32Array(cells).fill(-1));
        this.things = new Map();
        this.agents = header.agents.map(() => ({ x: -1, y: -1, facing: 0, alive: 1, stats: [], return: 0 }));
        this.nodes = new Map();
        this.edges = new Map();
        this.step = null;     // the step line of this tick (null at tick 0)
    }

    loadKey(k) {
        this.tick = k.tick;
        (k.tiles || []).forEach((runs, li) => {
            if (li >= this.tiles.length) return;
            const layer = this.tiles[li];
            let p = 0;
            for (let i = 0; i < runs.length; i += 2) {
                layer.fill(runs[i], p, p + runs[i + 1]);
                p += runs[i + 1];
            }
        });
        this.things = new Map();
        for (const t of k.things || []) this.things.set(t[0], { id: t[0], kind: t[1], x: t[2], y: t[3], label: t[4] || '' });
        this.agents = k.agents.map((a) => ({
            x: a.x ?? -1, y: a.y ?? -1, facing: a.facing ?? 0, alive: a.alive ?? 1,
            stats: Array.isArray(a.stats) ? a.stats.slice() : [], return: a.return ?? 0,
        }));
        this.nodes = new Map();
        for (const nd of k.nodes || []) this.nodes.set(nd[0], { id: nd[0], kind: nd[1], label: nd[2] ?? nd[0] });
        this.edges = new Map();
        for (const e of k.edges || []) this.edges.set(edgeKey(e[0], e[1], e[2]), { from: e[0], to: e[1], kind: e[2], weight: e[3] ?? 1 });
        this.step = null;
    }

    applyStep(s) {
        const w = this.header.map.width;
        for (const [layer, x, y, kind] of s.tiles || []) this.tiles[layer][y * w + x] = kind;
        const th = s.things;
        if (th) {
            for (const t of th.add || []) this.things.set(t[0], { id: t[0], kind: t[1], x: t[2], y: t[3], label: t[4] || '' });
            for (const [id, x, y] of th.move || []) {
                const t = this.things.get(id);
                if (t) { t.x = x; t.y = y; }
            }
            for (const id of th.del || []) this.things.delete(id);
        }
        for (const [i, ch] of s.agents || []) {
            const a = this.agents[i];
            if ('x' in ch) a.x = ch.x;
            if ('y' in ch) a.y = ch.y;
            if ('facing' in ch) a.facing = ch.facing;
            if ('alive' in ch) a.alive = ch.alive;
            if (ch.stats) for (const [si, v] of Object.entries(ch.stats)) a.stats[Number(si)] = v;
        }
        s.rewards.forEach((r, i) => { this.agents[i].return += Number(r) || 0; });
        // "del" before "add": a node or edge that changed (kind, label, weight) is both, in one line
        const nd = s.nodes;
        if (nd) {
            for (const id of nd.del || []) this.nodes.delete(id);
            for (const n of nd.add || []) this.nodes.set(n[0], { id: n[0], kind: n[1], label: n[2] ?? n[0] });
        }
        const ed = s.edges;
        if (ed) {
            for (const e of ed.del || []) this.edges.delete(edgeKey(e[0], e[1], e[2]));
            for (const e of ed.add || []) this.edges.set(edgeKey(e[0], e[1], e[2]), { from: e[0], to: e[1], kind: e[2], weight: e[3] ?? 1 });
        }
        this.tick = s.tick;
        this.step = s;
    }
}

// Who sees whom (docs/visibility.md): the agents `focus` may not see at tick t of episode
// ep, as a Set of indices. The header's "visibility" holds the scenario's rules; the runtime
// settings are the "visibility" changes of every reset and step line up to that moment
// ([observer, target, state]: 0 hidden, 1 shown, -1 the rules again; -1 agents: every one).
export function hiddenFrom(header, episodes, ep, t, focus) {
    const hidden = new Set();
    const n = header.agents.length;
    const setting = new Map();
    const apply = (changes) => {
        for (const [o, g, s] of changes || []) {
            if (o !== -1 && o !== focus) continue;
            for (let b = g === -1 ? 0 : g; b < (g === -1 ? n : g + 1); b++) {
                if (s === -1) setting.delete(b);
                else setting.set(b, s);
            }
        }
    };
    for (const e of episodes) {
        if (e.index > ep.index) break;
        apply(e.visibility);
        for (const s of e.steps) {
            if (e.index === ep.index && s.tick > t) break;
            apply(s.visibility);
        }
    }
    for (let b = 0; b < n; b++) {
        if (b === focus) continue;
        if (setting.has(b)) {
            if (setting.get(b) === 0) hidden.add(b);
            continue;
        }
        for (const r of header.visibility || []) {
            if (t >= r.from && (r.until === undefined || t < r.until)
                && r.observers.includes(focus) && r.hidden.includes(b)) {
                hidden.add(b);
                break;
            }
        }
    }
    return hidden;
}

// Rebuilds the scene of episode ep at tick t: nearest keyframe at or before t, then the steps.
// With prev (the scene at an earlier tick of the same episode, no further back than that
// keyframe) the steps are applied to it instead.
export function sceneAt(header, ep, t, prev) {
    const first = ep.firstTick;
    t = Math.max(first, Math.min(t, ep.lastTick));
    let k = first;
    for (const kt of ep.keyTicks) if (kt <= t && kt > k) k = kt;
    let scene;
    if (prev && prev.tick <= t && prev.tick >= k) {
        scene = prev;
    } else {
        scene = new Scene(header);
        scene.loadKey(ep.keys.get(k));
        if (k > first) scene.step = ep.steps[k - first - 1];
    }
    for (let i = scene.tick + 1; i <= t; i++) scene.applyStep(ep.steps[i - first - 1]);
    if (t === ep.lastTick && ep.end && Array.isArray(ep.end.returns)) {
        ep.end.returns.forEach((r, i) => { if (scene.agents[i]) scene.agents[i].return = r; });
    }
    return scene;
}
